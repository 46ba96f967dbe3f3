//! JSON-RPC 2.0 message classification, error codes and reply builders.
//!
//! Turns one parsed JSON value into a [`Message`] (request, notification, response from the peer,
//! or an invalid message with the error to answer), and builds replies. Knows nothing of MCP methods;
//! the engine in [`crate::server`] does.

use crate::json::{obj, Map, Value};
use std::fmt;

/// Error codes used on the wire.
pub mod code {
    /// Invalid JSON, an over-long stdio line, invalid UTF-8, nesting past the limit.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a JSON-RPC request object; batch not allowed; lifecycle violations.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method, or a method behind a capability the server does not advertise.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad params: not an object, unknown tool, bad arguments type, bad cursor or log level.
    pub const INVALID_PARAMS: i64 = -32602;
    /// An unexpected failure inside the server while handling one request.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A call refused by the operator's tool policy.
    pub const POLICY_DENIED: i64 = -32001;
    /// 2026-07-28: a required HTTP header is missing or disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request lacks a client capability the server requires.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the request's protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object: code, message and optional data.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    pub fn invalid_request(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_REQUEST, message)
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    /// `unknown method <repr>`, the reference's wording.
    pub fn unknown_method(method: &Value) -> RpcError {
        RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("unknown method {}", py_repr(method)),
        )
    }

    /// The error object as it goes on the wire.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("code", Value::from(self.code));
        m.insert("message", Value::from(self.message.as_str()));
        if let Some(data) = &self.data {
            m.insert("data", data.clone());
        }
        Value::Object(m)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// One classified incoming message.
#[derive(Debug)]
pub enum Message {
    /// A request: it must be answered, with `id` echoed.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// A notification: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response from the peer to a request this side sent: its `result` (`Ok`) or its `error`
    /// object (`Err`, as sent).
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
    /// Not a valid JSON-RPC message: answer `error`, echoing `id` when it could be read.
    Invalid { id: Option<Value>, error: RpcError },
}

/// Whether `id` is one a request may carry (JSON-RPC and MCP: a string or a number).
pub fn is_valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

/// Classifies one parsed JSON value (not an array: batches are split by the caller).
pub fn classify(message: Value) -> Message {
    let Value::Object(mut m) = message else {
        return Message::Invalid {
            id: None,
            error: RpcError::invalid_request(
                "invalid request: a JSON-RPC message must be an object",
            ),
        };
    };
    let id = m.remove("id");
    let has_id = id.is_some();
    let echo_id = id.filter(is_valid_id);
    match m.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => {
            return Message::Invalid {
                id: echo_id,
                error: RpcError::invalid_request("invalid request: \"jsonrpc\" must be \"2.0\""),
            }
        }
    }
    let params = m.remove("params");
    match m.remove("method") {
        Some(Value::String(method)) => match (has_id, echo_id) {
            (false, _) => Message::Notification {
                method: method.into_string(),
                params,
            },
            (true, Some(id)) => Message::Request {
                id,
                method: method.into_string(),
                params,
            },
            (true, None) => Message::Invalid {
                id: None,
                error: RpcError::invalid_request("id must be a string or number"),
            },
        },
        Some(other) if !m.contains_key("result") && !m.contains_key("error") => Message::Invalid {
            id: echo_id,
            error: RpcError::invalid_request(format!(
                "invalid request: \"method\" must be a string, not {}",
                other.type_name()
            )),
        },
        None if !m.contains_key("result") && !m.contains_key("error") => Message::Invalid {
            id: echo_id,
            error: RpcError::invalid_request("invalid request: \"method\" is missing"),
        },
        _ => match echo_id {
            Some(id) => Message::Response {
                id,
                outcome: match m.remove("result") {
                    Some(result) => Ok(result),
                    None => Err(m.remove("error").unwrap_or_default()),
                },
            },
            None => Message::Invalid {
                id: None,
                error: RpcError::invalid_request("invalid request: a response needs a valid id"),
            },
        },
    }
}

/// True when [`classify`] would call `message` a request (it must be answered), without consuming
/// it: transports that map replies to status codes (HTTP) need to know before dispatching.
pub fn is_request(message: &Value) -> bool {
    message.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && message.get("method").and_then(Value::as_str).is_some()
        && message.get("id").is_some_and(is_valid_id)
}

/// `{"jsonrpc": "2.0", "id": id, "result": result}`.
pub fn result_reply(id: Value, result: Value) -> Value {
    obj([
        ("jsonrpc", Value::from("2.0")),
        ("id", id),
        ("result", result),
    ])
}

/// An error reply. `id` is `None` when the request's id could not be read: it is then written as
/// `null`, or left out when `omit_unknown_id` (revisions from 2025-11-25 make it optional and not
/// nullable).
pub fn error_reply(id: Option<Value>, error: &RpcError, omit_unknown_id: bool) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc", Value::from("2.0"));
    match id {
        Some(id) => m.insert("id", id),
        None if !omit_unknown_id => m.insert("id", Value::Null),
        None => {}
    }
    m.insert("error", error.to_value());
    Value::Object(m)
}

/// A notification message.
pub fn notification(method: &str, params: Value) -> Value {
    obj([
        ("jsonrpc", Value::from("2.0")),
        ("method", Value::from(method)),
        ("params", params),
    ])
}

