//! Runs one git process to completion or to its end: bounded capture of stdout and stderr, a
//! wall-clock timeout, client cancellation, and killing the whole process group git started.
//!
//! The group is killed with the library's [`GroupKiller`] (the system `kill` program, as std has no
//! process-group kill), always before the final `wait`, while git's pid still reserves the group id.

use agentteams_mcp::process_group::is_zombie;
pub use agentteams_mcp::process_group::GroupKiller;
use agentteams_mcp::server::CancelToken;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Stdio and process group of every process that becomes git: stdin from the null device, stdout
/// and stderr piped, its own process group (so a timeout can kill whatever it started).
pub fn piped_in_own_group(command: &mut Command) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.process_group(0);
}

/// How long one git process of a tool call may run (the reference's `TIMEOUT_SECONDS`).
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Bytes of stderr kept for the error message (the reference's excerpt length).
pub const MAX_STDERR: usize = 400;

/// Longest wait between two cancellation checks while git runs; pipe activity and exit wake the
/// waiter at once, so this bounds only how late a cancellation is noticed.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// After git is killed (or exits while something it started still holds the pipes), how long the
/// pipe readers get to finish before they are abandoned. A process that escaped the group could
/// hold the pipes forever; its reader thread then keeps draining into a bounded buffer.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What a finished git process left behind.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// The first `stdout_keep` bytes of stdout.
    pub stdout: Vec<u8>,
    /// True when stdout had more bytes than were kept.
    pub stdout_more: bool,
    /// Newlines in the whole of stdout (kept or not).
    pub stdout_lines: u64,
    /// True when the whole of stdout did not end with a newline (and was not empty).
    pub stdout_unterminated: bool,
    /// True when a NUL was among the first [`BINARY_PROBE`] bytes of stdout (git's binary rule).
    pub stdout_binary: bool,
    /// Bytes of the whole of stdout (kept or not).
    pub stdout_bytes: u64,
    /// The first [`MAX_STDERR`] bytes of stderr.
    pub stderr: Vec<u8>,
}

/// Why a run produced no [`Finished`].
#[derive(Debug)]
pub enum RunError {
    Spawn(std::io::Error),
    TimedOut,
    Cancelled,
    /// git waits to open a FIFO (the file it named, when it could be read back).
    BlockedOnFifo(Option<String>),
}

/// Which pipe a capture came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Bytes of the start of a blob git looks at for a NUL to call it binary.
pub const BINARY_PROBE: usize = 8000;

/// Which part of stdout a run keeps: from byte `skip_bytes` on, or from the line after
/// `skip_lines` newlines through the line that ends with newline number `skip_lines + take_lines`
/// (all lines when `None`); at most `keep` bytes of it. Everything else is counted and drained,
/// never held. A window skips bytes or lines, never both: its constructors make one or the other.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    keep: usize,
    skip_bytes: u64,
    skip_lines: u64,
    take_lines: Option<u64>,
}

impl Window {
    /// The first `keep` bytes.
    pub fn first(keep: usize) -> Window {
        Window::from_byte(0, keep)
    }

    /// At most `keep` bytes of the lines after the first `skip_lines`, `take_lines` of them
    /// (all when `None`).
    pub fn lines(keep: usize, skip_lines: u64, take_lines: Option<u64>) -> Window {
        Window {
            keep,
            skip_bytes: 0,
            skip_lines,
            take_lines,
        }
    }

    /// `keep` bytes from byte `skip_bytes` on.
    pub fn from_byte(skip_bytes: u64, keep: usize) -> Window {
        Window {
            keep,
            skip_bytes,
            skip_lines: 0,
            take_lines: None,
        }
    }
}

/// What a reader saw of its pipe, sent when the pipe closes.
#[derive(Default)]
struct Seen {
    kept: Vec<u8>,
    more: bool,
    lines: u64,
    last: Option<u8>,
    binary: bool,
    bytes: u64,
}

