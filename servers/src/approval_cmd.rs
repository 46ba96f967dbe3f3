//! The `approval` command: grant, deny, revoke and list the project's approval presets
//! (`.agentteams/approvals.json`), and compute the digest a scoped approval names.
//!
//! Every edit is one locked read-modify-write of the file through the library
//! ([`PresetsFile::edit`]): written atomically, and refused (exit 1, run again) when another edit
//! holds the file or changed it meanwhile. Everything printed from the file passes through the
//! sanitiser: the file is the project's, and anyone who can write the project can write it.

use crate::catalogue::{Catalogue, Settings};
use crate::cli::{unknown_command, Args, UsageError};
use agentteams_mcp::governance::presets::APPROVALS_PATH;
use agentteams_mcp::governance::{call_digest, Preset, PresetEffect, PresetsError, PresetsFile};
use agentteams_mcp::json::{self, Value};
use agentteams_mcp::policy::Pattern;
use agentteams_mcp::sanitize::sanitize_line;
use agentteams_mcp::voice::{self, usage_line, PREFIX};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const APPROVAL_USAGE: &str = "\
usage:
  agentteams-mcp approval grant TOOL --reason TEXT [--by NAME] [--server NAME]
  agentteams-mcp approval deny TOOL --reason TEXT [--by NAME] [--server NAME]
  agentteams-mcp approval revoke TOOL
  agentteams-mcp approval list [--json]
  agentteams-mcp approval digest TOOL [ARGUMENTS_JSON]

TOOL is a tool name or a glob (* any run of characters, ? exactly one). Every subcommand takes
--project DIR (default: .; the presets are DIR/.agentteams/approvals.json) or --approvals FILE.

  grant   approve the tools TOOL matches under permission mode prompt (tools that only read need
          no approval; under read-only nothing that changes data runs, whatever is granted)
  deny    refuse the tools TOOL matches in every mode, allow and danger-full-access included
  revoke  drop the preset whose pattern is exactly TOOL
  list    the presets, in the order they are matched
  digest  print TOOL:SHA256 for --approve-scoped: the digest of calling TOOL with ARGUMENTS_JSON
          (default {}) in the canonical form of docs/approvals.md

  --reason TEXT   why (required by grant and deny; shown by list and in refusals)
  --by NAME       who adds it (default: $USER)
  --server NAME   check TOOL against the tools server NAME serves for --project (gitread,
                  recall): an exact name it does not serve, or a glob that matches none of its
                  tools, is an error

exit codes: 0 done; 1 nothing to revoke, or another edit held or changed the file (run again);
2 usage error, unusable approvals file, or unknown tool name";

const EXIT_OK: u8 = 0;
const EXIT_RETRY: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// Writes one line to stdout or stderr, sanitised and kept on one line. A closed stream is no
/// reason to fail.
fn say(to_stderr: bool, line: &str) {
    voice::say(to_stderr, &sanitize_line(line));
}

fn usage(e: UsageError) -> u8 {
    say(true, &usage_line(Some("approval"), &e));
    EXIT_USAGE
}

fn failed(e: &PresetsError) -> u8 {
    say(true, &format!("{PREFIX}approval: {e}"));
    if e.is_retryable() {
        EXIT_RETRY
    } else {
        EXIT_USAGE
    }
}

/// `agentteams-mcp approval ...`: the arguments after `approval`. Returns the exit code.
pub fn run_approval(argv: Vec<String>, catalogue: Catalogue) -> u8 {
    if argv.iter().any(|a| a == "--help" || a == "-h") {
        voice::say(false, APPROVAL_USAGE);
        return EXIT_OK;
    }
    let (verb, rest) = split_verb(argv);
    let mut args = Args::new(rest);
    match command(verb.as_deref(), &mut args, catalogue) {
        Ok(code) => code,
        Err(e) => usage(e),
    }
}

/// Options of the subcommands that take a value (`--name VALUE`): their value is never the verb.
const VALUED_OPTIONS: [&str; 6] = [
    "--project",
    "--root",
    "--approvals",
    "--reason",
    "--by",
    "--server",
];

