//! The API partitions beyond Python: the public definitions and descriptions of a project's
//! direct Rust, npm and Go dependencies, read from files only, so `kind=api` answers "how do I
//! use X" offline whatever the project is written in.
//!
//! - Rust: the dependencies named in `Cargo.toml` (the root's and its workspace members'), at the
//!   version `Cargo.lock` pins from a registry, read from the local cargo registry
//!   (`$CARGO_HOME/registry/src/*/<name>-<version>/`; `CARGO_HOME` else `~/.cargo`);
//! - npm: the dependencies named in `package.json`, read from the project's `node_modules`
//!   (their `types`/`typings` file, else `index.d.ts`, else `main`);
//! - Go: the direct requirements of `go.mod`, read from the module cache (`GOMODCACHE`, else
//!   `$GOPATH/pkg/mod`, else `~/go/pkg/mod`; upper-case letters escaped as `!` + lower case).
//!
//! Nothing is ever run, and nothing a project names can lead the reads elsewhere: every name and
//! version is checked against its ecosystem's rules before it becomes a path (no `/`, no `..`),
//! every file read is a regular file inside its package's folder (links out are skipped), no
//! larger than [`MAX_API_FILE_BYTES`], all of them together within the build's [`ReadBudget`],
//! and the counts are bounded by named constants. The cargo
//! home and the Go module cache are the user's, outside the project, and are read only through
//! such checked names.

use super::budget::ReadBudget;
use super::deps::{
    json_manifest, ApiDoc, ApiModule, Provenance, MAX_API_FILES, MAX_API_FILE_BYTES,
    MAX_API_SYMBOLS, MAX_DOC_CHARS,
};
use super::outline::{outline, Unit};
use crate::corpus::teamdir::confine;
use crate::corpus::text::cut_chars;
use std::path::{Path, PathBuf};

/// Direct dependencies read per ecosystem.
pub const MAX_DEPENDENCIES: usize = 500;
/// Largest manifest or lock file read (`Cargo.toml`, `Cargo.lock`, `package.json`, `go.mod`).
pub const MAX_MANIFEST_BYTES: u64 = 8 * 1024 * 1024;
/// Directory entries looked at while listing a package's source files.
pub const MAX_LISTED_ENTRIES: usize = 5_000;
/// Workspace members whose `Cargo.toml` is read.
pub const MAX_WORKSPACE_MEMBERS: usize = 200;

/// Where the user's package caches are (taken from the environment of `index build`).
#[derive(Clone, Debug, Default)]
pub struct Caches {
    pub cargo_home: Option<PathBuf>,
    pub go_mod_cache: Option<PathBuf>,
}

impl Caches {
    /// `CARGO_HOME` else `$HOME/.cargo`; `GOMODCACHE` else the first `GOPATH` entry's `pkg/mod`
    /// else `$HOME/go/pkg/mod`.
    pub fn from_environment() -> Caches {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME");
        let gopath = std::env::var_os("GOPATH").and_then(|p| {
            std::env::split_paths(&p)
                .next()
                .filter(|p| !p.as_os_str().is_empty())
        });
        Caches {
            cargo_home: var("CARGO_HOME").or_else(|| home.as_ref().map(|h| h.join(".cargo"))),
            go_mod_cache: var("GOMODCACHE")
                .or_else(|| gopath.map(|g| g.join("pkg/mod")))
                .or_else(|| home.map(|h| h.join("go/pkg/mod"))),
        }
    }
}

/// One dependency found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// The name the project's code uses it by (`serde_json`, `@types/node`, `github.com/a/b`).
    pub import: String,
    /// The distribution's name (`serde-json` as published, the npm name, the module path).
    pub name: String,
    pub version: String,
    /// Its folder (canonical).
    pub dir: PathBuf,
    /// How `resolved_from` names a file of it, without the user's home: `cargo:`, `npm:`,
    /// `go:` and the package's folder name.
    label: String,
    /// Its source files, in the order they are read, and their language.
    files: Vec<PathBuf>,
    language: &'static str,
    pub description: Option<String>,
}

/// The direct dependencies of the project at `root` that are on disk, Rust, then npm, then Go,
/// each in name order; none more once `budget` is spent.
pub fn packages(root: &Path, caches: &Caches, budget: &ReadBudget) -> Vec<Package> {
    let mut out = Vec::new();
    if let Some(home) = &caches.cargo_home {
        out.extend(rust_packages(root, home, budget));
    }
    out.extend(npm_packages(root, budget));
    if let Some(cache) = &caches.go_mod_cache {
        out.extend(go_packages(root, cache, budget));
    }
    out
}

