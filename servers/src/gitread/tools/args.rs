//! The argument rules every gitread tool shares (the ref rule, the path rule, booleans, `offset`)
//! with their messages, and the schema builders and sentences of the declarations. Not for one
//! tool's own arguments: those live in that tool's module.

use super::super::page;
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::server::Tool;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Longest revision accepted.
pub const MAX_REV_LEN: usize = 200;
/// Symlinks followed while resolving one argument path before it counts as a loop.
const MAX_SYMLINKS: usize = 40;

pub const PATH_NOT_RELATIVE: &str = "path must be a relative path inside the project";
pub const PATH_OUTSIDE: &str = "path must be inside the project and outside .git";

/// The reference's message for a revision argument `field` that breaks the ref rule.
pub fn ref_message(field: &str) -> String {
    format!(
        "{field} must be a plain revision (letters, digits, ._/@{{}}~^-), not starting with '-'"
    )
}

/// The refusal of a `^{/text}` search whose revision holds other braces.
pub fn search_message(field: &str) -> String {
    format!(
        "{field}: a ^{{/text}} commit search may hold no other braces ({{ or }}): git reads the \
         text as a regex, and a {{m,n}} repetition can take it gigabytes"
    )
}

/// The ref rule: 1–200 characters of `[A-Za-z0-9._/@{}~^-]`, not starting with `-`; and a
/// revision with git's `^{/text}` commit search holds no braces but that search's own pair.
///
/// git compiles the search text as an extended regex. Within the charset the only operators left
/// are `.`, `^` and the `{m,n}` repetition, and repetitions nest into a program of billions of
/// states (`HEAD^{/.{32767}{32767}}` took git to 6.9 GB). Without braces the text is a fixed-length
/// pattern of at most 200 literals and `.`, matched in linear time, so the search stays useful and
/// safe; the memory limit still bounds everything else.
pub fn revision<'a>(arguments: &'a Map, field: &str) -> Result<&'a str, String> {
    let value = arguments.get(field).and_then(Value::as_str).unwrap_or("");
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._/@{}~^-".contains(c);
    if value.is_empty()
        || value.len() > MAX_REV_LEN
        || value.starts_with('-')
        || !value.chars().all(allowed)
    {
        return Err(ref_message(field));
    }
    if value.contains("{/") && (value.matches('{').count() > 1 || value.matches('}').count() > 1) {
        return Err(search_message(field));
    }
    Ok(value)
}

/// The path rule (REFERENCE-BEHAVIOUR.md §4.5, `.git` compared case-insensitively): relative,
/// inside `root` after resolving symlinks like Python's `Path.resolve()`, never into `.git` by name
/// or, through a symlink, into the repository's git dirs.
pub fn checked_path<'a>(
    value: &'a Value,
    root: &Path,
    git_dirs: [&Path; 2],
) -> Result<&'a str, String> {
    let text = relative_text(value)?;
    let names_git = names_git(text);
    let inside = match resolve(root, Path::new(text)) {
        Some(resolved) => {
            resolved.starts_with(root) && !git_dirs.iter().any(|dir| resolved.starts_with(dir))
        }
        None => false,
    };
    if names_git || !inside {
        return Err(PATH_OUTSIDE.to_owned());
    }
    Ok(text)
}

/// The path rule of a bare repository, which has no work tree to resolve links in: the same
/// relative text, and lexically inside the tree (a `..` may not leave it); what it names is read
/// from the revision's tree alone.
pub fn checked_tree_path(value: &Value) -> Result<&str, String> {
    let text = relative_text(value)?;
    let mut depth = 0usize;
    for component in Path::new(text).components() {
        match component {
            Component::ParentDir => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| PATH_OUTSIDE.to_owned())?
            }
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    if names_git(text) {
        return Err(PATH_OUTSIDE.to_owned());
    }
    Ok(text)
}

/// `value` as relative path text: a non-empty string without NUL, not an option or absolute.
fn relative_text(value: &Value) -> Result<&str, String> {
    let text = value.as_str().unwrap_or("");
    if text.is_empty() || text.contains('\0') || text.starts_with('-') || text.starts_with('/') {
        return Err(PATH_NOT_RELATIVE.to_owned());
    }
    Ok(text)
}

/// A component of `text` is `.git`, in any case.
fn names_git(text: &str) -> bool {
    Path::new(text)
        .components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
}

/// `base.join(relative)` with every symlink resolved component by component and `..` applied to the
/// resolved path (POSIX `realpath` semantics, non-strict: missing components are kept as written).
/// `None` on a symlink loop or an unreadable link.
fn resolve(base: &Path, relative: &Path) -> Option<PathBuf> {
    let mut resolved = base.to_path_buf();
    let mut pending: Vec<OsString> = relative
        .components()
        .rev()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut links = 0;
    while let Some(part) = pending.pop() {
        match Path::new(&part).components().next() {
            Some(Component::RootDir) => resolved = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::Normal(name)) => {
                let next = resolved.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_SYMLINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        pending.extend(target.components().rev().map(|c| c.as_os_str().to_owned()));
                    }
                    _ => resolved = next,
                }
            }
            _ => {}
        }
    }
    Some(resolved)
}

/// `items` as an owned argv.
pub fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Ends `argv` with `--end-of-options REV` and, when a path was given, `-- PATH`.
pub fn end_with(mut argv: Vec<String>, rev: &str, path: Option<&str>) -> Vec<String> {
    argv.extend(owned(&["--end-of-options", rev]));
    if let Some(path) = path {
        argv.extend(owned(&["--", path]));
    }
    argv
}

