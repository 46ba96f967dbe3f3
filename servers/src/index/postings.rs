//! Term postings as the reference builds them: per document, term frequencies in first-occurrence
//! order; terms in global first-seen order; entries in document order; plus each document's
//! `vector_norm_sq`, `avgdl` and `N`.
//!
//! Counting is two steps, so most tokens never touch the large table: a document's tokens are
//! counted in a small table of its own ([`DocumentTerms`]), then each *distinct* term of the
//! document is looked up once in the global table ([`Postings::add_counted`]). Both tables are
//! keyed by the same hash of the term, computed once per token: std's keyed SipHash, whose key
//! is random per [`Postings`], so a repository cannot choose terms that collide.

use crate::corpus::text::sort_prefix;
use crate::corpus::tokenize::Tokenizer;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// The term tables' hasher: std's keyed SipHash, a new random key per [`Postings`]. The keys
/// are the project's tokens, which a repository chooses: an unkeyed fast hash (FxHash was used)
/// lets it pick terms that collide, and even plain sequential names (`t0` … `t1864135` in one
/// 16 MB file) clustered enough for a 50 s build.
type TermHashState = std::collections::hash_map::RandomState;

/// The tables' hash of `term`: SipHash of its bytes under the table's key. (`hash_one(term)`
/// would also feed `str`'s terminator byte, a second call per token; SipHash already mixes the
/// length into its last block, so terms of different lengths stay apart without it.)
fn term_hash(state: &TermHashState, term: &str) -> u64 {
    let mut hasher = state.build_hasher();
    hasher.write(term.as_bytes());
    hasher.finish()
}

/// Both tables grow to keep at least this many slots per entry, so a probe (linear, from the
/// hash's low bits) meets few occupied slots.
const SLOTS_PER_ENTRY: usize = 2;

/// Most terms [`Postings::known_terms`] makes room for ahead (a table of 32 MiB of slots).
const MAX_RESERVED_TERMS: usize = 1 << 22;

/// Slots of a new table (a power of two).
const MIN_SLOTS: usize = 64;

/// An open-addressing index from a term's hash to its number in a list the caller keeps (slot
/// values are the number plus one, 0 is empty), probed linearly from the hash's low bits. The
/// caller keeps each entry's hash and text, so the table holds no strings and grows without
/// hashing any term again. Slots are `u32`, as the postings' term numbers are: half the table
/// of `usize` slots, and a probe is a cache miss less often.
#[derive(Default)]
struct Slots {
    slots: Vec<u32>,
    /// Slots looked at, for the tests that check a flood of similar terms stays linear.
    #[cfg(test)]
    probes: u64,
}

