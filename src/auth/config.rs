//! The OAuth resource server's configuration file (`--auth-config FILE`): read with the project's
//! JSON parser and checked strictly, every error naming the field and the rule it broke.
//!
//! ```json
//! {
//!   "resource": "https://mcp.example.com/mcp",
//!   "authorization_servers": [
//!     {"issuer": "https://as.example.com", "jwks_uri": "http://127.0.0.1:9000/jwks"}
//!   ],
//!   "algorithms": ["RS256", "ES256"],
//!   "clock_skew_secs": 60,
//!   "introspection": {"endpoint": "http://127.0.0.1:9000/introspect",
//!                     "client_id": "mcp", "client_secret_file": "/etc/mcp/introspection-secret"},
//!   "scopes": {"required": ["mcp"], "tools": {"git_*": ["repo:read"]},
//!              "resources": {"gitread://*": ["repo:read"]}, "prompts": {}},
//!   "cache": {"jwks_refetch_interval_secs": 60, "jwks_max_age_secs": 3600,
//!             "token_cache_ttl_secs": 60, "token_cache_max_entries": 4096},
//!   "fetch_timeout_ms": 5000
//! }
//! ```
//!
//! Unknown members are errors (a misspelt `scope` must not silently leave tools unprotected), and
//! so is a member given twice (a reader would trust one copy, the parser keep the other).
//! Keys of an issuer come from `jwks_file` (read now, once), `jwks_uri`, or the RFC 8414 metadata
//! at `metadata_url` (by default derived from an `http://` issuer); URLs fetched must be `http://`
//! (no TLS in the workspace: point them at a loopback authorization server or a local TLS proxy).

pub use super::scopes::MAX_SCOPE_ENTRIES;
use super::scopes::{ScopeRule, ScopeRules};
use crate::crypto::jwk::{Jwks, MAX_JWKS_BYTES};
use crate::crypto::jws::{shown, Algorithm};
use crate::http1::url::Url;
use crate::json::{self, Map, Value};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The largest configuration file read.
pub const MAX_CONFIG_BYTES: usize = 256 * 1024;
/// The most authorization servers one resource trusts.
pub const MAX_AUTHORIZATION_SERVERS: usize = 8;
/// The longest scope token (RFC 6749 §3.3 `scope-token`).
pub const MAX_SCOPE_BYTES: usize = 128;
/// The longest URL (resource, issuer, endpoint) in the file.
pub const MAX_URL_BYTES: usize = 2048;
/// The longest client secret read from `client_secret_file`.
pub const MAX_SECRET_BYTES: usize = 1024;
/// The largest clock skew accepted, in seconds: beyond five minutes the clocks need fixing, not
/// tolerating.
pub const MAX_CLOCK_SKEW_SECS: u64 = 300;
/// The algorithms accepted when the file names none: the four the MCP ecosystem's authorization
/// servers sign with.
pub const DEFAULT_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::RS256,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::EdDSA,
];
/// Default least time between two fetches of one issuer's key set (a token naming an unknown
/// `kid` triggers at most one fetch per interval, so a flood of forged kids cannot flood the
/// authorization server).
pub const DEFAULT_JWKS_REFETCH_INTERVAL_SECS: u64 = 60;
/// Default age after which a fetched key set is fetched again at its next use.
pub const DEFAULT_JWKS_MAX_AGE_SECS: u64 = 3600;
/// Default time a validated token's outcome (a JWT's grant, an introspection answer) is reused;
/// never past the token's `exp`.
pub const DEFAULT_TOKEN_CACHE_TTL_SECS: u64 = 60;
/// Default most outcomes cached.
pub const DEFAULT_TOKEN_CACHE_MAX_ENTRIES: usize = 4096;
/// The largest token cache allowed.
pub const MAX_TOKEN_CACHE_ENTRIES: usize = 1 << 20;
/// Default timeout of one exchange with an authorization server (connect, send, whole answer).
pub const DEFAULT_FETCH_TIMEOUT_MS: u64 = 5000;
/// Longest fetch timeout allowed: requests wait for it.
pub const MAX_FETCH_TIMEOUT_MS: u64 = 60_000;

/// A configuration the file could not give: `field` is the member's path
/// (`authorization_servers[0].issuer`), `rule` what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub rule: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "auth config: {}", self.rule)
        } else {
            write!(f, "auth config: {}: {}", self.field, self.rule)
        }
    }
}

