//! An embedder's write tool governed end to end: one `write_file` tool that really writes, bound
//! to a workspace with [`bind::bind`] (one call: tool set, root, permission mode, transport)
//! and driven through `handle_message`; the same binding serves stdio.
//!
//! `cargo run --example governed_write` walks through the model in a temporary workspace:
//! 1. under `prompt`, a write is refused (-32001) and the refusal names the call's digest;
//! 2. bound again with that digest as a scoped approval, exactly that call runs, and no other;
//! 3. a deny preset refuses the tool even under `danger-full-access`.
//!
//! `cargo run --example governed_write -- serve MODE [ROOT]` serves the tool over stdio under
//! MODE (read-only, prompt, allow, danger-full-access) with ROOT's `.agentteams/approvals.json`.

#![forbid(unsafe_code)]

use agentteams_mcp::bind::{self, BindOptions};
use agentteams_mcp::confined_write;
use agentteams_mcp::governance::{
    call_digest, PermissionMode, Preset, PresetEffect, PresetsFile, ScopedApproval,
};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::server::{
    Annotations, CallContext, Session, Tool, ToolError, ToolOutput, ToolSet,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes text files inside one workspace.
struct Files {
    root: PathBuf,
}

/// Largest file `write_file` writes: an example, not a file server.
const MAX_TEXT_BYTES: usize = 64 * 1024;

impl ToolSet for Files {
    fn server_name(&self) -> &str {
        "example-governed-write"
    }

    fn tools(&self) -> Vec<Tool> {
        let schema = json::parse(
            br#"{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"],"additionalProperties":false}"#,
        )
        .expect("the schema is JSON");
        // What the server declares is all the governance reads: this tool changes data.
        vec![Tool::new(
            "write_file",
            "Writes text to a file in the workspace.",
            schema,
        )
        .annotations(Annotations {
            read_only: false,
            destructive: true,
            idempotent: true,
            open_world: false,
        })]
    }

    fn call(&self, _: &str, args: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
        if text.len() > MAX_TEXT_BYTES {
            return Err(ToolError::new(format!(
                "text is longer than {MAX_TEXT_BYTES} bytes"
            )));
        }
        let path = args.get("path").and_then(Value::as_str).unwrap_or_default();
        // Never `root.join(path)` and `fs::write`: a link in the workspace (to `.agentteams/`, or
        // out of it) would take the write with it. The library's confined write follows no link,
        // refuses `..` and the governance folder (a tool that could write the approval presets
        // could approve itself) and replaces the file atomically.
        confined_write::write(&self.root, path, text.as_bytes())
            .map_err(|e| ToolError::new(e.to_string()))?;
        Ok(ToolOutput::Value(json::obj([
            ("written", Value::from(path)),
            ("bytes", Value::from(text.len() as u64)),
        ])))
    }
}

fn call(session: &Session, arguments: &str) -> Value {
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"write_file","arguments":{arguments}}}}}"#
    );
    session
        .handle_message(json::parse(message.as_bytes()).expect("valid JSON"))
        .expect("a request gets a reply")
}

fn outcome(reply: &Value) -> String {
    match reply.get("error") {
        Some(e) => format!(
            "refused {}: {}",
            e.get("code").and_then(Value::as_i64).unwrap_or_default(),
            e.get("message").and_then(Value::as_str).unwrap_or_default()
        ),
        None => format!(
            "ran: {}",
            json::to_string(reply.get("result").unwrap_or(&Value::Null))
        ),
    }
}

fn bound(root: &Path, mode: PermissionMode, options: BindOptions) -> bind::Binding {
    let tools = Arc::new(Files {
        root: root.to_owned(),
    });
    bind::bind(tools, root, mode, "embedded", options).unwrap_or_else(|e| {
        eprintln!("cannot bind: {e}");
        std::process::exit(2)
    })
}

fn walkthrough() {
    let root = std::env::temp_dir().join(format!("governed-write-{}", std::process::id()));
    std::fs::create_dir_all(&root).expect("a temporary workspace");
    let root = root.canonicalize().expect("the workspace resolves");
    let arguments = r#"{"path":"hello.txt","text":"hi"}"#;

    println!("1. permission mode prompt, no approvals:");
    let binding = bound(&root, PermissionMode::Prompt, BindOptions::default());
    println!("   {}", outcome(&call(&binding.session(), arguments)));

    let parsed = json::parse(arguments.as_bytes()).expect("valid JSON");
    let digest = call_digest("write_file", parsed.as_object().expect("an object"))
        .expect("these arguments have a canonical form");
    println!("2. bound again with --approve-scoped write_file:{digest}:");
    let options = BindOptions {
        scoped: vec![ScopedApproval {
            tool: "write_file".into(),
            digest,
        }],
        ..BindOptions::default()
    };
    let binding = bound(&root, PermissionMode::Prompt, options);
    let session = binding.session();
    println!(
        "   the approved call: {}",
        outcome(&call(&session, arguments))
    );
    println!(
        "   same arguments, other order: {}",
        outcome(&call(&session, r#"{"text":"hi","path":"hello.txt"}"#))
    );
    println!(
        "   other arguments: {}",
        outcome(&call(&session, r#"{"path":"hello.txt","text":"bye"}"#))
    );

    println!("3. a deny preset, permission mode danger-full-access:");
    let deny = Preset::new(
        PresetEffect::Deny,
        "write_*",
        "writes need review this week",
        "example",
        "2026-12-01T00:00:00.000Z",
    )
    .expect("a valid preset");
    let path = PresetsFile::path(&root);
    PresetsFile::edit(&path, |presets| presets.set(deny)).expect("the presets are written");
    let binding = bound(
        &root,
        PermissionMode::DangerFullAccess,
        BindOptions::default(),
    );
    println!("   {}", outcome(&call(&binding.session(), arguments)));

    let _ = std::fs::remove_dir_all(&root);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => walkthrough(),
        Some("serve") => {
            let mode = args
                .get(1)
                .map_or(Ok(PermissionMode::DEFAULT), |m| PermissionMode::parse(m));
            let mode = mode.unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(2)
            });
            let root = PathBuf::from(args.get(2).map_or(".", String::as_str));
            let binding = bound(&root, mode, BindOptions::default());
            let session = binding.session();
            if let Err(e) =
                agentteams_mcp::stdio::serve(&session, std::io::stdin(), std::io::stdout())
            {
                eprintln!("stdio failed: {e}");
                std::process::exit(1);
            }
        }
        Some(other) => {
            eprintln!("usage: governed_write [serve MODE [ROOT]] (not {other:?})");
            std::process::exit(2);
        }
    }
}
