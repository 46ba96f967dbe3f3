//! Keep-alive for the HTTP client: the idle connections a transport holds to its one origin, so
//! that sequential requests share a connection instead of paying a TCP handshake each (over
//! https, a TLS helper's start and handshake).
//!
//! A connection goes back to the pool only after its whole response was read, when the server
//! spoke HTTP/1.1 and did not say `Connection: close`; it is kept for at most [`IDLE_TIMEOUT`]
//! (less when the server's `Keep-Alive: timeout=N` says so), and at most
//! [`MAX_IDLE_CONNECTIONS`] are kept (the oldest is closed to make room). Event streams never
//! come from or go back to the pool. When a pooled connection is taken, it is checked first: one
//! on which the server already sent its end of stream (or any stray byte) is closed, not used.
//! Which failures on a reused connection may be retried is decided by the transport
//! (`http.rs`), which owns the requests.

use super::stream::Stream;
use crate::http1::response::ResponseHead;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most idle connections kept per transport (one origin). Requests are sent one at a time, so one
/// is the usual number; the standalone stream's thread answering a server request at the same
/// moment needs a second.
pub const MAX_IDLE_CONNECTIONS: usize = 4;

/// Longest an idle connection is kept. Servers close idle connections on their own schedule
/// (Node's default is 5 s, this product's server 60 s); `Keep-Alive: timeout=N` shortens it.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Taken off the server's `Keep-Alive: timeout=N`, so that the client stops using a connection
/// before the server's timer closes it under a request in flight.
pub const KEEP_ALIVE_MARGIN: Duration = Duration::from_secs(1);

/// The idle connections of one transport.
#[derive(Debug, Default)]
pub struct Pool {
    idle: Mutex<Vec<Idle>>,
}

#[derive(Debug)]
struct Idle {
    stream: Stream,
    expires: Instant,
}

