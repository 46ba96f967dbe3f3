//! Permission modes, approval presets and scoped approvals through the real binary, over stdio and
//! HTTP, with the `governed` fixture (a read-only tool and two that declare they change data):
//! startup refusals (exit 2, one line), refusals naming what refused, the digest workflow, and an
//! audit log that records each decision and verifies.

mod common;

use agentteams_mcp::json::{self, Value};
use common::{http_post, listed_tool_names, Host};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const POLICY_DENIED: i64 = -32001;
const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// A temporary project directory.
type Dir = common::TempDir;

/// A server process, killed and reaped when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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
    let o = Command::new(BIN)
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
    let o = Command::new(BIN).args(args).output().unwrap();
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
    assert!(err.starts_with("[serve-mcp] approvals: "), "{err}");
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

/// Starts the fixture over HTTP; returns the process and its port (read past any warning lines).
fn http_server(root: &Path, extra: &[&str]) -> (Served, u16) {
    let mut child = Command::new(BIN)
        .args(["--serve-mcp", "governed", "--http", "--port", "0", "--root"])
        .arg(root)
        .args(extra)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let served = Served(child);
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server printed no address"
        );
        if line.contains("/mcp") {
            return (served, common::port_in_address_line(&line));
        }
    }
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
