//! BM25 ranking with the reference's constants, evaluation order and tie-breaks, passage-based
//! snippets, confidence tiers, and the merge of code partitions.
//!
//! Every formula keeps the reference's operation order so scores are bit-identical (Python floats
//! are IEEE doubles, `math.log` is the C library's `log`, like `f64::ln`).

use super::loaded::{Corpus, Document};
use crate::corpus::text::cut_chars;
use crate::corpus::tokenize::Tokenizer;
use std::collections::HashMap;

/// BM25 term-frequency saturation.
pub const K1: f64 = 1.5;
/// BM25 length normalisation.
pub const B: f64 = 0.75;
/// Unrounded score at or above which a hit is `reliable`.
pub const RELIABLE: f64 = 3.0;
/// Unrounded score at or above which a hit is `candidate` (below: `weak`).
pub const CANDIDATE: f64 = 1.0;
/// Passages scored per hit that may become snippets.
pub const SNIPPETS_PER_HIT: usize = 3;
/// Code points a snippet is cut to.
pub const SNIPPET_CHARS: usize = 240;

/// One ranked document of one corpus, with its shown fields copied out, so hits outlive the
/// corpus (`query_code` ranks one partition at a time and may drop each before the next).
#[derive(Debug)]
pub struct Hit {
    /// Position in the corpus's `documents` (the hit's `doc_id`).
    pub doc_id: usize,
    pub path: String,
    pub title: String,
    /// Code documents: the stored symbol, `None` for `null` (or a memory document).
    pub symbol: Option<String>,
    /// Unrounded score (BM25 under the reference's scoring).
    pub score: f64,
    pub snippet: String,
    /// The confidence when the scoring decides it (the product's), else the reference's tier
    /// of the score.
    pub tier: Option<&'static str>,
    /// Memory hits ranked by section (`sections`): the section's first and last line.
    pub lines: Option<(u32, u32)>,
}

impl Hit {
    /// The score as the reference returns it: Python's `round(score, 6)`.
    pub fn rounded_score(&self) -> f64 {
        round6(self.score)
    }

    pub fn confidence(&self) -> &'static str {
        self.tier.unwrap_or_else(|| confidence(self.score))
    }
}

/// The lexical confidence tier of an unrounded score.
pub fn confidence(score: f64) -> &'static str {
    if score >= RELIABLE {
        "reliable"
    } else if score >= CANDIDATE {
        "candidate"
    } else {
        "weak"
    }
}

/// Python's `round(x, 6)`: the correctly rounded 6-decimal value (ties to even on the exact binary
/// value), which Rust's exact decimal formatting computes.
pub fn round6(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.6}").parse().unwrap_or(x)
}

