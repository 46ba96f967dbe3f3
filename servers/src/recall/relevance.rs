//! The product's default ranking (`--compat reference` keeps [`super::rank::rank`]): BM25 over
//! the same postings, with what a question about code needs on top, all decided at query time so
//! the index files stay the reference's:
//!
//! - query words: a small English stopword list on top of the tokenizer's, and a light stemmer
//!   ([`super::words`]) whose variants are looked up among the index's own terms (`dropped`
//!   finds `drop`, `drops`; in memory documents also the noun, `rotate` → `rotation`); a plain English word also finds the code's abbreviations of it
//!   (`documentation` → `doc`) and, weighted lower, its synonyms from a small programming
//!   thesaurus (`delete` → `remove`, [`super::thesaurus`]);
//! - coverage: the share of the query's words (weighted by idf) a document holds, so a file with
//!   every word beats one that repeats a single word many times;
//! - definitions: a query word that names one of the file's definitions (the signatures its
//!   passages start with, and with the code outline every definition of the file; a memory
//!   document's title) or its path counts for more than one in the body; so does the share of
//!   the query one definition's name, signature and doc comment hold together, and an
//!   identifier of the query (as written, case included) that names a definition exactly;
//! - test and generated files rank below the code they exercise unless the query asks for tests,
//!   and example programs and documentation code below the library unless it asks for an example;
//!   a test file matching the question lifts the file it is named after ([`MIRROR_WEIGHT`]);
//! - a long code file is not favoured for holding more words by chance ([`LENGTH_PRIOR`]).
//!
//! A hit names the definition that matched best as its `symbol`, has the project-relative path as
//! its title, and a confidence from coverage and definitions (see [`tier`]).

use super::loaded::{Corpus, Document, Posting};
use super::outline::Outline;
use super::rank::{Hit, B, K1, SNIPPET_CHARS};
use super::thesaurus;
use super::words::{abbreviations, fnv1a, looks_like_identifier, prose_stem, stem, Fnv};
use crate::corpus::sidecars::NAME_MARK;
use crate::corpus::text::{cut_chars, definition_name, split_spaced};
use crate::corpus::tokenize::Tokenizer;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
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
/// than the code's suffered most. Chosen on bench/recall's tuning set (0.3 of 0, 0.1, 0.2, 0.3
/// and 0.5; docs/recall.md has the held-out figures). Memory documents are
/// sections, already short: no prior.
pub const LENGTH_PRIOR: f64 = 0.3;

/// The share of its BM25 a document holding none of the query's weight would keep: the first
/// pass multiplies BM25 by `COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) × coverage`. Lower, a file
/// repeating one word of the question counts for less against one holding them all. Chosen on
/// both tuning groups (0.3 before; 0.15 and 0.2 raised both a little, 0 lowered the first;
/// docs/recall.md).
pub const COVERAGE_FLOOR: f64 = 0.2;

/// Weight of the share of the query's words naming one of a file's definitions.
pub const DEFINITION_WEIGHT: f64 = 1.2;

/// Weight of the share of the query's words naming a part of a file's path.
pub const PATH_WEIGHT: f64 = 0.6;

/// Weight of the query's share held by a file's best definition passage (one definition's name,
/// signature and doc comment): a question in other words than the code's is often answered by
/// the doc comment of one definition, where a file's body holds its words scattered. Chosen on
/// bench/recall's tuning set (of 0.5, 1, 1.5 and 2; docs/recall.md).
pub const PASSAGE_WEIGHT: f64 = 1.0;

/// Weight of the share of the query's identifiers (as written, case included) that name one of
/// the file's definitions exactly: `GenBashCompletion` is defined in one file and merely
/// resembles `genBashCompletion` in another; `Find` names `Command.Find`.
pub const EXACT_NAME_WEIGHT: f64 = 1.0;

/// Weight of an abbreviation found for a plain word of the question (`doc` for
/// `documentation`), against the word as written. Chosen on the tuning set (of 0.3, 0.5 and 0.7).
const ABBREVIATION_WEIGHT: f64 = 0.5;

/// Weight of a synonym from the programming thesaurus ([`thesaurus`]) found for a plain word of
/// the question (`remove` for `delete`), against the word as written. A synonym adds to BM25
/// only: it does not count as holding the word (coverage, definitions, path, passage), where
/// it lowered the tuning set's MRR (0.935 → 0.923–0.927 at weights 0.2 to 0.7). Scoring only:
/// 0.3, 0.5, 0.7, 0.85, 1.0 and 1.2 gave 0.937, 0.941, 0.939, 0.948, 0.953 and 0.945; kept
/// below the word as written.
const SYNONYM_WEIGHT: f64 = 0.85;

/// Synonyms looked up per plain query word, beyond its variants and abbreviations (the largest
/// group's other words).
pub const MAX_SYNONYMS: usize = 6;

