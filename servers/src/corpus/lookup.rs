//! The code-lookup sidecar (`references/code-lookup.bin`): where each term's postings, each
//! document and each file's outline definitions lie in the `local` partition and the outline, so
//! recall can answer a query by reading those parts alone instead of loading both files whole.
//!
//! The file is ours, written by `agentteams-mcp index build` after `local.json` and the outline,
//! and bound to them by their identities ([`FileIdentity`]: device, inode, length, mode, mtime,
//! ctime as they were once written). Any other file at those paths (rewritten by the reference's
//! builder, copied, restored from git) does not match, and recall loads the files whole as it
//! would without a sidecar. A sidecar checked in to a repository therefore never matches: the
//! inode and ctime are the filesystem's.
//!
//! Layout (integers little-endian, so the tables are searched where they lie, never decoded
//! into structures): the magic line; the two identities; the cut points of each file's
//! skeleton (its `documents` array and `postings` object, whose removal leaves the small
//! metadata recall validates as it validates any partition); per term, in the order of its
//! bytes, its postings' byte range (from the key's opening quote to the list's `]`), its
//! document count and the end of its text, then the terms' text; then per document its byte
//! range in `local.json`, its length and the byte range of its file's definitions in the
//! outline, and the documents' paths. The builder writes the terms while it writes
//! `local.json` ([`Writer`]), so they are never held in memory.
//!
//! What this module does not do: write or read the index files themselves, or rank.

use agentteams_mcp::file_identity::FileIdentity;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The sidecar's file name, under `references/` beside the outline.
pub const LOOKUP_FILE: &str = "code-lookup.bin";

/// The first bytes of a lookup file; a layout change changes the number.
const MAGIC: &[u8] = b"agentteams-mcp code lookup 01\n";

/// Largest lookup file read: far above what a partition within `MAX_INDEX_FILE_BYTES` needs
/// (its terms and documents, about a tenth of its size).
pub const MAX_LOOKUP_BYTES: u64 = 1 << 30;

/// Largest skeleton (a file without its documents and postings) read: a partition's metadata
/// is a few hundred bytes; a sidecar whose cuts leave more describes another file.
pub const MAX_SKELETON_BYTES: u64 = 64 * 1024;

const IDENTITY_BYTES: usize = 8 * 8;
const CUTS_BYTES: usize = 4 * 8;
const DOCUMENT_BYTES: usize = 5 * 8;
const TERM_BYTES: usize = 8 + 8 + 4 + 4;

/// Where the two large members of an index file lie: what is left without them is its skeleton.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cuts {
    /// The `documents` array, `[` to `]` inclusive.
    pub documents: (u64, u64),
    /// The `postings` object, `{` to `}` inclusive.
    pub postings: (u64, u64),
}

impl Cuts {
    /// The file's skeleton: its bytes with the documents written `[]` and the postings `{}`,
    /// read through `read(range)`; `None` when the cuts are out of order, past `len`, or leave
    /// more than [`MAX_SKELETON_BYTES`].
    pub fn skeleton(
        &self,
        len: u64,
        mut read: impl FnMut(Range<u64>) -> Option<Vec<u8>>,
    ) -> Option<Vec<u8>> {
        let (d, p) = (self.documents, self.postings);
        let ordered = d.0 < d.1 && d.1 <= p.0 && p.0 < p.1 && p.1 <= len;
        if !ordered || d.0 + (p.0 - d.1) + (len - p.1) > MAX_SKELETON_BYTES {
            return None;
        }
        let mut bytes = read(0..d.0)?;
        bytes.extend_from_slice(b"[]");
        bytes.extend(read(d.1..p.0)?);
        bytes.extend_from_slice(b"{}");
        bytes.extend(read(p.1..len)?);
        Some(bytes)
    }
}

/// One document as the builder records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentEntry {
    /// Its object in `local.json`, `{` to `}`.
    pub local: (u64, u64),
    /// Its stored `length`.
    pub length: u64,
    /// Its file's definitions in the outline, from the first's `{` to the last's `}`; empty
    /// (`(0, 0)`) when the outline holds none.
    pub outline: (u64, u64),
}

/// Where the term table starts: after the magic line, the identities, the cuts and the count.
const TERMS_AT: u64 = (MAGIC.len() + 2 * IDENTITY_BYTES + 2 * CUTS_BYTES + 8) as u64;

