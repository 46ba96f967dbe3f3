//! URLs as OAuth needs them: absolute `http`/`https` URLs parsed and printed canonically, the
//! well-known locations of RFC 8414, RFC 9728 and OpenID discovery, RFC 8707 resource matching,
//! and `application/x-www-form-urlencoded` encoding and decoding.

use std::fmt;

/// Longest URL accepted from metadata, a challenge or a redirect (a longer one is refused).
pub const MAX_URL_BYTES: usize = 4096;

/// An absolute URL as an OAuth party names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `http` or `https`, lowercase.
    pub scheme: String,
    /// Lowercase host (an IPv6 literal keeps its brackets).
    pub host: String,
    /// The port, `None` for the scheme's default.
    pub port: Option<u16>,
    /// The path, empty or starting with `/`.
    pub path: String,
    /// The query, without `?`.
    pub query: Option<String>,
}

impl Url {
    /// Parses `scheme://host[:port][/path][?query]`. Refused: other schemes, user info, a
    /// fragment (RFC 8707 and RFC 8414 forbid one in what they name), spaces and control
    /// characters, a URL over [`MAX_URL_BYTES`].
    pub fn parse(text: &str) -> Result<Url, String> {
        let bad = |why: &str| format!("URL {:?}: {why}", truncate(text));
        if text.len() > MAX_URL_BYTES {
            return Err(bad(&format!("longer than {MAX_URL_BYTES} bytes")));
        }
        if text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("holds spaces or control characters"));
        }
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| bad("not an absolute URL"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad("only http and https URLs are allowed"));
        }
        if rest.contains('#') {
            return Err(bad("a fragment is not allowed here"));
        }
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err(bad("user information is not allowed"));
        }
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, Some(q.to_owned())),
            None => (tail, None),
        };
        let (host, port) = match authority.rfind(':') {
            Some(i) if !authority[i..].contains(']') => {
                (&authority[..i], Some(&authority[i + 1..]))
            }
            _ => (authority, None),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        // A name (letters, digits, `-._~%`) or a bracketed IPv6 literal: anything else (a second
        // `:`, a stray bracket) would print as a URL that reads back differently.
        let valid = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            Some(v6) => {
                !v6.is_empty()
                    && v6
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            }
            None => host.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%')
            }),
        };
        if !valid {
            return Err(bad("the host is not a name or a bracketed IPv6 address"));
        }
        let default = if scheme == "https" { 443 } else { 80 };
        let port = match port {
            None | Some("") => None,
            Some(p) => match p.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad("the port must be a number from 1 to 65535")),
                Ok(n) if n == default => None,
                Ok(n) => Some(n),
            },
        };
        Ok(Url {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
            path: path.to_owned(),
            query,
        })
    }

    /// `scheme://host[:port]`.
    pub fn origin(&self) -> String {
        match self.port {
            Some(p) => format!("{}://{}:{p}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// The path without a trailing `/` (`""` for the root).
    fn trimmed_path(&self) -> &str {
        self.path.trim_end_matches('/')
    }

    /// The well-known URI of `suffix` for this URL with the path inserted after the suffix
    /// (RFC 8414 §3.1, RFC 9728 §3.1): `https://as.example/.well-known/SUFFIX/tenant1`.
    pub fn well_known_inserted(&self, suffix: &str) -> String {
        format!(
            "{}/.well-known/{suffix}{}",
            self.origin(),
            self.trimmed_path()
        )
    }

    /// The well-known URI of `suffix` at the origin's root.
    pub fn well_known_root(&self, suffix: &str) -> String {
        format!("{}/.well-known/{suffix}", self.origin())
    }

    /// OpenID Connect Discovery 1.0 §4: the suffix appended to the issuer's path.
    pub fn well_known_appended(&self, suffix: &str) -> String {
        format!(
            "{}{}/.well-known/{suffix}",
            self.origin(),
            self.trimmed_path()
        )
    }

    /// Whether the path is the root (`""` or `/`).
    pub fn is_root(&self) -> bool {
        self.trimmed_path().is_empty()
    }

    /// This URL with `pairs` added to its query (form-encoded).
    pub fn with_query(&self, pairs: &[(&str, &str)]) -> String {
        let added = form_encode(pairs);
        let query = match &self.query {
            Some(q) if !q.is_empty() => format!("{q}&{added}"),
            _ => added,
        };
        format!("{}{}?{query}", self.origin(), self.path)
    }

    /// Whether a protected resource named `self` covers `server` (RFC 8707, RFC 9728 §3.3): the
    /// same origin, and the server's path equal to the resource's or below it, segment-wise.
    pub fn covers(&self, server: &Url) -> bool {
        if self.origin() != server.origin() || self.query.is_some() {
            return false;
        }
        let mine = self.trimmed_path();
        let theirs = server.trimmed_path();
        theirs == mine
            || theirs
                .strip_prefix(mine)
                .is_some_and(|r| r.starts_with('/'))
    }
}

impl fmt::Display for Url {
    /// Canonical form: lowercase scheme and host, default port left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin(), self.path)?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        Ok(())
    }
}

fn truncate(text: &str) -> String {
    crate::voice::shortened(text, 120)
}

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
    fn urls_parse_to_their_canonical_form() {
        let u = Url::parse("HTTP://Example.COM:80/mcp?x=1").unwrap();
        assert_eq!(u.to_string(), "http://example.com/mcp?x=1");
        let u = Url::parse("https://as.example:8443").unwrap();
        assert_eq!(u.to_string(), "https://as.example:8443");
        assert_eq!(
            Url::parse("http://[::1]:9/a").unwrap().origin(),
            "http://[::1]:9"
        );
        for bad in [
            "ftp://x/",
            "http://u:p@host/",
            "http://host/#frag",
            "http:///path",
            "http://host:0/",
            "http://host:99999/",
            "http://ho st/",
            "/relative",
            // Found by fuzzing (fuzz/README.md): a host holding a colon printed as another URL.
            "HTTP://Example.COM:P://Exam79/mcp",
            "http://[::1/",
            "http://a]b/",
            "http://[]/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad} accepted");
        }
        assert!(Url::parse(&format!("http://h/{}", "a".repeat(MAX_URL_BYTES))).is_err());
    }

    #[test]
    fn well_known_locations_insert_or_append_the_path() {
        let issuer = Url::parse("http://as.example:9000/tenant1/").unwrap();
        assert_eq!(
            issuer.well_known_inserted("oauth-authorization-server"),
            "http://as.example:9000/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            issuer.well_known_appended("openid-configuration"),
            "http://as.example:9000/tenant1/.well-known/openid-configuration"
        );
        let root = Url::parse("http://as.example").unwrap();
        assert!(root.is_root());
        assert_eq!(
            root.well_known_inserted("oauth-authorization-server"),
            "http://as.example/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn a_resource_covers_its_own_path_and_below_only() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        for yes in [
            "http://localhost:3000/mcp",
            "http://localhost:3000",
            "http://LOCALHOST:3000/mcp/",
        ] {
            assert!(Url::parse(yes).unwrap().covers(&server), "{yes}");
        }
        for no in [
            "https://localhost:3000/mcp",
            "http://localhost:3001/mcp",
            "http://evil.example/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/deeper",
            "http://localhost:3000/mcp?x",
        ] {
            assert!(!Url::parse(no).unwrap().covers(&server), "{no}");
        }
    }

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
        let u = Url::parse("http://as/authorize?tenant=x").unwrap();
        assert_eq!(
            u.with_query(&[("state", "s")]),
            "http://as/authorize?tenant=x&state=s"
        );
    }
}
