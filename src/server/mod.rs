//! The transport-agnostic MCP engine: lifecycle, version negotiation, dispatch, argument validation
//! and result envelopes, for any [`ToolSet`].
//!
//! Transports (stdio, HTTP) parse bytes into a [`Value`](crate::json::Value), hand it to a
//! [`Session`] and write back what it returns; servers only implement [`ToolSet`]. Nothing here does
//! I/O of its own.

mod context;
mod engine;
mod revision;
mod tool;

pub use context::{
    CallContext, CancelToken, DiscardNotifications, LogLevel, Notify, MAX_LOG_DATA_BYTES,
    MAX_LOG_MESSAGES_PER_CALL,
};
pub use engine::{
    check_modern_meta, modern_protocol_version, Engine, Session, ENGINE_LOGGER, LIST_TTL_MS,
    MAX_LOG_REASON_CHARS, MAX_RESULT_TEXT_BYTES, RESULT_TRUNCATION_MARKER,
};
pub use revision::Revision;
pub use tool::{Annotations, Tool, ToolError, ToolOutput, ToolSet};
