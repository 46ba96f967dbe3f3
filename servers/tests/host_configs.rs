//! Every host configuration docs/hosts.md shows works as written: each snippet is read from the
//! page and parsed in its own format (JSON with the project's parser; TOML and YAML with a strict
//! reader of exactly the shapes the page uses, which refuses anything else), must configure both
//! servers under their own names with the binary's absolute path, and each entry is then started
//! as written (the page's example paths replaced by the built binary and a fixture repository whose index
//! was built by the page's own `index build` command) and must answer `initialize` and
//! `tools/list`. A snippet that stops parsing, names a flag or server the binary lacks, or loses
//! one of the two servers fails here.

mod gitread_support;

use agentteams_mcp::json::{self, Value};
use gitread_support::{git, write, TempDir};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");
/// The install path docs/hosts.md writes for the binary.
const DOC_BINARY_PATH: &str = "/usr/local/bin/agentteams-mcp";
/// The example project path docs/hosts.md writes for the repository.
const DOC_ROOT_PATH: &str = "/path/to/repo";
/// The servers every host's configuration must start.
const SERVERS: [&str; 2] = ["gitread", "recall"];
/// The hosts the page must configure, by their section titles.
const HOSTS: [&str; 6] = [
    "VS Code",
    "Claude Desktop",
    "Claude Code",
    "Cursor",
    "Codex",
    "Goose",
];

/// A fenced block of the page: the section it is in, its language, its text, its first line.
struct Block {
    section: String,
    lang: String,
    text: String,
    line: usize,
}

/// One server as a host would start it.
#[derive(Debug, PartialEq)]
struct Entry {
    name: String,
    command: String,
    args: Vec<String>,
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut open: Option<Block> = None;
    for (n, line) in page.lines().enumerate() {
        if let Some(block) = open.as_mut() {
            if line.trim_start().starts_with("```") {
                out.push(open.take().unwrap());
            } else {
                block.text.push_str(line);
                block.text.push('\n');
            }
        } else if let Some(lang) = line.strip_prefix("```") {
            open = Some(Block {
                section: section.clone(),
                lang: lang.trim().to_owned(),
                text: String::new(),
                line: n + 1,
            });
        } else if let Some(title) = line.strip_prefix("## ") {
            section = title.trim().to_owned();
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The formats.

/// A JSON host file: `key` (`servers` or `mcpServers`) maps names to `{command, args}`, plus
/// `"type": "stdio"` where `typed`; any other member is refused.
fn json_entries(text: &str, key: &str, typed: bool) -> Result<Vec<Entry>, String> {
    let doc = json::parse(text.as_bytes()).map_err(|e| format!("not JSON: {e}"))?;
    let top = doc.as_object().ok_or("not an object")?;
    if top.keys().map(|k| k.as_str()).collect::<Vec<_>>() != [key] {
        return Err(format!("the only top-level member must be `{key}`"));
    }
    let servers = top
        .get(key)
        .and_then(Value::as_object)
        .ok_or("no servers")?;
    let mut out = Vec::new();
    for (name, server) in servers.iter() {
        let server = server.as_object().ok_or("a server is not an object")?;
        let mut allowed = vec!["command", "args"];
        if typed {
            allowed.push("type");
            if server.get("type").and_then(Value::as_str) != Some("stdio") {
                return Err(format!("{}: `type` must be \"stdio\"", name.as_str()));
            }
        }
        if let Some(extra) = server.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "{}: unexpected member `{}`",
                name.as_str(),
                extra.as_str()
            ));
        }
        let command = server.get("command").and_then(Value::as_str);
        let args = server.get("args").and_then(Value::as_array);
        let (Some(command), Some(args)) = (command, args) else {
            return Err(format!("{}: needs `command` and `args`", name.as_str()));
        };
        let args = args
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_owned)
                    .ok_or("an argument is not a string")
            })
            .collect::<Result<_, _>>()?;
        out.push(Entry {
            name: name.as_str().to_owned(),
            command: command.to_owned(),
            args,
        });
    }
    Ok(out)
}

