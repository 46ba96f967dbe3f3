//! The one place that decides which characters of text another party chose may reach a terminal
//! or a model raw. Every server's results and error texts, and every line the command line prints
//! from a server, a repository or an index, go through [`sanitize`] (or [`sanitize_value`]).
//!
//! **What it is for.** Text written by someone else (a commit message, a README an index was
//! built from, a hostile MCP server's tool names) can carry characters that drive a terminal (ESC
//! sequences that repaint or hide lines, OSC 52 that writes the clipboard, a bare CR that
//! overwrites a line), reorder what a reader sees (bidi overrides, "Trojan Source") or hide text
//! from a human but not from a model (zero-width and other default-ignorable characters, tag
//! characters). Each such character is replaced by a visible escape, never dropped, so the reader
//! sees that something was there:
//!
//! | Class | Code points | Why | Escape | Unit test |
//! |---|---|---|---|---|
//! | C0 controls but `\n` and `\t`; CR unless it starts `\r\n` | U+0000–U+001F | ESC sequences, BEL, backspace and bare CR drive the terminal | `\xNN` | `c0_controls_but_newline_and_tab_are_escaped` |
//! | DEL and C1 controls | U+007F–U+009F | U+009B is CSI and U+009D is OSC on terminals that read C1 | `\xNN` | `del_and_c1_controls_are_escaped` |
//! | bidi controls | U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069 | reorder the characters a reader sees (Trojan Source) | `\u{XXXX}` | `bidi_controls_are_escaped` |
//! | every format character (general category Cf) | U+00AD, U+0600–U+0605, U+200B–U+200F, U+2060–U+206F, U+FEFF, U+FFF9–U+FFFB, U+13430–U+1343F, U+1BCA0–U+1BCA3, U+1D173–U+1D17A, ... (`src/sanitize/table.rs`) | invisible, or change how neighbours render | `\u{XXXX}` | `every_format_character_is_escaped` |
//! | line and paragraph separators | U+2028, U+2029 | line breaks a terminal does not show | `\u{XXXX}` | `line_and_paragraph_separators_are_escaped` |
//! | other default-ignorable characters (fillers) | U+034F, U+115F, U+1160, U+17B4, U+17B5, U+3164, U+FFA0, U+FFF0–U+FFF8, U+E0080–U+E0FFF | render as nothing, so they hide text or make two names look alike | `\u{XXXX}` | `fillers_and_default_ignorables_are_escaped` |
//! | tag characters | U+E0000–U+E007F | an invisible copy of ASCII a model reads (ASCII smuggling) | `\u{XXXXX}` | `tag_characters_are_escaped` |
//! | variation selectors, unless one directly follows a visible character | U+180B–U+180D, U+180F, U+FE00–U+FE0F, U+E0100–U+E01EF | one selects a glyph (emoji presentation); a run of them carries hidden data | `\u{XXXX}` | `one_variation_selector_after_a_visible_base_is_kept` |
//!
//! SECURITY.md ("Output sanitisation") carries the same table with the end-to-end tests of each
//! caller. The Cf and default-ignorable ranges are generated from the Unicode Character Database
//! ([`UNICODE_VERSION`], with the whole Egyptian format-control block U+13430–U+1343F that later
//! versions fill) by `src/sanitize/gen_table.py`; together they are every `Default_Ignorable_Code_Point`
//! plus the Cf characters that property leaves out (U+FFF9–U+FFFB, U+13430–U+1343F and the
//! prepended concatenation marks such as U+0600).
//!
//! Decided deliberately: U+200D ZERO WIDTH JOINER and U+200C ZERO WIDTH NON-JOINER are Cf and
//! always escaped, also inside emoji ZWJ sequences (a family emoji shows as its members joined by
//! `\u{200d}`) and in Persian or Indic text, where they are spelling. A joiner can hide nothing
//! visible on its own, but keeping it in some contexts would make the rule depend on guessing
//! emoji; one rule everywhere is easier to trust. For the same reason tag sequences of
//! subdivision flags (U+1F3F4 followed by tags) are escaped.
//!
//! **What it is not.** Not a reversible encoding: backslashes are left alone (diffs are full of
//! them), so `\x1b` in the output may have been a real ESC or those four characters. Not an
//! escaping for JSON or a shell. Not a defence against confusable letters (Cyrillic `а` for Latin
//! `a`) or against prompt injection in visible text: results are data, and hosts should present
//! them as untrusted. Ordinary whitespace (U+00A0, U+2000–U+200A, U+3000) is shown raw.

mod table;

use crate::json::Value;
use std::borrow::Cow;
use table::Kind;
pub use table::UNICODE_VERSION;

