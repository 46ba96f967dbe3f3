//! The layering of the servers crate's index code: `recall` (the query side) and `index` (the
//! builder) both stand on `corpus` (the index formats), never on each other, and no two files of
//! the three import each other, directly or through others; nor do any two files of gitread's
//! tool table (`gitread/tools`, [`CYCLE_FREE`]).
//!
//! Read from the sources, not the compiler: every path a file names (`use` lines and paths in
//! code alike, test modules included) that starts with `crate::`, `super::` or `self::`, or, in a
//! folder's `mod.rs`, with one of its child modules, is resolved to the file of the longest module
//! prefix it names. Comments and string literals are skipped. A failure names the files and the
//! arrow or cycle, so the fix is one move of code to a lower file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The folders of `servers/src` checked, and the layer order: a file may import its own folder's
/// files and the folders listed after its own, never those before.
const LAYERS: [&str; 3] = ["recall", "index", "corpus"];

/// Folders outside the layers whose files must not import each other either, directly or through
/// others (a table row's leaf under the table, the shared argument rules beside it).
const CYCLE_FREE: [&str; 1] = ["gitread/tools"];

/// Folders of one layer that must not import each other (besides the order above).
const APART: [(&str, &str); 1] = [("recall", "index")];

/// A file's module path from its path under `src/`: `recall/mod.rs` → `recall`,
/// `index/passages/python.rs` → `index::passages::python`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// `text` with comments removed and the contents of string and character literals blanked,
/// newlines kept.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if b[i] == b'"' || (b[i] == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#'))) {
            let raw = b[i] == b'r';
            let mut j = i + usize::from(raw);
            let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
            j += hashes;
            if b.get(j) != Some(&b'"') || (raw && i > 0 && is_ident(b[i - 1])) {
                out.push(b[i] as char);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += if !raw && b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + close.len()).min(b.len());
            out.push_str("\"\"");
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            let rest = &text[i + 1..];
            let len = if rest.starts_with('\\') {
                // Past the escaped character, which may itself be a quote.
                rest.get(2..).and_then(|r| r.find('\'')).map(|e| e + 3)
            } else {
                rest.chars()
                    .next()
                    .filter(|c| rest[c.len_utf8()..].starts_with('\''))
                    .map(|c| c.len_utf8() + 1)
            };
            match len {
                Some(len) => {
                    out.push_str("' '");
                    i += 1 + len;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The tokens of code: identifiers, `::`, and single punctuation characters.
fn tokens(code: &str) -> Vec<&str> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_ident(b[i]) {
            let start = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            out.push(&code[start..i]);
        } else if b[i..].starts_with(b"::") {
            out.push("::");
            i += 2;
        } else if b[i].is_ascii_whitespace() || !b[i].is_ascii() {
            i += code[i..].chars().next().map_or(1, char::len_utf8);
        } else {
            out.push(&code[i..i + 1]);
            i += 1;
        }
    }
    out
}

/// Reads the path continuing at `tokens[*at]` (just past its first segment, already in
/// `prefix`): `::segment`s and `::{...}` groups. Pushes every full path it names onto `paths`
/// and leaves `*at` past it.
fn read_path(tokens: &[&str], at: &mut usize, prefix: Vec<String>, paths: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    while tokens.get(*at) == Some(&"::") {
        *at += 1;
        match tokens.get(*at) {
            Some(&"{") => {
                *at += 1;
                loop {
                    match tokens.get(*at) {
                        None => return,
                        Some(&"}") => {
                            *at += 1;
                            return;
                        }
                        Some(&",") => *at += 1,
                        Some(&"self") => {
                            paths.push(path.clone());
                            *at += 1;
                        }
                        Some(t) if t.as_bytes().iter().all(|&c| is_ident(c)) => {
                            let mut item = path.clone();
                            item.push((*t).to_owned());
                            *at += 1;
                            read_path(tokens, at, item, paths);
                        }
                        // `*`, `as name` and the like.
                        Some(_) => *at += 1,
                    }
                }
            }
            Some(t) if t.as_bytes().iter().all(|&c| is_ident(c)) => {
                path.push((*t).to_owned());
                *at += 1;
            }
            _ => break,
        }
    }
    paths.push(path);
}

