//! Opaque access tokens, checked by RFC 7662 token introspection: a form POST with HTTP Basic
//! client authentication, and the answer's `active`, `iss`, `aud`, `exp`, `nbf` and `scope`
//! checked. An endpoint that is down, slow or answers nonsense fails the request closed. The
//! resource server remembers the outcomes ([`super::cache`]), not the failures, so the next
//! request after a failure asks again.

use super::config::Introspection;
use super::fetch::Exchange;
use super::grant::{split_scopes, Grant};
use crate::json::{self, Value};
use std::time::Duration;

/// The largest introspection answer read.
pub const MAX_INTROSPECTION_BYTES: usize = 64 * 1024;

/// Why introspection gave no grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The token is not (or no longer) valid for this resource; the text says which rule.
    Invalid(String),
    /// The endpoint could not answer; the request fails closed.
    Unavailable(String),
}

/// The introspection client.
pub struct Introspector {
    config: Introspection,
    /// `Basic base64(client_id:client_secret)`, form-encoded first as RFC 6749 §2.3.1 asks.
    authorization: String,
    issuers: Vec<String>,
    resource: String,
    clock_skew_secs: u64,
    timeout: Duration,
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The settings an [`Introspector`] takes from the rest of the configuration.
pub struct Checks {
    pub issuers: Vec<String>,
    pub resource: String,
    pub clock_skew_secs: u64,
    pub timeout: Duration,
}

impl Introspector {
    pub fn new(config: Introspection, checks: Checks) -> Introspector {
        let credentials = format!(
            "{}:{}",
            form_encode(&config.client_id),
            form_encode(&config.client_secret)
        );
        Introspector {
            authorization: format!("Basic {}", crate::base64::encode(credentials.as_bytes())),
            config,
            issuers: checks.issuers,
            resource: checks.resource,
            clock_skew_secs: checks.clock_skew_secs,
            timeout: checks.timeout,
        }
    }

    /// The grant `token` carries, as the endpoint answers now (`now_secs`: Unix seconds).
    pub fn check(&self, token: &str, now_secs: u64) -> Result<Grant, Refusal> {
        let answer = self.ask(token).map_err(|why| {
            crate::voice::say(
                true,
                &format!(
                    "{}auth: token introspection failed: {why}",
                    crate::voice::PREFIX
                ),
            );
            Refusal::Unavailable(format!("token introspection failed: {why}"))
        })?;
        self.judge(&answer, now_secs).map_err(Refusal::Invalid)
    }

    fn ask(&self, token: &str) -> Result<Value, String> {
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer = Exchange {
            method: "POST",
            url: &self.config.endpoint,
            headers: vec![
                ("Authorization", self.authorization.clone()),
                ("Content-Type", "application/x-www-form-urlencoded".into()),
                ("Accept", "application/json".into()),
            ],
            body: body.as_bytes(),
            timeout: self.timeout,
            max_body: MAX_INTROSPECTION_BYTES,
        }
        .run()
        .map_err(|e| e.to_string())?;
        if answer.status != 200 {
            return Err(format!(
                "{}: status {}",
                self.config.endpoint, answer.status
            ));
        }
        let value = json::parse(&answer.body)
            .map_err(|e| format!("{}: the answer is not JSON: {e}", self.config.endpoint))?;
        match value {
            Value::Object(_) => Ok(value),
            _ => Err(format!(
                "{}: the answer is not a JSON object",
                self.config.endpoint
            )),
        }
    }

