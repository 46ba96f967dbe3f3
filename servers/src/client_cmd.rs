//! The `client` and `trust` commands: probe an MCP server by hand (list its tools, call one), and
//! manage the project's trust policy for the servers it connects to.
//!
//! Exit codes (both commands): 0 ok; 1 tool error (an `isError` result, a JSON-RPC error, a tool
//! refused by the trust policy, audit findings); 2 usage error or unusable policy file; 3 the
//! server requires authorization; 4 the server could not be reached or misbehaved.

use crate::cli::{unknown_command, Args, UsageError};
use agentteams_mcp::client::oauth::store::Store;
use agentteams_mcp::client::oauth::{
    Grant, IdentityAssertion, OAuthConfig, Redirect, Registration,
};
use agentteams_mcp::client::tls::TlsConfig;
use agentteams_mcp::client::trust::{self, Level, Policy};
use agentteams_mcp::client::{
    Answers, Client, ClientError, Completion, EraChoice, Event, Options, ServerInfo, ToolInfo,
    ToolResult,
};
use agentteams_mcp::json::{self, obj, Map, Value};
use agentteams_mcp::sanitize::{sanitize, sanitize_value};
use agentteams_mcp::voice::{counted, usage_line, PREFIX};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const CLIENT_USAGE: &str = "\
usage:
  agentteams-mcp client --url URL [OPTIONS] COMMAND
  agentteams-mcp client [OPTIONS] COMMAND -- SERVER_COMMAND [ARGS...]

commands:
  info      connect and show the server's name, protocol revision and capabilities
  tools     list the server's tools (and what the trust policy lets through)
  call TOOL [--arg K=V]... [--json ARGS]
            call TOOL; --arg K=V sets one argument (V is read as the tool's schema types it:
            text for string parameters, JSON otherwise), --json '{...}' gives all arguments
  resources list the server's resources and resource templates
  read URI  read resource URI: text as it is, binary contents as their type and size
  prompts   list the server's prompts and their arguments (* = required)
  prompt NAME [--arg K=V]...
            get prompt NAME with its arguments (text values) and print its messages
  complete prompt NAME ARG [PREFIX] [--arg K=V]...
  complete resource TEMPLATE VAR [PREFIX] [--arg K=V]...
            ask the server to complete argument ARG of prompt NAME, or variable VAR of
            resource template TEMPLATE, from PREFIX (default empty); --arg gives the values
            already chosen for the other arguments (the request's context)
  login     log in to the server (--url) with OAuth and keep the tokens in the token store
  logout    forget the stored login for the server (--url)

options:
  --json                    machine output: one JSON object on stdout
  --era auto|legacy|modern  protocol era (default auto: probe server/discover, else initialize)
  --timeout SECS            time allowed for each call (default 60)
  --connect-timeout SECS    time allowed to connect over HTTP, TLS handshake included (default 10)
  --token-file PATH         send the file's content as a bearer token (HTTP)
  --token-env VAR           send the variable's value as a bearer token (HTTP)
  --max-response-bytes N    cap on one message from the server (default 4194304)
  --ca-file PATH            https: trust only the CAs in this PEM file (default: the system's
                            trust store); certificates are always verified
  --tls-helper PATH         https: the openssl program to run (an absolute path; default
                            $AGENTTEAMS_TLS_HELPER, else /usr/bin/openssl or /usr/local/bin/openssl)
  --log-level LEVEL         ask the server for log messages at LEVEL and above (printed to stderr)
  --project DIR             the project whose .agentteams/mcp-trust.json applies (default: .)
  --answer K=V              answer the server's form elicitations: accept, with field K set to V
                            (read as the field's type) and the schema's defaults for the rest
  --answer-defaults         answer form elicitations with the schema's defaults alone
  --client-root DIR         offer DIR as a root (roots/list); repeatable

OAuth (HTTP; any of these turns it on; see docs/client.md, \"Logging in\"):
  --oauth                   log in when the server asks (401), use and refresh the stored login
  --login-mode browser|headless
                            browser: print the authorization URL and wait for the redirect on
                            127.0.0.1 (default on a terminal); headless: take the code from the
                            authorization server's immediate redirect (default otherwise)
  --grant authorization-code|client-credentials|id-jag
                            how the first token is obtained (default authorization-code; id-jag:
                            an identity provider's ID token from --client-file, SEP-990)
  --client-id ID            a client registered at the authorization server
  --client-secret-env VAR / --client-secret-file PATH   its secret
  --client-key-file PATH    its ES256 private key (PEM) for private_key_jwt
  --client-file PATH        JSON {\"client_id\", \"client_secret\"?, \"private_key_pem\"?, ...}
                            (docs/client.md); other members are ignored
  --client-metadata-url URL this client's metadata document (its client id where supported)
  --token-store PATH        the token store (default $AGENTTEAMS_MCP_TOKEN_STORE, else
                            $XDG_CONFIG_HOME or ~/.config, agentteams-mcp/tokens.json)
  --login-timeout SECS      how long a browser login may take (default 300)

A server started with `-- SERVER_COMMAND` is spoken to over its stdin and stdout, then its stdin is
closed (and it is killed if it has not exited 2 s later); what it writes to stderr is relayed to
ours a line at a time, escaped like everything else it sends (lines cut at 16 KiB). Only http://
URLs are supported.

exit codes: 0 ok; 1 tool or server error (an isError result, a JSON-RPC error such as an
unknown resource or prompt) or refused by the trust policy; 2 usage; 3 authorization required;
4 connection failure (unreachable, timeout, malformed or oversized reply)";

/// Largest `--token-file` read (a bearer token, however long an OAuth server makes it, is far
/// smaller; a file linked to `/dev/zero` stops here).
const MAX_TOKEN_FILE_BYTES: usize = 64 * 1024;

pub const TRUST_USAGE: &str = "\
usage:
  agentteams-mcp trust list [--json]
  agentteams-mcp trust inspect SERVER [client options]
  agentteams-mcp trust allow SERVER [--level trusted|verified] [--tool NAME]...
  agentteams-mcp trust deny SERVER [--tool NAME]...
  agentteams-mcp trust revoke SERVER [--tool NAME]...
  agentteams-mcp trust audit

SERVER is --url URL, --server KEY (as `trust list` shows it) or, last, -- COMMAND [ARGS...].
Every subcommand takes --project DIR (default: .); the policy is DIR/.agentteams/mcp-trust.json.

  allow   no --tool: the server becomes trusted (all tools); with --tool: the tools join its
          allowlist and an untrusted server becomes verified (only allowlisted tools)
  deny    no --tool: the server becomes untrusted (tools with sensitive names refused); with
          --tool: the tools are refused whatever the level
  revoke  no --tool: forget the server (untrusted default); with --tool: drop the tools from
          both lists
  inspect connect, list the server's tools and show which the policy lets through
  audit   report risky entries (trusted servers, sensitive allowlisted tools); exit 1 if any

exit codes: 0 ok; 1 audit findings or nothing to revoke; 2 usage or unusable policy file;
3 authorization required; 4 connection failure";

/// Like `println!`, but a reader that went away (`| head`) ends nothing: output is best effort,
/// the exit code still says how the command went. Most of what these commands print was chosen by
/// a server or a policy file (names, descriptions, instructions, results, error texts), so every
/// line passes through the suite's sanitiser: nothing in it can drive the terminal or hide text.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stdout().lock(), "{}", sanitize(&line));
    }};
}

/// `out!` for stderr (diagnostics, server notifications, errors quoting the server).
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", sanitize(&line));
    }};
}

