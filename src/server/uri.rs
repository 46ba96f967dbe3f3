//! Which resource URIs the engine accepts, and URI templates: parsing the subset it serves and
//! matching a client's URI against one, with every extracted value checked before a server sees it.
//!
//! Accepted URIs: absolute (`scheme:rest`, the scheme `[A-Za-z][A-Za-z0-9+.-]*`), 1 to
//! [`MAX_URI_BYTES`] bytes of printable ASCII (non-ASCII must be percent-encoded, as RFC 3986
//! asks), no spaces, no control characters, no fragment (`#`). Anything else is refused before any
//! lookup. A URI is then served only if it equals a declared resource's URI or matches a declared
//! template.
//!
//! Templates (RFC 6570, the part resource templates use): literal text and expressions `{name}`
//! (one path segment: no `/`, `?` or `#`) and `{+name}` (reserved expansion: may hold `/`), names of
//! 1–32 characters of `[A-Za-z0-9_]`, at most [`MAX_TEMPLATE_VARIABLES`] of them, two expressions
//! never adjacent (a literal between them keeps matching unambiguous). Other operators and
//! modifiers (`{#x}`, `{x*}`, `{x:3}`...) are not supported: such a template is never listed or
//! matched. A `{+name}` takes the longest run that lets the next literal follow.
//!
//! Each extracted value is percent-decoded and refused when it is empty, longer than
//! [`MAX_TEMPLATE_VALUE_BYTES`], not UTF-8 once decoded, holds a control character or a backslash,
//! holds a `/` in a one-segment variable (also when sent as `%2F`), or has a `.` or `..` path
//! segment: values often become file paths or revisions, and a server should never have to
//! remember that.

use std::fmt;

/// Longest resource URI accepted, in bytes.
pub const MAX_URI_BYTES: usize = 4096;
/// Most expressions one template may hold.
pub const MAX_TEMPLATE_VARIABLES: usize = 8;
/// Longest decoded value one template variable may take, in bytes.
pub const MAX_TEMPLATE_VALUE_BYTES: usize = 1024;
/// Longest variable name, in characters.
const MAX_VARIABLE_NAME_CHARS: usize = 32;
/// A URI quoted in an error message is cut to this many bytes (it is the client's text).
const QUOTED_URI_BYTES: usize = 80;

/// Why a URI, template or template value was refused. The message names the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriError {
    message: String,
}

