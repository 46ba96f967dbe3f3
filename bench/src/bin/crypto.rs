//! Signature verification cost, `agentteams_mcp::crypto` against `ring` 0.17 in the same run, per
//! algorithm, on the first valid vector of each vendored Wycheproof file.
//!
//! Both sides get the same raw inputs and do the same work per call: read the public key from its
//! bytes (ours: SubjectPublicKeyInfo DER through `der::parse_spki`, which includes the key checks
//! and the Montgomery setup; ring: the same key in the form its API takes, parsed on every call),
//! then verify. A third column times ours with the key read once, as a resource server holding a
//! JWK Set does. Rounds interleave A B / B A; the figures are per-call means, and the min and
//! median of the per-round ratio ours / ring. Every call's result is checked.
//!
//! Usage: `cargo run --release --bin crypto -- [--rounds N]` (pin with `taskset -c 1`).

use agentteams_mcp::crypto::{der, from_hex, HashAlg, PublicKey};
use agentteams_mcp::json::{self, Value};
use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// What one case verifies: our key's DER, ring's key bytes, message, signature.
struct Inputs {
    spki: Vec<u8>,
    ring_key: Vec<u8>,
    msg: Vec<u8>,
    sig: Vec<u8>,
}

fn inputs(file: &str) -> Inputs {
    let path = format!(
        "{}/../tests/data/wycheproof/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let doc = json::parse(&std::fs::read(&path).expect("a vendored file")).expect("JSON");
    let hex = |v: &Value, k: &str| from_hex(v.get(k).and_then(Value::as_str).unwrap()).unwrap();
    for group in doc
        .get("testGroups")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
    {
        for test in group.get("tests").and_then(Value::as_array).unwrap().iter() {
            if test.get("result").and_then(Value::as_str) != Some("valid") {
                continue;
            }
            // ring takes RSAPublicKey DER, the uncompressed P-256 point, or the raw Ed25519 key.
            let ring_key = if let Some(asn) = group.get("publicKeyAsn") {
                from_hex(asn.as_str().unwrap()).unwrap()
            } else {
                let key = group.get("publicKey").unwrap();
                let field = if key.get("uncompressed").is_some() {
                    "uncompressed"
                } else {
                    "pk"
                };
                hex(key, field)
            };
            return Inputs {
                spki: hex(group, "publicKeyDer"),
                ring_key,
                msg: hex(test, "msg"),
                sig: hex(test, "sig"),
            };
        }
    }
    panic!("{file}: no valid vector");
}

fn ours(name: &str, key: &PublicKey, i: &Inputs) -> bool {
    let hash = if name.contains("256") {
        HashAlg::Sha256
    } else if name.contains("384") {
        HashAlg::Sha384
    } else {
        HashAlg::Sha512
    };
    match key {
        PublicKey::Rsa(k) if name.starts_with("RS") => {
            k.verify_pkcs1v15(hash, &i.msg, &i.sig).is_ok()
        }
        PublicKey::Rsa(k) => k.verify_pss(hash, &i.msg, &i.sig).is_ok(),
        PublicKey::P256(k) => k.verify_p1363(&i.msg, &i.sig).is_ok(),
        PublicKey::Ed25519(k) => k.verify(&i.msg, &i.sig).is_ok(),
    }
}

fn time(iterations: u32, mut f: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    for _ in 0..iterations {
        assert!(black_box(f()), "a verification failed");
    }
    start.elapsed() / iterations
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(11);
    // (name, vector file, ring algorithm, calls per round)
    let cases: [(&str, &str, &'static dyn VerificationAlgorithm, u32); 7] = [
        (
            "RS256 2048",
            "rsa_signature_2048_sha256_test.json",
            &signature::RSA_PKCS1_2048_8192_SHA256,
            1000,
        ),
        (
            "RS384 3072",
            "rsa_signature_3072_sha384_test.json",
            &signature::RSA_PKCS1_2048_8192_SHA384,
            500,
        ),
        (
            "RS512 4096",
            "rsa_signature_4096_sha512_test.json",
            &signature::RSA_PKCS1_2048_8192_SHA512,
            300,
        ),
        (
            "PS256 2048",
            "rsa_pss_2048_sha256_mgf1_32_test.json",
            &signature::RSA_PSS_2048_8192_SHA256,
            1000,
        ),
        (
            "PS512 4096",
            "rsa_pss_4096_sha512_mgf1_64_test.json",
            &signature::RSA_PSS_2048_8192_SHA512,
            300,
        ),
        (
            "ES256",
            "ecdsa_secp256r1_sha256_p1363_test.json",
            &signature::ECDSA_P256_SHA256_FIXED,
            200,
        ),
        ("EdDSA", "ed25519_test.json", &signature::ED25519, 200),
    ];
    println!("{rounds} rounds (A B / B A interleaved); per-call mean, median over rounds; ratio = ours / ring");
    println!(
        "{:<11} {:>12} {:>12} {:>16} {:>10} {:>10}",
        "alg", "ours us", "ring us", "ours, key held", "ratio min", "ratio med"
    );
    for (name, file, ring_alg, iterations) in cases {
        let i = inputs(file);
        let held = der::parse_spki(&i.spki).expect("our key");
        let ring_key = UnparsedPublicKey::new(ring_alg, &i.ring_key);
        let mut ours_t = Vec::new();
        let mut ring_t = Vec::new();
        let mut held_t = Vec::new();
        let mut ratios = Vec::new();
        for round in 0..rounds {
            let run_ours = || {
                time(iterations, || {
                    der::parse_spki(&i.spki).is_ok_and(|k| ours(name, &k, &i))
                })
            };
            let run_ring = || time(iterations, || ring_key.verify(&i.msg, &i.sig).is_ok());
            let (a, b) = if round % 2 == 0 {
                let a = run_ours();
                (a, run_ring())
            } else {
                let b = run_ring();
                (run_ours(), b)
            };
            ratios.push(a.as_secs_f64() / b.as_secs_f64());
            ours_t.push(a.as_secs_f64() * 1e6);
            ring_t.push(b.as_secs_f64() * 1e6);
            held_t.push(time(iterations, || ours(name, &held, &i)).as_secs_f64() * 1e6);
        }
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{:<11} {:>12.1} {:>12.1} {:>16.1} {:>10.2} {:>10.2}",
            name,
            median(ours_t),
            median(ring_t),
            median(held_t),
            min,
            median(ratios)
        );
    }
}
