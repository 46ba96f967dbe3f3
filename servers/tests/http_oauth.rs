//! The OAuth 2.1 resource server through the real binary (`--http --auth-config`), against an
//! authorization server each test starts (`oauth_support`): JWT access tokens signed RS256 and
//! refused for each broken claim, key or algorithm; the RFC 6750 challenges; step-up by scope for
//! tools, resources and prompts; the key set's fetch bound and failure; RFC 7662 introspection
//! active, inactive, down, slow and its bounded cache; sessions bound to their principal; and an
//! audit log that names the principal's digest, never the token.

mod common;
mod oauth_support;

use common::{http_post, http_request, serve_http, HttpServer, TempDir};
use oauth_support::*;
use std::io::BufRead;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const VERSION: &str = "2025-11-25";
const SCOPES: &str = r#""scopes": {"required": ["mcp"], "tools": {"test_simple_text": ["tools:simple"]},
    "resources": {"test://static-*": ["res"]}, "prompts": {"*": ["prompts"]}}"#;
const CALL_SIMPLE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}"#;

/// The server under test and the folder holding its configuration (removed when dropped).
struct Served {
    server: HttpServer,
    port: u16,
    _dir: TempDir,
}

/// Starts the conformance fixture over HTTP in OAuth mode, trusting `auth`; `extra` adds members
/// to the configuration, `args` to the command line (default `--stateless`).
fn serve(auth: &AuthServer, extra: &str, args: &[&str]) -> Served {
    let dir = TempDir::new("oauth");
    std::fs::write(dir.path().join("secret"), CLIENT_SECRET).unwrap();
    let config = format!(
        r#"{{"resource": "{RESOURCE}", "authorization_servers": [{{"issuer": "{}"}}],
            "introspection": {{"endpoint": "{}/introspect", "client_id": "{CLIENT_ID}", "client_secret_file": "secret"}},
            "fetch_timeout_ms": 1000, {SCOPES}{extra}}}"#,
        auth.issuer, auth.issuer
    );
    let path = dir.path().join("auth.json");
    std::fs::write(&path, config).unwrap();
    let mut argv = vec!["--auth-config", path.to_str().unwrap()];
    argv.extend_from_slice(if args.is_empty() {
        &["--stateless"]
    } else {
        args
    });
    let (server, port) = serve_http(&argv, None, Stdio::null());
    Served {
        server,
        port,
        _dir: dir,
    }
}

/// A response split into status, `WWW-Authenticate` and body.
struct Reply {
    status: u16,
    challenge: String,
    headers: String,
    body: String,
}

fn split(status: u16, raw: &str) -> Reply {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let challenge = head
        .lines()
        .find_map(|l| l.strip_prefix("WWW-Authenticate: "))
        .unwrap_or("")
        .to_owned();
    Reply {
        status,
        challenge,
        headers: head.to_owned(),
        body: body.to_owned(),
    }
}

fn post_with(port: u16, authorization: Option<&str>, body: &str) -> Reply {
    let mut headers = format!("MCP-Protocol-Version: {VERSION}\r\n");
    if let Some(value) = authorization {
        headers.push_str(&format!("Authorization: {value}\r\n"));
    }
    let (status, raw) = http_post(port, &headers, body);
    split(status, &raw)
}

fn post(port: u16, token: &str, body: &str) -> Reply {
    post_with(port, Some(&format!("Bearer {token}")), body)
}

const HEADER: &str = r#"{"alg":"RS256","typ":"at+jwt","kid":"k1"}"#;

/// Claims for `alice` with `scope`, valid for five minutes from now; `extra` adds members (not
/// ones listed here: a member named twice is refused).
fn claims(issuer: &str, scope: &str, extra: &str) -> String {
    let now = now_secs();
    format!(
        r#"{{"iss":"{issuer}","aud":"{RESOURCE}","sub":"alice","client_id":"cli","iat":{now},"exp":{},"scope":"{scope}"{extra}}}"#,
        now + 300
    )
}

fn token(auth: &AuthServer, scope: &str) -> String {
    sign_jwt(
        &rsa_key("signing"),
        HEADER,
        &claims(&auth.issuer, scope, ""),
    )
}