/// The compact JSON of `value` with every string and key sanitised first: escaping after writing
/// would put `\u{...}` inside JSON strings, which is not JSON.
fn machine_json(mut value: Value) -> String {
    sanitize_value(&mut value);
    json::to_string(&value)
}

/// What the command line asked for, or the exit code to stop with.
type Outcome<T> = Result<T, u8>;

const EXIT_TOOL_ERROR: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_AUTH: u8 = 3;
const EXIT_CONNECTION: u8 = 4;

/// How a client error ends the command.
pub fn exit_code(e: &ClientError) -> u8 {
    match e {
        ClientError::Tool { .. } | ClientError::Rpc { .. } => EXIT_TOOL_ERROR,
        ClientError::AuthRequired { .. } | ClientError::OAuth(_) => EXIT_AUTH,
        ClientError::Unsupported(_) => EXIT_USAGE,
        ClientError::Connect(_)
        | ClientError::Timeout { .. }
        | ClientError::Closed(_)
        | ClientError::Protocol(_)
        | ClientError::Http { .. }
        | ClientError::SessionExpired => EXIT_CONNECTION,
    }
}

/// The server to talk to.
enum Target {
    Url(String),
    Command(Vec<String>),
}

impl Target {
    fn key(&self) -> Result<String, UsageError> {
        match self {
            Target::Url(u) => trust::server_key_for_url(u).map_err(|e| UsageError(e.0)),
            Target::Command(argv) => Ok(trust::server_key_for_command(argv)),
        }
    }

    fn connect(&self, options: Options) -> Result<Client, ClientError> {
        match self {
            Target::Url(u) => Client::connect_http(u, options),
            Target::Command(argv) => Client::spawn(argv, options),
        }
    }
}

fn target(args: &mut Args) -> Result<Target, UsageError> {
    let url = args.value("--url")?;
    let command = args.trailing();
    match (url, command.is_empty()) {
        (Some(u), true) => Ok(Target::Url(u)),
        (None, false) => Ok(Target::Command(command)),
        (Some(_), false) => Err(UsageError(
            "give either --url URL or -- COMMAND, not both".into(),
        )),
        (None, true) => Err(UsageError(
            "which server? give --url URL or, last, -- COMMAND [ARGS...]".into(),
        )),
    }
}

fn seconds(args: &mut Args, name: &str, default: Duration) -> Result<Duration, UsageError> {
    match args.value(name)? {
        None => Ok(default),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                UsageError(format!(
                    "{name} must be a number of seconds from 0 to 86400, not {v:?}"
                ))
            }),
    }
}

/// Reads the connection options every command that connects shares.
fn options(args: &mut Args) -> Result<Options, UsageError> {
    let mut o = Options::default();
    if let Some(era) = args.value("--era")? {
        o.era = EraChoice::parse(&era).ok_or_else(|| {
            UsageError(format!("--era must be auto, legacy or modern, not {era:?}"))
        })?;
    }
    o.call_timeout = seconds(args, "--timeout", o.call_timeout)?;
    o.connect_timeout = seconds(args, "--connect-timeout", o.connect_timeout)?;
    if let Some(n) = args.value("--max-response-bytes")? {
        o.max_response_bytes = n
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1024)
            .ok_or_else(|| {
                UsageError(format!(
                    "--max-response-bytes must be an integer of at least 1024, not {n:?}"
                ))
            })?;
    }
    o.log_level = args.value("--log-level")?;
    if let Some(level) = &o.log_level {
        if agentteams_mcp::server::LogLevel::parse(level).is_none() {
            return Err(UsageError(format!(
                "--log-level must be one of debug, info, notice, warning, error, critical, alert, emergency, not {level:?}"
            )));
        }
    }
    let file = args.value("--token-file")?;
    let env = args.value("--token-env")?;
    o.bearer_token = match (file, env) {
        (Some(_), Some(_)) => {
            return Err(UsageError(
                "give --token-file or --token-env, not both".into(),
            ))
        }
        (Some(path), None) => {
            let text = agentteams_mcp::http::guard::read_token_text(
                Path::new(&path),
                MAX_TOKEN_FILE_BYTES,
            )
            .map_err(|e| UsageError(format!("--token-file {path}: {e}")))?;
            Some(text.trim().to_owned())
        }
        (None, Some(var)) => Some(
            std::env::var(&var)
                .map_err(|_| UsageError(format!("--token-env {var}: the variable is not set")))?
                .trim()
                .to_owned(),
        ),
        (None, None) => None,
    };
    o.answers = answers(args)?;
    o.oauth = oauth_options(args)?;
    o.tls = tls_options(args)?;
    Ok(o)
}

/// The environment variable naming the TLS helper when `--tls-helper` is not given.
pub const TLS_HELPER_ENV: &str = "AGENTTEAMS_TLS_HELPER";

/// `--ca-file` (made absolute: the helper runs in `/`) and `--tls-helper` (absolute, or
/// [`TLS_HELPER_ENV`]).
fn tls_options(args: &mut Args) -> Result<TlsConfig, UsageError> {
    let mut tls = TlsConfig::default();
    if let Some(path) = args.value("--ca-file")? {
        let full = std::fs::canonicalize(&path)
            .map_err(|e| UsageError(format!("--ca-file {path}: {e}")))?;
        if !full.is_file() {
            return Err(UsageError(format!("--ca-file {path}: not a file")));
        }
        tls.ca_file = Some(full);
    }
    let helper = match args.value("--tls-helper")? {
        Some(path) => Some(("--tls-helper", path)),
        None => std::env::var(TLS_HELPER_ENV)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| (TLS_HELPER_ENV, v)),
    };
    if let Some((from, path)) = helper {
        if !Path::new(&path).is_absolute() {
            return Err(UsageError(format!(
                "{from} must be an absolute path (the helper is never looked up in PATH), not {path:?}"
            )));
        }
        tls.helper = Some(PathBuf::from(path));
    }
    Ok(tls)
}

