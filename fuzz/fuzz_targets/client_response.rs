//! Arbitrary bytes as an HTTP response to the client: the head parser, the body decoder (whatever
//! framing the head names), then the body as SSE or JSON through the protocol core. Nothing may
//! panic, and what is kept stays within the caps.
#![no_main]

use agentteams_mcp::client::core::{self, Incoming};
use agentteams_mcp::client::Answers;
use agentteams_mcp::http1::sse::SseParser;
use agentteams_mcp::http1::limits::MAX_RESPONSE_HEAD_BYTES;
use agentteams_mcp::http1::response::{self as wire, BodyDecoder};
use agentteams_mcp::json;
use libfuzzer_sys::fuzz_target;

const CAP: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Ok(Some((head, used))) = wire::parse_head(data) else {
        return;
    };
    assert!(used <= data.len() && used <= MAX_RESPONSE_HEAD_BYTES);
    let Ok(framing) = head.framing() else {
        return;
    };
    let mut decoder = BodyDecoder::new(framing);
    let mut body = Vec::new();
    let rest = &data[used..];
    // Feed in two uneven pieces, as sockets deliver.
    let split = rest.len() / 3;
    let Ok(a) = decoder.feed(&rest[..split], &mut body) else {
        return;
    };
    if a == split {
        if decoder.feed(&rest[split..], &mut body).is_err() {
            return;
        }
    }
    assert!(body.len() <= rest.len(), "decoding never invents bytes");
    let _ = decoder.at_eof();
    if head.media_type() == "text/event-stream" {
        let mut parser = SseParser::new(CAP);
        let mut events = Vec::new();
        if parser.feed(&body, &mut events).is_ok() {
            for e in events {
                assert!(e.data.len() <= CAP);
                if let Ok(v) = json::parse(e.data.as_bytes()) {
                    inspect(v);
                }
            }
        }
    } else if let Ok(v) = json::parse(&body) {
        inspect(v);
    }
});

/// Runs a parsed message through everything the client does with replies.
fn inspect(message: json::Value) {
    match core::classify(message.clone()) {
        Incoming::Response { message, .. } => {
            if let Ok(result) = core::result_of("tools/call", message) {
                let _ = core::tools_page(&result);
                let _ = core::tool_result("t", result);
            }
        }
        Incoming::Request { id, method, params } => {
            let _ = Answers::default().reply(id, &method, &params);
        }
        Incoming::Notification(_) | Incoming::Invalid(_) => {}
    }
    let mut c = core::Core::new("fuzz", "0", None);
    let _ = c.accept_initialize(message.clone());
    let _ = c.accept_discover(Ok(message));
}
