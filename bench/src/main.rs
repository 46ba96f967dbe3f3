//! JSON parse and serialize throughput of `agentteams_mcp::json` against serde_json and sonic-rs,
//! measured in the same process on the same bytes, in interleaved rounds, every result checked.
//!
//! For each corpus document and each operation, every round runs the three libraries once each, in
//! an order that rotates from round to round (all six orders in turn, so none always inherits the
//! other's cache and heap), and takes the ratio of each other library's time to ours within that
//! round (a paired ratio: a slow phase of a busy machine hits the whole round). The report gives the
//! minimum and the median of those paired ratios over the rounds (above 1.00x we are faster), and
//! each library's median time as MB/s of the document's size. Within a round each library runs
//! `--repeats` times back to back and the round keeps its fastest run, so that one preemption on a
//! shared machine does not make a round's ratio.
//!
//! - Parse is bytes to each library's own tree (`json::Value`, `serde_json::Value`,
//!   `sonic_rs::Value`), including dropping it; the check between the two is not timed. Every
//!   result is compared with serde_json's value of the same document: numbers by kind (unsigned,
//!   signed, float bit for bit), strings, arrays, objects' keys and values.
//! - Serialize is each library's tree to compact text; every output is parsed back with serde_json
//!   (outside the timing) and must equal the document's value.
//!
//! Rotating the order spreads what one library inherits from another (its caches, its heap) but
//! does not remove it: sonic-rs parses twitter.json about twice as slowly here as in a process of
//! its own. `src/bin/json_isolated.rs` runs each library in a process of its own; its figures are
//! the like-for-like ones, this driver's are for ordering changes of our own and for a profiler.
//!
//! Run pinned to one CPU so the three share one core's caches and frequency:
//! `taskset -c 1 target/release/agentteams-mcp-bench --rounds 40`.
//!
//! Usage: `agentteams-mcp-bench [--rounds N] [--repeats N] [--data DIR] [--ours-only] [--only parse|serialize] [FILE...]` (DIR holds
//! `corpus/`; by default `bench/data`, where `bench/data/README.md` says how to fetch the corpus,
//! which the repository does not redistribute).

use agentteams_mcp_bench::{
    median, paired_ratios, print_table_head, DATA_IN_CRATE, DEFAULT_FILES, LIBRARIES,
    ROTATING_ORDERS as ORDERS,
};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DEFAULT_ROUNDS: usize = 40;
/// Runs of each library within a round; the round keeps the fastest, so a preemption inside one
/// run (the machine is shared) does not decide a paired ratio.
const DEFAULT_REPEATS: usize = 5;

const OURS: usize = 0;

struct Options {
    rounds: usize,
    repeats: usize,
    data: PathBuf,
    files: Vec<String>,
    /// Run only agentteams_mcp::json (for a profiler); no comparison is printed.
    ours_only: bool,
    /// Run only this operation ("parse" or "serialize"), for a profiler.
    only: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut rounds = DEFAULT_ROUNDS;
    let mut repeats = DEFAULT_REPEATS;
    let mut data = None;
    let mut files = Vec::new();
    let mut ours_only = false;
    let mut only = None;
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
            "--repeats" => {
                let n = args.next().ok_or("--repeats needs a number")?;
                repeats = n
                    .parse()
                    .map_err(|_| format!("--repeats: {n:?} is not a number"))?;
                if repeats == 0 {
                    return Err("--repeats must be at least 1".into());
                }
            }
            "--ours-only" => ours_only = true,
            "--only" => match args.next().as_deref() {
                Some(op @ ("parse" | "serialize")) => only = Some(op.to_string()),
                _ => return Err("--only needs parse or serialize".into()),
            },
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
        rounds,
        repeats,
        data,
        files,
        ours_only,
        only,
    })
}

