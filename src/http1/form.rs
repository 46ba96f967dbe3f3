//! `application/x-www-form-urlencoded`: the bodies and queries OAuth sends, encoded and decoded.

/// `application/x-www-form-urlencoded` of `pairs` (unreserved characters kept, space as `%20`,
/// which every decoder reads).
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        percent_encode_into(k, &mut out);
        out.push('=');
        percent_encode_into(v, &mut out);
    }
    out
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    percent_encode_into(text, &mut out);
    out
}

fn percent_encode_into(text: &str, out: &mut String) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Decodes a form-encoded query into pairs (`+` is a space). `None` when an escape is malformed
/// or the result is not UTF-8.
pub fn parse_query(query: &str) -> Option<Vec<(String, String)>> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((form_decode(k)?, form_decode(v)?))
        })
        .collect()
}

fn form_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip() {
        let encoded = form_encode(&[
            ("redirect_uri", "http://127.0.0.1:5/cb?a=b"),
            ("scope", "a b+c"),
        ]);
        assert_eq!(
            encoded,
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb%3Fa%3Db&scope=a%20b%2Bc"
        );
        let back = parse_query(&encoded).unwrap();
        assert_eq!(back[1], ("scope".to_owned(), "a b+c".to_owned()));
        assert_eq!(parse_query("a=1+2&b").unwrap()[1], ("b".into(), "".into()));
        assert!(parse_query("a=%zz").is_none());
        assert!(parse_query("a=%ff").is_none());
    }
}
