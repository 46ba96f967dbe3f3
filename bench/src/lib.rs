//! What the JSON bench drivers share: the libraries they compare, the rotation of the order in which an interleaved round runs
//! three contenders (so that none always runs first, last, or after the same other one), and the
//! report: its table head, medians and paired ratios.
//!
//! The drivers themselves are the binaries (`src/main.rs` and `src/bin/`); this library holds no
//! measurement.

/// The orders in which one round runs three contenders, taken in turn: every contender in every
/// place, and after every other.
pub const ROTATING_ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [2, 1, 0],
    [1, 2, 0],
    [0, 2, 1],
    [2, 0, 1],
    [1, 0, 2],
];

/// The corpus documents a driver runs when none is named.
pub const DEFAULT_FILES: &[&str] = &["canada.json", "citm_catalog.json", "twitter.json"];
/// The default data folder, relative to the bench crate: it holds `corpus/` once fetched.
pub const DATA_IN_CRATE: &str = "data";

/// The JSON libraries compared, in the order of the reports' columns; ours is first.
pub const LIBRARIES: [&str; 3] = ["agentteams_mcp::json", "serde_json", "sonic-rs"];

/// Prints the head of the report's table (the rows are `| file | operation | MB/s ×3 | ratio ×2 |`).
pub fn print_table_head() {
    print_table_head_for(LIBRARIES);
}

/// [`print_table_head`] naming `libraries` (ours first, as measured: a driver may measure
/// another of our document types in the first column).
pub fn print_table_head_for(libraries: [&str; 3]) {
    println!(
        "| file | operation | {} MB/s | {} MB/s | {} MB/s | serde_json / ours: min / median of paired ratios | sonic-rs / ours: min / median |",
        libraries[0], libraries[1], libraries[2]
    );
    println!("|---|---|---|---|---|---|---|");
}

/// The median of `times` (the upper one of an even count).
pub fn median(times: &[std::time::Duration]) -> std::time::Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// Min and median over the rounds of `their time / our time` (round by round).
pub fn paired_ratios(ours: &[std::time::Duration], theirs: &[std::time::Duration]) -> (f64, f64) {
    let mut ratios: Vec<f64> = ours
        .iter()
        .zip(theirs)
        .map(|(o, t)| t.as_secs_f64() / o.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    (ratios[0], ratios[ratios.len() / 2])
}
