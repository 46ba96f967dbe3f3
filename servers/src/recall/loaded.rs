//! The ranker's form of an index file: documents, the posting table, a memory index or code
//! partition ([`Corpus`]), compact per byte of input whatever the file's shape. Both loading
//! paths (`stream.rs` from tokens, `tree.rs` from a parsed tree) build it; nothing here reads files.

use crate::corpus::text::prefix_of;
use crate::corpus::tokenize::Tokenizer;

/// One document as the ranker needs it, in three allocations whatever its shape: its strings
/// back to back in one buffer, the ends of its passages, and its entry in the corpus's array.
/// A `String` per passage cost 24 to 56 bytes for each `"",` (3 bytes) of the file: a memory
/// index of documents with 80,000 empty paragraphs each grew to 12 times its size.
#[derive(Debug)]
pub struct Document {
    /// `path`, `title`, `snippet`, the symbol (if any), then each passage.
    text: Box<str>,
    /// Ends in `text` of `path`, `title`, `snippet` and the symbol.
    ends: [u32; 4],
    /// Ends in `text` of the passages (each starts where the previous one ends).
    passage_ends: Box<[u32]>,
    /// Token count (`length`), as a float the way the reference's arithmetic uses it.
    pub length: f64,
    symbol: Symbol,
}

/// A document's `symbol`: memory documents have none; code documents a string or `null` (also
/// for a missing key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symbol {
    NotCode,
    Null,
    Text,
}

/// A document's passages as they are read: back to back in one buffer with their ends, only the
/// first empty one kept (see [`Document::new`]).
#[derive(Debug, Default)]
pub(super) struct Passages {
    text: String,
    ends: Vec<u32>,
    empty_seen: bool,
}

impl Passages {
    /// An empty list with room for `count` passages of `bytes` bytes in all.
    pub(super) fn with_capacity(bytes: usize, count: usize) -> Passages {
        Passages {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(count),
            empty_seen: false,
        }
    }

    pub(super) fn push(&mut self, passage: &str) {
        if passage.is_empty() {
            if self.empty_seen {
                return;
            }
            self.empty_seen = true;
        }
        self.text.push_str(passage);
        self.ends.push(self.text.len() as u32);
    }
}

/// Passages of at most this many bytes are copied into a new buffer of the document's exact size
/// when theirs has no room for the head; larger ones grow in place (see `Document::from_parts`).
const PASSAGES_COPIED_BYTES: usize = 64 * 1024;

impl Document {
    /// A document from its fields. Of the passages that are empty strings only the first is
    /// kept: an empty passage scores 0 for every query, so a later one always loses the snippet
    /// choice (by score, then position) to the first, and the results are the same without it.
    pub fn new<S: AsRef<str>>(
        path: &str,
        title: &str,
        length: f64,
        snippet: &str,
        passages: impl IntoIterator<Item = S>,
        symbol: Option<Option<&str>>,
    ) -> Document {
        let mut list = Passages::default();
        for passage in passages {
            list.push(passage.as_ref());
        }
        Document::from_parts([path, title, snippet], length, list, symbol)
    }

    /// A document from its `path`, `title` and `snippet`, its length, passages and symbol.
    pub(super) fn from_parts(
        strings: [&str; 3],
        length: f64,
        passages: Passages,
        symbol: Option<Option<&str>>,
    ) -> Document {
        let symbol_text = symbol.flatten().unwrap_or("");
        let [path, title, snippet] = strings;
        let head_parts = [path, title, snippet, symbol_text];
        let head = head_parts.iter().map(|part| part.len()).sum::<usize>();
        let mut ends = [0u32; 4];
        let mut end = 0;
        for (slot, part) in ends.iter_mut().zip(head_parts) {
            end += part.len();
            *slot = end as u32;
        }
        let mut all = passages.text;
        let text = if all.capacity() - all.len() >= head {
            // The passages' buffer has room for the head: it becomes the document's.
            all.insert_str(0, &head_parts.concat());
            all
        } else if all.len() <= PASSAGES_COPIED_BYTES {
            // One buffer of the exact size, so nothing is reallocated.
            let mut text = String::with_capacity(head + all.len());
            head_parts.iter().for_each(|part| text.push_str(part));
            text.push_str(&all);
            text
        } else {
            // Large passages are not copied beside themselves: a second buffer as large as them
            // would double them at the peak of a load. Theirs grows to take the head.
            all.reserve_exact(head);
            all.insert_str(0, &head_parts.concat());
            all
        };
        let mut passage_ends = passages.ends;
        for end in &mut passage_ends {
            *end += head as u32;
        }
        Document {
            text: text.into_boxed_str(),
            ends,
            passage_ends: passage_ends.into_boxed_slice(),
            length,
            symbol: match symbol {
                None => Symbol::NotCode,
                Some(None) => Symbol::Null,
                Some(Some(_)) => Symbol::Text,
            },
        }
    }

