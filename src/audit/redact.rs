//! What of a call's arguments and results goes into the audit log: secrets out, bulk summarised.
//!
//! In [`Mode::Redacted`] (the default) every value is walked and
//! - the value of a member whose key looks like a secret (`password`, `api_key`, `Authorization`,
//!   `session_id`, ...) becomes [`REDACTED`];
//! - a string that looks like a credential wherever it sits (`Bearer ...`, a PEM private key, a
//!   JWT, a GitHub/GitLab/Slack/OpenAI/AWS token) becomes [`REDACTED`];
//! - a string longer than [`MAX_KEPT_STRING_BYTES`] becomes a [`summary`] (its size and SHA-256),
//!   which lets an auditor prove later which output was sent without the log holding it.
//!
//! Secrets get no digest: a digest of a short secret can be brute-forced.
//! In [`Mode::Full`] values are kept as they are. In both modes a subtree nested deeper than
//! [`MAX_KEPT_DEPTH`] is summarised, so a record always parses back within the JSON parser's
//! nesting limit and the walk's recursion stays shallow.

use crate::json::{self, Value};
use crate::sha256;

/// How much is kept of a call's arguments, results and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The default: secrets removed, long strings replaced by size and digest.
    Redacted,
    /// `--audit-full`: values kept as they were sent.
    Full,
}

impl Mode {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Mode::Redacted => "redacted",
            Mode::Full => "full",
        }
    }
}

/// Strings longer than this (in bytes) are summarised in redacted mode.
pub const MAX_KEPT_STRING_BYTES: usize = 256;

/// Containers nested deeper than this below a logged value are summarised (both modes).
pub const MAX_KEPT_DEPTH: usize = 32;

/// What replaces a secret.
pub const REDACTED: &str = "<redacted>";

/// `{"elided_bytes": N, "sha256": "..."}` for `value`: the length and digest of its compact form
/// (for a string, of the string's UTF-8 bytes).
pub fn summary(value: &Value) -> Value {
    let compact;
    let bytes = match value {
        Value::String(s) => s.as_bytes(),
        _ => {
            compact = json::to_string(value);
            compact.as_bytes()
        }
    };
    json::obj([
        ("elided_bytes", Value::from(bytes.len())),
        ("sha256", Value::from(sha256::hex_digest(bytes))),
    ])
}

/// The form of `value` the log keeps in `mode`.
pub fn for_log(value: &Value, mode: Mode) -> Value {
    walk(value, mode, 0)
}

fn walk(value: &Value, mode: Mode, depth: usize) -> Value {
    match value {
        Value::Array(_) | Value::Object(_) if depth >= MAX_KEPT_DEPTH => summary(value),
        Value::Array(items) => items
            .iter()
            .map(|v| walk(v, mode, depth + 1))
            .collect::<Vec<_>>()
            .into(),
        Value::Object(map) => {
            let entries = map.iter().enumerate().map(|(index, (key, v))| {
                if mode == Mode::Full {
                    (key.clone(), walk(v, mode, depth + 1))
                } else if key.len() > MAX_KEPT_STRING_BYTES || looks_like_credential(key) {
                    // A key can carry a secret too; it is replaced by its position.
                    (
                        format!("<redacted key {index}>").into(),
                        Value::from(REDACTED),
                    )
                } else if is_secret_key(key) {
                    (key.clone(), Value::from(REDACTED))
                } else {
                    (key.clone(), walk(v, mode, depth + 1))
                }
            });
            Value::Object(entries.collect())
        }
        Value::String(s) if mode == Mode::Redacted => {
            if looks_like_credential(s) {
                Value::from(REDACTED)
            } else if s.len() > MAX_KEPT_STRING_BYTES {
                summary(value)
            } else {
                value.clone()
            }
        }
        _ => value.clone(),
    }
}

/// Parts of a key (lower-cased, separators removed) that mark its value as secret.
const SECRET_KEY_PARTS: [&str; 14] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
    "authorization",
    "cookie",
    "sessionid",
    "bearer",
    "signature",
];

/// Whole keys (normalised the same way) that mark their value as secret.
const SECRET_KEYS: [&str; 3] = ["auth", "pwd", "otp"];

/// Whether a member named `key` holds a secret: `apiKey`, `X-Api-Key`, `db_password`,
/// `refresh_token`, `Authorization`, `auth`... Over-matching (`max_tokens`) costs only a value in the
/// log; under-matching leaks a secret, so the test is "contains".
pub fn is_secret_key(key: &str) -> bool {
    let normalised: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SECRET_KEYS.contains(&normalised.as_str())
        || SECRET_KEY_PARTS
            .iter()
            .any(|part| normalised.contains(part))
}

/// Token prefixes of well-known services, each followed by at least [`MIN_TOKEN_BODY`] token
/// characters: GitHub, GitLab, Slack, OpenAI-style keys.
const TOKEN_PREFIXES: [&str; 11] = [
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "sk-",
];

/// The shortest run of token characters after a prefix or `Bearer ` that counts as a credential.
const MIN_TOKEN_BODY: usize = 16;

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=')
}

/// The number of token characters at the start of `bytes`.
fn token_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|&&b| is_token_char(b)).count()
}

