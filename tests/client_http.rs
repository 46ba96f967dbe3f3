//! The client over Streamable HTTP, against in-test servers on 127.0.0.1: one that serves the
//! library's engine (sessions, JSON and SSE replies, DELETE), and scripted ones that page, resume
//! streams, demand tokens or misbehave on purpose (bad JSON, oversized, slow, dropped mid-stream).

use agentteams_mcp::client::{Client, ClientError, EraChoice, Event, Options};
use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::server::{
    CallContext, CancelToken, Engine, Notify, Revision, Session, Tool, ToolError, ToolOutput,
    ToolSet,
};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the fixture received it.
#[derive(Clone, Debug)]
struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn message(&self) -> Value {
        json::parse(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of a POST, or the HTTP method otherwise.
    fn rpc_method(&self) -> String {
        match self.message().get("method").and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None => self.method.clone(),
        }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next()?.split(' ').next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        method,
        headers,
        body,
    })
}

/// A server on an ephemeral port; `handler` answers each request by writing to the stream.
struct Fixture {
    url: String,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Fixture {
    fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    fn methods(&self) -> Vec<String> {
        self.requests().iter().map(Request::rpc_method).collect()
    }
}

fn fixture(mut handler: impl FnMut(&Request, &mut TcpStream) + Send + 'static) -> Fixture {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&log);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Some(request) = read_request(&mut stream) else {
                continue;
            };
            seen.lock().unwrap().push(request.clone());
            handler(&request, &mut stream);
        }
    });
    Fixture { url, log }
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(body);
}

fn respond_json(stream: &mut TcpStream, headers: &[(&str, &str)], message: &Value) {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    respond(stream, "200 OK", &all, json::to_string(message).as_bytes());
}

/// The head of an SSE reply delimited by connection close.
fn sse_head(stream: &mut TcpStream) {
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    );
}

fn sse_event(stream: &mut TcpStream, message: &Value) {
    let _ = write!(
        stream,
        "event: message\ndata: {}\n\n",
        json::to_string(message)
    );
    let _ = stream.flush();
}

fn result(id: &Value, result: Value) -> Value {
    obj([
        ("jsonrpc", Value::from("2.0")),
        ("id", id.clone()),
        ("result", result),
    ])
}

fn id_of(request: &Request) -> Value {
    request.message().get("id").cloned().unwrap_or(Value::Null)
}

/// Answers `initialize` (with `version` and session `s1`) and notifications; true if it did.
fn legacy_handshake(request: &Request, stream: &mut TcpStream, version: &str) -> bool {
    match request.rpc_method().as_str() {
        "initialize" => {
            let init = obj([
                ("protocolVersion", Value::from(version)),
                ("capabilities", obj([("tools", Value::Object(Map::new()))])),
                (
                    "serverInfo",
                    obj([
                        ("name", Value::from("scripted")),
                        ("version", Value::from("1")),
                    ]),
                ),
            ]);
            respond_json(
                stream,
                &[("Mcp-Session-Id", "s1")],
                &result(&id_of(request), init),
            );
            true
        }
        m if m.starts_with("notifications/") => {
            respond(stream, "202 Accepted", &[], b"");
            true
        }
        "DELETE" => {
            respond(stream, "200 OK", &[], b"");
            true
        }
        _ => false,
    }
}

fn legacy(timeout_ms: u64) -> Options {
    Options {
        era: EraChoice::Legacy,
        call_timeout: Duration::from_millis(timeout_ms),
        ..Options::default()
    }
}

// ---- an engine-backed server -------------------------------------------------------------

struct Demo;

