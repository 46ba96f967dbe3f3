//! The `agentteams-mcp` command.
#![forbid(unsafe_code)]

fn main() {}
