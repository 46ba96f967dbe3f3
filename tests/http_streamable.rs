//! Streamable HTTP behaviour over real sockets: sessions, the status-code tables of both eras,
//! JSON and SSE replies, stateless mode.

mod http_support;

use agentteams_mcp::http::HttpConfig;
use agentteams_mcp::json::Value;
use http_support::{at, start, start_default, Client, TOOLS_LIST, WAIT_OUTCOME, WAIT_STARTED};
use std::sync::atomic::Ordering;

fn session(version: &str) -> (Client, String) {
    let mut client = Client::connect(start_default());
    let id = client.initialize(version);
    (client, id)
}

#[test]
fn initialize_issues_a_visible_ascii_session_id_that_later_requests_need() {
    let (mut c, id) = session("2025-11-25");
    assert!(id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)));

    let listed = c.post(TOOLS_LIST, &[("Mcp-Session-Id", &id)]);
    assert_eq!(listed.status, 200);
    assert_eq!(listed.header("content-type"), Some("application/json"));
    let tools = listed.json();
    let names: Vec<_> = at(&tools, "result.tools")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| at(t, "name").as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["echo", "progress", "wait"]);

    let missing = c.post(TOOLS_LIST, &[]);
    assert_eq!((missing.status, missing.error_code()), (400, Some(-32600)));
    let unknown = c.post(TOOLS_LIST, &[("Mcp-Session-Id", "0123456789abcdef")]);
    assert_eq!((unknown.status, unknown.error_code()), (404, Some(-32600)));
}

#[test]
fn a_second_initialize_on_a_live_session_is_refused_but_a_fresh_one_is_served() {
    let (mut c, id) = session("2025-06-18");
    let init = r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
    let again = c.post(init, &[("Mcp-Session-Id", &id)]);
    assert_eq!((again.status, again.error_code()), (400, Some(-32600)));
    let fresh = c.post(init, &[]);
    assert_eq!(fresh.status, 200);
    assert_ne!(fresh.header("mcp-session-id"), Some(id.as_str()));
}

#[test]
fn notifications_and_responses_get_202_with_no_body() {
    let (mut c, id) = session("2025-11-25");
    let sid = [("Mcp-Session-Id", id.as_str())];
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
    ] {
        let reply = c.post(body, &sid);
        assert_eq!(reply.status, 202, "{body}");
        assert!(reply.body.is_empty());
    }
}

#[test]
fn delete_ends_a_session_and_get_needs_one() {
    let (mut c, id) = session("2025-11-25");
    let sid = [("Mcp-Session-Id", id.as_str())];
    // (tests/http_streams.rs opens the GET stream itself.)
    let get = c
        .request(
            "GET",
            "/mcp",
            &[("Accept", "application/json"), sid[0]],
            b"",
        )
        .unwrap();
    assert_eq!(get.status, 406);
    let no_session_get = c.request("GET", "/mcp", &[], b"").unwrap();
    assert_eq!(
        (no_session_get.status, no_session_get.header("allow")),
        (405, Some("POST"))
    );
    let no_session_delete = c.request("DELETE", "/mcp", &[], b"").unwrap();
    assert_eq!(no_session_delete.status, 405);

    assert_eq!(c.request("DELETE", "/mcp", &sid, b"").unwrap().status, 200);
    assert_eq!(c.post(TOOLS_LIST, &sid).status, 404);
    assert_eq!(c.request("DELETE", "/mcp", &sid, b"").unwrap().status, 404);
    assert_eq!(c.request("GET", "/mcp", &sid, b"").unwrap().status, 404);
}

#[test]
fn protocol_version_header_must_name_a_supported_revision() {
    let (mut c, id) = session("2025-11-25");
    let with = |v: &'static str| {
        [
            ("Mcp-Session-Id", id.clone()),
            ("MCP-Protocol-Version", v.to_owned()),
        ]
    };
    for (version, status) in [
        ("2025-03-26", 200),
        ("2025-11-25", 200),
        ("2024-11-05", 200),
        ("1999-01-01", 400),
        ("garbage", 400),
    ] {
        let h = with(version);
        let headers: Vec<(&str, &str)> = h.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = c.post(TOOLS_LIST, &headers);
        assert_eq!(reply.status, status, "{version}");
        if status == 400 {
            assert_eq!(reply.error_code(), Some(-32600));
        }
    }
}

