//! Asking a Python interpreter the user named (`index build --python PATH`) where its
//! distributions are installed, so the API partitions see the environment the project really
//! runs in (a system or conda interpreter, user-site installs, editable installs of sibling
//! checkouts) rather than only the `.venv` folders inside the project.
//!
//! This is the one place the builder runs a program other than git, and only one named on the
//! command line: an interpreter found in the project (a `.venv/bin/python` of a hostile checkout)
//! is never run. It runs with `-E -s` (no `PYTHON*` variables, no user site folder from the
//! environment it inherits), from `/` (so the project's folder is not on its path and none of the
//! project's modules can shadow the standard library's), with no input, in its own process group,
//! ended after [`INTERPRETER_TIMEOUT`], its output bounded by [`MAX_INTERPRETER_OUTPUT`]. What it
//! prints is data: a JSON array of folders, each checked here.
//!
//! Past the deadline nothing is waited for. A process the interpreter started in a new session
//! (`setsid`) has left its group, so ending the group does not end it, and it may hold the
//! interpreter's stdout open indefinitely: its pipes are read on threads that are never joined,
//! and an answer whose pipe is still open at the deadline is refused. That process is not the
//! builder's to kill (its id may be reused by the time it is found); it is left running.

use super::deps::Environment;
use agentteams_mcp::json;
use agentteams_mcp::process_group::{in_own_group, GroupKiller};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long the interpreter may take to answer before it (and anything it started) is ended.
pub const INTERPRETER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an interpreter still running at its deadline has between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(1);

/// Bytes of the interpreter's output read; more is an error (a `sys.path` is a few KiB).
pub const MAX_INTERPRETER_OUTPUT: usize = 256 * 1024;

/// Folders of its `sys.path` used, in order; the rest are ignored.
pub const MAX_INTERPRETER_PATHS: usize = 64;

/// What the interpreter runs: its `sys.path`, which `importlib.metadata` searches for
/// distributions, as one line of JSON.
const SCRIPT: &str = "import json, sys; print(json.dumps([p for p in sys.path if p]))";

/// The environments (each `sys.path` folder that exists) of the interpreter at `python`. Every
/// file later read through one stays inside its folder; editable sources may be anywhere (the
/// user vouched for this environment by naming it).
pub fn environments(python: &Path) -> Result<Vec<Environment>, String> {
    let shown = python.display();
    let mut command = Command::new(python);
    command
        .args(["-E", "-s", "-c", SCRIPT])
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let deadline = Instant::now() + INTERPRETER_TIMEOUT;
    let mut child = in_own_group(&mut command)
        .spawn()
        .map_err(|e| format!("--python {shown}: cannot run it: {e}"))?;
    let out_reader = read_aside(child.stdout.take());
    let err_reader = read_aside(child.stderr.take());
    let status = GroupKiller::locate()
        .end(&mut child, INTERPRETER_TIMEOUT, TERM_GRACE)
        .map_err(|e| format!("--python {shown}: {e}"))?;
    // The group is ended, so whatever still holds a pipe open left it (a `setsid` grandchild):
    // not ours to end, and not waited for past the deadline.
    let until_deadline = || deadline.saturating_duration_since(Instant::now());
    let out = out_reader.recv_timeout(until_deadline()).ok();
    let err = err_reader
        .recv_timeout(until_deadline())
        .unwrap_or_default();
    // Checked first: reading stops at the bound, so a flooding interpreter then dies of SIGPIPE.
    if out
        .as_ref()
        .is_some_and(|out| out.len() > MAX_INTERPRETER_OUTPUT)
    {
        return Err(format!(
            "--python {shown}: printed more than {MAX_INTERPRETER_OUTPUT} bytes"
        ));
    }
    if !status.success() {
        let first = String::from_utf8_lossy(&err);
        let first = first.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let why = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => format!("did not answer within {}s", INTERPRETER_TIMEOUT.as_secs()),
        };
        return Err(agentteams_mcp::sanitize::sanitize(&format!(
            "--python {shown}: {why}{}{first}",
            if first.is_empty() { "" } else { ": " }
        ))
        .into_owned());
    }
    let Some(out) = out else {
        return Err(format!(
            "--python {shown}: kept its output open past {}s (a process it started outside its process group holds it, and is left running)",
            INTERPRETER_TIMEOUT.as_secs()
        ));
    };
    parse_paths(&out).map_err(|e| format!("--python {shown}: {e}"))
}

/// Reads `pipe` to its end (at most one byte over [`MAX_INTERPRETER_OUTPUT`]) on a thread of its
/// own and hands over what it read. The thread is never joined: a pipe that a process outside
/// the group keeps open blocks it until the build exits, never the build.
fn read_aside(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(pipe) = pipe {
            let _ = pipe
                .take(MAX_INTERPRETER_OUTPUT as u64 + 1)
                .read_to_end(&mut out);
        }
        let _ = sender.send(out);
    });
    receiver
}

/// The folders of the interpreter's answer: absolute, existing, canonical, each once.
fn parse_paths(out: &[u8]) -> Result<Vec<Environment>, String> {
    let value = json::parse(out.trim_ascii()).map_err(|e| format!("unexpected answer: {e}"))?;
    let Some(items) = value.as_array() else {
        return Err("unexpected answer: not a JSON array of folders".to_owned());
    };
    let mut out: Vec<Environment> = Vec::new();
    for item in items.iter().take(MAX_INTERPRETER_PATHS) {
        let Some(path) = item.as_str().map(Path::new) else {
            return Err("unexpected answer: an entry is not a string".to_owned());
        };
        if !path.is_absolute() {
            continue;
        }
        let Ok(site) = std::fs::canonicalize(path) else {
            continue;
        };
        if site.is_dir() && !out.iter().any(|e| e.site == site) {
            out.push(Environment {
                confined_to: site.clone(),
                site,
                editable_anywhere: true,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_folder_by_folder() {
        let tmp = std::env::temp_dir();
        let tmp_canonical = std::fs::canonicalize(&tmp).unwrap();
        // A FIFO is no folder (and is never opened); a link to the folder is the folder, once.
        let dir = tmp.join(format!("interpreter-answers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let link = dir.join("link");
        std::os::unix::fs::symlink(&tmp, &link).unwrap();
        let text = format!(
            "[\"{}\", \"relative/dir\", \"/no/such/folder\", \"{}\", \"{}\", \"{}\"]\n",
            tmp.display(),
            fifo.display(),
            link.display(),
            tmp.display()
        );
        let envs = parse_paths(text.as_bytes()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(envs.len(), 1, "one existing absolute folder, once");
        assert_eq!(envs[0].site, tmp_canonical);
        assert_eq!(envs[0].confined_to, tmp_canonical);
        assert!(envs[0].editable_anywhere);
    }

    #[test]
    fn answers_that_are_not_an_array_of_strings_are_refused() {
        // Deep nesting is refused by the parser's depth limit, not by the stack.
        let deep = "[".repeat(1 << 20);
        for bad in ["{}", "[1]", "not json", "", "[\"/\"] trailing", &deep] {
            let e = parse_paths(bad.as_bytes()).unwrap_err();
            assert!(
                e.starts_with("unexpected answer"),
                "{}: {e}",
                &bad[..bad.len().min(20)]
            );
        }
    }
}
