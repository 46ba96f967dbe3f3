//! The stdio transport over in-memory input and output: framing, caps, bad input, end of input.

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::*;
use agentteams_mcp::stdio::{serve, MAX_LINE_BYTES};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Tools;

impl ToolSet for Tools {
    fn server_name(&self) -> &str {
        "agentteams-stdio-test"
    }
    fn tools(&self) -> Vec<Tool> {
        vec![
            Tool::new(
                "echo",
                "Returns its arguments.",
                json::parse(br#"{"type":"object"}"#).unwrap(),
            ),
            Tool::new(
                "hang",
                "Runs until cancelled.",
                json::parse(br#"{"type":"object"}"#).unwrap(),
            ),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        if name == "hang" {
            ctx.cancel_token().wait_timeout(Duration::from_secs(60));
        }
        Ok(ToolOutput::Value(Value::Object(args.clone())))
    }
}

fn run(input: &[u8]) -> Vec<String> {
    let session = Session::new(Arc::new(Engine::new(Arc::new(Tools))));
    let mut out = Vec::new();
    serve(&session, input, &mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const PARSE_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error (or line over 1 MiB)""#;

#[test]
fn one_compact_reply_per_request_in_order() {
    let out = run(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n   \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":\"x\\ny\"}}}");
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\n \"a\": \"x\\ny\"\n}"}]}}"#,
        ]
    );
}

#[test]
fn bad_lines_get_a_parse_error_and_the_loop_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{not json\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n");
    input.extend_from_slice(&[b'['; 200]);
    input.push(b'\n');
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
    let out = run(&input);
    assert_eq!(out.len(), 4, "{out:?}");
    for line in &out[..3] {
        assert!(line.starts_with(PARSE_ERROR), "{line}");
    }
    assert!(
        out[0].contains("expected a string object key at line 1 column 2 (byte 1)"),
        "{}",
        out[0]
    );
    assert!(out[1].contains("invalid UTF-8"), "{}", out[1]);
    assert!(
        out[2].contains("nesting deeper than the limit of 128 levels"),
        "{}",
        out[2]
    );
    assert_eq!(out[3], r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
}

#[test]
fn a_line_over_one_mib_gets_one_error_and_the_next_line_is_served() {
    let mut input = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    input.resize(MAX_LINE_BYTES + 10, b'x');
    input.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    // A whole line of spaces over the cap gets nothing (the reference skips blank lines first).
    input.extend_from_slice(&vec![b' '; MAX_LINE_BYTES * 2]);
    input.push(b'\n');
    let out = run(&input);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[0].starts_with(PARSE_ERROR));
    assert!(out[0].contains("line longer than 1048576 bytes"));
    assert_eq!(out[1], r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);

    // Exactly at the cap (newline included) is accepted.
    let mut input = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":""#.to_vec();
    input.resize(MAX_LINE_BYTES - 4, b'x');
    input.extend_from_slice(b"\"}}\n");
    assert_eq!(input.len(), MAX_LINE_BYTES);
    assert_eq!(run(&input), [r#"{"jsonrpc":"2.0","id":3,"result":{}}"#]);
}

#[test]
fn end_of_input_cancels_a_running_call_promptly() {
    let started = Instant::now();
    let out = run(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"hang\"}}\n");
    // The hung call was cancelled after the grace period, so it gets no reply.
    assert!(out.is_empty(), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn more_requests_than_the_queue_holds_are_all_answered_in_order() {
    // The reader blocks when MAX_QUEUED_REQUESTS calls wait for the worker, then goes on: nothing
    // is dropped and nothing deadlocks.
    let count = agentteams_mcp::stdio::MAX_QUEUED_REQUESTS * 3 + 7;
    let mut input = String::new();
    for id in 0..count {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"n\":{id}}}}}}}\n"
        ));
    }
    let out = run(input.as_bytes());
    assert_eq!(out.len(), count);
    for (id, line) in out.iter().enumerate() {
        assert!(
            line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result""#)),
            "{line}"
        );
    }
}