/// `api-module` units: each package's public definitions (methods of public types included),
/// at most [`MAX_API_SYMBOLS`] per file and [`MAX_API_FILES`] files per package; none more once
/// `budget` is spent.
pub fn api_modules(packages: &[Package], budget: &ReadBudget) -> Vec<ApiModule> {
    let mut out = Vec::new();
    for package in packages {
        for file in &package.files {
            let Some(text) = budget.read_text_at_most(file, MAX_API_FILE_BYTES) else {
                if budget.spent() {
                    return out;
                }
                continue;
            };
            let units = outline(&text, Some(package.language));
            let public = public_units(&units, package.language);
            let rel = file.strip_prefix(&package.dir).unwrap_or(file);
            let resolved_from = format!("{}/{}", package.label, rel.to_string_lossy());
            for unit in public.into_iter().take(MAX_API_SYMBOLS) {
                out.push(ApiModule {
                    path: package.import.clone(),
                    symbol: Some(unit.name.clone()),
                    signature: Some(signature_of(&unit.passage).to_owned()),
                    text: unit.passage.clone(),
                    passage: Some(unit.passage.clone()),
                    language: Some(package.language),
                    provenance: Provenance::Source {
                        distribution: package.name.clone(),
                        version: Some(package.version.clone()),
                        resolved_from: resolved_from.clone(),
                    },
                });
            }
        }
    }
    out
}

/// `api-doc` units: the description of each package that has one.
pub fn api_docs(packages: &[Package]) -> Vec<ApiDoc> {
    packages
        .iter()
        .filter_map(|p| {
            let description = p.description.as_deref()?.trim();
            (!description.is_empty()).then(|| ApiDoc {
                distribution: p.name.clone(),
                version: Some(p.version.clone()),
                text: cut_chars(&format!("{}\n{description}", p.name), MAX_DOC_CHARS).to_owned(),
            })
        })
        .collect()
}

fn signature_of(passage: &str) -> &str {
    passage.split(" \u{2014} ").next().unwrap_or(passage)
}

/// The units a package's users can call: Rust `pub` items (the `pub` methods of impl blocks
/// among them) and every item of a `pub trait`; exported TypeScript/JavaScript declarations and
/// the members of exported classes and interfaces that are not `private`; Go names (and receiver
/// types) starting with a capital letter.
fn public_units<'a>(units: &'a [Unit], language: &str) -> Vec<&'a Unit> {
    // Containers whose members are public without a keyword of their own.
    let open: Vec<&str> = units
        .iter()
        .filter(|u| {
            let signature = signature_of(&u.passage);
            match language {
                "rust" => signature.starts_with("pub trait"),
                "typescript" | "javascript" => signature.starts_with("export"),
                _ => false,
            }
        })
        .map(|u| u.name.as_str())
        .collect();
    units
        .iter()
        .filter(|u| {
            let signature = signature_of(&u.passage);
            let in_open = u
                .name
                .rsplit_once('.')
                .is_some_and(|(container, _)| open.contains(&container));
            match language {
                "rust" => signature.starts_with("pub ") || in_open,
                "typescript" | "javascript" => {
                    signature.starts_with("export")
                        || in_open
                            && !signature.starts_with("private")
                            && !signature.starts_with('#')
                }
                "go" => u
                    .name
                    .split('.')
                    .all(|part| part.starts_with(|c: char| c.is_ascii_uppercase())),
                _ => false,
            }
        })
        .collect()
}

/// A regular file of at most [`MAX_MANIFEST_BYTES`] inside the project, as text.
fn project_file(root: &Path, rel: &str, budget: &ReadBudget) -> Option<String> {
    let path = confine(root, &root.join(rel)).ok()?;
    budget.read_text_at_most(&path, MAX_MANIFEST_BYTES)
}

/// `dir` canonicalised, if it is a directory.
fn real_dir(dir: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(dir).ok()?;
    real.is_dir().then_some(real)
}

/// `rel` under `dir`, if it is a regular file whose real path stays inside `dir`.
fn file_inside(dir: &Path, rel: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(dir.join(rel)).ok()?;
    (real.starts_with(dir) && std::fs::metadata(&real).is_ok_and(|m| m.is_file())).then_some(real)
}

