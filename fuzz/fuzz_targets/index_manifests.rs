//! The index builder's readers of the files a project (or its environment) controls for the API
//! partitions, on arbitrary UTF-8, all of them on every input: `METADATA`/`PKG-INFO`,
//! `top_level.txt`, `RECORD` and `direct_url.json` (servers/src/index/deps.rs), `Cargo.toml`
//! (and the workspace members' manifests it names), `Cargo.lock`, `package.json` (and its entry
//! fields) and `go.mod` (ecosystems.rs), and the import names of a Python source. None may panic
//! or hang; what comes out stays within its `MAX_*` limits; every name or version that becomes a
//! path part is one part (no `/`, not `.` or `..`), every relative path built from one stays
//! relative with no `..`, and every path the builder then confines resolves inside the project,
//! through a fixture project holding a link out of it (`site/out` → `/`) and a link loop.
#![no_main]

use agentteams_mcp_servers::index::deps::{
    editable_source, inferred_top_level, normalize, parse_metadata, record_py_paths,
    top_level_names, MAX_DOC_CHARS, MAX_RECORD_FILES,
};
use agentteams_mcp_servers::index::ecosystems::{
    cargo_dependencies, cargo_lock_packages, crate_folder, entry_path, go_requirements,
    member_manifests, module_folder, npm_dependencies, toml_package_string, MAX_WORKSPACE_MEMBERS,
};
use agentteams_mcp_servers::index::passages::passages_and_imports;
use agentteams_mcp_servers::corpus::teamdir::confine;
use libfuzzer_sys::fuzz_target;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// Paths checked through `confine` per input (each costs a few `lstat`s).
const CONFINED_PER_INPUT: usize = 16;

/// The fixture project: a fixed path (so a dictionary or seed can name it in a `file://` URL),
/// with `site/` holding `out` → `/` and `loop` → `loop`.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = PathBuf::from("/tmp/agentteams-index-manifests-fuzz/project");
        std::fs::create_dir_all(root.join("site")).unwrap();
        for (link, to) in [("site/out", "/"), ("site/loop", "loop")] {
            let _ = std::os::unix::fs::symlink(to, root.join(link));
        }
        std::fs::canonicalize(&root).unwrap()
    })
}

/// One path part: not empty, not `.` or `..`, no `/` or NUL.
fn one_part(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\0'])
}

