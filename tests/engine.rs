//! The engine through its embedding API: lifecycle, negotiation, dispatch, validation, results.

use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::server::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Fixture;

fn schema(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap()
}

impl ToolSet for Fixture {
    fn server_name(&self) -> &str {
        "agentteams-fixture"
    }
    fn server_title(&self) -> Option<&str> {
        Some("Fixture")
    }
    fn instructions(&self) -> Option<&str> {
        Some("test tools")
    }
    fn tools(&self) -> Vec<Tool> {
        vec![
            Tool::read_only(
                "echo",
                "Returns its arguments.",
                schema(r#"{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}, "s": {"type": "string"}, "path": {"type": "string"}}}"#),
            )
            .title("Echo")
            .argument_message("n", "n must be an integer from 1 to 5")
            .null_means_absent("path"),
            Tool::read_only(
                "needs",
                "Needs rev.",
                schema(r#"{"type": "object", "required": ["rev"], "properties": {"rev": {"type": "string"}}}"#),
            )
            .missing_argument_message("rev", "rev is missing, give one"),
            Tool::read_only("fail", "Always fails.", schema(r#"{"type": "object"}"#)),
            Tool::read_only("panic", "Panics.", schema(r#"{"type": "object"}"#)),
            Tool::read_only("big", "Returns a long text.", schema(r#"{"type": "object"}"#)),
            Tool::read_only("slow", "Waits until cancelled.", schema(r#"{"type": "object"}"#)),
            Tool::read_only("chatty", "Sends progress and logs.", schema(r#"{"type": "object"}"#)),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "echo" | "needs" => Ok(ToolOutput::Value(Value::Object(args.clone()))),
            "fail" => Err(ToolError::new("it failed: 'x'")),
            "panic" => panic!("tool panicked on purpose"),
            "big" => Ok(ToolOutput::Value(obj([(
                "output",
                Value::from(format!("{}\u{e9}", "a".repeat(MAX_RESULT_TEXT_BYTES))),
            )]))),
            "slow" => {
                let cancelled = ctx.cancel_token().wait_timeout(Duration::from_secs(10));
                Ok(ToolOutput::Value(obj([(
                    "cancelled",
                    Value::from(cancelled),
                )])))
            }
            "chatty" => {
                ctx.progress(0.0, Some(100.0), Some("start"));
                ctx.progress(50.0, Some(100.0), None);
                ctx.progress(50.0, Some(100.0), None); // not increasing: dropped
                ctx.log(LogLevel::Info, Some("fixture"), Value::from("hello"));
                ctx.log(LogLevel::Debug, None, Value::from("quiet"));
                Ok(ToolOutput::Value(Value::Object(Map::new())))
            }
            _ => unreachable!("the engine only calls declared tools"),
        }
    }
}

fn session() -> Session {
    Session::new(Arc::new(
        Engine::new(Arc::new(Fixture)).with_version("9.9.9"),
    ))
}

fn send(session: &Session, line: &str) -> Option<String> {
    session
        .handle_message(json::parse(line.as_bytes()).unwrap())
        .map(|v| json::to_string(&v))
}

fn reply(session: &Session, line: &str) -> Value {
    let text = send(session, line).unwrap_or_else(|| panic!("no reply to {line}"));
    json::parse(text.as_bytes()).unwrap()
}

fn init(session: &Session, version: &str) -> Value {
    reply(
        session,
        &format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":{version},"capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        ),
    )
}

fn call(session: &Session, tool: &str, args: &str) -> Value {
    reply(
        session,
        &format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        ),
    )
}

fn text_of(result: &Value) -> &str {
    let content = result.at("result").at("content").as_array().unwrap();
    content[0].at("text").as_str().unwrap()
}

// Indexing sugar for tests only.
trait Idx {
    fn at(&self, key: &str) -> &Value;
}
impl Idx for Value {
    fn at(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&Value::Null)
    }
}

#[test]
fn initialize_negotiates_the_version() {
    let cases = [
        ("\"2024-11-05\"", "2024-11-05"),
        ("\"2025-03-26\"", "2025-03-26"),
        ("\"2025-06-18\"", "2025-06-18"),
        ("\"2025-11-25\"", "2025-11-25"),
        ("\"2024-10-07\"", "2025-11-25"),
        ("\"2026-07-28\"", "2025-11-25"),
        ("\"garbage\"", "2025-11-25"),
        ("null", "2024-11-05"),
    ];
    for (asked, answered) in cases {
        let r = init(&session(), asked);
        assert_eq!(
            r.at("result").at("protocolVersion").as_str(),
            Some(answered),
            "asked {asked}"
        );
    }
    let r = reply(
        &session(),
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
    );
    assert_eq!(
        r.at("result").at("protocolVersion").as_str(),
        Some("2024-11-05")
    );
    let r = init(&session(), "5");
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32602));
    assert_eq!(
        r.at("error").at("message").as_str(),
        Some("protocolVersion must be a string")
    );
}

#[test]
fn initialize_result_shape() {
    let s = session();
    let r = init(&s, "\"2025-06-18\"");
    assert_eq!(
        json::to_string(r.at("result")),
        r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false},"logging":{}},"serverInfo":{"name":"agentteams-fixture","version":"9.9.9","title":"Fixture"},"instructions":"test tools"}"#
    );
    let r = init(&s, "\"2025-06-18\"");
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32600));
    assert_eq!(
        r.at("error").at("message").as_str(),
        Some("already initialized")
    );
    // No title before 2025-06-18.
    let r = init(&session(), "\"2025-03-26\"");
    assert!(r.at("result").at("serverInfo").get("title").is_none());
}

#[test]
fn ping_notifications_and_unknown_methods() {
    let s = session();
    assert_eq!(
        send(&s, r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":"p","result":{}}"#
    );
    assert_eq!(
        send(
            &s,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ),
        None
    );
    assert_eq!(send(&s, r#"{"jsonrpc":"2.0","method":"no/such"}"#), None);
    assert_eq!(send(&s, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
    assert_eq!(
        send(&s, r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"unknown method 'resources/list'"}}"#
    );
    assert_eq!(
        send(
            &s,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#
        )
        .unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"params must be an object"}}"#
    );
    // Ids are echoed exactly, big and fractional ones included.
    assert_eq!(
        send(
            &s,
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}"#
        )
        .unwrap(),
        r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}"#
    );
    assert_eq!(
        send(&s, r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).unwrap(),
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#
    );
}

#[test]
fn reference_crashes_get_errors() {
    let s = session();
    // Array or object as a tool name, non-string method.
    for name in ["[1]", "{\"a\":1}", "5", "null"] {
        let r = reply(
            &s,
            &format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":{name}}}}}"#
            ),
        );
        assert_eq!(r.at("error").at("code").as_i64(), Some(-32602), "{name}");
        assert_eq!(
            r.at("error").at("message").as_str(),
            Some("tool name must be a string")
        );
    }
    let r = reply(&s, r#"{"jsonrpc":"2.0","id":1,"method":["x"]}"#);
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32600));
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#,
    );
    assert_eq!(
        json::to_string(r.at("error")),
        r#"{"code":-32602,"message":"unknown tool 'nope'"}"#
    );
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
    );
    assert_eq!(
        r.at("error").at("message").as_str(),
        Some("arguments must be an object")
    );
}