/// Whether our value equals serde_json's: same kinds, numbers of the same kind and bits, same
/// strings, arrays element by element, objects with the same keys (serde_json keeps the last of
/// duplicate keys, as `Map::get` answers).
fn same(ours: &agentteams_mcp::json::Value, theirs: &serde_json::Value) -> bool {
    use agentteams_mcp::json::Value as V;
    use serde_json::Value as S;
    match (ours, theirs) {
        (V::Null, S::Null) => true,
        (V::Bool(a), S::Bool(b)) => a == b,
        (V::String(a), S::String(b)) => a == b,
        (V::Number(a), S::Number(b)) => {
            if a.is_float() {
                b.is_f64() && b.as_f64().map(f64::to_bits) == Some(a.as_f64().to_bits())
            } else if let Some(u) = a.as_u64() {
                b.as_u64() == Some(u)
            } else if let Some(i) = a.as_i64() {
                b.as_i64() == Some(i)
            } else {
                // Kept as text (beyond 64 bits or f64's range): serde_json reads it as an f64.
                b.as_f64().map(f64::to_bits) == Some(a.as_f64().to_bits())
            }
        }
        (V::Array(a), S::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (V::Object(a), S::Object(b)) => {
            a.keys().collect::<std::collections::HashSet<_>>().len() == b.len()
                && b.iter().all(|(k, y)| a.get(k).is_some_and(|x| same(x, y)))
        }
        _ => false,
    }
}

/// What one library does to one document, with the check of its result.
trait Contender {
    /// Runs the operation once; returns the time it took (the check excluded) or what was wrong.
    fn run(&mut self) -> Result<Duration, String>;
}

/// Parse with `parse`, check the tree with `check`, then drop it (timed with the parse).
struct Parse<T, P, C> {
    parse: P,
    check: C,
    _tree: std::marker::PhantomData<T>,
}

impl<T, P: FnMut() -> T, C: FnMut(&T) -> Result<(), String>> Contender for Parse<T, P, C> {
    fn run(&mut self) -> Result<Duration, String> {
        let start = Instant::now();
        let tree = black_box((self.parse)());
        let parsed = start.elapsed();
        (self.check)(&tree)?;
        let start = Instant::now();
        drop(black_box(tree));
        Ok(parsed + start.elapsed())
    }
}

fn parse_contender<'a, T: 'a>(
    parse: impl FnMut() -> T + 'a,
    check: impl FnMut(&T) -> Result<(), String> + 'a,
) -> Box<dyn Contender + 'a> {
    Box::new(Parse {
        parse,
        check,
        _tree: std::marker::PhantomData,
    })
}

/// Serialize with `write`; the text must read back (with serde_json) as `reference`.
struct Serialize<'a, W> {
    write: W,
    reference: &'a serde_json::Value,
}

impl<W: FnMut() -> String> Contender for Serialize<'_, W> {
    fn run(&mut self) -> Result<Duration, String> {
        let start = Instant::now();
        let text = black_box((self.write)());
        let took = start.elapsed();
        let back: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("the serialized text does not parse: {e}"))?;
        if &back != self.reference {
            return Err("the serialized text reads back as a different value".into());
        }
        Ok(took)
    }
}

/// The times of every round, per library (`None` for a library not run).
struct Rounds {
    times: Vec<Vec<Duration>>,
}

fn run_rounds(
    rounds: usize,
    repeats: usize,
    contenders: &mut [Option<Box<dyn Contender + '_>>],
) -> Result<Rounds, String> {
    // One warm-up run each, checked like the others.
    for (i, c) in contenders.iter_mut().enumerate() {
        if let Some(c) = c {
            c.run().map_err(|e| format!("{}: {e}", LIBRARIES[i]))?;
        }
    }
    let mut times = vec![Vec::with_capacity(rounds); contenders.len()];
    for round in 0..rounds {
        for &i in &ORDERS[round % ORDERS.len()] {
            if let Some(c) = &mut contenders[i] {
                let mut fastest = Duration::MAX;
                for _ in 0..repeats {
                    let t = c.run().map_err(|e| format!("{}: {e}", LIBRARIES[i]))?;
                    fastest = fastest.min(t);
                }
                times[i].push(fastest);
            }
        }
    }
    Ok(Rounds { times })
}

fn mb_per_s(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e6
}

fn report(file: &str, what: &str, bytes: usize, rounds: &Rounds) {
    let speed = |i: usize| match rounds.times[i].is_empty() {
        true => "-".to_string(),
        false => format!("{:.1}", mb_per_s(bytes, median(&rounds.times[i]))),
    };
    let versus = |i: usize| match rounds.times[i].is_empty() {
        true => "-".to_string(),
        false => {
            let (min, median) = paired_ratios(&rounds.times[OURS], &rounds.times[i]);
            format!("{min:.2}x / {median:.2}x")
        }
    };
    println!(
        "| {file} | {what} | {} | {} | {} | {} | {} |",
        speed(0),
        speed(1),
        speed(2),
        versus(1),
        versus(2)
    );
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
        "rounds: {} (each library {} times a round, the fastest kept; order rotating), data: {}",
        opts.rounds,
        opts.repeats,
        opts.data.display()
    );
    print_table_head();
    for file in &opts.files {
        if let Err(e) = bench_file(&opts, file) {
            eprintln!("bench: {file}: {e}");
            std::process::exit(1);
        }
    }
}