/// Takes the subcommand out of `argv`: the first argument that is neither an option nor the value
/// of one (so `--project DIR` before the verb is not read as a verb).
fn split_verb(mut argv: Vec<String>) -> (Option<String>, Vec<String>) {
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--" {
            break;
        }
        if !a.starts_with("--") {
            let verb = argv.remove(i);
            return (Some(verb), argv);
        }
        i += if VALUED_OPTIONS.contains(&a.as_str()) {
            2
        } else {
            1
        };
    }
    (None, argv)
}

/// The approvals file the options name: `--approvals FILE`, or the project's (confined to it).
fn approvals_path(args: &mut Args) -> Result<(PathBuf, PathBuf), UsageError> {
    let file = args.value("--approvals")?;
    let project = args.value_any(&["--project", "--root"])?;
    let root = project.map_or_else(|| PathBuf::from("."), PathBuf::from);
    let path = match file {
        Some(file) => PathBuf::from(file),
        None => agentteams_mcp::project_file::confined(&root, APPROVALS_PATH)
            .map_err(|e| UsageError(e.to_string()))?,
    };
    Ok((root, path))
}

/// The subcommands, as the help lists them.
const VERBS: [&str; 5] = ["grant", "deny", "revoke", "list", "digest"];

fn command(verb: Option<&str>, args: &mut Args, catalogue: Catalogue) -> Result<u8, UsageError> {
    match verb {
        Some("grant") => edit(args, PresetEffect::Grant, catalogue),
        Some("deny") => edit(args, PresetEffect::Deny, catalogue),
        Some("revoke") => revoke(args),
        Some("list") => list(args),
        Some("digest") => digest(args),
        Some(other) => Err(unknown_command(other, &VERBS, None)),
        None => Err(UsageError(
            "give an approval command: grant, deny, revoke, list or digest".into(),
        )),
    }
}

fn finish(args: &mut Args) -> Result<(), UsageError> {
    std::mem::replace(args, Args::new(Vec::new())).finish()
}

fn edit(args: &mut Args, effect: PresetEffect, catalogue: Catalogue) -> Result<u8, UsageError> {
    let verb = effect.as_str();
    let (root, path) = approvals_path(args)?;
    let reason = args.value("--reason")?;
    let by = args.value("--by")?;
    let server = args.value("--server")?;
    let tool = args
        .positional()
        .ok_or_else(|| UsageError(format!("approval {verb} needs a TOOL (a name or a glob)")))?;
    finish(args)?;
    let Some(reason) = reason else {
        return Err(UsageError(format!(
            "approval {verb} needs --reason TEXT: say why, for whoever reads the file next"
        )));
    };
    let by = by
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .unwrap_or_else(|| "unknown".to_owned());
    let added_at = agentteams_mcp::time::rfc3339(std::time::SystemTime::now());
    let preset = match Preset::new(effect, &tool, &reason, &by, &added_at) {
        Ok(p) => p,
        Err(e) => return Ok(failed(&e)),
    };
    if let Some(server) = server {
        if let Err(message) = check_tool(catalogue, &server, &root, &preset.pattern) {
            say(true, &format!("{PREFIX}approval: {message}"));
            return Ok(EXIT_USAGE);
        }
    }
    let pattern = preset.pattern.as_str().to_owned();
    match PresetsFile::edit(&path, |presets| presets.set(preset)) {
        Ok(replaced) => {
            let note = replaced
                .map(|old| format!(" (replacing its {} preset)", old.effect.as_str()))
                .unwrap_or_default();
            say(
                false,
                &format!("{verb} {pattern:?} in {}{note}", path.display()),
            );
            Ok(EXIT_OK)
        }
        Err(e) => Ok(failed(&e)),
    }
}

