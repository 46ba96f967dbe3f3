//! Governance as the engine applies it: every permission mode against read-only and destructive
//! tools with and without presets and digests (one table), and the attacks a client can try to
//! sneak a write through.

mod audit_support;
use agentteams_mcp::bind::{bind, BindOptions};
use agentteams_mcp::governance::{
    call_digest, Basis, Governance, PermissionMode, Preset, PresetEffect, Presets, ScopedApproval,
    Subject,
};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::{Engine, Session};
use audit_support::fixture::{self, call, listed, request, rpc_error, Tools};
use audit_support::TempDir;
use std::sync::Arc;

const POLICY_DENIED: i64 = -32001;

fn args(text: &str) -> Map {
    match json::parse(text.as_bytes()).unwrap() {
        Value::Object(m) => m,
        other => panic!("not an object: {other:?}"),
    }
}

fn digest(tool: &str, arguments: &str) -> String {
    call_digest(tool, &args(arguments)).unwrap()
}

fn preset(effect: PresetEffect, pattern: &str) -> Preset {
    Preset::new(
        effect,
        pattern,
        "test",
        "tester",
        "2026-12-01T00:00:00.000Z",
    )
    .unwrap()
}

fn presets(list: &[(PresetEffect, &str)]) -> Presets {
    let mut p = Presets::new();
    for (effect, pattern) in list {
        p.set(preset(*effect, pattern)).unwrap();
    }
    p
}

fn governed(governance: Governance) -> Session {
    fixture::session(fixture::engine().with_governance(governance))
}

fn succeeded(reply: &Value) -> bool {
    reply.get("error").is_none() && reply.get("result").and_then(|r| r.get("isError")).is_none()
}

/// What approves or refuses in one row of the table.
#[derive(Clone, Copy, Debug)]
enum Given {
    Nothing,
    ExactAllowRule,
    DenyRule,
    GrantPreset,
    DenyPreset,
    /// A scoped approval of exactly the call made.
    ScopedThisCall,
    /// A scoped approval of the same tool with other arguments.
    ScopedOtherCall,
}

const CALL_ARGUMENTS: &str = r#"{"path": "notes/a.txt", "text": "hello"}"#;
const OTHER_ARGUMENTS: &str = r#"{"path": "notes/b.txt", "text": "hello"}"#;

fn governance(mode: PermissionMode, tool: &str, given: Given) -> Governance {
    let mut policy = Policy::new();
    let mut g = Governance::new(mode);
    match given {
        Given::Nothing => {}
        Given::ExactAllowRule => policy.allow(tool).unwrap(),
        Given::DenyRule => policy.deny(tool).unwrap(),
        Given::GrantPreset => g = g.with_presets(presets(&[(PresetEffect::Grant, tool)]), None),
        Given::DenyPreset => g = g.with_presets(presets(&[(PresetEffect::Deny, tool)]), None),
        Given::ScopedThisCall => {
            g = g.with_scoped(vec![ScopedApproval {
                tool: tool.to_owned(),
                digest: digest(tool, CALL_ARGUMENTS),
            }])
        }
        Given::ScopedOtherCall => {
            g = g.with_scoped(vec![ScopedApproval {
                tool: tool.to_owned(),
                digest: digest(tool, OTHER_ARGUMENTS),
            }])
        }
    }
    g.with_policy(policy)
}