/// Documents of the first pass's best whose definitions' passages are read (each definition of
/// the file, with the code outline); the others are re-scored by their stored definitions'
/// names, as before. Reading a file's definitions the first time costs a pass over its outline
/// tokens: 8 keeps `query_code` within about a fifth of its cost without them, and the tuning
/// set ranks alike from 6 to 40 (4: MRR 0.921, against 0.935).
pub const DEEP_RESCORED: usize = 8;

/// The most re-scoring can multiply a first-pass score by (every share 1, no test factor).
const MAX_RESCORE_FACTOR: f64 =
    1.0 + DEFINITION_WEIGHT + PATH_WEIGHT + PASSAGE_WEIGHT + EXACT_NAME_WEIGHT;

/// Share of a test file's score (before [`TEST_FACTOR`]) added to the re-scored file it is named
/// after (`test_cookies.py` → `cookies.py`): a test's names and strings describe the behaviour
/// in the words of a question, and its file says which code it exercises.
pub const MIRROR_WEIGHT: f64 = 0.3;

/// Score factor for test and generated files when the query does not ask for tests.
const TEST_FACTOR: f64 = 0.35;

/// Score factor for example programs and documentation code ([`is_example`]) when the query
/// does not ask for an example: a small program showing a feature names it in every line, its
/// module docstring and its own name, where the library code it calls is what a question about
/// the feature wants.
pub const EXAMPLE_FACTOR: f64 = 0.5;

/// One query word: its idf-weighted lookups among the index's terms.
struct Word {
    /// `(stored term, weight × idf, postings)` for the word and its stemmed variants, then its
    /// synonyms.
    variants: Vec<(String, f64, usize)>,
    /// How many of `variants`, from the first, are the word itself (its forms and abbreviations):
    /// a document holding one of those holds the word. A synonym (after them) adds to the
    /// document's score, not to the share of the question it is judged to hold.
    held: usize,
    /// The word's idf (its best variant's), its share of the query's weight.
    idf: f64,
}

/// The product's top `k` of `corpus` for `query`. `root`: the project root, to judge paths (test
/// folders) relative to it whatever the file stores.
pub fn rank(corpus: &Corpus, query: &str, k: usize, root: &Path) -> Vec<Hit> {
    rank_words(
        corpus,
        &QueryWords::new(corpus, query),
        query,
        k,
        root,
        None,
    )
}

/// [`rank`] with the query's words already looked up in `corpus` ([`QueryWords::new`]).
pub fn rank_words(
    corpus: &Corpus,
    query_words: &QueryWords,
    query: &str,
    k: usize,
    root: &Path,
    outline: Option<&Outline>,
) -> Vec<Hit> {
    FirstPass::score(corpus, query_words, k).rescore(corpus, query_words, query, k, root, outline)
}

/// A ranking's first pass: BM25 over the postings of the query's words scaled by coverage and
/// the length prior, and the best of it kept to be re-scored with the documents' definitions
/// and paths. It reads only the documents' lengths, so a corpus whose documents are not all
/// loaded can be scored, and only the [`FirstPass::candidates`] loaded before re-scoring.
pub struct FirstPass {
    /// Per document: the bits of the words it holds.
    matched: Vec<u64>,
    /// The documents to re-score with their first-pass scores, best first.
    pool: Vec<(f64, usize)>,
}

