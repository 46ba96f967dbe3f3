//! The command line's own inputs shaped by someone else, through the real binary: the project's
//! trust policy file as a FIFO, a device, a link out of the project; token files that never end.
//! Each must be refused (or read within its limit) quickly and in bounded memory; none may block.

mod common;

use common::{run_limited, stderr, TempDir};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// Address space the binary may use in these tests: far below what an unbounded read of
/// `/dev/zero` reaches within the time limit, far above what the command needs.
const MEMORY_LIMIT_KB: u64 = 262_144;

/// How long a refusal may take (a blocked open would take forever).
const PROMPT: Duration = Duration::from_secs(10);

/// Runs the binary with `args` under [`MEMORY_LIMIT_KB`], killed after [`PROMPT`].
fn run_bounded(args: &[&str]) -> (Output, Duration) {
    run_limited(MEMORY_LIMIT_KB, 10, args)
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

fn trust_dir(project: &Path) -> std::path::PathBuf {
    let dir = project.join(".agentteams");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_trust_file_that_is_a_fifo_or_a_device_is_refused_without_blocking() {
    for kind in ["fifo", "dev-zero", "dev-urandom"] {
        let project = TempDir::new(&format!("trust-{kind}"));
        let file = trust_dir(project.path()).join("mcp-trust.json");
        match kind {
            "fifo" => mkfifo(&file),
            "dev-zero" => std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            _ => std::os::unix::fs::symlink("/dev/urandom", &file).unwrap(),
        }
        for verb in [&["trust", "list"][..], &["trust", "audit"][..]] {
            let mut args = verb.to_vec();
            args.extend(["--project", project.path().to_str().unwrap()]);
            let (o, took) = run_bounded(&args);
            assert!(took < PROMPT, "{kind} {verb:?} took {took:?}");
            assert_eq!(o.status.code(), Some(2), "{kind} {verb:?}: {}", stderr(&o));
            // A FIFO inside the project is not a regular file; a link to a device leaves it.
            let why = if kind == "fifo" {
                "not a regular file"
            } else {
                "outside the project"
            };
            assert!(stderr(&o).contains(why), "{kind} {verb:?}: {}", stderr(&o));
        }
    }
}

#[test]
fn a_trust_file_larger_than_its_limit_is_refused_without_being_read() {
    let project = TempDir::new("trust-sparse");
    let file = trust_dir(project.path()).join("mcp-trust.json");
    // Sparse: 64 GiB of holes costs nothing on disk, but reading it whole would.
    std::fs::File::create(&file)
        .unwrap()
        .set_len(64 << 30)
        .unwrap();
    let (o, took) = run_bounded(&[
        "trust",
        "list",
        "--project",
        project.path().to_str().unwrap(),
    ]);
    assert!(took < PROMPT, "took {took:?}");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
}

#[test]
fn a_trust_policy_linking_out_of_the_project_is_neither_read_nor_written() {
    let tmp = TempDir::new("trust-link-out");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let outside_policy = outside.join("mcp-trust.json");
    let policy = r#"{"servers":{"http://127.0.0.1:1/mcp":{"level":"trusted"}},"version":1}"#;
    std::fs::write(&outside_policy, policy).unwrap();

    // `.agentteams` itself a link to the outside directory.
    let project = tmp.path().join("dir-link");
    std::fs::create_dir_all(&project).unwrap();
    std::os::unix::fs::symlink(&outside, project.join(".agentteams")).unwrap();
    // The policy file a link to the outside file.
    let project2 = tmp.path().join("file-link");
    std::os::unix::fs::symlink(&outside_policy, trust_dir(&project2).join("mcp-trust.json"))
        .unwrap();

    for project in [&project, &project2] {
        let p = project.to_str().unwrap();
        let (o, _) = run_bounded(&["trust", "list", "--project", p]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("outside the project"), "{}", stderr(&o));
        assert!(!String::from_utf8_lossy(&o.stdout).contains("127.0.0.1:1"));
        let (o, _) = run_bounded(&[
            "trust",
            "allow",
            "--url",
            "http://127.0.0.1:2/mcp",
            "--project",
            p,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&outside_policy).unwrap(), policy);
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    }
}

#[test]
fn token_files_that_never_end_are_refused_in_bounded_memory() {
    let tmp = TempDir::new("token-zero");
    let zero = tmp.path().join("token");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let zero = zero.to_str().unwrap();
    // The client: refused before connecting (the URL is never reached).
    let (o, took) = run_bounded(&[
        "client",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--token-file",
        zero,
        "info",
    ]);
    assert!(took < PROMPT, "client took {took:?}");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
    // The HTTP server: refuses to start.
    let root = TempDir::new("token-zero-root");
    let (o, took) = run_bounded(&[
        "--serve-mcp",
        "recall",
        "--root",
        root.path().to_str().unwrap(),
        "--http",
        "--port",
        "0",
        "--auth-token-file",
        zero,
    ]);
    assert!(took < PROMPT, "server took {took:?}");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
}

#[test]
fn a_log_of_many_tiny_bad_lines_is_verified_in_bounded_memory() {
    // Two million three-byte lines, each a problem: stored whole, the report held about 280 MB
    // (some 47 bytes per byte of log); a larger log would exhaust any machine.
    let tmp = TempDir::new("audit-many-problems");
    let log = tmp.path().join("audit.log");
    std::fs::write(&log, "{}\n".repeat(2_000_000)).unwrap();
    // No line names a run: not an audit log, said in one line, still read in bounded memory.
    let (o, took) = run_limited(131_072, 60, ["audit", "verify", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).ends_with(" is not an audit log: none of its 2000000 lines is an audit record (a JSON object with a 32-hex-digit \"run\", as --audit-log writes)\n"),
        "{}",
        stderr(&o)
    );
    // After a genuine first record, every one of them is a problem of that log.
    drop(
        agentteams_mcp::audit::AuditLog::open(
            &log,
            &agentteams_mcp::audit::RunInfo::default(),
            agentteams_mcp::audit::Mode::Redacted,
        )
        .unwrap(),
    );
    let mut text = std::fs::read_to_string(&log).unwrap();
    let first = text.lines().last().unwrap().to_owned() + "\n";
    text = first + &"{}\n".repeat(2_000_000);
    std::fs::write(&log, text).unwrap();
    let (o, took) = run_limited(131_072, 60, ["audit", "verify", log.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let last = out.lines().last().unwrap_or_default();
    assert_eq!(last, "TAMPERED: 2000001 lines, 1 run, 2000001 problems");
    assert!(out.contains("more problems not listed"), "{last}");
    assert!(out.lines().count() < 2_000, "every problem was listed");
}
