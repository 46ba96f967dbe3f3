//! RSA signature verification (RFC 8017): RSASSA-PKCS1-v1_5 and RSASSA-PSS with MGF1, over
//! SHA-256/384/512, for the JOSE algorithms RS256/384/512 and PS256/384/512.
//!
//! Verification only, so only public values are involved and nothing needs to be constant time.
//! PKCS#1 v1.5 is checked by building the one expected encoding and comparing (RFC 8017 §8.2.2),
//! never by parsing the decrypted block, which is what keeps Bleichenbacher-style forgeries with
//! garbage in the padding or DigestInfo out (Wycheproof's "InvalidAsnInPadding", "BerEncoded..."
//! and "MissingNull" vectors: a DigestInfo without the NULL parameter is refused). PSS uses the
//! JOSE parameters (RFC 7518 §3.5): MGF1 with the message hash and a salt as long as the hash.
//!
//! Keys are bounded: moduli from [`MIN_MODULUS_BITS`] (NIST SP 800-131A; smaller keys are
//! refused by default) to [`MAX_MODULUS_BITS`], which bounds the work one signature costs; odd
//! public exponents from 3 to 2^[`MAX_EXPONENT_BITS`] - 1.

use super::bignum::{limbs_from_be, limbs_to_be, Modulus};
use super::error::Error;
use super::hash_alg::HashAlg;

/// The smallest modulus accepted by default, in bits.
pub const MIN_MODULUS_BITS: usize = 2048;
/// The largest modulus accepted, in bits: an 8192-bit verification is about 16 times the work of a
/// 2048-bit one, and nothing larger is in use.
pub const MAX_MODULUS_BITS: usize = 8192;
/// The largest public exponent accepted, in bits (65537 has 17; JOSE keys use it).
pub const MAX_EXPONENT_BITS: u32 = 64;

/// An RSA public key ready to verify: `n` prepared for Montgomery arithmetic.
#[derive(Clone, Debug)]
pub struct PublicKey {
    modulus: Modulus,
    /// The modulus length in bytes (`k` in RFC 8017): every signature is exactly this long.
    len: usize,
    bits: usize,
    exponent: u64,
}

impl PublicKey {
    /// A key from the big-endian magnitudes of `n` and `e` (leading zero bytes ignored), with the
    /// default [`MIN_MODULUS_BITS`].
    pub fn from_components(n: &[u8], e: &[u8]) -> Result<PublicKey, Error> {
        PublicKey::from_components_with_min_bits(n, e, MIN_MODULUS_BITS)
    }

    /// As [`from_components`](PublicKey::from_components) with another lower bound for the
    /// modulus size, for a deployment that must still accept older keys (never below 512 bits).
    pub fn from_components_with_min_bits(
        n: &[u8],
        e: &[u8],
        min_bits: usize,
    ) -> Result<PublicKey, Error> {
        let mut limbs = vec![0u64; MAX_MODULUS_BITS / 64];
        if !limbs_from_be(n, &mut limbs) {
            return Err(Error::KeyRejected("RSA modulus longer than 8192 bits"));
        }
        let bits = super::bignum::bit_len(&limbs);
        if bits < min_bits.max(512) {
            return Err(Error::KeyRejected(
                "RSA modulus shorter than the minimum (2048 bits by default)",
            ));
        }
        let modulus = Modulus::new(&limbs).ok_or(Error::KeyRejected("RSA modulus is even"))?;
        let mut exponent_limbs = [0u64; 1];
        if !limbs_from_be(e, &mut exponent_limbs) {
            return Err(Error::KeyRejected(
                "RSA public exponent longer than 64 bits",
            ));
        }
        let exponent = exponent_limbs[0];
        if exponent < 3 || exponent % 2 == 0 {
            return Err(Error::KeyRejected(
                "RSA public exponent must be odd and at least 3",
            ));
        }
        Ok(PublicKey {
            modulus,
            len: bits.div_ceil(8),
            bits,
            exponent,
        })
    }

    /// The modulus size in bits.
    pub fn bits(&self) -> usize {
        self.bits
    }

