//! The head of the server's Server-Sent Events replies (`text/event-stream` over a chunked body);
//! the events themselves are framed by [`crate::http1::sse`], one event to an HTTP chunk, so a
//! reader never sees half an event and the connection stays reusable after the stream ends.

use super::response::write_head;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::chunked::ChunkedDecoder;
    use crate::http1::sse::{encode_event_chunk, encode_last_event};

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
    fn an_unchunked_stream_is_delimited_by_closing() {
        let head = String::from_utf8(stream_head(true, false)).unwrap();
        assert!(!head.contains("Transfer-Encoding"));
        assert!(head.ends_with("Connection: close\r\n\r\n"));
    }
}
