//! `agentteams-mcp client` ends a stdio server's whole process group when it closes the server:
//! nothing the server started outlives the client, whether the server exits when its stdin closes
//! or has to be stopped after the grace.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("client-group-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// True while process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// A server script: starts `sleep 30` in the background (its pid written to `pids`), then runs a
/// real MCP server (recall on `dir`, which serves without an index), then `after` once that
/// server has exited.
fn server_script(dir: &Path, after: &str) -> PathBuf {
    let script = dir.join("server.sh");
    let pids = dir.join("pids");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 30 &\necho $! >> '{pids}'\n'{BIN}' --serve-mcp recall --root '{root}'\n{after}\n",
            pids = pids.display(),
            root = dir.display(),
        ),
    )
    .expect("script");
    let mut perms = std::fs::metadata(&script).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).expect("chmod");
    script
}

fn background_pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn run_client(dir: &Path, script: &Path) -> Duration {
    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["client", "--project"])
        .arg(dir)
        .args(["tools", "--"])
        .arg(script)
        .output()
        .expect("the client runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("query_index"));
    started.elapsed()
}

fn assert_all_gone(pids: &[u32]) {
    assert!(!pids.is_empty(), "the server script did not start");
    // The group is signalled before the client exits; allow the kernel a moment to deliver.
    let deadline = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in pids {
        assert!(
            !alive(pid),
            "process {pid} started by the server outlived the client"
        );
    }
}

#[test]
fn a_server_that_exits_on_close_leaves_nothing_running() {
    let dir = scratch("clean");
    let script = server_script(&dir, "exit 0");
    let took = run_client(&dir, &script);
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_all_gone(&background_pids(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_that_lingers_is_ended_with_its_group_after_the_grace() {
    let dir = scratch("linger");
    // After the MCP server exits, the script starts a second background sleep and waits on it:
    // the group leader is still running when the grace ends.
    let pids = dir.join("pids");
    let script = server_script(
        &dir,
        &format!("sleep 30 &\necho $! >> '{}'\nwait", pids.display()),
    );
    let took = run_client(&dir, &script);
    assert!(took < Duration::from_secs(10), "{took:?}");
    let pids = background_pids(&dir);
    assert_eq!(pids.len(), 2);
    assert_all_gone(&pids);
    let _ = std::fs::remove_dir_all(&dir);
}
