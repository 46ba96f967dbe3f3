//! Resumable SSE streams over real sockets: the standalone GET stream, event ids and
//! `Last-Event-ID` resumption from the event store, SEP-1699 polling (priming event, `retry`,
//! server-side close), server requests rerouted to the GET stream, and the refusals of bad ids.

mod http_support;

use agentteams_mcp::client::{Answers, Client as McpClient, EraChoice, Options};
use agentteams_mcp::http::limits::{MAX_STORED_EVENTS, SSE_RETRY};
use agentteams_mcp::http::streams::parse_event_id;
use agentteams_mcp::http::{self, HttpConfig};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{
    CallContext, Engine, ReadRequest, RequestError, Resource, ResourceContents, ResourceNotifier,
    ResourceSet, Tool, ToolError, ToolOutput, ToolSet, MAX_LISTEN_STREAMS,
};
use http_support::{at, request, Client, Refused, Sse};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `touch` announces a change of the resource list; `poll` closes its stream, then answers;
/// `ask` closes its stream, pings the client, and answers with what the ping brought; `elicit`
/// closes its stream, elicits a form with a default, and answers with the client's reply.
struct StreamTools {
    notifier: Mutex<Option<ResourceNotifier>>,
}

impl ResourceSet for StreamTools {
    fn resources(&self) -> Vec<Resource> {
        vec![Resource::new("test://one", "one")]
    }
    fn read(
        &self,
        request: &ReadRequest<'_>,
        _: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError> {
        Ok(vec![ResourceContents::text(request.uri, "one")])
    }
    fn announces_list_changes(&self) -> bool {
        true
    }
    fn attach(&self, notifier: ResourceNotifier) {
        *self.notifier.lock().unwrap() = Some(notifier);
    }
}

impl ToolSet for StreamTools {
    fn server_name(&self) -> &str {
        "streams-test"
    }
    fn tools(&self) -> Vec<Tool> {
        let object = json::parse(br#"{"type": "object"}"#).unwrap();
        ["touch", "poll", "ask", "elicit"]
            .into_iter()
            .map(|name| Tool::read_only(name, "A stream test tool.", object.clone()))
            .collect()
    }
    fn call(&self, name: &str, _: &Map, ctx: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        match name {
            "touch" => {
                if let Some(n) = self.notifier.lock().unwrap().as_ref() {
                    n.list_changed();
                }
                Ok(ToolOutput::Value(Value::from("touched")))
            }
            "poll" => {
                let closed = ctx.close_stream();
                ctx.cancel_token().wait_timeout(Duration::from_millis(200));
                Ok(ToolOutput::Value(Value::from(if closed {
                    "closed"
                } else {
                    "kept"
                })))
            }
            "ask" => {
                ctx.close_stream();
                let pinged = ctx.ping_client(Duration::from_secs(10));
                Ok(ToolOutput::Value(Value::from(pinged.is_ok())))
            }
            _ => {
                ctx.close_stream();
                let form = json::parse(
                    br#"{"message": "name?", "requestedSchema": {"type": "object",
                        "properties": {"name": {"type": "string", "default": "Ada"}}}}"#,
                )
                .unwrap();
                let answer = ctx
                    .elicit(form)
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(ToolOutput::Value(answer))
            }
        }
    }
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        Some(self)
    }
}

fn start(config: HttpConfig) -> SocketAddr {
    let tools = StreamTools {
        notifier: Mutex::new(None),
    };
    let engine = Arc::new(Engine::new(Arc::new(tools)));
    let server = http::bind(engine, HttpConfig { port: 0, ..config }).expect("bind");
    let addr = server.local_addr().unwrap();
    std::thread::spawn(move || server.run());
    addr
}

fn get(addr: SocketAddr, sid: &str, last_event_id: Option<&str>) -> Result<Sse, Refused> {
    let mut headers = vec![("Accept", "text/event-stream"), ("Mcp-Session-Id", sid)];
    if let Some(id) = last_event_id {
        headers.push(("Last-Event-ID", id));
    }
    Sse::open(addr, request(addr, "GET", &headers, ""))
}

fn call(addr: SocketAddr, sid: &str, id: u32, tool: &str) -> Result<Sse, Refused> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    );
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", sid),
    ];
    Sse::open(addr, request(addr, "POST", &headers, &body))
}

/// A JSON reply's body (calls that emit nothing before their result answer in JSON).
fn call_json(addr: SocketAddr, sid: &str, tool: &str) -> Value {
    let refused = call(addr, sid, 9, tool).err().expect("a JSON reply");
    assert_eq!(refused.status, 200, "{}", refused.body);
    json::parse(refused.body.as_bytes()).unwrap()
}

/// The text a tool's value was answered with (its JSON form).
fn answer(reply: &Value) -> String {
    let text = at(reply, "result.content.0.text");
    text.as_str().expect("a text answer").to_owned()
}

