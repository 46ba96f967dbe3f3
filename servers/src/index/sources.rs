//! Which files the builder indexes: the memory index's markdown set (the reference's sources and
//! scratch-dir exclusions) and the code index's local sources (`git ls-files` through gitread's
//! hardened runner, else a pruned walk), plus reading a source as the reference does.

use super::build_cache::Identity;
use super::description::Description;
use super::pattern::{glob, has_magic, FnPattern, GlobError};
use crate::corpus::teamdir::resolve_lenient;
use crate::gitread::{GitRead, GitSettings};
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fmt;
use std::fs;
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

/// The project's documentation folder, scanned recursively for `*.md` as a memory source by
/// default (a product addition; `memory_index_exclude: ["docs"]` leaves it out).
pub const DEFAULT_DOCS_DIR: &str = "docs";

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

/// Code source suffixes (lowercase) and their languages: the reference's `.py`, `.sh`, `.bash`
/// and the languages this builder adds.
const LANGUAGES: [(&str, &str); 23] = [
    ("py", "python"),
    ("sh", "shell"),
    ("bash", "shell"),
    ("rs", "rust"),
    ("go", "go"),
    ("js", "javascript"),
    ("jsx", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("ts", "typescript"),
    ("tsx", "typescript"),
    ("mts", "typescript"),
    ("cts", "typescript"),
    ("java", "java"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
    ("hh", "cpp"),
    ("hxx", "cpp"),
    ("rb", "ruby"),
];

/// The language of a source file from its suffix (case-insensitive); `None`: not a code source.
pub fn language_for(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    LANGUAGES.iter().find(|(e, _)| *e == ext).map(|(_, l)| *l)
}

/// Reads a source as Python's `Path.read_text(encoding="utf-8")`: strict UTF-8 with universal
/// newlines (`\r\n` and lone `\r` become `\n`). `None` when unreadable, too large or not UTF-8.
pub fn read_text(path: &Path) -> Option<String> {
    read_text_at_most(path, MAX_SOURCE_BYTES)
}

/// [`read_text`] with another size limit (`None` past it).
pub fn read_text_at_most(path: &Path, limit: u64) -> Option<String> {
    text_of(crate::regular_file::read_at_most(path, limit).ok()??)
}

/// A file's bytes as Python's `read_text` gives them: strict UTF-8 (else `None`), universal
/// newlines.
pub fn text_of(bytes: Vec<u8>) -> Option<String> {
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

/// Sorts as Python sorts `Path`s: part by part, each part by code point (UTF-8 byte order), so
/// a `..` part orders by its characters, not before every name as Rust's `Component` order has it.
fn sorted_like_python(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort_by_cached_key(|p| {
        p.components()
            .map(|c| c.as_os_str().as_encoded_bytes().to_vec())
            .collect::<Vec<_>>()
    });
    paths
}

/// Python's `root / raw`: `raw`'s `/`-separated parts with empty and `.` parts dropped.
fn python_join(root: &Path, raw: &str) -> PathBuf {
    let mut path = root.to_path_buf();
    for part in raw.split('/').filter(|p| !p.is_empty() && *p != ".") {
        path.push(part);
    }
    path
}

/// Whether `path`'s realpath lies inside `root` (itself resolved).
fn resolves_inside(path: &Path, root: &Path) -> bool {
    resolve_lenient(path).is_some_and(|real| real.starts_with(root))
}

/// Whether the directory `dir` (under the canonical `root`) resolves inside it, remembered in
/// `memo`: a directory that is no link is inside exactly when its parent is, so only links are
/// resolved whole, and each directory costs one `lstat` rather than one per component. Walks up
/// to the nearest directory already decided (or the root, or a link), then back down.
fn listed_dir_inside(root: &Path, dir: &Path, memo: &mut HashMap<PathBuf, bool>) -> bool {
    let mut undecided: Vec<&Path> = Vec::new();
    let mut at = dir;
    let decided = loop {
        if at == root {
            break true;
        }
        if let Some(&known) = memo.get(at) {
            break known;
        }
        match fs::symlink_metadata(at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let inside = resolves_inside(at, root);
                memo.insert(at.to_path_buf(), inside);
                break inside;
            }
            Ok(meta) if meta.is_dir() && at.starts_with(root) => match at.parent() {
                Some(parent) => {
                    undecided.push(at);
                    at = parent;
                }
                None => break false,
            },
            _ => break false,
        }
    };
    for dir in undecided {
        memo.insert(dir.to_path_buf(), decided);
    }
    decided
}

/// Whether `rel`, listed by git or the walk, is a file whose realpath stays inside `root`. The
/// walk never descends a symlinked directory, but git lists its index as the repository wrote it:
/// an entry can lie beneath a directory that is now a link out of the project, so each parent
/// directory is resolved (once, remembered in `dirs_inside`). A link as the last component is
/// followed only if it stays inside (deliberate difference: the reference would read the file it
/// points to).
///
/// Gives the file's identity when it is one (the look the build cache compares), else `None`.
fn file_inside(
    root: &Path,
    rel: &Path,
    dirs_inside: &mut HashMap<PathBuf, bool>,
) -> Option<Identity> {
    let path = root.join(rel);
    let parent = path.parent().unwrap_or(root);
    if !listed_dir_inside(root, parent, dirs_inside) {
        return None;
    }
    let meta = fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        let target = fs::metadata(&path).ok().filter(fs::Metadata::is_file)?;
        resolves_inside(&path, root).then(|| Identity::from_metadata(&meta, &target))
    } else {
        meta.is_file()
            .then(|| Identity::from_metadata(&meta, &meta))
    }
}

/// Fewest listed files [`files_inside`] splits between two threads: below it, a thread costs
/// more than it saves.
const MIN_FILES_TO_SPLIT: usize = 512;

/// The listed files (relative to `root`) that are files inside it ([`file_inside`]), with their
/// identities, in order. Looked at in two halves on two threads: a file's identity is two or
/// three system calls, and a large tree's (11,672 files) took a third as long as git's listing.
fn files_inside(root: &Path, mut rels: Vec<PathBuf>) -> Vec<CodeSource> {
    let look = |rels: Vec<PathBuf>| -> Vec<CodeSource> {
        let mut dirs_inside = HashMap::new();
        rels.into_iter()
            .filter_map(|rel| {
                let identity = file_inside(root, &rel, &mut dirs_inside)?;
                Some(CodeSource {
                    rel,
                    identity: Some(identity),
                })
            })
            .collect()
    };
    if rels.len() < MIN_FILES_TO_SPLIT {
        return look(rels);
    }
    // The second half where either thread can take it: the other, or this one if no thread
    // could be started.
    let second = std::sync::Mutex::new(Some(rels.split_off(rels.len() / 2)));
    let take = || {
        second
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_default()
    };
    std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("index-stat".into())
            .spawn_scoped(scope, || look(take()));
        let mut found = look(rels);
        match other {
            Ok(other) => found.extend(
                other
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            ),
            Err(_) => found.extend(look(take())),
        }
        found
    })
}

