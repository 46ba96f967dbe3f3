//! Cost of the audit log's parts, each against a reference measured in the same run:
//!
//! - `sha256`: `agentteams_mcp::sha256` against the `sha2` crate (which uses the CPU's SHA
//!   extensions where it finds them), on a 1 MiB message and on a 300-byte one (an audit record's
//!   size). Median MB/s over rounds that interleave the two.
//! - `append`: `AuditLog` writing the records of tool calls (requested, started, completed; redacted
//!   mode; `sync_data` per record) against the floor any durable appender pays: writing the very
//!   same lines with `O_APPEND` and `sync_data` per line. Median records/s, and ours/floor.
//!
//! Usage: `cargo run --release --bin audit -- [--rounds N] [--dir DIR]` (DIR: where the log files
//! go; the system temp dir by default. The filesystem decides what `sync_data` costs).

use agentteams_mcp::audit::{AuditLog, Mode, RunInfo};
use agentteams_mcp::json::{obj, Value};
use sha2::Digest;
use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const DEFAULT_ROUNDS: usize = 21;
const CALLS_PER_ROUND: usize = 100;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn options() -> Result<(usize, PathBuf), String> {
    let mut rounds = DEFAULT_ROUNDS;
    let mut dir = std::env::temp_dir();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                let n = args.next().ok_or("--rounds needs a number")?;
                rounds = n
                    .parse()
                    .map_err(|_| format!("--rounds: {n:?} is not a number"))?;
                if rounds == 0 {
                    return Err("--rounds must be at least 1".into());
                }
            }
            "--dir" => dir = PathBuf::from(args.next().ok_or("--dir needs a folder")?),
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    Ok((rounds, dir))
}

/// Times `iterations` digests of `message` by both implementations, interleaved per round.
fn sha256_row(label: &str, message: &[u8], iterations: usize, rounds: usize) {
    let mut ours = Vec::with_capacity(rounds);
    let mut theirs = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..iterations {
            black_box(agentteams_mcp::sha256::digest(black_box(message)));
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for _ in 0..iterations {
            black_box(sha2::Sha256::digest(black_box(message)));
        }
        theirs.push(start.elapsed());
    }
    assert_eq!(
        agentteams_mcp::sha256::digest(message).as_slice(),
        sha2::Sha256::digest(message).as_slice(),
        "the two implementations disagree"
    );
    let bytes = (message.len() * iterations) as f64;
    let (ours, theirs) = (median(ours), median(theirs));
    let mbps = |d: Duration| bytes / d.as_secs_f64() / 1e6;
    println!(
        "sha256 {label:>9}: ours {:8.1} MB/s   sha2 {:8.1} MB/s   ours/sha2 {:.2}",
        mbps(ours),
        mbps(theirs),
        mbps(ours) / mbps(theirs)
    );
}

fn append_row(dir: &std::path::Path, rounds: usize) -> std::io::Result<()> {
    let info = RunInfo {
        server: "bench".into(),
        version: "0".into(),
        root: "/srv".into(),
        transport: "stdio".into(),
        policy: vec![],
    };
    let arguments = obj([("rev", "HEAD".into()), ("max_count", Value::from(20u64))]);
    let result = obj([(
        "content",
        Value::from(vec![obj([
            ("type", "text".into()),
            ("text", "commit 0123456789abcdef\n".repeat(40).into()),
        ])]),
    )]);
    let ours_path = dir.join(format!("agentteams-bench-audit-{}.log", std::process::id()));
    let floor_path = dir.join(format!("agentteams-bench-floor-{}.log", std::process::id()));
    let mut ours = Vec::with_capacity(rounds);
    let mut floor = Vec::with_capacity(rounds);
    let mut records = 0;
    for _ in 0..rounds {
        let _ = std::fs::remove_file(&ours_path);
        let _ = std::fs::remove_file(&floor_path);
        let log = AuditLog::open(&ours_path, &info, Mode::Redacted).expect("open the log");
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            let mut call = log
                .call_requested(None, Some(&Value::from(1u64)), "git_log", &arguments)
                .expect("record");
            call.started().expect("record");
            call.finished(&result).expect("record");
        }
        ours.push(start.elapsed());
        drop(log);
        let text = std::fs::read_to_string(&ours_path)?;
        let lines: Vec<&str> = text.split_inclusive('\n').skip(1).collect();
        records = lines.len();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&floor_path)?;
        let start = Instant::now();
        for line in &lines {
            file.write_all(line.as_bytes())?;
            file.sync_data()?;
        }
        floor.push(start.elapsed());
    }
    let _ = std::fs::remove_file(&ours_path);
    let _ = std::fs::remove_file(&floor_path);
    let (ours, floor) = (median(ours), median(floor));
    let rate = |d: Duration| records as f64 / d.as_secs_f64();
    println!(
        "append ({records} records/round, {}): ours {:8.0} records/s   write+sync_data floor {:8.0} records/s   ours/floor {:.2}",
        dir.display(),
        rate(ours),
        rate(floor),
        rate(ours) / rate(floor)
    );
    Ok(())
}

fn main() {
    let (rounds, dir) = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("audit bench: {e}");
            std::process::exit(2);
        }
    };
    println!("rounds: {rounds} (medians)");
    let big = vec![0xa5u8; 1 << 20];
    sha256_row("1 MiB", &big, 8, rounds);
    let record = vec![b'r'; 300];
    sha256_row("300 B", &record, 20_000, rounds);
    if let Err(e) = append_row(&dir, rounds) {
        eprintln!("audit bench: {e}");
        std::process::exit(1);
    }
}
