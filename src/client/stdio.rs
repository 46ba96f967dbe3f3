//! The stdio transport: a server run as a child process, spoken to in newline-delimited JSON-RPC
//! over its stdin and stdout, and shut down the way hosts do it (close stdin, wait, then kill).
//!
//! A reader thread turns the child's stdout into messages (each line bounded by the response cap,
//! so a runaway line costs no more memory than the cap) and a writer thread feeds its stdin (so a
//! child that stops reading cannot block the caller past its timeout). The caller waits on a
//! bounded channel with the call's deadline.
//!
//! The child's stderr is piped and relayed by a third thread ([`relay_stderr`]) to the client's
//! own stderr (or where [`ServerStderr`] says), a line at a time through the suite's sanitiser
//! ([`crate::sanitize`]): a server's diagnostics cannot drive the user's terminal any more than its
//! results can. Lines are capped at [`MAX_STDERR_LINE_BYTES`]; the relay reads until every process
//! holding the pipe has exited, and relayed lines are best-effort diagnostics, in no fixed order
//! with what the client itself prints (closing waits briefly for the relay, so what the server
//! wrote before it exited is out by then).
//!
//! The server runs as the leader of its own process group, so closing ends whatever it started too
//! (a child it left running, a helper it forgot): after the grace the whole group gets SIGTERM,
//! then SIGKILL ([`crate::process_group`]).

use super::answers::Answers;
use super::core::{self, Event, Incoming, Outgoing};
use super::error::ClientError;
use super::transport::Transport;
use crate::json::{self, Value};
use crate::process_group::{self, Exit, GroupKiller};
use crate::sanitize::sanitize;
use crate::stdio::{is_blank_byte, Line, LineReader};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// After closing the child's stdin, how long it may take to exit before it is killed (the
/// official clients wait 2 s).
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// After SIGTERM to the server's process group, how long a server still running may take to exit
/// before the group gets SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(1);

/// Messages the reader may hold for a caller that is not waiting (backpressure on the child).
pub const MAX_QUEUED_MESSAGES: usize = 16;

/// Lines the writer may hold for a child that is not reading.
pub const MAX_QUEUED_WRITES: usize = 16;

/// The longest line of a server's stderr relayed whole, in bytes (not counting its newline); a
/// longer line is cut there, marked, and the rest of it read and dropped.
pub const MAX_STDERR_LINE_BYTES: usize = 16 * 1024;

/// Once the server is ended, how long the client waits for the stderr relay to write out what it
/// still holds (a program that left the server's process group may keep the pipe open longer).
pub const STDERR_RELAY_WAIT: Duration = Duration::from_millis(500);

/// How often `close` checks whether the child has exited.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// How long an exit error waits for the child's exit status and last output.
const EXIT_WAIT: Duration = Duration::from_millis(200);

/// What the reader thread saw on the child's stdout.
enum FromChild {
    Message(Value),
    /// A line that is not a usable message: it fails the call in flight.
    Bad(String),
    /// End of output (the child exited or closed stdout), with the read error if any.
    End(Option<String>),
}

/// Where a stdio server's stderr goes ([`super::Options::server_stderr`]).
#[derive(Clone, Default)]
pub enum ServerStderr {
    /// Relayed to this process's stderr a line at a time, through the sanitiser, each line capped
    /// at [`MAX_STDERR_LINE_BYTES`] ([`relay_stderr`]). The default.
    #[default]
    Relay,
    /// Relayed the same way to the caller's sink (a log file, a buffer): one `write_all` and
    /// `flush` per line, under the lock. A sink that fails is no longer written to; the relay
    /// keeps reading, so the server never blocks on its stderr.
    RelayTo(Arc<Mutex<dyn Write + Send>>),
    /// Not read at all: the server's stderr is `/dev/null`.
    Discard,
    /// Inherited: what the server writes reaches this process's stderr raw, unsanitised (the
    /// behaviour before the relay). Only for servers you trust.
    Inherit,
}

impl std::fmt::Debug for ServerStderr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerStderr::Relay => "Relay",
            ServerStderr::RelayTo(_) => "RelayTo(..)",
            ServerStderr::Discard => "Discard",
            ServerStderr::Inherit => "Inherit",
        })
    }
}

