//! The code-outline sidecar (`references/code-outline.json`): every definition of each file of
//! the `local` partition, methods of classes, impl blocks, traits and interfaces included, with
//! its line range, so a `query_code` hit names the definition that answers and its lines.
//!
//! The file is ours, written by `agentteams-mcp index build` beside the reference's code index
//! (not inside `code-index/`, and not listed in its manifest, so the reference never reads it),
//! in a code-index partition's own format with no postings: each document is one definition,
//! its `path` the file's path relative to the project with a line locator ([`super::locator`]),
//! its `title` the qualified name (`Session.request`), its first passage the signature and doc
//! comment, its second the definition's tokens made at build time ([`definition_tokens`]), so a
//! query never runs the tokenizer over definitions.
//! Its `index_build_id` is the `local` partition's; recall uses it only for that partition, so a
//! code index the reference rebuilt is answered as before, file by file.
//!
//! What this module does not do: find definitions (`index::outline`) or rank files
//! (`relevance`): it only chooses, among the definitions of a file already ranked, the one that
//! answers best.

use super::corpus::{CodeFile, Corpus, Loaded};
use super::locator::parse_locator;
use super::rank::Hit;
use super::relevance::{relative, QueryWords};
use super::tokenize::Tokenizer;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The sidecar's file name, in a team dir's `references/`.
pub const OUTLINE_FILE: &str = "code-outline.json";

/// Separates a definition's name tokens from its passage's in [`definition_tokens`].
pub const NAME_SEPARATOR: &str = " | ";

/// Tokens of a definition's passage kept beside its name's (the first ones: its signature's,
/// then its doc comment's): what choosing a hit's definition reads per definition of the file.
pub const MAX_PASSAGE_TOKENS: usize = 24;

