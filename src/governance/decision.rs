//! The governance decision: whether a tool may be listed and a call run, from the permission mode,
//! the tool policy, the approval presets and the scoped approvals, and what the decision was based
//! on (for the refusal message and the audit log).
//!
//! Only what the server declares (the tool's name and annotations) and the call's arguments (for a
//! scoped approval's digest) are inputs; nothing else a client sends (hints, `_meta`, request ids)
//! is. In order, first match wins:
//! 1. a deny rule of the policy refuses;
//! 2. a deny preset refuses (in every mode, `allow` and `danger-full-access` included); the presets
//!    are those in force now, asked for once per decision ([`super::live`]);
//! 3. `danger-full-access` allows;
//! 4. a read-only tool is decided by the policy alone (allow rules, allowlist, default);
//! 5. a tool that may change data: `read-only` refuses; `allow` decides it as the policy decides a
//!    read-only tool; `prompt` allows it on an allow rule naming it exactly, then a grant preset,
//!    then a scoped approval whose digest is this call's, and refuses it otherwise.

use super::canonical::{call_digest, CanonicalError};
use super::live::{InForce, LivePresets};
use super::mode::PermissionMode;
use super::presets::Presets;
use super::scoped::ScopedApproval;
use crate::declared::{Annotations, Declared};
use crate::json::{Map, Value};
use crate::policy::{self, Effect, Policy, Reason};
use std::sync::Arc;

/// What a decision is asked about.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'a> {
    /// Whether the tool appears in `tools/list`: listed when some call of it could run.
    Listing,
    /// A call with these arguments (`None`: they are not an object, so no digest).
    Call(Option<&'a Map>),
}

/// What a decision rested on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// A policy rule (`--allow-tool`, `--deny-tool`, the policy file).
    Rule,
    /// The policy's default rules (read-only tools allowed, the allowlist).
    Default,
    /// An approval preset.
    Preset,
    /// A scoped approval matching the call's digest.
    Digest,
    /// The permission mode itself.
    Mode,
}

impl Basis {
    pub const ALL: [Basis; 5] = [
        Basis::Rule,
        Basis::Default,
        Basis::Preset,
        Basis::Digest,
        Basis::Mode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Rule => "rule",
            Basis::Default => "default",
            Basis::Preset => "preset",
            Basis::Digest => "digest",
            Basis::Mode => "mode",
        }
    }
}

/// A decision and what it rested on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    pub mode: PermissionMode,
    pub basis: Basis,
    /// The rule, preset, approval or mode that decided, in words.
    pub reason: String,
    /// The call's digest, computed for every call of a tool that may change data (so a refused
    /// call's record says what to approve); `None` for listings, read-only tools and arguments
    /// without a canonical form.
    pub digest: Option<String>,
}

impl Verdict {
    /// The message of a refused call (JSON-RPC -32001), naming the tool and what refused it.
    pub fn refusal_message(&self, tool: &str) -> String {
        self.refusal_message_for("tool", tool)
    }

    /// The message of a refused use of `name`, a `kind` of item (`tool`, `resource`, `prompt`...).
    pub fn refusal_message_for(&self, kind: &str, name: &str) -> String {
        match self.basis {
            Basis::Rule | Basis::Default => {
                format!("{kind} {name:?} is refused by policy: {}", self.reason)
            }
            _ => format!("{kind} {name:?} is refused by {}", self.reason),
        }
    }

    /// The `decision` member of the call's audit records.
    pub fn to_audit(&self) -> Value {
        let mut m = Map::with_capacity(5);
        m.insert("allowed", Value::from(self.allowed));
        m.insert("mode", Value::from(self.mode.as_str()));
        m.insert("basis", Value::from(self.basis.as_str()));
        m.insert("reason", Value::from(self.reason.as_str()));
        if let Some(digest) = &self.digest {
            m.insert("digest", Value::from(digest.as_str()));
        }
        Value::Object(m)
    }
}

/// Where the presets came from, for the audit log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PresetsSource {
    pub path: String,
    /// SHA-256 of the file's bytes; `None` when there was no file.
    pub sha256: Option<String>,
}

/// Everything that decides what a served tool set may do.
#[derive(Clone, Debug)]
pub struct Governance {
    mode: PermissionMode,
    policy: Policy,
    presets: Arc<LivePresets>,
    scoped: Vec<ScopedApproval>,
}

impl Default for Governance {
    fn default() -> Self {
        Governance::new(PermissionMode::DEFAULT)
    }
}

impl Governance {
    /// `mode` with the empty policy and no presets or scoped approvals.
    pub fn new(mode: PermissionMode) -> Governance {
        Governance {
            mode,
            policy: Policy::new(),
            presets: Arc::new(LivePresets::fixed(&Presets::new(), None)),
            scoped: Vec::new(),
        }
    }

    pub fn with_policy(mut self, policy: Policy) -> Governance {
        self.policy = policy;
        self
    }

    /// Presets that never change while serving.
    pub fn with_presets(mut self, presets: Presets, source: Option<PresetsSource>) -> Governance {
        let source = source.map(|s| (s.path, s.sha256));
        self.presets = Arc::new(LivePresets::fixed(&presets, source));
        self
    }

    /// Presets that follow their file while serving ([`LivePresets::open`]).
    pub fn with_live_presets(mut self, presets: LivePresets) -> Governance {
        self.presets = Arc::new(presets);
        self
    }

