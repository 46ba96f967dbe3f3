//! The code index (`references/code-index/`): the `local` partition over the project's sources
//! (one document per file, definition passages, code-token postings, absolute paths as the
//! reference stores them, so its staleness check finds the files from any working directory),
//! the API partitions (`api-docs` from the descriptions of the distributions the project
//! imports, `api-modules` from their public definitions; both with the reference's dependency
//! fingerprint), and the manifest; all in the reference's formats.

use super::build_cache;
use super::build_cache::{Body, BuildCache, CachedFile, Contribution, Identity, Outputs, ToEncode};
use super::deps::{ApiDoc, ApiModule, Provenance};
use super::memory::{write_postings, TermOrder, TermRecorder};
use super::outline;
use super::passages;
use super::postings::{KnownTerms, Postings};
use super::pyjson::PyJson;
use super::reuse::PostingsReuse;
use super::sources::{language_for, mtime, read_text, CodeSource};
use super::stamp::Stamp;
use crate::corpus::lookup::{Cuts, DocumentEntry};
use crate::corpus::tokenize::Tokenizer;
use agentteams_mcp::json::{obj, Value};
use agentteams_mcp::sha256;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// The partitions written, as `(name, source_kind)`, in manifest (sorted) order.
pub const PARTITIONS: [(&str, &str); 3] = [
    ("api-docs", "api-doc"),
    ("api-modules", "api-module"),
    ("local", "local-script"),
];

const SCHEMA_VERSION: &str = "1.0";
const FORMAT_VERSION: &str = "json-code-bm25-v1";
const WRITE_OWNER: &str = "agentteams.code_index";
const VECTOR_MODE: &str = "sparse-tfidf-cosine";
const FALLBACK_POLICY: &str = "non-blocking-file-read-then-search";

/// One source file as a document.
pub struct CodeDoc {
    pub path: String,
    pub language: Option<&'static str>,
    pub length: u64,
    pub snippet: String,
    pub passages: Vec<String>,
    pub source_hash: String,
    pub source_mtime: f64,
    /// API documents: the definition's name and signature (`None` for files and descriptions).
    pub symbol: Option<String>,
    pub signature: Option<String>,
    /// API documents: where the unit comes from; `None` for local files.
    pub provenance: Option<Provenance>,
}

/// One built partition.
pub struct Partition {
    pub source_kind: &'static str,
    pub docs: Vec<CodeDoc>,
    pub postings: Postings,
    /// Units considered (readable files), including those skipped for having no tokens.
    pub source_count: usize,
    pub stamp: Stamp,
    /// API partitions: the reference's `dependency_fingerprint` (`None`: `null`, as for `local`).
    pub dependency_fingerprint: Option<String>,
    /// The terms' numbers in the order of their bytes, when the build that counted them sorted
    /// them already ([`Postings::sorted_terms`]); else they are sorted as they are written.
    pub sorted_terms: Option<Vec<usize>>,
    /// [`Partition::source_fingerprint`], computed the first time it is asked for: by then the
    /// partition is built (its builders never ask), and a build asks about seven times (each
    /// output names it), each a sort and a SHA-256 over every document's path and hash.
    fingerprint: std::sync::OnceLock<String>,
}

/// Source files read and prepared ahead of the postings (each holds at most `MAX_SOURCE_BYTES`
/// of text, so this bounds the memory the pipeline adds).
const PREPARED_AHEAD: usize = 4;

/// A rebuild numbers terms by their place among the previous build's when the bytes it reads
/// are at most this fraction (one part in this many) of the sources' ([`Postings::known_terms`]).
const READ_SHARE_BY_PLACE: u64 = 64;

/// Most files taken from the build cache that the reader sends the postings at once.
const CACHED_BATCH: usize = 256;

/// One source file read and turned into everything but its postings: the part of a document
/// that does not depend on the other files, so it can be made on a second thread.
struct Prepared {
    text: String,
    doc: CodeDoc,
    /// Its definitions at every level, which the counting thread lays out as the outline's
    /// documents ([`outline_documents`]): that thread would otherwise wait for this one.
    definitions: Vec<outline::Unit>,
    /// A `.py` file's absolute imports (what the reference's fingerprint reads).
    imports: Vec<String>,
}

/// Reads `rel` and builds its document fields (`length` is filled in with the postings);
/// `None` for a file that cannot be read as text.
fn prepare(root: &Path, rel: &Path) -> Option<Prepared> {
    let absolute = root.join(rel);
    let text = read_text(&absolute)?;
    let language = language_for(rel);
    let (passages, mut imports) = passages::passages_and_imports(&text, language);
    // The reference reads imports from files whose suffix is exactly `.py`.
    if rel.extension().is_none_or(|e| e != "py") {
        imports.clear();
    }
    let doc = CodeDoc {
        path: absolute.to_string_lossy().into_owned(),
        language,
        length: 0,
        snippet: passages::snippet(&passages, &text),
        passages,
        source_hash: sha256::hex_digest(text.as_bytes()),
        source_mtime: mtime(&absolute),
        symbol: None,
        signature: None,
        provenance: None,
    };
    Some(Prepared {
        definitions: outline::outline(&text, language),
        text,
        doc,
        imports,
    })
}

/// The `local` partition, its outline and the imports of its `.py` files; `'c`: the previous
/// build's cache, which parts of them borrow.
pub struct Local<'c> {
    pub partition: Partition,
    pub outline: Outline<'c>,
    pub imports: BTreeSet<String>,
    /// Per source, in order, what the next build's cache keeps of it.
    pub files: Vec<FileRow<'c>>,
    /// How the partition's content (and so the outline's) compares with what the previous
    /// build's cache describes.
    pub changed: Change,
    /// Sources taken from the previous build's cache rather than read.
    pub reused: usize,
    /// The sources' bytes, and the newest modification time among them (seconds,
    /// nanoseconds), as they were looked at.
    pub source_bytes: u64,
    pub newest: (i64, u32),
    /// The previous cache's term table as this build met it; `None` when none was used.
    known: Option<KnownTerms<'c>>,
}

/// How a built `local` partition compares with the one the previous build's cache describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Every source gave what it gave then: the same content.
    Same,
    /// No cache, or one that could not say: compare the files.
    Unknown,
    /// A source was added, removed or changed in a way the partition shows.
    Differs,
}

