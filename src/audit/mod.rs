//! The tamper-evident audit log: one hash-chained JSON line per event of a server run.
//!
//! A server started with an audit log appends, for each run (one process serving one transport):
//! `run_started`, then per tool call `tool_call_requested` followed by `tool_call_blocked` (refused
//! by policy) or `tool_call_started` and then `tool_call_completed` / `tool_call_failed`,
//! `presets_changed` when the approvals file changes while serving, and `run_completed` on clean
//! shutdown. The full format, the verifier and the threat model are in
//! `docs/audit.md`; in brief:
//!
//! - **Record**: a JSON object on one line with `v` (format version), `run` (run id), `seq` (0, 1,
//!   2... within the run), `time` (RFC 3339 UTC), `event`, `prev` (the previous record's `hash`,
//!   [`GENESIS`] for `seq` 0), the event's own members, and `hash`.
//! - **Canonical form and hash**: `hash` is the SHA-256, in lowercase hex, of the record without
//!   its `hash` member written as compact JSON with members sorted by key (code point order),
//!   non-ASCII as UTF-8, the minimal escapes (exactly Python's `json.dumps(record,
//!   sort_keys=True, separators=(",", ":"), ensure_ascii=False)`). Lines are written in that form
//!   too (with `hash` in its sorted place).
//! - **Several processes, one file**: each run keeps its own chain, named by a random 128-bit run
//!   id, and all runs append to the same file. The file is opened with `O_APPEND` and each record
//!   is written with a single `write` and then `sync_data`, so records of concurrent runs
//!   interleave whole and each is on disk before the call it describes goes on. (Chosen over one
//!   file per run because an operator points every server at one path and gets one file to ship
//!   and verify; the cost, a lock-free interleaving, is what per-run chains are for.) A run's
//!   `run_started` also carries `anchor`, the hash of the last record in the file when it started,
//!   so deleting a whole earlier run is detected when a later run anchored on it.
//! - **Failure is closed**: once a write fails the log refuses every later record, and the engine
//!   refuses calls it cannot record.

pub(crate) mod record;
mod redact;
mod verify;

pub use crate::time::rfc3339;
pub use record::{record_hash, FORMAT_VERSION, GENESIS, MAX_RECORD_BYTES, RUN_ID_LEN};
pub use redact::{
    is_secret_key, looks_like_credential, summary, Mode, MAX_KEPT_DEPTH, MAX_KEPT_STRING_BYTES,
    REDACTED,
};
pub use verify::{
    exit_code, verify_file, verify_reader, Problem, ProblemKind, Report, RunReport,
    NOT_AN_AUDIT_LOG,
};

use crate::json::{self, Map, Value};
use crate::sha256;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

/// What `run_started` records about the run.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The server's name, e.g. `agentteams-gitread`.
    pub server: String,
    /// The server's version.
    pub version: String,
    /// The directory the server serves.
    pub root: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The policy's rules, one description each ([`crate::policy::Policy::describe`]).
    pub policy: Vec<String>,
}

/// Why an audit record could not be written.
#[derive(Debug)]
pub enum AuditError {
    /// Opening, reading or writing the log file failed.
    Io { path: PathBuf, error: io::Error },
    /// An earlier write failed (with this error); the chain's state on disk is unknown, so
    /// nothing more is written.
    Disabled { path: PathBuf, first_error: String },
    /// `run_completed` was already written.
    RunCompleted { path: PathBuf },
}

impl fmt::Display for AuditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuditError::Io { path, error } => {
                write!(f, "audit log {}: {error}", path.display())
            }
            AuditError::Disabled { path, first_error } => write!(
                f,
                "audit log {}: an earlier write failed ({first_error}), so no further record is written",
                path.display()
            ),
            AuditError::RunCompleted { path } => write!(
                f,
                "audit log {}: the run is already completed",
                path.display()
            ),
        }
    }
}

impl std::error::Error for AuditError {}

/// The chain state of this run, guarded so that a record's `seq`/`prev` and its write are one step.
struct Chain {
    file: File,
    next_seq: u64,
    prev: String,
    completed: bool,
    /// The error of the write that failed, after which nothing more is written.
    failed_write: Option<String>,
    calls: u64,
    blocked: u64,
    failed: u64,
}

