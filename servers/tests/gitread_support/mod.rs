//! Test harness for gitread: fixture repositories built with a trusted git, the server driven over
//! stdio the way an MCP host drives it, and the observable assertions of GIT-THREATS.md §1
//! (canary programs, secrets, write records, loopback listeners).
//!
//! The git under test is `AGENTTEAMS_GIT` when set (the server reads the same variable), else the
//! first `git` on `PATH`; run the suite once per installed git.

#![allow(dead_code)]

use agentteams_mcp::json::{self, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The git the tests use to build fixtures (and the server uses to read them).
pub fn git_program() -> PathBuf {
    if let Some(explicit) = std::env::var_os("AGENTTEAMS_GIT") {
        return PathBuf::from(explicit);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/bin/git"))
}

/// `(major, minor, patch)` of the git under test.
pub fn git_version() -> (u32, u32, u32) {
    let out = Command::new(git_program())
        .arg("--version")
        .output()
        .expect("git runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .trim()
        .trim_start_matches("git version ")
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// A directory under the system temp dir, removed on drop.
pub struct TempDir {
    pub path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "gitread-{tag}-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&path).expect("temp dir");
        let path = std::fs::canonicalize(&path).expect("canonical temp dir");
        TempDir { path }
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Runs the trusted git (no global or system config, fixed identity) in `dir`; panics on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir).args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

pub fn git_command(dir: &Path) -> Command {
    let mut c = Command::new(git_program());
    c.current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Alice")
        .env("GIT_AUTHOR_EMAIL", "alice@example.com")
        .env("GIT_COMMITTER_NAME", "Alice")
        .env("GIT_COMMITTER_EMAIL", "alice@example.com")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .stdin(Stdio::null());
    c
}

/// Appends `text` to a file (creating it).
pub fn append(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent dir");
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(text.as_bytes()).expect("append");
}

pub fn write(path: &Path, content: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent dir");
    }
    std::fs::write(path, content).expect("write");
}

pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The base fixture of GIT-THREATS.md §1 plus the outside world an attack aims at:
/// `<tmp>/repo` (two commits on a.txt, untracked new.txt), a canary program, a secret file and
/// an outside repository whose commit subject holds the secret token.
/// Set (to anything) to serve every [`Fixture::server`] from a bare twin of the planted
/// repository: `.ci/run` runs the hostile-repository suites once more this way.
pub const BARE_ROOT_ENV: &str = "AGENTTEAMS_TEST_BARE_ROOT";

/// Whether this run serves bare twins ([`BARE_ROOT_ENV`]). A test whose vector exists only in a
/// work tree (the index, work-tree files and links, paths relative to the work tree) says so and
/// checks it only in work-tree runs.
pub fn on_bare_root() -> bool {
    std::env::var_os(BARE_ROOT_ENV).is_some()
}

pub struct Fixture {
    pub tmp: TempDir,
    pub root: PathBuf,
    pub canary: PathBuf,
    pub marker: PathBuf,
    pub secret_file: PathBuf,
    pub token: String,
}

impl Fixture {
    pub fn new(tag: &str) -> Fixture {
        let tmp = TempDir::new(tag);
        let root = tmp.join("repo");
        std::fs::create_dir_all(&root).expect("repo dir");
        git(&root, &["init", "-q", "-b", "main"]);
        write(&root.join("a.txt"), "one\n");
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-q", "-m", "first"]);
        write(&root.join("a.txt"), "one\ntwo\n");
        git(&root, &["commit", "-q", "-am", "second"]);
        write(&root.join("new.txt"), "untracked\n");
        let marker = tmp.join("canary-ran");
        let canary = tmp.join("canary.sh");
        write(
            &canary,
            &format!(
                "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\nexit 0\n",
                marker.display()
            ),
        );
        make_executable(&canary);
        let token = format!(
            "SECRET{:032x}",
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(7)
                ^ 0x5eed_5eed_5eed_5eed
        );
        let secret_file = tmp.join("secret.txt");
        write(&secret_file, &format!("{token}\n"));
        Fixture {
            tmp,
            root,
            canary,
            marker,
            secret_file,
            token,
        }
    }

    pub fn canary_str(&self) -> String {
        self.canary.display().to_string()
    }

    /// An outside repository whose only commit's subject is the secret token; returns its path.
    pub fn outside_repo(&self) -> PathBuf {
        let outside = self.tmp.join("outside");
        if !outside.exists() {
            std::fs::create_dir_all(&outside).expect("outside dir");
            git(&outside, &["init", "-q", "-b", "main"]);
            write(&outside.join("secret.txt"), &format!("{}\n", self.token));
            git(&outside, &["add", "secret.txt"]);
            git(&outside, &["commit", "-q", "-m", &self.token]);
        }
        outside
    }

    /// Replaces the project's `.git` directory with a gitfile `gitdir: <target>`.
    pub fn gitfile_to(&self, target: &Path) {
        std::fs::remove_dir_all(self.root.join(".git")).expect("remove .git");
        write(
            &self.root.join(".git"),
            &format!("gitdir: {}\n", target.display()),
        );
    }

    /// Replaces the project's `.git` directory with a symlink to `target`.
    pub fn dot_git_symlink_to(&self, target: &Path) {
        std::fs::remove_dir_all(self.root.join(".git")).expect("remove .git");
        std::os::unix::fs::symlink(target, self.root.join(".git")).expect("symlink .git");
    }

    /// GIT-THREATS.md P11: `.git` points at an admin dir outside both the project and the outside
    /// repository, which claims that repository as its common dir and links back to this `.git`.
    pub fn forge_worktree_registration(&self) {
        let outside = self.outside_repo();
        let admin = self.tmp.join("forged-admin");
        write(&admin.join("HEAD"), "ref: refs/heads/main\n");
        write(
            &admin.join("commondir"),
            &format!("{}\n", outside.join(".git").display()),
        );
        write(
            &admin.join("gitdir"),
            &format!("{}\n", self.root.join(".git").display()),
        );
        self.gitfile_to(&admin);
    }

    /// A genuine linked worktree of the project at `<tmp>/wt` (outside the project), on branch
    /// `side`; returns its path.
    pub fn linked_worktree(&self) -> PathBuf {
        let wt = self.tmp.join("wt");
        let wt_arg = wt.display().to_string();
        git(
            &self.root,
            &["worktree", "add", "-q", &wt_arg, "-b", "side"],
        );
        wt
    }

    /// Appends to the repository's `.git/config` directly (never through git: a planted vector
    /// must not fire while it is being planted).
    pub fn plant_config(&self, text: &str) {
        append(&self.root.join(".git/config"), text);
    }

    /// Makes every worktree file's mtime newer than the index records (as in an unpacked
    /// archive), so status and diff re-hash them, which is when clean filters would run.
    pub fn touch_worktree(&self) {
        let later = SystemTime::now() + Duration::from_secs(5);
        for entry in walk(&self.root) {
            if entry.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            // Only regular files: opening a FIFO for writing would wait for a reader.
            if !std::fs::symlink_metadata(&entry).is_ok_and(|m| m.is_file()) {
                continue;
            }
            if let Ok(f) = std::fs::File::options().write(true).open(&entry) {
                let _ = f.set_modified(later);
            }
        }
    }

    pub fn assert_canary_silent(&self) {
        let ran = std::fs::read_to_string(&self.marker).unwrap_or_default();
        assert!(ran.is_empty(), "a repository program ran: {ran}");
    }

    /// The token in any case (git lowercases config keys it quotes) never appears.
    pub fn assert_no_secret(&self, texts: &[String]) {
        let token = self.token.to_ascii_lowercase();
        for text in texts {
            assert!(
                !text.to_ascii_lowercase().contains(&token),
                "the secret leaked: {text}"
            );
        }
    }

    /// GIT-THREATS.md A9: a branch `signed` whose commit (subject `signed commit`, on top of
    /// HEAD) carries a `gpgsig` header, written as a raw object; returns its id.
    pub fn signed_branch(&self) -> String {
        let tree = git(&self.root, &["rev-parse", "HEAD^{tree}"]);
        let parent = git(&self.root, &["rev-parse", "HEAD"]);
        let commit = format!(
            "tree {tree}\nparent {parent}\nauthor Alice <alice@example.com> 1704067200 +0000\ncommitter Alice <alice@example.com> 1704067200 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEabc\n -----END PGP SIGNATURE-----\n\nsigned commit\n"
        );
        let id = write_commit(&self.root, &commit);
        git(&self.root, &["update-ref", "refs/heads/signed", &id]);
        id
    }

    /// Plants `log.showSignature=true` and the canary as every signature program.
    pub fn plant_signature_programs(&self) {
        let c = self.canary_str();
        self.plant_config(&format!(
            "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {c}\n[gpg \"ssh\"]\n\tprogram = {c}\n[gpg \"x509\"]\n\tprogram = {c}\n"
        ));
    }

    pub fn server(&self) -> Server {
        Server::start(&self.served_root(), &[])
    }

    /// The server with `--compat reference`: the reference's exact declarations and answers.
    pub fn reference_server(&self) -> Server {
        Server::start_with_args(&self.served_root(), &["--compat", "reference"])
    }

    /// The root [`Fixture::server`] serves: the work tree, or with [`BARE_ROOT_ENV`] set, a bare
    /// twin of the repository made now, after the test planted its vectors ([`Fixture::bare_twin`]).
    /// A `.git` that is not a directory (a gitfile, a link, a FIFO: a work tree's pointer, which a
    /// bare repository has no place for) is served as the work tree it is.
    pub fn served_root(&self) -> PathBuf {
        let dot_git = std::fs::symlink_metadata(self.root.join(".git"));
        match on_bare_root() && dot_git.is_ok_and(|m| m.is_dir()) {
            true => self.bare_twin(),
            false => self.root.clone(),
        }
    }

    /// The repository as a bare mirror (`twin.git` beside the work tree), with everything planted
    /// in its git directory: `.git` copied as it is (`cp -a`: links stay links, FIFOs FIFOs) and
    /// `core.bare` made true by editing the config's text, so no git runs on the hostile copy
    /// before the server does. What was planted in the work tree has no place in a bare root and
    /// stays behind.
    pub fn bare_twin(&self) -> PathBuf {
        let twin = self.tmp.join("twin.git");
        let _ = std::fs::remove_dir_all(&twin);
        let copied = Command::new("cp")
            .arg("-a")
            .arg(self.root.join(".git"))
            .arg(&twin)
            .status()
            .expect("cp runs");
        assert!(copied.success(), "the git directory copies");
        let config = twin.join("config");
        let text = std::fs::read_to_string(&config).expect("the copy has a config");
        let bare = match text.contains("\tbare = false") {
            true => text.replacen("\tbare = false", "\tbare = true", 1),
            false => format!("{text}[core]\n\tbare = true\n"),
        };
        std::fs::write(&config, bare).expect("the copy's config is written");
        twin
    }
}

/// Every regular file and symlink under `dir`, recursively.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(_) => out.push(path),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// `(size, mtime, content)` of every file under `dir` (GIT-THREATS.md WRITE record).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>, Vec<u8>)> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let meta = std::fs::symlink_metadata(&p).ok();
            let record = (
                meta.as_ref().map(|m| m.len()).unwrap_or(0),
                meta.and_then(|m| m.modified().ok()),
                std::fs::read(&p).unwrap_or_default(),
            );
            (p, record)
        })
        .collect()
}

