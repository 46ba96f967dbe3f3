//! The memory-sections sidecar through the real binary: `index build` writes it beside the
//! memory index, `query_index` ranks long files by section and says which lines answer, and a
//! sidecar that is stale, broken, planted or foreign is passed over for the whole-document
//! ranking, never trusted and never an error. `--compat reference` never reads it.

mod recall_support;

use agentteams_mcp::json::Value;
use recall_support::{
    hostile_sidecars, lines_of as lines, parse_file as parse, query_hits, str_field, Project,
    Server,
};

const SECTIONS: &str = "references/memory-sections.json";
const MEMORY: &str = "references/memory-index.json";

/// A long changelog whose every release mentions the cache, and one focused page about cache
/// eviction: ranked whole, the changelog's many mentions win; ranked by section, the page does.
fn project() -> Project {
    let project = Project::new("recall-sections");
    let mut changelog = String::from(
        "# Changelog\n\nAll releases of the widget service, newest first, with every change listed.\n",
    );
    for minor in (0..40).rev() {
        changelog.push_str(&format!(
            "\n## 1.{minor}.0\n\nThe cache layer was tuned again in this release; cache entries \
             now carry version {minor} tags, and the cache warmup reads the cache manifest.\n"
        ));
        if minor == 17 {
            changelog.push_str(
                "\n```sh\n# zebra migration: run this once\nmigrate --zebra --all-tenants\n```\n\n\
                 The zebra migration moves every tenant to the striped storage layout in one pass.\n",
            );
        }
    }
    project.write("CHANGELOG.md", &changelog);
    project.write(
        "docs_src/eviction.md",
        "# Cache eviction\n\nHow the service decides which cache entries to evict when memory runs low: \
         least recently used entries go first, pinned ones never.\n\n## Eviction policy knobs\n\n\
         The eviction policy reads max_entries and max_bytes from the service configuration file.\n",
    );
    project.write(
        "README.md",
        "# Widget service\n\nThe widget service builds widgets from gears and bolts for every tenant.\n",
    );
    // Markdown written for rustdoc: its hidden example lines are not headings.
    project.write(
        "docs_src/router.md",
        "Routers join the handlers of every tenant into one service for the widget gateway.\n\n\
         ```rust\n# use gateway::Router;\n# let app = Router::new();\nlet _: Router = app;\n```\n\n\
         ## Nesting routers\n\nA router nests another router under a path prefix for each tenant.\n",
    );
    project.build_indexes();
    project
}

fn query(server: &mut Server, query: &str) -> Vec<Value> {
    query_hits(server, "query_index", query, 3)
}

fn doc_id(hit: &Value) -> u64 {
    hit.get("doc_id").and_then(Value::as_u64).unwrap()
}

#[test]
fn the_build_writes_a_valid_sidecar_of_the_same_build_with_exact_line_locators() {
    let project = project();
    let memory = parse(&project, MEMORY);
    let sections = parse(&project, SECTIONS);
    agentteams_mcp_servers::corpus::schema::validate_memory_index(&sections).unwrap();
    let build_id = |v: &Value| str_field(v, "index_build_id").to_owned();
    assert_eq!(build_id(&sections), build_id(&memory));
    assert_eq!(build_id(&sections).len(), 64);

    let documents = sections.get("documents").and_then(Value::as_array).unwrap();
    let changelog = project.read("CHANGELOG.md");
    let changelog_lines: Vec<&str> = changelog.lines().collect();
    let mut seen = 0;
    for doc in documents.iter() {
        let (path, first, last) =
            agentteams_mcp_servers::corpus::locator::parse_locator(str_field(doc, "path"))
                .unwrap_or_else(|| panic!("{doc}"));
        if path != "CHANGELOG.md" {
            continue;
        }
        seen += 1;
        let heading = changelog_lines[first as usize - 1];
        let title = str_field(doc, "title");
        if first == 1 {
            assert_eq!(title, "Changelog");
        } else {
            // The section starts at its heading, and its title is the heading path.
            assert_eq!(format!("Changelog › {}", &heading[3..]), title);
        }
        assert!(last as usize <= changelog_lines.len());
    }
    // The title section and 40 releases; the `# zebra` line in the fence starts none.
    assert_eq!(seen, 41);

    // The reference titles the rustdoc page by its first `# ` line, a hidden code line; its
    // sections are titled by the file name and by real headings.
    let title_of = |docs: &[Value], path: &str| -> Vec<String> {
        docs.iter()
            .filter(|d| str_field(d, "path").starts_with(path))
            .map(|d| str_field(d, "title").to_owned())
            .collect()
    };
    let memory_docs = memory.get("documents").and_then(Value::as_array).unwrap();
    assert_eq!(
        title_of(memory_docs, "docs_src/router.md"),
        ["use gateway::Router;"]
    );
    assert_eq!(
        title_of(documents, "docs_src/router.md#"),
        ["router.md", "Nesting routers"]
    );
}

