//! Answering a query on the `local` partition from the parts the code-lookup sidecar
//! ([`crate::corpus::lookup`]) points at: the postings of the query's words, the documents the
//! first pass ranks best and their files' definitions in the outline, read where they lie, so
//! neither file is loaded whole and a first answer costs what the query touches, not what the
//! index holds.
//!
//! Answers are the whole load's, to the byte: the same `QueryWords` (from the sidecar's term
//! table, with each term's document count), the same first pass over a corpus whose documents
//! are lengths alone until the candidates are read, the same re-scoring and refinement over the
//! candidates' documents and an outline of their files' definitions. Every part read is
//! validated as a whole load validates it, and checked against the sidecar (a posting list's
//! term and length, a document's `doc_id` and length); any disagreement, a file that changed,
//! or a read that fails gives `None`, and the caller loads the files whole, which decides and
//! words any error.
//!
//! Not for: deciding when the sidecar is used ([`super::Recall`] does: large partitions, the
//! product's mode) or writing it (`index build`).

use super::loaded::{CodeFile, Corpus, Document, IndexKind, Loaded, PostingTable};
use super::outline::Outline;
use super::rank::Hit;
use super::refine;
use super::relevance::{FirstPass, QueryWords, Vocabulary};
use super::stream;
use crate::corpus::lookup::{Cuts, Lookup, LOOKUP_FILE, MAX_LOOKUP_BYTES};
use crate::corpus::teamdir;
use crate::corpus::tokenize::Tokenizer;
use agentteams_mcp::file_identity::FileIdentity;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The lookup of one `local.json` and outline, with both files open: what it was made from is
/// what it reads, whatever the paths name later (the caller keeps it by the files' [`LookupKey`]
/// and opens another when the key changes).
pub struct LocalLookup {
    lookup: Lookup,
    local: File,
    outline: File,
    /// The partition's metadata (its skeleton, validated and converted): no documents, no
    /// postings.
    partition: Corpus,
    /// The outline's.
    outline_meta: Corpus,
}

/// The identities of the sidecar, `local.json` and the outline at their paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LookupKey([Option<FileIdentity>; 3]);

impl LookupKey {
    /// The sidecar's, `local.json`'s and the outline's, `None` for one that cannot be stated.
    pub fn identities(&self) -> [Option<FileIdentity>; 3] {
        self.0
    }
}

/// Where the three files are, confined to the project.
pub struct LookupPaths {
    sidecar: PathBuf,
    local: PathBuf,
    outline: PathBuf,
}

impl LookupPaths {
    /// The paths for the team dir `team`, each confined to `root`; `None` when one resolves
    /// outside it.
    pub fn of(root: &Path, team: &Path) -> Option<LookupPaths> {
        let references = team.join("references");
        let confined = |path: PathBuf| teamdir::confine(root, &path).ok();
        Some(LookupPaths {
            sidecar: confined(references.join(LOOKUP_FILE))?,
            local: confined(references.join("code-index").join("local.json"))?,
            outline: confined(references.join(crate::corpus::sidecars::OUTLINE_FILE))?,
        })
    }

    /// The partition's path (resolved): the one a manifest entry must name for the sidecar to
    /// answer for it.
    pub fn local(&self) -> &Path {
        &self.local
    }

    /// The files' identities now (a `stat` each).
    pub fn key(&self) -> LookupKey {
        LookupKey([&self.sidecar, &self.local, &self.outline].map(|p| FileIdentity::followed(p)))
    }
}

impl LocalLookup {
    /// The lookup at `paths`, if the sidecar is there, valid, and bound to the two files the
    /// paths name (the files opened are the ones it was written for, whatever happens to the
    /// paths after).
    pub fn open(paths: &LookupPaths) -> Option<LocalLookup> {
        let bytes =
            agentteams_mcp::regular_file::read_at_most(&paths.sidecar, MAX_LOOKUP_BYTES).ok()??;
        let lookup = Lookup::parse(bytes).ok()?;
        let open = |path: &Path, bound: &FileIdentity| {
            let file = agentteams_mcp::regular_file::open(path).ok()?;
            (FileIdentity::of(&file.metadata().ok()?) == *bound).then_some(file)
        };
        let local = open(&paths.local, &lookup.local)?;
        let outline = open(&paths.outline, &lookup.outline)?;
        let partition = skeleton(&local, lookup.local.len, &lookup.local_cuts)?;
        let outline_meta = skeleton(&outline, lookup.outline.len, &lookup.outline_cuts)?;
        if partition.source_kind.as_deref() != Some("local-script")
            || partition.build_id.is_none()
            || partition.build_id != outline_meta.build_id
        {
            return None;
        }
        Some(LocalLookup {
            lookup,
            local,
            outline,
            partition,
            outline_meta,
        })
    }

