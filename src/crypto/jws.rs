//! JWS compact serialization (RFC 7515): verification against a JWK Set with the JWT claims it
//! carries (RFC 7519), the signature half of access-token validation, and ES256 signing
//! ([`sign_es256`]) for the client assertions of `private_key_jwt`. Claim checks (`iss`, `aud`,
//! `exp`, ...) are the caller's, on the claims [`verify`] returns.
//!
//! The rules, each a named error:
//! - the token is at most [`MAX_TOKEN_LEN`] bytes, three base64url parts (five is a JWE, refused);
//! - the header is a JSON object with no duplicate member names and an `alg` string;
//!   `alg: none` is always refused, whatever `accepted` says; an algorithm must be both implemented
//!   ([`Algorithm`]: RS256/384/512, PS256/384/512, ES256, EdDSA) and in the caller's `accepted`
//!   list. HMAC algorithms are not implemented, so the classic confusion (an RS256 public key used
//!   as an HS256 secret) is refused by name;
//! - a header with `crit` is refused (no extension is understood, RFC 7515 §4.1.11); keys named in
//!   the header (`jwk`, `jku`, `x5u`, `x5c`) are ignored: keys come only from the caller's set;
//! - the key: when the header has a `kid`, only keys with that `kid`; then only keys whose type
//!   fits the algorithm (RSA for RS/PS, P-256 for ES256, Ed25519 for EdDSA) and whose own `alg`, if
//!   any, is the header's; none left, or more than [`MAX_CANDIDATE_KEYS`] (a set of many keys
//!   and a token without `kid`), is a refusal naming why; the signature must verify under one of
//!   them;
//! - the payload is read only after the signature verifies; for [`verify`] it must be a JSON
//!   object without duplicate member names.

use super::error::Error;
use super::hash_alg::HashAlg;
use super::jwk::Jwks;
use super::p256_sign::SigningKey;
use super::public_key::PublicKey;
use crate::base64;
use crate::json::{self, Limits, Map, Value};

/// The longest compact token read: access tokens are a few KB; this bounds the work before any
/// signature check.
pub const MAX_TOKEN_LEN: usize = 16 * 1024;
/// The most keys one token is tried against: without a `kid`, every key of the set that fits the
/// algorithm is a candidate, and a set of many large RSA keys would otherwise let one token cost
/// that many verifications.
pub const MAX_CANDIDATE_KEYS: usize = 4;
/// The deepest JSON nesting accepted in a header or claims set.
const MAX_JSON_DEPTH: usize = 16;

/// The signature algorithms implemented (RFC 7518 §3.1, RFC 8037 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    RS256,
    RS384,
    RS512,
    PS256,
    PS384,
    PS512,
    ES256,
    EdDSA,
}

impl Algorithm {
    pub const ALL: [Algorithm; 8] = [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::ES256,
        Algorithm::EdDSA,
    ];

    /// The `alg` header value.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::RS256 => "RS256",
            Algorithm::RS384 => "RS384",
            Algorithm::RS512 => "RS512",
            Algorithm::PS256 => "PS256",
            Algorithm::PS384 => "PS384",
            Algorithm::PS512 => "PS512",
            Algorithm::ES256 => "ES256",
            Algorithm::EdDSA => "EdDSA",
        }
    }

    /// The algorithm an `alg` value names, if implemented (names are case-sensitive).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Verifies `signature` over `input` with `key`; a key of another type is refused.
    fn verify(self, key: &PublicKey, input: &[u8], signature: &[u8]) -> Result<(), Error> {
        let hash = |n: u16| match n {
            256 => HashAlg::Sha256,
            384 => HashAlg::Sha384,
            _ => HashAlg::Sha512,
        };
        match (self, key) {
            (Algorithm::RS256, PublicKey::Rsa(k)) => k.verify_pkcs1v15(hash(256), input, signature),
            (Algorithm::RS384, PublicKey::Rsa(k)) => k.verify_pkcs1v15(hash(384), input, signature),
            (Algorithm::RS512, PublicKey::Rsa(k)) => k.verify_pkcs1v15(hash(512), input, signature),
            (Algorithm::PS256, PublicKey::Rsa(k)) => k.verify_pss(hash(256), input, signature),
            (Algorithm::PS384, PublicKey::Rsa(k)) => k.verify_pss(hash(384), input, signature),
            (Algorithm::PS512, PublicKey::Rsa(k)) => k.verify_pss(hash(512), input, signature),
            (Algorithm::ES256, PublicKey::P256(k)) => k.verify_p1363(input, signature),
            (Algorithm::EdDSA, PublicKey::Ed25519(k)) => k.verify(input, signature),
            _ => Err(Error::Refused(format!(
                "key type does not fit algorithm {}",
                self.name()
            ))),
        }
    }

    fn fits(self, key: &PublicKey) -> bool {
        matches!(
            (self, key),
            (
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512,
                PublicKey::Rsa(_)
            ) | (Algorithm::ES256, PublicKey::P256(_))
                | (Algorithm::EdDSA, PublicKey::Ed25519(_))
        )
    }
}

/// Text another party chose, made safe to put in an error message: at most 40 printable ASCII
/// characters, anything else shown as `?`.
pub(crate) fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect();
    if text.chars().count() > 40 {
        out.push_str("...");
    }
    out
}

/// Parses `bytes` as a JSON object with no member name twice.
fn json_object(bytes: &[u8], what: &'static str) -> Result<Map, Error> {
    let limits = Limits {
        max_depth: MAX_JSON_DEPTH,
        ..Limits::default()
    };
    let value = json::parse_with_limits(bytes, limits)
        .map_err(|_| Error::malformed(what, "not valid JSON within the depth limit"))?;
    let Value::Object(map) = value else {
        return Err(Error::malformed(what, "not a JSON object"));
    };
    let mut names: Vec<&str> = map.keys().map(|key| key.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(Error::malformed(what, "a member name appears twice"));
    }
    Ok(map)
}

