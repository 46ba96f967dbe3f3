//! `git_show`: one commit in full (metadata, stat, patch); with `stat` (product) its header and
//! the files it changed, without the patch.

use super::args::{end_with, flag_rule, named_rev, owned, rev_argument};
use super::args::{path_argument, ref_message, revision, schema, string, with_path};
use super::row::{GitTool, Run};
use super::{log_args, mistakes};
use crate::compat::Compat;
use agentteams_mcp::json::Map;
use agentteams_mcp::server::Tool;

pub const GIT_SHOW: &str = "git_show";

pub const TOOL: GitTool = GitTool {
    name: GIT_SHOW,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    revisions: &["rev"],
    empty_note,
    ..GitTool::PLAIN
};

fn declare() -> Tool {
    let properties = [
        (
            "rev",
            rev_argument("The commit, e.g. \"HEAD~2\" or \"3f2a9c1\"."),
        ),
        ("path", path_argument("the changes to")),
        log_args::stat_property(),
    ];
    let tool = Tool::read_only(
        GIT_SHOW,
        "Show one commit: header, message, changed files, patch. Use it on a commit git_log \
         found.",
        schema(&["rev"], properties),
    );
    with_path(tool.argument_message("rev", &ref_message("rev")))
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

fn empty_note(arguments: &Map, path: Option<&str>) -> Result<String, String> {
    let rev = named_rev(arguments, "rev");
    Ok(match path {
        Some(path) => format!(
            "(nothing to show: {rev} does not change {path:?}; git_show without path shows the \
             whole commit)"
        ),
        None if mistakes::is_range(rev) => return Err(mistakes::empty_range("rev", rev)),
        None => format!("(nothing to show: {rev} is an empty object)"),
    })
}
