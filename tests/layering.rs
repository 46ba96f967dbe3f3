//! The layering of both crates, read from their sources: no file imports from a file that
//! imports it, directly or through others, in `src/` (the library) or `servers/src/` (the
//! servers); every folder has its place in the declared order ([`LIBRARY`], [`SERVERS`]); and a
//! file imports only its own folder and the folders below its own, never those above it.
//!
//! Read from the sources, not the compiler: every path a file names (`use` lines and paths in
//! code alike, test modules included) that starts with `crate::`, `super::` or `self::`, or, in a
//! module with children (`mod.rs`, `lib.rs`, `x.rs` beside `x/`), with one of its child modules,
//! is resolved to the file of the longest module prefix it names (`crate::ITEM` of an item in the
//! crate root: `lib.rs`). Comments and string literals are skipped. A re-export in a folder's
//! `mod.rs` (`pub use child::X`) is an arrow from it to the child, so a child that uses its
//! folder's items through `super::` closes a cycle: shared items live in a leaf both import. A
//! failure names the files and the arrow or cycle, so the fix is one move of code to a lower
//! file. `servers/src/main.rs` is a crate of its own (the binary) and is not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Which folders (first path segments under `src/`) stand above which.
struct Rules {
    /// Bottom up: a file may import its own folder and the folders listed before its own, never
    /// those after. Every folder (and file beside `lib.rs`) of the crate has its place.
    order: &'static [&'static str],
    /// Folders that must not import each other at all (besides the order).
    apart: &'static [(&'static str, &'static str)],
}

/// The library's layers, bottom up: the leaves, the message checks, then `governance` (the
/// decision) under `audit` (whose records and verifier name its bases and modes), the engine
/// (`server`), `bind` (which builds a governed, audited engine for a workspace), the stdio
/// transport, `http1` (the HTTP/1.1 codec, no I/O), the `client` over it, `auth` (the resource
/// server, which fetches keys and introspects through the client's one-shot exchange), and the
/// HTTP transport (`http`), which consults `auth`. Every folder and file of the library is placed.
const LIBRARY: Rules = Rules {
    order: &[
        "json",
        "base64",
        "random",
        "time",
        "voice",
        "regular_file",
        "file_identity",
        "process_group",
        "project_file",
        "confined_write",
        "declared",
        "sanitize",
        "jsonrpc",
        "schema",
        "policy",
        "crypto",
        "governance",
        "audit",
        "server",
        "bind",
        "stdio",
        "http1",
        "client",
        "auth",
        "http",
    ],
    apart: &[],
};

/// The servers' layers, bottom up: the shared leaves (`compat`, `regular_file`, `scratch`,
/// `size`), then
/// `corpus` (the index formats), `gitread`, and above them `index` (the builder) and `recall` (the
/// query side), which never import each other; then `catalogue` (builds a server by name from
/// explicit settings) and the commands over it, the argument reader and start-up checks first.
const SERVERS: Rules = Rules {
    order: &[
        "compat",
        "regular_file",
        "scratch",
        "size",
        "corpus",
        "gitread",
        "index",
        "recall",
        "catalogue",
        "cli",
        "startup",
        "index_cmd",
        "client_cmd",
        "approval_cmd",
        "command",
    ],
    apart: &[("recall", "index")],
};

/// A file's module path from its path under `src/`: `lib.rs` → the crate root, `recall/mod.rs` →
/// `recall`, `index/passages/python.rs` → `index::passages::python`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] {
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
    // A module with children (`lib.rs`, `x/mod.rs`, or `x.rs` beside a folder `x/`) may name
    // them bare.
    let is_folder = modules
        .iter()
        .any(|m| m.len() == module.len() + 1 && m.starts_with(&module));
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
            // Down to the empty prefix: `crate::ITEM` names an item of the crate root's file.
            let found = (0..=path.len())
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

/// A file's folder for the layer order: the first segment of its path (`crypto/der.rs` →
/// `crypto`, `random.rs` → `random`); `None` for the crate root, which declares every module and
/// stands above them all.
fn folder_of(file: &str) -> Option<&str> {
    let first = file.split('/').next().unwrap_or("");
    (first != "lib.rs").then(|| first.trim_end_matches(".rs"))
}

/// Every rule broken, one line each: an arrow against `rules`, and each import cycle.
fn violations(files: &BTreeMap<String, String>, rules: &Rules) -> Vec<String> {
    let graph = imports(files);
    let rank = |file: &str| folder_of(file).and_then(|f| rules.order.iter().position(|l| *l == f));
    let mut found: Vec<String> = files
        .keys()
        .filter_map(|file| {
            folder_of(file)
                .filter(|f| !rules.order.contains(f))
                .map(|f| (file, f))
        })
        .map(|(file, folder)| {
            format!(
                "{file}: {folder} is in no layer; give it its place in the order ({:?})",
                rules.order
            )
        })
        .collect();
    for (file, targets) in &graph {
        for target in targets {
            let (from, to) = (folder_of(file), folder_of(target));
            if from == to {
                continue;
            }
            let apart = rules
                .apart
                .iter()
                .any(|&(a, b)| [(Some(a), Some(b)), (Some(b), Some(a))].contains(&(from, to)));
            let downward = match (rank(file), rank(target)) {
                (Some(a), Some(b)) => b < a,
                _ => true,
            };
            if apart || !downward {
                found.push(format!(
                    "{file} imports {target}: {} may not import {} (layers, bottom up: {:?}; apart: {:?})",
                    from.unwrap_or(""),
                    to.unwrap_or(""),
                    rules.order,
                    rules.apart
                ));
            }
        }
    }
    for cycle in cycles(&graph) {
        found.push(format!("import cycle: {}", cycle.join(" -> ")));
    }
    found
}