#[test]
fn every_mode_against_read_only_and_destructive_tools_with_and_without_approvals() {
    use Basis::*;
    use Given::*;
    use PermissionMode::*;
    // (mode, tool, given, allowed, basis). git_show is read-only; fs_write is destructive.
    let table: &[(PermissionMode, &str, Given, bool, Basis)] = &[
        (ReadOnly, "git_show", Nothing, true, Default),
        (ReadOnly, "git_show", ExactAllowRule, true, Rule),
        (ReadOnly, "git_show", DenyRule, false, Rule),
        (ReadOnly, "git_show", GrantPreset, true, Default),
        (ReadOnly, "git_show", DenyPreset, false, Preset),
        (ReadOnly, "git_show", ScopedThisCall, true, Default),
        (ReadOnly, "fs_write", Nothing, false, Mode),
        (ReadOnly, "fs_write", ExactAllowRule, false, Mode),
        (ReadOnly, "fs_write", DenyRule, false, Rule),
        (ReadOnly, "fs_write", GrantPreset, false, Mode),
        (ReadOnly, "fs_write", DenyPreset, false, Preset),
        (ReadOnly, "fs_write", ScopedThisCall, false, Mode),
        (ReadOnly, "fs_write", ScopedOtherCall, false, Mode),
        (Prompt, "git_show", Nothing, true, Default),
        (Prompt, "git_show", DenyRule, false, Rule),
        (Prompt, "git_show", DenyPreset, false, Preset),
        (Prompt, "git_show", ScopedOtherCall, true, Default),
        (Prompt, "fs_write", Nothing, false, Mode),
        (Prompt, "fs_write", ExactAllowRule, true, Rule),
        (Prompt, "fs_write", DenyRule, false, Rule),
        (Prompt, "fs_write", GrantPreset, true, Preset),
        (Prompt, "fs_write", DenyPreset, false, Preset),
        (Prompt, "fs_write", ScopedThisCall, true, Digest),
        (Prompt, "fs_write", ScopedOtherCall, false, Mode),
        (Allow, "git_show", Nothing, true, Default),
        (Allow, "git_show", DenyPreset, false, Preset),
        (Allow, "fs_write", Nothing, true, Mode),
        (Allow, "fs_write", ExactAllowRule, true, Rule),
        (Allow, "fs_write", DenyRule, false, Rule),
        (Allow, "fs_write", GrantPreset, true, Mode),
        (Allow, "fs_write", DenyPreset, false, Preset),
        (Allow, "fs_write", ScopedOtherCall, true, Mode),
        (DangerFullAccess, "git_show", Nothing, true, Mode),
        (DangerFullAccess, "git_show", DenyRule, false, Rule),
        (DangerFullAccess, "git_show", DenyPreset, false, Preset),
        (DangerFullAccess, "fs_write", Nothing, true, Mode),
        (DangerFullAccess, "fs_write", DenyRule, false, Rule),
        (DangerFullAccess, "fs_write", DenyPreset, false, Preset),
        (DangerFullAccess, "fs_write", ScopedOtherCall, true, Mode),
    ];
    // Every mode meets both tools with nothing given and with a deny preset.
    for mode in PermissionMode::ALL {
        for tool in ["git_show", "fs_write"] {
            for given in ["Nothing", "DenyPreset"] {
                assert!(
                    table
                        .iter()
                        .any(|r| r.0 == mode && r.1 == tool && format!("{:?}", r.2) == given),
                    "the table covers {mode} {tool} {given}"
                );
            }
        }
    }
    let tools = Tools;
    let tool_list = agentteams_mcp::server::ToolSet::tools(&tools);
    for &(mode, tool, given, allowed, basis) in table {
        let row = format!("{mode} {tool} {given:?}");
        let g = governance(mode, tool, given);
        let declared = tool_list.iter().find(|t| t.name == tool).unwrap();
        let verdict = g.decide(declared, Subject::Call(Some(&args(CALL_ARGUMENTS))));
        assert_eq!((verdict.allowed, verdict.basis), (allowed, basis), "{row}");
        assert_eq!(verdict.mode, mode, "{row}");
        // The engine agrees, whatever the transport (handle_message here).
        let session = governed(g);
        let reply = call(&session, tool, CALL_ARGUMENTS);
        if allowed {
            assert!(succeeded(&reply), "{row}: {reply}");
        } else {
            let (code, message) = rpc_error(&reply);
            assert_eq!(code, POLICY_DENIED, "{row}");
            assert!(message.contains(&verdict.reason), "{row}: {message}");
        }
        // Listed exactly when some call could run.
        let shown = listed(&session).contains(&tool.to_owned());
        let listable = allowed || matches!(given, ScopedOtherCall) && mode == Prompt;
        assert_eq!(shown, listable, "{row}: tools/list");
    }
}