/// What the head of a lookup file says, known once both files are written.
pub struct Head {
    pub local: FileIdentity,
    pub outline: FileIdentity,
    pub local_cuts: Cuts,
    pub outline_cuts: Cuts,
}

/// Writes a lookup file into a fresh file: its terms as `local.json`'s postings are written
/// ([`Writer::term`], the table and the text each at its place), then its head, documents and
/// paths ([`Writer::finish`]). Nothing is held but two buffers.
pub struct Writer<'f> {
    file: &'f File,
    expected: usize,
    terms: usize,
    table: Positioned,
    text: Positioned,
    text_end: u64,
    failed: Option<std::io::Error>,
}

/// Output gathered for one place of the file before it is written there.
struct Positioned {
    at: u64,
    buffer: Vec<u8>,
}

/// What [`Positioned`] gathers before writing.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

impl Positioned {
    fn new(at: u64) -> Positioned {
        Positioned {
            at,
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
        }
    }

    fn push(&mut self, file: &File, bytes: &[u8]) -> std::io::Result<()> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= WRITE_BUFFER_BYTES {
            self.flush(file)?;
        }
        Ok(())
    }

    fn flush(&mut self, file: &File) -> std::io::Result<()> {
        file.write_all_at(&self.buffer, self.at)?;
        self.at += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

impl<'f> Writer<'f> {
    /// A writer of a lookup of `terms` terms into `file` (fresh, empty).
    pub fn new(file: &'f File, terms: usize) -> Writer<'f> {
        let text_at = TERMS_AT + (terms * TERM_BYTES) as u64;
        Writer {
            file,
            expected: terms,
            terms: 0,
            table: Positioned::new(TERMS_AT),
            text: Positioned::new(text_at),
            text_end: 0,
            failed: None,
        }
    }

    /// The next term, in the order of its bytes: `"term": [...]` at `postings` in `local.json`,
    /// held by `documents` documents. The first error is kept for [`Writer::finish`].
    pub fn term(&mut self, term: &str, postings: (u64, u64), documents: u32) {
        if self.failed.is_some() {
            return;
        }
        if self.terms == self.expected {
            self.failed = Some(std::io::Error::other("more terms than announced"));
            return;
        }
        self.terms += 1;
        self.text_end += term.len() as u64;
        let mut entry = [0u8; TERM_BYTES];
        entry[..8].copy_from_slice(&postings.0.to_le_bytes());
        entry[8..16].copy_from_slice(&postings.1.to_le_bytes());
        entry[16..20].copy_from_slice(&documents.to_le_bytes());
        entry[20..].copy_from_slice(&(self.text_end as u32).to_le_bytes());
        let written = (self.table.push(self.file, &entry))
            .and_then(|()| self.text.push(self.file, term.as_bytes()));
        self.failed = written.err();
    }

    /// Writes the head, the documents and their paths after the terms.
    pub fn finish(
        mut self,
        head: &Head,
        documents: &[DocumentEntry],
        paths: &[&str],
    ) -> std::io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.terms != self.expected || self.text_end > u64::from(u32::MAX) {
            return Err(std::io::Error::other(
                "the terms written are not those announced",
            ));
        }
        self.table.flush(self.file)?;
        self.text.flush(self.file)?;
        let mut start = Vec::with_capacity(TERMS_AT as usize);
        start.extend_from_slice(MAGIC);
        for f in [head.local, head.outline] {
            for n in [
                f.dev,
                f.ino,
                f.len,
                u64::from(f.mode),
                f.mtime.0 as u64,
                f.mtime.1 as u64,
                f.ctime.0 as u64,
                f.ctime.1 as u64,
            ] {
                start.extend_from_slice(&n.to_le_bytes());
            }
        }
        for cuts in [head.local_cuts, head.outline_cuts] {
            for n in [
                cuts.documents.0,
                cuts.documents.1,
                cuts.postings.0,
                cuts.postings.1,
            ] {
                start.extend_from_slice(&n.to_le_bytes());
            }
        }
        start.extend_from_slice(&(self.expected as u64).to_le_bytes());
        self.file.write_all_at(&start, 0)?;
        let mut rest = Positioned::new(self.text.at);
        let file = self.file;
        rest.push(file, &(documents.len() as u64).to_le_bytes())?;
        for d in documents {
            for n in [d.local.0, d.local.1, d.length, d.outline.0, d.outline.1] {
                rest.push(file, &n.to_le_bytes())?;
            }
        }
        let mut end = 0u32;
        for path in paths {
            end = end.saturating_add(path.len() as u32);
            rest.push(file, &end.to_le_bytes())?;
        }
        for path in paths {
            rest.push(file, path.as_bytes())?;
        }
        rest.flush(file)
    }
}

/// Whether the lookup file at `path` (read to its identities only) is bound to `local.json` and
/// the outline as they are now: what a build that keeps both checks before keeping it too.
pub fn binds(path: &Path, local: &FileIdentity, outline: &FileIdentity) -> bool {
    let mut head = vec![0u8; MAGIC.len() + 2 * IDENTITY_BYTES];
    let read = agentteams_mcp::regular_file::open(path).and_then(|mut f| f.read_exact(&mut head));
    if read.is_err() || !head.starts_with(MAGIC) {
        return false;
    }
    let mut r = Cursor {
        bytes: &head,
        at: MAGIC.len(),
    };
    r.identity().ok() == Some(*local) && r.identity().ok() == Some(*outline)
}

/// Why a lookup file was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LookupError(&'static str);

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the code lookup is unusable: {}", self.0)
    }
}

