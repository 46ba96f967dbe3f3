//! The `recall` server: read-only queries of a team's memory index and code index
//! (`query_index`, `query_code`), compatible with the reference implementation's indexes,
//! arguments, messages, scores and result shape.
//!
//! Module map: the index formats it shares with the builder are [`crate::corpus`]'s ([`teamdir`]
//! finds the index and confines paths, [`schema`] validates). [`load`] reads, validates and
//! caches index files through one of two paths that import only downward: `stream` reads the
//! common shape of a file straight into the ranker's form, `tree` parses a file whole,
//! validates it and converts it (and converts each document `stream` reads); both make the
//! types of `loaded`. [`rank`] (the reference's scorer) and [`relevance`] (the default ranking,
//! over [`thesaurus`] and [`words`]) do the retrieval; [`sections`] and [`outline`] read the
//! sidecars, and [`refine`] names a code hit's definition.
//! recall never writes anything and never refreshes an index. Everything it answers passes
//! through the suite's sanitiser ([`agentteams_mcp::sanitize`]) in [`Recall`]'s `call`.

pub mod load;
mod loaded;
pub mod lookup;
pub mod outline;
pub mod rank;
pub mod refine;
pub mod relevance;
pub mod resources;
pub mod sections;
pub mod staleness;
mod stream;
pub mod thesaurus;
mod tree;
pub mod words;

pub use load::MAX_PARTITIONS;

use crate::compat::Compat;
use crate::corpus::sidecars::{OUTLINE_FILE, SECTIONS_FILE};
use crate::corpus::text::{cut_chars, is_python_whitespace};
use crate::corpus::{schema, teamdir};
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::sanitize;
use agentteams_mcp::server::{
    CallContext, LogLevel, PromptSet, ResourceSet, Tool, ToolError, ToolOutput, ToolSet,
};
use load::{CodeFile, IndexKind, Loaded, Loader};
use rank::Hit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most hits one call returns.
pub const MAX_K: u64 = 20;
/// Hits returned when the call does not say.
pub const DEFAULT_K: u64 = 5;
/// Longest query, in code points.
pub const MAX_QUERY_CHARS: usize = 500;
/// Code points of a returned snippet before it is cut (and `…` appended).
pub const SNIPPET_MAX: usize = 400;
/// `query_code`'s `kind` values, in the order messages list them.
pub const KINDS: [&str; 4] = ["all", "local", "api", "doc"];

/// `local.json` files of at least this many bytes are answered through the code-lookup sidecar
/// when it is there and bound to them ([`lookup`]): the first answer reads what the query
/// touches, and the partition is never resident. Smaller ones are loaded whole and kept, so warm
/// answers come from memory (the standard library's 43 MB partition: 44 MiB resident, about a
/// millisecond an answer, where one through the lookup takes three or four).
pub const LOOKUP_FROM_BYTES: u64 = 64 * 1024 * 1024;

/// The local partition's `source_kind`.
const LOCAL_KIND: &str = "local-script";
const QUERY_MESSAGE: &str = "query must be a non-empty string of at most 500 characters";
const K_MESSAGE: &str = "k must be an integer from 1 to 20";
const KIND_MESSAGE: &str = "kind must be one of all, local, api, doc";

/// The recall tool set for one project root.
pub struct Recall {
    root: PathBuf,
    loader: Loader,
    compat: Compat,
    /// The code outline last used, kept while the loader hands out the same file.
    outline: std::sync::Mutex<Option<Arc<outline::Outline>>>,
    /// Partitions of at least this many bytes are answered through the lookup sidecar.
    lookup_from: u64,
    /// The lookup last opened, or the identities of files that gave none (so a bad sidecar is
    /// not read again on every query).
    lookup: std::sync::Mutex<Option<(lookup::LookupKey, Option<Arc<lookup::LocalLookup>>)>>,
    /// The last staleness verdicts, reused for a burst of queries.
    verdicts: staleness::Verdicts,
}

impl Recall {
    /// A recall server over the project at `root` (canonicalised: the containment rule compares
    /// resolved paths).
    pub fn new(root: &Path) -> Result<Recall, String> {
        Recall::with_cache_budget(root, load::MAX_CACHE_BYTES)
    }