#[test]
fn malformed_bodies_and_media_types_get_their_status_codes() {
    let (mut c, id) = session("2025-11-25");
    let sid = ("Mcp-Session-Id", id.as_str());
    let bad_json = c.post("{nope", &[sid]);
    assert_eq!(
        (bad_json.status, bad_json.error_code()),
        (400, Some(-32700))
    );
    let not_rpc = c.post(r#"{"id":1}"#, &[sid]);
    assert_eq!((not_rpc.status, not_rpc.error_code()), (400, Some(-32600)));
    let batch = c.post(&format!("[{TOOLS_LIST}]"), &[sid]);
    assert_eq!((batch.status, batch.error_code()), (400, Some(-32600)));

    let json_only = c
        .request(
            "POST",
            "/mcp",
            &[
                ("Accept", "application/json"),
                ("Content-Type", "application/json"),
                sid,
            ],
            TOOLS_LIST.as_bytes(),
        )
        .unwrap();
    assert_eq!(json_only.status, 406);
    let text = c
        .request(
            "POST",
            "/mcp",
            &[("Accept", "*/*"), ("Content-Type", "text/plain"), sid],
            TOOLS_LIST.as_bytes(),
        )
        .unwrap();
    assert_eq!(text.status, 415);
    let put = c.request("PUT", "/mcp", &[sid], b"").unwrap();
    assert_eq!(
        (put.status, put.header("allow")),
        (405, Some("GET, POST, DELETE"))
    );
    assert_eq!(c.request("GET", "/other", &[], b"").unwrap().status, 404);
    assert_eq!(
        c.request("GET", "/.well-known/oauth-protected-resource", &[], b"")
            .unwrap()
            .status,
        404
    );
    // Every rejection above left the connection usable.
    assert_eq!(c.post(TOOLS_LIST, &[sid]).status, 200);
}

#[test]
fn batches_are_served_only_in_2025_03_26_sessions() {
    let (mut c, id) = session("2025-03-26");
    let sid = [("Mcp-Session-Id", id.as_str())];
    let batch = c.post(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        &sid,
    );
    assert_eq!(batch.status, 200);
    let replies = batch.json();
    let ids: Vec<_> = replies
        .as_array()
        .unwrap()
        .iter()
        .map(|r| at(r, "id").as_u64())
        .collect();
    assert_eq!(ids, [Some(1), Some(2)]);
    let only_notifications = c.post(
        r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
        &sid,
    );
    assert_eq!(only_notifications.status, 202);
}

#[test]
fn a_call_that_notifies_streams_sse_and_the_connection_stays_usable() {
    let (mut c, id) = session("2025-11-25");
    let sid = [("Mcp-Session-Id", id.as_str())];
    let quiet = c.post(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress"}}"#,
        &sid,
    );
    assert_eq!(quiet.header("content-type"), Some("application/json"));

    assert_eq!(
        c.post(
            r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info"}}"#,
            &sid
        )
        .status,
        200
    );
    let streamed = c.post(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}}"#,
        &sid,
    );
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    assert_eq!(streamed.header("cache-control"), Some("no-cache"));
    assert_eq!(streamed.header("content-length"), None);
    let events = streamed.events();
    let methods: Vec<_> = events
        .iter()
        .map(|e| e.get("method").and_then(Value::as_str))
        .collect();
    assert_eq!(
        methods,
        [
            Some("notifications/progress"),
            Some("notifications/progress"),
            Some("notifications/progress"),
            Some("notifications/message"),
            // The engine's summary of the call, at info.
            Some("notifications/message"),
            None
        ]
    );
    assert_eq!(at(&events[4], "params.logger").as_str(), Some("engine"));
    assert_eq!(at(&events[4], "params.data.outcome").as_str(), Some("ok"));
    let progress: Vec<_> = events[..3]
        .iter()
        .map(|e| at(e, "params.progress").as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(at(&events[5], "id").as_u64(), Some(5));
    // A 2025-11-25 stream opens with a priming event (an id and `retry`, no data); every event
    // after it carries an id too (tests/http_streams.rs resumes them).
    let text = streamed.text();
    assert!(text.starts_with("id: "), "{text}");
    let first = text.split("\n\n").next().unwrap();
    assert!(
        first.contains("\nretry: ") && first.ends_with("\ndata: "),
        "{first}"
    );
    assert!(text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .all(|e| e.starts_with("id: ")));

    assert_eq!(c.post(TOOLS_LIST, &sid).status, 200);
}

