//! `agentteams-mcp client resources | read | prompts | prompt | complete` through the binary,
//! against the conformance fixture server over stdio and Streamable HTTP, in both eras: what is
//! printed for people and for machines, exit codes, and usage errors.

mod common;
use agentteams_mcp::json::{self, Value};
use common::{serve_http, stderr, stdout, TempDir};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// The 1×1 red PNG the fixture's image answers carry, in Base64.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// Where the client finds the fixture.
enum Server {
    /// `-- agentteams-mcp --serve-mcp conformance`.
    Stdio,
    /// `--url URL`.
    Http(String),
}

/// `agentteams-mcp client --project DIR --era ERA ARGS` against `server`.
fn client(dir: &Path, server: &Server, era: &str, args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command.args(["client", "--project", dir.to_str().unwrap(), "--era", era]);
    if let Server::Http(url) = server {
        command.args(["--url", url]);
    }
    command.args(args);
    if let Server::Stdio = server {
        command.arg("--").arg(common::fixtures());
        command.args(["--serve-mcp", "conformance"]);
    }
    command.output().expect("the binary runs")
}

/// The stdout of a command that must exit 0.
#[track_caller]
fn ok(o: &Output, what: &str) -> String {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(o));
    stdout(o)
}

#[track_caller]
fn assert_contains(text: &str, needle: &str, what: &str) {
    assert!(
        text.contains(needle),
        "{what}: expected {needle:?} in:\n{text}"
    );
}

/// The one JSON object a `--json` command printed.
#[track_caller]
fn machine(o: &Output, what: &str) -> Value {
    json::parse(ok(o, what).trim().as_bytes())
        .unwrap_or_else(|e| panic!("{what}: not one JSON object ({e}): {}", stdout(o)))
}

/// Every new verb, for people and for machines, against `server` in `era`.
fn exercise(dir: &Path, server: &Server, era: &str) {
    let run = |args: &[&str]| client(dir, server, era, args);
    let what = |args: &[&str]| format!("{era} {args:?}");

    let text = ok(&run(&["resources"]), &what(&["resources"]));
    assert_contains(
        &text,
        "resources:\n  test://static-text  static-text (text/plain)\n      A static text resource.\n  test://static-binary  static-binary (image/png)\n",
        era,
    );
    assert_contains(
        &text,
        "resource templates:\n  test://template/{id}/data  template-data (application/json)\n      Data for any id.\n",
        era,
    );
    let v = machine(&run(&["--json", "resources"]), era);
    let count = |key: &str| v.get(key).and_then(Value::as_array).map(|a| a.len());
    assert_eq!(
        (count("resources"), count("resourceTemplates")),
        (Some(3), Some(1))
    );

    let text = ok(&run(&["read", "test://static-text"]), era);
    assert_eq!(text, "This is the content of the static text resource.\n");
    let png = agentteams_mcp::base64::decode(RED_PIXEL_PNG).unwrap();
    let text = ok(&run(&["read", "test://static-binary"]), era);
    assert_eq!(text, format!("[binary image/png, {} bytes]\n", png.len()));
    let v = machine(&run(&["--json", "read", "test://static-binary"]), era);
    let blob = v.get("contents").and_then(|c| c.as_array()).unwrap()[0].get("blob");
    assert_eq!(
        blob.and_then(Value::as_str)
            .map(agentteams_mcp::base64::decode),
        Some(Some(png)),
        "{era}: machine output keeps the Base64"
    );
    let text = ok(&run(&["read", "test://template/42/data"]), era);
    assert_contains(&text, "\"data\":\"Data for ID: 42\"", era);
    let o = run(&["read", "test://no-such-resource"]);
    assert_eq!(o.status.code(), Some(1), "{era}: {}", stderr(&o));
    assert_contains(&stderr(&o), "resources/read with error -32602", era);
    let o = run(&["--json", "read", "test://no-such-resource"]);
    assert_eq!(o.status.code(), Some(1), "{era}");
    assert_contains(&stderr(&o), "\"code\":-32602", era);

    let text = ok(&run(&["prompts"]), era);
    assert_contains(
        &text,
        "test_simple_prompt\n    A prompt without arguments.\n",
        era,
    );
    assert_contains(
        &text,
        "test_prompt_with_arguments\n    A prompt with two arguments.\n    arguments: arg1*, arg2*\n",
        era,
    );
    let v = machine(&run(&["--json", "prompts"]), era);
    assert_eq!(
        v.get("prompts").and_then(Value::as_array).map(|a| a.len()),
        Some(4),
        "{era}"
    );

    // Values are text, split at the first `=`.
    let args = [
        "prompt",
        "test_prompt_with_arguments",
        "--arg",
        "arg1=a b",
        "--arg",
        "arg2==x",
    ];
    let text = ok(&run(&args), era);
    assert_eq!(
        text,
        "[user]\nPrompt with arguments: arg1='a b', arg2='=x'\n"
    );
    let v = machine(&run(&[&["--json"][..], &args].concat()), era);
    assert!(
        v.get("messages").is_some(),
        "{era}: {}",
        json::to_string(&v)
    );
    let text = ok(
        &run(&[
            "prompt",
            "test_prompt_with_embedded_resource",
            "--arg",
            "resourceUri=test://embedded",
        ]),
        era,
    );
    assert_eq!(
        text,
        "[user]\n[resource test://embedded]\nEmbedded resource content for testing.\n[user]\nPlease process the embedded resource above.\n"
    );
    let text = ok(&run(&["prompt", "test_prompt_with_image"]), era);
    assert_eq!(
        text,
        format!(
            "[user]\n[image image/png, {} bytes of base64]\n[user]\nPlease analyze the image above.\n",
            RED_PIXEL_PNG.len()
        )
    );
    let o = run(&["prompt", "no_such_prompt"]);
    assert_eq!(o.status.code(), Some(1), "{era}: {}", stderr(&o));
    assert_contains(&stderr(&o), "unknown prompt", era);

    let text = ok(
        &run(&[
            "complete",
            "prompt",
            "test_prompt_with_arguments",
            "arg1",
            "pa",
        ]),
        era,
    );
    assert_eq!(text, "paris\npark\nparty\n");
    // The other argument's value goes as context; the fixture completes the same.
    let text = ok(
        &run(&[
            "complete",
            "prompt",
            "test_prompt_with_arguments",
            "arg2",
            "pa",
            "--arg",
            "arg1=paris",
        ]),
        era,
    );
    assert_eq!(text, "paris\npark\nparty\n");
    let text = ok(
        &run(&["complete", "resource", "test://template/{id}/data", "id"]),
        era,
    );
    assert_eq!(
        text, "paris\npark\nparty\ntest\ntesting\n",
        "no prefix: all"
    );
    let o = run(&[
        "complete",
        "resource",
        "test://template/{id}/data",
        "id",
        "zz",
    ]);
    assert_eq!(ok(&o, era), "");
    assert_contains(&stderr(&o), "(no completions)", era);
    let v = machine(
        &run(&[
            "--json",
            "complete",
            "resource",
            "test://template/{id}/data",
            "id",
            "te",
        ]),
        era,
    );
    assert_eq!(
        json::to_string(&v),
        r#"{"completion":{"values":["test","testing"],"total":2,"hasMore":false}}"#
    );
}