    /// A document known only by its length, until it is read: no allocation (a first pass over
    /// a partition answered through the lookup scores every document by its length alone).
    pub fn length_only(length: f64) -> Document {
        Document {
            text: Box::default(),
            ends: [0; 4],
            passage_ends: Box::default(),
            length,
            symbol: Symbol::Null,
        }
    }

    fn part(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start as usize..self.ends[i] as usize]
    }

    pub fn path(&self) -> &str {
        self.part(0)
    }

    pub fn title(&self) -> &str {
        self.part(1)
    }

    /// The stored `snippet`.
    pub fn snippet(&self) -> &str {
        self.part(2)
    }

    /// Code documents only: `Some(None)` for a stored `null` or a missing key.
    pub fn symbol(&self) -> Option<Option<&str>> {
        match self.symbol {
            Symbol::NotCode => None,
            Symbol::Null => Some(None),
            Symbol::Text => Some(Some(self.part(3))),
        }
    }

    /// `paragraphs` (memory index) or `passages` (code partition), in stored order, without
    /// the repeated empty ones (see [`Document::new`]).
    pub fn passages(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let mut start = self.ends[3];
        self.passage_ends.iter().map(move |&end| {
            let passage = &self.text[start as usize..end as usize];
            start = end;
            passage
        })
    }

    /// The passage at `i` in [`Document::passages`].
    pub fn passage(&self, i: usize) -> &str {
        let start = if i == 0 {
            self.ends[3]
        } else {
            self.passage_ends[i - 1]
        };
        &self.text[start as usize..self.passage_ends[i] as usize]
    }

    /// Bytes this document occupies, its entry in the corpus's array included.
    fn resident_bytes(&self) -> usize {
        std::mem::size_of::<Document>()
            + heap_bytes(self.text.len())
            + heap_bytes(4 * self.passage_ends.len())
    }
}

/// What an allocation of `len` bytes costs: the allocator's header and rounding (16-byte chunks
/// with an 8-byte header in glibc), nothing for an empty one.
fn heap_bytes(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len + 8).next_multiple_of(16).max(32)
    }
}

/// One entry of a postings list: a position in `documents` and a term frequency.
#[derive(Clone, Copy, Debug)]
pub struct Posting {
    pub doc: usize,
    pub tf: f64,
}

/// Every term's postings list, in three flat arrays (a handful of allocations instead of two per
/// term), looked up by binary search over the sorted terms.
#[derive(Debug, Default)]
pub struct PostingTable {
    /// All terms, back to back.
    text: String,
    /// Per term, sorted by term: its span in `text` and in `postings`.
    terms: Vec<TermSpan>,
    postings: Vec<Posting>,
}

#[derive(Clone, Copy, Debug)]
struct TermSpan {
    text: (u32, u32),
    postings: (u32, u32),
}

impl PostingTable {
    fn term(&self, span: &TermSpan) -> &str {
        &self.text[span.text.0 as usize..span.text.1 as usize]
    }

    /// The stored term equal to `term` and its postings, in stored order.
    pub fn get(&self, term: &str) -> Option<(&str, &[Posting])> {
        let i = self
            .terms
            .binary_search_by(|span| self.term(span).cmp(term))
            .ok()?;
        let span = &self.terms[i];
        let list = &self.postings[span.postings.0 as usize..span.postings.1 as usize];
        Some((self.term(span), list))
    }

