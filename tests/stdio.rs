//! The stdio transport over in-memory input and output: framing, caps, bad input, end of input.

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::*;
use agentteams_mcp::stdio::{serve, MAX_LINE_BYTES};
use std::io::{Read, Write};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

struct Tools;

impl ToolSet for Tools {
    fn server_name(&self) -> &str {
        "agentteams-stdio-test"
    }
    fn tools(&self) -> Vec<Tool> {
        vec![
            Tool::read_only(
                "echo",
                "Returns its arguments.",
                json::parse(br#"{"type":"object"}"#).unwrap(),
            ),
            Tool::read_only(
                "hang",
                "Runs until cancelled.",
                json::parse(br#"{"type":"object"}"#).unwrap(),
            ),
            Tool::read_only(
                "slow",
                "Returns its arguments after a while.",
                json::parse(br#"{"type":"object"}"#).unwrap(),
            ),
        ]
    }
    fn call(&self, name: &str, args: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "hang" => ctx.cancel_token().wait_timeout(Duration::from_secs(60)),
            "slow" => ctx.cancel_token().wait_timeout(Duration::from_millis(300)),
            _ => false,
        };
        Ok(ToolOutput::Value(Value::Object(args.clone())))
    }
}

fn run(input: &[u8]) -> Vec<String> {
    run_on(Engine::new(Arc::new(Tools)), input)
}

fn run_on(engine: Engine, input: &[u8]) -> Vec<String> {
    let session = Session::new(Arc::new(engine));
    let mut out = Vec::new();
    serve(&session, input, &mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const PARSE_ERROR: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error (or line over 1 MiB)""#;

#[test]
fn one_compact_reply_per_request_in_order() {
    let out = run(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n   \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":\"x\\ny\"}}}");
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\n \"a\": \"x\\ny\"\n}"}]}}"#,
        ]
    );
}

/// The minimal wire's hosts may expect replies in request order: what the reader answers itself
/// while a call runs (a ping, a parse error, an over-long line) waits for the call's reply.
#[test]
fn the_minimal_wire_answers_in_request_order_while_a_slow_call_runs() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\"}}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\nnot json\n");
    input.extend_from_slice(&vec![b'x'; MAX_LINE_BYTES]);
    input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
    let engine = Engine::new(Arc::new(Tools)).with_wire(Wire::Minimal);
    let out = run_on(engine, &input);
    let ids: Vec<String> = out
        .iter()
        .map(|line| json::to_string(parsed(line).get("id").unwrap()))
        .collect();
    assert_eq!(ids, ["1", "2", "null", "null", "3"], "{out:?}");
    assert_eq!(out[2], format!("{PARSE_ERROR}}}}}"));
}

