//! Logging in to an MCP server the way the MCP authorization spec says: on a 401 the client
//! discovers the authorization server ([`discovery`]), registers or uses a known client, runs the
//! authorization code grant with PKCE S256 (or client credentials), keeps the tokens in the
//! owner-only [`store`], refreshes them before they expire and on a 401, and asks for more scope
//! on a 403 `insufficient_scope` a bounded number of times.
//!
//! The HTTP transport calls [`OAuth::authorize`] before each request and after each 401/403;
//! nothing else of the transport knows OAuth exists.

pub mod discovery;
pub mod fetch;
pub mod loopback;
pub mod pkce;
pub mod store;

use super::error::ClientError;
use crate::base64;
use crate::crypto::{assertion, private_key};
use crate::http1::form::{self, form_encode};
use crate::http1::url::Url;
use crate::json::{self, Map, Value};
use discovery::{AuthServerMetadata, Challenge, Discovered};
use fetch::{Body, Fetcher};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use store::{Entry, Store};

/// Step-up authorizations (403 `insufficient_scope`) in a row before the client gives up: a
/// server that keeps asking for scope it never accepts must not loop the login forever.
pub const MAX_STEP_UPS: usize = 2;

/// Logins in a row without an accepted request (a server refusing every token it gets).
pub const MAX_LOGINS: usize = 2;

/// A token this close to its expiry is refreshed before it is sent.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// How long an interactive login waits for the browser to come back.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest access or refresh token accepted from a token endpoint.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// Which grant obtains the first token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Authorization code with PKCE: a user approves in a browser (or the server approves at once).
    AuthorizationCode,
    /// Client credentials (a machine client with its own secret or key).
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990): the user's identity provider ID token is
    /// exchanged at the provider for an ID-JAG (RFC 8693), which the authorization server takes
    /// as a JWT bearer grant (RFC 7523).
    IdJag,
}

/// What the identity provider needs for [`Grant::IdJag`].
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IdentityAssertion {
    pub token_endpoint: String,
    pub client_id: String,
    /// The user's ID token from the identity provider.
    pub id_token: String,
}

impl fmt::Debug for IdentityAssertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityAssertion")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("id_token", &"[redacted]")
            .finish()
    }
}

/// RFC 8693's grant type, and the token types SEP-990 exchanges.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// RFC 7523's grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How the authorization response comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// Print the authorization URL and wait on a loopback listener (RFC 8252).
    Loopback,
    /// Headless: request the authorization URL and read the code from the server's immediate
    /// redirect (an authorization server that approves without a user, as in CI).
    FollowImmediate,
}

/// A client registered beforehand.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Registration {
    pub client_id: String,
    pub client_secret: Option<String>,
    /// An ES256 private key in PEM (PKCS #8 or SEC 1) for `private_key_jwt` (RFC 7523).
    pub private_key_pem: Option<String>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field(
                "private_key_pem",
                &self.private_key_pem.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// How to log in.
#[derive(Clone)]
pub struct OAuthConfig {
    pub grant: Grant,
    pub redirect: Redirect,
    /// A pre-registered client; without one the client uses a Client ID Metadata Document
    /// (when the server supports them and `client_metadata_url` is set) or registers itself
    /// (RFC 7591).
    pub registration: Option<Registration>,
    /// The https URL of this client's metadata document, used as its client id.
    pub client_metadata_url: Option<String>,
    /// For [`Grant::IdJag`].
    pub identity: Option<IdentityAssertion>,
    pub client_name: String,
    /// Where tokens are kept between runs (`None`: for this process only).
    pub store: Option<Store>,
    /// Whether a 401 may start a login (else only stored tokens and refreshes are used).
    pub interactive: bool,
    pub login_timeout: Duration,
    /// Shows the authorization URL to the user (loopback logins).
    pub show_url: Arc<dyn Fn(&str) + Send + Sync>,
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("grant", &self.grant)
            .field("redirect", &self.redirect)
            .field("registration", &self.registration)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("identity", &self.identity)
            .field("store", &self.store)
            .field("interactive", &self.interactive)
            .finish()
    }
}