    /// Every stored term starting with `prefix` and its postings, in term order (a binary search
    /// to the first, then a walk while the prefix holds).
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a [Posting])> + 'a {
        let first = self.terms.partition_point(|span| self.term(span) < prefix);
        self.terms[first..]
            .iter()
            .map(|span| {
                let list = &self.postings[span.postings.0 as usize..span.postings.1 as usize];
                (self.term(span), list)
            })
            .take_while(move |(term, _)| term.starts_with(prefix))
    }

    /// Builds the table from `(term, postings)` in file order; a repeated term keeps its last
    /// list, as a Python dict does.
    pub fn from_lists<'a>(lists: impl Iterator<Item = (&'a str, Vec<Posting>)>) -> PostingTable {
        let mut table = PostingTable::default();
        for (term, list) in lists {
            let first = table.postings.len();
            table.postings.extend(list);
            table.finish_term(term, first);
        }
        table.seal();
        table
    }

    /// Appends one posting to the term being read (the one `finish_term` will name).
    /// Room for `terms` terms of about twelve bytes each, before they are added.
    pub(super) fn reserve_terms(&mut self, terms: usize) {
        self.text.reserve(terms * 12);
        self.terms.reserve(terms);
    }

    pub(super) fn push_posting(&mut self, posting: Posting) {
        self.postings.push(posting);
    }

    /// How many postings the table holds: where the next term's list will start.
    pub(super) fn posting_count(&self) -> usize {
        self.postings.len()
    }

    /// Records `term` as owning the postings pushed since `first` (a `posting_count` taken
    /// before them).
    pub(super) fn finish_term(&mut self, term: &str, first: usize) {
        let text = (
            self.text.len() as u32,
            (self.text.len() + term.len()) as u32,
        );
        self.text.push_str(term);
        self.terms.push(TermSpan {
            text,
            postings: (first as u32, self.postings.len() as u32),
        });
    }

    /// Sorts the terms for lookup, drops all but the last occurrence of a repeated term and
    /// trims the tables to their length; called once every term was added. Sorted in place: a
    /// table of keys beside the terms cost 16 more bytes per term at the peak of a load.
    pub(super) fn seal(&mut self) {
        // Order: a term's first eight bytes as a big-endian number (zero-padded), then its text,
        // then its spans, which grow with its position in the file (two occurrences with the
        // same spans are the same), so a repeated term's occurrences end up in file order. Integers order most terms without
        // touching their text; cold loads sort every term of a file (162k in the standard
        // library's code index).
        // The comparison is most of a cold load's sort. A term's prefix is one load of the eight
        // bytes where it starts in `text` (the next terms' bytes masked off), not a copy of its
        // own; texts are compared as bytes (the order of `str`) only when the prefixes are
        // equal, and the spans only when the texts are.
        let mut terms = std::mem::take(&mut self.terms);
        let text = self.text.as_bytes();
        let bytes = |span: &TermSpan| &text[span.text.0 as usize..span.text.1 as usize];
        let prefix = |span: &TermSpan| {
            let (start, len) = (span.text.0 as usize, (span.text.1 - span.text.0) as usize);
            match text.get(start..).and_then(<[u8]>::first_chunk::<8>) {
                Some(word) if len >= 8 => u64::from_be_bytes(*word),
                Some(word) => u64::from_be_bytes(*word) & !(u64::MAX >> (8 * len)),
                None => prefix_of(bytes(span)),
            }
        };
        terms.sort_unstable_by(|x, y| {
            prefix(x)
                .cmp(&prefix(y))
                .then_with(|| bytes(x).cmp(bytes(y)))
                .then_with(|| x.postings.cmp(&y.postings))
                .then_with(|| x.text.cmp(&y.text))
        });
        let mut kept = 0;
        for i in 0..terms.len() {
            let span = terms[i];
            if kept > 0 && self.term(&terms[kept - 1]) == self.term(&span) {
                terms[kept - 1] = span;
            } else {
                terms[kept] = span;
                kept += 1;
            }
        }
        terms.truncate(kept);
        terms.shrink_to_fit();
        self.terms = terms;
        self.text.shrink_to_fit();
        self.postings.shrink_to_fit();
    }

    /// Bytes the table occupies.
    fn resident_bytes(&self) -> usize {
        heap_bytes(self.text.capacity())
            + heap_bytes(self.terms.capacity() * std::mem::size_of::<TermSpan>())
            + heap_bytes(self.postings.capacity() * std::mem::size_of::<Posting>())
    }
}

