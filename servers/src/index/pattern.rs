//! Python's filename patterns as the reference's builder applies them: `fnmatch.fnmatchcase` on a
//! whole string and Python 3.11's `pathlib.Path.glob` over a directory tree, built from it.
//!
//! fnmatch: `*` matches any run of characters (`/` included), `?` any one character, `[...]` one
//! character of a set (`[!...]` negates, `a-z` ranges, a `]` first in the set is a member, an
//! inverted range matches nothing), a `[` with no closing `]` is a literal; nothing else is special
//! (no escape character). Case-sensitive, as POSIX Python.
//!
//! glob: the pattern is split on `/` (empty and `.` parts dropped, `..` kept as a literal step). A
//! part with no `*`, `?` or `[` names one child; a wildcard part is fnmatch against each entry of
//! the directory, following symlinked directories when more parts follow; `**` is the directory
//! itself and every directory under it, **not** descending into symlinked directories (3.11's
//! `is_dir(follow_symlinks=False)`), so a symlink loop cannot make the walk endless. A trailing `/`
//! keeps directories only. The walk examines at most [`MAX_GLOB_ENTRIES`] directory entries, which
//! bounds patterns like `*/*/*/*` through a symlink cycle.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Most directory entries one glob examines before it gives up with [`GlobError::TooManyEntries`].
pub const MAX_GLOB_ENTRIES: usize = 2_000_000;

/// Whether `text` contains a pattern character (`*`, `?` or `[`), as the reference tests entries.
pub fn has_magic(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Literal(char),
    AnyOne,
    AnyRun,
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// A compiled fnmatch pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct FnPattern {
    tokens: Vec<Token>,
    /// Bit i set where token i is `*`.
    star: Vec<u64>,
    /// For each ASCII character, the tokens other than `*` it matches (bit i + 1 for token i),
    /// one row of `star.len()` words a character; shared, as the glob walk clones the pattern.
    ascii: std::sync::Arc<[u64]>,
}

impl FnPattern {
    /// Compiles `pattern` the way `fnmatch.translate` reads it; every string is a valid pattern.
    pub fn new(pattern: &str) -> FnPattern {
        let chars: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            match c {
                '*' => {
                    if tokens.last() != Some(&Token::AnyRun) {
                        tokens.push(Token::AnyRun);
                    }
                }
                '?' => tokens.push(Token::AnyOne),
                '[' => match parse_set(&chars, i) {
                    Some((token, next)) => {
                        tokens.push(token);
                        i = next;
                    }
                    None => tokens.push(Token::Literal('[')),
                },
                other => tokens.push(Token::Literal(other)),
            }
        }
        let words = tokens.len() / 64 + 1;
        let mut star = vec![0u64; words];
        for (i, token) in tokens.iter().enumerate() {
            if *token == Token::AnyRun {
                set_bit(&mut star, i);
            }
        }
        let ascii = (0..128u8)
            .flat_map(|b| steps_of(&tokens, char::from(b)))
            .collect();
        FnPattern {
            tokens,
            star,
            ascii,
        }
    }

    /// Whether the whole of `text` matches. The tokens matched so far are followed as a set of
    /// bits, one step per character (a word op per 64 tokens): a backtrack to the last `*` at each
    /// mismatch cost pattern length times text length, which 100 excludes of 400 characters made
    /// 20 ms per path of 1,250 characters (41 s for 2,000 memory files; now 3.2 s).
    pub fn matches(&self, text: &str) -> bool {
        let n = self.tokens.len();
        let words = self.star.len();
        // A `*` may match nothing: past it too (stars are never adjacent, so one step is all).
        let close = |bits: &mut [u64]| {
            let mut carry = 0;
            for (w, star) in bits.iter_mut().zip(&self.star) {
                let at_star = *w & star;
                *w |= (at_star << 1) | carry;
                carry = at_star >> 63;
            }
        };
        // Bit i: the first i tokens match what is read so far.
        let mut state = vec![0u64; words];
        set_bit(&mut state, 0);
        close(&mut state);
        let mut next = vec![0u64; words];
        let mut other;
        for c in text.chars() {
            let step = match self.ascii.get(c as usize * words..(c as usize + 1) * words) {
                Some(step) => step,
                None => {
                    other = steps_of(&self.tokens, c);
                    &other
                }
            };
            let mut carry = 0;
            for w in 0..words {
                next[w] = (((state[w] << 1) | carry) & step[w]) | (state[w] & self.star[w]);
                carry = state[w] >> 63;
            }
            close(&mut next);
            if next.iter().all(|w| *w == 0) {
                return false;
            }
            std::mem::swap(&mut state, &mut next);
        }
        state[n / 64] >> (n % 64) & 1 == 1
    }
}