/// A definition's tokens (the code tokenizer's, each once): those of its qualified name, then
/// [`NAME_SEPARATOR`], then at most [`MAX_PASSAGE_TOKENS`] other tokens of its passage,
/// space-separated (`session.request session request | def self method url sends one`).
pub fn definition_tokens(name: &str, passage: &str) -> String {
    // One buffer, no allocation per token; a token is new if the buffer does not hold it yet
    // (a few dozen short tokens: scanning them is cheaper than a set).
    let mut out = String::with_capacity(name.len() + passage.len());
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

/// Definitions read per query to choose the hits' definitions, in the hits' order: a query's
/// cost stays bounded when its hits are files of hundreds of definitions each (a test module),
/// and the best hits are always refined (a file holds at most `index::outline::MAX_UNITS`, 400).
pub const MAX_DEFINITIONS_READ: usize = 400;

/// Hits whose definitions' passages are read, beyond their names.
pub const PASSAGES_READ_HITS: usize = 2;

/// One definition of a file: its position in the outline's documents and its lines, read from
/// its locator once, when the outline is loaded.
#[derive(Clone, Copy, Debug)]
struct Definition {
    at: usize,
    first: u32,
    last: u32,
}

/// The best-scoring of a file's `definitions`; ties go to the narrower definition (a method over
/// the class that holds it); `None` when none scores.
fn best_definition(
    outline: &Corpus,
    definitions: &[Definition],
    words: &QueryWords,
    passages: bool,
) -> Option<Definition> {
    let mut best: Option<(f64, Definition)> = None;
    for &definition in definitions {
        let score = words.definition_score(&outline.documents[definition.at], passages);
        let span = definition.last - definition.first;
        let better = best.is_none_or(|(s, b)| score > s || score == s && span < b.last - b.first);
        if score > 0.0 && better {
            best = Some((score, definition));
        }
    }
    best.map(|(_, definition)| definition)
}

/// The words of one file's definitions, for ranking the file ([`super::relevance`]): every
/// definition's name tokens, and its passage's (signature and doc comment) tokens beside them,
/// each with the definitions holding it; and the names as written (`Command.InitDefaultHelpCmd`
/// → `InitDefaultHelpCmd`). Made from the outline the first time a query ranks the file, then
/// kept with the outline (dropped with it): at most the outline's stored tokens of the files
/// ever ranked, each once per definition holding it (`MAX_UNITS` definitions of at most
/// `MAX_PASSAGE_TOKENS` passage tokens per file).
#[derive(Debug, Default)]
pub struct DefinitionWords {
    /// `(token, definition)` pairs of the names' tokens, sorted.
    names: Vec<(Box<str>, u32)>,
    /// `(token, definition)` pairs of the names' and passages' tokens, sorted.
    passages: Vec<(Box<str>, u32)>,
    /// The definitions' names as written, sorted.
    exact: Vec<Box<str>>,
    definitions: usize,
}

impl DefinitionWords {
    fn of(outline: &Corpus, definitions: &[Definition]) -> DefinitionWords {
        let mut words = DefinitionWords {
            definitions: definitions.len(),
            ..DefinitionWords::default()
        };
        for (position, definition) in definitions.iter().enumerate() {
            // At most `MAX_UNITS` (400) definitions per file: the position fits.
            let position = u32::try_from(position).unwrap_or(u32::MAX);
            let unit = &outline.documents[definition.at];
            let qualified = unit.title();
            let name = qualified.rsplit('.').next().unwrap_or(qualified);
            words.exact.push(name.into());
            // The tokens as the builder stored them (`definition_tokens`), else made here (an
            // outline of another writer).
            let stored = unit
                .passages()
                .nth(1)
                .and_then(|t| t.split_once(NAME_SEPARATOR));
            let (name_tokens, passage_tokens) = match stored {
                Some((name_tokens, passage_tokens)) => {
                    (name_tokens.to_owned(), passage_tokens.to_owned())
                }
                None => {
                    let passage = unit.passages().next().unwrap_or("");
                    match definition_tokens(qualified, passage).split_once(NAME_SEPARATOR) {
                        Some((n, p)) => (n.to_owned(), p.to_owned()),
                        None => (String::new(), String::new()),
                    }
                }
            };
            for token in name_tokens.split(' ').filter(|t| !t.is_empty()) {
                words.names.push((token.into(), position));
                words.passages.push((token.into(), position));
            }
            for token in passage_tokens.split(' ').filter(|t| !t.is_empty()) {
                words.passages.push((token.into(), position));
            }
        }
        words.names.sort_unstable();
        words.names.dedup();
        words.passages.sort_unstable();
        words.passages.dedup();
        words.exact.sort_unstable();
        words.exact.dedup();
        words
    }

    /// The bits of the query words held by the definition whose name holds the most: `terms`
    /// are the query's variant terms with their words' bits, `share` a mask's weight.
    pub fn best_name(&self, terms: &[(&str, u64)], share: impl Fn(u64) -> f64) -> u64 {
        best_mask(&self.names, self.definitions, terms, share)
    }

    /// As [`best_name`](Self::best_name), by each definition's name, signature and doc comment.
    pub fn best_passage(&self, terms: &[(&str, u64)], share: impl Fn(u64) -> f64) -> u64 {
        best_mask(&self.passages, self.definitions, terms, share)
    }

    /// Whether a definition of the file is named `name`, exactly as written.
    pub fn defines(&self, name: &str) -> bool {
        self.exact.binary_search_by(|e| (**e).cmp(name)).is_ok()
    }
}

/// The mask of the definition holding the heaviest share of `terms`' bits in `pairs` (sorted
/// `(token, definition)`), `0` when none holds any.
fn best_mask(
    pairs: &[(Box<str>, u32)],
    definitions: usize,
    terms: &[(&str, u64)],
    share: impl Fn(u64) -> f64,
) -> u64 {
    let mut masks = vec![0u64; definitions];
    for &(term, bits) in terms {
        let first = pairs.partition_point(|(t, _)| &**t < term);
        for (_, definition) in pairs[first..].iter().take_while(|(t, _)| &**t == term) {
            if let Some(mask) = masks.get_mut(*definition as usize) {
                *mask |= bits;
            }
        }
    }
    let mut best = (0.0, 0u64);
    for mask in masks {
        if mask != 0 && mask != best.1 {
            let weight = share(mask);
            if weight > best.0 {
                best = (weight, mask);
            }
        }
    }
    best.1
}

/// One file's definitions in the outline.
struct FileDefinitions {
    definitions: Vec<Definition>,
    words: OnceLock<DefinitionWords>,
}

/// A loaded outline, its definitions grouped by file.
pub struct Outline {
    loaded: Arc<Loaded>,
    /// File path relative to the project → its definitions, in order.
    by_file: HashMap<String, FileDefinitions>,
}

impl Outline {
    /// The outline of a loaded file, or `None` when it is not a partition or one of its
    /// documents carries no well-formed locator (then it is not an outline of ours).
    pub fn of(loaded: Arc<Loaded>) -> Option<Outline> {
        let Loaded::Code(CodeFile::Partition(corpus)) = &*loaded else {
            return None;
        };
        let mut by_file: HashMap<String, FileDefinitions> = HashMap::new();
        for (at, doc) in corpus.documents.iter().enumerate() {
            let (path, first, last) = parse_locator(doc.path())?;
            let definition = Definition { at, first, last };
            match by_file.get_mut(path) {
                Some(file) => file.definitions.push(definition),
                None => {
                    let file = FileDefinitions {
                        definitions: vec![definition],
                        words: OnceLock::new(),
                    };
                    by_file.insert(path.to_owned(), file);
                }
            }
        }
        Some(Outline { loaded, by_file })
    }

    /// Whether this outline was loaded from `loaded` (the loader's cache hands out the same
    /// `Arc` until the file changes).
    pub fn is_of(&self, loaded: &Arc<Loaded>) -> bool {
        Arc::ptr_eq(&self.loaded, loaded)
    }

    fn corpus(&self) -> &Corpus {
        match &*self.loaded {
            Loaded::Code(CodeFile::Partition(corpus)) => corpus,
            // `of` admits partitions only.
            _ => unreachable!("an outline is a partition"),
        }
    }

    /// The words of the definitions of the file at `rel` (relative to the project), `None`
    /// when the outline holds none of it.
    pub fn definitions_of(&self, rel: &str) -> Option<&DefinitionWords> {
        let file = self.by_file.get(rel)?;
        Some(
            file.words
                .get_or_init(|| DefinitionWords::of(self.corpus(), &file.definitions)),
        )
    }

    /// Whether this outline is the one built with `local` (the same build id).
    pub fn belongs_to(&self, local: &Corpus) -> bool {
        local.build_id.is_some() && local.build_id == self.corpus().build_id
    }

    /// Names each hit's best definition: its `symbol`, its `lines` and its passage as the
    /// snippet. The hits come from the partition this outline [belongs to](Outline::belongs_to)
    /// and `words` were looked up in it; a hit none of whose definitions holds a query word
    /// keeps what the file-level ranking gave it. The first [`PASSAGES_READ_HITS`] hits are
    /// judged by their definitions' names and passages, the others by names alone.
    pub fn refine(&self, words: &QueryWords, root: &Path, hits: &mut [Hit]) {
        let outline = self.corpus();
        let mut budget = MAX_DEFINITIONS_READ;
        for (position, hit) in hits.iter_mut().enumerate() {
            let Some(FileDefinitions { definitions, .. }) =
                self.by_file.get(relative(&hit.path, root))
            else {
                continue;
            };
            // Hits come best first: a later one past the budget keeps its file-level answer.
            let Some(left) = budget.checked_sub(definitions.len()) else {
                break;
            };
            budget = left;
            // The best hits are worth reading the passages for (a question in other words than
            // the code's is answered by a doc comment); the rest are named by names alone.
            let best = best_definition(outline, definitions, words, position < PASSAGES_READ_HITS);
            let Some(Definition { at, first, last }) = best else {
                continue;
            };
            let unit = &outline.documents[at];
            hit.symbol = Some(unit.title().to_owned());
            hit.lines = Some((first, last));
            if let Some(passage) = unit.passages().next() {
                hit.snippet = passage.to_owned();
            }
        }
    }
}
