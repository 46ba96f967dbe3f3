//! The reference's index schemas (`memory-index.schema.json`, `code-index.schema.json`) as a
//! hand-written structural validator over parsed JSON, plus the referential checks the reference
//! lacks (a posting naming a document that does not exist).
//!
//! It accepts exactly what Draft-07 `jsonschema` accepts for these two schemas: integers may be
//! integral floats (`2.0`), booleans are never numbers, `additionalProperties: false` everywhere,
//! duplicate keys count once (the last, as Python's `json` keeps), and the two regular expressions
//! behave like Python's `re.search` (`$` also matches before a final newline). One deliberate
//! difference: `\d` in the `built_at` pattern accepts ASCII digits only.

use agentteams_mcp::json::{Key, Map, Number, Value};
use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// Largest index file either side reads: recall before loading one, the builder before checking
/// what it wrote (the Python standard library's code index is about 60 MB).
pub const MAX_INDEX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Why a parsed index file is not a valid index: the JSON path of the offending value and the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// `$`, `$.documents[3].length`, `$.postings["os.path"][0].tf`, ...
    pub path: String,
    pub rule: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.rule)
    }
}

/// Which branch of the code-index `oneOf` a file matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeIndexFile {
    Manifest,
    Partition,
}

const MANIFEST_TYPE: &str = "code-index-manifest";
const PARTITION_TYPE: &str = "code-index-partition";
pub(crate) const SOURCE_KINDS: [&str; 3] = ["local-script", "api-module", "api-doc"];
const TRIGGER_SOURCES: [&str; 6] = ["cli", "env", "scheduler", "workflow", "script", "manual"];

/// What one property must hold.
#[derive(Clone, Copy)]
enum Rule {
    Const(&'static str),
    Str,
    NonEmptyStr,
    StrOrNull,
    Hex64,
    Hex64OrNull,
    Timestamp,
    /// An integer (integral floats included) at least this large.
    IntAtLeast(u64),
    /// `vector_dim`: an integer >= 1, or null.
    DimOrNull,
    /// A number (not a boolean) >= 0.
    NonNegNumber,
    BoolOrNull,
    OneOf(&'static [&'static str]),
    StrArray,
    EnumArray(&'static [&'static str]),
    MemoryDocuments,
    CodeDocuments,
    Postings,
    Partitions,
    Provenance,
}

struct Field {
    name: &'static str,
    required: bool,
    rule: Rule,
}

const fn req(name: &'static str, rule: Rule) -> Field {
    Field {
        name,
        required: true,
        rule,
    }
}

const fn opt(name: &'static str, rule: Rule) -> Field {
    Field {
        name,
        required: false,
        rule,
    }
}

const MEMORY_INDEX: &[Field] = &[
    req("artifact_type", Rule::Const("memory-index")),
    req("memory_index_schema_version", Rule::NonEmptyStr),
    opt("index_format_version", Rule::NonEmptyStr),
    opt("index_build_id", Rule::Hex64),
    opt("index_write_owner", Rule::NonEmptyStr),
    opt("vector_runtime_mode", Rule::NonEmptyStr),
    opt("vector_model_id", Rule::StrOrNull),
    opt("vector_dim", Rule::DimOrNull),
    opt("fallback_policy", Rule::NonEmptyStr),
    opt("source_fingerprint", Rule::Hex64),
    req("project_name", Rule::Str),
    req("framework", Rule::Str),
    req("built_at", Rule::Timestamp),
    req("source_count", Rule::IntAtLeast(0)),
    req("documents", Rule::MemoryDocuments),
    req("postings", Rule::Postings),
    req("avgdl", Rule::NonNegNumber),
    req("N", Rule::IntAtLeast(0)),
];

