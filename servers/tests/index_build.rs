//! `agentteams-mcp index build` run as a user runs it, then the written indexes read back with
//! recall's own validator and queried through the binary as an MCP host would.

mod recall_support;

use agentteams_mcp::json::{self, Value};
use agentteams_mcp_servers::corpus::schema::{validate_code_index, validate_memory_index};
use recall_support::{hits, parse_file, stored_paths, str_field, Project, Server};

fn fixture() -> Project {
    let project = Project::new("index-fixture");
    project.write(
        "README.md",
        "# Widget Works\n\nWidget Works builds widgets from gears, bolts and sprockets every single day.\n\n## Install\n\nRun the installer from /home/alice/widgets/setup.sh to install all of the widget tooling.\n",
    );
    project.write(
        "workSummaries/2026-10-01.md",
        "# Drift baseline\n\nThe drift baseline template compares the current team against its recorded baseline template.\n",
    );
    project.write(
        "references/plans/sprocket.md",
        "# Sprocket plan\n\nSprockets mesh with gears; the plan covers sprocket sizing and sprocket wear over time.\n",
    );
    project.write(
        "node_modules/pkg/README.md",
        "# Ignored\n\nignored ignored ignored ignored ignored ignored ignored ignored\n",
    );
    project.write(
        "tools/deploy.py",
        "import os\n\ndef batch_update(inputPath, retries=3):\n    \"\"\"Update every widget in a batch.\"\"\"\n    return os.path.join(inputPath)\n\nclass GearBox(Base):\n    '''Holds gears.'''\n",
    );
    project.write("scripts/run.sh", "#!/bin/sh\nbuild_all() {\n  make\n}\n");
    project.write(
        "src/lib.rs",
        "/// Counts sprockets in a gear train.\npub fn count_sprockets(train: &GearTrain) -> usize {\n    0\n}\n",
    );
    project.write(
        "web/app.ts",
        "export interface WidgetProps {\n  size: number;\n}\n",
    );
    project.write("build/generated.py", "def ignored_generated(): pass\n");
    project.write("empty.py", "\n");
    project
}

/// The `path` of every document of the local code partition, in order.
/// The local partition's document paths, relative to the project: they are stored absolute, as
/// the reference stores them (its staleness check reads them from the process's directory).
fn local_paths(project: &Project) -> Vec<String> {
    let local = parse_file(project, "references/code-index/local.json");
    local
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| relative(project, str_field(d, "path")))
        .collect()
}