fn session(addr: SocketAddr, version: &str) -> String {
    Client::connect(addr).initialize(version)
}

#[test]
fn the_get_stream_carries_list_changes_and_resumes_what_followed_its_last_event() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-11-25");
    let mut stream = get(addr, &sid, None).unwrap();
    let priming = stream.next().unwrap();
    assert_eq!(priming.retry, Some(SSE_RETRY.as_millis() as u64));
    assert!(priming.data.is_empty());
    let priming_id = priming.id.unwrap();
    assert_eq!(parse_event_id(priming_id.as_bytes()).unwrap().stream, 0);

    call_json(addr, &sid, "touch");
    let changed = stream.next_event().unwrap();
    assert_eq!(
        at(&changed.json(), "method").as_str(),
        Some("notifications/resources/list_changed")
    );
    let first_id = changed.id.unwrap();
    drop(stream);

    // Missed while no GET was open: kept in the store and replayed after the id last seen.
    call_json(addr, &sid, "touch");
    call_json(addr, &sid, "touch");
    let mut resumed = get(addr, &sid, Some(&first_id)).unwrap();
    let ids: Vec<String> = (0..2)
        .map(|_| resumed.next_event().unwrap().id.unwrap())
        .collect();
    let seqs: Vec<u64> = ids
        .iter()
        .map(|id| parse_event_id(id.as_bytes()).unwrap().seq)
        .collect();
    let first_seq = parse_event_id(first_id.as_bytes()).unwrap().seq;
    assert_eq!(seqs, [first_seq + 1, first_seq + 2]);

    // DELETE ends the session and with it the open stream.
    let mut c = Client::connect(addr);
    let deleted = c.request("DELETE", "/mcp", &[("Mcp-Session-Id", &sid)], b"");
    assert_eq!(deleted.unwrap().status, 200);
    assert!(resumed.next_event().is_none());
}

#[test]
fn a_closed_post_stream_is_resumed_with_get_and_last_event_id_sep_1699() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-11-25");
    let mut post = call(addr, &sid, 7, "poll").unwrap();
    let priming = post.next().unwrap();
    assert!(priming.data.is_empty() && priming.retry.is_some());
    let last = priming.id.unwrap();
    let posted = parse_event_id(last.as_bytes()).unwrap();
    assert!(posted.stream > 0, "POST streams are numbered from 1");
    assert!(post.next().is_none(), "the server closed the stream early");

    let mut resumed = get(addr, &sid, Some(&last)).unwrap();
    let reply = resumed.next_event().unwrap();
    assert_eq!(at(&reply.json(), "id").as_i64(), Some(7));
    assert_eq!(answer(&reply.json()), "\"closed\"");
    let id = parse_event_id(reply.id.as_ref().unwrap().as_bytes()).unwrap();
    assert_eq!((id.stream, id.seq), (posted.stream, 1));
    assert!(
        resumed.next().is_none(),
        "the stream ends with its response"
    );

    // Its events stay resumable: a second resumption replays the response again.
    let mut again = get(addr, &sid, Some(&last)).unwrap();
    assert_eq!(again.next_event().unwrap().id, reply.id);
}

#[test]
fn before_2025_11_25_events_carry_ids_but_streams_are_neither_primed_nor_closed_early() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-06-18");
    assert_eq!(answer(&call_json(addr, &sid, "poll")), "\"kept\"");
    let mut stream = get(addr, &sid, None).unwrap();
    call_json(addr, &sid, "touch");
    let event = stream.next_event().unwrap();
    assert!(event.retry.is_none());
    assert!(event.id.is_some());
    assert_eq!(
        at(&event.json(), "method").as_str(),
        Some("notifications/resources/list_changed")
    );
}

#[test]
fn a_request_whose_post_stream_is_gone_reaches_the_get_stream_and_its_answer_is_used() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-11-25");
    let mut standalone = get(addr, &sid, None).unwrap();
    standalone.next().unwrap(); // priming
    let mut post = call(addr, &sid, 3, "ask").unwrap();
    let last = post.next().unwrap().id.unwrap();
    assert!(post.next().is_none());

    let ping = standalone.next_event().unwrap().json();
    assert_eq!(at(&ping, "method").as_str(), Some("ping"));
    let pong = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        json::to_string(&at(&ping, "id"))
    );
    let mut c = Client::connect(addr);
    assert_eq!(c.post(&pong, &[("Mcp-Session-Id", &sid)]).status, 202);

    let mut resumed = get(addr, &sid, Some(&last)).unwrap();
    let reply = resumed.next_event().unwrap().json();
    assert_eq!(answer(&reply), "true");
}

