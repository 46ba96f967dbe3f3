//! Approval presets that follow their file while a server runs: each decision asks for the presets
//! in force, which costs one `stat` of the file while it is unchanged; when its identity changes
//! the file is read again (bounded by [`MAX_APPROVALS_FILE_BYTES`]), and the change is reported
//! once (the audit log's `presets_changed`).
//!
//! A change made while serving only ever narrows what is served: a new deny preset and a revoked
//! grant hold from the next decision, while a new grant, and a deny preset taken out, wait for the
//! next start. Whatever can write the file meanwhile (an approved write tool of this very server
//! among them) must not widen what the run serves. A file that cannot be read or parsed (a
//! half-written one, a link, a FIFO) suspends every grant until a good file appears; the deny
//! presets seen so far keep holding. docs/approvals.md explains the rule.
//!
//! [`MAX_APPROVALS_FILE_BYTES`]: super::presets::MAX_APPROVALS_FILE_BYTES

use super::presets::{
    describe_preset, Preset, PresetEffect, Presets, PresetsError, PresetsFile, MAX_PRESETS,
};
use crate::file_identity::FileIdentity;
use crate::json::{Map, Value};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// A file modified less than this long ago is read again at the next decision even if its
/// identity looks unchanged: a timestamp's granularity can hide a second write made within it.
pub const PRESETS_SETTLE_TIME: Duration = Duration::from_secs(2);

/// Most deny presets kept over one run, those of the file and those taken out of it since the
/// start together (twice what one file holds).
pub const MAX_DENIES_SEEN: usize = 2 * MAX_PRESETS;

/// Most bytes of preset descriptions one governance description (an audit record) holds; the
/// rest is counted, not listed (a file's presets at their longest would pass the audit log's
/// record limit).
pub const MAX_DESCRIBED_BYTES: usize = 512 * 1024;

/// Where a server's presets come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PresetsLocation {
    /// The project's `.agentteams/approvals.json` under this root: confined to it, and a
    /// missing file holds no presets.
    Project(PathBuf),
    /// A file the operator named (`--approvals FILE`): it must exist.
    Named(PathBuf),
}

impl PresetsLocation {
    /// The file's path.
    pub fn path(&self) -> PathBuf {
        match self {
            PresetsLocation::Project(root) => PresetsFile::path(root),
            PresetsLocation::Named(path) => path.clone(),
        }
    }

    fn load(&self) -> Result<PresetsFile, PresetsError> {
        match self {
            PresetsLocation::Project(root) => PresetsFile::load(root),
            PresetsLocation::Named(path) => PresetsFile::load_named(path),
        }
    }
}

/// One preset in force, and its place in the file as last read (`None`: no longer there).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Held {
    preset: Preset,
    index: Option<usize>,
}

impl Held {
    fn describe(&self) -> String {
        match self.index {
            Some(i) => describe_preset(i, &self.preset),
            None => format!(
                "{} preset {:?} (from an earlier read of the file, kept until the server restarts; added by {:?}: {:?})",
                self.preset.effect.as_str(),
                self.preset.pattern.as_str(),
                self.preset.added_by,
                self.preset.reason
            ),
        }
    }

    fn matches(&self, name: &str) -> bool {
        self.preset.pattern.matches(name)
    }
}

/// The presets one decision uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InForce {
    denies: Vec<Held>,
    grants: Vec<Held>,
    /// Grants in the file that take effect at the next start.
    held_back: Vec<Held>,
    /// Why the file cannot be used now (every grant suspended meanwhile).
    problem: Option<String>,
    /// The file (`None`: presets given directly, not from a file).
    path: Option<String>,
    /// SHA-256 of the bytes in force; `None` when there was no file or it could not be used.
    sha256: Option<String>,
}

impl InForce {
    /// The first deny preset matching tool `name`, described.
    pub fn deny(&self, name: &str) -> Option<String> {
        first(&self.denies, name)
    }

    /// The first grant preset in force matching tool `name`, described.
    pub fn grant(&self, name: &str) -> Option<String> {
        first(&self.grants, name)
    }

    /// Why no grant preset approved `name` although the file may seem to say so: a grant added
    /// while serving, or a file that cannot be used. `None` when neither applies.
    pub fn why_not_granted(&self, name: &str) -> Option<String> {
        if let Some(problem) = &self.problem {
            return Some(format!(
                "the approvals file cannot be used ({problem}), so no grant preset applies until it can"
            ));
        }
        first(&self.held_back, name).map(|held| {
            format!("{held} was added while the server runs and takes effect at its next start")
        })
    }

