//! A small MCP server over stdio built on the library: how to embed the engine, and the server the
//! client tests start as a child process.
//!
//! Tools: `echo` (returns its arguments), `fail` (an `isError` result), `progress` (three progress
//! notifications, then a result), `chatty` (three log messages), `slow` (waits `ms` milliseconds,
//! stopping early when cancelled) and `send_note` (does nothing; its name is one an untrusted
//! server may not offer).

#![forbid(unsafe_code)]

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{
    CallContext, Engine, LogLevel, Session, Tool, ToolError, ToolOutput, ToolSet,
};
use std::sync::Arc;
use std::time::Duration;

struct Demo;

fn schema(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("the example's schemas are valid JSON")
}

impl ToolSet for Demo {
    fn server_name(&self) -> &str {
        "example-stdio-server"
    }

    fn tools(&self) -> Vec<Tool> {
        let open = r#"{"type":"object"}"#;
        vec![
            Tool::read_only("echo", "Returns its arguments.", schema(open)),
            Tool::read_only(
                "fail",
                "Fails with the given message.",
                schema(r#"{"type":"object","properties":{"message":{"type":"string"}}}"#),
            ),
            Tool::read_only(
                "progress",
                "Reports progress 0, 50, 100 of 100.",
                schema(open),
            ),
            Tool::read_only("chatty", "Logs three messages at level info.", schema(open)),
            Tool::read_only(
                "slow",
                "Waits ms milliseconds (or until cancelled).",
                schema(
                    r#"{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}"#,
                ),
            ),
            Tool::read_only(
                "send_note",
                "Does nothing (a sensitive name for trust tests).",
                schema(open),
            ),
        ]
    }

    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "echo" => Ok(ToolOutput::Value(Value::Object(args.clone()))),
            "fail" => Err(ToolError::new(
                args.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("failed as asked"),
            )),
            "progress" => {
                for p in [0.0, 50.0, 100.0] {
                    ctx.progress(p, Some(100.0), Some("working"));
                }
                Ok(ToolOutput::Value(Value::from("done")))
            }
            "chatty" => {
                for step in ["started", "working", "finished"] {
                    ctx.log(LogLevel::Info, Some("chatty"), Value::from(step));
                }
                Ok(ToolOutput::Value(Value::from("logged")))
            }
            "slow" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                if ctx.cancel_token().wait_timeout(Duration::from_millis(ms)) {
                    return Err(ToolError::new("cancelled"));
                }
                Ok(ToolOutput::Value(Value::from(ms)))
            }
            "send_note" => Ok(ToolOutput::Value(Value::from("nothing was sent"))),
            other => Err(ToolError::new(format!("no tool {other}"))),
        }
    }
}

fn main() {
    let session = Session::new(Arc::new(Engine::new(Arc::new(Demo))));
    if let Err(e) = agentteams_mcp::stdio::serve(&session, std::io::stdin(), std::io::stdout()) {
        eprintln!("stdio_server: {e}");
        std::process::exit(1);
    }
}
