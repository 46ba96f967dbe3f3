//! Shared by the tests/http_*.rs files: a small tool set, a server on an ephemeral loopback port,
//! and a raw HTTP/1.1 client that reads responses byte for byte (so framing bugs show).

#![allow(dead_code)]

use agentteams_mcp::http::{self, HttpConfig};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{CallContext, Engine, LogLevel, Tool, ToolError, ToolOutput, ToolSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Set when a `wait` call starts; then its outcome (true: it was cancelled) once it ends.
pub static WAIT_STARTED: AtomicBool = AtomicBool::new(false);
pub static WAIT_OUTCOME: Mutex<Option<bool>> = Mutex::new(None);

/// How long a `wait` call waits for its cancellation before answering normally.
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Tools for the transport tests: `echo` returns its arguments; `progress` reports 1, 2, 3 of 3
/// (when asked for progress) and logs at info (when the log level admits it); `wait` waits up to
/// [`WAIT_LIMIT`] for its cancellation and records whether it came.
pub struct TestTools;

impl ToolSet for TestTools {
    fn server_name(&self) -> &str {
        "http-test"
    }
    fn tools(&self) -> Vec<Tool> {
        let object = json::parse(br#"{"type": "object"}"#).unwrap();
        vec![
            Tool::read_only("echo", "Returns its arguments.", object.clone()),
            Tool::read_only("progress", "Reports progress and logs.", object.clone()),
            Tool::read_only("wait", "Waits for its cancellation.", object),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "echo" => Ok(ToolOutput::Value(Value::Object(args.clone()))),
            "wait" => {
                WAIT_STARTED.store(true, Ordering::SeqCst);
                let cancelled = ctx.cancel_token().wait_timeout(WAIT_LIMIT);
                *WAIT_OUTCOME.lock().unwrap() = Some(cancelled);
                Ok(ToolOutput::Value(Value::from(cancelled)))
            }
            _ => {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                ctx.log(LogLevel::Info, None, Value::from("done"));
                Ok(ToolOutput::Value(Value::from("finished")))
            }
        }
    }
}

/// Starts a server for [`TestTools`] with `config` on a free loopback port; it runs until the test
/// process exits.
pub fn start(mut config: HttpConfig) -> SocketAddr {
    config.port = 0;
    let engine = Arc::new(Engine::new(Arc::new(TestTools)));
    let server = http::bind(engine, config).expect("bind");
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.run());
    addr
}

pub fn start_default() -> SocketAddr {
    start(HttpConfig::default())
}

/// One parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        json::parse(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON-RPC error code in the body.
    pub fn error_code(&self) -> Option<i64> {
        self.json().get("error")?.get("code")?.as_i64()
    }

    /// The `data:` payloads of an SSE body, one per event (priming events, whose data is
    /// empty, are skipped).
    pub fn events(&self) -> Vec<Value> {
        self.text()
            .split("\n\n")
            .map(|event| {
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                data.join("\n")
            })
            .filter(|data| !data.trim().is_empty())
            .map(|data| json::parse(data.as_bytes()).unwrap())
            .collect()
    }
}

/// A raw connection.
pub struct Client {
    pub stream: TcpStream,
    buf: Vec<u8>,
    pub addr: SocketAddr,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Client {
            stream,
            buf: Vec::new(),
            addr,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
    }

