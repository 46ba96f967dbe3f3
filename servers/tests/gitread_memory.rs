//! gitread's memory bounds through the binary (SECURITY.md, gitread "Memory"): every git process
//! runs under the `--git-memory-limit` address-space limit, so each trigger that took git to
//! gigabytes ends in a clear tool error well before the timeout, with the server's and its gits'
//! peak memory under the limit (measured under GNU time when the machine has it); a pack larger
//! than the limit is still served; the `^{/text}` search takes no braces; and one server runs at
//! most `MAX_CONCURRENT_GIT` git processes, with a bounded queue and a busy error past it.

mod gitread_support;

use agentteams_mcp_servers::gitread::{MAX_CONCURRENT_GIT, MAX_QUEUED_GIT};
use gitread_support::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The limit most tests run under: small, so fixtures stay small and fast.
const TEST_LIMIT: &str = "256M";
const TEST_LIMIT_BYTES: u64 = 256 << 20;

/// Asserts `reply` is the out-of-memory error naming the `limit` (e.g. "256 MiB") and the option.
fn assert_out_of_memory(reply: &Reply, limit: &str) {
    reply.assert_error_contains(&format!(
        "git ran out of memory under gitread's {limit} limit (--git-memory-limit): "
    ));
}

/// Stops `server` and asserts its peak, with every git it ran, stayed under `limit` bytes.
fn assert_peak_under(server: MeasuredServer, limit: u64) {
    let peak = server.finish() * 1024;
    assert!(peak < limit, "peak {peak} bytes, limit {limit}");
}

