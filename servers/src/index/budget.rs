//! The one bound on what an `index build` reads in all for the API partitions: every file
//! [`deps`](super::deps) and [`ecosystems`](super::ecosystems) read (dependency manifests, the
//! metadata of installed distributions, `package.json`s, workspace members' `Cargo.toml`s, API
//! source files) is read through one [`ReadBudget`] per build. Each file is bounded by its own
//! limit as well; this bounds the sum, which the per-file limits times the per-item counts left
//! at tens of gigabytes (10,000 dist-infos of four 4 MiB files each), hours of reading and as many
//! gigabytes kept in memory.

use std::cell::Cell;
use std::io;
use std::path::Path;

/// Bytes one `index build` reads in all from the project's dependency manifests and
/// environments (and the packages of the cargo registry and Go module cache they name). A real
/// site-packages of 142 distributions (jupyter, pandas, scipy, scikit-learn, django, boto3, ...)
/// whose every top-level name the project imports reads 12 MB; past this, nothing more is read,
/// the API partitions stop growing, and their `dependency_fingerprint` is `null` if a Python
/// manifest or distribution went unread.
pub const MAX_ENVIRONMENT_BYTES: u64 = 256 * 1024 * 1024;

/// What is left of [`MAX_ENVIRONMENT_BYTES`] (or another total) in one build, and whether a
/// read has met its end.
#[derive(Debug)]
pub struct ReadBudget {
    left: Cell<u64>,
    spent: Cell<bool>,
}

impl ReadBudget {
    pub fn new(total: u64) -> ReadBudget {
        ReadBudget {
            left: Cell::new(total),
            spent: Cell::new(false),
        }
    }

    /// [`crate::regular_file::read_at_most`] within what is left: the file's bytes if it holds
    /// at most `limit` and they fit; `Ok(None)` if it holds more than `limit`, or if they do not
    /// fit in what is left ([`ReadBudget::spent`] is then true, and every later read is `Ok(None)`
    /// without opening anything). What was read counts either way.
    pub fn read_at_most(&self, path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
        if self.spent.get() {
            return Ok(None);
        }
        let left = self.left.get();
        let cap = limit.min(left);
        // A file over `cap` was read to one byte past it.
        let bytes = crate::regular_file::read_at_most(path, cap)?;
        let read = bytes
            .as_ref()
            .map_or(cap.saturating_add(1), |b| b.len() as u64);
        self.left.set(left.saturating_sub(read));
        if bytes.is_none() && cap < limit {
            self.spent.set(true);
        }
        Ok(bytes)
    }

    /// [`ReadBudget::read_at_most`] as text ([`super::sources::text_of`]): `None` also when the
    /// file cannot be read or is not UTF-8.
    pub fn read_text_at_most(&self, path: &Path, limit: u64) -> Option<String> {
        super::sources::text_of(self.read_at_most(path, limit).ok()??)
    }

    /// Whether a read found more than was left: from then on nothing more is read.
    pub fn spent(&self) -> bool {
        self.spent.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_count_against_the_total_and_stop_past_it() {
        let dir = std::env::temp_dir().join(format!("read-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (ten, four) = (dir.join("ten"), dir.join("four"));
        std::fs::write(&ten, "0123456789").unwrap();
        std::fs::write(&four, "abcd").unwrap();
        let budget = ReadBudget::new(25);
        assert_eq!(budget.read_at_most(&ten, 100).unwrap().unwrap().len(), 10);
        // Over the file's own limit: absent, its bytes read count, the budget is not spent.
        assert_eq!(budget.read_at_most(&ten, 5).unwrap(), None);
        assert!(!budget.spent());
        assert_eq!(
            budget.read_text_at_most(&four, 100).as_deref(),
            Some("abcd")
        );
        // 25 - 10 - 6 - 4 = 5 left: a file of 10 does not fit, and nothing is read after it.
        assert_eq!(budget.read_at_most(&ten, 100).unwrap(), None);
        assert!(budget.spent());
        assert_eq!(budget.read_at_most(&four, 100).unwrap(), None);
        // An exact fit is read.
        let exact = ReadBudget::new(14);
        assert!(exact.read_at_most(&ten, 100).unwrap().is_some());
        assert!(exact.read_at_most(&four, 100).unwrap().is_some());
        assert!(!exact.spent());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
