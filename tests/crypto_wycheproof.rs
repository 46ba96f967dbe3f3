//! Runs every vector of the Wycheproof files vendored in `tests/data/wycheproof/` through the
//! library's verification code and checks each outcome exactly.
//!
//! "valid" must verify, "invalid" must be refused (by the key reader or by verification), and
//! "acceptable" must meet the decision this suite pins per vector (see `ACCEPTABLE`). Each file's
//! count of vectors checked must equal its `numberOfTests`, so a vector can never be skipped.

use agentteams_mcp::crypto::jwk::Jwk;
use agentteams_mcp::crypto::sha512::{Sha384, Sha512};
use agentteams_mcp::crypto::{self, der, from_hex, p256, HashAlg, PublicKey};
use agentteams_mcp::hmac::Hmac;
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::sha256::Sha256;
use std::path::Path;

/// The "acceptable" vectors and whether this library accepts them, with the reason.
/// RSA PKCS#1 v1.5 with a DigestInfo that omits the NULL parameter ("MissingNull"): refused,
/// because the expected encoding is built with the NULL and compared whole (RFC 8017 §9.2 note 1
/// allows either; one encoding keeps the comparison exact).
const ACCEPTABLE: &[(&str, &str, bool)] =
    &[("MissingNull", "refused: one DigestInfo encoding", false)];

fn hex(test: &Map, field: &str) -> Vec<u8> {
    let text = test
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("field {field} is a string"));
    from_hex(text).unwrap_or_else(|| panic!("field {field} is hex"))
}

fn text<'a>(map: &'a Map, field: &str) -> &'a str {
    map.get(field)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("field {field} is a string"))
}

/// The group's key read from its `publicKeyDer` (SubjectPublicKeyInfo) and, when the group has
/// one, from its JWK (`publicKeyJwk` or `keyJwk`); `None` where the reader refused it.
fn keys(group: &Map) -> Vec<Option<PublicKey>> {
    let mut keys = vec![der::parse_spki(&hex(group, "publicKeyDer")).ok()];
    if let Some(jwk) = group.get("publicKeyJwk").or_else(|| group.get("keyJwk")) {
        keys.push(Jwk::from_json(jwk).ok().map(|jwk| jwk.key));
    }
    keys
}

