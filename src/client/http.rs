//! The Streamable HTTP transport over `std::net`: one POST per message, replies as JSON or as an
//! SSE stream, sessions (`Mcp-Session-Id`), resumption of a broken stream with `Last-Event-ID`,
//! the server's standalone GET stream (opened after the handshake; the server's requests on it
//! are answered), DELETE on close, bearer tokens, and timeouts on connect and on every call.
//!
//! POSTs and DELETE reuse idle connections to the origin ([`Pool`], keep-alive): a connection
//! goes back to the pool only once its whole response was read, so a reused one never holds a
//! half-read body. Event streams (the GET stream, resumptions) each get a connection of their own,
//! closed when the stream ends. [`HttpTransport::exchange`] says when a request on a reused
//! connection is sent again: only when the server cannot have received all of it.
//!
//! `https://` endpoints are the same code over the TLS helper's pipes ([`super::stream`],
//! [`super::tls`]).

use super::answers::Answers;
use super::core::{self, Event, Incoming, Outgoing};
use super::error::ClientError;
use super::oauth::OAuth;
use super::pool::{self, Pool, MAX_IDLE_CONNECTIONS};
use super::stream::{self, Closer, ConnectError, Stream};
use super::tls::TlsConfig;
use super::transport::Transport;
use crate::http1::response::{self as wire, BodyDecoder, ResponseHead};
use crate::http1::sse::{SseEvent, SseParser};
use crate::http1::url::Url;
use crate::json::{self, Value};
use crate::server::Revision;
use crate::voice::shortened;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes read from the socket per call.
const READ_CHUNK: usize = 16 * 1024;

/// Most of an error response's body read (it is only quoted in the error message).
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Longest session id accepted from a server.
pub const MAX_SESSION_ID_BYTES: usize = 1024;

/// Reconnections allowed per call when an event stream ends before its answer.
pub const MAX_SSE_RECONNECTS: usize = 5;

/// Delay before reconnecting when the server sent no `retry:` field.
pub const DEFAULT_SSE_RETRY: Duration = Duration::from_secs(1);

/// Longest `retry:` delay honoured (the call's deadline bounds it further).
pub const MAX_SSE_RETRY: Duration = Duration::from_secs(60);

/// How long the server's standalone stream may stay open (it is read on its own thread until the
/// client closes; this only bounds the read deadline).
pub const SERVER_STREAM_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// Longest wait for the answer to the GET that opens the server's stream after the handshake
/// (a server that never answers it delays the client's first call by this much, no more).
pub const SERVER_STREAM_OPEN_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the standalone stream's thread, waiting to reconnect, checks whether the client is
/// closing.
const STOP_STEP: Duration = Duration::from_millis(50);

/// Statuses accepted as a successful DELETE of the session (404: already gone; 405: the server
/// does not let clients end sessions).
pub const DELETE_OK_STATUSES: [u16; 5] = [200, 202, 204, 404, 405];

/// A Streamable HTTP endpoint and the session held with it.
pub struct HttpTransport {
    url: Url,
    token: Option<String>,
    session_id: Option<String>,
    /// The revision of the last message sent, for the headers of GET and DELETE.
    revision: Option<Revision>,
    connect_timeout: Duration,
    max_message_bytes: usize,
    /// How requests from the server (on an SSE response) are answered.
    answers: Answers,
    /// The thread following the server's standalone GET stream, while one is open.
    server_stream: Option<ServerStream>,
    /// Idle connections to the origin, shared with the stream thread (which POSTs answers).
    pool: Arc<Pool>,
    /// When set, logs in: asked for the token before each POST and after each 401/403.
    oauth: Option<Arc<Mutex<OAuth>>>,
    /// How `https://` connections are made.
    tls: TlsConfig,
}

/// The standalone GET stream's reader thread and what stops it.
struct ServerStream {
    stop: Arc<AtomicBool>,
    /// Closes the stream's current connection, to wake the reader.
    socket: Arc<Mutex<Option<Closer>>>,
    thread: JoinHandle<()>,
}

impl ServerStream {
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(socket) = self.socket.lock().unwrap_or_else(|e| e.into_inner()).take() {
            socket.close();
        }
        let _ = self.thread.join();
    }
}

