//! A keep-alive load generator for MCP Streamable HTTP servers: each connection initializes its
//! own session (or, with `--stateless`, sends no `initialize` and no session id), then repeats one
//! `tools/call` back to back, each with an id of its own; reports requests per second, p50/p99
//! latency and the number of bad replies: a reply counts as good only when its status is 200 and
//! its body (plain JSON or an SSE stream) holds the result for that request's id with the
//! expected text. `--idle N` instead opens N initialized connections and holds them (for
//! measuring a server's memory per idle connection).
//!
//! Usage: http-load --port P --tool NAME --conns N [--secs 5] [--warmup 1] [--stateless]
//!                  [--expect TEXT]
//!        http-load --port P --idle N [--secs 10]
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    port: u16,
    session: Option<String>,
}

struct Reply {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

impl Conn {
    fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        Conn { stream, buf: Vec::with_capacity(8192), port, session: None }
    }

    fn post(&mut self, body: &str) -> Reply {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(s) = &self.session {
            req.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream.write_all(req.as_bytes()).expect("write");
        self.read_reply()
    }

    fn fill(&mut self) {
        let mut chunk = [0u8; 16384];
        let n = self.stream.read(&mut chunk).expect("read");
        assert!(n > 0, "server closed the connection");
        self.buf.extend_from_slice(&chunk[..n]);
    }

    fn line(&mut self) -> String {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let l = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return l;
            }
            self.fill();
        }
    }

    fn exact(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            self.fill();
        }
        self.buf.drain(..n).collect()
    }

    fn read_reply(&mut self) -> Reply {
        let status: u16 = self.line().split(' ').nth(1).unwrap().parse().unwrap();
        let (mut length, mut chunked, mut session) = (None, false, None);
        loop {
            let l = self.line();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').unwrap();
            let (name, value) = (name.to_ascii_lowercase(), value.trim());
            match name.as_str() {
                "content-length" => length = value.parse().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let size_line = self.line();
                let size = usize::from_str_radix(size_line.split(';').next().unwrap().trim(), 16).unwrap();
                let data = self.exact(size + 2);
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&data[..size]);
            }
            body
        } else {
            let n = length.unwrap_or(0);
            self.exact(n)
        };
        Reply { status, session, body }
    }

    fn initialize(&mut self) {
        let r = self.post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"http-load","version":"1"}}}"#);
        assert_eq!(r.status, 200, "initialize: {}", String::from_utf8_lossy(&r.body));
        self.session = r.session;
        let r = self.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(r.status == 202 || r.status == 200, "initialized: {}", r.status);
    }
}

/// Whether `body` (one JSON message, or SSE events carrying them) holds a result for request `id`
/// with `expect` in it.
fn answers(body: &[u8], id: u64, expect: &str) -> bool {
    let text = String::from_utf8_lossy(body);
    let wanted = format!("\"id\":{id}");
    let messages: Vec<&str> = if text.trim_start().starts_with('{') {
        vec![text.trim()]
    } else {
        text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect()
    };
    messages.iter().any(|m| {
        m.match_indices(&wanted)
            .any(|(at, _)| !m[at + wanted.len()..].starts_with(|c: char| c.is_ascii_digit()))
            && m.contains("\"result\"")
            && m.contains(expect)
    })
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = arg(&args, "--port").expect("--port").parse().unwrap();
    let secs: f64 = arg(&args, "--secs").map_or(5.0, |s| s.parse().unwrap());
    if let Some(idle) = arg(&args, "--idle") {
        let n: usize = idle.parse().unwrap();
        let conns: Vec<Conn> = (0..n)
            .map(|_| {
                let mut c = Conn::open(port);
                c.initialize();
                c
            })
            .collect();
        println!("ready {}", conns.len());
        std::io::stdout().flush().unwrap();
        std::thread::sleep(Duration::from_secs_f64(secs));
        return;
    }
    let tool = arg(&args, "--tool").expect("--tool");
    let conns: usize = arg(&args, "--conns").map_or(1, |s| s.parse().unwrap());
    let warmup: f64 = arg(&args, "--warmup").map_or(1.0, |s| s.parse().unwrap());
    let stateless = args.iter().any(|a| a == "--stateless");
    let expect = arg(&args, "--expect")
        .unwrap_or_else(|| "This is a simple text response for testing.".to_owned());
    let start = Instant::now() + Duration::from_millis(200 + 5 * conns as u64);
    let measure_from = start + Duration::from_secs_f64(warmup);
    let end = measure_from + Duration::from_secs_f64(secs);
    let threads: Vec<_> = (0..conns)
        .map(|_| {
            let (tool, expect) = (tool.clone(), expect.clone());
            std::thread::spawn(move || {
                let mut c = Conn::open(port);
                if !stateless {
                    c.initialize();
                }
                let mut id = 0u64;
                while Instant::now() < start {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let (mut lat, mut errors) = (Vec::with_capacity(100_000), 0u64);
                loop {
                    let t0 = Instant::now();
                    if t0 >= end {
                        break;
                    }
                    id += 1;
                    let call = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#);
                    let r = c.post(&call);
                    let ok = r.status == 200 && answers(&r.body, id, &expect);
                    if t0 >= measure_from {
                        lat.push(t0.elapsed().as_micros() as u32);
                        errors += u64::from(!ok);
                    }
                }
                (lat, errors)
            })
        })
        .collect();
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in threads {
        let (l, e) = t.join().expect("connection thread");
        all.extend(l);
        errors += e;
    }
    all.sort_unstable();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)] as f64 / 1000.0;
    println!(
        "{{\"conns\":{conns},\"requests\":{},\"errors\":{errors},\"rps\":{:.0},\"p50_ms\":{:.3},\"p99_ms\":{:.3}}}",
        all.len(),
        all.len() as f64 / secs,
        pct(0.50),
        pct(0.99)
    );
}