impl UriError {
    fn new(message: impl Into<String>) -> UriError {
        UriError {
            message: message.into(),
        }
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UriError {}

/// `uri` quoted for a message: at most `QUOTED_URI_BYTES` (80) bytes, control characters escaped.
pub fn quote(uri: &str) -> String {
    let mut cut = uri.len().min(QUOTED_URI_BYTES);
    while !uri.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out = format!("{:?}", &uri[..cut]);
    if cut < uri.len() {
        out.push_str("...");
    }
    out
}

/// Checks the form of a resource URI a client sent (module documentation).
pub fn check_uri(uri: &str) -> Result<(), UriError> {
    const FORM: &str =
        "resource URIs are absolute (scheme:rest), printable ASCII without spaces or a fragment";
    if uri.is_empty() {
        return Err(UriError::new("resource URI must not be empty"));
    }
    if uri.len() > MAX_URI_BYTES {
        return Err(UriError::new(format!(
            "resource URI is {} bytes; at most {MAX_URI_BYTES} are accepted",
            uri.len()
        )));
    }
    if let Some(bad) = uri
        .bytes()
        .find(|b| !(0x21..0x7f).contains(b) || *b == b'#')
    {
        let what = match bad {
            b'#' => "a fragment (#)".to_owned(),
            b' ' => "a space".to_owned(),
            0x80.. => "non-ASCII bytes (percent-encode them)".to_owned(),
            b => format!("control character 0x{b:02x}"),
        };
        return Err(UriError::new(format!(
            "resource URI {} holds {what}; {FORM}",
            quote(uri)
        )));
    }
    let scheme_len = uri.find(':').unwrap_or(0);
    let scheme = &uri[..scheme_len];
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'));
    if !scheme_ok {
        return Err(UriError::new(format!(
            "resource URI {} has no scheme; {FORM}",
            quote(uri)
        )));
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable { name: String, reserved: bool },
}

/// A parsed URI template (the subset in the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub fn parse(text: &str) -> Result<UriTemplate, UriError> {
        if text.is_empty() || text.len() > MAX_URI_BYTES {
            return Err(UriError::new(format!(
                "a URI template is 1 to {MAX_URI_BYTES} bytes"
            )));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest
                        .find('}')
                        .ok_or_else(|| UriError::new("unclosed { in URI template"))?;
                    let body = &rest[1..close];
                    let (name, reserved) = match body.strip_prefix('+') {
                        Some(name) => (name, true),
                        None => (body, false),
                    };
                    let name_ok = (1..=MAX_VARIABLE_NAME_CHARS).contains(&name.len())
                        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                    if !name_ok {
                        return Err(UriError::new(format!(
                            "unsupported URI template expression {{{body}}}: only {{name}} and {{+name}} with names of [A-Za-z0-9_]"
                        )));
                    }
                    if matches!(parts.last(), Some(Part::Variable { .. })) {
                        return Err(UriError::new(
                            "two URI template expressions must be separated by literal text",
                        ));
                    }
                    if parts
                        .iter()
                        .any(|p| matches!(p, Part::Variable { name: n, .. } if n == name))
                    {
                        return Err(UriError::new(format!(
                            "URI template variable {name} appears twice"
                        )));
                    }
                    parts.push(Part::Variable {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &rest[close + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    if rest[..end].contains('}') {
                        return Err(UriError::new("unopened } in URI template"));
                    }
                    parts.push(Part::Literal(rest[..end].to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        let variables = parts
            .iter()
            .filter(|p| matches!(p, Part::Variable { .. }))
            .count();
        if variables > MAX_TEMPLATE_VARIABLES {
            return Err(UriError::new(format!(
                "a URI template holds at most {MAX_TEMPLATE_VARIABLES} expressions"
            )));
        }
        Ok(UriTemplate { parts })
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches `uri` (already through [`check_uri`]): `Ok(None)` when it does not have this
    /// template's shape, `Ok(Some(values))` (decoded, checked, in variable order) when it does, and
    /// `Err` when it has the shape but a value breaks a rule.
    pub fn matches(&self, uri: &str) -> Result<Option<Vec<(String, String)>>, UriError> {
        let mut values = Vec::new();
        let mut pos = 0;
        for (i, part) in self.parts.iter().enumerate() {
            let rest = &uri[pos..];
            match part {
                Part::Literal(lit) => {
                    if !rest.starts_with(lit.as_str()) {
                        return Ok(None);
                    }
                    pos += lit.len();
                }
                Part::Variable { name, reserved } => {
                    let next = match self.parts.get(i + 1) {
                        Some(Part::Literal(lit)) => Some(lit.as_str()),
                        _ => None,
                    };
                    let len = match (next, reserved) {
                        (None, _) => rest.len(),
                        (Some(lit), false) => match rest.find(lit) {
                            Some(n) => n,
                            None => return Ok(None),
                        },
                        (Some(lit), true) => match rest.rfind(lit) {
                            Some(n) => n,
                            None => return Ok(None),
                        },
                    };
                    let raw = &rest[..len];
                    if raw.is_empty() || (!reserved && raw.contains(['/', '?', '#'])) {
                        return Ok(None);
                    }
                    values.push((name.clone(), check_value(name, raw, *reserved)?));
                    pos += len;
                }
            }
        }
        Ok((pos == uri.len()).then_some(values))
    }
}

/// The bytes `raw` percent-encodes (RFC 3986 §2.1); `None` when a `%` is not followed by two hex
/// digits.
pub fn percent_decode(raw: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut it = raw.bytes();
    while let Some(b) = it.next() {
        if b != b'%' {
            bytes.push(b);
            continue;
        }
        let hex = |c: Option<u8>| c.and_then(|c| char::from(c).to_digit(16));
        bytes.push((hex(it.next())? * 16 + hex(it.next())?) as u8);
    }
    Some(bytes)
}

/// Percent-decodes one template value and applies the value rules (module documentation).
fn check_value(name: &str, raw: &str, reserved: bool) -> Result<String, UriError> {
    let bad = |rule: &str| UriError::new(format!("template argument {name} {rule}"));
    let bytes =
        percent_decode(raw).ok_or_else(|| bad("has a % that is not followed by two hex digits"))?;
    if bytes.len() > MAX_TEMPLATE_VALUE_BYTES {
        return Err(bad(&format!(
            "is longer than {MAX_TEMPLATE_VALUE_BYTES} bytes"
        )));
    }
    let value = String::from_utf8(bytes).map_err(|_| bad("is not UTF-8 once decoded"))?;
    if value.chars().any(char::is_control) {
        return Err(bad("holds a control character"));
    }
    if value.contains('\\') {
        return Err(bad("holds a backslash"));
    }
    if !reserved && value.contains('/') {
        return Err(bad("is one path segment and must not hold /"));
    }
    if value.split('/').any(|s| s == ".." || s == ".") {
        return Err(bad("must not have a . or .. path segment"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn uri_forms() {
        assert!(check_uri("test://static-text").is_ok());
        assert!(check_uri("file:///a/b%20c").is_ok());
        assert!(check_uri("urn:x").is_ok());
        for bad in [
            "",
            "no-scheme",
            "://x",
            "1x:y",
            "a b:c",
            "x:y#frag",
            "x:\u{e9}",
            "x:\n",
        ] {
            assert!(check_uri(bad).is_err(), "{bad:?}");
        }
        let long = format!("x:{}", "a".repeat(MAX_URI_BYTES - 2));
        assert!(check_uri(&long).is_ok());
        let message = check_uri(&format!("{long}a")).unwrap_err().to_string();
        assert!(message.contains("4096"), "{message}");
    }

    #[test]
    fn quoting_cuts_long_uris() {
        let q = quote(&"é".repeat(100));
        assert!(q.len() < 100 && q.ends_with("..."), "{q}");
    }

    #[test]
    fn templates_parse_the_supported_subset() {
        let t = UriTemplate::parse("git://{rev}/{+path}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["rev", "path"]);
        for bad in [
            "x://{a}{b}",
            "x://{#a}",
            "x://{a*}",
            "x://{a:3}",
            "x://{a",
            "x://a}",
            "x://{}",
            "x://{a}/{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let many: String = (0..=MAX_TEMPLATE_VARIABLES)
            .map(|i| format!("/{{v{i}}}"))
            .collect();
        assert!(UriTemplate::parse(&format!("x:{many}")).is_err());
    }

    #[test]
    fn matching_extracts_and_checks_values() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data").unwrap(),
            Some(pairs(&[("id", "123")]))
        );
        assert_eq!(t.matches("test://template/1/2/data").unwrap(), None);
        assert_eq!(t.matches("test://template//data").unwrap(), None);
        assert_eq!(t.matches("test://other/1/data").unwrap(), None);
        assert_eq!(t.matches("test://template/1/data/x").unwrap(), None);
        assert!(t.matches("test://template/%2e%2e/data").is_err());
        assert!(t.matches("test://template/a%2Fb/data").is_err());
        assert!(t.matches("test://template/%zz/data").is_err());
        assert!(t.matches("test://template/%00/data").is_err());
        assert!(t.matches("test://template/..%5c/data").is_err());

        let g = UriTemplate::parse("git://{rev}/{+path}").unwrap();
        assert_eq!(
            g.matches("git://HEAD/src/main.rs").unwrap(),
            Some(pairs(&[("rev", "HEAD"), ("path", "src/main.rs")]))
        );
        let e = g.matches("git://HEAD/src/../../etc/passwd").unwrap_err();
        assert!(e.to_string().contains(".. path segment"), "{e}");
        assert!(g.matches("git://HEAD/./x").is_err());
        let long = format!("git://HEAD/{}", "a".repeat(MAX_TEMPLATE_VALUE_BYTES + 1));
        assert!(g.matches(&long).is_err());
    }

    /// Many generated templates and URIs from an alphabet rich in the characters the rules are
    /// about: no panic, and whatever matches obeys every value rule (a cheap stand-in for a fuzz
    /// target that runs in every test run).
    #[test]
    fn generated_inputs_never_break_the_value_rules() {
        const ALPHABET: &[u8] = b"ab:/.%2eEF5c{}+\\x\x01?#";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let templates = [
            "t://{a}/x",
            "t://{+p}",
            "t://{a}/{+p}",
            "t://{+p}/end",
            "t://{a}.{b}",
        ];
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..next(24) {
                text.push(char::from(ALPHABET[next(ALPHABET.len())]));
            }
            let _ = UriTemplate::parse(&text);
            let _ = check_uri(&text);
            let uri = format!("t://{text}");
            let template = UriTemplate::parse(templates[next(templates.len())]).unwrap();
            if check_uri(&uri).is_err() {
                continue;
            }
            if let Ok(Some(values)) = template.matches(&uri) {
                for (_, v) in values {
                    assert!(
                        !v.is_empty() && v.len() <= MAX_TEMPLATE_VALUE_BYTES,
                        "{uri}"
                    );
                    assert!(
                        !v.chars().any(char::is_control) && !v.contains('\\'),
                        "{uri}"
                    );
                    assert!(!v.split('/').any(|s| s == ".." || s == "."), "{uri}");
                }
            }
        }
    }
}
