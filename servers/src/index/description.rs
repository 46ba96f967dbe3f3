//! The project description `index build` takes its team-manifest inputs from (project name,
//! framework, extra memory and code sources, memory excludes): which file is read, how it is
//! checked, and the reference's rules for each field.
//!
//! The file is `--description FILE` when given (relative to the root unless absolute), else the
//! consumer's canonical `<root>/.agentteams/brief.json`, else the `--self` descriptor
//! `<team dir>/_build-description.json`, else there is none. The two implicit files must resolve
//! inside the project: a repository cannot point the builder at a file elsewhere on the machine.
//! The file is untrusted: at most [`MAX_DESCRIPTION_BYTES`], a JSON object, and each field this
//! module reads must have the schema's type (a wrong type is an error naming the file and field,
//! never a silent default). Entries of the list fields are filtered as the reference filters them.

use crate::corpus::teamdir::confine;
use crate::corpus::text::is_python_whitespace;
use agentteams_mcp::json::{self, Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// Largest description file read.
pub const MAX_DESCRIPTION_BYTES: u64 = 1024 * 1024;
/// The consumer's project description, relative to the root.
pub const CANONICAL_DESCRIPTION: &str = ".agentteams/brief.json";
/// The thin descriptor `agentteams --self` writes into the team dir, relative to it.
pub const SELF_DESCRIPTION: &str = "_build-description.json";
/// Most entries a list field may have (extra dirs, excludes). With [`MAX_ENTRY_CHARS`] this
/// bounds the pattern-matching work per file (and the glob's recursion depth) by a constant.
pub const MAX_LIST_ENTRIES: usize = 100;
/// Longest entry of a list field, in characters; a longer entry is an error, not skipped.
pub const MAX_ENTRY_CHARS: usize = 400;
/// The reference's project name when a description gives neither a name nor a project path.
const DEFAULT_PROJECT_NAME: &str = "MyProject";

/// The inputs the builders take from the team manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Description {
    /// The file they came from, if any.
    pub file: Option<PathBuf>,
    pub project_name: String,
    pub framework: String,
    /// `memory_index_extra_dirs`: non-blank, non-absolute strings, as written.
    pub memory_extra_dirs: Vec<String>,
    /// `memory_index_exclude`: stripped, trailing `/` removed, non-blank, non-absolute.
    pub memory_exclude: Vec<String>,
    /// `code_index_extra_dirs`: non-blank, non-absolute strings, as written.
    pub code_extra_dirs: Vec<String>,
}

/// A description that cannot be used, with the file it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescriptionError {
    pub file: PathBuf,
    pub problem: String,
}

impl fmt::Display for DescriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "project description {}: {}",
            self.file.display(),
            self.problem
        )
    }
}

/// Finds and reads the description for `root` (canonical) with its team dir; `explicit` is the
/// `--description` value, `framework` the `--framework` value.
pub fn load(
    root: &Path,
    team_dir: &Path,
    explicit: Option<&Path>,
    framework: Option<&str>,
) -> Result<Description, DescriptionError> {
    let file = match explicit {
        Some(given) => Some(root.join(given)),
        None => implicit_file(root, team_dir)?,
    };
    let Some(file) = file else {
        return Ok(without_file(root, framework));
    };
    let fail = |problem: String| DescriptionError {
        file: file.clone(),
        problem,
    };
    let value = read_json(&file).map_err(fail)?;
    let Value::Object(map) = value else {
        return Err(fail(format!(
            "must be a JSON object, found {}",
            value.type_name()
        )));
    };
    let mut description = from_object(&map, framework).map_err(fail)?;
    description.file = Some(file);
    Ok(description)
}

