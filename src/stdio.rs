//! The stdio transport: newline-delimited JSON-RPC on a reader and a writer (stdin and stdout).
//!
//! One compact JSON message per line out, flushed per message. In: lines of at most
//! [`MAX_LINE_BYTES`] (longer ones get one -32700 and are skipped without ever being held whole),
//! blank lines ignored, `\r\n` tolerated, malformed JSON or invalid UTF-8 answered with -32700; the
//! loop never stops on bad input. Tool calls run on a worker thread in arrival order while the
//! reader keeps reading, so `ping` is answered at once and `notifications/cancelled` reaches a
//! running call. At end of input, queued work gets [`EOF_GRACE`] to finish, then everything still
//! running is cancelled and the function returns.

use crate::json::{self, Value};
use crate::server::{CancelToken, Notify, Session};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// The longest line accepted, in bytes, counting its newline (the reference's 1 MiB, in bytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How many parsed requests may wait for the worker before the reader stops reading (backpressure).
pub const MAX_QUEUED_REQUESTS: usize = 64;

/// After end of input, how long queued and running calls may go on before they are cancelled.
/// Hosts close stdin and send SIGTERM about 2 s later; shell pipelines need their replies.
pub const EOF_GRACE: Duration = Duration::from_millis(1000);

/// What the line reader produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line within the cap, without its newline.
    Text(Vec<u8>),
    /// A line over the cap; its bytes were discarded. `blank` when all of them were whitespace.
    Overlong { blank: bool },
}

/// Whitespace as Python's `str.strip()` sees it in ASCII (the reference skips such lines).
pub(crate) fn is_blank_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1f)
}

/// Splits input on `\n`, holding at most `max` bytes ([`MAX_LINE_BYTES`] by default) of any line:
/// of a longer one only its first `max` bytes are kept ([`LineReader::overlong_head`]).
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    max: usize,
}

impl<R: Read> LineReader<R> {
    fn new(inner: R) -> Self {
        LineReader::with_limit(inner, MAX_LINE_BYTES)
    }

    /// A reader whose lines may hold up to `max` bytes, counting the newline (the client's
    /// response cap).
    pub(crate) fn with_limit(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            line: Vec::new(),
            max,
        }
    }

    /// The first `max` bytes of the line [`next_line`](Self::next_line) just returned as
    /// [`Line::Overlong`] (the rest was read and dropped); empty after a [`Line::Text`].
    pub(crate) fn overlong_head(&self) -> &[u8] {
        &self.line
    }

    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.line.clear();
        let mut total = 0usize;
        let mut overlong = false;
        let mut blank = true;
        let mut saw_bytes = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if !saw_bytes {
                    return Ok(None);
                }
                break;
            }
            saw_bytes = true;
            let (part, ends_line) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..=i], true),
                None => (chunk, false),
            };
            total += part.len();
            if overlong {
                blank &= part.iter().all(|&b| is_blank_byte(b));
            } else if total > self.max {
                overlong = true;
                blank = self.line.iter().chain(part).all(|&b| is_blank_byte(b));
                // Keep the head (exactly `max` bytes) for callers that show where it was cut.
                let room = self.max - self.line.len();
                self.line.extend_from_slice(&part[..room]);
            } else {
                self.line.extend_from_slice(part);
            }
            let consumed = part.len();
            self.inner.consume(consumed);
            if ends_line {
                break;
            }
        }
        if overlong {
            return Ok(Some(Line::Overlong { blank }));
        }
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        }
        Ok(Some(Line::Text(std::mem::take(&mut self.line))))
    }
}

/// The writing end: one line per message, serialised across threads, flushed each time.
struct LineWriter<W> {
    out: Mutex<W>,
    failed: AtomicBool,
    error: Mutex<Option<io::Error>>,
}

impl<W: Write> LineWriter<W> {
    fn send(&self, message: &Value) {
        let mut line = json::to_string(message);
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if self.failed.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            self.failed.store(true, Ordering::SeqCst);
            *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
        }
    }
}

impl<W: Write + Send> Notify for LineWriter<W> {
    fn notify(&self, notification: Value) {
        self.send(&notification);
    }
}

