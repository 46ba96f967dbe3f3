//! The memory index (`references/memory-index.json`): documents from the project's markdown,
//! substantive paragraphs with home paths redacted, prose-token postings, written in the
//! reference's key order with `json.dumps(indent=2)` layout.

use super::passages::{blocks, py_splitlines};
use super::postings::{ByTerm, Postings};
use super::pyjson::{Part, PyJson};
use super::sections;
use super::sources::{mtime, read_text};
use super::stamp::Stamp;
use crate::corpus::text::cut_chars;
use crate::corpus::text::is_python_whitespace;
use crate::corpus::tokenize::{Tokenizer, NOTES_FORMAT};
use agentteams_mcp::sha256;
use std::path::{Path, PathBuf};

/// Substantive paragraphs kept per document.
pub const MAX_PARAGRAPHS: usize = 20;
/// Code points a paragraph is cut to.
pub const PARAGRAPH_CHARS: usize = 480;
/// Code points of a document's stored snippet.
pub const SNIPPET_CHARS: usize = 240;

/// One indexed markdown document.
pub struct MemoryDoc {
    pub path: String,
    pub title: String,
    pub length: u64,
    pub snippet: String,
    pub paragraphs: Vec<String>,
    pub source_hash: String,
    pub source_mtime: f64,
}

/// A built memory index, ready to write.
pub struct MemoryIndex {
    /// What made the postings: the reference's prose tokenizer, or for the sections sidecar
    /// ours for notes (written as its `index_format_version`).
    pub tokenizer: Tokenizer,
    pub docs: Vec<MemoryDoc>,
    pub postings: Postings,
    pub source_count: usize,
    pub built_at: String,
    pub project_name: String,
    pub framework: String,
}

fn strip(s: &str) -> &str {
    s.trim_matches(is_python_whitespace)
}

/// The path as stored: relative to the root when inside it, else unchanged.
fn store_path(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The memory index and its sections sidecar, built in one read of each source.
pub struct Built {
    pub index: MemoryIndex,
    /// One document per section ([`sections::split`]) of each document of `index`, in the same
    /// format, for `references/memory-sections.json` ([`crate::recall::sections`]).
    pub sections: MemoryIndex,
}

/// Builds the memory index over `sources` (absolute paths, in order), and its sections.
pub fn build(root: &Path, sources: &[PathBuf], stamp: &Stamp) -> Built {
    let mut index = MemoryIndex::empty(sources.len(), stamp, Tokenizer::Prose);
    let mut sections = MemoryIndex::empty(sources.len(), stamp, Tokenizer::Notes);
    for path in sources {
        let Some(text) = read_text(path) else {
            continue;
        };
        let length = index.postings.add(&text, index.tokenizer);
        if length == 0 {
            continue;
        }
        let doc = MemoryDoc::new(
            store_path(path, root),
            title(path, &text),
            length,
            &text,
            sha256::hex_digest(text.as_bytes()),
            mtime(path),
        );
        let split = sections::split(&text);
        // The reference's title is the first `# ` line, even one inside a code fence (a rustdoc
        // example's hidden `# let x = 1;`): the text before the first heading is titled by it
        // only when it is the document's first real heading, else by the file's name.
        let first_heading = split.iter().find_map(|s| s.headings.first());
        let untitled = if first_heading == Some(&doc.title) {
            doc.title.clone()
        } else {
            file_name(path)
        };
        for section in split {
            let length = sections.postings.add(section.text, sections.tokenizer);
            if length == 0 {
                continue;
            }
            let title = section.heading_path().unwrap_or_else(|| untitled.clone());
            let located =
                crate::corpus::locator::locate(&doc.path, section.first_line, section.last_line);
            sections.docs.push(MemoryDoc::new(
                located,
                title,
                length,
                section.text,
                doc.source_hash.clone(),
                doc.source_mtime,
            ));
        }
        index.docs.push(doc);
    }
    Built { index, sections }
}

impl MemoryDoc {
    /// A document of `text` (a whole file or one of its sections): its paragraphs, and its
    /// snippet from the first of them (else the legacy snippet).
    fn new(
        path: String,
        title: String,
        length: u64,
        text: &str,
        source_hash: String,
        source_mtime: f64,
    ) -> MemoryDoc {
        let paragraphs = paragraphs(text);
        let snippet = match paragraphs.first() {
            Some(first) => cut_chars(first, SNIPPET_CHARS).to_owned(),
            None => legacy_snippet(text),
        };
        MemoryDoc {
            path,
            title,
            length,
            snippet,
            paragraphs,
            source_hash,
            source_mtime,
        }
    }
}

/// The first `# ` heading, else the file name.
fn title(path: &Path, text: &str) -> String {
    py_splitlines(text)
        .into_iter()
        .map(strip)
        .find_map(|l| l.strip_prefix("# ").map(|t| strip(t).to_owned()))
        .unwrap_or_else(|| file_name(path))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first non-blank line not starting with `#` (used only when no paragraph is substantive).
fn legacy_snippet(text: &str) -> String {
    py_splitlines(strip(text))
        .into_iter()
        .map(strip)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| cut_chars(l, SNIPPET_CHARS).to_owned())
        .unwrap_or_default()
}

/// Up to [`MAX_PARAGRAPHS`] substantive paragraphs, headings dropped, joined to one line,
/// home paths redacted, cut to [`PARAGRAPH_CHARS`].
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in blocks(text) {
        let p = strip(block);
        if p.is_empty() || !is_substantive(p) {
            continue;
        }
        let body: Vec<&str> = py_splitlines(p)
            .into_iter()
            .map(strip)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let body = if body.is_empty() {
            p.replace('\n', " ")
        } else {
            body.join(" ")
        };
        out.push(cut_chars(&redact_home_paths(&body), PARAGRAPH_CHARS).to_owned());
        if out.len() >= MAX_PARAGRAPHS {
            break;
        }
    }
    out
}

