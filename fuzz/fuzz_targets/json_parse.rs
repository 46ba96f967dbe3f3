//! Arbitrary bytes into the JSON parser: it must answer (value or positioned error), never panic.
//! A lone number token is also checked against `str::parse::<f64>`, the correctly rounded reference.
//! The same bytes parsed with a memory limit (the input's last two bytes, as a number) give the
//! same tree or the same error, or stop with the memory-limit error.
#![no_main]

use agentteams_mcp::json::{self, Limits, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let whole = json::parse(data);
    if let [.., a, b] = data {
        let limits = Limits {
            max_tree_bytes: usize::from(u16::from_le_bytes([*a, *b])),
            ..Limits::default()
        };
        match (json::parse_with_limits(data, limits), &whole) {
            (Ok(limited), Ok(value)) => assert_eq!(json::to_string(&limited), json::to_string(value)),
            (Err(e), _) if e.is_memory_limit() => assert!(e.offset() <= data.len()),
            (Err(e), Err(want)) => assert_eq!(e.to_string(), want.to_string()),
            (limited, whole) => panic!("with a limit {limited:?}, without {whole:?}"),
        }
    }
    match whole {
        Ok(Value::Number(n)) if n.is_float() => {
            let text = std::str::from_utf8(data).expect("accepted input is UTF-8");
            let want: f64 = text
                .trim_matches([' ', '\t', '\n', '\r'])
                .parse()
                .expect("std parses a JSON number");
            assert_eq!(n.as_f64().to_bits(), want.to_bits(), "{text:?}");
        }
        Ok(_) => {}
        Err(e) => {
            assert!(e.offset() <= data.len());
            assert!(e.line() >= 1 && e.column() >= 1);
            let _ = e.to_string();
        }
    }
});
