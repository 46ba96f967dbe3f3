//! The HTTP/1.1 response writer: a whole response encoded into one buffer, written with one call.
//!
//! One write per response matters: a reply split across writes waits for the peer's delayed ACK
//! (about 40 ms on Linux) unless Nagle is off, and even with TCP_NODELAY it costs extra packets.

use crate::json::{self, Value};

/// A response with a complete body (every response except SSE streams, see [`super::sse`] and [`crate::http1::sse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// Close the connection after this response (set for errors that leave the stream unsynchronised).
    pub close: bool,
}

impl Response {
    /// A response with no body.
    pub fn empty(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            close: false,
        }
    }

    /// A response whose body is `value` as compact JSON.
    pub fn json(status: u16, value: &Value) -> Response {
        Response::empty(status).body("application/json", json::to_string(value).into_bytes())
    }

    /// A short plain-text body (for failures outside MCP: malformed HTTP, wrong path).
    pub fn text(status: u16, message: &str) -> Response {
        Response::empty(status).body(
            "text/plain; charset=utf-8",
            format!("{message}\n").into_bytes(),
        )
    }

    pub fn body(mut self, content_type: &str, body: Vec<u8>) -> Response {
        self.headers.push(("Content-Type", content_type.to_owned()));
        self.body = body;
        self
    }

    /// Adds a header. Values come from this crate, never raw from a client; control characters are
    /// dropped anyway so no value can split the head.
    pub fn header(mut self, name: &'static str, value: &str) -> Response {
        self.headers
            .push((name, value.chars().filter(|c| !c.is_control()).collect()));
        self
    }

    pub fn with_close(mut self) -> Response {
        self.close = true;
        self
    }

    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn body_bytes(&self) -> &[u8] {
        &self.body
    }

    /// The full response bytes. `keep_alive` is what the request allows; [`Response::close`] can
    /// only turn it off.
    pub fn encode(&self, keep_alive: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.body.len());
        write_head(self.status, &self.headers, &mut out);
        let mut line = format!("Content-Length: {}\r\n", self.body.len());
        if self.close || !keep_alive {
            line.push_str("Connection: close\r\n");
        }
        line.push_str("\r\n");
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(&self.body);
        out
    }
}

/// Writes the status line and `headers`, without the blank line that ends the head.
pub fn write_head(status: u16, headers: &[(&'static str, String)], out: &mut Vec<u8>) {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    out.extend_from_slice(head.as_bytes());
}

/// The reason phrase of each status code the server sends.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::obj;

    #[test]
    fn encodes_head_length_and_body_in_one_buffer() {
        let r =
            Response::json(200, &obj([("a", Value::from(1u64))])).header("Mcp-Session-Id", "ab");
        let wire = String::from_utf8(r.encode(true)).unwrap();
        assert_eq!(
            wire,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: ab\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
        );
        let closing = String::from_utf8(Response::empty(413).with_close().encode(true)).unwrap();
        assert_eq!(
            closing,
            "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let http10 = String::from_utf8(Response::empty(202).encode(false)).unwrap();
        assert!(http10.ends_with("Connection: close\r\n\r\n"));
    }

    #[test]
    fn header_values_cannot_split_the_head() {
        let r = Response::empty(200).header("X", "a\r\nInjected: 1");
        let wire = String::from_utf8(r.encode(true)).unwrap();
        assert!(wire.contains("X: aInjected: 1\r\n"));
        assert!(!wire.contains("\r\nInjected"));
    }
}