/// A code source: its path relative to the root, and its identity when it was listed (`None`:
/// it could not be looked at then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeSource {
    pub rel: PathBuf,
    pub identity: Option<Identity>,
}

/// Entries under `dir` whose name satisfies `wanted` (files, directories and links alike, as
/// `Path.rglob` yields them), descending into real directories only, at most `limit` of them, in
/// Python's path order.
fn entries_under(
    dir: &Path,
    recursive: bool,
    limit: usize,
    wanted: impl Fn(&OsStr) -> bool,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    'walk: while let Some(current) = pending.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if wanted(&entry.file_name()) {
                found.push(path.clone());
                if found.len() >= limit {
                    break 'walk;
                }
            }
            if recursive && entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            }
        }
    }
    sorted_like_python(found)
}

/// `*.md` as `Path.glob` matches it: any name ending in `.md`, `.md` itself included.
fn is_markdown_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().ends_with(b".md")
}

/// A `memory_index_extra_dirs` or `code_index_extra_dirs` entry that cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub field: &'static str,
    pub entry: String,
    pub error: GlobError,
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} entry {:?}: {}", self.field, self.entry, self.error)
    }
}

/// Expands one extra-sources entry: a pattern (`*`, `?` or `[`) is globbed over the root;
/// anything else names a directory that must exist and resolve inside the root, which `scan`
/// lists. The caller filters the candidates.
fn extra_candidates(
    root: &Path,
    field: &'static str,
    raw: &str,
    scan: impl Fn(&Path) -> Vec<PathBuf>,
) -> Result<Vec<PathBuf>, SourceError> {
    if has_magic(raw) {
        return glob(root, raw).map_err(|error| SourceError {
            field,
            entry: raw.to_owned(),
            error,
        });
    }
    Ok(dir_inside(root, raw).map_or_else(Vec::new, |dir| scan(&dir)))
}

