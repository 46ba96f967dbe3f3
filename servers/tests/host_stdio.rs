//! A host's whole conversation with the real binary over stdio: handshake, discovery, calls, bad
//! input, shutdown. Uses recall on an empty project (a real server whose calls need no fixture).

mod common;

use agentteams_mcp::json::{self, Value};
use common::{result_text, Host, TempDir};
use std::time::Duration;

fn code(reply: &Value) -> Option<i64> {
    reply
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
}

#[test]
fn a_host_session_from_handshake_to_shutdown() {
    let project = TempDir::new("host");
    let mut host = Host::start("recall", project.path(), &[]);

    // ping works before initialize.
    let pong = host.request(r#"{"jsonrpc":"2.0","id":"p0","method":"ping"}"#);
    assert_eq!(
        json::to_string(&pong),
        r#"{"jsonrpc":"2.0","id":"p0","result":{}}"#
    );

    let init = host.initialize("2025-06-18");
    assert_eq!(
        init.get("protocolVersion").and_then(Value::as_str),
        Some("2025-06-18")
    );
    let info = init.get("serverInfo").unwrap();
    assert_eq!(
        info.get("name").and_then(Value::as_str),
        Some("agentteams-recall")
    );
    host.assert_silent(Duration::from_millis(200));

    let list = host.request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let tools = list
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .unwrap();
    let names: Vec<_> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    assert_eq!(names, ["query_index", "query_code"]);
    for tool in tools.iter() {
        assert_eq!(
            json::to_string(tool.get("annotations").unwrap()),
            r#"{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}"#
        );
    }

    // A real call: no index in an empty project is a tool error naming the build command.
    let (text, is_error) = result_text(&host.call("query_index", r#"{"query":"widgets"}"#));
    assert!(is_error);
    assert!(
        text.starts_with("no references/memory-index.json in any team dir: searched .,")
            && text.ends_with("`agentteams-mcp index build --root <project root>`"),
        "{text}"
    );

    // Argument failures are isError results in the reference's words.
    let (text, is_error) = result_text(&host.call("query_index", r#"{"query":"x","k":0}"#));
    assert!(is_error);
    assert_eq!(text, "k must be an integer from 1 to 20");

    // Bad input never stops the server.
    host.write(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"\n");
    assert_eq!(code(&host.recv()), Some(-32700));
    host.write(b"\xff\xfe\n");
    assert_eq!(code(&host.recv()), Some(-32700));
    let mut long = vec![b'x'; agentteams_mcp::stdio::MAX_LINE_BYTES + 1];
    long.push(b'\n');
    host.write(&long);
    assert_eq!(code(&host.recv()), Some(-32700));
    host.write(b"\n  \r\n");
    let unknown = host
        .request(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":["git_log"]}}"#);
    assert_eq!(code(&unknown), Some(-32602));
    let pong = host.request(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(
        json::to_string(&pong),
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#
    );

    // Closing stdin ends the process with status 0.
    assert_eq!(host.close().code(), Some(0));
}

#[test]
fn modern_clients_discover_then_call_statelessly() {
    let project = TempDir::new("host-modern");
    let mut host = Host::start("recall", project.path(), &[]);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let discover = host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#
    ));
    let result = discover.get("result").unwrap();
    assert_eq!(
        result.get("resultType").and_then(Value::as_str),
        Some("complete")
    );
    let call = host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"query_code","arguments":{{"query":"x"}},{meta}}}}}"#
    ));
    let result = call.get("result").unwrap();
    assert_eq!(
        result.get("resultType").and_then(Value::as_str),
        Some("complete")
    );
    let (text, is_error) = result_text(result);
    assert!(
        is_error && text.contains("code-index/manifest.json"),
        "{text}"
    );
    assert_eq!(host.close().code(), Some(0));
}

#[test]
fn a_shell_pipeline_gets_every_reply_before_exit() {
    let project = TempDir::new("host-pipe");
    let mut host = Host::start("recall", project.path(), &[]);
    let mut input = String::new();
    for id in 0..20 {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"query_index\",\"arguments\":{{\"query\":\"q{id}\"}}}}}}\n"
        ));
    }
    host.write(input.as_bytes());
    let replies: Vec<Value> = (0..20).map(|_| host.recv()).collect();
    for (id, reply) in replies.iter().enumerate() {
        assert_eq!(reply.get("id").and_then(Value::as_u64), Some(id as u64));
    }
    assert_eq!(host.close().code(), Some(0));
}
