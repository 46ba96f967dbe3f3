//! OAuth scopes guard every way to the repository, not only `tools/call`: gitread over HTTP in
//! OAuth mode with the README's minimal scopes (`"tools": {"git_*": ["repo:read"]}`), where a
//! token without `repo:read` must get 403 `insufficient_scope` for each method that reads through
//! a git tool (resources, prompts, completion, subscriptions/listen) in both eras, and a token
//! with it must be served.

mod common;
mod gitread_support;
mod oauth_support;

use common::{serve_http_as, HttpServer};
use gitread_support::{Fixture, TempDir};
use oauth_support::*;
use std::process::Stdio;
use std::time::Duration;

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// How long an answer may take before the test fails rather than waits.
const READ_TIMEOUT: Duration = Duration::from_secs(20);
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

struct Served {
    _server: HttpServer,
    port: u16,
    _dir: TempDir,
}

/// gitread at `root` over HTTP (stateless), trusting `auth`, with `scopes` as the configuration's
/// `scopes` member.
fn serve(auth: &AuthServer, root: &std::path::Path, scopes: &str) -> Served {
    let dir = TempDir::new("authz-config");
    let config = format!(
        r#"{{"resource": "{RESOURCE}", "authorization_servers": [{{"issuer": "{}"}}],
            "fetch_timeout_ms": 1000, "scopes": {scopes}}}"#,
        auth.issuer
    );
    let path = dir.join("auth.json");
    std::fs::write(&path, config).unwrap();
    let (server, port) = serve_http_as(
        &["gitread", "--root", root.to_str().unwrap()],
        &["--auth-config", path.to_str().unwrap(), "--stateless"],
        None,
        Stdio::null(),
    );
    Served {
        _server: server,
        port,
        _dir: dir,
    }
}

/// A fixture repository served with the README's minimal scopes, and its authorization server.
fn minimal(tag: &str) -> (Fixture, AuthServer, Served) {
    let f = Fixture::new(tag);
    let auth = AuthServer::start();
    let scopes = r#"{"required": ["mcp"], "tools": {"git_*": ["repo:read"]}}"#;
    let served = serve(&auth, &f.root, scopes);
    (f, auth, served)
}

fn token(auth: &AuthServer, scope: &str) -> String {
    let now = now_secs();
    let claims = format!(
        r#"{{"iss":"{}","aud":"{RESOURCE}","sub":"alice","client_id":"cli","iat":{now},"exp":{},"scope":"{scope}"}}"#,
        auth.issuer,
        now + 300
    );
    sign_jwt(
        &rsa_key("signing"),
        r#"{"alg":"RS256","typ":"at+jwt","kid":"k1"}"#,
        &claims,
    )
}

