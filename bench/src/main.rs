//! JSON throughput of `agentteams_mcp::json` against `serde_json::Value`, measured in the same run.
//!
//! For each corpus document: parse (bytes to a value) and serialize (value to compact text), each
//! timed over many iterations with the two libraries interleaved, so that whatever else the machine
//! is doing slows both alike. Reports the median time as MB/s of the document's size (the same
//! numerator for both libraries, so the ratio is the ratio of median times), the ratio of the
//! medians (serde time / our time: above 1 means we are faster) and the median of the ratios of
//! back-to-back pairs, which is the steadier figure on a busy machine.
//!
//! Usage: `cargo run --release --bin agentteams-mcp-bench -- [--iterations N] [--data DIR] [FILE...]`
//! (DIR holds `corpus/`; by default `bench/data`, where `bench/data/README.md` says how to fetch the
//! corpus, which the repository does not redistribute).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DEFAULT_ITERATIONS: usize = 200;
const DEFAULT_FILES: &[&str] = &["canada.json", "citm_catalog.json", "twitter.json"];
/// The default data folder, relative to this crate: it holds `corpus/` once fetched.
const DATA_IN_CRATE: &str = "data";

struct Options {
    iterations: usize,
    data: PathBuf,
    files: Vec<String>,
    /// Run only agentteams_mcp::json (for a profiler); no comparison is printed.
    ours_only: bool,
}

fn options() -> Result<Options, String> {
    let mut iterations = DEFAULT_ITERATIONS;
    let mut data = None;
    let mut files = Vec::new();
    let mut ours_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--iterations" => {
                let n = args.next().ok_or("--iterations needs a number")?;
                iterations = n
                    .parse()
                    .map_err(|_| format!("--iterations: {n:?} is not a number"))?;
                if iterations == 0 {
                    return Err("--iterations must be at least 1".into());
                }
            }
            "--ours-only" => ours_only = true,
            "--data" => data = Some(PathBuf::from(args.next().ok_or("--data needs a folder")?)),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => files.push(arg),
        }
    }
    let data = match data {
        Some(d) => d,
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_IN_CRATE),
    };
    if files.is_empty() {
        files = DEFAULT_FILES.iter().map(|s| s.to_string()).collect();
    }
    Ok(Options {
        iterations,
        data,
        files,
        ours_only,
    })
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn mb_per_s(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e6
}

/// The medians of one comparison: each library's time, and the median of the per-iteration ratios
/// theirs/ours (each pair ran back to back, so a slow phase of a busy machine hits both alike).
struct Medians {
    ours: Duration,
    theirs: Option<(Duration, f64)>,
}

/// Times `ours` and `theirs` back to back `iterations` times (after one warm-up each); `theirs`
/// is skipped when `ours_only`.
fn compare(
    iterations: usize,
    ours_only: bool,
    mut ours: impl FnMut(),
    mut theirs: impl FnMut(),
) -> Medians {
    ours();
    if !ours_only {
        theirs();
    }
    let mut a = Vec::with_capacity(iterations);
    let mut b = Vec::with_capacity(iterations);
    for i in 0..iterations {
        if ours_only {
            a.push(time(&mut ours));
        } else if i % 2 == 0 {
            // Alternate who goes first, so neither always inherits the other's cache and heap.
            a.push(time(&mut ours));
            b.push(time(&mut theirs));
        } else {
            b.push(time(&mut theirs));
            a.push(time(&mut ours));
        }
    }
    let mut ratios: Vec<f64> = a
        .iter()
        .zip(&b)
        .map(|(ours, theirs)| theirs.as_secs_f64() / ours.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    Medians {
        ours: median(&mut a),
        theirs: (!ours_only).then(|| (median(&mut b), ratios[ratios.len() / 2])),
    }
}

fn time(f: &mut dyn FnMut()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn report(file: &str, what: &str, bytes: usize, medians: Medians) {
    let ours = medians.ours;
    match medians.theirs {
        Some((theirs, paired)) => println!(
            "| {file} | {what} | {:.1} | {:.1} | {:.2}x | {paired:.2}x |",
            mb_per_s(bytes, ours),
            mb_per_s(bytes, theirs),
            theirs.as_secs_f64() / ours.as_secs_f64()
        ),
        None => println!(
            "| {file} | {what} | {:.1} | - | - | - |",
            mb_per_s(bytes, ours)
        ),
    }
}

fn main() {
    let opts = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "iterations: {} (median of each), data: {}",
        opts.iterations,
        opts.data.display()
    );
    println!(
        "| file | operation | agentteams_mcp::json MB/s | serde_json::Value MB/s | ratio of medians | median of paired ratios |"
    );
    println!("|---|---|---|---|---|---|");
    for file in &opts.files {
        let path = opts.data.join("corpus").join(file);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!(
                    "bench: cannot read {}: {e} (fetch the corpus as bench/data/README.md says, \
                     or pass --data DIR)",
                    path.display()
                );
                std::process::exit(2);
            }
        };
        let parse = compare(
            opts.iterations,
            opts.ours_only,
            || {
                black_box(agentteams_mcp::json::parse(black_box(&bytes)).expect("parses"));
            },
            || {
                black_box(
                    serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).expect("parses"),
                );
            },
        );
        report(file, "parse", bytes.len(), parse);

        let our_value = agentteams_mcp::json::parse(&bytes).expect("parses");
        let their_value: serde_json::Value = serde_json::from_slice(&bytes).expect("parses");
        let serialize = compare(
            opts.iterations,
            opts.ours_only,
            || {
                black_box(agentteams_mcp::json::to_string(black_box(&our_value)));
            },
            || {
                black_box(serde_json::to_string(black_box(&their_value)).expect("serializes"));
            },
        );
        report(file, "serialize (compact)", bytes.len(), serialize);
    }
}
