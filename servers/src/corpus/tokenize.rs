//! The reference's two tokenizers (prose for the memory index, code for the code index) and their
//! stopword lists, and ours for notes about code (the memory-sections sidecar), shared by the
//! ranker and the index builder so both always agree.
//!
//! Both work on bytes: every pattern is ASCII-only and UTF-8 never puts an ASCII byte inside a
//! multi-byte character, so non-ASCII text simply separates tokens, exactly as the reference's
//! regular expressions do.

/// The prose tokenizer's stopwords (`memory_index._STOPWORDS`).
fn is_prose_stopword(word: &str) -> bool {
    matches!(
        word,
        "the"
            | "and"
            | "for"
            | "with"
            | "that"
            | "this"
            | "from"
            | "into"
            | "are"
            | "was"
            | "were"
            | "but"
            | "not"
            | "you"
            | "your"
            | "our"
            | "their"
            | "have"
            | "has"
            | "had"
            | "will"
            | "can"
            | "could"
            | "should"
            | "would"
            | "been"
            | "being"
            | "they"
            | "them"
            | "its"
            | "his"
            | "her"
            | "she"
            | "him"
            | "who"
            | "what"
            | "when"
            | "where"
            | "why"
            | "how"
            | "any"
            | "all"
            | "some"
            | "one"
            | "two"
            | "three"
            | "may"
            | "also"
            | "than"
    )
}

/// The code tokenizer's stopwords (`code_index._CODE_STOPWORDS`): Python and shell keywords plus
/// prose noise that survives identifier splitting.
fn is_code_stopword(word: &str) -> bool {
    matches!(
        word,
        "def"
            | "class"
            | "return"
            | "import"
            | "from"
            | "as"
            | "if"
            | "elif"
            | "else"
            | "for"
            | "while"
            | "with"
            | "try"
            | "except"
            | "finally"
            | "raise"
            | "pass"
            | "break"
            | "continue"
            | "lambda"
            | "yield"
            | "global"
            | "nonlocal"
            | "assert"
            | "del"
            | "in"
            | "is"
            | "and"
            | "or"
            | "not"
            | "none"
            | "true"
            | "false"
            | "self"
            | "cls"
            | "async"
            | "await"
            | "then"
            | "fi"
            | "do"
            | "done"
            | "esac"
            | "function"
            | "local"
            | "echo"
            | "export"
            | "the"
            | "that"
            | "this"
            | "into"
            | "are"
    )
}

/// Which tokenizer an index uses: prose for the memory index, code for code partitions, notes for
/// the memory-sections sidecar (an index says so by its `index_format_version`,
/// [`NOTES_FORMAT`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    Prose,
    Code,
    /// Prose, plus the camelCase and snake_case parts of its tokens and numbers.
    Notes,
}

/// The `index_format_version` of an index whose postings the [`Tokenizer::Notes`] made.
pub const NOTES_FORMAT: &str = "agentteams-notes-bm25-v1";

impl Tokenizer {
    /// Calls `emit` with each token of `text`, in order, duplicates included.
    pub fn each_token(self, text: &str, emit: &mut dyn FnMut(&str)) {
        match self {
            Tokenizer::Prose => prose_tokens(text, emit),
            Tokenizer::Code => code_tokens(text, emit),
            Tokenizer::Notes => notes_tokens(text, emit),
        }
    }

    /// The tokens of `text` as owned strings (queries, passages, tests).
    pub fn tokens(self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each_token(text, &mut |t| out.push(t.to_owned()));
        out
    }
}

fn is_prose_tail(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// `[A-Za-z][A-Za-z0-9_-]{2,}`, lowercased, minus the prose stopwords.
fn prose_tokens(text: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut lower = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_prose_tail(bytes[i]) {
            i += 1;
        }
        // A run shorter than 3 cannot hold a match starting later inside it either (its suffixes
        // are shorter still), so skipping to its end matches the regex's retry behaviour.
        if i - start >= 3 {
            lower.clear();
            lower.push_str(&text[start..i]);
            lower.make_ascii_lowercase();
            if !is_prose_stopword(&lower) {
                emit(&lower);
            }
        }
    }
}