impl ToolSet for Demo {
    fn server_name(&self) -> &str {
        "http-demo"
    }
    fn tools(&self) -> Vec<Tool> {
        let open = json::parse(br#"{"type":"object"}"#).unwrap();
        vec![
            Tool::read_only("echo", "Returns its arguments.", open.clone()),
            Tool::read_only("progress", "Reports progress.", open.clone()),
            Tool::read_only("fail", "Fails.", open),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "progress" => {
                for p in [0.0, 50.0, 100.0] {
                    ctx.progress(p, Some(100.0), None);
                }
                Ok(ToolOutput::Value(Value::from("done")))
            }
            "fail" => Err(ToolError::new("it broke")),
            _ => Ok(ToolOutput::Value(Value::Object(args.clone()))),
        }
    }
}

#[derive(Default)]
struct Collect(Mutex<Vec<Value>>);

impl Notify for Collect {
    fn notify(&self, notification: Value) {
        self.0.lock().unwrap().push(notification);
    }
}

/// Serves the engine the way a Streamable HTTP server does: sessions for legacy clients,
/// stateless modern requests, SSE when a call emits notifications. `expire` makes that many
/// session requests answer 404 (the session ended) before serving normally.
fn engine_server(mut expire: usize) -> Fixture {
    let engine = Arc::new(Engine::new(Arc::new(Demo)));
    let mut sessions: HashMap<String, Session> = HashMap::new();
    let mut next = 0;
    fixture(move |request, stream| {
        let sid = request.header("mcp-session-id").map(str::to_owned);
        match request.method.as_str() {
            "GET" => {
                return respond(
                    stream,
                    "405 Method Not Allowed",
                    &[("Allow", "POST, DELETE")],
                    b"",
                )
            }
            "DELETE" => {
                let found = sid.and_then(|s| sessions.remove(&s)).is_some();
                return respond(
                    stream,
                    if found { "200 OK" } else { "404 Not Found" },
                    &[],
                    b"",
                );
            }
            _ => {}
        }
        let message = request.message();
        let modern = message
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .is_some();
        let fresh;
        let mut new_sid = None;
        let session = if request.rpc_method() == "initialize" {
            next += 1;
            let id = format!("s{next}");
            sessions.insert(id.clone(), Session::new(Arc::clone(&engine)));
            new_sid = Some(id.clone());
            &sessions[&id]
        } else if modern {
            fresh = Session::new(Arc::clone(&engine));
            &fresh
        } else {
            match sid.as_ref().and_then(|s| sessions.get(s)) {
                Some(_) if expire > 0 && message.get("id").is_some() => {
                    expire -= 1;
                    sessions.remove(sid.as_ref().unwrap());
                    return respond(stream, "404 Not Found", &[], b"");
                }
                Some(s) => s,
                None => return respond(stream, "404 Not Found", &[], b""),
            }
        };
        let notes = Collect::default();
        let reply = session.handle_message_with(message, &notes, CancelToken::new());
        let notes = notes.0.into_inner().unwrap();
        match reply {
            None => respond(stream, "202 Accepted", &[], b""),
            Some(reply) if notes.is_empty() => {
                let headers: Vec<(&str, &str)> = new_sid
                    .iter()
                    .map(|s| ("Mcp-Session-Id", s.as_str()))
                    .collect();
                respond_json(stream, &headers, &reply)
            }
            Some(reply) => {
                sse_head(stream);
                for n in &notes {
                    sse_event(stream, n);
                }
                sse_event(stream, &reply);
            }
        }
    })
}

/// Calls the demo server's `progress` tool, checks its answer, and returns the progress values
/// the client was told of, in order.
fn call_progress(client: &mut Client) -> Vec<f64> {
    let mut progress = Vec::new();
    let result = client
        .call_tool_with("progress", Map::new(), &mut |e| {
            if let Event::Progress { progress: p, .. } = e {
                progress.push(*p)
            }
        })
        .unwrap();
    assert_eq!(result.text(), "\"done\"");
    progress
}

#[test]
fn legacy_sessions_carry_the_id_and_close_deletes_it() {
    let server = engine_server(0);
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    assert_eq!(client.server().revision, Revision::V2025_11_25);
    assert_eq!(client.server().name, "http-demo");
    let progress = call_progress(&mut client);
    assert_eq!(progress, [0.0, 50.0, 100.0], "progress arrives over SSE");
    match client.call_tool("fail", Map::new()) {
        Err(ClientError::Tool { text, .. }) => assert_eq!(text, "it broke"),
        other => panic!("{other:?}"),
    }
    client.close().unwrap();

    let requests = server.requests();
    assert_eq!(
        server.methods(),
        [
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/call",
            "tools/call",
            "DELETE"
        ]
    );
    assert_eq!(requests[0].header("mcp-session-id"), None);
    assert_eq!(requests[0].header("mcp-protocol-version"), None);
    for r in &requests[1..] {
        assert_eq!(r.header("mcp-session-id"), Some("s1"), "{}", r.rpc_method());
        assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    // After the handshake the client asks for the server's stream (this server offers none).
    assert_eq!(requests[2].header("accept"), Some("text/event-stream"));
    assert_eq!(requests[2].header("last-event-id"), None);
    let accept = requests[3].header("accept").unwrap();
    assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    assert_eq!(requests[3].header("content-type"), Some("application/json"));
}

#[test]
fn auto_mode_speaks_modern_statelessly() {
    let server = engine_server(0);
    let mut client = Client::connect_http(&server.url, Options::default()).unwrap();
    assert_eq!(client.server().revision, Revision::V2026_07_28);
    let tools = client.list_tools().unwrap();
    assert_eq!(tools.len(), 3);
    let mut args = Map::new();
    args.insert("x", Value::from(1u64));
    let result = client.call_tool("echo", args).unwrap();
    assert!(result.text().contains("\"x\": 1"), "{}", result.text());
    client.close().unwrap();
    assert_eq!(
        server.methods(),
        ["server/discover", "tools/list", "tools/call"]
    );
    for r in server.requests() {
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(r.header("mcp-method"), Some(r.rpc_method().as_str()));
        assert_eq!(r.header("mcp-session-id"), None);
    }
    assert_eq!(server.requests()[2].header("mcp-name"), Some("echo"));
}

#[test]
fn an_expired_session_is_reinitialized_once() {
    let server = engine_server(1);
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    assert_eq!(client.list_tools().unwrap().len(), 3);
    client.close().unwrap();
    assert_eq!(
        server.methods(),
        [
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/list",
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/list",
            "DELETE"
        ]
    );
    assert_eq!(server.requests()[7].header("mcp-session-id"), Some("s2"));

    let server = engine_server(usize::MAX);
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    assert!(matches!(
        client.list_tools(),
        Err(ClientError::SessionExpired)
    ));
    let inits = server
        .methods()
        .iter()
        .filter(|m| *m == "initialize")
        .count();
    assert_eq!(inits, 2, "one re-initialization, no more");
}

#[test]
fn pagination_follows_cursors_and_stops_on_a_loop() {
    let pages = |looping: bool| {
        fixture(move |request, stream| {
            if legacy_handshake(request, stream, "2025-06-18") {
                return;
            }
            let cursor = request
                .message()
                .get("params")
                .and_then(|p| p.get("cursor"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let (name, next) = match (cursor.as_deref(), looping) {
                (_, true) => ("again", Some("x")),
                (None, _) => ("a", Some("2")),
                (Some("2"), _) => ("b", Some("")),
                _ => ("c", None),
            };
            let mut page = Map::new();
            page.insert(
                "tools",
                Value::Array(vec![obj([("name", Value::from(name))])].into()),
            );
            if let Some(n) = next {
                page.insert("nextCursor", Value::from(n));
            }
            respond_json(stream, &[], &result(&id_of(request), Value::Object(page)));
        })
    };
    let server = pages(false);
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    let names: Vec<String> = client
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        names,
        ["a", "b", "c"],
        "an empty-string cursor is a cursor, not the end"
    );
    let server = pages(true);
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    let err = client.list_tools().unwrap_err();
    assert!(err.to_string().contains("cursor \"x\" twice"), "{err}");
}

#[test]
fn a_broken_stream_is_resumed_with_last_event_id() {
    let server = fixture(|request, stream| {
        if legacy_handshake(request, stream, "2025-03-26") {
            return;
        }
        match request.method.as_str() {
            "POST" => {
                sse_head(stream);
                let _ = stream.write_all(b"id: event-1\nretry: 50\ndata: \n\n");
            }
            _ => {
                sse_head(stream);
                let text = obj([
                    ("type", Value::from("text")),
                    ("text", Value::from("resumed")),
                ]);
                let res = obj([("content", Value::Array(vec![text].into()))]);
                sse_event(stream, &result(&Value::from(2u64), res));
            }
        }
    });
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    assert_eq!(
        client.server().revision,
        Revision::V2025_03_26,
        "a downgrade is accepted"
    );
    let result = client.call_tool("t", Map::new()).unwrap();
    assert_eq!(result.text(), "resumed");
    let gets: Vec<Request> = (server.requests().into_iter())
        .filter(|r| r.method == "GET")
        .collect();
    // The server's own stream, opened after the handshake, then the resumption.
    assert_eq!(gets[0].header("last-event-id"), None);
    let get = gets
        .iter()
        .find(|r| r.header("last-event-id").is_some())
        .unwrap();
    assert_eq!(get.header("last-event-id"), Some("event-1"));
    assert_eq!(get.header("mcp-session-id"), Some("s1"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
}

#[test]
fn a_stream_that_ends_without_an_event_id_is_an_error() {
    let server = fixture(|request, stream| {
        if legacy_handshake(request, stream, "2025-11-25") {
            return;
        }
        sse_head(stream);
        let note = obj([
            ("jsonrpc", Value::from("2.0")),
            ("method", Value::from("notifications/progress")),
            (
                "params",
                obj([
                    ("progressToken", Value::from(2u64)),
                    ("progress", Value::from(1u64)),
                ]),
            ),
        ]);
        sse_event(stream, &note);
    });
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    let mut events = 0;
    match client.call_tool_with("t", Map::new(), &mut |_| events += 1) {
        Err(ClientError::Closed(m)) => assert!(m.contains("no event id to resume from"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(events, 1, "the notification before the drop was delivered");
}

#[test]
fn authorization_is_required_and_the_bearer_token_is_sent() {
    let server = fixture(|request, stream| {
        if request.header("authorization") != Some("Bearer s3cret") {
            return respond(
                stream,
                "401 Unauthorized",
                &[("WWW-Authenticate", "Bearer realm=\"mcp\"")],
                b"",
            );
        }
        legacy_handshake(request, stream, "2025-11-25");
    });
    match Client::connect_http(&server.url, legacy(30_000)) {
        Err(ClientError::AuthRequired {
            status,
            challenge,
            token_sent,
        }) => {
            assert_eq!(status, 401);
            assert_eq!(challenge.as_deref(), Some("Bearer realm=\"mcp\""));
            assert!(!token_sent);
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let opts = Options {
        bearer_token: Some("s3cret".into()),
        ..legacy(30_000)
    };
    let client = Client::connect_http(&server.url, opts).unwrap();
    client.close().unwrap();
    assert_eq!(server.requests().last().unwrap().method, "DELETE");
}

/// A legacy server that answers the handshake, then runs `misbehave` for the next request.
fn misbehaving(misbehave: fn(&Request, &mut TcpStream)) -> Fixture {
    fixture(move |request, stream| {
        if !legacy_handshake(request, stream, "2025-11-25") {
            misbehave(request, stream);
        }
    })
}

#[derive(Debug)]
enum ClientErrorKind {
    Protocol,
    Closed,
}

/// The message of `err`, which must be of `kind`.
#[track_caller]
fn message_of(kind: ClientErrorKind, err: ClientError) -> String {
    match (kind, err) {
        (ClientErrorKind::Protocol, ClientError::Protocol(m)) => m,
        (ClientErrorKind::Closed, ClientError::Closed(m)) => m,
        (kind, other) => panic!("expected {kind:?}, got {other:?}"),
    }
}

fn list_error(server: &Fixture, opts: Options) -> ClientError {
    let mut client = Client::connect_http(&server.url, opts).expect("handshake");
    client.list_tools().expect_err("the server misbehaves")
}

#[test]
fn bad_json_is_a_clear_error() {
    let server = misbehaving(|_, s| {
        respond(
            s,
            "200 OK",
            &[("Content-Type", "application/json")],
            b"{\"jsonrpc\": nope",
        )
    });
    let m = message_of(
        ClientErrorKind::Protocol,
        list_error(&server, legacy(30_000)),
    );
    assert!(m.contains("invalid JSON") && m.contains("nope"), "{m}");
    let server = misbehaving(|_, s| {
        sse_head(s);
        let _ = s.write_all(b"data: {not json\n\n");
    });
    let m = message_of(
        ClientErrorKind::Protocol,
        list_error(&server, legacy(30_000)),
    );
    assert!(m.contains("SSE event") && m.contains("not JSON"), "{m}");
    let server = misbehaving(|_, s| {
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2\r\n\r\n");
    });
    let m = message_of(
        ClientErrorKind::Protocol,
        list_error(&server, legacy(30_000)),
    );
    assert!(m.contains("malformed HTTP response"), "{m}");
}

#[test]
fn oversized_replies_are_refused_at_the_cap() {
    let small = || Options {
        max_response_bytes: 64 * 1024,
        ..legacy(30_000)
    };
    let server = misbehaving(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n");
    });
    let m = message_of(ClientErrorKind::Protocol, list_error(&server, small()));
    assert!(m.contains("larger than 65536 bytes"), "{m}");
    // An endless chunked body: the client stops reading at the cap.
    let server = misbehaving(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
        let chunk = format!("4000\r\n{}\r\n", "x".repeat(0x4000));
        while s.write_all(chunk.as_bytes()).is_ok() {}
    });
    let m = message_of(ClientErrorKind::Protocol, list_error(&server, small()));
    assert!(m.contains("larger than 65536 bytes"), "{m}");
    // An SSE event that never ends.
    let server = misbehaving(|_, s| {
        sse_head(s);
        let _ = s.write_all(b"data: ");
        let block = [b'y'; 8192];
        while s.write_all(&block).is_ok() {}
    });
    let m = message_of(ClientErrorKind::Protocol, list_error(&server, small()));
    assert!(m.contains("SSE event larger than 65536 bytes"), "{m}");
}

#[test]
fn a_slow_server_times_out() {
    let server = misbehaving(|_, _| std::thread::sleep(Duration::from_secs(5)));
    let opts = Options {
        connect_timeout: Duration::from_millis(200),
        ..legacy(200)
    };
    let err = list_error(&server, opts);
    assert!(
        matches!(&err, ClientError::Timeout { method, .. } if method == "tools/list"),
        "{err:?}"
    );
}

#[test]
fn a_connection_dropped_mid_body_is_reported() {
    let server = misbehaving(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"jsonrpc\":");
    });
    let m = message_of(ClientErrorKind::Closed, list_error(&server, legacy(30_000)));
    assert!(m.contains("in the middle of the answer"), "{m}");
}

#[test]
fn json_rpc_errors_in_error_statuses_are_typed() {
    let server = misbehaving(|r, s| {
        let error = obj([
            ("jsonrpc", Value::from("2.0")),
            ("id", id_of(r)),
            (
                "error",
                obj([
                    ("code", Value::from(-32602i64)),
                    ("message", Value::from("bad cursor")),
                ]),
            ),
        ]);
        respond(
            s,
            "400 Bad Request",
            &[("Content-Type", "application/json")],
            json::to_string(&error).as_bytes(),
        );
    });
    match list_error(&server, legacy(30_000)) {
        ClientError::Rpc { error, .. } => {
            assert_eq!((error.code, error.message.as_str()), (-32602, "bad cursor"))
        }
        other => panic!("{other:?}"),
    }
    let server = misbehaving(|_, s| respond(s, "202 Accepted", &[], b""));
    let m = message_of(
        ClientErrorKind::Protocol,
        list_error(&server, legacy(30_000)),
    );
    assert!(m.contains("tools/list with HTTP 202 and no body"), "{m}");
    let server = misbehaving(|_, s| respond(s, "500 Internal Server Error", &[], b"kaput"));
    match list_error(&server, legacy(30_000)) {
        ClientError::Http { status, body } => assert_eq!((status, body.as_str()), (500, "kaput")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unreachable_servers_and_https_urls_fail_clearly() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    match Client::connect_http(&format!("http://127.0.0.1:{port}/mcp"), Options::default()) {
        Err(ClientError::Connect(m)) => assert!(
            m.starts_with(&format!("cannot connect to http://127.0.0.1:{port}/mcp")),
            "{m}"
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // https needs the TLS helper: one that is not there is a connection failure that names it.
    let options = Options {
        tls: agentteams_mcp::client::tls::TlsConfig {
            helper: Some("/nonexistent/openssl".into()),
            ca_file: None,
        },
        ..Options::default()
    };
    match Client::connect_http(&format!("https://127.0.0.1:{port}/mcp"), options) {
        Err(ClientError::Connect(m)) => assert!(
            m.contains("the TLS helper /nonexistent/openssl is not a file"),
            "{m}"
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
    match Client::connect_http("ftp://127.0.0.1/mcp", Options::default()) {
        Err(ClientError::Unsupported(m)) => {
            assert!(m.contains("only http:// and https:// URLs"), "{m}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

// ---- this project's Streamable HTTP server ---------------------------------------------

/// Serves the demo engine with the library's own HTTP server on a free port; returns its URL.
fn product_server(config: agentteams_mcp::http::HttpConfig) -> String {
    let engine = Arc::new(Engine::new(Arc::new(Demo)));
    let server = agentteams_mcp::http::bind(engine, config).expect("binds a free port");
    let url = format!("http://{}/mcp", server.local_addr().unwrap());
    std::thread::spawn(move || server.run());
    url
}

fn free_port_config() -> agentteams_mcp::http::HttpConfig {
    agentteams_mcp::http::HttpConfig {
        port: 0,
        ..Default::default()
    }
}

#[test]
fn the_products_http_server_in_every_era_and_mode() {
    for stateless in [false, true] {
        let url = product_server(agentteams_mcp::http::HttpConfig {
            stateless,
            ..free_port_config()
        });
        for (era, revision) in [
            (EraChoice::Auto, Revision::V2026_07_28),
            (EraChoice::Legacy, Revision::V2025_11_25),
        ] {
            let opts = Options {
                era,
                ..Options::default()
            };
            let mut client = Client::connect_http(&url, opts).unwrap();
            assert_eq!(client.server().revision, revision);
            assert_eq!(client.list_tools().unwrap().len(), 3);
            let progress = call_progress(&mut client);
            assert_eq!(
                progress,
                [0.0, 50.0, 100.0],
                "stateless={stateless} {era:?}"
            );
            match client.call_tool("fail", Map::new()) {
                Err(ClientError::Tool { text, .. }) => assert_eq!(text, "it broke"),
                other => panic!("{other:?}"),
            }
            match client.call_tool("nope", Map::new()) {
                Err(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32602),
                other => panic!("{other:?}"),
            }
            client
                .close()
                .expect("DELETE (or nothing to delete) succeeds");
        }
    }
}

#[test]
fn the_products_http_server_demands_its_token() {
    let token = "client-test-token-0123456789";
    let url = product_server(agentteams_mcp::http::HttpConfig {
        auth_token: Some(agentteams_mcp::http::Token::new(token).unwrap()),
        ..free_port_config()
    });
    match Client::connect_http(&url, Options::default()) {
        Err(ClientError::AuthRequired {
            status,
            challenge,
            token_sent,
        }) => {
            assert_eq!(status, 401);
            assert!(challenge.unwrap_or_default().starts_with("Bearer"));
            assert!(!token_sent);
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let wrong = Options {
        bearer_token: Some("not-the-token-0123456789".into()),
        ..Options::default()
    };
    match Client::connect_http(&url, wrong) {
        Err(
            e @ ClientError::AuthRequired {
                token_sent: true, ..
            },
        ) => {
            assert!(e
                .to_string()
                .starts_with("the server refused the bearer token (HTTP 401"));
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let opts = Options {
        bearer_token: Some(token.into()),
        ..Options::default()
    };
    let mut client = Client::connect_http(&url, opts).unwrap();
    assert_eq!(client.list_tools().unwrap().len(), 3);
    client.close().unwrap();
}

#[test]
fn a_session_the_products_server_ended_is_replaced_transparently() {
    let url = product_server(free_port_config());
    let mut client = Client::connect_http(&url, legacy(30_000)).unwrap();
    let first = client.session_id().expect("a legacy session").to_owned();
    // Someone else ends the session (as an expiry would): DELETE it behind the client's back.
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let mut s = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        s,
        "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {first}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");

    assert_eq!(
        client.list_tools().unwrap().len(),
        3,
        "re-initialized and replayed"
    );
    let second = client.session_id().expect("a fresh session").to_owned();
    assert_ne!(first, second);
    client.close().unwrap();
    assert_eq!(
        status_in_session(&url, &second),
        404,
        "close deleted the session"
    );
}

/// The status a request in session `id` gets now.
fn status_in_session(url: &str, id: &str) -> u16 {
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let mut s = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Session-Id: {id}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply[9..12].parse().unwrap()
}

#[test]
fn server_requests_on_the_stream_are_answered_by_post() {
    let server = fixture(|request, stream| {
        if legacy_handshake(request, stream, "2025-11-25") {
            return;
        }
        let message = request.message();
        match (request.method.as_str(), message.get("method")) {
            // The call: the server asks two things of the client, then breaks the stream.
            ("POST", Some(_)) => {
                sse_head(stream);
                for (id, method) in [("p1", "ping"), ("s1", "sampling/createMessage")] {
                    let ask = obj([
                        ("jsonrpc", Value::from("2.0")),
                        ("id", Value::from(id)),
                        ("method", Value::from(method)),
                    ]);
                    let _ = write!(stream, "id: e-{id}\ndata: {}\n\n", json::to_string(&ask));
                }
            }
            // The client's answers.
            ("POST", None) => respond(stream, "202 Accepted", &[], b""),
            _ => {
                sse_head(stream);
                let res = obj([("content", Value::Array(Vec::new().into()))]);
                sse_event(stream, &result(&Value::from(2u64), res));
            }
        }
    });
    let mut client = Client::connect_http(&server.url, legacy(30_000)).unwrap();
    client.call_tool("t", Map::new()).unwrap();
    let answers: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.message().get("method").is_none())
        .map(|r| json::to_string(&r.message()))
        .collect();
    assert_eq!(
        answers,
        [
            r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"this client has no model to sample from (sampling is not supported)"}}"#
        ]
    );
    let answer = server
        .requests()
        .into_iter()
        .find(|r| r.message().get("id") == Some(&Value::from("p1")))
        .unwrap();
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
}
