//! The config pre-flight: one include-following listing of the repository's configuration that
//! refuses filter drivers, collects config-defined hook names to disable, and notes keys that make
//! a tool unsafe; its verdict is reused while every file it read is unchanged.
//!
//! Only git can answer "what does this repository's config say, includes followed" (includes have
//! conditions on the git dir, the branch and other config), so the listing is a git process. But
//! its answer is a pure function of the files it read: the repository config, the worktree
//! config, every included file (followed or not: a missing one may appear) and `HEAD` (for
//! `includeIf "onbranch:"`). The verdict is cached with the identity of each of those paths
//! (device, inode, length, mtime, ctime, or "absent") and the listing re-runs when any differs.
//! ctime cannot be set by a user, and a file changed within [`RACY_WINDOW`](super::stamp::RACY_WINDOW) of the listing is not
//! trusted at all (git's own "racy git" rule), so a same-size rewrite in the same clock tick cannot
//! hide behind an unchanged stamp.

use super::invoke::{Runner, CANCELLED};
use super::process::TIMEOUT;
use super::repo::Layout;
use super::stamp::{Stamp, RACY_WINDOW};
use agentteams_mcp::server::CancelToken;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Most bytes of config listing read; a listing beyond it cannot be trusted to be complete, so the
/// repository is refused (fail closed).
pub const MAX_CONFIG_LISTING: usize = 4 * 1024 * 1024;

pub const FILTER_REFUSAL: &str =
    "the repository config defines filter.* drivers, which could run programs; refusing";

pub const OUTSIDE_INCLUDE_REFUSAL: &str =
    "the repository config includes a file from outside the project; refusing";

pub const IGNORE_REVS_REFUSAL: &str = "the repository config sets blame.ignoreRevsFile, which makes git blame read a file and quote its content in errors; refusing";

/// What the repository's configuration allows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Names `<name>` of every `hook.<name>.*` key, to disable with `hook.<name>.enabled=false`.
    pub hook_names: Vec<String>,
    /// The config sets `blame.ignoreRevsFile` (git ignores a command-line reset of it).
    pub sets_ignore_revs_file: bool,
}

#[derive(Debug)]
struct Cached {
    layout: Layout,
    files: Vec<(PathBuf, Option<Stamp>)>,
    verdict: Arc<Verdict>,
}

/// The verdict cache of one server (one project root).
#[derive(Debug, Default)]
pub struct ConfigCheck {
    cached: Mutex<Option<Cached>>,
}

impl ConfigCheck {
    /// The verdict for `layout`: the cached one while its files are unchanged, else a fresh listing.
    pub fn verdict(
        &self,
        runner: &Runner,
        root: &Path,
        layout: &Layout,
        cancel: &CancelToken,
    ) -> Result<Arc<Verdict>, String> {
        self.verdict_cached(runner, root, layout, cancel)
            .map(|(verdict, _)| verdict)
    }

