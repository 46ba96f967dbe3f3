//! Reading an index file of the common shape straight from the JSON token stream into the
//! ranker's form, so a cold query does not build, walk twice and free a tree of the postings
//! and documents (nearly all of a file: millions of small objects in a large one).
//!
//! All or nothing: [`load`] answers only for a file it can prove valid, and then with exactly
//! what the tree path ([`super::tree`]) would produce; anything else (a syntax error, a schema
//! violation, a repeated key in the file, a document or a posting, an unusual posting shape)
//! gives `None` and the caller takes the tree path, which decides and words the error. So this
//! module never has to reproduce an error message or the order in which the validator would
//! report problems.
//!
//! The postings are validated here (object of arrays of `{"doc_id", "tf"}` objects, each key
//! once, integers in range, every `doc_id` naming a document). Each document is read as its own
//! small tree, checked by the validator's rules for one document and converted by the tree
//! path's converter; its passages, the one member that may be long, go straight into their
//! compact list instead, at any length. The rest (metadata) goes through the schema validator
//! and the converter as a tree, with empty stand-ins for the two large members.

use super::loaded::{CodeFile, Document, IndexKind, Loaded, Passages, Posting, PostingTable};
use super::tree::{convert, document_from, validate};
use crate::corpus::schema::{integral_number, validate_document};
use crate::corpus::tokenize::Tokenizer;
use agentteams_mcp::json::{Array, Key, Map, Reader, Token, Value};

/// The file's validated contents, or `None` when the tree path must decide (see the module docs).
pub(super) fn load(bytes: &[u8], kind: IndexKind) -> Option<Loaded> {
    let mut reader = Reader::new(bytes);
    if !matches!(reader.next().ok()?, Some(Token::BeginObject)) {
        return None;
    }
    let mut postings = None;
    let mut documents = None;
    // The large members are read into their tables here; the skeleton keeps an empty stand-in
    // of the same type for the schema validator.
    // A large member seen twice declines the file before it is read again (`read_members` would
    // notice only after), so a repeated key never holds two copies of one at once.
    let skeleton = read_members(&mut reader, |key, reader| match key {
        "postings" if postings.is_none() => {
            postings = Some(read_postings(reader)?);
            Some(Some(Value::Object(Map::new())))
        }
        "documents" if documents.is_none() => {
            documents = Some(read_documents(reader, kind)?);
            Some(Some(Value::Array(Array::new())))
        }
        "postings" | "documents" => None,
        _ => Some(None),
    })?;
    // The end of the document: only whitespace may follow.
    if reader.next().ok()?.is_some() {
        return None;
    }
    let skeleton = Value::Object(skeleton);
    // The skeleton is small (metadata and two empty stand-ins): validated, converted and freed
    // in line, not on other threads whose start and join would cost more than they save.
    let loaded = validate(&skeleton, kind)
        .ok()
        .map(|_| convert(&skeleton, kind));
    drop(skeleton);
    let mut loaded = loaded?;
    let (Loaded::Memory(corpus) | Loaded::Code(CodeFile::Partition(corpus))) = &mut loaded else {
        // A manifest has neither member (the validator refused them), nothing to fill in.
        return Some(loaded);
    };
    // `documents` is required: the validator refused a file without it.
    corpus.documents = documents?;
    if let Some((table, highest_doc)) = postings {
        if highest_doc.is_some_and(|doc| doc >= corpus.documents.len() as f64) {
            return None;
        }
        corpus.postings = table;
    }
    Some(loaded)
}

