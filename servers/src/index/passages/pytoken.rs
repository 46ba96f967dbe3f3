//! Python 3.11's tokenizer, as far as the passage builder needs it: names, numbers, strings (every
//! prefix, triple quotes), operators, logical-line ends and indentation, with the errors CPython's
//! tokenizer reports (they make the reference fall back to generic passages).
//!
//! Approximations, all documented here: identifiers accept any non-ASCII alphanumeric character
//! and the common combining-mark blocks (CPython uses the XID_Start/XID_Continue tables); f-strings
//! are one token, as in 3.11, and their inner expressions are not checked.

/// Bracket nesting CPython's tokenizer accepts (`MAXLEVEL`, "too many nested parentheses").
pub const MAX_BRACKET_DEPTH: usize = 200;
/// Indentation levels CPython's tokenizer accepts (`MAXINDENT`, "too many levels of indentation").
pub const MAX_INDENT_LEVELS: usize = 100;
/// Columns a tab advances to, as CPython counts them (a multiple of 8).
const TAB_SIZE: usize = 8;

/// A token's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Name,
    Number,
    String,
    Op,
    /// The end of a logical line.
    Newline,
    Indent,
    Dedent,
}

/// One token: its kind, byte span in the source and, for names, whether it is a hard keyword
/// (decided once here, as the checks after tokenizing ask it of every name).
/// Offsets are `u32` (sources past [`MAX_SOURCE_BYTES`] are refused) to keep tokens small: a
/// module has about one token per five bytes.
#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub kind: Kind,
    pub keyword: bool,
    start: u32,
    end: u32,
}

impl Token {
    fn new(kind: Kind, start: usize, end: usize, keyword: bool) -> Token {
        // tokenize() refuses sources whose offsets do not fit.
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        Token {
            kind,
            keyword,
            start: offset(start),
            end: offset(end),
        }
    }

    pub fn start(&self) -> usize {
        self.start as usize
    }

    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// The token's text in `src`, the source it was read from.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start()..self.end()).unwrap_or("")
    }
}

/// The longest source tokenized: token offsets are `u32`.
pub const MAX_SOURCE_BYTES: usize = u32::MAX as usize;

/// Why CPython's tokenizer would reject the source.
#[derive(Debug, PartialEq, Eq)]
pub struct TokenError {
    pub offset: usize,
    pub reason: &'static str,
}

/// The length of the longest operator at `b[i..]`, if one starts there.
fn operator_len(b: &[u8], i: usize) -> Option<usize> {
    let next = b.get(i + 1).copied();
    let then = b.get(i + 2).copied();
    let c = b[i];
    Some(match c {
        b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b';' | b'~' => 1,
        b'.' if next == Some(b'.') && then == Some(b'.') => 3,
        b'.' => 1,
        b'-' if matches!(next, Some(b'=' | b'>')) => 2,
        b':' | b'+' | b'-' | b'%' | b'@' | b'&' | b'|' | b'^' | b'=' => {
            1 + usize::from(next == Some(b'='))
        }
        // `**`, `//`, `<<`, `>>`, each with an optional `=`; or the single character with one.
        b'*' | b'/' | b'<' | b'>' if next == Some(c) => 2 + usize::from(then == Some(b'=')),
        b'*' | b'/' | b'<' | b'>' => 1 + usize::from(next == Some(b'=')),
        b'!' if next == Some(b'=') => 2,
        _ => return None,
    })
}

/// Keywords CPython accepts glued to a number (`1if x else y`).
const KEYWORDS_AFTER_NUMBER: &[&str] = &["and", "else", "for", "if", "in", "is", "not", "or"];

