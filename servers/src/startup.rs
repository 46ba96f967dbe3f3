//! What a command checks before it starts work, and the lines it says on stderr when it does:
//! the project root (refused with exit 2 and one line saying what to pass instead), recall's
//! missing index, a tool policy that leaves nothing or has a rule matching no tool, and what a
//! serving process serves.

use std::path::{Path, PathBuf};

use agentteams_mcp::policy::Policy;
use agentteams_mcp::sanitize::path_line as one_line;
use agentteams_mcp::voice::PREFIX;

/// Why a root cannot be a project directory at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotADirectory {
    Missing(PathBuf),
    File(PathBuf),
    Unusable(PathBuf, String),
}

impl std::fmt::Display for NotADirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotADirectory::Missing(p) => write!(f, "{} does not exist", one_line(p)),
            NotADirectory::File(p) => write!(f, "{} is a file, not a directory", one_line(p)),
            NotADirectory::Unusable(p, e) => write!(f, "cannot use {}: {e}", one_line(p)),
        }
    }
}

/// `given` made absolute (against the current directory) and canonical, when it is a directory.
pub fn project_dir(given: &Path) -> Result<PathBuf, NotADirectory> {
    let absolute = std::env::current_dir()
        .map(|cwd| cwd.join(given))
        .unwrap_or_else(|_| given.to_path_buf());
    match std::fs::canonicalize(&absolute) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(NotADirectory::File(absolute)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(NotADirectory::Missing(absolute)),
        Err(e) => Err(NotADirectory::Unusable(absolute, e.to_string())),
    }
}

/// What to pass instead of a root that is not a directory, for servers other than gitread.
pub fn directory_suggestion(error: &NotADirectory) -> String {
    match error {
        NotADirectory::File(file) => match file.parent() {
            Some(parent) => format!("pass --root {}", one_line(parent)),
            None => PASS_PROJECT.to_owned(),
        },
        _ => PASS_PROJECT.to_owned(),
    }
}

const PASS_PROJECT: &str = "pass --root with the project's directory";

/// The root server `name` serves, checked before serving: a directory, and for gitread the top
/// of a git work tree. The error is the one line the process prints (after [`PREFIX`]) before
/// exiting 2.
pub fn checked_root(name: &str, given: &Path) -> Result<PathBuf, String> {
    let refuse = |what: String, instead: String| format!("{what}; {instead}");
    match project_dir(given) {
        Ok(root) if name == "gitread" => match crate::gitread::startup_refusal(&root) {
            Some(why) => Err(why),
            None => Ok(root),
        },
        Ok(root) => Ok(root),
        Err(e) if name == "gitread" => {
            let path = match &e {
                NotADirectory::Missing(p)
                | NotADirectory::File(p)
                | NotADirectory::Unusable(p, _) => p.clone(),
            };
            Err(refuse(
                e.to_string(),
                crate::gitread::root_suggestion(&path),
            ))
        }
        Err(e) => Err(refuse(e.to_string(), directory_suggestion(&e))),
    }
}

/// recall's one line when `root` holds no index yet: it serves anyway (an index may be built
/// while it runs), and every call says the same until then.
pub fn recall_notice(root: &Path) -> Option<String> {
    use crate::corpus::teamdir::{find_team_dir, CODE_MARKER, MEMORY_MARKER, TEAM_DIRS};
    let missing: Vec<&str> = [(MEMORY_MARKER, "memory index"), (CODE_MARKER, "code index")]
        .into_iter()
        .filter(|(marker, _)| find_team_dir(root, marker, crate::compat::Compat::Product).is_err())
        .map(|(_, what)| what)
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{PREFIX}recall: no {} under {} (looked in {}); serving anyway, its tools answer once `agentteams-mcp index build --root {}` has run",
        missing.join(" and no "),
        one_line(root),
        TEAM_DIRS.join(", "),
        one_line(root)
    ))
}

/// The warning when the policy leaves none of the server's `tools` (names) to serve.
pub fn empty_policy_warning(server: &str, tools: &[String], rules: &[String]) -> String {
    format!(
        "{PREFIX}warning: the tool policy ({}) leaves none of {server}'s tools ({}); tools/list will be empty",
        rules.join(", "),
        tools.join(", ")
    )
}

/// One warning per rule of `policy` whose pattern matches none of the server's `tools` (names):
/// a misspelt name or another server's tool would otherwise allow or refuse nothing unnoticed.
pub fn unmatched_rule_warnings(server: &str, tools: &[String], policy: &Policy) -> Vec<String> {
    policy
        .rules()
        .iter()
        .filter(|rule| !tools.iter().any(|t| rule.pattern.matches(t)))
        .map(|rule| {
            format!(
                "{PREFIX}warning: the tool policy's rule {rule} matches none of {server}'s tools ({}); check its spelling and the server it is for",
                tools.join(", ")
            )
        })
        .collect()
}

/// How a serving process is reached, for [`serving_line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    /// HTTP; `until_stdin_closes` when end of input also stops it.
    Http {
        until_stdin_closes: bool,
    },
}

/// The line a serving process prints on a terminal: what it serves and how to stop it.
pub fn serving_line(name: &str, root: &Path, transport: Transport) -> String {
    let root = one_line(root);
    match transport {
        Transport::Stdio => format!(
            "{PREFIX}serving {name} for {root} over stdio: an MCP client speaks JSON-RPC on stdin and stdout; press Ctrl-D to stop (Ctrl-C at once)"
        ),
        Transport::Http { until_stdin_closes: false } => format!(
            "{PREFIX}serving {name} for {root} over HTTP at the address below; press Ctrl-C to stop"
        ),
        Transport::Http { until_stdin_closes: true } => format!(
            "{PREFIX}serving {name} for {root} over HTTP at the address below; press Ctrl-D to stop (Ctrl-C at once)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serving_line_says_what_and_how_to_stop() {
        let root = Path::new("/p");
        assert_eq!(
            serving_line("gitread", root, Transport::Stdio),
            "agentteams-mcp: serving gitread for /p over stdio: an MCP client speaks JSON-RPC on stdin and stdout; press Ctrl-D to stop (Ctrl-C at once)"
        );
        assert_eq!(
            serving_line("recall", root, Transport::Http { until_stdin_closes: false }),
            "agentteams-mcp: serving recall for /p over HTTP at the address below; press Ctrl-C to stop"
        );
        assert!(serving_line(
            "recall",
            root,
            Transport::Http {
                until_stdin_closes: true
            }
        )
        .ends_with("press Ctrl-D to stop (Ctrl-C at once)"));
    }

    #[test]
    fn paths_stay_on_one_line() {
        assert_eq!(
            one_line(Path::new("/a\nb\tc\u{1b}[2J")),
            "/a\\x0ab\\x09c\\x1b[2J"
        );
    }

    #[test]
    fn a_file_root_suggests_its_folder() {
        let e = NotADirectory::File(PathBuf::from("/p/README.md"));
        assert_eq!(e.to_string(), "/p/README.md is a file, not a directory");
        assert_eq!(directory_suggestion(&e), "pass --root /p");
        let e = NotADirectory::Missing(PathBuf::from("/nonexistent"));
        assert_eq!(
            directory_suggestion(&e),
            "pass --root with the project's directory"
        );
    }
}
