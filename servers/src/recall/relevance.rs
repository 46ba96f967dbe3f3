//! The product's default ranking (`--compat reference` keeps [`super::rank::rank`]): BM25 over
//! the same postings, with what a question about code needs on top, all decided at query time so
//! the index files stay the reference's:
//!
//! - query words: a small English stopword list on top of the tokenizer's, and a light stemmer
//!   whose variants are looked up among the index's own terms (`dropped` finds `drop`, `drops`);
//! - coverage: the share of the query's words (weighted by idf) a document holds, so a file with
//!   every word beats one that repeats a single word many times;
//! - definitions: a query word that names one of the file's definitions (the signatures its
//!   passages start with; a memory document's title) or its path counts for more than one in
//!   the body;
//! - test and generated files rank below the code they exercise unless the query asks for tests;
//! - a long code file is not favoured for holding more words by chance ([`LENGTH_PRIOR`]).
//!
//! A hit names the definition that matched best as its `symbol`, has the project-relative path as
//! its title, and a confidence from coverage and definitions (see [`tier`]).

use super::corpus::{Corpus, Document, Posting};
use super::rank::{cut_chars, Hit, B, K1, SNIPPET_CHARS};
use super::tokenize::Tokenizer;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

/// English words that carry no meaning in a question about code, beyond the tokenizers' own
/// stopwords ("how do I get the list of ..." keeps `get` and `list`).
pub const QUERY_STOPWORDS: &[&str] = &[
    "about", "after", "an", "at", "be", "before", "by", "can", "do", "does", "done", "each", "it",
    "its", "me", "my", "of", "on", "or", "should", "so", "than", "there", "to", "up", "we", "what",
    "when", "where", "which", "who", "why", "how", "would", "you",
];

/// Query words kept (a longer query's tail is dropped): a word is a bit in each document's match set.
pub const MAX_QUERY_WORDS: usize = 32;

/// Stemmed variants looked up per query word, beyond the word itself.
pub const MAX_VARIANTS: usize = 8;

/// Index terms examined per query word when looking for its stemmed variants (the terms sharing
/// the stem as a prefix, in order): a short stem such as `get` prefixes thousands of identifiers.
pub const MAX_PREFIX_SCAN: usize = 512;

/// Weight of a stemmed variant against the word as written.
const VARIANT_WEIGHT: f64 = 0.7;

/// Documents re-scored with their definitions and path, at least (more for a larger `k`).
pub const RESCORED: usize = 40;

/// Exponent of the length prior on code files: a file's first-pass score is divided by
/// `(length / average length) ^ LENGTH_PRIOR`. BM25's length normalisation saturates each word's
/// weight, but a long file (a hub such as `completions.go` or `sessions.py`) still holds more of
/// a question's words by chance, and coverage rewards that; questions phrased in other words
/// than the code's suffered most. Chosen on the tuning half of bench/recall's relevance set
/// (0.3 of 0, 0.1, 0.2, 0.3 and 0.5; docs/recall.md has the held-out figures). Memory documents are
/// sections, already short: no prior.
pub const LENGTH_PRIOR: f64 = 0.3;

/// Score factor for test and generated files when the query does not ask for tests.
const TEST_FACTOR: f64 = 0.35;

/// One query word: its idf-weighted lookups among the index's terms.
struct Word {
    /// `(stored term, weight × idf, postings)` for the word and its stemmed variants.
    variants: Vec<(String, f64, usize)>,
    /// The word's idf (its best variant's), its share of the query's weight.
    idf: f64,
}

/// The product's top `k` of `corpus` for `query`. `root`: the project root, to judge paths (test
/// folders) relative to it whatever the file stores.
pub fn rank(corpus: &Corpus, query: &str, k: usize, root: &Path) -> Vec<Hit> {
    rank_words(corpus, &QueryWords::new(corpus, query), query, k, root)
}

