//! Neutralises what git prints before it reaches a client: terminal controls and invisible Unicode
//! become visible escapes, and the text is cut to the output cap with one marker.
//!
//! Git prints repository content (commit messages, author names, file lines) verbatim. A hostile
//! commit can therefore carry ESC sequences that repaint a terminal, a bare CR that overwrites a
//! line, bidi overrides that reorder what a reviewer sees (Trojan Source) or invisible characters
//! that hide text from a human but not from a model. Each such character is replaced by a visible
//! escape (`\x1b`, `\u{202e}`), never dropped, so the reader sees that something was there. Literal
//! backslashes are left alone (ordinary diffs are full of them), so the escapes are a display
//! safeguard, not a reversible encoding.

/// Most bytes of git's stdout a tool result keeps (the reference's `MAX_OUTPUT`).
pub const MAX_OUTPUT: usize = 61440;

/// Appended to `output` when it was cut.
pub const TRUNCATION_MARKER: &str = "\n\u{2026}[truncated]";

/// Largest pretty, ASCII-escaped JSON text a tool result may become (the engine's result cap).
/// `output` is cut so `{"output": ...}` always fits: the text stays valid JSON with one marker.
pub const MAX_RESULT_TEXT: usize = 65536;

/// Bytes of `{\n "output": "` and `"\n}` around the string in the serialised result.
const ENVELOPE: usize = 17;

/// Replaces every control, bidi, invisible and tag character of `text` with a visible escape.
///
/// Kept: `\n`, `\t`, a `\r` directly before `\n`, and a single variation selector that follows a
/// visible character (emoji presentation). Everything else in the classes below is escaped.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    // Whether the previous character was a visible base a variation selector may modify.
    let mut after_visible_base = false;
    while let Some(c) = chars.next() {
        let code = c as u32;
        let escaped = match c {
            '\n' | '\t' => false,
            '\r' => chars.peek() != Some(&'\n'),
            _ if code < 0x20 || (0x7f..=0x9f).contains(&code) => true,
            _ if is_format_char(code) => true,
            _ if is_variation_selector(code) => !after_visible_base,
            _ => false,
        };
        if escaped {
            push_escape(&mut out, code);
            after_visible_base = false;
        } else {
            out.push(c);
            after_visible_base = !c.is_whitespace() && !is_variation_selector(code);
        }
    }
    out
}

/// Bidi controls, zero-width and invisible operators, the BOM and Unicode tag characters.
fn is_format_char(code: u32) -> bool {
    matches!(code,
        0x061c | 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069
        | 0x200b..=0x200d | 0x2060..=0x2064 | 0xfeff
        | 0xe0000..=0xe007f)
}

fn is_variation_selector(code: u32) -> bool {
    matches!(code, 0xfe00..=0xfe0f | 0xe0100..=0xe01ef)
}

fn push_escape(out: &mut String, code: u32) {
    use std::fmt::Write;
    let _ = if code <= 0xff {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:04x}}}")
    };
}

/// Bytes `c` takes inside a JSON string written with ASCII-only escapes.
fn json_escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        ' '..='~' => 1,
        _ if (c as u32) < 0x10000 => 6,
        _ => 12,
    }
}

/// The `output` string of a tool result: git's stdout decoded (invalid UTF-8 becomes U+FFFD),
/// sanitised, then cut on a character boundary at [`MAX_OUTPUT`] bytes or where the serialised
/// result would pass [`MAX_RESULT_TEXT`], whichever comes first. `more` says the raw stdout was
/// longer than `raw` (the reader stopped keeping it).
pub fn render_output(raw: &[u8], more: bool) -> String {
    let text = sanitize(&String::from_utf8_lossy(raw));
    let marker_json: usize = TRUNCATION_MARKER.chars().map(json_escaped_len).sum();
    let json_budget = MAX_RESULT_TEXT - ENVELOPE - marker_json;
    let mut bytes = 0;
    let mut json = 0;
    for (index, c) in text.char_indices() {
        bytes += c.len_utf8();
        json += json_escaped_len(c);
        if bytes > MAX_OUTPUT || json > json_budget {
            let mut cut = text[..index].to_owned();
            cut.push_str(TRUNCATION_MARKER);
            return cut;
        }
    }
    if more {
        let mut text = text;
        text.push_str(TRUNCATION_MARKER);
        return text;
    }
    text
}

