//! The HTTP/1.1 request-head parser: bytes in, a complete head, "need more" or a typed error out.
//!
//! It does no I/O, so sockets, tests and fuzzing share it. It is strict where leniency enables
//! request smuggling (CRLF line ends only, no whitespace before a header colon, no obsolete line
//! folding, one unambiguous body length) and bounded by the limits in [`super::limits`].

use super::limits::{MAX_BODY_BYTES, MAX_HEADERS, MAX_HEAD_BYTES, MAX_REQUEST_LINE};
use std::fmt;

/// What parsing a buffer gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Status<T> {
    /// The head is complete; the `usize` is its length in bytes (the body starts there).
    Complete(T, usize),
    /// The buffer holds a valid prefix of a head; read more.
    Partial,
}

/// A parsed request head borrowing from the buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'b> {
    pub method: &'b str,
    /// The request target exactly as sent (origin form `/path?query`, or `*`, or absolute form).
    pub target: &'b str,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    pub headers: Vec<Header<'b>>,
}

/// One header field. The name is compared case-insensitively; the value is trimmed of surrounding
/// whitespace and may hold obs-text bytes (0x80–0xFF), hence bytes.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Header<'b> {
    pub name: &'b str,
    pub value: &'b [u8],
}

/// How the request body is delimited.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum BodyLength {
    /// No body (no Content-Length, no Transfer-Encoding).
    Empty,
    /// Exactly this many bytes (at most [`MAX_BODY_BYTES`]).
    Fixed(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// Why a request head was refused. Every variant ends the connection: after a malformed head the
/// server cannot know where the next request starts.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum HeadError {
    /// The request line is longer than [`MAX_REQUEST_LINE`] (414).
    RequestLineTooLong,
    /// The head is larger than [`MAX_HEAD_BYTES`] (431).
    HeadTooLarge,
    /// More than [`MAX_HEADERS`] header fields (431).
    TooManyHeaders,
    /// The request line is not `token SP target SP HTTP/1.x` (400).
    BadRequestLine(&'static str),
    /// Not HTTP/1.0 or HTTP/1.1 (505).
    UnsupportedVersion,
    /// A header line breaks the field grammar (400).
    BadHeader(&'static str),
    /// A line ends in a bare LF or a bare CR (400).
    BadLineEnding,
    /// Content-Length is not a decimal number, or two differ (400).
    BadContentLength,
    /// Both Content-Length and Transfer-Encoding (400; a classic smuggling vector).
    LengthAndTransferEncoding,
    /// A transfer coding other than a single `chunked` (501), or chunked on HTTP/1.0 (400).
    UnsupportedTransferEncoding,
    /// Content-Length above [`MAX_BODY_BYTES`] (413).
    BodyTooLarge,
}

impl HeadError {
    /// The status code the server answers with.
    pub fn status(&self) -> u16 {
        match self {
            HeadError::RequestLineTooLong => 414,
            HeadError::HeadTooLarge | HeadError::TooManyHeaders => 431,
            HeadError::UnsupportedVersion => 505,
            HeadError::UnsupportedTransferEncoding => 501,
            HeadError::BodyTooLarge => 413,
            _ => 400,
        }
    }
}

impl fmt::Display for HeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadError::RequestLineTooLong => {
                write!(f, "request line longer than {MAX_REQUEST_LINE} bytes")
            }
            HeadError::HeadTooLarge => write!(f, "request head larger than {MAX_HEAD_BYTES} bytes"),
            HeadError::TooManyHeaders => write!(f, "more than {MAX_HEADERS} header fields"),
            HeadError::BadRequestLine(why) => write!(f, "malformed request line: {why}"),
            HeadError::UnsupportedVersion => {
                f.write_str("HTTP version must be HTTP/1.0 or HTTP/1.1")
            }
            HeadError::BadHeader(why) => write!(f, "malformed header field: {why}"),
            HeadError::BadLineEnding => f.write_str("lines must end with CRLF"),
            HeadError::BadContentLength => {
                f.write_str("Content-Length must be one decimal number (repeats must agree)")
            }
            HeadError::LengthAndTransferEncoding => {
                f.write_str("Content-Length and Transfer-Encoding must not both be sent")
            }
            HeadError::UnsupportedTransferEncoding => {
                f.write_str("Transfer-Encoding must be exactly `chunked` (and HTTP/1.1)")
            }
            HeadError::BodyTooLarge => write!(f, "body larger than {MAX_BODY_BYTES} bytes"),
        }
    }
}