/// `method` with `params` (an object's members, without braces) as a request of `version`: its
/// body, and the headers 2026-07-28 asks for (`Mcp-Method`, and `Mcp-Name` with `name`).
fn request(version: &str, method: &str, params: &str, name: Option<&str>) -> (String, String) {
    let mut params = params.to_owned();
    let mut headers = format!("MCP-Protocol-Version: {version}\r\n");
    if version == MODERN {
        if !params.is_empty() {
            params.push(',');
        }
        params.push_str(MODERN_META);
        headers.push_str(&format!("Mcp-Method: {method}\r\n"));
        if let Some(name) = name {
            headers.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
    }
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    (body, headers)
}

/// The status, the `WWW-Authenticate` challenge and the body of `request` sent with `token`.
fn post(port: u16, (body, headers): &(String, String), token: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    // A request that is let through may hold its stream open (a listen): fail, never hang.
    stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nConnection: close\r\n{headers}\
         Authorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write request");
    let mut bytes = Vec::new();
    if let Err(e) = stream.read_to_end(&mut bytes) {
        let so_far = String::from_utf8_lossy(&bytes);
        panic!("no complete answer within {READ_TIMEOUT:?} ({e}): {so_far}");
    }
    let raw = String::from_utf8_lossy(&bytes).into_owned();
    let status = raw.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let challenge = head
        .lines()
        .find_map(|l| l.strip_prefix("WWW-Authenticate: "))
        .unwrap_or("")
        .to_owned();
    (status, challenge, body.to_owned())
}

/// Every method that yields or tells about the repository through a git tool, as
/// `(method, params, the Mcp-Name header)`.
const THROUGH_TOOLS: [(&str, &str, Option<&str>); 8] = [
    (
        "resources/read",
        r#""uri":"gitread://file/HEAD/a.txt""#,
        Some("gitread://file/HEAD/a.txt"),
    ),
    (
        "resources/read",
        r#""uri":"gitread://commit/HEAD""#,
        Some("gitread://commit/HEAD"),
    ),
    (
        "resources/read",
        r#""uri":"gitread://diff/HEAD~1/HEAD""#,
        Some("gitread://diff/HEAD~1/HEAD"),
    ),
    (
        "prompts/get",
        r#""name":"explain_commit","arguments":{"rev":"HEAD"}"#,
        Some("explain_commit"),
    ),
    (
        "prompts/get",
        r#""name":"review_diff","arguments":{"base":"HEAD~1","head":"HEAD"}"#,
        Some("review_diff"),
    ),
    (
        "completion/complete",
        r#""ref":{"type":"ref/resource","uri":"gitread://file/{rev}/{+path}"},"argument":{"name":"path","value":""}"#,
        None,
    ),
    (
        "completion/complete",
        r#""ref":{"type":"ref/prompt","name":"explain_commit"},"argument":{"name":"rev","value":"ma"}"#,
        None,
    ),
    (
        "tools/call",
        r#""name":"git_file","arguments":{"path":"a.txt"}"#,
        Some("git_file"),
    ),
];

#[test]
fn a_token_without_the_tools_scope_reads_the_repository_no_other_way() {
    let (f, auth, served) = minimal("authz-scopes");
    let without = token(&auth, "mcp");
    let with = token(&auth, "mcp repo:read");
    for version in [LEGACY, MODERN] {
        for (method, params, name) in THROUGH_TOOLS {
            let sent = request(version, method, params, name);
            let (status, challenge, reply) = post(served.port, &sent, &without);
            assert_eq!(status, 403, "{version} {method} {params}: {reply}");
            assert!(
                challenge.contains(r#"scope="mcp repo:read", error="insufficient_scope""#),
                "{version} {method}: {challenge}"
            );
            assert!(!reply.contains("one\\ntwo"), "{reply}");
            let (status, _, reply) = post(served.port, &sent, &with);
            assert_eq!(status, 200, "{version} {method} {params}: {reply}");
            assert!(reply.contains("\"result\""), "{version} {method}: {reply}");
        }
        // Lists name only what the server declares: served with the required scope, so a client
        // can find an item and step up to it.
        for method in ["resources/templates/list", "prompts/list", "tools/list"] {
            let sent = request(version, method, "", None);
            let (status, _, reply) = post(served.port, &sent, &without);
            assert_eq!(status, 200, "{version} {method}: {reply}");
        }
    }
    f.assert_canary_silent();
}

#[test]
fn a_listen_needs_the_scopes_of_every_resource_it_names() {
    let (_f, auth, served) = minimal("authz-listen");
    let without = token(&auth, "mcp");
    let sent = request(
        MODERN,
        "subscriptions/listen",
        r#""notifications":{"resourceSubscriptions":["gitread://file/HEAD/a.txt"]}"#,
        None,
    );
    let (status, challenge, reply) = post(served.port, &sent, &without);
    assert_eq!(status, 403, "{reply}");
    assert!(challenge.contains("repo:read"), "{challenge}");
}

#[test]
fn a_resource_rule_and_a_tool_rule_both_apply_to_a_read() {
    // docs/deploy.md's fuller configuration: a prompt scope alone does not reach git_show.
    let f = Fixture::new("authz-deploy");
    let auth = AuthServer::start();
    let served = serve(
        &auth,
        &f.root,
        r#"{"required": ["mcp"], "tools": {"git_*": ["repo:read"], "git_blame": ["repo:blame"]},
            "resources": {"gitread://*": ["repo:read"]}, "prompts": {"*": ["prompts"]}}"#,
    );
    let prompts_only = token(&auth, "mcp prompts");
    let explain = request(
        LEGACY,
        "prompts/get",
        r#""name":"explain_commit","arguments":{"rev":"HEAD"}"#,
        None,
    );
    let (status, challenge, reply) = post(served.port, &explain, &prompts_only);
    assert_eq!(status, 403, "{reply}");
    assert!(
        challenge.contains(r#"scope="mcp prompts repo:read""#),
        "{challenge}"
    );
    let both = token(&auth, "mcp prompts repo:read");
    let (status, _, reply) = post(served.port, &explain, &both);
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains("second"), "{reply}");
}