#[test]
fn a_valid_jwt_reaches_the_tool_and_each_broken_claim_key_or_algorithm_gets_401() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    let port = served.port;
    let good = token(&auth, "mcp tools:simple");
    let ok = post(port, &good, CALL_SIMPLE);
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.body.contains("\"result\""), "{}", ok.body);

    let signing = rsa_key("signing");
    let now = now_secs();
    let iss = auth.issuer.as_str();
    let with_claims = |text: String| sign_jwt(&signing, HEADER, &text);
    let claim_set = |aud: &str, iss: &str, times: &str| {
        format!(
            r#"{{"iss":"{iss}","aud":"{aud}","sub":"alice","scope":"mcp tools:simple",{times}}}"#
        )
    };
    let valid_times = format!(r#""iat":{now},"exp":{}"#, now + 300);
    let hs256_secret = rsa_key("signing").jwk("k1");
    let hs256_input = format!(
        "{}.{}",
        agentteams_mcp::base64::encode_url(br#"{"alg":"HS256","typ":"at+jwt","kid":"k1"}"#),
        agentteams_mcp::base64::encode_url(claims(iss, "mcp tools:simple", "").as_bytes())
    );
    let hs256_tag =
        agentteams_mcp::hmac::Hmac::<agentteams_mcp::sha256::Sha256>::new(hs256_secret.as_bytes())
            .mac(hs256_input.as_bytes());
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "expired",
            with_claims(claim_set(
                RESOURCE,
                iss,
                &format!(r#""iat":{},"exp":{}"#, now - 900, now - 600),
            )),
            "expired (exp)",
        ),
        (
            "not yet valid",
            with_claims(claim_set(
                RESOURCE,
                iss,
                &format!(r#""iat":{now},"exp":{},"nbf":{}"#, now + 900, now + 600),
            )),
            "not valid yet (nbf)",
        ),
        (
            "another audience",
            with_claims(claim_set("https://other.example/mcp", iss, &valid_times)),
            "another resource (aud)",
        ),
        (
            "another issuer",
            with_claims(claim_set(RESOURCE, "http://evil.example", &valid_times)),
            "issuer (iss) is not the configured",
        ),
        (
            "an unknown key",
            sign_jwt(
                &rsa_key("unknown"),
                HEADER,
                &claims(iss, "mcp tools:simple", ""),
            ),
            // "does not verify", or "not below the modulus" when the other key's is larger.
            "signature",
        ),
        (
            "a wrong kid",
            sign_jwt(
                &signing,
                r#"{"alg":"RS256","typ":"at+jwt","kid":"k2"}"#,
                &claims(iss, "mcp", ""),
            ),
            "no key with kid k2",
        ),
        (
            "alg none",
            unsigned_jwt(
                r#"{"alg":"none","typ":"at+jwt"}"#,
                &claims(iss, "mcp tools:simple", ""),
                b"",
            ),
            "alg none",
        ),
        (
            "HS256 with the RSA public key as the secret",
            format!(
                "{hs256_input}.{}",
                agentteams_mcp::base64::encode_url(hs256_tag.as_ref())
            ),
            "HS256 is not implemented",
        ),
        (
            "an ID token's typ",
            sign_jwt(
                &signing,
                r#"{"alg":"RS256","typ":"JWT","kid":"k1"}"#,
                &claims(iss, "mcp tools:simple", ""),
            ),
            "typ is not at+jwt",
        ),
        (
            "a tampered payload",
            {
                let t = good.clone();
                let parts: Vec<&str> = t.split('.').collect();
                let forged = claims(iss, "mcp tools:simple admin", "");
                format!(
                    "{}.{}.{}",
                    parts[0],
                    agentteams_mcp::base64::encode_url(forged.as_bytes()),
                    parts[2]
                )
            },
            "signature does not verify",
        ),
        (
            "an opaque token nobody issued",
            "opaque-unknown-token".into(),
            "not active",
        ),
    ];
    for (what, token, why) in cases {
        let reply = post(port, &token, CALL_SIMPLE);
        assert_eq!(reply.status, 401, "{what}: {}", reply.body);
        assert!(
            reply.challenge.contains("error=\"invalid_token\""),
            "{what}: {}",
            reply.challenge
        );
        assert!(
            reply.challenge.contains(why),
            "{what}: {} lacks {why}",
            reply.challenge
        );
        assert!(reply.body.contains(why), "{what}: {}", reply.body);
        assert!(
            !reply.headers.contains(&token) && !reply.body.contains(&token),
            "{what}: token echoed"
        );
    }
    // The server kept serving through all of it.
    assert_eq!(post(port, &good, CALL_SIMPLE).status, 200);
}

#[test]
fn missing_and_malformed_authorization_get_the_challenges_rfc_6750_prescribes() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    let metadata = "https://mcp.test.example/.well-known/oauth-protected-resource/mcp";
    let none = post_with(served.port, None, CALL_SIMPLE);
    assert_eq!(none.status, 401);
    assert_eq!(
        none.challenge,
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"mcp\"")
    );
    let basic = post_with(served.port, Some("Basic YWxpY2U6cHc="), CALL_SIMPLE);
    assert_eq!(
        (basic.status, basic.challenge.as_str()),
        (401, none.challenge.as_str())
    );
    for malformed in ["Bearer", "Bearer a b", "Bearer a\"b"] {
        let reply = post_with(served.port, Some(malformed), CALL_SIMPLE);
        assert_eq!(reply.status, 400, "{malformed}: {}", reply.body);
        assert!(
            reply.challenge.contains("error=\"invalid_request\""),
            "{}",
            reply.challenge
        );
    }
    let good = token(&auth, "mcp tools:simple");
    let (status, raw) = http_post(
        served.port,
        &format!("MCP-Protocol-Version: {VERSION}\r\nAuthorization: Bearer {good}\r\nAuthorization: Bearer {good}\r\n"),
        CALL_SIMPLE,
    );
    assert_eq!(status, 400, "{raw}");
    assert!(raw.contains("Authorization must be sent once"), "{raw}");
    // GET and DELETE are guarded as POST is.
    let (status, _) = http_request(served.port, "GET", "/mcp", "", "");
    assert_eq!(status, 401);
    let (status, _) = http_request(served.port, "DELETE", "/mcp", "Mcp-Session-Id: x\r\n", "");
    assert_eq!(status, 401);
}

