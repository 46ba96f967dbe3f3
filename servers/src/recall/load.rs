//! Reading an index file: confine, read (bounded), parse, validate, convert to the ranker's typed
//! form; with a cache that reuses a loaded file while its identity (device, inode, length, mtime)
//! is unchanged, so warm queries skip parsing and a changed file is always re-read and re-validated.

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
/// schema error, a repeated key, an unusual shape). A tree costs far more than the file: up to
/// about 55 bytes per byte for `[[],[],...]`, so [`MAX_INDEX_FILE_BYTES`] of it would exhaust
/// memory; files in the common layout are streamed at any size up to that limit.
pub const MAX_TREE_INDEX_BYTES: usize = 32 * 1024 * 1024;

/// Loaded files kept in the cache (a memory index, a manifest and its partitions fit several
/// times over); the least recently used is dropped beyond this.
pub const MAX_CACHED_FILES: usize = 16;

/// One document as the ranker needs it.
#[derive(Debug)]
pub struct Document {
    pub path: String,
    pub title: String,
    /// Token count (`length`), as a float the way the reference's arithmetic uses it.
    pub length: f64,
    pub snippet: String,
    /// `paragraphs` (memory index) or `passages` (code partition).
    pub passages: Vec<String>,
    /// Code documents only: `Some(None)` for a stored `null` or a missing key.
    pub symbol: Option<Option<String>>,
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

    /// Sorts the terms for lookup and drops all but the last occurrence of a repeated term; called
    /// once every term was added.
    pub(super) fn seal(&mut self) {
        // Sort keys: a term's first eight bytes as a big-endian number (zero-padded), then its
        // file position; integers order most terms without touching their text. Cold loads sort
        // every term of a file (162k in the standard library's code index).
        let mut order: Vec<(u64, u32)> = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, span)| (sort_prefix(self.term(span)), i as u32))
            .collect();
        order.sort_unstable();
        // Runs that share a prefix are put in term order; the sort is stable, so equal terms
        // stay in file order.
        for run in order.chunk_by_mut(|a, b| a.0 == b.0) {
            if run.len() > 1 {
                run.sort_by(|a, b| {
                    let (x, y) = (&self.terms[a.1 as usize], &self.terms[b.1 as usize]);
                    self.term(x).cmp(self.term(y))
                });
            }
        }
        let mut sorted: Vec<TermSpan> = Vec::with_capacity(order.len());
        for (_, i) in order {
            let span = self.terms[i as usize];
            match sorted.last_mut() {
                Some(last) if self.term(last) == self.term(&span) => *last = span,
                _ => sorted.push(span),
            }
        }
        self.terms = sorted;
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
    last_used: u64,
}

/// Loads index files, keeping recently used ones parsed.
#[derive(Default)]
pub struct Loader {
    cache: Mutex<(Vec<CacheEntry>, u64)>,
}

impl Loader {
    pub fn new() -> Loader {
        Loader::default()
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
        let loaded = decode(&bytes, kind, &name)?;
        let loaded = Arc::new(loaded);
        self.store(resolved, kind, identity, Arc::clone(&loaded));
        Ok(loaded)
    }

    fn cached(&self, kind: IndexKind, identity: FileIdentity) -> Option<Arc<Loaded>> {
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (entries, clock) = &mut *guard;
        *clock += 1;
        // By identity, not path: names of one file (hard links) share one loaded copy, so a
        // manifest listing many links to one large partition costs one parse, not one each.
        let entry = entries
            .iter_mut()
            .find(|e| e.kind == kind && e.identity == identity)?;
        entry.last_used = *clock;
        Some(Arc::clone(&entry.loaded))
    }

    fn store(&self, path: PathBuf, kind: IndexKind, identity: FileIdentity, loaded: Arc<Loaded>) {
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (entries, clock) = &mut *guard;
        *clock += 1;
        entries.retain(|e| !(e.kind == kind && (e.path == path || e.identity == identity)));
        if entries.len() >= MAX_CACHED_FILES {
            if let Some(oldest) = entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            {
                entries.swap_remove(oldest);
            }
        }
        entries.push(CacheEntry {
            path,
            kind,
            identity,
            loaded,
            last_used: *clock,
        });
    }
}

