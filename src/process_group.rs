//! Ending a child process together with everything it started: the child runs as the leader of its
//! own process group, and the group is signalled as a whole.
//!
//! std has no process-group kill, and the crate forbids `unsafe` and foreign crates, so a group is
//! signalled by running the system `kill` program (`kill -TERM -- -<pgid>`) from an absolute path
//! found once; `Child::kill` then covers the leader itself even if that program is missing. The
//! group id is the leader's pid (spawned with [`in_own_group`]), and it cannot be reused while the
//! leader is unreaped, so a group is only ever signalled before the leader is reaped: its exit is
//! observed without reaping through `/proc/<pid>/stat` ([`poll_exit`]). Where `/proc` is absent
//! the exit is only seen by reaping, and the group is then left alone rather than risk signalling
//! a reused id. Users: the stdio client (a server and its children on close), gitread (git and
//! its helpers on a timeout or cancellation) and `index build --python` (the interpreter).
//!
//! A group is all it reaches: a descendant that calls `setsid` (or `setpgid`) has left the group
//! and is not ended, and nothing here can find it again without risking a reused pid. Such a
//! process may keep a pipe of the child open, so a caller reading the child's output must not
//! wait for its end past its own deadline.

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Where the system `kill` program may live.
const KILL_PROGRAMS: [&str; 2] = ["/bin/kill", "/usr/bin/kill"];

/// How often [`GroupKiller::end`] checks whether the leader has exited.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// Makes `command` start its process as the leader of a new process group (Unix; elsewhere a
/// no-op, and only the process itself can be ended).
pub fn in_own_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    command
}

/// Whether a group leader has exited, learnt without reaping it where possible.
#[derive(Debug)]
pub enum Exit {
    Running,
    /// Exited and not reaped: its group id is still reserved, the group can be signalled.
    Unreaped,
    /// Exited and reaped (no `/proc` to look without reaping): the group must be left alone.
    Reaped(ExitStatus),
}

/// The state of `child`: read from `/proc/<pid>/stat` (which does not reap), or, where that file
/// cannot be read, from `try_wait` (which does).
pub fn poll_exit(child: &mut Child) -> io::Result<Exit> {
    match proc_state(child.id()) {
        Some(b'Z') => Ok(Exit::Unreaped),
        Some(_) => Ok(Exit::Running),
        None => Ok(child.try_wait()?.map_or(Exit::Running, Exit::Reaped)),
    }
}

/// Whether process `pid` has exited but is not reaped yet (state `Z` in `/proc/<pid>/stat`).
/// Reading it does not reap, so the pid and its group id stay reserved. Where `/proc` is absent
/// this answers false.
pub fn is_zombie(pid: u32) -> bool {
    proc_state(pid) == Some(b'Z')
}

/// The state letter of `/proc/<pid>/stat`. The command name is in parentheses and may contain
/// spaces or ')'; the state follows the last ')'.
fn proc_state(pid: u32) -> Option<u8> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().bytes().next()
}

/// Signals process groups; found once at start.
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
                .find(|path| cfg!(unix) && path.is_file()),
        }
    }

    /// Sends `signal` (a name: `TERM`, `KILL`) to every process in group `pgid`.
    pub fn signal(&self, pgid: u32, signal: &str) {
        if let Some(program) = &self.kill_program {
            let _ = Command::new(program)
                .env_clear()
                .args([&format!("-{signal}"), "--", &format!("-{pgid}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }

    /// SIGKILL to every process in `child`'s group, then to `child` itself, then reaps it. The
    /// caller must not have reaped `child`.
    pub fn kill(&self, child: &mut Child) -> Option<ExitStatus> {
        self.signal(child.id(), "KILL");
        let _ = child.kill();
        child.wait().ok()
    }

    /// Ends `child` (a group leader) and its group: waits up to `grace` for it to exit by itself,
    /// sends SIGTERM to the group (the leader if still running, and whatever it left behind),
    /// waits up to `term_grace` more for a leader still running, then SIGKILL to the group, and
    /// reaps it.
    pub fn end(
        &self,
        child: &mut Child,
        grace: Duration,
        term_grace: Duration,
    ) -> io::Result<ExitStatus> {
        let state = match wait_for_exit(child, grace)? {
            Exit::Reaped(status) => return Ok(status),
            state => state,
        };
        self.signal(child.id(), "TERM");
        if matches!(state, Exit::Running) {
            if let Exit::Reaped(status) = wait_for_exit(child, term_grace)? {
                return Ok(status);
            }
        }
        self.kill(child).map_or_else(|| child.wait(), Ok)
    }
}

/// Polls `child` until it exits or `limit` passes; the last state seen.
fn wait_for_exit(child: &mut Child, limit: Duration) -> io::Result<Exit> {
    let deadline = Instant::now() + limit;
    loop {
        match poll_exit(child)? {
            Exit::Running if Instant::now() < deadline => std::thread::sleep(EXIT_POLL),
            state => return Ok(state),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        proc_state(pid).is_some_and(|s| s != b'Z')
    }

    /// A shell that starts `sleep 30` in the background, reports its pid, then runs `tail`.
    fn leader_with_orphan(tail: &str) -> (Child, u32) {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", &format!("sleep 30 & echo $!; {tail}")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut child = in_own_group(&mut command).spawn().expect("sh runs");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("pid line");
        (child, line.trim().parse().expect("a pid"))
    }

    #[test]
    fn ending_a_leader_ends_what_it_left_behind() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let killer = GroupKiller::locate();
        // A leader that exits at once, and one that would outlive every grace.
        for tail in ["exit 3", "sleep 30"] {
            let (mut child, orphan) = leader_with_orphan(tail);
            assert!(alive(orphan));
            let started = Instant::now();
            let status = killer.end(
                &mut child,
                Duration::from_millis(300),
                Duration::from_millis(300),
            );
            assert!(status.is_ok());
            assert!(started.elapsed() < Duration::from_secs(5));
            let gone = (0..100).any(|_| {
                std::thread::sleep(Duration::from_millis(20));
                !alive(orphan)
            });
            assert!(gone, "the background sleep survived ({tail})");
        }
    }
}
