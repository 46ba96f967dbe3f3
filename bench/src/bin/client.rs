//! Round-trip cost of `agentteams_mcp::client` over stdio against the floor measured in the same
//! run: the same `tools/list` requests written and read by hand on one thread (write a line, read
//! a line, parse it), to the same server process kind.
//!
//! Both talk to `agentteams-mcp --serve-mcp gitread --root <temp repo>` in the legacy era (so
//! both send the same bytes); `tools/list` touches no git, so the numbers are the transport's.
//! Median calls/s over rounds that interleave the two, and ours/floor.
//!
//! Then the same over Streamable HTTP (`--http --port 0`, legacy session): our client against a
//! hand-written floor that POSTs the same request on a fresh connection each time, as the client
//! does (`Connection: close`), and reads the whole reply.
//!
//! Usage: `cargo run --release --bin client -- --server PATH [--rounds N]` where PATH is the
//! release `agentteams-mcp` binary (build it first: `cargo build --release` at the top level).

use agentteams_mcp::client::{Client, EraChoice, Options};
use agentteams_mcp::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEFAULT_ROUNDS: usize = 21;
const CALLS_PER_ROUND: usize = 500;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let mut server = None;
    let mut rounds = DEFAULT_ROUNDS;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--server" => server = args.next(),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let server = server.expect("--server PATH to the agentteams-mcp binary");
    let repo = std::env::temp_dir().join(format!("client-bench-{}", std::process::id()));
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
            .args(args)
            .current_dir(&repo)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "bench"]);
    let argv: Vec<String> = [server.as_str(), "--serve-mcp", "gitread", "--root"]
        .iter()
        .map(|s| s.to_string())
        .chain([repo.to_string_lossy().into_owned()])
        .collect();

    let options = Options {
        era: EraChoice::Legacy,
        ..Options::default()
    };
    let mut client = Client::spawn(&argv, options).unwrap();

    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut raw = |id: u64, stdin: &mut std::process::ChildStdin| {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#
        )
        .unwrap();
        stdin.flush().unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        json::parse(line.as_bytes()).unwrap()
    };
    raw(0, &mut stdin);

    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let mut id = 1;
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            std::hint::black_box(client.list_tools().unwrap());
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            std::hint::black_box(raw(id, &mut stdin));
            id += 1;
        }
        floor.push(start.elapsed());
    }
    client.close().unwrap();
    drop(stdin);
    let _ = child.wait();

    report("stdio", rounds, ours, floor);
    http(&argv, rounds);
    let _ = std::fs::remove_dir_all(&repo);
}

fn http(argv: &[String], rounds: usize) {
    use std::io::Read;
    let mut server = Command::new(&argv[0])
        .args(&argv[1..])
        .args(["--http", "--port", "0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let options = Options {
        era: EraChoice::Legacy,
        ..Options::default()
    };
    let mut client = Client::connect_http(&url, options).unwrap();
    let session = client.session_id().unwrap().to_owned();
    let raw = |id: u64| {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#);
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = Vec::new();
        s.read_to_end(&mut reply).unwrap();
        let start = reply.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        json::parse(&reply[start..]).unwrap()
    };
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let mut id = 1_000_000;
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            std::hint::black_box(client.list_tools().unwrap());
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            std::hint::black_box(raw(id));
            id += 1;
        }
        floor.push(start.elapsed());
    }
    client.close().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    report("Streamable HTTP", rounds, ours, floor);
}

fn report(transport: &str, rounds: usize, ours: Vec<Duration>, floor: Vec<Duration>) {
    let per_s = |d: Duration| CALLS_PER_ROUND as f64 / d.as_secs_f64();
    let (o, f) = (median(ours), median(floor));
    println!(
        "{transport} tools/list round trips, {rounds} rounds x {CALLS_PER_ROUND} calls (median)"
    );
    println!(
        "  client::Client   {:>9.0} calls/s  ({:.1} us/call)",
        per_s(o),
        o.as_secs_f64() * 1e6 / CALLS_PER_ROUND as f64
    );
    println!(
        "  hand-written     {:>9.0} calls/s  ({:.1} us/call)",
        per_s(f),
        f.as_secs_f64() * 1e6 / CALLS_PER_ROUND as f64
    );
    println!(
        "  ours/floor time  {:.2}",
        o.as_secs_f64() / f.as_secs_f64()
    );
}
