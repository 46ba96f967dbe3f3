//! Finding who issues tokens for an MCP server: the `WWW-Authenticate` challenge (RFC 6750 §3),
//! Protected Resource Metadata (RFC 9728) from the challenge or the well-known locations, and the
//! authorization server's metadata (RFC 8414, then OpenID Connect Discovery), each document
//! checked before anything in it is used.

use super::super::error::ClientError;
use super::fetch::{Body, Fetcher, Response};
use crate::http1::url::Url;
use crate::json::{self, Value};

/// Longest `WWW-Authenticate` value read (the transport's head cap bounds it too).
pub const MAX_CHALLENGE_BYTES: usize = 8 * 1024;

/// Most authorization servers, scopes or methods read from one metadata list.
pub const MAX_METADATA_LIST: usize = 64;

/// What a `Bearer` challenge asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Reads the auth-params of the `Bearer` challenge in a `WWW-Authenticate` value
    /// (`key="quoted \" value", key=token`). Another scheme, or a value past
    /// [`MAX_CHALLENGE_BYTES`], gives an empty challenge: discovery then uses the well-known
    /// locations.
    pub fn parse(header: &str) -> Challenge {
        let mut out = Challenge::default();
        if header.len() > MAX_CHALLENGE_BYTES {
            return out;
        }
        let trimmed = header.trim_start();
        let Some(rest) = trimmed
            .get(..7)
            .filter(|s| s.eq_ignore_ascii_case("bearer "))
            .map(|_| &trimmed[7..])
        else {
            return out;
        };
        let mut chars = rest.chars().peekable();
        loop {
            while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
                chars.next();
            }
            let key: String = std::iter::from_fn(|| {
                chars.next_if(|c| *c != '=' && *c != ',' && !c.is_whitespace())
            })
            .collect();
            if key.is_empty() {
                break;
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.next_if_eq(&'=').is_none() {
                continue;
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            let mut value = String::new();
            if chars.next_if_eq(&'"').is_some() {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => value.extend(chars.next()),
                        c => value.push(c),
                    }
                }
            } else {
                value.extend(std::iter::from_fn(|| {
                    chars.next_if(|c| *c != ',' && !c.is_whitespace())
                }));
            }
            match key.to_ascii_lowercase().as_str() {
                "resource_metadata" => out.resource_metadata = Some(value),
                "scope" => out.scope = Some(value),
                "error" => out.error = Some(value),
                _ => {}
            }
        }
        out
    }

    /// True for RFC 6750's `insufficient_scope` (a 403 that step-up authorization can answer).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Protected Resource Metadata (RFC 9728 §2), checked against the server it came for.
#[derive(Clone, Debug)]
pub struct ResourceMetadata {
    /// The resource identifier, sent as `resource` (RFC 8707).
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

impl ResourceMetadata {
    /// Parses a PRM document and checks that its `resource` covers `server` (same origin, the
    /// server's path at or below the resource's): a document naming another resource is refused
    /// (RFC 9728 §3.3), so a server cannot send the client's login to someone else's resource.
    pub fn parse(body: &[u8], from: &str, server: &Url) -> Result<ResourceMetadata, String> {
        let doc = object(body, "protected resource metadata", from)?;
        let resource = string_member(&doc, "resource", from)?
            .ok_or_else(|| format!("protected resource metadata at {from} has no \"resource\""))?;
        let parsed = Url::parse_identifier(&resource)
            .map_err(|e| format!("protected resource metadata at {from}: resource: {e}"))?;
        if !parsed.covers(server) {
            return Err(format!(
                "protected resource metadata at {from} is for resource {resource}, not for this server ({}); refusing to log in (RFC 9728 §3.3)",
                server.identifier()
            ));
        }
        let authorization_servers =
            list_member(&doc, "authorization_servers", from)?.unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(format!(
                "protected resource metadata at {from} names no authorization server"
            ));
        }
        Ok(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: list_member(&doc, "scopes_supported", from)?,
        })
    }
}