/// The files under `dir` ending in one of `suffixes` (not in `skip` folders), sorted, depth
/// first, at most `max`; links are not followed; at most [`MAX_LISTED_ENTRIES`] entries looked at.
fn list_files(dir: &Path, suffixes: &[&str], skip: &[&str], max: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        let mut entries: Vec<_> = entries
            .flatten()
            .take(MAX_LISTED_ENTRIES - seen.min(MAX_LISTED_ENTRIES))
            .collect();
        seen += entries.len();
        entries.sort_by_key(|e| e.file_name());
        let mut dirs = Vec::new();
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() && !skip.contains(&name.as_str()) {
                dirs.push(entry.path());
            } else if kind.is_file() && suffixes.iter().any(|s| name.ends_with(s)) {
                out.push(entry.path());
            }
        }
        dirs.reverse();
        pending.extend(dirs);
        if out.len() >= max || seen >= MAX_LISTED_ENTRIES {
            break;
        }
    }
    out.truncate(max);
    out
}

// ---------------------------------------------------------------------------------------------
// Rust

/// A crates.io package name: ASCII letters, digits, `_` and `-`, at most 64.
fn is_crate_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A version as a path part: ASCII letters, digits, `.`, `+` and `-`, not starting with `.`.
fn is_version(version: &str) -> bool {
    !version.is_empty()
        && version.len() <= 64
        && !version.starts_with('.')
        && !version.contains("..")
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'+' || b == b'-')
}

/// The dependency names of a `Cargo.toml` (the package names, after `package = "..."` renames),
/// and its workspace members' patterns. Public for the `index_manifests` fuzz target.
pub fn cargo_dependencies(manifest: &str) -> (Vec<String>, Vec<String>) {
    let mut deps = Vec::new();
    let mut members = Vec::new();
    let mut section = String::new();
    let mut in_members = false;
    // `[dependencies.foo]` tables: their name, until a `package =` line renames it.
    let mut table_dep: Option<usize> = None;
    for line in manifest.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim();
        if in_members {
            members.extend(quoted_strings(line));
            if line.contains(']') {
                in_members = false;
            }
            continue;
        }
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).trim().to_owned();
            table_dep = None;
            if let Some((head, name)) = section.rsplit_once('.') {
                if head.ends_with("dependencies") {
                    let name = name.trim_matches('"');
                    if is_crate_name(name) {
                        deps.push(name.to_owned());
                        table_dep = Some(deps.len() - 1);
                    }
                }
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().trim_matches('"'), value.trim());
        if section == "workspace" && key == "members" {
            members.extend(quoted_strings(value));
            in_members = !value.contains(']');
            continue;
        }
        if let Some(at) = table_dep {
            if key == "package" {
                if let Some(real) = quoted_strings(value).into_iter().next() {
                    if is_crate_name(&real) {
                        deps[at] = real;
                    }
                }
            }
            continue;
        }
        if section.ends_with("dependencies") && is_crate_name(key) {
            let renamed = value
                .split_once("package")
                .and_then(|(_, rest)| quoted_strings(rest).into_iter().next())
                .filter(|n| is_crate_name(n));
            deps.push(renamed.unwrap_or_else(|| key.to_owned()));
        }
    }
    (deps, members)
}

/// The `"..."` strings of a line, in order.
fn quoted_strings(line: &str) -> Vec<String> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// `(name, version)` of each registry package of a `Cargo.lock` (unchecked: see
/// [`crate_folder`]). Public for the `index_manifests` fuzz target.
pub fn cargo_lock_packages(lock: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut name, mut version, mut registry) = (None, None, false);
    let mut flush =
        |name: &mut Option<String>, version: &mut Option<String>, registry: &mut bool| {
            if let (Some(n), Some(v)) = (name.take(), version.take()) {
                if *registry {
                    out.push((n, v));
                }
            }
            *registry = false;
        };
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            flush(&mut name, &mut version, &mut registry);
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = quoted_strings(value).into_iter().next();
        match key.trim() {
            "name" => name = value,
            "version" => version = value,
            "source" => {
                registry =
                    value.is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"))
            }
            _ => {}
        }
    }
    flush(&mut name, &mut version, &mut registry);
    out
}

