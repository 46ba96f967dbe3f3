//! `audit verify`: checks every run's hash chain in an audit log and reports where it breaks.
//!
//! For each line: it must be a complete JSON record (newline-terminated, at most
//! [`MAX_RECORD_BYTES`]), with the members every record has, whose `hash` is the digest of its
//! canonical form. For each run: records follow one another with `seq` +1 and `prev` equal to the
//! previous record's `hash`, starting with `run_started` (seq 0, `prev` [`GENESIS`]) whose `anchor`
//! (if any) is the hash of an earlier line, and ending with `run_completed`. The first broken link
//! of each run is reported with its line number; the run's later records are not checked against
//! it (everything after a break would fail too). A run without `run_completed` is reported apart:
//! it is what a crash leaves, not necessarily tampering.

use super::record::{self, FORMAT_VERSION, GENESIS, MAX_RECORD_BYTES};
use crate::governance::decision::Basis;
use crate::governance::mode::PermissionMode;
use crate::json::{self, Value};
use crate::sha256;
use crate::voice::{counted, noun_for};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// The events a record may carry.
const EVENTS: [&str; 8] = [
    "run_started",
    "presets_changed",
    "tool_call_requested",
    "tool_call_blocked",
    "tool_call_started",
    "tool_call_completed",
    "tool_call_failed",
    "run_completed",
];

/// What is wrong at a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The line is not JSON (the parser's message).
    NotJson(String),
    /// The line is longer than [`MAX_RECORD_BYTES`].
    TooLong,
    /// The file ends inside a line.
    Unterminated,
    /// A member is missing or has the wrong form (which, and why).
    Malformed(String),
    /// The record's `hash` is not the digest of its content.
    HashMismatch,
    /// The run's first record is not its `run_started`.
    MissingStart { seq: u64, event: String },
    /// `seq` is not the previous record's + 1.
    Gap { expected: u64, found: u64 },
    /// `prev` is not the previous record's `hash`.
    PrevMismatch,
    /// A record of a run that already wrote `run_completed`.
    AfterCompletion,
    /// `run_started` anchors on a hash no earlier line has.
    AnchorMissing { anchor: String },
    /// The run never wrote `run_completed`.
    Incomplete,
}

impl ProblemKind {
    /// True for every problem except [`ProblemKind::Incomplete`], which a crash also leaves.
    pub fn is_tampering(&self) -> bool {
        !matches!(self, ProblemKind::Incomplete)
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::NotJson(why) => write!(f, "not a JSON record ({why}): the line was edited"),
            ProblemKind::TooLong => write!(
                f,
                "line longer than {MAX_RECORD_BYTES} bytes, which no writer produces: the line was edited"
            ),
            ProblemKind::Unterminated => f.write_str(
                "the file ends inside this line: the log was truncated (or a write was cut short)",
            ),
            ProblemKind::Malformed(why) => write!(f, "malformed record: {why}"),
            ProblemKind::HashMismatch => {
                f.write_str("the record's hash does not match its content: the record was edited")
            }
            ProblemKind::MissingStart { seq, event } => write!(
                f,
                "the run's first record is {event} with seq {seq}, not run_started with seq 0: its earlier records were deleted or this record was inserted"
            ),
            ProblemKind::Gap { expected, found } => write!(
                f,
                "seq {found} where {expected} was expected: records were deleted, reordered or inserted"
            ),
            ProblemKind::PrevMismatch => f.write_str(
                "prev is not the hash of the run's previous record: a record was replaced, reordered or inserted",
            ),
            ProblemKind::AfterCompletion => f.write_str(
                "a record after the run's run_completed: it was inserted or appended",
            ),
            ProblemKind::AnchorMissing { anchor } => write!(
                f,
                "run_started anchors on {anchor}, which no earlier line holds: records before this run were deleted or reordered"
            ),
            ProblemKind::Incomplete => f.write_str(
                "the run has no run_completed after this line: the server stopped without a clean shutdown, or the log's tail was removed",
            ),
        }
    }
}