    /// The presets in force, in matching order (denies, then grants), without file places.
    pub fn presets(&self) -> Presets {
        let mut presets = Presets::new();
        for held in self.denies.iter().chain(&self.grants) {
            // A grant sharing a kept deny's pattern never decides anything: the deny is kept.
            let pattern = held.preset.pattern.as_str();
            if !presets
                .entries()
                .iter()
                .any(|p| p.pattern.as_str() == pattern)
            {
                // At most MAX_PRESETS of each effect, and each file holds at most that many.
                let _ = presets.set(held.preset.clone());
            }
        }
        presets
    }

    /// One line per preset in force (grants, then denies, as a file lists them when read).
    pub fn describe(&self) -> Vec<String> {
        let mut all: Vec<&Held> = self.grants.iter().chain(&self.denies).collect();
        all.sort_by_key(|h| h.index.unwrap_or(usize::MAX));
        all.into_iter().map(Held::describe).collect()
    }

    /// The presets' members of the governance's description (`run_started`, `presets_changed`),
    /// their lines together at most [`MAX_DESCRIBED_BYTES`].
    pub(super) fn describe_into(&self, m: &mut Map) {
        let mut budget = MAX_DESCRIBED_BYTES;
        let mut lines = |v: Vec<String>| {
            let total = v.len();
            let mut kept: Vec<Value> = Vec::new();
            for line in v {
                if line.len() > budget {
                    break;
                }
                budget -= line.len();
                kept.push(Value::from(line));
            }
            if kept.len() < total {
                kept.push(Value::from(format!(
                    "... and {} more, left out to keep the record short (the file's SHA-256 identifies them)",
                    total - kept.len()
                )));
            }
            Value::from(kept)
        };
        m.insert("presets", lines(self.describe()));
        if let Some(path) = &self.path {
            m.insert("presets_file", Value::from(path.as_str()));
            m.insert(
                "presets_sha256",
                self.sha256.as_deref().map_or(Value::Null, Value::from),
            );
        }
        if !self.held_back.is_empty() {
            m.insert(
                "presets_held_back",
                lines(self.held_back.iter().map(Held::describe).collect()),
            );
        }
        if let Some(problem) = &self.problem {
            m.insert("presets_problem", Value::from(problem.as_str()));
        }
    }
}

fn first(list: &[Held], name: &str) -> Option<String> {
    list.iter().find(|h| h.matches(name)).map(Held::describe)
}

/// What a `stat` of the file said: compared before reading it again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stat {
    Missing,
    Failed(io::ErrorKind),
    Present(FileIdentity),
}

/// One `stat` (not following a link: a link is refused when read).
fn stat(path: &Path) -> Stat {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Stat::Missing,
        Err(e) => Stat::Failed(e.kind()),
        Ok(m) => Stat::Present(FileIdentity::of(&m)),
    }
}

/// Whether a file seen as `stat` can be trusted not to change unseen under the same identity:
/// changed more than [`PRESETS_SETTLE_TIME`] ago by the clock (a missing or unreadable file has
/// no such race).
fn settled(stat: Stat) -> bool {
    let Stat::Present(id) = stat else {
        return true;
    };
    id.is_settled(SystemTime::now(), PRESETS_SETTLE_TIME)
}

type Recorder = Box<dyn Fn(&InForce) + Send + Sync>;

/// What the file has said since the start, which the next read is narrowed by.
#[derive(Debug)]
struct State {
    /// The file's identity when the presets in force were read (`None`: read it again).
    seen: Option<Stat>,
    /// Patterns granted at the start and in every good read since.
    start_grants: Vec<String>,
    /// Every deny preset seen since the start, its latest form.
    denies_seen: Vec<Preset>,
    in_force: Arc<InForce>,
}

