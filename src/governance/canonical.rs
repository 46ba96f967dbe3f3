//! The canonical form of one tool call (tool name and arguments) and its SHA-256, the digest a
//! scoped approval (`--approve-scoped TOOL:SHA256`) names.
//!
//! The form is defined in docs/approvals.md, with published vectors in
//! `tests/data/approval-digests.json`. In short: the bytes are the compact JSON of the object
//! `{"arguments": ARGS, "tool": NAME}` with
//! - object members sorted by key in Unicode code point order (the order of their UTF-8 bytes,
//!   not of UTF-16 code units), at every level;
//! - no whitespace;
//! - strings as UTF-8, unnormalised (no NFC or NFD: `é` and `e` + U+0301 differ), escaping only
//!   `"` `\` and U+0000–U+001F (`\b \f \n \r \t`, the rest `\u00xx` in lowercase hex);
//! - integers (tokens without fraction or exponent) in decimal as written, which JSON's grammar
//!   already makes the shortest form; floats (tokens with a fraction or exponent) as the nearest
//!   double in Python's `repr` form (`1.0`, `1e-05`, `1.5e+16`, `-0.0`).
//!
//! That is exactly Python's `json.dumps(call, sort_keys=True, separators=(",", ":"),
//! ensure_ascii=False)` of the parsed call, so any implementation can check itself against it.
//! Three kinds of arguments have no canonical form, and a call holding one is never approved by
//! digest: an object with a duplicate key (which copy does the tool read?), the integer `-0`
//! (JavaScript and Python read it as `0`, this parser keeps it apart), and a float beyond the range
//! of a double (`1e400`, which Python reads as infinity).

use crate::json::{self, Map, Value};
use crate::sha256;
use std::fmt;

/// Why a call has no canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonicalError {
    /// Where, as a JSON pointer into the arguments (`""` for the arguments object itself).
    pub pointer: String,
    pub why: &'static str,
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the arguments"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.why)
    }
}

impl std::error::Error for CanonicalError {}

/// The canonical bytes of calling `tool` with `arguments` (see the module documentation).
pub fn canonical_call(tool: &str, arguments: &Map) -> Result<String, CanonicalError> {
    check(arguments)?;
    let mut call = Map::with_capacity(2);
    call.insert("arguments", Value::Object(arguments.clone()));
    call.insert("tool", Value::from(tool));
    Ok(json::to_string_sorted(&Value::Object(call)))
}

/// The digest a scoped approval names: SHA-256 of [`canonical_call`], 64 lowercase hex digits.
pub fn call_digest(tool: &str, arguments: &Map) -> Result<String, CanonicalError> {
    canonical_call(tool, arguments).map(|text| sha256::hex_digest(text.as_bytes()))
}

/// Refuses what has no canonical form. Walks with an explicit stack: an embedder may hand in a
/// value deeper than the parser would ever build. Each value's place is its parent's and one
/// segment, spelt out as a pointer only for the error: a pointer per value copied its parent's,
/// which is quadratic in a long key over many members (100 KB of key over 12,000 members: 1.4 s
/// and 1.2 GB held at once).
fn check(arguments: &Map) -> Result<(), CanonicalError> {
    let mut places = Places::default();
    let mut stack: Vec<(usize, &Value)> = Vec::new();
    check_object(arguments, Places::ROOT, &mut places, &mut stack)?;
    while let Some((place, value)) = stack.pop() {
        match value {
            Value::Object(map) => check_object(map, place, &mut places, &mut stack)?,
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((places.add(place, i.to_string()), item));
                }
            }
            Value::Number(n) => {
                let fail = |why| {
                    Err(CanonicalError {
                        pointer: places.pointer(place),
                        why,
                    })
                };
                match n.verbatim_text() {
                    Some("-0") => return fail("the integer -0 has no canonical form"),
                    Some(_) if !n.is_integer_token() => {
                        return fail("a number beyond the range of a double has no canonical form")
                    }
                    Some(_) => {}
                    None if n.is_float() && !n.as_f64().is_finite() => {
                        return fail("a number that is not finite has no canonical form")
                    }
                    None => {}
                }
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    Ok(())
}

/// The places of the values met so far: each its parent's place and its own pointer segment.
#[derive(Default)]
struct Places {
    parts: Vec<(usize, String)>,
}

impl Places {
    /// The arguments object itself (pointer `""`).
    const ROOT: usize = usize::MAX;

    fn add(&mut self, parent: usize, segment: String) -> usize {
        self.parts.push((parent, segment));
        self.parts.len() - 1
    }

    /// The JSON pointer of `place`.
    fn pointer(&self, mut place: usize) -> String {
        let mut segments = Vec::new();
        while place != Places::ROOT {
            let (parent, segment) = &self.parts[place];
            segments.push(segment.as_str());
            place = *parent;
        }
        segments
            .iter()
            .rev()
            .fold(String::new(), |mut pointer, segment| {
                pointer.push('/');
                pointer.push_str(segment);
                pointer
            })
    }
}

fn check_object<'v>(
    map: &'v Map,
    place: usize,
    places: &mut Places,
    stack: &mut Vec<(usize, &'v Value)>,
) -> Result<(), CanonicalError> {
    let mut keys: Vec<&str> = map.keys().map(|key| key.as_str()).collect();
    keys.sort_unstable();
    if let Some(pair) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(CanonicalError {
            pointer: format!("{}/{}", places.pointer(place), escape_pointer(pair[0])),
            why: "a key that appears twice has no canonical form",
        });
    }
    for (key, value) in map.iter() {
        stack.push((places.add(place, escape_pointer(key)), value));
    }
    Ok(())
}

