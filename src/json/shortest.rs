//! The shortest decimal digits that read back as the same `f64`: one product in the common case,
//! the Schubfach algorithm where that cannot decide.
//!
//! `{:e}` gives the same digits but costs a trip through `fmt` and a slower general algorithm; the
//! writer formats many floats (coordinates, scores), so it uses this. Schubfach (Giulietti, "The
//! Schubfach way to render doubles", 2020; the algorithm of Java's `Double.toString` since JDK 19)
//! picks the decimal exponent `k` from the width of the float's rounding interval, so that the
//! interval holds at most one multiple of `10^(k+1)` and at least one of `10^k`; three products of
//! the interval's ends and middle with a 126-bit `10^-k`, rounded to odd, then decide in a few
//! comparisons between those candidates, with no loop over digits. Its table is computed at compile
//! time from its definition.
//!
//! Most floats never get that far: one product with `10^(-k-1)` (the idea zmij takes from Xiang
//! JunBo) gives the shorter candidate as its integer part and the seventeenth digit from its
//! fraction, and each decision is taken only when it holds by more than the product's proven error
//! ([`one_product`]); the rest (exact ties, powers of two, subnormals) go to Schubfach.
//!
//! Among the shortest digit strings it picks the one nearest the float's exact value, ties to even,
//! which is also what Python's `repr` and Rust's `{:e}` print; the unit tests check against `{:e}`,
//! and the one product against Schubfach wherever it decides.

use super::bigint::{add_one, bit_length, divide_small, multiply_small, shift_right, LIMBS};

const MANTISSA_BITS: u32 = 52;
/// The binary exponent `q` of the smallest subnormal, as `c × 2^q` with an integer `c`.
const SMALLEST_Q: i32 = -1074;
/// Decimal exponents `k` the table covers: `floor(log10(2^q))` over every finite `q`.
const SMALLEST_K: i32 = -324;
const LARGEST_K: i32 = 292;
const TABLE_LEN: usize = (LARGEST_K - SMALLEST_K + 1) as usize;

/// For each `k`, `g = floor(10^-k × 2^(125 - floor(log2(10^-k)))) + 1`: `10^-k` scaled into
/// `[2^125, 2^126)` and rounded up, indexed by `k - SMALLEST_K`.
static POWERS_OF_TEN: [u128; TABLE_LEN] = POWERS;

/// [`POWERS_OF_TEN`], for the tables built from it at compile time.
const POWERS: [u128; TABLE_LEN] = powers_of_ten();

/// What [`one_product`] needs of a float's binary exponent, looked up instead of worked out: the
/// table entry and the shifts come a few multiplications sooner on the float's critical path.
#[derive(Clone, Copy)]
struct Scale {
    /// The entry `g` for `10^(-k-1)`.
    g: u128,
    /// `H × 2^64` (see [`one_product`]).
    half_gap: u64,
    /// `k`, or [`LARGEST_K`] where the product cannot be used.
    k: i32,
    /// How far the significand is shifted left before the product.
    shift: u32,
}

/// Biased binary exponents: the eleven bits of an `f64`.
const BIASED_EXPONENTS: usize = 1 << 11;

/// [`Scale`] for each biased exponent (the subnormals' and the infinities' entries are unused).
static SCALES: [Scale; BIASED_EXPONENTS] = scales();

