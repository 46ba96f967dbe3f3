//! Hostile-repository tests for the hardening findings that followed the threat catalogue: a split
//! index whose shared part every index read freshens, a work tree `.mailmap` that rewrote the
//! identities `git_blame` prints, and git's advice hiding the real error on older gits.
//! Run once per installed git (`AGENTTEAMS_GIT`), like the other gitread suites.

mod gitread_support;

use agentteams_mcp_servers::gitread::GitRead;
use gitread_support::*;
use std::path::Path;
use std::time::Duration;

/// The refusal text must tell the operator how to serve the repository.
const SPLIT_INDEX_WAY_OUT: &str = "git update-index --no-split-index";

/// Splits the fixture's index at `version` (2, 3 or 4) the way an operator would.
fn split_index(root: &Path, version: &str) {
    if version == "3" {
        // Version 3 is only written when an entry needs extended flags (intent-to-add here).
        git(root, &["add", "-N", "new.txt"]);
    }
    git(root, &["update-index", "--index-version", version]);
    git(root, &["update-index", "--split-index"]);
    let names: Vec<String> = walk(&root.join(".git"))
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(names.iter().any(|n| n.starts_with("sharedindex.")));
}

/// Runs the sweep and checks that nothing under the repository changed (mtimes included).
fn sweep_without_writes(f: &Fixture, server: &mut Server) -> Vec<Reply> {
    // Timestamps written by a freshen must differ from the recorded ones.
    std::thread::sleep(Duration::from_millis(20));
    let before = snapshot(&f.root);
    let replies = server.sweep();
    assert_eq!(snapshot(&f.root), before, "the repository changed");
    replies
}

/// I7 (split index): every git command that reads a split index refreshes the mtime of
/// `.git/sharedindex.<id>` (read_index_from calls freshen_shared_index; neither
/// `GIT_OPTIONAL_LOCKS=0` nor any setting stops it). Of the sweep only `git status` reads the
/// index, so it is refused with the way out, the other tools are served, and nothing is written.
#[test]
fn a_split_index_is_never_freshened_and_status_is_refused_with_the_way_out() {
    // The index is a work tree's: a bare root reads none (its git_status says there is no work
    // tree), so this vector exists only in work-tree runs.
    if on_bare_root() {
        return;
    }
    for version in ["2", "3", "4"] {
        let f = Fixture::new("split-index");
        split_index(&f.root, version);
        let mut server = f.server();
        let replies = sweep_without_writes(&f, &mut server);
        for ((name, args), reply) in SWEEP.iter().zip(&replies) {
            if *name == "git_status" {
                reply.assert_error_contains("split");
                reply.assert_error_contains(SPLIT_INDEX_WAY_OUT);
            } else {
                assert!(!reply.is_error, "{name} {args}: {}", reply.text);
            }
        }
        assert!(replies[2].output().contains("+two"), "index v{version}");
    }
}

/// The code-index builder's listing (`git ls-files`) reads the index too: refused the same way.
#[test]
fn a_split_index_refuses_the_file_listing_without_writing() {
    let f = Fixture::new("split-index-ls");
    split_index(&f.root, "2");
    std::thread::sleep(Duration::from_millis(20));
    let before = snapshot(&f.root);
    let server = GitRead::new(&f.root).expect("server");
    let listing = server.list_files(Duration::from_secs(30), 1 << 20, |_| ());
    assert_eq!(snapshot(&f.root), before, "the repository changed");
    let message = listing.expect_err("a split index must refuse the listing");
    assert!(message.contains(SPLIT_INDEX_WAY_OUT), "{message}");
}

/// Positive control: after the operator follows the advice (the stale shared index stays on disk,
/// as git leaves it until it expires) the same server serves status again without writing.
#[test]
fn an_index_that_is_no_longer_split_is_served_again() {
    // The index is a work tree's: a bare root reads none (its git_status says there is no work
    // tree), so this vector exists only in work-tree runs.
    if on_bare_root() {
        return;
    }
    let f = Fixture::new("unsplit-index");
    split_index(&f.root, "2");
    let mut server = f.server();
    server
        .call("git_status", "{}")
        .assert_error_contains(SPLIT_INDEX_WAY_OUT);
    git(&f.root, &["update-index", "--no-split-index"]);
    let replies = sweep_without_writes(&f, &mut server);
    assert_sweep_served(&replies);
    assert!(replies[7].output().contains("?? new.txt"));
}

