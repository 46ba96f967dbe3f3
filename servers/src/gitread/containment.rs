//! Containment of everything git may read below the repository's git dirs: no entry anywhere in
//! them is a link leading out, a FIFO or a device, or a file of absurd size; the verdict is cached
//! on the identity of every directory and file it looked at.
//!
//! git follows every symlink below its git dir: a fan-out folder `objects/ab` linked to another
//! repository's, or `refs/heads/main` linked to another repository's branch, hands git that
//! repository's history. Checking a fixed list of entries cannot close that, so the whole of the
//! common dir (and of the git dir, for a linked worktree) is walked: every symlink must resolve
//! inside one of the walked directories, every non-directory must be a regular file or a socket
//! (opening a socket fails at once; a FIFO would block git, a device would stream to it), and a
//! file git reads whole must not be larger than it could ever legitimately be. Only what git never
//! reads under the hardened invocation is left out: `hooks/` (`core.hooksPath=/dev/null`), and the
//! `lfs/` and `annex/` stores of tools whose programs never run here.
//!
//! The walk is cached per directory: a directory whose identity ([`Stamp`]) is unchanged has the
//! same entries (adding, removing, renaming or replacing an entry changes its mtime and ctime), so
//! its listing is reused and only the files that could change in place (refs, logs, the index,
//! `info/*`: everything outside `objects/`, whose files git never rewrites) are stat'ed again. A
//! call on an unchanged repository therefore costs one `fstat` per directory and per such file,
//! through handles held open (up to [`MAX_HELD_HANDLES`]), not a walk nor path lookups; a
//! directory or file changed within [`RACY_WINDOW`](super::stamp::RACY_WINDOW) of the look is not
//! cached at all.
//!
//! This is not a defence against a process rewriting the repository while git runs (SECURITY.md,
//! residual risks) nor against hard links, which no archive or clone can make to a file outside.

use super::repo::Layout;
use super::stamp::{Stamp, RACY_WINDOW};
use crate::regular_file;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{self, File, FileType};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

/// Largest loose ref, symref or `*_HEAD` file (other than `FETCH_HEAD`) accepted. A ref holds an
/// object id or `ref: <name>`, and a name is at most a path (4 KiB on Linux), so anything near this
/// size is not a ref: git would read it whole, and a sparse file of any size reads as zeros.
pub const MAX_REF_FILE_BYTES: u64 = 64 * 1024;

/// Largest other file below the git dirs that git reads whole or maps whole (`packed-refs`, reflogs,
/// the index and shared indexes, `shallow`, `FETCH_HEAD`, `info/*`, `config`): 1 GiB, beyond what
/// git could process under its memory limit. Files below `objects/` are exempt: git maps packs in
/// windows and streams loose objects, and the memory limit bounds what it does with them.
pub const MAX_DATA_FILE_BYTES: u64 = 1 << 30;

/// Most entries (files, links and directories) walked below the git dirs; a repository with more
/// is refused rather than walked without end.
pub const MAX_GIT_DIR_ENTRIES: usize = 1 << 22;

/// Top-level entries of a git dir that git never reads under the hardened invocation.
const UNREAD_TOP_LEVEL: [&str; 3] = ["hooks", "lfs", "annex"];

/// One directory as the last walk found it.
#[derive(Debug)]
struct Listing {
    stamp: Stamp,
    subdirs: Vec<PathBuf>,
    /// Files that could change in place, with the stamp of what they resolve to.
    watched: Vec<(PathBuf, Stamp)>,
    entries: usize,
}

impl Listing {
    /// True while the directory and every watched file are as they were listed.
    fn is_current(&self, dir: &Path) -> bool {
        Stamp::unfollowed(dir) == Some(self.stamp)
            && self
                .watched
                .iter()
                .all(|(path, stamp)| Stamp::followed(path) == Some(*stamp))
    }

    fn is_settled(&self, started: SystemTime) -> bool {
        self.stamp.is_settled(started, RACY_WINDOW)
            && self
                .watched
                .iter()
                .all(|(_, stamp)| stamp.is_settled(started, RACY_WINDOW))
    }
}

/// Most open handles one server keeps to re-verify an unchanged repository (a directory or file is
/// stat'ed through its handle, without a path lookup); paths past it are stat'ed by path.
pub const MAX_HELD_HANDLES: usize = 256;