/// [`rank`] with the query's words already looked up in `corpus` ([`QueryWords::new`]).
pub fn rank_words(
    corpus: &Corpus,
    query_words: &QueryWords,
    query: &str,
    k: usize,
    root: &Path,
) -> Vec<Hit> {
    if corpus.n == 0.0 {
        return Vec::new();
    }
    let words = &query_words.words;
    if words.is_empty() {
        return Vec::new();
    }
    let avgdl = if corpus.avgdl == 0.0 {
        1.0
    } else {
        corpus.avgdl
    };
    let docs = corpus.documents.len();
    let mut bm25 = vec![0.0f64; docs];
    let mut matched = vec![0u64; docs];
    let mut touched: Vec<usize> = Vec::new();
    for (bit, word) in words.iter().enumerate() {
        for (term, weight, _) in &word.variants {
            let list: &[Posting] = corpus.postings.get(term).map_or(&[], |(_, l)| l);
            for posting in list {
                let dl = corpus.documents[posting.doc].length;
                let tf = posting.tf;
                let denom = tf + K1 * ((1.0 - B) + (B * dl) / avgdl);
                bm25[posting.doc] += weight * ((tf * (K1 + 1.0)) / denom);
                if matched[posting.doc] == 0 {
                    touched.push(posting.doc);
                }
                matched[posting.doc] |= 1 << bit;
            }
        }
    }
    let coverage = |mask: u64| coverage_of(words, mask);
    let code = corpus.tokenizer == Tokenizer::Code;
    // A long file holds some of any question's words by chance (see LENGTH_PRIOR).
    let prior = |d: usize| {
        if code {
            (corpus.documents[d].length.max(1.0) / avgdl).powf(-LENGTH_PRIOR)
        } else {
            1.0
        }
    };
    // First pass: BM25 scaled by coverage and the length prior; the best of those are
    // re-scored with their definitions and paths, which needs their passages.
    let first = |d: usize| bm25[d] * (0.3 + 0.7 * coverage(matched[d])) * prior(d);
    let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    let mut pool: Vec<(f64, usize)> = touched.iter().map(|&d| (first(d), d)).collect();
    let keep = RESCORED.max(2 * k);
    if pool.len() > keep {
        pool.select_nth_unstable_by(keep, order);
        pool.truncate(keep);
    }
    let wants_tests = query_asks_for_tests(query);
    // An `api-doc` document's passages are paragraphs of a description, not signatures.
    let signatures = code && corpus.source_kind.as_deref() != Some("api-doc");
    let mut rescored: Vec<(f64, usize, Features)> = pool
        .into_iter()
        .map(|(score, d)| {
            let doc = &corpus.documents[d];
            let features = features(doc, words, corpus.tokenizer, root, code, signatures);
            let weighted = |mask: u64| coverage(mask);
            let mut score = score
                * (1.0
                    + 1.2 * weighted(features.definition_mask)
                    + 0.6 * weighted(features.path_mask));
            if features.test_or_generated && !wants_tests {
                score *= TEST_FACTOR;
            }
            (score, d, features)
        })
        .collect();
    rescored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    rescored.truncate(k);
    let terms: Vec<(&str, f64)> = words
        .iter()
        .flat_map(|w| {
            w.variants
                .iter()
                .map(|(t, weight, _)| (t.as_str(), *weight))
        })
        .collect();
    rescored
        .into_iter()
        .map(|(score, d, features)| {
            let doc = &corpus.documents[d];
            let coverage = coverage(matched[d]);
            let definitions = coverage_of(words, features.definition_mask | features.path_mask);
            Hit {
                doc_id: d,
                path: doc.path().to_owned(),
                title: if code {
                    relative(doc.path(), root).to_owned()
                } else {
                    doc.title().to_owned()
                },
                // A document that is one definition (an API unit) is named by it; a file by the
                // definition naming the most query words.
                symbol: doc
                    .symbol()
                    .flatten()
                    .map(str::to_owned)
                    .or(features.symbol),
                score,
                snippet: snippet(doc, corpus.tokenizer, &terms),
                tier: Some(tier(coverage, definitions)),
                lines: None,
            }
        })
        .collect()
}

