//! What https through the TLS helper costs the client against plain http, on the same server:
//! one `tools/call` on a kept-alive connection, and opening a new connection (TCP connect
//! against the helper's start and handshake). Rounds alternate the order (http first, then https
//! first); each round gives the median of its samples; the report gives the min and median over
//! rounds of the paired ratios https/http.
//!
//! `cargo run --release -p agentteams-mcp-servers --example https_cost --
//! HTTP_URL HTTPS_URL CA_FILE [ROUNDS] [SAMPLES]` (bench/https/run.sh starts the server and a TLS
//! proxy and runs this).
#![forbid(unsafe_code)]

use agentteams_mcp::client::stream;
use agentteams_mcp::client::tls::TlsConfig;
use agentteams_mcp::client::{Client, Options};
use agentteams_mcp::http1::url::Url;
use agentteams_mcp::json::Map;
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median time of one kept-alive `tools/call`, in microseconds.
fn per_request(url: &str, options: &Options, samples: usize) -> f64 {
    let mut client = Client::connect_http(url, options.clone()).expect("connect");
    for _ in 0..10 {
        client
            .call_tool("test_simple_text", Map::new())
            .expect("call");
    }
    let times = (0..samples)
        .map(|_| {
            let t = Instant::now();
            client
                .call_tool("test_simple_text", Map::new())
                .expect("call");
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    client.close().expect("close");
    median(times)
}

/// The median time to open a connection and close it again, in microseconds.
fn per_connection(url: &str, tls: &TlsConfig, samples: usize) -> f64 {
    let url = Url::parse_client(url).expect("a URL");
    let timeout = Duration::from_secs(10);
    let times = (0..samples)
        .map(|_| {
            let t = Instant::now();
            let conn = stream::connect(&url, Some(tls), timeout, Instant::now() + timeout)
                .expect("a connection");
            drop(conn);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    median(times)
}

fn report(what: &str, pairs: &[(f64, f64)]) {
    let ratios: Vec<f64> = pairs.iter().map(|(http, https)| https / http).collect();
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let http = median(pairs.iter().map(|p| p.0).collect());
    let https = median(pairs.iter().map(|p| p.1).collect());
    println!(
        "{what}: http {http:.0} us, https {https:.0} us (medians of round medians); https/http min {min:.2}, median {:.2} over {} rounds",
        median(ratios.clone()),
        ratios.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [http, https, ca] = [0, 1, 2].map(|i| {
        args.get(i)
            .cloned()
            .expect("usage: https_cost HTTP_URL HTTPS_URL CA_FILE [ROUNDS] [SAMPLES]")
    });
    let number =
        |i: usize, default: usize| args.get(i).and_then(|n| n.parse().ok()).unwrap_or(default);
    let (rounds, samples) = (number(3, 8), number(4, 200));
    let tls = TlsConfig {
        helper: None,
        ca_file: Some(ca.into()),
    };
    let options = Options {
        tls: tls.clone(),
        ..Options::default()
    };
    let mut requests = Vec::new();
    let mut connections = Vec::new();
    for round in 0..rounds {
        let (request, connection) = if round % 2 == 0 {
            let r = per_request(&http, &options, samples);
            let c = per_connection(&http, &tls, samples / 4);
            (
                (r, per_request(&https, &options, samples)),
                (c, per_connection(&https, &tls, samples / 4)),
            )
        } else {
            let r = per_request(&https, &options, samples);
            let c = per_connection(&https, &tls, samples / 4);
            (
                (per_request(&http, &options, samples), r),
                (per_connection(&http, &tls, samples / 4), c),
            )
        };
        requests.push(request);
        connections.push(connection);
    }
    report("one tools/call on a kept-alive connection", &requests);
    report("a new connection (open and close)", &connections);
}
