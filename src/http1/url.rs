//! `http://` and `https://` URLs: the one URL type of the HTTP client, the resource server's own
//! fetches and OAuth. Parsed once by one set of rules (a name or a bracketed IPv6 host, no user
//! information, no spaces or control characters, a port from 1 to 65535, at most
//! [`MAX_URL_BYTES`]); where to connect ([`Url::parse`], [`Url::parse_client`]: a fragment is
//! dropped) and what an OAuth party names ([`Url::parse_identifier`]: a fragment is refused, as
//! RFC 8707 and RFC 8414 forbid one) differ only in that. Refused with the reason ([`UrlError`]).

use std::fmt;

/// Longest URL accepted (from a command line, metadata, a challenge or a redirect).
pub const MAX_URL_BYTES: usize = 4096;

/// The README section that explains reaching an https server through a local TLS proxy.
pub const TLS_PROXY_HINT: &str = "see README.md, section \"TLS\"";

/// Characters of a refused URL quoted in its message.
const QUOTED_CHARS: usize = 120;

/// An absolute `http` or `https` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `https://`: the client's connection goes through the TLS helper.
    pub tls: bool,
    /// The host, lowercase, without brackets for IPv6.
    pub host: String,
    /// The port (the scheme's default when none was written).
    pub port: u16,
    /// The path as written: empty or starting with `/`.
    path: String,
    /// The query, without `?`.
    query: Option<String>,
}

/// Why a URL was refused, with the URL as given (shortened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlError {
    url: String,
    why: Why,
    rules: Rules,
}

/// What a URL is parsed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rules {
    /// Where to connect: a fragment is dropped.
    Connection,
    /// What an OAuth party names: a fragment is refused.
    Identifier,
}

/// What was wrong with a URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    TooLong,
    Characters,
    Scheme,
    HttpsHere,
    Fragment,
    Credentials,
    UnclosedBracket,
    AfterBracket,
    NoHost,
    BadHost,
    Port,
}

impl UrlError {
    #[cold]
    fn new(url: &str, why: Why, rules: Rules) -> UrlError {
        UrlError {
            url: crate::voice::shortened(url, QUOTED_CHARS),
            why,
            rules,
        }
    }
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let connection = self.rules == Rules::Connection;
        let why = match self.why {
            Why::TooLong => format!("longer than {MAX_URL_BYTES} bytes"),
            Why::Characters if connection => "the URL holds spaces or control characters".into(),
            Why::Characters => "holds spaces or control characters".into(),
            Why::Scheme if connection => "only http:// and https:// URLs are supported".into(),
            Why::Scheme => "only http and https URLs are allowed".into(),
            Why::HttpsHere => format!(
                "https is not supported here (plain http only). Run a local TLS proxy and give its http://127.0.0.1 URL ({TLS_PROXY_HINT})"
            ),
            Why::Fragment => "a fragment is not allowed here".into(),
            Why::Credentials if connection => "credentials in the URL are not supported; give a bearer token with --token-file or --token-env".into(),
            Why::Credentials => "user information is not allowed".into(),
            Why::UnclosedBracket => "unclosed [ in the host".into(),
            Why::AfterBracket => "junk after ]".into(),
            Why::NoHost => "no host".into(),
            Why::BadHost => "the host is not a name or a bracketed IPv6 address".into(),
            Why::Port => "the port must be a number from 1 to 65535".into(),
        };
        write!(f, "URL {:?}: {why}", self.url)
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parses `http://host[:port][/path][?query][#fragment]` (the fragment is dropped): the
    /// plain-http URLs that the resource server's own fetches accept; https is refused with the
    /// way to reach it.
    pub fn parse(url: &str) -> Result<Url, UrlError> {
        let parsed = Url::parse_client(url)?;
        if parsed.tls {
            return Err(UrlError::new(url, Why::HttpsHere, Rules::Connection));
        }
        Ok(parsed)
    }

    /// Parses an `http://` or `https://` URL to connect to (default ports 80 and 443; the
    /// fragment is dropped): the client speaks https through the TLS helper.
    pub fn parse_client(url: &str) -> Result<Url, UrlError> {
        parse(url, Rules::Connection)
    }

