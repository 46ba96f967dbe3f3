//! `agentteams-mcp client` over https, through the binary: the system's openssl as the TLS helper,
//! stunnel with throwaway certificates in front of the product's own `--http` server or of a
//! recording backend. A good certificate carries calls; expired, self-signed, wrong-host and
//! unknown-CA certificates are refused with one line and exit 4 before a byte of the request
//! reaches the server; a stalled handshake and a dripping answer are cut at their timeouts; a
//! helper killed mid-request ends the call; the token never appears on a command line; no helper
//! outlives the client.
//!
//! Skipped, saying why, where openssl or stunnel is missing (CI installs stunnel4).

mod common;
mod tls_support;

use common::{serve_http, stderr, stdout};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tls_support::{processes_with, Backend, Behaviour, Pki, Tools, Tunnel};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// Longest a test waits for something it polls for (a helper process to appear or go).
const POLL_LIMIT: Duration = Duration::from_secs(20);

fn client(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("client")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn all(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    )
}

/// The helpers connected to `port` that are alive now.
fn helpers_for(port: u16) -> Vec<(u32, String)> {
    processes_with(&format!("s_client -connect localhost:{port} "))
}

/// Waits until `check` holds, polling; panics with `what` past [`POLL_LIMIT`].
fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < POLL_LIMIT, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_verified_server_carries_calls_and_bad_certificates_are_refused_before_the_request() {
    let Some(tools) = Tools::find("client_https") else {
        return;
    };
    let pki = Pki::make(&tools);
    let (_server, server_port) = serve_http(&[], None, Stdio::null());
    let recorder = Backend::start(Behaviour::Stall(Duration::from_secs(1)));
    let mut services = vec![("good", server_port)];
    for cert in ["expired", "wrong-host", "unknown-ca", "self-signed"] {
        services.push((cert, recorder.port));
    }
    let tunnel = Tunnel::start(&tools, &pki, &services);
    let ca = pki.ca();
    let ca = ca.to_str().unwrap();

    // A good certificate: the calls go through, on one connection for the whole session.
    let url = format!("https://localhost:{}/mcp", tunnel.port("good"));
    let o = client(&["--url", &url, "--ca-file", ca, "call", "test_simple_text"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(
        stdout(&o).contains("This is a simple text response"),
        "{}",
        all(&o)
    );
    // Probe, initialize, initialized, the call and the closing DELETE: one TLS connection.
    assert_eq!(tunnel.accepted("good"), 1, "{}", tunnel.log());
    let o = client(&["--url", &url, "--ca-file", ca, "tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert!(stdout(&o).contains("test_simple_text"), "{}", all(&o));
    // An address literal is checked against the certificate's IP entry.
    let by_ip = format!("https://127.0.0.1:{}/mcp", tunnel.port("good"));
    let o = client(&["--url", &by_ip, "--ca-file", ca, "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));

    // Streams over https: an SSE reply with progress notifications, one the server breaks off
    // and the client resumes with Last-Event-ID, and one carrying a request the client answers.
    let streams: [(&str, &[&str], &str); 3] = [
        (
            "test_tool_with_progress",
            &["--log-level", "debug"],
            "progress: 50/100",
        ),
        ("test_reconnection", &[], ""),
        (
            "test_elicitation",
            &["--answer-defaults", "--arg", "message=hi"],
            "",
        ),
    ];
    for (tool, extra, said) in streams {
        let mut args = vec![
            "--url",
            &url,
            "--ca-file",
            ca,
            "--era",
            "legacy",
            "call",
            tool,
        ];
        args.extend_from_slice(extra);
        let o = client(&args);
        assert_eq!(o.status.code(), Some(0), "{tool}: {}", all(&o));
        assert!(all(&o).contains(said), "{tool}: {}", all(&o));
    }

    // The same certificate without --ca-file: the system's store does not know the test CA.
    let o = client(&["--url", &url, "info"]);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    assert!(stderr(&o).contains("issuer is unknown"), "{}", all(&o));

    for (cert, reason) in [
        ("expired", "it has expired"),
        ("wrong-host", "it is for another host (wrong host)"),
        ("unknown-ca", "its issuer is unknown"),
        ("self-signed", "it is self-signed"),
    ] {
        let url = format!("https://localhost:{}/mcp", tunnel.port(cert));
        let o = client(&["--url", &url, "--ca-file", ca, "info"]);
        assert_eq!(o.status.code(), Some(4), "{cert}: {}", all(&o));
        let text = stderr(&o);
        assert_eq!(text.lines().count(), 1, "{cert}: one line: {text}");
        assert!(
            text.contains("the server's certificate was refused") && text.contains(reason),
            "{cert}: {text}"
        );
        assert!(
            helpers_for(tunnel.port(cert)).is_empty(),
            "{cert}: a helper survived"
        );
    }
    // stunnel opens the backend connection only after a finished handshake: the refused
    // certificates' backend never saw a connection, let alone a byte of a request.
    assert_eq!(recorder.received().len(), 0, "{:?}", recorder.received());
    assert!(tunnel.accepted("expired") >= 1, "{}", tunnel.log());
    assert!(helpers_for(tunnel.port("good")).is_empty());
}

#[test]
fn a_stalled_handshake_and_a_dripping_answer_end_at_their_timeouts() {
    let Some(tools) = Tools::find("client_https") else {
        return;
    };
    // A TCP listener that accepts and never says a word: the handshake never finishes.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("https://localhost:{port}/mcp");
    let o = client(&["--url", &url, "--connect-timeout", "1", "info"]);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    assert!(
        stderr(&o).contains("no TLS handshake within 1.0 s"),
        "{}",
        all(&o)
    );
    assert!(helpers_for(port).is_empty(), "the stalled helper survived");
    drop(silent);

    let pki = Pki::make(&tools);
    let drip = Backend::start(Behaviour::Drip);
    let tunnel = Tunnel::start(&tools, &pki, &[("good", drip.port)]);
    let url = format!("https://localhost:{}/mcp", tunnel.port("good"));
    let ca = pki.ca();
    let o = client(&[
        "--url",
        &url,
        "--ca-file",
        ca.to_str().unwrap(),
        "--era",
        "legacy",
        "--timeout",
        "2",
        "info",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    assert!(
        stderr(&o).contains("no answer to initialize"),
        "{}",
        all(&o)
    );
    assert!(helpers_for(tunnel.port("good")).is_empty());
}

#[test]
fn the_token_travels_only_inside_the_stream_and_the_helper_gets_no_environment() {
    let Some(tools) = Tools::find("client_https") else {
        return;
    };
    let pki = Pki::make(&tools);
    let backend = Backend::start(Behaviour::Stall(Duration::from_secs(30)));
    let tunnel = Tunnel::start(&tools, &pki, &[("good", backend.port)]);
    let port = tunnel.port("good");
    let url = format!("https://localhost:{port}/mcp");
    let token = format!("secret-token-{}", std::process::id());
    let ca = pki.ca();
    let mut child = Command::new(BIN)
        .args(["client", "--url", &url, "--ca-file", ca.to_str().unwrap()])
        .args([
            "--token-env",
            "MCP_TEST_TOKEN",
            "--era",
            "legacy",
            "--timeout",
            "60",
        ])
        .args(["info"])
        .env("MCP_TEST_TOKEN", &token)
        .env("SSL_CERT_FILE", "/nonexistent/certs.pem")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = tls_support::collect(child.stderr.take().unwrap());

    // While the request waits for its answer: the server holds the token, and no process on
    // the machine has it on its command line; the helper's environment is empty.
    wait_for("the token never reached the server", || {
        backend
            .received()
            .iter()
            .any(|c| String::from_utf8_lossy(c).contains(&format!("Bearer {token}")))
    });
    assert!(
        processes_with(&token).is_empty(),
        "{:?}",
        processes_with(&token)
    );
    let helpers = helpers_for(port);
    assert_eq!(helpers.len(), 1, "{helpers:?}");
    let (pid, line) = &helpers[0];
    assert!(
        line.starts_with('/'),
        "the helper runs by absolute path: {line}"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(environ.is_empty(), "{}", String::from_utf8_lossy(&environ));
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
    assert_eq!(cwd, std::path::Path::new("/"));

    // The helper is killed in the middle of the exchange: the call ends, reported as a dropped
    // connection (not a timeout), and nothing is left behind.
    let killed = Command::new("/bin/kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    // The client has exited: its stderr is at its end once the reader has seen it all.
    let text = err.finished();
    assert_eq!(status.code(), Some(4), "{text}");
    assert!(
        text.contains("closed the connection without answering initialize"),
        "{text}"
    );
    wait_for("a helper outlived the client", || {
        helpers_for(port).is_empty()
    });
}

#[test]
fn https_without_a_usable_helper_is_one_line_and_http_keeps_working() {
    let o = client(&[
        "--url",
        "https://localhost:9/mcp",
        "--tls-helper",
        "/nonexistent/openssl",
        "info",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", all(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", all(&o));
    assert!(
        stderr(&o).contains("the TLS helper /nonexistent/openssl is not a file"),
        "{}",
        all(&o)
    );
    let o = client(&[
        "--url",
        "https://localhost:9/mcp",
        "--tls-helper",
        "openssl",
        "info",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(
        stderr(&o).contains("must be an absolute path"),
        "{}",
        all(&o)
    );
    let o = Command::new(BIN)
        .args(["client", "--url", "https://localhost:9/mcp", "info"])
        .env("AGENTTEAMS_TLS_HELPER", "relative/openssl")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all(&o));
    assert!(stderr(&o).contains("AGENTTEAMS_TLS_HELPER must be an absolute path"));

    // A helper that is not there does not matter to http.
    let (_server, port) = serve_http(&[], None, Stdio::null());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = client(&[
        "--url",
        &url,
        "--tls-helper",
        "/nonexistent/openssl",
        "tools",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}