/// One source of the `local` partition, as the build cache keeps it.
pub struct FileRow<'c> {
    pub rel: String,
    /// `None`: not to be cached (racy, or gone before it could be looked at).
    pub identity: Option<Identity>,
    pub imports: Vec<String>,
    pub read: FileRead<'c>,
}

/// What a source gave the partition.
pub enum FileRead<'c> {
    /// Not read as text (unreadable, too large, not UTF-8, not a regular file).
    Unreadable,
    /// Read, and no code tokens in it: counted in `source_count`, no document.
    Empty {
        source_hash: String,
        source_mtime: f64,
    },
    /// The partition's document `doc` (its terms are the postings' document `doc`), its
    /// definitions' places in the outline, and, when it came from the previous cache, its
    /// encoding there and where its entries lie in it (the rest stays valid when the term
    /// numbers move).
    Document {
        doc: usize,
        outline: std::ops::Range<usize>,
        cached: Option<(&'c [u8], std::ops::Range<usize>)>,
    },
}

impl Local<'_> {
    /// Writes into `sink` the build cache of this build (`build_cache`), whose outputs were
    /// `outputs`; returns where their identities lie in it.
    pub fn write_cache(
        &self,
        sink: &mut dyn std::io::Write,
        builder: &Identity,
        root: &str,
        outputs: &Outputs,
    ) -> std::io::Result<u64> {
        let postings = &self.partition.postings;
        // The table: the terms in the order of their bytes, each numbered by its place. When
        // they are the previous table's terms, the documents taken from it keep their encoding.
        let sorted = match &self.partition.sorted_terms {
            Some(sorted) => std::borrow::Cow::Borrowed(sorted),
            None => std::borrow::Cow::Owned(postings.sorted_terms(None)),
        };
        let keep = (self.known.as_ref()).is_some_and(|k| k.same_as_built(postings.term_count()));
        let mut to_table = vec![0u32; postings.term_count()];
        for (place, &term) in sorted.iter().enumerate() {
            to_table[term] = place as u32;
        }
        let table = sorted.iter().map(|&term| postings.term(term));
        let mut writer = build_cache::Writer::new(builder, root, outputs, table);
        for row in &self.files {
            writer.file(&row.rel, row.identity.as_ref(), &row.imports);
        }
        let mut entries = Vec::new();
        let in_table = |doc: usize| {
            let terms = postings.document(doc).iter();
            terms.map(|&(g, tf)| (to_table[g as usize], tf))
        };
        let body = move |row: usize, buffer: &mut Vec<u8>| match &self.files[row].read {
            FileRead::Unreadable => Body::None,
            FileRead::Document {
                cached: Some((cached, _)),
                ..
            } if keep => Body::Cached(cached),
            // Its term numbers moved: the rest of the encoding is as it was.
            FileRead::Document {
                doc,
                cached: Some((cached, at)),
                ..
            } => {
                buffer.extend_from_slice(&cached[..at.start]);
                build_cache::encode_entries(buffer, in_table(*doc));
                buffer.extend_from_slice(&cached[at.end..]);
                Body::Encoded
            }
            FileRead::Empty {
                source_hash,
                source_mtime,
            } => {
                ToEncode {
                    snippet: "",
                    passages: &[],
                    source_hash,
                    source_mtime: *source_mtime,
                    length: 0,
                    entries: &[],
                    outline: &[],
                }
                .encode(buffer);
                Body::Encoded
            }
            FileRead::Document { doc, outline, .. } => {
                entries.clear();
                entries.extend(in_table(*doc));
                let d = &self.partition.docs[*doc];
                ToEncode {
                    snippet: &d.snippet,
                    passages: &d.passages,
                    source_hash: &d.source_hash,
                    source_mtime: d.source_mtime,
                    length: d.length,
                    entries: &entries,
                    outline: &self.outline.documents_in(outline.clone()),
                }
                .encode(buffer);
                Body::Encoded
            }
        };
        writer.write_to(sink, body)
    }
}

/// Where the parts of a partition or outline just written lie in its file: what the lookup
/// sidecar ([`crate::corpus::lookup`]) records.
#[derive(Default)]
pub struct Written<'t> {
    pub cuts: Cuts,
    /// Per document (per definition in the outline), `{` to `}`.
    pub documents: Vec<(u64, u64)>,
    /// Given each term as its postings are written: the term, its key's opening quote to its
    /// list's `]`, and its list's length.
    pub terms: Option<&'t mut TermRecorder<'t>>,
}

impl Local<'_> {
    /// The lookup's documents: each one's range in `local.json` as `local` says it was written,
    /// its length, and its file's definitions in the outline as `outline` says.
    pub fn lookup_documents(&self, local: &Written, outline: &Written) -> Vec<DocumentEntry> {
        let mut documents: Vec<DocumentEntry> = (self.partition.docs.iter())
            .zip(&local.documents)
            .map(|(doc, &range)| DocumentEntry {
                local: range,
                length: doc.length,
                outline: (0, 0),
            })
            .collect();
        for row in &self.files {
            if let FileRead::Document {
                doc,
                outline: definitions,
                ..
            } = &row.read
            {
                if definitions.is_empty() {
                    continue;
                }
                let first = outline.documents.get(definitions.start);
                let last = outline.documents.get(definitions.end - 1);
                if let (Some(entry), Some(first), Some(last)) =
                    (documents.get_mut(*doc), first, last)
                {
                    entry.outline = (first.0, last.1);
                }
            }
        }
        documents
    }
}

/// The code outline (`references/code-outline.json`, [`crate::recall::outline`]): one document
/// per definition of each file of the `local` partition, at every level (methods included), in a
/// partition's format with no postings, on one line and without the documents' optional fields,
/// so it costs recall little to load. Its documents are laid out as the files are read.
pub struct Outline<'c> {
    /// Each document's members after `doc_id` (`"length": 0, ..., "title": "..."}`), made now
    /// (in `made`, back to back: a few hundred thousand of them on a large tree, so not an
    /// allocation each) or borrowed from the previous build's cache.
    documents: Vec<OutlineDocument<'c>>,
    made: String,
    /// Files the documents come from.
    pub source_count: usize,
}

/// Where an outline document's members are.
enum OutlineDocument<'c> {
    /// `made[start..end]`.
    Made(usize, usize),
    Cached(&'c str),
}