/// A secret given by file or by environment variable (never on the command line, where other
/// users can read it).
fn secret(args: &mut Args, file: &str, env: &str) -> Result<Option<String>, UsageError> {
    match (args.value(file)?, args.value(env)?) {
        (Some(_), Some(_)) => Err(UsageError(format!("give {file} or {env}, not both"))),
        (Some(path), None) => {
            agentteams_mcp::http::guard::read_token_text(Path::new(&path), MAX_TOKEN_FILE_BYTES)
                .map(|t| Some(t.trim().to_owned()))
                .map_err(|e| UsageError(format!("{file} {path}: {e}")))
        }
        (None, Some(var)) => std::env::var(&var)
            .map(|v| Some(v.trim().to_owned()))
            .map_err(|_| UsageError(format!("{env} {var}: the variable is not set"))),
        (None, None) => Ok(None),
    }
}

/// `--client-file PATH`: a JSON object with `client_id` and, optionally, `client_secret`, and
/// for `--grant id-jag` the identity provider's `idp_token_endpoint`, `idp_client_id` and the
/// user's `idp_id_token` (the shape a provisioning system hands out; members this client does
/// not use are ignored).
fn client_file(path: &str) -> Result<(Registration, Option<IdentityAssertion>), UsageError> {
    let bad = |why: String| UsageError(format!("--client-file {path}: {why}"));
    let text = agentteams_mcp::http::guard::read_token_text(Path::new(path), MAX_TOKEN_FILE_BYTES)
        .map_err(|e| bad(e.to_string()))?;
    let doc = json::parse(text.as_bytes()).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let field = |k: &str| match doc.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.to_string())),
        Some(_) => Err(bad(format!("{k} must be a non-empty string"))),
    };
    if let Some(alg) = field("signing_algorithm")?.filter(|a| a != "ES256") {
        return Err(bad(format!(
            "signing_algorithm {alg}: only ES256 is supported"
        )));
    }
    let registration = Registration {
        client_id: field("client_id")?.ok_or_else(|| bad("no client_id".into()))?,
        client_secret: field("client_secret")?,
        private_key_pem: field("private_key_pem")?,
    };
    let identity = match (
        field("idp_token_endpoint")?,
        field("idp_client_id")?,
        field("idp_id_token")?,
    ) {
        (Some(token_endpoint), Some(client_id), Some(id_token)) => Some(IdentityAssertion {
            token_endpoint,
            client_id,
            id_token,
        }),
        (None, None, None) => None,
        _ => {
            return Err(bad(
                "idp_token_endpoint, idp_client_id and idp_id_token go together".into(),
            ))
        }
    };
    Ok((registration, identity))
}

/// Starts `$BROWSER URL` when the variable names a program (the URL as one argument, no
/// shell); without it, or when it cannot start, the printed URL is the way.
fn open_browser(url: &str) {
    let Some(browser) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) else {
        return;
    };
    let started = std::process::Command::new(&browser)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        err!(
            "{PREFIX}client: cannot start $BROWSER ({}): {e}",
            browser.to_string_lossy()
        );
    }
}

/// The OAuth options; `None` when none is given.
fn oauth_options(args: &mut Args) -> Result<Option<OAuthConfig>, UsageError> {
    let mut on = args.flag("--oauth");
    let mut config = OAuthConfig::default();
    let mut seen = |v: Option<String>| {
        on |= v.is_some();
        v
    };
    let mode = seen(args.value("--login-mode")?);
    let grant = seen(args.value("--grant")?);
    let client_id = seen(args.value("--client-id")?);
    let secret = seen(secret(args, "--client-secret-file", "--client-secret-env")?);
    let file = seen(args.value("--client-file")?);
    let key_file = seen(args.value("--client-key-file")?);
    config.client_metadata_url = seen(args.value("--client-metadata-url")?);
    let store = seen(args.value("--token-store")?);
    let timeout = seen(args.value("--login-timeout")?);
    if !on {
        return Ok(None);
    }
    config.redirect = match mode.as_deref() {
        Some("browser") => Redirect::Loopback,
        Some("headless") => Redirect::FollowImmediate,
        None if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            Redirect::Loopback
        }
        None => Redirect::FollowImmediate,
        Some(other) => {
            return Err(UsageError(format!(
                "--login-mode must be browser or headless, not {other:?}"
            )))
        }
    };
    config.grant = match grant.as_deref() {
        None | Some("authorization-code") => Grant::AuthorizationCode,
        Some("client-credentials") => Grant::ClientCredentials,
        Some("id-jag") => Grant::IdJag,
        Some(other) => {
            return Err(UsageError(format!(
                "--grant must be authorization-code, client-credentials or id-jag, not {other:?}"
            )))
        }
    };
    config.registration = match (client_id, file) {
        (Some(_), Some(_)) => {
            return Err(UsageError(
                "give --client-id or --client-file, not both".into(),
            ))
        }
        (Some(client_id), None) => Some(Registration {
            client_id,
            client_secret: None,
            private_key_pem: None,
        }),
        (None, Some(path)) => {
            let (registration, identity) = client_file(&path)?;
            config.identity = identity;
            Some(registration)
        }
        (None, None) if secret.is_some() => {
            return Err(UsageError("a client secret needs --client-id".into()))
        }
        (None, None) => None,
    };
    if let (Some(reg), Some(s)) = (&mut config.registration, secret) {
        reg.client_secret = Some(s);
    }
    if let Some(path) = key_file {
        let reg = config
            .registration
            .as_mut()
            .ok_or_else(|| UsageError("--client-key-file needs --client-id".into()))?;
        let pem =
            agentteams_mcp::http::guard::read_token_text(Path::new(&path), MAX_TOKEN_FILE_BYTES)
                .map_err(|e| UsageError(format!("--client-key-file {path}: {e}")))?;
        reg.private_key_pem = Some(pem);
    }
    if let Some(pem) = config
        .registration
        .as_ref()
        .and_then(|r| r.private_key_pem.as_deref())
    {
        agentteams_mcp::crypto::private_key::from_pem(pem)
            .map_err(|e| UsageError(format!("the client's private key: {e}")))?;
    }
    if let Some(url) = &config.client_metadata_url {
        if !url.starts_with("https://")
            || agentteams_mcp::http1::url::Url::parse_identifier(url).is_err()
        {
            return Err(UsageError(format!(
                "--client-metadata-url must be an https URL, not {url:?}"
            )));
        }
    }
    config.store = match store {
        Some(path) => Some(Store::at(path)),
        None => Store::default_path().map(Store::at),
    };
    if let Some(t) = timeout {
        let mut one = Args::new(vec!["--login-timeout".into(), t]);
        config.login_timeout = seconds(&mut one, "--login-timeout", config.login_timeout)?;
    }
    config.show_url = Arc::new(|url: &str| {
        err!("{PREFIX}client: open this URL in a browser to log in (this command waits for the redirect):\n{url}");
        open_browser(url);
    });
    Ok(Some(config))
}

