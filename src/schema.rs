//! Validates a JSON value against the JSON Schema subset tools declare for their arguments.
//!
//! One validator serves every tool, so a tool's advertised `inputSchema` and the checks its
//! arguments get cannot drift apart. Supported keywords: `type` (a name or a list; `integer` means a
//! number token without fraction or exponent, as the reference reads it), `enum`, `const`,
//! `required`, `properties`, `additionalProperties` (boolean or schema), `items`, `minimum`,
//! `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`/`maxLength` (in code points),
//! `minItems`/`maxItems`. Other keywords (`description`, `title`, `default`, `$schema`, ...) are
//! annotations and ignored. Not a general JSON Schema implementation: no `$ref`, `oneOf`,
//! `pattern` or formats.
//!
//! The walk uses an explicit stack, and the first failure wins in document order.

use crate::json::{to_string, Value};
use std::fmt;

/// Why a value failed its schema: the path of the offending value and the rule it broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// Path from the root: `n`, `items[2].name`; empty for the root itself.
    pub path: String,
    /// The first segment of `path` (the top-level argument), or empty.
    pub field: String,
    /// The rule broken, e.g. `must be an integer`.
    pub rule: String,
    /// Whether the failure is a required member that is missing.
    pub missing: bool,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = if self.path.is_empty() {
            "arguments"
        } else {
            &self.path
        };
        write!(f, "{subject} {}", self.rule)
    }
}

impl std::error::Error for SchemaError {}

fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn number_text(v: &Value) -> String {
    to_string(v)
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "integer" => value.type_name() == "integer",
        "number" => matches!(value, Value::Number(_)),
        other => value.type_name() == other,
    }
}

fn describe_types(types: &[&str]) -> String {
    let with_article: Vec<String> = types
        .iter()
        .map(|t| match *t {
            "integer" | "array" | "object" => format!("an {t}"),
            "null" => "null".to_string(),
            t => format!("a {t}"),
        })
        .collect();
    with_article.join(" or ")
}