/// An extra-sources entry that brings nothing in, and why; `index build` warns about each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusedEntry {
    pub field: &'static str,
    pub entry: String,
    pub why: &'static str,
}

impl fmt::Display for UnusedEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} entry {:?}: {}; nothing is indexed from it",
            self.field, self.entry, self.why
        )
    }
}

/// The `memory_index_extra_dirs` and `code_index_extra_dirs` entries the builders skip whole: a
/// directory that does not exist, is not a directory or resolves outside the project, or a
/// pattern that matches nothing (its error, if any, is the builders' to report). The reference
/// skips them silently.
pub fn unused_extra_dirs(root: &Path, description: &Description) -> Vec<UnusedEntry> {
    let fields = [
        ("memory_index_extra_dirs", &description.memory_extra_dirs),
        ("code_index_extra_dirs", &description.code_extra_dirs),
    ];
    let mut unused = Vec::new();
    for (field, entries) in fields {
        for raw in entries {
            let why = if has_magic(raw) {
                match glob(root, raw) {
                    Ok(found) if found.is_empty() => "the pattern matches nothing in the project",
                    _ => continue,
                }
            } else {
                let dir = python_join(root, raw);
                if dir_inside(root, raw).is_some() {
                    continue;
                } else if !dir.exists() {
                    "no such directory in the project"
                } else if !dir.is_dir() {
                    "not a directory"
                } else {
                    "the directory resolves outside the project"
                }
            };
            unused.push(UnusedEntry {
                field,
                entry: raw.clone(),
                why,
            });
        }
    }
    unused
}

/// `root / raw` if it is a directory whose realpath stays inside `root`: the only directories
/// the scans list. One linked out of the project is not scanned at all (a `workSummaries` linked
/// to `/` would otherwise have the builder walk the whole machine).
fn dir_inside(root: &Path, raw: &str) -> Option<PathBuf> {
    let dir = python_join(root, raw);
    (dir.is_dir() && resolves_inside(&dir, root)).then_some(dir)
}

/// One `memory_index_exclude` entry: a plain path excludes itself and everything under it, a
/// pattern is fnmatch on the whole relative path (its `*` crosses `/`).
enum Exclude {
    Plain(String),
    Pattern(FnPattern),
}

impl Exclude {
    fn new(entry: &str) -> Exclude {
        if has_magic(entry) {
            Exclude::Pattern(FnPattern::new(entry))
        } else {
            Exclude::Plain(entry.to_owned())
        }
    }

