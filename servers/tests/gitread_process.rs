//! gitread's process control and start-up through the binary: the version floor, the 15 s timeout
//! and cancellation (killing git and whatever it started), stderr floods, pipes held open by a
//! grandchild, and the config pre-flight cache. A wrapper script stands in for git (selected with
//! `AGENTTEAMS_GIT`, as a host would select a git) and hands every ordinary call to the real one.

mod gitread_support;

use agentteams_mcp::json::Value;
use gitread_support::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A `git` wrapper at `<tmp>/wrap/git`: logs each call's arguments to `<tmp>/calls`, runs `body`
/// (POSIX sh, with `$REAL` the real git and `$PIDS` a file for spawned pids), else execs real git.
fn wrapper(f: &Fixture, body: &str) -> PathBuf {
    let script = f.tmp.join("wrap/git");
    write(
        &script,
        &format!(
            "#!/bin/sh\nREAL='{real}'\nPIDS='{pids}'\necho \"$*\" >> '{calls}'\n{body}\nexec \"$REAL\" \"$@\"\n",
            real = git_program().display(),
            pids = f.tmp.join("pids").display(),
            calls = f.tmp.join("calls").display(),
        ),
    );
    make_executable(&script);
    script
}

fn calls(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.tmp.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn spawned_pids(f: &Fixture) -> Vec<u32> {
    std::fs::read_to_string(f.tmp.join("pids"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Waits (bounded) until `check` holds; returns whether it did.
fn eventually(limit: Duration, check: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}

fn start_with_git(root: &Path, git: &Path) -> Server {
    let git = git.display().to_string();
    Server::start(root, &[("AGENTTEAMS_GIT", Some(&git))])
}

/// For `git log`: a background sleeper (same process group) and a long sleep.
const HANG_ON_LOG: &str =
    "case \" $* \" in *\" log \"*) sleep 300 & echo $! >> \"$PIDS\"; sleep 300 ;; esac";

#[test]
fn a_git_older_than_the_minimum_is_refused_without_running_it() {
    let f = Fixture::new("old");
    let fake = f.tmp.join("old/git");
    write(
        &fake,
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'git version 2.30.0'; exit 0; fi\necho \"$*\" >> '{}'\nexit 1\n",
            f.marker.display()
        ),
    );
    make_executable(&fake);
    let mut server = start_with_git(&f.root, &fake);
    for reply in server.sweep() {
        reply.assert_error_contains("git 2.30.0 is older than the minimum 2.39.4; refusing");
    }
    f.assert_canary_silent();
}

#[test]
fn a_relative_git_path_is_a_start_up_error() {
    let f = Fixture::new("relgit");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(&f.root)
        .env("AGENTTEAMS_GIT", "bin/git")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("AGENTTEAMS_GIT must be an absolute path")
    );
}

#[test]
fn a_git_running_past_the_timeout_is_killed_with_its_children() {
    let f = Fixture::new("timeout");
    let git = wrapper(&f, HANG_ON_LOG);
    let mut server = start_with_git(&f.root, &git);
    let reply = server.call("git_log", "{}");
    reply.assert_error_contains("git timed out after 15s");
    let pids = spawned_pids(&f);
    assert!(!pids.is_empty(), "the wrapper started its child");
    assert!(
        eventually(Duration::from_secs(10), || pids
            .iter()
            .all(|&p| !process_alive(p))),
        "a child git started outlived the timeout"
    );
    // The server goes on serving.
    assert!(!server.call("git_status", "{}").is_error);
}

#[test]
fn a_ping_is_answered_while_git_runs_and_cancellation_kills_it_with_no_reply() {
    let f = Fixture::new("cancel");
    let git = wrapper(&f, HANG_ON_LOG);
    let mut server = start_with_git(&f.root, &git);
    server.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"git_log","arguments":{}}}"#);
    assert!(eventually(Duration::from_secs(10), || !spawned_pids(&f).is_empty()));
    // The server answers a ping while the call runs.
    server.send(r#"{"jsonrpc":"2.0","id":"meanwhile","method":"ping"}"#);
    let reply = server.read_reply();
    assert_eq!(
        reply.get("id").and_then(Value::as_str),
        Some("meanwhile"),
        "{reply}"
    );
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}"#);
    let pids = spawned_pids(&f);
    assert!(
        eventually(Duration::from_secs(10), || pids
            .iter()
            .all(|&p| !process_alive(p))),
        "git's child survived the cancellation"
    );
    server.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    loop {
        let reply = server.read_reply();
        let id = reply
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        assert_ne!(id, "slow", "a cancelled request got a reply: {reply}");
        if id == "after" {
            break;
        }
    }
}

