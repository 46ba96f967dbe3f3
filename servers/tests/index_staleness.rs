//! The reference CLI's staleness rules (REFERENCE-BEHAVIOUR.md §9), re-implemented here from the
//! spec, run on the indexes `index build` writes, as that CLI runs them from the project's root
//! and from another working directory: every kind must be fresh (no Python rebuild), and each rule
//! must still notice a change.

mod recall_support;

use agentteams_mcp::json::{self, Value};
use agentteams_mcp::sha256;
use recall_support::{hits, stored_paths, str_field, Project, Server};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A `built_at` stamp (`YYYY-MM-DDTHH:MM:SS[.ffffff]Z`) as seconds since the epoch, as Python's
/// `datetime.fromisoformat(...).timestamp()` reads it; `None` when it does not parse.
fn stamp_seconds(stamp: &str) -> Option<f64> {
    let body = stamp.strip_suffix('Z')?;
    let (base, fraction) = body.split_once('.').unwrap_or((body, "0"));
    let number = |s: &str| s.parse::<i64>().ok();
    let (date, time) = base.split_once('T')?;
    let d: Vec<i64> = date.split('-').map(number).collect::<Option<_>>()?;
    let t: Vec<i64> = time.split(':').map(number).collect::<Option<_>>()?;
    if d.len() != 3 || t.len() != 3 {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let (y, m, day) = (if d[1] <= 2 { d[0] - 1 } else { d[0] }, d[1], d[2]);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2];
    Some(seconds as f64 + format!("0.{fraction}").parse::<f64>().ok()?)
}

/// `Path.read_text(encoding="utf-8")` hashed as the reference hashes sources: `""` when the file
/// is unreadable or not UTF-8.
fn text_hash(path: &Path) -> String {
    match std::fs::read(path)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
    {
        Some(text) => sha256::hex_digest(text.replace("\r\n", "\n").replace('\r', "\n").as_bytes()),
        None => String::new(),
    }
}

/// `stat().st_mtime`, `0.0` on error.
fn mtime(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.mtime() as f64 + m.mtime_nsec() as f64 * 1e-9)
}

/// The hash and mtime rules shared by the memory index and the local partition: why `index` is
/// stale, with each stored path resolved against `base`, or `None` when it is fresh.
fn hash_and_mtime_stale(index: &Value, base: &Path, sources: &[PathBuf]) -> Option<String> {
    let Some(built) = index
        .get("built_at")
        .and_then(Value::as_str)
        .and_then(stamp_seconds)
    else {
        return Some("built_at is missing or does not parse".into());
    };
    for doc in index
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
    {
        let (Some(path), Some(hash)) = (
            doc.get("path").and_then(Value::as_str),
            doc.get("source_hash").and_then(Value::as_str),
        ) else {
            continue;
        };
        if hash.is_empty() {
            continue;
        }
        // Path(path) from the process's directory: `base` joined unless absolute.
        let actual = text_hash(&base.join(path));
        if actual.is_empty() || actual != hash {
            return Some(format!("{path}: unreadable or changed from {base:?}"));
        }
    }
    let newest = sources.iter().map(|p| mtime(p)).fold(0.0, f64::max);
    (newest > built).then(|| format!("a source is newer ({newest}) than built_at ({built})"))
}

/// The memory index: stored relative paths are resolved against the project root.
fn memory_stale(index: &Value, root: &Path, sources: &[PathBuf]) -> Option<String> {
    hash_and_mtime_stale(index, root, sources)
}

/// The local partition: stored paths are resolved against the process's working directory.
fn local_stale(partition: &Value, cwd: &Path, sources: &[PathBuf]) -> Option<String> {
    hash_and_mtime_stale(partition, cwd, sources)
}

/// An API partition: the stored `dependency_fingerprint` must equal a freshly computed one
/// (after the built_at guard).
fn api_stale(partition: &Value, fresh: &str) -> Option<String> {
    partition
        .get("built_at")
        .and_then(Value::as_str)
        .and_then(stamp_seconds)?;
    let stored = partition
        .get("dependency_fingerprint")
        .and_then(Value::as_str);
    (stored != Some(fresh)).then(|| format!("dependency_fingerprint {stored:?} != {fresh}"))
}