/// The stderr excerpt for an error message: decoded with U+FFFD for invalid bytes, trimmed like
/// Python's `str.strip()`, sanitised.
pub fn render_stderr(raw: &[u8]) -> String {
    sanitize(String::from_utf8_lossy(raw).trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json::{self, obj, Value};

    #[test]
    fn terminal_controls_become_visible_escapes() {
        assert_eq!(sanitize("a\x1b[31mred"), "a\\x1b[31mred");
        assert_eq!(sanitize("bell\x07 nul\0"), "bell\\x07 nul\\x00");
        assert_eq!(sanitize("del\x7f c1\u{9b}"), "del\\x7f c1\\x9b");
        assert_eq!(sanitize("over\rwrite"), "over\\x0dwrite");
    }

    #[test]
    fn newlines_tabs_and_crlf_are_kept() {
        assert_eq!(sanitize("a\tb\r\nc\n"), "a\tb\r\nc\n");
        assert_eq!(sanitize("end\r"), "end\\x0d");
    }

    #[test]
    fn bidi_invisible_and_tag_characters_are_escaped() {
        assert_eq!(sanitize("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(
            sanitize("\u{2066}\u{2069}\u{61c}"),
            "\\u{2066}\\u{2069}\\u{061c}"
        );
        assert_eq!(
            sanitize("zero\u{200b}width\u{feff}"),
            "zero\\u{200b}width\\u{feff}"
        );
        assert_eq!(sanitize("tag\u{e0041}"), "tag\\u{e0041}");
    }

    #[test]
    fn one_variation_selector_after_a_visible_base_is_kept() {
        assert_eq!(sanitize("\u{2764}\u{fe0f}"), "\u{2764}\u{fe0f}");
        assert_eq!(sanitize("\u{fe0f}x"), "\\u{fe0f}x");
        assert_eq!(sanitize(" \u{fe0f}"), " \\u{fe0f}");
        // A run of selectors after one base smuggles data: only the first is kept.
        assert_eq!(sanitize("a\u{e0100}\u{e0101}"), "a\u{e0100}\\u{e0101}");
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        let text = "caf\u{e9} \u{4e2d}\u{6587} \\x1b literal backslash\n";
        assert_eq!(sanitize(text), text);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(render_output(b"a\xffb", false), "a\u{fffd}b");
    }

    #[test]
    fn output_at_the_cap_is_kept_whole_and_one_byte_more_is_cut() {
        let exact = "x".repeat(MAX_OUTPUT);
        assert_eq!(render_output(exact.as_bytes(), false), exact);
        let over = "x".repeat(MAX_OUTPUT + 1);
        let cut = render_output(over.as_bytes(), false);
        assert_eq!(cut, format!("{exact}{TRUNCATION_MARKER}"));
    }

    #[test]
    fn a_reader_that_stopped_early_marks_the_output() {
        assert_eq!(
            render_output(b"abc", true),
            format!("abc{TRUNCATION_MARKER}")
        );
    }

    #[test]
    fn the_cut_never_splits_a_character() {
        let text = "\u{e9}".repeat(MAX_OUTPUT / 2 + 5);
        let cut = render_output(text.as_bytes(), false);
        assert!(cut.ends_with(TRUNCATION_MARKER));
        assert!(cut.len() <= MAX_OUTPUT + TRUNCATION_MARKER.len());
    }

    #[test]
    fn serialised_results_stay_within_the_result_cap() {
        // Newlines and quotes double in JSON; non-ASCII grows sixfold: the JSON budget binds first.
        for unit in ["\"\n", "\u{e9}", "\u{1f600}", "a"] {
            let raw = unit.repeat(MAX_OUTPUT);
            let output = render_output(raw.as_bytes(), false);
            let text = json::to_pretty_ascii_sorted(&obj([("output", Value::from(output))]));
            assert!(text.len() <= MAX_RESULT_TEXT, "{unit:?}: {}", text.len());
            assert!(json::parse(text.as_bytes()).is_ok());
        }
    }

    #[test]
    fn stderr_is_trimmed_and_sanitised() {
        assert_eq!(
            render_stderr(b"  fatal: bad\x1b[0m \n"),
            "fatal: bad\\x1b[0m"
        );
    }
}
