//! The API partitions beyond Python through the real binary: the public definitions and
//! descriptions of a project's Rust (cargo registry), npm (`node_modules`) and Go (module cache)
//! dependencies, and everything a hostile checkout could plant to lead the reads elsewhere or
//! stall the build: names and versions that are paths, links out of a package or a cache,
//! FIFOs, huge files.

mod recall_support;

use agentteams_mcp::json::Value;
use recall_support::{parse_file, query_hits, str_field, Project, Server};
use std::fs;
use std::os::unix::fs::symlink;
use std::process::Command;

const MODULES: &str = "references/code-index/api-modules.json";
const DOCS: &str = "references/code-index/api-docs.json";

/// The project, its cargo home and its Go module cache.
struct Fixture {
    project: Project,
    cargo_home: Project,
    go_cache: Project,
    /// A folder outside all three, for links to point at.
    outside: Project,
}

fn fifo(path: &std::path::Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

fn fixture() -> Fixture {
    let project = Project::new("eco");
    let cargo_home = Project::new("eco-cargo");
    let go_cache = Project::new("eco-go");
    let outside = Project::new("eco-outside");
    outside.write("secret.rs", "/// Never read.\npub fn secret_outside() {}\n");
    outside.write(
        "secret.d.ts",
        "export declare function secretOutside(): void;\n",
    );
    outside.write(
        "secretmod/lib.go",
        "package s\n\n// Never read.\nfunc SecretOutside() {}\n",
    );

    // Rust: one real dependency (renamed), one whose lock entry is a path, one not locked.
    project.write(
        "Cargo.toml",
        "[package]\nname = \"app\"\n\n[dependencies]\nwidgets = \"1\"\nfast = { version = \"2\", package = \"fast-json\" }\nunlocked = \"1\"\n\"../evil\" = \"1\"\n\n[dev-dependencies.hostile]\nversion = \"1\"\n",
    );
    project.write(
        "Cargo.lock",
        "version = 4\n\n[[package]]\nname = \"widgets\"\nversion = \"1.2.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"fast-json\"\nversion = \"2.0.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"hostile\"\nversion = \"../../../../tmp\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n",
    );
    let registry = "registry/src/index.crates.io-0000000000000000";
    cargo_home.write(
        &format!("{registry}/widgets-1.2.0/Cargo.toml"),
        "[package]\nname = \"widgets\"\nversion = \"1.2.0\"\ndescription = \"Widgets assembled from gears and sprockets\"\n",
    );
    cargo_home.write(
        &format!("{registry}/widgets-1.2.0/src/lib.rs"),
        "//! Widgets.\n\n/// A widget made of gears.\npub struct Widget;\n\nimpl Widget {\n    /// Spins the widget's gears at the given speed.\n    pub fn spin(&self, rpm: u32) {}\n    fn private_helper(&self) {}\n}\n\n/// Things that can be assembled.\npub trait Assemble {\n    /// Puts the parts together.\n    fn assemble(&self);\n}\n\nfn internal() {}\npub(crate) fn crate_only() {}\n",
    );
    // A source file that is a link out of the crate, a FIFO, and one too large to read.
    symlink(
        outside.path("secret.rs"),
        cargo_home.path(&format!("{registry}/widgets-1.2.0/src/a_link.rs")),
    )
    .unwrap();
    fifo(&cargo_home.path(&format!("{registry}/widgets-1.2.0/src/b_fifo.rs")));
    cargo_home.write(
        &format!("{registry}/widgets-1.2.0/src/c_huge.rs"),
        &format!(
            "/// Too big.\npub fn huge_item() {{}}\n{}",
            "// pad\n".repeat(40_000)
        ),
    );
    // The renamed crate's folder is a link out of the registry: not read.
    symlink(
        outside.root.clone(),
        cargo_home.path(&format!("{registry}/fast-json-2.0.1")),
    )
    .unwrap();

    // npm: one real package, one that is a link out of the project, one whose `types` climbs out.
    project.write(
        "package.json",
        r#"{"name": "app", "dependencies": {"@acme/gears": "^3.0.0", "linked": "1", "climber": "1", "../evil": "1"}}"#,
    );
    project.write(
        "node_modules/@acme/gears/package.json",
        r#"{"name": "@acme/gears", "version": "3.1.0", "description": "Gear trains for widgets", "types": "./dist/index.d.ts"}"#,
    );
    project.write(
        "node_modules/@acme/gears/dist/index.d.ts",
        "/** Meshes two gears. */\nexport declare function meshGears(a: Gear, b: Gear): Train;\nexport declare class Gear {\n    /** The number of teeth. */\n    teeth(): number;\n    private secret(): void;\n}\ndeclare function notExported(): void;\n",
    );
    symlink(outside.root.clone(), project.path("node_modules/linked")).unwrap();
    project.write(
        "node_modules/climber/package.json",
        r#"{"name": "climber", "version": "1.0.0", "types": "../../../secret.d.ts", "main": "../x.js"}"#,
    );

    // Go: one real module (with an upper-case letter), one indirect, one path that climbs.
    project.write(
        "go.mod",
        "module example.com/app\n\ngo 1.22\n\nrequire (\n\tgithub.com/Acme/sprockets v1.4.0\n\tgithub.com/other/indirect v0.1.0 // indirect\n\t../../evil v1.0.0\n)\n",
    );
    go_cache.write(
        "github.com/!acme/sprockets@v1.4.0/sprockets.go",
        "package sprockets\n\n// Sprocket is a toothed wheel.\ntype Sprocket struct{}\n\n// Turn turns the sprocket by n teeth.\nfunc (s *Sprocket) Turn(n int) {}\n\nfunc helper() {}\n",
    );
    go_cache.write(
        "github.com/!acme/sprockets@v1.4.0/sprockets_test.go",
        "package sprockets\n\nfunc TestTurn() {}\n",
    );
    go_cache.write(
        "github.com/other/indirect@v0.1.0/x.go",
        "package indirect\n\nfunc Indirect() {}\n",
    );

    let out = project.index_build_with_env(
        &[],
        &[
            ("CARGO_HOME", &cargo_home.root),
            ("GOMODCACHE", &go_cache.root),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Fixture {
        project,
        cargo_home,
        go_cache,
        outside,
    }
}

/// `(path, symbol, resolved_from)` of each `api-module` document.
fn units(project: &Project) -> Vec<(String, String, String)> {
    let partition = parse_file(project, MODULES);
    partition
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| {
            let provenance = d.get("provenance").unwrap();
            (
                str_field(d, "path").to_owned(),
                str_field(d, "symbol").to_owned(),
                str_field(provenance, "resolved_from").to_owned(),
            )
        })
        .collect()
}

#[test]
fn public_definitions_of_rust_npm_and_go_dependencies_and_nothing_else() {
    let fixture = fixture();
    let project = &fixture.project;
    let got = units(project);
    let expect = |path: &str, symbol: &str, from: &str| {
        (path.to_owned(), symbol.to_owned(), from.to_owned())
    };
    assert_eq!(
        got,
        [
            expect("@acme/gears", "Gear", "npm:@acme/gears/dist/index.d.ts"),
            expect(
                "@acme/gears",
                "Gear.teeth",
                "npm:@acme/gears/dist/index.d.ts"
            ),
            expect(
                "@acme/gears",
                "meshGears",
                "npm:@acme/gears/dist/index.d.ts"
            ),
            expect(
                "github.com/Acme/sprockets",
                "Sprocket",
                "go:github.com/!acme/sprockets@v1.4.0/sprockets.go"
            ),
            expect(
                "github.com/Acme/sprockets",
                "Sprocket.Turn",
                "go:github.com/!acme/sprockets@v1.4.0/sprockets.go"
            ),
            expect("widgets", "Assemble", "cargo:widgets-1.2.0/src/lib.rs"),
            expect(
                "widgets",
                "Assemble.assemble",
                "cargo:widgets-1.2.0/src/lib.rs"
            ),
            expect("widgets", "Widget", "cargo:widgets-1.2.0/src/lib.rs"),
            expect("widgets", "Widget.spin", "cargo:widgets-1.2.0/src/lib.rs"),
        ]
    );
    // Nothing names the user's home or the caches' places.
    let text = project.read(MODULES);
    for place in [
        &fixture.cargo_home.root,
        &fixture.go_cache.root,
        &fixture.outside.root,
    ] {
        assert!(
            !text.contains(place.to_str().unwrap()),
            "{}",
            place.display()
        );
    }
    let docs = parse_file(project, DOCS);
    let descriptions: Vec<&str> = docs
        .get("documents")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| str_field(d, "path"))
        .collect();
    assert_eq!(descriptions, ["@acme/gears", "widgets"]);
}

#[test]
fn kind_api_answers_how_to_use_a_dependency() {
    let fixture = fixture();
    let mut server = Server::start(&fixture.project.root);
    let (is_error, text) = server.call(
        "query_code",
        r#"{"query": "spin the widget gears at a speed", "kind": "api", "k": 3}"#,
    );
    assert!(!is_error, "{text}");
    let hits = recall_support::hits(&text);
    assert_eq!(str_field(&hits[0], "symbol"), "Widget.spin", "{hits:?}");
    assert_eq!(
        str_field(&hits[0], "snippet"),
        "pub fn spin(&self, rpm: u32) \u{2014} Spins the widget's gears at the given speed."
    );
    let hits = query_hits(&mut server, "query_code", "mesh two gears into a train", 3);
    assert!(
        hits.iter().any(|h| str_field(h, "symbol") == "meshGears"),
        "{hits:?}"
    );
}

#[test]
fn without_caches_or_manifests_the_python_partitions_are_unchanged() {
    let project = Project::new("eco-none");
    project.write("app.py", "import os\n\ndef main():\n    pass\n");
    let empty = Project::new("eco-empty-home");
    let out = project.index_build_with_env(
        &[],
        &[
            ("CARGO_HOME", &empty.root),
            ("GOMODCACHE", &empty.root),
            ("HOME", &empty.root),
        ],
    );
    assert!(out.status.success());
    assert!(units(&project).is_empty());
}