impl HttpTransport {
    /// Prepares to talk to `url` (nothing is sent yet). `token` is sent as `Authorization: Bearer`.
    pub fn new(
        url: &str,
        token: Option<String>,
        connect_timeout: Duration,
        max_message_bytes: usize,
    ) -> Result<HttpTransport, ClientError> {
        let url = Url::parse_client(url)?;
        if let Some(t) = &token {
            if t.is_empty() || t.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
                return Err(ClientError::Unsupported(
                    "the bearer token must be non-empty visible ASCII (no spaces or line breaks)"
                        .into(),
                ));
            }
        }
        Ok(HttpTransport {
            url,
            token,
            session_id: None,
            revision: None,
            connect_timeout,
            max_message_bytes,
            answers: Answers::default(),
            server_stream: None,
            pool: Arc::new(Pool::default()),
            oauth: None,
            tls: TlsConfig::default(),
        })
    }

    /// Makes `https://` connections as `tls` says (the helper, the trusted CAs).
    pub fn with_tls(mut self, tls: TlsConfig) -> HttpTransport {
        self.tls = tls;
        self
    }

    /// Logs in with `oauth` when the server asks (and sends its stored token until then).
    pub fn with_oauth(mut self, oauth: OAuth) -> HttpTransport {
        self.oauth = Some(Arc::new(Mutex::new(oauth)));
        self
    }

    /// The same endpoint, session and answers, without a stream thread (for that thread's use).
    fn settings(&self) -> HttpTransport {
        HttpTransport {
            url: self.url.clone(),
            token: self.token.clone(),
            session_id: self.session_id.clone(),
            revision: self.revision,
            connect_timeout: self.connect_timeout,
            max_message_bytes: self.max_message_bytes,
            answers: self.answers.clone(),
            server_stream: None,
            pool: Arc::clone(&self.pool),
            oauth: self.oauth.clone(),
            tls: self.tls.clone(),
        }
    }

    /// Opens the server's standalone stream (GET) once the handshake is done, as the spec says a
    /// client may; when the server offers one (200 `text/event-stream`), a thread answers the
    /// requests that arrive on it until [`Transport::close`]. Any other answer (405, 404...) means
    /// no stream, and nothing changes. The stream is open when this returns, so a call made next
    /// cannot send a request the client would miss.
    fn open_server_stream(&mut self, initialized: &Outgoing) {
        if let Some(old) = self.server_stream.take() {
            old.stop();
        }
        let deadline = Instant::now() + self.connect_timeout;
        let Ok((head, mut conn)) =
            self.get_stream(initialized, None, self.connect_timeout, deadline)
        else {
            return;
        };
        let stop = Arc::new(AtomicBool::new(false));
        let socket = Arc::new(Mutex::new(conn.stream.closer()));
        conn.deadline = Instant::now() + SERVER_STREAM_LIFETIME;
        let follower = self.settings();
        let out = initialized.clone();
        let (thread_stop, thread_socket) = (stop.clone(), socket.clone());
        let spawned = std::thread::Builder::new()
            .name("mcp-server-stream".into())
            .spawn(move || {
                follower.follow(out, head, conn, &thread_stop, &thread_socket);
                // The slot's clone would keep the connection open after the reader gave up.
                let slot = thread_socket
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                if let Some(socket) = slot {
                    socket.close();
                }
            });
        if let Ok(thread) = spawned {
            self.server_stream = Some(ServerStream {
                stop,
                socket,
                thread,
            });
        }
    }

    /// Reads the standalone stream, answering the server's requests (notifications on it are not
    /// reported: no call is waiting for them). When it ends the stream is reopened after the
    /// server's `retry:` delay, resuming from its last event id, up to [`MAX_SSE_RECONNECTS`]
    /// times in a row.
    fn follow(
        &self,
        out: Outgoing,
        mut head: ResponseHead,
        mut conn: Conn,
        stop: &AtomicBool,
        socket: &Mutex<Option<Closer>>,
    ) {
        let mut parser = SseParser::new(self.max_message_bytes);
        let mut failures = 0;
        let no_call = Value::Null;
        loop {
            let Ok(framing) = head.framing() else { return };
            let mut decoder = BodyDecoder::new(framing);
            loop {
                let mut bytes = Vec::new();
                let more = conn.next_body(&mut decoder, &mut bytes);
                let mut events = Vec::new();
                if parser.feed(&bytes, &mut events).is_err() {
                    return;
                }
                for event in events {
                    failures = 0;
                    let item = sse_message(event, (&out, &no_call), &self.answers, &mut |_| {});
                    if let Ok(SseItem::Answer(answer)) = item {
                        let deadline = Instant::now() + self.connect_timeout;
                        let _ = self.post_answer(&answer, &out, self.connect_timeout, deadline);
                    }
                }
                if !matches!(more, Ok(true)) {
                    break;
                }
            }
            loop {
                if stop.load(Ordering::SeqCst) || failures == MAX_SSE_RECONNECTS {
                    return;
                }
                failures += 1;
                let delay = parser
                    .retry_ms()
                    .map_or(DEFAULT_SSE_RETRY, Duration::from_millis)
                    .min(MAX_SSE_RETRY);
                // In steps, so that closing the client never waits out a long `retry:`.
                let until = Instant::now() + delay;
                while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(STOP_STEP.min(until - Instant::now()));
                }
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let deadline = Instant::now() + self.connect_timeout;
                let last_id = parser.last_event_id().map(str::to_owned);
                let Ok(reopened) =
                    self.get_stream(&out, last_id.as_deref(), self.connect_timeout, deadline)
                else {
                    continue;
                };
                (head, conn) = reopened;
                conn.deadline = Instant::now() + SERVER_STREAM_LIFETIME;
                let mut slot = socket.lock().unwrap_or_else(|e| e.into_inner());
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                *slot = conn.stream.closer();
                parser.new_stream();
                break;
            }
        }
    }

    fn headers(&self, out: Option<&Outgoing>) -> Vec<(&'static str, String)> {
        let mut h = vec![(
            "User-Agent",
            format!("agentteams-mcp-client/{}", env!("CARGO_PKG_VERSION")),
        )];
        if let Some(t) = &self.token {
            h.push(("Authorization", format!("Bearer {t}")));
        }
        let modern = out.is_some_and(|o| o.modern);
        if let (Some(id), false) = (&self.session_id, modern) {
            h.push(("Mcp-Session-Id", id.clone()));
        }
        if let Some(rev) = out.map_or(self.revision, |o| o.revision) {
            h.push(("MCP-Protocol-Version", rev.as_str().to_owned()));
        }
        if let Some(o) = out.filter(|o| o.modern) {
            h.push(("Mcp-Method", header_value(&o.method)));
            if let Some(name) = &o.name {
                h.push(("Mcp-Name", header_value(name)));
            }
        }
        h
    }

    /// A new connection to the endpoint: TCP, or the TLS helper for `https://`.
    fn open(&self, what: &str, timeout: Duration, deadline: Instant) -> Result<Conn, ClientError> {
        match stream::connect(&self.url, Some(&self.tls), self.connect_timeout, deadline) {
            Ok(stream) => Ok(self.wrap(stream, false, what, timeout, deadline)),
            Err(ConnectError::Resolve(why)) => Err(ClientError::Connect(format!(
                "cannot resolve {}: {why}",
                self.url.host
            ))),
            Err(e) => Err(ClientError::Connect(format!(
                "cannot connect to {}: {e}",
                self.url
            ))),
        }
    }

    /// `stream` as the connection of the exchange `what`; `reused` when it came from the pool.
    fn wrap(
        &self,
        stream: Stream,
        reused: bool,
        what: &str,
        timeout: Duration,
        deadline: Instant,
    ) -> Conn {
        Conn {
            stream,
            pending: Vec::new(),
            what: what.to_owned(),
            timeout,
            deadline,
            url: self.url.to_string(),
            reused,
            keep_for: None,
            body_done: false,
        }
    }

    /// Sends one whole request (`bytes`, for the exchange `what`) and reads the response head,
    /// on an idle pooled connection when there is one, else on a new one.
    ///
    /// The retry rule, so that no POST is ever delivered twice: a pooled connection on which the
    /// server already closed (or wrote) is not used at all ([`Pool::take`] checks before anything
    /// is written). A request is sent again, on the next pooled connection or a new one, only
    /// when writing it to a reused connection failed: the server then holds at most a strict
    /// prefix of it (a failed write sent none of its own bytes), which it cannot act on. Once
    /// every byte was written, a connection that ends before the answer is an error saying the
    /// request may have reached the server; nothing is resent. A new connection is never retried.
    fn exchange(
        &self,
        bytes: &[u8],
        what: &str,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(ResponseHead, Conn), ClientError> {
        let mut pooled_tries = 0;
        loop {
            let pooled = if pooled_tries < MAX_IDLE_CONNECTIONS {
                self.pool.take()
            } else {
                None
            };
            let mut conn = match pooled {
                Some(stream) => {
                    pooled_tries += 1;
                    self.wrap(stream, true, what, timeout, deadline)
                }
                None => self.open(what, timeout, deadline)?,
            };
            match conn.send(bytes) {
                Err(ClientError::Closed(_)) if conn.reused => continue,
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            return match conn.head() {
                Err(ClientError::Closed(why)) if conn.reused => Err(ClientError::Closed(format!(
                    "{why}; the request was written whole on a kept-alive connection and may have reached the server, so it was not sent again"
                ))),
                Ok(head) => Ok((head, conn)),
                Err(e) => Err(e),
            };
        }
    }

    /// A whole POST of `message` with the headers `out` calls for.
    fn post_bytes(&self, message: &Value, out: &Outgoing) -> Vec<u8> {
        let body = json::to_string(message);
        let mut headers = self.headers(Some(out));
        headers.push(("Accept", "application/json, text/event-stream".into()));
        headers.push(("Content-Type", "application/json".into()));
        headers.push(("Content-Length", body.len().to_string()));
        let mut bytes = wire::request_head("POST", &self.url, &headers);
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    /// POSTs `out`, logging in first when the server asks and OAuth is configured: the one
    /// place a 401/403 is turned over to the OAuth layer, which gives the token to send (or a
    /// new one after a refusal) or the error that ends the request; its retry budgets bound the
    /// loop.
    fn post(
        &mut self,
        out: &Outgoing,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(ResponseHead, Conn), ClientError> {
        let Some(oauth) = self.oauth.clone() else {
            return self.post_once(out, timeout, deadline);
        };
        let mut refusal: Option<(u16, Option<String>)> = None;
        let mut deadline = deadline;
        loop {
            let mut state = oauth.lock().unwrap_or_else(|e| e.into_inner());
            let given = refusal.as_ref().map(|(s, h)| (*s, h.as_deref()));
            if let Some(token) = state.authorize(given)? {
                self.token = Some(token);
            }
            if given.is_some() {
                // A login may have waited on a browser: the retry gets a whole timeout.
                deadline = deadline.max(Instant::now() + timeout);
            }
            drop(state);
            match self.post_once(out, timeout, deadline) {
                Err(ClientError::AuthRequired {
                    status, challenge, ..
                }) => refusal = Some((status, challenge)),
                other => {
                    if other.is_ok() {
                        oauth.lock().unwrap_or_else(|e| e.into_inner()).accepted();
                    }
                    return other;
                }
            }
        }
    }

    /// POSTs `out`; returns the response head and the open connection positioned at the body.
    fn post_once(
        &mut self,
        out: &Outgoing,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(ResponseHead, Conn), ClientError> {
        self.revision = out.revision;
        let bytes = self.post_bytes(&out.message, out);
        let (head, conn) = self.exchange(&bytes, &out.method, timeout, deadline)?;
        if out.method == "initialize" && head.status == 200 {
            self.session_id = session_id(&head)?;
        }
        match head.status {
            401 | 403 => Err(auth_required(&head, self.token.is_some())),
            404 if self.session_id.is_some() && !out.modern && out.method != "initialize" => {
                self.session_id = None;
                Err(ClientError::SessionExpired)
            }
            _ => Ok((head, conn)),
        }
    }

    /// Reads a JSON reply body: the response to `id` (notifications in a batch go to `on_event`).
    fn json_reply(
        &self,
        mut conn: Conn,
        head: &ResponseHead,
        out: &Outgoing,
        id: &Value,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let body = conn.body(head, self.max_message_bytes, true)?;
        conn.release(&self.pool);
        let parsed = json::parse(&body).map_err(|e| {
            ClientError::Protocol(format!(
                "server answered {} with invalid JSON ({e}): {}",
                out.method,
                shortened(&String::from_utf8_lossy(&body), 120)
            ))
        })?;
        let messages = match parsed {
            Value::Array(a) => a.into_vec(),
            single => vec![single],
        };
        for message in messages {
            match core::classify(message) {
                Incoming::Response { id: got, message } if core::answers(&got, id) => {
                    return Ok(message)
                }
                Incoming::Notification(e) => on_event(&e),
                _ => {}
            }
        }
        Err(ClientError::Protocol(format!(
            "server's JSON reply to {} holds no response to request {}",
            out.method,
            json::to_string(id)
        )))
    }

    /// Follows an SSE reply until the response to `id` arrives, resuming with `Last-Event-ID`
    /// when the stream ends early after an event that carried an id.
    #[allow(clippy::too_many_arguments)]
    fn sse_reply(
        &self,
        mut conn: Conn,
        head: &ResponseHead,
        out: &Outgoing,
        id: &Value,
        timeout: Duration,
        deadline: Instant,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let mut parser = SseParser::new(self.max_message_bytes);
        let mut decoder = BodyDecoder::new(head.framing().map_err(|e| conn.wire_error(e))?);
        let mut reconnects = 0;
        loop {
            let mut bytes = Vec::new();
            let (more, dropped) = match conn.next_body(&mut decoder, &mut bytes) {
                Ok(more) => (more, None),
                Err(ClientError::Closed(why)) => (false, Some(why)),
                Err(e) => return Err(e),
            };
            let mut events = Vec::new();
            parser
                .feed(&bytes, &mut events)
                .map_err(|e| ClientError::Protocol(e.to_string()))?;
            for event in events {
                match sse_message(event, (out, id), &self.answers, on_event)? {
                    SseItem::Reply(reply) => return Ok(reply),
                    // Best effort: a server that refuses the answer still owes the response.
                    SseItem::Answer(answer) => {
                        let _ = self.post_answer(&answer, out, timeout, deadline);
                    }
                    SseItem::Nothing => {}
                }
            }
            if more {
                continue;
            }
            let why = dropped.unwrap_or_else(|| "the server ended the event stream".into());
            let Some(last_id) = parser.last_event_id().map(str::to_owned) else {
                return Err(ClientError::Closed(format!(
                    "{why} before answering {} (no event id to resume from)",
                    out.method
                )));
            };
            if reconnects == MAX_SSE_RECONNECTS {
                return Err(ClientError::Closed(format!(
                    "{why} before answering {}; gave up after {MAX_SSE_RECONNECTS} reconnections",
                    out.method
                )));
            }
            reconnects += 1;
            let delay = parser
                .retry_ms()
                .map_or(DEFAULT_SSE_RETRY, Duration::from_millis)
                .min(MAX_SSE_RETRY);
            if Instant::now() + delay >= deadline {
                return Err(ClientError::Timeout {
                    method: out.method.clone(),
                    after: timeout,
                });
            }
            std::thread::sleep(delay);
            let (resumed_head, resumed) =
                self.get_stream(out, Some(&last_id), timeout, deadline)?;
            conn = resumed;
            decoder = BodyDecoder::new(resumed_head.framing().map_err(|e| conn.wire_error(e))?);
            parser.new_stream();
        }
    }

    /// POSTs the client's answer to a server request (ping gets `{}`, anything else -32601);
    /// the server acknowledges it with 202.
    fn post_answer(
        &self,
        answer: &Value,
        out: &Outgoing,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        // Server requests exist only in the legacy era, so `out` adds no modern headers here.
        let bytes = self.post_bytes(answer, out);
        let (head, conn) = self.exchange(&bytes, &out.method, timeout, deadline)?;
        conn.finish(&head, &self.pool);
        Ok(())
    }

    /// GETs the endpoint for an event stream: with `Last-Event-ID` to pick a broken stream back
    /// up, without to open the server's standalone stream.
    fn get_stream(
        &self,
        out: &Outgoing,
        last_id: Option<&str>,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(ResponseHead, Conn), ClientError> {
        let mut headers = self.headers(Some(out));
        headers.retain(|(k, _)| *k != "Mcp-Method" && *k != "Mcp-Name");
        headers.push(("Accept", "text/event-stream".into()));
        // A stream has a connection of its own, which ends with it.
        headers.push(("Connection", "close".into()));
        if let Some(last_id) = last_id {
            headers.push(("Last-Event-ID", header_value(last_id)));
        }
        let bytes = wire::request_head("GET", &self.url, &headers);
        let mut conn = self.open(&out.method, timeout, deadline)?;
        conn.send(&bytes)?;
        let head = conn.head()?;
        match head.status {
            200 if head.media_type() == "text/event-stream" => Ok((head, conn)),
            401 | 403 => Err(auth_required(&head, self.token.is_some())),
            status if last_id.is_none() => Err(ClientError::Http {
                status,
                body: "no server stream offered".into(),
            }),
            status => Err(ClientError::Closed(format!(
                "the event stream for {} ended before its answer and resuming it failed (GET with Last-Event-ID answered HTTP {status})",
                out.method
            ))),
        }
    }
}

/// What one SSE event asks of the client.
enum SseItem {
    /// The response to the request in flight.
    Reply(Value),
    /// A request from the server; this is the answer to POST back.
    Answer(Value),
    Nothing,
}

/// Reads one SSE event, passing notifications to `on_event`.
fn sse_message(
    event: SseEvent,
    (out, id): (&Outgoing, &Value),
    answers: &Answers,
    on_event: &mut dyn FnMut(&Event),
) -> Result<SseItem, ClientError> {
    if event.event != "message" || event.data.trim().is_empty() {
        return Ok(SseItem::Nothing);
    }
    let message = json::parse(event.data.as_bytes()).map_err(|e| {
        ClientError::Protocol(format!(
            "server sent an SSE event for {} that is not JSON ({e}): {}",
            out.method,
            shortened(&event.data, 120)
        ))
    })?;
    Ok(match core::classify(message) {
        Incoming::Response { id: got, message } if core::answers(&got, id) => {
            SseItem::Reply(message)
        }
        Incoming::Notification(e) => {
            on_event(&e);
            SseItem::Nothing
        }
        Incoming::Request { id, method, params } => {
            SseItem::Answer(answers.reply(id, &method, &params))
        }
        Incoming::Response { .. } | Incoming::Invalid(_) => SseItem::Nothing,
    })
}

/// A 401 or 403; `token_sent` tells a refused token from a missing one.
fn auth_required(head: &ResponseHead, token_sent: bool) -> ClientError {
    ClientError::AuthRequired {
        status: head.status,
        challenge: head.header("www-authenticate").map(str::to_owned),
        token_sent,
    }
}

fn session_id(head: &ResponseHead) -> Result<Option<String>, ClientError> {
    let Some(id) = head.header("mcp-session-id") else {
        return Ok(None);
    };
    if id.is_empty()
        || id.len() > MAX_SESSION_ID_BYTES
        || id.bytes().any(|b| !(0x21..=0x7e).contains(&b))
    {
        return Err(ClientError::Protocol(format!(
            "server sent an Mcp-Session-Id that is not 1 to {MAX_SESSION_ID_BYTES} visible ASCII characters"
        )));
    }
    Ok(Some(id.to_owned()))
}

/// A 2026-07-28 header value: as is when it is visible ASCII without edge spaces, else
/// `=?base64?<Base64 of the UTF-8>?=`.
pub fn header_value(value: &str) -> String {
    let plain = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !value.starts_with("=?base64?");
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One connection, its unread bytes and the deadline of the call it serves.
struct Conn {
    stream: Stream,
    pending: Vec<u8>,
    what: String,
    timeout: Duration,
    deadline: Instant,
    url: String,
    /// Taken from the pool (it carried an earlier exchange).
    reused: bool,
    /// How long it may idle in the pool once this response is read; `None`: close it.
    keep_for: Option<Duration>,
    /// The whole response body has been read.
    body_done: bool,
}

impl Conn {
    /// Puts the connection back in `pool` when its response was read to the end and nothing
    /// follows it, and the server lets it stay open; otherwise closes it.
    fn release(self, pool: &Pool) {
        if let (Some(keep_for), true) = (self.keep_for, self.body_done && self.pending.is_empty()) {
            pool.put(self.stream, keep_for);
        }
    }

    /// Reads the rest of a response the caller does not need (an acknowledgement), up to
    /// [`MAX_ERROR_BODY_BYTES`], and releases the connection. A body that lasts until the server
    /// closes is not waited for: the connection is closed instead.
    fn finish(mut self, head: &ResponseHead, pool: &Pool) {
        if self.keep_for.is_some() && self.body(head, MAX_ERROR_BODY_BYTES, false).is_ok() {
            self.release(pool);
        }
    }

    fn timed_out(&self) -> ClientError {
        ClientError::Timeout {
            method: self.what.clone(),
            after: self.timeout,
        }
    }

    fn wire_error(&self, e: wire::WireError) -> ClientError {
        ClientError::Protocol(format!(
            "malformed HTTP response from {} to {}: {e}",
            self.url, self.what
        ))
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timed_out());
        }
        let _ = self.stream.set_write_timeout(Some(left));
        self.stream.write_all(bytes).map_err(|e| match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => self.timed_out(),
            _ => ClientError::Closed(format!(
                "connection to {} failed while sending {}: {e}",
                self.url, self.what
            )),
        })
    }

    /// Reads more bytes into `pending`; false at end of stream.
    fn fill(&mut self) -> Result<bool, ClientError> {
        let mut chunk = [0u8; READ_CHUNK];
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.timed_out());
            }
            let _ = self.stream.set_read_timeout(Some(left));
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.pending.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(self.timed_out())
                }
                Err(e) => {
                    return Err(ClientError::Closed(format!(
                        "connection to {} dropped while reading the answer to {}: {e}",
                        self.url, self.what
                    )))
                }
            }
        }
    }

    /// Reads the response head, skipping interim 1xx responses.
    fn head(&mut self) -> Result<ResponseHead, ClientError> {
        loop {
            if let Some((head, used)) =
                wire::parse_head(&self.pending).map_err(|e| self.wire_error(e))?
            {
                self.pending.drain(..used);
                if (100..200).contains(&head.status) {
                    continue;
                }
                let delimited = !matches!(head.framing(), Ok(wire::Framing::UntilClose) | Err(_));
                self.keep_for = pool::reusable_for(&head).filter(|_| delimited);
                return Ok(head);
            }
            if !self.fill()? {
                return Err(ClientError::Closed(format!(
                    "{} closed the connection without answering {}",
                    self.url, self.what
                )));
            }
        }
    }

    /// Appends the next decoded body bytes to `out`; false once the body has ended.
    fn next_body(
        &mut self,
        decoder: &mut BodyDecoder,
        out: &mut Vec<u8>,
    ) -> Result<bool, ClientError> {
        loop {
            if decoder.is_done() {
                self.body_done = true;
                return Ok(false);
            }
            if !self.pending.is_empty() {
                let used = decoder
                    .feed(&self.pending, out)
                    .map_err(|e| self.wire_error(e))?;
                self.pending.drain(..used);
                self.body_done = decoder.is_done();
                return Ok(!self.body_done);
            }
            if !self.fill()? {
                decoder.at_eof().map_err(|e| {
                    ClientError::Closed(format!(
                        "connection to {} dropped in the middle of the answer to {}: {e}",
                        self.url, self.what
                    ))
                })?;
                return Ok(false);
            }
        }
    }

    /// The whole body, at most `max` bytes: past it, an error (`strict`) or the first `max` bytes.
    fn body(
        &mut self,
        head: &ResponseHead,
        max: usize,
        strict: bool,
    ) -> Result<Vec<u8>, ClientError> {
        let framing = head.framing().map_err(|e| self.wire_error(e))?;
        let what = self.what.clone();
        let too_large = || {
            ClientError::Protocol(format!(
                "server's reply to {what} is larger than {max} bytes (the response size cap)"
            ))
        };
        if let (wire::Framing::Length(n), true) = (framing, strict) {
            if n > max as u64 {
                return Err(too_large());
            }
        }
        let mut decoder = BodyDecoder::new(framing);
        let mut body = Vec::new();
        while self.next_body(&mut decoder, &mut body)? {
            if body.len() > max {
                if strict {
                    return Err(too_large());
                }
                break;
            }
        }
        if body.len() > max {
            if strict {
                return Err(too_large());
            }
            body.truncate(max);
        }
        Ok(body)
    }
}

