//! The claims checks of an OAuth 2.0 JWT access token (RFC 9068, with RFC 7519 §4.1's registered
//! claims), made after its signature verified ([`super::jws::verify`]): the issuer, the audience
//! (the protected resource, RFC 8707), expiry, not-before and issued-at within a clock skew, the
//! subject, and the scopes it grants.
//!
//! Pure: the caller gives the time, so the checks are tested at their edges without a clock.
//! Not here: the `typ` header (`at+jwt`), which the JWS layer sees, and what the scopes allow,
//! which is the resource server's policy.
//!
//! ```
//! use agentteams_mcp::crypto::jwt::{check_claims, Rules};
//! use agentteams_mcp::json;
//! let claims = json::parse(br#"{"iss": "https://as.example", "aud": "https://mcp.example/mcp",
//!     "sub": "alice", "exp": 2000, "iat": 1000, "scope": "repo:read memory:read"}"#).unwrap();
//! let rules = Rules::new("https://as.example", "https://mcp.example/mcp", 1500);
//! let token = check_claims(claims.as_object().unwrap(), &rules).unwrap();
//! assert_eq!(token.subject, "alice");
//! assert_eq!(token.scopes, ["repo:read", "memory:read"]);
//! ```

use super::error::Error;
use crate::json::{Map, Value};

/// Seconds of clock difference tolerated between the authorization server and this one.
pub const DEFAULT_CLOCK_SKEW_SECS: u64 = 60;
/// Scopes read from one token; a longer `scope` is refused rather than split without end.
pub const MAX_SCOPES: usize = 256;
/// Audiences read from one token's `aud` array.
pub const MAX_AUDIENCES: usize = 64;

/// What a token must satisfy.
#[derive(Clone, Debug)]
pub struct Rules<'a> {
    /// The `iss` the token must carry exactly (the authorization server's issuer identifier).
    pub issuer: &'a str,
    /// The resource this server is: `aud` must be it or hold it.
    pub audience: &'a str,
    pub clock_skew_secs: u64,
    /// Now, in seconds since the Unix epoch.
    pub now_secs: u64,
}

impl<'a> Rules<'a> {
    /// Rules with [`DEFAULT_CLOCK_SKEW_SECS`].
    pub fn new(issuer: &'a str, audience: &'a str, now_secs: u64) -> Rules<'a> {
        Rules {
            issuer,
            audience,
            clock_skew_secs: DEFAULT_CLOCK_SKEW_SECS,
            now_secs,
        }
    }
}

/// A token whose claims passed the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessToken {
    /// `sub`: whom the token speaks for.
    pub subject: String,
    /// `client_id`, when present (RFC 9068 requires it; some servers send `azp` instead, which
    /// is taken when `client_id` is absent).
    pub client_id: Option<String>,
    /// `scope`, split on spaces, in order, without repeats.
    pub scopes: Vec<String>,
    /// `exp`, whole seconds.
    pub expires_at: u64,
}

fn refused(why: impl Into<String>) -> Error {
    Error::Refused(why.into())
}

/// A NumericDate claim: a finite JSON number of seconds, at least 0 (fractions allowed, RFC 7519
/// §2); `None` when absent.
fn date(claims: &Map, name: &'static str) -> Result<Option<f64>, Error> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(_)) => {
            let value = claims.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN);
            if value.is_finite() && value >= 0.0 {
                Ok(Some(value))
            } else {
                Err(Error::malformed(
                    "JWT claims",
                    "a date is not a number of seconds from 0",
                ))
            }
        }
        Some(_) => Err(Error::malformed("JWT claims", "a date is not a number")),
    }
}

fn string<'m>(claims: &'m Map, name: &str) -> Result<Option<&'m str>, Error> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::Malformed {
            what: "JWT claims",
            rule: "a string claim (iss, sub, client_id, azp, scope) is not a string",
        }),
    }
}

