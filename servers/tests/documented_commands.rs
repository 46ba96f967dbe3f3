//! Every `agentteams-mcp` command README.md and docs/ show runs as written: each is run (in a
//! scratch project, a git repository with its indexes built, with a scratch HOME, no input, for at
//! most a few seconds) and must not be refused for an option, argument or subcommand the binary
//! does not have; one that needs nothing outside that project must succeed. A document and the
//! binary cannot drift apart unnoticed. Commands in a shell pipeline or with a substitution are
//! left out (their shell does the work); a command that needs an outside service (a URL, a path
//! or name the reader fills in) may fail for that reason, never for its words.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agentteams-mcp");
/// How long one documented command may run before it is ended (a server runs until stopped).
const RUN_FOR: Duration = Duration::from_secs(3);
/// What the binary says of words it does not know: a documented command must never get one.
const REFUSALS: [&str; 3] = ["unknown option", "unexpected argument", "unknown command"];

/// The documents the command lines come from.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut docs = vec![root.join("README.md"), root.join("SECURITY.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// The `agentteams-mcp` command lines (the program by name or by a path to it) of `text`'s code
/// blocks (continuations joined, a `$ `
/// prompt dropped), each with its line number; those a shell would have to expand are left out.
fn command_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let line = line.trim();
        let (start, joined) = match pending.take() {
            Some((start, mut so_far)) => {
                so_far.push(' ');
                so_far.push_str(line);
                (start, so_far)
            }
            None => (n + 1, line.trim_start_matches("$ ").to_owned()),
        };
        if let Some(open) = joined.strip_suffix('\\') {
            pending = Some((start, open.trim_end().to_owned()));
            continue;
        }
        let joined = without_comment(&joined);
        let shell = ['|', ';', '>', '<', '`', '&', '*'];
        // A synopsis (`[--root DIR]`, `...`) shows a command's form, not a command to run.
        let synopsis = joined.contains("[-") || joined.contains("...");
        let program = joined.split_whitespace().next().unwrap_or("");
        let path = program.starts_with('/') || program.starts_with("./");
        let ours = program == "agentteams-mcp" || (path && program.ends_with("/agentteams-mcp"));
        if ours
            && !synopsis
            && !joined.contains(shell)
            && !joined.contains("$(")
            && !joined.contains("${")
        {
            out.push((start, joined));
        }
    }
    out
}

/// `line` without a trailing shell comment (a `#` that starts a word outside quotes).
fn without_comment(line: &str) -> String {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if previous.is_whitespace() => return line[..at].trim_end().to_owned(),
            _ => {}
        }
        previous = c;
    }
    line.to_owned()
}

/// `line` split into words as a POSIX shell would (quotes removed, `$VAR` left as written).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

/// How a documented command ended: its exit code (`None`: still running when ended, a server)
/// and its stderr.
struct Ran {
    code: Option<i32>,
    stderr: String,
}

/// Runs the binary with `args` in `dir`.
fn run(args: &[String], dir: &Path) -> Ran {
    // The documents assume the binary installed on PATH (README, Install).
    let bin_dir = Path::new(BIN).parent().unwrap().to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin_dir];
    dirs.extend(std::env::split_paths(&path));
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("AGENTTEAMS_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let started = Instant::now();
    let mut code = None;
    while started.elapsed() < RUN_FOR {
        if let Some(status) = child.try_wait().unwrap() {
            code = status.code();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ran {
        code,
        stderr: reader.join().unwrap_or_default(),
    }
}

/// Whether `command` needs something outside this machine's scratch project to succeed: a server
/// at a URL, or a placeholder the reader fills in (`FILE`, `/path/to/repo`, `/srv/...`).
fn needs_outside(command: &str) -> bool {
    let words = words(command);
    // `logout` forgets a stored login: the URL only names it, nothing is reached.
    if words.last().is_some_and(|w| w == "logout") {
        return false;
    }
    words.iter().any(|w| {
        let placeholder = w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        placeholder
            || w.starts_with("http")
            || ["/path/", "/srv/", "/etc/", "/var/", "$"]
                .iter()
                .any(|p| w.contains(p))
    })
}

/// A scratch project like the one the documents assume: a git repository with a commit, whose
/// indexes the binary built.
fn project(dir: &Path) {
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    std::fs::write(
        dir.join("README.md"),
        "# Notes

Rotate the session key monthly.
",
    )
    .unwrap();
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "README.md"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "first",
    ]);
    let built = Command::new(BIN)
        .args(["index", "build", "--root", "."])
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(built, "index build");
}

#[test]
fn every_documented_command_is_one_the_binary_takes() {
    let scratch = std::env::temp_dir().join(format!("documented-{}", std::process::id()));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (line, command) in command_lines(&text) {
            let dir = scratch.join(checked.to_string());
            std::fs::create_dir_all(&dir).unwrap();
            project(&dir);
            let args: Vec<String> = words(&command).into_iter().skip(1).collect();
            let ran = run(&args, &dir);
            println!("{}:{line}: {command}: {:?}", doc.display(), ran.code);
            checked += 1;
            let name = doc.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(refusal) = REFUSALS.iter().find(|r| ran.stderr.contains(*r)) {
                wrong.push(format!(
                    "{name}:{line}: {command}\n  -> {refusal}: {}",
                    ran.stderr
                ));
            } else if !needs_outside(&command) && ran.code.is_some_and(|c| c != 0) {
                // Needs nothing but the project: it must succeed (a server still running when
                // ended counts as serving).
                let code = ran.code.unwrap_or_default();
                wrong.push(format!(
                    "{name}:{line}: {command}\n  -> exit {code}: {}",
                    ran.stderr
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(checked >= 20, "only {checked} documented commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn command_lines_are_read_as_a_shell_would() {
    let text = "text\n```sh\n$ agentteams-mcp a \\\n  --b 'c d' # note\nagentteams-mcp x | y\nagentteams-mcp s [--r DIR]\nother\n```\nagentteams-mcp outside\n";
    assert_eq!(
        command_lines(text),
        [(3, "agentteams-mcp a --b 'c d'".to_owned())]
    );
    assert_eq!(without_comment("a '#b' c#d # e"), "a '#b' c#d");
    assert_eq!(words("a --b 'c d' \"e\" ''"), ["a", "--b", "c d", "e", ""]);
}
