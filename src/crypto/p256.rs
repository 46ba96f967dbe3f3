//! ECDSA verification on P-256 with SHA-256 (FIPS 186-5 §6.4.2, SEC 1 §4.1.4), for JOSE's ES256.
//!
//! Public keys are checked when read ([`PublicKey::from_sec1`], [`PublicKey::from_coordinates`]):
//! coordinates below p, the point on the curve `y^2 = x^3 - 3x + b`, so never the point at
//! infinity (which has no affine coordinates); P-256 has cofactor 1, so every point on the curve
//! has order n. Only the uncompressed SEC 1 form is read: JWKs and SPKI from current issuers use it.
//! Signatures need `1 <= r, s < n`; the hash is reduced mod n; a sum at infinity fails.
//!
//! Verification handles public data only (the key, the message, the signature), so this code is
//! variable time by design: Jacobian coordinates over the Montgomery `Field`, windowed-NAF digits
//! on one doubling chain for `u1 G + u2 Q`, and the final comparison made without inverting Z. It
//! must not be reused for signing.

use super::asn1::parse_ecdsa_signature;
use super::error::Error;
use super::field::{
    double_scalar_mul, u256_from_be, u256_from_hex, u256_to_be, Field, Group, U256,
};
use crate::crypto::sha256;
use std::sync::OnceLock;

/// A P-256 signature in JOSE (RFC 7518 §3.4) and IEEE P1363 form is `r || s`, 32 bytes each.
pub const SIGNATURE_LEN: usize = 64;
/// The length of an uncompressed SEC 1 point: 0x04, x, y.
const SEC1_UNCOMPRESSED_LEN: usize = 65;

struct Curve {
    fp: Field,
    fn_: Field,
    /// The curve coefficient b, in Montgomery form.
    b: U256,
    /// 3 in Montgomery form (the curve's `a` is -3).
    three: U256,
    g: Jacobian,
}

fn curve() -> &'static Curve {
    static CURVE: OnceLock<Curve> = OnceLock::new();
    CURVE.get_or_init(|| {
        // FIPS 186-5 / SP 800-186 §3.2.1.3.
        let fp = Field::new(u256_from_hex(
            "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
        ));
        let fn_ = Field::new(u256_from_hex(
            "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
        ));
        let b = fp.to_mont(&u256_from_hex(
            "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b",
        ));
        let gx = fp.to_mont(&u256_from_hex(
            "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
        ));
        let gy = fp.to_mont(&u256_from_hex(
            "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5",
        ));
        let three = fp.element(3);
        let one = fp.one();
        Curve {
            fp,
            fn_,
            b,
            three,
            g: Jacobian {
                x: gx,
                y: gy,
                z: one,
            },
        }
    })
}

/// A point in Jacobian coordinates `(X/Z^2, Y/Z^3)`, Montgomery form; `Z = 0` is infinity.
#[derive(Clone, Debug)]
struct Jacobian {
    x: U256,
    y: U256,
    z: U256,
}

impl Group for Jacobian {
    fn identity(&self) -> Jacobian {
        let f = &curve().fp;
        Jacobian {
            x: f.one(),
            y: f.one(),
            z: [0; 4],
        }
    }

    fn negate(&self) -> Jacobian {
        Jacobian {
            x: self.x,
            y: curve().fp.neg(&self.y),
            z: self.z,
        }
    }

