//! Arbitrary bytes into the HTTP request-head parser: it must answer complete, partial or a typed
//! error, never panic; a complete head respects every limit, parses the same when cut at its end,
//! and each of its strict prefixes is partial.
#![no_main]

use agentteams_mcp::http::limits::{MAX_HEADERS, MAX_HEAD_BYTES, MAX_REQUEST_LINE};
use agentteams_mcp::http1::request::{parse_head, BodyLength, Status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(Status::Complete(head, len)) = parse_head(data) else {
        return;
    };
    assert!(len <= data.len() && len <= MAX_HEAD_BYTES);
    assert!(head.headers.len() <= MAX_HEADERS);
    assert!(
        !head.method.is_empty()
            && head.method.len() + head.target.len() + 10 <= MAX_REQUEST_LINE + 1
    );
    assert!(data[..len].ends_with(b"\r\n\r\n"));
    for h in &head.headers {
        assert!(!h.name.is_empty());
        assert!(!h.value.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0));
    }
    if let Ok(BodyLength::Fixed(n)) = head.body_length() {
        assert!(n > 0);
    }
    let _ = head.keep_alive();
    match parse_head(&data[..len]) {
        Ok(Status::Complete(again, n)) => assert!(n == len && again == head),
        other => panic!("the head alone must parse the same: {other:?}"),
    }
    // Bounded work: check a few prefixes, not all of them.
    for cut in [len - 1, len / 2, 1] {
        assert_eq!(
            parse_head(&data[..cut]),
            Ok(Status::Partial),
            "prefix {cut}"
        );
    }
});
