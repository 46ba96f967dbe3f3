//! The tools' declarations (the product's eight, which teach: every argument described with an
//! example, every optional one with its default, plain-text answers with an output schema and
//! `offset`; or, under `--compat reference`, the reference's five with its exact descriptions and
//! schemas), the argument rules the schema cannot express, each tool's subcommand argv (the newer
//! tools' in their own modules), and the note that replaces an empty answer.

use super::log_args;
use super::page;
use crate::compat::Compat;
use agentteams_mcp::json::{obj, Map, Value};
use agentteams_mcp::server::Tool;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Most commits `git_log` returns (the reference's `MAX_LOG`).
pub const MAX_LOG: u64 = 200;
/// Commits `git_log` returns when `n` is absent.
pub const DEFAULT_LOG: u64 = 20;
/// Longest revision accepted.
pub const MAX_REV_LEN: usize = 200;
/// Symlinks followed while resolving one argument path before it counts as a loop.
const MAX_SYMLINKS: usize = 40;

pub const PATH_NOT_RELATIVE: &str = "path must be a relative path inside the project";
pub const PATH_OUTSIDE: &str = "path must be inside the project and outside .git";
pub const N_RANGE: &str = "n must be an integer from 1 to 200";
pub const BLAME_NEEDS_PATH: &str = "git_blame needs a path";

pub const GIT_LOG: &str = "git_log";
pub const GIT_SHOW: &str = "git_show";
pub const GIT_DIFF: &str = "git_diff";
pub const GIT_BLAME: &str = "git_blame";
pub const GIT_STATUS: &str = "git_status";
/// Product only: under `--compat reference` it is neither listed nor served.
pub const GIT_FILE: &str = "git_file";

/// The reference's message for a revision argument `field` that breaks the ref rule.
pub fn ref_message(field: &str) -> String {
    format!(
        "{field} must be a plain revision (letters, digits, ._/@{{}}~^-), not starting with '-'"
    )
}

fn string() -> Value {
    obj([("type", Value::from("string"))])
}

fn schema<const N: usize>(required: &[&str], properties: [(&str, Value); N]) -> Value {
    let properties = obj(properties);
    if required.is_empty() {
        return obj([("type", Value::from("object")), ("properties", properties)]);
    }
    let required = Value::Array(required.iter().map(|&r| Value::from(r)).collect());
    obj([
        ("type", Value::from("object")),
        ("required", required),
        ("properties", properties),
    ])
}

/// The tools in the reference's order: the product's declarations, or under
/// [`Compat::Reference`] the reference's exact ones. Both carry the same argument rules and
/// messages; only the advertised texts differ.
pub fn declarations(compat: Compat) -> Vec<Tool> {
    match compat {
        Compat::Product => product_declarations()
            .into_iter()
            .map(with_plain_answers)
            .collect(),
        Compat::Reference => reference_declarations(),
    }
}

/// `tool` as the product serves it: its answers are plain text with the same text as `output` in
/// structured content, and every tool takes `offset` (`git_file`'s counts bytes of the file's
/// content; a `git_file` line range pages by `start` instead).
fn with_plain_answers(tool: Tool) -> Tool {
    let by_line = tool.name == GIT_FILE;
    let offset = if by_line {
        "Where in the file's content to start, in bytes, when reading the whole file: the value \
         a cut answer's last line names, e.g. 61184. 0 or absent: from the start. Not with \
         start or end."
    } else {
        "Where in the full output to start, in bytes: the value a cut answer's last line \
         names, e.g. 61184. 0 or absent: from the start."
    };
    let mut tool = with_offset(tool, offset);
    let next_offset = (
        page::NEXT_OFFSET,
        described(
            "integer",
            "Present when the answer was cut: the offset that continues it.",
            None,
        ),
    );
    let output = (
        "output",
        described(
            "string",
            "The answer as text, the same as the text content.",
            None,
        ),
    );
    tool.output_schema = Some(if by_line {
        let next_start = (
            page::NEXT_START,
            described(
                "integer",
                "Present when an answer for a line range was cut: the start that continues it.",
                None,
            ),
        );
        schema(&["output"], [output, next_offset, next_start])
    } else {
        schema(&["output"], [output, next_offset])
    });
    tool
}

/// `tool` taking `offset`, described by `description`.
fn with_offset(mut tool: Tool, description: &str) -> Tool {
    let mut offset = Map::new();
    offset.insert("type", Value::from("integer"));
    offset.insert("minimum", Value::from(0u64));
    offset.insert("maximum", Value::from(page::MAX_OFFSET));
    offset.insert("description", Value::from(description));
    offset.insert("default", Value::from(0u64));
    if let Some(properties) = tool
        .input_schema
        .as_object_mut()
        .and_then(|s| s.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        properties.insert("offset", Value::Object(offset));
    }
    tool.argument_message("offset", &page::offset_message())
        .null_means_absent("offset")
}

/// The rule of the boolean argument `field`.
pub fn flag_rule(field: &str) -> String {
    format!("{field} must be true or false, e.g. true")
}

/// The boolean argument `field` (absent or null: false), or its rule.
pub fn flag(arguments: &Map, field: &str) -> Result<bool, String> {
    match arguments.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(value) => value.as_bool().ok_or_else(|| flag_rule(field)),
    }
}