/// A lookup file, validated: every range inside its file and in order, every table's size what
/// its count says, every term and path UTF-8 and the terms strictly ascending. Lookups never
/// index out of bounds whatever the bytes were.
#[derive(Debug)]
pub struct Lookup {
    bytes: Vec<u8>,
    pub local: FileIdentity,
    pub outline: FileIdentity,
    pub local_cuts: Cuts,
    pub outline_cuts: Cuts,
    documents: usize,
    /// Where the tables start in `bytes`.
    document_table: usize,
    path_ends: usize,
    /// The paths back to back, and the terms (checked UTF-8 once, so lookups slice them).
    path_text: String,
    term_count: usize,
    term_table: usize,
    term_text: String,
}

/// One term's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermEntry<'a> {
    pub term: &'a str,
    /// `"term": [...]` in `local.json`.
    pub postings: (u64, u64),
    /// Its document count (the list's length).
    pub documents: usize,
}

impl Lookup {
    /// Validates `bytes` as a lookup file.
    pub fn parse(bytes: Vec<u8>) -> Result<Lookup, LookupError> {
        let mut r = Cursor {
            bytes: &bytes,
            at: 0,
        };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(LookupError("not a lookup file"));
        }
        let local = r.identity()?;
        let outline = r.identity()?;
        let local_cuts = r.cuts()?;
        let outline_cuts = r.cuts()?;
        let term_count = r.count(TERM_BYTES)?;
        let term_table = r.at;
        r.take(term_count * TERM_BYTES)?;
        let term_text = r.at;
        let text_bytes = match term_count {
            0 => 0,
            n => read_u32(&bytes, term_table + n * TERM_BYTES - 4) as usize,
        };
        r.take(text_bytes)?;
        let documents = r.count(DOCUMENT_BYTES + 4)?;
        let document_table = r.at;
        r.take(documents * DOCUMENT_BYTES)?;
        let path_ends = r.at;
        r.take(documents * 4)?;
        let path_text = r.at;
        let path_bytes = ends_total(&bytes[path_ends..path_text])?;
        r.take(path_bytes)?;
        if r.at != bytes.len() {
            return Err(LookupError("bytes after the paths"));
        }
        let utf8 = |range: Range<usize>, what| {
            String::from_utf8(bytes[range].to_vec()).map_err(|_| LookupError(what))
        };
        let path_text = utf8(path_text..path_text + path_bytes, "a path is not UTF-8")?;
        let term_text = utf8(term_text..term_text + text_bytes, "a term is not UTF-8")?;
        // Only the tables stay, back to back: the texts were copied out.
        let text_at = term_table + term_count * TERM_BYTES;
        let mut tables =
            Vec::with_capacity(text_at + (path_ends + documents * 4 - text_at - text_bytes));
        tables.extend_from_slice(&bytes[..text_at]);
        tables.extend_from_slice(&bytes[text_at + text_bytes..path_ends + documents * 4]);
        drop(bytes);
        let lookup = Lookup {
            bytes: tables,
            local,
            outline,
            local_cuts,
            outline_cuts,
            documents,
            document_table: document_table - text_bytes,
            path_ends: path_ends - text_bytes,
            path_text,
            term_count,
            term_table,
            term_text,
        };
        lookup.check()?;
        Ok(lookup)
    }

    /// The checks that need the tables in place: order, bounds and text.
    fn check(&self) -> Result<(), LookupError> {
        let (local_len, outline_len) = (self.local.len, self.outline.len);
        let documents = self.local_cuts.documents;
        let outline_documents = self.outline_cuts.documents;
        let postings = self.local_cuts.postings;
        if documents.1 > local_len || outline_documents.1 > outline_len || postings.1 > local_len {
            return Err(LookupError("a cut past its file"));
        }
        let mut local_at = documents.0;
        // The files' definitions are laid out as the files were read, not in document order:
        // checked apart from one another once sorted.
        let mut definitions = Vec::new();
        for d in 0..self.documents {
            let entry = self.document(d);
            let (start, end) = entry.local;
            if start <= local_at || end <= start || end >= documents.1 {
                return Err(LookupError("a document's range out of order"));
            }
            local_at = end;
            if entry.outline != (0, 0) {
                definitions.push(entry.outline);
            }
        }
        definitions.sort_unstable();
        let mut outline_at = outline_documents.0;
        for (start, end) in definitions {
            if start <= outline_at || end <= start || end >= outline_documents.1 {
                return Err(LookupError("a file's definitions overlap another's"));
            }
            outline_at = end;
        }
        // Path ends were checked non-decreasing when the table was measured.
        for d in 0..self.documents {
            let end = read_u32(&self.bytes, self.path_ends + 4 * d) as usize;
            if !self.path_text.is_char_boundary(end) {
                return Err(LookupError("a path's end inside a character"));
            }
        }
        let text = self.term_text.as_str();
        let (mut postings_at, mut text_at, mut previous): (u64, usize, Option<&str>) =
            (postings.0, 0, None);
        for i in 0..self.term_count {
            let at = self.term_table + i * TERM_BYTES;
            let (start, end) = (read_u64(&self.bytes, at), read_u64(&self.bytes, at + 8));
            let count = read_u32(&self.bytes, at + 16);
            let text_end = read_u32(&self.bytes, at + 20) as usize;
            if start <= postings_at || end <= start || end >= postings.1 || count == 0 {
                return Err(LookupError("a term's postings out of order"));
            }
            postings_at = end;
            if text_end < text_at || !text.is_char_boundary(text_end) {
                return Err(LookupError("a term's end out of order"));
            }
            let term = &text[text_at..text_end];
            if previous.is_some_and(|p| p >= term) {
                return Err(LookupError("terms out of order"));
            }
            (previous, text_at) = (Some(term), text_end);
        }
        Ok(())
    }

    /// How many documents the partition holds.
    pub fn document_count(&self) -> usize {
        self.documents
    }

    /// Document `d`'s entry (`d` below [`Lookup::document_count`]).
    pub fn document(&self, d: usize) -> DocumentEntry {
        let at = self.document_table + d * DOCUMENT_BYTES;
        let n = |i: usize| read_u64(&self.bytes, at + 8 * i);
        DocumentEntry {
            local: (n(0), n(1)),
            length: n(2),
            outline: (n(3), n(4)),
        }
    }

    /// Document `d`'s stored path.
    pub fn path(&self, d: usize) -> &str {
        let end = |i: usize| read_u32(&self.bytes, self.path_ends + 4 * i) as usize;
        let start = if d == 0 { 0 } else { end(d - 1) };
        self.path_text.get(start..end(d)).unwrap_or("")
    }

    /// Every document's path, in order.
    pub fn paths(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.documents).map(|d| self.path(d))
    }

    /// How many terms the partition holds.
    pub fn term_count(&self) -> usize {
        self.term_count
    }

    /// The entry of the term at `place` in the order of their bytes (below
    /// [`Lookup::term_count`]).
    pub fn term_by_place(&self, place: usize) -> TermEntry<'_> {
        self.term_at(place)
    }

    fn term_at(&self, i: usize) -> TermEntry<'_> {
        let at = self.term_table + i * TERM_BYTES;
        let text_end = |i: usize| read_u32(&self.bytes, self.term_table + i * TERM_BYTES + 20);
        let start = if i == 0 { 0 } else { text_end(i - 1) as usize };
        TermEntry {
            term: self
                .term_text
                .get(start..text_end(i) as usize)
                .unwrap_or(""),
            postings: (read_u64(&self.bytes, at), read_u64(&self.bytes, at + 8)),
            documents: read_u32(&self.bytes, at + 16) as usize,
        }
    }

    /// The entry of `term`, if the partition holds it.
    pub fn term(&self, term: &str) -> Option<TermEntry<'_>> {
        let first = self.first_at_least(term);
        Some(self.term_at(first))
            .filter(|_| first < self.term_count)
            .filter(|e| e.term == term)
    }

    /// The entries of the terms starting with `prefix`, in order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = TermEntry<'a>> + 'a {
        (self.first_at_least(prefix)..self.term_count)
            .map(|i| self.term_at(i))
            .take_while(move |e| e.term.starts_with(prefix))
    }

    /// The position of the first term not below `term`.
    fn first_at_least(&self, term: &str) -> usize {
        let (mut low, mut high) = (0, self.term_count);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.term_at(mid).term < term {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }
}

