//! The hardened git invocation: which git runs, with which environment and global options.
//!
//! Everything a repository or the inherited environment could use to make git run a program, talk
//! to the network, read outside the project or write is switched off here, on every call, whatever
//! the pre-flight found (GIT-THREATS.md §3). Command-line `-c` settings outrank every config file,
//! and unknown keys are ignored by older gits, so the list is safe to pass to any supported git.

use super::gate::{Gate, Refusal};
use super::launch::Launcher;
use super::process::{self, piped_in_own_group, Finished, GroupKiller, RunError, Window};
use super::quirks;
use super::repo::Layout;
use super::sanitize;
use agentteams_mcp::server::CancelToken;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Environment variable naming the git executable to use (an absolute path). When unset, `git` is
/// looked up once at start in the absolute entries of the server's `PATH`.
pub const GIT_ENV: &str = "AGENTTEAMS_GIT";

/// Fallback search path when the server's own `PATH` is unset or names no git.
const DEFAULT_PATH: &str = "/usr/bin:/bin";

/// The oldest patch release accepted on each 2.x line: the May 2024 security batch (CVE-2024-32002,
/// -32004, -32465 and `GIT_NO_LAZY_FETCH`), which on every line also postdates `core.fsmonitor`
/// as a boolean (2.36), `--end-of-options` (2.24), `GIT_CONFIG_COUNT` (2.31) and
/// `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM` (2.32). Lines after 2.45 carry them from their first
/// release; lines before 2.39 got no backport and are refused.
const MINIMUM_BY_LINE: [(u32, u32); 7] = [
    (39, 4),
    (40, 2),
    (41, 1),
    (42, 2),
    (43, 4),
    (44, 1),
    (45, 1),
];

/// `-c` settings every git process gets, in order: the reference's list first (REFERENCE-BEHAVIOUR.md
/// §4.3), then the product's additions (GIT-THREATS.md §3.2). Each pair closes the threat ids noted.
pub const CONFIG_OVERRIDES: [(&str, &str); 36] = [
    ("core.fsmonitor", "false"),          // A1
    ("core.hooksPath", "/dev/null"),      // A2
    ("core.pager", "cat"),                // A4
    ("diff.external", ""),                // A5
    ("core.untrackedCache", "false"),     // I7
    ("log.showSignature", "false"),       // A9
    ("protocol.allow", "never"),          // N1
    ("status.submoduleSummary", "false"), // A10
    ("protocol.file.allow", "never"), // N1: a repository's per-protocol setting outranks protocol.allow
    ("protocol.git.allow", "never"),
    ("protocol.ssh.allow", "never"),
    ("protocol.http.allow", "never"),
    ("protocol.https.allow", "never"),
    ("protocol.ext.allow", "never"),
    ("log.mailmap", "false"), // I5
    ("mailmap.file", ""),
    ("mailmap.blob", ""),
    ("core.useReplaceRefs", "false"), // I4, and it reaches child gits
    ("safe.bareRepository", "explicit"), // P2
    ("diff.autoRefreshIndex", "false"), // A2, I7
    ("core.splitIndex", "false"),     // I7
    ("gc.auto", "0"),                 // A12
    ("maintenance.auto", "false"),    // A12
    ("credential.helper", ""),        // N4: an empty value resets the list
    ("core.askPass", ""),             // N4
    ("http.proxy", ""),               // N3
    ("diff.submodule", "short"),      // A10: `short` never spawns a child git
    ("submodule.recurse", "false"),   // A10
    ("color.ui", "false"),            // I6
    ("core.quotePath", "true"),       // I6, O1: control bytes in paths are quoted
    ("i18n.logOutputEncoding", "UTF-8"), // I6, O4
    ("log.decorate", "false"),        // I6
    ("blame.ignoreRevsFile", ""), // P9 (git ignores the reset: the pre-flight refuses the key too)
    // P9: files named by config whose parse warnings quote their content on stderr.
    ("core.attributesFile", "/dev/null"),
    ("core.excludesFile", "/dev/null"),
    ("diff.orderFile", "/dev/null"),
];

/// A resolved git: its absolute path and the fixed `PATH` its children get.
#[derive(Clone, Debug)]
pub struct Git {
    pub program: PathBuf,
    child_path: OsString,
}

