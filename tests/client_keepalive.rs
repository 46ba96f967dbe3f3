//! The HTTP client's keep-alive against a server on 127.0.0.1 that numbers its connections and
//! logs every request whose head arrived: sequential calls share one connection, `Connection:
//! close` and HTTP/1.0 get a connection per request, an idle connection the server closed is
//! replaced, and a request the server may have received is never sent twice.

use agentteams_mcp::client::{Client, ClientError, EraChoice, Options};
use agentteams_mcp::json::{self, obj, Map, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server treats its connections.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Behaviour {
    /// HTTP/1.1, connections stay open until the client closes them.
    KeepAlive,
    /// Every response says `Connection: close`, but the server leaves the socket open: only the
    /// client's reading of the header keeps it from reusing the connection.
    SaysClose,
    /// Every response has an HTTP/1.0 status line (and the socket stays open, as above).
    Http10,
    /// Closes a connection that stays idle this long.
    ClosesIdleAfter(Duration),
    /// Reads the head and half the body of the POST with this number (1-based, across
    /// connections), then closes the connection without answering.
    DropsPost(usize),
}

/// One request whose head arrived: the connection (numbered from 1 in accept order), the HTTP
/// method, and the JSON-RPC method and id when the whole body arrived.
#[derive(Clone, Debug)]
struct Seen {
    connection: usize,
    http_method: String,
    rpc_method: Option<String>,
    id: Option<i64>,
}

struct Server {
    url: String,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// Every POST whose head arrived, complete or not.
    fn posts(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.http_method == "POST")
            .collect()
    }

    fn calls(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.rpc_method.as_deref() == Some("tools/call"))
            .collect()
    }
}

fn serve(behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&log);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { continue };
            let log = Arc::clone(&shared);
            std::thread::spawn(move || connection(stream, n + 1, behaviour, &log));
        }
    });
    Server { url, log }
}

