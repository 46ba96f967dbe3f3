//! `index build` over a project whose sources and description are shaped to block, inflate or
//! loop, through the real binary: FIFOs, links to devices, huge sparse files, link loops, trees
//! deeper than `PATH_MAX`, wide directories, one-line sources at the size limit, deep JSON. The
//! build must finish promptly in bounded memory, writing only its own files.

mod common;

use common::{run_limited, TempDir};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// Address space for the builder: what an unbounded read of `/dev/zero` or of a sparse file
/// would pass quickly, several times what the build needs.
const MEMORY_LIMIT_KB: u64 = 1_048_576;

fn build(root: &Path) -> (Output, Duration) {
    let args: [&OsStr; 4] = [
        "index".as_ref(),
        "build".as_ref(),
        "--root".as_ref(),
        root.as_os_str(),
    ];
    run_limited(MEMORY_LIMIT_KB, 120, args)
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn sources_shaped_to_block_inflate_or_loop_are_built_promptly_in_bounded_memory() {
    let project = TempDir::new("hostile-index-sources");
    let root = project.path();
    write(
        &root.join("src/good.py"),
        "def find_the_sprocket():\n    \"\"\"Finds it.\"\"\"\n",
    );
    write(&root.join("docs_src/good.md"), "# Sprockets\n\nGears.\n");
    for dir in ["src", "docs_src"] {
        let ext = if dir == "src" { "py" } else { "md" };
        mkfifo(&root.join(format!("{dir}/fifo.{ext}")));
        std::os::unix::fs::symlink("/dev/zero", root.join(format!("{dir}/zero.{ext}"))).unwrap();
        std::fs::File::create(root.join(format!("{dir}/sparse.{ext}")))
            .unwrap()
            .set_len(40 << 30)
            .unwrap();
    }
    // Link loops: never descended.
    std::fs::create_dir_all(root.join("src/loop")).unwrap();
    std::os::unix::fs::symlink("..", root.join("src/loop/up")).unwrap();
    std::os::unix::fs::symlink("self", root.join("src/loop/self")).unwrap();
    // One line at nearly the 16 MiB source limit, and a paragraph of three million words.
    write(
        &root.join("src/one_line.py"),
        &format!("x = '{}'\n", "a".repeat(12 << 20)),
    );
    write(
        &root.join("docs_src/one_line.md"),
        &format!("# Long\n\n{}\n", "word ".repeat(3_000_000)),
    );
    // Deeper than PATH_MAX (created relative to each level), and wide.
    // Built from the bottom up by renames, so no path this test names passes PATH_MAX.
    let (deep, wrapper) = (root.join("src/deep"), root.join("src/wrapper"));
    write(&deep.join("deep.py"), "def deep(): pass\n");
    for _ in 0..300 {
        std::fs::create_dir(&wrapper).unwrap();
        std::fs::rename(&deep, wrapper.join("d".repeat(50))).unwrap();
        std::fs::rename(&wrapper, &deep).unwrap();
    }
    let wide = root.join("src/wide");
    std::fs::create_dir_all(&wide).unwrap();
    for i in 0..20_000 {
        std::fs::File::create(wide.join(format!("{i}.txt"))).unwrap();
    }

    let (o, took) = build(root);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(took < Duration::from_secs(90), "took {took:?}: {stderr}");
    let code = std::fs::read_to_string(root.join("references/code-index/local.json")).unwrap();
    assert!(code.contains("find_the_sprocket"));
    let memory = std::fs::read_to_string(root.join("references/memory-index.json")).unwrap();
    assert!(memory.contains("Sprockets"));
    // What it wrote: only its own files.
    let mut written: Vec<String> = std::fs::read_dir(root.join("references/code-index"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "api-docs.json",
            "api-modules.json",
            "local.json",
            "manifest.json"
        ]
    );
}

#[test]
fn description_files_shaped_to_block_or_inflate_are_refused_promptly() {
    for kind in ["fifo", "sparse", "deep"] {
        let project = TempDir::new(&format!("hostile-index-description-{kind}"));
        let brief = project.path().join(".agentteams/brief.json");
        std::fs::create_dir_all(brief.parent().unwrap()).unwrap();
        match kind {
            "fifo" => mkfifo(&brief),
            "sparse" => std::fs::File::create(&brief)
                .unwrap()
                .set_len(10 << 30)
                .unwrap(),
            _ => std::fs::write(
                &brief,
                format!(
                    "{{\"memory_index_extra_dirs\":{}{}}}",
                    "[".repeat(100_000),
                    "]".repeat(100_000)
                ),
            )
            .unwrap(),
        }
        let (o, took) = build(project.path());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(took < Duration::from_secs(20), "{kind} took {took:?}");
        match kind {
            // The implicit description is optional: one that is not a regular file is passed
            // over, as a missing one is, and never opened.
            "fifo" => assert!(o.status.success(), "{kind}: {stderr}"),
            "sparse" => assert!(stderr.contains("larger than"), "{kind}: {stderr}"),
            _ => assert!(stderr.contains("nesting deeper"), "{kind}: {stderr}"),
        }
    }
}

#[test]
fn nested_braces_in_python_headers_are_printed_in_linear_time() {
    // `{{{...}}}` as a default or a decorator argument: deciding whether each `{` opens a dict or
    // a set by parsing its first item, then parsing it again for the answer, doubled the work at
    // every level. 24 levels took 15 s; 90 levels (the parser follows 100) would take longer than
    // the age of the universe.
    let project = TempDir::new("hostile-index-braces");
    let root = project.path();
    let depth = 90;
    let set = format!("{}1{}", "{".repeat(depth), "}".repeat(depth));
    let dict = format!("{}1{}", "{".repeat(depth), ": 2}".repeat(depth));
    write(
        &root.join("src/braces.py"),
        &format!(
            "def nested_sets(a={set}):\n    \"\"\"Sets.\"\"\"\n\n\
             def nested_dict_keys(a={dict}):\n    \"\"\"Dicts.\"\"\"\n\n\
             @decorated({set}, {dict})\ndef decorated_one():\n    \"\"\"Decorated.\"\"\"\n"
        ),
    );
    let (o, took) = build(root);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    let code = std::fs::read_to_string(root.join("references/code-index/local.json")).unwrap();
    for name in ["nested_sets", "nested_dict_keys", "decorated_one"] {
        assert!(code.contains(&format!("def {name}(")), "{name}: {code}");
    }
}

/// What the API partitions read in all is bounded: planted environments and manifests, each file
/// within its own limit, at the most the per-item counts allow. Before `MAX_ENVIRONMENT_BYTES`
/// these read 16 GiB (1,000 dist-infos of four 4 MiB files), 4 GiB of JSON kept whole in memory
/// (500 `package.json`s of 8 MiB) and 1.6 GiB (200 workspace members' `Cargo.toml`s of 8 MiB).
/// Each project also has a small dependency of its own, read before the planted ones.
#[test]
fn planted_environments_are_read_within_one_total_budget() {
    use agentteams_mcp_servers::index::{deps, ecosystems};
    let sparse = |path: &Path, head: &str, len: u64| {
        write(path, head);
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(len)
            .unwrap();
    };
    // Hard links to one file of `len` bytes of `head` then `fill` until `tail`.
    let linked =
        |shared: &Path, links: &[std::path::PathBuf], head: &str, fill: &str, tail: &str| {
            let len = ecosystems::MAX_MANIFEST_BYTES as usize;
            let count = (len - head.len() - tail.len()) / fill.len();
            write(shared, &format!("{head}{}{tail}", fill.repeat(count)));
            for link in links {
                std::fs::create_dir_all(link.parent().unwrap()).unwrap();
                std::fs::hard_link(shared, link).unwrap();
            }
        };
    for kind in ["python", "npm", "cargo"] {
        let project = TempDir::new(&format!("hostile-index-environment-{kind}"));
        let root = project.path();
        match kind {
            "python" => {
                write(&root.join("app.py"), "import aaa_good\n");
                let site = root.join(".venv/lib/python3.11/site-packages");
                let good = site.join("aaa_good-1.0.dist-info");
                write(
                    &good.join("METADATA"),
                    "Name: aaa-good\nVersion: 1.0\nSummary: Sprockets for the good\n",
                );
                write(&good.join("top_level.txt"), "aaa_good\n");
                for i in 0..1_000 {
                    let dir = site.join(format!("d{i:04}-1.0.dist-info"));
                    let head = format!("Name: d{i:04}\nVersion: 1.0\n\n");
                    sparse(&dir.join("METADATA"), &head, deps::MAX_METADATA_BYTES);
                    for name in ["top_level.txt", "RECORD", "direct_url.json"] {
                        sparse(&dir.join(name), "", deps::MAX_METADATA_BYTES);
                    }
                }
            }
            "npm" => {
                let names: Vec<String> = (0..ecosystems::MAX_DEPENDENCIES)
                    .map(|i| format!("p{i:03}"))
                    .collect();
                let deps: Vec<String> = names.iter().map(|n| format!("\"{n}\": \"1\"")).collect();
                write(
                    &root.join("package.json"),
                    &format!(
                        "{{\"dependencies\": {{\"a-good\": \"1\", {}}}}}",
                        deps.join(", ")
                    ),
                );
                let good = root.join("node_modules/a-good");
                write(
                    &good.join("package.json"),
                    "{\"types\": \"index.d.ts\", \"description\": \"Gears for the good\"}",
                );
                write(
                    &good.join("index.d.ts"),
                    "export declare function goodGear(): void;\n",
                );
                let shared = root.join("node_modules/.shared");
                let links = |file: &str| -> Vec<std::path::PathBuf> {
                    names
                        .iter()
                        .map(|n| root.join("node_modules").join(n).join(file))
                        .collect()
                };
                linked(
                    &shared.join("package.json"),
                    &links("package.json"),
                    "{\"types\": \"index.d.ts\", \"description\": \"",
                    "x",
                    "\"}",
                );
                let line = "export declare function planted(): void;\n";
                let declarations = line.repeat(deps::MAX_API_FILE_BYTES as usize / line.len());
                write(&shared.join("index.d.ts"), &declarations);
                for link in links("index.d.ts") {
                    std::fs::hard_link(shared.join("index.d.ts"), link).unwrap();
                }
            }
            _ => {
                write(
                    &root.join("Cargo.toml"),
                    "[workspace]\nmembers = [\"m/*\"]\n",
                );
                write(&root.join("Cargo.lock"), "version = 4\n");
                let links: Vec<std::path::PathBuf> = (0..ecosystems::MAX_WORKSPACE_MEMBERS)
                    .map(|i| root.join(format!("m/m{i:03}/Cargo.toml")))
                    .collect();
                linked(
                    &root.join("shared.toml"),
                    &links,
                    "[package]\nname = \"m\"\n\n[dependencies]\n",
                    "# a comment line of the manifest, over and over again\n",
                    "",
                );
            }
        }
        let (o, took) = build(root);
        eprintln!("{kind}: built in {took:?}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{kind} ({took:?}): {stderr}");
        assert!(took < Duration::from_secs(30), "{kind} took {took:?}");
        let warnings: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("MAX_ENVIRONMENT_BYTES"))
            .collect();
        assert_eq!(warnings.len(), 1, "{kind}: {stderr}");
        let docs =
            std::fs::read_to_string(root.join("references/code-index/api-docs.json")).unwrap();
        match kind {
            // A distribution may have gone unread: the fingerprint cannot be the reference's.
            "python" => {
                assert!(warnings[0].contains("dependency_fingerprint is null"));
                assert!(docs.contains("\"dependency_fingerprint\": null"), "{docs}");
                assert!(docs.contains("Sprockets for the good"), "{docs}");
            }
            // Python's files were all read: its fingerprint stands.
            "npm" => {
                assert!(!warnings[0].contains("null"), "{stderr}");
                assert!(docs.contains("\"dependency_fingerprint\": \""), "{docs}");
                assert!(docs.contains("Gears for the good"), "{docs}");
            }
            _ => assert!(!warnings[0].contains("null"), "{stderr}"),
        }
    }
}
