//! What the binary says and how it exits before it serves or builds: an unusable root refused
//! with one line naming what to pass instead, recall's missing index, a policy that leaves no
//! tool, usage errors of one line, and `index build`'s closing lines.

mod recall_support;

use recall_support::common::stderr;
use recall_support::Project;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");
const HELP: &str = "; see agentteams-mcp --help";
const PASS_WORK_TREE: &str =
    "pass --root with the top directory of the project's git work tree (the one holding .git)";

/// Runs the binary with stdin at end of input (a served run ends at once).
fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Asserts exit 2, nothing on stdout and exactly `line` on stderr.
fn assert_refused(o: &Output, line: &str, context: &str) {
    assert_eq!(o.status.code(), Some(2), "{context}: {}", stderr(o));
    assert!(o.stdout.is_empty(), "{context}");
    assert_eq!(stderr(o), format!("{line}\n"), "{context}");
}

/// A project with a `.git` folder (the start-up check only looks for it) and a subfolder.
fn work_tree() -> Project {
    let project = Project::new("startup-tree");
    std::fs::create_dir_all(project.path(".git")).unwrap();
    project.write("sub/notes.txt", "x\n");
    project
}

#[test]
fn gitread_refuses_an_unusable_root_at_startup_over_stdio_and_http() {
    let tree = work_tree();
    let plain = Project::new("startup-plain");
    let top = tree.root.display().to_string();
    let cases = [
        (
            tree.path("sub"),
            format!("{top}/sub is inside the git work tree {top}, not at its root; pass --root {top}"),
        ),
        (
            tree.path("sub/notes.txt"),
            format!("{top}/sub/notes.txt is a file, not a directory; pass --root {top}"),
        ),
        (
            tree.path("sub/missing"),
            format!("{top}/sub/missing does not exist; pass --root {top}"),
        ),
        (
            plain.root.clone(),
            format!(
                "{} is not in a git work tree (no .git in it or any folder above); {PASS_WORK_TREE}",
                plain.root.display()
            ),
        ),
        (
            "/".into(),
            format!("/ is not in a git work tree (no .git in it or any folder above); {PASS_WORK_TREE}"),
        ),
        (
            "/nonexistent".into(),
            format!("/nonexistent does not exist; {PASS_WORK_TREE}"),
        ),
    ];
    for (root, message) in cases {
        let root = root.to_str().unwrap();
        let line = format!("agentteams-mcp: {message}");
        let stdio = run(&["--serve-mcp", "gitread", "--root", root]);
        assert_refused(&stdio, &line, root);
        let http = run(&[
            "--serve-mcp",
            "gitread",
            "--http",
            "--port",
            "0",
            "--root",
            root,
        ]);
        assert_refused(&http, &line, root);
    }
}

