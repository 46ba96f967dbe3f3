//! Keeps README.md, SECURITY.md and the other documents true to the code.
//!
//! The documents read are README.md, ARCHITECTURE.md, SECURITY.md, docs/*.md, fuzz/README.md and every README.md
//! under bench/ (build output and fuzz corpora left out). The code read is every `.rs` file under
//! src/, servers/, tests/, fuzz/, bench/ and examples/ (again without `target`, `corpus`,
//! `artifacts` and hidden folders). Nothing else is consulted: no git, no network, no build
//! output, so the test gives the same answer on every checkout of the same commit.
//!
//! Only inline code spans (text between backticks, which may run over a line break) are read as
//! names; fenced code blocks are skipped whole. A span is judged by its shape alone:
//!
//! - **Test and function names.** A span that is one snake_case identifier of three words or
//!   more (`[a-z][a-z0-9]*` joined by at least two single underscores, an optional `()` after
//!   it) must be one of: a `fn` of that name in the code; a field (a name that begins a line of
//!   code as `name: `, after any `pub`); the file stem of a `.rs` file (a fuzz target, an
//!   example, a benchmark binary: `http_request_head`, `sealed_token_bench`); a word the code
//!   spells as a whole string literal (`"token_cache_ttl_secs"`: a configuration key, a JSON
//!   member, an event name); or an entry of [`FOREIGN_SNAKE`], names of other programs (git's
//!   C, the Python reference, nginx), each with its reason. Two-word names (`git_log`, `max_k`)
//!   are too often fields and arguments to tell from functions, and are not checked (tried:
//!   all 30 two-word names the documents hold that the code lacks are other programs' names).
//!   A `fn` named right before a Rust file in parentheses ("`name` (servers/tests/x.rs)",
//!   "`name` (in src/y.rs)") must be defined in that file.
//! - **Our constants.** A span that is one UPPER_SNAKE_CASE identifier with at least one
//!   underscore must be a `const` or `static` item in the code (a line that starts, after any
//!   `pub`/`pub(...)`, with `const NAME:` or `static NAME:`), or a word the code spells as a
//!   whole string literal (an environment variable the code sets, removes or reads:
//!   `"GIT_DIR"`, `"AGENTTEAMS_GIT"`), or an entry of [`FOREIGN_UPPER`] (the kernel's and
//!   Python's names), each with its reason. A single capitalised word (`HEAD`, `GET`, `RECORD`)
//!   is an HTTP method, a git ref, a file name or a placeholder far more often than a constant,
//!   and is not required to exist; when it is one of our constants its stated value is checked.
//! - **Qualified names.** A span `a::b::last` (identifiers only, an optional `()` after it)
//!   whose first part is not in [`FOREIGN_ROOTS`] (the standard library, other crates), nor the
//!   whole in [`FOREIGN_PATHS`], must end in something of ours of the kind its case says: an
//!   UPPER_SNAKE `last` a `const`/`static`; a CamelCase one a `struct`, `enum`, `trait`, `type`
//!   or `union`, or a variant (a capitalised name that begins a line followed by `,`, `(` or
//!   `{`); a lower-case one a `fn`, a field, a `mod` or a file stem. The parts before the last
//!   are not checked (re-exports make the module path of a name loose).
//! - **Stated values.** Where the text gives a value right next to a constant it names (plain
//!   or qualified), the value must be the constant's. The shapes read are: "`NAME` (400",
//!   "`NAME` = 1 GiB", "| `NAME` | 15 s" (the name alone in its table cell, the value in the
//!   next), "| label (`NAME`) | 1 MiB" (a label cell of words without digits or other spans,
//!   the name alone in its parentheses), "`NAME`, 40," (here a bare number needs a comma,
//!   semicolon or colon after it, so "(`MAX_HEADERS`, 431)", a status code, is not a value; a
//!   number with a unit needs nothing) and the value before, the name alone in parentheses or
//!   followed by words: "16 KiB (`NAME`)", "64 header fields (`NAME`, 431)", "by 100
//!   (`NAME`)" (a number, then a unit or up to two words that are not "to", "or", "and", "of"
//!   and the like; not after "/", "×", "+", "→" or such a word). A table row whose first cell's spans are all constants, two
//!   or more, gives their values in order in the next cell when that cell splits (outside
//!   parentheses, at ", ", " / ", "; " and " and ") into as many parts, each a value:
//!   "| policy (`MAX_PATTERN_CHARS`, `MAX_RULES`) | 128 characters / 1024 |" (a row that splits
//!   otherwise is not read). A number followed by "to", "or", "and", "x", "/", "×", "→",
//!   "+", "*", a minus or a dash is a range, a sum or an experiment, not a value. Units: bytes,
//!   KiB, MiB, GiB, TiB (powers of 1024), ns, µs, ms, s, min, h, %; any other word after the
//!   number is what is counted. A time given for an integer constant is compared only when the
//!   name ends in `_SECS`, `_MS` or `_MILLIS`. The constant's definition is evaluated when it
//!   is made of integer and float literals, `+ - * / << >>`, parentheses, `as` casts,
//!   `Duration::from_secs/millis/micros/nanos(..)` and other constants of ours. A name with
//!   several definitions matches when any of them does; a qualifier (`pool::` of
//!   `pool::IDLE_TIMEOUT`) first narrows them to the files with a path part of that name. A
//!   value that cannot be compared (an expression not evaluated here, a bare number for a
//!   `Duration`) is skipped, and the skipped ones are counted and printed. So is a number
//!   right after a constant with only a space between ("`DEEP_RESCORED` 16"): the documents
//!   write values tried and dropped that way as often as the value itself, so it is not read.
//! - **Paths.** A span without spaces or wildcards whose first `/`-separated part names an
//!   entry of the repository's root (`servers/src/recall/load.rs`, `docs/recall.md`), or of the
//!   document's own folder, must exist. So must the target of every relative Markdown link, and
//!   every path written in plain text that starts with one of the root's folders
//!   (`src/http/chunked.rs` in a table cell). Paths into build output and fuzz corpora, which a
//!   fresh checkout does not have, are not checked, nor the files of other projects listed in
//!   [`FOREIGN_FILES`].
//! - **Flags of the binary.** In prose and code blocks alike, each `--flag` of a command that
//!   runs `agentteams-mcp` (up to a shell operator, a comment, a quote, a backtick or `--`) must
//!   be spelled by the code as a string literal (`"--root"`). Other programs' flags (git's,
//!   cargo's, the benchmark scripts') are not checked.
//!
//! Each allowlist entry must still be needed by some document: one that is not fails the test
//! too, so the lists do not outlive the text they excuse.
//!
//! Every failure is listed at once, as `document:line: what is wrong`, and the counts of what was
//! checked and skipped are printed (`cargo test --test docs_truth -- --nocapture`;
//! `DOCS_TRUTH_VERBOSE=1` also prints each value found true).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Snake_case names of other programs that the documents quote, and why each is not ours.
const FOREIGN_SNAKE: &[(&str, &str)] = &[
    (
        "compute_dependency_fingerprint",
        "a function of the Python reference",
    ),
    ("is_index_stale", "a function of the Python reference"),
    ("is_partition_stale", "a function of the Python reference"),
    ("git_diff_unstaged", "a tool of the reference server"),
    ("read_index_from", "a function in git's C sources"),
    ("freshen_shared_index", "a function in git's C sources"),
    ("proxy_read_timeout", "an nginx directive"),
    (
        "legacy_session_mode",
        "an option of rmcp, the Rust SDK the benchmarks compare with",
    ),
    (
        "write_to_zmij_buffer",
        "a function of the zmij crate the benchmarks compare with",
    ),
];

/// UPPER_SNAKE_CASE names of other programs that the documents quote, and why each is not ours.
const FOREIGN_UPPER: &[(&str, &str)] = &[
    ("O_APPEND", "an open(2) flag"),
    ("O_EXCL", "an open(2) flag"),
    ("O_NOFOLLOW", "an open(2) flag"),
    ("RLIMIT_AS", "a setrlimit(2) resource"),
    ("PATH_MAX", "the kernel's path length limit"),
    ("CERTIFICATE_VERIFY_FAILED", "Python's ssl error"),
];