#[test]
fn tools_list_grows_with_the_revision() {
    let s = session();
    // Before initialize: served under 2024-11-05 rules (no annotations, no title).
    let r = reply(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let first = &r.at("result").at("tools").as_array().unwrap()[0];
    assert_eq!(
        json::to_string(first),
        r#"{"name":"echo","description":"Returns its arguments.","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5},"s":{"type":"string"},"path":{"type":"string"}}}}"#
    );
    let s = session();
    init(&s, "\"2025-06-18\"");
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}"#,
    );
    let first = &r.at("result").at("tools").as_array().unwrap()[0];
    assert_eq!(first.at("title").as_str(), Some("Echo"));
    assert_eq!(
        json::to_string(first.at("annotations")),
        r#"{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}"#
    );
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#,
    );
    assert_eq!(r.at("error").at("message").as_str(), Some("invalid cursor"));
}

#[test]
fn tool_results_and_errors() {
    let s = session();
    init(&s, "\"2025-06-18\"");
    let r = call(&s, "echo", r#"{"s":"caf\u00e9","n":2}"#);
    assert_eq!(text_of(&r), "{\n \"n\": 2,\n \"s\": \"caf\\u00e9\"\n}");
    assert_eq!(
        json::to_string(r.at("result").at("structuredContent")),
        r#"{"s":"café","n":2}"#
    );
    assert!(r.at("result").get("isError").is_none());

    let r = call(&s, "echo", r#"{"n":9}"#);
    assert_eq!(text_of(&r), "n must be an integer from 1 to 5");
    assert_eq!(r.at("result").at("isError").as_bool(), Some(true));
    let r = call(&s, "echo", r#"{"s":1}"#);
    assert_eq!(text_of(&r), "s must be a string (got integer)");
    // null means absent for path only.
    let r = call(&s, "echo", r#"{"path":null}"#);
    assert_eq!(text_of(&r), "{}");
    let r = call(&s, "echo", r#"{"s":null}"#);
    assert_eq!(text_of(&r), "s must be a string (got null)");
    let r = call(&s, "needs", "{}");
    assert_eq!(text_of(&r), "rev is missing, give one");

    let r = call(&s, "fail", "{}");
    assert_eq!(text_of(&r), "it failed: 'x'");
    assert_eq!(r.at("result").at("isError").as_bool(), Some(true));

    let r = call(&s, "panic", "{}");
    assert_eq!(
        json::to_string(r.at("error")),
        r#"{"code":-32603,"message":"internal error"}"#
    );
    // And the session still serves.
    assert!(send(&s, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).is_some());
}

#[test]
fn structured_content_only_from_2025_06_18() {
    let s = session();
    init(&s, "\"2025-03-26\"");
    let r = call(&s, "echo", "{}");
    assert!(r.at("result").get("structuredContent").is_none());
}

#[test]
fn long_results_are_cut_on_a_char_boundary_with_the_marker() {
    let s = session();
    init(&s, "\"2025-11-25\"");
    let r = call(&s, "big", "{}");
    let text = text_of(&r);
    assert!(text.ends_with("\n\u{2026}[truncated at 64 KiB]"));
    assert!(text.len() <= MAX_RESULT_TEXT_BYTES + RESULT_TRUNCATION_MARKER.len());
    assert!(r.at("result").get("structuredContent").is_none());
}

#[test]
fn batches_only_in_2025_03_26() {
    let s = session();
    let r = reply(&s, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    assert_eq!(
        json::to_string(&r),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batching is not supported in this protocol version"}}"#
    );
    init(&s, "\"2025-03-26\"");
    let r = send(
        &s,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"initialize"},{"jsonrpc":"2.0","id":3,"method":"nope"}]"#,
    )
    .unwrap();
    assert_eq!(
        r,
        r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"initialize must not be part of a batch"}},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"unknown method 'nope'"}}]"#
    );
    assert_eq!(
        send(
            &s,
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#
        ),
        None
    );
    let r = reply(&s, "[]");
    assert_eq!(
        r.at("error").at("message").as_str(),
        Some("an empty batch is not a valid request")
    );

    let s = session();
    init(&s, "\"2025-11-25\"");
    let r = send(&s, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap();
    // From 2025-11-25 an unknown id is left out.
    assert_eq!(
        r,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"batching is not supported in this protocol version"}}"#
    );
}

