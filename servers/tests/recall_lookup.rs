//! The code-lookup sidecar (`references/code-lookup.bin`): answers through it are the whole
//! load's to the byte, it reads neither `local.json` nor the outline whole, and a sidecar that is
//! missing, planted, damaged, stale or lying is never trusted: the answer is the whole load's.

mod recall_support;

use agentteams_mcp_servers::corpus::lookup::{Lookup, LOOKUP_FILE};
use agentteams_mcp_servers::recall::Recall;
use recall_support::{hostile_sidecars, Project, Server};
use std::path::Path;

const SIDECAR: &str = "references/code-lookup.bin";
const LOCAL: &str = "references/code-index/local.json";
/// The sidecar's magic line, the two files' identities and their cuts.
const HEAD: usize = 30 + 2 * 64 + 2 * 32;

/// Words the generated files' definitions and bodies are made of.
const WORDS: [&str; 24] = [
    "parse", "widget", "session", "token", "retry", "upload", "cache", "config", "render",
    "socket", "buffer", "queue", "schema", "report", "tenant", "export", "reader", "writer",
    "signal", "thread", "lookup", "index", "stream", "header",
];

/// A project of 48 Python files whose definitions mix the words, with classes, methods, doc
/// comments, tests and examples, so queries rank many files and re-score with the outline.
fn project(tag: &str) -> Project {
    let project = Project::new(tag);
    let mut next = 0x2545_f491_u64;
    let mut pick = || {
        next ^= next << 13;
        next ^= next >> 7;
        next ^= next << 17;
        WORDS[(next % WORDS.len() as u64) as usize]
    };
    for i in 0..48 {
        let folder = ["src", "src/net", "tests", "examples"][i % 4];
        let (a, b, c) = (pick(), pick(), pick());
        let prefix = if folder == "tests" { "test_" } else { "" };
        let mut text = format!("import os\n\n\nclass {}{}:\n", capital(a), capital(b));
        text.push_str(&format!(
            "    \"\"\"Keeps the {a} {b} for every {c}.\"\"\"\n\n"
        ));
        for _ in 0..3 {
            let (m, n) = (pick(), pick());
            text.push_str(&format!(
                "    def {m}_{n}(self, {n}):\n        \"\"\"Sends the {m} to the {n} {c}.\"\"\"\n        return {n}\n\n"
            ));
        }
        text.push_str(&format!("\ndef {a}_{c}():\n    return \"{b} {c} {a}\"\n"));
        project.write(&format!("{folder}/{prefix}{a}_{b}_{i}.py"), &text);
    }
    assert!(project.index_build(&[]).status.success());
    project
}

fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_ascii_uppercase().to_string())
        + chars.as_str()
}

/// Questions of every shape: one word, several, an identifier, a derivational form, a plain word
/// with abbreviations and synonyms, tests and examples asked for, each kind, k from 1 to 20,
/// words the index lacks.
fn questions() -> Vec<String> {
    let mut questions = Vec::new();
    for (query, kind, k) in [
        ("parse", "all", 5),
        ("widget session", "local", 5),
        ("retry the upload", "all", 20),
        ("parse_token", "local", 3),
        ("parsing tokens", "all", 10),
        ("configuration", "local", 5),
        ("remove cached entries", "all", 7),
        ("delete buffer", "local", 1),
        ("test for the socket reader", "local", 8),
        ("example of rendering a report", "all", 6),
        ("TenantExport", "local", 4),
        ("schema", "api", 5),
        ("schema", "doc", 5),
        ("zzzz nothing matches", "all", 5),
        ("the", "all", 5),
        ("stream header signal thread lookup index queue", "all", 20),
        ("Keeps the widget", "local", 2),
    ] {
        questions.push(format!(
            r#"{{"query": "{query}", "kind": "{kind}", "k": {k}}}"#
        ));
    }
    questions
}

