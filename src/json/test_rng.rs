//! The randomised unit tests' generator.

/// A small deterministic generator (xorshift64*) for the randomised unit tests, so they need no
/// crate and fail the same way every run.
pub(crate) struct TestRng(pub(crate) u64);

impl TestRng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