fn rust_packages(root: &Path, cargo_home: &Path, budget: &ReadBudget) -> Vec<Package> {
    let Some(manifest) = project_file(root, "Cargo.toml", budget) else {
        return Vec::new();
    };
    let Some(lock) = project_file(root, "Cargo.lock", budget) else {
        return Vec::new();
    };
    let (deps, members) = cargo_dependencies(&manifest);
    // The MAX_DEPENDENCIES least names, kept as they come (200 members' manifests can name
    // millions, all of which were collected, then sorted).
    let mut names = std::collections::BTreeSet::new();
    let mut keep = |deps: Vec<String>| {
        for name in deps {
            names.insert(name);
            if names.len() > MAX_DEPENDENCIES {
                names.pop_last();
            }
        }
    };
    keep(deps);
    for rel in member_manifests(root, &members) {
        if let Some(text) = project_file(root, &rel, budget) {
            keep(cargo_dependencies(&text).0);
        }
    }
    if budget.spent() {
        return Vec::new();
    }
    let locked = cargo_lock_packages(&lock);
    let Some(registry) = real_dir(&cargo_home.join("registry/src")) else {
        return Vec::new();
    };
    let mut indexes: Vec<PathBuf> = std::fs::read_dir(&registry)
        .map(|e| e.flatten().take(64).map(|e| e.path()).collect())
        .unwrap_or_default();
    indexes.sort();
    let mut out = Vec::new();
    for name in &names {
        let Some((_, version)) = locked.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let Some(folder) = crate_folder(name, version) else {
            continue;
        };
        let Some(dir) = indexes
            .iter()
            .find_map(|index| real_dir(&index.join(&folder)).filter(|d| d.starts_with(&registry)))
        else {
            continue;
        };
        let mut files: Vec<PathBuf> = file_inside(&dir, Path::new("src/lib.rs"))
            .into_iter()
            .collect();
        for file in list_files(&dir.join("src"), &[".rs"], &[], MAX_API_FILES * 4) {
            if files.len() >= MAX_API_FILES {
                break;
            }
            if let Some(real) = file
                .strip_prefix(&dir)
                .ok()
                .and_then(|rel| file_inside(&dir, rel))
            {
                if !files.contains(&real) {
                    files.push(real);
                }
            }
        }
        let description = file_inside(&dir, Path::new("Cargo.toml"))
            .and_then(|f| budget.read_text_at_most(&f, MAX_MANIFEST_BYTES))
            .and_then(|text| toml_package_string(&text, "description"));
        if budget.spent() {
            return out;
        }
        out.push(Package {
            import: name.replace('-', "_"),
            name: name.clone(),
            version: version.clone(),
            dir,
            label: format!("cargo:{folder}"),
            files,
            language: "rust",
            description,
        });
    }
    out
}

/// The registry folder of a crate, `<name>-<version>`, when both are valid (one path part, no
/// `..`). Public for the `index_manifests` fuzz target.
pub fn crate_folder(name: &str, version: &str) -> Option<String> {
    (is_crate_name(name) && is_version(version)).then(|| format!("{name}-{version}"))
}

/// The `Cargo.toml` of each workspace member the `members` patterns name, relative to the root,
/// in pattern order: each path once however many patterns name it, at most
/// [`MAX_WORKSPACE_MEMBERS`] in all (before, each of 200 patterns could name 200 folders, and a
/// pattern repeated 200 times had the same manifests read 200 times over). Public for the
/// `index_manifests` fuzz target.
pub fn member_manifests(root: &Path, members: &[String]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for member in members.iter().take(MAX_WORKSPACE_MEMBERS) {
        for dir in member_dirs(root, member) {
            if out.len() >= MAX_WORKSPACE_MEMBERS {
                return out;
            }
            let rel = format!("{dir}/Cargo.toml");
            if seen.insert(rel.clone()) {
                out.push(rel);
            }
        }
    }
    out
}

/// The directories a workspace `members` entry names: a plain relative path, or one ending in
/// `/*` (its subdirectories); nothing empty (its manifest would be `/Cargo.toml`), with `..` or
/// absolute.
fn member_dirs(root: &Path, pattern: &str) -> Vec<String> {
    if pattern.is_empty() || pattern.starts_with('/') || pattern.split('/').any(|p| p == "..") {
        return Vec::new();
    }
    match pattern.strip_suffix("/*") {
        Some(parent) if !parent.contains('*') => {
            let Ok(dir) = confine(root, &root.join(parent)) else {
                return Vec::new();
            };
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map(|e| {
                    e.flatten()
                        .take(MAX_WORKSPACE_MEMBERS)
                        .filter_map(|e| e.file_name().into_string().ok())
                        .map(|n| format!("{parent}/{n}"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        }
        None if !pattern.contains('*') => vec![pattern.to_owned()],
        _ => Vec::new(),
    }
}

/// A string value of a `[package]` table (`description = "..."`, one line). Public for the
/// `index_manifests` fuzz target.
pub fn toml_package_string(manifest: &str, key: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == key {
                return quoted_strings(v).into_iter().next();
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// npm

/// An npm package name: an optional `@scope/` and a name, each of lower-case letters, digits,
/// `-`, `.`, `_` and `~`, not starting with `.` or `_`, at most 214 in all.
fn is_npm_name(name: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_'])
            && p.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'-' | b'.' | b'_' | b'~')
            })
    };
    if name.len() > 214 {
        return false;
    }
    match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(s, n)| part(s) && part(n)),
        None => part(name),
    }
}

