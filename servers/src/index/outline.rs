//! A source file's definitions at every level (functions, and the methods of classes, impl
//! blocks, traits and interfaces) with their line ranges and qualified names: the units of the
//! code-outline sidecar (`references/code-outline.json`, see [`crate::recall::outline`]).
//!
//! A line scanner, not a parser: it knows each language's definition keywords (the ones
//! `passages` uses), and where a definition ends from its braces (skipping strings, characters
//! and comments) or, for Python and Ruby, from indentation. What it gets wrong on unusual code
//! is a unit's extent or a missed method, never an error: units only refine ranking and name the
//! lines of a hit; the file's own document still holds all of its text.

use super::passages::{looks_like_function, passage, signature_from, Lang};
use crate::corpus::text::collapse_whitespace;
use crate::corpus::text::definition_name;

/// Units kept per file.
pub const MAX_UNITS: usize = 400;
/// Lines a signature may span.
const MAX_SIGNATURE_LINES: usize = 12;
/// Lines of a docstring or doc comment kept.
const MAX_DOC_LINES: usize = 12;
/// Separator of a qualified name's parts (`Session.request`).
pub const QUALIFIER: char = '.';

/// One definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The name qualified by its containers (`Session.request`, `Command.Execute`).
    pub name: String,
    /// The passage: signature, then ` — ` and the doc comment or docstring.
    pub passage: String,
    /// 1-based, inclusive.
    pub first_line: usize,
    pub last_line: usize,
}

