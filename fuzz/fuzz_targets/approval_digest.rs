//! The scoped-approval digest and the approvals file: arbitrary bytes as a call's arguments (the
//! canonical form, when there is one, is a fixed point: parsed and canonicalised again it is the
//! same text, and its digest is the SHA-256 of that text), and arbitrary bytes as an approvals
//! file (an answer or an error, never a panic; what parses writes back to what parses equal).
#![no_main]

use agentteams_mcp::governance::{call_digest, canonical_call, Presets};
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::sha256;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Value::Object(arguments)) = json::parse(data) {
        if let Ok(canonical) = canonical_call("t", &arguments) {
            let again = json::parse(canonical.as_bytes()).expect("the canonical form is JSON");
            let inner = again
                .get("arguments")
                .and_then(Value::as_object)
                .expect("the canonical form holds the arguments");
            assert_eq!(
                canonical_call("t", inner).as_deref(),
                Ok(canonical.as_str())
            );
            assert_eq!(
                call_digest("t", &arguments).as_deref(),
                Ok(sha256::hex_digest(canonical.as_bytes()).as_str())
            );
        }
    }
    if let Ok(presets) = Presets::parse(data) {
        let written = presets.to_json();
        assert_eq!(Presets::parse(written.as_bytes()).as_ref(), Ok(&presets));
    }
});
