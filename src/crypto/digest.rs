//! The streaming-hash trait the SHA-2 functions implement and HMAC and the signature schemes are
//! generic over.

/// A streaming hash function HMAC and the signature schemes can be generic over.
pub trait Digest: Clone {
    /// The size of the block the compression function consumes, in bytes.
    const BLOCK_LEN: usize;
    /// The digest: a byte array of the function's output length.
    type Output: AsRef<[u8]> + Copy;
    fn new() -> Self;
    fn update(&mut self, data: &[u8]);
    fn finish(self) -> Self::Output;
}