    /// RSAVP1 (RFC 8017 §5.2.2): `signature^e mod n` as `len` big-endian bytes, after checking
    /// the signature is exactly `k` bytes and below `n`.
    fn open(&self, signature: &[u8], len: usize) -> Result<Vec<u8>, Error> {
        if signature.len() != self.len {
            return Err(Error::malformed(
                "RSA signature",
                "length differs from the modulus length",
            ));
        }
        let n = self.modulus.limbs();
        let mut s = vec![0u64; n.len()];
        limbs_from_be(signature, &mut s);
        if super::bignum::cmp(&s, n) != std::cmp::Ordering::Less {
            return Err(Error::malformed(
                "RSA signature",
                "representative not below the modulus",
            ));
        }
        let m = self.modulus.pow(&s, self.exponent);
        let mut encoded = vec![0u8; len];
        // A representative that does not fit in `len` bytes cannot be an encoding (PSS, step 8.2.3).
        if !limbs_to_be(&m, &mut encoded) {
            return Err(Error::BadSignature);
        }
        Ok(encoded)
    }

    /// RSASSA-PKCS1-v1_5 verification (RFC 8017 §8.2.2) of `signature` over `message`.
    pub fn verify_pkcs1v15(
        &self,
        hash: HashAlg,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), Error> {
        let encoded = self.open(signature, self.len)?;
        let prefix = digest_info_prefix(hash);
        let digest = hash.digest(message);
        // EMSA-PKCS1-v1_5 (§9.2): 00 01 FF..FF 00 DigestInfo, with at least 8 bytes of FF; only a
        // key below the default minimum can be too short for that.
        let Some(padding) = self
            .len
            .checked_sub(3 + prefix.len() + digest.len())
            .filter(|&padding| padding >= 8)
        else {
            return Err(Error::KeyRejected(
                "RSA modulus too short for this hash in PKCS#1 v1.5",
            ));
        };
        let mut expected = Vec::with_capacity(self.len);
        expected.extend_from_slice(&[0x00, 0x01]);
        expected.resize(2 + padding, 0xff);
        expected.push(0x00);
        expected.extend_from_slice(prefix);
        expected.extend_from_slice(&digest);
        if encoded == expected {
            Ok(())
        } else {
            Err(Error::BadSignature)
        }
    }

    /// RSASSA-PSS verification (RFC 8017 §8.1.2, EMSA-PSS-VERIFY §9.1.2) with MGF1 over `hash` and
    /// a salt of the hash's length, as JOSE's PS256/384/512 specify.
    pub fn verify_pss(&self, hash: HashAlg, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        let em_bits = self.bits - 1;
        let em_len = em_bits.div_ceil(8);
        let encoded = self.open(signature, em_len)?;
        let h_len = hash.output_len();
        let salt_len = h_len;
        if em_len < h_len + salt_len + 2 || encoded[em_len - 1] != 0xbc {
            return Err(Error::BadSignature);
        }
        let (masked_db, rest) = encoded.split_at(em_len - h_len - 1);
        let h = &rest[..h_len];
        let unused_bits = 8 * em_len - em_bits;
        let top_mask = 0xffu8 >> unused_bits;
        if masked_db[0] & !top_mask != 0 {
            return Err(Error::BadSignature);
        }
        let mut db = mgf1(hash, h, masked_db.len());
        for (d, m) in db.iter_mut().zip(masked_db) {
            *d ^= m;
        }
        db[0] &= top_mask;
        let zeros = em_len - h_len - salt_len - 2;
        if db[..zeros].iter().any(|&b| b != 0) || db[zeros] != 0x01 {
            return Err(Error::BadSignature);
        }
        let salt = &db[zeros + 1..];
        let m_hash = hash.digest(message);
        let h_expected = hash.digest_parts(&[&[0u8; 8], &m_hash, salt]);
        if h_expected == h {
            Ok(())
        } else {
            Err(Error::BadSignature)
        }
    }
}

/// The DER DigestInfo prefix before the digest (RFC 8017 §9.2, note 1).
fn digest_info_prefix(hash: HashAlg) -> &'static [u8] {
    match hash {
        HashAlg::Sha256 => &[
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x01, 0x05, 0x00, 0x04, 0x20,
        ],
        HashAlg::Sha384 => &[
            0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x02, 0x05, 0x00, 0x04, 0x30,
        ],
        HashAlg::Sha512 => &[
            0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02,
            0x03, 0x05, 0x00, 0x04, 0x40,
        ],
    }
}

