//! Hexadecimal decoding for keys and test vectors.

/// Decodes lowercase or uppercase hexadecimal; `None` for an odd length or a non-hex byte. For
/// tests and examples that carry vectors as hex.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16);
    let bytes = text.as_bytes();
    if bytes.len() % 2 != 0 {
        return None;
    }
    bytes
        .chunks_exact(2)
        .map(|pair| Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8))
        .collect()
}
