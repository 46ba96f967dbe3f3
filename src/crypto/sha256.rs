//! SHA-256 (FIPS 180-4), one-shot and streaming, for the audit log's hash chain.
//!
//! The standard library has no digest, and the project takes no registry crates, so the audit log's
//! chain hash is computed here. The code follows FIPS 180-4 §6.2 directly (no SIMD, no unsafe) and
//! is checked against the NIST example vectors in the tests below.
//!
//! ```
//! use agentteams_mcp::sha256::{self, Sha256};
//! let mut h = Sha256::new();
//! h.update(b"a");
//! h.update(b"bc");
//! assert_eq!(h.finish(), sha256::digest(b"abc"));
//! assert_eq!(
//!     sha256::to_hex(&sha256::digest(b"abc")),
//!     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
//! );
//! ```

use super::block::BlockBuffer;

/// Length of a digest in bytes.
pub const DIGEST_LEN: usize = 32;

/// The size of the block the compression function consumes.
const BLOCK_LEN: usize = 64;

/// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// A SHA-256 computation in progress: feed bytes with [`update`](Sha256::update), then
/// [`finish`](Sha256::finish).
#[derive(Clone, Debug)]
pub struct Sha256 {
    state: [u32; 8],
    /// Bytes of an incomplete block.
    buffer: BlockBuffer<BLOCK_LEN>,
    /// Message length so far, in bytes. The standard limits messages to 2^64 - 1 bits; a process
    /// cannot feed that much, so the count cannot wrap in practice.
    length: u64,
}

impl Default for Sha256 {
    fn default() -> Self {
        Sha256::new()
    }
}

impl Sha256 {
    pub fn new() -> Sha256 {
        Sha256 {
            state: H0,
            buffer: BlockBuffer::new(),
            length: 0,
        }
    }

