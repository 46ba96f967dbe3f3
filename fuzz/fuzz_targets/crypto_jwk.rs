//! Arbitrary bytes as a JWK Set document: it answers, never panics, and what it accepts is bounded.
#![no_main]

use agentteams_mcp::crypto::jwk::{Jwks, MAX_JWKS_KEYS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(set) = Jwks::parse(data) {
        assert!(set.keys().len() <= MAX_JWKS_KEYS);
    }
});
