//! The file identities gitread's pre-flight caches record ([`Stamp`], the library's
//! [`FileIdentity`](agentteams_mcp::file_identity::FileIdentity)) and how long after a change a
//! record of one may be trusted.

use std::time::Duration;

pub use agentteams_mcp::file_identity::FileIdentity as Stamp;

/// Files changed this close to (or after) the start of a look make its verdict uncacheable.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
