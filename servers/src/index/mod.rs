//! The index builder behind `agentteams-mcp index build`: writes the memory index and the code
//! index recall reads, in the reference's formats, deterministically and atomically.
//!
//! Module map: [`description`] reads the project description (project name, framework, extra
//! sources and excludes), [`sources`] picks the files ([`pattern`] is Python's fnmatch and glob),
//! [`memory`] and [`code`] build the two indexes ([`passages`] extracts definitions, [`postings`]
//! counts terms), [`pyjson`] writes Python's JSON layouts, [`atomic`] replaces files, [`clock`]
//! stamps `built_at`.

pub mod atomic;
pub mod budget;
pub mod build_cache;
pub mod clock;
pub mod code;
pub mod deps;
pub mod description;
pub mod ecosystems;
pub mod interpreter;
pub mod memory;
pub mod outline;
pub mod passages;
pub mod pattern;
pub mod postings;
pub mod pyjson;
pub mod reuse;
pub mod sections;
pub mod sources;
pub mod stamp;

use crate::corpus::lookup;
use crate::corpus::schema::{
    validate_code_index, validate_memory_index, CodeIndexFile, MAX_INDEX_FILE_BYTES,
};
use crate::corpus::sidecars::{OUTLINE_FILE, SECTIONS_FILE};
use crate::corpus::teamdir::{confine, CODE_MARKER, MEMORY_MARKER, TEAM_DIRS};
use agentteams_mcp::file_identity::FileIdentity;
use agentteams_mcp::json::{self, Reader, Token, Value};
use agentteams_mcp::voice::PREFIX;
use stamp::Stamp;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What `index build` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub root: PathBuf,
    pub team_dir: Option<PathBuf>,
    pub description: Option<PathBuf>,
    pub framework: Option<String>,
    /// The Python interpreter to ask for its environment (`--python`); else the project's
    /// `.venv`/`venv` folders are read, and nothing is run.
    pub python: Option<PathBuf>,
    /// How git lists the project's files (`--git-memory-limit`, the exec helper).
    pub git: crate::gitread::GitSettings,
}

/// What one build did, for the summary line and for tests.
#[derive(Debug)]
pub struct BuildReport {
    pub team_dir: PathBuf,
    pub memory_sources: usize,
    pub memory_documents: usize,
    /// Documents of the sections sidecar (`recall::sections`).
    pub memory_sections: usize,
    /// Documents of the code outline (`recall::outline`).
    pub code_definitions: usize,
    pub memory_terms: usize,
    pub code_files: usize,
    pub code_documents: usize,
    pub code_terms: usize,
    pub source_bytes: u64,
    /// Partitions whose content changed and were rewritten.
    pub rewritten: Vec<&'static str>,
    /// Code sources listed, and those taken from the previous build's cache (`cache_used`)
    /// rather than read.
    pub code_sources: usize,
    pub code_files_reused: usize,
    pub cache_used: bool,
    /// Term lists of the rewritten `local.json` copied from the previous one ([`reuse`]);
    /// `None` when its postings were written whole.
    pub code_lists_copied: Option<usize>,
}

/// The team dir to write to when none is given: one that already holds an index (so a rebuild
/// replaces what recall reads), else the first existing agents dir, else the root.
fn default_team_dir(root: &Path) -> PathBuf {
    let candidates = || {
        TEAM_DIRS.iter().map(|d| {
            if *d == "." {
                root.to_path_buf()
            } else {
                root.join(d)
            }
        })
    };
    candidates()
        .find(|d| d.join(MEMORY_MARKER).exists() || d.join(CODE_MARKER).exists())
        .or_else(|| candidates().skip(1).find(|d| d.is_dir()))
        .unwrap_or_else(|| root.to_path_buf())
}

