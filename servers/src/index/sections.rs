//! Splits a Markdown document into sections at its ATX headings (`#` to `######`), so a long file
//! is searchable by heading: the units of the memory-sections sidecar
//! (`references/memory-sections.json`, see [`crate::recall::sections`]).
//!
//! Only what CommonMark calls ATX headings start a section, and never inside a fenced code block:
//! a rustdoc example's hidden `# let x = 1;` line, or a shell comment in a ```` ```sh ```` block,
//! is text of the section it sits in. Setext headings (a line underlined with `===`) are not
//! recognised: they are rare in the notes and docs a memory index holds, and telling one from a
//! table rule or a front-matter fence needs more context than a line.
//!
//! This module does not tokenize or build anything; `memory::build` makes index documents of
//! what it returns.

/// Sections kept per document; the rest of a longer document stays in its last section, so no
/// text is dropped (a generated changelog with thousands of headings costs at most this many
/// documents).
pub const MAX_SECTIONS: usize = 256;
/// Code points of a heading kept in a section's title.
pub const HEADING_CHARS: usize = 120;
/// Separator between the levels of a section's heading path.
pub const HEADING_SEPARATOR: &str = " › ";

/// One section: its heading path and its lines (1-based, inclusive, counted in `\n`s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    /// The enclosing headings, outermost first, ending with this section's own; empty for the
    /// text before the first heading.
    pub headings: Vec<String>,
    pub first_line: usize,
    pub last_line: usize,
    /// The section's text, its heading line included.
    pub text: &'a str,
}

impl Section<'_> {
    /// The heading path joined with [`HEADING_SEPARATOR`] (`Install › From source`); `None` for
    /// the text before the first heading.
    pub fn heading_path(&self) -> Option<String> {
        (!self.headings.is_empty()).then(|| self.headings.join(HEADING_SEPARATOR))
    }
}

/// The sections of `text`, in order, at most [`MAX_SECTIONS`]. Sections holding only blank
/// lines are left out (their line numbers are not reused).
pub fn split(text: &str) -> Vec<Section<'_>> {
    let mut sections: Vec<Section<'_>> = Vec::new();
    // (level, heading) of the headings enclosing the current line.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0usize;
    let mut first_line = 1usize;
    let mut line_no = 0usize;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        line_no += 1;
        let at = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(marker) = fence_marker(content) {
            fence = match fence {
                None => Some(marker),
                Some((ch, len)) if marker.0 == ch && marker.1 >= len && is_closing(content) => None,
                still_open => still_open,
            };
            continue;
        }
        if fence.is_some() || sections.len() + 1 >= MAX_SECTIONS {
            continue;
        }
        let Some((level, heading)) = atx_heading(content) else {
            continue;
        };
        push(
            &mut sections,
            &open,
            &text[start..at],
            first_line,
            line_no - 1,
        );
        while open.last().is_some_and(|(l, _)| *l >= level) {
            open.pop();
        }
        open.push((level, heading));
        start = at;
        first_line = line_no;
    }
    push(
        &mut sections,
        &open,
        &text[start..],
        first_line,
        line_no.max(first_line),
    );
    sections
}

fn push<'a>(
    sections: &mut Vec<Section<'a>>,
    open: &[(usize, String)],
    text: &'a str,
    first_line: usize,
    last_line: usize,
) {
    if text.trim().is_empty() {
        return;
    }
    sections.push(Section {
        headings: open.iter().map(|(_, h)| h.clone()).collect(),
        first_line,
        last_line,
        text,
    });
}

/// The fence character and length when `line` opens or closes a fenced code block (up to three
/// spaces, then at least three backticks or tildes).
fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let rest = strip_indent(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    // A backtick fence's info string may not contain a backtick (CommonMark 4.5).
    let info = &rest[len..];
    (len >= 3 && !(ch == b'`' && info.contains('`'))).then_some((ch, len))
}

/// A closing fence has nothing after its marker but spaces.
fn is_closing(line: &str) -> bool {
    strip_indent(line).is_some_and(|rest| {
        rest.trim_start_matches(['`', '~'])
            .trim_matches([' ', '\t'])
            .is_empty()
    })
}

/// The line without up to three leading spaces; `None` when it is indented four or more (an
/// indented code block).
fn strip_indent(line: &str) -> Option<&str> {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    (spaces <= 3).then(|| &line[spaces..])
}

