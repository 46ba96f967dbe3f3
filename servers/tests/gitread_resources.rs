//! gitread's resource templates and completion through the real binary, in a legacy revision and
//! in 2026-07-28: listing, reading, completing, the attacks on each new input, and that the
//! reference mode offers none of it.

mod common;
mod gitread_support;

use agentteams_mcp::json::{self, Value};
use common::Host;
use gitread_support::*;

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The fixture plus a directory, a binary, a symlink out of the project, a hostile file, a tag, a
/// branch with a `/`, big text and big binary blobs (committed) and a FIFO (untracked).
fn files(tag: &str) -> Fixture {
    let f = Fixture::new(tag);
    std::fs::create_dir_all(f.root.join("d")).expect("dir");
    write(&f.root.join("d/lines.txt"), "l1\nl2\n");
    std::fs::write(f.root.join("bin.dat"), b"GIF\0\x01\x02").expect("bin");
    std::os::unix::fs::symlink(&f.secret_file, f.root.join("out")).expect("symlink");
    write(&f.root.join("evil.txt"), "a\x1b[31mred\u{202e}x\n");
    let big: String = (1..=150_000).map(|n| format!("line {n:06}\n")).collect();
    write(&f.root.join("big.txt"), &big);
    let mut blob = vec![0u8; 3 << 20];
    blob[..4].copy_from_slice(b"\x7fELF");
    std::fs::write(f.root.join("big.bin"), blob).expect("big binary");
    git(&f.root, &["add", "."]);
    git(&f.root, &["commit", "-q", "-m", "files"]);
    git(&f.root, &["tag", "v1.0"]);
    git(&f.root, &["branch", "feature/x"]);
    git(&f.root, &["branch", "maint"]);
    let fifo = std::process::Command::new("mkfifo")
        .arg(f.root.join("fifo"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(fifo, "mkfifo");
    f
}

/// A host for the gitread binary at `root`, in `version` (2026-07-28: no handshake).
fn host(root: &std::path::Path, version: &str, args: &[&str]) -> Host {
    let stderr = TempDir::new("resources-stderr");
    let command = server_command(root, args, &[], &[], &stderr.join("stderr"));
    let mut host = Host::spawn(command);
    if version != "2026-07-28" {
        host.initialize(version);
    }
    host
}

/// `method` with `members` (an object's members, without braces) in `version`.
fn ask(host: &mut Host, version: &str, method: &str, members: &str) -> Value {
    let mut members = members.to_owned();
    if version == "2026-07-28" {
        if !members.is_empty() {
            members.push(',');
        }
        members.push_str(MODERN_META);
    }
    host.request(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{members}}}}}"#
    ))
}

fn read(host: &mut Host, version: &str, uri: &str) -> Value {
    ask(
        host,
        version,
        "resources/read",
        &format!(r#""uri":"{uri}""#),
    )
}

/// The first content item of a read, or the error.
fn contents(reply: &Value) -> Result<Value, (i64, String)> {
    if let Some(error) = reply.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return Err((code, message.to_owned()));
    }
    reply
        .get("result")
        .and_then(|r| r.get("contents"))
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .cloned()
        .ok_or_else(|| (0, json::to_string(reply)))
}

fn text(reply: &Value) -> String {
    let item = contents(reply).unwrap_or_else(|e| panic!("{e:?}"));
    item.get("text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text: {}", json::to_string(&item)))
        .to_owned()
}

fn refused(reply: &Value) -> String {
    match contents(reply) {
        Err((code, message)) => {
            assert_eq!(code, -32602, "{message}");
            message
        }
        Ok(item) => panic!("served: {}", json::to_string(&item)),
    }
}

