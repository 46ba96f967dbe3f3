//! The loopback redirect listener of RFC 8252 §7.3: a socket on 127.0.0.1 at an ephemeral port
//! that waits, up to a deadline, for the browser to bring back the authorization response, and
//! answers it with a short page.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";

/// Requests answered before giving up (a browser may ask for `/favicon.ico` and the like first).
pub const MAX_LOOPBACK_REQUESTS: usize = 16;

/// Largest request head read from the browser.
pub const MAX_CALLBACK_HEAD_BYTES: usize = 16 * 1024;

/// How long one browser connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the listener checks its deadline while no browser connects.
const POLL_STEP: Duration = Duration::from_millis(50);

/// A bound listener and the redirect URI that reaches it.
pub struct Listener {
    socket: TcpListener,
    pub redirect_uri: String,
}

impl Listener {
    /// Binds 127.0.0.1 at a port the system picks (never `localhost`, which may resolve to
    /// another interface, RFC 8252 §8.3).
    pub fn bind() -> Result<Listener, String> {
        let socket = TcpListener::bind(("127.0.0.1", 0))
            .map_err(|e| format!("cannot open the loopback redirect listener: {e}"))?;
        let port = socket
            .local_addr()
            .map_err(|e| format!("loopback redirect listener: {e}"))?
            .port();
        Ok(Listener {
            socket,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// Waits until `deadline` for a request to the callback path and returns its query. Other
    /// paths get 404; `page` makes the text shown for the callback from its query.
    pub fn wait(
        &self,
        deadline: Instant,
        page: &dyn Fn(&str) -> (bool, String),
    ) -> Result<String, String> {
        self.socket
            .set_nonblocking(true)
            .map_err(|e| format!("loopback redirect listener: {e}"))?;
        let mut served = 0;
        while served < MAX_LOOPBACK_REQUESTS {
            let stream = match self.socket.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err("no authorization response reached the loopback redirect listener in time".into());
                    }
                    std::thread::sleep(POLL_STEP);
                    continue;
                }
                Err(e) => return Err(format!("loopback redirect listener: {e}")),
            };
            served += 1;
            if let Some(query) = serve(stream, page) {
                return Ok(query);
            }
        }
        Err(format!(
            "{MAX_LOOPBACK_REQUESTS} requests reached the loopback redirect listener and none was the authorization response"
        ))
    }
}

/// Reads one request; answers it; returns the callback's query when it was the callback.
fn serve(mut stream: TcpStream, page: &dyn Fn(&str) -> (bool, String)) -> Option<String> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_CALLBACK_HEAD_BYTES {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("GET "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (status, body, found) = if path == CALLBACK_PATH {
        let (ok, message) = page(query);
        (if ok { "200 OK" } else { "400 Bad Request" }, message, true)
    } else {
        ("404 Not Found", "not found".to_owned(), false)
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
    found.then(|| query.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_returns_the_callback_query_and_ignores_other_paths() {
        let listener = Listener::bind().unwrap();
        assert!(listener.redirect_uri.starts_with("http://127.0.0.1:"));
        let addr = listener
            .redirect_uri
            .trim_start_matches("http://")
            .trim_end_matches(CALLBACK_PATH)
            .to_owned();
        let browser = std::thread::spawn(move || {
            let mut replies = Vec::new();
            for target in ["/favicon.ico", "/callback?code=c&state=s"] {
                let mut s = TcpStream::connect(&addr).unwrap();
                write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
                let mut reply = String::new();
                let _ = s.read_to_string(&mut reply);
                replies.push(reply);
            }
            replies
        });
        let query = listener
            .wait(Instant::now() + Duration::from_secs(10), &|q| {
                (true, format!("got {q}"))
            })
            .unwrap();
        assert_eq!(query, "code=c&state=s");
        let replies = browser.join().unwrap();
        assert!(replies[0].starts_with("HTTP/1.1 404"));
        assert!(
            replies[1].starts_with("HTTP/1.1 200") && replies[1].ends_with("got code=c&state=s")
        );
    }

    #[test]
    fn the_listener_gives_up_at_its_deadline() {
        let listener = Listener::bind().unwrap();
        let err = listener.wait(Instant::now() + Duration::from_millis(100), &|_| {
            (true, String::new())
        });
        assert!(err.unwrap_err().contains("in time"));
    }
}
