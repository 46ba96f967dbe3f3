//! HTTP/1.1 on the client side, without I/O: `http://` and `https://` URLs, request heads, and an incremental
//! response parser (head, then a body framed by Content-Length, chunked encoding or connection
//! close) that says "complete", "need more" or what was wrong. Chunked bodies go through the
//! server's decoder ([`crate::http::chunked`]).

use super::error::ClientError;
use crate::http::chunked::ChunkedDecoder;
use std::fmt;

/// Largest response head accepted (status line, headers, blank line).
pub const MAX_RESPONSE_HEAD_BYTES: usize = 64 * 1024;

/// Most header fields in one response.
pub const MAX_RESPONSE_HEADERS: usize = 128;

/// The README section that explains reaching an https server through a local TLS proxy.
pub const TLS_PROXY_HINT: &str = "see README.md, section \"TLS\"";

/// A parsed `http://` or `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https://`: the connection goes through the TLS helper ([`super::tls`]).
    pub tls: bool,
    /// Host as written, without brackets for IPv6.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub target: String,
}

impl HttpUrl {
    /// Parses `http://host[:port][/path][?query][#fragment]` (the fragment is dropped): the
    /// plain-http URLs that the resource server's own fetches accept. https and other schemes,
    /// user info and malformed authorities are refused with a message.
    pub fn parse(url: &str) -> Result<HttpUrl, ClientError> {
        let parsed = HttpUrl::parse_client(url)?;
        if parsed.tls {
            return Err(ClientError::Unsupported(format!(
                "URL {url:?}: https is not supported here (plain http only). Run a local TLS proxy and give its http://127.0.0.1 URL ({TLS_PROXY_HINT})"
            )));
        }
        Ok(parsed)
    }

    /// Parses an `http://` or `https://` URL (default ports 80 and 443) for the client, which
    /// speaks https through the TLS helper; otherwise as [`HttpUrl::parse`].
    pub fn parse_client(url: &str) -> Result<HttpUrl, ClientError> {
        let bad = |why: &str| ClientError::Unsupported(format!("URL {url:?}: {why}"));
        let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
        let (tls, rest) = if lower.starts_with("https://") {
            (true, &url[8..])
        } else if lower.starts_with("http://") {
            (false, &url[7..])
        } else {
            return Err(bad("only http:// and https:// URLs are supported"));
        };
        let rest = rest.split('#').next().unwrap_or("");
        let (authority, target) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        if authority.contains('@') {
            return Err(bad(
                "credentials in the URL are not supported; give a bearer token with --token-file or --token-env",
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let end = v6.find(']').ok_or_else(|| bad("unclosed [ in the host"))?;
            let port = match &v6[end + 1..] {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad("junk after ]"))?),
            };
            (&v6[..end], port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if target.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("the path holds spaces or control characters"));
        }
        let port = match port {
            None | Some("") => default_port(tls),
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?,
        };
        Ok(HttpUrl {
            tls,
            host: host.to_owned(),
            port,
            target,
        })
    }

    /// The `Host` header value.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == default_port(self.tls) {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for HttpUrl {
    /// The canonical form: scheme, host, explicit port, target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.to_ascii_lowercase()
        };
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{host}:{}{}", self.port, self.target)
    }
}

/// The port a URL without one means.
fn default_port(tls: bool) -> u16 {
    if tls {
        443
    } else {
        80
    }
}

/// Builds a request head (ending in the blank line). Header values must already be free of CR/LF.
pub fn request_head(method: &str, url: &HttpUrl, headers: &[(&str, String)]) -> Vec<u8> {
    let mut out = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\n",
        url.target,
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

/// A malformed or oversized response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

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
                    .map_err(|_| WireError(format!("Content-Length {v:?} is not a number")))?;
                if lengths.any(|(_, other)| other.trim() != v.trim()) {
                    return Err(WireError("conflicting Content-Length headers".into()));
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
        None if buf.len() > MAX_RESPONSE_HEAD_BYTES => {
            return Err(WireError(format!(
                "response head larger than {MAX_RESPONSE_HEAD_BYTES} bytes"
            )))
        }
        None => return Ok(None),
    };
    if end > MAX_RESPONSE_HEAD_BYTES {
        return Err(WireError(format!(
            "response head larger than {MAX_RESPONSE_HEAD_BYTES} bytes"
        )));
    }
    let text = std::str::from_utf8(&buf[..end - 4])
        .map_err(|_| WireError("response head is not UTF-8".into()))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let code = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return Err(WireError(format!(
            "not an HTTP/1.x status line: {:?}",
            truncate(status_line, 80)
        )));
    }
    let status = code
        .parse::<u16>()
        .ok()
        .filter(|s| (100..600).contains(s))
        .ok_or_else(|| WireError(format!("bad status code {code:?}")))?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .filter(|(n, _)| !n.is_empty() && !n.contains([' ', '\t']))
            .ok_or_else(|| WireError(format!("malformed header line {:?}", truncate(line, 80))))?;
        if headers.len() == MAX_RESPONSE_HEADERS {
            return Err(WireError(format!(
                "more than {MAX_RESPONSE_HEADERS} response headers"
            )));
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

/// The first `max` characters of `s` (for quoting server text in messages).
pub fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
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
            Err(WireError(
                "connection closed in the middle of the body".into(),
            ))
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
            Framing::Chunked => self
                .chunked
                .decode(input, out)
                .map_err(|e| WireError(format!("chunked body: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::limits::MAX_CHUNK_LINE;

    #[test]
    fn urls() {
        let u = HttpUrl::parse("http://localhost:8080/mcp?x=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.target.as_str()),
            ("localhost", 8080, "/mcp?x=1")
        );
        assert_eq!(u.host_header(), "localhost:8080");
        assert_eq!(u.to_string(), "http://localhost:8080/mcp?x=1");
        let u = HttpUrl::parse("HTTP://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.host_header(), "[::1]");
        assert_eq!(HttpUrl::parse("http://h").unwrap().target, "/");
        assert_eq!(HttpUrl::parse("http://h?q").unwrap().target, "/?q");
        let https = HttpUrl::parse("https://example.com/mcp").unwrap_err();
        assert!(
            https.to_string().contains("README.md, section \"TLS\""),
            "{https}"
        );
        let u = HttpUrl::parse_client("HTTPS://Example.com/mcp").unwrap();
        assert!(u.tls);
        assert_eq!((u.port, u.host_header()), (443, "Example.com".to_owned()));
        assert_eq!(u.to_string(), "https://example.com:443/mcp");
        let u = HttpUrl::parse_client("https://[::1]:8443").unwrap();
        assert_eq!(
            (u.host_header(), u.target.as_str()),
            ("[::1]:8443".into(), "/")
        );
        assert!(!HttpUrl::parse_client("http://h:443/").unwrap().tls);
        for (url, why) in [
            ("ftp://x", "only http:// and https:// URLs"),
            ("http://", "no host"),
            ("http://u:p@h/", "credentials in the URL"),
            ("http://h:0/", "port must be"),
            ("http://h:99999/", "port must be"),
            ("http://[::1/", "unclosed ["),
            ("http://h/a b", "spaces or control"),
        ] {
            let e = HttpUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains(why), "{url}: {e}");
        }
    }

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
        assert!(e.0.contains("larger than"), "{e}");
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
