//! Reading an ES256 signing key from a file a user made: a private JWK (RFC 7518 §6.2.2, `kty`
//! EC, `crv` P-256, with `d`) or PEM (RFC 7468) holding PKCS #8 (`PRIVATE KEY`) or SEC 1
//! (`EC PRIVATE KEY`), and writing its public half as the JWK an authorization server registers.
//!
//! This parser is separate from the verifier's [`jwk`](super::jwk) on purpose: a verification key
//! set holding a private key is refused there, and a private key is accepted only here, where the
//! caller asked for one. Reading is strict, every refusal names its rule, and no error message
//! quotes the key's bytes:
//! - the input is at most [`MAX_PRIVATE_KEY_BYTES`]; JSON nesting at most 4;
//! - a JWK's `d` is exactly 32 bytes of unpadded base64url, `x` and `y` are required (RFC 7518
//!   §6.2.1 makes them part of every EC key) and must be the public key of `d`; `use`, when
//!   present, is `sig`; `key_ops`, when present, holds `sign`;
//! - PEM: one private-key block, optionally preceded by OpenSSL's `EC PARAMETERS` block naming
//!   P-256; no text outside blocks, no headers (an encrypted legacy key has `Proc-Type`), no
//!   `ENCRYPTED PRIVATE KEY` (decrypt it first); the body is padded standard base64 split into
//!   lines; the DER is read by [`der::parse_pkcs8_p256`] or [`der::parse_sec1_p256`];
//! - in every form `d` is in `[1, n-1]` and an included public key must match it
//!   ([`SigningKey::from_scalar_and_public`]).

use super::error::Error;
use super::jwk::{coordinate, optional_string, required_bytes};
use super::p256_sign::{SigningKey, SCALAR_LEN};
use super::{der, p256};
use crate::base64;
use crate::json::{self, Limits, Map, Value};

/// The largest key file read: a P-256 key is about 250 bytes as PEM and JSON.
pub const MAX_PRIVATE_KEY_BYTES: usize = 8 * 1024;
/// The deepest JSON nesting accepted in a private JWK (`key_ops` is an array inside the object).
const MAX_JWK_DEPTH: usize = 4;

/// A signing key with the key id its file gave (a JWK's `kid`), which the JWS header names.
#[derive(Debug)]
pub struct LoadedKey {
    pub key: SigningKey,
    pub kid: Option<String>,
}

/// Reads a private key file: a JSON object is a private JWK, anything else must be PEM.
pub fn read_private_key(bytes: &[u8]) -> Result<LoadedKey, Error> {
    if bytes.len() > MAX_PRIVATE_KEY_BYTES {
        return Err(Error::malformed(
            "private key file",
            "larger than the size limit",
        ));
    }
    if bytes.trim_ascii_start().starts_with(b"{") {
        let limits = Limits {
            max_depth: MAX_JWK_DEPTH,
            ..Limits::default()
        };
        let value = json::parse_with_limits(bytes, limits).map_err(|_| {
            Error::malformed("private JWK", "not valid JSON within the depth limit")
        })?;
        return from_jwk(&value);
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Error::malformed("private key file", "neither a JSON object nor PEM text"))?;
    Ok(LoadedKey {
        key: from_pem(text)?,
        kid: None,
    })
}