impl Transport for HttpTransport {
    fn set_answers(&mut self, answers: Answers) {
        self.answers = answers;
    }

    fn request(
        &mut self,
        out: &Outgoing,
        timeout: Duration,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let Some(id) = &out.id else {
            self.notify(out, timeout)?;
            return Ok(Value::Null);
        };
        let deadline = Instant::now() + timeout;
        let (head, mut conn) = self.post(out, timeout, deadline)?;
        match head.status {
            200..=299 if head.status != 202 && head.status != 204 => {
                if head.media_type() == "text/event-stream" {
                    self.sse_reply(conn, &head, out, id, timeout, deadline, on_event)
                } else {
                    self.json_reply(conn, &head, out, id, on_event)
                }
            }
            202 | 204 => Err(ClientError::Protocol(format!(
                "server answered the request {} with HTTP {} and no body; a request needs a response",
                out.method, head.status
            ))),
            status => {
                let body = conn.body(&head, MAX_ERROR_BODY_BYTES, false)?;
                conn.release(&self.pool);
                // A JSON-RPC error in the body says more than the status: let the core map it.
                if let Ok(message) = json::parse(&body) {
                    if message.get("error").is_some() {
                        return Ok(message);
                    }
                }
                Err(ClientError::Http {
                    status,
                    body: shortened(String::from_utf8_lossy(&body).trim(), 200),
                })
            }
        }
    }

