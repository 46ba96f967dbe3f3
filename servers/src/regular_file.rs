//! Opening a file that a project controls for reading: only a regular file, and without ever
//! blocking on the way in. The implementation is the library's
//! ([`agentteams_mcp::regular_file`]), shared with the client's trust policy.

pub use agentteams_mcp::regular_file::{open, open_directory, read_at_most};
