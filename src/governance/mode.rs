//! Permission modes: how far a served tool that may change data is let run, and the mode names
//! that are refused because they would need a person the MCP client cannot provide.

use std::fmt;

/// How tools that may change data are treated (read-only tools are decided by the policy alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionMode {
    /// Every tool that may change data is refused, whatever approves it.
    ReadOnly,
    /// A tool that may change data runs only when approved: an allow rule naming it exactly, a
    /// grant preset, or a scoped approval of the exact call. The default.
    Prompt,
    /// Tools that may change data are served like read-only ones: allow rules (wildcards too) and
    /// the allowlist apply, deny rules and deny presets refuse.
    Allow,
    /// Every tool is served, the allowlist ignored; only deny rules and deny presets refuse.
    DangerFullAccess,
}

/// Mode names other agent hosts use for asking a person before each call. Refused: over MCP the
/// only party to ask is the client, which is the agent being governed.
pub const REFUSED_MODES: &[&str] = &["ask", "on-request", "interactive"];

impl PermissionMode {
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::ReadOnly,
        PermissionMode::Prompt,
        PermissionMode::Allow,
        PermissionMode::DangerFullAccess,
    ];

    /// What a server runs under when no mode is given: today's rule that a tool that may change
    /// data needs an explicit approval.
    pub const DEFAULT: PermissionMode = PermissionMode::Prompt;

    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "read-only",
            PermissionMode::Prompt => "prompt",
            PermissionMode::Allow => "allow",
            PermissionMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// Parses a mode name. A name in [`REFUSED_MODES`] is an error saying why it cannot work.
    pub fn parse(name: &str) -> Result<PermissionMode, ModeError> {
        if let Some(mode) = PermissionMode::ALL.into_iter().find(|m| m.as_str() == name) {
            return Ok(mode);
        }
        if REFUSED_MODES.contains(&name) {
            return Err(ModeError(format!(
                "permission mode {name:?} needs a person to confirm each call that may change data, which an MCP client cannot provide: the client is the agent being governed, stdio's stdin and stdout carry the protocol, and HTTP has no operator; use prompt with approval presets (agentteams-mcp approval grant) or --approve-scoped TOOL:SHA256"
            )));
        }
        let names: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
        Err(ModeError(format!(
            "unknown permission mode {name:?}; choose one of {}",
            names.join(", ")
        )))
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that cannot be used, with the reason on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeError(pub String);

one_line_error!(ModeError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_modes_round_trip() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::parse(mode.as_str()), Ok(mode));
        }
        assert_eq!(PermissionMode::DEFAULT, PermissionMode::Prompt);
    }

    #[test]
    fn modes_needing_a_person_are_refused_on_one_line() {
        for name in REFUSED_MODES {
            let err = PermissionMode::parse(name).unwrap_err().to_string();
            assert!(err.contains("which an MCP client cannot provide"), "{err}");
            assert!(!err.contains('\n'));
        }
        assert_eq!(
            PermissionMode::parse("Allow").unwrap_err().to_string(),
            "unknown permission mode \"Allow\"; choose one of read-only, prompt, allow, danger-full-access"
        );
    }
}