impl<'c> Outline<'c> {
    fn new() -> Outline<'c> {
        Outline {
            documents: Vec::new(),
            made: String::new(),
            source_count: 0,
        }
    }

    /// Definitions (documents) held.
    pub fn definition_count(&self) -> usize {
        self.documents.len()
    }

    /// Document `i`'s members.
    fn document(&self, i: usize) -> &str {
        match self.documents[i] {
            OutlineDocument::Made(start, end) => &self.made[start..end],
            OutlineDocument::Cached(members) => members,
        }
    }

    /// Documents `range`'s members.
    fn documents_in(&self, range: std::ops::Range<usize>) -> Vec<&str> {
        range.map(|i| self.document(i)).collect()
    }

    /// Adds a document made now.
    fn push_made(&mut self, members: &str) {
        let start = self.made.len();
        self.made.push_str(members);
        self.documents
            .push(OutlineDocument::Made(start, self.made.len()));
    }

    /// Adds a document from the previous build's cache.
    fn push_cached(&mut self, members: &'c str) {
        self.documents.push(OutlineDocument::Cached(members));
    }

    /// The file's bytes, carrying `build_id`: its `local` partition's `index_build_id` as that
    /// partition is on disk, which is how recall knows the two belong together.
    pub fn to_json(&self, stamp: &Stamp, source_fingerprint: &str, build_id: &str) -> String {
        let mut w = PyJson::new(
            None,
            1024 + (0..self.documents.len())
                .map(|i| self.document(i).len() + 24)
                .sum::<usize>(),
        );
        self.write_json(
            &mut w,
            stamp,
            source_fingerprint,
            build_id,
            &mut Written::default(),
        );
        w.finish()
    }

    /// [`Outline::to_json`] streamed into `sink`, recording where its parts lie in `written`.
    pub fn write_to(
        &self,
        sink: &mut dyn std::io::Write,
        stamp: &Stamp,
        source_fingerprint: &str,
        build_id: &str,
        written: &mut Written,
    ) -> std::io::Result<()> {
        let mut w = PyJson::streaming(None, sink);
        self.write_json(&mut w, stamp, source_fingerprint, build_id, written);
        w.finish_streaming()
    }

    fn write_json(
        &self,
        w: &mut PyJson,
        stamp: &Stamp,
        source_fingerprint: &str,
        build_id: &str,
        written: &mut Written,
    ) {
        w.begin_object();
        w.key("N");
        w.int(self.documents.len() as u64);
        w.key("artifact_type");
        w.string("code-index-partition");
        w.key("avgdl");
        w.float(0.0);
        w.key("built_at");
        w.string(&stamp.built_at);
        w.key("code_index_schema_version");
        w.string(SCHEMA_VERSION);
        w.key("dependency_fingerprint");
        w.null();
        w.key("documents");
        written.documents.clear();
        written.documents.reserve_exact(self.documents.len());
        let start = w.position();
        w.begin_array();
        for doc_id in 0..self.documents.len() {
            let at = w.element_at();
            w.raw(&format!("{{\"doc_id\": {doc_id}, "));
            w.raw(self.document(doc_id));
            written.documents.push((at, w.position()));
        }
        w.end_array();
        written.cuts.documents = (start, w.position());
        for (key, value) in [
            ("fallback_policy", FALLBACK_POLICY),
            ("framework", stamp.framework.as_str()),
            ("index_build_id", build_id),
            ("index_format_version", FORMAT_VERSION),
            ("index_write_owner", WRITE_OWNER),
        ] {
            w.key(key);
            w.string(value);
        }
        w.key("postings");
        let start = w.position();
        w.begin_object();
        w.end_object();
        written.cuts.postings = (start, w.position());
        finish_partition(
            w,
            &stamp.project_name,
            self.source_count,
            source_fingerprint,
            "local-script",
        );
    }
}

/// A partition file's members from `project_name` on (keys sorted), its closing brace and the
/// final newline.
fn finish_partition(
    w: &mut PyJson,
    project_name: &str,
    source_count: usize,
    source_fingerprint: &str,
    source_kind: &str,
) {
    w.key("project_name");
    w.string(project_name);
    w.key("source_count");
    w.int(source_count as u64);
    w.key("source_fingerprint");
    w.string(source_fingerprint);
    w.key("source_kind");
    w.string(source_kind);
    w.key("vector_dim");
    w.null();
    w.key("vector_model_id");
    w.null();
    w.key("vector_runtime_mode");
    w.string(VECTOR_MODE);
    w.end_object();
    w.raw("\n");
}

/// Code points of a definition's passage in the outline (what a hit shows as its snippet).
const OUTLINE_PASSAGE_CHARS: usize = 240;

/// The outline's documents for one file of the `local` partition (`rel`: its path relative to
/// the root), each without its `doc_id` (numbered as they are gathered): the members a partition
/// document requires, keys sorted; `title` the qualified name; passages its passage and, second,
/// its tokens made here (`crate::corpus::sidecars::definition_tokens`), so a query never tokenizes
/// a definition.
fn outline_documents(rel: &str, units: Vec<outline::Unit>) -> impl Iterator<Item = String> + '_ {
    units.into_iter().map(move |unit| {
        let passage = crate::corpus::text::cut_chars(&unit.passage, OUTLINE_PASSAGE_CHARS);
        let tokens = crate::corpus::sidecars::definition_tokens(&unit.name, passage);
        let mut w = PyJson::new(None, 64 + rel.len() + passage.len() + tokens.len());
        w.begin_object();
        w.key("length");
        w.int(0);
        w.key("passages");
        w.begin_array();
        for text in [passage, tokens.as_str()] {
            w.element();
            w.string(text);
        }
        w.end_array();
        w.key("path");
        w.string(&crate::corpus::locator::locate(
            rel,
            unit.first_line,
            unit.last_line,
        ));
        w.key("snippet");
        w.string("");
        w.key("source_kind");
        w.string("local-script");
        w.key("source_mtime");
        w.float(0.0);
        w.key("title");
        w.string(&unit.name);
        w.end_object();
        // The members and the closing brace: `Outline::to_json` writes `{"doc_id": N, `.
        let mut members = w.finish();
        members.remove(0);
        members
    })
}

