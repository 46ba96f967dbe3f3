//! The Server-Sent Events format (WHATWG event stream) both ways: events written as the server
//! sends them (a line break in the data starts a new `data:` line, so no payload can end an event
//! or inject a field; one event to an HTTP chunk), and a parser fed bytes as they arrive.
//!
//! The parser handles `data` (multi-line), `event`, `id` and `retry` fields, comments, CR/LF/CRLF line ends
//! and id-only "priming" events (which update the last event id but dispatch nothing). Memory is
//! bounded by the cap given to [`SseParser::new`]: one line or one event's data past it is an error.

use super::chunked::{encode_chunk, LAST_CHUNK};
use std::fmt;
use std::time::Duration;

/// Bytes a line may hold beyond the event cap, for its field name (`data: `).
const FIELD_NAME_ALLOWANCE: usize = 64;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type (`message` unless the stream named another).
    pub event: String,
    pub data: String,
}

/// An event (or one line) larger than the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseTooLarge {
    pub limit: usize,
}

impl fmt::Display for SseTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server sent an SSE event larger than {} bytes (the response size cap)",
            self.limit
        )
    }
}

/// Parser state across `feed` calls.
#[derive(Debug)]
pub struct SseParser {
    max_event_bytes: usize,
    line: Vec<u8>,
    /// The previous byte was CR, so a following LF belongs to the same line end.
    after_cr: bool,
    data: String,
    has_data: bool,
    event: String,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
}

