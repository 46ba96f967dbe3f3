//! Parse → write → parse: whatever the parser accepts, the compact writer must write back to an
//! equal value (and the same text again, into a `String` or into bytes), and the pretty sorted
//! writer's output must parse back to a value whose pretty form is identical (equal up to key order).
//! Every object key and string value is held inline exactly when it is short enough, and reads
//! back as the same text whether taken as bytes or as a `str`.
#![no_main]

use agentteams_mcp::json::{self, Text, Value, TEXT_INLINE_CAPACITY};
use libfuzzer_sys::fuzz_target;

/// Checks `text` is inline exactly when short enough, and the same as bytes and as a `str`.
fn check_text(text: &Text) {
    assert_eq!(text.is_inline(), text.len() <= TEXT_INLINE_CAPACITY, "{text:?}");
    assert_eq!(text.as_str().as_bytes(), text.as_bytes());
}

/// Checks every key and string of `root` (walked with a stack: the tree may be deep).
fn check_text_of(root: &Value) {
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(elements) => stack.extend(elements.iter()),
            Value::Object(map) => {
                for (key, child) in map.iter() {
                    check_text(key);
                    assert!(map.contains_key(key));
                    stack.push(child);
                }
            }
            Value::String(text) => check_text(text),
            _ => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(first) = json::parse(data) else {
        return;
    };
    check_text_of(&first);
    let compact = json::to_string(&first);
    let second = json::parse(compact.as_bytes()).expect("compact output parses");
    assert!(
        second == first,
        "compact round trip changed the value: {compact}"
    );
    assert_eq!(json::to_string(&second), compact);
    // The same text into bytes and into a String that already hold some (to_string writes bytes
    // while the strings are ASCII and goes on in a String from the first that is not).
    let mut bytes = b"[".to_vec();
    json::write_compact(&first, &mut bytes);
    assert_eq!(&bytes[1..], compact.as_bytes());
    let mut text = String::from("[");
    json::write_compact(&first, &mut text);
    assert_eq!(&text[1..], compact);

    let pretty = json::to_pretty_ascii_sorted(&first);
    assert!(pretty.is_ascii());
    let reparsed = json::parse(pretty.as_bytes()).expect("pretty output parses");
    assert_eq!(json::to_pretty_ascii_sorted(&reparsed), pretty);
    // Sorting keys must not change the content: the pretty form of the compact round trip agrees.
    assert_eq!(json::to_pretty_ascii_sorted(&second), pretty);
});
