//! `git_log`: commits, newest first. Under `--compat reference` the reference's argv and
//! tab-separated format; in the product one line per commit with parents, date, author and refs,
//! the filters of [`log_args`] (author, message, dates, skip, stat) and a note naming them when
//! nothing matches.

use super::args::{described, path_argument, ref_message, revision, schema, string, with_path};
use super::args::{end_with, named_rev, owned};
use super::row::{GitTool, Run};
use super::{log_args, mistakes};
use crate::compat::Compat;
use agentteams_mcp::json::{Map, Value};
use agentteams_mcp::server::Tool;

pub const GIT_LOG: &str = "git_log";
/// Most commits `git_log` returns (the reference's `MAX_LOG`).
pub const MAX_LOG: u64 = 200;
/// Commits `git_log` returns when `n` is absent.
pub const DEFAULT_LOG: u64 = 20;
pub const N_RANGE: &str = "n must be an integer from 1 to 200";

pub const TOOL: GitTool = GitTool {
    name: GIT_LOG,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    revisions: &["rev"],
    empty_note,
    ..GitTool::PLAIN
};

/// `git_log`'s `n` as the reference declares it: an integer from 1 to [`MAX_LOG`].
fn log_count() -> Map {
    let mut n = Map::new();
    n.insert("type", Value::from("integer"));
    n.insert("minimum", Value::from(1u64));
    n.insert("maximum", Value::from(MAX_LOG));
    n
}

/// The product's declaration, with the rules of its product-only arguments.
fn declare() -> Tool {
    let mut n = log_count();
    n.insert("description", Value::from("Most commits to list, e.g. 5."));
    n.insert("default", Value::from(DEFAULT_LOG));
    let [author, since, until, grep, skip, stat] = log_args::log_properties();
    let rev = described(
        "string",
        "A branch, tag, commit or range, e.g. \"v1.0..main\".",
        Some(Value::from("HEAD")),
    );
    let properties = [
        ("rev", rev),
        ("n", Value::Object(n)),
        ("path", path_argument("commits changing")),
        author,
        since,
        until,
        grep,
        skip,
        stat,
    ];
    let tool = Tool::read_only(
        GIT_LOG,
        "List commits, newest first: hash, parents, date, author, refs, subject. Use it for the \
         commits behind a change, a file's history (path), a branch or range (rev).",
        schema(&[], properties),
    )
    .argument_message("rev", &ref_message("rev"))
    .argument_message("n", N_RANGE);
    (log_args::log_messages().into_iter()).fold(with_path(tool), |tool, (field, message)| {
        tool.argument_message(field, &message)
            .null_means_absent(field)
    })
}

/// The reference's declaration.
fn reference() -> Tool {
    let n = Value::Object(log_count());
    with_path(
        Tool::read_only(
            GIT_LOG,
            "Commit history (hash, author, date, subject). Read-only.",
            schema(&[], [("rev", string()), ("n", n), ("path", string())]),
        )
        .argument_message("rev", &ref_message("rev"))
        .argument_message("n", N_RANGE),
    )
}

/// `git_log`'s `n`: [`DEFAULT_LOG`] when absent, else 1 to [`MAX_LOG`].
fn log_count_argument(arguments: &Map) -> Result<u64, String> {
    match arguments.get("n") {
        None => Ok(DEFAULT_LOG),
        Some(value) => value
            .as_u64()
            .filter(|n| (1..=MAX_LOG).contains(n))
            .ok_or_else(|| N_RANGE.to_owned()),
    }
}

/// `git_log`'s `rev`: `HEAD` when absent, else a revision under the ref rule.
fn log_revision(arguments: &Map) -> Result<&str, String> {
    match arguments.get("rev") {
        None => Ok("HEAD"),
        Some(_) => revision(arguments, "rev"),
    }
}

