//! The engine's named limits on what a client may make a session page, read, complete and hold
//! open.

/// Items per page of `resources/list`, `resources/templates/list` and `prompts/list`. The cursor
/// of the next page is the decimal offset of its first item (clients treat it as opaque).
pub const PAGE_SIZE: usize = 100;
/// Most bytes one `resources/read` result may carry (text as is, binary as Base64); a larger
/// read is refused with -32603 rather than held and sent.
pub const MAX_READ_BYTES: usize = 8 << 20;
/// Most values one completion returns (the protocol's own cap); `total` and `hasMore` tell the
/// client there were more.
pub const MAX_COMPLETION_VALUES: usize = 100;
/// Most `subscriptions/listen` streams held open by their requests at once, per engine (HTTP).
pub const MAX_LISTEN_STREAMS: usize = 64;
/// Most deferred `subscriptions/listen` streams one session (a stdio process) keeps open.
pub const MAX_LISTENS_PER_SESSION: usize = 8;