/// One problem: where, which run (when known), what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number.
    pub line: usize,
    pub run: Option<String>,
    pub kind: ProblemKind,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        if let Some(run) = &self.run {
            write!(f, "run {run}: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

/// What the verifier found about one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    pub run: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Records of the run checked before a break (all of them when intact).
    pub records: u64,
    /// Whether `run_completed` was reached with the chain intact.
    pub completed: bool,
    /// The hash of the last linked record: compare with a copy kept elsewhere.
    pub head: String,
    /// The line of the run's first broken link.
    pub broken_at: Option<usize>,
}

/// The result of verifying a log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub lines: usize,
    /// Lines that are audit records, sound or not: JSON objects naming a run (a 32-hex-digit
    /// `run`). A file with lines but none of these is not an audit log ([`Report::is_audit_log`]).
    pub record_lines: usize,
    /// Runs in order of first appearance.
    pub runs: Vec<RunReport>,
    /// Problems in line order (incomplete runs last), the first [`MAX_LISTED_PROBLEMS`] of them.
    pub problems: Vec<Problem>,
    /// Problems found beyond [`MAX_LISTED_PROBLEMS`]: counted, not kept.
    pub unlisted: usize,
    /// Whether any unlisted problem is tampering.
    pub unlisted_tampering: bool,
}

/// Most problems a report keeps. A log can hold a problem every three bytes (`{}` lines); kept
/// whole, they cost some 47 bytes of memory per byte of log. The rest are counted.
pub const MAX_LISTED_PROBLEMS: usize = 1000;

impl Report {
    /// No problem of any kind.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.unlisted == 0
    }

    /// False for a file with lines of which none is an audit record (a README, another JSON
    /// file): reported as such instead of as every line tampered with. An empty file counts as a
    /// log with no runs. A log whose records were all edited out of recognition is told apart
    /// from nothing: it would take a rewrite of every line, which the keyless chain cannot detect
    /// anyway ("What a keyless hash chain cannot show").
    pub fn is_audit_log(&self) -> bool {
        self.lines == 0 || self.record_lines > 0
    }

    /// No sign of tampering (incomplete runs allowed).
    pub fn is_intact(&self) -> bool {
        !self.unlisted_tampering && !self.problems.iter().any(|p| p.kind.is_tampering())
    }

    /// Records `problem`: listed while fewer than [`MAX_LISTED_PROBLEMS`] are, else counted.
    fn push(&mut self, problem: Problem) {
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push(problem);
        } else {
            self.unlisted += 1;
            self.unlisted_tampering |= problem.kind.is_tampering();
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_audit_log() {
            return write!(f, "{NOT_AN_AUDIT_LOG}: {}", self.not_an_audit_log());
        }
        for problem in &self.problems {
            writeln!(f, "{problem}")?;
        }
        if self.unlisted > 0 {
            writeln!(
                f,
                "... and {} more {} not listed (the first {MAX_LISTED_PROBLEMS} are)",
                self.unlisted,
                noun_for(self.unlisted as u64, "problem")
            )?;
        }
        for run in &self.runs {
            let state = match (run.broken_at, run.completed) {
                (Some(line), _) => format!("BROKEN at line {line}"),
                (None, true) => "intact, completed".to_owned(),
                (None, false) => "intact, INCOMPLETE".to_owned(),
            };
            writeln!(
                f,
                "run {}: {state}; {} checked on lines {}..{}; head {}",
                run.run,
                counted(run.records, "record"),
                run.first_line,
                run.last_line,
                run.head
            )?;
        }
        let verdict = if self.is_clean() {
            "OK"
        } else if self.is_intact() {
            "INCOMPLETE"
        } else {
            "TAMPERED"
        };
        write!(
            f,
            "{verdict}: {}, {}, {}",
            counted(self.lines as u64, "line"),
            counted(self.runs.len() as u64, "run"),
            counted((self.problems.len() + self.unlisted) as u64, "problem")
        )
    }
}

/// The verdict of a file that is not an audit log.
pub const NOT_AN_AUDIT_LOG: &str = "NOT AN AUDIT LOG";

impl Report {
    /// Why a file is not an audit log ([`Report::is_audit_log`]), for the report and the CLI.
    pub fn not_an_audit_log(&self) -> String {
        let lines = match self.lines {
            1 => "its one line is not".to_owned(),
            n => format!("none of its {n} lines is"),
        };
        format!(
            "{lines} an audit record (a JSON object with a 32-hex-digit \"run\", as --audit-log writes)"
        )
    }
}

/// The exit status of `audit verify`: 0 clean; 1 on tampering, and in `ci` mode on any problem
/// (incomplete runs included); 2 for a file that is not an audit log (as for one that cannot be
/// read: there is nothing to verify).
pub fn exit_code(report: &Report, ci: bool) -> i32 {
    if !report.is_audit_log() {
        return 2;
    }
    let failed = if ci {
        !report.is_clean()
    } else {
        !report.is_intact()
    };
    i32::from(failed)
}