/// What `git --version` said, and whether the defences can rely on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub text: String,
    pub numbers: (u32, u32, u32),
}

impl Git {
    /// Finds git: `AGENTTEAMS_GIT` when set (must be absolute), else the first executable `git` in
    /// the absolute entries of `PATH` (empty and relative entries are skipped: they would resolve
    /// against the directory the server happened to start in).
    pub fn locate() -> Result<Option<Git>, String> {
        if let Some(explicit) = std::env::var_os(GIT_ENV) {
            let program = PathBuf::from(&explicit);
            if !program.is_absolute() {
                return Err(format!(
                    "{GIT_ENV} must be an absolute path to a git executable, not {:?}",
                    program.display().to_string()
                ));
            }
            return Ok(Some(Git::at(program)));
        }
        let search = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
        let found = std::env::split_paths(&search)
            .chain(std::env::split_paths(DEFAULT_PATH))
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join("git"))
            .find(|candidate| is_executable_file(candidate));
        Ok(found.map(Git::at))
    }

    /// A git at an absolute path; children get `PATH` = its directory, then `/usr/bin:/bin`.
    pub fn at(program: PathBuf) -> Git {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(dir) = program.parent() {
            dirs.push(dir.to_path_buf());
        }
        for dir in std::env::split_paths(DEFAULT_PATH) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        let child_path = std::env::join_paths(dirs).unwrap_or_else(|_| DEFAULT_PATH.into());
        Git {
            program,
            child_path,
        }
    }

    /// A command for this git with an empty environment plus the allowlist, stdin from the null
    /// device, stdout and stderr piped, in its own process group (so a timeout can kill whatever it
    /// started). `ceiling` is the parent of the project root. Every git process of the server is
    /// built here and started by a [`Launcher`], under the memory limit.
    pub fn command(&self, cwd: &Path, ceiling: &Path) -> Command {
        let mut command = Command::new(&self.program);
        command.env_clear();
        command.env("PATH", &self.child_path);
        for (name, value) in FIXED_ENV {
            command.env(name, value);
        }
        command.env("GIT_CEILING_DIRECTORIES", ceiling);
        command.current_dir(cwd);
        piped_in_own_group(&mut command);
        command
    }
}

