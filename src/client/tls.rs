//! https for the client: the system's TLS client (`openssl s_client`) run as a child process per
//! connection, its stdin and stdout the plaintext byte stream under the HTTP/1.1 code.
//!
//! Why a helper: std has no TLS, the workspace takes no crates, and a TLS stack written here would
//! be the riskiest code in it. `openssl` is on almost every Unix host, already trusted by the
//! package manager, git and shells, and reads the system's trust store.
//!
//! The trust decisions, made by the flags and checked here:
//! - verification is always on (`-verify_return_error`): the chain must lead to the system's trust
//!   store, or only to `--ca-file` when one is given (`-CAfile`, with `-no-CApath -no-CAstore`);
//!   the name in the URL must match the certificate (`-verify_hostname`, or `-verify_ip` for an
//!   address literal); SNI is sent for names; TLS 1.2 or later (`-min_protocol TLSv1.2`);
//! - nothing is written to the helper before it reports the handshake done *and* `Verification:
//!   OK` on its stderr (`-brief`), so a refused certificate never sees a byte of the request; a
//!   refusal becomes one line naming the reason ([`refusal`]);
//! - `-nocommands`: a request line starting with `Q` or `R` is data, not a command;
//! - no secret on the command line (host, port and the CA file's path only; the token travels in
//!   the stream), an empty environment, `/` as the working directory, the program found at a
//!   fixed absolute path ([`HELPER_PATHS`]) or named by the user, never looked up in `PATH`;
//! - the helper leads its own process group, which is killed whenever the stream ends: closed,
//!   dropped, timed out or failed ([`crate::process_group`]);
//! - its stderr is drained on a thread and at most [`MAX_HELPER_STDERR_BYTES`] kept.
//!
//! Reads and writes go through threads so that the transport's timeouts apply to pipes as they do
//! to sockets: a reader thread queues at most [`READ_QUEUE_CHUNKS`] chunks, a writer thread writes
//! one buffer at a time while the caller waits at most its write timeout.

use crate::process_group::{self, GroupKiller};
use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Where the TLS helper is looked for when the user names none, in this order.
pub const HELPER_PATHS: [&str; 4] = [
    "/usr/bin/openssl",
    "/usr/local/bin/openssl",
    "/opt/homebrew/bin/openssl",
    "/bin/openssl",
];

/// What to install when no helper is found (named in the error).
pub const HELPER_PACKAGE_HINT: &str =
    "install the openssl command-line tool (Debian/Ubuntu: apt-get install openssl; Fedora: dnf install openssl; macOS: brew install openssl), or name it with --tls-helper PATH";

/// Most of the helper's stderr kept (for the refusal message); the rest is read and dropped.
pub const MAX_HELPER_STDERR_BYTES: usize = 16 * 1024;

/// Longest stderr line kept whole; a longer one is cut.
const MAX_STDERR_LINE_BYTES: usize = 1024;

/// Bytes read from the helper's stdout per read.
const READ_CHUNK: usize = 16 * 1024;

/// Chunks the reader thread may hold before the caller takes them (bounds memory per stream).
pub const READ_QUEUE_CHUNKS: usize = 4;

/// Longest a refusal reason quoted from the helper may be.
const MAX_REASON_BYTES: usize = 200;

/// How https connections are made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// The helper program (an absolute path); `None`: the first of [`HELPER_PATHS`] that exists.
    pub helper: Option<PathBuf>,
    /// Trust only the CAs in this PEM file (an absolute path) instead of the system's store.
    pub ca_file: Option<PathBuf>,
}

/// Why no TLS connection was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsError {
    /// No helper program (the text says what to install or what was wrong with the one given).
    NoHelper(String),
    /// The host or configuration cannot be given to the helper.
    Invalid(String),
    /// The handshake did not finish in time.
    Timeout,
    /// The helper ended the connection: refused certificate, refused connection, unknown host...
    Refused(String),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::NoHelper(why) | TlsError::Invalid(why) | TlsError::Refused(why) => {
                f.write_str(why)
            }
            TlsError::Timeout => f.write_str("the TLS handshake did not finish in time"),
        }
    }
}

