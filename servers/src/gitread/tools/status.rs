//! `git_status`: the work tree's uncommitted changes, porcelain v1, submodules left out; takes no
//! locks, and is refused while the index is split (it reads the index). A bare repository has no
//! work tree, and says so.

use super::args::{owned, schema, with_path};
use super::row::{GitTool, Run};
use crate::compat::Compat;
use agentteams_mcp::json::Map;
use agentteams_mcp::server::Tool;

pub const GIT_STATUS: &str = "git_status";

pub const TOOL: GitTool = GitTool {
    name: GIT_STATUS,
    declare,
    reference: Some(reference),
    run: Run::Git(argv),
    empty_note,
    reads_index: true,
    needs_work_tree: true,
    ..GitTool::PLAIN
};

fn declare() -> Tool {
    with_path(Tool::read_only(
        GIT_STATUS,
        "List uncommitted changes, porcelain v1 (\"M \" staged, \" M\" modified, \"??\" \
         untracked). Use it to see the work in progress.",
        schema(&[], []),
    ))
}

fn reference() -> Tool {
    with_path(Tool::read_only(
        GIT_STATUS,
        "Working-tree status (porcelain), without locks. Read-only.",
        schema(&[], []),
    ))
}

/// The same argv in both modes; a path is ignored, as the reference ignores it.
fn argv(_: Compat, _: &Map, _: Option<&str>) -> Result<Vec<String>, String> {
    Ok(owned(&[
        "status",
        "--porcelain=v1",
        "--ignore-submodules=all",
    ]))
}

fn empty_note(_: &Map, _: Option<&str>) -> Result<String, String> {
    Ok("(working tree clean: nothing staged, modified or untracked)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_ignores_the_path() {
        assert_eq!(
            argv(Compat::Reference, &Map::new(), Some("a.txt")),
            Ok(vec![
                "status".into(),
                "--porcelain=v1".into(),
                "--ignore-submodules=all".into()
            ])
        );
    }
}
