//! The floor of a stdio MCP round trip: a server that does nothing but answer each line with a
//! valid JSON-RPC reply carrying the request's id and the conformance fixture's
//! `test_simple_text` result, flushed per line. No JSON parsing, no dispatch, one thread.
use std::io::{BufRead, Write};

const RESULT: &str = r#","result":{"content":[{"type":"text","text":"This is a simple text response for testing."}]}}"#;

/// The bytes of the request's `"id":` value (a number or a string without escapes).
fn id_of(line: &[u8]) -> Option<&[u8]> {
    let key = b"\"id\":";
    let start = line.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &line[start..];
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|&b| b == b'"')? + 1
    } else {
        rest.iter().position(|&b| b == b',' || b == b'}')?
    };
    Some(&rest[..end])
}

fn main() {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut reply = Vec::with_capacity(256);
    for line in stdin.split(b'\n') {
        let Ok(line) = line else { break };
        // Notifications get no reply.
        let Some(id) = id_of(&line) else { continue };
        reply.clear();
        reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        reply.extend_from_slice(id);
        reply.extend_from_slice(RESULT.as_bytes());
        reply.push(b'\n');
        if out.write_all(&reply).and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
