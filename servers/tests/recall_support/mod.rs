//! Shared fixtures for the recall and index tests: temporary projects, the binary as an MCP host
//! drives it, and a snapshot of a tree's files to prove nothing was written.
#![allow(dead_code)]

#[path = "../common/mod.rs"]
pub mod common;

use agentteams_mcp::json::{self, Value};
pub use common::result_text;
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");

/// Calls `tool` of `recall` the way the engine does (`ToolSet::call`): the result's JSON, pretty
/// and sorted, or the error's message.
pub fn call(
    recall: &agentteams_mcp_servers::recall::Recall,
    tool: &str,
    args: &str,
) -> Result<String, String> {
    use agentteams_mcp::server::{CallContext, CancelToken, ToolOutput, ToolSet};
    let parsed = json::parse(args.as_bytes()).unwrap();
    let args = parsed.as_object().unwrap();
    match recall.call(tool, args, &CallContext::detached(CancelToken::new())) {
        Ok(ToolOutput::Value(v)) => Ok(json::to_pretty_ascii_sorted(&v)),
        Ok(other) => panic!("unexpected output {other:?}"),
        Err(e) => Err(e.message().to_owned()),
    }
}

/// A project directory under the system temp dir, removed on drop.
pub struct Project {
    pub root: PathBuf,
    /// Owns the directory: removes it when the project drops.
    _dir: common::TempDir,
}

impl Project {
    pub fn new(tag: &str) -> Project {
        let dir = common::TempDir::new(tag);
        Project {
            root: dir.path().to_path_buf(),
            _dir: dir,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// Runs `agentteams-mcp index build --root <root> <extra...>`.
    pub fn index_build(&self, extra: &[&str]) -> Output {
        self.index_build_with_env(extra, &[])
    }

    /// [`Project::index_build`] with environment variables set (`CARGO_HOME`, `GOMODCACHE`).
    pub fn index_build_with_env(&self, extra: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut command = Command::new(BIN);
        command
            .args(["index", "build", "--root"])
            .arg(&self.root)
            .args(extra);
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    /// Runs `index build` with no options, asserting it succeeds.
    pub fn build_indexes(&self) {
        let out = self.index_build(&[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
    }

    /// Every file under the root with its modification time in nanoseconds.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, i128> {
        let mut out = BTreeMap::new();
        let mut pending = vec![self.root.clone()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).unwrap().flatten() {
                let meta = fs::symlink_metadata(entry.path()).unwrap();
                if meta.is_dir() {
                    pending.push(entry.path());
                }
                let nanos =
                    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
                out.insert(
                    entry.path().strip_prefix(&self.root).unwrap().to_path_buf(),
                    nanos,
                );
            }
        }
        out
    }
}

/// A running `agentteams-mcp --serve-mcp recall`, initialised.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// The reply to `initialize`.
    pub initialized: Value,
}

impl Server {
    pub fn start(root: &Path) -> Server {
        Server::start_with(root, &[])
    }

    /// [`Server::start`] with more command-line arguments (`--compat reference`).
    pub fn start_with(root: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["--serve-mcp", "recall", "--root"])
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
            initialized: Value::Null,
        };
        let init = server.request(
            "initialize",
            r#"{"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}"#,
        );
        assert!(init.get("result").is_some(), "{init}");
        server.initialized = init;
        server.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
        server
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its reply.
    pub fn request(&mut self, method: &str, params: &str) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&format!(
            r#"{{"jsonrpc": "2.0", "id": {id}, "method": "{method}", "params": {params}}}"#
        ));
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let reply = json::parse(line.as_bytes()).unwrap();
        assert_eq!(reply.get("id").and_then(Value::as_u64), Some(id), "{line}");
        reply
    }

    /// Calls a tool; returns (isError, text).
    pub fn call(&mut self, tool: &str, arguments: &str) -> (bool, String) {
        let reply = self.request(
            "tools/call",
            &format!(r#"{{"name": "{tool}", "arguments": {arguments}}}"#),
        );
        let (text, is_error) =
            result_text(reply.get("result").unwrap_or_else(|| panic!("{reply}")));
        (is_error, text)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The hits of a successful tool text.
pub fn hits(text: &str) -> Vec<Value> {
    let value = json::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
    value
        .get("hits")
        .and_then(Value::as_array)
        .map(|a| a.to_vec())
        .unwrap()
}

pub fn str_field<'a>(hit: &'a Value, key: &str) -> &'a str {
    hit.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The stored `path` of every document of an index file, in order.
pub fn stored_paths(index: &Value) -> Vec<&str> {
    index
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| str_field(d, "path"))
        .collect()
}

/// A schema-valid memory index with the given documents JSON and postings JSON.
pub fn memory_index(documents: &str, postings: &str, n: usize, avgdl: f64) -> String {
    format!(
        r#"{{"artifact_type": "memory-index", "memory_index_schema_version": "1.3",
            "project_name": "p", "framework": "f", "built_at": "2026-10-07T12:34:56.123456Z",
            "source_count": {n}, "documents": {documents}, "postings": {postings},
            "avgdl": {avgdl:?}, "N": {n}}}"#
    )
}

/// A schema-valid code-index manifest listing `partitions` (`(name, file, kind)`).
pub fn manifest(partitions: &[(&str, &str, &str)]) -> String {
    let entries: Vec<String> = partitions
        .iter()
        .map(|(name, file, kind)| {
            format!(r#""{name}": {{"file": "{file}", "source_kind": "{kind}", "N": 0}}"#)
        })
        .collect();
    format!(
        r#"{{"artifact_type": "code-index-manifest", "code_index_schema_version": "1.0",
            "project_name": "", "framework": "", "built_at": "2026-10-07T12:34:56Z",
            "partitions": {{{}}}}}"#,
        entries.join(", ")
    )
}

