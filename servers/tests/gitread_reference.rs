//! gitread's behavioural checks taken from the reference's tests (REFERENCE-BEHAVIOUR.md §10,
//! items 5 and 12–21), through the real binary over stdio.

mod gitread_support;

use agentteams_mcp::json::{self, Value};
use gitread_support::*;

/// The `tools` of a tools/list reply.
fn listed_tools(server: &mut Server) -> Vec<Value> {
    let reply = server.request("tools/list", "{}");
    reply
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .expect("tools")
        .to_vec()
}

/// Under `--compat reference` every tool's name, description and input schema are the
/// reference's, byte for byte (REFERENCE-BEHAVIOUR.md §4.1).
#[test]
fn tools_list_is_the_reference_catalogue() {
    let f = Fixture::new("list");
    let mut server = f.reference_server();
    let tools = listed_tools(&mut server);
    let expected = [
        (
            "git_log",
            "Commit history (hash, author, date, subject). Read-only.",
            r#"{"type":"object","properties":{"rev":{"type":"string"},"n":{"type":"integer","minimum":1,"maximum":200},"path":{"type":"string"}}}"#,
        ),
        (
            "git_show",
            "One commit: metadata, stat and patch. Read-only.",
            r#"{"type":"object","required":["rev"],"properties":{"rev":{"type":"string"},"path":{"type":"string"}}}"#,
        ),
        (
            "git_diff",
            "Diff between two revisions (never the worktree). Read-only.",
            r#"{"type":"object","required":["base","head"],"properties":{"base":{"type":"string"},"head":{"type":"string"},"path":{"type":"string"}}}"#,
        ),
        (
            "git_blame",
            "Line authorship of a file at a revision (never the worktree). Read-only.",
            r#"{"type":"object","required":["rev","path"],"properties":{"rev":{"type":"string"},"path":{"type":"string"}}}"#,
        ),
        (
            "git_status",
            "Working-tree status (porcelain), without locks. Read-only.",
            r#"{"type":"object","properties":{}}"#,
        ),
    ];
    assert_eq!(tools.len(), expected.len());
    // Nothing else, although the session speaks 2025-06-18 (annotations, titles, output schemas).
    assert_eq!(server.instructions(), "");
    for tool in &tools {
        let keys: Vec<&str> = tool
            .as_object()
            .expect("a tool")
            .keys()
            .map(|k| &**k)
            .collect();
        assert_eq!(keys, ["name", "description", "inputSchema"], "{tool}");
    }
    for (tool, (name, description, schema)) in tools.iter().zip(expected) {
        assert_eq!(tool.get("name").and_then(Value::as_str), Some(name));
        assert_eq!(
            tool.get("description").and_then(Value::as_str),
            Some(description)
        );
        assert_eq!(
            json::to_string(tool.get("inputSchema").expect("schema")),
            schema
        );
    }
}

/// The catalogue a host sends with every conversation (2025-06-18: descriptions, schemas,
/// output schemas and annotations) is at most 1 KiB per tool on average; what every tool shares is
/// said once, in the instructions.
#[test]
fn the_catalogue_is_at_most_a_kibibyte_per_tool_and_the_instructions_say_the_rest_once() {
    let f = Fixture::new("list-size");
    let mut server = f.server();
    let tools = listed_tools(&mut server);
    let bytes = json::to_string(&Value::from(tools.clone())).len();
    println!("tools/list: {bytes} bytes for {} tools", tools.len());
    assert!(bytes <= 1024 * tools.len(), "{bytes} bytes");
    let instructions = server.instructions();
    for said_once in [
        "plain text",
        "null means absent",
        "offset",
        "never instructions",
    ] {
        assert!(instructions.contains(said_once), "{instructions}");
    }
}

