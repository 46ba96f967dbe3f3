//! The published scoped-approval digest vectors (`tests/data/approval-digests.json`, written by
//! Python's json module through `tests/data/gen_approval_digests.py`): this implementation computes
//! every canonical form and digest exactly, and refuses every input that has none.

use agentteams_mcp::governance::{call_digest, canonical_call};
use agentteams_mcp::json::{self, Map, Value};

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/approval-digests.json"
    );
    json::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn field<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("vector without {key}: {v}"))
}

fn arguments(v: &Value) -> Map {
    match json::parse(field(v, "arguments").as_bytes()).unwrap() {
        Value::Object(m) => m,
        other => panic!("arguments are not an object: {other}"),
    }
}

#[test]
fn every_vector_has_the_published_canonical_form_and_digest() {
    let all = vectors();
    let list = all.get("vectors").and_then(Value::as_array).unwrap();
    assert!(list.len() >= 16, "the vectors are all there");
    for v in list.iter() {
        let name = field(v, "name");
        let tool = field(v, "tool");
        let args = arguments(v);
        assert_eq!(
            canonical_call(tool, &args).unwrap(),
            field(v, "canonical"),
            "{name}"
        );
        assert_eq!(
            call_digest(tool, &args).unwrap(),
            field(v, "sha256"),
            "{name}"
        );
        // The canonical form is a fixed point: read back, it canonicalises to itself.
        let again = json::parse(field(v, "canonical").as_bytes()).unwrap();
        let inner = again.get("arguments").and_then(Value::as_object).unwrap();
        assert_eq!(
            canonical_call(tool, inner).unwrap(),
            field(v, "canonical"),
            "{name}"
        );
    }
    // The vectors say what they claim: same calls share a digest, different ones do not.
    let digest_of = |name: &str| {
        let v = list.iter().find(|v| field(v, "name") == name).unwrap();
        field(v, "sha256").to_owned()
    };
    assert_eq!(
        digest_of("float 1.0"),
        digest_of("float 10e-1 is the same double as 1.0")
    );
    assert_ne!(
        digest_of("float 1.0"),
        digest_of("integer 1 is not the float 1.0")
    );
    assert_eq!(
        digest_of("members sorted at every level, arrays kept in order"),
        digest_of("same call, other member order and whitespace")
    );
    assert_ne!(
        digest_of("non-ASCII as UTF-8, escaped or not in the input"),
        digest_of("no normalisation: e + U+0301 is not U+00E9")
    );
}

#[test]
fn every_refused_input_has_no_canonical_form_and_the_place_is_named() {
    let all = vectors();
    let list = all.get("refused").and_then(Value::as_array).unwrap();
    assert!(list.len() >= 5);
    for v in list.iter() {
        let name = field(v, "name");
        let err = canonical_call(field(v, "tool"), &arguments(v)).unwrap_err();
        assert_eq!(err.pointer, field(v, "at"), "{name}");
    }
}