fn set_bit(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

/// The tokens other than `*` that `c` matches, as bit i + 1 for token i.
fn steps_of(tokens: &[Token], c: char) -> Vec<u64> {
    let mut step = vec![0u64; tokens.len() / 64 + 1];
    for (i, token) in tokens.iter().enumerate() {
        if *token != Token::AnyRun && token_matches(token, c) {
            set_bit(&mut step, i + 1);
        }
    }
    step
}

/// Python's `fnmatch.fnmatchcase(text, pattern)`.
pub fn fnmatch(pattern: &str, text: &str) -> bool {
    FnPattern::new(pattern).matches(text)
}

fn token_matches(token: &Token, c: char) -> bool {
    match token {
        Token::Literal(l) => *l == c,
        Token::AnyOne => true,
        Token::AnyRun => true,
        Token::Set { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
        }
    }
}

/// Parses a set whose `[` is just before `start`; `None` when there is no closing `]` (then the
/// `[` is a literal). Returns the token and the index after the `]`.
fn parse_set(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut j = start;
    let negated = chars.get(j) == Some(&'!');
    if negated {
        j += 1;
    }
    let members_start = j;
    if chars.get(j) == Some(&']') {
        j += 1;
    }
    while j < chars.len() && chars[j] != ']' {
        j += 1;
    }
    if j >= chars.len() {
        return None;
    }
    let members = &chars[members_start..j];
    let mut ranges = Vec::new();
    let mut k = 0;
    while k < members.len() {
        // `a-b` is a range when a character follows the `-`; a trailing `-` is a member.
        if k + 2 < members.len() && members[k + 1] == '-' {
            ranges.push((members[k], members[k + 2]));
            k += 3;
        } else {
            ranges.push((members[k], members[k]));
            k += 1;
        }
    }
    Some((Token::Set { negated, ranges }, j + 1))
}

/// Why a glob produced no list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlobError {
    /// A part contains `**` next to other characters (Python raises `ValueError`).
    PartialRecursive(String),
    /// The walk examined more than [`MAX_GLOB_ENTRIES`] entries.
    TooManyEntries,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobError::PartialRecursive(part) => write!(
                f,
                "`**` can only be an entire path component (found {part:?})"
            ),
            GlobError::TooManyEntries => write!(
                f,
                "the pattern examines more than {MAX_GLOB_ENTRIES} directory entries"
            ),
        }
    }
}

enum Part {
    Exact(String),
    Wildcard(FnPattern),
    Recursive,
}

/// Python's `base.glob(pattern)` for a relative `pattern`: every existing path (of any kind)
/// matching it, in no particular order (callers sort). Paths are `base` joined with the matched
/// names, not resolved.
pub fn glob(base: &Path, pattern: &str) -> Result<Vec<PathBuf>, GlobError> {
    glob_within(base, pattern, MAX_GLOB_ENTRIES)
}