/// A signing key from a parsed private JWK object.
pub fn from_jwk(value: &Value) -> Result<LoadedKey, Error> {
    let map = value
        .as_object()
        .ok_or(Error::malformed("private JWK", "not a JSON object"))?;
    match optional_string(map, "kty")? {
        Some("EC") => {}
        Some(_) => {
            return Err(Error::Unsupported(
                "private key type (only EC P-256 signs here)".into(),
            ))
        }
        None => return Err(Error::malformed("kty", "required JWK member is missing")),
    }
    match optional_string(map, "crv")? {
        Some("P-256") => {}
        Some(_) => return Err(Error::Unsupported("elliptic curve (only P-256)".into())),
        None => return Err(Error::malformed("crv", "required JWK member is missing")),
    }
    if optional_string(map, "use")?.is_some_and(|u| u != "sig") {
        return Err(Error::KeyRejected("JWK use is not sig"));
    }
    match map.get("key_ops") {
        None => {}
        Some(Value::Array(ops)) if ops.iter().any(|op| op.as_str() == Some("sign")) => {}
        Some(Value::Array(_)) => return Err(Error::KeyRejected("JWK key_ops leave out sign")),
        Some(_) => return Err(Error::malformed("key_ops", "JWK member is not an array")),
    }
    if optional_string(map, "alg")?.is_some_and(|alg| alg != "ES256") {
        return Err(Error::KeyRejected("JWK alg is not ES256"));
    }
    let d: [u8; SCALAR_LEN] = required_bytes(map, "d")?
        .try_into()
        .map_err(|_| Error::malformed("d", "JWK private scalar is not 32 bytes"))?;
    let public = p256::PublicKey::from_coordinates(&coordinate(map, "x")?, &coordinate(map, "y")?)?;
    Ok(LoadedKey {
        key: SigningKey::from_scalar_and_public(&d, &public)?,
        kid: optional_string(map, "kid")?.map(str::to_owned),
    })
}

/// One `-----BEGIN label-----` ... `-----END label-----` block: its label and decoded body.
struct PemBlock<'a> {
    label: &'a str,
    der: Vec<u8>,
}

/// The blocks of a PEM text, strictly: blank lines may separate blocks, nothing else may.
fn pem_blocks(text: &str) -> Result<Vec<PemBlock<'_>>, Error> {
    let what = "PEM private key";
    let mut blocks = Vec::new();
    let mut lines = text
        .lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line));
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        let label = line
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
            .ok_or(Error::malformed(what, "text outside a BEGIN/END block"))?;
        let mut body = String::new();
        let mut ended = false;
        for line in lines.by_ref() {
            if let Some(end) = line
                .strip_prefix("-----END ")
                .and_then(|rest| rest.strip_suffix("-----"))
            {
                if end != label {
                    return Err(Error::malformed(what, "END label differs from BEGIN label"));
                }
                ended = true;
                break;
            }
            if line.contains(':') {
                return Err(Error::Unsupported(
                    "PEM headers (an encrypted key? decrypt it first)".into(),
                ));
            }
            body.push_str(line.trim_end());
        }
        if !ended {
            return Err(Error::malformed(what, "no END line"));
        }
        let der = base64::decode(&body).ok_or(Error::malformed(
            what,
            "block body is not padded standard base64",
        ))?;
        blocks.push(PemBlock { label, der });
    }
    Ok(blocks)
}

/// A signing key from PEM: `PRIVATE KEY` (PKCS #8) or `EC PRIVATE KEY` (SEC 1), the latter
/// optionally after an `EC PARAMETERS` block naming P-256.
pub fn from_pem(text: &str) -> Result<SigningKey, Error> {
    let what = "PEM private key";
    let mut blocks = pem_blocks(text)?;
    if blocks.len() == 2 && blocks[0].label == "EC PARAMETERS" {
        if !der::is_secp256r1_parameters(&blocks[0].der) {
            return Err(Error::Unsupported(
                "EC PARAMETERS for a curve other than P-256".into(),
            ));
        }
        blocks.remove(0);
    }
    let block = match blocks.as_slice() {
        [] => return Err(Error::malformed(what, "no PEM block")),
        [block] => block,
        _ => return Err(Error::malformed(what, "more than one key block")),
    };
    let parts = match block.label {
        "PRIVATE KEY" => der::parse_pkcs8_p256(&block.der)?,
        "EC PRIVATE KEY" => der::parse_sec1_p256(&block.der)?,
        "ENCRYPTED PRIVATE KEY" => {
            return Err(Error::Unsupported(
                "encrypted private key (decrypt it first: openssl pkcs8 -topk8 -nocrypt)".into(),
            ))
        }
        "PUBLIC KEY" => {
            return Err(Error::malformed(
                what,
                "a PUBLIC KEY block, not a private key",
            ))
        }
        _ => {
            return Err(Error::Unsupported(
                "PEM block label (PRIVATE KEY or EC PRIVATE KEY is read)".into(),
            ))
        }
    };
    match parts.public_point {
        Some(point) => {
            SigningKey::from_scalar_and_public(parts.scalar, &p256::PublicKey::from_sec1(point)?)
        }
        None => SigningKey::from_scalar(parts.scalar),
    }
}