/// One tool result as a host sees it.
#[derive(Clone, Debug)]
pub struct Reply {
    pub is_error: bool,
    /// The text content block.
    pub text: String,
    /// The structured content, when the negotiated revision has it.
    pub structured: Option<Value>,
}

impl Reply {
    /// The `output` string of a success: the plain text, which the structured content repeats
    /// as `output` (the product's answers), or the tool text parsed as JSON (the reference's).
    pub fn output(&self) -> String {
        assert!(!self.is_error, "expected success, got error: {}", self.text);
        let structured = self.structured.as_ref();
        if structured
            .and_then(|s| s.get("output"))
            .and_then(Value::as_str)
            == Some(&self.text)
        {
            return self.text.clone();
        }
        let value = json::parse(self.text.as_bytes()).expect("tool text is JSON");
        value
            .get("output")
            .and_then(Value::as_str)
            .expect("an output string")
            .to_owned()
    }

    pub fn assert_error_contains(&self, needle: &str) {
        assert!(
            self.is_error,
            "expected an error containing {needle:?}, got success: {}",
            self.text
        );
        assert!(
            self.text.contains(needle),
            "expected {needle:?} in {:?}",
            self.text
        );
    }
}

/// The server binary over stdio.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    stderr_file: PathBuf,
    _stderr_dir: Arc<TempDir>,
    /// The `instructions` of the initialize result (empty when none).
    instructions: String,
}

