//! `git_blame`: who last changed each line of a file as of a revision, read from the object
//! store (never the work tree): run outside the work tree so no `.mailmap` of the project is read
//! ([`quirks::blame_outside_work_tree`]), and refused when the config sets
//! `blame.ignoreRevsFile` (git ignores a command-line reset of it).

use super::super::config_check::{Verdict, IGNORE_REVS_REFUSAL};
use super::super::quirks;
use super::args::{described, ref_message, revision, schema, string, with_path};
use super::args::{named_rev, owned, rev_argument};
use super::row::{GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::Map;
use agentteams_mcp::server::Tool;

pub const GIT_BLAME: &str = "git_blame";
pub const BLAME_NEEDS_PATH: &str = "git_blame needs a path";

pub const TOOL: GitTool = GitTool {
    name: GIT_BLAME,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    revisions: &["rev"],
    empty_note,
    refused_by: Some(refused_by),
    prepare: Some(quirks::blame_outside_work_tree),
    ..GitTool::PLAIN
};

fn declare() -> Tool {
    let properties = [
        (
            "rev",
            rev_argument("The revision of the file, e.g. \"HEAD\"."),
        ),
        (
            "path",
            described("string", "The file, e.g. \"src/main.rs\".", None),
        ),
    ];
    let tool = Tool::read_only(
        GIT_BLAME,
        "Who last changed each line of a file at a revision: commit, author, date, line. Use \
         it to find when and by whom a line was written.",
        schema(&["rev", "path"], properties),
    );
    with_path(
        tool.argument_message("rev", &ref_message("rev"))
            .missing_argument_message("path", BLAME_NEEDS_PATH),
    )
}

fn reference() -> Tool {
    with_path(
        Tool::read_only(
            GIT_BLAME,
            "Line authorship of a file at a revision (never the worktree). Read-only.",
            schema(&["rev", "path"], [("rev", string()), ("path", string())]),
        )
        .argument_message("rev", &ref_message("rev"))
        .missing_argument_message("path", BLAME_NEEDS_PATH),
    )
}

/// The same argv in both modes; the path is checked before the revision.
fn argv(_: Compat, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let path = path.ok_or_else(|| BLAME_NEEDS_PATH.to_owned())?;
    let rev = revision(arguments, "rev")?;
    // No --end-of-options: blame mis-parses `--end-of-options REV -- PATH`; the ref rule's
    // leading-'-' ban is what keeps REV from being an option.
    Ok(owned(&["blame", "--no-textconv", rev, "--", path]))
}

fn refused_by(verdict: &Verdict) -> Option<&'static str> {
    verdict.sets_ignore_revs_file.then_some(IGNORE_REVS_REFUSAL)
}

fn empty_note(arguments: &Map, path: Option<&str>) -> Result<String, String> {
    let rev = named_rev(arguments, "rev");
    Ok(match path {
        Some(path) => format!("(no lines: {path:?} is empty at {rev})"),
        None => "(git printed nothing)".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::args::arguments as args;
    use super::*;

    #[test]
    fn blame_needs_a_path_before_its_revision() {
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"rev":"-x"}"#), None),
            Err(BLAME_NEEDS_PATH.to_owned())
        );
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"rev":"HEAD"}"#), Some("a.txt")),
            Ok(vec![
                "blame".into(),
                "--no-textconv".into(),
                "HEAD".into(),
                "--".into(),
                "a.txt".into()
            ])
        );
    }
}
