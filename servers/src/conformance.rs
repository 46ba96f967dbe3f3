//! The `conformance` fixture server: the tools the official MCP conformance suite calls by name
//! (PROTOCOL.md §21.4), so the suite can check the HTTP transport and the engine.
//!
//! Served only as `--serve-mcp conformance`; never part of `gitread` or `recall`.

use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::server::{CallContext, LogLevel, Tool, ToolError, ToolOutput, ToolSet};
use std::time::Duration;

/// A 1×1 red PNG.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// One millisecond of 8 kHz, 8-bit mono silence as a WAV file.
pub const SILENT_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// Pause between the notifications of the logging and progress tools (the suite's fixture waits
/// about as long, so clients see them arrive one by one).
const STEP: Duration = Duration::from_millis(50);

/// The fixture tool set.
pub struct Conformance;

fn schema(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("fixture schemas are valid JSON")
}

fn no_arguments() -> Value {
    schema(r#"{"type": "object", "properties": {}}"#)
}

fn text(t: &str) -> Value {
    obj([("type", Value::from("text")), ("text", Value::from(t))])
}

fn image() -> Value {
    obj([
        ("type", Value::from("image")),
        ("data", Value::from(RED_PIXEL_PNG)),
        ("mimeType", Value::from("image/png")),
    ])
}

fn resource(uri: &str, mime_type: &str, body: &str) -> Value {
    obj([
        ("type", Value::from("resource")),
        (
            "resource",
            obj([
                ("uri", Value::from(uri)),
                ("mimeType", Value::from(mime_type)),
                ("text", Value::from(body)),
            ]),
        ),
    ])
}

fn content(blocks: Vec<Value>) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Content {
        content: blocks,
        structured: None,
    })
}

impl ToolSet for Conformance {
    fn server_name(&self) -> &str {
        "agentteams-conformance"
    }

    fn instructions(&self) -> Option<&str> {
        Some("Fixture tools for the MCP conformance suite; not a product server.")
    }

    fn tools(&self) -> Vec<Tool> {
        let plain = |name: &str, description: &str| Tool::new(name, description, no_arguments());
        vec![
            plain("test_simple_text", "Returns one text block."),
            plain("test_image_content", "Returns one PNG image block."),
            plain("test_audio_content", "Returns one WAV audio block."),
            plain("test_embedded_resource", "Returns one embedded text resource."),
            plain(
                "test_multiple_content_types",
                "Returns text, image and resource blocks together.",
            ),
            plain(
                "test_error_handling",
                "Always fails with a tool error (an isError result).",
            ),
            plain(
                "test_tool_with_logging",
                "Sends three info log messages while it runs.",
            ),
            plain(
                "test_tool_with_progress",
                "Reports progress 0, 50 and 100 of 100 while it runs.",
            ),
            Tool::new(
                "json_schema_2020_12_tool",
                "Declares a JSON Schema 2020-12 input schema with $defs.",
                schema(
                    r##"{
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "type": "object",
                        "$defs": {
                            "address": {
                                "type": "object",
                                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                            }
                        },
                        "properties": {
                            "name": {"type": "string"},
                            "address": {"$ref": "#/$defs/address"}
                        },
                        "additionalProperties": false
                    }"##,
                ),
            ),
            plain(
                "test_reconnection",
                "Answers after a pause (the suite's SSE-resumption scenario; this server does not resume streams).",
            ),
        ]
    }

    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "test_simple_text" => {
                content(vec![text("This is a simple text response for testing.")])
            }
            "test_image_content" => content(vec![image()]),
            "test_audio_content" => content(vec![obj([
                ("type", Value::from("audio")),
                ("data", Value::from(SILENT_WAV)),
                ("mimeType", Value::from("audio/wav")),
            ])]),
            "test_embedded_resource" => content(vec![resource(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]),
            "test_multiple_content_types" => content(vec![
                text("Multiple content types test:"),
                image(),
                resource(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]),
            "test_error_handling" => Err(ToolError::new(
                "This tool intentionally returns an error for testing",
            )),
            "test_tool_with_logging" => {
                let steps = [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ];
                for (i, step) in steps.iter().enumerate() {
                    if i > 0 && ctx.cancel_token().wait_timeout(STEP) {
                        return Err(ToolError::new("cancelled"));
                    }
                    ctx.log(LogLevel::Info, Some("conformance"), Value::from(*step));
                }
                content(vec![text("Tool with logging executed successfully")])
            }
            "test_tool_with_progress" => {
                for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 && ctx.cancel_token().wait_timeout(STEP) {
                        return Err(ToolError::new("cancelled"));
                    }
                    ctx.progress(done, Some(100.0), None);
                }
                content(vec![text("Tool with progress executed successfully")])
            }
            "json_schema_2020_12_tool" => content(vec![text(&format!(
                "Received: {}",
                json::to_string(&Value::Object(args.clone()))
            ))]),
            "test_reconnection" => {
                if ctx.cancel_token().wait_timeout(STEP) {
                    return Err(ToolError::new("cancelled"));
                }
                content(vec![text("Reconnection test completed")])
            }
            other => Err(ToolError::new(format!("unknown fixture tool {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::server::CancelToken;

    fn call(name: &str) -> Result<ToolOutput, ToolError> {
        Conformance.call(
            name,
            &Map::new(),
            &CallContext::detached(CancelToken::new()),
        )
    }

    fn blocks(name: &str) -> Vec<Value> {
        match call(name) {
            Ok(ToolOutput::Content { content, .. }) => content,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn every_declared_tool_answers_and_names_are_well_formed() {
        for tool in Conformance.tools() {
            assert!(!tool.description.is_empty());
            assert!(tool
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            let outcome = call(&tool.name);
            assert_eq!(
                outcome.is_err(),
                tool.name == "test_error_handling",
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn media_blocks_carry_decodable_payloads() {
        let image = &blocks("test_image_content")[0];
        assert_eq!(
            image.get("mimeType").and_then(Value::as_str),
            Some("image/png")
        );
        assert!(RED_PIXEL_PNG.starts_with("iVBORw0KGgo")); // the PNG signature in Base64
        let audio = &blocks("test_audio_content")[0];
        assert_eq!(
            audio.get("mimeType").and_then(Value::as_str),
            Some("audio/wav")
        );
        assert!(SILENT_WAV.starts_with("UklGR")); // "RIFF"
        let mixed = blocks("test_multiple_content_types");
        let kinds: Vec<_> = mixed
            .iter()
            .filter_map(|b| b.get("type").and_then(Value::as_str))
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
    }

    #[test]
    fn the_2020_12_schema_keeps_its_keywords_verbatim() {
        let tool = Conformance
            .tools()
            .into_iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .unwrap();
        let schema = &tool.input_schema;
        assert_eq!(
            schema.get("$schema").and_then(Value::as_str),
            Some("https://json-schema.org/draft/2020-12/schema")
        );
        assert!(schema.get("$defs").is_some());
        assert_eq!(
            schema.get("additionalProperties").and_then(Value::as_bool),
            Some(false)
        );
    }
}