/// The units of `text` written in `language`, in the order they start; none for a language the
/// scanner does not know.
pub fn outline(text: &str, language: Option<&str>) -> Vec<Unit> {
    let lines: Vec<&str> = text.lines().collect();
    let mut units = match language {
        Some("python") => indented(&lines, Indented::Python),
        Some("ruby") => indented(&lines, Indented::Ruby),
        Some("shell") => braced(&lines, &Lang::shell()),
        Some(name) => match Lang::named(name) {
            Some(lang) => braced(&lines, &lang),
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    units.sort_by_key(|u| u.first_line);
    units.truncate(MAX_UNITS);
    units
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Indented {
    Python,
    Ruby,
}

/// An open definition of an indentation language.
struct OpenIndented {
    indent: usize,
    name: String,
    passage: String,
    first_line: usize,
    last_line: usize,
}

/// Python and Ruby: a definition runs until the next code line indented no deeper than it (for
/// Ruby, that line's `end` included). Lines inside a triple-quoted string never end one.
fn indented(lines: &[&str], language: Indented) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut open: Vec<OpenIndented> = Vec::new();
    let mut in_string: Option<&str> = None;
    let close = |unit: OpenIndented, units: &mut Vec<Unit>| {
        units.push(Unit {
            name: unit.name,
            passage: unit.passage,
            first_line: unit.first_line,
            last_line: unit.last_line,
        });
    };
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if let Some(quote) = in_string {
            if let Some(top) = open.last_mut() {
                top.last_line = at + 1;
            }
            if odd_count(trimmed, quote) {
                in_string = None;
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = indent_of(line);
        let ruby_end =
            language == Indented::Ruby && (trimmed == "end" || trimmed.starts_with("end "));
        while open.last().is_some_and(|top| indent <= top.indent) {
            let mut top = open.pop().unwrap_or_else(|| unreachable!());
            if ruby_end && indent == top.indent {
                top.last_line = at + 1;
                close(top, &mut units);
                break;
            }
            close(top, &mut units);
        }
        for top in open.iter_mut() {
            top.last_line = at + 1;
        }
        if language == Indented::Python {
            for quote in ["\"\"\"", "'''"] {
                if odd_count(trimmed, quote) {
                    in_string = Some(quote);
                    break;
                }
            }
        }
        if ruby_end || units.len() + open.len() >= MAX_UNITS {
            continue;
        }
        let Some(keyword_end) = definition_start(trimmed, language) else {
            continue;
        };
        let (signature, signature_end) = python_signature(lines, at);
        let name = identifier(&trimmed[keyword_end..]);
        if name.is_empty() {
            continue;
        }
        let doc = match language {
            Indented::Python => docstring(lines, signature_end + 1),
            Indented::Ruby => comments_above(lines, at, "#"),
        };
        let qualified = qualify(open.last().map(|o| o.name.as_str()), name);
        open.push(OpenIndented {
            indent,
            name: qualified,
            passage: passage(&signature, &doc),
            first_line: at + 1,
            last_line: signature_end + 1,
        });
    }
    while let Some(top) = open.pop() {
        close(top, &mut units);
    }
    units
}

/// Whether `line` holds an odd number of `quote`s (non-overlapping). Most lines hold no quote
/// character at all, which one byte search tells before any substring search is set up.
fn odd_count(line: &str, quote: &str) -> bool {
    quote.chars().next().is_none_or(|c| line.contains(c)) && line.matches(quote).count() % 2 == 1
}

/// Where the name starts after a definition keyword, if `trimmed` opens a definition.
fn definition_start(trimmed: &str, language: Indented) -> Option<usize> {
    let keywords: &[&str] = match language {
        Indented::Python => &["def ", "async def ", "class "],
        Indented::Ruby => &["def self.", "def ", "class ", "module "],
    };
    keywords
        .iter()
        .find(|k| trimmed.starts_with(**k))
        .map(|k| k.len())
}

/// A Python or Ruby header: from `start` until its parentheses close, without the final `:`.
fn python_signature(lines: &[&str], start: usize) -> (String, usize) {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut end = start;
    for (offset, line) in lines[start..].iter().enumerate().take(MAX_SIGNATURE_LINES) {
        end = start + offset;
        let code = line.split(" #").next().unwrap_or(line);
        parts.push(code.trim());
        depth += code.matches(['(', '[']).count() as i32 - code.matches([')', ']']).count() as i32;
        if depth <= 0 {
            break;
        }
    }
    let joined = collapse_whitespace(&parts.join(" "));
    (joined.trim_end_matches(':').trim_end().to_owned(), end)
}

/// The docstring starting at line `at` (after blank lines), its lines joined.
fn docstring(lines: &[&str], at: usize) -> String {
    let Some((first_at, first)) = lines
        .iter()
        .enumerate()
        .skip(at)
        .find(|(_, l)| !l.trim().is_empty())
    else {
        return String::new();
    };
    let first = first.trim();
    let body = first
        .trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B'])
        .to_owned();
    let Some(quote) = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|q| body.starts_with(q))
    else {
        return String::new();
    };
    let mut text = Vec::new();
    let mut rest = &body[quote.len()..];
    for line in std::iter::once(rest).chain(
        lines[first_at + 1..]
            .iter()
            .map(|l| l.trim())
            .take(MAX_DOC_LINES),
    ) {
        rest = line;
        if let Some(end) = rest.find(quote) {
            text.push(&rest[..end]);
            break;
        }
        text.push(rest);
    }
    collapse_whitespace(&text.join(" "))
}

/// The comment lines right above line `at`, starting with `marker`, joined.
fn comments_above(lines: &[&str], at: usize, marker: &str) -> String {
    let mut doc: Vec<&str> = lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with(marker))
        .take(MAX_DOC_LINES)
        .map(|l| l.trim_start_matches(marker).trim())
        .collect();
    doc.reverse();
    collapse_whitespace(&doc.join(" "))
}

/// An open definition of a brace language.
struct OpenBraced {
    name: String,
    passage: String,
    first_line: usize,
    /// The depth inside its body; the unit ends when the depth drops below it.
    body_depth: usize,
    /// Whether definitions inside it are its members (a class, not a function).
    container: bool,
}

/// Brace languages: a definition's body is the block its first `{` opens. Only lines at the top
/// level or directly inside a container's body are looked at for definitions, so the statements
/// of a function body never count.
fn braced(lines: &[&str], lang: &Lang) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut open: Vec<OpenBraced> = Vec::new();
    let mut lexer = Lexer::default();
    let mut depth = 0usize;
    let mut doc: Vec<String> = Vec::new();
    let mut skip_until = 0usize;
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let at_member_level = open
            .last()
            .map_or(depth == 0, |top| top.container && depth == top.body_depth);
        let in_code = !lexer.in_comment();
        if at >= skip_until && in_code && at_member_level {
            if let Some(comment) = doc_comment(trimmed, lang) {
                doc.push(comment.to_owned());
            } else if trimmed.is_empty() || trimmed.starts_with("#[") || trimmed.starts_with('@') {
                // Attributes and annotations sit between a doc comment and its definition.
            } else if units.len() + open.len() < MAX_UNITS
                && is_member(lines, at, lang, open.last())
            {
                let (signature, end) = signature_from(lines, at);
                let container = is_container(&signature);
                let name = unit_name(&signature);
                let qualified = qualify(open.last().map(|o| o.name.as_str()), &name);
                let passage = passage(&signature, &doc.join(" "));
                doc.clear();
                // Where its body opens: the first `{` from its first line, before any `;`.
                let opens = body_opens(lines, at, end, &lexer);
                match opens {
                    Some(_) => open.push(OpenBraced {
                        name: qualified,
                        passage,
                        first_line: at + 1,
                        body_depth: depth + 1,
                        container,
                    }),
                    None => {
                        units.push(Unit {
                            name: qualified,
                            passage,
                            first_line: at + 1,
                            last_line: end + 1,
                        });
                        skip_until = end + 1;
                    }
                }
            } else {
                doc.clear();
            }
        }
        depth = lexer.depth_after(line, depth);
        while open.last().is_some_and(|top| depth < top.body_depth) {
            let top = open.pop().unwrap_or_else(|| unreachable!());
            units.push(Unit {
                name: top.name,
                passage: top.passage,
                first_line: top.first_line,
                last_line: at + 1,
            });
        }
    }
    let last = lines.len();
    while let Some(top) = open.pop() {
        units.push(Unit {
            name: top.name,
            passage: top.passage,
            first_line: top.first_line,
            last_line: last,
        });
    }
    units
}

