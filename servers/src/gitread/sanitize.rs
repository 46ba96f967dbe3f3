//! Makes what git prints fit to reach a client: decoded, passed through the suite's sanitiser
//! ([`agentteams_mcp::sanitize`], which decides what is escaped and why), and, for the reference's
//! answers (`--compat reference`), cut to the output cap with one marker. The product's answers
//! are cut into pages by [`super::page`].
//!
//! Git prints repository content (commit messages, author names, file lines) verbatim, so a hostile
//! commit can carry ESC sequences, a bare CR, bidi overrides or invisible characters; the
//! sanitiser turns each into a visible escape (`\x1b`, `\u{202e}`).

pub use agentteams_mcp::sanitize::sanitize;

/// Most bytes of git's stdout a tool result keeps (the reference's `MAX_OUTPUT`).
pub const MAX_OUTPUT: usize = 61440;

/// Appended to `output` when it was cut.
pub const TRUNCATION_MARKER: &str = "\n\u{2026}[truncated]";

/// Largest pretty, ASCII-escaped JSON text a tool result may become (the engine's result cap).
/// `output` is cut so `{"output": ...}` always fits: the text stays valid JSON with one marker.
pub const MAX_RESULT_TEXT: usize = 65536;

/// Bytes of `{\n "output": "` and `"\n}` around the string in the serialised result.
const ENVELOPE: usize = 17;

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
    let text = sanitize(&String::from_utf8_lossy(raw)).into_owned();
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
    sanitize(String::from_utf8_lossy(raw).trim()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json::{self, obj, Value};

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