#[test]
fn modern_requests_are_stateless_and_checked_against_their_headers() {
    let mut c = Client::connect(start_default());
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let good = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    let ok = c.post(call, &good);
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.header("mcp-session-id"), None);
    assert_eq!(
        at(&ok.json(), "result.resultType").as_str(),
        Some("complete")
    );

    let encoded = c.post(
        call,
        &[good[0], good[1], ("Mcp-Name", "=?base64?ZWNobw==?=")],
    );
    assert_eq!(encoded.status, 200);

    let cases: [(&[(&str, &str)], i64); 5] = [
        (&[good[1], good[2]], -32020),
        (
            &[("MCP-Protocol-Version", "2025-11-25"), good[1], good[2]],
            -32020,
        ),
        (&[good[0], good[2]], -32020),
        (&[good[0], ("Mcp-Method", "tools/list"), good[2]], -32020),
        (&[good[0], good[1], ("Mcp-Name", "other")], -32020),
    ];
    for (headers, code) in cases {
        let reply = c.post(call, headers);
        assert_eq!(
            (reply.status, reply.error_code()),
            (400, Some(code)),
            "{headers:?}"
        );
    }
    let mismatch = c.post(call, &[good[0], good[1], ("Mcp-Name", "other")]);
    assert!(at(&mismatch.json(), "error.message")
        .as_str()
        .unwrap()
        .contains("Mcp-Name header value 'other' does not match body value 'echo'"));

    let unsupported = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = c.post(
        unsupported,
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
    );
    assert_eq!((reply.status, reply.error_code()), (400, Some(-32022)));

    let no_caps = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let reply = c.post(no_caps, &[good[0], ("Mcp-Method", "tools/list")]);
    assert_eq!((reply.status, reply.error_code()), (400, Some(-32602)));

    let header_only = c.post(TOOLS_LIST, &[good[0], ("Mcp-Method", "tools/list")]);
    assert_eq!(
        (header_only.status, header_only.error_code()),
        (400, Some(-32602))
    );

    let unknown_method = r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = c.post(unknown_method, &[good[0], ("Mcp-Method", "resources/list")]);
    assert_eq!((reply.status, reply.error_code()), (404, Some(-32601)));

    let unknown_tool = call.replace("\"echo\"", "\"nope\"");
    let reply = c.post(&unknown_tool, &[good[0], good[1], ("Mcp-Name", "nope")]);
    assert_eq!((reply.status, reply.error_code()), (200, Some(-32602)));

    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = c.post(discover, &[good[0], ("Mcp-Method", "server/discover")]);
    assert_eq!(reply.status, 200);
    assert!(at(&reply.json(), "result.supportedVersions")
        .as_array()
        .is_some());
}

#[test]
fn stateless_mode_serves_each_request_alone() {
    let addr = start(HttpConfig {
        stateless: true,
        ..HttpConfig::default()
    });
    let mut c = Client::connect(addr);
    let init = c.post(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#, &[]);
    assert_eq!(init.status, 200);
    assert_eq!(init.header("mcp-session-id"), None);
    let listed = c.post(TOOLS_LIST, &[("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(listed.status, 200);
    // Negotiated-version gating follows the header: annotations exist from 2025-03-26.
    assert!(!at(&listed.json(), "result.tools.0.annotations").is_null());
    let old = c.post(TOOLS_LIST, &[("MCP-Protocol-Version", "2024-11-05")]);
    assert!(at(&old.json(), "result.tools.0.annotations").is_null());
    assert_eq!(
        c.request("DELETE", "/mcp", &[("Mcp-Session-Id", "x")], b"")
            .unwrap()
            .status,
        405
    );
}

#[test]
fn closing_the_connection_cancels_a_modern_call() {
    let mut c = Client::connect(start_default());
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: wait\r\nContent-Length: {}\r\n\r\n{call}",
        c.host(),
        call.len()
    );
    c.send(request.as_bytes());
    while !WAIT_STARTED.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    drop(c);
    // The tool answers on its own after WAIT_LIMIT if no cancellation reaches it.
    let outcome = loop {
        if let Some(outcome) = *WAIT_OUTCOME.lock().unwrap() {
            break outcome;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(
        outcome,
        "the call was not cancelled when its client went away"
    );
}
