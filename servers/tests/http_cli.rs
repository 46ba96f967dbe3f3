//! `--http` through the real binary: it serves the conformance fixture on the address it prints,
//! takes its token from a file or the environment (never argv), and refuses unsafe setups.

mod common;

use common::http_post;
use std::process::{Command, Stdio};

const TOKEN: &str = "binary-test-token-0123456789";

use common::HttpServer as Server;

/// Starts the fixture on a free port; returns the process and the port it printed.
fn serve(extra: &[&str], env_token: Option<&str>) -> (Server, u16) {
    serve_with_stdin(extra, env_token, Stdio::null())
}

fn serve_with_stdin(extra: &[&str], env_token: Option<&str>, stdin: Stdio) -> (Server, u16) {
    common::serve_http(extra, env_token, stdin)
}

/// POSTs an initialize request; returns the status code and the whole response.
fn initialize(port: u16, auth: Option<&str>) -> (u16, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let auth = auth.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    http_post(port, &auth, body)
}

#[test]
fn serves_the_fixture_over_http_on_the_printed_address() {
    let (_server, port) = serve(&[], None);
    let (status, reply) = initialize(port, None);
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains("Mcp-Session-Id: "));
    assert!(reply.contains("\"name\":\"agentteams-conformance\""));
}

#[test]
fn the_token_comes_from_a_file_or_the_environment() {
    let file = std::env::temp_dir().join(format!("agentteams-http-token-{}", std::process::id()));
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    // A token file group or others may read is refused like a session key file.
    let mode = |m: u32| std::os::unix::fs::PermissionsExt::from_mode(m);
    std::fs::set_permissions(&file, mode(0o640)).unwrap();
    let o = Command::new(common::fixtures())
        .args(["--serve-mcp", "conformance", "--http", "--port", "0"])
        .args(["--auth-token-file", file.to_str().unwrap()])
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("readable or writable by group or others (mode 640); run chmod 600"),
        "{err}"
    );
    std::fs::set_permissions(&file, mode(0o600)).unwrap();
    let (_server, port) = serve(&["--auth-token-file", file.to_str().unwrap()], None);
    assert_eq!(initialize(port, None).0, 401);
    assert_eq!(initialize(port, Some(TOKEN)).0, 200);
    std::fs::remove_file(&file).unwrap();

    let (_server, port) = serve(&[], Some(TOKEN));
    assert_eq!(initialize(port, Some("wrong-token-0123456789")).0, 401);
    assert_eq!(initialize(port, Some(TOKEN)).0, 200);
}

#[test]
fn unsafe_or_malformed_http_setups_exit_2() {
    let run = |args: &[&str]| {
        Command::new(common::fixtures())
            .args(args)
            .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
            .output()
            .unwrap()
    };
    let cases: [(&[&str], &str); 7] = [
        (
            &[
                "--serve-mcp",
                "conformance",
                "--http",
                "--bind",
                "0.0.0.0",
                "--port",
                "0",
            ],
            "without an auth token",
        ),
        (
            &["--serve-mcp", "conformance", "--port", "7330"],
            "HTTP options need --http",
        ),
        (
            &["--serve-mcp", "conformance", "--http", "--port", "http"],
            "--port needs a number",
        ),
        (
            &[
                "--serve-mcp",
                "conformance",
                "--http",
                "--auth-token-file",
                "/nonexistent/token",
            ],
            "--auth-token-file",
        ),
        (
            &[
                "--serve-mcp",
                "conformance",
                "--http",
                "--replica-name",
                "r.1",
            ],
            "--replica-name needs 1 to 32 of A-Z a-z 0-9 _ -",
        ),
        (
            &["--serve-mcp", "conformance", "--replica-name", "r1"],
            "HTTP options need --http",
        ),
        (
            &[
                "--serve-mcp",
                "conformance",
                "--http",
                "--legacy-sse",
                "--stateless",
            ],
            "--legacy-sse keeps a session per stream",
        ),
    ];
    for (args, message) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

/// Runs the binary with `args`; its exit code and stderr, or a failure if it is still running
/// after 20 s (a start that blocks on a file, ended here).
fn start_within_a_bound(args: &[&str]) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(args)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still starting after 20 s (blocked on a file)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), err)
}