fn complete(host: &mut Host, version: &str, argument: &str, value: &str, rev: &str) -> Vec<String> {
    let context = if rev.is_empty() {
        String::new()
    } else {
        format!(r#","context":{{"arguments":{{"rev":"{rev}"}}}}"#)
    };
    let reply = ask(
        host,
        version,
        "completion/complete",
        &format!(
            r#""ref":{{"type":"ref/resource","uri":"gitread://file/{{rev}}/{{+path}}"}},"argument":{{"name":"{argument}","value":"{value}"}}{context}"#
        ),
    );
    reply
        .get("result")
        .and_then(|r| r.get("completion"))
        .and_then(|c| c.get("values"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no values: {}", json::to_string(&reply)))
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

const VERSIONS: [&str; 2] = ["2025-06-18", "2026-07-28"];

#[test]
fn templates_are_listed_and_read_in_both_eras() {
    let f = files("res-read");
    for version in VERSIONS {
        let mut host = host(&f.root, version, &[]);
        let listed = json::to_string(&ask(&mut host, version, "resources/templates/list", ""));
        assert!(
            listed.contains(r#""uriTemplate":"gitread://file/{rev}/{+path}""#),
            "{listed}"
        );
        assert!(
            listed.contains(r#""uriTemplate":"gitread://commit/{rev}""#),
            "{listed}"
        );
        assert_eq!(
            text(&read(&mut host, version, "gitread://file/HEAD/a.txt")),
            "one\ntwo\n"
        );
        assert_eq!(
            text(&read(&mut host, version, "gitread://file/HEAD~2/a.txt")),
            "one\n"
        );
        assert_eq!(
            text(&read(&mut host, version, "gitread://file/v1.0/d/lines.txt")),
            "l1\nl2\n"
        );
        // Sanitised exactly as the tools sanitise.
        let evil = text(&read(&mut host, version, "gitread://file/HEAD/evil.txt"));
        assert!(
            !evil.contains('\x1b') && !evil.contains('\u{202e}'),
            "{evil:?}"
        );
        let binary = contents(&read(&mut host, version, "gitread://file/HEAD/bin.dat"))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(binary.get("blob").and_then(Value::as_str), Some("R0lGAAEC"));
        let commit = text(&read(&mut host, version, "gitread://commit/HEAD~1"));
        assert!(
            commit.contains("second") && commit.contains("+two"),
            "{commit}"
        );
        let missing = refused(&read(&mut host, version, "gitread://file/HEAD/nope.txt"));
        assert!(missing.contains("no such path"), "{missing}");
        let dir = refused(&read(&mut host, version, "gitread://file/HEAD/d"));
        assert!(dir.contains("a directory"), "{dir}");
        let bad_rev = refused(&read(&mut host, version, "gitread://file/nope/a.txt"));
        assert!(bad_rev.contains("git exited 128"), "{bad_rev}");
    }
}

#[test]
fn huge_blobs_are_capped() {
    let f = files("res-huge");
    let mut host = host(&f.root, "2025-06-18", &[]);
    let big = text(&read(
        &mut host,
        "2025-06-18",
        "gitread://file/HEAD/big.txt",
    ));
    assert!(big.starts_with("line 000001\n"));
    assert!(big.len() < 1_100_000, "{}", big.len());
    let cut = (1 << 20) / 12 * 12;
    let tail = format!(": the first {cut} of 1800000 bytes; git_file with offset={cut} reads on");
    assert!(big.ends_with(&tail), "{}", &big[big.len() - 200..]);
    let binary = refused(&read(
        &mut host,
        "2025-06-18",
        "gitread://file/HEAD/big.bin",
    ));
    assert!(binary.contains("more than the 1048576 bytes"), "{binary}");
}

#[test]
fn template_values_cannot_leave_the_project_or_become_options() {
    let f = files("res-attack");
    for version in VERSIONS {
        let mut host = host(&f.root, version, &[]);
        let segment = "must not have a . or .. path segment";
        let slash = "is one path segment and must not hold /";
        let outside = "path must be inside the project and outside .git";
        let relative = "path must be a relative path inside the project";
        let ref_rule = "rev must be a plain revision";
        let mut messages = Vec::new();
        for (uri, expected) in [
            // The engine's URI rules.
            ("gitread://file/HEAD/../x", segment),
            ("gitread://file/HEAD/d/../../x", segment),
            ("gitread://file/HEAD/%2E%2E/secret.txt", segment),
            ("gitread://file/HEAD:..%2Fx/a.txt", slash),
            ("gitread://commit/HEAD:../x", "resource not found"),
            (
                "gitread://file/HEAD/d/lines.txt\\u0000",
                "control character",
            ),
            ("gitread://commit/HEAD%5E%7B%2F.%7B9%7D%7B9%7D%7D", slash),
            // gitread's own: the path rule (a symlink out of the project is resolved).
            ("gitread://file/HEAD/.git/config", outside),
            ("gitread://file/HEAD/.GIT/config", outside),
            ("gitread://file/HEAD/out", outside),
            ("gitread://file/HEAD//etc/passwd", relative),
            ("gitread://file/HEAD/-x", relative),
            // The ref rule: never an option, never a REV:PATH object name.
            ("gitread://file/--output=x/a.txt", ref_rule),
            ("gitread://commit/--output=x", ref_rule),
            ("gitread://file/HEAD:a.txt/a.txt", ref_rule),
            ("gitread://commit/HEAD:a.txt", ref_rule),
        ] {
            let message = refused(&read(&mut host, version, uri));
            assert!(message.contains(expected), "{uri}: {message}");
            messages.push(message);
        }
        f.assert_no_secret(&messages);
        assert!(!f.root.join("x").exists() && !f.root.join("--output=x").exists());
        // A FIFO in the work tree is not in the tree: ls-tree never opens it.
        let started = std::time::Instant::now();
        let fifo = refused(&read(&mut host, version, "gitread://file/HEAD/fifo"));
        assert!(fifo.contains("no such path"), "{fifo}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        f.assert_canary_silent();
    }
}

#[test]
fn revisions_and_paths_complete_in_both_eras() {
    let f = files("res-complete");
    for version in VERSIONS {
        let mut host = host(&f.root, version, &[]);
        assert_eq!(
            complete(&mut host, version, "rev", "ma", ""),
            ["main", "maint"]
        );
        assert_eq!(complete(&mut host, version, "rev", "v", ""), ["v1.0"]);
        assert_eq!(complete(&mut host, version, "rev", "H", ""), ["HEAD"]);
        // feature/x cannot travel in a {rev} segment: not offered.
        assert!(complete(&mut host, version, "rev", "f", "").is_empty());
        assert!(complete(&mut host, version, "rev", "-", "").is_empty());
        assert!(complete(&mut host, version, "rev", "*", "").is_empty());
        assert_eq!(
            complete(&mut host, version, "path", "d/", ""),
            ["d/lines.txt"]
        );
        assert_eq!(
            complete(&mut host, version, "path", "b", "HEAD"),
            ["big.bin", "big.txt", "bin.dat"]
        );
        // At the first commit only a.txt existed.
        assert_eq!(
            complete(&mut host, version, "path", "", "HEAD~2"),
            ["a.txt"]
        );
        assert!(
            complete(&mut host, version, "path", "f", "").is_empty(),
            "the FIFO is untracked"
        );
        assert!(complete(&mut host, version, "path", "../", "").is_empty());
        assert!(complete(&mut host, version, "path", ".git/", "").is_empty());
        assert!(complete(&mut host, version, "path", "out/", "").is_empty());
        assert!(complete(&mut host, version, "path", "a", "--output=x").is_empty());
        assert!(!f.root.join("x").exists() && !f.root.join("--output=x").exists());
    }
}

#[test]
fn the_reference_mode_offers_no_resources_prompts_or_completions() {
    let f = files("res-reference");
    let initialize = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    // Not yet initialised: the handshake is this test's.
    let mut product = host(&f.root, "2026-07-28", &[]);
    let capabilities = json::to_string(&product.request(initialize));
    assert!(capabilities.contains(r#""resources""#), "{capabilities}");
    assert!(capabilities.contains(r#""completions""#), "{capabilities}");
    let mut host = host(&f.root, "2026-07-28", &["--compat", "reference"]);
    let capabilities = json::to_string(&host.request(initialize));
    for absent in ["resources", "prompts", "completions"] {
        assert!(!capabilities.contains(absent), "{capabilities}");
    }
    host.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for method in [
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "completion/complete",
    ] {
        let reply = ask(
            &mut host,
            "2025-06-18",
            method,
            r#""uri":"gitread://file/HEAD/a.txt""#,
        );
        let code = reply
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64);
        assert_eq!(code, Some(-32601), "{method}: {}", json::to_string(&reply));
    }
}

fn prompt(host: &mut Host, version: &str, name: &str, arguments: &str) -> Value {
    ask(
        host,
        version,
        "prompts/get",
        &format!(r#""name":"{name}","arguments":{arguments}"#),
    )
}

/// The embedded resource of a `prompts/get` reply: its URI and text.
fn embedded(reply: &Value) -> (String, String) {
    let resource = reply
        .get("result")
        .and_then(|r| r.get("messages"))
        .and_then(Value::as_array)
        .and_then(|m| m.get(1))
        .and_then(|m| m.get("content"))
        .and_then(|c| c.get("resource"))
        .unwrap_or_else(|| panic!("no resource: {}", json::to_string(reply)));
    let field = |key| {
        resource
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (field("uri"), field("text"))
}

#[test]
fn prompts_embed_the_commit_and_the_diff_in_both_eras() {
    let f = files("res-prompts");
    for version in VERSIONS {
        let mut host = host(&f.root, version, &[]);
        let listed = json::to_string(&ask(&mut host, version, "prompts/list", ""));
        assert!(listed.contains(r#""name":"explain_commit""#), "{listed}");
        assert!(listed.contains(r#""name":"review_diff""#), "{listed}");
        let explain = prompt(&mut host, version, "explain_commit", r#"{"rev":"HEAD~1"}"#);
        let (uri, commit) = embedded(&explain);
        assert_eq!(uri, "gitread://commit/HEAD~1");
        assert!(
            commit.contains("second") && commit.contains("+two"),
            "{commit}"
        );
        let review = prompt(
            &mut host,
            version,
            "review_diff",
            r#"{"base":"HEAD~2","head":"HEAD~1"}"#,
        );
        let (uri, patch) = embedded(&review);
        assert_eq!(uri, "gitread://diff/HEAD~2/HEAD~1");
        assert!(patch.contains("+two") && !patch.contains("evil"), "{patch}");
        let diff = text(&read(&mut host, version, "gitread://diff/HEAD~2/HEAD~1"));
        assert!(diff.contains("+two"), "{diff}");
        // The prompts' arguments meet the same rules as the resources' values.
        for (name, arguments) in [
            ("explain_commit", r#"{"rev":"--output=x"}"#),
            ("explain_commit", r#"{"rev":"HEAD:../x"}"#),
            ("explain_commit", r#"{"rev":"feature/x"}"#),
            ("explain_commit", r#"{"rev":"HEAD:a.txt"}"#),
            ("review_diff", r#"{"base":"--output=x","head":"HEAD"}"#),
            ("review_diff", r#"{"base":"HEAD","head":"/etc/passwd"}"#),
        ] {
            let reply = prompt(&mut host, version, name, arguments);
            let code = reply
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            assert_eq!(
                code,
                Some(-32602),
                "{arguments}: {}",
                json::to_string(&reply)
            );
        }
        for uri in ["gitread://diff/--output=x/HEAD", "gitread://diff/HEAD/.."] {
            refused(&read(&mut host, version, uri));
        }
        assert!(!f.root.join("x").exists() && !f.root.join("--output=x").exists());
        let completed = ask(
            &mut host,
            version,
            "completion/complete",
            r#""ref":{"type":"ref/prompt","name":"review_diff"},"argument":{"name":"head","value":"ma"}"#,
        );
        let values = json::to_string(&completed);
        assert!(values.contains(r#""values":["main","maint"]"#), "{values}");
        f.assert_canary_silent();
    }
}

#[test]
fn a_policy_on_a_tool_covers_the_template_that_reads_the_same_thing() {
    let f = files("res-policy");
    let mut host = host(&f.root, "2025-06-18", &["--deny-tool", "git_file"]);
    let listed = json::to_string(&ask(
        &mut host,
        "2025-06-18",
        "resources/templates/list",
        "",
    ));
    assert!(!listed.contains("gitread://file/"), "{listed}");
    assert!(listed.contains("gitread://commit/"), "{listed}");
    let reply = read(&mut host, "2025-06-18", "gitread://file/HEAD/a.txt");
    let code = reply
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64);
    assert_eq!(code, Some(-32001), "{}", json::to_string(&reply));
    let commit = text(&read(&mut host, "2025-06-18", "gitread://commit/HEAD"));
    assert!(commit.contains("files"), "{commit}");
}

#[test]
fn a_policy_on_a_tool_covers_the_prompts_that_embed_its_reads() {
    let f = files("res-prompt-policy");
    for version in VERSIONS {
        let mut host = host(&f.root, version, &["--deny-tool", "git_show"]);
        let listed = json::to_string(&ask(&mut host, version, "prompts/list", ""));
        assert!(!listed.contains("explain_commit"), "{listed}");
        assert!(listed.contains(r#""name":"review_diff""#), "{listed}");
        let reply = prompt(&mut host, version, "explain_commit", r#"{"rev":"HEAD"}"#);
        let error = reply.get("error").unwrap_or_else(|| panic!("{reply:?}"));
        assert_eq!(error.get("code").and_then(Value::as_i64), Some(-32001));
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        assert!(
            message.contains("explain_commit") && message.contains("git_show"),
            "{message}"
        );
        // Completing an argument of the refused prompt is refused the same way.
        let completed = ask(
            &mut host,
            version,
            "completion/complete",
            r#""ref":{"type":"ref/prompt","name":"explain_commit"},"argument":{"name":"rev","value":"ma"}"#,
        );
        let code = completed.get("error").and_then(|e| e.get("code"));
        assert_eq!(code.and_then(Value::as_i64), Some(-32001), "{completed:?}");
        let review = prompt(
            &mut host,
            version,
            "review_diff",
            r#"{"base":"HEAD~2","head":"HEAD~1"}"#,
        );
        assert!(embedded(&review).1.contains("+two"));
    }
    let mut host = host(&f.root, "2025-11-25", &["--deny-tool", "git_diff"]);
    let listed = json::to_string(&ask(&mut host, "2025-11-25", "prompts/list", ""));
    assert!(!listed.contains("review_diff"), "{listed}");
    assert!(listed.contains("explain_commit"), "{listed}");
}
