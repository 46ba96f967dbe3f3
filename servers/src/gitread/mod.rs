//! gitread: read-only git history for an agent, served so that no hostile repository can turn it
//! against its host (no program from the repository runs, nothing outside the root is read, nothing
//! is written, no network).
//!
//! A call runs, in the reference's order: the repository checks ([`repo`]), the config pre-flight
//! ([`config_check`], cached while its files are unchanged), the argument rules ([`tools`]), then one
//! git process with the hardened invocation ([`invoke`]) under the timeout and cancellation of
//! [`process`]; its output is neutralised and capped by [`sanitize`]. SECURITY.md maps each threat
//! of GIT-THREATS.md to the defence here and the test that proves it. Commands that read the index
//! are refused while it is split ([`split_index`]); per-command corrections are in [`quirks`].

mod blocked;
mod config_check;
mod containment;
mod gate;
mod invoke;
mod launch;
mod memory;
mod page;
mod process;
mod quirks;
mod repo;
mod resources;
mod sanitize;
mod server;
mod split_index;
mod stamp;
mod tools;

pub use gate::{MAX_CONCURRENT_GIT, MAX_QUEUED_GIT, QUEUE_WAIT};
pub use invoke::GIT_ENV;
pub use launch::{exec_helper, EXEC_HELPER_FLAG};
pub use memory::{
    MemoryLimit, DEFAULT_GIT_MEMORY_LIMIT, MIN_GIT_MEMORY_LIMIT, NO_MECHANISM,
    OPTION as MEMORY_LIMIT_OPTION,
};
pub use process::TIMEOUT;
pub use resources::{
    COMMIT_TEMPLATE, DIFF_TEMPLATE, EXPLAIN_COMMIT, FILE_TEMPLATE, MAX_COMPLETIONS,
    MAX_REFS_LISTED, MAX_RESOURCE_BYTES, REVIEW_DIFF,
};
pub use sanitize::{sanitize, MAX_OUTPUT, TRUNCATION_MARKER};
pub use server::{GitRead, GitSettings};

use std::path::Path;

/// The `logger` of gitread's log messages.
/// Why `root` (canonical) can never be served, checked once before serving: no `.git` in it
/// ([`repo::inspect`]'s first test, so the start-up check and every call's check cannot
/// disagree). A `.git` that is there but refused (it leads outside, alternates, unreadable) stays
/// a per-call refusal: the repository may change while the server runs, and each call says why.
/// The message is one line that names the directory to pass instead when a work tree holds `root`.
pub fn startup_refusal(root: &Path) -> Option<String> {
    match repo::inspect(root) {
        Err(repo::RepoError::NotRoot(_)) => {}
        _ => return None,
    }
    let dot_git = root.join(".git");
    if std::fs::symlink_metadata(&dot_git).is_ok() {
        return Some(format!(
            "{} cannot be followed (a dangling link?); {}",
            agentteams_mcp::sanitize::path_line(&dot_git),
            PASS_WORK_TREE
        ));
    }
    Some(match root.parent().and_then(repo::nearest_work_tree) {
        Some(top) => format!(
            "{} is inside the git work tree {}, not at its root; pass --root {}",
            agentteams_mcp::sanitize::path_line(root),
            agentteams_mcp::sanitize::path_line(&top),
            agentteams_mcp::sanitize::path_line(&top)
        ),
        None => format!(
            "{} is not in a git work tree (no .git in it or any folder above); {PASS_WORK_TREE}",
            agentteams_mcp::sanitize::path_line(root)
        ),
    })
}

/// What to pass instead of `path` (a root that does not exist or is not a directory): the work
/// tree that holds it, else the general advice.
pub fn root_suggestion(path: &Path) -> String {
    match repo::nearest_work_tree(path) {
        Some(top) => format!("pass --root {}", agentteams_mcp::sanitize::path_line(&top)),
        None => PASS_WORK_TREE.to_owned(),
    }
}

const PASS_WORK_TREE: &str =
    "pass --root with the top directory of the project's git work tree (the one holding .git)";
