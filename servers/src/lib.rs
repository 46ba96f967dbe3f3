//! The agentteams MCP servers and the registry the `agentteams-mcp` binary serves them from.
//!
//! Each server is a [`ToolSet`]; the protocol, transports, policy and audit all live in the
//! `agentteams-mcp` library. [`Catalogue::PRODUCT`], [`toolset`] and [`run_server`] are the API that
//! agentteams vendors.

#![forbid(unsafe_code)]

/// Writes one diagnostic line to stderr. A closed stderr (a host that stopped reading it) is no
/// reason to fail, so errors are ignored where `eprintln!` would panic.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod approval_cmd;
pub mod catalogue;
pub mod cli;
pub mod client_cmd;
pub mod command;
pub mod compat;
pub mod corpus;
pub mod gitread;
pub mod index;
pub mod index_cmd;
pub mod recall;
pub mod regular_file;
#[cfg(test)]
mod scratch;
pub mod size;
pub mod startup;

use agentteams_mcp::audit;
use agentteams_mcp::bind::{self, BindOptions};
use agentteams_mcp::governance::{PermissionMode, ScopedApproval};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::{Engine, Session, ToolSet};
use agentteams_mcp::voice::PREFIX;
pub use catalogue::{Catalogue, Settings};
pub use compat::Compat;
use startup::Transport;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Builds the tool set of server `name` (one of [`Catalogue::PRODUCT`]) for the project at
/// `root` (already resolved).
pub fn toolset(name: &str, root: &Path) -> Result<Arc<dyn ToolSet>, String> {
    toolset_with(name, root, &Settings::default())
}

/// [`toolset`] built with `settings` (the texts, how git runs).
pub fn toolset_with(
    name: &str,
    root: &Path,
    settings: &Settings,
) -> Result<Arc<dyn ToolSet>, String> {
    Catalogue::PRODUCT.build(name, root, settings)
}

/// The project root as the reference resolves it: absolute, symlinks resolved.
pub fn resolve_root(root: Option<&Path>) -> Result<PathBuf, String> {
    let given = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    given
        .canonicalize()
        .map_err(|e| format!("cannot use {} as the project root: {e}", given.display()))
}

/// The operator's governance settings for a served run: permission mode, tool policy, approvals
/// and audit log.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// `--permission-mode MODE` (or `--read-only`); the default is `prompt`.
    pub permission_mode: Option<PermissionMode>,
    /// `--approve-scoped TOOL:SHA256`, in order.
    pub approve_scoped: Vec<String>,
    /// `--approvals FILE` instead of the project's `.agentteams/approvals.json`.
    pub approvals_file: Option<PathBuf>,
    /// `--allow-tool PATTERN`, in order.
    pub allow_tools: Vec<String>,
    /// `--deny-tool PATTERN`, in order.
    pub deny_tools: Vec<String>,
    /// `--policy FILE`.
    pub policy_file: Option<PathBuf>,
    /// `--audit-log FILE` (no log unless given).
    pub audit_log: Option<PathBuf>,
    /// `--audit-full`: keep argument and result values instead of redacting them.
    pub audit_full: bool,
    /// `--until-stdin-closes` (HTTP): stop cleanly, completing the audit run, when stdin reaches
    /// end of input (std has no signal handling, so a killed server cannot record its end).
    pub http_until_stdin_closes: bool,
    /// What the server is built with: `--compat`, `--git-memory-limit`, the exec helper.
    pub settings: Settings,
    /// The servers `--serve-mcp` may name.
    pub catalogue: Catalogue,
}

impl ServeOptions {
    /// The policy these options describe: the policy file's rules, then the command line's.
    pub fn policy(&self) -> Result<Policy, String> {
        let mut policy = Policy::new();
        if let Some(file) = &self.policy_file {
            policy
                .add_file(file)
                .map_err(|e| format!("--policy: {e}"))?;
        }
        for pattern in &self.allow_tools {
            policy.allow(pattern).map_err(|e| e.to_string())?;
        }
        for pattern in &self.deny_tools {
            policy.deny(pattern).map_err(|e| e.to_string())?;
        }
        Ok(policy)
    }
}

/// Serves `name` for the project at `root` over stdio until stdin ends. Returns the process exit
/// code: 0 at end of input, 1 on an I/O failure, 2 for an unknown server or unusable root.
pub fn run_server(name: &str, root: &Path) -> i32 {
    run_server_with(name, root, &ServeOptions::default())
}

/// The line saying what is served, for a terminal: `root` as the operator gave it, resolved.
fn serving_line(name: &str, root: &Path, transport: Transport) -> String {
    let root = startup::project_dir(root).unwrap_or_else(|_| root.to_path_buf());
    startup::serving_line(name, &root, transport)
}

/// [`run_server`] under a tool policy and, if asked, an audit log. Also exits 2 for a policy that
/// cannot be used or an audit log that cannot be opened, and 1 when the run cannot be recorded as
/// completed.
pub fn run_server_with(name: &str, root: &Path, options: &ServeOptions) -> i32 {
    let engine = match build_engine(name, root, options, "stdio") {
        Ok(e) => e,
        Err(e) => {
            note!("{PREFIX}{e}");
            return 2;
        }
    };
    if std::io::stderr().is_terminal() {
        note!("{}", serving_line(name, root, Transport::Stdio));
    }
    let session = Session::new(engine);
    match agentteams_mcp::stdio::serve(&session, std::io::stdin(), std::io::stdout()) {
        Ok(()) => complete_audit(session.engine()),
        Err(e) => {
            note!("{PREFIX}stdio failed: {e}");
            1
        }
    }
}