/// One path an unchanged repository is re-verified by: a directory (stamped unfollowed) or a
/// watched file (followed), through a held handle where one is kept.
///
/// A handle follows its inode, not its path, and that is enough below a top: replacing, adding or
/// renaming an entry changes its parent directory's stamp, and every parent up to the top is
/// checked too. Only a top itself is checked by path (its parent is not walked).
#[derive(Debug)]
struct Watch {
    path: PathBuf,
    stamp: Stamp,
    is_dir: bool,
    handle: Option<File>,
}

impl Watch {
    fn is_unchanged(&self) -> bool {
        let now = match &self.handle {
            Some(handle) => handle.metadata().ok().map(|m| Stamp::of(&m)),
            None if self.is_dir => Stamp::unfollowed(&self.path),
            None => Stamp::followed(&self.path),
        };
        now == Some(self.stamp)
    }
}

#[derive(Debug, Default)]
struct Cache {
    layout: Option<Layout>,
    listings: HashMap<PathBuf, Listing>,
    /// When the last walk passed and every listing was cached: each directory and watched file,
    /// so an unchanged repository costs one `fstat` (or `stat`) per path and nothing else.
    settled: Option<Vec<Watch>>,
}

impl Cache {
    fn is_unchanged(&self) -> bool {
        self.settled
            .as_ref()
            .is_some_and(|watches| watches.iter().all(Watch::is_unchanged))
    }
}

/// The containment check of one server, with its cache.
#[derive(Debug, Default)]
pub struct Containment {
    cache: Mutex<Cache>,
}

impl Containment {
    /// `Ok` when nothing below `layout`'s git dirs leads out, blocks or inflates; else the refusal,
    /// naming the entry (relative to `root` where it lies inside).
    pub fn check(&self, root: &Path, layout: &Layout) -> Result<(), String> {
        self.check_cached(root, layout).map(drop)
    }

    /// [`check`](Self::check), telling whether the cache answered (`true`) or the walk ran.
    pub fn check_cached(&self, root: &Path, layout: &Layout) -> Result<bool, String> {
        self.check_within(root, layout, MAX_GIT_DIR_ENTRIES)
    }

