//! A Python module's passages as the reference makes them with `ast`: one per top-level `def`,
//! `async def` and `class` (decorators allowed before them), `def name(<args>)` /
//! `class Name(<bases>)` printed like `ast.unparse`, with the docstring `ast.get_docstring`
//! returns; `None` when CPython would report a syntax error.
//!
//! Syntax errors detected: everything the tokenizer rejects (see `pytoken`), NUL characters,
//! `def`/`class` headers at any depth that do not parse (parameters, bases, return annotations),
//! a decorator not followed by a definition, a block opener without an indented block, an indent
//! without an opener, a compound statement without its `:`, statement keywords (`def`, `return`,
//! ...) inside a statement, operators that cannot start or end a statement or lack a left operand,
//! string literals with bad escapes or bytes mixed with text, and two operands in a row
//! (`print "x"`). Not detected: other errors inside statements (`f(a=1, 2)`, `x + = 1`, bad
//! assignment targets, f-string contents): the reference falls back to generic passages there,
//! these definitions come out instead.

use super::pyexpr::{self, Const, Fail, Parser};
use super::pytoken::{tokenize, Kind, Token};

/// What the index needs of a module CPython parses: its top-level definitions and the modules
/// it imports.
pub struct Module {
    /// `(signature, docstring)` of each top-level definition, at most the `max` asked for.
    pub definitions: Vec<(String, String)>,
    /// The first component of every absolute import's module name, anywhere in the module
    /// (`ast.walk` over `Import` and `ImportFrom` with level 0), sorted, without repeats.
    pub imports: Vec<String>,
}

/// `text` read as a Python module; `None` when CPython would not parse it.
pub fn module(text: &str, max: usize) -> Option<Module> {
    if text.contains('\0') {
        return None;
    }
    let toks = tokenize(text).ok()?;
    check_statement_shapes(text, &toks)?;
    let definitions = definitions_of(text, &toks, max)?;
    Some(Module {
        definitions,
        imports: imports_of(text, &toks),
    })
}

