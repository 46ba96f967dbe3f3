//! `http://` and `https://` URLs, the one URL type of the HTTP client and of the resource server's
//! own fetches: parsed once, refused with the reason ([`UrlError`]).

use std::fmt;

/// The README section that explains reaching an https server through a local TLS proxy.
pub const TLS_PROXY_HINT: &str = "see README.md, section \"TLS\"";

/// Why a URL was refused, with the URL as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlError {
    url: String,
    why: Why,
}

/// What was wrong with a URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Scheme,
    HttpsHere,
    Credentials,
    UnclosedBracket,
    AfterBracket,
    NoHost,
    PathCharacters,
    Port,
}

impl UrlError {
    #[cold]
    fn new(url: &str, why: Why) -> UrlError {
        UrlError {
            url: url.to_owned(),
            why,
        }
    }
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.why {
            Why::Scheme => "only http:// and https:// URLs are supported",
            Why::HttpsHere => {
                return write!(
                    f,
                    "URL {:?}: https is not supported here (plain http only). Run a local TLS proxy and give its http://127.0.0.1 URL ({TLS_PROXY_HINT})",
                    self.url
                )
            }
            Why::Credentials => {
                "credentials in the URL are not supported; give a bearer token with --token-file or --token-env"
            }
            Why::UnclosedBracket => "unclosed [ in the host",
            Why::AfterBracket => "junk after ]",
            Why::NoHost => "no host",
            Why::PathCharacters => "the path holds spaces or control characters",
            Why::Port => "the port must be a number from 1 to 65535",
        };
        write!(f, "URL {:?}: {why}", self.url)
    }
}

impl std::error::Error for UrlError {}

/// A parsed `http://` or `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https://`: the connection goes through the TLS helper ([`super::tls`]).
    pub tls: bool,
    /// Host as written, without brackets for IPv6.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub target: String,
}

impl HttpUrl {
    /// Parses `http://host[:port][/path][?query][#fragment]` (the fragment is dropped): the
    /// plain-http URLs that the resource server's own fetches accept. https and other schemes,
    /// user info and malformed authorities are refused with a message.
    pub fn parse(url: &str) -> Result<HttpUrl, UrlError> {
        let parsed = HttpUrl::parse_client(url)?;
        if parsed.tls {
            return Err(UrlError::new(url, Why::HttpsHere));
        }
        Ok(parsed)
    }

    /// Parses an `http://` or `https://` URL (default ports 80 and 443) for the client, which
    /// speaks https through the TLS helper; otherwise as [`HttpUrl::parse`].
    pub fn parse_client(url: &str) -> Result<HttpUrl, UrlError> {
        let bad = |why: Why| UrlError::new(url, why);
        let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
        let (tls, rest) = if lower.starts_with("https://") {
            (true, &url[8..])
        } else if lower.starts_with("http://") {
            (false, &url[7..])
        } else {
            return Err(bad(Why::Scheme));
        };
        let rest = rest.split('#').next().unwrap_or("");
        let (authority, target) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        if authority.contains('@') {
            return Err(bad(Why::Credentials));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let end = v6.find(']').ok_or_else(|| bad(Why::UnclosedBracket))?;
            let port = match &v6[end + 1..] {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad(Why::AfterBracket))?),
            };
            (&v6[..end], port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad(Why::NoHost));
        }
        if target.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad(Why::PathCharacters));
        }
        let port = match port {
            None | Some("") => default_port(tls),
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| bad(Why::Port))?,
        };
        Ok(HttpUrl {
            tls,
            host: host.to_owned(),
            port,
            target,
        })
    }

    /// The `Host` header value.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == default_port(self.tls) {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for HttpUrl {
    /// The canonical form: scheme, host, explicit port, target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.to_ascii_lowercase()
        };
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{host}:{}{}", self.port, self.target)
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
    fn urls() {
        let u = HttpUrl::parse("http://localhost:8080/mcp?x=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.target.as_str()),
            ("localhost", 8080, "/mcp?x=1")
        );
        assert_eq!(u.host_header(), "localhost:8080");
        assert_eq!(u.to_string(), "http://localhost:8080/mcp?x=1");
        let u = HttpUrl::parse("HTTP://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.host_header(), "[::1]");
        assert_eq!(HttpUrl::parse("http://h").unwrap().target, "/");
        assert_eq!(HttpUrl::parse("http://h?q").unwrap().target, "/?q");
        let https = HttpUrl::parse("https://example.com/mcp").unwrap_err();
        assert!(
            https.to_string().contains("README.md, section \"TLS\""),
            "{https}"
        );
        let u = HttpUrl::parse_client("HTTPS://Example.com/mcp").unwrap();
        assert!(u.tls);
        assert_eq!((u.port, u.host_header()), (443, "Example.com".to_owned()));
        assert_eq!(u.to_string(), "https://example.com:443/mcp");
        let u = HttpUrl::parse_client("https://[::1]:8443").unwrap();
        assert_eq!(
            (u.host_header(), u.target.as_str()),
            ("[::1]:8443".into(), "/")
        );
        assert!(!HttpUrl::parse_client("http://h:443/").unwrap().tls);
        for (url, why) in [
            ("ftp://x", "only http:// and https:// URLs"),
            ("http://", "no host"),
            ("http://u:p@h/", "credentials in the URL"),
            ("http://h:0/", "port must be"),
            ("http://h:99999/", "port must be"),
            ("http://[::1/", "unclosed ["),
            ("http://h/a b", "spaces or control"),
        ] {
            let e = HttpUrl::parse(url).unwrap_err().to_string();
            assert!(e.contains(why), "{url}: {e}");
        }
    }
}
