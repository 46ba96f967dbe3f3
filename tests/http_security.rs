//! Who may talk to the endpoint, over real sockets: DNS-rebinding defences (Host, Origin), bearer
//! tokens, the non-loopback refusal and the optional RFC 9728 metadata.

mod http_support;

use agentteams_mcp::http::{self, HttpConfig, ResourceMetadata, Token};
use agentteams_mcp::server::Engine;
use http_support::{at, start, start_default, Client, TestTools, TOOLS_LIST};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

const SECRET: &str = "s3cret-token-for-tests-0123456789";

fn raw_post(c: &mut Client, host: &str, extra: &str) -> http_support::Reply {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    c.send(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    c.read_reply().expect("a response")
}

#[test]
fn foreign_hosts_and_origins_are_forbidden_loopback_ones_served() {
    let addr = start_default();
    let mut c = Client::connect(addr);
    let port = addr.port();
    let local = format!("localhost:{port}");
    let cases = [
        ("evil.example.com", "", 403),
        (local.as_str(), "Origin: http://evil.example.com\r\n", 403),
        (local.as_str(), "Origin: null\r\n", 403),
        (
            local.as_str(),
            &format!("Origin: http://localhost:{port}\r\n"),
            200,
        ),
        (
            &format!("127.0.0.1:{port}"),
            "Origin: http://127.0.0.1\r\n",
            200,
        ),
        (&format!("[::1]:{port}"), "", 200),
    ];
    for (host, extra, status) in cases {
        let reply = raw_post(&mut c, host, extra);
        assert_eq!(reply.status, status, "Host {host} {extra:?}");
        if status == 403 {
            assert_eq!(reply.error_code(), Some(-32600));
            assert!(reply.json().get("id").is_none());
        }
    }
    // No Host at all is a malformed HTTP/1.1 request.
    c.send(b"GET /mcp HTTP/1.1\r\n\r\n");
    assert_eq!(c.read_reply().unwrap().status, 400);
}

#[test]
fn configured_hosts_and_origins_are_served() {
    let addr = start(HttpConfig {
        allowed_hosts: vec!["mcp.example.com".into()],
        allowed_origins: vec!["https://app.example.com".into()],
        ..HttpConfig::default()
    });
    let mut c = Client::connect(addr);
    assert_eq!(raw_post(&mut c, "mcp.example.com", "").status, 200);
    assert_eq!(
        raw_post(
            &mut c,
            "mcp.example.com",
            "Origin: https://app.example.com\r\n"
        )
        .status,
        200
    );
    assert_eq!(
        raw_post(
            &mut c,
            "mcp.example.com",
            "Origin: https://other.example.com\r\n"
        )
        .status,
        403
    );
}

#[test]
fn a_configured_token_is_required_before_anything_else() {
    let addr = start(HttpConfig {
        auth_token: Some(Token::new(SECRET).unwrap()),
        ..HttpConfig::default()
    });
    let mut c = Client::connect(addr);
    let missing = c.post(TOOLS_LIST, &[("Mcp-Session-Id", "unknown")]);
    assert_eq!(
        missing.status, 401,
        "authentication precedes the session lookup"
    );
    assert_eq!(
        missing.header("www-authenticate"),
        Some("Bearer realm=\"mcp\"")
    );

    let wrong = c.post(
        TOOLS_LIST,
        &[("Authorization", "Bearer not-the-token-0123456789")],
    );
    assert_eq!(wrong.status, 401);
    assert_eq!(
        wrong.header("www-authenticate"),
        Some("Bearer realm=\"mcp\", error=\"invalid_token\"")
    );
    let prefix = format!("Bearer {}", &SECRET[..SECRET.len() - 1]);
    assert_eq!(
        c.post(TOOLS_LIST, &[("Authorization", &prefix)]).status,
        401
    );

    let bearer = format!("Bearer {SECRET}");
    let auth = ("Authorization", bearer.as_str());
    let init = c.post(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        &[auth],
    );
    assert_eq!(init.status, 200);
    let id = init.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(
        c.post(TOOLS_LIST, &[auth, ("Mcp-Session-Id", &id)]).status,
        200
    );
    // The session id alone is not a credential.
    assert_eq!(c.post(TOOLS_LIST, &[("Mcp-Session-Id", &id)]).status, 401);
    assert_eq!(
        c.request("DELETE", "/mcp", &[("Mcp-Session-Id", &id)], b"")
            .unwrap()
            .status,
        401
    );
}

#[test]
fn non_loopback_addresses_need_a_token() {
    let engine = Arc::new(Engine::new(Arc::new(TestTools)));
    let config = HttpConfig {
        bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        port: 0,
        ..HttpConfig::default()
    };
    let refused = http::bind(engine.clone(), config.clone())
        .err()
        .expect("refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    assert!(refused.to_string().contains("without an auth token"));
    let with_token = HttpConfig {
        auth_token: Some(Token::new(SECRET).unwrap()),
        ..config
    };
    assert!(http::bind(engine, with_token).is_ok());
}

#[test]
fn protected_resource_metadata_is_served_only_when_configured() {
    let addr = start(HttpConfig {
        auth_token: Some(Token::new(SECRET).unwrap()),
        resource_metadata: Some(ResourceMetadata {
            resource: "https://mcp.example.com/mcp".into(),
            authorization_servers: vec!["https://auth.example.com".into()],
            scopes: vec!["mcp:read".into()],
        }),
        ..HttpConfig::default()
    });
    let mut c = Client::connect(addr);
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let doc = c.request("GET", path, &[], b"").unwrap();
        assert_eq!(doc.status, 200, "{path}");
        let doc = doc.json();
        assert_eq!(
            at(&doc, "resource").as_str(),
            Some("https://mcp.example.com/mcp")
        );
        assert_eq!(
            at(&doc, "authorization_servers.0").as_str(),
            Some("https://auth.example.com")
        );
    }
    let challenge = c.post(TOOLS_LIST, &[]);
    assert_eq!(challenge.status, 401);
    assert_eq!(
        challenge.header("www-authenticate"),
        Some("Bearer realm=\"mcp\", resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\"")
    );
}
