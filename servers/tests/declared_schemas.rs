//! Every input schema the servers declare is one the engine's validator checks in full: no keyword
//! it accepts without checking (`schema::UNCHECKED_KEYWORDS`), and the conformance fixture's
//! JSON Schema 2020-12 tool keeps `$schema`, `$defs` and `additionalProperties` verbatim and has
//! its `$ref` checked.

mod common;
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::schema;
use common::{result_text, Host, TempDir};
use std::process::Command;

fn listed_schemas(host: &mut Host) -> Vec<(String, Value)> {
    let reply = host.request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let tools = reply
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{}", json::to_string(&reply)));
    tools
        .iter()
        .map(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or_default();
            let schema = t.get("inputSchema").cloned().unwrap_or_default();
            (name.to_owned(), schema)
        })
        .collect()
}

#[test]
fn every_declared_schema_is_checked_in_full() {
    let dir = TempDir::new("declared-schemas");
    let git = Command::new("git")
        .args(["init", "-q"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(git, "git init");
    let mut hosts = vec![
        Host::start("gitread", dir.path(), &[]),
        Host::start("gitread", dir.path(), &["--compat", "reference"]),
        Host::start("recall", dir.path(), &[]),
    ];
    let mut fixture = Command::new(common::fixtures());
    fixture.args(["--serve-mcp", "conformance"]);
    hosts.push(Host::spawn(fixture));
    let mut seen = 0;
    for host in &mut hosts {
        for (name, schema) in listed_schemas(host) {
            let unchecked = schema::unchecked_keywords(&schema);
            assert!(unchecked.is_empty(), "{name} declares {unchecked:?}");
            seen += 1;
        }
    }
    assert!(seen > 20, "{seen} tools");
}

#[test]
fn the_2020_12_tool_keeps_its_keywords_and_checks_its_ref() {
    let mut command = Command::new(common::fixtures());
    command.args(["--serve-mcp", "conformance"]);
    let mut host = Host::spawn(command);
    host.initialize("2025-11-25");
    let (_, schema) = listed_schemas(&mut host)
        .into_iter()
        .find(|(name, _)| name == "json_schema_2020_12_tool")
        .expect("the tool is listed");
    assert_eq!(
        schema.get("$schema").and_then(Value::as_str),
        Some("https://json-schema.org/draft/2020-12/schema")
    );
    assert!(schema.get("$defs").and_then(|d| d.get("address")).is_some());
    assert_eq!(
        schema.get("additionalProperties"),
        Some(&Value::from(false))
    );
    let ok = host.call(
        "json_schema_2020_12_tool",
        r#"{"name":"a","address":{"city":"b"}}"#,
    );
    assert!(!result_text(&ok).1, "{}", json::to_string(&ok));
    // The $ref'd definition is checked: a city must be a string.
    let bad = host.call("json_schema_2020_12_tool", r#"{"address":{"city":5}}"#);
    let (text, is_error) = result_text(&bad);
    assert!(is_error, "{text}");
    assert!(text.contains("address.city must be a string"), "{text}");
    let extra = host.call("json_schema_2020_12_tool", r#"{"zip":"1"}"#);
    let (text, is_error) = result_text(&extra);
    assert!(
        is_error && text.contains("zip is not an accepted argument"),
        "{text}"
    );
}