/// A query's words, looked up once among a corpus's terms, to choose each hit's definition from
/// the code outline ([`super::outline`]).
pub struct QueryWords {
    words: Vec<Word>,
    tokenizer: Tokenizer,
    /// Each variant term → the bits of the words it is a variant of: one lookup per token of a
    /// definition, where [`mask_of`] compares with every variant.
    masks: HashMap<String, u64, BuildHasherDefault<Fnv>>,
}

/// FNV-1a: the masks table holds a few dozen short terms and is looked up once per stored token
/// of every definition considered, where SipHash's setup cost dominated. Its keys are the
/// query's words and the index's terms, at most `MAX_QUERY_WORDS × (MAX_VARIANTS + 1)`, so
/// there is no table to flood.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = hash;
    }
}

impl QueryWords {
    pub fn new(corpus: &Corpus, query: &str) -> QueryWords {
        let words = query_words(corpus, query);
        let mut masks: HashMap<String, u64, BuildHasherDefault<Fnv>> = HashMap::default();
        for (bit, word) in words.iter().enumerate() {
            for (term, _, _) in &word.variants {
                *masks.entry(term.clone()).or_default() |= 1 << bit;
            }
        }
        QueryWords {
            words,
            tokenizer: corpus.tokenizer,
            masks,
        }
    }

    fn mask(&self, token: &str) -> u64 {
        self.masks.get(token).copied().unwrap_or(0)
    }

    /// How well a definition of the code outline answers the query by its name: the idf-weighted
    /// share of the query's words naming it (its qualified name's parts: `Session.request` →
    /// `session`, `request`). With `passage`, also the share its passage (signature and doc
    /// comment) holds, the name's counted twice. `0.0` when it holds none. Read from the tokens
    /// the builder stored as its second passage (`outline::definition_tokens`); a definition
    /// without them (an outline of another writer) is tokenized here.
    pub fn definition_score(&self, definition: &Document, passage: bool) -> f64 {
        if self.words.is_empty() {
            return 0.0;
        }
        let (mut names, mut rest) = (0u64, 0u64);
        let stored = definition
            .passages()
            .nth(1)
            .and_then(|t| t.split_once(super::outline::NAME_SEPARATOR));
        match stored {
            Some((name_tokens, passage_tokens)) => {
                name_tokens.split(' ').for_each(|t| names |= self.mask(t));
                if passage {
                    passage_tokens.split(' ').for_each(|t| rest |= self.mask(t));
                }
            }
            None => {
                let tokenizer = self.tokenizer;
                tokenizer.each_token(definition.title(), &mut |t| names |= self.mask(t));
                if let Some(text) = definition.passages().next().filter(|_| passage) {
                    tokenizer.each_token(text, &mut |t| rest |= self.mask(t));
                }
            }
        }
        let name = coverage_of(&self.words, names);
        if passage {
            2.0 * name + coverage_of(&self.words, rest | names)
        } else {
            name
        }
    }
}

/// The confidence of a hit: `reliable` when it holds every word of the query (by idf weight,
/// at least 99%) and a word names one of its definitions or its path; `candidate` when it holds
/// at least half; else `weak`. Unlike a raw BM25 threshold, this does not depend on the size of
/// the index or the length of the query.
pub fn tier(coverage: f64, definitions: f64) -> &'static str {
    if coverage >= 0.99 && definitions > 0.0 {
        "reliable"
    } else if coverage >= 0.5 {
        "candidate"
    } else {
        "weak"
    }
}

/// The idf-weighted share of the query's words whose bits are set in `mask`.
fn coverage_of(words: &[Word], mask: u64) -> f64 {
    let total: f64 = words.iter().map(|w| w.idf).sum();
    let held: f64 = words
        .iter()
        .enumerate()
        .filter(|(bit, _)| mask & (1 << bit) != 0)
        .map(|(_, w)| w.idf)
        .sum();
    held / total
}