/// Whether `word` is one of Python's hard keywords (never a name). Looked up by first letter:
/// every name in a module asks.
pub fn is_keyword(word: &str) -> bool {
    let candidates: &[&str] = match word.as_bytes().first() {
        Some(b'F') => &["False"],
        Some(b'N') => &["None"],
        Some(b'T') => &["True"],
        Some(b'a') => &["and", "as", "assert", "async", "await"],
        Some(b'b') => &["break"],
        Some(b'c') => &["class", "continue"],
        Some(b'd') => &["def", "del"],
        Some(b'e') => &["elif", "else", "except"],
        Some(b'f') => &["finally", "for", "from"],
        Some(b'g') => &["global"],
        Some(b'i') => &["if", "import", "in", "is"],
        Some(b'l') => &["lambda"],
        Some(b'n') => &["nonlocal", "not"],
        Some(b'o') => &["or"],
        Some(b'p') => &["pass"],
        Some(b'r') => &["raise", "return"],
        Some(b't') => &["try"],
        Some(b'w') => &["while", "with"],
        Some(b'y') => &["yield"],
        _ => &[],
    };
    candidates.contains(&word)
}

fn is_id_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic() || (!c.is_ascii() && c.is_alphabetic())
}

fn is_id_continue(c: char) -> bool {
    c == '_'
        || c.is_ascii_alphanumeric()
        || (!c.is_ascii()
            && (c.is_alphanumeric()
                || matches!(c as u32, 0xB7 | 0x300..=0x36F | 0x483..=0x487 | 0x591..=0x5BD
                    | 0x64B..=0x65F | 0x93C | 0x94D | 0x9CD | 0xA4D | 0xACD | 0xB4D | 0xBCD
                    | 0xC4D | 0xCCD | 0xD4D | 0x1DC0..=0x1DFF | 0x203F | 0x2040 | 0x2054
                    | 0x20D0..=0x20DC | 0x20E1 | 0x20E5..=0x20F0 | 0xFE00..=0xFE0F
                    | 0xFE20..=0xFE2F | 0xFE33 | 0xFE34 | 0xFE4D..=0xFE4F | 0xFF3F
                    | 0xE0100..=0xE01EF)))
}

fn char_at(src: &str, i: usize) -> Option<char> {
    src.get(i..).and_then(|s| s.chars().next())
}

/// ASCII bytes that continue a name: letters, digits, `_`.
static ASCII_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        table[c] = b == b'_' || b.is_ascii_alphanumeric();
        c += 1;
    }
    table
};

/// The offset of the line break (or the end) at or after `i`.
fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .map_or(b.len(), |n| i + n)
}

/// The length of a line break at `i` (`\n`, `\r\n` or `\r`), 0 when there is none.
fn line_break(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'\n') => 1,
        Some(b'\r') if b.get(i + 1) == Some(&b'\n') => 2,
        Some(b'\r') => 1,
        _ => 0,
    }
}

fn err<T>(offset: usize, reason: &'static str) -> Result<T, TokenError> {
    Err(TokenError { offset, reason })
}

