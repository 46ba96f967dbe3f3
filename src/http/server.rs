//! The blocking HTTP/1.1 server: accept loop, connection cap, keep-alive connection loop with
//! read/idle timeouts, body reading, and the [`Exchange`] a handler answers through.
//!
//! Every request's body is read in full (within [`MAX_BODY_BYTES`]) before the handler sees it, so
//! an early rejection never leaves unread bytes that a kept-alive connection would misparse as the
//! next request; anything that cannot be read that way closes the connection.

use super::access_log;
use super::limits::{
    BODY_TIMEOUT, DISCONNECT_POLL, HEAD_TIMEOUT, IDLE_TIMEOUT, MAX_BODY_BYTES, MAX_CONNECTIONS,
    MAX_HEAD_BYTES, READ_CHUNK, SHUTDOWN_DRAIN, STOP_POLL, WATCHER_STACK_BYTES, WRITE_TIMEOUT,
};
use super::pool::Pool;
use super::response::Response;
use super::sse::stream_head;
use crate::http1::chunked::{encode_chunk, ChunkedDecoder, LAST_CHUNK};
use crate::http1::request::{parse_head, BodyLength, RequestHead, Status};
use crate::http1::sse;
use crate::server::CancelToken;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One complete request: its head and its whole (de-chunked) body.
pub struct Request<'a> {
    pub head: &'a RequestHead<'a>,
    pub body: &'a [u8],
}

/// Answers requests. Called on worker threads, possibly for many connections at once.
pub trait Handler: Send + Sync + 'static {
    /// Answers `request` through `exchange`, with one [`Exchange::respond`] or an SSE stream
    /// ([`Exchange::send_event`]… then [`Exchange::finish_stream`]).
    fn handle(&self, request: &Request<'_>, exchange: &Exchange<'_>);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pending,
    Streaming,
    Done,
}

#[derive(Debug)]
struct ExchangeState {
    phase: Phase,
    close: bool,
    /// The status sent (200 for a stream), for the access log.
    status: Option<u16>,
    /// What the handler named for the access log (the tool a call ran).
    note: Option<String>,
}

/// The response side of one request: a whole response, or an SSE stream written event by event.
/// Shareable across threads, so a tool's notification callback can stream from anywhere.
pub struct Exchange<'a> {
    stream: &'a TcpStream,
    /// The server's stop flag (long-lived streams watch it).
    stopping: &'a AtomicBool,
    keep_alive: bool,
    /// HTTP/1.1: a stream is chunked; HTTP/1.0: it ends when the connection closes.
    chunked: bool,
    state: Mutex<ExchangeState>,
}

