//! Streamable HTTP for the engine: a blocking HTTP/1.1 server on `std::net` with the MCP endpoint
//! at `/mcp` (legacy sessions and modern stateless requests on one endpoint).
//!
//! Layers, bottom up: [`limits`] (every bound, named), [`request`] (the head parser, no I/O),
//! [`chunked`] (the chunked-body decoder), [`response`] and [`sse`] (writers), [`guard`]
//! (Host/Origin and bearer checks), [`pool`] and [`server`] (threads, connections, timeouts),
//! [`sessions`] and [`endpoint`] (MCP over it). No TLS: run behind a TLS-terminating proxy.

pub mod access_log;
pub mod endpoint;
pub mod guard;
pub mod limits;
pub mod pool;
pub mod response;
pub mod sealed;
pub mod server;
pub mod sessions;
pub mod sse;
pub mod streams;

pub use endpoint::{Endpoint, ResourceMetadata, HEALTH_PATH, MCP_PATH, MESSAGES_PATH, SSE_PATH};
pub use guard::{Guard, Token, TOKEN_ENV_VAR};
pub use server::{Server, Stopper, Timeouts};

use crate::auth::ResourceServer;
use crate::server::Engine;
use sealed::{Sealer, SessionKey};
use sessions::Sessions;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// The port served when none is given.
pub const DEFAULT_PORT: u16 = 7330;

/// How to serve: where, who may connect, and whether to keep sessions.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Address to bind; loopback (127.0.0.1) by default. Any other address requires `auth_token`
    /// or `resource_server`.
    pub bind: IpAddr,
    /// Port to bind ([`DEFAULT_PORT`]; 0 picks a free one).
    pub port: u16,
    /// Bearer token every request must carry (read from a file or the environment, never argv).
    pub auth_token: Option<Token>,
    /// Serve the legacy era without sessions: each request stands alone (for load balancers).
    pub stateless: bool,
    /// Seal legacy sessions into their ids under this key ([`sealed`]): every replica holding
    /// it serves every session. `None`: sessions live in this process only.
    pub session_key: Option<SessionKey>,
    /// This replica's name in SSE event ids ([`streams`]), for a balancer to route resumptions
    /// by; `None`: `r` and the random tag of this process.
    pub replica_name: Option<String>,
    /// A key rotated out, still accepted (never used to seal) while its tokens may be alive.
    pub previous_session_key: Option<SessionKey>,
    /// Host names accepted in Host/Origin besides the loopback names (e.g. the public name).
    pub allowed_hosts: Vec<String>,
    /// Whole origins (`https://app.example.com`) accepted in Origin besides the allowed hosts.
    pub allowed_origins: Vec<String>,
    /// RFC 9728 metadata to serve and name in 401 challenges; none by default (with
    /// `resource_server`, made from its configuration).
    pub resource_metadata: Option<ResourceMetadata>,
    /// OAuth 2.1 resource server mode: every request's access token validated and its scopes
    /// checked ([`crate::auth`]); excludes `auth_token` and `legacy_sse`.
    pub resource_server: Option<Arc<ResourceServer>>,
    /// Connection cap (at most [`limits::MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// How long to wait on clients (defaults: the constants in [`limits`]).
    pub timeouts: Timeouts,
    /// One JSON line per request on stderr ([`access_log`]).
    pub access_log: bool,
    /// Also serve the HTTP+SSE transport of 2024-11-05 (`GET /sse`, `POST /messages`) for old
    /// clients; needs sessions.
    pub legacy_sse: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            auth_token: None,
            stateless: false,
            session_key: None,
            previous_session_key: None,
            replica_name: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            resource_metadata: None,
            resource_server: None,
            max_connections: limits::MAX_CONNECTIONS,
            timeouts: Timeouts::default(),
            access_log: false,
            legacy_sse: false,
        }
    }
}