/// Test arguments from JSON text (an object), for the unit tests of every tool module.
#[cfg(test)]
pub fn arguments(text: &str) -> Map {
    match agentteams_mcp::json::parse(text.as_bytes()) {
        Ok(Value::Object(map)) => map,
        _ => panic!("bad test input {text}"),
    }
}

/// The `offset` argument of a paged call (0 when absent).
pub fn offset(arguments: &Map) -> Result<u64, String> {
    match arguments.get("offset") {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_u64()
            .filter(|&n| n <= page::MAX_OFFSET)
            .ok_or_else(page::offset_message),
    }
}

/// `git_log`'s `n` as the reference declares it: an integer from 1 to [`MAX_LOG`].
fn log_count() -> Map {
    let mut n = Map::new();
    n.insert("type", Value::from("integer"));
    n.insert("minimum", Value::from(1u64));
    n.insert("maximum", Value::from(MAX_LOG));
    n
}

/// Every tool takes `path` under the same rule, and `null` for it means absent.
fn with_path(tool: Tool) -> Tool {
    tool.argument_message("path", PATH_NOT_RELATIVE)
        .null_means_absent("path")
}

/// An argument of type `kind` described by `description`, with `default` when it is optional.
pub(super) fn described(kind: &str, description: &str, default: Option<Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("type", Value::from(kind));
    schema.insert("description", Value::from(description));
    if let Some(default) = default {
        schema.insert("default", default);
    }
    Value::Object(schema)
}

/// The optional `path` argument of `tool_use` ("Only commits that change ...").
fn path_argument(tool_use: &str) -> Value {
    described(
        "string",
        &format!(
            "{tool_use} a file or directory, relative to the project root, e.g. \"src/main.rs\" \
             or \"docs\". Absent or null: the whole project."
        ),
        Some(Value::Null),
    )
}

/// The product's declarations: descriptions that say when to use each tool and what it answers,
/// every argument described with an example, every optional argument with its default.
fn product_declarations() -> Vec<Tool> {
    const REVISION: &str = "Plain revision syntax only (letters, digits, ._/@{}~^-).";
    const ANSWER: &str = "Read-only. The answer is plain text; when there is nothing to show, one \
                          line in parentheses says why; a cut answer's last line names the \
                          argument that continues it.";
    let mut n = log_count();
    n.insert(
        "description",
        Value::from("How many commits to list at most, newest first: 1 to 200, e.g. 5."),
    );
    n.insert("default", Value::from(DEFAULT_LOG));
    let [author, since, until, grep, skip, stat] = log_args::log_properties();
    let tools = vec![
        with_path(
            Tool::new(
                GIT_LOG,
                &format!(
                    "List commits, newest first, one line each: short hash, the parents' short \
                     hashes (two for a merge), author date, author, the branches and tags at it \
                     in parentheses, then ': ' and the subject, e.g. \"83e0199 31c92c7 cc9ea6a \
                     2024-04-01 Bob (HEAD -> main, tag: v2.0): Merge branch 'x'\". Filter by \
                     author, message (grep), date (since, until) or path; page with skip; stat \
                     adds the files each commit changed. Use it to find the commits behind a \
                     change, the history of a file (path) or a branch or range (rev). {ANSWER}"
                ),
                schema(
                    &[],
                    [
                        (
                            "rev",
                            described(
                                "string",
                                &format!(
                                    "Whose history to list: a branch, tag, commit or range, e.g. \
                                     \"main\", \"v1.0\", \"HEAD~5\" or \"v1.0..main\". {REVISION}"
                                ),
                                Some(Value::from("HEAD")),
                            ),
                        ),
                        ("n", Value::Object(n)),
                        ("path", path_argument("Only commits that change")),
                        author,
                        since,
                        until,
                        grep,
                        skip,
                        stat,
                    ],
                ),
            )
            .argument_message("rev", &ref_message("rev"))
            .argument_message("n", N_RANGE),
        ),
        with_path(
            Tool::new(
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
                        log_args::stat_property(
                            "the commit's header, then only the files it changed",
                        ),
                    ],
                ),
            )
            .argument_message("rev", &ref_message("rev")),
        ),
        with_path(
            Tool::new(
                GIT_DIFF,
                &format!(
                    "Compare two revisions: the unified diff from base to head of committed \
                     content (never uncommitted work-tree changes; submodules left out). Use it to \
                     see what changed between commits, branches or releases. {ANSWER}"
                ),
                schema(
                    &["base", "head"],
                    [
                        (
                            "base",
                            described(
                                "string",
                                &format!(
                                    "The old side of the comparison, a revision, e.g. \"HEAD~1\", \
                                     \"main\" or \"v1.0\". {REVISION}"
                                ),
                                None,
                            ),
                        ),
                        (
                            "head",
                            described(
                                "string",
                                &format!(
                                    "The new side of the comparison, a revision, e.g. \"HEAD\" or \
                                     \"feature\". {REVISION}"
                                ),
                                None,
                            ),
                        ),
                        ("path", path_argument("Only the differences in")),
                        log_args::stat_property("only the files that differ"),
                    ],
                ),
            )
            .argument_message("base", &ref_message("base"))
            .argument_message("head", &ref_message("head")),
        ),
        with_path(
            Tool::new(
                GIT_BLAME,
                &format!(
                    "Who last changed each line of a file as of a revision: one line per file \
                     line with the commit's short hash, author, date, line number and the line. \
                     Use it to find when and by whom a line was written, then git_show that \
                     commit. Never reads the work tree. {ANSWER}"
                ),
                schema(
                    &["rev", "path"],
                    [
                        (
                            "rev",
                            described(
                                "string",
                                &format!(
                                    "The revision whose version of the file to annotate, e.g. \
                                     \"HEAD\" or \"v1.0\". {REVISION}"
                                ),
                                None,
                            ),
                        ),
                        (
                            "path",
                            described(
                                "string",
                                "The file to annotate, relative to the project root, e.g. \
                                 \"src/main.rs\".",
                                None,
                            ),
                        ),
                    ],
                ),
            )
            .argument_message("rev", &ref_message("rev"))
            .missing_argument_message("path", BLAME_NEEDS_PATH),
        ),
        with_path(Tool::new(
            GIT_STATUS,
            &format!(
                "List the work tree's uncommitted changes: one porcelain v1 line per file, two \
                 status letters then the path (\"M \" staged, \" M\" modified, \"??\" \
                 untracked); ignored files and submodules left out. Use it to see what is being \
                 worked on. Takes no locks. {ANSWER}"
            ),
            schema(&[], []),
        )),
        git_file_declaration(REVISION, ANSWER),
        super::refs::declaration(REVISION, ANSWER),
        super::grep::declaration(REVISION, ANSWER),
    ];
    tools.into_iter().map(with_product_arguments).collect()
}

