//! JSON parse and serialize throughput of `agentteams_mcp::json` against serde_json and sonic-rs,
//! each library measured in a process of its own.
//!
//! Why a second driver: the main one (`agentteams-mcp-bench`) runs the three libraries in one
//! process, so each inherits the heap the others left. That is not neutral. On twitter.json,
//! sonic-rs parses at about 1,900 MB/s in a process of its own and at about 1,000 MB/s when
//! serde_json and ours parse and drop the same document between its runs, while ours and
//! serde_json do not move. A comparison where one side is slowed by the other's allocations is not
//! like for like. Here every measurement is a fresh process that runs one library on one document
//! and nothing else, so each library runs on the heap it makes for itself.
//!
//! A round starts one process per library, in an order that rotates from round to round (all six
//! orders in turn). Each process does one untimed warm-up run and then `--repeats` timed runs, and
//! reports the median. The report gives each library's median over the rounds as MB/s, and the
//! minimum and median over the rounds of the paired ratio (their time / ours, within one round;
//! above 1.00x we are faster).
//!
//! - Parse is bytes to the library's own tree, dropping it included. After the timed runs, the
//!   process parses once more and checks the tree: it writes it with the library's own writer,
//!   then reads the text back with serde_json (`float_roundtrip`). The result must equal
//!   serde_json's value of the document, so a wrong parse (or a wrong write) fails the run.
//! - Serialize is the library's own tree (parsed untimed, in the same process) to compact text.
//!   The last output is read back with serde_json and must equal the document's value.
//!
//! The check parses with serde_json after the timing, so it cannot shape the heap the timed runs
//! saw.
//!
//! Run pinned to one CPU; the child processes inherit the pinning:
//! `taskset -c 1 target/release/json_isolated --rounds 12 --data DIR`.
//!
//! Usage: `json_isolated [--rounds N] [--repeats N] [--data DIR] [--only parse|serialize]
//! [FILE...]`
//! (DIR holds `corpus/`, as for the main driver).

use agentteams_mcp_bench::{
    median, paired_ratios, print_table_head_for, DATA_IN_CRATE, DEFAULT_FILES, LIBRARIES,
    ROTATING_ORDERS as ORDERS,
};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DEFAULT_ROUNDS: usize = 12;
/// Timed runs in each process; the process reports their median.
const DEFAULT_REPEATS: usize = 30;
const OPERATIONS: [&str; 2] = ["parse", "serialize"];

