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

mod asn1;
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

mod digest;
mod error;
mod hash_alg;
mod hex;
mod public_key;

pub use digest::Digest;
pub use error::Error;
pub use hash_alg::HashAlg;
pub use hex::from_hex;
pub use public_key::PublicKey;

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