/// By default the schemas teach: every argument has a description with an example, every
/// optional argument its default, every tool says when to use it and what it answers.
#[test]
fn tools_list_teaches_by_default() {
    let f = Fixture::new("list-product");
    let mut server = f.server();
    let tools = listed_tools(&mut server);
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    assert_eq!(
        names,
        [
            "git_log",
            "git_show",
            "git_diff",
            "git_blame",
            "git_status",
            "git_file",
            "git_refs",
            "git_grep"
        ]
    );
    for tool in &tools {
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(description.contains("Use it"), "{description}");
        let schema = tool.get("inputSchema").expect("schema");
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(Value::Object(properties)) = schema.get("properties") else {
            panic!("no properties: {schema}");
        };
        for (name, property) in properties.iter() {
            let text = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            assert!(text.contains("e.g. "), "{name}: {property}");
            assert_eq!(
                property.get("default").is_some(),
                !required.contains(&name.as_str()),
                "{name}: {property}"
            );
        }
    }
    let log = tools[0].get("inputSchema").expect("schema");
    assert_eq!(
        json::to_string(log.get("properties").and_then(|p| p.get("n")).expect("n")),
        r#"{"type":"integer","minimum":1,"maximum":200,"description":"Most commits to list, e.g. 5.","default":20}"#
    );
    assert_eq!(
        log.get("properties")
            .and_then(|p| p.get("rev"))
            .and_then(|r| r.get("default"))
            .and_then(Value::as_str),
        Some("HEAD")
    );
    assert_eq!(
        tools[1].get("description").and_then(Value::as_str),
        Some("Show one commit: header, message, changed files, patch. Use it on a commit git_log found.")
    );
    assert_eq!(
        json::to_string(
            tools[3]
                .get("inputSchema")
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get("path"))
                .expect("path")
        ),
        r#"{"type":"string","description":"The file, e.g. \"src/main.rs\"."}"#
    );
}

/// Every call whose git output is empty: the product answers one line saying why, the reference
/// an empty string. (An empty range is a mistake the product answers as an error:
/// gitread_mistakes.rs.)
const EMPTY_CASES: [(&str, &str, &str); 7] = [
    (
        "git_status",
        "{}",
        "(working tree clean: nothing staged, modified or untracked)",
    ),
    (
        "git_log",
        r#"{"path":"no-such-file"}"#,
        r#"(no commits: no commit in HEAD changes "no-such-file")"#,
    ),
    (
        "git_log",
        r#"{"rev":"HEAD~1..HEAD","path":"a.txt"}"#,
        r#"(no commits: no commit in HEAD~1..HEAD changes "a.txt")"#,
    ),
    (
        "git_show",
        r#"{"rev":"HEAD","path":"a.txt"}"#,
        r#"(nothing to show: HEAD does not change "a.txt"; git_show without path shows the whole commit)"#,
    ),
    (
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD~1"}"#,
        "(no differences between HEAD~1 and HEAD~1)",
    ),
    (
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD","path":"a.txt"}"#,
        r#"(no differences between HEAD~1 and HEAD in "a.txt")"#,
    ),
    (
        "git_blame",
        r#"{"rev":"HEAD","path":"empty.txt"}"#,
        r#"(no lines: "empty.txt" is empty at HEAD)"#,
    ),
];

/// The fixture with a last commit that adds an empty file (so a.txt is unchanged by it) and a
/// clean work tree.
fn quiet_fixture(tag: &str) -> Fixture {
    let f = Fixture::new(tag);
    std::fs::remove_file(f.root.join("new.txt")).expect("remove new.txt");
    write(&f.root.join("empty.txt"), "");
    git(&f.root, &["add", "empty.txt"]);
    git(&f.root, &["commit", "-q", "-m", "empty file"]);
    f
}

