//! JSON Web Keys (RFC 7517) and key sets for signature verification: RSA (`n`, `e`), EC P-256
//! (`crv`, `x`, `y`) and OKP Ed25519 (`crv`, `x`, RFC 8037), read from the project's JSON strictly.
//!
//! Strict means: every binary member is unpadded base64url with one encoding
//! ([`crate::base64::decode_url`]); RSA's `n` and `e` use the fewest octets
//! (RFC 7518 §2, "Base64urlUInt"); EC coordinates are the full 32 bytes (RFC 7518 §6.2.1.2);
//! members of the wrong JSON type are errors; a key carrying private members (`d`, `p`, `q`, ...)
//! is refused, since a verifier's key set holding a private key is a leak to report, not to use;
//! and the key itself passes its type's checks (RSA size bounds, point on the curve, Ed25519 not
//! of small order). In a key set, keys of a type or curve not implemented here, keys whose `use`
//! is not `sig` and keys whose `key_ops` leave out `verify` are skipped as RFC 7517 §5 asks; a
//! malformed key of a known type fails the whole set, its error naming the member and the rule.
//! Sets hold at most [`MAX_JWKS_KEYS`] keys and are read from at most [`MAX_JWKS_BYTES`] bytes.

use super::error::Error;
use super::public_key::PublicKey;
use super::{ed25519, p256, rsa};
use crate::base64;
use crate::json::{self, Limits, Map, Value};

/// The most keys a key set may hold: issuers publish a handful (current, next, previous).
pub const MAX_JWKS_KEYS: usize = 64;
/// The largest key-set document read: 64 RSA-8192 keys are about 100 KB.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// The deepest JSON nesting accepted in a key set (`{"keys":[{...,"key_ops":[...]}]}` is 3).
const MAX_JWKS_DEPTH: usize = 8;

/// Members that only a private key has (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// One verification key with the members that select it.
#[derive(Clone, Debug)]
pub struct Jwk {
    /// `kid`: the key id a token's header names.
    pub kid: Option<String>,
    /// `alg`: when present, the only algorithm this key may verify.
    pub alg: Option<String>,
    pub key: PublicKey,
}

pub(super) fn optional_string<'a>(
    map: &'a Map,
    member: &'static str,
) -> Result<Option<&'a str>, Error> {
    match map.get(member) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::malformed(member, "JWK member is not a string")),
    }
}

pub(super) fn required_bytes(map: &Map, member: &'static str) -> Result<Vec<u8>, Error> {
    let text = optional_string(map, member)?
        .ok_or(Error::malformed(member, "required JWK member is missing"))?;
    base64::decode_url(text).ok_or(Error::malformed(
        member,
        "JWK member is not unpadded base64url",
    ))
}

/// A Base64urlUInt (RFC 7518 §2): nonempty, no leading zero octet.
fn required_uint(map: &Map, member: &'static str) -> Result<Vec<u8>, Error> {
    let bytes = required_bytes(map, member)?;
    match bytes.first() {
        None => Err(Error::malformed(member, "JWK integer is empty")),
        Some(0) if bytes.len() > 1 => Err(Error::malformed(
            member,
            "JWK integer has a leading zero octet",
        )),
        _ => Ok(bytes),
    }
}

pub(super) fn coordinate(map: &Map, member: &'static str) -> Result<[u8; 32], Error> {
    required_bytes(map, member)?
        .try_into()
        .map_err(|_| Error::malformed(member, "JWK coordinate is not 32 bytes"))
}