    /// Has `record` called with [`Governance::describe`]'s form each time the presets in force
    /// change while serving (the audit log's `presets_changed`). Once: false if one was set.
    pub fn on_presets_change(&self, record: impl Fn(Value) + Send + Sync + 'static) -> bool {
        let (mode, scoped) = (self.mode, self.scoped.clone());
        self.presets.on_change(Box::new(move |in_force: &InForce| {
            record(describe(mode, in_force, &scoped))
        }))
    }

    pub fn with_scoped(mut self, scoped: Vec<ScopedApproval>) -> Governance {
        self.scoped = scoped;
        self
    }

    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub(crate) fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// The presets in force now (the file read again first if it changed).
    pub fn presets(&self) -> Presets {
        self.presets.current().presets()
    }

    pub fn scoped(&self) -> &[ScopedApproval] {
        &self.scoped
    }

    /// What the audit log's `run_started` records about the governance in force.
    pub fn describe(&self) -> Value {
        describe(self.mode, &self.presets.current(), &self.scoped)
    }

    /// Decides about `tool` (see the module documentation for the order).
    pub fn decide<D: Declared + ?Sized>(&self, item: &D, subject: Subject<'_>) -> Verdict {
        let name = item.declared_name();
        let annotations = item.declared_annotations();
        let may_change = policy::may_change_data(&annotations);
        let digest = match subject {
            Subject::Call(Some(arguments)) if may_change => Some(call_digest(name, arguments)),
            _ => None,
        };
        let verdict = |allowed: bool, basis: Basis, reason: String| Verdict {
            allowed,
            mode: self.mode,
            basis,
            reason,
            digest: digest.as_ref().and_then(|d| d.as_ref().ok().cloned()),
        };
        let from_policy = |d: policy::Decision| {
            let basis = match d.reason {
                Reason::Rule(_) => Basis::Rule,
                _ => Basis::Default,
            };
            verdict(d.allowed, basis, d.reason.to_string())
        };
        let by_policy = self.policy.decide(name, &annotations);
        if matches!(&by_policy.reason, Reason::Rule(r) if r.effect == Effect::Deny) {
            return from_policy(by_policy);
        }
        // Once per decision: what the approvals file says now.
        let presets = self.presets.current();
        if let Some(preset) = presets.deny(name) {
            return verdict(false, Basis::Preset, preset);
        }
        if self.mode == PermissionMode::DangerFullAccess {
            return verdict(
                true,
                Basis::Mode,
                "permission mode danger-full-access".to_owned(),
            );
        }
        if !may_change {
            return from_policy(by_policy);
        }
        match self.mode {
            PermissionMode::ReadOnly => verdict(
                false,
                Basis::Mode,
                "permission mode read-only: every tool that may change data is refused".to_owned(),
            ),
            PermissionMode::Allow => {
                let as_read_only = self.policy.decide(name, &Annotations::READ_ONLY);
                match as_read_only.reason {
                    Reason::DefaultReadOnly => {
                        verdict(true, Basis::Mode, "permission mode allow".to_owned())
                    }
                    _ => from_policy(as_read_only),
                }
            }
            PermissionMode::Prompt | PermissionMode::DangerFullAccess => {
                if by_policy.allowed {
                    return from_policy(by_policy);
                }
                if let Some(preset) = presets.grant(name) {
                    return verdict(true, Basis::Preset, preset);
                }
                let scoped = self.scoped.iter().filter(|s| s.tool == name);
                match (&subject, &digest) {
                    (Subject::Listing, _) if scoped.clone().next().is_some() => {
                        return verdict(
                            true,
                            Basis::Digest,
                            "scoped approvals of some of its calls".to_owned(),
                        )
                    }
                    (_, Some(Ok(d))) => {
                        if let Some(s) = scoped.clone().find(|s| s.digest == *d) {
                            return verdict(
                                true,
                                Basis::Digest,
                                format!("scoped approval {s} (--approve-scoped)"),
                            );
                        }
                    }
                    _ => {}
                }
                let mut reason = "permission mode prompt: a tool that may change data needs an allow rule naming it exactly, a grant preset or a scoped approval of this exact call".to_owned();
                if let Reason::DestructiveNotNamed {
                    wildcard_match: Some(rule),
                } = &by_policy.reason
                {
                    reason.push_str(&format!(" (wildcard rule {rule} is not enough)"));
                }
                if let Some(why) = presets.why_not_granted(name) {
                    reason.push_str(&format!("; {why}"));
                }
                match &digest {
                    Some(Ok(d)) => reason.push_str(&format!(
                        "; this call's digest is {d} (--approve-scoped {name}:{d} approves it)"
                    )),
                    Some(Err(e)) => reason.push_str(&no_canonical_form(e)),
                    None => {}
                }
                verdict(false, Basis::Mode, reason)
            }
        }
    }
}

/// The governance's description: the mode, the presets in force (and where from), the scoped
/// approvals.
fn describe(mode: PermissionMode, presets: &InForce, scoped: &[ScopedApproval]) -> Value {
    let mut m = Map::with_capacity(7);
    m.insert("mode", Value::from(mode.as_str()));
    presets.describe_into(&mut m);
    let scoped: Vec<Value> = scoped.iter().map(|s| Value::from(s.to_string())).collect();
    m.insert("scoped", Value::from(scoped));
    Value::Object(m)
}

fn no_canonical_form(e: &CanonicalError) -> String {
    format!("; this call cannot be approved by digest: {e}")
}
