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
    fn negate(&self) -> Self;
}

/// The width of the windowed non-adjacent form: digits are odd and below 2^(W-1) in magnitude,
/// at least W - 1 zeros follow each nonzero digit, so about one addition in W + 1 bits.
const WNAF_WIDTH: u32 = 5;
/// The odd multiples P, 3P, ..., (2^(W-1) - 1)P precomputed per point.
const WNAF_TABLE: usize = 1 << (WNAF_WIDTH - 2);

/// The width-[`WNAF_WIDTH`] NAF of `k`, least significant digit first (257 digits cover 256 bits).
fn wnaf(k: &U256) -> [i8; 257] {
    // One limb more than k, for the carry a negative digit leaves.
    let mut k = [k[0], k[1], k[2], k[3], 0];
    let mut digits = [0i8; 257];
    let window = 1u64 << WNAF_WIDTH;
    for digit in digits.iter_mut() {
        if bignum::is_zero(&k) {
            break;
        }
        if k[0] & 1 == 1 {
            let low = k[0] & (window - 1);
            let d = if low >= window / 2 {
                low as i64 - window as i64
            } else {
                low as i64
            };
            *digit = d as i8;
            // k -= d, leaving k even (a negative d adds |d|).
            let magnitude = [d.unsigned_abs(), 0, 0, 0, 0];
            if d > 0 {
                bignum::sub_assign(&mut k, &magnitude);
            } else {
                bignum::add_assign(&mut k, &magnitude);
            }
        }
        for i in 0..4 {
            k[i] = (k[i] >> 1) | (k[i + 1] << 63);
        }
        k[4] >>= 1;
    }
    digits
}

/// P, 3P, 5P, ..., the odd multiples a wNAF digit selects.
fn odd_multiples<G: Group>(p: &G) -> Vec<G> {
    let twice = p.double();
    let mut table = Vec::with_capacity(WNAF_TABLE);
    table.push(p.clone());
    for i in 1..WNAF_TABLE {
        let next = table[i - 1].add(&twice);
        table.push(next);
    }
    table
}

/// `[a]P + [b]Q`, both scalars in windowed NAF over one shared chain of doublings (Straus-Shamir):
/// one doubling per bit and about one addition per [`WNAF_WIDTH`] + 1 bits of each scalar.
/// Variable time, for public scalars only.
pub(crate) fn double_scalar_mul<G: Group>(a: &U256, p: &G, b: &U256, q: &G) -> G {
    let (naf_a, naf_b) = (wnaf(a), wnaf(b));
    let (table_p, table_q) = (odd_multiples(p), odd_multiples(q));
    let top = naf_a
        .iter()
        .zip(&naf_b)
        .rposition(|(x, y)| *x != 0 || *y != 0);
    let mut acc = p.identity();
    let Some(top) = top else {
        return acc;
    };
    let add_digit = |acc: G, digit: i8, table: &[G]| match digit {
        0 => acc,
        d if d > 0 => acc.add(&table[(d / 2) as usize]),
        d => acc.add(&table[(-d / 2) as usize].negate()),
    };
    for i in (0..=top).rev() {
        acc = acc.double();
        acc = add_digit(acc, naf_a[i], &table_p);
        acc = add_digit(acc, naf_b[i], &table_q);
    }
    acc
}

/// Reads a 256-bit number from big-endian hex of up to 64 digits (for the curve constants).
pub(crate) fn u256_from_hex(hex: &str) -> U256 {
    let padded = format!("{hex:0>64}");
    let bytes = super::hex::from_hex(&padded).expect("a hex constant");
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

    pub(crate) fn modulus(&self) -> &U256 {
        &self.m
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
    fn wnaf_digits_are_odd_sparse_and_sum_to_the_scalar() {
        let scalars = [
            [0u64; 4],
            [1, 0, 0, 0],
            [u64::MAX; 4],
            [
                0x0123_4567_89ab_cdef,
                0xfedc_ba98_7654_3210,
                0x0f0f_0f0f_f0f0_f0f0,
                0x8000_0000_0000_0001,
            ],
            u256_from_hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550"),
        ];
        for k in scalars {
            let digits = wnaf(&k);
            // Rebuild k from the top: value = 2 * value + digit, in five limbs.
            let mut value = [0u64; 5];
            let mut gap = usize::MAX;
            for &d in digits.iter().rev() {
                let copy = value;
                bignum::add_assign(&mut value, &copy);
                let magnitude = [u64::from(d.unsigned_abs()), 0, 0, 0, 0];
                if d > 0 {
                    bignum::add_assign(&mut value, &magnitude);
                } else if d < 0 {
                    bignum::sub_assign(&mut value, &magnitude);
                }
                if d != 0 {
                    assert!(
                        d % 2 != 0 && d.unsigned_abs() < 1 << (WNAF_WIDTH - 1),
                        "{d}"
                    );
                    assert!(gap >= WNAF_WIDTH as usize - 1, "digits too close in {k:x?}");
                    gap = 0;
                } else {
                    gap = gap.saturating_add(1);
                }
            }
            assert_eq!(value, [k[0], k[1], k[2], k[3], 0], "{k:x?}");
        }
    }

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
