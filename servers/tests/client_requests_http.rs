//! A request to the client over Streamable HTTP through the real binary: it travels on the call's
//! SSE response, the client POSTs its answer (202), and the result follows on the same stream.

mod common;
use common::{http_post, serve_http, session_headers};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Reads from `stream` until the text so far contains `needle`; returns all of it.
fn read_until(stream: &mut TcpStream, so_far: &mut String, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 4096];
    while !so_far.contains(needle) {
        assert!(Instant::now() < deadline, "no {needle:?} in {so_far}");
        match stream.read(&mut buf) {
            Ok(0) => panic!("stream ended before {needle:?}: {so_far}"),
            Ok(n) => so_far.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn sampling_travels_on_the_calls_sse_stream_and_the_answer_is_posted() {
    let (_server, port) = serve_http(&[], None, Stdio::null());

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, reply) = http_post(port, "", init);
    assert_eq!(status, 200, "{reply}");
    let headers = session_headers(&reply);
    let (status, _) = http_post(
        port,
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"Say hi"}}}"#;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{call}",
        call.len()
    )
    .unwrap();
    let mut seen = String::new();
    read_until(
        &mut stream,
        &mut seen,
        r#""method":"sampling/createMessage""#,
    );
    assert!(seen.contains("text/event-stream"), "{seen}");
    let id = seen
        .split(r#""id":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the request's id")
        .to_owned();
    assert!(id.starts_with("srv-"), "{id}");
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"role":"assistant","content":{{"type":"text","text":"hi"}},"model":"m"}}}}"#
    );
    let (status, reply) = http_post(port, &headers, &answer);
    assert_eq!(status, 202, "{reply}");
    read_until(&mut stream, &mut seen, "LLM response: hi");
}
