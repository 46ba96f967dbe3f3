//! A minimal MCP host for end-to-end tests: starts the real binary and speaks newline-delimited
//! JSON-RPC over its stdio, the way Claude Code, Cursor or the Python SDK do.
#![allow(dead_code)] // each test file uses a different part of this helper

use agentteams_mcp::json::{self, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// The product's binary.
pub const PRODUCT: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// The servers only `agentteams-mcp-fixtures` offers.
pub const FIXTURE_SERVERS: [&str; 2] = ["conformance", "governed"];

/// `agentteams-mcp-fixtures`: the product's command line with the conformance and governed
/// fixtures, built beside the product by the workspace's `cargo test` (another package's binary
/// has no `CARGO_BIN_EXE_` here). A missing copy, or one older than a source file of the
/// workspace, fails the test with the command that builds it: no test runs the product's code as
/// it was before the last edit.
pub fn fixtures() -> std::path::PathBuf {
    static CHECKED: std::sync::OnceLock<Result<std::path::PathBuf, String>> =
        std::sync::OnceLock::new();
    let checked = CHECKED.get_or_init(|| {
        let fixtures = Path::new(PRODUCT).with_file_name("agentteams-mcp-fixtures");
        let build =
            "cargo build --offline -p agentteams-mcp-fixtures (cargo test --workspace builds it)";
        let built = std::fs::metadata(&fixtures)
            .and_then(|m| m.modified())
            .map_err(|_| format!("{} is missing: {build}", fixtures.display()))?;
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut folders: Vec<std::path::PathBuf> = ["src", "servers/src", "fixtures/src"]
            .iter()
            .map(|f| workspace.join(f))
            .collect();
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    folders.push(path);
                } else if meta.modified().is_ok_and(|m| m > built) {
                    return Err(format!(
                        "{} is older than {}: {build}",
                        fixtures.display(),
                        path.display()
                    ));
                }
            }
        }
        Ok(fixtures)
    });
    checked.clone().unwrap_or_else(|e| panic!("{e}"))
}

/// The binary that serves `server`: the fixtures' for a fixture, else the product.
pub fn binary_for(server: &str) -> std::path::PathBuf {
    match FIXTURE_SERVERS.contains(&server) {
        true => fixtures(),
        false => PRODUCT.into(),
    }
}

/// How long a test waits for one reply before it fails (a hang, not a performance check).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Host {
    /// Starts `agentteams-mcp --serve-mcp SERVER --root ROOT` with `extra` arguments.
    pub fn start(server: &str, root: &Path, extra: &[&str]) -> Host {
        let mut command = Command::new(binary_for(server));
        command
            .arg("--serve-mcp")
            .arg(server)
            .arg("--root")
            .arg(root)
            .args(extra);
        Host::spawn(command)
    }

    pub fn spawn(mut command: Command) -> Host {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Host {
            child,
            stdin,
            lines,
        }
    }

    /// Writes raw bytes (a line must end with `\n`).
    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    pub fn send(&mut self, message: &str) {
        self.write(format!("{message}\n").as_bytes());
    }

    /// The next line on stdout, parsed; fails the test if it is not JSON (stdout is protocol only).
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(REPLY_TIMEOUT)
            .expect("a reply within the timeout");
        json::parse(line.as_bytes())
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"))
    }

    /// Sends a request and returns its reply, skipping notifications that come first.
    pub fn request(&mut self, message: &str) -> Value {
        self.send(message);
        loop {
            let reply = self.recv();
            if reply.get("id").is_some() || reply.get("error").is_some() {
                return reply;
            }
        }
    }

    /// No line arrives within `wait` (for notifications and skipped lines).
    pub fn assert_silent(&mut self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("expected no output, got {line}");
        }
    }

    /// `initialize` with `version`, then `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, version: &str) -> Value {
        let reply = self.request(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"test-host","version":"1"}}}}}}"#
        ));
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        reply.get("result").cloned().expect("initialize succeeds")
    }

    /// `tools/call` and the result object.
    pub fn call(&mut self, tool: &str, arguments: &str) -> Value {
        let reply = self.request(&format!(
            r#"{{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        ));
        reply
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("no result: {reply}"))
    }

    /// Closes stdin (what hosts do first at shutdown) and waits for the exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + REPLY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a finished process wrote to stdout, as text.
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a finished process wrote to stderr, as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The text of a tool result's first content block, and whether it is an error.
pub fn result_text(result: &Value) -> (String, bool) {
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    (text, is_error)
}

/// The names of the tools a `tools/list` reply lists, in its order; panics on anything else.
pub fn listed_tool_names(reply: &Value) -> Vec<String> {
    reply
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("not a tools/list result: {reply}"))
        .iter()
        .map(|t| t.get("name").and_then(Value::as_str).unwrap().to_owned())
        .collect()
}

