//! The product's additions to `git_log`, `git_diff` and `git_show` (never under `--compat
//! reference`): `git_log`'s filters (`author`, `since`, `until`, `grep`, `skip`), its line format
//! with refs and parents, and `stat` on all three; their declarations, rules, argv and the words
//! of the empty-answer note.
//!
//! Every value a client gives is one argv element glued to its option (`--author=VALUE`), so git
//! can never read it as an option of its own; control characters are refused so a value is one
//! line. Patterns are extended regexes whatever the repository's `grep.patternType` or
//! `grep.extendedRegexp` say (`--extended-regexp` on the command line wins over config), so a
//! repository cannot switch them to perl. A pattern git cannot compile, or one whose program would
//! take gigabytes, ends in git's error or the memory limit and the timeout, like every call.

use super::args;
use agentteams_mcp::json::{Map, Value};

/// Longest `author` or `grep` pattern, in characters (as [`super::args::MAX_REV_LEN`]).
pub const MAX_PATTERN_LEN: usize = 200;
/// Longest `since` or `until` date, in characters.
pub const MAX_DATE_LEN: usize = 64;
/// Most commits `skip` may pass over.
pub const MAX_SKIP: u64 = 1_000_000;

/// The product's `git_log` line: short hash, the parents' short hashes (two for a merge, none for
/// a root commit: git's `--parents` convention), the author date as `YYYY-MM-DD`, the author, the
/// branches and tags pointing at the commit in parentheses, then `: ` and the subject. Every byte
/// is git's own (no post-processing), so byte offsets into git's stdout are offsets into the
/// answer.
pub const LOG_FORMAT: &str = "--format=%h% p %ad %an%d: %s";

/// Decorations are limited to branches, tags and `HEAD` (shown as `HEAD -> main`): no remote,
/// replace, note or stash refs, whatever `log.excludeDecoration` or `log.initialDecorationSet`
/// say (command-line `--decorate-refs` overrides both).
const DECORATE_REFS: [&str; 3] = [
    "--decorate-refs=refs/heads/",
    "--decorate-refs=refs/tags/",
    "--decorate-refs=HEAD",
];

/// `stat: true`: per file `added<TAB>deleted<TAB>path` (binary files `-`), one summary line, then
/// created, deleted and renamed files and mode changes. No width: no path is ever shortened, no
/// padding, no `+++---` bar. `--no-textconv` because a diff is computed (git's stat does not run
/// textconv today; the flag keeps it so).
pub const STAT_ARGS: [&str; 4] = ["--no-textconv", "--numstat", "--shortstat", "--summary"];

/// The rule of a pattern argument (`author`, `grep`).
pub fn pattern_rule(field: &str) -> String {
    format!(
        "{field} must be one line of at most {MAX_PATTERN_LEN} characters (an extended regex; \
         no NUL, newline or other control character)"
    )
}

/// The rule of a date argument (`since`, `until`).
pub fn date_rule(field: &str) -> String {
    format!(
        "{field} must be a date such as \"2 weeks ago\", \"yesterday\" or \"2026-01-31\": at \
         most {MAX_DATE_LEN} letters, digits, spaces and -+:.,/@_"
    )
}

pub fn skip_rule() -> String {
    format!("skip must be an integer from 0 to {MAX_SKIP}")
}

/// `git_log`'s product-only filters, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogFilters<'a> {
    pub author: Option<&'a str>,
    pub grep: Option<&'a str>,
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub skip: u64,
    pub stat: bool,
}

impl<'a> LogFilters<'a> {
    /// The text filters in the order git is given them: each one's option (its value glued on)
    /// and its words for the empty-answer note, with its value if it was asked for.
    fn text_filters(&self) -> [(&'static str, &'static str, Option<&'a str>); 4] {
        [
            ("--author=", "by author", self.author),
            ("--grep=", "with a message matching", self.grep),
            ("--since=", "since", self.since),
            ("--until=", "until", self.until),
        ]
    }
}

/// A string argument: absent, null or empty means not given; else it must be a string that
/// `valid` accepts.
fn text<'a>(
    arguments: &'a Map,
    field: &str,
    valid: impl Fn(&str) -> bool,
    rule: impl Fn(&str) -> String,
) -> Result<Option<&'a str>, String> {
    match arguments.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) if valid(s) => Ok(Some(s.as_str())),
        Some(_) => Err(rule(field)),
    }
}

fn is_pattern(value: &str) -> bool {
    value.chars().count() <= MAX_PATTERN_LEN && !value.chars().any(char::is_control)
}

fn is_date(value: &str) -> bool {
    value.len() <= MAX_DATE_LEN
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " -+:.,/@_".contains(c))
}

/// `stat`: absent or null is false.
pub fn stat(arguments: &Map) -> Result<bool, String> {
    args::flag(arguments, "stat")
}

