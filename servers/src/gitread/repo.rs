//! Which repository a call may read: the project's own git dir and common dir, found by reading
//! `.git`, `commondir` and the worktree back-link from disk, then checked for containment and
//! alternates. A root without `.git` that is itself a bare repository (a mirror such as
//! `/srv/repo.git`, `HEAD`, `objects/` and `refs/` in it, no work tree above it) is served as
//! one: its git dir is the root, and git runs with `--bare`, never with a work tree.
//!
//! The reference asks `git rev-parse` for the two directories (two processes per call). Their
//! layout is fully specified (gitrepository-layout: the gitfile, `commondir`, `worktrees/<id>/gitdir`),
//! so the product reads the same files itself and then pins the result for git with `--git-dir`
//! and `GIT_COMMON_DIR`: git never re-discovers the repository, so what was checked is what runs.

use std::fs;
use std::path::{Path, PathBuf};

/// Largest `.git` file, `commondir` or `gitdir` back-link read (git itself reads a path, so a few
/// KiB is ample; a larger file is refused rather than read into memory).
const MAX_POINTER_FILE: u64 = 4096;

/// The validated repository of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The git dir (for a linked worktree, `<common>/worktrees/<id>`), canonical.
    pub git_dir: PathBuf,
    /// The common dir (objects, refs, config), canonical.
    pub common_dir: PathBuf,
    /// The root is a bare repository: there is no work tree.
    pub bare: bool,
}

/// Why a repository is refused; `Display` gives the reference's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepoError {
    NotRoot(PathBuf),
    Unresolvable(String),
    Alternates,
    Outside,
}

impl std::fmt::Display for RepoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepoError::NotRoot(root) => write!(
                f,
                "{} is not the root of a git work tree; the MCP client must launch this server there",
                root.display()
            ),
            RepoError::Unresolvable(inner) => write!(f, "cannot resolve the git dir: {inner}"),
            RepoError::Alternates => f.write_str(
                "the repository borrows objects from elsewhere (alternates); refusing",
            ),
            RepoError::Outside => f.write_str(
                "the project's .git points at a repository outside the project; refusing",
            ),
        }
    }
}

/// Finds and checks the repository of the work tree at `root` (canonical), in the reference's order:
/// `.git` exists, git dir and common dir resolve, no alternates, both inside the root or a genuine
/// linked worktree. What lies below them is [`containment`](super::containment)'s to check.
pub fn inspect(root: &Path) -> Result<Layout, RepoError> {
    let dot_git = root.join(".git");
    let meta = match fs::metadata(&dot_git) {
        Ok(meta) => meta,
        Err(_) if is_bare_root(root) => return bare(root),
        Err(_) => return Err(RepoError::NotRoot(root.to_path_buf())),
    };
    let git_dir = if meta.is_dir() {
        canonical(&dot_git)?
    } else {
        let target = read_pointer(&dot_git, "gitdir: ")?;
        canonical(&root.join(target))?
    };
    let common_dir = common_dir_of(&git_dir)?;
    refuse_alternates(&common_dir)?;
    let layout = Layout {
        git_dir,
        common_dir,
        bare: false,
    };
    let contained = layout.git_dir.starts_with(root) && layout.common_dir.starts_with(root);
    if !contained && !is_registered_worktree(&dot_git, &layout) {
        return Err(RepoError::Outside);
    }
    Ok(layout)
}

/// The common dir of `git_dir`: where its `commondir` file points, else the git dir itself.
fn common_dir_of(git_dir: &Path) -> Result<PathBuf, RepoError> {
    match fs::symlink_metadata(git_dir.join("commondir")) {
        Ok(_) => {
            let target = read_pointer(&git_dir.join("commondir"), "")?;
            canonical(&git_dir.join(target))
        }
        Err(_) => Ok(git_dir.to_path_buf()),
    }
}

/// No alternates: a repository that borrows objects from elsewhere is refused.
fn refuse_alternates(common_dir: &Path) -> Result<(), RepoError> {
    for name in ["alternates", "http-alternates"] {
        // lstat: a dangling symlink counts as present.
        if fs::symlink_metadata(common_dir.join("objects/info").join(name)).is_ok() {
            return Err(RepoError::Alternates);
        }
    }
    Ok(())
}

/// Longest `HEAD` of a bare root read (a symref or an object id is well under it).
const MAX_HEAD_FILE: u64 = 4096;