impl std::error::Error for HeadError {}

/// A header that must appear at most once appeared more often (its name, as asked for).
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct RepeatedHeader(pub String);

impl fmt::Display for RepeatedHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "header {} must be sent at most once", self.0)
    }
}

impl std::error::Error for RepeatedHeader {}

/// RFC 9110 `tchar`: the bytes of methods and header names.
static TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        i += 1;
    }
    table
};

/// Bytes allowed in a request target: visible ASCII (RFC 3986 characters and then some; the router
/// compares targets exactly, so leniency here cannot widen what is served).
static TARGET: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0x21;
    while i < 0x7f {
        table[i] = true;
        i += 1;
    }
    table
};

/// RFC 9110 field-value bytes: visible ASCII, space, tab and obs-text; never CR, LF, NUL or DEL.
static FIELD_VALUE: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = (i >= 0x20 && i != 0x7f) || i == b'\t' as usize;
        i += 1;
    }
    table
};

/// Parses a request head from the start of `buf`.
///
/// Returns [`Status::Partial`] while `buf` is a valid prefix within the limits, and an error as soon
/// as the bytes seen cannot start a valid head or a limit is passed.
pub fn parse_head(buf: &[u8]) -> Result<Status<RequestHead<'_>>, HeadError> {
    let Some(line_end) = find_line_end(buf, MAX_REQUEST_LINE)? else {
        check_request_line_prefix(buf)?;
        return Ok(Status::Partial);
    };
    let (method, target, minor_version) = parse_request_line(&buf[..line_end])?;
    let mut pos = line_end + 2;
    let mut headers = Vec::new();
    loop {
        let rest = &buf[pos..];
        // Room left for this line, its CRLF and the final blank line.
        let budget = MAX_HEAD_BYTES.saturating_sub(pos + 4);
        let found = find_line_end(rest, budget).map_err(|e| match e {
            HeadError::RequestLineTooLong => HeadError::HeadTooLarge,
            other => other,
        })?;
        let Some(end) = found else {
            check_header_prefix(rest)?;
            if buf.len() > MAX_HEAD_BYTES {
                return Err(HeadError::HeadTooLarge);
            }
            return Ok(Status::Partial);
        };
        if end == 0 {
            if pos + 2 > MAX_HEAD_BYTES {
                return Err(HeadError::HeadTooLarge);
            }
            let head = RequestHead {
                method,
                target,
                minor_version,
                headers,
            };
            return Ok(Status::Complete(head, pos + 2));
        }
        if headers.len() == MAX_HEADERS {
            return Err(HeadError::TooManyHeaders);
        }
        headers.push(parse_header(&rest[..end])?);
        pos += end + 2;
    }
}

/// Finds the CRLF ending the first line of `buf`, refusing bare CR or LF and lines over `max`.
fn find_line_end(buf: &[u8], max: usize) -> Result<Option<usize>, HeadError> {
    for (i, &b) in buf.iter().enumerate() {
        if b == b'\n' {
            return Err(HeadError::BadLineEnding);
        }
        if b == b'\r' {
            return match buf.get(i + 1) {
                Some(b'\n') if i <= max => Ok(Some(i)),
                Some(b'\n') => Err(HeadError::RequestLineTooLong),
                Some(_) => Err(HeadError::BadLineEnding),
                None if i <= max => Ok(None),
                None => Err(HeadError::RequestLineTooLong),
            };
        }
        if i >= max {
            return Err(HeadError::RequestLineTooLong);
        }
    }
    Ok(None)
}

/// Rejects an incomplete request line early when its bytes already cannot be valid.
fn check_request_line_prefix(buf: &[u8]) -> Result<(), HeadError> {
    let method_len = buf.iter().take_while(|&&b| TOKEN[b as usize]).count();
    match buf.get(method_len) {
        None => Ok(()),
        Some(b' ') if method_len > 0 => Ok(()),
        Some(_) => Err(HeadError::BadRequestLine("method must be a token")),
    }
}

