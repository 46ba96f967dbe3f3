//! One authorization decision for every path to the data: every request method the engine
//! serves ([`reach::METHODS`]) against one protected tool, under each of the three deciders (a
//! policy rule, a governance deny preset, an OAuth scope), in a legacy revision and in
//! 2026-07-28. The fixture's resource, template and prompt have names of their own and reach the
//! tool only through what they declare (`reads_through`), so every refusal here is the one
//! decision at work, not a rule that happens to match a name. A method added to the engine
//! without a row here, or served without being in `METHODS`, fails this test.

use agentteams_mcp::auth::scopes::{ScopeRule, ScopeRules};
use agentteams_mcp::governance::{Governance, PermissionMode, Preset, PresetEffect, Presets};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::reach::{self, Reads};
use agentteams_mcp::server::{
    Annotations, CallContext, CancelToken, Engine, Notify, Prompt, PromptArgument, PromptMessage,
    PromptOutput, PromptSet, ReadRequest, RequestError, Resource, ResourceContents, ResourceSet,
    ResourceTemplate, Revision, Role, Session, Tool, ToolError, ToolOutput, ToolSet,
};
use std::sync::{Arc, Mutex};

/// The protected tool, and what reading through it yields.
const TOOL: &str = "read_a";
const CONTENT: &str = "A-CONTENT";
/// What completing an argument that reads through the tool yields.
const COMPLETED: &str = "A-NAME";
const POLICY_DENIED: i64 = -32001;
const METHOD_NOT_FOUND: i64 = -32601;

/// A server with the protected tool, an unrelated one, and a resource, a template and a prompt
/// that read through the protected tool under names of their own.
struct Guarded;

impl ToolSet for Guarded {
    fn server_name(&self) -> &str {
        "guarded"
    }
    fn tools(&self) -> Vec<Tool> {
        let schema = json::parse(br#"{"type":"object"}"#).unwrap();
        vec![
            Tool::new(TOOL, "reads A", schema.clone()).annotations(Annotations::READ_ONLY),
            Tool::new("other", "reads B", schema).annotations(Annotations::READ_ONLY),
        ]
    }
    fn call(&self, name: &str, _: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        let text = if name == TOOL { CONTENT } else { "B" };
        Ok(ToolOutput::Content {
            content: vec![json::obj([
                ("type", Value::from("text")),
                ("text", Value::from(text)),
            ])],
            structured: None,
        })
    }
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        Some(self)
    }
    fn prompt_set(&self) -> Option<&dyn PromptSet> {
        Some(self)
    }
}

impl ResourceSet for Guarded {
    fn resources(&self) -> Vec<Resource> {
        vec![Resource::new("fx://static", "static_a").reads_through(TOOL)]
    }
    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate::new("fx://item/{id}", "item_a").reads_through(TOOL)]
    }
    fn read(
        &self,
        request: &ReadRequest<'_>,
        _: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError> {
        Ok(vec![ResourceContents::text(request.uri, CONTENT)])
    }
    fn subscribable(&self) -> bool {
        true
    }
    fn complete(
        &self,
        _: &ResourceTemplate,
        _: &str,
        _: &str,
        _: &[(String, String)],
    ) -> Vec<String> {
        vec![COMPLETED.to_owned()]
    }
}

impl PromptSet for Guarded {
    fn prompts(&self) -> Vec<Prompt> {
        vec![Prompt::new("prompt_a", "embeds A")
            .argument(PromptArgument::required("x", "anything"))
            .reads_through(TOOL)]
    }
    fn get(
        &self,
        _: &str,
        _: &[(String, String)],
        _: &CallContext<'_>,
    ) -> Result<PromptOutput, RequestError> {
        Ok(PromptOutput::new(vec![PromptMessage::text(
            Role::User,
            CONTENT,
        )]))
    }
    fn complete(&self, _: &Prompt, _: &str, _: &str, _: &[(String, String)]) -> Vec<String> {
        vec![COMPLETED.to_owned()]
    }
}