    /// Appends `data` to the message.
    pub fn update(&mut self, data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u64);
        let state = &mut self.state;
        self.buffer.feed(data, |block| compress(state, block));
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns the digest.
    pub fn finish(mut self) -> [u8; DIGEST_LEN] {
        let bit_length = self.length.wrapping_mul(8);
        let state = &mut self.state;
        self.buffer
            .pad(&bit_length.to_be_bytes(), |block| compress(state, block));
        let mut out = [0u8; DIGEST_LEN];
        for (chunk, word) in out.chunks_exact_mut(4).zip(self.state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

impl super::digest::Digest for Sha256 {
    const BLOCK_LEN: usize = BLOCK_LEN;
    type Output = [u8; DIGEST_LEN];

    fn new() -> Self {
        Sha256::new()
    }

    fn update(&mut self, data: &[u8]) {
        Sha256::update(self, data)
    }

    fn finish(self) -> Self::Output {
        Sha256::finish(self)
    }
}

/// FIPS 180-4 §6.2.2: the compression function over one 512-bit block.
///
/// The message schedule is kept as a 16-word ring computed as the rounds need it, and the rounds
/// are written out so the working variables rotate by renaming instead of moving.
// The last round stores a schedule word that no round reads: harmless, and dropped by the compiler.
#[allow(unused_assignments)]
fn compress(state: &mut [u32; 8], block: &[u8; BLOCK_LEN]) {
    let mut w = [0u32; 16];
    for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    // One round: t is the round number; the words are named so that each call rotates them.
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $t:expr) => {{
            let t = $t;
            let wt = if t < 16 {
                w[t]
            } else {
                let w15 = w[(t + 1) % 16];
                let w2 = w[(t + 14) % 16];
                let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
                let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
                let next = w[t % 16]
                    .wrapping_add(s0)
                    .wrapping_add(w[(t + 9) % 16])
                    .wrapping_add(s1);
                w[t % 16] = next;
                next
            };
            let big_s1 = $e.rotate_right(6) ^ $e.rotate_right(11) ^ $e.rotate_right(25);
            let ch = ($e & $f) ^ (!$e & $g);
            let t1 = $h
                .wrapping_add(big_s1)
                .wrapping_add(ch)
                .wrapping_add(K[t])
                .wrapping_add(wt);
            let big_s0 = $a.rotate_right(2) ^ $a.rotate_right(13) ^ $a.rotate_right(22);
            let maj = ($a & $b) ^ ($a & $c) ^ ($b & $c);
            $d = $d.wrapping_add(t1);
            $h = t1.wrapping_add(big_s0.wrapping_add(maj));
        }};
    }
    // Eight rounds per step, each step written out with its first round number as a constant:
    // the schedule's indices, the choice between a message word and a scheduled one, and K's index
    // are then decided at compile time (a loop over the steps left them to run time: about 18%
    // more instructions).
    macro_rules! eight_rounds {
        ($base:expr) => {{
            let base: usize = $base;
            round!(a, b, c, d, e, f, g, h, base);
            round!(h, a, b, c, d, e, f, g, base + 1);
            round!(g, h, a, b, c, d, e, f, base + 2);
            round!(f, g, h, a, b, c, d, e, base + 3);
            round!(e, f, g, h, a, b, c, d, base + 4);
            round!(d, e, f, g, h, a, b, c, base + 5);
            round!(c, d, e, f, g, h, a, b, base + 6);
            round!(b, c, d, e, f, g, h, a, base + 7);
        }};
    }
    eight_rounds!(0);
    eight_rounds!(8);
    eight_rounds!(16);
    eight_rounds!(24);
    eight_rounds!(32);
    eight_rounds!(40);
    eight_rounds!(48);
    eight_rounds!(56);
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// The SHA-256 digest of `data`.
pub fn digest(data: &[u8]) -> [u8; DIGEST_LEN] {
    let mut h = Sha256::new();
    h.update(data);
    h.finish()
}

/// Lowercase hexadecimal, two digits per byte.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// The SHA-256 digest of `data` in lowercase hexadecimal (64 characters).
pub fn hex_digest(data: &[u8]) -> String {
    to_hex(&digest(data))
}

/// Whether `s` has the form [`hex_digest`] produces: exactly 64 lowercase hexadecimal digits.
pub fn is_hex_digest(s: &str) -> bool {
    s.len() == 2 * DIGEST_LEN && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NIST "Example Algorithm Implementations" for SHA-256 (FIPS 180-4 examples) and the
    /// long-message vector of FIPS 180-2 Appendix B.3.
    const VECTORS: [(&[u8], &str); 4] = [
        (
            b"",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        (
            b"abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
        (
            b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
        ),
    ];

    #[test]
    fn nist_vectors_one_shot() {
        for (message, expected) in VECTORS {
            assert_eq!(hex_digest(message), expected, "message {message:?}");
        }
        assert_eq!(VECTORS[2].0.len() * 8, 448);
        assert_eq!(VECTORS[3].0.len() * 8, 896);
    }

    #[test]
    fn nist_vectors_fed_one_byte_at_a_time() {
        for (message, expected) in VECTORS {
            let mut h = Sha256::new();
            for b in message {
                h.update(std::slice::from_ref(b));
            }
            assert_eq!(to_hex(&h.finish()), expected);
        }
    }

    #[test]
    fn one_million_a_streamed_in_uneven_chunks() {
        let chunk = [b'a'; 997];
        let mut h = Sha256::new();
        let mut left = 1_000_000usize;
        while left > 0 {
            let n = left.min(chunk.len());
            h.update(&chunk[..n]);
            left -= n;
        }
        assert_eq!(
            to_hex(&h.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        assert_eq!(
            hex_digest(&vec![b'a'; 1_000_000]),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn padding_boundaries_agree_between_one_shot_and_streaming() {
        // Lengths around the 55/56/64-byte padding edges, where one or two final blocks are needed.
        let data: Vec<u8> = (0..200u8).collect();
        for len in [0, 1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200] {
            let whole = digest(&data[..len]);
            for split in [0, len / 3, len / 2, len] {
                let mut h = Sha256::new();
                h.update(&data[..split]);
                h.update(&data[split..len]);
                assert_eq!(h.finish(), whole, "len {len} split {split}");
            }
        }
        // Known answers at the edges (computed with coreutils sha256sum).
        assert_eq!(
            hex_digest(&[b'a'; 55]),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"
        );
        assert_eq!(
            hex_digest(&[b'a'; 56]),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"
        );
        assert_eq!(
            hex_digest(&[b'a'; 64]),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"
        );
    }

    #[test]
    fn hex_form_is_recognised() {
        assert!(is_hex_digest(&hex_digest(b"x")));
        assert!(!is_hex_digest(&hex_digest(b"x").to_uppercase()));
        assert!(!is_hex_digest("abc"));
        assert!(!is_hex_digest(&"g".repeat(64)));
    }
}
