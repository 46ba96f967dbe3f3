//! Drives MCP servers over stdio side by side and reports round trips per second, interleaved.
//!
//! For each round, each server is started fresh (in A B order on even rounds, B A on odd ones),
//! initialized, warmed up, then measured twice with the same `tools/call`: sequentially (each
//! request written only after the previous reply arrived) and pipelined (`--depth` requests in
//! flight). Every reply is checked: its id must be one the driver is waiting for, and it must be a
//! result carrying the expected text. Paired ratios are taken within a round (the same load on the
//! machine for both sides) and summarised by their minimum and median over the rounds.
//!
//! Usage:
//!   stdio-drive [--rounds 6] [--calls 20000] [--warmup 2000] [--depth 16]
//!               [--tool test_simple_text] [--expect TEXT] NAME=COMMAND [NAME=COMMAND...]
//! COMMAND is split on spaces. Pin with taskset: `taskset -c 1 stdio-drive ...` puts driver and
//! servers on one CPU (children inherit it); `taskset -c 0 stdio-drive a='taskset -c 1 CMD'` puts
//! them on separate CPUs.
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Options {
    rounds: usize,
    calls: usize,
    warmup: usize,
    depth: usize,
    tool: String,
    expect: String,
    servers: Vec<(String, Vec<String>)>,
}

fn options() -> Options {
    let mut o = Options {
        rounds: 6,
        calls: 20_000,
        warmup: 2_000,
        depth: 16,
        tool: "test_simple_text".to_owned(),
        expect: "This is a simple text response for testing.".to_owned(),
        servers: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| fail(&format!("{name} needs a value")))
        };
        let number = |text: String| {
            text.parse()
                .unwrap_or_else(|_| fail(&format!("not a number: {text}")))
        };
        match arg.as_str() {
            "--rounds" => o.rounds = number(value("--rounds")),
            "--calls" => o.calls = number(value("--calls")),
            "--warmup" => o.warmup = number(value("--warmup")),
            "--depth" => o.depth = number(value("--depth")),
            "--tool" => o.tool = value("--tool"),
            "--expect" => o.expect = value("--expect"),
            _ => match arg.split_once('=') {
                Some((name, command)) if !command.trim().is_empty() => o.servers.push((
                    name.to_owned(),
                    command.split_whitespace().map(str::to_owned).collect(),
                )),
                _ => fail(&format!("expected NAME=COMMAND, got {arg}")),
            },
        }
    }
    if o.servers.is_empty() || o.rounds == 0 || o.calls == 0 || o.depth == 0 {
        fail("give at least one NAME=COMMAND, and non-zero --rounds, --calls and --depth");
    }
    o
}

fn fail(message: &str) -> ! {
    eprintln!("stdio-drive: {message}");
    std::process::exit(2)
}

/// One server process and the driver's ends of its pipes.
struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
    request: String,
}

/// What one round measured of one server.
struct Measured {
    start_us: f64,
    sequential_per_s: f64,
    pipelined_per_s: f64,
}

