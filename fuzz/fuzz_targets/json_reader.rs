//! The pull reader against the parser: on arbitrary bytes (after a first control byte choosing a
//! depth limit and how often a value is read whole with `read_value`), the document rebuilt from
//! the reader's tokens must equal `parse`'s, and a rejected input must give the very same error.
#![no_main]

use agentteams_mcp::json::{self, Limits, ParseError, Reader, Token, Value};
use libfuzzer_sys::fuzz_target;

/// An open container: its closing bracket, its finished parts (`value` or `"key":value`), and
/// the key waiting for its value.
struct Open {
    close: char,
    parts: Vec<String>,
    key: Option<String>,
}

/// The document in compact form, rebuilt from the reader's tokens (duplicate keys kept, as the
/// compact writer keeps them).
fn rebuild(input: &[u8], limits: Limits, whole_every: usize) -> Result<String, ParseError> {
    let mut reader = Reader::with_limits(input, limits);
    let mut open: Vec<Open> = Vec::new();
    let mut done: Option<String> = None;
    let mut step = 0usize;
    loop {
        step += 1;
        let whole = if whole_every != 0 && step % whole_every == 0 {
            reader.read_value()?
        } else {
            None
        };
        let finished = match whole {
            Some(value) => json::to_string(&value),
            None => {
                let scalar = match reader.next()? {
                    None => return Ok(done.expect("a document has a value")),
                    Some(token @ (Token::BeginArray | Token::BeginObject)) => {
                        let close = if token == Token::BeginArray { ']' } else { '}' };
                        open.push(Open {
                            close,
                            parts: Vec::new(),
                            key: None,
                        });
                        continue;
                    }
                    Some(Token::Key(key)) => {
                        let top = open.last_mut().expect("a key inside an object");
                        assert_eq!(top.close, '}');
                        top.key = Some(json::to_string(&Value::from(key.as_ref())));
                        continue;
                    }
                    Some(token @ (Token::EndArray | Token::EndObject)) => {
                        let top = open.pop().expect("balanced brackets");
                        assert_eq!(top.close, if token == Token::EndArray { ']' } else { '}' });
                        assert!(top.key.is_none(), "a key without a value");
                        let first = if top.close == ']' { '[' } else { '{' };
                        format!("{first}{}{}", top.parts.join(","), top.close)
                    }
                    Some(Token::String(s)) => json::to_string(&Value::from(s.as_ref())),
                    Some(Token::Number(n)) => json::to_string(&Value::Number(n)),
                    Some(Token::Bool(b)) => b.to_string(),
                    Some(Token::Null) => "null".to_owned(),
                };
                scalar
            }
        };
        match open.last_mut() {
            None => {
                assert!(done.is_none(), "two top-level values");
                done = Some(finished);
            }
            Some(top) => match top.key.take() {
                Some(key) => top.parts.push(format!("{key}:{finished}")),
                None => {
                    assert_eq!(top.close, ']', "an object member without a key");
                    top.parts.push(finished);
                }
            },
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else {
        return;
    };
    let limits = Limits {
        max_depth: if control & 0x80 != 0 {
            usize::from(control & 0x7) + 1
        } else {
            json::DEFAULT_MAX_DEPTH
        },
        ..Limits::default()
    };
    let whole_every = usize::from((control >> 3) & 0x7);
    let want = json::parse_with_limits(input, limits).map(|v| json::to_string(&v));
    assert_eq!(rebuild(input, limits, whole_every), want);
});
