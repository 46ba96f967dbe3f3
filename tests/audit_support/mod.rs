//! Helpers shared by the audit tests: a private temp directory and record accessors.

// Each test crate includes this module and uses only some of it.
#![allow(dead_code)]

use agentteams_mcp::json::{self, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh, empty directory under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentteams-audit-{name}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Member `key` of a record as a string.
pub fn str_of<'a>(record: &'a Value, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

/// Member `key` of a record as an unsigned integer.
pub fn u64_of(record: &Value, key: &str) -> Option<u64> {
    record.get(key).and_then(Value::as_u64)
}

/// Every record of the audit log at `path`, parsed, in order.
pub fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect()
}

/// A tool set for driving the engine: read-only tools, one that may change data without being
/// destructive, one destructive, and tools that fail, panic or take a constrained argument.
pub mod fixture {
    use agentteams_mcp::json::{self, obj, Map, Value};
    use agentteams_mcp::server::{
        Annotations, CallContext, Engine, Session, Tool, ToolError, ToolOutput, ToolSet,
    };
    use std::sync::Arc;

    pub struct Tools;

    pub const DESTRUCTIVE: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };

    pub const ADDITIVE: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

    /// The fixture's tools that declare no change to data, in their order: what a policy that
    /// refuses every tool that may change data still lists.
    pub const UNCHANGING_TOOLS: [&str; 6] = [
        "git_log",
        "git_show",
        "git_blame",
        "recall_search",
        "fail",
        "panic",
    ];

    fn object_schema() -> Value {
        json::parse(br#"{"type": "object"}"#).unwrap()
    }

    impl ToolSet for Tools {
        fn server_name(&self) -> &str {
            "agentteams-fixture"
        }
        fn tools(&self) -> Vec<Tool> {
            let counted = json::parse(
                br#"{"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}"#,
            )
            .unwrap();
            vec![
                Tool::read_only("git_log", "Read-only.", counted),
                Tool::read_only("git_show", "Read-only.", object_schema()),
                Tool::read_only("git_blame", "Read-only.", object_schema()),
                Tool::read_only("recall_search", "Read-only.", object_schema()),
                Tool::new("fs_write", "Destructive.", object_schema()).annotations(DESTRUCTIVE),
                Tool::new("fs_append", "Changes data.", object_schema()).annotations(ADDITIVE),
                Tool::read_only("fail", "Fails.", object_schema()),
                Tool::read_only("panic", "Panics.", object_schema()),
            ]
        }
        fn call(
            &self,
            name: &str,
            args: &Map,
            _ctx: &CallContext<'_>,
        ) -> Result<ToolOutput, ToolError> {
            match name {
                "fail" => Err(ToolError::new("it failed")),
                "panic" => panic!("the fixture panics on purpose"),
                _ => Ok(ToolOutput::Value(obj([
                    ("tool", Value::from(name)),
                    ("arguments", Value::Object(args.clone())),
                ]))),
            }
        }
    }

    /// A session over `engine`, initialized at revision 2025-06-18.
    pub fn session(engine: Engine) -> Session {
        let session = Session::new(Arc::new(engine));
        request(
            &session,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        session
    }

    pub fn engine() -> Engine {
        Engine::new(Arc::new(Tools))
    }

    /// Sends one request and returns its reply.
    pub fn request(session: &Session, message: &str) -> Value {
        session
            .handle_message(json::parse(message.as_bytes()).unwrap())
            .unwrap_or_else(|| panic!("no reply to {message}"))
    }

    /// `tools/call` of `tool` with `arguments` (JSON text), request id 7.
    pub fn call(session: &Session, tool: &str, arguments: &str) -> Value {
        request(
            session,
            &format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            ),
        )
    }

    /// The names `tools/list` shows.
    pub fn listed(session: &Session) -> Vec<String> {
        let reply = request(session, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        reply
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|t| t.get("name").and_then(Value::as_str).unwrap().to_owned())
            .collect()
    }

    /// The JSON-RPC error of a reply as (code, message); panics on a result.
    pub fn rpc_error(reply: &Value) -> (i64, String) {
        let error = reply
            .get("error")
            .unwrap_or_else(|| panic!("not an error: {reply}"));
        (
            error.get("code").and_then(Value::as_i64).unwrap(),
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned(),
        )
    }
}