/// One JWK object: `Ok(None)` for a key this module does not use (type, curve or `use`), which a
/// key set skips.
fn read(value: &Value) -> Result<Option<Jwk>, Error> {
    let map = value
        .as_object()
        .ok_or(Error::malformed("JWK", "not a JSON object"))?;
    let kty = optional_string(map, "kty")?
        .ok_or(Error::malformed("kty", "required JWK member is missing"))?;
    if PRIVATE_MEMBERS.iter().any(|m| map.contains_key(m)) {
        return Err(Error::KeyRejected(
            "JWK holds private key material (d, p, q, k, ...); publish only public keys",
        ));
    }
    if optional_string(map, "use")?.is_some_and(|u| u != "sig") {
        return Ok(None);
    }
    // RFC 7517 §4.3: a key whose operations are listed without "verify" is not for this.
    match map.get("key_ops") {
        None => {}
        Some(Value::Array(ops)) if ops.iter().any(|op| op.as_str() == Some("verify")) => {}
        Some(Value::Array(_)) => return Ok(None),
        Some(_) => return Err(Error::malformed("key_ops", "JWK member is not an array")),
    }
    let kid = optional_string(map, "kid")?.map(str::to_owned);
    let alg = optional_string(map, "alg")?.map(str::to_owned);
    let key = match kty {
        "RSA" => PublicKey::Rsa(rsa::PublicKey::from_components(
            &required_uint(map, "n")?,
            &required_uint(map, "e")?,
        )?),
        "EC" => match optional_string(map, "crv")? {
            Some("P-256") => PublicKey::P256(p256::PublicKey::from_coordinates(
                &coordinate(map, "x")?,
                &coordinate(map, "y")?,
            )?),
            Some(_) => return Ok(None),
            None => return Err(Error::malformed("crv", "required JWK member is missing")),
        },
        "OKP" => match optional_string(map, "crv")? {
            Some("Ed25519") => {
                PublicKey::Ed25519(ed25519::PublicKey::from_bytes(&required_bytes(map, "x")?)?)
            }
            Some(_) => return Ok(None),
            None => return Err(Error::malformed("crv", "required JWK member is missing")),
        },
        _ => return Ok(None),
    };
    Ok(Some(Jwk { kid, alg, key }))
}

impl Jwk {
    /// One key from a parsed JWK object; a key of a type or curve not implemented here is an
    /// [`Error::Unsupported`].
    pub fn from_json(value: &Value) -> Result<Jwk, Error> {
        read(value)?.ok_or_else(|| {
            Error::Unsupported("JWK (key type, curve or use not verified here)".into())
        })
    }
}

/// A JWK Set: the verification keys of one issuer.
#[derive(Clone, Debug, Default)]
pub struct Jwks {
    keys: Vec<Jwk>,
}

impl Jwks {
    /// Reads a key-set document (`{"keys": [...]}`).
    pub fn parse(document: &[u8]) -> Result<Jwks, Error> {
        if document.len() > MAX_JWKS_BYTES {
            return Err(Error::malformed("JWK Set", "larger than the size limit"));
        }
        let limits = Limits {
            max_depth: MAX_JWKS_DEPTH,
            ..Limits::default()
        };
        let value = json::parse_with_limits(document, limits)
            .map_err(|_| Error::malformed("JWK Set", "not valid JSON within the depth limit"))?;
        Jwks::from_json(&value)
    }

    /// A key set from a parsed `{"keys": [...]}` object.
    pub fn from_json(value: &Value) -> Result<Jwks, Error> {
        let keys = value
            .get("keys")
            .and_then(Value::as_array)
            .ok_or(Error::malformed("JWK Set", "no \"keys\" array"))?;
        if keys.len() > MAX_JWKS_KEYS {
            return Err(Error::malformed("JWK Set", "more keys than the limit"));
        }
        let mut out = Vec::new();
        for key in keys.iter() {
            if let Some(jwk) = read(key)? {
                out.push(jwk);
            }
        }
        Ok(Jwks { keys: out })
    }

    pub fn from_keys(keys: Vec<Jwk>) -> Jwks {
        Jwks { keys }
    }