/// The first-pass order: score descending, then position.
fn best_first(a: &(f64, usize), b: &(f64, usize)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// `avgdl` as the scorer uses it (a stored `0` would divide by zero).
fn average_length(corpus: &Corpus) -> f64 {
    if corpus.avgdl == 0.0 {
        1.0
    } else {
        corpus.avgdl
    }
}

impl FirstPass {
    /// The first pass over `corpus` for the top `k`.
    pub fn score(corpus: &Corpus, query_words: &QueryWords, k: usize) -> FirstPass {
        let words = &query_words.words;
        if corpus.n == 0.0 || words.is_empty() {
            return FirstPass {
                matched: Vec::new(),
                pool: Vec::new(),
            };
        }
        let avgdl = average_length(corpus);
        let docs = corpus.documents.len();
        let mut bm25 = vec![0.0f64; docs];
        let mut matched = vec![0u64; docs];
        let mut seen = vec![false; docs];
        let mut touched: Vec<usize> = Vec::new();
        for (bit, word) in words.iter().enumerate() {
            for (i, (term, weight, _)) in word.variants.iter().enumerate() {
                let list: &[Posting] = corpus.postings.get(term).map_or(&[], |(_, l)| l);
                let bits = if i < word.held { 1 << bit } else { 0 };
                for posting in list {
                    let dl = corpus.documents[posting.doc].length;
                    let tf = posting.tf;
                    let denom = tf + K1 * ((1.0 - B) + (B * dl) / avgdl);
                    bm25[posting.doc] += weight * ((tf * (K1 + 1.0)) / denom);
                    if !seen[posting.doc] {
                        seen[posting.doc] = true;
                        touched.push(posting.doc);
                    }
                    matched[posting.doc] |= bits;
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
        let first = |d: usize| {
            bm25[d] * (COVERAGE_FLOOR + (1.0 - COVERAGE_FLOOR) * coverage(matched[d])) * prior(d)
        };
        let mut pool: Vec<(f64, usize)> = touched.iter().map(|&d| (first(d), d)).collect();
        let keep = RESCORED.max(2 * k);
        if pool.len() > keep {
            pool.select_nth_unstable_by(keep, best_first);
            pool.truncate(keep);
        }
        // Best first, so that once a first-pass score cannot reach the k-th best re-scored one
        // however its features turn out, neither can any after it: they are not read.
        pool.sort_unstable_by(best_first);
        FirstPass { matched, pool }
    }

    /// The documents re-scoring may read, best first.
    pub fn candidates(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.pool.iter().map(|&(_, d)| d)
    }

    /// The top `k`: the candidates re-scored with their definitions (from `outline` for the
    /// first [`DEEP_RESCORED`]), paths and kinds. `corpus` is the one scored, with at least the
    /// candidates' documents loaded.
    pub fn rescore(
        self,
        corpus: &Corpus,
        query_words: &QueryWords,
        query: &str,
        k: usize,
        root: &Path,
        outline: Option<&Outline>,
    ) -> Vec<Hit> {
        let FirstPass { matched, pool } = self;
        if pool.is_empty() {
            return Vec::new();
        }
        let words = &query_words.words;
        let coverage = |mask: u64| coverage_of(words, mask);
        let code = corpus.tokenizer == Tokenizer::Code;
        let wants_tests = query_says_any(query, TEST_WORDS);
        let wants_examples = query_says_any(query, EXAMPLE_WORDS);
        // An `api-doc` document's passages are paragraphs of a description, not signatures.
        let signatures = code && corpus.source_kind.as_deref() != Some("api-doc");
        let mut best_scores: Vec<f64> = Vec::with_capacity(k + 1);
        let mut rescored: Vec<(f64, usize, Features)> = Vec::with_capacity(pool.len());
        let mut votes: Vec<(&str, f64)> = Vec::new();
        for (position, (score, d)) in pool.into_iter().enumerate() {
            if k == 0 || best_scores.len() == k && score * MAX_RESCORE_FACTOR < best_scores[k - 1] {
                break;
            }
            let deep = position < DEEP_RESCORED;
            let (score, features) = {
                let doc = &corpus.documents[d];
                let features = features(
                    doc,
                    query_words,
                    root,
                    code,
                    signatures,
                    outline.filter(|_| deep),
                    deep,
                );
                let weighted = |mask: u64| coverage(mask);
                let mut score = score
                    * (1.0
                        + DEFINITION_WEIGHT * weighted(features.definition_mask)
                        + PATH_WEIGHT * weighted(features.path_mask)
                        + PASSAGE_WEIGHT * weighted(features.passage_mask)
                        + EXACT_NAME_WEIGHT * features.exact_share);
                // Its score before TEST_FACTOR: how well it matches, whatever the query asks.
                if features.test_or_generated {
                    if let Some(subject) = tested_subject(relative(doc.path(), root)) {
                        votes.push((subject, score));
                    }
                }
                if features.test_or_generated && !wants_tests {
                    score *= TEST_FACTOR;
                }
                if features.example && !wants_examples {
                    score *= EXAMPLE_FACTOR;
                }
                (score, features)
            };
            let at = best_scores.partition_point(|&b| b >= score);
            if at < k {
                best_scores.insert(at, score);
                best_scores.truncate(k);
            }
            rescored.push((score, d, features));
        }
        // A test file votes for the file it is named after with a share of its own score (see
        // MIRROR_WEIGHT). Only files already re-scored receive votes: one passed over above stays
        // passed over. At most `pool` votes and files (`RESCORED.max(2 * k)` each).
        if !votes.is_empty() {
            for (score, d, features) in &mut rescored {
                if features.test_or_generated {
                    continue;
                }
                let stem = file_stem(relative(corpus.documents[*d].path(), root));
                let vote = votes
                    .iter()
                    .filter(|(subject, _)| subject.eq_ignore_ascii_case(stem))
                    .map(|v| v.1)
                    .fold(0.0, f64::max);
                *score += MIRROR_WEIGHT * vote;
            }
        }
        rescored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        rescored.truncate(k);
        // Each term's weight as a snippet counts it: the first word's, where a term is a variant of
        // several. Looked up once per token of every passage of every hit.
        let mut terms: HashMap<&str, f64, BuildHasherDefault<Fnv>> = HashMap::default();
        for (term, weight, _) in words.iter().flat_map(|w| &w.variants) {
            terms.entry(term.as_str()).or_insert(*weight);
        }
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
}

/// A query's words, looked up once among a corpus's terms, to choose each hit's definition from
/// the code outline ([`super::outline`]).
pub struct QueryWords {
    words: Vec<Word>,
    tokenizer: Tokenizer,
    /// Each variant term → the bits of the words it is a variant of: one lookup per token of a
    /// definition, rather than a comparison with every variant.
    masks: HashMap<String, u64, BuildHasherDefault<Fnv>>,
    /// The query's words that are identifiers as written ([`looks_like_identifier`]), each once,
    /// at most [`MAX_QUERY_WORDS`].
    identifiers: Vec<String>,
    /// Every variant term's hash ([`fnv1a`]) with the bits of the words it is a variant of: how
    /// the outline's tables of definition tokens are asked.
    term_hashes: Vec<(u64, u64)>,
}

/// What choosing a query's words asks of an index's terms: how many documents hold a term and
/// which terms start with a prefix. A loaded corpus answers from its postings; the lookup
/// sidecar ([`super::lookup`]) from its term table, without reading a posting.
pub trait Vocabulary {
    fn tokenizer(&self) -> Tokenizer;
    /// The stored `N`.
    fn document_total(&self) -> f64;
    /// The stored term equal to `term` and how many documents hold it.
    fn documents_holding(&self, term: &str) -> Option<(&str, usize)>;
    /// Every stored term starting with `prefix` and how many documents hold it, in term order.
    fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a str, usize)> + 'a>;
}

impl Vocabulary for Corpus {
    fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    fn document_total(&self) -> f64 {
        self.n
    }

    fn documents_holding(&self, term: &str) -> Option<(&str, usize)> {
        self.postings
            .get(term)
            .map(|(term, list)| (term, list.len()))
    }

    fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a str, usize)> + 'a> {
        Box::new(
            self.postings
                .with_prefix(prefix)
                .map(|(t, list)| (t, list.len())),
        )
    }
}

impl QueryWords {
    pub fn new(vocabulary: &dyn Vocabulary, query: &str) -> QueryWords {
        let words = query_words(vocabulary, query);
        let mut masks: HashMap<String, u64, BuildHasherDefault<Fnv>> = HashMap::default();
        for (bit, word) in words.iter().enumerate() {
            for (term, _, _) in &word.variants[..word.held] {
                *masks.entry(term.clone()).or_default() |= 1 << bit;
            }
        }
        let mut identifiers: Vec<String> = Vec::new();
        for word in raw_words(query) {
            if looks_like_identifier(word)
                && !identifiers.iter().any(|i| i == word)
                && identifiers.len() < MAX_QUERY_WORDS
            {
                identifiers.push(word.to_owned());
            }
        }
        let term_hashes = masks.iter().map(|(t, &bits)| (fnv1a(t), bits)).collect();
        QueryWords {
            words,
            tokenizer: vocabulary.tokenizer(),
            masks,
            identifiers,
            term_hashes,
        }
    }

    /// Every term the ranking reads the postings of (the words' variants), each once.
    pub fn terms(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = (self.words.iter())
            .flat_map(|w| &w.variants)
            .map(|v| v.0.as_str())
            .collect();
        terms.sort_unstable();
        terms.dedup();
        terms
    }

    fn mask(&self, token: &str) -> u64 {
        self.masks.get(token).copied().unwrap_or(0)
    }

    /// How well a definition of the code outline answers the query by its name: the idf-weighted
    /// share of the query's words naming it (its qualified name's parts: `Session.request` →
    /// `session`, `request`). With `passage`, also the share its passage (signature and doc
    /// comment) holds, the name's counted twice. `0.0` when it holds none. Read from the tokens
    /// the builder stored as its second passage (`sidecars::definition_tokens`); a definition
    /// without them (an outline of another writer) is tokenized here.
    pub fn definition_score(&self, definition: &Document, passage: bool) -> f64 {
        if self.words.is_empty() {
            return 0.0;
        }
        let (mut names, mut rest) = (0u64, 0u64);
        let stored = definition
            .passages()
            .nth(1)
            .and_then(|t| split_spaced(t, NAME_MARK));
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
fn query_words(corpus: &dyn Vocabulary, query: &str) -> Vec<Word> {
    let tokenizer = corpus.tokenizer();
    let mut seen: Vec<String> = Vec::new();
    tokenizer.each_token(query, &mut |t| {
        if !QUERY_STOPWORDS.contains(&t)
            && !seen.iter().any(|s| s == t)
            && seen.len() < MAX_QUERY_WORDS
        {
            seen.push(t.to_owned());
        }
    });
    let n = corpus.document_total();
    let idf = |df: usize| {
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    };
    // Prose names a topic by the noun a question asks about with the verb ("Key rotation",
    // "rotate the key"); code keeps such nouns as concepts of their own.
    let stemmer = if tokenizer == Tokenizer::Code {
        stem
    } else {
        prose_stem
    };
    let mut words = Vec::new();
    for word in seen {
        let mut variants: Vec<(String, f64, usize)> = Vec::new();
        if let Some((term, count)) = corpus.documents_holding(&word) {
            variants.push((term.to_owned(), idf(count), count));
        }
        let stem = stemmer(&word);
        if stem.len() >= 3 {
            for (term, count) in corpus.with_prefix(stem).take(MAX_PREFIX_SCAN) {
                if variants.len() > MAX_VARIANTS {
                    break;
                }
                if term != word && stemmer(term) == stem {
                    variants.push((term.to_owned(), VARIANT_WEIGHT * idf(count), count));
                }
            }
        }
        // A plain English word of the question also finds the code's abbreviations of it
        // (`documentation` → `doc`, `environment` → `env`) and, weighted lower, the words
        // codebases commonly use for it (`delete` → `remove`); an identifier of the question is
        // meant as written, and prose (memory documents) spells its words out.
        let plain =
            raw_words(query).any(|w| w == word && w.bytes().all(|b| b.is_ascii_lowercase()));
        let mut held = variants.len();
        if tokenizer == Tokenizer::Code && plain {
            let add = |variants: &mut Vec<(String, f64, usize)>, key: &str, weight: f64| {
                if let Some((term, count)) = corpus.documents_holding(key) {
                    if !variants.iter().any(|v| v.0 == term) {
                        variants.push((term.to_owned(), weight * idf(count), count));
                    }
                }
            };
            for head in abbreviations(&word) {
                if variants.len() > MAX_VARIANTS {
                    break;
                }
                add(&mut variants, head, ABBREVIATION_WEIGHT);
            }
            held = variants.len();
            for synonym in thesaurus::synonyms(&word).take(MAX_SYNONYMS) {
                add(&mut variants, synonym, SYNONYM_WEIGHT);
            }
        }
        if variants.is_empty() {
            continue;
        }
        let best = variants.iter().map(|v| v.1).fold(0.0, f64::max);
        words.push(Word {
            variants,
            held,
            idf: best,
        });
    }
    words
}

/// The query's words as written: runs of ASCII letters, digits and `_`.
fn raw_words(query: &str) -> impl Iterator<Item = &str> {
    query
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
}

/// What a document offers beyond its words: which query words name its definitions or its path,
/// which its best definition passage holds, how many of the query's identifiers a definition is
/// named exactly, the definition that names the most, and whether it is a test or generated file.
struct Features {
    definition_mask: u64,
    path_mask: u64,
    /// The query words held by the one definition whose name and passage (signature and doc
    /// comment) hold the most query weight.
    passage_mask: u64,
    /// The share of the query's identifiers (as written: `InitDefaultHelpCmd`) that name one of
    /// the file's definitions exactly, case included.
    exact_share: f64,
    symbol: Option<String>,
    test_or_generated: bool,
    /// An example program ([`is_example`]).
    example: bool,
}

/// `doc`'s [`Features`]. With `passages`, the best definition passage is read: with the code
/// `outline`, of the file's every definition (the code index's passages hold only its first 24,
/// `index::passages::MAX_PASSAGES`, where a long file's answer is often missing), else of its
/// stored passages.
fn features(
    doc: &Document,
    query_words: &QueryWords,
    root: &Path,
    code: bool,
    signatures: bool,
    outline: Option<&Outline>,
    passages: bool,
) -> Features {
    let words = &query_words.words[..];
    let tokenizer = query_words.tokenizer;
    let rel = relative(doc.path(), root);
    let mut path_mask = 0u64;
    tokenizer.each_token(&rel.replace(['/', '.', '-'], " "), &mut |t| {
        path_mask |= query_words.mask(t);
    });
    let mut definition_mask = 0u64;
    let mut passage_mask = 0u64;
    let mut exact_mask = 0u64;
    let mut symbol: Option<(u32, String)> = None;
    let outlined = outline
        .filter(|_| code && signatures)
        .and_then(|o| o.definitions_of(rel));
    if !code {
        // A memory document's title (its first heading) is what it is about.
        tokenizer.each_token(doc.title(), &mut |t| definition_mask |= query_words.mask(t));
    } else if signatures {
        let mut passage_best = 0.0;
        for passage in doc.passages() {
            if passages && outlined.is_none() {
                let mut held = 0u64;
                tokenizer.each_token(passage, &mut |t| held |= query_words.mask(t));
                let share = coverage_of(words, held);
                if share > passage_best {
                    (passage_best, passage_mask) = (share, held);
                }
            }
            let Some(name) = definition_name(passage) else {
                continue;
            };
            if let Some(i) = query_words.identifiers.iter().position(|x| x == name) {
                exact_mask |= 1 << i;
            }
            let mut mask = 0u64;
            tokenizer.each_token(name, &mut |t| mask |= query_words.mask(t));
            if mask != 0 {
                definition_mask |= mask;
                let count = mask.count_ones();
                if symbol.as_ref().is_none_or(|(best, _)| count > *best) {
                    symbol = Some((count, name.to_owned()));
                }
            }
        }
    }
    if let Some(definitions) = outlined {
        let best = definitions.best(&query_words.term_hashes, |mask| coverage_of(words, mask));
        definition_mask |= best.name;
        passage_mask = best.passage;
        for (i, name) in query_words.identifiers.iter().enumerate() {
            if definitions.defines(name) {
                exact_mask |= 1 << i;
            }
        }
    }
    let identifiers = query_words.identifiers.len();
    Features {
        definition_mask,
        path_mask,
        passage_mask,
        exact_share: if identifiers == 0 {
            0.0
        } else {
            f64::from(exact_mask.count_ones()) / identifiers as f64
        },
        symbol: symbol.map(|(_, name)| name),
        test_or_generated: code && is_test_or_generated(rel),
        example: code && is_example(rel),
    }
}

/// The words by which a query asks about tests.
const TEST_WORDS: &[&str] = &["test", "tests", "testing", "spec", "fixture", "fixtures"];

/// The words by which a query asks for an example program, and the folders holding them.
const EXAMPLE_WORDS: &[&str] = &["example", "examples", "demo", "demos", "sample", "samples"];

/// Whether a word of the query, lowercased, is one of `words`.
fn query_says_any(query: &str, words: &[&str]) -> bool {
    query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| words.contains(&w.to_ascii_lowercase().as_str()))
}

/// Example programs and the code of a documentation site, by a folder of the project-relative
/// path: `examples/`, `example/`, `_examples/` (Go's way of keeping them out of the module's
/// packages), `demo/`, `samples/`, and `docs/` (`docs/conf.py`, a Sphinx theme's module; not
/// `doc/`, which is often a package: cobra's man-page generator).
pub fn is_example(rel: &str) -> bool {
    rel.split('/').rev().skip(1).any(|part| {
        let part = part.trim_start_matches('_').to_ascii_lowercase();
        part == "docs" || EXAMPLE_WORDS.contains(&part.as_str())
    })
}

/// A file's name without its folders and extensions.
fn file_stem(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.split('.').next().unwrap_or(name)
}

/// The file name a test file is named after: `test_testing.py` → `testing`, `mux_test.go` →
/// `mux`, `app.spec.ts` → `app`; `None` for a test file named after nothing (`conftest.py`).
fn tested_subject(rel: &str) -> Option<&str> {
    let stem = file_stem(rel);
    let subject = stem
        .strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_test"))
        .or_else(|| stem.strip_suffix("_tests"))
        .unwrap_or(stem);
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let named = subject != stem || name.contains(".test.") || name.contains(".spec.");
    (named && !subject.is_empty()).then_some(subject)
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
fn snippet(
    doc: &Document,
    tokenizer: Tokenizer,
    terms: &HashMap<&str, f64, BuildHasherDefault<Fnv>>,
) -> String {
    let mut best: Option<(f64, usize)> = None;
    for (i, passage) in doc.passages().enumerate() {
        let mut score = 0.0;
        tokenizer.each_token(passage, &mut |t| {
            if let Some(w) = terms.get(t) {
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
    use crate::recall::loaded::PostingTable;

    /// A code file of the average length whose passages are `passages`.
    fn source(path: &str, passages: &[&str]) -> Document {
        Document::new(path, path, 10.0, "", passages, Some(None))
    }

    /// Two code files (path, passages) that hold each of `words` the same number of times: only
    /// what the ranking reads beyond the postings can part them.
    fn tied(files: [(&str, &[&str]); 2], words: &[(&str, f64)]) -> Corpus {
        let p = |doc, tf| Posting { doc, tf };
        corpus(
            files
                .iter()
                .map(|(path, passages)| source(path, passages))
                .collect(),
            words
                .iter()
                .map(|&(w, tf)| (w, vec![p(0, tf), p(1, tf)]))
                .collect(),
        )
    }

    #[test]
    fn a_plain_word_finds_the_codes_abbreviation_of_it_and_an_identifier_does_not() {
        let p = |doc, tf| Posting { doc, tf };
        let file = |path: &str| source(path, &["def f()"]);
        // Only b.py says `doc` (its abbreviation of "documentation"); a.py says `render` more.
        let c = corpus(
            vec![file("/p/a.py"), file("/p/b.py")],
            vec![
                ("render", vec![p(0, 3.0), p(1, 1.0)]),
                ("doc", vec![p(1, 4.0)]),
            ],
        );
        let top = |query: &str| rank(&c, query, 2, Path::new("/p"))[0].doc_id;
        assert_eq!(top("render the documentation"), 1);
        // `Documentation` as written is an identifier: it means itself, which nothing holds.
        assert_eq!(top("render Documentation"), 0);
    }

    #[test]
    fn a_plain_word_finds_its_synonyms_weighted_below_itself() {
        let p = |doc, tf| Posting { doc, tf };
        let file = |path: &str| source(path, &["def f()"]);
        // a.py says `remove` three times, b.py `delete` once; c.py says neither.
        let c = corpus(
            vec![file("/p/a.py"), file("/p/b.py"), file("/p/c.py")],
            vec![
                ("remove", vec![p(0, 3.0)]),
                ("delete", vec![p(1, 1.0)]),
                ("entry", vec![p(0, 1.0), p(1, 1.0), p(2, 1.0)]),
            ],
        );
        let order = |query: &str| -> Vec<usize> {
            rank(&c, query, 3, Path::new("/p"))
                .iter()
                .map(|h| h.doc_id)
                .collect()
        };
        // The word as written outweighs its synonym held more often; the synonym still lifts
        // a.py above the file holding neither.
        assert_eq!(order("delete the entry"), [1, 0, 2]);
        assert_eq!(order("erase the entry"), [0, 1, 2]);
        // A word no file holds is answered by its synonyms alone, but a synonym does not make
        // a file hold the question: its confidence stays `weak`.
        assert_eq!(order("erase")[..2], [0, 1]);
        let hits = rank(&c, "erase", 1, Path::new("/p"));
        assert_eq!(hits[0].confidence(), "weak");
        // An identifier as written means itself.
        assert_eq!(order("Erase"), Vec::<usize>::new());
        // Memory documents spell their words out: no synonyms.
        let memory = Corpus {
            tokenizer: Tokenizer::Notes,
            ..c
        };
        assert!(rank(&memory, "erase", 3, Path::new("/p")).is_empty());
    }

    #[test]
    fn an_identifier_that_names_a_definition_exactly_ranks_its_file_first() {
        // One file defines `genBashCompletion`, the other `GenBashCompletion`, the name asked for.
        let c = tied(
            [
                (
                    "/p/v2.go",
                    &["func (c *Command) genBashCompletion(w io.Writer) error"],
                ),
                (
                    "/p/v1.go",
                    &["func (c *Command) GenBashCompletion(w io.Writer) error"],
                ),
            ],
            &[
                ("bash", 2.0),
                ("completion", 2.0),
                ("gen", 2.0),
                ("genbashcompletion", 1.0),
            ],
        );
        let hits = rank(&c, "GenBashCompletion", 2, Path::new("/p"));
        assert_eq!(hits[0].doc_id, 1, "{hits:?}");
        // Written in lower case it is not an identifier as written: the tie stays in file order.
        let hits = rank(&c, "genbashcompletion", 2, Path::new("/p"));
        assert_eq!(hits[0].doc_id, 0, "{hits:?}");
    }

    #[test]
    fn a_definition_whose_doc_comment_holds_the_question_lifts_its_file() {
        // The same words in both files: in a.py scattered over two definitions, in b.py in one
        // definition's doc comment.
        let c = tied(
            [
                (
                    "/p/a.py",
                    &[
                        "def f() \u{2014} Opens the pool.",
                        "def g() \u{2014} Closes the socket.",
                    ],
                ),
                ("/p/b.py", &["def h() \u{2014} Keeps one pool per socket."]),
            ],
            &[("pool", 1.0), ("socket", 1.0)],
        );
        let hits = rank(&c, "pool socket", 2, Path::new("/p"));
        assert_eq!(hits[0].doc_id, 1, "{hits:?}");
    }

    #[test]
    fn with_the_outline_a_definition_past_the_stored_passages_names_its_file() {
        use crate::corpus::sidecars::definition_tokens;
        use crate::recall::loaded::{CodeFile, Loaded};
        use crate::recall::outline::Outline;
        use std::sync::Arc;
        // The code index stored only each file's first definition.
        let c = tied(
            [
                ("/p/hub.py", &["def first()"]),
                ("/p/long.py", &["def first()"]),
            ],
            &[("retry", 1.0), ("budget", 1.0)],
        );
        let unit = |path: &str, name: &str, passage: &str| {
            let tokens = definition_tokens(name, passage);
            Document::new(path, name, 0.0, "", [passage, tokens.as_str()], None)
        };
        // long.py's answer comes after 300 other definitions (a table of many groups) and
        // hub.py's definitions hold each word apart, never both in one.
        let mut definitions = vec![
            unit("hub.py#L1-L2", "first", "def first()"),
            unit("hub.py#L3-L4", "retry", "def retry()"),
            unit("hub.py#L5-L6", "budget", "def budget()"),
            unit("long.py#L1-L2", "first", "def first()"),
        ];
        for i in 0..300 {
            let line = 10 + i;
            let name = format!("helper_{i}");
            let signature = format!("def helper_{i}(x) \u{2014} Helps with part {i}.");
            definitions.push(unit(&format!("long.py#L{line}-L{line}"), &name, &signature));
        }
        definitions.push(unit(
            "long.py#L500-L510",
            "Policy.retry_budget",
            "def retry_budget(self) \u{2014} Spend it.",
        ));
        let outline = Corpus {
            documents: definitions,
            ..corpus(Vec::new(), Vec::new())
        };
        let outline =
            Outline::of(Arc::new(Loaded::Code(CodeFile::Partition(outline)))).expect("an outline");
        let query = "retry budget";
        let words = QueryWords::new(&c, query);
        let top = |outline| rank_words(&c, &words, query, 2, Path::new("/p"), outline)[0].doc_id;
        // Without the outline the tie stays in file order; with it, one of long.py's definitions
        // names both words.
        assert_eq!(top(None), 0);
        assert_eq!(top(Some(&outline)), 1);
        // No answer is asked for: none, whatever the outline.
        assert!(rank_words(&c, &words, query, 0, Path::new("/p"), Some(&outline)).is_empty());
        let definitions = outline
            .definitions_of("long.py")
            .expect("long.py's definitions");
        assert!(definitions.defines("retry_budget"));
        assert!(!definitions.defines("Policy"));
        assert!(outline.definitions_of("elsewhere.py").is_none());
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
                    let _ = is_example(&s);
                    let _ = tested_subject(&s);
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

    #[test]
    fn a_test_file_names_the_file_it_tests() {
        for (path, subject) in [
            ("tests/test_testing.py", "testing"),
            ("mux_test.go", "mux"),
            ("pkg/util_tests.rs", "util"),
            ("web/app.spec.ts", "app"),
            ("web/app.test.js", "app"),
        ] {
            assert_eq!(tested_subject(path), Some(subject), "{path}");
        }
        for path in [
            "conftest.py",
            "tests/helpers.py",
            "test_.py",
            "_test.go",
            "web/x.test.d/helper.js",
        ] {
            assert_eq!(tested_subject(path), None, "{path}");
        }
    }

    #[test]
    fn a_test_file_matching_the_question_lifts_the_file_it_tests() {
        let p = |doc, tf| Posting { doc, tf };
        let file = |path: &str| source(path, &["def f()"]);
        // a.py and b.py hold the words alike (a.py, first, would win the tie); the test of b.py
        // holds them many times.
        let c = corpus(
            vec![
                file("/p/src/a.py"),
                file("/p/src/b.py"),
                file("/p/tests/test_b.py"),
            ],
            vec![
                ("jar", vec![p(0, 1.0), p(1, 1.0), p(2, 6.0)]),
                ("store", vec![p(0, 1.0), p(1, 1.0), p(2, 6.0)]),
            ],
        );
        let order: Vec<usize> = rank(&c, "jar store", 3, Path::new("/p"))
            .iter()
            .map(|h| h.doc_id)
            .collect();
        assert_eq!(order, [1, 0, 2]);
    }

    #[test]
    fn example_programs_are_recognised_by_folder() {
        for path in [
            "examples/termui/termui.py",
            "_examples/rest/main.go",
            "docs/example/app.js",
            "docs/conf.py",
            "docs/_themes/flask_theme_support.py",
            "demo/x.rs",
            "samples/basic/main.go",
        ] {
            assert!(is_example(path), "{path}");
        }
        for path in [
            "src/click/core.py",
            "example.go",
            "examples_test.go",
            "exemplary/x.py",
        ] {
            assert!(!is_example(path), "{path}");
        }
    }

    #[test]
    fn an_example_program_ranks_below_the_code_it_shows_unless_the_query_asks_for_one() {
        // Both files hold `retry` alike and name it in their path; the example comes first in
        // the index, which would win the tie.
        let c = tied(
            [
                ("/p/examples/retry/main.go", &["func main()"]),
                ("/p/retry.go", &["func run()"]),
            ],
            &[("retry", 2.0)],
        );
        let first = |query| rank(&c, query, 2, Path::new("/p"))[0].doc_id;
        assert_eq!(first("how are retries done"), 1);
        assert_eq!(first("retry example"), 0);
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
    fn a_file_holding_every_word_outranks_one_repeating_a_word_whose_bm25_is_higher() {
        let p = |doc, tf| Posting { doc, tf };
        let file = |path: &str, length: f64| {
            Document::new(path, path, length, "", ["def f()"], Some(None))
        };
        // a.py says `retry` nine times; b.py, longer, says `retry` and `budget` once each; c.py
        // says `budget` once, so that both words are as rare. a.py's BM25 (2.14 × idf) is
        // above b.py's (1.58 × idf, 1.37 after the length prior): holding half the question,
        // it keeps 0.6 of it with a floor of 0.2 and ranks second (0.65 with 0.3, first).
        let c = corpus(
            vec![
                file("/p/a.py", 10.0),
                file("/p/b.py", 16.0),
                file("/p/c.py", 10.0),
            ],
            vec![
                ("retry", vec![p(0, 9.0), p(1, 1.0)]),
                ("budget", vec![p(1, 1.0), p(2, 1.0)]),
            ],
        );
        let order: Vec<usize> = rank(&c, "retry budget", 3, Path::new("/p"))
            .iter()
            .map(|h| h.doc_id)
            .collect();
        assert_eq!(order, [1, 0, 2]);
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
