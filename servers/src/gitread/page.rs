//! One page of a tool's output for the product's plain-text answers: git's stdout from a byte
//! offset, cut after the last whole line that fits the cap, sanitised, and ended by a line naming
//! the `offset` that continues it.
//!
//! Offsets count bytes of git's raw stdout, so a page is computed from the run alone: the caller
//! skips `offset` bytes while git runs ([`super::process::Window::from_byte`]) and keeps
//! [`KEEP`] bytes after them. The next call starts exactly where this page stopped: no overlap and
//! no gap, except that a single line too long for a page is cut inside the line (on a character
//! boundary). Not for `--compat reference`, whose answers are the reference's JSON text, cut by
//! [`super::sanitize::render_output`] with no way to continue.

use super::sanitize::{sanitize, MAX_OUTPUT};

/// Bytes of a page's text, continuation line included: the reference's output cap, so a page is
/// never larger than the reference's longest answer.
pub const PAGE_BYTES: usize = MAX_OUTPUT;

/// Bytes of git's stdout a run keeps after the offset. Sanitising never shortens text (an
/// invalid byte becomes a 3-byte U+FFFD, an escape is longer than what it escapes), so a page
/// never needs more raw bytes than its own size; one more tells whether a line that fills the
/// page ends there.
pub const KEEP: usize = PAGE_BYTES + 1;

/// Room kept at the end of a page for the continuation line.
const CONTINUATION_RESERVE: usize = 128;

/// Most bytes of output a page holds before its continuation line.
const BODY_BYTES: usize = PAGE_BYTES - CONTINUATION_RESERVE;

/// Largest `offset` accepted: far beyond any output a call can produce before its timeout.
pub const MAX_OFFSET: u64 = 1 << 40;

/// The structured field that says where a cut answer continues, for answers paged by byte.
pub const NEXT_OFFSET: &str = "next_offset";

/// The same, for `git_file`'s line ranges, paged by line.
pub const NEXT_START: &str = "next_start";

/// The message for an `offset` that is not an integer in range.
pub fn offset_message() -> String {
    format!("offset must be an integer from 0 to {MAX_OFFSET}")
}

/// The last line of a cut answer: which argument, with which value, continues it.
pub fn continuation(argument: &str, value: u64) -> String {
    format!("(cut at the output cap: call again with {argument}={value} for the rest)")
}

/// The answer for an `offset` at or past the end of an output of `total` bytes.
pub fn past_the_end(offset: u64, total: u64) -> String {
    format!("(nothing from offset={offset} on: the output has {total} bytes)")
}

/// A page of output.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    /// The sanitised text, ending with the continuation line when the output goes on.
    pub text: String,
    /// Where the next page starts, when the output goes on.
    pub next_offset: Option<u64>,
}

/// The page of git's stdout that starts at byte `offset`: `raw` is what the run kept from there
/// (at most [`KEEP`] bytes), `more` says stdout went on past it, `total` is stdout's whole length.
/// `None` when there is nothing from `offset` on (the caller says why).
pub fn render(raw: &[u8], more: bool, offset: u64) -> Option<Page> {
    render_reserving(raw, more, offset, 0)
}

/// [`render`] with `reserve` bytes of the page left for a line the caller puts before it.
pub fn render_reserving(raw: &[u8], more: bool, offset: u64, reserve: usize) -> Option<Page> {
    if raw.is_empty() {
        return None;
    }
    let Cut { mut text, consumed } = cut(raw, more, reserve);
    let Some(consumed) = consumed else {
        return Some(Page {
            text,
            next_offset: None,
        });
    };
    let next = offset + consumed as u64;
    text.push_str(&continuation("offset", next));
    Some(Page {
        text,
        next_offset: Some(next),
    })
}

/// What of a run's kept stdout fits one page: its sanitised text and, when that is not all of
/// it, how many bytes of `raw` it shows (the page ends after a whole line, or, for a first line
/// longer than the page, between two characters of it and with a newline added).
pub struct Cut {
    pub text: String,
    pub consumed: Option<usize>,
}

/// The [`Cut`] of `raw` (`more`: stdout went on past it) with `reserve` bytes of the page left for
/// a line the caller puts before it and the continuation line after it.
pub fn cut(raw: &[u8], more: bool, reserve: usize) -> Cut {
    let body_bytes = BODY_BYTES.saturating_sub(reserve);
    let mut text = String::with_capacity(raw.len().min(PAGE_BYTES));
    let mut consumed = 0;
    for line in raw.split_inclusive(|&b| b == b'\n') {
        let whole = line.ends_with(b"\n") || !more;
        let clean = decode(line);
        if !whole || text.len() + clean.len() > body_bytes {
            break;
        }
        text.push_str(&clean);
        consumed += line.len();
    }
    if consumed == raw.len() && !more {
        return Cut {
            text,
            consumed: None,
        };
    }
    if consumed == 0 {
        // One line longer than a page: as much of it as fits, cut between two characters.
        consumed = cut_inside(raw, body_bytes);
        text.push_str(&decode(&raw[..consumed]));
        text.push('\n');
    }
    Cut {
        text,
        consumed: Some(consumed),
    }
}