#[test]
fn stderr_and_stdout_floods_are_drained_and_capped() {
    let f = Fixture::new("flood");
    let git = wrapper(
        &f,
        "case \" $* \" in *\" log \"*) head -c 5000000 /dev/zero | tr '\\000' e >&2; head -c 5000000 /dev/zero | tr '\\000' o; exit 3 ;; esac",
    );
    let mut server = start_with_git(&f.root, &git);
    let reply = server.call("git_log", "{}");
    reply.assert_error_contains("git exited 3: eeee");
    let excerpt = reply.text.trim_start_matches("git exited 3: ");
    assert_eq!(excerpt.len(), 400, "stderr keeps its first 400 bytes");
    assert!(!reply.text.contains('o'.to_string().repeat(10).as_str()));
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hold_the_call() {
    let f = Fixture::new("held");
    let git = wrapper(
        &f,
        "case \" $* \" in *\" log \"*) sleep 300 & echo $! >> \"$PIDS\"; \"$REAL\" \"$@\"; exit $? ;; esac",
    );
    let mut server = start_with_git(&f.root, &git);
    let reply = server.call("git_log", "{}");
    assert!(reply.output().contains("second"));
    let pids = spawned_pids(&f);
    assert!(!pids.is_empty());
    assert!(eventually(Duration::from_secs(10), || pids
        .iter()
        .all(|&p| !process_alive(p))));
}

/// Waits out the pre-flight's racy window so the verdict can be cached.
fn settle() {
    std::thread::sleep(Duration::from_millis(2500));
}

fn config_runs(f: &Fixture) -> usize {
    calls(f).iter().filter(|c| c.contains(" config ")).count()
}

#[test]
fn the_config_check_is_reused_only_while_its_files_are_unchanged() {
    let f = Fixture::new("cache");
    write(&f.root.join("cfg/inc"), "[core]\n\tbare = false\n");
    f.plant_config("[include]\n\tpath = ../cfg/inc\n");
    write(&f.root.join(".gitattributes"), "* filter=x\n");
    settle();
    let git = wrapper(&f, "");
    let mut server = start_with_git(&f.root, &git);
    for _ in 0..3 {
        assert!(!server.call("git_status", "{}").is_error);
    }
    assert_eq!(
        config_runs(&f),
        1,
        "an unchanged config is listed once: {:?}",
        calls(&f)
    );

    // Same length, new content, in the included file: noticed.
    write(&f.root.join("cfg/inc"), "[filter \"x\"]\n\tclean = cat\n");
    server
        .call("git_status", "{}")
        .assert_error_contains("filter");
    assert_eq!(config_runs(&f), 2);
    f.assert_canary_silent();
}

#[test]
fn a_new_include_target_and_a_branch_switch_are_noticed() {
    let f = Fixture::new("cache2");
    let evil = format!("[filter \"x\"]\n\tclean = {}\n", f.canary_str());
    // Include targets that do not exist yet, and one that applies only on branch `side`.
    f.plant_config(
        "[include]\n\tpath = ../cfg/later\n[includeIf \"onbranch:side\"]\n\tpath = ../cfg/side\n",
    );
    write(&f.root.join("cfg/side"), &evil);
    write(&f.root.join(".gitattributes"), "* filter=x\n");
    git(&f.root, &["branch", "side"]);
    settle();
    let git_path = wrapper(&f, "");
    let mut server = start_with_git(&f.root, &git_path);
    assert!(!server.call("git_status", "{}").is_error);
    assert!(!server.call("git_status", "{}").is_error);
    assert_eq!(config_runs(&f), 1);
    // HEAD moves to `side`: the conditional include now applies.
    write(&f.root.join(".git/HEAD"), "ref: refs/heads/side\n");
    server
        .call("git_status", "{}")
        .assert_error_contains("filter");
    write(&f.root.join(".git/HEAD"), "ref: refs/heads/main\n");
    assert!(!server.call("git_status", "{}").is_error);
    // The missing include appears.
    write(&f.root.join("cfg/later"), &evil);
    server
        .call("git_status", "{}")
        .assert_error_contains("filter");
    f.assert_canary_silent();
}

#[test]
fn an_oversized_config_is_refused() {
    let f = Fixture::new("bigconfig");
    let mut config = String::from("[big]\n");
    let mut n = 0;
    // Each key lists as `file:<path>\0big.kNNNNNN\n<value>\0`: well past 4 MiB in total.
    while config.len() < 4 * 1024 * 1024 {
        config.push_str(&format!("\tk{n:06} = {}\n", "v".repeat(40)));
        n += 1;
    }
    f.plant_config(&config);
    let mut server = f.server();
    server.call("git_status", "{}").assert_error_contains(
        "could not read the repository config: the listing is longer than 4194304 bytes",
    );
}