impl Default for OAuthConfig {
    fn default() -> Self {
        OAuthConfig {
            grant: Grant::AuthorizationCode,
            redirect: Redirect::Loopback,
            registration: None,
            client_metadata_url: None,
            identity: None,
            client_name: "agentteams-mcp".into(),
            store: None,
            interactive: true,
            login_timeout: DEFAULT_LOGIN_TIMEOUT,
            show_url: Arc::new(|url| eprintln!("Open this URL in a browser to log in:\n{url}")),
        }
    }
}

/// The OAuth state of one connection to one MCP server.
pub struct OAuth {
    config: OAuthConfig,
    server: Url,
    fetcher: Fetcher,
    entry: Option<Entry>,
    /// Scope asked for in the last login (step-up adds to it).
    scope: Option<String>,
    step_ups: usize,
    logins: usize,
    refreshed: bool,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("server", &self.server.identifier())
            .field("entry", &self.entry)
            .finish()
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn oauth_err(e: String) -> ClientError {
    ClientError::OAuth(e)
}

impl OAuth {
    /// Prepares to log in to `server_url`; the stored login for it, if any, is loaded.
    pub fn new(
        server_url: &str,
        config: OAuthConfig,
        fetcher: Fetcher,
    ) -> Result<OAuth, ClientError> {
        let server = Url::parse_identifier(server_url).map_err(|e| oauth_err(e.to_string()))?;
        let entry = match &config.store {
            Some(store) => store.find(&server.identifier()).map_err(oauth_err)?,
            None => None,
        };
        Ok(OAuth {
            config,
            server,
            fetcher,
            entry,
            scope: None,
            step_ups: 0,
            logins: 0,
            refreshed: false,
        })
    }

    /// The configured private key, for `private_key_jwt`.
    fn private_key_pem(&self) -> Option<&str> {
        self.config
            .registration
            .as_ref()
            .and_then(|r| r.private_key_pem.as_deref())
    }

    /// The canonical server URL logins are stored under.
    pub fn server_key(&self) -> String {
        self.server.identifier()
    }

    /// The transport's one hook. Before a request (`challenge` `None`): the token to send,
    /// refreshed first when it is about to expire. After a 401 or 403 (`Some((status,
    /// WWW-Authenticate))`): a new token to retry with (refreshed, from a fresh login, or with
    /// more scope), or the error that ends the request.
    pub fn authorize(
        &mut self,
        challenge: Option<(u16, Option<&str>)>,
    ) -> Result<Option<String>, ClientError> {
        let Some((status, header)) = challenge else {
            let expiring = self.entry.as_ref().is_some_and(|e| {
                e.refresh_token.is_some()
                    && e.expires_at
                        .is_some_and(|t| t <= now_secs() + REFRESH_MARGIN.as_secs())
            });
            if expiring && !self.refreshed {
                // A failed refresh leaves the old token: the server's 401 then starts a login.
                let _ = self.refresh();
            }
            return Ok(self.entry.as_ref().map(|e| e.access_token.clone()));
        };
        let parsed = Challenge::parse(header.unwrap_or(""));
        if status == 403 {
            if !parsed.insufficient_scope() {
                return Err(refused(
                    status,
                    header,
                    "the server refuses this token for the request",
                ));
            }
            if self.step_ups == MAX_STEP_UPS {
                return Err(refused(
                    status,
                    header,
                    &format!(
                        "still insufficient scope after {MAX_STEP_UPS} step-up authorizations"
                    ),
                ));
            }
            self.step_ups += 1;
            let scope = union_scope(self.scope.as_deref(), parsed.scope.as_deref());
            return self.login(&parsed, scope).map(Some);
        }
        if self
            .entry
            .as_ref()
            .is_some_and(|e| e.refresh_token.is_some())
            && !self.refreshed
        {
            if let Ok(token) = self.refresh() {
                return Ok(Some(token));
            }
        }
        if !self.config.interactive {
            return Err(refused(
                status,
                header,
                "no usable stored login; run `agentteams-mcp client login --url URL`",
            ));
        }
        if self.logins == MAX_LOGINS {
            return Err(refused(
                status,
                header,
                &format!("the server refused the tokens of {MAX_LOGINS} fresh logins"),
            ));
        }
        self.logins += 1;
        let scope = parsed.scope.clone();
        self.login(&parsed, scope).map(Some)
    }

    /// The server accepted a request: the retry budgets start again.
    pub fn accepted(&mut self) {
        self.step_ups = 0;
        self.logins = 0;
        self.refreshed = false;
    }