/// The environment every git child gets besides `PATH` and `GIT_CEILING_DIRECTORIES`
/// (GIT-THREATS.md §3.1). Everything else the server inherited is dropped.
const FIXED_ENV: [(&str, &str); 20] = [
    ("LC_ALL", "C"),
    ("LANG", "C"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_SYSTEM", "/dev/null"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_LITERAL_PATHSPECS", "1"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("GIT_GRAFT_FILE", "/dev/null"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_ALLOW_PROTOCOL", "none"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_LFS_SKIP_SMUDGE", "1"),
    ("GIT_ADVICE", "0"),
    ("GIT_CONFIG_COUNT", "0"),
    // git flushes stdout after every commit when it is a pipe; one buffered write is enough here.
    ("GIT_FLUSH", "0"),
];

/// The error text of a call the client cancelled (the engine sends no reply for it).
pub const CANCELLED: &str = "git was stopped: the call was cancelled";

/// Runs hardened git commands on one project's validated repository.
#[derive(Debug)]
pub struct Runner {
    git: Git,
    root: PathBuf,
    /// Parent of the root, for `GIT_CEILING_DIRECTORIES`.
    ceiling: PathBuf,
    killer: GroupKiller,
    /// Starts each git process under the memory limit.
    launcher: Launcher,
    /// The bound on git processes running at once.
    gate: Gate,
}

impl Runner {
    pub fn new(git: Git, root: &Path, killer: GroupKiller, launcher: Launcher) -> Runner {
        Runner {
            git,
            root: root.to_path_buf(),
            ceiling: root.parent().unwrap_or(root).to_path_buf(),
            killer,
            launcher,
            gate: Gate::default(),
        }
    }

    /// git pinned to `layout` (`--git-dir`, `GIT_COMMON_DIR`, `--work-tree`), with every override
    /// and the pack and cache sizes of the memory limit, the config-defined hooks in `hook_names`
    /// disabled, then `subcommand`.
    pub fn command<I, S>(&self, layout: &Layout, hook_names: &[String], subcommand: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.git.command(&self.root, &self.ceiling);
        command.env("GIT_COMMON_DIR", &layout.common_dir);
        disable_hooks(&mut command, hook_names);
        let work_tree = (!layout.bare).then_some(self.root.as_path());
        command.args(global_args(&layout.git_dir, work_tree));
        if let Some(limiter) = self.launcher.limiter() {
            for (key, value) in limiter.config_overrides() {
                command.arg("-c").arg(format!("{key}={value}"));
            }
        }
        command.args(subcommand);
        command
    }

    /// Runs `command` for at most `timeout` once the gate admits it, keeping `stdout_keep` bytes
    /// of stdout; `Err` is the reference's message for a non-zero exit, a timeout, a spawn
    /// failure, or [`CANCELLED`]; or the gate's busy message; or, when git ran out of memory,
    /// a message naming the limit.
    pub fn run(
        &self,
        command: Command,
        stdout_keep: usize,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Finished, GitError> {
        self.run_window(command, Window::first(stdout_keep), timeout, cancel)
    }

    /// [`Runner::run`], keeping the part of stdout `window` selects (the rest is counted, never
    /// held).
    pub fn run_window(
        &self,
        command: Command,
        window: Window,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Finished, GitError> {
        self.run_window_accepting(command, window, timeout, cancel, None)
    }

    /// [`Runner::run`] for the first git of a call that runs another right after it: the next
    /// spare starts while this git runs, so the second finds it ready. (After a call's only git
    /// the spare starts once that git has finished, so the two never compete for a CPU.)
    pub fn run_before_another(
        &self,
        command: Command,
        stdout_keep: usize,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<Finished, GitError> {
        let window = Window::first(stdout_keep);
        self.run_inner(command, window, timeout, cancel, None, true)
    }

    /// [`Runner::run_window`] for a command whose exit status `answer`, when given, is an
    /// answer, not a failure (`git grep` exits 1 when nothing matched).
    pub fn run_window_accepting(
        &self,
        command: Command,
        window: Window,
        timeout: Duration,
        cancel: &CancelToken,
        answer: Option<i32>,
    ) -> Result<Finished, GitError> {
        self.run_inner(command, window, timeout, cancel, answer, false)
    }

    fn run_inner(
        &self,
        mut command: Command,
        window: Window,
        timeout: Duration,
        cancel: &CancelToken,
        answer: Option<i32>,
        another_follows: bool,
    ) -> Result<Finished, GitError> {
        let failed = GitError::Failed;
        let _permit = self.gate.enter(cancel).map_err(|refusal| match refusal {
            Refusal::Busy(message) => failed(message),
            Refusal::Cancelled => failed(CANCELLED.to_owned()),
        })?;
        let child = self
            .launcher
            .spawn(&mut command)
            .map_err(|e| failed(format!("git could not run: {e}")))?;
        if another_follows {
            self.launcher.refill_later();
        }
        let outcome = process::run_window(child, window, timeout, cancel, &self.killer);
        self.launcher.refill_later();
        match outcome {
            Ok(done) if done.status.success() => Ok(done),
            Ok(done) if answer.is_some() && done.status.code() == answer => Ok(done),
            Ok(done) => {
                let code = process::exit_code(&done.status);
                let stderr = sanitize::render_stderr(&done.stderr);
                let out_of_memory = self.launcher.limiter();
                Err(
                    match out_of_memory.and_then(|l| l.out_of_memory_message(code, &stderr)) {
                        Some(message) => failed(message),
                        None => GitError::Exited { code, stderr },
                    },
                )
            }
            Err(RunError::TimedOut) => Err(failed(format!(
                "git timed out after {}s",
                timeout.as_secs()
            ))),
            Err(RunError::Cancelled) => Err(failed(CANCELLED.to_owned())),
            Err(RunError::BlockedOnFifo(file)) => Err(failed(blocked_message(file.as_deref()))),
            Err(RunError::Spawn(e)) => Err(failed(format!("git could not run: {e}"))),
        }
    }
}

/// Why a git process gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitError {
    /// git ran and exited with `code`; `stderr` is the start of what it printed, rendered.
    Exited { code: i32, stderr: String },
    /// It did not run to an exit of its own, or ran out of memory: the message the client sees
    /// (busy, cancelled, timed out, blocked on a FIFO, could not start, the memory limit).
    Failed(String),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::Exited { code, stderr } => write!(f, "git exited {code}: {stderr}"),
            GitError::Failed(message) => f.write_str(message),
        }
    }
}

impl From<GitError> for String {
    fn from(error: GitError) -> String {
        error.to_string()
    }
}

/// The error of a call whose git was found waiting to open a FIFO.
fn blocked_message(file: Option<&str>) -> String {
    let what = file.map_or_else(|| "a file".to_owned(), |f| format!("{f:?}"));
    format!(
        "git was stopped: it was opening {what}, which is a FIFO in the project, and would wait \
         for a writer forever; remove it to serve this repository"
    )
}

/// Global options placed before the subcommand: `--git-dir`/`--work-tree` pin the repository the
/// pre-flight validated (no discovery, `core.worktree` ignored), then every `-c` override. A bare
/// repository (`work_tree` `None`) gets `--bare`: without it git would take the working
/// directory as the work tree (`GIT_COMMON_DIR`, always set, keeps the repository's
/// `core.bare` and `core.worktree` from applying).
pub fn global_args(git_dir: &Path, work_tree: Option<&Path>) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::with_capacity(5 + 2 * CONFIG_OVERRIDES.len());
    args.push("--no-pager".into());
    args.push("--no-replace-objects".into());
    args.push("--no-optional-locks".into());
    let mut git_dir_arg = OsString::from("--git-dir=");
    git_dir_arg.push(git_dir);
    args.push(git_dir_arg);
    match work_tree {
        Some(work_tree) => {
            let mut work_tree_arg = OsString::from("--work-tree=");
            work_tree_arg.push(work_tree);
            args.push(work_tree_arg);
        }
        None => args.push("--bare".into()),
    }
    for (key, value) in CONFIG_OVERRIDES.iter().chain(&quirks::ADVICE_OFF) {
        args.push("-c".into());
        args.push(format!("{key}={value}").into());
    }
    args
}