/// Whether the body of the definition at `at` (header ending at `end`) opens with a `{` before
/// any `;`: looked for from its first line to one past its header.
fn body_opens(lines: &[&str], at: usize, end: usize, lexer: &Lexer) -> Option<usize> {
    let mut probe = lexer.clone();
    for (offset, line) in lines[at..].iter().enumerate().take(end - at + 2) {
        match probe.first_of(line, b"{;") {
            Some(b'{') => return Some(at + offset),
            Some(_) => return None,
            None => {}
        }
    }
    None
}

fn doc_comment<'a>(trimmed: &'a str, lang: &Lang) -> Option<&'a str> {
    lang.doc_lines
        .iter()
        .find(|m| trimmed.starts_with(**m))
        .map(|m| {
            trimmed[m.len()..]
                .trim_start_matches(['/', '!', '#'])
                .trim()
        })
        .or_else(|| {
            (lang.doc_blocks && trimmed.starts_with("/*") && trimmed.ends_with("*/")).then(|| {
                trimmed
                    .trim_start_matches("/*")
                    .trim_end_matches("*/")
                    .trim_matches(['*', '!', ' '])
            })
        })
}

/// Whether the line at `at` opens a definition: a keyword definition at any indentation, a
/// C-family function, or (inside a class of a language whose methods have no keyword) a method.
fn is_member(lines: &[&str], at: usize, lang: &Lang, parent: Option<&OpenBraced>) -> bool {
    let in_container = parent.is_some_and(|p| p.container);
    lang.is_keyword_definition(lines[at])
        || ((lang.c_functions || in_container) && looks_like_function(lines, at))
        || (in_container && is_method_declaration(lines[at]))
}

