//! The shortest decimal digits that read back as the same `f64` (the Ryū algorithm).
//!
//! `{:e}` gives the same digits but costs a trip through `fmt` and a slower general algorithm; the
//! writer formats many floats (coordinates, scores), so it uses this. Ryū (Adams, "Ryū: fast
//! float-to-string conversion", PLDI 2018) multiplies the binary mantissa by 125-bit approximations
//! of powers of five and removes digits while the interval of values that round to the float still
//! contains the result. Its tables are computed at compile time from their definitions.
//!
//! Among the shortest digit strings it picks the one nearest the float's exact value, ties to even,
//! which is also what Python's `repr` and Rust's `{:e}` print; the unit tests check against `{:e}`.

use super::bigint::{bit_length, divide_small, multiply_small, shift_right, Big, LIMBS};

const MANTISSA_BITS: u32 = 52;
const EXPONENT_BIAS: i32 = 1023;
/// Bit width of the table entries.
const POW5_BITCOUNT: i32 = 125;
const POW5_INV_BITCOUNT: i32 = 125;
/// Entries needed for the largest positive and negative binary exponents of an f64.
const POW5_TABLE_LEN: usize = 326;
const POW5_INV_TABLE_LEN: usize = 342;

/// `5^i` scaled to exactly [`POW5_BITCOUNT`] bits (truncated when longer).
static POW5_SPLIT: [u128; POW5_TABLE_LEN] = pow5_split();
/// `floor(2^(bitlength(5^i) - 1 + POW5_INV_BITCOUNT) / 5^i) + 1`.
static POW5_INV_SPLIT: [u128; POW5_INV_TABLE_LEN] = pow5_inv_split();

/// The low 128 bits of a big integer.
const fn low_128(x: &Big) -> u128 {
    (x[1] as u128) << 64 | x[0] as u128
}

const fn pow5_split() -> [u128; POW5_TABLE_LEN] {
    let mut table = [0u128; POW5_TABLE_LEN];
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut i = 0;
    while i < POW5_TABLE_LEN {
        let length = bit_length(&power) as i32;
        table[i] = if length <= POW5_BITCOUNT {
            low_128(&power) << (POW5_BITCOUNT - length)
        } else {
            low_128(&shift_right(&power, (length - POW5_BITCOUNT) as u32))
        };
        multiply_small(&mut power, 5);
        i += 1;
    }
    table
}

const fn pow5_inv_split() -> [u128; POW5_INV_TABLE_LEN] {
    // floor(2^k / 5^i) = floor(floor(2^N / 5^i) / 2^(N - k)): one big 2^N divided by 5 step by step.
    const N: u32 = LIMBS as u32 * 64 - 1;
    let mut table = [0u128; POW5_INV_TABLE_LEN];
    let mut scaled = [0u64; LIMBS];
    scaled[LIMBS - 1] = 1 << 63;
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut i = 0;
    while i < POW5_INV_TABLE_LEN {
        let k = bit_length(&power) - 1 + POW5_INV_BITCOUNT as u32;
        table[i] = low_128(&shift_right(&scaled, N - k)) + 1;
        multiply_small(&mut power, 5);
        divide_small(&mut scaled, 5);
        i += 1;
    }
    table
}

/// `bitlength(5^e)` for `e >= 1` (1 for `e == 0`), valid for the table range.
fn pow5_bits(e: i32) -> i32 {
    ((e as u32 * 1_217_359) >> 19) as i32 + 1
}

/// `floor(log10(2^e))` for `0 <= e <= 1650`.
fn log10_pow2(e: i32) -> u32 {
    (e as u32 * 78_913) >> 18
}

/// `floor(log10(5^e))` for `0 <= e <= 2620`.
fn log10_pow5(e: i32) -> u32 {
    (e as u32 * 732_923) >> 20
}

fn multiple_of_power_of_5(mut value: u64, p: u32) -> bool {
    let mut count = 0;
    while value % 5 == 0 && value != 0 {
        value /= 5;
        count += 1;
        if count >= p {
            return true;
        }
    }
    count >= p
}

fn multiple_of_power_of_2(value: u64, p: u32) -> bool {
    value & ((1u64 << p) - 1) == 0
}

/// `(m × mul) >> j` for `j >= 64`, where the product is at most 55 + 125 bits.
fn mul_shift(m: u64, mul: u128, j: i32) -> u64 {
    let low = u128::from(m) * (mul as u64 as u128);
    let high = u128::from(m) * (mul >> 64);
    (((low >> 64) + high) >> (j - 64)) as u64
}

