//! JSON values, a strict RFC 8259 parser and the two writers the protocol needs.
//!
//! This module is the only JSON implementation in the project: every transport, index file and tool
//! result goes through it. It is not a serialisation framework (there is no derive, no typed
//! deserialisation); callers walk a [`Value`], or, for a large document they convert into their own
//! structures, pull its tokens with a [`Reader`] (same grammar, limits and errors as [`parse`]).
//!
//! Design points:
//! - Nothing recurses on nesting depth: the parser keeps an explicit stack, the writers walk with an
//!   explicit stack, and [`Array`]/[`Map`] drop their children iteratively. Parsing stops at
//!   [`DEFAULT_MAX_DEPTH`] levels with an error, never a stack overflow.
//! - A tree may take many times its input (a 32-byte [`Value`] per `0,` of `[0,0,...]`); a caller
//!   that must bound memory by the input's size sets [`Limits::max_tree_bytes`], which the parser
//!   checks before each allocation, stopping with an error ([`ParseError::is_memory_limit`]).
//! - Numbers keep what the wire needs: integers exact to `u64`/`i64`, floats correctly rounded to `f64`,
//!   and any number that neither can hold exactly (an integer beyond 64 bits, a float beyond `f64`'s
//!   range) keeps its source text so it is written back byte for byte.
//! - Objects keep insertion order. Duplicate keys are kept as parsed; [`Map::get`] answers the last one
//!   (the behaviour of Python's `json`, which the reference implementation uses).
//! - Object keys and string values are [`Text`] ([`Key`] names it where it is a key): text of up to
//!   [`TEXT_INLINE_CAPACITY`] (22) bytes is held inside the 24-byte `Text` itself, longer text in
//!   a `Box<str>`, so the short keys and values most documents have cost no allocation of their
//!   own (they were most of a parsed tree's allocations). A `Text` derefs to `&str` (short text's
//!   bytes are checked as UTF-8 on the way, as safe Rust requires); lookups and the writers use
//!   its bytes and skip that check. [`Limits::max_tree_bytes`] counts a key or a string as the
//!   allocation a `String` of it would be, so the limit accepts and rejects the same inputs as
//!   before text was inline.
//!
//! ```
//! use agentteams_mcp::json::{self, Value};
//! let v = json::parse(br#"{"id": 12345678901234567890, "b": [1.5, null]}"#).unwrap();
//! assert_eq!(v.get("id").and_then(Value::as_u64), Some(12345678901234567890));
//! assert_eq!(json::to_string(&v), r#"{"id":12345678901234567890,"b":[1.5,null]}"#);
//! ```

mod bigint;
mod error;
mod float;
mod parse;
mod reader;
mod scan;
mod shortest;
#[cfg(test)]
mod test_rng;
mod text;
mod value;
mod write;

pub use error::ParseError;
pub use parse::{parse, parse_with_limits, Limits, DEFAULT_MAX_DEPTH};
pub use reader::{Reader, Token};
pub use text::{Text, INLINE_CAPACITY as TEXT_INLINE_CAPACITY};
pub use write::{
    to_pretty_ascii_sorted, to_string, to_string_sorted, write_compact, write_pretty_ascii_sorted,
    write_python_float, Sink,
};

pub use value::{obj, Array, Key, Map, Number, Value, KEY_INLINE_CAPACITY};
pub use write::write_ascii_string;

impl std::fmt::Display for Value {
    /// The compact wire form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_string(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use write::tests::{compact, py};
    use write::{write_value, Style, ASCII_SEGMENT_BYTES, SHORT_NUMBER_ARRAY};

    #[test]
    fn dropping_deep_nesting_does_not_overflow_the_stack() {
        let mut v = Value::Null;
        for _ in 0..1_000_000 {
            v = Value::Array(Array(vec![v]));
        }
        drop(v);
        let mut v = Value::Null;
        for _ in 0..1_000_000 {
            let mut m = Map::new();
            m.insert("k", v);
            v = Value::Object(m);
        }
        drop(v);
    }

