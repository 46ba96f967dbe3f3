//! Every bound the HTTP server enforces, in one place, so SECURITY.md and the tests name the same numbers.
//!
//! Each limit turns hostile or broken input into a clear status code (or a closed connection)
//! instead of unbounded memory, threads or time.

pub use crate::http1::limits::{
    MAX_BODY_BYTES, MAX_CHUNK_LINE, MAX_HEADERS, MAX_HEAD_BYTES, MAX_REQUEST_LINE,
    MAX_TRAILER_BYTES,
};
use std::time::Duration;

/// Most connections open at once; the next one gets 503 and is closed.
pub const MAX_CONNECTIONS: usize = 1024;

/// Most worker threads; each serves one connection at a time, so this equals the connection cap.
pub const MAX_WORKERS: usize = MAX_CONNECTIONS;

/// Stack of each worker thread (tool calls run on it; the JSON code does not recurse).
pub const WORKER_STACK_BYTES: usize = 512 * 1024;

/// An idle worker thread exits after waiting this long for a connection.
pub const WORKER_IDLE_EXIT: Duration = Duration::from_secs(60);

/// Time allowed to receive a whole request head once its first byte arrived (slowloris bound).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Time allowed to receive a whole request body once the head arrived.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a kept-alive connection may sit idle between requests before it is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Time allowed for one write to the client (a client that never reads cannot hold a worker).
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Most live MCP sessions; past it the least recently used session is ended (its id gets 404).
pub const MAX_SESSIONS: usize = 1024;

/// A session unused this long expires (its id gets 404 and the client re-initializes).
pub const SESSION_IDLE_EXPIRY: Duration = Duration::from_secs(60 * 60);

/// How often a disconnect watcher (2026-07-28 calls) re-checks whether its call has finished when
/// the client sends nothing; it ends sooner when the client sends or closes.
pub const DISCONNECT_POLL: Duration = Duration::from_secs(1);

/// Stack of a disconnect-watcher thread (it only waits in `peek`).
pub const WATCHER_STACK_BYTES: usize = 64 * 1024;

/// Bytes read from the socket per read call; the connection buffer grows only up to the limits above.
pub const READ_CHUNK: usize = 8 * 1024;

/// How often a connection waiting idle for its next request checks whether the server is stopping.
pub const STOP_POLL: Duration = Duration::from_secs(1);

/// After a stop, how long the server waits for connections in progress (a call runs at most
/// gitread's 15 s timeout) before [`Server::run`](super::Server::run) returns anyway.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(20);

/// How long a sealed session token (`--session-key-file`) is accepted after `initialize`. A token
/// cannot be renewed in place (the id a client holds never changes), so this is an absolute
/// lifetime, not an idle one; it also bounds how long a DELETE must be remembered and how long a
/// previous key must stay accepted after a rotation.
pub const SEALED_SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// Most ended (DELETEd) sealed sessions one replica remembers until they expire; past it the one
/// expiring soonest is forgotten (its token works again on this replica until it expires).
pub const MAX_REVOKED_SESSIONS: usize = 16 * 1024;

/// Longest `Mcp-Session-Id` looked at; longer → 400 before any decoding (a sealed token is 194:
/// [`super::sealed::TOKEN_HEX_DIGITS`]).
pub const MAX_SESSION_ID_BYTES: usize = 256;

/// Largest session key file read (a key is 64 to 128 hex digits and a line ending).
pub const MAX_SESSION_KEY_FILE_BYTES: u64 = 256;

/// Most events one session's event store holds for resumption (all its streams together); past
/// it the oldest is evicted.
pub const MAX_STORED_EVENTS: usize = 128;

/// Most bytes of event data one session's event store holds; past it the oldest events are
/// evicted. With [`MAX_SESSIONS`] this bounds what event stores can hold in one process.
pub const MAX_STORED_EVENT_BYTES: usize = 256 * 1024;

/// How long an event stays resumable.
pub const EVENT_RETENTION: Duration = Duration::from_secs(5 * 60);

/// Most streams one session remembers (the standalone stream and every POST stream whose events
/// may still be resumed); past it the oldest finished stream is forgotten with its events.
pub const MAX_STREAM_RECORDS: usize = 64;

/// Longest `Last-Event-ID` looked at; longer → 400 (the longest id written is 83 bytes).
pub const MAX_EVENT_ID_BYTES: usize = 96;

/// Longest replica name (`--replica-name`), the first field of every event id.
pub const MAX_REPLICA_NAME_BYTES: usize = 32;

/// How often an idle GET stream sends a keep-alive comment (below the 60 s read timeouts of
/// common proxies, so they do not cut a quiet stream).
pub const SSE_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// The `retry:` a priming event advises: how long a client waits before resuming a stream the
/// server closed.
pub const SSE_RETRY: Duration = Duration::from_secs(1);
