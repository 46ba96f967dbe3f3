//! Reusing the previous `local.json`'s postings in a rebuild: which terms' lists no file read
//! again could have changed, and writing those as byte ranges copied from the previous file, so
//! a rebuild after an edit formats only the postings the edit touched (most of `local.json`'s
//! bytes are postings: 174 of 187 MB on `SITE`).
//!
//! Only a previous file this builder wrote is reused: its identity (device, inode, size, mode,
//! modification and change times) must be the one the build cache recorded when that build put
//! it in place, and the lookup sidecar that says where each term's list lies must be bound to
//! it and hold the cache's term table, term for term. The documents must be the previous
//! build's, in the same order, so every `doc_id` a copied list names is still right; and a
//! copied list must hold as many documents as the list this build made. Anything else, and the
//! postings are written whole as before: the result is the same bytes either way.
//!
//! Not for: deciding whether the partition changed (the build cache and `code` do), writing the
//! rest of `local.json`, or reading the lookup's format (`corpus::lookup`).

use super::build_cache::{Identity, Outputs};
use super::memory::{write_postings, write_term, TermOrder, TermRecorder};
use super::postings::{ByTerm, Postings};
use super::pyjson::PyJson;
use crate::corpus::lookup::{Lookup, MAX_LOOKUP_BYTES};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes copied from the previous file at a time.
const COPY_CHUNK_BYTES: usize = 1 << 20;

/// The previous `local.json`, open, and where its terms' lists lie.
pub struct PostingsReuse {
    previous: File,
    lookup: Lookup,
    /// Per term number of the partition being written, its place in the previous table when
    /// its list may be copied (`None`: written anew).
    place_of: Vec<Option<u32>>,
    /// Lists the last [`PostingsReuse::write`] copied (`None`: it formatted them all).
    copied: std::cell::Cell<Option<usize>>,
}

/// What a rebuild knows of the previous build and of its own partition, to judge whether the
/// previous `local.json`'s lists can be reused.
pub struct PreviousBuild<'a> {
    /// The previous `local.json` and lookup sidecar.
    pub local: &'a Path,
    pub lookup: &'a Path,
    /// What the build cache recorded of the build that wrote them.
    pub outputs: &'a Outputs,
    /// The cache's term table, in the order of its terms' bytes.
    pub terms: &'a [&'a str],
    /// Per term number of this build, its place in that table if its list can be the same
    /// (`code::Local::postings_as_before`).
    pub place_of: Vec<Option<u32>>,
}

