//! What logging in costs a client once it holds a token: `tools/list` round trips over
//! Streamable HTTP with the token given as a static bearer (A) against the same token taken from
//! the OAuth token store, with `oauth::OAuth::authorize` asked before every POST (B), to one
//! `agentteams-mcp --serve-mcp gitread --http --auth-token-file` server. Rounds interleave A B
//! and B A; every reply is checked (the eight gitread tools); the min and median of the paired
//! per-round ratios B/A are printed.
//!
//! Usage: `cargo run --release --bin client_oauth -- --server PATH [--rounds N]` (PATH: the
//! release `agentteams-mcp`), under `taskset` to pin it.

use agentteams_mcp::client::oauth::{store::Store, OAuthConfig};
use agentteams_mcp::client::{Client, EraChoice, Options};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CALLS_PER_ROUND: usize = 300;
const TOKEN: &str = "bench-token-0123456789abcdef";

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut server, mut rounds) = (None, 21usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--server" => server = args.next(),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let server = server.expect("--server PATH");
    let dir = std::env::temp_dir().join(format!("client-oauth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let repo = std::env::current_dir().unwrap();
    let mut child = Command::new(&server)
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(&repo)
        .args(["--http", "--port", "0", "--auth-token-file"])
        .arg(&token_file)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    let store = dir.join("tokens.json");
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&store)
            .unwrap();
        std::io::Write::write_all(
            &mut f,
            format!(
                r#"{{"version":1,"entries":[{{"server":"{url}","issuer":"http://as","token_endpoint":"http://as/token","client_id":"c","auth_method":"none","access_token":"{TOKEN}"}}]}}"#
            )
            .as_bytes(),
        )
        .unwrap();
    }
    let base = Options {
        era: EraChoice::Legacy,
        ..Options::default()
    };
    let mut a = Client::connect_http(
        &url,
        Options {
            bearer_token: Some(TOKEN.into()),
            ..base.clone()
        },
    )
    .unwrap();
    let mut b = Client::connect_http(
        &url,
        Options {
            oauth: Some(OAuthConfig {
                store: Some(Store::at(&store)),
                interactive: false,
                ..OAuthConfig::default()
            }),
            ..base
        },
    )
    .unwrap();
    let run = |client: &mut Client| {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            let tools = client.list_tools().unwrap();
            assert_eq!(tools.len(), 8, "every reply checked");
        }
        start.elapsed()
    };
    let (mut ta, mut tb, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (da, db) = if round % 2 == 0 {
            let da = run(&mut a);
            (da, run(&mut b))
        } else {
            let db = run(&mut b);
            (run(&mut a), db)
        };
        ratios.push(db.as_secs_f64() / da.as_secs_f64());
        ta.push(da);
        tb.push(db);
    }
    let _ = a.close();
    let _ = b.close();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let per_call = |d: &Duration| d.as_secs_f64() * 1e6 / CALLS_PER_ROUND as f64;
    ta.sort();
    tb.sort();
    ratios.sort_by(f64::total_cmp);
    println!("tools/list over HTTP, {rounds} rounds x {CALLS_PER_ROUND} calls, interleaved");
    println!(
        "  A static bearer   min {:.1} us  median {:.1} us",
        per_call(&ta[0]),
        per_call(&ta[rounds / 2])
    );
    println!(
        "  B OAuth store     min {:.1} us  median {:.1} us",
        per_call(&tb[0]),
        per_call(&tb[rounds / 2])
    );
    println!(
        "  B/A paired        min {:.3}  median {:.3}",
        ratios[0],
        ratios[rounds / 2]
    );
}
