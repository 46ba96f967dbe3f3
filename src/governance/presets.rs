//! Approval presets: the project's standing grants and denials of tools, by name or glob, each
//! with the reason and who added it, kept in `.agentteams/approvals.json`.
//!
//! ```json
//! {
//!  "presets": [
//!   {
//!    "added_at": "2026-12-01T17:05:00.000Z",
//!    "added_by": "alice",
//!    "effect": "grant",
//!    "reason": "the nightly job writes notes",
//!    "tool": "write_note"
//!   }
//!  ],
//!  "version": 1
//! }
//! ```
//!
//! `tool` is a pattern as the tool policy reads them (`*` and `?` wildcards, the tool-name
//! alphabet). One preset per pattern. Any other key, a duplicate key, a bad pattern or a missing
//! member is an error naming the place: a misspelt `"effect": "dney"` must not quietly grant.
//! The file is written by `agentteams-mcp approval` as pretty JSON with sorted keys and every
//! character outside printable ASCII escaped, so what a person reads is what is there.

use crate::json::{self, Map, Value};
use crate::policy::Pattern;
use crate::project_file::{self, EditLock, FileError};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the presets live, relative to the project root.
pub const APPROVALS_PATH: &str = ".agentteams/approvals.json";

/// Largest approvals file read.
pub const MAX_APPROVALS_FILE_BYTES: u64 = 1024 * 1024;

/// Most presets one file holds.
pub const MAX_PRESETS: usize = 1024;

/// Longest reason, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// Longest `added_by`, in characters.
pub const MAX_ADDED_BY_CHARS: usize = 128;

/// What a preset does to the tools it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresetEffect {
    /// Approves a tool that may change data (under `prompt`; the other modes need no approval).
    Grant,
    /// Refuses the tool in every mode.
    Deny,
}

impl PresetEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            PresetEffect::Grant => "grant",
            PresetEffect::Deny => "deny",
        }
    }
}

/// One preset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preset {
    pub effect: PresetEffect,
    pub pattern: Pattern,
    pub reason: String,
    pub added_by: String,
    /// RFC 3339 UTC time it was added.
    pub added_at: String,
}

impl Preset {
    /// Checks the free-text members against their limits.
    pub fn new(
        effect: PresetEffect,
        pattern: &str,
        reason: &str,
        added_by: &str,
        added_at: &str,
    ) -> Result<Preset, PresetsError> {
        let pattern =
            Pattern::parse(pattern).map_err(|e| PresetsError::new(format!("tool: {e}")))?;
        text_member("reason", reason, MAX_REASON_CHARS)?;
        text_member("added_by", added_by, MAX_ADDED_BY_CHARS)?;
        Ok(Preset {
            effect,
            pattern,
            reason: reason.to_owned(),
            added_by: added_by.to_owned(),
            added_at: added_at.to_owned(),
        })
    }

    fn to_value(&self) -> Value {
        json::obj([
            ("effect", Value::from(self.effect.as_str())),
            ("tool", Value::from(self.pattern.as_str())),
            ("reason", Value::from(self.reason.as_str())),
            ("added_by", Value::from(self.added_by.as_str())),
            ("added_at", Value::from(self.added_at.as_str())),
        ])
    }
}

fn text_member(name: &str, text: &str, limit: usize) -> Result<(), PresetsError> {
    let count = text.chars().count();
    if count == 0 || text.trim().is_empty() {
        return Err(PresetsError::new(format!("{name} must not be empty")));
    }
    if count > limit {
        return Err(PresetsError::new(format!(
            "{name} is {count} characters long; the limit is {limit}"
        )));
    }
    Ok(())
}

/// An approvals file that cannot be used, or an edit that cannot be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetsError {
    message: String,
    /// Another edit held the file or changed it meanwhile: running the command again may work.
    retry: bool,
    /// The edit had nothing to act on (revoking a pattern no preset has).
    not_found: bool,
}

impl PresetsError {
    fn new(message: impl Into<String>) -> PresetsError {
        PresetsError {
            message: message.into(),
            retry: false,
            not_found: false,
        }
    }

    /// An edit that finds nothing to act on: [`PresetsFile::edit`] writes nothing.
    pub fn not_found(message: impl Into<String>) -> PresetsError {
        PresetsError {
            not_found: true,
            ..PresetsError::new(message)
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.not_found
    }

    /// True when the edit met another edit (the file locked or changed): try again.
    pub fn is_retryable(&self) -> bool {
        self.retry
    }
}

impl fmt::Display for PresetsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PresetsError {}

/// The presets, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Presets {
    entries: Vec<Preset>,
}

impl Presets {
    pub fn new() -> Presets {
        Presets::default()
    }

