//! Any bytes as a `Last-Event-ID`: the strict parser never panics; an id it accepts is within
//! `MAX_EVENT_ID_BYTES`, has a valid replica name, and re-encodes to exactly the bytes it came from
//! (so two different headers can never name the same event).
#![no_main]

use agentteams_mcp::http::limits::MAX_EVENT_ID_BYTES;
use agentteams_mcp::http::streams::{is_replica_name, parse_event_id};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(id) = parse_event_id(data) {
        assert!(data.len() <= MAX_EVENT_ID_BYTES);
        assert!(is_replica_name(id.replica));
        let again = format!("{}.{}.{}.{}", id.replica, id.instance, id.stream, id.seq);
        assert_eq!(again.as_bytes(), data);
    }
});
