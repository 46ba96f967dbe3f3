//! Names each `query_code` hit's definition from the code outline: among the definitions of a
//! file the ranker already chose, the one that answers best gives the hit its `symbol`, `lines`
//! and snippet.
//!
//! What this module does not do: rank files ([`super::relevance`]) or read the outline
//! ([`super::outline`]); it sits above both, so neither imports the other's caller.

use super::loaded::Corpus;
use super::outline::{Definition, Outline};
use super::rank::Hit;
use super::relevance::{relative, QueryWords};
use std::path::Path;

/// Definitions read per query to choose the hits' definitions, in the hits' order: a query's
/// cost stays bounded when its hits are files of hundreds of definitions each (a test module),
/// and the best hits are always refined (a file holds at most `index::outline::MAX_UNITS`, 400).
pub const MAX_DEFINITIONS_READ: usize = 400;

/// Hits whose definitions' passages are read, beyond their names.
pub const PASSAGES_READ_HITS: usize = 2;

/// Names each hit's best definition: its `symbol`, its `lines` and its passage as the snippet.
/// The hits come from the partition `outline` [belongs to](Outline::belongs_to) and `words` were
/// looked up in it; a hit none of whose definitions holds a query word keeps what the file-level
/// ranking gave it. The first [`PASSAGES_READ_HITS`] hits are judged by their definitions' names
/// and passages, the others by names alone.
pub fn refine(outline: &Outline, words: &QueryWords, root: &Path, hits: &mut [Hit]) {
    let units = outline.corpus();
    let mut budget = MAX_DEFINITIONS_READ;
    for (position, hit) in hits.iter_mut().enumerate() {
        let Some(definitions) = outline.definitions_in(relative(&hit.path, root)) else {
            continue;
        };
        // Hits come best first: a later one past the budget keeps its file-level answer.
        let Some(left) = budget.checked_sub(definitions.len()) else {
            break;
        };
        budget = left;
        // The best hits are worth reading the passages for (a question in other words than
        // the code's is answered by a doc comment); the rest are named by names alone.
        let best = best_definition(units, definitions, words, position < PASSAGES_READ_HITS);
        let Some(Definition { at, first, last }) = best else {
            continue;
        };
        let unit = &units.documents[at];
        hit.symbol = Some(unit.title().to_owned());
        hit.lines = Some((first, last));
        if let Some(passage) = unit.passages().next() {
            hit.snippet = passage.to_owned();
        }
    }
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