/// A method declared without a body inside a class or interface (`teeth(): number;`,
/// `private secret(): void;`, `get size(): number;`): modifiers, a name, then `(` or `<`, ending
/// in `;`.
fn is_method_declaration(line: &str) -> bool {
    const MODIFIERS: &[&str] = &[
        "public",
        "private",
        "protected",
        "static",
        "readonly",
        "abstract",
        "async",
        "get",
        "set",
        "override",
        "declare",
    ];
    let trimmed = line.trim();
    if !trimmed.ends_with(';') {
        return false;
    }
    let mut rest = trimmed;
    while let Some(word) = MODIFIERS
        .iter()
        .find(|m| rest.strip_prefix(**m).is_some_and(|r| r.starts_with(' ')))
    {
        rest = rest[word.len()..].trim_start();
    }
    let name = identifier(rest.trim_start_matches('#'));
    let after = rest.trim_start_matches('#')[name.len()..].trim_start_matches('?');
    !name.is_empty()
        && !matches!(
            name,
            "return" | "if" | "for" | "while" | "switch" | "throw" | "new"
        )
        && (after.starts_with('(') || after.starts_with('<'))
}

/// Definitions whose members are definitions of their own.
fn is_container(signature: &str) -> bool {
    signature.split_whitespace().any(|w| {
        let w = w.split('<').next().unwrap_or(w);
        matches!(
            w,
            "class" | "impl" | "trait" | "interface" | "mod" | "namespace" | "module" | "object"
        )
    })
}

/// The name a unit is known by: a Rust `impl`'s type (`impl<T> Display for Row<T>` → `Row`), a
/// Go method's receiver type and name (`func (c *Command) Execute()` → `Command.Execute`), else
/// the signature's defined name.
fn unit_name(signature: &str) -> String {
    let words: Vec<&str> = signature.split_whitespace().collect();
    if let Some(i) = words
        .iter()
        .position(|w| *w == "impl" || w.starts_with("impl<"))
    {
        let target = match words.iter().position(|w| *w == "for") {
            Some(f) if f > i => words.get(f + 1),
            _ => words.get(i + 1),
        };
        if let Some(target) = target {
            return identifier(target.trim_start_matches(['&', '*'])).to_owned();
        }
    }
    // Go's `type Name struct`, TypeScript's `type Name<T> = ...`.
    if words.first() == Some(&"type") {
        if let Some(name) = words.get(1) {
            return identifier(name).to_owned();
        }
    }
    if let Some(rest) = signature.strip_prefix("func (") {
        if let Some((receiver, _)) = rest.split_once(')') {
            let receiver = receiver.split_whitespace().last().unwrap_or("");
            let receiver = identifier(receiver.trim_start_matches('*'));
            let name = definition_name(signature).unwrap_or("");
            if !receiver.is_empty() && !name.is_empty() {
                return format!("{receiver}{QUALIFIER}{name}");
            }
        }
    }
    // An optional method (`secret?(): void`) is named without its `?`.
    definition_name(&signature.replace("?(", "("))
        .unwrap_or("")
        .to_owned()
}

fn qualify(parent: Option<&str>, name: &str) -> String {
    match parent {
        Some(parent) if !parent.is_empty() && !name.contains(QUALIFIER) => {
            format!("{parent}{QUALIFIER}{name}")
        }
        _ => name.to_owned(),
    }
}

/// The leading ASCII identifier of `s` (Ruby's `?`/`!` suffixes included).
fn identifier(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_alphanumeric() || c == '_' || (i > 0 && (c == '?' || c == '!')))
        })
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// Where a brace scan is between lines: inside a block comment or a multi-line string, or not.
#[derive(Clone, Default)]
struct Lexer {
    state: LexState,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum LexState {
    #[default]
    Code,
    BlockComment,
    /// A string that may span lines: a backtick template or a Go raw string.
    Backtick,
}

impl Lexer {
    fn in_comment(&self) -> bool {
        self.state != LexState::Code
    }