/// Checks `claims` against `rules`; the error says which rule failed, never the token.
pub fn check_claims(claims: &Map, rules: &Rules<'_>) -> Result<AccessToken, Error> {
    match string(claims, "iss")? {
        Some(iss) if iss == rules.issuer => {}
        Some(_) => {
            return Err(refused(
                "the issuer (iss) is not the configured authorization server",
            ))
        }
        None => return Err(refused("no issuer (iss)")),
    }
    let audience_held = match claims.get("aud") {
        Some(Value::String(aud)) => aud == rules.audience,
        Some(Value::Array(list)) => {
            if list.len() > MAX_AUDIENCES {
                return Err(refused(format!(
                    "more than {MAX_AUDIENCES} audiences (aud)"
                )));
            }
            let mut held = false;
            for aud in list.iter() {
                match aud {
                    Value::String(aud) => held |= aud == rules.audience,
                    _ => return Err(Error::malformed("JWT claims", "aud holds a non-string")),
                }
            }
            held
        }
        Some(_) => {
            return Err(Error::malformed(
                "JWT claims",
                "aud is neither a string nor an array",
            ))
        }
        None => return Err(refused("no audience (aud)")),
    };
    if !audience_held {
        return Err(refused("the token is for another resource (aud)"));
    }
    let now = rules.now_secs as f64;
    let skew = rules.clock_skew_secs as f64;
    let Some(exp) = date(claims, "exp")? else {
        return Err(refused("no expiry (exp)"));
    };
    if now >= exp + skew {
        return Err(refused("expired (exp)"));
    }
    if let Some(nbf) = date(claims, "nbf")? {
        if now + skew < nbf {
            return Err(refused("not valid yet (nbf)"));
        }
    }
    match date(claims, "iat")? {
        Some(iat) if iat > now + skew => return Err(refused("issued in the future (iat)")),
        Some(_) => {}
        None => return Err(refused("no issue time (iat)")),
    }
    let subject = match string(claims, "sub")? {
        Some(sub) if !sub.is_empty() => sub.to_owned(),
        _ => return Err(refused("no subject (sub)")),
    };
    let client_id = match string(claims, "client_id")? {
        Some(id) => Some(id.to_owned()),
        None => string(claims, "azp")?.map(str::to_owned),
    };
    let mut scopes: Vec<String> = Vec::new();
    for scope in string(claims, "scope")?
        .unwrap_or("")
        .split(' ')
        .filter(|s| !s.is_empty())
    {
        if scopes.len() == MAX_SCOPES {
            return Err(refused(format!("more than {MAX_SCOPES} scopes")));
        }
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    Ok(AccessToken {
        subject,
        client_id,
        scopes,
        expires_at: exp as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    const ISS: &str = "https://as.example";
    const AUD: &str = "https://mcp.example/mcp";

    fn claims(extra: &str) -> Map {
        let text = format!(
            r#"{{"iss": "{ISS}", "aud": "{AUD}", "sub": "alice", "exp": 2000, "iat": 1000{extra}}}"#
        );
        json::parse(text.as_bytes())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn with(json_text: &str) -> Map {
        json::parse(json_text.as_bytes())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn check_at(map: &Map, now: u64) -> Result<AccessToken, String> {
        check_claims(map, &Rules::new(ISS, AUD, now)).map_err(|e| e.to_string())
    }

    #[test]
    fn a_valid_token_gives_its_subject_client_and_scopes() {
        let map = claims(r#", "client_id": "cli", "scope": "a  b a c""#);
        let token = check_at(&map, 1500).unwrap();
        assert_eq!(token.subject, "alice");
        assert_eq!(token.client_id.as_deref(), Some("cli"));
        assert_eq!(token.scopes, ["a", "b", "c"]);
        assert_eq!(token.expires_at, 2000);
        let azp = check_at(&claims(r#", "azp": "web""#), 1500).unwrap();
        assert_eq!(azp.client_id.as_deref(), Some("web"));
        assert!(azp.scopes.is_empty());
    }

    #[test]
    fn times_are_judged_at_their_edges_with_the_skew() {
        let map = claims(r#", "nbf": 1200"#);
        // exp 2000 + skew 60: valid up to 2059.
        assert!(check_at(&map, 2059).is_ok());
        assert_eq!(
            check_at(&map, 2060).unwrap_err(),
            "token refused: expired (exp)"
        );
        // nbf 1200 - skew 60: valid from 1140.
        assert!(check_at(&map, 1140).is_ok());
        assert_eq!(
            check_at(&map, 1139).unwrap_err(),
            "token refused: not valid yet (nbf)"
        );
        // iat 1000 + skew 60: issued at most 60 s ahead of our clock.
        let early = claims("");
        assert!(check_at(&early, 940).is_ok());
        assert_eq!(
            check_at(&early, 939).unwrap_err(),
            "token refused: issued in the future (iat)"
        );
        // Fractional dates are dates.
        let fraction = with(&format!(
            r#"{{"iss": "{ISS}", "aud": "{AUD}", "sub": "s", "exp": 2000.5, "iat": 1000.25}}"#
        ));
        assert!(check_at(&fraction, 2060).is_ok());
    }

    #[test]
    fn each_broken_rule_is_named() {
        let cases: &[(&str, &str)] = &[
            (r#"{"aud": "A", "sub": "s", "exp": 2000, "iat": 1}"#, "token refused: no issuer (iss)"),
            (
                r#"{"iss": "https://evil.example", "aud": "A", "sub": "s", "exp": 2000, "iat": 1}"#,
                "token refused: the issuer (iss) is not the configured authorization server",
            ),
            (r#"{"iss": "I", "sub": "s", "exp": 2000, "iat": 1}"#, "token refused: no audience (aud)"),
            (
                r#"{"iss": "I", "aud": "https://other.example/mcp", "sub": "s", "exp": 2000, "iat": 1}"#,
                "token refused: the token is for another resource (aud)",
            ),
            (
                r#"{"iss": "I", "aud": ["https://other.example", "A"], "sub": "s", "iat": 1}"#,
                "token refused: no expiry (exp)",
            ),
            (r#"{"iss": "I", "aud": "A", "sub": "s", "exp": 2000}"#, "token refused: no issue time (iat)"),
            (r#"{"iss": "I", "aud": "A", "exp": 2000, "iat": 1}"#, "token refused: no subject (sub)"),
            (r#"{"iss": "I", "aud": "A", "sub": "", "exp": 2000, "iat": 1}"#, "token refused: no subject (sub)"),
            (
                r#"{"iss": "I", "aud": "A", "sub": "s", "exp": "2000", "iat": 1}"#,
                "malformed JWT claims: a date is not a number",
            ),
            (
                r#"{"iss": "I", "aud": "A", "sub": "s", "exp": -5, "iat": 1}"#,
                "malformed JWT claims: a date is not a number of seconds from 0",
            ),
            (
                r#"{"iss": "I", "aud": 7, "sub": "s", "exp": 2000, "iat": 1}"#,
                "malformed JWT claims: aud is neither a string nor an array",
            ),
            (
                r#"{"iss": "I", "aud": ["A", 1], "sub": "s", "exp": 2000, "iat": 1}"#,
                "malformed JWT claims: aud holds a non-string",
            ),
            (
                r#"{"iss": 1, "aud": "A", "sub": "s", "exp": 2000, "iat": 1}"#,
                "malformed JWT claims: a string claim (iss, sub, client_id, azp, scope) is not a string",
            ),
            (
                r#"{"iss": "I", "aud": "A", "sub": "s", "exp": 2000, "iat": 1, "scope": ["a"]}"#,
                "malformed JWT claims: a string claim (iss, sub, client_id, azp, scope) is not a string",
            ),
        ];
        for (text, expected) in cases {
            let map = with(text);
            let got = check_claims(&map, &Rules::new("I", "A", 1500)).map_err(|e| e.to_string());
            assert_eq!(
                got.as_ref().map(|_| ()),
                Err(&expected.to_string()),
                "{text}"
            );
        }
    }

    #[test]
    fn too_many_scopes_or_audiences_are_refused_not_read() {
        let scopes: Vec<String> = (0..=MAX_SCOPES).map(|i| format!("s{i}")).collect();
        let map = claims(&format!(r#", "scope": "{}""#, scopes.join(" ")));
        assert_eq!(
            check_at(&map, 1500).unwrap_err(),
            format!("token refused: more than {MAX_SCOPES} scopes")
        );
        let auds: Vec<String> = (0..=MAX_AUDIENCES).map(|i| format!("\"a{i}\"")).collect();
        let map = with(&format!(
            r#"{{"iss": "{ISS}", "aud": [{}], "sub": "s", "exp": 2000, "iat": 1}}"#,
            auds.join(", ")
        ));
        assert_eq!(
            check_at(&map, 1500).unwrap_err(),
            format!("token refused: more than {MAX_AUDIENCES} audiences (aud)")
        );
    }
}