#[test]
fn bad_lines_get_a_parse_error_and_the_loop_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{not json\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n");
    input.extend_from_slice(&[b'['; 200]);
    input.push(b'\n');
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
    let out = run(&input);
    assert_eq!(out.len(), 4, "{out:?}");
    for line in &out[..3] {
        assert!(line.starts_with(PARSE_ERROR), "{line}");
    }
    assert!(
        out[0].contains("expected a string object key at line 1 column 2 (byte 1)"),
        "{}",
        out[0]
    );
    assert!(out[1].contains("invalid UTF-8"), "{}", out[1]);
    assert!(
        out[2].contains("nesting deeper than the limit of 128 levels"),
        "{}",
        out[2]
    );
    assert_eq!(out[3], r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
}

#[test]
fn a_line_over_one_mib_gets_one_error_and_the_next_line_is_served() {
    let mut input = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    input.resize(MAX_LINE_BYTES + 10, b'x');
    input.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    // A whole line of spaces over the cap gets nothing (the reference skips blank lines first).
    input.extend_from_slice(&vec![b' '; MAX_LINE_BYTES * 2]);
    input.push(b'\n');
    let out = run(&input);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out[0].starts_with(PARSE_ERROR));
    assert!(out[0].contains("line longer than 1048576 bytes"));
    assert_eq!(out[1], r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);

    // Exactly at the cap (newline included) is accepted.
    let mut input = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":""#.to_vec();
    input.resize(MAX_LINE_BYTES - 4, b'x');
    input.extend_from_slice(b"\"}}\n");
    assert_eq!(input.len(), MAX_LINE_BYTES);
    assert_eq!(run(&input), [r#"{"jsonrpc":"2.0","id":3,"result":{}}"#]);
}

#[test]
fn end_of_input_cancels_a_running_call_promptly() {
    let started = Instant::now();
    let out = run(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"hang\"}}\n");
    // The hung call was cancelled after the grace period, so it gets no reply.
    assert!(out.is_empty(), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn more_requests_than_the_queue_holds_are_all_answered_in_order() {
    // The reader blocks when MAX_QUEUED_REQUESTS calls wait for the worker, then goes on: nothing
    // is dropped and nothing deadlocks.
    let count = agentteams_mcp::stdio::MAX_QUEUED_REQUESTS * 3 + 7;
    let mut input = String::new();
    for id in 0..count {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"n\":{id}}}}}}}\n"
        ));
    }
    let out = run(input.as_bytes());
    assert_eq!(out.len(), count);
    for (id, line) in out.iter().enumerate() {
        assert!(
            line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result""#)),
            "{line}"
        );
    }
}

/// A conversation with `serve` running on its own thread: lines go in when the test sends them,
/// and replies come out line by line as they are written.
struct Conversation {
    input: Option<mpsc::Sender<Vec<u8>>>,
    replies: mpsc::Receiver<String>,
    served: Option<std::thread::JoinHandle<()>>,
}

/// The reading end of the test's input: each chunk the test sends is one `read`'s worth.
struct Feed {
    chunks: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for Feed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.chunk.len() {
            match self.chunks.recv() {
                Ok(chunk) => (self.chunk, self.at) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The writing end: passes on each complete line.
struct Lines {
    partial: Vec<u8>,
    lines: mpsc::Sender<String>,
}

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let _ = (self.lines).send(String::from_utf8_lossy(&line[..end]).into_owned());
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Conversation {
    fn start() -> Conversation {
        Conversation::serving(Arc::new(Tools))
    }

    /// A conversation with a server of `toolset`.
    fn serving(toolset: Arc<dyn ToolSet>) -> Conversation {
        let (input, chunks) = mpsc::channel();
        let (lines, replies) = mpsc::channel();
        let served = std::thread::spawn(move || {
            let session = Session::new(Arc::new(Engine::new(toolset)));
            let feed = Feed {
                chunks,
                chunk: Vec::new(),
                at: 0,
            };
            let out = Lines {
                partial: Vec::new(),
                lines,
            };
            serve(&session, feed, out).unwrap();
        });
        Conversation {
            input: Some(input),
            replies,
            served: Some(served),
        }
    }

    /// Sends `lines` as one chunk, so the server reads them together.
    fn send(&self, lines: &[&str]) {
        let chunk: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.input
            .as_ref()
            .unwrap()
            .send(chunk.into_bytes())
            .unwrap();
    }

    fn reply(&self) -> String {
        (self.replies.recv_timeout(Duration::from_secs(20))).expect("a reply within 20 s")
    }

    /// The next reply is the result of the echo call `id`.
    fn expect_result(&self, id: u32) {
        let reply = self.reply();
        let start = format!(r#"{{"jsonrpc":"2.0","id":{id},"result""#);
        assert!(
            reply.starts_with(&start),
            "expected the result of {id}: {reply}"
        );
    }

    /// Pings, and the next reply answers it.
    fn ping(&self) {
        self.send(&[r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#]);
        assert_eq!(self.reply(), r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);
    }

    /// Ends the input and waits for `serve` to return; returns what it wrote after the last reply.
    fn finish(mut self) -> Vec<String> {
        self.input = None;
        self.served.take().unwrap().join().unwrap();
        self.replies.try_iter().collect()
    }
}

const HANG: &str =
    r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"hang"}}"#;
const CANCEL_HANG: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#;

fn echo_call(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"n":{id}}}}}}}"#
    )
}

#[test]
fn a_ping_is_answered_and_a_cancellation_honoured_while_a_long_call_runs() {
    let talk = Conversation::start();
    talk.send(&[HANG]);
    // Calls read while the long one runs wait their turn, in order; the ping does not wait.
    talk.send(&[&echo_call(1), &echo_call(2)]);
    talk.ping();
    talk.send(&[CANCEL_HANG]);
    // The cancelled call gets no reply; the queued ones then run in arrival order.
    talk.expect_result(1);
    talk.expect_result(2);
    talk.send(&[&echo_call(3)]);
    talk.expect_result(3);
    assert!(talk.finish().is_empty());
}

