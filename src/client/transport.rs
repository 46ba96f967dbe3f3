//! The seam between the client's protocol logic and a transport: the trait stdio and HTTP
//! implement.

use super::answers::Answers;
use super::core::{Event, Outgoing};
use super::error::ClientError;
use crate::json::Value;
use std::time::Duration;

/// Moves messages to a server and back. Implemented by [`StdioTransport`](super::stdio::StdioTransport) and
/// [`HttpTransport`](super::http::HttpTransport); the protocol logic stays in [`Client`](super::Client) and [`core`](super::core).
pub trait Transport: Send {
    /// Sends request `out` and returns the server's response to it (the whole JSON-RPC message),
    /// passing notifications that arrive meanwhile to `on_event`. Fails with
    /// [`ClientError::Timeout`] when no answer arrives within `timeout`.
    fn request(
        &mut self,
        out: &Outgoing,
        timeout: Duration,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError>;

    /// Sends a notification.
    fn notify(&mut self, out: &Outgoing, timeout: Duration) -> Result<(), ClientError>;

    /// Ends the conversation (stdio: close stdin, then kill; HTTP: DELETE the session).
    fn close(&mut self) -> Result<(), ClientError>;

    /// Forgets the session before a fresh `initialize` (HTTP); nothing for other transports.
    fn reset_session(&mut self) {}

    /// How to answer the server's requests (set once, before the handshake).
    fn set_answers(&mut self, answers: Answers) {
        let _ = answers;
    }

    /// The session the server assigned (HTTP legacy era), if any.
    fn session_id(&self) -> Option<&str> {
        None
    }

    /// Whether a request that timed out should be followed by `notifications/cancelled`.
    /// Modern HTTP cancels by closing the response stream instead (which a timeout already did).
    fn cancels_with_notification(&self, timed_out: &Outgoing) -> bool {
        let _ = timed_out;
        true
    }
}