/// `git_log`'s filters from `arguments`, or the rule the first bad one breaks.
pub fn log_filters(arguments: &Map) -> Result<LogFilters<'_>, String> {
    let skip = match arguments.get("skip") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_u64()
            .filter(|n| *n <= MAX_SKIP)
            .ok_or_else(skip_rule)?,
    };
    Ok(LogFilters {
        author: text(arguments, "author", is_pattern, pattern_rule)?,
        grep: text(arguments, "grep", is_pattern, pattern_rule)?,
        since: text(arguments, "since", is_date, date_rule)?,
        until: text(arguments, "until", is_date, date_rule)?,
        skip,
        stat: stat(arguments)?,
    })
}

/// The product's `git log` argv up to `--end-of-options`: the reference's hardening flags, `n`,
/// the line format, and each filter glued to its option.
pub fn log_argv(n: u64, filters: &LogFilters<'_>) -> Vec<String> {
    let mut argv: Vec<String> = ["log", "--no-color", "--no-ext-diff", "--no-show-signature"]
        .map(str::to_owned)
        .to_vec();
    argv.push(format!("-n{n}"));
    if filters.skip > 0 {
        argv.push(format!("--skip={}", filters.skip));
    }
    // `log.follow` would turn a path into --follow (rename tracking, which --skip and merges
    // mislead); the answer is the history of the path as named.
    argv.push("--no-follow".to_owned());
    argv.push("--date=short".to_owned());
    argv.push(LOG_FORMAT.to_owned());
    argv.extend(DECORATE_REFS.map(str::to_owned));
    if filters.author.is_some() || filters.grep.is_some() {
        argv.push("--extended-regexp".to_owned());
    }
    for (option, _, value) in filters.text_filters() {
        if let Some(value) = value {
            argv.push(format!("{option}{value}"));
        }
    }
    if filters.stat {
        // The root commit's files too, whatever `log.showRoot` says.
        argv.push("--root".to_owned());
        argv.extend(STAT_ARGS.map(str::to_owned));
    }
    argv
}

/// What the filters asked for, in words for the empty-answer note: ` by author "x" with a message
/// matching "y" since "2 weeks ago" until "2026-01-31"` (values quoted and escaped with `{:?}`),
/// and whether anything was asked. `skip` is worded by [`skip_words`].
pub fn filter_words(filters: &LogFilters<'_>) -> String {
    let mut words = String::new();
    for (_, label, value) in filters.text_filters() {
        if let Some(value) = value {
            words.push_str(&format!(" {label} {value:?}"));
        }
    }
    words
}

/// ` after the first N` when `skip` passed over commits, else nothing.
pub fn skip_words(filters: &LogFilters<'_>) -> String {
    match filters.skip {
        0 => String::new(),
        n => format!(" after the first {n}"),
    }
}

/// A described optional argument of `kind` with `default`, plus `extra` schema keywords.
fn optional<const N: usize>(
    kind: &str,
    description: &str,
    default: Value,
    extra: [(&str, Value); N],
) -> Value {
    let mut schema = Map::new();
    schema.insert("type", Value::from(kind));
    for (key, value) in extra {
        schema.insert(key, value);
    }
    schema.insert("description", Value::from(description));
    schema.insert("default", default);
    Value::Object(schema)
}

/// The `stat` argument of `tool_use` ("Files and line counts only ...").
pub fn stat_property() -> (&'static str, Value) {
    let description = "Changed files instead of the patch, e.g. true.";
    (
        "stat",
        optional("boolean", description, Value::from(false), []),
    )
}