#[test]
fn scopes_map_to_tools_resources_and_prompts_and_too_few_get_403_naming_them() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    let port = served.port;
    let base = token(&auth, "mcp");
    let step_up = |body: &str, needed: &str| {
        let reply = post(port, &base, body);
        assert_eq!(reply.status, 403, "{body}: {}", reply.body);
        assert!(
            reply
                .challenge
                .contains(&format!("scope=\"{needed}\", error=\"insufficient_scope\"")),
            "{body}: {}",
            reply.challenge
        );
    };
    step_up(CALL_SIMPLE, "mcp tools:simple");
    step_up(
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text"}}"#,
        "mcp res",
    );
    step_up(
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"test_simple_prompt"}}"#,
        "mcp prompts",
    );
    // A batch is refused when any of its requests needs more.
    step_up(
        &format!(r#"[{{"jsonrpc":"2.0","id":9,"method":"ping"}},{CALL_SIMPLE}]"#),
        "mcp tools:simple",
    );
    // Calls no rule names need only the required scope; lists show everything (so a client can
    // find a tool and step up to it).
    let other = post(
        port,
        &base,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"test_image_content","arguments":{}}}"#,
    );
    assert_eq!(other.status, 200, "{}", other.body);
    let list = post(
        port,
        &base,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    );
    assert_eq!(list.status, 200);
    assert!(list.body.contains("test_simple_text"), "{}", list.body);
    let no_mcp = token(&auth, "tools:simple");
    let reply = post(
        port,
        &no_mcp,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
    );
    assert_eq!(reply.status, 403);
    assert!(
        reply.challenge.contains("scope=\"mcp\""),
        "{}",
        reply.challenge
    );
    let all = token(&auth, "mcp tools:simple res prompts");
    for body in [
        CALL_SIMPLE,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://static-text"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"test_simple_prompt"}}"#,
    ] {
        let reply = post(port, &all, body);
        assert_eq!(reply.status, 200, "{body}: {}", reply.body);
        assert!(reply.body.contains("\"result\""), "{}", reply.body);
    }
}

