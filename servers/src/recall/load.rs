//! Reading an index file: confine, read (bounded), parse, validate, convert to the ranker's typed
//! form, compact per byte of input whatever the file's shape ([`Document`], [`PostingTable`]);
//! with a cache that reuses a loaded file while its identity (device, inode, length, mtime) is
//! unchanged, so warm queries skip parsing and a changed file is always re-read and re-validated.
//! The cache holds at most [`MAX_CACHE_BYTES`] of loaded files by their estimated size
//! ([`Loaded::resident_bytes`]).

pub use super::loaded::{CodeFile, Corpus, Document, IndexKind, Loaded, Posting, PostingTable};
use super::stream;
use super::tree::{convert, dispose, validate_and_convert, validate_beside};
use crate::corpus::schema::{SchemaError, MAX_INDEX_FILE_BYTES};
use crate::corpus::teamdir::confine;
use agentteams_mcp::json::{self, Value};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

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
pub const MAX_CACHED_FILES: usize = 2 + MAX_PARTITIONS;

/// Partitions one manifest may list; a longer list is refused rather than read.
pub const MAX_PARTITIONS: usize = 64;

/// Bytes of loaded files the cache keeps, counted by each file's estimate of what it occupies
/// ([`Loaded::resident_bytes`]); the least recently used are dropped to make room. A file of
/// [`MAX_INDEX_FILE_BYTES`] fits once loaded, so one large index is never re-read per query.
/// Files beyond it are read, used and dropped one at a time (`query_code` holds one partition at
/// a time), and files used by the query under way are never dropped to make room for another
/// of the same query: past the budget, a repeated query re-reads only the files that did not fit
/// instead of all of them.
pub const MAX_CACHE_BYTES: u64 = 1024 * 1024 * 1024;

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
    load_thread: LoadThread,
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
            load_thread: LoadThread::default(),
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
        let read_and_decode = {
            let (name, resolved) = (name.clone(), resolved.clone());
            let len = meta.len();
            move || {
                let unreadable = |detail: String| read_error(kind, &name, &detail);
                let mut bytes = Vec::with_capacity(len as usize);
                if let Err(e) = (&mut file)
                    .take(MAX_INDEX_FILE_BYTES + 1)
                    .read_to_end(&mut bytes)
                {
                    return (false, Err(unreadable(os_error_text(&e, &resolved))));
                }
                if bytes.len() as u64 > MAX_INDEX_FILE_BYTES {
                    return (
                        false,
                        Err(unreadable(format!(
                            "the file grew past the limit of {MAX_INDEX_FILE_BYTES} bytes while \
                             being read"
                        ))),
                    );
                }
                let started = decode_start(&bytes, kind, &name);
                // A file parsed whole no longer needs its bytes: its converted form takes their
                // place.
                drop(bytes);
                (true, started)
            }
        };
        let (read, started) = self.load_thread.start(read_and_decode).wait();
        if read {
            self.lock().reads += 1;
        }
        let loaded = Arc::new(match started? {
            Decoded::Loaded(loaded) => loaded,
            Decoded::Tree(value) => self.finish_tree(value, kind, &name)?,
        });
        self.store(resolved, kind, identity, Arc::clone(&loaded));
        Ok(loaded)
    }

    /// [`finish_tree`] with the conversion on the load thread (where the file's bytes were just
    /// freed, so the converted form takes their place) and the validation here, side by side;
    /// the tree is then freed on the load thread after the reply is on its way.
    fn finish_tree(&self, value: Value, kind: IndexKind, name: &str) -> Result<Loaded, String> {
        let tree = Arc::new(value);
        let converting = self.load_thread.start({
            let tree = Arc::clone(&tree);
            move || convert(&tree, kind)
        });
        let loaded = validate_beside(&tree, kind, || converting.outcome().ok())
            .map_err(|e| schema_failure(kind, name, &e));
        self.load_thread.post(Box::new(move || drop(tree)));
        loaded
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

/// The thread that reads and decodes the files a [`Loader`] loads (`recall-load`), started by
/// its first load and ended with the loader; a load that finds it busy (HTTP calls run side by
/// side) runs on a short-lived thread of its own instead.
///
/// So that what one load frees is where the next load takes it. glibc gives each thread an
/// arena, and memory freed in an arena stays resident there for that arena's later allocations
/// (a file's bytes, a refused tree, the parser's buffers). The stdio server runs each call on
/// whichever of its two threads read it, so loads made on the calling thread left that in two
/// arenas: 30 MiB files the tree path refuses, asked three times, peaked at 97 and 117 MiB
/// (`bench/recall/memory_shapes.py`, `shadowed-numbers` and `repeated-posting-keys`) in the runs
/// where the calls ran on both threads, 68 and 61 in the others. A short-lived thread per load
/// did not settle it either: a thread takes its arena at its first allocation, from glibc's
/// list of arenas whose threads have ended (the latest first), so when the stdio server's
/// second thread made its first allocation after the first load's thread had ended, it took
/// that load's arena and what was left in it, and the next load's thread had to start a new
/// arena: the 24 MiB `postings` file of `recall_memory.rs` peaked at 82 MiB instead of 60 in
/// those processes (15 of 80 in one session, `bench/recall/tree_peak.py`; `/proc/PID/smaps`
/// then showed two arenas, of 22 and 50 MiB resident). A thread that lives on keeps its arena:
/// no other thread can be given it, so each load reuses what the last one freed whatever other
/// threads do (0 of 80 in the same session). The first query is no slower for handing its
/// loads to this thread rather than starting one per load (docs/recall.md, "Speed").
#[derive(Default)]
struct LoadThread {
    /// Where its jobs are sent, once it has started.
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    /// Whether a job waited for ([`LoadThread::start`]) is under way on it.
    busy: Arc<AtomicBool>,
}

type Job = Box<dyn FnOnce() + Send>;

impl LoadThread {
    /// Starts `job` on the load thread, or on a short-lived thread of its own when the load
    /// thread is busy or cannot start (or here when no thread can); [`Pending::wait`] gives what
    /// it returns.
    fn start<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Pending<T> {
        let (reply, result) = mpsc::sync_channel(1);
        let claimed = self
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        let busy = claimed.then(|| Arc::clone(&self.busy));
        let run: Job = Box::new(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            if let Some(busy) = busy {
                busy.store(false, Ordering::Release);
            }
            let _ = reply.send(outcome);
        });
        let run = match claimed {
            true => match self.send(run) {
                Ok(()) => return Pending(result),
                Err(run) => run,
            },
            false => run,
        };
        let slot = Arc::new(Mutex::new(Some(run)));
        let take = {
            let slot = Arc::clone(&slot);
            move || slot.lock().unwrap_or_else(|e| e.into_inner()).take()
        };
        let own = std::thread::Builder::new()
            .name("recall-load".into())
            .spawn(move || take().map(|run| run()));
        if own.is_err() {
            if let Some(run) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                run();
            }
        }
        Pending(result)
    }

    /// Runs `job` on the load thread after what it has under way, without waiting for it; on a
    /// short-lived thread if the load thread cannot start (dropped here if no thread can).
    fn post(&self, job: Job) {
        if let Err(job) = self.send(job) {
            let _ = std::thread::Builder::new()
                .name("recall-free".into())
                .spawn(job);
        }
    }

    /// Sends `job` to the load thread, starting it first if need be; gives the job back if it
    /// cannot start.
    fn send(&self, job: Job) -> Result<(), Job> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if jobs.is_none() {
            let (sender, receiver) = mpsc::channel::<Job>();
            let started = std::thread::Builder::new()
                .name("recall-load".into())
                .spawn(move || receiver.into_iter().for_each(|job| job()));
            if started.is_ok() {
                *jobs = Some(sender);
            }
        }
        let Some(sender) = jobs.as_ref() else {
            return Err(job);
        };
        sender.send(job).map_err(|unsent| {
            // Its thread has ended (it never does while the loader lives): start another next time.
            *jobs = None;
            unsent.0
        })
    }
}