    /// [`verdict`](Self::verdict), telling whether the cache answered (`true`) or git listed the
    /// configuration.
    pub fn verdict_cached(
        &self,
        runner: &Runner,
        root: &Path,
        layout: &Layout,
        cancel: &CancelToken,
    ) -> Result<(Arc<Verdict>, bool), String> {
        if let Some(cached) = self.lock().as_ref() {
            if cached.layout == *layout
                && cached.files.iter().all(|(p, s)| Stamp::followed(p) == *s)
            {
                return Ok((cached.verdict.clone(), true));
            }
        }
        let started = SystemTime::now();
        let listing = list_config(runner, layout, cancel)?;
        let parsed = parse_listing(&listing)?;
        if !parsed.includes_inside(root, layout) {
            return Err(OUTSIDE_INCLUDE_REFUSAL.to_owned());
        }
        let verdict = Arc::new(parsed.verdict);
        let files = parsed.files.and_then(|mut files| {
            files.extend([
                layout.common_dir.join("config"),
                layout.git_dir.join("config.worktree"),
                layout.git_dir.join("HEAD"),
            ]);
            let stamped: Vec<(PathBuf, Option<Stamp>)> = files
                .into_iter()
                .map(|p| (p.clone(), Stamp::followed(&p)))
                .collect();
            let settled = stamped.iter().all(|(_, s)| {
                s.as_ref()
                    .is_none_or(|s| s.is_settled(started, RACY_WINDOW))
            });
            settled.then_some(stamped)
        });
        *self.lock() = files.map(|files| Cached {
            layout: layout.clone(),
            files,
            verdict: verdict.clone(),
        });
        Ok((verdict, false))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Cached>> {
        self.cached.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `git config --includes --null --show-origin --list` on the validated repository (fail
/// closed: any failure refuses the call).
fn list_config(runner: &Runner, layout: &Layout, cancel: &CancelToken) -> Result<Vec<u8>, String> {
    let command = runner.command(
        layout,
        &[],
        ["config", "--includes", "--null", "--show-origin", "--list"],
    );
    let unreadable = |detail: &str| format!("could not read the repository config: {detail}");
    let done = runner
        .run(command, MAX_CONFIG_LISTING + 1, TIMEOUT, cancel)
        .map_err(|e| match e.to_string() {
            e if e == CANCELLED => e,
            e => unreadable(&e),
        })?;
    if done.stdout_more || done.stdout.len() > MAX_CONFIG_LISTING {
        return Err(unreadable(&format!(
            "the listing is longer than {MAX_CONFIG_LISTING} bytes"
        )));
    }
    Ok(done.stdout)
}

struct Parsed {
    verdict: Verdict,
    /// Where every `include.path`/`includeIf.*.path` points (`None`: a target git expands from
    /// `~` or `%(prefix)`, which this parser does not reproduce).
    includes: Vec<Option<PathBuf>>,
    /// Every file the listing depends on, or `None` when that cannot be known (an include path
    /// git expands from `~` or `%(prefix)`, an origin that is not a file).
    files: Option<Vec<PathBuf>>,
}

/// Reads `file:<origin>\0<key>\n<value>\0` records. Section and variable names print lowercase,
/// subsection names keep their case.
fn parse_listing(listing: &[u8]) -> Result<Parsed, String> {
    let mut verdict = Verdict::default();
    let mut hooks = BTreeSet::new();
    let mut files: Option<BTreeSet<PathBuf>> = Some(BTreeSet::new());
    let mut includes = Vec::new();
    let mut fields = listing.split(|&b| b == 0);
    while let Some(origin) = fields.next() {
        if origin.is_empty() {
            continue;
        }
        let Some(entry) = fields.next() else {
            return Err("could not read the repository config: truncated listing".to_owned());
        };
        let (key, value) = match entry.iter().position(|&b| b == b'\n') {
            Some(at) => (&entry[..at], Some(&entry[at + 1..])),
            None => (entry, None),
        };
        if origin == b"command line:" {
            // The server's own -c overrides.
            continue;
        }
        let key = String::from_utf8_lossy(key);
        if key.starts_with("filter.") {
            return Err(FILTER_REFUSAL.to_owned());
        }
        if let Some(name) = hook_name(&key) {
            hooks.insert(name.to_owned());
        }
        if key == "blame.ignorerevsfile" {
            verdict.sets_ignore_revs_file = true;
        }
        let origin_file = origin_path(origin);
        match (&mut files, &origin_file) {
            (Some(set), Some(file)) => {
                set.insert(file.clone());
            }
            _ => files = None,
        }
        if is_include_key(&key) {
            let target = match (value, &origin_file) {
                (Some(value), Some(file)) => include_target(file, value),
                _ => None,
            };
            includes.push(target.clone());
            match (&mut files, target) {
                (Some(set), Some(target)) => {
                    set.insert(target);
                }
                _ => files = None,
            }
        }
    }
    verdict.hook_names = hooks.into_iter().collect();
    Ok(Parsed {
        verdict,
        includes,
        files: files.map(|set| set.into_iter().collect()),
    })
}

impl Parsed {
    /// Whether every include target that exists lies inside the project or its git dirs. An
    /// outside config file is refused even though its program-running keys would be neutralised:
    /// git quotes lines it cannot parse (`key does not contain a section: <line>`) on stderr,
    /// which reaches error texts. A missing target is skipped by git (and watched by the cache).
    fn includes_inside(&self, root: &Path, layout: &Layout) -> bool {
        self.includes.iter().all(|target| match target {
            None => false,
            Some(target) => match std::fs::canonicalize(target) {
                Ok(real) => [root, &layout.git_dir, &layout.common_dir]
                    .iter()
                    .any(|dir| real.starts_with(dir)),
                Err(_) => std::fs::symlink_metadata(target).is_err(),
            },
        })
    }
}

/// `hook.<name>.<var>` → `<name>` (the text between the first and the last dot).
fn hook_name(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("hook.")?;
    let (name, _var) = rest.rsplit_once('.')?;
    (!name.is_empty()).then_some(name)
}

fn is_include_key(key: &str) -> bool {
    key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))
}

fn origin_path(origin: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(origin.strip_prefix(b"file:")?));
    path.is_absolute().then(|| path.to_path_buf())
}

/// Where git looks for an include: relative to the including file's directory, absolute as is.
/// `~` and `%(prefix)` expansions are not reproduced (`None`: the verdict is then not cached).
fn include_target(origin: &Path, value: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if value.is_empty() || value.starts_with(b"~") || value.starts_with(b"%(") {
        return None;
    }
    let value = Path::new(std::ffi::OsStr::from_bytes(value));
    Some(origin.parent()?.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(records: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (origin, entry) in records {
            out.extend_from_slice(origin.as_bytes());
            out.push(0);
            out.extend_from_slice(entry.as_bytes());
            out.push(0);
        }
        out
    }

    #[test]
    fn any_filter_key_is_refused() {
        let l = listing(&[("file:/r/.git/config", "filter.x.clean\ncat")]);
        assert_eq!(parse_listing(&l).err().as_deref(), Some(FILTER_REFUSAL));
    }

    #[test]
    fn hook_names_keep_dots_and_case() {
        let l = listing(&[
            ("file:/r/.git/config", "hook.My.Tool.command\nx"),
            (
                "file:/r/.git/config",
                "hook.post-index-change.event\npost-index-change",
            ),
            ("file:/r/.git/config", "hook.post-index-change.command\nx"),
        ]);
        let parsed = parse_listing(&l).ok().map(|p| p.verdict.hook_names);
        assert_eq!(
            parsed,
            Some(vec!["My.Tool".to_owned(), "post-index-change".to_owned()])
        );
    }

    #[test]
    fn include_targets_resolve_against_the_including_file() {
        let l = listing(&[
            ("file:/r/.git/config", "include.path\n../cfg/evil"),
            ("file:/r/.git/../cfg/evil", "core.bare\nfalse"),
            (
                "file:/r/.git/config",
                "includeif.onbranch:main.path\n/abs/x",
            ),
            ("command line:", "core.pager\ncat"),
        ]);
        let files = parse_listing(&l).ok().and_then(|p| p.files);
        assert_eq!(
            files,
            Some(vec![
                PathBuf::from("/abs/x"),
                PathBuf::from("/r/.git/../cfg/evil"),
                PathBuf::from("/r/.git/config"),
            ])
        );
    }

    #[test]
    fn home_relative_includes_make_the_verdict_uncacheable() {
        let l = listing(&[("file:/r/.git/config", "include.path\n~/x")]);
        assert!(parse_listing(&l).is_ok_and(|p| p.files.is_none()));
    }

    #[test]
    fn blame_ignore_revs_file_is_noted() {
        let l = listing(&[("file:/r/.git/config", "blame.ignorerevsfile\n/secret")]);
        assert!(parse_listing(&l).is_ok_and(|p| p.verdict.sets_ignore_revs_file));
    }

    #[test]
    fn a_key_without_value_parses() {
        let l = listing(&[("file:/r/.git/config", "core.bare")]);
        assert!(parse_listing(&l).is_ok());
    }
}