/// What the reading thread hands the counting thread for one source.
enum Gathered<'c> {
    /// Read now (`None`: not as text), with the identity it had just before.
    Read(Option<Box<Prepared>>, Option<Identity>),
    /// Unchanged since the previous build (the cache holds it with this identity), its entry
    /// decoded there too: decoding was a sixth of the counting thread's work on a rebuild.
    Cached(Identity, Option<Decoded<'c>>),
}

/// A cached file's entry decoded by the reading thread (`None` when it does not decode), with
/// the document it gives if its terms add up.
type Decoded<'c> = Option<Box<(Contribution<'c>, CodeDoc)>>;

/// Decodes a cached file's entry (`None`: the file was not read as text then) and makes its
/// document, `rel` under `root`.
fn decode_cached<'c>(root: &Path, rel: &Path, file: &CachedFile<'c>) -> Option<Decoded<'c>> {
    let c = Contribution::decode(file.body?).ok();
    Some(c.map(|c| {
        let doc = CodeDoc {
            path: root.join(rel).to_string_lossy().into_owned(),
            language: language_for(rel),
            length: c.length,
            snippet: c.snippet.to_owned(),
            passages: c.passages.iter().map(|p| p.to_string()).collect(),
            source_hash: c.source_hash.to_owned(),
            source_mtime: c.source_mtime,
            symbol: None,
            signature: None,
            provenance: None,
        };
        Box::new((c, doc))
    }))
}

/// Builds the `local` partition over `sources` (paths relative to `root`, sorted), and collects
/// the absolute imports of its `.py` files. `progress` is called after each file with the number
/// done. A source whose identity is the one `previous` (the last build's cache) holds is taken
/// from there instead of being read; the result is the same as reading it.
///
/// Two stages: a second thread looks at each file and reads it and makes its passages, snippet,
/// hash, mtime and definitions (`prepare`) up to [`PREPARED_AHEAD`] files ahead, or decodes
/// what the cache holds of it ([`decode_cached`], in batches of at most [`CACHED_BATCH`]), while
/// this thread counts the postings, which must see the files in order, and lays out the
/// outline's documents (the two threads' shares of the work are about even on the Python
/// standard library). The output is the same as one thread's; if no thread can be started, this
/// thread does both.
pub fn build_local<'c>(
    root: &Path,
    sources: &[CodeSource],
    stamp: &Stamp,
    previous: Option<&BuildCache<'c>>,
    progress: &mut dyn FnMut(usize),
) -> Local<'c> {
    let start = std::time::SystemTime::now();
    let cached: HashMap<&str, usize> = previous.map_or_else(HashMap::new, |p| {
        p.files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.rel, i))
            .collect()
    });
    let known_rel = |rel: &Path| rel.to_str().and_then(|r| cached.get(r).copied());
    let mut local = Local {
        partition: Partition::empty("local-script", stamp),
        outline: Outline::new(),
        imports: BTreeSet::new(),
        files: Vec::with_capacity(sources.len()),
        changed: if previous.is_some() {
            Change::Same
        } else {
            Change::Unknown
        },
        reused: 0,
        source_bytes: 0,
        newest: (0, 0),
        known: None,
    };
    // The previous build's term table; when it cannot be decoded, every file is read.
    let previous_terms = previous.and_then(|p| p.terms().ok());
    if let Some(terms) = previous_terms {
        // Terms are numbered by their place in it when the files to read are a small part of
        // the sources: it spares hashing every term the others bring.
        let (mut to_read, mut all) = (0u64, 0u64);
        for source in sources {
            let bytes = source.identity.map_or(0, |i| i.bytes());
            all += bytes;
            let cached = known_rel(&source.rel)
                .zip(previous)
                .is_some_and(|(number, p)| {
                    source.identity.is_some() && p.files[number].identity == source.identity
                });
            if !cached {
                to_read += bytes;
            }
        }
        let by_place = to_read.saturating_mul(READ_SHARE_BY_PLACE) <= all;
        local.known = Some(local.partition.postings.known_terms(terms, by_place));
    }
    // Which of the previous build's files are still sources.
    let mut still_listed = vec![false; previous.map_or(0, |p| p.files.len())];
    let mut take = |done: usize, gathered: Gathered<'c>| {
        progress(done + 1);
        let rel = &sources[done].rel;
        let before = known_rel(rel).zip(previous).map(|(number, p)| {
            still_listed[number] = true;
            &p.files[number]
        });
        let looked_at = match &gathered {
            Gathered::Cached(identity, _) => Some(*identity),
            Gathered::Read(_, identity) => *identity,
        };
        if let Some(identity) = looked_at {
            local.source_bytes += identity.bytes();
            local.newest = local.newest.max(identity.mtime());
        }
        let (prepared, identity) = match gathered {
            Gathered::Cached(identity, decoded) => {
                let file = before.expect("a cached file is in the cache");
                if local.add_cached(rel, file, identity, decoded) {
                    local.reused += 1;
                    return;
                }
                // A damaged entry: read the file as if it were new.
                (prepare(root, rel), Some(identity))
            }
            Gathered::Read(prepared, identity) => (prepared.map(|p| *p), identity),
        };
        let identity = identity.filter(|i| i.is_settled(start));
        local.add_read(rel, prepared, identity);
        if previous.is_some() {
            let now = &local.files.last().expect("just added").read;
            local.changed = local
                .changed
                .max(compare(before, now, &local.partition.docs));
        }
    };
    std::thread::scope(|scope| {
        // The identity the listing took (before anything is read, so a later change shows).
        let gather = |source: &CodeSource| {
            let (rel, identity) = (&source.rel, source.identity);
            match (known_rel(rel).zip(previous), identity) {
                (Some((number, p)), Some(identity))
                    if p.files[number].identity == Some(identity) =>
                {
                    Gathered::Cached(identity, decode_cached(root, rel, &p.files[number]))
                }
                _ => Gathered::Read(prepare(root, rel).map(Box::new), identity),
            }
        };
        // Sent in batches: a file taken from the cache costs the reader little (its entry is
        // decoded), and sent one by one, every such file cost both threads a wake-up. A batch
        // ends at a file read, so no more than `PREPARED_AHEAD` read files wait at a time.
        let (send, receive) = std::sync::mpsc::sync_channel(PREPARED_AHEAD);
        let reader = std::thread::Builder::new()
            .name("index-read".into())
            .spawn_scoped(scope, move || {
                let mut batch = Vec::new();
                for source in sources {
                    let gathered = gather(source);
                    let read = matches!(gathered, Gathered::Read(..));
                    batch.push(gathered);
                    if (read || batch.len() >= CACHED_BATCH)
                        && send.send(std::mem::take(&mut batch)).is_err()
                    {
                        return;
                    }
                }
                if !batch.is_empty() {
                    let _ = send.send(batch);
                }
            });
        if reader.is_ok() {
            for (done, gathered) in receive.iter().flatten().enumerate() {
                take(done, gathered);
            }
        } else {
            for (done, source) in sources.iter().enumerate() {
                take(done, gather(source));
            }
        }
    });
    // A file gone since that it read as text took a part of the partition with it.
    if let Some(p) = previous {
        let gone = p.files.iter().zip(&still_listed);
        if gone
            .into_iter()
            .any(|(f, listed)| !listed && f.body.is_some())
        {
            local.changed = Change::Differs;
        }
    }
    let sorted = (local.partition.postings).sorted_terms(local.known.as_ref());
    local.partition.sorted_terms = Some(sorted);
    local
}

