//! The Streamable HTTP endpoint (`/mcp`): era routing, sessions, Accept/Content-Type rules, the
//! status-code tables of both eras, and the optional RFC 9728 protected-resource metadata.
//!
//! Legacy (2025-03-26 … 2025-11-25) requests run in a session named by `Mcp-Session-Id`, whose
//! SSE streams (the standalone GET stream and POST replies) are resumable through
//! [`super::streams`]; modern (2026-07-28) requests, recognised by
//! `params._meta["io.modelcontextprotocol/protocolVersion"]`, run statelessly with their HTTP
//! headers checked against the body. Replies are JSON unless the
//! call emits notifications before its result, in which case the reply becomes an SSE stream at
//! the first notification.

use super::guard::{Denial, Guard};
use super::limits::{MAX_SESSION_ID_BYTES, SSE_KEEPALIVE_INTERVAL, SSE_RETRY, STOP_POLL};
use super::response::Response;
use super::sealed::{self, capability, Refusal, Sealer};
use super::server::{Exchange, Handler, Request};
use super::sessions::{Live, Sessions};
use super::streams::{
    parse_event_id, EndReason, Next, Origin, ResumeRefusal, StreamHub, INSTANCE_TAG_BYTES,
    STANDALONE_STREAM,
};
use crate::auth::{Failure, Grant, ResourceServer};
use crate::http1::request::{trim_ows, RequestHead};
use crate::http1::sse;
use crate::json::{self, Value};
use crate::jsonrpc::{code, error_reply, is_request, RpcError};
use crate::server::{
    check_modern_meta, modern_protocol_version, CancelToken, Engine, Notify, Revision, Session,
};
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod legacy_sse;

/// Where the old transport's clients open their stream.
pub const SSE_PATH: &str = "/sse";

/// Where they POST their messages (`?sessionId=<id>`).
pub const MESSAGES_PATH: &str = "/messages";

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";

/// The health check for load balancers: `GET` or `HEAD` answers 200 `ok` with no token, no Host
/// or Origin check and nothing about the server (no name, version, session count or load).
pub const HEALTH_PATH: &str = "/healthz";

/// The RFC 9728 well-known path (served only when [`ResourceMetadata`] is configured).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The revision a legacy request is served under when it names none and has no session
/// (stateless mode): the spec's fallback for a missing `MCP-Protocol-Version`.
const STATELESS_DEFAULT: Revision = Revision::V2025_03_26;

/// OAuth 2.0 protected-resource metadata (RFC 9728) naming the authorization server that issues
/// this server's tokens. Served at [`METADATA_PATH`] (and with [`MCP_PATH`] appended) and named in
/// every 401 challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The canonical URI of this endpoint as clients reach it, e.g. `https://mcp.example.com/mcp`.
    pub resource: String,
    /// Issuer URLs of the authorization servers (at least one).
    pub authorization_servers: Vec<String>,
    /// Scopes a token may carry (advertised only).
    pub scopes: Vec<String>,
}

impl ResourceMetadata {
    /// Where the metadata document lives for `resource` (RFC 9728 §3.1: the well-known path is
    /// inserted between the authority and the resource's path).
    pub fn url(&self) -> String {
        let (scheme, rest) = self
            .resource
            .split_once("://")
            .unwrap_or(("https", self.resource.as_str()));
        let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
        format!("{scheme}://{authority}{}", self.path())
    }

    /// The path part of [`ResourceMetadata::url`]: served too, so that a resource published
    /// under another path (`https://example.com/tools/mcp`, a proxy mapping it to `/mcp`) has
    /// its metadata where clients look, with the proxy forwarding `/.well-known/` unchanged.
    pub fn path(&self) -> String {
        let rest = self
            .resource
            .split_once("://")
            .map_or(self.resource.as_str(), |(_, rest)| rest);
        let path = rest.find('/').map_or("", |slash| &rest[slash..]);
        format!("{METADATA_PATH}{}", path.trim_end_matches('/'))
    }

    fn document(&self) -> Value {
        let strings = |list: &[String]| {
            Value::from(
                list.iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            )
        };
        let mut doc = crate::json::Map::new();
        doc.insert("resource", Value::from(self.resource.as_str()));
        doc.insert(
            "authorization_servers",
            strings(&self.authorization_servers),
        );
        if !self.scopes.is_empty() {
            doc.insert("scopes_supported", strings(&self.scopes));
        }
        doc.insert("bearer_methods_supported", strings(&["header".to_owned()]));
        Value::Object(doc)
    }
}

/// Names the engine's request-state key among the uses of the session key.
const REQUEST_STATE_KEY_CONTEXT: &[u8] = b"agentteams-mcp request state key\0";

/// The MCP endpoint: one engine, its sessions (none when stateless) and its access rules.
pub struct Endpoint {
    engine: Arc<Engine>,
    guard: Guard,
    sessions: Option<Sessions>,
    /// Sealed sessions: ids are tokens any replica with the key opens; `sessions` then only
    /// caches the [`Session`] objects of this replica by nonce.
    sealer: Option<Sealer>,
    metadata: Option<ResourceMetadata>,
    /// This process in event ids: the replica name a balancer routes resumptions by, and a random
    /// tag that keeps an earlier run's ids from matching.
    origin: Origin,
    /// Also serve the 2024-11-05 HTTP+SSE transport ([`SSE_PATH`], [`MESSAGES_PATH`]).
    legacy_sse: bool,
    /// OAuth resource server mode: validates access tokens in place of the guard's static token.
    resource_server: Option<Arc<ResourceServer>>,
    /// Host names refused so far and logged (at most [`MAX_LOGGED_HOSTS`]).
    refused_hosts: std::sync::Mutex<Vec<String>>,
}

