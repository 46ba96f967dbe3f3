//! Client assertions for `private_key_jwt` token-endpoint authentication (RFC 7523 §2.2 and §3,
//! RFC 7521 §4.2, OpenID Connect Core §9): the short-lived ES256-signed JWT a client sends as
//! `client_assertion` with `client_assertion_type` [`CLIENT_ASSERTION_TYPE`].
//!
//! The claims are `iss` = `sub` = the client id, `aud` = what the caller names (the token
//! endpoint URL or the authorization server's issuer identifier; RFC 7523 §3 allows either, and
//! the caller knows which its server wants), `iat` now, `exp` [`ASSERTION_LIFETIME_SECS`] later,
//! and `jti` [`JTI_BYTES`] random bytes from the operating system (`/dev/urandom`), so a server
//! can refuse a replay. The header is `{"alg":"ES256","typ":"JWT"}` with the key's `kid` when it
//! has one. The client id and audience come from configuration and from discovered metadata, so
//! each is checked: not empty, at most [`MAX_CLAIM_LEN`] bytes.

use super::jws;
use super::p256_sign::SigningKey;
use crate::base64;
use crate::json::{self, Map, Value};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// The `client_assertion_type` form parameter that goes with the assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long an assertion is valid: it is made for one token request, so a minute covers the
/// request and a modest clock difference, and a stolen one expires soon.
pub const ASSERTION_LIFETIME_SECS: u64 = 60;
/// Random bytes in `jti`: 128 bits make a collision between two assertions negligible.
pub const JTI_BYTES: usize = 16;
/// The longest client id or audience accepted, in bytes.
pub const MAX_CLAIM_LEN: usize = 2048;

/// Why an assertion was not made.
#[derive(Debug)]
pub enum AssertionError {
    /// A claim value the caller gave breaks a rule: `claim` names it.
    Claim {
        claim: &'static str,
        rule: &'static str,
    },
    /// The random source could not be read.
    Random(std::io::Error),
    /// The system clock is before 1970.
    Clock,
}

impl fmt::Display for AssertionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssertionError::Claim { claim, rule } => {
                write!(f, "client assertion claim {claim}: {rule}")
            }
            AssertionError::Random(e) => write!(f, "{e}"),
            AssertionError::Clock => f.write_str("the system clock is before 1970"),
        }
    }
}

impl std::error::Error for AssertionError {}

/// What an assertion says and how it is signed.
#[derive(Clone, Copy, Debug)]
pub struct AssertionRequest<'a> {
    /// The client id: `iss` and `sub`.
    pub client_id: &'a str,
    /// `aud`: the token endpoint URL or the authorization server's issuer identifier.
    pub audience: &'a str,
    /// The `kid` of the registered key, written in the header when given.
    pub kid: Option<&'a str>,
}

/// A client assertion for `request`, signed with `key`, issued now with a fresh random `jti`.
pub fn client_assertion(
    request: &AssertionRequest<'_>,
    key: &SigningKey,
) -> Result<String, AssertionError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| AssertionError::Clock)?
        .as_secs();
    client_assertion_at(request, key, now, &random_jti()?)
}

/// A client assertion issued at `issued_at` (seconds since 1970) with the given `jti`: the pure
/// core of [`client_assertion`], for tests and for callers with their own clock.
pub fn client_assertion_at(
    request: &AssertionRequest<'_>,
    key: &SigningKey,
    issued_at: u64,
    jti: &str,
) -> Result<String, AssertionError> {
    for (claim, value) in [
        ("client_id", request.client_id),
        ("aud", request.audience),
        ("jti", jti),
    ] {
        if value.is_empty() {
            return Err(AssertionError::Claim {
                claim,
                rule: "is empty",
            });
        }
        if value.len() > MAX_CLAIM_LEN {
            return Err(AssertionError::Claim {
                claim,
                rule: "is longer than the limit",
            });
        }
    }
    let expires = issued_at
        .checked_add(ASSERTION_LIFETIME_SECS)
        .ok_or(AssertionError::Clock)?;
    let claims = json::obj([
        ("iss", Value::from(request.client_id)),
        ("sub", Value::from(request.client_id)),
        ("aud", Value::from(request.audience)),
        ("iat", Value::from(issued_at)),
        ("exp", Value::from(expires)),
        ("jti", Value::from(jti)),
    ]);
    let mut header = Map::new();
    header.insert("typ", Value::from("JWT"));
    if let Some(kid) = request.kid {
        header.insert("kid", Value::from(kid));
    }
    Ok(
        jws::sign_es256(&header, json::to_string(&claims).as_bytes(), key)
            .expect("the header names neither alg nor crit"),
    )
}