/// The query's words (each once, in order) with their variants among the index's terms.
fn query_words(corpus: &Corpus, query: &str) -> Vec<Word> {
    let mut seen: Vec<String> = Vec::new();
    corpus.tokenizer.each_token(query, &mut |t| {
        if !QUERY_STOPWORDS.contains(&t)
            && !seen.iter().any(|s| s == t)
            && seen.len() < MAX_QUERY_WORDS
        {
            seen.push(t.to_owned());
        }
    });
    let n = corpus.n;
    let idf = |df: usize| {
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    };
    let mut words = Vec::new();
    for word in seen {
        let mut variants: Vec<(String, f64, usize)> = Vec::new();
        if let Some((term, list)) = corpus.postings.get(&word) {
            variants.push((term.to_owned(), idf(list.len()), list.len()));
        }
        let stem = stem(&word);
        if stem.len() >= 3 {
            for (term, list) in corpus.postings.with_prefix(stem).take(MAX_PREFIX_SCAN) {
                if variants.len() > MAX_VARIANTS {
                    break;
                }
                if term != word && self::stem(term) == stem {
                    variants.push((
                        term.to_owned(),
                        VARIANT_WEIGHT * idf(list.len()),
                        list.len(),
                    ));
                }
            }
        }
        if variants.is_empty() {
            continue;
        }
        let best = variants.iter().map(|v| v.1).fold(0.0, f64::max);
        words.push(Word {
            variants,
            idf: best,
        });
    }
    words
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
    // `entry` meets `entries` (`entr`).
    if let Some(s) = w
        .strip_suffix('y')
        .filter(|s| s.len() >= 3 && !s.ends_with(['a', 'e', 'o']))
    {
        return s;
    }
    w.strip_suffix('e').filter(|s| s.len() >= 3).unwrap_or(w)
}

/// What a document offers beyond its words: which query words name its definitions or its path,
/// the definition that names the most, and whether it is a test or generated file.
struct Features {
    definition_mask: u64,
    path_mask: u64,
    symbol: Option<String>,
    test_or_generated: bool,
}

fn features(
    doc: &Document,
    words: &[Word],
    tokenizer: Tokenizer,
    root: &Path,
    code: bool,
    signatures: bool,
) -> Features {
    let rel = relative(doc.path(), root);
    let mut path_mask = 0u64;
    tokenizer.each_token(&rel.replace(['/', '.', '-'], " "), &mut |t| {
        path_mask |= mask_of(words, t);
    });
    let mut definition_mask = 0u64;
    let mut symbol: Option<(u32, String)> = None;
    if !code {
        // A memory document's title (its first heading) is what it is about.
        tokenizer.each_token(doc.title(), &mut |t| definition_mask |= mask_of(words, t));
    } else if signatures {
        for passage in doc.passages() {
            let Some(name) = definition_name(passage) else {
                continue;
            };
            let mut mask = 0u64;
            tokenizer.each_token(name, &mut |t| mask |= mask_of(words, t));
            if mask != 0 {
                definition_mask |= mask;
                let count = mask.count_ones();
                if symbol.as_ref().is_none_or(|(best, _)| count > *best) {
                    symbol = Some((count, name.to_owned()));
                }
            }
        }
    }
    Features {
        definition_mask,
        path_mask,
        symbol: symbol.map(|(_, name)| name),
        test_or_generated: code && is_test_or_generated(rel),
    }
}

/// The bit of each query word one of whose variants is `token`.
fn mask_of(words: &[Word], token: &str) -> u64 {
    let mut mask = 0;
    for (bit, word) in words.iter().enumerate() {
        if word.variants.iter().any(|(t, _, _)| t == token) {
            mask |= 1 << bit;
        }
    }
    mask
}