/// What a decider refusing the tool must do to a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// The method reaches nothing: its answer is the same with and without the decider.
    Same,
    /// A list: the entry named here shows without the decider and not with it (policy and
    /// governance); scopes leave lists whole so a client can step up.
    Hides(&'static str),
    /// A use of the tool's data: served without the decider, -32001 with it (scopes: it needs
    /// the tool's scope).
    Refused,
    /// `subscriptions/listen`: the URI is honoured without the decider and left out with it
    /// (scopes: the listen needs the tool's scope).
    Unheard,
}

/// Every method of [`reach::METHODS`], with params naming the guarded items, and what a decider
/// refusing the tool must do; `legacy` and `modern` say in which eras the method exists.
struct Row {
    method: &'static str,
    params: &'static str,
    expect: Expect,
    legacy: bool,
    modern: bool,
}

const fn row(method: &'static str, params: &'static str, expect: Expect) -> Row {
    Row {
        method,
        params,
        expect,
        legacy: true,
        modern: true,
    }
}

const ROWS: [Row; 18] = [
    Row {
        modern: false,
        ..row(
            "initialize",
            r#"{"protocolVersion":"2025-06-18"}"#,
            Expect::Same,
        )
    },
    row("ping", "{}", Expect::Same),
    Row {
        legacy: false,
        ..row("server/discover", "{}", Expect::Same)
    },
    Row {
        modern: false,
        ..row("logging/setLevel", r#"{"level":"info"}"#, Expect::Same)
    },
    Row {
        modern: false,
        ..row(
            "resources/unsubscribe",
            r#"{"uri":"fx://item/1"}"#,
            Expect::Same,
        )
    },
    row("tools/list", "{}", Expect::Hides(TOOL)),
    row("resources/list", "{}", Expect::Hides("fx://static")),
    row(
        "resources/templates/list",
        "{}",
        Expect::Hides("fx://item/"),
    ),
    row("prompts/list", "{}", Expect::Hides("prompt_a")),
    row(
        "tools/call",
        r#"{"name":"read_a","arguments":{}}"#,
        Expect::Refused,
    ),
    row(
        "resources/read",
        r#"{"uri":"fx://item/1"}"#,
        Expect::Refused,
    ),
    row(
        "resources/read",
        r#"{"uri":"fx://static"}"#,
        Expect::Refused,
    ),
    Row {
        modern: false,
        ..row(
            "resources/subscribe",
            r#"{"uri":"fx://item/1"}"#,
            Expect::Refused,
        )
    },
    row(
        "prompts/get",
        r#"{"name":"prompt_a","arguments":{"x":"1"}}"#,
        Expect::Refused,
    ),
    row(
        "completion/complete",
        r#"{"ref":{"type":"ref/prompt","name":"prompt_a"},"argument":{"name":"x","value":""}}"#,
        Expect::Refused,
    ),
    row(
        "completion/complete",
        r#"{"ref":{"type":"ref/resource","uri":"fx://item/{id}"},"argument":{"name":"id","value":""}}"#,
        Expect::Refused,
    ),
    Row {
        legacy: false,
        ..row(
            "subscriptions/listen",
            r#"{"notifications":{"resourceSubscriptions":["fx://item/1"]}}"#,
            Expect::Unheard,
        )
    },
    Row {
        legacy: false,
        ..row(
            "subscriptions/listen",
            r#"{"notifications":{"resourceSubscriptions":["fx://static"]}}"#,
            Expect::Unheard,
        )
    },
];

/// Methods of the protocol (and near misses) the engine must not serve: each is -32601.
const NOT_SERVED: [&str; 10] = [
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "resources/write",
    "tools/call/",
    "Tools/call",
];

/// The notifications a session sends outside replies (the listen acknowledgement).
#[derive(Default)]
struct Collected(Mutex<Vec<Value>>);

impl Notify for Collected {
    fn notify(&self, notification: Value) {
        self.0.lock().unwrap().push(notification);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// `method` with `params` as one request of `era`.
fn message(era: Era, method: &str, params: &str) -> Value {
    let mut params = json::parse(params.as_bytes()).unwrap();
    if let (Era::Modern, Value::Object(m)) = (era, &mut params) {
        m.insert("_meta", json::parse(MODERN_META.as_bytes()).unwrap());
    }
    json::obj([
        ("jsonrpc", Value::from("2.0")),
        ("id", Value::from(7u64)),
        ("method", Value::from(method)),
        ("params", params),
    ])
}

/// The reply to `method` in a fresh session of `era` on `engine`, with the notifications sent
/// meanwhile appended (a deferred listen answers with its acknowledgement alone).
fn ask(engine: &Arc<Engine>, era: Era, method: &str, params: &str) -> String {
    let session = match era {
        Era::Legacy if method == "initialize" => Session::new(engine.clone()),
        Era::Legacy => Session::initialized(engine.clone(), Revision::V2025_06_18),
        Era::Modern => Session::new(engine.clone()),
    };
    session.defer_listens();
    let collected = Collected::default();
    let reply =
        session.handle_message_with(message(era, method, params), &collected, CancelToken::new());
    let mut text = reply.map_or_else(String::new, |r| json::to_string(&r));
    for n in collected.0.lock().unwrap().iter() {
        text.push_str(&json::to_string(n));
    }
    text
}

fn error_code(reply: &str) -> Option<i64> {
    let value = json::parse(reply.as_bytes()).ok()?;
    value.get("error")?.get("code")?.as_i64()
}

fn preset_denying(tool: &str) -> Presets {
    let mut presets = Presets::new();
    let preset = Preset::new(
        PresetEffect::Deny,
        tool,
        "protected",
        "tester",
        "2026-12-01T00:00:00.000Z",
    )
    .unwrap();
    presets.set(preset).unwrap();
    presets
}

/// The engine as each governance decider refuses the tool: a policy rule, a deny preset.
fn refusing_engines() -> Vec<(&'static str, Arc<Engine>)> {
    let mut policy = Policy::new();
    policy.deny(TOOL).unwrap();
    let by_rule = Engine::new(Arc::new(Guarded)).with_policy(policy);
    let governance =
        Governance::new(PermissionMode::DEFAULT).with_presets(preset_denying(TOOL), None);
    let by_preset = Engine::new(Arc::new(Guarded)).with_governance(governance);
    vec![
        ("policy rule", Arc::new(by_rule)),
        ("deny preset", Arc::new(by_preset)),
    ]
}

fn rows_of(era: Era) -> impl Iterator<Item = &'static Row> {
    ROWS.iter().filter(move |r| match era {
        Era::Legacy => r.legacy,
        Era::Modern => r.modern,
    })
}

#[test]
fn every_method_the_engine_serves_has_a_row_and_nothing_else_is_served() {
    for (method, reads) in reach::METHODS {
        assert!(
            ROWS.iter().any(|r| r.method == method),
            "{method} ({reads:?}) has no row: decide what a refusal of a tool does to it"
        );
    }
    for row in &ROWS {
        let listed = reach::METHODS.iter().any(|(m, _)| *m == row.method);
        assert!(listed, "{} is not in reach::METHODS", row.method);
        let reads = reach::reads_of(row.method);
        let fits = match row.expect {
            Expect::Same => reads == Reads::Nothing,
            Expect::Hides(_) => reads == Reads::Declarations,
            Expect::Refused => !matches!(reads, Reads::Nothing | Reads::Declarations),
            Expect::Unheard => reads == Reads::Subscriptions,
        };
        assert!(fits, "{}: {reads:?} against {:?}", row.method, row.expect);
    }
    let open = Arc::new(Engine::new(Arc::new(Guarded)));
    for era in [Era::Legacy, Era::Modern] {
        for method in NOT_SERVED {
            let reply = ask(&open, era, method, "{}");
            assert_eq!(
                error_code(&reply),
                Some(METHOD_NOT_FOUND),
                "{era:?} {method}: {reply}"
            );
        }
        // A method a row marks as absent from an era is not served there either.
        for row in ROWS.iter().filter(|r| !r.legacy || !r.modern) {
            let absent = match era {
                Era::Legacy => !row.legacy,
                Era::Modern => !row.modern,
            };
            if absent && row.method != "initialize" {
                let reply = ask(&open, era, row.method, row.params);
                let code = error_code(&reply);
                assert!(
                    code == Some(METHOD_NOT_FOUND) || code == Some(-32602),
                    "{era:?} {}: {reply}",
                    row.method
                );
            }
        }
    }
}

#[test]
fn a_refused_tool_is_refused_by_every_method_that_reaches_it_under_policy_and_presets() {
    let open = Arc::new(Engine::new(Arc::new(Guarded)));
    for era in [Era::Legacy, Era::Modern] {
        for row in rows_of(era) {
            let served = ask(&open, era, row.method, row.params);
            for (decider, engine) in refusing_engines() {
                let refused = ask(&engine, era, row.method, row.params);
                let what = format!("{era:?} {} {} under a {decider}", row.method, row.params);
                match row.expect {
                    Expect::Same => assert_eq!(served, refused, "{what}"),
                    Expect::Hides(entry) => {
                        assert!(served.contains(entry), "{what}: {served}");
                        assert!(!refused.contains(entry), "{what}: {refused}");
                        assert_eq!(error_code(&refused), None, "{what}: {refused}");
                    }
                    Expect::Refused => {
                        assert_eq!(error_code(&served), None, "{what}: {served}");
                        assert_eq!(
                            error_code(&refused),
                            Some(POLICY_DENIED),
                            "{what}: {refused}"
                        );
                        assert!(!refused.contains(CONTENT), "{what}: {refused}");
                        assert!(!refused.contains(COMPLETED), "{what}: {refused}");
                    }
                    Expect::Unheard => {
                        assert!(served.contains("resourceSubscriptions"), "{what}: {served}");
                        assert!(
                            !refused.contains("resourceSubscriptions"),
                            "{what}: {refused}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_scope_on_the_tool_is_needed_by_every_method_that_reaches_it() {
    let rule = ScopeRule::new(TOOL, vec!["s".to_owned()]).unwrap();
    let scopes = ScopeRules {
        required: vec!["mcp".to_owned()],
        tools: vec![rule],
        ..ScopeRules::default()
    };
    let engine = Engine::new(Arc::new(Guarded));
    for era in [Era::Legacy, Era::Modern] {
        for row in rows_of(era) {
            let request = message(era, row.method, row.params);
            let reach = engine.reach(row.method, request.get("params"));
            let needed = scopes.needed(&reach);
            let what = format!("{era:?} {} {}: {needed:?}", row.method, row.params);
            match row.expect {
                Expect::Same | Expect::Hides(_) => assert_eq!(needed, ["mcp"], "{what}"),
                Expect::Refused | Expect::Unheard => assert_eq!(needed, ["mcp", "s"], "{what}"),
            }
        }
    }
}

#[test]
fn a_listen_filter_shaped_to_confuse_gets_nothing_the_tool_is_refused_for() {
    // Spellings of the guarded URIs a filter might try: percent-encoded, repeated, another case,
    // beside a URI nothing serves; and entries that are not URIs.
    let filter = r#"{"notifications":{"resourceSubscriptions":["fx://item/%31","fx://item/1","fx://item/1","FX://item/1","fx://static","fx://nothing","fx://item/a%2Fb"]}}"#;
    let open = Arc::new(Engine::new(Arc::new(Guarded)));
    let served = ask(&open, Era::Modern, "subscriptions/listen", filter);
    assert!(served.contains(r#""fx://item/%31","fx://item/1","fx://static"]"#), "{served}");
    for (decider, engine) in refusing_engines() {
        let refused = ask(&engine, Era::Modern, "subscriptions/listen", filter);
        assert!(!refused.contains("fx://"), "{decider}: {refused}");
        assert!(refused.contains("acknowledged"), "{decider}: {refused}");
    }
    let rule = ScopeRule::new(TOOL, vec!["s".to_owned()]).unwrap();
    let scopes = ScopeRules {
        tools: vec![rule],
        ..ScopeRules::default()
    };
    let request = message(Era::Modern, "subscriptions/listen", filter);
    let reach = open.reach("subscriptions/listen", request.get("params"));
    assert_eq!(scopes.needed(&reach), ["s"]);
    for bad in [
        r#"{"notifications":{"resourceSubscriptions":[7]}}"#,
        r#"{"notifications":{"resourceSubscriptions":"fx://item/1"}}"#,
        r#"{"notifications":{"resourceSubscriptions":[["fx://item/1"]]}}"#,
    ] {
        let reply = ask(&open, Era::Modern, "subscriptions/listen", bad);
        assert_eq!(error_code(&reply), Some(-32602), "{bad}: {reply}");
    }
}
