//! The verifier against every kind of tampering, each made here on a log written by the library:
//! edited bytes, dropped lines, swapped lines, truncation, forged records appended or inserted,
//! a whole run removed; and what cannot be detected without a copy of the head kept elsewhere.

use agentteams_mcp::audit::{
    self, record_hash, AuditLog, Mode, ProblemKind, Report, RunInfo, GENESIS, MAX_RECORD_BYTES,
};
use agentteams_mcp::json::{self, obj, Map, Value};
use std::path::{Path, PathBuf};
mod audit_support;
use audit_support::TempDir;

/// A log of two runs, twelve lines:
///  1 A run_started   2 A requested  3 A started  4 A completed  5 A requested  6 A blocked
///  7 A run_completed 8 B run_started (anchored on line 7)  9 B requested  10 B started
///  11 B completed    12 B run_completed
struct Fixture {
    _dir: TempDir,
    path: PathBuf,
    lines: Vec<String>,
    heads: [String; 2],
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = TempDir::new(&format!("verify-{name}"));
        let path = dir.file("audit.log");
        let info = RunInfo {
            server: "agentteams-test".into(),
            version: "0.1.0".into(),
            root: "/srv".into(),
            transport: "stdio".into(),
            policy: vec![],
        };
        let result = obj([(
            "content",
            Value::from(vec![obj([("type", "text".into()), ("text", "ok".into())])]),
        )]);
        let args = obj([("path", "a.txt".into())]);
        let a = AuditLog::open(&path, &info, Mode::Redacted).unwrap();
        let mut call = a.call_requested(None, None, "git_log", &args).unwrap();
        call.started().unwrap();
        call.finished(&result).unwrap();
        a.call_requested(None, None, "git_blame", &args)
            .unwrap()
            .blocked("rule deny \"git_blame\" (--deny-tool)")
            .unwrap();
        let head_a = a.complete_run().unwrap();
        let b = AuditLog::open(&path, &info, Mode::Redacted).unwrap();
        let mut call = b.call_requested(None, None, "git_show", &args).unwrap();
        call.started().unwrap();
        call.finished(&result).unwrap();
        let head_b = b.complete_run().unwrap();
        let lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(lines.len(), 12);
        let fixture = Fixture {
            _dir: dir,
            path,
            lines,
            heads: [head_a, head_b],
        };
        let report = fixture.verify();
        assert!(report.is_clean(), "{report}");
        fixture
    }

    fn write(&self, lines: &[String]) {
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&self.path, text).unwrap();
    }

    /// Writes `lines` as the log, verifies it, checks the verdict is tampering (exit 1 in both
    /// modes) and returns the problems found as (line, kind).
    fn tampered(&self, lines: &[String]) -> Vec<(usize, ProblemKind)> {
        self.write(lines);
        let report = self.verify();
        assert_tampered(&report);
        kinds(&report)
    }

    fn verify(&self) -> Report {
        audit::verify_file(&self.path).unwrap()
    }

    /// The record on 1-based line `n`, as an object.
    fn record(&self, n: usize) -> Map {
        json::parse(self.lines[n - 1].as_bytes())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn run_id(&self, n: usize) -> String {
        self.record(n)
            .get("run")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }
}

/// Re-seals a record the way a forger who knows the format would: a correct hash over new content.
fn forge(mut record: Map) -> String {
    record.remove("hash");
    let hash = record_hash(&record);
    record.insert("hash", Value::from(hash));
    json::to_string_sorted(&Value::Object(record))
}

fn gap(expected: u64, found: u64) -> ProblemKind {
    ProblemKind::Gap { expected, found }
}

fn kinds(report: &Report) -> Vec<(usize, ProblemKind)> {
    report
        .problems
        .iter()
        .map(|p| (p.line, p.kind.clone()))
        .collect()
}

fn assert_tampered(report: &Report) {
    assert!(!report.is_intact(), "{report}");
    assert_eq!(audit::exit_code(report, false), 1);
    assert_eq!(audit::exit_code(report, true), 1);
    assert!(report.to_string().contains("TAMPERED"), "{report}");
}

#[test]
fn an_edited_byte_breaks_that_record() {
    let f = Fixture::new("edit");
    let mut lines = f.lines.clone();
    lines[2] = lines[2].replacen("git_log", "git_lOg", 1);
    assert_eq!(f.tampered(&lines), [(3, ProblemKind::HashMismatch)]);
    let report = f.verify();
    assert_eq!(
        report.problems[0].run.as_deref(),
        Some(f.run_id(1).as_str())
    );
    assert_eq!(report.runs[0].broken_at, Some(3));
    assert_eq!(report.runs[1].broken_at, None);
    assert!(report.runs[1].completed);
    assert!(report.to_string().contains("line 3: run "), "{report}");
}

