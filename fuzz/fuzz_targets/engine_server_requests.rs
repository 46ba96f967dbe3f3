//! Correlation of the client's answers to the requests a call sends it (legacy eras): a session
//! whose client declared sampling, elicitation and roots runs a tool that asks all three, and
//! arbitrary bytes follow as the client's input (answers, errors, wrong or repeated ids, garbage).
//! The engine must never panic or hang, every line it writes must be one JSON-RPC 2.0 message,
//! and its requests' ids must never repeat (an answer can complete only the request it names).
#![no_main]

#[path = "support/output_lines.rs"]
mod output_lines;

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{CallContext, Engine, Session, Tool, ToolError, ToolOutput, ToolSet};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long the tool waits for each answer: short, so an input that never answers costs
/// milliseconds, not the default minute.
const WAIT: Duration = Duration::from_millis(5);

struct Tools;

impl ToolSet for Tools {
    fn server_name(&self) -> &str {
        "agentteams-fuzz"
    }
    fn tools(&self) -> Vec<Tool> {
        let schema = json::parse(br#"{"type": "object"}"#).expect("a valid schema");
        vec![Tool::read_only("ask", "Asks the client three things.", schema)]
    }
    fn call(&self, _: &str, _: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        let mut answers = Vec::new();
        for method in ["sampling/createMessage", "elicitation/create", "roots/list"] {
            let params = json::parse(br#"{"messages": [], "maxTokens": 1, "message": "m", "requestedSchema": {"type": "object"}}"#)
                .expect("valid params");
            let params = (method != "roots/list").then_some(params);
            match ctx.request_client(method, params, WAIT) {
                Ok(result) => answers.push(result),
                Err(e) => answers.push(Value::from(e.to_string())),
            }
        }
        Ok(ToolOutput::Value(Value::from(answers)))
    }
}

fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| Arc::new(Engine::new(Arc::new(Tools))))
        .clone()
}

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"roots":{}},"clientInfo":{"name":"fuzz","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask","arguments":{}}}
"#;

fuzz_target!(|data: &[u8]| {
    let session = Session::new(engine());
    let mut input = PREFIX.to_vec();
    input.extend_from_slice(data);
    let mut out = Vec::new();
    agentteams_mcp::stdio::serve(&session, &input[..], &mut out).expect("in-memory I/O");
    let mut request_ids: Vec<String> = Vec::new();
    for m in output_lines::messages(&out) {
        if let (Some(_), Some(id)) = (m.get("method"), m.get("id")) {
            let id = json::to_string(id);
            assert!(!request_ids.contains(&id), "request id {id} sent twice");
            request_ids.push(id);
        }
    }
});
