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

use super::request::RequestHead;
use crate::json::{self, Map, Value};
use crate::sha256;
use std::io::Write;
#[cfg(test)]
use std::time::UNIX_EPOCH;
use std::time::{Duration, SystemTime};

/// Hex digits of the session digest logged (64 bits: enough to follow one session, useless to
/// replay it).
pub const SESSION_DIGEST_HEX: usize = 16;

/// Longest path logged; a longer one is cut (the head limit already bounds it at 8 KiB).
pub const MAX_LOGGED_PATH: usize = 256;

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
        let path = &path[..floor_char_boundary(path, MAX_LOGGED_PATH)];
        let mut m = Map::with_capacity(7);
        m.insert("time", Value::from(time.as_str()));
        m.insert("method", Value::from(self.method));
        m.insert("path", Value::from(path));
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
        m.insert("tool", self.tool.map_or(Value::Null, Value::from));
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

/// The largest index at most `max` that falls on a character boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    (0..=max.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
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
        assert!(json::parse(line.as_bytes()).is_ok());
        assert!(line.len() < MAX_LOGGED_PATH + 200);
    }
}