#[test]
fn logging_set_level_validates_and_gates_messages() {
    let s = session();
    init(&s, "\"2025-06-18\"");
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}"#,
    );
    assert_eq!(
        r.at("error").at("message").as_str(),
        Some("invalid log level 'loud'; expected one of debug, info, notice, warning, error, critical, alert, emergency")
    );
    let (notes, _) = chatty(&s, false);
    assert!(
        notes.iter().all(|n| !n.contains("notifications/message")),
        "{notes:?}"
    );
    assert_eq!(
        send(
            &s,
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#
        )
        .unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    let (notes, _) = chatty(&s, false);
    let logs: Vec<_> = notes
        .iter()
        .filter(|n| n.contains("notifications/message"))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert_eq!(
        logs[0],
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"fixture","data":"hello"}}"#
    );
    // The engine's summary of the call comes last.
    assert!(
        logs[1].starts_with(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"engine","data":{"event":"call_finished","tool":"chatty","outcome":"ok","ms":"#),
        "{logs:?}"
    );
}

#[derive(Default)]
struct Collect(Mutex<Vec<String>>);
impl Notify for Collect {
    fn notify(&self, n: Value) {
        self.0.lock().unwrap().push(json::to_string(&n));
    }
}

fn chatty(s: &Session, with_token: bool) -> (Vec<String>, Value) {
    let meta = if with_token {
        r#","_meta":{"progressToken":"tok"}"#
    } else {
        ""
    };
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"chatty"{meta}}}}}"#
    );
    let sink = Collect::default();
    let r = s
        .handle_message_with(
            json::parse(msg.as_bytes()).unwrap(),
            &sink,
            CancelToken::new(),
        )
        .unwrap();
    (sink.0.into_inner().unwrap(), r)
}

