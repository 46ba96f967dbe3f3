//! Signature verification on the standard library alone (the SHA-2 family, HMAC, RSA PKCS#1 v1.5
//! and PSS, ECDSA P-256, Ed25519, with the DER and JWK parsers that read their keys), and ES256
//! signing for `private_key_jwt` client authentication.
//!
//! It exists for an OAuth 2.1 resource server checking JWT access tokens and for a client
//! authenticating to a token endpoint (issue 16) without a registry crate. Verification handles
//! public data only (public keys, signatures, signed messages), so its arithmetic is written for
//! clarity and correctness, not constant time. The one private-key operation, ES256 signing, lives
//! apart in [`p256_sign`] with its own constant-time arithmetic (its module doc says exactly what
//! is constant time), reads its keys through [`private_key`] (never through [`jwk`], which refuses
//! private keys), and builds client assertions in [`assertion`]. Each primitive is checked against
//! its published vectors (FIPS 180-4, RFC 4231, RFC 6979, RFC 8032, RFC 7515) in unit tests and
//! against every Wycheproof vector of the files vendored in `tests/data/wycheproof/` (verification
//! in `tests/crypto_wycheproof.rs`, signing keys and scalar multiplication in
//! `private_key`'s unit tests).
//!
//! Every input is untrusted: a malformed key, signature or token gives an [`Error`] naming what was
//! wrong, never a panic, and every size has a named bound (`rsa::MAX_MODULUS_BITS`,
//! `der::MAX_DER_LEN`, `jwk::MAX_JWKS_KEYS`, `private_key::MAX_PRIVATE_KEY_BYTES`, ...).

pub mod assertion;
pub(crate) mod bignum;
pub(crate) mod block;
pub mod der;
pub mod ed25519;
mod field;
pub mod hmac;
pub mod jwk;
pub mod jws;
pub mod jwt;

pub mod p256;
pub mod p256_sign;
pub mod private_key;
pub mod rsa;
pub mod sha256;
pub mod sha512;

use std::fmt;

/// A streaming hash function HMAC and the signature schemes can be generic over.
pub trait Digest: Clone {
    /// The size of the block the compression function consumes, in bytes.
    const BLOCK_LEN: usize;
    /// The digest: a byte array of the function's output length.
    type Output: AsRef<[u8]> + Copy;
    fn new() -> Self;
    fn update(&mut self, data: &[u8]);
    fn finish(self) -> Self::Output;
}

/// The hash functions the JOSE signature algorithms name (RS256/PS256/ES256 use SHA-256, and so
/// on), chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlg {
    Sha256,
    Sha384,
    Sha512,
}

impl HashAlg {
    /// The digest length in bytes.
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Sha256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }

    /// The digest of the concatenation of `parts`.
    pub fn digest_parts(self, parts: &[&[u8]]) -> Vec<u8> {
        fn run<D: Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut h = D::new();
            for part in parts {
                h.update(part);
            }
            h.finish().as_ref().to_vec()
        }
        match self {
            HashAlg::Sha256 => run::<sha256::Sha256>(parts),
            HashAlg::Sha384 => run::<sha512::Sha384>(parts),
            HashAlg::Sha512 => run::<sha512::Sha512>(parts),
        }
    }

    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        self.digest_parts(&[data])
    }
}

/// A public key of one of the supported types, as read from DER ([`der::parse_spki`]) or a JWK
/// ([`jwk::Jwk`])
///.
#[derive(Clone, Debug)]
pub enum PublicKey {
    Rsa(rsa::PublicKey),
    P256(p256::PublicKey),
    Ed25519(ed25519::PublicKey),
}

/// Why a key, signature or token was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// An encoding does not follow its format: `what` was being read, `rule` is what it broke.
    Malformed {
        what: &'static str,
        rule: &'static str,
    },
    /// A well-formed key this module will not verify with (too small, too large, off the curve).
    KeyRejected(&'static str),
    /// An algorithm, key type or curve this module does not implement.
    Unsupported(String),
    /// A well-formed signature that does not verify with the key over the message.
    BadSignature,
    /// A token refused by the verification policy (an algorithm not accepted, `alg: none`, no key
    /// for its `kid`); the text says which rule.
    Refused(String),
}

impl Error {
    pub(crate) const fn malformed(what: &'static str, rule: &'static str) -> Error {
        Error::Malformed { what, rule }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed { what, rule } => write!(f, "malformed {what}: {rule}"),
            Error::KeyRejected(why) => write!(f, "key rejected: {why}"),
            Error::Unsupported(what) => write!(f, "unsupported {what}"),
            Error::BadSignature => f.write_str("signature does not verify"),
            Error::Refused(why) => write!(f, "token refused: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// Decodes lowercase or uppercase hexadecimal; `None` for an odd length or a non-hex byte. For
/// tests and examples that carry vectors as hex.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16);
    let bytes = text.as_bytes();
    if bytes.len() % 2 != 0 {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_was_wrong() {
        let cases = [
            (
                Error::malformed("JWS header", "a member name appears twice"),
                "malformed JWS header: a member name appears twice",
            ),
            (
                Error::KeyRejected("RSA modulus is even"),
                "key rejected: RSA modulus is even",
            ),
            (
                Error::Unsupported("elliptic curve (only P-256)".into()),
                "unsupported elliptic curve (only P-256)",
            ),
            (Error::BadSignature, "signature does not verify"),
            (
                Error::Refused("no key with kid k1".into()),
                "token refused: no key with kid k1",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn hex_decoding_is_strict_and_hash_lengths_match_their_digests() {
        assert_eq!(from_hex("00ffA0"), Some(vec![0, 255, 160]));
        assert_eq!(from_hex("0"), None);
        assert_eq!(from_hex("0g"), None);
        for hash in [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512] {
            assert_eq!(hash.digest(b"abc").len(), hash.output_len());
            assert_eq!(hash.digest_parts(&[b"a", b"bc"]), hash.digest(b"abc"));
        }
    }
}
