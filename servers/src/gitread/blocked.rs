//! Recognising a git process that is blocked opening a FIFO, and naming the file.
//!
//! A FIFO planted in the work tree where git opens a file by name (a `.gitignore` in any folder
//! `git status` walks, a `.gitattributes` on a diffed path, a config include target inside the
//! project) makes `open` wait for a writer that never comes; no check before git runs can find
//! every such name without walking the whole work tree on every call. So the waiter looks while
//! git runs: Linux reports a process waiting in a FIFO's `open` as sleeping in the kernel function
//! `wait_for_partner` (`/proc/<pid>/wchan`), which nothing else git does here reaches (no FIFO is
//! ever git's to open). The call then ends at once instead of at the timeout, and the error names
//! the file: the path argument of the pending `open`/`openat` is read from the process's own memory
//! (`/proc/<pid>/syscall`, `/proc/<pid>/mem`; the server is git's parent, so it may read them).
//!
//! Where `/proc` is missing, `wchan` is hidden, or the architecture's system call numbers are not
//! known here, this answers "not blocked" or "blocked, file unknown": such a call ends at the
//! timeout, as before.

use std::io::{Read, Seek, SeekFrom};

/// The kernel function a process sleeps in while opening a FIFO that has no writer.
const FIFO_OPEN_WAIT: &str = "wait_for_partner";

/// Longest path read back from git's memory.
const MAX_PATH_BYTES: usize = 4096;

/// `Some(file)` when process `pid` is blocked opening a FIFO, with the file it named if that can
/// be read (lossily decoded); `None` when it is not blocked there (or this cannot be told).
pub fn fifo_open(pid: u32) -> Option<Option<String>> {
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()?;
    if wchan.trim() != FIFO_OPEN_WAIT {
        return None;
    }
    Some(pending_open_path(pid))
}

/// The path argument of the `open` or `openat` process `pid` is in, read from its memory a page
/// at a time (the string may end just before an unmapped page, which cannot be read).
fn pending_open_path(pid: u32) -> Option<String> {
    const PAGE: u64 = 4096;
    let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok()?;
    let mut address = path_argument(&syscall)?;
    let mut memory = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut bytes = Vec::with_capacity(256);
    while bytes.len() < MAX_PATH_BYTES {
        let to_page_end = PAGE - address % PAGE;
        let mut chunk = vec![0u8; to_page_end as usize];
        memory.seek(SeekFrom::Start(address)).ok()?;
        memory.read_exact(&mut chunk).ok()?;
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            bytes.extend_from_slice(&chunk[..end]);
            return Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        bytes.extend_from_slice(&chunk);
        address += to_page_end;
    }
    None
}

/// System call numbers of `open` (path in the first argument) and `openat` (in the second).
#[cfg(target_arch = "x86_64")]
const OPEN_CALLS: [(u64, usize); 2] = [(2, 0), (257, 1)];
#[cfg(target_arch = "aarch64")]
const OPEN_CALLS: [(u64, usize); 1] = [(56, 1)];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const OPEN_CALLS: [(u64, usize); 0] = [];

/// The address of the path argument in a `/proc/<pid>/syscall` line (`nr arg0 arg1 ... sp pc`,
/// the arguments in hex), if the call is an `open` this module knows.
fn path_argument(syscall: &str) -> Option<u64> {
    let mut fields = syscall.split_whitespace();
    let number: u64 = fields.next()?.parse().ok()?;
    let (_, index) = OPEN_CALLS.iter().find(|(n, _)| *n == number)?;
    let argument = fields.nth(*index)?;
    u64::from_str_radix(argument.strip_prefix("0x")?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_path_argument_of_open_and_openat_is_found() {
        assert_eq!(
            path_argument("257 0xffffff9c 0x7ffe22e58a2c 0x0 0x0 0x0 0x0 0x7ffe 0x7f24"),
            Some(0x7ffe_22e5_8a2c)
        );
        assert_eq!(
            path_argument("2 0x55d0 0x0 0x0 0x0 0x0 0x0 0x7ffe 0x7f24"),
            Some(0x55d0)
        );
        assert_eq!(
            path_argument("0 0x3 0x7ffe 0x1000 0x0 0x0 0x0 0x7ffe 0x7f24"),
            None
        );
        assert_eq!(path_argument("running"), None);
        assert_eq!(path_argument(""), None);
    }

    #[test]
    fn a_process_opening_a_fifo_is_seen_blocked_with_the_file_named() {
        let dir = std::env::temp_dir().join(format!("gitread-blocked-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let fifo = dir.join("waits.fifo");
        let made = Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        let Ok(mut reader) = Command::new("cat")
            .arg("waits.fifo")
            .current_dir(&dir)
            .stdout(Stdio::null())
            .spawn()
        else {
            panic!("cat runs");
        };
        let mut seen = None;
        for _ in 0..200 {
            seen = fifo_open(reader.id());
            if seen.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = reader.kill();
        let _ = reader.wait();
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::read_to_string("/proc/self/wchan").is_err() {
            println!("note: /proc/<pid>/wchan is not readable here; nothing to check");
            return;
        }
        assert_eq!(seen, Some(Some("waits.fifo".to_owned())));
        // A process doing something else is not blocked on a FIFO.
        assert_eq!(fifo_open(std::process::id()), None);
    }
}
