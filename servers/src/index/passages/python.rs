//! A Python module's passages as the reference makes them with `ast`: one per top-level `def`,
//! `async def` and `class` (decorators allowed before them), `def name(<args>)` /
//! `class Name(<bases>)` printed like `ast.unparse`, then ` — ` and the docstring
//! (`ast.get_docstring`, whitespace collapsed); `None` when CPython would report a syntax error.
//!
//! Syntax errors detected: everything the tokenizer rejects (see `pytoken`), NUL characters,
//! headers (parameters, bases, return annotations, decorators' placement) that do not parse, a
//! block opener without an indented block, an indented line with no opener, and two operands in a
//! row (`print "x"`, `exec code`). Not detected: other errors inside statements and expressions
//! (the reference would fall back to generic passages; these passages come out instead).

use super::pyexpr::{self, Const, Fail, Parser};
use super::pytoken::{tokenize, Kind, Token};

/// The rendered definitions of `text`, at most `max`; `None` when CPython would not parse it.
pub fn definitions(text: &str, max: usize) -> Option<Vec<(String, String)>> {
    if text.contains('\0') {
        return None;
    }
    let toks = tokenize(text).ok()?;
    check_statement_shapes(text, &toks)?;
    let mut out = Vec::new();
    let mut level = 0usize;
    let mut decorated = false;
    let mut i = 0;
    while i < toks.len() {
        match toks[i].kind {
            Kind::Indent => level += 1,
            Kind::Dedent => level = level.saturating_sub(1),
            _ => {}
        }
        if matches!(toks[i].kind, Kind::Indent | Kind::Dedent) {
            i += 1;
            continue;
        }
        let word = toks[i].text(text);
        let is_def = toks[i].kind == Kind::Name
            && (word == "def"
                || word == "class"
                || (word == "async"
                    && toks.get(i + 1).is_some_and(|t| t.text(text) == "def")));
        if level > 0 && is_def {
            // Nested headers are not passages, but a malformed one is still a syntax error.
            header(text, &toks, i).ok()?;
        } else if level == 0 && is_def {
            let (definition, body) = header(text, &toks, i).ok()?;
            let body_token = toks.get(body)?;
            if body_token.kind != Kind::Newline && !starts_statement(text, body_token) {
                return None;
            }
            if out.len() < max {
                out.push((definition, docstring(text, &toks, body)));
            }
            decorated = false;
        } else if level == 0 {
            let decorator = toks[i].kind == Kind::Op && word == "@";
            if decorated && !decorator {
                return None;
            }
            if decorator {
                check_decorator(text, &toks, i + 1)?;
            }
            decorated = decorator;
        }
        // Skip to the token after this logical line.
        i += toks[i..]
            .iter()
            .position(|t| t.kind == Kind::Newline)
            .map_or(toks.len(), |n| n + 1);
    }
    if decorated {
        return None;
    }
    Some(out)
}

/// A decorator's expression must fill its line.
fn check_decorator(text: &str, toks: &[Token], at: usize) -> Option<()> {
    let mut p = Parser::new(text, toks, at);
    match p.expression() {
        Ok(_) if toks.get(p.pos).is_some_and(|t| t.kind == Kind::Newline) => Some(()),
        Err(Fail::Unsupported) => Some(()),
        _ => None,
    }
}

/// Whether a statement may start with `t`.
fn starts_statement(text: &str, t: &Token) -> bool {
    match t.kind {
        Kind::Name | Kind::Number | Kind::String => true,
        Kind::Op => matches!(
            t.text(text),
            "(" | "[" | "{" | "-" | "+" | "~" | "*" | "@" | "..."
        ),
        _ => false,
    }
}

/// Hard keywords that only ever open a statement (`def` and `with` may follow `async`).
const STATEMENT_KEYWORDS: &[&str] = &[
    "assert", "break", "class", "continue", "def", "del", "elif", "except", "finally", "global",
    "nonlocal", "pass", "raise", "return", "try", "while", "with",
];
/// Keywords that open a compound statement, whose header needs a `:` outside brackets.
const COMPOUND_KEYWORDS: &[&str] = &[
    "async", "class", "def", "elif", "else", "except", "finally", "for", "if", "try", "while",
    "with",
];

/// Operators that need an operand on their left (`(=`, `, ==`, `x = .y` are errors): assignment
/// and augmented assignment, comparison, `%`, `|`, `&`, `^`, shifts, `//`, `->`, `:=` and `.`.
fn is_infix(op: &str) -> bool {
    matches!(
        op.as_bytes(),
        [b'=' | b'<' | b'>' | b'%' | b'|' | b'&' | b'^' | b'.']
            | [_, b'=']
            | [b'/', b'/']
            | [b'<', b'<']
            | [b'>', b'>']
            | [b'-', b'>']
            | [_, _, b'=']
    )
}
/// Operators a logical line may end with.
const LINE_END_OPERATORS: &[&str] = &[")", "]", "}", ",", ";", ":", "...", "*"];