/// The name a passage's signature defines: the last identifier before its parameters, generics,
/// body or value (`def load(path)` → `load`, `func (r *T) Name(x)` → `Name`, `pub struct
/// Row<T>` → `Row`, `const f = (` → `f`, `function build_all` → `build_all`).
pub fn definition_name(passage: &str) -> Option<&str> {
    let signature = passage.split(" \u{2014} ").next().unwrap_or(passage);
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

/// Whether the query asks about tests.
fn query_asks_for_tests(query: &str) -> bool {
    query.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "test" | "tests" | "testing" | "spec" | "fixture" | "fixtures"
        )
    })
}

/// Test files and folders (`tests/`, `test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`,
/// `conftest.py`) and generated or vendored ones (`x_pb2.py`, `x.pb.go`, `generated/`,
/// `vendor/`, `x.min.js`), by the project-relative path.
pub fn is_test_or_generated(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    let mut parts = lower.split('/');
    let file = parts.next_back().unwrap_or("");
    let folder = |p: &str| {
        matches!(
            p,
            "test"
                | "tests"
                | "testing"
                | "__tests__"
                | "testdata"
                | "generated"
                | "gen"
                | "vendor"
        )
    };
    if lower.split('/').rev().skip(1).any(folder) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem == "conftest"
        || file.contains(".test.")
        || file.contains(".spec.")
        || stem.ends_with("_pb2")
        || file.ends_with(".pb.go")
        || file.ends_with(".min.js")
        || stem.ends_with("_generated")
}

/// `path` relative to `root` when it is an absolute path inside it, else as stored.
/// `path` relative to `root` when it lies inside it (a stored absolute path), else as given.
pub(super) fn relative<'a>(path: &'a str, root: &Path) -> &'a str {
    let root = root.to_str().unwrap_or("");
    path.strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty() && !root.is_empty())
        .unwrap_or(path)
}