    pub fn entries(&self) -> &[Preset] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first preset with `effect` whose pattern matches tool `name`, with its index.
    pub fn first_match(&self, effect: PresetEffect, name: &str) -> Option<(usize, &Preset)> {
        self.entries
            .iter()
            .enumerate()
            .find(|(_, p)| p.effect == effect && p.pattern.matches(name))
    }

    /// Adds `preset`, replacing the one with the same pattern (returned) if there is one.
    pub fn set(&mut self, preset: Preset) -> Result<Option<Preset>, PresetsError> {
        if let Some(existing) = self
            .entries
            .iter_mut()
            .find(|p| p.pattern.as_str() == preset.pattern.as_str())
        {
            return Ok(Some(std::mem::replace(existing, preset)));
        }
        if self.entries.len() >= MAX_PRESETS {
            return Err(PresetsError::new(format!(
                "the file already holds {MAX_PRESETS} presets, the limit"
            )));
        }
        self.entries.push(preset);
        Ok(None)
    }

    /// Removes the preset whose pattern is exactly `pattern`.
    pub fn revoke(&mut self, pattern: &str) -> Option<Preset> {
        let i = self
            .entries
            .iter()
            .position(|p| p.pattern.as_str() == pattern)?;
        Some(self.entries.remove(i))
    }

    /// One line per preset, for the audit log's `run_started` record and diagnostics.
    pub fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, p)| describe(i, p))
            .collect()
    }

    /// Parses the file's JSON (see the module documentation).
    pub fn parse(bytes: &[u8]) -> Result<Presets, PresetsError> {
        let value =
            json::parse(bytes).map_err(|e| PresetsError::new(format!("invalid JSON: {e}")))?;
        let Value::Object(top) = value else {
            return Err(PresetsError::new(format!(
                "the file must hold a JSON object, not {}",
                value.type_name()
            )));
        };
        no_duplicate_keys(&top, "the top level")?;
        let mut presets = Presets::new();
        let mut version = None;
        for (key, value) in top.iter() {
            match key.as_str() {
                "version" => version = value.as_u64(),
                "presets" => {
                    let Some(items) = value.as_array() else {
                        return Err(PresetsError::new("\"presets\" must be an array"));
                    };
                    if items.len() > MAX_PRESETS {
                        return Err(PresetsError::new(format!(
                            "\"presets\" holds {} entries; the limit is {MAX_PRESETS}",
                            items.len()
                        )));
                    }
                    for (i, item) in items.iter().enumerate() {
                        let preset = parse_preset(item)
                            .map_err(|e| PresetsError::new(format!("presets[{i}]: {e}")))?;
                        if let Some(j) = presets
                            .entries
                            .iter()
                            .position(|p| p.pattern == preset.pattern)
                        {
                            return Err(PresetsError::new(format!(
                                "presets[{i}] repeats the tool pattern of presets[{j}]"
                            )));
                        }
                        presets.entries.push(preset);
                    }
                }
                other => {
                    return Err(PresetsError::new(format!(
                        "unknown key {other:?}; expected version, presets"
                    )))
                }
            }
        }
        if version != Some(1) {
            return Err(PresetsError::new("\"version\" must be 1"));
        }
        Ok(presets)
    }

    /// The file's text: pretty JSON, sorted keys, non-ASCII escaped, a final newline.
    pub fn to_json(&self) -> String {
        let items: Vec<Value> = self.entries.iter().map(Preset::to_value).collect();
        let top = json::obj([
            ("version", Value::from(1u64)),
            ("presets", Value::from(items)),
        ]);
        let mut text = json::to_pretty_ascii_sorted(&top);
        text.push('\n');
        text
    }
}

/// `grant "write_*" (presets[0], added by "alice": "nightly notes")`.
fn describe(index: usize, p: &Preset) -> String {
    format!(
        "{} preset {:?} (presets[{index}], added by {:?}: {:?})",
        p.effect.as_str(),
        p.pattern.as_str(),
        p.added_by,
        p.reason
    )
}

/// The description of the preset at `index`, as decisions name it.
pub fn describe_preset(index: usize, preset: &Preset) -> String {
    describe(index, preset)
}

fn no_duplicate_keys(map: &Map, place: &str) -> Result<(), PresetsError> {
    let mut keys: Vec<_> = map.keys().collect();
    keys.sort();
    match keys.windows(2).find(|w| w[0] == w[1]) {
        Some(pair) => Err(PresetsError::new(format!(
            "key {:?} appears twice in {place}",
            pair[0]
        ))),
        None => Ok(()),
    }
}

