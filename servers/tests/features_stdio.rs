//! Resources, prompts and completion through the real binary over stdio (the conformance fixture
//! server), in each legacy revision and the modern one, with the operator's policy applied.

mod common;
use agentteams_mcp::json::{self, Value};
use common::Host;
use std::process::Command;

fn start(extra: &[&str]) -> Host {
    let mut command = Command::new(common::fixtures());
    command.args(["--serve-mcp", "conformance"]).args(extra);
    Host::spawn(command)
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// `method` with `params` (an object's members, without braces) in the host's era.
fn ask(host: &mut Host, modern: bool, method: &str, members: &str) -> Value {
    let mut members = members.to_owned();
    if modern {
        if !members.is_empty() {
            members.push(',');
        }
        members.push_str(MODERN_META);
    }
    host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{members}}}}}"#
    ))
}

fn text_of(reply: &Value, path: &[&str]) -> String {
    let mut v = reply;
    for key in path {
        v = match key.parse::<usize>() {
            Ok(i) => v.as_array().and_then(|a| a.get(i)),
            Err(_) => v.get(key),
        }
        .unwrap_or_else(|| panic!("no {key} in {}", json::to_string(reply)));
    }
    match v {
        Value::String(s) => s.to_string(),
        other => json::to_string(other),
    }
}

#[test]
fn the_fixture_serves_resources_prompts_and_completion_in_every_revision() {
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let mut host = start(&[]);
        let modern = version == "2026-07-28";
        if !modern {
            let init = host.initialize(version);
            assert!(init.get("capabilities").unwrap().get("resources").is_some());
        }
        let list = ask(&mut host, modern, "resources/list", "");
        assert_eq!(
            text_of(&list, &["result", "resources", "0", "uri"]),
            "test://static-text"
        );
        let binary = ask(
            &mut host,
            modern,
            "resources/read",
            r#""uri":"test://static-binary""#,
        );
        assert!(text_of(&binary, &["result", "contents", "0", "blob"]).starts_with("iVBORw0KGgo"));
        let templated = ask(
            &mut host,
            modern,
            "resources/read",
            r#""uri":"test://template/123/data""#,
        );
        assert!(
            text_of(&templated, &["result", "contents", "0", "text"]).contains("Data for ID: 123")
        );
        let traversal = ask(
            &mut host,
            modern,
            "resources/read",
            r#""uri":"test://template/%2E%2E/data""#,
        );
        assert_eq!(text_of(&traversal, &["error", "code"]), "-32602");
        let prompt = ask(
            &mut host,
            modern,
            "prompts/get",
            r#""name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}"#,
        );
        assert_eq!(
            text_of(&prompt, &["result", "messages", "0", "content", "text"]),
            "Prompt with arguments: arg1='a', arg2='b'"
        );
        let missing = ask(
            &mut host,
            modern,
            "prompts/get",
            r#""name":"test_prompt_with_arguments","arguments":{"arg1":"a"}"#,
        );
        assert!(
            text_of(&missing, &["error", "message"]).contains("missing required argument \"arg2\"")
        );
        let completion = ask(
            &mut host,
            modern,
            "completion/complete",
            r#""ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"}"#,
        );
        assert_eq!(
            text_of(&completion, &["result", "completion", "values"]),
            r#"["paris","park","party"]"#
        );
        let subscribe = ask(
            &mut host,
            modern,
            "resources/subscribe",
            r#""uri":"test://watched-resource""#,
        );
        if modern {
            assert_eq!(text_of(&subscribe, &["error", "code"]), "-32601");
        } else {
            assert_eq!(text_of(&subscribe, &["result"]), "{}");
        }
        assert!(host.close().success());
    }
}

#[test]
fn the_operators_policy_hides_resources_and_prompts_and_refuses_their_use() {
    let mut host = start(&[
        "--deny-tool",
        "static-*",
        "--deny-tool",
        "test_simple_prompt",
    ]);
    host.initialize("2025-11-25");
    let list = ask(&mut host, false, "resources/list", "");
    let uris = text_of(&list, &["result", "resources"]);
    assert!(!uris.contains("static"), "{uris}");
    assert!(uris.contains("test://watched-resource"));
    let read = ask(
        &mut host,
        false,
        "resources/read",
        r#""uri":"test://static-text""#,
    );
    assert_eq!(text_of(&read, &["error", "code"]), "-32001");
    assert!(text_of(&read, &["error", "message"])
        .starts_with("resource \"test://static-text\" is refused by policy"));
    let prompt = ask(
        &mut host,
        false,
        "prompts/get",
        r#""name":"test_simple_prompt""#,
    );
    assert_eq!(text_of(&prompt, &["error", "code"]), "-32001");
    let prompts = ask(&mut host, false, "prompts/list", "");
    assert!(!text_of(&prompts, &["result", "prompts"]).contains("test_simple_prompt"));
    assert!(host.close().success());
}