impl PostingsReuse {
    /// The reuse `previous` allows for a partition whose documents have `paths` (in order), or
    /// `None` when the previous file is not one to copy from.
    pub fn plan<'p>(
        previous: PreviousBuild<'_>,
        mut paths: impl ExactSizeIterator<Item = &'p str>,
    ) -> Option<PostingsReuse> {
        let recorded = previous.outputs.local;
        // Looked at by path (as the cache recorded it: a link put there is another identity)
        // and then as opened, so a file swapped in between is not read.
        if Identity::of(previous.local) != Some(recorded) {
            return None;
        }
        let file = agentteams_mcp::regular_file::open(previous.local).ok()?;
        let opened = file.metadata().ok()?;
        if Identity::from_metadata(&opened, &opened) != recorded {
            return None;
        }
        let bytes = crate::regular_file::read_at_most(previous.lookup, MAX_LOOKUP_BYTES).ok()??;
        let lookup = Lookup::parse(bytes).ok()?;
        if lookup.local != recorded.file() || lookup.term_count() != previous.terms.len() {
            return None;
        }
        let same_documents = paths.len() == lookup.document_count()
            && lookup.paths().all(|path| paths.next() == Some(path));
        let same_terms = (0..lookup.term_count())
            .all(|place| lookup.term_by_place(place).term == previous.terms[place]);
        (same_documents && same_terms).then_some(PostingsReuse {
            previous: file,
            lookup,
            place_of: previous.place_of,
            copied: std::cell::Cell::new(None),
        })
    }

    /// Writes the postings object, terms in `order` (sorted), into `w` as
    /// [`write_postings`] would, and tells `record` each term as it does: each run of terms
    /// whose lists are the previous file's, back to back there, is copied from it in one piece,
    /// and the other terms are formatted. When a run's ends are not where the lookup says (a
    /// lookup damaged in place), everything is formatted, by [`write_postings`].
    pub fn write(
        &self,
        w: &mut PyJson,
        postings: &Postings,
        by_term: &ByTerm,
        order: &[usize],
        mut record: Option<&mut TermRecorder<'_>>,
    ) -> std::io::Result<()> {
        let pieces = self.pieces(order, by_term);
        let mut runs = pieces.iter().filter_map(|piece| match piece {
            Piece::Copied(places) => Some(self.span(places)),
            Piece::Formatted(_) => None,
        });
        if !runs.all(|span| self.bounded(span)) {
            self.copied.set(None);
            write_postings(w, postings, by_term, TermOrder::Given(order), record);
            return Ok(());
        }
        let mut copied = 0;
        w.begin_object();
        for piece in pieces {
            match piece {
                Piece::Formatted(number) => {
                    let (term, entries) = (postings.term(number), by_term.entries(number));
                    let range = write_term(w, term, entries);
                    if let Some(record) = record.as_deref_mut() {
                        record(term, range, entries.len() as u32);
                    }
                }
                Piece::Copied(places) => {
                    let (from, to) = self.span(&places);
                    let start = w.members_copied(to - from, |sink| {
                        copy_range(&self.previous, from..to, sink, COPY_CHUNK_BYTES)
                    })?;
                    if let Some(record) = record.as_deref_mut() {
                        for place in places.clone() {
                            let entry = self.lookup.term_by_place(place);
                            let (a, b) = entry.postings;
                            record(
                                entry.term,
                                (start + (a - from), start + (b - from)),
                                entry.documents as u32,
                            );
                        }
                    }
                    copied += places.len();
                }
            }
        }
        w.end_object();
        self.copied.set(Some(copied));
        Ok(())
    }

    /// The postings in `order` as pieces to format or copy: a term's list is copied from its
    /// place (`place_of`) when it holds as many documents there, and a run of such terms whose
    /// places follow on is one piece.
    fn pieces(&self, order: &[usize], by_term: &ByTerm) -> Vec<Piece> {
        let copyable = |number: usize| {
            let place = self.place_of.get(number).copied().flatten()? as usize;
            let entry = self.lookup.term_by_place(place);
            (entry.documents == by_term.entries(number).len()).then_some(place)
        };
        let mut pieces = Vec::new();
        for &number in order {
            let Some(place) = copyable(number) else {
                pieces.push(Piece::Formatted(number));
                continue;
            };
            match pieces.last_mut() {
                Some(Piece::Copied(places)) if places.end == place => places.end += 1,
                _ => pieces.push(Piece::Copied(place..place + 1)),
            }
        }
        pieces
    }

    /// The bytes of the previous file that the terms at `places` span: the first one's key's
    /// opening quote to the last one's list's `]`.
    fn span(&self, places: &std::ops::Range<usize>) -> (u64, u64) {
        let first = self.lookup.term_by_place(places.start).postings.0;
        (first, self.lookup.term_by_place(places.end - 1).postings.1)
    }

    /// Whether the previous file has a member's bounds at `span`'s ends: an indented `"` at
    /// its start and a `]` at its end followed by a separator or the object's last line.
    fn bounded(&self, (from, to): (u64, u64)) -> bool {
        let mut head = [0u8; 2];
        let mut tail = [0u8; 2];
        from >= 1
            && self.previous.read_exact_at(&mut head, from - 1).is_ok()
            && self.previous.read_exact_at(&mut tail, to - 1).is_ok()
            && head == *b" \""
            && (tail == *b"]," || tail == *b"]\n")
    }

    /// How many term lists [`PostingsReuse::write`] copied (`None`: none, it formatted all).
    pub fn copied(&self) -> Option<usize> {
        self.copied.get()
    }
}

/// Copies `file`'s bytes `range` into `sink`, `chunk` bytes at a time; a range past the file's
/// end is an error (`UnexpectedEof`) after what was there was copied.
fn copy_range(
    file: &File,
    range: std::ops::Range<u64>,
    sink: &mut dyn Write,
    chunk: usize,
) -> std::io::Result<()> {
    let mut buffer = vec![0u8; chunk.min((range.end - range.start) as usize)];
    let mut at = range.start;
    while at < range.end {
        let part = &mut buffer[..chunk.min((range.end - at) as usize)];
        file.read_exact_at(part, at)?;
        sink.write_all(part)?;
        at += part.len() as u64;
    }
    Ok(())
}

/// A piece of the postings being written.
enum Piece {
    /// The term numbered so, formatted.
    Formatted(usize),
    /// The terms at these places of the previous table, copied in one piece.
    Copied(std::ops::Range<usize>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_copied_whole_across_chunks_and_one_past_the_end_is_an_error() {
        let dir = crate::scratch::TempDir::new("reuse-copy");
        let path = dir.join("previous");
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        for (range, chunk) in [(0..1000, 7), (13..14, 7), (100..900, 800), (5..5, 3)] {
            let mut sink = Vec::new();
            copy_range(&file, range.clone(), &mut sink, chunk).unwrap();
            assert_eq!(sink, bytes[range.start as usize..range.end as usize]);
        }
        let mut sink = Vec::new();
        let err = copy_range(&file, 990..1010, &mut sink, 8).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(sink, bytes[990..998]);
    }
}