/// `--answer K=V`, `--answer-defaults` and `--client-root DIR`: how the server's requests are
/// answered (and so which client capabilities are declared).
fn answers(args: &mut Args) -> Result<Answers, UsageError> {
    let given = args.values("--answer")?;
    let defaults = args.flag("--answer-defaults");
    let mut answers = Answers::default();
    if defaults || !given.is_empty() {
        answers.elicitation = Some(key_values("--answer", given)?);
    }
    for dir in args.values("--client-root")? {
        let path = std::fs::canonicalize(&dir)
            .map_err(|e| UsageError(format!("--client-root {dir}: {e}")))?;
        answers.roots.push(file_uri(&path));
    }
    Ok(answers)
}

/// `path` (absolute) as a `file://` URI, every byte outside RFC 3986's unreserved set and `/`
/// percent-encoded.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

fn project(args: &mut Args) -> Result<PathBuf, UsageError> {
    Ok(args
        .value_any(&["--project", "--root"])?
        .map_or_else(|| PathBuf::from("."), PathBuf::from))
}

fn load_policy(root: &std::path::Path) -> Outcome<Policy> {
    Policy::load(root).map_err(|e| {
        err!("{PREFIX}trust policy: {e}");
        EXIT_USAGE
    })
}

/// `--json ARGS` and the `--json` output flag share a spelling: a `--json` followed by a JSON
/// object (or written `--json={...}`) carries the arguments and becomes `--arguments-json`.
fn split_json_arguments(argv: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut iter = argv.into_iter().peekable();
    let mut after_dashes = false;
    while let Some(a) = iter.next() {
        if after_dashes {
            out.push(a);
            continue;
        }
        if a == "--" {
            after_dashes = true;
        } else if a == "--json" && iter.peek().is_some_and(|n| n.trim_start().starts_with('{')) {
            out.push("--arguments-json".into());
            continue;
        } else if let Some(v) = a.strip_prefix("--json=") {
            out.push("--arguments-json".into());
            out.push(v.to_owned());
            continue;
        }
        out.push(a);
    }
    out
}

/// A usage error of `agentteams-mcp <command>`: one line and where the help is.
fn usage(e: UsageError, command: &str) -> u8 {
    err!("{}", usage_line(Some(command), &e));
    EXIT_USAGE
}

fn report(e: &ClientError, json_out: bool) -> u8 {
    if json_out {
        let mut err = Map::new();
        err.insert("kind", Value::from(e.kind()));
        err.insert("message", Value::from(e.to_string()));
        if let ClientError::Rpc { error, .. } = e {
            err.insert("code", Value::from(error.code));
        }
        err!("{}", machine_json(obj([("error", Value::Object(err))])));
    } else {
        err!("{PREFIX}client: {e}");
    }
    exit_code(e)
}

/// Prints a server notification on stderr.
fn show_event(event: &Event) {
    match event {
        Event::Progress {
            progress,
            total,
            message,
        } => {
            let total = total.map_or(String::new(), |t| format!("/{t}"));
            let message = message
                .as_deref()
                .map_or(String::new(), |m| format!(" {m}"));
            err!("progress: {progress}{total}{message}");
        }
        Event::Log {
            level,
            logger,
            data,
        } => {
            let logger = logger
                .as_deref()
                .map_or(String::new(), |l| format!(" {l}:"));
            let text = data
                .as_str()
                .map_or_else(|| json::to_string(data), str::to_owned);
            err!("log [{level}]{logger} {text}");
        }
        Event::Other { method, params } => err!("{method} {}", json::to_string(params)),
    }
}

/// `agentteams-mcp client ...`: the arguments after `client`.
pub fn run_client(argv: Vec<String>) -> u8 {
    let before_command = argv.iter().take_while(|a| *a != "--");
    if argv.first().is_some_and(|a| a == "help")
        || before_command.clone().any(|a| a == "--help" || a == "-h")
    {
        out!("{CLIENT_USAGE}");
        return 0;
    }
    let mut args = Args::new(split_json_arguments(argv));
    match client_command(&mut args) {
        Ok(code) | Err(code) => code,
    }
}

/// What `agentteams-mcp client` was asked to do.
enum Verb {
    Info,
    Login,
    Logout,
    Tools,
    Call {
        tool: String,
        arguments: Map,
        pairs: Vec<(String, String)>,
    },
    Resources,
    Read {
        uri: String,
    },
    Prompts,
    Prompt {
        name: String,
        arguments: Vec<(String, String)>,
    },
    Complete {
        reference: Value,
        argument: String,
        prefix: String,
        context: Vec<(String, String)>,
    },
}

const VERBS: &str =
    "info, tools, call TOOL, resources, read URI, prompts, prompt NAME, complete, login or logout";

/// The words of [`VERBS`], for a mistyped one's hint.
const VERB_NAMES: [&str; 10] = [
    "info",
    "tools",
    "call",
    "resources",
    "read",
    "prompts",
    "prompt",
    "complete",
    "login",
    "logout",
];

/// `KEY=VALUE` pairs given to `option`, split at the first `=`.
fn key_values(option: &str, given: Vec<String>) -> Result<Vec<(String, String)>, UsageError> {
    given
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) => Ok((k.to_owned(), v.to_owned())),
            None => Err(UsageError(format!("{option} {pair:?} must be KEY=VALUE"))),
        })
        .collect()
}

/// `--json ARGS`: a JSON object.
fn json_arguments(text: Option<String>) -> Result<Map, UsageError> {
    match text.map(|t| json::parse(t.as_bytes())) {
        None => Ok(Map::new()),
        Some(Ok(Value::Object(m))) => Ok(m),
        Some(Ok(other)) => Err(UsageError(format!(
            "--json ARGS must be a JSON object, not {}",
            other.type_name()
        ))),
        Some(Err(e)) => Err(UsageError(format!("--json ARGS is not valid JSON: {e}"))),
    }
}