#[test]
fn a_long_file_is_ranked_by_its_sections_and_a_hit_names_its_lines() {
    let project = project();
    let memory = parse(&project, MEMORY);
    let memory_docs = memory.get("documents").and_then(Value::as_array).unwrap();
    let id_of = |path: &str| {
        memory_docs
            .iter()
            .position(|d| str_field(d, "path") == path)
            .unwrap() as u64
    };
    let mut server = Server::start(&project.root);

    // The page's best section: its heading path and lines.
    let eviction = query(&mut server, "eviction policy");
    let top = &eviction[0];
    assert_eq!(
        str_field(top, "path"),
        "docs_src/eviction.md",
        "{eviction:?}"
    );
    assert_eq!(
        str_field(top, "title"),
        "Cache eviction › Eviction policy knobs"
    );
    assert_eq!(doc_id(top), id_of("docs_src/eviction.md"));
    assert_eq!(lines(top), Some((5, 7)));

    // Every one of the changelog's forty releases matches, yet it is one hit, and the page that
    // matches less is still found: one hit per file, however many of its sections match.
    let crowded = query(&mut server, "cache manifest warmup");
    let paths: Vec<&str> = crowded.iter().map(|h| str_field(h, "path")).collect();
    assert_eq!(
        paths,
        ["CHANGELOG.md", "docs_src/eviction.md"],
        "{crowded:?}"
    );

    // A question one release answers: that release's lines, its heading path, its text.
    let zebra = query(&mut server, "zebra migration striped storage");
    let hit = &zebra[0];
    assert_eq!(str_field(hit, "path"), "CHANGELOG.md");
    assert_eq!(doc_id(hit), id_of("CHANGELOG.md"));
    assert_eq!(str_field(hit, "title"), "Changelog › 1.17.0");
    let (first, last) = lines(hit).unwrap();
    let changelog = project.read("CHANGELOG.md");
    let text: Vec<&str> = changelog.lines().collect();
    assert_eq!(text[first as usize - 1], "## 1.17.0");
    let section = text[first as usize - 1..last as usize].join("\n");
    assert!(section.contains("striped storage layout"), "{section}");
    assert!(!section.contains("## 1.16.0"), "{section}");
    assert!(
        str_field(hit, "snippet").contains("zebra migration"),
        "{hit}"
    );
}

