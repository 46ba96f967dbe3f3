//! One HTTP/1.1 request on a fresh connection, its whole answer read under one deadline and a
//! body cap: the exchange both OAuth sides make with an authorization server (the client's
//! metadata, registration and token requests; the resource server's key sets, metadata and
//! introspection).
//!
//! Every step (resolving, connecting, sending, each read) is bounded by the deadline, so a server
//! that answers nothing, drips a byte a second or sends an endless body is cut off; interim `1xx`
//! heads are skipped; a redirect is not followed (a `3xx` comes back as it is); the connection is
//! closed after the answer. Not for MCP traffic: that goes through [`super::http`], which keeps
//! connections alive and streams SSE.
//!
//! [`exchange`] speaks plain http only (the resource server's fetches); [`exchange_with`] speaks
//! https too, through the TLS helper (the client's OAuth requests).

use super::stream::{self, ConnectError};
use super::tls::TlsConfig;
use crate::http1::response::{self, BodyDecoder, Framing, ResponseHead, WireError};
use crate::http1::url::Url;
use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// Bytes read from the socket per call.
const READ_CHUNK: usize = 16 * 1024;

/// What one exchange sends, and its bounds.
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    /// Header lines besides `Host`, `Connection` and `Content-Length`, which the exchange writes;
    /// values must be free of CR and LF.
    pub headers: &'a [(&'a str, String)],
    pub body: &'a [u8],
    /// The longest wait for one connection attempt (each address of the host in turn).
    pub connect_timeout: Duration,
    /// When the whole exchange must be over.
    pub deadline: Instant,
    /// The largest body accepted.
    pub max_body: usize,
}

impl Request<'_> {
    /// The request as sent: its head, with `Connection: close` and, when there is a body or the
    /// method is `POST`, its `Content-Length`, then the body.
    fn to_bytes(&self) -> Vec<u8> {
        let mut headers = self.headers.to_vec();
        headers.push(("Connection", "close".into()));
        if !self.body.is_empty() || self.method == "POST" {
            headers.push(("Content-Length", self.body.len().to_string()));
        }
        let mut bytes = response::request_head(self.method, self.url, &headers);
        bytes.extend_from_slice(self.body);
        bytes
    }
}

/// Why an exchange brought no answer.
#[derive(Debug)]
pub enum Failure {
    /// The host does not resolve, or resolves to nothing.
    Resolve(String),
    /// No address accepted the connection.
    Connect(String),
    /// The deadline passed.
    Timeout,
    /// Sending or reading failed.
    Io(String),
    /// The connection closed before a whole head.
    ClosedBeforeHead,
    /// The connection closed in the middle of the body.
    Truncated(WireError),
    /// A malformed head, framing or chunked body.
    Malformed(WireError),
    /// The body is larger than the cap (given).
    TooLarge(usize),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Resolve(why) => write!(f, "cannot resolve the host: {why}"),
            Failure::Connect(why) => write!(f, "cannot connect: {why}"),
            Failure::Timeout => f.write_str("no complete answer in time"),
            Failure::Io(why) => f.write_str(why),
            Failure::Truncated(e) | Failure::Malformed(e) => e.fmt(f),
            Failure::ClosedBeforeHead => {
                f.write_str("the server closed the connection without answering")
            }
            Failure::TooLarge(max) => write!(f, "the answer is larger than {max} bytes"),
        }
    }
}

/// Sends `request` over plain http and reads its answer: the final head and the whole decoded
/// body. An `https://` URL is refused.
pub fn exchange(request: &Request<'_>) -> Result<(ResponseHead, Vec<u8>), Failure> {
    exchange_with(request, None)
}

