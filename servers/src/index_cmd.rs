//! `agentteams-mcp index ...`: reads the command line of `index build`, runs the builder
//! ([`crate::index::build`]) and tells the user what it wrote. The builder itself never reads
//! argv or prints.

use crate::cli::{unknown_command, Args, UsageError};
use crate::gitread::{GitSettings, MemoryLimit, MEMORY_LIMIT_OPTION};
use crate::index::{self, BuildReport, Options};
use crate::startup;
use agentteams_mcp::voice::{counted, noun_for, say, usage_line, PREFIX};
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

const USAGE: &str =
    "usage: agentteams-mcp index build [--root DIR] [--team-dir DIR] [--description FILE]
                                 [--framework NAME] [--python PATH] [--git-memory-limit SIZE]

  --root DIR            the project to index (default: the current directory)
  --team-dir DIR        where references/ is written, relative to the root unless absolute
                        (default: the team dir that already holds an index, else the first of
                        .claude/agents, .github/agents, .goose, .codex/agents, .goose/recipes that
                        exists, else the root)
  --description FILE    the project description (JSON) to take project_name,
                        memory_index_extra_dirs, memory_index_exclude and code_index_extra_dirs
                        from, relative to the root unless absolute (default:
                        <root>/.agentteams/brief.json, else <team dir>/_build-description.json,
                        else none: the project name is the root directory's name)
  --framework NAME      the framework recorded in the indexes (default: the description's
                        \"framework\" string, else empty)
  --python PATH         the Python interpreter whose environment the API partitions read
                        (its sys.path, asked once, from /, with -E -s, for at most 10 s);
                        default: the project's .venv and venv folders, read without running
                        anything
  --git-memory-limit SIZE
                        address space the `git ls-files` listing may use: 1G (the default),
                        512M, a number of bytes (at least 64M), or none

exit codes: 0 built; 1 the build failed; 2 usage error or unusable root";

/// Files between two progress lines on a terminal.
const PROGRESS_EVERY: usize = 100;

/// Runs `index ...` with the arguments after `index`; returns the exit status (2 for usage
/// errors). `exec_helper` is the running binary when it implements gitread's exec-helper mode.
pub fn run(raw: Vec<String>, exec_helper: Option<PathBuf>) -> u8 {
    if raw.iter().any(|a| a == "--help" || a == "-h") {
        say(false, USAGE);
        return 0;
    }
    let options = match parse(raw, exec_helper) {
        Ok(parsed) => parsed,
        Err(e) => {
            say(true, &usage_line(Some("index"), &e));
            return 2;
        }
    };
    // An unusable root is the same mistake, and the same exit, as for --serve-mcp.
    let root = match startup::project_dir(&options.root) {
        Ok(root) => root,
        Err(e) => {
            note!(
                "{PREFIX}index build: {e}; {}",
                startup::directory_suggestion(&e)
            );
            return 2;
        }
    };
    let started = Instant::now();
    let show_progress = std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if show_progress && (done % PROGRESS_EVERY == 0 || done == total) {
            let files = noun_for(total as u64, "file");
            let _ = write!(
                std::io::stderr(),
                "\r{PREFIX}index build: code index: {done}/{total} {files}"
            );
            if done == total {
                note!("");
            }
        }
    };
    match index::build(&options, &mut progress) {
        Ok(report) => {
            let secs = started.elapsed().as_secs_f64();
            let n = |count: usize, noun: &str| counted(count as u64, noun);
            note!(
                "{PREFIX}index build: memory index: {}, {}, {}; {}",
                n(report.memory_sources, "source"),
                n(report.memory_documents, "document"),
                n(report.memory_terms, "term"),
                n(report.memory_sections, "section")
            );
            note!(
                "{PREFIX}index build: code index: {}, {}, {}, {} ({})",
                n(report.code_files, "file"),
                n(report.code_documents, "document"),
                n(report.code_terms, "term"),
                n(report.code_definitions, "definition"),
                {
                    let rewrote = if report.rewritten.is_empty() {
                        "no partition changed".to_owned()
                    } else {
                        format!("rewrote {}", report.rewritten.join(", "))
                    };
                    let rewrote = match report.code_lists_copied {
                        Some(copied) => format!(
                            "{rewrote} with {copied} of {} copied from the previous local.json",
                            counted(report.code_terms as u64, "term list"),
                        ),
                        None => rewrote,
                    };
                    if report.cache_used {
                        let read = report.code_sources.saturating_sub(report.code_files_reused);
                        format!(
                            "{rewrote}; {} unchanged since the last build, {} read",
                            n(report.code_files_reused, "file"),
                            n(read, "file")
                        )
                    } else {
                        rewrote
                    }
                }
            );
            note!(
                "{PREFIX}index build: wrote {} in {secs:.2} s ({:.1} MB of source, {:.1} MB/s)",
                report.team_dir.join("references").display(),
                report.source_bytes as f64 / 1e6,
                report.source_bytes as f64 / 1e6 / secs.max(1e-9)
            );
            for line in afterword(&root, &report) {
                note!("{line}");
            }
            0
        }
        Err(message) => {
            // The message can quote a path or text from the project.
            note!(
                "{PREFIX}index build: {}",
                agentteams_mcp::sanitize::sanitize(&message)
            );
            1
        }
    }
}

/// What a user should know after a build: that `references/` is generated (and where it went
/// when no team dir holds it), and a memory index built from one document or none.
pub fn afterword(root: &Path, report: &BuildReport) -> Vec<String> {
    let mut lines = Vec::new();
    let written = agentteams_mcp::sanitize::path_line(&report.team_dir.join("references"));
    if report.team_dir == root {
        lines.push(format!(
            "{PREFIX}index build: {written} is generated (no team dir such as .claude/agents exists, so it went in the project root); rebuild it rather than edit it, add references/ to .gitignore if it should not be committed, or pass --team-dir"
        ));
    } else {
        lines.push(format!(
            "{PREFIX}index build: {written} is generated; rebuild it rather than edit it"
        ));
    }
    if report.memory_sources <= 1 {
        lines.push(format!(
            "{PREFIX}index build: warning: the memory index found {}; list the folders of the project's notes in memory_index_extra_dirs of the project description (.agentteams/brief.json, or --description FILE)",
            counted(report.memory_sources as u64, "source")
        ));
    }
    lines
}

/// The options of `index build`, for a mistyped one's hint.
const OPTIONS: [&str; 6] = [
    "--root",
    "--team-dir",
    "--description",
    "--framework",
    "--python",
    MEMORY_LIMIT_OPTION,
];

/// `build` and its options, each at most once.
fn parse(raw: Vec<String>, exec_helper: Option<PathBuf>) -> Result<Options, UsageError> {
    let mut args = Args::new(raw);
    match args.positional().as_deref() {
        Some("build") => {}
        Some(other) => return Err(unknown_command(other, &["build"], None)),
        None => return Err(UsageError("give an index command: build".into())),
    }
    let root = match args.value("--root")? {
        Some(r) => PathBuf::from(r),
        None => std::env::current_dir()
            .map_err(|e| UsageError(format!("cannot read the current directory: {e}")))?,
    };
    let team_dir = args.value("--team-dir")?.map(PathBuf::from);
    let description = args.value("--description")?.map(PathBuf::from);
    let framework = args.value("--framework")?;
    let python = args.value("--python")?.map(PathBuf::from);
    let memory_limit = match args.value(MEMORY_LIMIT_OPTION)? {
        Some(size) => MemoryLimit::parse(&size).map_err(UsageError)?,
        None => MemoryLimit::default(),
    };
    args.finish_among(&OPTIONS)?;
    Ok(Options {
        root,
        team_dir,
        description,
        framework,
        python,
        git: GitSettings {
            memory_limit,
            exec_helper,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_usage_error_says_what_was_wrong() {
        for (given, message) in [
            (&[][..], "give an index command: build"),
            (&["rebuild"][..], "unknown command rebuild"),
            (&["build", "--root"][..], "--root needs a value"),
            (
                &["build", "--rot", "x"][..],
                "unknown option --rot (did you mean --root?)",
            ),
            (
                &["build", "--root", "a", "--root", "b"][..],
                "--root given more than once",
            ),
            (&["build", "--framework"][..], "--framework needs a value"),
            (&["build", "x"][..], "unexpected argument x"),
            (&["build", "--git-memory-limit", "lots"][..], "not \"lots\""),
        ] {
            let error = parse(args(given), None).unwrap_err().0;
            assert!(error.contains(message), "{given:?}: {error}");
            assert_eq!(run(args(given), None), 2, "{given:?}");
        }
    }

    #[test]
    fn arguments_parse() {
        let given = args(&[
            "build",
            "--team-dir",
            "t",
            "--root",
            "/r",
            "--framework",
            "claude",
            "--description=d.json",
            "--git-memory-limit",
            "none",
        ]);
        let helper = PathBuf::from("/bin/agentteams-mcp");
        assert_eq!(
            parse(given, Some(helper.clone())).unwrap(),
            Options {
                root: PathBuf::from("/r"),
                team_dir: Some(PathBuf::from("t")),
                description: Some(PathBuf::from("d.json")),
                framework: Some("claude".into()),
                python: None,
                git: GitSettings {
                    memory_limit: MemoryLimit::Unlimited,
                    exec_helper: Some(helper),
                },
            }
        );
    }
}