    /// [`check`](Self::check) with at most `max_entries` entries walked.
    fn check_within(
        &self,
        root: &Path,
        layout: &Layout,
        max_entries: usize,
    ) -> Result<bool, String> {
        let started = SystemTime::now();
        let mut cache = self.lock();
        if cache.layout.as_ref() != Some(layout) {
            *cache = Cache {
                layout: Some(layout.clone()),
                ..Cache::default()
            };
        } else if cache.is_unchanged() {
            return Ok(true);
        }
        let mut previous = std::mem::take(&mut cache.listings);
        let mut kept = HashMap::with_capacity(previous.len());
        let walked = walk(layout, root, &mut previous, &mut kept, started, max_entries);
        cache.settled = match walked {
            Ok(true) => Some(watches(&kept, &tops(layout), MAX_HELD_HANDLES)),
            _ => None,
        };
        cache.listings = kept;
        walked.map(|_| false)
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The directories walked: the common dir, and the git dir when it lies elsewhere.
fn tops(layout: &Layout) -> Vec<&Path> {
    let mut tops = vec![layout.common_dir.as_path()];
    if !layout.git_dir.starts_with(&layout.common_dir) {
        tops.push(layout.git_dir.as_path());
    }
    tops
}

/// Every directory and watched file of `listings`, with a handle for each (but the tops) up to
/// `max_held` ([`MAX_HELD_HANDLES`]). A handle is kept only if what it opened has the stamp the
/// walk recorded.
fn watches(listings: &HashMap<PathBuf, Listing>, tops: &[&Path], max_held: usize) -> Vec<Watch> {
    let mut watches = Vec::new();
    for (dir, listing) in listings {
        watches.push(Watch {
            path: dir.clone(),
            stamp: listing.stamp,
            is_dir: true,
            handle: None,
        });
        watches.extend(listing.watched.iter().map(|(path, stamp)| Watch {
            path: path.clone(),
            stamp: *stamp,
            is_dir: false,
            handle: None,
        }));
    }
    let mut held = 0;
    for watch in &mut watches {
        if held == max_held {
            break;
        }
        if tops.iter().any(|top| *top == watch.path) {
            continue;
        }
        let opened = if watch.is_dir {
            regular_file::open_directory(&watch.path)
        } else {
            regular_file::open(&watch.path)
        };
        watch.handle = opened.ok().filter(|handle| {
            handle
                .metadata()
                .is_ok_and(|m| Stamp::of(&m) == watch.stamp)
        });
        held += usize::from(watch.handle.is_some());
    }
    watches
}

/// Walks every top with an explicit stack, reusing `previous` listings that are still current and
/// moving each settled listing into `kept`; `Ok(true)` when every listing was settled.
fn walk(
    layout: &Layout,
    root: &Path,
    previous: &mut HashMap<PathBuf, Listing>,
    kept: &mut HashMap<PathBuf, Listing>,
    started: SystemTime,
    max_entries: usize,
) -> Result<bool, String> {
    let mut all_settled = true;
    let tops = tops(layout);
    let mut entries = 0usize;
    for top in &tops {
        let mut stack = vec![top.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let listing = match previous.remove(&dir) {
                Some(listing) if listing.is_current(&dir) => listing,
                _ => list(&dir, top, &tops, root)?,
            };
            entries += listing.entries;
            if entries > max_entries {
                return Err(format!(
                    "the repository's git dir holds more than {max_entries} entries; refusing"
                ));
            }
            stack.extend(listing.subdirs.iter().cloned());
            if listing.is_settled(started) {
                kept.insert(dir, listing);
            } else {
                all_settled = false;
            }
        }
    }
    Ok(all_settled)
}

/// Lists one directory below `top`, checking each entry.
fn list(dir: &Path, top: &Path, tops: &[&Path], root: &Path) -> Result<Listing, String> {
    let shown = |path: &Path| match path.strip_prefix(root) {
        Ok(inside) => inside.display().to_string(),
        Err(_) => path.display().to_string(),
    };
    let unreadable = |path: &Path, e: std::io::Error| format!("cannot read {}: {e}", shown(path));
    let stamp = fs::symlink_metadata(dir)
        .map(|m| Stamp::of(&m))
        .map_err(|e| unreadable(dir, e))?;
    let mut listing = Listing {
        stamp,
        subdirs: Vec::new(),
        watched: Vec::new(),
        entries: 0,
    };
    let is_top = dir == top;
    for entry in fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
        let entry = entry.map_err(|e| unreadable(dir, e))?;
        let path = entry.path();
        listing.entries += 1;
        if is_top && UNREAD_TOP_LEVEL.iter().any(|n| entry.file_name() == **n) {
            continue;
        }
        let file_type = entry.file_type().map_err(|e| unreadable(&path, e))?;
        if file_type.is_dir() {
            listing.subdirs.push(path);
            continue;
        }
        let relative = path.strip_prefix(top).unwrap_or(&path);
        let limit = size_limit(relative);
        let target_type = if file_type.is_symlink() {
            let resolved = fs::canonicalize(&path).map_err(|_| {
                format!(
                    "{} is a link that does not resolve inside the repository (a link outside the project's git dir would be followed by git); refusing",
                    shown(&path)
                )
            })?;
            if !is_walked(&resolved, tops) {
                return Err(format!(
                    "{} is a link leading outside the project's git dir, to {}; refusing",
                    shown(&path),
                    shown(&resolved)
                ));
            }
            let meta = fs::metadata(&path).map_err(|e| unreadable(&path, e))?;
            if meta.is_dir() {
                // A directory inside a walked top is walked in its own place.
                continue;
            }
            meta.file_type()
        } else {
            file_type
        };
        if target_type.is_socket() {
            // Opening a socket fails at once: git can neither block on it nor read from it.
            continue;
        }
        if !target_type.is_file() {
            return Err(format!(
                "{} is not a regular file ({}): git would block on it or read it without end; refusing",
                shown(&path),
                describe(target_type)
            ));
        }
        let Some(limit) = limit else {
            // Below objects/: never rewritten in place, checked again only when its folder changes.
            continue;
        };
        let meta = fs::metadata(&path).map_err(|e| unreadable(&path, e))?;
        if meta.len() > limit {
            return Err(format!(
                "{} is {} bytes, more than the {limit} such a file may hold; refusing",
                shown(&path),
                meta.len()
            ));
        }
        listing.watched.push((path, Stamp::of(&meta)));
    }
    Ok(listing)
}

/// True when `resolved` lies inside a walked top and not in a part of it the walk leaves out.
fn is_walked(resolved: &Path, tops: &[&Path]) -> bool {
    tops.iter().any(|top| {
        resolved.strip_prefix(top).is_ok_and(|rest| {
            rest.components()
                .next()
                .is_none_or(|first| !UNREAD_TOP_LEVEL.iter().any(|n| first.as_os_str() == *n))
        })
    })
}

/// The size limit of a file at `relative` (from its top), `None` for object storage.
fn size_limit(relative: &Path) -> Option<u64> {
    let names: Vec<&OsStr> = relative.components().map(|c| c.as_os_str()).collect();
    let has = |name: &str| names.iter().any(|n| *n == name);
    let first = names.first().copied().unwrap_or_default();
    if first == "objects" || (first == "modules" && has("objects")) {
        return None;
    }
    if has("logs") {
        return Some(MAX_DATA_FILE_BYTES);
    }
    let file_name = names.last().copied().unwrap_or_default();
    let is_head = file_name.as_encoded_bytes().ends_with(b"HEAD") && file_name != "FETCH_HEAD";
    if has("refs") || is_head {
        return Some(MAX_REF_FILE_BYTES);
    }
    Some(MAX_DATA_FILE_BYTES)
}

fn describe(file_type: FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scratch::TempDir;

    /// A git dir with one fan-out folder, `refs/heads` and `HEAD` (no git needed).
    fn repository(tag: &str) -> TempDir {
        let t = TempDir::new(tag);
        fs::create_dir_all(t.0.join(".git/objects/ab")).unwrap_or_default();
        fs::create_dir_all(t.0.join(".git/refs/heads")).unwrap_or_default();
        fs::write(t.0.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap_or_default();
        t
    }

    /// Sleeps until every change made so far is older than the racy window, so the next look
    /// counts its listings as settled.
    fn wait_past_racy_window() {
        std::thread::sleep(
            super::super::stamp::RACY_WINDOW + std::time::Duration::from_millis(100),
        );
    }

    fn layout(t: &TempDir) -> Layout {
        Layout {
            bare: false,
            git_dir: t.0.join(".git"),
            common_dir: t.0.join(".git"),
        }
    }

    /// The refusal of `containment` for `t` (empty if it passed).
    fn refusal(containment: &Containment, t: &TempDir) -> String {
        containment
            .check(&t.0, &layout(t))
            .err()
            .unwrap_or_default()
    }

    fn check(t: &TempDir) -> Result<(), String> {
        Containment::default().check(&t.0, &layout(t))
    }

    #[test]
    fn size_limits_follow_what_git_reads_whole() {
        let limit = |p: &str| size_limit(Path::new(p));
        assert_eq!(limit("objects/pack/pack-1.pack"), None);
        assert_eq!(limit("objects/ab/cdef"), None);
        assert_eq!(limit("modules/m/objects/ab/cd"), None);
        assert_eq!(limit("refs/heads/main"), Some(MAX_REF_FILE_BYTES));
        assert_eq!(limit("refs/heads/objects/x"), Some(MAX_REF_FILE_BYTES));
        assert_eq!(limit("HEAD"), Some(MAX_REF_FILE_BYTES));
        assert_eq!(limit("ORIG_HEAD"), Some(MAX_REF_FILE_BYTES));
        assert_eq!(limit("worktrees/w/HEAD"), Some(MAX_REF_FILE_BYTES));
        assert_eq!(limit("FETCH_HEAD"), Some(MAX_DATA_FILE_BYTES));
        assert_eq!(limit("logs/HEAD"), Some(MAX_DATA_FILE_BYTES));
        assert_eq!(limit("worktrees/w/logs/HEAD"), Some(MAX_DATA_FILE_BYTES));
        assert_eq!(limit("packed-refs"), Some(MAX_DATA_FILE_BYTES));
        assert_eq!(limit("index"), Some(MAX_DATA_FILE_BYTES));
    }

    #[test]
    fn files_at_their_size_limit_are_accepted_and_one_byte_more_is_refused() {
        let t = repository("reflimit");
        let main = t.0.join(".git/refs/heads/main");
        let file = fs::File::create(&main).unwrap_or_else(|e| panic!("{e}"));
        file.set_len(MAX_REF_FILE_BYTES).unwrap_or_default();
        assert_eq!(check(&t), Ok(()));
        file.set_len(MAX_REF_FILE_BYTES + 1).unwrap_or_default();
        let err = check(&t).err().unwrap_or_default();
        assert!(err.contains(".git/refs/heads/main is 65537 bytes"), "{err}");
        file.set_len(1).unwrap_or_default();
        // Any other file git reads whole: sparse, so the edge costs no disk.
        let packed = fs::File::create(t.0.join(".git/packed-refs"));
        let packed = packed.unwrap_or_else(|e| panic!("{e}"));
        packed.set_len(MAX_DATA_FILE_BYTES).unwrap_or_default();
        assert_eq!(check(&t), Ok(()));
        packed.set_len(MAX_DATA_FILE_BYTES + 1).unwrap_or_default();
        let err = check(&t).err().unwrap_or_default();
        assert!(
            err.contains(".git/packed-refs is 1073741825 bytes"),
            "{err}"
        );
    }

    #[test]
    fn links_inside_are_followed_and_links_out_or_dangling_are_refused() {
        let t = repository("links");
        fs::write(t.0.join(".git/refs/heads/main"), "0\n").unwrap_or_default();
        std::os::unix::fs::symlink("main", t.0.join(".git/refs/heads/alias")).unwrap_or_default();
        std::os::unix::fs::symlink("../objects", t.0.join(".git/refs/objects")).unwrap_or_default();
        assert_eq!(check(&t), Ok(()));
        // Into a part the walk leaves out: refused like a link out.
        fs::create_dir_all(t.0.join(".git/hooks")).unwrap_or_default();
        std::os::unix::fs::symlink("../hooks", t.0.join(".git/refs/h")).unwrap_or_default();
        let err = check(&t).err().unwrap_or_default();
        assert!(
            err.contains(".git/refs/h is a link leading outside"),
            "{err}"
        );
        fs::remove_file(t.0.join(".git/refs/h")).unwrap_or_default();
        std::os::unix::fs::symlink("/nonexistent", t.0.join(".git/objects/ab/cd"))
            .unwrap_or_default();
        let err = check(&t).err().unwrap_or_default();
        assert!(
            err.contains(".git/objects/ab/cd is a link that does not resolve"),
            "{err}"
        );
    }

    #[test]
    fn changes_below_cached_directories_are_noticed() {
        let t = repository("cache");
        fs::write(t.0.join(".git/refs/heads/main"), "0\n").unwrap_or_default();
        // Past the racy window every listing is settled, so the second look reuses them.
        wait_past_racy_window();
        let containment = Containment::default();
        assert_eq!(containment.check(&t.0, &layout(&t)), Ok(()));
        assert!(!containment.lock().listings.is_empty());
        // Everything but the top is re-verified through a held handle.
        let held = |c: &Containment| {
            c.lock().settled.as_ref().map(|watches| {
                watches
                    .iter()
                    .map(|w| {
                        (
                            w.path
                                .strip_prefix(&t.0)
                                .unwrap_or(&w.path)
                                .display()
                                .to_string(),
                            w.handle.is_some(),
                        )
                    })
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
        };
        let expected: std::collections::BTreeMap<String, bool> = [
            (".git", false),
            (".git/HEAD", true),
            (".git/objects", true),
            (".git/objects/ab", true),
            (".git/refs", true),
            (".git/refs/heads", true),
            (".git/refs/heads/main", true),
        ]
        .into_iter()
        .map(|(p, h)| (p.to_owned(), h))
        .collect();
        assert_eq!(held(&containment), Some(expected));
        assert_eq!(containment.check(&t.0, &layout(&t)), Ok(()));
        // A folder replaced by another of the same name changes its parent's stamp.
        fs::rename(t.0.join(".git/objects/ab"), t.0.join(".git/ab-old")).unwrap_or_default();
        fs::create_dir_all(t.0.join(".git/objects/ab")).unwrap_or_default();
        std::os::unix::fs::symlink("/", t.0.join(".git/objects/ab/root")).unwrap_or_default();
        let err = refusal(&containment, &t);
        assert!(
            err.contains("objects/ab/root is a link leading outside"),
            "{err}"
        );
        fs::remove_dir_all(t.0.join(".git/objects/ab")).unwrap_or_default();
        fs::rename(t.0.join(".git/ab-old"), t.0.join(".git/objects/ab")).unwrap_or_default();
        wait_past_racy_window();
        assert_eq!(containment.check(&t.0, &layout(&t)), Ok(()));
        assert!(containment.lock().settled.is_some());
        // A new link in a cached folder changes the folder's stamp.
        std::os::unix::fs::symlink("/", t.0.join(".git/objects/ab/root")).unwrap_or_default();
        let err = refusal(&containment, &t);
        assert!(
            err.contains("objects/ab/root is a link leading outside"),
            "{err}"
        );
        fs::remove_file(t.0.join(".git/objects/ab/root")).unwrap_or_default();
        assert_eq!(containment.check(&t.0, &layout(&t)), Ok(()));
        // A watched file grown in place changes its own stamp.
        let main = fs::OpenOptions::new()
            .write(true)
            .open(t.0.join(".git/refs/heads/main"));
        assert!(main.is_ok_and(|f| f.set_len(1 << 40).is_ok()));
        let err = refusal(&containment, &t);
        assert!(
            err.contains("refs/heads/main is 1099511627776 bytes"),
            "{err}"
        );
    }

    #[test]
    fn the_walk_stops_past_its_entry_limit() {
        let t = repository("entries");
        // .git: objects, refs, HEAD; objects: ab; refs: heads; ab and heads empty.
        let layout = layout(&t);
        assert_eq!(
            Containment::default().check_within(&t.0, &layout, 5),
            Ok(false)
        );
        let err = Containment::default()
            .check_within(&t.0, &layout, 4)
            .err()
            .unwrap_or_default();
        assert_eq!(
            err,
            "the repository's git dir holds more than 4 entries; refusing"
        );
    }

    #[test]
    fn past_the_handle_limit_paths_are_stamped_by_path_and_changes_still_seen() {
        let t = repository("handles");
        fs::write(t.0.join(".git/refs/heads/main"), "0\n").unwrap_or_default();
        wait_past_racy_window();
        let started = SystemTime::now();
        let (mut previous, mut kept) = (HashMap::new(), HashMap::new());
        let layout = layout(&t);
        let walked = walk(
            &layout,
            &t.0,
            &mut previous,
            &mut kept,
            started,
            MAX_GIT_DIR_ENTRIES,
        );
        assert_eq!(walked, Ok(true));
        let watches = watches(&kept, &tops(&layout), 2);
        assert_eq!(watches.iter().filter(|w| w.handle.is_some()).count(), 2);
        assert!(watches.len() > 2 && watches.iter().all(Watch::is_unchanged));
        // Every watch, held or not, notices its path changing.
        std::os::unix::fs::symlink("/", t.0.join(".git/objects/ab/root")).unwrap_or_default();
        let main = fs::OpenOptions::new()
            .write(true)
            .open(t.0.join(".git/refs/heads/main"));
        assert!(main.is_ok_and(|f| f.set_len(7).is_ok()));
        fs::write(t.0.join(".git/HEAD"), "ref: refs/heads/other\n").unwrap_or_default();
        fs::create_dir_all(t.0.join(".git/refs/tags")).unwrap_or_default();
        let mut changed: Vec<String> = watches
            .iter()
            .filter(|w| !w.is_unchanged())
            .map(|w| {
                w.path
                    .strip_prefix(&t.0)
                    .unwrap_or(&w.path)
                    .display()
                    .to_string()
            })
            .collect();
        changed.sort();
        assert_eq!(
            changed,
            [
                ".git/HEAD",
                ".git/objects/ab",
                ".git/refs",
                ".git/refs/heads/main"
            ]
        );
    }

    #[test]
    fn hooks_lfs_and_annex_are_not_walked_and_sockets_pass() {
        let t = repository("skip");
        for dir in UNREAD_TOP_LEVEL {
            std::os::unix::fs::symlink("/", t.0.join(".git").join(dir)).unwrap_or_default();
        }
        let socket = std::os::unix::net::UnixListener::bind(t.0.join(".git/fsmonitor.ipc"));
        assert!(socket.is_ok());
        assert_eq!(check(&t), Ok(()));
    }
}