/// The canonical file, else the `--self` descriptor, when it is a file; refused when it resolves
/// outside the project.
fn implicit_file(root: &Path, team_dir: &Path) -> Result<Option<PathBuf>, DescriptionError> {
    for candidate in [
        root.join(CANONICAL_DESCRIPTION),
        team_dir.join(SELF_DESCRIPTION),
    ] {
        if candidate.is_file() {
            confine(root, &candidate).map_err(|problem| DescriptionError {
                file: candidate.clone(),
                problem,
            })?;
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

/// No description: the name of the root directory and the `--framework` value, as the
/// reference's git-hook refresh builds without a team manifest.
fn without_file(root: &Path, framework: Option<&str>) -> Description {
    Description {
        project_name: root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        framework: framework.unwrap_or_default().to_owned(),
        ..Description::default()
    }
}

fn read_json(file: &Path) -> Result<Value, String> {
    let bytes = crate::regular_file::read_at_most(file, MAX_DESCRIPTION_BYTES)
        .map_err(|e| format!("cannot be read: {e}"))?
        .ok_or_else(|| {
            format!("is larger than {MAX_DESCRIPTION_BYTES} bytes (MAX_DESCRIPTION_BYTES)")
        })?;
    json::parse(&bytes).map_err(|e| format!("is not valid JSON: {e}"))
}

/// The fields of a parsed description object.
fn from_object(map: &Map, framework: Option<&str>) -> Result<Description, String> {
    let name = string_field(map, "project_name")?.unwrap_or_default();
    let project_path = string_field(map, "existing_project_path")?.unwrap_or_default();
    // The reference's `_resolve_project_name`.
    let project_name = if !name.is_empty() {
        name.to_owned()
    } else {
        Some(python_name(project_path))
            .filter(|n| !project_path.is_empty() && !n.is_empty())
            .unwrap_or(DEFAULT_PROJECT_NAME)
            .to_owned()
    };
    let framework = match framework {
        Some(flag) => flag.to_owned(),
        None => string_field(map, "framework")?
            .unwrap_or_default()
            .to_owned(),
    };
    let usable = |entry: &&str| !entry.trim_matches(is_python_whitespace).is_empty();
    let relative = |entry: &&str| !entry.starts_with('/');
    // The extra source dirs: usable, relative entries, as written.
    let dirs = |name: &str| -> Result<Vec<String>, String> {
        Ok(list_field(map, name)?
            .into_iter()
            .filter(usable)
            .filter(relative)
            .map(str::to_owned)
            .collect())
    };
    Ok(Description {
        file: None,
        project_name,
        framework,
        memory_extra_dirs: dirs("memory_index_extra_dirs")?,
        memory_exclude: list_field(map, "memory_index_exclude")?
            .into_iter()
            .map(|e| e.trim_matches(is_python_whitespace))
            .filter(usable)
            .filter(relative)
            .map(|e| e.trim_end_matches('/').to_owned())
            .collect(),
        code_extra_dirs: dirs("code_index_extra_dirs")?,
    })
}

/// An optional string field; any other type is an error.
fn string_field<'a>(map: &'a Map, name: &str) -> Result<Option<&'a str>, String> {
    match map.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!(
            "field {name:?} must be a string, found {}",
            other.type_name()
        )),
    }
}

