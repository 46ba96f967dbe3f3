//! The tree path: a parsed index file validated against its schema and converted to the
//! ranker's form ([`super::loaded`]). Also the converter the streaming path uses for each
//! document it reads as a small tree, so both paths make the same documents.

use super::loaded::{
    CodeFile, Corpus, Document, IndexKind, Loaded, Passages, Posting, PostingTable,
};
use crate::corpus::schema::{
    integral, validate_code_index, validate_memory_index, CodeIndexFile, SchemaError,
};
use crate::corpus::tokenize::{Tokenizer, NOTES_FORMAT};
use agentteams_mcp::json::Value;
use std::collections::HashMap;

/// Validates a parsed file and converts it to the ranker's form. The two walks only read the tree,
/// so they run side by side (conversion on a second thread) and a cold query pays for the longer
/// one, not both; the conversion is discarded when validation fails.
pub(super) fn validate_and_convert(value: &Value, kind: IndexKind) -> Result<Loaded, SchemaError> {
    std::thread::scope(|scope| {
        let converter = std::thread::Builder::new()
            .name("recall-convert".into())
            .spawn_scoped(scope, || convert(value, kind));
        validate_beside(value, kind, || {
            converter.ok().and_then(|handle| handle.join().ok())
        })
    })
}

/// Validates `value` here while its conversion runs elsewhere, then takes that conversion from
/// `converted` (`None` if it could not run or panicked); the validated file's conversion.
pub(super) fn validate_beside(
    value: &Value,
    kind: IndexKind,
    converted: impl FnOnce() -> Option<Loaded>,
) -> Result<Loaded, SchemaError> {
    let validated = validate(value, kind);
    let converted = converted();
    // Conversion is infallible on a validated tree; redo it here if it did not run.
    let file = validated?;
    Ok(settle(
        file,
        converted.unwrap_or_else(|| convert(value, kind)),
    ))
}

/// A validated file's conversion, checked (in debug builds) to be of the kind validation found.
fn settle(file: Option<CodeIndexFile>, loaded: Loaded) -> Loaded {
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
    loaded
}

/// Validates a parsed file against its kind's schema; for a code-index file, says which branch.
pub(super) fn validate(
    value: &Value,
    kind: IndexKind,
) -> Result<Option<CodeIndexFile>, SchemaError> {
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
        build_id: None,
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
            "index_build_id" => corpus.build_id = Some(string(value)),
            // Only our memory-sections sidecar says this; its postings are the notes tokens.
            "index_format_version"
                if tokenizer == Tokenizer::Prose && value.as_str() == Some(NOTES_FORMAT) =>
            {
                corpus.tokenizer = Tokenizer::Notes
            }
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
                                    None,
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

/// Bytes reserved beside a document's passages for its path, title, snippet and symbol.
const HEAD_ROOM: usize = 1024;

/// Converts a validated document from its members in file order (a repeated key: the last wins).
/// `streamed`: its passages, when they were read apart from the members (whose passages member
/// is then an empty stand-in). Its text is copied into the document's one buffer
/// ([`Document::from_parts`]), so the members are only borrowed.
pub(super) fn document_from<'v, K: AsRef<[u8]>>(
    members: impl IntoIterator<Item = (K, &'v Value)>,
    tokenizer: Tokenizer,
    streamed: Option<Passages>,
) -> Document {
    let code = tokenizer == Tokenizer::Code;
    let text = |value: &'v Value| value.as_str().unwrap_or_default();
    let (mut path, mut title, mut snippet) = ("", "", "");
    let mut length = 0.0;
    let mut passages = Passages::default();
    let mut symbol: Option<&str> = None;
    // Keys as bytes: a short key becomes a `str` only through a UTF-8 check.
    let passages_key: &[u8] = if code { b"passages" } else { b"paragraphs" };
    for (key, value) in members {
        match key.as_ref() {
            b"path" => path = text(value),
            b"title" => title = text(value),
            b"length" => length = number(value),
            b"snippet" => snippet = text(value),
            b"symbol" if code => symbol = value.as_str(),
            k if k == passages_key => {
                let items = value.as_array().map_or(&[][..], |a| &a[..]);
                // Room for all of them and for a document's usual head (path, title, snippet,
                // symbol), so the document's text is this one buffer (`from_parts`).
                let bytes: usize = items.iter().filter_map(Value::as_str).map(str::len).sum();
                passages = Passages::with_capacity(bytes + HEAD_ROOM, items.len());
                for passage in items {
                    passages.push(passage.as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    Document::from_parts(
        [path, title, snippet],
        length,
        streamed.unwrap_or(passages),
        code.then_some(symbol),
    )
}

fn postings_from(value: &Value) -> PostingTable {
    let Some(map) = value.as_object() else {
        return PostingTable::default();
    };
    let mut table = PostingTable::default();
    table.reserve_terms(map.len());
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
                out.push((name.to_string(), file));
            }
        }
    }
    out
}