/// An index file's contents from its bytes (`name` is the file name its messages use): the
/// streaming path when it can prove the file valid, else the tree path, which decides and words
/// the error. No file system access and no cache: [`Loader::load`] adds those.
pub fn decode(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Loaded, String> {
    match stream::load(bytes, kind) {
        Some(loaded) => Ok(loaded),
        None if bytes.len() > MAX_TREE_INDEX_BYTES => Err(read_error(
            kind,
            name,
            &format!(
                "the file has {} bytes and is not in the layout recall reads as a stream; such \
                 files are read only up to {MAX_TREE_INDEX_BYTES} bytes (MAX_TREE_INDEX_BYTES)",
                bytes.len()
            ),
        )),
        None => decode_tree(bytes, kind, name),
    }
}

/// [`decode`] by the tree path alone (parse, validate, convert): what the streaming path must
/// agree with whenever it answers (the `recall_index` fuzz target checks it).
pub fn decode_tree(bytes: &[u8], kind: IndexKind, name: &str) -> Result<Loaded, String> {
    let value = json::parse(bytes).map_err(|e| read_error(kind, name, &e.to_string()))?;
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
    fn into_strings(self) -> Vec<String>;
}

impl MemberValue for &Value {
    fn value(&self) -> &Value {
        self
    }
    fn into_string(self) -> String {
        string(self)
    }
    fn into_strings(self) -> Vec<String> {
        self.as_array()
            .map(|items| items.iter().map(string).collect())
            .unwrap_or_default()
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
    fn into_strings(self) -> Vec<String> {
        match self {
            Value::Array(items) => items
                .into_vec()
                .into_iter()
                .map(MemberValue::into_string)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Converts a validated document from its members in file order (a repeated key: the last wins).
pub(super) fn document_from<K: AsRef<str>, V: MemberValue>(
    members: impl IntoIterator<Item = (K, V)>,
    tokenizer: Tokenizer,
) -> Document {
    let mut doc = Document {
        path: String::new(),
        title: String::new(),
        length: 0.0,
        snippet: String::new(),
        passages: Vec::new(),
        symbol: (tokenizer == Tokenizer::Code).then_some(None),
    };
    let passages_key = match tokenizer {
        Tokenizer::Prose => "paragraphs",
        Tokenizer::Code => "passages",
    };
    for (key, value) in members {
        match key.as_ref() {
            "path" => doc.path = value.into_string(),
            "title" => doc.title = value.into_string(),
            "length" => doc.length = number(value.value()),
            "snippet" => doc.snippet = value.into_string(),
            "symbol" if tokenizer == Tokenizer::Code => {
                doc.symbol = Some(
                    value
                        .value()
                        .as_str()
                        .is_some()
                        .then(|| value.into_string()),
                )
            }
            k if k == passages_key => doc.passages = value.into_strings(),
            _ => {}
        }
    }
    doc
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
        let first = loader.load(&root, &paths[0], IndexKind::Memory).unwrap();
        for path in &paths[1..MAX_CACHED_FILES] {
            loader.load(&root, path, IndexKind::Memory).unwrap();
        }
        // Full: the first file is still the same loaded value.
        let again = loader.load(&root, &paths[0], IndexKind::Memory).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // One more evicts the least recently used (paths[1]), not the one just used.
        loader
            .load(&root, &paths[MAX_CACHED_FILES], IndexKind::Memory)
            .unwrap();
        let cache = loader.cache.lock().unwrap();
        assert_eq!(cache.0.len(), MAX_CACHED_FILES);
        assert!(cache.0.iter().any(|e| e.path == paths[0]));
        assert!(!cache.0.iter().any(|e| e.path == paths[1]));
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
        assert_eq!(loader.cache.lock().unwrap().0.len(), 1);
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