const MEMORY_DOCUMENT: &[Field] = &[
    req("doc_id", Rule::IntAtLeast(0)),
    req("path", Rule::Str),
    req("title", Rule::Str),
    req("length", Rule::IntAtLeast(0)),
    req("snippet", Rule::Str),
    req("paragraphs", Rule::StrArray),
    opt("source_hash", Rule::Hex64),
    req("source_mtime", Rule::NonNegNumber),
    opt("vector_norm_sq", Rule::NonNegNumber),
];

const MANIFEST: &[Field] = &[
    req("artifact_type", Rule::Const(MANIFEST_TYPE)),
    req("code_index_schema_version", Rule::NonEmptyStr),
    opt("index_format_version", Rule::NonEmptyStr),
    opt("index_write_owner", Rule::NonEmptyStr),
    opt("vector_runtime_mode", Rule::NonEmptyStr),
    opt("vector_model_id", Rule::StrOrNull),
    opt("vector_dim", Rule::DimOrNull),
    opt("fallback_policy", Rule::NonEmptyStr),
    req("project_name", Rule::Str),
    req("framework", Rule::Str),
    req("built_at", Rule::Timestamp),
    req("partitions", Rule::Partitions),
    opt("query_entrypoints", Rule::StrArray),
    opt("maintenance_entrypoints", Rule::StrArray),
    opt("trigger_sources", Rule::EnumArray(&TRIGGER_SOURCES)),
];

const PARTITION_ENTRY: &[Field] = &[
    req("file", Rule::NonEmptyStr),
    req("source_kind", Rule::OneOf(&SOURCE_KINDS)),
    req("N", Rule::IntAtLeast(0)),
    opt("source_count", Rule::IntAtLeast(0)),
    opt("built_at", Rule::Timestamp),
    opt("source_fingerprint", Rule::Hex64),
    opt("dependency_fingerprint", Rule::Hex64OrNull),
];

const PARTITION: &[Field] = &[
    req("artifact_type", Rule::Const(PARTITION_TYPE)),
    req("code_index_schema_version", Rule::NonEmptyStr),
    opt("index_format_version", Rule::NonEmptyStr),
    opt("index_build_id", Rule::Hex64),
    opt("index_write_owner", Rule::NonEmptyStr),
    opt("vector_runtime_mode", Rule::NonEmptyStr),
    opt("vector_model_id", Rule::StrOrNull),
    opt("vector_dim", Rule::DimOrNull),
    opt("fallback_policy", Rule::NonEmptyStr),
    opt("source_fingerprint", Rule::Hex64),
    opt("dependency_fingerprint", Rule::Hex64OrNull),
    req("source_kind", Rule::OneOf(&SOURCE_KINDS)),
    req("project_name", Rule::Str),
    req("framework", Rule::Str),
    req("built_at", Rule::Timestamp),
    req("source_count", Rule::IntAtLeast(0)),
    req("documents", Rule::CodeDocuments),
    req("postings", Rule::Postings),
    req("avgdl", Rule::NonNegNumber),
    req("N", Rule::IntAtLeast(0)),
];

const CODE_DOCUMENT: &[Field] = &[
    req("doc_id", Rule::IntAtLeast(0)),
    req("path", Rule::Str),
    req("source_kind", Rule::OneOf(&SOURCE_KINDS)),
    opt("language", Rule::StrOrNull),
    opt("symbol", Rule::StrOrNull),
    opt("signature", Rule::StrOrNull),
    opt("provenance", Rule::Provenance),
    req("title", Rule::Str),
    req("length", Rule::IntAtLeast(0)),
    req("snippet", Rule::Str),
    req("passages", Rule::StrArray),
    opt("source_hash", Rule::Hex64),
    req("source_mtime", Rule::NonNegNumber),
    opt("vector_norm_sq", Rule::NonNegNumber),
];

const PROVENANCE: &[Field] = &[
    opt("distribution", Rule::Str),
    opt("version", Rule::StrOrNull),
    opt("resolved_from", Rule::StrOrNull),
    opt("editable", Rule::BoolOrNull),
    opt("declared_only", Rule::BoolOrNull),
];