/// Serves `name` for the project at `root` over Streamable HTTP until the process is stopped.
/// Returns the exit code: 1 when the address cannot be bound (a port in use is named, with the
/// `--port` option to change it) or served, 2 for an unknown server,
/// unusable root, policy or audit log, or a refused configuration (e.g. a non-loopback address
/// without a token).
pub fn run_http_server(
    name: &str,
    root: &Path,
    options: &ServeOptions,
    config: agentteams_mcp::http::HttpConfig,
) -> i32 {
    let engine = match build_engine(name, root, options, "http") {
        Ok(e) => e,
        Err(e) => {
            note!("{PREFIX}{e}");
            return 2;
        }
    };
    let watch_stdin = options.http_until_stdin_closes;
    let on_terminal = std::io::stderr().is_terminal();
    let served = agentteams_mcp::http::serve_until(engine.clone(), config, |stopper| {
        if on_terminal {
            let transport = Transport::Http {
                until_stdin_closes: watch_stdin,
            };
            note!("{}", serving_line(name, root, transport));
        }
        if watch_stdin {
            std::thread::spawn(move || {
                // Anything read is discarded: stdin is only the supervisor's lifeline here.
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                note!("{PREFIX}stdin closed; stopping");
                stopper.stop();
            });
        }
    });
    match served {
        Ok(()) => complete_audit(&engine),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            note!("{PREFIX}{e}");
            2
        }
        // Only binding fails this way; the error names the address.
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            note!("{PREFIX}{e}; another program is listening there: choose another port with --port N (--port 0 takes any free one)");
            1
        }
        Err(e) => {
            note!("{PREFIX}HTTP failed: {e}");
            1
        }
    }
}

/// The engine serving `name` for the project at `root` under the options' governance and audit
/// log, built by the library's one binding call ([`bind::bind`]) that stdio, HTTP and
/// embedders share; `transport` is what the audit log's `run_started` record names. An error is
/// the one line to print after [`PREFIX`].
pub fn build_engine(
    name: &str,
    root: &Path,
    options: &ServeOptions,
    transport: &str,
) -> Result<Arc<Engine>, String> {
    let root = startup::checked_root(name, root)?;
    let toolset = options.catalogue.build(name, &root, &options.settings)?;
    let policy = options.policy()?;
    let scoped = options
        .approve_scoped
        .iter()
        .map(|text| ScopedApproval::parse(text).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if name == "recall" {
        if let Some(notice) = startup::recall_notice(&root) {
            note!("{notice}");
        }
    }
    let bind_options = BindOptions {
        policy: policy.clone(),
        scoped,
        approvals_file: options.approvals_file.clone(),
        audit_log: options.audit_log.clone(),
        audit_full: options.audit_full,
        version: None,
        wire: options.settings.compat.wire(),
    };
    let mode = options.permission_mode.unwrap_or(PermissionMode::DEFAULT);
    let binding =
        bind::bind(toolset, &root, mode, transport, bind_options).map_err(|e| e.to_string())?;
    for warning in binding.warnings() {
        note!("{PREFIX}{warning}");
    }
    let engine = binding.engine().clone();
    let tools = engine.tools();
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    if !tools.is_empty() && !tools.iter().any(|t| engine.is_listed(t)) {
        // The mode and presets are named when they are not the defaults that leave the policy
        // alone in charge.
        let mut rules = policy.describe();
        if mode != PermissionMode::DEFAULT {
            rules.push(format!("permission mode {mode}"));
        }
        rules.extend(engine.governance().presets().describe());
        note!("{}", startup::empty_policy_warning(name, &names, &rules));
    } else if !tools.is_empty() {
        // When nothing is left, the warning above already names every rule and tool.
        for warning in startup::unmatched_rule_warnings(name, &names, &policy) {
            note!("{warning}");
        }
    }
    Ok(engine)
}

/// Writes `run_completed` at clean shutdown and tells the operator the run's final hash (to keep
/// elsewhere: it is what proves later that the log was not rewritten). 1 if it cannot be written.
fn complete_audit(engine: &Engine) -> i32 {
    let Some(log) = engine.audit() else {
        return 0;
    };
    match log.complete_run() {
        Ok(head) => {
            note!("{PREFIX}audit: run {} completed; head {head}", log.run_id());
            0
        }
        Err(e) => {
            note!("{PREFIX}audit: {e}");
            1
        }
    }
}

/// `agentteams-mcp audit verify FILE [--ci]`: prints the verifier's report and returns the exit
/// code (0 intact; 1 tampering, and in `ci` mode also an incomplete run; 2 unreadable file, or
/// a file none of whose lines is an audit record).
pub fn verify_audit_log(path: &Path, ci: bool) -> i32 {
    match audit::verify_file(path) {
        Ok(report) if !report.is_audit_log() => {
            note!(
                "{PREFIX}audit: {} is not an audit log: {}",
                path.display(),
                report.not_an_audit_log()
            );
            audit::exit_code(&report, ci)
        }
        Ok(report) => {
            // Run ids and the reasons for a malformed record quote the log, which anyone who
            // tampered with it wrote.
            agentteams_mcp::voice::say(
                false,
                &agentteams_mcp::sanitize::sanitize(&report.to_string()),
            );
            audit::exit_code(&report, ci)
        }
        Err(e) => {
            note!("{PREFIX}audit: cannot read {}: {e}", path.display());
            2
        }
    }
}
