//! `git_refs` (product only): branches and tags, each with the commit it points at and that
//! commit's subject (or names only), from one `git for-each-ref` whose output is returned exactly
//! as git prints it.
//!
//! `git for-each-ref --sort=version:refname --format=FORMAT [--contains=REV] PATTERNS`, where
//! PATTERNS are the server's own (`refs/heads`, `refs/remotes`, `refs/tags`) and
//! REV passed the ref rule ([`args::revision`]), so it is never an option (it cannot start with
//! `-`) and is glued to `--contains=` anyway. No ref name git reads back is ever put in an argv
//! (GIT-THREATS.md I2). Sorting by `version:refname` keeps the kinds in groups (`refs/heads` <
//! `refs/remotes` < `refs/tags`) and orders numbers by value inside names (`v1.2` before `v1.10`,
//! `feature-2` before `feature-10`). for-each-ref reads refs and objects only: never the work
//! tree, never the index, no attributes, no program.

use super::args::{self, ref_message};
use super::row::{GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::server::Tool;

pub const GIT_REFS: &str = "git_refs";

pub const TOOL: GitTool = GitTool {
    name: GIT_REFS,
    declare,
    run: Run::Git(argv),
    revisions: &["contains"],
    empty_note,
    ..GitTool::PLAIN
};

pub const KIND_RULE: &str = "kind must be \"branch\", \"remote\", \"tag\" or \"all\", e.g. \"tag\"";

/// Which refs a `kind` lists.
const KINDS: [(&str, &[&str]); 4] = [
    ("branch", &["refs/heads"]),
    ("remote", &["refs/remotes"]),
    ("tag", &["refs/tags"]),
    ("all", &["refs/heads", "refs/remotes", "refs/tags"]),
];

/// One line per ref: `* ` before the branch HEAD is on and nothing before any other ref (the
/// fewest bytes that still mark it), the short name, a tab, the commit (an annotated tag peeled to what it tags)
/// abbreviated to at least 12 hex digits, a tab, that commit's subject. `%(*...)` is empty for
/// anything but an annotated tag.
pub const FORMAT: &str = "--format=%(if)%(HEAD)%(then)* %(end)%(refname:short)%09\
%(if)%(*objectname)%(then)%(*objectname:short=12)%(else)%(objectname:short=12)%(end)%09\
%(if)%(*objectname)%(then)%(*subject)%(else)%(subject)%(end)";

/// One line per ref, the mark and the name alone (`names_only`).
pub const NAMES_FORMAT: &str = "--format=%(if)%(HEAD)%(then)* %(end)%(refname:short)";

/// The `kind` argument (absent or null: `all`).
fn kind(arguments: &Map) -> Result<&'static str, String> {
    let value = match arguments.get("kind") {
        None | Some(Value::Null) => "all",
        Some(value) => value.as_str().unwrap_or(""),
    };
    KINDS
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(name, _)| *name)
        .ok_or_else(|| KIND_RULE.to_owned())
}

/// The `contains` argument under the ref rule (absent or null: none).
fn contains(arguments: &Map) -> Result<Option<&str>, String> {
    match arguments.get("contains") {
        None | Some(Value::Null) => Ok(None),
        Some(_) => args::revision(arguments, "contains").map(Some),
    }
}

/// The subcommand argv of a `git_refs` call (product only; it takes no path).
pub fn argv(_: Compat, arguments: &Map, _: Option<&str>) -> Result<Vec<String>, String> {
    let kind = kind(arguments)?;
    let contains = contains(arguments)?;
    let format = if args::flag(arguments, "names_only")? {
        NAMES_FORMAT
    } else {
        FORMAT
    };
    let mut argv = vec![
        "for-each-ref".to_owned(),
        "--sort=version:refname".to_owned(),
        format.to_owned(),
    ];
    if let Some(rev) = contains {
        argv.push(format!("--contains={rev}"));
    }
    let patterns = KINDS
        .iter()
        .find(|(name, _)| *name == kind)
        .map(|(_, patterns)| *patterns)
        .unwrap_or_default();
    argv.extend(patterns.iter().map(|p| (*p).to_owned()));
    Ok(argv)
}

/// The note that answers in place of an empty listing.
pub fn empty_note(arguments: &Map, _: Option<&str>) -> Result<String, String> {
    let kind = kind(arguments).unwrap_or("all");
    let (one, many) = match kind {
        "branch" => ("branch", "branches"),
        "remote" => ("remote-tracking branch", "remote-tracking branches"),
        "tag" => ("tag", "tags"),
        _ => ("branch or tag", "branches or tags"),
    };
    Ok(match contains(arguments).ok().flatten() {
        Some(rev) => format!("(no refs: no {one} contains {rev})"),
        None => format!("(no refs: the repository has no {many})"),
    })
}