    /// Parses an `http` or `https` URL an OAuth party names (a resource, an issuer, an
    /// endpoint): as [`Url::parse_client`], but a fragment is refused.
    pub fn parse_identifier(url: &str) -> Result<Url, UrlError> {
        parse(url, Rules::Identifier)
    }

    /// Path and query, as a request line names them (`/` for an empty path).
    pub fn target(&self) -> String {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match &self.query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        }
    }

    /// The host as a URL writes it (IPv6 in brackets).
    fn host_in_url(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// The `Host` header value (the port only when it is not the scheme's default).
    pub fn host_header(&self) -> String {
        match self.port == default_port(self.tls) {
            true => self.host_in_url(),
            false => format!("{}:{}", self.host_in_url(), self.port),
        }
    }

    /// `scheme://host[:port]`, the port only when it is not the scheme's default.
    pub fn origin(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.host_header())
    }

    /// The canonical form an OAuth party compares and stores: origin, path as written, query.
    pub fn identifier(&self) -> String {
        match &self.query {
            Some(q) => format!("{}{}?{q}", self.origin(), self.path),
            None => format!("{}{}", self.origin(), self.path),
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

    /// This URL with `added` (already form-encoded) appended to its query.
    pub fn with_query(&self, added: &str) -> String {
        let query = match &self.query {
            Some(q) if !q.is_empty() => format!("{q}&{added}"),
            _ => added.to_owned(),
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

/// The one parser: `scheme://host[:port][/path][?query][#fragment]` by `rules`.
fn parse(text: &str, rules: Rules) -> Result<Url, UrlError> {
    let bad = |why: Why| UrlError::new(text, why, rules);
    if text.len() > MAX_URL_BYTES {
        return Err(bad(Why::TooLong));
    }
    if text.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad(Why::Characters));
    }
    let (scheme, rest) = text.split_once("://").ok_or_else(|| bad(Why::Scheme))?;
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        _ => return Err(bad(Why::Scheme)),
    };
    let rest = match (rest.split_once('#'), rules) {
        (None, _) => rest,
        (Some((before, _)), Rules::Connection) => before,
        (Some(_), Rules::Identifier) => return Err(bad(Why::Fragment)),
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.contains('@') {
        return Err(bad(Why::Credentials));
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q.to_owned())),
        None => (tail, None),
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let end = v6.find(']').ok_or_else(|| bad(Why::UnclosedBracket))?;
            let port = match &v6[end + 1..] {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad(Why::AfterBracket))?),
            };
            let literal = &v6[..end];
            let valid = !literal.is_empty()
                && literal
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
            if !valid {
                return Err(bad(Why::BadHost));
            }
            (literal, port)
        }
        None => {
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            // A name (letters, digits, `-._~%`): anything else (a second `:`, a stray bracket)
            // would print as a URL that reads back differently.
            let valid = host.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%')
            });
            if !host.is_empty() && !valid {
                return Err(bad(Why::BadHost));
            }
            (host, port)
        }
    };
    if host.is_empty() {
        return Err(bad(Why::NoHost));
    }
    let port = match port {
        None | Some("") => default_port(tls),
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| bad(Why::Port))?,
    };
    Ok(Url {
        tls,
        host: host.to_ascii_lowercase(),
        port,
        path: path.to_owned(),
        query,
    })
}

impl fmt::Display for Url {
    /// Where the connection goes: scheme, host, explicit port, target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        write!(
            f,
            "{scheme}://{}:{}{}",
            self.host_in_url(),
            self.port,
            self.target()
        )
    }
}

