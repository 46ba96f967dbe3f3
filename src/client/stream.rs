//! A connection to a server as one byte stream, whatever carries it: a TCP socket for `http://`,
//! the TLS helper's pipes for `https://` ([`super::tls`]). The HTTP code above it (the transport,
//! the one-shot exchange, the pool) reads, writes, times out and closes it without knowing which.

use super::tls::{self, TlsConfig, TlsError, TlsStream};
use crate::http1::url::Url;
use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// An open connection.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Tls(TlsStream),
}

/// Ends a [`Stream`] from another thread, waking a reader blocked on it.
pub enum Closer {
    Tcp(TcpStream),
    Tls(tls::Closer),
}

impl Closer {
    pub fn close(&self) {
        match self {
            Closer::Tcp(socket) => {
                let _ = socket.shutdown(Shutdown::Both);
            }
            Closer::Tls(closer) => closer.close(),
        }
    }
}

/// Why no connection was made.
#[derive(Debug)]
pub enum ConnectError {
    /// The host does not resolve (the resolver's words).
    Resolve(String),
    /// No address accepted the connection, or the host has none.
    Connect(String),
    /// Nothing answered within the time allowed (given).
    Timeout(Duration),
    /// The TLS handshake did not finish within the time allowed (given).
    HandshakeTimeout(Duration),
    /// The TLS helper is missing or refused the server (its certificate, its protocol...).
    Tls(TlsError),
    /// An `https://` URL where only plain http is spoken.
    NoTls,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Resolve(why) => write!(f, "cannot resolve the host: {why}"),
            ConnectError::Connect(why) => f.write_str(why),
            ConnectError::Timeout(after) => {
                write!(f, "no answer within {:.1} s", after.as_secs_f64())
            }
            ConnectError::HandshakeTimeout(after) => {
                write!(f, "no TLS handshake within {:.1} s", after.as_secs_f64())
            }
            ConnectError::Tls(e) => write!(f, "{e}"),
            ConnectError::NoTls => f.write_str("https is not spoken here (plain http only)"),
        }
    }
}

/// Opens a connection to `url`'s host: TCP to each of its addresses in turn, or the TLS helper
/// for `https://` (with `tls`; without, [`ConnectError::NoTls`]). Each attempt gets at most
/// `attempt`, and none outlasts `deadline`.
pub fn connect(
    url: &Url,
    tls: Option<&TlsConfig>,
    attempt: Duration,
    deadline: Instant,
) -> Result<Stream, ConnectError> {
    let limit = || {
        attempt
            .min(deadline.saturating_duration_since(Instant::now()))
            .max(Duration::from_millis(1))
    };
    if url.tls {
        let config = tls.ok_or(ConnectError::NoTls)?;
        let timeout = limit();
        return match TlsStream::connect(config, &url.host, url.port, timeout) {
            Ok(stream) => Ok(Stream::Tls(stream)),
            Err(TlsError::Timeout) => Err(ConnectError::HandshakeTimeout(timeout)),
            Err(e) => Err(ConnectError::Tls(e)),
        };
    }
    let addresses = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| ConnectError::Resolve(e.to_string()))?;
    let mut last = None;
    for address in addresses {
        let timeout = limit();
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(stream) => {
                // A request is one write here and a reply one write there: without this, each
                // request on a kept-alive connection waits out the peer's delayed ACK (Nagle).
                let _ = stream.set_nodelay(true);
                return Ok(Stream::Tcp(stream));
            }
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                last = Some(ConnectError::Timeout(timeout))
            }
            Err(e) => last = Some(ConnectError::Connect(e.to_string())),
        }
    }
    Err(last.unwrap_or_else(|| ConnectError::Connect("the host has no address".into())))
}

impl Stream {
    /// How long a read may wait (`None`: for ever). A zero duration is refused, as for sockets.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Tls(s) => {
                s.set_read_timeout(nonzero(timeout)?);
                Ok(())
            }
        }
    }

    /// How long a write may wait (`None`: for ever).
    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(timeout),
            Stream::Tls(s) => {
                s.set_write_timeout(nonzero(timeout)?);
                Ok(())
            }
        }
    }

    /// Whether an idle connection can carry a request: nothing is waiting to be read on it (an
    /// end of stream means the server closed it; a stray byte would be taken for the next
    /// response's).
    pub fn is_idle(&mut self) -> bool {
        match self {
            Stream::Tcp(s) => {
                if s.set_nonblocking(true).is_err() {
                    return false;
                }
                let mut probe = [0u8; 1];
                let quiet =
                    matches!(s.peek(&mut probe), Err(e) if e.kind() == ErrorKind::WouldBlock);
                s.set_nonblocking(false).is_ok() && quiet
            }
            Stream::Tls(s) => s.is_idle(),
        }
    }

    /// A handle that ends this connection from another thread.
    pub fn closer(&self) -> Option<Closer> {
        match self {
            Stream::Tcp(s) => s.try_clone().ok().map(Closer::Tcp),
            Stream::Tls(s) => Some(Closer::Tls(s.closer())),
        }
    }
}

fn nonzero(timeout: Option<Duration>) -> io::Result<Option<Duration>> {
    match timeout {
        Some(t) if t.is_zero() => Err(io::Error::new(
            ErrorKind::InvalidInput,
            "a zero timeout is not allowed",
        )),
        t => Ok(t),
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}
