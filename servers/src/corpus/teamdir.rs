//! Where a team's indexes live (`TEAM_DIRS`) and the containment rule every path recall reads or
//! the index builder reads and writes must pass: the path, symlinks resolved, lies inside the
//! project root.

use crate::compat::Compat;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Team directories searched for an index marker, in this order (the reference's five, then
/// `.goose/recipes`, where the reference CLI writes a Goose team's references).
pub const TEAM_DIRS: [&str; 6] = [
    ".",
    ".claude/agents",
    ".github/agents",
    ".goose",
    ".codex/agents",
    ".goose/recipes",
];

/// The reference's "not found" message lists only its five directories.
const REFERENCE_TEAM_DIRS: &str = "., .claude/agents, .github/agents, .goose, .codex/agents";

/// Symlinks followed while resolving one path before it counts as a loop (Linux's `MAXSYMLINKS`).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// The memory index, relative to a team dir.
pub const MEMORY_MARKER: &str = "references/memory-index.json";
/// The code-index manifest, relative to a team dir.
pub const CODE_MARKER: &str = "references/code-index/manifest.json";

/// The first team dir holding `marker`, confined to the root. When none does, the message is
/// [`missing_index`]'s.
pub fn find_team_dir(root: &Path, marker: &str, compat: Compat) -> Result<PathBuf, String> {
    for candidate in TEAM_DIRS {
        let dir = if candidate == "." {
            root.to_path_buf()
        } else {
            root.join(candidate)
        };
        if dir.join(marker).exists() {
            confine(root, &dir)?;
            return Ok(dir);
        }
    }
    Err(missing_index(marker, compat))
}

/// What recall answers when no team dir holds `marker`: the folders searched, in order, and the
/// command that builds the indexes. The project's path is left out, as from every answer recall
/// gives. Under `--compat reference`, the reference's words: its five folders and its own
/// command, `--refresh-index`, for both indexes.
pub fn missing_index(marker: &str, compat: Compat) -> String {
    match compat {
        Compat::Reference => format!(
            "no {marker} under {REFERENCE_TEAM_DIRS}; ask the orchestrator to run --refresh-index"
        ),
        Compat::Product => format!(
            "no {marker} in any team dir: searched {} under the project root; build the indexes with `agentteams-mcp index build --root <project root>`",
            TEAM_DIRS.join(", ")
        ),
    }
}

/// Resolves `path` (symlinks and `..`, tolerating missing components) and returns the result if it
/// lies inside `root`, which must already be canonical. Any failure to resolve (a symlink loop, an
/// unreadable link) is refused the same way as an escape.
pub fn confine(root: &Path, path: &Path) -> Result<PathBuf, String> {
    match resolve_lenient(path) {
        Some(resolved) if resolved.starts_with(root) => Ok(resolved),
        _ => Err(format!(
            "{} resolves outside the project; refusing",
            display_name(path)
        )),
    }
}

/// Python's `Path.name` of the path as given (the last normal component).
fn display_name(path: &Path) -> String {
    path.components()
        .rev()
        .find_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .unwrap_or_default()
}

/// `os.path.realpath` in non-strict mode: resolves every existing symlink component by component,
/// keeps missing components as they are, applies `..` after resolving what precedes it. `None`
/// on a symlink loop or an unreadable link. `path` must be absolute.
pub fn resolve_lenient(path: &Path) -> Option<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, path, false);
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        out.push(&part);
        let is_link = fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return None;
        }
        let target = fs::read_link(&out).ok()?;
        out.pop();
        if target.is_absolute() {
            out = PathBuf::from("/");
        }
        push_components(&mut pending, &target, true);
    }
    Some(out)
}

/// Adds the normal and `..` components of `path` to the queue, at the front or the back.
fn push_components(queue: &mut VecDeque<OsString>, path: &Path, front: bool) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    if front {
        for part in parts.into_iter().rev() {
            queue.push_front(part);
        }
    } else {
        queue.extend(parts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn temp_root(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "recall-teamdir-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::canonicalize(&dir).unwrap()
    }

    #[test]
    fn resolves_links_then_dotdot_and_keeps_missing_parts() {
        let root = temp_root("resolve");
        fs::create_dir_all(root.join("a/b")).unwrap();
        symlink(root.join("a/b"), root.join("link")).unwrap();
        assert_eq!(
            resolve_lenient(&root.join("link/../x/y")),
            Some(root.join("a/x/y"))
        );
        assert_eq!(
            resolve_lenient(&root.join("missing/../link")),
            Some(root.join("a/b"))
        );
        symlink(root.join("loop2"), root.join("loop1")).unwrap();
        symlink(root.join("loop1"), root.join("loop2")).unwrap();
        assert_eq!(resolve_lenient(&root.join("loop1/x")), None);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn confine_refuses_escapes_and_loops_by_name() {
        let root = temp_root("confine");
        let outside = temp_root("confine-outside");
        symlink(&outside, root.join(".goose")).unwrap();
        assert_eq!(
            confine(&root, &root.join(".goose")).unwrap_err(),
            ".goose resolves outside the project; refusing"
        );
        assert_eq!(
            confine(
                &root,
                &root.join("references/../../definitely-not-here.json")
            )
            .unwrap_err(),
            "definitely-not-here.json resolves outside the project; refusing"
        );
        assert!(confine(&root, &root.join("references/x.json")).is_ok());
        symlink(root.join("self"), root.join("self")).unwrap();
        assert!(confine(&root, &root.join("self")).is_err());
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn team_dir_lookup_follows_the_order_and_names_every_folder_searched() {
        let root = temp_root("lookup");
        let err = find_team_dir(&root, MEMORY_MARKER, Compat::Product).unwrap_err();
        assert_eq!(err, "no references/memory-index.json in any team dir: searched ., .claude/agents, .github/agents, .goose, .codex/agents, .goose/recipes under the project root; build the indexes with `agentteams-mcp index build --root <project root>`");
        let err = find_team_dir(&root, CODE_MARKER, Compat::Reference).unwrap_err();
        assert_eq!(err, "no references/code-index/manifest.json under ., .claude/agents, .github/agents, .goose, .codex/agents; ask the orchestrator to run --refresh-index");
        fs::create_dir_all(root.join(".github/agents/references")).unwrap();
        fs::write(root.join(".github/agents").join(MEMORY_MARKER), "{}").unwrap();
        assert_eq!(
            find_team_dir(&root, MEMORY_MARKER, Compat::Product).unwrap(),
            root.join(".github/agents")
        );
        fs::create_dir_all(root.join(".claude/agents/references")).unwrap();
        fs::write(root.join(".claude/agents").join(MEMORY_MARKER), "{}").unwrap();
        assert_eq!(
            find_team_dir(&root, MEMORY_MARKER, Compat::Product).unwrap(),
            root.join(".claude/agents")
        );
        fs::create_dir_all(root.join(".goose/recipes/references")).unwrap();
        fs::write(root.join(".goose/recipes").join(MEMORY_MARKER), "{}").unwrap();
        fs::remove_dir_all(root.join(".claude")).unwrap();
        fs::remove_dir_all(root.join(".github")).unwrap();
        assert_eq!(
            find_team_dir(&root, MEMORY_MARKER, Compat::Product).unwrap(),
            root.join(".goose/recipes")
        );
        fs::remove_dir_all(&root).unwrap();
    }
}
