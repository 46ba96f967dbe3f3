//! Term postings as the reference builds them: per document, term frequencies in first-occurrence
//! order; terms in global first-seen order; entries in document order; plus each document's
//! `vector_norm_sq`, `avgdl` and `N`.

use crate::recall::tokenize::Tokenizer;
use std::collections::HashMap;

/// The term table's hasher: std's keyed SipHash, a new random key per table. The keys are the
/// project's tokens, which a repository chooses: an unkeyed fast hash (FxHash was used) lets it
/// pick terms that collide, and even plain sequential names (`t0` … `t1864135` in one 16 MB file)
/// clustered enough for a 50 s build.
type TermHashState = std::collections::hash_map::RandomState;

/// Postings under construction and, once finished, as written.
#[derive(Default)]
pub struct Postings {
    ids: HashMap<String, usize, TermHashState>,
    /// `(term, [(doc, tf)])` in first-seen order.
    pub terms: Vec<(String, Vec<(u32, u32)>)>,
    /// Token count per document.
    pub lengths: Vec<u64>,
    /// Per term: the document that last counted it and where in that document's list.
    seen_in: Vec<(u32, u32)>,
}

impl Postings {
    pub fn new() -> Postings {
        Postings::default()
    }

    /// Tokenizes `text` as the next document; returns its token count. A document with no tokens
    /// is not added (callers skip it) and 0 is returned.
    pub fn add(&mut self, text: &str, tokenizer: Tokenizer) -> u64 {
        // Documents are numbered from 1 in `seen_in` so that 0 means "not yet in any".
        let doc = self.lengths.len() as u32;
        let stamp = doc + 1;
        let mut local: Vec<(usize, u32)> = Vec::new();
        let mut length = 0u64;
        let ids = &mut self.ids;
        let terms = &mut self.terms;
        let seen_in = &mut self.seen_in;
        tokenizer.each_token(text, &mut |token| {
            length += 1;
            let id = match ids.get(token) {
                Some(&id) => id,
                None => {
                    let id = terms.len();
                    terms.push((token.to_owned(), Vec::new()));
                    ids.insert(token.to_owned(), id);
                    seen_in.push((0, 0));
                    id
                }
            };
            let (last, pos) = seen_in[id];
            if last == stamp {
                local[pos as usize].1 += 1;
            } else {
                seen_in[id] = (stamp, local.len() as u32);
                local.push((id, 1));
            }
        });
        if length == 0 {
            return 0;
        }
        for (id, tf) in local {
            self.terms[id].1.push((doc, tf));
        }
        self.lengths.push(length);
        length
    }

    /// Number of documents added.
    pub fn n(&self) -> usize {
        self.lengths.len()
    }

    /// Mean document length (`0.0` with no documents), as Python's `sum(ints) / len`.
    pub fn avgdl(&self) -> f64 {
        if self.lengths.is_empty() {
            0.0
        } else {
            self.lengths.iter().sum::<u64>() as f64 / self.lengths.len() as f64
        }
    }

    /// Each document's `Σ (tf·idf)²`, accumulated term by term in postings order.
    pub fn vector_norms(&self) -> Vec<f64> {
        let n = self.n() as f64;
        let mut norms = vec![0.0f64; self.n()];
        for (_, entries) in &self.terms {
            let df = entries.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in entries {
                let w = tf as f64 * idf;
                norms[doc as usize] += w * w;
            }
        }
        norms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_keep_first_seen_order_and_doc_order() {
        let mut p = Postings::new();
        assert_eq!(p.add("gamma alpha gamma", Tokenizer::Prose), 3);
        assert_eq!(p.add("the and", Tokenizer::Prose), 0);
        assert_eq!(p.add("beta gamma", Tokenizer::Prose), 2);
        let terms: Vec<(&str, &[(u32, u32)])> = p
            .terms
            .iter()
            .map(|(t, e)| (t.as_str(), e.as_slice()))
            .collect();
        assert_eq!(
            terms,
            [
                ("gamma", &[(0, 2), (1, 1)][..]),
                ("alpha", &[(0, 1)][..]),
                ("beta", &[(1, 1)][..])
            ]
        );
        assert_eq!(p.n(), 2);
        assert_eq!(p.avgdl(), 2.5);
        // python3: idf(gamma)=log(1+0.5/2.5), idf(alpha)=idf(beta)=log(1+1.5/1.5)
        let g = (1.0f64 + 0.5 / 2.5).ln();
        let a = 2.0f64.ln();
        let norms = p.vector_norms();
        assert_eq!(norms[0], (2.0 * g) * (2.0 * g) + a * a);
        assert_eq!(norms[1], g * g + a * a);
    }

    #[test]
    fn the_term_table_spreads_similar_terms_and_is_keyed() {
        // The table's bucket is the hash's low bits: sequential names (`t0`, `t1`, ...), as a
        // generated or hostile source holds millions of, must not share a few buckets (the
        // build then went quadratic: 50 s for one 16 MB file), and a repository must not be able
        // to compute colliding terms ahead of time, so the hash is keyed per table.
        use std::collections::HashSet;
        use std::hash::BuildHasher;
        let state = TermHashState::default();
        let keys = 1u64 << 16;
        let buckets: HashSet<u64> = (0..keys)
            .map(|i| state.hash_one(format!("t{i}")) & (keys - 1))
            .collect();
        // Uniform hashing fills about 63% of the buckets.
        assert!(buckets.len() as u64 > keys / 2, "{} buckets", buckets.len());
        let other = TermHashState::default();
        assert!((0..4).any(|i| state.hash_one(format!("t{i}")) != other.hash_one(format!("t{i}"))));
    }
}