/// The table's kind for `code`, or `None` for a character shown raw.
fn lookup(code: u32) -> Option<Kind> {
    let ranges = &table::RANGES;
    let i = ranges.partition_point(|&(_, hi, _)| hi < code);
    ranges
        .get(i)
        .filter(|&&(lo, _, _)| lo <= code)
        .map(|&(_, _, kind)| kind)
}

/// `text` with every character of the classes in the module table replaced by a visible escape.
///
/// Kept: `\n`, `\t`, a `\r` directly before `\n`, one variation selector directly after a
/// visible character, and everything not in the table. Text with nothing to escape is borrowed,
/// not copied; otherwise it is copied once.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    escape(text, false, usize::MAX).0
}

/// A path as one line of a diagnostic: its display form through [`sanitize_line`] (a newline or a
/// control character in a directory name escaped too).
pub fn path_line(path: &std::path::Path) -> String {
    sanitize_line(&path.display().to_string()).into_owned()
}

/// [`sanitize`] for text that must stay on one line (a diagnostic quoting a path): `\n`, `\t`
/// and every `\r` are escaped too (`\x0a`, `\x09`, `\x0d`).
pub fn sanitize_line(text: &str) -> Cow<'_, str> {
    escape(text, true, usize::MAX).0
}

/// [`sanitize_line`] of at most `max` bytes, for a field of bounded room (a log line): when the
/// escaped text is longer, it ends before the first character or escape that would not fit
/// (never inside an escape, so the reader sees no half escape), and the flag says it was cut.
/// Only the part kept is read.
pub fn sanitize_line_within(text: &str, max: usize) -> (Cow<'_, str>, bool) {
    escape(text, true, max)
}

/// The escaped text of at most `max` bytes, and whether it had to stop short of the end.
fn escape(text: &str, one_line: bool, max: usize) -> (Cow<'_, str>, bool) {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    // Bytes of `text` already in `out` (or known clean when `out` is None).
    let mut copied = 0;
    // Whether the previous character was a visible base a variation selector may modify.
    let mut after_visible_base = false;
    for (i, c) in text.char_indices() {
        let code = c as u32;
        let (escaped, selector) = match code {
            0x20..=0x7e => (false, false),
            0x0a | 0x09 => (one_line, false),
            0x0d => (one_line || bytes.get(i + 1) != Some(&b'\n'), false),
            0x00..=0x1f | 0x7f..=0x9f => (true, false),
            _ => match lookup(code) {
                None => (false, false),
                Some(Kind::Escape) => (true, false),
                Some(Kind::Selector) => (!after_visible_base, true),
            },
        };
        if escaped {
            let mut escaped_text = out
                .take()
                .unwrap_or_else(|| String::with_capacity(text.len().min(max) + 16));
            escaped_text.push_str(&text[copied..i]);
            let kept = escaped_text.len();
            push_escape(&mut escaped_text, code);
            if escaped_text.len() > max {
                escaped_text.truncate(kept);
                return (Cow::Owned(escaped_text), true);
            }
            out = Some(escaped_text);
            copied = i + c.len_utf8();
        } else if out.as_ref().map_or(0, String::len) + (i - copied) + c.len_utf8() > max {
            return (finish(text, out, copied, i), true);
        }
        after_visible_base = !escaped && !selector && !c.is_whitespace();
    }
    (finish(text, out, copied, text.len()), false)
}

/// The escaped text up to byte `end` of `text`: borrowed when nothing was escaped.
fn finish(text: &str, out: Option<String>, copied: usize, end: usize) -> Cow<'_, str> {
    match out {
        None => Cow::Borrowed(&text[..end]),
        Some(mut out) => {
            out.push_str(&text[copied..end]);
            Cow::Owned(out)
        }
    }
}

/// Whether [`sanitize`] would leave `text` unchanged.
pub fn is_clean(text: &str) -> bool {
    matches!(sanitize(text), Cow::Borrowed(_))
}

/// `\xNN` for the controls (C0, DEL, C1), `\u{XXXX}` (at least four hex digits) for the rest.
fn push_escape(out: &mut String, code: u32) {
    use std::fmt::Write;
    let _ = if code <= 0x9f {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:04x}}}")
    };
}

