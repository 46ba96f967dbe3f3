//! The `conformance` fixture server: the tools, resources, prompts and completions the official
//! MCP conformance suite asks for by name (PROTOCOL.md §21.4), so the suite can check the HTTP
//! transport and the engine.
//!
//! Served only as `--serve-mcp conformance`; never part of `gitread` or `recall`.

use agentteams_mcp::base64;
use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::server::{
    CallContext, ClientRequestError, LogLevel, Prompt, PromptArgument, PromptMessage, PromptOutput,
    PromptSet, ReadRequest, RequestError, Resource, ResourceContents, ResourceNotifier,
    ResourceSet, ResourceTemplate, Role, Tool, ToolError, ToolOutput, ToolSet,
};
use std::sync::OnceLock;
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
/// How long `test_reconnection` works after closing its stream: long enough that the client's
/// resumption usually arrives before the answer, so both orders get exercised.
const RECONNECTION_PAUSE: Duration = Duration::from_millis(300);

/// The fixture tool set, with its resources and prompts.
#[derive(Default)]
pub struct Conformance {
    /// The handle the engine attached: `test://watched-resource` is subscribable.
    notifier: OnceLock<ResourceNotifier>,
}

impl Conformance {
    /// Announces a change of `test://watched-resource` to its subscribers (nothing changes it in
    /// this fixture on its own; tests call this).
    pub fn touch_watched(&self) {
        if let Some(n) = self.notifier.get() {
            n.updated(WATCHED);
        }
    }
}

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";
/// What completion offers for `test_prompt_with_arguments`' arguments and the template's `id`.
const COMPLETIONS: [&str; 5] = ["paris", "park", "party", "test", "testing"];

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
        let plain =
            |name: &str, description: &str| Tool::read_only(name, description, no_arguments());
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
            Tool::read_only(
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
            Tool::read_only(
                "test_sampling",
                "Asks the client's model (sampling/createMessage) and returns its answer.",
                schema(r#"{"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}"#),
            ),
            Tool::read_only(
                "test_elicitation",
                "Asks the client's user for a username and an email (elicitation/create).",
                schema(r#"{"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}"#),
            ),
            plain(
                "test_elicitation_sep1034_defaults",
                "Elicits a form whose fields carry defaults (SEP-1034).",
            ),
            plain(
                "test_elicitation_sep1330_enums",
                "Elicits a form with the five enum schema variants (SEP-1330).",
            ),
            plain(
                "test_roots",
                "Asks the client for its roots (roots/list) and returns them as JSON.",
            ),
            plain(
                "test_input_rounds",
                "Asks the client three things in turn (a name by elicitation, a greeting for it by sampling, its roots) and reports the answers: one round trip each in a legacy session, one input_required round each in 2026-07-28.",
            ),
            plain(
                "test_reconnection",
                "Closes its SSE stream mid-call and answers after a pause, on the stream the client resumes with Last-Event-ID (SEP-1699 polling).",
            ),
        ]
    }

    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        Some(self)
    }

    fn prompt_set(&self) -> Option<&dyn PromptSet> {
        Some(self)
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
            "test_sampling" => {
                let prompt = args
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let params = schema(&format!(
                    r#"{{"messages": [{{"role": "user", "content": {{"type": "text", "text": {}}}}}], "maxTokens": 100}}"#,
                    json::to_string(&Value::from(prompt))
                ));
                let answer = ctx
                    .sample(params)
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let said = answer
                    .get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                content(vec![text(&format!("LLM response: {said}"))])
            }
            "test_elicitation" => {
                let message = args
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let form = schema(
                    r#"{"type": "object", "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    }, "required": ["username", "email"]}"#,
                );
                elicit(ctx, message, form, "User response")
            }
            "test_elicitation_sep1034_defaults" => {
                let form = schema(
                    r#"{"type": "object", "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    }}"#,
                );
                elicit(
                    ctx,
                    "Please review and update the form fields with defaults",
                    form,
                    "Elicitation completed",
                )
            }
            "test_elicitation_sep1330_enums" => {
                let form = schema(
                    r#"{"type": "object", "properties": {
                        "untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}
                    }}"#,
                );
                elicit(
                    ctx,
                    "Please choose from the enum variants",
                    form,
                    "Elicitation completed",
                )
            }
            "test_roots" => {
                let answer = ctx
                    .list_roots()
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let roots = answer.get("roots").cloned().unwrap_or_default();
                content(vec![text(&format!("Roots: {}", json::to_string(&roots)))])
            }
            "test_input_rounds" => {
                let failed = |e: ClientRequestError| ToolError::new(e.to_string());
                let form = schema(
                    r#"{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}"#,
                );
                let asked = obj([
                    ("message", Value::from("Your name?")),
                    ("requestedSchema", form),
                ]);
                let answer = ctx.elicit(asked).map_err(failed)?;
                let name = (answer.get("content"))
                    .and_then(|c| c.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("nobody")
                    .to_owned();
                let params = schema(&format!(
                    r#"{{"messages": [{{"role": "user", "content": {{"type": "text", "text": {}}}}}], "maxTokens": 50}}"#,
                    json::to_string(&Value::from(format!("Greet {name}")))
                ));
                let sampled = ctx.sample(params).map_err(failed)?;
                let said = (sampled.get("content"))
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let roots = ctx.list_roots().map_err(failed)?;
                let count = (roots.get("roots"))
                    .and_then(Value::as_array)
                    .map_or(0, |r| r.len());
                content(vec![text(&format!(
                    "name={name}; said={said}; roots={count}"
                ))])
            }
            "test_reconnection" => {
                // Closed only where the transport can resume it (HTTP sessions at 2025-11-25);
                // elsewhere the answer simply follows the pause on the same stream.
                ctx.close_stream();
                if ctx.cancel_token().wait_timeout(RECONNECTION_PAUSE) {
                    return Err(ToolError::new("cancelled"));
                }
                content(vec![text("Reconnection test completed")])
            }
            other => Err(ToolError::new(format!("unknown fixture tool {other}"))),
        }
    }
}