    /// Discovery, registration and a grant; the new login is stored and its token returned.
    /// `scope`: what the challenge asked for (or a step-up's union), else PRM's
    /// `scopes_supported`, else none.
    fn login(
        &mut self,
        challenge: &Challenge,
        scope: Option<String>,
    ) -> Result<String, ClientError> {
        let found = discovery::discover(&self.fetcher, &self.server, challenge)?;
        let resource = found
            .resource
            .as_ref()
            .map_or_else(|| self.server.identifier(), |r| r.resource.clone());
        let mut scope = scope.or_else(|| {
            found
                .resource
                .as_ref()
                .and_then(|r| r.scopes_supported.as_ref())
                .filter(|s| !s.is_empty())
                .map(|s| s.join(" "))
        });
        let offline = found
            .server
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        if offline && self.config.grant == Grant::AuthorizationCode {
            scope = union_scope(scope.as_deref(), Some("offline_access"));
        }
        // Bound first, so that a dynamic registration names the redirect URI the login uses.
        let listener = match self.config.grant {
            Grant::AuthorizationCode => Some(loopback::Listener::bind().map_err(oauth_err)?),
            Grant::ClientCredentials | Grant::IdJag => None,
        };
        let redirect_uri = listener.as_ref().map_or("", |l| l.redirect_uri.as_str());
        let (client_id, client_secret, method) = self.client(&found, redirect_uri)?;
        let auth = ClientAuth {
            method: &method,
            client_id: &client_id,
            client_secret: client_secret.as_deref(),
            private_key_pem: self.private_key_pem(),
            audience: &found.server.issuer,
        };
        let mut form: Vec<(&str, String)> = Vec::new();
        let grant = match self.config.grant {
            Grant::ClientCredentials => {
                form.push(("grant_type", "client_credentials".into()));
                "client credentials"
            }
            Grant::AuthorizationCode => {
                let listener = listener
                    .as_ref()
                    .ok_or_else(|| oauth_err("no redirect listener".into()))?;
                let (code, verifier) = self.authorization_code(
                    &found,
                    listener,
                    &client_id,
                    &resource,
                    scope.as_deref(),
                )?;
                form.push(("grant_type", "authorization_code".into()));
                form.push(("code", code));
                form.push(("redirect_uri", listener.redirect_uri.clone()));
                form.push(("code_verifier", verifier));
                "authorization code"
            }
            Grant::IdJag => {
                let assertion =
                    self.exchange_id_token(&found.server.issuer, &resource, scope.as_deref())?;
                form.push(("grant_type", JWT_BEARER.into()));
                form.push(("assertion", assertion));
                "JWT bearer"
            }
        };
        if let (Some(s), Grant::ClientCredentials | Grant::IdJag) = (&scope, self.config.grant) {
            form.push(("scope", s.clone()));
        }
        form.push(("resource", resource.clone()));
        let tokens = token_request(
            &self.fetcher,
            &found.server.token_endpoint,
            grant,
            &auth,
            form,
        )?;
        let entry = Entry {
            server: self.server.identifier(),
            issuer: found.server.issuer.clone(),
            token_endpoint: found.server.token_endpoint.clone(),
            resource: Some(resource),
            client_id,
            client_secret,
            auth_method: method,
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token,
            expires_at: tokens.expires_in.map(|s| now_secs().saturating_add(s)),
            scope: tokens.scope.or_else(|| scope.clone()),
        };
        self.scope = scope;
        self.keep(entry)
    }

    /// Stores `entry` (when there is a store) and makes it current; returns its access token.
    fn keep(&mut self, entry: Entry) -> Result<String, ClientError> {
        if let Some(store) = &self.config.store {
            store.save(&entry).map_err(oauth_err)?;
        }
        let token = entry.access_token.clone();
        self.entry = Some(entry);
        Ok(token)
    }