/// Sanitises every string of `value` in place: string values and object keys, at any depth
/// (walked with an explicit stack, so a deep value cannot overflow the call stack).
pub fn sanitize_value(value: &mut Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                if let Cow::Owned(clean) = sanitize(s) {
                    *s = clean.into();
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            Value::Object(m) => {
                for (k, v) in m.entries_mut() {
                    if let Cow::Owned(clean) = sanitize(k) {
                        *k = clean.into();
                    }
                    stack.push(v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// Sanitises `s` in place; allocates only when something is escaped.
pub fn sanitize_string(s: &mut String) {
    if let Cow::Owned(clean) = sanitize(s) {
        *s = clean;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, obj};

    fn s(text: &str) -> String {
        sanitize(text).into_owned()
    }

    /// Each code point of `codes`, alone and between letters, comes back as `\u{...}`.
    fn assert_escaped(codes: impl IntoIterator<Item = u32>) {
        for code in codes {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let want = format!("a\\u{{{code:04x}}}b");
            assert_eq!(s(&format!("a{c}b")), want, "U+{code:04X}");
            assert_eq!(
                s(&c.to_string()),
                format!("\\u{{{code:04x}}}"),
                "U+{code:04X}"
            );
        }
    }

    #[test]
    fn c0_controls_but_newline_and_tab_are_escaped() {
        for code in (0u32..0x20).filter(|c| ![0x09, 0x0a, 0x0d].contains(c)) {
            let c = char::from_u32(code).unwrap();
            assert_eq!(s(&format!("a{c}b")), format!("a\\x{code:02x}b"));
        }
        assert_eq!(s("a\x1b[31mred\x07"), "a\\x1b[31mred\\x07");
        assert_eq!(s("\x1b]52;c;ZXZpbA==\x07"), "\\x1b]52;c;ZXZpbA==\\x07");
        assert_eq!(s("over\rwrite"), "over\\x0dwrite");
        assert_eq!(s("\x1b[2K\rfake"), "\\x1b[2K\\x0dfake");
        assert_eq!(s("end\r"), "end\\x0d");
        assert_eq!(s("a\tb\r\nc\n"), "a\tb\r\nc\n");
        assert_eq!(s("\r\r\n"), "\\x0d\r\n");
    }

    #[test]
    fn del_and_c1_controls_are_escaped() {
        assert_eq!(s("del\x7f"), "del\\x7f");
        for code in 0x80u32..=0x9f {
            let c = char::from_u32(code).unwrap();
            assert_eq!(s(&format!("a{c}b")), format!("a\\x{code:02x}b"));
        }
    }

    #[test]
    fn bidi_controls_are_escaped() {
        assert_escaped([0x061c, 0x200e, 0x200f]);
        assert_escaped(0x202a..=0x202e);
        assert_escaped(0x2066..=0x2069);
        assert_eq!(s("admin\u{202e}txt.exe"), "admin\\u{202e}txt.exe");
    }

    #[test]
    fn every_format_character_is_escaped() {
        // The issue's list, and one of each Cf run the table holds.
        assert_escaped([
            0x00ad, 0x0600, 0x0605, 0x06dd, 0x070f, 0x0890, 0x08e2, 0x180e, 0x200b, 0x200c, 0x200d,
            0x2060, 0x2064, 0xfeff, 0xfff9, 0xfffa, 0xfffb, 0x110bd, 0x110cd, 0x13430, 0x13438,
            0x1343f, 0x1bca0, 0x1bca3, 0x1d173, 0x1d17a,
        ]);
        assert_escaped(0x206a..=0x206f);
    }

    #[test]
    fn the_table_is_sorted_disjoint_and_above_the_controls() {
        for &(lo, hi, _) in &table::RANGES {
            assert!(lo <= hi && lo >= 0xa0);
        }
        for pair in table::RANGES.windows(2) {
            assert!(pair[0].1 < pair[1].0, "sorted and disjoint: {pair:?}");
        }
        assert_eq!(UNICODE_VERSION, "14.0.0");
    }

    #[test]
    fn line_and_paragraph_separators_are_escaped() {
        assert_escaped([0x2028, 0x2029]);
    }

    #[test]
    fn fillers_and_default_ignorables_are_escaped() {
        assert_escaped([
            0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x2065, 0x3164, 0xffa0, 0xfff0, 0xfff8,
            0xe0080, 0xe00ff, 0xe01f0, 0xe0fff,
        ]);
    }

    #[test]
    fn tag_characters_are_escaped() {
        assert_escaped(0xe0000..=0xe007f);
        assert_eq!(s("tag\u{e0041}"), "tag\\u{e0041}");
        // A subdivision flag is a black flag and tags: the tags are escaped.
        assert_eq!(
            s("\u{1f3f4}\u{e0067}\u{e007f}"),
            "\u{1f3f4}\\u{e0067}\\u{e007f}"
        );
    }

    #[test]
    fn one_variation_selector_after_a_visible_base_is_kept() {
        assert_eq!(s("\u{2764}\u{fe0f}"), "\u{2764}\u{fe0f}");
        assert_eq!(s("\u{1820}\u{180b}"), "\u{1820}\u{180b}");
        assert_eq!(s("\u{fe0f}x"), "\\u{fe0f}x");
        assert_eq!(s(" \u{fe0f}"), " \\u{fe0f}");
        assert_eq!(s("\n\u{180f}"), "\n\\u{180f}");
        // A run of selectors after one base smuggles data: only the first is kept.
        assert_eq!(s("a\u{e0100}\u{e0101}"), "a\u{e0100}\\u{e0101}");
        // After an escaped character there is no visible base.
        assert_eq!(s("\u{200b}\u{fe0f}"), "\\u{200b}\\u{fe0f}");
    }

    #[test]
    fn zero_width_joiners_are_escaped_inside_emoji_too() {
        assert_eq!(
            s("\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}"),
            "\u{1f468}\\u{200d}\u{1f469}\\u{200d}\u{1f467}"
        );
    }

    #[test]
    fn one_line_text_escapes_line_breaks_and_tabs_too() {
        assert_eq!(
            sanitize_line("a\nb\tc\r\nd\u{202e}"),
            "a\\x0ab\\x09c\\x0d\\x0ad\\u{202e}"
        );
        assert!(matches!(sanitize_line("/plain/path"), Cow::Borrowed(_)));
        assert_eq!(sanitize("a\nb\tc\r\n"), "a\nb\tc\r\n");
    }

    #[test]
    fn text_within_a_bound_is_cut_before_a_character_or_escape_that_does_not_fit() {
        let text = "ab\u{202e}c\u{9b}\u{e0041}\u{e9}";
        let whole = sanitize_line(text);
        assert_eq!(whole, "ab\\u{202e}c\\x9b\\u{e0041}\u{e9}");
        // Every bound from nothing to the whole: the longest prefix of whole units that fits.
        let units = ["a", "b", "\\u{202e}", "c", "\\x9b", "\\u{e0041}", "\u{e9}"];
        for max in 0..=whole.len() + 1 {
            let (kept, cut) = sanitize_line_within(text, max);
            let mut want = String::new();
            for unit in units {
                if want.len() + unit.len() > max {
                    break;
                }
                want.push_str(unit);
            }
            assert_eq!(kept, want, "max {max}");
            assert_eq!(cut, want.len() < whole.len(), "max {max}");
            assert!(kept.len() <= max);
        }
        assert!(matches!(
            sanitize_line_within("plain text", 5),
            (Cow::Borrowed("plain"), true)
        ));
        assert!(matches!(
            sanitize_line_within("plain", 5),
            (Cow::Borrowed("plain"), false)
        ));
        // Only the part kept is read: a huge text costs what the bound allows.
        let huge = "\u{200b}".repeat(1 << 20);
        let (kept, cut) = sanitize_line_within(&huge, 80);
        assert!(cut && kept.len() == 80 && kept == "\\u{200b}".repeat(10));
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for text in [
            "",
            "plain ascii\n\twith tabs\r\n",
            "caf\u{e9} \u{4e2d}\u{6587} \u{a0}\u{3000} \u{1f600} \\x1b literal backslash",
        ] {
            assert!(
                matches!(sanitize(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
            assert!(is_clean(text));
        }
        assert!(!is_clean("a\u{200b}"));
    }

    #[test]
    fn sanitising_twice_changes_nothing_more() {
        let hostile = "x\x1b[8m\u{202e}\u{fe0f}a\u{fe0f}\u{fe0f}\r\u{e0041}\u{85}";
        let once = s(hostile);
        assert_eq!(s(&once), once);
        assert!(is_clean(&once));
    }

    #[test]
    fn every_code_point_is_escaped_or_kept_and_escapes_are_final() {
        let mut text = String::new();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            text.clear();
            text.push('a');
            text.push(c);
            let out = sanitize(&text);
            // std's Cc test agrees with ours: no control survives but newline and tab.
            assert!(
                !c.is_control() || matches!(c, '\n' | '\t') || !out.contains(c),
                "U+{:04X}",
                c as u32
            );
            assert!(is_clean(&out), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn values_are_sanitised_at_every_depth_keys_included() {
        let mut v = obj([
            ("name\u{202e}", Value::from("exec\x1b[8m")),
            (
                "list",
                Value::from(vec![Value::from(1u64), Value::from("\u{200b}")]),
            ),
        ]);
        sanitize_value(&mut v);
        assert_eq!(
            json::to_string(&v),
            r#"{"name\\u{202e}":"exec\\x1b[8m","list":[1,"\\u{200b}"]}"#
        );
        let mut deep = Value::from("\x07");
        for _ in 0..100_000 {
            deep = Value::from(vec![deep]);
        }
        sanitize_value(&mut deep);
    }
}
