//! Arbitrary query text (and `k`, `kind`) to recall's two tools, in the default ranking and under
//! `--compat reference`, over indexes `index build` wrote for a small project made at start: a
//! Python module with a class, methods and docstrings, a Go file with methods, a test file and a
//! Markdown guide with sections. The query is the one input a client controls here: the default
//! ranking stems it, looks its words' variants and abbreviations up among the index's terms,
//! reads identifiers as written and asks the outline's definition tables. Nothing may panic or
//! hang; an answer holds at most `k` hits, each with a path inside the project; a refused query
//! gets the tool's message.
#![no_main]

use agentteams_mcp::json::{Map, Value};
use agentteams_mcp::server::{CallContext, CancelToken, ToolOutput, ToolSet};
use agentteams_mcp_servers::index::{build, Options};
use agentteams_mcp_servers::recall::Recall;
use agentteams_mcp_servers::Compat;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

const FILES: &[(&str, &str)] = &[
    (
        "pkg/session.py",
        "\"\"\"Sessions keep cookies and connection pools between requests.\"\"\"\n\n\
         class Session:\n    \"\"\"A user session.\"\"\"\n\n\
         \x20   def request(self, method, url, timeout=None):\n        \"\"\"Sends one request; retries on connection failure.\"\"\"\n        return self.send(method, url)\n\n\
         \x20   def merge_environment_settings(self, env):\n        \"\"\"Merges the proxy environment.\"\"\"\n        return env\n\n\
         def init_documentation(doc, cfg):\n    return doc\n",
    ),
    (
        "pkg/mux.go",
        "package pkg\n\n// Mux routes requests to handlers by path pattern.\ntype Mux struct{ routes []string }\n\n\
         // Handle registers a handler for a pattern.\nfunc (m *Mux) Handle(pattern string) { m.routes = append(m.routes, pattern) }\n\n\
         // ServeHTTP dispatches the request to the handler whose pattern matches.\nfunc (m *Mux) ServeHTTP() {}\n",
    ),
    (
        "tests/test_session.py",
        "from pkg.session import Session\n\ndef test_request_retries():\n    assert Session().request('GET', 'u')\n",
    ),
    (
        "docs/guide.md",
        "# Guide\n\nHow the pieces fit.\n\n## Sessions\n\nA session keeps cookies.\n\n## Routing\n\nThe mux matches path patterns.\n",
    ),
];

struct Fixture {
    root: PathBuf,
    default: Recall,
    reference: Recall,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("recall-query-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in FILES {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let options = Options {
            root: root.clone(),
            team_dir: None,
            description: None,
            framework: None,
            python: None,
            git: Default::default(),
        };
        build(&options, &mut |_, _| {}).expect("the fixture's indexes build");
        let root = std::fs::canonicalize(&root).unwrap();
        Fixture {
            default: Recall::new(&root).unwrap(),
            reference: Recall::new(&root).unwrap().with_compat(Compat::Reference),
            root,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let (k, kind, query) = match data {
        [k, kind, rest @ ..] => (*k, *kind, String::from_utf8_lossy(rest)),
        _ => return,
    };
    let mut arguments = Map::new();
    arguments.insert("query", Value::from(query.as_ref()));
    // k from 0 to 24: the refused ends (0, above 20) included.
    let k = u64::from(k % 25);
    arguments.insert("k", Value::from(k));
    if let Some(kind) = ["all", "local", "api", "bogus"].get(usize::from(kind % 5)) {
        arguments.insert("kind", Value::from(*kind));
    }
    let ctx = CallContext::detached(CancelToken::new());
    for recall in [&fixture.default, &fixture.reference] {
        for tool in ["query_code", "query_index"] {
            match recall.call(tool, &arguments, &ctx) {
                Ok(ToolOutput::Value(value)) => {
                    let hits = value
                        .get("hits")
                        .and_then(Value::as_array)
                        .expect("an answer has hits");
                    assert!(hits.len() as u64 <= k, "{} hits for k={k}", hits.len());
                    for hit in hits.iter() {
                        if let Some(path) = hit.get("path").and_then(Value::as_str) {
                            let path = std::path::Path::new(path);
                            assert!(
                                path.is_relative() || path.starts_with(&fixture.root),
                                "a hit outside the project: {}",
                                path.display()
                            );
                        }
                    }
                }
                Ok(other) => panic!("recall answered {other:?}"),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
});