    /// The grant of an active token for this resource, or why not.
    fn judge(&self, answer: &Value, now_secs: u64) -> Result<Grant, String> {
        match answer.get("active") {
            Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => return Err("the token is not active".into()),
            _ => return Err("the introspection answer has no boolean active".into()),
        }
        let text = |name: &str| -> Result<Option<&str>, String> {
            match answer.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(format!("the introspection answer's {name} is not a string")),
            }
        };
        let issuer = match text("iss")? {
            Some(iss) if self.issuers.iter().any(|i| i == iss) => iss.to_owned(),
            Some(_) => {
                return Err("the issuer (iss) is not a configured authorization server".into())
            }
            // The endpoint is the configured authorization server's own.
            None => self.issuers.first().cloned().unwrap_or_default(),
        };
        let audience_held = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.resource,
            Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(&self.resource)),
            _ => false,
        };
        if !audience_held {
            return Err("the token is not for this resource (aud)".into());
        }
        let date = |name: &str| match answer.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| Some(d as u64))
                .ok_or_else(|| format!("the introspection answer's {name} is not a date")),
        };
        let expires_at = date("exp")?;
        if expires_at.is_some_and(|exp| now_secs >= exp.saturating_add(self.clock_skew_secs)) {
            return Err("expired (exp)".into());
        }
        if date("nbf")?.is_some_and(|nbf| now_secs.saturating_add(self.clock_skew_secs) < nbf) {
            return Err("not valid yet (nbf)".into());
        }
        // A principal is derived from the subject; an answer naming no one is refused rather
        // than given a principal shared by every such token (one caller's sessions would be
        // served to another) or one per token (a caller's sessions would end with each new
        // token, and nothing would say whom the audit log's records are for).
        let named = |name: &str| Ok::<_, String>(text(name)?.filter(|s| !s.is_empty()));
        let subject = named("sub")?
            .or(named("client_id")?)
            .ok_or("the introspection answer names no subject (sub) or client (client_id)")?
            .to_owned();
        Ok(Grant {
            issuer,
            subject,
            scopes: split_scopes(text("scope")?.unwrap_or(""))?,
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::url::Url;

    fn introspector() -> Introspector {
        Introspector::new(
            Introspection {
                endpoint: Url::parse("http://127.0.0.1:1/introspect").unwrap(),
                client_id: "rs one".into(),
                client_secret: "p&ss:word".into(),
            },
            Checks {
                issuers: vec!["http://as".into()],
                resource: "https://m.example/mcp".into(),
                clock_skew_secs: 60,
                timeout: Duration::from_millis(200),
            },
        )
    }

    fn judge(answer: &str) -> Result<Grant, String> {
        introspector().judge(&json::parse(answer.as_bytes()).unwrap(), 1000)
    }

    #[test]
    fn any_answer_an_endpoint_sends_is_judged_by_the_rules() {
        let grant = judge(r#"{"active":true,"aud":["x","https://m.example/mcp"],"sub":"u","scope":"a b a","exp":2000}"#).unwrap();
        assert_eq!(
            (
                grant.issuer.as_str(),
                grant.subject.as_str(),
                grant.scopes.len(),
                grant.expires_at
            ),
            ("http://as", "u", 2, Some(2000))
        );
        let by_client = judge(
            r#"{"active":true,"aud":"https://m.example/mcp","client_id":"c","iss":"http://as"}"#,
        )
        .unwrap();
        assert_eq!(by_client.subject, "c");
        let empty_sub =
            judge(r#"{"active":true,"aud":"https://m.example/mcp","sub":"","client_id":"c"}"#)
                .unwrap();
        assert_eq!(empty_sub.subject, "c", "an empty sub names no one");
        for (answer, why) in [
            (r#"{}"#, "no boolean active"),
            (r#"{"active":"true"}"#, "no boolean active"),
            (
                r#"{"active":false,"aud":"https://m.example/mcp"}"#,
                "not active",
            ),
            (r#"{"active":true}"#, "not for this resource"),
            (
                r#"{"active":true,"aud":"https://m.example/mcp/"}"#,
                "not for this resource",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","iss":"http://evil"}"#,
                "issuer (iss)",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","iss":7}"#,
                "iss is not a string",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","exp":900}"#,
                "expired",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","exp":"soon"}"#,
                "exp is not a date",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","nbf":1100}"#,
                "not valid yet",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","sub":"u","scope":["a"]}"#,
                "scope is not a string",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","scope":"a"}"#,
                "names no subject (sub) or client (client_id)",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","sub":"","client_id":""}"#,
                "names no subject (sub) or client (client_id)",
            ),
            (
                r#"{"active":true,"aud":"https://m.example/mcp","client_id":7}"#,
                "client_id is not a string",
            ),
        ] {
            let err = judge(answer).expect_err(answer);
            assert!(err.contains(why), "{answer}: {err}");
        }
    }

    #[test]
    fn an_unreachable_endpoint_fails_closed() {
        let refusal = introspector().check("tok", 1000).unwrap_err();
        assert!(
            matches!(&refusal, Refusal::Unavailable(why) if why.contains("token introspection failed")),
            "{refusal:?}"
        );
        assert_eq!(form_encode("rs one"), "rs+one");
        assert_eq!(form_encode("p&ss:word"), "p%26ss%3Aword");
    }
}
