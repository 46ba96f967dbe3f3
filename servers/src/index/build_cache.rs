//! The build cache (`references/code-build-cache.bin`, ours, beside the outline): what each
//! source file gave the `local` partition and the outline at the last build, keyed by the file's
//! identity, so a rebuild reads, tokenizes and parses only the files whose identity changed, and
//! a rebuild in which nothing changed keeps the partition and the outline without writing them.
//!
//! Not for recall, which never reads it, and not a format anyone else reads: it is bound to the
//! binary that wrote it (the executable's identity) and to the project root, and anything else
//! (missing, foreign, older, damaged, larger than [`MAX_BUILD_CACHE_BYTES`]) means a full build.
//! Nothing in it is trusted beyond what it would have let a full build compute from the same
//! files: a file whose identity (device, inode, size, mode, modification and change times, and
//! the link's own inode) differs is read again, counts are checked against the bytes that remain
//! before anything is allocated for them, a document whose terms do not add up
//! ([`super::postings::Postings::add_known`]) is read again, and a term table that is not in
//! the order of its terms' bytes, each once, is damaged (a rebuild numbers terms by their place
//! in it).

use agentteams_mcp::file_identity::FileIdentity;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The cache's file name, in a team dir's `references/`.
pub const BUILD_CACHE_FILE: &str = "code-build-cache.bin";

/// Largest cache read: it holds about what the partition's documents and the outline hold.
pub const MAX_BUILD_CACHE_BYTES: u64 = 1024 * 1024 * 1024;

/// The first bytes of the file; the last two digits are the layout's version.
const MAGIC: &[u8] = b"agentteams-mcp build cache 02\n";

/// A file changed less than this long before the build started is not cached: a change made in
/// the same clock tick as the build's look at it could leave every part of its identity as it
/// was (git calls such entries "racy").
pub const CACHE_RACY_WINDOW: Duration = Duration::from_secs(1);

/// What changes when a source's content may have: the identity of the file it names (links
/// followed) and the inode of the path itself, so a file replaced by a link to it is a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    file: FileIdentity,
    link_ino: u64,
}

/// Bytes of an [`Identity`] in the cache.
const IDENTITY_BYTES: usize = 9 * 8;

impl Identity {
    /// An identity no file has: what a cache written before its outputs were in place holds
    /// until [`write_identities`] writes theirs (a cache left with it never matches a file).
    pub const UNKNOWN: Identity = Identity {
        file: FileIdentity {
            dev: 0,
            ino: 0,
            len: 0,
            mode: 0,
            mtime: (0, 0),
            ctime: (0, 0),
        },
        link_ino: 0,
    };

    pub fn of(path: &Path) -> Option<Identity> {
        let link = std::fs::symlink_metadata(path).ok()?;
        if link.file_type().is_symlink() {
            Some(Identity::from_metadata(
                &link,
                &std::fs::metadata(path).ok()?,
            ))
        } else {
            Some(Identity::from_metadata(&link, &link))
        }
    }

    /// The identity of a path whose own metadata is `link` (`lstat`) and whose file's is
    /// `file` (`stat`; the same for a path that is no link).
    pub fn from_metadata(link: &std::fs::Metadata, file: &std::fs::Metadata) -> Identity {
        Identity {
            file: FileIdentity::of(file),
            link_ino: FileIdentity::of(link).ino,
        }
    }

    /// The identity of the file the path names.
    pub fn file(&self) -> FileIdentity {
        self.file
    }

    /// The file's length in bytes, and its modification time (seconds, nanoseconds).
    pub fn bytes(&self) -> u64 {
        self.file.len
    }

    pub fn mtime(&self) -> (i64, u32) {
        (
            self.file.mtime.0,
            self.file.mtime.1.clamp(0, 999_999_999) as u32,
        )
    }

    /// Whether the file changed more than [`CACHE_RACY_WINDOW`] before `started`: only then may the
    /// next build take it from the cache on its identity alone.
    pub fn is_settled(&self, started: SystemTime) -> bool {
        self.file.is_settled(started, CACHE_RACY_WINDOW)
    }