/// The revision argument `field` as an empty answer's note names it (`HEAD` when absent; it
/// passed the ref rule, so it is one line).
pub fn named_rev<'a>(arguments: &'a Map, field: &str) -> &'a str {
    arguments
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or("HEAD")
}

/// The rule of the boolean argument `field`.
pub fn flag_rule(field: &str) -> String {
    format!("{field} must be true or false, e.g. true")
}

/// The boolean argument `field` (absent or null: false), or its rule.
pub fn flag(arguments: &Map, field: &str) -> Result<bool, String> {
    match arguments.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(value) => value.as_bool().ok_or_else(|| flag_rule(field)),
    }
}

/// Test arguments from JSON text (an object), for the unit tests of every tool module.
#[cfg(test)]
pub fn arguments(text: &str) -> Map {
    match agentteams_mcp::json::parse(text.as_bytes()) {
        Ok(Value::Object(map)) => map,
        _ => panic!("bad test input {text}"),
    }
}

/// The `offset` argument of a paged call (0 when absent).
pub fn offset(arguments: &Map) -> Result<u64, String> {
    match arguments.get("offset") {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_u64()
            .filter(|&n| n <= page::MAX_OFFSET)
            .ok_or_else(page::offset_message),
    }
}

/// `{"type": "string"}`, the reference's declaration of every text argument.
pub fn string() -> Value {
    obj([("type", Value::from("string"))])
}

/// An object schema of `properties`, `required` listed when there are any.
pub fn schema<const N: usize>(required: &[&str], properties: [(&str, Value); N]) -> Value {
    let properties = obj(properties);
    if required.is_empty() {
        return obj([("type", Value::from("object")), ("properties", properties)]);
    }
    let required = Value::Array(required.iter().map(|&r| Value::from(r)).collect());
    obj([
        ("type", Value::from("object")),
        ("required", required),
        ("properties", properties),
    ])
}

/// Every tool takes `path` under the same rule, and `null` for it means absent.
pub fn with_path(tool: Tool) -> Tool {
    tool.argument_message("path", PATH_NOT_RELATIVE)
        .null_means_absent("path")
}

/// An argument of type `kind` described by `description`, with `default` when it is optional.
pub fn described(kind: &str, description: &str, default: Option<Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("type", Value::from(kind));
    schema.insert("description", Value::from(description));
    if let Some(default) = default {
        schema.insert("default", default);
    }
    Value::Object(schema)
}

/// The optional `path` argument: `what` of a file or directory only.
pub fn path_argument(what: &str) -> Value {
    described(
        "string",
        &format!("Only {what} this file or directory, e.g. \"src\"."),
        Some(Value::Null),
    )
}

/// A required revision argument: `what` it names, and its example.
pub fn rev_argument(what: &str) -> Value {
    described("string", what, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ref_rule_accepts_plain_revisions_only() {
        for good in ["HEAD~1", "HEAD^", "main@{1}", "v1.0", "A..B", "a/b-c_d"] {
            let a = arguments(&format!(r#"{{"rev":"{good}"}}"#));
            assert_eq!(revision(&a, "rev"), Ok(good), "{good}");
        }
        let long = "a".repeat(MAX_REV_LEN + 1);
        for bad in [
            "HEAD;rm",
            "--output=/tmp/x",
            "-x",
            "a b",
            "HEAD:a.txt",
            "",
            long.as_str(),
        ] {
            let a = arguments(&format!(r#"{{"rev":"{bad}"}}"#));
            assert_eq!(revision(&a, "rev"), Err(ref_message("rev")), "{bad}");
        }
        let edge = "a".repeat(MAX_REV_LEN);
        assert!(revision(&arguments(&format!(r#"{{"rev":"{edge}"}}"#)), "rev").is_ok());
        assert_eq!(
            ref_message("base"),
            "base must be a plain revision (letters, digits, ._/@{}~^-), not starting with '-'"
        );
    }

    #[test]
    fn paths_must_stay_inside_and_out_of_git() {
        let root = std::env::temp_dir().join(format!("gitread-paths-{}", std::process::id()));
        let _ = std::fs::create_dir_all(root.join("sub"));
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let _ = std::os::unix::fs::symlink("/etc", root.join("link"));
        let _ = std::os::unix::fs::symlink(".git", root.join("gitlink"));
        let _ = std::os::unix::fs::symlink("loop", root.join("loop"));
        let git = root.join(".git");
        let check = |p: &str| checked_path(&Value::from(p), &root, [&git, &git]).map(str::to_owned);
        for good in ["a.txt", ".", "sub/../a.txt", "sub/new-file"] {
            assert_eq!(check(good), Ok(good.to_owned()));
        }
        for bad in ["", "-x", "/etc/passwd"] {
            assert_eq!(check(bad), Err(PATH_NOT_RELATIVE.to_owned()), "{bad}");
        }
        assert_eq!(
            checked_path(&Value::from(5u64), &root, [&git, &git]),
            Err(PATH_NOT_RELATIVE.to_owned())
        );
        for bad in [
            "../x",
            ".git/config",
            ".GIT/config",
            "link/passwd",
            "missing/../../x",
            "gitlink/config",
            "loop",
        ] {
            assert_eq!(check(bad), Err(PATH_OUTSIDE.to_owned()), "{bad}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
