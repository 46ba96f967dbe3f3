//! Permission modes, approval presets and scoped approvals through the real binary, over stdio and
//! HTTP, with the `governed` fixture (a read-only tool and two that declare they change data):
//! startup refusals (exit 2, one line), refusals naming what refused, the digest workflow, and an
//! audit log that records each decision and verifies.

mod common;

use agentteams_mcp::json::{self, Value};
use common::{http_post, listed_tool_names, records, Host};
use std::path::Path;
use std::process::{Command, Stdio};

const POLICY_DENIED: i64 = -32001;

/// A temporary project directory.
type Dir = common::TempDir;

fn host(root: &Path, extra: &[&str]) -> Host {
    let mut host = Host::start("governed", root, extra);
    host.initialize("2025-06-18");
    host
}

/// The reply to a `tools/call`: Ok(result) or Err((code, message)).
fn call(host: &mut Host, tool: &str, arguments: &str) -> Result<Value, (i64, String)> {
    let reply = host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    ));
    match reply.get("error") {
        Some(e) => Err((
            e.get("code").and_then(Value::as_i64).unwrap(),
            e.get("message").and_then(Value::as_str).unwrap().to_owned(),
        )),
        None => Ok(reply.get("result").cloned().unwrap()),
    }
}

fn listed(host: &mut Host) -> Vec<String> {
    let reply = host.request(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
    listed_tool_names(&reply)
}

fn exit_of(args: &[&str], root: &Path) -> (Option<i32>, String) {
    let o = Command::new(common::fixtures())
        .args(["--serve-mcp", "governed", "--root"])
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.stdout.is_empty(), "nothing on stdout before serving");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs the binary with `args` and returns its stdout; fails the test unless it exits 0.
fn run_ok(args: &[&str]) -> String {
    let o = Command::new(common::fixtures())
        .args(args)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {out}{err}");
    out
}

fn digest(tool: &str, arguments: &str) -> String {
    run_ok(&["approval", "digest", tool, arguments])
        .trim()
        .to_owned()
}

#[test]
fn modes_that_need_a_person_and_contradictions_stop_the_start_with_one_line() {
    let dir = Dir::new("refusals");
    for mode in ["ask", "on-request", "interactive"] {
        let (code, err) = exit_of(&["--permission-mode", mode], &dir.0);
        assert_eq!(code, Some(2), "{mode}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("permission mode \"{mode}\" needs a person to confirm each call that may change data, which an MCP client cannot provide")),
            "{err}"
        );
    }
    let refused: [(&[&str], &str); 6] = [
        (&["--permission-mode", "yolo"], "unknown permission mode \"yolo\"; choose one of read-only, prompt, allow, danger-full-access"),
        (&["--read-only", "--permission-mode", "allow"], "--read-only and --permission-mode allow contradict each other"),
        (&["--permission-mode", "danger-full-access", "--allow-tool", "read_*"], "permission mode danger-full-access ignores allow rules"),
        (&["--approve-scoped", "write_note"], "--approve-scoped \"write_note\": expected TOOL:SHA256"),
        (&["--approve-scoped", "write_note:1234"], "the digest must be 64 hex digits"),
        (&["--approvals", "/nonexistent/dir/../approvals.json", "--approve-scoped", "wirte_note:0000000000000000000000000000000000000000000000000000000000000000"], "--approve-scoped names tool \"wirte_note\", which agentteams-governed-fixture does not serve"),
    ];
    for (args, message) in refused {
        let (code, err) = exit_of(args, &dir.0);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    std::fs::create_dir_all(dir.0.join(".agentteams")).unwrap();
    std::fs::write(dir.0.join(".agentteams/approvals.json"), "{").unwrap();
    let (code, err) = exit_of(&[], &dir.0);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("agentteams-mcp: approvals: "), "{err}");
}