/// As [`exchange`], and `https://` URLs go through the TLS helper configured by `tls`.
pub fn exchange_with(
    request: &Request<'_>,
    tls: Option<&TlsConfig>,
) -> Result<(ResponseHead, Vec<u8>), Failure> {
    let deadline = request.deadline;
    let left = || {
        let left = deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left).ok_or(Failure::Timeout)
    };
    let io = |e: std::io::Error| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failure::Timeout,
        _ => Failure::Io(e.to_string()),
    };
    let mut stream = stream::connect(request.url, tls, request.connect_timeout, deadline).map_err(
        |e| match e {
            ConnectError::Resolve(why) => Failure::Resolve(why),
            ConnectError::Timeout(_) | ConnectError::HandshakeTimeout(_) => Failure::Timeout,
            other => Failure::Connect(other.to_string()),
        },
    )?;
    stream.set_write_timeout(Some(left()?)).map_err(io)?;
    stream.write_all(&request.to_bytes()).map_err(io)?;
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut read = |into: &mut Vec<u8>| -> Result<usize, Failure> {
        stream.set_read_timeout(Some(left()?)).map_err(io)?;
        let n = stream.read(&mut chunk).map_err(io)?;
        into.extend_from_slice(&chunk[..n]);
        Ok(n)
    };
    let mut buffer = Vec::new();
    let (head, used) = loop {
        match response::parse_head(&buffer).map_err(Failure::Malformed)? {
            Some((head, used)) if (100..200).contains(&head.status) => {
                buffer.drain(..used);
            }
            Some(found) => break found,
            None => {
                if read(&mut buffer)? == 0 {
                    return Err(Failure::ClosedBeforeHead);
                }
            }
        }
    };
    let framing = head.framing().map_err(Failure::Malformed)?;
    if matches!(framing, Framing::Length(n) if n > request.max_body as u64) {
        return Err(Failure::TooLarge(request.max_body));
    }
    let mut decoder = BodyDecoder::new(framing);
    let mut body = Vec::new();
    let mut pending = buffer.split_off(used);
    loop {
        let mut offset = 0;
        while offset < pending.len() && !decoder.is_done() {
            offset += decoder
                .feed(&pending[offset..], &mut body)
                .map_err(Failure::Malformed)?;
            if body.len() > request.max_body {
                return Err(Failure::TooLarge(request.max_body));
            }
        }
        if decoder.is_done() {
            return Ok((head, body));
        }
        pending.clear();
        if read(&mut pending)? == 0 {
            decoder.at_eof().map_err(Failure::Truncated)?;
            return Ok((head, body));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn plain_exchanges_refuse_https() {
        let url = Url::parse_client("https://127.0.0.1:9/").unwrap();
        let err = exchange(&Request {
            method: "GET",
            url: &url,
            headers: &[],
            body: b"",
            connect_timeout: Duration::from_secs(1),
            deadline: Instant::now() + Duration::from_secs(1),
            max_body: 10,
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot connect: https is not spoken here (plain http only)"
        );
    }

    /// Answers one connection with `reply` after reading the request.
    fn serve_once(reply: &'static [u8]) -> Url {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let _ = s.read(&mut [0u8; 4096]);
            let _ = s.write_all(reply);
        });
        Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap()
    }

    fn run(url: &Url, max_body: usize) -> Result<(ResponseHead, Vec<u8>), Failure> {
        exchange(&Request {
            method: "GET",
            url,
            headers: &[],
            body: b"",
            connect_timeout: Duration::from_secs(2),
            deadline: Instant::now() + Duration::from_secs(2),
            max_body,
        })
    }

    #[test]
    fn interim_heads_are_skipped_and_redirects_come_back_as_they_are() {
        let url = serve_once(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        );
        let (head, body) = run(&url, 10).unwrap();
        assert_eq!((head.status, &body[..]), (200, &b"ok"[..]));
        let url = serve_once(
            b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(run(&url, 10).unwrap().0.status, 302);
    }

    #[test]
    fn a_declared_length_over_the_cap_is_refused_before_reading() {
        let url = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n");
        let err = run(&url, 10).unwrap_err();
        assert_eq!(err.to_string(), "the answer is larger than 10 bytes");
        let url = serve_once(b"HTTP/1.1 200 OK\r\nContent-Le");
        assert!(matches!(run(&url, 10), Err(Failure::ClosedBeforeHead)));
    }
}