/// Verifies the log at `path`.
pub fn verify_file(path: &Path) -> io::Result<Report> {
    verify_reader(BufReader::new(File::open(path)?))
}

/// The chain state of a run while verifying.
struct RunState {
    report: usize,
    next_seq: u64,
    head: String,
}

/// Verifies a log read from `input`. Memory grows with the number of runs and records (a hash per
/// record, for anchors), never with a line's length beyond [`MAX_RECORD_BYTES`].
pub fn verify_reader(mut input: impl BufRead) -> io::Result<Report> {
    let mut report = Report::default();
    let mut runs: HashMap<String, RunState> = HashMap::new();
    let mut seen_hashes: HashSet<String> = HashSet::new();
    let mut line = Vec::new();
    loop {
        let read = read_capped_line(&mut input, &mut line)?;
        if read == LineRead::Eof {
            break;
        }
        report.lines += 1;
        let number = report.lines;
        let problem = |run: Option<&str>, kind| Problem {
            line: number,
            run: run.map(str::to_owned),
            kind,
        };
        let record = match read {
            LineRead::TooLong => Err(problem(None, ProblemKind::TooLong)),
            LineRead::Unterminated => Err(problem(None, ProblemKind::Unterminated)),
            _ => check_record(&line).map_err(|(run, kind)| problem(run.as_deref(), kind)),
        };
        if record
            .as_ref()
            .map_or_else(|found| found.run.is_some(), |_| true)
        {
            report.record_lines += 1;
        }
        let record = match record {
            Ok(record) => record,
            Err(found) => {
                // A damaged record of a known run breaks that run here.
                if let Some(state) = found.run.as_ref().and_then(|r| runs.get(r)) {
                    let run = &mut report.runs[state.report];
                    run.broken_at.get_or_insert(number);
                    run.last_line = number;
                }
                report.push(found);
                continue;
            }
        };
        let is_new = !runs.contains_key(&record.run);
        if is_new {
            runs.insert(
                record.run.clone(),
                RunState {
                    report: report.runs.len(),
                    next_seq: 0,
                    head: GENESIS.to_owned(),
                },
            );
            report.runs.push(RunReport {
                run: record.run.clone(),
                first_line: number,
                last_line: number,
                records: 0,
                completed: false,
                head: String::new(),
                broken_at: None,
            });
        }
        let state = runs.get_mut(&record.run).expect("inserted above");
        let run = &mut report.runs[state.report];
        run.last_line = number;
        let link = if run.broken_at.is_some() {
            None
        } else if is_new {
            Some(first_link(&record, &seen_hashes))
        } else {
            Some(next_link(&record, state, run))
        };
        // An anchor only claims the line existed before the run started, which a record with a
        // good hash shows whatever the state of its own run.
        seen_hashes.insert(record.hash.clone());
        let Some(link) = link else {
            continue;
        };
        match link {
            Ok(()) => {
                state.next_seq = record.seq + 1;
                state.head = record.hash.clone();
                run.records += 1;
                run.completed = record.event == "run_completed";
                run.head = record.hash;
            }
            Err(kind) => {
                run.broken_at = Some(number);
                report.push(problem(Some(&record.run), kind));
            }
        }
    }
    let incomplete: Vec<Problem> = report
        .runs
        .iter()
        .filter(|run| run.broken_at.is_none() && !run.completed)
        .map(|run| Problem {
            line: run.last_line,
            run: Some(run.run.clone()),
            kind: ProblemKind::Incomplete,
        })
        .collect();
    for problem in incomplete {
        report.push(problem);
    }
    Ok(report)
}

/// The members of a record the chain check needs.
struct Checked {
    run: String,
    seq: u64,
    event: String,
    prev: String,
    hash: String,
    anchor: Option<String>,
}