fn starts_with_ignore_ascii_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn is_substantive(p: &str) -> bool {
    if starts_with_ignore_ascii_case(p, "<!--")
        || starts_with_ignore_ascii_case(
            p,
            "all notable changes to this project will be documented",
        )
        || p.contains("---|")
        || p.starts_with('|')
        || p.starts_with("[![")
    {
        return false;
    }
    let lines: Vec<&str> = py_splitlines(p)
        .into_iter()
        .map(strip)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.iter().all(|l| l.starts_with('#')) {
        return false;
    }
    word_count(p) >= 8
}

/// Matches of `[A-Za-z0-9_-]+`.
fn word_count(p: &str) -> usize {
    p.as_bytes()
        .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
        .filter(|w| !w.is_empty())
        .count()
}

/// `(?:/Users/|/home/|C:\\\\Users\\\\)[^\s"'`,;:)\]}]*` → `<path>`.
pub fn redact_home_paths(text: &str) -> String {
    const PREFIXES: [&str; 3] = ["/Users/", "/home/", "C:\\\\Users\\\\"];
    let mut out = String::with_capacity(text.len());
    // Bytes of `text` handled so far, and where each prefix next occurs at or after that. A
    // prefix is searched for again only once `done` has passed its occurrence, so the text is
    // scanned once per prefix however many paths it holds.
    let mut done = 0;
    let mut next = PREFIXES.map(|p| text.find(p));
    loop {
        for (at, prefix) in next.iter_mut().zip(PREFIXES) {
            if at.is_some_and(|i| i < done) {
                *at = text[done..].find(prefix).map(|i| done + i);
            }
        }
        let Some((start, prefix)) = next
            .iter()
            .zip(PREFIXES)
            .filter_map(|(at, p)| at.map(|i| (i, p)))
            .min_by_key(|(i, _)| *i)
        else {
            break;
        };
        out.push_str(&text[done..start]);
        out.push_str("<path>");
        let tail_start = start + prefix.len();
        let tail = &text[tail_start..];
        let end = tail
            .find(|c: char| {
                c.is_whitespace()
                    || ('\u{1c}'..='\u{1f}').contains(&c)
                    || matches!(c, '"' | '\'' | '`' | ',' | ';' | ':' | ')' | ']' | '}')
            })
            .unwrap_or(tail.len());
        done = tail_start + end;
    }
    out.push_str(&text[done..]);
    out
}

/// `source_fingerprint`: SHA-256 of `path:source_hash` joined by `|`, sorted by path.
fn fingerprint(docs: &[MemoryDoc]) -> String {
    let mut parts: Vec<(&str, String)> = docs
        .iter()
        .map(|d| (d.path.as_str(), format!("{}:{}", d.path, d.source_hash)))
        .collect();
    parts.sort_by(|a, b| a.0.cmp(b.0));
    let joined: Vec<String> = parts.into_iter().map(|(_, s)| s).collect();
    sha256::hex_digest(joined.join("|").as_bytes())
}

