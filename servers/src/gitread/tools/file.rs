//! `git_file`: a file's content at a revision. Two hardened git processes, neither reading the
//! work tree nor running a filter or textconv:
//!
//! 1. `git ls-tree --full-tree -l -z --end-of-options REV -- PATH` names the entry at the
//!    (validated, lexically normalised, root-relative) path: its mode, type, object id and size.
//!    The server never builds a `REV:PATH` object name, so a `:`, `./` or `../` in the client's
//!    text can never be read by git's object-name parser (where `./` means the current directory).
//! 2. For a blob only, `git cat-file blob OID`, where OID is the hex id git itself printed: it
//!    streams the raw blob (no filters, no textconv), and the server keeps only the requested
//!    lines, at most the output cap of them ([`process::Window`]), counting the rest.

use super::super::page;
use super::super::process::{Finished, Window};
use super::super::sanitize;
use super::args::{self, described, ref_message, schema, with_path, PATH_OUTSIDE};
use super::row::{GitTool, Run};
use agentteams_mcp::json::{Map, Value};
use agentteams_mcp::server::Tool;
use std::path::{Component, Path};

/// Product only: under `--compat reference` it is neither listed nor served.
pub const GIT_FILE: &str = "git_file";

pub const TOOL: GitTool = GitTool {
    name: GIT_FILE,
    declare,
    run: Run::File,
    revisions: &["rev"],
    by_line: true,
    ..GitTool::PLAIN
};

pub const START_RULE: &str = "start must be an integer line number from 1, e.g. 10";
pub const END_RULE: &str = "end must be an integer line number from 1, e.g. 20";
pub const OFFSET_WITH_RANGE: &str =
    "offset continues a whole-file read; give it without start and end (they page by line)";
pub const ROOT_REFUSAL: &str =
    "git_file needs a file path, e.g. \"src/main.rs\", not the project root";

/// A validated `git_file` call.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    pub rev: String,
    /// Root-relative, `/`-separated, no `.` or `..` components.
    pub path: String,
    pub start: Option<u64>,
    pub end: Option<u64>,
    /// Bytes of the file's content to pass over (whole-file reads only).
    pub offset: u64,
}

/// `git_file`'s declaration (product only).
fn declare() -> Tool {
    let line = |description: &str| {
        let mut n = Map::new();
        n.insert("type", Value::from("integer"));
        n.insert("minimum", Value::from(1u64));
        n.insert("description", Value::from(description));
        n.insert("default", Value::Null);
        Value::Object(n)
    };
    let properties = [
        (
            "path",
            described("string", "The file, e.g. \"src/main.rs\".", None),
        ),
        (
            "rev",
            described(
                "string",
                "The revision to read it at, e.g. \"v1.0\".",
                Some(Value::from("HEAD")),
            ),
        ),
        ("start", line("The first line, from 1, e.g. 10.")),
        ("end", line("The last line, included, e.g. 20.")),
    ];
    let tool = Tool::read_only(
        GIT_FILE,
        "Read a file at a revision (never the work tree): a line with its size and line \
         count, then its lines. Use it to read code as of a commit, tag or branch.",
        schema(&["path"], properties),
    );
    with_path(
        tool.argument_message("rev", &ref_message("rev"))
            .argument_message("start", START_RULE)
            .argument_message("end", END_RULE)
            .missing_argument_message("path", "git_file needs a path, e.g. \"src/main.rs\"")
            .null_means_absent("rev")
            .null_means_absent("start")
            .null_means_absent("end"),
    )
}

fn line_number(arguments: &Map, field: &str, rule: &str) -> Result<Option<u64>, String> {
    match arguments.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .filter(|&n| n >= 1)
            .map(Some)
            .ok_or_else(|| rule.to_owned()),
    }
}