impl std::error::Error for ConfigError {}

fn error(field: &str, rule: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_owned(),
        rule: rule.into(),
    }
}

/// Where an issuer's verification keys come from.
#[derive(Debug, Clone)]
pub enum KeySource {
    /// Read from `jwks_file` when the configuration loaded.
    Fixed(Arc<Jwks>),
    /// Fetched from `jwks_uri`.
    Url(Url),
    /// `jwks_uri` read from the RFC 8414 metadata document at this URL, then fetched.
    Metadata(Url),
    /// None: the issuer's tokens are introspected (opaque tokens only).
    None,
}

/// One trusted authorization server.
#[derive(Debug, Clone)]
pub struct Issuer {
    /// The `iss` its tokens carry, exactly.
    pub issuer: String,
    pub keys: KeySource,
}

/// RFC 7662 token introspection with HTTP Basic client authentication.
#[derive(Clone)]
pub struct Introspection {
    pub endpoint: Url,
    pub client_id: String,
    pub client_secret: String,
}

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

/// Bounds of the key-set and introspection caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBounds {
    pub jwks_refetch_interval: Duration,
    pub jwks_max_age: Duration,
    pub token_cache_ttl: Duration,
    pub token_cache_max_entries: usize,
}

impl Default for CacheBounds {
    fn default() -> CacheBounds {
        CacheBounds {
            jwks_refetch_interval: Duration::from_secs(DEFAULT_JWKS_REFETCH_INTERVAL_SECS),
            jwks_max_age: Duration::from_secs(DEFAULT_JWKS_MAX_AGE_SECS),
            token_cache_ttl: Duration::from_secs(DEFAULT_TOKEN_CACHE_TTL_SECS),
            token_cache_max_entries: DEFAULT_TOKEN_CACHE_MAX_ENTRIES,
        }
    }
}

/// The whole configuration of the resource server.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The canonical URI of this MCP endpoint: the audience tokens must name (RFC 8707).
    pub resource: String,
    pub issuers: Vec<Issuer>,
    pub algorithms: Vec<Algorithm>,
    pub clock_skew_secs: u64,
    pub introspection: Option<Introspection>,
    pub scopes: ScopeRules,
    pub cache: CacheBounds,
    pub fetch_timeout: Duration,
}

/// One JSON object being read: hands out its members by name and, at [`Fields::finish`], refuses
/// any it was never asked for.
struct Fields<'a> {
    map: &'a Map,
    path: String,
    taken: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(value: &'a Value, path: &str) -> Result<Fields<'a>, ConfigError> {
        match value {
            Value::Object(map) => {
                no_repeated_member(map, path)?;
                Ok(Fields {
                    map,
                    path: path.to_owned(),
                    taken: Vec::new(),
                })
            }
            _ => Err(error(path, "must be a JSON object")),
        }
    }

    fn field(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn get(&mut self, name: &'static str) -> Option<&'a Value> {
        self.taken.push(name);
        self.map.get(name)
    }

    fn string(&mut self, name: &'static str) -> Result<Option<&'a str>, ConfigError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
            Some(_) => Err(error(&self.field(name), "must be a non-empty string")),
        }
    }

    fn required_string(&mut self, name: &'static str) -> Result<&'a str, ConfigError> {
        self.string(name)?
            .ok_or_else(|| error(&self.field(name), "is required"))
    }

    fn number(
        &mut self,
        name: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, ConfigError> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_u64()
                .filter(|n| (min..=max).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    error(
                        &self.field(name),
                        format!("must be a whole number from {min} to {max}"),
                    )
                }),
        }
    }

    fn finish(self) -> Result<(), ConfigError> {
        let mut names: Vec<_> = self.map.keys().collect();
        names.sort();
        match names
            .into_iter()
            .find(|name| !self.taken.contains(&name.as_str()))
        {
            Some(unknown) => {
                let mut known = self.taken.clone();
                known.sort_unstable();
                Err(error(
                    &self.field(&shown(unknown)),
                    format!("unknown member (known: {})", known.join(", ")),
                ))
            }
            None => Ok(()),
        }
    }
}