#[test]
fn protected_resource_metadata_is_served_at_both_well_known_paths() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let (status, raw) = http_request(served.port, "GET", path, "", "");
        assert_eq!(status, 200, "{path}: {raw}");
        let doc = parse(raw.split_once("\r\n\r\n").unwrap().1);
        assert_eq!(doc.get("resource").and_then(|v| v.as_str()), Some(RESOURCE));
        let list = |name: &str| -> Vec<String> {
            doc.get(name)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default()
        };
        assert_eq!(list("authorization_servers"), [auth.issuer.as_str()]);
        assert_eq!(
            list("scopes_supported"),
            ["mcp", "tools:simple", "res", "prompts"]
        );
    }
    // A resource published under another path (a proxy maps it to /mcp) has its metadata at
    // the path-inserted URL too, and challenges name that URL.
    let nested = TempDir::new("oauth-nested");
    let config = nested.path().join("auth.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"resource": "https://example.com/tools/mcp", "authorization_servers": [{{"issuer": "{}"}}]}}"#,
            auth.issuer
        ),
    )
    .unwrap();
    let (_server, port) = serve_http(
        &["--auth-config", config.to_str().unwrap()],
        None,
        Stdio::null(),
    );
    let (status, raw) = http_request(
        port,
        "GET",
        "/.well-known/oauth-protected-resource/tools/mcp",
        "",
        "",
    );
    assert_eq!(status, 200, "{raw}");
    assert!(
        raw.contains("\"resource\":\"https://example.com/tools/mcp\""),
        "{raw}"
    );
    let challenge = post_with(port, None, CALL_SIMPLE).challenge;
    assert_eq!(
        challenge,
        "Bearer resource_metadata=\"https://example.com/.well-known/oauth-protected-resource/tools/mcp\""
    );
}

/// Reads the server's stderr until a line containing `needle` (or gives up after 5 s).
fn stderr_line_with(server: &mut HttpServer, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if server.1.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if line.contains(needle) {
            return line;
        }
    }
    panic!("no stderr line with {needle:?}");
}

#[test]
fn a_key_server_down_fails_closed_with_503_and_is_asked_again_after_the_interval() {
    let auth = AuthServer::start();
    auth.behaviour.jwks_down.store(true, Ordering::SeqCst);
    let mut served = serve(
        &auth,
        r#", "cache": {"jwks_refetch_interval_secs": 1}"#,
        &[],
    );
    let good = token(&auth, "mcp tools:simple");
    let down = post(served.port, &good, CALL_SIMPLE);
    assert_eq!(down.status, 503, "{}", down.body);
    assert!(down.headers.contains("Retry-After: 5"), "{}", down.headers);
    assert!(down.body.contains("could not be fetched"), "{}", down.body);
    let line = stderr_line_with(
        &mut served.server,
        "agentteams-mcp: auth: key set of issuer",
    );
    assert!(
        line.contains("status 503") && !line.contains(&good),
        "{line}"
    );
    // Within the interval nobody asks the authorization server again.
    let hits = auth.hits().1;
    assert_eq!(post(served.port, &good, CALL_SIMPLE).status, 503);
    assert_eq!(auth.hits().1, hits);
    auth.behaviour.jwks_down.store(false, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post(served.port, &good, CALL_SIMPLE).status, 200);
}

#[test]
fn unknown_kids_refetch_the_key_set_at_most_once_per_interval() {
    let auth = AuthServer::start();
    let served = serve(
        &auth,
        r#", "cache": {"jwks_refetch_interval_secs": 1}"#,
        &[],
    );
    let good = token(&auth, "mcp tools:simple");
    let signing = rsa_key("signing");
    let forged: Vec<String> = (0..16)
        .map(|i| {
            let header = format!(r#"{{"alg":"RS256","typ":"at+jwt","kid":"forged-{i}"}}"#);
            sign_jwt(&signing, &header, &claims(&auth.issuer, "mcp", ""))
        })
        .collect();
    assert_eq!(post(served.port, &good, CALL_SIMPLE).status, 200);
    assert_eq!(auth.hits(), (1, 1, 0), "metadata once, then the key set");
    let flood = Instant::now();
    for token in &forged[..15] {
        assert_eq!(post(served.port, token, CALL_SIMPLE).status, 401);
    }
    let refetches = auth.hits().1 - 1;
    let allowed = 1 + flood.elapsed().as_secs();
    assert!(
        refetches <= allowed,
        "{refetches} refetches in {:?}",
        flood.elapsed()
    );
    // After the interval an unknown kid is looked up again: exactly one fetch.
    std::thread::sleep(Duration::from_millis(1100));
    let before = auth.hits().1;
    assert_eq!(post(served.port, &forged[15], CALL_SIMPLE).status, 401);
    assert_eq!(auth.hits().1, before + 1);
    assert_eq!(auth.hits().0, 1, "the metadata is read once");
    assert_eq!(post(served.port, &good, CALL_SIMPLE).status, 200);
}

#[test]
fn a_validated_jwt_is_remembered_until_its_cache_lifetime_and_new_ones_meet_the_new_keys() {
    let auth = AuthServer::start();
    let served = serve(
        &auth,
        r#", "cache": {"jwks_max_age_secs": 1, "jwks_refetch_interval_secs": 1}"#,
        &[],
    );
    let remembered = token(&auth, "mcp tools:simple");
    let fresh = sign_jwt(
        &rsa_key("signing"),
        HEADER,
        &claims(&auth.issuer, "mcp tools:simple", ", \"jti\": \"2\""),
    );
    assert_eq!(post(served.port, &remembered, CALL_SIMPLE).status, 200);
    // The authorization server rotates its key; the held set grows old.
    auth.behaviour.jwks_rotated.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1100));
    let hits = auth.hits().1;
    assert_eq!(
        post(served.port, &remembered, CALL_SIMPLE).status,
        200,
        "remembered: no check"
    );
    assert_eq!(auth.hits().1, hits, "a remembered grant needs no key set");
    let reply = post(served.port, &fresh, CALL_SIMPLE);
    assert_eq!(
        reply.status, 401,
        "a new token meets the new key set: {}",
        reply.body
    );
    assert_eq!(auth.hits().1, hits + 1);
}

