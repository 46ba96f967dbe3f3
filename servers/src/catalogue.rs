//! The servers a command can start by name: each one's name, help line and constructor, and the
//! settings every constructor is given. The product serves [`Catalogue::PRODUCT`]; the test
//! fixtures' binary passes a catalogue of its own, so fixtures never ship as `--serve-mcp` names.
//!
//! Not for governance, transports or the command line: a catalogue only builds tool sets.

use crate::compat::Compat;
use crate::gitread::{GitRead, GitSettings};
use crate::recall::Recall;
use agentteams_mcp::jsonrpc::py_repr;
use agentteams_mcp::server::ToolSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// What every server is built with, from the command line: passed in, never read from globals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// `--compat`: the product's texts (default) or the reference's.
    pub compat: Compat,
    /// How gitread starts git (`--git-memory-limit`, the exec helper).
    pub git: GitSettings,
    /// `--lookup-from`: recall answers `local.json` files of at least this many bytes through
    /// the lookup sidecar; `None`: the default ([`crate::recall::LOOKUP_FROM_BYTES`]).
    pub lookup_from: Option<u64>,
}

/// Builds one server's tool set for the project at a root (already resolved and checked).
pub type Build = fn(&Path, &Settings) -> Result<Arc<dyn ToolSet>, String>;

/// One server a catalogue offers.
pub struct Entry {
    /// The name `--serve-mcp` takes.
    pub name: &'static str,
    /// Its line in `--help`.
    pub summary: &'static str,
    /// Its constructor.
    pub build: Build,
}

/// The servers one binary offers, in the help's order.
#[derive(Clone, Copy)]
pub struct Catalogue(&'static [Entry]);

/// gitread, as the product offers it.
pub const GITREAD: Entry = Entry {
    name: "gitread",
    summary: "the project's git history, files, blame and search, read-only",
    build: |root, settings| {
        let server = GitRead::with_settings(root, &settings.git)?.with_compat(settings.compat);
        Ok(Arc::new(server))
    },
};

/// recall, as the product offers it.
pub const RECALL: Entry = Entry {
    name: "recall",
    summary: "search the project's notes and code in the indexes `index build` writes",
    build: |root, settings| {
        let mut server = Recall::new(root)?.with_compat(settings.compat);
        if let Some(bytes) = settings.lookup_from {
            server = server.with_lookup_from(bytes);
        }
        Ok(Arc::new(server))
    },
};

impl Catalogue {
    /// The servers users run.
    pub const PRODUCT: Catalogue = Catalogue(&[GITREAD, RECALL]);

    /// A catalogue of `entries` (a binary of fixtures lists the product's and its own).
    pub const fn new(entries: &'static [Entry]) -> Catalogue {
        Catalogue(entries)
    }

    /// Every entry, in order.
    pub fn entries(&self) -> &'static [Entry] {
        self.0
    }

    /// Every name, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.0.iter().map(|entry| entry.name)
    }

    /// Whether `name` is one of this catalogue's servers.
    pub fn contains(&self, name: &str) -> bool {
        self.names().any(|n| n == name)
    }

    /// Builds server `name` for the project at `root` (already resolved).
    pub fn build(
        &self,
        name: &str,
        root: &Path,
        settings: &Settings,
    ) -> Result<Arc<dyn ToolSet>, String> {
        match self.0.iter().find(|entry| entry.name == name) {
            Some(entry) => (entry.build)(root, settings),
            None => Err(self.unknown(name)),
        }
    }

    /// The reference's message for a name this catalogue lacks (without its `[serve-mcp] `
    /// prefix: whoever prints it puts its own).
    pub fn unknown(&self, name: &str) -> String {
        let names: Vec<&str> = self.names().collect();
        format!(
            "unknown server {}; choose from {}",
            py_repr(&name.into()),
            names.join(", ")
        )
    }
}

impl Default for Catalogue {
    fn default() -> Catalogue {
        Catalogue::PRODUCT
    }
}

impl fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_offers_gitread_and_recall_only() {
        let names: Vec<&str> = Catalogue::PRODUCT.names().collect();
        assert_eq!(names, ["gitread", "recall"]);
        assert!(!Catalogue::PRODUCT.contains("conformance"));
    }

    #[test]
    fn an_unknown_name_gets_the_references_message_and_the_choices() {
        let Err(error) = Catalogue::PRODUCT.build("nope", Path::new("/"), &Settings::default())
        else {
            panic!("built a server that does not exist");
        };
        assert_eq!(error, "unknown server 'nope'; choose from gitread, recall");
    }
}