/// The public half of `key` as the JWK an authorization server registers for
/// `private_key_jwt` (`use` sig, `alg` ES256, and `kid` when given).
pub fn public_jwk(key: &SigningKey, kid: Option<&str>) -> Value {
    let (x, y) = key.public_key().coordinates();
    let mut map = Map::new();
    map.insert("kty", Value::from("EC"));
    map.insert("crv", Value::from("P-256"));
    map.insert("x", Value::from(base64::encode_url(&x)));
    map.insert("y", Value::from(base64::encode_url(&y)));
    map.insert("use", Value::from("sig"));
    map.insert("alg", Value::from("ES256"));
    if let Some(kid) = kid {
        map.insert("kid", Value::from(kid));
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::hex::from_hex;
    use crate::crypto::jwk::Jwk;
    use crate::crypto::p256_sign::shared_x;
    use std::path::Path;

    /// RFC 6979 appendix A.2.5's P-256 key.
    const D: &str = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721";
    const X: &str = "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6";
    const Y: &str = "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299";
    const N: &str = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
    const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    const OID_P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];

    fn hex(text: &str) -> Vec<u8> {
        from_hex(text).unwrap()
    }

    /// One DER value (lengths below 256 are all these fixtures need).
    fn tlv(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
        let body = parts.concat();
        let mut out = vec![tag];
        if body.len() >= 0x80 {
            out.push(0x81);
        }
        out.push(u8::try_from(body.len()).unwrap());
        out.extend(body);
        out
    }

    /// `04 || x || y` of RFC 6979's key, or of the generator (another key) when `other`.
    fn point(other: bool) -> Vec<u8> {
        if other {
            hex(concat!(
                "04",
                "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
                "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"
            ))
        } else {
            hex(&format!("04{X}{Y}"))
        }
    }

    fn ec_private_key(d: &[u8], curve: Option<&[u8]>, public: Option<&[u8]>) -> Vec<u8> {
        let mut parts = vec![tlv(0x02, &[&[1]]), tlv(0x04, &[d])];
        if let Some(oid) = curve {
            parts.push(tlv(0xa0, &[&tlv(0x06, &[oid])]));
        }
        if let Some(point) = public {
            parts.push(tlv(0xa1, &[&tlv(0x03, &[&[0], point])]));
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        tlv(0x30, &refs)
    }

    fn pkcs8(curve: &[u8], inner: &[u8]) -> Vec<u8> {
        let algorithm = tlv(0x30, &[&tlv(0x06, &[OID_EC]), &tlv(0x06, &[curve])]);
        tlv(
            0x30,
            &[&tlv(0x02, &[&[0]]), &algorithm, &tlv(0x04, &[inner])],
        )
    }

    fn pem(label: &str, der: &[u8]) -> String {
        let body = base64::encode(der);
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|chunk| std::str::from_utf8(chunk).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    fn jwk_text(d: &str, x: &str, y: &str, extra: &str) -> String {
        let b = |h: &str| base64::encode_url(&hex(h));
        format!(
            r#"{{"kty":"EC","crv":"P-256","d":"{}","x":"{}","y":"{}"{extra}}}"#,
            b(d),
            b(x),
            b(y)
        )
    }

    fn public_of(result: Result<LoadedKey, Error>) -> Result<([u8; 32], [u8; 32]), Error> {
        result.map(|loaded| loaded.key.public_key().coordinates())
    }

    #[test]
    fn every_form_of_the_same_key_reads_to_the_same_public_key() {
        let d = hex(D);
        let expected = (hex(X).try_into().unwrap(), hex(Y).try_into().unwrap());
        let parameters = pem("EC PARAMETERS", &tlv(0x06, &[OID_P256]));
        let sec1 = pem(
            "EC PRIVATE KEY",
            &ec_private_key(&d, Some(OID_P256), Some(&point(false))),
        );
        let forms = [
            pem(
                "PRIVATE KEY",
                &pkcs8(OID_P256, &ec_private_key(&d, None, None)),
            ),
            pem(
                "PRIVATE KEY",
                &pkcs8(
                    OID_P256,
                    &ec_private_key(&d, Some(OID_P256), Some(&point(false))),
                ),
            ),
            sec1.clone(),
            format!("{parameters}{sec1}"),
            format!("\n{}", sec1.replace('\n', "\r\n")),
            jwk_text(D, X, Y, r#","kid":"k1","use":"sig","key_ops":["sign"]"#),
        ];
        for form in &forms {
            assert_eq!(
                public_of(read_private_key(form.as_bytes())),
                Ok(expected),
                "{form}"
            );
        }
        let loaded = read_private_key(forms[5].as_bytes()).unwrap();
        assert_eq!(loaded.kid.as_deref(), Some("k1"));
        // The published JWK is a verification key the verifier's reader accepts, and the
        // private JWK is still refused there.
        let published = Jwk::from_json(&public_jwk(&loaded.key, Some("k1"))).unwrap();
        assert_eq!(published.kid.as_deref(), Some("k1"));
        assert!(
            matches!(published.key, crate::crypto::public_key::PublicKey::P256(ref k) if k == loaded.key.public_key())
        );
        let private = json::parse(forms[5].as_bytes()).unwrap();
        assert!(matches!(
            Jwk::from_json(&private),
            Err(Error::KeyRejected(_))
        ));
    }

    #[test]
    fn broken_keys_are_refused_with_the_rule_named() {
        let d = hex(D);
        let inner = ec_private_key(&d, None, None);
        let good = pkcs8(OID_P256, &inner);
        let mut trailing = good.clone();
        trailing.push(0);
        let mut inner_trailing = inner.clone();
        inner_trailing[1] += 2;
        inner_trailing.extend([0x05, 0x00]);
        let zero = vec![0u8; 32];
        let malformed = |what, rule| Err(Error::malformed(what, rule));
        let scalar_range = Err(Error::KeyRejected(
            "P-256 private scalar d is not in [1, n-1]",
        ));
        let mismatch = Err(Error::KeyRejected(
            "P-256 public key does not match the private scalar",
        ));
        let p8 = "PKCS #8 private key";
        let cases: Vec<(String, Result<(), Error>)> = vec![
            (
                pem("PRIVATE KEY", &trailing),
                malformed(p8, "trailing bytes"),
            ),
            (
                pem("PRIVATE KEY", &pkcs8(OID_P256, &inner_trailing)),
                malformed(p8, "trailing bytes"),
            ),
            (
                pem("PRIVATE KEY", &pkcs8(OID_P384, &inner)),
                Err(Error::Unsupported("elliptic curve (only P-256)".into())),
            ),
            (
                pem("EC PRIVATE KEY", &ec_private_key(&d, Some(OID_P384), None)),
                Err(Error::Unsupported("elliptic curve (only P-256)".into())),
            ),
            (
                pem("EC PRIVATE KEY", &ec_private_key(&d, None, None)),
                malformed(
                    "SEC 1 EC private key",
                    "no curve parameters (RFC 5915 requires them)",
                ),
            ),
            (
                pem(
                    "PRIVATE KEY",
                    &pkcs8(OID_P256, &ec_private_key(&zero, None, None)),
                ),
                scalar_range.clone(),
            ),
            (
                pem(
                    "PRIVATE KEY",
                    &pkcs8(OID_P256, &ec_private_key(&hex(N), None, None)),
                ),
                scalar_range.clone(),
            ),
            (
                pem(
                    "PRIVATE KEY",
                    &pkcs8(OID_P256, &ec_private_key(&d[1..], None, None)),
                ),
                malformed(p8, "private key is not 32 bytes"),
            ),
            (
                pem(
                    "PRIVATE KEY",
                    &pkcs8(OID_P256, &ec_private_key(&d, None, Some(&point(true)))),
                ),
                mismatch.clone(),
            ),
            (
                pem("ENCRYPTED PRIVATE KEY", &good),
                Err(Error::Unsupported(
                    "encrypted private key (decrypt it first: openssl pkcs8 -topk8 -nocrypt)"
                        .into(),
                )),
            ),
            (
                pem("EC PRIVATE KEY", &good)
                    .replace("KEY-----\n", "KEY-----\nProc-Type: 4,ENCRYPTED\n"),
                Err(Error::Unsupported(
                    "PEM headers (an encrypted key? decrypt it first)".into(),
                )),
            ),
            (
                pem("PUBLIC KEY", &good),
                malformed("PEM private key", "a PUBLIC KEY block, not a private key"),
            ),
            (
                format!("{}junk\n", pem("PRIVATE KEY", &good)),
                malformed("PEM private key", "text outside a BEGIN/END block"),
            ),
            (
                format!("{}{}", pem("PRIVATE KEY", &good), pem("PRIVATE KEY", &good)),
                malformed("PEM private key", "more than one key block"),
            ),
            (
                pem("PRIVATE KEY", &good).replace("-----END PRIVATE", "-----END EC PRIVATE"),
                malformed("PEM private key", "END label differs from BEGIN label"),
            ),
            (
                pem("PRIVATE KEY", &good).replacen('M', "*", 1),
                malformed(
                    "PEM private key",
                    "block body is not padded standard base64",
                ),
            ),
            (String::new(), malformed("PEM private key", "no PEM block")),
            (
                " ".repeat(MAX_PRIVATE_KEY_BYTES + 1),
                malformed("private key file", "larger than the size limit"),
            ),
            (jwk_text(&"0".repeat(64), X, Y, ""), scalar_range.clone()),
            (jwk_text(N, X, Y, ""), scalar_range),
            (
                jwk_text(
                    D,
                    &point(true)[1..33]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                    &point(true)[33..]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                    "",
                ),
                mismatch,
            ),
            (
                jwk_text(&D[2..], X, Y, ""),
                malformed("d", "JWK private scalar is not 32 bytes"),
            ),
            (
                jwk_text(D, X, Y, "").replace(r#","y":"#, r#","z":"#),
                malformed("y", "required JWK member is missing"),
            ),
            (
                jwk_text(D, X, Y, "").replace("P-256", "P-384"),
                Err(Error::Unsupported("elliptic curve (only P-256)".into())),
            ),
            (
                jwk_text(D, X, Y, "").replace(r#""EC""#, r#""RSA""#),
                Err(Error::Unsupported(
                    "private key type (only EC P-256 signs here)".into(),
                )),
            ),
            (
                jwk_text(D, X, Y, r#","use":"enc""#),
                Err(Error::KeyRejected("JWK use is not sig")),
            ),
            (
                jwk_text(D, X, Y, r#","key_ops":["verify"]"#),
                Err(Error::KeyRejected("JWK key_ops leave out sign")),
            ),
            (
                jwk_text(D, X, Y, r#","alg":"RS256""#),
                Err(Error::KeyRejected("JWK alg is not ES256")),
            ),
            (
                jwk_text(D, X, Y, r#","key_ops":[[[[1]]]]"#),
                malformed("private JWK", "not valid JSON within the depth limit"),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                read_private_key(text.as_bytes()).map(|_| ()),
                expected,
                "{text}"
            );
        }
        assert_eq!(
            read_private_key(&[0xff, b'-']).map(|_| ()),
            Err(Error::malformed(
                "private key file",
                "neither a JSON object nor PEM text"
            ))
        );
    }

    #[test]
    fn every_truncation_of_a_key_file_is_an_error_not_a_panic() {
        let d = hex(D);
        let der = pkcs8(
            OID_P256,
            &ec_private_key(&d, Some(OID_P256), Some(&point(false))),
        );
        for len in 0..der.len() {
            assert!(der::parse_pkcs8_p256(&der[..len]).is_err(), "{len} bytes");
        }
        for text in [pem("PRIVATE KEY", &der), jwk_text(D, X, Y, r#","kid":"k""#)] {
            // The last byte of the PEM text is its final newline, which is optional.
            for len in 0..text.len() - 1 {
                assert!(read_private_key(&text.as_bytes()[..len]).is_err(), "{len}");
            }
        }
        for i in 0..der.len() {
            let mut bad = der.clone();
            bad[i] ^= 0x41;
            let _ = der::parse_pkcs8_p256(&bad);
        }
    }

    fn wycheproof(file: &str) -> Vec<Map> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/wycheproof")
            .join(file);
        let doc = json::parse(&std::fs::read(path).unwrap()).unwrap();
        let declared = doc.get("numberOfTests").and_then(Value::as_u64).unwrap();
        let tests: Vec<Map> = doc
            .get("testGroups")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .flat_map(|group| group.get("tests").and_then(Value::as_array).unwrap().iter())
            .map(|test| test.as_object().unwrap().clone())
            .collect();
        assert_eq!(tests.len() as u64, declared, "{file}");
        tests
    }

    /// Wycheproof's ECDH vectors carry private keys: each one must read (JWK with `d`, or PKCS #8
    /// PEM), its constant-time product with the peer's key must give the expected shared x
    /// wherever the peer key is accepted (every "valid" vector; "invalid" peers must be
    /// refused by the public-key readers), and signatures made with it must verify.
    #[test]
    fn wycheproof_ecdh_private_keys_read_multiply_and_sign() {
        let mut checked = 0;
        for (file, is_pem) in [
            ("ecdh_secp256r1_webcrypto_test.json", false),
            ("ecdh_secp256r1_pem_test.json", true),
        ] {
            for test in wycheproof(file) {
                let id = test.get("tcId").and_then(Value::as_u64).unwrap();
                let (key, peer) = if is_pem {
                    let private = test.get("private").and_then(Value::as_str).unwrap();
                    let public = test.get("public").and_then(Value::as_str).unwrap();
                    let body: String = public.lines().filter(|l| !l.starts_with("-----")).collect();
                    let peer = base64::decode(&body).and_then(|der| match der::parse_spki(&der) {
                        Ok(crate::crypto::public_key::PublicKey::P256(key)) => Some(key),
                        _ => None,
                    });
                    (read_private_key(private.as_bytes()).map(|l| l.key), peer)
                } else {
                    let peer = Jwk::from_json(test.get("public").unwrap())
                        .ok()
                        .and_then(|jwk| match jwk.key {
                            crate::crypto::public_key::PublicKey::P256(key) => Some(key),
                            _ => None,
                        });
                    (from_jwk(test.get("private").unwrap()).map(|l| l.key), peer)
                };
                let key = key.unwrap_or_else(|e| panic!("{file} #{id}: private key: {e}"));
                let result = test.get("result").and_then(Value::as_str).unwrap();
                match peer {
                    Some(peer) => {
                        assert_ne!(result, "invalid", "{file} #{id}: invalid peer accepted");
                        let shared = test.get("shared").and_then(Value::as_str).unwrap();
                        assert_eq!(
                            shared_x(&key, &peer).map(|x| x.to_vec()),
                            Some(hex(shared)),
                            "{file} #{id}"
                        );
                    }
                    None => assert_ne!(result, "valid", "{file} #{id}: valid peer refused"),
                }
                // The PEM file holds the same private keys as the JWK file: sign with each once.
                if !is_pem {
                    let message = format!("{file} {id}");
                    let signature = key.sign_p1363(message.as_bytes());
                    assert_eq!(
                        key.public_key()
                            .verify_p1363(message.as_bytes(), &signature),
                        Ok(()),
                        "{file} #{id}"
                    );
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 353 + 612);
    }
}