/// A double-quoted string without escapes (the page needs none), and what follows it.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let rest = s
        .strip_prefix('"')
        .ok_or_else(|| format!("expected a string at `{s}`"))?;
    let end = rest.find('"').ok_or("an unterminated string")?;
    let value = &rest[..end];
    if value.contains('\\') {
        return Err("escapes are not used here".into());
    }
    Ok((value.to_owned(), &rest[end + 1..]))
}

/// `["a", "b"]`: a flow list of double-quoted strings, as TOML and YAML both write it here.
fn string_list(s: &str) -> Result<Vec<String>, String> {
    let mut rest = s
        .trim()
        .strip_prefix('[')
        .ok_or("a list must start with [")?
        .trim_start();
    let mut out = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            if !after.trim().is_empty() {
                return Err(format!("text after the list: `{after}`"));
            }
            return Ok(out);
        }
        if !out.is_empty() {
            rest = rest
                .strip_prefix(',')
                .ok_or("items must be separated by ,")?
                .trim_start();
        }
        let (item, after) = quoted(rest)?;
        out.push(item);
        rest = after.trim_start();
    }
}

/// Codex's TOML as the page writes it: `[mcp_servers.NAME]` tables of `command = "…"` and
/// `args = [...]`, blank lines between them; nothing else.
fn toml_entries(text: &str) -> Result<Vec<Entry>, String> {
    let mut out: Vec<Entry> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(table) = line.strip_prefix("[mcp_servers.") {
            let name = table
                .strip_suffix(']')
                .ok_or("a table header must end with ]")?;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("a bare table name: `{name}`"));
            }
            out.push(Entry {
                name: name.to_owned(),
                command: String::new(),
                args: Vec::new(),
            });
            continue;
        }
        let entry = out
            .last_mut()
            .ok_or("a key before any [mcp_servers.NAME] table")?;
        let (key, value) = line
            .split_once(" = ")
            .ok_or(format!("not `key = value`: `{line}`"))?;
        match key {
            "command" if entry.command.is_empty() => {
                let (command, rest) = quoted(value)?;
                if !rest.trim().is_empty() {
                    return Err(format!("text after the string: `{rest}`"));
                }
                entry.command = command;
            }
            "args" if entry.args.is_empty() => entry.args = string_list(value)?,
            _ => return Err(format!("an unexpected or repeated key `{key}`")),
        }
    }
    Ok(out)
}

/// Goose's YAML as the page writes it: `extensions:`, then per server a two-space `NAME:` and
/// four-space `key: value` lines (`name`, `type: stdio`, `cmd`, `args: [...]`, `enabled: true`,
/// `timeout: N`), every key once; nothing else.
fn yaml_entries(text: &str) -> Result<Vec<Entry>, String> {
    let mut lines = text.lines();
    if lines.next() != Some("extensions:") {
        return Err("the first line must be `extensions:`".into());
    }
    let mut out: Vec<(Entry, Vec<String>)> = Vec::new();
    for line in lines {
        if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')) {
            if name.is_empty() || name.starts_with(' ') {
                return Err(format!("a bad extension line: `{line}`"));
            }
            let entry = Entry {
                name: name.to_owned(),
                command: String::new(),
                args: Vec::new(),
            };
            out.push((entry, Vec::new()));
            continue;
        }
        let body = line
            .strip_prefix("    ")
            .filter(|b| !b.starts_with(' '))
            .ok_or(format!("not a four-space `key: value`: `{line}`"))?;
        let (entry, seen) = out.last_mut().ok_or("a key before any extension")?;
        let (key, value) = body
            .split_once(": ")
            .ok_or(format!("not `key: value`: `{line}`"))?;
        if seen.iter().any(|k| k == key) {
            return Err(format!("`{key}` given twice"));
        }
        seen.push(key.to_owned());
        match key {
            "name" if value == entry.name => {}
            "type" if value == "stdio" => {}
            "enabled" if value == "true" => {}
            "timeout" if value.parse::<u32>().is_ok_and(|t| t > 0) => {}
            "cmd" if !value.is_empty() && !value.contains([' ', '"', '\'', '#']) => {
                entry.command = value.to_owned();
            }
            "args" => entry.args = string_list(value)?,
            _ => return Err(format!("an unexpected key or value: `{line}`")),
        }
    }
    out.into_iter()
        .map(|(entry, seen)| match seen.len() {
            6 => Ok(entry),
            _ => Err(format!(
                "{}: needs name, type, cmd, args, enabled, timeout",
                entry.name
            )),
        })
        .collect()
}

