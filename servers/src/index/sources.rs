//! Which files the builder indexes: the memory index's markdown set (the reference's sources and
//! scratch-dir exclusions) and the code index's local sources (`git ls-files` through gitread's
//! hardened runner, else a pruned walk), plus reading a source as the reference does.

use crate::gitread::GitRead;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// Largest listing accepted from git (NUL-separated paths).
pub const MAX_GIT_LISTING_BYTES: usize = 64 * 1024 * 1024;

/// How long `git ls-files` may run before the builder gives up on it and walks the tree.
pub const GIT_LISTING_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest source file indexed; bigger files are skipped like unreadable ones.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;
/// Most files one build indexes (memory and code sources each).
pub const MAX_SOURCE_FILES: usize = 200_000;

/// Directory names never indexed by the memory index's recursive scans.
const MEMORY_SCRATCH_DIRS: [&str; 7] = [
    ".agentteams-backups",
    "__pycache__",
    ".git",
    ".pytest_cache",
    ".venv",
    "venv",
    "node_modules",
];

/// Directories the code index's fallback walk prunes (besides every name starting with `.`).
const CODE_DENY_DIRS: [&str; 16] = [
    ".git",
    ".venv",
    ".venv-ci",
    "node_modules",
    "__pycache__",
    "dist",
    "build",
    "_site",
    "tmp",
    ".agentteams-backups",
    ".pytest_cache",
    ".mypy_cache",
    ".tox",
    "site-packages",
    ".eggs",
    "target",
];

/// The language of a source file from its suffix (case-insensitive); `None`: not a code source.
pub fn language_for(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "py" => "python",
        "sh" | "bash" => "shell",
        "rs" => "rust",
        "go" => "go",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "rb" => "ruby",
        _ => return None,
    })
}

/// Reads a source as Python's `Path.read_text(encoding="utf-8")`: strict UTF-8 with universal
/// newlines (`\r\n` and lone `\r` become `\n`). `None` when unreadable, too large or not UTF-8.
pub fn read_text(path: &Path) -> Option<String> {
    let file = fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    if !text.contains('\r') {
        return Some(text);
    }
    Some(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// `stat().st_mtime` as Python computes it, `0.0` on error.
pub fn mtime(path: &Path) -> f64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).map_or(0.0, |m| m.mtime() as f64 + m.mtime_nsec() as f64 * 1e-9)
}

fn has_component_in(rel: &Path, names: &[&str]) -> bool {
    rel.components().any(|c| match c {
        Component::Normal(name) => names.iter().any(|n| OsStr::new(n) == name),
        _ => false,
    })
}

/// Entries under `dir` whose name matches `*.md` (files, directories and links alike, as
/// `Path.rglob` yields them), descending into real directories only, at most `limit` of them.
fn markdown_under(dir: &Path, recursive: bool, limit: usize) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path
                .file_name()
                .is_some_and(|n| n.as_encoded_bytes().ends_with(b".md"))
            {
                found.push(path.clone());
                if found.len() >= limit {
                    return found;
                }
            }
            if recursive && entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The memory index's sources in the reference's order: `workSummaries/**/*.md`, the three top-level
/// documents, `docs_src/*.md`, `references/**/*.md`; scratch directories dropped from the scans.
/// Paths are absolute (under `root`).
pub fn memory_sources(root: &Path) -> Vec<PathBuf> {
    let durable = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths
            .into_iter()
            .filter(|p| {
                let rel = p.strip_prefix(root).unwrap_or(p);
                !has_component_in(rel, &MEMORY_SCRATCH_DIRS)
            })
            .collect()
    };
    let mut sources = Vec::new();
    let scan = |sub: &str, recursive: bool| -> Vec<PathBuf> {
        let dir = root.join(sub);
        if dir.is_dir() {
            durable(markdown_under(&dir, recursive, MAX_SOURCE_FILES))
        } else {
            Vec::new()
        }
    };
    sources.extend(scan("workSummaries", true));
    for name in ["CHANGELOG.md", "README.md", "build-team-plan.md"] {
        let path = root.join(name);
        if path.is_file() {
            sources.push(path);
        }
    }
    sources.extend(scan("docs_src", false));
    sources.extend(scan("references", true));
    sources.truncate(MAX_SOURCE_FILES);
    sources
}

/// The code index's local sources, relative to `root`, sorted by their string form and unique:
/// `git ls-files -co --exclude-standard` when the root is a plain git work tree, else a pruned walk.
pub fn code_sources(root: &Path) -> Vec<PathBuf> {
    let listed = git_listing(root).unwrap_or_else(|| walk_code(root));
    let mut rel: Vec<PathBuf> = listed
        .into_iter()
        .filter(|p| language_for(p).is_some() && root.join(p).is_file())
        .collect();
    rel.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    rel.dedup();
    rel.truncate(MAX_SOURCE_FILES);
    rel
}

/// The pruned walk the reference falls back to when git is unavailable.
fn walk_code(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel_dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(root.join(&rel_dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let rel = rel_dir.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            // os.walk lists symlinked directories but does not descend into them.
            if kind.is_dir() {
                let skip = name.as_encoded_bytes().starts_with(b".")
                    || CODE_DENY_DIRS.iter().any(|d| OsStr::new(d) == name);
                if !skip {
                    pending.push(rel);
                }
            } else if language_for(&rel).is_some() {
                found.push(rel);
                if found.len() >= MAX_SOURCE_FILES {
                    return found;
                }
            }
        }
    }
    found
}

/// `git ls-files -co --exclude-standard -z` through gitread ([`GitRead::list_files`]): the same
/// repository checks (a `.git` file, link or `commondir` leading outside the project is refused;
/// filter drivers are refused), the same hardened invocation and process control. `None` when the
/// root is no such work tree, git is missing, refuses, fails, times out or lists more than
/// [`MAX_GIT_LISTING_BYTES`]: the caller walks the tree instead.
fn git_listing(root: &Path) -> Option<Vec<PathBuf>> {
    let gitread = GitRead::new(root).ok()?;
    let listing = gitread
        .list_files(GIT_LISTING_TIMEOUT, MAX_GIT_LISTING_BYTES)
        .ok()?;
    Some(
        listing
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .filter_map(|s| std::str::from_utf8(s).ok())
            .map(PathBuf::from)
            .filter(|p| p.components().all(|c| matches!(c, Component::Normal(_))))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_suffix() {
        assert_eq!(language_for(Path::new("a/B.PY")), Some("python"));
        assert_eq!(language_for(Path::new("x.bash")), Some("shell"));
        assert_eq!(language_for(Path::new("lib.rs")), Some("rust"));
        assert_eq!(language_for(Path::new("x.tsx")), Some("typescript"));
        assert_eq!(language_for(Path::new("README.md")), None);
        assert_eq!(language_for(Path::new("Makefile")), None);
    }
}
