//! Prints an RFC 7523 client assertion (`private_key_jwt`) signed with a private key file, for
//! trying a token endpoint by hand and for `conformance/jose_es256.sh`, which checks the
//! assertions with jose, the library of the conformance suite's authorization server.
//!
//! `cargo run --release --offline --example client_assertion -- KEY_FILE CLIENT_ID AUDIENCE [KID]`
//! (KEY_FILE: a private JWK with `d`, or PEM `PRIVATE KEY` / `EC PRIVATE KEY`; without KID, the
//! JWK's own `kid` when it has one). The assertion goes to stdout; an error to stderr, exit 2.
#![forbid(unsafe_code)]

use agentteams_mcp::crypto::assertion::{client_assertion, AssertionRequest};
use agentteams_mcp::crypto::private_key::read_private_key;

fn run(args: &[String]) -> Result<String, String> {
    let [path, client_id, audience, rest @ ..] = args else {
        return Err("usage: client_assertion KEY_FILE CLIENT_ID AUDIENCE [KID]".into());
    };
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let loaded = read_private_key(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let kid = rest.first().cloned().or(loaded.kid.clone());
    let request = AssertionRequest {
        client_id,
        audience,
        kid: kid.as_deref(),
    };
    client_assertion(&request, &loaded.key).map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(assertion) => println!("{assertion}"),
        Err(message) => {
            eprintln!("client_assertion: {message}");
            std::process::exit(2);
        }
    }
}
