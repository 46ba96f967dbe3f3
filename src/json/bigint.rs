//! Fixed-width unsigned big integers for `const fn` use: the float conversions build their tables of
//! powers of five at compile time from these, instead of carrying copied constants.

/// Little-endian limbs of a big integer: enough for `2^b` with the largest `b` the tables need
/// (about 1720 bits, for the reciprocal of 5^342).
pub(crate) const LIMBS: usize = 28;
pub(crate) type Big = [u64; LIMBS];

pub(crate) const fn bit_length(x: &Big) -> u32 {
    let mut i = LIMBS;
    while i > 0 {
        i -= 1;
        if x[i] != 0 {
            return i as u32 * 64 + 64 - x[i].leading_zeros();
        }
    }
    0
}

pub(crate) const fn multiply_small(x: &mut Big, m: u64) {
    let mut carry = 0u128;
    let mut i = 0;
    while i < LIMBS {
        let t = x[i] as u128 * m as u128 + carry;
        x[i] = t as u64;
        carry = t >> 64;
        i += 1;
    }
}

pub(crate) const fn divide_small(x: &mut Big, d: u64) {
    let mut remainder = 0u128;
    let mut i = LIMBS;
    while i > 0 {
        i -= 1;
        let t = (remainder << 64) | x[i] as u128;
        x[i] = (t / d as u128) as u64;
        remainder = t % d as u128;
    }
}

/// Bits `[from, from + 128)` of `x` as (high word, low word).
pub(crate) const fn bits_128(x: &Big, from: u32) -> (u64, u64) {
    const fn word(x: &Big, bit: u32) -> u64 {
        let limb = (bit / 64) as usize;
        let offset = bit % 64;
        let low = if limb < LIMBS { x[limb] >> offset } else { 0 };
        let high = if offset != 0 && limb + 1 < LIMBS {
            x[limb + 1] << (64 - offset)
        } else {
            0
        };
        low | high
    }
    (word(x, from + 64), word(x, from))
}

/// The top 128 bits of `x` with its highest set bit moved to bit 127 (zero-padded when shorter).
pub(crate) const fn top_128(x: &Big) -> (u64, u64) {
    let length = bit_length(x);
    if length >= 128 {
        bits_128(x, length - 128)
    } else {
        // Shift left: represent as bits of x << (128 - length), read from 0.
        let shift = 128 - length;
        let value = ((x[1] as u128) << 64 | x[0] as u128) << shift;
        ((value >> 64) as u64, value as u64)
    }
}

pub(crate) const fn add_one(x: &mut Big) {
    let mut i = 0;
    while i < LIMBS {
        let (sum, overflow) = x[i].overflowing_add(1);
        x[i] = sum;
        if !overflow {
            return;
        }
        i += 1;
    }
}

/// `x >> shift` for a shift below the width.
pub(crate) const fn shift_right(x: &Big, shift: u32) -> Big {
    let mut out = [0u64; LIMBS];
    let limbs = (shift / 64) as usize;
    let bits = shift % 64;
    let mut i = 0;
    while i + limbs < LIMBS {
        let low = x[i + limbs] >> bits;
        let high = if bits != 0 && i + limbs + 1 < LIMBS {
            x[i + limbs + 1] << (64 - bits)
        } else {
            0
        };
        out[i] = low | high;
        i += 1;
    }
    out
}
