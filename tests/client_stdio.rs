//! The client over stdio: against the library's example server (a real engine in a child process)
//! in both eras, and against shell scripts that misbehave on purpose.

use agentteams_mcp::client::{Client, ClientError, EraChoice, Event, Options, ServerStderr};
use agentteams_mcp::json::{Map, Value};
use agentteams_mcp::server::Revision;
use std::path::PathBuf;
use std::time::Duration;

/// The example server `cargo test` builds next to the test binaries.
fn example_server() -> Vec<String> {
    let exe = std::env::current_exe().expect("the test binary has a path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("tests run from target/<profile>/deps");
    let path: PathBuf = dir
        .join("examples")
        .join(format!("stdio_server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test` (which builds examples)",
        path.display()
    );
    vec![path.to_string_lossy().into_owned()]
}

fn options(era: EraChoice) -> Options {
    Options {
        era,
        ..Options::default()
    }
}

fn args(pairs: &[(&str, Value)]) -> Map {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(*k, v.clone());
    }
    m
}

#[test]
fn lists_and_calls_tools_in_both_eras() {
    for (era, revision) in [
        (EraChoice::Auto, Revision::V2026_07_28),
        (EraChoice::Modern, Revision::V2026_07_28),
        (EraChoice::Legacy, Revision::V2025_11_25),
    ] {
        let mut client = Client::spawn(&example_server(), options(era)).unwrap();
        assert_eq!(client.server().revision, revision, "{era:?}");
        assert_eq!(client.server().name, "example-stdio-server");
        let names: Vec<String> = client
            .list_tools()
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(
            names,
            ["echo", "fail", "progress", "chatty", "slow", "send_note"]
        );
        let result = client
            .call_tool("echo", args(&[("word", Value::from("hi"))]))
            .unwrap();
        assert!(
            result.text().contains("\"word\": \"hi\""),
            "{}",
            result.text()
        );

        match client.call_tool("fail", args(&[("message", Value::from("boom"))])) {
            Err(ClientError::Tool { tool, text, .. }) => {
                assert_eq!((tool.as_str(), text.as_str()), ("fail", "boom"))
            }
            other => panic!("{era:?}: an isError result must be an error: {other:?}"),
        }
        match client.call_tool("nope", Map::new()) {
            Err(ClientError::Rpc { error, .. }) => {
                assert_eq!(error.code, -32602);
                assert_eq!(error.message, "unknown tool 'nope'");
            }
            other => panic!("{era:?}: {other:?}"),
        }
        match client.call_tool("slow", args(&[("ms", Value::from("x"))])) {
            Err(ClientError::Tool { text, .. }) => assert!(text.contains("ms"), "{text}"),
            other => panic!("{era:?}: {other:?}"),
        }
        client.close().unwrap();
    }
}

#[test]
fn progress_and_log_notifications_reach_the_callback() {
    for era in [EraChoice::Auto, EraChoice::Legacy] {
        let opts = Options {
            log_level: Some("info".into()),
            ..options(era)
        };
        let mut client = Client::spawn(&example_server(), opts).unwrap();
        let mut events = Vec::new();
        client
            .call_tool_with("progress", Map::new(), &mut |e| events.push(e.clone()))
            .unwrap();
        let progress: Vec<f64> = events
            .iter()
            .filter_map(|e| match e {
                Event::Progress {
                    progress,
                    total: Some(100.0),
                    ..
                } => Some(*progress),
                _ => None,
            })
            .collect();
        assert_eq!(progress, [0.0, 50.0, 100.0], "{era:?}");
        events.clear();
        client
            .call_tool_with("chatty", Map::new(), &mut |e| events.push(e.clone()))
            .unwrap();
        let logs: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::Log { level, data, .. } if level == "info" => {
                    data.as_str().map(str::to_owned)
                }
                _ => None,
            })
            .collect();
        assert_eq!(logs, ["started", "working", "finished"], "{era:?}");
        client.close().unwrap();
    }
}

#[test]
fn a_timed_out_call_leaves_the_connection_usable() {
    for era in [EraChoice::Auto, EraChoice::Legacy] {
        let mut client = Client::spawn(&example_server(), options(era)).unwrap();
        client.set_call_timeout(Duration::from_millis(100));
        match client.call_tool("slow", args(&[("ms", Value::from(10_000u64))])) {
            Err(ClientError::Timeout { method, .. }) => assert_eq!(method, "tools/call"),
            other => panic!("{era:?}: {other:?}"),
        }
        client.set_call_timeout(Duration::from_secs(30));
        // A late reply to the timed-out call, if any, is not mistaken for this one's.
        let result = client
            .call_tool("echo", args(&[("n", Value::from(7u64))]))
            .unwrap();
        assert!(result.text().contains("\"n\": 7"), "{}", result.text());
        client.close().unwrap();
    }
}

/// A reply line `sh` can print: the initialize result of a legacy server.
const INIT_REPLY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}"#;

/// A legacy "server" written in shell: answers initialize, reads the initialized notification
/// and the next request, then runs `then`.
fn scripted(then: &str) -> Vec<String> {
    let script = format!("read a; printf '%s\\n' '{INIT_REPLY}'; read b; read c; {then}");
    vec!["sh".into(), "-c".into(), script]
}

