//! Arithmetic modulo a 256-bit odd modulus in Montgomery form: the base and scalar fields of P-256
//! and of Ed25519, one type for all four on the shared [`bignum`](super::bignum) core.
//!
//! Elements are `[u64; 4]`, little-endian limbs; every method except [`Field::to_mont`] and
//! [`Field::out_of_mont`] takes and returns Montgomery forms (`a * 2^256 mod m`). Not constant time:
//! only public values pass through here.

use super::bignum::{self, add_mod, mont_mul, neg_inverse_u64, r_squared, sub_mod};
use std::cmp::Ordering;

/// A 256-bit number, little-endian limbs.
pub(crate) type U256 = [u64; 4];

/// Reads 32 big-endian bytes.
pub(crate) fn u256_from_be(bytes: &[u8; 32]) -> U256 {
    let mut out = [0u64; 4];
    bignum::limbs_from_be(bytes, &mut out);
    out
}

/// Writes 32 big-endian bytes.
pub(crate) fn u256_to_be(a: &U256) -> [u8; 32] {
    let mut out = [0u8; 32];
    bignum::limbs_to_be(a, &mut out);
    out
}

/// Reads 32 little-endian bytes (Ed25519's byte order).
pub(crate) fn u256_from_le(bytes: &[u8; 32]) -> U256 {
    let mut reversed = *bytes;
    reversed.reverse();
    u256_from_be(&reversed)
}

/// A group of curve points in some projective form, enough for [`double_scalar_mul`].
pub(crate) trait Group: Clone {
    fn identity(&self) -> Self;
    fn add(&self, other: &Self) -> Self;
    fn double(&self) -> Self;
}

/// `[a]P + [b]Q` by Shamir's trick: one doubling per bit of the longer scalar and at most one
/// addition (of P, Q or the precomputed P + Q). Variable time, for public scalars only.
pub(crate) fn double_scalar_mul<G: Group>(a: &U256, p: &G, b: &U256, q: &G) -> G {
    let both = p.add(q);
    let mut acc = p.identity();
    for i in (0..bignum::bit_len(a).max(bignum::bit_len(b))).rev() {
        acc = acc.double();
        match (bignum::bit(a, i), bignum::bit(b, i)) {
            (true, true) => acc = acc.add(&both),
            (true, false) => acc = acc.add(p),
            (false, true) => acc = acc.add(q),
            (false, false) => {}
        }
    }
    acc
}

/// Reads a 256-bit number from big-endian hex of up to 64 digits (for the curve constants).
pub(crate) fn u256_from_hex(hex: &str) -> U256 {
    let padded = format!("{hex:0>64}");
    let bytes = super::from_hex(&padded).expect("a hex constant");
    u256_from_be(bytes.as_slice().try_into().expect("32 bytes"))
}

/// An odd 256-bit modulus prepared for Montgomery arithmetic.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    m: U256,
    m_inv: u64,
    r2: U256,
    one: U256,
}

impl Field {
    /// `m` must be odd and above 2^192 (every modulus here is near 2^252 or 2^256).
    pub(crate) fn new(m: U256) -> Field {
        debug_assert!(m[0] & 1 == 1 && m[3] != 0);
        let m_inv = neg_inverse_u64(m[0]);
        let r2: U256 = r_squared(&m, m_inv)
            .try_into()
            .expect("four limbs for a four-limb modulus");
        let mut field = Field {
            m,
            m_inv,
            r2,
            one: [0; 4],
        };
        field.one = field.to_mont(&[1, 0, 0, 0]);
        field
    }

    /// Whether `a < m`: a canonical encoding of a field element.
    pub(crate) fn is_reduced(&self, a: &U256) -> bool {
        bignum::cmp(a, &self.m) == Ordering::Less
    }

    /// The Montgomery form of `a mod m`; `a` may be any 256-bit number.
    pub(crate) fn to_mont(&self, a: &U256) -> U256 {
        self.mul(a, &self.r2)
    }

    /// The plain value (reduced below `m`) of a Montgomery form.
    pub(crate) fn out_of_mont(&self, a: &U256) -> U256 {
        self.mul(a, &[1, 0, 0, 0])
    }

    pub(crate) fn one(&self) -> U256 {
        self.one
    }

    pub(crate) fn element(&self, x: u64) -> U256 {
        self.to_mont(&[x, 0, 0, 0])
    }

    pub(crate) fn mul(&self, a: &U256, b: &U256) -> U256 {
        let mut out = [0u64; 4];
        let mut scratch = [0u64; bignum::scratch_len(4)];
        mont_mul(&mut out, a, b, &self.m, self.m_inv, &mut scratch);
        out
    }

    pub(crate) fn square(&self, a: &U256) -> U256 {
        let mut out = [0u64; 4];
        let mut scratch = [0u64; bignum::scratch_len(4)];
        bignum::mont_square(&mut out, a, &self.m, self.m_inv, &mut scratch);
        out
    }

    pub(crate) fn add(&self, a: &U256, b: &U256) -> U256 {
        let mut out = *a;
        add_mod(&mut out, b, &self.m);
        out
    }

    pub(crate) fn sub(&self, a: &U256, b: &U256) -> U256 {
        let mut out = *a;
        sub_mod(&mut out, b, &self.m);
        out
    }

    pub(crate) fn neg(&self, a: &U256) -> U256 {
        self.sub(&[0; 4], a)
    }

    /// `a^e` for a plain exponent `e` (left-to-right square and multiply).
    pub(crate) fn pow(&self, a: &U256, e: &U256) -> U256 {
        let mut acc = self.one;
        for i in (0..bignum::bit_len(e)).rev() {
            acc = self.square(&acc);
            if bignum::bit(e, i) {
                acc = self.mul(&acc, a);
            }
        }
        acc
    }

    /// `a^-1` by Fermat (`a^(m-2)`; `m` is prime for every field here); zero maps to zero.
    pub(crate) fn invert(&self, a: &U256) -> U256 {
        let mut exponent = self.m;
        bignum::sub_assign(&mut exponent, &[2, 0, 0, 0]);
        self.pow(a, &exponent)
    }

    pub(crate) fn is_zero(&self, a: &U256) -> bool {
        bignum::is_zero(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_mod_a_small_prime_held_in_four_limbs_agrees_with_u128() {
        // 2^255 - 19 is prime; check a few identities against plain values.
        let p = u256_from_hex("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed");
        let f = Field::new(p);
        let a = f.element(123_456_789);
        let b = f.element(987_654_321);
        assert_eq!(
            f.out_of_mont(&f.mul(&a, &b)),
            [123_456_789u64 * 987_654_321, 0, 0, 0]
        );
        assert_eq!(f.out_of_mont(&f.add(&a, &b)), [1_111_111_110, 0, 0, 0]);
        assert_eq!(
            f.out_of_mont(&f.add(&f.sub(&a, &b), &b)),
            [123_456_789, 0, 0, 0]
        );
        assert_eq!(f.mul(&a, &f.invert(&a)), f.one());
        assert_eq!(f.out_of_mont(&f.neg(&f.one())), {
            let mut m1 = p;
            bignum::sub_assign(&mut m1, &[1, 0, 0, 0]);
            m1
        });
        // p itself reduces to zero; p - 1 is canonical, p is not.
        assert!(f.is_zero(&f.to_mont(&p)));
        assert!(!f.is_reduced(&p));
        assert_eq!(u256_to_be(&u256_from_be(&[7; 32])), [7; 32]);
    }
}