    fn matches(&self, rel: &str) -> bool {
        match self {
            Exclude::Plain(path) => rel
                .strip_prefix(path.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
            Exclude::Pattern(pattern) => pattern.matches(rel),
        }
    }
}

/// The memory index's sources in the reference's order: `workSummaries/**/*.md`, the three top-level
/// documents, `docs_src/*.md`, `references/**/*.md`, then (a product addition) `docs/**/*.md`
/// less what an extra entry lists, then each `memory_index_extra_dirs` entry;
/// scratch directories dropped from every scan but the top-level documents; then the
/// `memory_index_exclude` matches dropped. Paths are under `root` (canonical); duplicates stay,
/// as in the reference.
pub fn memory_sources(root: &Path, description: &Description) -> Result<Vec<PathBuf>, SourceError> {
    let durable = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths
            .into_iter()
            .filter(|p| {
                let rel = p.strip_prefix(root).unwrap_or(p);
                !has_component_in(rel, &MEMORY_SCRATCH_DIRS)
            })
            .collect()
    };
    let scan = |dir: &Path, recursive: bool| {
        durable(entries_under(
            dir,
            recursive,
            MAX_SOURCE_FILES,
            is_markdown_name,
        ))
    };
    let scan_sub = |sub: &str, recursive: bool| -> Vec<PathBuf> {
        dir_inside(root, sub).map_or_else(Vec::new, |dir| scan(&dir, recursive))
    };
    let mut sources = Vec::new();
    sources.extend(scan_sub("workSummaries", true));
    for name in crate::corpus::sources::TOP_LEVEL_SOURCES {
        let path = root.join(name);
        if path.is_file() {
            sources.push(path);
        }
    }
    sources.extend(scan_sub("docs_src", false));
    sources.extend(scan_sub("references", true));
    let mut extra = Vec::new();
    for raw in &description.memory_extra_dirs {
        let candidates =
            extra_candidates(root, "memory_index_extra_dirs", raw, |dir| scan(dir, true))?;
        let candidates = if has_magic(raw) {
            durable(sorted_like_python(candidates))
        } else {
            candidates
        };
        extra.extend(candidates.into_iter().filter(|c| {
            c.is_file() && c.extension() == Some(OsStr::new("md")) && resolves_inside(c, root)
        }));
        if sources.len() + extra.len() >= MAX_SOURCE_FILES {
            break;
        }
    }
    // A product addition: the project's `docs/**/*.md` (`DEFAULT_DOCS_DIR`), which the reference
    // does not read. Its staleness rules still find the index fresh (they hash the indexed
    // documents and compare its own source list's mtimes). A page an extra entry lists comes
    // once, where that entry puts it.
    let listed: HashSet<&PathBuf> = extra.iter().collect();
    let docs: Vec<PathBuf> = scan_sub(DEFAULT_DOCS_DIR, true)
        .into_iter()
        .filter(|p| !listed.contains(p))
        .collect();
    sources.extend(docs);
    // Deliberate difference: the reference reads these built-in sources through any symlink;
    // the product never indexes a file that resolves outside the project (it would copy its
    // text into the index). Extra entries got the reference's own realpath check above.
    sources.retain(|p| resolves_inside(p, root));
    sources.extend(extra);
    let excludes: Vec<Exclude> = description
        .memory_exclude
        .iter()
        .map(|e| Exclude::new(e))
        .collect();
    if !excludes.is_empty() {
        sources.retain(|p| {
            let Ok(rel) = p.strip_prefix(root) else {
                return true;
            };
            let rel = rel.to_string_lossy();
            !excludes.iter().any(|e| e.matches(&rel))
        });
    }
    sources.truncate(MAX_SOURCE_FILES);
    Ok(sources)
}

