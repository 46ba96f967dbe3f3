//! The binary's command line: help, version, usage errors and exit codes.

mod common;

use common::stderr;
use std::path::Path;
use std::process::{Command, Output};

fn agentteams(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn help_and_version_go_to_stdout_and_exit_0() {
    let o = agentteams(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--serve-mcp NAME"));
    let o = agentteams(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("agentteams-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_server_names_the_choices_and_exits_2() {
    let o = agentteams(&["--serve-mcp", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "stdout carries protocol bytes only");
    let err = stderr(&o);
    assert!(
        err.starts_with("agentteams-mcp: unknown server 'nope'; choose from "),
        "{err}"
    );
    for name in agentteams_mcp_servers::Catalogue::PRODUCT.names() {
        assert!(err.contains(name), "{err}");
    }
    for fixture in common::FIXTURE_SERVERS {
        assert!(!err.contains(fixture), "{err}");
    }
    // The reference's own line, prefix and all, under --compat reference.
    let o = agentteams(&["--serve-mcp", "nope", "--compat", "reference"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "[serve-mcp] unknown server 'nope'; choose from gitread, recall\n"
    );
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    for (args, message) in [
        (&["--serve-mcp"][..], "--serve-mcp needs a value"),
        (
            &["--serve-mcp", "gitread", "--bogus"][..],
            "unknown option --bogus",
        ),
        (
            &["--serve-mcp", "gitread", "--root", "a", "--project", "b"][..],
            "--root and --project are the same option; give one",
        ),
        (&[][..], "nothing to do"),
        (
            &["--serve-mcp", "recall", "--lookup-from", "lots"][..],
            "--lookup-from needs a size such as 64M, 0 or none; not \"lots\"",
        ),
    ] {
        let o = agentteams(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

/// The global help, as `--help` prints it.
fn global_help() -> String {
    let o = agentteams(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_subcommand_prints_its_own_short_help() {
    let global = global_help();
    for args in [
        &["index", "--help"][..],
        &["index", "build", "--help"],
        &["audit", "--help"],
        &["audit", "verify", "--help"],
        &["audit", "verify", "-h"],
        &["client", "--help"],
        &["trust", "--help"],
        &["approval", "--help"],
    ] {
        let o = agentteams(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.starts_with("usage:") && help.contains(&format!("agentteams-mcp {} ", args[0])),
            "{args:?} printed no usage of its own:\n{help}"
        );
        // Options only the serve command reads: the global help's, not a subcommand's.
        assert!(
            !help.contains("--session-key-file") && !help.contains("--serve-mcp"),
            "{args:?} printed the global help:\n{help}"
        );
        assert!(
            help.lines().count() < global.lines().count(),
            "{args:?}: {} lines, the global help {}",
            help.lines().count(),
            global.lines().count()
        );
    }
}

#[test]
fn a_mistyped_command_is_refused_with_the_command_it_may_stand_for() {
    let cases: [(&[&str], &str); 10] = [
        (
            &["indx", "build"],
            "agentteams-mcp: unknown command indx (did you mean index?)",
        ),
        (
            &["clinet", "tools"],
            "agentteams-mcp: unknown command clinet (did you mean client?)",
        ),
        (
            &["adit", "verify", "x"],
            "agentteams-mcp: unknown command adit (did you mean audit?)",
        ),
        (
            &["turst", "list"],
            "agentteams-mcp: unknown command turst (did you mean trust?)",
        ),
        (
            &["aproval", "list"],
            "agentteams-mcp: unknown command aproval (did you mean approval?)",
        ),
        (
            &["index", "bulid"],
            "agentteams-mcp: index: unknown command bulid (did you mean build?)",
        ),
        (
            &["audit", "verfy", "x"],
            "agentteams-mcp: audit: unknown command verfy (did you mean verify?)",
        ),
        (
            &["trust", "lst"],
            "agentteams-mcp: trust: unknown command lst (did you mean list?)",
        ),
        (
            &["approval", "grnat", "x"],
            "agentteams-mcp: approval: unknown command grnat (did you mean grant?)",
        ),
        (
            &["client", "--url", "http://127.0.0.1:9/mcp", "tols"],
            "agentteams-mcp: client: unknown command tols (did you mean tools?)",
        ),
    ];
    for (args, line) in cases {
        let o = agentteams(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with(line), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // A word close to no command is named, with the commands there are.
    let err = stderr(&agentteams(&["frobnicate"]));
    assert!(
        err.starts_with("agentteams-mcp: unknown command frobnicate; give index, audit, client, trust, approval or --serve-mcp NAME"),
        "{err}"
    );
}

#[test]
fn the_help_lists_every_server_serve_mcp_accepts() {
    let help = global_help();
    for name in agentteams_mcp_servers::Catalogue::PRODUCT.names() {
        assert!(
            help.lines().any(|l| l.starts_with(&format!("  {name} "))),
            "--help has no line for {name}:\n{help}"
        );
        // Each one listed is one --serve-mcp accepts (none is refused as unknown).
        let o = agentteams(&["--serve-mcp", name, "--root", "/nonexistent"]);
        assert!(
            !stderr(&o).contains("unknown server"),
            "{name}: {}",
            stderr(&o)
        );
    }
}

/// The test fixtures are no product's: `--serve-mcp` refuses them, and only the fixtures' own
/// binary serves them.
#[test]
fn the_product_serves_no_fixture() {
    assert!(!global_help().contains("fixture"));
    for name in common::FIXTURE_SERVERS {
        let o = agentteams(&["--serve-mcp", name]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(
            stderr(&o).starts_with(&format!("agentteams-mcp: unknown server '{name}'")),
            "{name}: {}",
            stderr(&o)
        );
        let mut served = common::Host::start(name, Path::new("."), &[]);
        served.initialize("2025-06-18");
    }
}

#[test]
fn every_message_starts_with_the_binary_name() {
    let scratch = std::env::temp_dir().join(format!("voice-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let not_a_log = scratch.join("notes.txt");
    std::fs::write(&not_a_log, "hello\n").unwrap();
    let not_a_log = not_a_log.to_str().unwrap();
    let cases: [&[&str]; 12] = [
        &["--serve-mcp", "nope"],
        &["--serve-mcp", "gitread", "--root", "/nonexistent"],
        &["--serve-mcp", "recall", "--root", "/nonexistent"],
        &["--serve-mcp", "gitread", "--bogus"],
        &["index", "build", "--root", "/nonexistent"],
        &["index", "build", "--bogus"],
        &["audit", "verify", "/nonexistent/log"],
        &["audit", "verify", not_a_log],
        &["audit"],
        &["client", "tools"],
        &["trust"],
        &["approval", "frob"],
    ];
    for args in cases {
        let o = agentteams(args);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        let err = stderr(&o);
        assert!(!err.is_empty(), "{args:?}");
        for line in err.lines() {
            assert!(line.starts_with("agentteams-mcp: "), "{args:?}: {line}");
        }
    }
    std::fs::remove_dir_all(&scratch).unwrap();
}

/// `agentteams-mcp --help | head -1`: a reader that went away ends nothing in a panic (exit
/// 101); the exit code still says how the command went.
#[test]
fn a_closed_output_pipe_is_no_panic() {
    let closed = || {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        writer
    };
    for (args, code) in [
        (&["--help"][..], 0),
        (&["--version"], 0),
        (&["audit", "--help"], 0),
        (&["index", "--help"], 0),
        (&["approval", "--help"], 0),
        (&["client", "--help"], 0),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
            .args(args)
            .stdout(closed())
            .output()
            .expect("the binary runs");
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    }
    for (args, code) in [
        (&["indx"][..], 2),
        (&["index", "bulid"], 2),
        (&["audit"], 2),
        (&["--serve-mcp", "nope"], 2),
        (&["--serve-mcp", "gitread", "--root", "/nonexistent"], 2),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
            .args(args)
            .stderr(closed())
            .output()
            .expect("the binary runs");
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
}
