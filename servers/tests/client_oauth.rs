//! `agentteams-mcp client` logging in with OAuth, through the binary, against a small
//! authorization server and MCP server this test runs on one loopback port: the whole flow
//! (login, stored tokens, refresh, logout, the loopback redirect listener), and every way a
//! hostile server or authorization server tries to misdirect the login (wrong state, wrong
//! issuer, another resource, PKCE without S256, oversized bodies, redirects to other hosts,
//! endless step-up).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
mod tls_support;

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// What the fixture does wrong (all false: a well-behaved server).
#[derive(Clone, Default)]
struct Knobs {
    /// PRM names this resource instead of the server's.
    prm_resource: Option<String>,
    /// AS metadata claims this issuer instead of its own.
    issuer: Option<String>,
    /// AS metadata's `code_challenge_methods_supported`.
    pkce_methods: Option<Vec<&'static str>>,
    /// The authorization response carries this state instead of the client's.
    state: Option<String>,
    /// The authorization response carries this `iss`.
    iss: Option<String>,
    /// The authorization endpoint redirects here instead of to the client's redirect URI.
    redirect_to: Option<String>,
    /// PRM is this many bytes of JSON.
    huge_prm: Option<usize>,
    /// PRM answers with a redirect to another host.
    prm_redirect: bool,
    /// The token endpoint answers with this body.
    token_body: Option<String>,
    /// Every request with a token gets 403 insufficient_scope.
    always_insufficient: bool,
}

/// Everything the fixture saw and what it accepts.
#[derive(Default)]
struct State {
    knobs: Knobs,
    /// Access tokens the MCP endpoint accepts.
    valid: Vec<String>,
    issued: usize,
    /// `(method path, form or JSON body)` of every request.
    log: Vec<(String, String)>,
}

struct Fixture {
    url: String,
    state: Arc<Mutex<State>>,
    dir: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Fixture {
    fn start(name: &str, knobs: Knobs) -> Fixture {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        Fixture::serve_as(name, knobs, listener, origin)
    }

    /// A fixture on `listener` whose URLs (the MCP endpoint, PRM, metadata) all start with
    /// `origin`: a TLS proxy's https origin in front of it.
    fn serve_as(name: &str, knobs: Knobs, listener: TcpListener, origin: String) -> Fixture {
        let state = Arc::new(Mutex::new(State {
            knobs,
            ..State::default()
        }));
        let shared = state.clone();
        let base = origin.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (shared, base) = (shared.clone(), base.clone());
                std::thread::spawn(move || serve(stream, &base, &shared));
            }
        });
        let dir = std::env::temp_dir().join(format!("client-oauth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fixture {
            url: format!("{origin}/mcp"),
            state,
            dir,
        }
    }

    fn store(&self) -> PathBuf {
        self.dir.join("tokens.json")
    }

    /// `agentteams-mcp client --url URL --oauth --login-mode headless --token-store F <args>`.
    fn client(&self, args: &[&str]) -> Output {
        let store = self.store();
        let mut all = vec![
            "client",
            "--url",
            &self.url,
            "--login-mode",
            "headless",
            "--token-store",
            store.to_str().unwrap(),
            "--timeout",
            "20",
        ];
        all.extend_from_slice(args);
        Command::new(BIN).args(&all).output().unwrap()
    }

    fn requests(&self, prefix: &str) -> Vec<String> {
        let state = self.state.lock().unwrap();
        state
            .log
            .iter()
            .filter(|(what, _)| what.starts_with(prefix))
            .map(|(_, body)| body.clone())
            .collect()
    }
}

