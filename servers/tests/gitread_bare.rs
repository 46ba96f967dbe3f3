//! A bare repository (a mirror such as `/srv/repo.git`) named as the root is served read-only:
//! every tool but `git_status`, which says there is no work tree, under the same hardening as a
//! work tree. The repository's own config, hooks and files are hostile here too: nothing it names
//! runs, nothing outside it is read, and a `core.worktree` or `core.bare` in it never gives git a
//! work tree. Run with each installed git by `.ci/run`.

mod gitread_support;

use gitread_support::*;
use std::path::PathBuf;

/// The fixture's repository cloned bare beside it (`mirror.git`), with the secret file and canary
/// of the fixture.
fn mirror(tag: &str) -> (Fixture, PathBuf) {
    let f = Fixture::new(tag);
    let bare = f.tmp.join("mirror.git");
    git(
        &f.tmp.path,
        &[
            "clone",
            "-q",
            "--bare",
            f.root.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    (f, bare)
}

#[test]
fn a_bare_mirror_is_served_by_every_tool_and_status_says_there_is_no_work_tree() {
    let (f, bare) = mirror("bare-served");
    let mut server = Server::start(&bare, &[]);
    let log = server.call("git_log", r#"{"n":5}"#).output();
    assert!(log.contains("second") && log.contains("first"), "{log}");
    for (tool, arguments, expected) in [
        ("git_show", r#"{"rev":"HEAD","path":"a.txt"}"#, "+two"),
        ("git_diff", r#"{"base":"HEAD~1","head":"HEAD"}"#, "+two"),
        ("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#, "two"),
        ("git_file", r#"{"path":"a.txt"}"#, "one\ntwo"),
        ("git_refs", "{}", "* main"),
        ("git_grep", r#"{"pattern":"tw"}"#, "HEAD:a.txt:2:two"),
        ("git_log", r#"{"path":"sub/../a.txt"}"#, "second"),
    ] {
        let text = server.call(tool, arguments).output();
        assert!(text.contains(expected), "{tool}: {text}");
    }
    assert_eq!(
        server.call("git_status", "{}").output(),
        "(no work tree: the project is a bare repository, so nothing is uncommitted)"
    );
    // Paths are tree paths: lexically inside, never .git, never an option.
    for (path, needle) in [
        ("../a.txt", "path must be inside the project"),
        (".git/config", "path must be inside the project"),
        ("-a", "path must be a relative path"),
        ("/etc/passwd", "path must be a relative path"),
    ] {
        let arguments = format!(r#"{{"path":"{path}"}}"#);
        server
            .call("git_file", &arguments)
            .assert_error_contains(needle);
    }
    let mut reference = Server::start_with_args(&bare, &["--compat", "reference"]);
    assert_eq!(reference.call("git_status", "{}").output(), "");
    f.assert_canary_silent();
}

#[test]
fn a_hostile_bare_repository_runs_nothing_and_gives_git_no_work_tree() {
    let (f, bare) = mirror("bare-hostile");
    let outside = f.tmp.join("outside-work-tree");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::copy(&f.secret_file, outside.join("a.txt")).unwrap();
    let canary = f.canary_str();
    append(
        &bare.join("config"),
        &format!(
            "[core]\n\tbare = false\n\tworktree = {}\n\tfsmonitor = {canary}\n\tpager = {canary}\n\
             \thooksPath = {}\n[diff]\n\texternal = {canary}\n[diff \"x\"]\n\ttextconv = {canary}\n\
             [alias]\n\tlog = !{canary}\n[mailmap]\n\tfile = {}\n[log]\n\tmailmap = true\n",
            outside.display(),
            f.tmp.join("hooks").display(),
            f.secret_file.display(),
        ),
    );
    std::fs::create_dir_all(bare.join("info")).unwrap();
    write(&bare.join("info/attributes"), "* diff=x\n");
    for hook in ["post-index-change", "reference-transaction", "pre-auto-gc"] {
        let path = bare.join("hooks").join(hook);
        write(&path, &format!("#!/bin/sh\n{canary}\n"));
        make_executable(&path);
    }
    let mut server = Server::start(&bare, &[]);
    let replies = server.sweep();
    assert!(replies.iter().all(|r| !r.is_error), "{replies:?}");
    let status = replies.last().expect("status").output();
    assert!(status.starts_with("(no work tree"), "{status}");
    let mut texts: Vec<String> = replies.iter().map(|r| r.text.clone()).collect();
    texts.push(server.stderr());
    f.assert_no_secret(&texts);
    f.assert_canary_silent();
}

#[test]
fn a_bare_root_that_borrows_or_leads_out_is_refused() {
    // Alternates.
    let (f, bare) = mirror("bare-alternates");
    write(
        &bare.join("objects/info/alternates"),
        &format!("{}\n", f.outside_repo().join(".git/objects").display()),
    );
    let mut server = Server::start(&bare, &[]);
    server
        .call("git_log", "{}")
        .assert_error_contains("alternates");
    drop(server);
    // A commondir naming another repository.
    let (f, bare) = mirror("bare-commondir");
    write(
        &bare.join("commondir"),
        &format!("{}\n", f.outside_repo().join(".git").display()),
    );
    let mut server = Server::start(&bare, &[]);
    let reply = server.call("git_log", "{}");
    reply.assert_error_contains("outside the project");
    f.assert_no_secret(&[reply.text]);
    drop(server);
    // A link in the object store leading out.
    let (f, bare) = mirror("bare-link");
    std::os::unix::fs::symlink("/", bare.join("objects/ab")).unwrap();
    let mut server = Server::start(&bare, &[]);
    server
        .call("git_log", "{}")
        .assert_error_contains("a link leading outside");
    f.assert_canary_silent();
}

#[test]
fn only_a_whole_bare_repository_outside_any_work_tree_is_taken_for_one() {
    let (f, bare) = mirror("bare-shape");
    // A FIFO for HEAD never blocks the start: it is not a bare repository.
    let fifo_root = f.tmp.join("fifo.git");
    std::fs::create_dir_all(fifo_root.join("objects")).unwrap();
    std::fs::create_dir_all(fifo_root.join("refs")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo_root.join("HEAD"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    let refusal = assert_refused_at_startup(&fifo_root);
    assert!(refusal.contains("not in a git work tree"), "{refusal}");
    // Missing refs/: not a repository.
    std::fs::remove_dir_all(bare.join("refs")).unwrap();
    let refusal = assert_refused_at_startup(&bare);
    assert!(refusal.contains("not in a git work tree"), "{refusal}");
    f.assert_canary_silent();
}
