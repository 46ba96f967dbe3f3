//! Multi round-trip requests of the 2026-07-28 era through the real binary, over stdio and HTTP:
//! a tool that asks the client (elicitation, sampling, roots) answers `input_required` with keyed
//! `inputRequests` and a sealed `requestState`, and resumes when retried with `inputResponses`;
//! the same tool code serves a legacy session by server-to-client requests. Attacks: a forged,
//! cut, oversized or foreign state, a state for another tool or other arguments, missing, extra
//! and ill-typed answers, answers without a state, undeclared capabilities.

mod common;
use agentteams_mcp::json::{self, Value};
use common::{http_post, result_text, serve_http, Host, TempDir};
use std::process::{Command, Stdio};

const CAPABILITIES: &str = r#"{"elicitation":{},"sampling":{},"roots":{}}"#;

fn start() -> Host {
    let mut command = Command::new(common::fixtures());
    command.args(["--serve-mcp", "conformance"]);
    Host::spawn(command)
}

/// A modern `tools/call` line: `tool`, `arguments`, the client's `capabilities` and extra params
/// members (`"inputResponses":...,"requestState":...`, or empty).
fn call_body(tool: &str, arguments: &str, capabilities: &str, extra: &str) -> String {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(",{extra}")
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{extra},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
    )
}

/// The members of a retry: `responses` (JSON text) and `state`.
fn retry(responses: &str, state: &str) -> String {
    format!(
        r#""inputResponses":{responses},"requestState":{}"#,
        json::to_string(&Value::from(state))
    )
}

fn result(reply: &Value) -> &Value {
    reply
        .get("result")
        .unwrap_or_else(|| panic!("no result: {}", json::to_string(reply)))
}

/// The one key of an `input_required` result, its request, and the state.
fn asked(reply: &Value) -> (String, Value, String) {
    let r = result(reply);
    assert_eq!(
        r.get("resultType").and_then(Value::as_str),
        Some("input_required"),
        "{}",
        json::to_string(reply)
    );
    let requests = r.get("inputRequests").and_then(Value::as_object).unwrap();
    assert_eq!(requests.len(), 1, "{}", json::to_string(reply));
    let (key, request) = requests.iter().next().unwrap();
    let state = r.get("requestState").and_then(Value::as_str).unwrap();
    (key.to_string(), request.clone(), state.to_owned())
}

/// The -32602 message of an error reply.
fn invalid(reply: &Value) -> String {
    let error = reply
        .get("error")
        .unwrap_or_else(|| panic!("not an error: {}", json::to_string(reply)));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32602));
    error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

const NAME: &str = r#"{"action":"accept","content":{"name":"Ada"}}"#;
const SAID: &str =
    r#"{"role":"assistant","content":{"type":"text","text":"Hello Ada"},"model":"m"}"#;
const ROOTS: &str = r#"{"roots":[{"uri":"file:///w"}]}"#;

/// Drives `test_input_rounds` through its three rounds with `ask` (one request in, its reply
/// out), checking each request; returns the final reply.
fn three_rounds(ask: &mut dyn FnMut(&str) -> Value) -> Value {
    let first = ask(&call_body("test_input_rounds", "{}", CAPABILITIES, ""));
    let (key, request, state) = asked(&first);
    assert_eq!(key, "elicitation-1");
    assert_eq!(
        request.get("method").and_then(Value::as_str),
        Some("elicitation/create")
    );
    let served_by = result(&first)
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"));
    assert!(served_by.is_some(), "{}", json::to_string(&first));
    let second = ask(&call_body(
        "test_input_rounds",
        "{}",
        CAPABILITIES,
        &retry(&format!(r#"{{"elicitation-1":{NAME}}}"#), &state),
    ));
    let (key, request, state) = asked(&second);
    assert_eq!(key, "sampling-2");
    // The tool resumed with the answer: the sampling request names Ada.
    assert!(
        json::to_string(&request).contains("Greet Ada"),
        "{request:?}"
    );
    let third = ask(&call_body(
        "test_input_rounds",
        "{}",
        CAPABILITIES,
        &retry(&format!(r#"{{"sampling-2":{SAID}}}"#), &state),
    ));
    let (key, _, state) = asked(&third);
    assert_eq!(key, "roots-3");
    ask(&call_body(
        "test_input_rounds",
        "{}",
        CAPABILITIES,
        &retry(
            &format!(r#"{{"roots-3":{ROOTS},"unasked":{{"x":1}}}}"#),
            &state,
        ),
    ))
}

fn assert_done(reply: &Value) {
    let r = result(reply);
    assert_eq!(
        r.get("resultType").and_then(Value::as_str),
        Some("complete")
    );
    let (text, is_error) = result_text(result(reply));
    assert!(!is_error, "{text}");
    assert_eq!(text, "name=Ada; said=Hello Ada; roots=1");
}

#[test]
fn a_tool_asks_in_rounds_and_resumes_with_the_answers_over_stdio() {
    let mut host = start();
    let done = three_rounds(&mut |line| host.request(line));
    assert_done(&done);
    assert!(host.close().success());
}

#[test]
fn the_same_tool_asks_by_server_requests_in_a_legacy_session() {
    let mut host = start();
    let reply = host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{CAPABILITIES},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    ));
    assert!(reply.get("result").is_some());
    host.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_input_rounds","arguments":{}}}"#);
    for answer in [NAME, SAID, ROOTS] {
        let request = host.recv();
        let id = request.get("id").cloned().expect("a request to the client");
        host.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{answer}}}"#,
            json::to_string(&id)
        ));
    }
    let done = host.recv();
    let (text, is_error) = result_text(result(&done));
    assert!(!is_error, "{text}");
    assert_eq!(text, "name=Ada; said=Hello Ada; roots=1");
    assert!(host.close().success());
}

