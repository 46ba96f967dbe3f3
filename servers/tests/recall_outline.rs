//! The code-outline sidecar through the real binary: `index build` writes every definition
//! (methods included) with its lines, `query_code` names the definition that answers and its
//! lines, and an outline that is stale, broken, planted or foreign is passed over for the
//! file-level answer, never trusted and never an error. `--compat reference` never
//! reads it.

mod recall_support;

use agentteams_mcp::json::Value;
use agentteams_mcp_servers::corpus::locator::parse_locator;
use recall_support::{
    hostile_sidecars, lines_of, parse_file, query_hits, str_field, Project, Server,
};

const OUTLINE: &str = "references/code-outline.json";
const LOCAL: &str = "references/code-index/local.json";

fn project() -> Project {
    let project = Project::new("recall-outline");
    project.write(
        "src/client.py",
        "import os\n\n\nclass Session:\n    \"\"\"Keeps settings across calls.\"\"\"\n\n    def request(self, method, url):\n        \"\"\"Sends one request and returns its response.\"\"\"\n        return method, url\n\n    def close(self):\n        \"\"\"Closes every pooled connection.\"\"\"\n        pass\n\n\ndef helper():\n    return 1\n",
    );
    project.write(
        "src/transfer.py",
        "def upload_with_retry(path):\n    \"\"\"Retries the upload with exponential backoff while the server is busy.\"\"\"\n    return path\n",
    );
    // Every word of the question, scattered over unrelated definitions, several times.
    project.write(
        "src/misc.py",
        "def upload_log(x):\n    \"\"\"Upload the log.\"\"\"\n    return upload(x)\n\ndef retry_count(x):\n    \"\"\"How many retries the queue allows.\"\"\"\n    return retries(x)\n\ndef backoff_table():\n    \"\"\"The backoff table of the scheduler.\"\"\"\n    return backoff(backoff)\n\ndef server_name():\n    \"\"\"The server's name; busy servers say so.\"\"\"\n    return server(busy)\n\ndef upload_more(x):\n    return upload(upload(x))\n",
    );
    project.write(
        "src/row.rs",
        "pub struct Row;\n\nimpl std::fmt::Display for Row {\n    /// Writes the row as one line of comma-separated cells.\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"{{}}\")\n    }\n}\n",
    );
    project.build_indexes();
    project
}

fn query(server: &mut Server, query: &str) -> Vec<Value> {
    query_hits(server, "query_code", query, 3)
}

#[test]
fn the_build_writes_every_definition_with_its_lines_for_the_local_partition() {
    let project = project();
    let outline = parse_file(&project, OUTLINE);
    let local = parse_file(&project, LOCAL);
    agentteams_mcp_servers::corpus::schema::validate_code_index(&outline).unwrap();
    assert_eq!(
        str_field(&outline, "index_build_id"),
        str_field(&local, "index_build_id")
    );
    let documents = outline.get("documents").and_then(Value::as_array).unwrap();
    let client = project.read("src/client.py");
    let client_lines: Vec<&str> = client.lines().collect();
    let mut found = Vec::new();
    let mut fmt_seen = false;
    for doc in documents.iter() {
        let (path, first, last) = parse_locator(str_field(doc, "path")).unwrap();
        // Paths relative to the project: the outline names no place on the machine.
        assert!(!path.starts_with('/'), "{path}");
        if path == "src/client.py" {
            found.push((str_field(doc, "title").to_owned(), first, last));
            // A definition starts at its `def` or `class` line.
            let line = client_lines[first as usize - 1].trim_start();
            assert!(
                line.starts_with("def ") || line.starts_with("class "),
                "{line}"
            );
        }
        if path == "src/row.rs" && str_field(doc, "title") == "Row.fmt" {
            fmt_seen = true;
            let passages = doc.get("passages").and_then(Value::as_array).unwrap();
            assert_eq!(
                passages[0].as_str(),
                Some("fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result \u{2014} Writes the row as one line of comma-separated cells.")
            );
        }
    }
    assert!(fmt_seen);
    let expected = [
        ("Session", 4, 13),
        ("Session.request", 7, 9),
        ("Session.close", 11, 13),
        ("helper", 16, 17),
    ];
    let expected: Vec<(String, u32, u32)> = expected
        .iter()
        .map(|(n, a, b)| (n.to_string(), *a, *b))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn a_hit_names_the_method_that_answers_and_its_lines() {
    let project = project();
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "close pooled connections");
    let top = &hits[0];
    assert_eq!(str_field(top, "path"), "src/client.py", "{hits:?}");
    assert_eq!(str_field(top, "symbol"), "Session.close");
    assert_eq!(lines_of(top), Some((11, 13)));
    assert_eq!(
        str_field(top, "snippet"),
        "def close(self) \u{2014} Closes every pooled connection."
    );

    let hits = query(&mut server, "write row cells comma separated");
    assert_eq!(str_field(&hits[0], "symbol"), "Row.fmt", "{hits:?}");
    assert_eq!(lines_of(&hits[0]), Some((5, 7)));

    // The reference's answer has no lines and its symbol is the stored one (null for a file).
    let mut reference = Server::start_with(&project.root, &["--compat", "reference"]);
    let hits = query(&mut reference, "close pooled connections");
    assert!(hits.iter().all(|h| h.get("lines").is_none()), "{hits:?}");
}

