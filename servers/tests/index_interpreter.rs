//! `index build --python PATH` through the real binary: the environment of an interpreter the
//! user names (its `sys.path`) feeds the API partitions, editable installs included, and an
//! interpreter that fails, floods its output, hangs or does not exist stops the build with an
//! error naming it before anything is written. An interpreter inside the project is never run
//! unless named.

mod recall_support;

use agentteams_mcp::json::Value;
use agentteams_mcp_servers::index::interpreter::INTERPRETER_TIMEOUT;
use recall_support::common::stderr;
use recall_support::{parse_file, str_field, Project};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MODULES: &str = "references/code-index/api-modules.json";

/// An executable shell script standing in for an interpreter: it records how it was run
/// (working directory and arguments) in `ran.log` beside it, then runs `body`.
fn interpreter(dir: &Project, name: &str, body: &str) -> String {
    let log = dir.path("ran.log");
    let script = dir.write(
        &format!("bin/{name}"),
        &format!(
            "#!/bin/sh\necho \"$PWD $*\" > '{}'\n{body}\n",
            log.display()
        ),
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.to_string_lossy().into_owned()
}

fn definitions(project: &Project) -> Vec<(String, String)> {
    let modules = parse_file(project, MODULES);
    let docs: Vec<Value> = modules
        .get("documents")
        .and_then(Value::as_array)
        .map(|a| a.iter().cloned().collect())
        .unwrap_or_default();
    docs.iter()
        .map(|d| {
            let symbol = d.get("symbol").and_then(Value::as_str).unwrap_or("-");
            (str_field(d, "path").to_owned(), symbol.to_owned())
        })
        .collect()
}

/// A project interpreter at `.venv/bin/python` that leaves `python.ran` beside itself if it is
/// ever run.
struct PlantedInterpreter(PathBuf);

impl PlantedInterpreter {
    fn new(project: &Project) -> PlantedInterpreter {
        let path = project.write(".venv/bin/python", "#!/bin/sh\ntouch \"$0.ran\"\n");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        PlantedInterpreter(path)
    }

    #[track_caller]
    fn assert_never_ran(&self) {
        assert!(!Path::new(&format!("{}.ran", self.0.display())).exists());
    }
}

#[test]
fn the_named_interpreters_environment_and_its_editable_installs_feed_the_api_partitions() {
    let project = Project::new("py-named");
    project.write("app.py", "import gears\nimport cogs\n");
    // A planted project interpreter: never run, because it is not the one named.
    let planted = PlantedInterpreter::new(&project);
    // The user's environment, outside the project: an installed distribution and an editable
    // install of a sibling checkout.
    let env = Project::new("py-named-env");
    let site = env.path("lib/site-packages");
    env.write(
        "lib/site-packages/gears-2.0.dist-info/METADATA",
        "Name: gears\nVersion: 2.0\nSummary: Gears.\n",
    );
    env.write(
        "lib/site-packages/gears-2.0.dist-info/RECORD",
        "gears/__init__.py,,\n",
    );
    env.write(
        "lib/site-packages/gears/__init__.py",
        "def turn(n):\n    \"\"\"Turn n times.\"\"\"\n",
    );
    let sibling = Project::new("py-named-sibling");
    sibling.write(
        "src/cogs/__init__.py",
        "class Cog:\n    \"\"\"A cog.\"\"\"\n",
    );
    env.write(
        "lib/site-packages/cogs-0.1.dist-info/METADATA",
        "Name: cogs\nVersion: 0.1\n",
    );
    env.write(
        "lib/site-packages/cogs-0.1.dist-info/direct_url.json",
        &format!(
            "{{\"url\": \"file://{}\", \"dir_info\": {{\"editable\": true}}}}",
            sibling.root.display()
        ),
    );
    let python = interpreter(
        &env,
        "python",
        &format!("echo '[\"\", \"relative\", \"{}\"]'", site.display()),
    );
    let out = project.index_build(&["--python", &python]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        definitions(&project),
        [
            ("cogs".to_owned(), "Cog".to_owned()),
            ("gears".to_owned(), "turn".to_owned())
        ]
    );
    let ran = env.read("ran.log");
    assert_eq!(ran.trim_end(), format!("/ -E -s -c {}", script_text(&ran)));
    planted.assert_never_ran();
}

/// The script argument as the stand-in logged it (everything after `-c `).
fn script_text(ran: &str) -> &str {
    ran.trim_end().split_once(" -c ").map_or("", |(_, s)| s)
}

#[test]
fn without_python_the_project_interpreter_is_never_run() {
    let project = Project::new("py-unnamed");
    project.write("app.py", "import gears\n");
    let planted = PlantedInterpreter::new(&project);
    project.build_indexes();
    planted.assert_never_ran();
}

#[test]
fn a_failing_flooding_or_missing_interpreter_stops_the_build_before_any_write() {
    let env = Project::new("py-bad");
    let cases: Vec<(String, &str)> = vec![
        (
            interpreter(
                &env,
                "failing",
                "echo 'Traceback: no module named json' >&2; exit 3",
            ),
            "exited with status 3: Traceback: no module named json",
        ),
        (
            // What it says is shown escaped: no terminal control reaches the user.
            interpreter(
                &env,
                "hostile",
                "printf '\\033]52;c;eA==\\007\\342\\200\\256boom\\n' >&2; exit 4",
            ),
            "exited with status 4: \\x1b]52;c;eA==\\x07\\u{202e}boom",
        ),
        (
            interpreter(&env, "flooding", "head -c 400000 /dev/zero | tr '\\0' 'x'"),
            "printed more than 262144 bytes",
        ),
        (
            interpreter(&env, "odd", "echo '{\"not\": \"a list\"}'"),
            "unexpected answer: not a JSON array of folders",
        ),
        (
            env.path("bin/no-such-python")
                .to_string_lossy()
                .into_owned(),
            "cannot run it",
        ),
    ];
    for (python, expected) in cases {
        let project = Project::new("py-bad-project");
        project.write("app.py", "import gears\n");
        let out = project.index_build(&["--python", &python]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{python}: {err}");
        assert!(err.contains(&format!("--python {python}")), "{err}");
        assert!(err.contains(expected), "{expected:?} not in {err}");
        assert!(
            !project.path("references").exists(),
            "nothing written: {err}"
        );
    }
}

#[test]
fn a_hanging_interpreter_and_what_it_started_are_ended_after_the_timeout() {
    let env = Project::new("py-hang");
    let marker = env.path("child.pid");
    // The stand-in starts a child that would outlive it, then hangs.
    let python = interpreter(
        &env,
        "hanging",
        &format!("sleep 300 & echo $! > '{}'\nsleep 300", marker.display()),
    );
    let project = Project::new("py-hang-project");
    let started = Instant::now();
    let out = project.index_build(&["--python", &python]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not answer within 10s"), "{err}");
    // Ended by the timeout, not by the 300 s sleeps.
    assert_returned_by_the_deadline(started, &err);
    let child = env.read("child.pid");
    let alive = Path::new(&format!("/proc/{}", child.trim())).exists()
        && !std::fs::read_to_string(format!("/proc/{}/stat", child.trim()))
            .unwrap_or_default()
            .contains(") Z");
    assert!(!alive, "the interpreter's child {child} still runs");
}

/// A bound on a hang, not a measure of speed: the build returned within the interpreter's
/// deadline and slack for ending it, far below the 60 s a grandchild would hold it.
#[track_caller]
fn assert_returned_by_the_deadline(started: Instant, err: &str) {
    let bound = INTERPRETER_TIMEOUT + Duration::from_secs(5);
    assert!(started.elapsed() < bound, "{:?}: {err}", started.elapsed());
}

/// A stand-in that starts `sleep 60` in a new session (so outside its process group: not ours to
/// end), holding the stand-in's stdout open, and records its pid in `NAME.pid`; the stand-in
/// waits until it has left the group, then runs `tail`.
fn with_setsid_grandchild(env: &Project, name: &str, tail: &str) -> String {
    let pid = env.path(&format!("{name}.pid"));
    interpreter(
        env,
        name,
        &format!(
            "setsid sh -c 'echo $$ > \"{0}.new\"; mv \"{0}.new\" \"{0}\"; exec sleep 60' &\n\
             while [ ! -e \"{0}\" ]; do sleep 0.01; done\n{tail}",
            pid.display()
        ),
    )
}

/// Ends the grandchild a test started (it is outside every group the build ends).
fn end_grandchild(env: &Project, name: &str) {
    let pid = env.read(&format!("{name}.pid"));
    let _ = std::process::Command::new("kill").arg(pid.trim()).status();
}

#[test]
fn a_grandchild_outside_the_group_holding_stdout_open_is_not_waited_for() {
    let env = Project::new("py-setsid");
    // The stand-in answers and exits, or hangs: either way the grandchild keeps the pipe open.
    for (name, tail, expected) in [
        ("answers", "echo '[]'", "kept its output open past 10s"),
        ("hangs", "sleep 60", "did not answer within 10s"),
    ] {
        let python = with_setsid_grandchild(&env, name, tail);
        let project = Project::new("py-setsid-project");
        project.write("app.py", "import gears\n");
        let started = Instant::now();
        let out = project.index_build(&["--python", &python]);
        let err = stderr(&out);
        end_grandchild(&env, name);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("--python {python}: {expected}")),
            "{name}: {err}"
        );
        assert_returned_by_the_deadline(started, &err);
        assert!(!project.path("references").exists(), "{name}: {err}");
    }
}

#[test]
fn the_help_promises_the_deadline_the_build_keeps() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentteams-mcp"))
        .args(["index", "build", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let promise = format!("for at most {} s", INTERPRETER_TIMEOUT.as_secs());
    assert!(help.contains(&promise), "{promise:?} not in {help}");
}

#[test]
fn a_real_virtual_environment_is_read_through_its_interpreter() {
    // A real interpreter answers the real question: a venv made outside the project (without
    // pip, so it is quick), with one distribution planted in its site-packages.
    let env = Project::new("py-venv");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(env.path("venv"))
        .output()
        .expect("python3 is installed where the tests run");
    assert!(made.status.success(), "{}", stderr(&made));
    let lib = std::fs::read_dir(env.path("venv/lib"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))
        .expect("venv/lib/pythonX.Y")
        .path();
    let site = lib.join("site-packages");
    let write = |rel: &str, text: &str| {
        let path = site.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "sprockets-3.1.dist-info/METADATA",
        "Name: sprockets\nVersion: 3.1\n",
    );
    write(
        "sprockets-3.1.dist-info/RECORD",
        "sprockets/__init__.py,,\n",
    );
    write(
        "sprockets/__init__.py",
        "def mesh(a, b):\n    \"\"\"Mesh two sprockets.\"\"\"\n",
    );
    let project = Project::new("py-venv-project");
    project.write("app.py", "import sprockets\n");
    let python = env.path("venv/bin/python");
    let out = project.index_build(&["--python", &python.to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        definitions(&project),
        [("sprockets".to_owned(), "mesh".to_owned())]
    );
}
