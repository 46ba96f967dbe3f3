//! Our two sidecar files beside the reference's indexes, as both the builder and recall must
//! agree on them: their file names, and the definition tokens the code outline stores for each
//! definition (its second passage) so a query never tokenizes definitions.
//!
//! What the sidecars hold and how recall uses them: `recall::sections` (the memory sections) and
//! `recall::outline` (the code outline); how they are made: `index::sections`, `index::code`.

use crate::corpus::tokenize::Tokenizer;

/// The memory-sections sidecar's file name, beside `memory-index.json` in a team dir's
/// `references/`.
pub const SECTIONS_FILE: &str = "memory-sections.json";

/// The code outline's file name, in a team dir's `references/`.
pub const OUTLINE_FILE: &str = "code-outline.json";

/// Separates a definition's name tokens from its passage's in [`definition_tokens`].
pub const NAME_SEPARATOR: &str = " | ";

/// [`NAME_SEPARATOR`]'s mark, between its two spaces: how the reader finds it
/// (`text::split_spaced`).
pub const NAME_MARK: char = '|';

/// Tokens of a definition's passage kept beside its name's (the first ones: its signature's,
/// then its doc comment's): what choosing a hit's definition reads per definition of the file.
pub const MAX_PASSAGE_TOKENS: usize = 24;

/// A definition's tokens (the code tokenizer's, each once): those of its qualified name, then
/// [`NAME_SEPARATOR`], then at most [`MAX_PASSAGE_TOKENS`] other tokens of its passage,
/// space-separated (`session.request session request | method url sends one`: the code
/// tokenizer drops `def` and `self`).
pub fn definition_tokens(name: &str, passage: &str) -> String {
    let mut out = String::with_capacity(name.len() + passage.len());
    let mut kept = KeptTokens::default();
    Tokenizer::Code.each_token(name, &mut |t| {
        if kept.is_new(&out, t) {
            if !out.is_empty() {
                out.push(' ');
            }
            kept.push(&mut out, t);
        }
    });
    out.push_str(NAME_SEPARATOR);
    let names_end = out.len();
    let mut passage_kept = 0;
    Tokenizer::Code.each_token(passage, &mut |t| {
        if passage_kept < MAX_PASSAGE_TOKENS && kept.is_new(&out, t) {
            if out.len() > names_end {
                out.push(' ');
            }
            kept.push(&mut out, t);
            passage_kept += 1;
        }
    });
    out
}

/// The tokens [`definition_tokens`] has written so far, each as a short key (its length and first
/// bytes) and its place in the output: a new token is compared with the keys, and its text only
/// with those whose key matches. Every token of a file's every definition passes here at build
/// time, and splitting the output at each one to compare texts was most of the cost.
#[derive(Default)]
struct KeptTokens {
    /// `(key, start, end)` of each token in the output.
    tokens: Vec<(u64, usize, usize)>,
}

impl KeptTokens {
    fn key(token: &str) -> u64 {
        let bytes = token.as_bytes();
        let mut first = [0u8; 8];
        let n = bytes.len().min(7);
        first[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(first) | (bytes.len() as u64) << 56
    }

    /// Whether `token` is not yet in `out` (and so should be written).
    fn is_new(&self, out: &str, token: &str) -> bool {
        let key = Self::key(token);
        !self
            .tokens
            .iter()
            .any(|&(k, start, end)| k == key && &out[start..end] == token)
    }

    /// Writes `token` at the end of `out` and remembers it.
    fn push(&mut self, out: &mut String, token: &str) {
        let start = out.len();
        out.push_str(token);
        self.tokens.push((Self::key(token), start, out.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first writing of `definition_tokens`: each token compared with every one written, by
    /// splitting the output.
    fn definition_tokens_by_splitting(name: &str, passage: &str) -> String {
        let mut out = String::new();
        let holds = |out: &str, token: &str| out.split([' ', '|']).any(|t| t == token);
        Tokenizer::Code.each_token(name, &mut |t| {
            if !holds(&out, t) {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(t);
            }
        });
        out.push_str(NAME_SEPARATOR);
        let names_end = out.len();
        let mut kept = 0;
        Tokenizer::Code.each_token(passage, &mut |t| {
            if kept < MAX_PASSAGE_TOKENS && !holds(&out, t) {
                if out.len() > names_end {
                    out.push(' ');
                }
                out.push_str(t);
                kept += 1;
            }
        });
        out
    }

    #[test]
    fn the_name_separator_is_its_mark_between_two_spaces() {
        // The reader finds the separator by its mark with a space on each side.
        assert_eq!(NAME_SEPARATOR, format!(" {NAME_MARK} "));
    }

    #[test]
    fn definition_tokens_keep_each_token_once_names_first() {
        assert_eq!(
            definition_tokens(
                "Session.request",
                "def request(self, method, url):\n    \"\"\"Sends one request.\"\"\""
            ),
            "session.request session request | method url sends one"
        );
        // Tokens sharing their first seven bytes and length are still told apart by their text.
        assert_eq!(
            definition_tokens("abcdefgx", "abcdefgy abcdefgx abcdefgy"),
            "abcdefgx | abcdefgy"
        );
        // At most MAX_PASSAGE_TOKENS new tokens of the passage.
        let passage: Vec<String> = (0..100).map(|i| format!("word{i}")).collect();
        let tokens = definition_tokens("f", &passage.join(" "));
        let (_, kept) = tokens.split_once(NAME_SEPARATOR).unwrap();
        assert_eq!(kept.split(' ').count(), MAX_PASSAGE_TOKENS);
    }

    #[test]
    fn definition_tokens_match_the_splitting_version_on_random_text() {
        let mut state = 0x005e_ed0f_def1_u64;
        // xorshift64: a fixed sequence, so a failure reproduces.
        let mut below = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let words = [
            "get",
            "getValue",
            "get_value",
            "value",
            "Values",
            "x",
            "HTTPServer",
            "server",
            "a1",
            "self",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "é",
            "parse_json",
            "JSON",
            "0x10",
            "::",
            ".",
            "(",
            "\n",
            "\"\"\"",
        ];
        for _ in 0..2000 {
            let mut text = |len: u64| {
                let count = below(len);
                let joiner = if below(2) == 0 { " " } else { "" };
                (0..count)
                    .map(|_| words[below(words.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(joiner)
            };
            let (name, passage) = (text(6), text(80));
            assert_eq!(
                definition_tokens(&name, &passage),
                definition_tokens_by_splitting(&name, &passage),
                "{name:?} / {passage:?}"
            );
        }
    }
}