#[test]
fn forged_foreign_and_mismatched_states_are_refused() {
    let mut host = start();
    let first = host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        "",
    ));
    let (key, _, state) = asked(&first);
    assert_eq!(key, "sampling-1");
    let answer = format!(r#"{{"sampling-1":{SAID}}}"#);
    let mut attempt = |tool: &str, arguments: &str, responses: &str, state: &str| {
        invalid(&host.request(&call_body(
            tool,
            arguments,
            CAPABILITIES,
            &retry(responses, state),
        )))
    };
    let flipped = {
        let mut bytes = state.clone().into_bytes();
        bytes[5] = if bytes[5] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).unwrap()
    };
    for (tool, arguments, responses, state, want) in [
        ("test_sampling", r#"{"prompt":"x"}"#, answer.as_str(), flipped.as_str(), "does not authenticate"),
        ("test_sampling", r#"{"prompt":"x"}"#, &answer, &state[..state.len() - 3], "does not authenticate"),
        ("test_sampling", r#"{"prompt":"x"}"#, &answer, "not a state", "does not authenticate"),
        ("test_elicitation", r#"{"message":"x"}"#, &answer, &state, "issued for tool 'test_sampling', not 'test_elicitation'"),
        ("test_sampling", r#"{"prompt":"y"}"#, &answer, &state, "other arguments of tool 'test_sampling'"),
        (
            "test_sampling",
            r#"{"prompt":"x"}"#,
            r#"{"sampling-1":{"role":"assistant","content":"Hi","model":"m"}}"#,
            &state,
            "inputResponses['sampling-1'] is not a valid sampling/createMessage result: content must be",
        ),
        ("test_sampling", r#"{"prompt":"x"}"#, r#"{"sampling-1":7}"#, &state, "is not an object"),
    ] {
        let got = attempt(tool, arguments, responses, state);
        assert!(got.contains(want), "{want}: {got}");
    }
    let oversized = "A".repeat(70_000);
    let got = attempt("test_sampling", r#"{"prompt":"x"}"#, &answer, &oversized);
    assert!(got.contains("longer than 65536 bytes"), "{got}");
    let got = invalid(&host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        &format!(r#""inputResponses":{answer}"#),
    )));
    assert!(got.contains("without requestState"), "{got}");
    let got = invalid(&host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        r#""inputResponses":[1],"requestState":"x""#,
    )));
    assert!(got.contains("inputResponses must be an object"), "{got}");
    // A missing answer is asked again; the genuine state still works after all of the above.
    let again = host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        &retry("{}", &state),
    ));
    assert_eq!(asked(&again).0, "sampling-1");
    let done = host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        &retry(&answer, &state),
    ));
    let (text, is_error) = result_text(result(&done));
    assert!(!is_error && text.contains("Hello Ada"), "{text}");
    // A state from another server process does not authenticate here.
    let mut other = start();
    let foreign = asked(&other.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        "",
    )))
    .2;
    let got = invalid(&host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        CAPABILITIES,
        &retry(&answer, &foreign),
    )));
    assert!(got.contains("does not authenticate"), "{got}");
    assert!(host.close().success());
}

#[test]
fn an_undeclared_capability_is_never_asked() {
    let mut host = start();
    let reply = host.request(&call_body(
        "test_sampling",
        r#"{"prompt":"x"}"#,
        r#"{"elicitation":{}}"#,
        "",
    ));
    let (text, is_error) = result_text(result(&reply));
    assert!(is_error, "{text}");
    assert!(
        text.contains("did not declare the sampling capability"),
        "{text}"
    );
    assert!(host.close().success());
}

/// The JSON body of an HTTP response.
fn body(reply: &str) -> Value {
    let text = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    json::parse(text.as_bytes()).unwrap_or_else(|_| panic!("not JSON: {reply}"))
}

fn modern_headers(tool: &str) -> String {
    format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n")
}

#[test]
fn rounds_over_http_and_across_replicas_sharing_a_session_key() {
    let (_server, port) = serve_http(&[], None, Stdio::null());
    let headers = modern_headers("test_input_rounds");
    let done = three_rounds(&mut |line| {
        let (status, reply) = http_post(port, &headers, line);
        assert_eq!(status, 200, "{reply}");
        body(&reply)
    });
    assert_done(&done);
    // Two replicas holding one session key open each other's states; a third without it refuses.
    let dir = TempDir::new("mrtr-replicas");
    let key = dir.path().join("key");
    std::fs::write(&key, format!("{}\n", "ab".repeat(32))).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let key = key.to_str().unwrap();
    let (_a, a) = serve_http(&["--session-key-file", key], None, Stdio::null());
    let (_b, b) = serve_http(&["--session-key-file", key], None, Stdio::null());
    let mut replicas = [a, b].into_iter().cycle();
    let done = three_rounds(&mut |line| {
        let (status, reply) = http_post(replicas.next().unwrap(), &headers, line);
        assert_eq!(status, 200, "{reply}");
        body(&reply)
    });
    assert_done(&done);
    let first = body(
        &http_post(
            a,
            &headers,
            &call_body("test_input_rounds", "{}", CAPABILITIES, ""),
        )
        .1,
    );
    let state = asked(&first).2;
    let line = call_body(
        "test_input_rounds",
        "{}",
        CAPABILITIES,
        &retry(&format!(r#"{{"elicitation-1":{NAME}}}"#), &state),
    );
    let (status, reply) = http_post(port, &headers, &line);
    assert_eq!(status, 200, "{reply}");
    assert!(
        invalid(&body(&reply)).contains("does not authenticate"),
        "{reply}"
    );
}