/// A memory index or one code partition: everything BM25 ranks over.
#[derive(Debug)]
pub struct Corpus {
    pub tokenizer: Tokenizer,
    /// The stored `N`.
    pub n: f64,
    pub avgdl: f64,
    pub documents: Vec<Document>,
    pub postings: PostingTable,
    pub built_at: String,
    /// `index_build_id`, when the file has one: how the memory-sections sidecar names the
    /// memory index it was built with (`sections`).
    pub build_id: Option<String>,
    /// Partitions only: `source_kind`.
    pub source_kind: Option<String>,
}

/// What a code-index file holds.
#[derive(Debug)]
pub enum CodeFile {
    /// The partitions a manifest lists, in file order, as `(name, file)`.
    Manifest {
        partitions: Vec<(String, String)>,
        built_at: String,
    },
    Partition(Corpus),
}

impl Corpus {
    /// A copy of this corpus's metadata, without its documents and postings.
    pub fn metadata(&self) -> Corpus {
        Corpus {
            tokenizer: self.tokenizer,
            n: self.n,
            avgdl: self.avgdl,
            documents: Vec::new(),
            postings: PostingTable::default(),
            built_at: self.built_at.clone(),
            build_id: self.build_id.clone(),
            source_kind: self.source_kind.clone(),
        }
    }

    /// Bytes the corpus occupies (estimated from its allocations).
    fn resident_bytes(&self) -> usize {
        std::mem::size_of::<Corpus>()
            + heap_bytes(self.documents.capacity() * std::mem::size_of::<Document>())
            + self
                .documents
                .iter()
                .map(|d| d.resident_bytes() - std::mem::size_of::<Document>())
                .sum::<usize>()
            + self.postings.resident_bytes()
            + heap_bytes(self.built_at.capacity())
            + self
                .build_id
                .as_ref()
                .map_or(0, |s| heap_bytes(s.capacity()))
            + self
                .source_kind
                .as_ref()
                .map_or(0, |s| heap_bytes(s.capacity()))
    }
}

impl CodeFile {
    pub fn built_at(&self) -> &str {
        match self {
            CodeFile::Manifest { built_at, .. } => built_at,
            CodeFile::Partition(corpus) => &corpus.built_at,
        }
    }
}

/// A loaded file of either index.
#[derive(Debug)]
pub enum Loaded {
    Memory(Corpus),
    Code(CodeFile),
}

impl Loaded {
    /// An estimate of the bytes the loaded file occupies: what the cache's budget
    /// ([`MAX_CACHE_BYTES`]) counts.
    pub fn resident_bytes(&self) -> usize {
        match self {
            Loaded::Memory(corpus) | Loaded::Code(CodeFile::Partition(corpus)) => {
                corpus.resident_bytes()
            }
            Loaded::Code(CodeFile::Manifest {
                partitions,
                built_at,
            }) => {
                std::mem::size_of::<Loaded>()
                    + heap_bytes(built_at.capacity())
                    + partitions
                        .iter()
                        .map(|(name, file)| {
                            48 + heap_bytes(name.capacity()) + heap_bytes(file.capacity())
                        })
                        .sum::<usize>()
            }
        }
    }
}

/// Which index a file belongs to: decides the schema, the tokenizer and the messages' label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Memory,
    Code,
}

