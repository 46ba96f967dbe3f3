//! Word utilities of the query side, shared by the ranker ([`super::relevance`]), the thesaurus
//! ([`super::thesaurus`]) and the code outline ([`super::outline`]): the light stemmer, the
//! abbreviations of a word, whether a word is an identifier, and the FNV-1a hash that names a
//! token. A leaf: it imports none of them.
//!
//! What this module is not for: tokenizing stored text (`corpus::tokenize`) or scoring.

use std::hash::Hasher;

/// Shortest abbreviation looked up, and fewest letters it must leave off the word: `doc` for
/// `document` (5 left), not `do` or `documen`.
pub const MIN_ABBREVIATION: usize = 3;

/// Whether a word of the question, as written, is an identifier rather than English: it has a
/// capital letter (`Find`, `InitDefaultHelpCmd`, `HTTPAdapter`) or an underscore
/// (`raise_for_status`), and at least three characters.
pub fn looks_like_identifier(word: &str) -> bool {
    word.len() >= 3 && word.bytes().any(|b| b.is_ascii_uppercase() || b == b'_')
}

/// The abbreviations looked up for a plain word: its prefixes of at least [`MIN_ABBREVIATION`]
/// letters that leave at least that many off (`documentation` → `doc`, `docu`, ...,
/// `documentat`; `environment` → `env`, ...; a word under six letters has none).
pub fn abbreviations(word: &str) -> impl Iterator<Item = &str> {
    let ends = if word.is_ascii() {
        MIN_ABBREVIATION..word.len().saturating_sub(MIN_ABBREVIATION - 1)
    } else {
        0..0
    };
    ends.map(move |end| &word[..end])
}

/// A light English stemmer for matching a query word with the index's terms: plural `-s`/`-es`/
/// `-ies`, `-ed`, `-ing` (undoubling a final consonant: `dropped` → `drop`), then a final `-y`
/// after a consonant or a final `-e` (`parse`, `parsed`, `parses`, `parsing` → `pars`). Both sides go through it, so its stems need
/// only agree with each other, not be words.
pub fn stem(word: &str) -> &str {
    let b = word.as_bytes();
    if b.len() <= 3 || !b.iter().all(u8::is_ascii_lowercase) {
        return word;
    }
    let mut w = word;
    if let Some(s) = w
        .strip_suffix("ies")
        .or_else(|| w.strip_suffix("ied"))
        .filter(|s| s.len() >= 2)
    {
        return s;
    }
    let mut verb = false;
    if let Some(s) = w.strip_suffix("ing").filter(|s| s.len() >= 3) {
        w = s;
        verb = true;
    } else if let Some(s) = w.strip_suffix("ed").filter(|s| s.len() >= 3) {
        w = s;
        verb = true;
    } else if let Some(s) = w.strip_suffix("es").filter(|s| {
        s.len() >= 3
            && (s.ends_with('s') || s.ends_with('x') || s.ends_with("ch") || s.ends_with("sh"))
    }) {
        w = s;
    } else if let Some(s) = w
        .strip_suffix('s')
        .filter(|s| s.len() >= 3 && !s.ends_with('s'))
    {
        w = s;
    }
    let wb = w.as_bytes();
    if verb && wb.len() >= 4 {
        let (last, before) = (wb[wb.len() - 1], wb[wb.len() - 2]);
        if last == before && !matches!(last, b'l' | b's' | b'z') && !b"aeiou".contains(&last) {
            w = &w[..w.len() - 1];
        }
    }
    // `cookie` meets `cookies` (`cook`), as `entries` loses its `ies`.
    if let Some(s) = w.strip_suffix("ie").filter(|s| s.len() >= 3) {
        return s;
    }
    // `entry` meets `entries` (`entr`).
    if let Some(s) = w
        .strip_suffix('y')
        .filter(|s| s.len() >= 3 && !s.ends_with(['a', 'e', 'o']))
    {
        return s;
    }
    w.strip_suffix('e').filter(|s| s.len() >= 3).unwrap_or(w)
}

/// [`stem`], then a noun's `-ion` after `t`, `s` or `x`, so a verb meets its noun (`rotate`,
/// `rotating`, `rotation`, `rotations` → `rotat`; `connection` → `connect`; `region` and
/// `union` stay whole): the stemmer of prose (memory documents), whose headings name a topic by
/// the noun a question asks about with the verb. Not for code, where such a noun is usually a
/// concept of its own (`completion` is not `complete`), so it cost the code questions precision.
pub fn prose_stem(word: &str) -> &str {
    let w = stem(word);
    w.strip_suffix("ion")
        .filter(|s| s.len() >= 3 && s.ends_with(['t', 's', 'x']))
        .unwrap_or(w)
}