/// `claude mcp add NAME -- COMMAND ARGS...` lines (and `claude mcp list`); nothing else.
fn claude_entries(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["claude", "mcp", "list"] => {}
            ["claude", "mcp", "add", name, "--", command, args @ ..] => out.push(Entry {
                name: (*name).to_owned(),
                command: (*command).to_owned(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
            }),
            _ => {
                return Err(format!(
                    "not a `claude mcp add NAME -- COMMAND ARGS...` line: `{line}`"
                ))
            }
        }
    }
    Ok(out)
}

/// The entries of one host's section, read in the format its block is in.
fn host_entries(host: &str, block: &Block) -> Result<Vec<Entry>, String> {
    match (host, block.lang.as_str()) {
        ("VS Code", "json") => json_entries(&block.text, "servers", true),
        ("Claude Desktop" | "Cursor", "json") => json_entries(&block.text, "mcpServers", false),
        ("Claude Code", "sh") => claude_entries(&block.text),
        ("Codex", "toml") => toml_entries(&block.text),
        ("Goose", "yaml") => yaml_entries(&block.text),
        (_, lang) => Err(format!("a ```{lang} block is not this host's format")),
    }
}

// ---------------------------------------------------------------------------------------------
// Running an entry.

/// A repository with a commit and a document, as a project served by both servers.
fn fixture() -> TempDir {
    let dir = TempDir::new("host-configs");
    git(&dir.path, &["init", "-q", "-b", "main"]);
    write(
        &dir.join("docs/guide.md"),
        "# Key rotation\n\nRotate the session key every month.\n",
    );
    write(&dir.join("src/lib.rs"), "pub fn rotate() {}\n");
    git(&dir.path, &["add", "."]);
    git(&dir.path, &["commit", "-q", "-m", "first"]);
    dir
}

/// `args` with the page's example project path replaced by `root`.
fn placed(args: &[String], root: &Path) -> Vec<String> {
    let root = root.to_str().unwrap();
    args.iter()
        .map(|a| a.replace(DOC_ROOT_PATH, root))
        .collect()
}

