//! Ed25519 signature verification (RFC 8032 §5.1.7), for JOSE's EdDSA (RFC 8037).
//!
//! The rules applied are the strict ones (those of ed25519-dalek's `verify_strict` and of
//! Wycheproof's expectations), stated here because RFC 8032 leaves some to the verifier:
//! - the signature is exactly 64 bytes, and S (its second half, little-endian) is below the group
//!   order L: a non-canonical S (S + L, the classic malleability) is refused;
//! - A (the public key) and R (the signature's first half) must be canonical encodings: y below
//!   p = 2^255 - 19, and never "x = 0 with the sign bit set"; an encoding that names no point is
//!   refused;
//! - A and R must not be of small order (their eightfold multiple is not the identity): such a
//!   key verifies signatures for many messages and is refused when the key is read;
//! - the equation checked is the cofactorless `[S]B = R + [k]A` (RFC 8032 §5.1.7 allows either it
//!   or the cofactored one), as the projective equality of `[S]B - [k]A` with the decoded R (R's
//!   encoding being canonical, that is the comparison of encodings, without an inversion).
//!
//! Only public values are handled: the arithmetic (extended twisted Edwards coordinates over the
//! Montgomery `Field`) is variable time by design and must not be reused for signing.

use super::digest::Digest;
use super::error::Error;
use super::field::{double_scalar_mul, u256_from_hex, u256_from_le, Field, Group, U256};
use super::sha512::Sha512;
use std::sync::OnceLock;

/// The length of a public key: the compressed point A.
pub const PUBLIC_KEY_LEN: usize = 32;
/// The length of a signature: R (32 bytes) then S (32 bytes).
pub const SIGNATURE_LEN: usize = 64;

struct Curve {
    fp: Field,
    fl: Field,
    /// d = -121665/121666, Montgomery form.
    d: U256,
    /// 2d, for the addition formula.
    d2: U256,
    /// A square root of -1 (2^((p-1)/4)), Montgomery form.
    sqrt_m1: U256,
    base: Extended,
}

fn curve() -> &'static Curve {
    static CURVE: OnceLock<Curve> = OnceLock::new();
    CURVE.get_or_init(|| {
        let fp = Field::new(u256_from_hex(
            "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed",
        ));
        let fl = Field::new(u256_from_hex(
            "1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed",
        ));
        let d = fp.neg(&fp.mul(&fp.element(121_665), &fp.invert(&fp.element(121_666))));
        let d2 = fp.add(&d, &d);
        // (p - 1) / 4 = 2^253 - 5.
        let sqrt_m1 = fp.pow(
            &fp.element(2),
            &u256_from_hex("1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffb"),
        );
        // RFC 8032 §5.1: B has y = 4/5 and a positive (even) x; this is its encoding.
        let mut encoding = [0x66u8; 32];
        encoding[0] = 0x58;
        let base = decode_with(&fp, &d, &sqrt_m1, &encoding).expect("the base point decodes");
        Curve {
            fp,
            fl,
            d,
            d2,
            sqrt_m1,
            base,
        }
    })
}

/// A point in extended coordinates (X : Y : Z : T), x = X/Z, y = Y/Z, xy = T/Z, Montgomery form.
#[derive(Clone, Debug)]
struct Extended {
    x: U256,
    y: U256,
    z: U256,
    t: U256,
}

impl Extended {
    fn is_identity(&self) -> bool {
        // x = 0 and y = 1: X = 0 and Y = Z.
        let f = &curve().fp;
        f.is_zero(&self.x) && self.y == self.z
    }

    fn has_small_order(&self) -> bool {
        self.double().double().double().is_identity()
    }
}

impl Group for Extended {
    fn identity(&self) -> Extended {
        let f = &curve().fp;
        Extended {
            x: [0; 4],
            y: f.one(),
            z: f.one(),
            t: [0; 4],
        }
    }

    /// RFC 8032 §5.1.4 addition (complete for a = -1).
    fn add(&self, other: &Extended) -> Extended {
        let c = curve();
        let f = &c.fp;
        let a = f.mul(&f.sub(&self.y, &self.x), &f.sub(&other.y, &other.x));
        let b = f.mul(&f.add(&self.y, &self.x), &f.add(&other.y, &other.x));
        let cc = f.mul(&f.mul(&self.t, &c.d2), &other.t);
        let zz = f.mul(&self.z, &other.z);
        let d = f.add(&zz, &zz);
        let (e, ff, g, h) = (f.sub(&b, &a), f.sub(&d, &cc), f.add(&d, &cc), f.add(&b, &a));
        Extended {
            x: f.mul(&e, &ff),
            y: f.mul(&g, &h),
            t: f.mul(&e, &h),
            z: f.mul(&ff, &g),
        }
    }

