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
    /// The hints of every tool in this suite: reads only, changes nothing, same answer twice, no network.
    pub const READ_ONLY: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
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
}
