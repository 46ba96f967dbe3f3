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
//! [`MAX_LINE_BYTES`] whatever a request holds.

use super::request::RequestHead;
use crate::json::{self, Map, Value};
use crate::sanitize::sanitize_line_within;
use crate::sha256;
use std::io::Write;
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
        let time = crate::audit::rfc3339(now);
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

    /// Writes the line to stderr in one call (lines of concurrent requests never interleave);
    /// a closed stderr is ignored, as logging must not fail a request.
    pub fn write(&self) {
        let mut line = self.line(SystemTime::now());
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
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