impl MemoryIndex {
    fn empty(source_count: usize, stamp: &Stamp, tokenizer: Tokenizer) -> MemoryIndex {
        MemoryIndex {
            tokenizer,
            docs: Vec::new(),
            postings: Postings::new(),
            source_count,
            built_at: stamp.built_at.clone(),
            project_name: stamp.project_name.clone(),
            framework: stamp.framework.clone(),
        }
    }

    fn format(&self) -> &'static str {
        match self.tokenizer {
            Tokenizer::Notes => NOTES_FORMAT,
            _ => "json-bm25-postings-v2",
        }
    }

    /// The `index_build_id` the reference computes: SHA-256 of
    /// `"<source_fingerprint>|<built_at>|<source_count>"`.
    pub fn build_id(&self) -> String {
        let source_fingerprint = fingerprint(&self.docs);
        sha256::hex_digest(
            format!(
                "{source_fingerprint}|{}|{}",
                self.built_at, self.source_count
            )
            .as_bytes(),
        )
    }

    /// The file's bytes: `json.dumps(index, indent=2) + "\n"`, keys in the reference's order.
    pub fn to_json(&self) -> String {
        self.to_json_with_build_id(&self.build_id())
    }

    /// [`MemoryIndex::to_json`] with the given `index_build_id`: the sections sidecar carries its
    /// memory index's, which is how recall knows the two belong together.
    pub fn to_json_with_build_id(&self, build_id: &str) -> String {
        let source_fingerprint = fingerprint(&self.docs);
        let by_term = self.postings.by_term();
        let norms = self.postings.vector_norms(&by_term);
        let mut w = PyJson::new(Some(2), 1024 + self.postings.term_count() * 64);
        w.begin_object();
        for (key, value) in [
            ("artifact_type", "memory-index"),
            ("memory_index_schema_version", "1.3"),
            ("index_format_version", self.format()),
            ("index_build_id", build_id),
            ("index_write_owner", "agentteams.build_team"),
            ("vector_runtime_mode", "sparse-tfidf-cosine"),
        ] {
            w.key(key);
            w.string(value);
        }
        w.key("vector_model_id");
        w.null();
        w.key("vector_dim");
        w.null();
        for (key, value) in [
            ("fallback_policy", "non-blocking-file-read-then-search"),
            ("source_fingerprint", source_fingerprint.as_str()),
            ("project_name", self.project_name.as_str()),
            ("framework", self.framework.as_str()),
            ("built_at", self.built_at.as_str()),
        ] {
            w.key(key);
            w.string(value);
        }
        w.key("source_count");
        w.int(self.source_count as u64);
        w.key("documents");
        w.begin_array();
        for (doc_id, doc) in self.docs.iter().enumerate() {
            w.element();
            w.begin_object();
            w.key("doc_id");
            w.int(doc_id as u64);
            w.key("path");
            w.string(&doc.path);
            w.key("title");
            w.string(&doc.title);
            w.key("length");
            w.int(doc.length);
            w.key("snippet");
            w.string(&doc.snippet);
            w.key("paragraphs");
            w.begin_array();
            for p in &doc.paragraphs {
                w.element();
                w.string(p);
            }
            w.end_array();
            w.key("source_hash");
            w.string(&doc.source_hash);
            w.key("source_mtime");
            w.float(doc.source_mtime);
            w.key("vector_norm_sq");
            w.float(norms[doc_id]);
            w.end_object();
        }
        w.end_array();
        w.key("postings");
        write_postings(&mut w, &self.postings, &by_term, TermOrder::FirstSeen, None);
        w.key("avgdl");
        w.float(self.postings.avgdl());
        w.key("N");
        w.int(self.docs.len() as u64);
        w.end_object();
        let mut text = w.finish();
        text.push('\n');
        text
    }
}

/// Terms in one part of the postings: the parts are written in turn by this thread and a second
/// one, and each part's terms are looked up before any is written (sorted, their numbers fall
/// all over the tables, and a loop that only looks them up waits for many at once). Up to four
/// parts are in memory at once: at 4,096 terms they were 4 MiB of the standard library's peak,
/// at 1,024 as fast.
const TERMS_PER_PART: usize = 1024;

/// Parts the second thread may have written ahead of this one (they wait in memory).
const PARTS_AHEAD: usize = 2;

/// Bytes of a term's key and list around its text, and of one `{"doc_id": d, "tf": n}` entry
/// with a five-digit `d` and a one-digit `n`, laid out as the indexes write their postings: a
/// part's room (`SITE`'s postings: 1 % over).
const TERM_BYTES: usize = 18;
const ENTRY_BYTES: usize = 58;