    fn negate(&self) -> Extended {
        let f = &curve().fp;
        Extended {
            x: f.neg(&self.x),
            y: self.y,
            z: self.z,
            t: f.neg(&self.t),
        }
    }

    /// RFC 8032 §5.1.4 doubling.
    fn double(&self) -> Extended {
        let f = &curve().fp;
        let a = f.square(&self.x);
        let b = f.square(&self.y);
        let z2 = f.square(&self.z);
        let c = f.add(&z2, &z2);
        let h = f.add(&a, &b);
        let e = f.sub(&h, &f.square(&f.add(&self.x, &self.y)));
        let g = f.sub(&a, &b);
        let ff = f.add(&c, &g);
        Extended {
            x: f.mul(&e, &ff),
            y: f.mul(&g, &h),
            t: f.mul(&e, &h),
            z: f.mul(&ff, &g),
        }
    }
}

/// RFC 8032 §5.1.3 decoding, strict: `None` for a y not below p, for x = 0 with the sign bit set,
/// and for a y with no matching x.
fn decode_with(f: &Field, d: &U256, sqrt_m1: &U256, bytes: &[u8; 32]) -> Option<Extended> {
    let sign = bytes[31] >> 7;
    let mut y_bytes = *bytes;
    y_bytes[31] &= 0x7f;
    let y_plain = u256_from_le(&y_bytes);
    if !f.is_reduced(&y_plain) {
        return None;
    }
    let y = f.to_mont(&y_plain);
    let y2 = f.square(&y);
    let u = f.sub(&y2, &f.one());
    let v = f.add(&f.mul(d, &y2), &f.one());
    // x = u v^3 (u v^7)^((p-5)/8), with (p-5)/8 = 2^252 - 3.
    let v3 = f.mul(&f.square(&v), &v);
    let v7 = f.mul(&f.square(&v3), &v);
    let exponent =
        u256_from_hex("0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffd");
    let mut x = f.mul(&f.mul(&u, &v3), &f.pow(&f.mul(&u, &v7), &exponent));
    let vx2 = f.mul(&v, &f.square(&x));
    if vx2 == u {
        // x is a root already.
    } else if vx2 == f.neg(&u) {
        x = f.mul(&x, sqrt_m1);
    } else {
        return None;
    }
    let x_plain = f.out_of_mont(&x);
    if f.is_zero(&x_plain) && sign == 1 {
        return None;
    }
    if (x_plain[0] & 1) as u8 != sign {
        x = f.neg(&x);
    }
    Some(Extended {
        t: f.mul(&x, &y),
        x,
        y,
        z: f.one(),
    })
}

/// [`decode_with`] on the curve's constants.
fn decode(bytes: &[u8; 32]) -> Option<Extended> {
    let c = curve();
    decode_with(&c.fp, &c.d, &c.sqrt_m1, bytes)
}

/// An Ed25519 public key: a canonical encoding of a point that is not of small order.
#[derive(Clone, Debug)]
pub struct PublicKey {
    bytes: [u8; 32],
    point: Extended,
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &PublicKey) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for PublicKey {}

impl PublicKey {
    /// A key from its 32-byte encoding (an SPKI BIT STRING, a JWK's `x`).
    pub fn from_bytes(bytes: &[u8]) -> Result<PublicKey, Error> {
        let bytes: [u8; PUBLIC_KEY_LEN] = bytes
            .try_into()
            .map_err(|_| Error::malformed("Ed25519 public key", "not 32 bytes"))?;
        let point = decode(&bytes).ok_or(Error::KeyRejected(
            "Ed25519 public key is not a canonical point encoding",
        ))?;
        if point.has_small_order() {
            return Err(Error::KeyRejected("Ed25519 public key has small order"));
        }
        Ok(PublicKey { bytes, point })
    }

    pub fn as_bytes(&self) -> &[u8; PUBLIC_KEY_LEN] {
        &self.bytes
    }

