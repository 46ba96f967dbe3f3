//! A code document's passages: one per top-level definition (its signature, then ` — ` and its
//! doc comment or docstring), so a hit shows what the file defines; the reference's generic
//! block passages when a file has no definitions.
//!
//! Python follows the reference, which uses CPython's `ast`: `python` walks the module's tokens
//! (`pytoken`, Python 3.11's tokenizer), `pyexpr` parses each top-level header and prints it the
//! way `ast.unparse` does, docstrings are evaluated as `ast.get_docstring` returns them, and a
//! module CPython would reject gets the generic passages (`python`'s docs list the errors
//! detected). Shell uses the reference's function pattern; Rust, Go, JavaScript/TypeScript, Java,
//! C/C++ and Ruby are read by a line scanner that knows each language's definition keywords and
//! comment syntax. Passages only shape snippets: document scores come from the whole text.

/// Passages kept per document.
pub const MAX_PASSAGES: usize = 24;
/// Code points a passage is cut to.
pub const PASSAGE_CHARS: usize = 480;
/// Code points of a document's stored snippet.
const SNIPPET_CHARS: usize = 240;
/// Lines a signature may span before it is cut.
const MAX_SIGNATURE_LINES: usize = 12;

use crate::corpus::text::{collapse_whitespace, cut_chars};
use std::ops::Not;

mod pyexpr;
mod python;
#[cfg(test)]
mod python_tests;
mod pytoken;

/// A Python module's top-level definitions as `(signature, docstring)`, at most `max`; `None`
/// when CPython would not parse it (what the reference's `api-module` units are made of).
pub fn python_definitions(text: &str, max: usize) -> Option<Vec<(String, String)>> {
    python::module(text, max).map(|m| m.definitions)
}

/// A docstring as `ast.get_docstring` gives it (CPython 3.11's `inspect.cleandoc`): tabs
/// expanded to columns of 8, the first line's leading whitespace removed, the smallest
/// indentation of the other non-blank lines removed from each of them, and leading and trailing
/// empty lines dropped. What the reference hashes for an `api-module` unit.
pub fn cleandoc(doc: &str) -> String {
    use crate::corpus::text::is_python_whitespace;
    let expanded = expand_tabs(doc);
    let mut lines: Vec<&str> = expanded.split('\n').collect();
    let margin = (lines.iter().skip(1))
        .filter_map(|line| {
            let content = line.trim_start_matches(is_python_whitespace);
            (!content.is_empty()).then(|| line.chars().count() - content.chars().count())
        })
        .min();
    let mut cleaned: Vec<String> = Vec::with_capacity(lines.len());
    if let Some(first) = lines.first_mut() {
        *first = first.trim_start_matches(is_python_whitespace);
    }
    for (i, line) in lines.iter().enumerate() {
        match (i, margin) {
            (1.., Some(margin)) => cleaned.push(line.chars().skip(margin).collect()),
            _ => cleaned.push((*line).to_owned()),
        }
    }
    while cleaned.last().is_some_and(String::is_empty) {
        cleaned.pop();
    }
    let leading = cleaned.iter().take_while(|l| l.is_empty()).count();
    cleaned.drain(..leading);
    cleaned.join("\n")
}