/// The valid package names among a `package.json`'s dependencies of every kind, sorted, without
/// repeats (none when it is not a JSON object). Public for the `index_manifests` fuzz target.
pub fn npm_dependencies(manifest: &str) -> Vec<String> {
    let Some(manifest) = json_manifest(manifest) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for field in [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ] {
        if let Some(map) = manifest.get(field).and_then(|v| v.as_object()) {
            names.extend(
                map.keys()
                    .map(|k| k.as_str().to_owned())
                    .filter(|n| is_npm_name(n)),
            );
        }
    }
    names.sort();
    names.dedup();
    names
}

fn npm_packages(root: &Path, budget: &ReadBudget) -> Vec<Package> {
    let Some(names) = project_file(root, "package.json", budget).map(|t| npm_dependencies(&t))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in names.into_iter().take(MAX_DEPENDENCIES) {
        let Ok(dir) = confine(root, &root.join("node_modules").join(&name)) else {
            continue;
        };
        let Some(dir) = real_dir(&dir) else {
            continue;
        };
        let text = file_inside(&dir, Path::new("package.json"))
            .and_then(|f| budget.read_text_at_most(&f, MAX_MANIFEST_BYTES));
        let Some(meta) = text.as_deref().and_then(json_manifest) else {
            if budget.spent() {
                return out;
            }
            continue;
        };
        let field = |key: &str| meta.get(key)?.as_str().map(str::to_owned);
        let entry = ["types", "typings"]
            .iter()
            .find_map(|k| field(k))
            .or_else(|| Some("index.d.ts".to_owned()))
            .and_then(|rel| entry_file(&dir, &rel))
            .or_else(|| field("main").and_then(|rel| entry_file(&dir, &rel)))
            .or_else(|| entry_file(&dir, "index.js"));
        let Some(entry) = entry else {
            continue;
        };
        let name_str = entry.to_string_lossy();
        let language = if name_str.ends_with(".ts") {
            "typescript"
        } else {
            "javascript"
        };
        out.push(Package {
            import: name.clone(),
            label: format!("npm:{name}"),
            version: field("version")
                .filter(|v| is_version(v))
                .unwrap_or_default(),
            name,
            files: vec![entry],
            dir,
            language,
            description: field("description"),
        });
    }
    out
}

/// A package's entry file named by its `package.json`: relative, no `..`, a `.d.ts`, `.ts`,
/// `.js`, `.mjs` or `.cjs` regular file inside the package.
fn entry_file(dir: &Path, rel: &str) -> Option<PathBuf> {
    file_inside(dir, Path::new(entry_path(rel)?))
}

/// The relative path [`entry_file`] looks for, when the `package.json` value is acceptable as
/// one: a known suffix, not absolute, no `..` part (a leading `./` dropped). Public for the
/// `index_manifests` fuzz target.
pub fn entry_path(rel: &str) -> Option<&str> {
    let rel = rel.trim_start_matches("./");
    let suffix_ok = [".ts", ".js", ".mjs", ".cjs"]
        .iter()
        .any(|s| rel.ends_with(s));
    (suffix_ok && !rel.starts_with('/') && !rel.split('/').any(|p| p == "..")).then_some(rel)
}

// ---------------------------------------------------------------------------------------------
// Go

/// A module path: ASCII letters, digits and `.-_~/`, no empty, `.` or `..` element.
fn is_module_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 512
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'~' | b'/'))
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