/// [`glob`] examining at most `max_entries` directory entries.
fn glob_within(base: &Path, pattern: &str, max_entries: usize) -> Result<Vec<PathBuf>, GlobError> {
    let mut parts = Vec::new();
    for part in pattern.split('/').filter(|p| !p.is_empty() && *p != ".") {
        parts.push(if part == "**" {
            Part::Recursive
        } else if part.contains("**") {
            return Err(GlobError::PartialRecursive(part.to_owned()));
        } else if has_magic(part) {
            Part::Wildcard(FnPattern::new(part))
        } else {
            Part::Exact(part.to_owned())
        });
    }
    let mut walk = Walk {
        dirs_only_at_end: pattern.ends_with('/'),
        parts,
        examined: 0,
        max_entries,
        found: Vec::new(),
    };
    if base.is_dir() {
        walk.select(base.to_path_buf(), 0)?;
    }
    Ok(walk.found)
}

struct Walk {
    parts: Vec<Part>,
    dirs_only_at_end: bool,
    examined: usize,
    max_entries: usize,
    found: Vec<PathBuf>,
}

impl Walk {
    /// Applies `parts[index..]` to `dir`, which exists (and is a directory when parts remain).
    fn select(&mut self, dir: PathBuf, index: usize) -> Result<(), GlobError> {
        let Some(part) = self.parts.get(index) else {
            if !self.dirs_only_at_end || dir.is_dir() {
                self.found.push(dir);
            }
            return Ok(());
        };
        let last = index + 1 == self.parts.len() && !self.dirs_only_at_end;
        match part {
            Part::Exact(name) => {
                let child = dir.join(name);
                let present = if last {
                    fs::metadata(&child).is_ok()
                } else {
                    child.is_dir()
                };
                if present {
                    self.select(child, index + 1)?;
                }
            }
            Part::Wildcard(pattern) => {
                let pattern = pattern.clone();
                for (name, path) in self.entries(&dir)? {
                    if (last || path.is_dir()) && pattern.matches(&name) {
                        self.select(path, index + 1)?;
                    }
                }
            }
            Part::Recursive => {
                let mut starts = vec![dir];
                let mut pending = starts.clone();
                while let Some(current) = pending.pop() {
                    for (_, path) in self.entries(&current)? {
                        let real_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
                        if real_dir {
                            starts.push(path.clone());
                            pending.push(path);
                        }
                    }
                }
                let before = self.found.len();
                for start in starts {
                    self.select(start, index + 1)?;
                }
                // One `**` yields each path once, as the reference's `yielded` set does.
                let mut seen = HashSet::new();
                let mut kept = self.found.split_off(before);
                kept.retain(|p| seen.insert(p.clone()));
                self.found.extend(kept);
            }
        }
        Ok(())
    }