/// Disables each config-defined hook (git ≥ 2.54) by name through `GIT_CONFIG_COUNT`, which accepts
/// any name and outranks config files; older gits ignore the keys.
pub fn disable_hooks(command: &mut Command, hook_names: &[String]) {
    command.env("GIT_CONFIG_COUNT", hook_names.len().to_string());
    for (index, name) in hook_names.iter().enumerate() {
        command.env(
            format!("GIT_CONFIG_KEY_{index}"),
            format!("hook.{name}.enabled"),
        );
        command.env(format!("GIT_CONFIG_VALUE_{index}"), "false");
    }
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Version {
    /// Parses `git version 2.39.5` (trailing vendor text such as ` (Apple Git-146)` or
    /// `.windows.1` ignored).
    pub fn parse(output: &str) -> Option<Version> {
        let text = output.trim().strip_prefix("git version ")?;
        let mut numbers = text
            .split(|c: char| !c.is_ascii_digit())
            .map(|part| part.parse::<u32>().ok());
        let major = numbers.next()??;
        let minor = numbers.next()??;
        let patch = numbers.next().flatten().unwrap_or(0);
        Some(Version {
            text: text.split_whitespace().next().unwrap_or(text).to_owned(),
            numbers: (major, minor, patch),
        })
    }

    /// `Err(minimum)` when this git lacks a defence the server relies on.
    pub fn check_minimum(&self) -> Result<(), String> {
        let (major, minor, patch) = self.numbers;
        if major > 2 || (major == 2 && minor > 45) {
            return Ok(());
        }
        let line_minimum = MINIMUM_BY_LINE
            .iter()
            .find(|(line, _)| major == 2 && *line == minor);
        match line_minimum {
            Some((line, least)) if patch >= *least => Ok(()),
            Some((line, least)) => Err(format!("2.{line}.{least}")),
            None => Err(format!(
                "2.{}.{}",
                MINIMUM_BY_LINE[0].0, MINIMUM_BY_LINE[0].1
            )),
        }
    }
}

/// The refusal every tool returns when git is too old.
pub fn too_old_message(version: &Version, minimum: &str) -> String {
    format!(
        "git {} is older than the minimum {minimum}; refusing",
        version.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> Version {
        Version::parse(text).unwrap_or_else(|| panic!("unparsed {text}"))
    }

    #[test]
    fn versions_parse_with_vendor_suffixes() {
        assert_eq!(version("git version 2.39.5\n").numbers, (2, 39, 5));
        assert_eq!(version("git version 2.47.3.windows.1").numbers, (2, 47, 3));
        assert_eq!(version("git version 2.39.3 (Apple Git-146)").text, "2.39.3");
        assert_eq!(version("git version 2.50").numbers, (2, 50, 0));
        assert!(Version::parse("hg 6.1").is_none());
    }

    #[test]
    fn the_minimum_follows_the_may_2024_security_releases() {
        // (git's version, the release it must be raised to, if any).
        for (installed, needed) in [
            ("2.39.4", None),
            ("2.39.3", Some("2.39.4")),
            ("2.43.3", Some("2.43.4")),
            ("2.44.1", None),
            ("2.46.0", None),
            ("3.0.0", None),
            ("2.30.9", Some("2.39.4")),
            ("1.9.9", Some("2.39.4")),
        ] {
            assert_eq!(
                version(&format!("git version {installed}")).check_minimum(),
                needed.map_or(Ok(()), |n| Err(n.to_owned())),
                "{installed}"
            );
        }
    }

    #[test]
    fn argv_holds_the_reference_overrides_in_order_then_the_product_ones() {
        let args: Vec<String> = global_args(Path::new("/r/.git"), Some(Path::new("/r")))
            .into_iter()
            .map(|a| a.into_string().unwrap_or_default())
            .collect();
        assert_eq!(
            &args[..5],
            [
                "--no-pager",
                "--no-replace-objects",
                "--no-optional-locks",
                "--git-dir=/r/.git",
                "--work-tree=/r"
            ]
        );
        let pairs: Vec<&str> = args[5..]
            .chunks(2)
            .map(|pair| {
                assert_eq!(pair[0], "-c");
                pair[1].as_str()
            })
            .collect();
        let reference = [
            "core.fsmonitor=false",
            "core.hooksPath=/dev/null",
            "core.pager=cat",
            "diff.external=",
            "core.untrackedCache=false",
            "log.showSignature=false",
            "protocol.allow=never",
            "status.submoduleSummary=false",
            "protocol.file.allow=never",
            "protocol.git.allow=never",
            "protocol.ssh.allow=never",
            "protocol.http.allow=never",
            "protocol.https.allow=never",
            "protocol.ext.allow=never",
            "log.mailmap=false",
            "mailmap.file=",
            "mailmap.blob=",
        ];
        assert_eq!(&pairs[..reference.len()], reference);
        for added in [
            "safe.bareRepository=explicit",
            "credential.helper=",
            "core.askPass=",
            "http.proxy=",
            "core.useReplaceRefs=false",
        ] {
            assert!(pairs.contains(&added), "{added}");
        }
    }

    #[test]
    fn the_environment_is_cleared_then_the_allowlist_set() {
        let git = Git::at(PathBuf::from("/opt/git/bin/git"));
        let command = git.command(Path::new("/r"), Path::new("/"));
        let envs: Vec<(String, Option<String>)> = command
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let get = |name: &str| {
            envs.iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.clone())
        };
        assert_eq!(get("PATH").as_deref(), Some("/opt/git/bin:/usr/bin:/bin"));
        assert_eq!(get("GIT_NO_LAZY_FETCH").as_deref(), Some("1"));
        assert_eq!(get("GIT_CONFIG_GLOBAL").as_deref(), Some("/dev/null"));
        assert_eq!(get("GIT_CEILING_DIRECTORIES").as_deref(), Some("/"));
        assert!(get("HOME").is_none());
    }

    #[test]
    fn hooks_are_disabled_by_name() {
        let git = Git::at(PathBuf::from("/usr/bin/git"));
        let mut command = git.command(Path::new("/r"), Path::new("/"));
        disable_hooks(&mut command, &["my.tool".to_owned()]);
        let env: Vec<String> = command
            .get_envs()
            .filter_map(|(k, v)| Some(format!("{}={}", k.to_str()?, v?.to_str()?)))
            .collect();
        assert!(env.contains(&"GIT_CONFIG_COUNT=1".to_owned()));
        assert!(env.contains(&"GIT_CONFIG_KEY_0=hook.my.tool.enabled".to_owned()));
        assert!(env.contains(&"GIT_CONFIG_VALUE_0=false".to_owned()));
    }
}
