//! Finding the next byte a JSON string cannot hold as is (quote, backslash, control character).
//!
//! Shared by the parser (where such a byte ends the plain run of a string) and the compact writer
//! (where it must be escaped), so both agree on one definition.

/// Bytes a JSON string cannot hold unescaped: the quote, the backslash and control characters.
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The index of the first byte at or after `i` that ends a string's plain run (see
/// [`STRING_STOP`]), or `input.len()`. Looks at eight bytes per step: a byte is flagged by the
/// classic "has a byte less than n / equal to c" word tricks, whose lowest flag is always exact.
#[inline]
pub(crate) fn find_string_stop(input: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = input.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let control = word.wrapping_sub(ONES * 0x20);
        let quote = (word ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES)
            & !(word ^ (ONES * u64::from(b'"')));
        let backslash = (word ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES)
            & !(word ^ (ONES * u64::from(b'\\')));
        let flags = (control | quote | backslash) & !word & HIGH;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = input.get(i) {
        if STRING_STOP[b as usize] {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_scan_agrees_with_the_byte_table() {
        // Every byte value at every position of a 24-byte buffer, from every start offset.
        let filler = b"abcdefghijklmnopqrstuvwx";
        for special in 0..=255u8 {
            for at in 0..filler.len() {
                let mut buf = filler.to_vec();
                buf[at] = special;
                for start in 0..buf.len() {
                    let want = (start..buf.len())
                        .find(|&i| STRING_STOP[buf[i] as usize])
                        .unwrap_or(buf.len());
                    assert_eq!(
                        find_string_stop(&buf, start),
                        want,
                        "byte {special:#x} at {at}"
                    );
                }
            }
        }
    }
}