/// A key as a JSON pointer segment (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Map {
        match json::parse(text.as_bytes()).unwrap() {
            Value::Object(m) => m,
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn a_long_key_over_many_members_is_checked_in_linear_time() {
        // Within one 1 MiB request: a 400 KB key over 50,000 members. A pointer per value, each
        // a copy of its parent's, held 20 GB at once (100 KB over 12,000 members: 1.4 s, 1.2 GB).
        let key = "k/~".repeat(400 * 1024 / 3);
        let members: Vec<String> = (0..50_000).map(|i| format!("\"{i:x}\":[0]")).collect();
        let bad = format!(
            r#"{{"{key}":{{{},"last":[1,{{"x":-0}}]}}}}"#,
            members.join(",")
        );
        let started = std::time::Instant::now();
        let err = call_digest("write", &args(&bad)).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        let escaped = key.replace('~', "~0").replace('/', "~1");
        assert_eq!(err.pointer, format!("/{escaped}/last/1/x"));
        let good = bad.replace("-0", "0");
        assert!(call_digest("write", &args(&good)).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn the_form_is_sorted_compact_and_python_compatible() {
        assert_eq!(
            canonical_call(
                "fs_write",
                &args(r#"{ "path": "a", "mode": 420, "data": "x\ny" }"#)
            )
            .unwrap(),
            r#"{"arguments":{"data":"x\ny","mode":420,"path":"a"},"tool":"fs_write"}"#
        );
        assert_eq!(
            canonical_call("t", &args("{}")).unwrap(),
            r#"{"arguments":{},"tool":"t"}"#
        );
        // Float spellings of one double agree; an integer and a float do not.
        let one = |text: &str| canonical_call("t", &args(text)).unwrap();
        assert_eq!(one(r#"{"n":1.0}"#), one(r#"{"n":10e-1}"#));
        assert_eq!(one(r#"{"n":1.0}"#), r#"{"arguments":{"n":1.0},"tool":"t"}"#);
        assert_ne!(one(r#"{"n":1}"#), one(r#"{"n":1.0}"#));
        assert_eq!(
            one(r#"{"n":-0.0}"#),
            r#"{"arguments":{"n":-0.0},"tool":"t"}"#
        );
        assert_eq!(
            one(r#"{"n":123456789012345678901234567890}"#),
            r#"{"arguments":{"n":123456789012345678901234567890},"tool":"t"}"#
        );
    }

    #[test]
    fn what_has_no_canonical_form_is_named() {
        let err = |text: &str| canonical_call("t", &args(text)).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"a":1,"a":2}"#),
            "/a: a key that appears twice has no canonical form"
        );
        assert_eq!(
            err(r#"{"x":[{"b/c~":{"k":0,"k":0}}]}"#),
            "/x/0/b~1c~0/k: a key that appears twice has no canonical form"
        );
        assert_eq!(
            err(r#"{"n":-0}"#),
            "/n: the integer -0 has no canonical form"
        );
        assert_eq!(
            err(r#"{"n":[1e400]}"#),
            "/n/0: a number beyond the range of a double has no canonical form"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_form() {
        let a = args(r#"{"b":2,"a":1}"#);
        assert_eq!(
            call_digest("t", &a).unwrap(),
            sha256::hex_digest(br#"{"arguments":{"a":1,"b":2},"tool":"t"}"#)
        );
    }
}