/// Answers one request as the MCP server, its PRM, or the authorization server.
fn serve(mut stream: TcpStream, base: &str, shared: &Mutex<State>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_owned())
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).into_owned();
    let mut line = head.lines().next().unwrap_or("").split(' ');
    let method = line.next().unwrap_or("").to_owned();
    let target = line.next().unwrap_or("").to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut state = shared.lock().unwrap();
    state
        .log
        .push((format!("{method} {path}"), format!("{query}{body}")));
    let knobs = state.knobs.clone();
    let prm_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let json = |status: u16, text: String| {
        (
            status,
            vec![("Content-Type", "application/json".to_owned())],
            text,
        )
    };
    let (status, headers, text) = match (method.as_str(), path) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => {
            if knobs.prm_redirect {
                (
                    302,
                    vec![("Location", "http://evil.example/prm".to_owned())],
                    String::new(),
                )
            } else if let Some(n) = knobs.huge_prm {
                json(200, format!("{{\"pad\":\"{}\"}}", "x".repeat(n)))
            } else {
                let resource = knobs.prm_resource.clone().unwrap_or(format!("{base}/mcp"));
                json(
                    200,
                    format!(
                        r#"{{"resource":"{resource}","authorization_servers":["{base}"],"scopes_supported":["mcp:read"]}}"#
                    ),
                )
            }
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let issuer = knobs.issuer.clone().unwrap_or(base.to_owned());
            let methods = knobs.pkce_methods.clone().unwrap_or(vec!["S256"]);
            let methods: Vec<String> = methods.iter().map(|m| format!("\"{m}\"")).collect();
            json(
                200,
                format!(
                    r#"{{"issuer":"{issuer}","authorization_endpoint":"{base}/authorize","token_endpoint":"{base}/token","registration_endpoint":"{base}/register","code_challenge_methods_supported":[{}],"token_endpoint_auth_methods_supported":["none"],"scopes_supported":["mcp:read","offline_access"]}}"#,
                    methods.join(",")
                ),
            )
        }
        ("POST", "/register") => json(201, r#"{"client_id":"registered-client"}"#.to_owned()),
        ("GET", "/authorize") => {
            let param = |k: &str| {
                query
                    .split('&')
                    .find_map(|p| p.strip_prefix(&format!("{k}=")))
                    .map(|v| v.replace("%3A", ":").replace("%2F", "/"))
                    .unwrap_or_default()
            };
            let redirect = knobs.redirect_to.clone().unwrap_or(param("redirect_uri"));
            let state_value = knobs.state.clone().unwrap_or(param("state"));
            let iss = knobs
                .iss
                .as_ref()
                .map(|i| format!("&iss={i}"))
                .unwrap_or_default();
            (
                302,
                vec![(
                    "Location",
                    format!("{redirect}?code=the-code&state={state_value}{iss}"),
                )],
                String::new(),
            )
        }
        ("POST", "/token") => match knobs.token_body.clone() {
            Some(text) => json(200, text),
            None => {
                state.issued += 1;
                let access = format!("access-{}", state.issued);
                state.valid = vec![access.clone()];
                json(
                    200,
                    format!(
                        r#"{{"access_token":"{access}","token_type":"Bearer","expires_in":3600,"refresh_token":"refresh-{}","scope":"mcp:read"}}"#,
                        state.issued
                    ),
                )
            }
        },
        ("POST", "/mcp") => {
            let token =
                header("authorization").and_then(|a| a.strip_prefix("Bearer ").map(str::to_owned));
            let challenge = format!(r#"Bearer resource_metadata="{prm_url}", scope="mcp:read""#);
            match token {
                Some(t) if state.valid.contains(&t) && knobs.always_insufficient => (
                    403,
                    vec![(
                        "WWW-Authenticate",
                        format!(
                            r#"Bearer error="insufficient_scope", scope="mcp:admin", resource_metadata="{prm_url}""#
                        ),
                    )],
                    String::new(),
                ),
                Some(t) if state.valid.contains(&t) => mcp_answer(&body),
                _ => (401, vec![("WWW-Authenticate", challenge)], String::new()),
            }
        }
        ("DELETE", "/mcp") => (200, vec![], String::new()),
        _ => (404, vec![], "not found".to_owned()),
    };
    drop(state);
    let mut reply = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        text.len()
    );
    for (k, v) in headers {
        reply.push_str(&format!("{k}: {v}\r\n"));
    }
    reply.push_str("\r\n");
    reply.push_str(&text);
    let _ = stream.write_all(reply.as_bytes());
}

/// A minimal legacy MCP server: initialize, tools/list, tools/call; anything else -32601.
fn mcp_answer(body: &str) -> (u16, Vec<(&'static str, String)>, String) {
    let json = |t: String| {
        (
            200,
            vec![("Content-Type", "application/json".to_owned())],
            t,
        )
    };
    let id = body
        .split("\"id\":")
        .nth(1)
        .and_then(|r| r.split([',', '}']).next())
        .unwrap_or("null")
        .to_owned();
    if body.contains("\"notifications/") {
        return (202, vec![], String::new());
    }
    if body.contains("\"initialize\"") {
        return json(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"oauth-fixture","version":"1"}}}}}}"#
        ));
    }
    if body.contains("\"tools/call\"") {
        return json(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"called"}}]}}}}"#
        ));
    }
    json(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#
    ))
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[track_caller]
fn assert_refused(o: &Output, needle: &str) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(3), "{all}");
    assert!(all.contains(needle), "expected {needle:?} in:\n{all}");
}