/// The port a URL without one means.
fn default_port(tls: bool) -> u16 {
    if tls {
        443
    } else {
        80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_urls() {
        let u = Url::parse("http://localhost:8080/mcp?x=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.target().as_str()),
            ("localhost", 8080, "/mcp?x=1")
        );
        assert_eq!(u.host_header(), "localhost:8080");
        assert_eq!(u.to_string(), "http://localhost:8080/mcp?x=1");
        let u = Url::parse("HTTP://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.host_header(), "[::1]");
        assert_eq!(Url::parse("http://h").unwrap().target(), "/");
        assert_eq!(Url::parse("http://h?q").unwrap().target(), "/?q");
        let https = Url::parse("https://example.com/mcp").unwrap_err();
        assert!(
            https.to_string().contains("README.md, section \"TLS\""),
            "{https}"
        );
        let u = Url::parse_client("HTTPS://Example.com/mcp").unwrap();
        assert!(u.tls);
        assert_eq!((u.port, u.host_header()), (443, "example.com".to_owned()));
        assert_eq!(u.to_string(), "https://example.com:443/mcp");
        let u = Url::parse_client("https://[::1]:8443").unwrap();
        assert_eq!(
            (u.host_header(), u.target().as_str()),
            ("[::1]:8443".into(), "/")
        );
        assert!(!Url::parse_client("http://h:443/").unwrap().tls);
        for (url, why) in [
            ("ftp://x", "only http:// and https:// URLs"),
            ("http://", "no host"),
            ("http://u:p@h/", "credentials in the URL"),
            ("http://h:0/", "port must be"),
            ("http://h:99999/", "port must be"),
            ("http://[::1/", "unclosed ["),
            ("http://h/a b", "spaces or control"),
            ("http://a]b/", "not a name or a bracketed IPv6"),
        ] {
            let e = Url::parse(url).unwrap_err().to_string();
            assert!(e.contains(why), "{url}: {e}");
        }
    }

    #[test]
    fn identifiers_parse_to_their_canonical_form() {
        let u = Url::parse_identifier("HTTP://Example.COM:80/mcp?x=1").unwrap();
        assert_eq!(u.identifier(), "http://example.com/mcp?x=1");
        let u = Url::parse_identifier("https://as.example:8443").unwrap();
        assert_eq!(u.identifier(), "https://as.example:8443");
        assert_eq!(
            Url::parse_identifier("http://[::1]:9/a").unwrap().origin(),
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
            assert!(Url::parse_identifier(bad).is_err(), "{bad} accepted");
        }
        let long = format!("http://h/{}", "a".repeat(MAX_URL_BYTES));
        assert!(Url::parse_identifier(&long).is_err());
        assert!(Url::parse_client(&long).is_err());
        // The fragment alone tells the two rules apart.
        assert!(Url::parse_client("http://host/#frag").is_ok());
        let e = Url::parse_identifier("http://host/#frag").unwrap_err();
        assert_eq!(
            e.to_string(),
            "URL \"http://host/#frag\": a fragment is not allowed here"
        );
    }

    #[test]
    fn well_known_locations_insert_or_append_the_path() {
        let issuer = Url::parse_identifier("http://as.example:9000/tenant1/").unwrap();
        assert_eq!(
            issuer.well_known_inserted("oauth-authorization-server"),
            "http://as.example:9000/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            issuer.well_known_appended("openid-configuration"),
            "http://as.example:9000/tenant1/.well-known/openid-configuration"
        );
        let root = Url::parse_identifier("http://as.example").unwrap();
        assert!(root.is_root());
        assert_eq!(
            root.well_known_inserted("oauth-authorization-server"),
            "http://as.example/.well-known/oauth-authorization-server"
        );
        let u = Url::parse_identifier("http://as/authorize?tenant=x").unwrap();
        assert_eq!(
            u.with_query("state=s"),
            "http://as/authorize?tenant=x&state=s"
        );
    }

    #[test]
    fn a_resource_covers_its_own_path_and_below_only() {
        let server = Url::parse_identifier("http://localhost:3000/mcp").unwrap();
        for yes in [
            "http://localhost:3000/mcp",
            "http://localhost:3000",
            "http://LOCALHOST:3000/mcp/",
        ] {
            assert!(Url::parse_identifier(yes).unwrap().covers(&server), "{yes}");
        }
        for no in [
            "https://localhost:3000/mcp",
            "http://localhost:3001/mcp",
            "http://evil.example/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/deeper",
            "http://localhost:3000/mcp?x",
        ] {
            assert!(!Url::parse_identifier(no).unwrap().covers(&server), "{no}");
        }
    }
}
