//! Message buffering and Merkle-Damgard padding shared by the SHA-2 hashes (FIPS 180-4 §5.1).
//!
//! SHA-256 and SHA-384/512 differ in block size, word size and length-field width, not in how a
//! message is cut into blocks and padded, so that part is written once here.

/// The bytes of a message that do not yet fill a block of `N` bytes.
#[derive(Clone, Debug)]
pub(crate) struct BlockBuffer<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> BlockBuffer<N> {
    pub(crate) const fn new() -> Self {
        BlockBuffer {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Appends `data`, handing every completed block to `compress`.
    pub(crate) fn feed(&mut self, mut data: &[u8], mut compress: impl FnMut(&[u8; N])) {
        if self.len > 0 {
            let take = (N - self.len).min(data.len());
            self.bytes[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
            if self.len < N {
                return;
            }
            compress(&self.bytes);
            self.len = 0;
        }
        let mut blocks = data.chunks_exact(N);
        for block in &mut blocks {
            compress(block.try_into().expect("a chunk of N bytes"));
        }
        let rest = blocks.remainder();
        self.bytes[..rest.len()].copy_from_slice(rest);
        self.len = rest.len();
    }

    /// Pads the message: the 0x80 byte, zeros, then `length_field` (the message length in bits,
    /// big-endian, 8 bytes for SHA-256 and 16 for SHA-512) ending the last block; one block if the
    /// padding fits after the buffered bytes, else two.
    pub(crate) fn pad(mut self, length_field: &[u8], mut compress: impl FnMut(&[u8; N])) {
        self.bytes[self.len] = 0x80;
        self.bytes[self.len + 1..].fill(0);
        if self.len + 1 + length_field.len() > N {
            compress(&self.bytes);
            self.bytes.fill(0);
        }
        self.bytes[N - length_field.len()..].copy_from_slice(length_field);
        compress(&self.bytes);
    }
}
