//! Whether an index may be stale (a result's `may_be_stale`), judged by the reference CLI's rules
//! (REFERENCE-BEHAVIOUR.md §9) from file times alone, so a query never re-reads its sources.
//!
//! The memory index and the local partition are stale when `built_at` does not parse, when a
//! document's file is gone or modified after `built_at`, or, for files the build would add, when
//! a folder holding an indexed document (or, for the memory index, one of the project's top-level
//! sources) changed after it. The reference compares each document's hash too: a file rewritten
//! with an older mtime is not noticed here, a file touched but unchanged is (the reference's mtime
//! rule says stale then as well). A new file in a folder that held no indexed document is not
//! noticed; an index over more than [`MAX_STALENESS_FILES`] documents says `true`.
//!
//! The API partitions' rule recomputes the dependency fingerprint (the manifests' text, every
//! `.py` file's imports, the environment's distributions): [`dependencies_may_be_stale`] looks at
//! the manifests' and the environments' times instead, and the imports are the local partition's.
//!
//! Cost per answer: one `lstat` per document, one resolution ([`teamdir::confine`], an `lstat`
//! per path component) and one `stat` per distinct folder; at most [`MAX_STALENESS_FILES`] files;
//! for the API partitions six manifests and each environment's `site-packages`. recall reuses a
//! verdict for [`VERDICT_REUSE`] ([`Verdicts`]), so a change shows in answers within a second.

use crate::corpus::built_at::Stamp;
use crate::corpus::sources::{DEPENDENCY_MANIFESTS, ENVIRONMENT_DIRS, TOP_LEVEL_SOURCES};
use crate::corpus::teamdir::{self, TEAM_DIRS};
use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most documents whose files one answer checks; an index with more says `may_be_stale: true`
/// (a bound on the `stat` work per query: about 4 µs a document measured, so 8 ms at the bound).
pub const MAX_STALENESS_FILES: usize = 2000;

/// How long a verdict is reused: answers within it of the look that made it say what that look
/// found, so a burst of queries (an agent's parallel calls, a script's) pays for one look (about
/// 4 ms for the standard library's 1,763 files), and a file changed since shows within this long.
pub const VERDICT_REUSE: Duration = Duration::from_secs(1);

/// The last verdicts of [`may_be_stale`], per index (named by the caller) and build stamps.
#[derive(Debug, Default)]
pub struct Verdicts {
    kept: Mutex<Vec<Verdict>>,
}