/// `git_log`'s product-only arguments, in declaration order.
pub fn log_properties() -> [(&'static str, Value); 6] {
    let text = |description: &str, limit: usize| {
        let limit = [("maxLength", Value::from(limit as u64))];
        optional("string", description, Value::Null, limit)
    };
    let skip = [
        ("minimum", Value::from(0u64)),
        ("maximum", Value::from(MAX_SKIP)),
    ];
    [
        (
            "author",
            text(
                "Regex on \"Name <email>\", e.g. \"Alice\".",
                MAX_PATTERN_LEN,
            ),
        ),
        (
            "since",
            text("Committed on or after, e.g. \"2 weeks ago\".", MAX_DATE_LEN),
        ),
        (
            "until",
            text("Committed on or before, e.g. \"2026-01-31\".", MAX_DATE_LEN),
        ),
        (
            "grep",
            text("Regex on the message, e.g. \"^Revert\".", MAX_PATTERN_LEN),
        ),
        (
            "skip",
            optional(
                "integer",
                "Commits to pass over, e.g. 20.",
                Value::from(0u64),
                skip,
            ),
        ),
        (
            "stat",
            optional(
                "boolean",
                "Add each commit's changed files, e.g. true.",
                Value::from(false),
                [],
            ),
        ),
    ]
}

/// The argument messages of `git_log`'s product-only arguments.
pub fn log_messages() -> [(&'static str, String); 6] {
    [
        ("author", pattern_rule("author")),
        ("since", date_rule("since")),
        ("until", date_rule("until")),
        ("grep", pattern_rule("grep")),
        ("skip", skip_rule()),
        ("stat", args::flag_rule("stat")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::args::arguments as args;

    #[test]
    fn no_filter_gives_the_product_line_format_only() {
        let none = Map::new();
        let filters = log_filters(&none).unwrap_or_default();
        assert_eq!(filters, LogFilters::default());
        assert_eq!(
            log_argv(20, &filters),
            [
                "log",
                "--no-color",
                "--no-ext-diff",
                "--no-show-signature",
                "-n20",
                "--no-follow",
                "--date=short",
                "--format=%h% p %ad %an%d: %s",
                "--decorate-refs=refs/heads/",
                "--decorate-refs=refs/tags/",
                "--decorate-refs=HEAD",
            ]
        );
    }

    #[test]
    fn every_value_is_glued_to_its_option() {
        let a = args(
            r#"{"author":"--output=/tmp/x","grep":"-P","since":"2 weeks ago","until":"2026-01-31","skip":5,"stat":true}"#,
        );
        let filters = log_filters(&a).unwrap_or_default();
        let argv = log_argv(3, &filters);
        assert_eq!(
            argv[12..],
            [
                "--extended-regexp",
                "--author=--output=/tmp/x",
                "--grep=-P",
                "--since=2 weeks ago",
                "--until=2026-01-31",
                "--root",
                "--no-textconv",
                "--numstat",
                "--shortstat",
                "--summary",
            ]
        );
        assert!(argv.contains(&"--skip=5".to_owned()));
        // Nothing the client gave stands alone as an argv element.
        for given in ["--output=/tmp/x", "-P", "2 weeks ago", "2026-01-31"] {
            assert!(!argv.iter().any(|a| a == given), "{given}");
        }
        assert_eq!(
            filter_words(&filters),
            r#" by author "--output=/tmp/x" with a message matching "-P" since "2 weeks ago" until "2026-01-31""#
        );
        assert_eq!(skip_words(&filters), " after the first 5");
    }

    #[test]
    fn empty_and_null_values_mean_no_filter() {
        let a =
            args(r#"{"author":"","grep":null,"since":"","until":null,"skip":null,"stat":null}"#);
        assert_eq!(log_filters(&a), Ok(LogFilters::default()));
    }

    #[test]
    fn control_characters_long_values_and_bad_types_are_refused_by_name() {
        let long = "a".repeat(MAX_PATTERN_LEN + 1);
        for (field, value) in [
            ("author", "a\u{0}b".to_owned()),
            ("author", "a\nb".to_owned()),
            ("grep", "a\rb".to_owned()),
            ("grep", "a\u{1b}[31m".to_owned()),
            ("grep", long.clone()),
        ] {
            let mut a = Map::new();
            a.insert(field, Value::from(value.as_str()));
            assert_eq!(
                log_filters(&a),
                Err(pattern_rule(field)),
                "{field} {value:?}"
            );
        }
        let edge = "é".repeat(MAX_PATTERN_LEN);
        let mut a = Map::new();
        a.insert("author", Value::from(edge.as_str()));
        assert!(log_filters(&a).is_ok());
        for value in [
            "a\nb",
            "--output=/tmp/x",
            "2026;1",
            &"1".repeat(MAX_DATE_LEN + 1),
        ] {
            let mut a = Map::new();
            a.insert("until", Value::from(value));
            assert_eq!(log_filters(&a), Err(date_rule("until")), "{value:?}");
        }
        for good in [
            "2 weeks ago",
            "2026-01-31T12:00:00+01:00",
            "@1700000000",
            "Jan 31, 2026",
        ] {
            let mut a = Map::new();
            a.insert("since", Value::from(good));
            assert!(log_filters(&a).is_ok(), "{good}");
        }
        assert_eq!(
            log_filters(&args(r#"{"author":5}"#)),
            Err(pattern_rule("author"))
        );
        assert_eq!(log_filters(&args(r#"{"skip":1000001}"#)), Err(skip_rule()));
        assert_eq!(log_filters(&args(r#"{"skip":-1}"#)), Err(skip_rule()));
        assert_eq!(log_filters(&args(r#"{"skip":"5"}"#)), Err(skip_rule()));
        assert!(log_filters(&args(r#"{"skip":1000000}"#)).is_ok());
        assert_eq!(
            stat(&args(r#"{"stat":"yes"}"#)),
            Err(args::flag_rule("stat"))
        );
        assert_eq!(stat(&args(r#"{"stat":true}"#)), Ok(true));
        assert_eq!(skip_rule(), "skip must be an integer from 0 to 1000000");
        assert_eq!(
            pattern_rule("author"),
            "author must be one line of at most 200 characters (an extended regex; no NUL, \
             newline or other control character)"
        );
    }

    #[test]
    fn declarations_and_messages_name_the_same_arguments() {
        let names: Vec<&str> = log_properties().iter().map(|(n, _)| *n).collect();
        let messages: Vec<&str> = log_messages().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, messages);
        assert_eq!(names, ["author", "since", "until", "grep", "skip", "stat"]);
    }
}