/// First parts of `a::b` paths that are not ours: the standard library and other crates.
const FOREIGN_ROOTS: &[(&str, &str)] = &[
    ("std", "the standard library"),
    ("File", "the standard library"),
    ("CommandExt", "the standard library"),
    ("serde_json", "a crate the benchmarks compare with"),
    ("sonic_rs", "a crate the benchmarks compare with"),
];

/// Whole `a::b` paths that are not ours although their first part could be.
const FOREIGN_PATHS: &[(&str, &str)] = &[];

/// File paths of other projects whose first part is also a folder of ours.
const FOREIGN_FILES: &[(&str, &str)] = &[];

/// Paths a fresh checkout does not have: build output and fuzzing state (all in .gitignore).
const GENERATED_PATHS: &[&str] = &[
    "target/",
    "fuzz/target/",
    "fuzz/corpus/",
    "fuzz/artifacts/",
    "bench/target/",
    "bench/data/corpus/",
    "bench/http/target/",
    "bench/stdio/target/",
];

/// Folders never walked for code or documents (except as modules right under a `src`).
const SKIPPED_DIRS: &[&str] = &[
    "target",
    "corpus",
    "artifacts",
    "__pycache__",
    "node_modules",
];

// ---------------------------------------------------------------------------------------------
// The code: what it defines.

#[derive(Debug, Clone, Copy, PartialEq)]
enum ConstValue {
    Int(i128),
    Float(f64),
    /// A `Duration`, in nanoseconds.
    Dur(i128),
}

impl std::fmt::Display for ConstValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstValue::Int(v) => write!(f, "{v}"),
            ConstValue::Float(v) => write!(f, "{v}"),
            ConstValue::Dur(ns) if ns % 1_000_000_000 == 0 => write!(f, "{} s", ns / 1_000_000_000),
            ConstValue::Dur(ns) => write!(f, "{} ms", *ns as f64 / 1e6),
        }
    }
}

#[derive(Debug, Clone)]
struct ConstDef {
    file: String,
    line: usize,
    expr: String,
}

#[derive(Default)]
struct Code {
    fns: HashSet<String>,
    /// The files that define each `fn` at the start of a line.
    fn_files: HashMap<String, Vec<String>>,
    consts: HashMap<String, Vec<ConstDef>>,
    /// Contents of string literals that are whole identifiers.
    string_words: HashSet<String>,
    /// Contents of string literals that are flags (`"--root"`).
    string_words_with_dashes: HashSet<String>,
    /// Names that begin a line as `name:` (struct fields, their initialisers, parameters).
    fields: HashSet<String>,
    /// `mod NAME`.
    mods: HashSet<String>,
    /// `struct`, `enum`, `trait`, `type` and `union` names, and what looks like an enum variant
    /// (a capitalised name that begins a line followed by `,`, `(` or `{`).
    types: HashSet<String>,
    /// Stems of `.rs` files.
    file_stems: HashSet<String>,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

// The scans below walk 4 MB of code with index loops rather than iterator adapters and
// `trim_start`: the test runs unoptimised, where each adapter is a call per byte.

/// How many bytes at the start of `s` are identifier bytes.
fn ident_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && is_ident_byte(bytes[i]) {
        i += 1;
    }
    i
}

/// `s` without its leading spaces and tabs.
fn skip_indent(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    &s[i..]
}

/// At most `max` bytes of `s` from `start` (forward) or up to `start` (backward), cut on a
/// character boundary.
fn window(s: &str, start: usize, max: usize, forward: bool) -> &str {
    if forward {
        let mut end = (start + max).min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        &s[start..end]
    } else {
        let mut begin = start.saturating_sub(max);
        while !s.is_char_boundary(begin) {
            begin += 1;
        }
        &s[begin..start]
    }
}

impl Code {
    fn add_source(&mut self, path: &str, text: &str) {
        if let Some(stem) = Path::new(path).file_stem().and_then(|s| s.to_str()) {
            self.file_stems.insert(stem.to_string());
        }
        let bytes = text.as_bytes();
        // `"word"`
        let mut at = 0;
        while let Some(found) = text[at..].find('"') {
            let start = at + found + 1;
            if text[start..].starts_with("--") {
                let mut len = 2;
                while start + len < bytes.len()
                    && (is_ident_byte(bytes[start + len]) || bytes[start + len] == b'-')
                {
                    len += 1;
                }
                if bytes.get(start + len) == Some(&b'"') {
                    self.string_words_with_dashes
                        .insert(text[start..start + len].to_string());
                }
            }
            let len = ident_len(&text[start..]);
            if len > 0 && bytes.get(start + len) == Some(&b'"') {
                // Only names with an underscore are ever looked up here.
                if text[start..start + len].contains('_') {
                    self.string_words
                        .insert(text[start..start + len].to_string());
                }
                at = start + len + 1;
            } else {
                at = start;
            }
        }
        // Line by line: fields, variants, items, and `const NAME: T = EXPR;` and
        // `static NAME: T = EXPR;` items with their expressions.
        let lines: Vec<&str> = text.split('\n').collect();
        for (index, line) in lines.iter().enumerate() {
            let mut rest = skip_indent(line);
            let field_len = ident_len(rest);
            if field_len > 0
                && rest.as_bytes()[0].is_ascii_uppercase()
                && matches!(
                    rest.as_bytes().get(field_len),
                    Some(b',' | b'(' | b' ' | b'{')
                )
                && (rest.ends_with(',') || rest.ends_with('{') || rest.ends_with('('))
            {
                self.types.insert(rest[..field_len].to_string());
            }
            if let Some(after) = rest.strip_prefix("pub") {
                if after.starts_with(' ') {
                    rest = skip_indent(after);
                } else if after.starts_with('(') {
                    match after.find(')') {
                        Some(close) => rest = skip_indent(&after[close + 1..]),
                        None => continue,
                    }
                } else {
                    continue;
                }
            }
            let field_len = ident_len(rest);
            if field_len > 0 && rest[field_len..].starts_with(": ") {
                self.fields.insert(rest[..field_len].to_string());
            }
            // Items: `fn NAME`, `mod NAME`, `struct NAME` and the other type items, each at the
            // start of its line after its visibility and qualifiers.
            let mut item = rest;
            loop {
                let word_len = ident_len(item);
                let word = &item[..word_len];
                let after = skip_indent(&item[word_len..]);
                let name = &after[..ident_len(after)];
                match word {
                    "async" | "unsafe" | "extern" => item = after.trim_start_matches("\"C\" "),
                    // `const fn`; a `const NAME:` item is read below.
                    "const" if name == "fn" || name == "unsafe" => item = after,
                    "fn" if !name.is_empty() => {
                        self.fns.insert(name.to_string());
                        self.fn_files
                            .entry(name.to_string())
                            .or_default()
                            .push(path.to_string());
                        break;
                    }
                    "mod" if !name.is_empty() => {
                        self.mods.insert(name.to_string());
                        break;
                    }
                    "struct" | "enum" | "trait" | "type" | "union" if !name.is_empty() => {
                        self.types.insert(name.to_string());
                        break;
                    }
                    _ => break,
                }
            }
            let Some(after) = rest
                .strip_prefix("const ")
                .or_else(|| rest.strip_prefix("static "))
            else {
                continue;
            };
            let name_len = ident_len(after);
            let name = &after[..name_len];
            if name.is_empty() || !skip_indent(&after[name_len..]).starts_with(':') {
                continue;
            }
            // The expression: from the first `=` to the `;` that ends the item.
            let mut joined = String::new();
            for more in &lines[index..lines.len().min(index + 40)] {
                joined.push_str(more);
                joined.push('\n');
                if more.trim_end().ends_with(';') {
                    break;
                }
            }
            let Some(eq) = joined.find(" = ") else {
                continue;
            };
            let expr = joined[eq + 3..]
                .trim_end()
                .trim_end_matches(';')
                .trim()
                .to_string();
            self.consts
                .entry(name.to_string())
                .or_default()
                .push(ConstDef {
                    file: path.to_string(),
                    line: index + 1,
                    expr,
                });
        }
    }