/// The index parser knows SHA-256 repositories (32-byte object ids) as well.
#[test]
fn a_split_index_of_a_sha256_repository_is_refused_and_an_unsplit_one_served() {
    let tmp = TempDir::new("split-sha256");
    let root = tmp.join("repo");
    std::fs::create_dir_all(&root).expect("repo dir");
    git(
        &root,
        &["init", "-q", "--object-format=sha256", "-b", "main"],
    );
    write(&root.join("a.txt"), "one\n");
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    let mut server = Server::start(&root, &[]);
    assert!(!server.call("git_status", "{}").is_error);
    git(&root, &["update-index", "--split-index"]);
    std::thread::sleep(Duration::from_millis(20));
    let before = snapshot(&root);
    server
        .call("git_status", "{}")
        .assert_error_contains(SPLIT_INDEX_WAY_OUT);
    assert_eq!(snapshot(&root), before, "the repository changed");
}

/// Plants one variant of an attack in a fresh fixture.
type Plant = fn(&Fixture);

/// I5 (blame): `git blame` reads the work tree's `.mailmap` whatever `log.mailmap` says, so a
/// planted one rewrote the identities it printed. Blame must print what the commits record, byte
/// for byte what a clean copy prints, whether `log.mailmap` or `core.worktree` is set, and never
/// the content of a `.mailmap` symlinked to an outside file.
#[test]
fn blame_prints_the_identities_the_commits_record() {
    let clean = Fixture::new("mailmap-clean");
    let oracle = clean
        .server()
        .call("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#)
        .output();
    assert!(oracle.contains("(Alice "), "{oracle}");
    let variants: [(&str, Plant); 5] = [
        ("a .mailmap in the work tree", |f| {
            write(&f.root.join(".mailmap"), "SPOOFED <alice@example.com>\n");
        }),
        ("with log.mailmap=true", |f| {
            write(&f.root.join(".mailmap"), "SPOOFED <alice@example.com>\n");
            f.plant_config("[log]\n\tmailmap = true\n");
        }),
        ("with core.worktree naming the root", |f| {
            write(&f.root.join(".mailmap"), "SPOOFED <alice@example.com>\n");
            f.plant_config(&format!(
                "[log]\n\tmailmap = true\n[core]\n\tworktree = {}\n",
                f.root.display()
            ));
        }),
        ("with core.worktree naming an outside dir", |f| {
            let elsewhere = f.tmp.join("elsewhere");
            write(&elsewhere.join(".mailmap"), "SPOOFED <alice@example.com>\n");
            write(&f.root.join(".mailmap"), "SPOOFED <alice@example.com>\n");
            f.plant_config(&format!("[core]\n\tworktree = {}\n", elsewhere.display()));
        }),
        ("a .mailmap symlinked to an outside file", |f| {
            let outside = f.tmp.join("outside-mailmap");
            write(&outside, &format!("{} <alice@example.com>\n", f.token));
            std::os::unix::fs::symlink(&outside, f.root.join(".mailmap")).expect("symlink");
            f.plant_config("[log]\n\tmailmap = true\n");
        }),
    ];
    for (what, plant) in variants {
        let f = Fixture::new("mailmap");
        plant(&f);
        let mut server = f.server();
        let reply = server.call("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#);
        let blame = reply.output();
        assert!(!blame.contains("SPOOFED"), "{what}: {blame}");
        assert_eq!(blame, oracle, "{what}");
        f.assert_no_secret(&[reply.text.clone(), server.stderr()]);
    }
}

/// O-class (error excerpts): with `GIT_GRAFT_FILE=/dev/null`, git 2.39 printed its "info/grafts
/// is deprecated" advice before the real error, and a ref named like an object id added the
/// objectNameWarning advice; both filled the 400-byte stderr excerpt. Errors must carry git's own
/// message and no advice, on every git (`GIT_ADVICE=0` only exists from git 2.46).
#[test]
fn errors_carry_the_real_message_and_no_advice() {
    let f = Fixture::new("advice");
    let head = git(&f.root, &["rev-parse", "HEAD"]);
    // A ref named like an object id: git warns that the name is ambiguous, then advises at length.
    write(
        &f.root.join(".git/refs/heads").join(&head),
        &format!("{head}\n"),
    );
    let mut server = f.server();
    let checks = [
        (
            "git_show",
            r#"{"rev":"nosuchrev"}"#.to_owned(),
            "unknown revision",
        ),
        (
            "git_log",
            r#"{"rev":"nosuchrev","n":1}"#.to_owned(),
            "unknown revision",
        ),
        (
            "git_blame",
            r#"{"rev":"HEAD","path":"missing.txt"}"#.to_owned(),
            "no such path",
        ),
        (
            "git_diff",
            format!(r#"{{"base":"{head}","head":"nosuchrev"}}"#),
            "bad revision",
        ),
    ];
    for (name, args, real) in checks {
        let reply = server.call(name, &args);
        reply.assert_error_contains(real);
        assert!(!reply.text.contains("hint:"), "{name}: {}", reply.text);
        assert!(!reply.text.contains("advice."), "{name}: {}", reply.text);
    }
    let served = server.call("git_log", &format!(r#"{{"rev":"{head}","n":1}}"#));
    assert!(served.output().contains("second"));
}
