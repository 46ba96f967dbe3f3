//! The client's side of HTTP/1.1, without I/O: request heads, and an incremental response parser
//! (head, then a body framed by Content-Length, chunked encoding or connection close) that says
//! "complete", "need more" or what was wrong ([`WireError`]). Chunked bodies go through the same
//! decoder the server reads requests with ([`super::chunked`]).

use super::chunked::{ChunkError, ChunkedDecoder};
use super::limits::{MAX_RESPONSE_HEADERS, MAX_RESPONSE_HEAD_BYTES};
use super::url::Url;
use crate::voice::shortened;
use std::fmt;

/// Builds a request head (ending in the blank line). Header values must already be free of CR/LF.
pub fn request_head(method: &str, url: &Url, headers: &[(&str, String)]) -> Vec<u8> {
    let mut out = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\n",
        url.target(),
        url.host_header()
    );
    for (name, value) in headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// A malformed or oversized response: what was wrong, with the text it quotes already cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The head is larger than [`MAX_RESPONSE_HEAD_BYTES`].
    HeadTooLarge,
    HeadNotUtf8,
    /// The status line, shortened.
    NotHttp(String),
    /// The status code as given.
    BadStatus(String),
    /// The header line, shortened.
    MalformedHeader(String),
    /// More than [`MAX_RESPONSE_HEADERS`] headers.
    TooManyHeaders,
    /// The Content-Length value as given.
    BadContentLength(String),
    ConflictingContentLength,
    /// The connection closed before a delimited body ended.
    ClosedMidBody,
    Chunked(ChunkError),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::HeadTooLarge => {
                write!(
                    f,
                    "response head larger than {MAX_RESPONSE_HEAD_BYTES} bytes"
                )
            }
            WireError::HeadNotUtf8 => f.write_str("response head is not UTF-8"),
            WireError::NotHttp(line) => write!(f, "not an HTTP/1.x status line: {line:?}"),
            WireError::BadStatus(code) => write!(f, "bad status code {code:?}"),
            WireError::MalformedHeader(line) => write!(f, "malformed header line {line:?}"),
            WireError::TooManyHeaders => {
                write!(f, "more than {MAX_RESPONSE_HEADERS} response headers")
            }
            WireError::BadContentLength(v) => write!(f, "Content-Length {v:?} is not a number"),
            WireError::ConflictingContentLength => {
                f.write_str("conflicting Content-Length headers")
            }
            WireError::ClosedMidBody => f.write_str("connection closed in the middle of the body"),
            WireError::Chunked(e) => write!(f, "chunked body: {e}"),
        }
    }
}

impl std::error::Error for WireError {}

