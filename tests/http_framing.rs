//! HTTP/1.1 framing and exhaustion defences over real sockets: size limits at their edges,
//! chunked bodies, request smuggling, keep-alive after early rejections, pipelining, slow clients
//! and connection floods.

mod http_support;

use agentteams_mcp::http::limits::{MAX_BODY_BYTES, MAX_HEADERS, MAX_HEAD_BYTES, MAX_REQUEST_LINE};
use agentteams_mcp::http::{HttpConfig, Timeouts};
use http_support::{start, start_default, Client};
use std::time::Duration;

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;

fn post_head(c: &Client, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: */*\r\nContent-Type: application/json\r\n{extra}\r\n",
        c.host()
    )
}

/// An initialize request padded with trailing whitespace to exactly `len` bytes.
fn init_body_of_len(len: usize) -> String {
    format!("{INIT}{}", " ".repeat(len - INIT.len()))
}

#[test]
fn body_limit_edge_413_then_close() {
    let mut c = Client::connect(start_default());
    let body = init_body_of_len(MAX_BODY_BYTES);
    let mut request = post_head(&c, &format!("Content-Length: {}\r\n", body.len())).into_bytes();
    request.extend_from_slice(body.as_bytes());
    c.send(&request);
    assert_eq!(c.read_reply().unwrap().status, 200);

    let over = post_head(&c, &format!("Content-Length: {}\r\n", MAX_BODY_BYTES + 1));
    c.send(over.as_bytes());
    let reply = c.read_reply().unwrap();
    assert_eq!(reply.status, 413);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(c.is_closed());
}

#[test]
fn chunked_bodies_are_decoded_and_bounded() {
    let mut c = Client::connect(start_default());
    let (a, b) = INIT.split_at(20);
    let chunked = format!(
        "{}{:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\n\r\n",
        post_head(&c, "Transfer-Encoding: chunked\r\n"),
        a.len(),
        b.len()
    );
    c.send(chunked.as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 200);

    let huge = format!(
        "{}{:x}\r\n",
        post_head(&c, "Transfer-Encoding: chunked\r\n"),
        MAX_BODY_BYTES + 1
    );
    c.send(huge.as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 413);
    assert!(c.is_closed());

    let mut c = Client::connect(c.addr);
    let loose = format!(
        "{} 5\r\nhello\r\n0\r\n\r\n",
        post_head(&c, "Transfer-Encoding: chunked\r\n")
    );
    c.send(loose.as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 400);
    assert!(c.is_closed());
}

#[test]
fn head_limits_answer_414_and_431_and_close() {
    let addr = start_default();
    let long_target = format!("/{}", "a".repeat(MAX_REQUEST_LINE));
    let mut c = Client::connect(addr);
    c.send(format!("GET {long_target} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 414);
    assert!(c.is_closed());

    let mut c = Client::connect(addr);
    let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: v\r\n")).collect();
    c.send(format!("GET /mcp HTTP/1.1\r\n{many}\r\n").as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 431);
    assert!(c.is_closed());

    let mut c = Client::connect(addr);
    let big = format!("X-Big: {}\r\n", "b".repeat(MAX_HEAD_BYTES));
    c.send(format!("GET /mcp HTTP/1.1\r\n{big}\r\n").as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 431);
    assert!(c.is_closed());

    let mut c = Client::connect(addr);
    c.send(b"GET /mcp HTTP/1.1\nHost: localhost\n\n");
    assert_eq!(c.read_reply().unwrap().status, 400);
    assert!(c.is_closed());
}

#[test]
fn smuggling_shapes_are_refused_and_the_hidden_request_never_runs() {
    let addr = start_default();
    // The hidden request would get 405 if the server read it as a second request.
    let hidden = "PUT /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let shapes = [
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
        "Content-Length: 4\r\nContent-Length: 40\r\n",
        "Content-Length: 4, 40\r\n",
        "Transfer-Encoding: chunked, identity\r\n",
        "Transfer-Encoding: xchunked\r\n",
        "Content-Length: -4\r\n",
    ];
    for shape in shapes {
        let mut c = Client::connect(addr);
        let request = format!("{}0\r\n\r\n{hidden}", post_head(&c, shape));
        c.send(request.as_bytes());
        let reply = c.read_reply().unwrap();
        assert!(
            matches!(reply.status, 400 | 501),
            "{shape:?}: {}",
            reply.status
        );
        assert_eq!(reply.header("connection"), Some("close"), "{shape:?}");
        assert!(
            c.is_closed(),
            "{shape:?}: the hidden request must not be answered"
        );
    }
}

#[test]
fn an_early_rejection_drains_the_body_so_keep_alive_stays_in_sync() {
    let mut c = Client::connect(start_default());
    // A body that looks like a request: if left unread it would be parsed as the next request.
    let body = format!("PUT /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", c.host());
    for (extra, status) in [("Origin: http://evil.example.com\r\n", 403), ("", 0)] {
        let head = if status == 0 {
            // 415: wrong content type, rejected before the body is looked at.
            format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n", c.host(), body.len())
        } else {
            post_head(&c, &format!("{extra}Content-Length: {}\r\n", body.len()))
        };
        c.send(format!("{head}{body}").as_bytes());
        let reply = c.read_reply().unwrap();
        assert_eq!(reply.status, if status == 0 { 415 } else { status });
        assert_eq!(reply.header("connection"), None);
    }
    let mut not_found = format!(
        "POST /nowhere HTTP/1.1\r\nHost: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        c.host()
    );
    not_found.push_str(&format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()));
    c.send(not_found.as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 404);
    // The next request on the same connection is read from its first byte.
    let ok = c.post(INIT, &[]);
    assert_eq!(ok.status, 200);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let mut c = Client::connect(start_default());
    let one = format!(
        "{}{INIT}",
        post_head(&c, &format!("Content-Length: {}\r\n", INIT.len()))
    );
    let two = format!("GET /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", c.host());
    c.send(format!("{one}{two}{one}").as_bytes());
    let statuses: Vec<u16> = (0..3).map(|_| c.read_reply().unwrap().status).collect();
    assert_eq!(statuses, [200, 405, 200]);
}

#[test]
fn expect_100_continue_is_honoured_and_other_expectations_refused() {
    let mut c = Client::connect(start_default());
    let head = post_head(
        &c,
        &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", INIT.len()),
    );
    c.send(head.as_bytes());
    // The interim response arrives before the body is sent; read_reply skips it.
    let mut interim = [0u8; 25];
    std::io::Read::read_exact(&mut c.stream, &mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    c.send(INIT.as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 200);

    let head = post_head(
        &c,
        &format!("Expect: teapot\r\nContent-Length: {}\r\n", INIT.len()),
    );
    c.send(format!("{head}{INIT}").as_bytes());
    assert_eq!(c.read_reply().unwrap().status, 417);
}

fn short_timeouts() -> Timeouts {
    Timeouts {
        head: Duration::from_millis(300),
        body: Duration::from_millis(300),
        idle: Duration::from_millis(300),
        write: Duration::from_secs(5),
    }
}

#[test]
fn a_slow_client_gets_408_and_is_disconnected() {
    let addr = start(HttpConfig {
        timeouts: short_timeouts(),
        ..HttpConfig::default()
    });
    let mut c = Client::connect(addr);
    c.send(b"POST /mcp HTTP/1.1\r\nHost: loc");
    let reply = c.read_reply().unwrap();
    assert_eq!(reply.status, 408);
    assert!(c.is_closed());

    let mut c = Client::connect(addr);
    c.send(post_head(&c, "Content-Length: 100\r\n").as_bytes());
    c.send(b"{\"partial\":");
    assert_eq!(c.read_reply().unwrap().status, 408);
    assert!(c.is_closed());

    // An idle keep-alive connection is closed without a response.
    let mut c = Client::connect(addr);
    assert_eq!(c.post(INIT, &[]).status, 200);
    assert!(c.is_closed());
}

#[test]
fn a_connection_flood_is_capped_and_served_again_once_it_drains() {
    let cap = 4;
    let addr = start(HttpConfig {
        max_connections: cap,
        timeouts: Timeouts {
            idle: Duration::from_secs(1),
            ..short_timeouts()
        },
        ..HttpConfig::default()
    });
    // Connections that never send a byte each hold a place until the idle timeout.
    let mut holders: Vec<Client> = (0..cap).map(|_| Client::connect(addr)).collect();
    // Let the server accept all of them before probing past the cap.
    // The server answers past the cap without reading (so the probe sends nothing: unread bytes
    // would turn the close into a reset).
    let mut probe = Client::connect(addr);
    let busy = probe.read_reply().expect("a 503 before the close");
    assert_eq!(busy.status, 503);
    assert_eq!(busy.header("retry-after"), Some("1"));
    assert!(probe.is_closed());

    // The holders are dropped by the server after the idle timeout; then service resumes.
    for holder in holders.iter_mut() {
        assert!(holder.is_closed());
    }
    let mut c = Client::connect(addr);
    assert_eq!(c.post(INIT, &[]).status, 200);
}

#[test]
fn http_1_0_requests_are_answered_and_the_connection_closed() {
    let mut c = Client::connect(start_default());
    let request = format!(
        "POST /mcp HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nContent-Length: {}\r\n\r\n{INIT}",
        c.host(),
        INIT.len()
    );
    c.send(request.as_bytes());
    let reply = c.read_reply().unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(c.is_closed());
}
