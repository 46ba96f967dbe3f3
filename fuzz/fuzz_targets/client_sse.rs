//! The SSE parser fed in arbitrary pieces must produce exactly what it produces fed all at once
//! (events, last event id, retry), and never keep an event over its cap.
#![no_main]

use agentteams_mcp::http1::sse::SseParser;
use libfuzzer_sys::fuzz_target;

const CAP: usize = 256;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    let mut whole = SseParser::new(CAP);
    let mut expected = Vec::new();
    let whole_ok = whole.feed(stream, &mut expected).is_ok();

    let mut pieces = SseParser::new(CAP);
    let mut got = Vec::new();
    let step = usize::from(cut % 7) + 1;
    let mut pieces_ok = true;
    for piece in stream.chunks(step) {
        if pieces.feed(piece, &mut got).is_err() {
            pieces_ok = false;
            break;
        }
    }
    assert_eq!(whole_ok, pieces_ok);
    if whole_ok {
        assert_eq!(got, expected);
        assert_eq!(pieces.last_event_id(), whole.last_event_id());
        assert_eq!(pieces.retry_ms(), whole.retry_ms());
    }
    for e in &expected {
        assert!(e.data.len() <= CAP);
    }
});
