//! The binary's command line: help, version, usage errors and exit codes.

mod common;

use common::stderr;
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
        err.starts_with("[serve-mcp] unknown server 'nope'; choose from "),
        "{err}"
    );
    for name in agentteams_mcp_servers::SERVERS {
        assert!(err.contains(name), "{err}");
    }
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
    ] {
        let o = agentteams(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}