    fn notify(&mut self, out: &Outgoing, timeout: Duration) -> Result<(), ClientError> {
        let deadline = Instant::now() + timeout;
        let (head, mut conn) = self.post(out, timeout, deadline)?;
        if (200..300).contains(&head.status) {
            conn.finish(&head, &self.pool);
            let handshake_done = out.method == "notifications/initialized" && !out.modern;
            if handshake_done && self.session_id.is_some() {
                self.open_server_stream(out);
            }
            return Ok(());
        }
        let body = conn.body(&head, MAX_ERROR_BODY_BYTES, false)?;
        conn.release(&self.pool);
        Err(ClientError::Http {
            status: head.status,
            body: shortened(String::from_utf8_lossy(&body).trim(), 200),
        })
    }

    fn close(&mut self) -> Result<(), ClientError> {
        if let Some(stream) = self.server_stream.take() {
            stream.stop();
        }
        let Some(id) = self.session_id.take() else {
            self.pool.clear();
            return Ok(());
        };
        let mut headers = self.headers(None);
        headers.push(("Mcp-Session-Id", id));
        // The last request: the server may close the connection once it has answered.
        headers.push(("Connection", "close".into()));
        let bytes = wire::request_head("DELETE", &self.url, &headers);
        let deadline = Instant::now() + self.connect_timeout;
        let exchanged = self.exchange(&bytes, "DELETE", self.connect_timeout, deadline);
        self.pool.clear();
        let (head, _conn) = exchanged?;
        if DELETE_OK_STATUSES.contains(&head.status) {
            Ok(())
        } else {
            Err(ClientError::Http {
                status: head.status,
                body: "DELETE of the session refused".into(),
            })
        }
    }

