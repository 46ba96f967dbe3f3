//! The transport-agnostic MCP engine: lifecycle, version negotiation, dispatch, argument validation
//! and result envelopes, for any [`ToolSet`] and the [`ResourceSet`] and [`PromptSet`] it may
//! offer.
//!
//! Transports (stdio, HTTP) parse bytes into a [`Value`](crate::json::Value), hand it to a
//! [`Session`] and write back what it returns; servers only implement [`ToolSet`]. Nothing here does
//! I/O of its own.

mod context;
mod engine;
mod error;
mod input;
mod outbound;
mod prompt;
pub mod reach;
mod resource;
pub mod revision;
mod signal;
mod tool;
pub mod uri;
mod wire;

pub use context::{
    CallContext, CancelToken, DiscardNotifications, LogLevel, Notify, MAX_LOG_DATA_BYTES,
    MAX_LOG_MESSAGES_PER_CALL,
};
pub use engine::{
    check_modern_meta, modern_protocol_version, Engine, Session, ENGINE_LOGGER, LIST_TTL_MS,
    MAX_COMPLETION_VALUES, MAX_LISTENS_PER_SESSION, MAX_LISTEN_STREAMS, MAX_LOG_REASON_CHARS,
    MAX_READ_BYTES, MAX_RESULT_TEXT_BYTES, PAGE_SIZE, RESULT_TRUNCATION_MARKER,
};
pub use error::{RequestError, RequestErrorKind};
pub use input::{
    MAX_INPUT_REQUESTS_PER_CALL, MAX_INPUT_RESPONSES, MAX_REQUEST_STATE_BYTES,
    REQUEST_STATE_LIFETIME,
};
pub use outbound::{
    ClientRequestError, DEFAULT_CLIENT_REQUEST_TIMEOUT, MAX_CLIENT_REQUEST_TIMEOUT,
    MAX_PENDING_CLIENT_REQUESTS,
};
pub use prompt::{
    Prompt, PromptArgument, PromptMessage, PromptOutput, PromptSet, Role, MAX_PROMPT_ARGUMENTS,
    MAX_PROMPT_ARGUMENT_BYTES,
};
pub use resource::{
    Body, NotificationSink, ReadRequest, Resource, ResourceContents, ResourceNotifier, ResourceSet,
    ResourceTemplate, MAX_PENDING_NOTIFICATIONS, MAX_SUBSCRIPTIONS_PER_SESSION,
};
pub use revision::Revision;
pub use tool::{Annotations, Tool, ToolError, ToolOutput, ToolSet};
pub use wire::Wire;