    fn write(&self, out: &mut Vec<u8>) {
        let f = &self.file;
        for n in [f.dev, f.ino, self.link_ino, f.len, u64::from(f.mode)] {
            put_u64(out, n);
        }
        for (s, n) in [f.mtime, f.ctime] {
            put_u64(out, s as u64);
            put_u64(out, n as u64);
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Identity, CacheError> {
        let [dev, ino, link_ino, len, mode] = [r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        let mut time = || Ok::<_, CacheError>((r.u64()? as i64, r.u64()? as i64));
        let (mtime, ctime) = (time()?, time()?);
        Ok(Identity {
            file: FileIdentity {
                dev,
                ino,
                len,
                mode: u32::try_from(mode).map_err(|_| CacheError::Damaged("mode"))?,
                mtime,
                ctime,
            },
            link_ino,
        })
    }
}

/// Why a cache was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheError {
    /// Not written by this binary for this root (or not a cache at all).
    Foreign,
    /// Ends early or holds something impossible; names the part.
    Damaged(&'static str),
    /// Larger than [`MAX_BUILD_CACHE_BYTES`]: its size.
    TooLarge(u64),
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::Foreign => {
                f.write_str("written by another build of agentteams-mcp or for another root")
            }
            CacheError::Damaged(part) => write!(f, "damaged ({part})"),
            CacheError::TooLarge(size) => write!(
                f,
                "{size} bytes, larger than MAX_BUILD_CACHE_BYTES ({MAX_BUILD_CACHE_BYTES} bytes)"
            ),
        }
    }
}

/// What the cache says about the build that wrote it: enough to keep its `local` partition and
/// outline when nothing changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// The identities of `local.json` and the outline as that build left them.
    pub local: Identity,
    pub outline: Identity,
    /// `local.json`'s `built_at`, `N`, `source_count` and `source_fingerprint`, and the figures
    /// of the build report.
    pub built_at: String,
    pub documents: u64,
    pub source_count: u64,
    pub source_fingerprint: String,
    pub terms: u64,
    pub definitions: u64,
    /// The stamp's project name and framework, which the partition's header carries.
    pub project_name: String,
    pub framework: String,
}

/// One source file as the cache holds it.
pub struct CachedFile<'a> {
    pub rel: &'a str,
    /// `None`: it changed too close to that build ([`Identity::is_settled`]) to be taken from the
    /// cache; its contribution still says what that build read.
    pub identity: Option<Identity>,
    pub imports: Vec<&'a str>,
    /// What it gave the partition, encoded ([`Contribution::decode`]); `None`: it could not be
    /// read as text.
    pub body: Option<&'a [u8]>,
}

/// What one readable file gave the partition and the outline.
pub struct Contribution<'a> {
    pub snippet: &'a str,
    pub passages: Vec<&'a str>,
    pub source_hash: &'a str,
    pub source_mtime: f64,
    pub length: u64,
    /// `(term number, tf)` in first-occurrence order; numbers index [`BuildCache::terms`].
    pub entries: Vec<(u32, u32)>,
    /// Where the entries lie in the encoding, their count included: what
    /// [`encode_entries`] writes.
    pub entries_at: std::ops::Range<usize>,
    /// The outline's documents, each as `Outline` keeps them.
    pub outline: Vec<&'a str>,
}

/// A contribution to encode, its strings owned by the build: the fields of [`Contribution`].
pub struct ToEncode<'b> {
    pub snippet: &'b str,
    pub passages: &'b [String],
    pub source_hash: &'b str,
    pub source_mtime: f64,
    pub length: u64,
    pub entries: &'b [(u32, u32)],
    pub outline: &'b [&'b str],
}

impl ToEncode<'_> {
    /// Appends the encoding [`Contribution::decode`] reads.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_str(out, self.snippet);
        put_len(out, self.passages.len());
        for p in self.passages {
            put_str(out, p);
        }
        put_str(out, self.source_hash);
        put_u64(out, self.source_mtime.to_bits());
        put_u64(out, self.length);
        encode_entries(out, self.entries.iter().copied());
        put_len(out, self.outline.len());
        for d in self.outline {
            put_str(out, d);
        }
    }
}

