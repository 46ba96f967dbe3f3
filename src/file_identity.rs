//! The identity of a file as `stat` sees it, and git's "racy" rule for when a record of it may be
//! trusted: what every cache keyed on a file's state (gitread's pre-flight checks, the governance
//! presets, the index builder's cache) compares.
//!
//! A verdict about a file stays true while it has the same device, inode, length, mode, mtime
//! and ctime. ctime cannot be set from user space, but the kernel stamps it from a coarse clock,
//! so a change made within the same tick as the look can leave every field equal: a record made
//! too soon after the file changed ([`FileIdentity::is_settled`]) is not to be trusted.
//!
//! Not for deciding whether a file may be opened (that is [`crate::regular_file`]).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A file's identity: a rename over it changes the device or inode, a write in place the length
/// or the times (ctime too, which no one can set back), a `chmod` the mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mode: u32,
    /// Seconds and nanoseconds since the epoch.
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl FileIdentity {
    pub fn of(meta: &Metadata) -> FileIdentity {
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The identity of what `path` names, symlinks followed; `None` when it cannot be stated.
    pub fn followed(path: &Path) -> Option<FileIdentity> {
        std::fs::metadata(path).ok().map(|m| FileIdentity::of(&m))
    }

    /// The identity of `path` itself (a symlink is not followed); `None` when it cannot be
    /// stated.
    pub fn unfollowed(path: &Path) -> Option<FileIdentity> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| FileIdentity::of(&m))
    }

    /// True when the file last changed (mtime and ctime) more than `window` before `started`,
    /// the moment the look that recorded it began; false for a change within the window or
    /// after it, and for times that cannot be read as such.
    pub fn is_settled(&self, started: SystemTime, window: Duration) -> bool {
        let Ok(since_epoch) = started.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let limit = since_epoch.saturating_sub(window);
        [self.mtime, self.ctime].into_iter().all(|(secs, nanos)| {
            match (u64::try_from(secs), u32::try_from(nanos)) {
                (Ok(secs), Ok(nanos)) => Duration::new(secs, nanos.min(999_999_999)) < limit,
                _ => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed_at(secs: i64, nanos: i64) -> FileIdentity {
        FileIdentity {
            dev: 1,
            ino: 2,
            len: 3,
            mode: 0o100644,
            mtime: (secs - 5, 0),
            ctime: (secs, nanos),
        }
    }

    #[test]
    fn a_record_is_settled_only_once_the_window_has_passed_since_the_last_change() {
        let window = Duration::from_secs(2);
        let at = |secs: u64, nanos: u32| SystemTime::UNIX_EPOCH + Duration::new(secs, nanos);
        let id = changed_at(1_000, 500);
        assert!(id.is_settled(at(1_002, 501), window));
        assert!(!id.is_settled(at(1_002, 500), window));
        assert!(
            !id.is_settled(at(999, 0), window),
            "a change after the look"
        );
        // A modification time set into the future keeps the record unsettled.
        let future = FileIdentity {
            mtime: (5_000, 0),
            ..id
        };
        assert!(!future.is_settled(at(1_010, 0), window));
        // Times before the epoch cannot be compared: never settled.
        assert!(!changed_at(-1, 0).is_settled(at(1_010, 0), window));
    }

    #[test]
    fn the_identity_follows_links_or_not_as_asked() {
        let dir = std::env::temp_dir().join(format!("file-identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a");
        std::fs::write(&file, "x").unwrap();
        let link = dir.join("b");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let target = FileIdentity::followed(&file).unwrap();
        assert_eq!(FileIdentity::followed(&link), Some(target));
        assert_ne!(FileIdentity::unfollowed(&link), Some(target));
        assert_eq!(FileIdentity::followed(&dir.join("missing")), None);
        std::fs::write(&file, "xy").unwrap();
        assert_ne!(FileIdentity::followed(&file), Some(target));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