    /// The entries of `dir` as (name, path), counted against [`MAX_GLOB_ENTRIES`]; an unreadable
    /// directory has none. Names that are not UTF-8 are matched in their lossy form.
    fn entries(&mut self, dir: &Path) -> Result<Vec<(String, PathBuf)>, GlobError> {
        let Ok(read) = fs::read_dir(dir) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for entry in read.flatten() {
            self.examined += 1;
            if self.examined > self.max_entries {
                return Err(GlobError::TooManyEntries);
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            out.push((name, entry.path()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::TempDir;

    #[test]
    fn fnmatch_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("*.md", "a.md", true),
            ("*.md", "docs/deep/a.md", true), // `*` crosses `/`
            ("*.md", ".md", true),
            ("*.md", "a.mdx", false),
            ("docs/*", "docs/a/b.md", true),
            ("docs/*", "docsx/a", false),
            ("?", "a", true),
            ("?", "/", true),
            ("?", "", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("[ab]x", "bx", true),
            ("[ab]x", "cx", false),
            ("[!ab]x", "cx", true),
            ("[!ab]x", "ax", false),
            ("[!x]", "/", true),
            ("[a-c]", "b", true),
            ("[a-c]", "d", false),
            ("[c-a]", "b", false), // an inverted range matches nothing
            ("[!c-a]", "b", true),
            ("[]]", "]", true),
            ("[]a]", "a", true),
            ("[!]]", "]", false),
            ("[!]]", "x", true),
            ("[a-]", "-", true),
            ("[a-]", "b", false),
            ("[^a]", "^", true), // `^` is no negation in fnmatch
            ("[^a]", "b", false),
            ("[", "[", true),
            ("a[b", "a[b", true),
            ("[!]", "[!]", true),
            ("\\*", "\\abc", true), // no escape character
            ("**", "", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            (
                "*a*a*a*a*a*b",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                false,
            ),
            ("é*", "été", true),
            ("A*", "a", false), // case-sensitive
        ];
        for &(pattern, text, expected) in cases {
            assert_eq!(fnmatch(pattern, text), expected, "{pattern:?} vs {text:?}");
        }
    }

    /// The matcher before the bit sets: greedy, backtracking to the last `*`.
    fn backtracking(pattern: &FnPattern, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let tokens = &pattern.tokens;
        let (mut t, mut p) = (0, 0);
        let mut retry: Option<(usize, usize)> = None;
        while t < text.len() {
            match tokens.get(p) {
                Some(Token::AnyRun) => {
                    retry = Some((p + 1, t));
                    p += 1;
                    continue;
                }
                Some(token) if token_matches(token, text[t]) => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
            match retry {
                Some((after_star, start)) => {
                    p = after_star;
                    t = start + 1;
                    retry = Some((after_star, start + 1));
                }
                None => return false,
            }
        }
        tokens[p..].iter().all(|t| *t == Token::AnyRun)
    }

    #[test]
    fn matching_agrees_with_backtracking_on_random_patterns() {
        let mut next = crate::scratch::test_rng(0x2545_F491_4F6C_DD1D);
        let pieces = [
            "a", "b", "/", "*", "?", "[ab]", "[!a]", "[a-b]", "[", "]", "é", "**",
        ];
        let letters = ['a', 'b', '/', 'é', '[', ']', 'c'];
        for _ in 0..20_000 {
            let pattern: String = (0..next() % 80)
                .map(|_| pieces[next() % pieces.len()])
                .collect();
            let text: String = (0..next() % 150)
                .map(|_| letters[next() % letters.len()])
                .collect();
            let compiled = FnPattern::new(&pattern);
            assert_eq!(
                compiled.matches(&text),
                backtracking(&compiled, &text),
                "{pattern:?} vs {text:?}"
            );
        }
        // Patterns that match: each text made from its pattern.
        for _ in 0..5_000 {
            let pattern: String = (0..next() % 200)
                .map(|_| pieces[next() % pieces.len()])
                .collect();
            let compiled = FnPattern::new(&pattern);
            let text: String = compiled
                .tokens
                .iter()
                .map(|t| match t {
                    Token::Literal(c) => c.to_string(),
                    Token::AnyOne => "x".into(),
                    Token::AnyRun => "ab".repeat(next() % 3),
                    Token::Set {
                        negated: false,
                        ranges,
                    } => ranges.first().map_or(String::new(), |r| r.0.to_string()),
                    Token::Set { negated: true, .. } => "\u{1F600}".into(),
                })
                .collect();
            assert_eq!(
                compiled.matches(&text),
                backtracking(&compiled, &text),
                "{pattern:?} vs {text:?}"
            );
        }
    }

    /// The input that made backtracking cost pattern length times path length (1.6 x 10^9 steps
    /// for 1,000 matches of 400 x 4,096). `matches` reads each character once (a step of 7 words
    /// here), so its cost is linear by construction; its speed is a benchmark's to measure, not
    /// a test's (a wall-clock bound here failed on loaded machines).
    #[test]
    fn a_long_pattern_against_a_long_path_is_answered_in_one_pass() {
        let pattern = FnPattern::new(&format!("*{}b", "a".repeat(398)));
        let path = "a".repeat(4096);
        assert!(!pattern.matches(&path));
        assert!(pattern.matches(&format!("{path}b")));
        assert!(!pattern.matches(&format!("{}b", "a".repeat(397))));
        assert!(pattern.matches(&format!("x{}b", "a".repeat(398))));
    }

    #[test]
    fn magic_characters() {
        assert!(has_magic("docs/*.md"));
        assert!(has_magic("a?"));
        assert!(has_magic("x[1]"));
        assert!(!has_magic("docs/notes"));
    }

    struct Tree(TempDir);

    impl Tree {
        fn new(tag: &str) -> Tree {
            Tree(TempDir::new(&format!("pattern-{tag}")))
        }
        fn file(&self, rel: &str) {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        fn glob(&self, pattern: &str) -> Vec<String> {
            let mut out: Vec<String> = glob(&self.0, pattern)
                .unwrap()
                .into_iter()
                .map(|p| {
                    p.strip_prefix(&self.0)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            out.sort();
            out
        }
    }

    #[test]
    fn glob_table() {
        let tree = Tree::new("table");
        for rel in [
            "a.md",
            "b.txt",
            ".hidden.md",
            "docs/x.md",
            "docs/y.rst",
            "docs/deep/z.md",
            "docs/deep/deeper/w.md",
            "notes/n1.md",
            "notes/n2.md",
        ] {
            tree.file(rel);
        }
        let cases: &[(&str, &[&str])] = &[
            ("*.md", &[".hidden.md", "a.md"]),
            ("docs/*.md", &["docs/x.md"]),
            ("./docs//*.md", &["docs/x.md"]),
            (
                "**/*.md",
                &[
                    ".hidden.md",
                    "a.md",
                    "docs/deep/deeper/w.md",
                    "docs/deep/z.md",
                    "docs/x.md",
                    "notes/n1.md",
                    "notes/n2.md",
                ],
            ),
            (
                "docs/**/*.md",
                &["docs/deep/deeper/w.md", "docs/deep/z.md", "docs/x.md"],
            ),
            ("**/deep", &["docs/deep"]),
            ("notes/n[!1].md", &["notes/n2.md"]),
            ("notes/n[0-9].md", &["notes/n1.md", "notes/n2.md"]),
            ("n?tes/*", &["notes/n1.md", "notes/n2.md"]),
            ("*/", &["docs", "notes"]),
            ("*/*/", &["docs/deep"]),
            ("missing/*.md", &[]),
            ("a.md/*", &[]),
            ("**/**/w.md", &["docs/deep/deeper/w.md"]),
        ];
        for &(pattern, expected) in cases {
            assert_eq!(tree.glob(pattern), expected, "pattern {pattern:?}");
        }
        assert_eq!(
            glob(&tree.0, "docs/a**/x"),
            Err(GlobError::PartialRecursive("a**".into()))
        );
    }

    #[test]
    fn glob_and_symlinked_directories() {
        use std::os::unix::fs::symlink;
        let tree = Tree::new("links");
        tree.file("real/r.md");
        symlink(tree.0.join("real"), tree.0.join("link")).unwrap();
        // A cycle: loop/self -> loop.
        fs::create_dir_all(tree.0.join("loop")).unwrap();
        symlink(tree.0.join("loop"), tree.0.join("loop/self")).unwrap();
        // `**` does not descend into symlinked directories...
        assert_eq!(tree.glob("**/*.md"), ["real/r.md"]);
        // ...but a named or wildcard step goes through them.
        assert_eq!(tree.glob("link/*.md"), ["link/r.md"]);
        assert_eq!(tree.glob("l*/*.md"), ["link/r.md"]);
        assert_eq!(tree.glob("loop/*/*/self"), ["loop/self/self/self"]);
        // Through the cycle every wildcard step goes round again: the entry budget ends it.
        symlink(tree.0.join("loop"), tree.0.join("loop/again")).unwrap();
        let endless = format!("loop{}", "/*".repeat(60));
        assert_eq!(
            glob_within(&tree.0, &endless, 10_000),
            Err(GlobError::TooManyEntries)
        );
    }

    #[test]
    fn the_entry_budget_at_its_edge() {
        let tree = Tree::new("budget");
        for rel in ["a", "b", "c"] {
            tree.file(rel);
        }
        assert_eq!(glob_within(&tree.0, "*", 3).unwrap().len(), 3);
        assert_eq!(glob_within(&tree.0, "*", 2), Err(GlobError::TooManyEntries));
    }
}