/// `path` (already through [`args::checked_path`]) with `.` dropped and `..` applied lexically,
/// as a path inside a tree is read; a `..` that leaves the root is refused.
pub fn tree_path(path: &str) -> Result<String, String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(|| PATH_OUTSIDE.to_owned())?;
            }
            Component::Normal(name) => parts.push(name.to_str().unwrap_or_default()),
            _ => return Err(args::PATH_NOT_RELATIVE.to_owned()),
        }
    }
    if parts.is_empty() {
        return Err(ROOT_REFUSAL.to_owned());
    }
    Ok(parts.join("/"))
}

/// The call's arguments under their rules; `path` is the checked path (None when absent).
pub fn request(arguments: &Map, path: Option<&str>) -> Result<Request, String> {
    let path = path.ok_or_else(|| "git_file needs a path, e.g. \"src/main.rs\"".to_owned())?;
    let path = tree_path(path)?;
    let rev = match arguments.get("rev") {
        None | Some(Value::Null) => "HEAD".to_owned(),
        Some(_) => args::revision(arguments, "rev")?.to_owned(),
    };
    let start = line_number(arguments, "start", START_RULE)?;
    let end = line_number(arguments, "end", END_RULE)?;
    let offset = args::offset(arguments)?;
    if offset > 0 && (start.is_some() || end.is_some()) {
        return Err(OFFSET_WITH_RANGE.to_owned());
    }
    if let (Some(s), Some(e)) = (start, end) {
        if s > e {
            return Err(format!(
                "start ({s}) must not be after end ({e}): lines start to end, both included"
            ));
        }
    }
    Ok(Request {
        rev,
        path,
        start,
        end,
        offset,
    })
}

