//! SHA-512 and SHA-384 (FIPS 180-4 §6.4, §6.5), one-shot and streaming, for RS384/RS512,
//! PS384/PS512, HMAC-SHA-384/512 and Ed25519 (whose hash is SHA-512).
//!
//! ```
//! use agentteams_mcp::crypto::sha512;
//! assert_eq!(
//!     agentteams_mcp::sha256::to_hex(&sha512::digest384(b"abc")[..8]),
//!     "cb00753f45a35e8b"
//! );
//! ```

use super::block::BlockBuffer;
use super::digest::Digest;

/// Length of a SHA-512 digest in bytes.
pub const SHA512_LEN: usize = 64;
/// Length of a SHA-384 digest in bytes (the first 48 bytes of its 512-bit state).
pub const SHA384_LEN: usize = 48;

const BLOCK_LEN: usize = 128;

/// FIPS 180-4 §4.2.3: the first 64 bits of the fractional parts of the cube roots of the first 80
/// primes.
const K: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];

/// FIPS 180-4 §5.3.5: SHA-512's initial state.
const H512: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

/// FIPS 180-4 §5.3.4: SHA-384's initial state.
const H384: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];

/// The 512-bit engine both functions share; they differ in initial state and output length.
#[derive(Clone, Debug)]
struct Engine {
    state: [u64; 8],
    buffer: BlockBuffer<BLOCK_LEN>,
    /// Message length so far, in bytes (the standard's 128-bit bit count cannot be reached).
    length: u128,
}

impl Engine {
    const fn new(initial: [u64; 8]) -> Engine {
        Engine {
            state: initial,
            buffer: BlockBuffer::new(),
            length: 0,
        }
    }

    fn update(&mut self, data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u128);
        let state = &mut self.state;
        self.buffer.feed(data, |block| compress(state, block));
    }

    fn finish<const LEN: usize>(mut self) -> [u8; LEN] {
        let bit_length = self.length.wrapping_mul(8);
        let state = &mut self.state;
        self.buffer
            .pad(&bit_length.to_be_bytes(), |block| compress(state, block));
        let mut full = [0u8; SHA512_LEN];
        for (chunk, word) in full.chunks_exact_mut(8).zip(self.state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        let mut out = [0u8; LEN];
        out.copy_from_slice(&full[..LEN]);
        out
    }
}

/// FIPS 180-4 §6.4.2: the compression function over one 1024-bit block.
fn compress(state: &mut [u64; 8], block: &[u8; BLOCK_LEN]) {
    let mut w = [0u64; 80];
    for (word, bytes) in w.iter_mut().zip(block.chunks_exact(8)) {
        *word = u64::from_be_bytes(bytes.try_into().expect("8-byte chunk"));
    }
    for t in 16..80 {
        let s0 = w[t - 15].rotate_right(1) ^ w[t - 15].rotate_right(8) ^ (w[t - 15] >> 7);
        let s1 = w[t - 2].rotate_right(19) ^ w[t - 2].rotate_right(61) ^ (w[t - 2] >> 6);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    let mut v = *state;
    for (k, wt) in K.iter().zip(w) {
        let [a, b, c, d, e, f, g, h] = v;
        let big_s1 = e.rotate_right(14) ^ e.rotate_right(18) ^ e.rotate_right(41);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(big_s1)
            .wrapping_add(ch)
            .wrapping_add(*k)
            .wrapping_add(wt);
        let big_s0 = a.rotate_right(28) ^ a.rotate_right(34) ^ a.rotate_right(39);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        v = [
            t1.wrapping_add(big_s0.wrapping_add(maj)),
            a,
            b,
            c,
            d.wrapping_add(t1),
            e,
            f,
            g,
        ];
    }
    for (s, x) in state.iter_mut().zip(v) {
        *s = s.wrapping_add(x);
    }
}

/// A SHA-512 or SHA-384 computation in progress: one engine, told apart by the output length
/// `LEN` (which also picks the initial state).
#[derive(Clone, Debug)]
pub struct Sha512Family<const LEN: usize>(Engine);

/// SHA-512 (64-byte digest).
pub type Sha512 = Sha512Family<SHA512_LEN>;
/// SHA-384 (48-byte digest, its own initial state).
pub type Sha384 = Sha512Family<SHA384_LEN>;

impl<const LEN: usize> Digest for Sha512Family<LEN> {
    const BLOCK_LEN: usize = BLOCK_LEN;
    type Output = [u8; LEN];
    fn new() -> Self {
        Sha512Family(Engine::new(if LEN == SHA384_LEN { H384 } else { H512 }))
    }
    fn update(&mut self, data: &[u8]) {
        self.0.update(data)
    }
    fn finish(self) -> Self::Output {
        self.0.finish()
    }
}

/// The SHA-512 digest of `data`.
pub fn digest512(data: &[u8]) -> [u8; SHA512_LEN] {
    let mut h = Sha512::new();
    h.update(data);
    h.finish()
}

/// The SHA-384 digest of `data`.
pub fn digest384(data: &[u8]) -> [u8; SHA384_LEN] {
    let mut h = Sha384::new();
    h.update(data);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::super::sha256::to_hex;
    use super::*;

    /// FIPS 180-4 examples (NIST "Example Algorithm Implementations"): the one-block "abc" and the
    /// two-block 896-bit message, plus the empty message.
    const MSG_896: &[u8] = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

    #[test]
    fn sha512_nist_vectors() {
        let cases: [(&[u8], &str); 3] = [
            (b"", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
            (b"abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
            (MSG_896, "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
        ];
        for (message, expected) in cases {
            assert_eq!(to_hex(&digest512(message)), expected, "{message:?}");
        }
    }

    #[test]
    fn sha384_nist_vectors() {
        let cases: [(&[u8], &str); 3] = [
            (b"", "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"),
            (b"abc", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
            (MSG_896, "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039"),
        ];
        for (message, expected) in cases {
            assert_eq!(to_hex(&digest384(message)), expected, "{message:?}");
        }
    }

    /// FIPS 180-2 Appendix C.3 / D.3: one million 'a', streamed in chunks that straddle blocks.
    #[test]
    fn one_million_a() {
        let chunk = [b'a'; 997];
        let mut h512 = Sha512::new();
        let mut h384 = Sha384::new();
        let mut left = 1_000_000usize;
        while left > 0 {
            let n = left.min(chunk.len());
            h512.update(&chunk[..n]);
            h384.update(&chunk[..n]);
            left -= n;
        }
        assert_eq!(to_hex(&h512.finish()), "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b");
        assert_eq!(to_hex(&h384.finish()), "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985");
    }

    #[test]
    fn padding_edges_agree_between_one_shot_and_streaming() {
        // Around 111/112/128 bytes a 16-byte length field needs one or two final blocks.
        let data: Vec<u8> = (0..=255u8).collect();
        for len in [0, 1, 110, 111, 112, 113, 127, 128, 129, 239, 240, 256] {
            let whole = digest512(&data[..len]);
            for split in [0, len / 3, len] {
                let mut h = Sha512::new();
                h.update(&data[..split]);
                h.update(&data[split..len]);
                assert_eq!(h.finish(), whole, "len {len} split {split}");
            }
        }
        // Known answers at the edge (coreutils sha512sum).
        assert_eq!(&to_hex(&digest512(&[b'a'; 112]))[..16], "c01d080efd492776");
        assert_eq!(&to_hex(&digest512(&[b'a'; 111]))[..16], "fa9121c7b32b9e01");
    }
}
