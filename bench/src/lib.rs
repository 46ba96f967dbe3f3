//! What the bench drivers share: the rotation of the order in which an interleaved round runs
//! three contenders, so that none always runs first, last, or after the same other one.
//!
//! The drivers themselves are the binaries (`src/main.rs` and `src/bin/`); this library holds no
//! measurement.

/// The orders in which one round runs three contenders, taken in turn: every contender in every
/// place, and after every other.
pub const ROTATING_ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [2, 1, 0],
    [1, 2, 0],
    [0, 2, 1],
    [2, 0, 1],
    [1, 0, 2],
];