/// Tokenizes a whole module. Comments and blank lines produce no tokens; every logical line ends
/// with a `Newline`; `Indent`/`Dedent` come before the first token of a line.
pub fn tokenize(src: &str) -> Result<Vec<Token>, TokenError> {
    let b = src.as_bytes();
    let mut tokens: Vec<Token> = Vec::with_capacity(src.len() / 6);
    // (columns with tabs to 8, columns with tabs as 1): CPython compares both to catch
    // indentation that only agrees under one tab size.
    let mut indents: Vec<(usize, usize)> = vec![(0, 0)];
    let mut brackets: Vec<u8> = Vec::new();
    let mut line_start = true;
    let mut i = 0;
    if src.len() > MAX_SOURCE_BYTES {
        return err(0, "source too long to tokenize");
    }
    let push = |tokens: &mut Vec<Token>, kind, start, end| {
        tokens.push(Token::new(kind, start, end, false))
    };
    loop {
        if line_start && brackets.is_empty() {
            // Indentation is mostly spaces: count them in one pass first.
            let spaces = b[i..].iter().take_while(|&&c| c == b' ').count();
            let (mut col, mut alt) = (spaces, spaces);
            i += spaces;
            while let Some(&c) = b.get(i) {
                match c {
                    b' ' => (col, alt) = (col + 1, alt + 1),
                    b'\t' => (col, alt) = ((col / TAB_SIZE + 1) * TAB_SIZE, alt + 1),
                    b'\x0c' => (col, alt) = (0, 0),
                    _ => break,
                }
                i += 1;
            }
            match b.get(i) {
                None => break,
                Some(b'#') | Some(b'\n') | Some(b'\r') => {
                    i = line_end(b, i);
                    i += line_break(b, i);
                    continue;
                }
                _ => {}
            }
            line_start = false;
            let &(top, top_alt) = indents.last().unwrap_or(&(0, 0));
            if col > top {
                if alt <= top_alt {
                    return err(i, "inconsistent use of tabs and spaces in indentation");
                }
                if indents.len() > MAX_INDENT_LEVELS {
                    return err(i, "too many levels of indentation");
                }
                indents.push((col, alt));
                push(&mut tokens, Kind::Indent, i, i);
            } else {
                while indents.len() > 1 && indents.last().is_some_and(|&(c, _)| col < c) {
                    indents.pop();
                    push(&mut tokens, Kind::Dedent, i, i);
                }
                if indents.last().map(|&(c, a)| (c, a)) != Some((col, alt)) {
                    let reason = if indents.last().map(|&(c, _)| c) == Some(col) {
                        "inconsistent use of tabs and spaces in indentation"
                    } else {
                        "unindent does not match any outer indentation level"
                    };
                    return err(i, reason);
                }
            }
        }
        i += b[i..]
            .iter()
            .take_while(|&&c| matches!(c, b' ' | b'\t' | b'\x0c'))
            .count();
        let Some(&c) = b.get(i) else { break };
        let start = i;
        match c {
            b'#' => i = line_end(b, i),
            b'\n' | b'\r' => {
                i += line_break(b, i);
                if brackets.is_empty() {
                    push(&mut tokens, Kind::Newline, start, start);
                    line_start = true;
                }
            }
            b'\\' => {
                let n = line_break(b, i + 1);
                if n == 0 {
                    return err(i, "unexpected character after line continuation character");
                }
                i += 1 + n;
                if i >= b.len() {
                    return err(i, "unexpected EOF while parsing");
                }
            }
            b'0'..=b'9' => {
                i = scan_number(src, i)?;
                push(&mut tokens, Kind::Number, start, i);
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = scan_number(src, i)?;
                push(&mut tokens, Kind::Number, start, i);
            }
            b'\'' | b'"' => {
                i = scan_string(b, i)?;
                push(&mut tokens, Kind::String, start, i);
            }
            _ => {
                let id_start = if c.is_ascii() {
                    c == b'_' || c.is_ascii_alphabetic()
                } else {
                    char_at(src, i).is_some_and(is_id_start)
                };
                if id_start {
                    loop {
                        i += b[i..]
                            .iter()
                            .take_while(|&&a| ASCII_NAME[a as usize])
                            .count();
                        match b.get(i) {
                            Some(&a) if !a.is_ascii() => match char_at(src, i) {
                                Some(ch) if is_id_continue(ch) => i += ch.len_utf8(),
                                _ => break,
                            },
                            _ => break,
                        }
                    }
                    if matches!(b.get(i), Some(b'\'' | b'"')) && is_string_prefix(&src[start..i]) {
                        i = scan_string(b, i)?;
                        push(&mut tokens, Kind::String, start, i);
                    } else {
                        let keyword = is_keyword(&src[start..i]);
                        tokens.push(Token::new(Kind::Name, start, i, keyword));
                    }
                    continue;
                }
                if b[i..].starts_with(b"<>") {
                    return err(i, "invalid syntax ('<>')");
                }
                let Some(len) = operator_len(b, i) else {
                    return err(i, "invalid character");
                };
                i += len;
                match c {
                    open @ (b'(' | b'[' | b'{') => {
                        if brackets.len() >= MAX_BRACKET_DEPTH {
                            return err(start, "too many nested parentheses");
                        }
                        brackets.push(open);
                    }
                    close @ (b')' | b']' | b'}') => {
                        let expected = match close {
                            b')' => b'(',
                            b']' => b'[',
                            _ => b'{',
                        };
                        if brackets.pop() != Some(expected) {
                            return err(start, "unmatched or mismatched closing bracket");
                        }
                    }
                    _ => {}
                }
                push(&mut tokens, Kind::Op, start, i);
            }
        }
    }
    if !brackets.is_empty() {
        return err(b.len(), "a bracket was never closed");
    }
    if tokens
        .last()
        .is_some_and(|t| !matches!(t.kind, Kind::Newline | Kind::Dedent))
    {
        push(&mut tokens, Kind::Newline, b.len(), b.len());
    }
    for _ in 1..indents.len() {
        push(&mut tokens, Kind::Dedent, b.len(), b.len());
    }
    Ok(tokens)
}