/// A Python project with a virtual environment's metadata, two manifests, a local package,
/// external imports (one resolved through `top_level.txt`, one through `RECORD`, one not
/// installed), a shell script, other languages and memory sources.
fn python_project() -> Project {
    let project = Project::new("staleness");
    project.write(
        "README.md",
        "# Tool\n\nThe tool reads widgets from the store and writes reports about them.\n",
    );
    project.write(
        "CHANGELOG.md",
        "# Changes\n\n## 1.0\n\nFirst release of the widget tool, with reports and exports.\n",
    );
    project.write(
        "pyproject.toml",
        "[project]\nname = \"tool\"\ndependencies = [\"pyyaml\", \"requests\"]\n",
    );
    project.write(
        "requirements.txt",
        "pyyaml==6.0.1\r\nrequests==2.31.0\r\nattrs\r\n",
    );
    project.write(
        "tool/__init__.py",
        "import os\nimport yaml\nfrom . import report\n\ndef load(path):\n    \"\"\"Load widgets.\"\"\"\n    return yaml.safe_load(open(path))\n",
    );
    project.write(
        "tool/report.py",
        "try: import requests\nexcept ImportError: requests = None\nfrom tool import load\nimport attrs, json\n\ndef send(url):\n    return requests.post(url)\n",
    );
    project.write("scripts/run.sh", "build() {\n  echo building\n}\n");
    project.write("src/lib.rs", "pub fn widget() -> u32 { 1 }\n");
    let site = ".venv/lib/python3.11/site-packages";
    project.write(
        &format!("{site}/PyYAML-6.0.1.dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.1\n\nYAML parser.\n",
    );
    project.write(
        &format!("{site}/PyYAML-6.0.1.dist-info/top_level.txt"),
        "_yaml\nyaml\n",
    );
    project.write(
        &format!("{site}/requests-2.31.0.dist-info/METADATA"),
        "Name: requests\nVersion: 2.31.0\n",
    );
    project.write(
        &format!("{site}/requests-2.31.0.dist-info/RECORD"),
        "requests/__init__.py,sha256=abc,10\nrequests/api.py,,\n",
    );
    project.write(
        &format!("{site}/requests/api.py"),
        "def get(url, params=None):\n    \"\"\"Sends a GET request.\"\"\"\n",
    );
    project
}

/// What the recipe of §7.4 item 6 reads besides the manifests: the external import names and
/// the resolved `dist==version` pairs, each sorted.
struct Dependencies<'a> {
    external: &'a [&'a str],
    resolved: &'a [&'a str],
}

/// `python_project`'s dependencies as built: `attrs`, `requests`, `yaml` are external (not `os`,
/// `json`, the local `tool`); `attrs` is not installed, so it has no pair.
const AS_BUILT: Dependencies<'static> = Dependencies {
    external: &["attrs", "requests", "yaml"],
    resolved: &["PyYAML==6.0.1", "requests==2.31.0"],
};

/// The fingerprint by the recipe, written out: manifests in the reference's order (newlines
/// translated), then `I` and `D` entries.
fn expected_fingerprint(project: &Project, deps: &Dependencies<'_>) -> String {
    let mut data = Vec::new();
    for manifest in ["pyproject.toml", "requirements.txt"] {
        data.extend_from_slice(b"M\0");
        data.extend_from_slice(project.read(manifest).replace("\r\n", "\n").as_bytes());
    }
    for name in deps.external {
        data.extend_from_slice(b"I\0");
        data.extend_from_slice(name.as_bytes());
    }
    for pair in deps.resolved {
        data.extend_from_slice(b"D\0");
        data.extend_from_slice(pair.as_bytes());
    }
    sha256::hex_digest(&data)
}

fn read_json(project: &Project, rel: &str) -> Value {
    json::parse(project.read(rel).as_bytes()).unwrap()
}