/// `raw` as sanitised text (invalid UTF-8 becomes U+FFFD).
fn decode(raw: &[u8]) -> String {
    sanitize(&String::from_utf8_lossy(raw)).into_owned()
}

/// How many bytes of `raw` (no newline among them before the cut) decode and sanitise to at most
/// `budget` bytes, cut between two characters; at least one character. Each character is measured
/// alone, which never undercounts: alone, a `\r` or a variation selector is escaped, in context it
/// may be kept.
fn cut_inside(raw: &[u8], budget: usize) -> usize {
    let mut used = 0;
    let mut at = 0;
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut buffer = [0u8; 4];
            let size = sanitize(c.encode_utf8(&mut buffer)).len();
            if used + size > budget && at > 0 {
                return at;
            }
            used += size;
            at += c.len_utf8();
        }
        if !chunk.invalid().is_empty() {
            let size = char::REPLACEMENT_CHARACTER.len_utf8();
            if used + size > budget && at > 0 {
                return at;
            }
            used += size;
            at += chunk.invalid().len();
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page of `output` in turn, as a client paging with `offset` would get them.
    fn pages(output: &[u8]) -> Vec<Page> {
        let mut offset = 0;
        let mut all = Vec::new();
        loop {
            let from = &output[offset as usize..];
            let raw = &from[..from.len().min(KEEP)];
            let Some(page) = render(raw, from.len() > KEEP, offset) else {
                return all;
            };
            let next = page.next_offset;
            all.push(page);
            match next {
                Some(next) => offset = next,
                None => return all,
            }
        }
    }

    /// The pages' output joined back, continuation lines removed.
    fn joined(pages: &[Page]) -> String {
        pages
            .iter()
            .map(|p| match p.next_offset {
                Some(next) => p.text.replace(&continuation("offset", next), ""),
                None => p.text.clone(),
            })
            .collect()
    }

    #[test]
    fn a_short_output_is_one_page_unchanged() {
        let page = render(b"one\ntwo", false, 0);
        assert_eq!(
            page,
            Some(Page {
                text: "one\ntwo".into(),
                next_offset: None
            })
        );
        assert_eq!(render(b"", false, 0), None);
    }

    #[test]
    fn pages_cut_after_whole_lines_and_continue_with_no_gap_or_overlap() {
        let line = "x".repeat(99) + "\n";
        let output = line.repeat(2000);
        let all = pages(output.as_bytes());
        assert_eq!(all.len(), 4);
        for page in &all[..3] {
            assert!(page.text.len() <= PAGE_BYTES);
            let next = page.next_offset.unwrap_or_default();
            assert_eq!(next % 100, 0, "a page ends after a whole line");
            assert!(page.text.ends_with(&continuation("offset", next)));
        }
        assert_eq!(all[0].next_offset, Some((BODY_BYTES / 100 * 100) as u64));
        assert_eq!(joined(&all), output);
    }

    #[test]
    fn a_line_longer_than_a_page_is_cut_between_characters() {
        let output = "é".repeat(40_000) + "\nend\n";
        let all = pages(output.as_bytes());
        let first = all[0].next_offset.unwrap_or_default() as usize;
        assert!(output.is_char_boundary(first));
        assert_eq!(first, BODY_BYTES / 2 * 2);
        // The cut line gets a newline of its own before the continuation line.
        let rejoined: String = all
            .iter()
            .map(|p| match p.next_offset {
                Some(next) => p
                    .text
                    .replace(&format!("\n{}", continuation("offset", next)), ""),
                None => p.text.clone(),
            })
            .collect();
        assert_eq!(rejoined, output);
    }

    #[test]
    fn escapes_count_against_the_page_and_invalid_bytes_never_split() {
        // Every ESC becomes the 4-byte `\x1b`: the page holds a quarter as many raw bytes.
        let output = [b'\x1b'; 70_000];
        let first = &pages(&output)[0];
        assert_eq!(first.next_offset, Some((BODY_BYTES / 4) as u64));
        assert!(first.text.len() <= PAGE_BYTES);
        let invalid = [0xffu8; 70_000];
        let first = &pages(&invalid)[0];
        assert_eq!(first.next_offset, Some((BODY_BYTES / 3) as u64));
    }

    #[test]
    fn an_unterminated_last_line_is_whole_only_at_the_end() {
        let page = render(b"a\nb", true, 10);
        assert_eq!(page.map(|p| p.next_offset), Some(Some(12)));
    }
}