    /// The value of every definition of `name` that can be evaluated, with its definition.
    fn values(&self, name: &str) -> Vec<(Option<ConstValue>, &ConstDef)> {
        self.consts
            .get(name)
            .map(|defs| defs.iter().map(|d| (self.eval(&d.expr, 0), d)).collect())
            .unwrap_or_default()
    }

    /// One value for a constant referred to from another's definition: all of its evaluable
    /// definitions must agree.
    fn value_of(&self, name: &str, depth: usize) -> Option<ConstValue> {
        let defs = self.consts.get(name)?;
        let mut found = None;
        for def in defs {
            let value = self.eval(&def.expr, depth + 1)?;
            if found.is_some_and(|f| f != value) {
                return None;
            }
            found = Some(value);
        }
        found
    }

    fn eval(&self, expr: &str, depth: usize) -> Option<ConstValue> {
        if depth > 8 {
            return None;
        }
        let tokens = tokenize(expr)?;
        let mut parser = ExprParser {
            tokens: &tokens,
            at: 0,
            code: self,
            depth,
        };
        let value = parser.shift()?;
        (parser.at == tokens.len()).then_some(value)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(i128),
    Float(f64),
    Path(String),
    Op(&'static str),
}

fn tokenize(expr: &str) -> Option<Vec<Token>> {
    let bytes = expr.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (is_ident_byte(bytes[i]) || bytes[i] == b'.') {
                // A `.` is part of the number only when a digit follows (`1.5`, not `1.max`).
                if bytes[i] == b'.' && !bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                    break;
                }
                i += 1;
            }
            let raw: String = expr[start..i].chars().filter(|&c| c != '_').collect();
            tokens.push(number_token(&raw)?);
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            loop {
                while i < bytes.len() && is_ident_byte(bytes[i]) {
                    i += 1;
                }
                if expr[i..].starts_with("::") {
                    i += 2;
                } else {
                    break;
                }
            }
            tokens.push(Token::Path(expr[start..i].to_string()));
        } else {
            let op = ["<<", ">>", "*", "/", "+", "-", "(", ")"]
                .into_iter()
                .find(|op| expr[i..].starts_with(op))?;
            tokens.push(Token::Op(op));
            i += op.len();
        }
    }
    Some(tokens)
}

/// A Rust numeric literal without its `_`s, its type suffix allowed (`1024usize`, `0.5f64`).
fn number_token(raw: &str) -> Option<Token> {
    for suffix in [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
        "f64", "f32",
    ] {
        if let Some(digits) = raw.strip_suffix(suffix) {
            return number_token(digits);
        }
    }
    if let Some(hex) = raw.strip_prefix("0x") {
        return i128::from_str_radix(hex, 16).ok().map(Token::Int);
    }
    if raw.contains('.') || raw.contains('e') {
        return raw.parse().ok().map(Token::Float);
    }
    raw.parse().ok().map(Token::Int)
}

struct ExprParser<'a> {
    tokens: &'a [Token],
    at: usize,
    code: &'a Code,
    depth: usize,
}

impl ExprParser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn shift(&mut self) -> Option<ConstValue> {
        let mut left = self.additive()?;
        while let Some(op @ ("<<" | ">>")) = self.peek_op() {
            self.at += 1;
            let right = self.additive()?;
            left = match (left, right) {
                (ConstValue::Int(a), ConstValue::Int(b)) if (0..127).contains(&b) => {
                    ConstValue::Int(if op == "<<" { a << b } else { a >> b })
                }
                _ => return None,
            };
        }
        Some(left)
    }

    fn additive(&mut self) -> Option<ConstValue> {
        let mut left = self.multiplicative()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.at += 1;
            let right = self.multiplicative()?;
            let sign = if op == "+" { 1 } else { -1 };
            left = match (left, right) {
                (ConstValue::Int(a), ConstValue::Int(b)) => ConstValue::Int(a + sign * b),
                (ConstValue::Float(a), ConstValue::Float(b)) => {
                    ConstValue::Float(a + sign as f64 * b)
                }
                (ConstValue::Dur(a), ConstValue::Dur(b)) => ConstValue::Dur(a + sign * b),
                _ => return None,
            };
        }
        Some(left)
    }

    fn multiplicative(&mut self) -> Option<ConstValue> {
        let mut left = self.unary()?;
        while let Some(op @ ("*" | "/")) = self.peek_op() {
            self.at += 1;
            let right = self.unary()?;
            left = match (op, left, right) {
                ("*", ConstValue::Int(a), ConstValue::Int(b)) => ConstValue::Int(a.checked_mul(b)?),
                ("/", ConstValue::Int(a), ConstValue::Int(b)) if b != 0 => ConstValue::Int(a / b),
                ("*", ConstValue::Float(a), ConstValue::Float(b)) => ConstValue::Float(a * b),
                ("/", ConstValue::Float(a), ConstValue::Float(b)) => ConstValue::Float(a / b),
                ("*", ConstValue::Dur(a), ConstValue::Int(b)) => ConstValue::Dur(a * b),
                ("*", ConstValue::Int(a), ConstValue::Dur(b)) => ConstValue::Dur(a * b),
                ("/", ConstValue::Dur(a), ConstValue::Int(b)) if b != 0 => ConstValue::Dur(a / b),
                _ => return None,
            };
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<ConstValue> {
        if self.peek_op() == Some("-") {
            self.at += 1;
            return match self.unary()? {
                ConstValue::Int(v) => Some(ConstValue::Int(-v)),
                ConstValue::Float(v) => Some(ConstValue::Float(-v)),
                ConstValue::Dur(_) => None,
            };
        }
        let mut value = self.primary()?;
        // `as TYPE` casts: integers stay integers, `as f64` makes a float.
        while let Some(Token::Path(word)) = self.tokens.get(self.at) {
            if word != "as" {
                break;
            }
            let Some(Token::Path(ty)) = self.tokens.get(self.at + 1) else {
                return None;
            };
            self.at += 2;
            value = match (value, ty.as_str()) {
                (ConstValue::Int(v), "f64" | "f32") => ConstValue::Float(v as f64),
                (ConstValue::Int(v), _) => ConstValue::Int(v),
                _ => return None,
            };
        }
        Some(value)
    }

    fn primary(&mut self) -> Option<ConstValue> {
        let token = self.tokens.get(self.at)?.clone();
        self.at += 1;
        match token {
            Token::Int(v) => Some(ConstValue::Int(v)),
            Token::Float(v) => Some(ConstValue::Float(v)),
            Token::Op("(") => {
                let value = self.shift()?;
                (self.tokens.get(self.at) == Some(&Token::Op(")"))).then(|| {
                    self.at += 1;
                    value
                })
            }
            Token::Path(path) => {
                let last = path.rsplit("::").next().unwrap_or(&path);
                if self.peek_op() == Some("(") {
                    let scale: i128 = match (path.starts_with("Duration::"), last) {
                        (true, "from_secs") => 1_000_000_000,
                        (true, "from_millis") => 1_000_000,
                        (true, "from_micros") => 1_000,
                        (true, "from_nanos") => 1,
                        _ => return None,
                    };
                    self.at += 1;
                    let ConstValue::Int(v) = self.shift()? else {
                        return None;
                    };
                    if self.tokens.get(self.at) != Some(&Token::Op(")")) {
                        return None;
                    }
                    self.at += 1;
                    return Some(ConstValue::Dur(v * scale));
                }
                let first = path.split("::").next().unwrap_or("");
                let primitive = [
                    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128",
                    "isize", "f32", "f64",
                ];
                if primitive.contains(&first) || !is_upper_ident(last) {
                    return None;
                }
                self.code.value_of(last, self.depth)
            }
            Token::Op(_) => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The documents: code spans, their context, and what they claim.

#[derive(Debug)]
struct Span {
    line: usize,
    content: String,
    /// Up to 160 bytes of the text right after the closing backticks, line breaks as spaces
    /// (only for a span that may name a constant, else empty).
    after: String,
    /// Up to 240 bytes of the text right before the opening backticks, line breaks as spaces.
    before: String,
}

/// The text outside fenced code blocks, each kept line with its number (1-based).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut kept = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| trimmed.chars().take_while(|&x| x == c).count());
        match fence {
            Some((c, n)) => {
                if fence_char == Some(c) && run >= n && trimmed[run..].trim().is_empty() {
                    fence = None;
                }
            }
            None if run >= 3 && !trimmed[run..].contains('`') => {
                fence = Some((fence_char.unwrap(), run))
            }
            None => kept.push((index + 1, line)),
        }
    }
    kept
}

fn code_spans(text: &str) -> Vec<Span> {
    let lines = prose_lines(text);
    // One string of the prose, a line break where a line ends, and the line each byte is on.
    let mut joined = String::new();
    // Where each kept line starts in `joined`, and its number.
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut previous = 0;
    for (number, line) in &lines {
        if *number != previous + 1 {
            // A fenced block was removed here: it ends any span, as a blank line does.
            joined.push('\n');
        }
        previous = *number;
        starts.push((joined.len(), *number));
        joined.push_str(line);
        joined.push('\n');
    }
    let line_at = |offset: usize| {
        let index = starts.partition_point(|(start, _)| *start <= offset);
        starts[index.saturating_sub(1)].1
    };
    let bytes = joined.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let open = i;
        let start = i + run;
        // The closing run: exactly as long, before a blank line.
        let mut j = start;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'\n' && bytes.get(j + 1) == Some(&b'\n') {
                break;
            }
            if bytes[j] == b'`' {
                let len = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if len == run {
                    close = Some(j);
                    break;
                }
                j += len;
            } else {
                j += 1;
            }
        }
        let Some(close) = close else {
            i = start;
            continue;
        };
        let content = joined[start..close].trim();
        let content = if content.contains('\n') {
            content.replace('\n', " ")
        } else {
            content.to_string()
        };
        let after_start = close + run;
        // The context is read only around what may be a constant with its value.
        let last = content.rsplit("::").next().unwrap_or("");
        let (after, before) = if is_upper_ident(last) || is_snake_test_name(&content) {
            (
                window(&joined, after_start, 160, true).replace('\n', " "),
                window(&joined, open, 240, false).replace('\n', " "),
            )
        } else {
            (String::new(), String::new())
        };
        spans.push(Span {
            line: line_at(open),
            content,
            after,
            before,
        });
        i = after_start;
    }
    spans
}