    /// Reads more bytes; false at end of stream (or a reset).
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16384];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next CRLF-terminated line, without its CRLF; `None` if the connection closed first.
    pub fn take_line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8(self.buf[..i].to_vec()).unwrap();
                self.buf.drain(..i + 2);
                return Some(line);
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// The next `n` bytes; `None` if the connection closed first.
    pub fn take_exact(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill() {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    /// Reads one response head (status and headers); `None` if the connection closed first.
    pub fn read_head(&mut self) -> Option<Reply> {
        let status_line = self.take_line()?;
        let status: u16 = status_line.split(' ').nth(1)?.parse().ok()?;
        let mut headers = Vec::new();
        loop {
            let line = self.take_line()?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header line");
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        Some(Reply {
            status,
            headers,
            body: Vec::new(),
        })
    }

    /// Reads one response (skipping `100 Continue`); `None` if the connection closed first.
    pub fn read_reply(&mut self) -> Option<Reply> {
        loop {
            let mut reply = self.read_head()?;
            if reply.status == 100 {
                continue;
            }
            if reply.header("transfer-encoding") == Some("chunked") {
                loop {
                    let size = usize::from_str_radix(&self.take_line()?, 16).ok()?;
                    let data = self.take_exact(size + 2)?;
                    if size == 0 {
                        break;
                    }
                    reply.body.extend_from_slice(&data[..size]);
                }
            } else {
                let length: usize = reply.header("content-length")?.parse().ok()?;
                reply.body = self.take_exact(length)?;
            }
            return Some(reply);
        }
    }

    /// True when the server has closed the connection (nothing more to read).
    pub fn is_closed(&mut self) -> bool {
        self.buf.is_empty() && !self.fill()
    }

    pub fn host(&self) -> String {
        format!("localhost:{}", self.addr.port())
    }

    /// Sends a request with `Host: localhost:PORT`, the given headers and a Content-Length body.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Option<Reply> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host());
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() || method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.send(&bytes);
        self.read_reply()
    }

    /// POSTs a JSON-RPC body to /mcp the way an MCP client does, with optional extra headers.
    pub fn post(&mut self, body: &str, extra: &[(&str, &str)]) -> Reply {
        let mut headers = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Content-Type", "application/json"),
        ];
        headers.extend_from_slice(extra);
        self.request("POST", "/mcp", &headers, body.as_bytes())
            .expect("a response")
    }

    /// Initializes a session at `version`; returns its id.
    pub fn initialize(&mut self, version: &str) -> String {
        let reply = self.post(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#),
            &[],
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned()
    }
}

pub const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// The value at a dotted path (`result.tools.0.name`; numbers index arrays), or `Null`.
pub fn at(value: &Value, path: &str) -> Value {
    let mut current = value;
    for segment in path.split('.') {
        let next = match (current, segment.parse::<usize>()) {
            (Value::Array(items), Ok(i)) => items.get(i),
            _ => current.get(segment),
        };
        match next {
            Some(v) => current = v,
            None => return Value::Null,
        }
    }
    current.clone()
}

/// One SSE event as a client parses it (comments are returned with `comment` set).
#[derive(Debug, Default)]
pub struct Event {
    pub id: Option<String>,
    pub retry: Option<u64>,
    pub data: String,
    pub comment: bool,
}

impl Event {
    pub fn json(&self) -> Value {
        json::parse(self.data.as_bytes()).unwrap()
    }
}

/// An open SSE response read event by event (chunked transfer decoded as it arrives).
pub struct Sse {
    client: Client,
    text: String,
    ended: bool,
}

/// A response that is not a stream: status and body.
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub body: String,
}

impl Sse {
    /// Sends `request` on a new connection; the stream if the answer is 200 text/event-stream.
    pub fn open(addr: SocketAddr, request: String) -> Result<Sse, Refused> {
        let mut client = Client::connect(addr);
        client.send(request.as_bytes());
        let head = client.read_head().expect("a response head");
        if head.status == 200 && head.header("content-type") == Some("text/event-stream") {
            return Ok(Sse {
                client,
                text: String::new(),
                ended: false,
            });
        }
        let length = head
            .header("content-length")
            .map_or(0, |l| l.parse().unwrap());
        let body = client.take_exact(length).unwrap_or_default();
        Err(Refused {
            status: head.status,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    /// The next event or comment; `None` once the stream ended.
    pub fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(i) = self.text.find("\n\n") {
                let block: String = self.text.drain(..i + 2).collect();
                let mut event = Event::default();
                for line in block.lines() {
                    if line.starts_with(':') {
                        event.comment = true;
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        event.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("retry: ") {
                        event.retry = Some(v.parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        event.data.push_str(v);
                    }
                }
                return Some(event);
            }
            if self.ended {
                return None;
            }
            let Some(size) = self.client.take_line() else {
                self.ended = true;
                continue;
            };
            let size = usize::from_str_radix(&size, 16).unwrap();
            let data = self.client.take_exact(size + 2).expect("a whole chunk");
            if size == 0 {
                self.ended = true;
            }
            self.text
                .push_str(std::str::from_utf8(&data[..size]).unwrap());
        }
    }

    /// The next event that is not a comment.
    pub fn next_event(&mut self) -> Option<Event> {
        std::iter::from_fn(|| self.next()).find(|e| !e.comment)
    }
}

/// A request to `/mcp` with `Host: localhost:PORT` (POSTs carry JSON `body`).
pub fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    request_to(addr, method, "/mcp", headers, body)
}

/// A request to `target` with `Host: localhost:PORT` (POSTs carry JSON `body`).
pub fn request_to(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> String {
    let mut text = format!(
        "{method} {target} HTTP/1.1\r\nHost: localhost:{}\r\n",
        addr.port()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    if method == "POST" {
        text.push_str("Content-Type: application/json\r\n");
        text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}