    /// dbl-2001-b (a = -3), from the Explicit-Formulas Database.
    fn double(&self) -> Jacobian {
        let c = curve();
        let f = &c.fp;
        if f.is_zero(&self.z) || f.is_zero(&self.y) {
            return self.identity();
        }
        let delta = f.square(&self.z);
        let gamma = f.square(&self.y);
        let beta = f.mul(&self.x, &gamma);
        let alpha = f.mul(
            &c.three,
            &f.mul(&f.sub(&self.x, &delta), &f.add(&self.x, &delta)),
        );
        let beta4 = f.add(&f.add(&beta, &beta), &f.add(&beta, &beta));
        let x3 = f.sub(&f.square(&alpha), &f.add(&beta4, &beta4));
        let z3 = f.sub(&f.sub(&f.square(&f.add(&self.y, &self.z)), &gamma), &delta);
        let gamma2 = f.square(&gamma);
        let gamma2_8 = {
            let two = f.add(&gamma2, &gamma2);
            let four = f.add(&two, &two);
            f.add(&four, &four)
        };
        let y3 = f.sub(&f.mul(&alpha, &f.sub(&beta4, &x3)), &gamma2_8);
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// add-2007-bl, with the cases it leaves out (infinity, equal or opposite points) first.
    fn add(&self, other: &Jacobian) -> Jacobian {
        let f = &curve().fp;
        if f.is_zero(&self.z) {
            return other.clone();
        }
        if f.is_zero(&other.z) {
            return self.clone();
        }
        let z1z1 = f.square(&self.z);
        let z2z2 = f.square(&other.z);
        let u1 = f.mul(&self.x, &z2z2);
        let u2 = f.mul(&other.x, &z1z1);
        let s1 = f.mul(&self.y, &f.mul(&other.z, &z2z2));
        let s2 = f.mul(&other.y, &f.mul(&self.z, &z1z1));
        let h = f.sub(&u2, &u1);
        let s_diff = f.sub(&s2, &s1);
        if f.is_zero(&h) {
            return if f.is_zero(&s_diff) {
                self.double()
            } else {
                self.identity()
            };
        }
        let r = f.add(&s_diff, &s_diff);
        let h2 = f.add(&h, &h);
        let i = f.square(&h2);
        let j = f.mul(&h, &i);
        let v = f.mul(&u1, &i);
        let x3 = f.sub(&f.sub(&f.square(&r), &j), &f.add(&v, &v));
        let s1j = f.mul(&s1, &j);
        let y3 = f.sub(&f.mul(&r, &f.sub(&v, &x3)), &f.add(&s1j, &s1j));
        let z_sum = f.square(&f.add(&self.z, &other.z));
        let z3 = f.mul(&f.sub(&f.sub(&z_sum, &z1z1), &z2z2), &h);
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }
}

/// A P-256 public key: a point on the curve, checked when made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    /// Affine coordinates, plain (not Montgomery) values below p.
    x: U256,
    y: U256,
}

impl PublicKey {
    /// A key from its affine coordinates as 32-byte big-endian values (a JWK's `x` and `y`).
    pub fn from_coordinates(x: &[u8; 32], y: &[u8; 32]) -> Result<PublicKey, Error> {
        let c = curve();
        let f = &c.fp;
        let (x, y) = (u256_from_be(x), u256_from_be(y));
        if !f.is_reduced(&x) || !f.is_reduced(&y) {
            return Err(Error::KeyRejected(
                "P-256 coordinate not below the field prime",
            ));
        }
        let (xm, ym) = (f.to_mont(&x), f.to_mont(&y));
        let x3 = f.mul(&f.square(&xm), &xm);
        let rhs = f.add(&f.sub(&x3, &f.mul(&c.three, &xm)), &c.b);
        if f.square(&ym) != rhs {
            return Err(Error::KeyRejected("P-256 point not on the curve"));
        }
        Ok(PublicKey { x, y })
    }

    /// A key from the SEC 1 uncompressed encoding `04 || x || y` (the SPKI BIT STRING contents).
    pub fn from_sec1(bytes: &[u8]) -> Result<PublicKey, Error> {
        match bytes {
            [0x04, rest @ ..] if rest.len() == SEC1_UNCOMPRESSED_LEN - 1 => {
                let (x, y) = rest.split_at(32);
                PublicKey::from_coordinates(
                    x.try_into().expect("32 bytes"),
                    y.try_into().expect("32 bytes"),
                )
            }
            [0x02 | 0x03, ..] => Err(Error::Unsupported(
                "compressed P-256 point (only the uncompressed form is read)".into(),
            )),
            _ => Err(Error::malformed(
                "P-256 public key",
                "not a 65-byte uncompressed point",
            )),
        }
    }

    /// The affine coordinates as 32-byte big-endian values.
    pub fn coordinates(&self) -> ([u8; 32], [u8; 32]) {
        (u256_to_be(&self.x), u256_to_be(&self.y))
    }

    /// Verifies a signature in JOSE / IEEE P1363 form: `r || s`, 32 bytes each.
    pub fn verify_p1363(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        if signature.len() != SIGNATURE_LEN {
            return Err(Error::malformed("ES256 signature", "not 64 bytes"));
        }
        let (r, s) = signature.split_at(32);
        self.verify_scalars(message, r, s)
    }

    /// Verifies a DER `SEQUENCE { r INTEGER, s INTEGER }` signature (X.509, TLS).
    pub fn verify_der(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        let (r, s) = parse_ecdsa_signature(signature)?;
        self.verify_scalars(message, r, s)
    }