impl IndexKind {
    pub fn label(self) -> &'static str {
        match self {
            IndexKind::Memory => "memory index",
            IndexKind::Code => "code index",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_whichever_way_its_buffer_was_made() {
        let large = "x".repeat(PASSAGES_COPIED_BYTES);
        // Passages of each size, with and without room for the head beside them: the three ways
        // `from_parts` lays out the document's one buffer.
        for (passage, room) in [
            ("p", 0),
            ("p", 64),
            (large.as_str(), 0),
            (large.as_str(), 64),
        ] {
            for symbol in [None, Some(None), Some(Some("Sym.bol"))] {
                let mut passages = Passages::with_capacity(2 * passage.len() + room, 3);
                for text in [passage, "", passage, ""] {
                    passages.push(text);
                }
                let document = Document::from_parts(["a/é.rs", "T", "snip"], 2.0, passages, symbol);
                let label = format!("{} bytes, room {room}, {symbol:?}", passage.len());
                assert_eq!(
                    (document.path(), document.title(), document.snippet()),
                    ("a/é.rs", "T", "snip"),
                    "{label}"
                );
                assert_eq!(document.symbol(), symbol, "{label}");
                let read: Vec<&str> = document.passages().collect();
                assert_eq!(read, [passage, "", passage], "{label}");
                assert_eq!(document.passage(2), passage, "{label}");
            }
        }
    }

    #[test]
    fn the_posting_table_finds_every_term_and_a_repeated_term_keeps_its_last_list() {
        // Terms sharing their first eight bytes, a term that is another's prefix, one with a NUL
        // where padding would be, non-ASCII text and a repeated term.
        let terms = [
            "abcdefgh_two",
            "abcdefgh_one",
            "abcdefgh",
            "ab",
            "ab\u{0}",
            "zeta",
            "\u{e9}t\u{e9}",
            "ab",
            "",
        ];
        let table = PostingTable::from_lists(terms.iter().enumerate().map(|(i, t)| {
            let posting = Posting { doc: i, tf: 1.0 };
            (*t, vec![posting])
        }));
        for (i, term) in terms.iter().enumerate() {
            let (stored, list) = table.get(term).unwrap();
            assert_eq!(stored, *term);
            let expected = if *term == "ab" { 7 } else { i };
            assert_eq!(list[0].doc, expected, "{term:?}");
        }
        assert!(table.get("abcdefg").is_none());
        assert!(table.get("abcdefgh_").is_none());
        assert_eq!(table.terms.len(), terms.len() - 1);
        let sorted: Vec<&str> = table.terms.iter().map(|s| table.term(s)).collect();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]), "{sorted:?}");
    }

    #[test]
    fn random_tables_sort_and_keep_terms_as_a_map_of_their_last_lists_would() {
        // Short terms beside long ones (a short term's prefix is read from the bytes after it,
        // masked), terms at the end of the text, shared prefixes, repeats and non-ASCII.
        let pieces = [
            "a", "b", "ab", "abcdefgh", "\u{e9}", "\u{0}", "z", "abcdefg",
        ];
        let mut next = crate::scratch::test_rng(0x9E37_79B9);
        for round in 0..300 {
            let terms: Vec<String> = (0..next() % 40)
                .map(|_| {
                    (0..next() % 4)
                        .map(|_| pieces[next() % pieces.len()])
                        .collect()
                })
                .collect();
            let table = PostingTable::from_lists(
                terms
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.as_str(), vec![Posting { doc: i, tf: 1.0 }])),
            );
            let model: std::collections::BTreeMap<&str, usize> = terms
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_str(), i))
                .collect();
            let stored: Vec<(&str, usize)> = table
                .with_prefix("")
                .map(|(term, list)| (term, list[0].doc))
                .collect();
            let expected: Vec<(&str, usize)> = model.into_iter().collect();
            assert_eq!(stored, expected, "round {round}: {terms:?}");
        }
    }

    #[test]
    fn with_prefix_walks_the_terms_sharing_a_prefix_in_order() {
        let table = PostingTable::from_lists(
            ["parse", "parser", "pars", "part", "par", "parsing", "zeta"]
                .iter()
                .enumerate()
                .map(|(i, t)| (*t, vec![Posting { doc: i, tf: 1.0 }])),
        );
        let found: Vec<&str> = table.with_prefix("pars").map(|(t, _)| t).collect();
        assert_eq!(found, ["pars", "parse", "parser", "parsing"]);
        assert_eq!(table.with_prefix("zz").count(), 0);
        assert_eq!(table.with_prefix("").count(), 7);
    }
}