#[test]
fn an_edited_last_record_lies_inside_its_runs_line_range() {
    // Found by the audit_verify fuzz target: a run's break was reported past its last line.
    let f = Fixture::new("edit-last");
    let mut lines = f.lines.clone();
    lines[11] = lines[11].replacen("\"calls\":1", "\"calls\":2", 1);
    assert_eq!(f.tampered(&lines), [(12, ProblemKind::HashMismatch)]);
    let report = f.verify();
    let run = &report.runs[1];
    assert_eq!(
        (run.first_line, run.broken_at, run.last_line),
        (8, Some(12), 12)
    );
    assert!(report
        .to_string()
        .contains("BROKEN at line 12; 4 records checked on lines 8..12"));
}

#[test]
fn an_edited_hash_or_prev_breaks_that_record() {
    let f = Fixture::new("edit-hash");
    for (line, member) in [(9, "hash"), (10, "prev")] {
        let record = f.record(line);
        let old = record.get(member).and_then(Value::as_str).unwrap();
        let flipped: String = old
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    if c == '0' {
                        '1'
                    } else {
                        '0'
                    }
                } else {
                    c
                }
            })
            .collect();
        let mut lines = f.lines.clone();
        lines[line - 1] = lines[line - 1].replacen(old, &flipped, 1);
        assert_eq!(
            f.tampered(&lines),
            [(line, ProblemKind::HashMismatch)],
            "{member}"
        );
    }
}

#[test]
fn an_edit_that_breaks_the_json_is_reported_at_its_line() {
    let f = Fixture::new("edit-json");
    let mut lines = f.lines.clone();
    lines[4].replace_range(0..1, "[");
    f.write(&lines);
    let report = f.verify();
    let found = kinds(&report);
    assert!(matches!(found[0], (5, ProblemKind::NotJson(_))), "{report}");
    // The run loses the record, so its chain breaks at the next one.
    assert_eq!(found[1], (6, gap(4, 5)));
    assert_eq!(found.len(), 2);
    assert_tampered(&report);
}

#[test]
fn a_dropped_line_is_a_gap_at_the_next_record_of_the_run() {
    let f = Fixture::new("drop");
    let mut lines = f.lines.clone();
    lines.remove(2);
    assert_eq!(f.tampered(&lines), [(3, gap(2, 3))]);
}

#[test]
fn a_dropped_run_started_leaves_a_run_without_a_start() {
    let f = Fixture::new("drop-start");
    let mut lines = f.lines.clone();
    lines.remove(7);
    assert_eq!(
        f.tampered(&lines),
        [(
            8,
            ProblemKind::MissingStart {
                seq: 1,
                event: "tool_call_requested".into()
            }
        )]
    );
}

#[test]
fn a_dropped_last_line_is_an_incomplete_run_which_fails_only_in_ci_mode() {
    let f = Fixture::new("drop-last");
    let mut lines = f.lines.clone();
    lines.pop();
    f.write(&lines);
    let report = f.verify();
    assert_eq!(kinds(&report), [(11, ProblemKind::Incomplete)]);
    assert!(report.is_intact());
    assert_eq!(audit::exit_code(&report, false), 0);
    assert_eq!(audit::exit_code(&report, true), 1);
    assert!(report.to_string().contains("INCOMPLETE"), "{report}");
    // The run's head is no longer the one the server ended with.
    assert_ne!(report.runs[1].head, f.heads[1]);
}

#[test]
fn swapped_lines_of_one_run_break_the_sequence() {
    let f = Fixture::new("swap");
    let mut lines = f.lines.clone();
    lines.swap(8, 9);
    f.write(&lines);
    let report = f.verify();
    assert_eq!(kinds(&report), [(9, gap(1, 2))]);
}

#[test]
fn a_run_moved_before_its_anchor_is_detected() {
    let f = Fixture::new("swap-runs");
    let mut lines = f.lines.clone();
    lines.swap(6, 7);
    assert_eq!(
        f.tampered(&lines),
        [(
            7,
            ProblemKind::AnchorMissing {
                anchor: f.heads[0].clone()
            }
        )]
    );
}

#[test]
fn a_whole_run_deleted_from_the_middle_is_detected_by_the_next_runs_anchor() {
    let f = Fixture::new("delete-run");
    f.write(&f.lines[7..]);
    let report = f.verify();
    assert_eq!(
        kinds(&report),
        [(
            1,
            ProblemKind::AnchorMissing {
                anchor: f.heads[0].clone()
            }
        )]
    );
    assert_tampered(&report);
}

#[test]
fn truncation_inside_a_line_is_reported() {
    let f = Fixture::new("truncate");
    let mut text = f.lines[..10].join("\n");
    text.push('\n');
    text.push_str(&f.lines[10][..f.lines[10].len() / 2]);
    std::fs::write(&f.path, text).unwrap();
    let report = f.verify();
    assert_eq!(
        kinds(&report),
        [
            (11, ProblemKind::Unterminated),
            (10, ProblemKind::Incomplete)
        ]
    );
    assert_tampered(&report);
}

#[test]
fn truncation_at_a_line_boundary_leaves_an_incomplete_run() {
    let f = Fixture::new("truncate-boundary");
    f.write(&f.lines[..9]);
    let report = f.verify();
    assert_eq!(kinds(&report), [(9, ProblemKind::Incomplete)]);
    assert_eq!(audit::exit_code(&report, true), 1);
}