const fn scales() -> [Scale; BIASED_EXPONENTS] {
    let unused = Scale {
        g: 0,
        half_gap: 0,
        k: LARGEST_K,
        shift: 0,
    };
    let mut table = [unused; BIASED_EXPONENTS];
    let mut biased_exponent = 1;
    while biased_exponent < BIASED_EXPONENTS - 1 {
        let q = biased_exponent as i32 + SMALLEST_Q - 1;
        let k = floor_log10_pow2(q);
        if k < LARGEST_K {
            // 10^(-k-1) = G × 2^(l - 125) with G in [2^125, 2^126) and g = floor(G) + 1; l + q
            // is in -4..=-1 (2^q × 10^(-k-1) is in [0.1, 1)).
            let g = POWERS[(k + 1 - SMALLEST_K) as usize];
            let l = floor_log2_pow10(-k - 1);
            assert!(-4 <= q + l && q + l <= -1);
            table[biased_exponent] = Scale {
                g,
                // H × 2^64 = G / 2^(61 - q - l), rounded down: g >> 63 is below 2^63.
                half_gap: ((g >> 63) as u64) >> (-1 - q - l),
                k,
                // X = c × G × 2^(q + l - 125): shifted so that the point falls at bit 130.
                shift: (5 + q + l) as u32,
            };
        }
        biased_exponent += 1;
    }
    table
}

const fn powers_of_ten() -> [u128; TABLE_LEN] {
    let mut table = [0u128; TABLE_LEN];
    // 10^e for e = -k >= 0 (k <= 0): its top 126 bits (all of it, shifted up, when shorter).
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut e = 0;
    while e <= -SMALLEST_K {
        let length = bit_length(&power);
        let mut top = if length > 126 {
            shift_right(&power, length - 126)
        } else {
            power
        };
        let mut value = (top[1] as u128) << 64 | top[0] as u128;
        if length <= 126 {
            value <<= 126 - length;
            top = [0u64; LIMBS];
            top[0] = value as u64;
            top[1] = (value >> 64) as u64;
        }
        add_one(&mut top);
        table[(-e - SMALLEST_K) as usize] = (top[1] as u128) << 64 | top[0] as u128;
        multiply_small(&mut power, 10);
        e += 1;
    }
    // 10^e for e = -k < 0: floor(2^(125 + L) / 10^-e) with L the bit length of 10^-e, from one
    // large 2^N divided by 10 step by step (repeated floor division is exact).
    const N: u32 = LIMBS as u32 * 64 - 1;
    let mut scaled = [0u64; LIMBS];
    scaled[LIMBS - 1] = 1 << 63;
    let mut power = [0u64; LIMBS];
    power[0] = 1;
    let mut p = 1;
    while p <= LARGEST_K {
        divide_small(&mut scaled, 10);
        multiply_small(&mut power, 10);
        let length = bit_length(&power);
        let mut value = shift_right(&scaled, N - 125 - length);
        add_one(&mut value);
        table[(p - SMALLEST_K) as usize] = (value[1] as u128) << 64 | value[0] as u128;
        p += 1;
    }
    table
}

/// `floor(log10(2^q))`, for `|q| <= 5456721`.
const fn floor_log10_pow2(q: i32) -> i32 {
    ((q as i64 * 661_971_961_083) >> 41) as i32
}

/// `floor(log10(3/4 × 2^q))`, for `|q| <= 5456721`.
fn floor_log10_three_quarters_pow2(q: i32) -> i32 {
    ((i64::from(q) * 661_971_961_083 - 274_743_187_321) >> 41) as i32
}

/// `floor(log2(10^e))`, for `|e| <= 1233`.
const fn floor_log2_pow10(e: i32) -> i32 {
    ((e as i64 * 913_124_641_741) >> 38) as i32
}

/// A product of the table entry `g` and a scaled significand, to 192 bits: `upper` is the product
/// divided by 2^64 (rounded down), `lower` the 64 bits below.
#[derive(Clone, Copy)]
struct Product {
    upper: u128,
    lower: u64,
}

impl Product {
    /// `g × cp`: two 64-bit multiplications.
    #[inline]
    fn of(g: u128, cp: u64) -> Product {
        let low = (g as u64 as u128) * u128::from(cp);
        let high = (g >> 64) * u128::from(cp);
        Product {
            upper: high + (low >> 64),
            lower: low as u64,
        }
    }

    /// `g × 2^shift` (for `shift` in 1..64), as a product to add or subtract.
    #[inline]
    fn shifted(g: u128, shift: u32) -> Product {
        Product {
            upper: g >> (64 - shift),
            lower: (g as u64) << shift,
        }
    }

