//! Sizes as operators write them on the command line: a whole number of bytes with an optional
//! binary suffix `K`, `M`, `G` or `T` (`512M`, `1G`, `1073741824`). Each option says what else
//! it accepts and words its own error.

/// Largest size accepted: far above any limit an option sets, and clear of overflow.
const MAX_SIZE: u64 = 1 << 60;

/// The bytes `text` names, `None` when it is not a size.
pub fn parse(text: &str) -> Option<u64> {
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 10),
        Some((i, 'm' | 'M')) => (&text[..i], 20),
        Some((i, 'g' | 'G')) => (&text[..i], 30),
        Some((i, 't' | 'T')) => (&text[..i], 40),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n < MAX_SIZE)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_take_binary_suffixes_and_refuse_anything_else() {
        for (text, want) in [
            ("0", Some(0)),
            ("512M", Some(512 << 20)),
            ("1g", Some(1 << 30)),
            ("64k", Some(64 << 10)),
            ("2T", Some(2 << 40)),
            ("1073741824", Some(1 << 30)),
            ("", None),
            ("M", None),
            ("-1", None),
            ("1.5G", None),
            ("1 G", None),
            ("1MB", None),
            ("99999999999T", None),
            ("18446744073709551616", None),
        ] {
            assert_eq!(super::parse(text), want, "{text:?}");
        }
    }
}