const POSTING: &[Field] = &[
    req("doc_id", Rule::IntAtLeast(0)),
    req("tf", Rule::IntAtLeast(1)),
];

/// Validates a memory index (`references/memory-index.json`).
pub fn validate_memory_index(value: &Value) -> Result<(), SchemaError> {
    check_object(value, MEMORY_INDEX, &mut JsonPath::for_file(value))
}

/// Validates one entry of `documents` on its own: a memory index's (`code` false) or a code
/// partition's. Only says whether it is valid, so the error's path is relative to the document.
pub(crate) fn validate_document(value: &Value, code: bool) -> Result<(), SchemaError> {
    let fields = if code { CODE_DOCUMENT } else { MEMORY_DOCUMENT };
    check_object(value, fields, &mut JsonPath::default())
}

/// Validates a code-index file: the manifest or a partition (the schema's `oneOf`, decided by
/// `artifact_type`, since the two branches' constants exclude each other).
pub fn validate_code_index(value: &Value) -> Result<CodeIndexFile, SchemaError> {
    let mut path = JsonPath::for_file(value);
    match value.get("artifact_type").and_then(Value::as_str) {
        Some(MANIFEST_TYPE) => {
            check_object(value, MANIFEST, &mut path)?;
            Ok(CodeIndexFile::Manifest)
        }
        Some(PARTITION_TYPE) => {
            check_object(value, PARTITION, &mut path)?;
            Ok(CodeIndexFile::Partition)
        }
        _ if value.as_object().is_none() => Err(type_error(&path, "an object", value)),
        _ => Err(SchemaError {
            path: "$.artifact_type".into(),
            rule: format!(
                "must be \"{MANIFEST_TYPE}\" or \"{PARTITION_TYPE}\" (the schema's oneOf matched neither)"
            ),
        }),
    }
}

/// Where the validator is, kept as segments and rendered only for an error message.
#[derive(Default)]
struct JsonPath<'a> {
    segments: Vec<Segment<'a>>,
    /// Documents in the file being validated, for the postings' referential check.
    n_docs: usize,
}

enum Segment<'a> {
    Key(&'a str),
    /// A key of the tree, kept as it is: a short key becomes a `str` only through a UTF-8
    /// check, which only an error's path needs.
    Member(&'a Key),
    Index(usize),
}

impl<'a> JsonPath<'a> {
    fn for_file(value: &Value) -> JsonPath<'a> {
        JsonPath {
            segments: Vec::new(),
            n_docs: value
                .get("documents")
                .and_then(Value::as_array)
                .map_or(0, |a| a.len()),
        }
    }

    fn render(&self) -> String {
        let mut out = String::from("$");
        for segment in &self.segments {
            let key = match segment {
                Segment::Key(key) => *key,
                Segment::Member(key) => key.as_str(),
                Segment::Index(i) => {
                    let _ = write!(out, "[{i}]");
                    continue;
                }
            };
            if !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                out.push('.');
                out.push_str(key);
            } else {
                out.push('[');
                agentteams_mcp::json::write_compact(&Value::from(key), &mut out);
                out.push(']');
            }
        }
        out
    }

    fn error(&self, rule: String) -> SchemaError {
        SchemaError {
            path: self.render(),
            rule,
        }
    }
}

/// Whether entry `i` of `map` is the one a Python dict keeps for its key (the last).
fn kept(map: &Map, i: usize, key: &Key) -> bool {
    !map.iter().skip(i + 1).any(|(later, _)| later == key)
}

/// The entries of `map` a Python dict would keep: the last of each key (order does not matter to
/// validation). Small objects, the vast majority, are checked without allocating.
fn last_entries(map: &Map) -> Vec<(&Key, &Value)> {
    if map.len() <= 16 {
        return map
            .iter()
            .enumerate()
            .filter(|(i, (k, _))| kept(map, *i, k))
            .map(|(_, entry)| entry)
            .collect();
    }
    let all: Vec<(&Key, &Value)> = map.iter().collect();
    let mut seen = HashSet::with_capacity(all.len());
    let mut kept: Vec<(&Key, &Value)> = all
        .into_iter()
        .rev()
        .filter(|(k, _)| seen.insert(*k))
        .collect();
    kept.reverse();
    kept
}