/// Validates `value` against `schema`. A schema that is `true`, `{}` or not an object accepts
/// everything; `false` rejects everything.
pub fn validate(schema: &Value, value: &Value) -> Result<(), SchemaError> {
    let mut work: Vec<(&Value, &Value, String)> = vec![(schema, value, String::new())];
    while let Some((schema, value, path)) = work.pop() {
        let fail = |rule: String, missing: bool, path: String| {
            let field = path.split(['.', '[']).next().unwrap_or_default().to_owned();
            Err(SchemaError {
                path,
                field,
                rule,
                missing,
            })
        };
        let schema = match schema {
            Value::Bool(false) => return fail("is not allowed".into(), false, path),
            Value::Object(m) => m,
            _ => continue,
        };
        if let Some(t) = schema.get("type") {
            let types: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
                return fail(
                    format!(
                        "must be {} (got {})",
                        describe_types(&types),
                        value.type_name()
                    ),
                    false,
                    path,
                );
            }
        }
        if let Some(c) = schema.get("const") {
            if c != value {
                return fail(format!("must be {}", to_string(c)), false, path);
            }
        }
        if let Some(Value::Array(choices)) = schema.get("enum") {
            if !choices.iter().any(|c| c == value) {
                let list: Vec<String> = choices.iter().map(to_string).collect();
                return fail(format!("must be one of {}", list.join(", ")), false, path);
            }
        }
        match value {
            Value::Number(n) => {
                let x = n.as_f64();
                let bound = |key: &str| schema.get(key).filter(|b| b.as_f64().is_some());
                if let Some(b) = bound("minimum") {
                    if x < b.as_f64().unwrap_or(f64::NAN) {
                        return fail(format!("must be at least {}", number_text(b)), false, path);
                    }
                }
                if let Some(b) = bound("maximum") {
                    if x > b.as_f64().unwrap_or(f64::NAN) {
                        return fail(format!("must be at most {}", number_text(b)), false, path);
                    }
                }
                if let Some(b) = bound("exclusiveMinimum") {
                    if x <= b.as_f64().unwrap_or(f64::NAN) {
                        return fail(
                            format!("must be greater than {}", number_text(b)),
                            false,
                            path,
                        );
                    }
                }
                if let Some(b) = bound("exclusiveMaximum") {
                    if x >= b.as_f64().unwrap_or(f64::NAN) {
                        return fail(format!("must be less than {}", number_text(b)), false, path);
                    }
                }
            }
            Value::String(s) => {
                let chars = || s.chars().count();
                if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
                    if (chars() as u64) < min {
                        return fail(
                            format!("must be at least {min} characters long"),
                            false,
                            path,
                        );
                    }
                }
                if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                    if (chars() as u64) > max {
                        return fail(
                            format!("must be at most {max} characters long"),
                            false,
                            path,
                        );
                    }
                }
            }
            Value::Array(items) => {
                if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
                    if (items.len() as u64) < min {
                        return fail(format!("must have at least {min} items"), false, path);
                    }
                }
                if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
                    if (items.len() as u64) > max {
                        return fail(format!("must have at most {max} items"), false, path);
                    }
                }
                if let Some(item_schema) = schema.get("items") {
                    // Pushed in reverse so the first item is checked first.
                    for (i, item) in items.iter().enumerate().rev() {
                        work.push((item_schema, item, format!("{path}[{i}]")));
                    }
                }
            }
            Value::Object(members) => {
                if let Some(Value::Array(required)) = schema.get("required") {
                    for name in required.iter().filter_map(Value::as_str) {
                        if !members.contains_key(name) {
                            return fail("is required".into(), true, child_path(&path, name));
                        }
                    }
                }
                let properties = schema.get("properties").and_then(Value::as_object);
                let additional = schema.get("additionalProperties");
                let mut children = Vec::new();
                for (key, member) in members.iter() {
                    match properties.and_then(|p| p.get(key)) {
                        Some(member_schema) => children.push((member_schema, member, key)),
                        None => match additional {
                            Some(Value::Bool(false)) => {
                                return fail(
                                    "is not an accepted argument (additionalProperties is false)"
                                        .into(),
                                    false,
                                    child_path(&path, key),
                                )
                            }
                            Some(extra @ Value::Object(_)) => children.push((extra, member, key)),
                            _ => {}
                        },
                    }
                }
                for (member_schema, member, key) in children.into_iter().rev() {
                    work.push((member_schema, member, child_path(&path, key)));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn check(schema: &str, value: &str) -> Result<(), String> {
        validate(
            &parse(schema.as_bytes()).unwrap(),
            &parse(value.as_bytes()).unwrap(),
        )
        .map_err(|e| e.to_string())
    }

    const RECALL: &str = r#"{"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 500},
        "k": {"type": "integer", "minimum": 1, "maximum": 20},
        "kind": {"type": "string", "enum": ["all", "local", "api", "doc"]}}}"#;

    #[test]
    fn messages_name_the_field_and_the_rule() {
        let cases: &[(&str, Result<(), &str>)] = &[
            (r#"{"query": "x"}"#, Ok(())),
            (
                r#"{"query": "x", "k": 20, "kind": "api", "extra": 1}"#,
                Ok(()),
            ),
            (r#"{}"#, Err("query is required")),
            (
                r#"{"query": 5}"#,
                Err("query must be a string (got integer)"),
            ),
            (
                r#"{"query": ""}"#,
                Err("query must be at least 1 characters long"),
            ),
            (r#"{"query": "x", "k": 0}"#, Err("k must be at least 1")),
            (r#"{"query": "x", "k": 21}"#, Err("k must be at most 20")),
            (
                r#"{"query": "x", "k": 5.0}"#,
                Err("k must be an integer (got number)"),
            ),
            (
                r#"{"query": "x", "k": true}"#,
                Err("k must be an integer (got boolean)"),
            ),
            (
                r#"{"query": "x", "k": null}"#,
                Err("k must be an integer (got null)"),
            ),
            (
                r#"{"query": "x", "kind": "all "}"#,
                Err(r#"kind must be one of "all", "local", "api", "doc""#),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(
                check(RECALL, value),
                want.map_err(str::to_string),
                "{value}"
            );
        }
        let long = format!(r#"{{"query": "{}"}}"#, "\u{e9}".repeat(500));
        assert_eq!(check(RECALL, &long), Ok(()));
        let long = format!(r#"{{"query": "{}"}}"#, "\u{e9}".repeat(501));
        assert_eq!(
            check(RECALL, &long),
            Err("query must be at most 500 characters long".into())
        );
    }

    #[test]
    fn nested_values_and_additional_properties() {
        let schema = r#"{"type": "object", "additionalProperties": false,
            "properties": {"items": {"type": "array", "maxItems": 3,
                "items": {"type": "object", "required": ["name"],
                          "properties": {"name": {"type": ["string", "null"]}}}}}}"#;
        assert_eq!(check(schema, r#"{"items": [{"name": null}]}"#), Ok(()));
        assert_eq!(
            check(schema, r#"{"items": [{"name": "a"}, {}]}"#),
            Err("items[1].name is required".into())
        );
        assert_eq!(
            check(schema, r#"{"items": [{"name": 1}]}"#),
            Err("items[0].name must be a string or null (got integer)".into())
        );
        assert_eq!(
            check(schema, r#"{"other": 1}"#),
            Err("other is not an accepted argument (additionalProperties is false)".into())
        );
        assert_eq!(
            check(
                schema,
                r#"{"items": [{"name":"a"},{"name":"a"},{"name":"a"},{"name":"a"}]}"#
            ),
            Err("items must have at most 3 items".into())
        );
        assert_eq!(check(r#"{"const": 3}"#, "3"), Ok(()));
        assert_eq!(
            check(r#"{"const": 3}"#, "4"),
            Err("arguments must be 3".into())
        );
        assert_eq!(
            check(r#"{"exclusiveMinimum": 0}"#, "0"),
            Err("arguments must be greater than 0".into())
        );
    }

    #[test]
    fn error_carries_the_top_level_field() {
        let e = validate(
            &parse(br#"{"properties": {"a": {"properties": {"b": {"type": "string"}}}}}"#).unwrap(),
            &parse(br#"{"a": {"b": 1}}"#).unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.field.as_str(), e.missing),
            ("a.b", "a", false)
        );
    }
}