#[test]
fn prompt_refuses_writes_until_a_digest_approves_one_exact_call() {
    let dir = Dir::new("digest");
    let mut server = host(&dir.0, &[]);
    assert_eq!(listed(&mut server), ["read_note"]);
    assert!(call(&mut server, "read_note", r#"{"path":"a"}"#).is_ok());
    let (code, message) =
        call(&mut server, "write_note", r#"{"path":"a","text":"hi"}"#).unwrap_err();
    assert_eq!(code, POLICY_DENIED);
    let scoped = digest("write_note", r#"{"text":"hi","path":"a"}"#);
    assert!(
        message.ends_with(&format!("(--approve-scoped {scoped} approves it)")),
        "the refusal names the digest `approval digest` computes: {message}"
    );
    drop(server);

    let mut server = host(&dir.0, &["--approve-scoped", &scoped]);
    assert_eq!(listed(&mut server), ["read_note", "write_note"]);
    assert!(call(&mut server, "write_note", r#"{"text":"hi","path":"a"}"#).is_ok());
    assert_eq!(
        call(&mut server, "write_note", r#"{"path":"a","text":"bye"}"#)
            .unwrap_err()
            .0,
        POLICY_DENIED
    );
    assert_eq!(
        call(&mut server, "append_note", r#"{"path":"a","text":"hi"}"#)
            .unwrap_err()
            .0,
        POLICY_DENIED
    );
}

#[test]
fn presets_from_the_project_and_deny_under_every_mode() {
    let dir = Dir::new("presets");
    let project = dir.0.to_str().unwrap().to_owned();
    let approval = |args: &[&str]| {
        let mut all = vec!["approval"];
        all.extend_from_slice(args);
        all.extend(["--project", &project]);
        run_ok(&all);
    };
    approval(&[
        "grant",
        "write_note",
        "--reason",
        "notes",
        "--server",
        "governed",
    ]);
    approval(&[
        "deny", "append_*", "--reason", "never", "--server", "governed",
    ]);
    let mut server = host(&dir.0, &[]);
    assert_eq!(listed(&mut server), ["read_note", "write_note"]);
    assert!(call(&mut server, "write_note", r#"{"path":"a"}"#).is_ok());
    drop(server);
    for mode in ["read-only", "prompt", "allow", "danger-full-access"] {
        let mut server = host(&dir.0, &["--permission-mode", mode]);
        let (code, message) = call(&mut server, "append_note", r#"{"path":"a"}"#).unwrap_err();
        assert_eq!(code, POLICY_DENIED, "{mode}");
        assert!(message.starts_with("tool \"append_note\" is refused by deny preset \"append_*\" (presets[1], added by "), "{mode}: {message}");
        let write = call(&mut server, "write_note", r#"{"path":"a"}"#);
        assert_eq!(write.is_ok(), mode != "read-only", "{mode}: {write:?}");
    }
}

/// Starts the fixture over HTTP; returns the process and its port.
fn http_server(root: &Path, extra: &[&str]) -> (common::HttpServer, u16) {
    let root = root.to_str().unwrap();
    common::serve_http_as(&["governed", "--root", root], extra, None, Stdio::null())
}

#[test]
fn http_decides_as_stdio_does_and_the_audit_log_records_why() {
    let dir = Dir::new("http");
    let log = dir.0.join("audit.log");
    let log_arg = log.to_str().unwrap();
    let (server, port) = http_server(
        &dir.0,
        &["--permission-mode", "read-only", "--audit-log", log_arg],
    );
    let modern = |tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"path":"a"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"readOnlyHint":true}}}}}}"#
        )
    };
    let headers = |tool: &str| {
        format!(
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"
        )
    };
    let (status, reply) = http_post(port, &headers("write_note"), &modern("write_note"));
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains("-32001"), "{reply}");
    assert!(
        reply.contains("refused by permission mode read-only"),
        "{reply}"
    );
    let (_, reply) = http_post(port, &headers("read_note"), &modern("read_note"));
    assert!(reply.contains("\"result\""), "{reply}");
    drop(server);

    let lines = std::fs::read_to_string(&log).unwrap();
    let records: Vec<Value> = lines
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect();
    let governance = records[0].get("governance").unwrap();
    assert_eq!(
        governance.get("mode").and_then(Value::as_str),
        Some("read-only")
    );
    let blocked = records
        .iter()
        .find(|r| r.get("event").and_then(Value::as_str) == Some("tool_call_blocked"))
        .unwrap();
    let decision = blocked.get("decision").unwrap();
    assert_eq!(decision.get("basis").and_then(Value::as_str), Some("mode"));
    assert_eq!(
        decision.get("mode").and_then(Value::as_str),
        Some("read-only")
    );
    let expected = digest("write_note", r#"{"path":"a"}"#);
    assert_eq!(
        decision.get("digest").and_then(Value::as_str),
        expected.strip_prefix("write_note:")
    );
    // Killed, so the run is incomplete; the chain itself is intact and the new members accepted.
    assert!(run_ok(&["audit", "verify", log_arg]).contains("INCOMPLETE"));
}

#[test]
fn a_stdio_run_with_decisions_verifies_clean() {
    let dir = Dir::new("stdio-audit");
    let log = dir.0.join("audit.log");
    let mut server = host(
        &dir.0,
        &[
            "--permission-mode",
            "allow",
            "--audit-log",
            log.to_str().unwrap(),
        ],
    );
    assert!(call(&mut server, "write_note", r#"{"path":"a"}"#).is_ok());
    assert!(call(&mut server, "read_note", r#"{"path":"a"}"#).is_ok());
    let status = server.close();
    assert_eq!(status.code(), Some(0));
    run_ok(&["audit", "verify", log.to_str().unwrap(), "--ci"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(r#""decision":{"allowed":true,"basis":"mode","#),
        "{text}"
    );
}

/// `approval grant write_note` in the file `place` (`--project DIR` or `--approvals FILE`) names.
fn grant_write_note(option: &str, place: &str) {
    run_ok(&[
        "approval",
        "grant",
        "write_note",
        "--reason",
        "r",
        option,
        place,
    ]);
}

/// Runs `agentteams-mcp ARGS` with stdin closed, killed after a minute so that a start that
/// blocks (on a FIFO) fails the test instead of stalling it; returns the exit code and stderr.
fn start_of(args: &[&str]) -> (Option<i32>, String) {
    let (o, _) = common::run_limited(4 * 1024 * 1024, 60, args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every flag naming a file the server reads: a file that cannot be read (misspelt, a FIFO, a
/// folder) stops the start with exit 2 and one line naming the flag, the path and why. Before,
/// a misspelt `--approvals` dropped every deny preset silently and `--policy` on a FIFO hung.
#[test]
fn a_named_file_that_cannot_be_read_stops_the_start_with_one_line() {
    let dir = Dir::new("file-flags");
    let root = dir.0.to_str().unwrap();
    let fifo = dir.0.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    let typo = dir.0.join("aprovals.json");
    let typo = typo.to_str().unwrap();
    let serve = ["--serve-mcp", "governed", "--root", root];
    let http = [&serve[..], &["--http", "--port", "0"]].concat();
    // (`--auth-token-file` reads a pipe on purpose: `<(pass show mcp)` is an ordinary choice.)
    let cases: [(&[&str], &str, &str, &str); 11] = [
        (&serve, "--approvals", typo, "No such file or directory"),
        (&serve, "--approvals", fifo, "not a regular file"),
        (&serve, "--approvals", root, "not a regular file"),
        (&serve, "--policy", typo, "No such file or directory"),
        (&serve, "--policy", fifo, "not a regular file"),
        (&http, "--policy", fifo, "not a regular file"),
        (&serve, "--audit-log", root, "Is a directory"),
        (&http, "--auth-config", typo, "No such file or directory"),
        (&http, "--auth-config", fifo, "not a regular file"),
        (
            &http,
            "--auth-token-file",
            typo,
            "No such file or directory",
        ),
        (
            &http,
            "--session-key-file",
            typo,
            "No such file or directory",
        ),
    ];
    for (base, flag, path, why) in cases {
        let args = [base, &[flag, path]].concat();
        let (code, err) = start_of(&args);
        assert_eq!(code, Some(2), "{flag} {path}: {err}");
        assert_eq!(err.lines().count(), 1, "{flag} {path}: {err}");
        for part in [flag, path, why] {
            assert!(
                err.contains(part),
                "{flag} {path}: {part:?} missing in {err}"
            );
        }
    }
    // `approval grant --approvals FILE` creates the file it names, which a server then serves.
    let named = dir.0.join("named.json");
    let named = named.to_str().unwrap();
    grant_write_note("--approvals", named);
    let mut server = host(&dir.0, &["--approvals", named]);
    assert!(call(&mut server, "write_note", r#"{"path":"a"}"#).is_ok());
}

/// Finding 10: a change to the approvals file reaches the running server at its next call,
/// only ever narrowing what it serves: a revoked grant and a new deny preset hold at once; a new
/// grant waits for the next start; a file that cannot be used grants nothing while the denials
/// already seen hold; each change is an audit record and the log verifies.
#[test]
fn a_changed_approvals_file_narrows_the_running_server_at_its_next_call() {
    let dir = Dir::new("live-presets");
    let project = dir.0.to_str().unwrap().to_owned();
    let file = dir.0.join(".agentteams/approvals.json");
    let approval = |args: &[&str]| {
        let mut all = vec!["approval"];
        all.extend_from_slice(args);
        all.extend(["--project", &project, "--reason", "r"]);
        run_ok(&all);
    };
    let refused = |server: &mut Host, tool: &str| {
        let (code, message) = call(server, tool, r#"{"path":"a"}"#).unwrap_err();
        assert_eq!(code, POLICY_DENIED, "{tool}: {message}");
        message
    };
    approval(&["grant", "write_note"]);
    approval(&["grant", "append_note"]);
    let log = dir.0.join("audit.log");
    let log_arg = log.to_str().unwrap();
    let mut server = host(&dir.0, &["--audit-log", log_arg]);
    assert!(call(&mut server, "write_note", r#"{"path":"a"}"#).is_ok());

    // Revoked from another process: the next call is refused, without a restart.
    run_ok(&["approval", "revoke", "write_note", "--project", &project]);
    let message = refused(&mut server, "write_note");
    assert!(message.contains("permission mode prompt"), "{message}");
    // A new deny preset holds at once, and the listing follows.
    approval(&["deny", "read_note"]);
    let message = refused(&mut server, "read_note");
    assert!(message.contains("deny preset \"read_note\""), "{message}");
    assert_eq!(listed(&mut server), ["append_note"]);
    // A grant added during the run waits for the next start.
    approval(&["grant", "write_note"]);
    approval(&["grant", "*"]);
    let message = refused(&mut server, "write_note");
    assert!(message.contains("next start"), "{message}");

    // Half-written: the grants are suspended; the deny preset seen before still holds.
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    let message = refused(&mut server, "append_note");
    assert!(message.contains("cannot be used"), "{message}");
    refused(&mut server, "read_note");
    // Garbage shaped to confuse (a duplicate key granting everything) grants nothing either.
    let confusing = r#"{"version":1,"presets":[],"presets":[{"effect":"grant","tool":"*","reason":"r","added_by":"a","added_at":"t"}]}"#;
    std::fs::write(&file, confusing).unwrap();
    refused(&mut server, "append_note");
    refused(&mut server, "write_note");

    // A good file again, without the deny: the grant from the start applies again; the deny
    // preset, once seen, holds until the restart.
    let restored = r#"{"version":1,"presets":[{"effect":"grant","tool":"append_note","reason":"r","added_by":"a","added_at":"t"}]}"#;
    std::fs::write(&file, restored).unwrap();
    assert!(call(&mut server, "append_note", r#"{"path":"a"}"#).is_ok());
    refused(&mut server, "read_note");
    assert_eq!(server.close().code(), Some(0));

    run_ok(&["audit", "verify", log_arg, "--ci"]);
    let changes: Vec<Value> = records(&log)
        .into_iter()
        .filter(|r| r.get("event").and_then(Value::as_str) == Some("presets_changed"))
        .collect();
    assert!(changes.len() >= 6, "one record per change: {changes:?}");
    let last = changes.last().unwrap().get("governance").unwrap();
    assert_eq!(
        last.get("presets_sha256").and_then(Value::as_str),
        Some(agentteams_mcp::sha256::hex_digest(restored.as_bytes()).as_str())
    );
    let in_force: Vec<&str> = last
        .get("presets")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(in_force.len(), 2, "{in_force:?}");
    assert!(
        in_force[0].starts_with("grant preset \"append_note\""),
        "{in_force:?}"
    );
    assert!(
        in_force[1].starts_with("deny preset \"read_note\""),
        "{in_force:?}"
    );
    assert!(changes.iter().any(|c| c
        .get("governance")
        .unwrap()
        .get("presets_problem")
        .is_some()));
}

/// The same over HTTP: a revocation holds for the next request of a running server.
#[test]
fn a_revocation_holds_for_the_next_http_request() {
    let dir = Dir::new("live-http");
    let project = dir.0.to_str().unwrap().to_owned();
    grant_write_note("--project", &project);
    let (server, port) = http_server(&dir.0, &[]);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: write_note\r\n";
    let (_, reply) = http_post(port, headers, body);
    assert!(reply.contains("\"result\""), "{reply}");
    run_ok(&["approval", "revoke", "write_note", "--project", &project]);
    let (_, reply) = http_post(port, headers, body);
    assert!(reply.contains("-32001"), "{reply}");
    drop(server);
}