/// The status line and headers of a response.
#[derive(Clone, Debug)]
pub struct ResponseHead {
    /// 0 for an HTTP/1.0 server, 1 for HTTP/1.1 (a later 1.x counts as 1).
    pub minor_version: u8,
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl ResponseHead {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type`, lowercased, without parameters.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// Whether the header `name` lists `token` (comma-separated, case-insensitive), as
    /// `Connection: close` does.
    pub fn lists_token(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// How the body is delimited. `head_request`-style bodiless statuses have none.
    pub fn framing(&self) -> Result<Framing, WireError> {
        if matches!(self.status, 100..=199 | 204 | 304) {
            return Ok(Framing::Length(0));
        }
        if let Some(te) = self.header("transfer-encoding") {
            let last = te.rsplit(',').next().unwrap_or("").trim();
            if last.eq_ignore_ascii_case("chunked") {
                return Ok(Framing::Chunked);
            }
            return Ok(Framing::UntilClose);
        }
        let mut lengths = self
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("content-length"));
        match lengths.next() {
            None => Ok(Framing::UntilClose),
            Some((_, v)) => {
                let n = v
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| WireError::BadContentLength(v.clone()))?;
                if lengths.any(|(_, other)| other.trim() != v.trim()) {
                    return Err(WireError::ConflictingContentLength);
                }
                Ok(Framing::Length(n))
            }
        }
    }
}

/// How a response body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

/// Parses a response head from the start of `buf`: `Ok(None)` when more bytes are needed,
/// otherwise the head and the number of bytes it used. Interim 1xx responses are returned like any
/// other; the caller skips them.
pub fn parse_head(buf: &[u8]) -> Result<Option<(ResponseHead, usize)>, WireError> {
    let end = match find(buf, b"\r\n\r\n") {
        Some(i) => i + 4,
        None if buf.len() > MAX_RESPONSE_HEAD_BYTES => return Err(WireError::HeadTooLarge),
        None => return Ok(None),
    };
    if end > MAX_RESPONSE_HEAD_BYTES {
        return Err(WireError::HeadTooLarge);
    }
    let text = std::str::from_utf8(&buf[..end - 4]).map_err(|_| WireError::HeadNotUtf8)?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let code = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return Err(WireError::NotHttp(shortened(status_line, 80)));
    }
    let status = code
        .parse::<u16>()
        .ok()
        .filter(|s| (100..600).contains(s))
        .ok_or_else(|| WireError::BadStatus(code.to_owned()))?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .filter(|(n, _)| !n.is_empty() && !n.contains([' ', '\t']))
            .ok_or_else(|| WireError::MalformedHeader(shortened(line, 80)))?;
        if headers.len() == MAX_RESPONSE_HEADERS {
            return Err(WireError::TooManyHeaders);
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let minor_version = u8::from(version != "HTTP/1.0");
    Ok(Some((
        ResponseHead {
            minor_version,
            status,
            headers,
        },
        end,
    )))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes a response body as it arrives.
#[derive(Debug)]
pub struct BodyDecoder {
    framing: Framing,
    /// Bytes left for a Content-Length body.
    left: u64,
    /// The server's chunked decoder, unbounded: the client applies its own caps to what it keeps.
    chunked: ChunkedDecoder,
}

impl BodyDecoder {
    pub fn new(framing: Framing) -> BodyDecoder {
        let left = match framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        BodyDecoder {
            framing,
            left,
            chunked: ChunkedDecoder::with_limit(usize::MAX),
        }
    }

    /// True when the body is complete (never, for a body that ends at connection close).
    pub fn is_done(&self) -> bool {
        match self.framing {
            Framing::Length(_) => self.left == 0,
            Framing::Chunked => self.chunked.is_done(),
            Framing::UntilClose => false,
        }
    }

    /// What the end of the connection means: fine for a close-delimited body, an error otherwise.
    pub fn at_eof(&self) -> Result<(), WireError> {
        if self.is_done() || self.framing == Framing::UntilClose {
            Ok(())
        } else {
            Err(WireError::ClosedMidBody)
        }
    }

    /// Decodes `input`, appending body bytes to `out`; returns how many bytes of `input` it used.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, WireError> {
        match self.framing {
            Framing::UntilClose => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
            Framing::Length(_) => {
                let take = input
                    .len()
                    .min(usize::try_from(self.left).unwrap_or(usize::MAX));
                out.extend_from_slice(&input[..take]);
                self.left -= take as u64;
                Ok(take)
            }
            Framing::Chunked => self.chunked.decode(input, out).map_err(WireError::Chunked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::limits::MAX_CHUNK_LINE;

    #[test]
    fn head_needs_more_then_parses() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nMcp-Session-Id: abc\r\n\r\nrest";
        assert!(parse_head(&raw[..20]).unwrap().is_none());
        let (head, used) = parse_head(raw).unwrap().unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(&raw[used..], b"rest");
        assert_eq!(head.header("mcp-session-id"), Some("abc"));
        assert_eq!(head.media_type(), "text/event-stream");
        assert_eq!(head.framing().unwrap(), Framing::UntilClose);
    }

    #[test]
    fn malformed_and_oversized_heads_are_errors() {
        assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 2000 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n").is_err());
        let mut big = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        big.resize(MAX_RESPONSE_HEAD_BYTES + 1, b'a');
        let e = parse_head(&big).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        let (h, _) =
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n")
                .unwrap()
                .unwrap();
        assert!(h.framing().is_err());
    }

    #[test]
    fn chunked_bodies_decode_across_any_split() {
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for split in 0..body.len() {
            let mut d = BodyDecoder::new(Framing::Chunked);
            let mut out = Vec::new();
            let a = d.feed(&body[..split], &mut out).unwrap();
            let b = d.feed(&body[a..], &mut out).unwrap();
            assert_eq!(out, b"hello, world");
            assert!(d.is_done());
            assert_eq!(&body[a + b..], b"NEXT", "split at {split}");
        }
        for bad in [&b"zz\r\n"[..], b"5\r\nhelloXX", b"5\nhello"] {
            let mut d = BodyDecoder::new(Framing::Chunked);
            assert!(d.feed(bad, &mut Vec::new()).is_err(), "{bad:?}");
        }
        let mut d = BodyDecoder::new(Framing::Chunked);
        let long = vec![b'1'; MAX_CHUNK_LINE + 1];
        assert!(d.feed(&long, &mut Vec::new()).is_err());
        let mut d = BodyDecoder::new(Framing::Chunked);
        d.feed(b"5\r\nhel", &mut Vec::new()).unwrap();
        assert!(d.at_eof().is_err());
    }

    #[test]
    fn length_bodies_stop_at_the_length() {
        let mut d = BodyDecoder::new(Framing::Length(3));
        let mut out = Vec::new();
        assert_eq!(d.feed(b"abcdef", &mut out).unwrap(), 3);
        assert_eq!(out, b"abc");
        assert!(d.is_done());
        assert!(BodyDecoder::new(Framing::UntilClose).at_eof().is_ok());
    }
}
