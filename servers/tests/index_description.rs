//! `agentteams-mcp index build` reading the project description: the name, framework, extra
//! sources and excludes it sets reach the written indexes, and a malformed description fails the
//! build with the file and field named while the previous indexes stay as they were.

mod recall_support;

use agentteams_mcp::json::Value;
use agentteams_mcp_servers::corpus::schema::{validate_code_index, validate_memory_index};
use recall_support::{parse_file, str_field, Project};

fn document_paths(index: &Value) -> Vec<String> {
    index
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| str_field(d, "path").to_owned())
        .collect()
}

/// A code partition's document paths relative to the project (they are stored absolute, as the
/// reference stores them).
fn code_paths(project: &Project, index: &Value) -> Vec<String> {
    let prefix = format!("{}/", project.root.display());
    document_paths(index)
        .into_iter()
        .map(|p| {
            p.strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{p}"))
                .to_owned()
        })
        .collect()
}

/// `(project_name, framework)` of an index file.
fn names(index: &Value) -> (&str, &str) {
    (
        str_field(index, "project_name"),
        str_field(index, "framework"),
    )
}

fn fixture() -> Project {
    let project = Project::new("index-description");
    let prose = "Gear trains transfer rotation between shafts using meshed sprockets and careful lubrication.";
    for rel in [
        "README.md",
        "guides/setup.md",
        "guides/deep/tuning.md",
        "guides/drafts/unfinished.md",
        "guides/node_modules/vendored.md",
        "notes/2026-01.md",
        "notes/2026-02.md",
        "notes/scratch.tmp.md",
    ] {
        project.write(rel, &format!("# {rel}\n\n{prose}\n"));
    }
    // `tmp/` is pruned by the walk: only `code_index_extra_dirs` brings these in.
    project.write("tmp/tools/helper.py", "def helper():\n    return 1\n");
    project.write("tmp/tools/notes.txt", "not code\n");
    project.write("tmp/gen/make.sh", "make_all() {\n  make\n}\n");
    project
}

const BRIEF: &str = r#"{
  "project_goal": "Index gears",
  "project_name": "GearWorks",
  "framework": "claude",
  "memory_index_extra_dirs": ["guides", "notes/*.md", 7, "  ", "/etc"],
  "memory_index_exclude": ["guides/drafts/", "*.tmp.md"],
  "code_index_extra_dirs": ["tmp/tools", "tmp/gen/*.sh", "/usr/bin"]
}"#;

#[test]
fn the_brief_sets_names_extra_sources_and_excludes() {
    let project = fixture();
    project.write(".agentteams/brief.json", BRIEF);
    project.build_indexes();

    let memory = parse_file(&project, "references/memory-index.json");
    validate_memory_index(&memory).unwrap();
    assert_eq!(names(&memory), ("GearWorks", "claude"));
    assert_eq!(
        document_paths(&memory),
        [
            "README.md",
            "guides/deep/tuning.md",
            "guides/setup.md",
            "notes/2026-01.md",
            "notes/2026-02.md",
        ]
    );
    assert_eq!(memory.get("source_count").and_then(Value::as_u64), Some(5));

    let local = parse_file(&project, "references/code-index/local.json");
    validate_code_index(&local).unwrap();
    assert_eq!(names(&local), ("GearWorks", "claude"));
    assert_eq!(
        code_paths(&project, &local),
        ["tmp/gen/make.sh", "tmp/tools/helper.py"]
    );
    for file in ["manifest.json", "api-docs.json", "api-modules.json"] {
        let value = parse_file(&project, &format!("references/code-index/{file}"));
        assert_eq!(names(&value), ("GearWorks", "claude"), "{file}");
    }

    // `--framework` wins over the file's; `--description` picks another file.
    project.write(
        "alt.json",
        r#"{"existing_project_path": "/srv/alt-project/"}"#,
    );
    let out = project.index_build(&["--description", "alt.json", "--framework", "goose"]);
    assert!(out.status.success());
    let memory = parse_file(&project, "references/memory-index.json");
    assert_eq!(names(&memory), ("alt-project", "goose"));
    assert_eq!(document_paths(&memory), ["README.md"]);
}