/// `r`, `u`, `b`, `f`, `br`, `rb`, `fr`, `rf` in any case.
pub fn is_string_prefix(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf"
    )
}

/// The end of the string literal whose opening quote is at `i`.
fn scan_string(b: &[u8], mut i: usize) -> Result<usize, TokenError> {
    let start = i;
    let quote = b[i];
    let triple = b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote);
    i += if triple { 3 } else { 1 };
    loop {
        let Some(&c) = b.get(i) else {
            let reason = if triple {
                "unterminated triple-quoted string literal"
            } else {
                "unterminated string literal"
            };
            return err(start, reason);
        };
        if c == b'\\' {
            // An escaped character never ends the literal, in raw strings too.
            i += 1 + line_break(b, i + 1).max(1);
            continue;
        }
        if c == quote {
            if !triple {
                return Ok(i + 1);
            }
            if b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote) {
                return Ok(i + 3);
            }
        } else if !triple && (c == b'\n' || c == b'\r') {
            return err(start, "unterminated string literal");
        }
        i += 1;
    }
}

/// The end of `digit (_? digit)*` from `i`, which must hold a digit.
fn digit_run(b: &[u8], mut i: usize, is_digit: fn(&u8) -> bool) -> Result<usize, TokenError> {
    if !b.get(i).is_some_and(is_digit) {
        return err(i, "invalid number literal");
    }
    i += 1;
    loop {
        match b.get(i) {
            Some(b'_') if b.get(i + 1).is_some_and(is_digit) => i += 2,
            Some(b'_') => return err(i, "invalid number literal"),
            Some(d) if is_digit(d) => i += 1,
            _ => return Ok(i),
        }
    }
}

/// The end of the number literal starting at `i`, checked as CPython checks it.
fn scan_number(src: &str, start: usize) -> Result<usize, TokenError> {
    let b = src.as_bytes();
    let mut i = start;
    let radix: Option<fn(&u8) -> bool> = match (b[i], b.get(i + 1).map(u8::to_ascii_lowercase)) {
        (b'0', Some(b'x')) => Some(u8::is_ascii_hexdigit),
        (b'0', Some(b'o')) => Some(|d| matches!(d, b'0'..=b'7')),
        (b'0', Some(b'b')) => Some(|d| matches!(d, b'0' | b'1')),
        _ => None,
    };
    if let Some(is_digit) = radix {
        i += 2;
        if b.get(i) == Some(&b'_') {
            i += 1;
        }
        i = digit_run(b, i, is_digit)?;
        if b.get(i).is_some_and(u8::is_ascii_digit) {
            return err(i, "invalid digit in number literal");
        }
        return end_of_number(src, i);
    }
    let mut is_int = true;
    if b[i] != b'.' {
        i = digit_run(b, i, u8::is_ascii_digit)?;
    }
    if b.get(i) == Some(&b'.') {
        is_int = false;
        i += 1;
        if b.get(i).is_some_and(u8::is_ascii_digit) {
            i = digit_run(b, i, u8::is_ascii_digit)?;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        if b.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            is_int = false;
            i = digit_run(b, i + 1 + sign, u8::is_ascii_digit)?;
        }
    }
    if matches!(b.get(i), Some(b'j' | b'J')) {
        return end_of_number(src, i + 1);
    }
    if is_int {
        let text = &src[start..i];
        if text.starts_with('0') && text.bytes().any(|d| d.is_ascii_digit() && d != b'0') {
            return err(
                start,
                "leading zeros in decimal integer literals are not permitted",
            );
        }
    }
    end_of_number(src, i)
}