impl State {
    /// The presets in force after a read of the file at `path` that gave `outcome`.
    fn apply(&mut self, path: &Path, outcome: Result<PresetsFile, PresetsError>) -> InForce {
        let shown = Some(path.display().to_string());
        let file = match outcome {
            Ok(file) => file,
            Err(e) => {
                let kept = self.denies_seen.iter().cloned();
                return InForce {
                    denies: kept
                        .map(|preset| Held {
                            preset,
                            index: None,
                        })
                        .collect(),
                    problem: Some(e.to_string()),
                    path: shown,
                    ..InForce::default()
                };
            }
        };
        let entries = file.presets().entries();
        let in_file = |effect: PresetEffect, pattern: &str| {
            entries
                .iter()
                .any(|p| p.effect == effect && p.pattern.as_str() == pattern)
        };
        self.start_grants
            .retain(|pattern| in_file(PresetEffect::Grant, pattern));
        for preset in entries.iter().filter(|p| p.effect == PresetEffect::Deny) {
            self.denies_seen
                .retain(|seen| seen.pattern.as_str() != preset.pattern.as_str());
            self.denies_seen.push(preset.clone());
        }
        // Kept denies are bounded; past the bound, refusing everything keeps them all.
        if self.denies_seen.len() > MAX_DENIES_SEEN {
            let everything = Preset::new(
                PresetEffect::Deny,
                "*",
                &format!("more than {MAX_DENIES_SEEN} deny presets came and went while serving; every tool is refused until the server restarts"),
                "agentteams-mcp",
                &crate::time::rfc3339(SystemTime::now()),
            )
            .expect("a valid preset");
            self.denies_seen = vec![everything];
        }
        let mut in_force = InForce {
            path: shown,
            sha256: file.digest(),
            ..InForce::default()
        };
        for (index, preset) in entries.iter().enumerate() {
            let held = Held {
                preset: preset.clone(),
                index: Some(index),
            };
            let list = match preset.effect {
                PresetEffect::Deny => &mut in_force.denies,
                PresetEffect::Grant
                    if self
                        .start_grants
                        .iter()
                        .any(|p| p == preset.pattern.as_str()) =>
                {
                    &mut in_force.grants
                }
                PresetEffect::Grant => &mut in_force.held_back,
            };
            list.push(held);
        }
        for preset in &self.denies_seen {
            if !in_file(PresetEffect::Deny, preset.pattern.as_str()) {
                in_force.denies.push(Held {
                    preset: preset.clone(),
                    index: None,
                });
            }
        }
        in_force
    }
}

/// The presets a governance decides with: fixed, or following a file (see the module
/// documentation). Shared by every decision of the engine that holds it.
pub struct LivePresets {
    location: Option<PresetsLocation>,
    state: Mutex<State>,
    recorder: OnceLock<Recorder>,
}

