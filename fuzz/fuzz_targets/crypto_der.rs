//! Arbitrary bytes into the strict DER readers: they answer, never panic, and what they accept is
//! the one DER encoding of its value (re-encoding an accepted ECDSA signature gives the input back).
//! An accepted RSAPublicKey becomes a key with the size floor lowered to its least (512 bits), and
//! RSA verification with every hash runs on it: odd sizes and tiny keys must be errors, not panics.
#![no_main]

use agentteams_mcp::crypto::{der, p256, rsa, HashAlg};
use libfuzzer_sys::fuzz_target;

/// DER of a non-negative INTEGER with magnitude `m` (minimal: a 0x00 only before a high bit).
fn integer(m: &[u8]) -> Vec<u8> {
    let mut body = m.to_vec();
    if body.is_empty() || body[0] & 0x80 != 0 {
        body.insert(0, 0);
    }
    tlv(0x02, &body)
}

fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match body.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(body);
    out
}

fuzz_target!(|data: &[u8]| {
    let _ = der::parse_spki(data);
    if let Ok((n, e)) = der::parse_rsa_public_key(data) {
        if let Ok(key) = rsa::PublicKey::from_components_with_min_bits(n, e, 0) {
            // A signature of the key's length cut from the modulus bytes (below n when n's top
            // byte is not its only one), and one of all zeros.
            let len = key.bits().div_ceil(8);
            let signature: Vec<u8> = n.iter().copied().skip(n.len() - len).collect();
            for hash in [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512] {
                for sig in [&signature[..], &vec![0u8; len][..]] {
                    let _ = key.verify_pkcs1v15(hash, data, sig);
                    let _ = key.verify_pss(hash, data, sig);
                }
            }
        }
    }
    if let Ok((r, s)) = der::parse_ecdsa_signature(data) {
        let again = tlv(0x30, &[integer(r), integer(s)].concat());
        assert_eq!(
            again, data,
            "an accepted signature is the one DER encoding of (r, s)"
        );
    }
    // The generator as a key: verification of arbitrary DER must answer, never panic.
    let g = p256::PublicKey::from_coordinates(
        &[
            0x6b, 0x17, 0xd1, 0xf2, 0xe1, 0x2c, 0x42, 0x47, 0xf8, 0xbc, 0xe6, 0xe5, 0x63, 0xa4,
            0x40, 0xf2, 0x77, 0x03, 0x7d, 0x81, 0x2d, 0xeb, 0x33, 0xa0, 0xf4, 0xa1, 0x39, 0x45,
            0xd8, 0x98, 0xc2, 0x96,
        ],
        &[
            0x4f, 0xe3, 0x42, 0xe2, 0xfe, 0x1a, 0x7f, 0x9b, 0x8e, 0xe7, 0xeb, 0x4a, 0x7c, 0x0f,
            0x9e, 0x16, 0x2b, 0xce, 0x33, 0x57, 0x6b, 0x31, 0x5e, 0xce, 0xcb, 0xb6, 0x40, 0x68,
            0x37, 0xbf, 0x51, 0xf5,
        ],
    )
    .expect("the generator is on the curve");
    let _ = g.verify_der(b"fuzz", data);
});
