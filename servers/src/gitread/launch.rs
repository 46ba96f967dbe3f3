//! Starting git under the memory limit without paying for the limit on the call's path.
//!
//! Applying the limit costs one `exec` of `/bin/sh` (or `prlimit`) before git's own, about half a
//! millisecond, a third of a fast git call. So the server keeps one **spare**: the limit program
//! already started and already `exec`ed into this binary's hidden helper mode
//! ([`EXEC_HELPER_FLAG`]), under the limit, in its own process group, stdout and stderr piped to
//! the server, waiting on stdin. A call hands it git's command (program, directory, environment,
//! arguments: NUL-terminated fields, nothing interpreted) and closes stdin; the helper `exec`s git
//! in the same process, so git inherits the limit, the pid, the process group and the pipes, and
//! the server runs it as its own child exactly as if it had spawned git. The next spare is started
//! on a thread after the call; a call that finds none (calls in parallel, or right after another)
//! starts git through the limit program directly, as it would without a helper.
//!
//! Only a binary that implements the helper mode names itself as the helper
//! ([`GitSettings::exec_helper`](super::GitSettings), which `agentteams-mcp`'s command sets), and
//! the helper path is proven at start like the limit; otherwise, and for any command the encoding
//! cannot carry, git is started through the limit program.

use super::memory::Limiter;
use super::process::piped_in_own_group;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The hidden argument that runs `agentteams-mcp` as the exec helper.
pub const EXEC_HELPER_FLAG: &str = "--gitread-exec-helper";

/// The helper mode: reads one command from stdin and `exec`s it with stdin from the null device,
/// keeping stdout, stderr, pid and limits. Returns an exit code only when there is nothing to run
/// (a spare the server never used sees end of input) or the `exec` failed.
pub fn exec_helper() -> u8 {
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        return 127;
    }
    let Some(mut command) = decode(&request) else {
        return 127;
    };
    let error = command.stdin(Stdio::null()).exec();
    let _ = writeln!(std::io::stderr(), "git could not run: {error}");
    127
}

/// Starts git commands under the limit, through a spare helper when one can be used.
#[derive(Debug)]
pub struct Launcher {
    limiter: Option<Limiter>,
    /// The proven helper program, if any.
    helper: Option<PathBuf>,
    spare: Arc<Mutex<Option<Child>>>,
}

impl Launcher {
    /// A launcher for `limiter` (none: git runs unlimited, started directly), using `helper` (a
    /// program implementing [`EXEC_HELPER_FLAG`]) if it proves to run commands under the limit.
    pub fn new(limiter: Option<Limiter>, helper: Option<&Path>) -> Launcher {
        let helper = limiter.as_ref().and(helper).map(Path::to_path_buf);
        let mut launcher = Launcher {
            limiter,
            helper,
            spare: Arc::default(),
        };
        launcher.refill();
        if !launcher.helper_applies_the_limit() {
            launcher.helper = None;
        }
        launcher.refill();
        launcher
    }

    pub fn limiter(&self) -> Option<&Limiter> {
        self.limiter.as_ref()
    }

    /// Starts `command` (a git command from `Git::command`) under the limit.
    pub fn spawn(&self, command: &mut Command) -> std::io::Result<Child> {
        let Some(limiter) = &self.limiter else {
            return command.spawn();
        };
        if let Some(child) = encode(command).and_then(|request| self.hand_to_spare(&request)) {
            return Ok(child);
        }
        limiter.wrap(command).spawn()
    }

    /// The spare running `request`; `None` when there is no spare ready or it could not take
    /// the request.
    fn hand_to_spare(&self, request: &[u8]) -> Option<Child> {
        let mut child = self.spare().take()?;
        let sent = child
            .stdin
            .take()
            .is_some_and(|mut stdin| stdin.write_all(request).is_ok());
        if !sent {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        Some(child)
    }

    /// Starts the next spare on a thread of its own, after a call, so neither the call nor its
    /// git waits for it; a call that finds no spare starts git through the limit program directly.
    pub fn refill_later(&self) {
        let (Some(limiter), Some(helper)) = (&self.limiter, &self.helper) else {
            return;
        };
        if self.spare().is_some() {
            return;
        }
        let (limiter, helper, spare) = (limiter.clone(), helper.clone(), Arc::clone(&self.spare));
        let _ = std::thread::Builder::new()
            .name("gitread-spare".into())
            .spawn(move || refill(&spare, &limiter, &helper));
    }

    fn refill(&self) {
        if let (Some(limiter), Some(helper)) = (&self.limiter, &self.helper) {
            refill(&self.spare, limiter, helper);
        }
    }

    fn retire_spare(&self) {
        let taken = self.spare().take();
        if let Some(mut spare) = taken {
            retire(&mut spare);
        }
    }

    fn spare(&self) -> MutexGuard<'_, Option<Child>> {
        lock(&self.spare)
    }