/// Refuses an object of the file that gives a member twice: a person reading the file trusts one
/// copy, the parser keeps the other, so neither is taken.
fn no_repeated_member(map: &Map, path: &str) -> Result<(), ConfigError> {
    if !map.has_repeated_key() {
        return Ok(());
    }
    let keys: Vec<&str> = map.keys().map(|k| k.as_str()).collect();
    let repeated = keys
        .iter()
        .enumerate()
        .find(|&(i, key)| keys[..i].contains(key))
        .map_or("", |(_, key)| *key);
    let field = if path.is_empty() {
        shown(repeated)
    } else {
        format!("{path}.{}", shown(repeated))
    };
    Err(error(&field, "appears twice"))
}

impl AuthConfig {
    /// Reads and checks the file at `path` (and the key and secret files it names).
    pub fn from_file(path: &Path) -> Result<AuthConfig, ConfigError> {
        let text = read_bounded(path, MAX_CONFIG_BYTES).map_err(|e| error("", e))?;
        let value = json::parse(&text)
            .map_err(|e| error("", format!("{} is not valid JSON: {e}", path.display())))?;
        AuthConfig::from_json(&value, path.parent().unwrap_or(Path::new(".")))
    }

    /// Checks a parsed configuration; relative file names are resolved against `base`.
    pub fn from_json(value: &Value, base: &Path) -> Result<AuthConfig, ConfigError> {
        let mut top = Fields::new(value, "")?;
        let resource = canonical_resource(top.required_string("resource")?)?;
        let issuers = match top.get("authorization_servers") {
            Some(Value::Array(list)) if !list.is_empty() => {
                if list.len() > MAX_AUTHORIZATION_SERVERS {
                    return Err(error(
                        "authorization_servers",
                        format!("at most {MAX_AUTHORIZATION_SERVERS} entries"),
                    ));
                }
                let mut issuers: Vec<Issuer> = Vec::new();
                for (i, entry) in list.iter().enumerate() {
                    let issuer = read_issuer(entry, &format!("authorization_servers[{i}]"), base)?;
                    if issuers.iter().any(|known| known.issuer == issuer.issuer) {
                        return Err(error(
                            &format!("authorization_servers[{i}].issuer"),
                            "names an issuer already listed",
                        ));
                    }
                    issuers.push(issuer);
                }
                issuers
            }
            _ => {
                return Err(error(
                    "authorization_servers",
                    "is required: a non-empty array of objects with an issuer",
                ))
            }
        };
        let algorithms = match top.get("algorithms") {
            None => DEFAULT_ALGORITHMS.to_vec(),
            Some(value) => read_algorithms(value)?,
        };
        let clock_skew_secs = top
            .number("clock_skew_secs", 0, MAX_CLOCK_SKEW_SECS)?
            .unwrap_or(crate::crypto::jwt::DEFAULT_CLOCK_SKEW_SECS);
        let introspection = match top.get("introspection") {
            None => None,
            Some(value) => Some(read_introspection(value, base)?),
        };
        let scopes = match top.get("scopes") {
            None => ScopeRules::default(),
            Some(value) => read_scopes(value)?,
        };
        let cache = match top.get("cache") {
            None => CacheBounds::default(),
            Some(value) => read_cache(value)?,
        };
        let fetch_timeout = Duration::from_millis(
            top.number("fetch_timeout_ms", 1, MAX_FETCH_TIMEOUT_MS)?
                .unwrap_or(DEFAULT_FETCH_TIMEOUT_MS),
        );
        top.finish()?;
        let fixed_keys = issuers.iter().any(|i| !matches!(i.keys, KeySource::None));
        if !fixed_keys && introspection.is_none() {
            return Err(error(
                "authorization_servers",
                "no issuer has keys (jwks_file, jwks_uri, metadata_url or an http:// issuer) and there is no introspection: no token could ever be accepted",
            ));
        }
        Ok(AuthConfig {
            resource,
            issuers,
            algorithms,
            clock_skew_secs,
            introspection,
            scopes,
            cache,
            fetch_timeout,
        })
    }
}

/// Reads the regular file `path` whole if it holds at most `max` bytes; a larger file is an
/// error, not a truncation. A FIFO (which would block the start until a writer came), a device
/// or a directory is refused as "not a regular file".
pub(crate) fn read_bounded(path: &Path, max: usize) -> Result<Vec<u8>, String> {
    crate::regular_file::read_at_most(path, max as u64)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .ok_or_else(|| format!("{} is larger than {max} bytes", path.display()))
}

