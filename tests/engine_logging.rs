//! The engine's log messages (`notifications/message`): levels, fields, refusals, the per-call
//! caps, and that no argument value or secret reaches them.

use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::*;
use std::sync::{Arc, Mutex};

const SECRET: &str = "hunter2-correct-horse";
const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGH";

struct Fixture;

impl ToolSet for Fixture {
    fn server_name(&self) -> &str {
        "agentteams-log-fixture"
    }
    fn tools(&self) -> Vec<Tool> {
        let any = json::parse(br#"{"type":"object"}"#).unwrap();
        vec![
            Tool::read_only("ok", "Succeeds.", any.clone()),
            Tool::read_only("quote", "Fails quoting its argument.", any.clone()),
            Tool::read_only("flood", "Logs far too much.", any.clone()),
            Tool::read_only("huge", "Logs one huge message.", any.clone()),
            Tool::read_only("panic", "Panics.", any.clone()),
            Tool::read_only("denied", "Refused by the policy.", any),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "ok" | "denied" => Ok(ToolOutput::Value(obj([("output", Value::from(SECRET))]))),
            "quote" => {
                let given = args.get("rev").and_then(Value::as_str).unwrap_or_default();
                Err(ToolError::new(format!("bad revision '{given}'")))
            }
            "flood" => {
                for i in 0..100u64 {
                    ctx.log(
                        LogLevel::Info,
                        Some("fixture"),
                        obj([("i", Value::from(i))]),
                    );
                }
                Ok(ToolOutput::Value(Value::Object(Map::new())))
            }
            "huge" => {
                ctx.log(
                    LogLevel::Info,
                    Some("fixture"),
                    Value::from("x".repeat(MAX_LOG_DATA_BYTES)),
                );
                Ok(ToolOutput::Value(Value::Object(Map::new())))
            }
            "panic" => panic!("on purpose"),
            _ => unreachable!(),
        }
    }
}

fn session() -> Session {
    let mut policy = Policy::new();
    policy.deny("denied").unwrap();
    Session::new(Arc::new(Engine::new(Arc::new(Fixture)).with_policy(policy)))
}

#[derive(Default)]
struct Collect(Mutex<Vec<Value>>);
impl Notify for Collect {
    fn notify(&self, n: Value) {
        self.0.lock().unwrap().push(n);
    }
}

fn request(s: &Session, text: &str) -> (Vec<Value>, Option<Value>) {
    let notes = Collect::default();
    let reply = s.handle_message_with(
        json::parse(text.as_bytes()).unwrap(),
        &notes,
        CancelToken::new(),
    );
    let notes = notes.0.into_inner().unwrap();
    for n in &notes {
        assert_eq!(
            n.get("method").and_then(Value::as_str),
            Some("notifications/message")
        );
    }
    (notes, reply)
}

fn set_level(s: &Session, level: &str) {
    let (_, reply) = request(
        s,
        &format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"logging/setLevel","params":{{"level":"{level}"}}}}"#
        ),
    );
    assert!(reply.unwrap().get("result").is_some());
}

fn call(s: &Session, tool: &str, arguments: &str) -> Vec<Value> {
    let (notes, reply) = request(
        s,
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        ),
    );
    assert!(reply.is_some());
    notes
}

fn field<'v>(note: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(note.get("params")?, |v, k| v.get(k))
}