/// The verb and its operands, once the options are consumed.
fn verb(
    args: &mut Args,
    pairs: Vec<String>,
    json_args: Option<String>,
) -> Result<Verb, UsageError> {
    let name = args
        .positional()
        .ok_or_else(|| UsageError(format!("give {VERBS}")))?;
    let mut operand = |what: &str| {
        args.positional()
            .ok_or_else(|| UsageError(format!("{name} needs {what}")))
    };
    let takes_args = matches!(name.as_str(), "call" | "prompt" | "complete");
    if !takes_args && !pairs.is_empty() {
        return Err(UsageError(format!(
            "--arg goes with call, prompt and complete, not {name}"
        )));
    }
    if name != "call" && json_args.is_some() {
        return Err(UsageError(format!(
            "--json ARGS goes with call, not {name}"
        )));
    }
    Ok(match name.as_str() {
        "info" => Verb::Info,
        "login" => Verb::Login,
        "logout" => Verb::Logout,
        "tools" => Verb::Tools,
        "resources" => Verb::Resources,
        "prompts" => Verb::Prompts,
        "call" => Verb::Call {
            tool: operand("the tool's name")?,
            arguments: json_arguments(json_args)?,
            pairs: key_values("--arg", pairs)?,
        },
        "read" => Verb::Read {
            uri: operand("the resource's URI")?,
        },
        "prompt" => Verb::Prompt {
            name: operand("the prompt's name")?,
            arguments: key_values("--arg", pairs)?,
        },
        "complete" => {
            let kind = operand("prompt NAME or resource TEMPLATE")?;
            let reference = match kind.as_str() {
                "prompt" => obj([
                    ("type", Value::from("ref/prompt")),
                    ("name", Value::from(operand("the prompt's name")?)),
                ]),
                "resource" => obj([
                    ("type", Value::from("ref/resource")),
                    ("uri", Value::from(operand("the resource template")?)),
                ]),
                other => {
                    return Err(UsageError(format!(
                        "complete {other:?}: give complete prompt NAME ARG [PREFIX] or complete resource TEMPLATE VAR [PREFIX]"
                    )))
                }
            };
            Verb::Complete {
                reference,
                argument: operand("the argument (or template variable) to complete")?,
                prefix: args.positional().unwrap_or_default(),
                context: key_values("--arg", pairs)?,
            }
        }
        other => return Err(unknown_command(other, &VERB_NAMES, Some(VERBS))),
    })
}

fn client_command(args: &mut Args) -> Outcome<u8> {
    let parsed = (|| {
        let json_out = args.flag("--json");
        let options = options(args)?;
        let root = project(args)?;
        let pairs = args.values("--arg")?;
        let json_args = args.value("--arguments-json")?;
        let target = target(args);
        // Every known option is consumed by now: an option left over is the first mistake.
        if let Some(unknown) = args.first_left().filter(|a| a.starts_with('-')) {
            return Err(UsageError(format!("unknown option {unknown}")));
        }
        let target = target?;
        let verb = verb(args, pairs, json_args)?;
        let rest = std::mem::replace(args, Args::new(Vec::new()));
        rest.finish()?;
        Ok((json_out, target, options, root, verb))
    })();
    let (json_out, target, options, root, verb) = parsed.map_err(|e| usage(e, "client"))?;
    if let (Target::Command(_), Some(_)) = (&target, &options.oauth) {
        return Err(usage(
            UsageError("OAuth options go with --url (a stdio server needs no login)".into()),
            "client",
        ));
    }
    let key = target.key().map_err(|e| usage(e, "client"))?;
    let policy = load_policy(&root)?;
    if let Verb::Call { tool, .. } = &verb {
        let decision = policy.decide(&key, tool);
        if !decision.allowed {
            err!(
                "{PREFIX}client: tool {tool} of {key} is refused by the trust policy ({}); see `agentteams-mcp trust`",
                decision.reason
            );
            return Err(EXIT_TOOL_ERROR);
        }
    }
    if matches!(verb, Verb::Login | Verb::Logout) {
        return login_or_logout(&verb, &target, options, json_out);
    }
    let mut client = target.connect(options).map_err(|e| report(&e, json_out))?;
    let outcome = match verb {
        Verb::Login | Verb::Logout => Ok(0),
        Verb::Info => {
            print_info(client.server(), json_out);
            Ok(0)
        }
        Verb::Tools => client
            .list_tools()
            .map(|tools| print_tools(&tools, &policy, &key, json_out)),
        Verb::Call {
            tool,
            arguments,
            pairs,
        } => call_tool(&mut client, &tool, arguments, pairs, json_out),
        Verb::Resources => list_resources(&mut client, json_out),
        Verb::Read { uri } => client
            .read_resource(&uri)
            .map(|contents| print_read(&contents, json_out)),
        Verb::Prompts => list_prompts(&mut client, json_out),
        Verb::Prompt { name, arguments } => client
            .get_prompt(&name, &arguments)
            .map(|result| print_prompt(&result, json_out)),
        Verb::Complete {
            reference,
            argument,
            prefix,
            context,
        } => client
            .complete_in(reference, &argument, &prefix, &context)
            .map(|c| print_completion(&c, json_out)),
    };
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            if let (ClientError::Tool { result, .. }, true) = (&e, json_out) {
                out!("{}", machine_json(result.clone()));
            }
            report(&e, json_out)
        }
    };
    if let Err(e) = client.close() {
        err!("{PREFIX}client: closing: {e}");
    }
    Ok(code)
}

/// `client login` (a fresh login: the stored one is forgotten first, then the handshake makes
/// the server ask) and `client logout` (the stored login is deleted).
fn login_or_logout(
    verb: &Verb,
    target: &Target,
    mut options: Options,
    json_out: bool,
) -> Outcome<u8> {
    let Target::Url(url) = target else {
        return Err(usage(
            UsageError("login and logout need --url URL".into()),
            "client",
        ));
    };
    if options.oauth.is_none() {
        // login and logout are OAuth whether or not an OAuth option was given: the defaults
        // (the default token store among them) as `--oauth` alone sets them.
        let defaults = oauth_options(&mut Args::new(vec!["--oauth".to_owned()]));
        options.oauth = defaults.map_err(|e| usage(e, "client"))?;
    }
    let config = options.oauth.get_or_insert_with(OAuthConfig::default);
    let Some(store) = config.store.clone() else {
        return Err(usage(
            UsageError("no token store: set HOME, XDG_CONFIG_HOME or --token-store PATH".into()),
            "client",
        ));
    };
    let key = agentteams_mcp::http1::url::Url::parse_identifier(url)
        .map_err(|e| usage(UsageError(e.to_string()), "client"))?
        .identifier();
    let removed = store
        .remove(&key)
        .map_err(|e| report(&ClientError::OAuth(e), json_out))?;
    if let Verb::Logout = verb {
        match removed {
            0 => out!("no stored login for {key} in {}", store.path().display()),
            n => out!(
                "logged out of {key} ({n} stored login(s) deleted from {})",
                store.path().display()
            ),
        }
        return Ok(0);
    }
    config.interactive = true;
    let client = target.connect(options).map_err(|e| report(&e, json_out))?;
    let _ = client.close();
    match store.find(&key) {
        Ok(Some(entry)) => {
            out!(
                "logged in to {key} at {} (scope: {}); the login is kept in {}",
                entry.issuer,
                entry.scope.as_deref().unwrap_or("none"),
                store.path().display()
            );
            Ok(0)
        }
        Ok(None) => {
            out!("{key} did not ask to log in; nothing stored");
            Ok(0)
        }
        Err(e) => Err(report(&ClientError::OAuth(e), json_out)),
    }
}

