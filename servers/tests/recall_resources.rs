//! recall's memory documents as resources, their completion and the `ask_team` prompt through
//! the real binary: listing, reading, completing, hostile ids, a missing index, and that the
//! reference mode offers none of it.

mod recall_support;

use agentteams_mcp::json::{self, Value};
use recall_support::{memory_index, Project, Server};

/// Three documents: one with paragraphs, one with none (its snippet stands in), one hostile.
fn project() -> Project {
    let project = Project::new("recall-resources");
    let docs = r#"[
        {"doc_id": 0, "path": "notes/widgets.md", "title": "Widgets", "length": 3,
         "snippet": "stored 0", "paragraphs": ["widgets are blue", "widget widget talk"],
         "source_mtime": 0},
        {"doc_id": 1, "path": "notes/empty.md", "title": "Empty", "length": 1,
         "snippet": "only the snippet", "paragraphs": [], "source_mtime": 0},
        {"doc_id": 2, "path": "notes/evil.md", "title": "Evil\u001b[31m", "length": 2,
         "snippet": "s", "paragraphs": ["red\u001b[31m text\u202e here"], "source_mtime": 0}
    ]"#;
    let postings = r#"{"widget": [{"doc_id": 0, "tf": 2}], "widgets": [{"doc_id": 0, "tf": 1}],
        "red": [{"doc_id": 2, "tf": 1}]}"#;
    project.write(
        "references/memory-index.json",
        &memory_index(docs, postings, 3, 2.0),
    );
    project
}

fn read(server: &mut Server, uri: &str) -> Result<String, (i64, String)> {
    let params = json::to_string(&json::obj([("uri", Value::from(uri))]));
    let reply = server.request("resources/read", &params);
    if let Some(error) = reply.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return Err((code, message.to_owned()));
    }
    let item = reply
        .get("result")
        .and_then(|r| r.get("contents"))
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(item.get("uri").and_then(Value::as_str), Some(uri));
    Ok(item.get("text").and_then(Value::as_str).unwrap().to_owned())
}

fn refused(server: &mut Server, uri: &str) -> String {
    match read(server, uri) {
        Err((code, message)) => {
            assert_eq!(code, -32602, "{message}");
            message
        }
        Ok(text) => panic!("served {uri}: {text}"),
    }
}