    #[inline]
    fn plus(self, other: Product) -> Product {
        let (lower, carry) = self.lower.overflowing_add(other.lower);
        Product {
            upper: self.upper + other.upper + u128::from(carry),
            lower,
        }
    }

    #[inline]
    fn minus(self, other: Product) -> Product {
        let (lower, borrow) = self.lower.overflowing_sub(other.lower);
        Product {
            upper: self.upper - other.upper - u128::from(borrow),
            lower,
        }
    }

    /// The product divided by 2^127, rounded to odd: the integer part, with its lowest bit set
    /// when the fraction is not zero (the paper's `rop`). Only the fraction's first 63 bits are
    /// looked at, which the paper proves is enough.
    #[inline]
    fn round_to_odd(self) -> u64 {
        ((self.upper >> 63) as u64) | u64::from(self.upper as u64 & (u64::MAX >> 1) != 0)
    }
}

/// The shortest digits of a float, in seventeen decimal places: the float is nearest to
/// `(leading × 10 + last) × 10^exponent` among the decimals with the fewest significant digits
/// (ties to even). `leading` holds the first sixteen places and is at least 10^14, so the first
/// significant digit is in the first or second place; `last` is the seventeenth place, 0 when the
/// digits end sooner. The writer turns `leading` into digits eight at a time, and the seventeenth
/// needs no division: Schubfach finds it beside the shorter candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub(crate) leading: u64,
    pub(crate) last: u64,
    pub(crate) exponent: i32,
}

/// The smallest [`Decimal::leading`]: fifteen digits after one leading zero.
pub(crate) const SMALLEST_LEADING: u64 = 100_000_000_000_000;

/// `10^n` for `n` in 0..16.
const POWERS_OF_TEN_U64: [u64; 16] = {
    let mut table = [1u64; 16];
    let mut n = 1;
    while n < 16 {
        table[n] = table[n - 1] * 10;
        n += 1;
    }
    table
};

impl Decimal {
    /// The same number with `leading` moved up to at least [`SMALLEST_LEADING`] (subnormals and
    /// integers can have fewer digits than the sixteen places hold).
    fn normalized(self) -> Decimal {
        if self.leading >= SMALLEST_LEADING {
            return self;
        }
        let digits = self.leading * 10 + self.last;
        debug_assert!(digits > 0);
        let places = 15 - digits.ilog10();
        Decimal {
            leading: digits * POWERS_OF_TEN_U64[places as usize],
            last: 0,
            exponent: self.exponent - places as i32 - 1,
        }
    }
}

/// The shortest digits of a finite, positive `f` (see [`Decimal`]).
#[inline(always)]
pub(crate) fn shortest_decimal(f: f64) -> Decimal {
    debug_assert!(f.is_finite() && f > 0.0);
    let bits = f.to_bits();
    let fraction = bits & ((1u64 << MANTISSA_BITS) - 1);
    let biased_exponent = (bits >> MANTISSA_BITS) as i32 & (BIASED_EXPONENTS as i32 - 1);
    if biased_exponent == 0 {
        // Subnormal: c × 2^SMALLEST_Q.
        return schubfach(SMALLEST_Q, fraction, false).normalized();
    }
    let c = (1u64 << MANTISSA_BITS) | fraction;
    let q = biased_exponent + SMALLEST_Q - 1;
    if fraction != 0 {
        // (Integers take this path too: their fraction is exactly 0, clear of every decision.)
        if let Some(decimal) = one_product(biased_exponent as usize, c) {
            return decimal;
        }
    } else if (-(MANTISSA_BITS as i32)..0).contains(&q) {
        // A power of two from 1 to 2^52 is its own shortest form (its neighbours are at most 1
        // away), where the gap below, half as wide, keeps it from one product.
        let integer = c >> -q;
        let decimal = Decimal {
            leading: integer,
            last: 0,
            exponent: -1,
        };
        return decimal.normalized();
    }
    // The gap below is half as wide at a power of two (except for the smallest normal).
    let decimal = schubfach(q, c, fraction == 0 && biased_exponent > 1);
    debug_assert!(decimal.leading >= SMALLEST_LEADING && decimal.last < 10);
    decimal
}