fn call_tool(
    client: &mut Client,
    tool: &str,
    mut arguments: Map,
    pairs: Vec<(String, String)>,
    json_out: bool,
) -> Result<u8, ClientError> {
    if !pairs.is_empty() {
        let tools = client.list_tools()?;
        let schema = tools
            .iter()
            .find(|t| t.name == tool)
            .and_then(ToolInfo::input_schema);
        for (k, v) in pairs {
            arguments.insert(k.clone(), coerce(schema, &k, v));
        }
    }
    let result = client.call_tool_with(tool, arguments, &mut show_event)?;
    print_result(&result, json_out);
    Ok(0)
}

/// A `--arg` value: text when the tool's schema types the parameter as a string, else JSON when it
/// parses (numbers, booleans, objects), else text.
fn coerce(schema: Option<&Map>, key: &str, value: String) -> Value {
    let declared = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key))
        .and_then(|p| p.get("type"));
    let string_only = match declared {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().all(|t| t.as_str() == Some("string")),
        _ => false,
    };
    if string_only {
        return Value::from(value);
    }
    json::parse(value.as_bytes()).unwrap_or(Value::from(value))
}

fn print_info(server: &ServerInfo, json_out: bool) {
    let era = if server.revision.is_legacy() {
        "legacy session"
    } else {
        "stateless"
    };
    if json_out {
        let mut m = Map::new();
        m.insert(
            "serverInfo",
            obj([
                ("name", Value::from(server.name.as_str())),
                ("version", Value::from(server.version.as_str())),
            ]),
        );
        m.insert("protocolVersion", Value::from(server.revision.as_str()));
        m.insert("capabilities", server.capabilities.clone());
        if let Some(i) = &server.instructions {
            m.insert("instructions", Value::from(i.as_str()));
        }
        out!("{}", machine_json(Value::Object(m)));
        return;
    }
    out!("server: {} {}", server.name, server.version);
    out!("protocol: {} ({era})", server.revision);
    out!("capabilities: {}", json::to_string(&server.capabilities));
    if let Some(i) = &server.instructions {
        out!("instructions: {i}");
    }
}

fn print_tools(tools: &[ToolInfo], policy: &Policy, key: &str, json_out: bool) -> u8 {
    if json_out {
        let refused: Vec<Value> = tools
            .iter()
            .filter_map(|t| {
                let d = policy.decide(key, &t.name);
                (!d.allowed).then(|| {
                    obj([
                        ("name", Value::from(t.name.as_str())),
                        ("reason", Value::from(d.reason)),
                    ])
                })
            })
            .collect();
        let out = obj([
            (
                "tools",
                Value::Array(tools.iter().map(|t| t.raw.clone()).collect()),
            ),
            (
                "policy",
                obj([
                    ("server", Value::from(key)),
                    ("level", Value::from(policy.server(key).level.as_str())),
                    ("refused", Value::Array(refused.into())),
                ]),
            ),
        ]);
        out!("{}", machine_json(out));
        return 0;
    }
    for tool in tools {
        let decision = policy.decide(key, &tool.name);
        let mark = if decision.allowed {
            String::new()
        } else {
            format!("  [refused by trust policy: {}]", decision.reason)
        };
        out!("{}{mark}", tool.name);
        if let Some(d) = tool.description.as_deref().and_then(|d| d.lines().next()) {
            out!("    {d}");
        }
        let params = parameters(tool);
        if !params.is_empty() {
            out!("    arguments: {}", params.join(", "));
        }
    }
    if tools.is_empty() {
        out!("(the server offers no tools)");
    }
    0
}

/// `name (type)` for each declared parameter, `*` marking required ones.
fn parameters(tool: &ToolInfo) -> Vec<String> {
    let Some(schema) = tool.input_schema() else {
        return Vec::new();
    };
    // A set: a server's schema may list a hundred thousand parameters and as many required
    // names, and a list looked up per parameter took about a minute.
    let required: std::collections::HashSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| {
            let ty = match p.get("type") {
                Some(Value::String(t)) => t.to_string(),
                Some(other) => json::to_string(other),
                None => "any".into(),
            };
            let star = if required.contains(&name.as_str()) {
                "*"
            } else {
                ""
            };
            format!("{name}{star} ({ty})")
        })
        .collect()
}

fn print_result(result: &ToolResult, json_out: bool) {
    if json_out {
        out!("{}", machine_json(result.raw.clone()));
        return;
    }
    for block in &result.content {
        print_block(block);
    }
    if result.content.is_empty() {
        if let Some(s) = &result.structured {
            out!("{}", json::to_pretty_ascii_sorted(s));
        }
    }
}

/// The string member `key` of `item`, or "".
fn text_field<'a>(item: &'a Value, key: &str) -> &'a str {
    item.get(key).and_then(Value::as_str).unwrap_or("")
}

/// One content block of a tool result or a prompt message: text as it is, media and binary
/// summarised (never written raw to the terminal), an embedded resource after a `[resource URI]`
/// line.
fn print_block(block: &Value) {
    let kind = text_field(block, "type");
    match kind {
        "text" => out!("{}", text_field(block, "text")),
        "image" | "audio" => out!(
            "[{kind} {}, {} of base64]",
            text_field(block, "mimeType"),
            counted(text_field(block, "data").len() as u64, "byte")
        ),
        "resource" => {
            let r = block.get("resource").cloned().unwrap_or_default();
            out!("[resource {}]", text_field(&r, "uri"));
            print_contents(&r);
        }
        "resource_link" => out!("[link {}]", text_field(block, "uri")),
        _ => out!("{}", json::to_string(block)),
    }
}

/// One resource contents object (`{uri, mimeType?, text | blob}`): the text, without one final
/// newline (the line printed adds it back); a blob as its media type and decoded size.
fn print_contents(contents: &Value) {
    if let Some(text) = contents.get("text").and_then(Value::as_str) {
        out!("{}", text.strip_suffix('\n').unwrap_or(text));
    } else if let Some(blob) = contents.get("blob").and_then(Value::as_str) {
        let mime = contents
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("unknown type");
        match agentteams_mcp::base64::decode(blob) {
            Some(bytes) => out!("[binary {mime}, {}]", counted(bytes.len() as u64, "byte")),
            None => out!(
                "[binary {mime}, {} of invalid Base64]",
                counted(blob.len() as u64, "character")
            ),
        }
    }
}

/// True when the server advertised `capability` (`resources`, `prompts`).
fn offers(client: &Client, capability: &str) -> bool {
    client
        .server()
        .capabilities
        .get(capability)
        .is_some_and(|c| !matches!(c, Value::Null))
}