/// [`JTI_BYTES`] bytes from the operating system's random source, base64url.
pub fn random_jti() -> Result<String, AssertionError> {
    let bytes: [u8; JTI_BYTES] = crate::random::array().map_err(AssertionError::Random)?;
    Ok(base64::encode_url(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::jwk::{Jwk, Jwks};
    use crate::crypto::jws::Algorithm;
    use crate::crypto::private_key::public_jwk;

    fn key() -> SigningKey {
        SigningKey::from_scalar(&[0x5a; 32]).unwrap()
    }

    fn keys_of(key: &SigningKey, kid: &str) -> Jwks {
        Jwks::from_keys(vec![Jwk::from_json(&public_jwk(key, Some(kid))).unwrap()])
    }

    const REQUEST: AssertionRequest<'static> = AssertionRequest {
        client_id: "mcp-client",
        audience: "https://as.example/token",
        kid: Some("k1"),
    };

    #[test]
    fn an_assertion_verifies_with_the_published_key_and_carries_the_rfc_7523_claims() {
        let key = key();
        let token = client_assertion_at(&REQUEST, &key, 1_800_000_000, "j-1").unwrap();
        let header = base64::decode_url(token.split('.').next().unwrap()).unwrap();
        assert_eq!(header, br#"{"alg":"ES256","typ":"JWT","kid":"k1"}"#);
        let claims = jws::verify(&token, &keys_of(&key, "k1"), &[Algorithm::ES256]).unwrap();
        let expected = json::obj([
            ("iss", Value::from("mcp-client")),
            ("sub", Value::from("mcp-client")),
            ("aud", Value::from("https://as.example/token")),
            ("iat", Value::from(1_800_000_000u64)),
            (
                "exp",
                Value::from(1_800_000_000u64 + ASSERTION_LIFETIME_SECS),
            ),
            ("jti", Value::from("j-1")),
        ]);
        assert_eq!(Value::Object(claims), expected);
        // Another key, or a changed claim, does not verify.
        let other = SigningKey::from_scalar(&[0x5b; 32]).unwrap();
        assert!(jws::verify(&token, &keys_of(&other, "k1"), &[Algorithm::ES256]).is_err());
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = base64::encode_url(br#"{"iss":"mcp-client","sub":"admin"}"#);
        parts[1] = &forged;
        assert!(jws::verify(&parts.join("."), &keys_of(&key, "k1"), &[Algorithm::ES256]).is_err());
    }

    #[test]
    fn each_assertion_has_a_fresh_jti_and_the_current_time() {
        let key = key();
        let before = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let request = AssertionRequest {
            kid: None,
            ..REQUEST
        };
        let tokens: Vec<String> = (0..2)
            .map(|_| client_assertion(&request, &key).unwrap())
            .collect();
        assert_ne!(tokens[0], tokens[1]);
        let mut jtis = Vec::new();
        for token in &tokens {
            let header = base64::decode_url(token.split('.').next().unwrap()).unwrap();
            assert_eq!(header, br#"{"alg":"ES256","typ":"JWT"}"#);
            let claims = jws::verify(token, &keys_of(&key, "k"), &[Algorithm::ES256]).unwrap();
            let iat = claims.get("iat").and_then(Value::as_u64).unwrap();
            assert!(iat >= before && iat <= before + 60, "{iat}");
            let jti = claims
                .get("jti")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned();
            assert_eq!(base64::decode_url(&jti).map(|b| b.len()), Some(JTI_BYTES));
            jtis.push(jti);
        }
        assert_ne!(jtis[0], jtis[1]);
    }

    #[test]
    fn empty_or_oversized_claims_are_refused_by_name() {
        let key = key();
        let long = "a".repeat(MAX_CLAIM_LEN + 1);
        let cases = [
            (
                AssertionRequest {
                    client_id: "",
                    ..REQUEST
                },
                "j",
                "client assertion claim client_id: is empty",
            ),
            (
                AssertionRequest {
                    audience: &long,
                    ..REQUEST
                },
                "j",
                "client assertion claim aud: is longer than the limit",
            ),
            (REQUEST, "", "client assertion claim jti: is empty"),
        ];
        for (request, jti, message) in cases {
            let error = client_assertion_at(&request, &key, 0, jti).unwrap_err();
            assert_eq!(error.to_string(), message);
        }
        assert!(matches!(
            client_assertion_at(&REQUEST, &key, u64::MAX, "j"),
            Err(AssertionError::Clock)
        ));
        let exact = "a".repeat(MAX_CLAIM_LEN);
        let request = AssertionRequest {
            audience: &exact,
            ..REQUEST
        };
        assert!(client_assertion_at(&request, &key, 0, "j").is_ok());
    }

    #[test]
    fn the_signer_sets_alg_and_never_writes_crit() {
        let key = key();
        for name in ["alg", "crit"] {
            let mut header = Map::new();
            header.insert(name, Value::from("x"));
            assert_eq!(
                jws::sign_es256(&header, b"{}", &key),
                Err(crate::crypto::error::Error::Refused(format!(
                    "header member {name} is the signer's to set"
                )))
            );
        }
        // A payload that is not JSON signs and verifies as bytes.
        let token = jws::sign_es256(&Map::new(), b"\x00\xffbytes", &key).unwrap();
        assert_eq!(
            jws::verify_payload(&token, &keys_of(&key, "k"), &[Algorithm::ES256]).unwrap(),
            b"\x00\xffbytes"
        );
    }
}