/// Checks `pattern` against the tools server `name` serves for the project at `root`.
fn check_tool(
    catalogue: Catalogue,
    name: &str,
    root: &Path,
    pattern: &Pattern,
) -> Result<(), String> {
    if !catalogue.contains(name) {
        return Err(catalogue.unknown(name));
    }
    let root = crate::startup::checked_root(name, root)?;
    let tools = catalogue.build(name, &root, &Settings::default())?.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    if names.iter().any(|n| pattern.matches(n)) {
        return Ok(());
    }
    let what = if pattern.is_exact() {
        "is not a tool of"
    } else {
        "matches none of the tools of"
    };
    Err(format!(
        "{:?} {what} {name} ({}); check the spelling, or leave out --server to file it unchecked",
        pattern.as_str(),
        names.join(", ")
    ))
}

fn revoke(args: &mut Args) -> Result<u8, UsageError> {
    let (_, path) = approvals_path(args)?;
    let tool = args
        .positional()
        .ok_or_else(|| UsageError("approval revoke needs the TOOL pattern of a preset".into()))?;
    finish(args)?;
    let removed = PresetsFile::edit(&path, |presets| {
        presets.revoke(&tool).ok_or_else(|| {
            PresetsError::not_found(format!(
                "no preset has the pattern {tool:?} in {} (approval list shows them)",
                path.display()
            ))
        })
    });
    match removed {
        Ok(old) => {
            say(
                false,
                &format!(
                    "revoked the {} preset {:?} in {}",
                    old.effect.as_str(),
                    tool,
                    path.display()
                ),
            );
            Ok(EXIT_OK)
        }
        Err(e) if e.is_not_found() => {
            say(true, &format!("{PREFIX}approval: {e}"));
            Ok(EXIT_RETRY)
        }
        Err(e) => Ok(failed(&e)),
    }
}

fn list(args: &mut Args) -> Result<u8, UsageError> {
    let (_, path) = approvals_path(args)?;
    let json_out = args.flag("--json");
    finish(args)?;
    let file = match PresetsFile::load_path(&path) {
        Ok(f) => f,
        Err(e) => return Ok(failed(&e)),
    };
    if json_out {
        // The file's own form: pretty, sorted, every non-ASCII character escaped.
        let _ = write!(std::io::stdout().lock(), "{}", file.presets().to_json());
        return Ok(EXIT_OK);
    }
    let presets = file.presets().entries();
    let state = if !file.existed() {
        "no file: no presets".to_owned()
    } else {
        agentteams_mcp::voice::counted(presets.len() as u64, "preset")
    };
    say(false, &format!("approvals: {} ({state})", path.display()));
    for p in presets {
        say(
            false,
            &format!(
                "  {:<5} {:?} by {} at {}: {}",
                p.effect.as_str(),
                p.pattern.as_str(),
                p.added_by,
                p.added_at,
                p.reason
            ),
        );
    }
    Ok(EXIT_OK)
}

fn digest(args: &mut Args) -> Result<u8, UsageError> {
    // Taken like every subcommand's, though a digest depends on no file.
    approvals_path(args)?;
    let tool = args
        .positional()
        .ok_or_else(|| UsageError("approval digest needs a TOOL".into()))?;
    let arguments = args.positional().unwrap_or_else(|| "{}".to_owned());
    finish(args)?;
    let pattern = Pattern::parse(&tool).map_err(|e| UsageError(format!("TOOL: {e}")))?;
    if !pattern.is_exact() {
        return Err(UsageError(
            "approval digest needs an exact tool name, not a glob".into(),
        ));
    }
    let arguments = match json::parse(arguments.as_bytes()) {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            return Err(UsageError(format!(
                "ARGUMENTS_JSON must be a JSON object, not {}",
                other.type_name()
            )))
        }
        Err(e) => return Err(UsageError(format!("ARGUMENTS_JSON is not JSON: {e}"))),
    };
    match call_digest(&tool, &arguments) {
        Ok(d) => {
            say(false, &format!("{tool}:{d}"));
            Ok(EXIT_OK)
        }
        Err(e) => {
            say(
                true,
                &format!("{PREFIX}approval: this call cannot be approved by digest: {e}"),
            );
            Ok(EXIT_USAGE)
        }
    }
}
