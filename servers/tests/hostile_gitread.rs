//! gitread against work-tree files shaped to block, inflate or lead out, through the real binary:
//! the "link, FIFO, huge, sparse, deep" walk of every file git reads in the work tree (the git dir
//! itself is `p15`/`p16` in gitread_threats.rs). Each call must answer promptly, well inside the
//! 15 s timeout, so a repository cannot make every call cost the whole timeout.

mod gitread_support;

use gitread_support::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Far below the 15 s timeout: a call that waited on a FIFO would take the whole timeout.
const PROMPT: Duration = Duration::from_secs(5);

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

fn sparse(path: &Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

/// Calls `name` and fails if it took the timeout; returns the reply.
fn prompt_call(server: &mut Server, name: &str, args: &str) -> Reply {
    let started = Instant::now();
    let reply = server.call(name, args);
    let took = started.elapsed();
    assert!(
        took < PROMPT,
        "{name} {args} took {took:?}: {}",
        &reply.text[..reply.text.len().min(200)]
    );
    reply
}

#[test]
fn work_tree_links_fifos_sparse_files_and_nested_gitfiles_are_never_waited_on() {
    // Work-tree files: a bare root has none, so this vector exists only in work-tree runs.
    if on_bare_root() {
        return;
    }
    let f = Fixture::new("hostile-worktree");
    let outside_fifo = f.tmp.join("outside.fifo");
    mkfifo(&outside_fifo);
    // In-tree files git reads, as links to a FIFO outside: git (>= 2.32) does not follow them.
    for name in [".gitattributes", ".mailmap", ".gitignore"] {
        std::os::unix::fs::symlink(&outside_fifo, f.root.join(name)).unwrap();
    }
    let sub = f.root.join("linked");
    std::fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink(&outside_fifo, sub.join(".gitignore")).unwrap();
    // Untracked FIFOs and a tracked file replaced by one: lstat only, never opened.
    mkfifo(&f.root.join("untracked.fifo"));
    std::fs::remove_file(f.root.join("a.txt")).unwrap();
    mkfifo(&f.root.join("a.txt"));
    // Nested gitfiles git probes while walking untracked directories: a FIFO, a huge sparse one.
    for (dir, plant) in [("nested-fifo", 0u64), ("nested-huge", 20 << 30)] {
        let dir = f.root.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        if plant == 0 {
            mkfifo(&dir.join(".git"));
        } else {
            sparse(&dir.join(".git"), plant);
        }
    }
    // A huge sparse untracked file: listed, never hashed.
    sparse(&f.root.join("huge.bin"), 50 << 30);
    let mut server = f.server();
    let status = prompt_call(&mut server, "git_status", "{}").output();
    assert!(status.contains("?? huge.bin"), "{status}");
    assert!(
        status.contains(" M a.txt") || status.contains(" T a.txt"),
        "{status}"
    );
    assert!(!status.contains("untracked.fifo"), "{status}");
    prompt_call(
        &mut server,
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD"}"#,
    )
    .output();
    prompt_call(&mut server, "git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#);
    prompt_call(&mut server, "git_log", r#"{"path":"a.txt"}"#).output();
}

#[test]
fn long_deep_and_climbing_path_arguments_are_answered_promptly() {
    let f = Fixture::new("hostile-paths");
    let mut server = f.server();
    for path in [
        "a/".repeat(40_000) + "x",
        "../".repeat(40_000) + "etc/passwd",
        "./".repeat(100_000) + "a.txt",
        "x".repeat(100_000),
    ] {
        for (tool, extra) in [("git_log", ""), ("git_blame", r#""rev":"HEAD","#)] {
            let reply = prompt_call(&mut server, tool, &format!(r#"{{{extra}"path":"{path}"}}"#));
            // A missing path inside is an empty log (as the reference); one climbing out is refused.
            if path.starts_with("../") {
                reply.assert_error_contains("path must be inside the project");
            }
        }
    }
    // Still serving.
    prompt_call(&mut server, "git_log", r#"{"n":1}"#).output();
}

/// git opens the in-tree `.gitignore` (status, and `index build`'s `ls-files`) in every folder it
/// walks, `.gitattributes` (status, diff) and include targets in the work tree with a plain
/// blocking `open`, so a FIFO planted there made each such call wait for the 15 s timeout. gitread
/// sees git waiting in a FIFO's `open` (`blocked.rs`) and ends the call at once, naming the file;
/// the server keeps serving. (`.mailmap`: blame runs from `/`, so the work tree's is never opened.)
#[test]
fn in_tree_fifos_that_git_opens_do_not_stall_calls() {
    // Work-tree files: a bare root has none, so this vector exists only in work-tree runs.
    if on_bare_root() {
        return;
    }
    for (name, tool, args) in [
        (".gitignore", "git_status", "{}"),
        ("sub/deeper/.gitignore", "git_status", "{}"),
        (".gitattributes", "git_status", "{}"),
        (
            ".gitattributes",
            "git_diff",
            r#"{"base":"HEAD~1","head":"HEAD"}"#,
        ),
        (".mailmap", "git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#),
        ("cfg/include", "git_log", r#"{"n":1}"#),
    ] {
        let f = Fixture::new("hostile-in-tree-fifo");
        std::fs::create_dir_all(f.root.join("cfg")).unwrap();
        std::fs::create_dir_all(f.root.join("sub/deeper")).unwrap();
        // Stale stat data (as in an unpacked archive) makes status re-hash a.txt, which is when
        // it reads the attributes; without it, whether status opens .gitattributes depends on
        // the clock (racily clean entries).
        f.touch_worktree();
        mkfifo(&f.root.join(name));
        if name == "cfg/include" {
            append(
                &f.root.join(".git/config"),
                "[include]\n\tpath = ../cfg/include\n",
            );
        }
        let mut server = f.server();
        let reply = server.call(tool, args);
        if name == ".mailmap" {
            assert!(!reply.is_error, "{}", reply.text);
            continue;
        }
        // git names the file relative to the work tree, or through the git dir for an include.
        let named = if name == "cfg/include" {
            format!(
                "{}\", which is a FIFO in the project",
                f.root.join(".git/../cfg/include").display()
            )
        } else {
            format!("it was opening \"{name}\", which is a FIFO in the project")
        };
        reply.assert_error_contains(&named);
        assert!(
            !server.call("git_log", r#"{"rev":"HEAD~1","n":1}"#).is_error || name == "cfg/include"
        );
    }
}