/// `str.expandtabs()`: each tab up to the next multiple of 8 columns, a column counted in code
/// points from the last `\n` or `\r`.
fn expand_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0usize;
    for c in text.chars() {
        match c {
            '\t' => {
                let spaces = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// The passages of `text` written in `language`.
pub fn passages(text: &str, language: Option<&str>) -> Vec<String> {
    passages_and_imports(text, language).0
}

/// [`passages`], and for a Python module CPython parses, the top-level names of the modules it
/// imports (absolute imports only, sorted): one read of the tokens serves both.
pub fn passages_and_imports(text: &str, language: Option<&str>) -> (Vec<String>, Vec<String>) {
    let mut imports = Vec::new();
    let found = match language {
        Some("python") => {
            let module = python::module(text, MAX_PASSAGES);
            let definitions = module.map(|m| {
                imports = m.imports;
                m.definitions
            });
            python(definitions.unwrap_or_default())
        }
        Some("shell") => shell(text),
        Some(lang) => match Lang::named(lang) {
            Some(spec) => scan(text, &spec),
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    let passages = if found.is_empty() {
        generic(text)
    } else {
        found
    };
    (passages, imports)
}

/// The document's stored snippet: its first passage, else its first non-blank, non-`#` line.
pub fn snippet(passages: &[String], text: &str) -> String {
    if let Some(first) = passages.first() {
        return cut_chars(first, SNIPPET_CHARS).to_owned();
    }
    py_splitlines(text)
        .into_iter()
        .map(python_strip)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| cut_chars(l, SNIPPET_CHARS).to_owned())
        .unwrap_or_default()
}

fn python_strip(s: &str) -> &str {
    s.trim_matches(crate::corpus::text::is_python_whitespace)
}

/// Python's `str.splitlines()`: breaks on `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C..U+001E, U+0085,
/// U+2028 and U+2029; no trailing empty line.
pub(crate) fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        out.push(&s[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
            chars.next();
            start += 1;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

pub(super) fn passage(signature: &str, doc: &str) -> String {
    let doc = collapse_whitespace(doc);
    with_doc(signature, (!doc.is_empty()).then_some(&doc))
}

/// `signature — doc`, or the signature alone, cut to [`PASSAGE_CHARS`].
fn with_doc(signature: &str, doc: Option<&str>) -> String {
    let text = match doc {
        Some(doc) => format!("{signature} \u{2014} {doc}"),
        None => signature.to_owned(),
    };
    cut_chars(&text, PASSAGE_CHARS).to_owned()
}

/// Splits on blank-line gaps (`\n\s*\n`).
pub(crate) fn blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            // Find the end of a whitespace run containing a second newline.
            let mut j = i + 1;
            let mut second = None;
            while j < bytes.len() && (bytes[j] as char).is_ascii_whitespace() {
                if bytes[j] == b'\n' {
                    second = Some(j);
                }
                j += 1;
            }
            if let Some(end) = second {
                // The regex takes the longest \s* that still ends in \n.
                out.push(&text[start..i]);
                start = end + 1;
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// The reference's fallback: per blank-line block, its non-blank lines not starting with `#`,
/// joined by spaces.
pub fn generic(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in blocks(text) {
        let lines: Vec<&str> = py_splitlines(block)
            .into_iter()
            .map(python_strip)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        if lines.is_empty() {
            continue;
        }
        out.push(cut_chars(&lines.join(" "), PASSAGE_CHARS).to_owned());
        if out.len() >= MAX_PASSAGES {
            break;
        }
    }
    out
}

/// `^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{` per line.
fn shell(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix("function") {
            if after.starts_with(char::is_whitespace) {
                rest = after.trim_start();
            }
        }
        let name_len = rest
            .bytes()
            .enumerate()
            .take_while(|&(i, b)| {
                b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit())
            })
            .count();
        if name_len == 0 {
            continue;
        }
        let tail = rest[name_len..].trim_start();
        let Some(tail) = tail.strip_prefix("()") else {
            continue;
        };
        if tail.trim_start().starts_with('{') {
            out.push(format!("function {}", &rest[..name_len]));
            if out.len() >= MAX_PASSAGES {
                break;
            }
        }
    }
    out
}

/// Passages of top-level `def`, `async def` and `class` statements with their docstrings (none
/// when CPython would report a syntax error).
fn python(definitions: Vec<(String, String)>) -> Vec<String> {
    definitions
        .into_iter()
        .map(|(signature, doc)| {
            let doc = cleandoc_is_empty(&doc)
                .not()
                .then(|| collapse_whitespace(&doc));
            with_doc(&signature, doc.as_deref())
        })
        .collect()
}

/// Whether `inspect.cleandoc(doc)` is empty: it strips the first line and drops blank lines at
/// either end, but only dedents the others when some line after the first has content, so
/// `"\n    "` stays `"    "` (and the reference then writes a dash and nothing after it).
fn cleandoc_is_empty(doc: &str) -> bool {
    doc.chars().all(crate::corpus::text::is_python_whitespace)
        && doc.split('\n').skip(1).all(str::is_empty)
}

/// How one language marks definitions and documentation.
pub(super) struct Lang {
    /// Words that may precede a definition keyword (`pub`, `export`, `static`, ...).
    modifiers: &'static [&'static str],
    /// Definition keywords (`fn`, `struct`, `class`, ...).
    keywords: &'static [&'static str],
    /// Definitions are recognised up to this indentation (columns).
    max_indent: usize,
    /// Line-comment markers whose lines document the next definition.
    pub(super) doc_lines: &'static [&'static str],
    /// Whether `/** ... */` blocks document the next definition.
    pub(super) doc_blocks: bool,
    /// C-like languages: a column-0 line with a parameter list followed by `{` is a function.
    pub(super) c_functions: bool,
}

impl Lang {
    pub(super) fn named(name: &str) -> Option<Lang> {
        const NONE: &[&str] = &[];
        Some(match name {
            "rust" => Lang {
                modifiers: &[
                    "pub",
                    "pub(crate)",
                    "pub(super)",
                    "unsafe",
                    "async",
                    "const",
                    "extern",
                    "default",
                ],
                keywords: &[
                    "fn",
                    "struct",
                    "enum",
                    "trait",
                    "type",
                    "union",
                    "impl",
                    "mod",
                    "macro_rules!",
                ],
                max_indent: 0,
                doc_lines: &["///", "//!"],
                doc_blocks: true,
                c_functions: false,
            },
            "go" => Lang {
                modifiers: NONE,
                keywords: &["func", "type"],
                max_indent: 0,
                doc_lines: &["//"],
                doc_blocks: false,
                c_functions: false,
            },
            "javascript" | "typescript" => Lang {
                modifiers: &["export", "default", "declare", "abstract", "async"],
                keywords: &[
                    "function",
                    "function*",
                    "class",
                    "interface",
                    "type",
                    "enum",
                    "namespace",
                ],
                max_indent: 0,
                doc_lines: &["//"],
                doc_blocks: true,
                c_functions: false,
            },
            "java" => Lang {
                modifiers: &[
                    "public",
                    "protected",
                    "private",
                    "static",
                    "final",
                    "abstract",
                    "sealed",
                    "synchronized",
                    "native",
                ],
                keywords: &["class", "interface", "enum", "record", "@interface"],
                max_indent: 4,
                doc_lines: NONE,
                doc_blocks: true,
                c_functions: true,
            },
            "c" | "cpp" => Lang {
                modifiers: &["typedef", "static", "extern", "inline", "template<>"],
                keywords: &["struct", "union", "enum", "class", "namespace"],
                max_indent: 0,
                doc_lines: &["//"],
                doc_blocks: true,
                c_functions: true,
            },
            "ruby" => Lang {
                modifiers: NONE,
                keywords: &["def", "class", "module"],
                max_indent: 2,
                doc_lines: &["#"],
                doc_blocks: false,
                c_functions: false,
            },
            _ => return None,
        })
    }

    /// Shell functions for the outline (`passages` keeps the reference's shell pattern): `name()
    /// {` as a C-family function, or the `function` keyword.
    pub(super) fn shell() -> Lang {
        Lang {
            modifiers: &[],
            keywords: &["function"],
            max_indent: 0,
            doc_lines: &["#"],
            doc_blocks: false,
            c_functions: true,
        }
    }

    /// Whether `line` (already known to be within the indentation limit) opens a definition.
    fn is_definition(&self, lines: &[&str], at: usize) -> bool {
        self.is_keyword_definition(lines[at]) || self.c_functions && looks_like_function(lines, at)
    }

    /// Whether `line` opens a definition with one of the language's keywords (after modifiers).
    pub(super) fn is_keyword_definition(&self, line: &str) -> bool {
        let mut rest = line.trim_start();
        loop {
            let word = rest.split(char::is_whitespace).next().unwrap_or("");
            // A keyword may carry generics (`impl<'a>`).
            let keyword = word.split('<').next().unwrap_or(word);
            if self.keywords.contains(&keyword) {
                return rest.len() > keyword.len();
            }
            if self.modifiers.contains(&word) && !word.is_empty() {
                rest = rest[word.len()..].trim_start();
                continue;
            }
            return false;
        }
    }
}

/// A C-family function definition: a declarator with a parameter list (possibly over several
/// lines), not a statement, whose body opens right after it.
pub(super) fn looks_like_function(lines: &[&str], at: usize) -> bool {
    let trimmed = lines[at].trim();
    let first = trimmed
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    let statements = [
        "return", "if", "else", "for", "while", "switch", "case", "do", "goto", "sizeof", "new",
        "throw",
    ];
    let Some(open) = trimmed.find('(') else {
        return false;
    };
    let assignment = trimmed.find('=').is_some_and(|eq| eq < open);
    if first.is_empty()
        || statements.contains(&first)
        || assignment
        || !trimmed[..open]
            .trim_end()
            .ends_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        return false;
    }
    let mut depth = 0i32;
    for (offset, line) in lines[at..].iter().enumerate().take(MAX_SIGNATURE_LINES) {
        depth += line.matches('(').count() as i32 - line.matches(')').count() as i32;
        if depth > 0 {
            continue;
        }
        let line = line.trim_end();
        let next = lines.get(at + offset + 1);
        return line.ends_with('{')
            || line.ends_with(')') && next.is_some_and(|n| n.trim_start().starts_with('{'));
    }
    false
}

fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// Definitions and their doc comments, by a line scan.
fn scan(text: &str, lang: &Lang) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    // Documentation seen since the last code line: comment lines or a /** */ block.
    let mut doc: Vec<String> = Vec::new();
    let mut in_block: Option<Vec<String>> = None;
    let mut i = 0;
    while i < lines.len() && out.len() < MAX_PASSAGES {
        let line = lines[i];
        let trimmed = line.trim();
        if let Some(block) = in_block.as_mut() {
            let (content, closed) = match trimmed.find("*/") {
                Some(end) => (&trimmed[..end], true),
                None => (trimmed, false),
            };
            block.push(content.trim_start_matches('*').trim().to_owned());
            if closed {
                doc = in_block.take().unwrap_or_default();
            }
            i += 1;
            continue;
        }
        if lang.doc_blocks && trimmed.starts_with("/*") {
            let body = trimmed
                .trim_start_matches("/*")
                .trim_start_matches(['*', '!']);
            match body.find("*/") {
                Some(end) => doc = vec![body[..end].trim().to_owned()],
                None => in_block = Some(vec![body.trim().to_owned()]),
            }
            i += 1;
            continue;
        }
        if let Some(marker) = lang.doc_lines.iter().find(|m| trimmed.starts_with(**m)) {
            doc.push(
                trimmed[marker.len()..]
                    .trim_start_matches(['/', '!', '#'])
                    .trim()
                    .to_owned(),
            );
            i += 1;
            continue;
        }
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        // Attributes and annotations sit between a doc comment and its definition.
        if trimmed.starts_with("#[")
            || trimmed.starts_with('@') && !trimmed.starts_with("@interface")
        {
            i += 1;
            continue;
        }
        if indent_of(line) <= lang.max_indent && lang.is_definition(&lines, i) {
            let (signature, end) = signature_from(&lines, i);
            out.push(passage(&signature, &doc.join(" ")));
            doc.clear();
            i = end + 1;
            continue;
        }
        doc.clear();
        i += 1;
    }
    out
}