fn text(note: &Value, path: &str) -> String {
    field(note, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn initialized() -> Session {
    let s = session();
    let (_, reply) = request(
        &s,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
    );
    assert!(reply.is_some());
    s
}

#[test]
fn no_messages_until_the_client_sets_a_level() {
    let s = initialized();
    assert!(call(&s, "ok", "{}").is_empty());
    assert!(call(&s, "quote", r#"{"rev":"x"}"#).is_empty());
    assert!(call(&s, "denied", "{}").is_empty());
}

#[test]
fn debug_shows_what_ran_and_how_long_it_took() {
    let s = initialized();
    set_level(&s, "debug");
    let notes = call(&s, "ok", "{}");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(text(&notes[0], "level"), "debug");
    assert_eq!(text(&notes[0], "logger"), ENGINE_LOGGER);
    assert_eq!(text(&notes[0], "data.event"), "call_started");
    assert_eq!(text(&notes[0], "data.tool"), "ok");
    assert_eq!(text(&notes[1], "level"), "info");
    assert_eq!(text(&notes[1], "data.event"), "call_finished");
    assert_eq!(text(&notes[1], "data.tool"), "ok");
    assert_eq!(text(&notes[1], "data.outcome"), "ok");
    assert!(field(&notes[1], "data.ms")
        .and_then(Value::as_u64)
        .is_some());
    // Results never reach the log.
    assert!(!json::to_string(&Value::from(notes)).contains(SECRET));
}

#[test]
fn error_level_is_silent_for_a_successful_call_and_reports_a_failure() {
    let s = initialized();
    set_level(&s, "error");
    assert!(call(&s, "ok", "{}").is_empty());
    assert!(call(&s, "quote", r#"{"rev":"x"}"#).is_empty());
    let notes = call(&s, "panic", "{}");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(text(&notes[0], "level"), "error");
    assert_eq!(text(&notes[0], "data.outcome"), "failed");
    assert_eq!(
        field(&notes[0], "data.code").and_then(Value::as_i64),
        Some(-32603)
    );
}

#[test]
fn a_policy_refusal_is_a_warning_naming_the_rule() {
    let s = initialized();
    set_level(&s, "warning");
    assert!(call(&s, "ok", "{}").is_empty());
    let notes = call(&s, "denied", "{}");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(text(&notes[0], "level"), "warning");
    assert_eq!(text(&notes[0], "data.tool"), "denied");
    assert_eq!(text(&notes[0], "data.outcome"), "refused");
    assert_eq!(
        field(&notes[0], "data.code").and_then(Value::as_i64),
        Some(-32001)
    );
    assert!(
        text(&notes[0], "data.rule").contains("deny \"denied\""),
        "{notes:?}"
    );
}

#[test]
fn argument_values_and_secrets_never_reach_the_log() {
    let s = initialized();
    set_level(&s, "debug");
    // The tool's error quotes the argument: the log gives the reason without the value.
    let notes = call(
        &s,
        "quote",
        &format!(r#"{{"rev":"{SECRET}","token":"{TOKEN}"}}"#),
    );
    let all = json::to_string(&Value::from(notes.clone()));
    assert!(!all.contains(SECRET) && !all.contains(TOKEN), "{all}");
    let last = notes.last().unwrap();
    assert_eq!(text(last, "level"), "warning");
    assert_eq!(text(last, "data.outcome"), "error");
    assert_eq!(text(last, "data.reason"), "bad revision '<argument>'");
    // An unknown tool's name is the client's text: not repeated.
    let notes = call(&s, &format!("no-such-{SECRET}"), "{}");
    let all = json::to_string(&Value::from(notes.clone()));
    assert!(!all.contains(SECRET), "{all}");
    assert_eq!(text(&notes[0], "data.reason"), "unknown tool");
    assert_eq!(field(&notes[0], "data.tool"), Some(&Value::Null));
}

#[test]
fn a_call_cannot_flood_the_client() {
    let s = initialized();
    set_level(&s, "info");
    let notes = call(&s, "flood", "{}");
    assert_eq!(notes.len(), MAX_LOG_MESSAGES_PER_CALL);
    let last = notes.last().unwrap();
    assert_eq!(text(last, "data.event"), "call_finished");
    assert_eq!(
        field(last, "data.dropped_messages").and_then(Value::as_u64),
        Some(100 - (MAX_LOG_MESSAGES_PER_CALL as u64 - 1))
    );
    let notes = call(&s, "huge", "{}");
    assert_eq!(notes.len(), 2);
    assert_eq!(
        field(&notes[0], "data.bytes").and_then(Value::as_u64),
        Some(MAX_LOG_DATA_BYTES as u64 + 2)
    );
    assert!(json::to_string(&notes[0]).len() < MAX_LOG_DATA_BYTES);
}

#[test]
fn modern_requests_carry_their_own_level() {
    let s = session();
    let meta = |level: &str| {
        format!(
            r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{level}}}"#
        )
    };
    let req = |meta: String| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ok","_meta":{meta}}}}}"#
        )
    };
    let (notes, _) = request(&s, &req(meta("")));
    assert!(notes.is_empty());
    let (notes, _) = request(
        &s,
        &req(meta(r#","io.modelcontextprotocol/logLevel":"debug""#)),
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(text(&notes[1], "data.outcome"), "ok");
    // The level was the request's: the next request without one gets none.
    let (notes, _) = request(&s, &req(meta("")));
    assert!(notes.is_empty());
}
