//! The `agentteams-mcp` binary: the command line ([`agentteams_mcp_servers::command`]) serving the
//! product's servers.
#![forbid(unsafe_code)]

use agentteams_mcp_servers::{command, Catalogue};
use std::process::ExitCode;

fn main() -> ExitCode {
    command::main(Catalogue::PRODUCT)
}