impl<'a> Contribution<'a> {
    pub fn decode(body: &'a [u8]) -> Result<Contribution<'a>, CacheError> {
        let mut r = Reader { bytes: body, at: 0 };
        let snippet = r.str()?;
        let passages = r.strs()?;
        let source_hash = r.str()?;
        let source_mtime = f64::from_bits(r.u64()?);
        let length = r.u64()?;
        let entries_start = r.at;
        // Two varints of at least a byte each.
        let count = r.count(2)?;
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            let n = u32::try_from(r.varint()?).map_err(|_| CacheError::Damaged("term number"))?;
            let tf = u32::try_from(r.varint()?).map_err(|_| CacheError::Damaged("tf"))?;
            entries.push((n, tf));
        }
        let entries_at = entries_start..r.at;
        let outline = r.strs()?;
        if r.at != body.len() || !(source_mtime.is_finite() && source_mtime >= 0.0) {
            return Err(CacheError::Damaged("document"));
        }
        Ok(Contribution {
            snippet,
            passages,
            source_hash,
            source_mtime,
            length,
            entries,
            entries_at,
            outline,
        })
    }
}

/// A cache read back: borrowed from its bytes.
///
/// The file is two parts: the head (magic, its length, the builder, the root, the outputs and a
/// row per file: path, identity, imports) and the tail (the term table, then each file's body in
/// row order, each after its length plus one, 0 for none). A build that finds nothing changed
/// parses the head alone ([`BuildCache::parse_head`]).
pub struct BuildCache<'a> {
    pub outputs: Outputs,
    pub files: Vec<CachedFile<'a>>,
    /// The term table's bytes, decoded on demand ([`BuildCache::terms`]).
    terms: &'a [u8],
}

/// A cache file opened, its head read ([`CacheFile::open`]); the rest is read ahead
/// ([`CacheFile::read_ahead`]) or when a build needs it ([`CacheFile::read_tail`]).
pub struct CacheFile {
    file: std::fs::File,
    /// The magic, the head's length and the head; once the tail is read, the whole file.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened (at most [`MAX_BUILD_CACHE_BYTES`]).
    size: u64,
    /// How reading the tail went, once [`CacheFile::read_ahead`] has read it.
    tail: Option<Result<(), CacheError>>,
}

impl CacheFile {
    /// Opens the cache at `path` and reads its head. `Ok(None)` when there is none to use: no
    /// regular file there (a link or a FIFO is not followed, nothing blocks) or not a cache at
    /// all. A file larger than [`MAX_BUILD_CACHE_BYTES`] is refused before anything is read.
    pub fn open(path: &Path) -> Result<Option<CacheFile>, CacheError> {
        use std::io::Read;
        if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            return Ok(None);
        }
        let Ok(mut file) = agentteams_mcp::regular_file::open(path) else {
            return Ok(None);
        };
        let size = file.metadata().map_or(0, |m| m.len());
        if size > MAX_BUILD_CACHE_BYTES {
            return Err(CacheError::TooLarge(size));
        }
        let mut bytes = vec![0u8; MAGIC.len() + 8];
        if file.read_exact(&mut bytes).is_err() || !bytes.starts_with(MAGIC) {
            return Ok(None);
        }
        let head_len = u64::from_le_bytes(bytes[MAGIC.len()..].try_into().expect("eight bytes"));
        if head_len > size {
            return Err(CacheError::Damaged("ends early"));
        }
        let wanted = bytes.len() + head_len as usize;
        (&mut file)
            .take(head_len)
            .read_to_end(&mut bytes)
            .map_err(|_| CacheError::Damaged("unreadable"))?;
        if bytes.len() != wanted {
            return Err(CacheError::Damaged("ends early"));
        }
        Ok(Some(CacheFile {
            file,
            bytes,
            size,
            tail: None,
        }))
    }

    /// Reads the tail now, before the build knows whether it needs it (it does on a thread of its
    /// own while the sources are listed); what went wrong is kept for [`CacheFile::read_tail`],
    /// and the head stays readable either way.
    pub fn read_ahead(mut self) -> CacheFile {
        let head = self.bytes.len();
        let outcome = self.read_rest();
        if outcome.is_err() {
            self.bytes.truncate(head);
        }
        self.tail = Some(outcome);
        self
    }

    /// Whether any source the head lists (under `root`, for whose text `root_text` and by
    /// `builder` it must have been written) now has another identity, or none: a guess, made
    /// while the sources are listed, at whether the build will need the tail ([`read_ahead`]).
    /// A head that does not parse guesses no; one listing more than `at_most` sources (more
    /// than a build lists) guesses yes without looking at any.
    ///
    /// [`read_ahead`]: CacheFile::read_ahead
    pub fn sources_moved(
        &self,
        builder: &Identity,
        root: &Path,
        root_text: &str,
        at_most: usize,
    ) -> bool {
        let Ok((head, _)) = BuildCache::parse_head(&self.bytes, builder, root_text) else {
            return false;
        };
        if head.files.len() > at_most {
            return true;
        }
        head.files.iter().any(|file| {
            let plain = Path::new(file.rel)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            !plain || file.identity.is_none() || Identity::of(&root.join(file.rel)) != file.identity
        })
    }

    /// The whole file: the rest after its head read now, unless it was read ahead.
    pub fn read_tail(mut self) -> Result<Vec<u8>, CacheError> {
        match self.tail.take() {
            Some(outcome) => outcome?,
            None => self.read_rest()?,
        }
        Ok(self.bytes)
    }

    /// Reads the rest of the file after its head, within [`MAX_BUILD_CACHE_BYTES`] in all (the
    /// file may have grown since it was opened).
    fn read_rest(&mut self) -> Result<(), CacheError> {
        use std::io::Read;
        let left = MAX_BUILD_CACHE_BYTES.saturating_sub(self.bytes.len() as u64);
        let before = self.bytes.len();
        // Room for the rest at once: grown by doubling, the buffer of a 100 MB tail was briefly
        // held twice over, and copied at each step.
        let rest = self.size.saturating_sub(before as u64).min(left) + 1;
        self.bytes.reserve_exact(usize::try_from(rest).unwrap_or(0));
        (&mut self.file)
            .take(left + 1)
            .read_to_end(&mut self.bytes)
            .map_err(|_| CacheError::Damaged("unreadable"))?;
        if (self.bytes.len() - before) as u64 > left {
            return Err(CacheError::TooLarge(self.bytes.len() as u64));
        }
        Ok(())
    }
}