/// `path` (absolute, inside the project) relative to the project's root.
fn relative(project: &Project, path: &str) -> String {
    std::path::Path::new(path)
        .strip_prefix(&project.root)
        .unwrap_or_else(|_| panic!("{path} is not an absolute path inside the project"))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn build_writes_valid_indexes_with_relative_memory_and_absolute_code_paths() {
    let project = fixture();
    let out = project.index_build(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("memory index: 3 sources, 3 documents"),
        "{stderr}"
    );
    assert!(
        stderr.contains("code index: 5 files, 4 documents"),
        "{stderr}"
    );

    let memory = parse_file(&project, "references/memory-index.json");
    validate_memory_index(&memory).unwrap();
    let paths = stored_paths(&memory);
    assert_eq!(
        paths,
        [
            "workSummaries/2026-10-01.md",
            "README.md",
            "references/plans/sprocket.md"
        ]
    );
    let readme = &memory.get("documents").and_then(Value::as_array).unwrap()[1];
    assert_eq!(str_field(readme, "title"), "Widget Works");
    let paragraphs = readme.get("paragraphs").and_then(Value::as_array).unwrap();
    assert_eq!(
        paragraphs[1].as_str(),
        Some("Run the installer from <path> to install all of the widget tooling.")
    );

    for file in [
        "manifest.json",
        "local.json",
        "api-modules.json",
        "api-docs.json",
    ] {
        let value = parse_file(&project, &format!("references/code-index/{file}"));
        validate_code_index(&value).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let local = parse_file(&project, "references/code-index/local.json");
    let docs = local.get("documents").and_then(Value::as_array).unwrap();
    let summary: Vec<(String, &str)> = docs
        .iter()
        .map(|d| {
            (
                relative(&project, str_field(d, "path")),
                str_field(d, "language"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("scripts/run.sh".to_owned(), "shell"),
            ("src/lib.rs".to_owned(), "rust"),
            ("tools/deploy.py".to_owned(), "python"),
            ("web/app.ts".to_owned(), "typescript")
        ]
    );
    let python = &docs[2];
    let passages: Vec<&str> = python
        .get("passages")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        passages,
        [
            "def batch_update(inputPath, retries=3) \u{2014} Update every widget in a batch.",
            "class GearBox(Base) \u{2014} Holds gears."
        ]
    );
    assert_eq!(
        str_field(&docs[1], "snippet"),
        "pub fn count_sprockets(train: &GearTrain) -> usize \u{2014} Counts sprockets in a gear train."
    );
    let manifest = parse_file(&project, "references/code-index/manifest.json");
    let names: Vec<_> = manifest
        .get("partitions")
        .and_then(Value::as_object)
        .unwrap()
        .keys()
        .collect();
    assert_eq!(names, ["api-docs", "api-modules", "local"]);
    assert!(!project
        .path("references/code-index/local.json.tmp")
        .exists());
}

#[test]
fn recall_serves_both_tools_over_stdio_from_a_fresh_build() {
    let project = fixture();
    assert!(project.index_build(&[]).status.success());
    let mut server = Server::start(&project.root);
    let (is_error, text) = server.call("query_index", r#"{"query": "drift baseline template"}"#);
    assert!(!is_error, "{text}");
    let found = hits(&text);
    assert_eq!(str_field(&found[0], "path"), "workSummaries/2026-10-01.md");
    assert_eq!(str_field(&found[0], "title"), "Drift baseline");
    assert_eq!(str_field(&found[0], "confidence"), "reliable");

    let (is_error, text) = server.call(
        "query_code",
        r#"{"query": "batchUpdate input_path", "k": 3}"#,
    );
    assert!(!is_error, "{text}");
    let found = hits(&text);
    assert_eq!(str_field(&found[0], "path"), "tools/deploy.py");
    assert_eq!(
        str_field(&found[0], "snippet"),
        "def batch_update(inputPath, retries=3) \u{2014} Update every widget in a batch."
    );
    // The default ranking names the definition that matched and the path as the title.
    assert_eq!(str_field(&found[0], "symbol"), "batch_update");
    assert_eq!(str_field(&found[0], "title"), "tools/deploy.py");
    let (_, text) = server.call(
        "query_code",
        r#"{"query": "count_sprockets", "kind": "local"}"#,
    );
    assert_eq!(str_field(&hits(&text)[0], "path"), "src/lib.rs");
    let (_, text) = server.call(
        "query_code",
        r#"{"query": "count_sprockets", "kind": "api"}"#,
    );
    assert!(hits(&text).is_empty());

    // The engine validates arguments with the reference's messages.
    for (args, want) in [
        (
            r#"{"query": ""}"#,
            "query must be a non-empty string of at most 500 characters",
        ),
        (
            r#"{"query": "   "}"#,
            "query must be a non-empty string of at most 500 characters",
        ),
        (
            r#"{"query": "x", "k": 0}"#,
            "k must be an integer from 1 to 20",
        ),
        (
            r#"{"query": "x", "k": 21}"#,
            "k must be an integer from 1 to 20",
        ),
        (
            r#"{"query": "x", "k": true}"#,
            "k must be an integer from 1 to 20",
        ),
        (
            r#"{"query": "x", "kind": "all-of-it"}"#,
            "kind must be one of all, local, api, doc",
        ),
    ] {
        let (is_error, text) = server.call("query_code", args);
        assert!(is_error, "{args}");
        assert_eq!(text, want, "{args}");
    }
}

#[test]
fn queries_write_nothing_and_ignore_staleness() {
    let project = fixture();
    assert!(project.index_build(&[]).status.success());
    let mut server = Server::start(&project.root);
    let (_, before_text) = server.call("query_code", r#"{"query": "gears widget"}"#);
    let before = project.snapshot();
    // A source changes after the build: results stay those of the index, flagged maybe-stale.
    project.write("tools/deploy.py", "def something_else(): pass\n");
    let before = {
        let mut b = before;
        b.insert(
            "tools/deploy.py".into(),
            project.snapshot()[std::path::Path::new("tools/deploy.py")],
        );
        b
    };
    // A new server: a running one reuses its verdict for a second (`VERDICT_REUSE`).
    let mut server = Server::start(&project.root);
    let (_, after_text) = server.call("query_code", r#"{"query": "gears widget"}"#);
    // Fresh just after the build; after the change, the same hits, now flagged maybe-stale.
    assert!(
        before_text.contains("\"may_be_stale\": false"),
        "{before_text}"
    );
    assert_eq!(
        before_text.replace("\"may_be_stale\": false", "\"may_be_stale\": true"),
        after_text
    );
    server.call("query_index", r#"{"query": "widgets"}"#);
    assert_eq!(project.snapshot(), before);
}

#[test]
fn rebuilding_unchanged_sources_keeps_partitions_byte_identical() {
    let project = fixture();
    assert!(project.index_build(&[]).status.success());
    let local = project.read("references/code-index/local.json");
    let api = project.read("references/code-index/api-docs.json");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let out = project.index_build(&[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no partition changed"));
    assert_eq!(project.read("references/code-index/local.json"), local);
    assert_eq!(project.read("references/code-index/api-docs.json"), api);
    let manifest = parse_file(&project, "references/code-index/manifest.json");
    let local_value = json::parse(local.as_bytes()).unwrap();
    assert_eq!(
        manifest
            .get("partitions")
            .and_then(|p| p.get("local"))
            .and_then(|l| l.get("built_at")),
        local_value.get("built_at")
    );
    // A changed source rewrites the local partition only.
    project.write("tools/new_tool.py", "def fresh(): pass\n");
    let out = project.index_build(&[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("(rewrote local;"));
    assert_ne!(project.read("references/code-index/local.json"), local);
    assert_eq!(project.read("references/code-index/api-docs.json"), api);
    // Same content but a passage an older builder rendered differently: brought up to date.
    let current = project.read("references/code-index/local.json");
    let stale = current.replacen("def fresh()", "def fresh( )", 1);
    assert_ne!(stale, current);
    project.write("references/code-index/local.json", &stale);
    let out = project.index_build(&[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("(rewrote local;"));
    assert!(project
        .read("references/code-index/local.json")
        .contains("def fresh()"));
}

#[test]
fn two_projects_with_the_same_sources_index_identically() {
    let strip_volatile = |project: &Project| {
        let mut value = parse_file(project, "references/code-index/local.json");
        let map = value.as_object_mut().unwrap();
        map.remove("built_at");
        map.remove("index_build_id");
        // Without a project description the project name is the root directory's name.
        map.remove("project_name");
        // Paths are absolute, so the fingerprint over them differs; the paths are compared
        // relative to each project.
        map.remove("source_fingerprint");
        for doc in map
            .get_mut("documents")
            .and_then(Value::as_array_mut)
            .unwrap()
            .iter_mut()
        {
            let doc = doc.as_object_mut().unwrap();
            doc.remove("source_mtime");
            let path = relative(project, doc.get("path").and_then(Value::as_str).unwrap());
            doc.insert("path", Value::from(path));
        }
        json::to_string(&value)
    };
    let a = fixture();
    let b = fixture();
    assert!(a.index_build(&[]).status.success());
    assert!(b.index_build(&[]).status.success());
    assert_eq!(strip_volatile(&a), strip_volatile(&b));
}

#[test]
fn an_empty_project_gets_valid_empty_indexes() {
    let project = Project::new("index-empty");
    project.build_indexes();
    let memory = parse_file(&project, "references/memory-index.json");
    validate_memory_index(&memory).unwrap();
    assert_eq!(memory.get("N").and_then(Value::as_u64), Some(0));
    assert_eq!(json::to_string(memory.get("postings").unwrap()), "{}");
    assert_eq!(memory.get("avgdl").and_then(Value::as_f64), Some(0.0));
    let mut server = Server::start(&project.root);
    let (is_error, text) = server.call("query_index", r#"{"query": "anything"}"#);
    assert!(!is_error);
    assert!(hits(&text).is_empty());
    let (is_error, text) = server.call("query_code", r#"{"query": "anything"}"#);
    assert!(!is_error);
    assert!(hits(&text).is_empty());
}

#[test]
fn team_dir_choice_and_unwritable_targets() {
    let project = fixture();
    std::fs::create_dir_all(project.path(".claude/agents")).unwrap();
    assert!(project.index_build(&[]).status.success());
    assert!(project
        .path(".claude/agents/references/memory-index.json")
        .exists());
    let previous = project.read(".claude/agents/references/memory-index.json");

    // A team dir where references/code-index cannot be created: non-zero exit, old index intact.
    project.write("blocked/references/code-index", "a file, not a folder");
    let out = project.index_build(&["--team-dir", "blocked"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot create"), "{stderr}");
    assert_eq!(
        project.read(".claude/agents/references/memory-index.json"),
        previous
    );

    let out = project.index_build(&["--team-dir", "../elsewhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside the project"));
    let out = project.index_build(&["--bogus"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn links_a_repository_plants_never_redirect_the_builders_writes() {
    let outside = Project::new("index-planted-outside");
    outside.write("victim.txt", "precious");
    let victim = outside.path("victim.txt");

    // A link at the temporary file's name: replaced, never written through.
    let project = fixture();
    std::fs::create_dir_all(project.path("references")).unwrap();
    std::os::unix::fs::symlink(&victim, project.path("references/memory-index.json.tmp")).unwrap();
    std::os::unix::fs::symlink(&victim, project.path("references/memory-index.json")).unwrap();
    let out = project.index_build(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(outside.read("victim.txt"), "precious");
    assert!(project
        .read("references/memory-index.json")
        .contains("\"memory-index\""));
    assert!(!project.path("references/memory-index.json.tmp").exists());

    // `references/` or `code-index/` linked out of the project: refused before anything is written.
    for planted in ["references", "references/code-index"] {
        let project = fixture();
        let target = outside.path(&format!("sink-{}", planted.replace('/', "-")));
        std::fs::create_dir_all(&target).unwrap();
        let _ = std::fs::remove_dir_all(project.path(planted));
        if let Some(parent) = project.path(planted).parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(&target, project.path(planted)).unwrap();
        let out = project.index_build(&[]);
        assert_eq!(out.status.code(), Some(1), "{planted}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("resolves outside the project"), "{stderr}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "{planted}");
    }

    // A default team dir linked out of the project.
    let project = fixture();
    std::fs::create_dir_all(project.path(".claude")).unwrap();
    let team = outside.path("team");
    std::fs::create_dir_all(&team).unwrap();
    std::os::unix::fs::symlink(&team, project.path(".claude/agents")).unwrap();
    let out = project.index_build(&[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("resolves outside the project"), "{stderr}");
    assert_eq!(std::fs::read_dir(&team).unwrap().count(), 0);
}

#[test]
fn a_planted_foreign_or_damaged_build_cache_means_reading_every_file() {
    let outside = Project::new("index-cache-outside");
    outside.write("victim.bin", "precious");
    let victim = outside.path("victim.bin");
    let project = fixture();
    let cache = project.path("references/code-build-cache.bin");
    // Files older than the cache's racy window, so a good cache would serve them all.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    project.build_indexes();
    let good = std::fs::read(&cache).unwrap();
    // The same cache in another project with the same files: another root, so foreign.
    let twin = fixture();
    std::fs::create_dir_all(twin.path("references")).unwrap();
    std::fs::write(twin.path("references/code-build-cache.bin"), &good).unwrap();
    // What stderr says of each plant: `Some(words)` a warning naming the cache with them (once),
    // `None` nothing (not a cache of ours to use).
    type Plant<'a> = (&'a str, Option<&'a str>, &'a dyn Fn());
    let plants: [Plant<'_>; 7] = [
        ("garbage", None, &|| {
            std::fs::write(&cache, b"not a cache at all").unwrap()
        }),
        ("truncated", Some("is damaged (ends early)"), &|| {
            std::fs::write(&cache, &good[..good.len() / 2]).unwrap()
        }),
        (
            "cut inside its head",
            Some("is damaged (ends early)"),
            &|| std::fs::write(&cache, &good[..30 + 8 + 20]).unwrap(),
        ),
        (
            "larger than its limit",
            Some("larger than MAX_BUILD_CACHE_BYTES"),
            &|| {
                // Sparse: the size is refused before a byte is read.
                std::fs::write(&cache, &good).unwrap();
                let file = std::fs::File::options().write(true).open(&cache).unwrap();
                file.set_len((1 << 30) + 1).unwrap();
            },
        ),
        ("another binary's", None, &|| {
            // The builder's identity follows the 30-byte magic line: another inode.
            let mut other = good.clone();
            other[30 + 8] ^= 1;
            std::fs::write(&cache, other).unwrap();
        }),
        ("a link out of the project", None, &|| {
            std::os::unix::fs::symlink(&victim, &cache).unwrap()
        }),
        ("a FIFO", None, &|| {
            let made = std::process::Command::new("mkfifo")
                .arg(&cache)
                .status()
                .unwrap();
            assert!(made.success());
        }),
    ];
    for (what, warning, plant) in plants {
        let _ = std::fs::remove_file(&cache);
        plant();
        let out = project.index_build(&[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {stderr}");
        // Nothing taken from a cache this build did not write: every file read.
        assert!(
            !stderr.contains("unchanged since the last build"),
            "{what}: {stderr}"
        );
        let warnings = stderr.matches("warning: the build cache").count();
        match warning {
            Some(words) => {
                assert_eq!(warnings, 1, "{what}: {stderr}");
                assert!(stderr.contains(words), "{what}: {stderr}");
            }
            None => assert_eq!(warnings, 0, "{what}: {stderr}"),
        }
        assert!(
            std::fs::symlink_metadata(&cache).unwrap().is_file(),
            "{what}"
        );
        assert_eq!(outside.read("victim.bin"), "precious", "{what}");
    }
    let out = twin.index_build(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("unchanged since"),
        "{stderr}"
    );
    assert!(!stderr.contains("damaged"), "{stderr}");
}

#[test]
fn a_previous_partition_that_is_a_fifo_is_replaced_without_blocking() {
    let project = fixture();
    std::fs::create_dir_all(project.path("references/code-index")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(project.path("references/code-index/local.json"))
        .status()
        .unwrap();
    assert!(made.success());
    // If the builder opened the FIFO it would wait for a writer forever; the test harness's
    // timeout would then fail the suite rather than this assertion.
    project.build_indexes();
    let meta = std::fs::symlink_metadata(project.path("references/code-index/local.json")).unwrap();
    assert!(meta.is_file());
}

#[test]
fn a_git_work_tree_is_listed_by_git_honouring_ignores() {
    let project = Project::new("index-git");
    project.write(".gitignore", "ignored/\n");
    project.write("ignored/secret.py", "def hidden(): pass\n");
    project.write("build/kept.py", "def generated_but_tracked(): pass\n");
    project.write("app.py", "def visible(): pass\n");
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project.root)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(project.index_build(&[]).status.success());
    let paths = local_paths(&project);
    // git decides: the ignored folder is out, build/ (pruned only by the fallback walk) is in.
    assert_eq!(paths, ["app.py", "build/kept.py"]);
}

#[test]
fn sources_larger_than_the_limit_are_skipped() {
    use agentteams_mcp_servers::index::sources::MAX_SOURCE_BYTES;
    let project = Project::new("index-large");
    let at_limit = format!(
        "def edge(): pass\n{}",
        " ".repeat(MAX_SOURCE_BYTES as usize - 17)
    );
    project.write("edge.py", &at_limit);
    project.write("over.py", &format!("{at_limit} "));
    assert!(project.index_build(&[]).status.success());
    let paths = local_paths(&project);
    assert_eq!(paths, ["edge.py"]);
}

#[test]
fn a_git_index_entry_beneath_a_planted_directory_link_is_not_read() {
    // `git ls-files -c` lists the index as the repository wrote it, whatever the work tree now
    // holds: an entry `vendor/secret.py` stays listed after `vendor/` became a link out of the
    // project, and the file it reaches must not be copied into the index.
    let outside = Project::new("index-git-link-outside");
    outside.write("secret.py", "def outside_secret_token(): pass\n");
    let project = Project::new("index-git-link");
    project.write("app.py", "def visible(): pass\n");
    project.write("vendor/secret.py", "def vendored(): pass\n");
    for args in [&["init", "-q"][..], &["add", "app.py", "vendor/secret.py"]] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&project.root)
            .status()
            .unwrap();
        assert!(status.success());
    }
    std::fs::remove_dir_all(project.path("vendor")).unwrap();
    std::os::unix::fs::symlink(&outside.root, project.path("vendor")).unwrap();
    project.build_indexes();
    assert_eq!(local_paths(&project), ["app.py"]);
    assert!(!project
        .read("references/code-index/local.json")
        .contains("outside_secret_token"));
}

#[test]
fn planted_index_files_shaped_to_inflate_are_refused_in_bounded_memory() {
    // 64 MB of `[],` inside a document member: parsed as a tree it took about 1.5 GB; the
    // builder (reading the previous partition) and recall must get through it within 512 MiB
    // of address space.
    use agentteams_mcp_servers::recall::load::MAX_TREE_INDEX_BYTES;
    let project = fixture();
    let count = 2 * MAX_TREE_INDEX_BYTES / 3;
    let inflating = format!(
        r#"{{"documents": [{{"path": [{}[]]}}]}}"#,
        "[],".repeat(count)
    );
    project.write("references/code-index/local.json", &inflating);
    let limit_kib = 512 * 1024;
    let build =
        recall_support::run_in_memory_limit(limit_kib, &["index", "build"], &project.root, "");
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    assert!(local_paths(&project).contains(&"src/lib.rs".to_owned()));

    project.write("references/memory-index.json", &inflating);
    let session = recall_support::session(&[("query_index", r#"{"query": "widget"}"#)]);
    let served = recall_support::run_in_memory_limit(
        limit_kib,
        &["--serve-mcp", "recall"],
        &project.root,
        &session,
    );
    let reply = recall_support::reply(&served, 2);
    let text = reply.to_string();
    assert!(text.contains("MAX_TREE_INDEX_BYTES"), "{text}");
}

/// Calls `tool`; every string of every hit must be free of the characters the sanitiser escapes.
/// Returns the strings, one a line.
fn clean_hits(server: &mut Server, tool: &str, arguments: &str) -> String {
    let (is_error, text) = server.call(tool, arguments);
    assert!(!is_error, "{text}");
    let found = hits(&text);
    assert!(!found.is_empty(), "{text}");
    let mut all = String::new();
    for hit in &found {
        for key in ["path", "title", "snippet", "symbol"] {
            let field = str_field(hit, key);
            for raw in ['\x1b', '\x07', '\u{202e}', '\u{200b}'] {
                assert!(!field.contains(raw), "raw {raw:?} in {key}: {field:?}");
            }
            assert!(
                agentteams_mcp::sanitize::is_clean(field),
                "{key}: {field:?}"
            );
            all.push_str(field);
            all.push('\n');
        }
    }
    all
}

#[test]
fn terminal_and_invisible_characters_in_sources_come_back_escaped() {
    let project = Project::new("index-hostile");
    let hostile =
        "\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 bell\x07 rtl\u{202e}gnp.exe zero\u{200b}width";
    project.write(
        "README.md",
        &format!("# Gadget {hostile}\n\nThe gadget gizmo paragraph {hostile} talks about gizmos and gadgets.\n"),
    );
    project.write(
        "workSummaries/quokka\x1b[2J\u{202e}.md",
        "# Quokka notes\n\nQuokka notes about the quokka habitat and quokka food.\n",
    );
    project.write(
        "tools/gizmo.py",
        &format!("def gizmo_frobnicate(x):\n    \"\"\"Frobnicate {hostile}.\"\"\"\n    return x\n"),
    );
    let build = project.index_build(&[]);
    assert!(build.status.success(), "{build:?}");
    let mut server = Server::start(&project.root);

    let all = clean_hits(&mut server, "query_index", r#"{"query": "gadget gizmo"}"#);
    for escape in [
        "\\x1b[31m",
        "\\x1b]0;pwned title\\x07",
        "\\u{202e}",
        "\\u{200b}",
    ] {
        assert!(all.contains(escape), "{escape} missing in {all}");
    }

    let all = clean_hits(&mut server, "query_index", r#"{"query": "quokka habitat"}"#);
    assert!(all.contains("quokka\\x1b[2J\\u{202e}.md"), "{all}");

    let all = clean_hits(
        &mut server,
        "query_code",
        r#"{"query": "gizmo_frobnicate"}"#,
    );
    assert!(all.contains("Frobnicate \\x1b[31mred"), "{all}");
}
