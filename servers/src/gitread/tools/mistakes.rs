//! The one-line answers to the mistakes agents make, the same words from every tool: a revision
//! that names nothing, a repository with no commits yet, a path the revision does not have, and a
//! range that selects nothing. An agent cannot pass `--` or read git's usage text, so each says
//! what was wrong with which argument and which tool helps next. Product only: under
//! `--compat reference` git's own text stands.
//!
//! Not for: any other failure (a timeout, the memory limit, a refused repository); those keep
//! their own messages. git runs with `LC_ALL=C`, so its messages are read in English; one this
//! module does not recognise stays git's.

use super::super::invoke::GitError;
use super::args::named_rev;
use super::row::GitTool;
use agentteams_mcp::json::{Map, Value};

/// `value` (argument `field`) names no branch, tag or commit.
pub fn unknown_revision(field: &str, value: &str) -> String {
    format!(
        "unknown revision {value:?} ({field}): no branch, tag or commit has that name here; \
         git_refs lists the branches and tags, git_log the commits"
    )
}

/// HEAD names no commit: the current branch has none yet.
pub const NO_COMMITS: &str = "no commits yet: HEAD names no commit because the current branch \
                              has none; git_refs lists any other branch";

/// The revision `rev` has nothing at `path`.
pub fn path_not_in(path: &str, rev: &str) -> String {
    format!(
        "path {path:?} is not in {rev}: no such path at that revision; git_log with this path \
         lists the commits that touched it"
    )
}

/// The range `value` (argument `field`) selects no commit.
pub fn empty_range(field: &str, value: &str) -> String {
    format!(
        "range {value:?} ({field}) selects no commits: its right side has no commit its left \
         side lacks; swap the sides, or name one revision"
    )
}

/// Whether `value` is a range (`A..B`, `A...B`).
pub fn is_range(value: &str) -> bool {
    value.contains("..")
}

/// What git's messages name as the revision it could not resolve, or the path a revision lacks.
enum Named<'e> {
    Revision(&'e str),
    Path { path: &'e str, rev: &'e str },
}

/// The name git's first error line gives (see [`Named`]), when it is one of the messages of an
/// unresolvable revision or a missing path.
fn named(stderr: &str) -> Option<Named<'_>> {
    let line = stderr.lines().next()?;
    let line = line
        .strip_prefix("fatal: ")
        .or_else(|| line.strip_prefix("error: "))?;
    let quoted = |prefix: &str, suffix: &str| {
        let rest = line.strip_prefix(prefix)?;
        rest.find(suffix).map(|end| &rest[..end])
    };
    if let Some(name) = quoted("ambiguous argument '", "': unknown revision") {
        return Some(Named::Revision(name));
    }
    if let Some(name) = quoted("bad revision '", "'") {
        return Some(Named::Revision(name));
    }
    for prefix in [
        "Not a valid object name ",
        "unable to resolve revision: ",
        "malformed object name ",
    ] {
        if let Some(name) = line.strip_prefix(prefix) {
            return Some(Named::Revision(name.trim_end()));
        }
    }
    let rest = line.strip_prefix("no such path ")?;
    let (path, rev) = rest.rsplit_once(" in ")?;
    Some(Named::Path { path, rev })
}

/// The one-line answer when git's failure is one of the mistakes above for a call of `tool`
/// with `arguments`; `None` when it is not (git's text then stands). `has_commits` is asked only
/// for a revision git could not resolve: in a repository without commits every revision is
/// unknown, and that is the answer.
pub fn explain(
    error: &GitError,
    tool: &GitTool,
    arguments: &Map,
    has_commits: impl FnOnce() -> bool,
) -> Option<String> {
    let GitError::Exited { stderr, .. } = error else {
        return None;
    };
    match named(stderr)? {
        Named::Path { path, rev } => Some(path_not_in(path, rev)),
        Named::Revision(_) if !has_commits() => Some(NO_COMMITS.to_owned()),
        Named::Revision(name) => {
            // The argument that carried it: the whole value, or one side of a range.
            let field = tool.revisions.iter().find(|field| {
                let value = given_rev(arguments, field);
                value == name || value.split("..").any(|side| side.trim_matches('.') == name)
            })?;
            Some(unknown_revision(field, name))
        }
    }
}

/// The revision argument `field` as the call gave it (`HEAD` when absent or not text).
fn given_rev<'a>(arguments: &'a Map, field: &str) -> &'a str {
    match arguments.get(field) {
        Some(Value::String(_)) => named_rev(arguments, field),
        _ => "HEAD",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(stderr: &str) -> GitError {
        GitError::Exited {
            code: 128,
            stderr: stderr.to_owned(),
        }
    }

    #[test]
    fn git_messages_of_each_mistake_become_one_line_naming_the_argument() {
        let diff = &super::super::diff::TOOL;
        let arguments = super::super::args::arguments(r#"{"base":"v1..nope","head":"HEAD~9"}"#);
        let explain = |stderr: &str| explain(&exited(stderr), diff, &arguments, || true);
        assert_eq!(
            explain("fatal: bad revision 'HEAD~9'\n"),
            Some(unknown_revision("head", "HEAD~9"))
        );
        assert_eq!(
            explain("fatal: ambiguous argument 'nope': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions"),
            Some(unknown_revision("base", "nope"))
        );
        let empty = super::explain(&exited("fatal: bad revision 'x'"), diff, &arguments, || {
            false
        });
        assert_eq!(empty, Some(NO_COMMITS.to_owned()));
        assert_eq!(
            explain("fatal: no such path a/b c.txt in v1.0"),
            Some(path_not_in("a/b c.txt", "v1.0"))
        );
        // A name no argument carried, another failure, or a message not known: git's text.
        assert_eq!(explain("fatal: bad revision 'other'"), None);
        assert_eq!(explain("fatal: bad object deadbeef"), None);
        assert_eq!(explain(""), None);
        assert_eq!(
            super::explain(
                &GitError::Failed("git timed out after 10s".into()),
                diff,
                &arguments,
                || true
            ),
            None
        );
    }

    #[test]
    fn every_answer_is_one_line_whatever_the_names() {
        for line in [
            unknown_revision("rev", "a\nb"),
            path_not_in("x\"\ny", "HEAD"),
            empty_range("rev", "A..B\n"),
            NO_COMMITS.to_owned(),
        ] {
            assert!(!line.contains('\n'), "{line}");
        }
    }
}
