//! Line locators: how our sidecars (the memory sections, the code outline) name a range of lines
//! of a file in a document's `path` (`docs/guide.md#L12-L40`, 1-based and inclusive, as code
//! hosts write line anchors), since the reference's index schemas allow no field of our own.

/// Digits of a line number in a locator (below 10^9: more lines than any indexed file has).
const MAX_LINE_DIGITS: usize = 9;

/// The stored path of lines `first_line` to `last_line` of `path`: `path#L<first>-L<last>`.
pub fn locate(path: &str, first_line: usize, last_line: usize) -> String {
    format!("{path}#L{first_line}-L{last_line}")
}

/// The file path and line range of a stored path, or `None` when it carries no
/// well-formed locator (`#L` then a line number from 1, `-L`, and a number at least as large,
/// both without sign or leading zeros, and nothing after).
pub fn parse_locator(stored: &str) -> Option<(&str, u32, u32)> {
    // Split at single bytes, not at "#L" and "-L": a `str` pattern builds a substring searcher
    // per call, and the first query parses one locator per definition of the project (67,244 on
    // the standard library). The answers are the same: a well-formed range holds no `#` and one
    // `-`, so a split that the two-byte patterns would have placed elsewhere fails here as there.
    let (path, range) = stored.rsplit_once('#')?;
    let (first, last) = range.strip_prefix('L')?.split_once('-')?;
    let (first, last) = (line_number(first)?, line_number(last.strip_prefix('L')?)?);
    (first <= last).then_some((path, first, last))
}

fn line_number(digits: &str) -> Option<u32> {
    let canonical = !digits.is_empty()
        && digits.len() <= MAX_LINE_DIGITS
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    canonical.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators_round_trip_and_only_canonical_ones_parse() {
        let stored = locate("docs/a#L1-L2.md", 12, 40);
        assert_eq!(stored, "docs/a#L1-L2.md#L12-L40");
        assert_eq!(parse_locator(&stored), Some(("docs/a#L1-L2.md", 12, 40)));
        assert_eq!(parse_locator("a.md#L1-L1"), Some(("a.md", 1, 1)));
        for bad in [
            "a.md",
            "a.md#L",
            "a.md#L1",
            "a.md#L1-",
            "a.md#L1-L",
            "a.md#L0-L3",
            "a.md#L01-L3",
            "a.md#L3-L2",
            "a.md#L+1-L2",
            "a.md#L1-L2 ",
            "a.md#L1-L2x",
            "a.md#L1-L9999999999",
            "a.md#L1-L２",
            "#L1-L",
            "a.md#L1-L2#x",
            "a.md#L1-L2#L3",
            "a.md#L1-L2-L3",
            "a.md#L1--L2",
            "a.md#x#L",
            "a.md#LL1-L2",
        ] {
            assert_eq!(parse_locator(bad), None, "{bad:?}");
        }
        assert_eq!(parse_locator("#L1-L2"), Some(("", 1, 2)));
        // Only the last `#` starts the locator.
        assert_eq!(parse_locator("a#b.md#L3-L4"), Some(("a#b.md", 3, 4)));
        assert_eq!(parse_locator("a#L9.md#L3-L4"), Some(("a#L9.md", 3, 4)));
    }
}
