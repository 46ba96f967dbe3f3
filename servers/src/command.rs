//! The `agentteams-mcp` command line: `--serve-mcp NAME` over stdio or HTTP, and the commands
//! around it (`index`, `audit`, `client`, `trust`, `approval`). It reads argv once and passes
//! what it read down as settings; the servers below never read argv or globals.

use crate::catalogue::{Catalogue, Settings};
use crate::cli::{self, unknown_command, Args, UsageError};
use crate::gitread::{self, GitSettings, MemoryLimit};
use crate::{approval_cmd, client_cmd, index_cmd};
use crate::{run_http_server, run_server_with, verify_audit_log, Compat, ServeOptions};
use agentteams_mcp::auth::config::AuthConfig;
use agentteams_mcp::auth::ResourceServer;
use agentteams_mcp::governance::PermissionMode;
use agentteams_mcp::http::limits;
use agentteams_mcp::http::sealed::SessionKey;
use agentteams_mcp::http::streams::is_replica_name;
use agentteams_mcp::http::{HttpConfig, Token, DEFAULT_PORT, TOKEN_ENV_VAR};
use agentteams_mcp::voice::{self, say, usage_line, PREFIX};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The help's first part; [`usage`] adds the servers, the options and the limits.
const USAGE_COMMANDS: &str = "\
usage:
  agentteams-mcp --serve-mcp NAME [--root DIR]   serve NAME over stdio (NAME: a server below)
  agentteams-mcp --serve-mcp NAME --http [--bind ADDR] [--port N]
                 [--auth-token-file F | --auth-config FILE]
                 [--stateless | --session-key-file F [--previous-session-key-file F]]
                 [--replica-name NAME] [--legacy-sse] [--allow-host NAME]... [--allow-origin ORIGIN]... [--max-connections N]
                 [--access-log] [--until-stdin-closes]
                                                 serve NAME over Streamable HTTP at /mcp
  agentteams-mcp index build [--root DIR] [--team-dir DIR] [--description FILE]
                 [--framework NAME] [--python PATH]
                                                 build the indexes recall reads (index --help)
  agentteams-mcp audit verify FILE [--ci]         check an audit log's hash chains (audit --help)
  agentteams-mcp client ...                      call an MCP server by hand (client --help)
  agentteams-mcp trust ...                       manage .agentteams/mcp-trust.json (trust --help)
  agentteams-mcp approval ...                    manage .agentteams/approvals.json (approval --help)
  agentteams-mcp --help | --version";