    /// The brace depth after `line`, counting only braces in code.
    fn depth_after(&mut self, line: &str, mut depth: usize) -> usize {
        self.walk(line, |b| {
            match b {
                b'{' => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            false
        });
        depth
    }

    /// The first byte of `wanted` in code on `line`, advancing the state past it.
    fn first_of(&mut self, line: &str, wanted: &[u8]) -> Option<u8> {
        let mut found = None;
        self.walk(line, |b| {
            if wanted.contains(&b) {
                found = Some(b);
                return true;
            }
            false
        });
        found
    }

    /// Calls `code` with each byte of `line` that is code (not in a string, character or
    /// comment) until it returns true.
    fn walk(&mut self, line: &str, mut code: impl FnMut(u8) -> bool) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match self.state {
                LexState::BlockComment => {
                    if b == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        self.state = LexState::Code;
                        i += 1;
                    }
                }
                LexState::Backtick => {
                    if b == b'`' {
                        self.state = LexState::Code;
                    }
                }
                LexState::Code => match b {
                    b'/' if bytes.get(i + 1) == Some(&b'/') => return,
                    b'/' if bytes.get(i + 1) == Some(&b'*') => {
                        self.state = LexState::BlockComment;
                        i += 1;
                    }
                    b'`' => self.state = LexState::Backtick,
                    b'"' => i = skip_quoted(bytes, i, b'"').unwrap_or(bytes.len()),
                    // A Rust lifetime (`'a`) is not a character literal: only a quote closed
                    // right after one character or one escape (`'x'`, `'\n'`, `'\u{1F600}'`).
                    b'\'' => {
                        if let Some(end) = skip_quoted(bytes, i, b'\'') {
                            let escaped = bytes.get(i + 1) == Some(&b'\\');
                            if end - i <= 2 || escaped && end - i <= 11 {
                                i = end;
                            }
                        }
                    }
                    _ => {
                        if code(b) {
                            return;
                        }
                    }
                },
            }
            i += 1;
        }
    }
}

