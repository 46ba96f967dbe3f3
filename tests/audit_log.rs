//! The audit log writer through the library API: the records of each path through a call, the
//! chain and canonical form, redaction and full mode, anchors, limits and concurrent runs.

use agentteams_mcp::audit::{
    self, record_hash, AuditError, AuditLog, Mode, RunInfo, GENESIS, MAX_KEPT_STRING_BYTES,
    MAX_RECORD_BYTES,
};
use agentteams_mcp::json::{self, obj, Value};
use agentteams_mcp::sha256;
use std::path::{Path, PathBuf};
mod audit_support;
use audit_support::{records, str_of, u64_of, TempDir};

fn info() -> RunInfo {
    RunInfo {
        server: "agentteams-test".into(),
        version: "0.1.0".into(),
        root: "/srv/project".into(),
        transport: "stdio".into(),
        policy: vec!["deny \"git_blame\" (--deny-tool)".into()],
    }
}

/// A log in a fresh directory: the directory (removed on drop), the file, the open log.
fn new_log(name: &str, mode: Mode) -> (TempDir, PathBuf, AuditLog) {
    let dir = TempDir::new(name);
    let path = dir.file("audit.log");
    let log = AuditLog::open(&path, &info(), mode).unwrap();
    (dir, path, log)
}

fn events(records: &[Value]) -> Vec<&str> {
    records
        .iter()
        .map(|r| str_of(r, "event").unwrap())
        .collect()
}

fn text_result(text: &str, is_error: bool) -> Value {
    obj([
        (
            "content",
            Value::from(vec![obj([("type", "text".into()), ("text", text.into())])]),
        ),
        ("isError", Value::from(is_error)),
    ])
}

/// Records are written with sorted members, so values compare in their sorted form.
fn assert_same(logged: Option<&Value>, expected: &Value) {
    assert_eq!(
        logged.map(json::to_string_sorted),
        Some(json::to_string_sorted(expected))
    );
}

