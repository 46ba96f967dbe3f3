//! `git_grep` (product only): search the files of a revision for a pattern, returning git's own
//! `REV:path:line:text` lines exactly as it prints them.
//!
//! `git grep --no-color --no-column --no-textconv -I -n --full-name --threads=1
//! --no-recurse-submodules (-E|-F) [-i] --max-count=N -e PATTERN REV -- [PATH]`:
//!
//! - **Only the revision's tree is searched**, never the index or the work tree: REV is always
//!   given and always followed by `--`, so git never takes it for a pathspec (without the `--`,
//!   an argument that is not a revision would become a path and git would search the index and
//!   work tree). REV passed the ref rule ([`args::revision`]): it cannot start with `-`, which is
//!   what keeps it from being an option (git 2.39's grep takes `--end-of-options` for a revision,
//!   so, as for blame, it is not used). git grep at a revision does not read the index, so the
//!   split-index rule does not apply (checked with strace on git 2.39.5 and 2.47.3).
//! - **The pattern is always `-e PATTERN`**, so a pattern starting with `-` is text. It is one
//!   line (no NUL, CR or LF: git splits a pattern on newlines into several) of at most
//!   [`MAX_PATTERN_BYTES`]. The regex flavour is fixed on the command line (`-E`, or `-F` for
//!   fixed strings), which outranks `grep.patternType` and `grep.extendedRegexp`: a repository
//!   setting `grep.patternType=perl` cannot switch on PCRE. A pathological regex is bounded by the
//!   memory limit (`a{32767}{32767}` ends in `Memory exhausted` in well under a second) and the
//!   timeout (a backtracking one).
//! - **No program, no filter**: `--no-textconv`; git grep never runs clean/smudge filters on
//!   objects; `-I` skips binary files; `--no-recurse-submodules` (whatever `submodule.recurse`
//!   says). Output-shaping config is pinned by flags: `--no-color`, `--no-column`
//!   (`grep.column`), `-n` (`grep.lineNumber`), `--full-name` (`grep.fullName`), `--threads=1`
//!   (`grep.threads`); `grep.fallbackToNoIndex` only applies outside a repository, and git always
//!   runs with an explicit `--git-dir`.
//! - **Run from `/`**, outside the work tree (as blame: [`quirks::BLAME_CWD`]): git grep looks up
//!   the `diff` attribute of every file it searches (for `-I`), reading `.gitattributes` relative
//!   to its working directory for every directory of the tree. From the root that was the work
//!   tree's files: a FIFO there blocked git, and a work-tree directory symlinked out made git read
//!   and quote (in warnings) a `.gitattributes` outside the project. From `/`, git does not move
//!   into the work tree (`--work-tree` stays pinned), so it reads nothing of it; the pathspec is
//!   still taken from the top of the tree.
//! - git grep exits 1 when nothing matched: that is an answer ([`NO_MATCH`]), shown as the empty
//!   note.