impl SseParser {
    pub fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            has_data: false,
            event: String::new(),
            last_event_id: None,
            retry_ms: None,
        }
    }

    /// The id of the last event that carried one (what `Last-Event-ID` resumes from).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server asked for, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Starts reading a new stream (a reconnection): a half-read line or event of the old one is
    /// dropped; the last event id and retry delay are kept.
    pub fn new_stream(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.data.clear();
        self.has_data = false;
        self.event.clear();
    }

    /// Parses `input`, appending complete events to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseTooLarge> {
        for &b in input {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' | b'\n' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out)?;
                    self.line = line;
                    self.line.clear();
                }
                _ => {
                    if self.line.len() >= self.max_event_bytes + FIELD_NAME_ALLOWANCE {
                        return Err(SseTooLarge {
                            limit: self.max_event_bytes,
                        });
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseTooLarge> {
        if line.is_empty() {
            if self.has_data {
                let event = if self.event.is_empty() {
                    "message".to_owned()
                } else {
                    std::mem::take(&mut self.event)
                };
                out.push(SseEvent {
                    event,
                    data: std::mem::take(&mut self.data),
                });
            }
            self.data.clear();
            self.has_data = false;
            self.event.clear();
            return Ok(());
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.find(':') {
            Some(0) => return Ok(()),
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event_bytes {
                    return Err(SseTooLarge {
                        limit: self.max_event_bytes,
                    });
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
        Ok(())
    }
}

/// Appends one `message` event carrying `data`. A line break in `data` (CRLF, CR or LF) starts a
/// new `data:` line, so no payload can end the event early or inject fields; a reader joins the
/// lines with LF (compact JSON has no raw line breaks, so MCP messages arrive unchanged).
pub fn encode_event(data: &str, out: &mut Vec<u8>) {
    encode_typed_event("message", data, out);
}

/// Appends one event of type `kind` (the server's own word, e.g. `endpoint`) carrying `data`,
/// split into `data:` lines as [`encode_event`] does.
pub fn encode_typed_event(kind: &str, data: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.push(b'\n');
    let mut rest = data;
    loop {
        let end = rest.find(['\r', '\n']).unwrap_or(rest.len());
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&rest.as_bytes()[..end]);
        out.push(b'\n');
        if end == rest.len() {
            break;
        }
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }
    out.push(b'\n');
}

/// Appends one `message` event carrying `data` under event id `id` (the server's own id, with no
/// line breaks).
pub fn encode_event_with_id(id: &str, data: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.push(b'\n');
    encode_event(data, out);
}

/// Appends a priming event (SEP-1699): an id to resume from, the reconnection delay the client
/// should wait, and empty data.
pub fn encode_priming(id: &str, retry: Duration, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis()).as_bytes());
}

/// A comment line an idle stream sends so that proxies and clients see it alive.
pub const KEEPALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// Appends one event framed as one HTTP chunk.
pub fn encode_event_chunk(data: &str, out: &mut Vec<u8>) {
    let mut event = Vec::with_capacity(data.len() + 32);
    encode_event(data, &mut event);
    encode_chunk(&event, out);
}

/// Appends the final event and the end of the chunked body.
pub fn encode_last_event(data: &str, out: &mut Vec<u8>) {
    encode_event_chunk(data, out);
    out.extend_from_slice(LAST_CHUNK);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_payload_is_one_data_line() {
        let mut out = Vec::new();
        encode_event(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &mut out);
        assert_eq!(
            out,
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
        );
    }

    #[test]
    fn line_breaks_cannot_end_the_event_or_inject_fields() {
        let mut out = Vec::new();
        encode_event("a\r\n\r\nid: 7\rb\nretry: 1\n", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "event: message\ndata: a\ndata: \ndata: id: 7\ndata: b\ndata: retry: 1\ndata: \n\n"
        );
    }

    #[test]
    fn ids_and_priming_events_precede_their_fields() {
        let mut out = Vec::new();
        encode_priming("r.00000000.1.0", Duration::from_millis(500), &mut out);
        encode_event_with_id("r.00000000.1.1", "{}", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "id: r.00000000.1.0\nretry: 500\ndata: \n\nid: r.00000000.1.1\nevent: message\ndata: {}\n\n"
        );
    }

    fn parse_all(input: &[u8]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new(1024);
        let mut out = Vec::new();
        p.feed(input, &mut out).unwrap();
        (out, p)
    }

    #[test]
    fn events_fields_comments_and_line_ends() {
        let (events, p) = parse_all(
            b": keep-alive\r\nid: event-1\r\nretry: 500\r\ndata:\r\n\r\nevent: message\ndata: {\"a\":\ndata:1}\n\nid: 7\rdata: x\r\r",
        );
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "message".into(),
                    data: "".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "x".into()
                },
            ]
        );
        assert_eq!(p.last_event_id(), Some("7"));
        assert_eq!(p.retry_ms(), Some(500));
    }

    #[test]
    fn id_only_priming_event_updates_the_id_without_dispatching() {
        let (events, p) = parse_all(b"id: e1\nretry: 250\n\n");
        assert!(events.is_empty());
        assert_eq!(p.last_event_id(), Some("e1"));
        assert_eq!(p.retry_ms(), Some(250));
        let (_, p) = parse_all(b"retry: soon\n\n");
        assert_eq!(p.retry_ms(), None);
    }

    #[test]
    fn byte_by_byte_equals_all_at_once() {
        let input = b"event: message\r\ndata: {\"x\":1}\r\n\r\ndata: y\n\n";
        let (whole, _) = parse_all(input);
        let mut p = SseParser::new(1024);
        let mut out = Vec::new();
        for b in input {
            p.feed(std::slice::from_ref(b), &mut out).unwrap();
        }
        assert_eq!(out, whole);
    }

    #[test]
    fn cap_applies_to_lines_and_to_joined_data() {
        let mut p = SseParser::new(8);
        let mut out = Vec::new();
        let long = [b'x'; 8 + FIELD_NAME_ALLOWANCE + 1];
        assert!(
            p.feed(&long, &mut out).is_err(),
            "a line is bounded before it ends"
        );
        let mut p = SseParser::new(8);
        assert_eq!(
            p.feed(b"data:12345\ndata:12345\n", &mut out),
            Err(SseTooLarge { limit: 8 })
        );
        let mut p = SseParser::new(8);
        p.feed(b"data:1234567\n\n", &mut out).unwrap();
        assert_eq!(out.last().unwrap().data, "1234567");
    }
}
