//! Audit records as the engine writes them around each path through a `tools/call`.

mod audit_support;
use agentteams_mcp::audit::{self, AuditLog, Mode, RunInfo};
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::{CancelToken, DiscardNotifications, Session};
use agentteams_mcp::sha256;
use audit_support::fixture::{self, call, rpc_error};
use audit_support::{records, str_of, u64_of, TempDir};
use std::path::PathBuf;
use std::sync::Arc;

/// A session whose engine denies `git_blame` and audits to a fresh file.
fn audited_session(name: &str, mode: Mode) -> (TempDir, PathBuf, Session) {
    let (dir, path, engine) = audited_engine(name, mode);
    (dir, path, fixture::session(engine))
}

/// The engine of [`audited_session`], for a session without `initialize` (the 2026-07-28 era).
fn audited_engine(name: &str, mode: Mode) -> (TempDir, PathBuf, agentteams_mcp::server::Engine) {
    let dir = TempDir::new(&format!("engine-{name}"));
    let path = dir.file("audit.log");
    let mut policy = Policy::new();
    policy.deny("git_blame").unwrap();
    let info = RunInfo {
        server: "agentteams-fixture".into(),
        policy: policy.describe(),
        ..RunInfo::default()
    };
    let log = AuditLog::open(&path, &info, mode).unwrap();
    let engine = fixture::engine().with_policy(policy).with_audit(log);
    (dir, path, engine)
}

/// The events after `run_started`, with the call number each belongs to.
fn call_events(records: &[Value]) -> Vec<(u64, String)> {
    records[1..]
        .iter()
        .map(|r| {
            (
                u64_of(r, "call").unwrap(),
                str_of(r, "event").unwrap().to_owned(),
            )
        })
        .collect()
}

fn finish(session: &Session, path: &std::path::Path) -> Vec<Value> {
    session.engine().audit().unwrap().complete_run().unwrap();
    let report = audit::verify_file(path).unwrap();
    assert!(report.is_clean(), "{report}");
    let recs = records(path);
    recs[..recs.len() - 1].to_vec()
}