/// Import cycles, each as the files on it, the first again at the end: a depth-first walk in
/// which a target still on the walk's path closes one (so at least one cycle through every
/// strongly connected group of files).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut found = Vec::new();
    for start in graph.keys() {
        let mut path: Vec<&str> = Vec::new();
        cycle_walk(start, graph, &mut path, &mut done, &mut found);
    }
    found
}

fn cycle_walk<'g>(
    file: &'g str,
    graph: &'g BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<&'g str>,
    done: &mut BTreeSet<&'g str>,
    found: &mut Vec<Vec<String>>,
) {
    if done.contains(file) {
        return;
    }
    if let Some(at) = path.iter().position(|f| *f == file) {
        let mut cycle: Vec<String> = path[at..].iter().map(|f| (*f).to_owned()).collect();
        cycle.push(file.to_owned());
        found.push(cycle);
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

/// The `.rs` files of a crate's `src` (under the workspace root), by path under it, without the
/// binary's `main.rs`.
fn crate_files(src: &str) -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
    let mut files = BTreeMap::new();
    read_tree(&src, &src, &mut files);
    files.remove("main.rs");
    files
}

/// Every rule `krate` breaks.
fn checked(krate: &str, rules: &Rules) -> Vec<String> {
    let files = crate_files(krate);
    assert!(
        files.len() > 50,
        "read only {} files of {krate}",
        files.len()
    );
    violations(&files, rules)
}

#[test]
fn the_library_imports_one_way_without_cycles() {
    let found = checked("src", &LIBRARY);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_servers_import_one_way_without_cycles() {
    let found = checked("servers/src", &SERVERS);
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
        // The crate root names its modules bare; `crate::ITEM` of a root item is the root.
        (
            "lib.rs",
            "pub mod http;\npub use http::endpoint::Endpoint;\n",
        ),
        ("http/mod.rs", "fn f() -> crate::VERSION {}\n"),
        // `x.rs` beside a folder `x/` names its children bare too.
        ("http/endpoint.rs", "mod legacy;\nuse legacy::serve;\n"),
        (
            "http/endpoint/legacy.rs",
            "use super::super::limits::MAX;\n",
        ),
        ("http/limits.rs", ""),
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
    // (`mod http;` declares; it names no path.)
    assert_eq!(of("lib.rs"), ["http/endpoint.rs"]);
    assert_eq!(of("http/mod.rs"), ["lib.rs"]);
    assert_eq!(of("http/endpoint.rs"), ["http/endpoint/legacy.rs"]);
    assert_eq!(of("http/endpoint/legacy.rs"), ["http/limits.rs"]);
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
    assert_eq!(
        violations(&cycle, &SERVERS),
        ["import cycle: recall/outline.rs -> recall/relevance.rs -> recall/thesaurus.rs -> recall/outline.rs"]
    );
    // A folder's mod.rs re-exporting a child that uses an item of mod.rs through `super::`.
    let parent_child = planted(&[
        (
            "json/mod.rs",
            "mod parse;\npub use parse::parse;\npub enum Value {}\n",
        ),
        ("json/parse.rs", "use super::Value;\n"),
    ]);
    assert_eq!(
        violations(&parent_child, &LIBRARY),
        ["import cycle: json/mod.rs -> json/parse.rs -> json/mod.rs"]
    );
    let arrows = planted(&[
        ("corpus/text.rs", "use crate::recall::rank::cut_chars;\n"),
        ("recall/rank.rs", "fn f() { crate::index::test_rng(1); }\n"),
        ("index/mod.rs", "pub fn test_rng() {}\n"),
        ("index/memory.rs", "use crate::recall::rank::Hit;\n"),
    ]);
    let found = violations(&arrows, &SERVERS);
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
    let library = planted(&[
        ("json/mod.rs", "use crate::crypto::sha256;\n"),
        ("crypto/sha256.rs", ""),
    ]);
    let found = violations(&library, &LIBRARY);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("json/mod.rs imports crypto/sha256.rs"));
    // A folder no layer holds is named, whatever it imports.
    let unplaced = planted(&[("newfolder/x.rs", "")]);
    let found = violations(&unplaced, &LIBRARY);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("newfolder/x.rs: newfolder is in no layer"));
    // Downward arrows, arrows to the root, and a file's own test module pass.
    let fine = planted(&[
        (
            "recall/rank.rs",
            "use crate::corpus::text::cut_chars;\nmod tests { use super::*; }\n",
        ),
        ("corpus/text.rs", "use crate::compat::Compat;\n"),
        ("compat.rs", ""),
        ("lib.rs", "pub use recall::rank;\n"),
    ]);
    assert!(violations(&fine, &SERVERS).is_empty());
}