impl Seen {
    /// Counts `chunk` and keeps what `window` selects of it.
    fn take(&mut self, chunk: &[u8], window: &Window) {
        let probed = (BINARY_PROBE as u64).saturating_sub(self.bytes) as usize;
        self.binary |= chunk[..chunk.len().min(probed)].contains(&0);
        let skipped = window
            .skip_bytes
            .saturating_sub(self.bytes)
            .min(chunk.len() as u64);
        self.bytes += chunk.len() as u64;
        self.last = chunk.last().copied().or(self.last);
        let end = window
            .take_lines
            .map(|n| window.skip_lines.saturating_add(n));
        let simple = window.skip_lines == 0 && end.is_none();
        if simple {
            let wanted = &chunk[skipped as usize..];
            let room = window.keep.saturating_sub(self.kept.len());
            self.kept
                .extend_from_slice(&wanted[..wanted.len().min(room)]);
            self.more |= wanted.len() > room;
            self.lines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
            return;
        }
        for &byte in chunk {
            let inside = self.lines >= window.skip_lines && end.is_none_or(|e| self.lines < e);
            if inside {
                if self.kept.len() < window.keep {
                    self.kept.push(byte);
                } else {
                    self.more = true;
                }
            }
            if byte == b'\n' {
                self.lines += 1;
            }
        }
    }
}

/// What a reader kept of its pipe, sent when the pipe closes.
type Capture = (Stream, Seen);

/// One pipe reader: keeps the first `keep` bytes, drains the rest so git never blocks on a full
/// pipe, and sends its capture on `done` when the pipe closes. The thread is detached: if a process
/// that escaped the kill holds the pipe, the reader outlives the call, holding at most `keep` bytes.
fn spawn_reader(
    stream: Stream,
    mut pipe: impl Read + Send + 'static,
    window: Window,
    done: Sender<Capture>,
) -> bool {
    std::thread::Builder::new()
        .name("gitread-pipe".into())
        .spawn(move || {
            let mut seen = Seen::default();
            let mut buffer = [0u8; 16 * 1024];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => seen.take(&buffer[..n], &window),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send((stream, seen));
        })
        .is_ok()
}

/// Runs `child` (just started with piped stdout/stderr, in its own process group), keeping
/// `stdout_keep` bytes of stdout. Returns when git exits, the timeout passes or `cancel` fires.
pub fn run(
    child: Child,
    stdout_keep: usize,
    timeout: Duration,
    cancel: &CancelToken,
    killer: &GroupKiller,
) -> Result<Finished, RunError> {
    run_window(child, Window::first(stdout_keep), timeout, cancel, killer)
}

/// [`run`], keeping the part of stdout `window` selects.
pub fn run_window(
    mut child: Child,
    window: Window,
    timeout: Duration,
    cancel: &CancelToken,
    killer: &GroupKiller,
) -> Result<Finished, RunError> {
    let started = Instant::now();
    let (done_tx, done_rx) = mpsc::channel();
    let readers_started = match (child.stdout.take(), child.stderr.take()) {
        (Some(out), Some(err)) => {
            spawn_reader(Stream::Stdout, out, window, done_tx.clone())
                && spawn_reader(Stream::Stderr, err, Window::first(MAX_STDERR), done_tx)
        }
        _ => false,
    };
    if !readers_started {
        killer.kill(&mut child);
        return Err(RunError::Spawn(std::io::Error::other(
            "could not start a thread to read git's output",
        )));
    }
    let mut captures = Captures::default();
    let deadline = started + timeout;
    let status = match wait_for_exit(&mut child, &done_rx, &mut captures, deadline, cancel) {
        Ok(Some(status)) => status,
        Ok(None) => {
            // git is gone (a zombie, so its group id is still reserved) but something it started
            // still holds its pipes: kill the group, then collect what the readers have.
            let status = killer.kill(&mut child);
            captures.wait_for_rest(&done_rx);
            match status {
                Some(status) => status,
                None => return Err(RunError::Spawn(std::io::Error::other("git vanished"))),
            }
        }
        Err(stop) => {
            killer.kill(&mut child);
            captures.wait_for_rest(&done_rx);
            return Err(stop);
        }
    };
    let out = captures.stdout.unwrap_or_default();
    let err = captures.stderr.unwrap_or_default();
    Ok(Finished {
        status,
        stdout: out.kept,
        stdout_more: out.more,
        stdout_lines: out.lines,
        stdout_unterminated: out.last.is_some_and(|b| b != b'\n'),
        stdout_binary: out.binary,
        stdout_bytes: out.bytes,
        stderr: err.kept,
    })
}

