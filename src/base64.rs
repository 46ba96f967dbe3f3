//! Base64 (RFC 4648 §4, standard alphabet, padded) and base64url (§5, unpadded, for JOSE): encoding
//! and strict decoding, for binary resource contents and other blobs the protocol carries as text.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// RFC 4648 §5: the URL- and filename-safe alphabet JOSE uses (`-` and `_` for `+` and `/`).
const URL_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `bytes` in padded standard Base64.
pub fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, ALPHABET, true)
}

/// `bytes` in unpadded base64url (RFC 4648 §5), as JOSE writes every binary member (RFC 7515 §2).
pub fn encode_url(bytes: &[u8]) -> String {
    encode_with(bytes, URL_ALPHABET, false)
}

fn encode_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
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
                out.push(char::from(alphabet[((n >> shift) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes padded standard Base64; `None` for any other byte, bad padding or a length that is
/// not a multiple of four (strict: a blob that decodes has exactly one encoding).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    decode_with(text.as_bytes(), &DECODE_STANDARD)
}

/// Decodes unpadded base64url strictly: `None` for padding, whitespace, a byte outside the URL
/// alphabet, a length that leaves one symbol over, or nonzero bits after the last byte (so each
/// value has exactly one encoding, as JOSE's comparisons of encoded members assume).
pub fn decode_url(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let missing = match bytes.len() % 4 {
        0 => 0,
        1 => return None,
        rest => 4 - rest,
    };
    if bytes.contains(&b'=') {
        return None;
    }
    let mut padded = Vec::with_capacity(bytes.len() + missing);
    padded.extend_from_slice(bytes);
    padded.resize(bytes.len() + missing, b'=');
    decode_with(&padded, &DECODE_URL)
}

/// The value of each byte in `alphabet`, 0xff for bytes outside it.
const fn reverse(alphabet: &[u8; 64]) -> [u8; 256] {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
}

const DECODE_STANDARD: [u8; 256] = reverse(ALPHABET);
const DECODE_URL: [u8; 256] = reverse(URL_ALPHABET);

/// Decodes padded Base64 whose symbols `table` (made by [`reverse`]) gives the values of.
fn decode_with(bytes: &[u8], table: &[u8; 256]) -> Option<Vec<u8>> {
    if bytes.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| match table[usize::from(c)] {
        0xff => None,
        v => Some(u32::from(v)),
    };
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
    use super::{decode, decode_url, encode, encode_url};

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

    #[test]
    fn base64url_without_padding_round_trips_and_is_strict() {
        let vectors = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
        ];
        for (plain, coded) in vectors {
            assert_eq!(encode_url(plain.as_bytes()), coded);
            assert_eq!(decode_url(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(encode_url(&[0xfb, 0xff]), "-_8");
        assert_eq!(decode_url("-_8").as_deref(), Some(&[0xfb, 0xff][..]));
        // Padding, the standard alphabet's symbols, a lone symbol, nonzero spare bits, spaces.
        for bad in [
            "Zg==", "Zg=", "+/8", "Z", "Zh", "Zm9", "Zm 9", "Zm9v\n", "Zm9vY",
        ] {
            assert_eq!(decode_url(bad), None, "{bad:?}");
        }
    }
}
