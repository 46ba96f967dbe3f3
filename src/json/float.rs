//! Correctly rounded conversion of a decimal `w × 10^q` to the nearest `f64`, without text.
//!
//! The parser has already read the digits, so going back to `str::parse` would scan them twice.
//! Two exact algorithms cover nearly every JSON number; whatever they cannot decide is reported as
//! `None` and the caller falls back to `str::parse::<f64>` (also correctly rounded):
//! - Clinger's fast path: when `w < 2^53` and `|q| <= 22`, both `w` and `10^|q|` are exact doubles
//!   and one IEEE multiplication or division rounds once, correctly.
//! - The Eisel–Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per Second", 2021), which
//!   multiplies `w` by a 128-bit truncation of `5^q` and either proves the rounding or gives up.
//!   The table of powers is computed at compile time from its definition (big-integer arithmetic in a
//!   `const fn`), so it carries no hand-copied constants.

use super::bigint::{
    add_one, bit_length, bits_128, divide_small, multiply_small, shift_right, top_128, LIMBS,
};

/// The smallest decimal exponent with a table entry; below it any 19-digit `w` rounds to zero.
const SMALLEST_POWER_OF_TEN: i32 = -342;
/// The largest decimal exponent with a table entry; above it any non-zero `w` overflows.
const LARGEST_POWER_OF_TEN: i32 = 308;
const TABLE_LEN: usize = (LARGEST_POWER_OF_TEN - SMALLEST_POWER_OF_TEN + 1) as usize;

/// Explicit mantissa bits of an f64.
const MANTISSA_BITS: u32 = 52;
/// Exponent bias of an f64 (a biased exponent of 0 is subnormal).
const MINIMUM_EXPONENT: i32 = -1023;
/// The biased exponent of infinity.
const INFINITE_POWER: i32 = 0x7FF;
/// Round-to-even ties can only arise in this range of `q` (see the paper, section 8).
const MIN_EXPONENT_ROUND_TO_EVEN: i32 = -4;
const MAX_EXPONENT_ROUND_TO_EVEN: i32 = 23;
/// Clinger's fast path: the largest exact power of ten and the largest exact integer.
const MAX_EXACT_POWER_OF_TEN: u32 = 22;
const MAX_EXACT_INTEGER: u64 = 1 << 53;

/// Exact powers of ten for the fast path.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The nearest f64 to `w × 10^q` (non-negative), or `None` when neither exact method decides it.
/// An overflow answers infinity and an underflow zero, as `str::parse` does.
pub(crate) fn decimal_to_f64(w: u64, q: i64) -> Option<f64> {
    if w == 0 {
        return Some(0.0);
    }
    if w <= MAX_EXACT_INTEGER && q.unsigned_abs() <= u64::from(MAX_EXACT_POWER_OF_TEN) {
        let w = w as f64;
        let power = POWERS_OF_TEN[q.unsigned_abs() as usize];
        return Some(if q < 0 { w / power } else { w * power });
    }
    if q < i64::from(SMALLEST_POWER_OF_TEN) {
        return Some(0.0);
    }
    if q > i64::from(LARGEST_POWER_OF_TEN) {
        return Some(f64::INFINITY);
    }
    eisel_lemire(w, q as i32).map(|(mantissa, biased_exponent)| {
        f64::from_bits(mantissa | (u64::from(biased_exponent) << MANTISSA_BITS))
    })
}