/// An absolute `http(s)://` URL of printable ASCII with a host and no fragment.
fn check_url<'a>(field: &str, url: &'a str) -> Result<(&'a str, &'a str), ConfigError> {
    if url.len() > MAX_URL_BYTES {
        return Err(error(field, format!("longer than {MAX_URL_BYTES} bytes")));
    }
    if !url.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(field, "must be printable ASCII without spaces"));
    }
    let (scheme, rest) = url
        .split_once("://")
        .filter(|(s, _)| *s == "https" || *s == "http")
        .ok_or_else(|| {
            error(
                field,
                "must be an absolute http:// or https:// URL (lower-case scheme)",
            )
        })?;
    if url.contains('#') {
        return Err(error(field, "must not have a fragment"));
    }
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Err(error(field, "must have a host and no user info"));
    }
    Ok((scheme, rest))
}

/// The resource URI as RFC 8707 and the MCP spec want it: absolute, lower-case scheme and host,
/// no fragment, no query, no trailing slash (unless the path is `/` alone).
fn canonical_resource(url: &str) -> Result<String, ConfigError> {
    let (_, rest) = check_url("resource", url)?;
    if url.contains('?') {
        return Err(error("resource", "must not have a query"));
    }
    let authority = rest.split('/').next().unwrap_or("");
    if authority.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(error(
            "resource",
            "the host must be lower-case (canonical form)",
        ));
    }
    let path = &rest[authority.len()..];
    if path.len() > 1 && path.ends_with('/') {
        return Err(error("resource", "must not end in / (canonical form)"));
    }
    Ok(url.to_owned())
}

/// An `http://` URL this server will fetch.
fn fetchable(field: &str, url: &str) -> Result<Url, ConfigError> {
    check_url(field, url)?;
    if url.starts_with("https://") {
        return Err(error(
            field,
            "must be http:// (no TLS here: use a loopback authorization server or a local TLS proxy, or give jwks_file)",
        ));
    }
    Url::parse(url).map_err(|e| error(field, e.to_string()))
}

/// Where RFC 8414 §3.1 puts an issuer's metadata: the well-known path inserted before its path.
pub fn metadata_url_of(issuer: &str) -> String {
    let (scheme, rest) = issuer.split_once("://").unwrap_or(("http", issuer));
    let split = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    format!(
        "{scheme}://{authority}/.well-known/oauth-authorization-server{}",
        path.trim_end_matches('/')
    )
}

fn read_issuer(value: &Value, path: &str, base: &Path) -> Result<Issuer, ConfigError> {
    let mut fields = Fields::new(value, path)?;
    let issuer = fields.required_string("issuer")?;
    check_url(&fields.field("issuer"), issuer)?;
    if issuer.contains('?') {
        return Err(error(
            &fields.field("issuer"),
            "must not have a query (RFC 8414)",
        ));
    }
    let jwks_file = fields.string("jwks_file")?;
    let jwks_uri = fields.string("jwks_uri")?;
    let metadata_url = fields.string("metadata_url")?;
    let field_names = [&jwks_file, &jwks_uri, &metadata_url];
    if field_names.iter().filter(|f| f.is_some()).count() > 1 {
        return Err(error(
            path,
            "give at most one of jwks_file, jwks_uri and metadata_url",
        ));
    }
    let keys = if let Some(file) = jwks_file {
        let field = fields.field("jwks_file");
        let bytes = read_bounded(&base.join(file), MAX_JWKS_BYTES).map_err(|e| error(&field, e))?;
        let jwks = Jwks::parse(&bytes).map_err(|e| error(&field, e.to_string()))?;
        if jwks.keys().is_empty() {
            return Err(error(
                &field,
                "the key set has no key this server can verify with",
            ));
        }
        KeySource::Fixed(Arc::new(jwks))
    } else if let Some(uri) = jwks_uri {
        KeySource::Url(fetchable(&fields.field("jwks_uri"), uri)?)
    } else if let Some(url) = metadata_url {
        KeySource::Metadata(fetchable(&fields.field("metadata_url"), url)?)
    } else if issuer.starts_with("http://") {
        KeySource::Metadata(fetchable(
            &fields.field("issuer"),
            &metadata_url_of(issuer),
        )?)
    } else {
        KeySource::None
    };
    fields.finish()?;
    Ok(Issuer {
        issuer: issuer.to_owned(),
        keys,
    })
}

