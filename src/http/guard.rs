//! Who may talk to the endpoint: Host and Origin checks against DNS rebinding, and bearer-token
//! authentication compared in constant time.

use crate::http1::request::RequestHead;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// Host names every server accepts (any port): the loopback names a local client uses.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Environment variable the CLI reads the bearer token from when no token file is given.
pub const TOKEN_ENV_VAR: &str = "AGENTTEAMS_MCP_AUTH_TOKEN";

/// Longest bearer token accepted in a token file or the environment.
pub const MAX_TOKEN_BYTES: usize = 4096;

/// A bearer token. Never printed: `Debug` shows only that one is set.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Shortest static token accepted: guessing one of 16 visible characters is out of reach.
pub const MIN_TOKEN_BYTES: usize = 16;

/// Why a static token was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// Shorter than [`MIN_TOKEN_BYTES`].
    TooShort,
    /// Longer than [`MAX_TOKEN_BYTES`].
    TooLong,
    /// A space, control character or non-ASCII byte.
    NotVisibleAscii,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::TooShort => {
                write!(
                    f,
                    "auth token must be at least {MIN_TOKEN_BYTES} characters"
                )
            }
            TokenError::TooLong => write!(f, "auth token must be at most {MAX_TOKEN_BYTES} bytes"),
            TokenError::NotVisibleAscii => {
                f.write_str("auth token must be visible ASCII without spaces")
            }
        }
    }
}

impl std::error::Error for TokenError {}

impl Token {
    /// Accepts a token of [`MIN_TOKEN_BYTES`] to [`MAX_TOKEN_BYTES`] visible ASCII characters
    /// (RFC 6750 `b64token` is a subset), surrounding whitespace trimmed.
    pub fn new(text: &str) -> Result<Token, TokenError> {
        let text = text.trim();
        if text.len() < MIN_TOKEN_BYTES {
            return Err(TokenError::TooShort);
        }
        if text.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::TooLong);
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::NotVisibleAscii);
        }
        Ok(Token(text.to_owned()))
    }

    /// Reads a token from a file (its only content, a trailing newline allowed). A regular file
    /// that group or others may read or write is refused, as a session key file is: the token is
    /// the server's only credential. A pipe (`<(pass show mcp)`) is read as it is.
    pub fn from_file(path: &Path) -> io::Result<Token> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path)?;
        let mode = meta.permissions().mode();
        if meta.is_file() && mode & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: auth token file is readable or writable by group or others (mode {:o}); \
                     run chmod 600 on it",
                    path.display(),
                    mode & 0o777
                ),
            ));
        }
        let text = read_token_text(path, MAX_TOKEN_BYTES)?;
        Token::new(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })
    }

    /// True when `presented` equals the token; the time taken depends only on the lengths.
    pub fn matches(&self, presented: &[u8]) -> bool {
        constant_time_eq(presented, self.0.as_bytes())
    }
}

/// Compares `presented` with `expected` touching every byte of `expected` whatever the contents,
/// so the time taken reveals no prefix of the secret.
pub fn constant_time_eq(presented: &[u8], expected: &[u8]) -> bool {
    let mut diff = u8::from(presented.len() != expected.len());
    for (i, &e) in expected.iter().enumerate() {
        diff |= presented.get(i).copied().unwrap_or(!e) ^ e;
    }
    std::hint::black_box(diff) == 0
}

/// Why a request was turned away before reaching MCP.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Denial {
    /// No Host header, or more than one (400).
    MissingHost,
    /// The Host is not an allowed name (403).
    ForbiddenHost,
    /// An Origin header is present and not allowed (403).
    ForbiddenOrigin,
    /// A token is required and none was sent (401).
    NoToken,
    /// The token sent is wrong or malformed (401).
    BadToken,
}

impl Denial {
    pub fn status(self) -> u16 {
        match self {
            Denial::MissingHost => 400,
            Denial::ForbiddenHost | Denial::ForbiddenOrigin => 403,
            Denial::NoToken | Denial::BadToken => 401,
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Denial::MissingHost => "exactly one Host header is required",
            Denial::ForbiddenHost => {
                "Host header names a host this server does not serve (its operator can allow a \
                 name with --allow-host)"
            }
            Denial::ForbiddenOrigin => "Origin header names an origin this server does not allow",
            Denial::NoToken => "Authorization: Bearer token required",
            Denial::BadToken => "invalid bearer token",
        })
    }
}