impl TlsConfig {
    /// The helper program to run: the one named (which must be an absolute path to a file), else
    /// the first of [`HELPER_PATHS`] that is a file.
    pub fn helper_program(&self) -> Result<PathBuf, TlsError> {
        locate(self.helper.as_deref(), &HELPER_PATHS)
    }
}

/// The helper: `given` when set, else the first of `candidates` that is a file.
fn locate(given: Option<&Path>, candidates: &[&str]) -> Result<PathBuf, TlsError> {
    if let Some(path) = given {
        if !path.is_absolute() {
            return Err(TlsError::NoHelper(format!(
                "the TLS helper {} must be an absolute path",
                path.display()
            )));
        }
        if !path.is_file() {
            return Err(TlsError::NoHelper(format!(
                "the TLS helper {} is not a file",
                path.display()
            )));
        }
        return Ok(path.to_owned());
    }
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            TlsError::NoHelper(format!(
                "https needs the openssl program, found at none of {}: {HELPER_PACKAGE_HINT}",
                candidates.join(", ")
            ))
        })
}

/// The host as the helper's arguments take it: a DNS name (letters, digits, `-`, `.`, `_`) or an
/// IP address literal; anything else is refused (it would only ever be a malformed URL).
fn host_kind(host: &str) -> Result<bool, TlsError> {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(true);
    }
    let name_ok = !host.is_empty()
        && host.len() <= 253
        && !host.starts_with(['-', '.'])
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if name_ok {
        Ok(false)
    } else {
        Err(TlsError::Invalid(format!(
            "the host {host:?} is neither a DNS name nor an IP address"
        )))
    }
}

/// The helper's arguments for a connection to `host:port`.
fn helper_args(config: &TlsConfig, host: &str, port: u16) -> Result<Vec<String>, TlsError> {
    let is_ip = host_kind(host)?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let mut args: Vec<String> = ["s_client", "-connect", &authority]
        .map(String::from)
        .to_vec();
    if is_ip {
        // SNI carries names only (RFC 6066 §3); the address is checked against the certificate.
        args.extend(["-noservername", "-verify_ip", host].map(String::from));
    } else {
        args.extend(["-servername", host, "-verify_hostname", host].map(String::from));
    }
    args.extend(
        [
            "-verify_return_error",
            "-min_protocol",
            "TLSv1.2",
            "-brief",
            "-nocommands",
            "-no_ign_eof",
        ]
        .map(String::from),
    );
    if let Some(ca) = &config.ca_file {
        if !ca.is_absolute() {
            return Err(TlsError::Invalid(format!(
                "the CA file {} must be an absolute path",
                ca.display()
            )));
        }
        args.push("-CAfile".into());
        args.push(ca.display().to_string());
        args.extend(["-no-CApath", "-no-CAstore"].map(String::from));
    }
    Ok(args)
}

/// Signals the helper's process group (found once).
fn killer() -> &'static GroupKiller {
    static KILLER: OnceLock<GroupKiller> = OnceLock::new();
    KILLER.get_or_init(GroupKiller::locate)
}

/// The helper process, shared by the stream and its [`Closer`]: whoever ends it first takes it,
/// so the group is never signalled after the leader was reaped.
type Shared = Arc<Mutex<Option<Child>>>;

fn end(child: &Shared) {
    let taken = child.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut child) = taken {
        killer().kill(&mut child);
    }
}

/// What the stderr thread saw of the handshake.
enum Handshake {
    Verified,
    /// The helper's stderr up to its end (or up to the cap).
    Failed(String),
}

/// A TLS connection: the helper's pipes as one byte stream.
pub struct TlsStream {
    child: Shared,
    pid: u32,
    /// Buffers to write; each is acknowledged on `written`.
    writes: Option<SyncSender<Vec<u8>>>,
    written: Receiver<io::Result<()>>,
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// Read from `chunks`, not yet handed out.
    pending: Vec<u8>,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// A write timed out or failed: the writer may still hold bytes, the stream is unusable.
    broken: bool,
}

impl fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TlsStream(helper pid {})", self.pid)
    }
}