/// An open audit log: the writer of one run's chain. Shared by every session of the server.
pub struct AuditLog {
    path: PathBuf,
    run: String,
    mode: Mode,
    next_call: AtomicU64,
    chain: Mutex<Chain>,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .field("run", &self.run)
            .field("mode", &self.mode)
            .finish()
    }
}

impl AuditLog {
    /// Opens (creating, mode 0600 on Unix) the log at `path` for appending and writes this run's
    /// `run_started` record.
    pub fn open(path: &Path, info: &RunInfo, mode: Mode) -> Result<AuditLog, AuditError> {
        AuditLog::open_with(path, info, mode, None)
    }

    /// [`AuditLog::open`] for a governed engine: `run_started` also records `governance` (the
    /// permission mode, presets and scoped approvals in force,
    /// [`crate::governance::Governance::describe`]).
    pub fn open_governed(
        path: &Path,
        info: &RunInfo,
        mode: Mode,
        governance: Value,
    ) -> Result<AuditLog, AuditError> {
        AuditLog::open_with(path, info, mode, Some(governance))
    }

    fn open_with(
        path: &Path,
        info: &RunInfo,
        mode: Mode,
        governance: Option<Value>,
    ) -> Result<AuditLog, AuditError> {
        let io_error = |error| AuditError::Io {
            path: path.to_owned(),
            error,
        };
        let mut options = OpenOptions::new();
        options.append(true).create(true).read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let existed = path.exists();
        let mut file = options.open(path).map_err(io_error)?;
        if !existed {
            sync_parent_dir(path).map_err(io_error)?;
        }
        let anchor = last_record_hash(&mut file).map_err(io_error)?;
        let log = AuditLog {
            path: path.to_owned(),
            run: record::new_run_id(),
            mode,
            next_call: AtomicU64::new(1),
            chain: Mutex::new(Chain {
                file,
                next_seq: 0,
                prev: GENESIS.to_owned(),
                completed: false,
                failed_write: None,
                calls: 0,
                blocked: 0,
                failed: 0,
            }),
        };
        let policy: Vec<Value> = info
            .policy
            .iter()
            .map(|r| Value::from(r.as_str()))
            .collect();
        let mut fields = vec![
            ("server", Value::from(info.server.as_str())),
            ("version", Value::from(info.version.as_str())),
            ("root", Value::from(info.root.as_str())),
            ("transport", Value::from(info.transport.as_str())),
            ("pid", Value::from(std::process::id())),
            ("mode", Value::from(mode.as_str())),
            ("policy", Value::from(policy)),
            ("anchor", Value::from(anchor)),
        ];
        if let Some(governance) = governance {
            fields.push(("governance", governance));
        }
        log.append("run_started", fields, |_| {})?;
        Ok(log)
    }

    /// This run's id (32 hex digits), the `run` member of every record it writes.
    pub fn run_id(&self) -> &str {
        &self.run
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The hash of the last record written: keep it somewhere else to detect a rewritten log.
    pub fn head(&self) -> String {
        self.lock().prev.clone()
    }

    /// Records `tool_call_requested` and returns the call's handle, through which the rest of the
    /// call is recorded. `session` names the HTTP session (none for stdio); `request_id` is the
    /// client's JSON-RPC id, logged as data and never trusted.
    pub fn call_requested(
        &self,
        session: Option<&str>,
        request_id: Option<&Value>,
        tool: &str,
        arguments: &Value,
    ) -> Result<AuditedCall<'_>, AuditError> {
        let caller = Caller {
            session,
            principal: None,
        };
        self.call_requested_by(caller, request_id, tool, arguments)
    }

