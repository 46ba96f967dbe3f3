//! Validates a JSON value against the JSON Schema (2020-12 dialect) tools declare for their
//! arguments.
//!
//! One validator serves every tool, so a tool's advertised `inputSchema` and the checks its
//! arguments get cannot drift apart. JSON Schema 2020-12 is the default dialect (SEP-1613): a
//! declared `$schema` is kept verbatim in `tools/list` and read as 2020-12.
//!
//! Checked keywords: `type` (a name or a list; `integer` means a number token without fraction or
//! exponent, as the reference reads it), `enum`, `const`, `required`, `properties`,
//! `additionalProperties` (boolean or schema), `items`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `minLength`/`maxLength` (in code points), `minItems`/`maxItems`, `allOf`,
//! `anyOf`, `oneOf`, `not`, and `$ref` to a JSON Pointer inside the same schema (`#/$defs/name`,
//! `#/definitions/name`, `#`). A `$ref` anywhere else (another document, a network URL) is never
//! fetched: the value fails with an error naming the reference; so does a pointer that names
//! nothing, or a chain of more than [`MAX_REF_HOPS`] references without a step into the value
//! (a cycle).
//!
//! Annotations are ignored: `$schema`, `$id`, `$defs`/`definitions` (read only through `$ref`),
//! `$comment`, `title`, `description`, `default`, `examples`, `deprecated`, `readOnly`,
//! `writeOnly`. Accepted but **not checked** (a value they would reject passes):
//! [`UNCHECKED_KEYWORDS`] (`pattern`, `format`, `patternProperties`, `if`/`then`/`else`, ...);
//! [`unchecked_keywords`] names those a schema uses, so a server can prove its own declarations
//! are fully checked.
//!
//! The walk uses an explicit stack, and the first failure wins in document order; only the
//! combinators (`allOf`, `anyOf`, `oneOf`, `not`) recurse, each level on a value at most as deep
//! as the parser's nesting limit.

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
    /// Whether the schema itself could not be applied (a `$ref` that cannot be followed, a
    /// cycle) rather than the value breaking it: combinators pass such a failure on instead of
    /// counting it as a mismatch.
    pub unusable: bool,
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

/// Most `$ref` (or `allOf`/`anyOf`/`oneOf`/`not`) steps taken in a row on one value before the
/// schema is declared cyclic.
pub const MAX_REF_HOPS: usize = 16;

/// How a failure of the schema itself (not of the value) begins.
const UNUSABLE: &str = "cannot be checked";

/// Keywords the validator accepts in a schema but does not check.
pub const UNCHECKED_KEYWORDS: &[&str] = &[
    "pattern",
    "format",
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "$dynamicRef",
    "$anchor",
    "$dynamicAnchor",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The [`UNCHECKED_KEYWORDS`] `schema` uses anywhere a schema keyword can stand (sorted, each
/// once): what its values are not checked against. Property names, `$defs` names, `enum` and
/// `default` values are data, never keywords.
pub fn unchecked_keywords(schema: &Value) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut work = vec![schema];
    while let Some(Value::Object(m)) = work.pop() {
        for (k, child) in m.iter() {
            if let Some(kw) = UNCHECKED_KEYWORDS.iter().find(|kw| **kw == k.as_str()) {
                found.push(*kw);
            }
            match (k.as_str(), child) {
                (
                    "properties" | "$defs" | "definitions" | "patternProperties"
                    | "dependentSchemas",
                    Value::Object(named),
                ) => work.extend(named.iter().map(|(_, s)| s)),
                ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(list)) => {
                    work.extend(list.iter())
                }
                (
                    "items"
                    | "additionalProperties"
                    | "not"
                    | "if"
                    | "then"
                    | "else"
                    | "contains"
                    | "propertyNames"
                    | "unevaluatedItems"
                    | "unevaluatedProperties"
                    | "contentSchema",
                    _,
                ) => work.push(child),
                _ => {}
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// The schema a local `$ref` names in `root`: `#` or a JSON Pointer (`#/$defs/a`, with `~0`/`~1`
/// escapes). `Err` says why it cannot be followed.
fn resolve_ref<'r>(root: &'r Value, reference: &str) -> Result<&'r Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "{UNUSABLE}: $ref {} is not a reference into this schema (other documents are never fetched)",
            to_string(&Value::from(reference))
        ));
    };
    let mut at = root;
    if pointer.is_empty() {
        return Ok(at);
    }
    let names_nothing = || {
        format!(
            "{UNUSABLE}: $ref {} names nothing in this schema",
            to_string(&Value::from(reference))
        )
    };
    let Some(tokens) = pointer.strip_prefix('/') else {
        return Err(names_nothing());
    };
    for token in tokens.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(m) => m.get(&token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(names_nothing)?;
    }
    Ok(at)
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
    validate_at(schema, (schema, value), String::new(), 0)
}

