//! The two JSON writers: compact (the wire) and pretty (the text form tool values are returned in).
//!
//! Both walk the value with an explicit stack, so deeply nested values cannot overflow the call stack.
//! Floats are written the way Python's `repr` writes them (shortest round-trip digits, `1e-05`,
//! `1.5e+16`, `12.0`), which keeps tool texts byte-identical with the reference implementation.

use super::scan::find_string_stop;
use super::shortest::shortest_digits;
use super::{Map, Number, Value, N};
use std::fmt::Write as _;

/// The compact wire form: no whitespace, non-ASCII kept as UTF-8.
pub fn to_string(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_compact(value, &mut out);
    out
}

/// Appends the compact wire form of `value` to `out`.
pub fn write_compact(value: &Value, out: &mut String) {
    write_value(value, out, Style::Compact);
}

/// The compact form with object members sorted by key (code point order; duplicates keep their
/// order): the canonical form the audit log hashes. The same bytes as Python's
/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
pub fn to_string_sorted(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(value, &mut out, Style::CompactSorted);
    out
}

/// The reference's tool-text form: Python's `json.dumps(v, indent=1, sort_keys=True)` with its
/// default `ensure_ascii`: one space of indent per level, keys sorted by code point, every character
/// outside U+0020..U+007E escaped.
pub fn to_pretty_ascii_sorted(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_pretty_ascii_sorted(value, &mut out);
    out
}

/// Appends the pretty, sorted, ASCII-only form of `value` to `out`.
pub fn write_pretty_ascii_sorted(value: &Value, out: &mut String) {
    write_value(value, out, Style::PrettyAsciiSorted);
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Compact,
    CompactSorted,
    PrettyAsciiSorted,
}

/// A container being written: its remaining elements.
enum Open<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(Entries<'a>),
}

/// An object's entries in writing order: as stored (compact), or sorted by key (sorted and pretty forms).
enum Entries<'a> {
    InOrder(std::slice::Iter<'a, (String, Value)>),
    Sorted(std::vec::IntoIter<&'a (String, Value)>),
}

impl<'a> Iterator for Entries<'a> {
    type Item = &'a (String, Value);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::InOrder(iter) => iter.next(),
            Entries::Sorted(iter) => iter.next(),
        }
    }
}

fn object_entries(map: &Map, style: Style) -> Entries<'_> {
    match style {
        Style::Compact => Entries::InOrder(map.entries().iter()),
        Style::CompactSorted | Style::PrettyAsciiSorted => {
            let mut entries: Vec<&(String, Value)> = map.entries().iter().collect();
            // Stable sort: with duplicate keys the later one is written last, as a dict keeps it.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Entries::Sorted(entries.into_iter())
        }
    }
}

fn newline_indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push(' ');
    }
}

fn write_value(root: &Value, out: &mut String, style: Style) {
    let pretty = style == Style::PrettyAsciiSorted;
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut next: Option<&Value> = Some(root);
    loop {
        if let Some(value) = next.take() {
            match value {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Number(n) => write_number(n, out),
                Value::String(s) => write_string(s, out, pretty),
                Value::Array(a) if a.is_empty() => out.push_str("[]"),
                Value::Object(m) if m.is_empty() => out.push_str("{}"),
                Value::Array(a) => {
                    out.push('[');
                    let mut iter = a.iter();
                    if pretty {
                        newline_indent(out, stack.len() + 1);
                    }
                    next = iter.next();
                    stack.push(Open::Array(iter));
                    continue;
                }
                Value::Object(m) => {
                    out.push('{');
                    let mut iter = object_entries(m, style);
                    if pretty {
                        newline_indent(out, stack.len() + 1);
                    }
                    let (k, v) = iter.next().expect("non-empty object");
                    write_key(k, out, pretty);
                    next = Some(v);
                    stack.push(Open::Object(iter));
                    continue;
                }
            }
        }
        // The last value is written: continue or close the innermost container.
        let depth = stack.len();
        match stack.last_mut() {
            None => return,
            Some(Open::Array(iter)) => match iter.next() {
                Some(v) => {
                    out.push(',');
                    if pretty {
                        newline_indent(out, depth);
                    }
                    next = Some(v);
                }
                None => {
                    stack.pop();
                    if pretty {
                        newline_indent(out, depth - 1);
                    }
                    out.push(']');
                }
            },
            Some(Open::Object(iter)) => match iter.next() {
                Some((k, v)) => {
                    out.push(',');
                    if pretty {
                        newline_indent(out, depth);
                    }
                    write_key(k, out, pretty);
                    next = Some(v);
                }
                None => {
                    stack.pop();
                    if pretty {
                        newline_indent(out, depth - 1);
                    }
                    out.push('}');
                }
            },
        }
    }
}

fn write_key(key: &str, out: &mut String, pretty: bool) {
    write_string(key, out, pretty);
    out.push_str(if pretty { ": " } else { ":" });
}

fn write_string(s: &str, out: &mut String, ascii_only: bool) {
    out.push('"');
    if ascii_only {
        write_escaped_ascii(s, out);
    } else {
        let bytes = s.as_bytes();
        let mut run_start = 0;
        loop {
            let stop = find_string_stop(bytes, run_start);
            out.push_str(&s[run_start..stop]);
            let Some(&b) = bytes.get(stop) else {
                break;
            };
            write_short_escape_or_u(char::from(b), out);
            run_start = stop + 1;
        }
    }
    out.push('"');
}

