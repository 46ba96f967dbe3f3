//! The two JSON writers: compact (the wire) and pretty (the text form tool values are returned in).
//!
//! Both walk the value with an explicit stack, so deeply nested values cannot overflow the call stack.
//! Floats are written the way Python's `repr` writes them (shortest round-trip digits, `1e-05`,
//! `1.5e+16`, `12.0`), which keeps tool texts byte-identical with the reference implementation.

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
    PrettyAsciiSorted,
}

/// A container being written: its remaining elements.
enum Open<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(std::vec::IntoIter<&'a (String, Value)>),
}

fn object_entries(map: &Map, style: Style) -> Vec<&(String, Value)> {
    let mut entries: Vec<&(String, Value)> = map.entries().iter().collect();
    if style == Style::PrettyAsciiSorted {
        // Stable sort: with duplicate keys the later one is written last, as a dict would keep it.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
    entries
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
                    let mut iter = object_entries(m, style).into_iter();
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

/// Bytes the compact writer must escape: the quote, the backslash and control characters.
static COMPACT_ESCAPE: [bool; 256] = {
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

fn write_string(s: &str, out: &mut String, ascii_only: bool) {
    out.push('"');
    if ascii_only {
        write_escaped_ascii(s, out);
    } else {
        let bytes = s.as_bytes();
        let mut run_start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if COMPACT_ESCAPE[b as usize] {
                out.push_str(&s[run_start..i]);
                write_short_escape_or_u(b as char, out);
                run_start = i + 1;
            }
        }
        out.push_str(&s[run_start..]);
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
        N::PosInt(u) => {
            let _ = write!(out, "{u}");
        }
        N::NegInt(i) => {
            let _ = write!(out, "{i}");
        }
        N::Float(f) => write_python_float(*f, out),
        N::Verbatim(text) => out.push_str(text),
    }
}

/// Writes a finite float as Python's `repr` does: the shortest digits that round-trip, in fixed
/// notation when the decimal exponent is in -4..16 (always with a fraction, `12.0`), otherwise
/// `d.ddde±XX` with at least two exponent digits.
pub fn write_python_float(f: f64, out: &mut String) {
    // `{:e}` gives the shortest round-trip digits as `d.ddde[-]X`.
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} always has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    out.push_str(sign);
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            out.push_str("0.");
            for _ in 0..(-exponent - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
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
