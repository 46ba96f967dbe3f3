//! The memory limit every git process runs under (SECURITY.md, gitread "Memory").
//!
//! git's memory is bounded by nothing else: a revision such as `HEAD^{/.{32767}{32767}}`, a huge
//! loose ref, a blame of a 300 MB blob of newlines or a repository's `xfuncname` regex each take
//! it to gigabytes within the timeout. std offers no `setrlimit` without `unsafe`, so git is
//! started through the system shell, which sets the limit and then `exec`s git in the same
//! process (same pid, so the process group and the exit detection of `process.rs` are unchanged):
//!
//! ```text
//! /bin/sh -c 'ulimit -v "$1" && shift && exec "$@"' sh <KiB> <git> <args>...
//! ```
//!
//! Arguments are positional parameters, never part of the script, so nothing is interpolated.
//! util-linux `prlimit --as=<bytes> --` is the fallback. The mechanism is chosen once at start and
//! proven to apply a limit (a probe reads the limit back under it); where none works, every tool
//! refuses with [`NO_MECHANISM`] unless the operator chose `--git-memory-limit none`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Address space each git process may use, unless `--git-memory-limit` says otherwise.
pub const DEFAULT_GIT_MEMORY_LIMIT: u64 = 1 << 30;

/// The smallest limit accepted: below it git cannot map its own pack windows and libraries.
pub const MIN_GIT_MEMORY_LIMIT: u64 = 64 << 20;

/// The command-line option that sets the limit (named in every out-of-memory error).
pub const OPTION: &str = "--git-memory-limit";

/// The shell that applies the limit, and its script (the limit and git are `$1`, `$2`...).
pub(super) const SHELL: &str = "/bin/sh";
const SHELL_SCRIPT: &str = "ulimit -v \"$1\" && shift && exec \"$@\"";

/// util-linux `prlimit`, where the shell cannot apply the limit.
const PRLIMIT_PROGRAMS: [&str; 2] = ["/usr/bin/prlimit", "/bin/prlimit"];

/// Every tool's refusal when no mechanism applies a limit on this machine.
pub const NO_MECHANISM: &str = "gitread cannot limit git's memory on this machine (neither \
/bin/sh's `ulimit -v` nor util-linux prlimit applies a limit); refusing. Start the server with \
--git-memory-limit none to run git without a memory limit";

/// The limit the operator chose: a number of bytes of address space, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryLimit {
    Bytes(u64),
    Unlimited,
}

impl Default for MemoryLimit {
    fn default() -> MemoryLimit {
        MemoryLimit::Bytes(DEFAULT_GIT_MEMORY_LIMIT)
    }
}

impl MemoryLimit {
    /// Parses `--git-memory-limit`'s value: `none`, or a whole number of bytes with an optional
    /// binary suffix `K`, `M`, `G` or `T` (`512M`, `1G`, `1073741824`), at least
    /// [`MIN_GIT_MEMORY_LIMIT`].
    pub fn parse(text: &str) -> Result<MemoryLimit, String> {
        if text == "none" {
            return Ok(MemoryLimit::Unlimited);
        }
        let invalid = || {
            format!(
                "{OPTION} needs a size such as 1G, 512M or a number of bytes (at least 64M), or \
                 none; not {text:?}"
            )
        };
        let bytes = crate::size::parse(text).ok_or_else(invalid)?;
        if bytes < MIN_GIT_MEMORY_LIMIT {
            return Err(invalid());
        }
        Ok(MemoryLimit::Bytes(bytes))
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = match self {
            MemoryLimit::Unlimited => return f.write_str("no"),
            MemoryLimit::Bytes(bytes) => *bytes,
        };
        for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
            if bytes % (1 << shift) == 0 {
                return write!(f, "{} {unit}", bytes >> shift);
            }
        }
        write!(f, "{bytes} bytes")
    }
}

/// How a limit is applied: a program placed before git, with its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mechanism {
    Shell,
    Prlimit(PathBuf),
}

/// A limit and the checked mechanism that applies it.
#[derive(Clone, Debug)]
pub struct Limiter {
    bytes: u64,
    mechanism: Mechanism,
}

