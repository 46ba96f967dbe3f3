//! The access log (`--access-log`): one JSON line per answered request on stderr, for operators
//! and their log shippers.
//!
//! A line holds the time (UTC, milliseconds), method, path (without the query, which may carry
//! anything), status, duration in milliseconds, a digest of the `Mcp-Session-Id` (never the id:
//! a live id, sealed or not, is a credential) and the tool a `tools/call` named:
//!
//! ```text
//! {"time":"2026-12-01T17:28:46.123Z","method":"POST","path":"/mcp","status":200,"duration_ms":1.25,"session":"sha256:0c1f5e2a9b3d4e6f","tool":"git_log"}
//! ```
//!
//! The fields a client chooses (method, path, tool) go through the one sanitiser
//! ([`sanitize_line_within`]: a terminal control, bidi override or invisible character in a tool
//! name shows as its escape) and are cut at [`MAX_LOGGED_FIELD`] bytes, so no line is longer than
//! [`MAX_LINE_BYTES`] whatever a request holds. Lines reach stderr through a [`LogWriter`], so
//! a destination that stops reading delays no request by more than [`WRITE_WAIT`] once.

use crate::http1::request::RequestHead;
use crate::json::{self, obj, Map, Value};
use crate::sanitize::sanitize_line_within;
use crate::sha256;
use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
#[cfg(test)]
use std::time::UNIX_EPOCH;
use std::time::{Duration, SystemTime};

/// Hex digits of the session digest logged (64 bits: enough to follow one session, useless to
/// replay it).
pub const SESSION_DIGEST_HEX: usize = 16;

/// Bytes of each field a client chooses (method, path, tool), after escaping, kept in a line; a
/// longer one is cut there and marked `…[cut from N bytes]`.
pub const MAX_LOGGED_FIELD: usize = 256;

/// The longest line written, newline excluded: the fixed fields and three cut client-chosen
/// fields, each at most doubled by JSON's escaping of `\` and `"` (the sanitiser leaves no
/// control character for JSON to escape longer).
pub const MAX_LINE_BYTES: usize = 2048;

/// What one line records.
pub struct Entry<'a> {
    pub method: &'a str,
    pub target: &'a str,
    pub status: u16,
    pub duration: Duration,
    /// The raw `Mcp-Session-Id`, digested before it is written.
    pub session: Option<&'a [u8]>,
    pub tool: Option<&'a str>,
}

impl<'a> Entry<'a> {
    /// The line's fields that come from the request head.
    pub fn from_head(head: &'a RequestHead<'a>) -> Entry<'a> {
        Entry {
            method: head.method,
            target: head.target,
            status: 0,
            duration: Duration::ZERO,
            session: head.single("mcp-session-id").ok().flatten(),
            tool: None,
        }
    }

    /// The JSON line (without its newline) for a request answered at `now`.
    pub fn line(&self, now: SystemTime) -> String {
        // The audit log's time format, so the two logs line up.
        let time = crate::time::rfc3339(now);
        let path = self.target.split('?').next().unwrap_or_default();
        let mut m = Map::with_capacity(7);
        m.insert("time", Value::from(time.as_str()));
        m.insert("method", client_chosen(self.method));
        m.insert("path", client_chosen(path));
        m.insert("status", Value::from(i64::from(self.status)));
        // Microsecond resolution, as milliseconds.
        let micros = self.duration.as_micros().min(i64::MAX as u128) as f64;
        m.insert("duration_ms", Value::from(micros / 1000.0));
        m.insert(
            "session",
            match self.session {
                Some(id) => Value::from(
                    format!("sha256:{}", &sha256::hex_digest(id)[..SESSION_DIGEST_HEX]).as_str(),
                ),
                None => Value::Null,
            },
        );
        m.insert("tool", self.tool.map_or(Value::Null, client_chosen));
        json::to_string(&Value::Object(m))
    }

    /// Hands the line to stderr's [`LogWriter`] (lines of concurrent requests never interleave);
    /// a closed stderr is ignored, as logging must not fail a request.
    pub fn write(&self) {
        static STDERR: OnceLock<Arc<LogWriter>> = OnceLock::new();
        let mut line = self.line(SystemTime::now());
        line.push('\n');
        STDERR
            .get_or_init(|| LogWriter::start(std::io::stderr()))
            .push(line);
    }
}