#[test]
fn the_prompt_embeds_the_documents_of_the_best_sections() {
    let project = project();
    let mut server = Server::start(&project.root);
    let reply = server.request(
        "prompts/get",
        r#"{"name": "ask_team", "arguments": {"question": "cache eviction"}}"#,
    );
    let messages = reply
        .get("result")
        .and_then(|r| r.get("messages"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{reply}"));
    let first_uri = messages[1]
        .get("content")
        .and_then(|c| c.get("resource"))
        .and_then(|r| r.get("text"))
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        first_uri.starts_with("Cache eviction\npath: docs_src/eviction.md"),
        "{first_uri}"
    );
}

/// Whatever is wrong with the sidecar, the answer is the whole-document ranking's, with no
/// `lines` and no error.
fn assert_ranked_whole(project: &Project) {
    let mut server = Server::start(&project.root);
    let got = query(&mut server, "cache eviction");
    let mut reference = Server::start_with(&project.root, &["--compat", "reference"]);
    let whole = query(&mut reference, "cache eviction");
    assert!(got.iter().all(|h| h.get("lines").is_none()), "{got:?}");
    let titles = |hits: &[Value]| -> Vec<String> {
        hits.iter()
            .map(|h| str_field(h, "title").to_owned())
            .collect()
    };
    // The default scorer differs from the reference's, but both rank the same whole documents.
    let mut a = titles(&got);
    let mut b = titles(&whole);
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn a_stale_broken_planted_or_foreign_sidecar_is_passed_over() {
    let project = project();
    let good = project.read(SECTIONS);

    // Another build's sidecar (the reference rebuilt the memory index, say).
    let other_build = good.replacen(
        &str_field(&parse(&project, MEMORY), "index_build_id").to_owned(),
        &"0".repeat(64),
        1,
    );
    assert_ne!(other_build, good);
    project.write(SECTIONS, &other_build);
    assert_ranked_whole(&project);

    // The right build id, but a section names a file the memory index does not hold, or a
    // locator that is not one: the sidecar is not this index's, so none of it is used.
    for (from, to) in [
        ("docs_src/eviction.md#L5-L7", "../../etc/passwd#L5-L7"),
        ("docs_src/eviction.md#L5-L7", "docs_src/eviction.md#L0-L7"),
        ("docs_src/eviction.md#L5-L7", "docs_src/eviction.md"),
    ] {
        let altered = good.replace(from, to);
        assert_ne!(altered, good);
        project.write(SECTIONS, &altered);
        assert_ranked_whole(&project);
    }

    // Not JSON, not an index, a link out of the project, a FIFO, a directory, missing (an
    // index the reference built): whole documents, as before.
    hostile_sidecars(&project, SECTIONS, &good, || assert_ranked_whole(&project));

    // And a rebuild brings the sections back.
    project.build_indexes();
    let mut server = Server::start(&project.root);
    assert!(lines(&query(&mut server, "cache eviction")[0]).is_some());
}

#[test]
fn numbers_and_identifier_parts_in_notes_are_found() {
    let project = Project::new("recall-notes");
    project.write(
        "workSummaries/upgrade.md",
        "# Upgrade notes\n\n## Validation\n\nAfter the upgrade to Python 3.9 the BaseModel validators returned 404 for every unknown tenant route.\n",
    );
    project.write(
        "workSummaries/other.md",
        "# Other notes\n\nThe gateway keeps its routes in a table and reloads them when the configuration changes.\n",
    );
    project.build_indexes();
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "model 404 python 3.9");
    assert_eq!(
        str_field(&hits[0], "path"),
        "workSummaries/upgrade.md",
        "{hits:?}"
    );
    assert_eq!(str_field(&hits[0], "title"), "Upgrade notes › Validation");
    // The reference's prose tokenizer drops the numbers and keeps `basemodel` whole: of the
    // four words only `python` matches.
    let mut reference = Server::start_with(&project.root, &["--compat", "reference"]);
    let hits = query(&mut reference, "model 404 3.9");
    assert!(hits.is_empty(), "{hits:?}");
}

/// A question in a verb's form finds the section named by its noun: "rotate" meets "Key
/// rotation" (and "rotating"), the light stemmer's derivational forms (issue 33 item 8).
#[test]
fn a_question_finds_the_section_named_by_another_form_of_its_word() {
    let project = Project::new("recall-rotation");
    project.write(
        "README.md",
        "# Gateway\n\nThe gateway signs every session with a session key held by the server.\n",
    );
    project.write(
        "docs_src/keys.md",
        "# Keys\n\nThe keys the gateway holds, and how each of them is kept.\n\n\
         ## Session key\n\nEach session key is derived from the server secret and the session id; \
         the session key never leaves the server.\n\n\
         ## Key rotation\n\nA scheduled rotation replaces the session key every day; the old key \
         stays valid for one hour after the rotation.\n\n\
         ## Signing key\n\nThe signing key is loaded from the vault when the gateway starts.\n",
    );
    project.build_indexes();
    let mut server = Server::start(&project.root);
    for question in [
        "rotate session key",
        "rotating session key",
        "session key rotation",
    ] {
        let got = query(&mut server, question);
        assert_eq!(
            str_field(&got[0], "title"),
            "Keys › Key rotation",
            "{question}: {got:?}"
        );
    }
}