fn legacy_with_timeout(ms: u64) -> Options {
    Options {
        call_timeout: Duration::from_millis(ms),
        ..options(EraChoice::Legacy)
    }
}

fn list_error(argv: &[String], opts: Options) -> ClientError {
    let mut client = Client::spawn(argv, opts).expect("the scripted handshake succeeds");
    assert_eq!(client.server().revision, Revision::V2025_03_26);
    let err = client.list_tools().expect_err("the script misbehaves");
    let _ = client.close();
    err
}

#[test]
fn bad_json_is_a_clear_error() {
    let err = list_error(
        &scripted("echo 'this is not json'; sleep 10"),
        legacy_with_timeout(30_000),
    );
    match err {
        ClientError::Protocol(m) => {
            assert!(
                m.contains("not JSON") && m.contains("this is not json"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_oversized_reply_is_refused_without_being_held() {
    let opts = Options {
        max_response_bytes: 64 * 1024,
        ..legacy_with_timeout(30_000)
    };
    let err = list_error(
        &scripted("head -c 2000000 /dev/zero | tr '\\0' x; echo; sleep 10"),
        opts,
    );
    match err {
        ClientError::Protocol(m) => assert!(m.contains("longer than 65536 bytes"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_silent_server_times_out() {
    let err = list_error(&scripted("sleep 30"), legacy_with_timeout(200));
    assert!(
        matches!(&err, ClientError::Timeout { method, .. } if method == "tools/list"),
        "{err:?}"
    );
    // Silent from the start: the handshake itself times out, and the child is still shut down.
    let err = Client::spawn(
        &["sh".into(), "-c".into(), "sleep 30".into()],
        legacy_with_timeout(200),
    )
    .err()
    .expect("no handshake");
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
}

#[test]
fn a_server_that_dies_mid_call_is_reported_with_its_status() {
    let err = list_error(&scripted("exit 3"), legacy_with_timeout(30_000));
    match err {
        ClientError::Closed(m) => {
            assert!(m.contains("exited before answering tools/list"), "{m}");
            assert!(m.contains('3'), "the exit status is named: {m}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_command_is_a_connect_error() {
    let err = Client::spawn(
        &["/nonexistent/agentteams-mcp-test-server".into()],
        Options::default(),
    )
    .err()
    .expect("cannot start");
    match err {
        ClientError::Connect(m) => assert!(m.starts_with("cannot start `/nonexistent/"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_legacy_server_in_an_older_revision_is_accepted_and_auto_falls_back() {
    // The probe gets -32601 from this script, so auto mode falls back to initialize.
    let script = format!(
        "read a; printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{{\"code\":-32601,\"message\":\"no\"}}}}'; read b; printf '%s\\n' '{}'; read c; read d; printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"tools\":[{{\"name\":\"t\",\"inputSchema\":{{\"type\":\"object\"}}}}]}}}}'; sleep 10",
        INIT_REPLY.replace("\"id\":1", "\"id\":2")
    );
    let mut client = Client::spawn(
        &["sh".into(), "-c".into(), script],
        options(EraChoice::Auto),
    )
    .unwrap();
    assert_eq!(client.server().revision, Revision::V2025_03_26);
    let tools = client.list_tools().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "t");
    client.close().unwrap();
}

#[test]
fn a_program_that_is_not_an_mcp_server_is_named_for_what_it_printed() {
    // The program prints a non-JSON line and exits. Depending on timing the probe reads the line
    // (and initialize then finds the program gone) or the probe's write already finds it gone;
    // either way the error says it exited and quotes what it printed.
    let argv: Vec<String> = ["sh", "-c", "echo usage: frobnicate FILE"]
        .map(String::from)
        .to_vec();
    match Client::spawn(&argv, options(EraChoice::Auto)) {
        Err(ClientError::Closed(m)) => {
            assert!(m.contains("exited"), "{m}");
            assert!(m.contains("usage: frobnicate FILE"), "{m}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn a_servers_stderr_goes_sanitised_to_the_sink_given_or_nowhere() {
    use std::sync::{Arc, Mutex};
    // Writes to stderr around the handshake, the last line without a newline, then exits when
    // its stdin closes.
    let argv = scripted("printf 'after \\033[2K\\rfake\\n' >&2; printf 'last' >&2; cat >/dev/null");
    let argv = [
        argv[..2].to_vec(),
        vec![format!(
            "printf 'before \\342\\200\\256\\n' >&2; {}",
            argv[2]
        )],
    ]
    .concat();
    let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
    let opts = Options {
        server_stderr: ServerStderr::RelayTo(buffer.clone()),
        ..options(EraChoice::Legacy)
    };
    Client::spawn(&argv, opts).unwrap().close().unwrap();
    // Closing waits for the relay: everything the server wrote is in the sink.
    assert_eq!(
        String::from_utf8_lossy(&buffer.lock().unwrap()),
        "before \\u{202e}\nafter \\x1b[2K\\x0dfake\nlast\n"
    );
    let opts = Options {
        server_stderr: ServerStderr::Discard,
        ..options(EraChoice::Legacy)
    };
    Client::spawn(&argv, opts).unwrap().close().unwrap();
}