    /// Verifies `signature` over `message` under the strict rules in the module doc.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        let c = curve();
        if signature.len() != SIGNATURE_LEN {
            return Err(Error::malformed("Ed25519 signature", "not 64 bytes"));
        }
        let (r_bytes, s_bytes) = signature.split_at(32);
        let r_bytes: &[u8; 32] = r_bytes.try_into().expect("32 bytes");
        let s = u256_from_le(s_bytes.try_into().expect("32 bytes"));
        if !c.fl.is_reduced(&s) {
            return Err(Error::BadSignature);
        }
        let r = decode(r_bytes).ok_or(Error::BadSignature)?;
        if r.has_small_order() {
            return Err(Error::BadSignature);
        }
        // k = SHA-512(R || A || M) as a little-endian 512-bit number, reduced mod L: with
        // h = hi * 2^256 + lo, Montgomery forms give (hi * 2^256 + lo) * 2^256, out of which
        // out_of_mont takes the plain value.
        let mut h = Sha512::new();
        h.update(r_bytes);
        h.update(&self.bytes);
        h.update(message);
        let digest = h.finish();
        let lo = u256_from_le(digest[..32].try_into().expect("32 bytes"));
        let hi = u256_from_le(digest[32..].try_into().expect("32 bytes"));
        let fl = &c.fl;
        let k = fl.out_of_mont(&fl.add(&fl.to_mont(&fl.to_mont(&hi)), &fl.to_mont(&lo)));
        let check = double_scalar_mul(&s, &c.base, &k, &self.point.negate());
        // check == R, projectively: R was decoded with Z = 1, so X = x_R Z and Y = y_R Z.
        let f = &c.fp;
        if f.mul(&r.x, &check.z) == check.x && f.mul(&r.y, &check.z) == check.y {
            Ok(())
        } else {
            Err(Error::BadSignature)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::hex::from_hex;

    /// RFC 8032 §7.1, TEST 1, 2, 3 and SHA(abc): public key, message, signature.
    const RFC8032: [(&str, &str, &str); 4] = [
        (
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        ),
        (
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        ),
        (
            "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            "af82",
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
        ),
        (
            "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
        ),
    ];

    #[test]
    fn rfc_8032_test_vectors_verify_and_any_changed_byte_fails() {
        for (key, message, signature) in RFC8032 {
            let key = PublicKey::from_bytes(&from_hex(key).unwrap()).unwrap();
            let message = from_hex(message).unwrap();
            let signature = from_hex(signature).unwrap();
            assert_eq!(key.verify(&message, &signature), Ok(()));
            let mut other = message.clone();
            other.push(0);
            assert_eq!(key.verify(&other, &signature), Err(Error::BadSignature));
            for i in [0, 31, 32, 63] {
                let mut bad = signature.clone();
                bad[i] ^= 1;
                assert!(key.verify(&message, &bad).is_err(), "byte {i}");
            }
        }
    }

    #[test]
    fn non_canonical_s_is_refused() {
        let (key, _, signature) = RFC8032[0];
        let key = PublicKey::from_bytes(&from_hex(key).unwrap()).unwrap();
        let mut signature = from_hex(signature).unwrap();
        // S + L: the same scalar mod L, which a lax verifier accepts.
        let l =
            from_hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010").unwrap();
        let mut carry = 0u16;
        for (s, l) in signature[32..].iter_mut().zip(&l) {
            let sum = u16::from(*s) + u16::from(*l) + carry;
            *s = sum as u8;
            carry = sum >> 8;
        }
        assert_eq!(key.verify(b"", &signature), Err(Error::BadSignature));
    }

    #[test]
    fn small_order_and_non_canonical_keys_are_refused() {
        // The identity (y = 1), a point of order 2 (y = -1), and y = p (non-canonical 0).
        let identity =
            from_hex("0100000000000000000000000000000000000000000000000000000000000000").unwrap();
        assert_eq!(
            PublicKey::from_bytes(&identity),
            Err(Error::KeyRejected("Ed25519 public key has small order"))
        );
        let order2 =
            from_hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f").unwrap();
        assert_eq!(
            PublicKey::from_bytes(&order2),
            Err(Error::KeyRejected("Ed25519 public key has small order"))
        );
        let y_is_p =
            from_hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f").unwrap();
        assert!(matches!(
            PublicKey::from_bytes(&y_is_p),
            Err(Error::KeyRejected(_))
        ));
        // The identity's encoding with the sign bit set: x = 0 cannot be negative.
        let mut negative_zero = identity.clone();
        negative_zero[31] |= 0x80;
        assert!(PublicKey::from_bytes(&negative_zero).is_err());
        assert!(PublicKey::from_bytes(&[0; 31]).is_err());
        assert!(PublicKey::from_bytes(&[0; 33]).is_err());
    }
}