/// The module cache's spelling of a path or version: each upper-case letter as `!` and its
/// lower case.
fn escape_module(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_uppercase() {
            out.push('!');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The direct requirements of a `go.mod`: `(module path, version)`, `// indirect` ones left out.
/// Public for the `index_manifests` fuzz target.
pub fn go_requirements(go_mod: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in go_mod.lines() {
        let line = line.trim();
        let spec = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        if spec.contains("// indirect") {
            continue;
        }
        let mut words = spec.split_whitespace();
        if let (Some(path), Some(version)) = (words.next(), words.next()) {
            if is_module_path(path) && is_version(version) {
                out.push((path.to_owned(), version.to_owned()));
            }
        }
    }
    out
}

/// The module cache's folder of a module at a version, `<escaped path>@<escaped version>`, when
/// both are valid (no `.` or `..` part, nothing absolute). Public for the `index_manifests` fuzz
/// target.
pub fn module_folder(path: &str, version: &str) -> Option<String> {
    (is_module_path(path) && is_version(version))
        .then(|| format!("{}@{}", escape_module(path), escape_module(version)))
}

fn go_packages(root: &Path, cache: &Path, budget: &ReadBudget) -> Vec<Package> {
    let Some(go_mod) = project_file(root, "go.mod", budget) else {
        return Vec::new();
    };
    let Some(cache) = real_dir(cache) else {
        return Vec::new();
    };
    let mut requirements = go_requirements(&go_mod);
    requirements.sort();
    requirements.dedup();
    let mut out = Vec::new();
    for (path, version) in requirements.into_iter().take(MAX_DEPENDENCIES) {
        let Some(folder) = module_folder(&path, &version) else {
            continue;
        };
        let Some(dir) = real_dir(&cache.join(&folder)).filter(|d| d.starts_with(&cache)) else {
            continue;
        };
        let files: Vec<PathBuf> = list_files(&dir, &[".go"], &[], MAX_LISTED_ENTRIES)
            .into_iter()
            .filter(|f| f.parent() == Some(dir.as_path()))
            .filter(|f| !f.to_string_lossy().ends_with("_test.go"))
            .filter_map(|f| {
                f.strip_prefix(&dir)
                    .ok()
                    .and_then(|rel| file_inside(&dir, rel))
            })
            .take(MAX_API_FILES)
            .collect();
        out.push(Package {
            import: path.clone(),
            name: path,
            label: format!("go:{folder}"),
            version,
            dir,
            files,
            language: "go",
            description: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `index_manifests` fuzz target: an unclosed quote in a `members` list gave the
    /// member `""`, whose manifest `/Cargo.toml` is absolute (only the confinement that follows
    /// kept it from being read).
    #[test]
    fn workspace_members_never_name_a_path_outside_the_project() {
        let manifest = "[workspace]\nmembers = [\n  \"a\",\n  tools (\"\n]\n";
        let (_, members) = cargo_dependencies(manifest);
        assert_eq!(members, ["a", ""]);
        let root = Path::new("/nonexistent-project");
        assert!(member_dirs(root, "").is_empty());
        for hostile in ["/etc", "/*", "../x", "a/../../x", "a/..", "*", "a/*/b"] {
            assert!(member_dirs(root, hostile).is_empty(), "{hostile}");
        }
        assert_eq!(member_dirs(root, "tools/gen"), ["tools/gen"]);
        assert_eq!(member_dirs(root, "./x"), ["./x"]);
    }

    #[test]
    fn workspace_members_are_read_once_each_and_at_most_the_limit() {
        let root = std::env::temp_dir().join(format!("ecosystems-members-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for i in 0..MAX_WORKSPACE_MEMBERS + 50 {
            std::fs::create_dir_all(root.join(format!("crates/c{i:03}"))).unwrap();
        }
        let root = std::fs::canonicalize(&root).unwrap();
        // One pattern, repeated: each folder's manifest once.
        let repeated = vec!["crates/c000".to_owned(); MAX_WORKSPACE_MEMBERS];
        assert_eq!(
            member_manifests(&root, &repeated),
            ["crates/c000/Cargo.toml"]
        );
        // A glob over more folders than the limit, then repeated: the limit in all, no repeats.
        let mut members = vec!["tools".to_owned()];
        members.extend(std::iter::repeat_n(
            "crates/*".to_owned(),
            MAX_WORKSPACE_MEMBERS,
        ));
        let manifests = member_manifests(&root, &members);
        assert_eq!(manifests.len(), MAX_WORKSPACE_MEMBERS);
        assert_eq!(
            manifests[..2],
            ["tools/Cargo.toml", "crates/c000/Cargo.toml"]
        );
        let unique: std::collections::BTreeSet<&String> = manifests.iter().collect();
        assert_eq!(unique.len(), manifests.len());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
