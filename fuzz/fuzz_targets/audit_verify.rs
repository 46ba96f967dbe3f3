//! Arbitrary bytes as an audit log: `audit::verify_reader` must report, never panic, and its report
//! must be consistent (every problem and run within the lines read; a clean report has no broken
//! or incomplete run).
#![no_main]

use agentteams_mcp::audit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let report = audit::verify_reader(data).expect("reading a slice cannot fail");
    for problem in &report.problems {
        assert!(
            problem.line >= 1 && problem.line <= report.lines,
            "{problem}"
        );
    }
    for run in &report.runs {
        assert!(run.first_line <= run.last_line && run.last_line <= report.lines);
        if let Some(line) = run.broken_at {
            assert!(line >= run.first_line && line <= run.last_line);
        }
    }
    if report.is_clean() {
        assert!(report
            .runs
            .iter()
            .all(|r| r.completed && r.broken_at.is_none()));
    }
    let _ = report.to_string();
});
