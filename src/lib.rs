//! agentteams-mcp: the Model Context Protocol stack the agentteams servers run on, written on Rust's
//! standard library alone.
//!
//! Layers, bottom up: [`json`] (values, parser, writers), [`jsonrpc`] (message classification and
//! error codes), [`declared`] (what a server declares about an item: its name and annotations),
//! the governance the engine applies ([`policy`], [`governance`]: tool policy, permission modes,
//! approval presets, scoped approvals; it decides from [`declared`] types only), [`server`] (the
//! transport-agnostic engine and the [`server::ToolSet`] trait servers implement), then
//! [`bind::bind`] (the one call that builds an engine for a workspace) and the transports
//! ([`stdio`], [`http`]). Beside them, [`crypto`] verifies signed tokens (JWS with RSA, ECDSA P-256
//! and Ed25519 keys from JWK Sets) on the digests of [`sha256`] and [`hmac`], for [`auth`], the
//! OAuth resource server the HTTP transport consults in OAuth mode (token validation, key sets,
//! introspection, scopes). This crate knows MCP and nothing of git or indexes:
//! the servers live in the `agentteams-mcp-servers` package.

#![forbid(unsafe_code)]

/// Makes `$error`, a one-field tuple struct holding one line of text for the operator, an error:
/// `Display` writes the line as it is, and it is a `std::error::Error`.
macro_rules! one_line_error {
    ($error:ty) => {
        impl std::fmt::Display for $error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::error::Error for $error {}
    };
}

pub mod audit;
pub mod auth;
pub mod base64;
pub mod bind;
pub mod client;
pub mod confined_write;
pub mod crypto;
/// SHA-256 and HMAC live with the other hashes in [`crypto`]; these paths stay for embedders.
pub use crypto::{hmac, sha256};
pub mod declared;
pub mod file_identity;
pub mod governance;
pub mod http;
pub mod http1;
pub mod json;
pub mod jsonrpc;
pub mod policy;
pub mod process_group;
pub mod project_file;
pub mod random;
pub mod regular_file;
pub mod sanitize;
pub mod schema;
pub mod server;
pub mod stdio;
pub mod time;
pub mod voice;