#[test]
fn empty_answers_say_why_in_one_line() {
    let f = quiet_fixture("empty-product");
    let mut server = f.server();
    for (tool, arguments, note) in EMPTY_CASES {
        let reply = server.call(tool, arguments);
        assert_eq!(reply.output(), note, "{tool} {arguments}");
    }
    // A note only replaces an empty answer.
    assert!(server
        .call("git_show", r#"{"rev":"HEAD~1","path":"a.txt"}"#)
        .output()
        .contains("+two"));
}

#[test]
fn empty_answers_stay_empty_under_compat_reference() {
    let f = quiet_fixture("empty-reference");
    let mut server = f.reference_server();
    for (tool, arguments, _) in EMPTY_CASES {
        let reply = server.call(tool, arguments);
        assert_eq!(reply.text, "{\n \"output\": \"\"\n}", "{tool} {arguments}");
    }
}

#[test]
fn end_to_end_log_shows_the_last_subject() {
    // The reference's line; the product's is pinned in gitread_log_filters.rs.
    let f = Fixture::new("e2e");
    let mut server = f.reference_server();
    let reply = server.call("git_log", r#"{"n":1}"#);
    let output = reply.output();
    assert!(output.contains("\tsecond\n"), "{output}");
    assert!(!output.contains("first"), "n=1 gives one commit: {output}");
    let line = output.lines().next().unwrap_or_default();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(fields.len(), 4, "hash, author, date, subject: {line}");
    assert_eq!(fields[0].len(), 40);
    assert_eq!(fields[1], "Alice");
    // Strict ISO 8601 (git 2.39 prints UTC as +00:00, newer gits as Z).
    assert!(fields[2].starts_with("2024-01-01T00:00:00"), "{line}");
}

#[test]
fn happy_paths_of_the_five_tools() {
    let f = Fixture::new("happy");
    let mut server = f.server();
    assert!(server
        .call("git_log", r#"{"n":5}"#)
        .output()
        .contains("second"));
    assert!(server
        .call("git_show", r#"{"rev":"HEAD"}"#)
        .output()
        .contains("+two"));
    assert!(server
        .call(
            "git_diff",
            r#"{"base":"HEAD~1","head":"HEAD","path":"a.txt"}"#
        )
        .output()
        .contains("+two"));
    assert!(server
        .call("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#)
        .output()
        .contains("two"));
    assert_eq!(server.call("git_status", "{}").output(), "?? new.txt\n");
    // `path: null` counts as absent; `.` is the whole project.
    assert!(server
        .call("git_log", r#"{"path":null}"#)
        .output()
        .contains("first"));
    assert!(server
        .call("git_log", r#"{"path":"."}"#)
        .output()
        .contains("first"));
}

#[test]
fn answers_are_plain_text_by_default_and_the_references_json_under_compat() {
    let f = Fixture::new("plain");
    let name = "Zoë \u{202e}Ünïcode";
    git_command(&f.root)
        .args(["commit", "-q", "--allow-empty", "-m", "naïve\ttab"])
        .env("GIT_AUTHOR_NAME", name)
        .status()
        .expect("commit");
    std::fs::write(f.root.join("new.txt"), "x\n").expect("write");
    let mut server = f.server();
    let status = server.call("git_status", "{}");
    assert_eq!(status.text, "?? new.txt\n");
    assert_eq!(
        status.structured.as_ref().map(json::to_string).as_deref(),
        Some(r#"{"output":"?? new.txt\n"}"#)
    );
    // Raw UTF-8, real tabs and newlines; what the sanitiser escapes (U+202E) still escaped.
    let log = server.call("git_log", r#"{"n":1}"#).text;
    assert!(
        log.ends_with(" Zoë \\u{202e}Ünïcode (HEAD -> main): naïve\ttab\n"),
        "{log}"
    );
    let listed = server.request("tools/list", "{}");
    let tools = listed
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .expect("tools");
    for tool in tools.iter() {
        let schema = tool.get("outputSchema").expect("an output schema");
        assert_eq!(
            schema.get("required").map(json::to_string).as_deref(),
            Some(r#"["output"]"#),
            "{tool}"
        );
    }

    let mut reference = f.reference_server();
    // The reference's pretty form: {"output": ...} with one-space indent, ASCII only.
    let text = reference.call("git_status", "{}").text;
    assert_eq!(text, "{\n \"output\": \"?? new.txt\\n\"\n}");
    let log = reference.call("git_log", r#"{"n":1}"#).text;
    assert!(
        log.contains(r"\tZo\u00eb \\u{202e}\u00dcn\u00efcode\t"),
        "{log}"
    );
    let listed = reference.request("tools/list", "{}");
    let tools = listed
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .expect("tools");
    assert!(tools.iter().all(|t| t.get("outputSchema").is_none()));
}

#[test]
fn refusals_are_tool_errors_with_the_reference_messages() {
    let f = Fixture::new("refuse");
    let mut server = f.server();
    let pwned = f.tmp.join("pwned");
    let rev_msg =
        "rev must be a plain revision (letters, digits, ._/@{}~^-), not starting with '-'";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "git_show",
            format!(r#"{{"rev":"--output={}"}}"#, pwned.display()),
            rev_msg,
        ),
        ("git_show", r#"{"rev":"HEAD;rm"}"#.into(), rev_msg),
        ("git_show", r#"{"rev":"HEAD:a.txt"}"#.into(), rev_msg),
        ("git_show", r#"{}"#.into(), rev_msg),
        (
            "git_show",
            r#"{"rev":"HEAD","path":"../x"}"#.into(),
            "path must be inside the project and outside .git",
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","path":"/etc/passwd"}"#.into(),
            "path must be a relative path inside the project",
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","path":".git/config"}"#.into(),
            "path must be inside the project and outside .git",
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","path":".GIT/config"}"#.into(),
            "path must be inside the project and outside .git",
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","path":""}"#.into(),
            "path must be a relative path inside the project",
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","path":5}"#.into(),
            "path must be a relative path inside the project",
        ),
        (
            "git_log",
            r#"{"n":201}"#.into(),
            "n must be an integer from 1 to 200",
        ),
        (
            "git_log",
            r#"{"n":0}"#.into(),
            "n must be an integer from 1 to 200",
        ),
        (
            "git_log",
            r#"{"n":"5"}"#.into(),
            "n must be an integer from 1 to 200",
        ),
        (
            "git_log",
            r#"{"n":true}"#.into(),
            "n must be an integer from 1 to 200",
        ),
        ("git_log", r#"{"rev":null}"#.into(), rev_msg),
        (
            "git_diff",
            r#"{"base":"HEAD"}"#.into(),
            "head must be a plain revision",
        ),
        (
            "git_diff",
            r#"{"head":"HEAD"}"#.into(),
            "base must be a plain revision",
        ),
        (
            "git_blame",
            r#"{"rev":"HEAD"}"#.into(),
            "git_blame needs a path",
        ),
        ("git_blame", r#"{"path":"a.txt"}"#.into(), rev_msg),
        (
            "git_status",
            r#"{"path":"../x"}"#.into(),
            "path must be inside the project and outside .git",
        ),
    ];
    for (tool, args, message) in &cases {
        let reply = server.call(tool, args);
        reply.assert_error_contains(message);
    }
    assert!(!pwned.exists(), "--output wrote a file");
    // n at its edges is served.
    assert!(!server.call("git_log", r#"{"n":200}"#).is_error);
    assert!(!server.call("git_log", r#"{"n":1}"#).is_error);
}

#[test]
fn an_unknown_tool_is_an_invalid_params_error() {
    let f = Fixture::new("unknown");
    let mut server = f.server();
    let reply = server.request("tools/call", r#"{"name":"git_nope","arguments":{}}"#);
    let error = reply.get("error").expect("a JSON-RPC error");
    assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32602));
    assert_eq!(
        error.get("message").and_then(Value::as_str),
        Some("unknown tool 'git_nope'")
    );
}

#[test]
fn a_filter_defined_through_include_path_is_refused_and_never_runs() {
    let f = Fixture::new("filter-include");
    write(
        &f.root.join("cfg/evil"),
        &format!("[filter \"x\"]\n\tclean = {}\n", f.canary_str()),
    );
    f.plant_config("[include]\n\tpath = ../cfg/evil\n");
    write(&f.root.join(".gitattributes"), "* filter=x\n");
    f.touch_worktree();
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "filter");
    replies[7].assert_error_contains(
        "the repository config defines filter.* drivers, which could run programs; refusing",
    );
    f.assert_canary_silent();
}

#[test]
fn planted_program_settings_are_neutralised() {
    let f = Fixture::new("neutralised");
    let c = f.canary_str();
    f.plant_config(&format!(
        "[core]\n\tfsmonitor = {c}\n\tpager = {c}\n\tsshCommand = {c}\n[diff]\n\texternal = {c}\n[diff \"t\"]\n\ttextconv = {c}\n"
    ));
    write(&f.root.join(".gitattributes"), "*.txt diff=t\n");
    f.touch_worktree();
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_served(&replies);
    f.assert_canary_silent();
}

#[test]
fn the_environment_is_an_allowlist() {
    let f = Fixture::new("env");
    let mut server = Server::start(
        &f.root,
        &[
            ("GIT_DIR", Some("/nonexistent")),
            ("GIT_EXTERNAL_DIFF", Some("/bin/false")),
        ],
    );
    assert!(server.call("git_log", "{}").output().contains("second"));
    assert!(server
        .call("git_diff", r#"{"base":"HEAD~1","head":"HEAD"}"#)
        .output()
        .contains("+two"));
}

#[test]
fn status_never_writes_the_index() {
    let f = Fixture::new("index");
    let index = f.root.join(".git/index");
    let before = std::fs::metadata(&index).and_then(|m| m.modified()).ok();
    let bytes_before = std::fs::read(&index).unwrap_or_default();
    f.touch_worktree();
    let mut server = f.server();
    assert_eq!(server.call("git_status", "{}").output(), "?? new.txt\n");
    assert_eq!(
        std::fs::metadata(&index).and_then(|m| m.modified()).ok(),
        before
    );
    assert_eq!(std::fs::read(&index).unwrap_or_default(), bytes_before);
    assert!(!f.root.join(".git/index.lock").exists());
}

#[test]
fn mailmap_never_leaks() {
    let f = Fixture::new("mailmap");
    write(&f.secret_file, "LEAKED <alice@example.com>\n");
    f.plant_config(&format!(
        "[mailmap]\n\tfile = {}\n[log]\n\tmailmap = true\n",
        f.secret_file.display()
    ));
    let mut server = f.server();
    let log = server.call("git_log", r#"{"n":5}"#).output();
    let blame = server
        .call("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#)
        .output();
    let show = server.call("git_show", r#"{"rev":"HEAD"}"#).output();
    for out in [&log, &blame, &show] {
        assert!(!out.contains("LEAKED"), "{out}");
    }
    assert!(log.contains("Alice"));
}

#[test]
fn a_launch_below_the_root_is_refused_at_startup() {
    // The reference starts and refuses every call ("... the MCP client must launch this server
    // there"); the product refuses to start (exit 2) and names the root to pass instead.
    let f = Fixture::new("notroot");
    std::fs::create_dir_all(f.root.join("sub")).expect("sub");
    assert_eq!(
        assert_refused_at_startup(&f.root.join("sub")),
        format!(
            "agentteams-mcp: {root}/sub is inside the git work tree {root}, not at its root; pass --root {root}\n",
            root = f.root.display()
        )
    );
}

/// Serves `f` and asserts the sweep is refused as outside, never showing the outside secret.
fn assert_refused_outside(f: &Fixture) -> Vec<Reply> {
    let mut server = f.server();
    let replies = server.sweep();
    assert_sweep_refused(&replies, "outside the project");
    f.assert_no_secret(&texts(&replies, &server));
    replies
}

#[test]
fn redirects_out_of_the_project_are_refused() {
    let f = Fixture::new("redir-gitfile");
    f.gitfile_to(&f.outside_repo().join(".git"));
    assert_refused_outside(&f);

    let f = Fixture::new("redir-symlink");
    f.dot_git_symlink_to(&f.outside_repo().join(".git"));
    assert_refused_outside(&f);

    // commondir redirect: refused, and the outside history never shows.
    let f = Fixture::new("redir-commondir");
    let outside = f.outside_repo();
    write(
        &f.root.join(".git/commondir"),
        &format!("{}\n", outside.join(".git").display()),
    );
    for r in assert_refused_outside(&f) {
        assert!(!r.text.contains("second"));
    }

    let f = Fixture::new("redir-forged");
    f.forge_worktree_registration();
    assert_refused_outside(&f);

    let f = Fixture::new("redir-alternates");
    let outside = f.outside_repo();
    write(
        &f.root.join(".git/objects/info/alternates"),
        &format!("{}\n", outside.join(".git/objects").display()),
    );
    let mut server = f.server();
    assert_sweep_refused(&server.sweep(), "alternates");
}

#[test]
fn a_genuine_linked_worktree_outside_the_repository_is_served() {
    let f = Fixture::new("worktree");
    let wt = f.linked_worktree();
    let mut server = Server::start(&wt, &[]);
    let replies = server.sweep();
    assert_sweep_served(&replies);
    assert_eq!(
        replies[7].output(),
        "(working tree clean: nothing staged, modified or untracked)"
    );
}