/// The captures received so far.
#[derive(Default)]
struct Captures {
    stdout: Option<Seen>,
    stderr: Option<Seen>,
}

impl Captures {
    fn open(&self) -> usize {
        usize::from(self.stdout.is_none()) + usize::from(self.stderr.is_none())
    }

    fn store(&mut self, (stream, seen): Capture) {
        match stream {
            Stream::Stdout => self.stdout = Some(seen),
            Stream::Stderr => self.stderr = Some(seen),
        }
    }

    /// After a kill, gives the readers [`PIPE_GRACE`] to see their pipes close.
    fn wait_for_rest(&mut self, done: &Receiver<Capture>) {
        let deadline = Instant::now() + PIPE_GRACE;
        while self.open() > 0 {
            let now = Instant::now();
            match done.recv_timeout(deadline.saturating_duration_since(now)) {
                Ok(capture) => self.store(capture),
                Err(_) => return,
            }
        }
    }
}

/// Waits for both pipes to close and git to exit (`Ok(Some(status))`), for git to have exited
/// [`PIPE_GRACE`] ago with a pipe still held open (`Ok(None)`, git left unreaped), the deadline, or
/// a cancellation. While a pipe is open, exit is detected without reaping (see [`is_zombie`]) so
/// the group can still be killed safely.
fn wait_for_exit(
    child: &mut Child,
    done: &Receiver<Capture>,
    captures: &mut Captures,
    deadline: Instant,
    cancel: &CancelToken,
) -> Result<Option<ExitStatus>, RunError> {
    let mut exited_at: Option<Instant> = None;
    let mut backoff = Duration::from_micros(50);
    loop {
        if cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(RunError::TimedOut);
        }
        if captures.open() == 0 {
            if let Ok(Some(status)) = child.try_wait() {
                return Ok(Some(status));
            }
            // The pipes close a moment before the exit is reported: poll briefly, never block.
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(CANCEL_POLL);
            continue;
        }
        match done.recv_timeout(CANCEL_POLL.min(deadline - now)) {
            Ok(capture) => captures.store(capture),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) if exited_at.is_none() => {
                if let Some(file) = super::blocked::fifo_open(child.id()) {
                    return Err(RunError::BlockedOnFifo(file));
                }
                if is_zombie(child.id()) {
                    exited_at = Some(Instant::now());
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if exited_at.is_some_and(|at| at.elapsed() >= PIPE_GRACE) {
                    return Ok(None);
                }
            }
        }
    }
}

/// The reference's exit code: the status code, or minus the signal number.
pub fn exit_code(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| -signal))
        .unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reader keeps of `chunks` under `window`.
    fn seen(chunks: &[&[u8]], window: Window) -> Seen {
        let mut seen = Seen::default();
        for chunk in chunks {
            seen.take(chunk, &window);
        }
        seen
    }

    #[test]
    fn a_byte_window_skips_across_chunks_and_counts_everything() {
        let s = seen(&[b"abc\n", b"def", b"\nghi\n"], Window::from_byte(5, 4));
        assert_eq!((s.kept.as_slice(), s.more), (&b"ef\ng"[..], true));
        assert_eq!((s.bytes, s.lines), (12, 3));
        let all = seen(&[b"abc\n", b"def"], Window::from_byte(7, 4));
        assert_eq!((all.kept.as_slice(), all.more), (&b""[..], false));
        let past = seen(&[b"abc"], Window::from_byte(100, 4));
        assert_eq!((past.kept.len(), past.more, past.bytes), (0, false, 3));
        let exact = seen(&[b"abcd", b"ef"], Window::from_byte(2, 4));
        assert_eq!((exact.kept.as_slice(), exact.more), (&b"cdef"[..], false));
    }
}