/// An object's members after its `{`, up to and including its `}`. `special` sees each key
/// first and either reads the value itself, giving the stand-in to keep (`Some(Some(_))`), or
/// leaves it to be read whole (`Some(None)`), or declines the file (`None`). A repeated key
/// declines too, checked once the object is complete: which one counts is the tree path's to
/// decide. So does an object of more than [`MAX_OBJECT_MEMBERS`] members.
fn read_members(
    reader: &mut Reader<'_>,
    mut special: impl FnMut(&str, &mut Reader<'_>) -> Option<Option<Value>>,
) -> Option<Map> {
    let mut members = Map::with_capacity(MEMBERS_EXPECTED);
    loop {
        let key = match reader.next() {
            Ok(Some(Token::Key(key))) => key,
            Ok(Some(Token::EndObject)) if !members.has_repeated_key() => return Some(members),
            _ => return None,
        };
        if members.len() == MAX_OBJECT_MEMBERS {
            return None;
        }
        let value = match special(&key, reader)? {
            Some(stand_in) => stand_in,
            None => read_bounded_value(reader)?,
        };
        // As the token's text: a key short enough to be held inline is never allocated.
        members.push(key, value);
    }
}

/// Members an object read by [`read_members`] (a file's top level, a document) may have: far more
/// than any valid one without a repeated key (the schemas name at most 20 properties). Past it the
/// file is declined, so the members kept are few whatever a file holds (a top level of a million
/// keys would otherwise be a map about seven times the file's size, checked for repeats).
pub const MAX_OBJECT_MEMBERS: usize = 64;

/// Tokens one member's value may span here: far more than any valid member has (a document's
/// passages, a manifest's at most `MAX_PARTITIONS` partitions). A larger member declines the
/// file rather than build a tree as large as the file (up to 55 bytes per byte of it); the tree
/// path then refuses a file that large (`MAX_TREE_INDEX_BYTES`).
pub const MAX_MEMBER_TOKENS: usize = 100_000;

/// The next value, built from its tokens as `Reader::read_value` builds it; `None` on an error,
/// past [`MAX_MEMBER_TOKENS`] tokens, or for an object with a repeated key (the tree path's to
/// decide, as in [`read_members`]).
fn read_bounded_value(reader: &mut Reader<'_>) -> Option<Value> {
    enum Open {
        Array(Vec<Value>),
        Object(Map, Option<Key>),
    }
    let mut open: Vec<Open> = Vec::new();
    for _ in 0..MAX_MEMBER_TOKENS {
        let value = match reader.next().ok()?? {
            Token::BeginArray => {
                open.push(Open::Array(Vec::new()));
                continue;
            }
            Token::BeginObject => {
                open.push(Open::Object(Map::new(), None));
                continue;
            }
            Token::Key(name) => match open.last_mut() {
                Some(Open::Object(_, key)) => {
                    *key = Some(Key::from(name));
                    continue;
                }
                _ => return None,
            },
            Token::EndArray => match open.pop()? {
                Open::Array(items) => Value::Array(Array::from(items)),
                Open::Object(..) => return None,
            },
            Token::EndObject => match open.pop()? {
                Open::Object(map, _) if !map.has_repeated_key() => Value::Object(map),
                _ => return None,
            },
            Token::String(text) => Value::String(text.into()),
            Token::Number(number) => Value::Number(number),
            Token::Bool(b) => Value::Bool(b),
            Token::Null => Value::Null,
        };
        match open.last_mut() {
            None => return Some(value),
            Some(Open::Array(items)) => items.push(value),
            Some(Open::Object(map, key)) => map.push(key.take()?, value),
        }
    }
    None
}

/// Room reserved for an object's members: a document has up to 14, a file's top level up to 20.
const MEMBERS_EXPECTED: usize = 16;

/// The `documents` array, each entry read as a small tree, checked by the validator's own rules
/// for one document and converted by the tree path's converter. A document's
/// passages (`paragraphs` or `passages`) are read straight into their compact list, never as a
/// tree, at any length: a `Value` per passage costs up to 20 times its bytes.
fn read_documents(reader: &mut Reader<'_>, kind: IndexKind) -> Option<Vec<Document>> {
    if !matches!(reader.next(), Ok(Some(Token::BeginArray))) {
        return None;
    }
    let mut documents = Vec::new();
    loop {
        match reader.next() {
            Ok(Some(Token::BeginObject)) => {}
            Ok(Some(Token::EndArray)) => {
                documents.shrink_to_fit();
                return Some(documents);
            }
            _ => return None,
        }
        documents.push(read_document(reader, kind)?.0);
    }
}

/// One document after its `{`, with its `doc_id` when it has an integral one.
fn read_document(reader: &mut Reader<'_>, kind: IndexKind) -> Option<(Document, Option<f64>)> {
    let (code, tokenizer, passages_key) = match kind {
        IndexKind::Memory => (false, Tokenizer::Prose, "paragraphs"),
        IndexKind::Code => (true, Tokenizer::Code, "passages"),
    };
    let mut passages = None;
    let members = read_members(reader, |key, reader| {
        if key != passages_key {
            return Some(None);
        }
        if passages.is_some() {
            // Repeated: declined before it is read again (see `load`).
            return None;
        }
        passages = Some(read_passages(reader)?);
        // The validator sees an empty array of strings: what was read is one.
        Some(Some(Value::Array(Array::new())))
    })?;
    let document = Value::Object(members);
    validate_document(&document, code).ok()?;
    let Value::Object(members) = &document else {
        return None;
    };
    let doc_id = (members.get("doc_id"))
        .and_then(Value::as_number)
        .and_then(integral_number);
    Some((document_from(members.iter(), tokenizer, passages), doc_id))
}

/// The document whose object is exactly `bytes` (`{` to `}`), validated as a document of a file
/// is, with its `doc_id`; `None` for anything else.
pub(super) fn document_at(bytes: &[u8], kind: IndexKind) -> Option<(Document, Option<f64>)> {
    let mut reader = Reader::new(bytes);
    if !matches!(reader.next(), Ok(Some(Token::BeginObject))) {
        return None;
    }
    let document = read_document(&mut reader, kind)?;
    matches!(reader.next(), Ok(None)).then_some(document)
}

/// The documents of `bytes`, a JSON array of them, each validated as [`document_at`] does.
pub(super) fn documents_in(bytes: &[u8], kind: IndexKind) -> Option<Vec<Document>> {
    let mut reader = Reader::new(bytes);
    let documents = read_documents(&mut reader, kind)?;
    matches!(reader.next(), Ok(None)).then_some(documents)
}

/// One term's postings from `bytes`, a JSON object of exactly that member (`{"term": [...]}`),
/// each posting validated as a file's are; `None` for anything else.
pub(super) fn term_postings(bytes: &[u8]) -> Option<(String, Vec<Posting>)> {
    let mut reader = Reader::new(bytes);
    let (table, _) = read_postings(&mut reader)?;
    if !matches!(reader.next(), Ok(None)) {
        return None;
    }
    let mut terms = table.with_prefix("");
    let (term, list) = terms.next()?;
    terms
        .next()
        .is_none()
        .then(|| (term.to_owned(), list.to_vec()))
}

/// An array of strings as a document's passages; `None` for anything else (the tree path
/// decides and words the error).
fn read_passages(reader: &mut Reader<'_>) -> Option<Passages> {
    if !matches!(reader.next(), Ok(Some(Token::BeginArray))) {
        return None;
    }
    let mut passages = Passages::default();
    loop {
        match reader.next() {
            Ok(Some(Token::String(text))) => passages.push(&text),
            Ok(Some(Token::EndArray)) => return Some(passages),
            _ => return None,
        }
    }
}

/// The `postings` object (term -> list of postings) as a table, with the highest `doc_id` seen
/// (checked against the documents once their number is known: they may come later in the file).
fn read_postings(reader: &mut Reader<'_>) -> Option<(PostingTable, Option<f64>)> {
    if !matches!(reader.next(), Ok(Some(Token::BeginObject))) {
        return None;
    }
    let mut table = PostingTable::default();
    let mut highest_doc: Option<f64> = None;
    loop {
        let term = match reader.next() {
            Ok(Some(Token::Key(term))) => term,
            Ok(Some(Token::EndObject)) => break,
            _ => return None,
        };
        if !matches!(reader.next(), Ok(Some(Token::BeginArray))) {
            return None;
        }
        let first = table.posting_count();
        loop {
            match reader.next() {
                Ok(Some(Token::BeginObject)) => {}
                Ok(Some(Token::EndArray)) => break,
                _ => return None,
            }
            let (doc, tf) = read_posting(reader)?;
            highest_doc = Some(highest_doc.map_or(doc, |h| h.max(doc)));
            table.push_posting(Posting {
                doc: doc as usize,
                tf,
            });
        }
        table.finish_term(&term, first);
    }
    // A repeated term keeps its last list, as the tree path's conversion does.
    table.seal();
    Some((table, highest_doc))
}

/// One posting after its `{`: `doc_id` (an integer >= 0) and `tf` (an integer >= 1), each once
/// and nothing else, as `(doc_id, tf)` converted the way the tree path converts them.
fn read_posting(reader: &mut Reader<'_>) -> Option<(f64, f64)> {
    let mut doc_id = None;
    let mut tf = None;
    loop {
        // Matching the reader's result in place (not through `.ok()`) keeps the token where it
        // was written: converting it costs a copy per token in this, the hottest loop.
        let key = match reader.next() {
            Ok(Some(Token::Key(key))) => key,
            Ok(Some(Token::EndObject)) => break,
            _ => return None,
        };
        let Ok(Some(Token::Number(number))) = reader.next() else {
            return None;
        };
        let slot = match key.as_ref() {
            "doc_id" => &mut doc_id,
            "tf" => &mut tf,
            _ => return None,
        };
        if slot.replace(number).is_some() {
            return None;
        }
    }
    let doc = integral_number(&doc_id?).filter(|&d| d >= 0.0)?;
    let tf = tf?;
    integral_number(&tf).filter(|&t| t >= 1.0)?;
    Some((doc, tf.as_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json;

    /// What the tree path makes of `text`: the loaded file (as Debug text) or `None` if invalid.
    fn tree_path(text: &str, kind: IndexKind) -> Option<String> {
        let value = json::parse(text.as_bytes()).ok()?;
        super::super::tree::validate_and_convert(&value, kind)
            .ok()
            .map(|l| format!("{l:?}"))
    }

    fn stream_path(text: &str, kind: IndexKind) -> Option<String> {
        load(text.as_bytes(), kind).map(|l| format!("{l:?}"))
    }

    fn memory(documents: &str, postings: &str) -> String {
        format!(
            r#"{{"artifact_type": "memory-index", "memory_index_schema_version": "1.3",
               "project_name": "p", "framework": "", "built_at": "2026-10-07T12:34:56.5Z",
               "source_count": 2, "postings": {postings}, "documents": {documents},
               "avgdl": 2.5, "N": 2}}"#
        )
    }

    const DOCS: &str = r#"[{"doc_id": 0, "path": "a.md", "title": "A", "length": 2,
        "snippet": "s", "paragraphs": ["p", "q\n\"r\""], "source_mtime": 0},
        {"doc_id": 1, "path": "b\u00e9.md", "title": "B", "length": 3.0,
        "snippet": "t", "paragraphs": [], "source_mtime": 1.5, "vector_norm_sq": 2,
        "source_hash": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]"#;

    #[test]
    fn a_member_past_the_token_limit_is_left_to_the_tree_path() {
        // `[` + strings + `]`: at the limit the value is built, one more token declines it (the
        // tree path, which takes such a file, is bounded by MAX_TREE_INDEX_BYTES).
        let list = |n: usize| format!("[{}]", vec![r#""p""#; n].join(","));
        let at_limit = list(MAX_MEMBER_TOKENS - 2);
        assert!(read_bounded_value(&mut Reader::new(at_limit.as_bytes())).is_some());
        let over = list(MAX_MEMBER_TOKENS - 1);
        assert!(read_bounded_value(&mut Reader::new(over.as_bytes())).is_none());
        // A document's passages are not a tree: read at any length, as the tree path reads them,
        // only the first empty one kept; a non-string among them leaves the file to the tree path.
        let with_paragraphs = |items: &str| {
            memory(
                &DOCS.replace(
                    r#""paragraphs": []"#,
                    &format!(r#""paragraphs": [{items}]"#),
                ),
                r#"{"a": [{"doc_id": 1, "tf": 1}]}"#,
            )
        };
        let long =
            with_paragraphs(&list(MAX_MEMBER_TOKENS)[1..].replace(r#""p"]"#, r#""", "", "zz""#));
        let streamed = stream_path(&long, IndexKind::Memory).unwrap();
        assert_eq!(
            Some(&streamed),
            tree_path(&long, IndexKind::Memory).as_ref()
        );
        let Some(Loaded::Memory(corpus)) = load(long.as_bytes(), IndexKind::Memory) else {
            panic!("not streamed");
        };
        let passages: Vec<&str> = corpus.documents[1].passages().collect();
        assert_eq!(passages.len(), MAX_MEMBER_TOKENS + 1);
        assert_eq!(passages[MAX_MEMBER_TOKENS - 1..], ["", "zz"]);
        let mixed = with_paragraphs(r#""p", 1"#);
        assert_eq!(tree_path(&mixed, IndexKind::Memory), None);
        assert_eq!(stream_path(&mixed, IndexKind::Memory), None);
        // Nested objects and a repeated key inside a member: built as the tree path builds them,
        // or declined.
        let nested = DOCS.replace(
            r#""snippet": "t""#,
            r#""snippet": "t", "x": {"a": [1, {"b": null}]}"#,
        );
        assert_eq!(
            stream_path(&memory(&nested, "{}"), IndexKind::Memory),
            tree_path(&memory(&nested, "{}"), IndexKind::Memory)
        );
        let repeated =
            memory(DOCS, "{}").replace(r#""framework": """#, r#""framework": {"a": 1, "a": 2}"#);
        assert_eq!(stream_path(&repeated, IndexKind::Memory), None);
    }

    fn partition(postings: &str) -> String {
        code_partition(CODE_DOC, postings)
    }

    const CODE_DOC: &str = r#"{"doc_id": 0, "path": "m.py", "source_kind": "local-script",
        "symbol": null, "title": "m", "length": 4, "snippet": "def f",
        "passages": ["def f"], "source_mtime": 0}"#;

    fn code_partition(document: &str, postings: &str) -> String {
        format!(
            r#"{{"artifact_type": "code-index-partition", "code_index_schema_version": "1.0",
               "source_kind": "local-script", "project_name": "", "framework": "",
               "built_at": "2026-10-07T12:34:56Z", "source_count": 1,
               "documents": [{document}],
               "postings": {postings}, "avgdl": 4, "N": 1}}"#
        )
    }

    #[test]
    fn a_valid_file_loads_exactly_as_the_tree_path_loads_it() {
        let cases = [
            (
                memory(
                    DOCS,
                    r#"{"zeta": [{"doc_id": 1, "tf": 2}, {"tf": 1, "doc_id": 0}],
                        "alpha": [], "a\"q": [{"doc_id": 0.0, "tf": 3.0}],
                        "zeta": [{"doc_id": 0, "tf": 7}]}"#,
                ),
                IndexKind::Memory,
            ),
            (memory("[]", "{}"), IndexKind::Memory),
            // Escaped member keys: decoded, then matched like any other (the document's title
            // and a posting's members).
            (
                memory(
                    &DOCS.replace(r#""title": "A""#, r#""t\u0069tle": "A""#),
                    r#"{"x": [{"doc\u005fid": 0, "t\u0066": 1}]}"#,
                ),
                IndexKind::Memory,
            ),
            (
                partition(r#"{"def": [{"doc_id": 0, "tf": 1}], "f": [{"doc_id": 0, "tf": 2}]}"#),
                IndexKind::Code,
            ),
            // Every optional document member, a symbol that is a string, and none at all.
            (
                code_partition(
                    r#"{"doc_id": 0, "path": "m.rs", "source_kind": "api-doc",
                    "language": "rust", "symbol": "m::f", "signature": null,
                    "provenance": {"distribution": "d", "version": null, "editable": true},
                    "title": "m", "length": 4.0, "snippet": "fn f", "passages": ["fn f", ""],
                    "source_mtime": 3, "vector_norm_sq": 0.5,
                    "source_hash": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"}"#,
                    r#"{"f": [{"doc_id": 0, "tf": 1}]}"#,
                ),
                IndexKind::Code,
            ),
            (
                code_partition(
                    &CODE_DOC.replace(r#""symbol": null, "#, r#""provenance": null, "#),
                    "{}",
                ),
                IndexKind::Code,
            ),
        ];
        for (text, kind) in cases {
            let want = tree_path(&text, kind);
            assert!(want.is_some(), "{text}");
            assert_eq!(stream_path(&text, kind), want, "{text}");
        }
    }

    #[test]
    fn a_manifest_goes_through_the_tree_validator_and_converter() {
        let text = r#"{"artifact_type": "code-index-manifest", "code_index_schema_version": "1.0",
            "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56Z",
            "partitions": {"local": {"file": "local.json", "source_kind": "local-script",
            "N": 0}}}"#;
        let want = tree_path(text, IndexKind::Code);
        assert!(want.is_some());
        assert_eq!(stream_path(text, IndexKind::Code), want);
    }

    #[test]
    fn anything_unusual_or_invalid_is_left_to_the_tree_path() {
        let posting = |p: &str| memory(DOCS, &format!(r#"{{"x": [{p}]}}"#));
        let invalid = [
            // Invalid: the tree path words the error.
            posting(r#"{"doc_id": 2, "tf": 1}"#),
            posting(r#"{"doc_id": 0, "tf": 0}"#),
            posting(r#"{"doc_id": -1, "tf": 1}"#),
            posting(r#"{"doc_id": 0.5, "tf": 1}"#),
            posting(r#"{"doc_id": "0", "tf": 1}"#),
            posting(r#"{"doc_id": 0}"#),
            posting(r#"{"doc_id": 0, "tf": 1, "w": 1}"#),
            posting("[0, 1]"),
            memory(DOCS, "[]"),
            memory(DOCS, r#"{"x": {}}"#),
            memory(&DOCS.replace(r#""title": "A""#, r#""title": 1"#), "{}"),
            memory(DOCS, "{}").replace(r#""N": 2"#, r#""N": true"#),
            memory(DOCS, "{}") + " x",
            memory(DOCS, "{}").replace("}]", "}"),
            partition("{}").replace("code-index-partition", "code-index-manifest"),
            // Invalid documents, one rule each.
            memory(&DOCS.replace(r#""snippet": "s", "#, ""), "{}"),
            memory(
                &DOCS.replace(r#""length": 2"#, r#""length": 2, "symbol": null"#),
                "{}",
            ),
            memory(&DOCS.replace(r#""length": 2"#, r#""length": -2"#), "{}"),
            memory(&DOCS.replace(r#""length": 2"#, r#""length": 2.5"#), "{}"),
            memory(&DOCS.replace(r#""length": 2"#, r#""length": true"#), "{}"),
            memory(&DOCS.replace(r#""doc_id": 0"#, r#""doc_id": null"#), "{}"),
            memory(&DOCS.replace(r#"["p", "#, r#"[1, "#), "{}"),
            memory(&DOCS.replace(r#"[]"#, r#""p""#), "{}"),
            memory(
                &DOCS.replace(r#""source_mtime": 0"#, r#""source_mtime": -1"#),
                "{}",
            ),
            memory(
                &DOCS.replace(r#""source_mtime": 0"#, r#""source_mtime": "0""#),
                "{}",
            ),
            memory(
                &DOCS.replace(r#""vector_norm_sq": 2"#, r#""vector_norm_sq": false"#),
                "{}",
            ),
            memory(
                &DOCS.replace("0123456789abcdef0", "0123456789ABCDEF0"),
                "{}",
            ),
            memory(&DOCS.replace("{\"doc_id\": 0", "[], {\"doc_id\": 0"), "{}"),
            memory(r#"{"0": {}}"#, "{}"),
            memory(&DOCS.replace(r#""A""#, r#"["A"]"#), "{}"),
            "[]".to_owned(),
        ];
        for text in &invalid {
            assert_eq!(tree_path(text, IndexKind::Memory), None, "{text}");
            assert_eq!(stream_path(text, IndexKind::Memory), None, "{text}");
        }
        let code_document =
            |from: &str, to: &str| code_partition(&CODE_DOC.replace(from, to), "{}");
        let invalid_code = [
            code_document("local-script", "script"),
            code_document("passages", "paragraphs"),
            code_document(r#""symbol": null"#, r#""symbol": 1"#),
            code_document(r#""symbol": null"#, r#""provenance": {"editable": "no"}"#),
            code_document(r#""symbol": null"#, r#""provenance": {"url": "u"}"#),
            code_document(r#""symbol": null"#, r#""language": false"#),
        ];
        for text in &invalid_code {
            assert_eq!(tree_path(text, IndexKind::Code), None, "{text}");
            assert_eq!(stream_path(text, IndexKind::Code), None, "{text}");
        }
        let repeated = [
            // Valid, but a repeated key: the tree path decides which one counts.
            posting(r#"{"doc_id": 0, "doc_id": 1, "tf": 1}"#),
            memory(DOCS, "{}").replace(r#""N": 2"#, r#""N": 2, "N": 2"#),
            memory(
                &DOCS.replace(r#""title": "A""#, r#""title": "A", "title": "Z""#),
                "{}",
            ),
            // The members the stream reads into their tables, each declined before it is read
            // a second time.
            memory(DOCS, "{}").replace(r#""N": 2"#, r#""N": 2, "postings": {}"#),
            memory(DOCS, "{}").replace(r#""N": 2"#, &format!(r#""N": 2, "documents": {DOCS}"#)),
            memory(
                &DOCS.replace(
                    r#""paragraphs": []"#,
                    r#""paragraphs": [], "paragraphs": []"#,
                ),
                "{}",
            ),
        ];
        for text in repeated {
            assert!(tree_path(&text, IndexKind::Memory).is_some(), "{text}");
            assert_eq!(stream_path(&text, IndexKind::Memory), None, "{text}");
        }
        // A doc_id is checked against the documents even when the postings come first.
        let early = memory(DOCS, r#"{"x": [{"doc_id": 1, "tf": 1}]}"#);
        assert!(early.find("postings") < early.find("documents"));
        assert!(stream_path(&early, IndexKind::Memory).is_some());
        let one_doc = early.replace(
            &DOCS[DOCS.find(",\n        {").unwrap()..DOCS.len() - 1],
            "",
        );
        assert!(tree_path(&one_doc, IndexKind::Memory).is_none());
        assert_eq!(stream_path(&one_doc, IndexKind::Memory), None);
    }
}
