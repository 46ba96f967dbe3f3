//! Times sequential `tools/call`s through the library's HTTP client, for the before/after
//! comparison of keep-alive (`client_ab.py` beside this file): one client, legacy session,
//! `--calls N` calls of the conformance fixture's `test_simple_text`, every reply checked.
//!
//! Built with rustc alone against the library of the build under test (no Cargo project, so the
//! same source links to two builds):
//! `rustc -O --edition 2021 calls.rs --extern agentteams_mcp=$(ls TARGET/release/deps/libagentteams_mcp-*.rlib)
//! -o calls` after `cargo build --release --offline -p agentteams-mcp-servers` (one such rlib).
//! Usage: `calls URL [--calls N]`; prints one JSON line `{"calls": N, "secs": S}`.
use agentteams_mcp::client::{Client, EraChoice, Options};
use agentteams_mcp::json::Map;
use std::time::Instant;

/// What `test_simple_text` answers; any other reply aborts the run.
const EXPECTED: &str = "This is a simple text response for testing.";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = args.first().expect("usage: calls URL [--calls N]").clone();
    let calls: usize = match args.get(1).map(String::as_str) {
        Some("--calls") => args.get(2).and_then(|n| n.parse().ok()).expect("--calls N"),
        _ => 1000,
    };
    let options = Options {
        era: EraChoice::Legacy,
        ..Options::default()
    };
    let mut client = Client::connect_http(&url, options).expect("connect");
    let start = Instant::now();
    for i in 0..calls {
        let text = client
            .call_tool("test_simple_text", Map::new())
            .unwrap_or_else(|e| panic!("call {i}: {e}"))
            .text();
        assert_eq!(text, EXPECTED, "call {i}");
    }
    let secs = start.elapsed().as_secs_f64();
    client.close().expect("close");
    println!("{{\"calls\": {calls}, \"secs\": {secs:.6}}}");
}