/// MGF1 (RFC 8017 B.2.1): `len` bytes of `Hash(seed || counter)` for counters 0, 1, ...
fn mgf1(hash: HashAlg, seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + hash.output_len());
    let mut counter = 0u32;
    while out.len() < len {
        out.extend_from_slice(&hash.digest_parts(&[seed, &counter.to_be_bytes()]));
        counter += 1;
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An odd modulus of `bits` bits (all ones, a multiple of 8) for the key-shape checks.
    fn ones(bits: usize) -> Vec<u8> {
        vec![0xffu8; bits / 8]
    }

    #[test]
    fn key_size_and_exponent_bounds_are_enforced_with_clear_errors() {
        assert!(PublicKey::from_components(&ones(2048), &[1, 0, 1]).is_ok());
        assert_eq!(
            PublicKey::from_components(&ones(2040), &[1, 0, 1]).err(),
            Some(Error::KeyRejected(
                "RSA modulus shorter than the minimum (2048 bits by default)"
            ))
        );
        assert!(PublicKey::from_components_with_min_bits(&ones(1024), &[3], 1024).is_ok());
        assert!(PublicKey::from_components_with_min_bits(&ones(256), &[3], 0).is_err());
        assert!(PublicKey::from_components(&ones(8192), &[1, 0, 1]).is_ok());
        let mut too_long = vec![0u8; 3];
        too_long.extend(ones(8200));
        assert_eq!(
            PublicKey::from_components(&too_long, &[1, 0, 1]).err(),
            Some(Error::KeyRejected("RSA modulus longer than 8192 bits"))
        );
        let mut even = ones(2048);
        *even.last_mut().unwrap() = 0xfe;
        assert_eq!(
            PublicKey::from_components(&even, &[1, 0, 1]).err(),
            Some(Error::KeyRejected("RSA modulus is even"))
        );
        for e in [&[][..], &[1], &[2], &[1, 0, 0]] {
            assert!(PublicKey::from_components(&ones(2048), e).is_err(), "{e:?}");
        }
        assert!(PublicKey::from_components(&ones(2048), &[1; 9]).is_err());
        assert!(PublicKey::from_components(&ones(2048), &[0, 0, 1, 0, 1]).is_ok());
    }

    #[test]
    fn signatures_of_the_wrong_length_or_not_below_n_are_malformed() {
        let key = PublicKey::from_components(&ones(2048), &[1, 0, 1]).unwrap();
        for hash in [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512] {
            for bad in [vec![], vec![0u8; 255], vec![0u8; 257], vec![0xff; 256]] {
                assert!(matches!(
                    key.verify_pkcs1v15(hash, b"m", &bad),
                    Err(Error::Malformed { .. })
                ));
                assert!(matches!(
                    key.verify_pss(hash, b"m", &bad),
                    Err(Error::Malformed { .. })
                ));
            }
            // Zero and one are below n and open to themselves: no valid encoding.
            let mut one = vec![0u8; 256];
            one[255] = 1;
            assert_eq!(
                key.verify_pkcs1v15(hash, b"m", &one),
                Err(Error::BadSignature)
            );
            assert_eq!(key.verify_pss(hash, b"m", &one), Err(Error::BadSignature));
            assert_eq!(
                key.verify_pss(hash, b"m", &[0u8; 256]),
                Err(Error::BadSignature)
            );
        }
    }

    #[test]
    fn a_key_too_short_for_the_hash_is_refused_not_a_panic() {
        let key = PublicKey::from_components_with_min_bits(&ones(512), &[3], 512).unwrap();
        let mut signature = vec![0u8; 64];
        signature[63] = 2;
        for hash in [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512] {
            assert!(key.verify_pkcs1v15(hash, b"m", &signature).is_err());
            assert!(key.verify_pss(hash, b"m", &signature).is_err());
        }
        assert_eq!(
            key.verify_pkcs1v15(HashAlg::Sha512, b"m", &signature),
            Err(Error::KeyRejected(
                "RSA modulus too short for this hash in PKCS#1 v1.5"
            ))
        );
    }

    #[test]
    fn mgf1_matches_its_definition() {
        let out = mgf1(HashAlg::Sha256, b"seed", 40);
        assert_eq!(
            &out[..32],
            HashAlg::Sha256.digest(b"seed\0\0\0\0").as_slice()
        );
        assert_eq!(&out[32..], &HashAlg::Sha256.digest(b"seed\0\0\0\x01")[..8]);
    }
}