#[test]
fn bad_last_event_ids_get_clear_refusals_and_never_a_wrong_replay() {
    let addr = start(HttpConfig {
        replica_name: Some("alpha".into()),
        ..HttpConfig::default()
    });
    let sid = session(addr, "2025-11-25");
    let mut stream = get(addr, &sid, None).unwrap();
    let priming = stream.next().unwrap().id.unwrap();
    assert!(priming.starts_with("alpha."), "{priming}");
    drop(stream);
    let instance = priming.split('.').nth(1).unwrap().to_owned();
    let refused = |id: &str| get(addr, &sid, Some(id)).err().expect("a refusal");
    for (id, status, says) in [
        ("garbage".to_owned(), 400, "malformed"),
        (format!("alpha.{instance}.0.999"), 400, "has not been sent"),
        (format!("beta.{instance}.0.0"), 421, "names replica"),
        ("alpha.00000000.0.0".to_owned(), 410, "earlier run"),
        (format!("alpha.{instance}.42.0"), 410, "stream 42"),
    ] {
        let r = refused(&id);
        assert_eq!(r.status, status, "{id}: {}", r.body);
        assert!(r.body.contains(says), "{id}: {}", r.body);
    }
    // Evicted: more events than the store holds have followed the priming event.
    for _ in 0..=MAX_STORED_EVENTS {
        call_json(addr, &sid, "touch");
    }
    let r = refused(&priming);
    assert_eq!(r.status, 410, "{}", r.body);
    assert!(r.body.contains("evicted"), "{}", r.body);
    // Another session's stream is not this session's.
    let other = session(addr, "2025-11-25");
    let r = get(addr, &other, Some(&format!("alpha.{instance}.1.0")))
        .err()
        .unwrap();
    assert_eq!(r.status, 410, "{}", r.body);
    // The server keeps serving.
    assert!(get(addr, &sid, None).is_ok());
}

#[test]
fn get_needs_a_session_an_event_stream_accept_and_a_stateful_server() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-11-25");
    let headers = [("Accept", "application/json"), ("Mcp-Session-Id", &sid)];
    let r = Sse::open(addr, request(addr, "GET", &headers, ""))
        .err()
        .unwrap();
    assert_eq!(r.status, 406, "{}", r.body);
    let r = get(addr, "0123456789abcdef0123456789abcdef", None)
        .err()
        .unwrap();
    assert_eq!(r.status, 404);
    let stateless = start(HttpConfig {
        stateless: true,
        ..HttpConfig::default()
    });
    let r = get(stateless, &sid, None).err().unwrap();
    assert_eq!(r.status, 405);
    // A second GET replaces the first: one standalone stream per session at a time.
    let mut first = get(addr, &sid, None).unwrap();
    first.next().unwrap();
    let mut second = get(addr, &sid, None).unwrap();
    second.next().unwrap();
    assert!(first.next_event().is_none(), "the first stream was ended");
}

#[test]
fn the_client_opens_the_get_stream_after_the_handshake_and_answers_requests_on_it() {
    let addr = start(HttpConfig::default());
    let options = Options {
        era: EraChoice::Legacy,
        answers: Answers {
            elicitation: Some(Vec::new()),
            roots: Vec::new(),
        },
        ..Options::default()
    };
    let url = format!("http://127.0.0.1:{}/mcp", addr.port());
    let mut client = McpClient::connect_http(&url, options).unwrap();
    // The call's own stream is closed before the elicitation, so the request can reach the
    // client only on the GET stream; the result then arrives on the resumed POST stream.
    let result = client.call_tool("elicit", Map::new()).unwrap();
    let text = at(&result.raw, "content.0.text");
    let answer = json::parse(text.as_str().unwrap().as_bytes()).unwrap();
    assert_eq!(at(&answer, "action").as_str(), Some("accept"));
    assert_eq!(at(&answer, "content.name").as_str(), Some("Ada"));
    client.close().unwrap();
}

#[test]
fn a_stopping_server_ends_its_get_streams_and_returns() {
    let tools = StreamTools {
        notifier: Mutex::new(None),
    };
    let engine = Arc::new(Engine::new(Arc::new(tools)));
    let config = HttpConfig {
        port: 0,
        ..HttpConfig::default()
    };
    let server = http::bind(engine, config).unwrap();
    let addr = server.local_addr().unwrap();
    let stopper = server.stopper().unwrap();
    let running = std::thread::spawn(move || server.run());
    let sid = session(addr, "2025-11-25");
    let mut stream = get(addr, &sid, None).unwrap();
    stream.next().unwrap(); // priming: the stream is open
    let mut listening = listen(addr, "L9", "{}").unwrap();
    listening.next_event().unwrap(); // acknowledged: the listen stream is open
    stopper.stop();
    assert!(stream.next_event().is_none(), "the stream ended");
    // A listen stream the server ends gets its response: the graceful closure.
    let closed = listening.next_event().expect("the listen response").json();
    assert_eq!(at(&closed, "id").as_str(), Some("L9"));
    assert_eq!(at(&closed, "result.resultType").as_str(), Some("complete"));
    let meta = at(&closed, "result._meta");
    let subscription = meta.get("io.modelcontextprotocol/subscriptionId");
    assert_eq!(subscription.and_then(Value::as_str), Some("L9"), "{closed}");
    assert!(listening.next_event().is_none(), "then it ended");
    running.join().unwrap().unwrap();
}