/// `client resources`: the resources, then the resource templates. A server that does not
/// advertise resources is not asked; one that lists resources but does not know
/// `resources/templates/list` (-32601) has no templates.
fn list_resources(client: &mut Client, json_out: bool) -> Result<u8, ClientError> {
    let (resources, templates) = if offers(client, "resources") {
        let resources = client.list_resources()?;
        let templates = match client.list_resource_templates() {
            Err(ClientError::Rpc { error, .. }) if error.code == -32601 => Vec::new(),
            other => other?,
        };
        (resources, templates)
    } else {
        (Vec::new(), Vec::new())
    };
    if json_out {
        out!(
            "{}",
            machine_json(obj([
                ("resources", Value::Array(resources.into())),
                ("resourceTemplates", Value::Array(templates.into())),
            ]))
        );
        return Ok(0);
    }
    if resources.is_empty() && templates.is_empty() {
        out!("(the server offers no resources)");
        return Ok(0);
    }
    for (heading, items, key) in [
        ("resources:", &resources, "uri"),
        ("resource templates:", &templates, "uriTemplate"),
    ] {
        if items.is_empty() {
            continue;
        }
        out!("{heading}");
        for item in items {
            let mime = item
                .get("mimeType")
                .and_then(Value::as_str)
                .map_or(String::new(), |m| format!(" ({m})"));
            out!(
                "  {}  {}{mime}",
                text_field(item, key),
                text_field(item, "name")
            );
            if let Some(d) = first_line(item) {
                out!("      {d}");
            }
        }
    }
    Ok(0)
}

/// The first line of an item's `description`, if it has one.
fn first_line(item: &Value) -> Option<&str> {
    item.get("description")
        .and_then(Value::as_str)
        .and_then(|d| d.lines().next())
}

/// `client read URI`: each contents object; when there are several, each after a line naming
/// its URI and type.
fn print_read(contents: &[Value], json_out: bool) -> u8 {
    if json_out {
        out!(
            "{}",
            machine_json(obj([("contents", Value::Array(contents.to_vec().into()))]))
        );
        return 0;
    }
    for c in contents {
        if contents.len() > 1 {
            let mime = c
                .get("mimeType")
                .and_then(Value::as_str)
                .map_or(String::new(), |m| format!(" ({m})"));
            out!("[resource {}{mime}]", text_field(c, "uri"));
        }
        print_contents(c);
    }
    if contents.is_empty() {
        out!("(the resource has no contents)");
    }
    0
}