    /// [`Recall::new`] with a cache that keeps at most `budget` bytes of loaded files (at most
    /// [`load::MAX_CACHE_BYTES`]).
    pub fn with_cache_budget(root: &Path, budget: u64) -> Result<Recall, String> {
        let root = std::fs::canonicalize(root)
            .map_err(|e| format!("cannot use {} as the project root: {e}", root.display()))?;
        if !root.is_dir() {
            return Err(format!("{} is not a directory", root.display()));
        }
        Ok(Recall {
            root,
            loader: Loader::with_budget(budget),
            compat: Compat::default(),
            outline: std::sync::Mutex::new(None),
            lookup_from: LOOKUP_FROM_BYTES,
            lookup: std::sync::Mutex::new(None),
            verdicts: staleness::Verdicts::default(),
        })
    }

    /// This server answering through the lookup sidecar for `local.json` files of at least
    /// `bytes` (default [`LOOKUP_FROM_BYTES`]; `0`: always, `u64::MAX`: never).
    pub fn with_lookup_from(mut self, bytes: u64) -> Recall {
        self.lookup_from = bytes;
        self
    }

    /// The lookup for the partition at `partition` (resolved), when it applies: the product's
    /// mode, a sidecar bound to that file and its outline, and a file of at least
    /// `lookup_from` bytes.
    fn local_lookup(&self, team: &Path, partition: &Path) -> Option<Arc<lookup::LocalLookup>> {
        // The partition's size first (one `stat`): most answers need look no further.
        let small = |len: u64| len < self.lookup_from;
        if self.compat != Compat::Product
            || std::fs::metadata(partition).map_or(true, |m| small(m.len()))
        {
            return None;
        }
        let paths = lookup::LookupPaths::of(&self.root, team)?;
        if paths.local() != partition {
            return None;
        }
        let key = paths.key();
        let [Some(_), Some(local), Some(_)] = key.identities() else {
            return None;
        };
        if small(local.len) {
            return None;
        }
        let mut cached = self.lookup.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((known, lookup)) = cached.as_ref() {
            if *known == key {
                return lookup.clone();
            }
        }
        // Dropped before the next is read: two are never resident at once.
        *cached = None;
        let opened = lookup::LocalLookup::open(&paths).map(Arc::new);
        *cached = Some((key, opened.clone()));
        opened
    }

    /// This server answering the way `compat` chooses: under [`Compat::Reference`] the
    /// reference's scores, hits, fields, paths (as stored) and messages; by default the product's.
    pub fn with_compat(mut self, compat: Compat) -> Recall {
        self.compat = compat;
        self
    }

    /// How many index files were read and decoded so far (loads the cache did not answer).
    pub fn files_read(&self) -> u64 {
        self.loader.reads()
    }

    /// The memory index, loaded (or from the cache): what `query_index` ranks and the memory
    /// resources read.
    fn memory(&self) -> Result<Arc<Loaded>, String> {
        self.memory_in_team().map(|(loaded, _)| loaded)
    }

    /// [`Recall::memory`] and the team dir it was found in.
    fn memory_in_team(&self) -> Result<(Arc<Loaded>, PathBuf), String> {
        self.loader.begin_query();
        let team = teamdir::find_team_dir(&self.root, teamdir::MEMORY_MARKER, self.compat)?;
        let loaded = self.loader.load(
            &self.root,
            &team.join(teamdir::MEMORY_MARKER),
            IndexKind::Memory,
        )?;
        match &*loaded {
            Loaded::Memory(_) => Ok((loaded, team)),
            _ => Err("memory index failed schema validation: not a memory index".into()),
        }
    }

    /// The memory index and its top `k` documents for `query`: by default ranked by their best
    /// section when the team dir holds the index's sections sidecar ([`sections`]), else whole.
    /// A sidecar that is missing, unreadable, invalid or of another build is passed over: it
    /// only refines the ranking, and the whole-document ranking is still a correct answer.
    fn memory_hits(&self, query: &str, k: usize) -> Result<(Arc<Loaded>, Vec<Hit>), String> {
        let (loaded, team) = self.memory_in_team()?;
        let Loaded::Memory(memory) = &*loaded else {
            return Err("memory index failed schema validation: not a memory index".into());
        };
        let by_section = (self.compat == Compat::Product)
            .then(|| self.sections_of(&team))
            .flatten()
            .and_then(|sidecar| match &*sidecar {
                Loaded::Memory(sections) => sections::rank(memory, sections, query, k, &self.root),
                _ => None,
            });
        let hits = by_section.unwrap_or_else(|| self.rank(memory, query, k));
        Ok((loaded, hits))
    }