    /// The partition's metadata: `built_at`, `N`, `avgdl`, build id (no documents).
    pub fn partition(&self) -> &Corpus {
        &self.partition
    }

    /// Every document's stored path, in order.
    pub fn paths(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.lookup.paths()
    }

    /// The top `k` of the partition for `query`, as the whole load ranks them with the outline
    /// (see the module docs); `None` when a part read disagrees with the sidecar or cannot be
    /// read.
    pub fn rank(&self, query: &str, k: usize, root: &Path) -> Option<Vec<Hit>> {
        let words = QueryWords::new(self, query);
        let mut corpus = self.scored_corpus(&words)?;
        let first = FirstPass::score(&corpus, &words, k);
        let candidates: Vec<usize> = first.candidates().collect();
        let mut definitions = b"[".to_vec();
        for &d in &candidates {
            let entry = self.lookup.document(d);
            let bytes = read(&self.local, range(entry.local))?;
            let (document, doc_id) = stream::document_at(&bytes, IndexKind::Code)?;
            if doc_id != Some(d as f64) || document.length != entry.length as f64 {
                return None;
            }
            corpus.documents[d] = document;
            if entry.outline != (0, 0) {
                if definitions.len() > 1 {
                    definitions.extend_from_slice(b", ");
                }
                definitions.extend(read(&self.outline, range(entry.outline))?);
            }
        }
        definitions.push(b']');
        let outline = Corpus {
            documents: stream::documents_in(&definitions, IndexKind::Code)?,
            ..self.outline_meta.metadata()
        };
        let outline = Outline::of(Arc::new(Loaded::Code(CodeFile::Partition(outline))))?;
        if !outline.belongs_to(&corpus) {
            return None;
        }
        let mut hits = first.rescore(&corpus, &words, query, k, root, Some(&outline));
        refine::refine(&outline, &words, root, &mut hits);
        Some(hits)
    }

    /// The partition as the first pass needs it: every document its length alone, and the
    /// postings of the query's terms, each read and checked against the sidecar.
    fn scored_corpus(&self, words: &QueryWords) -> Option<Corpus> {
        let count = self.lookup.document_count();
        let mut lists = Vec::new();
        for term in words.terms() {
            let entry = self.lookup.term(term)?;
            let (start, end) = entry.postings;
            let mut bytes = Vec::with_capacity((end - start) as usize + 2);
            bytes.push(b'{');
            bytes.extend(read(&self.local, range(entry.postings))?);
            bytes.push(b'}');
            let (stored, list) = stream::term_postings(&bytes)?;
            if stored != term
                || list.len() != entry.documents
                || list.iter().any(|p| p.doc >= count)
            {
                return None;
            }
            lists.push((entry.term, list));
        }
        let documents = (0..count)
            .map(|d| Document::length_only(self.lookup.document(d).length as f64))
            .collect();
        Some(Corpus {
            documents,
            postings: PostingTable::from_lists(lists.into_iter()),
            ..self.partition.metadata()
        })
    }
}

impl Vocabulary for LocalLookup {
    fn tokenizer(&self) -> Tokenizer {
        Tokenizer::Code
    }

    fn document_total(&self) -> f64 {
        self.partition.n
    }

    fn documents_holding(&self, term: &str) -> Option<(&str, usize)> {
        self.lookup.term(term).map(|e| (e.term, e.documents))
    }

    fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a str, usize)> + 'a> {
        Box::new(
            self.lookup
                .with_prefix(prefix)
                .map(|e| (e.term, e.documents)),
        )
    }
}

fn range((start, end): (u64, u64)) -> Range<u64> {
    start..end
}

/// The bytes of `file` in `range` (validated inside the file by [`Lookup::parse`]).
fn read(file: &File, range: Range<u64>) -> Option<Vec<u8>> {
    let mut bytes = vec![0; usize::try_from(range.end.checked_sub(range.start)?).ok()?];
    file.read_exact_at(&mut bytes, range.start).ok()?;
    Some(bytes)
}

/// The metadata of the partition file `file` of `len` bytes: its skeleton (`cuts`), decoded and
/// validated as any partition is.
fn skeleton(file: &File, len: u64, cuts: &Cuts) -> Option<Corpus> {
    let bytes = cuts.skeleton(len, |range| read(file, range))?;
    match super::load::decode(&bytes, IndexKind::Code, "").ok()? {
        Loaded::Code(CodeFile::Partition(corpus)) => Some(corpus),
        _ => None,
    }
}