#[derive(Debug)]
struct Verdict {
    key: (&'static str, String, String),
    stale: bool,
    made: Instant,
}

impl Verdicts {
    /// `judge` (a [`may_be_stale`] of the index `name` of `built_at` and `last_build`), unless
    /// a verdict on the same index and stamps was made less than [`VERDICT_REUSE`] ago.
    pub fn reuse(
        &self,
        name: &'static str,
        built_at: &str,
        last_build: &str,
        judge: impl FnOnce() -> bool,
    ) -> bool {
        let key = (name, built_at.to_owned(), last_build.to_owned());
        let reusable = |v: &Verdict| v.made.elapsed() < VERDICT_REUSE;
        {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = kept.iter().find(|v| v.key == key).filter(|v| reusable(v)) {
                return v.stale;
            }
        }
        let made = Instant::now();
        let stale = judge();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        // One verdict per index name: another build's is of no more use.
        kept.retain(|v| v.key.0 != name);
        kept.push(Verdict { key, stale, made });
        stale
    }
}

/// Entries of an environment's `lib` folder looked at for `python*` (a planted folder of
/// millions of entries is not listed to its end).
pub const MAX_ENVIRONMENT_ENTRIES: usize = 64;

/// Whether an index of `built_at` over the documents at `paths` (as stored: relative to `root` or
/// absolute) may be stale; `top_level` also checks [`TOP_LEVEL_SOURCES`]. Files are compared with
/// `built_at` (the reference's rule), folders with `last_build`, the stamp of the build that last
/// looked at them: a code partition whose content did not change keeps its older `built_at`
/// (as the reference keeps it), so a file added beside its sources since, and looked at by a
/// later build (a `__pycache__`, a note), must not make it stale for ever. `true` whenever it
/// cannot tell: a stamp that does not parse, too many documents, a path outside the project.
pub fn may_be_stale<'a>(
    root: &Path,
    built_at: &str,
    last_build: &str,
    paths: impl ExactSizeIterator<Item = &'a str>,
    top_level: bool,
) -> bool {
    let (Some(built_at), Some(last_build)) = (Stamp::parse(built_at), Stamp::parse(last_build))
    else {
        return true;
    };
    if paths.len() > MAX_STALENESS_FILES {
        return true;
    }
    let later = |path: &Path| later_than(built_at, path);
    // Each folder resolved and confined once (the answer never depends on a file outside the
    // project), then each file looked at without following a link: resolving every document's
    // path component by component cost ten times the ranking.
    let mut folders: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for stored in paths {
        let path = root.join(stored);
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return true;
        };
        let Some(folder) = folders
            .entry(parent.to_path_buf())
            .or_insert_with(|| teamdir::confine(root, parent).ok())
            .clone()
        else {
            return true;
        };
        let file = folder.join(name);
        let regular = match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.file_type().is_symlink() => teamdir::confine(root, &file)
                .ok()
                .and_then(|target| std::fs::metadata(target).ok()),
            Ok(meta) => Some(meta),
            Err(_) => None,
        };
        match regular {
            Some(meta) if meta.is_file() && !modified_after(built_at, &meta) => {}
            _ => return true,
        }
    }
    let mut folders: BTreeSet<PathBuf> = folders.into_values().flatten().collect();
    // The folders the builder writes into change with every build, whatever the sources do.
    for team in TEAM_DIRS {
        let references = root.join(team).join("references");
        folders.remove(&references.join("code-index"));
        folders.remove(&references);
    }
    // The root changes when a team dir or any top-level file appears: its sources are checked
    // by name instead.
    folders.remove(root);
    if folders.iter().any(|f| later_than(last_build, f)) {
        return true;
    }
    top_level
        && TOP_LEVEL_SOURCES.iter().any(|name| {
            let path = root.join(name);
            path.exists() && later(&path)
        })
}

/// Whether `path` was modified after `built_at` (or cannot be read: then it cannot tell).
fn later_than(built_at: Stamp, path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |meta| modified_after(built_at, &meta))
}

fn modified_after(built_at: Stamp, meta: &std::fs::Metadata) -> bool {
    !built_at.is_after(meta.mtime(), meta.mtime_nsec() as u32)
}

/// Whether the API partitions may be stale by what file times show of their rule's inputs (a
/// fresh dependency fingerprint) since `last_build` (the code index's last build, which computed
/// it; a partition whose fingerprint did not change keeps an older `built_at`): a manifest of
/// [`DEPENDENCY_MANIFESTS`] modified or added, or a project environment's `site-packages` folder
/// changed (a distribution installed, removed or upgraded). The imports of the `.py` files are
/// the local partition's part ([`may_be_stale`]), judged by the caller. An index built with
/// `--python PATH` read another environment, which this does not see.
pub fn dependencies_may_be_stale(root: &Path, last_build: &str) -> bool {
    let Some(built_at) = Stamp::parse(last_build) else {
        return true;
    };
    // Confined before anything is learnt of them, like every path recall opens.
    let changed = |path: &Path| match teamdir::confine(root, path) {
        Ok(inside) => inside.exists() && later_than(built_at, &inside),
        Err(_) => true,
    };
    if DEPENDENCY_MANIFESTS.iter().any(|m| changed(&root.join(m))) {
        return true;
    }
    ENVIRONMENT_DIRS.iter().any(|venv| {
        let lib = root.join(venv).join("lib");
        let Ok(entries) = std::fs::read_dir(&lib) else {
            return false;
        };
        entries
            .flatten()
            .take(MAX_ENVIRONMENT_ENTRIES)
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .any(|e| changed(&e.path().join("site-packages")))
    })
}