/// Told each term [`write_postings`] writes: the term, its key's opening quote to its list's `]`
/// in the output, and its list's length.
pub type TermRecorder<'r> = dyn FnMut(&str, (u64, u64), u32) + 'r;

/// One part of the postings as written: the output, and per term what [`TermRecorder`] is told,
/// its range counted from the part's start.
type WrittenPart<'p> = (Part, Vec<(&'p str, (u64, u64), u32)>);

/// Writes one member of the postings, `"term": [{"doc_id": d, "tf": n}, ...]`; returns its
/// key's opening quote to its list's `]` in the output.
pub fn write_term(w: &mut PyJson, term: &str, entries: &[(u32, u32)]) -> (u64, u64) {
    let start = w.key_at(term);
    w.begin_array();
    w.int_pair_elements(("doc_id", "tf"), entries);
    w.end_array();
    (start, w.position())
}

/// The order [`write_postings`] writes the terms in.
pub enum TermOrder<'o> {
    FirstSeen,
    /// By their bytes (Python's `sort_keys`).
    Sorted,
    /// Sorted already ([`Postings::sorted_terms`]): each term's number once.
    Given(&'o [usize]),
}

/// `{"term": [{"doc_id": d, "tf": n}, ...], ...}` from `postings` turned around (`by_term`),
/// terms in `order`; `record` gets each term, the bytes from its key's opening
/// quote to its list's `]` and its list's length, in written order. Parts of [`TERMS_PER_PART`]
/// terms are written alternately here and on a second thread (formatting is most of the work)
/// and added in order; without a second thread, all here.
pub fn write_postings<'r>(
    w: &mut PyJson,
    postings: &Postings,
    by_term: &ByTerm,
    order: TermOrder<'_>,
    mut record: Option<&mut TermRecorder<'r>>,
) {
    let made;
    let order: &[usize] = match order {
        TermOrder::FirstSeen => {
            made = (0..postings.term_count()).collect::<Vec<_>>();
            &made
        }
        TermOrder::Sorted => {
            made = postings.sorted_terms(None);
            &made
        }
        TermOrder::Given(order) => order,
    };
    w.begin_object();
    // The first part starts the object; every later one follows members.
    let (first, later) = (w.place(), w.place().after_members());
    let parts: Vec<&[usize]> = order.chunks(TERMS_PER_PART).collect();
    let write_part = |k: usize| -> WrittenPart<'_> {
        let start = if k == 0 { &first } else { &later }.clone();
        let terms: Vec<(&str, &[(u32, u32)])> = (parts[k].iter())
            .map(|&i| (postings.term(i), by_term.entries(i)))
            .collect();
        // Room for the part at once (grown by doubling, it was copied about once more).
        let room = (terms.iter())
            .map(|(term, entries)| term.len() + TERM_BYTES + entries.len() * ENTRY_BYTES)
            .sum();
        let mut part = PyJson::resume(start, room);
        let mut written = Vec::with_capacity(terms.len());
        for (term, entries) in terms {
            let range = write_term(&mut part, term, entries);
            written.push((term, range, entries.len() as u32));
        }
        (part.into_part(), written)
    };
    let (write_part, count) = (&write_part, parts.len());
    std::thread::scope(|scope| {
        let (send, receive) = std::sync::mpsc::sync_channel(PARTS_AHEAD);
        let second = std::thread::Builder::new()
            .name("index-postings".into())
            .spawn_scoped(scope, move || {
                for k in (1..count).step_by(2) {
                    if send.send(write_part(k)).is_err() {
                        return;
                    }
                }
            });
        for k in 0..count {
            // Odd parts come from the second thread; should it be gone, they are written here.
            let from_second = (k % 2 == 1 && second.is_ok())
                .then(|| receive.recv().ok())
                .flatten();
            let (part, terms) = from_second.unwrap_or_else(|| write_part(k));
            let base = w.position();
            w.append(part);
            if let Some(record) = record.as_deref_mut() {
                for (term, (start, end), documents) in terms {
                    record(term, (base + start, base + end), documents);
                }
            }
        }
    });
    w.end_object();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word of letters only for each number (prose tokens), all distinct.
    fn word(mut n: usize) -> String {
        let mut w = String::from("qz");
        loop {
            w.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                return w;
            }
        }
    }

    #[test]
    fn postings_written_in_parts_on_two_threads_come_out_whole_and_in_order() {
        // More terms than two parts hold, so parts come from both threads and the last is short.
        let terms = 2 * TERMS_PER_PART + 7;
        let mut postings = Postings::new();
        for d in 0..3 {
            let text: Vec<String> = (0..terms)
                .filter(|t| (t + d) % 3 != 0)
                .flat_map(|t| std::iter::repeat_n(word(t), 1 + (t + d) % 2))
                .collect();
            postings.add(&text.join(" "), Tokenizer::Prose);
        }
        let mut sorted = postings.term_entries();
        assert_eq!(sorted.len(), terms);
        sorted.sort();
        // Python's json.dumps(indent=2) of the same object, written out by hand.
        let mut expected = String::from("{");
        for (i, (term, entries)) in sorted.iter().enumerate() {
            expected += if i == 0 { "\n  " } else { ",\n  " };
            expected += &format!("\"{term}\": [");
            for (j, (doc, tf)) in entries.iter().enumerate() {
                expected += if j == 0 { "\n    " } else { ",\n    " };
                expected += &format!("{{\n      \"doc_id\": {doc},\n      \"tf\": {tf}\n    }}");
            }
            expected += "\n  ]";
        }
        expected += "\n}";

        let by_term = postings.by_term();
        let mut recorded = Vec::new();
        let mut record = |term: &str, range: (u64, u64), documents: u32| {
            recorded.push((term.to_owned(), range, documents));
        };
        let mut w = PyJson::new(Some(2), 0);
        write_postings(
            &mut w,
            &postings,
            &by_term,
            TermOrder::Sorted,
            Some(&mut record),
        );
        let text = w.finish();
        assert!(text == expected, "the postings differ from json.dumps'");
        // Streamed to a sink, the same bytes.
        let mut sink = Vec::new();
        let mut w = PyJson::streaming(Some(2), &mut sink);
        write_postings(&mut w, &postings, &by_term, TermOrder::Sorted, None);
        w.finish_streaming().unwrap();
        assert!(sink == expected.as_bytes(), "streamed postings differ");
        // Each term told in order, with its key-to-`]` range and its list's length.
        assert_eq!(recorded.len(), terms);
        for ((term, (start, end), documents), (want, entries)) in recorded.iter().zip(&sorted) {
            assert_eq!(term, want);
            assert_eq!(*documents as usize, entries.len());
            let slice = &text[*start as usize..*end as usize];
            assert!(slice.starts_with(&format!("\"{term}\": [")) && slice.ends_with(']'));
        }
    }

    #[test]
    fn paragraphs_follow_the_reference_rules() {
        let text = "# Title\n\n<!-- comment with many many words in it ok yes -->\n\n| a | b |\n|---|---|\n\n## Heading only\n\n## Section\nThe widget factory builds widgets from gears and bolts daily.\n\nshort one\n\n[![badge](x)] one two three four five six seven eight\n\nSee /home/alice/secret/file.txt, and C:\\\\Users\\\\bob\\\\x for nine words total here ok.";
        assert_eq!(
            paragraphs(text),
            [
                "The widget factory builds widgets from gears and bolts daily.",
                "See <path>, and <path> for nine words total here ok.",
            ]
        );
        assert_eq!(title(Path::new("x/doc.md"), text), "Title");
        assert_eq!(title(Path::new("x/doc.md"), "#NoSpace\ntext"), "doc.md");
    }

    #[test]
    fn legacy_snippet_is_the_first_plain_line_unredacted() {
        assert_eq!(
            legacy_snippet("\n# h\n  /home/x plain words  \nmore"),
            "/home/x plain words"
        );
        assert_eq!(legacy_snippet("# only"), "");
    }

    #[test]
    fn redaction_stops_at_the_reference_delimiters() {
        assert_eq!(
            redact_home_paths("a /Users/x/y:z /home/q)r"),
            "a <path>:z <path>)r"
        );
        assert_eq!(redact_home_paths("no paths"), "no paths");
        assert_eq!(redact_home_paths("/home/"), "<path>");
    }

    #[test]
    fn redaction_of_a_source_full_of_home_paths_is_linear() {
        // One paragraph of the largest source the builder reads, made of home paths only: each
        // path must not start a new scan of the whole rest of the text (quadratic, hours).
        use crate::index::sources::MAX_SOURCE_BYTES;
        let unit = "/home/a ";
        let count = MAX_SOURCE_BYTES as usize / unit.len();
        let text = unit.repeat(count);
        assert_eq!(redact_home_paths(&text), "<path> ".repeat(count));
        let paragraph = paragraphs(&text);
        assert_eq!(paragraph.len(), 1);
        assert!(
            paragraph[0].starts_with("<path> <path>"),
            "{}",
            paragraph[0]
        );
    }
}