/// The reference's code sources as its fallback walk finds them: its suffixes (.py, .sh,
/// .bash), absolute, in folders not starting with a dot (and not the generated `references/`).
fn reference_code_sources(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let (path, name) = (entry.path(), entry.file_name());
            let name = name.to_string_lossy();
            if entry.file_type().unwrap().is_dir() {
                if !name.starts_with('.') && name != "references" {
                    pending.push(path);
                }
            } else if [".py", ".sh", ".bash"].iter().any(|s| name.ends_with(s)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every rule on every file, from the root and from another directory: the reasons any is stale.
fn staleness(project: &Project, elsewhere: &Path, deps: &Dependencies<'_>) -> Vec<String> {
    let root = &project.root;
    let memory_sources = [root.join("CHANGELOG.md"), root.join("README.md")];
    let code_sources = reference_code_sources(root);
    let fresh = expected_fingerprint(project, deps);
    let mut reasons = Vec::new();
    let memory = read_json(project, "references/memory-index.json");
    let local = read_json(project, "references/code-index/local.json");
    for cwd in [root.as_path(), elsewhere] {
        reasons
            .extend(memory_stale(&memory, root, &memory_sources).map(|r| format!("memory: {r}")));
        reasons.extend(
            local_stale(&local, cwd, &code_sources).map(|r| format!("local from {cwd:?}: {r}")),
        );
    }
    for name in ["api-modules", "api-docs"] {
        let partition = read_json(project, &format!("references/code-index/{name}.json"));
        reasons.extend(api_stale(&partition, &fresh).map(|r| format!("{name}: {r}")));
    }
    reasons
}

#[test]
fn the_reference_finds_every_index_fresh_from_the_root_and_from_elsewhere() {
    let project = python_project();
    let elsewhere = Project::new("staleness-elsewhere");
    project.build_indexes();
    assert_eq!(
        staleness(&project, &elsewhere.root, &AS_BUILT),
        Vec::<String>::new()
    );
    let manifest = read_json(&project, "references/code-index/manifest.json");
    let entry = |name: &str| {
        manifest
            .get("partitions")
            .and_then(|p| p.get(name))
            .and_then(|e| e.get("dependency_fingerprint"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(
        entry("api-docs"),
        Some(expected_fingerprint(&project, &AS_BUILT))
    );
    assert_eq!(entry("local"), None);
}

#[test]
fn the_rules_notice_changes_and_a_rebuild_makes_the_indexes_fresh_again() {
    let project = python_project();
    let elsewhere = Project::new("staleness-changes");
    assert!(project.index_build(&[]).status.success());
    // A changed source that no longer imports attrs: the local partition is stale from
    // anywhere, and the API partitions are stale against the new dependencies, until rebuilt.
    let without_attrs = Dependencies {
        external: &["requests", "yaml"],
        resolved: AS_BUILT.resolved,
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    project.write(
        "tool/report.py",
        "import requests\n\ndef send(url):\n    return url\n",
    );
    let reasons = staleness(&project, &elsewhere.root, &without_attrs);
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(
        reasons[..2].iter().all(|r| r.starts_with("local from")),
        "{reasons:?}"
    );
    assert!(reasons[2].starts_with("api-modules") && reasons[3].starts_with("api-docs"));
    assert!(project.index_build(&[]).status.success());
    assert_eq!(
        staleness(&project, &elsewhere.root, &without_attrs),
        Vec::<String>::new()
    );
    // A source touched but unchanged: its mtime is later than the partition's built_at, so the
    // build rewrites the partition rather than keep a stamp the reference judges stale.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let text = project.read("tool/__init__.py");
    project.write("tool/__init__.py", &text);
    assert!(!staleness(&project, &elsewhere.root, &without_attrs).is_empty());
    let out = project.index_build(&[]);
    // Its lists are formatted again, the others' copied from the partition it replaces.
    assert!(String::from_utf8_lossy(&out.stderr).contains("(rewrote local with "));
    assert_eq!(
        staleness(&project, &elsewhere.root, &without_attrs),
        Vec::<String>::new()
    );
    // A dependency upgrade: the API partitions are stale until rebuilt.
    let upgraded = Dependencies {
        external: without_attrs.external,
        resolved: &["PyYAML==6.0.1", "requests==2.32.0"],
    };
    project.write(
        ".venv/lib/python3.11/site-packages/requests-2.31.0.dist-info/METADATA",
        "Name: requests\nVersion: 2.32.0\n",
    );
    assert_eq!(staleness(&project, &elsewhere.root, &upgraded).len(), 2);
    assert!(project.index_build(&[]).status.success());
    assert_eq!(
        staleness(&project, &elsewhere.root, &upgraded),
        Vec::<String>::new()
    );
}

#[test]
fn api_partitions_hold_the_imported_distributions_descriptions_and_definitions() {
    let project = python_project();
    assert!(project.index_build(&[]).status.success());
    let docs = read_json(&project, "references/code-index/api-docs.json");
    let paths = stored_paths(&docs);
    assert_eq!(paths, ["PyYAML", "requests"]);
    let mut server = Server::start(&project.root);
    let (is_error, text) = server.call("query_code", r#"{"query": "YAML parser", "kind": "doc"}"#);
    assert!(!is_error, "{text}");
    assert_eq!(str_field(&hits(&text)[0], "path"), "PyYAML");
    // api-modules: the public definitions of the imported distributions' sources.
    let modules = read_json(&project, "references/code-index/api-modules.json");
    assert_eq!(stored_paths(&modules), ["PyYAML", "attrs", "requests"]);
    let (_, text) = server.call(
        "query_code",
        r#"{"query": "send a GET request", "kind": "api"}"#,
    );
    let found = &hits(&text)[0];
    assert_eq!(
        (str_field(found, "path"), str_field(found, "symbol")),
        ("requests", "get")
    );
    // The reference still finds them fresh: only the fingerprint decides for API partitions.
    let elsewhere = Project::new("staleness-api-docs");
    assert_eq!(
        staleness(&project, &elsewhere.root, &AS_BUILT),
        Vec::<String>::new()
    );
}

#[test]
fn relative_local_paths_would_be_stale_from_another_directory() {
    // Why the local partition stores absolute paths: the same rules on a partition with
    // project-relative paths (what this builder wrote before) fail from any directory but the
    // root, which made the reference CLI rebuild the whole code index in Python.
    let project = python_project();
    let elsewhere = Project::new("staleness-relative");
    assert!(project.index_build(&[]).status.success());
    let prefix = format!("{}/", project.root.display());
    let text = project
        .read("references/code-index/local.json")
        .replace(&prefix, "");
    let relative = json::parse(text.as_bytes()).unwrap();
    let sources = [project.root.join("tool/__init__.py")];
    assert_eq!(local_stale(&relative, &project.root, &sources), None);
    assert!(local_stale(&relative, &elsewhere.root, &sources).is_some());
}

#[test]
fn stamps_parse_as_python_reads_them() {
    assert_eq!(stamp_seconds("1970-01-01T00:00:00Z"), Some(0.0));
    assert_eq!(
        stamp_seconds("2026-10-07T12:34:56.5Z"),
        Some(1_791_376_496.5)
    );
    assert_eq!(stamp_seconds("2000-02-29T00:00:00Z"), Some(951_782_400.0));
    assert_eq!(stamp_seconds("yesterday"), None);
}

#[test]
fn a_hostile_environment_is_built_promptly_and_reads_nothing_outside() {
    // A checkout whose environment points out of the project and blocks: a FIFO METADATA, a
    // RECORD entry climbing out, a source linked to a secret, a FIFO manifest, and a
    // `.venv/bin/python` that would leave a marker if anything ran it.
    let project = python_project();
    let outside = Project::new("staleness-outside");
    outside.write(
        "secret.py",
        "def leaked_secret():\n    \"\"\"Do not index.\"\"\"\n",
    );
    let marker = outside.path("ran");
    project.write(
        ".venv/bin/python",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    std::fs::set_permissions(
        project.path(".venv/bin/python"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let site = ".venv/lib/python3.11/site-packages";
    let climb = "../".repeat(12);
    project.write(
        &format!("{site}/requests-2.31.0.dist-info/RECORD"),
        &format!(
            "requests/{climb}{}/secret.py,,\nrequests/linked.py,,\nrequests/api.py,,\n",
            outside.root.display()
        ),
    );
    std::os::unix::fs::symlink(
        outside.path("secret.py"),
        project.path(&format!("{site}/requests/linked.py")),
    )
    .unwrap();
    for fifo in [
        format!("{site}/fifo-1.dist-info/METADATA"),
        "uv.lock".to_owned(),
    ] {
        let path = project.path(&fifo);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success());
    }
    let started = std::time::Instant::now();
    let out = project.index_build(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // The FIFO manifest is named and makes the fingerprint null; nothing ran, nothing leaked.
    assert!(stderr.contains("uv.lock"), "{stderr}");
    assert!(!marker.exists());
    for name in ["api-modules", "api-docs", "local"] {
        let text = project.read(&format!("references/code-index/{name}.json"));
        assert!(!text.contains("leaked_secret"), "{name}");
    }
    let modules = read_json(&project, "references/code-index/api-modules.json");
    assert!(modules
        .get("dependency_fingerprint")
        .is_some_and(Value::is_null));
    assert!(project
        .read("references/code-index/api-modules.json")
        .contains("Sends a GET request."));
}

/// `may_be_stale` of one call's result.
fn says_stale(server: &mut Server, tool: &str, arguments: &str) -> bool {
    let (is_error, text) = server.call(tool, arguments);
    assert!(!is_error, "{text}");
    let result = json::parse(text.as_bytes()).unwrap();
    result
        .get("may_be_stale")
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("{text}"))
}

fn set_mtime(path: &Path, when: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn recall_says_may_be_stale_only_when_the_references_rules_could_find_the_index_stale() {
    let project = python_project();
    project.write(
        "workSummaries/2026-10-01.md",
        "# Monday\n\nThe widget reports were exported for every tenant of the store.\n",
    );
    assert!(project.index_build(&[]).status.success());
    let root = &project.root;
    let memory_sources = |extra: &[&str]| -> Vec<PathBuf> {
        ["CHANGELOG.md", "README.md", "workSummaries/2026-10-01.md"]
            .iter()
            .chain(extra)
            .map(|p| root.join(p))
            .collect()
    };
    let memory = || read_json(&project, "references/memory-index.json");
    let index = r#"{"query": "widget reports"}"#;
    let local = r#"{"query": "load widgets", "kind": "local"}"#;
    // A server per look: a running one reuses its verdict for a second (tested below).
    // Built a moment ago: fresh by the reference's rules, and recall says so.
    assert_eq!(memory_stale(&memory(), root, &memory_sources(&[])), None);
    assert!(!says_stale(&mut Server::start(root), "query_index", index));
    assert!(!says_stale(&mut Server::start(root), "query_code", local));
    let doc = r#"{"query": "YAML parser", "kind": "doc"}"#;
    let all = r#"{"query": "load"}"#;
    assert!(!says_stale(&mut Server::start(root), "query_code", doc));
    assert!(!says_stale(&mut Server::start(root), "query_code", all));
    // The reference's recall always says true, and so does `--compat reference`.
    let mut reference = Server::start_with(root, &["--compat", "reference"]);
    assert!(says_stale(&mut reference, "query_index", index));
    assert!(says_stale(&mut reference, "query_code", local));

    // A source modified after built_at (the mtime rule), then set back before it.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    for (source, tool, arguments) in [
        ("README.md", "query_index", index),
        ("workSummaries/2026-10-01.md", "query_index", index),
        ("tool/report.py", "query_code", local),
    ] {
        set_mtime(&project.path(source), later);
        assert!(
            says_stale(&mut Server::start(root), tool, arguments),
            "{source}"
        );
        set_mtime(&project.path(source), long_ago);
        assert!(
            !says_stale(&mut Server::start(root), tool, arguments),
            "{source}"
        );
    }
    assert_eq!(memory_stale(&memory(), root, &memory_sources(&[])), None);

    // The API partitions' inputs: a manifest edited, a distribution installed (its folder
    // appears in site-packages), a `.py` file's imports (the local partition's file).
    set_mtime(&project.path("requirements.txt"), later);
    assert!(says_stale(&mut Server::start(root), "query_code", doc));
    assert!(says_stale(&mut Server::start(root), "query_code", all));
    assert!(!says_stale(&mut Server::start(root), "query_code", local));
    set_mtime(&project.path("requirements.txt"), long_ago);
    assert!(!says_stale(&mut Server::start(root), "query_code", doc));
    set_mtime(&project.path("tool/report.py"), later);
    assert!(says_stale(&mut Server::start(root), "query_code", doc));
    set_mtime(&project.path("tool/report.py"), long_ago);
    assert!(!says_stale(&mut Server::start(root), "query_code", doc));
    project.write(
        ".venv/lib/python3.11/site-packages/attrs-23.1.0.dist-info/METADATA",
        "Name: attrs\nVersion: 23.1.0\n",
    );
    assert!(says_stale(&mut Server::start(root), "query_code", doc));
    assert!(!says_stale(&mut Server::start(root), "query_code", local));
    assert!(project.index_build(&[]).status.success());
    assert!(!says_stale(&mut Server::start(root), "query_code", doc));
    // A change no rule sees (a distribution nothing imports, Python's bytecode beside the
    // sources) may be stale until the next build looks: that build keeps the partitions and
    // their built_at (their content is the same), and they are fresh from then on.
    project.write(
        ".venv/lib/python3.11/site-packages/pytest-8.0.0.dist-info/METADATA",
        "Name: pytest\nVersion: 8.0.0\n",
    );
    project.write("tool/__pycache__/report.cpython-311.pyc", "bytecode");
    assert!(says_stale(&mut Server::start(root), "query_code", doc));
    assert!(says_stale(&mut Server::start(root), "query_code", local));
    let stamp = |name: &str| {
        str_field(
            &read_json(&project, &format!("references/code-index/{name}.json")),
            "built_at",
        )
        .to_owned()
    };
    let kept = (stamp("api-docs"), stamp("local"));
    assert!(project.index_build(&[]).status.success());
    assert_eq!((stamp("api-docs"), stamp("local")), kept);
    let installed = Dependencies {
        external: AS_BUILT.external,
        resolved: &["PyYAML==6.0.1", "attrs==23.1.0", "requests==2.31.0"],
    };
    assert_eq!(staleness(&project, root, &installed), Vec::<String>::new());
    assert!(!says_stale(&mut Server::start(root), "query_code", doc));
    assert!(!says_stale(&mut Server::start(root), "query_code", local));

    // A new source in a folder the index reads: the reference's current source list holds it.
    project.write(
        "workSummaries/2026-10-02.md",
        "# Tuesday\n\nThe widget store moved to the new tenant layout overnight.\n",
    );
    let with_new = memory_sources(&["workSummaries/2026-10-02.md"]);
    assert!(memory_stale(&memory(), root, &with_new).is_some());
    assert!(says_stale(&mut Server::start(root), "query_index", index));
    assert!(project.index_build(&[]).status.success());
    assert_eq!(memory_stale(&memory(), root, &with_new), None);
    assert!(!says_stale(&mut Server::start(root), "query_index", index));

    // A source removed: its hash cannot be read.
    std::fs::remove_file(project.path("workSummaries/2026-10-02.md")).unwrap();
    assert!(memory_stale(&memory(), root, &memory_sources(&[])).is_some());
    assert!(says_stale(&mut Server::start(root), "query_index", index));
    assert!(project.index_build(&[]).status.success());
    assert!(!says_stale(&mut Server::start(root), "query_index", index));

    // An index naming a file outside the project, directly or through a link, learns nothing of
    // it: recall cannot tell, and says so.
    let outside = Project::new("staleness-outside-file");
    let secret = outside.write("old.md", "# Old\n\nUnchanged for years.\n");
    set_mtime(&secret, long_ago);
    std::os::unix::fs::symlink(&secret, project.path("workSummaries/linked.md")).unwrap();
    // Their folders as old as the file, so only where they lead can decide.
    for folder in [outside.root.clone(), project.path("workSummaries")] {
        std::fs::File::open(&folder)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
    }
    let text = project.read("references/memory-index.json");
    for planted in [secret.to_str().unwrap(), "workSummaries/linked.md"] {
        let altered = text.replace(
            "\"path\": \"README.md\"",
            &format!("\"path\": {:?}", planted),
        );
        assert_ne!(altered, text);
        project.write("references/memory-index.json", &altered);
        assert!(
            says_stale(&mut Server::start(root), "query_index", index),
            "{planted}"
        );
    }
}

#[test]
fn a_projects_docs_are_memory_sources_by_default_and_the_reference_still_finds_the_index_fresh() {
    let project = python_project();
    project.write(
        "docs/guide/install.md",
        "# Install\n\nInstall the widget tool with pip, then point it at the sprocket store path.\n",
    );
    project.write(
        "docs/index.md",
        "# Widget tool documentation\n\nWhat operators and tenants need to know about the widget tool.\n",
    );
    project.write(
        "docs/node_modules/pkg/README.md",
        "# Vendored\n\nA vendored package's readme, which is no documentation of this project.\n",
    );
    assert!(project.index_build(&[]).status.success());
    let root = &project.root;
    let memory = read_json(&project, "references/memory-index.json");
    let paths = stored_paths(&memory);
    assert_eq!(
        paths,
        [
            "CHANGELOG.md",
            "README.md",
            "docs/guide/install.md",
            "docs/index.md"
        ]
    );
    // The reference's rules, with the reference's own source list (it has no docs/): fresh.
    let reference_sources = [root.join("CHANGELOG.md"), root.join("README.md")];
    assert_eq!(memory_stale(&memory, root, &reference_sources), None);
    let mut server = Server::start(root);
    let (_, text) = server.call("query_index", r#"{"query": "install with pip"}"#);
    assert_eq!(str_field(&hits(&text)[0], "path"), "docs/guide/install.md");
    // An edit of a docs page is still noticed by its hash rule.
    project.write(
        "docs/guide/install.md",
        "# Install\n\nInstall the widget tool with uv now.\n",
    );
    assert!(memory_stale(&memory, root, &reference_sources).is_some());

    // A project that already lists docs/ as an extra source gets each page once, where it
    // listed it; one that excludes docs/ gets none.
    for (description, want) in [
        (
            r#"{"memory_index_extra_dirs": ["docs"]}"#,
            &[
                "CHANGELOG.md",
                "README.md",
                "docs/guide/install.md",
                "docs/index.md",
            ][..],
        ),
        (
            r#"{"memory_index_exclude": ["docs"]}"#,
            &["CHANGELOG.md", "README.md"][..],
        ),
    ] {
        project.write(".agentteams/brief.json", description);
        assert!(project.index_build(&[]).status.success());
        let memory = read_json(&project, "references/memory-index.json");
        assert_eq!(stored_paths(&memory), want, "{description}");
    }
}

#[test]
fn a_running_server_reuses_a_staleness_verdict_for_a_second_then_looks_again() {
    let project = python_project();
    assert!(project.index_build(&[]).status.success());
    let root = &project.root;
    let local = r#"{"query": "load widgets", "kind": "local"}"#;
    let mut server = Server::start(root);
    assert!(!says_stale(&mut server, "query_code", local));
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    set_mtime(&project.path("tool/report.py"), later);
    // Within the second (the look above was moments ago): the verdict it made.
    let looked = std::time::Instant::now();
    let reused = says_stale(&mut server, "query_code", local);
    if looked.elapsed() < std::time::Duration::from_millis(500) {
        assert!(!reused);
    }
    // After it: looked at again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(says_stale(&mut server, "query_code", local));
}

/// The index files a build writes, each with its `built_at` and `index_build_id` values (and
/// the manifest's per partition) replaced by a placeholder: what must be byte-identical between
/// an incremental build and a full one.
fn outputs_without_stamps(project: &Project) -> Vec<(String, String)> {
    let files = [
        "references/memory-index.json",
        "references/memory-sections.json",
        "references/code-outline.json",
        "references/code-index/manifest.json",
        "references/code-index/local.json",
        "references/code-index/api-docs.json",
        "references/code-index/api-modules.json",
    ];
    files
        .iter()
        .map(|rel| {
            let mut text = project.read(rel);
            let value = read_json(project, rel);
            let mut stamps = Vec::new();
            let mut pending = vec![&value];
            while let Some(v) = pending.pop() {
                if let Some(map) = v.as_object() {
                    for (key, member) in map.iter() {
                        if let ("built_at" | "index_build_id", Some(s)) =
                            (key.as_str(), member.as_str())
                        {
                            stamps.push(s.to_owned());
                        }
                        pending.push(member);
                    }
                }
            }
            for stamp in stamps {
                text = text.replace(&stamp, "STAMP");
            }
            (rel.to_string(), text)
        })
        .chain(std::iter::once(lookup_without_identities(project)))
        .collect()
}

/// The lookup sidecar, its two files' identities (the files are written anew by each build)
/// left out: where it says each part lies must be what a full build would say.
fn lookup_without_identities(project: &Project) -> (String, String) {
    const IDENTITIES: std::ops::Range<usize> = 30..30 + 2 * 64;
    let mut bytes = std::fs::read(project.path("references/code-lookup.bin")).unwrap();
    assert!(bytes.starts_with(b"agentteams-mcp code lookup 01\n"));
    bytes[IDENTITIES].fill(0);
    ("references/code-lookup.bin".into(), format!("{bytes:?}"))
}

/// Waits past the build cache's racy window (`CACHE_RACY_WINDOW`, 1 s), so every file changed
/// so far can be taken from the cache the next build writes.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(1_100));
}

/// A build after [`settle`], and its `(unchanged, read)` counts.
fn rebuild_settled(project: &Project) -> (usize, usize) {
    settle();
    reuse_counts(&project.index_build(&[]))
}

/// The `(unchanged, read)` counts of a build's summary ("N files unchanged since the last build,
/// M files read").
fn reuse_counts(out: &std::process::Output) -> (usize, usize) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains(" unchanged since the last build"))
        .unwrap_or_else(|| panic!("no reuse counts in {stderr}"));
    let clause = &line[line.rfind("; ").unwrap()..];
    let numbers: Vec<usize> = clause
        .split_whitespace()
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

/// The term lists a build copied from the previous `local.json` and all of them, from its
/// summary ("rewrote local with N of M term lists copied from the previous local.json"); `None`
/// when it wrote the postings whole.
fn lists_copied(out: &std::process::Output) -> Option<(usize, usize)> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let end = stderr.find(" copied from the previous local.json")?;
    let start = stderr[..end].rfind(" with ").unwrap() + 6;
    let numbers: Vec<usize> = stderr[start..end]
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    Some((numbers[0], numbers[1]))
}

/// Asserts that the outputs as they are equal those of a full build of the same tree (the
/// build cache removed, every file read), which this leaves in place.
fn assert_equals_a_full_build(project: &Project) {
    let incremental = outputs_without_stamps(project);
    std::fs::remove_file(project.path("references/code-build-cache.bin")).unwrap();
    let full = project.index_build(&[]);
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert!(
        full.status.success() && !stderr.contains("unchanged since"),
        "{stderr}"
    );
    for ((name, a), (_, b)) in incremental.iter().zip(outputs_without_stamps(project)) {
        assert!(
            *a == b,
            "{name} differs between the incremental and the full build"
        );
    }
}

#[test]
fn an_incremental_rebuild_after_every_kind_of_change_equals_a_full_build_and_is_fresh() {
    let project = python_project();
    let elsewhere = Project::new("staleness-incremental");
    // More unchanged files than the builder's reader sends at once (`CACHED_BATCH`, 256), so its
    // batches end at their size as well as at a file read.
    for i in 0..300 {
        project.write(
            &format!("tool/same_{i}.py"),
            &format!("def same_{i}(x):\n    \"\"\"Adds {i}.\"\"\"\n    return x + {i}\n"),
        );
    }
    for name in ["renamed", "linked", "fifo", "mode", "deleted", "emptied"] {
        project.write(
            &format!("tool/{name}.py"),
            &format!("def {name}_thing(): pass\n"),
        );
    }
    // Older than the cache's racy window, so every file can be taken from the cache.
    settle();
    let first = project.index_build(&[]);
    assert!(first.status.success());

    // Nothing changed: every file is taken from the cache, and the partition and the outline
    // are not written.
    let before = project.snapshot();
    let (unchanged, read) = reuse_counts(&project.index_build(&[]));
    assert_eq!(read, 0, "{unchanged} unchanged");
    let after = project.snapshot();
    for kept in [
        "references/code-index/local.json",
        "references/code-outline.json",
    ] {
        assert_eq!(
            before.get(Path::new(kept)),
            after.get(Path::new(kept)),
            "{kept}"
        );
    }

    // Every kind of change at once.
    let tool = project.path("tool");
    project.write(
        "tool/report.py",
        &format!(
            "{}\ndef report_more(rows):\n    return rows\n",
            project.read("tool/report.py")
        ),
    );
    project.write(
        "tool/added.py",
        "def added_thing(widget):\n    return widget\n",
    );
    std::fs::remove_file(tool.join("deleted.py")).unwrap();
    std::fs::rename(tool.join("renamed.py"), tool.join("renamed_to.py")).unwrap();
    let mode = tool.join("mode.py");
    std::fs::set_permissions(&mode, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::remove_file(tool.join("linked.py")).unwrap();
    std::os::unix::fs::symlink("same_1.py", tool.join("linked.py")).unwrap();
    std::fs::remove_file(tool.join("fifo.py")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(tool.join("fifo.py"))
        .status()
        .unwrap();
    assert!(made.success());
    project.write("tool/emptied.py", "");
    // Edited: the last in sorted order, after more unchanged files than one batch holds.
    project.write(
        "tool/same_99.py",
        "def same_99(x):\n    \"\"\"Adds 99 twice.\"\"\"\n    return x + 99 + 99\n",
    );
    // A dependency upgraded in the virtual environment.
    project.write(
        ".venv/lib/python3.11/site-packages/requests-2.31.0.dist-info/METADATA",
        "Name: requests\nVersion: 2.32.0\n",
    );
    let (unchanged, read) = rebuild_settled(&project);
    // Read: the two edited, added, renamed, re-moded, linked and emptied files (a FIFO is no
    // source: only regular files and links to them are).
    assert_eq!(read, 7, "{unchanged} unchanged");
    // Again on the cache that build wrote, which kept the first one's term numbers and appended
    // the new terms: one file edited with words no other has. The documents are the previous
    // build's, so the lists of the terms it did not name are copied from its `local.json`.
    project.write(
        "tool/added.py",
        "def added_again(gizmo, sprocket):\n    return gizmo\n",
    );
    settle();
    let out = project.index_build(&[]);
    let (unchanged, read) = reuse_counts(&out);
    assert_eq!(read, 1, "{unchanged} unchanged");
    let (copied, all) = lists_copied(&out).expect("lists copied");
    assert!(copied > 0 && copied < all, "{copied} of {all}");
    let upgraded = Dependencies {
        external: AS_BUILT.external,
        resolved: &["PyYAML==6.0.1", "requests==2.32.0"],
    };
    assert_eq!(
        staleness(&project, &elsewhere.root, &upgraded),
        Vec::<String>::new()
    );
    assert_equals_a_full_build(&project);
    // And the cache the full build wrote serves the next build.
    let (unchanged, read) = rebuild_settled(&project);
    assert_eq!(read, 0, "{unchanged} unchanged");
}

#[test]
fn a_cache_holds_only_the_terms_in_use_as_a_file_churns_and_still_equals_a_full_build() {
    let project = python_project();
    let cache = project.path("references/code-build-cache.bin");
    // Each round replaces one file's words with new ones of the same lengths: the words it had
    // leave the next cache's table (it holds the terms in use, in the order of their bytes),
    // so the cache keeps its size.
    let churn = |round: usize| {
        let words: String = (0..40)
            .map(|i| format!("def churned_{round}_{i}(widget_{round}_{i}):\n    pass\n"))
            .collect();
        project.write("tool/churn.py", &words);
    };
    churn(0);
    settle();
    assert!(project.index_build(&[]).status.success());
    let mut sizes = Vec::new();
    for round in 1..=6 {
        churn(round);
        settle();
        let out = project.index_build(&[]);
        assert_eq!(reuse_counts(&out).1, 1, "round {round}");
        // Each round's lists of the other files' terms come from the round before's file.
        assert!(
            lists_copied(&out).is_some_and(|(copied, _)| copied > 0),
            "round {round}"
        );
        sizes.push(std::fs::metadata(&cache).unwrap().len());
    }
    assert!(
        sizes.iter().all(|&size| size == sizes[0]),
        "the table grew: {sizes:?}"
    );
    assert_equals_a_full_build(&project);
}

#[test]
fn a_rebuild_copies_postings_only_from_the_local_json_and_lookup_the_previous_build_left() {
    let project = python_project();
    // Each edit changes a term's count in a list that stays, drops a term, and adds one.
    let edit = |round: usize| {
        let text = format!(
            "def edited_{round}(widget):\n    return widget + widget_{round} + {}\n",
            "widget + ".repeat(round % 3)
        );
        project.write("tool/edited.py", &text);
    };
    edit(0);
    settle();
    assert!(project.index_build(&[]).status.success());
    let local = project.path("references/code-index/local.json");
    let lookup = project.path("references/code-lookup.bin");
    let first_lookup = std::fs::read(&lookup).unwrap();
    let rebuilt = |round: usize| {
        edit(round);
        settle();
        let out = project.index_build(&[]);
        assert_eq!(reuse_counts(&out).1, 1, "round {round}");
        lists_copied(&out)
    };
    assert!(rebuilt(1).is_some_and(|(copied, all)| copied > 0 && copied < all));
    // A lookup damaged in place, its identities kept: every term's range (its table of
    // `start, end, documents, text end` from byte 230, its count before it) ends a byte short,
    // so no run ends at a `]`.
    let mut damaged = std::fs::read(&lookup).unwrap();
    let terms = u64::from_le_bytes(damaged[222..230].try_into().unwrap()) as usize;
    for term in 0..terms {
        let at = 230 + term * 24 + 8;
        let end = u64::from_le_bytes(damaged[at..at + 8].try_into().unwrap());
        damaged[at..at + 8].copy_from_slice(&(end - 1).to_le_bytes());
    }
    std::fs::write(&lookup, &damaged).unwrap();
    assert_eq!(rebuilt(2), None, "a damaged lookup");
    // Files the previous build did not leave as they are: nothing is copied from them.
    local_rewritten(&local);
    assert_eq!(rebuilt(3), None, "local.json written again");
    std::fs::write(&lookup, &first_lookup).unwrap();
    assert_eq!(rebuilt(4), None, "an earlier build's lookup");
    std::fs::remove_file(&lookup).unwrap();
    assert_eq!(rebuilt(5), None, "no lookup");
    // Then copied again, from the file the build before wrote whole.
    assert!(rebuilt(6).is_some_and(|(copied, _)| copied > 0));
    assert_equals_a_full_build(&project);
}

/// Writes `path` again with its own bytes: the same content, another file.
fn local_rewritten(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::remove_file(path).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn after_a_rebuild_that_changed_the_partition_a_build_with_nothing_changed_keeps_every_output() {
    let project = python_project();
    settle();
    assert!(project.index_build(&[]).status.success());
    project.write(
        "tool/edited.py",
        "def edited_thing(widget):\n    return widget\n",
    );
    let (_, read) = rebuild_settled(&project);
    assert_eq!(read, 1);
    // The cache that build wrote (beside the partition and the outline, their identities put
    // in once they were in place) says the outputs are as it left them: nothing is written.
    let inode = |rel: &str| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(project.path(rel)).unwrap())
    };
    let outputs = [
        "references/code-index/local.json",
        "references/code-outline.json",
        "references/code-lookup.bin",
        "references/code-build-cache.bin",
    ];
    let before: Vec<u64> = outputs.iter().map(|rel| inode(rel)).collect();
    let (unchanged, read) = rebuild_settled(&project);
    assert_eq!(read, 0, "{unchanged} unchanged");
    let after: Vec<u64> = outputs.iter().map(|rel| inode(rel)).collect();
    assert_eq!(before, after, "{outputs:?}");
}