/// The first component of each module an `import` or absolute `from ... import` statement names.
/// `import` and `from` are hard keywords, so a statement is recognised by its first token alone:
/// one that opens a logical line, or follows `;` or a compound header's `:` (`try: import x`).
/// `from` elsewhere belongs to `yield from` or `raise ... from`.
fn imports_of(text: &str, toks: &[Token]) -> Vec<String> {
    let mut found = std::collections::BTreeSet::new();
    let opens_statement = |i: usize| {
        i == 0
            || match toks[i - 1].kind {
                Kind::Newline | Kind::Indent | Kind::Dedent => true,
                Kind::Op => matches!(toks[i - 1].text(text), ";" | ":"),
                _ => false,
            }
    };
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.kind != Kind::Name || !t.keyword || !opens_statement(i) {
            i += 1;
            continue;
        }
        match t.text(text) {
            "import" => {
                // `import a.b as c, d`: the first name, then each name after a top-level comma.
                let mut expect_name = true;
                i += 1;
                while let Some(t) = toks.get(i) {
                    match (t.kind, t.text(text)) {
                        (Kind::Newline, _) | (Kind::Op, ";") => break,
                        (Kind::Name, name) if expect_name => {
                            found.insert(name.to_owned());
                            expect_name = false;
                        }
                        (Kind::Op, ",") => expect_name = true,
                        _ => {}
                    }
                    i += 1;
                }
            }
            "from" => {
                // Relative imports (`from .x`, `from ...`) are the project's own: skipped.
                if let Some(next) = toks.get(i + 1) {
                    if next.kind == Kind::Name && !next.keyword {
                        found.insert(next.text(text).to_owned());
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    found.into_iter().collect()
}

/// The rendered top-level definitions of a module whose tokens passed the statement checks, at
/// most `max`; `None` when a header shows CPython would not parse it.
fn definitions_of(text: &str, toks: &[Token], max: usize) -> Option<Vec<(String, String)>> {
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
                || (word == "async" && toks.get(i + 1).is_some_and(|t| t.text(text) == "def")));
        if level > 0 && is_def {
            // Nested headers are not passages, but a malformed one is still a syntax error.
            header(text, toks, i).ok()?;
        } else if level == 0 && is_def {
            let (definition, body) = header(text, toks, i).ok()?;
            let body_token = toks.get(body)?;
            if body_token.kind != Kind::Newline && !starts_statement(text, body_token) {
                return None;
            }
            if out.len() < max {
                out.push((definition, docstring(text, toks, body)));
            }
            decorated = false;
        } else if level == 0 {
            let decorator = toks[i].kind == Kind::Op && word == "@";
            if decorated && !decorator {
                return None;
            }
            if decorator {
                check_decorator(text, toks, i + 1)?;
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
/// and augmented assignment, comparison, `%`, `|`, `&`, `^`, shifts, `//`, `->`, `:=`, `.`, `:`,
/// `,` and `@` (a decorator's `@` opens a statement instead).
fn is_infix(op: &str) -> bool {
    matches!(
        op.as_bytes(),
        [b'=' | b'<' | b'>' | b'%' | b'|' | b'&' | b'^' | b'.' | b':' | b',' | b'@']
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

/// Whether `t` can end an operand: a name or literal, `True`/`False`/`None`, a closing bracket,
/// `...`.
fn ends_operand(text: &str, t: &Token) -> bool {
    match t.kind {
        Kind::Name => !t.keyword || matches!(t.text(text), "True" | "False" | "None"),
        Kind::Number | Kind::String => true,
        Kind::Op => matches!(t.text(text), ")" | "]" | "}" | "..."),
        _ => false,
    }
}

/// Whether the infix operator `op` may follow `prev` although `prev` ends no operand: the tuple
/// target `a, = x`, relative imports (`from ..m`), the `*` and `/` parameter markers (`*, key`,
/// `lambda a, /: a`), `yield,`, `lambda:`, `else:` and the other block keywords, and slices
/// (`x[:, ::2]`).
fn infix_exception(text: &str, prev: &Token, op: &str, in_square: bool) -> bool {
    let p = prev.text(text);
    match op {
        "=" => p == ",",
        "." => matches!(p, "from" | "." | "..."),
        "," => matches!(p, "*" | "/" | "yield") || (in_square && p == ":"),
        ":" => {
            matches!(p, "lambda" | "else" | "try" | "finally" | "except" | "/")
                || (in_square && matches!(p, "[" | "," | ":"))
        }
        _ => false,
    }
}

/// Two tokens that cannot be adjacent: two operands (`print "x"`, `f() g`), or an operand and
/// `{`. `match` and `case` opening a line are soft keywords and exempt.
fn touching(text: &str, prev: &Token, t: &Token, prev_opened_line: bool) -> bool {
    let plain_operand = |t: &Token| match t.kind {
        Kind::Name => !t.keyword,
        Kind::Number | Kind::String => true,
        _ => false,
    };
    // `...` is left out: `from ...pkg import x`.
    let left = plain_operand(prev)
        || (prev.kind == Kind::Op && matches!(prev.text(text), ")" | "]" | "}"));
    let bad = left
        && match t.kind {
            Kind::Name | Kind::Number => plain_operand(t),
            Kind::String => prev.kind != Kind::String,
            Kind::Op => t.text(text) == "{",
            _ => false,
        };
    bad && !(prev_opened_line && matches!(prev.text(text), "match" | "case"))
}

/// Errors visible from token order alone: a line ending in `:` must open an indented block and an
/// indent must follow such a line; a statement (a line, or after `;` or a header's `:`) cannot
/// start with most operators, a line cannot end with most, and infix ones need a left operand;
/// statement keywords (`def`, `return`, ...) only open statements, compound ones only open a line
/// and need their `:` (with no `=` before it); `.` is followed by a name, `not` after an operand
/// by `in`; string literals must have valid escapes and not mix bytes with text; some tokens
/// cannot touch (see `touching`).
fn check_statement_shapes(text: &str, toks: &[Token]) -> Option<()> {
    let word = |t: &Token| t.text(text);
    let is_op = |t: &Token, op: &str| t.kind == Kind::Op && word(t) == op;
    // The previous token on this logical line, and whether it opened the line.
    let mut prev: Option<&Token> = None;
    let mut prev_opened_line = false;
    // Open brackets (the tokenizer bounds their nesting).
    let mut brackets: Vec<&str> = Vec::new();
    // Inside a compound statement's header, until its `:`.
    let mut open_header = false;
    // Whether the line opens with `match` or `case`, soft keywords that may open a block.
    let mut soft_compound = false;
    // The bracket depth of each lambda whose `:` is still to come.
    let mut lambdas: Vec<usize> = Vec::new();
    // Whether the previous token is the `:` closing a header (a statement may follow it).
    let mut header_closed = false;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Indent => {
                let after_opener =
                    i >= 2 && toks[i - 1].kind == Kind::Newline && is_op(&toks[i - 2], ":");
                if !after_opener {
                    return None;
                }
            }
            Kind::Newline => {
                if prev
                    .is_some_and(|p| p.kind == Kind::Op && !LINE_END_OPERATORS.contains(&word(p)))
                {
                    return None;
                }
                // A line ending in `:` is a compound header, followed by its block.
                let opener = prev.is_some_and(|p| is_op(p, ":"));
                if open_header
                    || opener
                        && (!(header_closed || soft_compound)
                            || toks.get(i + 1).map(|n| n.kind) != Some(Kind::Indent))
                {
                    return None;
                }
                header_closed = false;
                lambdas.clear();
            }
            _ => {}
        }
        if matches!(t.kind, Kind::Newline | Kind::Indent | Kind::Dedent) {
            prev = None;
            continue;
        }
        let opens_statement = header_closed || prev.is_none_or(|p| is_op(p, ";"));
        header_closed = false;
        if prev.is_none() {
            soft_compound = t.kind == Kind::Name && matches!(word(t), "match" | "case");
        }
        // A lambda's `:` closes its parameters, whatever they end with (`lambda a,: a`).
        let lambda_colon = is_op(t, ":") && lambdas.last() == Some(&brackets.len());
        if lambda_colon {
            lambdas.pop();
        }
        if opens_statement && !starts_statement(text, t) {
            return None;
        }
        if let Some(p) = prev {
            if is_op(p, ".") && !(t.kind == Kind::Name || is_op(t, ".") || is_op(t, "...")) {
                return None;
            }
            if p.keyword && word(p) == "not" {
                let after_operand = i >= 2 && ends_operand(text, &toks[i - 2]);
                if after_operand && word(t) != "in" {
                    return None;
                }
            }
            if touching(text, p, t, prev_opened_line) {
                return None;
            }
        }
        if t.kind == Kind::Op && !opens_statement && !lambda_colon && is_infix(word(t)) {
            let in_square = brackets.last() == Some(&"[");
            let has_left = prev.is_some_and(|p| {
                ends_operand(text, p)
                    || infix_exception(text, p, word(t), in_square)
                    // `case *x, 2,:` ends a pattern with a comma.
                    || (soft_compound && word(t) == ":" && word(p) == ",")
            });
            let header_assignment =
                open_header && brackets.is_empty() && lambdas.is_empty() && word(t) == "=";
            if !has_left || header_assignment {
                return None;
            }
        }
        match t.kind {
            Kind::Op => match word(t) {
                open @ ("(" | "[" | "{") => brackets.push(open),
                ")" | "]" | "}" => {
                    brackets.pop();
                }
                ":" if brackets.is_empty() && open_header && !lambda_colon => {
                    open_header = false;
                    header_closed = true;
                }
                _ => {}
            },
            Kind::Name if t.keyword => {
                let w = word(t);
                if w == "lambda" {
                    lambdas.push(brackets.len());
                }
                let after_async = prev.is_some_and(|p| word(p) == "async");
                if STATEMENT_KEYWORDS.contains(&w)
                    && !opens_statement
                    && !(after_async && matches!(w, "def" | "with"))
                {
                    return None;
                }
                if opens_statement && COMPOUND_KEYWORDS.contains(&w) {
                    // A compound statement opens its line: never after `;` or another's `:`.
                    if prev.is_some() {
                        return None;
                    }
                    open_header = true;
                }
            }
            Kind::String if prev.is_none_or(|p| p.kind != Kind::String) => {
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
        prev_opened_line = prev.is_none();
        prev = Some(t);
    }
    Some(())
}

/// Parses the definition header at `toks[at]` (`def`, `async def` or `class`) through its `:`.
/// Returns the rendered signature and the index of the body's first token. Constructs the printer
/// does not model never fail a header: they are printed as written (`Parser::or_raw`).
fn header(text: &str, toks: &[Token], at: usize) -> Result<(String, usize), Fail> {
    let word = toks[at].text(text);
    let (keyword, skip) = if word == "async" {
        ("async def", 2)
    } else {
        (word, 1)
    };
    let mut p = Parser::new(text, toks, at + skip);
    let name = p.name()?;
    let rendered = if keyword == "class" {
        let bases = if p.eat_op("(") {
            p.call_arguments(false)?.0
        } else {
            Vec::new()
        };
        class_signature(&name, &bases)
    } else {
        p.expect_op("(")?;
        let params = p.parameters(")", true)?;
        p.expect_op(")")?;
        if p.eat_op("->") {
            p.or_raw(&[":"], |p| p.expression())?;
        }
        let mut out = format!("{keyword} {name}(");
        match pyexpr::write_params(&params, &mut out) {
            Ok(()) => out + ")",
            // CPython's unparse raises ValueError; the reference then writes the name alone.
            Err(pyexpr::TooLarge) => name,
        }
    };
    p.expect_op(":")?;
    Ok((rendered, p.pos))
}

/// `class Name(<bases>)`, or `class Name` when it has no positional bases (keywords such as
/// `metaclass=` are not bases).
fn class_signature(name: &str, bases: &[pyexpr::Expr]) -> String {
    let mut rendered = String::new();
    for (i, base) in bases.iter().enumerate() {
        if i > 0 {
            rendered.push_str(", ");
        }
        if pyexpr::unparse_alone(base, &mut rendered).is_err() {
            return name.to_owned();
        }
    }
    if rendered.is_empty() {
        format!("class {name}")
    } else {
        format!("class {name}({rendered})")
    }
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
    let closes_statement = toks
        .get(end)
        .is_some_and(|t| t.kind == Kind::Newline || (t.kind == Kind::Op && t.text(text) == ";"));
    if end == body || !closes_statement {
        return String::new();
    }
    let parts: Vec<&str> = toks[body..end].iter().map(|t| t.text(text)).collect();
    if parts.iter().any(|p| pyexpr::split_literal(p).0.formatted) {
        return String::new();
    }
    match pyexpr::strings(&parts) {
        Ok(Const::Str { value, .. }) => value,
        Ok(_) | Err(Fail::Syntax) => String::new(),
        Err(Fail::Unsupported) => parts.iter().map(|p| pyexpr::split_literal(p).1).collect(),
    }
}