fn introspection_answer(scope: &str, sub: &str, aud: &str) -> String {
    format!(
        r#"{{"active":true,"sub":"{sub}","aud":"{aud}","scope":"{scope}","exp":{},"client_id":"cli"}}"#,
        now_secs() + 300
    )
}

#[test]
fn opaque_tokens_are_introspected_and_their_answers_cached() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    let port = served.port;
    auth.introspects(
        "opaque-active-1",
        &introspection_answer("mcp tools:simple", "carol", RESOURCE),
    );
    auth.introspects(
        "opaque-other-aud",
        &introspection_answer("mcp tools:simple", "carol", "https://other.example/mcp"),
    );
    auth.introspects(
        "opaque-expired",
        &format!(
            r#"{{"active":true,"aud":"{RESOURCE}","scope":"mcp","exp":{}}}"#,
            now_secs() - 600
        ),
    );
    auth.introspects(
        "opaque-few-scopes",
        &introspection_answer("mcp", "dave", RESOURCE),
    );
    assert_eq!(post(port, "opaque-active-1", CALL_SIMPLE).status, 200);
    assert_eq!(post(port, "opaque-active-1", CALL_SIMPLE).status, 200);
    assert_eq!(auth.hits().2, 1, "the second use came from the cache");
    assert!(!auth.behaviour.bad_client_auth.load(Ordering::SeqCst));
    for (token, why) in [
        ("opaque-inactive", "the token is not active"),
        ("opaque-other-aud", "not for this resource (aud)"),
        ("opaque-expired", "expired (exp)"),
    ] {
        let reply = post(port, token, CALL_SIMPLE);
        assert_eq!(reply.status, 401, "{token}");
        assert!(
            reply.challenge.contains(why),
            "{token}: {}",
            reply.challenge
        );
    }
    let few = post(port, "opaque-few-scopes", CALL_SIMPLE);
    assert_eq!(few.status, 403);
    assert!(
        few.challenge.contains("scope=\"mcp tools:simple\""),
        "{}",
        few.challenge
    );
}

/// Issue 32, finding 4: an active answer naming neither `sub` nor `client_id` names no one, so it
/// grants nothing (else every such token would be one principal, sharing sessions).
#[test]
fn introspection_answers_naming_no_one_are_refused() {
    let auth = AuthServer::start();
    let served = serve(&auth, "", &[]);
    let nameless = format!(
        r#"{{"active":true,"aud":"{RESOURCE}","scope":"mcp tools:simple","exp":{}}}"#,
        now_secs() + 300
    );
    auth.introspects("opaque-nameless-1", &nameless);
    auth.introspects("opaque-nameless-2", &nameless);
    auth.introspects(
        "opaque-empty-sub",
        &nameless.replace("\"active\"", "\"sub\":\"\",\"active\""),
    );
    auth.introspects(
        "opaque-named",
        &introspection_answer("mcp tools:simple", "grace", RESOURCE),
    );
    // The 2026-07-28 era, stateless, is judged the same way.
    let modern = |token: &str| {
        let headers = format!(
            "Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: test_simple_text\r\n"
        );
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let (status, raw) = http_post(served.port, &headers, body);
        split(status, &raw)
    };
    let named = modern("opaque-named");
    assert_eq!(named.status, 200, "{}", named.body);
    for token in ["opaque-nameless-1", "opaque-nameless-2", "opaque-empty-sub"] {
        for reply in [post(served.port, token, CALL_SIMPLE), modern(token)] {
            assert_eq!(reply.status, 401, "{token}: {}", reply.body);
            assert!(
                reply.challenge.contains("error=\"invalid_token\"")
                    && reply
                        .challenge
                        .contains("names no subject (sub) or client (client_id)"),
                "{token}: {}",
                reply.challenge
            );
        }
    }
}