/// The total of a table of cumulative `u32` ends (its last), checked non-decreasing.
fn ends_total(table: &[u8]) -> Result<usize, LookupError> {
    let mut previous = 0u32;
    for chunk in table.chunks_exact(4) {
        let end = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if end < previous {
            return Err(LookupError("a path's end out of order"));
        }
        previous = end;
    }
    Ok(previous as usize)
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LookupError> {
        let slice = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or(LookupError("it ends early"))?;
        self.at += n;
        Ok(slice)
    }

    fn u64(&mut self) -> Result<u64, LookupError> {
        Ok(read_u64(self.take(8)?, 0))
    }

    /// A count of entries of at least `each` bytes: at most what the rest of the file can hold.
    fn count(&mut self, each: usize) -> Result<usize, LookupError> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left / each as u64 {
            return Err(LookupError("a count larger than the file"));
        }
        Ok(n as usize)
    }

    fn identity(&mut self) -> Result<FileIdentity, LookupError> {
        let mut n = [0u64; 8];
        for slot in &mut n {
            *slot = self.u64()?;
        }
        Ok(FileIdentity {
            dev: n[0],
            ino: n[1],
            len: n[2],
            mode: u32::try_from(n[3]).map_err(|_| LookupError("a mode out of range"))?,
            mtime: (n[4] as i64, n[5] as i64),
            ctime: (n[6] as i64, n[7] as i64),
        })
    }

    fn cuts(&mut self) -> Result<Cuts, LookupError> {
        Ok(Cuts {
            documents: (self.u64()?, self.u64()?),
            postings: (self.u64()?, self.u64()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(n: u64) -> FileIdentity {
        FileIdentity {
            dev: n,
            ino: n + 1,
            len: 10_000,
            mode: 0o100644,
            mtime: (n as i64, 5),
            ctime: (n as i64 + 1, 6),
        }
    }

    fn sample() -> Vec<u8> {
        let documents = [
            DocumentEntry {
                local: (110, 400),
                length: 7,
                outline: (600, 900),
            },
            DocumentEntry {
                local: (402, 800),
                length: 9,
                outline: (0, 0),
            },
            DocumentEntry {
                local: (802, 950),
                length: 3,
                outline: (120, 590),
            },
        ];
        let terms = [
            ("alpha", (5010, 5100), 2),
            ("beta", (5102, 5200), 1),
            ("bé", (5202, 5300), 3),
        ];
        encoded(&documents, &["a.py", "é/b.py", ""], &terms)
    }

    /// A lookup of `documents` and `terms` for two files of 10,000 bytes: `local.json`'s
    /// documents at 100..1000 and postings at 5000..9000, the outline's documents at 100..1000.
    fn encoded(
        documents: &[DocumentEntry],
        paths: &[&str],
        terms: &[(&str, (u64, u64), u32)],
    ) -> Vec<u8> {
        let path = std::env::temp_dir().join(format!(
            "lookup-unit-{}-{}.bin",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut writer = Writer::new(&file, terms.len());
        for &(term, range, count) in terms {
            writer.term(term, range, count);
        }
        let head = Head {
            local: identity(1),
            outline: identity(2),
            local_cuts: Cuts {
                documents: (100, 1000),
                postings: (5000, 9000),
            },
            outline_cuts: Cuts {
                documents: (100, 1000),
                postings: (1200, 1202),
            },
        };
        writer.finish(&head, documents, paths).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        bytes
    }

    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[test]
    fn a_lookup_reads_back_what_was_written() {
        let lookup = Lookup::parse(sample()).unwrap();
        assert_eq!((lookup.local, lookup.outline), (identity(1), identity(2)));
        assert_eq!(lookup.document_count(), 3);
        assert_eq!(lookup.document(2).outline, (120, 590));
        assert_eq!(lookup.document(1).length, 9);
        assert_eq!(lookup.paths().collect::<Vec<_>>(), ["a.py", "é/b.py", ""]);
        let beta = lookup.term("beta").unwrap();
        assert_eq!((beta.postings, beta.documents), ((5102, 5200), 1));
        assert!(lookup.term("b").is_none() && lookup.term("zeta").is_none());
        let with_b: Vec<&str> = lookup.with_prefix("b").map(|e| e.term).collect();
        assert_eq!(with_b, ["beta", "bé"]);
        assert_eq!(lookup.with_prefix("").count(), 3);
    }

    #[test]
    fn every_cut_and_flipped_byte_is_refused_or_read_within_bounds() {
        let good = sample();
        for len in 0..good.len() {
            assert!(Lookup::parse(good[..len].to_vec()).is_err(), "cut to {len}");
        }
        for at in 0..good.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bytes = good.clone();
                bytes[at] ^= flip;
                // Refused, or valid: then every lookup answers within its tables.
                if let Ok(lookup) = Lookup::parse(bytes) {
                    for d in 0..lookup.document_count() {
                        let entry = lookup.document(d);
                        assert!(entry.local.1 <= lookup.local.len, "byte {at}");
                        let _ = lookup.path(d);
                    }
                    for term in ["alpha", "beta", "bé", "b", ""] {
                        let _ = lookup.term(term);
                        let _ = lookup.with_prefix(term).count();
                    }
                }
            }
        }
    }

    #[test]
    fn out_of_order_or_overlapping_ranges_are_refused() {
        let lookup = |documents: &[DocumentEntry], terms: &[(&str, (u64, u64), u32)]| {
            Lookup::parse(encoded(documents, &vec![""; documents.len()], terms))
        };
        let doc = |local: (u64, u64), outline: (u64, u64)| DocumentEntry {
            local,
            length: 1,
            outline,
        };
        let fine = [doc((110, 200), (300, 400)), doc((210, 300), (110, 200))];
        assert!(lookup(&fine, &[("a", (5010, 5020), 1)]).is_ok());
        for (documents, terms, why) in [
            (
                vec![doc((210, 300), (0, 0)), doc((110, 200), (0, 0))],
                vec![],
                "documents",
            ),
            (vec![doc((110, 2000), (0, 0))], vec![], "past the array"),
            (
                vec![doc((110, 200), (110, 300)), doc((210, 300), (200, 400))],
                vec![],
                "overlap",
            ),
            (
                vec![doc((110, 200), (300, 300))],
                vec![],
                "empty definitions",
            ),
            (
                vec![],
                vec![("b", (5010, 5020), 1), ("a", (5030, 5040), 1)],
                "terms",
            ),
            (
                vec![],
                vec![("a", (5010, 5020), 1), ("a", (5030, 5040), 1)],
                "repeated",
            ),
            (
                vec![],
                vec![("a", (5030, 5040), 1), ("b", (5010, 5020), 1)],
                "postings",
            ),
            (vec![], vec![("a", (5010, 9500), 1)], "past the postings"),
            (vec![], vec![("a", (5010, 5020), 0)], "no documents"),
        ] {
            assert!(lookup(&documents, &terms).is_err(), "{why}");
        }
    }

    #[test]
    fn a_skeleton_is_cut_only_where_the_cuts_are_in_order_and_small() {
        let file = b"{\"a\": [1, 2], \"p\": {\"x\": 1}, \"z\": 0}".to_vec();
        let read = |r: Range<u64>| Some(file[r.start as usize..r.end as usize].to_vec());
        let cuts = Cuts {
            documents: (6, 12),
            postings: (19, 27),
        };
        let skeleton = cuts.skeleton(file.len() as u64, read).unwrap();
        assert_eq!(skeleton, b"{\"a\": [], \"p\": {}, \"z\": 0}");
        let reversed = Cuts {
            documents: (19, 27),
            postings: (6, 12),
        };
        assert!(reversed.skeleton(file.len() as u64, read).is_none());
        assert!(cuts.skeleton(20, read).is_none());
        let huge = Cuts {
            documents: (MAX_SKELETON_BYTES + 1, MAX_SKELETON_BYTES + 2),
            postings: (MAX_SKELETON_BYTES + 3, MAX_SKELETON_BYTES + 4),
        };
        assert!(huge.skeleton(MAX_SKELETON_BYTES + 5, |_| None).is_none());
    }
}
