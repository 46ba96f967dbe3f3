//! The record format's fixed parts: canonical form and hash, timestamps, run ids.

use crate::json::{self, Map, Value};
use crate::sha256::{self, Sha256};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The longest record line (newline included). The writer summarises a call's arguments, result
/// or error when a record would be longer, and the verifier reports longer lines as damaged.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

/// The `prev` of a run's first record: there is no previous record in its chain.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The record format version, written as `"v"` in every record.
pub const FORMAT_VERSION: u64 = 1;

/// Length of a run id in hexadecimal digits (128 bits).
pub const RUN_ID_LEN: usize = 32;

/// The SHA-256 of a record's canonical form: the record without its `hash` member, written as
/// compact JSON with members sorted by key ([`json::to_string_sorted`]).
pub fn record_hash(record: &Map) -> String {
    // Collected, not inserted one by one: `Map::insert` is a linear look per member, quadratic
    // in a planted record of many members.
    let without_hash: Map = record
        .iter()
        .filter(|(k, _)| k.as_str() != "hash")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    sha256::hex_digest(json::to_string_sorted(&Value::Object(without_hash)).as_bytes())
}

/// The canonical form of a record (an object) that has no `hash` member yet: the bytes its hash
/// covers.
pub fn canonical(record: &Value) -> String {
    debug_assert!(record.get("hash").is_none(), "a sealed record");
    json::to_string_sorted(record)
}

/// Adds the `hash` member to `record`, whose [`canonical`] form is `canonical`, and returns the
/// line to append (canonical form with the hash, newline) and the hash.
pub fn seal(mut record: Value, canonical: &str) -> (String, String) {
    debug_assert!(record.get("hash").is_none(), "a sealed record");
    let hash = sha256::hex_digest(canonical.as_bytes());
    if let Value::Object(map) = &mut record {
        map.insert("hash", Value::from(hash.as_str()));
    }
    let mut line = json::to_string_sorted(&record);
    line.push('\n');
    (line, hash)
}

/// A fresh run id: 128 bits, hexadecimal. Unique across processes and runs without coordination:
/// it digests the OS-seeded keys of two `RandomState`s, the pid, the time and a process counter.
pub fn new_run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = Sha256::new();
    for _ in 0..2 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.update(&hasher.finish().to_le_bytes());
    }
    h.update(&std::process::id().to_le_bytes());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    h.update(&now.as_nanos().to_le_bytes());
    let mut id = sha256::to_hex(&h.finish());
    id.truncate(RUN_ID_LEN);
    id
}

/// Whether `s` is a run id as [`new_run_id`] makes them.
pub fn is_run_id(s: &str) -> bool {
    s.len() == RUN_ID_LEN && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_distinct_hex() {
        let a = new_run_id();
        let b = new_run_id();
        assert!(is_run_id(&a) && is_run_id(&b));
        assert_ne!(a, b);
        assert!(!is_run_id(&a.to_uppercase()));
        assert!(!is_run_id(&a[1..]));
    }

    #[test]
    fn hash_covers_everything_but_the_hash_member_in_any_key_order() {
        let Value::Object(a) = json::parse(br#"{"b":1,"a":"x","hash":"ignored"}"#).unwrap() else {
            unreachable!()
        };
        let Value::Object(b) = json::parse(br#"{"a":"x","b":1}"#).unwrap() else {
            unreachable!()
        };
        assert_eq!(record_hash(&a), record_hash(&b));
        assert_eq!(record_hash(&b), sha256::hex_digest(br#"{"a":"x","b":1}"#));
        let b = Value::Object(b);
        let (line, hash) = seal(b.clone(), &canonical(&b));
        assert_eq!(
            line,
            format!("{{\"a\":\"x\",\"b\":1,\"hash\":\"{hash}\"}}\n")
        );
    }
}