fn bench_file(opts: &Options, file: &str) -> Result<(), String> {
    let path = opts.data.join("corpus").join(file);
    let bytes = std::fs::read(&path).map_err(|e| {
        format!(
            "cannot read {}: {e} (fetch the corpus as bench/data/README.md says, or pass --data DIR)",
            path.display()
        )
    })?;
    let reference: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("serde_json: {e}"))?;
    let others = !opts.ours_only;
    let runs = |op: &str| opts.only.as_deref().is_none_or(|only| only == op);

    let mut parsers: Vec<Option<Box<dyn Contender + '_>>> = vec![
        Some(parse_contender(
            || agentteams_mcp::json::parse(black_box(&bytes)),
            |tree| match tree {
                Ok(v) if same(v, &reference) => Ok(()),
                Ok(_) => Err("parsed to a different value than serde_json's".into()),
                Err(e) => Err(format!("does not parse: {e}")),
            },
        )),
        others.then(|| {
            parse_contender(
                || serde_json::from_slice::<serde_json::Value>(black_box(&bytes)),
                |tree| match tree {
                    Ok(v) if v == &reference => Ok(()),
                    Ok(_) => Err("parsed to a different value than its first parse".into()),
                    Err(e) => Err(format!("does not parse: {e}")),
                },
            )
        }),
        others.then(|| {
            parse_contender(
                || sonic_rs::from_slice::<sonic_rs::Value>(black_box(&bytes)),
                |tree| match tree {
                    Ok(v) => match serde_json::to_value(v) {
                        Ok(v) if v == reference => Ok(()),
                        Ok(_) => Err("parsed to a different value than serde_json's".into()),
                        Err(e) => Err(format!("cannot convert its value: {e}")),
                    },
                    Err(e) => Err(format!("does not parse: {e}")),
                },
            )
        }),
    ];
    if runs("parse") {
        let rounds = run_rounds(opts.rounds, opts.repeats, &mut parsers)?;
        report(file, "parse", bytes.len(), &rounds);
    }
    drop(parsers);

    let ours = agentteams_mcp::json::parse(&bytes).map_err(|e| e.to_string())?;
    let sonic: sonic_rs::Value = sonic_rs::from_slice(&bytes).map_err(|e| e.to_string())?;
    let serialize = |write| -> Box<dyn Contender + '_> {
        Box::new(Serialize {
            write,
            reference: &reference,
        })
    };
    let mut writers: Vec<Option<Box<dyn Contender + '_>>> = vec![
        Some(serialize(
            Box::new(|| agentteams_mcp::json::to_string(black_box(&ours)))
                as Box<dyn FnMut() -> String>,
        )),
        others.then(|| {
            serialize(Box::new(|| {
                serde_json::to_string(black_box(&reference)).expect("a Value serializes")
            }))
        }),
        others.then(|| {
            serialize(Box::new(|| {
                sonic_rs::to_string(black_box(&sonic)).expect("a Value serializes")
            }))
        }),
    ];
    if runs("serialize") {
        let rounds = run_rounds(opts.rounds, opts.repeats, &mut writers)?;
        report(file, "serialize (compact)", bytes.len(), &rounds);
    }
    Ok(())
}