/// The shortest digits of a finite, positive `f`: `(digits, exponent)` with
/// `f ≈ digits × 10^exponent`, `digits` having no trailing zeros unless it is the only choice.
pub(crate) fn shortest_digits(f: f64) -> (u64, i32) {
    debug_assert!(f.is_finite() && f > 0.0);
    let bits = f.to_bits();
    let ieee_mantissa = bits & ((1u64 << MANTISSA_BITS) - 1);
    let ieee_exponent = ((bits >> MANTISSA_BITS) & 0x7FF) as i32;
    // Subtract 2 more so the bounds below are integers (mv = 4 × m2).
    let (e2, m2) = if ieee_exponent == 0 {
        (1 - EXPONENT_BIAS - MANTISSA_BITS as i32 - 2, ieee_mantissa)
    } else {
        (
            ieee_exponent - EXPONENT_BIAS - MANTISSA_BITS as i32 - 2,
            (1u64 << MANTISSA_BITS) | ieee_mantissa,
        )
    };
    let accept_bounds = m2 & 1 == 0;
    let mv = 4 * m2;
    // The gap below is half as wide at a power of two (except for the smallest normal).
    let mm_shift = u64::from(ieee_mantissa != 0 || ieee_exponent <= 1);

    let (mut vr, mut vp, mut vm);
    let e10;
    let mut vm_is_trailing_zeros = false;
    let mut vr_is_trailing_zeros = false;
    if e2 >= 0 {
        let q = log10_pow2(e2) - u32::from(e2 > 3);
        e10 = q as i32;
        let k = POW5_INV_BITCOUNT + pow5_bits(q as i32) - 1;
        let i = -e2 + q as i32 + k;
        let mul = POW5_INV_SPLIT[q as usize];
        vr = mul_shift(mv, mul, i);
        vp = mul_shift(mv + 2, mul, i);
        vm = mul_shift(mv - 1 - mm_shift, mul, i);
        if q <= 21 {
            // Only here can one of the bounds be exact (an integer times a power of ten).
            if mv % 5 == 0 {
                vr_is_trailing_zeros = multiple_of_power_of_5(mv, q);
            } else if accept_bounds {
                vm_is_trailing_zeros = multiple_of_power_of_5(mv - 1 - mm_shift, q);
            } else {
                vp -= u64::from(multiple_of_power_of_5(mv + 2, q));
            }
        }
    } else {
        let q = log10_pow5(-e2) - u32::from(-e2 > 1);
        e10 = q as i32 + e2;
        let i = -e2 - q as i32;
        let k = pow5_bits(i) - POW5_BITCOUNT;
        let j = q as i32 - k;
        let mul = POW5_SPLIT[i as usize];
        vr = mul_shift(mv, mul, j);
        vp = mul_shift(mv + 2, mul, j);
        vm = mul_shift(mv - 1 - mm_shift, mul, j);
        if q <= 1 {
            // mv has at least q trailing zero bits, so vr is exact; so are the even bounds.
            vr_is_trailing_zeros = true;
            if accept_bounds {
                vm_is_trailing_zeros = mm_shift == 1;
            } else {
                vp -= 1;
            }
        } else if q < 63 {
            // vr = mv × 5^i / 2^q is exact when 2^q divides mv.
            vr_is_trailing_zeros = multiple_of_power_of_2(mv, q);
        }
    }

    // Remove digits while the interval (vm, vp) still holds a shorter number.
    let mut removed = 0;
    let output = if vm_is_trailing_zeros || vr_is_trailing_zeros {
        // The rare general case: exact bounds and ties need tracking.
        let mut last_removed_digit = 0;
        while vp / 10 > vm / 10 {
            vm_is_trailing_zeros &= vm % 10 == 0;
            vr_is_trailing_zeros &= last_removed_digit == 0;
            last_removed_digit = vr % 10;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed += 1;
        }
        if vm_is_trailing_zeros {
            while vm % 10 == 0 {
                vr_is_trailing_zeros &= last_removed_digit == 0;
                last_removed_digit = vr % 10;
                vr /= 10;
                vm /= 10;
                removed += 1;
            }
        }
        if vr_is_trailing_zeros && last_removed_digit == 5 && vr % 2 == 0 {
            // Exactly halfway: round to even.
            last_removed_digit = 4;
        }
        let outside_bounds = vr == vm && (!accept_bounds || !vm_is_trailing_zeros);
        vr + u64::from(outside_bounds || last_removed_digit >= 5)
    } else {
        let mut round_up = false;
        if vp / 100 > vm / 100 {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while vp / 10 > vm / 10 {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed += 1;
        }
        vr + u64::from(vr == vm || round_up)
    };
    (output, e10 + removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digits and exponent `{:e}` prints, as `shortest_digits` answers them.
    fn reference(f: f64) -> (u64, i32) {
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap();
        let digits = mantissa.replace('.', "");
        let exponent: i32 = exponent.parse().unwrap();
        (
            digits.parse().unwrap(),
            exponent - (digits.len() as i32 - 1),
        )
    }

    /// `{:e}` breaks a tie between two equally short, equally near digit strings upwards; Ryū
    /// (and Python's `repr`, which the writer follows) rounds it to even. Checks that this is the
    /// only kind of difference: same exponent, last digits one apart, the float's exact value right
    /// between them, and `got` even.
    fn assert_halfway_tie_rounded_to_even(f: f64, got: (u64, i32), want: (u64, i32)) {
        assert_eq!(got.1, want.1, "{f:e}: exponents differ: {got:?} {want:?}");
        assert_eq!(got.0.abs_diff(want.0), 1, "{f:e}: {got:?} {want:?}");
        assert_eq!(got.0 % 2, 0, "{f:e}: the tie did not go to even: {got:?}");
        let low = got.0.min(want.0);
        let digits = low.to_string().len();
        // The exact value, to far more digits than it has.
        let exact = format!("{f:.80e}");
        let (mantissa, _) = exact.split_once('e').unwrap();
        let mantissa = mantissa.replace('.', "");
        let midpoint = format!("{low}5");
        assert!(
            mantissa.starts_with(&midpoint) && mantissa[digits + 1..].bytes().all(|b| b == b'0'),
            "{f:e}: {got:?} differs from {want:?} but {exact} is not halfway"
        );
    }

    #[test]
    fn ties_round_to_even_as_python_repr_does() {
        // repr(1874624286574543.25), bits 0x431AA3D7EAC11F3D, is '1874624286574543.2' in CPython.
        assert_eq!(
            shortest_digits(f64::from_bits(0x431A_A3D7_EAC1_1F3D)),
            (18746242865745432, -1)
        );
    }

    #[test]
    fn table_entries_match_their_definitions() {
        // Values from the reference implementation's tables.
        assert_eq!(POW5_SPLIT[0], 1u128 << 124);
        assert_eq!(POW5_INV_SPLIT[0], (1u128 << 125) + 1);
        assert_eq!(
            POW5_INV_SPLIT[1],
            (1_844_674_407_370_955_161u128 << 64) | 11_068_046_444_225_730_970
        );
        assert_eq!(POW5_SPLIT[1], 5u128 << 122);
    }

    #[test]
    fn agrees_with_std_on_random_and_edge_floats() {
        let mut rng = crate::json::TestRng(0x853C_49E6_748F_EA9B);
        let mut next = move || rng.next();
        let mut values: Vec<f64> = (0..200_000)
            .map(|_| f64::from_bits(next() % 0x7FF0_0000_0000_0000))
            .filter(|f| *f > 0.0)
            .collect();
        // Short decimals (the common case in documents), powers, and the ends of the range.
        for _ in 0..50_000 {
            let digits = next() % 10_000_000;
            let exponent = (next() % 40) as i32 - 20;
            values.push(format!("{digits}e{exponent}").parse().unwrap());
        }
        for e in -1074..1024 {
            values.push(2f64.powi(e));
        }
        for e in -323..309 {
            values.push(format!("1e{e}").parse().unwrap());
        }
        values.extend([
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            9007199254740993.0,
            0.1,
            0.3,
            2.0 / 3.0,
            5e-324,
            1.7976931348623157e308,
        ]);
        for f in values.into_iter().filter(|f| *f > 0.0 && f.is_finite()) {
            let (digits, exponent) = shortest_digits(f);
            let mut want = reference(f);
            // `{:e}` never prints trailing zeros; Ryū may keep some for integers (e.g. 1e2 as 100e0
            // is never produced, but normalise anyway).
            let mut got = (digits, exponent);
            while got.0 % 10 == 0 && got.0 != 0 {
                got = (got.0 / 10, got.1 + 1);
            }
            while want.0 % 10 == 0 && want.0 != 0 {
                want = (want.0 / 10, want.1 + 1);
            }
            if got != want {
                assert_halfway_tie_rounded_to_even(f, got, want);
            }
        }
    }
}