#[test]
fn introspection_down_or_slow_fails_closed_with_503() {
    let auth = AuthServer::start();
    let mut served = serve(&auth, "", &[]);
    auth.introspects(
        "opaque-active-2",
        &introspection_answer("mcp tools:simple", "erin", RESOURCE),
    );
    auth.behaviour
        .introspection_down
        .store(true, Ordering::SeqCst);
    let down = post(served.port, "opaque-active-2", CALL_SIMPLE);
    assert_eq!(down.status, 503, "{}", down.body);
    assert!(
        down.body.contains("token introspection failed"),
        "{}",
        down.body
    );
    let line = stderr_line_with(
        &mut served.server,
        "agentteams-mcp: auth: token introspection failed",
    );
    assert!(!line.contains("opaque-active-2"), "{line}");
    auth.behaviour
        .introspection_down
        .store(false, Ordering::SeqCst);
    auth.behaviour
        .introspection_delay_ms
        .store(3000, Ordering::SeqCst);
    let started = Instant::now();
    let slow = post(served.port, "opaque-active-2", CALL_SIMPLE);
    assert_eq!(slow.status, 503, "{}", slow.body);
    assert!(slow.body.contains("within 1000 ms"), "{}", slow.body);
    assert!(
        started.elapsed() < Duration::from_millis(2900),
        "the timeout cut the wait short"
    );
    // Failures are not cached: once the server answers again, so does the resource server.
    auth.behaviour
        .introspection_delay_ms
        .store(0, Ordering::SeqCst);
    assert_eq!(
        post(served.port, "opaque-active-2", CALL_SIMPLE).status,
        200
    );
}