/// `(level, text)` of an ATX heading line: up to three spaces, one to six `#`, then a space or
/// tab (or nothing); the closing `#` sequence and surrounding blanks are dropped. A heading with
/// no text is not one here: it would give a section no name.
fn atx_heading(line: &str) -> Option<(usize, String)> {
    let rest = strip_indent(line)?;
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = after.trim_matches([' ', '\t']);
    // A closing sequence counts only after a blank (`# C#` keeps its `#`).
    let without = text.trim_end_matches('#');
    if without.len() != text.len() && (without.is_empty() || without.ends_with([' ', '\t'])) {
        text = without.trim_end_matches([' ', '\t']);
    }
    if text.is_empty() {
        return None;
    }
    let cut = crate::corpus::text::cut_chars(text, HEADING_CHARS);
    Some((level, cut.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(text: &str) -> Vec<(Option<String>, usize, usize)> {
        split(text)
            .iter()
            .map(|s| (s.heading_path(), s.first_line, s.last_line))
            .collect()
    }

    #[test]
    fn headings_nest_and_lines_are_counted_from_one() {
        let text = "intro line\n\n# Guide\ntext\n## Install\nsteps\n### From source\nmake\n## Use\nrun it\n";
        assert_eq!(
            outline(text),
            vec![
                (None, 1, 2),
                (Some("Guide".into()), 3, 4),
                (Some("Guide › Install".into()), 5, 6),
                (Some("Guide › Install › From source".into()), 7, 8),
                (Some("Guide › Use".into()), 9, 10),
            ]
        );
        let sections = split(text);
        assert_eq!(sections[2].text, "## Install\nsteps\n");
        // Every byte is in exactly one section (blank-only ones aside).
        let joined: String = sections.iter().map(|s| s.text).collect();
        assert_eq!(joined, text);
    }

    #[test]
    fn hash_lines_inside_fences_are_text_not_headings() {
        let text = "# Doc\n```rust\n# let hidden = 1;\n# fn main() {}\n```\n~~~~\n# still code\n~~~\n# not closed by a shorter fence\n~~~~\n## Real\nx\n";
        assert_eq!(
            outline(text),
            vec![
                (Some("Doc".into()), 1, 10),
                (Some("Doc › Real".into()), 11, 12)
            ]
        );
    }

    #[test]
    fn what_is_and_is_not_an_atx_heading() {
        for (line, expected) in [
            ("# Title", Some((1, "Title"))),
            ("   ### Three spaces", Some((3, "Three spaces"))),
            ("###### Six", Some((6, "Six"))),
            ("####### Seven", None),
            ("#NoSpace", None),
            ("    # indented code", None),
            ("# Closed ##", Some((1, "Closed"))),
            ("# C#", Some((1, "C#"))),
            ("#\tTab", Some((1, "Tab"))),
            ("#", None),
            ("# ###", None),
        ] {
            assert_eq!(
                atx_heading(line),
                expected.map(|(l, t)| (l, t.to_owned())),
                "{line:?}"
            );
        }
    }

    #[test]
    fn a_document_with_thousands_of_headings_keeps_every_line_in_at_most_the_cap() {
        let text: String = (0..5000)
            .map(|i| format!("## v{i}\nchange {i}\n"))
            .collect();
        let sections = split(&text);
        assert_eq!(sections.len(), MAX_SECTIONS);
        let last = sections.last().unwrap();
        assert_eq!(last.last_line, 10_000);
        assert_eq!(
            sections.iter().map(|s| s.text.len()).sum::<usize>(),
            text.len()
        );
    }

    #[test]
    fn blank_sections_are_dropped_and_odd_text_never_panics() {
        assert_eq!(outline(""), vec![]);
        assert_eq!(outline("\n\n"), vec![]);
        assert_eq!(
            outline("# A\n# B\nb"),
            vec![(Some("A".into()), 1, 1), (Some("B".into()), 2, 3)]
        );
        let long = format!("# {}\n", "é".repeat(500));
        let heading = split(&long)[0].heading_path().unwrap();
        assert_eq!(heading.chars().count(), HEADING_CHARS);
        for text in [
            "\r\n# x\r\n",
            "```",
            "```\n# x",
            "~~~`\n# y\n",
            "\u{2028}# z",
            "# \u{0}",
        ] {
            let _ = split(text);
        }
    }
}