/// Authorization server metadata (RFC 8414 §2), the members this client uses.
#[derive(Clone, Debug, Default)]
pub struct AuthServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub grant_types_supported: Option<Vec<String>>,
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the server puts `iss` in its authorization responses.
    pub authorization_response_iss_parameter_supported: bool,
}

impl AuthServerMetadata {
    /// Parses a metadata document. When `expected_issuer` is given (the issuer PRM named), the
    /// document's `issuer` must be exactly it (RFC 8414 §3.3): a document claiming another issuer
    /// is a mix-up attempt and is refused.
    pub fn parse(
        body: &[u8],
        from: &str,
        expected_issuer: Option<&str>,
    ) -> Result<AuthServerMetadata, String> {
        let doc = object(body, "authorization server metadata", from)?;
        let issuer = string_member(&doc, "issuer", from)?
            .ok_or_else(|| format!("authorization server metadata at {from} has no \"issuer\""))?;
        if let Some(expected) = expected_issuer {
            if issuer.trim_end_matches('/') != expected.trim_end_matches('/') {
                return Err(format!(
                    "authorization server metadata at {from} claims issuer {issuer}, not {expected}; refusing it (RFC 8414 §3.3, mix-up defence)"
                ));
            }
        }
        let endpoint = |name: &str| -> Result<Option<String>, String> {
            let value = string_member(&doc, name, from)?;
            if let Some(v) = &value {
                Url::parse_identifier(v)
                    .map_err(|e| format!("authorization server metadata at {from}: {name}: {e}"))?;
            }
            Ok(value)
        };
        let flag = |name: &str| doc.get(name).and_then(Value::as_bool).unwrap_or(false);
        Ok(AuthServerMetadata {
            authorization_endpoint: endpoint("authorization_endpoint")?,
            token_endpoint: endpoint("token_endpoint")?.ok_or_else(|| {
                format!("authorization server metadata at {from} has no \"token_endpoint\"")
            })?,
            registration_endpoint: endpoint("registration_endpoint")?,
            scopes_supported: list_member(&doc, "scopes_supported", from)?,
            code_challenge_methods_supported: list_member(
                &doc,
                "code_challenge_methods_supported",
                from,
            )?,
            token_endpoint_auth_methods_supported: list_member(
                &doc,
                "token_endpoint_auth_methods_supported",
                from,
            )?,
            grant_types_supported: list_member(&doc, "grant_types_supported", from)?,
            client_id_metadata_document_supported: flag("client_id_metadata_document_supported"),
            authorization_response_iss_parameter_supported: flag(
                "authorization_response_iss_parameter_supported",
            ),
            issuer,
        })
    }