#[test]
fn client_hints_meta_and_ids_never_make_a_tool_read_only() {
    let session = governed(Governance::new(PermissionMode::Prompt));
    for message in [
        r#"{"jsonrpc":"2.0","id":"admin","method":"tools/call","params":{"name":"fs_write","arguments":{"readOnlyHint":true},"annotations":{"readOnlyHint":true,"destructiveHint":false}}}"#,
        r#"{"jsonrpc":"2.0","id":"approved","method":"tools/call","params":{"name":"fs_write","_meta":{"readOnlyHint":true,"approved":true,"permissionMode":"danger-full-access"}}}"#,
        r#"{"jsonrpc":"2.0","id":"grant:fs_write","method":"tools/call","params":{"name":"fs_write"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fs_write","approval":"sha256:00","digest":"00"}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fs_append","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"readOnlyHint":true}}}"#,
    ] {
        let reply = request(&session, message);
        if reply.get("error").is_none() {
            panic!("a write got through: {message} -> {reply}");
        }
        assert_eq!(rpc_error(&reply).0, POLICY_DENIED, "{message}");
    }
    // A client that offers a digest of its own in the arguments changes the digest, nothing else.
    let d = digest("fs_write", "{}");
    let g = Governance::new(PermissionMode::Prompt).with_scoped(vec![ScopedApproval {
        tool: "fs_write".into(),
        digest: d.clone(),
    }]);
    let session = governed(g);
    assert!(succeeded(&call(&session, "fs_write", "{}")));
    let forged = format!(r#"{{"digest":"{d}"}}"#);
    assert_eq!(
        rpc_error(&call(&session, "fs_write", &forged)).0,
        POLICY_DENIED
    );
}

fn scoped_session(tool: &str, approved_arguments: &str) -> Session {
    governed(
        Governance::new(PermissionMode::Prompt).with_scoped(vec![ScopedApproval {
            tool: tool.into(),
            digest: digest(tool, approved_arguments),
        }]),
    )
}

#[test]
fn a_digest_approves_its_call_and_no_other() {
    let session = scoped_session("fs_write", r#"{"path":"a","text":"x"}"#);
    assert!(succeeded(&call(
        &session,
        "fs_write",
        r#"{"path":"a","text":"x"}"#
    )));
    for other in [
        r#"{"path":"b","text":"x"}"#,
        r#"{"path":"a","text":"x","mode":"append"}"#,
        r#"{"path":"a"}"#,
        r#"{"path":"a","text":"x "}"#,
        r#"{"path":["a"],"text":"x"}"#,
        "{}",
    ] {
        let (code, message) = rpc_error(&call(&session, "fs_write", other));
        assert_eq!(code, POLICY_DENIED, "{other}");
        assert!(message.contains("this call's digest is "), "{message}");
    }
    // The same arguments to another tool that may change data are another call.
    assert_eq!(
        rpc_error(&call(&session, "fs_append", r#"{"path":"a","text":"x"}"#)).0,
        POLICY_DENIED
    );
}

#[test]
fn member_order_and_float_spellings_match_integers_and_unicode_forms_do_not() {
    // Re-ordered members are the same call.
    let session = scoped_session("fs_write", r#"{"b":{"y":1,"x":2},"a":[1,2]}"#);
    assert!(succeeded(&call(
        &session,
        "fs_write",
        r#"{ "a" : [1, 2], "b" : {"x": 2, "y": 1} }"#
    )));
    // Array order is meaning, not form.
    assert_eq!(
        rpc_error(&call(
            &session,
            "fs_write",
            r#"{"a":[2,1],"b":{"x":2,"y":1}}"#
        ))
        .0,
        POLICY_DENIED
    );
    // Spellings of one double match; the integer 1 is another value.
    let session = scoped_session("fs_write", r#"{"n":1.0}"#);
    for same in [
        r#"{"n":1.0}"#,
        r#"{"n":10e-1}"#,
        r#"{"n":1.000}"#,
        r#"{"n":0.1e1}"#,
    ] {
        assert!(succeeded(&call(&session, "fs_write", same)), "{same}");
    }
    for different in [
        r#"{"n":1}"#,
        r#"{"n":"1.0"}"#,
        r#"{"n":1.0000000000000002}"#,
    ] {
        assert_eq!(
            rpc_error(&call(&session, "fs_write", different)).0,
            POLICY_DENIED,
            "{different}"
        );
    }
    // -0.0 is a float of its own; the integer -0 has no canonical form at all.
    let session = scoped_session("fs_write", r#"{"n":0}"#);
    assert!(succeeded(&call(&session, "fs_write", r#"{"n":0}"#)));
    assert_eq!(
        rpc_error(&call(&session, "fs_write", r#"{"n":-0.0}"#)).0,
        POLICY_DENIED
    );
    let (_, message) = rpc_error(&call(&session, "fs_write", r#"{"n":-0}"#));
    assert!(
        message.ends_with(
            "this call cannot be approved by digest: /n: the integer -0 has no canonical form"
        ),
        "{message}"
    );
    // No Unicode normalisation: precomposed é is not e + combining acute; escapes are not forms.
    let session = scoped_session("fs_write", "{\"s\":\"caf\u{e9}\"}");
    assert!(succeeded(&call(
        &session,
        "fs_write",
        r#"{"s":"caf\u00e9"}"#
    )));
    assert_eq!(
        rpc_error(&call(&session, "fs_write", r#"{"s":"cafe\u0301"}"#)).0,
        POLICY_DENIED
    );
}

#[test]
fn a_duplicate_key_cannot_smuggle_other_arguments_past_a_digest() {
    let session = scoped_session("fs_write", r#"{"path":"safe"}"#);
    for smuggled in [
        r#"{"path":"/etc/passwd","path":"safe"}"#,
        r#"{"path":"safe","path":"safe"}"#,
        r#"{"path":"safe","x":{"k":1,"k":2}}"#,
    ] {
        let (code, message) = rpc_error(&call(&session, "fs_write", smuggled));
        assert_eq!(code, POLICY_DENIED, "{smuggled}");
        assert!(message.contains("appears twice"), "{message}");
    }
}

#[test]
fn preset_globs_match_only_what_they_say() {
    let g = Governance::new(PermissionMode::Prompt).with_presets(
        presets(&[
            (PresetEffect::Grant, "fs_w*"),
            (PresetEffect::Grant, "FS_APPEND"),
            (PresetEffect::Grant, "fs_appen?x"),
        ]),
        None,
    );
    let session = governed(g);
    assert!(succeeded(&call(&session, "fs_write", "{}")));
    // Case matters, `?` is one character, and a glob anchors at both ends.
    let (code, message) = rpc_error(&call(&session, "fs_append", "{}"));
    assert_eq!(code, POLICY_DENIED);
    assert!(message.contains("permission mode prompt"), "{message}");
    assert!(!listed(&session).contains(&"fs_append".to_owned()));
}

#[test]
fn a_deny_preset_blocks_under_allow_and_danger_full_access() {
    for mode in [PermissionMode::Allow, PermissionMode::DangerFullAccess] {
        let g = Governance::new(mode).with_presets(
            presets(&[
                (PresetEffect::Grant, "fs_write"),
                (PresetEffect::Deny, "fs_*"),
            ]),
            None,
        );
        let session = governed(g);
        let (code, message) = rpc_error(&call(&session, "fs_write", "{}"));
        assert_eq!(code, POLICY_DENIED, "{mode}");
        assert_eq!(
            message,
            "tool \"fs_write\" is refused by deny preset \"fs_*\" (presets[1], added by \"tester\": \"test\")"
        );
        assert!(!listed(&session).contains(&"fs_write".to_owned()));
        assert!(succeeded(&call(&session, "git_log", "{}")), "{mode}");
    }
}

#[test]
fn read_only_mode_cannot_be_escaped() {
    let mut policy = Policy::new();
    policy.allow("*").unwrap();
    policy.allow("fs_write").unwrap();
    let g = Governance::new(PermissionMode::ReadOnly)
        .with_policy(policy)
        .with_presets(presets(&[(PresetEffect::Grant, "*")]), None)
        .with_scoped(vec![ScopedApproval {
            tool: "fs_write".into(),
            digest: digest("fs_write", "{}"),
        }]);
    let session = governed(g);
    assert_eq!(
        rpc_error(&call(&session, "fs_write", "{}")),
        (
            POLICY_DENIED,
            "tool \"fs_write\" is refused by permission mode read-only: every tool that may change data is refused".to_owned()
        )
    );
    assert_eq!(listed(&session), fixture::UNCHANGING_TOOLS);
}

#[test]
fn the_refusal_says_which_digest_to_approve_and_that_digest_works() {
    let session = governed(Governance::new(PermissionMode::Prompt));
    let (_, message) = rpc_error(&call(&session, "fs_write", r#"{"path":"x"}"#));
    let d = digest("fs_write", r#"{"path":"x"}"#);
    assert!(
        message.ends_with(&format!(
            "; this call's digest is {d} (--approve-scoped fs_write:{d} approves it)"
        )),
        "{message}"
    );
    let approved = ScopedApproval::parse(&format!("fs_write:{}", d.to_uppercase())).unwrap();
    let session = governed(Governance::new(PermissionMode::Prompt).with_scoped(vec![approved]));
    assert!(succeeded(&call(&session, "fs_write", r#"{"path":"x"}"#)));
    // `arguments` absent or null is the call with `{}`: the tool runs with the same arguments.
    let d = digest("fs_append", "{}");
    let session =
        governed(
            Governance::new(PermissionMode::Prompt).with_scoped(vec![ScopedApproval {
                tool: "fs_append".into(),
                digest: d,
            }]),
        );
    assert!(succeeded(&request(
        &session,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fs_append"}}"#
    )));
}

fn bind_error(dir: &TempDir, file_text: Option<&[u8]>) -> String {
    let agentteams = dir.0.join(".agentteams");
    std::fs::create_dir_all(&agentteams).unwrap();
    if let Some(text) = file_text {
        std::fs::write(agentteams.join("approvals.json"), text).unwrap();
    }
    match bind(
        Arc::new(Tools),
        &dir.0,
        PermissionMode::Prompt,
        "embedded",
        BindOptions::default(),
    ) {
        Ok(_) => "bound".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_approvals_files_stop_the_binding() {
    let dir = TempDir::new("gov-bad-file");
    assert_eq!(bind_error(&dir, None), "bound");
    let err = bind_error(
        &dir,
        Some(b"{\"version\":1,\"presets\":[{\"effect\":\"grant\"}]}"),
    );
    assert!(err.starts_with("approvals: "), "{err}");
    assert!(
        err.ends_with("presets[0]: \"tool\" must be a string"),
        "{err}"
    );
    let mut big = br#"{"version":1,"presets":[]}"#.to_vec();
    big.resize(1024 * 1024 + 1, b' ');
    let err = bind_error(&dir, Some(&big));
    assert!(err.ends_with("is larger than 1048576 bytes"), "{err}");
    // A link, even to a valid file inside the project, is not read.
    let valid = dir.0.join("valid.json");
    std::fs::write(&valid, br#"{"version":1,"presets":[]}"#).unwrap();
    let path = dir.0.join(".agentteams/approvals.json");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&valid, &path).unwrap();
    let err = bind_error(&dir, None);
    assert!(err.contains("is a symbolic link"), "{err}");
    // A FIFO does not block the server's start.
    std::fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    let err = bind_error(&dir, None);
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn bind_checks_scoped_approvals_and_mode_combinations() {
    let dir = TempDir::new("gov-bind");
    let options = |scoped: Vec<ScopedApproval>, policy: Policy| BindOptions {
        scoped,
        policy,
        ..BindOptions::default()
    };
    let bound = |mode, options| {
        bind(Arc::new(Tools), &dir.0, mode, "embedded", options).map(|b| b.engine().clone())
    };
    let unknown = ScopedApproval::parse(&format!("fs_wirte:{}", "0".repeat(64))).unwrap();
    let err = bound(
        PermissionMode::Prompt,
        options(vec![unknown], Policy::new()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.starts_with("--approve-scoped names tool \"fs_wirte\", which agentteams-fixture does not serve (its tools: git_log,"),
        "{err}"
    );
    let mut allow = Policy::new();
    allow.allow("git_*").unwrap();
    let err = bound(PermissionMode::DangerFullAccess, options(vec![], allow))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        err,
        "permission mode danger-full-access ignores allow rules, so allow \"git_*\" (--allow-tool) would have no effect; drop it or choose permission mode allow"
    );
    let err = bind(
        Arc::new(Tools),
        &dir.0,
        PermissionMode::Prompt,
        "Std IO",
        BindOptions::default(),
    )
    .err()
    .unwrap();
    assert!(err.to_string().starts_with("transport name \"Std IO\""));
    // Limits at their edges: transport name length, number of scoped approvals.
    let transport = |name: &str| {
        bind(
            Arc::new(Tools),
            &dir.0,
            PermissionMode::Prompt,
            name,
            BindOptions::default(),
        )
        .is_ok()
    };
    assert!(transport(
        &"a".repeat(agentteams_mcp::bind::MAX_TRANSPORT_NAME_CHARS)
    ));
    assert!(!transport(
        &"a".repeat(agentteams_mcp::bind::MAX_TRANSPORT_NAME_CHARS + 1)
    ));
    let one = ScopedApproval::parse(&format!("fs_write:{}", "0".repeat(64))).unwrap();
    let max = agentteams_mcp::governance::MAX_SCOPED_APPROVALS;
    assert!(bound(
        PermissionMode::Prompt,
        options(vec![one.clone(); max], Policy::new())
    )
    .is_ok());
    let err = bound(
        PermissionMode::Prompt,
        options(vec![one; max + 1], Policy::new()),
    )
    .err()
    .unwrap();
    assert_eq!(err.to_string(), "1025 scoped approvals; the limit is 1024");
    let engine: Arc<Engine> = bound(PermissionMode::Allow, BindOptions::default()).unwrap();
    assert_eq!(engine.governance().mode(), PermissionMode::Allow);
}

/// An embedder's tool set with one tool that writes and says nothing about it: no
/// `.annotations(...)`, as a tool set written from the engine's doc example would declare it.
struct Undeclared;

impl agentteams_mcp::server::ToolSet for Undeclared {
    fn server_name(&self) -> &str {
        "embedder"
    }
    fn tools(&self) -> Vec<agentteams_mcp::server::Tool> {
        let schema = json::parse(br#"{"type": "object"}"#).unwrap();
        vec![agentteams_mcp::server::Tool::new(
            "save_note",
            "Saves a note.",
            schema,
        )]
    }
    fn call(
        &self,
        _: &str,
        _: &Map,
        _: &agentteams_mcp::server::CallContext<'_>,
    ) -> Result<agentteams_mcp::server::ToolOutput, agentteams_mcp::server::ToolError> {
        Ok(agentteams_mcp::server::ToolOutput::Value(Value::from(
            "saved",
        )))
    }
}

fn undeclared(governance: Governance) -> Session {
    fixture::session(Engine::new(Arc::new(Undeclared)).with_governance(governance))
}

#[test]
fn a_tool_that_declares_nothing_may_change_data() {
    let save = r#"{"path":"a"}"#;
    // `prompt`: refused until an operator approves it, then it runs.
    let session = undeclared(Governance::new(PermissionMode::Prompt));
    let (code, message) = rpc_error(&call(&session, "save_note", save));
    assert_eq!(code, POLICY_DENIED);
    assert!(
        message.starts_with("tool \"save_note\" is refused by permission mode prompt: "),
        "{message}"
    );
    assert!(listed(&session).is_empty());
    // The same in the 2026-07-28 era, on a session nobody initialized.
    let stateless = Session::new(Arc::new(
        Engine::new(Arc::new(Undeclared)).with_governance(Governance::new(PermissionMode::Prompt)),
    ));
    let (code, modern) = rpc_error(&request(
        &stateless,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"save_note","arguments":{"path":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ));
    assert_eq!((code, modern), (POLICY_DENIED, message));
    let approved = Governance::new(PermissionMode::Prompt).with_scoped(vec![ScopedApproval {
        tool: "save_note".into(),
        digest: digest("save_note", save),
    }]);
    assert!(succeeded(&call(&undeclared(approved), "save_note", save)));
    // `read-only`: refused whatever approves it.
    let mut policy = Policy::new();
    policy.allow("save_note").unwrap();
    let g = Governance::new(PermissionMode::ReadOnly)
        .with_policy(policy)
        .with_presets(presets(&[(PresetEffect::Grant, "save_note")]), None);
    let session = undeclared(g);
    assert_eq!(
        rpc_error(&call(&session, "save_note", save)),
        (
            POLICY_DENIED,
            "tool \"save_note\" is refused by permission mode read-only: every tool that may change data is refused".to_owned()
        )
    );
    assert!(listed(&session).is_empty());
}

#[test]
fn a_tool_that_declares_nothing_is_advertised_with_the_mcp_defaults() {
    let engine = Arc::new(
        Engine::new(Arc::new(Undeclared)).with_governance(Governance::new(PermissionMode::Allow)),
    );
    let defaults = r#"{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}"#;
    let listed_tool = |session: &Session, list: &str| {
        let reply = request(session, list);
        reply
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .unwrap()[0]
            .clone()
    };
    for (version, annotations) in [
        ("2024-11-05", None),
        ("2025-03-26", Some(defaults)),
        ("2025-06-18", Some(defaults)),
        ("2025-11-25", Some(defaults)),
    ] {
        let session = Session::new(engine.clone());
        request(
            &session,
            &format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
            ),
        );
        let tool = listed_tool(
            &session,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!(
            tool.get("annotations").map(json::to_string).as_deref(),
            annotations,
            "{version}"
        );
    }
    let tool = listed_tool(
        &Session::new(engine),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(
        tool.get("annotations").map(json::to_string).as_deref(),
        Some(defaults),
        "2026-07-28"
    );
}