/// The passage holding the most query weight (ties: the first), else the stored snippet.
fn snippet(doc: &Document, tokenizer: Tokenizer, terms: &[(&str, f64)]) -> String {
    let mut best: Option<(f64, usize)> = None;
    for (i, passage) in doc.passages().enumerate() {
        let mut score = 0.0;
        tokenizer.each_token(passage, &mut |t| {
            if let Some((_, w)) = terms.iter().find(|(term, _)| *term == t) {
                score += w;
            }
        });
        if score > 0.0 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, i));
        }
    }
    match best {
        Some((_, i)) => cut_chars(doc.passage(i), SNIPPET_CHARS).to_owned(),
        None => doc.passages().next().map_or_else(
            || doc.snippet().to_owned(),
            |p| cut_chars(p, SNIPPET_CHARS).to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::corpus::PostingTable;

    #[test]
    fn the_stemmer_joins_the_forms_of_a_word() {
        for group in [
            &["drop", "drops", "dropped", "dropping"][..],
            &["parse", "parsed", "parses", "parsing"],
            &["match", "matches", "matched", "matching"],
            &["call", "calls", "called"],
            &["add", "adds", "added"],
            &["entry", "entries"],
            &["copy", "copies", "copied"],
        ] {
            let stems: Vec<&str> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?} → {stems:?}"
            );
        }
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("NaN"), "NaN");
    }

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
    fn arbitrary_text_never_panics_any_helper() {
        let pieces = [
            "def ",
            "class ",
            "func (",
            ")",
            "(",
            "<",
            "\u{e9}",
            "\u{2014}",
            " \u{2014} ",
            "_",
            "x",
            "9",
            "/",
            ".",
            "tests",
            "\u{1f600}",
            "ies",
            "ed",
            "ing",
            "Y",
        ];
        // Every string of up to three pieces.
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let s = format!("{a}{b}{c}");
                    let _ = definition_name(&s);
                    let _ = stem(&s);
                    let _ = is_test_or_generated(&s);
                    let _ = relative(&s, Path::new("/p"));
                }
            }
        }
    }

    #[test]
    fn tests_and_generated_files_are_recognised_by_path() {
        for path in [
            "tests/test_api.py",
            "src/pkg/test_models.py",
            "cmd/root_test.go",
            "web/app.test.ts",
            "web/app.spec.js",
            "conftest.py",
            "proto/x_pb2.py",
            "api/x.pb.go",
        ] {
            assert!(is_test_or_generated(path), "{path}");
        }
        for path in [
            "src/requests/models.py",
            "command.go",
            "contest.py",
            "latest/x.py",
        ] {
            assert!(!is_test_or_generated(path), "{path}");
        }
    }

    fn corpus(docs: Vec<Document>, lists: Vec<(&str, Vec<Posting>)>) -> Corpus {
        Corpus {
            tokenizer: Tokenizer::Code,
            n: docs.len() as f64,
            avgdl: 10.0,
            documents: docs,
            postings: PostingTable::from_lists(lists.into_iter()),
            built_at: String::new(),
            build_id: None,
            source_kind: Some("local-script".into()),
        }
    }

    #[test]
    fn definitions_and_coverage_outrank_repetition_and_tests_rank_below_code() {
        let p = |doc, tf| Posting { doc, tf };
        let docs = vec![
            // Uses `retry` many times, defines nothing of the query.
            Document::new(
                "/p/tests/test_retry.py",
                "test_retry.py",
                10.0,
                "",
                ["def test_retry_budget()"],
                Some(None),
            ),
            // Defines `retry_budget`.
            Document::new(
                "/p/src/retry.py",
                "retry.py",
                10.0,
                "",
                ["def retry_budget(n) \u{2014} Spend the budget."],
                Some(None),
            ),
            // Mentions `budget` only.
            Document::new(
                "/p/src/money.py",
                "money.py",
                10.0,
                "",
                ["def spend()"],
                Some(None),
            ),
        ];
        let c = corpus(
            docs,
            vec![
                ("retry", vec![p(0, 9.0), p(1, 1.0)]),
                ("budget", vec![p(0, 9.0), p(1, 1.0), p(2, 5.0)]),
                ("retry_budget", vec![p(0, 1.0), p(1, 1.0)]),
            ],
        );
        let hits = rank(&c, "how is the retry budget spent", 3, Path::new("/p"));
        let order: Vec<usize> = hits.iter().map(|h| h.doc_id).collect();
        assert_eq!(order[0], 1, "{hits:?}");
        assert_eq!(hits[0].symbol.as_deref(), Some("retry_budget"));
        assert_eq!(hits[0].title, "src/retry.py");
        assert_eq!(hits[0].confidence(), "reliable");
        // Asking for tests lifts the test file back.
        let hits = rank(&c, "retry budget tests", 1, Path::new("/p"));
        assert_eq!(hits[0].doc_id, 0, "{hits:?}");
    }

    #[test]
    fn a_long_file_holding_the_words_by_chance_ranks_below_a_focused_one() {
        let p = |doc, tf| Posting { doc, tf };
        let file = |path: &str, length: f64| {
            Document::new(path, path, length, "", ["def f()"], Some(None))
        };
        // A hub of 20 times the average length mentions both words often; a short file holds
        // each once.
        let docs = vec![file("/p/a.go", 200.0), file("/p/b.go", 5.0)];
        let c = Corpus {
            avgdl: 10.0,
            ..corpus(
                docs,
                vec![
                    ("fish", vec![p(0, 40.0), p(1, 1.0)]),
                    ("shell", vec![p(0, 60.0), p(1, 1.0)]),
                ],
            )
        };
        let ranked = |c: &Corpus| -> Vec<usize> {
            rank(c, "fish shell", 2, Path::new("/p"))
                .iter()
                .map(|h| h.doc_id)
                .collect()
        };
        assert_eq!(ranked(&c), [1, 0]);
        // The same postings in memory documents (sections, no prior): the hub's counts win.
        let memory = Corpus {
            tokenizer: Tokenizer::Notes,
            ..c
        };
        assert_eq!(ranked(&memory), [0, 1]);
    }
}