fn complete(server: &mut Server, value: &str) -> Vec<String> {
    let reply = server.request(
        "completion/complete",
        &format!(
            r#"{{"ref": {{"type": "ref/resource", "uri": "recall://memory/{{id}}"}}, "argument": {{"name": "id", "value": "{value}"}}}}"#
        ),
    );
    let values = reply
        .get("result")
        .and_then(|r| r.get("completion"))
        .and_then(|c| c.get("values"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{reply}"));
    values
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn lists_the_template_and_no_resources() {
    let project = project();
    let mut server = Server::start(&project.root);
    let templates = server.request("resources/templates/list", "{}");
    let text = json::to_string(&templates);
    assert!(
        text.contains(r#""uriTemplate":"recall://memory/{id}""#),
        "{text}"
    );
    assert!(text.contains(r#""name":"query_index""#), "{text}");
    let listed = server.request("resources/list", "{}");
    let resources = listed
        .get("result")
        .and_then(|r| r.get("resources"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(resources.is_empty(), "{listed}");
}

#[test]
fn reads_a_document_by_its_doc_id() {
    let project = project();
    let mut server = Server::start(&project.root);
    let text = read(&mut server, "recall://memory/0").unwrap();
    assert!(
        text.starts_with("Widgets\npath: notes/widgets.md\n"),
        "{text}"
    );
    assert!(text.contains("widgets are blue") && text.contains("widget widget talk"));
    // No paragraphs: the stored snippet.
    let text = read(&mut server, "recall://memory/1").unwrap();
    assert!(text.contains("only the snippet"), "{text}");
    // Sanitised: no escape or bidi control reaches the client.
    let text = read(&mut server, "recall://memory/2").unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.contains("red"), "{text}");
    // The id is the doc_id query_index returns.
    let (is_error, hits) = server.call("query_index", r#"{"query": "widget"}"#);
    assert!(!is_error && hits.contains(r#""doc_id": 0"#), "{hits}");
}

#[test]
fn hostile_ids_are_refused_by_the_index_not_the_file_system() {
    let project = project();
    project.write("x", "a file outside the index");
    let mut server = Server::start(&project.root);
    for uri in [
        "recall://memory/3",
        "recall://memory/01",
        "recall://memory/-1",
        "recall://memory/x",
        "recall://memory/%2E%2E%2Fx",
        "recall://memory/99999999999999999999999999",
        "recall://memory/0%0A",
        "recall://memory/0%1B",
    ] {
        let message = refused(&mut server, uri);
        assert!(
            !message.contains('\u{1b}') && !message.contains('\n'),
            "{message:?}"
        );
    }
    let message = refused(&mut server, "recall://memory/3");
    assert!(message.contains("no memory document"), "{message}");
    // Engine rules first: a `..` segment or a `/` does not match the template at all.
    refused(&mut server, "recall://memory/../x");
    refused(&mut server, "recall://memory/0/x");
    let long = format!("recall://memory/{}", "1".repeat(5000));
    refused(&mut server, &long);
    let long = format!("recall://memory/{}", "1".repeat(1000));
    let message = refused(&mut server, &long);
    assert!(message.len() < 400, "{message}");
    // The server still answers.
    assert!(read(&mut server, "recall://memory/0").is_ok());
}

#[test]
fn completes_ids_from_the_index() {
    let project = project();
    let mut server = Server::start(&project.root);
    // A value is still an id of the template, labelled so a person can choose between them.
    assert_eq!(
        complete(&mut server, ""),
        ["0-widgets", "1-empty", "2-evil-31m"]
    );
    assert_eq!(complete(&mut server, "2"), ["2-evil-31m"]);
    assert!(complete(&mut server, "4").is_empty());
    assert!(complete(&mut server, "../").is_empty());
    assert!(complete(&mut server, "01").is_empty());
    // Typing the title finds its documents; typing on after the id narrows to it.
    assert_eq!(complete(&mut server, "Wid"), ["0-widgets"]);
    // Digits that name no id may be a title's.
    assert_eq!(complete(&mut server, "31"), ["2-evil-31m"]);
    assert_eq!(complete(&mut server, "evil 3"), ["2-evil-31m"]);
    assert_eq!(complete(&mut server, "0-wid"), ["0-widgets"]);
    assert!(complete(&mut server, "0-emp").is_empty());
    assert!(complete(&mut server, "zebra").is_empty());
    // What completion offers reads the document; a label that is not the document's (the
    // index was rebuilt and ids moved) is refused, naming what the id is now.
    let text = read(&mut server, "recall://memory/0-widgets").unwrap();
    assert!(
        text.starts_with("Widgets\npath: notes/widgets.md\n"),
        "{text}"
    );
    let message = refused(&mut server, "recall://memory/0-empty");
    assert!(message.contains("0-widgets"), "{message}");
    refused(&mut server, "recall://memory/01-widgets");
    refused(&mut server, "recall://memory/-widgets");
}

#[test]
fn a_missing_index_is_a_clear_error() {
    let project = Project::new("recall-resources-none");
    let mut server = Server::start(&project.root);
    let message = refused(&mut server, "recall://memory/0");
    assert!(message.contains("memory-index.json"), "{message}");
    assert!(complete(&mut server, "").is_empty());
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "widgets"}}"#,
    );
    let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    assert!(message.contains("memory-index.json"), "{message}");
}

#[test]
fn the_prompt_embeds_the_top_hits() {
    let project = project();
    let mut server = Server::start(&project.root);
    let listed = json::to_string(&server.request("prompts/list", "{}"));
    assert!(listed.contains(r#""name":"ask_team""#), "{listed}");
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "what about widgets?"}}"#,
    );
    let text = json::to_string(&reply);
    assert!(text.contains("what about widgets?"), "{text}");
    assert!(text.contains(r#""uri":"recall://memory/0""#), "{text}");
    assert!(text.contains("widgets are blue"), "{text}");
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "   "}}"#,
    );
    let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32602)); // A question's controls are escaped where the prompt quotes it.
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "red\u001b[2J\u202e?"}}"#,
    );
    let text = json::to_string(&reply);
    assert!(reply.get("result").is_some(), "{text}");
    assert!(
        !text.contains(r"\u001b") && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(text.contains(r#""uri":"recall://memory/2""#), "{text}");
}

#[test]
fn reference_mode_advertises_none() {
    let project = project();
    let mut server = Server::start_with(&project.root, &["--compat", "reference"]);
    for method in ["resources/templates/list", "prompts/list"] {
        let reply = server.request(method, "{}");
        let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
        assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32601));
    }
    refused_or_unknown(&mut server);
    let capabilities = |extra: &[&str]| {
        let server = Server::start_with(&project.root, extra);
        let reply = &server.initialized;
        let capabilities = reply
            .get("result")
            .and_then(|r| r.get("capabilities"))
            .unwrap_or_else(|| panic!("{reply}"));
        ["resources", "prompts", "completions"].map(|c| capabilities.get(c).is_some())
    };
    assert_eq!(capabilities(&["--compat", "reference"]), [false; 3]);
    assert_eq!(capabilities(&[]), [true; 3]);
}

/// Under the reference a read is an unknown method, not a read.
fn refused_or_unknown(server: &mut Server) {
    let reply = server.request("resources/read", r#"{"uri": "recall://memory/0"}"#);
    let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32601));
}