impl Limiter {
    /// Finds a mechanism that provably applies `bytes` on this machine, trying the shell first
    /// (cheaper to start), then `prlimit`. `None` when neither does.
    pub fn locate(bytes: u64) -> Option<Limiter> {
        let candidates = std::iter::once(Mechanism::Shell).chain(
            PRLIMIT_PROGRAMS
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.is_file())
                .map(Mechanism::Prlimit),
        );
        candidates
            .map(|mechanism| Limiter { bytes, mechanism })
            .find(Limiter::applies)
    }

    /// The limit in bytes, rounded down to whole KiB as it is applied.
    pub fn bytes(&self) -> u64 {
        self.bytes / 1024 * 1024
    }

    /// A command that runs `program` under the limit (arguments added later follow `program`).
    pub fn command(&self, program: &Path) -> Command {
        let kib = (self.bytes / 1024).to_string();
        match &self.mechanism {
            Mechanism::Shell => {
                let mut command = Command::new(SHELL);
                command.args(["-c", SHELL_SCRIPT, "sh", &kib]).arg(program);
                command
            }
            Mechanism::Prlimit(prlimit) => {
                let mut command = Command::new(prlimit);
                command
                    .arg(format!("--as={}", self.bytes()))
                    .arg("--")
                    .arg(program);
                command
            }
        }
    }

    /// `bare` (a command built by `Git::command`) started through the mechanism instead.
    pub fn wrap(&self, bare: &Command) -> Command {
        let mut command = self.command(Path::new(bare.get_program()));
        command.args(bare.get_args()).env_clear();
        for (name, value) in bare.get_envs() {
            if let Some(value) = value {
                command.env(name, value);
            }
        }
        if let Some(dir) = bare.get_current_dir() {
            command.current_dir(dir);
        }
        super::process::piped_in_own_group(&mut command);
        command
    }

    /// The probe: the shell, run under the mechanism, reports the address-space limit it got.
    fn applies(&self) -> bool {
        let output = self
            .command(Path::new(SHELL))
            .args(["-c", "ulimit -v"])
            .env_clear()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        output.is_ok_and(|out| {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).trim() == (self.bytes / 1024).to_string()
        })
    }

    /// `-c` settings that keep git serving large repositories under the limit: pack windows,
    /// mapped packs and the delta base cache in proportion to it (git's 64-bit defaults are a
    /// 1 GiB window and no practical cap), and blobs over an eighth of it treated as binary by
    /// diff (so `git_show`/`git_diff` never load one whole) and streamed rather than read.
    pub fn config_overrides(&self) -> [(&'static str, String); 4] {
        let eighth = (self.bytes() / 8).max(1 << 20) >> 20 << 20;
        [
            ("core.packedGitWindowSize", eighth.to_string()),
            ("core.packedGitLimit", (2 * eighth).to_string()),
            ("core.deltaBaseCacheLimit", (eighth / 2).to_string()),
            ("core.bigFileThreshold", eighth.to_string()),
        ]
    }

    /// The error for a git that failed with `stderr` (already rendered) and exit code `code`,
    /// when that failure is git running out of memory under this limit; `None` otherwise.
    pub fn out_of_memory_message(&self, code: i32, stderr: &str) -> Option<String> {
        const SIGNS: [&str; 5] = [
            "out of memory",
            "cannot allocate memory",
            "mmap failed",
            "malloc failed",
            "alloc failed",
        ];
        let lower = stderr.to_ascii_lowercase();
        // SIGSEGV, SIGBUS or SIGABRT: a failed allocation git did not check, or glibc aborting.
        let signalled = matches!(code, -11 | -7 | -6);
        if !SIGNS.iter().any(|sign| lower.contains(sign)) && !signalled {
            return None;
        }
        let detail = match stderr.trim() {
            "" => format!("killed by signal {}", -code),
            text => text.to_owned(),
        };
        Some(format!(
            "git ran out of memory under gitread's {} limit ({OPTION}): {detail}",
            MemoryLimit::Bytes(self.bytes())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes_and_a_floor() {
        assert_eq!(MemoryLimit::parse("1G"), Ok(MemoryLimit::Bytes(1 << 30)));
        assert_eq!(
            MemoryLimit::parse("512m"),
            Ok(MemoryLimit::Bytes(512 << 20))
        );
        assert_eq!(
            MemoryLimit::parse("65536K"),
            Ok(MemoryLimit::Bytes(64 << 20))
        );
        assert_eq!(MemoryLimit::parse("2T"), Ok(MemoryLimit::Bytes(2 << 40)));
        assert_eq!(
            MemoryLimit::parse("67108864"),
            Ok(MemoryLimit::Bytes(64 << 20))
        );
        assert_eq!(MemoryLimit::parse("none"), Ok(MemoryLimit::Unlimited));
        for bad in [
            "",
            "G",
            "1.5G",
            "-1G",
            "1GB",
            "67108863",
            "63M",
            "1 G",
            "99999999999T",
            "NONE",
        ] {
            let error = MemoryLimit::parse(bad).unwrap_err();
            assert!(
                error.starts_with("--git-memory-limit needs a size"),
                "{bad}"
            );
        }
    }

    #[test]
    fn limits_display_in_the_largest_whole_unit() {
        assert_eq!(MemoryLimit::Bytes(1 << 30).to_string(), "1 GiB");
        assert_eq!(MemoryLimit::Bytes(1536 << 20).to_string(), "1536 MiB");
        assert_eq!(
            MemoryLimit::Bytes(100_000_000).to_string(),
            "100000000 bytes"
        );
        assert_eq!(MemoryLimit::Unlimited.to_string(), "no");
        assert_eq!(MemoryLimit::default().to_string(), "1 GiB");
    }

    #[test]
    fn the_mechanism_applies_the_limit_and_keeps_the_pid() {
        let Some(limiter) = Limiter::locate(256 << 20) else {
            println!("note: no memory-limit mechanism on this machine");
            return;
        };
        let child = limiter
            .command(Path::new(SHELL))
            .args(["-c", "ulimit -v; echo $$"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let pid = child.id().to_string();
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        // The limit applies, and the program runs in the spawned process itself (`exec`).
        assert_eq!(text.lines().collect::<Vec<_>>(), ["262144", pid.as_str()]);
        assert!(limiter.out_of_memory_message(128, "fatal: x").is_none());
        assert_eq!(
            limiter.out_of_memory_message(128, "fatal: Out of memory, malloc failed"),
            Some(
                "git ran out of memory under gitread's 256 MiB limit (--git-memory-limit): \
                 fatal: Out of memory, malloc failed"
                    .to_owned()
            )
        );
        assert!(limiter
            .out_of_memory_message(-11, "")
            .is_some_and(|m| m.ends_with("killed by signal 11")));
        let settings = limiter.config_overrides();
        assert_eq!(settings[0].1, (32u64 << 20).to_string());
        assert_eq!(settings[1].1, (64u64 << 20).to_string());
    }
}