impl<'a> Exchange<'a> {
    fn new(
        stream: &'a TcpStream,
        stopping: &'a AtomicBool,
        keep_alive: bool,
        chunked: bool,
    ) -> Exchange<'a> {
        Exchange {
            stream,
            stopping,
            keep_alive,
            chunked,
            state: Mutex::new(ExchangeState {
                phase: Phase::Pending,
                close: !keep_alive || !chunked,
                status: None,
                note: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ExchangeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `bytes` in one call; a failure marks the connection for closing.
    fn write(&self, state: &mut ExchangeState, bytes: &[u8]) -> bool {
        let ok = (&*self.stream).write_all(bytes).is_ok();
        if !ok {
            state.close = true;
        }
        ok
    }

    /// Sends a whole response (ignored if a response or stream was already started).
    pub fn respond(&self, response: Response) {
        let mut state = self.lock();
        if state.phase != Phase::Pending {
            return;
        }
        state.phase = Phase::Done;
        state.status = Some(response.status);
        state.close |= response.close;
        let bytes = response.encode(!state.close);
        self.write(&mut state, &bytes);
    }

    /// Sends one SSE event, starting the stream on the first call. False when the client is gone or
    /// a whole response was already sent.
    pub fn send_event(&self, data: &str) -> bool {
        let mut event = Vec::with_capacity(data.len() + 32);
        sse::encode_event(data, &mut event);
        self.send_sse(&event)
    }

    /// Sends pre-encoded SSE fields (whole events or a comment), starting the stream on the first
    /// call; an empty `event` only starts it. False when the client is gone or a whole response was
    /// already sent.
    pub fn send_sse(&self, event: &[u8]) -> bool {
        let mut state = self.lock();
        let mut out = match state.phase {
            Phase::Pending => stream_head(self.keep_alive, self.chunked),
            Phase::Streaming => Vec::new(),
            Phase::Done => return false,
        };
        state.phase = Phase::Streaming;
        state.status.get_or_insert(200);
        if event.is_empty() {
            // An empty chunk would end the body.
        } else if self.chunked {
            encode_chunk(event, &mut out);
        } else {
            out.extend_from_slice(event);
        }
        self.write(&mut state, &out)
    }

    /// Ends a started stream now and closes the connection (SEP-1699 polling: the client resumes
    /// on a new connection while this one's worker still runs the call). False if no stream was
    /// open.
    pub fn close_stream(&self) -> bool {
        let mut state = self.lock();
        if state.phase != Phase::Streaming {
            return false;
        }
        state.phase = Phase::Done;
        state.close = true;
        if self.chunked {
            self.write(&mut state, LAST_CHUNK);
        }
        // The client sees the end at once and will not queue its next request here.
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
        true
    }

    /// True once the server is stopping: a long-lived stream should end.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Cancels `cancel` if the client closes the connection before the returned guard is dropped
    /// (the 2026-07-28 era treats a closed response stream as cancellation). A helper thread waits
    /// in `peek` (which consumes nothing); dropping the guard never waits for it: the helper ends
    /// when the client sends its next request, closes, or within [`DISCONNECT_POLL`] of the guard
    /// going away, and at the latest when the connection ends.
    pub fn cancel_on_disconnect(&self, cancel: CancelToken) -> DisconnectWatch {
        let done = Arc::new(AtomicBool::new(false));
        let watch = DisconnectWatch(done.clone());
        let Ok(peer) = self.stream.try_clone() else {
            return watch;
        };
        // The connection loop sets its own timeout before every read, so this one only paces
        // the helper while the handler runs.
        let _ = self.stream.set_read_timeout(Some(DISCONNECT_POLL));
        let _ = std::thread::Builder::new()
            .name("mcp-http-watch".into())
            .stack_size(WATCHER_STACK_BYTES)
            .spawn(move || {
                let mut byte = [0u8; 1];
                loop {
                    match peer.peek(&mut byte) {
                        Ok(0) => break,
                        // The client sent more (its next request): it is still there.
                        Ok(_) => return,
                        Err(e) if is_timeout(&e) && !done.load(Ordering::SeqCst) => continue,
                        Err(e) if is_timeout(&e) => return,
                        Err(_) => break,
                    }
                }
                if !done.load(Ordering::SeqCst) {
                    cancel.cancel();
                }
            });
        watch
    }

    /// Names what this request did for the access log (e.g. the tool called).
    pub fn note(&self, text: &str) {
        self.lock().note = Some(text.to_owned());
    }

    /// True once an SSE stream has been started.
    pub fn is_streaming(&self) -> bool {
        self.lock().phase == Phase::Streaming
    }

    /// Sends the last event and ends the stream.
    pub fn finish_stream(&self, data: &str) {
        let mut event = Vec::with_capacity(data.len() + 32);
        sse::encode_event(data, &mut event);
        self.finish_sse(&event);
    }

    /// Sends pre-encoded last SSE fields (none if empty) and ends the stream.
    pub fn finish_sse(&self, event: &[u8]) {
        let mut state = self.lock();
        if state.phase != Phase::Streaming {
            return;
        }
        state.phase = Phase::Done;
        let mut out = Vec::new();
        if self.chunked {
            if !event.is_empty() {
                encode_chunk(event, &mut out);
            }
            out.extend_from_slice(LAST_CHUNK);
        } else {
            out.extend_from_slice(event);
        }
        self.write(&mut state, &out);
    }

    /// Ends the exchange: answers 500 if the handler sent nothing, closes an unfinished stream.
    /// True when the connection must close.
    fn complete(&self) -> bool {
        let phase = self.lock().phase;
        match phase {
            Phase::Pending => self.respond(Response::text(500, "no response was produced")),
            Phase::Streaming => self.lock().close = true,
            Phase::Done => {}
        }
        self.lock().close
    }
}

/// How long the server waits on a client; the defaults are the constants in [`super::limits`].
/// Shorter values exist for tests and for operators behind proxies with their own timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// For the whole request head once its first byte arrived ([`HEAD_TIMEOUT`]).
    pub head: Duration,
    /// For the whole body once the head arrived ([`BODY_TIMEOUT`]).
    pub body: Duration,
    /// Between requests on a kept-alive connection ([`IDLE_TIMEOUT`]).
    pub idle: Duration,
    /// For each write ([`WRITE_TIMEOUT`]).
    pub write: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            head: HEAD_TIMEOUT,
            body: BODY_TIMEOUT,
            idle: IDLE_TIMEOUT,
            write: WRITE_TIMEOUT,
        }
    }
}

