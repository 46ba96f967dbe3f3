//! recall's memory against the bytes of the index files it holds, through the binary under an
//! address-space limit (`ulimit -v`): index shapes chosen to inflate once loaded must be served
//! within three times their size (SECURITY.md, recall, "Bounded"; the figures per shape:
//! `bench/recall/memory_shapes.py`).

mod recall_support;

use agentteams_mcp::json::Value;
use recall_support::{manifest, memory_index, partition, reply, session};
use recall_support::{run_in_memory_limit, run_one_at_a_time_in_memory_limit};
use recall_support::{str_field, Project};

/// What the process may map besides three times the index: the binary and its stacks (an empty
/// index is served within 16 MiB), and the allocator's arena for the thread that runs calls
/// (glibc reserves 64 MiB of address space for each).
const BASE_KIB: u64 = 96 * 1024;

/// Bytes of the index files under the project's `references/`.
fn index_bytes(project: &Project) -> u64 {
    let mut bytes = 0;
    let mut pending = vec![project.path("references")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                bytes += meta.len();
            }
        }
    }
    bytes
}

/// Each call's result in a finished session of `calls`.
fn results(output: &std::process::Output, calls: usize) -> Vec<Value> {
    (0..calls as u64)
        .map(|i| {
            let reply = reply(output, i + 2);
            reply
                .get("result")
                .cloned()
                .unwrap_or_else(|| panic!("{reply}"))
        })
        .collect()
}

/// Serves `calls` under `BASE_KIB` plus three times the bytes of the index files under the
/// project's `references/`, and returns each call's result.
fn serve_within_three_times(project: &Project, calls: &[(&str, &str)]) -> Vec<Value> {
    let limit_kib = BASE_KIB + 3 * index_bytes(project) / 1024;
    let output = run_in_memory_limit(
        limit_kib,
        &["--serve-mcp", "recall"],
        &project.root,
        &session(calls),
    );
    results(&output, calls.len())
}

/// [`serve_within_three_times`], each call sent once the one before it is answered (so the
/// stdio server runs them on either of its threads, as a client waiting for each answer
/// has them run), and the index's bytes and the process's peak resident memory in bytes.
fn serve_one_at_a_time_within_three_times(
    project: &Project,
    calls: &[(&str, &str)],
) -> (Vec<Value>, u64, u64) {
    let bytes = index_bytes(project);
    let (output, peak_kib) = run_one_at_a_time_in_memory_limit(
        BASE_KIB + 3 * bytes / 1024,
        &["--serve-mcp", "recall"],
        &project.root,
        &session(calls),
    );
    assert!(peak_kib > 0, "no peak resident memory read");
    (results(&output, calls.len()), bytes, peak_kib * 1024)
}

fn hit_paths(result: &Value) -> Vec<String> {
    let (text, is_error) = recall_support::result_text(result);
    assert!(!is_error, "{text}");
    recall_support::hits(&text)
        .iter()
        .map(|h| str_field(h, "path").to_owned())
        .collect()
}

