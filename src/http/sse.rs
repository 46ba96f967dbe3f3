//! Server-Sent Events framing for Streamable HTTP replies (`text/event-stream` over a chunked body).
//!
//! Each JSON-RPC message becomes one `message` event; each event travels in one HTTP chunk, so a
//! reader never sees half an event and the connection stays reusable after the stream ends.

use super::response::write_head;
use crate::http1::chunked::{encode_chunk, LAST_CHUNK};
use std::time::Duration;

/// The head of an SSE reply (never Content-Length; no proxy buffering). `chunked`: the body is
/// chunked (HTTP/1.1); otherwise it ends when the connection closes (HTTP/1.0 has no chunking).
pub fn stream_head(keep_alive: bool, chunked: bool) -> Vec<u8> {
    let mut headers: Vec<(&'static str, String)> = vec![
        ("Content-Type", "text/event-stream".into()),
        ("Cache-Control", "no-cache".into()),
        ("X-Accel-Buffering", "no".into()),
    ];
    if chunked {
        headers.push(("Transfer-Encoding", "chunked".into()));
    }
    if !keep_alive || !chunked {
        headers.push(("Connection", "close".into()));
    }
    let mut out = Vec::with_capacity(256);
    write_head(200, &headers, &mut out);
    out.extend_from_slice(b"\r\n");
    out
}

/// Appends one `message` event carrying `data`. A line break in `data` (CRLF, CR or LF) starts a
/// new `data:` line, so no payload can end the event early or inject fields; a reader joins the
/// lines with LF (compact JSON has no raw line breaks, so MCP messages arrive unchanged).
pub fn encode_event(data: &str, out: &mut Vec<u8>) {
    encode_typed_event("message", data, out);
}

/// Appends one event of type `kind` (the server's own word, e.g. `endpoint`) carrying `data`,
/// split into `data:` lines as [`encode_event`] does.
pub fn encode_typed_event(kind: &str, data: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.push(b'\n');
    let mut rest = data;
    loop {
        let end = rest.find(['\r', '\n']).unwrap_or(rest.len());
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&rest.as_bytes()[..end]);
        out.push(b'\n');
        if end == rest.len() {
            break;
        }
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }
    out.push(b'\n');
}

/// Appends one `message` event carrying `data` under event id `id` (ids are the server's own,
/// [`super::streams::Origin::event_id`]: no line breaks).
pub fn encode_event_with_id(id: &str, data: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.push(b'\n');
    encode_event(data, out);
}

/// Appends a priming event (SEP-1699): an id to resume from, the reconnection delay the client
/// should wait, and empty data.
pub fn encode_priming(id: &str, retry: Duration, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis()).as_bytes());
}

/// A comment line an idle stream sends so that proxies and clients see it alive.
pub const KEEPALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// Appends one event framed as one HTTP chunk.
pub fn encode_event_chunk(data: &str, out: &mut Vec<u8>) {
    let mut event = Vec::with_capacity(data.len() + 32);
    encode_event(data, &mut event);
    encode_chunk(&event, out);
}

/// Appends the final event and the end of the chunked body.
pub fn encode_last_event(data: &str, out: &mut Vec<u8>) {
    encode_event_chunk(data, out);
    out.extend_from_slice(LAST_CHUNK);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::chunked::ChunkedDecoder;

    #[test]
    fn one_line_payload_is_one_data_line() {
        let mut out = Vec::new();
        encode_event(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &mut out);
        assert_eq!(
            out,
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
        );
    }

    #[test]
    fn line_breaks_cannot_end_the_event_or_inject_fields() {
        let mut out = Vec::new();
        encode_event("a\r\n\r\nid: 7\rb\nretry: 1\n", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "event: message\ndata: a\ndata: \ndata: id: 7\ndata: b\ndata: retry: 1\ndata: \n\n"
        );
    }

    #[test]
    fn a_stream_is_a_valid_chunked_body() {
        let mut out = stream_head(true, true);
        let head_len = out.len();
        assert!(String::from_utf8_lossy(&out)
            .starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"));
        encode_event_chunk("{\"n\":1}", &mut out);
        encode_last_event("{\"n\":2}", &mut out);
        let mut decoder = ChunkedDecoder::new();
        let mut body = Vec::new();
        let used = decoder.decode(&out[head_len..], &mut body).unwrap();
        assert!(decoder.is_done());
        assert_eq!(used, out.len() - head_len);
        assert_eq!(
            body,
            b"event: message\ndata: {\"n\":1}\n\nevent: message\ndata: {\"n\":2}\n\n"
        );
    }

    #[test]
    fn ids_and_priming_events_precede_their_fields() {
        let mut out = Vec::new();
        encode_priming("r.00000000.1.0", Duration::from_millis(500), &mut out);
        encode_event_with_id("r.00000000.1.1", "{}", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "id: r.00000000.1.0\nretry: 500\ndata: \n\nid: r.00000000.1.1\nevent: message\ndata: {}\n\n"
        );
    }

    #[test]
    fn an_unchunked_stream_is_delimited_by_closing() {
        let head = String::from_utf8(stream_head(true, false)).unwrap();
        assert!(!head.contains("Transfer-Encoding"));
        assert!(head.ends_with("Connection: close\r\n\r\n"));
    }
}