/// Parses and checks one line on its own: form and hash. On error, the run it claims (if readable).
fn check_record(line: &[u8]) -> Result<Checked, (Option<String>, ProblemKind)> {
    let value = json::parse(line).map_err(|e| (None, ProblemKind::NotJson(e.to_string())))?;
    let Value::Object(map) = value else {
        return Err((
            None,
            ProblemKind::Malformed(format!("a record is an object, not {}", value.type_name())),
        ));
    };
    let run = map
        .get("run")
        .and_then(Value::as_str)
        .filter(|r| record::is_run_id(r))
        .map(str::to_owned);
    let malformed = |why: String| (run.clone(), ProblemKind::Malformed(why));
    let mut keys: Vec<_> = map.keys().collect();
    keys.sort();
    if let Some(pair) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(malformed(format!("member {:?} appears twice", pair[0])));
    }
    if map.get("v").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return Err(malformed(format!("\"v\" must be {FORMAT_VERSION}")));
    }
    let Some(run_id) = run.clone() else {
        return Err(malformed(
            "\"run\" must be 32 lowercase hex digits".to_owned(),
        ));
    };
    let seq = map
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("\"seq\" must be a non-negative integer".to_owned()))?;
    let event = map
        .get("event")
        .and_then(Value::as_str)
        .filter(|e| EVENTS.contains(e))
        .ok_or_else(|| malformed(format!("\"event\" must be one of {}", EVENTS.join(", "))))?;
    if map.get("time").and_then(Value::as_str).is_none() {
        return Err(malformed("\"time\" must be a string".to_owned()));
    }
    let hex_member = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .filter(|h| sha256::is_hex_digest(h))
            .map(str::to_owned)
            .ok_or_else(|| malformed(format!("{key:?} must be 64 lowercase hex digits")))
    };
    let prev = hex_member("prev")?;
    let hash = hex_member("hash")?;
    let anchor = if event == "run_started" {
        match map.get("anchor") {
            Some(Value::Null) => None,
            Some(Value::String(a)) if sha256::is_hex_digest(a) => Some(a.to_string()),
            _ => {
                return Err(malformed(
                    "\"anchor\" of run_started must be null or 64 lowercase hex digits".to_owned(),
                ))
            }
        }
    } else {
        None
    };
    check_governance(&map, event).map_err(malformed)?;
    if record::record_hash(&map) != hash {
        return Err((run, ProblemKind::HashMismatch));
    }
    Ok(Checked {
        run: run_id,
        seq,
        event: event.to_owned(),
        prev,
        hash,
        anchor,
    })
}

/// Checks the governance members: `governance` only in `run_started` and `presets_changed` (which
/// must have it), `decision` only in
/// `tool_call_blocked` (not allowed) and `tool_call_started` (allowed), each in its documented
/// form. A record without them (a log written before governance existed) is fine.
fn check_governance(map: &json::Map, event: &str) -> Result<(), String> {
    let mode_ok = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|m| PermissionMode::parse(m).is_ok())
    };
    if event == "presets_changed" && map.get("governance").is_none() {
        return Err("a presets_changed record needs \"governance\"".into());
    }
    if let Some(governance) = map.get("governance") {
        if !["run_started", "presets_changed"].contains(&event) {
            return Err(format!("\"governance\" in a {event} record"));
        }
        if !mode_ok(governance.get("mode")) {
            return Err("\"governance\" must be an object with a permission \"mode\"".into());
        }
    }
    let Some(decision) = map.get("decision") else {
        return Ok(());
    };
    let allowed = match event {
        "tool_call_started" => true,
        "tool_call_blocked" => false,
        _ => return Err(format!("\"decision\" in a {event} record")),
    };
    let form =
        "\"decision\" must be an object with allowed, mode, basis, reason and an optional digest";
    let Some(members) = decision.as_object() else {
        return Err(form.into());
    };
    let known = ["allowed", "mode", "basis", "reason", "digest"];
    let basis_ok = decision
        .get("basis")
        .and_then(Value::as_str)
        .is_some_and(|b| Basis::ALL.iter().any(|k| k.as_str() == b));
    let digest_ok = match decision.get("digest") {
        None => true,
        Some(d) => d.as_str().is_some_and(sha256::is_hex_digest),
    };
    if members.keys().any(|k| !known.contains(&k.as_str()))
        || !mode_ok(decision.get("mode"))
        || !basis_ok
        || decision.get("reason").and_then(Value::as_str).is_none()
        || !digest_ok
    {
        return Err(form.into());
    }
    if decision.get("allowed").and_then(Value::as_bool) != Some(allowed) {
        return Err(format!(
            "\"decision\" of a {event} record must say \"allowed\": {allowed}"
        ));
    }
    Ok(())
}