#[test]
fn key_and_config_files_that_are_fifos_devices_or_too_deep_stop_the_start_with_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("agentteams-http-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    // A FIFO nobody writes to: opening it for reading would wait for ever.
    let fifo = path("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let zero = path("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o600)).unwrap();
        path(name)
    };
    let resource = r#""resource": "https://m.example/mcp""#;
    let jwks_fifo = write(
        "jwks-fifo.json",
        &format!(
            r#"{{{resource}, "authorization_servers": [{{"issuer": "https://as.example", "jwks_file": "fifo"}}]}}"#
        ),
    );
    let secret_fifo = write(
        "secret-fifo.json",
        &format!(
            r#"{{{resource}, "authorization_servers": [{{"issuer": "https://as.example", "jwks_uri": "http://127.0.0.1:1/jwks"}}], "introspection": {{"endpoint": "http://127.0.0.1:1/i", "client_id": "rs", "client_secret_file": "fifo"}}}}"#
        ),
    );
    let deep = write("deep.json", &"[".repeat(100_000));
    let key = write("key", &"ab".repeat(32));
    let serve = ["--serve-mcp", "conformance", "--http", "--port", "0"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--auth-config", &fifo], "not a regular file"),
        (vec!["--auth-config", &zero], "not a regular file"),
        (vec!["--auth-config", &jwks_fifo], "not a regular file"),
        (vec!["--auth-config", &secret_fifo], "not a regular file"),
        (vec!["--auth-config", &deep], "nest"),
        (vec!["--session-key-file", &fifo], "not a regular file"),
        (vec!["--session-key-file", &zero], "not a regular file"),
        (
            vec![
                "--session-key-file",
                &key,
                "--previous-session-key-file",
                &fifo,
            ],
            "not a regular file",
        ),
    ];
    for (extra, message) in cases {
        let args: Vec<&str> = serve.iter().copied().chain(extra.iter().copied()).collect();
        let (code, err) = start_within_a_bound(&args);
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert!(err.contains(message), "{extra:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{extra:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn closing_stdin_stops_the_server_and_completes_its_audit_run() {
    let log = std::env::temp_dir().join(format!(
        "agentteams-http-audit-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let (mut server, port) = serve_with_stdin(
        &["--audit-log", log.to_str().unwrap(), "--until-stdin-closes"],
        None,
        Stdio::piped(),
    );
    let (status, reply) = initialize(port, None);
    assert_eq!(status, 200, "{reply}");
    let session = reply
        .lines()
        .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
        .expect("a session id")
        .trim()
        .to_owned();
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}"#;
    let (status, reply) = http_post(port, &headers, call);
    assert_eq!(status, 200, "{reply}");

    drop(server.0.stdin.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not stop"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let verify = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["audit", "verify", log.to_str().unwrap(), "--ci"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verify.stdout).into_owned();
    assert_eq!(verify.status.code(), Some(0), "{text}");
    let records = std::fs::read_to_string(&log).unwrap();
    assert!(records.contains("\"run_completed\""), "{records}");
    assert!(records.contains("\"tool_call_completed\""), "{records}");
    std::fs::remove_file(&log).unwrap();
}

#[test]
fn until_stdin_closes_needs_http() {
    let out = Command::new(common::fixtures())
        .args(["--serve-mcp", "conformance", "--until-stdin-closes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--until-stdin-closes needs --http"));
}

#[test]
fn a_port_in_use_names_the_address_and_suggests_port() {
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let o = Command::new(common::fixtures())
        .args(["--serve-mcp", "conformance", "--http", "--port"])
        .arg(port.to_string())
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "agentteams-mcp: cannot listen on 127.0.0.1:{port}: Address already in use (os error 98); \
             another program is listening there: choose another port with --port N \
             (--port 0 takes any free one)\n"
        )
    );
}

#[test]
fn a_refused_host_names_allow_host_in_the_answer_and_once_per_name_on_stderr() {
    use std::io::BufRead;
    let (mut server, port) = serve(&["--bind", "localhost"], None);
    let ask = |host: &str| {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: 2\r\n\r\n{{}}"
        )
        .unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        let status: u16 = reply.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
        (status, reply)
    };
    for host in [
        "mcp.example.com:443",
        "mcp.example.com:443",
        "evil\u{202e}.test",
    ] {
        let (status, reply) = ask(host);
        assert_eq!(status, 403, "{reply}");
        assert!(reply.contains("--allow-host"), "{reply}");
    }
    // `--bind localhost` resolved to a loopback address: a local request is served.
    let (status, reply) = initialize(port, None);
    assert_eq!(status, 200, "{reply}");
    drop(server.0.kill());
    let mut lines = Vec::new();
    let mut line = String::new();
    while server.1.read_line(&mut line).unwrap_or(0) > 0 {
        lines.push(std::mem::take(&mut line));
    }
    let refusals: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("refused Host"))
        .collect();
    assert_eq!(refusals.len(), 2, "{lines:?}");
    assert!(
        refusals[0].contains("--allow-host mcp.example.com "),
        "{}",
        refusals[0]
    );
    assert!(refusals[1].contains("\\u{202e}"), "{}", refusals[1]);
}