/// What notes about code need beyond prose (the reference's memory tokenizer drops `404` and
/// `3.9`, and `BaseModel` never meets "model"): each prose token as [`prose_tokens`] gives it, then
/// its camelCase, snake_case and kebab-case parts of 3+ characters that differ from it
/// (`BaseModel` → `basemodel`, `base`, `model`), and each number of 2+ characters standing on its
/// own (`404`, `3.9`, `2.0.1`; a trailing dot dropped), minus the prose stopwords.
fn notes_tokens(text: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut lower = String::new();
    let mut part = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let starts_run = i == 0 || !is_prose_tail(bytes[i - 1]);
        if b.is_ascii_digit() && starts_run {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            let number = text[start..i].trim_end_matches('.');
            if number.len() >= 2 {
                emit(number);
            }
            continue;
        }
        if !b.is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_prose_tail(bytes[i]) {
            i += 1;
        }
        if i - start < 3 {
            continue;
        }
        let raw = &text[start..i];
        lower.clear();
        lower.push_str(raw);
        lower.make_ascii_lowercase();
        if !is_prose_stopword(&lower) {
            emit(&lower);
        }
        for piece in raw.split(['_', '-']).filter(|p| !p.is_empty()) {
            camel_parts(piece, &mut |sub| {
                part.clear();
                part.push_str(sub);
                part.make_ascii_lowercase();
                if part.len() >= 3 && part != lower && !is_prose_stopword(&part) {
                    emit(&part);
                }
            });
        }
    }
}

/// The code tokenizer's byte classes, one table lookup per byte (its hottest loop).
const IDENT_START: u8 = 1;
const IDENT_TAIL: u8 = 2;
const UPPER: u8 = 4;
const SEPARATOR: u8 = 8;
static CODE_CLASSES: [u8; 256] = code_classes();

const fn code_classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        if b.is_ascii_alphabetic() || b == b'_' {
            table[i] |= IDENT_START;
        }
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            table[i] |= IDENT_TAIL;
        }
        if b.is_ascii_uppercase() {
            table[i] |= UPPER;
        }
        if b == b'.' || b == b'_' {
            table[i] |= SEPARATOR;
        }
        i += 1;
    }
    table
}

/// For each match of `[A-Za-z_][A-Za-z0-9_.]*`: the whole lowercased identifier (dots trimmed)
/// when it adds information, then its dotted, snake_case and camelCase parts of 2+ characters,
/// minus the code stopwords.
fn code_tokens(text: &str, emit: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut scratch = IdentifierScratch::default();
    let mut i = 0;
    while i < bytes.len() {
        if CODE_CLASSES[bytes[i] as usize] & IDENT_START == 0 {
            i += 1;
            continue;
        }
        let start = i;
        // Which of capitals and separators it holds, each class's bit.
        let mut seen = 0;
        while i < bytes.len() {
            let class = CODE_CLASSES[bytes[i] as usize];
            if class & IDENT_TAIL == 0 {
                break;
            }
            seen |= class;
            i += 1;
        }
        let raw = &text[start..i];
        if seen & UPPER != 0 {
            identifier_tokens(raw, &mut scratch, emit);
        } else if seen & SEPARATOR != 0 {
            lowercase_identifier_tokens(raw, emit);
        } else {
            // Lowercase letters and digits alone: its one part is itself.
            kept_part(raw, emit);
        }
    }
}

/// Buffers [`identifier_tokens`] reuses from one identifier to the next.
#[derive(Default)]
struct IdentifierScratch {
    /// The identifier's parts, lowercased, back to back (no allocation per part).
    parts: String,
    bounds: Vec<(usize, usize)>,
    whole: String,
}