#[test]
fn an_appended_record_with_a_wrong_hash_is_detected() {
    let f = Fixture::new("append-badhash");
    let mut record = f.record(12);
    record.insert("event", "tool_call_started".into());
    record.insert("seq", Value::from(5u64));
    record.insert("prev", Value::from(f.heads[1].as_str()));
    let mut lines = f.lines.clone();
    lines.push(json::to_string_sorted(&Value::Object(record)));
    assert_eq!(f.tampered(&lines), [(13, ProblemKind::HashMismatch)]);
}

#[test]
fn a_correctly_hashed_record_appended_after_run_completed_is_detected() {
    let f = Fixture::new("append-after");
    let mut record = f.record(12);
    record.insert("event", "tool_call_requested".into());
    record.insert("seq", Value::from(5u64));
    record.insert("prev", Value::from(f.heads[1].as_str()));
    let mut lines = f.lines.clone();
    lines.push(forge(record));
    assert_eq!(f.tampered(&lines), [(13, ProblemKind::AfterCompletion)]);
}

#[test]
fn a_forged_run_that_does_not_start_with_run_started_is_detected() {
    let f = Fixture::new("append-new-run");
    let mut record = f.record(9);
    record.insert("run", Value::from("0123456789abcdef0123456789abcdef"));
    let mut lines = f.lines.clone();
    lines.push(forge(record));
    assert_eq!(
        f.tampered(&lines),
        [(
            13,
            ProblemKind::MissingStart {
                seq: 1,
                event: "tool_call_requested".into()
            }
        )]
    );
}

#[test]
fn a_correctly_hashed_record_inserted_mid_run_breaks_the_next_link() {
    let f = Fixture::new("insert");
    // A forged "started" for line 9's call, linked correctly to line 9.
    let mut record = f.record(10);
    record.insert("time", "2000-01-01T00:00:00.000Z".into());
    let mut lines = f.lines.clone();
    lines.insert(9, forge(record));
    f.write(&lines);
    let report = f.verify();
    // The forged record itself links (it copies line 10's seq and prev); the genuine line 10, now
    // line 11, no longer follows it.
    assert_eq!(kinds(&report), [(11, gap(3, 2))]);
    assert_tampered(&report);
}

#[test]
fn malformed_records_name_the_member() {
    let f = Fixture::new("malformed");
    let cases: [(&str, Value, &str); 5] = [
        ("v", Value::from(2u64), "\"v\" must be 1"),
        (
            "run",
            Value::from("RUN"),
            "\"run\" must be 32 lowercase hex digits",
        ),
        (
            "seq",
            Value::from(-1i64),
            "\"seq\" must be a non-negative integer",
        ),
        (
            "event",
            Value::from("tool_call_exploded"),
            "\"event\" must be one of run_started, ",
        ),
        (
            "prev",
            Value::from(GENESIS.replace('0', "A")),
            "\"prev\" must be 64 lowercase hex digits",
        ),
    ];
    for (member, value, message) in cases {
        let mut record = f.record(2);
        record.insert(member, value);
        let mut lines = f.lines.clone();
        lines[1] = forge(record);
        f.write(&lines);
        let report = f.verify();
        match &report.problems[0] {
            p if p.line == 2 => match &p.kind {
                ProblemKind::Malformed(why) => assert!(why.starts_with(message), "{why}"),
                other => panic!("{member}: {other:?}"),
            },
            p => panic!("{member}: {p}"),
        }
        assert_tampered(&report);
    }
    let mut lines = f.lines.clone();
    lines[1] = lines[1].replacen("{", "{\"seq\":1,", 1);
    f.write(&lines);
    let report = f.verify();
    assert_eq!(
        kinds(&report)[0],
        (
            2,
            ProblemKind::Malformed("member \"seq\" appears twice".into())
        )
    );
}

#[test]
fn a_line_over_the_record_limit_is_reported_without_reading_it_whole() {
    let f = Fixture::new("too-long");
    let mut lines = f.lines.clone();
    lines.insert(12, "x".repeat(MAX_RECORD_BYTES));
    f.write(&lines);
    let report = f.verify();
    assert_eq!(kinds(&report), [(13, ProblemKind::TooLong)]);
}

#[test]
fn what_a_keyless_chain_cannot_show_without_a_head_kept_elsewhere() {
    // Removing whole runs from the end, or appending a wholly forged run, leaves a consistent
    // file: only the head the server reported (kept outside the log) shows the difference.
    let f = Fixture::new("limits");
    f.write(&f.lines[..7]);
    let report = f.verify();
    assert!(report.is_clean(), "{report}");
    assert!(!report.runs.iter().any(|r| r.head == f.heads[1]));
    assert!(report.runs.iter().any(|r| r.head == f.heads[0]));
}

#[test]
fn an_empty_log_is_clean_and_a_missing_one_is_an_error() {
    let f = Fixture::new("empty");
    std::fs::write(&f.path, "").unwrap();
    let report = f.verify();
    assert!(report.is_clean());
    assert_eq!(report.lines, 0);
    assert!(audit::verify_file(Path::new("/nonexistent/audit.log")).is_err());
}
