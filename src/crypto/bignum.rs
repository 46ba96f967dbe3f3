//! Unsigned integers as little-endian 64-bit limbs and Montgomery multiplication over them: the one
//! modular-arithmetic core under RSA (moduli of any length up to `rsa::MAX_MODULUS_BITS`)
//! and the 256-bit fields of P-256 and Ed25519.
//!
//! Functions work on limb slices of one length `n` so that a fixed-size field element (`[u64; 4]`)
//! and an RSA number (`Vec<u64>`) share the code. Nothing here is constant time: it handles public
//! values only (see the [`crypto`](super) module doc).

use std::cmp::Ordering;

/// Reads big-endian `bytes` into little-endian limbs `out`, zero-extended; `false` if the value
/// needs more limbs than `out` has.
pub(crate) fn limbs_from_be(bytes: &[u8], out: &mut [u64]) -> bool {
    out.fill(0);
    let significant = bytes
        .iter()
        .position(|&b| b != 0)
        .map_or(&[][..], |i| &bytes[i..]);
    if significant.len() > out.len() * 8 {
        return false;
    }
    for (i, &byte) in significant.iter().rev().enumerate() {
        out[i / 8] |= u64::from(byte) << (8 * (i % 8));
    }
    true
}

/// Writes `limbs` as big-endian bytes filling `out`; `false` if the value does not fit.
pub(crate) fn limbs_to_be(limbs: &[u64], out: &mut [u8]) -> bool {
    out.fill(0);
    for (i, &limb) in limbs.iter().enumerate() {
        for (j, byte) in limb.to_le_bytes().into_iter().enumerate() {
            let position = i * 8 + j;
            if position < out.len() {
                let at = out.len() - 1 - position;
                out[at] = byte;
            } else if byte != 0 {
                return false;
            }
        }
    }
    true
}

/// Compares two numbers of the same limb count.
pub(crate) fn cmp(a: &[u64], b: &[u64]) -> Ordering {
    debug_assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        match x.cmp(y) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

pub(crate) fn is_zero(a: &[u64]) -> bool {
    a.iter().all(|&limb| limb == 0)
}

/// `a += b`, returning the carry out.
pub(crate) fn add_assign(a: &mut [u64], b: &[u64]) -> bool {
    let mut carry = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (s1, c1) = x.overflowing_add(y);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        *x = s2;
        carry = c1 || c2;
    }
    carry
}

/// `a -= b`, returning the borrow out.
pub(crate) fn sub_assign(a: &mut [u64], b: &[u64]) -> bool {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *x = d2;
        borrow = b1 || b2;
    }
    borrow
}

/// `a = (a + b) mod m` for `a, b < m`.
pub(crate) fn add_mod(a: &mut [u64], b: &[u64], m: &[u64]) {
    let carry = add_assign(a, b);
    if carry || cmp(a, m) != Ordering::Less {
        sub_assign(a, m);
    }
}

/// `a = (a - b) mod m` for `a, b < m`.
pub(crate) fn sub_mod(a: &mut [u64], b: &[u64], m: &[u64]) {
    if sub_assign(a, b) {
        add_assign(a, m);
    }
}

/// The number of significant bits.
pub(crate) fn bit_len(a: &[u64]) -> usize {
    a.iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |i| i * 64 + 64 - a[i].leading_zeros() as usize)
}

/// Bit `i` (0 = least significant).
pub(crate) fn bit(a: &[u64], i: usize) -> bool {
    (a[i / 64] >> (i % 64)) & 1 == 1
}

/// `-m0^-1 mod 2^64` for odd `m0`: Newton's iteration doubles the correct low bits each step
/// (1 → 2 → 4 → ... → 64 from the seed `m0`, which is its own inverse mod 8).
pub(crate) fn neg_inverse_u64(m0: u64) -> u64 {
    let mut inv = m0;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(inv)));
    }
    inv.wrapping_neg()
}