/// Writes lines to a destination on a thread of its own, so that a destination that stops
/// reading (a pipe nobody drains) cannot hold the requests whose lines they are.
///
/// A request waits for its line to be written, as long as the destination keeps taking lines:
/// what was answered is logged before the server can exit. Once a wait lasts [`WRITE_WAIT`], the
/// destination counts as stalled and later requests queue their line without waiting; when
/// [`MAX_QUEUED_LINES`] wait, further lines are dropped, counted, and the count is written as
/// its own line (`{"time":...,"dropped_lines":N}`) when there is room again.
pub struct LogWriter {
    queue: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<String>,
    /// Lines queued and lines written since the start: a line is written once `written` reaches
    /// its number.
    queued: u64,
    written: u64,
    dropped: u64,
    /// A wait timed out and the destination has taken no line since.
    stalled: bool,
}

/// Lines queued for a stalled destination before further lines are dropped (with
/// [`MAX_LINE_BYTES`], at most 2 MiB held).
pub const MAX_QUEUED_LINES: usize = 1024;

/// How long a request waits for its line to be written before it takes the destination as
/// stalled and goes on.
pub const WRITE_WAIT: Duration = Duration::from_millis(100);

impl LogWriter {
    /// A writer to `sink`, with its thread started.
    pub fn start(mut sink: impl Write + Send + 'static) -> Arc<LogWriter> {
        let writer = Arc::new(LogWriter {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        });
        let own = writer.clone();
        let _ = std::thread::Builder::new()
            .name("access-log".into())
            .spawn(move || loop {
                let line = {
                    let mut queue = own.lock();
                    loop {
                        match queue.lines.pop_front() {
                            Some(line) => break line,
                            None => queue = wait(own.changed.wait(queue)),
                        }
                    }
                };
                let _ = sink.write_all(line.as_bytes()).and_then(|()| sink.flush());
                let mut queue = own.lock();
                queue.written += 1;
                queue.stalled = false;
                own.changed.notify_all();
            });
        writer
    }

