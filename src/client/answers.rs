//! How this client answers the requests a server sends it mid-call: `ping`, `elicitation/create`
//! (form mode: accept, filling each field from the values the operator gave, else from the schema's
//! `default`), `roots/list` (the operator's roots); `sampling/createMessage` and anything else are
//! refused with a clear error (this client has no model to ask).
//!
//! The same answers serve the 2026-07-28 era, where a call that needs them ends with an
//! `input_required` result and the client retries it with `inputResponses` ([`Answers::answer`]).
//!
//! The client declares exactly what it answers: `elicitation` when [`Answers::elicitation`] is
//! set, `roots` when [`Answers::roots`] is not empty.

use crate::json::{obj, Map, Value};
use crate::jsonrpc::{self, code, RpcError};

/// Most fields of a form this client fills; a larger form is refused (-32602).
pub const MAX_ELICITATION_FIELDS: usize = 64;

/// What the operator configured the client to answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answers {
    /// `Some`: answer form-mode elicitations by accepting, with these `(field, value)` pairs
    /// (coerced to the field's declared type) over the schema's defaults. `None`: elicitation is
    /// not declared and its requests are refused.
    pub elicitation: Option<Vec<(String, String)>>,
    /// The root URIs (`file:///...`) `roots/list` returns; empty: roots are not declared.
    pub roots: Vec<String>,
}

impl Answers {
    /// The client capabilities these answers declare (`initialize` and the 2026-07-28 `_meta`).
    pub fn capabilities(&self) -> Value {
        let mut m = Map::new();
        if self.elicitation.is_some() {
            m.insert("elicitation", Value::Object(Map::new()));
        }
        if !self.roots.is_empty() {
            m.insert("roots", obj([("listChanged", Value::from(false))]));
        }
        Value::Object(m)
    }

    /// The response to request `id` (`method`, `params`) from the server.
    pub fn reply(&self, id: Value, method: &str, params: &Value) -> Value {
        match self.answer(method, params) {
            Ok(result) => jsonrpc::result_reply(id, result),
            Err(error) => jsonrpc::error_reply(Some(id), &error, false),
        }
    }

    /// The result this client gives to `method` (`params`), or the error it refuses it with: a
    /// legacy server request's answer ([`Answers::reply`]) and a 2026-07-28 input request's.
    pub fn answer(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "ping" => Ok(Value::Object(Map::new())),
            "elicitation/create" => self.elicit(params),
            "roots/list" if !self.roots.is_empty() => {
                let roots: Vec<Value> = (self.roots.iter())
                    .map(|uri| obj([("uri", Value::from(uri.as_str()))]))
                    .collect();
                Ok(obj([("roots", Value::from(roots))]))
            }
            "sampling/createMessage" => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                "this client has no model to sample from (sampling is not supported)",
            )),
            other => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("this client does not support {other}"),
            )),
        }
    }

    /// Accepts a form-mode elicitation with the configured values over the schema's defaults;
    /// declines when a required field has neither.
    fn elicit(&self, params: &Value) -> Result<Value, RpcError> {
        let Some(given) = &self.elicitation else {
            return Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                "this client was not configured to answer elicitation (--answer or --answer-defaults)",
            ));
        };
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            return Err(RpcError::invalid_params(
                "this client answers form-mode elicitation only",
            ));
        }
        let schema = params.get("requestedSchema");
        let empty = Map::new();
        let properties = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if properties.len() > MAX_ELICITATION_FIELDS {
            return Err(RpcError::invalid_params(format!(
                "a form of more than {MAX_ELICITATION_FIELDS} fields is not answered"
            )));
        }
        let mut content = Map::new();
        for (field, property) in properties.iter() {
            let value = match given.iter().find(|(k, _)| k == field.as_ref() as &str) {
                Some((_, text)) => Some(coerce(property, text)),
                None => property.get("default").cloned(),
            };
            if let Some(value) = value {
                content.insert(field.to_string(), value);
            }
        }
        let required = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array);
        let missing = required.is_some_and(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .any(|f| !content.contains_key(f))
        });
        if missing {
            return Ok(obj([("action", Value::from("decline"))]));
        }
        Ok(obj([
            ("action", Value::from("accept")),
            ("content", Value::Object(content)),
        ]))
    }
}

/// `text` as the field's declared type: a number, an integer or a boolean when it parses as one,
/// else the string itself (the server validates what it gets).
fn coerce(property: &Value, text: &str) -> Value {
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => text.parse::<i64>().map_or(Value::from(text), Value::from),
        Some("number") => text.parse::<f64>().map_or(Value::from(text), Value::from),
        Some("boolean") => match text {
            "true" => Value::from(true),
            "false" => Value::from(false),
            _ => Value::from(text),
        },
        _ => Value::from(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    fn reply(answers: &Answers, method: &str, params: &str) -> String {
        to_string(&answers.reply(
            Value::from("srv-1"),
            method,
            &parse(params.as_bytes()).unwrap(),
        ))
    }

    const FORM: &str = r#"{"message":"m","requestedSchema":{"type":"object","properties":{
        "name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},
        "score":{"type":"number","default":95.5},"verified":{"type":"boolean","default":true},
        "email":{"type":"string"}},"required":["name"]}}"#;

    #[test]
    fn forms_are_filled_from_defaults_and_given_values() {
        let answers = Answers {
            elicitation: Some(vec![
                ("age".into(), "41".into()),
                ("verified".into(), "false".into()),
                ("unknown".into(), "x".into()),
            ]),
            roots: Vec::new(),
        };
        assert_eq!(
            reply(&answers, "elicitation/create", FORM),
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{"action":"accept","content":{"name":"John Doe","age":41,"score":95.5,"verified":false}}}"#
        );
        let strict = FORM.replace(r#""required":["name"]"#, r#""required":["email"]"#);
        assert!(reply(&answers, "elicitation/create", &strict).contains(r#""action":"decline""#));
        assert!(reply(
            &answers,
            "elicitation/create",
            r#"{"mode":"url","url":"https://x"}"#
        )
        .contains("-32602"));
    }

    #[test]
    fn only_what_is_configured_is_declared_and_answered() {
        let none = Answers::default();
        assert_eq!(to_string(&none.capabilities()), "{}");
        assert!(reply(&none, "elicitation/create", FORM).contains("-32601"));
        assert!(reply(&none, "roots/list", "{}").contains("-32601"));
        assert!(reply(&none, "sampling/createMessage", "{}").contains("no model to sample from"));
        assert_eq!(
            reply(&none, "ping", "{}"),
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#
        );
        let some = Answers {
            elicitation: Some(Vec::new()),
            roots: vec!["file:///work".into()],
        };
        assert_eq!(
            to_string(&some.capabilities()),
            r#"{"elicitation":{},"roots":{"listChanged":false}}"#
        );
        assert_eq!(
            reply(&some, "roots/list", "{}"),
            r#"{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file:///work"}]}}"#
        );
        let many: String = (0..=MAX_ELICITATION_FIELDS)
            .map(|i| format!(r#""f{i}":{{"type":"string"}}"#))
            .collect::<Vec<_>>()
            .join(",");
        let big = format!(r#"{{"requestedSchema":{{"properties":{{{many}}}}}}}"#);
        assert!(reply(&some, "elicitation/create", &big).contains("-32602"));
    }
}