/// Montgomery multiplication, separated operand scanning: `out = a * b / 2^(64n) mod m` for
/// `b < m` and `a < 2^(64n)`, with `m` odd and `m_inv = -m^-1 mod 2^64`. `scratch` holds
/// [`scratch_len`]`(n)` limbs. The full product is formed first and then reduced a limb at a time,
/// so every inner loop walks zipped slices with no index arithmetic (no bounds checks in them).
#[inline(always)]
pub(crate) fn mont_mul(
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
    m: &[u64],
    m_inv: u64,
    scratch: &mut [u64],
) {
    let n = m.len();
    let t = &mut scratch[..2 * n + 1];
    t.fill(0);
    for (i, &ai) in a.iter().enumerate() {
        t[i + n] = mul_add(&mut t[i..i + n], b, ai);
    }
    mont_reduce(out, t, m, m_inv);
}

/// Montgomery squaring: [`mont_mul`]`(out, a, a, ...)` for `a < m`, with each cross product
/// `a[i] * a[j]` formed once and doubled (about half the multiplications of the product step).
#[inline(always)]
pub(crate) fn mont_square(out: &mut [u64], a: &[u64], m: &[u64], m_inv: u64, scratch: &mut [u64]) {
    let n = m.len();
    let t = &mut scratch[..2 * n + 1];
    t.fill(0);
    for (i, &ai) in a.iter().enumerate() {
        let carry = mul_add(&mut t[2 * i + 1..i + n], &a[i + 1..], ai);
        t[i + n] = carry;
    }
    // Double the cross products, then add the squares a[i]^2 on the diagonal.
    let mut top = 0u64;
    for limb in t[..2 * n].iter_mut() {
        let next = *limb >> 63;
        *limb = (*limb << 1) | top;
        top = next;
    }
    let mut carry = 0u64;
    for (pair, &ai) in t[..2 * n].chunks_exact_mut(2).zip(a) {
        let square = u128::from(ai) * u128::from(ai);
        let low = u128::from(pair[0]) + (square as u64 as u128) + u128::from(carry);
        pair[0] = low as u64;
        let high = u128::from(pair[1]) + (square >> 64) + (low >> 64);
        pair[1] = high as u64;
        carry = (high >> 64) as u64;
    }
    // a < m < 2^(64n): the square fits in 2n limbs, so no carry is left over.
    debug_assert_eq!(carry | top, 0);
    mont_reduce(out, t, m, m_inv);
}

/// `acc += x * y` over `acc.len() == x.len()` limbs; returns the carry limb out.
#[inline(always)]
fn mul_add(acc: &mut [u64], x: &[u64], y: u64) -> u64 {
    let mut carry = 0u64;
    for (limb, &xj) in acc.iter_mut().zip(x) {
        let sum = u128::from(*limb) + u128::from(xj) * u128::from(y) + u128::from(carry);
        *limb = sum as u64;
        carry = (sum >> 64) as u64;
    }
    carry
}

/// Montgomery reduction of the `2n + 1`-limb `t` (below `m * 2^(64n)`) into `out = t / 2^(64n)
/// mod m`.
#[inline(always)]
fn mont_reduce(out: &mut [u64], t: &mut [u64], m: &[u64], m_inv: u64) {
    let n = m.len();
    for i in 0..n {
        // Adding q * m makes limb i zero; the limbs below n are dropped at the end.
        let q = t[i].wrapping_mul(m_inv);
        let mut carry = mul_add(&mut t[i..i + n], m, q);
        for tj in t[i + n..].iter_mut() {
            if carry == 0 {
                break;
            }
            let (sum, overflow) = tj.overflowing_add(carry);
            *tj = sum;
            carry = u64::from(overflow);
        }
    }
    // The quotient is below 2m: n limbs and t[2n]'s one bit.
    out.copy_from_slice(&t[n..2 * n]);
    if t[2 * n] != 0 || cmp(out, m) != Ordering::Less {
        sub_assign(out, m);
    }
}