#[test]
fn the_new_verbs_work_over_stdio_in_both_eras() {
    let dir = TempDir::new("client-verbs-stdio");
    for era in ["auto", "legacy", "modern"] {
        exercise(dir.path(), &Server::Stdio, era);
    }
}

#[test]
fn the_new_verbs_work_over_http_in_both_eras() {
    let dir = TempDir::new("client-verbs-http");
    let (_server, port) = serve_http(&[], None, Stdio::null());
    let server = Server::Http(format!("http://127.0.0.1:{port}/mcp"));
    for era in ["auto", "legacy", "modern"] {
        exercise(dir.path(), &server, era);
    }
}

#[test]
fn the_new_verbs_exit_2_on_usage_errors_and_4_when_unreachable() {
    let dir = TempDir::new("client-verbs-usage");
    let unreachable = Server::Http("http://127.0.0.1:9/mcp".into());
    for (args, message) in [
        (&["read"][..], "read needs the resource's URI"),
        (&["prompt"][..], "prompt needs the prompt's name"),
        (
            &["complete"][..],
            "complete needs prompt NAME or resource TEMPLATE",
        ),
        (
            &["complete", "tool", "t", "a"][..],
            "complete \"tool\": give complete prompt NAME",
        ),
        (
            &["complete", "prompt"][..],
            "complete needs the prompt's name",
        ),
        (
            &["complete", "resource"][..],
            "complete needs the resource template",
        ),
        (
            &["complete", "prompt", "p"][..],
            "complete needs the argument",
        ),
        (
            &["complete", "prompt", "p", "a", "x", "y"][..],
            "unexpected argument y",
        ),
        (
            &["read", "test://a", "test://b"][..],
            "unexpected argument test://b",
        ),
        (
            &["resources", "--arg", "a=1"][..],
            "--arg goes with call, prompt and complete, not resources",
        ),
        (&["prompts", "extra"][..], "unexpected argument extra"),
        (
            &["read", "test://a", "--arg", "a=1"][..],
            "--arg goes with call",
        ),
        (
            &["prompt", "p", "--json", "{}"][..],
            "--json ARGS goes with call, not prompt",
        ),
        (
            &["prompt", "p", "--arg", "novalue"][..],
            "--arg \"novalue\" must be KEY=VALUE",
        ),
        (
            &["complete", "prompt", "p", "a", "--arg", "novalue"][..],
            "must be KEY=VALUE",
        ),
        (
            &["frobnicate"][..],
            "give info, tools, call TOOL, resources, read URI, prompts, prompt NAME, complete, login or logout",
        ),
    ] {
        let o = client(dir.path(), &unreachable, "auto", args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_contains(&stderr(&o), message, &format!("{args:?}"));
        assert_contains(
            &stderr(&o),
            "see agentteams-mcp client --help",
            &format!("{args:?}"),
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    for args in [
        &["resources"][..],
        &["read", "test://a"],
        &["prompts"],
        &["prompt", "p"],
        &["complete", "prompt", "p", "a"],
    ] {
        let o = client(dir.path(), &unreachable, "auto", args);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", stderr(&o));
    }
    let help = Command::new(BIN)
        .args(["client", "--help"])
        .output()
        .unwrap();
    let help = ok(&help, "--help");
    for verb in [
        "resources",
        "read URI",
        "prompts",
        "prompt NAME",
        "complete prompt NAME ARG",
        "complete resource TEMPLATE VAR",
    ] {
        assert_contains(&help, verb, "--help");
    }
}