/// Every answer of a server started with `extra`, in order, as the host sees it.
fn answers(root: &Path, extra: &[&str]) -> Vec<String> {
    let mut server = Server::start_with(root, extra);
    let mut texts: Vec<String> = questions()
        .iter()
        .map(|q| server.call("query_code", q).1)
        .collect();
    texts.push(server.call("query_index", r#"{"query": "widget"}"#).1);
    texts
}

fn call(recall: &Recall, tool: &str, args: &str) -> String {
    recall_support::call(recall, tool, args).unwrap()
}

#[test]
fn answers_through_the_lookup_are_the_whole_loads_to_the_byte() {
    let project = project("lookup-equal");
    let root = &project.root;
    assert!(project.path(SIDECAR).is_file());
    let whole = answers(root, &["--lookup-from", "none"]);
    assert_eq!(answers(root, &["--lookup-from", "0"]), whole);
    // The default answers partitions this small by loading them whole, the same answers.
    assert_eq!(answers(root, &[]), whole);
    // Hits were found, with definitions named and lines given (the outline took part).
    assert!(whole[1].contains("\"symbol\": \"") && whole[1].contains("\"lines\""));
}

#[test]
fn the_lookup_reads_neither_the_partition_nor_the_outline_whole() {
    let project = project("lookup-reads");
    let root = &project.root;
    let local = r#"{"query": "widget session", "kind": "local"}"#;
    let through_lookup = Recall::new(root).unwrap().with_lookup_from(0);
    let whole = Recall::new(root).unwrap().with_lookup_from(u64::MAX);
    assert_eq!(
        call(&through_lookup, "query_code", local),
        call(&whole, "query_code", local)
    );
    // The whole load read the manifest, the two API partitions, local.json and the outline;
    // the lookup the first three.
    assert_eq!(whole.files_read(), 5);
    assert_eq!(through_lookup.files_read(), 3);
    // A second query reads nothing whole again.
    call(
        &through_lookup,
        "query_code",
        r#"{"query": "parse", "kind": "local"}"#,
    );
    assert_eq!(through_lookup.files_read(), 3);
}

#[test]
fn a_rebuilt_index_is_answered_from_its_new_lookup() {
    let project = project("lookup-rebuilt");
    let root = &project.root;
    let recall = Recall::new(root).unwrap().with_lookup_from(0);
    let query = r#"{"query": "sailboat", "kind": "local"}"#;
    assert!(call(&recall, "query_code", query).contains("\"hits\": []"));
    project.write(
        "src/boats.py",
        "def sailboat_rigging():\n    \"\"\"Rigs the sailboat.\"\"\"\n",
    );
    assert!(project.index_build(&[]).status.success());
    let after = call(&recall, "query_code", query);
    assert!(after.contains("boats.py"), "{after}");
    let whole = Recall::new(root).unwrap().with_lookup_from(u64::MAX);
    assert_eq!(after, call(&whole, "query_code", query));
    // Without the build cache the next build compares what it would write with local.json and
    // keeps the file: the lookup written beside it is bound to the kept file and answers alike.
    let local_before = std::fs::metadata(project.path(LOCAL))
        .unwrap()
        .modified()
        .unwrap();
    std::fs::remove_file(project.path("references/code-build-cache.bin")).unwrap();
    let out = project.index_build(&[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no partition changed"));
    let local_after = std::fs::metadata(project.path(LOCAL))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(local_before, local_after);
    let fresh = Recall::new(root).unwrap().with_lookup_from(0);
    assert_eq!(call(&fresh, "query_code", query), after);
    // The manifest and the two API partitions only: the lookup answered.
    assert_eq!(fresh.files_read(), 3);
    // Nothing changed but the lookup is gone (or is another build's): a build that would keep
    // every output writes it again, bound to the files it keeps.
    for planted in [None, Some(&b"agentteams-mcp code lookup 01\n"[..])] {
        match planted {
            None => std::fs::remove_file(project.path(SIDECAR)).unwrap(),
            Some(bytes) => std::fs::write(project.path(SIDECAR), bytes).unwrap(),
        }
        assert!(project.index_build(&[]).status.success());
        assert_eq!(
            std::fs::metadata(project.path(LOCAL))
                .unwrap()
                .modified()
                .unwrap(),
            local_after
        );
        let again = Recall::new(root).unwrap().with_lookup_from(0);
        assert_eq!(call(&again, "query_code", query), after);
        assert_eq!(again.files_read(), 3, "{planted:?}");
    }
}

/// The sidecar's bytes with one change, for the lying-sidecar cases.
fn rewritten(bytes: &[u8], at: usize, with: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[at..at + with.len()].copy_from_slice(with);
    bytes
}

#[test]
fn a_missing_planted_damaged_or_lying_lookup_gives_the_whole_loads_answers() {
    let project = project("lookup-hostile");
    let root = &project.root;
    let whole = answers(root, &["--lookup-from", "none"]);
    let good = std::fs::read(project.path(SIDECAR)).unwrap();
    let check = |label: &str| {
        assert_eq!(answers(root, &["--lookup-from", "0"]), whole, "{label}");
    };
    // Not ours, a link out, a FIFO, a directory, none at all (`hostile_sidecars`).
    hostile_sidecars(&project, SIDECAR, "lookup", || check("hostile stand-in"));
    // Every cut short of the whole, and garbage after it.
    for len in [0, 10, 40, 200, good.len() / 2, good.len() - 1] {
        std::fs::write(project.path(SIDECAR), &good[..len]).unwrap();
        check(&format!("cut to {len} bytes"));
    }
    let mut longer = good.clone();
    longer.extend_from_slice(b"more");
    std::fs::write(project.path(SIDECAR), &longer).unwrap();
    check("bytes after its end");
    // Bound to the files (its identities are theirs) but lying about where things are. Only a writer of the index's own files can make one: the answer
    // may then rank differently (a length it lies about is not read back), but every read stays
    // inside the files, and a part read that disagrees with it (a term list's term or length, a
    // document's id or length, its file's definitions) gives the whole load's answer. Every
    // field past the identities, in turn, moved by one.
    let fields = (good.len() - HEAD) / 4;
    for i in (0..fields).step_by((fields / 60).max(1)) {
        let at = HEAD + 4 * i;
        let value = u32::from_le_bytes(good[at..at + 4].try_into().unwrap());
        let lie = rewritten(&good, at, &value.wrapping_add(1).to_le_bytes());
        std::fs::write(project.path(SIDECAR), &lie).unwrap();
        let mut server = Server::start_with(root, &["--lookup-from", "0"]);
        for question in questions() {
            let (is_error, text) = server.call("query_code", &question);
            assert!(!is_error, "field at {at}: {text}");
        }
    }
    // A sidecar of the right form for other files (the index rebuilt since, or copied in from
    // another checkout): bound to identities these files do not have.
    std::fs::write(project.path(SIDECAR), &good).unwrap();
    let local = std::fs::read(project.path(LOCAL)).unwrap();
    std::fs::write(project.path(LOCAL), &local).unwrap();
    check("local.json rewritten with the same bytes");
    // The validator refuses what the tests above plant by hand (the product's own reader).
    assert!(Lookup::parse(good.clone()).is_ok());
    assert!(Lookup::parse(good[..good.len() - 1].to_vec()).is_err());
    assert_eq!(LOOKUP_FILE, "code-lookup.bin");
}
