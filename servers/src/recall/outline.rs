//! The code-outline sidecar (`references/code-outline.json`): every definition of each file of
//! the `local` partition, methods of classes, impl blocks, traits and interfaces included, with
//! its line range, so a `query_code` hit names the definition that answers and its lines.
//!
//! The file is ours, written by `agentteams-mcp index build` beside the reference's code index
//! (not inside `code-index/`, and not listed in its manifest, so the reference never reads it),
//! in a code-index partition's own format with no postings: each document is one definition,
//! its `path` the file's stored path with a line locator ([`super::locator`]), its `symbol` and
//! `title` the qualified name (`Session.request`), its one passage the signature and doc comment.
//! Its `index_build_id` is the `local` partition's; recall uses it only for that partition, so a
//! code index the reference rebuilt is answered as before, file by file.
//!
//! What this module does not do: find definitions (`index::outline`) or rank files
//! (`relevance`): it only chooses, among the definitions of a file already ranked, the one that
//! answers best.

use super::corpus::{CodeFile, Corpus, Loaded};
use super::locator::parse_locator;
use super::rank::Hit;
use super::relevance::QueryWords;
use std::collections::HashMap;
use std::sync::Arc;

/// The sidecar's file name, in a team dir's `references/`.
pub const OUTLINE_FILE: &str = "code-outline.json";

/// A loaded outline, its definitions grouped by file.
pub struct Outline {
    loaded: Arc<Loaded>,
    /// Stored file path → positions of its definitions in the outline's documents, in order.
    by_file: HashMap<String, Vec<usize>>,
}

impl Outline {
    /// The outline of a loaded file, or `None` when it is not a partition or one of its
    /// documents carries no well-formed locator (then it is not an outline of ours).
    pub fn of(loaded: Arc<Loaded>) -> Option<Outline> {
        let Loaded::Code(CodeFile::Partition(corpus)) = &*loaded else {
            return None;
        };
        let mut by_file: HashMap<String, Vec<usize>> = HashMap::new();
        for (at, doc) in corpus.documents.iter().enumerate() {
            let (path, _, _) = parse_locator(doc.path())?;
            match by_file.get_mut(path) {
                Some(list) => list.push(at),
                None => {
                    by_file.insert(path.to_owned(), vec![at]);
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

    /// How well the best definition of the file stored at `path` answers (0 to 1), for
    /// [`super::relevance::rank_with`]; `0.0` for a file it does not hold.
    pub fn evidence(&self, path: &str, words: &QueryWords) -> f64 {
        let outline = self.corpus();
        self.by_file.get(path).map_or(0.0, |units| {
            words.best_definition(units.iter().map(|&at| &outline.documents[at]))
        })
    }

    /// Whether this outline is the one built with `local` (the same build id).
    pub fn belongs_to(&self, local: &Corpus) -> bool {
        local.build_id.is_some() && local.build_id == self.corpus().build_id
    }

    /// Names each hit's best definition: its `symbol`, its `lines` and its passage as the
    /// snippet. `local` is the partition the hits come from; nothing changes unless this
    /// outline is that partition's (same build id), and a hit none of whose definitions holds a
    /// query word keeps what the file-level ranking gave it.
    pub fn refine(&self, local: &Corpus, query: &str, hits: &mut [Hit]) {
        let outline = self.corpus();
        if !self.belongs_to(local) {
            return;
        }
        let words = QueryWords::new(local, query);
        for hit in hits.iter_mut() {
            let Some(units) = self.by_file.get(&hit.path) else {
                continue;
            };
            let mut best: Option<(f64, usize, u32)> = None;
            for &at in units {
                let unit = &outline.documents[at];
                let score = words.definition_score(unit);
                let Some((_, first, last)) = parse_locator(unit.path()) else {
                    continue;
                };
                let span = last - first;
                // Ties go to the narrower definition: a method over the class that holds it.
                let better = best.is_none_or(|(s, _, w)| score > s || score == s && span < w);
                if score > 0.0 && better {
                    best = Some((score, at, span));
                }
            }
            let Some((_, at, _)) = best else {
                continue;
            };
            let unit = &outline.documents[at];
            let Some((_, first, last)) = parse_locator(unit.path()) else {
                continue;
            };
            hit.symbol = unit.symbol().flatten().map(str::to_owned);
            hit.lines = Some((first, last));
            if let Some(passage) = unit.passages().next() {
                hit.snippet = passage.to_owned();
            }
        }
    }
}