impl<'a> BuildCache<'a> {
    /// Reads `bytes` (the whole file) as a cache written by the binary whose identity is
    /// `builder` for `root`.
    pub fn parse(bytes: &'a [u8], builder: &Identity, root: &str) -> Result<Self, CacheError> {
        let (mut cache, tail_at) = BuildCache::parse_head(bytes, builder, root)?;
        let mut r = Reader { bytes, at: tail_at };
        let terms_len = r.u64()?;
        cache.terms = r.bytes(terms_len)?;
        for file in &mut cache.files {
            file.body = match r.varint()? {
                0 => None,
                n => Some(r.bytes(n - 1)?),
            };
        }
        if r.at != bytes.len() {
            return Err(CacheError::Damaged("trailing bytes"));
        }
        Ok(cache)
    }

    /// Reads the head of `bytes`: every file's row but no bodies or terms, and where the tail
    /// starts.
    pub fn parse_head(
        bytes: &'a [u8],
        builder: &Identity,
        root: &str,
    ) -> Result<(Self, usize), CacheError> {
        if !bytes.starts_with(MAGIC) {
            return Err(CacheError::Foreign);
        }
        let mut r = Reader {
            bytes,
            at: MAGIC.len(),
        };
        let head_len = r.u64()?;
        let tail_at = usize::try_from(head_len)
            .ok()
            .and_then(|n| r.at.checked_add(n))
            .filter(|&end| end <= bytes.len())
            .ok_or(CacheError::Damaged("ends early"))?;
        let mut r = Reader {
            bytes: &bytes[..tail_at],
            at: r.at,
        };
        if Identity::read(&mut r)? != *builder || r.str()? != root {
            return Err(CacheError::Foreign);
        }
        let outputs = Outputs {
            local: Identity::read(&mut r)?,
            outline: Identity::read(&mut r)?,
            built_at: r.str()?.to_owned(),
            documents: r.u64()?,
            source_count: r.u64()?,
            source_fingerprint: r.str()?.to_owned(),
            terms: r.u64()?,
            definitions: r.u64()?,
            project_name: r.str()?.to_owned(),
            framework: r.str()?.to_owned(),
        };
        // A path, an identity flag and imports: at least 17 bytes each.
        let count = r.count(17)?;
        let mut files = Vec::with_capacity(count);
        for _ in 0..count {
            let rel = r.str()?;
            let identity = match r.u64()? {
                0 => None,
                1 => Some(Identity::read(&mut r)?),
                _ => return Err(CacheError::Damaged("identity flag")),
            };
            let imports = r.strs()?;
            files.push(CachedFile {
                rel,
                identity,
                imports,
                body: None,
            });
        }
        if r.at != tail_at {
            return Err(CacheError::Damaged("head length"));
        }
        let cache = BuildCache {
            outputs,
            files,
            terms: &[],
        };
        Ok((cache, tail_at))
    }