fn assert_verifies_clean(path: &Path) {
    let report = audit::verify_file(path).unwrap();
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_completed_call_writes_the_five_records_of_a_chain() {
    let (_dir, path, log) = new_log("complete", Mode::Redacted);
    let args = obj([("path", "src/main.rs".into())]);
    let mut call = log
        .call_requested(None, Some(&Value::from(7u64)), "git_log", &args)
        .unwrap();
    assert_eq!(call.number(), 1);
    call.started().unwrap();
    let result = text_result("commit abc", false);
    call.finished(&result).unwrap();
    let head = log.complete_run().unwrap();

    let recs = records(&path);
    assert_eq!(
        events(&recs),
        [
            "run_started",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_completed",
            "run_completed"
        ]
    );
    let mut prev = GENESIS.to_owned();
    for (seq, rec) in recs.iter().enumerate() {
        assert_eq!(u64_of(rec, "v"), Some(1));
        assert_eq!(str_of(rec, "run"), Some(log.run_id()));
        assert_eq!(u64_of(rec, "seq"), Some(seq as u64));
        assert_eq!(str_of(rec, "prev"), Some(prev.as_str()));
        let hash = str_of(rec, "hash").unwrap();
        assert_eq!(hash, record_hash(rec.as_object().unwrap()));
        let time = str_of(rec, "time").unwrap();
        assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
        prev = hash.to_owned();
    }
    assert_eq!(head, prev);
    assert_eq!(log.head(), prev);

    let started = &recs[0];
    assert_eq!(str_of(started, "server"), Some("agentteams-test"));
    assert_eq!(str_of(started, "version"), Some("0.1.0"));
    assert_eq!(str_of(started, "root"), Some("/srv/project"));
    assert_eq!(str_of(started, "transport"), Some("stdio"));
    assert_eq!(u64_of(started, "pid"), Some(u64::from(std::process::id())));
    assert_eq!(str_of(started, "mode"), Some("redacted"));
    assert_eq!(started.get("anchor"), Some(&Value::Null));
    assert_eq!(
        started.get("policy"),
        Some(&Value::from(vec![Value::from(
            "deny \"git_blame\" (--deny-tool)"
        )]))
    );

    let requested = &recs[1];
    assert_eq!(u64_of(requested, "call"), Some(1));
    assert_eq!(str_of(requested, "tool"), Some("git_log"));
    assert_eq!(u64_of(requested, "request_id"), Some(7));
    assert_same(requested.get("arguments"), &args);
    assert!(requested.get("session").is_none());

    let completed = &recs[3];
    let output = json::to_string(&result);
    assert_eq!(u64_of(completed, "output_bytes"), Some(output.len() as u64));
    assert_eq!(
        str_of(completed, "output_sha256"),
        Some(sha256::hex_digest(output.as_bytes()).as_str())
    );
    assert!(u64_of(completed, "duration_us").is_some());
    assert_same(completed.get("result"), &result);

    let done = &recs[4];
    assert_eq!(u64_of(done, "calls"), Some(1));
    assert_eq!(u64_of(done, "blocked"), Some(0));
    assert_eq!(u64_of(done, "failed"), Some(0));
    assert_verifies_clean(&path);
}

#[test]
fn lines_are_the_canonical_form_and_the_hash_covers_it() {
    let (_dir, path, log) = new_log("canonical", Mode::Full);
    let args =
        json::parse(r#"{"z":[1.5,-0.0,1e300,12345678901234567890123],"é":"\u0001\n"}"#.as_bytes())
            .unwrap();
    log.call_requested(None, None, "t", &args)
        .unwrap()
        .blocked("r")
        .unwrap();
    log.complete_run().unwrap();
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        let value = json::parse(line.as_bytes()).unwrap();
        assert_eq!(json::to_string_sorted(&value), line);
        let mut without = value.as_object().unwrap().clone();
        let hash = without.remove("hash").unwrap();
        assert_eq!(
            hash.as_str().unwrap(),
            sha256::hex_digest(json::to_string_sorted(&Value::Object(without)).as_bytes())
        );
    }
    assert_verifies_clean(&path);
}

#[test]
fn a_blocked_call_names_the_rule_and_is_counted() {
    let (_dir, path, log) = new_log("blocked", Mode::Redacted);
    let call = log
        .call_requested(None, Some(&Value::from("req-1")), "git_blame", &empty())
        .unwrap();
    call.blocked("rule deny \"git_blame\" (--deny-tool)")
        .unwrap();
    log.complete_run().unwrap();
    let recs = records(&path);
    assert_eq!(
        events(&recs),
        [
            "run_started",
            "tool_call_requested",
            "tool_call_blocked",
            "run_completed"
        ]
    );
    assert_eq!(
        str_of(&recs[2], "rule"),
        Some("rule deny \"git_blame\" (--deny-tool)")
    );
    assert_eq!(u64_of(&recs[2], "call"), Some(1));
    assert_eq!(u64_of(&recs[3], "blocked"), Some(1));
    assert_eq!(u64_of(&recs[3], "calls"), Some(1));
    assert_verifies_clean(&path);
}

#[test]
fn failures_tool_errors_rpc_errors_and_abandoned_calls() {
    let (_dir, path, log) = new_log("failed", Mode::Redacted);

    let mut call = log
        .call_requested(None, None, "git_show", &empty())
        .unwrap();
    call.started().unwrap();
    call.finished(&text_result("rev must be a plain revision", true))
        .unwrap();

    let call = log.call_requested(None, None, "nope", &empty()).unwrap();
    call.rejected(-32602, "unknown tool: nope").unwrap();

    let mut call = log.call_requested(None, None, "git_log", &empty()).unwrap();
    call.started().unwrap();
    drop(call);

    log.complete_run().unwrap();
    let recs = records(&path);
    assert_eq!(
        events(&recs),
        [
            "run_started",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_failed",
            "tool_call_requested",
            "tool_call_failed",
            "tool_call_requested",
            "tool_call_started",
            "tool_call_failed",
            "run_completed"
        ]
    );
    assert_eq!(
        recs[3].get("result").and_then(|r| r.get("isError")),
        Some(&Value::Bool(true))
    );
    let error = obj([
        ("code", Value::from(-32602i64)),
        ("message", "unknown tool: nope".into()),
    ]);
    assert_eq!(recs[5].get("error"), Some(&error));
    assert_eq!(u64_of(&recs[5], "duration_us"), Some(0));
    assert_eq!(
        u64_of(&recs[5], "output_bytes"),
        Some(json::to_string(&error).len() as u64)
    );
    assert_eq!(
        recs[8]
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str),
        Some("the call ended without an outcome")
    );
    assert_eq!(u64_of(&recs[8], "call"), Some(3));
    assert_eq!(u64_of(&recs[9], "failed"), Some(3));
    assert_verifies_clean(&path);
}