fn parse_request_line(line: &[u8]) -> Result<(&str, &str, u8), HeadError> {
    let method_len = line.iter().take_while(|&&b| TOKEN[b as usize]).count();
    if method_len == 0 || line.get(method_len) != Some(&b' ') {
        return Err(HeadError::BadRequestLine("method must be a token"));
    }
    let rest = &line[method_len + 1..];
    let target_len = rest.iter().take_while(|&&b| TARGET[b as usize]).count();
    if target_len == 0 || rest.get(target_len) != Some(&b' ') {
        return Err(HeadError::BadRequestLine(
            "target must be visible ASCII followed by one space",
        ));
    }
    let version = &rest[target_len + 1..];
    let minor = match version {
        b"HTTP/1.1" => 1,
        b"HTTP/1.0" => 0,
        v if v.len() == 8 && v.starts_with(b"HTTP/") && v[6] == b'.' => {
            return Err(HeadError::UnsupportedVersion)
        }
        _ => return Err(HeadError::BadRequestLine("version must be HTTP/1.x")),
    };
    // Both slices hold only ASCII bytes (checked by the tables above).
    let method = std::str::from_utf8(&line[..method_len])
        .map_err(|_| HeadError::BadRequestLine("method must be a token"))?;
    let target = std::str::from_utf8(&rest[..target_len])
        .map_err(|_| HeadError::BadRequestLine("target must be visible ASCII"))?;
    Ok((method, target, minor))
}

/// Rejects an incomplete header line early (folding, bad name bytes) so garbage is refused at once.
fn check_header_prefix(rest: &[u8]) -> Result<(), HeadError> {
    match rest.first() {
        Some(b' ' | b'\t') => Err(HeadError::BadHeader("obsolete line folding")),
        Some(b'\r') | None => Ok(()),
        Some(_) => {
            let name_len = rest.iter().take_while(|&&b| TOKEN[b as usize]).count();
            match rest.get(name_len) {
                None | Some(b':') => Ok(()),
                Some(_) => Err(HeadError::BadHeader(
                    "name must be a token followed directly by a colon",
                )),
            }
        }
    }
}

fn parse_header(line: &[u8]) -> Result<Header<'_>, HeadError> {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        return Err(HeadError::BadHeader("obsolete line folding"));
    }
    let name_len = line.iter().take_while(|&&b| TOKEN[b as usize]).count();
    if name_len == 0 || line.get(name_len) != Some(&b':') {
        return Err(HeadError::BadHeader(
            "name must be a token followed directly by a colon",
        ));
    }
    let value = &line[name_len + 1..];
    if !value.iter().all(|&b| FIELD_VALUE[b as usize]) {
        return Err(HeadError::BadHeader("value holds a control character"));
    }
    let name = std::str::from_utf8(&line[..name_len])
        .map_err(|_| HeadError::BadHeader("name must be a token"))?;
    Ok(Header {
        name,
        value: trim_ows(value),
    })
}

/// Strips optional whitespace (space, tab) from both ends.
pub fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

impl<'b> RequestHead<'b> {
    /// Every value of header `name` (case-insensitive), in order.
    pub fn values<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'b [u8]> + 's {
        self.headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }

    /// The value of header `name` when it is sent at most once; an error when it is repeated.
    pub fn single(&self, name: &str) -> Result<Option<&'b [u8]>, RepeatedHeader> {
        let mut values = self.values(name);
        let first = values.next();
        match values.next() {
            Some(_) => Err(RepeatedHeader(name.to_owned())),
            None => Ok(first),
        }
    }

    /// True when a comma-separated header `name` lists `token` (case-insensitive).
    pub fn lists_token(&self, name: &str, token: &str) -> bool {
        self.values(name)
            .flat_map(|v| v.split(|&b| b == b','))
            .any(|item| trim_ows(item).eq_ignore_ascii_case(token.as_bytes()))
    }

    /// Whether the connection may be reused after this request (RFC 9112 §9.3).
    pub fn keep_alive(&self) -> bool {
        if self.lists_token("connection", "close") {
            return false;
        }
        self.minor_version == 1 || self.lists_token("connection", "keep-alive")
    }

    /// How the body is delimited, refusing every ambiguous combination (RFC 9112 §6.3).
    pub fn body_length(&self) -> Result<BodyLength, HeadError> {
        let mut codings = self
            .values("transfer-encoding")
            .flat_map(|v| v.split(|&b| b == b','))
            .map(trim_ows)
            .peekable();
        if codings.peek().is_some() {
            if self.values("content-length").next().is_some() {
                return Err(HeadError::LengthAndTransferEncoding);
            }
            let first = codings.next().unwrap_or_default();
            if !first.eq_ignore_ascii_case(b"chunked")
                || codings.next().is_some()
                || self.minor_version == 0
            {
                return Err(HeadError::UnsupportedTransferEncoding);
            }
            return Ok(BodyLength::Chunked);
        }
        let mut length: Option<usize> = None;
        for item in self
            .values("content-length")
            .flat_map(|v| v.split(|&b| b == b','))
        {
            let n = parse_decimal(trim_ows(item)).ok_or(HeadError::BadContentLength)?;
            if length.is_some_and(|l| l != n) {
                return Err(HeadError::BadContentLength);
            }
            length = Some(n);
        }
        match length {
            None | Some(0) => Ok(BodyLength::Empty),
            Some(n) if n > MAX_BODY_BYTES => Err(HeadError::BodyTooLarge),
            Some(n) => Ok(BodyLength::Fixed(n)),
        }
    }
}