/// Binds the endpoint for `engine` without serving yet (tests and hosts read the bound address).
/// Refuses a non-loopback address without a token or a resource server, and metadata without an
/// authorization server.
pub fn bind(engine: Arc<Engine>, mut config: HttpConfig) -> io::Result<Server> {
    let refuse = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
    if !config.bind.is_loopback() && config.auth_token.is_none() && config.resource_server.is_none()
    {
        return Err(refuse(format!(
            "refusing to serve on non-loopback address {} without an auth token or an OAuth configuration",
            config.bind
        )));
    }
    if let Some(server) = &config.resource_server {
        if config.auth_token.is_some() {
            return Err(refuse(
                "a static auth token and an OAuth resource server exclude each other: give one"
                    .into(),
            ));
        }
        if config.legacy_sse {
            return Err(refuse(
                "the HTTP+SSE transport of 2024-11-05 is not served in OAuth resource server mode"
                    .into(),
            ));
        }
        config.resource_metadata = Some(ResourceMetadata {
            resource: server.resource().to_owned(),
            authorization_servers: server.authorization_servers(),
            scopes: server.scopes().all(),
        });
    }
    if config
        .resource_metadata
        .as_ref()
        .is_some_and(|m| m.authorization_servers.is_empty())
    {
        return Err(refuse(
            "protected-resource metadata needs at least one authorization server".into(),
        ));
    }
    let guard = Guard::new(
        &config.allowed_hosts,
        &config.allowed_origins,
        config.auth_token.clone(),
    );
    let sessions = if config.stateless {
        None
    } else {
        Some(Sessions::new()?)
    };
    if config.stateless && config.session_key.is_some() {
        return Err(refuse(
            "a session key seals sessions; a stateless server keeps none".into(),
        ));
    }
    if config.stateless && config.legacy_sse {
        return Err(refuse(
            "the HTTP+SSE transport keeps a session per stream; a stateless server keeps none"
                .into(),
        ));
    }
    if config.previous_session_key.is_some() && config.session_key.is_none() {
        return Err(refuse(
            "a previous session key needs a current one to seal with".into(),
        ));
    }
    let sealer = match config.session_key.clone() {
        Some(key) => Some(Sealer::new(key, config.previous_session_key.clone())?),
        None => None,
    };
    let mut endpoint = Endpoint::new(engine, guard, sessions, config.resource_metadata.clone())?
        .with_sealer(sealer)
        .with_legacy_sse(config.legacy_sse)
        .with_resource_server(config.resource_server.clone());
    if let Some(name) = &config.replica_name {
        endpoint = endpoint.with_replica_name(name).ok_or_else(|| {
            refuse(format!(
                "a replica name is 1 to {} of A-Z a-z 0-9 _ -, not {name:?}",
                limits::MAX_REPLICA_NAME_BYTES
            ))
        })?;
    }
    Ok(Server::bind(
        SocketAddr::new(config.bind, config.port),
        Arc::new(endpoint),
    )?
    .with_max_connections(config.max_connections)
    .with_timeouts(config.timeouts)
    .with_access_log(config.access_log))
}

/// Serves `engine` over Streamable HTTP until the process ends (or binding fails).
pub fn serve(engine: Arc<Engine>, config: HttpConfig) -> io::Result<()> {
    serve_until(engine, config, |_| {})
}

/// Serves `engine` over Streamable HTTP until the [`Stopper`] handed to `on_start` is used (then
/// the connections in progress get [`limits::SHUTDOWN_DRAIN`] to finish) or binding fails.
pub fn serve_until(
    engine: Arc<Engine>,
    config: HttpConfig,
    on_start: impl FnOnce(Stopper),
) -> io::Result<()> {
    let server = bind(engine, config)?;
    on_start(server.stopper()?);
    // Ignore a closed stderr: the address line is for people and scripts, not a requirement.
    let _ = writeln!(
        io::stderr(),
        "{}Streamable HTTP on http://{}{MCP_PATH}",
        crate::voice::PREFIX,
        server.local_addr()?
    );
    server.run()
}
