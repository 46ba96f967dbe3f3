//! Split indexes: the one write to the repository that no setting stops.
//!
//! When the index is split (`git update-index --split-index`, `core.splitIndex`), `.git/index`
//! holds only recent changes and a `link` extension naming `.git/sharedindex.<id>`, which holds the
//! rest. Every git that reads such an index refreshes the shared file's mtime (git's
//! `read_index_from` calls `freshen_shared_index`, so that pruning keeps files in use); neither
//! `GIT_OPTIONAL_LOCKS=0`, `--no-optional-locks` nor `core.splitIndex=false` changes that. Of the
//! commands gitread runs, `git status` and the builder's `git ls-files` read the index (log, show,
//! diff between revisions and blame at a revision do not, on git 2.39 and 2.47 alike), so those two
//! are refused while the index really is split, with the command that makes the repository
//! servable again.
//!
//! "Really split" is read from the index itself, as git reads it: header (`DIRC`, version 2, 3 or
//! 4, entry count), the entries (skipped, with their version's layout: padded names in 2 and 3,
//! prefix-compressed names in 4), then the extensions up to the trailing checksum; the index is
//! split when a `link` extension names a base index (a non-zero object id). The reader streams
//! through a fixed buffer and never holds an entry, so its memory is bounded whatever the index
//! size. Object ids are 20 bytes (SHA-1) or 32 (SHA-256) and the index does not say which, so both
//! layouts are tried and a `link` found by either counts; an index that parses neither way is
//! refused (fail closed; git itself fails on it). Most repositories never split their index: when
//! the git dir holds no `sharedindex.*` file, git has nothing to freshen and the index is not read.
//! The answer is cached with the identities (device, inode, size, mtime, ctime) of the index file
//! and of the git dir (whose stamp changes when a `sharedindex.*` file comes or goes) once both
//! are older than the racy window, so an unchanged repository costs two `stat`s, no listing.

use super::stamp::{Stamp, RACY_WINDOW};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

pub const SPLIT_INDEX_REFUSAL: &str =
    "the repository's index is split (core.splitIndex): every git \
command that reads it rewrites the modification time of .git/sharedindex.*, and nothing can turn \
that off, so this call would write to the repository; refusing. To serve it, run \
`git update-index --no-split-index` in the repository";

pub const UNREADABLE_INDEX_REFUSAL: &str =
    "the repository's index is not a git index of version 2, 3 or 4; refusing";

/// Object id lengths tried, SHA-1 first.
const HASH_LENGTHS: [u64; 2] = [20, 32];

/// Read buffer of the streaming parser.
const BUFFER: usize = 64 * 1024;

/// Entry name length field meaning "the name is longer; find its NUL".
const NAME_MASK: u16 = 0x0fff;
const EXTENDED_FLAG: u16 = 0x4000;
/// ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each): before the object id.
const STAT_BYTES: u64 = 40;

/// The split-index verdict of one server, cached on the identities of the index and the git dir.
#[derive(Debug, Default)]
pub struct SplitIndexCheck {
    cached: Mutex<Option<(PathBuf, Identity, bool)>>,
}