/// The help after the servers: the serve command's options, limits and exit codes.
const USAGE_OPTIONS: &str = "\
options:
  --root DIR, --project DIR   the project the server works on (default: the current directory)
  --permission-mode MODE      read-only, prompt (the default), allow or danger-full-access: how
                              tools that may change data are served (docs/approvals.md)
  --read-only                 the same as --permission-mode read-only
  --approve-scoped TOOL:SHA256
                              under prompt, run the one call of TOOL with that digest
                              (repeatable; `approval digest` computes it)
  --approvals FILE            approval presets from FILE (which must exist), not
                              PROJECT/.agentteams/approvals.json; followed while serving: a
                              revocation or new deny holds at the next call, a grant at restart
  --allow-tool PATTERN        serve only tools matching an allow rule (repeatable; globs * and ?)
  --deny-tool PATTERN         never serve tools matching PATTERN (repeatable; deny wins)
  --policy FILE               more rules from a JSON file {\"allow\": [...], \"deny\": [...]}
  --audit-log FILE            append a hash-chained record of every tool call to FILE
  --audit-full                keep argument and result values in the audit log (default: redacted)
  --bind ADDR                 HTTP address (default 127.0.0.1; any other needs a token)
  --port N                    HTTP port (default 7330)
  --auth-token-file F         require `Authorization: Bearer <token>`, token read from F
                              (or from the environment variable AGENTTEAMS_MCP_AUTH_TOKEN)
  --auth-config FILE          HTTP: be an OAuth 2.1 resource server: validate access tokens
                              (JWT or introspected) from the authorization servers and with
                              the scopes FILE names (docs/deploy.md, section OAuth)
  --stateless                 serve without sessions (each request stands alone)
  --session-key-file F        seal sessions into their ids with the key in F (hex, 32-64 bytes,
                              mode 600), so every replica holding it serves every session
                              (docs/deploy.md; make one: openssl rand -hex 32 > F)
  --previous-session-key-file F
                              also accept sessions sealed with this rotated-out key
  --replica-name NAME         HTTP: this replica's name, the first field of every SSE event id,
                              so a balancer can route a resuming GET (Last-Event-ID) to it
                              (1-32 of A-Z a-z 0-9 _ -; default: r and a random tag)
  --legacy-sse                HTTP: also serve the 2024-11-05 HTTP+SSE transport for old clients
                              (GET /sse opens a session's stream, POST /messages?sessionId=...)
  --allow-host NAME           also accept this host name in Host/Origin (repeatable)
  --allow-origin ORIGIN       also accept this exact Origin, e.g. https://app.example.com
  --max-connections N         HTTP: serve at most N connections at once (1 to 1024, the default);
                              each holds one worker thread; the next one gets 503
  --access-log                HTTP: one JSON line per request on stderr (time, method, path,
                              status, duration_ms, session digest, tool)
  --until-stdin-closes        HTTP: stop cleanly when stdin closes: take no new connections,
                              finish the calls in flight (up to 20 s), complete the audit run
  --git-memory-limit SIZE     address space each git process may use: 1G (the default), 512M,
                              a number of bytes (at least 64M), or none for no limit
  --lookup-from SIZE          recall: answer code partitions of at least SIZE (64M, the default)
                              through index build's lookup, reading only what each query touches;
                              0 for every partition, none to load each whole
  --compat reference          answer with the reference implementation's exact texts

HTTP: GET /healthz answers 200 \"ok\" for load-balancer checks (no token; it reveals nothing).
HTTP limits: 1024 connections (one thread each), 1024 sessions per process, request bodies 1 MiB,
heads 16 KiB; a head must arrive within 10 s, a body within 30 s; idle connections close after
60 s; sealed sessions last 12 h; gitread runs at most 4 git processes at once (16 more calls may
wait 15 s). docs/deploy.md sizes a deployment.

exit codes: 0 served until end of input; 1 I/O failure; 2 usage error, unknown server, unusable
root (gitread: not the top of a git work tree), permission mode, approvals, policy or audit log;
each command's help gives its own";

/// recall's threshold for answering through the lookup sidecar.
const LOOKUP_FROM_OPTION: &str = "--lookup-from";

/// The global `--help`, with a line for every server of `catalogue`.
fn usage(catalogue: Catalogue) -> String {
    let servers: Vec<String> = catalogue
        .entries()
        .iter()
        .map(|entry| format!("  {:<12} {}", entry.name, entry.summary))
        .collect();
    format!(
        "{USAGE_COMMANDS}\n\nservers (--serve-mcp NAME):\n{}\n\n{USAGE_OPTIONS}",
        servers.join("\n")
    )
}

const AUDIT_USAGE: &str = "\
usage: agentteams-mcp audit verify FILE [--ci]

  verify FILE   check the hash chains of FILE, an audit log --audit-log wrote: print each run's
                state, records and head hash, then the verdict (docs/audit.md)
  --ci          also fail on a run without run_completed (a server that did not stop cleanly)

exit codes: 0 intact; 1 tampered (with --ci: any problem, a run without run_completed too);
2 usage error, unreadable file or not an audit log";

/// The commands the first argument may name (`--serve-mcp NAME` apart), in the help's order.
const COMMANDS: &[&str] = &["index", "audit", "client", "trust", "approval"];

/// Runs the command line of this process with the servers of `catalogue`; the binary's `main`.
pub fn main(catalogue: Catalogue) -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some(gitread::EXEC_HELPER_FLAG) {
        return ExitCode::from(gitread::exec_helper());
    }
    // gitread starts git under its memory limit through this binary's helper mode (launch.rs).
    let exec_helper = std::env::current_exe().ok();
    let rest = || raw[1..].to_vec();
    let code = match raw.first().map(String::as_str) {
        Some("index") => index_cmd::run(rest(), exec_helper),
        Some("client") => client_cmd::run_client(rest()),
        Some("trust") => client_cmd::run_trust(rest()),
        Some("approval") => approval_cmd::run_approval(rest(), catalogue),
        Some("audit") => run_audit(&raw[1..]),
        _ => run(Args::new(raw), catalogue, exec_helper).unwrap_or_else(|e| {
            say(true, &usage_line(None, &e));
            2
        }),
    };
    ExitCode::from(code)
}

/// `agentteams-mcp audit ...`: the arguments after `audit`.
fn run_audit(raw: &[String]) -> u8 {
    let mut args = Args::new(raw.to_vec());
    if args.flag("--help") || args.flag("-h") {
        say(false, AUDIT_USAGE);
        return 0;
    }
    let ci = args.flag("--ci");
    let parsed = match args.positional().as_deref() {
        Some("verify") => args
            .positional()
            .ok_or_else(|| UsageError("audit verify needs a FILE".into())),
        Some(other) => Err(unknown_command(other, &["verify"], None)),
        None => Err(UsageError(
            "give an audit command: verify FILE [--ci]".into(),
        )),
    };
    match parsed.and_then(|file| args.finish().map(|()| file)) {
        Ok(file) => verify_audit_log(Path::new(&file), ci) as u8,
        Err(e) => {
            say(true, &usage_line(Some("audit"), &e));
            2
        }
    }
}

fn run(
    mut args: Args,
    catalogue: Catalogue,
    exec_helper: Option<PathBuf>,
) -> Result<u8, UsageError> {
    if args.flag("--help") || args.flag("-h") {
        say(false, &usage(catalogue));
        return Ok(0);
    }
    if args.flag("--version") || args.flag("-V") {
        say(
            false,
            &format!("agentteams-mcp {}", env!("CARGO_PKG_VERSION")),
        );
        return Ok(0);
    }
    if let Some(name) = args.value("--serve-mcp")? {
        let root = args.value_any(&["--root", "--project"])?;
        let options = ServeOptions {
            permission_mode: permission_mode(&mut args)?,
            approve_scoped: args.values("--approve-scoped")?,
            approvals_file: args.value("--approvals")?.map(PathBuf::from),
            allow_tools: args.values("--allow-tool")?,
            deny_tools: args.values("--deny-tool")?,
            policy_file: args.value("--policy")?.map(PathBuf::from),
            audit_log: args.value("--audit-log")?.map(PathBuf::from),
            audit_full: args.flag("--audit-full"),
            http_until_stdin_closes: args.flag("--until-stdin-closes"),
            settings: Settings {
                compat: cli::compat(&mut args)?,
                git: GitSettings {
                    memory_limit: match args.value(gitread::MEMORY_LIMIT_OPTION)? {
                        Some(size) => MemoryLimit::parse(&size).map_err(UsageError)?,
                        None => MemoryLimit::default(),
                    },
                    exec_helper,
                },
                lookup_from: match args.value(LOOKUP_FROM_OPTION)?.as_deref() {
                    None => None,
                    Some("none") => Some(u64::MAX),
                    Some(size) => Some(crate::size::parse(size).ok_or_else(|| {
                        UsageError(format!(
                            "{LOOKUP_FROM_OPTION} needs a size such as 64M, 0 or none; not {size:?}"
                        ))
                    })?),
                },
            },
            catalogue,
        };
        if options.audit_full && options.audit_log.is_none() {
            return Err(UsageError("--audit-full needs --audit-log FILE".into()));
        }
        let http = http_config(&mut args, options.policy_file.as_deref())?;
        if options.http_until_stdin_closes && http.is_none() {
            return Err(UsageError("--until-stdin-closes needs --http".into()));
        }
        finish(args, catalogue)?;
        if !catalogue.contains(&name) {
            // The one line the reference itself prints, in its words under --compat reference.
            let prefix = match options.settings.compat {
                Compat::Reference => "[serve-mcp] ",
                Compat::Product => PREFIX,
            };
            say(true, &format!("{prefix}{}", catalogue.unknown(&name)));
            return Ok(2);
        }
        let root = root.map_or_else(|| PathBuf::from("."), PathBuf::from);
        let code = match http {
            Some(config) => run_http_server(&name, &root, &options, config),
            None => run_server_with(&name, &root, &options),
        };
        return Ok(code as u8);
    }
    // Options of the serve command without --serve-mcp: say what is missing; a word that is no
    // command gets the one it may stand for; anything else is named.
    match args.first_left() {
        Some(first) if first.starts_with('-') && !OPTIONS.contains(&option_name(first)) => {
            Err(unrecognised(first, catalogue))
        }
        Some(first) if !first.starts_with('-') && catalogue.contains(first) => {
            Err(unrecognised(first, catalogue))
        }
        Some(first) if !first.starts_with('-') => {
            let mut choices = COMMANDS.to_vec();
            choices.push("--serve-mcp NAME");
            Err(unknown_command(
                first,
                COMMANDS,
                Some(&voice::one_of(&choices)),
            ))
        }
        _ => Err(UsageError("nothing to do: give --serve-mcp NAME".into())),
    }
}

/// `--permission-mode MODE`, or `--read-only` for `read-only`; a mode that needs a person the
/// MCP client cannot provide is refused here, before anything is served (exit 2).
fn permission_mode(args: &mut Args) -> Result<Option<PermissionMode>, UsageError> {
    let read_only = args.flag("--read-only");
    let mode = match args.value("--permission-mode")? {
        Some(name) => Some(PermissionMode::parse(&name).map_err(|e| UsageError(e.to_string()))?),
        None => None,
    };
    match (read_only, mode) {
        (true, Some(m)) if m != PermissionMode::ReadOnly => Err(UsageError(format!(
            "--read-only and --permission-mode {m} contradict each other; give one"
        ))),
        (true, _) => Ok(Some(PermissionMode::ReadOnly)),
        (false, mode) => Ok(mode),
    }
}

/// Every option the top-level command reads (each of [`COMMANDS`] has its own).
const OPTIONS: &[&str] = &[
    "--serve-mcp",
    "--root",
    "--project",
    "--read-only",
    "--permission-mode",
    "--approve-scoped",
    "--approvals",
    "--allow-tool",
    "--deny-tool",
    "--policy",
    "--audit-log",
    "--audit-full",
    "--http",
    "--bind",
    "--port",
    "--auth-token-file",
    "--auth-config",
    "--stateless",
    "--session-key-file",
    "--previous-session-key-file",
    "--replica-name",
    "--legacy-sse",
    "--allow-host",
    "--allow-origin",
    "--until-stdin-closes",
    "--max-connections",
    "--access-log",
    gitread::MEMORY_LIMIT_OPTION,
    "--help",
    "--version",
];

/// `--name` of `--name=value`.
fn option_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

/// Fails on the first argument left over, naming it.
fn finish(args: Args, catalogue: Catalogue) -> Result<(), UsageError> {
    match args.first_left() {
        Some(first) => Err(unrecognised(first, catalogue)),
        None => Ok(()),
    }
}

/// The usage error for an argument nothing reads, with the option or command it may stand for.
fn unrecognised(arg: &str, catalogue: Catalogue) -> UsageError {
    if arg.starts_with('-') {
        let hint = voice::closest(option_name(arg), OPTIONS)
            .map(|o| format!(" (did you mean {o}?)"))
            .unwrap_or_default();
        return UsageError(format!("unknown option {arg}{hint}"));
    }
    if catalogue.contains(arg) {
        return UsageError(format!(
            "unexpected argument {arg} (did you mean --serve-mcp {arg}?)"
        ));
    }
    UsageError(format!("unexpected argument {arg}"))
}

/// Refuses an `--allow-origin` that no browser's Origin header can ever equal: an origin is
/// `scheme://host[:port]`, with nothing after the authority.
fn check_origin(origin: &str) -> Result<(), UsageError> {
    let valid = origin.split_once("://").is_some_and(|(scheme, authority)| {
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !authority.is_empty()
            && !authority.contains(['/', '?', '#', '@', ' '])
    });
    match valid {
        true => Ok(()),
        false => Err(UsageError(format!(
            "--allow-origin needs a whole origin, scheme and host, such as https://app.example.com; {origin:?} can never match a browser's Origin header"
        ))),
    }
}

/// `--bind`'s address: an IP address, or a name the system resolves (`localhost`), its first
/// address.
fn bind_address(bind: &str) -> Result<std::net::IpAddr, UsageError> {
    use std::net::ToSocketAddrs;
    if let Ok(ip) = bind.parse() {
        return Ok(ip);
    }
    let resolved = (bind, 0).to_socket_addrs().ok().and_then(|mut a| a.next());
    resolved.map(|a| a.ip()).ok_or_else(|| {
        UsageError(format!(
            "--bind needs an IP address or a name this host resolves, not {bind:?}"
        ))
    })
}

/// The HTTP options as given, each read once, before any is checked against another.
struct HttpOptions {
    http: bool,
    bind: Option<String>,
    port: Option<String>,
    token_file: Option<String>,
    auth_config: Option<String>,
    stateless: bool,
    max_connections: Option<String>,
    access_log: bool,
    key_file: Option<String>,
    previous_key_file: Option<String>,
    replica_name: Option<String>,
    legacy_sse: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
}

impl HttpOptions {
    fn read(args: &mut Args) -> Result<HttpOptions, UsageError> {
        Ok(HttpOptions {
            http: args.flag("--http"),
            bind: args.value("--bind")?,
            port: args.value("--port")?,
            token_file: args.value("--auth-token-file")?,
            auth_config: args.value("--auth-config")?,
            stateless: args.flag("--stateless"),
            max_connections: args.value("--max-connections")?,
            access_log: args.flag("--access-log"),
            key_file: args.value("--session-key-file")?,
            previous_key_file: args.value("--previous-session-key-file")?,
            replica_name: args.value("--replica-name")?,
            legacy_sse: args.flag("--legacy-sse"),
            allowed_hosts: args.values("--allow-host")?,
            allowed_origins: args.values("--allow-origin")?,
        })
    }

    /// Whether any HTTP option besides `--http` was given.
    fn any_given(&self) -> bool {
        self.bind.is_some()
            || self.port.is_some()
            || self.token_file.is_some()
            || self.auth_config.is_some()
            || self.stateless
            || self.key_file.is_some()
            || self.max_connections.is_some()
            || self.access_log
            || self.previous_key_file.is_some()
            || self.replica_name.is_some()
            || self.legacy_sse
            || !self.allowed_hosts.is_empty()
            || !self.allowed_origins.is_empty()
    }

    /// Refuses the combinations that contradict each other or could never work.
    fn check_combinations(&self) -> Result<(), UsageError> {
        let refuse = |text: &str| Err(UsageError(text.into()));
        if self.auth_config.is_some()
            && (self.token_file.is_some() || std::env::var(TOKEN_ENV_VAR).is_ok())
        {
            return Err(UsageError(format!(
                "--auth-config makes the server check OAuth access tokens; --auth-token-file (or {TOKEN_ENV_VAR}) a static token: give one"
            )));
        }
        if self.auth_config.is_some() && self.legacy_sse {
            return refuse("--legacy-sse is not served in OAuth mode (--auth-config): its messages would escape the scope checks");
        }
        if self.stateless && self.legacy_sse {
            return refuse(
                "--legacy-sse keeps a session per stream; --stateless keeps none: give one",
            );
        }
        if self.stateless && self.key_file.is_some() {
            return refuse(
                "--stateless keeps no sessions; --session-key-file seals them: give one",
            );
        }
        if let Some(name) = self.replica_name.as_deref().filter(|n| !is_replica_name(n)) {
            return Err(UsageError(format!(
                "--replica-name needs 1 to {} of A-Z a-z 0-9 _ -, not {name:?}",
                limits::MAX_REPLICA_NAME_BYTES
            )));
        }
        if self.previous_key_file.is_some() && self.key_file.is_none() {
            return refuse(
                "--previous-session-key-file needs --session-key-file (the key that seals)",
            );
        }
        Ok(())
    }
}

/// The HTTP options when `--http` is given (`None`: serve stdio; HTTP options without `--http`
/// are a usage error). The token never comes from argv, which other local users can read.
fn http_config(
    args: &mut Args,
    policy_file: Option<&Path>,
) -> Result<Option<HttpConfig>, UsageError> {
    let options = HttpOptions::read(args)?;
    for origin in &options.allowed_origins {
        check_origin(origin)?;
    }
    if !options.http {
        return match options.any_given() {
            true => Err(UsageError("HTTP options need --http".into())),
            false => Ok(None),
        };
    }
    options.check_combinations()?;
    let read_key = |option: &str, file: Option<String>| match file {
        None => Ok(None),
        Some(file) => SessionKey::from_file(Path::new(&file))
            .map(Some)
            .map_err(|e| UsageError(format!("{option}: {e}"))),
    };
    let mut config = HttpConfig {
        session_key: read_key("--session-key-file", options.key_file)?,
        previous_session_key: read_key("--previous-session-key-file", options.previous_key_file)?,
        replica_name: options.replica_name,
        legacy_sse: options.legacy_sse,
        access_log: options.access_log,
        stateless: options.stateless,
        allowed_hosts: options.allowed_hosts,
        allowed_origins: options.allowed_origins,
        ..HttpConfig::default()
    };
    if let Some(bind) = options.bind {
        config.bind = bind_address(&bind)?;
    }
    config.port = match options.port {
        None => DEFAULT_PORT,
        Some(p) => p
            .parse()
            .map_err(|_| UsageError(format!("--port needs a number 0-65535, not {p:?}")))?,
    };
    if let Some(n) = options.max_connections {
        config.max_connections = n
            .parse()
            .ok()
            .filter(|n| (1..=limits::MAX_CONNECTIONS).contains(n))
            .ok_or_else(|| {
                UsageError(format!(
                    "--max-connections needs a number 1-{}, not {n:?}",
                    limits::MAX_CONNECTIONS
                ))
            })?;
    }
    config.auth_token = static_token(options.token_file)?;
    config.resource_server = resource_server(options.auth_config, policy_file)?;
    Ok(Some(config))
}

/// The static bearer token: from `--auth-token-file`, else from the environment, else none.
fn static_token(token_file: Option<String>) -> Result<Option<Token>, UsageError> {
    match (token_file, std::env::var(TOKEN_ENV_VAR)) {
        (Some(file), _) => Token::from_file(Path::new(&file)).map(Some).map_err(|e| {
            // A token it read and refused is named with its path already; a file it could
            // not open is not.
            let named = e.kind() == std::io::ErrorKind::InvalidData;
            let path = if named {
                String::new()
            } else {
                format!("{file}: ")
            };
            UsageError(format!("--auth-token-file: {path}{e}"))
        }),
        (None, Ok(text)) => Token::new(&text)
            .map(Some)
            .map_err(|e| UsageError(format!("{TOKEN_ENV_VAR}: {e}"))),
        (None, Err(_)) => Ok(None),
    }
}

/// The OAuth resource server `--auth-config` describes, with the scopes the policy file maps
/// added. The policy file may map tools, resources and prompts to scopes; only a resource server
/// checks them, so a policy asking for scopes without one is a mistake, said at start.
fn resource_server(
    auth_config: Option<String>,
    policy_file: Option<&Path>,
) -> Result<Option<Arc<ResourceServer>>, UsageError> {
    let policy_scopes = match policy_file {
        Some(file) => {
            let mut policy = agentteams_mcp::policy::Policy::new();
            policy
                .add_file(file)
                .map_err(|e| UsageError(format!("--policy: {e}")))?;
            policy.oauth_scopes().cloned()
        }
        None => None,
    };
    match (auth_config, policy_scopes) {
        (Some(file), policy_scopes) => {
            let mut parsed = AuthConfig::from_file(Path::new(&file))
                .map_err(|e| UsageError(format!("--auth-config {file}: {e}")))?;
            if let Some(scopes) = policy_scopes {
                let shown = policy_file.map_or_else(String::new, |p| p.display().to_string());
                let rules = agentteams_mcp::auth::config::policy_scopes(&scopes)
                    .map_err(|e| UsageError(format!("policy file {shown}: {e}")))?;
                parsed
                    .scopes
                    .extend(rules)
                    .map_err(|e| UsageError(format!("policy file {shown}: {e}")))?;
            }
            Ok(Some(Arc::new(ResourceServer::new(parsed))))
        }
        (None, Some(_)) => Err(UsageError(
            "the policy file maps scopes, which only an OAuth resource server checks: add --auth-config FILE, or remove \"scopes\" from the policy file".into(),
        )),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_has_a_line_for_every_server_it_serves() {
        let help = usage(Catalogue::PRODUCT);
        for entry in Catalogue::PRODUCT.entries() {
            assert!(help.contains(&format!("  {:<12} {}", entry.name, entry.summary)));
        }
        assert!(!help.contains("conformance"));
    }

    /// `--help` states the limits; this keeps its numbers those of the constants.
    #[test]
    fn the_help_names_the_limits_as_they_are() {
        let usage = usage(Catalogue::PRODUCT);
        use agentteams_mcp::http::limits::*;
        let stated = [
            format!("{MAX_CONNECTIONS} connections"),
            format!("{MAX_SESSIONS} sessions"),
            format!("bodies {} MiB", MAX_BODY_BYTES >> 20),
            format!("heads {} KiB", MAX_HEAD_BYTES >> 10),
            format!(
                "within {} s, a body within {} s",
                HEAD_TIMEOUT.as_secs(),
                BODY_TIMEOUT.as_secs()
            ),
            format!("after\n{} s", IDLE_TIMEOUT.as_secs()),
            format!("last {} h", SEALED_SESSION_LIFETIME.as_secs() / 3600),
            format!("at most {} git processes", gitread::MAX_CONCURRENT_GIT),
            format!(
                "({} more calls may\nwait {} s)",
                gitread::MAX_QUEUED_GIT,
                gitread::QUEUE_WAIT.as_secs()
            ),
            format!("(up to {} s)", SHUTDOWN_DRAIN.as_secs()),
            format!("(1 to {MAX_CONNECTIONS}, the default)"),
        ];
        for text in stated {
            assert!(usage.contains(&text), "--help lacks {text:?}");
        }
    }

    #[test]
    fn origins_need_a_scheme_and_nothing_after_the_host() {
        for good in [
            "https://app.example.com",
            "http://localhost:3000",
            "https://app.example.com/",
            "vscode-webview://abc",
        ] {
            assert_eq!(check_origin(good), Ok(()), "{good}");
        }
        for bad in [
            "app.example.com",
            "https://",
            "https://app.example.com/path",
            "null",
            "*",
            "://x",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }
}
