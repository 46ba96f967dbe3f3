//! HMAC (RFC 2104, FIPS 198-1) over the library's own SHA-256, SHA-384 and SHA-512, for sealed
//! HTTP session tokens and HS256/384/512.
//!
//! The workspace takes no crates, so the keyed MAC is built here on the digests the audit log and
//! [`crypto`](crate::crypto) already have. Checked against the RFC 4231 test vectors below and
//! the Wycheproof vectors in `tests/crypto_wycheproof.rs`.
//!
//! ```
//! use agentteams_mcp::hmac::HmacSha256;
//! let mac = HmacSha256::new(b"key").mac(b"The quick brown fox jumps over the lazy dog");
//! assert_eq!(
//!     agentteams_mcp::sha256::to_hex(&mac),
//!     "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
//! );
//! ```

use super::digest::Digest;
use super::sha256::Sha256;
use super::sha512::{Sha384, Sha512};

/// HMAC over any of the library's hashes: a key prepared once (the inner and outer hash states are
/// computed at [`new`](Hmac::new)), so each MAC costs only the message's blocks and two more.
#[derive(Clone)]
pub struct Hmac<D: Digest> {
    inner: D,
    outer: D,
}

/// HMAC-SHA-256 (sealed session tokens, HS256).
pub type HmacSha256 = Hmac<Sha256>;
/// HMAC-SHA-384 (HS384).
pub type HmacSha384 = Hmac<Sha384>;
/// HMAC-SHA-512 (HS512).
pub type HmacSha512 = Hmac<Sha512>;

impl<D: Digest> std::fmt::Debug for Hmac<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The prepared states are as good as the key: never printed.
        f.write_str("Hmac(<key>)")
    }
}

impl<D: Digest> Hmac<D> {
    /// Keys longer than the hash's block are hashed first, shorter ones zero-padded (RFC 2104 §2).
    pub fn new(key: &[u8]) -> Hmac<D> {
        let mut block = vec![0u8; D::BLOCK_LEN];
        if key.len() > D::BLOCK_LEN {
            let mut h = D::new();
            h.update(key);
            let digest = h.finish();
            block[..digest.as_ref().len()].copy_from_slice(digest.as_ref());
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let pad = |byte: u8| {
            let mut state = D::new();
            let padded: Vec<u8> = block.iter().map(|b| b ^ byte).collect();
            state.update(&padded);
            state
        };
        Hmac {
            inner: pad(0x36),
            outer: pad(0x5c),
        }
    }

    /// The MAC of the concatenation of `parts` (saves the caller a copy).
    pub fn mac_parts(&self, parts: &[&[u8]]) -> D::Output {
        let mut inner = self.inner.clone();
        for part in parts {
            inner.update(part);
        }
        let mut outer = self.outer.clone();
        outer.update(inner.finish().as_ref());
        outer.finish()
    }

    pub fn mac(&self, message: &[u8]) -> D::Output {
        self.mac_parts(&[message])
    }

    /// Whether `tag` is the MAC of `message` or its first `tag.len()` bytes (a truncated tag, RFC
    /// 2104 §5), compared without an early exit. A tag shorter than [`MIN_TAG_LEN`] or longer
    /// than the digest never verifies.
    pub fn verify_truncated(&self, message: &[u8], tag: &[u8]) -> bool {
        let mac = self.mac(message);
        let mac = mac.as_ref();
        if tag.len() < MIN_TAG_LEN || tag.len() > mac.len() {
            return false;
        }
        mac.iter().zip(tag).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// The shortest truncated tag [`Hmac::verify_truncated`] accepts: RFC 2104 §5 recommends no fewer
/// than 80 bits; whole bytes, so 10.
pub const MIN_TAG_LEN: usize = 10;

#[cfg(test)]
mod tests {
    use super::super::sha256::to_hex;
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 4231 §4.2-§4.8: key, data, HMAC-SHA-256 (case 5 is truncated to 128 bits there).
    #[test]
    fn rfc_4231_vectors() {
        let cases: [(Vec<u8>, Vec<u8>, &str); 6] = [
            (
                vec![0x0b; 20],
                b"Hi There".to_vec(),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?".to_vec(),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                vec![0xaa; 20],
                vec![0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                vec![0xcd; 50],
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
            (
                vec![0xaa; 131],
                b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".to_vec(),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            ),
        ];
        for (key, data, expected) in cases {
            assert_eq!(to_hex(&HmacSha256::new(&key).mac(&data)), expected);
        }
        // Case 5: the first 128 bits.
        let mac = HmacSha256::new(&[0x0c; 20]).mac(b"Test With Truncation");
        assert_eq!(to_hex(&mac[..16]), "a3b6167473100ee06e0c796c2955552b");
    }

    /// RFC 4231 §4.2-§4.8 for HMAC-SHA-384 and HMAC-SHA-512 (same keys and data as above).
    #[test]
    fn rfc_4231_vectors_sha384_and_sha512() {
        let cases: [(Vec<u8>, &[u8], &str, &str); 6] = [
            (vec![0x0b; 20], b"Hi There",
             "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
             "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"),
            (b"Jefe".to_vec(), b"what do ya want for nothing?",
             "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
             "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"),
            (vec![0xaa; 20], &[0xdd; 50],
             "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27",
             "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"),
            (unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), &[0xcd; 50],
             "3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb",
             "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"),
            (vec![0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First",
             "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952",
             "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"),
            (vec![0xaa; 131], b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
             "6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5a678cc31e799176d3860e6110c46523e",
             "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"),
        ];
        for (key, data, expected384, expected512) in cases {
            assert_eq!(to_hex(&HmacSha384::new(&key).mac(data)), expected384);
            assert_eq!(to_hex(&HmacSha512::new(&key).mac(data)), expected512);
        }
        // Case 5, truncated to 128 bits.
        let h384 = HmacSha384::new(&[0x0c; 20]);
        let h512 = HmacSha512::new(&[0x0c; 20]);
        assert_eq!(
            to_hex(&h384.mac(b"Test With Truncation")[..16]),
            "3abf34c3503b2a23a46efc619baef897"
        );
        assert_eq!(
            to_hex(&h512.mac(b"Test With Truncation")[..16]),
            "415fad6271580a531d4179bc891d87a6"
        );
        assert!(h512.verify_truncated(
            b"Test With Truncation",
            &unhex("415fad6271580a531d4179bc891d87a6")
        ));
        assert!(!h512.verify_truncated(
            b"Test With Truncation",
            &unhex("415fad6271580a531d4179bc891d87a7")
        ));
    }

    #[test]
    fn truncated_tags_shorter_than_the_minimum_or_longer_than_the_digest_never_verify() {
        let h = HmacSha256::new(b"k");
        let mac = h.mac(b"m");
        assert!(h.verify_truncated(b"m", &mac));
        assert!(h.verify_truncated(b"m", &mac[..MIN_TAG_LEN]));
        assert!(!h.verify_truncated(b"m", &mac[..MIN_TAG_LEN - 1]));
        assert!(!h.verify_truncated(b"m", &[]));
        let mut long = mac.to_vec();
        long.push(0);
        assert!(!h.verify_truncated(b"m", &long));
    }

    #[test]
    fn parts_equal_the_whole_and_a_block_sized_key_is_used_as_is() {
        let h = HmacSha256::new(&[7u8; 64]);
        assert_eq!(h.mac_parts(&[b"ab", b"", b"cd"]), h.mac(b"abcd"));
        assert_ne!(h.mac(b"abcd"), HmacSha256::new(&[7u8; 63]).mac(b"abcd"));
    }
}
