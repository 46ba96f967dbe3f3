//! PKCE (RFC 7636) with the S256 method only, and the random values a login needs (code
//! verifier, `state`), read from the operating system's random source.

use crate::base64;

/// Random bytes in a code verifier: 32 bytes make the 43-character verifier RFC 7636 §4.1
/// recommends (256 bits of entropy).
pub const VERIFIER_BYTES: usize = 32;

/// Random bytes in a `state` value.
pub const STATE_BYTES: usize = 16;

/// `n` bytes from the system random source ([`crate::random`]).
pub fn random_bytes(n: usize) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; n];
    crate::random::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// A random value in base64url without padding, from `n` random bytes.
pub fn random_text(n: usize) -> Result<String, String> {
    Ok(base64::encode_url(&random_bytes(n)?))
}

/// A code verifier and the S256 challenge derived from it.
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    /// A fresh random verifier.
    pub fn new() -> Result<Pkce, String> {
        Ok(Pkce::from_verifier(random_text(VERIFIER_BYTES)?))
    }

    /// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
    pub fn from_verifier(verifier: String) -> Pkce {
        let challenge = base64::encode_url(&crate::sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(p.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn fresh_verifiers_are_43_characters_and_differ() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_eq!(a.verifier.len(), 43);
        assert!(a
            .verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.verifier, b.verifier);
        assert_ne!(
            random_text(STATE_BYTES).unwrap(),
            random_text(STATE_BYTES).unwrap()
        );
    }
}