/// A [`ServerStderr::RelayTo`] sink as a writer: each call takes the lock.
struct SharedSink(Arc<Mutex<dyn Write + Send>>);

impl SharedSink {
    fn lock(&self) -> std::sync::MutexGuard<'_, dyn Write + Send + 'static> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.lock().write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.lock().flush()
    }
}

/// Copies a server's stderr from `input` to `out` until `input` ends (or fails), a line at a time:
/// each line decoded as UTF-8 (invalid bytes as U+FFFD), a trailing `\r` dropped, passed through
/// [`sanitize`] and written with its newline in one `write_all`, then flushed. A final line without
/// a newline is written at the end. A line longer than `cap` bytes (not counting its newline) is
/// cut on a character boundary at most `cap` bytes in and marked `… [stderr line cut at CAP
/// bytes]`; the rest of it is read and dropped, never held. Once a write fails, nothing more is
/// written but `input` is still read to its end, so the writer never blocks on a full pipe.
pub fn relay_stderr(input: impl Read, mut out: impl Write, cap: usize) {
    let mut lines = LineReader::with_limit(input, cap.saturating_add(1));
    let mut writing = true;
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => return,
        };
        let bytes = match &line {
            Line::Text(bytes) => bytes.as_slice(),
            Line::Overlong { .. } => lines.overlong_head(),
        };
        // An over-long line arrives as its head of `cap + 1` bytes (a final line without a
        // newline as a whole `cap + 1`): cut it at `cap`, backing off from a character cut in two.
        let mut text = if bytes.len() > cap {
            let mut end = cap;
            while end > 0 && bytes[end] & 0xc0 == 0x80 {
                end -= 1;
            }
            format!(
                "{}… [stderr line cut at {cap} bytes]",
                String::from_utf8_lossy(&bytes[..end])
            )
        } else {
            String::from_utf8_lossy(bytes).into_owned()
        };
        if !writing {
            continue;
        }
        if text.ends_with('\r') {
            text.pop();
        }
        let mut line = sanitize(&text).into_owned();
        line.push('\n');
        writing = out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_ok();
    }
}

/// A running server process.
pub struct StdioTransport {
    command: String,
    child: Child,
    killer: GroupKiller,
    /// Disconnected once the stderr relay has ended (`None` when there is none, or it was
    /// waited for).
    relay_done: Option<Receiver<()>>,
    /// Set once the child is reaped: its pid may then belong to another process, so neither it
    /// nor its group is ever looked at or signalled again.
    reaped: Option<ExitStatus>,
    to_child: Option<SyncSender<Vec<u8>>>,
    from_child: Receiver<FromChild>,
    ended: bool,
    /// The first unusable line the child printed outside a call: when the child then exits, it is
    /// usually why (a usage message, a banner), so exit errors quote it.
    stray: Option<String>,
    /// How requests from the server are answered.
    answers: Answers,
}

impl StdioTransport {
    /// Starts `argv[0]` with the remaining arguments. Its stderr (servers log there) is relayed
    /// through the sanitiser to this process's stderr ([`ServerStderr::Relay`]).
    pub fn spawn(argv: &[String], max_message_bytes: usize) -> Result<StdioTransport, ClientError> {
        StdioTransport::spawn_with(argv, max_message_bytes, &ServerStderr::Relay)
    }