fn read_algorithms(value: &Value) -> Result<Vec<Algorithm>, ConfigError> {
    let Value::Array(list) = value else {
        return Err(error("algorithms", "must be an array of algorithm names"));
    };
    if list.is_empty() {
        return Err(error("algorithms", "must name at least one algorithm"));
    }
    let mut algorithms = Vec::new();
    for (i, name) in list.iter().enumerate() {
        let field = format!("algorithms[{i}]");
        let name = name
            .as_str()
            .ok_or_else(|| error(&field, "must be a string"))?;
        let algorithm = Algorithm::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            error(
                &field,
                format!(
                    "{} is not a signature algorithm this server verifies (one of {}; none and HS* never are)",
                    shown(name),
                    known.join(", ")
                ),
            )
        })?;
        if !algorithms.contains(&algorithm) {
            algorithms.push(algorithm);
        }
    }
    Ok(algorithms)
}

fn read_introspection(value: &Value, base: &Path) -> Result<Introspection, ConfigError> {
    let mut fields = Fields::new(value, "introspection")?;
    let endpoint = fetchable(
        &fields.field("endpoint"),
        fields.required_string("endpoint")?,
    )?;
    let client_id = fields.required_string("client_id")?;
    if client_id.contains(':') || !client_id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            "introspection.client_id",
            "must be printable ASCII without spaces or ':' (HTTP Basic)",
        ));
    }
    let secret_file = fields.required_string("client_secret_file")?;
    let field = fields.field("client_secret_file");
    let secret =
        read_bounded(&base.join(secret_file), MAX_SECRET_BYTES).map_err(|e| error(&field, e))?;
    let secret = String::from_utf8(secret)
        .map_err(|_| error(&field, "the secret is not UTF-8"))?
        .trim()
        .to_owned();
    if secret.is_empty() || !secret.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            &field,
            "the secret must be one line of printable ASCII",
        ));
    }
    fields.finish()?;
    Ok(Introspection {
        endpoint,
        client_id: client_id.to_owned(),
        client_secret: secret,
    })
}

/// A scope token: printable ASCII except `"` and `\` (RFC 6749 §3.3), so it can stand in a
/// `WWW-Authenticate` quoted string as it is.
fn scope_token(field: &str, value: &Value) -> Result<String, ConfigError> {
    let text = value
        .as_str()
        .ok_or_else(|| error(field, "must be a scope string"))?;
    let ok = !text.is_empty()
        && text.len() <= MAX_SCOPE_BYTES
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
    if !ok {
        return Err(error(
            field,
            format!("{:?} is not a scope (1 to {MAX_SCOPE_BYTES} printable ASCII characters, no space, \" or \\)", shown(text)),
        ));
    }
    Ok(text.to_owned())
}