/// The module paths `file` names, each as written relative to the crate root.
fn named_paths(file: &str, text: &str, modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let module = module_of(file);
    let is_folder = file.ends_with("mod.rs");
    let code = code_only(text);
    let tokens = tokens(&code);
    // Inline modules open at this point (`mod tests {`), with the brace depth they opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut paths = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let token = tokens[at];
        let after_path = at > 0 && tokens[at - 1] == "::";
        match token {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(at + 2) == Some(&"{") => {
                inline.push((tokens[at + 1].to_owned(), depth));
                depth += 1;
                at += 3;
                continue;
            }
            "crate" | "super" | "self" if !after_path && tokens.get(at + 1) == Some(&"::") => {
                let mut base: Vec<String> = match token {
                    "crate" => Vec::new(),
                    _ => module
                        .iter()
                        .cloned()
                        .chain(inline.iter().map(|(n, _)| n.clone()))
                        .collect(),
                };
                if token == "super" {
                    base.pop();
                }
                at += 1;
                while tokens.get(at) == Some(&"::") && tokens.get(at + 1) == Some(&"super") {
                    base.pop();
                    at += 2;
                }
                read_path(&tokens, &mut at, base, &mut paths);
                continue;
            }
            name if is_folder && !after_path && tokens.get(at + 1) == Some(&"::") => {
                let mut child = module.clone();
                child.push(name.to_owned());
                if modules.contains(&child) {
                    at += 1;
                    read_path(&tokens, &mut at, child, &mut paths);
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    paths
}

/// File → the files it imports, among `files` (path under `src/` → text).
fn imports(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let by_module: BTreeMap<Vec<String>, String> =
        files.keys().map(|f| (module_of(f), f.clone())).collect();
    let modules: BTreeSet<Vec<String>> = by_module.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (file, text) in files {
        let mut targets = BTreeSet::new();
        for path in named_paths(file, text, &modules) {
            let found = (1..=path.len())
                .rev()
                .find_map(|n| by_module.get(&path[..n]));
            if let Some(target) = found.filter(|t| *t != file) {
                targets.insert(target.clone());
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

/// Every rule broken, one line each: an arrow against the layer order, and each cycle.
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let graph = imports(files);
    let layer = |file: &str| {
        let folder = file.split('/').next().unwrap_or("");
        (LAYERS.iter().position(|l| *l == folder), folder.to_owned())
    };
    let mut found = Vec::new();
    for (file, targets) in &graph {
        let (from, from_folder) = layer(file);
        for target in targets {
            let (to, to_folder) = layer(target);
            let apart = APART.iter().any(|&(a, b)| {
                (a, b) == (from_folder.as_str(), to_folder.as_str())
                    || (b, a) == (from_folder.as_str(), to_folder.as_str())
            });
            if from.is_some() && to.is_some() && (to < from || apart) {
                found.push(format!(
                    "{file} imports {target}: {from_folder} may not import {to_folder} (layers, top down: {LAYERS:?}; apart: {APART:?})"
                ));
            }
        }
    }
    // Cycles: a depth-first walk; a target still on the walk's path closes one.
    let mut done: BTreeSet<&str> = BTreeSet::new();
    for start in graph.keys() {
        let mut path: Vec<&str> = Vec::new();
        cycle_walk(start, &graph, &mut path, &mut done, &mut found);
    }
    found
}

fn cycle_walk<'g>(
    file: &'g str,
    graph: &'g BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<&'g str>,
    done: &mut BTreeSet<&'g str>,
    found: &mut Vec<String>,
) {
    if done.contains(file) {
        return;
    }
    if let Some(at) = path.iter().position(|f| *f == file) {
        let mut cycle = path[at..].to_vec();
        cycle.push(file);
        found.push(format!("import cycle: {}", cycle.join(" -> ")));
        return;
    }
    path.push(file);
    for target in graph.get(file).into_iter().flatten() {
        cycle_walk(target, graph, path, done, found);
    }
    path.pop();
    done.insert(file);
}

/// Every `.rs` file under `dir`, by its path relative to `src`.
fn read_tree(src: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_tree(src, &path, files);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let rel = path.strip_prefix(src).expect("under src");
            files.insert(rel.to_string_lossy().into_owned(), text);
        }
    }
}

fn planted(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
        .collect()
}

#[test]
fn recall_index_corpus_and_the_gitread_table_import_one_way_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for folder in LAYERS.iter().chain(&CYCLE_FREE) {
        read_tree(&src, &src.join(folder), &mut files);
    }
    assert!(files.len() > 30, "read only {} files", files.len());
    let found = violations(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_sources_are_read_as_the_compiler_resolves_them() {
    let files = planted(&[
        (
            "recall/mod.rs",
            concat!(
                "mod load;\n",
                "use load::Loader;\n",
                "fn f() { let s = \"crate::index::x\"; }\n",
            ),
        ),
        (
            "recall/load.rs",
            "// use crate::index::mod;\nuse super::words::stem;\n",
        ),
        (
            "recall/words.rs",
            concat!(
                "pub fn stem() {}\n",
                "#[cfg(test)]\n",
                "mod tests {\n",
                "    use super::*;\n",
                "    fn f() { let c = ('{', '\\'', '\\u{7b}', \"}\", r#\"{\"#); }\n",
                "    use super::super::load::X;\n",
                "}\n",
                "use super::rank::Hit;\n",
            ),
        ),
        ("recall/rank.rs", ""),
        (
            "corpus/text.rs",
            "use crate::corpus::{tokenize, sidecars::NAME};\n",
        ),
        ("corpus/tokenize.rs", ""),
        ("corpus/sidecars.rs", ""),
        ("index/mod.rs", "fn h() { crate::corpus::text::cut(); }\n"),
    ]);
    let graph = imports(&files);
    let of = |f: &str| graph[f].iter().map(String::as_str).collect::<Vec<_>>();
    // A child module named bare in its folder's mod.rs; nothing in strings or comments.
    assert_eq!(of("recall/mod.rs"), ["recall/load.rs"]);
    assert_eq!(of("recall/load.rs"), ["recall/words.rs"]);
    // A test module's `super` is the file itself, `super::super` its folder; braces in
    // character and string literals do not end the module early or late.
    assert_eq!(of("recall/words.rs"), ["recall/load.rs", "recall/rank.rs"]);
    assert_eq!(
        of("corpus/text.rs"),
        ["corpus/sidecars.rs", "corpus/tokenize.rs"]
    );
    assert_eq!(of("index/mod.rs"), ["corpus/text.rs"]);
}

#[test]
fn a_planted_cycle_or_arrow_against_the_layers_fails() {
    let cycle = planted(&[
        ("recall/outline.rs", "use super::relevance::QueryWords;\n"),
        ("recall/relevance.rs", "use super::thesaurus;\n"),
        (
            "recall/thesaurus.rs",
            "use crate::recall::outline::Outline;\n",
        ),
    ]);
    let found = violations(&cycle);
    assert_eq!(
        found,
        ["import cycle: recall/outline.rs -> recall/relevance.rs -> recall/thesaurus.rs -> recall/outline.rs"]
    );
    let arrows = planted(&[
        ("corpus/text.rs", "use crate::recall::rank::cut_chars;\n"),
        ("recall/rank.rs", "fn f() { crate::index::test_rng(1); }\n"),
        ("index/mod.rs", "pub fn test_rng() {}\n"),
        ("index/memory.rs", "use crate::recall::rank::Hit;\n"),
    ]);
    let found = violations(&arrows);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with("corpus/text.rs imports recall/rank.rs"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("index/memory.rs imports recall/rank.rs"),
        "{found:#?}"
    );
    assert!(
        found[2].starts_with("recall/rank.rs imports index/mod.rs"),
        "{found:#?}"
    );
    // Downward arrows and a file's own test module pass.
    let fine = planted(&[
        (
            "recall/rank.rs",
            "use crate::corpus::text::cut_chars;\nmod tests { use super::*; }\n",
        ),
        ("corpus/text.rs", ""),
    ]);
    assert!(violations(&fine).is_empty());
}