fn decode_part(part: &str, what: &'static str) -> Result<Vec<u8>, Error> {
    base64::decode_url(part).ok_or(Error::malformed(what, "not unpadded base64url"))
}

/// Verifies a compact JWS against `jwks`, allowing only the `accepted` algorithms, and returns its
/// payload bytes (for a JWS whose payload is not a JWT claims set).
pub fn verify_payload(
    compact: &str,
    jwks: &Jwks,
    accepted: &[Algorithm],
) -> Result<Vec<u8>, Error> {
    if compact.len() > MAX_TOKEN_LEN {
        return Err(Error::malformed("JWS", "longer than the token size limit"));
    }
    let parts: Vec<&str> = compact.split('.').collect();
    match parts.len() {
        3 => {}
        5 => {
            return Err(Error::Unsupported(
                "JWE (an encrypted token; only signed tokens are read)".into(),
            ))
        }
        _ => return Err(Error::malformed("JWS", "not three dot-separated parts")),
    }
    let header = json_object(&decode_part(parts[0], "JWS header")?, "JWS header")?;
    let alg = match header.get("alg") {
        Some(Value::String(alg)) => alg.as_str(),
        Some(_) => return Err(Error::malformed("JWS header", "alg is not a string")),
        None => return Err(Error::malformed("JWS header", "no alg")),
    };
    if alg.eq_ignore_ascii_case("none") {
        return Err(Error::Refused(
            "alg none: an unsigned token is never accepted".into(),
        ));
    }
    let algorithm = Algorithm::from_name(alg)
        .ok_or_else(|| Error::Refused(format!("algorithm {} is not implemented", shown(alg))))?;
    if !accepted.contains(&algorithm) {
        return Err(Error::Refused(format!(
            "algorithm {} is not in the accepted list",
            algorithm.name()
        )));
    }
    if header.contains_key("crit") {
        return Err(Error::Refused(
            "crit header: no JWS extension is understood".into(),
        ));
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.as_str()),
        Some(_) => return Err(Error::malformed("JWS header", "kid is not a string")),
    };
    let named: Vec<_> = jwks
        .keys()
        .iter()
        .filter(|k| kid.is_none() || k.kid.as_deref() == kid)
        .collect();
    if named.is_empty() {
        return Err(Error::Refused(match kid {
            Some(kid) => format!("no key with kid {}", shown(kid)),
            None => "the key set has no key".into(),
        }));
    }
    let candidates: Vec<_> = named
        .into_iter()
        .filter(|k| algorithm.fits(&k.key) && k.alg.as_deref().is_none_or(|a| a == alg))
        .collect();
    if candidates.is_empty() {
        return Err(Error::Refused(format!(
            "no key of the type and alg that {} needs{}",
            algorithm.name(),
            if kid.is_some() { " under that kid" } else { "" }
        )));
    }
    if candidates.len() > MAX_CANDIDATE_KEYS {
        return Err(Error::Refused(format!(
            "{} keys fit {} for this token; at most {MAX_CANDIDATE_KEYS} are tried (a kid names one)",
            candidates.len(),
            algorithm.name()
        )));
    }
    let signature = decode_part(parts[2], "JWS signature")?;
    let input_len = parts[0].len() + 1 + parts[1].len();
    let signing_input = &compact.as_bytes()[..input_len];
    let mut outcome = Err(Error::BadSignature);
    for candidate in candidates {
        outcome = algorithm.verify(&candidate.key, signing_input, &signature);
        if outcome.is_ok() {
            break;
        }
    }
    outcome?;
    decode_part(parts[1], "JWS payload")
}

/// Verifies a compact JWS (a JWT) as [`verify_payload`] does and returns its claims, which must
/// be a JSON object.
pub fn verify(compact: &str, jwks: &Jwks, accepted: &[Algorithm]) -> Result<Map, Error> {
    json_object(&verify_payload(compact, jwks, accepted)?, "JWT claims")
}

/// Header members [`sign_es256`] sets or never writes: `alg` is the signer's, and `crit` would
/// ask verifiers for an extension this signer does not implement.
const SIGNER_HEADER_MEMBERS: [&str; 2] = ["alg", "crit"];

/// Signs `payload` with `key` as a compact JWS whose protected header is `{"alg":"ES256"}`
/// followed by `header`'s members (`kid`, `typ`, ...). A `header` naming `alg` or `crit` is
/// refused. The signature is deterministic (RFC 6979), so the same input gives the same token.
pub fn sign_es256(header: &Map, payload: &[u8], key: &SigningKey) -> Result<String, Error> {
    if let Some(name) = SIGNER_HEADER_MEMBERS
        .iter()
        .find(|name| header.contains_key(name))
    {
        return Err(Error::Refused(format!(
            "header member {name} is the signer's to set"
        )));
    }
    let mut protected = Map::with_capacity(header.len() + 1);
    protected.insert("alg", Value::from(Algorithm::ES256.name()));
    for (name, value) in header.iter() {
        protected.insert(name.as_str(), value.clone());
    }
    let mut token = base64::encode_url(json::to_string(&Value::Object(protected)).as_bytes());
    token.push('.');
    token.push_str(&base64::encode_url(payload));
    let signature = key.sign_p1363(token.as_bytes());
    token.push('.');
    token.push_str(&base64::encode_url(&signature));
    Ok(token)
}