impl Pool {
    /// The most recently used idle connection that is still open; expired and closed ones met on
    /// the way are dropped (closed).
    pub fn take(&self) -> Option<Stream> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        while let Some(mut entry) = idle.pop() {
            if entry.expires > now && entry.stream.is_idle() {
                return Some(entry.stream);
            }
        }
        None
    }

    /// Keeps `stream` for at most `keep_for` (capped at [`IDLE_TIMEOUT`]); when the pool is full
    /// the oldest idle connection is closed.
    pub fn put(&self, stream: Stream, keep_for: Duration) {
        let keep_for = keep_for.min(IDLE_TIMEOUT);
        if keep_for.is_zero() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        idle.retain(|e| e.expires > now);
        if idle.len() >= MAX_IDLE_CONNECTIONS {
            idle.remove(0);
        }
        idle.push(Idle {
            stream,
            expires: now + keep_for,
        });
    }

    /// How many idle connections are held now.
    pub fn idle_count(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Closes every idle connection.
    pub fn clear(&self) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// How long the connection that carried the response `head` may be kept idle, or `None` when it
/// must be closed: an HTTP/1.0 server (which closes unless asked otherwise, and this client does
/// not ask), `Connection: close`, or a `Keep-Alive: timeout=` of at most [`KEEP_ALIVE_MARGIN`].
pub fn reusable_for(head: &ResponseHead) -> Option<Duration> {
    if head.minor_version == 0 || head.lists_token("connection", "close") {
        return None;
    }
    let server_timeout = head
        .header("keep-alive")
        .into_iter()
        .flat_map(|v| v.split(','))
        .filter_map(|param| param.trim().split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("timeout"))
        .and_then(|(_, secs)| secs.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    match server_timeout {
        None => Some(IDLE_TIMEOUT),
        Some(t) if t > KEEP_ALIVE_MARGIN => Some((t - KEEP_ALIVE_MARGIN).min(IDLE_TIMEOUT)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::response::parse_head;
    use std::io::{ErrorKind, Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// `count` connected pairs: (client side, server side).
    fn pairs(count: usize) -> Vec<(Stream, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        (0..count)
            .map(|_| {
                let client = TcpStream::connect(addr).unwrap();
                let (server, _) = listener.accept().unwrap();
                (Stream::Tcp(client), server)
            })
            .collect()
    }

    fn head(raw: &str) -> ResponseHead {
        parse_head(raw.as_bytes()).unwrap().unwrap().0
    }

    /// Whether the server side sees the client close the connection within a second: an end of
    /// stream, or a reset when the client closed with bytes unread.
    fn closed_by_client(server: &mut TcpStream) -> bool {
        server
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        match server.read(&mut [0u8; 1]) {
            Ok(0) => true,
            Err(e) => e.kind() == ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }

    #[test]
    fn the_pool_holds_at_most_its_bound_and_closes_the_oldest() {
        let pool = Pool::default();
        let mut servers = Vec::new();
        for (client, server) in pairs(MAX_IDLE_CONNECTIONS + 2) {
            pool.put(client, IDLE_TIMEOUT);
            servers.push(server);
        }
        assert_eq!(pool.idle_count(), MAX_IDLE_CONNECTIONS);
        // The two put first were closed to make room; the others are still open.
        assert!(closed_by_client(&mut servers[0]));
        assert!(closed_by_client(&mut servers[1]));
        servers[2]
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        assert!(servers[2].read(&mut [0u8; 1]).is_err(), "still open");
        // The most recently used comes back first.
        let last = servers.last().unwrap().peer_addr().unwrap();
        let Some(Stream::Tcp(taken)) = pool.take() else {
            panic!("a TCP connection")
        };
        assert_eq!(taken.local_addr().unwrap(), last);
        assert_eq!(pool.idle_count(), MAX_IDLE_CONNECTIONS - 1);
        pool.clear();
        assert_eq!(pool.idle_count(), 0);
        assert!(closed_by_client(&mut servers[2]));
    }

    #[test]
    fn a_connection_the_server_closed_or_wrote_on_is_not_taken() {
        let pool = Pool::default();
        let mut pairs = pairs(3);
        let (quiet, _quiet_server) = pairs.pop().unwrap();
        let (stray, mut stray_server) = pairs.pop().unwrap();
        let (closed, closed_server) = pairs.pop().unwrap();
        pool.put(quiet, IDLE_TIMEOUT);
        pool.put(stray, IDLE_TIMEOUT);
        pool.put(closed, IDLE_TIMEOUT);
        drop(closed_server);
        stray_server.write_all(b"HTTP/1.1 200 OK\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        // The closed one and the one with a stray byte are dropped; the quiet one is used.
        let mut taken = pool.take().expect("the quiet connection");
        assert!(taken.is_idle());
        assert_eq!(pool.idle_count(), 0);
        assert!(closed_by_client(&mut stray_server));
    }

    #[test]
    fn expired_connections_are_not_taken() {
        let pool = Pool::default();
        let (client, mut server) = pairs(1).pop().unwrap();
        pool.put(client, Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(40));
        assert!(pool.take().is_none());
        assert!(closed_by_client(&mut server));
        let (client, _server) = pairs(1).pop().unwrap();
        pool.put(client, Duration::ZERO);
        assert_eq!(pool.idle_count(), 0, "a zero keep-alive is not kept");
    }

    #[test]
    fn reuse_follows_the_version_connection_and_keep_alive_headers() {
        assert_eq!(
            reusable_for(&head("HTTP/1.1 200 OK\r\n\r\n")),
            Some(IDLE_TIMEOUT)
        );
        assert_eq!(reusable_for(&head("HTTP/1.0 200 OK\r\n\r\n")), None);
        assert_eq!(
            reusable_for(&head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n")),
            None
        );
        assert_eq!(
            reusable_for(&head(
                "HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\n\r\n"
            )),
            None
        );
        assert_eq!(
            reusable_for(&head(
                "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\n\r\n"
            )),
            Some(Duration::from_secs(4))
        );
        assert_eq!(
            reusable_for(&head("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\n\r\n")),
            None
        );
        assert_eq!(
            reusable_for(&head("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=600\r\n\r\n")),
            Some(IDLE_TIMEOUT)
        );
        assert_eq!(
            reusable_for(&head("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=soon\r\n\r\n")),
            Some(IDLE_TIMEOUT)
        );
    }
}
