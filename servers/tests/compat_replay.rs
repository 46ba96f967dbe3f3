//! `--compat reference` replays recorded exchanges with the reference (`servers/tests/data/`,
//! README there): every line sent at once, as a pipelining host does, through the real binary
//! over stdio; the replies, in request order, equal the recorded ones value for value (member
//! order included), except where the record notes the product's own reply and why
//! (docs/compatibility.md).

mod common;
mod gitread_support;

use agentteams_mcp::json::{self, Value};
use agentteams_mcp::stdio::MAX_LINE_BYTES;
use common::Host;

/// One line sent and the replies the product gives to it under `--compat reference`.
struct Step {
    line: usize,
    send: Vec<u8>,
    replies: Vec<Value>,
}

/// A line the record names instead of spelling it out.
fn generated(name: &str) -> Vec<u8> {
    match name {
        // One byte over the cap, counting the newline (the reference counts code points; all
        // ASCII here, so the same).
        "overlong" => vec![b'x'; MAX_LINE_BYTES],
        "blank-overlong" => vec![b' '; 2 * MAX_LINE_BYTES],
        "invalid-utf8" => b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"p\xffing\"}".to_vec(),
        other => panic!("the record names an unknown generated line {other:?}"),
    }
}

/// Reads an exchange: `> LINE` is sent as is (`>` alone: an empty line), `>> NAME` is a generated
/// line, `< REPLY` is the reference's reply, `~ REPLY` the product's where it differs (every `~`
/// after a sent line replaces all its `<`), `#` a comment. `$VERSION` is the product's version.
fn read_exchange(file: &str) -> Vec<Step> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("the recorded exchange");
    let parse = |n: usize, reply: &str| {
        let reply = reply.replace("$VERSION", env!("CARGO_PKG_VERSION"));
        json::parse(reply.as_bytes()).unwrap_or_else(|e| panic!("{file}:{n}: {e}"))
    };
    let mut steps: Vec<Step> = Vec::new();
    // Per step: the reference's replies, and the product's when they differ.
    let mut reference: Vec<Vec<Value>> = Vec::new();
    let mut product: Vec<Option<Vec<Value>>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let (send, reply) = if let Some(name) = line.strip_prefix(">> ") {
            (Some(generated(name)), None)
        } else if let Some(rest) = line.strip_prefix('>') {
            (
                Some(rest.strip_prefix(' ').unwrap_or(rest).as_bytes().to_vec()),
                None,
            )
        } else if let Some(reply) = line.strip_prefix("< ") {
            (None, Some((false, parse(n, reply))))
        } else if let Some(reply) = line.strip_prefix("~ ") {
            (None, Some((true, parse(n, reply))))
        } else {
            assert!(
                line.is_empty() || line.starts_with('#'),
                "{file}:{n}: {line}"
            );
            (None, None)
        };
        if let Some(mut send) = send {
            send.push(b'\n');
            steps.push(Step {
                line: n,
                send,
                replies: Vec::new(),
            });
            reference.push(Vec::new());
            product.push(None);
        }
        if let Some((ours, reply)) = reply {
            let step = steps
                .len()
                .checked_sub(1)
                .expect("a reply follows a sent line");
            match ours {
                false => reference[step].push(reply),
                true => product[step].get_or_insert_with(Vec::new).push(reply),
            }
        }
    }
    for ((step, reference), product) in steps.iter_mut().zip(reference).zip(product) {
        assert!(
            product.as_ref() != Some(&reference),
            "{file}:{}: a `~` reply equal to the reference's says nothing",
            step.line
        );
        step.replies = product.unwrap_or(reference);
    }
    steps
}

/// Sends every line of `file` at once and checks the replies one by one, in order.
fn replay(file: &str, server: &str, root: &std::path::Path) {
    let steps = read_exchange(file);
    let mut host = Host::start(server, root, &["--compat", "reference"]);
    let input: Vec<u8> = steps.iter().flat_map(|s| s.send.iter().copied()).collect();
    host.write(&input);
    for step in &steps {
        for expected in &step.replies {
            let got = host.recv();
            assert!(
                got == *expected,
                "{file}:{}: the reply to this line differs\n got: {got}\nwant: {expected}",
                step.line
            );
        }
    }
    assert!(host.close().success());
}

#[test]
fn gitread_replays_the_reference_exchange_in_request_order() {
    // Two commits and the untracked new.txt (REFERENCE-BEHAVIOUR.md §10 item 12).
    let f = gitread_support::Fixture::new("compat-replay");
    replay("reference-gitread.exchange", "gitread", &f.root);
}

#[test]
fn recall_replays_the_reference_exchange_in_request_order() {
    let project = common::TempDir::new("compat-replay-recall");
    replay("reference-recall.exchange", "recall", project.path());
}