/// Starts a fixture that misbehaves as `knobs` says, checks that `client --oauth info` against it
/// is refused with `needle` and that the client never sent a request starting with one of
/// `never_sent` (the refusal came before it), and hands the fixture back for further checks.
#[track_caller]
fn info_refused(name: &str, knobs: Knobs, needle: &str, never_sent: &[&str]) -> Fixture {
    let f = Fixture::start(name, knobs);
    assert_refused(&f.client(&["--oauth", "info"]), needle);
    for prefix in never_sent {
        assert!(f.requests(prefix).is_empty(), "{prefix} was sent");
    }
    f
}

#[test]
fn login_stores_an_owner_only_token_refreshes_it_and_logout_deletes_it() {
    let f = Fixture::start("flow", Knobs::default());
    let o = f.client(&["login"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("logged in to "), "{}", text(&o));
    let stored = std::fs::read_to_string(f.store()).unwrap();
    assert!(stored.contains("access-1") && stored.contains("refresh-1"));
    assert_eq!(
        std::fs::metadata(f.store()).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(
        !text(&o).contains("access-1") && !text(&o).contains("refresh-1"),
        "a token was printed"
    );

    // The authorization request had PKCE S256, the resource and the scope (plus offline_access,
    // which the authorization server lists); the token request had the verifier.
    let authorize = f.requests("GET /authorize").remove(0);
    for part in [
        "code_challenge_method=S256",
        "resource=http%3A%2F%2F127.0.0.1",
        "scope=mcp%3Aread%20offline_access",
    ] {
        assert!(authorize.contains(part), "{part} missing from {authorize}");
    }
    let token = f.requests("POST /token").remove(0);
    assert!(
        token.contains("code_verifier=") && token.contains("resource="),
        "{token}"
    );

    // The server forgets the token: the next call refreshes it (no second login).
    f.state.lock().unwrap().valid.clear();
    let o = f.client(&["--oauth", "call", "anything"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tokens = f.requests("POST /token");
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    assert!(
        tokens[1].contains("grant_type=refresh_token")
            && tokens[1].contains("refresh_token=refresh-1")
    );
    assert_eq!(f.requests("GET /authorize").len(), 1);
    assert!(std::fs::read_to_string(f.store())
        .unwrap()
        .contains("access-2"));

    let o = f.client(&["logout"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stored = std::fs::read_to_string(f.store()).unwrap();
    assert!(
        !stored.contains("access-2") && !stored.contains("refresh"),
        "{stored}"
    );
    assert!(text(&f.client(&["logout"])).contains("no stored login"));
}

#[test]
fn a_token_store_others_can_read_is_refused() {
    let f = Fixture::start("perm", Knobs::default());
    std::fs::write(f.store(), r#"{"version":1,"entries":[]}"#).unwrap();
    std::fs::set_permissions(f.store(), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_refused(&f.client(&["--oauth", "info"]), "chmod 600");
}

#[test]
fn a_browser_login_comes_back_through_the_loopback_listener() {
    let f = Fixture::start("browser", Knobs::default());
    let store = f.store();
    let mut child = Command::new(BIN)
        .args([
            "client",
            "--url",
            &f.url,
            "--login-mode",
            "browser",
            "--token-store",
        ])
        .arg(&store)
        .args(["--login-timeout", "20", "info"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Play the browser: read the URL the client prints, follow the authorization server's
    // redirect to the loopback listener.
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let url = loop {
        let mut byte = [0u8; 1];
        assert_eq!(stderr.read(&mut byte).unwrap(), 1, "no URL printed: {seen}");
        seen.push(byte[0] as char);
        if let Some(line) = seen
            .lines()
            .find(|l| l.starts_with("http://") && seen.ends_with('\n'))
        {
            break line.to_owned();
        }
    };
    let location = http_get(&url, "location").expect("the authorization server redirects");
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let page = http_get(&location, "").unwrap();
    assert!(page.contains("Logged in"), "{page}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(std::fs::read_to_string(&store)
        .unwrap()
        .contains("access-1"));
}

/// GETs `url`; returns the named header's value, or the body when `header` is empty.
fn http_get(url: &str, header: &str) -> Option<String> {
    let rest = url.strip_prefix("http://")?;
    let (host, target) = rest.split_at(rest.find('/')?);
    let mut s = TcpStream::connect(host).ok()?;
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    if header.is_empty() {
        return reply.split("\r\n\r\n").nth(1).map(str::to_owned);
    }
    reply
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case(header))
        })
        .map(|(_, v)| v.trim().to_owned())
}

#[test]
fn an_authorization_response_with_another_state_is_refused() {
    info_refused(
        "state",
        Knobs {
            state: Some("forged".into()),
            ..Knobs::default()
        },
        "another login's state",
        &["POST /token"],
    );
}

#[test]
fn metadata_claiming_another_issuer_is_refused() {
    info_refused(
        "issuer",
        Knobs {
            issuer: Some("http://evil.example".into()),
            ..Knobs::default()
        },
        "mix-up defence",
        &["GET /authorize"],
    );
}

#[test]
fn an_authorization_response_from_another_issuer_is_refused() {
    info_refused(
        "iss",
        Knobs {
            iss: Some("http%3A%2F%2Fevil.example".into()),
            ..Knobs::default()
        },
        "RFC 9207",
        &["POST /token"],
    );
}

#[test]
fn metadata_for_another_resource_is_refused_before_authorization() {
    info_refused(
        "resource",
        Knobs {
            prm_resource: Some("https://evil.example.com/mcp".into()),
            ..Knobs::default()
        },
        "not for this server",
        &["GET /authorize", "POST /register"],
    );
}

#[test]
fn an_authorization_server_without_s256_is_refused() {
    for methods in [vec!["plain"], vec![]] {
        info_refused(
            "pkce",
            Knobs {
                pkce_methods: Some(methods),
                ..Knobs::default()
            },
            "PKCE S256",
            &["GET /authorize"],
        );
    }
}

#[test]
fn oversized_and_malformed_answers_are_errors_not_crashes() {
    let huge_prm = Knobs {
        huge_prm: Some(1024 * 1024),
        ..Knobs::default()
    };
    let token_body = |body: &str| Knobs {
        token_body: Some(body.into()),
        ..Knobs::default()
    };
    for (name, knobs, needle) in [
        ("huge", huge_prm, "larger than 262144 bytes"),
        (
            "badjson",
            token_body("{\"access_token\": "),
            "token response",
        ),
        (
            "badtoken",
            token_body(r#"{"access_token":"has space","token_type":"Bearer"}"#),
            "visible ASCII",
        ),
    ] {
        info_refused(name, knobs, needle, &[]);
    }
}

#[test]
fn redirects_to_other_hosts_are_not_followed() {
    info_refused(
        "redirect",
        Knobs {
            redirect_to: Some("http://evil.example/callback".into()),
            ..Knobs::default()
        },
        "refusing to follow",
        &["POST /token"],
    );

    info_refused(
        "prm-redirect",
        Knobs {
            prm_redirect: true,
            ..Knobs::default()
        },
        "redirects are not followed",
        &[],
    );
}

#[test]
fn step_up_stops_after_its_retry_limit() {
    let f = info_refused(
        "stepup",
        Knobs {
            always_insufficient: true,
            ..Knobs::default()
        },
        "step-up authorizations",
        &[],
    );
    let logins = f.requests("GET /authorize");
    assert_eq!(logins.len(), 3, "one login and two step-ups");
    assert!(logins[1].contains("mcp%3Aadmin"), "{}", logins[1]);
}

#[test]
fn without_oauth_a_401_is_reported_as_before() {
    let f = Fixture::start("plain", Knobs::default());
    let o = Command::new(BIN)
        .args(["client", "--url", &f.url, "info"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("server requires authorization (HTTP 401"));
    assert!(f.requests("GET /.well-known").is_empty());
}

#[test]
fn bad_oauth_options_are_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--url", "http://127.0.0.1:9/mcp", "--grant", "nope", "info"],
            "--grant must be",
        ),
        (
            &[
                "--url",
                "http://127.0.0.1:9/mcp",
                "--client-secret-env",
                "HOME",
                "info",
            ],
            "needs --client-id",
        ),
        (
            &[
                "--url",
                "http://127.0.0.1:9/mcp",
                "--client-metadata-url",
                "http://x/m.json",
                "info",
            ],
            "must be an https URL",
        ),
        (
            &["--oauth", "info", "--", "true"],
            "OAuth options go with --url",
        ),
        (&["logout", "--", "true"], "login and logout need --url"),
    ];
    for (args, needle) in cases {
        let o = Command::new(BIN).arg("client").args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(needle), "{args:?}: {}", text(&o));
    }
}

#[test]
fn a_token_about_to_expire_is_refreshed_before_it_is_sent() {
    let f = Fixture::start("expiry", Knobs::default());
    let o = f.client(&["login"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Age the stored login: its token expired long ago (the server still takes it, so only the
    // client's own clock can cause the refresh).
    let stored = std::fs::read_to_string(f.store()).unwrap();
    let aged = stored.replace("\"expires_at\":", "\"expires_at\":1,\"was\":");
    std::fs::write(f.store(), aged).unwrap();
    let before = f.state.lock().unwrap().log.len();
    let o = f.client(&["--oauth", "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let log: Vec<String> = f.state.lock().unwrap().log[before..]
        .iter()
        .map(|(what, _)| what.clone())
        .collect();
    assert_eq!(log[0], "POST /token", "the refresh comes first: {log:?}");
    assert!(f.requests("POST /token")[1].contains("grant_type=refresh_token"));
    assert_eq!(f.requests("GET /authorize").len(), 1);
}

#[test]
fn a_browser_login_starts_the_browser_named_by_the_browser_variable() {
    let f = Fixture::start("browser-var", Knobs::default());
    // The "browser" writes the URL it is given where the test can read it.
    let seen = f.dir.join("url");
    let browser = f.dir.join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {}.tmp && mv {0}.tmp {0}\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = Command::new(BIN)
        .args([
            "client",
            "--url",
            &f.url,
            "--login-mode",
            "browser",
            "--token-store",
        ])
        .arg(f.store())
        .args(["--login-timeout", "20", "info"])
        .env("BROWSER", &browser)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = None;
    for _ in 0..400 {
        if let Ok(u) = std::fs::read_to_string(&seen) {
            url = Some(u);
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let url = url.expect("the browser was started with the URL");
    assert!(url.contains("/authorize?response_type=code"), "{url}");
    let location = http_get(&url, "location").unwrap();
    assert!(http_get(&location, "").unwrap().contains("Logged in"));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn the_whole_login_works_against_https_servers() {
    let Some(tools) = tls_support::Tools::find("client_oauth over https") else {
        return;
    };
    let pki = tls_support::Pki::make(&tools);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let backend = listener.local_addr().unwrap().port();
    let port = tls_support::free_port();
    let f = Fixture::serve_as(
        "https",
        Knobs::default(),
        listener,
        format!("https://localhost:{port}"),
    );
    let _tunnel = tls_support::Tunnel::start_on(&tools, &pki, &[("good", backend, port)]);
    let ca = pki.ca();
    let ca = ca.to_str().unwrap();

    // Discovery (PRM, metadata), registration, authorization and token requests, then the call:
    // every one over https to the same TLS origin; only the redirect stays on 127.0.0.1.
    let o = f.client(&["--ca-file", ca, "--oauth", "call", "anything"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("called"), "{}", text(&o));
    let authorize = f.requests("GET /authorize").remove(0);
    assert!(
        authorize.contains(&format!("resource=https%3A%2F%2Flocalhost%3A{port}%2Fmcp"))
            && authorize.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"),
        "{authorize}"
    );
    for step in [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "POST /token",
    ] {
        assert_eq!(f.requests(step).len(), 1, "{step}");
    }

    // The refresh goes over https too.
    f.state.lock().unwrap().valid.clear();
    let o = f.client(&["--ca-file", ca, "--oauth", "call", "anything"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tokens = f.requests("POST /token");
    assert!(tokens[1].contains("grant_type=refresh_token"), "{tokens:?}");

    // Without the test CA the origin is not trusted: nothing at all is sent to it.
    f.state.lock().unwrap().valid.clear();
    let before = f.state.lock().unwrap().log.len();
    let o = f.client(&["--oauth", "call", "anything"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("issuer is unknown"), "{}", text(&o));
    assert_eq!(f.state.lock().unwrap().log.len(), before);
}
