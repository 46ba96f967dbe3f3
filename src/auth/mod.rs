//! The OAuth 2.1 resource server (MCP authorization; RFC 6750, 7662, 8707, 9068, 9728): decides
//! whether a request's bearer token grants what the request asks, for the HTTP endpoint to answer
//! 400, 401, 403 or 503 with the right `WWW-Authenticate` challenge.
//!
//! A token of three dot-separated parts whose first is a JSON object with `alg` is a JWT access
//! token: its `typ` must be `at+jwt` (RFC 9068 §4), its
//! issuer one of the configured authorization servers, its signature valid under that issuer's
//! keys ([`jwks::KeyCache`], [`crate::crypto::jws`]) with an accepted algorithm, and its claims
//! ([`crate::crypto::jwt::check_claims`]) name this resource as audience, within the clock skew.
//! Any other token is introspected ([`introspect`]) when an endpoint is configured, else refused.
//! Then [`scopes`] says what the request needs. The token is never stored (validated tokens are
//! remembered under its SHA-256, [`cache`]), never logged and never forwarded; what leaves this module about it is the
//! [`Grant`]: issuer, subject, scopes, and a digest of the subject for the audit log.

pub mod cache;
pub mod config;
pub mod fetch;
mod grant;
pub mod introspect;
pub mod jwks;
pub mod scopes;

use crate::base64;
use crate::crypto::jws::{self, Algorithm, MAX_TOKEN_LEN};
use crate::crypto::jwt::{self, Rules};
use crate::json::{self, Limits, Value};
use crate::server::reach::Reach;
use cache::TokenCache;
use config::AuthConfig;
pub use grant::{Grant, PRINCIPAL_DIGEST_BYTES, PRINCIPAL_PREFIX};
use introspect::{Introspector, Refusal};
use jwks::{KeyCache, Refresh};
use scopes::ScopeRules;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The longest `error_description` sent in a challenge.
pub const MAX_ERROR_DESCRIPTION: usize = 200;
/// Seconds a client is told to wait (`Retry-After`) when an authorization server is unreachable.
pub const RETRY_AFTER_SECS: u64 = 5;

/// Why a request is refused, each with its status and challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No bearer token (no `Authorization`, or another scheme): 401 without an error code.
    NoToken,
    /// A malformed `Authorization` header: 400 `invalid_request`.
    Malformed(String),
    /// The token is refused: 401 `invalid_token`, the text says which rule.
    Invalid(String),
    /// The token lacks scopes the request needs: 403 `insufficient_scope` with them.
    InsufficientScope(Vec<String>),
    /// An authorization server could not be asked (keys, introspection): 503, failing closed.
    Unavailable(String),
}

impl Failure {
    pub fn status(&self) -> u16 {
        match self {
            Failure::NoToken | Failure::Invalid(_) => 401,
            Failure::Malformed(_) => 400,
            Failure::InsufficientScope(_) => 403,
            Failure::Unavailable(_) => 503,
        }
    }

    /// The message of the JSON-RPC error body.
    pub fn message(&self) -> String {
        match self {
            Failure::NoToken => "Authorization: Bearer token required".into(),
            Failure::Malformed(why) => format!("malformed Authorization header: {why}"),
            Failure::Invalid(why) => format!("invalid access token: {why}"),
            Failure::InsufficientScope(needed) => {
                format!(
                    "the access token lacks a scope this request needs ({})",
                    needed.join(" ")
                )
            }
            Failure::Unavailable(why) => format!("authorization server unavailable: {why}"),
        }
    }

