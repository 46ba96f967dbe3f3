//! Arbitrary bytes into the JSON parser: it must answer (value or positioned error), never panic.
//! A lone number token is also checked against `str::parse::<f64>`, the correctly rounded reference.
#![no_main]

use agentteams_mcp::json::{self, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match json::parse(data) {
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