/// FNV-1a as a [`Hasher`], for the ranker's tables of query terms: the masks table holds a few
/// dozen short terms and is looked up once per stored token of every definition considered,
/// where SipHash's setup cost dominated. Its keys are the query's words and the index's terms,
/// at most `MAX_QUERY_WORDS × (MAX_VARIANTS + 1)`, so there is no table to flood. Its methods
/// and [`fnv1a`] are `#[inline]`: the ranker's and the outline's hot loops call them from other
/// modules, which a release build may put in other codegen units.
pub struct Fnv(u64);

impl Default for Fnv {
    #[inline]
    fn default() -> Fnv {
        Fnv(FNV_OFFSET)
    }
}

impl Hasher for Fnv {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv1a_extend(self.0, bytes);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

#[inline]
fn fnv1a_extend(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The 64-bit FNV-1a hash of `token`: how the outline's tables of definition tokens
/// ([`super::outline::DefinitionWords`]) and the ranker ([`super::relevance::QueryWords`]) name
/// a token.
#[inline]
pub fn fnv1a(token: &str) -> u64 {
    fnv1a_extend(FNV_OFFSET, token.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_each_group_has_one_stem(stemmer: fn(&str) -> &str, groups: &[&[&str]]) {
        for group in groups {
            let stems: Vec<&str> = group.iter().map(|w| stemmer(w)).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?} → {stems:?}"
            );
        }
    }

    #[test]
    fn the_stemmer_joins_the_forms_of_a_word() {
        let groups = &[
            &["drop", "drops", "dropped", "dropping"][..],
            &["parse", "parsed", "parses", "parsing"],
            &["match", "matches", "matched", "matching"],
            &["call", "calls", "called"],
            &["add", "adds", "added"],
            &["entry", "entries"],
            &["copy", "copies", "copied"],
            &["cookie", "cookies"],
        ];
        assert_each_group_has_one_stem(stem, groups);
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("NaN"), "NaN");
    }

    #[test]
    fn the_prose_stemmer_joins_a_verb_and_its_noun() {
        let groups = &[
            &[
                "rotate",
                "rotates",
                "rotated",
                "rotating",
                "rotation",
                "rotations",
            ][..],
            &[
                "connect",
                "connected",
                "connecting",
                "connection",
                "connections",
            ],
            &["compress", "compressed", "compression"],
            &["mention", "mentioned", "mentions"],
            &["drop", "dropped"],
        ];
        assert_each_group_has_one_stem(prose_stem, groups);
        // `-ion` goes only after the letters that end such verbs; code keeps its nouns whole.
        assert_eq!(prose_stem("region"), "region");
        assert_eq!(prose_stem("union"), "union");
        assert_eq!(prose_stem("ion"), "ion");
        assert_eq!(stem("rotation"), "rotation");
    }

    #[test]
    fn abbreviations_are_the_prefixes_that_leave_a_word_behind() {
        let all: Vec<&str> = abbreviations("documentation").collect();
        assert_eq!(all.first(), Some(&"doc"));
        assert_eq!(all.last(), Some(&"documentat"));
        assert!(all.contains(&"docu"));
        assert_eq!(
            abbreviations("environ").collect::<Vec<_>>(),
            ["env", "envi"]
        );
        // Under six letters a prefix leaves too little to be an abbreviation of it.
        assert_eq!(abbreviations("parse").count(), 0);
        assert_eq!(abbreviations("").count(), 0);
        // Non-ASCII words are never cut inside a character: they have none.
        assert_eq!(abbreviations("caf\u{e9}s\u{e9}rie").count(), 0);
    }

    #[test]
    fn identifiers_are_words_with_a_capital_or_an_underscore() {
        for word in [
            "Find",
            "InitDefaultHelpCmd",
            "HTTPAdapter",
            "raise_for_status",
            "a_b",
        ] {
            assert!(looks_like_identifier(word), "{word}");
        }
        for word in ["find", "documentation", "IO", "_", "x9"] {
            assert!(!looks_like_identifier(word), "{word}");
        }
    }
}