    /// The `WWW-Authenticate` value (RFC 6750 §3 with RFC 9728's `resource_metadata`); `None`
    /// for a 503, which is no challenge. `required` is what every request needs (the 401's
    /// `scope`).
    pub fn challenge(&self, metadata_url: &str, required: &[String]) -> Option<String> {
        let mut value = format!("Bearer resource_metadata=\"{metadata_url}\"");
        let scope = |value: &mut String, scopes: &[String]| {
            if !scopes.is_empty() {
                value.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
            }
        };
        let described = |value: &mut String, code: &str, why: &str| {
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                description(why)
            ));
        };
        match self {
            Failure::NoToken => scope(&mut value, required),
            Failure::Malformed(why) => described(&mut value, "invalid_request", why),
            Failure::Invalid(why) => {
                scope(&mut value, required);
                described(&mut value, "invalid_token", why);
            }
            Failure::InsufficientScope(needed) => {
                scope(&mut value, needed);
                described(
                    &mut value,
                    "insufficient_scope",
                    "the request needs the scopes named",
                );
            }
            Failure::Unavailable(_) => return None,
        }
        Some(value)
    }
}

/// `why` as RFC 6750 allows an `error_description`: `%x20-21 / %x23-5B / %x5D-7E`, at most
/// [`MAX_ERROR_DESCRIPTION`] characters.
fn description(why: &str) -> String {
    why.chars()
        .take(MAX_ERROR_DESCRIPTION)
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '?',
        })
        .collect()
}

/// The RFC 6750 `b64token` alphabet.
fn is_b64token(token: &[u8]) -> bool {
    let body = token
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(&token[..0], |last| &token[..=last]);
    !body.is_empty()
        && body.iter().all(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// The bearer token of an `Authorization` header value.
pub fn bearer_token(header: &[u8]) -> Result<&str, Failure> {
    let (scheme, rest) = match header.iter().position(|&b| b == b' ') {
        Some(space) => (&header[..space], &header[space + 1..]),
        None => (header, &header[header.len()..]),
    };
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Err(Failure::NoToken);
    }
    let token = crate::http1::request::trim_ows(rest);
    if token.is_empty() {
        return Err(Failure::Malformed("Bearer without a token".into()));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(Failure::Malformed(format!(
            "the token is longer than {MAX_TOKEN_LEN} bytes"
        )));
    }
    if !is_b64token(token) {
        return Err(Failure::Malformed(
            "the token has characters outside RFC 6750's b64token".into(),
        ));
    }
    Ok(std::str::from_utf8(token).unwrap_or_default())
}

/// A JWT part decoded and parsed as a JSON object (before any signature check: only for
/// choosing the key and issuer).
fn unverified_object(part: &str, what: &str) -> Result<Value, Failure> {
    let bytes = base64::decode_url(part)
        .ok_or_else(|| Failure::Invalid(format!("the JWT {what} is not base64url")))?;
    let limits = Limits {
        max_depth: 16,
        ..Limits::default()
    };
    match json::parse_with_limits(&bytes, limits) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(Failure::Invalid(format!(
            "the JWT {what} is not a JSON object"
        ))),
    }
}