#[test]
fn after_an_idle_spell_the_sleeping_thread_still_takes_over_reading_from_a_long_call() {
    let talk = Conversation::start();
    talk.ping();
    // Longer than LOOKS_BEFORE_SLEEPING looks of READER_HANDOVER: the second thread is asleep.
    let idle = agentteams_mcp::stdio::READER_HANDOVER * 200;
    std::thread::sleep(idle);
    talk.send(&[HANG]);
    talk.ping();
    talk.send(&[CANCEL_HANG]);
    talk.ping();
    assert!(talk.finish().is_empty());
}

#[test]
fn a_reply_read_with_the_next_request_is_not_kept_back_by_a_long_call() {
    // The echo's reply could wait for the next reply (both requests were read together); the
    // next call runs until cancelled, so the reply must be written while it runs.
    let talk = Conversation::start();
    talk.send(&[&echo_call(1), HANG]);
    talk.expect_result(1);
    talk.send(&[CANCEL_HANG]);
    talk.ping();
    assert!(talk.finish().is_empty());
}

#[test]
fn a_cancellation_reaches_a_call_still_waiting_behind_a_long_one() {
    let talk = Conversation::start();
    talk.send(&[HANG]);
    talk.send(&[&echo_call(1), &echo_call(2)]);
    talk.send(&[
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ]);
    talk.ping();
    talk.send(&[CANCEL_HANG]);
    talk.expect_result(2);
    assert!(talk.finish().is_empty());
}

/// An output whose first write panics (a bug in a host-supplied writer); later writes succeed.
struct PanickingOutput {
    panicked: bool,
}

impl Write for PanickingOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.panicked {
            self.panicked = true;
            panic!("the output panics");
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_panic_on_one_serving_thread_ends_serve_instead_of_hanging_it() {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let session = Session::new(Arc::new(Engine::new(Arc::new(Tools))));
        let input = format!("{}\n{}\n", echo_call(1), echo_call(2));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            serve(
                &session,
                input.as_bytes(),
                PanickingOutput { panicked: false },
            )
        }));
        // Whichever thread met the panic, serve reports it: an error, or the panic itself.
        let _ = done.send(!matches!(outcome, Ok(Ok(()))));
    });
    let failed = finished.recv_timeout(Duration::from_secs(20));
    assert_eq!(failed, Ok(true), "serve must return and report the panic");
}

/// Resources `test://a` and `test://b`, subscribable, with list changes; the tool `touch` announces
/// an update of both and a change of the list.
struct Watched {
    notifier: std::sync::Mutex<Option<ResourceNotifier>>,
}

impl ResourceSet for Watched {
    fn resources(&self) -> Vec<Resource> {
        vec![
            Resource::new("test://a", "a"),
            Resource::new("test://b", "b"),
        ]
    }
    fn read(
        &self,
        request: &ReadRequest<'_>,
        _: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError> {
        Ok(vec![ResourceContents::text(request.uri, "x")])
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn announces_list_changes(&self) -> bool {
        true
    }
    fn attach(&self, notifier: ResourceNotifier) {
        *self.notifier.lock().unwrap() = Some(notifier);
    }
}

impl ToolSet for Watched {
    fn server_name(&self) -> &str {
        "agentteams-listen-test"
    }
    fn tools(&self) -> Vec<Tool> {
        let object = json::parse(br#"{"type":"object"}"#).unwrap();
        vec![Tool::read_only("touch", "Announces changes.", object)]
    }
    fn call(&self, _: &str, _: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        if let Some(n) = self.notifier.lock().unwrap().as_ref() {
            n.updated("test://a");
            n.updated("test://b");
            n.list_changed();
        }
        Ok(ToolOutput::Value(Value::from("touched")))
    }
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        Some(self)
    }
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn listen_line(id: &str, filter: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"subscriptions/listen","params":{{{MODERN_META},"notifications":{filter}}}}}"#
    )
}

fn touch_line(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"touch",{MODERN_META}}}}}"#
    )
}

