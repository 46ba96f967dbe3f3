//! Reading and replacing a small file a project keeps under `.agentteams/` (the trust policy, the
//! approval presets): bounded reads of regular files only, paths confined to the project, and
//! atomic replacement that never writes through a planted link and never overwrites an edit made
//! since the file was read.
//!
//! An edit is read-modify-write by a short-lived command; two of them at once, or a person saving
//! the file in an editor meanwhile, would otherwise lose one edit silently. So an edit holds
//! `<file>.lock` (created exclusively; waited for up to [`LOCK_WAIT`]) and, just before its rename,
//! re-reads the file and refuses with [`FileError::Changed`] if the bytes differ from what it read.
//! The lock orders cooperating commands; the re-read catches writers that ignore the lock.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long an edit waits for another edit's lock before giving up.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// How often a waiting edit looks at the lock again.
const LOCK_POLL: Duration = Duration::from_millis(10);

/// Why a project file cannot be read or replaced.
#[derive(Debug)]
pub enum FileError {
    /// The file or its folder resolves outside the project.
    OutsideProject(PathBuf),
    /// The file is a symbolic link (where links are refused).
    Link(PathBuf),
    /// The file holds more than the limit.
    TooLarge {
        path: PathBuf,
        limit: u64,
    },
    /// Another edit holds the lock.
    Locked(PathBuf),
    /// The file changed between this edit's read and its write.
    Changed(PathBuf),
    Io {
        path: PathBuf,
        error: io::Error,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::OutsideProject(p) => {
                write!(f, "{} resolves outside the project; refusing", p.display())
            }
            FileError::Link(p) => write!(
                f,
                "{} is a symbolic link; it is read only as a regular file in the project",
                p.display()
            ),
            FileError::TooLarge { path, limit } => {
                write!(f, "{} is larger than {limit} bytes", path.display())
            }
            FileError::Locked(lock) => write!(
                f,
                "another edit holds {} (waited {} s); if no other edit is running, a crash left it: remove it",
                lock.display(),
                LOCK_WAIT.as_secs()
            ),
            FileError::Changed(p) => write!(
                f,
                "{} changed while this edit was being made; nothing was written: run the command again",
                p.display()
            ),
            FileError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for FileError {}

fn io_error(path: &Path) -> impl Fn(io::Error) -> FileError + '_ {
    move |error| FileError::Io {
        path: path.to_owned(),
        error,
    }
}

/// `root.join(relative)`, refused if its folder or the file itself (where they exist) resolves
/// through a link to a place outside the project: a project's files are read and written only
/// inside it.
pub fn confined(root: &Path, relative: &str) -> Result<PathBuf, FileError> {
    let path = root.join(relative);
    let Ok(real_root) = fs::canonicalize(root) else {
        return Ok(path);
    };
    for part in [path.parent().unwrap_or(root), path.as_path()] {
        if let Ok(real) = fs::canonicalize(part) {
            if !real.starts_with(&real_root) {
                return Err(FileError::OutsideProject(part.to_owned()));
            }
        }
    }
    Ok(path)
}

/// The bytes of the regular file at `path` (`None` when it does not exist), at most `limit` of
/// them. With `refuse_links`, a symbolic link at `path` is an error rather than followed.
pub fn read(path: &Path, limit: u64, refuse_links: bool) -> Result<Option<Vec<u8>>, FileError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path)(e)),
        Ok(m) if refuse_links && m.file_type().is_symlink() => {
            return Err(FileError::Link(path.to_owned()))
        }
        Ok(_) => {}
    }
    match crate::regular_file::read_at_most(path, limit) {
        Ok(Some(bytes)) => Ok(Some(bytes)),
        Ok(None) => Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path)(e)),
    }
}

/// The lock an edit of one file holds: `<file>.lock`, removed when dropped.
#[derive(Debug)]
pub struct EditLock {
    path: PathBuf,
}

