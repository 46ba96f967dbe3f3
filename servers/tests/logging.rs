//! Log messages (`notifications/message`) from the real binary, over stdio and HTTP: what the
//! engine and the servers log at the level a client sets, and that no secret, argument value or
//! file content is ever in them.

mod common;
mod gitread_support;

use agentteams_mcp::json::{self, Value};
use common::Host;
use gitread_support::{git, write, Fixture};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Sends a request and returns the log messages that came before its reply, and the reply.
fn exchange(host: &mut Host, message: &str) -> (Vec<Value>, Value) {
    host.send(message);
    let mut logs = Vec::new();
    loop {
        let line = host.recv();
        if line.get("id").is_some() {
            return (logs, line);
        }
        assert_eq!(
            line.get("method").and_then(Value::as_str),
            Some("notifications/message"),
            "{line}"
        );
        logs.push(line);
    }
}

fn call_message(tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

fn set_level(level: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{{"level":"{level}"}}}}"#
    )
}

fn at<'v>(log: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(log.get("params")?, |v, key| v.get(key))
}

fn text<'v>(log: &'v Value, path: &str) -> &'v str {
    at(log, path).and_then(Value::as_str).unwrap_or_default()
}

/// `(logger, event)` of each message, to compare in order.
fn events(logs: &[Value]) -> Vec<(String, String)> {
    logs.iter()
        .map(|l| {
            let event = match text(l, "data.event") {
                "cache" => format!("cache {}", text(l, "data.cache")),
                e => e.to_owned(),
            };
            (text(l, "logger").to_owned(), event)
        })
        .collect()
}