    /// [`spawn`](Self::spawn), with the server's stderr going where `stderr` says.
    pub fn spawn_with(
        argv: &[String],
        max_message_bytes: usize,
        stderr: &ServerStderr,
    ) -> Result<StdioTransport, ClientError> {
        let Some((program, args)) = argv.split_first() else {
            return Err(ClientError::Unsupported("no server command given".into()));
        };
        let command = argv.join(" ");
        let mut child = process_group::in_own_group(
            Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(match stderr {
                    ServerStderr::Relay | ServerStderr::RelayTo(_) => Stdio::piped(),
                    ServerStderr::Discard => Stdio::null(),
                    ServerStderr::Inherit => Stdio::inherit(),
                }),
        )
        .spawn()
        .map_err(|e| ClientError::Connect(format!("cannot start `{command}`: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ClientError::Connect(format!(
                "cannot start `{command}`: its stdin or stdout could not be piped"
            )));
        };
        let relay_done = match child.stderr.take() {
            None => None,
            Some(pipe) => {
                let out = match stderr {
                    ServerStderr::RelayTo(sink) => {
                        Box::new(SharedSink(Arc::clone(sink))) as Box<dyn Write + Send>
                    }
                    _ => Box::new(std::io::stderr()),
                };
                let (done, relay_done) = mpsc::channel::<()>();
                std::thread::Builder::new()
                    .name("mcp-client-stderr".into())
                    .spawn(move || {
                        relay_stderr(pipe, out, MAX_STDERR_LINE_BYTES);
                        drop(done);
                    })
                    .map_err(|e| {
                        ClientError::Connect(format!("cannot start a stderr relay thread: {e}"))
                    })?;
                Some(relay_done)
            }
        };
        let (to_child, writes) = mpsc::sync_channel::<Vec<u8>>(MAX_QUEUED_WRITES);
        std::thread::Builder::new()
            .name("mcp-client-stdin".into())
            .spawn(move || write_loop(stdin, writes))
            .map_err(|e| ClientError::Connect(format!("cannot start a writer thread: {e}")))?;
        let (found, from_child) = mpsc::sync_channel::<FromChild>(MAX_QUEUED_MESSAGES);
        std::thread::Builder::new()
            .name("mcp-client-stdout".into())
            .spawn(move || read_loop(stdout, max_message_bytes, found))
            .map_err(|e| ClientError::Connect(format!("cannot start a reader thread: {e}")))?;
        Ok(StdioTransport {
            command,
            child,
            killer: GroupKiller::locate(),
            relay_done,
            reaped: None,
            to_child: Some(to_child),
            from_child,
            ended: false,
            stray: None,
            answers: Answers::default(),
        })
    }

    /// Handles what arrived while no call was waiting: late replies and notifications are
    /// dropped, server requests answered, and a bad line is not blamed on the next call.
    fn drain_between_calls(&mut self) {
        while let Ok(item) = self.from_child.try_recv() {
            match item {
                FromChild::Message(message) => {
                    if let Incoming::Request { id, method, params } = core::classify(message) {
                        let _ = self.send_line(&self.answers.reply(id, &method, &params));
                    }
                }
                FromChild::Bad(why) => {
                    self.stray.get_or_insert(why);
                }
                FromChild::End(_) => self.ended = true,
            }
        }
    }

    fn send_line(&mut self, message: &Value) -> Result<(), ClientError> {
        let mut line = json::to_string(message).into_bytes();
        line.push(b'\n');
        let Some(tx) = &self.to_child else {
            return Err(ClientError::Closed("the connection is closed".into()));
        };
        match tx.try_send(line) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(ClientError::Protocol(format!(
                "server `{}` is not reading its stdin ({MAX_QUEUED_WRITES} messages queued)",
                self.command
            ))),
            Err(TrySendError::Disconnected(_)) => Err(self.ended_error()),
        }
    }

    fn ended_error(&mut self) -> ClientError {
        let note = self.exit_status_note();
        self.collect_stray_output();
        ClientError::Closed(format!(
            "server `{}` has exited{note}{}",
            self.command,
            self.stray_note()
        ))
    }

    /// Reads what the reader thread still holds after the child went away (up to its end of
    /// output, briefly), keeping the first unusable line: a write to a dead child can fail before
    /// the reader has passed on what the child printed.
    fn collect_stray_output(&mut self) {
        let deadline = Instant::now() + EXIT_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from_child.recv_timeout(left) {
                Ok(FromChild::Bad(why)) => {
                    self.stray.get_or_insert(why);
                }
                Ok(FromChild::Message(_)) => {}
                Ok(FromChild::End(_)) | Err(_) => return,
            }
        }
    }

    fn stray_note(&self) -> String {
        self.stray
            .as_ref()
            .map_or(String::new(), |why| format!("; before that: {why}"))
    }

    /// ` (exit status: N)` once the child has exited, waiting briefly for it to do so. What it
    /// left running in its process group is ended before it is reaped.
    fn exit_status_note(&mut self) -> String {
        let deadline = Instant::now() + EXIT_WAIT;
        while self.reaped.is_none() {
            match process_group::poll_exit(&mut self.child) {
                Ok(Exit::Running) if Instant::now() < deadline => std::thread::sleep(EXIT_POLL),
                Ok(Exit::Running) | Err(_) => break,
                Ok(_) => {
                    let _ = self.end(Duration::ZERO, Duration::ZERO);
                }
            }
        }
        self.reaped
            .map_or(String::new(), |status| format!(" ({status})"))
    }

    /// Ends the child and its process group ([`GroupKiller::end`]) unless it is reaped already.
    fn end(&mut self, grace: Duration, term_grace: Duration) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.reaped {
            return Ok(status);
        }
        let status = self.killer.end(&mut self.child, grace, term_grace)?;
        self.reaped = Some(status);
        // The group is gone, so the pipe is closing: let the relay write out the last lines.
        if let Some(relay_done) = self.relay_done.take() {
            let _ = relay_done.recv_timeout(STDERR_RELAY_WAIT);
        }
        Ok(status)
    }
}