/// How what a file gave the partition now (`now`; `docs` are the partition's documents)
/// compares with what it gave the build the cache describes (`before`; `None`: not a source
/// then). A file that gives no document compares by whether it was read, since that is all the
/// partition shows of it (`source_count`).
fn compare(before: Option<&CachedFile<'_>>, now: &FileRead<'_>, docs: &[CodeDoc]) -> Change {
    let Some(before) = before else {
        return match now {
            FileRead::Unreadable => Change::Same,
            _ => Change::Differs,
        };
    };
    let before = match before.body.map(Contribution::decode) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(_)) => return Change::Unknown,
    };
    let same = match (before, now) {
        (None, FileRead::Unreadable) => true,
        (Some(b), FileRead::Empty { .. }) => b.length == 0,
        (Some(b), FileRead::Document { doc, .. }) => {
            let d = &docs[*doc];
            b.length != 0 && b.source_hash == d.source_hash && b.source_mtime == d.source_mtime
        }
        _ => false,
    };
    if same {
        Change::Same
    } else {
        Change::Differs
    }
}

impl<'c> Local<'c> {
    /// The previous build's term table as this build met it, if one was used.
    pub fn known_terms(&self) -> Option<&KnownTerms<'c>> {
        self.known.as_ref()
    }

    /// Per term number of the partition, its place in the previous build's term table when no
    /// file read now names it (`None` for the others, and for terms that table does not hold):
    /// every document naming it was taken from the cache. Its list is then the previous
    /// build's for that place if the documents are the previous build's, in the same order,
    /// and the list there holds as many: each document the previous list held and this one
    /// does not would be a file read now that named it then. `None` when there was no previous
    /// table.
    pub fn postings_as_before(&self) -> Option<Vec<Option<u32>>> {
        let known = self.known.as_ref()?;
        let postings = &self.partition.postings;
        let mut place_of = vec![None; postings.term_count()];
        for (place, number) in known.met() {
            place_of[number] = Some(place as u32);
        }
        for row in &self.files {
            if let FileRead::Document {
                doc, cached: None, ..
            } = row.read
            {
                for &(number, _) in postings.document(doc) {
                    place_of[number as usize] = None;
                }
            }
        }
        Some(place_of)
    }

    /// Adds a file read now (`None`: not as text).
    fn add_read(&mut self, rel: &Path, prepared: Option<Prepared>, identity: Option<Identity>) {
        let rel_text = rel.to_string_lossy().into_owned();
        let Some(Prepared {
            text,
            mut doc,
            definitions,
            imports: found,
        }) = prepared
        else {
            self.files.push(FileRow {
                rel: rel_text,
                identity,
                imports: Vec::new(),
                read: FileRead::Unreadable,
            });
            return;
        };
        self.imports.extend(found.iter().cloned());
        self.partition.source_count += 1;
        let postings = &mut self.partition.postings;
        doc.length = match &mut self.known {
            Some(known) => postings.add_among(&text, Tokenizer::Code, known),
            None => postings.add(&text, Tokenizer::Code),
        };
        let read = if doc.length > 0 {
            self.outline.source_count += 1;
            let first = self.outline.documents.len();
            for members in outline_documents(&rel_text, definitions) {
                self.outline.push_made(&members);
            }
            self.partition.docs.push(doc);
            FileRead::Document {
                doc: self.partition.docs.len() - 1,
                outline: first..self.outline.documents.len(),
                cached: None,
            }
        } else {
            FileRead::Empty {
                source_hash: doc.source_hash,
                source_mtime: doc.source_mtime,
            }
        };
        self.files.push(FileRow {
            rel: rel_text,
            identity,
            imports: found,
            read,
        });
    }

    /// Adds a file from the previous build's cache, its entry as [`decode_cached`] decoded it;
    /// false (nothing added) when the entry did not decode or its terms do not add up.
    fn add_cached(
        &mut self,
        rel: &Path,
        file: &CachedFile<'c>,
        identity: Identity,
        decoded: Option<Decoded<'c>>,
    ) -> bool {
        let Some(known) = &mut self.known else {
            return false;
        };
        let imports: Vec<String> = file.imports.iter().map(|i| i.to_string()).collect();
        let read = match decoded {
            None => FileRead::Unreadable,
            Some(None) => return false,
            Some(Some(decoded)) => {
                let (c, doc) = *decoded;
                let postings = &mut self.partition.postings;
                match postings.add_known(c.length, &c.entries, known) {
                    None => return false,
                    Some(0) => FileRead::Empty {
                        source_hash: c.source_hash.to_owned(),
                        source_mtime: c.source_mtime,
                    },
                    // The document's length is the entry's, which the terms added up to.
                    Some(_) => {
                        self.outline.source_count += 1;
                        let first = self.outline.documents.len();
                        for members in &c.outline {
                            self.outline.push_cached(members);
                        }
                        self.partition.docs.push(doc);
                        FileRead::Document {
                            doc: self.partition.docs.len() - 1,
                            outline: first..self.outline.documents.len(),
                            cached: file.body.map(|body| (body, c.entries_at.clone())),
                        }
                    }
                }
            }
        };
        if !matches!(read, FileRead::Unreadable) {
            self.partition.source_count += 1;
            self.imports.extend(imports.iter().cloned());
        }
        self.files.push(FileRow {
            rel: rel.to_string_lossy().into_owned(),
            identity: Some(identity),
            imports,
            read,
        });
        true
    }
}