/// Whether `s` contains something that looks like a credential: an HTTP `Bearer` or `Basic`
/// credential, a PEM private key, a JWT, an AWS access key id or a service token with a
/// well-known prefix.
pub fn looks_like_credential(s: &str) -> bool {
    let bytes = s.as_bytes();
    let lower = s.to_ascii_lowercase();
    if lower.contains("private key-----") {
        return true;
    }
    const BEARER: &str = "bearer ";
    if lower
        .match_indices(BEARER)
        .any(|(at, _)| token_run(&bytes[at + BEARER.len()..]) >= MIN_TOKEN_BODY / 2)
        || (lower.starts_with("basic ") && token_run(&bytes[6..]) >= MIN_TOKEN_BODY / 2)
    {
        return true;
    }
    // Prefixed tokens, AWS key ids and JWTs start a word: the previous byte is not a token byte.
    (0..bytes.len())
        .filter(|&at| at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
        .any(|at| {
            let rest = &bytes[at..];
            TOKEN_PREFIXES.iter().any(|prefix| {
                rest.starts_with(prefix.as_bytes())
                    && token_run(&rest[prefix.len()..]) >= MIN_TOKEN_BODY
            }) || is_aws_key_id(rest)
                || is_jwt(rest)
        })
}

/// `AKIA` or `ASIA` followed by 16 upper-case letters or digits.
fn is_aws_key_id(rest: &[u8]) -> bool {
    (rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA"))
        && rest.len() >= 20
        && rest[4..20]
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Three base64url segments separated by dots, the first starting `eyJ` (base64 of `{"`).
fn is_jwt(rest: &[u8]) -> bool {
    if !rest.starts_with(b"eyJ") {
        return false;
    }
    let segment = |b: &[u8]| {
        b.iter()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            .count()
    };
    let first = segment(rest);
    if first < 10 || rest.get(first) != Some(&b'.') {
        return false;
    }
    let rest = &rest[first + 1..];
    let second = segment(rest);
    second >= 10 && rest.get(second) == Some(&b'.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn redacted(text: &str) -> String {
        json::to_string(&for_log(&parse(text.as_bytes()).unwrap(), Mode::Redacted))
    }

    #[test]
    fn secret_keys_are_recognised_in_any_spelling() {
        for key in [
            "password",
            "db_password",
            "apiKey",
            "X-Api-Key",
            "Authorization",
            "refresh_token",
            "client_secret",
            "auth",
            "SESSION_ID",
            "aws_secret_access_key",
            "privateKey",
            "Cookie",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "path",
            "author",
            "rev",
            "query",
            "limit",
            "max_count",
            "keyword",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn credential_shaped_strings_are_recognised() {
        for s in [
            "Bearer abcdefgh12345678",
            "curl -H 'authorization: bearer abcdefgh12345678'",
            "Basic dXNlcjpwYXNzd29yZA==",
            "token ghp_0123456789abcdefghijABCDEFGHIJ0123",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "glpat-abcdefghij0123456789",
            "xoxb-1234567890-abcdefghijkl",
            "key=sk-proj-abcdefghijklmnop1234",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ] {
            assert!(looks_like_credential(s), "{s}");
        }
        for s in [
            "the bearer of bad news",
            "Bearer short",
            "basic usage of git log",
            "task-list and desk-lamp",
            "ghp_short",
            "AKIA lowercase",
            "eyJ not a jwt",
            "fix: sk-learn import",
        ] {
            assert!(!looks_like_credential(s), "{s}");
        }
    }

    #[test]
    fn redacted_mode_hides_secrets_and_summarises_bulk() {
        let long = "x".repeat(MAX_KEPT_STRING_BYTES + 1);
        let text = format!(
            r#"{{"path":"a.txt","password":"hunter2","nested":[{{"Authorization":"x"}},"Bearer abcdefgh12345678"],"text":"{long}","ok":"{}"}}"#,
            "y".repeat(MAX_KEPT_STRING_BYTES)
        );
        let out = redacted(&text);
        assert_eq!(
            out,
            format!(
                r#"{{"path":"a.txt","password":"<redacted>","nested":[{{"Authorization":"<redacted>"}},"<redacted>"],"text":{{"elided_bytes":257,"sha256":"{}"}},"ok":"{}"}}"#,
                sha256::hex_digest(long.as_bytes()),
                "y".repeat(MAX_KEPT_STRING_BYTES)
            )
        );
        assert!(!out.contains("hunter2") && !out.contains("abcdefgh12345678"));
    }

    #[test]
    fn credential_keys_are_replaced_by_position() {
        let out = redacted(r#"{"a":1,"ghp_0123456789abcdefghijABCD":2}"#);
        assert_eq!(out, r#"{"a":1,"<redacted key 1>":"<redacted>"}"#);
    }

    #[test]
    fn repeated_and_colliding_keys_keep_their_first_place_and_last_value() {
        // A long key becomes `<redacted key 1>`, the name a key before it already took.
        let long = "k".repeat(MAX_KEPT_STRING_BYTES + 1);
        assert_eq!(
            redacted(&format!(
                r#"{{"<redacted key 1>": 1, "{long}": 2, "a": 3, "a": 4}}"#
            )),
            r#"{"<redacted key 1>":"<redacted>","a":4}"#
        );
    }

    #[test]
    fn full_mode_keeps_values() {
        let text = r#"{"password":"hunter2","t":"Bearer abcdefgh12345678"}"#;
        let v = parse(text.as_bytes()).unwrap();
        assert_eq!(for_log(&v, Mode::Full), v);
    }

    #[test]
    fn nesting_beyond_the_limit_is_summarised_in_both_modes() {
        let mut v = Value::from("leaf");
        for _ in 0..MAX_KEPT_DEPTH + 5 {
            v = Value::from(vec![v]);
        }
        for mode in [Mode::Full, Mode::Redacted] {
            let mut out = for_log(&v, mode);
            let mut depth = 0;
            while let Value::Array(items) = out {
                out = items.into_vec().remove(0);
                depth += 1;
            }
            assert_eq!(depth, MAX_KEPT_DEPTH);
            assert!(out.get("elided_bytes").is_some() && out.get("sha256").is_some());
        }
    }
}
