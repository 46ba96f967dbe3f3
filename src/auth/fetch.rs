//! One bounded HTTP/1.1 exchange with an authorization server (key sets, metadata,
//! introspection): the client's [`oneshot`](crate::client::oneshot) exchange (a deadline over
//! connect, send and every read, a cap on the head and the body), with errors naming the URL.
//!
//! The authorization server is trusted to answer honestly but not to answer at all, or quickly,
//! or sanely: a server that drips one byte a second, sends an endless body or a malformed head is
//! cut off at the deadline or the cap.

use crate::client::oneshot::{self, Failure};
use crate::http1::url::Url;
use std::fmt;
use std::time::{Duration, Instant};

/// Why an exchange brought no answer, naming the URL.
#[derive(Debug)]
pub struct FetchError {
    url: String,
    timeout: Duration,
    failure: Failure,
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.failure {
            Failure::Timeout => write!(
                f,
                "{}: no complete answer within {} ms",
                self.url,
                self.timeout.as_millis()
            ),
            failure => write!(f, "{}: {failure}", self.url),
        }
    }
}

impl std::error::Error for FetchError {}

/// A response: its status and whole body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What one exchange sends.
pub struct Exchange<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    /// Extra header lines; values must be free of CR and LF.
    pub headers: Vec<(&'a str, String)>,
    pub body: &'a [u8],
    pub timeout: Duration,
    /// The largest body accepted.
    pub max_body: usize,
}

impl Exchange<'_> {
    /// Runs the exchange ([`oneshot::exchange`]); the error says what failed, naming the URL.
    pub fn run(self) -> Result<Answer, FetchError> {
        let request = oneshot::Request {
            method: self.method,
            url: self.url,
            headers: &self.headers,
            body: self.body,
            connect_timeout: self.timeout,
            deadline: Instant::now() + self.timeout,
            max_body: self.max_body,
        };
        match oneshot::exchange(&request) {
            Ok((head, body)) => Ok(Answer {
                status: head.status,
                body,
            }),
            Err(failure) => Err(FetchError {
                url: self.url.to_string(),
                timeout: self.timeout,
                failure,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server that answers one connection with `reply` (after reading the request head).
    fn serve_once(reply: Vec<u8>, pause: Duration) -> Url {
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
        Url::parse(&format!("http://127.0.0.1:{port}/x")).unwrap()
    }

    fn get(url: &Url, timeout_ms: u64, max_body: usize) -> Result<Answer, String> {
        Exchange {
            method: "GET",
            url,
            headers: vec![],
            body: b"",
            timeout: Duration::from_millis(timeout_ms),
            max_body,
        }
        .run()
        .map_err(|e| e.to_string())
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
        let url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let err = get(&url, 2000, 100).unwrap_err();
        assert!(
            err.starts_with(&format!("http://127.0.0.1:{port}/: cannot connect")),
            "{err}"
        );
    }
}
