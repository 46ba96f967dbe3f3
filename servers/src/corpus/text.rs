//! Text helpers the index formats share between the builder and recall, so both sides cut,
//! split and order text alike: cutting at a code point, Python's whitespace, the spaced marks
//! stored passages use, the name a signature defines, and the byte order of terms.
//!
//! What this module is not for: tokenizing (`tokenize`) or ranking (`recall::relevance`).

/// The first `max` code points of `s`.
pub fn cut_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Python's `str.isspace` set: Unicode `White_Space` plus the four separators U+001C..U+001F.
pub fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The words of `s` (split at [`is_python_whitespace`]) joined by single spaces.
pub fn collapse_whitespace(s: &str) -> String {
    s.split(is_python_whitespace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first eight bytes of `term` as a big-endian number, zero-padded: ordering these numbers
/// agrees with ordering the terms' bytes wherever the numbers differ. The index builder writes
/// terms in the order recall sorts them in.
pub fn sort_prefix(term: &str) -> u64 {
    prefix_of(term.as_bytes())
}

/// [`sort_prefix`] of bytes: a shorter term's bytes are shifted into place one at a time (a
/// copy of a variable length would call `memcpy`, in the sort's hottest line).
#[inline]
pub fn prefix_of(bytes: &[u8]) -> u64 {
    match bytes.first_chunk::<8>() {
        Some(first) => u64::from_be_bytes(*first),
        None => bytes
            .iter()
            .enumerate()
            .fold(0, |prefix, (i, &b)| prefix | u64::from(b) << (56 - 8 * i)),
    }
}

/// The name a passage's signature defines: the last identifier before its parameters, generics,
/// body or value (`def load(path)` → `load`, `func (r *T) Name(x)` → `Name`, `pub struct
/// Row<T>` → `Row`, `const f = (` → `f`, `function build_all` → `build_all`).
pub fn definition_name(passage: &str) -> Option<&str> {
    let signature = split_spaced(passage, '\u{2014}').map_or(passage, |(head, _)| head);
    let mut head = signature;
    // A Go method's receiver comes before its name.
    if let Some(rest) = head.strip_prefix("func (") {
        head = rest.split_once(')').map_or(rest, |(_, after)| after);
    }
    let end = head
        .find(['(', '<', '{', '=', ':', '['])
        .unwrap_or(head.len());
    let head = head[..end].trim_end();
    // Past the last character that is not part of an ASCII identifier (which may take several
    // bytes: the name starts after all of them).
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &head[start..];
    (!name.is_empty() && !name.as_bytes()[0].is_ascii_digit()).then_some(name)
}

/// `text` around the first `mark` with a space on each side: what `text.split_once(" — ")`
/// gives for `'—'`, found by a byte search for the mark rather than by a substring searcher set
/// up on every call, which cost more than the search itself on these short passages (run for
/// every stored passage of every file re-scored, and every definition of a hit's file; inline
/// for those callers in other modules).
#[inline]
pub fn split_spaced(text: &str, mark: char) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    text.match_indices(mark).find_map(|(at, found)| {
        let end = at + found.len();
        (at > 0 && bytes[at - 1] == b' ' && bytes.get(end) == Some(&b' '))
            .then(|| (&text[..at - 1], &text[end + 1..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_names_come_from_signatures() {
        let cases = [
            ("def load(path) \u{2014} Load it.", Some("load")),
            ("async def fetch(url)", Some("fetch")),
            ("class Session(SessionRedirectMixin)", Some("Session")),
            ("func (c *Command) Execute() error", Some("Execute")),
            ("pub struct Row<T>", Some("Row")),
            ("const handler = (req) =>", Some("handler")),
            ("function build_all", Some("build_all")),
            ("", None),
            // Non-ASCII text (a hostile or foreign index's passages) never splits a character.
            ("def \u{f1}ame(x)", Some("ame")),
            ("def caf\u{e9}(x)", None),
            ("\u{2014}\u{2014}", None),
            ("func (\u{e9}", None),
        ];
        for (passage, name) in cases {
            assert_eq!(definition_name(passage), name, "{passage}");
        }
    }

    #[test]
    fn split_spaced_is_split_once_on_the_spaced_mark() {
        let pieces = [
            " ",
            "|",
            "\u{2014}",
            "a",
            "\u{e9}",
            " | ",
            " \u{2014} ",
            "||",
        ];
        // Every string of up to four pieces.
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
        }
        texts.sort();
        texts.dedup();
        for text in &texts {
            assert_eq!(split_spaced(text, '|'), text.split_once(" | "), "{text:?}");
            assert_eq!(
                split_spaced(text, '\u{2014}'),
                text.split_once(" \u{2014} "),
                "{text:?}"
            );
        }
    }
}