/// The scratch [`mont_mul`] needs for an `n`-limb modulus.
pub(crate) const fn scratch_len(n: usize) -> usize {
    2 * n + 1
}

/// `2^(128n) mod m`, the constant that takes a number into Montgomery form (`mont_mul(a, r2)`),
/// for an odd `m > 1` of `n` limbs.
pub(crate) fn r_squared(m: &[u64], m_inv: u64) -> Vec<u64> {
    let n = m.len();
    let bits = bit_len(m);
    let double = |x: &mut Vec<u64>| {
        let copy = x.clone();
        let carry = add_assign(x, &copy);
        if carry || cmp(x, m) != Ordering::Less {
            sub_assign(x, m);
        }
    };
    // 2^(bits-1) < m; doubling it up to 2^(64n) gives R mod m, the Montgomery form of 1.
    let mut one = vec![0u64; n];
    one[(bits - 1) / 64] = 1 << ((bits - 1) % 64);
    for _ in 0..(64 * n - bits + 1) {
        double(&mut one);
    }
    let mut two = one.clone();
    double(&mut two);
    // Raise 2 to the power 64n in Montgomery form: the result is 2^(64n) * R = R^2 mod m.
    let exponent = 64 * n;
    let mut acc = one;
    let mut scratch = vec![0u64; scratch_len(n)];
    let mut product = vec![0u64; n];
    for i in (0..usize::BITS as usize - exponent.leading_zeros() as usize).rev() {
        mont_square(&mut product, &acc, m, m_inv, &mut scratch);
        acc.copy_from_slice(&product);
        if (exponent >> i) & 1 == 1 {
            mont_mul(&mut product, &acc, &two, m, m_inv, &mut scratch);
            acc.copy_from_slice(&product);
        }
    }
    acc
}

/// An odd modulus of any length prepared for Montgomery arithmetic (RSA's `n`).
#[derive(Clone, Debug)]
pub(crate) struct Modulus {
    m: Vec<u64>,
    m_inv: u64,
    r2: Vec<u64>,
}

impl Modulus {
    /// `None` unless `m` is odd and greater than 1. Leading zero limbs are dropped.
    pub(crate) fn new(m: &[u64]) -> Option<Modulus> {
        let used = m.iter().rposition(|&limb| limb != 0)? + 1;
        let m = m[..used].to_vec();
        if m[0] & 1 == 0 || (used == 1 && m[0] == 1) {
            return None;
        }
        let m_inv = neg_inverse_u64(m[0]);
        let r2 = r_squared(&m, m_inv);
        Some(Modulus { m, m_inv, r2 })
    }

    pub(crate) fn limbs(&self) -> &[u64] {
        &self.m
    }