/// A schema-valid code partition.
pub fn partition(
    kind: &str,
    built_at: &str,
    documents: &str,
    postings: &str,
    n: usize,
    avgdl: f64,
) -> String {
    format!(
        r#"{{"artifact_type": "code-index-partition", "code_index_schema_version": "1.0",
            "source_kind": "{kind}", "project_name": "", "framework": "", "built_at": "{built_at}",
            "source_count": {n}, "documents": {documents}, "postings": {postings},
            "avgdl": {avgdl:?}, "N": {n}}}"#
    )
}

/// Runs the binary with `args` and `--root <root>` under an address-space limit of `kib` KiB
/// (`ulimit -v`), feeding it `input` on stdin, which stays open until every request in it (a
/// line with an `id`) has its reply or the process ends: a server gives calls only a short grace
/// once its input ends.
pub fn run_in_memory_limit(kib: u64, args: &[&str], root: &Path, input: &str) -> Output {
    run_limited(kib, args, root, input, false).0
}

/// [`run_in_memory_limit`], but each request is written only once the one before it has its
/// reply, as a client waiting for each answer sends them; also returns the process's peak
/// resident memory in KiB (`VmHWM`, read before its input ends).
pub fn run_one_at_a_time_in_memory_limit(
    kib: u64,
    args: &[&str],
    root: &Path,
    input: &str,
) -> (Output, u64) {
    run_limited(kib, args, root, input, true)
}

fn run_limited(
    kib: u64,
    args: &[&str],
    root: &Path,
    input: &str,
    one_at_a_time: bool,
) -> (Output, u64) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$0\" && exec \"$@\"")
        .arg(kib.to_string())
        .arg(BIN)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut text).unwrap();
        text
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut out = Vec::new();
    let is_request = |line: &str| json::parse(line.as_bytes()).is_ok_and(|v| v.get("id").is_some());
    let mut awaited = 0;
    let mut replies = 0;
    if one_at_a_time {
        for line in input.lines() {
            let request = is_request(line);
            while request && replies < awaited && stdout.read_until(b'\n', &mut out).unwrap() > 0 {
                replies += 1;
            }
            stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
            awaited += usize::from(request);
        }
    } else {
        stdin.write_all(input.as_bytes()).unwrap();
        awaited = input.lines().filter(|l| is_request(l)).count();
    }
    while replies < awaited && stdout.read_until(b'\n', &mut out).unwrap() > 0 {
        replies += 1;
    }
    // The exec'd binary keeps the shell's process id.
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
    let peak_kib = status
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    drop(stdin);
    std::io::Read::read_to_end(&mut stdout, &mut out).unwrap();
    let output = Output {
        status: child.wait().unwrap(),
        stdout: out,
        stderr: stderr.join().unwrap(),
    };
    (output, peak_kib)
}

/// The stdin of a whole stdio session: `initialize`, `initialized`, then a `tools/call` with id
/// 2, 3, ... per `(tool, arguments)`.
pub fn session(calls: &[(&str, &str)]) -> String {
    let mut lines = vec![
        r#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}"#.to_owned(),
        r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#.to_owned(),
    ];
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        lines.push(format!(
            r#"{{"jsonrpc": "2.0", "id": {}, "method": "tools/call", "params": {{"name": "{tool}", "arguments": {arguments}}}}}"#,
            i + 2
        ));
    }
    lines.join("\n") + "\n"
}

/// The reply with `id` in a finished session's output (panics with its stderr if there is none).
pub fn reply(output: &Output, id: u64) -> Value {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .find(|v| v.get("id").and_then(Value::as_u64) == Some(id))
        .unwrap_or_else(|| {
            panic!(
                "no reply {id} ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

/// The file at `rel` in `project`, parsed.
pub fn parse_file(project: &Project, rel: &str) -> Value {
    json::parse(project.read(rel).as_bytes()).unwrap()
}

/// The hits `tool` returns for `query` with `k`, asserting success.
pub fn query_hits(server: &mut Server, tool: &str, query: &str, k: u64) -> Vec<Value> {
    let (is_error, text) = server.call(
        tool,
        &json::to_string(&json::obj([
            ("query", Value::from(query)),
            ("k", Value::from(k)),
        ])),
    );
    assert!(!is_error, "{text}");
    hits(&text)
}

/// A hit's `lines` as `(first, last)`.
pub fn lines_of(hit: &Value) -> Option<(u64, u64)> {
    let pair = hit.get("lines")?.as_array()?;
    Some((pair.first()?.as_u64()?, pair.get(1)?.as_u64()?))
}

/// Puts each hostile stand-in for one of our sidecar files at `rel` in turn and runs `check`
/// after each: not JSON, JSON that is no index, a link to a copy of `good` outside the project,
/// a FIFO, a directory, and nothing at all (as the reference's builder leaves it).
pub fn hostile_sidecars(project: &Project, rel: &str, good: &str, mut check: impl FnMut()) {
    let path = project.path(rel);
    for text in ["{\"documents\": [", "[]"] {
        fs::write(&path, text).unwrap();
        check();
    }
    let outside = Project::new("sidecar-outside");
    let copy = outside.write("sidecar.json", good);
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&copy, &path).unwrap();
    check();
    fs::remove_file(&path).unwrap();
    let status = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success());
    check();
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    check();
    fs::remove_dir(&path).unwrap();
    check();
}