    /// The code outline in `team`, if one is there and loads (confined first, like every path
    /// recall opens); reused while the loader returns the same file. Like the sections sidecar,
    /// an outline that is missing, unreadable or invalid is passed over.
    fn outline_of(&self, team: &Path) -> Option<Arc<outline::Outline>> {
        let path = team.join("references").join(OUTLINE_FILE);
        teamdir::confine(&self.root, &path).ok()?;
        if !path.is_file() {
            return None;
        }
        let loaded = self.loader.load(&self.root, &path, IndexKind::Code).ok()?;
        let mut cached = self.outline.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(outline) = cached.as_ref().filter(|o| o.is_of(&loaded)) {
            return Some(Arc::clone(outline));
        }
        let outline = Arc::new(outline::Outline::of(loaded)?);
        *cached = Some(Arc::clone(&outline));
        Some(outline)
    }

    /// The sections sidecar of the memory index in `team`, if one is there and loads. Confined
    /// before its existence is tested, like every path recall opens.
    fn sections_of(&self, team: &Path) -> Option<Arc<Loaded>> {
        let path = team.join("references").join(SECTIONS_FILE);
        teamdir::confine(&self.root, &path).ok()?;
        if !path.is_file() {
            return None;
        }
        self.loader.load(&self.root, &path, IndexKind::Memory).ok()
    }

    fn query_index(&self, query: &str, k: usize) -> Result<Value, String> {
        let (loaded, hits) = self.memory_hits(query, k)?;
        let Loaded::Memory(corpus) = &*loaded else {
            return Err("memory index failed schema validation: not a memory index".into());
        };
        let stale = self.compat == Compat::Reference
            || self
                .verdicts
                .reuse("memory", &corpus.built_at, &corpus.built_at, || {
                    staleness::may_be_stale(
                        &self.root,
                        &corpus.built_at,
                        &corpus.built_at,
                        corpus.documents.iter().map(|d| d.path()),
                        true,
                    )
                });
        Ok(result(
            Value::from(corpus.built_at.as_str()),
            stale,
            hits.iter().map(|h| self.hit_value(h, false)).collect(),
        ))
    }

