//! The identity of a file or directory as the pre-flight caches record it, and git's "racy" rule
//! for when such a record may be trusted.
//!
//! A verdict about files (what the config says, what the git dir holds) stays true while every
//! path it looked at has the same device, inode, length, mtime and ctime. ctime cannot be set from
//! user space, but the kernel stamps it from a coarse clock, so a change made within the same tick
//! as the look can leave every field equal: a record whose ctime is within [`RACY_WINDOW`] of the
//! look is never trusted (git's own "racy git" rule).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Files whose ctime is this close to (or after) the start of a look make its verdict uncacheable.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Identity of one file or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    pub fn of(meta: &Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The stamp of what `path` names, symlinks followed; `None` when it does not exist.
    pub fn followed(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// The stamp of `path` itself (a symlink is not followed); `None` when it does not exist.
    pub fn unfollowed(path: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
    }

    /// True when the file last changed comfortably before `started`.
    pub fn is_settled(&self, started: SystemTime) -> bool {
        let Ok(since_epoch) = started.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let limit = since_epoch.saturating_sub(RACY_WINDOW);
        let (secs, nanos) = self.ctime;
        match (u64::try_from(secs), u32::try_from(nanos)) {
            (Ok(secs), Ok(nanos)) => Duration::new(secs, nanos.min(999_999_999)) < limit,
            _ => false,
        }
    }
}
