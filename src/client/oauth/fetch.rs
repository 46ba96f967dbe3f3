//! One HTTP exchange with an authorization server or a metadata endpoint: a GET or a form/JSON
//! POST made with [`oneshot`](super::super::oneshot) (a fresh connection, the whole answer read
//! under a size cap and a deadline, redirects never followed: a 3xx comes back as it is), its
//! failures turned into the client's errors.

use super::super::error::ClientError;
use super::super::oneshot::{self, Failure};
use super::super::tls::TlsConfig;
use crate::http1::response::ResponseHead;
use crate::http1::url::Url;
use crate::voice::shortened;
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
        shortened(&String::from_utf8_lossy(&self.body), 200)
    }
}

/// How long an exchange may take, and how `https://` is spoken.
#[derive(Clone, Debug)]
pub struct Fetcher {
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub tls: TlsConfig,
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
        let target =
            Url::parse_client(url).map_err(|e| ClientError::OAuth(format!("{what}: {e}")))?;
        let deadline = Instant::now() + self.timeout;
        let mut all: Vec<(&str, String)> = vec![
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
        let request = oneshot::Request {
            method,
            url: &target,
            headers: &all,
            body: payload.as_bytes(),
            connect_timeout: self.connect_timeout,
            deadline,
            max_body: MAX_OAUTH_BODY_BYTES,
        };
        let (head, body) =
            oneshot::exchange_with(&request, Some(&self.tls)).map_err(|e| match e {
                Failure::Timeout => ClientError::Timeout {
                    method: what.to_owned(),
                    after: self.timeout,
                },
                Failure::Resolve(_) | Failure::Connect(_) => {
                    ClientError::Connect(format!("{what} ({target}): {e}"))
                }
                Failure::Io(_) | Failure::ClosedBeforeHead | Failure::Truncated(_) => {
                    ClientError::Closed(format!("{what} ({target}): {e}"))
                }
                Failure::Malformed(_) => ClientError::Protocol(format!("{what} ({target}): {e}")),
                Failure::TooLarge(_) => ClientError::OAuth(format!("{what} ({target}): {e}")),
            })?;
        Ok(Response { head, body })
    }
}