/// A number may not run into a name, except the keywords CPython tolerates there.
fn end_of_number(src: &str, i: usize) -> Result<usize, TokenError> {
    match char_at(src, i) {
        Some(c) if is_id_continue(c) => {
            if KEYWORDS_AFTER_NUMBER
                .iter()
                .any(|k| src[i..].starts_with(k))
            {
                Ok(i)
            } else {
                err(i, "invalid number literal")
            }
        }
        _ => Ok(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str)> {
        tokenize(src)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, t.text(src)))
            .collect()
    }

    #[test]
    fn logical_lines_indentation_and_literals() {
        use Kind::*;
        let src = "def f(a,\n  b=0x_1F): # c\n    '''d\n\"\"\"'''\n\n    x = rb'\\'' \\\n  + 1.5e-3j\nclass C: pass\n";
        assert_eq!(
            kinds(src),
            [
                (Name, "def"),
                (Name, "f"),
                (Op, "("),
                (Name, "a"),
                (Op, ","),
                (Name, "b"),
                (Op, "="),
                (Number, "0x_1F"),
                (Op, ")"),
                (Op, ":"),
                (Newline, ""),
                (Indent, ""),
                (String, "'''d\n\"\"\"'''"),
                (Newline, ""),
                (Name, "x"),
                (Op, "="),
                (String, "rb'\\''"),
                (Op, "+"),
                (Number, "1.5e-3j"),
                (Newline, ""),
                (Dedent, ""),
                (Name, "class"),
                (Name, "C"),
                (Op, ":"),
                (Name, "pass"),
                (Newline, ""),
            ]
        );
    }

    #[test]
    fn cpython_tokenizer_errors_are_reported() {
        for bad in [
            "x = 'abc\n",
            "x = '''abc",
            "x = (1,\n",
            "x = 1)\n",
            "x = [1)\n",
            "x = 0777\n",
            "x = 1__0\n",
            "x = 0b102\n",
            "x = 10L\n",
            "x = 1 \\ 2\n",
            "x = $\n",
            "\u{feff}x = 1\n",
            "if x:\n        a\n    b\n",
            "if x:\n\ta\n        b\n",
            "x = a <> b\n",
            "x = 1\\",
        ] {
            assert!(tokenize(bad).is_err(), "{bad:?} should not tokenize");
        }
        for good in [
            "x = 1if y else 2\n",
            "x = 0_0 + 00 + 1_0.5 + 0777.5\n",
            "é = 1\n",
            "",
        ] {
            assert!(tokenize(good).is_ok(), "{good:?} should tokenize");
        }
    }

    #[test]
    fn nesting_limits_are_enforced() {
        let deep = "(".repeat(MAX_BRACKET_DEPTH) + &")".repeat(MAX_BRACKET_DEPTH);
        assert!(tokenize(&deep).is_ok());
        let deeper = "(".repeat(MAX_BRACKET_DEPTH + 1) + &")".repeat(MAX_BRACKET_DEPTH + 1);
        assert!(tokenize(&deeper).is_err());
        let mut nested = String::new();
        for level in 0..=MAX_INDENT_LEVELS {
            nested.push_str(&" ".repeat(level));
            nested.push_str("if x:\n");
        }
        nested.push_str(&" ".repeat(MAX_INDENT_LEVELS + 1));
        nested.push_str("pass\n");
        assert!(tokenize(&nested).is_err());
    }
}
