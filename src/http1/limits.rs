//! The codec's bounds: how much of a head, a chunk line or a trailer it reads before it stops
//! with an error, on both sides. The server's own limits (connections, time) are `http::limits`,
//! which names these too.

/// Longest request line (`METHOD target HTTP/1.1`) without its CRLF; longer → 414.
pub const MAX_REQUEST_LINE: usize = 8 * 1024;

/// Largest request head (request line, headers, final blank line); larger → 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Most header fields in one request; more → 431.
pub const MAX_HEADERS: usize = 64;

/// Largest request body, sent with Content-Length or chunked; larger → 413 and the connection closes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Longest chunk-size line of a chunked body (hex size plus extensions) without its CRLF.
pub const MAX_CHUNK_LINE: usize = 1024;

/// Largest trailer section after the last chunk (trailers are read and discarded).
pub const MAX_TRAILER_BYTES: usize = 4 * 1024;

/// Largest response head accepted (status line, headers, blank line).
pub const MAX_RESPONSE_HEAD_BYTES: usize = 64 * 1024;

/// Most header fields in one response.
pub const MAX_RESPONSE_HEADERS: usize = 128;