    fn query_code(&self, query: &str, k: usize, kind: &str) -> Result<Value, String> {
        let team = teamdir::find_team_dir(&self.root, teamdir::CODE_MARKER, self.compat)?;
        self.loader.begin_query();
        let manifest = self.loader.load(
            &self.root,
            &team.join(teamdir::CODE_MARKER),
            IndexKind::Code,
        )?;
        let (partitions, last_build): (&[(String, String)], &str) = match &*manifest {
            Loaded::Code(CodeFile::Manifest {
                partitions,
                built_at,
            }) => (partitions, built_at),
            _ => (&[], ""),
        };
        if partitions.len() > MAX_PARTITIONS {
            return Err(format!(
                "code index failed schema validation: manifest.json: $.partitions: lists {} partitions, more than the limit of {MAX_PARTITIONS}",
                partitions.len()
            ));
        }
        let dir = team.join("references/code-index");
        let allowed: &[&str] = match kind {
            "local" => &["local-script"],
            "api" => &["api-module"],
            "doc" => &["api-doc"],
            _ => &schema::SOURCE_KINDS,
        };
        // One partition at a time: each is loaded (or found in the cache), ranked and let go
        // before the next, so partitions beyond the cache's budget are never all resident.
        let mut built_at: Option<String> = None;
        // The reference's mode says `true` always, as the reference does.
        let mut stale = self.compat == Compat::Reference;
        // `None` until the local partition is judged: with none, an answer cannot tell.
        let mut local_stale: Option<bool> = None;
        let mut needs_local = false;
        let mut hits: Vec<Hit> = Vec::new();
        // Loaded only for a local partition loaded whole: a lookup reads its own parts of it.
        let outline = std::cell::OnceCell::new();
        let outline = || {
            outline
                .get_or_init(|| {
                    (self.compat == Compat::Product)
                        .then(|| self.outline_of(&team))
                        .flatten()
                })
                .clone()
        };
        for (_, file) in partitions {
            let path = dir.join(file);
            // Confine before testing existence, so the answer never reveals which outside files exist.
            let resolved = teamdir::confine(&self.root, &path)?;
            if !path.exists() {
                stale = true;
                continue;
            }
            let wanted = allowed.contains(&LOCAL_KIND);
            let looked_up = self.local_lookup(&team, &resolved).and_then(|lookup| {
                let ranked = match wanted {
                    true => lookup.rank(query, k, &self.root)?,
                    false => Vec::new(),
                };
                Some((lookup, ranked))
            });
            if let Some((lookup, ranked)) = looked_up {
                let partition = lookup.partition();
                keep_latest(&mut built_at, &partition.built_at);
                if !stale {
                    local_stale =
                        Some(self.local_stale(&partition.built_at, last_build, lookup.paths()));
                }
                needs_local |= wanted;
                hits.extend(ranked);
                continue;
            }
            let loaded = self.loader.load(&self.root, &path, IndexKind::Code)?;
            let Loaded::Code(file) = &*loaded else {
                continue;
            };
            keep_latest(&mut built_at, file.built_at());
            if let CodeFile::Partition(corpus) = file {
                if !stale && corpus.source_kind.as_deref() == Some(LOCAL_KIND) {
                    let paths = corpus.documents.iter().map(|d| d.path());
                    local_stale = Some(self.local_stale(&corpus.built_at, last_build, paths));
                }
                if corpus
                    .source_kind
                    .as_deref()
                    .is_some_and(|s| allowed.contains(&s))
                {
                    // The local partition's staleness also decides the API partitions' (their
                    // fingerprint holds its `.py` files' imports): judged once, after the loop.
                    needs_local = true;
                    if corpus.source_kind.as_deref() != Some(LOCAL_KIND) {
                        stale =
                            stale || staleness::dependencies_may_be_stale(&self.root, last_build);
                    }
                    // The outline belongs to the local partition alone.
                    let outline = (corpus.source_kind.as_deref() == Some(LOCAL_KIND))
                        .then(outline)
                        .flatten();
                    match outline.as_deref().filter(|o| o.belongs_to(corpus)) {
                        Some(outline) => {
                            // The query's words are looked up once for both.
                            let words = relevance::QueryWords::new(corpus, query);
                            let mut ranked = relevance::rank_words(
                                corpus,
                                &words,
                                query,
                                k,
                                &self.root,
                                Some(outline),
                            );
                            refine::refine(outline, &words, &self.root, &mut ranked);
                            hits.extend(ranked);
                        }
                        None => hits.extend(self.rank(corpus, query, k)),
                    }
                }
            }
        }
        let built_at = built_at.map_or(Value::Null, Value::from);
        let hits = rank::merge_partitions(hits, k);
        Ok(result(
            built_at,
            stale || partitions.is_empty() || (needs_local && local_stale != Some(false)),
            hits.iter().map(|h| self.hit_value(h, true)).collect(),
        ))
    }

    /// Whether the local partition of `built_at` over the documents at `paths` may be stale
    /// ([`staleness::may_be_stale`], a verdict reused for a burst of queries).
    fn local_stale<'a>(
        &self,
        built_at: &str,
        last_build: &str,
        paths: impl ExactSizeIterator<Item = &'a str>,
    ) -> bool {
        self.verdicts.reuse("local", built_at, last_build, || {
            staleness::may_be_stale(&self.root, built_at, last_build, paths, false)
        })
    }

    /// The top `k` documents of one corpus, scored the way the compat mode chooses: the
    /// product's ranking ([`relevance::rank`]) by default, the reference's scorer
    /// ([`rank::rank`]) under `--compat reference` (`bench/recall/parity.py --compat reference`
    /// holds it to the reference's own scorer).
    fn rank(&self, corpus: &load::Corpus, query: &str, k: usize) -> Vec<Hit> {
        match self.compat {
            Compat::Reference => rank::rank(corpus, query, k),
            Compat::Product => relevance::rank(corpus, query, k, &self.root),
        }
    }

    /// The allowlisted fields of a hit. Code hits carry `symbol`; stored absolute paths inside the
    /// project are shown relative to it (the reference's builder stores absolute ones), except
    /// under `--compat reference`, which shows what the reference shows: the path as stored.
    fn hit_value(&self, hit: &Hit, code: bool) -> Value {
        let mut map = Map::new();
        map.insert("doc_id", Value::from(hit.doc_id));
        map.insert("path", Value::from(self.display_path(&hit.path)));
        map.insert("title", Value::from(hit.title.as_str()));
        if code {
            map.insert(
                "symbol",
                hit.symbol.as_deref().map_or(Value::Null, Value::from),
            );
        }
        if let Some((first, last)) = hit.lines {
            map.insert(
                "lines",
                Value::from(vec![Value::from(first as u64), Value::from(last as u64)]),
            );
        }
        map.insert("score", Value::from(hit.rounded_score()));
        map.insert("confidence", Value::from(hit.confidence()));
        map.insert("snippet", Value::from(cap_snippet(&hit.snippet)));
        Value::Object(map)
    }

    fn display_path(&self, stored: &str) -> String {
        if self.compat == Compat::Reference {
            return stored.to_owned();
        }
        let path = Path::new(stored);
        match path.strip_prefix(&self.root) {
            Ok(rel) if path.is_absolute() && !rel.as_os_str().is_empty() => {
                rel.to_string_lossy().into_owned()
            }
            _ => stored.to_owned(),
        }
    }
}

