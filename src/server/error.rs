//! [`RequestError`]: how a resource read, prompt or completion of a server fails; the client hears
//! it as a JSON-RPC error (unlike a tool's failure, which is an `isError` result).

use crate::jsonrpc::{code, RpcError};
use std::fmt;

/// What kind of failure, which decides the JSON-RPC code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestErrorKind {
    /// The client asked for something that does not exist or is not valid: -32602. (Revisions up
    /// to 2025-11-25 suggest -32002 for a missing resource; 2026-07-28 forbids it and uses -32602,
    /// which the product sends in every revision.)
    Invalid,
    /// The server failed: -32603.
    Failed,
}

/// A server's refusal or failure, with the message the client sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError {
    kind: RequestErrorKind,
    message: String,
}

impl RequestError {
    /// The request is not valid (-32602), e.g. an argument names nothing that exists.
    pub fn invalid(message: impl Into<String>) -> RequestError {
        RequestError {
            kind: RequestErrorKind::Invalid,
            message: message.into(),
        }
    }

    /// The resource `uri` does not exist (-32602).
    pub fn not_found(uri: &str) -> RequestError {
        RequestError::invalid(format!("resource not found: {}", super::uri::quote(uri)))
    }

    /// The server failed (-32603).
    pub fn failed(message: impl Into<String>) -> RequestError {
        RequestError {
            kind: RequestErrorKind::Failed,
            message: message.into(),
        }
    }

    pub fn kind(&self) -> RequestErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub(super) fn to_rpc(&self) -> RpcError {
        let code = match self.kind {
            RequestErrorKind::Invalid => code::INVALID_PARAMS,
            RequestErrorKind::Failed => code::INTERNAL_ERROR,
        };
        RpcError::new(code, self.message.as_str())
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RequestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_codes() {
        assert_eq!(
            RequestError::not_found("x:y").to_rpc().code,
            code::INVALID_PARAMS
        );
        assert_eq!(
            RequestError::failed("boom").to_rpc().code,
            code::INTERNAL_ERROR
        );
        assert_eq!(RequestError::failed("boom").to_string(), "boom");
    }
}
