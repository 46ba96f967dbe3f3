//! The library client's resources, prompts and completion methods against the conformance fixture
//! (the real binary), over stdio in both eras and over Streamable HTTP.

mod common;
use agentteams_mcp::client::{Answers, Client, ClientError, EraChoice, Options};
use agentteams_mcp::json::{self, Value};
use common::serve_http;
use std::process::Stdio;

fn fixture() -> Vec<String> {
    vec![
        common::fixtures().to_str().unwrap().to_owned(),
        "--serve-mcp".to_owned(),
        "conformance".to_owned(),
    ]
}

fn field(item: &Value, key: &str) -> String {
    item.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {key} in {}", json::to_string(item)))
        .to_owned()
}

/// Lists, reads, gets and completes through `client`, as any host would.
fn exercise(client: &mut Client) {
    let uris: Vec<String> = client
        .list_resources()
        .unwrap()
        .iter()
        .map(|r| field(r, "uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    let templates = client.list_resource_templates().unwrap();
    assert_eq!(
        field(&templates[0], "uriTemplate"),
        "test://template/{id}/data"
    );
    let contents = client.read_resource("test://static-text").unwrap();
    assert_eq!(
        field(&contents[0], "text"),
        "This is the content of the static text resource."
    );
    let contents = client.read_resource("test://template/42/data").unwrap();
    assert!(field(&contents[0], "text").contains("Data for ID: 42"));
    match client.read_resource("test://template/../data") {
        Err(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32602, "{}", error.message),
        other => panic!("{other:?}"),
    }
    let prompts: Vec<String> = client
        .list_prompts()
        .unwrap()
        .iter()
        .map(|p| field(p, "name"))
        .collect();
    assert_eq!(prompts.len(), 4);
    let prompt = client
        .get_prompt(
            "test_prompt_with_arguments",
            &[("arg1".into(), "x".into()), ("arg2".into(), "y".into())],
        )
        .unwrap();
    let message = prompt.get("messages").and_then(Value::as_array).unwrap();
    assert_eq!(
        field(message.first().unwrap().get("content").unwrap(), "text"),
        "Prompt with arguments: arg1='x', arg2='y'"
    );
    let reference = json::obj([
        ("type", Value::from("ref/prompt")),
        ("name", Value::from("test_prompt_with_arguments")),
    ]);
    assert_eq!(
        client.complete(reference, "arg1", "pa").unwrap(),
        ["paris", "park", "party"]
    );
}

#[test]
fn the_client_reads_resources_gets_prompts_and_completes_over_stdio_in_both_eras() {
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let options = Options {
            era,
            ..Options::default()
        };
        let mut client = Client::spawn(&fixture(), options).unwrap();
        exercise(&mut client);
        client.close().unwrap();
    }
}

#[test]
fn the_client_reads_resources_gets_prompts_and_completes_over_http() {
    let (_server, port) = serve_http(&[], None, Stdio::null());
    let url = format!("http://127.0.0.1:{port}/mcp");
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let options = Options {
            era,
            ..Options::default()
        };
        let mut client = Client::connect_http(&url, options).unwrap();
        exercise(&mut client);
        client.close().unwrap();
    }
}

/// The text of the fixture's no-argument `tool`, called with `options` by a client over stdio
/// and by one over Streamable HTTP; both must be `expected`.
fn assert_tool_text_on_both_transports(options: Options, tool: &str, expected: &str) {
    let mut client = Client::spawn(&fixture(), options.clone()).unwrap();
    let text = client.call_tool(tool, Default::default()).unwrap().text();
    assert_eq!(text, expected, "stdio");
    client.close().unwrap();
    let (_server, port) = serve_http(&[], None, Stdio::null());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = Client::connect_http(&url, options).unwrap();
    let text = client.call_tool(tool, Default::default()).unwrap().text();
    assert_eq!(text, expected, "HTTP");
    client.close().unwrap();
}

#[test]
fn the_client_answers_elicitation_from_defaults_and_given_values_over_stdio_and_http() {
    let answers = Answers {
        elicitation: Some(vec![("age".into(), "41".into())]),
        roots: Vec::new(),
    };
    let expected = r#"Elicitation completed: action=accept, content={"name":"John Doe","age":41,"score":95.5,"status":"active","verified":true}"#;
    // Legacy: a server request mid-call; 2026-07-28: an input_required result and a retry.
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let options = Options {
            era,
            answers: answers.clone(),
            ..Options::default()
        };
        assert_tool_text_on_both_transports(options, "test_elicitation_sep1034_defaults", expected);
    }
}

#[test]
fn the_client_answers_roots_list_with_its_roots_over_stdio_and_http() {
    let expected = r#"Roots: [{"uri":"file:///srv/one"},{"uri":"file:///srv/two%20b"}]"#;
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let options = Options {
            era,
            answers: Answers {
                elicitation: None,
                roots: vec!["file:///srv/one".into(), "file:///srv/two%20b".into()],
            },
            ..Options::default()
        };
        assert_tool_text_on_both_transports(options, "test_roots", expected);
    }
}

#[test]
fn in_the_modern_era_input_rounds_are_answered_and_undeclared_capabilities_never_asked() {
    // test_input_rounds asks a name (elicitation), then a greeting (sampling), then the roots:
    // the first round is answered and the call retried; sampling, which this client does not
    // declare, is never asked, and the tool says so: its error proves it got past the name.
    let options = Options {
        era: EraChoice::Modern,
        answers: Answers {
            elicitation: Some(vec![("name".into(), "Ada".into())]),
            roots: vec!["file:///srv".into()],
        },
        ..Options::default()
    };
    let mut client = Client::spawn(&fixture(), options).unwrap();
    match client.call_tool("test_input_rounds", Default::default()) {
        Err(ClientError::Tool { text, .. }) => assert_eq!(
            text,
            "the client did not declare the sampling capability, so sampling/createMessage cannot be sent"
        ),
        other => panic!("{other:?}"),
    }
    client.close().unwrap();
}

#[test]
fn a_client_without_answers_declares_nothing_and_the_server_says_so() {
    let options = Options {
        era: EraChoice::Legacy,
        ..Options::default()
    };
    let mut client = Client::spawn(&fixture(), options).unwrap();
    for (tool, capability) in [
        ("test_elicitation_sep1034_defaults", "elicitation"),
        ("test_sampling", "sampling"),
        ("test_roots", "roots"),
    ] {
        let mut arguments = agentteams_mcp::json::Map::new();
        arguments.insert("prompt", Value::from("x"));
        match client.call_tool(tool, arguments) {
            Err(ClientError::Tool { text: message, .. }) => assert!(
                message.contains(&format!("did not declare the {capability} capability")),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
    }
    client.close().unwrap();
}
