//! The HTTP+SSE transport of revision 2024-11-05, for old clients (off by default,
//! `--legacy-sse`): `GET /sse` opens a session's event stream, whose first event (`endpoint`)
//! names `POST /messages?sessionId=<id>`; every message the client POSTs there is accepted with
//! 202 and its reply, with whatever the call sends before it, arrives on the stream. Closing the
//! stream ends the session.
//!
//! The session lives in the same table as Streamable HTTP sessions (same cap and idle expiry) and
//! its stream is the session's standalone stream of [`crate::http::streams`], written without
//! event ids: the old transport has no resumption, and an `EventSource` that saw ids would come
//! back with `Last-Event-ID` to open a new session.

use super::{accepts, invalid_request, Endpoint, Live, MESSAGES_PATH, SSE_PATH};
use crate::http::limits::MAX_SESSION_ID_BYTES;
use crate::http::response::Response;
use crate::http::server::Exchange;
use crate::http::streams::{StreamHub, STANDALONE_STREAM};
use crate::http1::request::RequestHead;
use crate::http1::sse;
use crate::json::{self, Value};
use crate::server::{CancelToken, Notify, Session};
use std::sync::Arc;

/// Sends everything a call emits, and then its reply, on the session's stream.
struct ToStream<'a>(&'a StreamHub);

impl Notify for ToStream<'_> {
    fn notify(&self, message: Value) {
        self.0
            .publish(STANDALONE_STREAM, json::to_string(&message), false);
    }
}

/// The `sessionId` of a `/messages` target: the query's only such parameter, 1 to
/// [`MAX_SESSION_ID_BYTES`] hex digits (the ids this transport hands out).
fn session_id(target: &str) -> Result<&str, &'static str> {
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let mut ids = query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("sessionId="));
    let (Some(id), None) = (ids.next(), ids.next()) else {
        return Err("the query must carry sessionId once");
    };
    let hex = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_BYTES
        && id.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then_some(id).ok_or("sessionId is not a session id")
}

impl Endpoint {
    /// `GET /sse` and `POST /messages` (after the Host, Origin and token checks).
    pub(super) fn legacy_sse(
        &self,
        head: &RequestHead<'_>,
        body: &[u8],
        exchange: &Exchange<'_>,
    ) -> Option<Response> {
        let path = head.target.split('?').next().unwrap_or_default();
        let Some(sessions) = &self.sessions else {
            return Some(Response::text(404, "not found"));
        };
        match (path, head.method) {
            (SSE_PATH, "GET") => {
                if !accepts(head, "text/event-stream") {
                    return Some(invalid_request(406, "Accept must list text/event-stream"));
                }
                let id = match sessions.new_id() {
                    Ok(id) => id,
                    Err(e) => return Some(super::cannot_create(e)),
                };
                let session = Arc::new(Session::new(self.engine.clone()).with_id(&id));
                let live = sessions.insert_until(id.clone(), session, None);
                // Attached before the client learns where to POST, so no reply precedes the writer.
                let (writer, after) = live.streams.attach_standalone();
                let mut first = Vec::new();
                let endpoint = format!("{MESSAGES_PATH}?sessionId={id}");
                sse::encode_typed_event("endpoint", &endpoint, &mut first);
                if exchange.send_sse(&first) {
                    self.pump(
                        exchange,
                        &live.streams,
                        (STANDALONE_STREAM, writer),
                        after,
                        false,
                    );
                }
                sessions.remove(&id);
                None
            }
            (MESSAGES_PATH, "POST") => {
                let id = match session_id(head.target) {
                    Ok(id) => id,
                    Err(why) => return Some(invalid_request(400, why)),
                };
                let Some(live) = sessions.get(id) else {
                    return Some(invalid_request(404, "session not found"));
                };
                let message = match json::parse(body) {
                    Ok(message) => message,
                    Err(e) => {
                        return Some(super::rpc_error(
                            400,
                            crate::jsonrpc::code::PARSE_ERROR,
                            &format!("parse error: {e}"),
                        ))
                    }
                };
                // Accepted now; the reply travels on the stream once the call is done.
                exchange.respond(Response::empty(202));
                serve_message(&live, message);
                None
            }
            (SSE_PATH, _) => Some(super::not_allowed("GET")),
            _ => Some(super::not_allowed("POST")),
        }
    }
}

fn serve_message(live: &Live, message: Value) {
    let notify = ToStream(&live.streams);
    if let Some(reply) = live
        .session
        .handle_message_with(message, &notify, CancelToken::new())
    {
        notify.notify(reply);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_id_must_be_one_hex_parameter() {
        assert_eq!(session_id("/messages?sessionId=ab12"), Ok("ab12"));
        assert_eq!(session_id("/messages?x=1&sessionId=ab12"), Ok("ab12"));
        assert!(session_id("/messages").is_err());
        assert!(session_id("/messages?sessionId=").is_err());
        assert!(session_id("/messages?sessionId=a&sessionId=b").is_err());
        assert!(session_id("/messages?sessionId=zz").is_err());
        let long = format!(
            "/messages?sessionId={}",
            "a".repeat(MAX_SESSION_ID_BYTES + 1)
        );
        assert!(session_id(&long).is_err());
    }
}