/// Starts `entry` as a host would (the page's install path standing for the built binary), asks
/// `initialize` and `tools/list`, closes its input; the replies and its stderr.
fn start(entry: &Entry, root: &Path) -> (Vec<Value>, String) {
    let mut child = Command::new(BIN)
        .args(placed(&entry.args, root))
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host-configs","version":"1"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                "\n"
            )
            .as_bytes(),
        )
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let replies = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (replies, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The tool names of the reply to request `id` among `replies`.
fn tool_names(replies: &[Value], id: i64) -> Vec<String> {
    let reply = replies
        .iter()
        .find(|r| r.get("id").and_then(Value::as_i64) == Some(id))
        .expect("a reply to tools/list");
    let tools = reply.get("result").and_then(|r| r.get("tools"));
    tools
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_host_configuration_starts_both_servers_as_written() {
    let page_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hosts.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/hosts.md");
    let blocks = blocks(&page);
    let project = fixture();
    let root = project.path.to_str().unwrap();

    // The page's own index command builds recall's index.
    let build = format!("agentteams-mcp index build --root {DOC_ROOT_PATH}");
    let documented = blocks
        .iter()
        .any(|b| b.lang == "sh" && b.text.lines().any(|l| l.trim() == build));
    assert!(
        documented,
        "docs/hosts.md must show `{build}` before recall is started"
    );
    let built = Command::new(BIN)
        .args(["index", "build", "--root", root])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );

    let mut failures = Vec::new();
    for host in HOSTS {
        let mine: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.section == host && b.lang != "text")
            .collect();
        let [block] = mine.as_slice() else {
            failures.push(format!(
                "{host}: expected one configuration block, found {}",
                mine.len()
            ));
            continue;
        };
        let entries = match host_entries(host, block) {
            Ok(entries) => entries,
            Err(e) => {
                failures.push(format!("docs/hosts.md:{} ({host}): {e}", block.line));
                continue;
            }
        };
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        if names != SERVERS {
            failures.push(format!("{host}: configures {names:?}, not {SERVERS:?}"));
        }
        for entry in &entries {
            let label = format!("{host} / {}", entry.name);
            if entry.command != DOC_BINARY_PATH {
                failures.push(format!(
                    "{label}: command `{}` is not {DOC_BINARY_PATH}",
                    entry.command
                ));
                continue;
            }
            let serves = ["--serve-mcp", &entry.name, "--root", DOC_ROOT_PATH];
            if !entry.args.starts_with(&serves.map(str::to_owned)) {
                failures.push(format!(
                    "{label}: args {:?} do not start with {serves:?}",
                    entry.args
                ));
                continue;
            }
            let (replies, stderr) = start(entry, &project.path);
            let info = replies
                .iter()
                .find(|r| r.get("id").and_then(Value::as_i64) == Some(1))
                .and_then(|r| r.get("result"))
                .and_then(|r| r.get("serverInfo"));
            if info.is_none() {
                failures.push(format!(
                    "{label}: no answer to initialize; stderr: {stderr}"
                ));
                continue;
            }
            let tools = tool_names(&replies, 2);
            let expected = if entry.name == "gitread" {
                "git_log"
            } else {
                "query_index"
            };
            if !tools.iter().any(|t| t == expected) {
                failures.push(format!("{label}: tools/list lacks {expected}: {tools:?}"));
            }
            // recall without an index says so, naming the build command.
            if stderr.contains("index build") {
                failures.push(format!("{label}: served without its index: {stderr}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readers_refuse_shapes_the_page_does_not_use() {
    let ok_toml = "[mcp_servers.a]\ncommand = \"/x\"\nargs = [\"--serve-mcp\", \"a\"]\n";
    assert_eq!(
        toml_entries(ok_toml).unwrap(),
        [Entry {
            name: "a".into(),
            command: "/x".into(),
            args: vec!["--serve-mcp".into(), "a".into()]
        }]
    );
    for bad in [
        "command = \"/x\"\n",
        "[mcp_servers.a]\ncommand = \"/x\" # c\n",
        "[mcp_servers.a]\nargs = [\"a\" \"b\"]\n",
        "[mcp_servers.a]\nenv = { A = \"1\" }\n",
        "[mcp_servers.a]\ncommand = \"/x\"\ncommand = \"/y\"\n",
    ] {
        assert!(toml_entries(bad).is_err(), "accepted: {bad}");
    }
    let ok_yaml = "extensions:\n  a:\n    name: a\n    type: stdio\n    cmd: /x\n    args: [\"b\"]\n    enabled: true\n    timeout: 300\n";
    assert_eq!(yaml_entries(ok_yaml).unwrap()[0].args, ["b"]);
    for bad in [
        ok_yaml.replace("    type: stdio", "    type: sse"),
        ok_yaml.replace("    enabled: true\n", ""),
        ok_yaml.replace("    cmd: /x", "     cmd: /x"),
        ok_yaml.replace("    name: a", "    name: b"),
        ok_yaml.replace("extensions:", "extension:"),
    ] {
        assert!(yaml_entries(&bad).is_err(), "accepted: {bad}");
    }
    assert!(json_entries(
        r#"{"servers": {"a": {"command": "/x", "args": []}}}"#,
        "servers",
        true
    )
    .is_err());
    assert!(json_entries(
        r#"{"mcpServers": {"a": {"command": "/x", "args": [], "env": {}}}}"#,
        "mcpServers",
        false
    )
    .is_err());
    assert!(claude_entries("claude mcp add a /x --serve-mcp a\n").is_err());
}
