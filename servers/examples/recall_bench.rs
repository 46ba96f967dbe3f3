//! In-process timings for bench/recall/bench.py (not a test): JSON parse time of the index files
//! alone, recall's cold first query (read, parse, validate, convert, rank) and warm queries.
//!
//! usage: recall_bench ROOT QUERIES_FILE  (each line: `index<TAB>query` or `code<TAB>query`)
//!        Prints one JSON object of timings in milliseconds.
//!        recall_bench once parse FILE...          (read and parse the files)
//!        recall_bench once query ROOT TOOL QUERY  (a new `Recall` answers one call, k=20)
//!        Does one of the two, once, in this new process, and prints its milliseconds: the cold
//!        case as a host meets it, where neither the allocator nor the caches have warmed up.
#![forbid(unsafe_code)]

use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{CallContext, CancelToken, ToolSet};
use agentteams_mcp_servers::recall::Recall;
use std::path::Path;
use std::time::Instant;

const REPEATS: usize = 7;

/// (minimum, median): on a shared machine the minimum approximates the uncontended cost.
fn min_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

fn args_for(query: &str) -> Map {
    let mut map = Map::new();
    map.insert("query", Value::from(query));
    map.insert("k", Value::from(20u64));
    map
}

fn call(recall: &Recall, tool: &str, query: &str) -> f64 {
    let ctx = CallContext::detached(CancelToken::new());
    let started = Instant::now();
    let out = recall.call(tool, &args_for(query), &ctx);
    let ms = started.elapsed().as_secs_f64() * 1e3;
    if let Err(e) = out {
        eprintln!("{tool} {query:?}: {e}");
        std::process::exit(1);
    }
    ms
}

fn parse_ms(path: &Path) -> (f64, f64) {
    let bytes = std::fs::read(path).unwrap_or_default();
    min_median(
        (0..REPEATS)
            .map(|_| {
                let started = Instant::now();
                let value = json::parse(&bytes);
                let ms = started.elapsed().as_secs_f64() * 1e3;
                assert!(value.is_ok(), "{} does not parse", path.display());
                ms
            })
            .collect(),
    )
}

/// Times one cold operation in this process (see the module docs).
fn once(args: &[String]) -> f64 {
    let started = Instant::now();
    match args {
        [what, files @ ..] if what == "parse" && !files.is_empty() => {
            // The trees are freed after the clock stops, as a query keeps what it loaded.
            let trees: Vec<json::Value> = files
                .iter()
                .map(|file| {
                    let bytes = std::fs::read(file).expect("index file");
                    json::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"))
                })
                .collect();
            let ms = started.elapsed().as_secs_f64() * 1e3;
            drop(trees);
            ms
        }
        [what, root, tool, query] if what == "query" => {
            let recall = Recall::new(Path::new(root)).expect("root");
            call(&recall, tool, query);
            started.elapsed().as_secs_f64() * 1e3
        }
        _ => {
            eprintln!("usage: recall_bench once parse FILE... | once query ROOT TOOL QUERY");
            std::process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "once") {
        println!("{}", once(&args[1..]));
        return;
    }
    let [root, queries] = args.as_slice() else {
        eprintln!("usage: recall_bench ROOT QUERIES_FILE");
        std::process::exit(2);
    };
    let root = Path::new(root);
    let text = std::fs::read_to_string(queries).expect("queries file");
    let mut by_tool: Vec<(&str, Vec<&str>)> = vec![("query_index", vec![]), ("query_code", vec![])];
    for line in text.lines() {
        match line.split_once('\t') {
            Some(("index", q)) => by_tool[0].1.push(q),
            Some(("code", q)) => by_tool[1].1.push(q),
            _ => {}
        }
    }
    let refs = root.join("references");
    let code = refs.join("code-index");
    let parse_memory = parse_ms(&refs.join("memory-index.json"));
    let parse_code = [
        "manifest.json",
        "local.json",
        "api-modules.json",
        "api-docs.json",
    ]
    .iter()
    .map(|f| parse_ms(&code.join(f)))
    .fold((0.0, 0.0), |acc, t| (acc.0 + t.0, acc.1 + t.1));
    let mut out = Map::new();
    out.insert("parse_memory_min_ms", Value::from(parse_memory.0));
    out.insert("parse_memory_median_ms", Value::from(parse_memory.1));
    out.insert("parse_code_min_ms", Value::from(parse_code.0));
    out.insert("parse_code_median_ms", Value::from(parse_code.1));
    for (tool, queries) in &by_tool {
        let cold = min_median(
            (0..REPEATS)
                .map(|_| {
                    let recall = Recall::new(root).expect("root");
                    let ms = call(&recall, tool, queries[0]);
                    // Let the previous tree's background free finish before the next sample.
                    drop(recall);
                    std::thread::sleep(std::time::Duration::from_millis(300));
                    ms
                })
                .collect(),
        );
        let recall = Recall::new(root).expect("root");
        call(&recall, tool, queries[0]);
        let warm: Vec<f64> = queries.iter().map(|q| call(&recall, tool, q)).collect();
        out.insert(format!("{tool}_cold_min_ms"), Value::from(cold.0));
        out.insert(format!("{tool}_cold_median_ms"), Value::from(cold.1));
        out.insert(
            format!("{tool}_warm_p50_ms"),
            Value::from(percentile(warm.clone(), 50.0)),
        );
        out.insert(
            format!("{tool}_warm_p99_ms"),
            Value::from(percentile(warm, 99.0)),
        );
        out.insert(format!("{tool}_queries"), Value::from(queries.len()));
    }
    println!("{}", json::to_string(&Value::Object(out)));
}
