//! The tool policy as the engine applies it: hidden tools, -32001 naming the rule, deny wins,
//! allowlists, destructive tools, and client input that never grants anything.

mod audit_support;
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::Engine;
use audit_support::fixture::{self, call, listed, request, rpc_error};

const POLICY_DENIED: i64 = -32001;

fn with_rules(allow: &[&str], deny: &[&str]) -> Engine {
    let mut policy = Policy::new();
    for pattern in allow {
        policy.allow(pattern).unwrap();
    }
    for pattern in deny {
        policy.deny(pattern).unwrap();
    }
    fixture::engine().with_policy(policy)
}

fn succeeded(reply: &agentteams_mcp::json::Value) -> bool {
    reply.get("result").and_then(|r| r.get("isError")).is_none() && reply.get("error").is_none()
}

#[test]
fn the_default_policy_serves_read_only_tools_and_refuses_the_rest() {
    let session = fixture::session(fixture::engine());
    assert_eq!(listed(&session), fixture::UNCHANGING_TOOLS);
    assert!(succeeded(&call(&session, "git_log", "{}")));
    for tool in ["fs_write", "fs_append"] {
        // The default permission mode, prompt, names what would approve the call and its digest.
        let (code, message) = rpc_error(&call(&session, tool, "{}"));
        assert_eq!(code, POLICY_DENIED);
        let digest = agentteams_mcp::governance::call_digest(tool, &Default::default()).unwrap();
        assert_eq!(
            message,
            format!("tool \"{tool}\" is refused by permission mode prompt: a tool that may change data needs an allow rule naming it exactly, a grant preset or a scoped approval of this exact call; this call's digest is {digest} (--approve-scoped {tool}:{digest} approves it)")
        );
    }
}

#[test]
fn a_denied_tool_is_hidden_and_its_call_names_the_rule() {
    let session = fixture::session(with_rules(&[], &["git_blame"]));
    assert!(!listed(&session).contains(&"git_blame".to_owned()));
    assert!(listed(&session).contains(&"git_log".to_owned()));
    assert_eq!(
        rpc_error(&call(&session, "git_blame", "{}")),
        (
            POLICY_DENIED,
            "tool \"git_blame\" is refused by policy: rule deny \"git_blame\" (--deny-tool)".into()
        )
    );
    assert!(succeeded(&call(&session, "git_show", "{}")));
}

#[test]
fn deny_wins_over_a_matching_allow() {
    let session = fixture::session(with_rules(&["git_*", "git_blame"], &["git_b*"]));
    assert_eq!(listed(&session), ["git_log", "git_show"]);
    assert_eq!(
        rpc_error(&call(&session, "git_blame", "{}")).1,
        "tool \"git_blame\" is refused by policy: rule deny \"git_b*\" (--deny-tool)"
    );
}

#[test]
fn allow_rules_make_an_allowlist() {
    let session = fixture::session(with_rules(&["recall_*", "git_?og"], &[]));
    assert_eq!(listed(&session), ["git_log", "recall_search"]);
    assert_eq!(
        rpc_error(&call(&session, "git_show", "{}")).1,
        "tool \"git_show\" is refused by policy: default rule: with allow rules set, a tool no allow rule matches is refused"
    );
    assert!(succeeded(&call(&session, "recall_search", "{}")));
}

#[test]
fn a_destructive_tool_needs_an_allow_rule_naming_it() {
    let session = fixture::session(with_rules(&["*"], &[]));
    assert!(!listed(&session).contains(&"fs_write".to_owned()));
    let message = rpc_error(&call(&session, "fs_write", "{}")).1;
    assert!(
        message.starts_with("tool \"fs_write\" is refused by permission mode prompt: a tool that may change data needs an allow rule naming it exactly, a grant preset or a scoped approval of this exact call (wildcard rule allow \"*\" (--allow-tool) is not enough); this call's digest is "),
        "{message}"
    );
    let session = fixture::session(with_rules(&["*", "fs_write"], &[]));
    assert!(listed(&session).contains(&"fs_write".to_owned()));
    assert!(succeeded(&call(&session, "fs_write", "{}")));
    assert!(!listed(&session).contains(&"fs_append".to_owned()));
}

#[test]
fn a_policy_file_rule_is_named_by_its_place() {
    let mut policy = Policy::new();
    policy
        .add_json(br#"{"allow": ["git_*", "fs_write"], "deny": ["git_show"]}"#)
        .unwrap();
    let session = fixture::session(fixture::engine().with_policy(policy));
    assert_eq!(listed(&session), ["git_log", "git_blame", "fs_write"]);
    assert_eq!(
        rpc_error(&call(&session, "git_show", "{}")).1,
        "tool \"git_show\" is refused by policy: rule deny \"git_show\" (policy file deny[0])"
    );
}

#[test]
fn client_hints_ids_and_meta_grant_nothing() {
    let session = fixture::session(with_rules(&[], &["git_blame"]));
    for message in [
        // Hints in _meta, in params, in the arguments; an id that looks like a privilege.
        r#"{"jsonrpc":"2.0","id":"admin","method":"tools/call","params":{"name":"fs_write","arguments":{"readOnlyHint":true},"_meta":{"annotations":{"readOnlyHint":true,"destructiveHint":false}}}}"#,
        r#"{"jsonrpc":"2.0","id":"allow-all","method":"tools/call","params":{"name":"git_blame","annotations":{"readOnlyHint":true},"policy":{"allow":["*"]}}}"#,
        // The stateless 2026-07-28 era goes through the same check.
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"git_blame","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ] {
        assert_eq!(
            rpc_error(&request(&session, message)).0,
            POLICY_DENIED,
            "{message}"
        );
    }
    let fresh = fixture::session(with_rules(&[], &["git_blame"]));
    let modern_list = request(
        &fresh,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert!(!agentteams_mcp::json::to_string(&modern_list).contains("git_blame"));
}

#[test]
fn the_policy_is_checked_before_the_arguments() {
    let session = fixture::session(with_rules(&[], &["git_log"]));
    // Arguments that fail validation, or are not even an object, still meet the policy first.
    assert_eq!(
        rpc_error(&call(&session, "git_log", r#"{"n": 99}"#)).0,
        POLICY_DENIED
    );
    assert_eq!(rpc_error(&call(&session, "git_log", "5")).0, POLICY_DENIED);
    // An unknown tool is still an unknown tool.
    assert_eq!(rpc_error(&call(&session, "nope", "{}")).0, -32602);
}
