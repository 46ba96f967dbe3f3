//! The client's error type: every way a call to an MCP server can fail, each carrying what the
//! server said or what the client saw.

use crate::http1::url::UrlError;
use crate::json::Value;
use crate::jsonrpc::RpcError;
use std::fmt;
use std::time::Duration;

/// Why a client operation failed.
#[derive(Debug, Clone)]
pub enum ClientError {
    /// The tool ran and reported failure (`isError: true`). `text` joins its text blocks;
    /// `result` is the whole result as the server sent it.
    Tool {
        tool: String,
        text: String,
        result: Value,
    },
    /// The server answered `method` with a JSON-RPC error.
    Rpc { method: String, error: RpcError },
    /// The server wants credentials (HTTP 401 or 403); `challenge` is its `WWW-Authenticate`.
    /// `token_sent`: a bearer token went with the request, so the server refused that token.
    AuthRequired {
        status: u16,
        challenge: Option<String>,
        token_sent: bool,
    },
    /// Logging in failed (OAuth discovery, registration, the grant, or a server that keeps
    /// refusing the tokens it gets); the text names the step and what was wrong.
    OAuth(String),
    /// The server could not be reached or started.
    Connect(String),
    /// No answer to `method` within `after`.
    Timeout { method: String, after: Duration },
    /// The connection or the server process ended before the answer came.
    Closed(String),
    /// The server sent something this client cannot use: invalid JSON, a reply over the size cap,
    /// a malformed HTTP response, a result of the wrong shape.
    Protocol(String),
    /// An HTTP status that carries no JSON-RPC error (`body` is the start of the body).
    Http { status: u16, body: String },
    /// What was asked is outside what this client does (a malformed URL, another scheme).
    Unsupported(String),
    /// HTTP 404 for a live session: the server ended it. The client re-initializes once and
    /// replays; callers see this only if the fresh session is refused too.
    SessionExpired,
}

impl ClientError {
    /// A short machine-readable name of the variant (the `kind` of the CLI's JSON errors).
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Tool { .. } => "tool_error",
            ClientError::Rpc { .. } => "rpc_error",
            ClientError::AuthRequired { .. } => "auth_required",
            ClientError::OAuth(_) => "oauth_failed",
            ClientError::Connect(_) => "connect_failed",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Closed(_) => "closed",
            ClientError::Protocol(_) => "protocol_error",
            ClientError::Http { .. } => "http_error",
            ClientError::Unsupported(_) => "unsupported",
            ClientError::SessionExpired => "session_expired",
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Tool { tool, text, .. } => write!(f, "tool {tool} failed: {text}"),
            ClientError::Rpc { method, error } => write!(
                f,
                "server answered {method} with error {}: {}",
                error.code, error.message
            ),
            ClientError::AuthRequired {
                status,
                challenge,
                token_sent,
            } => {
                match token_sent {
                    true => write!(f, "the server refused the bearer token (HTTP {status}")?,
                    false => write!(f, "server requires authorization (HTTP {status}")?,
                }
                if let Some(c) = challenge {
                    write!(f, ", WWW-Authenticate: {c}")?;
                }
                f.write_str(match token_sent {
                    true => "); check that --token-file or --token-env gives the token the server expects",
                    false => "); give a bearer token with --token-file or --token-env",
                })
            }
            ClientError::Connect(m) | ClientError::Closed(m) | ClientError::Protocol(m) => {
                f.write_str(m)
            }
            ClientError::Unsupported(m) => f.write_str(m),
            ClientError::OAuth(m) => write!(f, "logging in failed: {m}"),
            ClientError::Timeout { method, after } => write!(
                f,
                "no answer to {method} within {:.1} s",
                after.as_secs_f64()
            ),
            ClientError::Http { status, body } if body.is_empty() => {
                write!(f, "server answered HTTP {status}")
            }
            ClientError::Http { status, body } => {
                write!(f, "server answered HTTP {status}: {body}")
            }
            ClientError::SessionExpired => {
                f.write_str("the server ended the session (HTTP 404) and refused a fresh one")
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// A URL the client cannot use: its words, as an unsupported request.
impl From<UrlError> for ClientError {
    fn from(e: UrlError) -> ClientError {
        ClientError::Unsupported(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_what_the_server_said() {
        let e = ClientError::Rpc {
            method: "tools/call".into(),
            error: RpcError::new(-32602, "unknown tool 'x'"),
        };
        assert_eq!(
            e.to_string(),
            "server answered tools/call with error -32602: unknown tool 'x'"
        );
        let e = ClientError::Tool {
            tool: "git_log".into(),
            text: "not a repository".into(),
            result: Value::Null,
        };
        assert_eq!(e.to_string(), "tool git_log failed: not a repository");
        assert_eq!(e.kind(), "tool_error");
        let e = ClientError::AuthRequired {
            status: 401,
            challenge: Some("Bearer realm=\"mcp\"".into()),
            token_sent: false,
        };
        assert_eq!(
            e.to_string(),
            "server requires authorization (HTTP 401, WWW-Authenticate: Bearer realm=\"mcp\"); give a bearer token with --token-file or --token-env"
        );
        let e = ClientError::AuthRequired {
            status: 403,
            challenge: None,
            token_sent: true,
        };
        assert_eq!(
            e.to_string(),
            "the server refused the bearer token (HTTP 403); check that --token-file or --token-env gives the token the server expects"
        );
        assert_eq!(e.kind(), "auth_required");
    }
}
