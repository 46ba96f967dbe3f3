//! Audit records over Streamable HTTP: every call record names its session, one session's calls
//! are told apart from another's, and the policy holds on this transport too.

mod audit_support;
mod http_support;

use agentteams_mcp::audit::{self, AuditLog, Mode, RunInfo};
use agentteams_mcp::http::{self, HttpConfig};
use agentteams_mcp::json::Value;
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::Engine;
use agentteams_mcp::sha256;
use audit_support::{records, str_of, TempDir};
use http_support::{Client, TestTools};
use std::net::SocketAddr;
use std::sync::Arc;

/// Serves [`TestTools`] over HTTP on a free loopback port, denying `progress`, auditing to `log`.
fn start(log: &std::path::Path, mode: Mode) -> SocketAddr {
    let mut policy = Policy::new();
    policy.deny("progress").unwrap();
    let info = RunInfo {
        server: "http-test".into(),
        transport: "http".into(),
        policy: policy.describe(),
        ..RunInfo::default()
    };
    let audit = AuditLog::open(log, &info, mode).unwrap();
    let engine = Engine::new(Arc::new(TestTools))
        .with_policy(policy)
        .with_audit(audit);
    let config = HttpConfig {
        port: 0,
        ..HttpConfig::default()
    };
    let server = http::bind(Arc::new(engine), config).expect("bind");
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.run());
    addr
}

fn call(client: &mut Client, session: &str, id: u64, tool: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"k":{id}}}}}}}"#
    );
    let reply = client.post(&body, &[("Mcp-Session-Id", session)]);
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

fn call_records(log: &std::path::Path) -> Vec<Value> {
    records(log)
        .into_iter()
        .filter(|r| r.get("call").is_some())
        .collect()
}

#[test]
fn each_sessions_calls_are_named_by_its_session() {
    let dir = TempDir::new("http");
    let log = dir.file("audit.log");
    let addr = start(&log, Mode::Redacted);
    let mut first = Client::connect(addr);
    let first_id = first.initialize("2025-06-18");
    let mut second = Client::connect(addr);
    let second_id = second.initialize("2025-06-18");
    assert_ne!(first_id, second_id);

    assert!(call(&mut first, &first_id, 10, "echo")
        .get("result")
        .is_some());
    let refused = call(&mut second, &second_id, 20, "progress");
    assert_eq!(
        refused
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64),
        Some(-32001)
    );

    let label = |id: &str| format!("sha256:{}", &sha256::hex_digest(id.as_bytes())[..16]);
    let records = call_records(&log);
    let named: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (str_of(r, "event").unwrap(), str_of(r, "session").unwrap()))
        .collect();
    let (first_label, second_label) = (label(&first_id), label(&second_id));
    assert_eq!(
        named,
        [
            ("tool_call_requested", first_label.as_str()),
            ("tool_call_started", first_label.as_str()),
            ("tool_call_completed", first_label.as_str()),
            ("tool_call_requested", second_label.as_str()),
            ("tool_call_blocked", second_label.as_str()),
        ]
    );
    // A live session id is a credential: the redacted log holds only its digest prefix.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&first_id) && !text.contains(&second_id));
    let report = audit::verify_file(&log).unwrap();
    assert!(report.is_intact(), "{report}");
}

#[test]
fn full_mode_keeps_the_session_id() {
    let dir = TempDir::new("http-full");
    let log = dir.file("audit.log");
    let addr = start(&log, Mode::Full);
    let mut client = Client::connect(addr);
    let id = client.initialize("2025-11-25");
    call(&mut client, &id, 1, "echo");
    let records = call_records(&log);
    assert_eq!(records.len(), 3);
    assert!(records
        .iter()
        .all(|r| str_of(r, "session") == Some(id.as_str())));
}