/// Runs the binary serving the `--serve-mcp` server `args` name ([`binary_for`]) with `args`, stdin closed, under an address-space limit of `kib` KiB
/// (`ulimit -v`) and killed after `secs` seconds (coreutils `timeout`), so a hang or an unbounded
/// read fails the test instead of stalling or exhausting the machine; returns its output and how
/// long it took.
pub fn run_limited<I, S>(kib: u64, secs: u32, args: I) -> (std::process::Output, Duration)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<S> = args.into_iter().collect();
    let named = args.windows(2).find(|w| w[0].as_ref() == "--serve-mcp");
    let server = named.map_or("", |w| w[1].as_ref().to_str().unwrap_or(""));
    let started = std::time::Instant::now();
    let output = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$0\" && t=\"$1\" && shift && exec timeout \"$t\" \"$@\"")
        .arg(kib.to_string())
        .arg(secs.to_string())
        .arg(binary_for(server))
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    (output, started.elapsed())
}

/// A fresh, empty directory for one test (removed when the value drops).
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "agentteams-{label}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temp dir");
        TempDir(path.canonicalize().expect("canonical temp dir"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Lets a test hand the directory to anything that takes a path or an argument.
impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

/// POSTs `body` to `/mcp` on 127.0.0.1:`port` with extra header lines `headers` (each ending in
/// CRLF), on a connection of its own; returns the status code and the whole response.
pub fn http_post(port: u16, headers: &str, body: &str) -> (u16, String) {
    http_request(port, "POST", "/mcp", headers, body)
}

/// Sends `method` `path` with `headers` and `body` as [`http_post`] does; returns the same.
pub fn http_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write request");
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("read response");
    let status = reply.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, reply)
}

/// The port of the address line an HTTP server prints first on stderr
/// (`agentteams-mcp: Streamable HTTP on http://127.0.0.1:N/mcp`).
pub fn port_in_address_line(line: &str) -> u16 {
    line.trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.strip_suffix("/mcp"))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}

/// A `--http` server process (and its stderr after the address line), killed when dropped.
pub struct HttpServer(pub Child, pub BufReader<std::process::ChildStderr>);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the conformance fixture over HTTP on a free port with `extra` arguments; returns the
/// process and the port it printed.
pub fn serve_http(extra: &[&str], env_token: Option<&str>, stdin: Stdio) -> (HttpServer, u16) {
    serve_http_as(&["conformance"], extra, env_token, stdin)
}

/// Starts `--serve-mcp` `server` (its name and own arguments) over HTTP on a free port with
/// `extra` arguments; returns the process and the port of the address line it printed (read
/// past any warning lines).
pub fn serve_http_as(
    server: &[&str],
    extra: &[&str],
    env_token: Option<&str>,
    stdin: Stdio,
) -> (HttpServer, u16) {
    let mut command = Command::new(binary_for(server[0]));
    command
        .arg("--serve-mcp")
        .args(server)
        .args(["--http", "--port", "0"])
        .args(extra)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(token) = env_token {
        command.env("AGENTTEAMS_MCP_AUTH_TOKEN", token);
    }
    let mut child = command.spawn().expect("the binary runs");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut server = HttpServer(child, stderr);
    // Warnings (an unmatched policy rule, a loose file mode) may come before the address.
    loop {
        let mut line = String::new();
        let read = server.1.read_line(&mut line).unwrap();
        assert!(read > 0, "the server printed no address");
        if line.trim_end().ends_with("/mcp") {
            return (server, port_in_address_line(&line));
        }
    }
}

/// The `Mcp-Session-Id` of an HTTP response.
pub fn session_id_of(reply: &str) -> String {
    reply
        .lines()
        .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
        .expect("a session id")
        .trim()
        .to_owned()
}

/// The header lines a request in the session an `initialize` response opened carries
/// (`Mcp-Session-Id` and `MCP-Protocol-Version: 2025-11-25`).
pub fn session_headers(initialize_response: &str) -> String {
    let session = session_id_of(initialize_response);
    format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
}

/// Every record of the audit log at `path`, parsed, in order.
pub fn records(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect()
}