/// Entries of an object checked through [`SmallObject`]: a document has up to 14, a file's top
/// level up to 20; a larger object takes the general way round.
const SMALL_OBJECT_ENTRIES: usize = 32;

/// Fields of a schema object, at most: a field's index is a bit of a `u64`.
const MAX_FIELDS: usize = 64;

/// A small object's entries, each matched to its schema field once. The tree holds an index
/// file's objects as they were written, duplicate keys included; a Python dict keeps the last
/// entry of each key, and only those are validated.
struct SmallObject {
    /// Each entry's field index, or `None` for a key no field names.
    field_of: [Option<u8>; SMALL_OBJECT_ENTRIES],
    /// The last entry naming each field (meaningful where `present` has the field's bit).
    last_entry_of: [u8; MAX_FIELDS],
    /// Bit `i` set when some entry names field `i`.
    present: u64,
}

impl SmallObject {
    fn new(map: &Map, fields: &[Field]) -> SmallObject {
        debug_assert!(map.len() <= SMALL_OBJECT_ENTRIES && fields.len() <= MAX_FIELDS);
        let mut object = SmallObject {
            field_of: [None; SMALL_OBJECT_ENTRIES],
            last_entry_of: [0; MAX_FIELDS],
            present: 0,
        };
        for (entry, key) in map.keys().enumerate() {
            if let Some(field) = fields.iter().position(|f| *key == f.name) {
                object.field_of[entry] = Some(field as u8);
                object.last_entry_of[field] = entry as u8;
                object.present |= 1 << field;
            }
        }
        object
    }

    /// Whether entry `entry` (whose key is `key`) is the last of its key: for a key a field
    /// names, one look at that field's last entry; a key no field names (an error, reported when
    /// its entry is visited) is compared with the later keys.
    fn kept(&self, map: &Map, entry: usize, key: &Key) -> bool {
        match self.field_of[entry] {
            Some(field) => usize::from(self.last_entry_of[usize::from(field)]) == entry,
            None => kept(map, entry, key),
        }
    }
}

fn check_object<'a>(
    value: &'a Value,
    fields: &[Field],
    path: &mut JsonPath<'a>,
) -> Result<(), SchemaError> {
    let Some(map) = value.as_object() else {
        return Err(type_error(path, "an object", value));
    };
    let missing = |field: &Field, path: &JsonPath<'a>| {
        path.error(format!("'{}' is a required property", field.name))
    };
    let unexpected = |key: &Key, path: &JsonPath<'a>| {
        path.error(format!(
            "additional properties are not allowed ('{key}' was unexpected)"
        ))
    };
    let visit = |key: &'a Key, child: &'a Value, field: &Field, path: &mut JsonPath<'a>| {
        path.segments.push(Segment::Member(key));
        check_rule(child, field.rule, path)?;
        path.segments.pop();
        Ok(())
    };
    if map.len() <= SMALL_OBJECT_ENTRIES && fields.len() <= MAX_FIELDS {
        // The same checks in the same order as below, with each key matched to its field once.
        let object = SmallObject::new(map, fields);
        if let Some(field) = (fields.iter().enumerate())
            .find(|(i, field)| field.required && object.present & (1 << i) == 0)
            .map(|(_, field)| field)
        {
            return Err(missing(field, path));
        }
        for (i, (key, child)) in map.iter().enumerate() {
            if !object.kept(map, i, key) {
                continue;
            }
            match object.field_of[i] {
                Some(field) => visit(key, child, &fields[usize::from(field)], path)?,
                None => return Err(unexpected(key, path)),
            }
        }
        return Ok(());
    }
    if let Some(field) = fields
        .iter()
        .find(|field| field.required && !map.contains_key(field.name))
    {
        return Err(missing(field, path));
    }
    for (key, child) in last_entries(map) {
        match fields.iter().find(|f| *key == f.name) {
            Some(field) => visit(key, child, field, path)?,
            None => return Err(unexpected(key, path)),
        }
    }
    Ok(())
}

