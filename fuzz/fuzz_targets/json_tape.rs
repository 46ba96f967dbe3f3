//! The tape against the tree: on arbitrary bytes (after a first control byte choosing a depth
//! limit and, when its high bit is set, a memory limit from the next two bytes),
//! `Tape::parse_with_limits` must decide as `parse_with_limits` does. An accepted document must
//! read back the same everywhere: its compact text, its tree (`to_value`), and walked through
//! the tape's own accessors (elements, members, `get`, numbers, strings). A rejected input must
//! give the very same `ParseError`. Under a memory limit, the tape must instead hold the tree's
//! value within the limit, or be refused for the limit, or give the tree's very error.
#![no_main]

use agentteams_mcp::json::tape::Item;
use agentteams_mcp::json::{self, Limits, Tape, Value};
use libfuzzer_sys::fuzz_target;

/// Walks `item` and `value` side by side, without recursion, checking that every accessor of the
/// tape answers what the tree holds.
fn same(item: Item<'_>, value: &Value) {
    let mut pending = vec![(item, value)];
    while let Some((item, value)) = pending.pop() {
        assert_eq!(item.type_name(), value.type_name());
        assert_eq!(item.is_null(), value.is_null());
        assert_eq!(item.as_bool(), value.as_bool());
        assert_eq!(item.as_str(), value.as_str());
        assert_eq!(item.as_u64(), value.as_u64());
        assert_eq!(item.as_i64(), value.as_i64());
        assert_eq!(
            item.as_f64().map(f64::to_bits),
            value.as_f64().map(f64::to_bits)
        );
        match value {
            Value::Array(elements) => {
                assert_eq!(item.length(), Some(elements.len()));
                let items: Vec<_> = item.elements().collect();
                assert_eq!(items.len(), elements.len());
                pending.extend(items.into_iter().zip(elements.iter()));
            }
            Value::Object(map) => {
                assert_eq!(item.length(), Some(map.len()));
                let members: Vec<_> = item.members().collect();
                assert_eq!(members.len(), map.len());
                for ((key, member), (want_key, want)) in members.iter().zip(map.iter()) {
                    assert_eq!(*key, want_key.as_str());
                    pending.push((*member, want));
                    let last = item.get(key).expect("a member's key finds a member");
                    assert_eq!(last.to_string(), json::to_string(map.get(key).expect("present")));
                }
            }
            _ => {
                assert_eq!(item.length(), None);
                assert_eq!(item.elements().count(), 0);
                assert_eq!(item.members().count(), 0);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let mut limits = match control % 9 {
        0 => Limits::default(),
        depth => Limits {
            max_depth: usize::from(depth),
            ..Limits::default()
        },
    };
    if control & 0x80 != 0 {
        let [a, b, input @ ..] = input else {
            return;
        };
        limits.max_tree_bytes = usize::from(u16::from_le_bytes([*a, *b]));
        let tree = json::parse_with_limits(
            input,
            Limits {
                max_tree_bytes: usize::MAX,
                ..limits
            },
        );
        match (Tape::parse_with_limits(input, limits), tree) {
            (Ok(tape), Ok(value)) => {
                assert!(tape.heap_bytes() <= limits.max_tree_bytes);
                assert_eq!(tape.root().to_string(), json::to_string(&value));
            }
            (Err(ours), _) if ours.is_memory_limit() => {}
            (Err(ours), Err(theirs)) => assert_eq!(ours, theirs),
            (ours, theirs) => panic!(
                "limited tape {:?}, tree {:?}",
                ours.map(|t| t.root().to_string()),
                theirs.map(|v| json::to_string(&v))
            ),
        }
        return;
    }
    match (
        Tape::parse_with_limits(input, limits),
        json::parse_with_limits(input, limits),
    ) {
        (Ok(tape), Ok(value)) => {
            let text = json::to_string(&value);
            assert_eq!(tape.root().to_string(), text);
            assert_eq!(json::to_string(&tape.root().to_value()), text);
            same(tape.root(), &value);
        }
        (Err(ours), Err(theirs)) => assert_eq!(ours, theirs),
        (ours, theirs) => panic!(
            "tape {:?}, tree {:?}",
            ours.map(|t| t.root().to_string()),
            theirs.map(|v| json::to_string(&v))
        ),
    }
});