impl SplitIndexCheck {
    /// `Err` (the refusal) when the index in `git_dir` links a shared index or cannot be read as an
    /// index; `Ok` when it is whole or absent.
    pub fn refuse_if_split(&self, git_dir: &Path) -> Result<(), String> {
        let path = git_dir.join("index");
        let Some(index) = Stamp::followed(&path) else {
            return Ok(());
        };
        let identity = (index, Stamp::unfollowed(git_dir));
        let known = self
            .lock()
            .as_ref()
            .filter(|(p, s, _)| *p == path && *s == identity)
            .map(|(_, _, split)| *split);
        let split = match known {
            Some(split) => split,
            None => {
                let started = SystemTime::now();
                let split = has_shared_index_files(git_dir)
                    && links_shared_index(&path)
                        .ok_or_else(|| UNREADABLE_INDEX_REFUSAL.to_owned())?;
                let settled = index.is_settled(started, RACY_WINDOW)
                    && identity
                        .1
                        .is_some_and(|dir| dir.is_settled(started, RACY_WINDOW));
                if settled
                    && (Stamp::followed(&path), Stamp::unfollowed(git_dir))
                        == (Some(index), identity.1)
                {
                    *self.lock() = Some((path, identity, split));
                }
                split
            }
        };
        if split {
            return Err(SPLIT_INDEX_REFUSAL.to_owned());
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(PathBuf, Identity, bool)>> {
        self.cached.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The index file's stamp and the git dir's (which changes when a `sharedindex.*` file comes or
/// goes).
type Identity = (Stamp, Option<Stamp>);

/// Whether the index at `path` links a shared index; `None` when it is no readable index. Both
/// object id lengths are tried, and a link found with either counts.
fn links_shared_index(path: &Path) -> Option<bool> {
    let mut file = crate::regular_file::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut readable = false;
    for hash in HASH_LENGTHS {
        file.seek(SeekFrom::Start(0)).ok()?;
        let reader = BufReader::with_capacity(BUFFER, Read::by_ref(&mut file).take(len));
        match parse(Cursor { reader, at: 0 }, len, hash) {
            Some(true) => return Some(true),
            Some(false) => readable = true,
            None => {}
        }
    }
    readable.then_some(false)
}

/// Whether `git_dir` holds a `sharedindex.*` entry (or cannot be listed): without one, git has
/// nothing to freshen and the index need not be read.
fn has_shared_index_files(git_dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    std::fs::read_dir(git_dir).map_or(true, |entries| {
        entries
            .flatten()
            .any(|e| e.file_name().as_bytes().starts_with(b"sharedindex."))
    })
}

/// A reader that counts the bytes it has consumed.
struct Cursor<R> {
    reader: R,
    at: u64,
}

impl<R: BufRead> Cursor<R> {
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut bytes = [0u8; N];
        self.reader.read_exact(&mut bytes).ok()?;
        self.at += N as u64;
        Some(bytes)
    }

    fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    fn skip(&mut self, count: u64) -> Option<()> {
        let copied =
            std::io::copy(&mut (&mut self.reader).take(count), &mut std::io::sink()).ok()?;
        self.at += copied;
        (copied == count).then_some(())
    }

    /// Skips up to and including the next byte for which `last` is true; the bytes skipped.
    fn skip_through(&mut self, last: impl Fn(u8) -> bool) -> Option<u64> {
        let mut skipped = 0;
        loop {
            let buffer = self.reader.fill_buf().ok()?;
            if buffer.is_empty() {
                return None;
            }
            let (used, done) = match buffer.iter().position(|&b| last(b)) {
                Some(i) => (i + 1, true),
                None => (buffer.len(), false),
            };
            self.reader.consume(used);
            self.at += used as u64;
            skipped += used as u64;
            if done {
                return Some(skipped);
            }
        }
    }
}

/// Parses an index of `len` bytes with `hash`-byte object ids: `Some(split)` when every part is
/// where the format puts it and the extensions end exactly at the trailing checksum.
fn parse<R: BufRead>(mut r: Cursor<R>, len: u64, hash: u64) -> Option<bool> {
    let body_end = len.checked_sub(hash)?;
    if &r.array::<4>()? != b"DIRC" {
        return None;
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    for _ in 0..r.u32()? {
        r.skip(STAT_BYTES + hash)?;
        let flags = r.u16()?;
        let mut fixed = STAT_BYTES + hash + 2;
        if flags & EXTENDED_FLAG != 0 {
            r.u16()?;
            fixed += 2;
        }
        if version == 4 {
            // A varint (bytes to strip from the previous name), then the NUL-terminated rest.
            r.skip_through(|b| b & 0x80 == 0)?;
            r.skip_through(|b| b == 0)?;
        } else {
            let name = match flags & NAME_MASK {
                NAME_MASK => r.skip_through(|b| b == 0)? - 1,
                short => {
                    r.skip(u64::from(short))?;
                    u64::from(short)
                }
            };
            // Entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
            let size = (fixed + name + 8) & !7;
            let consumed = fixed + name + u64::from(flags & NAME_MASK == NAME_MASK);
            r.skip(size - consumed)?;
        }
        if r.at > body_end {
            return None;
        }
    }
    let mut split = false;
    while r.at < body_end {
        let signature = r.array::<4>()?;
        let size = u64::from(r.u32()?);
        if r.at + size > body_end {
            return None;
        }
        if &signature == b"link" {
            let base = size.checked_sub(hash)?;
            let mut zero = true;
            for _ in 0..hash {
                zero &= r.array::<1>()? == [0];
            }
            split |= !zero;
            r.skip(base)?;
        } else {
            r.skip(size)?;
        }
    }
    (r.at == body_end).then_some(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v2/v3 entry with `name` and `hash`-byte ids, padded as git pads it.
    fn entry(name: &str, hash: usize, extended: bool) -> Vec<u8> {
        let mut e = vec![0u8; 40 + hash];
        let mut flags = u16::try_from(name.len().min(0xfff)).unwrap_or(0xfff);
        if extended {
            flags |= EXTENDED_FLAG;
        }
        e.extend(flags.to_be_bytes());
        if extended {
            e.extend([0x20, 0]);
        }
        e.extend(name.as_bytes());
        let size = (e.len() + 8) & !7;
        e.resize(size, 0);
        e
    }

    fn index(version: u32, entries: &[Vec<u8>], extensions: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
        let hash = 20;
        let mut out = b"DIRC".to_vec();
        out.extend(version.to_be_bytes());
        out.extend(u32::try_from(entries.len()).unwrap_or(0).to_be_bytes());
        for e in entries {
            out.extend(e);
        }
        for (sig, data) in extensions {
            out.extend(*sig);
            out.extend(u32::try_from(data.len()).unwrap_or(0).to_be_bytes());
            out.extend(data);
        }
        out.extend(vec![0xab; hash]);
        out
    }

    fn check(bytes: &[u8]) -> Option<bool> {
        let len = bytes.len() as u64;
        let mut found = HASH_LENGTHS.map(|h| {
            parse(
                Cursor {
                    reader: bytes,
                    at: 0,
                },
                len,
                h,
            )
        });
        found.sort();
        found[1]
    }

    fn link(base: u8) -> Vec<u8> {
        let mut data = vec![base; 20];
        data.extend([0u8; 24]);
        data
    }

    #[test]
    fn a_link_to_a_base_index_is_split_and_a_null_link_is_not() {
        let entries = [entry("a.txt", 20, false)];
        let tree = (b"TREE", vec![1, 2, 3]);
        assert_eq!(
            check(&index(2, &entries, std::slice::from_ref(&tree))),
            Some(false)
        );
        assert_eq!(
            check(&index(2, &entries, &[(b"link", link(7)), tree.clone()])),
            Some(true)
        );
        assert_eq!(
            check(&index(2, &entries, &[(b"link", link(0))])),
            Some(false)
        );
        assert_eq!(check(&index(2, &[], &[])), Some(false));
    }

    #[test]
    fn long_names_and_extended_flags_keep_the_layout() {
        let long = "d/".repeat(2100) + "x";
        let entries = [entry(&long, 20, false), entry("b", 20, true)];
        assert_eq!(
            check(&index(3, &entries, &[(b"link", link(1))])),
            Some(true)
        );
    }

    #[test]
    fn version_4_names_are_skipped_through_their_nul() {
        let mut e = vec![0u8; 60];
        e.extend(5u16.to_be_bytes());
        e.extend([0x80, 0x01]); // a two-byte varint
        e.extend(b"a.txt\0");
        assert_eq!(check(&index(4, &[e], &[(b"link", link(9))])), Some(true));
    }

    #[test]
    fn anything_else_is_not_an_index() {
        let good = index(2, &[entry("a", 20, false)], &[(b"link", link(1))]);
        assert_eq!(check(&good), Some(true));
        assert_eq!(check(&good[..good.len() - 1]), None);
        let mut bad_version = good.clone();
        bad_version[7] = 5;
        assert_eq!(check(&bad_version), None);
        assert_eq!(check(b"DIRX"), None);
        let mut many = good.clone();
        many[11] = 200;
        assert_eq!(check(&many), None);
        let mut overlong = index(2, &[entry("a", 20, false)], &[(b"TREE", vec![0; 4])]);
        overlong[83] = 200; // the extension's size, past the end
        assert_eq!(check(&overlong), None);
        overlong[83] = 4;
        assert_eq!(check(&overlong), Some(false));
    }
}