#[test]
fn the_introspection_cache_is_bounded() {
    let auth = AuthServer::start();
    let served = serve(&auth, r#", "cache": {"token_cache_max_entries": 3}"#, &[]);
    auth.introspects(
        "opaque-active-3",
        &introspection_answer("mcp tools:simple", "frank", RESOURCE),
    );
    assert_eq!(
        post(served.port, "opaque-active-3", CALL_SIMPLE).status,
        200
    );
    assert_eq!(
        post(served.port, "opaque-active-3", CALL_SIMPLE).status,
        200
    );
    assert_eq!(auth.hits().2, 1);
    // Three more tokens fill the table; the oldest answer is evicted and asked again.
    for i in 0..3 {
        assert_eq!(
            post(served.port, &format!("opaque-junk-{i}"), CALL_SIMPLE).status,
            401
        );
    }
    assert_eq!(auth.hits().2, 4);
    assert_eq!(
        post(served.port, "opaque-active-3", CALL_SIMPLE).status,
        200
    );
    assert_eq!(auth.hits().2, 5, "evicted, so introspected again");
}

/// A JWT like [`token`]'s for subject `sub`.
fn token_for(auth: &AuthServer, sub: &str, scope: &str) -> String {
    let text = claims(&auth.issuer, scope, "").replace("\"alice\"", &format!("\"{sub}\""));
    sign_jwt(&rsa_key("signing"), HEADER, &text)
}

/// A legacy `initialize` request.
fn initialize_body() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

/// Opens a legacy session on `port` with `token`; returns its id.
fn initialize(port: u16, token: &str) -> String {
    let (status, raw) = http_post(
        port,
        &format!("Authorization: Bearer {token}\r\n"),
        &initialize_body(),
    );
    assert_eq!(status, 200, "{raw}");
    common::session_id_of(&raw)
}

/// A tool call in `session` with `token`: the status and the raw response.
fn call_in_session(port: u16, token: &str, session: &str) -> (u16, String) {
    let headers = format!(
        "Authorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {VERSION}\r\n"
    );
    http_post(port, &headers, CALL_SIMPLE)
}

/// Issue 32, finding 3: a sealed session is its opener's wherever it is presented. Another
/// principal cannot take it over by pushing it out of a replica's session table, after a restart,
/// or with a token sealed by a replica that runs without OAuth.
#[test]
fn a_sealed_session_stays_its_owners_after_eviction_restart_and_on_any_replica() {
    let auth = AuthServer::start();
    let dir = TempDir::new("oauth-sealed");
    let key = dir.path().join("session.key");
    std::fs::write(&key, "3c".repeat(32)).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let sealed = ["--session-key-file", key.to_str().unwrap()];
    let served = serve(&auth, "", &sealed);
    let (alice, bob) = (
        token_for(&auth, "alice", "mcp tools:simple"),
        token_for(&auth, "bob", "mcp tools:simple"),
    );
    let session = initialize(served.port, &alice);
    assert_eq!(call_in_session(served.port, &alice, &session).0, 200);
    let (status, raw) = call_in_session(served.port, &bob, &session);
    assert_eq!(status, 404, "{raw}");
    // Bob floods the replica's table with sessions of his own (which ends his own, see
    // `a_principal_flooding_the_session_table_ends_its_own_sessions_only`).
    let table = agentteams_mcp::http::limits::MAX_SESSIONS;
    let flood = |token: &str| {
        for _ in 0..table + table / 16 {
            initialize(served.port, token);
        }
    };
    flood(&bob);
    let (status, raw) = call_in_session(served.port, &bob, &session);
    assert_eq!(status, 404, "still not Bob's: {raw}");
    assert!(raw.contains("session not found"), "{raw}");
    assert_eq!(call_in_session(served.port, &alice, &session).0, 200);
    // Alice's own sessions push her oldest out of the table: only the token tells its owner now.
    flood(&alice);
    let (status, raw) = call_in_session(served.port, &bob, &session);
    assert_eq!(status, 404, "evicted, still not Bob's: {raw}");
    assert!(raw.contains("session not found"), "{raw}");
    let (status, raw) = call_in_session(served.port, &alice, &session);
    assert_eq!(status, 200, "re-opened for Alice: {raw}");
    // A restart with the same key forgets the table, not the owner.
    drop(served);
    let served = serve(&auth, "", &sealed);
    let (status, raw) = call_in_session(served.port, &bob, &session);
    assert_eq!(status, 404, "after a restart, still not Bob's: {raw}");
    let (status, raw) = call_in_session(served.port, &alice, &session);
    assert_eq!(status, 200, "after a restart, Alice's: {raw}");
    // A replica without OAuth sharing the key seals sessions of no principal: no token holder
    // may use them here.
    let (_plain, plain) = serve_http(&sealed, None, Stdio::null());
    let (status, raw) = http_post(plain, "", &initialize_body());
    assert_eq!(status, 200, "{raw}");
    let anonymous = common::session_id_of(&raw);
    let (status, raw) = call_in_session(served.port, &bob, &anonymous);
    assert_eq!(status, 404, "a session of no principal: {raw}");
}

/// A full session table ends a session of the principal holding the most: one caller opening
/// sessions by the thousand ends its own, never another's (in-memory sessions cannot be rebuilt).
#[test]
fn a_principal_flooding_the_session_table_ends_its_own_sessions_only() {
    let auth = AuthServer::start();
    // In-memory sessions (any argument stands in for the default `--stateless`).
    let served = serve(&auth, "", &["--replica-name", "flooded"]);
    let (alice, bob) = (
        token_for(&auth, "alice", "mcp tools:simple"),
        token_for(&auth, "bob", "mcp tools:simple"),
    );
    let session = initialize(served.port, &alice);
    let table = agentteams_mcp::http::limits::MAX_SESSIONS;
    let bobs: Vec<String> = (0..table + table / 16)
        .map(|_| initialize(served.port, &bob))
        .collect();
    let (status, raw) = call_in_session(served.port, &alice, &session);
    assert_eq!(status, 200, "Alice's session outlived Bob's flood: {raw}");
    assert_eq!(
        call_in_session(served.port, &bob, &bobs[0]).0,
        404,
        "Bob's oldest ended"
    );
    assert_eq!(
        call_in_session(served.port, &bob, &bobs[bobs.len() - 1]).0,
        200
    );
}

#[test]
fn sessions_belong_to_their_principal_and_the_audit_log_names_only_a_digest() {
    let auth = AuthServer::start();
    let dir = TempDir::new("oauth-audit");
    let log = dir.path().join("audit.jsonl");
    let served = serve(&auth, "", &["--audit-log", log.to_str().unwrap()]);
    let alice = token(&auth, "mcp tools:simple");
    let bob = token_for(&auth, "bob", "mcp tools:simple");
    let session = initialize(served.port, &alice);
    let in_session = |token: &str| call_in_session(served.port, token, &session);
    assert_eq!(in_session(&alice).0, 200);
    let (status, raw) = in_session(&bob);
    assert_eq!(
        status, 404,
        "another principal's token finds no such session: {raw}"
    );
    let (status, _) = http_request(
        served.port,
        "DELETE",
        "/mcp",
        &format!("Authorization: Bearer {bob}\r\nMcp-Session-Id: {session}\r\n"),
        "",
    );
    assert_eq!(status, 404, "nor may it end it");
    assert_eq!(in_session(&alice).0, 200);
    drop(served);
    let text = std::fs::read_to_string(&log).unwrap();
    let digest = agentteams_mcp::sha256::hex_digest(format!("{}\nalice", auth.issuer).as_bytes());
    assert!(
        text.contains(&format!("\"principal\":\"sha256:{}\"", &digest[..32])),
        "{text}"
    );
    assert!(
        !text.contains(&alice) && !text.contains("alice") && !text.contains(&bob),
        "{text}"
    );
}

#[test]
fn configuration_errors_stop_the_start_naming_the_field() {
    let dir = TempDir::new("oauth-config");
    let path = dir.path().join("auth.json");
    let run = |text: &str, extra: &[&str]| {
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(common::fixtures())
            .args([
                "--serve-mcp",
                "conformance",
                "--http",
                "--port",
                "0",
                "--auth-config",
            ])
            .arg(&path)
            .args(extra)
            .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(
        r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://127.0.0.1:1"}], "scopes": {"tool": {}}}"#,
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("auth config: scopes.tool: unknown member"),
        "{stderr}"
    );
    let (code, stderr) = run("{", &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("is not valid JSON"), "{stderr}");
    let valid = r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://127.0.0.1:1"}]}"#;
    let (code, stderr) = run(valid, &["--legacy-sse"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--legacy-sse is not served in OAuth mode"),
        "{stderr}"
    );
    std::fs::write(dir.path().join("t"), "0123456789abcdef0123").unwrap();
    let token_file = dir.path().join("t");
    let (code, stderr) = run(valid, &["--auth-token-file", token_file.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("give one"), "{stderr}");
}

#[test]
fn the_policy_file_maps_scopes_beside_the_auth_configuration() {
    let auth = AuthServer::start();
    let dir = TempDir::new("oauth-policy");
    let policy = dir.path().join("policy.json");
    // The policy file asks one more scope for one tool than the configuration does.
    std::fs::write(
        &policy,
        r#"{"allow": ["test_*"], "scopes": {"tools": {"test_image_content": ["images"]}}}"#,
    )
    .unwrap();
    let served = serve(
        &auth,
        "",
        &["--stateless", "--policy", policy.to_str().unwrap()],
    );
    let image = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"test_image_content","arguments":{}}}"#;
    let reply = post(served.port, &token(&auth, "mcp"), image);
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert!(
        reply
            .challenge
            .contains("scope=\"mcp images\", error=\"insufficient_scope\""),
        "{}",
        reply.challenge
    );
    let reply = post(served.port, &token(&auth, "mcp images"), image);
    assert_eq!(reply.status, 200, "{}", reply.body);
    // The configuration's own rules still apply beside the policy's.
    let reply = post(served.port, &token(&auth, "mcp images"), CALL_SIMPLE);
    assert_eq!(reply.status, 403, "{}", reply.body);

    // Scopes without a resource server to check them, and malformed ones, stop the start.
    let start = |policy_text: &str, oauth: bool| {
        std::fs::write(&policy, policy_text).unwrap();
        let config = dir.path().join("auth.json");
        std::fs::write(
            &config,
            r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://127.0.0.1:1"}]}"#,
        )
        .unwrap();
        let mut command = std::process::Command::new(common::fixtures());
        command.args([
            "--serve-mcp",
            "conformance",
            "--http",
            "--port",
            "0",
            "--policy",
        ]);
        command.arg(&policy);
        if oauth {
            command.arg("--auth-config").arg(&config);
        }
        let out = command
            .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = start(r#"{"scopes": {"tools": {"x": ["s"]}}}"#, false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("only an OAuth resource server checks: add --auth-config FILE"),
        "{stderr}"
    );
    let (code, stderr) = start(r#"{"scopes": {"tools": {"x": "s"}}}"#, true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("scopes.tools.x: must be an array"),
        "{stderr}"
    );
    let (code, stderr) = start(r#"{"scopes": ["s"]}"#, true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("\"scopes\" must be an object"), "{stderr}");
}
