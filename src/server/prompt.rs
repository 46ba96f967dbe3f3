//! What a server declares to offer prompts: [`PromptSet`], [`Prompt`], [`PromptArgument`],
//! [`PromptMessage`].
//!
//! A server with prompts returns its set from [`ToolSet::prompt_set`](super::ToolSet::prompt_set);
//! the engine advertises the `prompts` capability, lists and pages the prompts, checks every
//! `prompts/get` (known prompt, declared arguments only, every required one present, strings
//! within [`MAX_PROMPT_ARGUMENT_BYTES`]), applies the governance and the audit log, and only then
//! calls [`PromptSet::get`].
//!
//! ```
//! use agentteams_mcp::server::*;
//!
//! struct Review;
//! impl PromptSet for Review {
//!     fn prompts(&self) -> Vec<Prompt> {
//!         vec![Prompt::new("review", "Review a change.").argument(PromptArgument::required("rev", "The revision."))]
//!     }
//!     fn get(&self, _: &str, arguments: &[(String, String)], _: &CallContext<'_>) -> Result<PromptOutput, RequestError> {
//!         let rev = &arguments[0].1; // the engine checked it is there
//!         Ok(PromptOutput::new(vec![PromptMessage::text(Role::User, &format!("Review {rev}."))]))
//!     }
//! }
//! ```

use super::context::CallContext;
use super::error::RequestError;
use super::resource::ResourceContents;
use crate::declared::{Annotations, Declared};
use crate::json::{obj, Map, Value};

/// Longest value of one prompt argument, in bytes.
pub const MAX_PROMPT_ARGUMENT_BYTES: usize = 65536;
/// Most arguments one `prompts/get` may carry.
pub const MAX_PROMPT_ARGUMENTS: usize = 64;

/// One argument a prompt takes.
#[derive(Clone, Debug)]
pub struct PromptArgument {
    pub name: String,
    /// Advertised from revision 2025-06-18.
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

impl PromptArgument {
    pub fn required(name: &str, description: &str) -> PromptArgument {
        PromptArgument {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            required: true,
        }
    }
    pub fn optional(name: &str, description: &str) -> PromptArgument {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name, description)
        }
    }
}

/// One prompt as a server declares it (`prompts/list`).
#[derive(Clone, Debug)]
pub struct Prompt {
    /// What clients ask for and the governance's rules match.
    pub name: String,
    /// Advertised from revision 2025-06-18.
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
    /// The tools whose reads this prompt embeds (gitread's `explain_commit` reads what `git_show`
    /// shows): the prompt is hidden and refused whenever a decision (policy, governance, OAuth
    /// scopes) refuses any of them, so a prompt is never a way around a rule on a tool. Never
    /// advertised.
    pub reads_through: Vec<String>,
}

impl Prompt {
    pub fn new(name: &str, description: &str) -> Prompt {
        Prompt {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            arguments: Vec::new(),
            reads_through: Vec::new(),
        }
    }
    /// Declares that the prompt embeds what `tool` would read (see [`Prompt::reads_through`]).
    pub fn reads_through(mut self, tool: &str) -> Prompt {
        self.reads_through.push(tool.to_owned());
        self
    }
    pub fn title(mut self, title: &str) -> Prompt {
        self.title = Some(title.to_owned());
        self
    }
    pub fn argument(mut self, argument: PromptArgument) -> Prompt {
        self.arguments.push(argument);
        self
    }
}

/// Getting a prompt changes nothing: only deny rules and allowlists decide.
impl Declared for Prompt {
    fn declared_name(&self) -> &str {
        &self.name
    }
    fn declared_annotations(&self) -> Annotations {
        Annotations::READ_ONLY
    }
    fn declared_reads_through(&self) -> &[String] {
        &self.reads_through
    }
}

/// Who speaks a prompt message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message of a prompt: a role and one content block as the protocol carries it.
#[derive(Clone, Debug)]
pub struct PromptMessage {
    pub role: Role,
    pub content: Value,
}

impl PromptMessage {
    pub fn text(role: Role, text: &str) -> PromptMessage {
        PromptMessage {
            role,
            content: obj([("type", Value::from("text")), ("text", Value::from(text))]),
        }
    }

    /// An image, given as Base64 data and its MIME type.
    pub fn image(role: Role, base64_data: &str, mime_type: &str) -> PromptMessage {
        PromptMessage {
            role,
            content: obj([
                ("type", Value::from("image")),
                ("data", Value::from(base64_data)),
                ("mimeType", Value::from(mime_type)),
            ]),
        }
    }

    /// A resource embedded in the message.
    pub fn resource(role: Role, contents: &ResourceContents) -> PromptMessage {
        PromptMessage {
            role,
            content: obj([
                ("type", Value::from("resource")),
                ("resource", contents.to_value()),
            ]),
        }
    }

