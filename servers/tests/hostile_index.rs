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