/// Ends a [`TlsStream`] from another thread (its reader then sees the end of the stream).
#[derive(Clone)]
pub struct Closer(Shared);

impl Closer {
    pub fn close(&self) {
        end(&self.0);
    }
}

impl TlsStream {
    /// Runs the helper for `host:port` and waits, at most `timeout`, until it reports the
    /// handshake done and the certificate verified. Nothing has been written to it then.
    pub fn connect(
        config: &TlsConfig,
        host: &str,
        port: u16,
        timeout: Duration,
    ) -> Result<TlsStream, TlsError> {
        let program = config.helper_program()?;
        let args = helper_args(config, host, port)?;
        let mut command = Command::new(&program);
        command
            .args(&args)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = process_group::in_own_group(&mut command)
            .spawn()
            .map_err(|e| {
                TlsError::NoHelper(format!(
                    "cannot run the TLS helper {}: {e}",
                    program.display()
                ))
            })?;
        let pid = child.id();
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let child: Shared = Arc::new(Mutex::new(Some(child)));
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            end(&child);
            return Err(TlsError::NoHelper("the TLS helper has no pipes".into()));
        };
        let (handshake_tx, handshake) = mpsc::sync_channel(1);
        let threads = spawn_thread("mcp-tls-stderr", move || watch_stderr(stderr, handshake_tx))
            .and_then(|_| {
                let (chunks_tx, chunks) = mpsc::sync_channel(READ_QUEUE_CHUNKS);
                spawn_thread("mcp-tls-read", move || read_stdout(stdout, chunks_tx))?;
                let (writes, writes_rx) = mpsc::sync_channel(1);
                let (written_tx, written) = mpsc::sync_channel(1);
                spawn_thread("mcp-tls-write", move || {
                    write_stdin(stdin, writes_rx, written_tx)
                })?;
                Ok((chunks, writes, written))
            });
        let (chunks, writes, written) = match threads {
            Ok(parts) => parts,
            Err(e) => {
                end(&child);
                return Err(TlsError::NoHelper(format!(
                    "cannot start the TLS helper's threads: {e}"
                )));
            }
        };
        let stream = TlsStream {
            child,
            pid,
            writes: Some(writes),
            written,
            chunks,
            pending: Vec::new(),
            read_timeout: None,
            write_timeout: None,
            broken: false,
        };
        // On every failure below the stream is dropped, which ends the helper's group.
        match handshake.recv_timeout(timeout) {
            Ok(Handshake::Verified) => Ok(stream),
            Ok(Handshake::Failed(stderr)) => Err(TlsError::Refused(refusal(&stderr))),
            Err(RecvTimeoutError::Timeout) => Err(TlsError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(TlsError::Refused(
                "the TLS helper ended without a word".into(),
            )),
        }
    }

    /// The helper's process id (its group id too).
    pub fn helper_pid(&self) -> u32 {
        self.pid
    }

    /// A handle that ends this stream from another thread.
    pub fn closer(&self) -> Closer {
        Closer(Arc::clone(&self.child))
    }

    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) {
        self.read_timeout = timeout;
    }

    pub fn set_write_timeout(&mut self, timeout: Option<Duration>) {
        self.write_timeout = timeout;
    }

    /// Whether the stream can carry a request: still open, and nothing arrived unasked (a byte
    /// would be taken for the next response's; an end means the server or the helper closed).
    pub fn is_idle(&mut self) -> bool {
        !self.broken
            && self.pending.is_empty()
            && matches!(self.chunks.try_recv(), Err(TryRecvError::Empty))
    }
}