/// A non-empty run of ASCII digits as a number; values past `usize` saturate (they are over every
/// limit anyway), anything else is `None`.
fn parse_decimal(digits: &[u8]) -> Option<usize> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0usize, |n, &d| {
        n.saturating_mul(10).saturating_add(usize::from(d - b'0'))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(buf: &[u8]) -> (RequestHead<'_>, usize) {
        match parse_head(buf) {
            Ok(Status::Complete(h, n)) => (h, n),
            other => panic!("expected a complete head, got {other:?}"),
        }
    }

    #[test]
    fn parses_a_post_with_headers() {
        let buf =
            b"POST /mcp?x=1 HTTP/1.1\r\nHost: localhost:7330\r\nContent-Length:  5 \r\n\r\nhello";
        let (head, n) = complete(buf);
        assert_eq!(head.method, "POST");
        assert_eq!(head.target, "/mcp?x=1");
        assert_eq!(head.minor_version, 1);
        assert_eq!(&buf[n..], b"hello");
        assert_eq!(head.single("HOST"), Ok(Some(&b"localhost:7330"[..])));
        assert_eq!(head.body_length(), Ok(BodyLength::Fixed(5)));
        assert!(head.keep_alive());
    }

    #[test]
    fn every_strict_prefix_is_partial() {
        let buf = b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n";
        for end in 0..buf.len() {
            assert_eq!(parse_head(&buf[..end]), Ok(Status::Partial), "prefix {end}");
        }
        complete(buf);
    }

    #[test]
    fn refuses_bare_line_feeds_and_carriage_returns() {
        for buf in [
            &b"GET / HTTP/1.1\nHost: a\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: a\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
        ] {
            assert_eq!(parse_head(buf), Err(HeadError::BadLineEnding));
        }
    }

    #[test]
    fn refuses_malformed_request_lines() {
        for buf in [
            &b"GET  / HTTP/1.1\r\n\r\n"[..],
            b" GET / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1 \r\n\r\n",
            b"GET / FTP/1.1\r\n\r\n",
            b"G(T / HTTP/1.1\r\n\r\n",
            b"GET /\x7f HTTP/1.1\r\n\r\n",
        ] {
            assert!(
                matches!(parse_head(buf), Err(HeadError::BadRequestLine(_))),
                "{:?}",
                String::from_utf8_lossy(buf)
            );
        }
        assert_eq!(
            parse_head(b"GET / HTTP/2.0\r\n\r\n"),
            Err(HeadError::UnsupportedVersion)
        );
        assert!(matches!(
            parse_head(b"G{"),
            Err(HeadError::BadRequestLine(_))
        ));
    }

    #[test]
    fn refuses_malformed_headers() {
        for buf in [
            &b"GET / HTTP/1.1\r\nHost : a\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
            b"GET / HTTP/1.1\r\n: a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n",
            b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        ] {
            assert!(
                matches!(parse_head(buf), Err(HeadError::BadHeader(_))),
                "{:?}",
                String::from_utf8_lossy(buf)
            );
        }
    }

    #[test]
    fn request_line_limit_edge() {
        let fill = |len: usize| {
            let target = "/".repeat(len - "GET  HTTP/1.1".len());
            format!("GET {target} HTTP/1.1\r\n\r\n")
        };
        let at_limit = fill(MAX_REQUEST_LINE);
        complete(at_limit.as_bytes());
        let over = fill(MAX_REQUEST_LINE + 1);
        assert_eq!(
            parse_head(over.as_bytes()),
            Err(HeadError::RequestLineTooLong)
        );
        // An unterminated line is refused as soon as it passes the limit.
        let partial = vec![b'A'; MAX_REQUEST_LINE + 1];
        assert_eq!(parse_head(&partial), Err(HeadError::RequestLineTooLong));
        assert_eq!(
            parse_head(&partial[..MAX_REQUEST_LINE]),
            Ok(Status::Partial)
        );
    }

    #[test]
    fn head_size_limit_edge() {
        let with_head_len = |total: usize| {
            let start = "GET / HTTP/1.1\r\nX: ";
            let pad = "a".repeat(total - start.len() - 4);
            format!("{start}{pad}\r\n\r\n")
        };
        let at_limit = with_head_len(MAX_HEAD_BYTES);
        let (_, n) = complete(at_limit.as_bytes());
        assert_eq!(n, MAX_HEAD_BYTES);
        let over = with_head_len(MAX_HEAD_BYTES + 1);
        assert_eq!(parse_head(over.as_bytes()), Err(HeadError::HeadTooLarge));
        let unterminated = &over.as_bytes()[..over.len() - 4];
        assert_eq!(parse_head(unterminated), Err(HeadError::HeadTooLarge));
    }

    #[test]
    fn header_count_limit_edge() {
        let with_headers = |count: usize| {
            let mut s = String::from("GET / HTTP/1.1\r\n");
            for i in 0..count {
                s.push_str(&format!("X-{i}: v\r\n"));
            }
            s + "\r\n"
        };
        let at_limit = with_headers(MAX_HEADERS);
        let (head, _) = complete(at_limit.as_bytes());
        assert_eq!(head.headers.len(), MAX_HEADERS);
        assert_eq!(
            parse_head(with_headers(MAX_HEADERS + 1).as_bytes()),
            Err(HeadError::TooManyHeaders)
        );
    }

    fn body_length_of(headers: &str) -> Result<BodyLength, HeadError> {
        let buf = format!("POST / HTTP/1.1\r\n{headers}\r\n");
        let (head, _) = complete(buf.as_bytes());
        head.body_length()
    }

    #[test]
    fn body_length_refuses_smuggling_shapes() {
        assert_eq!(body_length_of(""), Ok(BodyLength::Empty));
        assert_eq!(
            body_length_of("Content-Length: 3\r\nContent-Length: 3\r\n"),
            Ok(BodyLength::Fixed(3))
        );
        assert_eq!(
            body_length_of("Content-Length: 3, 3\r\n"),
            Ok(BodyLength::Fixed(3))
        );
        assert_eq!(
            body_length_of("Transfer-Encoding: Chunked\r\n"),
            Ok(BodyLength::Chunked)
        );
        let refused = [
            (
                "Content-Length: 3\r\nContent-Length: 4\r\n",
                HeadError::BadContentLength,
            ),
            ("Content-Length: 3, 4\r\n", HeadError::BadContentLength),
            ("Content-Length: +3\r\n", HeadError::BadContentLength),
            ("Content-Length: 0x3\r\n", HeadError::BadContentLength),
            ("Content-Length: \r\n", HeadError::BadContentLength),
            (
                "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                HeadError::LengthAndTransferEncoding,
            ),
            (
                "Transfer-Encoding: gzip, chunked\r\n",
                HeadError::UnsupportedTransferEncoding,
            ),
            (
                "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                HeadError::UnsupportedTransferEncoding,
            ),
            (
                "Transfer-Encoding: xchunked\r\n",
                HeadError::UnsupportedTransferEncoding,
            ),
            (
                "Content-Length: 99999999999999999999999999\r\n",
                HeadError::BodyTooLarge,
            ),
        ];
        for (headers, err) in refused {
            assert_eq!(body_length_of(headers), Err(err), "{headers:?}");
        }
    }

    #[test]
    fn body_limit_edge() {
        assert_eq!(
            body_length_of(&format!("Content-Length: {MAX_BODY_BYTES}\r\n")),
            Ok(BodyLength::Fixed(MAX_BODY_BYTES))
        );
        assert_eq!(
            body_length_of(&format!("Content-Length: {}\r\n", MAX_BODY_BYTES + 1)),
            Err(HeadError::BodyTooLarge)
        );
    }

    #[test]
    fn chunked_needs_http_1_1_and_keep_alive_follows_the_version() {
        let (head, _) = complete(b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(
            head.body_length(),
            Err(HeadError::UnsupportedTransferEncoding)
        );
        assert!(!head.keep_alive());
        let (head, _) = complete(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(head.keep_alive());
        let (head, _) = complete(b"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n");
        assert!(!head.keep_alive());
    }
}
