//! Reading an index file: confine, read (bounded), parse, validate, convert to the ranker's typed
//! form; with a cache that reuses a loaded file while its identity (device, inode, length, mtime)
//! is unchanged, so warm queries skip parsing and a changed file is always re-read and re-validated.

use super::schema::{integral, validate_code_index, validate_memory_index, CodeIndexFile};
use super::teamdir::confine;
use super::tokenize::Tokenizer;
use agentteams_mcp::json::{self, Map, Value};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Largest index file recall reads (the Python standard library's code index is about 60 MB).
pub const MAX_INDEX_FILE_BYTES: u64 = 512 * 1024 * 1024;

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

/// A memory index or one code partition: everything BM25 ranks over.
#[derive(Debug)]
pub struct Corpus {
    pub tokenizer: Tokenizer,
    /// The stored `N`.
    pub n: f64,
    pub avgdl: f64,
    pub documents: Vec<Document>,
    pub postings: HashMap<String, Vec<Posting>>,
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
        let read_error =
            |detail: String| format!("cannot read {} at {name}: {detail}", kind.label());
        let mut file =
            File::open(&resolved).map_err(|e| read_error(os_error_text(&e, &resolved)))?;
        let meta = file
            .metadata()
            .map_err(|e| read_error(os_error_text(&e, &resolved)))?;
        let identity = FileIdentity::of(&meta);
        if let Some(hit) = self.cached(&resolved, kind, identity) {
            return Ok(hit);
        }
        if meta.len() > MAX_INDEX_FILE_BYTES {
            return Err(read_error(format!(
                "the file has {} bytes, more than the limit of {MAX_INDEX_FILE_BYTES}",
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&mut file)
            .take(MAX_INDEX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| read_error(os_error_text(&e, &resolved)))?;
        if bytes.len() as u64 > MAX_INDEX_FILE_BYTES {
            return Err(read_error(format!(
                "the file grew past the limit of {MAX_INDEX_FILE_BYTES} bytes while being read"
            )));
        }
        let value = json::parse(&bytes).map_err(|e| read_error(e.to_string()))?;
        drop(bytes);
        let invalid = |e: super::schema::SchemaError| {
            format!("{} failed schema validation: {name}: {e}", kind.label())
        };
        let loaded = match kind {
            IndexKind::Memory => {
                validate_memory_index(&value).map_err(invalid)?;
                Loaded::Memory(corpus_from(value, Tokenizer::Prose))
            }
            IndexKind::Code => match validate_code_index(&value).map_err(invalid)? {
                CodeIndexFile::Manifest => Loaded::Code(manifest_from(value)),
                CodeIndexFile::Partition => {
                    Loaded::Code(CodeFile::Partition(corpus_from(value, Tokenizer::Code)))
                }
            },
        };
        let loaded = Arc::new(loaded);
        self.store(resolved, kind, identity, Arc::clone(&loaded));
        Ok(loaded)
    }

    fn cached(&self, path: &Path, kind: IndexKind, identity: FileIdentity) -> Option<Arc<Loaded>> {
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (entries, clock) = &mut *guard;
        *clock += 1;
        let entry = entries
            .iter_mut()
            .find(|e| e.path == path && e.kind == kind && e.identity == identity)?;
        entry.last_used = *clock;
        Some(Arc::clone(&entry.loaded))
    }

    fn store(&self, path: PathBuf, kind: IndexKind, identity: FileIdentity, loaded: Arc<Loaded>) {
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (entries, clock) = &mut *guard;
        *clock += 1;
        entries.retain(|e| !(e.path == path && e.kind == kind));
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

fn take_string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        _ => String::new(),
    }
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// Converts a validated memory index or partition. Duplicate keys: the last one wins, as in Python.
fn corpus_from(value: Value, tokenizer: Tokenizer) -> Corpus {
    let mut corpus = Corpus {
        tokenizer,
        n: 0.0,
        avgdl: 0.0,
        documents: Vec::new(),
        postings: HashMap::new(),
        built_at: String::new(),
        source_kind: None,
    };
    let Value::Object(map) = value else {
        return corpus;
    };
    for (key, value) in map.into_entries() {
        match key.as_str() {
            "N" => corpus.n = number(&value),
            "avgdl" => corpus.avgdl = number(&value),
            "built_at" => corpus.built_at = take_string(value),
            "source_kind" => corpus.source_kind = Some(take_string(value)),
            "documents" => {
                corpus.documents = match value {
                    Value::Array(items) => items
                        .into_vec()
                        .into_iter()
                        .map(|d| document_from(d, tokenizer))
                        .collect(),
                    _ => Vec::new(),
                }
            }
            "postings" => corpus.postings = postings_from(value),
            _ => {}
        }
    }
    corpus
}

fn document_from(value: Value, tokenizer: Tokenizer) -> Document {
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
    let Value::Object(map) = value else {
        return doc;
    };
    for (key, value) in map.into_entries() {
        match key.as_str() {
            "path" => doc.path = take_string(value),
            "title" => doc.title = take_string(value),
            "length" => doc.length = number(&value),
            "snippet" => doc.snippet = take_string(value),
            "symbol" if tokenizer == Tokenizer::Code => {
                doc.symbol = Some(match value {
                    Value::String(s) => Some(s),
                    _ => None,
                })
            }
            k if k == passages_key => {
                doc.passages = match value {
                    Value::Array(items) => items.into_vec().into_iter().map(take_string).collect(),
                    _ => Vec::new(),
                }
            }
            _ => {}
        }
    }
    doc
}

fn postings_from(value: Value) -> HashMap<String, Vec<Posting>> {
    let Value::Object(map) = value else {
        return HashMap::new();
    };
    let mut postings = HashMap::with_capacity(map.len());
    for (term, entries) in map.into_entries() {
        let list: Vec<Posting> = entries
            .as_array()
            .into_iter()
            .flat_map(|a| a.iter())
            .map(|entry| Posting {
                doc: entry.get("doc_id").and_then(integral).unwrap_or(0.0) as usize,
                tf: entry.get("tf").map_or(0.0, number),
            })
            .collect();
        postings.insert(term, list);
    }
    postings
}

fn manifest_from(value: Value) -> CodeFile {
    let mut partitions = Vec::new();
    let mut built_at = String::new();
    if let Value::Object(map) = value {
        for (key, value) in map.into_entries() {
            match key.as_str() {
                "built_at" => built_at = take_string(value),
                "partitions" => partitions = partition_list(value),
                _ => {}
            }
        }
    }
    CodeFile::Manifest {
        partitions,
        built_at,
    }
}

/// The manifest's partitions in file order; a repeated name keeps its first position and its last
/// value, as a Python dict does.
fn partition_list(value: Value) -> Vec<(String, String)> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, meta) in map.into_entries() {
        let file = meta
            .as_object()
            .and_then(|m: &Map| m.get("file"))
            .and_then(Value::as_str)
            .map_or_else(|| format!("{name}.json"), str::to_owned);
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = file,
            None => out.push((name, file)),
        }
    }
    out
}