#[test]
fn a_regex_search_with_braces_is_refused_and_plain_searches_are_served() {
    let f = Fixture::new("mem-rev");
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", TEST_LIMIT]);
    let server = &mut measured.server;
    let found = server.call("git_log", r#"{"rev":"HEAD^{/fir.t}","n":1}"#);
    assert!(found.output().ends_with(": first\n"), "{}", found.text);
    let first = server.call("git_log", r#"{"rev":"HEAD^{/^first}~0","n":1}"#);
    assert!(first.output().ends_with(": first\n"), "{}", first.text);
    assert!(!server.call("git_log", r#"{"rev":"main@{0}"}"#).is_error);
    let message = "rev: a ^{/text} commit search may hold no other braces ({ or }): git reads \
                   the text as a regex, and a {m,n} repetition can take it gigabytes";
    for rev in [
        "HEAD^{/.{32767}{32767}}",
        "HEAD^{/a{2}}",
        "HEAD@{0}^{/first}",
        "HEAD^{/x}}",
    ] {
        let reply = server.call("git_log", &format!(r#"{{"rev":"{rev}"}}"#));
        assert_eq!(
            (reply.is_error, reply.text.as_str()),
            (true, message),
            "{rev}"
        );
    }
    let show = server.call("git_show", r#"{"rev":"HEAD^{/.{9}{9}}"}"#);
    assert_eq!(show.text, message);
    let diff = server.call("git_diff", r#"{"base":"HEAD^{/{}","head":"HEAD"}"#);
    assert_eq!(diff.text, message.replacen("rev:", "base:", 1));
    assert_peak_under(measured, TEST_LIMIT_BYTES);
}

/// A file git maps whole, as large as the repository checks let one be (`MAX_DATA_FILE_BYTES`):
/// git's own mapping then fails under the default limit. (A larger one, or a huge loose ref, is
/// refused before git runs: `p16` in gitread_threats.rs.)
#[test]
fn a_packed_refs_file_as_large_as_allowed_ends_in_the_memory_error_under_the_default_limit() {
    let f = Fixture::new("mem-packed-refs-default");
    git(&f.root, &["pack-refs", "--all"]);
    let packed = std::fs::OpenOptions::new()
        .write(true)
        .open(f.root.join(".git/packed-refs"))
        .expect("open packed-refs");
    packed.set_len(1 << 30).expect("sparse packed-refs");
    let mut measured = MeasuredServer::start(&f.root, &[]);
    assert_out_of_memory(&measured.server.call("git_status", "{}"), "1 GiB");
    let pong = measured.server.request("ping", "{}");
    assert!(pong.get("result").is_some(), "{pong}");
    assert_peak_under(measured, 1 << 30);
}

#[test]
fn a_huge_packed_refs_file_ends_in_the_memory_error() {
    let f = Fixture::new("mem-packed-refs");
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    git(&f.root, &["pack-refs", "--all"]);
    let packed = std::fs::OpenOptions::new()
        .write(true)
        .open(f.root.join(".git/packed-refs"))
        .expect("open packed-refs");
    // Within what the repository checks let through (1 GiB), far past the test limit.
    packed.set_len(900 << 20).expect("sparse packed-refs");
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", TEST_LIMIT]);
    assert_out_of_memory(&measured.server.call("git_status", "{}"), "256 MiB");
    assert_out_of_memory(&measured.server.call("git_log", "{}"), "256 MiB");
    let show = measured
        .server
        .call("git_show", &format!(r#"{{"rev":"{head}"}}"#));
    // Every git reads packed-refs here (even to check a full commit id against ref names): each
    // call ends in the same error, and the server keeps answering.
    assert_out_of_memory(&show, "256 MiB");
    let pong = measured.server.request("ping", "{}");
    assert!(pong.get("result").is_some(), "{pong}");
    assert_peak_under(measured, TEST_LIMIT_BYTES);
}

#[test]
fn blaming_a_huge_blob_of_newlines_ends_in_the_memory_error() {
    let f = Fixture::new("mem-blame");
    // 300 MB of newlines: 300 KB stored, over a gigabyte for blame's line tables.
    commit_streamed_blob(&f.root, "big.txt", 300_000_000, |n| vec![b'\n'; n]);
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", TEST_LIMIT]);
    let blame = measured
        .server
        .call("git_blame", r#"{"rev":"HEAD","path":"big.txt"}"#);
    assert_out_of_memory(&blame, "256 MiB");
    let small = measured
        .server
        .call("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#);
    assert!(small.output().contains("two"));
    assert_peak_under(measured, TEST_LIMIT_BYTES);
}

#[test]
fn a_pathological_xfuncname_regex_ends_in_a_clear_error() {
    let f = Fixture::new("mem-xfuncname");
    write(&f.root.join(".gitattributes"), "* diff=x\n");
    git(&f.root, &["add", ".gitattributes"]);
    append(&f.root.join("a.txt"), "three\n");
    git(&f.root, &["commit", "-q", "-am", "third"]);
    f.plant_config("[diff \"x\"]\n\txfuncname = a{32767}{32767}\n");
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", TEST_LIMIT]);
    for (tool, args) in [
        ("git_show", r#"{"rev":"HEAD"}"#),
        ("git_diff", r#"{"base":"HEAD~1","head":"HEAD"}"#),
    ] {
        let reply = measured.server.call(tool, args);
        // regcomp fails for want of memory and git reports an invalid regex.
        assert!(reply.is_error, "{tool}: {}", reply.text);
        assert!(reply.text.starts_with("git exited 128: "), "{}", reply.text);
    }
    assert!(!measured.server.call("git_log", "{}").is_error);
    assert_peak_under(measured, TEST_LIMIT_BYTES);
}

#[test]
fn a_pack_larger_than_the_limit_is_still_served() {
    let f = Fixture::new("mem-big-pack");
    // 80 MiB of incompressible bytes in one pack, over a 64 MiB limit.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    commit_streamed_blob(&f.root, "random.bin", 80 << 20, |n| {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    });
    git(&f.root, &["reset", "-q", "--hard", "main"]);
    append(&f.root.join("a.txt"), "three\n");
    git(&f.root, &["commit", "-q", "-am", "third"]);
    let packs: u64 = std::fs::read_dir(f.root.join(".git/objects/pack"))
        .expect("pack dir")
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    assert!(packs > 64 << 20, "the pack is {packs} bytes");
    // The fixture is live: git's default pack windows cannot map this pack under the limit.
    if Path::new("/usr/bin/prlimit").is_file() {
        let bare = Command::new("/usr/bin/prlimit")
            .arg(format!("--as={}", 64 << 20))
            .arg(git_program())
            .args(["log", "--oneline"])
            .current_dir(&f.root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("prlimit runs");
        assert!(!bare.status.success(), "git served without small windows");
    }
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", "64M"]);
    let server = &mut measured.server;
    let log = server.call("git_log", r#"{"n":5}"#);
    assert!(log.output().contains(": third\n"), "{}", log.text);
    assert!(server
        .call("git_show", r#"{"rev":"HEAD"}"#)
        .output()
        .contains("+three"));
    // The commit adding the blob needs it whole for its patch: served, or the memory error.
    let big = server.call("git_show", r#"{"rev":"HEAD~1"}"#);
    if big.is_error {
        assert_out_of_memory(&big, "64 MiB");
    }
    assert!(!server.call("git_status", "{}").is_error);
    assert_peak_under(measured, 64 << 20);
}

#[test]
fn the_limit_option_is_validated_and_none_runs_git_unlimited() {
    let f = Fixture::new("mem-option");
    let binary = env!("CARGO_BIN_EXE_agentteams-mcp");
    let root = f.root.to_str().expect("utf-8 root");
    for (args, needle) in [
        (
            &[
                "--serve-mcp",
                "gitread",
                "--root",
                root,
                "--git-memory-limit",
                "10M",
            ][..],
            "--git-memory-limit needs a size such as 1G, 512M or a number of bytes (at least \
             64M), or none; not \"10M\"",
        ),
        (
            &[
                "--serve-mcp",
                "gitread",
                "--root",
                root,
                "--git-memory-limit=1.5G",
            ][..],
            "not \"1.5G\"",
        ),
        (
            &[
                "--serve-mcp",
                "gitread",
                "--root",
                root,
                "--git-memory-limit",
            ][..],
            "--git-memory-limit needs a value",
        ),
        (
            &[
                "index",
                "build",
                "--root",
                root,
                "--git-memory-limit",
                "lots",
            ][..],
            "not \"lots\"",
        ),
        (
            &[
                "index",
                "build",
                "--git-memory-limit",
                "1G",
                "--git-memory-limit=2G",
            ][..],
            "--git-memory-limit given more than once",
        ),
    ] {
        let out = Command::new(binary)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let help = Command::new(binary).arg("--help").output().expect("help");
    assert!(String::from_utf8_lossy(&help.stdout).contains("--git-memory-limit SIZE"));
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit", "none"]);
    assert_sweep_served(&measured.server.sweep());
    measured.finish();
    let mut measured = MeasuredServer::start(&f.root, &["--git-memory-limit=1073741824"]);
    assert_sweep_served(&measured.server.sweep());
    measured.finish();
}

#[test]
fn git_processes_past_the_bound_wait_in_a_bounded_queue_then_get_busy() {
    let f = Fixture::new("mem-gate");
    // git log blocks until `release` exists, counted in `running/` while it waits.
    let running = f.tmp.join("running");
    std::fs::create_dir_all(&running).expect("running dir");
    let release = f.tmp.join("release");
    let script = git_wrapper(
        &f,
        &format!(
            "case \" $* \" in *\" log \"*)\n  : > '{running}/'$$\n  while [ ! -e '{release}' ]; do sleep 0.02; done\n  rm -f '{running}/'$$ ;;\nesac",
            running = running.display(),
            release = release.display(),
        ),
    );
    let (_server, port) = serve_gitread_http(&f.root, &[(GIT_ENV_NAME, script.to_str())]);
    let count = || std::fs::read_dir(&running).map_or(0, |d| d.count());
    // Past the config cache's racy window, so each call runs one git.
    std::thread::sleep(Duration::from_millis(2100));
    assert!(!http_call(port, "git_status", "{}").contains("\"isError\":true"));
    let admitted = MAX_CONCURRENT_GIT + MAX_QUEUED_GIT;
    let calls: Vec<_> = (0..admitted)
        .map(|_| std::thread::spawn(move || http_call(port, "git_log", r#"{"n":1}"#)))
        .collect();
    while count() < MAX_CONCURRENT_GIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    // An extra call either joins the queue (while the admitted ones are still arriving) and
    // waits, or is refused at once; refusals start when the queue is full.
    let (replies, replied) = mpsc::channel();
    let mut extra = Vec::new();
    let busy = loop {
        assert!(extra.len() <= admitted, "no busy error");
        let replies = replies.clone();
        extra.push(std::thread::spawn(move || {
            let reply = http_call(port, "git_log", r#"{"n":1}"#);
            let _ = replies.send(reply.clone());
            reply
        }));
        if let Ok(reply) = replied.recv_timeout(Duration::from_millis(300)) {
            break reply;
        }
    };
    assert!(
        busy.contains(&format!(
            "gitread is busy: {MAX_CONCURRENT_GIT} git processes are running and \
             {MAX_QUEUED_GIT} more calls are already waiting; try again shortly"
        )),
        "{busy}"
    );
    assert_eq!(count(), MAX_CONCURRENT_GIT);
    write(&release, "");
    // The calls arrive in any order, so a late one of the first batch may find the queue already
    // full of extras: what holds is that exactly the running and queued calls are served once
    // released, and every other call got the busy error.
    let all: Vec<String> = calls
        .into_iter()
        .chain(extra)
        .map(|call| call.join().expect("call thread"))
        .collect();
    let served = all.iter().filter(|r| r.contains(": second\\n")).count();
    let refused = all.iter().filter(|r| r.contains("gitread is busy")).count();
    assert_eq!(served, admitted, "{all:?}");
    assert_eq!(served + refused, all.len(), "{all:?}");
    assert!(http_call(port, "git_log", r#"{"n":1}"#).contains(": second\\n"));
}

#[test]
fn git_starts_through_a_waiting_helper_that_is_already_under_the_limit() {
    let f = Fixture::new("mem-helper");
    // A git that records its pid: the process that runs it is the spare helper itself.
    let pids = f.tmp.join("pids");
    let script = git_wrapper(&f, &format!("echo $$ >> '{}'", pids.display()));
    let mut server = Server::start(&f.root, &[(GIT_ENV_NAME, script.to_str())]);
    // Past the config cache's racy window, the first call caches the config listing, so each
    // later call runs one git.
    std::thread::sleep(Duration::from_millis(2100));
    assert!(!server.call("git_status", "{}").is_error);
    for call in 0..3 {
        // One spare waits, under the limit, and the next call's git runs in it.
        let spares = spare_helpers(&server);
        assert_eq!(spares.len(), 1, "call {call}");
        // The helper shows in /proc a moment before the refill thread puts it in the pool (it
        // must first return from `spawn`): on a loaded machine a call sent at once could miss it.
        std::thread::sleep(Duration::from_millis(300));
        let limits =
            std::fs::read_to_string(format!("/proc/{}/limits", spares[0])).unwrap_or_default();
        let address_space = limits
            .lines()
            .find(|l| l.starts_with("Max address space"))
            .unwrap_or_default();
        assert!(address_space.contains("1073741824"), "{address_space}");
        assert!(server
            .call("git_log", r#"{"n":1}"#)
            .output()
            .contains("second"));
        let recorded = std::fs::read_to_string(&pids).unwrap_or_default();
        assert_eq!(
            recorded.lines().last(),
            Some(spares[0].to_string().as_str())
        );
    }
}

/// The pids of `server`'s spare exec helpers, once one has started (after a call the next starts
/// on a thread of its own; gives up after 5 s).
fn spare_helpers(server: &Server) -> Vec<u32> {
    let find = || -> Vec<u32> {
        children(server.pid())
            .into_iter()
            // The helper itself, once the limit program has `exec`ed it.
            .filter(|(_, cmdline)| cmdline.split('\0').nth(1) == Some("--gitread-exec-helper"))
            .map(|(pid, _)| pid)
            .collect()
    };
    for _ in 0..500 {
        let found = find();
        if !found.is_empty() {
            return found;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    find()
}

/// A `git` at `<tmp>/wrap/git` that runs `body` (POSIX sh), then execs the git under test.
fn git_wrapper(f: &Fixture, body: &str) -> std::path::PathBuf {
    let script = f.tmp.join("wrap/git");
    let real = git_program();
    write(
        &script,
        &format!("#!/bin/sh\n{body}\nexec '{}' \"$@\"\n", real.display()),
    );
    make_executable(&script);
    script
}

/// The variable that selects the git the server runs.
const GIT_ENV_NAME: &str = agentteams_mcp_servers::gitread::GIT_ENV;

/// Commits `name` holding `size` bytes made by `chunk(n)` pieces, streamed into one pack; the
/// work tree and the index are left as they were (a 300 MB checkout is disk no test needs).
fn commit_streamed_blob(
    root: &Path,
    name: &str,
    size: usize,
    mut chunk: impl FnMut(usize) -> Vec<u8>,
) {
    let mut child = git_command(root)
        .args(["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("fast-import runs");
    let mut stdin = child.stdin.take().expect("stdin");
    write!(
        stdin,
        "commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\ndata 4\nbig\n\
         from refs/heads/main^0\nM 100644 inline {name}\ndata {size}\n"
    )
    .expect("header");
    let mut left = size;
    while left > 0 {
        let piece = chunk(left.min(1 << 20));
        stdin.write_all(&piece).expect("data");
        left -= piece.len();
    }
    stdin.write_all(b"\n").expect("end");
    drop(stdin);
    assert!(child.wait().is_ok_and(|s| s.success()), "fast-import");
}

/// The gitread server over stateless HTTP on a free loopback port; returns it and the port.
fn serve_gitread_http(root: &Path, env: &[(&str, Option<&str>)]) -> (KillOnDrop, u16) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"));
    command
        .args([
            "--serve-mcp",
            "gitread",
            "--http",
            "--stateless",
            "--port",
            "0",
            "--root",
        ])
        .arg(root)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let mut child = command.spawn().expect("the server starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("address line");
    // The server prints its address first: `... http://127.0.0.1:<port>/mcp`.
    let port = line
        .trim()
        .strip_suffix("/mcp")
        .and_then(|a| a.rsplit(':').next());
    let port = port.and_then(|p| p.parse().ok());
    let port = port.unwrap_or_else(|| panic!("no address in {line:?}"));
    (KillOnDrop(child), port)
}

/// Kills and reaps the HTTP server when the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One `tools/call` POSTed on a connection of its own; the whole response.
fn http_call(port: u16, tool: &str, arguments: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("request");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("response");
    reply
}
