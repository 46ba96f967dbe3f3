//! `agentteams-mcp audit verify FILE [--ci]` through the binary: report, exit codes, tampering.

mod common;

use agentteams_mcp::audit::{AuditLog, Mode, RunInfo};
use agentteams_mcp::json::{obj, Value};
use common::{stdout, TempDir};
use std::path::Path;
use std::process::{Command, Output};

fn verify(path: &Path, ci: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"));
    command.args(["audit", "verify"]).arg(path);
    if ci {
        command.arg("--ci");
    }
    command.output().expect("the binary runs")
}

/// A completed run with one call: five lines.
fn write_log(path: &Path) {
    let log = AuditLog::open(path, &RunInfo::default(), Mode::Redacted).unwrap();
    let mut call = log
        .call_requested(None, None, "git_log", &obj([("n", Value::from(1u64))]))
        .unwrap();
    call.started().unwrap();
    call.finished(&obj([("content", Value::from(Vec::<Value>::new()))]))
        .unwrap();
    log.complete_run().unwrap();
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_intact_log_verifies_with_exit_0_in_both_modes() {
    let dir = TempDir::new("audit-cli-intact");
    let path = dir.path().join("audit.log");
    write_log(&path);
    for ci in [false, true] {
        let o = verify(&path, ci);
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
        let out = stdout(&o);
        assert!(out.contains("intact, completed"), "{out}");
        assert!(
            out.trim_end().ends_with("OK: 5 lines, 1 run, 0 problems"),
            "{out}"
        );
    }
}

#[test]
fn every_kind_of_tampering_exits_1_and_names_the_line() {
    let dir = TempDir::new("audit-cli-tampered");
    let path = dir.path().join("audit.log");
    write_log(&path);
    let original = lines(&path);
    let forged_after_completion = {
        // A record appended after run_completed, with a correct hash.
        let mut record = agentteams_mcp::json::parse(original[4].as_bytes()).unwrap();
        let map = record.as_object_mut().unwrap();
        map.insert("seq", Value::from(5u64));
        let prev = map.get("hash").cloned().unwrap();
        map.insert("prev", prev);
        map.remove("hash");
        let hash = agentteams_mcp::audit::record_hash(map);
        map.insert("hash", Value::from(hash));
        agentteams_mcp::json::to_string_sorted(&record)
    };
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "edit a byte",
            {
                let mut l = original.clone();
                l[1] = l[1].replacen("git_log", "git_lag", 1);
                l
            },
            "line 2: run ",
        ),
        (
            "drop a line",
            [&original[..2], &original[3..]].concat(),
            "line 3: run ",
        ),
        (
            "swap two lines",
            {
                let mut l = original.clone();
                l.swap(1, 2);
                l
            },
            "line 2: run ",
        ),
        (
            "append a forged record",
            [original.clone(), vec![forged_after_completion]].concat(),
            "line 6: run ",
        ),
    ];
    for (what, tampered, expected) in cases {
        write_lines(&path, &tampered);
        let o = verify(&path, false);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {out}");
        assert!(out.starts_with(expected), "{what}: {out}");
        assert!(out.contains("TAMPERED"), "{what}: {out}");
    }
    // Truncation inside the last line.
    let mut text = original[..4].join("\n");
    text.push('\n');
    text.push_str(&original[4][..20]);
    std::fs::write(&path, text).unwrap();
    let o = verify(&path, false);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("line 5: the file ends inside this line"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_run_without_run_completed_fails_only_in_ci_mode() {
    let dir = TempDir::new("audit-cli-incomplete");
    let path = dir.path().join("audit.log");
    write_log(&path);
    let original = lines(&path);
    write_lines(&path, &original[..4]);
    let o = verify(&path, false);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("INCOMPLETE"));
    let o = verify(&path, true);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn a_missing_file_exits_2() {
    let o = verify(Path::new("/nonexistent/agentteams/audit.log"), true);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("agentteams-mcp: audit: cannot read "));
}

#[test]
fn audit_usage_errors_exit_2() {
    for (args, message) in [
        (&["audit"][..], "give an audit command: verify FILE [--ci]"),
        (
            &["audit", "check", "x"][..],
            "unknown command check; give verify",
        ),
        (&["audit", "verify"][..], "audit verify needs a FILE"),
        (&["audit", "verify", "a", "b"][..], "unexpected argument b"),
        (
            &["--serve-mcp", "gitread", "--audit-full"][..],
            "--audit-full needs --audit-log FILE",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn a_file_that_is_not_an_audit_log_exits_2_and_says_so() {
    let dir = TempDir::new("audit-cli-not-a-log");
    let readme = dir.path().join("README.md");
    let text: String = (0..250).map(|i| format!("line {i} of prose\n")).collect();
    std::fs::write(&readme, text).unwrap();
    let json = dir.path().join("data.json");
    std::fs::write(&json, "{\"v\": 1, \"run\": \"not hex\"}\n[1, 2]\n").unwrap();
    for (path, lines) in [(&readme, 250), (&json, 2)] {
        for ci in [false, true] {
            let o = verify(path, ci);
            assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
            assert!(o.stdout.is_empty(), "{}", stdout(&o));
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                format!(
                    "agentteams-mcp: audit: {} is not an audit log: none of its {lines} lines is an audit record \
                     (a JSON object with a 32-hex-digit \"run\", as --audit-log writes)\n",
                    path.display()
                )
            );
        }
    }
}

#[test]
fn one_audit_record_among_other_lines_is_tampering_not_a_foreign_file() {
    let dir = TempDir::new("audit-cli-mixed");
    let path = dir.path().join("audit.log");
    write_log(&path);
    let mut lines = lines(&path);
    lines.truncate(1);
    lines.extend((0..3).map(|i| format!("prose {i}")));
    write_lines(&path, &lines);
    let o = verify(&path, false);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o)
            .trim_end()
            .ends_with("TAMPERED: 4 lines, 1 run, 4 problems"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_record_of_many_members_is_checked_in_linear_time() {
    // A planted record of 300,000 members (3.6 MB, within the 4 MiB a record may hold): rebuilding
    // it without its hash by `Map::insert`, one linear look per member, took 189 s a line.
    let dir = TempDir::new("audit-cli-many-members");
    let path = dir.path().join("audit.log");
    write_log(&path);
    let mut lines = lines(&path);
    let members: String = (0..300_000).map(|i| format!(",\"x{i:06x}\":0")).collect();
    let first = lines[0].strip_suffix('}').unwrap().to_owned();
    lines[0] = format!("{first}{members}}}");
    write_lines(&path, &lines);
    let started = std::time::Instant::now();
    let o = verify(&path, false);
    let took = started.elapsed();
    let out = stdout(&o);
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("line 1: ") && out.contains("the record's hash does not match its content"),
        "{out}"
    );
}