#[test]
fn gitread_serves_a_work_tree_root_without_a_word() {
    let tree = work_tree();
    let o = run(&[
        "--serve-mcp",
        "gitread",
        "--root",
        tree.root.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn recall_without_an_index_starts_says_so_once_and_serves() {
    let project = Project::new("startup-recall");
    let root = project.root.display().to_string();
    let mut child = Command::new(BIN)
        .args(["--serve-mcp", "recall", "--root", &root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut replies = String::new();
    for _ in 0..2 {
        stdout.read_line(&mut replies).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(replies.contains("\"query_index\""), "{replies}");
    assert!(replies.contains("\"query_code\""), "{replies}");
    assert_eq!(
        stderr(&out),
        format!(
            "agentteams-mcp: recall: no memory index and no code index under {root} (looked in ., \
             .claude/agents, .github/agents, .goose, .codex/agents, .goose/recipes); serving \
             anyway, its tools answer once `agentteams-mcp index build --root {root}` has run\n"
        )
    );

    // Once built, nothing is said.
    assert!(project.index_build(&[]).status.success());
    let o = run(&["--serve-mcp", "recall", "--root", &root]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

#[test]
fn recall_refuses_a_root_that_is_not_a_directory() {
    let project = Project::new("startup-recall-file");
    let file = project.write("README.md", "# x\n");
    let o = run(&["--serve-mcp", "recall", "--root", file.to_str().unwrap()]);
    assert_refused(
        &o,
        &format!(
            "agentteams-mcp: {} is a file, not a directory; pass --root {}",
            file.display(),
            project.root.display()
        ),
        "file",
    );
    let o = run(&["--serve-mcp", "recall", "--root", "/nonexistent"]);
    assert_refused(
        &o,
        "agentteams-mcp: /nonexistent does not exist; pass --root with the project's directory",
        "missing",
    );
}

#[test]
fn a_policy_that_leaves_no_tool_is_warned_about() {
    let tree = work_tree();
    let root = tree.root.to_str().unwrap();
    let allowing = |pattern: &str| {
        run(&[
            "--serve-mcp",
            "gitread",
            "--root",
            root,
            "--allow-tool",
            pattern,
        ])
    };
    let o = allowing("query_*");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "agentteams-mcp: warning: the tool policy (allow \"query_*\" (--allow-tool)) leaves none of \
         gitread's tools (git_log, git_show, git_diff, git_blame, git_status, git_file, git_refs, \
         git_grep); tools/list will be \
         empty\n"
    );
    let o = allowing("git_l*");
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

#[test]
fn a_policy_rule_that_matches_no_tool_of_the_server_is_warned_about() {
    let tree = work_tree();
    let root = tree.root.to_str().unwrap();
    // A rule naming another server's tool (or a misspelt one) would otherwise go unnoticed: the
    // allowlist still serves `git_*`, and the deny rule has nothing to refuse.
    let policy = tree.write(
        "ops-policy.json",
        r#"{"allow": ["git_*", "query_index"], "deny": ["git_blame"]}"#,
    );
    let o = run(&[
        "--serve-mcp",
        "gitread",
        "--root",
        root,
        "--deny-tool",
        "git_blam",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tools = "git_log, git_show, git_diff, git_blame, git_status, git_file, git_refs, git_grep";
    assert_eq!(
        stderr(&o),
        format!(
            "agentteams-mcp: warning: the tool policy's rule allow \"query_index\" (policy file allow[1]) \
             matches none of gitread's tools ({tools}); check its spelling and the server it is for\n\
             agentteams-mcp: warning: the tool policy's rule deny \"git_blam\" (--deny-tool) \
             matches none of gitread's tools ({tools}); check its spelling and the server it is for\n"
        )
    );
    // Every rule matching some tool: nothing to say.
    let o = run(&[
        "--serve-mcp",
        "gitread",
        "--root",
        root,
        "--allow-tool",
        "git_*",
        "--deny-tool",
        "git_blame",
    ]);
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

#[test]
fn usage_errors_are_one_line_with_a_pointer_to_help() {
    let cases: [(&[&str], &str); 8] = [
        (&[], "nothing to do: give --serve-mcp NAME"),
        (&["--root", "."], "nothing to do: give --serve-mcp NAME"),
        (
            &["--serve", "gitread"],
            "unknown option --serve (did you mean --serve-mcp?)",
        ),
        (
            &["gitread"],
            "unexpected argument gitread (did you mean --serve-mcp gitread?)",
        ),
        (
            &["--serve-mcp", "gitread", "--allow-tools", "x"],
            "unknown option --allow-tools (did you mean --allow-tool?)",
        ),
        (&["--serve-mcp", "gitread", "--frobnicate"], "unknown option --frobnicate"),
        (
            &["--serve-mcp", "gitread", "--http", "--allow-origin", "app.example.com"],
            "--allow-origin needs a whole origin, scheme and host, such as \
             https://app.example.com; \"app.example.com\" can never match a browser's Origin header",
        ),
        (
            &["--serve-mcp", "gitread", "--http", "--allow-origin=https://a.example/x"],
            "--allow-origin needs a whole origin, scheme and host, such as \
             https://app.example.com; \"https://a.example/x\" can never match a browser's Origin header",
        ),
    ];
    for (args, message) in cases {
        let o = run(args);
        assert_refused(
            &o,
            &format!("agentteams-mcp: {message}{HELP}"),
            &format!("{args:?}"),
        );
    }
}

#[test]
fn client_and_trust_usage_errors_are_one_line_with_a_pointer_to_their_help() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["client", "--bogus", "tools"],
            "agentteams-mcp: client: unknown option --bogus",
        ),
        (
            &["client", "tools"],
            "agentteams-mcp: client: which server? give --url URL or, last, -- COMMAND [ARGS...]",
        ),
        (
            &["client", "--url", "http://127.0.0.1:9/mcp", "--era", "x", "tools"],
            "agentteams-mcp: client: --era must be auto, legacy or modern, not \"x\"",
        ),
        (
            &["trust"],
            "agentteams-mcp: trust: give a trust command: list, inspect, allow, deny, revoke or audit",
        ),
        (
            &["trust", "inspect"],
            "agentteams-mcp: trust: which server? give --url URL or, last, -- COMMAND [ARGS...]",
        ),
    ];
    for (args, message) in cases {
        let o = run(args);
        let command = args[0];
        assert_refused(
            &o,
            &format!("{message}; see agentteams-mcp {command} --help"),
            &format!("{args:?}"),
        );
    }
}

#[test]
fn index_build_exit_codes_and_what_it_says() {
    let o = run(&["index", "build", "--root", "/nonexistent"]);
    assert_refused(
        &o,
        "agentteams-mcp: index build: /nonexistent does not exist; pass --root with the project's directory",
        "missing root",
    );
    let o = run(&["index", "build", "--bogus"]);
    assert_refused(
        &o,
        "agentteams-mcp: index: unknown option --bogus; see agentteams-mcp index --help",
        "usage",
    );

    // No team dir: references/ goes in the root, and one source is too few.
    let project = Project::new("startup-index");
    project.write("README.md", "# Widgets\n\nWidgets are built from gears.\n");
    let o = project.index_build(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let references = project.path("references").display().to_string();
    let err = stderr(&o);
    // Counts of one read singular.
    assert!(
        err.starts_with("agentteams-mcp: index build: memory index: 1 source, 1 document, "),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "\nagentteams-mcp: index build: {references} is generated (no team dir such as .claude/agents exists, \
             so it went in the project root); rebuild it rather than edit it, add references/ to \
             .gitignore if it should not be committed, or pass --team-dir\n"
        )),
        "{err}"
    );
    assert!(
        err.ends_with(
            "\nagentteams-mcp: index build: warning: the memory index found 1 source; list the folders of the \
             project's notes in memory_index_extra_dirs of the project description \
             (.agentteams/brief.json, or --description FILE)\n"
        ),
        "{err}"
    );

    // A team dir and two sources: where it wrote, no warning.
    let project = Project::new("startup-index-team");
    project.write("README.md", "# Widgets\n\nWidgets are built from gears.\n");
    project.write("CHANGELOG.md", "# Changes\n\nGears got sharper teeth.\n");
    std::fs::create_dir_all(project.path(".claude/agents")).unwrap();
    let o = project.index_build(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let references = project
        .path(".claude/agents/references")
        .display()
        .to_string();
    assert!(
        stderr(&o).ends_with(&format!(
            "\nagentteams-mcp: index build: {references} is generated; rebuild it rather than edit it\n"
        )),
        "{}",
        stderr(&o)
    );
}