    /// The probe of the helper path: the shell, run through it, reports the limit back.
    fn helper_applies_the_limit(&self) -> bool {
        let Some(limiter) = &self.limiter else {
            return false;
        };
        let mut probe = Command::new(super::memory::SHELL);
        probe.args(["-c", "ulimit -v"]).current_dir("/");
        piped_in_own_group(&mut probe);
        let Some(child) = encode(&probe).and_then(|request| self.hand_to_spare(&request)) else {
            return false;
        };
        child.wait_with_output().is_ok_and(|out| {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).trim()
                    == (limiter.bytes() / 1024).to_string()
        })
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        self.retire_spare();
    }
}

fn lock(spare: &Mutex<Option<Child>>) -> MutexGuard<'_, Option<Child>> {
    spare.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts a helper under `limiter` into `spare` if it is empty (racing refills keep one).
fn refill(spare: &Mutex<Option<Child>>, limiter: &Limiter, helper: &Path) {
    if lock(spare).is_some() {
        return;
    }
    let mut command = limiter.command(helper);
    command.arg(EXEC_HELPER_FLAG).env_clear().current_dir("/");
    piped_in_own_group(&mut command);
    let Ok(mut fresh) = command.stdin(Stdio::piped()).spawn() else {
        return;
    };
    let mut slot = lock(spare);
    if slot.is_none() {
        *slot = Some(fresh);
    } else {
        drop(slot);
        retire(&mut fresh);
    }
}

/// Ends a helper that got no command: it sees end of input and exits; reaping it leaves no zombie.
fn retire(helper: &mut Child) {
    drop(helper.stdin.take());
    let _ = helper.wait();
}

/// `command` as NUL-terminated fields: program, directory, the number of variables, each name and
/// value, then the arguments. `None` when a field holds a NUL (git could not be given it anyway;
/// std already turns an argument holding one into `<string-with-nul>`, and the argument rules
/// refuse NUL in every value a client sends).
fn encode(command: &Command) -> Option<Vec<u8>> {
    let envs: Vec<(&OsStr, &OsStr)> = command
        .get_envs()
        .filter_map(|(name, value)| Some((name, value?)))
        .collect();
    let count = envs.len().to_string();
    let dir = command.get_current_dir().unwrap_or(Path::new("/"));
    let fields = [command.get_program(), dir.as_os_str(), OsStr::new(&count)]
        .into_iter()
        .chain(envs.iter().flat_map(|(name, value)| [*name, *value]))
        .chain(command.get_args());
    let mut request = Vec::new();
    for field in fields {
        if field.as_bytes().contains(&0) {
            return None;
        }
        request.extend_from_slice(field.as_bytes());
        request.push(0);
    }
    Some(request)
}

/// The command [`encode`] wrote, with an empty environment plus the listed variables.
fn decode(request: &[u8]) -> Option<Command> {
    let mut fields = request.strip_suffix(&[0])?.split(|&b| b == 0);
    let mut next = || fields.next().map(OsStr::from_bytes);
    let mut command = Command::new(next()?);
    command.env_clear().current_dir(next()?);
    let count: usize = next()?.to_str()?.parse().ok()?;
    for _ in 0..count {
        let (name, value) = (next()?, next()?);
        command.env(name, value);
    }
    while let Some(arg) = next() {
        command.arg(arg);
    }
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_survive_the_encoding_byte_for_byte() {
        let mut command = Command::new("/usr/bin/git");
        command
            .env_clear()
            .env("GIT_COMMON_DIR", "/r/.git")
            .env("EMPTY", "")
            .current_dir("/r")
            .args(["log", "", "a b\nc", "--format=%H%x09"]);
        let request = encode(&command).unwrap_or_default();
        let decoded = decode(&request).unwrap_or_else(|| Command::new("none"));
        assert_eq!(decoded.get_program(), "/usr/bin/git");
        assert_eq!(decoded.get_current_dir(), Some(Path::new("/r")));
        let args: Vec<&OsStr> = decoded.get_args().collect();
        assert_eq!(args, ["log", "", "a b\nc", "--format=%H%x09"]);
        let envs: Vec<(&OsStr, Option<&OsStr>)> = decoded.get_envs().collect();
        assert_eq!(
            envs,
            [
                (OsStr::new("EMPTY"), Some(OsStr::new(""))),
                (OsStr::new("GIT_COMMON_DIR"), Some(OsStr::new("/r/.git")))
            ]
        );
        assert!(decode(b"").is_none());
        assert!(decode(b"/bin/true\0/\0x\0").is_none());
        assert!(decode(b"/bin/true\0/\x002\0A\0").is_none());
        command.env("X", OsStr::from_bytes(b"nul\0inside"));
        assert!(encode(&command).is_none());
    }
}