/// A repository whose committed file holds the fixture's secret token.
fn repository_with_a_secret(tag: &str) -> Fixture {
    let f = Fixture::new(tag);
    write(&f.root.join("secret.txt"), &format!("{}\n", f.token));
    git(&f.root, &["add", "secret.txt"]);
    git(&f.root, &["commit", "-q", "-m", "secret"]);
    f
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// What a served `git_show` logs at debug, in order.
fn show_events() -> Vec<(String, String)> {
    owned(&[
        ("engine", "call_started"),
        ("gitread", "cache containment"),
        ("gitread", "cache config_preflight"),
        ("gitread", "git"),
        ("engine", "call_finished"),
    ])
}

#[test]
fn gitread_over_stdio_logs_what_ran_at_the_level_the_client_sets() {
    let f = repository_with_a_secret("log-stdio");
    let mut host = Host::start("gitread", &f.root, &[]);
    host.initialize("2025-11-25");
    let show = call_message("git_show", r#"{"rev":"HEAD","path":"secret.txt"}"#);

    // No level set: no messages.
    let (logs, reply) = exchange(&mut host, &show);
    assert!(logs.is_empty(), "{logs:?}");
    assert!(json::to_string(&reply).contains(&f.token));

    let (logs, _) = exchange(&mut host, &set_level("debug"));
    assert!(logs.is_empty());
    let (logs, _) = exchange(&mut host, &show);
    assert_eq!(events(&logs), show_events(), "{logs:?}");
    assert!(logs[..4].iter().all(|l| text(l, "level") == "debug"));
    assert!(at(&logs[1], "data.hit").and_then(Value::as_bool).is_some());
    assert_eq!(text(&logs[3], "data.subcommand"), "show");
    assert_eq!(text(&logs[3], "data.outcome"), "ok");
    assert!(at(&logs[3], "data.output_bytes").and_then(Value::as_u64) > Some(0));
    assert_eq!(text(&logs[4], "level"), "info");
    assert_eq!(text(&logs[4], "data.tool"), "git_show");
    assert_eq!(text(&logs[4], "data.outcome"), "ok");
    assert!(at(&logs[4], "data.ms").and_then(Value::as_u64).is_some());
    // The file's content went to the result, never to the log.
    let all = json::to_string(&Value::from(logs));
    assert!(!all.contains(&f.token), "{all}");

    // A refusal is a warning with its reason; the argument's value is not repeated.
    let outside = format!(r#"{{"rev":"HEAD","path":"../{}"}}"#, f.token);
    let (logs, reply) = exchange(&mut host, &call_message("git_show", &outside));
    assert!(json::to_string(&reply).contains("isError"));
    let last = logs.last().expect("the call's summary");
    assert_eq!(text(last, "level"), "warning");
    assert_eq!(text(last, "data.outcome"), "error");
    assert!(!text(last, "data.reason").is_empty(), "{last}");
    // A revision git rejects: git's stderr quotes it, the log does not.
    let bad = format!(r#"{{"rev":"{}"}}"#, f.token);
    let (more, _) = exchange(&mut host, &call_message("git_log", &bad));
    let all = json::to_string(&Value::from([logs, more].concat()));
    assert!(!all.contains(&f.token), "{all}");

    // At error, a successful call sends nothing.
    let (logs, _) = exchange(&mut host, &set_level("error"));
    assert!(logs.is_empty());
    let (logs, _) = exchange(&mut host, &show);
    assert!(logs.is_empty(), "{logs:?}");
    let (logs, _) = exchange(&mut host, &call_message("git_show", &outside));
    assert!(logs.is_empty(), "{logs:?}");
    assert!(host.close().success());
}

#[test]
fn recall_logs_its_index_lookups_without_the_query() {
    let project = common::TempDir::new("log-recall");
    let mut host = Host::start("recall", project.path(), &[]);
    host.initialize("2025-06-18");
    exchange(&mut host, &set_level("debug"));
    let query = "hunter2-query-secret";
    let (logs, _) = exchange(
        &mut host,
        &call_message("query_index", &format!(r#"{{"query":"{query}"}}"#)),
    );
    assert_eq!(
        events(&logs),
        owned(&[
            ("engine", "call_started"),
            ("recall", "index"),
            ("engine", "call_finished"),
        ]),
        "{logs:?}"
    );
    assert_eq!(text(&logs[1], "data.tool"), "query_index");
    assert_eq!(
        at(&logs[1], "data.files_read").and_then(Value::as_u64),
        Some(0)
    );
    // No index: the tool's error is the call's reason, at warning.
    assert_eq!(text(&logs[2], "level"), "warning");
    assert!(text(&logs[2], "data.reason").starts_with("no references/memory-index.json"));
    assert!(!json::to_string(&Value::from(logs)).contains(query));
    assert!(host.close().success());
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// POSTs `body` on a connection of its own; returns the whole response.
fn post(port: u16, session: Option<&str>, body: &str) -> String {
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    common::http_post(port, &session, body).1
}

/// The JSON of each SSE `data:` line of a response (chunked framing lines are skipped).
fn sse_messages(response: &str) -> Vec<Value> {
    response
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| json::parse(d.as_bytes()).ok())
        .collect()
}

#[test]
fn gitread_over_http_streams_its_logs_on_the_calls_sse_response() {
    let f = repository_with_a_secret("log-http");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["--serve-mcp", "gitread", "--http", "--port", "0", "--root"])
        .arg(&f.root)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Server(child);
    let port: u16 = common::port_in_address_line(&line);

    let init = post(
        port,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
    );
    let session = init
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {init}"));
    let sid = Some(session.as_str());
    post(
        port,
        sid,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let show = call_message("git_show", r#"{"rev":"HEAD","path":"secret.txt"}"#);

    // Before setLevel: a plain JSON reply.
    let quiet = post(port, sid, &show);
    assert!(quiet
        .to_ascii_lowercase()
        .contains("content-type: application/json"));

    assert!(post(port, sid, &set_level("debug")).starts_with("HTTP/1.1 200"));
    let streamed = post(port, sid, &show);
    assert!(
        streamed
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{streamed}"
    );
    let messages = sse_messages(&streamed);
    let (reply, logs) = messages.split_last().expect("the reply comes last");
    assert!(json::to_string(reply).contains(&f.token));
    assert_eq!(events(logs), show_events(), "{logs:?}");
    assert_eq!(text(&logs[4], "data.outcome"), "ok");
    assert!(!json::to_string(&Value::from(logs.to_vec())).contains(&f.token));

    // At error, a successful call is a JSON reply again.
    post(port, sid, &set_level("error"));
    let quiet = post(port, sid, &show);
    assert!(quiet
        .to_ascii_lowercase()
        .contains("content-type: application/json"));
}