    pub fn keys(&self) -> &[Jwk] {
        &self.keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7515 appendix A.3's P-256 key and RFC 8037 appendix A.2's Ed25519 key.
    const EC: &str = r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#;
    const OKP: &str =
        r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#;

    fn jwk(text: &str) -> Result<Jwk, Error> {
        Jwk::from_json(&json::parse(text.as_bytes()).unwrap())
    }

    /// `text` with `member`'s value replaced by `value` (raw JSON).
    fn with(text: &str, member: &str, value: &str) -> String {
        let mut map = json::parse(text.as_bytes())
            .unwrap()
            .as_object()
            .unwrap()
            .clone();
        map.insert(member, json::parse(value.as_bytes()).unwrap());
        json::to_string(&Value::Object(map))
    }

    #[test]
    fn rfc_keys_parse() {
        assert!(matches!(jwk(EC).unwrap().key, PublicKey::P256(_)));
        assert!(matches!(jwk(OKP).unwrap().key, PublicKey::Ed25519(_)));
    }

    #[test]
    fn every_malformed_member_is_named() {
        let cases = [
            (
                with(EC, "x", r#""f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU=""#),
                "x",
            ),
            (
                with(EC, "x", r#""f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVE""#),
                "x",
            ),
            (with(EC, "y", "7"), "y"),
            (with(EC, "kty", "null"), "kty"),
            (
                with(OKP, "x", r#""11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR""#),
                "x",
            ),
            (
                with(OKP, "x", &format!("\"{}\"", "A".repeat(42))),
                "Ed25519 public key",
            ),
            (with(EC, "kid", "[]"), "kid"),
        ];
        for (text, what) in cases {
            match jwk(&text) {
                Err(Error::Malformed { what: found, .. }) => assert_eq!(found, what, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(
            jwk(&with(EC, "crv", r#""P-384""#)),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            jwk(&with(OKP, "crv", r#""X25519""#)),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            jwk(&with(EC, "use", r#""enc""#)),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            jwk(&with(EC, "key_ops", r#"["encrypt"]"#)),
            Err(Error::Unsupported(_))
        ));
        assert!(jwk(&with(EC, "key_ops", r#"["sign","verify"]"#)).is_ok());
        assert!(matches!(
            jwk(&with(EC, "key_ops", r#""verify""#)),
            Err(Error::Malformed {
                what: "key_ops",
                ..
            })
        ));
        assert!(matches!(
            jwk(r#"{"kty":"oct","k":"AA"}"#),
            Err(Error::KeyRejected(_))
        ));
        assert!(matches!(
            jwk(&with(EC, "d", r#""AA""#)),
            Err(Error::KeyRejected(_))
        ));
        assert!(matches!(
            jwk(&with(
                EC,
                "y",
                r#""x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a4""#
            )),
            Err(Error::KeyRejected(_))
        ));
        assert!(matches!(jwk("[]"), Err(Error::Malformed { .. })));
    }

    #[test]
    fn rsa_integers_must_be_minimal() {
        let n = crate::base64::encode_url(&[0xff; 256]);
        let good = format!(r#"{{"kty":"RSA","n":"{n}","e":"AQAB"}}"#);
        assert!(matches!(jwk(&good).unwrap().key, PublicKey::Rsa(_)));
        let padded_e = with(&good, "e", r#""AAEAAQ""#);
        assert_eq!(
            jwk(&padded_e).err(),
            Some(Error::malformed(
                "e",
                "JWK integer has a leading zero octet"
            ))
        );
        assert_eq!(
            jwk(&with(&good, "e", r#""""#)).err(),
            Some(Error::malformed("e", "JWK integer is empty"))
        );
        let short = with(
            &good,
            "n",
            &format!("\"{}\"", crate::base64::encode_url(&[0xff; 128])),
        );
        assert!(matches!(jwk(&short), Err(Error::KeyRejected(_))));
    }

    #[test]
    fn key_sets_skip_what_they_do_not_use_and_bound_what_they_read() {
        let set = format!(
            r#"{{"keys":[{EC},{OKP},{{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}},{{"kty":"oct"}}]}}"#
        )
        .replace(r#"{"kty":"oct"}"#, r#"{"kty":"foo"}"#);
        assert_eq!(Jwks::parse(set.as_bytes()).unwrap().keys().len(), 2);
        let many = format!(r#"{{"keys":[{}]}}"#, vec![OKP; MAX_JWKS_KEYS + 1].join(","));
        assert!(Jwks::parse(many.as_bytes()).is_err());
        assert!(Jwks::parse(&vec![b' '; MAX_JWKS_BYTES + 1]).is_err());
        assert!(Jwks::parse(b"{\"keys\":[[[[[[[[[[]]]]]]]]]]}").is_err());
        assert!(Jwks::parse(b"{}").is_err());
        assert!(Jwks::parse(b"{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\"}]}").is_err());
        for len in 0..set.len() {
            assert!(
                Jwks::parse(&set.as_bytes()[..len]).is_err(),
                "prefix of {len} bytes"
            );
        }
    }
}