#[test]
fn http_sessions_are_named_by_digest_unless_full() {
    let dir = TempDir::new("session");
    for (mode, expected) in [
        (
            Mode::Redacted,
            format!("sha256:{}", &sha256::hex_digest(b"sess-42")[..16]),
        ),
        (Mode::Full, "sess-42".to_owned()),
    ] {
        let path = dir.file(&format!("{mode:?}.log"));
        let log = AuditLog::open(&path, &info(), mode).unwrap();
        let mut call = log
            .call_requested(Some("sess-42"), None, "t", &empty())
            .unwrap();
        call.started().unwrap();
        call.finished(&text_result("ok", false)).unwrap();
        let recs = records(&path);
        for rec in &recs[1..] {
            assert_eq!(str_of(rec, "session"), Some(expected.as_str()));
        }
    }
}

#[test]
fn redacted_mode_keeps_no_secret_and_summarises_long_output() {
    let dir = TempDir::new("redact");
    let long = "line of output\n".repeat(100);
    let args = obj([
        ("query", "Bearer abcdefghijklmnopqrstuvwxyz".into()),
        ("api_key", "k-123456".into()),
        ("path", "README.md".into()),
    ]);
    let result = text_result(&long, false);

    let path = dir.file("redacted.log");
    let log = AuditLog::open(&path, &info(), Mode::Redacted).unwrap();
    let mut call = log.call_requested(None, None, "t", &args).unwrap();
    call.started().unwrap();
    call.finished(&result).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("abcdefghijklmnopqrstuvwxyz"));
    assert!(!text.contains("k-123456"));
    assert!(!text.contains("line of output"));
    let recs = records(&path);
    let logged_args = recs[1].get("arguments").unwrap();
    assert_eq!(str_of(logged_args, "query"), Some("<redacted>"));
    assert_eq!(str_of(logged_args, "api_key"), Some("<redacted>"));
    assert_eq!(str_of(logged_args, "path"), Some("README.md"));
    let logged_text = recs[3]
        .get("result")
        .and_then(|r| r.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|c| c[0].get("text"))
        .unwrap();
    assert!(long.len() > MAX_KEPT_STRING_BYTES);
    assert_eq!(
        logged_text,
        &obj([
            ("elided_bytes", Value::from(long.len())),
            ("sha256", sha256::hex_digest(long.as_bytes()).into())
        ])
    );

    let path = dir.file("full.log");
    let log = AuditLog::open(&path, &info(), Mode::Full).unwrap();
    let mut call = log.call_requested(None, None, "t", &args).unwrap();
    call.started().unwrap();
    call.finished(&result).unwrap();
    let recs = records(&path);
    assert_eq!(str_of(&recs[0], "mode"), Some("full"));
    assert_same(recs[1].get("arguments"), &args);
    assert_same(recs[3].get("result"), &result);
}

