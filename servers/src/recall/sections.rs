//! The memory-sections sidecar (`references/memory-sections.json`): the memory index's documents
//! cut at their headings, so `query_index` ranks a long file by its sections and a hit names the
//! heading and the lines that answer.
//!
//! The file is ours, written by `agentteams-mcp index build` beside the reference's
//! `memory-index.json`, in that file's own format (so one validator, loader and ranker serve
//! both, and the reference, which reads only `memory-index.json`, never sees it). Two
//! conventions make it a sidecar:
//! - each document's `path` is its file's stored path with a line locator appended
//!   ([`crate::corpus::locator`]: `docs/guide.md#L12-L40`), and its `title` the section's heading path
//!   (`Guide › Install`);
//! - its `index_build_id` is the memory index's. recall uses the sidecar only when the two match,
//!   so a memory index rebuilt by the reference (or by an older builder) is ranked whole, never
//!   with sections of another build.
//!
//! What this module does not do: split Markdown (`index::sections`) or score (`relevance`).

use super::loaded::{Corpus, Document};
use super::rank::Hit;
use super::relevance;
use crate::corpus::locator::parse_locator;
use std::path::Path;

/// Section hits ranked per file asked for: a file's several matching sections collapse into its
/// best one, so more than `k` sections are needed to find `k` files.
const SECTIONS_PER_HIT: usize = 4;
/// The top `k` memory documents for `query`, ranked by their best section: each hit is the
/// memory index's document (its `doc_id` and stored path), titled with the section's heading path,
/// with the section's snippet, score and confidence, and its `lines`. `None` when `sections` is
/// not the sidecar of `memory` (their build ids differ or are missing, or a section names a file
/// the memory index does not hold): the caller then ranks whole documents.
pub fn rank(
    memory: &Corpus,
    sections: &Corpus,
    query: &str,
    k: usize,
    root: &Path,
) -> Option<Vec<Hit>> {
    if memory.build_id.is_none() || memory.build_id != sections.build_id {
        return None;
    }
    // A file with many matching sections could fill the first `k × SECTIONS_PER_HIT` by itself
    // and hide every other file: widen until `k` files are found or every section is ranked.
    let mut wanted = k.saturating_mul(SECTIONS_PER_HIT);
    loop {
        let ranked = relevance::rank(sections, query, wanted, root);
        let exhausted = ranked.len() < wanted;
        let hits = distinct_files(memory, ranked, k)?;
        if hits.len() == k || exhausted || wanted >= sections.documents.len() {
            return Some(hits);
        }
        wanted = wanted.saturating_mul(SECTIONS_PER_HIT);
    }
}

/// The best section of each file, in rank order, as hits on the memory index's documents; at
/// most `k`. `None` when a section's path is not a locator of a document `memory` holds.
fn distinct_files(memory: &Corpus, ranked: Vec<Hit>, k: usize) -> Option<Vec<Hit>> {
    let mut hits: Vec<Hit> = Vec::with_capacity(k);
    for mut hit in ranked {
        let (path, first, last) = parse_locator(&hit.path)?;
        // A file already found is passed over before it is looked up, so the scan below runs
        // once per distinct file.
        if hits.iter().any(|h| h.path == path) {
            continue;
        }
        let doc_id = document_of(&memory.documents, path)?;
        hit.doc_id = doc_id;
        hit.path = path.to_owned();
        hit.lines = Some((first, last));
        hits.push(hit);
        if hits.len() == k {
            break;
        }
    }
    Some(hits)
}

/// The position of the document stored at `path`. A linear scan, once per distinct file of the
/// ranked sections, over a memory index of a team's notes (hundreds of documents): cheaper than
/// building a map on every query.
fn document_of(documents: &[Document], path: &str) -> Option<usize> {
    documents.iter().position(|d| d.path() == path)
}
