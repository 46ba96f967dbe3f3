//! Tool policy and the audit log through the real binary, the way an operator runs them: flags and
//! policy files, the records of a served run, redaction, several servers on one log, a log that
//! cannot be written, and `audit verify` on what the servers wrote.

mod common;

use agentteams_mcp::json::{self, Value};
use common::{listed_tool_names, records, TempDir};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// What one served conversation left: the replies in order, stderr, the exit status, the pid.
struct Served {
    replies: Vec<Value>,
    stderr: String,
    status: ExitStatus,
    pid: u32,
}

/// Runs `command` (a server) and has a conversation: each message (a request) is sent once the
/// previous one is answered, then stdin is closed and the rest collected. Waiting for each reply
/// keeps every call inside the conversation, whatever the machine's load.
fn converse(mut command: Command, messages: &[String]) -> Served {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let pid = child.id();
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut replies = Vec::new();
    for message in messages {
        // A server that refused to start has closed its end: the conversation is over.
        if writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        replies.push(json::parse(line.as_bytes()).unwrap());
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(
        rest.is_empty(),
        "unexpected output after the conversation: {rest}"
    );
    Served {
        replies,
        stderr: stderr.join().unwrap(),
        status: child.wait().unwrap(),
        pid,
    }
}

fn gitread(repo: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(repo)
        .args(extra);
    command
}

/// A repository with one commit, made with the system's git.
fn repo(dir: &TempDir) -> PathBuf {
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("a.txt"), "hello\n").unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "a.txt"],
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "first",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }
    repo.canonicalize().unwrap()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn call(id: u64, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

fn list(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn error_of(reply: &Value) -> (i64, String) {
    let error = reply
        .get("error")
        .unwrap_or_else(|| panic!("not an error: {reply}"));
    (
        error.get("code").and_then(Value::as_i64).unwrap(),
        str_of(error, "message").unwrap().to_owned(),
    )
}

fn verify(log: &Path, ci: bool) -> (Option<i32>, String) {
    let mut command = Command::new(BIN);
    command.args(["audit", "verify"]).arg(log);
    if ci {
        command.arg("--ci");
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_served_run_is_policed_recorded_and_verifies() {
    let dir = TempDir::new("audit-serve");
    let repo = repo(&dir);
    let log = dir.path().join("audit.log");
    let log_arg = log.to_str().unwrap();
    let served = converse(
        gitread(&repo, &["--deny-tool", "git_blame", "--audit-log", log_arg]),
        &[
            INIT.to_owned(),
            list(1),
            call(2, "git_log", r#"{"n": 1}"#),
            call(3, "git_blame", r#"{"rev": "HEAD", "path": "a.txt"}"#),
            call(4, "git_show", r#"{"rev": "--output=pwned"}"#),
        ],
    );
    assert_eq!(served.status.code(), Some(0), "{}", served.stderr);
    let [_, listed, logged, blamed, shown] = &served.replies[..] else {
        panic!("{:?}", served.replies)
    };
    assert_eq!(
        listed_tool_names(listed),
        [
            "git_log",
            "git_show",
            "git_diff",
            "git_status",
            "git_file",
            "git_refs",
            "git_grep"
        ]
    );
    assert!(logged.get("result").is_some());
    assert_eq!(
        error_of(blamed),
        (
            -32001,
            "tool \"git_blame\" is refused by policy: rule deny \"git_blame\" (--deny-tool)"
                .to_owned()
        )
    );
    assert_eq!(
        shown.get("result").and_then(|r| r.get("isError")),
        Some(&Value::Bool(true))
    );

    let recs = records(&log);
    let events: Vec<&str> = recs.iter().map(|r| str_of(r, "event").unwrap()).collect();
    assert_eq!(
        events,
        [
            "run_started",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_completed",
            "tool_call_requested",
            "tool_call_blocked",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_failed",
            "run_completed"
        ]
    );
    let started = &recs[0];
    assert_eq!(str_of(started, "server"), Some("agentteams-gitread"));
    assert_eq!(str_of(started, "version"), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(str_of(started, "root"), repo.to_str());
    assert_eq!(str_of(started, "transport"), Some("stdio"));
    assert_eq!(
        started.get("pid").and_then(Value::as_u64),
        Some(u64::from(served.pid))
    );
    assert_eq!(str_of(started, "mode"), Some("redacted"));
    assert_eq!(
        json::to_string(started.get("policy").unwrap()),
        r#"["deny \"git_blame\" (--deny-tool)"]"#
    );
    assert_eq!(
        str_of(&recs[5], "rule"),
        Some("rule deny \"git_blame\" (--deny-tool)")
    );
    assert_eq!(recs[1].get("request_id").and_then(Value::as_u64), Some(2));

    // The head the server reports at shutdown is the log's last hash, and the log verifies.
    let head = str_of(recs.last().unwrap(), "hash").unwrap();
    let run = str_of(started, "run").unwrap();
    assert!(
        served.stderr.contains(&format!(
            "agentteams-mcp: audit: run {run} completed; head {head}"
        )),
        "{}",
        served.stderr
    );
    let (code, report) = verify(&log, true);
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!("run {run}: intact, completed; 10 records")),
        "{report}"
    );

    // One edited byte in what the server wrote is caught, at its line.
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replacen("\"git_show\"", "\"git_shoW\"", 1)).unwrap();
    let (code, report) = verify(&log, false);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.starts_with(&format!(
            "line 7: run {run}: the record's hash does not match"
        )),
        "{report}"
    );
}

#[test]
fn arguments_are_redacted_unless_audit_full() {
    let dir = TempDir::new("audit-redact");
    let repo = repo(&dir);
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
    let arguments = format!(r#"{{"n": 1, "token": "hunter2", "note": "{secret}"}}"#);
    for (full, kept) in [(false, false), (true, true)] {
        let log = dir.path().join(format!("audit-{full}.log"));
        let mut extra = vec!["--audit-log", log.to_str().unwrap()];
        if full {
            extra.push("--audit-full");
        }
        let served = converse(
            gitread(&repo, &extra),
            &[INIT.to_owned(), call(1, "git_log", &arguments)],
        );
        assert_eq!(served.status.code(), Some(0), "{}", served.stderr);
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.contains(secret), kept, "{text}");
        assert_eq!(text.contains("hunter2"), kept, "{text}");
        assert_eq!(text.contains("\"token\":\"<redacted>\""), !kept, "{text}");
        assert!(text.contains("tool_call_completed"));
    }
}

#[test]
fn policy_files_and_allowlists_through_the_command_line() {
    let dir = TempDir::new("audit-policy");
    let repo = repo(&dir);
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"comment": "ops", "deny": ["git_diff"]}"#).unwrap();
    let served = converse(
        gitread(
            &repo,
            &[
                "--allow-tool",
                "git_*",
                "--allow-tool",
                "git_st?tus",
                "--policy",
                policy.to_str().unwrap(),
                "--deny-tool",
                "git_blame",
            ],
        ),
        &[
            INIT.to_owned(),
            list(1),
            call(2, "git_diff", r#"{"base": "HEAD", "head": "HEAD"}"#),
        ],
    );
    assert_eq!(served.status.code(), Some(0), "{}", served.stderr);
    assert_eq!(
        listed_tool_names(&served.replies[1]),
        [
            "git_log",
            "git_show",
            "git_status",
            "git_file",
            "git_refs",
            "git_grep"
        ]
    );
    assert_eq!(
        error_of(&served.replies[2]).1,
        "tool \"git_diff\" is refused by policy: rule deny \"git_diff\" (policy file deny[0])"
    );

    // An allowlist that names no tool of the server hides them all; --read-only (the only mode)
    // is accepted.
    let served = converse(
        gitread(&repo, &["--read-only", "--allow-tool", "query_*"]),
        &[INIT.to_owned(), list(1)],
    );
    assert!(listed_tool_names(&served.replies[1]).is_empty());

    // Unusable rules stop the server before it serves anything.
    std::fs::write(&policy, r#"{"deny": ["git diff"]}"#).unwrap();
    for (extra, message) in [
        (
            vec!["--policy", policy.to_str().unwrap()],
            "policy file deny[0]: pattern \"git diff\"",
        ),
        (vec!["--deny-tool", "[x]"], "--deny-tool: pattern \"[x]\""),
        (
            vec!["--policy", "/nonexistent/policy.json"],
            "policy file /nonexistent/policy.json: ",
        ),
        (
            vec!["--audit-log", "/nonexistent/dir/audit.log"],
            "audit log /nonexistent/dir/audit.log: ",
        ),
    ] {
        let served = converse(gitread(&repo, &extra), &[INIT.to_owned()]);
        assert_eq!(served.status.code(), Some(2), "{extra:?}");
        assert!(served.replies.is_empty(), "{extra:?}");
        assert!(
            served.stderr.contains(message),
            "{extra:?}: {}",
            served.stderr
        );
    }
}

#[test]
fn several_servers_append_to_one_log_and_every_run_verifies() {
    const SERVERS: usize = 3;
    const CALLS: u64 = 20;
    let dir = TempDir::new("audit-concurrent");
    let repo = repo(&dir);
    let log = dir.path().join("shared.log");
    let messages: Vec<String> = std::iter::once(INIT.to_owned())
        .chain((1..=CALLS).map(|id| call(id, "git_log", r#"{"n": 1}"#)))
        .collect();
    let handles: Vec<_> = (0..SERVERS)
        .map(|_| {
            let command = gitread(&repo, &["--audit-log", log.to_str().unwrap()]);
            let messages = messages.clone();
            std::thread::spawn(move || converse(command, &messages))
        })
        .collect();
    for handle in handles {
        let served = handle.join().unwrap();
        assert_eq!(served.status.code(), Some(0), "{}", served.stderr);
    }
    let (code, report) = verify(&log, true);
    assert_eq!(code, Some(0), "{report}");
    let per_run = 2 + 3 * CALLS;
    assert_eq!(
        report
            .matches(&format!("intact, completed; {per_run} records"))
            .count(),
        SERVERS,
        "{report}"
    );
    assert!(report.trim_end().ends_with(&format!(
        "OK: {} lines, {SERVERS} runs, 0 problems",
        SERVERS as u64 * per_run
    )));
}

#[cfg(unix)]
#[test]
fn a_log_that_cannot_be_written_refuses_calls_and_the_run_is_not_completed() {
    let dir = TempDir::new("audit-full-disk");
    let repo = repo(&dir);
    let log = dir.path().join("audit.log");
    // The shell caps the files the server may write at 2 blocks (1 KiB or 2 KiB depending on the
    // shell's block size) and ignores SIGXFSZ, so a write past the cap fails with EFBIG, as on a
    // full disk. run_started fits; a call carrying 4 KB does not.
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"")
        .arg(BIN)
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(&repo)
        .args(["--audit-full", "--audit-log"])
        .arg(&log);
    let big = format!(r#"{{"n": 1, "path": "{}"}}"#, "p".repeat(4000));
    let served = converse(
        command,
        &[
            INIT.to_owned(),
            call(1, "git_log", &big),
            call(2, "git_log", r#"{"n": 1}"#),
        ],
    );
    let refusal = (
        -32603,
        "the audit log cannot be written, so the call is refused".to_owned(),
    );
    assert_eq!(error_of(&served.replies[1]), refusal);
    assert_eq!(error_of(&served.replies[2]), refusal);
    assert_eq!(served.status.code(), Some(1), "{}", served.stderr);
    assert!(
        served.stderr.contains("an earlier write failed"),
        "{}",
        served.stderr
    );
    // What reached the disk is the run's start and a cut record: verify says so.
    let (code, report) = verify(&log, false);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("line 2: the file ends inside this line"),
        "{report}"
    );
}

#[test]
fn a_call_of_many_arguments_is_logged_in_linear_time() {
    // 130,000 argument members in one 1 MiB line: keeping each in the logged copy with
    // `Map::insert`, a linear look for the key among those kept, took about a minute a call
    // (90,000 members: 26 s).
    let dir = TempDir::new("audit-many-arguments");
    let repo = repo(&dir);
    let alphabet: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').collect();
    let mut keys = Vec::new();
    'keys: for a in &alphabet {
        for b in &alphabet {
            for c in &alphabet {
                keys.push(format!("\"{a}{b}{c}\":0"));
                if keys.len() == 130_000 {
                    break 'keys;
                }
            }
        }
    }
    let arguments = format!("{{{}}}", keys.join(","));
    for full in [false, true] {
        let log = dir.path().join(format!("audit-{full}.log"));
        let mut extra = vec!["--audit-log", log.to_str().unwrap()];
        if full {
            extra.push("--audit-full");
        }
        let started = std::time::Instant::now();
        let served = converse(
            gitread(&repo, &extra),
            &[INIT.to_owned(), call(1, "git_log", &arguments)],
        );
        let took = started.elapsed();
        assert_eq!(served.status.code(), Some(0), "{}", served.stderr);
        assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
        assert!(
            served.replies[1].get("result").is_some(),
            "{}",
            served.replies[1]
        );
        let logged = records(&log)
            .into_iter()
            .find(|r| str_of(r, "event") == Some("tool_call_requested"))
            .expect("the call is logged");
        let logged = logged.get("arguments").and_then(Value::as_object).unwrap();
        assert_eq!(logged.len(), 130_000);
        assert_eq!(verify(&log, true).0, Some(0));
    }
}