/// The tokens of one identifier (a match of `[A-Za-z_][A-Za-z0-9_.]*`): the whole lowercased
/// identifier (dots trimmed) when it adds information, then its parts.
fn identifier_tokens(raw: &str, scratch: &mut IdentifierScratch, emit: &mut dyn FnMut(&str)) {
    let IdentifierScratch {
        parts,
        bounds,
        whole,
    } = scratch;
    parts.clear();
    bounds.clear();
    for piece in raw.split(['.', '_']).filter(|p| !p.is_empty()) {
        camel_parts(piece, &mut |sub| {
            if sub.len() >= 2 {
                let from = parts.len();
                parts.push_str(sub);
                parts[from..].make_ascii_lowercase();
                if is_code_stopword(&parts[from..]) {
                    parts.truncate(from);
                } else {
                    bounds.push((from, parts.len()));
                }
            }
        });
    }
    whole.clear();
    whole.push_str(raw.trim_matches('.'));
    whole.make_ascii_lowercase();
    let only_part_is_whole = bounds.len() == 1 && parts == whole;
    if whole.len() >= 2 && !is_code_stopword(whole) && !only_part_is_whole {
        emit(whole);
    }
    for &(from, to) in bounds.iter() {
        emit(&parts[from..to]);
    }
}

/// [`identifier_tokens`] for an identifier without capitals (most of them): each of its pieces
/// between dots and underscores is one part (camelCase splitting needs a capital) and already
/// lowercase, so every token is a slice of `raw`, nothing is copied. Split by bytes: `raw` is
/// ASCII.
fn lowercase_identifier_tokens(raw: &str, emit: &mut dyn FnMut(&str)) {
    let each_part = |f: &mut dyn FnMut(&str)| {
        let mut from = 0;
        for (at, &b) in raw.as_bytes().iter().enumerate() {
            if b == b'.' || b == b'_' {
                kept_part(&raw[from..at], f);
                from = at + 1;
            }
        }
        kept_part(&raw[from..], f);
    };
    let whole = raw.trim_matches('.');
    // The whole is left out when it is the identifier's one part (then it comes as that part).
    let (mut parts, mut last_is_whole) = (0, false);
    each_part(&mut |part| {
        parts += 1;
        last_is_whole = part == whole;
    });
    if whole.len() >= 2 && !is_code_stopword(whole) && !(parts == 1 && last_is_whole) {
        emit(whole);
    }
    each_part(emit);
}

/// Calls `f` with `part` if it is a part the code tokenizer keeps: 2+ characters, no stopword.
fn kept_part(part: &str, f: &mut dyn FnMut(&str)) {
    if part.len() >= 2 && !is_code_stopword(part) {
        f(part);
    }
}

