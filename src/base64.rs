//! Base64 (RFC 4648 §4, standard alphabet, padded): encoding and strict decoding, for binary
//! resource contents and other blobs the protocol carries as text.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in padded standard Base64.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            // A chunk of k bytes gives k + 1 symbols; the rest of the quartet is padding.
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes padded standard Base64; `None` for any other byte, bad padding or a length that is
/// not a multiple of four (strict: a blob that decodes has exactly one encoding).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| ALPHABET.iter().position(|&a| a == c).map(|v| v as u32);
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quartets = bytes.len() / 4;
    for (i, quartet) in bytes.chunks(4).enumerate() {
        let pad = quartet.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != quartets) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quartet[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        // Bits below the last whole byte must be zero, or two texts would decode alike.
        if decoded[3 - pad..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(encode(plain.as_bytes()), coded, "{plain:?}");
            assert_eq!(
                decode(coded).as_deref(),
                Some(plain.as_bytes()),
                "{coded:?}"
            );
        }
        for bad in ["Zg=", "Zg===", "Z===", "Zh==", "Zm9v\n", "Zg==Zg==", "Zm 9"] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
        assert_eq!(encode(&[0xff, 0xfe, 0xfd]), "//79");
    }
}
