//! Runs one git process to completion or to its end: bounded capture of stdout and stderr, a
//! wall-clock timeout, client cancellation, and killing the whole process group git started.
//!
//! std has no process-group kill, and the project forbids `unsafe` and foreign crates, so the group
//! is killed by running the system `kill` program (`kill -KILL -- -<pgid>`) on an absolute path
//! found at start; `Child::kill` then covers git itself even if that program is missing. The group
//! id is git's own pid (spawned with `process_group(0)`), and it cannot be reused while git is
//! unreaped, which is why the kill always happens before the final `wait`.

use agentteams_mcp::server::CancelToken;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one git process may run (the reference's `TIMEOUT_SECONDS`).
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

/// Where the system `kill` program may live.
const KILL_PROGRAMS: [&str; 2] = ["/bin/kill", "/usr/bin/kill"];

/// What a finished git process left behind.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// The first `stdout_keep` bytes of stdout.
    pub stdout: Vec<u8>,
    /// True when stdout had more bytes than were kept.
    pub stdout_more: bool,
    /// The first [`MAX_STDERR`] bytes of stderr.
    pub stderr: Vec<u8>,
}

/// Why a run produced no [`Finished`].
#[derive(Debug)]
pub enum RunError {
    Spawn(std::io::Error),
    TimedOut,
    Cancelled,
}

/// Kills process groups; found once at start.
#[derive(Clone, Debug)]
pub struct GroupKiller {
    kill_program: Option<PathBuf>,
}

impl GroupKiller {
    pub fn locate() -> GroupKiller {
        GroupKiller {
            kill_program: KILL_PROGRAMS
                .iter()
                .map(PathBuf::from)
                .find(|path| path.is_file()),
        }
    }

    /// SIGKILL to every process in `child`'s group, then to `child` itself, then reaps it.
    fn kill(&self, child: &mut Child) -> Option<ExitStatus> {
        if let Some(program) = &self.kill_program {
            let _ = Command::new(program)
                .env_clear()
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = child.kill();
        child.wait().ok()
    }
}

/// One pipe reader: keeps the first `keep` bytes, drains the rest so git never blocks on a full
/// pipe, and reports on `done` when the pipe closes.
fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    keep: usize,
    done: Sender<()>,
) -> Option<JoinHandle<(Vec<u8>, bool)>> {
    std::thread::Builder::new()
        .name("gitread-pipe".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut more = false;
            let mut buffer = [0u8; 16 * 1024];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = keep.saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..n.min(room)]);
                        more |= n > room;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
            (kept, more)
        })
        .ok()
}

/// Runs `command` (already configured with piped stdout/stderr and its own process group), keeping
/// `stdout_keep` bytes of stdout. Returns when git exits, the timeout passes or `cancel` fires.
pub fn run(
    mut command: Command,
    stdout_keep: usize,
    cancel: &CancelToken,
    killer: &GroupKiller,
) -> Result<Finished, RunError> {
    let started = Instant::now();
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = child
        .stdout
        .take()
        .and_then(|pipe| spawn_reader(pipe, stdout_keep, done_tx.clone()));
    let stderr = child
        .stderr
        .take()
        .and_then(|pipe| spawn_reader(pipe, MAX_STDERR, done_tx));
    if stdout.is_none() || stderr.is_none() {
        killer.kill(&mut child);
        return Err(RunError::Spawn(std::io::Error::other(
            "could not start a thread to read git's output",
        )));
    }
    let deadline = started + TIMEOUT;
    let status = match wait_for_exit(&mut child, &done_rx, deadline, cancel) {
        Ok(Exit::Clean(status)) => status,
        Ok(Exit::PipesHeld(open)) => {
            // git is gone (a zombie, so its group id is still reserved) but something it started
            // still holds its pipes: kill the group, then collect what the readers have.
            let status = killer.kill(&mut child);
            wait_for_pipes(&done_rx, open);
            match status {
                Some(status) => status,
                None => return Err(RunError::Spawn(std::io::Error::other("git vanished"))),
            }
        }
        Err(stop) => {
            killer.kill(&mut child);
            wait_for_pipes(&done_rx, 2);
            return Err(stop);
        }
    };
    let (stdout, stdout_more) = join_reader(stdout);
    let (stderr, _) = join_reader(stderr);
    Ok(Finished {
        status,
        stdout,
        stdout_more,
        stderr,
    })
}

/// How git ended.
enum Exit {
    /// Both pipes closed and git was reaped.
    Clean(ExitStatus),
    /// git exited [`PIPE_GRACE`] ago, unreaped, with this many pipes still open.
    PipesHeld(usize),
}

/// Waits for both pipes to close and git to exit, the deadline, or a cancellation. While a pipe is
/// open, exit is detected without reaping (see [`is_zombie`]) so the group can still be killed.
fn wait_for_exit(
    child: &mut Child,
    done: &Receiver<()>,
    deadline: Instant,
    cancel: &CancelToken,
) -> Result<Exit, RunError> {
    let mut open = 2;
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
        if open == 0 {
            if let Ok(Some(status)) = child.try_wait() {
                return Ok(Exit::Clean(status));
            }
            // The pipes close a moment before the exit is reported: poll briefly, never block.
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(CANCEL_POLL);
            continue;
        }
        match done.recv_timeout(CANCEL_POLL.min(deadline - now)) {
            Ok(()) => open -= 1,
            Err(RecvTimeoutError::Disconnected) => open = 0,
            Err(RecvTimeoutError::Timeout) => match exited_at {
                Some(at) if at.elapsed() >= PIPE_GRACE => return Ok(Exit::PipesHeld(open)),
                Some(_) => {}
                None => {
                    if is_zombie(child.id()) {
                        exited_at = Some(Instant::now());
                    }
                }
            },
        }
    }
}

/// Whether process `pid` has exited but is not reaped yet, read from `/proc/<pid>/stat` (state
/// `Z`). Reading it does not reap, so the pid and its group id stay reserved. Where `/proc` is
/// absent this answers false and a held pipe ends only at the timeout.
fn is_zombie(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The command name is in parentheses and may contain spaces or ')'; the state follows the last ')'.
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// After a kill, gives the readers [`PIPE_GRACE`] to see their pipes close.
fn wait_for_pipes(done: &Receiver<()>, mut open: usize) {
    let deadline = Instant::now() + PIPE_GRACE;
    while open > 0 {
        let now = Instant::now();
        if now >= deadline || done.recv_timeout(deadline - now).is_err() {
            return;
        }
        open -= 1;
    }
}

/// The reader's capture if it finished; an abandoned reader (pipe held by an escaped process) gives
/// nothing rather than blocking the call.
fn join_reader(reader: Option<JoinHandle<(Vec<u8>, bool)>>) -> (Vec<u8>, bool) {
    match reader {
        Some(handle) if handle.is_finished() => handle.join().unwrap_or_default(),
        _ => (Vec::new(), false),
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