    #[test]
    fn dropping_deep_mixed_nesting_with_siblings_does_not_overflow_the_stack() {
        // Arrays and objects in turn, each level beside a string, an empty container and a
        // pair of numbers, so every branch of the iterative drop is taken at every depth.
        let mut v = Value::Null;
        for depth in 0..1_000_000u64 {
            let siblings = vec![
                "s".into(),
                Value::Array(Array::new()),
                Value::from(vec![depth.into(), 0.5.into()]),
            ];
            v = if depth % 2 == 0 {
                let mut elements = siblings;
                elements.push(v);
                Value::from(elements)
            } else {
                let mut m = Map::new();
                for (i, sibling) in siblings.into_iter().enumerate() {
                    m.insert(i.to_string(), sibling);
                }
                m.insert("next", v);
                Value::Object(m)
            };
        }
        drop(v);
    }

    #[test]
    fn map_get_returns_last_duplicate_and_insert_replaces_in_place() {
        let mut m = Map::new();
        m.push_unchecked("a".into(), 1u64.into());
        m.push_unchecked("b".into(), 2u64.into());
        m.push_unchecked("a".into(), 3u64.into());
        assert_eq!(m.get("a"), Some(&Value::from(3u64)));
        m.insert("b", 4u64.into());
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b", "a"]);
        assert_eq!(m.remove("a"), Some(Value::from(3u64)));
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn push_keeps_repeats_and_has_repeated_key_finds_them_at_any_size() {
        let long = "a key longer than twenty-two bytes";
        for size in [0, 1, 2, 16, 17, 1000] {
            let mut m = Map::new();
            for i in 0..size {
                m.push(format!("{long} {i}"), Value::from(i as u64));
            }
            assert!(!m.has_repeated_key(), "{size}");
            if size == 0 {
                continue;
            }
            // A repeat of the first, of the last, and of a short key among long ones.
            for repeated in [format!("{long} 0"), format!("{long} {}", size - 1)] {
                let mut with_repeat = m.clone();
                with_repeat.push(repeated.as_str(), Value::Null);
                assert!(with_repeat.has_repeated_key(), "{size} {repeated}");
                assert_eq!(with_repeat.len(), size + 1);
                assert_eq!(with_repeat.get(&repeated), Some(&Value::Null));
            }
            let mut short = m.clone();
            short.push("k", Value::Null);
            assert!(!short.has_repeated_key(), "{size}");
            short.push("k", Value::Null);
            assert!(short.has_repeated_key(), "{size}");
        }
    }

    #[test]
    fn collecting_keeps_what_insert_keeps_at_any_size() {
        // Keys repeated in every order, below and past the entries scanned before the table.
        for size in [0, 3, 16, 17, 40, 200] {
            let entries: Vec<(Key, Value)> = (0..size)
                .map(|i| {
                    (
                        format!("k{}", (i * 7) % (size / 2 + 1)).into(),
                        Value::from(i as u64),
                    )
                })
                .collect();
            let mut inserted = Map::new();
            for (k, v) in entries.clone() {
                inserted.insert(k, v);
            }
            let collected: Map = entries.into_iter().collect();
            assert_eq!(collected, inserted, "{size}");
            assert!(!collected.has_repeated_key(), "{size}");
        }
    }

    #[test]
    fn type_names_follow_json_schema() {
        let v = parse(br#"[null, true, 1, 1.0, "s", [], {}]"#).unwrap();
        let names: Vec<_> = v.as_array().unwrap().iter().map(Value::type_name).collect();
        assert_eq!(
            names,
            ["null", "boolean", "integer", "number", "string", "array", "object"]
        );
    }

    // The writers held to the parser: what they write reads back.
    #[test]
    fn sorted_compact_form_sorts_nested_members_by_code_point() {
        let v = parse(br#"{"b":1,"a":{"\u00e9":[1.0,"\n"],"Z":null},"\u00e0":2}"#).unwrap();
        // The bytes Python's json.dumps(v, sort_keys=True, separators=(",", ":"),
        // ensure_ascii=False) writes for the same input.
        assert_eq!(
            to_string_sorted(&v),
            "{\"a\":{\"Z\":null,\"\u{e9}\":[1.0,\"\\n\"]},\"b\":1,\"\u{e0}\":2}"
        );
    }

    #[test]
    fn integers_are_written_in_decimal() {
        for n in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            12345,
            99_999_999,
            100_000_000,
            100_000_001,
            1_000_000_000_000_000,
            9_999_999_999_999_999,
            10_000_000_000_000_000,
            99_999_999_999_999_999,
            100_000_000_000_000_000,
            10_000_000_000_000_000_000,
            1 << 53,
            u64::MAX,
        ] {
            assert_eq!(to_string(&Value::from(n)), n.to_string());
            if let Ok(i) = i64::try_from(n) {
                assert_eq!(to_string(&Value::from(-i)), (-i).to_string());
            }
        }
        let v = parse(b"[-9223372036854775808, -1, 0, 18446744073709551615]").unwrap();
        assert_eq!(
            to_string(&v),
            "[-9223372036854775808,-1,0,18446744073709551615]"
        );
    }

    #[test]
    fn written_floats_read_back_to_the_same_bits() {
        let mut rng = crate::json::test_rng::TestRng(0x1234_5678_9ABC_DEF1);
        for _ in 0..100_000 {
            let f = f64::from_bits(rng.next());
            if !f.is_finite() {
                continue;
            }
            let text = py(f);
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), f.to_bits(), "{text}");
            assert_eq!(parse(text.as_bytes()).unwrap().as_f64(), Some(f), "{text}");
        }
    }

