//! HMAC-SHA-256 (RFC 2104, FIPS 198-1) over the library's own [`sha256`](crate::sha256), for
//! sealed HTTP session tokens.
//!
//! The workspace takes no crates, so the keyed MAC is built here on the digest the audit log
//! already uses. Checked against the RFC 4231 test vectors below.
//!
//! ```
//! use agentteams_mcp::hmac::HmacSha256;
//! let mac = HmacSha256::new(b"key").mac(b"The quick brown fox jumps over the lazy dog");
//! assert_eq!(
//!     agentteams_mcp::sha256::to_hex(&mac),
//!     "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
//! );
//! ```

use crate::sha256::{self, Sha256, DIGEST_LEN};

/// SHA-256's block size: keys longer than this are hashed first, shorter ones zero-padded.
const BLOCK_LEN: usize = 64;

/// A key prepared for HMAC-SHA-256: the inner and outer hash states are computed once, so each
/// MAC costs only the message's blocks and two more.
#[derive(Clone)]
pub struct HmacSha256 {
    inner: Sha256,
    outer: Sha256,
}

impl std::fmt::Debug for HmacSha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The prepared states are as good as the key: never printed.
        f.write_str("HmacSha256(<key>)")
    }
}

impl HmacSha256 {
    pub fn new(key: &[u8]) -> HmacSha256 {
        let mut block = [0u8; BLOCK_LEN];
        if key.len() > BLOCK_LEN {
            block[..DIGEST_LEN].copy_from_slice(&sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let pad = |byte: u8| {
            let mut state = Sha256::new();
            state.update(&block.map(|b| b ^ byte));
            state
        };
        HmacSha256 {
            inner: pad(0x36),
            outer: pad(0x5c),
        }
    }

    /// The MAC of the concatenation of `parts` (saves the caller a copy).
    pub fn mac_parts(&self, parts: &[&[u8]]) -> [u8; DIGEST_LEN] {
        let mut inner = self.inner.clone();
        for part in parts {
            inner.update(part);
        }
        let mut outer = self.outer.clone();
        outer.update(&inner.finish());
        outer.finish()
    }

    pub fn mac(&self, message: &[u8]) -> [u8; DIGEST_LEN] {
        self.mac_parts(&[message])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sha256::to_hex;

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

    #[test]
    fn parts_equal_the_whole_and_a_block_sized_key_is_used_as_is() {
        let h = HmacSha256::new(&[7u8; BLOCK_LEN]);
        assert_eq!(h.mac_parts(&[b"ab", b"", b"cd"]), h.mac(b"abcd"));
        assert_ne!(h.mac(b"abcd"), HmacSha256::new(&[7u8; 63]).mac(b"abcd"));
    }
}