/// The resource server: configuration, one key cache per issuer, the introspection client.
pub struct ResourceServer {
    resource: String,
    issuers: Vec<(String, KeyCache)>,
    algorithms: Vec<Algorithm>,
    clock_skew_secs: u64,
    introspector: Option<Introspector>,
    /// Outcomes of tokens validated lately: JWT grants, introspection answers.
    tokens: TokenCache,
    scopes: ScopeRules,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers())
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    pub fn new(config: AuthConfig) -> ResourceServer {
        let refresh = Refresh {
            refetch_interval: config.cache.jwks_refetch_interval,
            max_age: config.cache.jwks_max_age,
            timeout: config.fetch_timeout,
        };
        let names: Vec<String> = config.issuers.iter().map(|i| i.issuer.clone()).collect();
        let introspector = config.introspection.map(|settings| {
            Introspector::new(
                settings,
                introspect::Checks {
                    issuers: names.clone(),
                    resource: config.resource.clone(),
                    clock_skew_secs: config.clock_skew_secs,
                    timeout: config.fetch_timeout,
                },
            )
        });
        ResourceServer {
            issuers: config
                .issuers
                .into_iter()
                .map(|i| (i.issuer.clone(), KeyCache::new(&i.issuer, i.keys, refresh)))
                .collect(),
            resource: config.resource,
            algorithms: config.algorithms,
            clock_skew_secs: config.clock_skew_secs,
            introspector,
            tokens: TokenCache::new(
                config.cache.token_cache_ttl,
                config.cache.token_cache_max_entries,
            ),
            scopes: config.scopes,
        }
    }

    /// The canonical resource URI (the audience tokens must name).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The issuers trusted, for the metadata's `authorization_servers`.
    pub fn authorization_servers(&self) -> Vec<String> {
        self.issuers.iter().map(|(name, _)| name.clone()).collect()
    }

    pub fn scopes(&self) -> &ScopeRules {
        &self.scopes
    }

    /// Checks the `Authorization` header (`None`: absent; `Err`: sent more than once) and
    /// returns what its token grants.
    pub fn authenticate(&self, header: Result<Option<&[u8]>, ()>) -> Result<Grant, Failure> {
        let header = match header {
            Ok(Some(header)) => header,
            Ok(None) => return Err(Failure::NoToken),
            Err(()) => return Err(Failure::Malformed("Authorization must be sent once".into())),
        };
        let token = bearer_token(header)?;
        let now_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.validate(token, Instant::now(), now_secs)
    }

    /// What `token` grants at `now` (`now_secs`: the same instant as Unix seconds).
    /// Remembered from a recent validation, or validated now and remembered.
    pub fn validate(&self, token: &str, now: Instant, now_secs: u64) -> Result<Grant, Failure> {
        let key = cache::key_of(token);
        if let Some(outcome) = self.tokens.get(&key, now) {
            return outcome.map_err(Failure::Invalid);
        }
        let parts: Vec<&str> = token.split('.').collect();
        // A JWT is three parts whose first is a JSON object with `alg`; anything else (an opaque
        // token may hold dots) is for introspection.
        let header = match parts[..] {
            [first, _, _] => unverified_object(first, "header")
                .ok()
                .filter(|h| h.get("alg").is_some()),
            _ => None,
        };
        let Some(header) = header else {
            return self.introspect(token, key, now, now_secs);
        };
        let typ = header.get("typ").and_then(Value::as_str).unwrap_or("");
        if !typ.eq_ignore_ascii_case("at+jwt") && !typ.eq_ignore_ascii_case("application/at+jwt") {
            return Err(Failure::Invalid(
                "the JWT's typ is not at+jwt (RFC 9068 access tokens only)".into(),
            ));
        }
        let (issuer, key_cache) = match &self.issuers[..] {
            [(name, only)] => (name.as_str(), only),
            several => {
                let claims = unverified_object(parts[1], "payload")?;
                let iss = claims.get("iss").and_then(Value::as_str).unwrap_or("");
                match several.iter().find(|(name, _)| name == iss) {
                    Some((name, keys)) => (name.as_str(), keys),
                    None => {
                        return Err(Failure::Invalid(
                            "the issuer (iss) is not a configured authorization server".into(),
                        ))
                    }
                }
            }
        };
        if !key_cache.has_keys() {
            return self.introspect(token, key, now, now_secs);
        }
        let kid = header.get("kid").and_then(Value::as_str);
        let keys = key_cache
            .keys_for(kid, now)
            .map_err(|e| Failure::Unavailable(e.0))?;
        let claims = jws::verify(token, &keys, &self.algorithms)
            .map_err(|e| Failure::Invalid(e.to_string()))?;
        let rules = Rules {
            issuer,
            audience: &self.resource,
            clock_skew_secs: self.clock_skew_secs,
            now_secs,
        };
        let checked =
            jwt::check_claims(&claims, &rules).map_err(|e| Failure::Invalid(e.to_string()))?;
        let grant = Grant {
            issuer: issuer.to_owned(),
            subject: checked.subject,
            scopes: checked.scopes,
            expires_at: Some(checked.expires_at),
        };
        // Grants only: a refusal may turn valid (nbf) and is cheap to find again.
        self.tokens.put(key, Ok(grant.clone()), now, now_secs);
        Ok(grant)
    }

    /// Asks the introspection endpoint and remembers its answer, active or not (a failure to
    /// answer is not remembered).
    fn introspect(
        &self,
        token: &str,
        key: [u8; 32],
        now: Instant,
        now_secs: u64,
    ) -> Result<Grant, Failure> {
        let Some(introspector) = &self.introspector else {
            return Err(Failure::Invalid(
                "not a JWT access token, and no introspection endpoint is configured".into(),
            ));
        };
        let outcome = match introspector.check(token, now_secs) {
            Ok(grant) => Ok(grant),
            Err(Refusal::Invalid(why)) => Err(why),
            Err(Refusal::Unavailable(why)) => return Err(Failure::Unavailable(why)),
        };
        self.tokens.put(key, outcome.clone(), now, now_secs);
        outcome.map_err(Failure::Invalid)
    }

    /// Whether `grant` has every scope `message` (one JSON-RPC message or a batch) needs, each
    /// request's needs taken from what `reach` says it reaches (the engine's
    /// [`crate::server::Engine::reach`]); the refusal names all the scopes of the first request
    /// that lacks one.
    pub fn authorize(
        &self,
        grant: &Grant,
        message: &Value,
        reach: impl Fn(&str, Option<&Value>) -> Reach,
    ) -> Result<(), Failure> {
        let single = std::slice::from_ref(message);
        let messages = match message {
            Value::Array(list) => &list[..],
            _ => single,
        };
        for message in messages {
            let Some(method) = message.get("method").and_then(Value::as_str) else {
                continue;
            };
            let reach = reach(method, message.get("params"));
            let needed = self.scopes.needed(&reach);
            if needed.iter().any(|n| !grant.scopes.iter().any(|s| s == n)) {
                return Err(Failure::InsufficientScope(
                    needed.into_iter().map(str::to_owned).collect(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers_are_parsed_as_rfc_6750_says() {
        assert_eq!(bearer_token(b"Bearer abc.def-_~+/=="), Ok("abc.def-_~+/=="));
        assert_eq!(bearer_token(b"bearer   abc "), Ok("abc"));
        assert_eq!(bearer_token(b"Basic dXNlcjpwYXNz"), Err(Failure::NoToken));
        assert_eq!(
            bearer_token(b"Bearer"),
            Err(Failure::Malformed("Bearer without a token".into()))
        );
        for bad in [
            &b"Bearer a b"[..],
            b"Bearer ==",
            b"Bearer a\"b",
            b"Bearer =a",
            b"Bearer \xff",
        ] {
            assert!(
                matches!(bearer_token(bad), Err(Failure::Malformed(_))),
                "{bad:?}"
            );
        }
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_LEN + 1));
        assert!(matches!(
            bearer_token(long.as_bytes()),
            Err(Failure::Malformed(_))
        ));
    }

    #[test]
    fn challenges_carry_the_metadata_scopes_and_a_safe_description() {
        let url = "https://m.example/.well-known/oauth-protected-resource/mcp";
        let required = vec!["mcp".to_owned()];
        assert_eq!(
            Failure::NoToken.challenge(url, &required).unwrap(),
            format!("Bearer resource_metadata=\"{url}\", scope=\"mcp\"")
        );
        assert_eq!(
            Failure::Invalid("bad \"sig\"\n".into()).challenge(url, &required).unwrap(),
            format!("Bearer resource_metadata=\"{url}\", scope=\"mcp\", error=\"invalid_token\", error_description=\"bad ?sig??\"")
        );
        let step_up = Failure::InsufficientScope(vec!["mcp".into(), "repo".into()]);
        assert_eq!(step_up.status(), 403);
        assert!(step_up
            .challenge(url, &required)
            .unwrap()
            .contains("scope=\"mcp repo\", error=\"insufficient_scope\""));
        assert_eq!(
            Failure::Unavailable("x".into()).challenge(url, &required),
            None
        );
        assert_eq!(
            Failure::NoToken.challenge(url, &[]).unwrap(),
            format!("Bearer resource_metadata=\"{url}\"")
        );
        let long = "x".repeat(1000);
        assert!(Failure::Invalid(long).challenge(url, &[]).unwrap().len() < 400);
    }
}
