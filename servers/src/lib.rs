//! The agentteams MCP servers and the registry the `agentteams-mcp` binary serves them from.
//!
//! Each server is a [`ToolSet`]; the protocol, transports, policy and audit all live in the
//! `agentteams-mcp` library. [`SERVERS`], [`toolset`] and [`run_server`] are the API that
//! agentteams vendors.

#![forbid(unsafe_code)]

pub mod cli;
pub mod client_cmd;

use agentteams_mcp::server::{Engine, Session, ToolSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The servers this binary can serve, as `--serve-mcp` names them.
pub const SERVERS: &[&str] = &[];

/// Builds the tool set of server `name` for the project at `root` (already resolved).
pub fn toolset(name: &str, root: &Path) -> Result<Arc<dyn ToolSet>, String> {
    let _ = root;
    Err(unknown_server(name))
}

/// The reference's message for a name not in [`SERVERS`].
pub fn unknown_server(name: &str) -> String {
    format!(
        "[serve-mcp] unknown server {}; choose from {}",
        agentteams_mcp::jsonrpc::py_repr(&name.into()),
        SERVERS.join(", ")
    )
}

/// The project root as the reference resolves it: absolute, symlinks resolved.
pub fn resolve_root(root: Option<&Path>) -> Result<PathBuf, String> {
    let given = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("[serve-mcp] cannot read the current directory: {e}"))?,
    };
    given.canonicalize().map_err(|e| {
        format!(
            "[serve-mcp] cannot use {} as the project root: {e}",
            given.display()
        )
    })
}

/// Serves `name` for the project at `root` over stdio until stdin ends. Returns the process exit
/// code: 0 at end of input, 1 on an I/O failure, 2 for an unknown server or unusable root.
pub fn run_server(name: &str, root: &Path) -> i32 {
    let root = match resolve_root(Some(root)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let toolset = match toolset(name, &root) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let session = Session::new(Arc::new(Engine::new(toolset)));
    match agentteams_mcp::stdio::serve(&session, std::io::stdin().lock(), std::io::stdout()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("[serve-mcp] stdio failed: {e}");
            1
        }
    }
}