    /// FIPS 186-5 §6.4.2 over `r` and `s` given as big-endian magnitudes.
    fn verify_scalars(&self, message: &[u8], r: &[u8], s: &[u8]) -> Result<(), Error> {
        let c = curve();
        let (fp, fn_) = (&c.fp, &c.fn_);
        let scalar = |bytes: &[u8]| -> Result<U256, Error> {
            let mut limbs = [0u64; 4];
            if !super::bignum::limbs_from_be(bytes, &mut limbs)
                || super::bignum::is_zero(&limbs)
                || !fn_.is_reduced(&limbs)
            {
                return Err(Error::BadSignature);
            }
            Ok(limbs)
        };
        let (r, s) = (scalar(r)?, scalar(s)?);
        // e: the 256-bit hash, reduced mod n by the conversion to Montgomery form.
        let e = fn_.to_mont(&u256_from_be(&sha256::digest(message)));
        let w = fn_.invert(&fn_.to_mont(&s));
        let u1 = fn_.out_of_mont(&fn_.mul(&e, &w));
        let u2 = fn_.out_of_mont(&fn_.mul(&fn_.to_mont(&r), &w));
        let q = Jacobian {
            x: fp.to_mont(&self.x),
            y: fp.to_mont(&self.y),
            z: fp.one(),
        };
        let sum = double_scalar_mul(&u1, &c.g, &u2, &q);
        if fp.is_zero(&sum.z) {
            return Err(Error::BadSignature);
        }
        // x(sum) mod n == r, checked without inverting Z: X / Z^2 is below p, and the values
        // below p that are r mod n are r and, when it is still below p, r + n.
        let z2 = fp.square(&sum.z);
        let matches = |candidate: &U256| fp.mul(&fp.to_mont(candidate), &z2) == sum.x;
        let mut r_plus_n = r;
        let wrapped = super::bignum::add_assign(&mut r_plus_n, fn_.modulus());
        if matches(&r) || (!wrapped && fp.is_reduced(&r_plus_n) && matches(&r_plus_n)) {
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

    fn arr(hex: &str) -> [u8; 32] {
        from_hex(hex).unwrap().try_into().unwrap()
    }

    /// The generator itself as a public key (private key 1).
    fn generator_key() -> PublicKey {
        PublicKey::from_coordinates(
            &arr("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
            &arr("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
        )
        .unwrap()
    }

    /// RFC 6979 appendix A.2.5: P-256, SHA-256, message "sample" (deterministic k).
    #[test]
    fn rfc_6979_sample_signature_verifies_and_a_changed_one_does_not() {
        let key = PublicKey::from_coordinates(
            &arr("60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"),
            &arr("7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"),
        )
        .unwrap();
        let sig = from_hex(concat!(
            "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716",
            "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"
        ))
        .unwrap();
        assert_eq!(key.verify_p1363(b"sample", &sig), Ok(()));
        assert_eq!(key.verify_p1363(b"samplf", &sig), Err(Error::BadSignature));
        for i in [0, 31, 32, 63] {
            let mut bad = sig.clone();
            bad[i] ^= 0x10;
            assert_eq!(key.verify_p1363(b"sample", &bad), Err(Error::BadSignature));
        }
        assert_eq!(
            generator_key().verify_p1363(b"sample", &sig),
            Err(Error::BadSignature)
        );
    }

    #[test]
    fn points_off_the_curve_or_out_of_range_are_refused() {
        let g = generator_key();
        let (x, mut y) = g.coordinates();
        y[31] ^= 1;
        assert_eq!(
            PublicKey::from_coordinates(&x, &y),
            Err(Error::KeyRejected("P-256 point not on the curve"))
        );
        let p = arr("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
        assert_eq!(
            PublicKey::from_coordinates(&p, &y),
            Err(Error::KeyRejected(
                "P-256 coordinate not below the field prime"
            ))
        );
        // (0, 0) is not on the curve (b != 0): the usual encoding of infinity is refused.
        assert!(PublicKey::from_coordinates(&[0; 32], &[0; 32]).is_err());
        assert!(PublicKey::from_sec1(&[0x00]).is_err());
        assert!(matches!(
            PublicKey::from_sec1(&[0x02; 33]),
            Err(Error::Unsupported(_))
        ));
        let mut sec1 = vec![0x04];
        sec1.extend_from_slice(&g.coordinates().0);
        sec1.extend_from_slice(&g.coordinates().1);
        assert_eq!(PublicKey::from_sec1(&sec1), Ok(g.clone()));
        assert!(PublicKey::from_sec1(&sec1[..64]).is_err());
    }

    #[test]
    fn signatures_with_r_or_s_zero_or_not_below_n_fail() {
        let g = generator_key();
        let n = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
        let one = format!("{:0>64}", "1");
        for (r, s) in [
            ("0".repeat(64), one.clone()),
            (one.clone(), "0".repeat(64)),
            (n.to_string(), one.clone()),
            (one.clone(), n.to_string()),
            ("f".repeat(64), one.clone()),
        ] {
            let sig = from_hex(&format!("{r}{s}")).unwrap();
            assert_eq!(g.verify_p1363(b"m", &sig), Err(Error::BadSignature));
        }
        assert!(matches!(
            g.verify_p1363(b"m", &[1; 63]),
            Err(Error::Malformed { .. })
        ));
    }
}