impl fmt::Debug for LivePresets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LivePresets")
            .field("location", &self.location)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl LivePresets {
    /// Presets that never change, from no file (`path`: where they came from, for the audit
    /// log, with the SHA-256 of its bytes).
    pub fn fixed(presets: &Presets, source: Option<(String, Option<String>)>) -> LivePresets {
        let mut in_force = InForce::default();
        for (index, preset) in presets.entries().iter().enumerate() {
            let held = Held {
                preset: preset.clone(),
                index: Some(index),
            };
            match preset.effect {
                PresetEffect::Deny => in_force.denies.push(held),
                PresetEffect::Grant => in_force.grants.push(held),
            }
        }
        if let Some((path, sha256)) = source {
            in_force.path = Some(path);
            in_force.sha256 = sha256;
        }
        LivePresets {
            location: None,
            state: Mutex::new(State {
                seen: None,
                start_grants: Vec::new(),
                denies_seen: Vec::new(),
                in_force: Arc::new(in_force),
            }),
            recorder: OnceLock::new(),
        }
    }

    /// Reads the presets at `location`, to follow it from now on. An error is what a server
    /// refuses to start on.
    pub fn open(location: PresetsLocation) -> Result<LivePresets, PresetsError> {
        let path = location.path();
        let seen = stat(&path);
        let file = location.load()?;
        let grants = file.presets().entries().iter();
        let mut state = State {
            seen: None,
            start_grants: grants
                .filter(|p| p.effect == PresetEffect::Grant)
                .map(|p| p.pattern.as_str().to_owned())
                .collect(),
            denies_seen: Vec::new(),
            in_force: Arc::default(),
        };
        state.seen = (stat(&path) == seen && settled(seen)).then_some(seen);
        state.in_force = Arc::new(state.apply(&path, Ok(file)));
        Ok(LivePresets {
            location: Some(location),
            state: Mutex::new(state),
            recorder: OnceLock::new(),
        })
    }

    /// Has `record` called with the presets in force each time they change (once: a second
    /// recorder is ignored, and false returned).
    pub fn on_change(&self, record: Recorder) -> bool {
        self.recorder.set(record).is_ok()
    }

    /// The presets in force now: the file read again first if its identity changed since.
    pub fn current(&self) -> Arc<InForce> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(location) = &self.location else {
            return state.in_force.clone();
        };
        let path = location.path();
        let before = stat(&path);
        if state.seen == Some(before) {
            return state.in_force.clone();
        }
        let outcome = location.load();
        // A file that changed while it was read, or too recently to tell, is read again next time.
        state.seen = (stat(&path) == before && settled(before)).then_some(before);
        let next = state.apply(&path, outcome);
        if *state.in_force != next {
            state.in_force = Arc::new(next);
            if let Some(record) = self.recorder.get() {
                record(&state.in_force);
            }
        }
        state.in_force.clone()
    }

    /// The file followed, if any.
    pub fn location(&self) -> Option<&PresetsLocation> {
        self.location.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::presets::{
        MAX_ADDED_BY_CHARS, MAX_APPROVALS_FILE_BYTES, MAX_REASON_CHARS,
    };
    use crate::project_file;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A project whose approvals file the test rewrites as `approval` does (temp file, rename).
    struct Project(PathBuf);

    impl Project {
        fn new(name: &str) -> Project {
            let root = std::env::temp_dir().join(format!("live-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            Project(root)
        }

        /// Writes presets `(effect, pattern)`.
        fn write(&self, presets: &[(&str, &str)]) -> String {
            let items: Vec<String> = presets
                .iter()
                .map(|(effect, tool)| {
                    format!(r#"{{"effect":"{effect}","tool":"{tool}","reason":"r","added_by":"a","added_at":"t"}}"#)
                })
                .collect();
            let text = format!(r#"{{"version":1,"presets":[{}]}}"#, items.join(","));
            self.write_raw(text.as_bytes());
            text
        }

        fn write_raw(&self, bytes: &[u8]) {
            let path = PresetsFile::path(&self.0);
            project_file::replace(&path, bytes, None, u64::MAX).unwrap();
        }

        fn open(&self) -> LivePresets {
            LivePresets::open(PresetsLocation::Project(self.0.clone())).unwrap()
        }
    }

    impl Drop for Project {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_change_only_narrows_until_the_restart() {
        let p = Project::new("narrow");
        p.write(&[("grant", "a"), ("deny", "b"), ("grant", "c")]);
        let live = p.open();
        let now = live.current();
        assert!(now.grant("a").is_some() && now.grant("c").is_some() && now.deny("b").is_some());
        // Revoke a, take the deny of b out, deny d, grant e: the revocation and the new deny
        // hold at once, the new grant and the removed deny wait for the restart.
        p.write(&[("deny", "d"), ("grant", "e"), ("grant", "c")]);
        let now = live.current();
        assert_eq!(now.grant("a"), None);
        assert!(now
            .deny("d")
            .unwrap()
            .starts_with("deny preset \"d\" (presets[0]"));
        assert!(now
            .deny("b")
            .unwrap()
            .contains("kept until the server restarts"));
        assert_eq!(now.grant("e"), None);
        assert!(now
            .why_not_granted("e")
            .unwrap()
            .ends_with("takes effect at its next start"));
        assert!(now.grant("c").is_some());
        // A grant once revoked stays revoked, even when the file grants it again.
        p.write(&[("grant", "a"), ("grant", "c")]);
        let now = live.current();
        assert_eq!(now.grant("a"), None);
        assert!(now.deny("d").is_some() && now.deny("b").is_some());
        assert_eq!(now.describe().len(), 3, "{:?}", now.describe());
        // A fresh start reads the file as it is.
        let restarted = p.open().current();
        assert!(restarted.grant("a").is_some() && restarted.deny("b").is_none());
    }

    #[test]
    fn a_file_that_cannot_be_used_suspends_grants_and_keeps_denies() {
        let p = Project::new("unusable");
        let good = p.write(&[("grant", "a"), ("deny", "b")]);
        let live = p.open();
        let path = PresetsFile::path(&p.0);
        let fifo = p.0.join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let big = vec![b' '; MAX_APPROVALS_FILE_BYTES as usize + 1];
        let deep = "[".repeat(100_000);
        let mut bad: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| p.write_raw(&good.as_bytes()[..good.len() / 2])),
            Box::new(|| p.write_raw(b"")),
            Box::new(|| p.write_raw(&big)),
            Box::new(|| p.write_raw(deep.as_bytes())),
            Box::new(|| {
                let _ = std::fs::remove_file(&path);
                std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            }),
            Box::new(|| {
                let _ = std::fs::remove_file(&path);
                std::fs::rename(&fifo, &path).unwrap();
            }),
        ];
        for (i, make_bad) in bad.drain(..).enumerate() {
            make_bad();
            let now = live.current();
            assert_eq!(now.grant("a"), None, "case {i}");
            assert!(now.deny("b").is_some(), "case {i}");
            let why = now.why_not_granted("a").unwrap();
            assert!(
                why.starts_with("the approvals file cannot be used ("),
                "case {i}: {why}"
            );
            let _ = std::fs::remove_file(&path);
            p.write(&[("grant", "a"), ("deny", "b")]);
            assert!(live.current().grant("a").is_some(), "case {i}: good again");
        }
        // `.agentteams` swapped for a link to a folder outside granting everything: refused.
        let outside = Project::new("unusable-outside");
        outside.write(&[("grant", "*")]);
        let folder = p.0.join(".agentteams");
        std::fs::rename(&folder, p.0.join("moved")).unwrap();
        std::os::unix::fs::symlink(outside.0.join(".agentteams"), &folder).unwrap();
        let now = live.current();
        assert_eq!(now.grant("a"), None);
        assert!(now
            .why_not_granted("z")
            .unwrap()
            .contains("resolves outside the project"));
        std::fs::remove_file(&folder).unwrap();
        std::fs::rename(p.0.join("moved"), &folder).unwrap();
        assert!(live.current().grant("a").is_some());
        // A project file taken away holds no presets, but the deny seen holds on.
        std::fs::remove_file(&path).unwrap();
        let now = live.current();
        assert!(now.grant("a").is_none() && now.deny("b").is_some());
    }

    #[test]
    fn writes_in_place_are_seen_and_each_change_reported_once() {
        let p = Project::new("in-place");
        let path = PresetsFile::path(&p.0);
        p.write(&[("grant", "a")]);
        let live = p.open();
        let changes = Arc::new(AtomicUsize::new(0));
        let counted = changes.clone();
        assert!(live.on_change(Box::new(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        })));
        assert!(!live.on_change(Box::new(|_| {})));
        // Same length, same inode, written at once: the identity may look the same, but a file
        // this fresh is read again.
        let grant = r#"{"version":1,"presets":[{"effect":"grant","tool":"a","reason":"r","added_by":"x","added_at":"t"}]}"#;
        let deny = grant
            .replace("\"grant\"", "\"deny\"")
            .replace("\"x\"", "\"xy\"");
        assert_eq!(grant.len(), deny.len());
        std::fs::write(&path, grant).unwrap();
        assert!(live.current().grant("a").is_some());
        std::fs::write(&path, &deny).unwrap();
        assert!(live.current().deny("a").is_some());
        assert!(live.current().deny("a").is_some());
        // Two changes of what is in force (the first write changed the bytes, not the presets:
        // its digest is new, so it is one).
        assert_eq!(changes.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_denies_kept_are_bounded_and_past_the_bound_everything_is_refused() {
        let p = Project::new("bounded");
        p.write(&[("grant", "a")]);
        let live = p.open();
        for round in 0..3 {
            let patterns: Vec<String> = (0..MAX_PRESETS).map(|i| format!("d{round}_{i}")).collect();
            let presets: Vec<(&str, &str)> =
                patterns.iter().map(|t| ("deny", t.as_str())).collect();
            p.write(&presets);
            live.current();
        }
        let now = live.current();
        let refused = now.deny("anything").unwrap();
        assert!(
            refused.contains("every tool is refused until the server restarts"),
            "{refused}"
        );
        assert!(now.describe().len() <= MAX_DENIES_SEEN + MAX_PRESETS);
    }

    #[test]
    fn the_description_stays_short_with_presets_at_their_longest() {
        let p = Project::new("long");
        // Bidi controls, three bytes in the file and eight once escaped: as many as 1 MiB holds.
        let reason = "\u{202e}".repeat(MAX_REASON_CHARS);
        let by = "\u{2066}".repeat(MAX_ADDED_BY_CHARS);
        let items: Vec<String> = (0..500)
            .map(|i| format!(r#"{{"effect":"deny","tool":"t{i}","reason":"{reason}","added_by":"{by}","added_at":"t"}}"#))
            .collect();
        p.write_raw(format!(r#"{{"version":1,"presets":[{}]}}"#, items.join(",")).as_bytes());
        let mut m = Map::new();
        p.open().current().describe_into(&mut m);
        let text = crate::json::to_string(&Value::Object(m));
        assert!(text.len() < 2 * MAX_DESCRIBED_BYTES, "{}", text.len());
        assert!(text.contains("more, left out to keep the record short"));
    }
}
