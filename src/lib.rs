//! agentteams-mcp: the Model Context Protocol stack the agentteams servers run on, written on Rust's
//! standard library alone.
//!
//! Layers, bottom up: [`json`] (values, parser, writers), [`jsonrpc`] (message classification and
//! error codes), [`server`] (the transport-agnostic engine and the [`server::ToolSet`] trait servers
//! implement), the governance it applies ([`policy`], [`governance`]: permission modes, approval
//! presets, scoped approvals, and [`governance::bind`], the one call that builds an engine for a
//! workspace), and the transports ([`stdio`], [`http`]). This crate knows MCP and nothing of git or indexes:
//! the servers live in the `agentteams-mcp-servers` package.

#![forbid(unsafe_code)]

pub mod audit;
pub mod client;
pub mod governance;
pub mod hmac;
pub mod http;
pub mod json;
pub mod jsonrpc;
pub mod policy;
pub mod process_group;
pub mod project_file;
pub mod regular_file;
pub mod sanitize;
pub mod schema;
pub mod server;
pub mod sha256;
pub mod stdio;
pub mod time;
