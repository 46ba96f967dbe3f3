//! What an operator relies on, through the real binary: the health endpoint (no token, reveals
//! nothing), the access log (one JSON line per request, a session digest, the tool) and the
//! graceful stop when stdin closes (calls in flight finish, the audit run completes, idle
//! kept-alive connections do not hold it).

mod common;

use agentteams_mcp::http::access_log::{MAX_LINE_BYTES, MAX_LOGGED_FIELD};
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::sha256;
use common::{http_post, http_request, serve_http, session_id_of};
use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "operator-test-token-0123456789";
const VERSION: &str = "2025-11-25";

fn initialize(port: u16, auth: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{VERSION}"}}}}"#
    );
    let (status, reply) = http_post(port, auth, &body);
    assert_eq!(status, 200, "{reply}");
    session_id_of(&reply)
}

fn call_headers(session: &str, auth: &str) -> String {
    format!("{auth}Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: {VERSION}\r\n")
}

const SIMPLE_CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}"#;

#[test]
fn the_health_endpoint_needs_no_token_and_reveals_nothing() {
    let (_server, port) = serve_http(&[], Some(TOKEN), Stdio::null());
    let (status, reply) = http_request(port, "GET", "/healthz", "", "");
    assert_eq!(status, 200, "{reply}");
    assert!(reply.ends_with("\r\n\r\nok\n"), "{reply}");
    assert!(!reply.contains("conformance") && !reply.contains("agentteams"));
    // A balancer's check names the backend's address, not an allowed host.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "HEAD /healthz HTTP/1.1\r\nHost: 10.0.0.7:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut head = String::new();
    s.read_to_string(&mut head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(http_request(port, "POST", "/healthz", "", "").0, 405);
    // The endpoint itself still needs the token.
    assert_eq!(http_post(port, "", SIMPLE_CALL).0, 401);
}

#[test]
fn the_access_log_writes_one_json_line_per_request() {
    let (mut server, port) = serve_http(&["--access-log"], Some(TOKEN), Stdio::null());
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let session = initialize(port, &auth);
    let (status, reply) = http_post(port, &call_headers(&session, &auth), SIMPLE_CALL);
    assert_eq!(status, 200, "{reply}");
    assert_eq!(http_post(port, "", SIMPLE_CALL).0, 401);
    assert_eq!(http_request(port, "GET", "/healthz", "", "").0, 200);
    let lines: Vec<Value> = (0..4)
        .map(|_| {
            let mut line = String::new();
            server.1.read_line(&mut line).unwrap();
            assert!(!line.contains(&session) && !line.contains(TOKEN), "{line}");
            json::parse(line.trim_end().as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
        })
        .collect();
    let field = |i: usize, name: &str| json::to_string(lines[i].get(name).unwrap());
    let digest = format!(
        "\"sha256:{}\"",
        &sha256::hex_digest(session.as_bytes())[..16]
    );
    assert_eq!(field(0, "session"), "null", "initialize sends no id");
    assert_eq!(field(1, "method"), "\"POST\"");
    assert_eq!(field(1, "path"), "\"/mcp\"");
    assert_eq!(field(1, "status"), "200");
    assert_eq!(field(1, "session"), digest);
    assert_eq!(field(1, "tool"), "\"test_simple_text\"");
    assert!(lines[1].get("duration_ms").and_then(Value::as_f64).unwrap() >= 0.0);
    assert!(field(1, "time").ends_with("Z\""));
    assert_eq!(field(2, "status"), "401");
    assert_eq!(field(3, "path"), "\"/healthz\"");
}

#[test]
fn the_access_log_escapes_and_cuts_a_hostile_tool_name() {
    let (mut server, port) = serve_http(&["--access-log"], Some(TOKEN), Stdio::null());
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let session = initialize(port, &auth);
    let mut line = String::new();
    server.1.read_line(&mut line).unwrap();
    // A C1 CSI, bidi controls, a line separator and a zero-width space, then 200 KB of name.
    let hostile = "git_log\u{9b}2J\u{202e}\u{2066}\u{2028}\u{200b}";
    let name = format!("{hostile}{}", "x".repeat(200 * 1024));
    let call =
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{name}"}}}}"#);
    // Posted aside: a connection's line is written before it closes, so the log is read while
    // the call is answered.
    let headers = call_headers(&session, &auth);
    let post = std::thread::spawn(move || http_post(port, &headers, &call).0);
    line.clear();
    server.1.read_line(&mut line).unwrap();
    assert_eq!(post.join().unwrap(), 200);
    assert!(line.len() <= MAX_LINE_BYTES + 1, "{} bytes", line.len());
    for raw in ['\u{9b}', '\u{202e}', '\u{2066}', '\u{2028}', '\u{200b}'] {
        assert!(!line.contains(raw), "U+{:04X} raw in {line}", raw as u32);
    }
    let entry = json::parse(line.trim_end().as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
    let tool = entry.get("tool").and_then(Value::as_str).unwrap();
    let kept = format!(
        "git_log\\x9b2J\\u{{202e}}\\u{{2066}}\\u{{2028}}\\u{{200b}}{}",
        "x".repeat(MAX_LOGGED_FIELD - 45)
    );
    assert_eq!(
        tool,
        format!("{kept}\u{2026}[cut from {} bytes]", name.len())
    );
}

#[test]
fn a_log_destination_that_stops_reading_does_not_hold_requests() {
    // stderr is a pipe this test never reads after the address line: it fills after a few
    // hundred lines, and requests must still be answered and their connections closed.
    let (_server, port) = serve_http(&["--access-log"], Some(TOKEN), Stdio::null());
    for i in 0..1500 {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        if let Err(e) = s.read_to_string(&mut reply) {
            panic!("request {i}: not answered and closed: {e} ({reply:?})");
        }
        assert!(reply.starts_with("HTTP/1.1 200"), "request {i}: {reply}");
    }
}

#[test]
fn closing_stdin_finishes_calls_in_flight_and_does_not_wait_for_idle_connections() {
    let log = std::env::temp_dir().join(format!(
        "agentteams-http-graceful-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let (mut server, port) = serve_http(
        &["--audit-log", log.to_str().unwrap(), "--until-stdin-closes"],
        None,
        Stdio::piped(),
    );
    let session = initialize(port, "");
    // An idle kept-alive connection, as a balancer's pool holds.
    let mut idle = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).unwrap();
    // A call that takes two 50 ms steps, in flight when stdin closes.
    let headers = call_headers(&session, "");
    let slow = std::thread::spawn(move || {
        http_post(
            port,
            &headers,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_progress"}}"#,
        )
    });
    std::thread::sleep(Duration::from_millis(30));
    let stopped_at = Instant::now();
    drop(server.0.stdin.take());
    let (status, reply) = slow.join().unwrap();
    assert_eq!(status, 200, "{reply}");
    assert!(
        reply.contains("Tool with progress executed successfully"),
        "{reply}"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    let exit = loop {
        if let Some(exit) = server.0.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0));
    // Well before the 20 s drain: the idle connection was closed, not waited for.
    assert!(
        stopped_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopped_at.elapsed()
    );
    let verify = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["audit", "verify", log.to_str().unwrap(), "--ci"])
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{verify:?}");
    let records = std::fs::read_to_string(&log).unwrap();
    assert!(records.contains("\"run_completed\""), "{records}");
    assert!(records.contains("test_tool_with_progress"), "{records}");
    std::fs::remove_file(&log).unwrap();
}

/// The status of one `GET /healthz`, or 0 when the connection was refused or reset: the probe of
/// a place coming free, which may still meet the refusal.
fn probe_health(port: u16) -> u16 {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let _ = s.write_all(request.as_bytes());
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    reply.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[test]
fn max_connections_lowers_the_cap_and_refuses_what_it_cannot_serve() {
    let (_server, port) = serve_http(&["--max-connections", "1"], None, Stdio::null());
    // One connection held open takes the only place; the next one gets 503 and Retry-After.
    let mut held = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(held, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut first = [0u8; 12];
    held.read_exact(&mut first).unwrap();
    // The refusal is written at accept, before any request is read: read it without writing
    // (a request written meanwhile can meet the closed socket's reset).
    let mut refused = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut reply = String::new();
    refused.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.contains("Retry-After: 1"), "{reply}");
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe_health(port) != 200 {
        assert!(Instant::now() < deadline, "the place was not given back");
        std::thread::sleep(Duration::from_millis(20));
    }
    for bad in ["0", "1025", "many"] {
        let out = Command::new(common::fixtures())
            .args(["--serve-mcp", "conformance", "--http", "--port", "0"])
            .args(["--max-connections", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--max-connections needs a number 1-1024"),
            "{err}"
        );
    }
}