/// `tool` with the rules of its product-only arguments (`git_log`'s filters, `stat`): each
/// one's message, and `null` meaning absent.
fn with_product_arguments(tool: Tool) -> Tool {
    let messages: Vec<(&str, String)> = match tool.name.as_str() {
        GIT_LOG => log_args::log_messages().into_iter().collect(),
        GIT_SHOW | GIT_DIFF => vec![("stat", flag_rule("stat"))],
        _ => Vec::new(),
    };
    messages.into_iter().fold(tool, |tool, (field, message)| {
        tool.argument_message(field, &message)
            .null_means_absent(field)
    })
}

/// `git_file`'s declaration (product only).
fn git_file_declaration(revision: &str, answer: &str) -> Tool {
    let line = |which: &str, example: &str, default: &str| {
        let mut n = Map::new();
        n.insert("type", Value::from("integer"));
        n.insert("minimum", Value::from(1u64));
        n.insert(
            "description",
            Value::from(format!(
                "{which} line to return, 1-based and included, e.g. {example}. Absent or null: \
                 {default}."
            )),
        );
        n.insert("default", Value::Null);
        Value::Object(n)
    };
    with_path(
        Tool::new(
            GIT_FILE,
            &format!(
                "Read one file as it is at a revision (never the work tree): a first line with \
                 its path, revision, size in bytes and line count, then its lines (start and end \
                 pick a range). Binary files, directories, submodules and symbolic links are \
                 named as such, not dumped. Use it to read code as of a commit, tag or branch, or \
                 the part of a big file past the output cap. {answer}"
            ),
            schema(
                &["path"],
                [
                    (
                        "path",
                        described(
                            "string",
                            "The file to read, relative to the project root, e.g. \
                             \"src/main.rs\".",
                            None,
                        ),
                    ),
                    (
                        "rev",
                        described(
                            "string",
                            &format!(
                                "The revision to read the file at, e.g. \"HEAD~3\", \"v1.0\" or \
                                 \"main\". {revision}"
                            ),
                            Some(Value::from("HEAD")),
                        ),
                    ),
                    ("start", line("The first", "10", "from line 1")),
                    ("end", line("The last", "20", "to the last line")),
                ],
            ),
        )
        .argument_message("rev", &ref_message("rev"))
        .argument_message("start", super::file::START_RULE)
        .argument_message("end", super::file::END_RULE)
        .missing_argument_message("path", "git_file needs a path, e.g. \"src/main.rs\"")
        .null_means_absent("rev")
        .null_means_absent("start")
        .null_means_absent("end"),
    )
}

