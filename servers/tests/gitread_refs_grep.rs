//! `git_refs` and `git_grep` through the real binary, the way a host drives them: function tests,
//! attacks through hostile repositories (GIT-THREATS.md), and both modes' texts.

mod gitread_support;

use gitread_support::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Far below the 15 s timeout: a call that waited on a FIFO would take the whole timeout.
const PROMPT: Duration = Duration::from_secs(5);

/// The commit `rev` names, abbreviated as git_refs shows it (12 hex digits in a small repository).
fn short(root: &Path, rev: &str) -> String {
    git(root, &["rev-parse", "--short=12", rev])
}

/// The base fixture (main: first, second) plus: a third commit on main with a directory, a
/// binary file, a 30-line file, a line starting with '-', and a tracked symlink; lightweight tags
/// v1.0 (first) and v1.2 (second), an annotated tag v1.10 (second); branches feature-2 (at first)
/// and feature-10 (at third); a remote-tracking ref origin/main (at second).
fn refs_and_files(tag: &str) -> Fixture {
    let f = Fixture::new(tag);
    let root = &f.root;
    git(root, &["tag", "v1.0", "HEAD~1"]);
    git(root, &["tag", "v1.2"]);
    git(root, &["tag", "-a", "-m", "release 1.10", "v1.10"]);
    git(root, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(root, &["branch", "feature-2", "HEAD~1"]);
    write(
        &root.join("d/b.txt"),
        "foo in d\nFOO upper\na.b(c) literal\n",
    );
    write(&root.join("dash.txt"), "-x line\nthree\n");
    std::fs::write(root.join("bin.dat"), b"foo\0binary foo\n").expect("bin");
    let many: String = (1..=30).map(|n| format!("match {n}\n")).collect();
    write(&root.join("many.txt"), &many);
    std::os::unix::fs::symlink(f.secret_file.display().to_string(), root.join("ln"))
        .expect("symlink");
    git(root, &["add", "d", "dash.txt", "bin.dat", "many.txt", "ln"]);
    git(root, &["commit", "-q", "-m", "third"]);
    git(root, &["branch", "feature-10"]);
    f
}

/// Calls `name` and fails if it took anywhere near the timeout.
fn prompt_call(server: &mut Server, name: &str, args: &str) -> Reply {
    let started = Instant::now();
    let reply = server.call(name, args);
    let took = started.elapsed();
    assert!(took < PROMPT, "{name} {args} took {took:?}: {}", reply.text);
    reply
}

// ------------------------------------------------------------------------------ git_refs

#[test]
fn git_refs_lists_branches_remote_tracking_refs_and_tags_with_their_commits() {
    let f = refs_and_files("refs-fn");
    let (first, second, third) = (
        short(&f.root, "HEAD~2"),
        short(&f.root, "HEAD~1"),
        short(&f.root, "HEAD"),
    );
    let mut server = f.server();
    let all = server.call("git_refs", "{}").output();
    // Branches (by name, numbers by value), remote-tracking, then tags (v1.2 before v1.10); the
    // annotated tag shows the commit it tags and that commit's subject.
    let expected = format!(
        "feature-2\t{first}\tfirst\nfeature-10\t{third}\tthird\n* main\t{third}\tthird\n\
         origin/main\t{second}\tsecond\nv1.0\t{first}\tfirst\nv1.2\t{second}\tsecond\n\
         v1.10\t{second}\tsecond\n"
    );
    assert_eq!(all, expected);
    assert_eq!(
        server.call("git_refs", r#"{"kind":"all"}"#).output(),
        expected
    );
    assert_eq!(
        server.call("git_refs", r#"{"kind":null}"#).output(),
        expected
    );
    let branches = server.call("git_refs", r#"{"kind":"branch"}"#).output();
    assert_eq!(
        branches,
        format!("feature-2\t{first}\tfirst\nfeature-10\t{third}\tthird\n* main\t{third}\tthird\n")
    );
    assert_eq!(
        server.call("git_refs", r#"{"kind":"remote"}"#).output(),
        format!("origin/main\t{second}\tsecond\n")
    );
    assert_eq!(
        server
            .call("git_refs", r#"{"kind":"branch","names_only":true}"#)
            .output(),
        "feature-2\nfeature-10\n* main\n"
    );
    let tags = server.call("git_refs", r#"{"kind":"tag"}"#).output();
    assert_eq!(
        tags,
        format!("v1.0\t{first}\tfirst\nv1.2\t{second}\tsecond\nv1.10\t{second}\tsecond\n")
    );
    // contains: which releases and branches hold a commit.
    let holding = server
        .call("git_refs", r#"{"kind":"tag","contains":"HEAD~1"}"#)
        .output();
    assert_eq!(
        holding,
        format!("v1.2\t{second}\tsecond\nv1.10\t{second}\tsecond\n")
    );
    let holding = server
        .call(
            "git_refs",
            &format!(r#"{{"kind":"branch","contains":"{third}"}}"#),
        )
        .output();
    assert_eq!(
        holding,
        format!("feature-10\t{third}\tthird\n* main\t{third}\tthird\n")
    );
    assert_eq!(
        server
            .call("git_refs", r#"{"kind":"tag","contains":"HEAD"}"#)
            .output(),
        "(no refs: no tag contains HEAD)"
    );
    assert_eq!(
        server.call("git_refs", r#"{"contains":"main"}"#).output(),
        format!("feature-10\t{third}\tthird\n* main\t{third}\tthird\n")
    );
    server
        .call("git_refs", r#"{"contains":"nope"}"#)
        .assert_error_contains("unknown revision \"nope\" (contains)");
    // A detached HEAD marks no branch.
    git(&f.root, &["checkout", "-q", "--detach", "HEAD~1"]);
    let detached = server.call("git_refs", r#"{"kind":"branch"}"#).output();
    assert!(!detached.contains('*'), "{detached}");
    assert!(
        detached.contains(&format!("\nmain\t{third}\tthird\n")),
        "{detached}"
    );
}

#[test]
fn git_refs_says_why_an_empty_listing_is_empty() {
    let f = Fixture::new("refs-empty");
    let mut server = f.server();
    assert_eq!(
        server.call("git_refs", r#"{"kind":"tag"}"#).output(),
        "(no refs: the repository has no tags)"
    );
    let main = server.call("git_refs", r#"{"kind":"branch"}"#).output();
    assert!(main.starts_with("* main\t"), "{main}");
    // An unborn branch: no refs at all.
    let tmp = TempDir::new("refs-unborn");
    git(&tmp.path, &["init", "-q", "-b", "main"]);
    let mut server = Server::start(&tmp.path, &[]);
    assert_eq!(
        server.call("git_refs", "{}").output(),
        "(no refs: the repository has no branches or tags)"
    );
    assert_eq!(
        server.call("git_refs", r#"{"kind":"branch"}"#).output(),
        "(no refs: the repository has no branches)"
    );
}

// ------------------------------------------------------------------------------ git_grep

#[test]
fn git_grep_searches_the_committed_files_of_a_revision() {
    let f = refs_and_files("grep-fn");
    // Uncommitted work: a modified tracked file and an untracked one hold matches never shown.
    write(&f.root.join("a.txt"), "one\ntwo\nfoo uncommitted\n");
    write(&f.root.join("new.txt"), "foo untracked\n");
    let mut server = f.server();
    // Binary files skipped, the work tree never read, REV:path:line:text as git prints it.
    assert_eq!(
        server.call("git_grep", r#"{"pattern":"foo"}"#).output(),
        "HEAD:d/b.txt:1:foo in d\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"foo","ignore_case":true}"#)
            .output(),
        "HEAD:d/b.txt:1:foo in d\nHEAD:d/b.txt:2:FOO upper\n"
    );
    // Extended regexes by default; fixed strings on request.
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"t(wo|hree)$"}"#)
            .output(),
        "HEAD:a.txt:2:two\nHEAD:dash.txt:2:three\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"a.b(c)","fixed_strings":true}"#)
            .output(),
        "HEAD:d/b.txt:3:a.b(c) literal\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"^a.b(c)","fixed_strings":false}"#)
            .output(),
        "(no match for \"^a.b(c)\" at HEAD; binary files are not searched)"
    );
    // A pattern starting with '-' is text, never an option.
    assert_eq!(
        server.call("git_grep", r#"{"pattern":"-x"}"#).output(),
        "HEAD:dash.txt:1:-x line\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"--no-index"}"#)
            .output(),
        "(no match for \"--no-index\" at HEAD; binary files are not searched)"
    );
    // path: a directory, a file, "./" forms.
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"o","path":"d"}"#)
            .output(),
        "HEAD:d/b.txt:1:foo in d\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"o","path":"./a.txt"}"#)
            .output(),
        "HEAD:a.txt:1:one\nHEAD:a.txt:2:two\n"
    );
    assert_eq!(
        server
            .call(
                "git_grep",
                r#"{"pattern":"o","path":null,"max_per_file":1}"#
            )
            .output(),
        "HEAD:a.txt:1:one\nHEAD:d/b.txt:1:foo in d\n"
    );
    // rev: any revision's files.
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"two","rev":"v1.0"}"#)
            .output(),
        "(no match for \"two\" at v1.0; binary files are not searched)"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"two","rev":"v1.10"}"#)
            .output(),
        "v1.10:a.txt:2:two\n"
    );
    assert_eq!(
        server
            .call("git_grep", r#"{"pattern":"o","rev":"HEAD~2","path":"d"}"#)
            .output(),
        "(no match for \"o\" at HEAD~2 in \"d\"; binary files are not searched)"
    );
    // max_per_file: 20 by default, as asked, bounded.
    let many = server
        .call("git_grep", r#"{"pattern":"match","path":"many.txt"}"#)
        .output();
    assert_eq!(many.lines().count(), 20, "{many}");
    assert!(many.ends_with("HEAD:many.txt:20:match 20\n"), "{many}");
    let three = server
        .call("git_grep", r#"{"pattern":"match","max_per_file":3}"#)
        .output();
    assert_eq!(
        three,
        "HEAD:many.txt:1:match 1\nHEAD:many.txt:2:match 2\nHEAD:many.txt:3:match 3\n"
    );
    for bad in ["0", "1001", "\"3\""] {
        server
            .call(
                "git_grep",
                &format!(r#"{{"pattern":"x","max_per_file":{bad}}}"#),
            )
            .assert_error_contains("max_per_file must be an integer from 1 to 1000");
    }
    // A symlink in the tree (its blob is the target's path) is not searched, never followed.
    let link = server.call("git_grep", r#"{"pattern":"secret"}"#).output();
    assert_eq!(
        link,
        "(no match for \"secret\" at HEAD; binary files are not searched)"
    );
    let token = f.token.clone();
    let token = server
        .call("git_grep", &format!(r#"{{"pattern":"{token}"}}"#))
        .output();
    assert_eq!(
        token,
        format!(
            "(no match for \"{}\" at HEAD; binary files are not searched)",
            f.token
        )
    );
    f.assert_no_secret(&[link]);
    server
        .call("git_grep", r#"{"pattern":"x","rev":"nope"}"#)
        .assert_error_contains("unknown revision \"nope\" (rev)");
    server
        .call("git_grep", r#"{}"#)
        .assert_error_contains("git_grep needs a pattern, e.g. \"fn main\"");
}

// ------------------------------------------------------------------------------ attacks

#[test]
fn hostile_revisions_and_paths_are_refused_by_both_tools() {
    let f = refs_and_files("refs-grep-args");
    std::os::unix::fs::symlink(f.outside_repo(), f.root.join("out")).expect("symlink");
    std::os::unix::fs::symlink(f.root.join(".git"), f.root.join("gitlink")).expect("symlink");
    let pwned = f.tmp.join("pwned");
    let c = f.canary_str();
    let revs = [
        format!("--output={}", pwned.display()),
        "--output=/tmp/x".to_owned(),
        "HEAD:../x".to_owned(),
        "HEAD:a.txt".to_owned(),
        "-x".to_owned(),
        "--no-index".to_owned(),
        format!("--open-files-in-pager={c}"),
        format!("-O{c}"),
        "HEAD;rm".to_owned(),
        "HEAD with space".to_owned(),
    ];
    let mut server = f.server();
    let mut seen = Vec::new();
    for rev in &revs {
        let rev = rev.replace('\\', "\\\\").replace('"', "\\\"");
        for (tool, args, needle) in [
            (
                "git_refs",
                format!(r#"{{"contains":"{rev}"}}"#),
                "contains must be a plain revision",
            ),
            (
                "git_grep",
                format!(r#"{{"pattern":"one","rev":"{rev}"}}"#),
                "rev must be a plain revision",
            ),
        ] {
            let reply = server.call(tool, &args);
            reply.assert_error_contains(needle);
            seen.push(reply.text);
        }
    }
    // A revision that names a file of the work tree is still a revision: never a work-tree search.
    for rev in ["a.txt", "new.txt", "d"] {
        let reply = server.call("git_grep", &format!(r#"{{"pattern":"o","rev":"{rev}"}}"#));
        reply.assert_error_contains(&format!("unknown revision \"{rev}\" (rev)"));
        seen.push(reply.text);
    }
    for (path, needle) in [
        ("../secret.txt", "path must be inside the project"),
        (".git", "path must be inside the project"),
        (".git/config", "path must be inside the project"),
        ("gitlink/config", "path must be inside the project"),
        ("out/secret.txt", "path must be inside the project"),
        ("d/../../secret.txt", "path must be inside the project"),
        ("/etc/passwd", "path must be a relative path"),
        ("-x", "path must be a relative path"),
    ] {
        let reply = server.call("git_grep", &format!(r#"{{"pattern":"S","path":"{path}"}}"#));
        reply.assert_error_contains(needle);
        seen.push(reply.text);
    }
    for (args, needle) in [
        (
            r#"{"kind":"tags"}"#,
            "kind must be \"branch\", \"remote\", \"tag\" or \"all\"",
        ),
        (
            r#"{"kind":5}"#,
            "kind must be \"branch\", \"remote\", \"tag\" or \"all\"",
        ),
    ] {
        server.call("git_refs", args).assert_error_contains(needle);
    }
    assert!(!pwned.exists() && !Path::new("/tmp/x").exists());
    f.assert_canary_silent();
    seen.push(server.stderr());
    f.assert_no_secret(&seen);
}

#[test]
fn huge_and_malformed_patterns_are_refused_before_git_runs() {
    let f = Fixture::new("grep-patterns");
    let mut server = f.server();
    let rule = "pattern must be one line of 1 to 1000 bytes";
    let at_edge = "o".repeat(1000);
    let reply = prompt_call(
        &mut server,
        "git_grep",
        &format!(r#"{{"pattern":"{at_edge}"}}"#),
    );
    assert!(
        reply.output().starts_with("(no match for \"ooo"),
        "{}",
        reply.text
    );
    for pattern in [
        "o".repeat(1001),
        "o".repeat(1 << 19),
        "\u{e9}".repeat(501),
        String::new(),
    ] {
        prompt_call(
            &mut server,
            "git_grep",
            &format!(r#"{{"pattern":"{pattern}"}}"#),
        )
        .assert_error_contains(rule);
    }
    for escaped in [r"one\ntwo", r"one\rtwo", r"one\u0000two"] {
        server
            .call("git_grep", &format!(r#"{{"pattern":"{escaped}"}}"#))
            .assert_error_contains(rule);
    }
    server
        .call("git_grep", r#"{"pattern":["one"]}"#)
        .assert_error_contains(rule);
    assert!(!server.call("git_grep", r#"{"pattern":"two"}"#).is_error);
}

#[test]
fn a_regex_that_exhausts_memory_ends_in_an_error_and_the_server_keeps_serving() {
    let f = Fixture::new("grep-regex-memory");
    let mut server = f.server();
    for pattern in ["a{32767}{32767}", ".{1,32767}{1,32767}"] {
        // Not `prompt_call`: the allocation up to the memory limit takes seconds on a loaded
        // machine, and the message below already proves the limit, not the timeout, ended it.
        let reply = server.call("git_grep", &format!(r#"{{"pattern":"{pattern}"}}"#));
        reply.assert_error_contains("git exited 128");
        reply.assert_error_contains("Memory exhausted");
    }
    assert_eq!(
        server.call("git_grep", r#"{"pattern":"tw."}"#).output(),
        "HEAD:a.txt:2:two\n"
    );
}

#[test]
fn a_regex_that_backtracks_for_ever_ends_at_the_timeout_and_the_server_keeps_serving() {
    let f = Fixture::new("grep-regex-slow");
    write(
        &f.root.join("long.txt"),
        &format!("{}\n", "a".repeat(5_000)),
    );
    git(&f.root, &["add", "long.txt"]);
    git(&f.root, &["commit", "-q", "-m", "long"]);
    let mut server = f.server();
    let started = Instant::now();
    // Back-references make glibc's matcher backtrack: minutes on one 5000-byte line, in under
    // 100 MB. (`(.*){1,200}x` or `(a*)*\1b` run out of the memory limit first, and git takes a
    // failed match for no match.)
    let reply = server.call(
        "git_grep",
        r#"{"pattern":"(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1x"}"#,
    );
    let took = started.elapsed();
    reply.assert_error_contains("git timed out after 15s");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(
        prompt_call(&mut server, "git_grep", r#"{"pattern":"tw."}"#).output(),
        "HEAD:a.txt:2:two\n"
    );
}

#[test]
fn repository_config_cannot_turn_on_perl_regexes_textconv_or_reshape_the_output() {
    let f = refs_and_files("grep-config");
    // Attributes both committed and in the work tree name the textconv driver.
    write(&f.root.join(".gitattributes"), "* diff=t\n");
    git(&f.root, &["add", ".gitattributes"]);
    git(&f.root, &["commit", "-q", "-m", "attributes"]);
    let clean = {
        let mut server = f.server();
        (
            server.call("git_grep", r#"{"pattern":"o"}"#).output(),
            server.call("git_refs", "{}").output(),
        )
    };
    f.plant_config(&format!(
        "[grep]\n\tpatternType = perl\n\textendedRegexp = false\n\tcolumn = true\n\t\
         lineNumber = false\n\tfullName = false\n\tthreads = 64\n\tfallbackToNoIndex = true\n\
         [color]\n\tgrep = always\n\tui = always\n[color \"grep\"]\n\tmatch = red\n\
         [submodule]\n\trecurse = true\n[core]\n\tquotePath = false\n\tabbrev = 40\n\
         [diff \"t\"]\n\ttextconv = {c}\n\tcachetextconv = true\n\tbinary = false\n\
         [versionsort]\n\tsuffix = -rc\n",
        c = f.canary_str()
    ));
    f.touch_worktree();
    let mut server = f.server();
    let grep = server
        .call("git_grep", r#"{"pattern":"o","path":"d"}"#)
        .output();
    assert_eq!(grep, "HEAD:d/b.txt:1:foo in d\n");
    let whole = server.call("git_grep", r#"{"pattern":"o"}"#).output();
    assert_eq!(whole, clean.0.clone());
    // A Perl-only construct is no regex git accepts here: never a Perl match.
    let perl = server.call("git_grep", r#"{"pattern":"o(?=n)"}"#);
    assert!(perl.is_error, "{}", perl.text);
    assert!(!perl.text.contains("a.txt:1:one"), "{}", perl.text);
    assert_eq!(server.call("git_refs", "{}").output(), clean.1);
    f.assert_canary_silent();
    assert!(!f.root.join(".git/refs/notes/textconv").exists());
    // A filter driver refuses the repository for both tools.
    f.plant_config(&format!(
        "[filter \"x\"]\n\tclean = {c}\n\tsmudge = {c}\n",
        c = f.canary_str()
    ));
    for (tool, args) in [("git_grep", r#"{"pattern":"o"}"#), ("git_refs", "{}")] {
        server
            .call(tool, args)
            .assert_error_contains("the repository config defines filter.* drivers");
    }
    f.assert_canary_silent();
}

#[test]
fn hostile_names_and_content_come_out_escaped() {
    let f = Fixture::new("refs-grep-escapes");
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    // Written directly: git refuses to create either name, but a repository can hold them.
    write(
        &f.root.join(".git/refs/heads/evil\u{202e}txt.rs"),
        &format!("{head}\n"),
    );
    write(
        &f.root.join(".git/refs/tags/esc\x1b[2Jx"),
        &format!("{head}\n"),
    );
    write(
        &f.root.join("evil.txt"),
        "needle \x1b[31mred\u{202e}x\u{7}\n",
    );
    git(&f.root, &["add", "evil.txt"]);
    git(
        &f.root,
        &[
            "commit",
            "-q",
            "-m",
            "needle \x1b]8;;http://x\x07link\u{2066}subject",
        ],
    );
    let mut server = f.server();
    let refs = server.call("git_refs", "{}").output();
    let grep = server.call("git_grep", r#"{"pattern":"needle"}"#).output();
    for text in [&refs, &grep] {
        assert!(
            !text
                .chars()
                .any(|c| matches!(c, '\x1b' | '\u{7}' | '\u{202e}' | '\u{2066}')),
            "{text:?}"
        );
    }
    assert!(refs.contains("evil\\u{202e}txt.rs\t"), "{refs:?}");
    assert!(
        refs.contains("\\x1b]8;;http://x\\x07link\\u{2066}subject"),
        "{refs:?}"
    );
    // A name with a control character is no ref to git: skipped, never printed.
    assert!(!refs.contains("esc"), "{refs:?}");
    assert!(
        grep.contains("needle \\x1b[31mred\\u{202e}x\\x07"),
        "{grep:?}"
    );
    // Names like options are data, never argv.
    write(
        &f.root.join(".git/refs/heads/--output=pwned"),
        &format!("{head}\n"),
    );
    let listed = server.call("git_refs", r#"{"kind":"branch"}"#).output();
    assert!(listed.starts_with("--output=pwned\t"), "{listed}");
    assert!(!f.root.join("pwned").exists());
}

/// git grep at a revision reads only the object store: FIFOs and links in the work tree, in
/// place of tracked files, attributes files or whole directories, are never opened (it runs from
/// `/`, outside the work tree), so every call answers at once with the committed content.
#[test]
fn fifos_and_links_in_the_work_tree_never_block_or_leak_into_a_grep() {
    let f = refs_and_files("grep-fifo");
    let outside = f.tmp.join("outside-dir");
    std::fs::create_dir_all(&outside).expect("outside dir");
    // An attributes file outside, whose lines git would quote in warnings and which would mark
    // every file below the linked directory binary (so skipped) if git read it.
    write(
        &outside.join(".gitattributes"),
        &format!("* @{}\n* -diff\n", f.token),
    );
    mkfifo(&f.tmp.join("outside.fifo"));
    // The tracked a.txt, the top .gitattributes and d/.gitattributes become FIFOs; the tracked
    // directory d becomes a link to an outside directory; the tracked link ln stays a link.
    std::fs::remove_file(f.root.join("a.txt")).expect("rm");
    mkfifo(&f.root.join("a.txt"));
    mkfifo(&f.root.join(".gitattributes"));
    std::fs::rename(f.root.join("d"), f.tmp.join("d-moved")).expect("mv");
    std::os::unix::fs::symlink(&outside, f.root.join("d")).expect("symlink");
    mkfifo(&f.root.join("many.txt.fifo"));
    std::os::unix::fs::symlink(f.tmp.join("outside.fifo"), f.root.join("dash.txt.link"))
        .expect("symlink");
    let mut server = f.server();
    let mut seen = Vec::new();
    for (args, expected) in [
        (r#"{"pattern":"two"}"#, "HEAD:a.txt:2:two\n"),
        (r#"{"pattern":"foo"}"#, "HEAD:d/b.txt:1:foo in d\n"),
        (
            r#"{"pattern":"o","path":"a.txt"}"#,
            "HEAD:a.txt:1:one\nHEAD:a.txt:2:two\n",
        ),
    ] {
        let reply = prompt_call(&mut server, "git_grep", args);
        assert_eq!(reply.output(), expected, "{args}");
        seen.push(reply.text);
    }
    // The path rule still applies to the work tree's links.
    let reply = prompt_call(&mut server, "git_grep", r#"{"pattern":"o","path":"d"}"#);
    reply.assert_error_contains("path must be inside the project");
    seen.push(reply.text);
    let refs = prompt_call(&mut server, "git_refs", "{}");
    assert!(!refs.is_error, "{}", refs.text);
    seen.push(refs.text);
    seen.push(server.stderr());
    f.assert_no_secret(&seen);
    f.assert_canary_silent();
}

/// git grep at a revision and for-each-ref do not read the index, so a split index (which every
/// index read would freshen) neither refuses them nor is written.
#[test]
fn a_split_index_is_neither_read_nor_written_by_refs_or_grep() {
    let f = Fixture::new("refs-grep-split");
    git(&f.root, &["update-index", "--split-index"]);
    std::thread::sleep(Duration::from_millis(20));
    let before = snapshot(&f.root);
    let mut server = f.server();
    assert_eq!(
        server.call("git_grep", r#"{"pattern":"two"}"#).output(),
        "HEAD:a.txt:2:two\n"
    );
    assert!(server
        .call("git_refs", "{}")
        .output()
        .starts_with("* main\t"));
    server
        .call("git_status", "{}")
        .assert_error_contains("split");
    assert_eq!(snapshot(&f.root), before, "the repository changed");
}

/// The repository checks apply: a `.git` that leads out refuses both tools.
#[test]
fn a_git_dir_that_leads_out_refuses_both_tools() {
    let f = Fixture::new("refs-grep-dotgit");
    f.dot_git_symlink_to(&f.outside_repo().join(".git"));
    let mut server = f.server();
    let mut seen = Vec::new();
    for (tool, args) in [("git_refs", "{}"), ("git_grep", r#"{"pattern":"SECRET"}"#)] {
        let reply = server.call(tool, args);
        reply.assert_error_contains("outside the project");
        seen.push(reply.text);
    }
    seen.push(server.stderr());
    f.assert_no_secret(&seen);
}

// ------------------------------------------------------------------------------ both modes

#[test]
fn product_declarations_of_refs_and_grep_are_pinned() {
    let f = Fixture::new("refs-grep-list");
    let mut server = f.server();
    let listed = server.request("tools/list", "{}");
    let tools = listed
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(|t| t.as_array())
        .expect("tools");
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
            .unwrap_or_else(|| panic!("{name} is listed"))
            .clone()
    };
    let refs = find("git_refs");
    assert_eq!(
        refs.get("description").and_then(|d| d.as_str()),
        Some("List branches and tags: name (\"* \" marks HEAD's), commit, subject. Use it to see which branches and releases exist or contain a commit.")
    );
    assert_eq!(
        agentteams_mcp::json::to_string(refs.get("inputSchema").expect("schema")),
        r#"{"type":"object","properties":{"kind":{"type":"string","enum":["branch","remote","tag","all"],"description":"Which refs: local branches, remote-tracking ones, tags or all, e.g. \"tag\".","default":"all"},"contains":{"type":"string","description":"Only refs that contain this commit, e.g. \"3f2a9c1\".","default":null},"names_only":{"type":"boolean","description":"Names only, without commits and subjects, e.g. true.","default":false},"offset":{"type":"integer","minimum":0,"maximum":1099511627776,"description":"Resume a cut answer at this byte, e.g. 61184.","default":0}}}"#
    );
    let grep = find("git_grep");
    assert_eq!(
        grep.get("description").and_then(|d| d.as_str()),
        Some("Search a revision's committed files for a pattern: REV:path:line:text. Use it to find where something is defined or used.")
    );
    assert_eq!(
        agentteams_mcp::json::to_string(grep.get("inputSchema").expect("schema")),
        r#"{"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string","minLength":1,"description":"A regex (grep -E), or text with fixed_strings, e.g. \"TODO|FIXME\"."},"rev":{"type":"string","description":"The revision to search, e.g. \"v1.0\".","default":"HEAD"},"path":{"type":"string","description":"Only in this file or directory, e.g. \"src\".","default":null},"ignore_case":{"type":"boolean","description":"Ignore case, e.g. true.","default":false},"fixed_strings":{"type":"boolean","description":"The pattern is literal text, e.g. true.","default":false},"max_per_file":{"type":"integer","minimum":1,"maximum":1000,"description":"Most matching lines per file, e.g. 5.","default":20},"offset":{"type":"integer","minimum":0,"maximum":1099511627776,"description":"Resume a cut answer at this byte, e.g. 61184.","default":0}}}"#
    );
}

#[test]
fn refs_and_grep_are_unknown_under_compat_reference() {
    let f = Fixture::new("refs-grep-reference");
    let mut server = f.reference_server();
    let listed = server.request("tools/list", "{}").to_string();
    assert!(
        !listed.contains("git_refs") && !listed.contains("git_grep"),
        "{listed}"
    );
    for (name, args) in [("git_refs", "{}"), ("git_grep", r#"{"pattern":"one"}"#)] {
        let reply = server.request(
            "tools/call",
            &format!(r#"{{"name":"{name}","arguments":{args}}}"#),
        );
        let error = reply.get("error").unwrap_or_else(|| panic!("{reply}"));
        assert_eq!(
            error.get("message").and_then(|m| m.as_str()),
            Some(format!("unknown tool '{name}'").as_str()),
            "{reply}"
        );
    }
}