fn check_rule<'a>(
    value: &'a Value,
    rule: Rule,
    path: &mut JsonPath<'a>,
) -> Result<(), SchemaError> {
    let ok = match rule {
        Rule::Const(want) => {
            if value.as_str() == Some(want) {
                return Ok(());
            }
            return Err(path.error(format!("must be \"{want}\"")));
        }
        Rule::Str => value.as_str().is_some(),
        Rule::NonEmptyStr => value.as_str().is_some_and(|s| !s.is_empty()),
        Rule::StrOrNull => value.is_null() || value.as_str().is_some(),
        Rule::Hex64 => value.as_str().is_some_and(is_hex64),
        Rule::Hex64OrNull => value.is_null() || value.as_str().is_some_and(is_hex64),
        Rule::Timestamp => value.as_str().is_some_and(is_timestamp),
        Rule::IntAtLeast(min) => integral(value).is_some_and(|n| n >= min as f64),
        Rule::DimOrNull => value.is_null() || integral(value).is_some_and(|n| n >= 1.0),
        Rule::NonNegNumber => value.as_number().is_some_and(|n| n.as_f64() >= 0.0),
        Rule::BoolOrNull => value.is_null() || value.as_bool().is_some(),
        Rule::OneOf(options) => value.as_str().is_some_and(|s| options.contains(&s)),
        Rule::StrArray => return check_array(value, path, "a string", &[]),
        Rule::EnumArray(options) => {
            return check_array(
                value,
                path,
                "one of cli, env, scheduler, workflow, script, manual",
                options,
            )
        }
        Rule::MemoryDocuments => return check_array_of(value, MEMORY_DOCUMENT, path),
        Rule::CodeDocuments => return check_array_of(value, CODE_DOCUMENT, path),
        Rule::Postings => return check_postings(value, path),
        Rule::Partitions => return check_map_of(value, PARTITION_ENTRY, path),
        Rule::Provenance => {
            return if value.is_null() {
                Ok(())
            } else {
                check_object(value, PROVENANCE, path)
            }
        }
    };
    if ok {
        Ok(())
    } else {
        Err(type_error(path, describe(rule), value))
    }
}

fn describe(rule: Rule) -> &'static str {
    match rule {
        Rule::Str => "a string",
        Rule::NonEmptyStr => "a non-empty string",
        Rule::StrOrNull => "a string or null",
        Rule::Hex64 => "64 lowercase hex digits (^[a-f0-9]{64}$)",
        Rule::Hex64OrNull => "64 lowercase hex digits or null",
        Rule::Timestamp => {
            "a UTC timestamp like 2026-10-07T12:34:56.123456Z (^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$)"
        }
        Rule::IntAtLeast(0) => "an integer >= 0",
        Rule::IntAtLeast(_) => "an integer >= 1",
        Rule::DimOrNull => "an integer >= 1 or null",
        Rule::NonNegNumber => "a number >= 0",
        Rule::BoolOrNull => "a boolean or null",
        Rule::OneOf(_) => "one of local-script, api-module, api-doc",
        _ => "valid",
    }
}

fn type_error(path: &JsonPath<'_>, expected: &str, found: &Value) -> SchemaError {
    let shown = match found {
        Value::String(s) if s.chars().count() > 40 => {
            format!("a string of {} characters", s.chars().count())
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        other => agentteams_mcp::json::to_string(other),
    };
    path.error(format!("must be {expected}, found {shown}"))
}

/// An array of strings; with `options`, of those strings only.
fn check_array<'a>(
    value: &'a Value,
    path: &mut JsonPath<'a>,
    expected: &str,
    options: &[&str],
) -> Result<(), SchemaError> {
    let Some(items) = value.as_array() else {
        return Err(type_error(path, "an array", value));
    };
    for (i, item) in items.iter().enumerate() {
        let ok = item
            .as_str()
            .is_some_and(|s| options.is_empty() || options.contains(&s));
        if !ok {
            path.segments.push(Segment::Index(i));
            return Err(type_error(path, expected, item));
        }
    }
    Ok(())
}