impl Drop for TlsStream {
    fn drop(&mut self) {
        // The writer ends when its queue closes; killing the group unblocks it and the reader.
        self.writes = None;
        end(&self.child);
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            let next = match self.read_timeout {
                Some(t) => self.chunks.recv_timeout(t).map_err(|e| match e {
                    RecvTimeoutError::Timeout => Some(ErrorKind::TimedOut),
                    RecvTimeoutError::Disconnected => None,
                }),
                None => self.chunks.recv().map_err(|_| None),
            };
            match next {
                Ok(chunk) => self.pending = chunk?,
                Err(Some(kind)) => return Err(io::Error::new(kind, "no data from the server")),
                Err(None) => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let closed = || io::Error::new(ErrorKind::BrokenPipe, "the TLS helper has ended");
        let Some(writes) = self.writes.as_ref().filter(|_| !self.broken) else {
            return Err(closed());
        };
        if writes.send(buf.to_vec()).is_err() {
            self.broken = true;
            return Err(closed());
        }
        let ack = match self.write_timeout {
            Some(t) => self.written.recv_timeout(t).map_err(|e| match e {
                RecvTimeoutError::Timeout => {
                    io::Error::new(ErrorKind::TimedOut, "the server does not take the request")
                }
                RecvTimeoutError::Disconnected => closed(),
            }),
            None => self.written.recv().map_err(|_| closed()),
        };
        match ack.and_then(|r| r) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
}

fn read_stdout(mut stdout: impl Read, chunks: SyncSender<io::Result<Vec<u8>>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match stdout.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if chunks.send(Ok(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = chunks.send(Err(e));
                return;
            }
        }
    }
}

fn write_stdin(
    mut stdin: ChildStdin,
    writes: Receiver<Vec<u8>>,
    written: SyncSender<io::Result<()>>,
) {
    for buf in writes {
        let result = stdin.write_all(&buf).and_then(|()| stdin.flush());
        let failed = result.is_err();
        if written.send(result).is_err() || failed {
            return;
        }
    }
}

/// Reads the helper's stderr to its end, keeping at most [`MAX_HELPER_STDERR_BYTES`]; reports
/// the handshake once: verified, or failed with what was said.
fn watch_stderr(stderr: impl Read, handshake: SyncSender<Handshake>) {
    let mut reader = io::BufReader::new(stderr);
    let mut kept = String::new();
    let mut established = false;
    let mut reported = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        let more = read_line(&mut reader, &mut line);
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if !reported && kept.len() + text.len() < MAX_HELPER_STDERR_BYTES {
            kept.push_str(text);
            kept.push('\n');
        }
        if !reported {
            if text == "CONNECTION ESTABLISHED" {
                established = true;
            } else if established && text.starts_with("Verification") {
                reported = true;
                let outcome = if text == "Verification: OK" {
                    Handshake::Verified
                } else {
                    Handshake::Failed(kept.clone())
                };
                let _ = handshake.send(outcome);
            }
        }
        if !more {
            if !reported {
                let _ = handshake.send(Handshake::Failed(kept));
            }
            return;
        }
    }
}

/// Reads one line into `line` (at most [`MAX_STDERR_LINE_BYTES`] kept, the rest of it skipped);
/// false at the end of the stream or on an error.
fn read_line(reader: &mut impl io::BufRead, line: &mut Vec<u8>) -> bool {
    loop {
        let (used, done) = match reader.fill_buf() {
            Ok([]) | Err(_) => return false,
            Ok(buf) => {
                let end = buf.iter().position(|&b| b == b'\n');
                let take = end.unwrap_or(buf.len());
                let room = MAX_STDERR_LINE_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&buf[..take.min(room)]);
                (end.map_or(buf.len(), |i| i + 1), end.is_some())
            }
        };
        reader.consume(used);
        if done {
            return true;
        }
    }
}