/// What a job started by [`LoadThread::start`] will return.
struct Pending<T>(mpsc::Receiver<std::thread::Result<T>>);

impl<T> Pending<T> {
    /// Waits for the job's end and returns what it returned (a panic in it goes on here).
    fn wait(self) -> T {
        self.outcome()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// Waits for the job's end: what it returned, or its panic.
    fn outcome(self) -> std::thread::Result<T> {
        self.0.recv().expect("a started job runs and replies")
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
    let loaded = validate_and_convert(&value, kind).map_err(|e| schema_failure(kind, name, &e))?;
    dispose(value);
    Ok(loaded)
}

/// The reference's message for a file that fails its schema.
fn schema_failure(kind: IndexKind, name: &str, error: &SchemaError) -> String {
    format!("{} failed schema validation: {name}: {error}", kind.label())
}

/// The reference's message for a file that cannot be read or parsed.
fn read_error(kind: IndexKind, name: &str, detail: &str) -> String {
    format!("cannot read {} at {name}: {detail}", kind.label())
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
    fn the_load_thread_is_kept_a_busy_one_is_not_waited_for_and_a_panic_reaches_the_caller() {
        let thread = LoadThread::default();
        let name = || std::thread::current().name().map(str::to_owned);
        let id = || std::thread::current().id();
        // Every job it takes runs on the one kept thread.
        let first = thread.start(id).wait();
        assert_eq!(thread.start(id).wait(), first);
        assert_eq!(thread.start(name).wait().as_deref(), Some("recall-load"));
        // While a job is under way on it, another runs on a thread of its own, without waiting.
        let (release, held) = mpsc::channel::<()>();
        let blocked = thread.start(move || {
            held.recv().unwrap();
            id()
        });
        let beside = thread.start(id).wait();
        assert_ne!(beside, first);
        release.send(()).unwrap();
        assert_eq!(blocked.wait(), first);
        // A panic goes on in the caller, and the kept thread serves the next job.
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            thread.start(|| panic!("in a load")).wait()
        }));
        assert!(panicked.is_err());
        assert_eq!(thread.start(id).wait(), first);
        // What is posted runs there, after what it has under way.
        let (done, ran) = mpsc::channel();
        thread.post(Box::new(move || done.send(id()).unwrap()));
        assert_eq!(ran.recv().unwrap(), first);
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
}