/// The argv that names the entry.
pub fn ls_tree(request: &Request) -> Vec<String> {
    [
        "ls-tree",
        "--full-tree",
        "-l",
        "-z",
        "--end-of-options",
        &request.rev,
        "--",
        &request.path,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// One `ls-tree -l -z` entry.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub kind: String,
    pub oid: String,
    pub size: Option<u64>,
}

/// The entry of `ls-tree -l -z` output whose path is exactly `path`.
pub fn find_entry(listing: &[u8], path: &str) -> Option<Entry> {
    listing.split(|&b| b == 0).find_map(|record| {
        let tab = record.iter().position(|&b| b == b'\t')?;
        if &record[tab + 1..] != path.as_bytes() {
            return None;
        }
        let head = std::str::from_utf8(&record[..tab]).ok()?;
        let mut fields = head.split_whitespace();
        let entry = Entry {
            mode: fields.next()?.to_owned(),
            kind: fields.next()?.to_owned(),
            oid: fields.next()?.to_owned(),
            size: fields.next()?.parse().ok(),
        };
        let hex = entry.oid.len() >= 40 && entry.oid.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then_some(entry)
    })
}

/// The argv that streams a blob: the id is git's own hex output, never client text.
pub fn cat_file(entry: &Entry) -> Vec<String> {
    ["cat-file", "blob", &entry.oid]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

impl Request {
    /// Whether lines were asked for (`start` or `end`), rather than the file from `offset` on.
    fn ranged(&self) -> bool {
        self.start.is_some() || self.end.is_some()
    }
}

/// What of the blob to keep: a page from `offset`, or the lines asked for.
pub fn window(request: &Request) -> Window {
    if !request.ranged() {
        return Window::from_byte(request.offset, page::KEEP);
    }
    let skip = request.start.unwrap_or(1) - 1;
    Window::lines(page::KEEP, skip, request.end.map(|e| e - skip))
}

/// The path as the first line shows it: as is, or quoted and escaped when it holds anything
/// that could break or disguise the line.
fn shown(path: &str) -> String {
    if path.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        path.to_owned()
    } else {
        format!("{path:?}")
    }
}

/// The answer for an entry that is not a blob, or a missing one (the mistake's line).
pub fn not_a_file(request: &Request, entry: Option<&Entry>) -> String {
    let what = format!("{} at {}", shown(&request.path), request.rev);
    match entry {
        None => super::mistakes::path_not_in(&request.path, &request.rev),
        Some(e) if e.kind == "tree" => format!(
            "{what}: a directory (tree), not a file; name a file inside it, e.g. \"{}/...\"",
            request.path
        ),
        Some(e) if e.kind == "commit" => format!(
            "{what}: a submodule at commit {}; its files live in another repository, not shown",
            e.oid
        ),
        Some(e) => format!("{what}: a {} object, not a file; not shown", e.kind),
    }
}

/// The answer for a blob, from `cat-file`'s run under [`window`], and when it was cut, the
/// structured field and value that continue it: `next_offset` for a whole-file read (paged by
/// byte, like every tool), `next_start` for a line range (paged by line).
pub fn render(
    request: &Request,
    entry: &Entry,
    done: &Finished,
) -> (String, Option<(&'static str, u64)>) {
    let what = format!("{} at {}", shown(&request.path), request.rev);
    let bytes = entry.size.unwrap_or(0);
    if done.stdout_binary {
        return (format!("{what}: binary, {bytes} bytes; not shown"), None);
    }
    let lines = done.stdout_lines + u64::from(done.stdout_unterminated);
    let symlink = entry.mode == "120000";
    let mut head = if symlink {
        format!("{what}: a symbolic link, {bytes} bytes; its target as text (not followed):")
    } else {
        let unit = if lines == 1 { "line" } else { "lines" };
        format!("{what}: {bytes} bytes, {lines} {unit}")
    };
    let ranged = request.ranged();
    let start = request.start.unwrap_or(1);
    if ranged && !symlink {
        if start > lines {
            return (
                format!("{head} (lines {start}-: past the end; the file has {lines})"),
                None,
            );
        }
        let last = request.end.map_or(lines, |e| e.min(lines));
        head.push_str(&format!(" (lines {start}-{last})"));
    }
    let offset = request.offset;
    if !ranged && offset > 0 {
        if offset >= bytes {
            let past =
                format!("{head} (from byte {offset}: past the end; the file has {bytes} bytes)");
            return (past, None);
        }
        head.push_str(&format!(" (from byte {offset})"));
    }
    head.push('\n');
    let head = sanitize::sanitize(&head).into_owned();
    if !ranged {
        let body = page::render_reserving(&done.stdout, done.stdout_more, offset, head.len());
        return match body {
            Some(body) => {
                let next = body.next_offset.map(|n| (page::NEXT_OFFSET, n));
                (head + &body.text, next)
            }
            None => (head, None),
        };
    }
    // A line range pages by line: the page ends after whole lines, and the next call starts at
    // the first line not shown whole; a first line longer than the page is shown as far as it
    // fits, and the next call starts after it.
    let cut = page::cut(&done.stdout, done.stdout_more, head.len());
    let Some(consumed) = cut.consumed else {
        return (head + &cut.text, None);
    };
    let whole = done.stdout[..consumed]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    let next = start + whole.max(1);
    let text = format!("{head}{}{}", cut.text, page::continuation("start", next));
    (text, Some((page::NEXT_START, next)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_paths_are_normalised_and_stay_inside() {
        assert_eq!(tree_path("./a.txt"), Ok("a.txt".to_owned()));
        assert_eq!(tree_path("sub/../d/./a.txt"), Ok("d/a.txt".to_owned()));
        assert_eq!(tree_path("d/"), Ok("d".to_owned()));
        assert_eq!(tree_path("."), Err(ROOT_REFUSAL.to_owned()));
        assert_eq!(tree_path("l/../../x"), Err(PATH_OUTSIDE.to_owned()));
    }

    #[test]
    fn entries_match_the_exact_path_and_hex_ids_only() {
        let listing = b"100644 blob ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12       4\td/a.txt\0\
040000 tree cd34cd34cd34cd34cd34cd34cd34cd34cd34cd34       -\td\0";
        let blob = find_entry(listing, "d/a.txt");
        assert_eq!(blob.as_ref().map(|e| e.size), Some(Some(4)));
        assert_eq!(
            find_entry(listing, "d").map(|e| e.kind),
            Some("tree".into())
        );
        assert_eq!(find_entry(listing, "a.txt"), None);
        let forged = b"100644 blob --output=x 4\ta\0";
        assert_eq!(find_entry(forged, "a"), None);
    }
}