/// `stamp` in `latest` if it is later (an empty stamp never is): an answer's `built_at` is its
/// newest partition's.
fn keep_latest(latest: &mut Option<String>, stamp: &str) {
    if !stamp.is_empty() && latest.as_deref().is_none_or(|b| stamp > b) {
        *latest = Some(stamp.to_owned());
    }
}

fn result(built_at: Value, may_be_stale: bool, hits: Vec<Value>) -> Value {
    obj([
        ("built_at", built_at),
        ("may_be_stale", Value::Bool(may_be_stale)),
        ("hits", Value::from(hits)),
    ])
}

/// The 400-code-point cap on returned snippets (stored ones are at most 240, so this only bites on
/// foreign indexes).
fn cap_snippet(snippet: &str) -> String {
    let cut = cut_chars(snippet, SNIPPET_MAX);
    if cut.len() == snippet.len() {
        snippet.to_owned()
    } else {
        format!("{cut}\u{2026}")
    }
}

/// The arguments both tools share, checked in the reference's order.
fn query_and_k(args: &Map) -> Result<(&str, usize), ToolError> {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .filter(|q| {
            !q.trim_matches(is_python_whitespace).is_empty() && q.chars().count() <= MAX_QUERY_CHARS
        })
        .ok_or_else(|| ToolError::new(QUERY_MESSAGE))?;
    let k = match args.get("k") {
        None => DEFAULT_K,
        Some(v) => v
            .as_number()
            .filter(|n| n.is_integer_token())
            .and_then(|n| n.as_u64())
            .filter(|k| (1..=MAX_K).contains(k))
            .ok_or_else(|| ToolError::new(K_MESSAGE))?,
    };
    Ok((query, k as usize))
}

fn query_schema(with_kind: bool) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "query",
        obj([
            ("type", Value::from("string")),
            ("minLength", Value::from(1u64)),
            ("maxLength", Value::from(MAX_QUERY_CHARS)),
        ]),
    );
    properties.insert(
        "k",
        obj([
            ("type", Value::from("integer")),
            ("minimum", Value::from(1u64)),
            ("maximum", Value::from(MAX_K)),
        ]),
    );
    if with_kind {
        properties.insert(
            "kind",
            obj([
                ("type", Value::from("string")),
                (
                    "enum",
                    Value::from(KINDS.iter().map(|k| Value::from(*k)).collect::<Vec<_>>()),
                ),
            ]),
        );
    }
    obj([
        ("type", Value::from("object")),
        ("required", Value::from(vec![Value::from("query")])),
        ("properties", Value::Object(properties)),
    ])
}