fn is_snake_test_name(s: &str) -> bool {
    let words: Vec<&str> = s.split('_').collect();
    words.len() >= 3
        && words.iter().all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && s.as_bytes()[0].is_ascii_lowercase()
}

fn is_upper_ident(s: &str) -> bool {
    !s.is_empty()
        && s.as_bytes()[0].is_ascii_uppercase()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && !s.ends_with('_')
        && !s.contains("__")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    /// Multiplier to bytes.
    Bytes(i128),
    /// Multiplier to nanoseconds.
    Time(i128),
    Percent,
}

fn unit_of(word: &str) -> Option<Unit> {
    Some(match word {
        "byte" | "bytes" | "B" => Unit::Bytes(1),
        "KiB" => Unit::Bytes(1 << 10),
        "MiB" => Unit::Bytes(1 << 20),
        "GiB" => Unit::Bytes(1 << 30),
        "TiB" => Unit::Bytes(1 << 40),
        "ns" => Unit::Time(1),
        "µs" | "us" => Unit::Time(1_000),
        "ms" => Unit::Time(1_000_000),
        "s" | "second" | "seconds" => Unit::Time(1_000_000_000),
        "min" | "minute" | "minutes" => Unit::Time(60_000_000_000),
        "h" | "hour" | "hours" => Unit::Time(3_600_000_000_000),
        "%" => Unit::Percent,
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq)]
struct Stated {
    number: f64,
    unit: Option<Unit>,
    text: String,
}

/// A number at the start of `s` (`400`, `10,000`, `100 000`, `0.85`), its value and length.
fn leading_number(s: &str) -> Option<(f64, usize)> {
    let bytes = s.as_bytes();
    let mut digits = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_digit() {
            digits.push(b as char);
            i += 1;
        } else if (b == b',' || b == b' ')
            && !digits.is_empty()
            && !digits.contains('.')
            && bytes.len() >= i + 4
            && bytes[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && !bytes.get(i + 4).is_some_and(u8::is_ascii_digit)
        {
            i += 1; // A thousands separator.
        } else if b == b'.'
            && !digits.is_empty()
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            digits.push('.');
            i += 1;
        } else {
            break;
        }
    }
    if digits.is_empty() {
        return None;
    }
    digits.parse().ok().map(|v| (v, i))
}

/// A value stated right after a number's start in `s`: the number, its unit, and whether what
/// follows lets it stand as a value. `need_unit_or_stop`: the comma form, where a bare number
/// must be followed by `,`, `;` or `:`.
fn stated_at(s: &str, need_unit_or_stop: bool) -> Option<Stated> {
    let (number, len) = leading_number(s)?;
    let rest = &s[len..];
    let mut unit = None;
    let mut tail = rest;
    if let Some(after_percent) = rest.strip_prefix('%') {
        unit = Some(Unit::Percent);
        tail = after_percent;
    } else if let Some(after_space) = rest.strip_prefix(' ') {
        let word: String = after_space
            .chars()
            .take_while(|c| c.is_alphabetic())
            .collect();
        if let Some(u) = unit_of(&word) {
            unit = Some(u);
            tail = &after_space[word.len()..];
        }
    }
    let next_word: String = tail
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    let next_char = tail.trim_start().chars().next();
    let ranged = matches!(next_word.as_str(), "to" | "or" | "and" | "x")
        || matches!(
            next_char,
            Some('/' | '×' | '→' | '-' | '−' | '–' | '—' | '+' | '*' | '.')
        ) && !tail.trim_start().starts_with(". ")
            && tail.trim_start() != ".";
    if ranged || tail.starts_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    if need_unit_or_stop && unit.is_none() && !matches!(tail.chars().next(), Some(',' | ';' | ':'))
    {
        return None;
    }
    let text = s[..s.len() - tail.len()].to_string();
    Some(Stated { number, unit, text })
}

