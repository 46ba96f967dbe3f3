//! Whether an index may be stale (a result's `may_be_stale`), judged by the reference CLI's rules
//! (REFERENCE-BEHAVIOUR.md §9) from file times alone, so a query never re-reads its sources.
//!
//! The memory index and the local partition are stale when `built_at` does not parse, when a
//! document's file is gone or modified after `built_at`, or, for files the build would add, when
//! a folder holding an indexed document (or, for the memory index, one of the project's top-level
//! sources) changed after it. The reference compares each document's hash too: a file rewritten
//! with an older mtime is not noticed here, a file touched but unchanged is (the reference's mtime
//! rule says stale then as well). A new file in a folder that held no indexed document, and the
//! API partitions' dependency fingerprint (every `.py` file's imports and the environment's
//! metadata), cannot be judged cheaply: an answer drawing on an API partition says `true`, as does
//! one over more than [`MAX_STALENESS_FILES`] documents.
//!
//! Cost: one resolution (an `lstat` per path component, [`teamdir::confine`]) and one `stat` per
//! document, one `stat` per distinct folder, per answer; at most [`MAX_STALENESS_FILES`] files.

use crate::corpus::built_at::{built_after, is_stamp};
use crate::corpus::teamdir::{self, TEAM_DIRS};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Most documents whose files one answer checks; an index with more says `may_be_stale: true`
/// (a bound on the `stat` work per query: a few milliseconds on a warm cache).
pub const MAX_STALENESS_FILES: usize = 2000;

/// The memory index's sources that are single files at the project's root, whose appearance the
/// folder check cannot see (the root folder also changes when a team dir is first written).
pub const TOP_LEVEL_SOURCES: [&str; 3] = ["CHANGELOG.md", "README.md", "build-team-plan.md"];

/// Whether an index of `built_at` over the documents at `paths` (as stored: relative to `root` or
/// absolute) may be stale; `top_level` also checks [`TOP_LEVEL_SOURCES`]. `true` whenever it
/// cannot tell: a stamp that does not parse, too many documents, a path outside the project.
pub fn may_be_stale<'a>(
    root: &Path,
    built_at: &str,
    paths: impl ExactSizeIterator<Item = &'a str>,
    top_level: bool,
) -> bool {
    if !is_stamp(built_at) || paths.len() > MAX_STALENESS_FILES {
        return true;
    }
    let later = |path: &Path| match std::fs::metadata(path) {
        Ok(meta) => !built_after(built_at, meta.mtime(), meta.mtime_nsec() as u32),
        Err(_) => true,
    };
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for stored in paths {
        // Resolved and confined first: the answer never depends on a file outside the project.
        let Ok(file) = teamdir::confine(root, &root.join(stored)) else {
            return true;
        };
        if !file.is_file() || later(&file) {
            return true;
        }
        if let Some(folder) = file.parent() {
            folders.insert(folder.to_path_buf());
        }
    }
    // The folders the builder writes into change with every build, whatever the sources do.
    for team in TEAM_DIRS {
        let references = root.join(team).join("references");
        folders.remove(&references.join("code-index"));
        folders.remove(&references);
    }
    // The root changes when a team dir or any top-level file appears: its sources are checked
    // by name instead.
    folders.remove(root);
    if folders.iter().any(|f| later(f)) {
        return true;
    }
    top_level
        && TOP_LEVEL_SOURCES.iter().any(|name| {
            let path = root.join(name);
            path.exists() && later(&path)
        })
}