/// Serves the requests of one connection in turn.
fn connection(mut stream: TcpStream, number: usize, behaviour: Behaviour, log: &Mutex<Vec<Seen>>) {
    let mut buf = Vec::new();
    loop {
        if let Behaviour::ClosesIdleAfter(idle) = behaviour {
            let _ = stream.set_read_timeout(Some(idle));
        }
        let Some(head_end) = read_until_head(&mut stream, &mut buf) else {
            return;
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let http_method = head.split(' ').next().unwrap_or("").to_owned();
        let length: usize = header(&head, "content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let post_number = {
            let mut log = log.lock().unwrap();
            log.push(Seen {
                connection: number,
                http_method: http_method.clone(),
                rpc_method: None,
                id: None,
            });
            log.iter().filter(|s| s.http_method == "POST").count()
        };
        if behaviour == Behaviour::DropsPost(post_number) && http_method == "POST" {
            while buf.len() < head_end + length / 2 {
                if !read_more(&mut stream, &mut buf) {
                    return;
                }
            }
            return; // closes without answering
        }
        while buf.len() < head_end + length {
            if !read_more(&mut stream, &mut buf) {
                return;
            }
        }
        let body: Vec<u8> = buf.drain(..head_end + length).skip(head_end).collect();
        let message = json::parse(&body).unwrap_or(Value::Null);
        let rpc_method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").and_then(Value::as_i64);
        if let Some(last) = log.lock().unwrap().last_mut() {
            // This connection's entry: the log is appended under the lock, and each connection
            // serves one request at a time, so the newest entry of this number is this request.
            if last.connection == number {
                last.rpc_method = rpc_method.map(str::to_owned);
                last.id = id;
            }
        }
        let (status, extra, reply) = answer(&http_method, rpc_method, &message);
        let version = if behaviour == Behaviour::Http10 {
            "HTTP/1.0"
        } else {
            "HTTP/1.1"
        };
        let mut out = format!("{version} {status}\r\nContent-Length: {}\r\n", reply.len());
        out.push_str(extra);
        if behaviour == Behaviour::SaysClose {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        out.push_str(&reply);
        if stream.write_all(out.as_bytes()).is_err() {
            return;
        }
        if header(&head, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            return;
        }
    }
}

/// The status line's tail, extra header lines and body for one request.
fn answer(
    http_method: &str,
    rpc_method: Option<&str>,
    message: &Value,
) -> (&'static str, &'static str, String) {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let reply = |result: Value| {
        json::to_string(&obj([
            ("jsonrpc", Value::from("2.0")),
            ("id", id.clone()),
            ("result", result),
        ]))
    };
    const JSON: &str = "Content-Type: application/json\r\n";
    match (http_method, rpc_method) {
        ("GET", _) => (
            "405 Method Not Allowed",
            "Allow: POST, DELETE\r\n",
            String::new(),
        ),
        ("DELETE", _) => ("200 OK", "", String::new()),
        (_, Some("initialize")) => (
            "200 OK",
            "Content-Type: application/json\r\nMcp-Session-Id: keepalive-session\r\n",
            reply(obj([
                ("protocolVersion", Value::from("2025-11-25")),
                ("capabilities", obj([("tools", Value::Object(Map::new()))])),
                (
                    "serverInfo",
                    obj([
                        ("name", Value::from("counting")),
                        ("version", Value::from("1")),
                    ]),
                ),
            ])),
        ),
        (_, Some("tools/call")) => {
            let text = format!("call {}", json::to_string(&id));
            let content = obj([("type", Value::from("text")), ("text", Value::from(text))]);
            (
                "200 OK",
                JSON,
                reply(obj([("content", Value::from(vec![content]))])),
            )
        }
        (_, Some(m)) if m.starts_with("notifications/") => ("202 Accepted", "", String::new()),
        _ => ("400 Bad Request", "", String::new()),
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// Reads until `buf` holds a whole request head; its length, or `None` at end of stream or on a
/// read timeout (the server then closes the connection).
fn read_until_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<usize> {
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(i + 4);
        }
        if !read_more(stream, buf) {
            return None;
        }
    }
}

fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 4096];
    match stream.read(&mut chunk) {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

fn connect(server: &Server) -> Client {
    let options = Options {
        era: EraChoice::Legacy,
        call_timeout: Duration::from_secs(10),
        ..Options::default()
    };
    Client::connect_http(&server.url, options).unwrap()
}

/// Calls the server's one tool; the reply names the request id it answers.
fn call(client: &mut Client) -> Result<String, ClientError> {
    client.call_tool("anything", Map::new()).map(|r| r.text())
}

/// Whether every request id in `seen` appears once (nothing was delivered twice).
fn ids_unique(seen: &[Seen]) -> bool {
    let mut ids: Vec<i64> = seen.iter().filter_map(|s| s.id).collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    ids.len() == all
}

#[test]
fn sequential_calls_share_one_connection() {
    let server = serve(Behaviour::KeepAlive);
    let mut client = connect(&server);
    for _ in 0..10 {
        assert!(call(&mut client).unwrap().starts_with("call "));
    }
    client.close().unwrap();
    let seen = server.seen();
    // initialize, initialized, ten calls and the DELETE on connection 1; the GET that looks for
    // the server's stream has a connection of its own.
    let first: Vec<usize> = seen
        .iter()
        .filter(|s| s.http_method != "GET")
        .map(|s| s.connection)
        .collect();
    assert_eq!(first, vec![1; 13], "{seen:?}");
    let gets: Vec<&Seen> = seen.iter().filter(|s| s.http_method == "GET").collect();
    assert_eq!(gets.len(), 1, "{seen:?}");
    assert_ne!(gets[0].connection, 1);
    assert_eq!(server.calls().len(), 10);
    assert!(ids_unique(&seen));
}

#[test]
fn connection_close_and_http_1_0_get_a_connection_per_request() {
    for behaviour in [Behaviour::SaysClose, Behaviour::Http10] {
        let server = serve(behaviour);
        let mut client = connect(&server);
        for _ in 0..3 {
            assert!(call(&mut client).unwrap().starts_with("call "));
        }
        client.close().unwrap();
        let seen = server.seen();
        let mut connections: Vec<usize> = seen.iter().map(|s| s.connection).collect();
        let requests = connections.len();
        connections.dedup();
        assert_eq!(connections.len(), requests, "{behaviour:?}: {seen:?}");
        assert_eq!(server.calls().len(), 3, "{behaviour:?}");
    }
}

#[test]
fn an_idle_connection_the_server_closed_is_replaced_and_nothing_is_resent() {
    let server = serve(Behaviour::ClosesIdleAfter(Duration::from_millis(100)));
    let mut client = connect(&server);
    let first = call(&mut client).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let second = call(&mut client).unwrap();
    assert_ne!(first, second);
    client.close().unwrap();
    let calls = server.calls();
    assert_eq!(calls.len(), 2, "{:?}", server.seen());
    assert_ne!(calls[0].connection, calls[1].connection);
    // Every POST head that arrived belongs to a request the client made once.
    assert_eq!(server.posts().len(), 4, "{:?}", server.seen());
    assert!(ids_unique(&server.seen()));
}

#[test]
fn a_request_the_server_half_read_is_an_error_and_never_sent_again() {
    // POSTs: initialize, initialized, the first call, then the second call is half read.
    let server = serve(Behaviour::DropsPost(4));
    let mut client = connect(&server);
    call(&mut client).unwrap();
    let err = call(&mut client).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, ClientError::Closed(_)) && message.contains("not sent again"),
        "{message}"
    );
    assert!(message.contains("may have reached the server"), "{message}");
    // The client goes on, on a new connection.
    assert!(call(&mut client).unwrap().starts_with("call "));
    client.close().unwrap();
    let posts = server.posts();
    // initialize, initialized, call, the half-read call once, and the next call: no second copy.
    assert_eq!(posts.len(), 5, "{posts:?}");
    assert!(posts[3].rpc_method.is_none(), "{posts:?}");
    assert!(ids_unique(&server.seen()));
    assert_ne!(posts[4].connection, posts[3].connection);
}
