//! The mistakes agents make get the same one-line error from every tool: a revision that names
//! nothing (with the argument that carried it and a pointer to git_refs), a repository with no
//! commits yet, a path the revision does not have, a range that selects nothing. Under
//! `--compat reference` git's own text stands. Run with each installed git by `.ci/run`.

mod gitread_support;

use gitread_support::*;

/// Every tool that takes a revision, called with `nope` in that argument.
const UNKNOWN: [(&str, &str, &str); 8] = [
    ("git_log", r#"{"rev":"nope"}"#, "rev"),
    ("git_show", r#"{"rev":"nope"}"#, "rev"),
    ("git_diff", r#"{"base":"nope","head":"HEAD"}"#, "base"),
    ("git_diff", r#"{"base":"HEAD","head":"nope"}"#, "head"),
    ("git_blame", r#"{"rev":"nope","path":"a.txt"}"#, "rev"),
    ("git_file", r#"{"rev":"nope","path":"a.txt"}"#, "rev"),
    ("git_grep", r#"{"rev":"nope","pattern":"one"}"#, "rev"),
    ("git_refs", r#"{"contains":"nope"}"#, "contains"),
];

/// Every call that reads HEAD, for a repository without commits.
const READS_HEAD: [(&str, &str); 7] = [
    ("git_log", "{}"),
    ("git_show", r#"{"rev":"HEAD"}"#),
    ("git_diff", r#"{"base":"HEAD","head":"HEAD"}"#),
    ("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#),
    ("git_file", r#"{"path":"a.txt"}"#),
    ("git_grep", r#"{"pattern":"x"}"#),
    ("git_log", r#"{"rev":"HEAD~1..HEAD"}"#),
];

/// The one line of an error, checked to be one line.
fn one_line(reply: &Reply) -> String {
    assert!(reply.is_error, "expected an error: {}", reply.text);
    assert!(!reply.text.contains('\n'), "{}", reply.text);
    reply.text.clone()
}

#[test]
fn an_unknown_revision_is_named_with_its_argument_by_every_tool() {
    let f = Fixture::new("mistake-unknown");
    let mut server = f.server();
    for (tool, arguments, field) in UNKNOWN {
        let line = one_line(&server.call(tool, arguments));
        assert!(
            line.starts_with(&format!("unknown revision \"nope\" ({field}): ")),
            "{tool}: {line}"
        );
        assert!(line.contains("git_refs"), "{tool}: {line}");
    }
    // One side of a range, and a revision past the history.
    let line = one_line(&server.call("git_log", r#"{"rev":"nope..HEAD"}"#));
    assert!(
        line.starts_with("unknown revision \"nope..HEAD\" (rev)"),
        "{line}"
    );
    let line = one_line(&server.call("git_show", r#"{"rev":"HEAD~9"}"#));
    assert!(
        line.starts_with("unknown revision \"HEAD~9\" (rev)"),
        "{line}"
    );
    f.assert_canary_silent();
}

#[test]
fn a_repository_without_commits_says_so_from_every_tool() {
    let f = Fixture::new("mistake-empty");
    let empty = f.tmp.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q", "-b", "main"]);
    let mut server = Server::start(&empty, &[]);
    for (tool, arguments) in READS_HEAD {
        let line = one_line(&server.call(tool, arguments));
        assert!(
            line.starts_with("no commits yet: "),
            "{tool} {arguments}: {line}"
        );
    }
    // What needs no commit still answers.
    assert!(!server.call("git_status", "{}").is_error);
    assert!(!server.call("git_refs", "{}").is_error);
}

#[test]
fn a_path_the_revision_lacks_is_the_same_error_from_blame_and_file() {
    let f = Fixture::new("mistake-path");
    let mut server = f.server();
    for tool in ["git_blame", "git_file"] {
        let line = one_line(&server.call(tool, r#"{"rev":"HEAD~1","path":"gone.txt"}"#));
        assert_eq!(
            line,
            "path \"gone.txt\" is not in HEAD~1: no such path at that revision; git_log with \
             this path lists the commits that touched it",
            "{tool}"
        );
    }
    // Not a mistake: no commit changing a path, or filters that match nothing, are notes.
    let note = server.call("git_log", r#"{"path":"gone.txt"}"#);
    assert!(
        !note.is_error && note.text.starts_with("(no commits"),
        "{}",
        note.text
    );
}

#[test]
fn a_range_that_selects_nothing_is_an_error_and_filters_that_match_nothing_a_note() {
    let f = Fixture::new("mistake-range");
    let mut server = f.server();
    for (tool, arguments) in [
        ("git_log", r#"{"rev":"HEAD..HEAD~1"}"#),
        ("git_show", r#"{"rev":"HEAD..HEAD~1"}"#),
    ] {
        let line = one_line(&server.call(tool, arguments));
        assert!(
            line.starts_with("range \"HEAD..HEAD~1\" (rev) selects no commits"),
            "{tool}: {line}"
        );
    }
    let swapped = server.call("git_log", r#"{"rev":"HEAD~1..HEAD"}"#).output();
    assert!(swapped.contains("second"), "{swapped}");
    for arguments in [
        r#"{"rev":"HEAD..HEAD~1","author":"nobody"}"#,
        r#"{"rev":"HEAD..HEAD~1","skip":1}"#,
    ] {
        let note = server.call("git_log", arguments);
        assert!(!note.is_error, "{arguments}: {}", note.text);
    }
}

#[test]
fn the_reference_mode_keeps_gits_own_text() {
    let f = Fixture::new("mistake-reference");
    let mut server = f.reference_server();
    for (tool, arguments) in [
        ("git_log", r#"{"rev":"nope"}"#),
        ("git_diff", r#"{"base":"nope","head":"HEAD"}"#),
        ("git_blame", r#"{"rev":"HEAD","path":"gone.txt"}"#),
    ] {
        server
            .call(tool, arguments)
            .assert_error_contains("git exited 128: fatal: ");
    }
    // An empty range is the reference's empty answer.
    for tool in ["git_log", "git_show"] {
        let reply = server.call(tool, r#"{"rev":"HEAD..HEAD~1"}"#);
        assert_eq!(reply.output(), "", "{tool}");
    }
}