#[test]
fn each_path_through_a_call_leaves_its_records() {
    let (_dir, path, session) = audited_session("paths", Mode::Redacted);
    call(&session, "git_log", r#"{"n": 2}"#); // 1 completed
    call(&session, "git_blame", "{}"); // 2 blocked by policy
    call(&session, "fs_write", "{}"); // 3 blocked by the default rule
    call(&session, "nope", "{}"); // 4 unknown tool
    call(&session, "fail", "{}"); // 5 the tool's own error
    call(&session, "git_log", r#"{"n": 99}"#); // 6 invalid arguments
    call(&session, "panic", "{}"); // 7 the tool panics
    let recs = finish(&session, &path);
    let expected: Vec<(u64, &str)> = vec![
        (1, "tool_call_requested"),
        (1, "tool_call_started"),
        (1, "tool_call_completed"),
        (2, "tool_call_requested"),
        (2, "tool_call_blocked"),
        (3, "tool_call_requested"),
        (3, "tool_call_blocked"),
        (4, "tool_call_requested"),
        (4, "tool_call_failed"),
        (5, "tool_call_requested"),
        (5, "tool_call_started"),
        (5, "tool_call_failed"),
        (6, "tool_call_requested"),
        (6, "tool_call_started"),
        (6, "tool_call_failed"),
        (7, "tool_call_requested"),
        (7, "tool_call_started"),
        (7, "tool_call_failed"),
    ];
    let found = call_events(&recs);
    let found: Vec<(u64, &str)> = found.iter().map(|(n, e)| (*n, e.as_str())).collect();
    assert_eq!(found, expected);

    let started = &recs[0];
    assert_eq!(
        started.get("policy"),
        Some(&Value::from(vec![Value::from(
            "deny \"git_blame\" (--deny-tool)"
        )]))
    );
    let requested = &recs[1];
    assert_eq!(u64_of(requested, "request_id"), Some(7));
    assert_eq!(str_of(requested, "tool"), Some("git_log"));
    assert_eq!(
        requested.get("arguments").and_then(|a| u64_of(a, "n")),
        Some(2)
    );
    assert_eq!(
        str_of(&recs[5], "rule"),
        Some("rule deny \"git_blame\" (--deny-tool)")
    );
    assert!(str_of(&recs[7], "rule")
        .unwrap()
        .starts_with("permission mode prompt: a tool that may change data"));
    // What each decision rested on: the mode, the rule, and for a call that may change data the
    // digest that would approve it.
    let decision = |r: &Value, key: &str| {
        r.get("decision")
            .and_then(|d| d.get(key))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(decision(&recs[2], "allowed"), Value::from(true));
    assert_eq!(decision(&recs[2], "basis"), Value::from("default"));
    assert_eq!(decision(&recs[2], "mode"), Value::from("prompt"));
    assert_eq!(decision(&recs[5], "basis"), Value::from("rule"));
    assert_eq!(decision(&recs[7], "allowed"), Value::from(false));
    assert_eq!(decision(&recs[7], "basis"), Value::from("mode"));
    assert_eq!(
        decision(&recs[7], "digest"),
        Value::from(
            agentteams_mcp::governance::call_digest("fs_write", &Default::default()).unwrap()
        )
    );
    assert!(recs[2].get("decision").unwrap().get("digest").is_none());
    let error_of = |r: &Value| {
        r.get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    };
    assert_eq!(error_of(&recs[9]), Some(-32602));
    assert_eq!(error_of(&recs[18]), Some(-32603));
    for failed_with_result in [&recs[12], &recs[15]] {
        assert_eq!(
            failed_with_result
                .get("result")
                .and_then(|r| r.get("isError")),
            Some(&Value::Bool(true))
        );
    }
}

#[test]
fn the_completed_record_measures_what_the_client_received() {
    let (_dir, path, session) = audited_session("output", Mode::Full);
    let reply = call(&session, "git_show", r#"{"path": "a.txt"}"#);
    let result = reply.get("result").unwrap();
    let recs = finish(&session, &path);
    let completed = &recs[3];
    assert_eq!(str_of(completed, "event"), Some("tool_call_completed"));
    let sent = json::to_string(result);
    assert_eq!(u64_of(completed, "output_bytes"), Some(sent.len() as u64));
    assert_eq!(
        str_of(completed, "output_sha256"),
        Some(sha256::hex_digest(sent.as_bytes()).as_str())
    );
    assert_eq!(
        completed.get("result").map(json::to_string_sorted),
        Some(json::to_string_sorted(result))
    );
}

#[test]
fn secrets_in_arguments_stay_out_of_the_default_log() {
    let (_dir, path, session) = audited_session("redact", Mode::Redacted);
    call(
        &session,
        "git_show",
        r#"{"token": "tok-1234567890", "q": "Authorization: Bearer abcdefghijklmnop"}"#,
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("tok-1234567890"), "{text}");
    assert!(!text.contains("abcdefghijklmnop"), "{text}");
    finish(&session, &path);
}

#[test]
fn records_name_the_session_when_the_transport_has_one() {
    let dir = TempDir::new("engine-session");
    let path = dir.file("audit.log");
    let log = AuditLog::open(&path, &RunInfo::default(), Mode::Full).unwrap();
    // The HTTP transport names each session it creates.
    let session = Session::new(Arc::new(fixture::engine().with_audit(log))).with_id("sess-9");
    call(&session, "git_log", "{}");
    let recs = records(&path);
    let calls: Vec<&Value> = recs.iter().filter(|r| r.get("call").is_some()).collect();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|r| str_of(r, "session") == Some("sess-9")));
}

#[test]
fn a_policy_refusal_is_recorded_before_the_error_is_returned() {
    let (_dir, path, session) = audited_session("refusal", Mode::Redacted);
    let reply = call(&session, "git_blame", "{}");
    assert_eq!(rpc_error(&reply).0, -32001);
    let recs = records(&path);
    assert_eq!(
        str_of(recs.last().unwrap(), "event"),
        Some("tool_call_blocked")
    );
}

#[test]
fn a_call_cancelled_by_the_client_is_recorded_as_cancelled() {
    let (_dir, path, session) = audited_session("cancelled", Mode::Redacted);
    let cancel = CancelToken::new();
    cancel.cancel();
    let message = json::parse(
        br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"git_log","arguments":{}}}"#,
    )
    .unwrap();
    assert!(session
        .handle_message_with(message, &DiscardNotifications, cancel)
        .is_none());
    call(&session, "git_show", "{}");
    let recs = finish(&session, &path);
    assert_eq!(str_of(&recs[3], "event"), Some("tool_call_completed"));
    assert_eq!(recs[3].get("cancelled"), Some(&Value::Bool(true)));
    assert_eq!(str_of(&recs[6], "event"), Some("tool_call_completed"));
    assert!(recs[6].get("cancelled").is_none());
}

#[test]
fn a_refused_request_state_is_on_the_record() {
    let (_dir, path, engine) = audited_engine("state", Mode::Redacted);
    let session = Session::new(Arc::new(engine));
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_log","arguments":{"n":2},"requestState":"forged.state","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = session.handle_message(json::parse(line.as_bytes()).unwrap());
    let (code, message) = rpc_error(&reply.unwrap());
    assert_eq!(code, -32602);
    assert!(message.contains("does not authenticate"), "{message}");
    let recs = finish(&session, &path);
    let events = call_events(&recs);
    let events: Vec<(u64, &str)> = events.iter().map(|(n, e)| (*n, e.as_str())).collect();
    assert_eq!(
        events,
        [(1, "tool_call_requested"), (1, "tool_call_failed")]
    );
}
