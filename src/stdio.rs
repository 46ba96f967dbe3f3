//! The stdio transport: newline-delimited JSON-RPC on a reader and a writer (stdin and stdout).
//!
//! One compact JSON message per line out, written as soon as it is ready, except that replies to
//! requests that arrived together go out together. In: lines of at most [`MAX_LINE_BYTES`]
//! (longer ones get one -32700 and are skipped without ever being held whole), blank lines
//! ignored, `\r\n` tolerated, malformed JSON or invalid UTF-8 answered with -32700; the loop never
//! stops on bad input. Requests run one at a time in arrival order, on whichever of two threads
//! read them, and a call that runs long has the other thread read on meanwhile, so `ping` is
//! answered and `notifications/cancelled` reaches the running call (see [`serve`]); where the
//! engine's wire answers in request order ([`crate::server::Wire::Minimal`]), such a reply waits
//! for the replies to the requests read before it. At end of
//! input, queued work gets [`EOF_GRACE`] to finish, then everything still running is cancelled
//! and the function returns.

use crate::json::{self, Value};
use crate::server::{CancelToken, Notify, Session};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The longest line accepted, in bytes, counting its newline (the reference's 1 MiB, in bytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How many parsed requests may wait behind a running one before the reader stops reading
/// (backpressure).
pub const MAX_QUEUED_REQUESTS: usize = 64;

/// Replies held back while more requests are already read (see [`serve`]) are written once they
/// reach this many bytes.
pub const MAX_HELD_BYTES: usize = 64 * 1024;

/// How often the thread that is not reading looks whether the input needs it: when the thread that
/// read last has been running one call for a whole look, it takes over reading. So a `ping`, a
/// cancellation or a response waits at most two looks behind a long call.
pub const READER_HANDOVER: Duration = Duration::from_millis(2);

/// After this many looks in a row that saw no request begin, the looking thread sleeps until one
/// begins (an idle server wakes no thread).
const LOOKS_BEFORE_SLEEPING: u32 = 50;

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

    /// Whether a whole line is already read from the input (the next [`next_line`](Self::next_line)
    /// does not wait for it).
    fn has_line(&self) -> bool {
        self.inner.buffer().contains(&b'\n')
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

/// The writing end: one line per message, serialised across threads. A message is written at
/// once, together with any held before it, except a reply [`LineWriter::hold`] keeps back while
/// the reader already has the next request in hand (pipelined requests then cost one write for
/// several replies).
struct LineWriter<W> {
    out: Mutex<Output<W>>,
    failed: AtomicBool,
    error: Mutex<Option<io::Error>>,
}

struct Output<W> {
    sink: W,
    /// Lines not written yet, each with its newline: bytes, so that the writer checks none of them
    /// as UTF-8 on their way out.
    held: Vec<u8>,
}

impl<W: Write> LineWriter<W> {
    fn new(sink: W) -> Self {
        LineWriter {
            out: Mutex::new(Output {
                sink,
                held: Vec::new(),
            }),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    fn send(&self, message: &Value) {
        self.put(Some(message), true);
    }

    /// Keeps `message` back until the next message that is sent, or [`flush`](Self::flush), or
    /// until [`MAX_HELD_BYTES`] are held.
    fn hold(&self, message: &Value) {
        self.put(Some(message), false);
    }

    /// Writes what is held.
    fn flush(&self) {
        self.put(None, true);
    }

    fn put(&self, message: Option<&Value>, write: bool) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if self.failed.load(Ordering::SeqCst) {
            return;
        }
        let out = &mut *out;
        if let Some(message) = message {
            json::write_compact(message, &mut out.held);
            out.held.push(b'\n');
        }
        if out.held.is_empty() || !(write || out.held.len() >= MAX_HELD_BYTES) {
            return;
        }
        let written = out.sink.write_all(&out.held);
        out.held.clear();
        if out.held.capacity() > MAX_HELD_BYTES {
            out.held.shrink_to(MAX_HELD_BYTES);
        }
        if let Err(e) = written.and_then(|()| out.sink.flush()) {
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
///
/// Two threads share the work without handing each request from one to the other (a thread
/// wake-up per request costs more than serving a trivial call): the thread that reads a request
/// runs it at once when nothing else runs, and the other thread, checking every
/// [`READER_HANDOVER`], takes over reading meanwhile, so urgent messages (`ping`, cancellations,
/// responses) are answered while a long call runs. Requests read while a call runs wait in
/// arrival order (at most [`MAX_QUEUED_REQUESTS`]) for the running thread to take them.
pub fn serve<R: Read + Send, W: Write + Send>(
    session: &Session,
    input: R,
    output: W,
) -> io::Result<()> {
    let writer = LineWriter::new(output);
    // One request runs at a time here: a listen stream must not hold the line.
    session.defer_listens();
    let shared = Shared {
        session,
        in_order: session.engine().wire().answers_in_order(),
        writer: &writer,
        input: Mutex::new(LineReader::new(input)),
        turns: Mutex::new(Turns::default()),
        changed: Condvar::new(),
    };
    let read_result = std::thread::scope(|scope| {
        // Notifications outside any request (resource updates) are written as they come, until
        // the session's channel is closed below.
        let writer = &writer;
        let forwarder = session.take_notifications().map(|pushed| {
            scope.spawn(move || {
                for notification in pushed {
                    writer.send(&notification);
                }
            })
        });
        let shared = &shared;
        let second = scope.spawn(move || shared.serve_turns());
        shared.serve_turns();
        // Join the OS threads themselves (the scope's implicit join only waits for the
        // closures), so nothing of them outlives this call.
        let second = second.join();
        session.close_notifications();
        let forwarded = forwarder.map_or(Ok(()), |f| f.join());
        if second.is_err() || forwarded.is_err() {
            return Err(io::Error::other("a stdio worker thread panicked"));
        }
        shared.lock().input_result.take().unwrap_or(Ok(()))
    });
    read_result?;
    match writer.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // A reader that went away is the normal end of a conversation, not a failure.
        Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// What waits its turn: a request with the token a cancellation reaches it by, or, where the
/// engine's wire answers in request order, a reply the reader made itself (a parse error, a
/// `ping`'s answer) that must not overtake the replies to requests read before it.
enum Queued {
    Request(Value, CancelToken),
    Reply(Value),
}

/// Who does what, shared by the two serving threads.
#[derive(Default)]
struct Turns {
    /// A thread holds the input (it reads, or handles an urgent message it read).
    reading: bool,
    /// A request is being handled; requests run one at a time, in arrival order.
    running: bool,
    /// Requests (and in-order replies) read while another ran, in arrival order.
    queue: VecDeque<Queued>,
    /// How many requests have begun running: a watcher that sees it unchanged for
    /// [`LOOKS_BEFORE_SLEEPING`] looks goes to sleep.
    begun: u64,
    /// The watching thread sleeps until a request begins.
    watcher_asleep: bool,
    /// A thread waits for a request to finish (room in the queue, or the end after end of input).
    awaiting_finish: bool,
    /// The input ended (or the output failed): nothing more is read.
    input_ended: bool,
    /// How reading ended, once it has.
    input_result: Option<io::Result<()>>,
}

/// Ends the conversation when a serving thread panics, so that the other one finishes what is
/// queued and returns instead of waiting for a turn that never ends.
struct EndOnPanic<'s, 'a, R, W>(&'s Shared<'a, R, W>);

impl<R, W> Drop for EndOnPanic<'_, '_, R, W> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let shared = self.0;
        let mut turns = shared.turns.lock().unwrap_or_else(|e| e.into_inner());
        turns.input_ended = true;
        turns.reading = false;
        turns.running = false;
        turns.input_result = Some(Err(io::Error::other("a stdio worker thread panicked")));
        shared.changed.notify_all();
        drop(turns);
        shared.session.cancel_all();
    }
}

/// What the reading thread takes from the input next.
enum Next {
    /// A request or notification, which takes its turn after the running one.
    Request(Value),
    /// The input ended or failed, or the output failed.
    End(io::Result<()>),
}

struct Shared<'a, R, W> {
    session: &'a Session,
    /// The engine's wire answers in request order ([`crate::server::Wire::answers_in_order`]).
    in_order: bool,
    writer: &'a LineWriter<W>,
    input: Mutex<LineReader<R>>,
    turns: Mutex<Turns>,
    changed: Condvar,
}

impl<R: Read, W: Write + Send> Shared<'_, R, W> {
    fn lock(&self) -> MutexGuard<'_, Turns> {
        // Every update of the turns is complete before anything that may panic runs.
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, turns: MutexGuard<'g, Turns>) -> MutexGuard<'g, Turns> {
        self.changed.wait(turns).unwrap_or_else(|e| e.into_inner())
    }

    /// One serving thread: runs what waits, reads when nobody reads and no call runs or one has
    /// run for a whole look, and otherwise watches.
    fn serve_turns(&self) {
        let _end_on_panic = EndOnPanic(self);
        let mut turns = self.lock();
        // What the last look saw: whether a request ran, and which one.
        let mut looked: Option<u64> = None;
        // Looks in a row that saw nothing run and nothing begin since `begun_when_idle`.
        let mut idle_looks = 0u32;
        let mut begun_when_idle = turns.begun;
        loop {
            if !turns.running {
                if let Some(request) = turns.queue.pop_front() {
                    turns = self.run(turns, request);
                    looked = None;
                    continue;
                }
            }
            if turns.input_ended {
                if !turns.running && turns.queue.is_empty() {
                    return;
                }
                turns.awaiting_finish = true;
                turns = self.wait(turns);
                continue;
            }
            let long_call = turns.running && looked == Some(turns.begun);
            if !turns.reading && (!turns.running || long_call) {
                turns.reading = true;
                drop(turns);
                if long_call {
                    // Replies held for a pipelined burst must not wait for this call.
                    self.writer.flush();
                }
                turns = match self.read_until_request() {
                    Next::Request(message) => self.take_request(message),
                    Next::End(result) => self.end_of_input(result),
                };
                looked = None;
                continue;
            }
            // Another thread reads, or runs a call that may yet prove long: look again later,
            // or sleep until a request begins when nothing has begun for a while.
            looked = turns.running.then_some(turns.begun);
            if turns.begun == begun_when_idle && !turns.running {
                idle_looks += 1;
            } else {
                idle_looks = 0;
                begun_when_idle = turns.begun;
            }
            if idle_looks > LOOKS_BEFORE_SLEEPING {
                idle_looks = 0;
                turns.watcher_asleep = true;
                turns = self.wait(turns);
            } else {
                turns = (self.changed.wait_timeout(turns, READER_HANDOVER))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }

    /// Runs `request` (the turns say it runs) and takes the turns back when it is done.
    fn run<'g>(
        &'g self,
        mut turns: MutexGuard<'g, Turns>,
        request: Queued,
    ) -> MutexGuard<'g, Turns> {
        turns.running = true;
        turns.begun += 1;
        if turns.watcher_asleep {
            turns.watcher_asleep = false;
            self.changed.notify_all();
        }
        drop(turns);
        let reply = match request {
            Queued::Request(message, cancel) if !cancel.is_cancelled() => {
                (self.session).handle_message_with(message, self.writer, cancel)
            }
            Queued::Request(..) => None,
            Queued::Reply(reply) => Some(reply),
        };
        if let Some(reply) = reply {
            // The next request is already read: its reply can go out with this one (the reader
            // writes what is held before it waits for input, a watcher when a call proves long).
            let next_read = (self.input.try_lock()).is_ok_and(|lines| lines.has_line());
            if next_read {
                self.writer.hold(&reply);
            } else {
                self.writer.send(&reply);
            }
        }
        let mut turns = self.lock();
        turns.running = false;
        if turns.awaiting_finish {
            turns.awaiting_finish = false;
            self.changed.notify_all();
        }
        turns
    }

    /// The reader has a request: it runs it at once when nothing else runs or waits (leaving the
    /// input to the other thread meanwhile), or queues it and reads on.
    fn take_request(&self, message: Value) -> MutexGuard<'_, Turns> {
        let mut turns = self.lock();
        if !turns.running && turns.queue.is_empty() {
            turns.reading = false;
            return self.run(turns, Queued::Request(message, CancelToken::new()));
        }
        // Tracked before it waits, so that a cancellation read meanwhile is not lost.
        let cancel = self.session.track_request(&message);
        turns = self.room_in_queue(turns);
        turns.queue.push_back(Queued::Request(message, cancel));
        // Stop reading: the runner takes the queue in order, then the input, unless its call
        // proves long, when a look takes the input again.
        turns.reading = false;
        turns
    }

    /// Waits (reading nothing more meanwhile) while the queue is full and a request runs.
    fn room_in_queue<'g>(&'g self, mut turns: MutexGuard<'g, Turns>) -> MutexGuard<'g, Turns> {
        while turns.queue.len() >= MAX_QUEUED_REQUESTS && turns.running {
            turns.awaiting_finish = true;
            turns = self.wait(turns);
        }
        turns
    }

    /// Writes a reply the reader made itself, unless the wire answers in request order and an
    /// earlier request is still running or waiting: then it waits its turn behind them. (Only
    /// the reader adds work, so nothing can start between the look and the write.)
    fn answer(&self, reply: Value) {
        if self.in_order {
            let turns = self.lock();
            if turns.running || !turns.queue.is_empty() {
                let mut turns = self.room_in_queue(turns);
                turns.queue.push_back(Queued::Reply(reply));
                return;
            }
        }
        self.writer.send(&reply);
    }

    /// Input ended: what is queued or running gets [`EOF_GRACE`], then is cancelled.
    fn end_of_input(&self, result: io::Result<()>) -> MutexGuard<'_, Turns> {
        self.writer.flush();
        let mut turns = self.lock();
        turns.input_ended = true;
        turns.reading = false;
        turns.input_result = Some(result);
        self.changed.notify_all();
        let deadline = std::time::Instant::now() + EOF_GRACE;
        loop {
            if !turns.running && turns.queue.is_empty() {
                return turns;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                self.session.cancel_all();
                return turns;
            }
            turns.awaiting_finish = true;
            turns = (self.changed.wait_timeout(turns, deadline - now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Reads lines, answering bad ones and urgent messages itself, until a message must take its
    /// turn or the input ends.
    fn read_until_request(&self) -> Next {
        let mut lines = self.input.lock().unwrap_or_else(|e| e.into_inner());
        let session = self.session;
        let writer = self.writer;
        loop {
            if writer.failed.load(Ordering::SeqCst) {
                return Next::End(Ok(()));
            }
            if !lines.has_line() {
                // Nothing held may wait for input that may be long in coming.
                writer.flush();
            }
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return Next::End(Ok(())),
                Err(e) => return Next::End(Err(e)),
            };
            let bytes = match line {
                Line::Overlong { blank: true } => continue,
                Line::Overlong { blank: false } => {
                    let detail = format!("line longer than {MAX_LINE_BYTES} bytes");
                    self.answer(session.parse_error_reply(Some(&detail)));
                    continue;
                }
                Line::Text(bytes) if bytes.iter().all(|&b| is_blank_byte(b)) => continue,
                Line::Text(bytes) => bytes,
            };
            let message = match json::parse(&bytes) {
                Ok(message) => message,
                Err(e) => {
                    self.answer(session.parse_error_reply(Some(&e.to_string())));
                    continue;
                }
            };
            if Session::is_urgent(&message) {
                if let Some(reply) = session.handle_message(message) {
                    self.answer(reply);
                }
                continue;
            }
            return Next::Request(message);
        }
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
    fn held_replies_are_written_at_the_next_send_or_once_they_reach_the_cap() {
        let written = |writer: &LineWriter<Vec<u8>>| writer.out.lock().unwrap().sink.len();
        let message = |bytes: usize| Value::from("x".repeat(bytes));
        let writer = LineWriter::new(Vec::new());
        writer.hold(&message(10));
        assert_eq!(written(&writer), 0);
        writer.send(&message(1));
        // Both lines, in order: the held one first.
        let out = writer.out.lock().unwrap().sink.clone();
        assert_eq!(out, format!("\"{}\"\n\"x\"\n", "x".repeat(10)).as_bytes());

        let writer = LineWriter::new(Vec::new());
        // Quotes and newline make each line 3 bytes longer than its text.
        writer.hold(&message(MAX_HELD_BYTES - 4));
        assert_eq!(written(&writer), 0, "one byte under the cap is held");
        writer.hold(&message(0));
        assert_eq!(
            written(&writer),
            MAX_HELD_BYTES + 2,
            "at the cap, all is written"
        );
        writer.hold(&message(0));
        assert_eq!(written(&writer), MAX_HELD_BYTES + 2);
        writer.flush();
        assert_eq!(written(&writer), MAX_HELD_BYTES + 5);
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