    /// [`AuditLog::call_requested`] naming the caller's principal too (OAuth mode: a digest of
    /// the token's issuer and subject, written as it is in every record of the call).
    pub fn call_requested_by(
        &self,
        caller: Caller<'_>,
        request_id: Option<&Value>,
        tool: &str,
        arguments: &Value,
    ) -> Result<AuditedCall<'_>, AuditError> {
        let mut call = AuditedCall {
            log: self,
            number: self.next_call.fetch_add(1, Ordering::Relaxed),
            tool: tool.to_owned(),
            session: caller.session.map(|s| self.session_label(s)),
            principal: caller.principal.map(str::to_owned),
            decision: None,
            started: None,
            cancelled: false,
            finished: false,
        };
        let mut fields = call.identity();
        fields.push((
            "request_id",
            redact::for_log(&request_id.cloned().unwrap_or_default(), self.mode),
        ));
        fields.push(("arguments", redact::for_log(arguments, self.mode)));
        if let Err(e) = self.append("tool_call_requested", fields, |c| c.calls += 1) {
            // Unrecorded, so nothing to close: the engine refuses the call.
            call.finished = true;
            return Err(e);
        }
        Ok(call)
    }

    /// Records `presets_changed`: the approvals file changed while serving, and `governance` (as
    /// `run_started` has it) is what is in force now.
    pub fn presets_changed(&self, governance: Value) -> Result<(), AuditError> {
        self.append("presets_changed", vec![("governance", governance)], |_| {})
    }

    /// Writes `run_completed` (clean shutdown) and returns the run's final hash. Nothing can be
    /// recorded after it.
    pub fn complete_run(&self) -> Result<String, AuditError> {
        self.append_with(
            "run_completed",
            |chain| {
                vec![
                    ("calls", Value::from(chain.calls)),
                    ("blocked", Value::from(chain.blocked)),
                    ("failed", Value::from(chain.failed)),
                ]
            },
            |c| c.completed = true,
        )?;
        Ok(self.head())
    }

    /// How an HTTP session is named in the log: the id itself in full mode; in redacted mode a
    /// digest prefix, since a live session id is a credential.
    fn session_label(&self, session: &str) -> String {
        match self.mode {
            Mode::Full => session.to_owned(),
            Mode::Redacted => format!("sha256:{}", &sha256::hex_digest(session.as_bytes())[..16]),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Chain> {
        self.chain.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Builds, seals and writes one record, then applies `update` to the chain's counters.
    fn append(
        &self,
        event: &str,
        fields: Vec<(&'static str, Value)>,
        update: impl FnOnce(&mut Chain),
    ) -> Result<(), AuditError> {
        self.append_with(event, |_| fields, update)
    }

    /// [`append`](Self::append) with members computed from the chain's state under its lock.
    fn append_with(
        &self,
        event: &str,
        fields: impl FnOnce(&Chain) -> Vec<(&'static str, Value)>,
        update: impl FnOnce(&mut Chain),
    ) -> Result<(), AuditError> {
        let mut chain = self.lock();
        if let Some(first_error) = &chain.failed_write {
            return Err(AuditError::Disabled {
                path: self.path.clone(),
                first_error: first_error.clone(),
            });
        }
        if chain.completed {
            return Err(AuditError::RunCompleted {
                path: self.path.clone(),
            });
        }
        let fields = fields(&chain);
        let mut record = Map::with_capacity(fields.len() + 7);
        record.insert("v", Value::from(FORMAT_VERSION));
        record.insert("run", Value::from(self.run.as_str()));
        record.insert("seq", Value::from(chain.next_seq));
        record.insert("time", Value::from(rfc3339(SystemTime::now())));
        record.insert("event", Value::from(event));
        record.insert("prev", Value::from(chain.prev.as_str()));
        for (key, value) in fields {
            record.insert(key, value);
        }
        let mut record = Value::Object(record);
        let canonical = fit_record(&mut record);
        let (line, hash) = record::seal(record, &canonical);
        // One write of the whole line: with O_APPEND the kernel places it at the end of the file
        // in one piece, so concurrent runs never split each other's records.
        let written = chain
            .file
            .write_all(line.as_bytes())
            .and_then(|()| chain.file.sync_data());
        if let Err(error) = written {
            chain.failed_write = Some(error.to_string());
            return Err(AuditError::Io {
                path: self.path.clone(),
                error,
            });
        }
        chain.next_seq += 1;
        chain.prev = hash;
        update(&mut chain);
        Ok(())
    }
}

/// Members that hold call data and may be summarised to keep a record under [`MAX_RECORD_BYTES`].
const BULKY_MEMBERS: [&str; 3] = ["arguments", "result", "error"];

/// Replaces bulky members by their summary when the record would exceed [`MAX_RECORD_BYTES`]
/// (possible in full mode, or with many short strings), largest first. Returns the canonical form
/// of the record as it is then.
fn fit_record(record: &mut Value) -> String {
    // Room for the `hash` member the seal adds, and the newline.
    const SEAL_BYTES: usize = 80;
    loop {
        let canonical = record::canonical(record);
        if canonical.len() + SEAL_BYTES <= MAX_RECORD_BYTES {
            return canonical;
        }
        let Some(members) = record.as_object_mut() else {
            return canonical;
        };
        let largest = BULKY_MEMBERS
            .iter()
            .filter_map(|&k| {
                let v = members.get(k)?;
                let is_summary = v.get("elided_bytes").is_some() && v.get("sha256").is_some();
                (!is_summary).then(|| (json::to_string(v).len(), k))
            })
            .max();
        let Some((_, key)) = largest else {
            return canonical;
        };
        let summarised = summary(members.get(key).expect("member present"));
        members.insert(key, summarised);
    }
}

/// The hash of the last complete record line of `file`, if it has one: the anchor that links a
/// new run to what the file held when it started.
fn last_record_hash(file: &mut File) -> io::Result<Option<String>> {
    let length = file.seek(SeekFrom::End(0))?;
    let window = length.min(MAX_RECORD_BYTES as u64 + 1);
    file.seek(SeekFrom::Start(length - window))?;
    let mut tail = Vec::with_capacity(window as usize);
    file.take(window).read_to_end(&mut tail)?;
    // The last line that ends in a newline; a partial line after it (a crash mid-write) is skipped.
    let Some(end) = tail.iter().rposition(|&b| b == b'\n') else {
        return Ok(None);
    };
    let start = tail[..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let hash = json::parse(&tail[start..end])
        .ok()
        .and_then(|v| v.get("hash").and_then(Value::as_str).map(str::to_owned))
        .filter(|h| sha256::is_hex_digest(h));
    Ok(hash)
}

/// Makes a newly created file's directory entry durable.
fn sync_parent_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(parent)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Who made a call: the HTTP session and the principal (OAuth mode) the records name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caller<'a> {
    pub session: Option<&'a str>,
    /// Already a digest ([`crate::auth::Grant::principal`]): written as it is.
    pub principal: Option<&'a str>,
}

/// One tool call being recorded. Each outcome method writes the call's closing record; a call
/// dropped without one records `tool_call_failed` ("ended without an outcome").
pub struct AuditedCall<'a> {
    log: &'a AuditLog,
    number: u64,
    tool: String,
    session: Option<String>,
    principal: Option<String>,
    /// The governance decision, recorded with `tool_call_blocked` or `tool_call_started`.
    decision: Option<Value>,
    started: Option<Instant>,
    cancelled: bool,
    finished: bool,
}

impl<'a> AuditedCall<'a> {
    /// The governance decision about this call ([`crate::governance::Verdict::to_audit`]): the
    /// `decision` member of its `tool_call_blocked` or `tool_call_started` record.
    pub fn set_decision(&mut self, decision: Value) {
        self.decision = Some(decision);
    }

    /// Identity plus the decision, for the record that says whether the call may run.
    fn decided(&self) -> Vec<(&'static str, Value)> {
        let mut fields = self.identity();
        if let Some(decision) = &self.decision {
            fields.push(("decision", decision.clone()));
        }
        fields
    }

    /// The call's number within the run (1, 2, ...), the `call` member of its records.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The members every record of this call carries.
    fn identity(&self) -> Vec<(&'static str, Value)> {
        let mut fields = vec![
            ("call", Value::from(self.number)),
            ("tool", Value::from(self.tool.as_str())),
        ];
        if let Some(session) = &self.session {
            fields.push(("session", Value::from(session.as_str())));
        }
        if let Some(principal) = &self.principal {
            fields.push(("principal", Value::from(principal.as_str())));
        }
        fields
    }

    /// Records `tool_call_blocked`: the policy refused the call, by `rule`.
    pub fn blocked(mut self, rule: &str) -> Result<(), AuditError> {
        self.finished = true;
        let mut fields = self.decided();
        fields.push(("rule", Value::from(rule)));
        self.log
            .append("tool_call_blocked", fields, |c| c.blocked += 1)
    }

    /// Marks the call as cancelled by the client: its outcome record says `"cancelled": true`, for
    /// the outcome was never sent.
    pub fn set_cancelled(&mut self) {
        self.cancelled = true;
    }

    /// Records `tool_call_started`: the call passed the policy and is being run. Starts the clock.
    pub fn started(&mut self) -> Result<(), AuditError> {
        self.started = Some(Instant::now());
        self.log.append("tool_call_started", self.decided(), |_| {})
    }

    /// Records the call's result (the `tools/call` result object): `tool_call_failed` when it is an
    /// `isError` result, else `tool_call_completed`, with duration, output size and digest.
    pub fn finished(mut self, result: &Value) -> Result<(), AuditError> {
        self.finished = true;
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let output = json::to_string(result);
        let mut fields = self.outcome(&output);
        fields.push(("result", redact::for_log(result, self.log.mode)));
        let (event, failed) = if is_error {
            ("tool_call_failed", 1)
        } else {
            ("tool_call_completed", 0)
        };
        self.log.append(event, fields, |c| c.failed += failed)
    }

    /// Records `tool_call_failed` for a call answered with a JSON-RPC error instead of a result.
    pub fn rejected(mut self, code: i64, message: &str) -> Result<(), AuditError> {
        self.finished = true;
        self.reject(code, message)
    }

    fn reject(&self, code: i64, message: &str) -> Result<(), AuditError> {
        let error = json::obj([
            ("code", Value::from(code)),
            ("message", Value::from(message)),
        ]);
        let mut fields = self.outcome(&json::to_string(&error));
        fields.push(("error", redact::for_log(&error, self.log.mode)));
        self.log
            .append("tool_call_failed", fields, |c| c.failed += 1)
    }

    /// Identity plus duration (0 when the call never started) and the size and digest of what the
    /// client received.
    fn outcome(&self, output: &str) -> Vec<(&'static str, Value)> {
        let mut fields = self.identity();
        let micros = self.started.map_or(0, |s| s.elapsed().as_micros());
        fields.push((
            "duration_us",
            Value::from(u64::try_from(micros).unwrap_or(u64::MAX)),
        ));
        fields.push(("output_bytes", Value::from(output.len())));
        fields.push((
            "output_sha256",
            Value::from(sha256::hex_digest(output.as_bytes())),
        ));
        if self.cancelled {
            fields.push(("cancelled", Value::from(true)));
        }
        fields
    }
}

impl Drop for AuditedCall<'_> {
    fn drop(&mut self) {
        if !self.finished {
            // Best effort: a failure here has already disabled the log for the next call.
            let _ = self.reject(-32603, "the call ended without an outcome");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_disables_the_log_for_good() {
        let path =
            std::env::temp_dir().join(format!("agentteams-audit-unit-{}.log", std::process::id()));
        let log = AuditLog::open(&path, &RunInfo::default(), Mode::Redacted).unwrap();
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        log.lock().file = OpenOptions::new().append(true).open("/dev/full").unwrap();
        let head = log.head();
        let args = Value::Object(Map::new());
        let err = log.call_requested(None, None, "t", &args).err().unwrap();
        assert!(matches!(err, AuditError::Io { .. }), "{err}");
        assert_eq!(
            log.head(),
            head,
            "the chain does not advance past a failed write"
        );
        // Even with a working file back, the log stays shut: the failed record's fate is unknown.
        log.lock().file = OpenOptions::new().append(true).open(&path).unwrap();
        let err = log.call_requested(None, None, "t", &args).err().unwrap();
        assert!(matches!(err, AuditError::Disabled { .. }), "{err}");
        assert!(err.to_string().contains("an earlier write failed"));
        assert!(log.complete_run().is_err());
        std::fs::remove_file(&path).unwrap();
    }
}