/// The common case in one product (after Xiang JunBo's idea in zmij): `v = c × 2^q` with an even
/// gap on both sides (not a power of two), times `10^(-k-1)` where Schubfach's `k` is
/// `floor(log10(2^q))`, is `X = integral.fraction` in units of `10^(k+1)`. Its rounding interval
/// is `X ± H` with `H = 2^(q-1) × 10^(-k-1)` in `[0.05, 0.5)`, so it holds `integral` when
/// `fraction <= H`, `integral + 1` when `1 - fraction <= H` (never both: the shorter candidate),
/// and otherwise the nearest multiple of `10^k`, `integral × 10 + round(10 × fraction)` (always
/// inside, as `10 × H >= 0.5`): the seventeenth digit, with no division.
///
/// The product is exact but for the table entry `g`, which is above `10^(-k-1)` (scaled) by at
/// most 1 in 2^125: the 64-bit `fraction` read from it is at most 2^-9 of its last unit above the
/// true one and (being cut off) less than one unit below; `H` read from `g` is less than one unit
/// below and 2^-62 above. Each decision is taken only when it holds with those margins; otherwise
/// (a float within two units of 2^-64 of a decision, such as an exact tie) the answer is `None`
/// and exact Schubfach decides. Ties to even therefore never need handling here.
///
/// `biased_exponent` is the float's (in 1..2047, `q` being `biased_exponent - 1075`); [`SCALES`]
/// holds `k`, the entry and the shifts for it.
#[inline]
fn one_product(biased_exponent: usize, c: u64) -> Option<Decimal> {
    let Scale {
        g,
        half_gap,
        k,
        shift,
    } = SCALES[biased_exponent & (BIASED_EXPONENTS - 1)];
    if k >= LARGEST_K {
        return None;
    }
    let product = Product::of(g, c << shift).upper;
    let integral = (product >> 66) as u64;
    let fraction = (product >> 2) as u64;
    // Each certain despite those errors: `integral` inside (the true fraction is below
    // `fraction + 1`, the true H above `half_gap - 2^-62`), `integral + 1` inside, or not.
    let below = fraction < half_gap - 1;
    let above = fraction > half_gap.wrapping_neg();
    let not_below = fraction > half_gap + 1;
    let not_above = fraction < half_gap.wrapping_neg() - 1;
    // round(10 × fraction): the digit, and where 10 × fraction + 1/2 lies within it.
    let tenfold = u128::from(fraction) * 10 + (1 << 63);
    let (digit, rest) = ((tenfold >> 64) as u64, tenfold as u64);
    let digit_clear = rest.wrapping_sub(1) <= u64::MAX - 10;
    if !(below | above | (not_below & not_above & digit_clear)) {
        return None;
    }
    let shorter = below | above;
    debug_assert!(shorter || (1..10).contains(&digit));
    Some(Decimal {
        leading: integral + u64::from(above),
        last: if shorter { 0 } else { digit },
        exponent: k,
    })
}