/// The `api-docs` partition: one document per distribution description, as the reference builds
/// it (path the distribution's name, generic passages of its text, no file to stat), sorted by
/// path; `dependency_fingerprint` as the API partitions carry it.
pub fn build_api_docs(
    docs: Vec<ApiDoc>,
    stamp: &Stamp,
    dependency_fingerprint: Option<String>,
) -> Partition {
    let units = docs.into_iter().map(|doc| ApiModule {
        path: doc.distribution.clone(),
        symbol: None,
        signature: None,
        text: doc.text,
        passage: None,
        language: None,
        provenance: Provenance::Doc {
            distribution: doc.distribution,
            version: doc.version,
        },
    });
    build_api("api-doc", units.collect(), stamp, dependency_fingerprint)
}

/// The `api-modules` partition: the imported distributions' public definitions (signature, then
/// docstring) and declared-only imports.
pub fn build_api_modules(
    units: Vec<ApiModule>,
    stamp: &Stamp,
    dependency_fingerprint: Option<String>,
) -> Partition {
    build_api("api-module", units, stamp, dependency_fingerprint)
}

/// An API partition of `units`, sorted by (path, symbol) as the reference sorts units (stably);
/// a definition's text gets Python passages, any other the generic ones; no file to stat.
fn build_api(
    source_kind: &'static str,
    mut units: Vec<ApiModule>,
    stamp: &Stamp,
    dependency_fingerprint: Option<String>,
) -> Partition {
    let mut partition = Partition {
        dependency_fingerprint,
        ..Partition::empty(source_kind, stamp)
    };
    units.sort_by(|a, b| {
        (a.path.as_str(), a.symbol.as_deref().unwrap_or(""))
            .cmp(&(b.path.as_str(), b.symbol.as_deref().unwrap_or("")))
    });
    for unit in units {
        partition.source_count += 1;
        let language = unit.language;
        let passages = match unit.passage {
            Some(passage) => vec![passage],
            None => passages::passages(&unit.text, language),
        };
        let mut doc = CodeDoc {
            path: unit.path,
            language,
            length: 0,
            snippet: passages::snippet(&passages, &unit.text),
            passages,
            source_hash: sha256::hex_digest(unit.text.as_bytes()),
            source_mtime: 0.0,
            symbol: unit.symbol,
            signature: unit.signature,
            provenance: Some(unit.provenance),
        };
        doc.length = partition.postings.add(&unit.text, Tokenizer::Code);
        if doc.length > 0 {
            partition.docs.push(doc);
        }
    }
    partition
}

/// SHA-256 of `path:symbol:source_hash` joined by `|`, sorted by (path, symbol).
fn fingerprint_of(docs: &[CodeDoc]) -> String {
    let mut parts: Vec<((&str, &str), String)> = docs
        .iter()
        .map(|d| {
            let symbol = d.symbol.as_deref().unwrap_or("");
            let part = format!("{}:{symbol}:{}", d.path, d.source_hash);
            ((d.path.as_str(), symbol), part)
        })
        .collect();
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    let joined: Vec<String> = parts.into_iter().map(|(_, s)| s).collect();
    sha256::hex_digest(joined.join("|").as_bytes())
}

impl Partition {
    /// A partition with no documents.
    pub fn empty(source_kind: &'static str, stamp: &Stamp) -> Partition {
        Partition {
            source_kind,
            docs: Vec::new(),
            postings: Postings::new(),
            source_count: 0,
            stamp: stamp.clone(),
            dependency_fingerprint: None,
            sorted_terms: None,
            fingerprint: std::sync::OnceLock::new(),
        }
    }

    /// The documents' [`fingerprint_of`], computed once: ask only once the partition is built.
    pub fn source_fingerprint(&self) -> String {
        self.fingerprint
            .get_or_init(|| fingerprint_of(&self.docs))
            .clone()
    }

    /// The file's bytes: `json.dumps(partition, indent=2, sort_keys=True) + "\n"` (keys are
    /// written in sorted order by hand).
    pub fn to_json(&self) -> String {
        self.to_json_at(&self.stamp.built_at)
    }

    /// [`Partition::to_json`] as if built at `built_at` (with the build id that follows from it):
    /// what a previous build of the same content wrote.
    pub fn to_json_at(&self, built_at: &str) -> String {
        self.to_json_recorded(built_at, &mut Written::default())
    }

    /// [`Partition::to_json_at`], recording where its parts lie in `written`.
    pub fn to_json_recorded(&self, built_at: &str, written: &mut Written) -> String {
        self.to_json_with(built_at, &self.build_id_at(built_at), written)
    }

    /// The `index_build_id` of this partition written at `built_at`: SHA-256 of
    /// `"<source_fingerprint>|<built_at>|<source_count>"`.
    pub fn build_id_at(&self, built_at: &str) -> String {
        let fingerprint = self.source_fingerprint();
        sha256::hex_digest(format!("{fingerprint}|{built_at}|{}", self.source_count).as_bytes())
    }

    /// The file's bytes with the given `built_at` and `index_build_id`.
    fn to_json_with(&self, built_at: &str, build_id: &str, written: &mut Written) -> String {
        let mut w = PyJson::new(Some(2), 4096 + self.postings.term_count() * 64);
        // Without a previous file to copy from, nothing but the sink can fail, and there is none.
        let _ = self.write_json(&mut w, built_at, build_id, written, None);
        w.finish()
    }

    /// [`Partition::to_json`] streamed into `sink`, recording where its parts lie in `written`.
    /// With `reuse`, the postings that the previous file holds as they are now are copied from
    /// it ([`PostingsReuse`]).
    pub fn write_to(
        &self,
        sink: &mut dyn std::io::Write,
        written: &mut Written,
        reuse: Option<&PostingsReuse>,
    ) -> std::io::Result<()> {
        let built_at = &self.stamp.built_at;
        let mut w = PyJson::streaming(Some(2), sink);
        let build_id = self.build_id_at(built_at);
        self.write_json(&mut w, built_at, &build_id, written, reuse)?;
        w.finish_streaming()
    }