/// The index of the quote closing the literal opened at `start`, if it closes on this line.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, language: &str) -> Vec<(String, usize, usize)> {
        outline(text, Some(language))
            .into_iter()
            .map(|u| (u.name, u.first_line, u.last_line))
            .collect()
    }

    fn n(name: &str, first: usize, last: usize) -> (String, usize, usize) {
        (name.to_owned(), first, last)
    }

    #[test]
    fn python_methods_are_qualified_and_end_where_their_indentation_does() {
        let src = "import os\n\nclass Session(Base):\n    \"\"\"A session.\"\"\"\n\n    def request(self, method,\n                url):\n        \"\"\"Sends a request.\n\n        Returns a response.\n        \"\"\"\n        text = \"\"\"\nnot code at column zero\n\"\"\"\n        return text\n\n    async def close(self):\n        pass\n\ndef helper():\n    # comment\n    return 1\n";
        assert_eq!(
            names(src, "python"),
            [
                n("Session", 3, 18),
                n("Session.request", 6, 15),
                n("Session.close", 17, 18),
                n("helper", 20, 22)
            ]
        );
        let units = outline(src, Some("python"));
        assert_eq!(
            units[1].passage,
            "def request(self, method, url) \u{2014} Sends a request. Returns a response."
        );
        assert_eq!(units[0].passage, "class Session(Base) \u{2014} A session.");
    }

    #[test]
    fn rust_impl_and_trait_members() {
        let src = "/// A row.\npub struct Row<'a> {\n    x: &'a str,\n}\n\nimpl<'a> Display for Row<'a> {\n    /// Formats it.\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        let s = \"}\";\n        if true { write!(f, \"{{\") } else { Ok(()) }\n    }\n}\n\npub trait Shape {\n    fn area(&self) -> f64;\n    fn name(&self) -> &str {\n        \"shape\"\n    }\n}\n\n// not a doc\nfn free() {}\n";
        assert_eq!(
            names(src, "rust"),
            [
                n("Row", 2, 4),
                n("Row", 6, 12),
                n("Row.fmt", 8, 11),
                n("Shape", 14, 19),
                n("Shape.area", 15, 15),
                n("Shape.name", 16, 18),
                n("free", 22, 22)
            ]
        );
        let units = outline(src, Some("rust"));
        assert_eq!(
            units[2].passage,
            "fn fmt(&self, f: &mut Formatter) -> Result \u{2014} Formats it."
        );
    }

    #[test]
    fn go_methods_take_their_receivers_type() {
        let src = "package x\n\n// Execute runs it.\nfunc (c *Command) Execute() error {\n\ts := `{\n`\n\treturn nil\n}\n\ntype Command struct {\n\tName string\n}\n\nfunc New() *Command { return nil }\n";
        assert_eq!(
            names(src, "go"),
            [
                n("Command.Execute", 4, 8),
                n("Command", 10, 12),
                n("New", 14, 14)
            ]
        );
    }

    #[test]
    fn typescript_and_java_class_members() {
        let ts = "export class Client {\n  private url: string;\n  /** Fetches it. */\n  async fetchData(url: string): Promise<void> {\n    if (x) {\n      call(() => {});\n    }\n  }\n  render() {\n  }\n}\nfunction top() {\n}\n";
        assert_eq!(
            names(ts, "typescript"),
            [
                n("Client", 1, 11),
                n("Client.fetchData", 4, 8),
                n("Client.render", 9, 10),
                n("top", 12, 13)
            ]
        );
        let dts = "export declare class Gear {\n    teeth(): number;\n    private secret?(): void;\n    size: number;\n    get ratio(): number;\n    return(x);\n}\n";
        assert_eq!(
            names(dts, "typescript"),
            [
                n("Gear", 1, 7),
                n("Gear.teeth", 2, 2),
                n("Gear.secret", 3, 3),
                n("Gear.ratio", 5, 5)
            ]
        );
        let java = "public class Thing {\n    /** Runs. */\n    @Override\n    public void run(int n) {\n        for (;;) {\n        }\n    }\n}\n";
        assert_eq!(
            names(java, "java"),
            [n("Thing", 1, 8), n("Thing.run", 4, 7)]
        );
    }

    #[test]
    fn ruby_and_shell() {
        let rb = "# A greeter.\nclass Greeter\n  # Says hi.\n  def hello(name)\n    puts name\n  end\n\n  def self.make\n  end\nend\n";
        assert_eq!(
            names(rb, "ruby"),
            [
                n("Greeter", 2, 10),
                n("Greeter.hello", 4, 6),
                n("Greeter.make", 8, 9)
            ]
        );
        let sh = "#!/bin/sh\nbuild() {\n  make\n}\n";
        assert_eq!(names(sh, "shell"), [n("build", 2, 4)]);
    }

    #[test]
    fn odd_input_never_panics_and_units_are_capped() {
        for language in [
            "python",
            "rust",
            "go",
            "typescript",
            "java",
            "c",
            "ruby",
            "shell",
        ] {
            for text in [
                "",
                "{{{{",
                "}}}}",
                "class",
                "def",
                "fn (",
                "\"\"\"",
                "/*",
                "`",
                "'",
                "impl",
                "func (",
                "def \u{e9}(x):\n",
                "class A:\n  def",
            ] {
                let _ = outline(text, Some(language));
            }
        }
        let many: String = (0..2000)
            .map(|i| format!("def f{i}():\n    pass\n"))
            .collect();
        assert_eq!(outline(&many, Some("python")).len(), MAX_UNITS);
        let many: String = (0..2000).map(|i| format!("fn f{i}() {{}}\n")).collect();
        assert_eq!(outline(&many, Some("rust")).len(), MAX_UNITS);
    }
}