fn write_loop(mut stdin: ChildStdin, writes: Receiver<Vec<u8>>) {
    for line in writes {
        if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
            return;
        }
    }
    // Dropping stdin here closes the child's input: the signal to exit.
}

fn read_loop(stdout: impl std::io::Read, max: usize, found: SyncSender<FromChild>) {
    let mut lines = LineReader::with_limit(stdout, max);
    loop {
        let item = match lines.next_line() {
            Ok(None) => FromChild::End(None),
            Err(e) => FromChild::End(Some(e.to_string())),
            Ok(Some(Line::Overlong { blank: true })) => continue,
            Ok(Some(Line::Overlong { blank: false })) => FromChild::Bad(format!(
                "server sent a message longer than {max} bytes (the response size cap); it was discarded"
            )),
            Ok(Some(Line::Text(bytes))) if bytes.iter().all(|&b| is_blank_byte(b)) => continue,
            Ok(Some(Line::Text(bytes))) => match json::parse(&bytes) {
                Ok(v) => FromChild::Message(v),
                Err(e) => FromChild::Bad(format!(
                    "server wrote a line to stdout that is not JSON ({e}): {}",
                    crate::voice::shortened(&String::from_utf8_lossy(&bytes), 120)
                )),
            },
        };
        let end = matches!(item, FromChild::End(_));
        if found.send(item).is_err() || end {
            return;
        }
    }
}

impl Transport for StdioTransport {
    fn set_answers(&mut self, answers: Answers) {
        self.answers = answers;
    }

