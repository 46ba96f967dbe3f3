//! What the engine fuzz targets check of everything the stdio engine wrote: each line is one
//! valid JSON message, a JSON-RPC 2.0 message or a batch of them (2025-03-26).

use agentteams_mcp::json::{self, Value};

/// The messages `out` holds, batches flattened; panics (a finding) on any line that is not
/// JSON or a message without `"jsonrpc": "2.0"`.
pub fn messages(out: &[u8]) -> Vec<Value> {
    let mut all = Vec::new();
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match json::parse(line).expect("every output line is valid JSON") {
            Value::Array(batch) => all.extend(batch.into_vec()),
            single => all.push(single),
        }
    }
    for m in &all {
        assert!(m.get("jsonrpc").and_then(Value::as_str) == Some("2.0"), "{m}");
    }
    all
}
