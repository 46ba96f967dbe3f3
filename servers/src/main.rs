//! The `agentteams-mcp` command: serve an MCP server over stdio (or HTTP), and the tools around it.
#![forbid(unsafe_code)]

use agentteams_mcp_servers::cli::{Args, UsageError};
use agentteams_mcp_servers::client_cmd;
use agentteams_mcp_servers::{run_server_with, verify_audit_log, ServeOptions, SERVERS};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  agentteams-mcp --serve-mcp NAME [--root DIR]   serve NAME over stdio (NAME: gitread, recall)
  agentteams-mcp index build [--root DIR] [--team-dir DIR]   build the indexes recall reads
  agentteams-mcp audit verify FILE [--ci]         check an audit log's hash chains
  agentteams-mcp client ...                      call an MCP server by hand (client --help)
  agentteams-mcp trust ...                       manage .agentteams/mcp-trust.json (trust --help)
  agentteams-mcp --help | --version

options:
  --root DIR, --project DIR   the project the server works on (default: the current directory)
  --allow-tool PATTERN        serve only tools matching an allow rule (repeatable; globs * and ?)
  --deny-tool PATTERN         never serve tools matching PATTERN (repeatable; deny wins)
  --policy FILE               more rules from a JSON file {\"allow\": [...], \"deny\": [...]}
  --audit-log FILE            append a hash-chained record of every tool call to FILE
  --audit-full                keep argument and result values in the audit log (default: redacted)
  --ci                        audit verify: also fail on a run without run_completed

exit codes: 0 served until end of input; 1 I/O failure; 2 usage error, unknown server or root
audit verify: 0 intact; 1 tampered (with --ci: any problem, a run without run_completed too);
2 unreadable file";

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match raw.first().map(String::as_str) {
        Some("index") => {
            return ExitCode::from(agentteams_mcp_servers::index::run_cli(&raw[1..]) as u8)
        }
        Some("client") => return ExitCode::from(client_cmd::run_client(raw[1..].to_vec())),
        Some("trust") => return ExitCode::from(client_cmd::run_trust(raw[1..].to_vec())),
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
        let options = ServeOptions {
            allow_tools: args.values("--allow-tool")?,
            deny_tools: args.values("--deny-tool")?,
            policy_file: args.value("--policy")?.map(PathBuf::from),
            audit_log: args.value("--audit-log")?.map(PathBuf::from),
            audit_full: args.flag("--audit-full"),
        };
        if options.audit_full && options.audit_log.is_none() {
            return Err(UsageError("--audit-full needs --audit-log FILE".into()));
        }
        args.finish()?;
        if !SERVERS.contains(&name.as_str()) {
            eprintln!("{}", agentteams_mcp_servers::unknown_server(&name));
            return Ok(2);
        }
        let root = root.map_or_else(|| PathBuf::from("."), PathBuf::from);
        return Ok(run_server_with(&name, &root, &options) as u8);
    }
    if args.positional().as_deref() == Some("audit") {
        if args.positional().as_deref() != Some("verify") {
            return Err(UsageError(
                "audit: expected `audit verify FILE [--ci]`".into(),
            ));
        }
        let ci = args.flag("--ci");
        let file = args
            .positional()
            .ok_or_else(|| UsageError("audit verify needs a FILE".into()))?;
        args.finish()?;
        return Ok(verify_audit_log(Path::new(&file), ci) as u8);
    }
    Err(UsageError("nothing to do: give --serve-mcp NAME".into()))
}