/// Runs `check(group, key, test) -> accepted` over every vector of `file`, with each key
/// `keys_of(group)` gives (for signatures: DER, and JWK where the file has one; both must give the
/// same outcome; a refused key refuses the vector), asserts each outcome and returns how many
/// vectors ran.
fn run<K>(
    file: &str,
    keys_of: impl Fn(&Map) -> Vec<Option<K>>,
    check: impl Fn(&Map, &K, &Map) -> bool,
) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/wycheproof")
        .join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = json::parse(&bytes).expect("a Wycheproof file is JSON");
    let declared = doc.get("numberOfTests").and_then(Value::as_u64).unwrap();
    let mut count = 0usize;
    let mut failures = Vec::new();
    for group in doc
        .get("testGroups")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
    {
        let group = group.as_object().unwrap();
        for test in group.get("tests").and_then(Value::as_array).unwrap().iter() {
            let test = test.as_object().unwrap();
            let id = test.get("tcId").and_then(Value::as_u64).unwrap();
            let outcomes: Vec<bool> = keys_of(group)
                .iter()
                .map(|key| key.as_ref().is_some_and(|key| check(group, key, test)))
                .collect();
            assert!(
                outcomes.windows(2).all(|pair| pair[0] == pair[1]),
                "{file} #{id}: the DER and JWK forms of the key disagree"
            );
            let accepted = outcomes[0];
            let expected = match text(test, "result") {
                "valid" => true,
                "invalid" => false,
                "acceptable" => {
                    let flags: Vec<&str> = test
                        .get("flags")
                        .and_then(Value::as_array)
                        .unwrap()
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    let decision = ACCEPTABLE
                        .iter()
                        .find(|(flag, _, _)| flags.contains(flag))
                        .unwrap_or_else(|| panic!("{file} #{id}: acceptable {flags:?} not pinned"));
                    decision.2
                }
                other => panic!("{file} #{id}: unknown result {other}"),
            };
            if accepted != expected {
                failures.push(format!(
                    "#{id} ({}): expected {}, got {}",
                    text(test, "comment"),
                    if expected { "accept" } else { "refuse" },
                    if accepted { "accept" } else { "refuse" }
                ));
            }
            count += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{file}: {} wrong outcomes:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(count > 0, "{file}: no vectors");
    assert_eq!(
        count as u64, declared,
        "{file}: vectors checked vs numberOfTests"
    );
    eprintln!("{file}: {count} vectors checked");
    count
}

fn hash_of(group: &Map) -> HashAlg {
    match text(group, "sha") {
        "SHA-256" => HashAlg::Sha256,
        "SHA-384" => HashAlg::Sha384,
        "SHA-512" => HashAlg::Sha512,
        other => panic!("unexpected hash {other}"),
    }
}

fn rsa_pkcs1(file: &str) {
    run(file, keys, |group, key, test| match key {
        PublicKey::Rsa(key) => key
            .verify_pkcs1v15(hash_of(group), &hex(test, "msg"), &hex(test, "sig"))
            .is_ok(),
        _ => panic!("{file}: not an RSA key"),
    });
}

fn rsa_pss(file: &str) {
    run(file, keys, |group, key, test| {
        // Only the JOSE parameters exist here: MGF1 with the message hash, salt = hash length.
        assert_eq!(text(group, "mgf"), "MGF1");
        assert_eq!(text(group, "mgfSha"), text(group, "sha"));
        let hash = hash_of(group);
        assert_eq!(
            group.get("sLen").and_then(Value::as_u64),
            Some(hash.output_len() as u64)
        );
        match key {
            PublicKey::Rsa(key) => key
                .verify_pss(hash, &hex(test, "msg"), &hex(test, "sig"))
                .is_ok(),
            _ => panic!("{file}: not an RSA key"),
        }
    });
}

#[test]
fn rsa_pkcs1v15_2048_sha256() {
    rsa_pkcs1("rsa_signature_2048_sha256_test.json");
}

#[test]
fn rsa_pkcs1v15_3072_sha384() {
    rsa_pkcs1("rsa_signature_3072_sha384_test.json");
}

#[test]
fn rsa_pkcs1v15_4096_sha512() {
    rsa_pkcs1("rsa_signature_4096_sha512_test.json");
}

#[test]
fn rsa_pss_2048_sha256_mgf1_32() {
    rsa_pss("rsa_pss_2048_sha256_mgf1_32_test.json");
}

#[test]
fn rsa_pss_2048_sha384_mgf1_48() {
    rsa_pss("rsa_pss_2048_sha384_mgf1_48_test.json");
}

#[test]
fn rsa_pss_4096_sha512_mgf1_64() {
    rsa_pss("rsa_pss_4096_sha512_mgf1_64_test.json");
}

/// Checks a P-256 group's hash and verifies with `verify` (DER or P1363 signature form).
fn ecdsa(file: &str, verify: fn(&p256::PublicKey, &[u8], &[u8]) -> bool) {
    run(file, keys, |group, key, test| {
        assert_eq!(text(group, "sha"), "SHA-256");
        match key {
            PublicKey::P256(key) => verify(key, &hex(test, "msg"), &hex(test, "sig")),
            _ => panic!("{file}: not a P-256 key"),
        }
    });
}

#[test]
fn ecdsa_p256_sha256_der() {
    ecdsa("ecdsa_secp256r1_sha256_test.json", |key, msg, sig| {
        key.verify_der(msg, sig).is_ok()
    });
}

#[test]
fn ecdsa_p256_sha256_p1363() {
    ecdsa("ecdsa_secp256r1_sha256_p1363_test.json", |key, msg, sig| {
        key.verify_p1363(msg, sig).is_ok()
    });
}

#[test]
fn ed25519() {
    run("ed25519_test.json", keys, |_, key, test| match key {
        PublicKey::Ed25519(key) => key.verify(&hex(test, "msg"), &hex(test, "sig")).is_ok(),
        _ => panic!("not an Ed25519 key"),
    });
}

fn hmac<D: crypto::Digest>(file: &str) {
    // HMAC keys are per vector: the group gives one placeholder.
    run(
        file,
        |_| vec![Some(())],
        |group, _, test| {
            let tag_bits = group.get("tagSize").and_then(Value::as_u64).unwrap() as usize;
            let tag = hex(test, "tag");
            // A tag of the wrong length for the group is a wrong tag.
            tag.len() * 8 == tag_bits
                && Hmac::<D>::new(&hex(test, "key")).verify_truncated(&hex(test, "msg"), &tag)
        },
    );
}

#[test]
fn hmac_sha256() {
    hmac::<Sha256>("hmac_sha256_test.json");
}

#[test]
fn hmac_sha384() {
    hmac::<Sha384>("hmac_sha384_test.json");
}

#[test]
fn hmac_sha512() {
    hmac::<Sha512>("hmac_sha512_test.json");
}