fn idf(n: f64, df: usize) -> f64 {
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The top `k` documents of `corpus` for `query`, by (-score, doc_id), with their snippets.
pub fn rank(corpus: &Corpus, query: &str, k: usize) -> Vec<Hit> {
    if corpus.n == 0.0 {
        return Vec::new();
    }
    let avgdl = if corpus.avgdl == 0.0 {
        1.0
    } else {
        corpus.avgdl
    };
    let mut q_terms: Vec<(&str, f64)> = Vec::new();
    corpus.tokenizer.each_token(query, &mut |t| {
        if let Some((term, list)) = corpus.postings.get(t) {
            q_terms.push((term, idf(corpus.n, list.len())));
        }
    });
    if q_terms.is_empty() {
        return Vec::new();
    }
    let mut scores = vec![0.0f64; corpus.documents.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut seen = vec![false; corpus.documents.len()];
    for &(term, idf) in &q_terms {
        let list = corpus.postings.get(term).map_or(&[][..], |(_, list)| list);
        for posting in list {
            let dl = corpus.documents[posting.doc].length;
            let tf = posting.tf;
            let denom = tf + K1 * ((1.0 - B) + (B * dl) / avgdl);
            scores[posting.doc] += idf * ((tf * (K1 + 1.0)) / denom);
            if !seen[posting.doc] {
                seen[posting.doc] = true;
                touched.push(posting.doc);
            }
        }
    }
    let order = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    if touched.len() > k {
        touched.select_nth_unstable_by(k, order);
        touched.truncate(k);
    }
    touched.sort_unstable_by(order);
    let idf_map: HashMap<&str, f64> = q_terms.iter().copied().collect();
    touched
        .into_iter()
        .map(|doc_id| {
            let doc = &corpus.documents[doc_id];
            Hit {
                doc_id,
                path: doc.path().to_owned(),
                title: doc.title().to_owned(),
                symbol: doc.symbol().flatten().map(str::to_owned),
                score: scores[doc_id],
                snippet: best_snippet(doc, corpus.tokenizer, &q_terms, &idf_map),
                tier: None,
                lines: None,
            }
        })
        .collect()
}

/// The stored passage that best matches the query terms (the reference's first snippet), else
/// the stored snippet.
fn best_snippet(
    doc: &Document,
    tokenizer: Tokenizer,
    q_terms: &[(&str, f64)],
    idf_map: &HashMap<&str, f64>,
) -> String {
    let mut scored: Vec<(f64, usize)> = doc
        .passages()
        .enumerate()
        .map(|(i, p)| (passage_score(p, tokenizer, q_terms, idf_map), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // The reference keeps up to three distinct passages and returns the first; only that one is
    // visible through recall, so the rest need not be built.
    match scored.first() {
        Some(&(_, i)) => cut_chars(doc.passage(i), SNIPPET_CHARS).to_owned(),
        None => doc.snippet().to_owned(),
    }
}

fn passage_score(
    passage: &str,
    tokenizer: Tokenizer,
    q_terms: &[(&str, f64)],
    idf_map: &HashMap<&str, f64>,
) -> f64 {
    let mut tf_local: HashMap<String, f64> = HashMap::new();
    let mut dl = 0usize;
    tokenizer.each_token(passage, &mut |t| {
        dl += 1;
        if idf_map.contains_key(t) {
            *tf_local.entry(t.to_owned()).or_insert(0.0) += 1.0;
        }
    });
    if dl == 0 {
        return 0.0;
    }
    let dl = dl as f64;
    let mut score = 0.0;
    for &(term, _) in q_terms {
        if let Some(&tf) = tf_local.get(term) {
            let idf = idf_map[term];
            score += (idf * (tf * (K1 + 1.0))) / (tf + K1 * ((1.0 - B) + (B * dl) / dl.max(1.0)));
        }
    }
    score
}

/// Merges the per-partition top-`k` lists (in partition order) like the reference: a stable sort
/// by (-rounded score, path, symbol or ""), then the first `k`.
pub fn merge_partitions(mut hits: Vec<Hit>, k: usize) -> Vec<Hit> {
    hits.sort_by(|a, b| {
        b.rounded_score()
            .total_cmp(&a.rounded_score())
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| symbol_key(a).cmp(symbol_key(b)))
    });
    hits.truncate(k);
    hits
}

fn symbol_key(hit: &Hit) -> &str {
    hit.symbol.as_deref().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::loaded::{Posting, PostingTable};

    fn doc(path: &str, length: f64, passages: &[&str]) -> Document {
        let snippet = format!("stored {path}");
        Document::new(path, path, length, &snippet, passages, None)
    }

    /// Three documents, postings written by hand:
    /// d0 "widget widget gear" (3), d1 "widget bolt" (2), d2 "bolt bolt bolt nut" (4); avgdl 3.
    fn p(doc: usize, tf: f64) -> Posting {
        Posting { doc, tf }
    }

    fn corpus() -> Corpus {
        let postings = PostingTable::from_lists(
            [
                ("widget", vec![p(0, 2.0), p(1, 1.0)]),
                ("gear", vec![p(0, 1.0)]),
                ("bolt", vec![p(1, 1.0), p(2, 3.0)]),
                ("nut", vec![p(2, 1.0)]),
            ]
            .into_iter(),
        );
        Corpus {
            tokenizer: Tokenizer::Prose,
            n: 3.0,
            avgdl: 3.0,
            documents: vec![
                doc("a.md", 3.0, &["all about gear", "widget widget talk"]),
                doc("b.md", 2.0, &[]),
                doc("c.md", 4.0, &["bolt", "bolt"]),
            ],
            postings,
            built_at: "2026-10-07T12:34:56Z".into(),
            build_id: None,
            source_kind: None,
        }
    }

    #[test]
    fn bm25_scores_match_a_hand_computation() {
        let c = corpus();
        // idf(widget) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6) = 0.47000362924573563
        // d0: tf 2, dl 3: 2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / 3)) = 5 / 3.5 = 1.4285714...
        //     score = 0.6714337560653366 -> 0.671434
        // d1: tf 1, dl 2: 2.5 / (1 + 1.5 * (0.25 + 0.5)) = 2.5 / 2.125 = 1.1764705882352942
        //     score = 0.5529454461714537 -> 0.552945 (values as Python prints them)
        let hits = rank(&c, "widget", 5);
        assert_eq!(hits.len(), 2);
        assert_eq!((hits[0].doc_id, hits[1].doc_id), (0, 1));
        assert_eq!(hits[0].rounded_score(), 0.671434);
        assert_eq!(hits[1].rounded_score(), 0.552945);
        assert_eq!(hits[0].confidence(), "weak");
        // A repeated query term counts twice; "gear" adds idf ln(1 + 2.5/1.5) = 0.9808292530117263
        // times 2.5 / (1 + 1.5) = 1.0 for d0; Python sums to 2.3236967651423996.
        let hits = rank(&c, "widget widget gear", 5);
        assert_eq!(hits[0].score, 2.3236967651423996);
        assert_eq!(
            hits[0].score,
            0.6714337560653366 + 0.6714337560653366 + 0.9808292530117263
        );
        assert_eq!(hits[0].confidence(), "candidate");
    }

    #[test]
    fn ties_break_by_doc_id_and_k_cuts() {
        let mut c = corpus();
        c.documents[2].length = 2.0;
        // A repeated term keeps its last list, as a Python dict does.
        c.postings = PostingTable::from_lists(
            [
                ("bolt", vec![p(1, 1.0), p(2, 3.0)]),
                ("bolt", vec![p(2, 1.0), p(1, 1.0)]),
            ]
            .into_iter(),
        );
        let hits = rank(&c, "bolt", 5);
        assert_eq!(hits[0].score, hits[1].score);
        assert_eq!((hits[0].doc_id, hits[1].doc_id), (1, 2));
        assert_eq!(rank(&c, "bolt", 1).len(), 1);
        assert!(rank(&c, "unknown words", 5).is_empty());
        c.n = 0.0;
        assert!(rank(&c, "bolt", 5).is_empty());
    }

    #[test]
    fn snippets_pick_the_best_passage_else_the_stored_snippet() {
        let c = corpus();
        let hits = rank(&c, "widget", 5);
        assert_eq!(hits[0].snippet, "widget widget talk");
        assert_eq!(hits[1].snippet, "stored b.md");
        // No passage matches: the first stored passage (sorted by index on equal scores).
        let hits = rank(&c, "nut", 5);
        assert_eq!(hits[0].snippet, "bolt");
    }

    #[test]
    fn repeated_empty_passages_are_dropped_and_snippets_stay_the_same() {
        let mut c = corpus();
        // Only the first empty passage is kept: a later one scores the same 0 and loses the
        // tie on position, whatever the query.
        c.documents[2] = doc("c.md", 4.0, &["", "bolt", "", "", "nut bolt", ""]);
        let kept: Vec<&str> = c.documents[2].passages().collect();
        assert_eq!(kept, ["", "bolt", "nut bolt"]);
        assert_eq!(rank(&c, "nut", 5)[0].snippet, "nut bolt");
        // No passage scores above 0 (a negative idf from a small stored N): the first one wins.
        c.n = 0.5;
        assert_eq!(rank(&c, "bolt", 5)[0].doc_id, 1);
        assert_eq!(rank(&c, "bolt", 5)[1].snippet, "");
        c.documents[2] = doc("c.md", 4.0, &["bolt", "", ""]);
        assert_eq!(c.documents[2].passages().count(), 2);
        assert_eq!(rank(&c, "bolt", 5)[1].snippet, "");
    }

    #[test]
    fn round6_is_python_round() {
        assert_eq!(round6(0.0078125), 0.007812);
        assert_eq!(round6(1.0000005), 1.000001);
        assert_eq!(round6(12.3456785), 12.345678);
        assert_eq!(round6(2.0), 2.0);
        assert_eq!(confidence(2.9), "candidate");
        assert_eq!(confidence(0.99), "weak");
        assert_eq!(confidence(3.0), "reliable");
    }

    #[test]
    fn partitions_merge_by_rounded_score_then_path_then_symbol() {
        let hit = |path: &str, symbol: Option<&str>, score| Hit {
            doc_id: 0,
            path: path.into(),
            title: path.into(),
            symbol: symbol.map(str::to_owned),
            score,
            snippet: String::new(),
            tier: None,
            lines: None,
        };
        let merged = merge_partitions(
            vec![
                hit("b.py", None, 1.0000001),
                hit("a.py", Some("zed"), 1.0),
                hit("a.py", None, 1.0000002),
                hit("a.py", None, 2.0),
            ],
            3,
        );
        let order: Vec<(&str, &str)> = merged
            .iter()
            .map(|h| (h.path.as_str(), symbol_key(h)))
            .collect();
        assert_eq!(order, [("a.py", ""), ("a.py", ""), ("a.py", "zed")]);
        assert_eq!(merged[0].score, 2.0);
    }
}
