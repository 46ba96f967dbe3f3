//! What a server declares and returns: [`ToolSet`], [`Tool`], [`ToolOutput`], [`ToolError`].
//!
//! A server implements [`ToolSet`]; the engine does everything else (lifecycle, validation of
//! arguments against each tool's declared `inputSchema`, result envelopes, caps, policy, audit).

use super::context::CallContext;
use super::prompt::PromptSet;
use super::resource::ResourceSet;
pub use crate::declared::Annotations;
use crate::declared::Declared;
use crate::json::{Map, Value};
use std::fmt;

/// One tool as a server declares it.
#[derive(Clone, Debug)]
pub struct Tool {
    /// 1–64 characters of `[A-Za-z0-9_.-]`.
    pub name: String,
    /// Human-readable name (advertised from revision 2025-06-18).
    pub title: Option<String>,
    pub description: String,
    /// A JSON Schema object; the engine validates every call's arguments against it.
    pub input_schema: Value,
    /// Declared only by tools whose results always carry `structuredContent` matching it.
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    /// Messages that replace the validator's generic message when a given top-level argument fails
    /// (the reference implementation's exact wording), as `(argument, message)`.
    pub argument_messages: Vec<(String, String)>,
    /// Messages for a required top-level argument that is missing, as `(argument, message)`;
    /// they win over `argument_messages` for that case.
    pub missing_argument_messages: Vec<(String, String)>,
    /// Optional arguments for which an explicit `null` means "absent" (a reference quirk kept for
    /// compatibility, e.g. gitread's `path`).
    pub null_means_absent: Vec<String>,
}

impl Tool {
    /// A tool with the given name, description and input schema that **may change data**: it
    /// declares MCP's defaults ([`Annotations::MCP_DEFAULTS`]), so the governance asks for an
    /// approval under `prompt` and refuses it under `read-only`. A tool that only reads says so
    /// with [`Tool::read_only`]; one that changes data in a narrower way with
    /// [`Tool::annotations`]. Forgetting either errs on the side of asking.
    pub fn new(name: &str, description: &str, input_schema: Value) -> Tool {
        Tool {
            name: name.to_owned(),
            title: None,
            description: description.to_owned(),
            input_schema,
            output_schema: None,
            annotations: Annotations::MCP_DEFAULTS,
            argument_messages: Vec::new(),
            missing_argument_messages: Vec::new(),
            null_means_absent: Vec::new(),
        }
    }

    /// A tool that changes nothing ([`Annotations::READ_ONLY`]): decided by the tool policy
    /// alone, in every permission mode.
    pub fn read_only(name: &str, description: &str, input_schema: Value) -> Tool {
        Tool::new(name, description, input_schema).annotations(Annotations::READ_ONLY)
    }

    pub fn title(mut self, title: &str) -> Tool {
        self.title = Some(title.to_owned());
        self
    }

    pub fn annotations(mut self, annotations: Annotations) -> Tool {
        self.annotations = annotations;
        self
    }

    pub fn output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// Uses `message` whenever argument `field` fails validation, whatever the rule.
    pub fn argument_message(mut self, field: &str, message: &str) -> Tool {
        self.argument_messages
            .push((field.to_owned(), message.to_owned()));
        self
    }

    /// Uses `message` when required argument `field` is missing.
    pub fn missing_argument_message(mut self, field: &str, message: &str) -> Tool {
        self.missing_argument_messages
            .push((field.to_owned(), message.to_owned()));
        self
    }

    /// Treats `"field": null` as if the key were absent.
    pub fn null_means_absent(mut self, field: &str) -> Tool {
        self.null_means_absent.push(field.to_owned());
        self
    }
}

impl Declared for Tool {
    fn declared_name(&self) -> &str {
        &self.name
    }
    fn declared_annotations(&self) -> Annotations {
        self.annotations
    }
}

/// What a successful call returns.
#[derive(Clone, Debug)]
pub enum ToolOutput {
    /// A JSON value: sent as one text block holding its pretty, sorted, ASCII-only serialisation (the
    /// reference's form), and as `structuredContent` where the negotiated revision has it and the
    /// value is an object.
    Value(Value),
    /// Content blocks as they go on the wire (text, image, audio, resource...), with optional
    /// structured content. For tools whose output is not one JSON value.
    Content {
        content: Vec<Value>,
        structured: Option<Value>,
    },
}

/// A tool's own failure: sent as an `isError` result whose text is `message`, unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError {
            message: message.into(),
        }
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

/// A set of tools served together under one server name. Implemented by each server; called by
/// the engine from any thread (hence `Send + Sync`), possibly for several calls at once over HTTP.
pub trait ToolSet: Send + Sync {
    /// `serverInfo.name`, e.g. `agentteams-gitread`.
    fn server_name(&self) -> &str;

    /// `serverInfo.title` (advertised from revision 2025-06-18).
    fn server_title(&self) -> Option<&str> {
        None
    }

    /// A short usage note for the `instructions` field of the initialize result.
    fn instructions(&self) -> Option<&str> {
        None
    }

    /// The tools, in the order `tools/list` shows them. Called once when the engine is built.
    fn tools(&self) -> Vec<Tool>;

    /// Runs tool `name` with `arguments`, which the engine has already validated against the
    /// tool's `inputSchema`. Long-running work should check `ctx.is_cancelled()`.
    fn call(
        &self,
        name: &str,
        arguments: &Map,
        ctx: &CallContext<'_>,
    ) -> Result<ToolOutput, ToolError>;

    /// The server's resources, if it has any: the engine then advertises `resources` (and
    /// `completions` for their templates). None by default, so a tools-only server compiles as is.
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        None
    }

    /// The server's prompts, if it has any: the engine then advertises `prompts` and `completions`.
    fn prompt_set(&self) -> Option<&dyn PromptSet> {
        None
    }
}