impl Server {
    /// Starts `agentteams-mcp --serve-mcp gitread --root <root>` with extra environment `env`
    /// (a `None` value removes the variable) and performs the initialize handshake.
    pub fn start(root: &Path, env: &[(&str, Option<&str>)]) -> Server {
        Server::start_in(root, env, None)
    }

    /// Starts the server with extra command-line `args` (e.g. `--compat reference`).
    pub fn start_with_args(root: &Path, args: &[&str]) -> Server {
        let stderr_dir = Arc::new(TempDir::new("stderr"));
        let stderr_file = stderr_dir.join("stderr");
        let command = server_command(root, args, &[], &[], &stderr_file);
        Server::handshake(command, stderr_file, stderr_dir)
    }

    pub fn start_in(root: &Path, env: &[(&str, Option<&str>)], cwd: Option<&Path>) -> Server {
        let stderr_dir = Arc::new(TempDir::new("stderr"));
        let stderr_file = stderr_dir.join("stderr");
        let mut command = server_command(root, &[], &[], env, &stderr_file);
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        Server::handshake(command, stderr_file, stderr_dir)
    }

    /// Spawns `command` (a gitread server over stdio) and performs the initialize handshake.
    fn handshake(mut command: Command, stderr_file: PathBuf, stderr_dir: Arc<TempDir>) -> Server {
        let mut child = command.spawn().expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 1,
            stderr_file,
            _stderr_dir: stderr_dir,
            instructions: String::new(),
        };
        let init = server.request(
            "initialize",
            r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gitread-tests","version":"1"}}"#,
        );
        let result = init.get("result");
        assert!(result.is_some(), "initialize failed: {init}");
        let instructions = result.and_then(|r| r.get("instructions"));
        server.instructions = instructions
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    /// What the server's initialize result said in `instructions`.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Reads one reply line.
    pub fn read_reply(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read reply");
        assert!(n > 0, "the server closed stdout; stderr: {}", self.stderr());
        json::parse(line.as_bytes()).expect("reply is JSON")
    }