    /// `base^exponent mod m` for `base < m` (left-to-right square and multiply).
    pub(crate) fn pow(&self, base: &[u64], exponent: u64) -> Vec<u64> {
        let n = self.m.len();
        let mut one = vec![0u64; n];
        one[0] = 1;
        if exponent == 0 {
            return one;
        }
        let mut scratch = vec![0u64; scratch_len(n)];
        let mut base_mont = vec![0u64; n];
        mont_mul(
            &mut base_mont,
            base,
            &self.r2,
            &self.m,
            self.m_inv,
            &mut scratch,
        );
        let mut acc = base_mont.clone();
        let mut product = vec![0u64; n];
        let top = 63 - exponent.leading_zeros() as usize;
        for i in (0..top).rev() {
            mont_square(&mut product, &acc, &self.m, self.m_inv, &mut scratch);
            std::mem::swap(&mut acc, &mut product);
            if (exponent >> i) & 1 == 1 {
                mont_mul(
                    &mut product,
                    &acc,
                    &base_mont,
                    &self.m,
                    self.m_inv,
                    &mut scratch,
                );
                std::mem::swap(&mut acc, &mut product);
            }
        }
        // Out of Montgomery form: multiply by plain 1.
        mont_mul(&mut product, &one, &acc, &self.m, self.m_inv, &mut scratch);
        product
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `base^e mod m` by repeated u128 multiplication, for checking small cases.
    fn pow_small(base: u64, e: u64, m: u64) -> u64 {
        let mut acc = 1u128;
        for _ in 0..e {
            acc = acc * u128::from(base) % u128::from(m);
        }
        acc as u64
    }

    #[test]
    fn one_limb_powers_agree_with_plain_arithmetic() {
        for m in [3u64, 5, 0xffff_fffb, 0xffff_ffff_ffff_ffc5, (1 << 63) + 1] {
            let modulus = Modulus::new(&[m]).unwrap();
            for base in [0u64, 1, 2, 12345, m - 1] {
                for e in [0u64, 1, 2, 3, 17, 100] {
                    assert_eq!(
                        modulus.pow(&[base], e),
                        vec![pow_small(base, e, m)],
                        "{base}^{e} mod {m}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_limb_modulus_matches_u128_arithmetic() {
        let m: u128 = (1u128 << 127) - 1; // a Mersenne prime, odd, two limbs
        let limbs = [m as u64, (m >> 64) as u64];
        let modulus = Modulus::new(&limbs).unwrap();
        let base: u128 = 0x1234_5678_9abc_def0_0fed_cba9_8765_4321;
        // base^2 mod m computed through halves to stay inside u128.
        let mut expected = 0u128;
        let mut addend = base % m;
        let mut k = base % m;
        while k > 0 {
            if k & 1 == 1 {
                expected = (expected + addend) % m;
            }
            addend = (addend << 1) % m;
            k >>= 1;
        }
        let got = modulus.pow(&[base as u64, (base >> 64) as u64], 2);
        assert_eq!(u128::from(got[0]) | (u128::from(got[1]) << 64), expected);
    }

    #[test]
    fn squaring_agrees_with_multiplication_for_every_size_and_edge_value() {
        // A simple xorshift stream fills moduli and operands of 1 to 9 limbs.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in 1..=9 {
            for _ in 0..20 {
                let mut m: Vec<u64> = (0..n).map(|_| next()).collect();
                m[0] |= 1;
                m[n - 1] |= 1 << 63;
                let modulus = Modulus::new(&m).unwrap();
                let mut m_minus_1 = m.clone();
                m_minus_1[0] -= 1;
                let random: Vec<u64> = (0..n).map(|_| next() >> 1).collect();
                for a in [vec![0; n], m_minus_1, random] {
                    let mut scratch = vec![0; scratch_len(n)];
                    let (mut product, mut square) = (vec![0; n], vec![0; n]);
                    mont_mul(&mut product, &a, &a, &m, modulus.m_inv, &mut scratch);
                    mont_square(&mut square, &a, &m, modulus.m_inv, &mut scratch);
                    assert_eq!(product, square, "n = {n}, a = {a:x?}, m = {m:x?}");
                }
            }
        }
    }

    #[test]
    fn even_zero_and_one_moduli_are_refused() {
        assert!(Modulus::new(&[4]).is_none());
        assert!(Modulus::new(&[0, 0]).is_none());
        assert!(Modulus::new(&[1, 0]).is_none());
        assert!(Modulus::new(&[]).is_none());
        assert_eq!(Modulus::new(&[7, 0]).unwrap().limbs(), &[7]);
    }

    #[test]
    fn byte_conversions_round_trip_and_report_overflow() {
        let mut limbs = [0u64; 2];
        assert!(limbs_from_be(
            &[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            &mut limbs
        ));
        assert_eq!(limbs, [0x0203_0405_0607_0809, 0x01]);
        let mut out = [0u8; 9];
        assert!(limbs_to_be(&limbs, &mut out));
        assert_eq!(out, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert!(!limbs_to_be(&limbs, &mut [0u8; 8]));
        assert!(!limbs_from_be(&[1; 17], &mut limbs));
        assert_eq!(bit_len(&[0, 1]), 65);
        assert_eq!(bit_len(&[0, 0]), 0);
    }
}