/// Errors visible from token order alone: a line ending in `:` must open an indented block, an
/// indent must follow such a line; a statement (a line, or after `;`) cannot start with most
/// operators, a line cannot end with most, and infix ones need a left operand; statement keywords (`def`, `return`, ...) open statements and compound ones need
/// their `:`; string literals must have valid escapes and not mix bytes with text; and two
/// operands may not touch (`print "x"`) except after the soft keywords `match` and `case` that
/// open a line.
fn check_statement_shapes(text: &str, toks: &[Token]) -> Option<()> {
    let word = |t: &Token| t.text(text);
    let is_op = |t: &Token, op: &str| t.kind == Kind::Op && word(t) == op;
    let is_operand = |t: &Token| match t.kind {
        Kind::Name => !t.keyword,
        Kind::Number | Kind::String => true,
        _ => false,
    };
    // The previous token on this logical line, and whether it opened the line.
    let mut prev: Option<&Token> = None;
    let mut prev_opened_line = false;
    let mut depth = 0usize;
    // Inside a compound statement's header, until its `:`.
    let mut open_header = false;
    // Whether the previous token is the `:` closing a header (a statement may follow it).
    let mut header_closed = false;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Indent => {
                let after_opener = i >= 2
                    && toks[i - 1].kind == Kind::Newline
                    && is_op(&toks[i - 2], ":");
                if !after_opener {
                    return None;
                }
            }
            Kind::Newline => {
                if prev.is_some_and(|p| {
                    p.kind == Kind::Op && !LINE_END_OPERATORS.contains(&word(p))
                }) {
                    return None;
                }
                let opener = prev.is_some_and(|p| is_op(p, ":"));
                if open_header
                    || opener && toks.get(i + 1).map(|n| n.kind) != Some(Kind::Indent)
                {
                    return None;
                }
            }
            _ => {}
        }
        if matches!(t.kind, Kind::Newline | Kind::Indent | Kind::Dedent) {
            prev = None;
            continue;
        }
        let opens_statement = header_closed || prev.map_or(true, |p| is_op(p, ";"));
        header_closed = false;
        if opens_statement && !starts_statement(text, t) {
            return None;
        }
        if t.kind == Kind::Op && is_infix(word(t)) {
            let has_left = prev.is_some_and(|p| match p.kind {
                Kind::Name => {
                    !p.keyword
                        || matches!(word(p), "True" | "False" | "None")
                        || word(t) == "." && word(p) == "from"
                }
                Kind::Number | Kind::String => true,
                Kind::Op => {
                    matches!(word(p), ")" | "]" | "}" | "...")
                        || word(t) == "=" && word(p) == ","
                        || word(t) == "." && word(p) == "."
                }
                _ => false,
            });
            if !has_left {
                return None;
            }
        }
        match t.kind {
            Kind::Op => match word(t) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                ":" if depth == 0 && open_header => {
                    open_header = false;
                    header_closed = true;
                }
                _ => {}
            },
            Kind::Name => {
                let w = word(t);
                let after_async = prev.is_some_and(|p| word(p) == "async");
                if t.keyword
                    && STATEMENT_KEYWORDS.contains(&w)
                    && !opens_statement
                    && !(after_async && matches!(w, "def" | "with"))
                {
                    return None;
                }
                if opens_statement && t.keyword && COMPOUND_KEYWORDS.contains(&w) {
                    open_header = true;
                }
            }
            Kind::String if prev.map_or(true, |p| p.kind != Kind::String) => {
                let run: Vec<&str> = toks[i..]
                    .iter()
                    .take_while(|s| s.kind == Kind::String)
                    .map(word)
                    .collect();
                if !pyexpr::strings_are_valid(&run) {
                    return None;
                }
            }
            _ => {}
        }
        if let Some(p) = prev {
            let touching = is_operand(p)
                && match t.kind {
                    Kind::Name | Kind::Number => is_operand(t),
                    Kind::String => p.kind != Kind::String,
                    _ => false,
                };
            if touching && !(prev_opened_line && matches!(word(p), "match" | "case")) {
                return None;
            }
        }
        prev_opened_line = prev.is_none();
        prev = Some(t);
    }
    Some(())
}