#[test]
fn without_a_description_the_root_name_is_the_project_name() {
    let project = fixture();
    let out = project.index_build(&[]);
    assert!(out.status.success());
    let root_name = project.root.file_name().unwrap().to_str().unwrap();
    let memory = parse_file(&project, "references/memory-index.json");
    assert_eq!(names(&memory), (root_name, ""));
    let manifest = parse_file(&project, "references/code-index/manifest.json");
    assert_eq!(names(&manifest), (root_name, ""));

    // The team dir's `--self` descriptor is read when there is no brief.
    project.write(
        ".claude/agents/_build-description.json",
        r#"{"project_name": "SelfTeam"}"#,
    );
    assert!(project
        .index_build(&["--team-dir", ".claude/agents"])
        .status
        .success());
    let memory = parse_file(&project, ".claude/agents/references/memory-index.json");
    assert_eq!(names(&memory), ("SelfTeam", ""));
}

#[test]
fn a_malformed_brief_fails_and_leaves_the_old_index() {
    let project = fixture();
    assert!(project.index_build(&[]).status.success());
    let before = project.snapshot();
    let memory_before = project.read("references/memory-index.json");

    let cases = [
        (
            r#"{"project_name": "GearWorks", "memory_index_exclude": "drafts"}"#,
            "field \"memory_index_exclude\" must be an array of strings, found string",
        ),
        (
            r#"{"project_name": 42}"#,
            "field \"project_name\" must be a string, found integer",
        ),
        (r#"{"project_name": "#, "is not valid JSON"),
        (r#"["not", "an", "object"]"#, "must be a JSON object, found array"),
        (
            r#"{"memory_index_extra_dirs": ["docs/a**b"]}"#,
            "memory_index_extra_dirs entry \"docs/a**b\": `**` can only be an entire path component",
        ),
    ];
    for (text, expected) in cases {
        let brief = project.write(".agentteams/brief.json", text);
        let out = project.index_build(&[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{text}: {stderr}");
        assert!(
            stderr.contains(&format!("project description {}", brief.display())),
            "{text}: {stderr}"
        );
        assert!(stderr.contains(expected), "{text}: {stderr}");
        let mut after = project.snapshot();
        after.retain(|path, _| !path.starts_with(".agentteams"));
        let mut unchanged = before.clone();
        unchanged.retain(|path, _| !path.starts_with(".agentteams"));
        assert_eq!(after, unchanged, "{text}: the build wrote something");
    }
    assert_eq!(project.read("references/memory-index.json"), memory_before);
}

#[test]
fn index_help_names_the_description_options() {
    let out = std::process::Command::new(recall_support::BIN)
        .args(["index", "build", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let usage = String::from_utf8_lossy(&out.stdout);
    for text in [
        "--description FILE",
        "--framework NAME",
        ".agentteams/brief.json",
        "_build-description.json",
    ] {
        assert!(usage.contains(text), "{text} missing from:\n{usage}");
    }
}

#[test]
fn extra_dirs_that_bring_nothing_in_are_warned_about_by_name() {
    let project = fixture();
    std::os::unix::fs::symlink(std::env::temp_dir(), project.path("outside")).unwrap();
    let brief = project.write(
        ".agentteams/brief.json",
        r#"{"memory_index_extra_dirs": ["nonexistent_dir", "guides", "README.md", "outside", "nowhere/*.md"],
            "code_index_extra_dirs": ["tmp/tools", "tools_missing", "tmp/gen/*.rs"]}"#,
    );
    let out = project.index_build(&[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("agentteams-mcp: index build: warning: "))
        .collect();
    let warning = |field: &str, entry: &str, why: &str| {
        format!(
            "agentteams-mcp: index build: warning: project description {}: {field} entry {entry:?}: {why}; nothing is indexed from it",
            brief.display()
        )
    };
    assert_eq!(
        warnings,
        [
            warning(
                "memory_index_extra_dirs",
                "nonexistent_dir",
                "no such directory in the project"
            ),
            warning("memory_index_extra_dirs", "README.md", "not a directory"),
            warning(
                "memory_index_extra_dirs",
                "outside",
                "the directory resolves outside the project"
            ),
            warning(
                "memory_index_extra_dirs",
                "nowhere/*.md",
                "the pattern matches nothing in the project"
            ),
            warning(
                "code_index_extra_dirs",
                "tools_missing",
                "no such directory in the project"
            ),
            warning(
                "code_index_extra_dirs",
                "tmp/gen/*.rs",
                "the pattern matches nothing in the project"
            ),
        ],
        "{stderr}"
    );
    // The entries that do bring files in still do, without a warning.
    let memory = parse_file(&project, "references/memory-index.json");
    assert!(document_paths(&memory).contains(&"guides/setup.md".to_owned()));
}