impl EditLock {
    /// Takes the lock of `file`, waiting up to `wait` for another edit to release it. Creates the
    /// file's folder if needed.
    pub fn acquire(file: &Path, wait: Duration) -> Result<EditLock, FileError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_error(dir))?;
        }
        let deadline = Instant::now() + wait;
        loop {
            // `create_new` is O_EXCL: atomic against other takers, and it does not follow a link.
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(EditLock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if Instant::now() >= deadline {
                        return Err(FileError::Locked(path));
                    }
                    std::thread::sleep(LOCK_POLL);
                }
                Err(e) => return Err(io_error(&path)(e)),
            }
        }
    }
}

impl Drop for EditLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Replaces the file at `path` with `bytes` atomically (temporary file in the same folder, then
/// rename), creating the folder if needed.
///
/// `expected`: what the file held when the edit read it (`Some(None)`: it did not exist). The
/// file is read again just before the rename and the edit refused with [`FileError::Changed`]
/// if it differs; `None` skips the check.
///
/// Never through a planted link: the temporary name is unlinked and then created exclusively
/// (`O_EXCL` does not follow a link), so a `<file>.tmp<pid>` → `~/.bashrc` cannot redirect the
/// write; a link at `path` itself is replaced by the rename, not followed.
pub fn replace(
    path: &Path,
    bytes: &[u8],
    expected: Option<&Option<Vec<u8>>>,
    limit: u64,
) -> Result<(), FileError> {
    let io = io_error(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(&io)?;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        });
    let cleanup = |e: FileError| {
        let _ = fs::remove_file(&tmp);
        e
    };
    written.map_err(&io).map_err(cleanup)?;
    if let Some(expected) = expected {
        // A file grown past the limit has changed too.
        let current = match read(path, limit, false) {
            Ok(current) => Some(current),
            Err(FileError::TooLarge { .. }) => None,
            Err(e) => return Err(cleanup(e)),
        };
        if current.as_ref() != Some(expected) {
            return Err(cleanup(FileError::Changed(path.to_owned())));
        }
    }
    fs::rename(&tmp, path).map_err(&io).map_err(cleanup)?;
    // The rename is durable once the folder is.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("project-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn replace_refuses_a_file_changed_since_it_was_read() {
        let dir = temp("changed");
        let path = dir.join("sub/f.json");
        replace(&path, b"one", Some(&None), 100).unwrap();
        let read_back = read(&path, 100, true).unwrap();
        assert_eq!(read_back.as_deref(), Some(&b"one"[..]));
        fs::write(&path, "someone else").unwrap();
        let err = replace(&path, b"two", Some(&read_back), 100).unwrap_err();
        assert!(matches!(err, FileError::Changed(_)), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"someone else");
        // Expected absent, but it exists now.
        assert!(matches!(
            replace(&path, b"two", Some(&None), 100),
            Err(FileError::Changed(_))
        ));
        let leftovers: Vec<_> = fs::read_dir(dir.join("sub")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_lock_is_exclusive_and_released_on_drop() {
        let dir = temp("lock");
        let path = dir.join("f.json");
        let held = EditLock::acquire(&path, Duration::ZERO).unwrap();
        let err = EditLock::acquire(&path, Duration::from_millis(30)).unwrap_err();
        assert!(err.to_string().contains("f.json.lock"), "{err}");
        drop(held);
        EditLock::acquire(&path, Duration::ZERO).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn links_and_oversized_files_are_refused() {
        let dir = temp("links");
        let target = dir.join("target.json");
        fs::write(&target, "{}").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(read(&link, 10, true), Err(FileError::Link(_))));
        assert_eq!(read(&link, 10, false).unwrap().as_deref(), Some(&b"{}"[..]));
        assert!(matches!(
            read(&target, 1, true),
            Err(FileError::TooLarge { limit: 1, .. })
        ));
        assert_eq!(read(&dir.join("missing"), 1, true).unwrap(), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