    /// The 2025-03-26 fallback when a server publishes no metadata at all: its origin is the
    /// authorization server, at `/authorize`, `/token` and `/register`.
    pub fn fallback(server: &Url) -> AuthServerMetadata {
        let origin = server.origin();
        AuthServerMetadata {
            issuer: origin.clone(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            ..AuthServerMetadata::default()
        }
    }

    /// Whether `method` is listed in `token_endpoint_auth_methods_supported` (RFC 8414 says an
    /// absent list means `client_secret_basic`).
    pub fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// PKCE S256 is listed. An absent list is refused too: MCP requires clients to refuse an
    /// authorization server that does not say it supports S256, so PKCE cannot be downgraded.
    pub fn require_s256(&self) -> Result<(), String> {
        match &self.code_challenge_methods_supported {
            Some(list) if list.iter().any(|m| m == "S256") => Ok(()),
            Some(list) => Err(format!(
                "authorization server {} does not support PKCE S256 (code_challenge_methods_supported: {}); refusing to log in",
                self.issuer,
                list.join(", ")
            )),
            None => Err(format!(
                "authorization server {} does not list code_challenge_methods_supported, so PKCE S256 is not assured; refusing to log in",
                self.issuer
            )),
        }
    }
}

/// What discovery found.
pub struct Discovered {
    /// `None` for a 2025-03-26 server without PRM (its origin is the authorization server).
    pub resource: Option<ResourceMetadata>,
    pub server: AuthServerMetadata,
    /// Whether `server` came from a metadata document (else from the fallback endpoints).
    pub from_document: bool,
}

/// Runs discovery for `server_url` given the challenge of its 401.
pub fn discover(
    fetcher: &Fetcher,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, ClientError> {
    let resource = resource_metadata(fetcher, server, challenge)?;
    let (issuer, expected) = match &resource {
        Some(prm) => {
            // The first one listed; RFC 9728 leaves the choice to the client.
            let issuer = prm.authorization_servers[0].clone();
            (issuer.clone(), Some(issuer))
        }
        None => (server.origin(), None),
    };
    let issuer_url = Url::parse_identifier(&issuer)
        .map_err(|e| ClientError::OAuth(format!("authorization server: {e}")))?;
    let mut candidates = vec![issuer_url.well_known_inserted("oauth-authorization-server")];
    candidates.push(issuer_url.well_known_inserted("openid-configuration"));
    if !issuer_url.is_root() {
        candidates.push(issuer_url.well_known_appended("openid-configuration"));
    }
    for url in candidates {
        let Some(response) = get_json(fetcher, "authorization server metadata", &url)? else {
            continue;
        };
        let server_meta = AuthServerMetadata::parse(&response.body, &url, expected.as_deref())
            .map_err(ClientError::OAuth)?;
        return Ok(Discovered {
            resource,
            server: server_meta,
            from_document: true,
        });
    }
    if resource.is_some() {
        return Err(ClientError::OAuth(format!(
            "authorization server {issuer} publishes no metadata (tried RFC 8414 and OpenID discovery)"
        )));
    }
    Ok(Discovered {
        resource: None,
        server: AuthServerMetadata::fallback(server),
        from_document: false,
    })
}

/// PRM from the challenge's `resource_metadata`, else the path-inserted well-known location,
/// else the root one. `None` when none answers (a 2025-03-26 server); a document that answers but
/// is wrong (bad JSON, another resource) is an error, not a reason to try the next.
fn resource_metadata(
    fetcher: &Fetcher,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<ResourceMetadata>, ClientError> {
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        Url::parse_identifier(url)
            .map_err(|e| ClientError::OAuth(format!("resource_metadata in the challenge: {e}")))?;
        candidates.push(url.clone());
    }
    if !server.is_root() {
        candidates.push(server.well_known_inserted("oauth-protected-resource"));
    }
    candidates.push(server.well_known_root("oauth-protected-resource"));
    for url in candidates {
        if let Some(response) = get_json(fetcher, "protected resource metadata", &url)? {
            return ResourceMetadata::parse(&response.body, &url, server)
                .map(Some)
                .map_err(ClientError::OAuth);
        }
    }
    Ok(None)
}

/// GETs a metadata document: `None` for a 4xx (not published there); a redirect or a 5xx is an
/// error (metadata is never fetched from where a redirect points).
fn get_json(fetcher: &Fetcher, what: &str, url: &str) -> Result<Option<Response>, ClientError> {
    let response = fetcher.send(what, "GET", url, &[], Body::None)?;
    match response.status() {
        200 => Ok(Some(response)),
        400..=499 => Ok(None),
        300..=399 => Err(ClientError::OAuth(format!(
            "{what} at {url} redirects to {}; redirects are not followed for metadata",
            response.head.header("location").unwrap_or("(no Location)")
        ))),
        s => Err(ClientError::OAuth(format!(
            "{what} at {url}: HTTP {s}: {}",
            response.quote()
        ))),
    }
}

/// The body as a JSON object.
pub fn object(body: &[u8], what: &str, from: &str) -> Result<json::Map, String> {
    match json::parse(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "{what} from {from} is a JSON {}, not an object",
            other.type_name()
        )),
        Err(e) => Err(format!("{what} from {from} is not valid JSON: {e}")),
    }
}

/// A string member: `None` when absent or null, an error for another type.
pub fn string_member(doc: &json::Map, name: &str, from: &str) -> Result<Option<String>, String> {
    match doc.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(format!(
            "{name} from {from} is a JSON {}, not a string",
            other.type_name()
        )),
    }
}