fn scope_list(field: &str, value: &Value, count: &mut usize) -> Result<Vec<String>, ConfigError> {
    let Value::Array(list) = value else {
        return Err(error(field, "must be an array of scope strings"));
    };
    let mut scopes = Vec::new();
    for (i, scope) in list.iter().enumerate() {
        *count += 1;
        if *count > MAX_SCOPE_ENTRIES {
            return Err(error(
                field,
                format!("more than {MAX_SCOPE_ENTRIES} scope entries in the file"),
            ));
        }
        let scope = scope_token(&format!("{field}[{i}]"), scope)?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    Ok(scopes)
}

/// The policy file's `scopes` (`policy::Policy::oauth_scopes`): the same format as this file's
/// `scopes`, checked the same way (errors name `scopes....` fields of the policy file).
pub fn policy_scopes(value: &Value) -> Result<ScopeRules, ConfigError> {
    read_scopes(value)
}

fn read_scopes(value: &Value) -> Result<ScopeRules, ConfigError> {
    let mut fields = Fields::new(value, "scopes")?;
    let mut count = 0;
    let required = match fields.get("required") {
        None => Vec::new(),
        Some(list) => scope_list("scopes.required", list, &mut count)?,
    };
    let mut kinds: [Vec<ScopeRule>; 3] = Default::default();
    for (slot, kind) in kinds.iter_mut().zip(["tools", "resources", "prompts"]) {
        let Some(value) = fields.get(kind) else {
            continue;
        };
        let Value::Object(map) = value else {
            return Err(error(
                &format!("scopes.{kind}"),
                "must be an object from a name (or a prefix ending in *) to scopes",
            ));
        };
        no_repeated_member(map, &format!("scopes.{kind}"))?;
        for (name, list) in map.iter() {
            let field = format!("scopes.{kind}.{}", shown(name));
            let rule = ScopeRule::new(name, scope_list(&field, list, &mut count)?)
                .map_err(|rule| error(&field, rule.to_string()))?;
            slot.push(rule);
        }
    }
    fields.finish()?;
    let [tools, resources, prompts] = kinds;
    Ok(ScopeRules {
        required,
        tools,
        resources,
        prompts,
    })
}

fn read_cache(value: &Value) -> Result<CacheBounds, ConfigError> {
    let mut fields = Fields::new(value, "cache")?;
    let defaults = CacheBounds::default();
    let secs = |n: Option<u64>, default: Duration| n.map_or(default, Duration::from_secs);
    let day = 24 * 3600;
    let bounds = CacheBounds {
        jwks_refetch_interval: secs(
            fields.number("jwks_refetch_interval_secs", 1, day)?,
            defaults.jwks_refetch_interval,
        ),
        jwks_max_age: secs(
            fields.number("jwks_max_age_secs", 1, 7 * day)?,
            defaults.jwks_max_age,
        ),
        token_cache_ttl: secs(
            fields.number("token_cache_ttl_secs", 0, day)?,
            defaults.token_cache_ttl,
        ),
        token_cache_max_entries: fields
            .number("token_cache_max_entries", 1, MAX_TOKEN_CACHE_ENTRIES as u64)?
            .map_or(defaults.token_cache_max_entries, |n| n as usize),
    };
    fields.finish()?;
    Ok(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AuthConfig, String> {
        let value = json::parse(text.as_bytes()).expect("test JSON");
        AuthConfig::from_json(&value, Path::new("/nonexistent")).map_err(|e| e.to_string())
    }

    const AS: &str = r#""authorization_servers": [{"issuer": "http://127.0.0.1:9/as"}]"#;

    #[test]
    fn a_minimal_file_takes_the_stated_defaults() {
        let config = parse(&format!(
            r#"{{"resource": "https://mcp.example/mcp", {AS}}}"#
        ))
        .unwrap();
        assert_eq!(config.resource, "https://mcp.example/mcp");
        assert_eq!(config.algorithms, DEFAULT_ALGORITHMS);
        assert_eq!(config.clock_skew_secs, 60);
        assert_eq!(config.cache, CacheBounds::default());
        assert_eq!(config.fetch_timeout, Duration::from_millis(5000));
        match &config.issuers[0].keys {
            KeySource::Metadata(url) => assert_eq!(
                url.to_string(),
                "http://127.0.0.1:9/.well-known/oauth-authorization-server/as"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_error_names_its_field() {
        let cases = [
            (r#"{}"#.to_owned(), "resource: is required"),
            (format!(r#"{{"resource": "mcp.example/mcp", {AS}}}"#), "resource: must be an absolute"),
            (format!(r#"{{"resource": "https://MCP.example/mcp", {AS}}}"#), "resource: the host must be lower-case"),
            (format!(r#"{{"resource": "https://mcp.example/mcp/", {AS}}}"#), "resource: must not end in /"),
            (format!(r#"{{"resource": "https://mcp.example/mcp#x", {AS}}}"#), "resource: must not have a fragment"),
            (r#"{"resource": "https://m.example/mcp"}"#.to_owned(), "authorization_servers: is required"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "https://as.example"}]}"#.to_owned(),
             "no issuer has keys"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://a", "jwks_uri": "https://a/jwks"}]}"#.to_owned(),
             "authorization_servers[0].jwks_uri: must be http://"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://a", "jwks_uri": "http://a/j", "metadata_url": "http://a/m"}]}"#.to_owned(),
             "authorization_servers[0]: give at most one"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://a", "jwks": "x"}]}"#.to_owned(),
             "authorization_servers[0].jwks: unknown member"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://a"}, {"issuer": "http://a"}]}"#.to_owned(),
             "authorization_servers[1].issuer: names an issuer already listed"),
            (r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://a", "jwks_file": "missing.json"}]}"#.to_owned(),
             "authorization_servers[0].jwks_file: cannot read"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "algorithms": ["HS256"]}}"#), "algorithms[0]: HS256 is not a signature algorithm"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "algorithms": ["none"]}}"#), "algorithms[0]: none is not"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "algorithms": []}}"#), "algorithms: must name at least one"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "clock_skew_secs": 301}}"#), "clock_skew_secs: must be a whole number from 0 to 300"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "clock_skew_secs": -1}}"#), "clock_skew_secs: must be a whole number"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scope": {{}}}}"#), "scope: unknown member"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"required": ["a b"]}}}}"#), "scopes.required[0]: \"a?b\" is not a scope"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"tools": {{"x": "s"}}}}}}"#), "scopes.tools.x: must be an array"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"tools": {{"a*b": ["s"]}}}}}}"#), "scopes.tools.a*b: * may only end"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "cache": {{"token_cache_max_entries": 0}}}}"#), "cache.token_cache_max_entries: must be a whole number from 1"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "fetch_timeout_ms": 0}}"#), "fetch_timeout_ms: must be a whole number from 1"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "introspection": {{"endpoint": "http://a/i", "client_id": "c"}}}}"#), "introspection.client_secret_file: is required"),
            (format!(r#"{{"resource": "https://m.example/mcp", {AS}, "introspection": {{"endpoint": "http://a/i", "client_id": "c:d", "client_secret_file": "s"}}}}"#), "introspection.client_id: must be printable ASCII without spaces or ':'"),
        ];
        for (text, expected) in cases {
            let got = parse(&text).expect_err(&text);
            assert!(
                got.contains(expected),
                "{text}\n got {got}\n want {expected}"
            );
            assert!(got.starts_with("auth config: "), "{got}");
        }
    }

    #[test]
    fn a_member_given_twice_is_refused_naming_it() {
        // A reader sees the first copy, a last-one-wins reader would act on the second: the
        // file is refused rather than read either way.
        let cases = [
            (
                format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"required": ["admin"]}}, "scopes": {{}}}}"#),
                "scopes: appears twice",
            ),
            (
                format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"required": ["admin"], "required": []}}}}"#),
                "scopes.required: appears twice",
            ),
            (
                format!(r#"{{"resource": "https://m.example/mcp", {AS}, "scopes": {{"tools": {{"git_*": ["repo:read"], "git_*": []}}}}}}"#),
                "scopes.tools.git_*: appears twice",
            ),
            (
                r#"{"resource": "https://m.example/mcp", "authorization_servers": [{"issuer": "http://127.0.0.1:9/as", "issuer": "http://127.0.0.1:9/other"}]}"#.to_owned(),
                "authorization_servers[0].issuer: appears twice",
            ),
        ];
        for (text, expected) in cases {
            let got = parse(&text).expect_err(&text);
            assert!(
                got.contains(expected),
                "{text}\n got {got}\n want {expected}"
            );
        }
    }

    #[test]
    fn key_files_and_secrets_are_read_when_the_file_loads() {
        let dir = std::env::temp_dir().join(format!("auth-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // RFC 8037 A.2's Ed25519 public key.
        std::fs::write(
            dir.join("jwks.json"),
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
        )
        .unwrap();
        std::fs::write(dir.join("secret"), "s3cret\n").unwrap();
        std::fs::write(
            dir.join("auth.json"),
            r#"{"resource": "https://m.example/mcp",
                "authorization_servers": [{"issuer": "https://as.example", "jwks_file": "jwks.json"}],
                "introspection": {"endpoint": "http://127.0.0.1:1/i", "client_id": "rs", "client_secret_file": "secret"},
                "scopes": {"required": ["mcp"], "tools": {"git_*": ["repo"]}}}"#,
        )
        .unwrap();
        let config = AuthConfig::from_file(&dir.join("auth.json")).unwrap();
        assert!(matches!(&config.issuers[0].keys, KeySource::Fixed(k) if k.keys().len() == 1));
        let introspection = config.introspection.as_ref().unwrap();
        assert_eq!(introspection.client_secret, "s3cret");
        assert!(!format!("{introspection:?}").contains("s3cret"));
        assert_eq!(config.scopes.required, ["mcp"]);
        std::fs::write(dir.join("big.json"), vec![b' '; MAX_CONFIG_BYTES + 1]).unwrap();
        let err = AuthConfig::from_file(&dir.join("big.json")).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn metadata_urls_insert_the_well_known_path() {
        assert_eq!(
            metadata_url_of("http://as.example"),
            "http://as.example/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            metadata_url_of("http://as.example:8/tenant/1/"),
            "http://as.example:8/.well-known/oauth-authorization-server/tenant/1"
        );
    }
}
