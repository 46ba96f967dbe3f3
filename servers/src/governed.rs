//! The `governed` test fixture (`--serve-mcp governed`, never listed as a server): a read-only
//! tool and two that declare they change data, for driving permission modes, approval presets and
//! scoped approvals through the real binary. Its write tools change nothing: they answer with what
//! they would have written, so serving the fixture is harmless whatever the mode.

use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::server::{Annotations, CallContext, Tool, ToolError, ToolOutput, ToolSet};

/// The fixture's tool set.
pub struct Governed;

const NOTE_SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path"]}"#;

impl ToolSet for Governed {
    fn server_name(&self) -> &str {
        "agentteams-governed-fixture"
    }

    fn tools(&self) -> Vec<Tool> {
        let schema = || json::parse(NOTE_SCHEMA.as_bytes()).expect("the fixture's schema is JSON");
        let changes = |destructive: bool| Annotations {
            read_only: false,
            destructive,
            idempotent: false,
            open_world: false,
        };
        vec![
            Tool::read_only("read_note", "Says which note it would read.", schema()),
            Tool::new(
                "write_note",
                "Says what it would write (replacing the note).",
                schema(),
            )
            .annotations(changes(true)),
            Tool::new(
                "append_note",
                "Says what it would append to the note.",
                schema(),
            )
            .annotations(changes(false)),
        ]
    }

    fn call(
        &self,
        name: &str,
        arguments: &Map,
        _ctx: &CallContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Value(obj([
            ("tool", Value::from(name)),
            ("arguments", Value::Object(arguments.clone())),
        ])))
    }
}
