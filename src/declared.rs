//! What a server declares about the things it serves, read by both the engine and the governance
//! above it: each item's name and behaviour annotations.
//!
//! Kept below [`crate::server`] and [`crate::policy`]/[`crate::governance`] so that neither has to
//! import the other's types: the engine hands the governance anything that is [`Declared`] (tools,
//! resources, prompts), and the governance decides from the name and annotations alone.

/// Behaviour hints advertised with a tool (from revision 2025-03-26). Hosts treat them as untrusted
/// unless they trust the server; the engine's policy layer uses `read_only`/`destructive` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// What MCP assumes of a tool that declares no hints (the spec's `ToolAnnotations` defaults,
    /// unchanged since 2025-03-26): it may change data, destructively, not idempotently, and may
    /// reach beyond the server. What [`crate::server::Tool::new`] declares, so a tool whose author
    /// says nothing is governed as a write.
    pub const MCP_DEFAULTS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };

    /// The hints of every tool in this suite: reads only, changes nothing, same answer twice, no network.
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

impl Default for Annotations {
    /// [`Annotations::MCP_DEFAULTS`], so `Annotations { destructive: false, ..Default::default() }`
    /// declares an additive write.
    fn default() -> Annotations {
        Annotations::MCP_DEFAULTS
    }
}

/// Anything the governance can decide about: a name the operator's rules match, and what the
/// server says the item may do. Only what the server declares is an input, never what a client
/// sends.
pub trait Declared {
    /// The name policy rules and presets match (a tool's, resource's or prompt's `name`).
    fn declared_name(&self) -> &str;
    /// What the server says the item may do.
    fn declared_annotations(&self) -> Annotations;
    /// The tools whose reads this item yields (a resource template that reads a file as
    /// `git_file` does, a prompt that embeds `git_show`'s answer): every decision about the item
    /// is also a decision about each of them, so no item is a way around a rule on a tool.
    fn declared_reads_through(&self) -> &[String] {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_changes_nothing() {
        let a = Annotations::READ_ONLY;
        assert!(a.read_only && !a.destructive && a.idempotent && !a.open_world);
    }

    #[test]
    fn the_default_may_change_data_as_mcp_says() {
        let a = Annotations::default();
        assert_eq!(a, Annotations::MCP_DEFAULTS);
        assert!(!a.read_only && a.destructive && !a.idempotent && a.open_world);
    }
}