/// The code index's local sources, relative to `root` (canonical), sorted by their string form
/// and unique: `git ls-files -co --exclude-standard` when the root is a plain git work tree, else
/// a pruned walk, plus each `code_index_extra_dirs` entry (a glob, or a directory scanned
/// recursively for code suffixes; realpaths must stay inside the root).
pub fn code_sources(
    root: &Path,
    description: &Description,
    git: &GitSettings,
) -> Result<Vec<CodeSource>, SourceError> {
    let code = |listed: Vec<PathBuf>| -> Vec<PathBuf> {
        (listed.into_iter())
            .filter(|p| language_for(p).is_some())
            .collect()
    };
    let mut sources =
        git_sources(root, git, &code).unwrap_or_else(|| files_inside(root, code(walk_code(root))));
    for raw in &description.code_extra_dirs {
        // `rglob("*.py")` and friends: the suffix as written, case and all.
        let scan = |dir: &Path| {
            entries_under(dir, true, MAX_SOURCE_FILES, |name| {
                Path::new(name)
                    .extension()
                    .is_some_and(|ext| LANGUAGES.iter().any(|(e, _)| OsStr::new(e) == ext))
            })
        };
        let candidates = extra_candidates(root, "code_index_extra_dirs", raw, scan)?;
        sources.extend(
            candidates
                .into_iter()
                .filter(|c| c.is_file() && language_for(c).is_some() && resolves_inside(c, root))
                .filter_map(|c| {
                    let rel = c.strip_prefix(root).ok()?.to_path_buf();
                    Some(CodeSource {
                        identity: Identity::of(&c),
                        rel,
                    })
                }),
        );
        if sources.len() >= 2 * MAX_SOURCE_FILES {
            break;
        }
    }
    sources.sort_by(|a, b| a.rel.as_os_str().cmp(b.rel.as_os_str()));
    sources.dedup_by(|a, b| a.rel == b.rel);
    sources.truncate(MAX_SOURCE_FILES);
    Ok(sources)
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

/// The sources `git ls-files -co --exclude-standard -z` lists through gitread
/// ([`GitRead::list_files`]), with their identities: the same repository checks (a `.git` file,
/// link or `commondir` leading outside the project is refused; filter drivers are refused), the
/// same hardened invocation and process control. The tracked ones (`code` keeps the code files
/// of a listing) are looked at while git still walks the tree for the untracked ones. `None`
/// when the root is no such work tree, git is missing, refuses, fails, times out or lists more
/// than [`MAX_GIT_LISTING_BYTES`]: the caller walks the tree instead.
fn git_sources(
    root: &Path,
    git: &GitSettings,
    code: &dyn Fn(Vec<PathBuf>) -> Vec<PathBuf>,
) -> Option<Vec<CodeSource>> {
    let gitread = GitRead::with_settings(root, git).ok()?;
    let look = |listing: &[u8]| files_inside(root, code(listed_paths(listing)));
    let (mut sources, untracked) = gitread
        .list_files(GIT_LISTING_TIMEOUT, MAX_GIT_LISTING_BYTES, look)
        .ok()?;
    sources.extend(look(&untracked));
    Some(sources)
}

/// The paths of a NUL-separated listing that are UTF-8 and plain relative paths.
fn listed_paths(listing: &[u8]) -> Vec<PathBuf> {
    listing
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .filter_map(|s| std::str::from_utf8(s).ok())
        .map(PathBuf::from)
        .filter(|p| p.components().all(|c| matches!(c, Component::Normal(_))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths of a listing that succeeded.
    fn code_rels(listed: Result<Vec<CodeSource>, SourceError>) -> Vec<PathBuf> {
        listed.unwrap().into_iter().map(|s| s.rel).collect()
    }
    use crate::scratch::TempDir;

    #[test]
    fn languages_by_suffix() {
        assert_eq!(language_for(Path::new("a/B.PY")), Some("python"));
        assert_eq!(language_for(Path::new("x.bash")), Some("shell"));
        assert_eq!(language_for(Path::new("lib.rs")), Some("rust"));
        assert_eq!(language_for(Path::new("x.tsx")), Some("typescript"));
        assert_eq!(language_for(Path::new("README.md")), None);
        assert_eq!(language_for(Path::new("Makefile")), None);
    }

    #[test]
    fn exclude_rules() {
        let plain = Exclude::new("docs/drafts");
        assert!(plain.matches("docs/drafts"));
        assert!(plain.matches("docs/drafts/a.md"));
        assert!(!plain.matches("docs/drafts-old/a.md"));
        assert!(!plain.matches("docs/draft"));
        assert!(!plain.matches("x/docs/drafts/a.md"));
        let pattern = Exclude::new("*.tmp.md");
        assert!(pattern.matches("a.tmp.md"));
        assert!(pattern.matches("deep/dir/a.tmp.md")); // `*` crosses `/`
        assert!(!pattern.matches("a.md"));
        let set = Exclude::new("notes/[!k]*");
        assert!(set.matches("notes/a.md"));
        assert!(!set.matches("notes/keep.md"));
    }

    struct Tree(TempDir);

    impl Tree {
        fn new(tag: &str) -> Tree {
            Tree(TempDir::new(&format!("sources-{tag}")))
        }
        fn file(&self, rel: &str) -> PathBuf {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "# x\n").unwrap();
            path
        }
        fn link(&self, target: &Path, rel: &str) {
            let path = self.0.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, path).unwrap();
        }
        fn relative(&self, paths: Vec<PathBuf>) -> Vec<String> {
            paths
                .into_iter()
                .map(|p| {
                    p.strip_prefix(&self.0)
                        .unwrap_or(&p)
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        }
    }

    fn described(memory: &[&str], exclude: &[&str], code: &[&str]) -> Description {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        Description {
            memory_extra_dirs: owned(memory),
            memory_exclude: owned(exclude),
            code_extra_dirs: owned(code),
            ..Description::default()
        }
    }

    #[test]
    fn memory_extra_dirs_in_reference_order_with_excludes() {
        let tree = Tree::new("memory");
        for rel in [
            "README.md",
            "references/r.md",
            "guides/b.md",
            "guides/a.md",
            "guides/sub/c.md",
            "guides/node_modules/skip.md",
            "guides/upper.MD",
            "guides/drafts/d.md",
            "notes/n.md",
            "notes/n.txt",
        ] {
            tree.file(rel);
        }
        fs::create_dir_all(tree.0.join("guides/dir.md")).unwrap();
        let description = described(
            &["guides", "notes/*", "missing", "guides/a.md"],
            &["guides/drafts"],
            &[],
        );
        let sources = memory_sources(&tree.0, &description).unwrap();
        assert_eq!(
            tree.relative(sources),
            [
                "README.md",
                "references/r.md",
                "guides/a.md",
                "guides/b.md",
                "guides/sub/c.md",
                "notes/n.md",
            ]
        );
        let everything = described(&["**/*.md"], &["*.md"], &[]);
        assert!(memory_sources(&tree.0, &everything).unwrap().is_empty());
    }

    #[test]
    fn escaping_entries_and_links_are_refused() {
        let outside = Tree::new("outside");
        outside.file("o.md");
        outside.file("o.py");
        let tree = Tree::new("escape");
        tree.file("inside/i.md");
        tree.file("inside/i.py");
        tree.link(&outside.0, "out");
        // Under `tmp/`, which the fallback walk prunes: only the extra entries reach them.
        tree.file("tmp/t.py");
        tree.link(&outside.0.join("o.md"), "tmp/link.md");
        tree.link(&outside.0.join("o.py"), "tmp/link.py");
        tree.link(&tree.0.join("inside"), "alias");
        let parent = format!("../{}", outside.0.file_name().unwrap().to_str().unwrap());
        let entries = [
            "tmp",
            "tmp/*.md",
            "tmp/*.py",
            "out",
            "out/*.md",
            "out/*.py",
            "inside",
            "alias",
            parent.as_str(),
            "../*/*.md",
            "../*/*.py",
        ];
        let description = described(&entries, &[], &entries);
        let memory = memory_sources(&tree.0, &description).unwrap();
        assert_eq!(
            tree.relative(memory),
            ["inside/i.md", "alias/i.md"],
            "links and `..` leading out of the root are refused"
        );
        let code = code_rels(code_sources(&tree.0, &description, &GitSettings::default()));
        let code: Vec<String> = code
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert!(code.contains(&"inside/i.py".to_owned()), "{code:?}");
        assert!(code.contains(&"tmp/t.py".to_owned()), "{code:?}");
        assert!(code.contains(&"alias/i.py".to_owned()), "{code:?}");
        assert!(
            !code
                .iter()
                .any(|p| p.contains("o.py") || p.contains("link.py")),
            "{code:?}"
        );
    }

    #[test]
    fn built_in_sources_linking_out_of_the_project_are_dropped() {
        let outside = Tree::new("outside-builtin");
        outside.file("o.md");
        outside.file("o.py");
        outside.file("summaries/s.md");
        let tree = Tree::new("builtin");
        tree.file("references/kept.md");
        tree.file("src/kept.py");
        tree.link(&outside.0.join("o.md"), "README.md");
        tree.link(&outside.0.join("o.md"), "references/leak.md");
        tree.link(&outside.0.join("summaries"), "workSummaries");
        tree.link(&outside.0.join("o.py"), "src/leak.py");
        tree.link(&tree.0.join("src/kept.py"), "src/alias.py");
        // A link under the outside folder that leads back in: the folder is not scanned at all
        // (a `workSummaries` linked to `/` would otherwise be a walk of the whole machine).
        outside.link(&tree.0.join("references/kept.md"), "summaries/back.md");
        let none = Description::default();
        let memory = memory_sources(&tree.0, &none).unwrap();
        assert_eq!(tree.relative(memory), ["references/kept.md"]);
        let code = code_rels(code_sources(&tree.0, &none, &GitSettings::default()));
        assert_eq!(code, ["src/alias.py", "src/kept.py"].map(PathBuf::from));
    }

    #[test]
    fn files_looked_at_on_two_threads_come_out_in_order_with_the_same_refusals() {
        // Enough files for two halves, each with a link leading out, a link staying in, a file
        // under a directory link leading out, and an entry that is gone.
        let outside = Tree::new("outside-halves");
        outside.file("o.py");
        outside.file("d/x.py");
        let tree = Tree::new("halves");
        let count = 2 * MIN_FILES_TO_SPLIT;
        let mut listed = Vec::new();
        let mut expected = Vec::new();
        for i in 0..count {
            let rel = format!("p{}/f{i:04}.py", i / 100);
            tree.file(&rel);
            listed.push(PathBuf::from(&rel));
            expected.push(rel.clone());
            if i % MIN_FILES_TO_SPLIT == 7 {
                let half = i / MIN_FILES_TO_SPLIT;
                tree.link(
                    &outside.0.join("o.py"),
                    &format!("p{}/leak{half}.py", i / 100),
                );
                tree.link(&tree.0.join(&rel), &format!("p{}/same{half}.py", i / 100));
                tree.link(&outside.0.join("d"), &format!("out{half}"));
                for name in ["leak", "same"] {
                    listed.push(PathBuf::from(format!("p{}/{name}{half}.py", i / 100)));
                }
                expected.push(format!("p{}/same{half}.py", i / 100));
                listed.push(PathBuf::from(format!("out{half}/x.py")));
                listed.push(PathBuf::from(format!("p{}/gone{half}.py", i / 100)));
            }
        }
        let found = files_inside(&tree.0, listed.clone());
        let rels: Vec<String> = (found.iter())
            .map(|s| s.rel.to_string_lossy().into_owned())
            .collect();
        let mut in_listed_order = expected.clone();
        in_listed_order.sort_by_key(|r| listed.iter().position(|l| l == Path::new(r)));
        assert_eq!(rels, in_listed_order);
        for source in &found {
            let path = tree.0.join(&source.rel);
            assert_eq!(source.identity, Identity::of(&path), "{}", path.display());
        }
        // One thread's answer is the same.
        assert_eq!(files_inside(&tree.0, listed[..7].to_vec()), found[..7]);
    }

    #[test]
    fn code_extra_dirs_are_sorted_and_unique() {
        let tree = Tree::new("code");
        for rel in [
            "tools/b.py",
            "tools/a.sh",
            "tools/UPPER.PY",
            "tools/deep/c.rs",
            "tools/x.txt",
        ] {
            tree.file(rel);
        }
        // `tools` is walked already (no git here); the extra entries add nothing new twice.
        let description = described(&[], &[], &["tools", "tools/*.PY", "tools/*.py"]);
        let code = code_rels(code_sources(&tree.0, &description, &GitSettings::default()));
        assert_eq!(
            code,
            [
                "tools/UPPER.PY",
                "tools/a.sh",
                "tools/b.py",
                "tools/deep/c.rs"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_bad_pattern_names_the_field_and_entry() {
        let tree = Tree::new("bad-pattern");
        let description = described(&["docs/a**"], &[], &[]);
        let err = memory_sources(&tree.0, &description).unwrap_err();
        assert_eq!(
            err.to_string(),
            "memory_index_extra_dirs entry \"docs/a**\": `**` can only be an entire path component (found \"a**\")"
        );
        let description = described(&[], &[], &["x**"]);
        assert_eq!(
            code_sources(&tree.0, &description, &GitSettings::default())
                .unwrap_err()
                .field,
            "code_index_extra_dirs"
        );
    }
}