/// Serves `session` over newline-delimited JSON-RPC until `input` ends. Returns an error only when
/// reading the input or writing the output fails.
pub fn serve<R: Read, W: Write + Send>(session: &Session, input: R, output: W) -> io::Result<()> {
    let writer = LineWriter {
        out: Mutex::new(output),
        failed: AtomicBool::new(false),
        error: Mutex::new(None),
    };
    let mut lines = LineReader::new(input);
    let read_result = std::thread::scope(|scope| {
        let (queue, queued) = mpsc::sync_channel::<(Value, CancelToken)>(MAX_QUEUED_REQUESTS);
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let writer = &writer;
        // Notifications outside any request (resource updates) are written as they come, until
        // the session's channel is closed below.
        let forwarder = session.take_notifications().map(|pushed| {
            scope.spawn(move || {
                for notification in pushed {
                    writer.send(&notification);
                }
            })
        });
        let worker = scope.spawn(move || {
            for (message, cancel) in queued {
                if cancel.is_cancelled() {
                    continue;
                }
                if let Some(reply) = session.handle_message_with(message, writer, cancel) {
                    writer.send(&reply);
                }
            }
            let _ = done_tx.send(());
        });

        let result = loop {
            if writer.failed.load(Ordering::SeqCst) {
                break Ok(());
            }
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            let bytes = match line {
                Line::Overlong { blank: true } => continue,
                Line::Overlong { blank: false } => {
                    let detail = format!("line longer than {MAX_LINE_BYTES} bytes");
                    writer.send(&session.parse_error_reply(Some(&detail)));
                    continue;
                }
                Line::Text(bytes) if bytes.iter().all(|&b| is_blank_byte(b)) => continue,
                Line::Text(bytes) => bytes,
            };
            let message = match json::parse(&bytes) {
                Ok(message) => message,
                Err(e) => {
                    writer.send(&session.parse_error_reply(Some(&e.to_string())));
                    continue;
                }
            };
            if Session::is_urgent(&message) {
                if let Some(reply) = session.handle_message(message) {
                    writer.send(&reply);
                }
                continue;
            }
            let cancel = session.track_request(&message);
            if queue.send((message, cancel)).is_err() {
                break Ok(());
            }
        };
        drop(queue);
        if done_rx.recv_timeout(EOF_GRACE).is_err() {
            session.cancel_all();
        }
        // Join the OS thread itself (the scope's implicit join only waits for the closure), so
        // nothing of the worker outlives this call.
        session.close_notifications();
        let forwarded = forwarder.map_or(Ok(()), |f| f.join());
        if worker.join().is_err() || forwarded.is_err() {
            return Err(io::Error::other("a stdio worker thread panicked"));
        }
        result
    });
    read_result?;
    match writer.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // A reader that went away is the normal end of a conversation, not a failure.
        Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Line> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn splits_on_newline_and_keeps_a_final_unterminated_line() {
        assert_eq!(
            lines(b"a\r\n\nb"),
            vec![
                Line::Text(b"a\r".to_vec()),
                Line::Text(Vec::new()),
                Line::Text(b"b".to_vec())
            ]
        );
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn line_cap_is_exact_and_counts_the_newline() {
        let mut at_cap = vec![b'x'; MAX_LINE_BYTES - 1];
        at_cap.push(b'\n');
        assert_eq!(
            lines(&at_cap),
            vec![Line::Text(vec![b'x'; MAX_LINE_BYTES - 1])]
        );
        let mut over = vec![b'x'; MAX_LINE_BYTES];
        over.extend_from_slice(b"\n1\n");
        assert_eq!(
            lines(&over),
            vec![Line::Overlong { blank: false }, Line::Text(b"1".to_vec())]
        );
        let mut reader = LineReader::with_limit(&b"abcdefgh\nij"[..], 4);
        assert_eq!(
            reader.next_line().unwrap(),
            Some(Line::Overlong { blank: false })
        );
        assert_eq!(reader.overlong_head(), b"abcd");
        assert_eq!(
            reader.next_line().unwrap(),
            Some(Line::Text(b"ij".to_vec()))
        );
        assert_eq!(reader.overlong_head(), b"");
        let mut spaces = vec![b' '; 2 * MAX_LINE_BYTES];
        spaces.push(b'\n');
        assert_eq!(lines(&spaces), vec![Line::Overlong { blank: true }]);
    }
}