fn parsed(line: &str) -> Value {
    json::parse(line.as_bytes()).unwrap_or_else(|_| panic!("{line}"))
}

/// The error code of a reply line.
fn error_code(line: &str) -> Option<i64> {
    parsed(line)
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
}

#[test]
fn listen_streams_on_stdio_acknowledge_carry_what_they_asked_and_end_when_cancelled() {
    let c = Conversation::serving(Arc::new(Watched {
        notifier: std::sync::Mutex::new(None),
    }));
    c.send(&[&listen_line(
        "L1",
        r#"{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["test://a","test://nope","test://a"]}"#,
    )]);
    // The acknowledgement names only what is honoured: no tool list changes (they never
    // happen), no unknown URI, no duplicate.
    assert_eq!(
        c.reply(),
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourcesListChanged":true,"resourceSubscriptions":["test://a"]},"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#
    );
    // The stream does not hold the line: a ping is answered.
    c.ping();
    c.send(&[&listen_line(
        "L2",
        r#"{"resourceSubscriptions":["test://b"]}"#,
    )]);
    assert!(c
        .reply()
        .contains(r#""resourceSubscriptions":["test://b"]"#));
    c.send(&[&touch_line(1)]);
    let mut lines: Vec<String> = (0..4).map(|_| c.reply()).collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"touched\""}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"agentteams-listen-test","version":"0.1.0"}}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a","_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://b","_meta":{"io.modelcontextprotocol/subscriptionId":"L2"}}}"#,
        ]
    );
    // Cancelled: L1 hears nothing more, L2 goes on; no response to either request.
    c.send(&[
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}"#,
    ]);
    c.send(&[&touch_line(2)]);
    let mut lines: Vec<String> = (0..2).map(|_| c.reply()).collect();
    lines.sort();
    assert!(
        lines[0].starts_with(r#"{"jsonrpc":"2.0","id":2,"result""#),
        "{lines:?}"
    );
    assert!(lines[1].contains(r#"subscriptionId":"L2""#), "{lines:?}");
    c.ping();
    let rest = c.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn listen_filters_and_limits_are_checked() {
    let c = Conversation::serving(Arc::new(Watched {
        notifier: std::sync::Mutex::new(None),
    }));
    for (filter, code) in [
        ("1", -32602),
        (r#"{"toolsListChanged":"yes"}"#, -32602),
        (r#"{"resourceSubscriptions":"test://a"}"#, -32602),
        (r#"{"resourceSubscriptions":[1]}"#, -32602),
    ] {
        c.send(&[&listen_line("bad", filter)]);
        assert_eq!(error_code(&c.reply()), Some(code), "{filter}");
    }
    let many: Vec<String> = (0..=MAX_SUBSCRIPTIONS_PER_SESSION)
        .map(|i| format!(r#""test://{i}""#))
        .collect();
    c.send(&[&listen_line(
        "many",
        &format!(r#"{{"resourceSubscriptions":[{}]}}"#, many.join(",")),
    )]);
    assert_eq!(error_code(&c.reply()), Some(-32602));
    for i in 0..MAX_LISTENS_PER_SESSION {
        c.send(&[&listen_line(&format!("s{i}"), "{}")]);
        assert!(c.reply().contains("acknowledged"));
    }
    c.send(&[&listen_line("s0", "{}")]);
    assert_eq!(error_code(&c.reply()), Some(-32600));
    c.send(&[&listen_line("one-more", "{}")]);
    let refused = c.reply();
    assert_eq!(error_code(&refused), Some(-32600), "{refused}");
    assert!(refused.contains("at most 8"), "{refused}");
    // Ending one makes room for another.
    c.send(&[
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s3"}}"#,
    ]);
    c.send(&[&listen_line("one-more", "{}")]);
    assert!(c.reply().contains("acknowledged"));
    // Without the era's _meta, and in a legacy session, the method does not exist.
    c.send(&[r#"{"jsonrpc":"2.0","id":"x","method":"subscriptions/listen","params":{"notifications":{}}}"#]);
    assert_eq!(error_code(&c.reply()), Some(-32601));
    // Open streams do not keep the end of input from ending serve.
    let rest = c.finish();
    assert!(rest.is_empty(), "{rest:?}");
}