/// Parses the definition header at `toks[at]` (`def`, `async def` or `class`) through its `:`.
/// Returns the rendered signature and the index of the body's first token.
fn header(text: &str, toks: &[Token], at: usize) -> Result<(String, usize), Fail> {
    let word = toks[at].text(text);
    let (keyword, skip) = if word == "async" {
        ("async def", 2)
    } else {
        (word, 1)
    };
    let mut p = Parser::new(text, toks, at + skip);
    let name = p.name()?;
    let args_start = p.pos;
    let rendered = if keyword == "class" {
        let bases = if p.eat_op("(") {
            p.call_arguments().map(|(bases, _keywords)| bases)
        } else {
            Ok(Vec::new())
        };
        match bases {
            Ok(bases) => Ok(class_signature(&name, &bases)),
            Err(Fail::Unsupported) => Err(Fail::Unsupported),
            Err(Fail::Syntax) => return Err(Fail::Syntax),
        }
    } else {
        p.expect_op("(")?;
        let params = p.parameters(")", true);
        match params {
            Ok(params) => {
                p.expect_op(")")?;
                let mut out = format!("{keyword} {name}(");
                Ok(match pyexpr::write_params(&params, &mut out) {
                    Ok(()) => out + ")",
                    // CPython's unparse raises ValueError; the reference then prints the name.
                    Err(pyexpr::TooLarge) => name.clone(),
                })
            }
            Err(fail) => Err(fail),
        }
    };
    let rendered = match rendered {
        Ok(r) => {
            if keyword != "class" && p.eat_op("->") {
                p.or_raw(&[":"], |p| p.expression())?;
            }
            r
        }
        Err(Fail::Syntax) => return Err(Fail::Syntax),
        Err(Fail::Unsupported) => {
            // Print the source between the brackets with whitespace collapsed.
            let colon = colon_after(text, toks, args_start).ok_or(Fail::Syntax)?;
            p.pos = colon;
            let inner = source_between(text, toks, args_start, colon);
            if keyword == "class" {
                format!("class {name}({inner})")
            } else {
                format!("{keyword} {name}({inner})")
            }
        }
    };
    let colon = colon_after(text, toks, p.pos).ok_or(Fail::Syntax)?;
    if colon != p.pos {
        return Err(Fail::Syntax);
    }
    Ok((rendered, colon + 1))
}

/// `class Name(<bases>)`, or `class Name` when it has no positional bases (keywords such as
/// `metaclass=` are not bases).
fn class_signature(name: &str, bases: &[pyexpr::Expr]) -> String {
    let mut rendered = String::new();
    for (i, base) in bases.iter().enumerate() {
        if i > 0 {
            rendered.push_str(", ");
        }
        if pyexpr::unparse(base, 4, &mut rendered).is_err() {
            return name.to_owned();
        }
    }
    if rendered.is_empty() {
        format!("class {name}")
    } else {
        format!("class {name}({rendered})")
    }
}

/// The index of the `:` closing a header whose remaining tokens start at `from`.
fn colon_after(text: &str, toks: &[Token], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(from) {
        match (t.kind, t.text(text)) {
            (Kind::Newline, _) => return None,
            (Kind::Op, "(" | "[" | "{") => depth += 1,
            (Kind::Op, ")" | "]" | "}") => depth = depth.saturating_sub(1),
            (Kind::Op, ":") if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The source inside the brackets that open at `toks[from]`, up to the header's colon, with
/// whitespace collapsed.
fn source_between(text: &str, toks: &[Token], from: usize, colon: usize) -> String {
    let open = toks[from].end();
    let close = toks[..colon]
        .iter()
        .rev()
        .find(|t| t.kind == Kind::Op && t.text(text) == ")")
        .map_or(open, |t| t.start().max(open));
    super::collapse_whitespace(&text[open..close])
}

/// The docstring of the body starting at `toks[body]`: the first statement when it is nothing
/// but string literals (no f-strings, no bytes). `\N{...}` escapes are left as written.
fn docstring(text: &str, toks: &[Token], mut body: usize) -> String {
    while toks
        .get(body)
        .is_some_and(|t| matches!(t.kind, Kind::Newline | Kind::Indent))
    {
        body += 1;
    }
    let end = toks[body.min(toks.len())..]
        .iter()
        .position(|t| t.kind != Kind::String)
        .map_or(toks.len(), |n| body + n);
    let closes_statement = toks.get(end).is_some_and(|t| {
        t.kind == Kind::Newline || (t.kind == Kind::Op && t.text(text) == ";")
    });
    if end == body || !closes_statement {
        return String::new();
    }
    let parts: Vec<&str> = toks[body..end]
        .iter()
        .map(|t| t.text(text))
        .collect();
    if parts.iter().any(|p| pyexpr::split_literal(p).0.formatted) {
        return String::new();
    }
    match pyexpr::strings(&parts) {
        Ok(Const::Str { value, .. }) => value,
        Ok(_) | Err(Fail::Syntax) => String::new(),
        Err(Fail::Unsupported) => parts.iter().map(|p| pyexpr::split_literal(p).1).collect(),
    }
}
