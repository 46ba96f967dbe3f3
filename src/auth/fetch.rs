//! One bounded HTTP/1.1 exchange with an authorization server (key sets, metadata,
//! introspection), on the MCP client's wire code: a deadline over the whole exchange (connect,
//! send, every read), a cap on the head and the body, and an error naming what went wrong.
//!
//! The authorization server is trusted to answer honestly but not to answer at all, or quickly,
//! or sanely: a server that drips one byte a second, sends an endless body or a malformed head is
//! cut off at the deadline or the cap.

use crate::client::wire::{self, BodyDecoder, HttpUrl};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Bytes read from the socket per call.
const READ_CHUNK: usize = 8 * 1024;

/// A response: its status and whole body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What one exchange sends.
pub struct Exchange<'a> {
    pub method: &'a str,
    pub url: &'a HttpUrl,
    /// Extra header lines; values must be free of CR and LF.
    pub headers: Vec<(&'a str, String)>,
    pub body: &'a [u8],
    pub timeout: Duration,
    /// The largest body accepted.
    pub max_body: usize,
}

impl Exchange<'_> {
    /// Runs the exchange; the error says what failed, naming the URL.
    pub fn run(self) -> Result<Answer, String> {
        let url = self.url.to_string();
        self.run_inner().map_err(|e| format!("{url}: {e}"))
    }

    fn run_inner(self) -> Result<Answer, String> {
        let deadline = Instant::now() + self.timeout;
        let left = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| format!("no complete answer within {} ms", self.timeout.as_millis()))
        };
        let address: SocketAddr = (self.url.host.as_str(), self.url.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve the host: {e}"))?
            .next()
            .ok_or("the host resolves to no address")?;
        let mut stream = TcpStream::connect_timeout(&address, left()?)
            .map_err(|e| format!("cannot connect: {e}"))?;
        let _ = stream.set_nodelay(true);
        let mut headers = self.headers;
        headers.push(("Connection", "close".into()));
        headers.push(("Content-Length", self.body.len().to_string()));
        let mut request = wire::request_head(self.method, self.url, &headers);
        request.extend_from_slice(self.body);
        stream
            .set_write_timeout(Some(left()?))
            .and_then(|()| stream.write_all(&request))
            .map_err(|e| format!("cannot send the request: {e}"))?;
        let mut buffer = Vec::new();
        let mut chunk = vec![0u8; READ_CHUNK];
        let mut read = |buffer: &mut Vec<u8>| -> Result<bool, String> {
            stream
                .set_read_timeout(Some(left()?))
                .map_err(|e| e.to_string())?;
            match stream.read(&mut chunk) {
                Ok(0) => Ok(false),
                Ok(n) => {
                    buffer.extend_from_slice(&chunk[..n]);
                    Ok(true)
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    left().map(|_| true)
                }
                Err(e) => Err(format!("cannot read the answer: {e}")),
            }
        };
        let (head, used) = loop {
            match wire::parse_head(&buffer).map_err(|e| e.0)? {
                Some((head, _)) if head.status < 200 => {
                    return Err(format!("interim status {} is not an answer", head.status))
                }
                Some(parsed) => break parsed,
                None => {
                    if !read(&mut buffer)? {
                        return Err("the connection closed before a complete head".into());
                    }
                }
            }
        };
        let framing = head.framing().map_err(|e| e.0)?;
        let mut decoder = BodyDecoder::new(framing);
        let mut body = Vec::new();
        let mut pending = buffer.split_off(used);
        loop {
            let mut offset = 0;
            while offset < pending.len() && !decoder.is_done() {
                offset += decoder
                    .feed(&pending[offset..], &mut body)
                    .map_err(|e| e.0)?;
                if body.len() > self.max_body {
                    return Err(format!("the body is larger than {} bytes", self.max_body));
                }
            }
            if decoder.is_done() {
                break;
            }
            pending.clear();
            if !read(&mut pending)? {
                decoder.at_eof().map_err(|e| e.0)?;
                break;
            }
        }
        Ok(Answer {
            status: head.status,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that answers one connection with `reply` (after reading the request head).
    fn serve_once(reply: Vec<u8>, pause: Duration) -> HttpUrl {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            std::thread::sleep(pause);
            let _ = s.write_all(&reply);
            std::thread::sleep(Duration::from_millis(200));
        });
        HttpUrl::parse(&format!("http://127.0.0.1:{port}/x")).unwrap()
    }

    fn get(url: &HttpUrl, timeout_ms: u64, max_body: usize) -> Result<Answer, String> {
        Exchange {
            method: "GET",
            url,
            headers: vec![],
            body: b"",
            timeout: Duration::from_millis(timeout_ms),
            max_body,
        }
        .run()
    }

    #[test]
    fn bodies_by_length_chunks_and_close_are_read() {
        let url = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".to_vec(),
            Duration::ZERO,
        );
        let answer = get(&url, 2000, 100).unwrap();
        assert_eq!((answer.status, &answer.body[..]), (200, &b"hello"[..]));
        let url = serve_once(
            b"HTTP/1.1 404 Nope\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                .to_vec(),
            Duration::ZERO,
        );
        let answer = get(&url, 2000, 100).unwrap();
        assert_eq!((answer.status, &answer.body[..]), (404, &b"abc"[..]));
        let url = serve_once(
            b"HTTP/1.0 200 OK\r\n\r\nuntil close".to_vec(),
            Duration::ZERO,
        );
        assert_eq!(get(&url, 2000, 100).unwrap().body, b"until close");
    }

    #[test]
    fn oversized_slow_truncated_and_malformed_answers_are_errors() {
        let url = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n"
                .iter()
                .copied()
                .chain([b'x'; 101])
                .collect(),
            Duration::ZERO,
        );
        assert!(get(&url, 2000, 100)
            .unwrap_err()
            .contains("larger than 100 bytes"));
        let url = serve_once(
            b"HTTP/1.1 200 OK\r\n\r\n".to_vec(),
            Duration::from_millis(1500),
        );
        let err = get(&url, 300, 100).unwrap_err();
        assert!(err.contains("within 300 ms"), "{err}");
        let url = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort".to_vec(),
            Duration::ZERO,
        );
        assert!(get(&url, 2000, 100)
            .unwrap_err()
            .contains("middle of the body"));
        let url = serve_once(b"garbage\r\n\r\n".to_vec(), Duration::ZERO);
        assert!(get(&url, 2000, 100).unwrap_err().contains("status line"));
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let url = HttpUrl::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let err = get(&url, 2000, 100).unwrap_err();
        assert!(
            err.starts_with(&format!("http://127.0.0.1:{port}/: cannot connect")),
            "{err}"
        );
    }
}