    /// The refresh token grant with the stored login; the new tokens replace the old.
    fn refresh(&mut self) -> Result<String, ClientError> {
        self.refreshed = true;
        let Some(old) = self.entry.clone() else {
            return Err(oauth_err("no login to refresh".into()));
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(oauth_err("the stored login has no refresh token".into()));
        };
        let auth = ClientAuth {
            method: &old.auth_method,
            client_id: &old.client_id,
            client_secret: old.client_secret.as_deref(),
            // The key is never written to the token store: it comes from the configuration.
            private_key_pem: self.private_key_pem(),
            audience: &old.issuer,
        };
        let mut form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
        ];
        if let Some(r) = &old.resource {
            form.push(("resource", r.clone()));
        }
        let tokens = token_request(
            &self.fetcher,
            &old.token_endpoint,
            "refresh token",
            &auth,
            form,
        )?;
        let entry = Entry {
            access_token: tokens.access_token,
            // RFC 6749 §6: a server that issues no new refresh token leaves the old one valid.
            refresh_token: tokens.refresh_token.or(Some(refresh_token)),
            expires_at: tokens.expires_in.map(|s| now_secs().saturating_add(s)),
            scope: tokens.scope.or(old.scope.clone()),
            ..old
        };
        self.keep(entry)
    }

    /// Who the client is at this authorization server: the pre-registered client, the client
    /// metadata document URL, the registration stored from an earlier login, or a new dynamic
    /// registration. Returns the id, the secret and the token endpoint auth method.
    fn client(
        &self,
        found: &Discovered,
        redirect_uri: &str,
    ) -> Result<(String, Option<String>, String), ClientError> {
        let meta = &found.server;
        if let Some(reg) = &self.config.registration {
            let method = match &reg.client_secret {
                _ if reg.private_key_pem.is_some()
                    && meta.supports_auth_method("private_key_jwt") =>
                {
                    "private_key_jwt"
                }
                None => "none",
                Some(_) if meta.supports_auth_method("client_secret_basic") => {
                    "client_secret_basic"
                }
                Some(_) if meta.supports_auth_method("client_secret_post") => "client_secret_post",
                Some(_) => "client_secret_basic",
            };
            return Ok((
                reg.client_id.clone(),
                reg.client_secret.clone(),
                method.into(),
            ));
        }
        if self.config.grant != Grant::AuthorizationCode {
            return Err(oauth_err(
                "the client credentials and ID-JAG grants need a registered client: give --client-id (and a secret) or --client-file".into(),
            ));
        }
        if let (true, Some(url)) = (
            meta.client_id_metadata_document_supported,
            &self.config.client_metadata_url,
        ) {
            return Ok((url.clone(), None, "none".into()));
        }
        if let Some(e) = self.entry.as_ref().filter(|e| e.issuer == meta.issuer) {
            return Ok((
                e.client_id.clone(),
                e.client_secret.clone(),
                e.auth_method.clone(),
            ));
        }
        let Some(endpoint) = &meta.registration_endpoint else {
            return Err(oauth_err(format!(
                "authorization server {} offers no dynamic client registration and no client id was given; give --client-id (or --client-file) of a client registered there",
                meta.issuer
            )));
        };
        self.register(endpoint, meta, redirect_uri)
    }