/// One line saying why the helper ended the connection, from its stderr: the certificate check
/// that failed (expired, unknown issuer, self-signed, wrong host...), a refused connection, an
/// unknown host, a server that does not speak TLS, or the helper's last error.
pub fn refusal(stderr: &str) -> String {
    let lines = || stderr.lines().map(str::trim);
    if let Some(rest) = lines().find_map(|l| l.strip_prefix("verify error:num=")) {
        let (num, text) = rest.split_once(':').unwrap_or((rest, ""));
        let why = match num.parse::<u32>().unwrap_or(0) {
            10 => "it has expired",
            9 => "it is not valid yet",
            18 => "it is self-signed",
            19 => "its chain ends in a self-signed CA that is not trusted",
            2 | 20 | 21 => "its issuer is unknown (not a trusted CA)",
            62 | 64 => "it is for another host (wrong host)",
            23 => "it has been revoked",
            _ => "it does not verify",
        };
        return format!(
            "TLS: the server's certificate was refused: {why} (openssl: {})",
            clean(text)
        );
    }
    let all = stderr.to_ascii_lowercase();
    let known = [
        ("connection refused", "the connection was refused"),
        (
            "name or service not known",
            "the host name does not resolve",
        ),
        ("nodename nor servname", "the host name does not resolve"),
        ("no address associated", "the host name does not resolve"),
        ("network is unreachable", "the network is unreachable"),
        ("no route to host", "no route to the host"),
        (
            "wrong version number",
            "the server does not speak TLS (is it a plain http server?)",
        ),
        (
            "unsupported protocol",
            "the server offers no TLS version from 1.2 on",
        ),
        (
            "alert protocol version",
            "the server offers no TLS version from 1.2 on",
        ),
    ];
    if let Some((_, why)) = known.iter().find(|(said, _)| all.contains(said)) {
        return format!("TLS: {why}");
    }
    // The reason field of OpenSSL's last error line: `...:error:CODE:LIBRARY:FUNCTION:REASON:...`.
    let last = lines()
        .rev()
        .filter_map(|l| l.split_once(":error:").map(|(_, r)| r))
        .find_map(|r| r.split(':').nth(3));
    match last {
        Some(reason) => format!("TLS: the handshake failed ({})", clean(reason)),
        None => match lines().rfind(|l| !l.is_empty()) {
            Some(l) => format!("TLS: the helper ended the connection ({})", clean(l)),
            None => "TLS: the helper ended the connection without saying why".into(),
        },
    }
}

