//! The agentteams MCP servers and the registry the `agentteams-mcp` binary serves them from.
//!
//! Each server is a [`ToolSet`](agentteams_mcp::server::ToolSet); the protocol, transports, policy
//! and audit all live in the `agentteams-mcp` library.

#![forbid(unsafe_code)]

pub mod index;
pub mod recall;