/// Splits an ASCII-alphanumeric piece like `[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+`.
fn camel_parts<'a>(piece: &'a str, emit: &mut dyn FnMut(&'a str)) {
    let s = piece.as_bytes();
    let is_lower_or_digit = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let run_end = |mut j: usize, pred: &dyn Fn(u8) -> bool| {
        while j < s.len() && pred(s[j]) {
            j += 1;
        }
        j
    };
    let mut i = 0;
    while i < s.len() {
        let end = if s[i].is_ascii_uppercase() {
            let upper_end = run_end(i, &|b: u8| b.is_ascii_uppercase());
            if upper_end - i >= 2 && upper_end < s.len() && s[upper_end].is_ascii_lowercase() {
                // `HTTPServer`: the run minus the letter that starts the next word.
                upper_end - 1
            } else if i + 1 < s.len() && is_lower_or_digit(s[i + 1]) {
                run_end(i + 1, &is_lower_or_digit)
            } else {
                upper_end
            }
        } else {
            run_end(i, &is_lower_or_digit)
        };
        emit(&piece[i..end]);
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(text: &str) -> Vec<String> {
        Tokenizer::Notes.tokens(text)
    }

    #[test]
    fn notes_keep_numbers_and_split_identifiers() {
        assert_eq!(
            notes("Upgrade to Python 3.9; a 404 from BaseModel.parse_raw and HTTPServer, v2."),
            [
                "upgrade",
                "python",
                "3.9",
                "404",
                "basemodel",
                "base",
                "model",
                "parse_raw",
                "parse",
                "raw",
                "httpserver",
                "http",
                "server"
            ]
        );
        // Prose's own tokens come first and unchanged: the notes tokenizer only adds.
        let text = "the non-blocking read_file of the gateway, 2.0.1. and 7";
        let prose = Tokenizer::Prose.tokens(text);
        let notes = notes(text);
        assert!(prose.iter().all(|t| notes.contains(t)), "{notes:?}");
        assert_eq!(
            notes,
            [
                "non-blocking",
                "non",
                "blocking",
                "read_file",
                "read",
                "file",
                "gateway",
                "2.0.1"
            ]
        );
        for odd in [
            "",
            "...",
            "1",
            "a1",
            "ABC",
            "\u{e9}t\u{e9}",
            "9.",
            "x.9.9",
            "__init__",
        ] {
            let _ = Tokenizer::Notes.tokens(odd);
        }
    }

    fn code(text: &str) -> Vec<String> {
        Tokenizer::Code.tokens(text)
    }

    fn prose(text: &str) -> Vec<String> {
        Tokenizer::Prose.tokens(text)
    }

    #[test]
    fn code_tokenizer_matches_the_reference_vectors() {
        let toks = code("import os\ndef batch_update(inputPath): return os.path.join(inputPath)");
        assert_eq!(
            toks,
            [
                "os",
                "batch_update",
                "batch",
                "update",
                "inputpath",
                "input",
                "path",
                "os.path.join",
                "os",
                "path",
                "join",
                "inputpath",
                "input",
                "path"
            ]
        );
        assert_eq!(code("requests requests"), ["requests", "requests"]);
    }

    #[test]
    fn identifiers_without_capitals_tokenize_as_the_general_path_does() {
        // Every identifier of up to four characters over `a`, `b`, `d`, `e`, `f`, `i`, `1`, `_`
        // and `.` (`def`, `if`, `_`, `__init__`-like and dotted shapes, stopwords among them).
        const ALPHABET: &[u8] = b"abdefi1_.";
        let mut scratch = IdentifierScratch::default();
        let mut checked = 0;
        for len in 1..=4u32 {
            for mut n in 0..ALPHABET.len().pow(len) {
                let mut raw = String::new();
                for _ in 0..len {
                    raw.push(char::from(ALPHABET[n % ALPHABET.len()]));
                    n /= ALPHABET.len();
                }
                if !raw.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    continue;
                }
                let (mut general, mut lowercase) = (Vec::new(), Vec::new());
                identifier_tokens(&raw, &mut scratch, &mut |t| general.push(t.to_owned()));
                code_tokens(&raw, &mut |t| lowercase.push(t.to_owned()));
                assert_eq!(lowercase, general, "{raw}");
                checked += 1;
            }
        }
        assert!(checked > 4000, "{checked}");
    }

    #[test]
    fn camel_case_splitting_follows_the_regex() {
        let split = |s: &str| {
            let mut v = Vec::new();
            camel_parts(s, &mut |p| v.push(p.to_owned()));
            v
        };
        assert_eq!(split("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(split("ABC1d"), ["ABC", "1d"]);
        assert_eq!(split("parseJSONValue2x"), ["parse", "JSON", "Value2x"]);
        assert_eq!(split("ABC"), ["ABC"]);
        assert_eq!(split("A"), ["A"]);
        assert_eq!(split("aB"), ["a", "B"]);
        assert_eq!(split("123abc"), ["123abc"]);
    }

    #[test]
    fn code_tokens_trim_dots_and_drop_stopwords_and_short_parts() {
        assert_eq!(
            code(".x._private_Name."),
            ["x._private_name", "private", "name"]
        );
        assert_eq!(code("self.value"), ["self.value", "value"]);
        assert_eq!(code("def if a _ __init__"), ["__init__", "init"]);
        assert_eq!(code("HTTPServer"), ["httpserver", "http", "server"]);
        // Identifiers of lowercase letters and digits alone: themselves, once, if 2+ long and
        // not stopwords.
        assert_eq!(
            code("x ab a1 9z return value2 self z_ y. Value"),
            ["ab", "a1", "value2", "z_", "value"]
        );
        assert!(code("9 + 'é' — ; ").is_empty());
    }

    #[test]
    fn prose_tokenizer_keeps_words_of_three_or_more() {
        assert_eq!(
            prose("The Widget-factory's 2nd run_id: ab x9y été ÉtéXYZ and Foo"),
            ["widget-factory", "run_id", "x9y", "xyz", "foo"]
        );
        assert_eq!(prose("9abc _abc"), ["abc", "abc"]);
    }

    #[test]
    fn plain_words_tokenize_alike_in_both_tokenizers() {
        let text = "widgets gears sprockets bolts";
        assert_eq!(code(text), prose(text));
    }
}