/// The allow-lists and token one server checks every request against.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Lower-case host names accepted in Host and Origin, loopback names included.
    hosts: Vec<String>,
    /// Exact origins (`scheme://host[:port]`, lower-case) accepted in Origin besides `hosts`.
    origins: Vec<String>,
    token: Option<Token>,
}

impl Guard {
    pub fn new(extra_hosts: &[String], origins: &[String], token: Option<Token>) -> Guard {
        let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
        hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Guard {
            hosts,
            origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            token,
        }
    }

    pub fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// Host, then Origin (DNS-rebinding defence).
    pub fn check_origin(&self, head: &RequestHead<'_>) -> Result<(), Denial> {
        let host = match head.single("host") {
            Ok(Some(host)) => host,
            _ => return Err(Denial::MissingHost),
        };
        if !host_name(host).is_some_and(|name| self.allows_host(name)) {
            return Err(Denial::ForbiddenHost);
        }
        match head.single("origin") {
            Ok(None) => Ok(()),
            Ok(Some(origin)) if self.allows_origin(origin) => Ok(()),
            _ => Err(Denial::ForbiddenOrigin),
        }
    }

    /// The bearer token, when one is configured.
    pub fn check_token(&self, head: &RequestHead<'_>) -> Result<(), Denial> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let presented = match head.single("authorization") {
            Ok(Some(value)) => value,
            Ok(None) => return Err(Denial::NoToken),
            Err(_) => return Err(Denial::BadToken),
        };
        let credentials = match presented.iter().position(|&b| b == b' ') {
            Some(space) if presented[..space].eq_ignore_ascii_case(b"bearer") => {
                crate::http1::request::trim_ows(&presented[space + 1..])
            }
            _ => return Err(Denial::BadToken),
        };
        if token.matches(credentials) {
            Ok(())
        } else {
            Err(Denial::BadToken)
        }
    }

    fn allows_host(&self, name: &[u8]) -> bool {
        self.hosts
            .iter()
            .any(|h| h.as_bytes().eq_ignore_ascii_case(name))
    }

    fn allows_origin(&self, origin: &[u8]) -> bool {
        let lower = origin.to_ascii_lowercase();
        if self
            .origins
            .iter()
            .any(|o| o.as_bytes() == lower.as_slice())
        {
            return true;
        }
        let authority = match lower
            .strip_prefix(b"http://")
            .or_else(|| lower.strip_prefix(b"https://"))
        {
            Some(rest) => rest,
            None => return false, // includes the opaque origin `null`
        };
        host_name(authority).is_some_and(|name| self.allows_host(name))
    }
}

/// The host part of `host[:port]` (IPv6 literals keep their brackets); `None` when malformed.
pub fn host_name(authority: &[u8]) -> Option<&[u8]> {
    let (name, port) = if authority.first() == Some(&b'[') {
        let close = authority.iter().position(|&b| b == b']')?;
        let (name, rest) = authority.split_at(close + 1);
        match rest {
            [] => (name, None),
            [b':', port @ ..] => (name, Some(port)),
            _ => return None,
        }
    } else {
        match authority.iter().position(|&b| b == b':') {
            Some(colon) => (&authority[..colon], Some(&authority[colon + 1..])),
            None => (authority, None),
        }
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.iter().all(u8::is_ascii_digit));
    (!name.is_empty() && port_ok).then_some(name)
}