/// Sends `elicitation/create` with `message` and `form`, and reports the user's answer after
/// `label` as the suite's fixture does: `<label>: action=<action>, content=<JSON>`.
fn elicit(
    ctx: &CallContext<'_>,
    message: &str,
    form: Value,
    label: &str,
) -> Result<ToolOutput, ToolError> {
    let params = json::obj([("message", Value::from(message)), ("requestedSchema", form)]);
    let answer = ctx
        .elicit(params)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let given = answer.get("content").cloned().unwrap_or_default();
    content(vec![text(&format!(
        "{label}: action={action}, content={}",
        json::to_string(&given)
    ))])
}

fn complete_from_list(value: &str) -> Vec<String> {
    COMPLETIONS
        .iter()
        .filter(|c| c.starts_with(value))
        .map(|c| (*c).to_owned())
        .collect()
}

impl ResourceSet for Conformance {
    fn resources(&self) -> Vec<Resource> {
        vec![
            Resource::new(STATIC_TEXT, "static-text")
                .description("A static text resource.")
                .mime_type("text/plain"),
            Resource::new(STATIC_BINARY, "static-binary")
                .description("A static binary resource (a 1x1 PNG).")
                .mime_type("image/png"),
            Resource::new(WATCHED, "watched-resource")
                .description("A resource clients may subscribe to.")
                .mime_type("text/plain"),
        ]
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate::new(TEMPLATE, "template-data")
            .description("Data for any id.")
            .mime_type("application/json")]
    }

    fn read(
        &self,
        request: &ReadRequest<'_>,
        _: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError> {
        let contents = match (request.uri, request.variable("id")) {
            (_, Some(id)) => {
                let body = json::obj([
                    ("id", Value::from(id)),
                    ("templateTest", Value::from(true)),
                    ("data", Value::from(format!("Data for ID: {id}"))),
                ]);
                ResourceContents::text(request.uri, json::to_string(&body))
                    .mime_type("application/json")
            }
            (STATIC_TEXT, None) => ResourceContents::text(
                STATIC_TEXT,
                "This is the content of the static text resource.",
            )
            .mime_type("text/plain"),
            (STATIC_BINARY, None) => {
                let png = base64::decode(RED_PIXEL_PNG)
                    .ok_or_else(|| RequestError::failed("the fixture PNG is not Base64"))?;
                ResourceContents::binary(STATIC_BINARY, png).mime_type("image/png")
            }
            (WATCHED, None) => {
                ResourceContents::text(WATCHED, "Watched resource content.").mime_type("text/plain")
            }
            (other, None) => return Err(RequestError::not_found(other)),
        };
        Ok(vec![contents])
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn attach(&self, notifier: ResourceNotifier) {
        let _ = self.notifier.set(notifier);
    }

    fn complete(
        &self,
        _: &ResourceTemplate,
        _: &str,
        value: &str,
        _: &[(String, String)],
    ) -> Vec<String> {
        complete_from_list(value)
    }
}

impl PromptSet for Conformance {
    fn prompts(&self) -> Vec<Prompt> {
        vec![
            Prompt::new("test_simple_prompt", "A prompt without arguments."),
            Prompt::new("test_prompt_with_arguments", "A prompt with two arguments.")
                .argument(PromptArgument::required("arg1", "First argument."))
                .argument(PromptArgument::required("arg2", "Second argument.")),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt that embeds a resource.",
            )
            .argument(PromptArgument::required(
                "resourceUri",
                "URI of the resource to embed.",
            )),
            Prompt::new("test_prompt_with_image", "A prompt with an image."),
        ]
    }

    fn get(
        &self,
        name: &str,
        arguments: &[(String, String)],
        _: &CallContext<'_>,
    ) -> Result<PromptOutput, RequestError> {
        let arg = |key: &str| {
            arguments
                .iter()
                .find(|(k, _)| k == key)
                .map_or("", |(_, v)| v.as_str())
        };
        let messages = match name {
            "test_simple_prompt" => vec![PromptMessage::text(
                Role::User,
                "This is a simple prompt for testing.",
            )],
            "test_prompt_with_arguments" => vec![PromptMessage::text(
                Role::User,
                &format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                ),
            )],
            "test_prompt_with_embedded_resource" => vec![
                PromptMessage::resource(
                    Role::User,
                    &ResourceContents::text(
                        arg("resourceUri"),
                        "Embedded resource content for testing.",
                    )
                    .mime_type("text/plain"),
                ),
                PromptMessage::text(Role::User, "Please process the embedded resource above."),
            ],
            "test_prompt_with_image" => vec![
                PromptMessage::image(Role::User, RED_PIXEL_PNG, "image/png"),
                PromptMessage::text(Role::User, "Please analyze the image above."),
            ],
            other => return Err(RequestError::invalid(format!("unknown prompt {other}"))),
        };
        Ok(PromptOutput::new(messages))
    }

    fn complete(&self, _: &Prompt, _: &str, value: &str, _: &[(String, String)]) -> Vec<String> {
        complete_from_list(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::server::CancelToken;

    fn call(name: &str) -> Result<ToolOutput, ToolError> {
        Conformance::default().call(
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
        for tool in Conformance::default().tools() {
            assert!(!tool.description.is_empty());
            assert!(tool
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            let outcome = call(&tool.name);
            // Tools that ask the client fail without a session to ask.
            let fails = tool.name == "test_error_handling"
                || tool.name.starts_with("test_sampling")
                || tool.name.starts_with("test_elicitation")
                || tool.name == "test_roots"
                || tool.name == "test_input_rounds";
            assert_eq!(outcome.is_err(), fails, "{}", tool.name);
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
        let tool = Conformance::default()
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