#[test]
fn progress_only_with_a_token_and_always_increasing() {
    let s = session();
    init(&s, "\"2025-06-18\"");
    let (notes, _) = chatty(&s, false);
    assert!(notes.is_empty());
    let (notes, _) = chatty(&s, true);
    assert_eq!(
        notes,
        [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":0.0,"total":100.0,"message":"start"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":50.0,"total":100.0}}"#,
        ]
    );
    // 2024-11-05 progress has no message.
    let s = session();
    init(&s, "\"2024-11-05\"");
    let (notes, _) = chatty(&s, true);
    assert!(!notes[0].contains("message"));
}

#[test]
fn cancellation_stops_the_call_and_suppresses_the_reply() {
    let s = Arc::new(session());
    init(&s, "\"2025-06-18\"");
    let worker = {
        let s = Arc::clone(&s);
        std::thread::spawn(move || {
            s.handle_message(
                json::parse(br#"{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow"}}"#)
                    .unwrap(),
            )
        })
    };
    // Cancel until the call is registered and stops (the notification is idempotent).
    let started = std::time::Instant::now();
    while !worker.is_finished() {
        send(
            &s,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"test"}}"#,
        );
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "the call did not stop"
        );
    }
    assert_eq!(worker.join().unwrap(), None);
}

#[test]
fn modern_requests_are_served_statelessly() {
    let s = session();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let r = reply(
        &s,
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#),
    );
    assert_eq!(
        json::to_string(r.at("result")),
        r#"{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{"listChanged":false}},"instructions":"test tools","ttlMs":3600000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"agentteams-fixture","version":"9.9.9","title":"Fixture"}}}"#
    );
    let r = reply(
        &s,
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#),
    );
    assert_eq!(r.at("result").at("ttlMs").as_u64(), Some(LIST_TTL_MS));
    assert_eq!(r.at("result").at("resultType").as_str(), Some("complete"));
    let r = reply(
        &s,
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"n":1}},{meta}}}}}"#
        ),
    );
    assert_eq!(r.at("result").at("resultType").as_str(), Some("complete"));
    assert_eq!(
        json::to_string(r.at("result").at("structuredContent")),
        r#"{"n":1}"#
    );
    let r = reply(
        &s,
        &format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{{"level":"info",{meta}}}}}"#
        ),
    );
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32601));

    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(
        json::to_string(r.at("error")),
        r#"{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2099-01-01"}}"#
    );
    let r = reply(
        &s,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32602));
    let r = reply(&s, r#"{"jsonrpc":"2.0","id":7,"method":"server/discover"}"#);
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32602));
}

#[test]
fn python_sdk_probe_then_initialize_on_one_process() {
    // The Python SDK 2.x probes server/discover, then (for a legacy answer) initializes.
    let s = session();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"2.3.0"}}"#;
    let r = reply(
        &s,
        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#),
    );
    assert!(r.get("result").is_some());
    let r = init(&s, "\"2025-11-25\"");
    assert_eq!(
        r.at("result").at("protocolVersion").as_str(),
        Some("2025-11-25")
    );
    // After initialize the process is legacy: discover is unknown, modern _meta is ignored.
    let r = reply(
        &s,
        &format!(r#"{{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{{{meta}}}}}"#),
    );
    assert_eq!(r.at("error").at("code").as_i64(), Some(-32601));
    let r = reply(
        &s,
        &format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{{meta}}}}}"#),
    );
    assert!(r.at("result").get("resultType").is_none());
}

#[test]
fn parse_error_reply_follows_the_negotiated_id_rule() {
    let s = session();
    assert_eq!(
        json::to_string(&s.parse_error_reply(None)),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error (or line over 1 MiB)"}}"#
    );
    init(&s, "\"2025-11-25\"");
    assert_eq!(
        json::to_string(&s.parse_error_reply(Some("expected a value at line 1 column 1 (byte 0)"))),
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error (or line over 1 MiB)","data":{"detail":"expected a value at line 1 column 1 (byte 0)"}}}"#
    );
}
