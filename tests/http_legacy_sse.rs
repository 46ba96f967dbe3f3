//! The 2024-11-05 HTTP+SSE transport over real sockets (`--legacy-sse`): the `endpoint` event,
//! messages accepted with 202 whose replies (and what a call sends before them) arrive on the
//! stream, the session ending with its stream, and the refusals of bad session ids.

mod http_support;

use agentteams_mcp::http::HttpConfig;
use http_support::{at, request_to, start, Client, Sse};
use std::net::SocketAddr;

fn open_stream(addr: SocketAddr) -> (Sse, String) {
    let get = request_to(addr, "GET", "/sse", &[("Accept", "text/event-stream")], "");
    let mut stream = Sse::open(addr, get).expect("an event stream");
    let first = stream.next().unwrap();
    let endpoint = first.data.clone();
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    assert!(
        first.id.is_none(),
        "the old transport has no resumption, so no ids"
    );
    (stream, endpoint)
}

/// POSTs `body` to `target`; the status.
fn post(addr: SocketAddr, target: &str, body: &str) -> u16 {
    let mut c = Client::connect(addr);
    c.send(request_to(addr, "POST", target, &[], body).as_bytes());
    let reply = c.read_reply().unwrap();
    reply.status
}

#[test]
fn messages_are_accepted_with_202_and_answered_on_the_stream() {
    let addr = start(HttpConfig {
        legacy_sse: true,
        ..HttpConfig::default()
    });
    let (mut stream, endpoint) = open_stream(addr);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert_eq!(post(addr, &endpoint, init), 202);
    let reply = stream.next_event().unwrap().json();
    assert_eq!(
        at(&reply, "result.protocolVersion").as_str(),
        Some("2024-11-05")
    );
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, &endpoint, note), 202);
    assert_eq!(
        post(
            addr,
            &endpoint,
            r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}"#
        ),
        202
    );
    stream.next_event().unwrap();
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    assert_eq!(post(addr, &endpoint, call), 202);
    let methods: Vec<Option<String>> = (0..6)
        .map(|_| {
            let event = stream.next_event().unwrap().json();
            at(&event, "method").as_str().map(str::to_owned)
        })
        .collect();
    let progress = Some("notifications/progress".to_owned());
    assert!(methods[..3].iter().all(|m| *m == progress), "{methods:?}");
    assert_eq!(methods[5], None, "the reply comes last: {methods:?}");
    // Closing the stream ends the session.
    drop(stream);
    let mut gone = 0;
    for _ in 0..50 {
        gone = post(addr, &endpoint, note);
        if gone == 404 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(gone, 404);
}

#[test]
fn bad_session_ids_and_methods_are_refused_and_the_transport_is_off_by_default() {
    let addr = start(HttpConfig {
        legacy_sse: true,
        ..HttpConfig::default()
    });
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    assert_eq!(post(addr, "/messages", ping), 400);
    assert_eq!(post(addr, "/messages?sessionId=zz", ping), 400);
    assert_eq!(post(addr, "/messages?sessionId=a&sessionId=b", ping), 400);
    assert_eq!(
        post(addr, "/messages?sessionId=0123456789abcdef", ping),
        404
    );
    let (_stream, endpoint) = open_stream(addr);
    assert_eq!(post(addr, &endpoint, "{not json"), 400);
    assert_eq!(post(addr, "/sse", ping), 405);
    let off = start(HttpConfig::default());
    assert_eq!(post(off, "/messages?sessionId=0123456789abcdef", ping), 404);
    let get = request_to(off, "GET", "/sse", &[("Accept", "text/event-stream")], "");
    assert_eq!(Sse::open(off, get).err().unwrap().status, 404);
}