fn write_short_escape_or_u(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        _ => {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
}

/// Appends `s` as a JSON string literal with Python's `ensure_ascii` escaping (for writers of
/// other Python `json.dumps` layouts, such as the index builder's).
pub fn write_ascii_string(s: &str, out: &mut String) {
    write_string(s, out, true);
}

/// Python's `ensure_ascii` escaping: printable ASCII stays, everything else is escaped.
fn write_escaped_ascii(s: &str, out: &mut String) {
    let mut run_start = 0;
    for (i, c) in s.char_indices() {
        if (' '..='~').contains(&c) && c != '"' && c != '\\' {
            continue;
        }
        out.push_str(&s[run_start..i]);
        write_short_escape_or_u(c, out);
        run_start = i + c.len_utf8();
    }
    out.push_str(&s[run_start..]);
}

fn write_number(n: &Number, out: &mut String) {
    match &n.n {
        N::PosInt(u) => write_u64(*u, out),
        N::NegInt(i) => {
            out.push('-');
            write_u64(i.unsigned_abs(), out);
        }
        N::Float(f) => write_python_float(*f, out),
        N::Verbatim(text) => out.push_str(text),
    }
}

/// "00" to "99", for writing integers two digits at a time.
static DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Writes `n` in decimal without going through `fmt` (which costs a formatter per number).
fn write_u64(n: u64, out: &mut String) {
    let mut buf = [0u8; 20];
    out.push_str(decimal(n, &mut buf));
}

/// `n` in decimal, written into the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    std::str::from_utf8(&buf[i..]).expect("decimal digits are ASCII")
}

/// Writes a finite float as Python's `repr` does: the shortest digits that round-trip (ties to
/// even), in fixed notation when the decimal exponent is in -4..16 (always with a fraction, `12.0`),
/// otherwise `d.ddde±XX` with at least two exponent digits.
pub fn write_python_float(f: f64, out: &mut String) {
    if f.is_sign_negative() {
        out.push('-');
    }
    let magnitude = f.abs();
    let (digits, exponent) = if magnitude == 0.0 {
        (0, 0)
    } else {
        shortest_digits(magnitude)
    };
    let mut buf = [0u8; 20];
    let digits = decimal(digits, &mut buf);
    // The exponent of the first digit, as in d.ddd × 10^exponent.
    let exponent = exponent + digits.len() as i32 - 1;
    let (first, rest) = digits.split_at(1);
    // Python never shows trailing zeros after the first digit.
    let rest = rest.trim_end_matches('0');
    let digit_count = 1 + rest.len();
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-exponent - 1) {
                out.push('0');
            }
            out.push_str(first);
            out.push_str(rest);
        } else {
            let int_len = exponent as usize + 1;
            out.push_str(first);
            if digit_count <= int_len {
                out.push_str(rest);
                for _ in digit_count..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&rest[..int_len - 1]);
                out.push('.');
                out.push_str(&rest[int_len - 1..]);
            }
        }
    } else {
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push_str(if exponent < 0 { "e-" } else { "e+" });
        if exponent.abs() < 10 {
            out.push('0');
        }
        write_u64(u64::from(exponent.unsigned_abs()), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn py(f: f64) -> String {
        let mut s = String::new();
        write_python_float(f, &mut s);
        s
    }

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
    fn floats_print_as_python_repr() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (12.0, "12.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1.234567, "1.234567"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.5e16, "1.5e+16"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (123456789.125, "123456789.125"),
            (1e300, "1e+300"),
            (-2.5e-7, "-2.5e-07"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for &(f, want) in cases {
            assert_eq!(py(f), want, "{f:e}");
        }
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
            10_000_000_000_000_000_000,
            1 << 53,
            u64::MAX,
        ] {
            let mut s = String::new();
            write_u64(n, &mut s);
            assert_eq!(s, n.to_string());
        }
        let v = parse(b"[-9223372036854775808, -1, 0, 18446744073709551615]").unwrap();
        assert_eq!(
            to_string(&v),
            "[-9223372036854775808,-1,0,18446744073709551615]"
        );
    }

    #[test]
    fn floats_print_as_python_repr_across_magnitudes() {
        // Python's repr: repr(float) for these values, checked by hand against CPython 3.11.
        let cases: &[(f64, &str)] = &[
            (1e15, "1000000000000000.0"),
            (1.2345e15, "1234500000000000.0"),
            (123.456, "123.456"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (9.5e-5, "9.5e-05"),
            (f64::from_bits(0x431A_A3D7_EAC1_1F3D), "1874624286574543.2"),
            (1e22, "1e+22"),
            (123e18, "1.23e+20"),
            (1e100, "1e+100"),
            (-1.25e-300, "-1.25e-300"),
            (2.5e22, "2.5e+22"),
        ];
        for &(f, want) in cases {
            assert_eq!(py(f), want, "{f:e}");
        }
    }

    #[test]
    fn written_floats_read_back_to_the_same_bits() {
        let mut rng = crate::json::TestRng(0x1234_5678_9ABC_DEF1);
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
    fn writers_do_not_recurse() {
        let mut v = Value::Null;
        for _ in 0..200_000 {
            v = Value::from(vec![v]);
        }
        assert_eq!(to_string(&v).len(), 200_000 * 2 + 4);
        // Pretty output grows with the square of the depth (indentation), so go less deep.
        let mut v = Value::Null;
        for _ in 0..5_000 {
            v = Value::from(vec![v]);
        }
        assert!(to_pretty_ascii_sorted(&v).len() > 5_000 * 5_000);
    }
}