    /// Dynamic Client Registration (RFC 7591).
    fn register(
        &self,
        endpoint: &str,
        meta: &AuthServerMetadata,
        redirect_uri: &str,
    ) -> Result<(String, Option<String>, String), ClientError> {
        let wanted = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| meta.supports_auth_method(m))
            .unwrap_or("client_secret_basic");
        let mut body = Map::new();
        body.insert("client_name", Value::from(self.config.client_name.as_str()));
        body.insert(
            "redirect_uris",
            Value::Array(vec![Value::from(redirect_uri)].into()),
        );
        body.insert(
            "grant_types",
            Value::Array(
                vec![
                    Value::from("authorization_code"),
                    Value::from("refresh_token"),
                ]
                .into(),
            ),
        );
        body.insert(
            "response_types",
            Value::Array(vec![Value::from("code")].into()),
        );
        body.insert("token_endpoint_auth_method", Value::from(wanted));
        let text = json::to_string(&Value::Object(body));
        let response = self.fetcher.send(
            "client registration",
            "POST",
            endpoint,
            &[],
            Body::Json(&text),
        )?;
        if !matches!(response.status(), 200 | 201) {
            return Err(oauth_err(format!(
                "client registration at {endpoint} failed: HTTP {}: {}",
                response.status(),
                response.quote()
            )));
        }
        let doc = discovery::object(&response.body, "client registration response", endpoint)
            .map_err(oauth_err)?;
        let id = discovery::string_member(&doc, "client_id", endpoint)
            .map_err(oauth_err)?
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                oauth_err(format!(
                    "client registration response from {endpoint} has no client_id"
                ))
            })?;
        let secret =
            discovery::string_member(&doc, "client_secret", endpoint).map_err(oauth_err)?;
        let method = discovery::string_member(&doc, "token_endpoint_auth_method", endpoint)
            .map_err(oauth_err)?
            .unwrap_or_else(|| {
                if secret.is_some() {
                    "client_secret_basic".into()
                } else {
                    "none".into()
                }
            });
        if !matches!(
            method.as_str(),
            "none" | "client_secret_basic" | "client_secret_post"
        ) {
            return Err(oauth_err(format!(
                "client registration at {endpoint} assigned token endpoint auth method {method}, which this client does not do"
            )));
        }
        Ok((id, secret, method))
    }

    /// The authorization request (PKCE S256, `state`, `resource`) and its response: the code,
    /// the verifier and the redirect URI used.
    fn authorization_code(
        &self,
        found: &Discovered,
        listener: &loopback::Listener,
        client_id: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<(String, String), ClientError> {
        let meta = &found.server;
        if found.from_document {
            meta.require_s256().map_err(oauth_err)?;
        }
        let endpoint = meta.authorization_endpoint.as_deref().ok_or_else(|| {
            oauth_err(format!(
                "authorization server {} has no authorization_endpoint",
                meta.issuer
            ))
        })?;
        let endpoint_url = Url::parse_identifier(endpoint).map_err(|e| oauth_err(e.to_string()))?;
        let pkce = pkce::Pkce::new().map_err(oauth_err)?;
        let state = pkce::random_text(pkce::STATE_BYTES).map_err(oauth_err)?;
        let redirect_uri = listener.redirect_uri.clone();
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri.as_str()),
            ("state", state.as_str()),
            ("code_challenge", pkce.challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", resource),
        ];
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        let request = endpoint_url.with_query(&form_encode(&params));
        let check = |query: &str| callback_code(query, &state, meta);
        let code = match self.config.redirect {
            Redirect::FollowImmediate => {
                let response =
                    self.fetcher
                        .send("authorization request", "GET", &request, &[], Body::None)?;
                let location = response
                    .head
                    .header("location")
                    .filter(|_| (300..400).contains(&response.status()))
                    .ok_or_else(|| {
                        oauth_err(format!(
                            "the authorization endpoint {endpoint} did not redirect at once (HTTP {}); headless login needs an authorization server that approves without a user",
                            response.status()
                        ))
                    })?;
                let query = location
                    .strip_prefix(redirect_uri.as_str())
                    .and_then(|rest| if rest.is_empty() { Some("") } else { rest.strip_prefix('?') })
                    .ok_or_else(|| {
                        oauth_err(format!(
                            "the authorization endpoint redirected to {}, not to this client's redirect URI {redirect_uri}; refusing to follow",
                            crate::voice::shortened(location, 200)
                        ))
                    })?;
                check(query)?
            }
            Redirect::Loopback => {
                (self.config.show_url)(&request);
                let deadline = std::time::Instant::now() + self.config.login_timeout;
                let page = |query: &str| match check(query) {
                    Ok(_) => (true, "Logged in; you may close this window.".to_owned()),
                    Err(e) => (false, format!("Login failed: {e}")),
                };
                let query = listener.wait(deadline, &page).map_err(oauth_err)?;
                check(&query)?
            }
        };
        Ok((code, pkce.verifier))
    }
}

impl OAuth {
    /// SEP-990 step one: the identity provider exchanges the user's ID token for an ID-JAG
    /// addressed to `audience` (the authorization server) for `resource` (RFC 8693).
    fn exchange_id_token(
        &self,
        audience: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<String, ClientError> {
        let idp = self.config.identity.as_ref().ok_or_else(|| {
            oauth_err("the ID-JAG grant needs the identity provider's token endpoint, client id and ID token (--client-file)".into())
        })?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_owned()),
            ("requested_token_type", ID_JAG_TYPE.to_owned()),
            ("audience", audience.to_owned()),
            ("resource", resource.to_owned()),
            ("subject_token", idp.id_token.clone()),
            ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
            ("client_id", idp.client_id.clone()),
        ];
        if let Some(s) = scope {
            form.push(("scope", s.to_owned()));
        }
        let issued = token_response(
            &self.fetcher,
            &idp.token_endpoint,
            "token exchange",
            &[],
            &form,
        )?;
        if issued.issued_token_type.as_deref() != Some(ID_JAG_TYPE) {
            return Err(oauth_err(format!(
                "the identity provider {} issued a {} token, not an ID-JAG",
                idp.token_endpoint,
                issued.issued_token_type.as_deref().unwrap_or("(untyped)")
            )));
        }
        Ok(issued.access_token)
    }
}