struct Options {
    rounds: usize,
    repeats: usize,
    data: PathBuf,
    files: Vec<String>,
    operations: Vec<&'static str>,
    /// The libraries of the report's columns: ours (the `Value` tree), serde_json, sonic-rs.
    libraries: [&'static str; 3],
}

fn number(name: &str, value: Option<String>) -> Result<usize, String> {
    let value = value.ok_or_else(|| format!("{name} needs a number"))?;
    match value.parse() {
        Ok(0) => Err(format!("{name} must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{name}: {value:?} is not a number")),
    }
}

fn options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut opts = Options {
        rounds: DEFAULT_ROUNDS,
        repeats: DEFAULT_REPEATS,
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_IN_CRATE),
        files: Vec::new(),
        operations: OPERATIONS.to_vec(),
        libraries: LIBRARIES,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => opts.rounds = number("--rounds", args.next())?,
            "--repeats" => opts.repeats = number("--repeats", args.next())?,
            "--data" => opts.data = args.next().ok_or("--data needs a folder")?.into(),
            "--only" => {
                let op = args.next().ok_or("--only needs parse or serialize")?;
                let op = OPERATIONS
                    .into_iter()
                    .find(|o| *o == op)
                    .ok_or_else(|| format!("--only: {op:?} is neither parse nor serialize"))?;
                opts.operations = vec![op];
            }
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => opts.files.push(arg),
        }
    }
    if opts.files.is_empty() {
        opts.files = DEFAULT_FILES.iter().map(|f| f.to_string()).collect();
    }
    Ok(opts)
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--child") {
        args.next();
        match child(args) {
            Ok(median) => println!("{}", median.as_nanos()),
            Err(e) => {
                eprintln!("json_isolated child: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("json_isolated: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "rounds: {} (one process per library per round, order rotating; each process {} timed runs, median), data: {}",
        opts.rounds,
        opts.repeats,
        opts.data.display()
    );
    print_table_head_for(opts.libraries);
    for file in &opts.files {
        for op in &opts.operations {
            if let Err(e) = compare(&opts, file, op) {
                eprintln!("json_isolated: {file} {op}: {e}");
                std::process::exit(1);
            }
        }
    }
}

/// Runs the rounds for one document and operation and prints its row.
fn compare(opts: &Options, file: &str, op: &str) -> Result<(), String> {
    let path = opts.data.join("corpus").join(file);
    let bytes = std::fs::metadata(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len() as f64;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut times: [Vec<Duration>; 3] = Default::default();
    for round in 0..opts.rounds {
        for &library in &ORDERS[round % ORDERS.len()] {
            let out = Command::new(&exe)
                .arg("--child")
                .arg(opts.libraries[library])
                .arg(op)
                .arg(&path)
                .arg(opts.repeats.to_string())
                .output()
                .map_err(|e| format!("starting a process: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "{}: {}",
                    opts.libraries[library],
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            let nanos: u64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .map_err(|_| format!("{}: no time in its output", opts.libraries[library]))?;
            times[library].push(Duration::from_nanos(nanos));
        }
    }
    let speed = |t: &[Duration]| bytes / median(t).as_secs_f64() / 1e6;
    let versus = |theirs: &[Duration]| {
        let (min, median) = paired_ratios(&times[0], theirs);
        format!("{min:.2}x / {median:.2}x")
    };
    println!(
        "| {file} | {op} | {:.1} | {:.1} | {:.1} | {} | {} |",
        speed(&times[0]),
        speed(&times[1]),
        speed(&times[2]),
        versus(&times[1]),
        versus(&times[2])
    );
    Ok(())
}

/// One library's operation on one document, in this process only: the median of the timed runs.
fn child(mut args: impl Iterator<Item = String>) -> Result<Duration, String> {
    let (library, op, path, repeats) = match (args.next(), args.next(), args.next(), args.next()) {
        (Some(l), Some(o), Some(p), Some(r)) => (l, o, p, number("repeats", Some(r))?),
        _ => return Err("usage: --child LIBRARY OPERATION FILE REPEATS".into()),
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
    let (times, text) = match (library.as_str(), op.as_str()) {
        ("agentteams_mcp::json", "parse") => time_parse(
            repeats,
            &bytes,
            |b| agentteams_mcp::json::parse(b).map_err(|e| e.to_string()),
            agentteams_mcp::json::to_string,
        )?,
        ("serde_json", "parse") => time_parse(
            repeats,
            &bytes,
            |b| serde_json::from_slice::<serde_json::Value>(b).map_err(|e| e.to_string()),
            serde_json::Value::to_string,
        )?,
        ("sonic-rs", "parse") => time_parse(
            repeats,
            &bytes,
            |b| sonic_rs::from_slice::<sonic_rs::Value>(b).map_err(|e| e.to_string()),
            |v| sonic_rs::to_string(v).expect("a Value serializes"),
        )?,
        ("agentteams_mcp::json", "serialize") => {
            let v = agentteams_mcp::json::parse(&bytes).map_err(|e| e.to_string())?;
            time_write(repeats, || agentteams_mcp::json::to_string(black_box(&v)))
        }
        ("serde_json", "serialize") => {
            let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            time_write(repeats, || {
                serde_json::to_string(black_box(&v)).expect("a Value serializes")
            })
        }
        ("sonic-rs", "serialize") => {
            let v: sonic_rs::Value = sonic_rs::from_slice(&bytes).map_err(|e| e.to_string())?;
            time_write(repeats, || {
                sonic_rs::to_string(black_box(&v)).expect("a Value serializes")
            })
        }
        _ => return Err(format!("unknown library {library:?} or operation {op:?}")),
    };
    // The check, after the timing: serde_json's reading of the output against its reading of the
    // document.
    let reference: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("serde_json: {e}"))?;
    let back: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("the output does not parse: {e}"))?;
    if back != reference {
        return Err("the output reads back as a different value than the document".into());
    }
    Ok(median(&times))
}

/// Times `repeats` parses (each dropping its tree) after one warm-up; returns the times and the
/// text of one more parse, written by `write` (the same library's writer), for the check.
fn time_parse<'b, T>(
    repeats: usize,
    bytes: &'b [u8],
    parse: impl Fn(&'b [u8]) -> Result<T, String>,
    write: impl Fn(&T) -> String,
) -> Result<(Vec<Duration>, String), String> {
    drop(parse(bytes)?);
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = Instant::now();
        let tree = black_box(parse(black_box(bytes))?);
        drop(tree);
        times.push(start.elapsed());
    }
    let text = write(&parse(bytes)?);
    Ok((times, text))
}

/// Times `repeats` writes after one warm-up; returns the times and the last text for the check.
fn time_write(repeats: usize, write: impl Fn() -> String) -> (Vec<Duration>, String) {
    let mut text = write();
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = Instant::now();
        let out = black_box(write());
        times.push(start.elapsed());
        text = out;
    }
    (times, text)
}
