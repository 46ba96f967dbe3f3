//! The `agentteams-mcp` command: serve an MCP server over stdio (or HTTP), and the tools around it.
#![forbid(unsafe_code)]

use agentteams_mcp_servers::cli::{Args, UsageError};
use agentteams_mcp_servers::client_cmd;
use agentteams_mcp_servers::{run_server, SERVERS};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  agentteams-mcp --serve-mcp NAME [--root DIR]   serve NAME over stdio (NAME: gitread, recall)
  agentteams-mcp client ...                      call an MCP server by hand (client --help)
  agentteams-mcp trust ...                       manage .agentteams/mcp-trust.json (trust --help)
  agentteams-mcp --help | --version

options:
  --root DIR, --project DIR   the project the server works on (default: the current directory)

exit codes: 0 served until end of input; 1 I/O failure; 2 usage error, unknown server or root";

fn main() -> ExitCode {
    let mut raw: Vec<String> = std::env::args().skip(1).collect();
    match raw.first().map(String::as_str) {
        Some("client") => return ExitCode::from(client_cmd::run_client(raw.split_off(1))),
        Some("trust") => return ExitCode::from(client_cmd::run_trust(raw.split_off(1))),
        _ => {}
    }
    let args = Args::new(raw);
    let code = match run(args) {
        Ok(code) => code,
        Err(UsageError(message)) => {
            eprintln!("agentteams-mcp: {message}\n\n{USAGE}");
            2
        }
    };
    ExitCode::from(code)
}

fn run(mut args: Args) -> Result<u8, UsageError> {
    if args.flag("--help") || args.flag("-h") {
        println!("{USAGE}");
        return Ok(0);
    }
    if args.flag("--version") || args.flag("-V") {
        println!("agentteams-mcp {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    if let Some(name) = args.value("--serve-mcp")? {
        let root = args.value_any(&["--root", "--project"])?;
        args.finish()?;
        if !SERVERS.contains(&name.as_str()) {
            eprintln!("{}", agentteams_mcp_servers::unknown_server(&name));
            return Ok(2);
        }
        let root = root.map_or_else(|| PathBuf::from("."), PathBuf::from);
        return Ok(run_server(&name, &root) as u8);
    }
    Err(UsageError("nothing to do: give --serve-mcp NAME".into()))
}