/// A list of strings, at most [`MAX_METADATA_LIST`].
fn list_member(doc: &json::Map, name: &str, from: &str) -> Result<Option<Vec<String>>, String> {
    let Some(value) = doc.get(name).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let items = value
        .as_array()
        .ok_or_else(|| format!("{name} from {from} is not a list"))?;
    if items.len() > MAX_METADATA_LIST {
        return Err(format!(
            "{name} from {from} lists more than {MAX_METADATA_LIST} entries"
        ));
    }
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{name} from {from} holds a non-string"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_whatever_the_quoting() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#,
        );
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        let c = Challenge::parse(r#"bearer realm="mcp",scope=read,error_description="say \"no\"""#);
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(Challenge::parse("Basic realm=\"x\""), Challenge::default());
        assert_eq!(Challenge::parse("Bearer"), Challenge::default());
        assert_eq!(
            Challenge::parse("Bearer scope=\"unterminated")
                .scope
                .as_deref(),
            Some("unterminated")
        );
        assert_eq!(
            Challenge::parse(&format!(
                "Bearer scope=\"{}\"",
                "a".repeat(MAX_CHALLENGE_BYTES)
            )),
            Challenge::default()
        );
    }

    #[test]
    fn resource_metadata_must_name_this_server() {
        let server = Url::parse_identifier("http://localhost:3000/mcp").unwrap();
        let ok = br#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://as"],"scopes_supported":["a"]}"#;
        let prm = ResourceMetadata::parse(ok, "u", &server).unwrap();
        assert_eq!(prm.scopes_supported, Some(vec!["a".to_owned()]));
        let evil =
            br#"{"resource":"https://evil.example.com/mcp","authorization_servers":["http://as"]}"#;
        assert!(ResourceMetadata::parse(evil, "u", &server)
            .unwrap_err()
            .contains("not for this server"));
        for bad in [
            &br#"{"authorization_servers":["http://as"]}"#[..],
            br#"{"resource":"http://localhost:3000/mcp","authorization_servers":[]}"#,
            br#"{"resource":"http://localhost:3000/mcp","authorization_servers":"http://as"}"#,
            br#"{"resource":7,"authorization_servers":["http://as"]}"#,
            br#"[1]"#,
            b"{nope",
        ] {
            assert!(ResourceMetadata::parse(bad, "u", &server).is_err());
        }
    }

    #[test]
    fn authorization_server_metadata_is_checked() {
        let doc = br#"{"issuer":"http://as/t1","authorization_endpoint":"http://as/t1/authorize","token_endpoint":"http://as/t1/token","code_challenge_methods_supported":["plain"]}"#;
        let meta = AuthServerMetadata::parse(doc, "u", Some("http://as/t1")).unwrap();
        assert!(meta
            .require_s256()
            .unwrap_err()
            .contains("does not support PKCE S256"));
        assert!(meta.supports_auth_method("client_secret_basic"));
        assert!(!meta.supports_auth_method("none"));
        let mixed_up = AuthServerMetadata::parse(doc, "u", Some("http://other")).unwrap_err();
        assert!(mixed_up.contains("mix-up"), "{mixed_up}");
        let no_pkce = br#"{"issuer":"http://as","token_endpoint":"http://as/token"}"#;
        assert!(AuthServerMetadata::parse(no_pkce, "u", None)
            .unwrap()
            .require_s256()
            .is_err());
        assert!(AuthServerMetadata::parse(br#"{"issuer":"http://as"}"#, "u", None).is_err());
        assert!(AuthServerMetadata::parse(
            br#"{"issuer":"http://as","token_endpoint":"javascript:x"}"#,
            "u",
            None
        )
        .is_err());
        let many = format!(
            r#"{{"issuer":"i","token_endpoint":"http://t","scopes_supported":[{}]}}"#,
            vec!["\"s\""; MAX_METADATA_LIST + 1].join(",")
        );
        assert!(AuthServerMetadata::parse(many.as_bytes(), "u", None)
            .unwrap_err()
            .contains("more than"));
    }
}