/// The definition's header: from line `start` up to (not including) the body's `{`, a `;` or a
/// `where` clause, joined into one line; it ends at the first line that closes its parentheses.
/// Returns the last line used.
pub(super) fn signature_from(lines: &[&str], start: usize) -> (String, usize) {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut end = start;
    for (offset, line) in lines[start..].iter().enumerate().take(MAX_SIGNATURE_LINES) {
        end = start + offset;
        let cut = [line.find('{'), line.find(';'), line.find(" where ")]
            .into_iter()
            .flatten()
            .min();
        let kept = &line[..cut.unwrap_or(line.len())];
        parts.push(kept.trim());
        depth += kept.matches('(').count() as i32 - kept.matches(')').count() as i32;
        if cut.is_some() || depth <= 0 {
            break;
        }
    }
    (collapse_whitespace(&parts.join(" ")), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_functions_follow_the_reference_pattern() {
        let src = "#!/bin/sh\nfunction deploy {\n}\nbuild() {\n  :\n}\n  function  clean_up ( ) {\n}\nfunction tidy() {\n}\n";
        assert_eq!(
            passages(src, Some("shell")),
            ["function build", "function tidy"]
        );
        assert_eq!(
            passages("echo hi\n\n# c\nls -l\nexit 0\n", Some("shell")),
            ["echo hi", "ls -l exit 0"]
        );
    }

    #[test]
    fn generic_blocks_split_on_blank_lines() {
        assert_eq!(generic("a\n  \n\t\nb\n# c\nd\n\n\n"), ["a", "b d"]);
        assert!(generic("").is_empty());
        let many: String = (0..30).map(|i| format!("line{i}\n\n")).collect();
        assert_eq!(generic(&many).len(), MAX_PASSAGES);
    }

    #[test]
    fn rust_items_with_doc_comments() {
        let src = "//! Crate.\nuse std::io;\n\n/// Parses the\n/// input.\n#[inline]\npub fn parse(input: &str,\n    strict: bool) -> Result<(), E> {\n    todo\n}\n\npub(crate) struct Point { x: i32 }\n\nimpl Display for Point {\n    fn fmt(&self) {}\n}\n\npub trait Shape where Self: Sized {\n}\n";
        assert_eq!(
            passages(src, Some("rust")),
            [
                "pub fn parse(input: &str, strict: bool) -> Result<(), E> \u{2014} Parses the input.",
                "pub(crate) struct Point",
                "impl Display for Point",
                "pub trait Shape",
            ]
        );
    }

    #[test]
    fn go_javascript_java_c_and_ruby_definitions() {
        let go = "package x\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\ntype T struct {\n}\n";
        assert_eq!(
            passages(go, Some("go")),
            ["func Add(a, b int) int \u{2014} Add adds.", "type T struct"]
        );
        let js = "/**\n * Sums values.\n */\nexport function sum(xs) {\n}\nconst x = 1;\nexport default class App extends Base {\n}\n";
        assert_eq!(
            passages(js, Some("javascript")),
            [
                "export function sum(xs) \u{2014} Sums values.",
                "export default class App extends Base"
            ]
        );
        let java = "package p;\n\n/** A thing. */\npublic class Thing {\n    /** Runs. */\n    @Override\n    public void run(int n) {\n        if (x) {\n        }\n    }\n}\n";
        assert_eq!(
            passages(java, Some("java")),
            [
                "public class Thing \u{2014} A thing.",
                "public void run(int n) \u{2014} Runs."
            ]
        );
        let c = "#include <stdio.h>\n\n/* Entry point. */\nint main(int argc,\n         char **argv)\n{\n    return 0;\n}\n\nstatic struct node *make(void) {\n}\nint x = f(1);\nstruct point {\n};\n";
        assert_eq!(
            passages(c, Some("c")),
            [
                "int main(int argc, char **argv) \u{2014} Entry point.",
                "static struct node *make(void)",
                "struct point"
            ]
        );
        let rb = "# A greeter.\nclass Greeter\n  # Says hi.\n  def hello(name)\n  end\nend\n";
        assert_eq!(
            passages(rb, Some("ruby")),
            [
                "class Greeter \u{2014} A greeter.",
                "def hello(name) \u{2014} Says hi."
            ]
        );
    }

    #[test]
    fn snippet_falls_back_to_the_first_code_line() {
        assert_eq!(snippet(&[], "# c\n\n  x = 1  \n"), "x = 1");
        assert_eq!(snippet(&["p".into()], "x"), "p");
        assert_eq!(snippet(&[], "#only"), "");
    }
}