    /// Queues `line` (newline included) and waits for it to be written unless the destination
    /// is stalled; drops it when [`MAX_QUEUED_LINES`] are waiting.
    pub fn push(&self, line: String) {
        let mut queue = self.lock();
        if queue.lines.len() >= MAX_QUEUED_LINES {
            queue.dropped += 1;
            return;
        }
        if queue.dropped > 0 {
            let notice = obj([
                (
                    "time",
                    Value::from(crate::time::rfc3339(SystemTime::now()).as_str()),
                ),
                (
                    "dropped_lines",
                    Value::from(std::mem::take(&mut queue.dropped)),
                ),
            ]);
            queue.lines.push_back(json::to_string(&notice) + "\n");
            queue.queued += 1;
        }
        queue.lines.push_back(line);
        queue.queued += 1;
        let mine = queue.queued;
        self.changed.notify_all();
        if queue.stalled {
            return;
        }
        let (mut queue, _) = wait(
            self.changed
                .wait_timeout_while(queue, WRITE_WAIT, |q| q.written < mine),
        );
        if queue.written < mine {
            queue.stalled = true;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        wait(self.queue.lock())
    }
}

/// The guard of a lock or wait; a panic elsewhere while holding it leaves the queue usable.
fn wait<G>(result: Result<G, PoisonError<G>>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}

/// A field the client chose, as logged: escaped by the one sanitiser (the line reaches an
/// operator's terminal), and cut at [`MAX_LOGGED_FIELD`] with a marker naming its full length.
fn client_chosen(text: &str) -> Value {
    match sanitize_line_within(text, MAX_LOGGED_FIELD) {
        (kept, false) => Value::from(&*kept),
        (kept, true) => {
            Value::from(format!("{kept}\u{2026}[cut from {} bytes]", text.len()).as_str())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_json_object_with_a_digest_not_the_session() {
        let entry = Entry {
            method: "POST",
            target: "/mcp?secret=1",
            status: 200,
            duration: Duration::from_micros(1250),
            session: Some(b"the-session-id"),
            tool: Some("git_log"),
        };
        let at = UNIX_EPOCH + Duration::from_millis(1_796_146_126_123);
        let line = entry.line(at);
        assert_eq!(
            line,
            format!(
                r#"{{"time":"2026-12-01T17:28:46.123Z","method":"POST","path":"/mcp","status":200,"duration_ms":1.25,"session":"sha256:{}","tool":"git_log"}}"#,
                &sha256::hex_digest(b"the-session-id")[..16]
            )
        );
        assert!(!line.contains("the-session-id") && !line.contains("secret"));
        let bare = Entry {
            session: None,
            tool: None,
            target: "/healthz",
            ..entry
        };
        assert!(bare.line(at).ends_with(
            r#""path":"/healthz","status":200,"duration_ms":1.25,"session":null,"tool":null}"#
        ));
    }

    /// An entry whose tool name is `tool`, everything else plain.
    fn calling(tool: &str) -> String {
        Entry {
            method: "POST",
            target: "/mcp",
            status: 200,
            duration: Duration::ZERO,
            session: None,
            tool: Some(tool),
        }
        .line(UNIX_EPOCH)
    }

    #[test]
    fn a_tool_name_reaches_the_line_escaped_never_raw() {
        for (hostile, escape) in [
            ("\u{9b}31m", "\\\\x9b31m"),
            ("\u{1b}]52;c;eA==\u{7}", "\\\\x1b]52;c;eA==\\\\x07"),
            ("admin\u{202e}txt", "admin\\\\u{202e}txt"),
            ("\u{2066}x\u{2069}", "\\\\u{2066}x\\\\u{2069}"),
            ("line\u{2028}break", "line\\\\u{2028}break"),
            ("zero\u{200b}width", "zero\\\\u{200b}width"),
            ("new\nline\rtab\t", "new\\\\x0aline\\\\x0dtab\\\\x09"),
        ] {
            let line = calling(&format!("git_log{hostile}"));
            assert!(
                line.ends_with(&format!(r#""tool":"git_log{escape}"}}"#)),
                "{hostile:?}: {line}"
            );
            assert!(
                line.chars().all(|c| (' '..='~').contains(&c)),
                "{hostile:?}: {line}"
            );
            assert!(json::parse(line.as_bytes()).is_ok(), "{line}");
        }
    }

    #[test]
    fn a_huge_tool_name_is_cut_with_a_marker_and_the_line_stays_under_its_cap() {
        let huge = format!("{}\u{202e}", "x".repeat(200 * 1024));
        let line = calling(&huge);
        assert!(line.len() <= MAX_LINE_BYTES, "{}", line.len());
        let tool = json::parse(line.as_bytes()).unwrap();
        let tool = tool.get("tool").and_then(Value::as_str).unwrap().to_owned();
        assert_eq!(
            tool,
            format!(
                "{}\u{2026}[cut from {} bytes]",
                "x".repeat(MAX_LOGGED_FIELD),
                huge.len()
            )
        );
        // The worst case: every client-chosen field as long as the head and body allow, of the
        // characters whose escapes JSON lengthens again.
        let worst = "\"\\\u{9b}\u{e0041}".repeat(100_000);
        let target = format!("/{}", "\\".repeat(8 * 1024));
        let entry = Entry {
            method: &"M".repeat(8 * 1024),
            target: &target,
            status: 599,
            duration: Duration::MAX,
            session: Some(&[0xff; 1024][..]),
            tool: Some(&worst),
        };
        let line = entry.line(UNIX_EPOCH);
        assert!(line.len() <= MAX_LINE_BYTES, "{}: {line}", line.len());
        assert!(json::parse(line.as_bytes()).is_ok(), "{line}");
        // A cut never splits an escape: what is kept is a run of whole units (`"`, `\`, `\x9b`,
        // `\u{e0041}`: 15 bytes a repetition).
        let tool = json::parse(line.as_bytes()).unwrap();
        let tool = tool.get("tool").and_then(Value::as_str).unwrap().to_owned();
        let (kept, marker) = tool.split_once('\u{2026}').unwrap();
        assert!(crate::sanitize::sanitize_line(&worst).starts_with(kept));
        assert!([0, 1, 2, 6].contains(&(kept.len() % 15)), "{kept}");
        assert_eq!(marker, format!("[cut from {} bytes]", worst.len()));
    }

    /// A destination that takes nothing until opened, and keeps what it is given.
    #[derive(Clone, Default)]
    struct Gate {
        open: Arc<(Mutex<bool>, Condvar)>,
        taken: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let (open, opened) = &*self.open;
            let _open = wait(opened.wait_while(wait(open.lock()), |open| !*open));
            wait(self.taken.lock()).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Returns once the writer has taken every queued line (a line in the sink's hands is no
    /// longer queued).
    fn until_empty(writer: &LogWriter) {
        while !writer.lock().lines.is_empty() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_stalled_destination_queues_then_drops_and_counts_and_never_holds_a_request() {
        let gate = Gate::default();
        let writer = LogWriter::start(gate.clone());
        // The first line waits once, then the destination counts as stalled: the queue fills
        // without waits, and lines beyond it are dropped.
        writer.push("first\n".to_owned());
        until_empty(&writer);
        for i in 0..MAX_QUEUED_LINES + 5 {
            writer.push(format!("line {i}\n"));
        }
        assert_eq!(writer.lock().dropped, 5);
        assert!(wait(gate.taken.lock()).is_empty());
        // Opened again: every queued line is written, in order, then the count of those dropped
        // before the next line, which waits for its own writing again.
        *wait(gate.open.0.lock()) = true;
        gate.open.1.notify_all();
        until_empty(&writer);
        writer.push("after\n".to_owned());
        let taken = String::from_utf8(wait(gate.taken.lock()).clone()).unwrap();
        let lines: Vec<&str> = taken.lines().collect();
        assert_eq!(lines.len(), MAX_QUEUED_LINES + 3, "{taken}");
        assert_eq!(lines[0], "first");
        assert_eq!(
            lines[MAX_QUEUED_LINES],
            format!("line {}", MAX_QUEUED_LINES - 1)
        );
        let notice = json::parse(lines[MAX_QUEUED_LINES + 1].as_bytes()).unwrap();
        assert_eq!(notice.get("dropped_lines").and_then(Value::as_u64), Some(5));
        assert_eq!(lines[MAX_QUEUED_LINES + 2], "after");
        assert!(!writer.lock().stalled);
    }

    #[test]
    fn long_paths_are_cut_on_a_character_boundary() {
        let target = format!("/{}", "é".repeat(300));
        let entry = Entry {
            method: "GET",
            target: &target,
            status: 404,
            duration: Duration::ZERO,
            session: None,
            tool: None,
        };
        let line = entry.line(UNIX_EPOCH);
        let path = json::parse(line.as_bytes()).unwrap();
        let path = path.get("path").and_then(Value::as_str).unwrap().to_owned();
        assert_eq!(
            path,
            format!("/{}\u{2026}[cut from 601 bytes]", "é".repeat(127))
        );
    }
}