#[test]
fn records_stay_under_the_size_limit_even_in_full_mode() {
    let (_dir, path, log) = new_log("limit", Mode::Full);
    let big = "x".repeat(MAX_RECORD_BYTES);
    let args = obj([("blob", big.as_str().into())]);
    let mut call = log.call_requested(None, None, "t", &args).unwrap();
    call.started().unwrap();
    // A result just under the limit is kept whole.
    let near = "y".repeat(MAX_RECORD_BYTES - 2048);
    call.finished(&text_result(&near, false)).unwrap();
    log.complete_run().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    for line in text.lines() {
        assert!(line.len() < MAX_RECORD_BYTES, "{}", line.len());
    }
    let recs = records(&path);
    assert_eq!(
        recs[1].get("arguments"),
        Some(&audit::summary(&args)),
        "arguments over the limit are summarised"
    );
    assert!(text.contains(&near), "a result under the limit is kept");
    assert_verifies_clean(&path);
}

#[test]
fn nothing_is_written_after_run_completed() {
    let (_dir, path, log) = new_log("after", Mode::Redacted);
    log.complete_run().unwrap();
    let err = log.call_requested(None, None, "t", &empty()).err().unwrap();
    assert!(matches!(err, AuditError::RunCompleted { .. }));
    assert!(err.to_string().ends_with("the run is already completed"));
    assert!(log.complete_run().is_err());
    assert_eq!(records(&path).len(), 2);
}

#[test]
fn a_new_run_anchors_on_the_last_record_in_the_file() {
    let dir = TempDir::new("anchor");
    let path = dir.file("audit.log");
    let first = AuditLog::open(&path, &info(), Mode::Redacted).unwrap();
    let head = first.complete_run().unwrap();
    let second = AuditLog::open(&path, &info(), Mode::Redacted).unwrap();
    assert_ne!(first.run_id(), second.run_id());
    let recs = records(&path);
    assert_eq!(str_of(&recs[2], "anchor"), Some(head.as_str()));
    second.complete_run().unwrap();
    assert_verifies_clean(&path);
}

#[test]
fn an_unwritable_log_is_an_error_at_open() {
    let dir = TempDir::new("unwritable");
    let err = AuditLog::open(&dir.file("missing/audit.log"), &info(), Mode::Redacted).unwrap_err();
    assert!(err.to_string().starts_with("audit log "), "{err}");
    if Path::new("/dev/full").exists() {
        let err = AuditLog::open(Path::new("/dev/full"), &info(), Mode::Redacted).unwrap_err();
        assert!(matches!(err, AuditError::Io { .. }), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn the_log_file_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("mode");
    let path = dir.file("audit.log");
    AuditLog::open(&path, &info(), Mode::Redacted).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn concurrent_runs_on_one_file_keep_whole_records_and_intact_chains() {
    const RUNS: usize = 4;
    const CALLS: usize = 40;
    let dir = TempDir::new("concurrent");
    let path = dir.file("audit.log");
    std::thread::scope(|scope| {
        for _ in 0..RUNS {
            scope.spawn(|| {
                // Each run opens the file itself, as separate processes would.
                let log = AuditLog::open(&path, &info(), Mode::Full).unwrap();
                for i in 0..CALLS {
                    let args = obj([("i", Value::from(i)), ("pad", "p".repeat(i * 50).into())]);
                    let mut call = log.call_requested(None, None, "t", &args).unwrap();
                    call.started().unwrap();
                    call.finished(&text_result(&"r".repeat(i * 100), false))
                        .unwrap();
                }
                log.complete_run().unwrap();
            });
        }
    });
    let report = audit::verify_file(&path).unwrap();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.runs.len(), RUNS);
    assert_eq!(report.lines, RUNS * (2 + 3 * CALLS));
    assert!(report
        .runs
        .iter()
        .all(|r| r.completed && r.records == (2 + 3 * CALLS) as u64));
}

fn empty() -> Value {
    Value::Object(json::Map::new())
}