/// The code from an authorization response's query, after checking `state` and, when the server
/// sends or promises it, `iss` (RFC 9207: a response from another issuer is a mix-up attack).
fn callback_code(
    query: &str,
    state: &str,
    meta: &AuthServerMetadata,
) -> Result<String, ClientError> {
    let pairs = form::parse_query(query).ok_or_else(|| {
        oauth_err("the authorization response is not a valid query string".into())
    })?;
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    match get("state") {
        Some(s) if s == state => {}
        Some(_) => return Err(oauth_err(
            "the authorization response carries another login's state; refusing it (possible CSRF)"
                .into(),
        )),
        None => {
            return Err(oauth_err(
                "the authorization response carries no state; refusing it".into(),
            ))
        }
    }
    match get("iss") {
        Some(iss) if iss != meta.issuer => {
            return Err(oauth_err(format!(
                "the authorization response comes from issuer {iss}, not {}; refusing it (RFC 9207, mix-up defence)",
                meta.issuer
            )))
        }
        None if meta.authorization_response_iss_parameter_supported => {
            return Err(oauth_err(format!(
                "the authorization response has no iss although {} promises one (RFC 9207); refusing it",
                meta.issuer
            )))
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        return Err(oauth_err(format!(
            "the authorization server refused: {error}{}",
            get("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        )));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| oauth_err("the authorization response carries no code".into()))
}

/// How the client proves itself at the token endpoint.
struct ClientAuth<'a> {
    method: &'a str,
    client_id: &'a str,
    client_secret: Option<&'a str>,
    private_key_pem: Option<&'a str>,
    /// The authorization server's issuer: the `aud` of a client assertion (RFC 7523 §3).
    audience: &'a str,
}

/// What a token endpoint issued.
struct Tokens {
    access_token: String,
    token_type: Option<String>,
    /// RFC 8693: what a token exchange issued.
    issued_token_type: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
    scope: Option<String>,
}

/// POSTs a token request with the client's authentication and reads the bearer token issued
/// (RFC 6749 §5).
fn token_request(
    fetcher: &Fetcher,
    endpoint: &str,
    grant: &str,
    auth: &ClientAuth<'_>,
    mut form: Vec<(&str, String)>,
) -> Result<Tokens, ClientError> {
    let mut headers = Vec::new();
    match (auth.method, auth.client_secret) {
        ("client_secret_basic", Some(secret)) => {
            // RFC 6749 §2.3.1: both parts form-encoded before Base64.
            let pair = format!(
                "{}:{}",
                form::percent_encode(auth.client_id),
                form::percent_encode(secret)
            );
            headers.push((
                "Authorization",
                format!("Basic {}", base64::encode(pair.as_bytes())),
            ));
        }
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", auth.client_id.to_owned()));
            form.push(("client_secret", secret.to_owned()));
        }
        ("private_key_jwt", _) => {
            let pem = auth.private_key_pem.ok_or_else(|| {
                oauth_err("private_key_jwt needs the client's private key (--client-key-file or --client-file)".into())
            })?;
            let key = private_key::from_pem(pem)
                .map_err(|e| oauth_err(format!("the client's private key: {e}")))?;
            let request = assertion::AssertionRequest {
                client_id: auth.client_id,
                audience: auth.audience,
                kid: None,
            };
            let signed = assertion::client_assertion(&request, &key)
                .map_err(|e| oauth_err(e.to_string()))?;
            form.push((
                "client_assertion_type",
                assertion::CLIENT_ASSERTION_TYPE.to_owned(),
            ));
            form.push(("client_assertion", signed));
        }
        _ => form.push(("client_id", auth.client_id.to_owned())),
    }
    let tokens = token_response(fetcher, endpoint, grant, &headers, &form)?;
    if !tokens
        .token_type
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("bearer"))
    {
        return Err(oauth_err(format!(
            "the token response from {endpoint} has token_type {}, not Bearer",
            tokens.token_type.as_deref().unwrap_or("(none)")
        )));
    }
    Ok(tokens)
}

/// POSTs `form` to a token endpoint and reads the tokens it issues (RFC 6749 §5, RFC 8693 §2.2).
fn token_response(
    fetcher: &Fetcher,
    endpoint: &str,
    grant: &str,
    headers: &[(&str, String)],
    form: &[(&str, String)],
) -> Result<Tokens, ClientError> {
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = form_encode(&pairs);
    let response = fetcher.send(
        "token request",
        "POST",
        endpoint,
        headers,
        Body::Form(&body),
    )?;
    let doc = discovery::object(&response.body, "token response", endpoint);
    if response.status() != 200 {
        let detail = doc
            .ok()
            .and_then(|d| {
                let error = d.get("error")?.as_str()?.to_owned();
                let desc = d.get("error_description").and_then(Value::as_str);
                Some(match desc {
                    Some(desc) => format!("{error} ({})", crate::voice::shortened(desc, 200)),
                    None => error,
                })
            })
            .unwrap_or_else(|| response.quote());
        return Err(oauth_err(format!(
            "the token endpoint {endpoint} refused the {grant} grant: HTTP {}: {detail}",
            response.status()
        )));
    }
    let doc = doc.map_err(oauth_err)?;
    let text = |name: &str| discovery::string_member(&doc, name, endpoint).map_err(oauth_err);
    let token = |name: &str| -> Result<Option<String>, ClientError> {
        match text(name)? {
            Some(t)
                if t.is_empty()
                    || t.len() > MAX_TOKEN_BYTES
                    || t.bytes().any(|b| !(0x21..=0x7e).contains(&b)) =>
            {
                Err(oauth_err(format!(
                    "the {name} from {endpoint} is not 1 to {MAX_TOKEN_BYTES} visible ASCII characters"
                )))
            }
            other => Ok(other),
        }
    };
    Ok(Tokens {
        access_token: token("access_token")?.ok_or_else(|| {
            oauth_err(format!(
                "the token response from {endpoint} has no access_token"
            ))
        })?,
        token_type: text("token_type")?,
        issued_token_type: text("issued_token_type")?,
        refresh_token: token("refresh_token")?,
        expires_in: doc.get("expires_in").and_then(Value::as_u64),
        scope: text("scope")?,
    })
}

/// The scopes of `a` and then those of `b` not already in `a`; `None` when both are empty.
fn union_scope(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// The error that ends a request the server keeps refusing.
fn refused(status: u16, header: Option<&str>, why: &str) -> ClientError {
    ClientError::OAuth(format!(
        "HTTP {status}{}: {why}",
        header
            .map(|h| format!(" (WWW-Authenticate: {})", crate::voice::shortened(h, 200)))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(iss_promised: bool) -> AuthServerMetadata {
        AuthServerMetadata {
            issuer: "http://as".into(),
            authorization_response_iss_parameter_supported: iss_promised,
            ..AuthServerMetadata::default()
        }
    }

    #[test]
    fn the_authorization_response_is_checked_for_state_and_issuer() {
        assert_eq!(
            callback_code("code=c&state=s", "s", &meta(false)).unwrap(),
            "c"
        );
        assert_eq!(
            callback_code("code=c&state=s&iss=http%3A%2F%2Fas", "s", &meta(true)).unwrap(),
            "c"
        );
        let cases = [
            ("code=c&state=x", false, "another login's state"),
            ("code=c", false, "no state"),
            ("code=c&state=s&iss=http%3A%2F%2Fevil", false, "mix-up"),
            ("code=c&state=s", true, "promises one"),
            (
                "error=access_denied&error_description=no&state=s",
                false,
                "access_denied (no)",
            ),
            ("state=s", false, "no code"),
            ("state=%zz", false, "not a valid query"),
        ];
        for (query, promised, expected) in cases {
            let e = callback_code(query, "s", &meta(promised))
                .unwrap_err()
                .to_string();
            assert!(e.contains(expected), "{query}: {e}");
        }
    }

    #[test]
    fn scopes_are_merged_without_repeats() {
        assert_eq!(
            union_scope(Some("a b"), Some("b c")).as_deref(),
            Some("a b c")
        );
        assert_eq!(union_scope(None, Some("x")).as_deref(), Some("x"));
        assert_eq!(union_scope(Some(" "), None), None);
    }
}