/// `root` (canonical, no `.git` in it) is a bare repository an operator named: `HEAD` a regular
/// file holding a symref to `refs/` or an object id, `objects/` and `refs/` real directories (what
/// git itself requires of a git dir, read without git), and no work tree in it or above it. An
/// embedded bare repository, one inside a checkout (GIT-THREATS.md P2), is refused as before.
fn is_bare_root(root: &Path) -> bool {
    let is_dir = |name: &str| fs::symlink_metadata(root.join(name)).is_ok_and(|m| m.is_dir());
    let head = crate::regular_file::read_at_most(&root.join("HEAD"), MAX_HEAD_FILE);
    let head_ok = match head {
        Ok(Some(bytes)) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim_end_matches(['\n', '\r']);
            text.strip_prefix("ref: ")
                .is_some_and(|r| r.starts_with("refs/"))
                || (matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()))
        }
        _ => false,
    };
    let is_head_file = fs::symlink_metadata(root.join("HEAD")).is_ok_and(|m| m.is_file());
    is_head_file
        && head_ok
        && is_dir("objects")
        && is_dir("refs")
        && nearest_work_tree(root).is_none()
}

/// The layout of a bare root: its own git dir, its common dir (a `commondir` must stay inside it),
/// no alternates.
fn bare(root: &Path) -> Result<Layout, RepoError> {
    let git_dir = root.to_path_buf();
    let common_dir = common_dir_of(&git_dir)?;
    refuse_alternates(&common_dir)?;
    if !common_dir.starts_with(root) {
        return Err(RepoError::Outside);
    }
    Ok(Layout {
        git_dir,
        common_dir,
        bare: true,
    })
}

/// Folders above a path examined for a `.git` before the search gives up (deeper than any real
/// project; the walk only stats, never reads).
pub const MAX_ANCESTORS: usize = 64;

