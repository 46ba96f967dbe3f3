//! Arbitrary bytes as a private key file (JWK with `d`, or PKCS #8 / SEC 1 PEM): it answers, never
//! panics, and an accepted key signs what its own public key verifies.
#![no_main]

use agentteams_mcp::crypto::jwk::Jwk;
use agentteams_mcp::crypto::private_key::{public_jwk, read_private_key};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(loaded) = read_private_key(data) {
        let signature = loaded.key.sign_p1363(data);
        assert!(loaded
            .key
            .public_key()
            .verify_p1363(data, &signature)
            .is_ok());
        assert!(Jwk::from_json(&public_jwk(&loaded.key, loaded.kid.as_deref())).is_ok());
    }
});
