//! Reading an index file of the common shape straight from the JSON token stream into the
//! ranker's form, so a cold query does not build, walk twice and free a tree of the postings
//! (most of a large file: millions of small objects).
//!
//! All or nothing: [`load`] answers only for a file it can prove valid, and then with exactly
//! what the tree path ([`super::load`]) would produce; anything else (a syntax error, a schema
//! violation, a repeated top-level key or posting key, an unusual posting shape) gives `None`
//! and the caller takes the tree path, which decides and words the error. So this module never
//! has to reproduce an error message or the order in which the validator would report problems.
//!
//! The postings are validated here (object of arrays of `{"doc_id", "tf"}` objects, each key
//! once, integers in range, every `doc_id` naming a document); everything else is small and
//! goes through the schema validator and the converter as a tree, with an empty postings object
//! standing in for the real one.

use super::load::{convert, dispose, validate, CodeFile, IndexKind, Loaded, Posting, PostingTable};
use super::schema::integral_number;
use agentteams_mcp::json::{Map, Reader, Token, Value};

/// The file's validated contents, or `None` when the tree path must decide (see the module docs).
pub(super) fn load(bytes: &[u8], kind: IndexKind) -> Option<Loaded> {
    let mut reader = Reader::new(bytes);
    if !matches!(reader.next().ok()?, Some(Token::BeginObject)) {
        return None;
    }
    let mut skeleton = Map::new();
    let mut postings = None;
    loop {
        let key = match reader.next().ok()?? {
            Token::Key(key) => key,
            Token::EndObject => break,
            _ => return None,
        };
        // A repeated key would make "which one counts" matter: leave that to the tree path.
        if skeleton.contains_key(&key) {
            return None;
        }
        if key == "postings" {
            postings = Some(read_postings(&mut reader)?);
            skeleton.insert(key.into_owned(), Value::Object(Map::new()));
        } else {
            let value = reader.read_value().ok()??;
            skeleton.insert(key.into_owned(), value);
        }
    }
    // The end of the document: only whitespace may follow.
    if reader.next().ok()?.is_some() {
        return None;
    }
    let skeleton = Value::Object(skeleton);
    let documents = skeleton
        .get("documents")
        .and_then(Value::as_array)
        .map_or(0, |d| d.len());
    // The skeleton is small: validated and converted in line, not on a second thread whose
    // start and join would cost more than they save on a busy machine.
    let loaded = validate(&skeleton, kind)
        .ok()
        .map(|_| convert(&skeleton, kind));
    dispose(skeleton);
    let mut loaded = loaded?;
    if let Some((table, highest_doc)) = postings {
        if highest_doc.is_some_and(|doc| doc >= documents as f64) {
            return None;
        }
        match &mut loaded {
            Loaded::Memory(corpus) | Loaded::Code(CodeFile::Partition(corpus)) => {
                corpus.postings = table
            }
            Loaded::Code(CodeFile::Manifest { .. }) => return None,
        }
    }
    Some(loaded)
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
        super::super::load::validate_and_convert(&value, kind)
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
        "snippet": "s", "paragraphs": ["p", "q"], "source_mtime": 0},
        {"doc_id": 1, "path": "b\u00e9.md", "title": "B", "length": 3.0,
        "snippet": "t", "paragraphs": [], "source_mtime": 1.5}]"#;

    fn partition(postings: &str) -> String {
        format!(
            r#"{{"artifact_type": "code-index-partition", "code_index_schema_version": "1.0",
               "source_kind": "local-script", "project_name": "", "framework": "",
               "built_at": "2026-10-07T12:34:56Z", "source_count": 1,
               "documents": [{{"doc_id": 0, "path": "m.py", "source_kind": "local-script",
                 "symbol": null, "title": "m", "length": 4, "snippet": "def f",
                 "passages": ["def f"], "source_mtime": 0}}],
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
            (
                partition(r#"{"def": [{"doc_id": 0, "tf": 1}], "f": [{"doc_id": 0, "tf": 2}]}"#),
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
        let cases = [
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
            "[]".to_owned(),
            // Valid, but a repeated key: the tree path decides which one counts.
            posting(r#"{"doc_id": 0, "doc_id": 1, "tf": 1}"#),
            memory(DOCS, "{}").replace(r#""N": 2"#, r#""N": 2, "N": 2"#),
        ];
        for text in cases {
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
