//! `git_show`: one commit in full (metadata, stat, patch); with `stat` (product) its header and
//! the files it changed, without the patch.

use super::args::{described, path_argument, ref_message, revision, schema, string, with_path};
use super::args::{end_with, flag_rule, named_rev, owned, ANSWER, REVISION};
use super::{log_args, GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::Map;
use agentteams_mcp::server::Tool;

pub const GIT_SHOW: &str = "git_show";

pub const TOOL: GitTool = GitTool {
    name: GIT_SHOW,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    empty_note,
    ..GitTool::PLAIN
};

fn declare() -> Tool {
    with_path(
        Tool::read_only(
            GIT_SHOW,
            &format!(
                "Show one commit in full: hash, author, committer, dates and message, then \
                 the files it changed with line counts, then its patch. Use it after git_log \
                 to see what a commit did; path limits the stat and patch to one file or \
                 directory. {ANSWER}"
            ),
            schema(
                &["rev"],
                [
                    (
                        "rev",
                        described(
                            "string",
                            &format!(
                                "The commit to show: a hash, branch, tag or relative name, \
                                 e.g. \"HEAD\", \"HEAD~2\", \"v1.0\" or \"3f2a9c1\". {REVISION}"
                            ),
                            None,
                        ),
                    ),
                    ("path", path_argument("Only the changes of the commit to")),
                    log_args::stat_property("the commit's header, then only the files it changed"),
                ],
            ),
        )
        .argument_message("rev", &ref_message("rev")),
    )
    .argument_message("stat", &flag_rule("stat"))
    .null_means_absent("stat")
}

fn reference() -> Tool {
    with_path(
        Tool::read_only(
            GIT_SHOW,
            "One commit: metadata, stat and patch. Read-only.",
            schema(&["rev"], [("rev", string()), ("path", string())]),
        )
        .argument_message("rev", &ref_message("rev")),
    )
}

/// The reference's argv, or in the product with `stat: true` the header and the files changed.
fn argv(compat: Compat, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let rev = revision(arguments, "rev")?;
    let argv = if compat == Compat::Product && log_args::stat(arguments)? {
        let mut argv = owned(&["show", "--no-color", "--no-ext-diff"]);
        argv.extend(owned(&log_args::STAT_ARGS));
        // `--date=default`: the dates `--format=fuller` prints, whatever `log.date` says.
        argv.extend(owned(&["--format=fuller", "--date=default"]));
        argv
    } else {
        owned(&[
            "show",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--stat",
            "--patch",
            "--format=fuller",
        ])
    };
    Ok(end_with(argv, rev, path))
}

fn empty_note(arguments: &Map, path: Option<&str>) -> String {
    let rev = named_rev(arguments, "rev");
    match path {
        Some(path) => format!(
            "(nothing to show: {rev} does not change {path:?}; git_show without path shows the \
             whole commit)"
        ),
        None => format!("(nothing to show: {rev} is an empty range or an empty object)"),
    }
}