    fn reset_session(&mut self) {
        if let Some(stream) = self.server_stream.take() {
            stream.stop();
        }
        self.session_id = None;
        self.revision = None;
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn cancels_with_notification(&self, timed_out: &Outgoing) -> bool {
        !timed_out.modern
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Shutdown, TcpListener};

    /// `(connection number, request id)` of each request a test server received whole.
    type Arrivals = Vec<(usize, String)>;

    /// A keep-alive server answering every POST with an empty result; logs `(connection, id)`
    /// of each request that arrived whole. At end of stream it keeps its side open (so only a
    /// failed write, never a visible close, can tell the client the connection is gone).
    fn answering_server() -> (String, Arc<Mutex<Arrivals>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for (number, stream) in listener.incoming().enumerate() {
                let (Ok(mut stream), log) = (stream, Arc::clone(&shared)) else {
                    continue;
                };
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            match stream.read(&mut chunk) {
                                Ok(0) | Err(_) => {
                                    std::thread::sleep(Duration::from_secs(5));
                                    return;
                                }
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        };
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length: usize = head
                            .split("\r\n")
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse().ok())
                            .unwrap_or(0);
                        while buf.len() < end + 4 + length {
                            match stream.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let body: Vec<u8> = buf.drain(..end + 4 + length).skip(end + 4).collect();
                        let message = json::parse(&body).unwrap();
                        let id = json::to_string(message.get("id").unwrap());
                        log.lock().unwrap().push((number, id.clone()));
                        let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
                            reply.len()
                        );
                    }
                });
            }
        });
        (url, log)
    }

    fn list_request(id: i64) -> Outgoing {
        Outgoing {
            message: json::parse(
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#).as_bytes(),
            )
            .unwrap(),
            id: Some(Value::from(id)),
            method: "tools/list".into(),
            name: None,
            revision: None,
            modern: false,
        }
    }

    #[test]
    fn a_request_whose_write_failed_on_a_reused_connection_is_sent_once_on_a_new_one() {
        let (url, log) = answering_server();
        let mut transport =
            HttpTransport::new(&url, None, Duration::from_secs(2), 1 << 20).unwrap();
        let timeout = Duration::from_secs(5);
        transport
            .request(&list_request(1), timeout, &mut |_| {})
            .unwrap();
        assert_eq!(transport.pool.idle_count(), 1);
        // Break the pooled connection so that it still looks open (nothing to read) but cannot
        // be written to: the next request's write fails, and the rule resends it.
        let Some(Stream::Tcp(pooled)) = transport.pool.take() else {
            panic!("a pooled TCP connection")
        };
        pooled.shutdown(Shutdown::Write).unwrap();
        let pooled = Stream::Tcp(pooled);
        transport.pool.put(pooled, pool::IDLE_TIMEOUT);
        let reply = transport
            .request(&list_request(2), timeout, &mut |_| {})
            .unwrap();
        assert_eq!(
            json::to_string(&reply),
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
        );
        // Each request arrived once; the second on a new connection.
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen, vec![(0, "1".to_owned()), (1, "2".to_owned())]);
    }

    #[test]
    fn header_values_encode_only_when_needed() {
        assert_eq!(header_value("git_log"), "git_log");
        assert_eq!(header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_value(" x"), "=?base64?IHg=?=");
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
        assert_eq!(base64(b""), "");
    }

    #[test]
    fn tokens_must_be_header_safe() {
        let t = |tok: &str| {
            HttpTransport::new(
                "http://127.0.0.1:9/mcp",
                Some(tok.into()),
                Duration::from_secs(1),
                1024,
            )
        };
        assert!(t("abc.DEF-123").is_ok());
        for bad in ["", "a b", "a\r\nX-Evil: 1"] {
            assert!(t(bad).is_err(), "{bad:?}");
        }
    }
}