    /// The term table: term numbers index it, and it is in the order of the terms' bytes, each
    /// once (a table that is not is damaged: a build numbers terms by their place in it).
    pub fn terms(&self) -> Result<Vec<&'a str>, CacheError> {
        let mut r = Reader {
            bytes: self.terms,
            at: 0,
        };
        let mut all: Vec<&str> = Vec::new();
        while r.at < self.terms.len() {
            let term = r.str()?;
            if all.last().is_some_and(|&last| last >= term) {
                return Err(CacheError::Damaged("term table order"));
            }
            all.push(term);
        }
        Ok(all)
    }
}

/// A file's body as [`Writer::write_to`] asks for it.
pub enum Body<'b> {
    /// Not read as text.
    None,
    /// Encoded into the buffer it was given.
    Encoded,
    /// As the previous cache holds it.
    Cached(&'b [u8]),
}

/// Writes a cache: its head gathered first, then streamed with the tail, each body encoded as it
/// is written ([`Writer::write_to`]), so the cache never sits whole in memory.
pub struct Writer {
    head: Vec<u8>,
    /// The term table's encoding.
    table: Vec<u8>,
    files: usize,
    files_at: usize,
    /// Where the head holds the outputs' two identities.
    outputs_at: usize,
}

impl Writer {
    /// Starts a cache for `root`, written by the binary `builder`, after a build whose outputs
    /// are `outputs`, with its term table (`terms`, by number: in the order of their bytes, each
    /// once, as [`BuildCache::terms`] requires).
    pub fn new<'t>(
        builder: &Identity,
        root: &str,
        outputs: &Outputs,
        terms: impl Iterator<Item = &'t str>,
    ) -> Writer {
        let mut head = Vec::with_capacity(1 << 20);
        builder.write(&mut head);
        put_str(&mut head, root);
        let outputs_at = head.len();
        outputs.local.write(&mut head);
        outputs.outline.write(&mut head);
        put_str(&mut head, &outputs.built_at);
        put_u64(&mut head, outputs.documents);
        put_u64(&mut head, outputs.source_count);
        put_str(&mut head, &outputs.source_fingerprint);
        put_u64(&mut head, outputs.terms);
        put_u64(&mut head, outputs.definitions);
        put_str(&mut head, &outputs.project_name);
        put_str(&mut head, &outputs.framework);
        let files_at = head.len();
        put_u64(&mut head, 0);
        let mut table = Vec::with_capacity(1 << 20);
        put_u64(&mut table, 0);
        for term in terms {
            put_str(&mut table, term);
        }
        let terms_len = (table.len() - 8) as u64;
        table[..8].copy_from_slice(&terms_len.to_le_bytes());
        Writer {
            head,
            table,
            files: 0,
            files_at,
            outputs_at,
        }
    }

    /// Adds a file's row: its path relative to the root, identity (`None`: not to be trusted
    /// next time) and imports. Its body comes when the cache is written.
    pub fn file(&mut self, rel: &str, identity: Option<&Identity>, imports: &[String]) {
        let head = &mut self.head;
        put_str(head, rel);
        match identity {
            None => put_u64(head, 0),
            Some(identity) => {
                put_u64(head, 1);
                identity.write(head);
            }
        }
        put_len(head, imports.len());
        for i in imports {
            put_str(head, i);
        }
        self.files += 1;
    }

    /// Writes the cache: magic, the head's length, the head, the term table, then each file's
    /// body in row order, which `body(row, buffer)` gives (encoding it into `buffer`, emptied
    /// before each call, or lending the previous cache's). Returns where in the file the
    /// outputs' identities lie ([`write_identities`]).
    pub fn write_to<'b>(
        mut self,
        out: &mut dyn std::io::Write,
        mut body: impl FnMut(usize, &mut Vec<u8>) -> Body<'b>,
    ) -> std::io::Result<u64> {
        let at = self.files_at;
        self.head[at..at + 8].copy_from_slice(&(self.files as u64).to_le_bytes());
        out.write_all(MAGIC)?;
        out.write_all(&(self.head.len() as u64).to_le_bytes())?;
        out.write_all(&self.head)?;
        out.write_all(&self.table)?;
        let (mut buffer, mut length) = (Vec::new(), Vec::new());
        for row in 0..self.files {
            buffer.clear();
            let bytes: Option<&[u8]> = match body(row, &mut buffer) {
                Body::None => None,
                Body::Encoded => Some(&buffer),
                Body::Cached(bytes) => Some(bytes),
            };
            length.clear();
            put_varint(&mut length, bytes.map_or(0, |b| b.len() as u64 + 1));
            out.write_all(&length)?;
            if let Some(bytes) = bytes {
                out.write_all(bytes)?;
            }
        }
        Ok((MAGIC.len() + 8 + self.outputs_at) as u64)
    }
}