    #[test]
    fn pretty_matches_python_indent_1_sorted_ascii() {
        let v = parse(
            r#"{"b": [1, {"z": null, "N": true}], "a": "caf\u00e9 \ud83d\ude00\u007f/\"", "e": {}, "f": []}"#
                .as_bytes(),
        )
        .unwrap();
        let want = "{\n \"a\": \"caf\\u00e9 \\ud83d\\ude00\\u007f/\\\"\",\n \"b\": [\n  1,\n  {\n   \"N\": true,\n   \"z\": null\n  }\n ],\n \"e\": {},\n \"f\": []\n}";
        assert_eq!(to_pretty_ascii_sorted(&v), want);
    }

    #[test]
    fn compact_escapes_only_what_json_requires() {
        let v = Value::from("a\"b\\c\n\u{1}\u{e9}\u{2028}");
        assert_eq!(to_string(&v), "\"a\\\"b\\\\c\\n\\u0001\u{e9}\u{2028}\"");
        let v = parse(br#"{"k":[1,2,{"x":[]}],"s":"t"}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"k":[1,2,{"x":[]}],"s":"t"}"#);
    }

    #[test]
    fn arrays_of_numbers_are_written_like_any_array() {
        let mut rng = crate::json::test_rng::TestRng(0x5DEE_CE66_D1CE_4E5B);
        for len in (0..=SHORT_NUMBER_ARRAY + 2)
            .cycle()
            .take(40 * (SHORT_NUMBER_ARRAY + 3))
        {
            let elements: Vec<String> = (0..len)
                .map(|i| match (rng.next() % 7, i) {
                    // Now and then an element that is not a number: written the general way.
                    (5, _) if rng.next() % 4 == 0 => "\"s\"".to_string(),
                    (6, _) if rng.next() % 4 == 0 => "[1.5]".to_string(),
                    (0, _) => (rng.next() as i64).to_string(),
                    (1, _) => rng.next().to_string(),
                    (2, _) => format!("{}", f64::from_bits(rng.next() >> 2)),
                    (3, _) => "123456789012345678901234567890".to_string(),
                    _ => format!("-{}.{}", rng.next() % 1000, rng.next() % 1_000_000),
                })
                .collect();
            let text = format!("[{}]", elements.join(","));
            let v = parse(text.as_bytes()).unwrap();
            // Element by element, through the general path: the same text.
            let one_by_one: Vec<String> = v.as_array().unwrap().iter().map(to_string).collect();
            assert_eq!(compact(&v), format!("[{}]", one_by_one.join(",")), "{text}");
            assert_eq!(parse(to_string(&v).as_bytes()).unwrap(), v, "{text}");
        }
        // An array that stops being numeric after its text has grown the buffer several times:
        // what was laid out is dropped, and the general walk writes it.
        for tail in [
            "\"s\"",
            "[1,\"s\"]",
            "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]",
            "{}",
        ] {
            let numbers: Vec<String> = (0..200).map(|i| format!("{}.25", i * 7919)).collect();
            let text = format!("[{},[1,2],{tail}]", numbers.join(","));
            let v = parse(text.as_bytes()).unwrap();
            let mut out = String::from("prefix");
            write_compact(&v, &mut out);
            assert_eq!(out, format!("prefix{text}"));
            let mut bytes = b"prefix".to_vec();
            write_compact(&v, &mut bytes);
            assert_eq!(bytes, format!("prefix{text}").into_bytes());
        }
    }

    #[test]
    fn text_goes_on_in_a_string_from_the_first_non_ascii_string() {
        // The first non-ASCII string as a value, as an object's first key and as a later one,
        // alone, after numbers and deep inside, in both orders of members; and none at all.
        let documents = [
            r#""\u00e9""#,
            r#"[1.5,[2,3],"x","caf\u00e9",{"k":"\u00e9"},[4.25]]"#,
            r#"{"\u00e9":1,"a":[1.5,"b"],"c":"\u00e8"}"#,
            r#"{"z":[0.1,0.2],"\u00e9":{"y":"\ud83d\ude00"},"a":null}"#,
            r#"[[[[{"a":[{"b":[1,2,{"\u4e2d":"\u6587","x":"y"}]}]}]]],"tail",7]"#,
            r#"{"a":{"b":{"c":[1.5e300,-0.0,"end"]}},"\u00e9":"\n\u0001"}"#,
            r#"{"ascii":["only",1,2.5,{"x":[]},{}],"n":-12345678901234567890123}"#,
            // Non-ASCII strings and keys (short, and longer than a key holds inline) in turn
            // with ASCII ones, side by side and apart: the text goes back and forth.
            r#"[{"\u00e9":1,"\u00fc":"\u00f6","a":2.5,"\u20ac\u20ac":[1,"x","\u00df"]},"ascii","\u00f1"]"#,
            r#"{"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9":"\u00e9","k":"\u00e9\u00e9","long ascii key, longer than inline":"\u00e9"}"#,
        ];
        // Past the first non-ASCII string, ASCII text longer than a segment: strings, keys and
        // numbers (the segment is full at each of them in turn), and non-ASCII now and then.
        let long: Vec<String> = (0..3 * ASCII_SEGMENT_BYTES / 8)
            .map(|i| match i % 500 {
                0 => r#""\u00e9""#.to_owned(),
                1 => format!(r#"{{"k{i}":[{i}.5,{i}],"\u00fc{i}":"x"}}"#),
                _ if i % 3 == 0 => format!("{i}"),
                _ => format!(r#""s{i}""#),
            })
            .collect();
        let long = format!("[{}]", long.join(","));
        assert!(long.len() > 2 * ASCII_SEGMENT_BYTES);
        let documents = documents.iter().copied().chain([long.as_str()]);
        for document in documents {
            let v = parse(document.as_bytes()).unwrap();
            for (style, text) in [
                (Style::Compact, to_string(&v)),
                (Style::CompactSorted, to_string_sorted(&v)),
                (Style::PrettyAsciiSorted, to_pretty_ascii_sorted(&v)),
            ] {
                // Straight into a String, which never stops: the same text.
                let mut direct = String::new();
                write_value(&v, &mut direct, style);
                assert_eq!(text, direct, "{document}");
            }
            assert_eq!(parse(to_string(&v).as_bytes()).unwrap(), v, "{document}");
        }
    }

    #[test]
    fn long_numeric_arrays_with_long_numbers_are_written_whole() {
        // Thousands of numbers (the laid-out text grows its buffer many times), with numbers
        // longer than a number's room and than a growth step (kept as their source text) at the
        // start, in the middle and at the end, alone and in rows.
        let huge = format!("1{}", "0".repeat(5_000));
        let mut rng = crate::json::test_rng::TestRng(0x1F83_D9AB_FB41_BD6B);
        let mut elements = vec![huge.clone()];
        for i in 0..5_000 {
            elements.push(match i % 1_000 {
                500 => huge.clone(),
                501 => format!("[{huge},-{huge},1.5]"),
                _ if i % 3 == 0 => format!("[{},{}]", py(f64::from_bits(rng.next() >> 2)), i),
                _ => py(-f64::from_bits(rng.next() >> 2)),
            });
        }
        elements.push(huge);
        let text = format!("[{}]", elements.join(","));
        let v = parse(text.as_bytes()).unwrap();
        assert_eq!(compact(&v), text);
        let mut out = String::from("prefix");
        write_compact(&v, &mut out);
        assert_eq!(out, format!("prefix{text}"));
    }
}
