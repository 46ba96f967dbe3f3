//! `agentteams-mcp approval` through the real binary: grant, deny, revoke, list and digest; a bad,
//! oversized or linked file; concurrent edits; unknown tool names; hostile text in the file.

mod common;

use agentteams_mcp::governance::{call_digest, Preset, PresetEffect, PresetsFile};
use agentteams_mcp::json::{self, Value};
use common::{stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary project directory and its approvals file.
struct Project(common::TempDir);

impl Project {
    fn new(name: &str) -> Project {
        Project(common::TempDir::new(&format!("approval-{name}")))
    }

    fn root(&self) -> &Path {
        self.0.path()
    }

    fn file(&self) -> PathBuf {
        self.root().join(".agentteams/approvals.json")
    }

    fn write_file(&self, bytes: &[u8]) {
        std::fs::create_dir_all(self.root().join(".agentteams")).unwrap();
        std::fs::write(self.file(), bytes).unwrap();
    }

    fn run(&self, args: &[&str]) -> Output {
        approval(self.root(), args)
    }
}

/// `approval ARGS` by the binary that serves the `--server` it names (the governed fixture's).
fn approval(project: &Path, args: &[&str]) -> Output {
    let server = args
        .windows(2)
        .find(|w| w[0] == "--server")
        .map_or("", |w| w[1]);
    Command::new(common::binary_for(server))
        .arg("approval")
        .args(args)
        .arg("--project")
        .arg(project)
        .env("USER", "tester")
        .output()
        .expect("the binary runs")
}

#[test]
fn grant_deny_list_and_revoke_keep_a_readable_file() {
    let p = Project::new("roundtrip");
    let o = p.run(&[
        "grant",
        "write_note",
        "--reason",
        "nightly notes",
        "--by",
        "alice",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("grant \"write_note\" in "));
    let o = p.run(&["deny", "append_*", "--reason", "never append"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(p.file()).unwrap();
    assert!(text.starts_with("{\n \"presets\": [\n  {\n"), "{text}");
    assert!(text.ends_with("}\n"));
    let parsed = json::parse(text.as_bytes()).unwrap();
    let presets = parsed.get("presets").and_then(Value::as_array).unwrap();
    assert_eq!(
        presets[0].get("added_by").and_then(Value::as_str),
        Some("alice")
    );
    assert_eq!(
        presets[1].get("added_by").and_then(Value::as_str),
        Some("tester")
    );

    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("approvals.json (2 presets)"), "{out}");
    assert!(
        lines[1].starts_with("  grant \"write_note\" by alice at "),
        "{out}"
    );
    assert!(lines[1].ends_with(": nightly notes"), "{out}");
    assert!(
        lines[2].starts_with("  deny  \"append_*\" by tester at "),
        "{out}"
    );
    let o = p.run(&["list", "--json"]);
    assert_eq!(stdout(&o), text, "--json prints the file's own form");

    // Granting a denied pattern replaces the preset, never adds a second.
    let o = p.run(&["grant", "append_*", "--reason", "changed my mind"]);
    assert!(
        stdout(&o).ends_with("(replacing its deny preset)\n"),
        "{}",
        stdout(&o)
    );
    let o = p.run(&["revoke", "append_*"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("revoked the grant preset \"append_*\""));
    let o = p.run(&["list"]);
    assert!(stdout(&o)
        .lines()
        .next()
        .unwrap()
        .ends_with("approvals.json (1 preset)"));
    let o = p.run(&["revoke", "append_*"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no preset has the pattern \"append_*\""));
    let o = p.run(&["grant", "write_note"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs --reason TEXT"));
}

#[test]
fn a_project_without_a_file_lists_nothing_and_revoke_creates_nothing() {
    let p = Project::new("empty");
    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).ends_with("(no file: no presets)\n"));
    assert_eq!(p.run(&["revoke", "x"]).status.code(), Some(1));
    assert!(!p.file().exists());
}

#[test]
fn a_bad_file_is_an_error_that_names_it_and_is_never_overwritten() {
    let p = Project::new("bad");
    let cases: [(&[u8], &str); 4] = [
        (b"{\"version\": 1, \"presets\": [", "invalid JSON"),
        (b"{\"version\": 2, \"presets\": []}", "\"version\" must be 1"),
        (
            b"{\"version\":1,\"presets\":[{\"effect\":\"grnt\",\"tool\":\"x\",\"reason\":\"r\",\"added_by\":\"a\",\"added_at\":\"t\"}]}",
            "presets[0]: \"effect\" must be \"grant\" or \"deny\", not \"grnt\"",
        ),
        (b"[]", "the file must hold a JSON object, not array"),
    ];
    for (bytes, message) in cases {
        p.write_file(bytes);
        for args in [&["list"][..], &["grant", "x", "--reason", "r"][..]] {
            let o = p.run(args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(stderr(&o).contains(message), "{}", stderr(&o));
            assert_eq!(std::fs::read(p.file()).unwrap(), bytes, "left as it was");
        }
    }
    let mut big = br#"{"version":1,"presets":[]}"#.to_vec();
    big.resize(1024 * 1024 + 1, b' ');
    p.write_file(&big);
    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).ends_with("is larger than 1048576 bytes\n"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn linked_files_and_folders_are_refused() {
    let p = Project::new("links");
    let outside = Project::new("outside");
    std::fs::write(
        outside.root().join("approvals.json"),
        r#"{"version":1,"presets":[]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(p.root().join(".agentteams")).unwrap();
    std::os::unix::fs::symlink(outside.root().join("approvals.json"), p.file()).unwrap();
    for args in [&["list"][..], &["grant", "x", "--reason", "r"][..]] {
        let o = p.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("resolves outside the project"),
            "{}",
            stderr(&o)
        );
    }
    // A link inside the project is not read either: presets are a regular file.
    std::fs::remove_file(p.file()).unwrap();
    std::fs::write(p.root().join("mine.json"), r#"{"version":1,"presets":[]}"#).unwrap();
    std::os::unix::fs::symlink(p.root().join("mine.json"), p.file()).unwrap();
    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a symbolic link"), "{}", stderr(&o));
    // A linked .agentteams folder pointing out of the project.
    let q = Project::new("linked-dir");
    std::os::unix::fs::symlink(outside.root(), q.root().join(".agentteams")).unwrap();
    let o = q.run(&["grant", "x", "--reason", "r"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("resolves outside the project"),
        "{}",
        stderr(&o)
    );
    assert!(!outside.root().join("approvals.json.lock").exists());
}

#[test]
fn concurrent_grants_all_land() {
    let p = Project::new("concurrent");
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
                .args(["approval", "grant", &format!("tool_{i}"), "--reason", "r"])
                .arg("--project")
                .arg(p.root())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let file = PresetsFile::load(p.root()).unwrap();
    let mut names: Vec<&str> = file
        .presets()
        .entries()
        .iter()
        .map(|e| e.pattern.as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4", "tool_5", "tool_6", "tool_7"],
        "no edit was lost"
    );
    assert!(!p.root().join(".agentteams/approvals.json.lock").exists());
}

#[test]
fn an_edit_held_elsewhere_or_made_meanwhile_is_refused_not_lost() {
    let p = Project::new("held");
    assert_eq!(
        p.run(&["grant", "a", "--reason", "r"]).status.code(),
        Some(0)
    );
    let before = std::fs::read(p.file()).unwrap();
    // Another edit holds the lock (or a crashed one left it): wait, then refuse with exit 1.
    let lock = p.root().join(".agentteams/approvals.json.lock");
    std::fs::write(&lock, "12345\n").unwrap();
    let o = p.run(&["grant", "b", "--reason", "r"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("another edit holds"), "{}", stderr(&o));
    assert!(stderr(&o).contains("approvals.json.lock"));
    assert_eq!(std::fs::read(p.file()).unwrap(), before);
    std::fs::remove_file(&lock).unwrap();

    // A writer that ignores the lock (a person's editor) changes the file between this edit's
    // read and its write: the edit is refused as retryable and the other change kept.
    let mut file = PresetsFile::load(p.root()).unwrap();
    file.presets_mut()
        .set(Preset::new(PresetEffect::Deny, "c", "r", "me", "t").unwrap())
        .unwrap();
    let edited_by_hand = br#"{"version":1,"presets":[]}"#;
    std::fs::write(p.file(), edited_by_hand).unwrap();
    let err = file.save().unwrap_err();
    assert!(err.is_retryable());
    assert!(
        err.to_string()
            .contains("changed while this edit was being made"),
        "{err}"
    );
    assert_eq!(std::fs::read(p.file()).unwrap(), edited_by_hand);
}

#[test]
fn unknown_tool_names_are_refused_when_they_can_be_checked() {
    let p = Project::new("names");
    let check = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--reason", "r", "--server", "governed"]);
        p.run(&all)
    };
    let o = check(&["grant", "wirte_note"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "agentteams-mcp: approval: \"wirte_note\" is not a tool of governed (read_note, write_note, append_note); check the spelling, or leave out --server to file it unchecked\n"
    );
    let o = check(&["deny", "fs_*"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"fs_*\" matches none of the tools of governed"));
    let o = check(&["grant", "write_*"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = p.run(&["grant", "x", "--reason", "r", "--server", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown server 'nope'"),
        "{}",
        stderr(&o)
    );
    // Not a tool name at all, checked or not.
    let o = p.run(&["grant", "write note", "--reason", "r"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tool: pattern \"write note\" has ' ' at character 6"));
    assert!(
        !stderr(&o).is_empty()
            && PresetsFile::load(p.root())
                .unwrap()
                .presets()
                .entries()
                .len()
                == 1
    );
}

#[test]
fn hostile_text_in_the_file_is_shown_escaped() {
    let p = Project::new("hostile");
    // A tool pattern with ESC sequences: not a tool name, so the file is refused, and the error
    // quoting it reaches the terminal escaped.
    p.write_file(
        b"{\"version\":1,\"presets\":[{\"effect\":\"grant\",\"tool\":\"write\\u001b[2J\\u001b]52;c;aGk=\\u0007note\",\"reason\":\"r\",\"added_by\":\"a\",\"added_at\":\"t\"}]}",
    );
    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("presets[0]: tool: pattern "), "{err}");
    // Free text with terminal controls, bidi overrides and a newline: listed, escaped, one line each.
    p.write_file(
        "{\"version\":1,\"presets\":[{\"effect\":\"deny\",\"tool\":\"x\",\"reason\":\"ok\\u001b[31m red \\u202e txt\\nforged line\",\"added_by\":\"\\u200bmallory\",\"added_at\":\"t\"}]}".as_bytes(),
    );
    let o = p.run(&["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 2, "{out}");
    for raw in ['\u{1b}', '\u{202e}', '\u{200b}'] {
        assert!(!out.contains(raw), "{out:?}");
    }
    assert!(out.contains("by \\u{200b}mallory"), "{out}");
    assert!(
        out.contains("ok\\x1b[31m red \\u{202e} txt\\x0aforged line"),
        "{out}"
    );
}

#[test]
fn digest_prints_what_approve_scoped_takes() {
    let p = Project::new("digest");
    let o = p.run(&["digest", "write_note", r#"{"text": "hi", "path": "a"}"#]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let args = json::parse(br#"{"path":"a","text":"hi"}"#).unwrap();
    let expected = call_digest("write_note", args.as_object().unwrap()).unwrap();
    assert_eq!(stdout(&o), format!("write_note:{expected}\n"));
    let o = p.run(&["digest", "write_note", r#"{"n": -0}"#]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the integer -0 has no canonical form"));
    assert_eq!(p.run(&["digest", "write_*"]).status.code(), Some(2));
    assert_eq!(p.run(&["digest", "t", "[1]"]).status.code(), Some(2));
}

#[test]
fn help_and_usage_errors() {
    let p = Project::new("help");
    let o = p.run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("agentteams-mcp approval grant TOOL --reason TEXT"));
    for (args, message) in [
        (
            &[][..],
            "give an approval command: grant, deny, revoke, list or digest",
        ),
        (
            &["grnat", "x"][..],
            "unknown command grnat (did you mean grant?)",
        ),
        (
            &["grant", "--reason", "r"][..],
            "approval grant needs a TOOL",
        ),
        (&["list", "--bogus"][..], "unknown option --bogus"),
    ] {
        let o = p.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(message), "{err}");
        assert!(
            err.ends_with("; see agentteams-mcp approval --help\n"),
            "{err}"
        );
    }
}