/// Distinct refused Host names an endpoint logs, one line each: enough to show an operator the
/// name a proxy sends, never a line per request for a client that floods.
pub const MAX_LOGGED_HOSTS: usize = 16;

/// A JSON-RPC error body without an id (the request's id is unknown or irrelevant at this layer).
fn rpc_error(status: u16, code: i64, message: &str) -> Response {
    Response::json(
        status,
        &error_reply(None, &RpcError::new(code, message), true),
    )
}

fn invalid_request(status: u16, message: &str) -> Response {
    rpc_error(status, code::INVALID_REQUEST, message)
}

fn not_allowed(allow: &str) -> Response {
    invalid_request(405, "method not allowed on this endpoint").header("Allow", allow)
}

impl Endpoint {
    /// `sessions` is `None` for stateless legacy serving (`--stateless`).
    pub fn new(
        engine: Arc<Engine>,
        guard: Guard,
        sessions: Option<Sessions>,
        metadata: Option<ResourceMetadata>,
    ) -> std::io::Result<Endpoint> {
        let instance = random_instance()?;
        let derived = format!("r{}", hex(&instance));
        let origin = Origin::new(&derived, instance).expect("hex digits make a replica name");
        Ok(Endpoint {
            engine,
            guard,
            sessions,
            sealer: None,
            metadata,
            origin,
            legacy_sse: false,
            resource_server: None,
            refused_hosts: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Host and Origin ([`Guard::check_origin`]); the first refusal of each Host name (up to
    /// [`MAX_LOGGED_HOSTS`]) is logged on stderr with the flag that would admit it, since behind a
    /// proxy the operator may not know which name it forwards.
    fn check_origin(&self, head: &RequestHead<'_>) -> Result<(), Response> {
        let denial = match self.guard.check_origin(head) {
            Ok(()) => return Ok(()),
            Err(denial) => denial,
        };
        if denial == Denial::ForbiddenHost {
            let host = head.single("host").ok().flatten().unwrap_or_default();
            let name = crate::http::guard::host_name(host).unwrap_or(host);
            let shown = |bytes: &[u8]| {
                let text = String::from_utf8_lossy(bytes);
                crate::sanitize::sanitize_line_within(&text, 256)
                    .0
                    .into_owned()
            };
            let (shown, name) = (shown(host), shown(name));
            let mut logged = self.refused_hosts.lock().unwrap_or_else(|e| e.into_inner());
            if logged.len() < MAX_LOGGED_HOSTS && !logged.contains(&shown) {
                logged.push(shown.to_string());
                crate::voice::say(
                    true,
                    &format!(
                        "{}http: refused Host {shown:?} (403): not a name this server serves; if \
                         a proxy forwards it, start with --allow-host {name} (each name is \
                         logged once, the first {MAX_LOGGED_HOSTS})",
                        crate::voice::PREFIX
                    ),
                );
            }
        }
        Err(self.deny(denial))
    }

    /// Validates OAuth access tokens with `server` (in place of the guard's static token) and
    /// checks the scopes each request needs; `metadata` should then describe it.
    pub fn with_resource_server(mut self, server: Option<Arc<ResourceServer>>) -> Endpoint {
        self.resource_server = server;
        self
    }

    /// Host and Origin, then the credentials: the grant of a valid OAuth access token (OAuth
    /// mode), or nothing once the static token (if any) matched. Errors are the response.
    fn admit(&self, head: &RequestHead<'_>) -> Result<Option<Grant>, Response> {
        self.check_origin(head)?;
        match &self.resource_server {
            Some(server) => server
                .authenticate(head.single("authorization").map_err(|_| ()))
                .map(Some)
                .map_err(|failure| self.refuse(&failure)),
            None => self
                .guard
                .check_token(head)
                .map(|()| None)
                .map_err(|denial| self.deny(denial)),
        }
    }

    /// The response to an OAuth failure: its status, a JSON-RPC error naming the rule, and the
    /// RFC 6750 challenge (503: `Retry-After` instead).
    fn refuse(&self, failure: &Failure) -> Response {
        let response = invalid_request(failure.status(), &failure.message());
        let required = self
            .resource_server
            .as_ref()
            .map(|s| s.scopes().required.clone())
            .unwrap_or_default();
        let metadata_url = self
            .metadata
            .as_ref()
            .map(ResourceMetadata::url)
            .unwrap_or_default();
        match failure.challenge(&metadata_url, &required) {
            Some(challenge) => response.header("WWW-Authenticate", &challenge),
            None => response.header("Retry-After", &crate::auth::RETRY_AFTER_SECS.to_string()),
        }
    }

    /// Also serves the 2024-11-05 HTTP+SSE transport (ignored by a stateless server: its
    /// sessions live in the stream).
    pub fn with_legacy_sse(mut self, on: bool) -> Endpoint {
        self.legacy_sse = on;
        self
    }

    /// Names this replica in event ids (`--replica-name`; default `r` and the instance tag).
    /// `None` when `name` is not 1 to 32 of `A-Z a-z 0-9 _ -`.
    pub fn with_replica_name(mut self, name: &str) -> Option<Endpoint> {
        let instance = self.origin.instance_tag();
        self.origin = Origin::new(name, instance)?;
        Some(self)
    }

    /// Seals sessions with `sealer` (ignored without sessions: a stateless server keeps none).
    /// The engine's 2026-07-28 `requestState` key is derived from the session key, so a retry
    /// may reach any replica.
    pub fn with_sealer(mut self, sealer: Option<Sealer>) -> Endpoint {
        if let Some(sealer) = &sealer {
            let key = sealer.derive_key(REQUEST_STATE_KEY_CONTEXT);
            self.engine.set_request_state_key(&key);
        }
        self.sealer = sealer;
        self
    }

    /// The session an `Mcp-Session-Id` names: from this process's table or, sealed, opened from
    /// the token (any replica's) and cached here under the token until it expires, so that this
    /// replica's calls of one session share cancellation and log level, and a token is checked
    /// once per replica rather than on every request (the table is keyed by a secret either way,
    /// as in-memory ids are). Errors are the response to send.
    /// In OAuth mode a session belongs to the `principal` that opened it: another principal's
    /// request finds no such session, here and (sealed: the token names its owner) on any
    /// replica, after the entry left this table and after a restart.
    fn resolve(
        &self,
        sessions: &Sessions,
        id: &[u8],
        principal: Option<&str>,
    ) -> Result<Live, Response> {
        if id.len() > MAX_SESSION_ID_BYTES {
            return Err(refused(Refusal::TooLong));
        }
        let key = String::from_utf8_lossy(id);
        if let Some(session) = sessions.get(&key) {
            if session.session.principal() != principal {
                return Err(session_not_found());
            }
            return Ok(session);
        }
        let Some(sealer) = &self.sealer else {
            return Err(session_not_found());
        };
        let now = sealed::unix_now();
        let sealed = sealer.open(id, principal, now).map_err(refused)?;
        let session = Arc::new(
            Session::initialized(self.engine.clone(), sealed.revision)
                .with_id(&sealed.name())
                .with_principal(principal),
        );
        Ok(sessions.insert_until(key.into_owned(), session, sealed::deadline(&sealed, now)))
    }

    /// DELETE: ends the session here (sealed: on this replica, until the token expires).
    fn end(&self, sessions: &Sessions, id: &[u8], principal: Option<&str>) -> Response {
        if id.len() > MAX_SESSION_ID_BYTES {
            return refused(Refusal::TooLong);
        }
        let removed = sessions.remove(&String::from_utf8_lossy(id));
        let Some(sealer) = &self.sealer else {
            return match removed {
                true => Response::empty(200),
                false => session_not_found(),
            };
        };
        let now = sealed::unix_now();
        match sealer.open(id, principal, now) {
            Ok(session) => {
                sealer.revoke(&session, now);
                Response::empty(200)
            }
            Err(refusal) => refused(refusal),
        }
    }

    fn route(&self, request: &Request<'_>, exchange: &Exchange<'_>) -> Option<Response> {
        let head = request.head;
        let path = head.target.split('?').next().unwrap_or_default();
        if path == MCP_PATH {
            return self.mcp(request, exchange);
        }
        if path == HEALTH_PATH {
            return Some(health(head.method));
        }
        if self.legacy_sse && (path == SSE_PATH || path == MESSAGES_PATH) {
            if let Err(response) = self.admit(head) {
                return Some(response);
            }
            return self.legacy_sse(head, request.body, exchange);
        }
        let metadata_paths = [
            METADATA_PATH.to_owned(),
            format!("{METADATA_PATH}{MCP_PATH}"),
        ];
        match &self.metadata {
            Some(metadata)
                if metadata_paths.iter().any(|p| p == path) || metadata.path() == path =>
            {
                Some(self.metadata_document(head, metadata))
            }
            _ => Some(Response::text(404, "not found")),
        }
    }

    fn metadata_document(&self, head: &RequestHead<'_>, metadata: &ResourceMetadata) -> Response {
        if let Err(response) = self.check_origin(head) {
            return response;
        }
        match head.method {
            "GET" => Response::json(200, &metadata.document()),
            _ => Response::text(405, "method not allowed").header("Allow", "GET"),
        }
    }

    fn deny(&self, denial: Denial) -> Response {
        let response = invalid_request(denial.status(), &denial.to_string());
        if denial.status() != 401 {
            return response;
        }
        let mut challenge = String::from("Bearer realm=\"mcp\"");
        if denial == Denial::BadToken {
            challenge.push_str(", error=\"invalid_token\"");
        }
        if let Some(metadata) = &self.metadata {
            challenge.push_str(&format!(", resource_metadata=\"{}\"", metadata.url()));
            if !metadata.scopes.is_empty() {
                challenge.push_str(&format!(", scope=\"{}\"", metadata.scopes.join(" ")));
            }
        }
        response.header("WWW-Authenticate", &challenge)
    }

    fn mcp(&self, request: &Request<'_>, exchange: &Exchange<'_>) -> Option<Response> {
        let head = request.head;
        // Authentication precedes any session lookup, so ids reveal nothing to strangers.
        let grant = match self.admit(head) {
            Ok(grant) => grant,
            Err(response) => return Some(response),
        };
        let principal = grant.as_ref().map(Grant::principal);
        let principal = principal.as_deref();
        match head.method {
            "POST" => self.post(head, request.body, exchange, grant.as_ref(), principal),
            "GET" => self.get_or_delete(head, false, exchange, principal),
            "DELETE" => self.get_or_delete(head, true, exchange, principal),
            _ => Some(not_allowed("GET, POST, DELETE")),
        }
    }

    /// GET (the session's standalone stream, or the resumption of any of its streams) and DELETE
    /// (ends a session). Stateless servers and the modern era offer neither.
    fn get_or_delete(
        &self,
        head: &RequestHead<'_>,
        delete: bool,
        exchange: &Exchange<'_>,
        principal: Option<&str>,
    ) -> Option<Response> {
        let id = match head.single("mcp-session-id") {
            Ok(id) => id,
            Err(_) => return Some(invalid_request(400, "Mcp-Session-Id must be sent once")),
        };
        let (Some(id), Some(sessions)) = (id, &self.sessions) else {
            // Without a session this is the modern era's (or a stateless server's) GET/DELETE.
            return Some(not_allowed("POST"));
        };
        if delete {
            // Only the principal that opened a session may end it.
            if let Err(response) =
                principal.map_or(Ok(()), |p| self.resolve(sessions, id, Some(p)).map(|_| ()))
            {
                return Some(response);
            }
            return Some(self.end(sessions, id, principal));
        }
        match self.resolve(sessions, id, principal) {
            Ok(live) => self.stream(head, &live, exchange),
            Err(response) => Some(response),
        }
    }

    /// A legacy session's GET: resumes the stream `Last-Event-ID` names, or opens the session's
    /// standalone stream; then writes its events until it ends (see [`Endpoint::pump`]).
    fn stream(
        &self,
        head: &RequestHead<'_>,
        live: &Live,
        exchange: &Exchange<'_>,
    ) -> Option<Response> {
        if !accepts(head, "text/event-stream") {
            return Some(invalid_request(
                406,
                "Accept must list text/event-stream to open a stream",
            ));
        }
        let last_event_id = match head.single("last-event-id") {
            Ok(v) => v,
            Err(_) => return Some(invalid_request(400, "Last-Event-ID must be sent once")),
        };
        let priming = primes(&live.session);
        let hub = &live.streams;
        let (stream, writer, after) = match last_event_id {
            Some(raw) => {
                let resumed = parse_event_id(raw)
                    .map_err(ResumeRefusal::Malformed)
                    .and_then(|id| Ok((id.stream, hub.resume(&self.origin, &id)?)));
                match resumed {
                    Ok((stream, (writer, after))) => {
                        exchange.send_sse(&[]);
                        (stream, writer, after)
                    }
                    Err(refusal) => {
                        return Some(invalid_request(refusal.status(), &refusal.to_string()))
                    }
                }
            }
            None => {
                let sink_hub = hub.clone();
                live.session
                    .forward_notifications(Arc::new(move |message: &Value| {
                        let data = json::to_string(message);
                        sink_hub.publish(STANDALONE_STREAM, data, false).is_some()
                    }));
                let (writer, after) = hub.attach_standalone();
                let mut first = Vec::new();
                if priming {
                    let id = self.origin.event_id(STANDALONE_STREAM, after);
                    sse::encode_priming(&id, SSE_RETRY, &mut first);
                }
                exchange.send_sse(&first);
                (STANDALONE_STREAM, writer, after)
            }
        };
        self.pump(exchange, hub, (stream, writer), after, true);
        None
    }

    /// Writes the events of `stream` after `after` to a GET as they are stored (under their ids
    /// when `ids`), with a keep-alive comment when idle, until the stream ends, another GET takes
    /// it over, the client goes, the session ends or the server stops.
    fn pump(
        &self,
        exchange: &Exchange<'_>,
        hub: &StreamHub,
        (stream, writer): (u64, u64),
        after: u64,
        ids: bool,
    ) {
        let mut after = after;
        let mut last_write = Instant::now();
        let mut finished = false;
        // A client that closes a quiet stream is seen at once, not at the next write.
        let gone = CancelToken::new();
        let _watch = exchange.cancel_on_disconnect(gone.clone());
        while !exchange.is_stopping() && !gone.is_cancelled() {
            match hub.next(stream, writer, after, STOP_POLL) {
                Next::Events(events) => {
                    let mut out = Vec::new();
                    for (seq, data) in &events {
                        if ids {
                            let id = self.origin.event_id(stream, *seq);
                            sse::encode_event_with_id(&id, data, &mut out);
                        } else {
                            sse::encode_event(data, &mut out);
                        }
                        after = *seq;
                    }
                    if !exchange.send_sse(&out) {
                        break;
                    }
                    last_write = Instant::now();
                }
                Next::Idle if last_write.elapsed() >= SSE_KEEPALIVE_INTERVAL => {
                    if !exchange.send_sse(sse::KEEPALIVE_COMMENT) {
                        break;
                    }
                    last_write = Instant::now();
                }
                Next::Idle => {}
                Next::End(reason) => {
                    finished = reason == EndReason::Finished;
                    break;
                }
            }
        }
        if !finished {
            hub.release(stream, writer);
        }
        exchange.finish_sse(&[]);
    }

    fn post(
        &self,
        head: &RequestHead<'_>,
        body: &[u8],
        exchange: &Exchange<'_>,
        grant: Option<&Grant>,
        principal: Option<&str>,
    ) -> Option<Response> {
        if !accepts(head, "application/json") || !accepts(head, "text/event-stream") {
            return Some(invalid_request(
                406,
                "Accept must list both application/json and text/event-stream",
            ));
        }
        if !is_json_content(head) {
            return Some(invalid_request(
                415,
                "Content-Type must be application/json",
            ));
        }
        let message = match json::parse(body) {
            Ok(message) => message,
            Err(e) => {
                return Some(rpc_error(
                    400,
                    code::PARSE_ERROR,
                    &format!("parse error: {e}"),
                ))
            }
        };
        // Step-up: a request the token's scopes do not cover is refused before it runs.
        if let (Some(server), Some(grant)) = (&self.resource_server, grant) {
            let reach = |method: &str, params: Option<&Value>| self.engine.reach(method, params);
            if let Err(failure) = server.authorize(grant, &message, reach) {
                return Some(self.refuse(&failure));
            }
        }
        let header_version = match head.single("mcp-protocol-version") {
            Ok(v) => v.map(|v| String::from_utf8_lossy(v).into_owned()),
            Err(_) => {
                return Some(invalid_request(
                    400,
                    "MCP-Protocol-Version must be sent once",
                ))
            }
        };
        let header_is_modern =
            header_version.as_deref().and_then(Revision::parse) == Some(Revision::V2026_07_28);
        if modern_protocol_version(&message).is_some() || header_is_modern {
            return self.modern(
                head,
                message,
                header_version.as_deref(),
                exchange,
                principal,
            );
        }
        self.legacy(
            head,
            message,
            header_version.as_deref(),
            exchange,
            principal,
        )
    }

    fn legacy(
        &self,
        head: &RequestHead<'_>,
        message: Value,
        header_version: Option<&str>,
        exchange: &Exchange<'_>,
        principal: Option<&str>,
    ) -> Option<Response> {
        let initialize = is_request(&message)
            && message.get("method").and_then(Value::as_str) == Some("initialize");
        // MCP-Protocol-Version must name a supported revision (not necessarily the negotiated one);
        // initialize negotiates in its body instead.
        let header_revision = match header_version {
            None => None,
            Some(v) => match Revision::parse(v).filter(|r| r.is_legacy()) {
                Some(r) => Some(r),
                None if initialize => None,
                None => {
                    return Some(invalid_request(
                        400,
                        &format!("unsupported MCP-Protocol-Version {v:?}"),
                    ))
                }
            },
        };
        let id = match head.single("mcp-session-id") {
            Ok(id) => id,
            Err(_) => return Some(invalid_request(400, "Mcp-Session-Id must be sent once")),
        };
        let Some(sessions) = &self.sessions else {
            let session = if initialize {
                Session::new(self.engine.clone())
            } else {
                Session::initialized(
                    self.engine.clone(),
                    header_revision.unwrap_or(STATELESS_DEFAULT),
                )
            }
            .with_principal(principal);
            return self.run(&session, message, None, None, exchange);
        };
        if initialize {
            if id.is_some_and(|id| self.resolve(sessions, id, principal).is_ok()) {
                return Some(invalid_request(400, "already initialized"));
            }
            return Some(self.initialize(sessions, message, principal));
        }
        let Some(id) = id else {
            return Some(invalid_request(
                400,
                "Mcp-Session-Id header required (send initialize first)",
            ));
        };
        match self.resolve(sessions, id, principal) {
            Ok(live) => {
                let resumable = PostStream {
                    hub: &live.streams,
                    origin: &self.origin,
                    priming: primes(&live.session),
                    stream: Mutex::new(None),
                };
                self.run(&live.session, message, None, Some(resumable), exchange)
            }
            Err(response) => Some(response),
        }
    }

    /// Starts a legacy session: runs `initialize` and, when it succeeds, answers with the new
    /// session's id (sealed: the token carrying the negotiated revision and capabilities).
    fn initialize(&self, sessions: &Sessions, message: Value, principal: Option<&str>) -> Response {
        let capabilities = declared_capabilities(&message);
        let (name, nonce) = match &self.sealer {
            Some(sealer) => match sealer.new_nonce() {
                Ok(nonce) => (crate::sha256::to_hex(&nonce), Some(nonce)),
                Err(e) => return cannot_create(e),
            },
            None => match sessions.new_id() {
                Ok(id) => (id, None),
                Err(e) => return cannot_create(e),
            },
        };
        // The name identifies the session in audit records from its first call on (sealed: the
        // nonce, never the token, which is a credential for the session).
        let session = Arc::new(
            Session::new(self.engine.clone())
                .with_id(&name)
                .with_principal(principal),
        );
        let Some(reply) = session.handle_message(message) else {
            return Response::empty(202);
        };
        if reply.get("result").is_none() {
            return Response::json(200, &reply);
        }
        // Sealed, the table is keyed by the token (see `resolve`) and the entry ends with it.
        let (id, deadline) = match (&self.sealer, nonce) {
            (Some(sealer), Some(nonce)) => {
                let revision = session
                    .negotiated_revision()
                    .unwrap_or(Revision::DEFAULT_LEGACY);
                let now = sealed::unix_now();
                match sealer.seal(nonce, revision, capabilities, principal, now) {
                    Ok(token) => (
                        token,
                        std::time::Instant::now().checked_add(sealer.lifetime()),
                    ),
                    Err(e) => return cannot_create(e),
                }
            }
            _ => (name, None),
        };
        sessions.insert_until(id.clone(), session, deadline);
        Response::json(200, &reply).header("Mcp-Session-Id", &id)
    }

    /// Checks a 2026-07-28 request's headers against its body, then serves it statelessly.
    fn modern(
        &self,
        head: &RequestHead<'_>,
        message: Value,
        header_version: Option<&str>,
        exchange: &Exchange<'_>,
        principal: Option<&str>,
    ) -> Option<Response> {
        let method = message.get("method").and_then(Value::as_str);
        let notification = method.is_some() && message.get("id").is_none();
        if !is_request(&message) && !notification {
            return Some(invalid_request(
                400,
                "body must be one JSON-RPC request or notification",
            ));
        }
        let Some(body_version) = modern_protocol_version(&message) else {
            return Some(rpc_error(
                400,
                code::INVALID_PARAMS,
                "MCP-Protocol-Version names 2026-07-28 but params._meta lacks io.modelcontextprotocol/protocolVersion",
            ));
        };
        let body_version_text = body_version.as_str();
        if header_version.is_none() || header_version != body_version_text {
            return Some(header_mismatch(
                "MCP-Protocol-Version",
                header_version,
                body_version_text,
            ));
        }
        // The version check comes before the other headers; missing capabilities after them.
        let meta_error = check_modern_meta(&message).err();
        if let Some(error) = meta_error
            .as_ref()
            .filter(|e| e.code == code::UNSUPPORTED_PROTOCOL_VERSION)
        {
            return Some(Response::json(400, &error_reply(None, error, true)));
        }
        if let Err(response) = check_named_header(head, "mcp-method", "Mcp-Method", method) {
            return Some(response);
        }
        let name_field = match method {
            Some("tools/call" | "prompts/get") => Some("name"),
            Some("resources/read") => Some("uri"),
            _ => None,
        };
        if let Some(field) = name_field {
            let body_name = message
                .get("params")
                .and_then(|p| p.get(field))
                .and_then(Value::as_str);
            if let Err(response) = check_named_header(head, "mcp-name", "Mcp-Name", body_name) {
                return Some(response);
            }
        }
        if let Some(error) = meta_error {
            return Some(Response::json(400, &error_reply(None, &error, true)));
        }
        let cancel = CancelToken::new();
        let session = Session::new(self.engine.clone()).with_principal(principal);
        self.run(&session, message, Some(cancel), None, exchange)
    }

    /// Hands one message to `session` and answers: 202 without a reply, 200 (or a status the reply's
    /// error earns) with one, as JSON or, once the call has emitted a notification, as SSE.
    /// `modern_cancel`: the 2026-07-28 era cancels a call whose response stream the client closed.
    /// `resumable`: a legacy session's stream, whose events get ids and are stored for resumption.
    fn run(
        &self,
        session: &Session,
        message: Value,
        modern_cancel: Option<CancelToken>,
        resumable: Option<PostStream<'_>>,
        exchange: &Exchange<'_>,
    ) -> Option<Response> {
        let request = is_request(&message);
        let batch = matches!(message, Value::Array(_));
        let cancel = modern_cancel.clone().unwrap_or_default();
        // Only tool calls run long enough for a disconnect to matter; a listen stream lasts until
        // the client closes it.
        let method = message.get("method").and_then(Value::as_str);
        let calls_tool = method == Some("tools/call");
        let listens = method == Some("subscriptions/listen");
        if let Some(tool) = message
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .filter(|_| calls_tool)
        {
            exchange.note(tool);
        }
        let _watch = (modern_cancel.is_some() && request && (calls_tool || listens))
            .then(|| exchange.cancel_on_disconnect(cancel.clone()));
        let notify = StreamNotify {
            exchange,
            cancel_on_disconnect: modern_cancel.clone(),
            resumable,
        };
        let Some(reply) = session.handle_message_with(message, &notify, cancel) else {
            return (!exchange.is_streaming()).then(|| Response::empty(202));
        };
        let is_error_code = |c: i64| {
            reply
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64)
                == Some(c)
        };
        let status = if !(request || batch && reply.as_array().is_some()) {
            // Not a JSON-RPC message, or a batch refused as a whole.
            400
        } else if modern_cancel.is_some() && is_error_code(code::METHOD_NOT_FOUND) {
            404
        } else {
            200
        };
        let text = json::to_string(&reply);
        if let Some(post) = notify.resumable.as_ref().filter(|p| p.opened().is_some()) {
            post.finish(exchange, text);
            return None;
        }
        if exchange.is_streaming() {
            exchange.finish_stream(&text);
            return None;
        }
        Some(Response::empty(status).body("application/json", text.into_bytes()))
    }
}

impl Handler for Endpoint {
    fn handle(&self, request: &Request<'_>, exchange: &Exchange<'_>) {
        if let Some(response) = self.route(request, exchange) {
            exchange.respond(response);
        }
    }
}

/// Streams a call's notifications as SSE events on its own response.
struct StreamNotify<'a, 'b> {
    exchange: &'a Exchange<'b>,
    cancel_on_disconnect: Option<CancelToken>,
    /// Legacy sessions: the events get ids and are stored, so the stream can be resumed.
    resumable: Option<PostStream<'a>>,
}

impl Notify for StreamNotify<'_, '_> {
    fn notify(&self, notification: Value) {
        let text = json::to_string(&notification);
        if let Some(post) = &self.resumable {
            post.send(self.exchange, &notification, text);
            return;
        }
        let delivered = self.exchange.send_event(&text);
        if let (false, Some(cancel)) = (delivered, &self.cancel_on_disconnect) {
            cancel.cancel();
        }
    }

    fn shutting_down(&self) -> bool {
        self.exchange.is_stopping()
    }

    fn close_stream(&self) -> bool {
        let Some(post) = self.resumable.as_ref().filter(|p| p.priming) else {
            return false;
        };
        let stream = post.open(self.exchange);
        post.hub.detach(stream);
        self.exchange.close_stream()
    }
}

/// A legacy session's POST stream: opened (and primed) at its first event, every event stored
/// under an id before the POST's connection writes it, so a GET can resume it.
struct PostStream<'a> {
    hub: &'a StreamHub,
    origin: &'a Origin,
    /// Send a priming event with `retry` first (negotiated 2025-11-25 or later: older clients
    /// may not parse an event with empty data).
    priming: bool,
    stream: Mutex<Option<u64>>,
}

impl PostStream<'_> {
    fn opened(&self) -> Option<u64> {
        *self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stream's number, opening it (head and priming event) on first use.
    fn open(&self, exchange: &Exchange<'_>) -> u64 {
        let mut slot = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stream) = *slot {
            return stream;
        }
        let stream = self.hub.open_post_stream();
        *slot = Some(stream);
        let mut first = Vec::new();
        if self.priming {
            sse::encode_priming(&self.origin.event_id(stream, 0), SSE_RETRY, &mut first);
        }
        if !exchange.send_sse(&first) {
            self.hub.detach(stream);
        }
        stream
    }

    /// Stores one notification or request and writes it while the POST's connection owns the
    /// stream. A request the client could not see (its POST connection gone, no GET resuming it)
    /// goes to the standalone GET stream if one is open.
    fn send(&self, exchange: &Exchange<'_>, message: &Value, text: String) {
        let stream = self.open(exchange);
        let target = if is_request(message) && self.hub.reroutes_requests(stream) {
            STANDALONE_STREAM
        } else {
            stream
        };
        self.deliver(exchange, target, text, false);
    }

    /// Stores the response as the stream's last event and ends the POST's stream.
    fn finish(&self, exchange: &Exchange<'_>, text: String) {
        let stream = self.open(exchange);
        self.deliver(exchange, stream, text, true);
        exchange.finish_sse(&[]);
    }

    fn deliver(&self, exchange: &Exchange<'_>, stream: u64, text: String, last: bool) {
        // The store keeps its own copy: the client may read this event again after a reconnect.
        let published = self.hub.publish(stream, text.clone(), last);
        let Some(published) = published.filter(|p| p.direct && stream != STANDALONE_STREAM) else {
            return;
        };
        let mut event = Vec::with_capacity(text.len() + 64);
        let id = self.origin.event_id(stream, published.seq);
        sse::encode_event_with_id(&id, &text, &mut event);
        if !exchange.send_sse(&event) {
            self.hub.detach(stream);
        }
    }
}

/// The health check's answer; it reaches this only while the process accepts and serves.
fn health(method: &str) -> Response {
    match method {
        "GET" => Response::text(200, "ok"),
        "HEAD" => Response::empty(200),
        _ => Response::text(405, "method not allowed").header("Allow", "GET, HEAD"),
    }
}

/// Whether streams of `session` start with a priming event (SEP-1699, 2025-11-25 and later).
fn primes(session: &Session) -> bool {
    session
        .negotiated_revision()
        .is_some_and(|r| r >= Revision::V2025_11_25)
}

/// [`INSTANCE_TAG_BYTES`] from the OS random source ([`crate::random`], which fails closed).
fn random_instance() -> std::io::Result<[u8; INSTANCE_TAG_BYTES]> {
    crate::random::array()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The answer to a session id that names no session this request may use: 400 for one too long
/// (not echoed), 404 for the rest, as the specification asks, so that the client initializes
/// again. Only a retired layout says why; a session of another principal, a forged, expired or
/// ended one all read "session not found", so an id's answer tells nothing about the session.
fn refused(refusal: Refusal) -> Response {
    match refusal {
        Refusal::TooLong => invalid_request(400, &refusal.to_string()),
        Refusal::Outdated => invalid_request(404, &refusal.to_string()),
        _ => session_not_found(),
    }
}

fn session_not_found() -> Response {
    invalid_request(404, "session not found")
}

fn cannot_create(e: std::io::Error) -> Response {
    invalid_request(500, &format!("cannot create a session id: {e}"))
}

/// The [`capability`] bits of the capabilities `initialize` declares.
fn declared_capabilities(message: &Value) -> u8 {
    let declared = message
        .get("params")
        .and_then(|p| p.get("capabilities"))
        .and_then(Value::as_object);
    capability::NAMES
        .iter()
        .filter(|(name, _)| declared.is_some_and(|d| d.get(name).is_some()))
        .fold(0, |bits, (_, bit)| bits | bit)
}

/// -32020 with the wording of the 2026-07-28 revision.
fn header_mismatch(header: &str, sent: Option<&str>, body: Option<&str>) -> Response {
    let message = match (sent, body) {
        (None, _) => format!("Header mismatch: {header} header is missing"),
        (Some(sent), Some(body)) => format!(
            "Header mismatch: {header} header value '{sent}' does not match body value '{body}'"
        ),
        (Some(sent), None) => {
            format!("Header mismatch: {header} header value '{sent}' has no body value to match")
        }
    };
    rpc_error(400, code::HEADER_MISMATCH, &message)
}

/// Checks that header `name` (decoded from its `=?base64?…?=` form if so sent) equals `body`.
fn check_named_header(
    head: &RequestHead<'_>,
    name: &str,
    display: &str,
    body: Option<&str>,
) -> Result<(), Response> {
    let raw = match head.single(name) {
        Ok(Some(raw)) => raw,
        Ok(None) => return Err(header_mismatch(display, None, body)),
        Err(_) => {
            return Err(rpc_error(
                400,
                code::HEADER_MISMATCH,
                &format!("Header mismatch: {display} must be sent once"),
            ))
        }
    };
    let Some(value) = decode_header_value(raw) else {
        return Err(rpc_error(
            400,
            code::HEADER_MISMATCH,
            &format!("Header mismatch: {display} header holds invalid characters"),
        ));
    };
    if Some(value.as_str()) == body {
        Ok(())
    } else {
        Err(header_mismatch(display, Some(&value), body))
    }
}

/// A 2026-07-28 header value: visible ASCII as is, or `=?base64?<Base64 of UTF-8>?=`.
fn decode_header_value(raw: &[u8]) -> Option<String> {
    if let Some(encoded) = raw
        .strip_prefix(b"=?base64?")
        .and_then(|r| r.strip_suffix(b"?="))
    {
        return String::from_utf8(base64_decode(encoded)?).ok();
    }
    if !raw.iter().all(|b| (0x20..0x7f).contains(b)) {
        return None;
    }
    String::from_utf8(raw.to_vec()).ok()
}

/// Standard Base64 with optional padding; `None` on any other byte.
fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let text = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in text {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    (text.len() % 4 != 1).then_some(out)
}

/// Whether the request's Accept admits `media` (`type/subtype`); `*/*` and `type/*` count, `q=0`
/// excludes, and no Accept header at all admits everything (RFC 9110 §12.5.1).
fn accepts(head: &RequestHead<'_>, media: &str) -> bool {
    let mut values = head.values("accept").peekable();
    if values.peek().is_none() {
        return true;
    }
    let wildcard = format!("{}/*", media.split('/').next().unwrap_or_default());
    values.flat_map(|v| v.split(|&b| b == b',')).any(|item| {
        let mut parts = item.split(|&b| b == b';').map(trim_ows);
        let range = parts.next().unwrap_or_default();
        let refused = parts.any(|p| {
            p.len() >= 3
                && p[..2].eq_ignore_ascii_case(b"q=")
                && p[2..].iter().all(|&b| b == b'0' || b == b'.')
        });
        !refused
            && [media.as_bytes(), wildcard.as_bytes(), b"*/*"]
                .iter()
                .any(|m| range.eq_ignore_ascii_case(m))
    })
}

/// Content-Type is `application/json`, parameters (charset) ignored.
fn is_json_content(head: &RequestHead<'_>) -> bool {
    match head.single("content-type") {
        Ok(Some(value)) => {
            let media = value.split(|&b| b == b';').next().unwrap_or_default();
            trim_ows(media).eq_ignore_ascii_case(b"application/json")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::request::{parse_head, Status};

    fn with_head<T>(headers: &str, f: impl FnOnce(&RequestHead<'_>) -> T) -> T {
        let buf = format!("POST /mcp HTTP/1.1\r\n{headers}\r\n");
        let Ok(Status::Complete(head, _)) = parse_head(buf.as_bytes()) else {
            panic!("bad test head");
        };
        f(&head)
    }

    #[test]
    fn accept_rules() {
        let both = |h: &str| {
            with_head(h, |head| {
                accepts(head, "application/json") && accepts(head, "text/event-stream")
            })
        };
        assert!(both("Accept: application/json, text/event-stream\r\n"));
        assert!(both(
            "Accept: application/json\r\nAccept: text/event-stream\r\n"
        ));
        assert!(both("Accept: */*\r\n"));
        assert!(both("Accept: application/*, TEXT/*;q=0.5\r\n"));
        assert!(both(""));
        assert!(!both("Accept: application/json\r\n"));
        assert!(!both("Accept: text/event-stream\r\n"));
        assert!(!both("Accept: application/json, text/event-stream;q=0\r\n"));
        assert!(!both("Accept: text/html\r\n"));
    }

    #[test]
    fn content_type_rules() {
        let json = |h: &str| with_head(h, is_json_content);
        assert!(json("Content-Type: application/json\r\n"));
        assert!(json("Content-Type: Application/JSON; charset=utf-8\r\n"));
        assert!(!json("Content-Type: text/plain\r\n"));
        assert!(!json("Content-Type: application/jsonx\r\n"));
        assert!(!json(""));
    }

    #[test]
    fn header_values_decode_base64_form() {
        assert_eq!(
            decode_header_value(b"tools/call").as_deref(),
            Some("tools/call")
        );
        // "héllo" in UTF-8, Base64-encoded.
        assert_eq!(
            decode_header_value(b"=?base64?aMOpbGxv?=").as_deref(),
            Some("héllo")
        );
        assert_eq!(
            decode_header_value(b"=?base64?aMOpbGxv").as_deref(),
            Some("=?base64?aMOpbGxv")
        );
        assert_eq!(decode_header_value(b"=?base64?a*?="), None);
        assert_eq!(decode_header_value(b"caf\xc3\xa9"), None);
        assert_eq!(base64_decode(b"TWFu"), Some(b"Man".to_vec()));
        assert_eq!(base64_decode(b"TWE="), Some(b"Ma".to_vec()));
        assert_eq!(base64_decode(b"TQ=="), Some(b"M".to_vec()));
        assert_eq!(base64_decode(b"T"), None);
    }

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        let m = ResourceMetadata {
            resource: "https://mcp.example.com/mcp".into(),
            authorization_servers: vec!["https://auth.example.com".into()],
            scopes: vec![],
        };
        assert_eq!(
            m.url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            json::to_string(&m.document()),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"]}"#
        );
        let root = ResourceMetadata {
            resource: "https://mcp.example.com".into(),
            ..m
        };
        assert_eq!(
            root.url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        let nested = ResourceMetadata {
            resource: "https://example.com/tools/mcp".into(),
            ..root
        };
        assert_eq!(
            nested.path(),
            "/.well-known/oauth-protected-resource/tools/mcp"
        );
        assert_eq!(
            nested.url(),
            "https://example.com/.well-known/oauth-protected-resource/tools/mcp"
        );
    }
}
