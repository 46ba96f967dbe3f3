//! Any payload through the SSE writer must come back as exactly one `message` event whose data is
//! the payload with its line breaks normalised to LF, read by an independent WHATWG-style event
//! parser; and the chunk-framed form must decode to the same event bytes.
#![no_main]

use agentteams_mcp::http1::chunked::ChunkedDecoder;
use agentteams_mcp::http1::sse::{encode_event, encode_last_event};
use libfuzzer_sys::fuzz_target;

/// (event type, data) of each event in an SSE stream (HTML Living Standard §9.2.6).
fn parse_events(stream: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    let (mut kind, mut data, mut has_data) = (String::new(), String::new(), false);
    let normalised = stream.replace("\r\n", "\n").replace('\r', "\n");
    for line in normalised.split('\n') {
        if line.is_empty() {
            if has_data {
                data.pop(); // the LF after the last data line
                events.push((
                    if kind.is_empty() {
                        "message".into()
                    } else {
                        kind.clone()
                    },
                    data.clone(),
                ));
            }
            kind.clear();
            data.clear();
            has_data = false;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => kind = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
                has_data = true;
            }
            _ => {}
        }
    }
    events
}

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = std::str::from_utf8(data) else {
        return;
    };
    let mut event = Vec::new();
    encode_event(payload, &mut event);
    let text = String::from_utf8(event.clone()).expect("events are UTF-8");
    let expected = payload.replace("\r\n", "\n").replace('\r', "\n");
    assert_eq!(parse_events(&text), vec![("message".to_owned(), expected)]);

    let mut framed = Vec::new();
    encode_last_event(payload, &mut framed);
    let mut decoder = ChunkedDecoder::new();
    let mut body = Vec::new();
    // Events may be larger than a request body may be; only check framing within that limit.
    if let Ok(used) = decoder.decode(&framed, &mut body) {
        assert!(decoder.is_done() && used == framed.len());
        assert_eq!(body, event);
    }
});
