//! `git_file` through the real binary: function, attack, and both modes.

mod gitread_support;

use gitread_support::*;

/// The fixture plus a directory, a binary, a symlink, a hostile file and a big file, committed.
fn files(tag: &str) -> Fixture {
    let f = Fixture::new(tag);
    std::fs::create_dir_all(f.root.join("d")).expect("dir");
    write(&f.root.join("d/lines.txt"), "l1\nl2\nl3\nl4\nl5\n");
    std::fs::write(f.root.join("bin.dat"), b"GIF\0\x01\x02").expect("bin");
    std::os::unix::fs::symlink("d/lines.txt", f.root.join("ln")).expect("symlink");
    write(&f.root.join("evil.txt"), "a\x1b[31mred\u{202e}x\n");
    let big: String = (1..=20000).map(|n| format!("line {n:05}\n")).collect();
    write(&f.root.join("big.txt"), &big);
    git(&f.root, &["add", "."]);
    git(&f.root, &["commit", "-q", "-m", "files"]);
    f
}

#[test]
fn git_file_reads_files_whole_and_by_range() {
    let f = files("file-fn");
    let mut server = f.server();
    let whole = server.call("git_file", r#"{"path":"a.txt"}"#).output();
    assert_eq!(whole, "a.txt at HEAD: 8 bytes, 2 lines\none\ntwo\n");
    let old = server
        .call("git_file", r#"{"path":"a.txt","rev":"HEAD~2"}"#)
        .output();
    assert_eq!(old, "a.txt at HEAD~2: 4 bytes, 1 line\none\n");
    let range = server
        .call("git_file", r#"{"path":"./d/lines.txt","start":2,"end":3}"#)
        .output();
    assert_eq!(
        range,
        "d/lines.txt at HEAD: 15 bytes, 5 lines (lines 2-3)\nl2\nl3\n"
    );
    let tail = server
        .call("git_file", r#"{"path":"d/lines.txt","start":4,"end":99}"#)
        .output();
    assert_eq!(
        tail,
        "d/lines.txt at HEAD: 15 bytes, 5 lines (lines 4-5)\nl4\nl5\n"
    );
    let past = server
        .call("git_file", r#"{"path":"d/lines.txt","start":9}"#)
        .output();
    assert_eq!(
        past,
        "d/lines.txt at HEAD: 15 bytes, 5 lines (lines 9-: past the end; the file has 5)"
    );
    let binary = server.call("git_file", r#"{"path":"bin.dat"}"#).output();
    assert_eq!(binary, "bin.dat at HEAD: binary, 6 bytes; not shown");
    let dir = server.call("git_file", r#"{"path":"d"}"#).output();
    assert!(
        dir.starts_with("d at HEAD: a directory (tree), not a file"),
        "{dir}"
    );
    let link = server.call("git_file", r#"{"path":"ln"}"#).output();
    assert_eq!(
        link,
        "ln at HEAD: a symbolic link, 11 bytes; its target as text (not followed):\nd/lines.txt"
    );
    // The mistakes' own lines for every tool: gitread_mistakes.rs.
    server
        .call("git_file", r#"{"path":"nope.txt"}"#)
        .assert_error_contains("path \"nope.txt\" is not in HEAD");
    server
        .call("git_file", r#"{"path":"a.txt","rev":"nope"}"#)
        .assert_error_contains("unknown revision \"nope\" (rev)");
    // Past the cap: cut after a whole line, and the named offset continues with no gap.
    let first = server.call("git_file", r#"{"path":"big.txt"}"#).output();
    assert!(first.starts_with("big.txt at HEAD: 220000 bytes, 20000 lines\nline 00001\n"));
    let next: u64 = first
        .rsplit("offset=")
        .next()
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no offset= in {}", &first[first.len() - 200..]));
    // Lines are 11 bytes: the page ends after line next / 11.
    assert_eq!(next % 11, 0);
    let shown_last = format!("line {:05}\n", next / 11);
    assert!(first.contains(&shown_last));
    assert!(!first.contains(&format!("line {:05}\n", next / 11 + 1)));
    let more = server
        .call(
            "git_file",
            &format!(r#"{{"path":"big.txt","offset":{next}}}"#),
        )
        .output();
    assert!(more.starts_with(&format!(
        "big.txt at HEAD: 220000 bytes, 20000 lines (from byte {next})\nline {:05}\n",
        next / 11 + 1
    )));
    let late = server
        .call(
            "git_file",
            r#"{"path":"big.txt","start":19999,"end":20000}"#,
        )
        .output();
    assert!(
        late.ends_with("(lines 19999-20000)\nline 19999\nline 20000\n"),
        "{late}"
    );
}

#[test]
fn git_file_refuses_attacks() {
    let f = files("file-attack");
    std::os::unix::fs::symlink(f.outside_repo(), f.root.join("out")).expect("symlink");
    let mut server = f.server();
    let mut replies = Vec::new();
    for (args, needle) in [
        (
            r#"{"path":"../secret.txt"}"#,
            "path must be inside the project",
        ),
        (
            r#"{"path":".git/config"}"#,
            "path must be inside the project",
        ),
        (r#"{"path":"/etc/passwd"}"#, "path must be a relative path"),
        (
            r#"{"path":"d/../../secret.txt"}"#,
            "path must be inside the project",
        ),
        (
            r#"{"path":"out/secret.txt"}"#,
            "path must be inside the project",
        ),
        (r#"{"path":"."}"#, "not the project root"),
        (
            r#"{"path":"a.txt","rev":"--output=/tmp/x"}"#,
            "rev must be a plain revision",
        ),
        (
            r#"{"path":"a.txt","rev":"HEAD:../secret.txt"}"#,
            "rev must be a plain revision",
        ),
        (r#"{"path":"a.txt","start":0}"#, "start must be an integer"),
        (
            r#"{"path":"a.txt","start":"2"}"#,
            "start must be an integer",
        ),
        (r#"{"path":"a.txt","end":-1}"#, "end must be an integer"),
        (
            r#"{"path":"a.txt","start":3,"end":2}"#,
            "start (3) must not be after end (2)",
        ),
        (r#"{}"#, "git_file needs a path"),
    ] {
        let reply = server.call("git_file", args);
        reply.assert_error_contains(needle);
        replies.push(reply);
    }
    let evil = server.call("git_file", r#"{"path":"evil.txt"}"#).output();
    assert!(
        !evil.contains('\x1b') && !evil.contains('\u{202e}'),
        "{evil:?}"
    );
    assert!(evil.contains("\\x1b[31mred\\u{202e}x"), "{evil:?}");
    assert!(!f.root.join("../x").exists() && !std::path::Path::new("/tmp/x").exists());
    f.assert_no_secret(&texts(&replies, &server));
    f.assert_canary_silent();

    // The repository checks apply: a .git that leads out refuses git_file too.
    let f = Fixture::new("file-dotgit");
    f.dot_git_symlink_to(&f.outside_repo().join(".git"));
    let mut server = f.server();
    let reply = server.call("git_file", r#"{"path":"secret.txt"}"#);
    reply.assert_error_contains("outside the project");
    f.assert_no_secret(&texts(&[reply], &server));
}

#[test]
fn git_file_is_unknown_under_compat_reference() {
    let f = Fixture::new("file-reference");
    let mut server = f.reference_server();
    let listed = server.request("tools/list", "{}").to_string();
    assert!(!listed.contains("git_file"));
    let reply = server
        .request(
            "tools/call",
            r#"{"name":"git_file","arguments":{"path":"a.txt"}}"#,
        )
        .to_string();
    assert!(reply.contains("git_file"), "{reply}");
    assert!(reply.to_lowercase().contains("unknown tool"), "{reply}");
}