/// The argv of a call: the reference's exactly under [`Compat::Reference`] (the product's
/// arguments ignored, as the reference ignores any it does not declare), else the product's line
/// format with its filters before `--end-of-options`.
fn argv(compat: Compat, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let n = log_count_argument(arguments)?;
    let rev = log_revision(arguments)?;
    let argv = match compat {
        Compat::Reference => {
            let mut argv = owned(&["log", "--no-color", "--no-ext-diff"]);
            argv.push(format!("-n{n}"));
            argv.extend(owned(&[
                "--date=iso-strict",
                "--format=%H%x09%an%x09%ad%x09%s",
            ]));
            argv
        }
        Compat::Product => log_args::log_argv(n, &log_args::log_filters(arguments)?),
    };
    Ok(end_with(argv, rev, path))
}

fn empty_note(arguments: &Map, path: Option<&str>) -> Result<String, String> {
    let rev = named_rev(arguments, "rev");
    let filters = log_args::log_filters(arguments).unwrap_or_default();
    let (asked, skip) = (
        log_args::filter_words(&filters),
        log_args::skip_words(&filters),
    );
    Ok(match path {
        Some(path) => format!("(no commits: no commit in {rev} changes {path:?}{asked}{skip})"),
        None if asked.is_empty() && skip.is_empty() && mistakes::is_range(rev) => {
            return Err(mistakes::empty_range("rev", rev))
        }
        None if asked.is_empty() => format!("(no commits: {rev} selects no commits{skip})"),
        None => format!("(no commits: no commit in {rev}{asked}{skip})"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::args::arguments as args;
    use super::*;

    #[test]
    fn log_argv_is_the_reference_one() {
        let got = argv(Compat::Reference, &args(r#"{"n":5}"#), Some("a.txt"));
        assert_eq!(
            got,
            Ok(vec![
                "log".into(),
                "--no-color".into(),
                "--no-ext-diff".into(),
                "-n5".into(),
                "--date=iso-strict".into(),
                "--format=%H%x09%an%x09%ad%x09%s".into(),
                "--end-of-options".into(),
                "HEAD".into(),
                "--".into(),
                "a.txt".into(),
            ])
        );
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"n":201}"#), None),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"n":"5"}"#), None),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            argv(Compat::Reference, &args(r#"{"rev":null}"#), None),
            Err(ref_message("rev"))
        );
    }

    #[test]
    fn product_log_argv_has_the_line_format_and_the_filters_before_end_of_options() {
        let got = argv(
            Compat::Product,
            &args(r#"{"n":5,"rev":"main","author":"-x","skip":2}"#),
            Some("a.txt"),
        )
        .unwrap_or_default();
        assert_eq!(
            got,
            [
                "log",
                "--no-color",
                "--no-ext-diff",
                "--no-show-signature",
                "-n5",
                "--skip=2",
                "--no-follow",
                "--date=short",
                "--format=%h% p %ad %an%d: %s",
                "--decorate-refs=refs/heads/",
                "--decorate-refs=refs/tags/",
                "--decorate-refs=HEAD",
                "--extended-regexp",
                "--author=-x",
                "--end-of-options",
                "main",
                "--",
                "a.txt",
            ]
        );
        // The reference's rules come first, with their messages.
        assert_eq!(
            argv(Compat::Product, &args(r#"{"n":0,"skip":-1}"#), None),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            argv(Compat::Product, &args(r#"{"skip":-1}"#), None),
            Err(log_args::skip_rule())
        );
    }

    #[test]
    fn a_filtered_logs_empty_note_says_what_was_asked_in_one_line() {
        let note = |a: &str, path: Option<&str>| empty_note(&args(a), path).unwrap_or_else(|e| e);
        assert_eq!(
            note(r#"{"author":"x","since":"2 weeks ago"}"#, None),
            r#"(no commits: no commit in HEAD by author "x" since "2 weeks ago")"#
        );
        assert_eq!(
            note(
                r#"{"rev":"v1.0","grep":"a\"b","until":"2024-01-01"}"#,
                Some("a.txt")
            ),
            r#"(no commits: no commit in v1.0 changes "a.txt" with a message matching "a\"b" until "2024-01-01")"#
        );
        assert_eq!(
            note(r#"{"skip":7}"#, None),
            "(no commits: HEAD selects no commits after the first 7)"
        );
        assert_eq!(
            note(r#"{"author":"","skip":0}"#, None),
            "(no commits: HEAD selects no commits)"
        );
    }
}