impl Server {
    fn start(command: &[String]) -> Server {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| fail(&format!("cannot start {}: {e}", command[0])));
        let input = child.stdin.take().unwrap();
        let output = BufReader::with_capacity(64 * 1024, child.stdout.take().unwrap());
        Server {
            child,
            input,
            output,
            line: Vec::with_capacity(1024),
            request: String::with_capacity(256),
        }
    }

    fn send(&mut self, text: &str) {
        self.input
            .write_all(text.as_bytes())
            .unwrap_or_else(|e| fail(&format!("writing to the server: {e}")));
    }

    fn send_call(&mut self, id: u64, tool: &str) {
        self.request.clear();
        use std::fmt::Write as _;
        let _ = writeln!(
            self.request,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        );
        let request = std::mem::take(&mut self.request);
        self.send(&request);
        self.request = request;
    }

    /// Reads one reply line and returns its id, checking that it is a result holding `expect`.
    fn reply(&mut self, expect: &str) -> u64 {
        self.line.clear();
        match self.output.read_until(b'\n', &mut self.line) {
            Ok(0) => fail("the server closed its output"),
            Ok(_) => {}
            Err(e) => fail(&format!("reading the server: {e}")),
        }
        let line = &self.line;
        let text = String::from_utf8_lossy(line);
        if find(line, b"\"result\":").is_none() || find(line, expect.as_bytes()).is_none() {
            fail(&format!("not the expected result: {text}"));
        }
        reply_id(line).unwrap_or_else(|| fail(&format!("no numeric id in the reply: {text}")))
    }

    fn stop(mut self) {
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The number after the line's first `"id":`.
fn reply_id(line: &[u8]) -> Option<u64> {
    let start = find(line, b"\"id\":")? + 5;
    let digits: Vec<u8> = line[start..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
    r#""capabilities":{},"clientInfo":{"name":"stdio-drive","version":"1"}}}"#,
    "\n"
);
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

fn measure(command: &[String], o: &Options) -> Measured {
    let started = Instant::now();
    let mut server = Server::start(command);
    server.send(INITIALIZE);
    server.line.clear();
    if server
        .output
        .read_until(b'\n', &mut server.line)
        .unwrap_or(0)
        == 0
        || find(&server.line, b"\"result\":").is_none()
        || reply_id(&server.line) != Some(0)
    {
        fail(&format!(
            "bad initialize reply: {}",
            String::from_utf8_lossy(&server.line)
        ));
    }
    let start_us = started.elapsed().as_secs_f64() * 1e6;
    server.send(INITIALIZED);
    let mut next_id = 1u64;
    for _ in 0..o.warmup {
        server.send_call(next_id, &o.tool);
        if server.reply(&o.expect) != next_id {
            fail("a reply with another id than the request's");
        }
        next_id += 1;
    }

    let t = Instant::now();
    for _ in 0..o.calls {
        server.send_call(next_id, &o.tool);
        let id = server.reply(&o.expect);
        if id != next_id {
            fail(&format!(
                "sequential: expected the reply to {next_id}, got {id}"
            ));
        }
        next_id += 1;
    }
    let sequential_per_s = o.calls as f64 / t.elapsed().as_secs_f64();

    // Pipelined: `depth` requests in flight; replies may come in any order, each exactly once.
    let base = next_id;
    let mut waiting = vec![false; o.calls];
    let (mut sent, mut received) = (0usize, 0usize);
    let t = Instant::now();
    while sent < o.calls.min(o.depth) {
        waiting[sent] = true;
        server.send_call(base + sent as u64, &o.tool);
        sent += 1;
    }
    while received < o.calls {
        let id = server.reply(&o.expect);
        let slot = id
            .checked_sub(base)
            .map(|s| s as usize)
            .filter(|&s| s < sent && waiting[s]);
        let Some(slot) = slot else {
            fail(&format!("pipelined: a reply to {id}, which is not waiting"))
        };
        waiting[slot] = false;
        received += 1;
        if sent < o.calls {
            waiting[sent] = true;
            server.send_call(base + sent as u64, &o.tool);
            sent += 1;
        }
    }
    let pipelined_per_s = o.calls as f64 / t.elapsed().as_secs_f64();
    server.stop();
    Measured {
        start_us,
        sequential_per_s,
        pipelined_per_s,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

fn main() {
    let o = options();
    let n = o.servers.len();
    // results[round][server]
    let mut results: Vec<Vec<Option<Measured>>> = Vec::new();
    for round in 0..o.rounds {
        let mut row: Vec<Option<Measured>> = (0..n).map(|_| None).collect();
        let order: Vec<usize> = if round % 2 == 0 {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        for i in order {
            let (name, command) = &o.servers[i];
            let m = measure(command, &o);
            println!(
                "round {round} {name}: start {:.0} us, sequential {:.0}/s ({:.2} us), pipelined {:.0}/s ({:.2} us)",
                m.start_us,
                m.sequential_per_s,
                1e6 / m.sequential_per_s,
                m.pipelined_per_s,
                1e6 / m.pipelined_per_s
            );
            row[i] = Some(m);
        }
        results.push(row);
    }
    let get = |round: usize, i: usize| results[round][i].as_ref().unwrap();
    println!();
    println!(
        "{} rounds of {} calls ({} warm-up), pipelined depth {}, tool {}",
        o.rounds, o.calls, o.warmup, o.depth, o.tool
    );
    println!(
        "| server | start µs (median) | sequential calls/s (median) | pipelined calls/s (median) |"
    );
    println!("|---|---|---|---|");
    for (i, (name, _)) in o.servers.iter().enumerate() {
        let m = |f: fn(&Measured) -> f64| median((0..o.rounds).map(|r| f(get(r, i))).collect());
        println!(
            "| {name} | {:.0} | {:.0} | {:.0} |",
            m(|x| x.start_us),
            m(|x| x.sequential_per_s),
            m(|x| x.pipelined_per_s)
        );
    }
    println!();
    println!("| ratio (calls/s) | sequential min | sequential median | pipelined min | pipelined median |");
    println!("|---|---|---|---|---|");
    for a in 0..n {
        for b in a + 1..n {
            let ratios = |f: fn(&Measured) -> f64| -> Vec<f64> {
                (0..o.rounds).map(|r| f(get(r, b)) / f(get(r, a))).collect()
            };
            let seq = ratios(|x| x.sequential_per_s);
            let pipe = ratios(|x| x.pipelined_per_s);
            println!(
                "| {} / {} | {:.3} | {:.3} | {:.3} | {:.3} |",
                o.servers[b].0,
                o.servers[a].0,
                min(&seq),
                median(seq.clone()),
                min(&pipe),
                median(pipe.clone())
            );
        }
    }
}