    fn write_json(
        &self,
        w: &mut PyJson,
        built_at: &str,
        build_id: &str,
        written: &mut Written<'_>,
        reuse: Option<&PostingsReuse>,
    ) -> std::io::Result<()> {
        let fingerprint = self.source_fingerprint();
        let by_term = self.postings.by_term();
        let norms = self.postings.vector_norms(&by_term);
        w.begin_object();
        w.key("N");
        w.int(self.docs.len() as u64);
        w.key("artifact_type");
        w.string("code-index-partition");
        w.key("avgdl");
        w.float(self.postings.avgdl());
        w.key("built_at");
        w.string(built_at);
        w.key("code_index_schema_version");
        w.string(SCHEMA_VERSION);
        w.key("dependency_fingerprint");
        w.opt_string(self.dependency_fingerprint.as_deref());
        w.key("documents");
        written.documents.clear();
        written.documents.reserve_exact(self.docs.len());
        let start = w.position();
        w.begin_array();
        for (doc_id, doc) in self.docs.iter().enumerate() {
            let at = w.element_at();
            self.write_document(w, doc_id, doc, norms[doc_id]);
            written.documents.push((at, w.position()));
        }
        w.end_array();
        written.cuts.documents = (start, w.position());
        w.key("fallback_policy");
        w.string(FALLBACK_POLICY);
        w.key("framework");
        w.string(&self.stamp.framework);
        w.key("index_build_id");
        w.string(build_id);
        w.key("index_format_version");
        w.string(FORMAT_VERSION);
        w.key("index_write_owner");
        w.string(WRITE_OWNER);
        w.key("postings");
        let start = w.position();
        let record = written.terms.as_deref_mut();
        match (&self.sorted_terms, reuse) {
            (Some(order), Some(reuse)) => {
                reuse.write(w, &self.postings, &by_term, order, record)?
            }
            (Some(order), None) => {
                write_postings(w, &self.postings, &by_term, TermOrder::Given(order), record)
            }
            (None, _) => write_postings(w, &self.postings, &by_term, TermOrder::Sorted, record),
        }
        written.cuts.postings = (start, w.position());
        finish_partition(
            w,
            &self.stamp.project_name,
            self.source_count,
            &fingerprint,
            self.source_kind,
        );
        Ok(())
    }

    /// The manifest's entry for this partition as written at `built_at`.
    pub fn manifest_entry(&self, built_at: &str) -> Value {
        manifest_entry(
            self.source_kind,
            self.docs.len() as u64,
            self.source_count as u64,
            built_at,
            &self.source_fingerprint(),
            self.dependency_fingerprint.as_deref(),
        )
    }

    fn write_document(&self, w: &mut PyJson, doc_id: usize, doc: &CodeDoc, norm: f64) {
        w.begin_object();
        w.key("doc_id");
        w.int(doc_id as u64);
        w.key("language");
        w.opt_string(doc.language);
        w.key("length");
        w.int(doc.length);
        w.key("passages");
        w.begin_array();
        for p in &doc.passages {
            w.element();
            w.string(p);
        }
        w.end_array();
        w.key("path");
        w.string(&doc.path);
        w.key("provenance");
        match &doc.provenance {
            Some(provenance) => write_provenance(w, provenance),
            None => w.null(),
        }
        w.key("signature");
        w.opt_string(doc.signature.as_deref());
        w.key("snippet");
        w.string(&doc.snippet);
        w.key("source_hash");
        w.string(&doc.source_hash);
        w.key("source_kind");
        w.string(self.source_kind);
        w.key("source_mtime");
        w.float(doc.source_mtime);
        w.key("symbol");
        w.opt_string(doc.symbol.as_deref());
        w.key("title");
        // The symbol, else the path's last part, else the path.
        let title = doc.symbol.clone().unwrap_or_else(|| {
            Path::new(&doc.path)
                .file_name()
                .map_or_else(|| doc.path.clone(), |n| n.to_string_lossy().into_owned())
        });
        w.string(&title);
        w.key("vector_norm_sq");
        w.float(norm);
        w.end_object();
    }
}

/// A partition's entry in the manifest (without `file`, which the manifest adds).
pub fn manifest_entry(
    source_kind: &str,
    documents: u64,
    source_count: u64,
    built_at: &str,
    source_fingerprint: &str,
    dependency_fingerprint: Option<&str>,
) -> Value {
    obj([
        ("source_kind", Value::from(source_kind)),
        ("N", Value::from(documents)),
        ("source_count", Value::from(source_count)),
        ("built_at", Value::from(built_at)),
        ("source_fingerprint", Value::from(source_fingerprint)),
        (
            "dependency_fingerprint",
            dependency_fingerprint.map_or(Value::Null, Value::from),
        ),
    ])
}

/// A unit's `provenance` object, keys sorted, in the reference's shape for its kind.
fn write_provenance(w: &mut PyJson, provenance: &Provenance) {
    let (distribution, version) = match provenance {
        Provenance::Doc {
            distribution,
            version,
        }
        | Provenance::Source {
            distribution,
            version,
            ..
        }
        | Provenance::Declared {
            distribution,
            version,
        } => (distribution, version),
    };
    w.begin_object();
    if let Provenance::Declared { .. } = provenance {
        w.key("declared_only");
        w.bool(true);
    }
    w.key("distribution");
    w.string(distribution);
    if let Provenance::Source { resolved_from, .. } = provenance {
        w.key("editable");
        w.null();
        w.key("resolved_from");
        w.string(resolved_from);
    }
    w.key("version");
    w.opt_string(version.as_deref());
    w.end_object();
}