/// Schubfach for `v = c × 2^q` whose rounding interval is `[v - 2^(q-1), v + 2^(q-1)]`, or
/// `[v - 2^(q-2), v + 2^(q-1)]` when `irregular`; both ends belong to it when `c` is even.
fn schubfach(q: i32, c: u64, irregular: bool) -> Decimal {
    let open = c & 1;
    // Four times v and its interval's ends, in units of 2^(q-2).
    let cb = c << 2;
    let (cb_left, k) = if irregular {
        (cb - 1, floor_log10_three_quarters_pow2(q))
    } else {
        (cb - 2, floor_log10_pow2(q))
    };
    let h = q + floor_log2_pow10(-k) + 2;
    debug_assert!((0..=8).contains(&h));
    let h = h as u32;
    let g = POWERS_OF_TEN[(k - SMALLEST_K) as usize];
    // Four times v × 10^-k and its interval's ends, rounded to odd. The ends' products differ from
    // the middle's by g × (cb - cb_left) × 2^h and g × 2 × 2^h: shifts of g, so one multiplication
    // gives all three (each exactly as its own multiplication would).
    let middle = Product::of(g, cb << h);
    let left = middle.minus(Product::shifted(g, (cb - cb_left).trailing_zeros() + h));
    let right = middle.plus(Product::shifted(g, 1 + h));
    let (vb, vb_left, vb_right) = (
        middle.round_to_odd(),
        left.round_to_odd(),
        right.round_to_odd(),
    );
    let s = vb >> 2;
    // The outcome depends on the digits, which a branch predictor cannot guess: every candidate
    // is worked out and the answer selected without branches.
    //
    // At most one multiple of ten is in the interval: one digit shorter, if it is there. (Java
    // tries this only from s >= 100, as it always prints two digits; Python's repr prints one.)
    let tens = s / 10;
    let lower = tens * 10;
    let upper = lower + 10;
    let lower_in = vb_left + open <= lower << 2;
    let upper_in = (upper << 2) + open <= vb_right;
    let shorter = lower_in != upper_in;
    // Otherwise s or s + 1 (at least one is in the interval): the one inside, or the nearer when
    // both are, ties to even.
    let t = s + 1;
    let s_in = vb_left + open <= s << 2;
    let t_in = (t << 2) + open <= vb_right;
    let midpoint = (s + t) << 1;
    // (`|` and `&`, not `||` and `&&`: no branch.)
    let t_nearer = (vb > midpoint) | ((vb == midpoint) & (s & 1 == 1));
    let last = s - lower + u64::from(!s_in | (t_in & t_nearer));
    // When s + 1 is taken and ends in 0 it is `upper`, which is then inside: the shorter case.
    debug_assert!(shorter || last < 10);
    Decimal {
        leading: tens + u64::from(shorter & !lower_in),
        last: if shorter { 0 } else { last },
        exponent: k,
    }
}

