//! The cost of a sealed session token (docs/PERFORMANCE.md, "Deployment"): sealing one at
//! `initialize`, and opening one (HMAC-SHA-256 check), which a replica does once per session it
//! first sees; later requests find the checked token in the session table.
//!
//! `cargo run --release --example sealed_token_bench [ITERATIONS]`
#![forbid(unsafe_code)]

use agentteams_mcp::http::sealed::{unix_now, Sealer, SessionKey};
use agentteams_mcp::server::Revision;
use std::time::Instant;

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let key = SessionKey::from_bytes(&[0x5a; 32]).expect("a 32-byte key");
    let sealer = Sealer::new(key, None).expect("/dev/urandom");
    let nonce = sealer.new_nonce().expect("a nonce");
    let now = unix_now();
    // A principal as OAuth mode seals it (`Grant::principal`): the longest token.
    let principal = Some("sha256:0123456789abcdef0123456789abcdef");
    // Five rounds; the minimum is the cost without interference from other jobs.
    let mut seal_ns = Vec::new();
    let mut open_ns = Vec::new();
    let seal = |at: u64| {
        sealer
            .seal(nonce, Revision::V2025_11_25, 0, principal, at)
            .expect("a principal of the grant's form")
    };
    let token = seal(now);
    for _ in 0..5 {
        let t = Instant::now();
        for i in 0..iterations {
            std::hint::black_box(seal(now + u64::from(i)));
        }
        seal_ns.push(t.elapsed().as_nanos() as f64 / f64::from(iterations));
        let t = Instant::now();
        for _ in 0..iterations {
            let opened = sealer.open(std::hint::black_box(token.as_bytes()), principal, now);
            assert!(opened.is_ok());
        }
        open_ns.push(t.elapsed().as_nanos() as f64 / f64::from(iterations));
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "seal: {:.0} ns min of 5 rounds; open (check): {:.0} ns min of 5 rounds; {iterations} each per round",
        min(&seal_ns),
        min(&open_ns)
    );
}
