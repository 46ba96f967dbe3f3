//! The engine behind the stdio transport, fed arbitrary bytes as its input lines: it must never
//! panic or hang, and every line it writes must be one valid JSON message.
#![no_main]

#[path = "support/output_lines.rs"]
mod output_lines;

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{
    CallContext, Engine, LogLevel, Session, Tool, ToolError, ToolOutput, ToolSet,
};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

struct Tools;

impl ToolSet for Tools {
    fn server_name(&self) -> &str {
        "agentteams-fuzz"
    }
    fn tools(&self) -> Vec<Tool> {
        let schema = json::parse(
            br#"{"type": "object", "required": ["q"], "additionalProperties": false,
                 "properties": {"q": {"type": "string", "minLength": 1, "maxLength": 50},
                                "k": {"type": "integer", "minimum": 1, "maximum": 20},
                                "kind": {"enum": ["a", "b"]},
                                "list": {"type": "array", "maxItems": 3, "items": {"type": ["string", "null"]}}}}"#,
        )
        .expect("a valid schema");
        vec![
            Tool::read_only("echo", "Returns its arguments.", schema.clone())
                .argument_message("k", "k must be an integer from 1 to 20"),
            Tool::read_only("fail", "Fails.", schema),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        ctx.progress(1.0, Some(2.0), Some("half"));
        ctx.log(LogLevel::Info, Some("fuzz"), Value::from("called"));
        match name {
            "echo" => Ok(ToolOutput::Value(Value::Object(args.clone()))),
            _ => Err(ToolError::new("failed on purpose")),
        }
    }
}

fn engine() -> Arc<Engine> {
    static ENGINE: OnceLock<Arc<Engine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| Arc::new(Engine::new(Arc::new(Tools))))
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let session = Session::new(engine());
    let mut out = Vec::new();
    agentteams_mcp::stdio::serve(&session, data, &mut out).expect("in-memory I/O cannot fail");
    output_lines::messages(&out);
});