/// Builds and writes both indexes for the project at `options.root`. `progress(done, total)` is
/// called while code files are indexed. Everything that can fail on bad input (the description,
/// the extra-source entries) is checked before the first write, so a failed build leaves the
/// previous indexes as they were.
pub fn build(
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<BuildReport, String> {
    let root = &options.root;
    let root = std::fs::canonicalize(root)
        .map_err(|e| format!("cannot use {} as the project root: {e}", root.display()))?;
    if !root.is_dir() {
        return Err(format!("{} is not a directory", root.display()));
    }
    let team_dir = match &options.team_dir {
        Some(dir) => confine(&root, &root.join(dir)).map_err(|e| {
            format!(
                "--team-dir {}: {e} (recall reads only inside the project)",
                dir.display()
            )
        })?,
        // A default team dir may be a symlink the repository planted: confined like the rest.
        None => {
            let dir = default_team_dir(&root);
            confine(&root, &dir)
                .map_err(|e| format!("team dir {}: {e} (pass --team-dir)", dir.display()))?
        }
    };
    let description = description::load(
        &root,
        &team_dir,
        options.description.as_deref(),
        options.framework.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    // The interpreter is asked before anything is written: a failure leaves the indexes as they
    // were.
    let environments = match &options.python {
        Some(python) => interpreter::environments(python)?,
        None => deps::environment_dirs(&root),
    };
    let in_description = |e: sources::SourceError| match &description.file {
        Some(file) => format!("project description {}: {e}", file.display()),
        None => e.to_string(),
    };
    // Extra entries come only from a description file; each that brings nothing in is named
    // (sanitised: the entry is the project's text).
    if let Some(file) = &description.file {
        for unused in sources::unused_extra_dirs(&root, &description) {
            let warning = format!("project description {}: {unused}", file.display());
            note!(
                "{PREFIX}index build: warning: {}",
                agentteams_mcp::sanitize::sanitize(&warning)
            );
        }
    }
    // `references/` and `code-index/` may be symlinks in a hostile repository: resolved and
    // confined before anything is created or written, and the writes go to the resolved paths.
    let inside = |dir: PathBuf| {
        confine(&root, &dir).map_err(|e| format!("cannot write under {}: {e}", dir.display()))
    };
    let references = inside(team_dir.join("references"));
    // The previous build's cache, if this binary wrote it for this root; without an identity of
    // its own, the builder neither reads nor writes one. Opened on a second thread while the
    // sources are listed, and read whole there when a source it lists moved (on a large tree,
    // reading it took about as long as git's listing).
    let builder = std::env::current_exe()
        .ok()
        .and_then(|exe| build_cache::Identity::of(&exe));
    let root_text = root.to_string_lossy().into_owned();
    let cache_ahead = match (&builder, &references) {
        (Some(builder), Ok(references)) => read_cache_ahead(
            references.join(build_cache::BUILD_CACHE_FILE),
            *builder,
            root.clone(),
            root_text.clone(),
        ),
        _ => None,
    };
    let memory_paths = sources::memory_sources(&root, &description).map_err(in_description)?;
    let code_paths =
        sources::code_sources(&root, &description, &options.git).map_err(in_description)?;

    let references = references?;
    let code_dir = inside(references.join("code-index"))?;
    std::fs::create_dir_all(&code_dir)
        .map_err(|e| format!("cannot create {}: {e}", code_dir.display()))?;
    let stamp = Stamp {
        built_at: clock::now(),
        project_name: description.project_name,
        framework: description.framework,
    };

    let memory::Built {
        index: memory,
        sections,
    } = memory::build(&root, &memory_paths, &stamp);
    let memory_json = memory.to_json();
    check_own_output(&memory_json, "memory-index.json", |v| {
        validate_memory_index(v).map(|_| ())
    })?;
    // The sidecar first: written after the index, a reader could meet the new index with the
    // old sidecar, whose build id no longer matches (recall then ranks whole documents); written
    // before, it meets the old index with the new sidecar, the same mismatch. Either order is
    // safe; this one leaves no window in which an up-to-date index lacks its sections.
    let sections_json = sections.to_json_with_build_id(&memory.build_id());
    check_own_output(&sections_json, SECTIONS_FILE, |v| {
        validate_memory_index(v).map(|_| ())
    })?;
    atomic::write_atomic(&references.join(SECTIONS_FILE), sections_json.as_bytes())?;
    atomic::write_atomic(
        &references.join("memory-index.json"),
        memory_json.as_bytes(),
    )?;

    let total = code_paths.len();
    let cache_path = references.join(build_cache::BUILD_CACHE_FILE);
    let outline_path = references.join(OUTLINE_FILE);
    let local_path = code_dir.join("local.json");
    let unusable = |e: build_cache::CacheError| {
        if e != build_cache::CacheError::Foreign {
            let warning = format!(
                "the build cache {} is {e}; every file is read",
                cache_path.display()
            );
            note!(
                "{PREFIX}index build: warning: {}",
                agentteams_mcp::sanitize::sanitize(&warning)
            );
        }
    };
    let read = builder.as_ref().map(|builder| {
        let unchanged = |cache: &build_cache::BuildCache<'_>| {
            outputs_unchanged(cache, &stamp, &local_path, &references)
                && sources_unchanged(cache, &code_paths)
        };
        let opened = cache_ahead
            .and_then(|ahead| ahead.join().ok())
            .unwrap_or_else(|| build_cache::CacheFile::open(&cache_path));
        read_previous(opened, builder, &root_text, unchanged)
    });
    let previous_bytes = match read {
        Some(Ok(previous)) => previous,
        Some(Err(e)) => {
            unusable(e);
            Previous::None
        }
        None => Previous::None,
    };
    // The previous cache parsed whole, when a build needs it.
    let previous = match (&previous_bytes, &builder) {
        (Previous::Cache(bytes), Some(builder)) => {
            build_cache::BuildCache::parse(bytes, builder, &root_text)
                .map_err(unusable)
                .ok()
        }
        _ => None,
    };
    let cache_used = previous.is_some() || matches!(previous_bytes, Previous::Unchanged(_));
    let local = match &previous_bytes {
        Previous::Unchanged(kept) => {
            progress(total, total);
            LocalPartition::Kept(kept)
        }
        _ => LocalPartition::Built(Box::new(code::build_local(
            &root,
            &code_paths,
            &stamp,
            previous.as_ref(),
            &mut |done| progress(done, total),
        ))),
    };
    let imports = local.imports();
    // The API partitions carry the reference's dependency fingerprint, so its CLI finds them
    // fresh; if a manifest cannot be read the way the reference reads it, `null` (stale there).
    // Everything they read, in all, is bounded by one budget, Python's files first: the
    // fingerprint depends on nothing read after them.
    let budget = budget::ReadBudget::new(budget::MAX_ENVIRONMENT_BYTES);
    let distributions = deps::distributions(&root, &environments, &budget);
    let fingerprinted = deps::fingerprint(&root, &imports, &distributions, &budget);
    // Rust, npm and Go dependencies: not in the reference's fingerprint (which covers Python).
    let caches = ecosystems::Caches::from_environment();
    let packages = ecosystems::packages(&root, &caches, &budget);
    let dependency_fingerprint = match fingerprinted {
        Ok(fingerprint) => Some(fingerprint),
        // Said with the budget's own warning, below.
        Err(deps::FingerprintError::Unread) => None,
        Err(e) => {
            let warning = format!("{e}; the API partitions' dependency_fingerprint is null");
            note!(
                "{PREFIX}index build: warning: {}",
                agentteams_mcp::sanitize::sanitize(&warning)
            );
            None
        }
    };
    let (code_files, code_documents, code_definitions, code_terms) = local.figures();
    let (source_bytes, newest) = local.sources_seen();
    let mut report = BuildReport {
        team_dir: team_dir.clone(),
        memory_sources: memory.source_count,
        memory_documents: memory.docs.len(),
        memory_sections: sections.docs.len(),
        memory_terms: memory.postings.term_count(),
        code_files,
        code_documents,
        code_definitions,
        code_terms,
        code_sources: total,
        code_files_reused: match &local {
            LocalPartition::Built(built) => built.reused,
            LocalPartition::Kept(_) => total,
        },
        cache_used,
        code_lists_copied: None,
        source_bytes,
        rewritten: Vec::new(),
    };
    let destinations = Destinations {
        references: &references,
        code_dir: &code_dir,
        cache: builder.as_ref().map(|builder| CacheTarget {
            path: &cache_path,
            builder,
            root: &root_text,
        }),
    };
    let mut pending_cache = None;
    let mut on_disk: Vec<(&str, Value)> = Vec::new();
    for (name, kind) in code::PARTITIONS {
        let api;
        let partition = match kind {
            "local-script" => {
                let entry = match &local {
                    LocalPartition::Built(built) => {
                        let (entry, cache) = write_local(
                            &destinations,
                            built,
                            &stamp,
                            newest,
                            previous.as_ref(),
                            &mut report,
                        )?;
                        pending_cache = cache;
                        entry
                    }
                    LocalPartition::Kept(kept) => kept_entry(&kept.outputs),
                };
                on_disk.push((name, entry));
                continue;
            }
            "api-doc" => {
                let mut docs = deps::api_docs(&root, &imports, &distributions);
                docs.extend(ecosystems::api_docs(&packages));
                api = code::build_api_docs(docs, &stamp, dependency_fingerprint.clone());
                &api
            }
            _ => {
                let mut units = deps::api_modules(&root, &imports, &distributions, &budget);
                units.extend(ecosystems::api_modules(&packages, &budget));
                api = code::build_api_modules(units, &stamp, dependency_fingerprint.clone());
                &api
            }
        };
        let mut written = code::Written::default();
        let (entry, rewritten) =
            write_partition(&code_dir, name, partition, None, true, &mut written, None)?;
        if rewritten {
            report.rewritten.push(name);
        }
        on_disk.push((name, entry));
    }
    if budget.spent() {
        let fingerprint = match dependency_fingerprint {
            None => " and their dependency_fingerprint is null",
            Some(_) => "",
        };
        note!(
            "{PREFIX}index build: warning: stopped reading the project's environment and dependency \
             manifests at MAX_ENVIRONMENT_BYTES ({} bytes): the API partitions are \
             incomplete{fingerprint}",
            budget::MAX_ENVIRONMENT_BYTES
        );
    }
    let local_entry = on_disk
        .iter()
        .find(|(n, _)| *n == "local")
        .map(|(_, e)| e.clone());
    let manifest = code::manifest_json(on_disk, &stamp);
    check_own_output(&manifest, "manifest.json", |v| {
        validate_code_index(v).map(|_| ())
    })?;
    atomic::write_atomic(&code_dir.join("manifest.json"), manifest.as_bytes())?;
    if let (LocalPartition::Built(local), Some(builder)) = (&local, &builder) {
        // Last: a build that stopped before here leaves the old cache, whose outputs no longer
        // match the files, so the next build reads every file that changed since it.
        let outputs = local_entry
            .and_then(|entry| written_outputs(local, &entry, &stamp, &local_path, &outline_path));
        if let Some(outputs) = outputs {
            // Written already, beside `local.json`, but for the identities.
            if let Some(pending) = pending_cache {
                pending.commit(&outputs.local, &outputs.outline)?;
            } else {
                atomic::write_atomic_streamed(
                    &cache_path,
                    |sink| {
                        local
                            .write_cache(sink, builder, &root_text, &outputs)
                            .map(|_| ())
                    },
                    |_| Ok(()),
                )?;
            }
        }
    }
    Ok(report)
}

/// The previous build's cache, as far as this build read it.
enum Previous {
    /// None to use: absent, foreign, or refused (with a warning).
    None,
    /// Nothing the `local` partition depends on changed: its head was enough.
    Unchanged(Box<Kept>),
    /// The whole file, for a build that reuses what did not change.
    Cache(Vec<u8>),
}

/// Opens the cache at `path` (written by `builder` for `root`, whose text is `root_text`) on a
/// thread of its own, and reads it whole there if a source it lists moved: what
/// [`read_previous`] takes. `None` when no thread could be started.
fn read_cache_ahead(
    path: PathBuf,
    builder: build_cache::Identity,
    root: PathBuf,
    root_text: String,
) -> Option<std::thread::JoinHandle<CacheOpened>> {
    let read = move || {
        let opened = build_cache::CacheFile::open(&path)?;
        Ok(opened.map(|cache| {
            if cache.sources_moved(&builder, &root, &root_text, sources::MAX_SOURCE_FILES) {
                cache.read_ahead()
            } else {
                cache
            }
        }))
    };
    std::thread::Builder::new()
        .name("index-cache".into())
        .spawn(read)
        .ok()
}

/// A cache file as [`build_cache::CacheFile::open`] gives it.
type CacheOpened = Result<Option<build_cache::CacheFile>, build_cache::CacheError>;

/// Takes the cache `opened` (written by `builder` for `root`, its head read and perhaps its
/// tail): the head judged first, and the whole file used only when `unchanged` (judged on the
/// head) says the partition cannot simply be kept. A damaged or oversized head is an error (the
/// caller warns); so is a tail that could not be read when it is needed; the tail's damage shows
/// when it is parsed.
fn read_previous(
    opened: CacheOpened,
    builder: &build_cache::Identity,
    root: &str,
    unchanged: impl Fn(&build_cache::BuildCache<'_>) -> bool,
) -> Result<Previous, build_cache::CacheError> {
    let Some(file) = opened? else {
        return Ok(Previous::None);
    };
    let kept = {
        let (head, _) = build_cache::BuildCache::parse_head(&file.bytes, builder, root)?;
        unchanged(&head).then(|| Kept::from(&head))
    };
    Ok(match kept {
        Some(kept) => Previous::Unchanged(Box::new(kept)),
        None => Previous::Cache(file.read_tail()?),
    })
}

/// The `local` partition as this build has it: kept as the cached build left it, or built.
enum LocalPartition<'p, 'c> {
    Kept(&'p Kept),
    Built(Box<code::Local<'c>>),
}

impl LocalPartition<'_, '_> {
    /// The absolute imports of its `.py` files.
    fn imports(&self) -> BTreeSet<String> {
        match self {
            LocalPartition::Built(local) => local.imports.clone(),
            LocalPartition::Kept(kept) => kept.imports.clone(),
        }
    }

    /// The sources' bytes and newest modification time, as looked at.
    fn sources_seen(&self) -> (u64, (i64, u32)) {
        match self {
            LocalPartition::Built(local) => (local.source_bytes, local.newest),
            LocalPartition::Kept(kept) => (kept.source_bytes, kept.newest),
        }
    }

    /// Files, documents, definitions and terms, for the report.
    fn figures(&self) -> (usize, usize, usize, usize) {
        match self {
            LocalPartition::Built(local) => (
                local.partition.source_count,
                local.partition.docs.len(),
                local.outline.definition_count(),
                local.partition.postings.term_count(),
            ),
            LocalPartition::Kept(kept) => {
                let o = &kept.outputs;
                let n = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
                (
                    n(o.source_count),
                    n(o.documents),
                    n(o.definitions),
                    n(o.terms),
                )
            }
        }
    }
}

/// What a build that keeps the `local` partition needs of the cache: its outputs and the
/// imports of its sources.
struct Kept {
    outputs: build_cache::Outputs,
    imports: BTreeSet<String>,
    /// The sources' bytes and newest modification time, from their identities.
    source_bytes: u64,
    newest: (i64, u32),
}

impl Kept {
    fn from(cache: &build_cache::BuildCache<'_>) -> Kept {
        let imports: BTreeSet<&str> = cache
            .files
            .iter()
            .flat_map(|f| f.imports.iter().copied())
            .collect();
        let identities = cache.files.iter().filter_map(|f| f.identity);
        let (mut source_bytes, mut newest) = (0, (0, 0));
        for identity in identities {
            source_bytes += identity.bytes();
            newest = newest.max(identity.mtime());
        }
        Kept {
            outputs: cache.outputs.clone(),
            imports: imports.into_iter().map(str::to_owned).collect(),
            source_bytes,
            newest,
        }
    }
}

/// Whether `local.json` and the outline are as the cached build left them, for the same stamp.
/// The lookup sidecar in `references` must be bound to both as they are.
fn outputs_unchanged(
    cache: &build_cache::BuildCache<'_>,
    stamp: &Stamp,
    local: &Path,
    references: &Path,
) -> bool {
    let o = &cache.outputs;
    o.project_name == stamp.project_name
        && o.framework == stamp.framework
        && build_cache::Identity::of(local) == Some(o.local)
        && build_cache::Identity::of(&references.join(OUTLINE_FILE)) == Some(o.outline)
        && lookup::binds(
            &references.join(lookup::LOOKUP_FILE),
            &o.local.file(),
            &o.outline.file(),
        )
}

/// Whether the sources are the cached ones, in order, each with the identity it had.
fn sources_unchanged(cache: &build_cache::BuildCache<'_>, sources: &[sources::CodeSource]) -> bool {
    sources.len() == cache.files.len()
        && sources.iter().zip(&cache.files).all(|(source, file)| {
            source.rel.to_str() == Some(file.rel)
                && file.identity.is_some()
                && source.identity == file.identity
        })
}

/// The manifest entry of a `local` partition kept as the cached build wrote it.
fn kept_entry(o: &build_cache::Outputs) -> Value {
    code::manifest_entry(
        "local-script",
        o.documents,
        o.source_count,
        &o.built_at,
        &o.source_fingerprint,
        None,
    )
}

/// Writes the `local` partition, the outline and the lookup sidecar that says where their parts
/// lie, unless the cache shows all three are what this build would write (then they stay);
/// returns the partition's manifest entry.
fn write_local(
    to: &Destinations,
    local: &code::Local,
    stamp: &Stamp,
    newest: (i64, u32),
    previous: Option<&build_cache::BuildCache<'_>>,
    report: &mut BuildReport,
) -> Result<(Value, Option<PendingCache>), String> {
    let (references, code_dir) = (to.references, to.code_dir);
    let partition = &local.partition;
    let outline_path = references.join(OUTLINE_FILE);
    let local_path = code_dir.join("local.json");
    let kept = previous.filter(|cache| {
        local.changed == code::Change::Same
            && outputs_unchanged(cache, stamp, &local_path, references)
            && clock::built_after(&cache.outputs.built_at, newest.0, newest.1)
    });
    if let Some(cache) = kept {
        return Ok((partition.manifest_entry(&cache.outputs.built_at), None));
    }
    let write_outline = |built_at: &str| {
        let (fingerprint, build_id) = (
            partition.source_fingerprint(),
            partition.build_id_at(built_at),
        );
        let mut written = code::Written::default();
        let pending = atomic::write_pending(&outline_path, |sink| {
            local
                .outline
                .write_to(sink, stamp, &fingerprint, &build_id, &mut written)
        })?;
        Ok::<_, String>((pending, written.cuts, written.documents))
    };
    // After an edit, the lists of the terms it did not touch are copied from the previous file.
    let reuse = previous.filter(|_| local.changed == code::Change::Differs);
    let reuse = reuse.and_then(|cache| {
        let previous = reuse::PreviousBuild {
            local: &local_path,
            lookup: &references.join(lookup::LOOKUP_FILE),
            outputs: &cache.outputs,
            terms: local.known_terms()?.terms(),
            place_of: local.postings_as_before()?,
        };
        reuse::PostingsReuse::plan(previous, partition.docs.iter().map(|d| d.path.as_str()))
    });
    // The lookup's terms are written as the postings are, into the lookup's temporary file.
    let lookup_file = atomic::Pending::create(&references.join(lookup::LOOKUP_FILE))?;
    let mut lookup = lookup::Writer::new(lookup_file.file(), partition.postings.term_count());
    let mut record = |term: &str, range, count| lookup.term(term, range, count);
    let mut local_written = code::Written {
        terms: Some(&mut record),
        ..code::Written::default()
    };
    // When the cache shows the content changed, the old file need not be read to compare.
    let compare = local.changed != code::Change::Differs;
    // The build cache, written before the files it records are in place: their identities are
    // written into it once they are ([`PendingCache::commit`]).
    let write_cache = |target: &CacheTarget| {
        let fingerprint = partition.source_fingerprint();
        let unknown = build_cache::Identity::UNKNOWN;
        let outputs = outputs_of(
            local,
            stamp,
            &stamp.built_at,
            fingerprint,
            (unknown, unknown),
        );
        let mut identities_at = 0;
        let file = atomic::write_pending(target.path, |sink| {
            identities_at = local.write_cache(sink, target.builder, target.root, &outputs)?;
            Ok(())
        })?;
        Ok::<_, String>(PendingCache {
            file,
            identities_at,
        })
    };
    // When the content changed, `local.json` is written with this build's `built_at`, which the
    // outline names: the outline and then the cache are written meanwhile on a second thread,
    // and each is put in place in turn, `local.json` first.
    let (local_outcome, outline_outcome) = std::thread::scope(|scope| {
        let outline = (local.changed == code::Change::Differs).then(|| {
            scope.spawn(|| {
                let outline = write_outline(&stamp.built_at)?;
                let cache = to.cache.as_ref().map(write_cache).transpose()?;
                Ok::<_, String>((outline, cache))
            })
        });
        let local_outcome = write_partition(
            code_dir,
            "local",
            partition,
            Some(newest),
            compare,
            &mut local_written,
            reuse.as_ref(),
        );
        let outline_outcome = outline.map(|job| {
            job.join()
                .unwrap_or_else(|_| Err("internal error: the outline's writer stopped".into()))
        });
        (local_outcome, outline_outcome)
    });
    let (entry, rewritten) = local_outcome?;
    local_written.terms = None;
    if rewritten {
        report.rewritten.push("local");
        report.code_lists_copied = reuse.as_ref().and_then(|r| r.copied());
    }
    // The outline names the `local` partition as it is on disk: rewritten now, or kept with the
    // `built_at` of the build that wrote it.
    let built_at = entry.get("built_at").and_then(Value::as_str);
    let built_at = built_at.unwrap_or(&stamp.built_at);
    // Written meanwhile for this build's `built_at`, which a `local.json` written whole has.
    let ((outline_file, outline_cuts, outline_documents), cache) = match outline_outcome {
        Some(written) => written?,
        None => (write_outline(built_at)?, None),
    };
    outline_file.commit(|written| {
        check_written(written, OUTLINE_FILE, |v| {
            validate_code_index(v).map(|_| ())
        })
    })?;
    let outline_written = code::Written {
        cuts: outline_cuts,
        documents: outline_documents,
        terms: None,
    };
    // Bound to the two files as they are now: their identities after the renames that put
    // them in place.
    let identity = |path: &Path| {
        let meta = std::fs::symlink_metadata(path)
            .map_err(|e| format!("cannot look at {}: {e}", path.display()))?;
        Ok::<_, String>(FileIdentity::of(&meta))
    };
    let head = lookup::Head {
        local: identity(&local_path)?,
        outline: identity(&outline_path)?,
        local_cuts: local_written.cuts,
        outline_cuts: outline_written.cuts,
    };
    let documents = local.lookup_documents(&local_written, &outline_written);
    let paths: Vec<&str> = partition.docs.iter().map(|d| d.path.as_str()).collect();
    (lookup.finish(&head, &documents, &paths)).map_err(|e| lookup_file.error(e))?;
    lookup_file.commit(|_| Ok(()))?;
    Ok((entry, cache))
}

/// Where a build writes: the `references/` folder, its `code-index/`, and the build cache
/// (`None`: no cache is written).
struct Destinations<'a> {
    references: &'a Path,
    code_dir: &'a Path,
    cache: Option<CacheTarget<'a>>,
}

/// The build cache to write: its path, the binary writing it and the project root it is for.
struct CacheTarget<'a> {
    path: &'a Path,
    builder: &'a build_cache::Identity,
    root: &'a str,
}

/// A build cache written while its outputs were being written, awaiting their identities.
struct PendingCache {
    file: atomic::Pending,
    identities_at: u64,
}

impl PendingCache {
    /// Puts the cache in place with the identities of `local.json` and the outline.
    fn commit(
        self,
        local: &build_cache::Identity,
        outline: &build_cache::Identity,
    ) -> Result<(), String> {
        build_cache::write_identities(self.file.file(), self.identities_at, local, outline)
            .map_err(|e| self.file.error(e))?;
        self.file.commit(|_| Ok(()))
    }
}

/// What the cache records of this build's `local.json` and outline, as they are on disk now.
fn written_outputs(
    local: &code::Local,
    entry: &Value,
    stamp: &Stamp,
    local_path: &Path,
    outline_path: &Path,
) -> Option<build_cache::Outputs> {
    let identities = (
        build_cache::Identity::of(local_path)?,
        build_cache::Identity::of(outline_path)?,
    );
    let built_at = entry.get("built_at")?.as_str()?;
    let fingerprint = entry.get("source_fingerprint")?.as_str()?.to_owned();
    Some(outputs_of(local, stamp, built_at, fingerprint, identities))
}

/// The cache's record of outputs written from `local` at `built_at` with `fingerprint`, whose
/// files have `identities` (`local.json`'s, the outline's).
fn outputs_of(
    local: &code::Local,
    stamp: &Stamp,
    built_at: &str,
    source_fingerprint: String,
    (local_identity, outline_identity): (build_cache::Identity, build_cache::Identity),
) -> build_cache::Outputs {
    let partition = &local.partition;
    build_cache::Outputs {
        local: local_identity,
        outline: outline_identity,
        built_at: built_at.to_owned(),
        documents: partition.docs.len() as u64,
        source_count: partition.source_count as u64,
        source_fingerprint,
        terms: partition.postings.term_count() as u64,
        definitions: local.outline.definition_count() as u64,
        project_name: stamp.project_name.clone(),
        framework: stamp.framework.clone(),
    }
}

/// Parses what the builder is about to write and validates it with recall's validator: a
/// builder bug must fail the build, never produce an index recall refuses.
fn check_own_output(
    text: &str,
    name: &str,
    validate: impl Fn(&Value) -> Result<(), crate::corpus::schema::SchemaError>,
) -> Result<Value, String> {
    let value = json::parse(text.as_bytes())
        .map_err(|e| format!("internal error: {name} is not valid JSON: {e}"))?;
    validate(&value).map_err(|e| format!("internal error: {name} fails its schema: {e}"))?;
    Ok(value)
}

/// In debug builds (the test suite), reads back a file just written and validates it as
/// [`check_own_output`] does; release builds do not re-read their own output.
fn check_written(
    written: &Path,
    name: &str,
    validate: impl Fn(&Value) -> Result<(), crate::corpus::schema::SchemaError>,
) -> Result<(), String> {
    if cfg!(debug_assertions) {
        let bytes = std::fs::read(written)
            .map_err(|e| format!("internal error: cannot read back {name}: {e}"))?;
        let text =
            String::from_utf8(bytes).map_err(|_| format!("internal error: {name} is not UTF-8"))?;
        check_own_output(&text, name, validate)?;
    }
    Ok(())
}

/// Writes `partition` as `<name>.json` in `dir`, unless the file there already holds exactly
/// what this build would write, `built_at` (and the build id derived from it) apart, and its
/// `built_at` is later than `newest_source` if given (seconds, nanoseconds: the newest
/// modification of a source): then the file and its `built_at` stay, as the reference keeps a partition whose
/// content is unchanged. A source touched since would make the reference's staleness check
/// (mtime later than `built_at`) rebuild the index on every query, so then it is rewritten.
/// Returns the manifest entry of the file on disk and whether it was rewritten.
///
/// Comparing bytes rather than the reference's content fingerprint means the previous file is
/// never parsed into a tree (a planted file shaped to inflate cannot cost memory), and a file an
/// older builder wrote with other passages, snippets or names is brought up to date.
fn write_partition(
    dir: &Path,
    name: &str,
    partition: &code::Partition,
    newest_source: Option<(i64, u32)>,
    compare: bool,
    written: &mut code::Written,
    reuse: Option<&reuse::PostingsReuse>,
) -> Result<(Value, bool), String> {
    let path = dir.join(format!("{name}.json"));
    let previous = compare.then(|| previous_file(&path)).flatten();
    if let Some(previous) = previous {
        if let Some(built_at) = top_level_string(&previous, "built_at") {
            let fresh = newest_source.is_none_or(|(s, n)| clock::built_after(&built_at, s, n));
            // Compared without telling `written`'s recorder the terms: they are told once, by
            // the write below, or again here for a file that is kept.
            let terms = written.terms.take();
            let same =
                fresh && partition.to_json_recorded(&built_at, written).as_bytes() == previous;
            written.terms = terms;
            if same {
                partition.to_json_recorded(&built_at, written);
                return Ok((partition.manifest_entry(&built_at), false));
            }
        }
    }
    let check = |v: &Value| match validate_code_index(v)? {
        CodeIndexFile::Partition => Ok(()),
        CodeIndexFile::Manifest => Err(crate::corpus::schema::SchemaError {
            path: "$".into(),
            rule: "is a manifest, not a partition".into(),
        }),
    };
    atomic::write_atomic_streamed(
        &path,
        |sink| partition.write_to(sink, written, reuse),
        |written| check_written(written, name, check),
    )?;
    Ok((partition.manifest_entry(&partition.stamp.built_at), true))
}

/// The bytes of the file at `path` if it is a regular file (not a link: recall would refuse to
/// follow one out of the project) of at most `MAX_INDEX_FILE_BYTES`.
fn previous_file(path: &Path) -> Option<Vec<u8>> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    crate::regular_file::read_at_most(path, MAX_INDEX_FILE_BYTES)
        .ok()
        .flatten()
}

/// The string value of the top-level member `key` of the JSON object in `bytes`, read token by
/// token up to that member (no tree is built; `built_at` comes fourth in a sorted partition).
fn top_level_string(bytes: &[u8], key: &str) -> Option<String> {
    let mut reader = Reader::new(bytes);
    if !matches!(reader.next().ok()??, Token::BeginObject) {
        return None;
    }
    let mut depth = 1usize;
    loop {
        match reader.next().ok()?? {
            Token::Key(name) if depth == 1 && name == key => {
                return match reader.next().ok()?? {
                    Token::String(text) => Some(text.into_owned()),
                    _ => None,
                };
            }
            Token::BeginObject | Token::BeginArray => depth += 1,
            Token::EndObject | Token::EndArray => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_string_reads_only_the_top_level_member() {
        let read = |text: &str| top_level_string(text.as_bytes(), "built_at");
        assert_eq!(read(r#"{"N": 1, "built_at": "t1"}"#).as_deref(), Some("t1"));
        // A nested member of the same name is not the top-level one.
        assert_eq!(
            read(r#"{"a": {"built_at": "inner"}, "b": [{"built_at": "x"}], "built_at": "top"}"#)
                .as_deref(),
            Some("top")
        );
        assert_eq!(read(r#"{"a": {"built_at": "inner"}}"#), None);
        for other in [
            r#"{"built_at": 5}"#,
            "[]",
            "",
            "{",
            r#"{"built_at": "#,
            "nonsense",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