/// The manifest's bytes, from the partitions as they are on disk (`(name, manifest entry)`).
pub fn manifest_json(on_disk: Vec<(&str, Value)>, stamp: &Stamp) -> String {
    let mut partitions = agentteams_mcp::json::Map::new();
    for (name, mut entry) in on_disk {
        if let Some(map) = entry.as_object_mut() {
            map.insert("file", Value::from(format!("{name}.json")));
        }
        partitions.insert(name, entry);
    }
    let strings =
        |items: &[&str]| Value::from(items.iter().map(|s| Value::from(*s)).collect::<Vec<_>>());
    let manifest = obj([
        ("artifact_type", Value::from("code-index-manifest")),
        ("code_index_schema_version", Value::from(SCHEMA_VERSION)),
        ("index_format_version", Value::from(FORMAT_VERSION)),
        ("index_write_owner", Value::from(WRITE_OWNER)),
        ("vector_runtime_mode", Value::from(VECTOR_MODE)),
        ("vector_model_id", Value::Null),
        ("vector_dim", Value::Null),
        ("fallback_policy", Value::from(FALLBACK_POLICY)),
        ("project_name", Value::from(stamp.project_name.as_str())),
        ("framework", Value::from(stamp.framework.as_str())),
        ("built_at", Value::from(stamp.built_at.as_str())),
        ("partitions", Value::Object(partitions)),
        (
            "query_entrypoints",
            strings(&["agentteams --query-code", "/code-recall"]),
        ),
        (
            "maintenance_entrypoints",
            strings(&["agentteams --refresh-code-index", "agentteams --update"]),
        ),
        ("trigger_sources", strings(&["cli", "script"])),
    ]);
    let mut w = PyJson::new(Some(2), 2048);
    w.value(&manifest, true);
    let mut text = w.finish();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::schema::validate_code_index;
    use agentteams_mcp::json::parse;

    /// `rels` under `dir` as listed sources, and a stamp for project "Gears".
    fn sources_and_stamp(dir: &Path, rels: &[&str]) -> (Vec<CodeSource>, Stamp) {
        let sources = (rels.iter())
            .map(|rel| CodeSource {
                rel: rel.into(),
                identity: Identity::of(&dir.join(rel)),
            })
            .collect();
        let stamp = Stamp {
            built_at: "2026-10-07T12:34:56Z".into(),
            project_name: "Gears".into(),
            framework: "claude".into(),
        };
        (sources, stamp)
    }

    #[test]
    fn a_cached_entry_that_does_not_decode_is_read_again_and_the_rest_are_kept() {
        let dir = crate::scratch::TempDir::new("index-code-cached-entry");
        let rels = ["a.py", "b.py", "c.py"];
        for (i, rel) in rels.iter().enumerate() {
            let text = format!("def gear_{i}(bolt):\n    return bolt + {i}\n");
            std::fs::write(dir.join(rel), text).unwrap();
        }
        // Past the racy window, so the cache may serve every file on its identity.
        let racy = build_cache::CACHE_RACY_WINDOW;
        std::thread::sleep(racy + std::time::Duration::from_millis(100));
        let (sources, stamp) = sources_and_stamp(&dir, &rels);
        let full = build_local(&dir, &sources, &stamp, None, &mut |_| {});
        let builder = Identity::of(&dir.join("a.py")).unwrap();
        let root = dir.to_string_lossy();
        let outputs = Outputs {
            local: Identity::UNKNOWN,
            outline: Identity::UNKNOWN,
            built_at: stamp.built_at.clone(),
            documents: 3,
            source_count: 3,
            source_fingerprint: full.partition.source_fingerprint(),
            terms: 0,
            definitions: 0,
            project_name: stamp.project_name.clone(),
            framework: stamp.framework.clone(),
        };
        let mut bytes = Vec::new();
        full.write_cache(&mut bytes, &builder, &root, &outputs)
            .unwrap();
        let mut cache = BuildCache::parse(&bytes, &builder, &root).unwrap();
        // Taken whole from the cache, the rebuild is the full build.
        let kept = build_local(&dir, &sources, &stamp, Some(&cache), &mut |_| {});
        assert_eq!(kept.reused, 3);
        assert_eq!(kept.partition.to_json(), full.partition.to_json());
        // b.py's entry cut short: b.py is read again, a.py and c.py still come from the cache.
        let body = cache.files[1].body.unwrap();
        cache.files[1].body = Some(&body[..body.len() - 1]);
        let rebuilt = build_local(&dir, &sources, &stamp, Some(&cache), &mut |_| {});
        assert_eq!(rebuilt.reused, 2);
        assert_eq!(rebuilt.partition.to_json(), full.partition.to_json());
        let outline = |local: &Local<'_>| local.outline.to_json(&stamp, "fingerprint", "build");
        assert_eq!(outline(&rebuilt), outline(&full));
    }

    #[test]
    fn a_partition_is_written_valid_with_sorted_keys_and_its_stamp() {
        let dir = std::env::temp_dir().join(format!("index-code-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(
            dir.join("pkg/a.py"),
            "import os.path, yaml as y\nfrom .near import z\ndef alpha(x):\n    '''Doc é.'''\n    from requests import get\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.sh"), "beta() {\n}\n").unwrap();
        std::fs::write(dir.join("empty.py"), "").unwrap();
        let (sources, stamp) = sources_and_stamp(&dir, &["b.sh", "empty.py", "pkg/a.py"]);
        let Local {
            partition, imports, ..
        } = build_local(&dir, &sources, &stamp, None, &mut |_| {});
        assert_eq!((partition.docs.len(), partition.source_count), (2, 3));
        // Absolute paths, as the reference stores them; every absolute import, at any depth.
        assert_eq!(
            partition.docs[1].path,
            dir.join("pkg/a.py").to_string_lossy()
        );
        assert_eq!(
            imports.into_iter().collect::<Vec<_>>(),
            ["os", "requests", "yaml"]
        );
        let text = partition.to_json();
        let parsed = parse(text.as_bytes()).unwrap();
        assert!(validate_code_index(&parsed).is_ok());
        assert_eq!(parsed.get("project_name").unwrap().as_str(), Some("Gears"));
        assert_eq!(parsed.get("framework").unwrap().as_str(), Some("claude"));
        // Written at another time: only `built_at` and the build id that follows from it differ.
        let earlier = parse(partition.to_json_at("2026-01-01T00:00:00Z").as_bytes()).unwrap();
        for key in ["built_at", "index_build_id"] {
            assert_ne!(earlier.get(key), parsed.get(key), "{key}");
        }
        let without = |v: &Value| {
            let mut map = v.as_object().unwrap().clone();
            map.remove("built_at");
            map.remove("index_build_id");
            map
        };
        assert_eq!(without(&earlier), without(&parsed));
        // Keys are written sorted, exactly as json.dumps(sort_keys=True, indent=2) would.
        let mut resorted = PyJson::new(Some(2), 0);
        resorted.value(&parsed, true);
        assert_eq!(format!("{}\n", resorted.finish()), text);
        let empty = Partition::empty("api-doc", &stamp);
        assert!(validate_code_index(&parse(empty.to_json().as_bytes()).unwrap()).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
