//! `git_log`'s filters, refs and merge marks, and `stat` on `git_log`, `git_diff` and `git_show`,
//! through the real binary over stdio: function (pinned texts), both modes, and attacks.

mod gitread_support;

use agentteams_mcp::json::{self, Value};
use gitread_support::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A path longer than any stat width git would pick by itself.
const LONG: &str = "src/a/very/long/directory/name/that/goes/on/and/on/past/eighty/columns/of/terminal/width/file_with_a_long_name.rs";

/// Commits `args` in `root` as `name <email>` at `date` (author and committer).
fn commit_as(root: &Path, name: &str, email: &str, date: &str, args: &[&str]) {
    let out = git_command(root)
        .env("GIT_AUTHOR_NAME", name)
        .env("GIT_AUTHOR_EMAIL", email)
        .env("GIT_COMMITTER_NAME", name)
        .env("GIT_COMMITTER_EMAIL", email)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The base fixture (Alice: `first`, `second`, 2024-01-01) plus tag `v1.0` on `second`; branch
/// `feature` with Carol's `feature work` (2024-03-01, adds src/lib.rs and a long path); Bob's
/// `fix: main bug` on main (2024-02-01); Bob's merge of feature (2024-04-01) tagged `v2.0`
/// (annotated); a remote-tracking ref and a notes ref that decorations leave out.
struct History {
    f: Fixture,
    first: String,
    second: String,
    fix: String,
    feature: String,
    merge: String,
}

fn history(tag: &str) -> History {
    let f = Fixture::new(tag);
    let root = f.root.clone();
    git(&root, &["tag", "v1.0"]);
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(&root.join("src/lib.rs"), "x\ny\n");
    write(&root.join(LONG), "long\n");
    git(&root, &["add", "src"]);
    let carol = ("Carol", "carol@example.net");
    commit_as(
        &root,
        carol.0,
        carol.1,
        "2024-03-01T00:00:00Z",
        &["commit", "-q", "-m", "feature work"],
    );
    git(&root, &["checkout", "-q", "main"]);
    append(&root.join("a.txt"), "three\n");
    let bob = ("Bob", "bob@example.org");
    commit_as(
        &root,
        bob.0,
        bob.1,
        "2024-02-01T00:00:00Z",
        &["commit", "-q", "-am", "fix: main bug"],
    );
    commit_as(
        &root,
        bob.0,
        bob.1,
        "2024-04-01T00:00:00Z",
        &[
            "merge",
            "-q",
            "--no-ff",
            "feature",
            "-m",
            "Merge branch 'feature'",
        ],
    );
    commit_as(
        &root,
        bob.0,
        bob.1,
        "2024-04-01T00:00:00Z",
        &["tag", "-a", "v2.0", "-m", "release"],
    );
    git(&root, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(&root, &["update-ref", "refs/notes/commits", "HEAD~1"]);
    let short = |rev: &str| git(&root, &["rev-parse", "--short", rev]);
    History {
        first: short("v1.0~1"),
        second: short("v1.0"),
        fix: short("HEAD^1"),
        feature: short("HEAD^2"),
        merge: short("HEAD"),
        f,
    }
}

impl History {
    /// The product's line of each commit, newest first.
    fn lines(&self) -> [String; 5] {
        let History {
            first,
            second,
            fix,
            feature,
            merge,
            ..
        } = self;
        [
            format!("{merge} {fix} {feature} 2024-04-01 Bob (HEAD -> main, tag: v2.0): Merge branch 'feature'\n"),
            format!("{feature} {second} 2024-03-01 Carol (feature): feature work\n"),
            format!("{fix} {second} 2024-02-01 Bob: fix: main bug\n"),
            format!("{second} {first} 2024-01-01 Alice (tag: v1.0): second\n"),
            format!("{first} 2024-01-01 Alice: first\n"),
        ]
    }

    /// The lines at `indexes` of [`History::lines`], joined.
    fn pick(&self, indexes: &[usize]) -> String {
        let lines = self.lines();
        indexes.iter().map(|&i| lines[i].as_str()).collect()
    }
}

/// `git_log` with `arguments` (JSON text), its output.
fn log(server: &mut Server, arguments: &str) -> String {
    server.call("git_log", arguments).output()
}

#[test]
fn product_log_lines_show_parents_refs_and_merges() {
    let h = history("lf-lines");
    let mut server = h.f.server();
    assert_eq!(log(&mut server, "{}"), h.pick(&[0, 1, 2, 3, 4]));
    assert_eq!(
        log(&mut server, r#"{"rev":"feature","n":2}"#),
        h.pick(&[1, 3])
    );
    // Under --compat reference the line is the reference's: full hash, tab-separated, no refs.
    let mut reference = h.f.reference_server();
    let line = reference.call("git_log", r#"{"n":1}"#).output();
    let full = git(&h.f.root, &["rev-parse", "HEAD"]);
    assert!(
        line.starts_with(&format!("{full}\tBob\t2024-04-01T00:00:00")),
        "{line}"
    );
    assert!(line.ends_with("\tMerge branch 'feature'\n"), "{line}");
}

#[test]
fn each_filter_and_their_combinations_select_the_expected_commits() {
    let h = history("lf-filters");
    let mut server = h.f.server();
    let cases: [(&str, &[usize]); 16] = [
        (r#"{"author":"Bob"}"#, &[0, 2]),
        (r#"{"author":"carol@example"}"#, &[1]),
        // Extended regexes: alternation without backslashes.
        (r#"{"author":"Bob|Carol"}"#, &[0, 1, 2]),
        (r#"{"grep":"fix"}"#, &[2]),
        (r#"{"grep":"^Merge"}"#, &[0]),
        (r#"{"grep":"(feature'|first)$"}"#, &[0, 4]),
        (r#"{"since":"2024-02-15"}"#, &[0, 1]),
        (r#"{"until":"2024-02-15"}"#, &[2, 3, 4]),
        (r#"{"since":"2024-01-15","until":"2024-03-15"}"#, &[1, 2]),
        (r#"{"skip":1,"n":2}"#, &[1, 2]),
        (r#"{"skip":4}"#, &[4]),
        // Combined: every filter must hold.
        (r#"{"author":"Bob","grep":"fix"}"#, &[2]),
        (r#"{"author":"Bob","since":"2024-03-01"}"#, &[0]),
        (r#"{"author":"Bob","path":"a.txt"}"#, &[2]),
        (
            r#"{"rev":"v1.0..main","author":"Carol|Bob","skip":1}"#,
            &[1, 2],
        ),
        // Empty and null values are no filter.
        (
            r#"{"author":"","grep":null,"since":"","until":null,"skip":null,"stat":null}"#,
            &[0, 1, 2, 3, 4],
        ),
    ];
    for (arguments, expected) in cases {
        assert_eq!(log(&mut server, arguments), h.pick(expected), "{arguments}");
    }
}

#[test]
fn filtered_empty_answers_say_what_was_asked() {
    let h = history("lf-empty");
    let mut server = h.f.server();
    let cases = [
        (
            r#"{"author":"Bob","since":"2 weeks ago"}"#,
            r#"(no commits: no commit in HEAD by author "Bob" since "2 weeks ago")"#,
        ),
        (
            r#"{"rev":"v1.0","grep":"nothing \"here\"","until":"2030-01-01"}"#,
            r#"(no commits: no commit in v1.0 with a message matching "nothing \"here\"" until "2030-01-01")"#,
        ),
        (
            r#"{"path":"src/lib.rs","author":"Alice"}"#,
            r#"(no commits: no commit in HEAD changes "src/lib.rs" by author "Alice")"#,
        ),
        (
            r#"{"skip":5}"#,
            "(no commits: HEAD selects no commits after the first 5)",
        ),
        (
            r#"{"author":"Dave","skip":2}"#,
            r#"(no commits: no commit in HEAD by author "Dave" after the first 2)"#,
        ),
    ];
    for (arguments, note) in cases {
        assert_eq!(log(&mut server, arguments), note, "{arguments}");
    }
}

#[test]
fn stat_lists_files_and_line_counts_on_all_three_tools() {
    let h = history("lf-stat");
    let mut server = h.f.server();
    let feature_files = format!(
        "\n1\t0\t{LONG}\n2\t0\tsrc/lib.rs\n 2 files changed, 3 insertions(+)\n create mode 100644 {LONG}\n create mode 100644 src/lib.rs\n"
    );
    // Merges list no files in a log (git's default); the root commit does.
    let lines = h.lines();
    assert_eq!(
        log(&mut server, r#"{"n":2,"stat":true}"#),
        format!("{}{}{feature_files}", lines[0], lines[1])
    );
    assert_eq!(
        log(&mut server, r#"{"skip":4,"stat":true}"#),
        format!(
            "{}\n1\t0\ta.txt\n 1 file changed, 1 insertion(+)\n create mode 100644 a.txt\n",
            lines[4]
        )
    );
    assert_eq!(
        log(&mut server, r#"{"stat":false}"#),
        log(&mut server, "{}")
    );
    let diff = server
        .call("git_diff", r#"{"base":"v1.0","head":"main","stat":true}"#)
        .output();
    assert_eq!(
        diff,
        format!(
            "1\t0\ta.txt\n1\t0\t{LONG}\n2\t0\tsrc/lib.rs\n 3 files changed, 4 insertions(+)\n create mode 100644 {LONG}\n create mode 100644 src/lib.rs\n"
        )
    );
    let diff_path = server
        .call(
            "git_diff",
            r#"{"base":"v1.0","head":"main","stat":true,"path":"a.txt"}"#,
        )
        .output();
    assert_eq!(diff_path, "1\t0\ta.txt\n 1 file changed, 1 insertion(+)\n");
    assert_eq!(
        server
            .call("git_diff", r#"{"base":"v1.0","head":"v1.0","stat":true}"#)
            .output(),
        "(no differences between v1.0 and v1.0)"
    );
    let full = git(&h.f.root, &["rev-parse", "feature"]);
    let show = server
        .call("git_show", r#"{"rev":"feature","stat":true}"#)
        .output();
    assert_eq!(
        show,
        format!(
            "commit {full}\nAuthor:     Carol <carol@example.net>\nAuthorDate: Fri Mar 1 00:00:00 2024 +0000\nCommit:     Carol <carol@example.net>\nCommitDate: Fri Mar 1 00:00:00 2024 +0000\n\n    feature work\n{feature_files}"
        )
    );
    let merge = server
        .call("git_show", r#"{"rev":"HEAD","stat":true}"#)
        .output();
    assert!(
        merge.contains(&format!("\nMerge: {} {}\n", h.fix, h.feature)),
        "{merge}"
    );
    assert!(!merge.contains("@@"), "{merge}");
    assert_eq!(
        server
            .call("git_show", r#"{"rev":"feature","stat":false}"#)
            .output(),
        server.call("git_show", r#"{"rev":"feature"}"#).output()
    );
    // Under --compat reference, stat is not an argument: the full answer as ever.
    let mut reference = h.f.reference_server();
    let plain = reference
        .call("git_show", r#"{"rev":"feature","stat":true}"#)
        .output();
    assert!(plain.contains("+x\n+y\n"), "{plain}");
    let plain_diff = reference
        .call("git_diff", r#"{"base":"v1.0","head":"main","stat":true}"#)
        .output();
    assert!(plain_diff.starts_with("diff --git "), "{plain_diff}");
    let plain_log = reference
        .call("git_log", r#"{"author":"Carol","skip":1,"stat":true}"#)
        .output();
    assert_eq!(plain_log.lines().count(), 5, "{plain_log}");
}

/// The `properties` of tool `name` in a tools/list reply.
fn properties(server: &mut Server, name: &str) -> Value {
    let reply = server.request("tools/list", "{}");
    let tools = reply
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .expect("tools")
        .to_vec();
    tools
        .into_iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|t| {
            t.get("inputSchema")
                .and_then(|s| s.get("properties"))
                .cloned()
        })
        .expect("properties")
}

#[test]
fn the_new_arguments_are_declared_with_examples_and_defaults_in_the_product_only() {
    let f = Fixture::new("lf-declare");
    let mut server = f.server();
    let log = properties(&mut server, "git_log");
    let Value::Object(map) = &log else {
        panic!("{log}");
    };
    let names: Vec<&str> = map.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["rev", "n", "path", "author", "since", "until", "grep", "skip", "stat", "offset"]
    );
    assert_eq!(
        log.get("skip").map(json::to_string).as_deref(),
        Some(
            r#"{"type":"integer","minimum":0,"maximum":1000000,"description":"Commits to pass over, e.g. 20.","default":0}"#
        )
    );
    assert_eq!(
        log.get("author").map(json::to_string).as_deref(),
        Some(
            r#"{"type":"string","maxLength":200,"description":"Regex on \"Name <email>\", e.g. \"Alice\".","default":null}"#
        )
    );
    for tool in ["git_show", "git_diff"] {
        let stat = properties(&mut server, tool);
        let stat = stat.get("stat").expect("stat");
        assert_eq!(stat.get("default"), Some(&Value::from(false)), "{tool}");
        assert_eq!(stat.get("type").and_then(Value::as_str), Some("boolean"));
    }
    let mut reference = f.reference_server();
    for tool in ["git_log", "git_show", "git_diff"] {
        let declared = properties(&mut reference, tool);
        assert!(declared.get("stat").is_none(), "{tool}");
        assert!(declared.get("author").is_none(), "{tool}");
    }
}

#[test]
fn bad_values_are_refused_naming_the_argument() {
    let h = history("lf-refuse");
    let mut server = h.f.server();
    let pattern = |field: &str| {
        format!(
            "{field} must be one line of at most 200 characters (an extended regex; no NUL, \
             newline or other control character)"
        )
    };
    let date = |field: &str| {
        format!(
            "{field} must be a date such as \"2 weeks ago\", \"yesterday\" or \"2026-01-31\": \
             at most 64 letters, digits, spaces and -+:.,/@_"
        )
    };
    let long = "a".repeat(201);
    let cases = [
        (
            "git_log",
            r#"{"author":"a\u0000b"}"#.to_owned(),
            pattern("author"),
        ),
        (
            "git_log",
            r#"{"author":"a\nb"}"#.to_owned(),
            pattern("author"),
        ),
        (
            "git_log",
            r#"{"grep":"a\r\nb"}"#.to_owned(),
            pattern("grep"),
        ),
        (
            "git_log",
            format!(r#"{{"grep":"{long}"}}"#),
            pattern("grep"),
        ),
        ("git_log", r#"{"author":7}"#.to_owned(), pattern("author")),
        (
            "git_log",
            r#"{"since":"a\u0000"}"#.to_owned(),
            date("since"),
        ),
        (
            "git_log",
            r#"{"until":"2024-01-01\n--all"}"#.to_owned(),
            date("until"),
        ),
        (
            "git_log",
            format!(r#"{{"since":"{}"}}"#, "1".repeat(65)),
            date("since"),
        ),
        (
            "git_log",
            r#"{"skip":1000001}"#.to_owned(),
            "skip must be an integer from 0 to 1000000".to_owned(),
        ),
        (
            "git_log",
            r#"{"skip":-1}"#.to_owned(),
            "skip must be an integer from 0 to 1000000".to_owned(),
        ),
        (
            "git_log",
            r#"{"stat":"yes"}"#.to_owned(),
            "stat must be true or false, e.g. true".to_owned(),
        ),
        (
            "git_show",
            r#"{"rev":"HEAD","stat":1}"#.to_owned(),
            "stat must be true or false, e.g. true".to_owned(),
        ),
        (
            "git_diff",
            r#"{"base":"HEAD~1","head":"HEAD","stat":"true"}"#.to_owned(),
            "stat must be true or false, e.g. true".to_owned(),
        ),
    ];
    for (tool, arguments, message) in cases {
        let reply = server.call(tool, &arguments);
        reply.assert_error_contains(&message);
    }
    // At the edges: 200 characters and skip 1000000 are served.
    let edge = "a".repeat(200);
    assert!(log(&mut server, &format!(r#"{{"author":"{edge}"}}"#)).starts_with("(no commits"));
    assert!(log(&mut server, r#"{"skip":1000000}"#).starts_with("(no commits"));
}

#[test]
fn option_like_values_are_data_and_never_options() {
    let h = history("lf-options");
    let pwned = h.f.tmp.join("pwned");
    let target = pwned.display().to_string();
    let mut server = h.f.server();
    for field in ["author", "grep"] {
        for value in [
            format!("--output={target}"),
            "-P".to_owned(),
            "--all".to_owned(),
            "-n1".to_owned(),
        ] {
            let arguments = format!(r#"{{"{field}":"{value}"}}"#);
            let answer = log(&mut server, &arguments);
            assert!(
                answer.starts_with("(no commits: no commit in HEAD"),
                "{arguments}: {answer}"
            );
        }
    }
    // A date cannot hold `=`, so an option-shaped date is refused before git runs.
    server
        .call("git_log", &format!(r#"{{"since":"--output={target}"}}"#))
        .assert_error_contains("since must be a date");
    // `-1 week` is a date to git (glued to --until=), never the option -1.
    assert!(!log(&mut server, r#"{"until":"-1 week","n":1}"#).is_empty());
    assert!(!pwned.exists(), "git wrote {target}");
    assert_eq!(log(&mut server, r#"{"n":1}"#), h.pick(&[0]));
}

#[test]
fn signature_programs_never_run_for_filters_or_stat() {
    let h = history("lf-a9");
    h.f.signed_branch();
    h.f.plant_signature_programs();
    let mut server = h.f.server();
    for arguments in [
        r#"{"rev":"signed","author":"Alice","stat":true}"#,
        r#"{"rev":"signed","grep":"signed","since":"2020-01-01"}"#,
    ] {
        assert!(
            log(&mut server, arguments).contains(": signed commit\n"),
            "{arguments}"
        );
    }
    assert!(server
        .call("git_show", r#"{"rev":"signed","stat":true}"#)
        .output()
        .contains("signed commit"));
    h.f.assert_canary_silent();
}

#[test]
fn mailmaps_never_rename_nor_select_authors() {
    let h = history("lf-mailmap");
    write(
        &h.f.secret_file,
        &format!("{} <bob@example.org>\n", h.f.token),
    );
    write(&h.f.root.join(".mailmap"), "SPOOFED <carol@example.net>\n");
    h.f.plant_config(&format!(
        "[mailmap]\n\tfile = {}\n[log]\n\tmailmap = true\n",
        h.f.secret_file.display()
    ));
    let mut server = h.f.server();
    let mut texts = Vec::new();
    for arguments in ["{}", r#"{"author":"Bob","stat":true}"#] {
        texts.push(server.call("git_log", arguments).text);
    }
    texts.push(
        server
            .call("git_show", r#"{"rev":"HEAD^2","stat":true}"#)
            .text,
    );
    assert_eq!(
        server.call("git_log", "{}").output(),
        h.pick(&[0, 1, 2, 3, 4])
    );
    assert!(texts[1].contains("Bob: fix: main bug"));
    // Filtering by the mapped names finds nothing: no mailmap was read (the note quotes the
    // argument itself, so these answers are checked apart from the secret sweep).
    for name in [h.f.token.as_str(), "SPOOFED"] {
        let note = log(&mut server, &format!(r#"{{"author":"{name}"}}"#));
        assert_eq!(
            note,
            format!("(no commits: no commit in HEAD by author {name:?})")
        );
    }
    texts.push(server.stderr());
    h.f.assert_no_secret(&texts);
    assert!(texts.iter().all(|t| !t.contains("SPOOFED")));
}

#[test]
fn pattern_and_output_config_in_the_repository_changes_nothing() {
    let h = history("lf-config");
    let calls = [
        ("git_log", r#"{}"#),
        ("git_log", r#"{"grep":"fix|^Merge"}"#),
        ("git_log", r#"{"author":"^Bob <bob@"}"#),
        ("git_log", r#"{"grep":"(?i)FIX"}"#),
        ("git_log", r#"{"path":"a.txt","stat":true}"#),
        ("git_log", r#"{"stat":true,"skip":3}"#),
        ("git_show", r#"{"rev":"feature","stat":true}"#),
        ("git_diff", r#"{"base":"v1.0","head":"HEAD","stat":true}"#),
    ];
    let mut server = h.f.server();
    let clean: Vec<Reply> = calls.iter().map(|(t, a)| server.call(t, a)).collect();
    drop(server);
    assert!(clean[1].output().contains("fix: main bug"));
    // perl would match (?i)FIX; an extended regex cannot compile it.
    clean[3].assert_error_contains("git exited 128");
    h.f.plant_config(
        "[grep]\n\tpatternType = perl\n\textendedRegexp = false\n\
         [log]\n\texcludeDecoration = refs/tags/\n\tinitialDecorationSet = all\n\tdecorate = full\n\
         \tdate = relative\n\tfollow = true\n\tshowRoot = false\n\tabbrevCommit = false\n\
         [format]\n\tpretty = %H\n[pretty]\n\tx = %H\n\
         [diff]\n\tstatGraphWidth = 3\n\tstatNameWidth = 3\n\tnoprefix = true\n\tmnemonicPrefix = true\n\
         \trelative = true\n\tdirstat = lines\n\
         [core]\n\tquotePath = false\n",
    );
    let mut server = h.f.server();
    for ((tool, arguments), before) in calls.iter().zip(&clean) {
        let after = server.call(tool, arguments);
        assert_eq!(after.text, before.text, "{tool} {arguments}");
    }
}

#[test]
fn textconv_never_runs_for_stat() {
    let h = history("lf-textconv");
    write(&h.f.root.join(".gitattributes"), "* diff=tc\n");
    git(&h.f.root, &["add", ".gitattributes"]);
    git(&h.f.root, &["commit", "-q", "-m", "attributes"]);
    h.f.plant_config(&format!(
        "[diff \"tc\"]\n\ttextconv = {}\n\tcachetextconv = true\n",
        h.f.canary_str()
    ));
    let mut server = h.f.server();
    assert!(log(&mut server, r#"{"stat":true}"#).contains("src/lib.rs"));
    assert!(server
        .call("git_show", r#"{"rev":"HEAD~2","stat":true}"#)
        .output()
        .contains("a.txt"));
    assert!(server
        .call("git_diff", r#"{"base":"v1.0","head":"HEAD","stat":true}"#)
        .output()
        .contains("a.txt"));
    h.f.assert_canary_silent();
    assert!(!h.f.root.join(".git/refs/notes/textconv").exists());
}

#[test]
fn catastrophic_regexes_end_in_an_error_and_the_server_keeps_serving() {
    let h = history("lf-regex");
    let mut server = h.f.server();
    for arguments in [
        r#"{"author":"(.{32767}){32767}"}"#,
        r#"{"grep":".{32767}{32767}"}"#,
    ] {
        let started = Instant::now();
        let reply = server.call("git_log", arguments);
        assert!(reply.is_error, "{arguments}: {}", reply.text);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{arguments} took {:?}",
            started.elapsed()
        );
        let text = reply.text.to_ascii_lowercase();
        assert!(
            text.contains("memory") || text.contains("timed out"),
            "{arguments}: {}",
            reply.text
        );
    }
    assert_eq!(log(&mut server, r#"{"author":"Carol"}"#), h.pick(&[1]));
}

#[test]
fn log_follow_in_the_repository_never_follows_renames() {
    let f = Fixture::new("lf-follow");
    git(&f.root, &["mv", "a.txt", "b.txt"]);
    git(&f.root, &["commit", "-q", "-m", "rename"]);
    f.plant_config("[log]\n\tfollow = true\n");
    let mut server = f.server();
    // The history of b.txt as named: its creation by the rename, not a.txt's commits.
    let answer = log(&mut server, r#"{"path":"b.txt","stat":true}"#);
    assert_eq!(
        answer.lines().next().map(|l| l.ends_with(": rename")),
        Some(true),
        "{answer}"
    );
    assert!(
        !answer.contains(": first") && !answer.contains(": second"),
        "{answer}"
    );
    assert!(
        answer.contains("1 file changed, 2 insertions(+)"),
        "{answer}"
    );
}