/// Floats that test a shortest-digits algorithm and a layout from every side, all positive and
/// finite: `random` random bit patterns, then short decimals (the common case in documents), every
/// power of two and of ten and their neighbours, subnormals, both ends of every binary exponent's
/// significands, integers of every size up to 2^53 and around it, and halfway ties (floats exactly
/// between two 17-digit decimals, which must round to even).
#[cfg(test)]
pub(crate) fn awkward_floats(rng: &mut crate::json::test_rng::TestRng, random: usize) -> Vec<f64> {
    let mut values: Vec<f64> = (0..random)
        .map(|_| f64::from_bits(rng.next() % 0x7FF0_0000_0000_0000))
        .collect();
    for _ in 0..50_000 {
        let digits = rng.next() % 10_000_000;
        let exponent = (rng.next() % 40) as i32 - 20;
        values.push(format!("{digits}e{exponent}").parse().unwrap());
    }
    let with_neighbours = |f: f64| {
        let bits = f.to_bits();
        [bits.saturating_sub(1), bits, bits + 1].map(f64::from_bits)
    };
    for e in -1074..1024 {
        let power_of_two = if e < -1022 {
            1 << (e + 1074)
        } else {
            ((e + 1023) as u64) << MANTISSA_BITS
        };
        values.extend(with_neighbours(f64::from_bits(power_of_two)));
    }
    for e in -323..309 {
        values.extend(with_neighbours(format!("1e{e}").parse().unwrap()));
    }
    // Subnormals: the smallest few, the largest, and random ones of every width.
    values.extend((1..=64).chain([0x000F_FFFF_FFFF_FFFF]).map(f64::from_bits));
    for width in 1..=52 {
        values.push(f64::from_bits((rng.next() >> (64 - width)) | 1));
    }
    // Both ends of the significands of every binary exponent (the smallest is where the gap below
    // is half as wide).
    for biased_exponent in 1..2047u64 {
        let base = biased_exponent << MANTISSA_BITS;
        for fraction in [0, 1, 2, 3, 0x000F_FFFF_FFFF_FFFE, 0x000F_FFFF_FFFF_FFFF] {
            values.push(f64::from_bits(base | fraction));
        }
    }
    // Integers: 1 to 10,000, random ones of every bit length up to 53, and around 2^53.
    values.extend((1..=10_000).map(f64::from));
    for length in 1..=53 {
        let top = 1u64 << (length - 1);
        values.push((top | (rng.next() & (top - 1))) as f64);
        values.push((top - 1 + top) as f64);
    }
    let two_to_53 = (1u64 << 53) as f64;
    values.extend(with_neighbours(two_to_53));
    // Halfway ties: v = c × 2^q with k = floor(log10(2^q)) < 0 is exactly halfway between two
    // multiples of 10^k when the power of two in c × 2^q × 10^-k is 2^-1, that is when c has
    // -1 - q + k trailing zeros and then a one.
    for q in -75..0 {
        let k = floor_log10_pow2(q);
        let zeros = -1 - q + k;
        if !(0..=52).contains(&zeros) {
            continue;
        }
        for _ in 0..20 {
            let odd = (rng.next() >> (11 + zeros)) | (1 << (52 - zeros)) | 1;
            values.push((odd << zeros) as f64 * 2f64.powi(q));
        }
    }
    values.extend([
        f64::MIN_POSITIVE,
        f64::MAX,
        9007199254740993.0,
        0.1,
        0.3,
        2.0 / 3.0,
        f64::from_bits(0x431A_A3D7_EAC1_1F3D),
    ]);
    values.retain(|f| *f > 0.0 && f.is_finite());
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digits and exponent `{:e}` prints, as `(significand, exponent)`.
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
            shortest_decimal(f64::from_bits(0x431A_A3D7_EAC1_1F3D)),
            Decimal {
                leading: 1874624286574543,
                last: 2,
                exponent: -1
            }
        );
    }

    #[test]
    fn table_entries_match_their_definitions() {
        let entry = |k: i32| POWERS_OF_TEN[(k - SMALLEST_K) as usize];
        // 10^0 = 2^0: 2^125, plus one.
        assert_eq!(entry(0), (1u128 << 125) + 1);
        // 10^1 = 1.25 × 2^3 and 10^2 = 1.5625 × 2^6: exact, plus one.
        assert_eq!(entry(-1), (5u128 << 123) + 1);
        assert_eq!(entry(-2), (25u128 << 121) + 1);
        // 10^-1 = 1.6 × 2^-4: floor(1.6 × 2^125) + 1 = floor(2^128 / 5) + 1, and 2^128 = 1 (mod 5).
        assert_eq!(entry(1), u128::MAX / 5 + 1);
        for k in SMALLEST_K..=LARGEST_K {
            assert_eq!(128 - entry(k).leading_zeros(), 126, "k = {k}");
        }
    }

    #[test]
    fn logarithm_approximations_are_exact_over_their_range() {
        for q in -1100..1100 {
            let exact = (f64::from(q) * 2f64.log10()).floor() as i32;
            // Near integers the f64 estimate itself may be off; those q are exact powers here.
            if (f64::from(q) * 2f64.log10() - f64::from(exact)).abs() > 1e-9 {
                assert_eq!(floor_log10_pow2(q), exact, "{q}");
            }
        }
        for e in -400..400 {
            let exact = (f64::from(e) * 10f64.log2()).floor() as i32;
            if (f64::from(e) * 10f64.log2() - f64::from(exact)).abs() > 1e-9 {
                assert_eq!(floor_log2_pow10(e), exact, "{e}");
            }
        }
    }

    /// How many random floats the differential tests add: 200,000, or JSON_SHORTEST_SAMPLES for a
    /// longer run (tens of millions in release).
    fn random_samples() -> usize {
        std::env::var("JSON_SHORTEST_SAMPLES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(200_000)
    }

    #[test]
    fn one_product_agrees_with_exact_schubfach_wherever_it_decides() {
        let mut rng = crate::json::test_rng::TestRng(0x2F69_3C5E_A1B7_0D43);
        let samples = random_samples();
        let (mut decided, mut declined) = (0usize, 0usize);
        for f in awkward_floats(&mut rng, samples) {
            let bits = f.to_bits();
            let fraction = bits & ((1 << MANTISSA_BITS) - 1);
            let biased_exponent = (bits >> MANTISSA_BITS) as i32;
            if biased_exponent == 0 || fraction == 0 {
                continue;
            }
            let q = biased_exponent + SMALLEST_Q - 1;
            let c = (1 << MANTISSA_BITS) | fraction;
            match one_product(biased_exponent as usize, c) {
                Some(decimal) => {
                    assert_eq!(decimal, schubfach(q, c, false), "{f:e}");
                    decided += 1;
                }
                None => declined += 1,
            }
        }
        // It declines the exact ties among the generator's floats, and hardly anything else.
        assert!(
            declined > 100 && declined < decided / 100,
            "{declined} of {decided}"
        );
    }

    #[test]
    fn scales_match_their_definitions() {
        let mut used = 0;
        let normal = SCALES.iter().enumerate().take(BIASED_EXPONENTS - 1).skip(1);
        for (biased_exponent, &scale) in normal {
            let q = biased_exponent as i32 + SMALLEST_Q - 1;
            let k = floor_log10_pow2(q);
            if k >= LARGEST_K {
                assert_eq!(scale.k, LARGEST_K, "q = {q}");
                continue;
            }
            let l = floor_log2_pow10(-k - 1);
            assert_eq!(scale.k, k, "q = {q}");
            assert_eq!(
                scale.g,
                POWERS_OF_TEN[(k + 1 - SMALLEST_K) as usize],
                "q = {q}"
            );
            assert_eq!(i64::from(scale.shift), i64::from(5 + q + l), "q = {q}");
            assert!((1..=4).contains(&scale.shift), "q = {q}");
            assert_eq!(
                scale.half_gap,
                ((scale.g >> 63) as u64) >> (4 - scale.shift),
                "q = {q}"
            );
            used += 1;
        }
        // Every exponent but the few largest, where k reaches the table's end.
        assert!(used > 2_000, "{used}");
    }

    #[test]
    fn small_tables_match_their_definitions() {
        for (n, power) in POWERS_OF_TEN_U64.iter().enumerate() {
            assert_eq!(*power, 10u64.pow(n as u32));
        }
        assert_eq!(SMALLEST_LEADING, 10u64.pow(14));
    }

    #[test]
    fn agrees_with_std_on_random_and_edge_floats() {
        let mut rng = crate::json::test_rng::TestRng(0x853C_49E6_748F_EA9B);
        let samples = random_samples();
        let mut ties = 0;
        for f in awkward_floats(&mut rng, samples) {
            let decimal = shortest_decimal(f);
            assert!(
                (SMALLEST_LEADING..10 * POWERS_OF_TEN_U64[15]).contains(&decimal.leading)
                    && decimal.last < 10,
                "{f:e}: {decimal:?}"
            );
            let mut got = (decimal.leading * 10 + decimal.last, decimal.exponent);
            let mut want = reference(f);
            // The seventeen places end in zeros when the digits are fewer; `{:e}` prints none.
            while got.0 % 10 == 0 {
                got = (got.0 / 10, got.1 + 1);
            }
            while want.0 % 10 == 0 {
                want = (want.0 / 10, want.1 + 1);
            }
            if got != want {
                assert_halfway_tie_rounded_to_even(f, got, want);
                ties += 1;
            }
        }
        // The generator's halfway ties reach the comparison above.
        assert!(ties > 100, "only {ties} ties");
    }
}