fn parse_preset(item: &Value) -> Result<Preset, PresetsError> {
    let Value::Object(map) = item else {
        return Err(PresetsError::new(format!(
            "a preset is an object, not {}",
            item.type_name()
        )));
    };
    no_duplicate_keys(map, "the preset")?;
    const KEYS: [&str; 5] = ["effect", "tool", "reason", "added_by", "added_at"];
    if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(PresetsError::new(format!(
            "unknown key {key:?}; expected {}",
            KEYS.join(", ")
        )));
    }
    let text = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| PresetsError::new(format!("{key:?} must be a string")))
    };
    let effect = match text("effect")? {
        "grant" => PresetEffect::Grant,
        "deny" => PresetEffect::Deny,
        other => {
            return Err(PresetsError::new(format!(
                "\"effect\" must be \"grant\" or \"deny\", not {other:?}"
            )))
        }
    };
    Preset::new(
        effect,
        text("tool")?,
        text("reason")?,
        text("added_by")?,
        text("added_at")?,
    )
}

/// The approvals file of a project (or one given by path), as read, ready to be edited and saved
/// back without losing an edit made meanwhile.
#[derive(Debug)]
pub struct PresetsFile {
    path: PathBuf,
    presets: Presets,
    /// The bytes read (`None`: no file), to detect a change before saving.
    read: Option<Vec<u8>>,
}

impl PresetsFile {
    /// The approvals file of the project at `root`.
    pub fn path(root: &Path) -> PathBuf {
        root.join(APPROVALS_PATH)
    }

    /// Loads the project's presets; a missing file holds none. The file must be a regular file
    /// (not a link, FIFO or device) inside the project, of at most [`MAX_APPROVALS_FILE_BYTES`].
    pub fn load(root: &Path) -> Result<PresetsFile, PresetsError> {
        let path = project_file::confined(root, APPROVALS_PATH).map_err(file_error)?;
        PresetsFile::load_path(&path)
    }

    /// Loads presets from `path` (same checks as [`PresetsFile::load`] but confinement).
    pub fn load_path(path: &Path) -> Result<PresetsFile, PresetsError> {
        let read = project_file::read(path, MAX_APPROVALS_FILE_BYTES, true).map_err(file_error)?;
        let presets = match &read {
            None => Presets::new(),
            Some(bytes) => Presets::parse(bytes)
                .map_err(|e| PresetsError::new(format!("{}: {e}", path.display())))?,
        };
        Ok(PresetsFile {
            path: path.to_owned(),
            presets,
            read,
        })
    }

    /// Loads presets from a file the operator named (`--approvals FILE`): as
    /// [`PresetsFile::load_path`], but a missing file is an error, since a misspelt name must
    /// not start a server without the deny presets it was meant to have.
    pub fn load_named(path: &Path) -> Result<PresetsFile, PresetsError> {
        let file = PresetsFile::load_path(path)?;
        if file.existed() {
            return Ok(file);
        }
        // The system's own words for why it is not there.
        let why = std::fs::symlink_metadata(path).err().map_or_else(
            || "vanished while it was read".to_owned(),
            |e| e.to_string(),
        );
        Err(PresetsError::new(format!("{}: {why}", path.display())))
    }

    pub fn file_path(&self) -> &Path {
        &self.path
    }

    pub fn presets(&self) -> &Presets {
        &self.presets
    }

    pub fn presets_mut(&mut self) -> &mut Presets {
        &mut self.presets
    }

    /// Whether a file was there when loaded.
    pub fn existed(&self) -> bool {
        self.read.is_some()
    }

    /// SHA-256 of the bytes loaded (`None`: no file), for the audit log.
    pub fn digest(&self) -> Option<String> {
        self.read
            .as_ref()
            .map(|bytes| crate::sha256::hex_digest(bytes))
    }

    /// Writes the presets back atomically; refused if the file changed since it was loaded.
    pub fn save(&self) -> Result<(), PresetsError> {
        let text = self.presets.to_json();
        project_file::replace(
            &self.path,
            text.as_bytes(),
            Some(&self.read),
            MAX_APPROVALS_FILE_BYTES,
        )
        .map_err(file_error)
    }

    /// One edit of the file at `path`: takes its lock (waiting up to
    /// [`project_file::LOCK_WAIT`]), loads it, applies `change` and saves the result.
    pub fn edit<T>(
        path: &Path,
        change: impl FnOnce(&mut Presets) -> Result<T, PresetsError>,
    ) -> Result<T, PresetsError> {
        let _lock = EditLock::acquire(path, project_file::LOCK_WAIT).map_err(file_error)?;
        let mut file = PresetsFile::load_path(path)?;
        let outcome = change(&mut file.presets)?;
        file.save()?;
        Ok(outcome)
    }
}