/// `count` documents whose paragraphs are `per_document` copies of `paragraph` (after the first
/// document's `widget` paragraph), and one posting for `widget`.
fn inflating_documents(count: usize, per_document: usize, paragraph: &str) -> String {
    let filler = vec![paragraph; per_document].join(",");
    let documents: Vec<String> = (0..count)
        .map(|i| {
            let first = if i == 0 { r#""widget here","# } else { "" };
            format!(
                r#"{{"doc_id":{i},"path":"d{i}.md","title":"t","length":2,"snippet":"s","paragraphs":[{first}{filler}],"source_mtime":0}}"#
            )
        })
        .collect();
    memory_index(
        &format!("[{}]", documents.join(",")),
        r#"{"widget": [{"doc_id": 0, "tf": 1}]}"#,
        count,
        2.0,
    )
}

#[test]
fn memory_indexes_of_inflating_shapes_are_served_within_three_times_their_bytes() {
    // 80,000 empty paragraphs a document: a `String` each took about 12 times the file (a
    // 119 MiB index, 1.4 GB); one-space paragraphs 17 times. Past `MAX_MEMBER_TOKENS` tokens
    // a document was parsed as a tree (up to 32 MiB of file), a `Value` per paragraph.
    for (documents, paragraphs, paragraph) in [
        (80, 80_000, r#""""#),
        (80, 80_000, r#"" ""#),
        (3, 2_000_000, r#""""#),
    ] {
        let project = Project::new("recall-memory-paragraphs");
        project.write(
            "references/memory-index.json",
            &inflating_documents(documents, paragraphs, paragraph),
        );
        let results = serve_within_three_times(
            &project,
            &[
                ("query_index", r#"{"query": "widget"}"#),
                ("query_index", r#"{"query": "widget"}"#),
            ],
        );
        for result in &results {
            assert_eq!(hit_paths(result), ["d0.md"]);
        }
    }
}

#[test]
fn code_partitions_that_inflate_are_not_all_held_at_once() {
    // The finding: 30 partitions (151 MiB) of documents with many empty passages took the server
    // to 1.6 GB, every partition held at once and, past 16, re-parsed on every query.
    let project = Project::new("recall-memory-partitions");
    let filler = vec![r#""""#; 40_000].join(",");
    let mut listed = Vec::new();
    for p in 0..30 {
        let documents: Vec<String> = (0..10)
            .map(|d| {
                format!(
                    r#"{{"doc_id": {d}, "path": "p{p}/m{d}.py", "source_kind": "local-script", "symbol": "f{d}", "title": "m{d}", "length": 2, "snippet": "def f", "passages": ["def widget_{p}", {filler}], "source_mtime": 0}}"#
                )
            })
            .collect();
        project.write(
            &format!("references/code-index/p{p}.json"),
            &partition(
                "local-script",
                "2026-10-07T12:34:56Z",
                &format!("[{}]", documents.join(",")),
                r#"{"widget": [{"doc_id": 3, "tf": 1}]}"#,
                10,
                2.0,
            ),
        );
        listed.push((format!("p{p}"), format!("p{p}.json")));
    }
    let entries: Vec<(&str, &str, &str)> = listed
        .iter()
        .map(|(name, file)| (name.as_str(), file.as_str(), "local-script"))
        .collect();
    project.write("references/code-index/manifest.json", &manifest(&entries));
    let query = ("query_code", r#"{"query": "widget", "k": 20}"#);
    let results = serve_within_three_times(&project, &[query, query]);
    for result in &results {
        let paths = hit_paths(result);
        assert_eq!(paths.len(), 20);
        assert!(paths.iter().all(|p| p.ends_with("/m3.py")), "{paths:?}");
    }
}

/// The most resident memory serving a file the tree path refuses may peak at, in percent of the
/// index's bytes, plus [`TREE_PEAK_BASE`]: the file's bytes and what the budget admits before
/// refusing, held once. Measured with these 24 MiB files: 1.95 to 2.5 times; 3.5 to 3.7 times
/// in the runs where the stdio server's two threads each kept what their loads freed, before
/// loads had a thread of their own, and 3.4 times for `postings` in one process in eight to five
/// when that thread was a new one per load (the stdio server's second thread, allocating for the
/// first time, could take the last load's arena and what it held; `recall-load` in
/// `servers/src/recall/load.rs` says how). `bench/recall/memory_shapes.py` measures these shapes.
const TREE_PEAK_PERCENT: u64 = 250;

/// What the process holds besides (an empty index is served in 5 MiB).
const TREE_PEAK_BASE: u64 = 16 << 20;

/// `item` repeated, comma-separated, to about `bytes` bytes.
fn repeated(item: &str, bytes: usize) -> String {
    vec![item; bytes / (item.len() + 1)].join(",")
}

/// A file the streaming path declines (`MAX_MEMBER_TOKENS`, a repeated key) and the tree path
/// accepts (a repeated key counts once, the last: the shadowed value is never validated), so it
/// is parsed whole, up to `MAX_TREE_INDEX_BYTES`. Past the tree budget (150% of the file,
/// `TREE_BUDGET_PERCENT_OF_FILE`, plus `TREE_BUDGET_FLOOR_BYTES`) it must be refused with an
/// error naming the file and the limit, before the tree outgrows it, and the server answers the
/// next call too; within it, served as before. The files
/// are 24 MiB (under `MAX_TREE_INDEX_BYTES`): with less than about 140 MiB of address space
/// glibc may fail to reserve the calling thread's 64 MiB arena (it maps 128 MiB to align it) and
/// then maps a page per allocation, which no budget in bytes can answer for.
#[test]
fn files_parsed_whole_are_refused_past_the_tree_budget_and_served_within_it() {
    const MIB: usize = 1024 * 1024;
    let documents = r#"[{"doc_id":0,"path":"d0.md","title":"t","length":2,"snippet":"s","paragraphs":["widget here"],"source_mtime":0}]"#;
    let posting = r#"{"widget": [{"doc_id": 0, "tf": 1}]}"#;
    // A shadowed `framework` (the later `"framework": "f"` counts) of the most inflating shapes:
    // a `Value` (32 bytes) per two or three bytes of file, a map entry (56 bytes) and a key per
    // seven.
    let shadowed = |junk: String| {
        memory_index(documents, posting, 1, 2.0).replacen(
            '{',
            &format!(r#"{{"framework": {junk}, "#),
            1,
        )
    };
    let mut refused = vec![
        (
            "numbers",
            shadowed(format!("[{}]", repeated("0", 24 * MIB))),
        ),
        (
            "empty arrays",
            shadowed(format!("[{}]", repeated("[]", 24 * MIB))),
        ),
        (
            "empty objects",
            shadowed(format!("{{{}}}", repeated(r#""a":{}"#, 24 * MIB))),
        ),
        (
            "short strings",
            shadowed(format!("[{}]", repeated(r#""a""#, 24 * MIB))),
        ),
    ];
    // The common layout with a repeated key in every posting: a tree of about ten bytes per byte.
    let postings = format!(
        r#"{{"widget": [{}]}}"#,
        repeated(r#"{"doc_id":0,"doc_id":0,"tf":1}"#, 24 * MIB)
    );
    refused.push(("postings", memory_index(documents, &postings, 1, 2.0)));
    let query = ("query_index", r#"{"query": "widget"}"#);
    for (shape, text) in &refused {
        let project = Project::new("recall-memory-tree");
        project.write("references/memory-index.json", text);
        let (results, bytes, peak) =
            serve_one_at_a_time_within_three_times(&project, &[query, query, query]);
        for result in results {
            let (text, is_error) = recall_support::result_text(&result);
            assert!(is_error, "{shape}: {text}");
            assert!(
                text.contains("memory-index.json") && text.contains("TREE_BUDGET"),
                "{shape}: {text}"
            );
        }
        // What a refusal leaves is taken again by the next one, whichever stdio thread runs it.
        assert!(
            peak <= TREE_PEAK_PERCENT * bytes / 100 + TREE_PEAK_BASE,
            "{shape}: peak resident memory {} MiB for {} MiB of index",
            peak >> 20,
            bytes >> 20
        );
    }
    // A code partition: the same refusal, naming the partition's file.
    let project = Project::new("recall-memory-tree-code");
    let code_documents = r#"[{"doc_id": 0, "path": "m.py", "source_kind": "local-script", "symbol": "f", "title": "m", "length": 2, "snippet": "def f", "passages": ["def widget"], "source_mtime": 0}]"#;
    let text = partition(
        "local-script",
        "2026-10-07T12:34:56Z",
        code_documents,
        posting,
        1,
        2.0,
    )
    .replacen(
        '{',
        &format!(r#"{{"N": [{}], "#, repeated("[]", 24 * MIB)),
        1,
    );
    project.write("references/code-index/p.json", &text);
    project.write(
        "references/code-index/manifest.json",
        &manifest(&[("p", "p.json", "local-script")]),
    );
    let code_query = ("query_code", r#"{"query": "widget"}"#);
    for result in serve_within_three_times(&project, &[code_query, code_query]) {
        let (text, is_error) = recall_support::result_text(&result);
        assert!(
            is_error && text.contains("p.json") && text.contains("TREE_BUDGET"),
            "{text}"
        );
    }
    // Within the budget, a file parsed whole is served as before: long paragraphs (a tree about
    // the size of the file) with a repeated `N`, and a small file of any shape.
    let project = Project::new("recall-memory-tree-long");
    let paragraph = format!(r#""widget {}""#, "x".repeat(1000));
    let long = format!(
        r#"[{{"doc_id":0,"path":"d0.md","title":"t","length":2,"snippet":"s","paragraphs":[{}],"source_mtime":0}}]"#,
        repeated(&paragraph, 24 * MIB)
    );
    project.write(
        "references/memory-index.json",
        &memory_index(&long, posting, 1, 2.0).replacen('{', r#"{"N": 1, "#, 1),
    );
    for result in serve_within_three_times(&project, &[query, query]) {
        assert_eq!(hit_paths(&result), ["d0.md"]);
    }
    let project = Project::new("recall-memory-tree-small");
    project.write(
        "references/memory-index.json",
        &shadowed(format!("[{}]", repeated("[]", 64 * 1024))),
    );
    for result in serve_within_three_times(&project, &[query, query]) {
        assert_eq!(hit_paths(&result), ["d0.md"]);
    }
}
