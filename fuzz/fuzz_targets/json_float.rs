//! One float, checked against an independent reference: the first eight input bytes are an `f64`
//! (finite ones are kept). `json::write_python_float` must write Python's `repr` of it: the digits
//! `{:e}` prints (shortest round trip, nearest) except that an exact tie between two that both read
//! back goes to the even one (`{:e}` breaks it upwards; the exact expansion shows which floats are
//! ties), laid out in fixed notation for decimal exponents -4..16 (`12.0`, `0.0001`) and as
//! `d.ddde±XX` otherwise; the text reads back to the same bits; written into bytes it is the same
//! text; and the writer of numeric arrays (another path to the same layout) writes the same text.
#![no_main]

use agentteams_mcp::json::{self, Value};
use libfuzzer_sys::fuzz_target;

/// `f`'s significant digits and the decimal exponent of the first, as `{:e}` prints them.
fn std_digits(f: f64) -> (String, i32) {
    let text = format!("{:e}", f.abs());
    let (mantissa, exponent) = text.split_once('e').expect("an exponent");
    (
        mantissa.replace('.', ""),
        exponent.parse().expect("a number"),
    )
}

/// Whether `f`'s exact value lies halfway between `digits` and the string one unit below it in the
/// last place (the tie `{:e}` rounded up).
fn is_tie_below(f: f64, digits: &str, point: i32) -> bool {
    // Every digit of an f64 is finite: 800 places hold them all.
    let exact = format!("{:.800e}", f.abs());
    let (mantissa, exponent) = exact.split_once('e').expect("an exponent");
    if exponent.parse::<i32>() != Ok(point) {
        return false;
    }
    let exact_digits = mantissa.replace('.', "");
    let Some(last) = digits.bytes().last().filter(|d| *d > b'0') else {
        return false;
    };
    let below = format!("{}{}5", &digits[..digits.len() - 1], char::from(last - 1));
    exact_digits.starts_with(&below) && exact_digits[below.len()..].bytes().all(|b| b == b'0')
}

/// Python's `repr` of a finite float, built from `{:e}`'s digits with the tie rule applied.
fn python_repr(f: f64) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let (mut digits, point) = std_digits(f);
    if digits.bytes().last().is_some_and(|d| d % 2 == 1) && is_tie_below(f, &digits, point) {
        // The even one is taken only if it also reads back as `f`: below a power of two the gap
        // is half as wide, so one of two equally near strings can fall outside it (2^-24 is
        // 5.9604644775390625e-08; `repr` gives ...063, as ...062 reads back as the float below).
        let mut even = digits.clone();
        let last = even.pop().expect("a digit");
        even.push(char::from(last as u8 - 1));
        let reads_back = format!("0.{even}e{}", point + 1).parse::<f64>() == Ok(f.abs());
        if reads_back {
            digits = even;
            while digits.len() > 1 && digits.ends_with('0') {
                digits.pop();
            }
        }
    }
    let body = if (-4..16).contains(&point) {
        if point < 0 {
            format!(
                "0.{}{digits}",
                "0".repeat(point.unsigned_abs() as usize - 1)
            )
        } else if digits.len() <= point as usize + 1 {
            format!(
                "{digits}{}.0",
                "0".repeat(point as usize + 1 - digits.len())
            )
        } else {
            let (int, fraction) = digits.split_at(point as usize + 1);
            format!("{int}.{fraction}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let exp_sign = if point < 0 { '-' } else { '+' };
        format!("{first}{dot}{rest}e{exp_sign}{:02}", point.unsigned_abs())
    };
    format!("{sign}{body}")
}

fuzz_target!(|data: &[u8]| {
    let Some(bytes) = data.get(..8) else {
        return;
    };
    let f = f64::from_bits(u64::from_le_bytes(bytes.try_into().expect("eight bytes")));
    if !f.is_finite() {
        return;
    }
    let mut text = String::new();
    json::write_python_float(f, &mut text);
    assert_eq!(text, python_repr(f), "bits {:#018x}", f.to_bits());
    let mut bytes = Vec::new();
    json::write_python_float(f, &mut bytes);
    assert_eq!(bytes, text.as_bytes());
    let back: f64 = text.parse().expect("the text is a float");
    assert_eq!(back.to_bits(), f.to_bits(), "{text}");
    let array = Value::from(vec![
        Value::from(f),
        Value::from(vec![Value::from(-f), Value::from(f)]),
    ]);
    let minus = if f.is_sign_negative() {
        text[1..].to_string()
    } else {
        format!("-{text}")
    };
    assert_eq!(
        json::to_string(&array),
        format!("[{text},[{minus},{text}]]")
    );
});