fn file_error(e: FileError) -> PresetsError {
    PresetsError {
        retry: matches!(e, FileError::Changed(_) | FileError::Locked(_)),
        ..PresetsError::new(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(effect: PresetEffect, pattern: &str) -> Preset {
        Preset::new(effect, pattern, "why", "alice", "2026-12-01T00:00:00.000Z").unwrap()
    }

    #[test]
    fn the_file_round_trips_and_stays_readable() {
        let mut p = Presets::new();
        p.set(preset(PresetEffect::Grant, "write_note")).unwrap();
        p.set(preset(PresetEffect::Deny, "fs_*")).unwrap();
        let text = p.to_json();
        assert!(text.contains("\n  {\n   \"added_at\""), "{text}");
        assert_eq!(Presets::parse(text.as_bytes()).unwrap(), p);
        // Setting the same pattern replaces, never duplicates.
        let old = p.set(preset(PresetEffect::Deny, "write_note")).unwrap();
        assert_eq!(old.unwrap().effect, PresetEffect::Grant);
        assert_eq!(p.entries().len(), 2);
        assert_eq!(p.revoke("fs_*").unwrap().effect, PresetEffect::Deny);
        assert!(p.revoke("fs_*").is_none());
    }

    #[test]
    fn limits_hold_at_their_edges() {
        let text = |n: usize| "r".repeat(n);
        let new = |reason: &str, by: &str| {
            Preset::new(
                PresetEffect::Grant,
                "t",
                reason,
                by,
                "2026-12-01T00:00:00.000Z",
            )
        };
        assert!(new(&text(MAX_REASON_CHARS), "a").is_ok());
        assert_eq!(
            new(&text(MAX_REASON_CHARS + 1), "a")
                .unwrap_err()
                .to_string(),
            "reason is 501 characters long; the limit is 500"
        );
        assert!(new("r", &text(MAX_ADDED_BY_CHARS)).is_ok());
        assert!(new("r", &text(MAX_ADDED_BY_CHARS + 1)).is_err());
        let mut p = Presets::new();
        for i in 0..MAX_PRESETS {
            p.set(preset(PresetEffect::Grant, &format!("t{i}")))
                .unwrap();
        }
        // At the limit: the file parses, a new pattern is refused, replacing one is not.
        assert!(Presets::parse(p.to_json().as_bytes()).is_ok());
        assert_eq!(
            p.set(preset(PresetEffect::Deny, "another"))
                .unwrap_err()
                .to_string(),
            "the file already holds 1024 presets, the limit"
        );
        assert!(p.set(preset(PresetEffect::Deny, "t0")).unwrap().is_some());
        let over = p.to_json().replacen(
            "\"presets\": [",
            "\"presets\": [{\"effect\":\"deny\",\"tool\":\"x\",\"reason\":\"r\",\"added_by\":\"a\",\"added_at\":\"t\"},",
            1,
        );
        assert_eq!(
            Presets::parse(over.as_bytes()).unwrap_err().to_string(),
            "\"presets\" holds 1025 entries; the limit is 1024"
        );
    }

    #[test]
    fn a_file_exactly_at_the_size_limit_loads() {
        let dir = std::env::temp_dir().join(format!("presets-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("approvals.json");
        let mut text = br#"{"version":1,"presets":[]}"#.to_vec();
        text.resize(MAX_APPROVALS_FILE_BYTES as usize, b' ');
        std::fs::write(&path, &text).unwrap();
        assert!(PresetsFile::load_path(&path).unwrap().existed());
        text.push(b' ');
        std::fs::write(&path, &text).unwrap();
        let err = PresetsFile::load_path(&path).unwrap_err().to_string();
        assert!(err.ends_with("is larger than 1048576 bytes"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_files_name_the_place() {
        let err = |text: &str| Presets::parse(text.as_bytes()).unwrap_err().to_string();
        let good = r#"{"effect":"grant","tool":"t","reason":"r","added_by":"a","added_at":"x"}"#;
        // A file of version 1 holding `entries`.
        let file = |entries: &str| format!(r#"{{"version":1,"presets":[{entries}]}}"#);
        assert!(Presets::parse(file(good).as_bytes()).is_ok());
        assert_eq!(err(r#"{"presets":[]}"#), "\"version\" must be 1");
        assert_eq!(
            err(r#"{"version":1,"preset":[]}"#),
            "unknown key \"preset\"; expected version, presets"
        );
        assert_eq!(
            err(&file(&good.replace("grant", "dney"))),
            "presets[0]: \"effect\" must be \"grant\" or \"deny\", not \"dney\""
        );
        assert!(err(&file(&good.replace("\"t\"", "\"a b\"")))
            .starts_with("presets[0]: tool: pattern \"a b\" has ' '"));
        assert_eq!(
            err(&file(&format!("{good},{good}"))),
            "presets[1] repeats the tool pattern of presets[0]"
        );
        assert_eq!(
            err(&file(&good.replace("\"r\"", "\" \""))),
            "presets[0]: reason must not be empty"
        );
        assert_eq!(
            err(r#"{"version":1,"version":1,"presets":[]}"#),
            "key \"version\" appears twice in the top level"
        );
        assert!(err("[").starts_with("invalid JSON: "));
    }
}