/// A relative path of plain parts only (a leading `./` allowed). A NUL is let through: the
/// system refuses such a path whole.
fn relative_plain(p: &str) -> bool {
    !p.is_empty()
        && Path::new(p)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// What `confine` accepts must be inside the root, with no `..` left.
fn check_confined(path: &Path, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    if let Ok(inside) = confine(root(), path) {
        assert!(inside.starts_with(root()), "{path:?} -> {inside:?}");
        assert!(
            inside
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
            "{path:?} -> {inside:?}"
        );
    }
}

/// Universal newlines, as the builder reads project files (`read_text_at_most`).
fn universal(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn python_side(text: &str, budget: &mut usize) {
    if let Some(meta) = parse_metadata(text) {
        assert!(meta.doc_text.chars().count() <= MAX_DOC_CHARS);
        assert!(!meta.name.contains('\n') && !meta.version.contains('\n'));
        assert_eq!(meta.name, meta.name.trim());
    }
    for name in top_level_names(text) {
        assert!(
            !name.is_empty() && !name.contains(char::is_whitespace),
            "{name:?}"
        );
    }
    let record = record_py_paths(text);
    assert!(record.len() <= MAX_RECORD_FILES);
    for path in &record {
        assert!(path.ends_with(".py") && !path.contains('\n'), "{path:?}");
        assert_ne!(path.rsplit('/').next(), Some(".py"));
        check_confined(&root().join("site").join(path), budget);
    }
    let inferred = inferred_top_level(&record);
    assert!(inferred.len() <= record.len());
    assert!(inferred.windows(2).all(|w| w[0] < w[1]));
    for name in &inferred {
        assert!(!name.contains('/'), "{name:?}");
    }
    for word in text.split_whitespace().take(64) {
        let normal = normalize(word);
        assert_eq!(normalize(&normal), normal, "{word:?}");
        assert!(
            !normal.contains(['-', '.']) && !normal.contains("__"),
            "{word:?}"
        );
    }
    if let Some(source) = editable_source(text) {
        assert!(source.is_absolute(), "{source:?}");
        assert!(!source.as_os_str().as_encoded_bytes().contains(&0));
        check_confined(&source, budget);
    }
    // The imports of a Python module name folders of an editable install's source.
    for import in passages_and_imports(text, Some("python")).1 {
        assert!(
            one_part(&import)
                && !import.contains(['.', '\\'])
                && !import.contains(char::is_whitespace),
            "{import:?}"
        );
    }
}

fn rust_side(text: &str, budget: &mut usize) {
    let (deps, members) = cargo_dependencies(text);
    for dep in &deps {
        assert!(
            one_part(dep)
                && dep.len() <= 64
                && dep
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{dep:?}"
        );
    }
    let manifests = member_manifests(root(), &members);
    assert!(manifests.len() <= MAX_WORKSPACE_MEMBERS);
    for (i, rel) in manifests.iter().enumerate() {
        assert!(relative_plain(rel), "{members:?} -> {rel:?}");
        assert!(!manifests[..i].contains(rel), "{rel:?} twice");
        check_confined(&root().join(rel), budget);
    }
    let locked = cargo_lock_packages(text);
    assert!(locked.len() <= text.matches("[[package]]").count() + 1);
    for (name, version) in &locked {
        if let Some(folder) = crate_folder(name, version) {
            assert!(one_part(&folder) && !folder.starts_with('.'), "{folder:?}");
            assert_eq!(folder, format!("{name}-{version}"));
        }
    }
    // Any dependency name at any locked version, and pairs of words: the folder is one part.
    let words: Vec<&str> = text.split_whitespace().take(64).collect();
    for pair in words.windows(2) {
        if let Some(folder) = crate_folder(pair[0], pair[1]) {
            assert!(one_part(&folder) && !folder.starts_with('.'), "{folder:?}");
        }
    }
    for dep in deps.iter().take(8) {
        for (_, version) in locked.iter().take(8) {
            if let Some(folder) = crate_folder(dep, version) {
                assert!(one_part(&folder), "{folder:?}");
            }
        }
    }
    if let Some(description) = toml_package_string(text, "description") {
        assert!(!description.contains(['"', '\n']), "{description:?}");
    }
}

fn npm_side(text: &str, budget: &mut usize) {
    let names = npm_dependencies(text);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    for name in &names {
        assert!(name.len() <= 214, "{name:?}");
        let parts: Vec<&str> = name.split('/').collect();
        assert!(parts.iter().all(|p| one_part(p)), "{name:?}");
        assert!(
            parts.len() == 1 || parts.len() == 2 && parts[0].starts_with('@'),
            "{name:?}"
        );
        check_confined(&root().join("node_modules").join(name), budget);
    }
    for value in text.lines().take(64).chain([text]) {
        if let Some(rel) = entry_path(value) {
            assert!(relative_plain(rel), "{value:?} -> {rel:?}");
            assert!(!rel.split('/').any(|p| p == ".."), "{rel:?}");
        }
    }
}

fn go_side(text: &str) {
    let check = |folder: &str| {
        assert!(relative_plain(folder), "{folder:?}");
        assert!(
            folder.split('/').all(one_part) && folder.contains('@'),
            "{folder:?}"
        );
    };
    for (path, version) in go_requirements(text) {
        let folder = module_folder(&path, &version).expect("a requirement go_requirements kept");
        check(&folder);
    }
    for line in text.lines().take(64) {
        let mut words = line.split_whitespace();
        if let (Some(path), Some(version)) = (words.next(), words.next()) {
            if let Some(folder) = module_folder(path, version) {
                check(&folder);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut budget = CONFINED_PER_INPUT;
    python_side(text, &mut budget);
    let text = universal(text);
    rust_side(&text, &mut budget);
    npm_side(&text, &mut budget);
    go_side(&text);
});