/// The string entries of an optional array field (other entries are skipped, as the reference
/// skips them); a field that is not an array, or exceeds [`MAX_LIST_ENTRIES`] or
/// [`MAX_ENTRY_CHARS`], is an error.
fn list_field<'a>(map: &'a Map, name: &str) -> Result<Vec<&'a str>, String> {
    let items = match map.get(name) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "field {name:?} must be an array of strings, found {}",
                other.type_name()
            ))
        }
    };
    if items.len() > MAX_LIST_ENTRIES {
        return Err(format!(
            "field {name:?} has {} entries, more than {MAX_LIST_ENTRIES} (MAX_LIST_ENTRIES)",
            items.len()
        ));
    }
    let mut entries = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(entry) = item.as_str() else {
            continue;
        };
        if entry.chars().count() > MAX_ENTRY_CHARS {
            return Err(format!(
                "field {name:?} entry {index} is longer than {MAX_ENTRY_CHARS} characters \
                 (MAX_ENTRY_CHARS)"
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Python's `Path(text).name`: the last part after dropping empty and `.` parts.
fn python_name(text: &str) -> &str {
    text.split('/')
        .rfind(|p| !p.is_empty() && *p != ".")
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_object(text: &str) -> Map {
        match json::parse(text.as_bytes()).unwrap() {
            Value::Object(map) => map,
            other => panic!("not an object: {other:?}"),
        }
    }

    fn fields(text: &str) -> Result<Description, String> {
        from_object(&parse_object(text), None)
    }

    #[test]
    fn project_name_follows_resolve_project_name() {
        let name = |text: &str| fields(text).unwrap().project_name;
        assert_eq!(name(r#"{"project_name": "Widgets"}"#), "Widgets");
        assert_eq!(
            name(r#"{"project_name": "", "existing_project_path": "/srv/gears/"}"#),
            "gears"
        );
        assert_eq!(
            name(r#"{"existing_project_path": "/srv/gears/."}"#),
            "gears"
        );
        assert_eq!(
            name(r#"{"existing_project_path": "/"}"#),
            DEFAULT_PROJECT_NAME
        );
        assert_eq!(name(r#"{"project_goal": "x"}"#), DEFAULT_PROJECT_NAME);
    }

    #[test]
    fn framework_flag_wins_over_the_file() {
        let map = parse_object(r#"{"framework": "claude"}"#);
        assert_eq!(from_object(&map, None).unwrap().framework, "claude");
        assert_eq!(from_object(&map, Some("goose")).unwrap().framework, "goose");
        assert_eq!(fields("{}").unwrap().framework, "");
    }

    #[test]
    fn list_entries_are_filtered_like_the_reference() {
        let d = fields(
            r#"{"memory_index_extra_dirs": ["docs", 3, null, "  ", "/etc", " notes ", "a/*.md"],
                "memory_index_exclude": [" drafts/ ", "", "/abs", "*.tmp.md", ["x"], "deep//"],
                "code_index_extra_dirs": ["tools", "/usr/bin", "\t", "scripts/*.py", false]}"#,
        )
        .unwrap();
        assert_eq!(d.memory_extra_dirs, ["docs", " notes ", "a/*.md"]);
        assert_eq!(d.memory_exclude, ["drafts", "*.tmp.md", "deep"]);
        assert_eq!(d.code_extra_dirs, ["tools", "scripts/*.py"]);
    }

    #[test]
    fn wrong_types_name_the_field() {
        let err = |text: &str| fields(text).unwrap_err();
        assert_eq!(
            err(r#"{"project_name": 7}"#),
            "field \"project_name\" must be a string, found integer"
        );
        assert!(err(r#"{"framework": ["claude"]}"#).contains("\"framework\""));
        assert!(err(r#"{"existing_project_path": null}"#).contains("existing_project_path"));
        assert_eq!(
            err(r#"{"memory_index_exclude": "drafts"}"#),
            "field \"memory_index_exclude\" must be an array of strings, found string"
        );
        assert!(err(r#"{"memory_index_extra_dirs": {}}"#).contains("memory_index_extra_dirs"));
        assert!(err(r#"{"code_index_extra_dirs": 1}"#).contains("code_index_extra_dirs"));
    }

    #[test]
    fn list_limits_at_their_edges() {
        let list = |count: usize, chars: usize| {
            let entry = format!("\"{}\"", "a".repeat(chars));
            let entries = vec![entry; count].join(",");
            fields(&format!(r#"{{"memory_index_exclude": [{entries}]}}"#))
        };
        assert_eq!(
            list(MAX_LIST_ENTRIES, MAX_ENTRY_CHARS)
                .unwrap()
                .memory_exclude
                .len(),
            MAX_LIST_ENTRIES
        );
        assert_eq!(
            list(MAX_LIST_ENTRIES + 1, 1).unwrap_err(),
            "field \"memory_index_exclude\" has 101 entries, more than 100 (MAX_LIST_ENTRIES)"
        );
        assert_eq!(
            list(2, MAX_ENTRY_CHARS + 1).unwrap_err(),
            "field \"memory_index_exclude\" entry 0 is longer than 400 characters (MAX_ENTRY_CHARS)"
        );
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!(
                "agentteams-description-{tag}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Dir(std::fs::canonicalize(dir).unwrap())
        }
        fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
            let path = self.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn lookup_order_and_default() {
        let dir = Dir::new("lookup");
        let root = &dir.0;
        let team = root.join(".claude/agents");
        let without = load(root, &team, None, Some("claude")).unwrap();
        assert_eq!(without.file, None);
        assert_eq!(
            without.project_name,
            root.file_name().unwrap().to_str().unwrap()
        );
        assert_eq!(without.framework, "claude");

        let self_descriptor = dir.write(
            ".claude/agents/_build-description.json",
            br#"{"project_name": "SelfTeam"}"#,
        );
        let found = load(root, &team, None, None).unwrap();
        assert_eq!(
            (found.file, found.project_name.as_str()),
            (Some(self_descriptor), "SelfTeam")
        );

        let brief = dir.write(".agentteams/brief.json", br#"{"project_name": "Brief"}"#);
        let found = load(root, &team, None, None).unwrap();
        assert_eq!(
            (found.file, found.project_name.as_str()),
            (Some(brief), "Brief")
        );

        let other = dir.write("other.json", br#"{"project_name": "Other"}"#);
        let found = load(root, &team, Some(Path::new("other.json")), None).unwrap();
        assert_eq!(
            (found.file, found.project_name.as_str()),
            (Some(other), "Other")
        );

        let missing = load(root, &team, Some(Path::new("missing.json")), None).unwrap_err();
        assert!(
            missing.to_string().contains("missing.json: cannot be read"),
            "{missing}"
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_file_named() {
        let dir = Dir::new("bad");
        let root = &dir.0;
        let load_text = |bytes: &[u8]| {
            dir.write(".agentteams/brief.json", bytes);
            load(root, root, None, None).unwrap_err().to_string()
        };
        let message = load_text(b"{\"project_name\": ");
        assert!(message.starts_with("project description "), "{message}");
        assert!(
            message.contains("brief.json: is not valid JSON"),
            "{message}"
        );
        assert!(load_text(b"[1]").contains("must be a JSON object, found array"));

        let mut at_limit = b"{\"project_name\": \"x\"}".to_vec();
        at_limit.resize(MAX_DESCRIPTION_BYTES as usize, b' ');
        dir.write(".agentteams/brief.json", &at_limit);
        assert_eq!(load(root, root, None, None).unwrap().project_name, "x");
        at_limit.push(b' ');
        assert!(load_text(&at_limit).contains("is larger than 1048576 bytes"));
    }

    #[test]
    fn an_implicit_file_outside_the_project_is_refused() {
        let outside = Dir::new("outside");
        let target = outside.write("secret.json", br#"{"project_name": "leak"}"#);
        let dir = Dir::new("inside");
        std::fs::create_dir_all(dir.0.join(".agentteams")).unwrap();
        std::os::unix::fs::symlink(target, dir.0.join(".agentteams/brief.json")).unwrap();
        let err = load(&dir.0, &dir.0, None, None).unwrap_err();
        assert!(
            err.to_string().contains("resolves outside the project"),
            "{err}"
        );
    }
}