/// The nearest of `from` and the folders above it that holds a `.git` entry (a folder, a gitfile
/// or a link: only its presence is tested), for telling an operator which directory is the work
/// tree's root. Reads nothing and runs no git, so a hostile repository cannot answer.
pub fn nearest_work_tree(from: &Path) -> Option<PathBuf> {
    from.ancestors()
        .take(MAX_ANCESTORS)
        .find(|dir| fs::symlink_metadata(dir.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// A genuine linked worktree: `.git` is a regular file, the git dir is `<common>/worktrees/<id>`,
/// and that admin dir's `gitdir` file points back at this very `.git` file (REFERENCE-BEHAVIOUR.md
/// §4.6 step 4). A forged admin dir elsewhere fails the second test; one inside another repository's
/// `worktrees/` fails the back-link.
fn is_registered_worktree(dot_git: &Path, layout: &Layout) -> bool {
    let is_file = fs::symlink_metadata(dot_git).is_ok_and(|m| m.file_type().is_file());
    let Some(admin_parent) = layout.git_dir.parent() else {
        return false;
    };
    if !is_file
        || admin_parent.file_name() != Some("worktrees".as_ref())
        || admin_parent.parent() != Some(layout.common_dir.as_path())
    {
        return false;
    }
    let Ok(back_link) = read_pointer(&layout.git_dir.join("gitdir"), "") else {
        return false;
    };
    // git ≥ 2.48 may write the back-link relative to the admin dir.
    let (Ok(linked), Ok(this)) = (
        fs::canonicalize(layout.git_dir.join(back_link)),
        fs::canonicalize(dot_git),
    ) else {
        return false;
    };
    linked == this
}

/// Reads a path-holding file the way git does: `prefix` required at the start, trailing `\n`/`\r`
/// removed. A NUL, an empty path or an oversized file is refused (git would read something else
/// than this parser, so the two must never disagree silently).
fn read_pointer(file: &Path, prefix: &str) -> Result<PathBuf, RepoError> {
    let unreadable = |why: &str| RepoError::Unresolvable(format!("{}: {why}", file.display()));
    // A FIFO or device in its place must not block the call: only a regular file is read.
    let bytes = crate::regular_file::read_at_most(file, MAX_POINTER_FILE)
        .map_err(|e| unreadable(&e.to_string()))?
        .ok_or_else(|| unreadable("file too large"))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| unreadable("not UTF-8"))?;
    let body = text
        .strip_prefix(prefix)
        .ok_or_else(|| unreadable("invalid gitfile format"))?
        .trim_end_matches(['\n', '\r']);
    if body.is_empty() || body.contains('\0') {
        return Err(unreadable("invalid path"));
    }
    Ok(PathBuf::from(body))
}

fn canonical(path: &Path) -> Result<PathBuf, RepoError> {
    fs::canonicalize(path).map_err(|e| RepoError::Unresolvable(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scratch::TempDir;

    /// A minimal git dir layout (no git needed: only the files this module reads).
    fn git_dir_at(dir: &Path) {
        fs::create_dir_all(dir.join("objects/info")).unwrap_or_default();
        fs::create_dir_all(dir.join("refs")).unwrap_or_default();
        fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap_or_default();
    }

    /// Why `inspect` refuses `root`, in the words the client sees ("" if it accepts it).
    fn refusal(root: &Path) -> String {
        inspect(root)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_plain_repository_is_its_own_common_dir() {
        let t = TempDir::new("plain");
        git_dir_at(&t.0.join(".git"));
        let layout = inspect(&t.0);
        assert_eq!(
            layout,
            Ok(Layout {
                git_dir: t.0.join(".git"),
                common_dir: t.0.join(".git"),
                bare: false,
            })
        );
    }

    #[test]
    fn the_nearest_work_tree_is_found_by_presence_only() {
        let t = TempDir::new("nearest");
        let deep = t.0.join("a/b/c");
        fs::create_dir_all(&deep).unwrap_or_default();
        assert_eq!(
            nearest_work_tree(&deep).filter(|d| d.starts_with(&t.0)),
            None
        );
        // A gitfile pointing nowhere still marks the work tree's root.
        fs::write(t.0.join("a/.git"), "gitdir: /nonexistent\n").unwrap_or_default();
        assert_eq!(nearest_work_tree(&deep), Some(t.0.join("a")));
        assert_eq!(
            nearest_work_tree(&t.0.join("a/missing/x")),
            Some(t.0.join("a"))
        );
    }

    #[test]
    fn a_missing_dot_git_is_not_the_root() {
        let t = TempDir::new("noroot");
        let err = refusal(&t.0);
        assert!(err.contains("is not the root of a git work tree"), "{err}");
    }

    #[test]
    fn gitfile_and_commondir_redirects_outside_are_refused() {
        let t = TempDir::new("redirect");
        let root = t.0.join("project");
        let outside = t.0.join("outside/.git");
        git_dir_at(&outside);
        fs::create_dir_all(&root).unwrap_or_default();
        fs::write(
            root.join(".git"),
            format!("gitdir: {}\n", outside.display()),
        )
        .unwrap_or_default();
        assert_eq!(inspect(&root), Err(RepoError::Outside));

        fs::remove_file(root.join(".git")).unwrap_or_default();
        git_dir_at(&root.join(".git"));
        fs::write(
            root.join(".git/commondir"),
            format!("{}\n", outside.display()),
        )
        .unwrap_or_default();
        assert_eq!(inspect(&root), Err(RepoError::Outside));
    }

    #[test]
    fn dangling_alternates_symlinks_count() {
        let t = TempDir::new("alt");
        git_dir_at(&t.0.join(".git"));
        std::os::unix::fs::symlink(
            "/nonexistent/objects",
            t.0.join(".git/objects/info/alternates"),
        )
        .unwrap_or_default();
        assert_eq!(inspect(&t.0), Err(RepoError::Alternates));
    }

    #[test]
    fn pointer_files_at_the_size_limit() {
        let t = TempDir::new("limit");
        git_dir_at(&t.0.join("real"));
        let line = format!("gitdir: {}", t.0.join("real").display());
        let pad = |total: usize| format!("{line}{}", "\n".repeat(total - line.len()));
        fs::write(t.0.join(".git"), pad(MAX_POINTER_FILE as usize)).unwrap_or_default();
        assert!(inspect(&t.0).is_ok_and(|l| l.git_dir == t.0.join("real")));
        fs::write(t.0.join(".git"), pad(MAX_POINTER_FILE as usize + 1)).unwrap_or_default();
        let err = refusal(&t.0);
        assert!(err.contains("file too large"), "{err}");
    }

    #[test]
    fn pointer_files_with_nul_or_bad_prefix_are_unresolvable() {
        let t = TempDir::new("pointer");
        fs::write(t.0.join(".git"), "gitdir: /a\0/b\n").unwrap_or_default();
        assert!(matches!(inspect(&t.0), Err(RepoError::Unresolvable(_))));
        fs::write(t.0.join(".git"), "gitdir:/a\n").unwrap_or_default();
        assert!(matches!(inspect(&t.0), Err(RepoError::Unresolvable(_))));
        fs::write(t.0.join(".git"), vec![b'x'; 5000]).unwrap_or_default();
        assert!(matches!(inspect(&t.0), Err(RepoError::Unresolvable(_))));
    }
}