/// Checks the first record seen of a run.
fn first_link(record: &Checked, seen_hashes: &HashSet<String>) -> Result<(), ProblemKind> {
    if record.event != "run_started" || record.seq != 0 {
        return Err(ProblemKind::MissingStart {
            seq: record.seq,
            event: record.event.clone(),
        });
    }
    if record.prev != GENESIS {
        return Err(ProblemKind::PrevMismatch);
    }
    match &record.anchor {
        Some(anchor) if !seen_hashes.contains(anchor) => Err(ProblemKind::AnchorMissing {
            anchor: anchor.clone(),
        }),
        _ => Ok(()),
    }
}

/// Checks a record against its run's previous one.
fn next_link(record: &Checked, state: &RunState, run: &RunReport) -> Result<(), ProblemKind> {
    if run.completed {
        return Err(ProblemKind::AfterCompletion);
    }
    if record.seq != state.next_seq {
        return Err(ProblemKind::Gap {
            expected: state.next_seq,
            found: record.seq,
        });
    }
    if record.prev != state.head {
        return Err(ProblemKind::PrevMismatch);
    }
    if record.event == "run_started" {
        return Err(ProblemKind::Malformed(format!(
            "run_started with seq {}",
            record.seq
        )));
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
enum LineRead {
    Eof,
    Line,
    Unterminated,
    TooLong,
}

/// Reads one line (without its newline) into `line`, holding at most [`MAX_RECORD_BYTES`]; a
/// longer line is skipped to its end and reported as [`LineRead::TooLong`].
fn read_capped_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<LineRead> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            return Ok(match (any, too_long) {
                (false, _) => LineRead::Eof,
                (true, true) => LineRead::TooLong,
                (true, false) => LineRead::Unterminated,
            });
        }
        any = true;
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..i], Some(i + 1)),
            None => (buffer, None),
        };
        // The newline counts towards the cap: a record line is at most MAX_RECORD_BYTES in all.
        if line.len() + chunk.len() < MAX_RECORD_BYTES && !too_long {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let consumed = done.unwrap_or(buffer.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_audit_records_is_not_an_audit_log() {
        let report = verify_reader(&b"# Title\n\n{\"v\": 1}\n[]\n"[..]).unwrap();
        assert!(!report.is_audit_log());
        assert_eq!((report.lines, report.record_lines), (4, 0));
        assert_eq!(
            report.to_string(),
            "NOT AN AUDIT LOG: none of its 4 lines is an audit record (a JSON object with a 32-hex-digit \"run\", as --audit-log writes)"
        );
        assert_eq!(exit_code(&report, false), 2);
        assert_eq!(exit_code(&report, true), 2);
        // One line naming a run, however broken, makes it a log: the rest is tampering.
        let report =
            verify_reader(&b"prose\n{\"run\": \"0123456789abcdef0123456789abcdef\"}\n"[..])
                .unwrap();
        assert!(report.is_audit_log());
        assert_eq!(report.record_lines, 1);
        assert_eq!(exit_code(&report, false), 1);
        let empty = verify_reader(&b""[..]).unwrap();
        assert!(empty.is_audit_log() && empty.is_clean());
        assert_eq!(exit_code(&empty, true), 0);
    }

    #[test]
    fn capped_reader_edges() {
        let exact = {
            let mut l = vec![b'x'; MAX_RECORD_BYTES - 1];
            l.push(b'\n');
            l
        };
        let over = {
            let mut l = vec![b'y'; MAX_RECORD_BYTES];
            l.push(b'\n');
            l
        };
        let mut input = [exact, over, b"tail".to_vec()].concat();
        input.splice(0..0, b"\n".iter().copied());
        let mut reader = BufReader::with_capacity(4096, &input[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_capped_line(&mut reader, &mut line).unwrap(),
            LineRead::Line
        );
        assert!(line.is_empty());
        assert_eq!(
            read_capped_line(&mut reader, &mut line).unwrap(),
            LineRead::Line
        );
        assert_eq!(line.len(), MAX_RECORD_BYTES - 1);
        assert_eq!(
            read_capped_line(&mut reader, &mut line).unwrap(),
            LineRead::TooLong
        );
        assert_eq!(
            read_capped_line(&mut reader, &mut line).unwrap(),
            LineRead::Unterminated
        );
        assert_eq!(line, b"tail");
        assert_eq!(
            read_capped_line(&mut reader, &mut line).unwrap(),
            LineRead::Eof
        );
    }
}