#[test]
fn the_definition_whose_doc_comment_answers_is_named_when_no_name_does() {
    let project = project();
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "keeps settings across calls");
    assert_eq!(str_field(&hits[0], "path"), "src/client.py", "{hits:?}");
    assert_eq!(str_field(&hits[0], "symbol"), "Session");
    assert_eq!(lines_of(&hits[0]), Some((4, 13)));
    // A file with no definition holding a word of the query keeps the file-level answer.
    let hits = query(&mut server, "upload log");
    let misc = hits
        .iter()
        .find(|h| str_field(h, "path") == "src/misc.py")
        .unwrap();
    assert_eq!(str_field(misc, "symbol"), "upload_log");
    assert_eq!(lines_of(misc), Some((1, 3)));
}

/// The file-level answer: no hit carries `lines`.
fn assert_file_level(project: &Project) {
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "close pooled connections");
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.get("lines").is_none()), "{hits:?}");
}

#[test]
fn a_stale_broken_planted_or_foreign_outline_is_passed_over() {
    let project = project();
    let good = project.read(OUTLINE);
    let build_id = str_field(&parse_file(&project, LOCAL), "index_build_id").to_owned();
    for (from, to) in [
        // Another build's outline (the reference rebuilt the code index, say).
        (build_id.as_str(), "0".repeat(64)),
        // A definition without a locator: not an outline of ours.
        ("client.py#L11-L13", "client.py".to_owned()),
        ("client.py#L11-L13", "client.py#L13-L11".to_owned()),
    ] {
        let altered = good.replace(from, &to);
        assert_ne!(altered, good);
        project.write(OUTLINE, &altered);
        assert_file_level(&project);
    }
    hostile_sidecars(&project, OUTLINE, &good, || assert_file_level(&project));

    // A rebuild that changes nothing keeps the local partition (and its build id) and writes an
    // outline that still matches it.
    let before = project.read(LOCAL);
    project.build_indexes();
    project.build_indexes();
    assert_eq!(project.read(LOCAL), before);
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "close pooled connections");
    assert_eq!(lines_of(&hits[0]), Some((11, 13)));
}

#[test]
fn definitions_read_per_query_are_bounded_and_the_best_hits_come_first() {
    use agentteams_mcp_servers::recall::refine::MAX_DEFINITIONS_READ;
    let project = Project::new("recall-outline-budget");
    // A file of as many definitions as one query may read, and a small one: whichever ranks
    // second finds the budget spent and keeps the file-level answer.
    let big: String = (0..MAX_DEFINITIONS_READ)
        .map(|i| {
            format!("def budget_step_{i}():\n    \"\"\"One budget step.\"\"\"\n    return {i}\n\n")
        })
        .collect();
    project.write("src/big.py", &big);
    project.write(
        "src/small.py",
        "def budget_total():\n    \"\"\"The budget total.\"\"\"\n    return 0\n",
    );
    project.build_indexes();
    let mut server = Server::start(&project.root);
    let hits = query(&mut server, "budget");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(lines_of(&hits[0]).is_some(), "{hits:?}");
    assert!(lines_of(&hits[1]).is_none(), "{hits:?}");
}
