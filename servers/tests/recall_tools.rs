//! recall's two tools called the way the engine calls them (`ToolSet::call`), over indexes the
//! tests write by hand: argument rules, messages, containment, validation, ranking, the cache.

mod recall_support;

use agentteams_mcp::json::{self, Value};
use agentteams_mcp::server::ToolSet;
use agentteams_mcp_servers::recall::Recall;
use agentteams_mcp_servers::Compat;
use recall_support::{call, hits, manifest, memory_index, partition, str_field, Project, Server};

/// Three documents whose scores `recall::rank`'s unit test derives by hand.
fn widget_project() -> Project {
    let project = Project::new("recall-widgets");
    let doc = |id: usize, path: &str, len: usize, paragraphs: &str| {
        format!(
            r#"{{"doc_id": {id}, "path": "{path}", "title": "T{id}", "length": {len}, "snippet": "stored {id}",
                "paragraphs": {paragraphs}, "source_mtime": 0}}"#
        )
    };
    let docs = format!(
        "[{}, {}, {}]",
        doc(0, "a.md", 3, r#"["all about gear", "widget widget talk"]"#),
        doc(1, "b.md", 2, "[]"),
        doc(2, "c.md", 4, r#"["bolt"]"#)
    );
    let postings = r#"{"widget": [{"doc_id": 0, "tf": 2}, {"doc_id": 1, "tf": 1}],
        "gear": [{"doc_id": 0, "tf": 1}], "bolt": [{"doc_id": 1, "tf": 1}, {"doc_id": 2, "tf": 3}],
        "nut": [{"doc_id": 2, "tf": 1}]}"#;
    project.write(
        "references/memory-index.json",
        &memory_index(&docs, postings, 3, 3.0),
    );
    project
}

/// The reference's scores, fields and snippets of `widget_project` for "Widget", as the
/// reference's scorer computes them by hand.
const WIDGET_HITS_REFERENCE: &str = r#"{
 "built_at": "2026-10-07T12:34:56.123456Z",
 "hits": [
  {
   "confidence": "weak",
   "doc_id": 0,
   "path": "a.md",
   "score": 0.671434,
   "snippet": "widget widget talk",
   "title": "T0"
  },
  {
   "confidence": "weak",
   "doc_id": 1,
   "path": "b.md",
   "score": 0.552945,
   "snippet": "stored 1",
   "title": "T1"
  }
 ],
 "may_be_stale": true
}"#;