#[test]
fn concurrent_streams_of_one_session_have_their_own_ids_and_resume_separately() {
    let addr = start(HttpConfig::default());
    let sid = session(addr, "2025-11-25");
    let mut standalone = get(addr, &sid, None).unwrap();
    let standalone_id = standalone.next().unwrap().id.unwrap();
    let mut first = call(addr, &sid, 11, "poll").unwrap();
    let mut second = call(addr, &sid, 12, "poll").unwrap();
    let first_id = first.next().unwrap().id.unwrap();
    let second_id = second.next().unwrap().id.unwrap();
    let stream_of = |id: &str| parse_event_id(id.as_bytes()).unwrap().stream;
    let streams = [&standalone_id, &first_id, &second_id].map(|id| stream_of(id));
    assert_eq!(streams[0], 0);
    assert!(streams[1] != streams[2] && streams[1] > 0 && streams[2] > 0);
    // Each resumption replays its own stream's response, whatever the order.
    for (last, id) in [(&second_id, 12), (&first_id, 11)] {
        let mut resumed = get(addr, &sid, Some(last)).unwrap();
        let reply = resumed.next_event().unwrap();
        assert_eq!(at(&reply.json(), "id").as_i64(), Some(id));
        assert_eq!(stream_of(reply.id.as_ref().unwrap()), stream_of(last));
    }
    // The standalone stream stayed open beside them.
    call_json(addr, &sid, "touch");
    assert_eq!(
        at(&standalone.next_event().unwrap().json(), "method").as_str(),
        Some("notifications/resources/list_changed")
    );
}

/// A 2026-07-28 `subscriptions/listen` POST with `filter`: its SSE stream, or the refusal.
fn listen(addr: SocketAddr, id: &str, filter: &str) -> Result<Sse, Refused> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","method":"subscriptions/listen","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"notifications":{filter}}}}}"#
    );
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    Sse::open(addr, request(addr, "POST", &headers, &body))
}

/// A 2026-07-28 call of `touch` (it announces a change of the resource list).
fn modern_touch(addr: SocketAddr) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "touch"),
    ];
    let refused = Sse::open(addr, request(addr, "POST", &headers, body))
        .err()
        .expect("a JSON reply");
    assert_eq!(refused.status, 200, "{}", refused.body);
}

/// The JSON-RPC error code of a refused listen.
fn refused_code(refused: &Refused) -> Option<i64> {
    let reply = json::parse(refused.body.as_bytes()).unwrap();
    at(&reply, "error.code").as_i64()
}

#[test]
fn a_listen_stream_is_acknowledged_then_carries_what_it_asked_for_until_closed() {
    let addr = start(HttpConfig::default());
    let filter = r#"{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["test://one"]}"#;
    let mut stream = listen(addr, "L1", filter).unwrap();
    let ack = stream.next_event().unwrap().json();
    // Honoured: list changes only (the tool list never changes; the set is not subscribable).
    assert_eq!(
        json::to_string(&ack),
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourcesListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#
    );
    modern_touch(addr);
    let changed = stream.next_event().unwrap().json();
    assert_eq!(
        json::to_string(&changed),
        r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}"#
    );
    for bad in ["[]", r#"{"resourcesListChanged":1}"#] {
        let refused = listen(addr, "bad", bad).err().expect("refused");
        assert_eq!(refused_code(&refused), Some(-32602), "{}", refused.body);
    }
}

#[test]
fn listen_streams_are_bounded_and_a_closed_one_frees_its_place() {
    let addr = start(HttpConfig::default());
    let mut open: Vec<Sse> = (0..MAX_LISTEN_STREAMS)
        .map(|i| listen(addr, &format!("s{i}"), "{}").expect("a stream"))
        .collect();
    for stream in &mut open {
        assert!(stream.next_event().is_some());
    }
    let refused = listen(addr, "extra", "{}").err().expect("over the limit");
    assert_eq!(refused_code(&refused), Some(-32600), "{}", refused.body);
    assert!(refused.body.contains("at most 64"), "{}", refused.body);
    // Closing a stream is its cancellation: its place comes free within the disconnect poll.
    drop(open.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut again = loop {
        match listen(addr, "again", "{}") {
            Ok(stream) => break stream,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(refused) => panic!("still refused: {}", refused.body),
        }
    };
    assert!(again.next_event().is_some());
}
