//! Reading an index file: confine, read (bounded), parse, validate, convert to the ranker's typed
//! form, compact per byte of input whatever the file's shape ([`Document`], [`PostingTable`]);
//! with a cache that reuses a loaded file while its identity (device, inode, length, mtime) is
//! unchanged, so warm queries skip parsing and a changed file is always re-read and re-validated.
//! The cache holds at most [`MAX_CACHE_BYTES`] of loaded files by their estimated size
//! ([`Loaded::resident_bytes`]).

use super::schema::{integral, validate_code_index, validate_memory_index, CodeIndexFile};
use super::stream;
use super::teamdir::confine;
use super::tokenize::Tokenizer;
use agentteams_mcp::json::{self, Value};
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Largest index file recall reads (the Python standard library's code index is about 60 MB).
pub const MAX_INDEX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Largest index file parsed whole into a tree, when the streaming path declines it (a syntax or
/// schema error, a repeated key, an unusual shape); files in the common layout are streamed at
/// any size up to [`MAX_INDEX_FILE_BYTES`]. Memory is bounded by [`tree_budget`] whatever the
/// size; this bounds the time spent on a file that is parsed whole only to be refused.
pub const MAX_TREE_INDEX_BYTES: usize = 32 * 1024 * 1024;

/// Bytes of tree a file parsed whole may take, in percent of the file's bytes (with
/// [`TREE_BUDGET_FLOOR_BYTES`]: [`tree_budget`]). A tree costs far more than its file whatever
/// the parser does (a 32-byte `Value` per `0,` of `[0,0,...]`, a 56-byte entry and a key per
/// `"a":{},`; the common layout about ten bytes per byte), and a valid file may hold any JSON at
/// all in a value a repeated key shadows, which the validator never sees. So the bound is set in
/// the parser (`json::Limits::max_tree_bytes`), checked as values are created: the file's bytes
/// (held while it is parsed) and one and a half bytes of tree per byte stay within the three
/// bytes per byte recall may hold for a file, with room for what the estimate misses (the
/// allocator's holes, the streaming path's attempt before it). The bytes are freed before
/// validation and conversion, whose result (the compact form, about a byte per byte of file at
/// most) takes their place. A file whose tree would take more is refused with an error naming
/// it and this limit. Making the streaming path accept such files instead would mean
/// reproducing every rule of the tree path (which of a repeated key's values counts, what an
/// unvalidated shadowed value may hold) beside it, and the parser would still be unbounded for
/// whatever it declines.
pub const TREE_BUDGET_PERCENT_OF_FILE: usize = 150;

/// Bytes of tree any file parsed whole may take besides [`TREE_BUDGET_PERCENT_OF_FILE`]: a
/// small file is served whatever its shape (hand-written fixtures, a repeated key), within the
/// fixed allowance a process has besides its indexes (the memory tests grant 96 MiB).
pub const TREE_BUDGET_FLOOR_BYTES: usize = 4 * 1024 * 1024;

/// The most memory the tree of a file of `file_bytes` bytes may take when it is parsed whole.
pub fn tree_budget(file_bytes: usize) -> usize {
    (file_bytes / 100)
        .saturating_mul(TREE_BUDGET_PERCENT_OF_FILE)
        .saturating_add(TREE_BUDGET_FLOOR_BYTES)
}

/// Loaded files kept in the cache: a memory index, a manifest and as many partitions as a
/// manifest may list, so a code index within [`MAX_CACHE_BYTES`] is never re-read per query;
/// the least recently used is dropped beyond this.
pub const MAX_CACHED_FILES: usize = 2 + super::MAX_PARTITIONS;

/// Bytes of loaded files the cache keeps, counted by each file's estimate of what it occupies
/// ([`Loaded::resident_bytes`]); the least recently used are dropped to make room. A file of
/// [`MAX_INDEX_FILE_BYTES`] fits once loaded, so one large index is never re-read per query.
/// Files beyond it are read, used and dropped one at a time (`query_code` holds one partition at
/// a time), and files used by the query under way are never dropped to make room for another
/// of the same query: past the budget, a repeated query re-reads only the files that did not fit
/// instead of all of them.
pub const MAX_CACHE_BYTES: u64 = 1024 * 1024 * 1024;

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
        let head = path.len() + title.len() + snippet.len() + symbol_text.len();
        let mut text = String::with_capacity(head);
        let mut ends = [0u32; 4];
        for (end, part) in ends.iter_mut().zip([path, title, snippet, symbol_text]) {
            text.push_str(part);
            *end = text.len() as u32;
        }
        // The passages' buffer becomes the document's when it has room for the head: a second
        // buffer as large as the passages would double them at the peak of a load.
        let mut all = passages.text;
        if all.capacity() - all.len() >= head {
            all.insert_str(0, &text);
            text = all;
        } else {
            text.reserve_exact(all.len());
            text.push_str(&all);
            drop(all);
        }
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
        let mut terms = std::mem::take(&mut self.terms);
        terms.sort_unstable_by(|x, y| {
            sort_prefix(self.term(x))
                .cmp(&sort_prefix(self.term(y)))
                .then_with(|| self.term(x).cmp(self.term(y)))
                .then(x.postings.cmp(&y.postings))
                .then(x.text.cmp(&y.text))
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

/// The first eight bytes of `term` as a big-endian number, zero-padded: ordering these numbers
/// agrees with ordering the terms' bytes wherever the numbers differ.
fn sort_prefix(term: &str) -> u64 {
    let mut prefix = [0u8; 8];
    let n = term.len().min(8);
    prefix[..n].copy_from_slice(&term.as_bytes()[..n]);
    u64::from_be_bytes(prefix)
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

/// What identifies one version of a file on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl FileIdentity {
    fn of(meta: &std::fs::Metadata) -> FileIdentity {
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
        }
    }
}

struct CacheEntry {
    path: PathBuf,
    kind: IndexKind,
    identity: FileIdentity,
    loaded: Arc<Loaded>,
    /// `loaded.resident_bytes()`, counted against the budget.
    bytes: u64,
    last_used: u64,
    /// The query that last used it ([`Loader::begin_query`]).
    query: u64,
}

#[derive(Default)]
struct Cache {
    entries: Vec<CacheEntry>,
    clock: u64,
    query: u64,
    /// Files read and decoded (not found in the cache) so far.
    reads: u64,
}

/// Loads index files, keeping recently used ones parsed within a memory budget.
pub struct Loader {
    cache: Mutex<Cache>,
    budget: u64,
}

impl Default for Loader {
    fn default() -> Loader {
        Loader::with_budget(MAX_CACHE_BYTES)
    }
}

impl Loader {
    pub fn new() -> Loader {
        Loader::default()
    }

    /// A loader whose cache keeps at most `budget` bytes of loaded files (at most
    /// [`MAX_CACHE_BYTES`]).
    pub fn with_budget(budget: u64) -> Loader {
        Loader {
            cache: Mutex::default(),
            budget: budget.min(MAX_CACHE_BYTES),
        }
    }

    /// Starts a query: the files it loads from now on are not dropped from the cache to make
    /// room for one another.
    pub fn begin_query(&self) {
        self.lock().query += 1;
    }

    /// How many files were read and decoded so far (loads the cache did not answer).
    pub fn reads(&self) -> u64 {
        self.lock().reads
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Confines `path` to `root`, then returns its validated contents (from the cache when the
    /// file is unchanged). Errors are the reference's messages.
    pub fn load(&self, root: &Path, path: &Path, kind: IndexKind) -> Result<Arc<Loaded>, String> {
        let resolved = confine(root, path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let unreadable = |detail: String| read_error(kind, &name, &detail);
        let mut file = crate::regular_file::open(&resolved)
            .map_err(|e| unreadable(os_error_text(&e, &resolved)))?;
        let meta = file
            .metadata()
            .map_err(|e| unreadable(os_error_text(&e, &resolved)))?;
        let identity = FileIdentity::of(&meta);
        if let Some(hit) = self.cached(kind, identity) {
            return Ok(hit);
        }
        if meta.len() > MAX_INDEX_FILE_BYTES {
            return Err(unreadable(format!(
                "the file has {} bytes, more than the limit of {MAX_INDEX_FILE_BYTES}",
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&mut file)
            .take(MAX_INDEX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| unreadable(os_error_text(&e, &resolved)))?;
        if bytes.len() as u64 > MAX_INDEX_FILE_BYTES {
            return Err(unreadable(format!(
                "the file grew past the limit of {MAX_INDEX_FILE_BYTES} bytes while being read"
            )));
        }
        self.lock().reads += 1;
        let started = decode_start(&bytes, kind, &name);
        // A file parsed whole no longer needs its bytes: its converted form takes their place.
        drop(bytes);
        let loaded = Arc::new(match started? {
            Decoded::Loaded(loaded) => loaded,
            Decoded::Tree(value) => finish_tree(value, kind, &name)?,
        });
        self.store(resolved, kind, identity, Arc::clone(&loaded));
        Ok(loaded)
    }

    fn cached(&self, kind: IndexKind, identity: FileIdentity) -> Option<Arc<Loaded>> {
        let mut cache = self.lock();
        let cache = &mut *cache;
        cache.clock += 1;
        // By identity, not path: names of one file (hard links) share one loaded copy, so a
        // manifest listing many links to one large partition costs one parse, not one each.
        let entry = cache
            .entries
            .iter_mut()
            .find(|e| e.kind == kind && e.identity == identity)?;
        entry.last_used = cache.clock;
        entry.query = cache.query;
        Some(Arc::clone(&entry.loaded))
    }

    /// Keeps `loaded` if room can be made for it within [`MAX_CACHED_FILES`] and the budget by
    /// dropping the least recently used files that the query under way has not used.
    fn store(&self, path: PathBuf, kind: IndexKind, identity: FileIdentity, loaded: Arc<Loaded>) {
        let bytes = loaded.resident_bytes() as u64;
        let mut cache = self.lock();
        let cache = &mut *cache;
        cache.clock += 1;
        cache
            .entries
            .retain(|e| !(e.kind == kind && (e.path == path || e.identity == identity)));
        loop {
            let held: u64 = cache.entries.iter().map(|e| e.bytes).sum();
            if cache.entries.len() < MAX_CACHED_FILES && held + bytes <= self.budget {
                break;
            }
            let current = cache.query;
            let oldest = cache
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.query != current)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i);
            match oldest {
                Some(i) => drop(cache.entries.swap_remove(i)),
                // Everything held serves this query, or the file alone is over the budget:
                // the caller uses it and it is dropped with the last reference.
                None => return,
            }
        }
        cache.entries.push(CacheEntry {
            path,
            kind,
            identity,
            loaded,
            bytes,
            last_used: cache.clock,
            query: cache.query,
        });
    }
}

/// An index file's contents from its bytes (`name` is the file name its messages use): the
/// streaming path when it can prove the file valid, else the tree path, which decides and words
/// the error. No file system access and no cache: [`Loader::load`] adds those.
pub fn decode(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Loaded, String> {
    match decode_start(bytes, kind, name)? {
        Decoded::Loaded(loaded) => Ok(loaded),
        Decoded::Tree(value) => finish_tree(value, kind, name),
    }
}

/// What [`decode_start`] made of a file: loaded by the streaming path, or parsed whole.
enum Decoded {
    Loaded(Loaded),
    Tree(Value),
}

/// The streaming path, or for a file it declines, the parse of the tree path (within the file
/// size and memory limits): what needs the file's bytes.
fn decode_start(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Decoded, String> {
    match stream::load(bytes, kind) {
        Some(loaded) => Ok(Decoded::Loaded(loaded)),
        None if bytes.len() > MAX_TREE_INDEX_BYTES => Err(read_error(
            kind,
            name,
            &format!(
                "the file has {} bytes and is not in the layout recall reads as a stream; such \
                 files are read only up to {MAX_TREE_INDEX_BYTES} bytes (MAX_TREE_INDEX_BYTES)",
                bytes.len()
            ),
        )),
        None => parse_tree(bytes, kind, name).map(Decoded::Tree),
    }
}

/// [`decode`] by the tree path alone (parse, validate, convert): what the streaming path must
/// agree with whenever it answers (the `recall_index` fuzz target checks it).
pub fn decode_tree(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Loaded, String> {
    finish_tree(parse_tree(bytes, kind, name)?, kind, name)
}

/// The file parsed whole, its tree within [`tree_budget`] of its bytes.
fn parse_tree(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Value, String> {
    let limits = json::Limits {
        max_tree_bytes: tree_budget(bytes.len()),
        ..json::Limits::default()
    };
    json::parse_with_limits(bytes, limits).map_err(|e| {
        let mut detail = e.to_string();
        if e.is_memory_limit() {
            detail.push_str(&format!(
                "; the file has {} bytes and is not in the layout recall reads as a stream, and \
                 parsed whole its tree may take at most {TREE_BUDGET_PERCENT_OF_FILE}% of that \
                 plus {TREE_BUDGET_FLOOR_BYTES} bytes \
                 (TREE_BUDGET_PERCENT_OF_FILE, TREE_BUDGET_FLOOR_BYTES)",
                bytes.len()
            ));
        }
        read_error(kind, name, &detail)
    })
}

/// Validates and converts a parsed file, then frees its tree.
fn finish_tree(value: Value, kind: IndexKind, name: &str) -> Result<Loaded, String> {
    let loaded = validate_and_convert(&value, kind)
        .map_err(|e| format!("{} failed schema validation: {name}: {e}", kind.label()))?;
    dispose(value);
    Ok(loaded)
}

/// The reference's message for a file that cannot be read or parsed.
fn read_error(kind: IndexKind, name: &str, detail: &str) -> String {
    format!("cannot read {} at {name}: {detail}", kind.label())
}

/// Validates a parsed file and converts it to the ranker's form. The two walks only read the tree,
/// so they run side by side (conversion on a second thread) and a cold query pays for the longer
/// one, not both; the conversion is discarded when validation fails.
pub(super) fn validate_and_convert(
    value: &Value,
    kind: IndexKind,
) -> Result<Loaded, super::schema::SchemaError> {
    let convert = || convert(value, kind);
    let validate = || validate(value, kind);
    let (validated, converted) = std::thread::scope(|scope| {
        let converter = std::thread::Builder::new()
            .name("recall-convert".into())
            .spawn_scoped(scope, convert);
        let validated = validate();
        let converted = match converter {
            Ok(handle) => handle.join().ok(),
            Err(_) => None,
        };
        (validated, converted)
    });
    let file = validated?;
    // Conversion is infallible on a validated tree; redo it inline if the thread could not run.
    let loaded = converted.unwrap_or_else(convert);
    let consistent = matches!(
        (&loaded, file),
        (Loaded::Memory(_), None)
            | (
                Loaded::Code(CodeFile::Manifest { .. }),
                Some(CodeIndexFile::Manifest)
            )
            | (
                Loaded::Code(CodeFile::Partition(_)),
                Some(CodeIndexFile::Partition)
            )
    );
    debug_assert!(
        consistent,
        "conversion and validation disagree on the file kind"
    );
    Ok(loaded)
}

/// Validates a parsed file against its kind's schema; for a code-index file, says which branch.
pub(super) fn validate(
    value: &Value,
    kind: IndexKind,
) -> Result<Option<CodeIndexFile>, super::schema::SchemaError> {
    match kind {
        IndexKind::Memory => validate_memory_index(value).map(|()| None),
        IndexKind::Code => validate_code_index(value).map(Some),
    }
}

/// Converts a validated file to the ranker's form (infallible on a validated tree).
pub(super) fn convert(value: &Value, kind: IndexKind) -> Loaded {
    match kind {
        IndexKind::Memory => Loaded::Memory(corpus_from(value, Tokenizer::Prose)),
        IndexKind::Code => match value.get("artifact_type").and_then(Value::as_str) {
            Some("code-index-partition") => {
                Loaded::Code(CodeFile::Partition(corpus_from(value, Tokenizer::Code)))
            }
            _ => Loaded::Code(manifest_from(value)),
        },
    }
}

/// Python's `OSError` text: `[Errno 2] No such file or directory: '/path'`.
fn os_error_text(error: &std::io::Error, path: &Path) -> String {
    let text = error.to_string();
    match error.raw_os_error() {
        Some(code) => {
            let strerror = text
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&text);
            let quoted = path
                .to_string_lossy()
                .replace('\\', "\\\\")
                .replace('\'', "\\'");
            format!("[Errno {code}] {strerror}: '{quoted}'")
        }
        None => text,
    }
}

fn string(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// Hands a parsed file's tree to a short-lived thread to free: dropping millions of small
/// allocations would otherwise sit on the first query's critical path.
pub(super) fn dispose(value: Value) {
    // If no thread can be started, the closure and the tree in it are dropped right here.
    let _ = std::thread::Builder::new()
        .name("recall-free".into())
        .spawn(move || drop(value));
}

/// Converts a validated memory index or partition. Duplicate keys: the last one wins, as in Python.
fn corpus_from(value: &Value, tokenizer: Tokenizer) -> Corpus {
    let mut corpus = Corpus {
        tokenizer,
        n: 0.0,
        avgdl: 0.0,
        documents: Vec::new(),
        postings: PostingTable::default(),
        built_at: String::new(),
        source_kind: None,
    };
    let Some(map) = value.as_object() else {
        return corpus;
    };
    for (key, value) in map.iter() {
        match key.as_str() {
            "N" => corpus.n = number(value),
            "avgdl" => corpus.avgdl = number(value),
            "built_at" => corpus.built_at = string(value),
            "source_kind" => corpus.source_kind = Some(string(value)),
            "documents" => {
                corpus.documents = value
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .map(|d| {
                                document_from(
                                    d.as_object().into_iter().flat_map(|m| m.iter()),
                                    tokenizer,
                                    None,
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            }
            "postings" => corpus.postings = postings_from(value),
            _ => {}
        }
    }
    corpus
}

/// A document member's value as conversion takes it: borrowed from a parsed tree (its text
/// copied out) or owned by a document read on its own (its text moved out).
pub(super) trait MemberValue: Sized {
    fn value(&self) -> &Value;
    fn into_string(self) -> String;
}

impl MemberValue for &Value {
    fn value(&self) -> &Value {
        self
    }
    fn into_string(self) -> String {
        string(self)
    }
}

impl MemberValue for Value {
    fn value(&self) -> &Value {
        self
    }
    fn into_string(self) -> String {
        match self {
            Value::String(text) => text,
            _ => String::new(),
        }
    }
}

/// Bytes reserved beside a document's passages for its path, title, snippet and symbol.
const HEAD_ROOM: usize = 1024;

/// Converts a validated document from its members in file order (a repeated key: the last wins).
/// `streamed`: its passages, when they were read apart from the members (whose passages member
/// is then an empty stand-in).
pub(super) fn document_from<K: AsRef<str>, V: MemberValue>(
    members: impl IntoIterator<Item = (K, V)>,
    tokenizer: Tokenizer,
    streamed: Option<Passages>,
) -> Document {
    let code = tokenizer == Tokenizer::Code;
    let (mut path, mut title, mut snippet) = (String::new(), String::new(), String::new());
    let mut length = 0.0;
    let mut passages = Passages::default();
    let mut symbol: Option<String> = None;
    let passages_key = if code { "passages" } else { "paragraphs" };
    for (key, value) in members {
        match key.as_ref() {
            "path" => path = value.into_string(),
            "title" => title = value.into_string(),
            "length" => length = number(value.value()),
            "snippet" => snippet = value.into_string(),
            "symbol" if code => {
                symbol = value
                    .value()
                    .as_str()
                    .is_some()
                    .then(|| value.into_string())
            }
            k if k == passages_key => {
                let items = value.value().as_array().map_or(&[][..], |a| &a[..]);
                // Room for all of them and for a document's usual head (path, title, snippet,
                // symbol), so the document's text is this one buffer (`from_parts`).
                let bytes: usize = items.iter().filter_map(Value::as_str).map(str::len).sum();
                passages = Passages {
                    text: String::with_capacity(bytes + HEAD_ROOM),
                    ends: Vec::with_capacity(items.len()),
                    empty_seen: false,
                };
                for passage in items {
                    passages.push(passage.as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    Document::from_parts(
        [&path, &title, &snippet],
        length,
        streamed.unwrap_or(passages),
        code.then_some(symbol.as_deref()),
    )
}

fn postings_from(value: &Value) -> PostingTable {
    let Some(map) = value.as_object() else {
        return PostingTable::default();
    };
    let mut table = PostingTable::default();
    table.text.reserve(map.len() * 12);
    table.terms.reserve(map.len());
    for (term, entries) in map.iter() {
        let items = entries.as_array().map_or(&[][..], |a| &a[..]);
        let first = table.posting_count();
        for entry in items {
            let mut posting = Posting { doc: 0, tf: 0.0 };
            for (key, value) in entry.as_object().into_iter().flat_map(|m| m.iter()) {
                // Validation (run alongside) admits only "doc_id" and "tf", which differ in
                // length; comparing lengths avoids reading every key's bytes.
                if key.len() == 6 {
                    posting.doc = integral(value).unwrap_or(0.0) as usize;
                } else {
                    posting.tf = number(value);
                }
            }
            table.push_posting(posting);
        }
        table.finish_term(term, first);
    }
    table.seal();
    table
}

fn manifest_from(value: &Value) -> CodeFile {
    let mut partitions = Vec::new();
    let mut built_at = String::new();
    for (key, value) in value.as_object().into_iter().flat_map(|m| m.iter()) {
        match key.as_str() {
            "built_at" => built_at = string(value),
            "partitions" => partitions = partition_list(value),
            _ => {}
        }
    }
    CodeFile::Manifest {
        partitions,
        built_at,
    }
}

/// The manifest's partitions in file order; a repeated name keeps its first position and its last
/// value, as a Python dict does.
fn partition_list(value: &Value) -> Vec<(String, String)> {
    let Some(map) = value.as_object() else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (name, meta) in map.iter() {
        let file = meta
            .get("file")
            .and_then(Value::as_str)
            .map_or_else(|| format!("{name}.json"), str::to_owned);
        match position.get(name.as_str()) {
            Some(&i) => out[i].1 = file,
            None => {
                position.insert(name, out.len());
                out.push((name.clone(), file));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_MEMORY_INDEX: &str = r#"{"artifact_type": "memory-index",
        "memory_index_schema_version": "1.3", "project_name": "", "framework": "",
        "built_at": "2026-10-07T12:34:56Z", "source_count": 0, "documents": [], "postings": {},
        "avgdl": 0.0, "N": 0}"#;

    #[test]
    fn the_cache_keeps_at_most_max_cached_files_dropping_the_least_recently_used() {
        let dir = std::env::temp_dir().join(format!("recall-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = std::fs::canonicalize(&dir).unwrap();
        let loader = Loader::new();
        let paths: Vec<PathBuf> = (0..=MAX_CACHED_FILES)
            .map(|i| {
                let path = root.join(format!("m{i}.json"));
                std::fs::write(&path, EMPTY_MEMORY_INDEX).unwrap();
                path
            })
            .collect();
        // Each load its own query, so any file may be dropped to make room.
        let load = |path: &Path| {
            loader.begin_query();
            loader.load(&root, path, IndexKind::Memory).unwrap()
        };
        let first = load(&paths[0]);
        for path in &paths[1..MAX_CACHED_FILES] {
            load(path);
        }
        // Full: the first file is still the same loaded value.
        let again = load(&paths[0]);
        assert!(Arc::ptr_eq(&first, &again));
        // One more evicts the least recently used (paths[1]), not the one just used.
        load(&paths[MAX_CACHED_FILES]);
        let cache = loader.lock();
        assert_eq!(cache.entries.len(), MAX_CACHED_FILES);
        assert!(cache.entries.iter().any(|e| e.path == paths[0]));
        assert!(!cache.entries.iter().any(|e| e.path == paths[1]));
        drop(cache);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_files_up_to_the_tree_limit_are_parsed_whole() {
        // `[[],[],...]`: about 55 bytes of tree per byte of file (64 MB took 3.5 GB); a file the
        // streaming path declines is parsed whole only up to MAX_TREE_INDEX_BYTES.
        let shaped = |len: usize| {
            let head = r#"{"documents": ""#;
            format!("{head}{}\"}}", "x".repeat(len - head.len() - 2))
        };
        let at_limit = shaped(MAX_TREE_INDEX_BYTES);
        assert_eq!(at_limit.len(), MAX_TREE_INDEX_BYTES);
        let err = decode(at_limit.as_bytes(), IndexKind::Memory, "m.json").unwrap_err();
        assert!(
            err.starts_with("memory index failed schema validation: m.json: "),
            "{err}"
        );
        let over = shaped(MAX_TREE_INDEX_BYTES + 1);
        assert_eq!(
            decode(over.as_bytes(), IndexKind::Code, "p.json").unwrap_err(),
            format!(
                "cannot read code index at p.json: the file has {} bytes and is not in the layout \
                 recall reads as a stream; such files are read only up to \
                 {MAX_TREE_INDEX_BYTES} bytes (MAX_TREE_INDEX_BYTES)",
                MAX_TREE_INDEX_BYTES + 1
            )
        );
        // A valid file past the limit is streamed as before.
        let padded = format!("{EMPTY_MEMORY_INDEX}{}", " ".repeat(MAX_TREE_INDEX_BYTES));
        assert!(matches!(
            decode(padded.as_bytes(), IndexKind::Memory, "m.json"),
            Ok(Loaded::Memory(_))
        ));
    }

    #[test]
    fn a_file_parsed_whole_is_refused_past_the_tree_budget() {
        // A shadowed value (a repeated key: only the last counts, the first is never validated)
        // of the most inflating shape: a 32-byte `Value` per `0,` of the file.
        let shadowed = |items: usize| {
            let junk = vec!["0"; items].join(",");
            EMPTY_MEMORY_INDEX.replacen('{', &format!(r#"{{"N": [{junk}], "#), 1)
        };
        let small = shadowed(1000);
        assert!(stream::load(small.as_bytes(), IndexKind::Memory).is_none());
        assert!(matches!(
            decode(small.as_bytes(), IndexKind::Memory, "m.json"),
            Ok(Loaded::Memory(_))
        ));
        let large = shadowed(1 << 20);
        assert!(tree_budget(large.len()) < (1 << 20) * std::mem::size_of::<Value>());
        let err = decode(large.as_bytes(), IndexKind::Memory, "m.json").unwrap_err();
        assert!(
            err.starts_with(&format!(
                "cannot read memory index at m.json: the parsed value would take more than the \
                 limit of {} bytes of memory at line 1 column ",
                tree_budget(large.len())
            )),
            "{err}"
        );
        assert!(
            err.ends_with("(TREE_BUDGET_PERCENT_OF_FILE, TREE_BUDGET_FLOOR_BYTES)"),
            "{err}"
        );
        assert_eq!(
            decode_tree(large.as_bytes(), IndexKind::Memory, "m.json").unwrap_err(),
            err
        );
    }

    #[test]
    fn hard_links_to_one_file_share_one_loaded_copy() {
        // A manifest may list up to MAX_PARTITIONS partition files; hard links to one large file
        // cost no disk space, and keyed by path each would be parsed and held separately.
        let dir = std::env::temp_dir().join(format!("recall-hardlink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = std::fs::canonicalize(&dir).unwrap();
        std::fs::write(root.join("a.json"), EMPTY_MEMORY_INDEX).unwrap();
        std::fs::hard_link(root.join("a.json"), root.join("b.json")).unwrap();
        let loader = Loader::new();
        let a = loader
            .load(&root, &root.join("a.json"), IndexKind::Memory)
            .unwrap();
        let b = loader
            .load(&root, &root.join("b.json"), IndexKind::Memory)
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(loader.lock().entries.len(), 1);
        // Rewritten through one name, both names see the new content.
        let newer = format!("{EMPTY_MEMORY_INDEX} ");
        std::fs::write(root.join("b.json"), newer).unwrap();
        let a2 = loader
            .load(&root, &root.join("a.json"), IndexKind::Memory)
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &a2));
        std::fs::remove_dir_all(&root).unwrap();
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
}