/// `recall` answers `widget_project` with the reference's hand-computed scores.
fn assert_widget_scores_are_the_references(recall: &Recall) {
    let text = call(recall, "query_index", r#"{"query": "Widget"}"#).unwrap();
    // ln(1.6) * 5/3.5 = 0.6714337560653366 and ln(1.6) * 2.5/2.125 = 0.5529454461714537.
    assert_eq!(text, WIDGET_HITS_REFERENCE);
    // Duplicated query terms count again: 2 × 0.6714337560653366 + ln(1 + 2.5/1.5) × 1.0.
    let text = call(
        recall,
        "query_index",
        r#"{"query": "widget widget gear", "k": 1}"#,
    )
    .unwrap();
    let hit = &hits(&text)[0];
    assert_eq!(hit.get("score").and_then(Value::as_f64), Some(2.323697));
    assert_eq!(str_field(hit, "confidence"), "candidate");
    let none = call(recall, "query_index", r#"{"query": "the and zebra"}"#).unwrap();
    assert!(hits(&none).is_empty());
}

#[test]
fn the_default_ranking_orders_by_coverage_and_says_how_sure_it_is() {
    let project = widget_project();
    let recall = Recall::new(&project.root).unwrap();
    let text = call(&recall, "query_index", r#"{"query": "Widget"}"#).unwrap();
    let found = hits(&text);
    let order: Vec<(&str, &str)> = found
        .iter()
        .map(|h| (str_field(h, "path"), str_field(h, "confidence")))
        .collect();
    // Both hold every word of the query, neither has it in its title: candidates.
    assert_eq!(order, [("a.md", "candidate"), ("b.md", "candidate")]);
    // Holding both words beats holding one many times; a title naming a word makes it reliable.
    let text = call(&recall, "query_index", r#"{"query": "widget gear"}"#).unwrap();
    assert_eq!(str_field(&hits(&text)[0], "path"), "a.md");
    assert_eq!(str_field(&hits(&text)[0], "confidence"), "candidate");
    let none = call(&recall, "query_index", r#"{"query": "the and zebra"}"#).unwrap();
    assert!(hits(&none).is_empty());
}

/// Whatever the default scoring becomes, `--compat reference` gives the reference's scores,
/// order, confidences, titles and snippets, in process and through the binary.
#[test]
fn compat_reference_scores_as_the_reference_does() {
    let project = widget_project();
    let recall = Recall::new(&project.root)
        .unwrap()
        .with_compat(Compat::Reference);
    assert_widget_scores_are_the_references(&recall);
    let mut server = Server::start_with(&project.root, &["--compat", "reference"]);
    let (is_error, text) = server.call("query_index", r#"{"query": "Widget"}"#);
    assert!(!is_error, "{text}");
    let value = json::parse(text.as_bytes()).unwrap();
    assert_eq!(json::to_pretty_ascii_sorted(&value), WIDGET_HITS_REFERENCE);
}

#[test]
fn arguments_are_refused_with_the_reference_messages() {
    let project = widget_project();
    let recall = Recall::new(&project.root).unwrap();
    let query_msg = "query must be a non-empty string of at most 500 characters";
    let k_msg = "k must be an integer from 1 to 20";
    let long = format!(r#"{{"query": "{}"}}"#, "é".repeat(501));
    for (args, want) in [
        (r#"{"query": ""}"#, query_msg),
        (r#"{"query": " \t\u001f\u3000"}"#, query_msg),
        (r#"{"query": 5}"#, query_msg),
        (r#"{}"#, query_msg),
        (long.as_str(), query_msg),
        (r#"{"query": "x", "k": 0}"#, k_msg),
        (r#"{"query": "x", "k": 21}"#, k_msg),
        (r#"{"query": "x", "k": true}"#, k_msg),
        (r#"{"query": "x", "k": 5.0}"#, k_msg),
        (r#"{"query": "x", "k": null}"#, k_msg),
        (r#"{"query": "", "k": 0}"#, query_msg),
    ] {
        assert_eq!(
            call(&recall, "query_index", args).unwrap_err(),
            want,
            "{args}"
        );
    }
    let exact = format!(r#"{{"query": "{}", "k": 20, "extra": 1}}"#, "é".repeat(500));
    assert!(call(&recall, "query_index", &exact).is_ok());
    assert_eq!(
        call(
            &recall,
            "query_code",
            r#"{"query": "x", "kind": "symbols"}"#
        )
        .unwrap_err(),
        "kind must be one of all, local, api, doc"
    );
    assert_eq!(
        call(&recall, "query_nope", r#"{"query": "x"}"#).unwrap_err(),
        "unknown tool 'query_nope'"
    );
}

/// The product's missing-index message: every folder searched, and the command that builds.
fn missing(marker: &str) -> String {
    format!("no {marker} in any team dir: searched ., .claude/agents, .github/agents, .goose, .codex/agents, .goose/recipes under the project root; build the indexes with `agentteams-mcp index build --root <project root>`")
}

/// The reference's words, for both indexes (`--compat reference`).
fn reference_missing(marker: &str) -> String {
    format!("no {marker} under ., .claude/agents, .github/agents, .goose, .codex/agents; ask the orchestrator to run --refresh-index")
}

#[test]
fn missing_indexes_name_every_folder_searched_and_the_build_command() {
    let project = Project::new("recall-missing");
    let before = project.snapshot();
    let recall = Recall::new(&project.root).unwrap();
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, missing("references/memory-index.json"));
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, missing("references/code-index/manifest.json"));

    let recall = Recall::new(&project.root)
        .unwrap()
        .with_compat(Compat::Reference);
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, reference_missing("references/memory-index.json"));
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(
        err,
        reference_missing("references/code-index/manifest.json")
    );
    assert_eq!(project.snapshot(), before);
}

#[test]
fn the_binary_gives_the_references_words_only_under_compat_reference() {
    let project = Project::new("recall-missing-binary");
    let mut server = Server::start(&project.root);
    assert_eq!(
        server.call("query_index", r#"{"query": "x"}"#),
        (true, missing("references/memory-index.json"))
    );
    assert_eq!(
        server.call("query_code", r#"{"query": "x"}"#),
        (true, missing("references/code-index/manifest.json"))
    );
    let mut server = Server::start_with(&project.root, &["--compat", "reference"]);
    assert_eq!(
        server.call("query_index", r#"{"query": "x"}"#),
        (true, reference_missing("references/memory-index.json"))
    );
    assert_eq!(
        server.call("query_code", r#"{"query": "x"}"#),
        (
            true,
            reference_missing("references/code-index/manifest.json")
        )
    );
}

#[test]
fn an_unknown_compat_mode_is_a_usage_error() {
    let project = Project::new("recall-compat-usage");
    let o = std::process::Command::new(recall_support::BIN)
        .args(["--serve-mcp", "recall", "--compat", "python", "--root"])
        .arg(&project.root)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--compat takes `reference` (without it the servers answer with their own texts), not \"python\""),
        "{err}"
    );
}

#[test]
fn long_snippets_are_capped_at_400_code_points() {
    let project = Project::new("recall-cap");
    let long = "ü".repeat(1000);
    let docs = format!(
        r#"[{{"doc_id": 0, "path": "a.md", "title": "A", "length": 1, "snippet": "{long}",
             "paragraphs": [], "source_mtime": 0}}]"#
    );
    project.write(
        "references/memory-index.json",
        &memory_index(&docs, r#"{"widget": [{"doc_id": 0, "tf": 1}]}"#, 1, 1.0),
    );
    let recall = Recall::new(&project.root).unwrap();
    let text = call(&recall, "query_index", r#"{"query": "widget"}"#).unwrap();
    let hit = &hits(&text)[0];
    let snippet = str_field(hit, "snippet");
    assert_eq!(snippet.chars().count(), 401);
    assert!(snippet.ends_with("ü\u{2026}"));
    let keys: Vec<_> = hit.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["confidence", "doc_id", "path", "score", "snippet", "title"]
    );
}

#[test]
fn a_symlinked_team_dir_outside_the_project_is_refused() {
    let project = Project::new("recall-link");
    let outside = Project::new("recall-link-outside");
    outside.write(
        "references/memory-index.json",
        &memory_index("[]", "{}", 0, 0.0),
    );
    std::os::unix::fs::symlink(&outside.root, project.path(".goose")).unwrap();
    let recall = Recall::new(&project.root).unwrap();
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, ".goose resolves outside the project; refusing");
    // The index file itself linked outside is refused too.
    std::fs::remove_file(project.path(".goose")).unwrap();
    std::fs::create_dir_all(project.path("references")).unwrap();
    std::os::unix::fs::symlink(
        outside.path("references/memory-index.json"),
        project.path("references/memory-index.json"),
    )
    .unwrap();
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert!(err.contains("outside the project"), "{err}");
}

/// Calls `tool` on a new `Recall` in a thread; `None` if no answer came within a generous bound
/// (a hang, not a slow answer: the test fails instead of blocking the suite).
fn call_bounded(root: &std::path::Path, tool: &str, args: &str) -> Option<Result<String, String>> {
    let (root, tool, args) = (root.to_owned(), tool.to_owned(), args.to_owned());
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let recall = Recall::new(&root).unwrap();
        let _ = send.send(call(&recall, &tool, &args));
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(30))
        .ok()
}

#[test]
fn index_files_of_objects_with_many_keys_are_answered_without_checking_each_key_against_all() {
    // A hostile repository's memory index whose top level holds 300,000 distinct keys: checking
    // each key for a repeat against those before it took about 4.5 x 10^10 comparisons (minutes,
    // and a map about seven times the file's size).
    let project = Project::new("recall-many-keys");
    let keys = |n: usize| {
        (0..n)
            .map(|i| format!(r#""k{i:07}": 0"#))
            .collect::<Vec<_>>()
            .join(", ")
    };
    project.write(
        "references/memory-index.json",
        &format!(r#"{{"artifact_type": "memory-index", {}}}"#, keys(300_000)),
    );
    // Declined by the stream at once; parsed whole, a tree that large passes the tree budget.
    let refused_past_the_tree_budget = |what: &str| {
        let err = call_bounded(&project.root, "query_index", r#"{"query": "x"}"#)
            .unwrap_or_else(|| panic!("query_index on {what} did not answer"))
            .unwrap_err();
        assert!(
            err.starts_with(
                "cannot read memory index at memory-index.json: the parsed value would take \
                 more than the limit of "
            ),
            "{what}: {err}"
        );
    };
    refused_past_the_tree_budget("a top level of 300,000 keys");
    // A valid index whose first `framework` (shadowed by the second) is an object of 49,000
    // keys: the most a member may span as a tree in the stream (a key and a value token each).
    // Checked key by key it took seconds of every call.
    let valid = memory_index("[]", "{}", 0, 0.0);
    let shadowed = valid.replacen(
        r#""framework""#,
        &format!(r#""framework": {{{}}}, "framework""#, keys(49_000)),
        1,
    );
    assert_ne!(shadowed, valid);
    project.write("references/memory-index.json", &shadowed);
    refused_past_the_tree_budget("a member of 49,000 keys");
}

#[test]
fn index_files_that_are_fifos_or_devices_are_refused_without_blocking() {
    let project = Project::new("recall-fifo");
    std::fs::create_dir_all(project.path("references/code-index")).unwrap();
    let fifo = |rel: &str| {
        let made = std::process::Command::new("mkfifo")
            .arg(project.path(rel))
            .status()
            .unwrap();
        assert!(made.success());
    };
    fifo("references/memory-index.json");
    let err = call_bounded(&project.root, "query_index", r#"{"query": "x"}"#)
        .expect("query_index blocked on a FIFO")
        .unwrap_err();
    assert_eq!(
        err,
        "cannot read memory index at memory-index.json: not a regular file"
    );
    std::fs::remove_file(project.path("references/memory-index.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", project.path("references/memory-index.json")).unwrap();
    let err = call_bounded(&project.root, "query_index", r#"{"query": "x"}"#)
        .expect("query_index read /dev/zero")
        .unwrap_err();
    // Outside the project, so confinement refuses it first.
    assert_eq!(
        err,
        "memory-index.json resolves outside the project; refusing"
    );
    // A partition the manifest lists, as a FIFO.
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("local", "local.json", "local-script")]),
    );
    fifo("references/code-index/local.json");
    let err = call_bounded(&project.root, "query_code", r#"{"query": "x"}"#)
        .expect("query_code blocked on a FIFO")
        .unwrap_err();
    assert_eq!(
        err,
        "cannot read code index at local.json: not a regular file"
    );
}

#[test]
fn partition_paths_outside_the_project_are_refused_whether_or_not_they_exist() {
    let project = Project::new("recall-oracle");
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("x", "../../../definitely-not-here.json", "local-script")]),
    );
    let recall = Recall::new(&project.root).unwrap();
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(
        err,
        "definitely-not-here.json resolves outside the project; refusing"
    );
    // An existing outside file gives the same answer.
    let outside = Project::new("recall-oracle-outside");
    outside.write("p.json", "{}");
    let rel = format!("../../..{}", outside.path("p.json").display());
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("x", &rel, "local-script")]),
    );
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, "p.json resolves outside the project; refusing");
    // A missing partition inside the project is skipped silently.
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("local", "local.json", "local-script")]),
    );
    let text = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap();
    assert_eq!(
        text,
        "{\n \"built_at\": null,\n \"hits\": [],\n \"may_be_stale\": true\n}"
    );
}

fn code_doc(id: usize, path: &str, symbol: &str, length: usize) -> String {
    format!(
        r#"{{"doc_id": {id}, "path": "{path}", "source_kind": "local-script", "title": "t{id}",
            "length": {length}, "snippet": "s{id}", "passages": [], "source_mtime": 1.5,
            "symbol": {symbol}, "language": "python"}}"#
    )
}

#[test]
fn query_code_merges_partitions_filters_kinds_and_relativises_paths() {
    let project = Project::new("recall-code");
    let abs = project.path("tools/run.py");
    let local_docs = format!(
        "[{}, {}]",
        code_doc(0, &abs.display().to_string(), "null", 2),
        code_doc(1, "lib/b.py", "null", 2)
    );
    let postings = r#"{"deploy": [{"doc_id": 0, "tf": 1}, {"doc_id": 1, "tf": 1}]}"#;
    project.write(
        "references/code-index/local.json",
        &partition(
            "local-script",
            "2026-10-07T10:00:00Z",
            &local_docs,
            postings,
            2,
            2.0,
        ),
    );
    let api_docs = format!("[{}]", code_doc(0, "requests", r#""deploy""#, 2))
        .replace("local-script", "api-module");
    project.write(
        "references/code-index/api-modules.json",
        &partition(
            "api-module",
            "2026-10-08T10:00:00Z",
            &api_docs,
            r#"{"deploy": [{"doc_id": 0, "tf": 1}]}"#,
            1,
            2.0,
        ),
    );
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[
            ("api-modules", "api-modules.json", "api-module"),
            ("local", "local.json", "local-script"),
        ]),
    );
    let recall = Recall::new(&project.root).unwrap();
    let text = call(&recall, "query_code", r#"{"query": "deploy", "k": 20}"#).unwrap();
    let all = hits(&text);
    let value = json::parse(text.as_bytes()).unwrap();
    assert_eq!(
        value.get("built_at").and_then(Value::as_str),
        Some("2026-10-08T10:00:00Z")
    );
    // Equal rounded scores order by the stored path, as the reference sorts: the absolute one
    // ("/tmp/...") first, although it is shown relative.
    let order: Vec<(&str, &str)> = all
        .iter()
        .map(|h| (str_field(h, "path"), str_field(h, "symbol")))
        .collect();
    assert_eq!(order.len(), 3);
    assert!(order.contains(&("requests", "deploy")));
    let local: Vec<&str> = order
        .iter()
        .filter(|o| o.1.is_empty())
        .map(|o| o.0)
        .collect();
    assert_eq!(local, ["tools/run.py", "lib/b.py"]);
    // `--compat reference` shows what the reference shows: the path as the file stores it.
    let reference = Recall::new(&project.root)
        .unwrap()
        .with_compat(Compat::Reference);
    let text = call(&reference, "query_code", r#"{"query": "deploy", "k": 20}"#).unwrap();
    let shown: Vec<String> = hits(&text)
        .iter()
        .filter(|h| str_field(h, "symbol").is_empty())
        .map(|h| str_field(h, "path").to_owned())
        .collect();
    assert_eq!(shown, [abs.display().to_string(), "lib/b.py".to_owned()]);
    let text = call(
        &recall,
        "query_code",
        r#"{"query": "deploy", "kind": "api"}"#,
    )
    .unwrap();
    let api = hits(&text);
    assert_eq!(api.len(), 1);
    assert_eq!(str_field(&api[0], "symbol"), "deploy");
    let text = call(
        &recall,
        "query_code",
        r#"{"query": "deploy", "kind": "doc"}"#,
    )
    .unwrap();
    assert!(hits(&text).is_empty());
}

#[test]
fn invalid_indexes_name_the_file_and_the_json_path() {
    let project = Project::new("recall-invalid");
    project.write("references/memory-index.json", "{not json");
    let recall = Recall::new(&project.root).unwrap();
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert!(
        err.starts_with("cannot read memory index at memory-index.json: "),
        "{err}"
    );
    let docs = r#"[{"doc_id": 0, "path": "a.md", "title": "A", "length": -3, "snippet": "",
                    "paragraphs": [], "source_mtime": 0}]"#;
    project.write(
        "references/memory-index.json",
        &memory_index(docs, "{}", 1, 1.0),
    );
    let err = call(&recall, "query_index", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(
        err,
        "memory index failed schema validation: memory-index.json: $.documents[0].length: must be an integer >= 0, found -3"
    );
    let docs = docs.replace("-3", "1");
    project.write(
        "references/memory-index.json",
        &memory_index(&docs, r#"{"x": [{"doc_id": 4, "tf": 1}]}"#, 1, 1.0),
    );
    let err = call(&recall, "query_index", r#"{"query": "xyz"}"#).unwrap_err();
    assert!(
        err.starts_with(
            "memory index failed schema validation: memory-index.json: $.postings.x[0].doc_id"
        ),
        "{err}"
    );
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("local", "local.json", "local-script")])
            .replace("\"N\": 0", "\"N\": 0, \"extra\": 1"),
    );
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert_eq!(err, "code index failed schema validation: manifest.json: $.partitions.local: additional properties are not allowed ('extra' was unexpected)");
}

#[test]
fn a_changed_index_file_is_reread_on_the_next_call() {
    let project = widget_project();
    let recall = Recall::new(&project.root).unwrap();
    let first = call(&recall, "query_index", r#"{"query": "widget"}"#).unwrap();
    assert_eq!(hits(&first).len(), 2);
    // Same call again: served from the cache, same answer.
    assert_eq!(
        call(&recall, "query_index", r#"{"query": "widget"}"#).unwrap(),
        first
    );
    let docs = r#"[{"doc_id": 0, "path": "new.md", "title": "New", "length": 1, "snippet": "",
                    "paragraphs": [], "source_mtime": 0}]"#;
    project.write(
        "references/memory-index.json",
        &memory_index(docs, r#"{"widget": [{"doc_id": 0, "tf": 1}]}"#, 1, 1.0),
    );
    let second = call(&recall, "query_index", r#"{"query": "widget"}"#).unwrap();
    let hits = hits(&second);
    assert_eq!(hits.len(), 1);
    assert_eq!(str_field(&hits[0], "path"), "new.md");
    project.write("references/memory-index.json", "[]");
    assert!(call(&recall, "query_index", r#"{"query": "widget"}"#).is_err());
}

#[test]
fn team_dirs_are_searched_in_order_and_each_index_independently() {
    let project = Project::new("recall-order");
    let one = |title: &str| {
        memory_index(
            &format!(
                r#"[{{"doc_id": 0, "path": "{title}", "title": "{title}", "length": 1, "snippet": "", "paragraphs": [], "source_mtime": 0}}]"#
            ),
            r#"{"widget": [{"doc_id": 0, "tf": 1}]}"#,
            1,
            1.0,
        )
    };
    project.write(".codex/agents/references/memory-index.json", &one("codex"));
    project.write(
        ".github/agents/references/memory-index.json",
        &one("github"),
    );
    project.write(
        ".claude/agents/references/code-index/manifest.json",
        &manifest(&[]),
    );
    let recall = Recall::new(&project.root).unwrap();
    let text = call(&recall, "query_index", r#"{"query": "widget"}"#).unwrap();
    assert_eq!(str_field(&hits(&text)[0], "title"), "github");
    assert!(call(&recall, "query_code", r#"{"query": "widget"}"#).is_ok());
}

#[test]
fn tools_are_declared_as_the_reference_declares_them() {
    let project = Project::new("recall-decl");
    let recall = Recall::new(&project.root)
        .unwrap()
        .with_compat(Compat::Reference);
    let tools = recall.tools();
    assert_eq!(recall.server_name(), "agentteams-recall");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["query_index", "query_code"]);
    assert_eq!(
        json::to_string(&tools[1].input_schema),
        r#"{"type":"object","required":["query"],"properties":{"query":{"type":"string","minLength":1,"maxLength":500},"k":{"type":"integer","minimum":1,"maximum":20},"kind":{"type":"string","enum":["all","local","api","doc"]}}}"#
    );
    assert_eq!(
        tools[0].description,
        "Query the team's memory index (documents). Read-only; never refreshes."
    );
    assert_eq!(
        tools[1].description,
        "Query the team's code and API index. Read-only; never refreshes."
    );
}

/// By default the declarations teach within the catalogue's budget (1 KiB a tool): every
/// argument described with an example, optional ones with their default, and the result's schema;
/// the validation keywords stay the reference's.
#[test]
fn the_product_declarations_teach_within_a_kibibyte_a_tool() {
    let project = Project::new("recall-decl-product");
    let recall = Recall::new(&project.root).unwrap();
    let reference = Recall::new(&project.root)
        .unwrap()
        .with_compat(Compat::Reference)
        .tools();
    let tools = recall.tools();
    let mut bytes = 0;
    for (tool, plain) in tools.iter().zip(&reference) {
        assert!(tool.description.contains("Use it"), "{}", tool.description);
        assert!(tool.output_schema.is_some(), "{}", tool.name);
        let properties = tool.input_schema.get("properties").expect("properties");
        let Value::Object(properties) = properties else {
            panic!("{properties:?}")
        };
        for (name, property) in properties.iter() {
            let text = property.get("description").and_then(Value::as_str);
            assert!(text.is_some_and(|t| t.contains("e.g. ")), "{name}");
            assert_eq!(property.get("default").is_some(), name != "query", "{name}");
            let plain = plain
                .input_schema
                .get("properties")
                .and_then(|p| p.get(name));
            for keyword in [
                "type",
                "minimum",
                "maximum",
                "minLength",
                "maxLength",
                "enum",
            ] {
                assert_eq!(
                    property.get(keyword),
                    plain.and_then(|p| p.get(keyword)),
                    "{name}"
                );
            }
        }
        // As tools/list sends it from 2025-06-18: name, title, description, both schemas and
        // the four annotations (about 100 bytes).
        bytes += 100
            + json::to_string(&tool.input_schema).len()
            + json::to_string(tool.output_schema.as_ref().unwrap()).len()
            + tool.description.len()
            + tool.name.len()
            + tool.title.as_deref().map_or(0, str::len);
    }
    assert!(bytes <= 1024 * tools.len(), "{bytes} bytes");
}

#[test]
fn a_manifest_may_list_at_most_max_partitions() {
    use agentteams_mcp_servers::recall::MAX_PARTITIONS;
    let project = Project::new("recall-many");
    let names: Vec<String> = (0..=MAX_PARTITIONS).map(|i| format!("p{i}")).collect();
    let entries: Vec<(&str, &str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "missing.json", "local-script"))
        .collect();
    project.write(
        "references/code-index/manifest.json",
        &manifest(&entries[..MAX_PARTITIONS]),
    );
    let recall = Recall::new(&project.root).unwrap();
    assert!(call(&recall, "query_code", r#"{"query": "x"}"#).is_ok());
    project.write("references/code-index/manifest.json", &manifest(&entries));
    let err = call(&recall, "query_code", r#"{"query": "x"}"#).unwrap_err();
    assert!(
        err.ends_with(&format!(
            "lists {} partitions, more than the limit of {MAX_PARTITIONS}",
            MAX_PARTITIONS + 1
        )),
        "{err}"
    );
}

#[test]
fn symlink_chains_resolve_up_to_the_hop_limit() {
    use agentteams_mcp_servers::corpus::teamdir::MAX_SYMLINK_HOPS;
    let project = widget_project();
    // link0 -> link1 -> ... -> link{n-1} -> references: n hops.
    let chain = |n: usize, tag: &str| {
        for i in 0..n {
            let target = if i + 1 == n {
                project.path("references")
            } else {
                project.path(&format!("{tag}{}", i + 1))
            };
            std::os::unix::fs::symlink(target, project.path(&format!("{tag}{i}"))).unwrap();
        }
        project.path(&format!("{tag}0/memory-index.json"))
    };
    let recall = Recall::new(&project.root).unwrap();
    let within = chain(MAX_SYMLINK_HOPS, "ok");
    assert!(agentteams_mcp_servers::corpus::teamdir::confine(&project.root, &within).is_ok());
    let beyond = chain(MAX_SYMLINK_HOPS + 1, "far");
    assert_eq!(
        agentteams_mcp_servers::corpus::teamdir::confine(&project.root, &beyond).unwrap_err(),
        "memory-index.json resolves outside the project; refusing"
    );
    assert!(call(&recall, "query_index", r#"{"query": "widget"}"#).is_ok());
}

#[test]
fn partitions_beyond_the_cache_budget_are_read_one_at_a_time_and_only_they_again() {
    use agentteams_mcp_servers::recall::load::{decode, IndexKind};
    let project = Project::new("recall-budget");
    let mut listed = Vec::new();
    for p in 0..10 {
        let docs = format!(
            r#"[{{"doc_id": 0, "path": "p{p}/m.py", "source_kind": "local-script", "symbol": null,
                "title": "m", "length": 2, "snippet": "def widget", "passages": ["def widget_{p}"],
                "source_mtime": 0}}]"#
        );
        let tf = p % 3 + 1;
        let text = partition(
            "local-script",
            &format!("2026-10-07T12:34:5{p}Z"),
            &docs,
            &format!(r#"{{"widget": [{{"doc_id": 0, "tf": {tf}}}]}}"#),
            1,
            2.0,
        );
        project.write(&format!("references/code-index/p{p}.json"), &text);
        listed.push((format!("p{p}"), format!("p{p}.json"), text));
    }
    let entries: Vec<(&str, &str, &str)> = listed
        .iter()
        .map(|(name, file, _)| (name.as_str(), file.as_str(), "local-script"))
        .collect();
    let manifest_text = manifest(&entries);
    project.write("references/code-index/manifest.json", &manifest_text);
    let resident = |text: &str| {
        decode(text.as_bytes(), IndexKind::Code, "f.json")
            .unwrap()
            .resident_bytes() as u64
    };
    // Room for the manifest and four and a half partitions.
    let budget = resident(&manifest_text) + resident(&listed[0].2) * 9 / 2;
    let query = r#"{"query": "widget", "k": 20}"#;
    let unbounded = Recall::new(&project.root).unwrap();
    let expected = call(&unbounded, "query_code", query).unwrap();
    assert_eq!(hits(&expected).len(), 10);
    assert!(expected.contains("2026-10-07T12:34:59Z"), "{expected}");
    assert_eq!(unbounded.files_read(), 11);
    call(&unbounded, "query_code", query).unwrap();
    assert_eq!(unbounded.files_read(), 11);

    let bounded = Recall::with_cache_budget(&project.root, budget).unwrap();
    for round in 1..=3 {
        assert_eq!(call(&bounded, "query_code", query).unwrap(), expected);
        // The first query reads everything and keeps what fits (the manifest and four
        // partitions); later ones re-read only the six that did not fit, never all ten.
        assert_eq!(bounded.files_read(), 11 + 6 * (round - 1), "round {round}");
    }
    // Another tool call is another query: its file may push out the code files to make room.
    project.write(
        "references/memory-index.json",
        &memory_index("[]", "{}", 0, 0.0),
    );
    call(&bounded, "query_index", query).unwrap();
    assert_eq!(bounded.files_read(), 11 + 6 * 2 + 1);
}
