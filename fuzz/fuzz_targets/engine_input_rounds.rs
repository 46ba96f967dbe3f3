//! The 2026-07-28 multi round-trip requests: a retry of a tool that asks the client, whose
//! `requestState` and `inputResponses` are fuzzed. Raw bytes as the state, a genuine state with
//! fuzzed answers, or a genuine state with bytes changed. It must never panic; every reply is a
//! result or -32602; a state that is not the genuine one is always refused; and the tool resumes
//! (asks its second question or finishes) only on the genuine state with a well-formed answer.
#![no_main]

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{CallContext, Engine, Session, Tool, ToolError, ToolOutput, ToolSet};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

struct Asking;

impl ToolSet for Asking {
    fn server_name(&self) -> &str {
        "agentteams-fuzz-rounds"
    }
    fn tools(&self) -> Vec<Tool> {
        let schema = json::parse(br#"{"type": "object"}"#).expect("a valid schema");
        vec![Tool::read_only("ask", "Elicits, then samples.", schema)]
    }
    fn call(&self, _: &str, _: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        let fail = |e: agentteams_mcp::server::ClientRequestError| ToolError::new(e.to_string());
        let params = json::parse(br#"{"message": "name?", "requestedSchema": {"type": "object"}}"#)
            .expect("valid params");
        let answer = ctx.elicit(params).map_err(fail)?;
        let sampled = ctx.sample(json::parse(br#"{"messages": [], "maxTokens": 1}"#).unwrap());
        let sampled = sampled.map_err(fail)?;
        Ok(ToolOutput::Value(json::obj([
            ("a", answer),
            ("s", sampled),
        ])))
    }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}"#;

fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| Session::new(Arc::new(Engine::new(Arc::new(Asking)))))
}

fn call(extra: &str) -> Value {
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ask","arguments":{{}}{extra},{META}}}}}"#
    );
    let message = json::parse(text.as_bytes()).expect("the request is valid JSON");
    session()
        .handle_message(message)
        .expect("a request gets a reply")
}

/// The state of the first round, issued once.
fn genuine() -> &'static str {
    static STATE: OnceLock<String> = OnceLock::new();
    STATE.get_or_init(|| {
        let reply = call("");
        let state = reply.get("result").and_then(|r| r.get("requestState"));
        state
            .and_then(Value::as_str)
            .expect("a first round")
            .to_owned()
    })
}

/// The keys the reply asks for, or `None` for a finished call; panics on anything but a result or
/// -32602.
fn asked(reply: &Value) -> Option<Vec<String>> {
    if let Some(error) = reply.get("error") {
        assert_eq!(
            error.get("code").and_then(Value::as_i64),
            Some(-32602),
            "{reply}"
        );
        return Some(Vec::new());
    }
    let result = reply.get("result").expect("a result");
    let requests = result.get("inputRequests").and_then(Value::as_object)?;
    Some(requests.iter().map(|(k, _)| k.to_string()).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let state = genuine();
    let quoted = |s: &str| json::to_string(&Value::from(s));
    match mode % 3 {
        0 => {
            let raw = String::from_utf8_lossy(rest);
            let reply = call(&format!(
                r#","inputResponses":{{"elicitation-1":{{"action":"accept"}}}},"requestState":{}"#,
                quoted(&raw)
            ));
            // Only the genuine state moves the call on to its second question.
            if raw != state {
                assert!(reply.get("error").is_some(), "{reply}");
            }
        }
        1 => {
            let Ok(responses) = json::parse(rest) else {
                return;
            };
            let reply = call(&format!(
                r#","inputResponses":{},"requestState":{}"#,
                json::to_string(&responses),
                quoted(state)
            ));
            let keys = asked(&reply).expect("one answer cannot finish a call that asks twice");
            if keys == ["sampling-2"] {
                // The call resumed: the answer it was given has the elicitation result's shape.
                let answer = responses.get("elicitation-1").expect("answered");
                let action = answer.get("action").and_then(Value::as_str);
                assert!(
                    matches!(action, Some("accept" | "decline" | "cancel")),
                    "{reply}"
                );
            }
        }
        _ => {
            let mut bytes = state.as_bytes().to_vec();
            for (i, b) in rest.iter().enumerate().take(8) {
                let at = (*b as usize + i * 31) % bytes.len();
                bytes[at] ^= 1 + (i as u8 % 7);
            }
            let changed = String::from_utf8_lossy(&bytes).into_owned();
            let reply = call(&format!(
                r#","inputResponses":{{"elicitation-1":{{"action":"accept"}}}},"requestState":{}"#,
                quoted(&changed)
            ));
            if changed != state {
                assert!(reply.get("error").is_some(), "{reply}");
            }
        }
    }
});
