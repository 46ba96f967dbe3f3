//! Requests the server sends the client mid-call (sampling, elicitation), through the real binary
//! over stdio: correlation by id, a client that answers, refuses, answers twice, answers an id
//! nobody asked, or never answers and cancels; capabilities it did not declare; the modern era.

mod common;
use agentteams_mcp::json::{self, Value};
use common::{result_text, Host};
use std::process::Command;
use std::time::Duration;

fn start() -> Host {
    let mut command = Command::new(common::fixtures());
    command.args(["--serve-mcp", "conformance"]);
    Host::spawn(command)
}

/// `initialize` declaring `capabilities` (JSON text).
fn initialize(host: &mut Host, capabilities: &str) {
    let reply = host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    ));
    assert!(reply.get("result").is_some(), "{}", json::to_string(&reply));
    host.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

fn call_line(id: &str, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

/// The next line, which must be a request from the server; returns (id, method, params).
fn server_request(host: &mut Host) -> (String, String, Value) {
    let line = host.recv();
    let id = line.get("id").and_then(Value::as_str);
    let method = line.get("method").and_then(Value::as_str);
    match (id, method) {
        (Some(id), Some(method)) => (
            id.to_owned(),
            method.to_owned(),
            line.get("params").cloned().unwrap_or_default(),
        ),
        _ => panic!("expected a server request, got {}", json::to_string(&line)),
    }
}

fn text_of_reply(reply: &Value) -> (String, bool) {
    result_text(
        reply
            .get("result")
            .unwrap_or_else(|| panic!("{}", json::to_string(reply))),
    )
}

#[test]
fn sampling_is_correlated_and_answered_once() {
    let mut host = start();
    initialize(&mut host, r#"{"sampling":{}}"#);
    host.send(&call_line("c1", "test_sampling", r#"{"prompt":"Say hi"}"#));
    let (id, method, params) = server_request(&mut host);
    assert_eq!(method, "sampling/createMessage");
    assert!(id.starts_with("srv-"), "{id}");
    assert_eq!(
        json::to_string(params.get("messages").unwrap()),
        r#"[{"role":"user","content":{"type":"text","text":"Say hi"}}]"#
    );
    // An answer to an id nobody asked is dropped; the right one completes the call.
    host.send(
        r#"{"jsonrpc":"2.0","id":"srv-999","result":{"content":{"type":"text","text":"wrong"}}}"#,
    );
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"role":"assistant","content":{{"type":"text","text":"hi"}},"model":"m"}}}}"#
    );
    host.send(&answer);
    let reply = host.recv();
    assert_eq!(reply.get("id").and_then(Value::as_str), Some("c1"));
    assert_eq!(
        text_of_reply(&reply),
        ("LLM response: hi".to_owned(), false)
    );
    // A second answer to the same id is dropped too: nothing is written, and the server serves on.
    host.send(&answer);
    host.assert_silent(Duration::from_millis(200));
    let pong = host.request(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(
        json::to_string(&pong),
        r#"{"jsonrpc":"2.0","id":"p","result":{}}"#
    );
    assert!(host.close().success());
}

#[test]
fn a_refusal_and_an_undeclared_capability_are_tool_errors() {
    let mut host = start();
    initialize(&mut host, r#"{"elicitation":{}}"#);
    // No sampling capability: refused before anything is sent.
    let result = host.call("test_sampling", r#"{"prompt":"x"}"#);
    let (text, is_error) = result_text(&result);
    assert!(is_error);
    assert!(
        text.contains("did not declare the sampling capability"),
        "{text}"
    );
    // The client refuses the elicitation with a JSON-RPC error.
    host.send(&call_line(
        "c2",
        "test_elicitation",
        r#"{"message":"Who are you?"}"#,
    ));
    let (id, method, params) = server_request(&mut host);
    assert_eq!(method, "elicitation/create");
    assert_eq!(
        params.get("message").and_then(Value::as_str),
        Some("Who are you?")
    );
    host.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","error":{{"code":-1,"message":"user closed the dialog"}}}}"#
    ));
    let (text, is_error) = text_of_reply(&host.recv());
    assert!(is_error);
    assert_eq!(
        text,
        "the client refused the request (-1): user closed the dialog"
    );
    assert!(host.close().success());
}

#[test]
fn elicitation_defaults_travel_in_the_schema_and_the_answer_comes_back() {
    let mut host = start();
    initialize(&mut host, r#"{"elicitation":{"form":{}}}"#);
    host.send(&call_line("c3", "test_elicitation_sep1034_defaults", "{}"));
    let (id, _, params) = server_request(&mut host);
    let properties = params
        .get("requestedSchema")
        .and_then(|s| s.get("properties"))
        .unwrap();
    let default =
        |field: &str| json::to_string(properties.get(field).unwrap().get("default").unwrap());
    assert_eq!(
        [
            default("name"),
            default("age"),
            default("score"),
            default("status"),
            default("verified")
        ],
        [r#""John Doe""#, "30", "95.5", r#""active""#, "true"]
    );
    host.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"accept","content":{{"name":"Jane"}}}}}}"#
    ));
    let (text, _) = text_of_reply(&host.recv());
    assert_eq!(
        text,
        r#"Elicitation completed: action=accept, content={"name":"Jane"}"#
    );
    assert!(host.close().success());
}

#[test]
fn a_client_that_never_answers_can_cancel_the_call() {
    let mut host = start();
    initialize(&mut host, r#"{"sampling":{}}"#);
    host.send(&call_line("c4", "test_sampling", r#"{"prompt":"x"}"#));
    let (id, ..) = server_request(&mut host);
    host.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c4"}}"#,
    );
    // The server gives up its own request and tells the client; the cancelled call gets no reply.
    let cancelled = host.recv();
    assert_eq!(
        cancelled.get("method").and_then(Value::as_str),
        Some("notifications/cancelled")
    );
    assert_eq!(
        cancelled
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(Value::as_str),
        Some(id.as_str())
    );
    let pong = host.request(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(pong.get("id").and_then(Value::as_str), Some("p"));
    // A late answer to the given-up request is dropped.
    host.send(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{}}}}"#));
    host.assert_silent(Duration::from_millis(200));
    assert!(host.close().success());
}

#[test]
fn the_modern_era_asks_in_its_result_not_by_a_request() {
    let mut host = start();
    let reply = host.request(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}"#,
    );
    // The reply itself asks (servers/tests/input_required.rs has the rounds); no request line.
    let result = reply.get("result").expect("a result");
    assert_eq!(
        result.get("resultType").and_then(Value::as_str),
        Some("input_required")
    );
    assert!(result
        .get("inputRequests")
        .and_then(|r| r.get("sampling-1"))
        .is_some());
    host.assert_silent(Duration::from_millis(100));
    assert!(host.close().success());
}