impl Slots {
    /// The number of the entry whose hash is `hash` and for which `same(number)` holds; if there
    /// is none, claims a slot for number `entries` (the entry the caller then appends; `entries`
    /// are held now, `hash_of(number)` gives each one's hash) and returns `None`.
    fn find_or_claim(
        &mut self,
        hash: u64,
        entries: usize,
        hash_of: impl Fn(usize) -> u64,
        same: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if (entries + 1) * SLOTS_PER_ENTRY > self.slots.len() {
            self.grow(entries, &hash_of);
        }
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            #[cfg(test)]
            {
                self.probes += 1;
            }
            match self.slots[at] {
                0 => {
                    self.slots[at] = entries as u32 + 1;
                    return None;
                }
                taken => {
                    let number = taken as usize - 1;
                    if hash_of(number) == hash && same(number) {
                        return Some(number);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Doubles the table (at least [`MIN_SLOTS`]) and places the `entries` held by their hashes.
    fn grow(&mut self, entries: usize, hash_of: &impl Fn(usize) -> u64) {
        self.grow_to((self.slots.len() * 2).max(MIN_SLOTS), entries, hash_of);
    }

    /// Grows the table at once to hold `total` entries without growing again (it holds
    /// `entries` now).
    fn reserve(&mut self, total: usize, entries: usize, hash_of: &impl Fn(usize) -> u64) {
        let needed = (total + 1)
            .saturating_mul(SLOTS_PER_ENTRY)
            .next_power_of_two();
        if needed > self.slots.len() {
            self.grow_to(needed, entries, hash_of);
        }
    }

    /// Makes the table `size` slots and places the `entries` held by their hashes.
    fn grow_to(&mut self, size: usize, entries: usize, hash_of: &impl Fn(usize) -> u64) {
        self.slots = vec![0; size];
        for number in 0..entries {
            let mut at = hash_of(number) as usize & (size - 1);
            while self.slots[at] != 0 {
                #[cfg(test)]
                {
                    self.probes += 1;
                }
                at = (at + 1) & (size - 1);
            }
            self.slots[at] = number as u32 + 1;
        }
    }

    /// Empties the table, which held `entries`: zeroed in place, or made smaller when it is far
    /// larger than they needed (a large document must not make every later one clear its slots),
    /// so clearing costs what filling did.
    fn clear(&mut self, entries: usize) {
        let needed = (entries * SLOTS_PER_ENTRY)
            .next_power_of_two()
            .max(MIN_SLOTS);
        if self.slots.len() > 4 * needed {
            self.slots = vec![0; needed];
        } else {
            self.slots.fill(0);
        }
    }
}

/// One distinct term of a document.
struct CountedTerm {
    hash: u64,
    /// Where its text ends in [`DocumentTerms::text`] (it starts where the previous one's ends).
    end: usize,
    tf: u32,
}

/// One document's terms counted: each distinct term once, in first-occurrence order, with its
/// hash and its count. Made by [`Postings::document_terms`] (it shares that table's hash key) and
/// reused from document to document, so its buffers keep their capacity.
pub struct DocumentTerms {
    state: TermHashState,
    /// The distinct terms' text, back to back.
    text: String,
    terms: Vec<CountedTerm>,
    slots: Slots,
    /// Tokens counted, duplicates included.
    length: u64,
}

impl DocumentTerms {
    fn new(state: TermHashState) -> DocumentTerms {
        DocumentTerms {
            state,
            text: String::new(),
            terms: Vec::new(),
            slots: Slots::default(),
            length: 0,
        }
    }

    /// Tokenizes `text` as one document, replacing what was counted before; returns its token
    /// count.
    pub fn count(&mut self, text: &str, tokenizer: Tokenizer) -> u64 {
        let DocumentTerms {
            state,
            text: terms_text,
            terms,
            slots,
            length,
        } = self;
        slots.clear(terms.len());
        terms.clear();
        terms_text.clear();
        *length = 0;
        tokenizer.each_token(text, &mut |token| {
            *length += 1;
            let hash = term_hash(state, token);
            let found = slots.find_or_claim(
                hash,
                terms.len(),
                |n| terms[n].hash,
                |n| &terms_text[start_of(terms, n)..terms[n].end] == token,
            );
            match found {
                Some(n) => terms[n].tf += 1,
                None => {
                    terms_text.push_str(token);
                    terms.push(CountedTerm {
                        hash,
                        end: terms_text.len(),
                        tf: 1,
                    });
                }
            }
        });
        *length
    }

    /// Tokens counted, duplicates included.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// The distinct terms as `(text, hash, tf)`, in first-occurrence order.
    fn each(&self) -> impl Iterator<Item = (&str, u64, u32)> {
        (0..self.terms.len()).map(|n| {
            let term = &self.terms[n];
            (
                &self.text[start_of(&self.terms, n)..term.end],
                term.hash,
                term.tf,
            )
        })
    }
}

/// Where term `n`'s text starts: where the one before it ends.
fn start_of(terms: &[CountedTerm], n: usize) -> usize {
    if n == 0 {
        0
    } else {
        terms[n - 1].end
    }
}

/// The terms an earlier build numbered ([`Postings::known_terms`]), in the order of their bytes
/// (as its build cache keeps them, which checks the order), and, once met, each one's number in
/// the table being built.
pub struct KnownTerms<'t> {
    terms: Vec<&'t str>,
    /// Per known term, its number in [`Postings::terms`], or `u32::MAX` until first met.
    here: Vec<u32>,
    /// Per known term, the last document (plus one) that named it: a term named twice in one
    /// document is a damaged cache.
    seen_in: Vec<u32>,
    /// `Some` when terms are numbered by their place among the known ones rather than through
    /// the global table ([`Postings::known_terms`]): then the terms met that are not known, with
    /// their numbers.
    new: Option<HashMap<String, u32>>,
}

impl<'t> KnownTerms<'t> {
    /// Whether the table being built (of `terms` terms) holds the known terms and no others,
    /// so each one's place among them is the same in both.
    pub fn same_as_built(&self, terms: usize) -> bool {
        terms == self.terms.len() && self.here.iter().all(|&h| h != u32::MAX)
    }

    /// The known terms, in the order of their bytes.
    pub fn terms(&self) -> &[&'t str] {
        &self.terms
    }

    /// Each known term met so far: its place among the known terms and its number in the
    /// table being built.
    pub fn met(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (self.here.iter().enumerate())
            .filter(|&(_, &h)| h != u32::MAX)
            .map(|(place, &h)| (place, h as usize))
    }
}

/// A term and its entries, `(doc, tf)` in document order.
#[cfg(test)]
pub type TermEntries = (String, Vec<(u32, u32)>);

/// Postings under construction and, once finished, as written. Held as each document's terms
/// (the counting's own output, in a few flat arrays rather than a vector per term, which for a
/// large code base was hundreds of thousands of allocations); [`Postings::by_term`] turns them
/// around for writing.
pub struct Postings {
    state: TermHashState,
    /// The global term table: slots into the terms, each term's hash in `hashes`.
    slots: Slots,
    hashes: Vec<u64>,
    /// The terms' text back to back, in first-seen order; term `i` ends at `ends[i]`.
    text: String,
    ends: Vec<usize>,
    /// Each document's `(term, tf)` in first-occurrence order, back to back; document `d`'s are
    /// `entries[starts[d]..starts[d + 1]]`.
    entries: Vec<(u32, u32)>,
    starts: Vec<usize>,
    /// Token count per document.
    pub lengths: Vec<u64>,
    /// The counting table [`Postings::add`] reuses.
    counted: DocumentTerms,
}

/// The postings turned around: per term (in first-seen order), its `(doc, tf)` entries in
/// document order.
pub struct ByTerm {
    offsets: Vec<usize>,
    entries: Vec<(u32, u32)>,
}

impl ByTerm {
    /// Term `i`'s entries.
    pub fn entries(&self, i: usize) -> &[(u32, u32)] {
        &self.entries[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Number of terms.
    pub fn count(&self) -> usize {
        self.offsets.len() - 1
    }
}

impl Default for Postings {
    fn default() -> Postings {
        Postings::new()
    }
}

impl Postings {
    pub fn new() -> Postings {
        let state = TermHashState::new();
        Postings {
            counted: DocumentTerms::new(state.clone()),
            state,
            slots: Slots::default(),
            hashes: Vec::new(),
            text: String::new(),
            ends: Vec::new(),
            entries: Vec::new(),
            starts: vec![0],
            lengths: Vec::new(),
        }
    }

    /// An empty counting table for documents to be added with [`Postings::add_counted`]; it
    /// hashes with this table's key (it can be filled on another thread).
    pub fn document_terms(&self) -> DocumentTerms {
        DocumentTerms::new(self.state.clone())
    }

    /// Tokenizes `text` as the next document; returns its token count. A document with no tokens
    /// is not added (callers skip it) and 0 is returned.
    pub fn add(&mut self, text: &str, tokenizer: Tokenizer) -> u64 {
        self.add_text(text, tokenizer, None)
    }

    /// Adds the document `counted` (made by this table's [`Postings::document_terms`]) as the
    /// next one: one lookup per distinct term. Returns its token count; a document with no
    /// tokens is not added and 0 is returned.
    pub fn add_counted(&mut self, counted: &DocumentTerms) -> u64 {
        self.add_counted_among(counted, None)
    }

    /// [`Postings::add`] in a table that numbers the terms of `known` (an earlier build's), as
    /// [`Postings::known_terms`] set it up.
    pub fn add_among(&mut self, text: &str, tokenizer: Tokenizer, known: &mut KnownTerms) -> u64 {
        self.add_text(text, tokenizer, Some(known))
    }

    fn add_text(
        &mut self,
        text: &str,
        tokenizer: Tokenizer,
        known: Option<&mut KnownTerms>,
    ) -> u64 {
        let empty = self.document_terms();
        let mut counted = std::mem::replace(&mut self.counted, empty);
        counted.count(text, tokenizer);
        let length = self.add_counted_among(&counted, known);
        self.counted = counted;
        length
    }

    fn add_counted_among(
        &mut self,
        counted: &DocumentTerms,
        mut known: Option<&mut KnownTerms>,
    ) -> u64 {
        if counted.length == 0 {
            return 0;
        }
        for (text, hash, tf) in counted.each() {
            let id = match known.as_deref_mut() {
                Some(known) => self.number_among(text, hash, known),
                None => self.term_number(text, hash),
            };
            self.entries.push((id as u32, tf));
        }
        self.end_document(counted.length);
        counted.length
    }

    /// The number of `text` (hashed `hash`) in a table set up with `known`: when it numbers
    /// terms by their place among them, the known term's (searched among them), else the new
    /// term's, added if it is new; otherwise through the global table.
    fn number_among(&mut self, text: &str, hash: u64, known: &mut KnownTerms) -> usize {
        let Some(new) = &mut known.new else {
            return self.term_number(text, hash);
        };
        if let Ok(n) = known.terms.binary_search(&text) {
            if known.here[n] == u32::MAX {
                known.here[n] = self.push_unhashed(text) as u32;
            }
            return known.here[n] as usize;
        }
        if let Some(&number) = new.get(text) {
            return number as usize;
        }
        let number = self.push_unhashed(text);
        new.insert(text.to_owned(), number as u32);
        number
    }

    /// Appends `text` as a new term without placing it in the global table (numbered among the
    /// known terms, it is found through them).
    fn push_unhashed(&mut self, text: &str) -> usize {
        self.text.push_str(text);
        self.ends.push(self.text.len());
        self.ends.len() - 1
    }

    fn end_document(&mut self, length: u64) {
        self.starts.push(self.entries.len());
        self.lengths.push(length);
    }

    /// The number of `text` (hashed `hash` with this table's key) among the terms, added if it
    /// is new.
    fn term_number(&mut self, text: &str, hash: u64) -> usize {
        let Postings {
            slots,
            hashes,
            text: all,
            ends,
            ..
        } = self;
        let term = |n: usize| &all[if n == 0 { 0 } else { ends[n - 1] }..ends[n]];
        let found = slots.find_or_claim(hash, ends.len(), |n| hashes[n], |n| term(n) == text);
        found.unwrap_or_else(|| {
            self.hashes.push(hash);
            self.push_unhashed(text)
        })
    }

    /// Number of distinct terms.
    pub fn term_count(&self) -> usize {
        self.ends.len()
    }

    /// Term `i`'s text (terms are numbered in first-seen order).
    pub fn term(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// Document `d`'s `(term, tf)` in first-occurrence order.
    pub fn document(&self, d: usize) -> &[(u32, u32)] {
        &self.entries[self.starts[d]..self.starts[d + 1]]
    }

    /// Every term's entries, in document order (a counting sort of the documents' entries).
    pub fn by_term(&self) -> ByTerm {
        let mut offsets = vec![0usize; self.term_count() + 1];
        for &(term, _) in &self.entries {
            offsets[term as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut next = offsets.clone();
        let mut entries = vec![(0u32, 0u32); self.entries.len()];
        for doc in 0..self.n() {
            for &(term, tf) in self.document(doc) {
                let at = &mut next[term as usize];
                entries[*at] = (doc as u32, tf);
                *at += 1;
            }
        }
        ByTerm { offsets, entries }
    }

    /// The postings as `(term, entries)` in first-seen order.
    #[cfg(test)]
    pub fn term_entries(&self) -> Vec<TermEntries> {
        let by_term = self.by_term();
        (0..self.term_count())
            .map(|i| (self.term(i).to_owned(), by_term.entries(i).to_vec()))
            .collect()
    }

    /// A table of the terms an earlier build numbered (`terms`, by number, in the order of their
    /// bytes), for documents added with [`Postings::add_known`] and [`Postings::add_among`], to
    /// an empty table. With `by_place`, a term is numbered by its place among them, found by
    /// binary search for a document read now and not looked for at all for one the earlier build
    /// counted (most of a rebuild's terms): nothing is hashed into the global table. Without, each
    /// is hashed and looked up there at most once, as for documents read now; a search costs
    /// about twenty string comparisons, so `by_place` is for rebuilds that read a little.
    pub fn known_terms<'t>(&mut self, terms: Vec<&'t str>, by_place: bool) -> KnownTerms<'t> {
        debug_assert_eq!(
            self.term_count(),
            0,
            "known terms are set before any document"
        );
        // Room for them at once (up to a bound: the table is the cache's word, not the
        // documents'): the table then does not grow (and rehash) term by term.
        let room = terms.len().min(MAX_RESERVED_TERMS);
        if !by_place {
            let (held, hashes) = (self.ends.len(), &self.hashes);
            self.slots.reserve(held + room, held, &|n| hashes[n]);
            self.hashes.reserve(room);
        }
        self.ends.reserve(room);
        KnownTerms {
            here: vec![u32::MAX; terms.len()],
            seen_in: vec![0; terms.len()],
            terms,
            new: by_place.then(HashMap::new),
        }
    }

    /// Every term's number in the order of their bytes (the postings' keys, sorted). With the
    /// known terms the table was built among, those met are already in order, and only the
    /// others are sorted and merged in.
    pub fn sorted_terms(&self, known: Option<&KnownTerms>) -> Vec<usize> {
        let Some(known) = known else {
            return self.sorted((0..self.term_count()).collect());
        };
        let mut is_known = vec![false; self.term_count()];
        let met: Vec<usize> = (known.here.iter())
            .filter(|&&h| h != u32::MAX)
            .map(|&h| {
                is_known[h as usize] = true;
                h as usize
            })
            .collect();
        let others = self.sorted((0..self.term_count()).filter(|&i| !is_known[i]).collect());
        let mut order = Vec::with_capacity(self.term_count());
        let (mut a, mut b) = (met.iter().peekable(), others.iter().peekable());
        while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
            if self.term(x) < self.term(y) {
                order.push(x);
                a.next();
            } else {
                order.push(y);
                b.next();
            }
        }
        order.extend(a.chain(b));
        order
    }

    /// `terms` sorted by their bytes.
    fn sorted(&self, terms: Vec<usize>) -> Vec<usize> {
        // Terms are distinct, so an unstable sort gives the one order; comparing their first
        // eight bytes as integers first spares most comparisons a visit to the text.
        let mut keyed: Vec<(u64, usize)> = (terms.into_iter())
            .map(|i| (sort_prefix(self.term(i)), i))
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.term(a.1).cmp(self.term(b.1)))
        });
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    /// Adds, as the next document, one an earlier build counted: `length` tokens and `entries`,
    /// `(number in known, tf)` in first-occurrence order. Gives the postings [`Postings::add`]
    /// would give for the same text. `None` when the entries are not what counting gives (a
    /// number `known` does not have, a term twice, a count of zero, counts that do not sum to
    /// the length: a damaged cache, and the caller reads the file instead); nothing is then
    /// added.
    pub fn add_known(
        &mut self,
        length: u64,
        entries: &[(u32, u32)],
        known: &mut KnownTerms<'_>,
    ) -> Option<u64> {
        let doc = self.lengths.len() as u32;
        let mut sum = 0u64;
        for &(n, tf) in entries {
            let seen = known.seen_in.get_mut(n as usize)?;
            if tf == 0 || *seen == doc + 1 {
                return None;
            }
            *seen = doc + 1;
            sum += u64::from(tf);
        }
        if sum != length {
            return None;
        }
        if length == 0 {
            return Some(0);
        }
        let by_place = known.new.is_some();
        for &(n, tf) in entries {
            let slot = &mut known.here[n as usize];
            if *slot == u32::MAX {
                let text = known.terms[n as usize];
                *slot = if by_place {
                    self.push_unhashed(text)
                } else {
                    self.term_number(text, term_hash(&self.state, text))
                } as u32;
            }
            self.entries.push((*slot, tf));
        }
        self.end_document(length);
        Some(length)
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
    pub fn vector_norms(&self, by_term: &ByTerm) -> Vec<f64> {
        let n = self.n() as f64;
        let mut norms = vec![0.0f64; self.n()];
        for i in 0..by_term.count() {
            let entries = by_term.entries(i);
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
    fn documents_counted_before_give_the_postings_of_counting_them_again() {
        let docs = [
            "gear bolt gear",
            "nut",
            "bolt washer gear washer",
            "axle gear",
        ];
        let mut counted = Postings::new();
        for d in docs {
            counted.add(d, Tokenizer::Prose);
        }
        // The earlier build's table in the order of the terms' bytes (as its cache keeps it),
        // without `axle`, which only this build's last document has.
        let mut table: Vec<&str> = (0..counted.term_count())
            .map(|i| counted.term(i))
            .filter(|&t| t != "axle")
            .collect();
        table.sort_unstable();
        let place = |g: u32| table.iter().position(|&t| t == counted.term(g as usize));
        for by_place in [false, true] {
            let mut again = Postings::new();
            let mut known = again.known_terms(table.clone(), by_place);
            // The second and third documents from the cache, the others read: the same postings.
            again.add_among(docs[0], Tokenizer::Prose, &mut known);
            for d in [1, 2] {
                let entries: Vec<(u32, u32)> = (counted.document(d).iter())
                    .map(|&(g, tf)| (place(g).unwrap() as u32, tf))
                    .collect();
                let length = counted.lengths[d];
                assert_eq!(again.add_known(length, &entries, &mut known), Some(length));
            }
            again.add_among(docs[3], Tokenizer::Prose, &mut known);
            assert_eq!(again.term_entries(), counted.term_entries(), "{by_place}");
            assert_eq!(again.lengths, counted.lengths);
            // Sorted through the known terms as by sorting them all; `axle` merged in first.
            let sorted = again.sorted_terms(Some(&known));
            assert_eq!(sorted, again.sorted_terms(None));
            let texts: Vec<&str> = sorted.iter().map(|&i| again.term(i)).collect();
            assert_eq!(texts, ["axle", "bolt", "gear", "nut", "washer"]);
            assert!(!known.same_as_built(again.term_count()));
        }
    }

    #[test]
    fn sorted_terms_merge_the_known_terms_met_with_the_others() {
        // Known terms met and not, and new ones before, between and after them.
        let table = ["bolt", "disk", "fan", "hub"];
        for by_place in [false, true] {
            let mut p = Postings::new();
            let mut known = p.known_terms(table.to_vec(), by_place);
            p.add_among("zinc hub axle disk edge", Tokenizer::Prose, &mut known);
            p.add_known(2, &[(1, 1), (0, 1)], &mut known).unwrap();
            let texts: Vec<&str> = (p.sorted_terms(Some(&known)).iter())
                .map(|&i| p.term(i))
                .collect();
            assert_eq!(
                texts,
                ["axle", "bolt", "disk", "edge", "hub", "zinc"],
                "{by_place}"
            );
            assert!(!known.same_as_built(p.term_count()));
            let mut all = Postings::new();
            let mut known = all.known_terms(table.to_vec(), by_place);
            all.add_among("hub fan disk bolt", Tokenizer::Prose, &mut known);
            // Through the global table, a known term read now is not matched to its place: the
            // next cache's table is then written afresh.
            assert_eq!(known.same_as_built(all.term_count()), by_place);
        }
    }

    #[test]
    fn a_cached_document_whose_terms_do_not_add_up_is_refused_and_adds_nothing() {
        let mut postings = Postings::new();
        let table = ["bolt", "gear"];
        for (length, entries) in [
            (3, vec![(0, 2), (2, 1)]), // a number the table does not have
            (3, vec![(0, 2), (0, 1)]), // a term twice
            (3, vec![(0, 2), (1, 0)]), // a count of zero
            (4, vec![(0, 2), (1, 1)]), // counts that do not sum to the length
            (2, vec![]),               // a length with no terms
        ] {
            for by_place in [false, true] {
                let mut known = postings.known_terms(table.to_vec(), by_place);
                assert_eq!(postings.add_known(length, &entries, &mut known), None);
                assert!(postings.term_count() == 0 && postings.lengths.is_empty());
            }
        }
    }

    #[test]
    fn postings_keep_first_seen_order_and_doc_order() {
        let mut p = Postings::new();
        assert_eq!(p.add("gamma alpha gamma", Tokenizer::Prose), 3);
        assert_eq!(p.add("the and", Tokenizer::Prose), 0);
        assert_eq!(p.add("beta gamma", Tokenizer::Prose), 2);
        let terms = p.term_entries();
        let expected: Vec<TermEntries> = vec![
            ("gamma".into(), vec![(0, 2), (1, 1)]),
            ("alpha".into(), vec![(0, 1)]),
            ("beta".into(), vec![(1, 1)]),
        ];
        assert_eq!(terms, expected);
        assert_eq!(p.n(), 2);
        assert_eq!(p.avgdl(), 2.5);
        // python3: idf(gamma)=log(1+0.5/2.5), idf(alpha)=idf(beta)=log(1+1.5/1.5)
        let g = (1.0f64 + 0.5 / 2.5).ln();
        let a = 2.0f64.ln();
        let norms = p.vector_norms(&p.by_term());
        assert_eq!(norms[0], (2.0 * g) * (2.0 * g) + a * a);
        assert_eq!(norms[1], g * g + a * a);
    }

    /// The postings as the build made them before the per-document table: one lookup per token
    /// in one map of owned strings. The model the two-step count must reproduce exactly.
    fn one_map_per_token(docs: &[String], tokenizer: Tokenizer) -> (Vec<TermEntries>, Vec<u64>) {
        use std::collections::HashMap;
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut terms: Vec<TermEntries> = Vec::new();
        let mut lengths = Vec::new();
        for text in docs {
            let doc = lengths.len() as u32;
            let mut local: Vec<(usize, u32)> = Vec::new();
            let tokens = tokenizer.tokens(text);
            for token in &tokens {
                let id = *ids.entry(token.clone()).or_insert_with(|| {
                    terms.push((token.clone(), Vec::new()));
                    terms.len() - 1
                });
                match local.iter_mut().find(|(t, _)| *t == id) {
                    Some((_, tf)) => *tf += 1,
                    None => local.push((id, 1)),
                }
            }
            if tokens.is_empty() {
                continue;
            }
            for (id, tf) in local {
                terms[id].1.push((doc, tf));
            }
            lengths.push(tokens.len() as u64);
        }
        (terms, lengths)
    }

    /// A document of random identifiers, words and separators over a small vocabulary (so terms
    /// repeat within and across documents), from the xorshift state `seed`.
    fn random_document(seed: &mut u64, words: usize) -> String {
        const PIECES: [&str; 16] = [
            "alpha",
            "Beta",
            "gamma_ray",
            "HTTPServer",
            "x",
            "os.path.join",
            "self",
            "the",
            "é",
            "parseJSON",
            "t1",
            "t2",
            "__init__",
            "a-b",
            "404",
            "3.9",
        ];
        const SEPARATORS: [&str; 6] = [" ", "\n", "(", ", ", ".", "_"];
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let mut text = String::new();
        for _ in 0..words {
            let r = next();
            let piece = PIECES[(r % 16) as usize];
            // Some words made new, so the vocabulary keeps growing across documents.
            if r % 7 == 0 {
                text.push_str(&format!("{piece}{}", r % 5000));
            } else {
                text.push_str(piece);
            }
            text.push_str(SEPARATORS[((r >> 20) % 6) as usize]);
        }
        text
    }

    #[test]
    fn counting_per_document_gives_the_postings_of_one_lookup_per_token() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for tokenizer in [Tokenizer::Code, Tokenizer::Prose, Tokenizer::Notes] {
            for round in 0..4 {
                // Empty documents and documents far larger than the table's first size among them.
                let docs: Vec<String> = (0..60)
                    .map(|i| {
                        let words = [0, 1, 3, 40, 400, 3000][(i + round) % 6];
                        random_document(&mut seed, words)
                    })
                    .collect();
                let mut postings = Postings::new();
                let lengths: Vec<u64> = docs.iter().map(|d| postings.add(d, tokenizer)).collect();
                // Counted by a table made apart, as the reading thread does.
                let mut apart = Postings::new();
                let mut counted = apart.document_terms();
                for d in &docs {
                    counted.count(d, tokenizer);
                    apart.add_counted(&counted);
                }
                let (terms, model_lengths) = one_map_per_token(&docs, tokenizer);
                assert!(terms.len() > 100, "{tokenizer:?}: {} terms", terms.len());
                assert_eq!(
                    postings.term_entries(),
                    terms,
                    "{tokenizer:?} round {round}"
                );
                assert_eq!(postings.lengths, model_lengths);
                assert_eq!(apart.term_entries(), terms);
                assert_eq!(apart.lengths, model_lengths);
                let nonzero: Vec<u64> = lengths.into_iter().filter(|&l| l > 0).collect();
                assert_eq!(nonzero, model_lengths);
            }
        }
    }

    #[test]
    fn a_flood_of_similar_terms_is_counted_in_linear_probes() {
        // Sequential names (`t0` … `t199999`), as a generated or hostile file holds millions of,
        // each twice in one document and again, with as many new ones, in a second: every lookup
        // must look at a few slots on average, in both tables, or the build goes quadratic.
        let names = |from: usize, to: usize| {
            (from..to)
                .map(|i| format!("t{i} t{i} "))
                .collect::<String>()
        };
        let mut postings = Postings::new();
        let mut counted = postings.document_terms();
        let mut tokens = 0;
        let mut distinct = 0;
        for (from, to) in [(0, 200_000), (100_000, 300_000)] {
            tokens += counted.count(&names(from, to), Tokenizer::Code);
            distinct += counted.terms.len() as u64;
            postings.add_counted(&counted);
        }
        assert_eq!(postings.term_count(), 300_000);
        assert!(
            counted.slots.probes <= 3 * tokens,
            "{} probes for {tokens} tokens",
            counted.slots.probes
        );
        assert!(
            postings.slots.probes <= 3 * distinct,
            "{} probes for {distinct} terms",
            postings.slots.probes
        );
    }

    #[test]
    fn the_term_table_spreads_similar_terms_and_is_keyed() {
        // The table's bucket is the hash's low bits: sequential names (`t0`, `t1`, ...), as a
        // generated or hostile source holds millions of, must not share a few buckets (the
        // build then went quadratic: 50 s for one 16 MB file), and a repository must not be able
        // to compute colliding terms ahead of time, so the hash is keyed per table.
        use std::collections::HashSet;
        let state = TermHashState::default();
        let keys = 1u64 << 16;
        let buckets: HashSet<u64> = (0..keys)
            .map(|i| term_hash(&state, &format!("t{i}")) & (keys - 1))
            .collect();
        // Uniform hashing fills about 63% of the buckets.
        assert!(buckets.len() as u64 > keys / 2, "{} buckets", buckets.len());
        let other = TermHashState::default();
        assert!((0..4).any(|i| {
            let term = format!("t{i}");
            term_hash(&state, &term) != term_hash(&other, &term)
        }));
    }
}
