//! The strict RFC 8259 parser: bytes in, a [`Value`] or a positioned [`ParseError`] out.
//!
//! One pass over the input with an explicit stack of open containers (no recursion), a byte-class
//! table for the string scanner, and a fast path for strings without escapes (validated and copied
//! once). Not a streaming parser: the caller hands over one complete document and bounds its size.

use super::error::{Code, ParseError};
use super::{Array, Map, Number, Value};

/// How deep arrays and objects may nest by default. Deeper input is an error, never a stack overflow.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// Limits applied while parsing.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The deepest nesting of arrays and objects accepted (a top-level `[]` is depth 1).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Parses one JSON document with the default limits.
pub fn parse(input: &[u8]) -> Result<Value, ParseError> {
    parse_with_limits(input, Limits::default())
}

/// Parses one JSON document; surrounding whitespace is allowed, anything else after the value is not.
pub fn parse_with_limits(input: &[u8], limits: Limits) -> Result<Value, ParseError> {
    Parser {
        input,
        pos: 0,
        scratch: Vec::new(),
    }
    .parse_document(limits.max_depth)
}

/// An open container waiting for its next element.
enum Frame {
    Array(Vec<Value>),
    /// The object so far and the key whose value is being parsed.
    Object(Map, String),
}

/// Bytes that end the fast scan of a string: the quote, the backslash and control characters.
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    /// Reused buffer for strings that contain escapes.
    scratch: Vec<u8>,
}

impl<'a> Parser<'a> {
    #[cold]
    fn error(&self, code: Code) -> ParseError {
        ParseError::at(code, self.input, self.pos)
    }

