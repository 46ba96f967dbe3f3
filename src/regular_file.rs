//! Opening a file that a project controls for reading: only a regular file, and without ever
//! blocking on the way in.
//!
//! `File::open` on a FIFO waits for a writer that never comes, and a device can stream without
//! end; a hostile repository can put either where an index file, a description or a source file
//! is expected (a symlink to `/dev/zero` included). [`open`] refuses anything that is not a regular
//! file with an error of kind `InvalidInput`, and opens with `O_NONBLOCK` where the platform's
//! value is known, so a file swapped for a FIFO between the check and the open cannot block it
//! either. It is not a sandbox: it follows symlinks (callers confine paths first). [`read_at_most`]
//! reads such a file whole up to a size limit; [`open_directory`] gives a directory handle with the
//! same guarantee.
//!
//! It lives in the library because the client's trust policy (a file the project holds) needs it
//! as much as the servers' index, description, source and git pointer files do.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `O_NONBLOCK` for this platform (0 where it is not known: the check before opening remains).
#[cfg(any(target_os = "linux", target_os = "android"))]
const O_NONBLOCK: i32 = if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
    0x80
} else if cfg!(any(target_arch = "sparc", target_arch = "sparc64")) {
    0x4000
} else {
    0o4000
};
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const O_NONBLOCK: i32 = if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
)) {
    0x4
} else {
    0
};

/// Opens `path` (following symlinks) for reading if it is a regular file; anything else (a FIFO,
/// a socket, a device, a directory) is an `InvalidInput` error saying "not a regular file".
pub fn open(path: &Path) -> io::Result<File> {
    if !fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)?;
    // What was opened, not what was checked: the path may have changed in between.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Opens the directory at `path` (following symlinks) as a handle for `fstat`, never blocking: a
/// FIFO swapped in for it is opened non-blocking and then refused like anything that is not a
/// directory (`InvalidInput`, "not a directory").
pub fn open_directory(path: &Path) -> io::Result<File> {
    let handle = OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)?;
    if !handle.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a directory",
        ));
    }
    Ok(handle)
}

/// Reads the regular file at `path` whole if it holds at most `limit` bytes; `Ok(None)` if it
/// holds more (found while reading, so a growing file is caught too).
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let file = open(path)?;
    // Room for the length it has now (within the limit): a buffer grown by doubling would hold
    // up to twice the file, and its old and new blocks both while it moves.
    let len = file.metadata()?.len().min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn a_regular_file_opens_and_reads_whole() {
        let dir = std::env::temp_dir().join(format!("regular-file-ok-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.json");
        fs::write(&path, "{}").unwrap();
        let mut text = String::new();
        open(&path).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "{}");
        assert_eq!(read_at_most(&path, 2).unwrap().as_deref(), Some(&b"{}"[..]));
        assert_eq!(read_at_most(&path, 1).unwrap(), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("regular-file-no-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let zero_link = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
        for path in [fifo.as_path(), zero_link.as_path(), dir.as_path()] {
            let err = open(path).unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::InvalidInput,
                "{}",
                path.display()
            );
            assert_eq!(err.to_string(), "not a regular file");
        }
        assert_eq!(
            open(&dir.join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(open_directory(&dir).is_ok_and(|d| d.metadata().is_ok_and(|m| m.is_dir())));
        for path in [fifo.as_path(), zero_link.as_path()] {
            let err = open_directory(path).unwrap_err();
            assert_eq!(err.to_string(), "not a directory", "{}", path.display());
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