    /// Sends a request with `params` (JSON text) and returns its reply.
    pub fn request(&mut self, method: &str, params: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ));
        let reply = self.read_reply();
        assert_eq!(reply.get("id").and_then(Value::as_u64), Some(id), "{reply}");
        reply
    }

    /// Calls tool `name` with `arguments` (JSON text).
    pub fn call(&mut self, name: &str, arguments: &str) -> Reply {
        let reply = self.request(
            "tools/call",
            &format!(r#"{{"name":"{name}","arguments":{arguments}}}"#),
        );
        let result = reply
            .get("result")
            .unwrap_or_else(|| panic!("no result for {name}: {reply}"));
        let text = result
            .get("content")
            .and_then(|c| c.as_array())
            .and_then(|c| c.first())
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Reply {
            is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
            text,
            structured: result.get("structuredContent").cloned(),
        }
    }

    /// The sweep of GIT-THREATS.md §1: every tool, with and without a path.
    pub fn sweep(&mut self) -> Vec<Reply> {
        SWEEP
            .iter()
            .map(|(name, args)| self.call(name, args))
            .collect()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_file).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

pub const SWEEP: [(&str, &str); 8] = [
    ("git_log", r#"{"n":5}"#),
    ("git_log", r#"{"path":"a.txt"}"#),
    ("git_show", r#"{"rev":"HEAD"}"#),
    ("git_show", r#"{"rev":"HEAD","path":"a.txt"}"#),
    ("git_diff", r#"{"base":"HEAD~1","head":"HEAD"}"#),
    (
        "git_diff",
        r#"{"base":"HEAD~1","head":"HEAD","path":"a.txt"}"#,
    ),
    ("git_blame", r#"{"rev":"HEAD","path":"a.txt"}"#),
    ("git_status", "{}"),
];

/// Every text of a sweep plus the server's stderr, for SECRET assertions.
pub fn texts(replies: &[Reply], server: &Server) -> Vec<String> {
    let mut all: Vec<String> = replies.iter().map(|r| r.text.clone()).collect();
    all.push(server.stderr());
    all
}

/// Asserts every sweep call succeeded with the base fixture's content.
pub fn assert_sweep_served(replies: &[Reply]) {
    for ((name, args), reply) in SWEEP.iter().zip(replies) {
        assert!(!reply.is_error, "{name} {args} failed: {}", reply.text);
    }
    assert!(replies[0].output().contains("second"));
    assert!(replies[2].output().contains("+two"));
    assert!(replies[6].output().contains("two"));
}

/// Asserts every sweep call was refused with `needle` in its message.
pub fn assert_sweep_refused(replies: &[Reply], needle: &str) {
    for reply in replies {
        reply.assert_error_contains(needle);
    }
}

/// Loopback listeners that count accepted connections (GIT-THREATS.md NET).
pub struct Listener {
    pub port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Listener {
    pub fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("addr").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                counter.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut s) = stream {
                    let _ = s.write_all(
                        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
                    );
                }
            }
        });
        Listener { port, accepted }
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Runs the trusted git with `input` on stdin; returns trimmed stdout (panics on failure).
pub fn git_stdin(dir: &Path, args: &[&str], input: &[u8]) -> String {
    let mut child = git_command(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("git output");
    let _ = feeder.join();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The blob id git stores for `content`.
pub fn blob_id(dir: &Path, content: &str) -> String {
    git_stdin(dir, &["hash-object", "--stdin"], content.as_bytes())
}

/// Writes the raw commit object `text` (headers, blank line, message) into `dir`'s repository;
/// returns its id.
pub fn write_commit(dir: &Path, text: &str) -> String {
    git_stdin(
        dir,
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        text.as_bytes(),
    )
}

/// The path of the loose object `id` in `root`'s repository.
pub fn loose_object(root: &Path, id: &str) -> PathBuf {
    root.join(".git/objects").join(&id[..2]).join(&id[2..])
}

/// True while process `pid` exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Makes a FIFO at `path` (reading it would wait for a writer forever).
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The server command: `wrapper` (a program and its arguments, or nothing), then
/// `agentteams-mcp --serve-mcp gitread --root <root>` with extra `args` and environment `env` (a
/// `None` value removes the variable), stdio piped, stderr to `stderr_file`.
pub fn server_command(
    root: &Path,
    args: &[&str],
    wrapper: &[&str],
    env: &[(&str, Option<&str>)],
    stderr_file: &Path,
) -> Command {
    let binary = env!("CARGO_BIN_EXE_agentteams-mcp");
    let mut command = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut command = Command::new(program);
            command.args(rest).arg(binary);
            command
        }
        None => Command::new(binary),
    };
    command
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr_file).expect("stderr file"));
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    command
}

/// GNU time, which reports the peak resident memory of a process and every descendant it reaped.
pub const GNU_TIME: &str = "/usr/bin/time";

/// A server over stdio whose peak memory, and that of every git it ran, is measured: under GNU
/// time when the machine has it, else (server only) from `/proc/<pid>/status` `VmHWM`.
pub struct MeasuredServer {
    pub server: Server,
    report: Option<PathBuf>,
    dir: Arc<TempDir>,
}

impl MeasuredServer {
    /// The server with extra command-line `args` (e.g. `--git-memory-limit 256M`).
    pub fn start(root: &Path, args: &[&str]) -> MeasuredServer {
        let stderr_dir = Arc::new(TempDir::new("stderr"));
        let stderr_file = stderr_dir.join("stderr");
        let report = stderr_dir.join("time");
        let timed = Path::new(GNU_TIME).is_file();
        if !timed {
            println!("note: {GNU_TIME} missing; measuring the server's own peak only");
        }
        let report_arg = report.to_string_lossy().into_owned();
        let wrapper: &[&str] = match timed {
            true => &[GNU_TIME, "-f", "%M", "-o", &report_arg],
            false => &[],
        };
        let command = server_command(root, args, wrapper, &[], &stderr_file);
        MeasuredServer {
            server: Server::handshake(command, stderr_file, stderr_dir.clone()),
            report: timed.then_some(report),
            dir: stderr_dir,
        }
    }

    /// Stops the server; the peak resident memory in KiB (server and reaped gits under GNU time).
    pub fn finish(self) -> u64 {
        let MeasuredServer {
            server,
            report,
            dir: _keep,
        } = self;
        let own_peak = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            });
        drop(server);
        match report {
            Some(report) => std::fs::read_to_string(&report)
                .ok()
                .and_then(|text| text.split_whitespace().last()?.parse().ok())
                .expect("GNU time reports the peak"),
            None => own_peak.expect("VmHWM of the server"),
        }
    }
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The live children of process `pid`: each one's pid and command line (arguments NUL-separated).
pub fn children(pid: u32) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (_, rest) = stat.rsplit_once(')')?;
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let parent: u32 = fields.next()?.parse().ok()?;
            (parent == pid && state != "Z").then_some(())?;
            let cmdline = std::fs::read_to_string(entry.path().join("cmdline")).ok()?;
            Some((child, cmdline))
        })
        .collect()
}

/// Starts gitread on `root` and asserts it refuses to serve: exit 2, nothing on stdout, and one
/// line on stderr, which is returned.
pub fn assert_refused_at_startup(root: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["--serve-mcp", "gitread", "--root"])
        .arg(root)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}