    #[cold]
    fn error_at(&self, code: Code, pos: usize) -> ParseError {
        ParseError::at(code, self.input, pos)
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(&b) = self.input.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn parse_document(mut self, max_depth: usize) -> Result<Value, ParseError> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_whitespace();
            let mut value = match self.peek() {
                None => return Err(self.error(Code::EofWhileParsingValue)),
                Some(b'[') => {
                    if stack.len() >= max_depth {
                        return Err(self.error(Code::DepthLimitExceeded(max_depth)));
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Array::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    if stack.len() >= max_depth {
                        return Err(self.error(Code::DepthLimitExceeded(max_depth)));
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            Value::Object(Map::new())
                        }
                        Some(b'"') => {
                            let key = self.parse_key()?;
                            stack.push(Frame::Object(Map::new(), key));
                            continue 'value;
                        }
                        None => return Err(self.error(Code::EofWhileParsingObject)),
                        Some(_) => return Err(self.error(Code::ExpectedObjectKey)),
                    }
                }
                Some(b'"') => Value::String(self.parse_string()?),
                Some(b'-' | b'0'..=b'9') => Value::Number(self.parse_number()?),
                Some(b't') => self.parse_literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.parse_literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.parse_literal(b"null", Value::Null)?,
                Some(_) => return Err(self.error(Code::ExpectedValue)),
            };

            // Attach the finished value to its container, closing containers as they end.
            loop {
                match stack.last_mut() {
                    None => {
                        self.skip_whitespace();
                        if self.pos != self.input.len() {
                            return Err(self.error(Code::TrailingCharacters));
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array(elements)) => {
                        elements.push(value);
                        self.skip_whitespace();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_whitespace();
                                if self.peek() == Some(b']') {
                                    return Err(self.error(Code::TrailingComma));
                                }
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::Array(elements)) = stack.pop() else {
                                    unreachable!("the top frame is an array")
                                };
                                value = Value::Array(Array::from(elements));
                            }
                            None => return Err(self.error(Code::EofWhileParsingArray)),
                            Some(_) => return Err(self.error(Code::ExpectedCommaOrEndOfArray)),
                        }
                    }
                    Some(Frame::Object(map, key)) => {
                        map.push_unchecked(std::mem::take(key), value);
                        self.skip_whitespace();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_whitespace();
                                match self.peek() {
                                    Some(b'"') => {
                                        let next_key = self.parse_key()?;
                                        if let Some(Frame::Object(_, key)) = stack.last_mut() {
                                            *key = next_key;
                                        }
                                        continue 'value;
                                    }
                                    Some(b'}') => return Err(self.error(Code::TrailingComma)),
                                    None => return Err(self.error(Code::EofWhileParsingObject)),
                                    Some(_) => return Err(self.error(Code::ExpectedObjectKey)),
                                }
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object(map, _)) = stack.pop() else {
                                    unreachable!("the top frame is an object")
                                };
                                value = Value::Object(map);
                            }
                            None => return Err(self.error(Code::EofWhileParsingObject)),
                            Some(_) => return Err(self.error(Code::ExpectedCommaOrEndOfObject)),
                        }
                    }
                }
            }
        }
    }

    /// Parses `"key"` and the `:` after it.
    fn parse_key(&mut self) -> Result<String, ParseError> {
        let key = self.parse_string()?;
        self.skip_whitespace();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(key)
            }
            None => Err(self.error(Code::EofWhileParsingObject)),
            Some(_) => Err(self.error(Code::ExpectedColon)),
        }
    }

    fn parse_literal(&mut self, word: &[u8], value: Value) -> Result<Value, ParseError> {
        let end = self.pos + word.len();
        match self.input.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(value)
            }
            _ => {
                // Point at the first byte that differs (or the end of input).
                let matching = self.input[self.pos..]
                    .iter()
                    .zip(word)
                    .take_while(|(a, b)| a == b)
                    .count();
                let at = self.pos + matching;
                if at >= self.input.len() {
                    Err(self.error_at(Code::EofWhileParsingValue, at))
                } else {
                    Err(self.error_at(Code::ExpectedValue, at))
                }
            }
        }
    }

    /// Parses a string starting at the opening quote.
    fn parse_string(&mut self) -> Result<String, ParseError> {
        let start = self.pos + 1;
        let mut i = start;
        // Fast path: no escapes.
        while let Some(&b) = self.input.get(i) {
            if STRING_STOP[b as usize] {
                if b == b'"' {
                    let text = self.utf8(start, i)?;
                    self.pos = i + 1;
                    return Ok(text.to_owned());
                }
                break;
            }
            i += 1;
        }
        self.parse_string_with_escapes(start, i)
    }

    fn utf8(&self, start: usize, end: usize) -> Result<&'a str, ParseError> {
        std::str::from_utf8(&self.input[start..end])
            .map_err(|e| self.error_at(Code::InvalidUtf8, start + e.valid_up_to()))
    }

    #[cold]
    fn parse_string_with_escapes(
        &mut self,
        start: usize,
        mut i: usize,
    ) -> Result<String, ParseError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        buf.extend_from_slice(&self.input[start..i]);
        loop {
            let Some(&b) = self.input.get(i) else {
                self.scratch = buf;
                return Err(self.error_at(Code::EofWhileParsingString, i));
            };
            match b {
                b'"' => {
                    let result = match String::from_utf8(buf) {
                        Ok(s) => Ok(s),
                        Err(e) => {
                            // Map the offset in the decoded buffer back to the input is not
                            // exact across escapes; validate the raw input to find the byte.
                            let raw_bad = std::str::from_utf8(&self.input[start..i])
                                .err()
                                .map_or(start, |re| start + re.valid_up_to());
                            drop(e);
                            Err(self.error_at(Code::InvalidUtf8, raw_bad))
                        }
                    };
                    self.pos = i + 1;
                    return result;
                }
                b'\\' => {
                    let escape_at = i;
                    let Some(&e) = self.input.get(i + 1) else {
                        self.scratch = buf;
                        return Err(self.error_at(Code::EofWhileParsingString, i + 1));
                    };
                    i += 2;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => {
                            self.scratch = buf;
                            return Err(self.error_at(Code::InvalidEscape, escape_at));
                        }
                    };
                    if let Some(byte) = simple {
                        buf.push(byte);
                        continue;
                    }
                    let unit = self.hex4(i, escape_at)?;
                    i += 4;
                    let ch = match unit {
                        0xD800..=0xDBFF => {
                            // A high surrogate must be followed by an escaped low surrogate.
                            if self.input.get(i) != Some(&b'\\')
                                || self.input.get(i + 1) != Some(&b'u')
                            {
                                self.scratch = buf;
                                return Err(self.error_at(Code::LoneSurrogate, escape_at));
                            }
                            let low = self.hex4(i + 2, i)?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                self.scratch = buf;
                                return Err(self.error_at(Code::LoneSurrogate, escape_at));
                            }
                            i += 6;
                            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        }
                        0xDC00..=0xDFFF => {
                            self.scratch = buf;
                            return Err(self.error_at(Code::LoneSurrogate, escape_at));
                        }
                        _ => unit,
                    };
                    let ch = char::from_u32(ch).expect("surrogates were excluded above");
                    let mut utf8 = [0u8; 4];
                    buf.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
                }
                0x00..=0x1f => {
                    self.scratch = buf;
                    return Err(self.error_at(Code::ControlCharacterInString, i));
                }
                _ => {
                    // Copy the run up to the next byte that needs attention.
                    let run_start = i;
                    while let Some(&c) = self.input.get(i) {
                        if STRING_STOP[c as usize] {
                            break;
                        }
                        i += 1;
                    }
                    buf.extend_from_slice(&self.input[run_start..i]);
                }
            }
        }
    }

    /// Four hex digits at `at`; errors point at the escape that began at `escape_at`.
    fn hex4(&self, at: usize, escape_at: usize) -> Result<u32, ParseError> {
        let Some(digits) = self.input.get(at..at + 4) else {
            return Err(
                if self.input.len() < at + 4
                    && self.input[at.min(self.input.len())..]
                        .iter()
                        .all(u8::is_ascii_hexdigit)
                {
                    self.error_at(Code::EofWhileParsingString, self.input.len())
                } else {
                    self.error_at(Code::InvalidUnicodeEscape, escape_at)
                },
            );
        };
        let mut unit = 0u32;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error_at(Code::InvalidUnicodeEscape, escape_at)),
            };
            unit = unit * 16 + u32::from(v);
        }
        Ok(unit)
    }

    /// Parses a number token per RFC 8259's grammar.
    fn parse_number(&mut self) -> Result<Number, ParseError> {
        let start = self.pos;
        let input = self.input;
        let mut i = start;
        let negative = input[i] == b'-';
        if negative {
            i += 1;
        }
        let mut mantissa: u64 = 0;
        let mut overflow = false;
        match input.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(&d @ b'0'..=b'9') = input.get(i) {
                    match mantissa
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(u64::from(d - b'0')))
                    {
                        Some(m) => mantissa = m,
                        None => overflow = true,
                    }
                    i += 1;
                }
            }
            None => return Err(self.error_at(Code::EofWhileParsingValue, i)),
            Some(_) => return Err(self.error_at(Code::InvalidNumber, i)),
        }
        let mut is_float = false;
        if input.get(i) == Some(&b'.') {
            is_float = true;
            i += 1;
            let digits_start = i;
            while let Some(b'0'..=b'9') = input.get(i) {
                i += 1;
            }
            if i == digits_start {
                return Err(self.error_at(Code::InvalidNumber, i));
            }
        }
        if let Some(b'e' | b'E') = input.get(i) {
            is_float = true;
            i += 1;
            if let Some(b'+' | b'-') = input.get(i) {
                i += 1;
            }
            let digits_start = i;
            while let Some(b'0'..=b'9') = input.get(i) {
                i += 1;
            }
            if i == digits_start {
                return Err(self.error_at(Code::InvalidNumber, i));
            }
        }
        self.pos = i;
        if !is_float && !overflow {
            if !negative {
                return Ok(Number::from(mantissa));
            }
            if mantissa != 0 && mantissa <= 1u64 << 63 {
                return Ok(Number::from((mantissa as i64).wrapping_neg()));
            }
        }
        let text = std::str::from_utf8(&input[start..i]).expect("number tokens are ASCII");
        if !is_float {
            // -0, or an integer beyond 64 bits: keep the text so it is written back unchanged.
            return Ok(Number::verbatim(text));
        }
        let f: f64 = text
            .parse()
            .map_err(|_| self.error_at(Code::InvalidNumber, start))?;
        if f.is_finite() {
            Ok(Number::float(f))
        } else {
            Ok(Number::verbatim(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> (String, usize, usize, usize) {
        let e = parse(input.as_bytes()).unwrap_err();
        (e.message(), e.offset(), e.line(), e.column())
    }

    #[test]
    fn errors_name_what_was_expected_and_where() {
        let cases: &[(&str, &str, usize, usize, usize)] = &[
            ("", "unexpected end of input, expected a value", 0, 1, 1),
            ("[1,]", "trailing comma before the closing bracket", 3, 1, 4),
            ("{\"a\" 1}", "expected ':' after an object key", 5, 1, 6),
            ("[1 2]", "expected ',' or ']' in an array", 3, 1, 4),
            (
                "{\"a\":1 \"b\"}",
                "expected ',' or '}' in an object",
                7,
                1,
                8,
            ),
            ("{1:2}", "expected a string object key", 1, 1, 2),
            ("[\n  tru]", "expected a value", 7, 2, 6),
            ("\"abc", "unexpected end of input inside a string", 4, 1, 5),
            (
                "[1",
                "unexpected end of input inside an array, expected ',' or ']'",
                2,
                1,
                3,
            ),
            ("01", "unexpected characters after the value", 1, 1, 2),
            ("1.", "invalid number", 2, 1, 3),
            ("-", "unexpected end of input, expected a value", 1, 1, 2),
            ("\"\\x\"", "invalid escape in a string", 1, 1, 2),
            (
                "\"\\u12G4\"",
                "invalid \\u escape (expected four hex digits)",
                1,
                1,
                2,
            ),
            (
                "\"\\udc00\"",
                "\\u escape is an unpaired surrogate",
                1,
                1,
                2,
            ),
            (
                "\"a\tb\"",
                "control character in a string (must be escaped)",
                2,
                1,
                3,
            ),
            (
                "\"\u{e9}\"x",
                "unexpected characters after the value",
                4,
                1,
                5,
            ),
        ];
        for &(input, message, offset, line, column) in cases {
            assert_eq!(
                err(input),
                (message.to_string(), offset, line, column),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_located() {
        let e = parse(b"[\"ab\xff\"]").unwrap_err();
        assert_eq!((e.message().as_str(), e.offset()), ("invalid UTF-8", 4));
        let e = parse(b"[\"a\\n\xc3\"]").unwrap_err();
        assert_eq!((e.message().as_str(), e.offset()), ("invalid UTF-8", 5));
    }

    #[test]
    fn depth_limit_is_an_error_at_the_edge() {
        let ok = "[".repeat(DEFAULT_MAX_DEPTH) + &"]".repeat(DEFAULT_MAX_DEPTH);
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = "[".repeat(DEFAULT_MAX_DEPTH + 1) + &"]".repeat(DEFAULT_MAX_DEPTH + 1);
        let e = parse(deep.as_bytes()).unwrap_err();
        assert!(e.is_depth_limit());
        assert_eq!(e.offset(), DEFAULT_MAX_DEPTH);
        let objects = "{\"a\":".repeat(DEFAULT_MAX_DEPTH + 1);
        assert!(parse(objects.as_bytes()).unwrap_err().is_depth_limit());
        // A huge nesting attempt is refused quickly, without recursion.
        let huge = "[".repeat(10_000_000);
        assert!(parse(huge.as_bytes()).unwrap_err().is_depth_limit());
    }

    #[test]
    fn numbers_keep_what_the_wire_needs() {
        let v = parse(b"[0, -1, 18446744073709551615, -9223372036854775808, 18446744073709551616, -0, 1.5, 1e400, 0.1]").unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a[0].as_u64(), Some(0));
        assert_eq!(a[1].as_i64(), Some(-1));
        assert_eq!(a[2].as_u64(), Some(u64::MAX));
        assert_eq!(a[3].as_i64(), Some(i64::MIN));
        assert_eq!(a[4].as_u64(), None);
        assert_eq!(a[6].as_f64(), Some(1.5));
        assert_eq!(a[8].as_f64(), Some(0.1));
        assert_eq!(
            crate::json::to_string(&v),
            "[0,-1,18446744073709551615,-9223372036854775808,18446744073709551616,-0,1.5,1e400,0.1]"
        );
    }

    #[test]
    fn strings_decode_escapes_and_surrogate_pairs() {
        let v = parse(br#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\ud83d\ude00", "plain"]"#).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a[0].as_str(), Some("a\"b\\c/d\u{8}\u{c}\n\r\t"));
        assert_eq!(a[1].as_str(), Some("\u{e9}\u{1F600}"));
        assert_eq!(a[2].as_str(), Some("plain"));
    }

    #[test]
    fn objects_keep_order_and_duplicates() {
        let v = parse(br#"{"b":1,"a":2,"b":3}"#).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a", "b"]);
        assert_eq!(m.get("b").and_then(Value::as_u64), Some(3));
    }
}
