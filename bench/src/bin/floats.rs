//! Float formatting alone: ns per float of `json::write_python_float` against serde_json writing
//! the same `f64`s, both appending to a `Vec<u8>` (so neither checks its text as UTF-8), over every
//! float of a corpus document (canada.json by default), in rotating interleaved rounds. Every text
//! is checked: it must read back as the same bits.
//!
//! Usage: `floats [--rounds N] [FILE]` (FILE defaults to `data/corpus/canada.json`); run it
//! pinned: `taskset -c 1 target/release/floats --rounds 20 ../data/json/corpus/canada.json`.

use std::hint::black_box;
use std::time::Instant;

fn floats_of(value: &agentteams_mcp::json::Value, out: &mut Vec<f64>) {
    use agentteams_mcp::json::Value;
    match value {
        Value::Number(n) if n.is_float() => out.push(n.as_f64()),
        Value::Array(a) => a.iter().for_each(|v| floats_of(v, out)),
        Value::Object(m) => m.values().for_each(|v| floats_of(v, out)),
        _ => {}
    }
}

/// Ours, out of line (as serde_json's `write_to_zmij_buffer` is), so that callgrind can count its
/// instructions alone: `--toggle-collect='floats::write_ours*'`.
#[inline(never)]
fn write_ours(f: f64, text: &mut Vec<u8>) {
    agentteams_mcp::json::write_python_float(f, text);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut rounds = 20;
    let mut file = concat!(env!("CARGO_MANIFEST_DIR"), "/data/corpus/canada.json").to_string();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            _ => file = arg,
        }
    }
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut floats = Vec::new();
    floats_of(
        &agentteams_mcp::json::parse(&bytes).expect("parses"),
        &mut floats,
    );
    assert!(!floats.is_empty(), "{file} has no floats");
    let mut ours_text = Vec::with_capacity(floats.len() * 24);
    let mut theirs_text = Vec::with_capacity(floats.len() * 24);
    let ours = |text: &mut Vec<u8>| {
        text.clear();
        for &f in &floats {
            write_ours(black_box(f), text);
            text.push(b',');
        }
    };
    let theirs = |text: &mut Vec<u8>| {
        text.clear();
        for &f in &floats {
            serde_json::to_writer(&mut *text, &black_box(f)).expect("writes");
            text.push(b',');
        }
    };
    let check = |text: &[u8]| {
        let back: Vec<f64> = std::str::from_utf8(text)
            .expect("UTF-8")
            .trim_end_matches(',')
            .split(',')
            .map(|t| t.parse().expect("a float"))
            .collect();
        assert!(
            back.len() == floats.len()
                && back
                    .iter()
                    .zip(&floats)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
            "a float did not read back"
        );
    };
    let (mut ours_ns, mut theirs_ns) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut time_ours = || {
            let t = Instant::now();
            ours(&mut ours_text);
            let ns = t.elapsed().as_secs_f64() * 1e9 / floats.len() as f64;
            check(&ours_text);
            ns
        };
        let mut time_theirs = || {
            let t = Instant::now();
            theirs(&mut theirs_text);
            let ns = t.elapsed().as_secs_f64() * 1e9 / floats.len() as f64;
            check(&theirs_text);
            ns
        };
        if round % 2 == 0 {
            ours_ns.push(time_ours());
            theirs_ns.push(time_theirs());
        } else {
            theirs_ns.push(time_theirs());
            ours_ns.push(time_ours());
        }
    }
    let mut ratios: Vec<f64> = ours_ns.iter().zip(&theirs_ns).map(|(o, t)| t / o).collect();
    ratios.sort_by(f64::total_cmp);
    let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    println!(
        "{} floats: ours min {:.1} ns, serde_json min {:.1} ns per float; serde_json / ours: min {:.2}x, median {:.2}x of paired ratios",
        floats.len(),
        min(&ours_ns),
        min(&theirs_ns),
        ratios[0],
        ratios[ratios.len() / 2]
    );
}