/// The tools in the reference's order, with its exact descriptions and schemas.
fn reference_declarations() -> Vec<Tool> {
    let n = Value::Object(log_count());
    vec![
        with_path(
            Tool::new(
                GIT_LOG,
                "Commit history (hash, author, date, subject). Read-only.",
                schema(&[], [("rev", string()), ("n", n), ("path", string())]),
            )
            .argument_message("rev", &ref_message("rev"))
            .argument_message("n", N_RANGE),
        ),
        with_path(
            Tool::new(
                GIT_SHOW,
                "One commit: metadata, stat and patch. Read-only.",
                schema(&["rev"], [("rev", string()), ("path", string())]),
            )
            .argument_message("rev", &ref_message("rev")),
        ),
        with_path(
            Tool::new(
                GIT_DIFF,
                "Diff between two revisions (never the worktree). Read-only.",
                schema(
                    &["base", "head"],
                    [("base", string()), ("head", string()), ("path", string())],
                ),
            )
            .argument_message("base", &ref_message("base"))
            .argument_message("head", &ref_message("head")),
        ),
        with_path(
            Tool::new(
                GIT_BLAME,
                "Line authorship of a file at a revision (never the worktree). Read-only.",
                schema(&["rev", "path"], [("rev", string()), ("path", string())]),
            )
            .argument_message("rev", &ref_message("rev"))
            .missing_argument_message("path", BLAME_NEEDS_PATH),
        ),
        with_path(Tool::new(
            GIT_STATUS,
            "Working-tree status (porcelain), without locks. Read-only.",
            schema(&[], []),
        )),
    ]
}

/// The refusal of a `^{/text}` search whose revision holds other braces.
pub fn search_message(field: &str) -> String {
    format!(
        "{field}: a ^{{/text}} commit search may hold no other braces ({{ or }}): git reads the \
         text as a regex, and a {{m,n}} repetition can take it gigabytes"
    )
}

/// The ref rule: 1–200 characters of `[A-Za-z0-9._/@{}~^-]`, not starting with `-`; and a
/// revision with git's `^{/text}` commit search holds no braces but that search's own pair.
///
/// git compiles the search text as an extended regex. Within the charset the only operators left
/// are `.`, `^` and the `{m,n}` repetition, and repetitions nest into a program of billions of
/// states (`HEAD^{/.{32767}{32767}}` took git to 6.9 GB). Without braces the text is a fixed-length
/// pattern of at most 200 literals and `.`, matched in linear time, so the search stays useful and
/// safe; the memory limit still bounds everything else.
pub fn revision<'a>(arguments: &'a Map, field: &str) -> Result<&'a str, String> {
    let value = arguments.get(field).and_then(Value::as_str).unwrap_or("");
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._/@{}~^-".contains(c);
    if value.is_empty()
        || value.len() > MAX_REV_LEN
        || value.starts_with('-')
        || !value.chars().all(allowed)
    {
        return Err(ref_message(field));
    }
    if value.contains("{/") && (value.matches('{').count() > 1 || value.matches('}').count() > 1) {
        return Err(search_message(field));
    }
    Ok(value)
}

/// The path rule (REFERENCE-BEHAVIOUR.md §4.5, `.git` compared case-insensitively): relative,
/// inside `root` after resolving symlinks like Python's `Path.resolve()`, never into `.git` by name
/// or, through a symlink, into the repository's git dirs.
pub fn checked_path<'a>(
    value: &'a Value,
    root: &Path,
    git_dirs: [&Path; 2],
) -> Result<&'a str, String> {
    let text = value.as_str().unwrap_or("");
    if text.is_empty() || text.contains('\0') || text.starts_with('-') || text.starts_with('/') {
        return Err(PATH_NOT_RELATIVE.to_owned());
    }
    let names_git = Path::new(text)
        .components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"));
    let inside = match resolve(root, Path::new(text)) {
        Some(resolved) => {
            resolved.starts_with(root) && !git_dirs.iter().any(|dir| resolved.starts_with(dir))
        }
        None => false,
    };
    if names_git || !inside {
        return Err(PATH_OUTSIDE.to_owned());
    }
    Ok(text)
}

/// `base.join(relative)` with every symlink resolved component by component and `..` applied to the
/// resolved path (POSIX `realpath` semantics, non-strict: missing components are kept as written).
/// `None` on a symlink loop or an unreadable link.
fn resolve(base: &Path, relative: &Path) -> Option<PathBuf> {
    let mut resolved = base.to_path_buf();
    let mut pending: Vec<OsString> = relative
        .components()
        .rev()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut links = 0;
    while let Some(part) = pending.pop() {
        match Path::new(&part).components().next() {
            Some(Component::RootDir) => resolved = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::Normal(name)) => {
                let next = resolved.join(name);
                match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_SYMLINKS {
                            return None;
                        }
                        let target = std::fs::read_link(&next).ok()?;
                        pending.extend(target.components().rev().map(|c| c.as_os_str().to_owned()));
                    }
                    _ => resolved = next,
                }
            }
            _ => {}
        }
    }
    Some(resolved)
}