    fn to_value(&self) -> Value {
        obj([
            ("role", Value::from(self.role.as_str())),
            ("content", self.content.clone()),
        ])
    }
}

/// What [`PromptSet::get`] returns.
#[derive(Clone, Debug)]
pub struct PromptOutput {
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

impl PromptOutput {
    pub fn new(messages: Vec<PromptMessage>) -> PromptOutput {
        PromptOutput {
            description: None,
            messages,
        }
    }
    pub fn description(mut self, description: &str) -> PromptOutput {
        self.description = Some(description.to_owned());
        self
    }

    /// The `prompts/get` result.
    pub(super) fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(2);
        if let Some(d) = &self.description {
            m.insert("description", Value::from(d.as_str()));
        }
        let messages: Vec<Value> = self.messages.iter().map(PromptMessage::to_value).collect();
        m.insert("messages", Value::from(messages));
        Value::Object(m)
    }
}

/// The prompts a server offers. Called by the engine from any thread.
pub trait PromptSet: Send + Sync {
    /// The prompts, in the order `prompts/list` pages them. Called on every listing and lookup.
    fn prompts(&self) -> Vec<Prompt>;

    /// Builds prompt `name` from `arguments` (declared names only, every required one present, in
    /// the client's order), which the engine has checked.
    fn get(
        &self,
        name: &str,
        arguments: &[(String, String)],
        ctx: &CallContext<'_>,
    ) -> Result<PromptOutput, RequestError>;

    /// Values for argument `argument` of `prompt` starting from `value`, best first
    /// (`completion/complete`); `context` holds the prompt's other arguments the client already
    /// chose. The engine keeps the first 100.
    fn complete(
        &self,
        prompt: &Prompt,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Vec<String> {
        let _ = (prompt, argument, value, context);
        Vec::new()
    }
}

/// Checks `prompts/get` arguments against `prompt`: an object of strings, declared names only,
/// every required one present. Returns them as pairs in the client's order.
pub(super) fn check_arguments(
    prompt: &Prompt,
    arguments: Option<&Value>,
) -> Result<Vec<(String, String)>, String> {
    let empty = Map::new();
    let map = match arguments {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("prompt arguments must be an object of strings".to_owned()),
    };
    if map.len() > MAX_PROMPT_ARGUMENTS {
        return Err(format!(
            "a prompt takes at most {MAX_PROMPT_ARGUMENTS} arguments"
        ));
    }
    let mut out = Vec::with_capacity(map.len());
    for (key, value) in map.iter() {
        if !prompt.arguments.iter().any(|a| a.name == *key) {
            return Err(format!(
                "prompt {:?} has no argument {}",
                prompt.name,
                super::uri::quote(key)
            ));
        }
        let Value::String(text) = value else {
            return Err(format!("prompt argument {key:?} must be a string"));
        };
        if text.len() > MAX_PROMPT_ARGUMENT_BYTES {
            return Err(format!(
                "prompt argument {key:?} is longer than {MAX_PROMPT_ARGUMENT_BYTES} bytes"
            ));
        }
        out.push((key.to_string(), text.to_string()));
    }
    if let Some(missing) = prompt
        .arguments
        .iter()
        .find(|a| a.required && !map.contains_key(&a.name))
    {
        return Err(format!(
            "missing required argument {:?} of prompt {:?}",
            missing.name, prompt.name
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn prompt() -> Prompt {
        Prompt::new("p", "d")
            .argument(PromptArgument::required("a", "A"))
            .argument(PromptArgument::optional("b", "B"))
    }

    #[test]
    fn arguments_are_checked() {
        let check = |text: &str| check_arguments(&prompt(), Some(&parse(text.as_bytes()).unwrap()));
        assert_eq!(
            check(r#"{"b":"2","a":"1"}"#).unwrap(),
            vec![("b".into(), "2".into()), ("a".into(), "1".into())]
        );
        assert!(check(r#"{"b":"2"}"#)
            .unwrap_err()
            .contains("missing required argument \"a\""));
        assert!(check(r#"{"a":"1","c":"3"}"#)
            .unwrap_err()
            .contains("no argument"));
        assert!(check(r#"{"a":1}"#)
            .unwrap_err()
            .contains("must be a string"));
        assert!(check(r#"["a"]"#).is_err());
        assert!(check_arguments(&prompt(), None).is_err());
        let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(MAX_PROMPT_ARGUMENT_BYTES + 1));
        assert!(check(&long).unwrap_err().contains("longer"));
    }

    #[test]
    fn output_on_the_wire() {
        let out = PromptOutput::new(vec![
            PromptMessage::text(Role::User, "hi"),
            PromptMessage::resource(Role::Assistant, &ResourceContents::text("a:b", "body")),
        ])
        .description("d");
        assert_eq!(
            crate::json::to_string(&out.to_value()),
            r#"{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"a:b","text":"body"}}}]}"#
        );
    }
}
