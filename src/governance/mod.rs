//! Governance for tool sets that may change data: permission modes, approval presets (followed
//! while serving), scoped approvals by call digest, and the decision they make together.
//!
//! The engine applies the [`Governance`] it is built with to every `tools/list` and `tools/call`,
//! whatever the transport; [`crate::bind`] is how an embedder (and the `agentteams-mcp` binary)
//! builds that engine. The model, the approvals file and the digest's canonical form are documented in
//! docs/approvals.md.

pub mod canonical;
pub(crate) mod decision;
pub mod live;
pub(crate) mod mode;
pub mod presets;
mod scoped;

pub use canonical::{call_digest, canonical_call, CanonicalError};
pub use decision::{Basis, Governance, PresetsSource, Subject, Verdict};
pub use live::{InForce, LivePresets, PresetsLocation};
pub use mode::{ModeError, PermissionMode, REFUSED_MODES};
pub use presets::{Preset, PresetEffect, Presets, PresetsError, PresetsFile};
pub use scoped::{ScopedApproval, ScopedError, MAX_SCOPED_APPROVALS};