/// `git_refs`'s declaration (product only).
fn declare() -> Tool {
    let kind = obj([
        ("type", Value::from("string")),
        (
            "enum",
            Value::Array(KINDS.iter().map(|(name, _)| Value::from(*name)).collect()),
        ),
        (
            "description",
            Value::from(
                "Which refs: local branches, remote-tracking ones, tags or all, e.g. \"tag\".",
            ),
        ),
        ("default", Value::from("all")),
    ]);
    let contains = obj([
        ("type", Value::from("string")),
        (
            "description",
            Value::from("Only refs that contain this commit, e.g. \"3f2a9c1\"."),
        ),
        ("default", Value::Null),
    ]);
    let names = obj([
        ("type", Value::from("boolean")),
        (
            "description",
            Value::from("Names only, without commits and subjects, e.g. true."),
        ),
        ("default", Value::from(false)),
    ]);
    Tool::read_only(
        GIT_REFS,
        "List branches and tags: name (\"* \" marks HEAD's), commit, subject. Use it to see \
         which branches and releases exist or contain a commit.",
        obj([
            ("type", Value::from("object")),
            (
                "properties",
                obj([
                    ("kind", kind),
                    ("contains", contains),
                    ("names_only", names),
                ]),
            ),
        ]),
    )
    .argument_message("kind", KIND_RULE)
    .argument_message("contains", &ref_message("contains"))
    .argument_message("names_only", &args::flag_rule("names_only"))
    .null_means_absent("kind")
    .null_means_absent("contains")
    .null_means_absent("names_only")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json;

    use super::super::args::arguments as args;

    fn argv(arguments: &Map) -> Result<Vec<String>, String> {
        super::argv(Compat::Product, arguments, None)
    }

    fn empty_note(arguments: &Map) -> String {
        super::empty_note(arguments, None).unwrap_or_default()
    }

    #[test]
    fn refs_argv_lists_the_kind_sorted_by_version_with_contains_glued() {
        let all = argv(&Map::new()).unwrap_or_default();
        assert_eq!(
            all,
            [
                "for-each-ref",
                "--sort=version:refname",
                FORMAT,
                "refs/heads",
                "refs/remotes",
                "refs/tags"
            ]
        );
        let tags = argv(&args(r#"{"kind":"tag","contains":"HEAD~1"}"#)).unwrap_or_default();
        assert_eq!(&tags[3..], ["--contains=HEAD~1", "refs/tags"]);
        let branches = argv(&args(r#"{"kind":"branch","contains":null}"#)).unwrap_or_default();
        assert_eq!(&branches[3..], ["refs/heads"]);
        let remotes = argv(&args(r#"{"kind":"remote","names_only":true}"#)).unwrap_or_default();
        assert_eq!(&remotes[2..], [NAMES_FORMAT, "refs/remotes"]);
    }

    #[test]
    fn refs_arguments_follow_their_rules() {
        for bad in [r#"{"kind":"tags"}"#, r#"{"kind":1}"#, r#"{"kind":""}"#] {
            assert_eq!(argv(&args(bad)), Err(KIND_RULE.to_owned()), "{bad}");
        }
        for bad in [r#"{"names_only":"yes"}"#, r#"{"names_only":1}"#] {
            assert_eq!(
                argv(&args(bad)),
                Err(args::flag_rule("names_only")),
                "{bad}"
            );
        }
        for bad in [
            "--output=/tmp/x",
            "-x",
            "HEAD:../x",
            "a b",
            "",
            "HEAD^{/.{32767}{32767}}",
        ] {
            let arguments = args(&format!(
                r#"{{"contains":{}}}"#,
                json::to_string(&bad.into())
            ));
            let refused = argv(&arguments);
            assert!(refused.is_err(), "{bad}");
            assert!(
                refused.unwrap_err().starts_with("contains"),
                "{bad} names its argument"
            );
        }
    }

    #[test]
    fn refs_empty_notes_say_why_in_one_line() {
        assert_eq!(
            empty_note(&Map::new()),
            "(no refs: the repository has no branches or tags)"
        );
        assert_eq!(
            empty_note(&args(r#"{"kind":"tag","contains":"abc123"}"#)),
            "(no refs: no tag contains abc123)"
        );
        assert_eq!(
            empty_note(&args(r#"{"kind":"branch"}"#)),
            "(no refs: the repository has no branches)"
        );
        assert_eq!(
            empty_note(&args(r#"{"kind":"remote","contains":"HEAD"}"#)),
            "(no refs: no remote-tracking branch contains HEAD)"
        );
        assert_eq!(
            empty_note(&args(r#"{"contains":"v1.0"}"#)),
            "(no refs: no branch or tag contains v1.0)"
        );
    }
}