/// Python's `repr()` of a JSON value, as the reference embeds it in messages (`unknown tool 'x'`).
/// Exact for strings, null, booleans and numbers; lists and dicts print as Python literals.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    repr_into(value, &mut out, 0);
    out
}

/// Nesting beyond this prints as `...`: messages stay short and the walk stays shallow.
const REPR_MAX_DEPTH: usize = 8;

fn repr_into(value: &Value, out: &mut String, depth: usize) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) if n.is_float() => crate::json::write_python_float(n.as_f64(), out),
        Value::Number(_) => out.push_str(&crate::json::to_string(value)),
        Value::String(s) => py_repr_str(s, out),
        Value::Array(_) | Value::Object(_) if depth >= REPR_MAX_DEPTH => out.push_str("..."),
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(v, out, depth + 1);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr_str(k, out);
                out.push_str(": ");
                repr_into(v, out, depth + 1);
            }
            out.push('}');
        }
    }
}

/// Whether CPython's `str.isprintable()` would call `c` printable. Best effort without Unicode
/// tables: control, format, separator (other than space), surrogate and private-use ranges that
/// matter in practice are treated as non-printable.
fn py_printable(c: char) -> bool {
    let u = c as u32;
    !matches!(u,
        0x00..=0x1F | 0x7F..=0xA0 | 0xAD | 0x34F | 0x61C | 0x115F..=0x1160 | 0x180E
        | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F | 0x3000 | 0x3164
        | 0xD800..=0xF8FF | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0xFFFE..=0xFFFF
        | 0xE0000..=0xE0FFF | 0xF0000..=0x10FFFF)
}

fn py_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn classify_str(s: &str) -> Message {
        classify(parse(s.as_bytes()).unwrap())
    }

    fn invalid(s: &str) -> (Option<String>, i64, String) {
        match classify_str(s) {
            Message::Invalid { id, error } => (
                id.map(|i| crate::json::to_string(&i)),
                error.code,
                error.message,
            ),
            other => panic!("{s} classified as {other:?}"),
        }
    }

    #[test]
    fn classification_follows_the_product_table() {
        assert!(matches!(
            classify_str(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Message::Request { .. }
        ));
        assert!(matches!(
            classify_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Message::Notification { .. }
        ));
        assert!(matches!(
            classify_str(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Message::Response { .. }
        ));
        let cases: &[(&str, Option<&str>, &str)] = &[
            (
                "[1]",
                None,
                "invalid request: a JSON-RPC message must be an object",
            ),
            (
                "5",
                None,
                "invalid request: a JSON-RPC message must be an object",
            ),
            (
                r#"{"id":1,"method":"ping"}"#,
                Some("1"),
                "invalid request: \"jsonrpc\" must be \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                Some("1"),
                "invalid request: \"jsonrpc\" must be \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                None,
                "id must be a string or number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                None,
                "id must be a string or number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
                None,
                "id must be a string or number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
                Some("7"),
                "invalid request: \"method\" must be a string, not integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7}"#,
                Some("7"),
                "invalid request: \"method\" is missing",
            ),
        ];
        for &(input, id, message) in cases {
            assert_eq!(
                invalid(input),
                (
                    id.map(str::to_string),
                    code::INVALID_REQUEST,
                    message.to_string()
                ),
                "{input}"
            );
        }
    }

    #[test]
    fn ids_are_echoed_with_their_exact_json_text() {
        for id in ["12345678901234567890", "1.5", "-3", "\"x\"", "0"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let Message::Request { id: got, .. } = classify_str(&msg) else {
                panic!("{msg}")
            };
            assert_eq!(
                crate::json::to_string(&result_reply(got, Value::Null)),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#)
            );
        }
    }

    #[test]
    fn error_reply_writes_or_omits_an_unknown_id() {
        let e = RpcError::new(code::PARSE_ERROR, "parse error (or line over 1 MiB)");
        assert_eq!(
            crate::json::to_string(&error_reply(None, &e, false)),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error (or line over 1 MiB)"}}"#
        );
        assert_eq!(
            crate::json::to_string(&error_reply(None, &e, true)),
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error (or line over 1 MiB)"}}"#
        );
    }

    #[test]
    fn python_repr_matches_cpython() {
        let cases: &[(&str, &str)] = &[
            ("null", "None"),
            ("true", "True"),
            ("false", "False"),
            ("42", "42"),
            ("-7", "-7"),
            ("1.5", "1.5"),
            ("1e-5", "1e-05"),
            (r#""git_log""#, "'git_log'"),
            (r#""it's""#, "\"it's\""),
            (r#""it's \"x\"""#, "'it\\'s \"x\"'"),
            (r#""a\\b\n\t\r""#, "'a\\\\b\\n\\t\\r'"),
            (
                r#""\u0001\u007f\u00a0\u00e9\u200b\ud83d\ude00""#,
                "'\\x01\\x7f\\xa0\u{e9}\\u200b\u{1F600}'",
            ),
            (r#"[1, "a", null]"#, "[1, 'a', None]"),
            (r#"{"a": [true]}"#, "{'a': [True]}"),
        ];
        for &(json, want) in cases {
            assert_eq!(py_repr(&parse(json.as_bytes()).unwrap()), want, "{json}");
        }
    }
}