fn check_array_of<'a>(
    value: &'a Value,
    fields: &[Field],
    path: &mut JsonPath<'a>,
) -> Result<(), SchemaError> {
    let Some(items) = value.as_array() else {
        return Err(type_error(path, "an array", value));
    };
    for (i, item) in items.iter().enumerate() {
        path.segments.push(Segment::Index(i));
        check_object(item, fields, path)?;
        path.segments.pop();
    }
    Ok(())
}

fn check_map_of<'a>(
    value: &'a Value,
    fields: &[Field],
    path: &mut JsonPath<'a>,
) -> Result<(), SchemaError> {
    let Some(map) = value.as_object() else {
        return Err(type_error(path, "an object", value));
    };
    for (key, child) in last_entries(map) {
        path.segments.push(Segment::Member(key));
        check_object(child, fields, path)?;
        path.segments.pop();
    }
    Ok(())
}

fn check_postings<'a>(value: &'a Value, path: &mut JsonPath<'a>) -> Result<(), SchemaError> {
    let Some(map) = value.as_object() else {
        return Err(type_error(path, "an object", value));
    };
    for (term, entries) in last_entries(map) {
        path.segments.push(Segment::Member(term));
        let Some(items) = entries.as_array() else {
            return Err(type_error(path, "an array", entries));
        };
        for (i, entry) in items.iter().enumerate() {
            path.segments.push(Segment::Index(i));
            check_posting(entry, path)?;
            path.segments.pop();
        }
        path.segments.pop();
    }
    Ok(())
}

/// One `{"doc_id", "tf"}` entry: the schema's rules plus "names an existing document". The common
/// shape (exactly those two keys) is checked directly; anything else takes the general route.
fn check_posting<'a>(entry: &'a Value, path: &mut JsonPath<'a>) -> Result<(), SchemaError> {
    let doc_id = match entry.as_object() {
        Some(map) if map.len() == 2 => {
            let mut doc_id = None;
            let mut tf = None;
            for (key, value) in map.iter() {
                match key.as_str() {
                    "doc_id" => doc_id = Some(value),
                    "tf" => tf = Some(value),
                    _ => {}
                }
            }
            match (doc_id.and_then(integral), tf.and_then(integral)) {
                (Some(d), Some(t)) if d >= 0.0 && t >= 1.0 => d,
                _ => {
                    check_object(entry, POSTING, path)?;
                    return Ok(());
                }
            }
        }
        _ => {
            check_object(entry, POSTING, path)?;
            entry.get("doc_id").and_then(integral).unwrap_or(0.0)
        }
    };
    if doc_id >= path.n_docs as f64 {
        path.segments.push(Segment::Key("doc_id"));
        return Err(path.error(format!(
            "{doc_id} does not name a document (the index has {} documents)",
            path.n_docs
        )));
    }
    Ok(())
}

/// The value of a JSON number that Draft-07 counts as an integer (`3` or `3.0`); never a boolean.
pub(crate) fn integral(value: &Value) -> Option<f64> {
    value.as_number().and_then(integral_number)
}

/// [`integral`] for a number already in hand.
pub(crate) fn integral_number(n: &Number) -> Option<f64> {
    let f = n.as_f64();
    (n.is_integer_token() || f.fract() == 0.0).then_some(f)
}

