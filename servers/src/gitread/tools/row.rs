//! One row of the gitread tool table ([`super::TABLE`]): what a tool declares, how a call of it
//! runs, what answers when git prints nothing. Each tool's module gives its row; the table and
//! the call path read them. Not for: any tool's own texts or rules.

use super::super::config_check::Verdict;
use crate::compat::Compat;
use agentteams_mcp::json::{Map, Value};
use agentteams_mcp::server::Tool;
use std::process::Command;

/// One gitread tool.
pub struct GitTool {
    pub name: &'static str,
    /// The product's declaration; [`super::declarations`] adds `offset` and the output schema.
    pub declare: fn() -> Tool,
    /// The reference's exact declaration; `None`: product only (under `--compat reference`
    /// neither listed nor served, as the reference answers for a tool it does not have).
    pub reference: Option<fn() -> Tool>,
    pub run: Run,
    /// Its revision arguments, which [`super::mistakes`] names when git cannot resolve one.
    pub revisions: &'static [&'static str],
    /// What answers in place of an empty output (product only): a note saying why git printed
    /// nothing, or the mistake the emptiness shows ([`super::mistakes::empty_range`]). A note is always
    /// in parentheses: no line of these tools' git output starts with `(`, so it cannot be
    /// mistaken for output; a client's text in it is quoted with `{:?}` so it stays one line.
    pub empty_note: fn(&Map, Option<&str>) -> Result<String, String>,
    /// `git_file`'s paging: `offset` counts bytes of the file's content, and a line range
    /// continues by `start` (the output schema carries `next_start`).
    pub by_line: bool,
    /// Refused while the index is split ([`super::split_index`]): the command reads the index.
    pub reads_index: bool,
    /// Reads the work tree: in a bare repository it answers [`NO_WORK_TREE`] instead.
    pub needs_work_tree: bool,
    /// A refusal the config pre-flight's verdict makes for this tool.
    pub refused_by: Option<fn(&Verdict) -> Option<&'static str>>,
    /// A per-command correction of the invocation ([`super::quirks`]).
    pub prepare: Option<fn(&mut Command)>,
    /// An exit status that is an answer (the empty note), not a failure.
    pub quiet_exit: Option<i32>,
}

/// A tool's subcommand argv (after the global options) from the mode, the arguments and the
/// checked path (`None`: absent), or the message of the rule an argument breaks.
pub type Argv = fn(Compat, &Map, Option<&str>) -> Result<Vec<String>, String>;

/// How a call of a tool runs.
pub enum Run {
    /// One git process.
    Git(Argv),
    /// `git_file`'s entry lookup, then its blob ([`super::file`]; `GitRead::git_file`).
    File,
}

impl GitTool {
    /// The row every tool starts from: no paging by line, no refusal, no correction.
    pub const PLAIN: GitTool = GitTool {
        name: "",
        declare: || Tool::read_only("", "", Value::Null),
        reference: None,
        run: Run::File,
        revisions: &[],
        empty_note: nothing_printed,
        by_line: false,
        reads_index: false,
        needs_work_tree: false,
        refused_by: None,
        prepare: None,
        quiet_exit: None,
    };
}

/// The answer of a tool that reads the work tree, in a bare repository.
pub const NO_WORK_TREE: &str =
    "(no work tree: the project is a bare repository, so nothing is uncommitted)";

/// The note of a tool with nothing more to say.
fn nothing_printed(_: &Map, _: Option<&str>) -> Result<String, String> {
    Ok("(git printed nothing)".to_owned())
}