/// The text of a token file, read up to `max` bytes and a line ending and no further: a file
/// linked to `/dev/zero`, or a pipe that never ends, cannot fill memory. A pipe is still read
/// (`--auth-token-file <(pass show mcp)` is an operator's ordinary choice); the path is the
/// operator's, so it is not confined. The server passes [`MAX_TOKEN_BYTES`], the client its own.
pub fn read_token_text(path: &Path, max: usize) -> io::Result<String> {
    let limit = max + 2;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_string(&mut text)?;
    if text.len() > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: auth token file larger than {max} bytes",
                path.display()
            ),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::request::{parse_head, Status};

    fn check(guard: &Guard, headers: &str) -> Result<(), Denial> {
        let buf = format!("POST /mcp HTTP/1.1\r\n{headers}\r\n");
        let Ok(Status::Complete(head, _)) = parse_head(buf.as_bytes()) else {
            panic!("bad test head");
        };
        guard
            .check_origin(&head)
            .and_then(|()| guard.check_token(&head))
    }

    #[test]
    fn host_names_parse_with_and_without_ports() {
        assert_eq!(host_name(b"localhost:7330"), Some(&b"localhost"[..]));
        assert_eq!(host_name(b"[::1]:80"), Some(&b"[::1]"[..]));
        assert_eq!(host_name(b"[::1]"), Some(&b"[::1]"[..]));
        assert_eq!(host_name(b"example.com"), Some(&b"example.com"[..]));
        for bad in [
            &b""[..],
            b":80",
            b"a:",
            b"a:x",
            b"a:123456",
            b"[::1",
            b"[::1]x",
        ] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn loopback_hosts_and_origins_pass_others_are_forbidden() {
        let g = Guard::new(&[], &[], None);
        assert_eq!(check(&g, "Host: localhost:7330\r\n"), Ok(()));
        assert_eq!(
            check(&g, "Host: 127.0.0.1\r\nOrigin: http://LOCALHOST:9\r\n"),
            Ok(())
        );
        assert_eq!(
            check(&g, "Host: [::1]:1\r\nOrigin: https://[::1]\r\n"),
            Ok(())
        );
        assert_eq!(check(&g, ""), Err(Denial::MissingHost));
        assert_eq!(
            check(&g, "Host: a\r\nHost: b\r\n"),
            Err(Denial::MissingHost)
        );
        assert_eq!(
            check(&g, "Host: evil.example.com\r\n"),
            Err(Denial::ForbiddenHost)
        );
        assert_eq!(
            check(&g, "Host: localhost.evil.com\r\n"),
            Err(Denial::ForbiddenHost)
        );
        for origin in [
            "http://evil.example.com",
            "null",
            "file://localhost",
            "http://localhost:x",
            "localhost",
        ] {
            assert_eq!(
                check(&g, &format!("Host: localhost\r\nOrigin: {origin}\r\n")),
                Err(Denial::ForbiddenOrigin),
                "{origin}"
            );
        }
    }

    #[test]
    fn configured_hosts_and_origins_extend_the_lists() {
        let g = Guard::new(
            &["mcp.example.com".into()],
            &["https://app.example.com/".into()],
            None,
        );
        assert_eq!(check(&g, "Host: MCP.example.com:443\r\n"), Ok(()));
        assert_eq!(
            check(&g, "Host: localhost\r\nOrigin: https://app.example.com\r\n"),
            Ok(())
        );
        assert_eq!(
            check(&g, "Host: localhost\r\nOrigin: http://app.example.com\r\n"),
            Err(Denial::ForbiddenOrigin)
        );
    }

    #[test]
    fn bearer_tokens_are_required_and_compared_exactly() {
        let secret = "0123456789abcdef-secret";
        let g = Guard::new(&[], &[], Some(Token::new(secret).unwrap()));
        let with = |auth: &str| check(&g, &format!("Host: localhost\r\n{auth}"));
        assert_eq!(with(&format!("Authorization: Bearer {secret}\r\n")), Ok(()));
        assert_eq!(
            with(&format!("Authorization: bearer   {secret}\r\n")),
            Ok(())
        );
        assert_eq!(with(""), Err(Denial::NoToken));
        for bad in [
            format!("Authorization: Bearer {secret}x\r\n"),
            format!("Authorization: Bearer {}\r\n", &secret[1..]),
            format!("Authorization: Basic {secret}\r\n"),
            format!("Authorization: Bearer{secret}\r\n"),
            "Authorization: Bearer \r\n".to_string(),
            format!("Authorization: Bearer {secret}\r\nAuthorization: Bearer {secret}\r\n"),
        ] {
            assert_eq!(with(&bad), Err(Denial::BadToken), "{bad:?}");
        }
    }

    #[test]
    fn tokens_are_validated_and_never_printed() {
        assert!(Token::new("short").is_err());
        assert!(Token::new("has a space in the middle").is_err());
        assert!(Token::new(&"x".repeat(MAX_TOKEN_BYTES + 1)).is_err());
        let t = Token::new(" 0123456789abcdef\n").unwrap();
        assert!(t.matches(b"0123456789abcdef"));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }

    #[test]
    fn constant_time_eq_is_plain_equality() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abd", b"abc"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"abcd", b"abc"));
        assert!(constant_time_eq(b"", b""));
        assert!(!constant_time_eq(b"\xff", b"\x00"));
    }
}