/// `client prompts`: each prompt's name, first description line and arguments (`*` required).
fn list_prompts(client: &mut Client, json_out: bool) -> Result<u8, ClientError> {
    let prompts = if offers(client, "prompts") {
        client.list_prompts()?
    } else {
        Vec::new()
    };
    if json_out {
        out!(
            "{}",
            machine_json(obj([("prompts", Value::Array(prompts.into()))]))
        );
        return Ok(0);
    }
    for prompt in &prompts {
        out!("{}", text_field(prompt, "name"));
        if let Some(d) = first_line(prompt) {
            out!("    {d}");
        }
        let arguments: Vec<String> = prompt
            .get("arguments")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|arg| {
                        let required = arg.get("required").and_then(Value::as_bool) == Some(true);
                        format!(
                            "{}{}",
                            text_field(arg, "name"),
                            if required { "*" } else { "" }
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !arguments.is_empty() {
            out!("    arguments: {}", arguments.join(", "));
        }
    }
    if prompts.is_empty() {
        out!("(the server offers no prompts)");
    }
    Ok(0)
}

/// `client prompt NAME`: the description, then each message after a `[role]` line.
fn print_prompt(result: &Value, json_out: bool) -> u8 {
    if json_out {
        out!("{}", machine_json(result.clone()));
        return 0;
    }
    if let Some(d) = result.get("description").and_then(Value::as_str) {
        out!("description: {d}");
    }
    let messages = result.get("messages").and_then(Value::as_array);
    for message in messages.into_iter().flat_map(|m| m.iter()) {
        out!("[{}]", text_field(message, "role"));
        match message.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().for_each(print_block),
            Some(block) => print_block(block),
            None => {}
        }
    }
    0
}

/// `client complete`: the values one a line on stdout; how many more there are on stderr.
fn print_completion(c: &Completion, json_out: bool) -> u8 {
    if json_out {
        let mut m = Map::new();
        m.insert(
            "values",
            Value::Array(c.values.iter().map(|v| Value::from(v.as_str())).collect()),
        );
        if let Some(total) = c.total {
            m.insert("total", Value::from(total));
        }
        m.insert("hasMore", Value::from(c.has_more));
        out!("{}", machine_json(obj([("completion", Value::Object(m))])));
        return 0;
    }
    for value in &c.values {
        out!("{value}");
    }
    if c.values.is_empty() {
        err!("(no completions)");
    }
    if c.has_more || c.total.is_some_and(|t| t > c.values.len() as u64) {
        let total = c.total.map_or(String::new(), |t| format!(" ({t} in all)"));
        err!("(the server has more completions{total})");
    }
    0
}

/// The subcommands of `trust`.
const TRUST_VERBS: [&str; 6] = ["list", "inspect", "allow", "deny", "revoke", "audit"];

/// `agentteams-mcp trust ...`: the arguments after `trust`.
pub fn run_trust(mut argv: Vec<String>) -> u8 {
    let options_part = argv.iter().take_while(|a| *a != "--");
    if options_part.clone().any(|a| a == "--help" || a == "-h") {
        out!("{TRUST_USAGE}");
        return 0;
    }
    let verb = match options_part
        .clone()
        .position(|a| TRUST_VERBS.contains(&a.as_str()))
    {
        Some(i) => argv.remove(i),
        None => {
            let error = match options_part.clone().find(|a| !a.starts_with('-')) {
                Some(other) => unknown_command(other, &TRUST_VERBS, None),
                None => UsageError(
                    "give a trust command: list, inspect, allow, deny, revoke or audit".into(),
                ),
            };
            return usage(error, "trust");
        }
    };
    let mut args = Args::new(argv);
    match trust_command(&mut args, &verb) {
        Ok(code) | Err(code) => code,
    }
}

fn server_key(args: &mut Args) -> Result<(String, Option<Target>), UsageError> {
    if let Some(key) = args.value("--server")? {
        if args.value("--url")?.is_some() || !args.trailing().is_empty() {
            return Err(UsageError(
                "give one of --server, --url or -- COMMAND".into(),
            ));
        }
        return Ok((key, None));
    }
    let t = target(args)?;
    Ok((t.key()?, Some(t)))
}

fn trust_command(args: &mut Args, verb: &str) -> Outcome<u8> {
    let fail = |e: UsageError| usage(e, "trust");
    let root = project(args).map_err(fail)?;
    let finish = |args: &mut Args| {
        std::mem::replace(args, Args::new(Vec::new()))
            .finish()
            .map_err(|e| usage(e, "trust"))
    };
    match verb {
        "list" => {
            let json_out = args.flag("--json");
            finish(args)?;
            let policy = load_policy(&root)?;
            if json_out {
                out!("{}", policy.to_json().trim_end());
                return Ok(0);
            }
            out!("policy: {}", Policy::path(&root).display());
            if policy.servers.is_empty() {
                out!("(no servers listed: every server is untrusted)");
            }
            for (key, entry) in &policy.servers {
                out!("{key}: {}", entry.level.as_str());
                if !entry.allow.is_empty() {
                    out!("    allow: {}", entry.allow.join(", "));
                }
                if !entry.deny.is_empty() {
                    out!("    deny: {}", entry.deny.join(", "));
                }
            }
            out!(
                "sensitive name patterns (refused on untrusted servers): {}",
                policy.sensitive_patterns().join(" ")
            );
            Ok(0)
        }
        "audit" => {
            finish(args)?;
            let policy = load_policy(&root)?;
            let findings = policy.audit();
            for f in &findings {
                out!("{f}");
            }
            if findings.is_empty() {
                out!("no findings in {}", Policy::path(&root).display());
                Ok(0)
            } else {
                Ok(EXIT_TOOL_ERROR)
            }
        }
        "allow" | "deny" | "revoke" => {
            let (key, _) = server_key(args).map_err(fail)?;
            let tools = args.values("--tool").map_err(fail)?;
            let level = match args.value("--level").map_err(fail)? {
                None => None,
                Some(_) if verb != "allow" => {
                    return Err(fail(UsageError("--level goes with allow only".into())))
                }
                Some(l) => match Level::parse(&l) {
                    Some(Level::Untrusted) | None => {
                        return Err(fail(UsageError(format!(
                            "--level must be trusted or verified, not {l:?} (use `trust deny` to make a server untrusted)"
                        ))))
                    }
                    level => level,
                },
            };
            finish(args)?;
            let mut policy = load_policy(&root)?;
            let edit = match verb {
                "allow" => policy.allow(&key, level, &tools),
                "deny" => policy.deny(&key, &tools),
                _ => policy.revoke(&key, &tools),
            };
            if let Err(e) = edit {
                err!("{PREFIX}trust: {e}");
                return Ok(if verb == "revoke" {
                    EXIT_TOOL_ERROR
                } else {
                    EXIT_USAGE
                });
            }
            policy.save(&root).map_err(|e| {
                err!("{PREFIX}trust: {e}");
                EXIT_USAGE
            })?;
            let entry = policy.server(&key);
            out!("{key}: {}", entry.level.as_str());
            Ok(0)
        }
        "inspect" => {
            let (key, target) = server_key(args).map_err(fail)?;
            let options = options(args).map_err(fail)?;
            let json_out = args.flag("--json");
            finish(args)?;
            let Some(target) = target else {
                return Err(fail(UsageError(
                    "inspect connects to the server: give --url URL or -- COMMAND".into(),
                )));
            };
            let policy = load_policy(&root)?;
            let mut client = target.connect(options).map_err(|e| report(&e, json_out))?;
            let tools = client.list_tools();
            let info = client.server().clone();
            let _ = client.close();
            let tools = tools.map_err(|e| report(&e, json_out))?;
            if !json_out {
                out!(
                    "{key}: {} ({} {}, protocol {})",
                    policy.server(&key).level.as_str(),
                    info.name,
                    info.version,
                    info.revision
                );
            }
            Ok(print_tools(&tools, &policy, &key, json_out))
        }
        other => Err(fail(unknown_command(other, &TRUST_VERBS, None))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_file_uris_with_every_unsafe_byte_escaped() {
        assert_eq!(
            file_uri(Path::new("/a b/c%d/é")),
            "file:///a%20b/c%25d/%C3%A9"
        );
        assert_eq!(file_uri(Path::new("/work/x-y_z.~")), "file:///work/x-y_z.~");
    }

    #[test]
    fn answer_flags_configure_elicitation_and_roots() {
        let mut args = Args::new(strings(&["--answer", "age=41", "--client-root", "/"]));
        let a = answers(&mut args).unwrap();
        assert_eq!(
            a.elicitation,
            Some(vec![("age".to_owned(), "41".to_owned())])
        );
        assert_eq!(a.roots, ["file:///"]);
        let mut args = Args::new(strings(&["--answer-defaults"]));
        assert_eq!(answers(&mut args).unwrap().elicitation, Some(Vec::new()));
        let mut args = Args::new(strings(&[]));
        assert_eq!(answers(&mut args).unwrap(), Answers::default());
        let mut args = Args::new(strings(&["--answer", "novalue"]));
        assert!(answers(&mut args).unwrap_err().0.contains("KEY=VALUE"));
        let mut args = Args::new(strings(&["--client-root", "/no/such/dir/here"]));
        assert!(answers(&mut args).is_err());
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn json_flag_and_json_arguments_are_told_apart() {
        assert_eq!(
            split_json_arguments(strings(&["--json", "call", "t", "--json", "{\"a\":1}"])),
            strings(&["--json", "call", "t", "--arguments-json", "{\"a\":1}"])
        );
        assert_eq!(
            split_json_arguments(strings(&["call", "t", "--json={}", "--", "--json", "{"])),
            strings(&["call", "t", "--arguments-json", "{}", "--", "--json", "{"])
        );
    }

    #[test]
    fn arguments_follow_the_schema_types() {
        let schema = json::parse(
            br#"{"type":"object","properties":{"rev":{"type":"string"},"n":{"type":"integer"}}}"#,
        )
        .unwrap();
        let schema = schema.as_object();
        assert_eq!(coerce(schema, "rev", "1234".into()), Value::from("1234"));
        assert_eq!(coerce(schema, "n", "12".into()), Value::from(12u64));
        assert_eq!(coerce(schema, "n", "twelve".into()), Value::from("twelve"));
        assert_eq!(coerce(None, "flag", "true".into()), Value::from(true));
    }

    #[test]
    fn exit_codes_follow_the_table() {
        let rpc = ClientError::Rpc {
            method: "tools/call".into(),
            error: agentteams_mcp::jsonrpc::RpcError::new(-32602, "unknown tool"),
        };
        assert_eq!(exit_code(&rpc), 1);
        assert_eq!(
            exit_code(&ClientError::AuthRequired {
                status: 401,
                challenge: None,
                token_sent: false,
            }),
            3
        );
        assert_eq!(exit_code(&ClientError::Connect("refused".into())), 4);
        assert_eq!(exit_code(&ClientError::Unsupported("https".into())), 2);
    }
}
