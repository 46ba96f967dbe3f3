//! One HTTP exchange with an authorization server or a metadata endpoint: a GET or a form/JSON
//! POST on a fresh connection, the whole answer read under a size cap and a deadline, and
//! redirects never followed (a 3xx comes back to the caller as it is).

use super::super::error::ClientError;
use super::super::wire::{self, BodyDecoder, HttpUrl, ResponseHead};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Largest body read from an authorization server or metadata endpoint (metadata documents,
/// token and registration responses are a few KiB; a larger answer is refused, not truncated).
pub const MAX_OAUTH_BODY_BYTES: usize = 256 * 1024;

/// An answer: status, head and the whole body.
#[derive(Debug)]
pub struct Response {
    pub head: ResponseHead,
    pub body: Vec<u8>,
}

impl Response {
    pub fn status(&self) -> u16 {
        self.head.status
    }

    /// The start of the body as text, for error messages.
    pub fn quote(&self) -> String {
        wire::truncate(&String::from_utf8_lossy(&self.body), 200)
    }
}

/// How long an exchange may take.
#[derive(Clone, Copy, Debug)]
pub struct Fetcher {
    pub connect_timeout: Duration,
    pub timeout: Duration,
}

/// What goes in a request body.
pub enum Body<'a> {
    None,
    Form(&'a str),
    Json(&'a str),
}

impl Fetcher {
    /// Sends `method` to `url` with `headers` and `body`; `what` names the exchange in errors.
    pub fn send(
        &self,
        what: &str,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: Body<'_>,
    ) -> Result<Response, ClientError> {
        let target = HttpUrl::parse(url).map_err(|e| match e {
            ClientError::Unsupported(m) => ClientError::OAuth(format!("{what}: {m}")),
            other => other,
        })?;
        let deadline = Instant::now() + self.timeout;
        let mut all: Vec<(&str, String)> = vec![
            ("Connection", "close".into()),
            ("Accept", "application/json".into()),
            (
                "User-Agent",
                format!("agentteams-mcp-client/{}", env!("CARGO_PKG_VERSION")),
            ),
        ];
        all.extend(headers.iter().cloned());
        let payload = match body {
            Body::None => "",
            Body::Form(text) => {
                all.push(("Content-Type", "application/x-www-form-urlencoded".into()));
                text
            }
            Body::Json(text) => {
                all.push(("Content-Type", "application/json".into()));
                text
            }
        };
        if method == "POST" {
            all.push(("Content-Length", payload.len().to_string()));
        }
        let mut bytes = wire::request_head(method, &target, &all);
        bytes.extend_from_slice(payload.as_bytes());
        let mut stream = self.connect(what, &target, deadline)?;
        let io = |e: std::io::Error| match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => ClientError::Timeout {
                method: what.to_owned(),
                after: self.timeout,
            },
            _ => ClientError::Closed(format!("{what} ({target}): {e}")),
        };
        let _ = stream.set_write_timeout(Some(left(deadline, self.timeout, what)?));
        stream.write_all(&bytes).map_err(io)?;
        let cap = wire::MAX_RESPONSE_HEAD_BYTES + MAX_OAUTH_BODY_BYTES;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let (head, used) = loop {
            if let Some(found) = wire::parse_head(&buf)
                .map_err(|e| ClientError::Protocol(format!("{what} ({target}): {e}")))?
            {
                if (100..200).contains(&found.0.status) {
                    buf.drain(..found.1);
                    continue;
                }
                break found;
            }
            let _ = stream.set_read_timeout(Some(left(deadline, self.timeout, what)?));
            match stream.read(&mut chunk).map_err(io)? {
                0 => {
                    return Err(ClientError::Closed(format!(
                        "{what} ({target}): the server closed the connection without answering"
                    )))
                }
                n => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let too_large = || {
            ClientError::OAuth(format!(
                "{what} ({target}): the answer is larger than {MAX_OAUTH_BODY_BYTES} bytes"
            ))
        };
        let framing = head
            .framing()
            .map_err(|e| ClientError::Protocol(format!("{what} ({target}): {e}")))?;
        if matches!(framing, wire::Framing::Length(n) if n > MAX_OAUTH_BODY_BYTES as u64) {
            return Err(too_large());
        }
        let mut decoder = BodyDecoder::new(framing);
        let mut body = Vec::new();
        let mut pending = buf.split_off(used);
        loop {
            if !pending.is_empty() {
                let n = decoder
                    .feed(&pending, &mut body)
                    .map_err(|e| ClientError::Protocol(format!("{what} ({target}): {e}")))?;
                pending.drain(..n);
            }
            if body.len() > MAX_OAUTH_BODY_BYTES || buf.len() > cap {
                return Err(too_large());
            }
            if decoder.is_done() || method == "HEAD" {
                break;
            }
            if pending.is_empty() {
                let _ = stream.set_read_timeout(Some(left(deadline, self.timeout, what)?));
                match stream.read(&mut chunk).map_err(io)? {
                    0 => {
                        decoder
                            .at_eof()
                            .map_err(|e| ClientError::Closed(format!("{what} ({target}): {e}")))?;
                        break;
                    }
                    n => pending.extend_from_slice(&chunk[..n]),
                }
            }
        }
        Ok(Response { head, body })
    }

    fn connect(
        &self,
        what: &str,
        target: &HttpUrl,
        deadline: Instant,
    ) -> Result<TcpStream, ClientError> {
        let addrs = (target.host.as_str(), target.port)
            .to_socket_addrs()
            .map_err(|e| {
                ClientError::Connect(format!("{what}: cannot resolve {}: {e}", target.host))
            })?;
        let mut last = None;
        for addr in addrs {
            let limit = self
                .connect_timeout
                .min(left(deadline, self.timeout, what)?);
            match TcpStream::connect_timeout(&addr, limit) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(ClientError::Connect(match last {
            Some(e) => format!("{what}: cannot connect to {target}: {e}"),
            None => format!("{what}: {} has no address", target.host),
        }))
    }
}

/// Time left before `deadline`, or the timeout error.
fn left(deadline: Instant, timeout: Duration, what: &str) -> Result<Duration, ClientError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(ClientError::Timeout {
            method: what.to_owned(),
            after: timeout,
        });
    }
    Ok(left)
}