/// Python `re.search(pattern, s)` where `$` also matches before one final `\n`.
fn strip_final_newline(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

fn is_hex64(s: &str) -> bool {
    let s = strip_final_newline(s);
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9'))
}

/// `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`
fn is_timestamp(s: &str) -> bool {
    let b = strip_final_newline(s).as_bytes();
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < SHAPE.len() + 1 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let shape_ok = SHAPE.iter().zip(b).all(|(&want, &got)| match want {
        b'd' => got.is_ascii_digit(),
        other => other == got,
    });
    let fraction = &b[SHAPE.len()..b.len() - 1];
    shape_ok
        && (fraction.is_empty()
            || (fraction.len() >= 2
                && fraction[0] == b'.'
                && fraction[1..].iter().all(u8::is_ascii_digit)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json::parse;

    fn memory(docs: &str, postings: &str) -> Value {
        parse(
            format!(
                r#"{{"artifact_type": "memory-index", "memory_index_schema_version": "1.3",
               "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56.5Z",
               "source_count": 1, "documents": {docs}, "postings": {postings},
               "avgdl": 2.0, "N": 1}}"#
            )
            .as_bytes(),
        )
        .unwrap()
    }

    const DOC: &str = r#"[{"doc_id": 0, "path": "a.md", "title": "A", "length": 2.0,
        "snippet": "s", "paragraphs": ["p"], "source_mtime": 0}]"#;

    #[test]
    fn accepts_a_valid_memory_index_with_integral_floats() {
        assert_eq!(
            validate_memory_index(&memory(DOC, r#"{"x": [{"doc_id": 0, "tf": 1}]}"#)),
            Ok(())
        );
    }

    #[test]
    fn names_the_path_of_the_offending_field() {
        let bad = DOC.replace(r#""length": 2.0"#, r#""length": -1"#);
        let err = validate_memory_index(&memory(&bad, "{}")).unwrap_err();
        assert_eq!(err.path, "$.documents[0].length");
        assert_eq!(err.rule, "must be an integer >= 0, found -1");
        let err = validate_memory_index(&memory(DOC, r#"{"os.path": [{"doc_id": 0, "tf": 0}]}"#))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"$.postings["os.path"][0].tf: must be an integer >= 1, found 0"#
        );
        let extra = DOC.replace(r#""title""#, r#""body": 1, "title""#);
        let err = validate_memory_index(&memory(&extra, "{}")).unwrap_err();
        assert_eq!(
            err.rule,
            "additional properties are not allowed ('body' was unexpected)"
        );
        let missing = DOC.replace(r#""snippet": "s","#, "");
        let err = validate_memory_index(&memory(&missing, "{}")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "$.documents[0]: 'snippet' is a required property"
        );
        let boolean = DOC.replace(r#""source_mtime": 0"#, r#""source_mtime": true"#);
        assert!(validate_memory_index(&memory(&boolean, "{}")).is_err());
    }

    #[test]
    fn postings_must_name_existing_documents() {
        let err =
            validate_memory_index(&memory(DOC, r#"{"x": [{"doc_id": 1, "tf": 1}]}"#)).unwrap_err();
        assert_eq!(err.path, "$.postings.x[0].doc_id");
    }

    #[test]
    fn duplicate_keys_count_once_as_python_keeps_the_last() {
        let v = memory(
            DOC,
            r#"{"x": [{"doc_id": 9, "tf": 0}], "x": [{"doc_id": 0, "tf": 1}]}"#,
        );
        assert_eq!(validate_memory_index(&v), Ok(()));
    }

    /// Each document checked by the small-object way (its own entries) and by the general way
    /// (the same entries after enough earlier repeats of a valid `title` to pass
    /// `SMALL_OBJECT_ENTRIES`; a Python dict keeps only the last, so the answer is the same):
    /// both give the pinned answer, whatever mixes of missing, unexpected and repeated keys.
    #[test]
    fn small_and_large_objects_report_the_same_first_problem() {
        let cases: &[(&str, Result<(), &str>)] = &[
            (r#""path": "a.md", "title": "A""#, Ok(())),
            // A required field missing is reported before an unexpected key, wherever it is.
            (
                r#""zz": 1, "title": "A""#,
                Err("$.documents[0]: 'path' is a required property"),
            ),
            (
                r#""zz": 1, "path": "a.md", "title": "A""#,
                Err("$.documents[0]: additional properties are not allowed ('zz' was unexpected)"),
            ),
            // The last of a repeated key is the one checked, whichever is bad.
            (
                r#""length": "x", "path": "a.md", "length": 2, "title": "A""#,
                Ok(()),
            ),
            (
                r#""length": 2, "path": "a.md", "length": "x", "title": "A""#,
                Err("$.documents[0].length: must be an integer >= 0, found \"x\""),
            ),
            // Entries are checked in order, the last of each key standing where it is.
            (
                r#""snippet": 1, "path": "a.md", "length": -1, "title": "A", "snippet": "s""#,
                Err("$.documents[0].length: must be an integer >= 0, found -1"),
            ),
            (
                r#""zz": 1, "path": 2, "title": "A", "zz": 2"#,
                Err("$.documents[0].path: must be a string, found 2"),
            ),
            (
                r#""zz": 1, "path": "a.md", "title": "A", "zz": 2, "yy": 3"#,
                Err("$.documents[0]: additional properties are not allowed ('zz' was unexpected)"),
            ),
        ];
        let base = r#""doc_id": 0, "length": 2.0, "snippet": "s", "paragraphs": ["p"],
            "source_mtime": 0"#;
        let padding = r#""title": "padding", "#.repeat(SMALL_OBJECT_ENTRIES);
        for (entries, want) in cases {
            for padded in [false, true] {
                let pad = if padded { padding.as_str() } else { "" };
                let doc = format!("[{{{pad}{base}, {entries}}}]");
                let got = validate_memory_index(&memory(&doc, "{}")).map_err(|e| e.to_string());
                assert_eq!(
                    got.as_ref().map_err(String::as_str),
                    want.as_ref().map_err(|e| *e),
                    "{entries} (padded: {padded})"
                );
            }
        }
    }

    #[test]
    fn patterns_behave_like_python_re_search() {
        assert!(is_timestamp("2026-10-07T12:34:56Z"));
        assert!(is_timestamp("2026-10-07T12:34:56.123456Z\n"));
        assert!(!is_timestamp("2026-10-07T12:34:56.Z"));
        assert!(!is_timestamp("2026-10-07 12:34:56Z"));
        assert!(!is_timestamp("2026-10-07T12:34:56+00:00"));
        assert!(is_hex64(&"a".repeat(64)));
        assert!(is_hex64(&format!("{}\n", "0".repeat(64))));
        assert!(!is_hex64(&"A".repeat(64)));
        assert!(!is_hex64(&"a".repeat(63)));
    }

    #[test]
    fn code_index_one_of_picks_the_branch_by_artifact_type() {
        let manifest = parse(
            br#"{"artifact_type": "code-index-manifest", "code_index_schema_version": "1.0",
                "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56Z",
                "partitions": {"local": {"file": "local.json", "source_kind": "local-script", "N": 0,
                "dependency_fingerprint": null}}, "trigger_sources": ["cli"]}"#,
        )
        .unwrap();
        assert_eq!(validate_code_index(&manifest), Ok(CodeIndexFile::Manifest));
        let other = parse(br#"{"artifact_type": "memory-index"}"#).unwrap();
        assert_eq!(
            validate_code_index(&other).unwrap_err().path,
            "$.artifact_type"
        );
        let not_object = parse(b"[1]").unwrap();
        assert_eq!(
            validate_code_index(&not_object).unwrap_err().rule,
            "must be an object, found an array"
        );
        let bad_trigger = parse(
            br#"{"artifact_type": "code-index-manifest", "code_index_schema_version": "1.0",
                "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56Z",
                "partitions": {}, "trigger_sources": ["cron"]}"#,
        )
        .unwrap();
        assert_eq!(
            validate_code_index(&bad_trigger).unwrap_err().path,
            "$.trigger_sources[0]"
        );
    }
}
