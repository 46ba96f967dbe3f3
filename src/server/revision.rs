//! The MCP protocol revisions this engine speaks, and what each one gates.

use std::fmt;

/// The `_meta` keys a 2026-07-28 request or result carries, spelt once for the engine and the
/// client.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A protocol revision. Ordered by date, so `rev >= Revision::V2025_06_18` asks "has this feature".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    /// The stateless "modern" era: no initialize, per-request `_meta`.
    V2026_07_28,
}

impl Revision {
    /// Every supported revision, newest first (the order `supportedVersions` lists them in).
    pub const ALL_NEWEST_FIRST: [Revision; 5] = [
        Revision::V2026_07_28,
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
        Revision::V2024_11_05,
    ];

    /// What `initialize` answers for a version it does not support.
    pub const LATEST_LEGACY: Revision = Revision::V2025_11_25;

    /// What `initialize` answers when the client names no version (the reference's default).
    pub const DEFAULT_LEGACY: Revision = Revision::V2024_11_05;

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    pub fn parse(text: &str) -> Option<Revision> {
        Revision::ALL_NEWEST_FIRST
            .into_iter()
            .find(|r| r.as_str() == text)
    }

    /// Whether this revision is negotiated with `initialize` (sessions) rather than per request.
    pub fn is_legacy(self) -> bool {
        self != Revision::V2026_07_28
    }

    /// Only 2025-03-26 carries JSON-RPC batches.
    pub fn allows_batches(self) -> bool {
        self == Revision::V2025_03_26
    }

    /// Tool `annotations` and progress `message` exist from 2025-03-26.
    pub fn has_annotations(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// `title`, `outputSchema` and `structuredContent` exist from 2025-06-18.
    pub fn has_structured_output(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// From 2025-11-25 a reply's `id` is optional and not nullable: an unknown id is left out.
    pub fn omits_unknown_id(self) -> bool {
        self >= Revision::V2025_11_25
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