    fn request(
        &mut self,
        out: &Outgoing,
        timeout: Duration,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Value, ClientError> {
        let deadline = Instant::now() + timeout;
        let Some(id) = &out.id else {
            self.notify(out, timeout)?;
            return Ok(Value::Null);
        };
        self.drain_between_calls();
        if self.ended {
            return Err(self.ended_error());
        }
        self.send_line(&out.message)?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let item = match self.from_child.recv_timeout(left) {
                Ok(item) => item,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ClientError::Timeout {
                        method: out.method.clone(),
                        after: timeout,
                    })
                }
                Err(RecvTimeoutError::Disconnected) => FromChild::End(None),
            };
            match item {
                FromChild::Message(message) => match core::classify(message) {
                    Incoming::Response { id: got, message } if core::answers(&got, id) => {
                        return Ok(message)
                    }
                    // A late answer to an earlier request that timed out.
                    Incoming::Response { .. } | Incoming::Invalid(_) => {}
                    Incoming::Notification(event) => on_event(&event),
                    Incoming::Request { id, method, params } => {
                        // Best effort: a child that stopped reading gets no answer.
                        let _ = self.send_line(&self.answers.reply(id, &method, &params));
                    }
                },
                FromChild::Bad(why) => return Err(ClientError::Protocol(why)),
                FromChild::End(read_error) => {
                    self.ended = true;
                    let note = self.exit_status_note();
                    let detail = read_error.map_or(String::new(), |e| format!(": {e}"));
                    return Err(ClientError::Closed(format!(
                        "server `{}` exited before answering {}{note}{detail}{}",
                        self.command,
                        out.method,
                        self.stray_note()
                    )));
                }
            }
        }
    }

    fn notify(&mut self, out: &Outgoing, _timeout: Duration) -> Result<(), ClientError> {
        if self.ended {
            return Err(self.ended_error());
        }
        self.send_line(&out.message)
    }

    fn close(&mut self) -> Result<(), ClientError> {
        // Closing stdin is the shutdown signal; the writer drops it once its queue is empty.
        self.to_child = None;
        // The grace is the server's chance to exit cleanly; then its whole group is ended.
        self.end(CLOSE_GRACE, TERM_GRACE).map_err(|e| {
            ClientError::Closed(format!("cannot wait for server `{}`: {e}", self.command))
        })?;
        Ok(())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if self.to_child.is_some() || self.reaped.is_none() {
            let _ = self.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn relayed(input: &[u8], cap: usize) -> String {
        let mut out = Vec::new();
        relay_stderr(input, &mut out, cap);
        String::from_utf8(out).expect("the relay writes UTF-8")
    }

    #[test]
    fn stderr_lines_are_sanitised_and_a_final_line_is_flushed() {
        assert_eq!(
            relayed(
                b"clip \x1b]52;c;aGk=\x07\n\x1b[2K\rfake\r\nhide\x1b[8m\n\xe2\x80\xaeabc\n\ntail",
                64
            ),
            "clip \\x1b]52;c;aGk=\\x07\n\\x1b[2K\\x0dfake\nhide\\x1b[8m\n\\u{202e}abc\n\ntail\n"
        );
        assert_eq!(relayed(b"", 64), "");
        assert_eq!(relayed(b"C1 \xc2\x9b2J\n", 64), "C1 \\x9b2J\n");
    }

    #[test]
    fn invalid_utf8_in_stderr_is_decoded_lossily() {
        assert_eq!(
            relayed(b"bad \xff\xfe utf8\n", 64),
            "bad \u{fffd}\u{fffd} utf8\n"
        );
    }

    #[test]
    fn a_long_stderr_line_is_cut_at_the_cap_and_marked() {
        let mut input = b"x".repeat(3 * 64 * 1024 + 7);
        input.extend_from_slice(b"\nnext\n");
        assert_eq!(
            relayed(&input, 10),
            "xxxxxxxxxx… [stderr line cut at 10 bytes]\nnext\n"
        );
        // Exactly the cap is whole; one more byte is cut, also without a final newline.
        assert_eq!(relayed(b"0123456789\n", 10), "0123456789\n");
        assert_eq!(
            relayed(b"0123456789a", 10),
            "0123456789… [stderr line cut at 10 bytes]\n"
        );
        // A character the cap falls inside is left out whole, and controls are escaped.
        assert_eq!(
            relayed("123456789\u{e9}\u{1b}".as_bytes(), 10),
            "123456789… [stderr line cut at 10 bytes]\n"
        );
        assert_eq!(
            relayed(b"\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 10),
            "\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b… [stderr line cut at 10 bytes]\n"
        );
    }

    /// A writer that fails after `ok` writes, counting every attempt.
    struct Failing {
        ok: usize,
        attempts: usize,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.attempts += 1;
            if self.attempts > self.ok {
                return Err(io::Error::other("gone"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A reader of `lines` short lines that counts how many bytes were read from it.
    struct Counting<'a> {
        left: usize,
        read: &'a mut usize,
    }

    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.left).min(3);
            buf[..n].copy_from_slice(&b"ab\n"[..n]);
            self.left -= n;
            *self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn a_failing_sink_stops_the_writes_but_not_the_reading() {
        let mut read = 0;
        let mut sink = Failing { ok: 2, attempts: 0 };
        let input = Counting {
            left: 3 * 1000,
            read: &mut read,
        };
        relay_stderr(input, &mut sink, 64);
        assert_eq!(read, 3000, "read to the end");
        assert_eq!(
            sink.attempts, 3,
            "two lines written, the third failed, then no more"
        );
    }

    #[test]
    fn a_shared_sink_receives_the_relayed_lines() {
        let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink: Arc<Mutex<dyn Write + Send>> = buffer.clone();
        relay_stderr(&b"a\x07\nb"[..], SharedSink(sink), 64);
        assert_eq!(&*buffer.lock().unwrap(), b"a\\x07\nb\n");
        assert_eq!(
            format!("{:?}", ServerStderr::RelayTo(buffer)),
            "RelayTo(..)"
        );
    }
}