/// A quote from the helper fit for one line: printable ASCII, cut at [`MAX_REASON_BYTES`].
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(MAX_REASON_BYTES)
        .collect::<String>()
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A stand-in helper: a shell script that ignores its arguments and runs `body`. Written to
    /// a fresh folder; its path is absolute.
    fn fake_helper(body: &str) -> TlsConfig {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentteams-tls-unit-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("helper");
        let marker = dir.join("child");
        let script = format!("#!/bin/sh\nmarker='{}'\n{body}\n", marker.display());
        std::fs::write(&path, script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        TlsConfig {
            helper: Some(path),
            ca_file: None,
        }
    }

    /// Removes a [`fake_helper`]'s folder.
    fn remove(config: &TlsConfig) {
        if let Some(dir) = config.helper.as_ref().and_then(|p| p.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// Connects through `config`, retrying while another test's fork holds the fresh script
    /// open for writing (ETXTBSY).
    fn connect(config: &TlsConfig, timeout: Duration) -> Result<TlsStream, TlsError> {
        for _ in 0..50 {
            match TlsStream::connect(config, "localhost", 443, timeout) {
                Err(TlsError::NoHelper(why)) if why.contains("busy") => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                other => return other,
            }
        }
        panic!("the script stayed busy")
    }

    /// The pid the script wrote to its marker file (a process it left in its group).
    fn marked_pid(config: &TlsConfig) -> u32 {
        let marker = config.helper.as_ref().unwrap().with_file_name("child");
        for _ in 0..250 {
            if let Some(pid) = std::fs::read_to_string(&marker)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                return pid;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("no marker")
    }

    fn gone(pid: u32) -> bool {
        (0..250).any(|_| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    !s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            if alive {
                std::thread::sleep(Duration::from_millis(20));
            }
            !alive
        })
    }

    const VERIFIED: &str = "printf 'CONNECTION ESTABLISHED\\nVerification: OK\\n' >&2";

    #[cfg(unix)]
    #[test]
    fn the_helpers_pipes_are_a_stream_with_timeouts_and_its_group_ends_with_it() {
        if !Path::new("/proc/self/stat").exists() {
            return;
        }
        // Echoes what it is given; leaves a background sleep in its group.
        let echo = fake_helper(&format!(
            "/bin/sleep 60 & echo $! > \"$marker\"\n{VERIFIED}\nexec /bin/cat"
        ));
        let mut stream = connect(&echo, Duration::from_secs(5)).unwrap();
        let orphan = marked_pid(&echo);
        assert!(stream.is_idle());
        stream.set_read_timeout(Some(Duration::from_millis(50)));
        let mut buf = [0u8; 16];
        let quiet = stream.read(&mut buf).unwrap_err();
        assert_eq!(quiet.kind(), ErrorKind::TimedOut);
        stream.set_write_timeout(Some(Duration::from_secs(5)));
        stream.write_all(b"hello").unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut got = Vec::new();
        while got.len() < 5 {
            let n = stream.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, b"hello");
        stream.write_all(b"x").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!stream.is_idle(), "an unasked byte makes it unusable");

        // Closed from another thread while a read waits without a timeout: the read ends.
        let closer = stream.closer();
        stream.set_read_timeout(None);
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            closer.close();
        });
        assert_eq!(stream.read(&mut buf).unwrap(), 0);
        waker.join().unwrap();
        assert!(gone(orphan), "the helper's group outlived the close");
        drop(stream);

        // Dropped: the group ends too.
        let _ = std::fs::remove_file(echo.helper.as_ref().unwrap().with_file_name("child"));
        let mut stream = connect(&echo, Duration::from_secs(5)).unwrap();
        let orphan = marked_pid(&echo);
        stream.write_all(b"x").unwrap();
        drop(stream);
        assert!(gone(orphan), "the helper's group outlived the drop");
        remove(&echo);
    }

    #[cfg(unix)]
    #[test]
    fn a_helper_that_stops_reading_or_never_finishes_is_cut_at_the_timeout() {
        if !Path::new("/proc/self/stat").exists() {
            return;
        }
        let deaf = fake_helper(&format!("{VERIFIED}\nexec /bin/sleep 60"));
        let mut stream = connect(&deaf, Duration::from_secs(5)).unwrap();
        stream.set_write_timeout(Some(Duration::from_millis(200)));
        let big = vec![b'a'; 1 << 20];
        let err = stream.write_all(&big).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        assert!(!stream.is_idle());
        assert_eq!(
            stream.write(b"x").unwrap_err().kind(),
            ErrorKind::BrokenPipe
        );

        let stalled = fake_helper("/bin/sleep 60 & echo $! > \"$marker\"\nexec /bin/sleep 60");
        let err = connect(&stalled, Duration::from_millis(200)).unwrap_err();
        assert_eq!(err, TlsError::Timeout);
        assert!(
            gone(marked_pid(&stalled)),
            "a timed-out handshake left its group"
        );

        let refused = fake_helper(
            "echo 'verify error:num=10:certificate has expired' >&2\necho '40:error:0A000086:SSL routines:f:certificate verify failed:x.c:1:' >&2\nexit 1",
        );
        let err = connect(&refused, Duration::from_secs(5)).unwrap_err();
        assert!(
            matches!(&err, TlsError::Refused(t) if t.contains("it has expired")),
            "{err}"
        );
        // A server that closes an idle connection ends the helper: the pool must not take it.
        let closing = fake_helper(&format!("{VERIFIED}\nexit 0"));
        let mut stream = connect(&closing, Duration::from_secs(5)).unwrap();
        let closed = (0..250).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !stream.is_idle()
        });
        assert!(closed, "an ended helper still looks idle");
        for config in [deaf, stalled, refused, closing] {
            remove(&config);
        }
    }

    #[test]
    fn the_helper_is_found_at_a_fixed_path_or_named_absolutely() {
        let e = locate(None, &["/no/such/openssl", "/nor/here/openssl"]).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("apt-get install openssl"), "{text}");
        assert!(
            text.contains("/no/such/openssl, /nor/here/openssl"),
            "{text}"
        );
        assert!(matches!(
            locate(Some(Path::new("openssl")), &HELPER_PATHS),
            Err(TlsError::NoHelper(t)) if t.contains("absolute")
        ));
        assert!(matches!(
            locate(Some(Path::new("/no/such/openssl")), &HELPER_PATHS),
            Err(TlsError::NoHelper(t)) if t.contains("not a file")
        ));
        assert_eq!(
            locate(Some(Path::new("/bin/sh")), &[]).unwrap(),
            PathBuf::from("/bin/sh")
        );
    }

    #[test]
    fn arguments_carry_the_checks_and_no_option_from_the_host() {
        let config = TlsConfig {
            helper: None,
            ca_file: Some("/tmp/ca.pem".into()),
        };
        let args = helper_args(&config, "mcp.example.com", 8443)
            .unwrap()
            .join(" ");
        assert_eq!(
            args,
            "s_client -connect mcp.example.com:8443 -servername mcp.example.com -verify_hostname mcp.example.com -verify_return_error -min_protocol TLSv1.2 -brief -nocommands -no_ign_eof -CAfile /tmp/ca.pem -no-CApath -no-CAstore"
        );
        let args = helper_args(&TlsConfig::default(), "::1", 443)
            .unwrap()
            .join(" ");
        assert!(args.starts_with("s_client -connect [::1]:443 -noservername -verify_ip ::1 "));
        assert!(!args.contains("CAfile"), "{args}");
        for bad in ["-CAfile=/x", "a b", "", ".x", "h\u{0}"] {
            assert!(helper_args(&config, bad, 443).is_err(), "{bad:?}");
        }
        let relative = TlsConfig {
            helper: None,
            ca_file: Some("ca.pem".into()),
        };
        assert!(helper_args(&relative, "h", 443).is_err());
    }

    #[test]
    fn refusals_name_their_reason_in_one_line() {
        let verify = |num: u32, text: &str| {
            refusal(&format!(
                "depth=0 CN = evil\nverify error:num={num}:{text}\n40:error:0A000086:SSL routines:tls_post_process_server_certificate:certificate verify failed:x.c:1:\n"
            ))
        };
        for (num, text, why) in [
            (10, "certificate has expired", "expired"),
            (18, "self-signed certificate", "self-signed"),
            (
                20,
                "unable to get local issuer certificate",
                "issuer is unknown",
            ),
            (62, "hostname mismatch", "wrong host"),
            (64, "IP address mismatch", "wrong host"),
        ] {
            let line = verify(num, text);
            assert!(line.contains(why) && line.contains(text), "{line}");
            assert!(!line.contains('\n') && !line.contains("evil"), "{line}");
        }
        let said = |text: &str| refusal(text);
        assert!(said("4017:error:8000006F:system library:BIO_connect:Connection refused:x.c:117:\nconnect:errno=111\n").contains("refused"));
        assert!(said(
            "40:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:x.c:350:\n"
        )
        .contains("does not speak TLS"));
        assert_eq!(
            said("40:error:0A000102:SSL routines:f:some new reason:x.c:1:\n"),
            "TLS: the handshake failed (some new reason)"
        );
        assert_eq!(
            said(""),
            "TLS: the helper ended the connection without saying why"
        );
        assert!(said("\u{1b}[31mweird\n").ends_with("([31mweird)"));
    }

    #[test]
    fn stderr_lines_are_cut_and_the_handshake_is_reported_once() {
        let mut long = vec![b'x'; MAX_STDERR_LINE_BYTES * 3];
        long.extend_from_slice(b"\nnext\n");
        let mut reader = io::BufReader::with_capacity(64, &long[..]);
        let mut line = Vec::new();
        assert!(read_line(&mut reader, &mut line));
        assert_eq!(line.len(), MAX_STDERR_LINE_BYTES);
        line.clear();
        assert!(read_line(&mut reader, &mut line));
        assert_eq!(line, b"next");
        line.clear();
        assert!(!read_line(&mut reader, &mut line));

        let report = |text: &'static str| {
            let (tx, rx) = mpsc::sync_channel(1);
            watch_stderr(text.as_bytes(), tx);
            rx.recv().unwrap()
        };
        let ok = "CONNECTION ESTABLISHED\nProtocol version: TLSv1.3\nVerification: OK\nDONE\n";
        assert!(matches!(report(ok), Handshake::Verified));
        // A verification line before the handshake is done, or a failed one, is no success.
        let early = "Verification: OK\n";
        assert!(matches!(report(early), Handshake::Failed(_)));
        let bad = "CONNECTION ESTABLISHED\nVerification error: certificate has expired\n";
        assert!(matches!(report(bad), Handshake::Failed(t) if t.contains("expired")));
    }
}