/// Writes the outputs' identities at `at` (from [`Writer::write_to`]) in a cache written before
/// they were known.
pub fn write_identities(
    file: &std::fs::File,
    at: u64,
    local: &Identity,
    outline: &Identity,
) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(2 * IDENTITY_BYTES);
    local.write(&mut bytes);
    outline.write(&mut bytes);
    std::os::unix::fs::FileExt::write_all_at(file, &bytes, at)
}

/// Appends a contribution's entries as [`Contribution::decode`] reads them: their count, then
/// each `(term number, tf)` (a cached contribution's are at [`Contribution::entries_at`]).
pub fn encode_entries(out: &mut Vec<u8>, entries: impl ExactSizeIterator<Item = (u32, u32)>) {
    put_len(out, entries.len());
    for (n, tf) in entries {
        put_varint(out, u64::from(n));
        put_varint(out, u64::from(tf));
    }
}

fn put_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    put_u64(out, n as u64);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// LEB128: seven bits a byte, low first (term numbers and counts are mostly small).
fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads the cache's primitives, every one bounded by the bytes that remain.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: u64) -> Result<&'a [u8], CacheError> {
        let left = self.bytes.len() - self.at;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or(CacheError::Damaged("ends early"))?;
        let slice = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(slice)
    }

    fn u64(&mut self) -> Result<u64, CacheError> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }

    fn varint(&mut self) -> Result<u64, CacheError> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.bytes(1)?[0];
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(CacheError::Damaged("varint"))
    }

    fn str(&mut self) -> Result<&'a str, CacheError> {
        let n = self.varint()?;
        std::str::from_utf8(self.bytes(n)?).map_err(|_| CacheError::Damaged("not UTF-8"))
    }

    /// A count of items of at least `min_bytes` each: refused if the bytes left cannot hold
    /// them, so a count never sizes an allocation the file does not back.
    fn count(&mut self, min_bytes: usize) -> Result<usize, CacheError> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) / min_bytes;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or(CacheError::Damaged("count"))
    }

    fn strs(&mut self) -> Result<Vec<&'a str>, CacheError> {
        let n = self.count(1)?;
        (0..n).map(|_| self.str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(n: u64) -> Identity {
        Identity {
            file: FileIdentity {
                dev: 1,
                ino: n,
                len: 10 * n,
                mode: 0o100644,
                mtime: (1_700_000_000, 5),
                ctime: (1_700_000_000, 6),
            },
            link_ino: n,
        }
    }

    fn outputs() -> Outputs {
        Outputs {
            local: identity(90),
            outline: identity(91),
            built_at: "2026-12-07T10:00:00Z".into(),
            documents: 1,
            source_count: 2,
            source_fingerprint: "f".repeat(64),
            terms: 2,
            definitions: 1,
            project_name: "Gears".into(),
            framework: "claude".into(),
        }
    }

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(
            &identity(7),
            "/p",
            &outputs(),
            ["alpha", "beta"].into_iter(),
        );
        let mut body = Vec::new();
        ToEncode {
            snippet: "snip",
            passages: &["def a()".into()],
            source_hash: &"0".repeat(64),
            source_mtime: 1.5,
            length: 3,
            entries: &[(0, 2), (1, 1)],
            outline: &["\"length\": 0}"],
        }
        .encode(&mut body);
        w.file("a.py", Some(&identity(1)), &["os".into()]);
        w.file("b.sh", None, &[]);
        let mut out = Vec::new();
        w.write_to(&mut out, |row, _| match row {
            0 => Body::Cached(&body),
            _ => Body::None,
        })
        .unwrap();
        out
    }

    #[test]
    fn identities_written_afterwards_read_back_as_if_written_at_once() {
        let unknown = Outputs {
            local: Identity::UNKNOWN,
            outline: Identity::UNKNOWN,
            ..outputs()
        };
        let w = Writer::new(&identity(7), "/p", &unknown, ["alpha"].into_iter());
        let path = std::env::temp_dir().join(format!("build-cache-unit-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let at = w.write_to(&mut &file, |_, _| Body::None).unwrap();
        let before = std::fs::read(&path).unwrap();
        let cache = BuildCache::parse(&before, &identity(7), "/p").unwrap();
        assert_eq!(cache.outputs, unknown);
        write_identities(&file, at, &identity(90), &identity(91)).unwrap();
        let after = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(after.len(), before.len());
        let cache = BuildCache::parse(&after, &identity(7), "/p").unwrap();
        assert_eq!(cache.outputs, outputs());
    }

    #[test]
    fn a_cache_reads_back_what_was_written() {
        let bytes = sample();
        let cache = BuildCache::parse(&bytes, &identity(7), "/p").unwrap();
        assert_eq!(cache.outputs, outputs());
        assert_eq!(cache.terms().unwrap(), ["alpha", "beta"]);
        assert_eq!(cache.files.len(), 2);
        assert_eq!(
            (cache.files[0].rel, cache.files[0].identity),
            ("a.py", Some(identity(1)))
        );
        assert_eq!(cache.files[1].identity, None);
        assert_eq!(cache.files[0].imports, ["os"]);
        let doc = Contribution::decode(cache.files[0].body.unwrap()).unwrap();
        assert_eq!(
            (doc.snippet, doc.passages.as_slice(), doc.length),
            ("snip", &["def a()"][..], 3)
        );
        assert_eq!(
            (doc.entries.as_slice(), doc.source_mtime),
            (&[(0, 2), (1, 1)][..], 1.5)
        );
        assert_eq!(doc.outline, ["\"length\": 0}"]);
        assert!(cache.files[1].body.is_none());
    }

    #[test]
    fn a_tail_read_ahead_or_when_asked_is_the_rest_of_the_file_as_it_is_then() {
        let path = std::env::temp_dir().join(format!("build-cache-ahead-{}", std::process::id()));
        let bytes = sample();
        std::fs::write(&path, &bytes).unwrap();
        let ahead = CacheFile::open(&path).unwrap().unwrap().read_ahead();
        // The head parses from the bytes read ahead as from the head alone.
        let (head, tail_at) = BuildCache::parse_head(&ahead.bytes, &identity(7), "/p").unwrap();
        assert_eq!((head.outputs, head.files.len()), (outputs(), 2));
        assert!(tail_at < bytes.len());
        assert_eq!(ahead.read_tail().unwrap(), bytes);
        // Grown after it was opened (the room made for the tail is the size seen at opening):
        // both ways read what is there when they read.
        let opened = CacheFile::open(&path).unwrap().unwrap();
        let opened_ahead = CacheFile::open(&path).unwrap().unwrap();
        let grown = [bytes.as_slice(), b"more"].concat();
        std::fs::write(&path, &grown).unwrap();
        assert_eq!(opened.read_tail().unwrap(), grown);
        assert_eq!(opened_ahead.read_ahead().read_tail().unwrap(), grown);
        // Cut short after opening: what is left, which then fails to parse.
        let opened_ahead = CacheFile::open(&path).unwrap().unwrap();
        std::fs::write(&path, &bytes[..tail_at + 3]).unwrap();
        let short = opened_ahead.read_ahead().read_tail().unwrap();
        assert_eq!(short, bytes[..tail_at + 3]);
        assert!(BuildCache::parse(&short, &identity(7), "/p").is_err());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn sources_moved_says_whether_a_listed_source_has_another_identity_now() {
        let dir = std::env::temp_dir().join(format!("build-cache-moved-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(dir.join("a.py"), "a = 1\n").unwrap();
        std::fs::write(dir.join("pkg/b.py"), "b = 2\n").unwrap();
        let cache_path = dir.join("cache.bin");
        let moved = |rows: &[(&str, Option<Identity>)], builder: &Identity| {
            let mut w = Writer::new(&identity(7), "/p", &outputs(), [].into_iter());
            for (rel, identity) in rows {
                w.file(rel, identity.as_ref(), &[]);
            }
            let mut out = Vec::new();
            w.write_to(&mut out, |_, _| Body::None).unwrap();
            std::fs::write(&cache_path, out).unwrap();
            let cache = CacheFile::open(&cache_path).unwrap().unwrap();
            cache.sources_moved(builder, &dir, "/p", 2)
        };
        let a = Identity::of(&dir.join("a.py"));
        let b = Identity::of(&dir.join("pkg/b.py"));
        assert!(!moved(&[("a.py", a), ("pkg/b.py", b)], &identity(7)));
        // Not this builder's cache: no guess that it is needed.
        assert!(!moved(&[("a.py", a), ("pkg/b.py", None)], &identity(8)));
        // Racy last time, gone, outside the root, or written again since.
        assert!(moved(&[("a.py", a), ("pkg/b.py", None)], &identity(7)));
        assert!(moved(&[("a.py", a), ("pkg/c.py", b)], &identity(7)));
        assert!(moved(&[("a.py", a), ("../pkg/b.py", b)], &identity(7)));
        // More sources than a build lists: not looked at.
        assert!(moved(
            &[("a.py", a), ("pkg/b.py", b), ("a.py", a)],
            &identity(7)
        ));
        std::fs::remove_file(dir.join("pkg/b.py")).unwrap();
        std::fs::write(dir.join("pkg/b.py"), "b = 33\n").unwrap();
        assert!(moved(&[("a.py", a), ("pkg/b.py", b)], &identity(7)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_term_table_out_of_order_or_with_a_term_twice_is_damaged() {
        for table in [["beta", "alpha"], ["alpha", "alpha"]] {
            let w = Writer::new(&identity(7), "/p", &outputs(), table.into_iter());
            let mut out = Vec::new();
            w.write_to(&mut out, |_, _| Body::None).unwrap();
            let cache = BuildCache::parse(&out, &identity(7), "/p").unwrap();
            assert_eq!(
                cache.terms().err(),
                Some(CacheError::Damaged("term table order")),
                "{table:?}"
            );
        }
    }

    #[test]
    fn another_builder_or_root_makes_the_cache_foreign() {
        let bytes = sample();
        for (builder, root) in [(identity(8), "/p"), (identity(7), "/q")] {
            assert_eq!(
                BuildCache::parse(&bytes, &builder, root).err(),
                Some(CacheError::Foreign)
            );
        }
        assert_eq!(
            BuildCache::parse(b"{\"json\": true}", &identity(7), "/p").err(),
            Some(CacheError::Foreign)
        );
    }

    #[test]
    fn every_truncation_and_a_flipped_byte_anywhere_are_refused_or_read_without_panic() {
        let bytes = sample();
        for end in 0..bytes.len() {
            assert!(
                BuildCache::parse(&bytes[..end], &identity(7), "/p").is_err(),
                "{end}"
            );
        }
        // Every byte changed: a parse either fails or reads something whose documents decode or
        // fail; nothing panics and no count allocates beyond the file.
        for at in MAGIC.len()..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0xff;
            if let Ok(cache) = BuildCache::parse(&bad, &identity(7), "/p") {
                let _ = cache.terms();
                for f in &cache.files {
                    if let Some(body) = f.body {
                        let _ = Contribution::decode(body);
                    }
                }
            }
        }
        // A count far beyond the file is refused before anything is allocated for it.
        let mut r = Reader {
            bytes: &[0xff; 8],
            at: 0,
        };
        assert_eq!(r.count(1), Err(CacheError::Damaged("count")));
    }
}