/// Marks a watched call finished when dropped (see [`Exchange::cancel_on_disconnect`]).
pub struct DisconnectWatch(Arc<AtomicBool>);

impl Drop for DisconnectWatch {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A bound listener ready to serve.
pub struct Server {
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    pool: Pool,
    open: Arc<AtomicUsize>,
    max_connections: usize,
    rules: Rules,
}

/// What every connection of one server obeys.
#[derive(Clone)]
struct Rules {
    timeouts: Timeouts,
    /// Write an [`access_log`] line per answered request.
    access_log: bool,
    /// Set by a [`Stopper`]: finish the request in progress, take no more.
    stopping: Arc<AtomicBool>,
}

/// Stops a running [`Server`] from another thread: it stops accepting, lets the connections in
/// progress finish (up to [`SHUTDOWN_DRAIN`]), and [`Server::run`] returns.
#[derive(Clone)]
pub struct Stopper {
    stopping: Arc<AtomicBool>,
    wake: SocketAddr,
}

impl Stopper {
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        // `accept` blocks; one connection of our own wakes it to see the flag.
        let _ = TcpStream::connect_timeout(&self.wake, Duration::from_secs(1));
    }
}

impl Server {
    /// Binds `addr` with the default connection cap [`MAX_CONNECTIONS`]. A failure keeps the OS
    /// error's kind and names the address (`cannot listen on 127.0.0.1:7330: Address already in
    /// use (os error 98)`).
    pub fn bind(addr: SocketAddr, handler: Arc<dyn Handler>) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
        Ok(Server {
            listener,
            handler,
            pool: Pool::new(),
            open: Arc::new(AtomicUsize::new(0)),
            max_connections: MAX_CONNECTIONS,
            rules: Rules {
                timeouts: Timeouts::default(),
                access_log: false,
                stopping: Arc::new(AtomicBool::new(false)),
            },
        })
    }

    /// A handle that stops this server once it runs.
    pub fn stopper(&self) -> io::Result<Stopper> {
        let mut wake = self.local_addr()?;
        // A wildcard bind is reached through loopback.
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        Ok(Stopper {
            stopping: self.rules.stopping.clone(),
            wake,
        })
    }

    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Server {
        self.rules.timeouts = timeouts;
        self
    }

    /// Writes one [`access_log`] line per answered request to stderr.
    pub fn with_access_log(mut self, on: bool) -> Server {
        self.rules.access_log = on;
        self
    }

    /// Lowers the connection cap (never above [`MAX_CONNECTIONS`]).
    pub fn with_max_connections(mut self, max: usize) -> Server {
        self.max_connections = max.clamp(1, MAX_CONNECTIONS);
        self
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until a [`Stopper`] stops the server, then waits (up to
    /// [`SHUTDOWN_DRAIN`]) for the connections in progress to end.
    pub fn run(self) -> io::Result<()> {
        loop {
            let accepted = self.listener.accept();
            if self.rules.stopping.load(Ordering::SeqCst) {
                break;
            }
            match accepted {
                Ok((stream, _)) => self.dispatch(stream),
                // Out of file descriptors or a connection reset before accept: back off briefly
                // instead of spinning, and keep serving.
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        drop(self.listener);
        let deadline = Instant::now() + SHUTDOWN_DRAIN;
        while self.open.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    fn dispatch(&self, stream: TcpStream) {
        if self.open.fetch_add(1, Ordering::SeqCst) >= self.max_connections {
            self.open.fetch_sub(1, Ordering::SeqCst);
            reject_busy(stream);
            return;
        }
        let slot = OpenSlot(self.open.clone());
        let handler = self.handler.clone();
        let rules = self.rules.clone();
        let job = Box::new(move || {
            let _slot = slot;
            serve_connection(&stream, &*handler, &rules);
        });
        // When no thread can be had the job (and with it the connection and its slot) is dropped:
        // the client sees the connection close.
        let _ = self.pool.execute(job);
    }
}

/// Holds one place under the connection cap; gives it back when dropped.
struct OpenSlot(Arc<AtomicUsize>);

impl Drop for OpenSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers a connection past the cap with 503 and closes it, without reading its request.
fn reject_busy(stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let response = Response::text(503, "too many open connections; retry later")
        .header("Retry-After", "1")
        .with_close();
    let _ = (&stream).write_all(&response.encode(false));
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Bytes already received but unread would make the close a reset that can destroy the 503
    // in flight; take what is there (up to one head's worth) without waiting for more.
    if stream.set_nonblocking(true).is_ok() {
        let mut sink = [0u8; 4096];
        let mut drained = 0;
        while drained < MAX_HEAD_BYTES {
            match (&stream).read(&mut sink) {
                Ok(n) if n > 0 => drained += n,
                _ => break,
            }
        }
    }
}

/// Why reading a request stopped.
enum Incoming {
    /// The client closed or went idle: close without a response.
    Closed,
    /// Answer with this (the connection then closes).
    Reject(Response),
}

fn serve_connection(stream: &TcpStream, handler: &dyn Handler, rules: &Rules) {
    serve_requests(stream, handler, rules);
    // Shut the socket itself (not just this handle) so a disconnect watcher still holding a
    // clone wakes up and the client sees the close at once.
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn serve_requests(stream: &TcpStream, handler: &dyn Handler, rules: &Rules) {
    let timeouts = &rules.timeouts;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(timeouts.write));
    let mut buf = Vec::with_capacity(READ_CHUNK);
    loop {
        let head_len = match read_head(stream, &mut buf, timeouts, &rules.stopping) {
            Ok(n) => n,
            Err(Incoming::Closed) => return,
            Err(Incoming::Reject(response)) => return send_and_close(stream, response),
        };
        let mut rest = buf.split_off(head_len);
        let Ok(Status::Complete(head, _)) = parse_head(&buf) else {
            return;
        };
        let body = match read_body(stream, &head, &mut rest, timeouts) {
            Ok(body) => body,
            Err(Incoming::Closed) => return,
            Err(Incoming::Reject(response)) => return send_and_close(stream, response),
        };
        let started = Instant::now();
        let exchange = Exchange::new(
            stream,
            &rules.stopping,
            head.keep_alive(),
            head.minor_version == 1,
        );
        handler.handle(
            &Request {
                head: &head,
                body: &body,
            },
            &exchange,
        );
        let close = exchange.complete();
        if rules.access_log {
            let state = exchange.lock();
            access_log::Entry {
                status: state.status.unwrap_or(500),
                duration: started.elapsed(),
                tool: state.note.as_deref(),
                ..access_log::Entry::from_head(&head)
            }
            .write();
        }
        // A stopping server finishes the request in progress, then closes its connection.
        if close || rules.stopping.load(Ordering::SeqCst) {
            return;
        }
        drop(head);
        buf = rest;
    }
}

fn send_and_close(stream: &TcpStream, response: Response) {
    let _ = (&*stream).write_all(&response.with_close().encode(false));
}

/// Reads one read's worth into `buf` within `timeout`; `Ok(0)` at end of stream.
fn read_some(stream: &TcpStream, buf: &mut Vec<u8>, timeout: Duration) -> io::Result<usize> {
    if timeout.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    stream.set_read_timeout(Some(timeout))?;
    let start = buf.len();
    buf.resize(start + READ_CHUNK, 0);
    let result = (&*stream).read(&mut buf[start..]);
    buf.truncate(start + *result.as_ref().unwrap_or(&0));
    result
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn timeout_response() -> Response {
    Response::text(408, "request not received in time")
}

/// Reads until `buf` starts with a complete head; returns its length. Waits up to
/// `timeouts.idle` for a first byte (in [`STOP_POLL`] steps, giving up early once `stopping` is
/// set, so an idle kept-alive connection does not hold a stopping server), then `timeouts.head`
/// for the rest.
fn read_head(
    stream: &TcpStream,
    buf: &mut Vec<u8>,
    timeouts: &Timeouts,
    stopping: &AtomicBool,
) -> Result<usize, Incoming> {
    let idle_since = Instant::now();
    let mut started = (!buf.is_empty()).then(Instant::now);
    let mut check = started.is_some();
    loop {
        if check || buf.len() > MAX_HEAD_BYTES {
            match parse_head(buf) {
                Ok(Status::Complete(_, n)) => return Ok(n),
                Ok(Status::Partial) => {}
                Err(e) => return Err(Incoming::Reject(Response::text(e.status(), &e.to_string()))),
            }
        }
        let timeout = match started {
            None => timeouts
                .idle
                .saturating_sub(idle_since.elapsed())
                .min(STOP_POLL),
            Some(t) => timeouts.head.saturating_sub(t.elapsed()),
        };
        let before = buf.len();
        match read_some(stream, buf, timeout) {
            Ok(0) => return Err(Incoming::Closed),
            Ok(_) => {
                // Reparse only when a line may have ended (or on the first bytes, to refuse
                // garbage early): a byte-at-a-time sender then costs linear time.
                check = started.is_none() || buf[before..].contains(&b'\n');
                started.get_or_insert_with(Instant::now);
            }
            Err(e) if is_timeout(&e) && started.is_some() => {
                return Err(Incoming::Reject(timeout_response()))
            }
            Err(e)
                if is_timeout(&e)
                    && !stopping.load(Ordering::SeqCst)
                    && idle_since.elapsed() < timeouts.idle =>
            {
                continue
            }
            Err(_) => return Err(Incoming::Closed),
        }
    }
}

/// Reads the body `head` announces, starting with the bytes already in `rest`; leaves any bytes
/// after the body (a pipelined request) in `rest`.
fn read_body(
    stream: &TcpStream,
    head: &RequestHead<'_>,
    rest: &mut Vec<u8>,
    timeouts: &Timeouts,
) -> Result<Vec<u8>, Incoming> {
    let reject = |status: u16, message: &str| Incoming::Reject(Response::text(status, message));
    let length = head
        .body_length()
        .map_err(|e| reject(e.status(), &e.to_string()))?;
    if let Some(expect) = head.values("expect").next() {
        if !expect.eq_ignore_ascii_case(b"100-continue") {
            return Err(reject(417, "only `Expect: 100-continue` is supported"));
        }
        if length != BodyLength::Empty && rest.is_empty() {
            let _ = (&*stream).write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }
    let started = Instant::now();
    let more = |rest: &mut Vec<u8>| match read_some(
        stream,
        rest,
        timeouts.body.saturating_sub(started.elapsed()),
    ) {
        Ok(0) => Err(Incoming::Closed),
        Ok(_) => Ok(()),
        Err(e) if is_timeout(&e) => Err(Incoming::Reject(timeout_response())),
        Err(_) => Err(Incoming::Closed),
    };
    match length {
        BodyLength::Empty => Ok(Vec::new()),
        BodyLength::Fixed(n) => {
            debug_assert!(n <= MAX_BODY_BYTES);
            while rest.len() < n {
                more(rest)?;
            }
            let after = rest.split_off(n);
            Ok(std::mem::replace(rest, after))
        }
        BodyLength::Chunked => {
            let mut decoder = ChunkedDecoder::new();
            let mut body = Vec::new();
            loop {
                let used = decoder
                    .decode(rest, &mut body)
                    .map_err(|e| reject(e.status(), &e.to_string()))?;
                rest.drain(..used);
                if decoder.is_done() {
                    return Ok(body);
                }
                more(rest)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;

    impl Handler for Nothing {
        fn handle(&self, _request: &Request<'_>, _exchange: &Exchange<'_>) {}
    }

    #[test]
    fn a_bind_failure_keeps_its_kind_and_names_the_address() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let Err(e) = Server::bind(addr, Arc::new(Nothing)) else {
            panic!("bound a port in use");
        };
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert_eq!(
            e.to_string(),
            format!("cannot listen on {addr}: Address already in use (os error 98)")
        );
    }
}