/// The mantissa (without hidden bit) and biased exponent of the nearest f64 to `w × 10^q`, for
/// `w > 0` and `q` within the table; `None` when the 128-bit product cannot prove the rounding.
fn eisel_lemire(w: u64, q: i32) -> Option<(u64, u32)> {
    let leading_zeros = w.leading_zeros();
    let w = w << leading_zeros;
    let (lo, hi) = product_approximation(q, w);
    if lo == u64::MAX && !(-27..=55).contains(&q) {
        // The truncated product may be one short of a halfway point: undecided.
        return None;
    }
    let upper_bit = (hi >> 63) as i32;
    let shift = upper_bit + 64 - MANTISSA_BITS as i32 - 3;
    let mut mantissa = hi >> shift;
    let mut power2 = power_of_two(q) + upper_bit - leading_zeros as i32 - MINIMUM_EXPONENT;
    if power2 <= 0 {
        // Subnormal (or zero).
        if -power2 + 1 >= 64 {
            return Some((0, 0));
        }
        mantissa >>= -power2 + 1;
        mantissa += mantissa & 1;
        mantissa >>= 1;
        // Rounding may carry into the smallest normal exponent.
        let biased = u32::from(mantissa >= (1u64 << MANTISSA_BITS));
        return Some((mantissa & !(1u64 << MANTISSA_BITS), biased));
    }
    // An exact halfway case between two floats rounds to even, i.e. down when the kept bit is even.
    if lo <= 1
        && (MIN_EXPONENT_ROUND_TO_EVEN..=MAX_EXPONENT_ROUND_TO_EVEN).contains(&q)
        && mantissa & 3 == 1
        && (mantissa << shift) == hi
    {
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= (2u64 << MANTISSA_BITS) {
        mantissa = 1u64 << MANTISSA_BITS;
        power2 += 1;
    }
    mantissa &= !(1u64 << MANTISSA_BITS);
    if power2 >= INFINITE_POWER {
        return Some((0, INFINITE_POWER as u32));
    }
    Some((mantissa, power2 as u32))
}

/// `floor(log2(10^q)) + 63`, valid over the table's range.
fn power_of_two(q: i32) -> i32 {
    ((q.wrapping_mul(152_170 + 65_536)) >> 16) + 63
}

/// The high 128 bits of `w × 5^q` (normalised `w`), as (low word, high word), computed with one
/// multiplication when that already fixes the bits the mantissa needs.
fn product_approximation(q: i32, w: u64) -> (u64, u64) {
    // Mantissa bits + hidden bit + rounding bit + a possible leading zero of the product.
    const PRECISION: u32 = MANTISSA_BITS + 3;
    const MASK: u64 = u64::MAX >> PRECISION;
    let (hi5, lo5) = POWERS_OF_FIVE[(q - SMALLEST_POWER_OF_TEN) as usize];
    let first = u128::from(w) * u128::from(hi5);
    let (mut first_lo, mut first_hi) = (first as u64, (first >> 64) as u64);
    if first_hi & MASK == MASK {
        let second_hi = ((u128::from(w) * u128::from(lo5)) >> 64) as u64;
        first_lo = first_lo.wrapping_add(second_hi);
        if second_hi > first_lo {
            first_hi += 1;
        }
    }
    (first_lo, first_hi)
}

/// `5^q` for each `q` of the table, normalised so bit 127 is set and cut to 128 bits, as
/// (high word, low word). For `q < 0` the entry is the reciprocal `2^b / 5^-q` rounded up, as the
/// algorithm's proofs require (Lemire 2021, section 6).
static POWERS_OF_FIVE: [(u64, u64); TABLE_LEN] = powers_of_five();

const fn powers_of_five() -> [(u64, u64); TABLE_LEN] {
    let mut table = [(0u64, 0u64); TABLE_LEN];
    let zero_index = (-SMALLEST_POWER_OF_TEN) as usize;

    // q >= 0: 5^q itself, truncated.
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut q = 0;
    while q <= LARGEST_POWER_OF_TEN as usize {
        table[zero_index + q] = top_128(&power);
        multiply_small(&mut power, 5);
        q += 1;
    }

    // q < 0: c = floor(2^b / 5^p) + 1 with b = z + 127 (p <= 27) or 2z + 128, where z is the bit
    // length of 5^p, then cut to 128 bits. floor(2^N / 5^p) is kept for one large N and divided by
    // 5 step by step (repeated floor division is exact), then shifted down to 2^b.
    const N: u32 = LIMBS as u32 * 64 - 1;
    let mut scaled = [0u64; LIMBS];
    scaled[LIMBS - 1] = 1 << 63;
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut p = 1;
    while p <= (-SMALLEST_POWER_OF_TEN) as usize {
        divide_small(&mut scaled, 5);
        multiply_small(&mut power, 5);
        let z = bit_length(&power);
        let b = if p <= 27 { z + 127 } else { 2 * z + 128 };
        let mut c = shift_right(&scaled, N - b);
        add_one(&mut c);
        let length = bit_length(&c);
        table[zero_index - p] = if length > 128 {
            bits_128(&c, length - 128)
        } else {
            (c[1], c[0])
        };
        p += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::test_rng::TestRng;

    #[test]
    fn table_matches_reference_values() {
        // Computed independently with Python's big integers from the same definition.
        let expected: &[(i32, u64, u64)] = &[
            (-342, 0xeef453d6923bd65a, 0x113faa2906a13b3f),
            (-300, 0xab70fe17c79ac6ca, 0x6dbd630a48aaf406),
            (-28, 0xfd87b5f28300ca0d, 0x8bca9d6e188853fc),
            (-27, 0x9e74d1b791e07e48, 0x775ea264cf55347e),
            (-1, 0xcccccccccccccccc, 0xcccccccccccccccd),
            (0, 0x8000000000000000, 0x0000000000000000),
            (1, 0xa000000000000000, 0x0000000000000000),
            (27, 0xcecb8f27f4200f3a, 0x0000000000000000),
            (28, 0x813f3978f8940984, 0x4000000000000000),
            (55, 0xd0cf4b50cfe20765, 0xfff4b4e3f741cf6d),
            (200, 0xa738c6bebb12d16c, 0xb428f8ac016561db),
            (308, 0x8e679c2f5e44ff8f, 0x570f09eaa7ea7648),
        ];
        for &(q, hi, lo) in expected {
            assert_eq!(
                POWERS_OF_FIVE[(q - SMALLEST_POWER_OF_TEN) as usize],
                (hi, lo),
                "5^{q}"
            );
        }
    }

    /// Compares with `str::parse`; returns whether an exact path decided.
    fn check(w: u64, q: i64) -> bool {
        let text = format!("{w}e{q}");
        let want: f64 = text.parse().unwrap();
        match decimal_to_f64(w, q) {
            Some(got) => {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{text}: got {got:e}, want {want:e}"
                );
                true
            }
            None => false,
        }
    }

    #[test]
    fn agrees_with_std_on_random_decimals() {
        let mut rng = TestRng(0x9E37_79B9_7F4A_7C15);
        let mut undecided = 0;
        for _ in 0..300_000 {
            let digits = 1 + rng.next() % 19;
            let w = rng.next() % 10u64.pow(digits as u32);
            let q = (rng.next() % 700) as i64 - 360;
            undecided += usize::from(!check(w, q));
        }
        // The fallback is for rare inputs only.
        assert!(undecided < 300, "{undecided} of 300000 undecided");
    }

    #[test]
    fn agrees_with_std_on_edge_cases() {
        let cases: &[(u64, i64)] = &[
            (9007199254740992, 0),
            (9007199254740993, 0),
            (9007199254740993, -22),
            (9007199254740993, 22),
            (9007199254740995, 0),
            (18014398509481983, 0),
            (17976931348623157, 292),
            (17976931348623158, 292),
            (17976931348623159, 292),
            (49406564584124654, -340),
            (24703282292062327, -340),
            (24703282292062328, -340),
            (22250738585072011, -324),
            (22250738585072014, -324),
            (1, -342),
            (1, -343),
            (1, 308),
            (1, 309),
            (99999999999999999, -359),
            (7450580596923828125, -27),
            (11920928955078125, -23),
            (5, -324),
            (3, -324),
            (2, -324),
            (u64::MAX, 0),
            (u64::MAX, -19),
            (10000000000000000000, -19),
            (1, 23),
            (4503599627370497, 1),
            (4503599627370497, -1),
        ];
        for &(w, q) in cases {
            check(w, q);
        }
        // Decimals next to random doubles, cut at 15 to 19 digits, and one unit either side.
        let mut rng = TestRng(42);
        for _ in 0..20_000 {
            let near = f64::from_bits(1 + rng.next() % 0x7FE0_0000_0000_0000);
            for digits in [15usize, 16, 17, 18, 19] {
                let text = format!("{:.*e}", digits - 1, near);
                let (mantissa, exponent) = text.split_once('e').unwrap();
                let w: u64 = mantissa.replace('.', "").parse().unwrap();
                let q = exponent.parse::<i64>().unwrap() - (digits as i64 - 1);
                for w in [w - 1, w, w + 1] {
                    check(w, q);
                }
            }
        }
        // Exact halfway points between neighbouring doubles above 2^53 (ties round to even).
        for _ in 0..20_000 {
            let m = (1u64 << 52) + rng.next() % (1u64 << 52);
            let shift = rng.next() % 10;
            let midpoint = (2 * m + 1) << shift;
            for w in [midpoint - 1, midpoint, midpoint + 1] {
                check(w, 0);
            }
        }
    }

    #[test]
    fn common_numbers_take_an_exact_path() {
        // These must never need the text fallback.
        for (w, q) in [(15, -1), (65613616999999977, -15), (1, -7), (123456789, 5)] {
            assert!(decimal_to_f64(w, q).is_some(), "{w}e{q}");
        }
        assert_eq!(decimal_to_f64(0, 400), Some(0.0));
        assert_eq!(decimal_to_f64(1, 400), Some(f64::INFINITY));
        assert_eq!(decimal_to_f64(1, -400), Some(0.0));
    }
}
