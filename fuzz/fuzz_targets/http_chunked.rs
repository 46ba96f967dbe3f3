//! Arbitrary bytes into the chunked-body decoder: never a panic, never more than the body limit,
//! and the same outcome however the input is split; plus encode → decode round trips.
#![no_main]

use agentteams_mcp::http1::chunked::{encode_chunk, ChunkedDecoder, LAST_CHUNK};
use agentteams_mcp::http::limits::MAX_BODY_BYTES;
use libfuzzer_sys::fuzz_target;

/// Decodes `parts` in order; the body, the bytes used, whether it ended, and the error if any.
fn decode(parts: &[&[u8]]) -> (Vec<u8>, usize, bool, Option<String>) {
    let mut decoder = ChunkedDecoder::new();
    let mut body = Vec::new();
    let mut used = 0;
    for part in parts {
        match decoder.decode(part, &mut body) {
            Ok(n) => {
                used += n;
                if decoder.is_done() {
                    break;
                }
                assert_eq!(n, part.len(), "an unfinished body uses all its input");
            }
            Err(e) => return (body, used, false, Some(e.to_string())),
        }
    }
    (body, used, decoder.is_done(), None)
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, input)) = data.split_first() else {
        return;
    };
    let whole = decode(&[input]);
    assert!(whole.0.len() <= MAX_BODY_BYTES);
    let cut = usize::from(split) * input.len() / 255;
    let (a, b) = input.split_at(cut);
    let split_run = decode(&[a, b]);
    // Bytes before an error may differ in how much was copied, never in the verdict.
    assert_eq!(whole.3.is_some(), split_run.3.is_some());
    if whole.3.is_none() {
        assert_eq!(whole, split_run);
    }

    let mut wire = Vec::new();
    for chunk in input.chunks(usize::from(split) + 1) {
        encode_chunk(chunk, &mut wire);
    }
    wire.extend_from_slice(LAST_CHUNK);
    let (body, used, done, error) = decode(&[&wire]);
    assert!(error.is_none() && done && used == wire.len());
    assert_eq!(body, input);
});