/// `tool` as the product declares it: a description that says what a hit holds and when to use
/// the tool, each argument described with an example and its default, and the result's schema;
/// the validation keywords stay the reference's.
fn teaching(mut tool: Tool) -> Tool {
    let code = tool.name == "query_code";
    tool.description = if code {
        "Rank the team's code and API index for a question: the top k hits, each with path, \
         symbol, lines, score, confidence and a snippet. Use it to find where something is \
         implemented or documented before reading the file."
    } else {
        "Rank the team's memory documents for a question: the top k hits, each with doc_id, \
         path, title, score, confidence and a snippet. Use it to find what the team decided or \
         wrote down; recall://memory/{doc_id} reads one whole."
    }
    .to_owned();
    let described = [
        (
            "query",
            "What to look for, in words, e.g. \"session key rotation\".",
            None,
        ),
        ("k", "How many hits, e.g. 5.", Some(Value::from(DEFAULT_K))),
        (
            "kind",
            "Which part: local code, api modules, doc pages or all, e.g. \"local\".",
            Some(Value::from("all")),
        ),
    ];
    let properties = (tool.input_schema.as_object_mut())
        .and_then(|schema| schema.get_mut("properties"))
        .and_then(Value::as_object_mut);
    if let Some(properties) = properties {
        for (name, description, default) in described {
            if let Some(Value::Object(property)) = properties.get_mut(name) {
                property.insert("description", Value::from(description));
                if let Some(default) = default {
                    property.insert("default", default);
                }
            }
        }
    }
    let typed = |kind: &str| obj([("type", Value::from(kind))]);
    // Absent from the index: null. A hit's members are the description's.
    let or_null = || {
        obj([(
            "type",
            Value::from(vec![Value::from("string"), Value::from("null")]),
        )])
    };
    let hits = obj([("type", Value::from("array")), ("items", typed("object"))]);
    tool.output_schema = Some(obj([
        ("type", Value::from("object")),
        ("required", Value::from(vec![Value::from("hits")])),
        (
            "properties",
            obj([
                ("built_at", or_null()),
                ("may_be_stale", typed("boolean")),
                ("hits", hits),
            ]),
        ),
    ]));
    tool
}

impl ToolSet for Recall {
    fn server_name(&self) -> &str {
        "agentteams-recall"
    }

    fn instructions(&self) -> Option<&str> {
        Some("Search the team's memory index (query_index) and code index (query_code). Results may be stale; nothing is ever refreshed or written.")
    }

    fn tools(&self) -> Vec<Tool> {
        let index = Tool::read_only(
            "query_index",
            "Query the team's memory index (documents). Read-only; never refreshes.",
            query_schema(false),
        )
        .title("Query the memory index")
        .argument_message("query", QUERY_MESSAGE)
        .argument_message("k", K_MESSAGE);
        let code = Tool::read_only(
            "query_code",
            "Query the team's code and API index. Read-only; never refreshes.",
            query_schema(true),
        )
        .title("Query the code index")
        .argument_message("query", QUERY_MESSAGE)
        .argument_message("k", K_MESSAGE)
        .argument_message("kind", KIND_MESSAGE);
        match self.compat {
            Compat::Reference => vec![index, code],
            Compat::Product => vec![teaching(index), teaching(code)],
        }
    }

    /// Product only: the reference serves tools alone.
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        self.compat.product_only(self)
    }

    /// Product only, like the resources.
    fn prompt_set(&self) -> Option<&dyn PromptSet> {
        self.compat.product_only(self)
    }

    fn call(
        &self,
        name: &str,
        arguments: &Map,
        ctx: &CallContext<'_>,
    ) -> Result<ToolOutput, ToolError> {
        let (query, k) = query_and_k(arguments)?;
        let reads_before = self.loader.reads();
        let value = match name {
            "query_index" => self.query_index(query, k),
            "query_code" => {
                let kind = match arguments.get("kind") {
                    None => "all",
                    Some(v) => v
                        .as_str()
                        .filter(|k| KINDS.contains(k))
                        .ok_or_else(|| ToolError::new(KIND_MESSAGE))?,
                };
                self.query_code(query, k, kind)
            }
            other => {
                return Err(ToolError::new(format!(
                    "unknown tool {}",
                    agentteams_mcp::jsonrpc::py_repr(&Value::from(other))
                )))
            }
        };
        // At debug: whether the index came from the cache, and how many files were read (by this
        // server while the call ran: concurrent calls share the count). Never the query or hits.
        let files_read = self.loader.reads().saturating_sub(reads_before);
        let mut data = Map::new();
        data.insert("event", Value::from("index"));
        data.insert("tool", Value::from(name));
        data.insert("cache_hit", Value::from(files_read == 0));
        data.insert("files_read", Value::from(files_read));
        if let Ok(value) = &value {
            let hits = value.get("hits").and_then(Value::as_array).map(|h| h.len());
            data.insert("hits", Value::from(hits.unwrap_or(0)));
        }
        ctx.log(LogLevel::Debug, Some("recall"), Value::Object(data));
        // The one place results leave recall: every string an index holds (titles, snippets,
        // paths, symbols, `built_at`) and every error text that may quote one is sanitised here,
        // after the snippet cut, so an escape is never cut in half.
        match value {
            Ok(mut value) => {
                sanitize::sanitize_value(&mut value);
                Ok(ToolOutput::Value(value))
            }
            Err(message) => Err(ToolError::new(sanitize::sanitize(&message))),
        }
    }
}
