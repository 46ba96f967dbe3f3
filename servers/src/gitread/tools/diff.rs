//! `git_diff`: the unified diff of committed content from `base` to `head` (never the work
//! tree); with `stat` (product) only the files that differ and their line counts.
//!
//! The revisions always end with `--`: with exactly two arguments after the options, git diff
//! silently switches to `--no-index` when either names a path outside the repository
//! (`/etc/passwd`), and the ref rule admits such text.

use super::args::{flag_rule, named_rev, owned, rev_argument};
use super::args::{path_argument, ref_message, revision, schema, string, with_path};
use super::log_args;
use super::row::{GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::Map;
use agentteams_mcp::server::Tool;

pub const GIT_DIFF: &str = "git_diff";

pub const TOOL: GitTool = GitTool {
    name: GIT_DIFF,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    revisions: &["base", "head"],
    empty_note,
    ..GitTool::PLAIN
};

fn declare() -> Tool {
    let properties = [
        ("base", rev_argument("The old side, e.g. \"v1.0\".")),
        ("head", rev_argument("The new side, e.g. \"HEAD\".")),
        ("path", path_argument("the differences in")),
        log_args::stat_property(),
    ];
    let tool = Tool::read_only(
        GIT_DIFF,
        "Diff two revisions' committed content, base to head (never the work tree). Use it to \
         see what changed between commits, branches or releases.",
        schema(&["base", "head"], properties),
    );
    let tool = tool
        .argument_message("base", &ref_message("base"))
        .argument_message("head", &ref_message("head"));
    with_path(tool)
        .argument_message("stat", &flag_rule("stat"))
        .null_means_absent("stat")
}

fn reference() -> Tool {
    with_path(
        Tool::read_only(
            GIT_DIFF,
            "Diff between two revisions (never the worktree). Read-only.",
            schema(
                &["base", "head"],
                [("base", string()), ("head", string()), ("path", string())],
            ),
        )
        .argument_message("base", &ref_message("base"))
        .argument_message("head", &ref_message("head")),
    )
}

/// The reference's argv (with the closing `--`), or in the product with `stat: true` the files
/// and line counts.
fn argv(compat: Compat, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let base = revision(arguments, "base")?;
    let head = revision(arguments, "head")?;
    let mut argv = owned(&["diff", "--no-color", "--no-ext-diff"]);
    if compat == Compat::Product && log_args::stat(arguments)? {
        argv.push("--ignore-submodules=all".to_owned());
        argv.extend(owned(&log_args::STAT_ARGS));
    } else {
        argv.extend(owned(&["--no-textconv", "--ignore-submodules=all"]));
    }
    argv.extend(owned(&["--end-of-options", base, head, "--"]));
    argv.extend(path.map(str::to_owned));
    Ok(argv)
}

fn empty_note(arguments: &Map, path: Option<&str>) -> Result<String, String> {
    let (base, head) = (named_rev(arguments, "base"), named_rev(arguments, "head"));
    Ok(match path {
        Some(path) => format!("(no differences between {base} and {head} in {path:?})"),
        None => format!("(no differences between {base} and {head})"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::args::arguments as args;
    use super::*;

    /// Every case's exact line is pinned through the binary (gitread_reference.rs); here, that a
    /// client's path cannot break the one line.
    #[test]
    fn an_empty_answers_note_stays_one_line_whatever_the_path() {
        let arguments = args(r#"{"base":"HEAD~1","head":"HEAD"}"#);
        let line = empty_note(&arguments, Some("a\nb\"c)")).unwrap_or_default();
        assert_eq!(
            line,
            r#"(no differences between HEAD~1 and HEAD in "a\nb\"c)")"#
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn diff_always_closes_its_revisions_with_a_double_dash() {
        let got = argv(
            Compat::Reference,
            &args(r#"{"base":"/etc/passwd","head":"/tmp/x"}"#),
            None,
        )
        .unwrap_or_default();
        assert_eq!(got.last().map(String::as_str), Some("--"));
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"base":"HEAD"}"#), None),
            Err(ref_message("head"))
        );
    }
}