/// The subcommand argv of tool `name` (after the global options), the reference's exactly except
/// that `git_diff` always ends its revisions with `--`: with exactly two arguments after the
/// options, git diff silently switches to `--no-index` when either names a path outside the
/// repository (`/etc/passwd`), and the ref rule admits such text.
pub fn subcommand(name: &str, arguments: &Map, path: Option<&str>) -> Result<Vec<String>, String> {
    let own = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut argv = match name {
        GIT_LOG => {
            let n = log_count_argument(arguments)?;
            let rev = log_revision(arguments)?;
            let mut argv = own(&["log", "--no-color", "--no-ext-diff"]);
            argv.push(format!("-n{n}"));
            argv.extend(own(&[
                "--date=iso-strict",
                "--format=%H%x09%an%x09%ad%x09%s",
                "--end-of-options",
                rev,
            ]));
            argv
        }
        GIT_SHOW => {
            let rev = revision(arguments, "rev")?;
            own(&[
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--stat",
                "--patch",
                "--format=fuller",
                "--end-of-options",
                rev,
            ])
        }
        GIT_DIFF => {
            let base = revision(arguments, "base")?;
            let head = revision(arguments, "head")?;
            let mut argv = own(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules=all",
                "--end-of-options",
                base,
                head,
                "--",
            ]);
            argv.extend(path.map(str::to_owned));
            return Ok(argv);
        }
        GIT_BLAME => {
            let path = path.ok_or_else(|| BLAME_NEEDS_PATH.to_owned())?;
            let rev = revision(arguments, "rev")?;
            // No --end-of-options: blame mis-parses `--end-of-options REV -- PATH`; the ref rule's
            // leading-'-' ban is what keeps REV from being an option.
            return Ok(own(&["blame", "--no-textconv", rev, "--", path]));
        }
        GIT_STATUS => {
            return Ok(own(&[
                "status",
                "--porcelain=v1",
                "--ignore-submodules=all",
            ]))
        }
        super::refs::GIT_REFS => return super::refs::argv(arguments),
        super::grep::GIT_GREP => return super::grep::argv(arguments, path),
        _ => {
            return Err(format!(
                "unknown tool {}",
                agentteams_mcp::jsonrpc::py_repr(&Value::from(name))
            ))
        }
    };
    if let Some(path) = path {
        argv.push("--".to_owned());
        argv.push(path.to_owned());
    }
    Ok(argv)
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

/// The subcommand argv of tool `name` as `compat` serves it. Under [`Compat::Reference`] it is
/// [`subcommand`]'s exactly (the product's arguments are ignored there, as the reference ignores
/// any argument it does not declare). In the product, `git_log` lists commits in the product's
/// line format with its filters ([`log_args`]), and `stat: true` makes `git_show` and `git_diff`
/// print files and line counts instead of the patch; the rest is [`subcommand`]'s.
pub fn subcommand_for(
    compat: Compat,
    name: &str,
    arguments: &Map,
    path: Option<&str>,
) -> Result<Vec<String>, String> {
    if compat == Compat::Reference || ![GIT_LOG, GIT_SHOW, GIT_DIFF].contains(&name) {
        return subcommand(name, arguments, path);
    }
    let own = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let stat_args = || own(&log_args::STAT_ARGS);
    let mut argv = match name {
        GIT_LOG => {
            let n = log_count_argument(arguments)?;
            let rev = log_revision(arguments)?;
            let filters = log_args::log_filters(arguments)?;
            let mut argv = log_args::log_argv(n, &filters);
            argv.extend(own(&["--end-of-options", rev]));
            argv
        }
        GIT_SHOW => {
            let rev = revision(arguments, "rev")?;
            if !log_args::stat(arguments)? {
                return subcommand(name, arguments, path);
            }
            let mut argv = own(&["show", "--no-color", "--no-ext-diff"]);
            argv.extend(stat_args());
            // `--date=default`: the dates `--format=fuller` prints, whatever `log.date` says.
            argv.extend(own(&[
                "--format=fuller",
                "--date=default",
                "--end-of-options",
                rev,
            ]));
            argv
        }
        _ => {
            let base = revision(arguments, "base")?;
            let head = revision(arguments, "head")?;
            if !log_args::stat(arguments)? {
                return subcommand(name, arguments, path);
            }
            let mut argv = own(&["diff", "--no-color", "--no-ext-diff"]);
            argv.push("--ignore-submodules=all".to_owned());
            argv.extend(stat_args());
            // As in `subcommand`: the `--` keeps git from reading outside paths as --no-index.
            argv.extend(own(&["--end-of-options", base, head, "--"]));
            argv.extend(path.map(str::to_owned));
            return Ok(argv);
        }
    };
    if let Some(path) = path {
        argv.push("--".to_owned());
        argv.push(path.to_owned());
    }
    Ok(argv)
}