/// Validates `value` (at `path`) against `schema`, a part of `root` (what `$ref` resolves in),
/// reached by `hops` `$ref` or combinator steps without a step into the value.
fn validate_at(
    root: &Value,
    (schema, value): (&Value, &Value),
    path: String,
    hops: usize,
) -> Result<(), SchemaError> {
    // Each item: a schema, the value it applies to, the value's path, and how many `$ref` or
    // combinator steps led to this schema without a step into the value (a cycle never takes one).
    let mut work: Vec<(&Value, &Value, String, usize)> = vec![(schema, value, path, hops)];
    while let Some((schema, value, path, hops)) = work.pop() {
        let fail = |rule: String, missing: bool, path: String| {
            let field = path.split(['.', '[']).next().unwrap_or_default().to_owned();
            Err(SchemaError {
                path,
                field,
                unusable: rule.starts_with(UNUSABLE),
                rule,
                missing,
            })
        };
        let schema = match schema {
            Value::Bool(false) => return fail("is not allowed".into(), false, path),
            Value::Object(m) => m,
            _ => continue,
        };
        if hops > MAX_REF_HOPS {
            return fail(
                format!("{UNUSABLE}: more than {MAX_REF_HOPS} $ref or allOf/anyOf/oneOf/not steps in a row (a cyclic schema)"),
                false,
                path,
            );
        }
        // One look for the applicators, so that a schema without any pays one pass over its keys.
        let applies = schema
            .iter()
            .any(|(k, _)| matches!(k.as_str(), "$ref" | "allOf" | "anyOf" | "oneOf" | "not"));
        if applies {
            if let Some(reference) = schema.get("$ref") {
                let Some(reference) = reference.as_str() else {
                    return fail(format!("{UNUSABLE}: $ref is not a string"), false, path);
                };
                match resolve_ref(root, reference) {
                    // Checked beside this schema's other keywords, as 2020-12 applies them.
                    Ok(target) => work.push((target, value, path.clone(), hops + 1)),
                    Err(rule) => return fail(rule, false, path),
                }
            }
            // Whether `value` matches branch `s`; a schema that cannot be applied fails the whole.
            let matches = |s: &Value| match validate_at(root, (s, value), path.clone(), hops + 1) {
                Ok(()) => Ok(true),
                Err(e) if e.unusable => Err(e),
                Err(_) => Ok(false),
            };
            if let Some(Value::Array(all)) = schema.get("allOf") {
                for s in all.iter() {
                    validate_at(root, (s, value), path.clone(), hops + 1)?;
                }
            }
            if let Some(Value::Array(any)) = schema.get("anyOf") {
                let mut any_matched = false;
                for s in any.iter() {
                    if matches(s)? {
                        any_matched = true;
                        break;
                    }
                }
                if !any_matched {
                    return fail(
                        "must match at least one of the schemas of anyOf".into(),
                        false,
                        path,
                    );
                }
            }
            if let Some(Value::Array(one)) = schema.get("oneOf") {
                let mut matched = 0;
                for s in one.iter() {
                    matched += usize::from(matches(s)?);
                }
                if matched != 1 {
                    return fail(
                        format!(
                            "must match exactly one of the schemas of oneOf (matches {matched})"
                        ),
                        false,
                        path,
                    );
                }
            }
            if let Some(not) = schema.get("not") {
                if matches(not)? {
                    return fail("must not match the schema of not".into(), false, path);
                }
            }
        }
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
                        work.push((item_schema, item, format!("{path}[{i}]"), 0));
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
                    work.push((member_schema, member, child_path(&path, key), 0));
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

    /// The conformance scenario `json-schema-2020-12`'s schema, verbatim.
    const CONFORMANCE: &str = r##"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": false}"##;

    /// Checks each value of `cases` against `schema`: `None` passes, `Some(error)` fails so.
    fn expect(schema: &str, cases: &[(&str, Option<&str>)]) {
        for (value, want) in cases {
            let want = want.map_or(Ok(()), |e| Err(e.to_owned()));
            assert_eq!(check(schema, value), want, "{value} against {schema}");
        }
    }

    #[test]
    fn refs_into_defs_are_checked_with_their_siblings() {
        expect(
            CONFORMANCE,
            &[
                (r#"{"name":"a","address":{"city":"b"}}"#, None),
                (
                    r#"{"address":{"city":5}}"#,
                    Some("address.city must be a string (got integer)"),
                ),
                (
                    r#"{"address":"x"}"#,
                    Some("address must be an object (got string)"),
                ),
                (
                    r#"{"zip":1}"#,
                    Some("zip is not an accepted argument (additionalProperties is false)"),
                ),
            ],
        );
        // draft-07's `definitions`, escaped pointer tokens, and a sibling keyword beside $ref.
        let schema = r##"{"definitions": {"a/b": {"type": "integer"}},
            "properties": {"n": {"$ref": "#/definitions/a~1b", "minimum": 3}}}"##;
        expect(
            schema,
            &[
                (r#"{"n":3}"#, None),
                (r#"{"n":2}"#, Some("n must be at least 3")),
                (r#"{"n":"3"}"#, Some("n must be an integer (got string)")),
            ],
        );
        // A recursive schema follows the value down.
        let tree = r##"{"$defs": {"node": {"type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"}"##;
        expect(
            tree,
            &[
                (r#"{"kids":[{"kids":[{}]}]}"#, None),
                (
                    r#"{"kids":[{"kids":[1]}]}"#,
                    Some("kids[0].kids[0] must be an object (got integer)"),
                ),
            ],
        );
    }

    #[test]
    fn refs_that_cannot_be_followed_are_named() {
        for (reference, why) in [
            (
                "https://example.com/s.json",
                "other documents are never fetched",
            ),
            ("other.json#/a", "other documents are never fetched"),
            ("#/$defs/missing", "names nothing in this schema"),
            ("#$defs", "names nothing in this schema"),
        ] {
            let schema = format!(r#"{{"properties": {{"a": {{"$ref": "{reference}"}}}}}}"#);
            let got = check(&schema, r#"{"a":1}"#).unwrap_err();
            assert!(got.starts_with("a cannot be checked: $ref"), "{got}");
            assert!(got.contains(reference) && got.contains(why), "{got}");
        }
        // Cycles that never step into the value end at the hop limit, through combinators too.
        for cyclic in [
            r##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}"##,
            r##"{"allOf": [{"$ref": "#"}]}"##,
            r##"{"anyOf": [{"not": {"$ref": "#"}}]}"##,
        ] {
            let got = check(cyclic, "1").unwrap_err();
            assert!(got.contains("a cyclic schema"), "{cyclic}: {got}");
        }
    }

    #[test]
    fn combinators() {
        let schema = r#"{"properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]},
            "b": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            "c": {"allOf": [{"type": "string"}, {"maxLength": 2}]},
            "d": {"not": {"const": "x"}}}}"#;
        expect(
            schema,
            &[
                (r#"{"a":"s","b":1.5,"c":"ab","d":"y"}"#, None),
                (
                    r#"{"a":-1}"#,
                    Some("a must match at least one of the schemas of anyOf"),
                ),
                (
                    r#"{"b":1}"#,
                    Some("b must match exactly one of the schemas of oneOf (matches 2)"),
                ),
                (
                    r#"{"c":"abc"}"#,
                    Some("c must be at most 2 characters long"),
                ),
                (r#"{"d":"x"}"#, Some("d must not match the schema of not")),
            ],
        );
    }

    #[test]
    fn unchecked_keywords_are_named() {
        let schema = parse(
            br#"{"type":"object","properties":{"a":{"type":"string","pattern":"^x","format":"email"}},
                "patternProperties":{"^y":{}},"anyOf":[{"if":{}}]}"#,
        )
        .unwrap();
        assert_eq!(
            unchecked_keywords(&schema),
            ["format", "if", "pattern", "patternProperties"]
        );
        assert!(unchecked_keywords(&parse(CONFORMANCE.as_bytes()).unwrap()).is_empty());
        // Names of properties and definitions, and enum values, are not keywords.
        let data = br#"{"properties":{"pattern":{"enum":["format"]}},"$defs":{"if":{}}}"#;
        assert!(unchecked_keywords(&parse(data).unwrap()).is_empty());
        // Accepted, not checked: a value the pattern would refuse passes.
        assert_eq!(check(r#"{"pattern":"^x"}"#, r#""y""#), Ok(()));
    }
}