use super::super::quirks;
use super::args::{self, ref_message, PATH_NOT_RELATIVE};
use super::row::{GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::server::Tool;
use std::process::Command;

pub const GIT_GREP: &str = "git_grep";

pub const TOOL: GitTool = GitTool {
    name: GIT_GREP,
    declare,
    run: Run::Git(argv),
    revisions: &["rev"],
    empty_note,
    prepare: Some(outside_work_tree),
    quiet_exit: Some(NO_MATCH),
    ..GitTool::PLAIN
};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1000;
/// Matches shown per file when `max_per_file` is absent.
pub const DEFAULT_PER_FILE: u64 = 20;
/// Most matches per file a call may ask for.
pub const MAX_PER_FILE: u64 = 1000;
/// git grep's exit status when nothing matched.
pub const NO_MATCH: i32 = 1;

pub const PATTERN_RULE: &str = "pattern must be one line of 1 to 1000 bytes (no newline, \
carriage return or NUL), e.g. \"fn main\"";
pub const PATTERN_MISSING: &str = "git_grep needs a pattern, e.g. \"fn main\"";
pub const PER_FILE_RULE: &str = "max_per_file must be an integer from 1 to 1000, e.g. 5";

/// The pattern under its rule.
fn pattern(arguments: &Map) -> Result<&str, String> {
    let Some(value) = arguments.get("pattern") else {
        return Err(PATTERN_MISSING.to_owned());
    };
    let text = value.as_str().unwrap_or("");
    if text.is_empty() || text.len() > MAX_PATTERN_BYTES || text.contains(['\0', '\n', '\r']) {
        return Err(PATTERN_RULE.to_owned());
    }
    Ok(text)
}

/// The revision searched (absent or null: `HEAD`).
fn rev(arguments: &Map) -> Result<&str, String> {
    match arguments.get("rev") {
        None | Some(Value::Null) => Ok("HEAD"),
        Some(_) => args::revision(arguments, "rev"),
    }
}

/// The subcommand argv of a `git_grep` call; `path` went through [`args::checked_path`].
pub fn argv(_: Compat, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let pattern = pattern(arguments)?;
    let rev = rev(arguments)?;
    let per_file = match arguments.get("max_per_file") {
        None | Some(Value::Null) => DEFAULT_PER_FILE,
        Some(value) => value
            .as_u64()
            .filter(|n| (1..=MAX_PER_FILE).contains(n))
            .ok_or_else(|| PER_FILE_RULE.to_owned())?,
    };
    let ignore_case = args::flag(arguments, "ignore_case")?;
    let fixed = args::flag(arguments, "fixed_strings")?;
    let mut argv: Vec<String> = [
        "grep",
        "--no-color",
        "--no-column",
        "--no-textconv",
        "-I",
        "-n",
        "--full-name",
        "--threads=1",
        "--no-recurse-submodules",
        if fixed { "-F" } else { "-E" },
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    if ignore_case {
        argv.push("-i".to_owned());
    }
    argv.push(format!("--max-count={per_file}"));
    argv.extend(["-e".to_owned(), pattern.to_owned(), rev.to_owned()]);
    argv.push("--".to_owned());
    argv.extend(path.map(str::to_owned));
    Ok(argv)
}

/// Runs the grep outside the work tree (see the module documentation).
pub fn outside_work_tree(command: &mut Command) {
    command.current_dir(quirks::BLAME_CWD);
}

/// The note that answers when nothing matched: pattern and path quoted and escaped (`{:?}`), so
/// the note is one line. git's lines start with the revision, which the ref rule keeps from
/// starting with `(`, so a line starting with `(` is always a note.
pub fn empty_note(arguments: &Map, path: Option<&str>) -> Result<String, String> {
    let pattern = arguments
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or("");
    let rev = rev(arguments).unwrap_or("HEAD");
    let place = match path {
        Some(path) => format!(" in {path:?}"),
        None => String::new(),
    };
    Ok(format!(
        "(no match for {pattern:?} at {rev}{place}; binary files are not searched)"
    ))
}

/// `git_grep`'s declaration (product only).
fn declare() -> Tool {
    let mut per_file = Map::new();
    per_file.insert("type", Value::from("integer"));
    per_file.insert("minimum", Value::from(1u64));
    per_file.insert("maximum", Value::from(MAX_PER_FILE));
    per_file.insert(
        "description",
        Value::from("Most matching lines per file, e.g. 5."),
    );
    per_file.insert("default", Value::from(DEFAULT_PER_FILE));
    let mut pattern = Map::new();
    pattern.insert("type", Value::from("string"));
    pattern.insert("minLength", Value::from(1u64));
    pattern.insert(
        "description",
        Value::from("A regex (grep -E), or text with fixed_strings, e.g. \"TODO|FIXME\"."),
    );
    Tool::read_only(
        GIT_GREP,
        "Search a revision's committed files for a pattern: REV:path:line:text. Use it to \
         find where something is defined or used.",
        obj([
            ("type", Value::from("object")),
            (
                "required",
                Value::Array(vec![Value::from("pattern")].into()),
            ),
            (
                "properties",
                obj([
                    ("pattern", Value::Object(pattern)),
                    (
                        "rev",
                        args::described(
                            "string",
                            "The revision to search, e.g. \"v1.0\".",
                            Some(Value::from("HEAD")),
                        ),
                    ),
                    (
                        "path",
                        args::described(
                            "string",
                            "Only in this file or directory, e.g. \"src\".",
                            Some(Value::Null),
                        ),
                    ),
                    (
                        "ignore_case",
                        args::described(
                            "boolean",
                            "Ignore case, e.g. true.",
                            Some(Value::from(false)),
                        ),
                    ),
                    (
                        "fixed_strings",
                        args::described(
                            "boolean",
                            "The pattern is literal text, e.g. true.",
                            Some(Value::from(false)),
                        ),
                    ),
                    ("max_per_file", Value::Object(per_file)),
                ]),
            ),
        ]),
    )
    .argument_message("pattern", PATTERN_RULE)
    .missing_argument_message("pattern", PATTERN_MISSING)
    .argument_message("rev", &ref_message("rev"))
    .argument_message("path", PATH_NOT_RELATIVE)
    .argument_message(
        "ignore_case",
        "ignore_case must be true or false, e.g. true",
    )
    .argument_message(
        "fixed_strings",
        "fixed_strings must be true or false, e.g. true",
    )
    .argument_message("max_per_file", PER_FILE_RULE)
    .null_means_absent("rev")
    .null_means_absent("path")
    .null_means_absent("ignore_case")
    .null_means_absent("fixed_strings")
    .null_means_absent("max_per_file")
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentteams_mcp::json;

    use super::super::args::arguments as args;

    fn argv(arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
        super::argv(Compat::Product, arguments, path)
    }

    fn empty_note(arguments: &Map, path: Option<&str>) -> String {
        super::empty_note(arguments, path).unwrap_or_default()
    }

    #[test]
    fn grep_argv_searches_the_revision_with_every_setting_pinned() {
        assert_eq!(
            argv(&args(r#"{"pattern":"-x"}"#), None),
            Ok([
                "grep",
                "--no-color",
                "--no-column",
                "--no-textconv",
                "-I",
                "-n",
                "--full-name",
                "--threads=1",
                "--no-recurse-submodules",
                "-E",
                "--max-count=20",
                "-e",
                "-x",
                "HEAD",
                "--",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect())
        );
        let all = argv(
            &args(
                r#"{"pattern":"a.b","rev":"v1.0","ignore_case":true,"fixed_strings":true,"max_per_file":3}"#,
            ),
            Some("src"),
        )
        .unwrap_or_default();
        assert_eq!(
            &all[9..],
            [
                "-F",
                "-i",
                "--max-count=3",
                "-e",
                "a.b",
                "v1.0",
                "--",
                "src"
            ]
        );
        // Null means absent for every optional argument.
        let nulls = argv(
            &args(
                r#"{"pattern":"x","rev":null,"ignore_case":null,"fixed_strings":null,"max_per_file":null}"#,
            ),
            None,
        )
        .unwrap_or_default();
        assert_eq!(
            &nulls[9..],
            ["-E", "--max-count=20", "-e", "x", "HEAD", "--"]
        );
        // Never a Perl regex, never the index or the work tree.
        assert!(!all.iter().any(|a| a == "-P"
            || a.starts_with("--perl")
            || a == "--cached"
            || a == "--no-index"
            || a == "--untracked"));
    }

    #[test]
    fn grep_arguments_follow_their_rules() {
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        let edge = "a".repeat(MAX_PATTERN_BYTES);
        // 334 three-byte characters: 1002 bytes.
        let wide = "\u{20ac}".repeat(334);
        for bad in ["", "a\nb", "a\rb", "a\u{0}b", long.as_str(), wide.as_str()] {
            let arguments = args(&format!(
                r#"{{"pattern":{}}}"#,
                json::to_string(&bad.into())
            ));
            assert_eq!(argv(&arguments, None), Err(PATTERN_RULE.to_owned()));
        }
        assert_eq!(
            argv(&args(r#"{"pattern":5}"#), None),
            Err(PATTERN_RULE.to_owned())
        );
        assert_eq!(argv(&Map::new(), None), Err(PATTERN_MISSING.to_owned()));
        let at_edge = args(&format!(r#"{{"pattern":"{edge}"}}"#));
        assert!(argv(&at_edge, None).is_ok());
        for bad in ["--output=/tmp/x", "-x", "HEAD:../x", "a b", ""] {
            let arguments = args(&format!(
                r#"{{"pattern":"x","rev":{}}}"#,
                json::to_string(&bad.into())
            ));
            assert_eq!(argv(&arguments, None), Err(ref_message("rev")), "{bad}");
        }
        for bad in ["0", "1001", "\"5\"", "2.5", "-1"] {
            let arguments = args(&format!(r#"{{"pattern":"x","max_per_file":{bad}}}"#));
            assert_eq!(
                argv(&arguments, None),
                Err(PER_FILE_RULE.to_owned()),
                "{bad}"
            );
        }
        assert!(argv(&args(r#"{"pattern":"x","max_per_file":1000}"#), None).is_ok());
        assert_eq!(
            argv(&args(r#"{"pattern":"x","ignore_case":"yes"}"#), None),
            Err("ignore_case must be true or false, e.g. true".to_owned())
        );
    }

    #[test]
    fn grep_empty_note_is_one_line_whatever_the_pattern_and_path() {
        let note = empty_note(&args(r#"{"pattern":"a\"b\tc","rev":"v1.0"}"#), Some("d\ne"));
        assert_eq!(
            note,
            r#"(no match for "a\"b\tc" at v1.0 in "d\ne"; binary files are not searched)"#
        );
        assert!(!note.contains('\n'));
        assert_eq!(
            empty_note(&args(r#"{"pattern":"x"}"#), None),
            "(no match for \"x\" at HEAD; binary files are not searched)"
        );
    }
}
