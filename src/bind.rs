//! The embedding API: [`bind`] builds, in one call, the engine that serves a tool set for a
//! workspace root under a permission mode, named for its transport; stdio, HTTP and
//! `handle_message` all serve that same engine, so no transport can decide differently.

use crate::audit::{self, AuditLog, RunInfo};
use crate::governance::{
    Governance, LivePresets, PermissionMode, PresetsLocation, ScopedApproval, MAX_SCOPED_APPROVALS,
};
use crate::policy::{Effect, Policy};
use crate::server::{Engine, Session, ToolSet, Wire};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Longest transport name (`stdio`, `http`, `embedded`, or an embedder's own).
pub const MAX_TRANSPORT_NAME_CHARS: usize = 32;

/// What [`bind`] takes besides the tool set, root, mode and transport. The default: the empty
/// policy, the project's approvals file, no scoped approvals, no audit log.
#[derive(Clone, Debug, Default)]
pub struct BindOptions {
    /// The operator's allow/deny rules.
    pub policy: Policy,
    /// `--approve-scoped` approvals.
    pub scoped: Vec<ScopedApproval>,
    /// The approvals file (`--approvals`), which must exist; `None`: `.agentteams/approvals.json`
    /// under the root (missing: no presets). Followed while serving ([`LivePresets`]).
    pub approvals_file: Option<PathBuf>,
    /// Append a hash-chained record of every call here (`--audit-log`).
    pub audit_log: Option<PathBuf>,
    /// Keep argument and result values in the audit log instead of redacting them.
    pub audit_full: bool,
    /// `serverInfo.version` and the audit log's `version` (default: this library's version).
    pub version: Option<String>,
    /// How much of the protocol the engine puts on the wire (default: all of it).
    pub wire: Wire,
}

/// A tool set bound to a workspace: the engine every transport serves.
pub struct Binding {
    engine: Arc<Engine>,
    root: PathBuf,
    warnings: Vec<String>,
}

impl Binding {
    /// The engine, for `stdio::serve(&Session::new(..))` or `http::serve_until(..)`.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// A fresh session over the engine, for `handle_message`.
    pub fn session(&self) -> Session {
        Session::new(self.engine.clone())
    }

    /// The workspace root, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Lines an operator should see at startup (e.g. what `danger-full-access` means).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// Why a binding cannot be made: one line, for the operator (a server exits 2 on it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindError(pub String);

one_line_error!(BindError);

/// Builds the engine serving `toolset` for the workspace at `root` under `mode`, for the
/// transport named `transport`: loads the approval presets, checks the scoped approvals against
/// the tool set, and opens the audit log (its `run_started` records the governance in force, and a
/// `presets_changed` record each change of the approvals file while serving).
pub fn bind(
    toolset: Arc<dyn ToolSet>,
    root: &Path,
    mode: PermissionMode,
    transport: &str,
    options: BindOptions,
) -> Result<Binding, BindError> {
    let fail = |why: String| Err(BindError(why));
    let name_ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if transport.is_empty()
        || transport.chars().count() > MAX_TRANSPORT_NAME_CHARS
        || !transport.chars().all(name_ok)
    {
        return fail(format!(
            "transport name {transport:?}: 1 to {MAX_TRANSPORT_NAME_CHARS} characters of a-z 0-9 -"
        ));
    }
    let root = match root.canonicalize() {
        Ok(r) if r.is_dir() => r,
        Ok(r) => return fail(format!("workspace root {} is not a directory", r.display())),
        Err(e) => return fail(format!("workspace root {}: {e}", root.display())),
    };
    let tools = toolset.tools();
    if options.scoped.len() > MAX_SCOPED_APPROVALS {
        return fail(format!(
            "{} scoped approvals; the limit is {MAX_SCOPED_APPROVALS}",
            options.scoped.len()
        ));
    }
    for approval in &options.scoped {
        if !tools.iter().any(|t| t.name == approval.tool) {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return fail(format!(
                "--approve-scoped names tool {:?}, which {} does not serve (its tools: {})",
                approval.tool,
                toolset.server_name(),
                names.join(", ")
            ));
        }
    }
    if mode == PermissionMode::DangerFullAccess {
        if let Some(rule) = options
            .policy
            .rules()
            .iter()
            .find(|r| r.effect == Effect::Allow)
        {
            return fail(format!(
                "permission mode danger-full-access ignores allow rules, so {rule} would have no effect; drop it or choose permission mode allow"
            ));
        }
    }
    let (location, label) = match &options.approvals_file {
        Some(path) => (PresetsLocation::Named(path.clone()), "--approvals"),
        None => (PresetsLocation::Project(root.clone()), "approvals"),
    };
    let presets = LivePresets::open(location).map_err(|e| BindError(format!("{label}: {e}")))?;
    let governance = Governance::new(mode)
        .with_policy(options.policy.clone())
        .with_scoped(options.scoped.clone())
        .with_live_presets(presets);
    let version = options
        .version
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
    let mut warnings = Vec::new();
    if mode == PermissionMode::DangerFullAccess {
        warnings.push(format!(
            "governance: permission mode danger-full-access: every tool of {} runs for any client, including tools that change data; only deny rules and deny presets refuse",
            toolset.server_name()
        ));
    }
    let described = governance.describe();
    let mut engine = Engine::new(toolset.clone())
        .with_version(&version)
        .with_wire(options.wire)
        .with_governance(governance);
    if let Some(path) = &options.audit_log {
        let info = RunInfo {
            server: toolset.server_name().to_owned(),
            version,
            root: root.display().to_string(),
            transport: transport.to_owned(),
            policy: options.policy.describe(),
        };
        let audit_mode = if options.audit_full {
            audit::Mode::Full
        } else {
            audit::Mode::Redacted
        };
        let log = AuditLog::open_governed(path, &info, audit_mode, described)
            .map_err(|e| BindError(format!("--audit-log: {e}")))?;
        engine = engine.with_audit(log);
    }
    let engine = Arc::new(engine);
    if engine.audit().is_some() {
        // Weak: the engine holds the governance that holds this.
        let weak = Arc::downgrade(&engine);
        engine.governance().on_presets_change(move |described| {
            if let Some(log) = weak.upgrade().as_ref().and_then(|e| e.audit()) {
                // A failed write disables the log, so the call being decided is refused.
                let _ = log.presets_changed(described);
            }
        });
    }
    Ok(Binding {
        engine,
        root,
        warnings,
    })
}