/// The one line that answers in place of an empty output (product texts only): why git printed
/// nothing. Always in parentheses: no line of these tools' git output starts with `(` (log lines
/// start with a hash, show with `commit` or `tag`, diff with `diff`, blame with a hash or `^`,
/// status with two status letters), so a note cannot be mistaken for output. Revisions passed the
/// ref rule; the path is quoted and escaped (`{:?}`) so the note stays one line.
pub fn empty_note(name: &str, arguments: &Map, path: Option<&str>) -> String {
    let rev = |field: &str| {
        arguments
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("HEAD")
            .to_owned()
    };
    match (name, path) {
        (GIT_STATUS, _) => "(working tree clean: nothing staged, modified or untracked)".to_owned(),
        (GIT_LOG, _) => {
            let filters = log_args::log_filters(arguments).unwrap_or_default();
            let (asked, skip) = (
                log_args::filter_words(&filters),
                log_args::skip_words(&filters),
            );
            match path {
                Some(path) => format!(
                    "(no commits: no commit in {} changes {path:?}{asked}{skip})",
                    rev("rev")
                ),
                None if asked.is_empty() => {
                    format!("(no commits: {} selects no commits{skip})", rev("rev"))
                }
                None => format!("(no commits: no commit in {}{asked}{skip})", rev("rev")),
            }
        }
        (GIT_SHOW, Some(path)) => format!(
            "(nothing to show: {} does not change {path:?}; git_show without path shows the \
             whole commit)",
            rev("rev")
        ),
        (GIT_SHOW, None) => format!(
            "(nothing to show: {} is an empty range or an empty object)",
            rev("rev")
        ),
        (GIT_DIFF, Some(path)) => format!(
            "(no differences between {} and {} in {path:?})",
            rev("base"),
            rev("head")
        ),
        (GIT_DIFF, None) => format!(
            "(no differences between {} and {})",
            rev("base"),
            rev("head")
        ),
        (GIT_BLAME, Some(path)) => format!("(no lines: {path:?} is empty at {})", rev("rev")),
        (super::refs::GIT_REFS, _) => super::refs::empty_note(arguments),
        (super::grep::GIT_GREP, _) => super::grep::empty_note(arguments, path),
        _ => "(git printed nothing)".to_owned(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::arguments as args;
    use super::*;
    use agentteams_mcp::json;

    /// The rule every product declaration is held to: its description says when to use it and
    /// that it is read-only, every argument's description gives an example, and an argument has a
    /// default exactly when it is optional. Returns the tool's required arguments and properties.
    #[track_caller]
    pub(in crate::gitread) fn assert_described_with_defaults(tool: &Tool) -> (Vec<&str>, &Map) {
        assert!(tool.description.contains("Use it"), "{}", tool.description);
        assert!(
            tool.description.contains("Read-only"),
            "{}",
            tool.description
        );
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(Value::Object(properties)) = tool.input_schema.get("properties") else {
            panic!("{} has no properties", tool.name);
        };
        for (argument, property) in properties.iter() {
            let described = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            assert!(described.contains("e.g. "), "{}.{argument}", tool.name);
            let optional = !required.contains(&argument.as_str());
            assert_eq!(
                property.get("default").is_some(),
                optional,
                "{}.{argument}",
                tool.name
            );
        }
        (required, properties)
    }

    #[test]
    fn declarations_match_the_reference_wire_form() {
        let tools = declarations(Compat::Reference);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, [GIT_LOG, GIT_SHOW, GIT_DIFF, GIT_BLAME, GIT_STATUS]);
        assert_eq!(
            json::to_string(&tools[0].input_schema),
            r#"{"type":"object","properties":{"rev":{"type":"string"},"n":{"type":"integer","minimum":1,"maximum":200},"path":{"type":"string"}}}"#
        );
        assert_eq!(
            json::to_string(&tools[2].input_schema),
            r#"{"type":"object","required":["base","head"],"properties":{"base":{"type":"string"},"head":{"type":"string"},"path":{"type":"string"}}}"#
        );
        assert_eq!(
            json::to_string(&tools[4].input_schema),
            r#"{"type":"object","properties":{}}"#
        );
        assert_eq!(
            tools[3].description,
            "Line authorship of a file at a revision (never the worktree). Read-only."
        );
    }

    #[test]
    fn product_declarations_describe_every_argument_and_default_every_optional_one() {
        let product = declarations(Compat::Product);
        let reference = declarations(Compat::Reference);
        assert_eq!(product.len(), reference.len() + 3);
        assert_eq!(product[5].name, GIT_FILE);
        assert_eq!(product[6].name, super::super::refs::GIT_REFS);
        assert_eq!(product[7].name, super::super::grep::GIT_GREP);
        for (tool, plain) in product.iter().zip(&reference) {
            assert_eq!(tool.name, plain.name);
            // The reference's rules first, then those of the product-only arguments.
            assert!(tool.argument_messages.starts_with(&plain.argument_messages));
            assert_eq!(
                tool.missing_argument_messages,
                plain.missing_argument_messages
            );
            assert!(tool.null_means_absent.starts_with(&plain.null_means_absent));
            assert!(tool.output_schema.is_some(), "{}", tool.name);
            assert_eq!(
                tool.input_schema.get("required"),
                plain.input_schema.get("required"),
                "{}",
                tool.name
            );
            let (required, properties) = assert_described_with_defaults(tool);
            let Some(Value::Object(plain_properties)) = plain.input_schema.get("properties") else {
                panic!("{} has no reference properties", tool.name);
            };
            let names: Vec<&str> = properties.iter().map(|(k, _)| k.as_str()).collect();
            let plain_names: Vec<&str> = plain_properties.iter().map(|(k, _)| k.as_str()).collect();
            // The reference's arguments, in its order, then the product's optional ones.
            assert!(names.starts_with(&plain_names), "{}", tool.name);
            assert!(names.contains(&"offset"), "{} is paged", tool.name);
            for added in &names[plain_names.len()..] {
                assert!(!required.contains(added), "{}.{added}", tool.name);
                let message = tool.argument_messages.iter().find(|(f, _)| f == added);
                assert!(message.is_some(), "{}.{added} has no message", tool.name);
                assert!(tool.null_means_absent.iter().any(|f| f == added));
            }
            // The validator's keywords are the reference's; only annotations were added.
            for (argument, property) in properties.iter() {
                let Some(plain) = plain_properties.get(argument) else {
                    continue;
                };
                for keyword in ["type", "minimum", "maximum"] {
                    assert_eq!(property.get(keyword), plain.get(keyword));
                }
            }
        }
        let log = &product[0].input_schema;
        let property = |name: &str| log.get("properties").and_then(|p| p.get(name));
        assert_eq!(
            property("rev").map(json::to_string).as_deref(),
            Some(
                r#"{"type":"string","description":"Whose history to list: a branch, tag, commit or range, e.g. \"main\", \"v1.0\", \"HEAD~5\" or \"v1.0..main\". Plain revision syntax only (letters, digits, ._/@{}~^-).","default":"HEAD"}"#
            )
        );
        assert_eq!(
            property("n").and_then(|n| n.get("default")),
            Some(&Value::from(20u64))
        );
        assert_eq!(
            property("path").and_then(|p| p.get("default")),
            Some(&Value::Null)
        );
        assert_eq!(
            product[4].description,
            "List the work tree's uncommitted changes: one porcelain v1 line per file, two status \
             letters then the path (\"M \" staged, \" M\" modified, \"??\" untracked); ignored \
             files and submodules left out. Use it to see what is being worked on. Takes no \
             locks. Read-only. The answer is plain text; when there is nothing to show, one line \
             in parentheses says why; a cut answer's last line names the argument that \
             continues it."
        );
    }

    /// Every case's exact line is pinned through the binary (gitread_reference.rs); here, that a
    /// client's path cannot break the one line.
    #[test]
    fn an_empty_answers_note_stays_one_line_whatever_the_path() {
        let arguments = args(r#"{"base":"HEAD~1","head":"HEAD"}"#);
        let line = empty_note(GIT_DIFF, &arguments, Some("a\nb\"c)"));
        assert_eq!(
            line,
            r#"(no differences between HEAD~1 and HEAD in "a\nb\"c)")"#
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn the_ref_rule_accepts_plain_revisions_only() {
        for good in ["HEAD~1", "HEAD^", "main@{1}", "v1.0", "A..B", "a/b-c_d"] {
            let a = args(&format!(r#"{{"rev":"{good}"}}"#));
            assert_eq!(revision(&a, "rev"), Ok(good), "{good}");
        }
        let long = "a".repeat(MAX_REV_LEN + 1);
        for bad in [
            "HEAD;rm",
            "--output=/tmp/x",
            "-x",
            "a b",
            "HEAD:a.txt",
            "",
            long.as_str(),
        ] {
            let a = args(&format!(r#"{{"rev":"{bad}"}}"#));
            assert_eq!(revision(&a, "rev"), Err(ref_message("rev")), "{bad}");
        }
        let edge = "a".repeat(MAX_REV_LEN);
        assert!(revision(&args(&format!(r#"{{"rev":"{edge}"}}"#)), "rev").is_ok());
        assert_eq!(
            ref_message("base"),
            "base must be a plain revision (letters, digits, ._/@{}~^-), not starting with '-'"
        );
    }

    #[test]
    fn log_argv_is_the_reference_one() {
        let argv = subcommand(GIT_LOG, &args(r#"{"n":5}"#), Some("a.txt"));
        assert_eq!(
            argv,
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
            subcommand(GIT_LOG, &args(r#"{"n":201}"#), None),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            subcommand(GIT_LOG, &args(r#"{"n":"5"}"#), None),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            subcommand(GIT_LOG, &args(r#"{"rev":null}"#), None),
            Err(ref_message("rev"))
        );
    }

    #[test]
    fn the_reference_ignores_the_product_arguments() {
        let all = args(
            r#"{"n":5,"author":"x","since":"2 weeks ago","until":"now","grep":"y","skip":3,"stat":true}"#,
        );
        for name in [GIT_LOG, GIT_SHOW, GIT_DIFF] {
            let mut arguments = all.clone();
            arguments.insert("rev", Value::from("HEAD"));
            arguments.insert("base", Value::from("HEAD~1"));
            arguments.insert("head", Value::from("HEAD"));
            assert_eq!(
                subcommand_for(Compat::Reference, name, &arguments, Some("a.txt")),
                subcommand(name, &arguments, Some("a.txt")),
                "{name}"
            );
        }
        // Not even a bad value is looked at.
        assert!(subcommand_for(Compat::Reference, GIT_LOG, &args(r#"{"skip":-1}"#), None).is_ok());
    }

    #[test]
    fn product_log_argv_has_the_line_format_and_the_filters_before_end_of_options() {
        let argv = subcommand_for(
            Compat::Product,
            GIT_LOG,
            &args(r#"{"n":5,"rev":"main","author":"-x","skip":2}"#),
            Some("a.txt"),
        )
        .unwrap_or_default();
        assert_eq!(
            argv,
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
            subcommand_for(
                Compat::Product,
                GIT_LOG,
                &args(r#"{"n":0,"skip":-1}"#),
                None
            ),
            Err(N_RANGE.to_owned())
        );
        assert_eq!(
            subcommand_for(Compat::Product, GIT_LOG, &args(r#"{"skip":-1}"#), None),
            Err(log_args::skip_rule())
        );
    }

    #[test]
    fn stat_gives_files_and_line_counts_instead_of_the_patch() {
        let show = subcommand_for(
            Compat::Product,
            GIT_SHOW,
            &args(r#"{"rev":"HEAD","stat":true}"#),
            Some("a.txt"),
        );
        assert_eq!(
            show.unwrap_or_default(),
            [
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--numstat",
                "--shortstat",
                "--summary",
                "--format=fuller",
                "--date=default",
                "--end-of-options",
                "HEAD",
                "--",
                "a.txt",
            ]
        );
        let diff = subcommand_for(
            Compat::Product,
            GIT_DIFF,
            &args(r#"{"base":"/etc/passwd","head":"HEAD","stat":true}"#),
            None,
        );
        assert_eq!(
            diff.unwrap_or_default(),
            [
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--ignore-submodules=all",
                "--no-textconv",
                "--numstat",
                "--shortstat",
                "--summary",
                "--end-of-options",
                "/etc/passwd",
                "HEAD",
                "--",
            ]
        );
        for (name, arguments) in [
            (GIT_SHOW, r#"{"rev":"HEAD","stat":false}"#),
            (GIT_DIFF, r#"{"base":"A","head":"B","stat":null}"#),
        ] {
            let arguments = args(arguments);
            assert_eq!(
                subcommand_for(Compat::Product, name, &arguments, None),
                subcommand(name, &arguments, None)
            );
        }
        assert_eq!(
            subcommand_for(
                Compat::Product,
                GIT_SHOW,
                &args(r#"{"rev":"HEAD","stat":1}"#),
                None
            ),
            Err(flag_rule("stat"))
        );
        assert_eq!(
            subcommand_for(
                Compat::Product,
                GIT_SHOW,
                &args(r#"{"rev":"-x","stat":1}"#),
                None
            ),
            Err(ref_message("rev"))
        );
    }

    #[test]
    fn a_filtered_logs_empty_note_says_what_was_asked_in_one_line() {
        let note = |a: &str, path: Option<&str>| empty_note(GIT_LOG, &args(a), path);
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

    #[test]
    fn diff_always_closes_its_revisions_with_a_double_dash() {
        let argv = subcommand(
            GIT_DIFF,
            &args(r#"{"base":"/etc/passwd","head":"/tmp/x"}"#),
            None,
        )
        .unwrap_or_default();
        assert_eq!(argv.last().map(String::as_str), Some("--"));
        assert_eq!(
            subcommand(GIT_DIFF, &args(r#"{"base":"HEAD"}"#), None),
            Err(ref_message("head"))
        );
    }

    #[test]
    fn blame_needs_a_path_before_its_revision() {
        assert_eq!(
            subcommand(GIT_BLAME, &args(r#"{"rev":"-x"}"#), None),
            Err(BLAME_NEEDS_PATH.to_owned())
        );
        assert_eq!(
            subcommand(GIT_BLAME, &args(r#"{"rev":"HEAD"}"#), Some("a.txt")),
            Ok(vec![
                "blame".into(),
                "--no-textconv".into(),
                "HEAD".into(),
                "--".into(),
                "a.txt".into()
            ])
        );
    }

    #[test]
    fn status_ignores_the_path() {
        assert_eq!(
            subcommand(GIT_STATUS, &Map::new(), Some("a.txt")),
            Ok(vec![
                "status".into(),
                "--porcelain=v1".into(),
                "--ignore-submodules=all".into()
            ])
        );
    }

    #[test]
    fn unknown_tools_are_named_with_python_repr() {
        assert_eq!(
            subcommand("git_nope", &Map::new(), None),
            Err("unknown tool 'git_nope'".to_owned())
        );
    }

    #[test]
    fn paths_must_stay_inside_and_out_of_git() {
        let root = std::env::temp_dir().join(format!("gitread-paths-{}", std::process::id()));
        let _ = std::fs::create_dir_all(root.join("sub"));
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let _ = std::os::unix::fs::symlink("/etc", root.join("link"));
        let _ = std::os::unix::fs::symlink(".git", root.join("gitlink"));
        let _ = std::os::unix::fs::symlink("loop", root.join("loop"));
        let git = root.join(".git");
        let check = |p: &str| checked_path(&Value::from(p), &root, [&git, &git]).map(str::to_owned);
        for good in ["a.txt", ".", "sub/../a.txt", "sub/new-file"] {
            assert_eq!(check(good), Ok(good.to_owned()));
        }
        for bad in ["", "-x", "/etc/passwd"] {
            assert_eq!(check(bad), Err(PATH_NOT_RELATIVE.to_owned()), "{bad}");
        }
        assert_eq!(
            checked_path(&Value::from(5u64), &root, [&git, &git]),
            Err(PATH_NOT_RELATIVE.to_owned())
        );
        for bad in [
            "../x",
            ".git/config",
            ".GIT/config",
            "link/passwd",
            "missing/../../x",
            "gitlink/config",
            "loop",
        ] {
            assert_eq!(check(bad), Err(PATH_OUTSIDE.to_owned()), "{bad}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