/// The value the text gives right next to a span, if it gives one.
fn stated_value(span: &Span) -> Option<Stated> {
    let after = span.after.as_str();
    // The cell of a table row the span is in, up to the span: "| stdio line (".
    let cell = span.before.rsplit_once('|').map(|(_, cell)| cell);
    // A label cell that is only words and the name in parentheses, the value in the next cell:
    // "| stdio line (`NAME`) | 1 MiB |".
    let label = cell.is_some_and(|c| {
        c.ends_with('(') && !c.contains('`') && !c.chars().any(|ch| ch.is_ascii_digit())
    });
    let after = match after.strip_prefix(')') {
        Some(rest) if label && rest.starts_with(" |") => rest,
        _ => after,
    };
    // "| `NAME` | 15 s |": the name alone in its cell.
    let alone = cell.is_some_and(|c| c.trim().is_empty()) || label;
    let trimmed = after.strip_prefix(' ').unwrap_or(after);
    for opener in ['(', '=', '|'] {
        if opener == '|' && !alone {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(opener) {
            if let Some(stated) = stated_at(rest.trim_start(), false) {
                return Some(stated);
            }
        }
    }
    if let Some(rest) = after.strip_prefix(", ") {
        if let Some(stated) = stated_at(rest, true) {
            return Some(stated);
        }
    }
    // "16 KiB (`NAME`", "64 header fields (`NAME`", "by 100 (`NAME`": the value before, when
    // the name is alone in the parentheses or followed by words (not by another name).
    if !(after.starts_with(')') || after.starts_with(", ") && !after[2..].starts_with('`')) {
        return None;
    }
    let before = span.before.strip_suffix(" (")?;
    let tokens: Vec<&str> = before.rsplit(' ').take(4).collect();
    let is_number = |t: &str| {
        !t.is_empty()
            && t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
            && leading_number(t).is_some_and(|(_, len)| len == t.len())
    };
    let is_word = |t: &str| {
        !t.is_empty() && t.chars().all(|c| c.is_ascii_lowercase()) && !CONNECTORS.contains(&t)
    };
    // The number's place among the last tokens, and its unit.
    let (at, unit) = match tokens.as_slice() {
        [t0, t1, ..] if is_number(t0) && is_number(t1) => return None, // "100 000"
        [t0, ..] if is_number(t0) => (0, None),
        [t0, t1, ..] if is_number(t1) && unit_of(t0).is_some() => (1, unit_of(t0)),
        [t0, t1, ..] if is_number(t1) && is_word(t0) => (1, None),
        [t0, t1, t2, ..] if is_number(t2) && is_word(t1) && is_word(t0) => (2, None),
        _ => return None,
    };
    // What comes before the number must not make it part of a range, a sum or a list.
    if let Some(previous) = tokens.get(at + 1) {
        if CONNECTORS.contains(previous) || ["/", "×", "+", "–", "→", "*"].contains(previous) {
            return None;
        }
    }
    let number_text = tokens[at];
    let (number, _) = leading_number(number_text)?;
    let text = tokens[..=at]
        .iter()
        .rev()
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    Some(Stated { number, unit, text })
}

/// Words that, next to a number, make it part of a range, a sum or a comparison.
const CONNECTORS: &[&str] = &[
    "to", "or", "and", "x", "times", "of", "than", "more", "less", "plus", "minus",
];

/// Whether a stated value is the constant's: `Some(true)`, `Some(false)`, or `None` when the
/// two cannot be compared.
fn matches(stated: &Stated, name: &str, value: ConstValue) -> Option<bool> {
    let n = stated.number;
    let int = |v: i128, scale: i128| (n * scale as f64 - v as f64).abs() < 0.5;
    match (stated.unit, value) {
        (None | Some(Unit::Percent), ConstValue::Int(v)) => Some(int(v, 1)),
        (None | Some(Unit::Percent), ConstValue::Float(v)) => Some((n - v).abs() < 1e-9),
        (Some(Unit::Bytes(scale)), ConstValue::Int(v)) => Some(int(v, scale)),
        (Some(Unit::Time(scale)), ConstValue::Dur(ns)) => Some(int(ns, scale)),
        (Some(Unit::Time(scale)), ConstValue::Int(v)) => {
            let per: i128 = if name.ends_with("_SECS") {
                1_000_000_000
            } else if name.ends_with("_MS") || name.ends_with("_MILLIS") {
                1_000_000
            } else {
                return None;
            };
            Some(int(v * per, scale))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The check.

#[derive(Default)]
struct Report {
    failures: Vec<String>,
    test_names: usize,
    constants: usize,
    values_checked: usize,
    values_skipped: Vec<String>,
    /// A number right after a constant in no shape read as its value.
    values_unread: Vec<String>,
    paths: usize,
    qualified: usize,
    flags: usize,
    test_files: usize,
    /// The allowlist entries some document needed.
    foreign_used: HashSet<&'static str>,
}

/// What the repository holds, as the check needs it.
trait Tree {
    fn exists(&self, path: &str) -> bool;
    fn root_entries(&self) -> &HashSet<String>;
}

struct Disk {
    root: PathBuf,
    entries: HashSet<String>,
}

impl Tree for Disk {
    fn exists(&self, path: &str) -> bool {
        self.root.join(path).exists()
    }
    fn root_entries(&self) -> &HashSet<String> {
        &self.entries
    }
}

/// `path` with `./` and `../` resolved; `None` when it climbs out of the repository.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

fn is_generated(path: &str) -> bool {
    let with_slash = format!("{}/", path.trim_end_matches('/'));
    GENERATED_PATHS.iter().any(|g| with_slash.starts_with(g))
        || (path.starts_with("bench/") && path.contains("/target/"))
}

fn looks_like_path(s: &str) -> bool {
    !s.is_empty()
        && s.contains('/')
        && !s.starts_with('/')
        && !s.contains("...")
        && !s.contains("://")
        && s.chars()
            .all(|c| c.is_alphanumeric() || "._-/+".contains(c))
}

fn check_path(
    doc: &str,
    line: usize,
    path: &str,
    tree: &dyn Tree,
    report: &mut Report,
    what: &str,
) {
    let doc_dir = Path::new(doc)
        .parent()
        .and_then(|p| p.to_str())
        .unwrap_or("");
    let first = path.split('/').next().unwrap_or("");
    let full = if tree.root_entries().contains(first) {
        path.to_string()
    } else if !doc_dir.is_empty() && (first == ".." || tree.exists(&format!("{doc_dir}/{first}"))) {
        format!("{doc_dir}/{path}")
    } else {
        return;
    };
    let Some(full) = normalise(&full) else {
        report.failures.push(format!(
            "{doc}:{line}: {what} `{path}` leads out of the repository"
        ));
        return;
    };
    if is_generated(&full) || foreign(FOREIGN_FILES, path, report) {
        return;
    }
    report.paths += 1;
    if std::env::var_os("DOCS_TRUTH_VERBOSE").is_some() {
        println!("docs_truth: path: {doc}:{line}: {full}");
    }
    if !tree.exists(&full) {
        report
            .failures
            .push(format!("{doc}:{line}: {what} `{path}` does not exist"));
    }
}

/// "`name` (servers/tests/x.rs)" or "`name` (in src/y.rs)": a `fn` named right before a Rust
/// file in parentheses must be defined in that file.
fn check_test_file(
    doc: &str,
    span: &Span,
    name: &str,
    code: &Code,
    tree: &dyn Tree,
    report: &mut Report,
) {
    let Some(rest) = span.after.strip_prefix(" (") else {
        return;
    };
    let rest = rest.strip_prefix("in ").unwrap_or(rest);
    let Some(end) = rest.find([')', ',', ';', ' ']) else {
        return;
    };
    let file = &rest[..end];
    let first = file.split('/').next().unwrap_or("");
    if !file.ends_with(".rs") || !tree.root_entries().contains(first) {
        return;
    }
    let Some(files) = code.fn_files.get(name) else {
        return;
    };
    report.test_files += 1;
    if !files.iter().any(|f| f == file) {
        report.failures.push(format!(
            "{doc}:{}: `{name}` is said to be in {file} but is defined in {}",
            span.line,
            files.join(", ")
        ));
    }
}

/// A table row whose first cell's code spans are all constants, two or more, and whose second
/// cell splits (outside parentheses, at ", ", " / ", "; " and " and ") into as many parts, each
/// a value: the names (qualifier and last part) with their values, in order.
#[allow(clippy::type_complexity)]
fn table_row_values(row: &str) -> Option<(Vec<(Vec<&str>, &str)>, Vec<Stated>)> {
    let cells: Vec<&str> = row
        .trim()
        .strip_prefix('|')?
        .split('|')
        .map(str::trim)
        .collect();
    if cells.len() < 3 {
        return None;
    }
    let spans: Vec<&str> = cells[0].split('`').skip(1).step_by(2).collect();
    let mut names = Vec::new();
    for span in &spans {
        let (qualifier, last) = qualified(span).unwrap_or((Vec::new(), span));
        if !is_upper_ident(last) {
            return None;
        }
        names.push((qualifier, last));
    }
    if names.len() < 2 {
        return None;
    }
    // The value cell, split at the top level.
    let cell = cells[1];
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < cell.len() {
        let rest = &cell[i..];
        match rest.as_bytes()[0] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ => {}
        }
        let separator = [", ", " / ", "; ", " and "]
            .into_iter()
            .find(|sep| depth == 0 && rest.starts_with(sep));
        if let Some(sep) = separator {
            parts.push(&cell[start..i]);
            i += sep.len();
            start = i;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    parts.push(&cell[start..]);
    if parts.len() != names.len() {
        return None;
    }
    let values: Option<Vec<Stated>> = parts.iter().map(|p| stated_at(p.trim(), false)).collect();
    Some((names, values?))
}

/// `a::b::c` (each part an identifier) as its qualifier parts and its last part.
fn qualified(name: &str) -> Option<(Vec<&str>, &str)> {
    let parts: Vec<&str> = name.split("::").collect();
    let is_ident = |p: &&str| {
        !p.is_empty() && !p.as_bytes()[0].is_ascii_digit() && p.bytes().all(is_ident_byte)
    };
    if parts.len() < 2 || !parts.iter().all(is_ident) {
        return None;
    }
    let (last, qualifier) = parts.split_last()?;
    Some((qualifier.to_vec(), last))
}

fn is_camel(s: &str) -> bool {
    s.as_bytes()[0].is_ascii_uppercase() && s.bytes().any(|b| b.is_ascii_lowercase())
}

/// `module::NAME`, `Type::method`, `module::Type`: the last part must be ours, of the kind its
/// case says, unless the path starts in the standard library or another crate.
fn check_qualified(
    doc: &str,
    span: &Span,
    name: &str,
    qualifier: Vec<&str>,
    last: &str,
    code: &Code,
    report: &mut Report,
) {
    if foreign(FOREIGN_ROOTS, qualifier[0], report) || foreign(FOREIGN_PATHS, name, report) {
        return;
    }
    report.qualified += 1;
    let (known, kind) = if is_upper_ident(last) {
        (code.consts.contains_key(last), "const or static")
    } else if is_camel(last) {
        (code.types.contains(last), "type or variant")
    } else {
        let known = code.fns.contains(last)
            || code.fields.contains(last)
            || code.mods.contains(last)
            || code.file_stems.contains(last);
        (known, "fn, field or module")
    };
    if !known {
        report.failures.push(format!(
            "{doc}:{}: `{name}`: `{last}` is no {kind} of the code",
            span.line
        ));
    } else if is_upper_ident(last) {
        check_value(doc, span, last, &qualifier, code, report);
    }
}

/// Checks the value the text states next to a constant's span, if it states one. A qualifier
/// (`pool::` in `pool::IDLE_TIMEOUT`) picks, among several definitions, those in a file whose
/// path has a part of that name.
fn check_value(
    doc: &str,
    span: &Span,
    name: &str,
    qualifier: &[&str],
    code: &Code,
    report: &mut Report,
) {
    if let Some(stated) = stated_value(span) {
        check_stated(doc, span.line, name, qualifier, &stated, code, report);
    } else if span.after.starts_with(' ')
        && span.after[1..].starts_with(|c: char| c.is_ascii_digit())
    {
        // "`NAME` 20": as often a value tried and dropped as the value; not read, but counted.
        let number: String = span.after[1..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect();
        report
            .values_unread
            .push(format!("{doc}:{}: `{name}` {number}", span.line));
    }
}

/// Compares one stated value with the definitions of `name`.
fn check_stated(
    doc: &str,
    line: usize,
    name: &str,
    qualifier: &[&str],
    stated: &Stated,
    code: &Code,
    report: &mut Report,
) {
    let mut values = code.values(name);
    if let Some(module) = qualifier.last() {
        let in_module = |file: &str| {
            file.trim_end_matches(".rs")
                .split('/')
                .any(|part| part == *module)
        };
        if values.iter().any(|(_, d)| in_module(&d.file)) {
            values.retain(|(_, d)| in_module(&d.file));
        }
    }
    let verdicts: Vec<Option<bool>> = values
        .iter()
        .map(|(v, _)| v.and_then(|v| matches(stated, name, v)))
        .collect();
    if verdicts.contains(&Some(true)) {
        report.values_checked += 1;
        if std::env::var_os("DOCS_TRUTH_VERBOSE").is_some() {
            println!(
                "docs_truth: value ok: {doc}:{}: `{name}` {}",
                line, stated.text
            );
        }
    } else if verdicts.contains(&Some(false)) {
        report.values_checked += 1;
        let defs: Vec<String> = values
            .iter()
            .map(|(v, d)| {
                let shown = v.map_or_else(|| "?".to_string(), |v| v.to_string());
                format!("{} = {} ({}:{})", d.expr, shown, d.file, d.line)
            })
            .collect();
        report.failures.push(format!(
            "{doc}:{}: `{name}` is said to be {} but is {}",
            line,
            stated.text,
            defs.join(" or ")
        ));
    } else {
        let exprs: Vec<&str> = values.iter().map(|(_, d)| d.expr.as_str()).collect();
        report.values_skipped.push(format!(
            "{doc}:{}: `{name}` said {} but defined as {}",
            line,
            stated.text,
            exprs.join(" or ")
        ));
    }
}

/// Whether `name` is in an allowlist; an entry found is marked used.
fn foreign(list: &[(&'static str, &str)], name: &str, report: &mut Report) -> bool {
    match list.iter().find(|(n, _)| *n == name) {
        Some((n, _)) => {
            report.foreign_used.insert(n);
            true
        }
        None => false,
    }
}

fn check_doc(doc: &str, text: &str, code: &Code, tree: &dyn Tree, report: &mut Report) {
    for span in code_spans(text) {
        let content = span.content.as_str();
        let name = content.strip_suffix("()").unwrap_or(content);
        if let Some((qualifier, last)) = qualified(name) {
            check_qualified(doc, &span, name, qualifier, last, code, report);
        } else if is_snake_test_name(name) {
            report.test_names += 1;
            let known = code.fns.contains(name)
                || code.file_stems.contains(name)
                || code.string_words.contains(name)
                || code.fields.contains(name)
                || foreign(FOREIGN_SNAKE, name, report);
            check_test_file(doc, &span, name, code, tree, report);
            if !known {
                report.failures.push(format!(
                    "{doc}:{}: `{name}` is no fn, field, target or string of the code (renamed or removed?)",
                    span.line
                ));
            }
        } else if is_upper_ident(name) {
            let defined = code.consts.contains_key(name);
            if name.contains('_') {
                report.constants += 1;
                if !defined
                    && !code.string_words.contains(name)
                    && !foreign(FOREIGN_UPPER, name, report)
                {
                    report.failures.push(format!(
                        "{doc}:{}: `{name}` is defined as no const or static of the code",
                        span.line
                    ));
                }
            }
            if defined {
                check_value(doc, &span, name, &[], code, report);
            }
        } else if looks_like_path(name) {
            let path = name.split_once(':').map_or(name, |(p, _)| p);
            check_path(doc, span.line, path, tree, report, "path");
        }
    }
    // Table rows that name several constants in their first cell and give as many values in
    // the next: "| policy (`MAX_PATTERN_CHARS`, `MAX_RULES`) | 128 characters / 1024 |".
    for (line, raw) in prose_lines(text) {
        if let Some((names, values)) = table_row_values(raw) {
            for ((qualifier, name), value) in names.iter().zip(&values) {
                if code.consts.contains_key(*name) {
                    check_stated(doc, line, name, qualifier, value, code, report);
                }
            }
        }
    }
    // Flags given to our binary, in prose and in code blocks alike.
    for (index, line) in text.lines().enumerate() {
        for flag in binary_flags(line) {
            report.flags += 1;
            if !code.string_words_with_dashes.contains(flag) {
                report.failures.push(format!(
                    "{doc}:{}: `{flag}` is given to agentteams-mcp but the code spells no such flag",
                    index + 1
                ));
            }
        }
    }
    // Markdown link targets, and paths written in plain text.
    for (line, raw) in prose_lines(text) {
        let mut at = 0;
        while let Some(found) = raw[at..].find("](") {
            let start = at + found + 2;
            let Some(len) = raw[start..].find(')') else {
                break;
            };
            let target = raw[start..start + len].split('#').next().unwrap_or("");
            at = start + len;
            if target.is_empty() || target.contains(':') || target.starts_with('/') {
                continue;
            }
            report.paths += 1;
            let doc_dir = Path::new(doc)
                .parent()
                .and_then(|p| p.to_str())
                .unwrap_or("");
            let full = if doc_dir.is_empty() {
                target.to_string()
            } else {
                format!("{doc_dir}/{target}")
            };
            match normalise(&full) {
                Some(full) if tree.exists(&full) || is_generated(&full) => {}
                _ => report.failures.push(format!(
                    "{doc}:{line}: link target `{target}` does not exist"
                )),
            }
        }
        if !raw.contains('/') {
            continue;
        }
        let stripped = strip_code(raw);
        // `*` is no boundary: `tests/http_*.rs` is a pattern, which `looks_like_path` refuses.
        let is_boundary = |c: char| c.is_whitespace() || "()[]|,;\"'<>".contains(c);
        let mut words = Vec::new();
        let mut at = 0;
        while let Some(found) = stripped[at..].find('/') {
            let slash = at + found;
            let start = stripped[..slash]
                .char_indices()
                .rev()
                .find(|(_, c)| is_boundary(*c))
                .map_or(0, |(i, c)| i + c.len_utf8());
            let end = stripped[slash..]
                .find(is_boundary)
                .map_or(stripped.len(), |e| slash + e);
            words.push(&stripped[start..end]);
            at = end.max(slash + 1);
        }
        for word in words {
            let word = word.trim_end_matches(['.', ':', '!', '?']);
            // Bold (`**src/x.rs**`) is markup; any other `*` makes a pattern, refused below.
            let word = word.strip_prefix("**").unwrap_or(word);
            let word = word.strip_suffix("**").unwrap_or(word);
            let first = word.split('/').next().unwrap_or("");
            if word.contains('/')
                && looks_like_path(word)
                && tree.root_entries().contains(first)
                && Path::new(first).extension().is_none()
            {
                check_path(doc, line, word, tree, report, "path");
            }
        }
    }
}

/// The `--flags` of each command in `line` that runs our binary (`agentteams-mcp ...`),
/// up to the end of that command (a shell operator, a comment, a closing quote or backtick, or
/// `--`, after which the arguments are another program's).
fn binary_flags(line: &str) -> Vec<&str> {
    let mut flags = Vec::new();
    let mut at = 0;
    while let Some(found) = line[at..].find("agentteams-mcp ") {
        let start = at + found;
        at = start + "agentteams-mcp ".len();
        // The word before the binary's (`target/release/agentteams-mcp` is the binary too): when
        // it is an option (`-p agentteams-mcp`, `--bin target/release/agentteams-mcp`), the
        // name is that option's value, not a command.
        let word_start = line[..start]
            .rfind(char::is_whitespace)
            .map_or(0, |w| w + 1);
        let previous = line[..word_start]
            .split_whitespace()
            .next_back()
            .unwrap_or("");
        if previous.starts_with('-') && previous != "--" {
            continue;
        }
        let end = line[at..]
            .find(|c: char| "`|;&#\"()<>".contains(c))
            .map_or(line.len(), |e| at + e);
        for token in line[at..end].split_whitespace() {
            if token == "--" {
                break;
            }
            let token = token.trim_matches(|c| c == '[' || c == ']' || c == ',' || c == '.');
            let flag = token.split('=').next().unwrap_or("");
            if flag.len() > 2
                && flag.starts_with("--")
                && flag[2..]
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                flags.push(flag);
            }
        }
    }
    flags
}

/// A line without its code spans and link targets (those are checked as such).
fn strip_code(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            let mut rest = part;
            while let Some(found) = rest.find("](") {
                out.push_str(&rest[..found]);
                rest = rest[found..].split_once(')').map_or("", |(_, r)| r);
            }
            out.push_str(rest);
            out.push(' ');
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Reading the repository.

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            // A module folder right under a `src` is code whatever its name (servers/src/corpus:
            // the index formats, not fuzzing input).
            let module = dir.file_name().is_some_and(|d| d == "src");
            if !name.starts_with('.') && (module || !SKIPPED_DIRS.contains(&name.as_str())) {
                walk(&entry.path(), out);
            }
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn the_documents_name_only_what_the_code_has() {
    let started = std::time::Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for top in ["src", "servers", "tests", "fuzz", "bench", "examples"] {
        walk(&root.join(top), &mut files);
    }
    let mut code = Code::default();
    let mut rust_files = 0;
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let rel = relative(&root, file);
        // This file's own examples and lists are not the code.
        if rel == "tests/docs_truth.rs" {
            continue;
        }
        let text = fs::read_to_string(file).unwrap_or_default();
        code.add_source(&rel, &text);
        rust_files += 1;
    }

    let mut docs: Vec<String> = vec![
        "README.md".into(),
        "ARCHITECTURE.md".into(),
        "SECURITY.md".into(),
        "fuzz/README.md".into(),
    ];
    let mut doc_files = Vec::new();
    walk(&root.join("docs"), &mut doc_files);
    walk(&root.join("bench"), &mut doc_files);
    for file in doc_files {
        let rel = relative(&root, &file);
        if (rel.starts_with("docs/") && rel.ends_with(".md") && !rel[5..].contains('/'))
            || (rel.starts_with("bench/") && rel.ends_with("/README.md"))
        {
            docs.push(rel);
        }
    }
    let entries = fs::read_dir(&root)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect();
    let tree = Disk {
        root: root.clone(),
        entries,
    };

    let mut report = Report::default();
    let mut read = 0;
    for doc in &docs {
        let Ok(text) = fs::read_to_string(root.join(doc)) else {
            continue;
        };
        read += 1;
        check_doc(doc, &text, &code, &tree, &mut report);
    }
    println!(
        "docs_truth: {read} documents against {rust_files} Rust files ({} fns, {} consts) in {:?}",
        code.fns.len(),
        code.consts.len(),
        started.elapsed()
    );

    println!(
        "docs_truth: {} test-shaped names, {} constant names, {} qualified names, {} stated values checked, {} skipped, {} paths, {} flags, {} test files",
        report.test_names,
        report.constants,
        report.qualified,
        report.values_checked,
        report.values_skipped.len(),
        report.paths,
        report.flags,
        report.test_files
    );
    for skipped in &report.values_skipped {
        println!("docs_truth: skipped value: {skipped}");
    }
    println!(
        "docs_truth: {} numbers right after a constant were not read as its value",
        report.values_unread.len()
    );
    for unread in &report.values_unread {
        println!("docs_truth: not read: {unread}");
    }
    // An allowlist entry no document needs any more is itself stale.
    for list in [
        FOREIGN_SNAKE,
        FOREIGN_UPPER,
        FOREIGN_ROOTS,
        FOREIGN_PATHS,
        FOREIGN_FILES,
    ] {
        for (name, _) in list {
            if !report.foreign_used.contains(name) {
                report.failures.push(format!(
                    "tests/docs_truth.rs: `{name}` is allowlisted but no document needs it"
                ));
            }
        }
    }
    assert!(
        read >= 3,
        "the documents were not found under {}",
        root.display()
    );
    assert!(
        report.failures.is_empty(),
        "{} statements in the documents are not true to the code:\n{}",
        report.failures.len(),
        report.failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The checker on small strings: each kind of staleness is found, and what is not a claim is not
// read as one.

struct FakeTree {
    entries: HashSet<String>,
    paths: HashSet<String>,
}

impl FakeTree {
    fn new(paths: &[&str]) -> FakeTree {
        let mut all = HashSet::new();
        for path in paths {
            // Every folder above a file exists too.
            let mut at = 0;
            while let Some(slash) = path[at..].find('/') {
                all.insert(path[..at + slash].to_string());
                at += slash + 1;
            }
            all.insert(path.to_string());
        }
        let entries = paths
            .iter()
            .map(|p| p.split('/').next().unwrap().to_string())
            .collect();
        FakeTree {
            entries,
            paths: all,
        }
    }
}

impl Tree for FakeTree {
    fn exists(&self, path: &str) -> bool {
        self.paths.contains(path.trim_end_matches('/'))
    }
    fn root_entries(&self) -> &HashSet<String> {
        &self.entries
    }
}

const SOURCE: &str = r#"
use std::time::Duration;
pub const MAX_THINGS_BYTES: usize = 256 * 1024 * 1024;
pub(crate) const MAX_LINE: usize = 1 << 20;
const DEEP: usize = 8;
pub const WAIT: Duration = Duration::from_millis(500);
pub const PERIOD: Duration = Duration::from_secs(5 * 60);
const WEIGHT: f64 = 0.85;
pub const ALL_THINGS: usize = 2 + super::DEEP;
pub const HUGE_THING: usize = u32::MAX as usize;
pub struct Limits {
    pub max_tree_bytes: usize,
}
impl Limits {
    pub fn parse_with_limits() {}
}
fn main() {
    std::env::var("AGENTTEAMS_HOME");
    args.value(&["--serve-mcp", "--root"]);
}
#[test]
fn planted_environments_are_read_within_one_budget() {}
"#;

fn run(doc: &str) -> Report {
    let mut code = Code::default();
    code.add_source("servers/src/recall/load.rs", SOURCE);
    let tree = FakeTree::new(&[
        "servers/src/recall/load.rs",
        "docs/recall.md",
        "README.md",
        "tests/http_framing.rs",
    ]);
    let mut report = Report::default();
    check_doc("docs/recall.md", doc, &code, &tree, &mut report);
    report
}

#[test]
fn a_present_test_name_passes_and_a_renamed_one_is_reported_with_its_line() {
    let report = run("Tested by `planted_environments_are_read_within_one_budget`.\n");
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.test_names, 1);

    let report =
        run("Intro.\n\nTested by\n`planted_environments_are_read_within_one_total_budget`.\n");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(
        report.failures[0].starts_with(
            "docs/recall.md:4: `planted_environments_are_read_within_one_total_budget` is no fn"
        ),
        "{:?}",
        report.failures
    );
}

#[test]
fn fields_strings_and_foreign_names_are_not_taken_for_stale_tests() {
    let doc = "`max_tree_bytes`, `is_index_stale`, `git_log` and `parse_with_limits()`.\n";
    assert_eq!(run(doc).failures, Vec::<String>::new());
}

#[test]
fn a_constant_that_is_gone_is_reported_and_other_programs_names_are_not() {
    let report =
        run("`MAX_THINGS_BYTES`, `MAX_GONE_BYTES`, `AGENTTEAMS_HOME`, `O_APPEND`, `HEAD`.\n");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(report.failures[0].contains("`MAX_GONE_BYTES` is defined as no const"));
}

#[test]
fn stated_values_are_compared_with_the_definitions() {
    let right = "\
- `MAX_THINGS_BYTES` (256 MiB), `MAX_LINE` = 1 MiB, `DEEP`, 8, and `WEIGHT` (0.85).
- `WAIT` (0.5 s), `PERIOD` (5 min) and `ALL_THINGS` (10: a sum of two).
- 1 MiB (`MAX_LINE`) and `MAX_THINGS_BYTES` (268,435,456 bytes).
- 8 nested levels (`DEEP`), by 0.85 (`WEIGHT`, tuned).

| limit | value |
|---|---|
| `DEEP` | 8 levels |
| lines (`servers::MAX_LINE`) | 1 MiB |
";
    let report = run(right);
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.values_checked, 13);

    let wrong = "\
`MAX_THINGS_BYTES` (128 MiB).
`DEEP`, 6, and
`WAIT` (5 s).
| lines (`servers::MAX_LINE`) | 64 KiB |
";
    let report = run(wrong);
    assert_eq!(report.values_checked, 4);
    assert_eq!(report.failures.len(), 4, "{:?}", report.failures);
    assert!(report.failures[0].starts_with(
        "docs/recall.md:1: `MAX_THINGS_BYTES` is said to be 128 MiB but is 256 * 1024 * 1024 = 268435456"
    ));
    assert!(report.failures[1].starts_with("docs/recall.md:2: `DEEP` is said to be 6 but"));
    assert!(report.failures[2].starts_with("docs/recall.md:3: `WAIT` is said to be 5 s but"));
    assert!(report.failures[3].starts_with("docs/recall.md:4: `MAX_LINE` is said to be 64 KiB"));
}

#[test]
fn numbers_that_are_not_the_constants_value_are_not_read_as_one() {
    let doc = "\
(`MAX_LINE`, 414); fields (`MAX_THINGS_BYTES`, 431); 3 to 8 (`DEEP`); 2 × 4 (`DEEP`).
`DEEP` (6 to 40: no gain), `DEEP` 16 (no answer moved), `WEIGHT` (0.5 / 0.9).
150% plus 4 MiB (`DEEP`, `WEIGHT`).
| 2026-07-28 state (`DEEP`, `WEIGHT`) | 64 KiB |
| refused (over `MAX_LINE`) | 118.2 |
";
    let report = run(doc);
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.values_checked, 0);
}

#[test]
fn a_value_that_cannot_be_evaluated_is_counted_as_skipped() {
    let report = run("`HUGE_THING` (4 GiB) and `WAIT` (500).\n");
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.values_checked, 0);
    assert_eq!(
        report.values_skipped.len(),
        2,
        "{:?}",
        report.values_skipped
    );
}

#[test]
fn a_missing_path_is_reported_in_spans_links_and_text() {
    let doc = "\
`servers/src/recall/load.rs`, `servers/src/recall/gone.rs`, [the page](recall.md),
[a lost page](lost.md), (servers/src/recall/moved.rs), `target/release/agentteams-mcp`,
`examples/termui/termui.py` and `not-ours/file.rs`; the tests/http_*.rs files, **tests/gone.rs**.
";
    let report = run(doc);
    assert_eq!(report.failures.len(), 4, "{:?}", report.failures);
    assert!(report.failures[0].contains("`servers/src/recall/gone.rs` does not exist"));
    assert!(report.failures[3].contains("`tests/gone.rs` does not exist"));
    assert!(report.failures[1].contains("link target `lost.md` does not exist"));
    assert!(report.failures[2].contains("`servers/src/recall/moved.rs` does not exist"));
}

#[test]
fn qualified_names_are_checked_by_their_last_part() {
    let doc = "`load::MAX_LINE`, `Limits::parse_with_limits`, `Limits::max_tree_bytes`, \
               `json::Limits`, `std::thread::scope`, `load::MAX_GONE`, `Limits::gone`.\n";
    let report = run(doc);
    assert_eq!(report.failures.len(), 2, "{:?}", report.failures);
    assert!(report.failures[0].contains("`load::MAX_GONE`: `MAX_GONE` is no const"));
    assert!(report.failures[1].contains("`Limits::gone`: `gone` is no fn"));
}

#[test]
fn flags_given_to_the_binary_must_be_the_codes() {
    let doc = "\
Run `agentteams-mcp --serve-mcp recall --root DIR --gone`.

```sh
agentteams-mcp --serve-mcp recall --lost 3   # a comment --not-read
cargo test -p agentteams-mcp --lib; python3 x.py --bin target/release/agentteams-mcp --cache D
```
";
    let report = run(doc);
    assert_eq!(report.flags, 5);
    assert_eq!(report.failures.len(), 2, "{:?}", report.failures);
    assert!(report.failures[0].starts_with("docs/recall.md:1: `--gone` is given"));
    assert!(report.failures[1].starts_with("docs/recall.md:4: `--lost` is given"));
}

#[test]
fn fenced_blocks_are_skipped_and_spans_may_cross_a_line_break() {
    let doc = "\
```rust
const X: usize = `MAX_GONE_BYTES`;
```
A span over a break: `MAX_THINGS_BYTES
` (256 MiB), and ``a `MAX_GONE` inside a longer span``.
";
    let report = run(doc);
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.values_checked, 1);
}

#[test]
fn every_failure_is_listed_at_once() {
    let doc = "`planted_environments_are_gone_now`, `MAX_GONE_BYTES`, `DEEP` (9) and \
               `servers/src/gone.rs`.\n";
    assert_eq!(run(doc).failures.len(), 4);
}

#[test]
fn a_test_said_to_be_in_another_file_is_reported() {
    let report =
        run("`planted_environments_are_read_within_one_budget` (servers/src/recall/load.rs).\n");
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.test_files, 1);
    let report =
        run("`planted_environments_are_read_within_one_budget` (in tests/http_framing.rs).\n");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(report.failures[0].contains(
        "is said to be in tests/http_framing.rs but is defined in servers/src/recall/load.rs"
    ));
}

#[test]
fn a_row_of_several_constants_is_read_value_by_value() {
    let right = "| limit | value |\n|---|---|\n\
                 | lines (`load::MAX_LINE`, `DEEP`, `WAIT`) | 1 MiB, 8 levels (deep) / 0.5 s |\n";
    let report = run(right);
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.values_checked, 3);
    let wrong = "| lines (`load::MAX_LINE`, `DEEP`) | 1 MiB; 7 levels |\n\
                 | other (`DEEP`, `WAIT`) | 8 levels or so, 0.5 s, and more |\n";
    let report = run(wrong);
    assert_eq!(report.values_checked, 2);
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert!(report.failures[0].starts_with("docs/recall.md:1: `DEEP` is said to be 7 but"));
}