#[test]
fn a_policy_on_query_index_covers_the_template() {
    let project = project();
    let mut server = Server::start_with(&project.root, &["--deny-tool", "query_index"]);
    let listed = json::to_string(&server.request("resources/templates/list", "{}"));
    assert!(!listed.contains("recall://memory/"), "{listed}");
    let reply = server.request("resources/read", r#"{"uri": "recall://memory/0"}"#);
    let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32001));
}

#[test]
fn a_long_document_is_cut_with_a_marker() {
    let project = Project::new("recall-resources-long");
    let paragraph = "word ".repeat(10_000);
    let docs = format!(
        r#"[{{"doc_id": 0, "path": "long.md", "title": "Long", "length": 1, "snippet": "s",
            "paragraphs": ["{paragraph}", "{paragraph}"], "source_mtime": 0}}]"#
    );
    project.write(
        "references/memory-index.json",
        &memory_index(&docs, r#"{"word": [{"doc_id": 0, "tf": 1}]}"#, 1, 1.0),
    );
    let mut server = Server::start(&project.root);
    let text = read(&mut server, "recall://memory/0").unwrap();
    assert!(text.chars().count() < 20_100, "{}", text.len());
    assert!(
        text.ends_with(" characters]"),
        "{}",
        &text[text.len() - 80..]
    );
    assert!(text.contains("[cut: the first 20000 of "), "cut marker");
}

#[test]
fn a_policy_on_query_index_covers_the_prompt_that_ranks_like_it() {
    let project = project();
    let mut server = Server::start_with(&project.root, &["--deny-tool", "query_index"]);
    let listed = json::to_string(&server.request("prompts/list", "{}"));
    assert!(!listed.contains("ask_team"), "{listed}");
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "what about widgets?"}}"#,
    );
    let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32001));
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    assert!(message.contains("query_index"), "{message}");
    assert!(!json::to_string(&reply).contains("widgets are blue"));
    // Denying the other tool leaves the prompt alone.
    let mut server = Server::start_with(&project.root, &["--deny-tool", "query_code"]);
    let listed = json::to_string(&server.request("prompts/list", "{}"));
    assert!(listed.contains(r#""name":"ask_team""#), "{listed}");
}
