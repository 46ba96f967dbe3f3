//! Resources, prompts and completion through the engine's embedding API (`handle_message`) and the
//! stdio transport, in every revision: capabilities, lists and cursors, reads, templates,
//! subscriptions, prompt arguments, completion, governance, audit, and hostile input.

mod audit_support;
use agentteams_mcp::audit::{AuditLog, Mode, RunInfo};
use agentteams_mcp::json::{self, Map, Value};
use agentteams_mcp::policy::Policy;
use agentteams_mcp::server::*;
use audit_support::{str_of, TempDir};
use std::sync::{Arc, OnceLock};

const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;
const POLICY_DENIED: i64 = -32001;
const INTERNAL_ERROR: i64 = -32603;

/// A library: 250 numbered notes, a binary logo, a file template, a "boom" resource that panics,
/// a "touch" resource whose read announces an update of note 1, and two prompts.
#[derive(Default)]
struct Library {
    notifier: OnceLock<ResourceNotifier>,
}

const NOTES: usize = 250;

impl ResourceSet for Library {
    fn resources(&self) -> Vec<Resource> {
        let mut list: Vec<Resource> = (0..NOTES)
            .map(|i| Resource::new(&format!("notes://n/{i}"), &format!("note_{i}")))
            .collect();
        list.push(
            Resource::new("notes://logo", "logo")
                .title("Logo")
                .mime_type("image/png"),
        );
        list.push(Resource::new("notes://boom", "boom"));
        list.push(Resource::new("notes://touch", "touch"));
        list.push(Resource::new("secret://key", "secret_key"));
        list
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new("files://{rev}/{+path}", "file").title("A file at a revision"),
            // Not in the served subset: never listed or matched.
            ResourceTemplate::new("bad://{x*}", "bad"),
        ]
    }

    fn read(
        &self,
        request: &ReadRequest<'_>,
        _: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError> {
        match request.uri {
            "notes://logo" => Ok(vec![ResourceContents::binary(
                request.uri,
                vec![0x89, b'P', b'N', b'G'],
            )
            .mime_type("image/png")]),
            "notes://boom" => panic!("a server bug"),
            "notes://touch" => {
                self.notifier.get().unwrap().updated("notes://n/1");
                Ok(vec![ResourceContents::text(request.uri, "touched")])
            }
            _ if request.template.is_some() => Ok(vec![ResourceContents::text(
                request.uri,
                format!(
                    "{} at {}",
                    request.variable("path").unwrap(),
                    request.variable("rev").unwrap()
                ),
            )]),
            uri => Ok(vec![ResourceContents::text(uri, format!("text of {uri}"))]),
        }
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn attach(&self, notifier: ResourceNotifier) {
        let _ = self.notifier.set(notifier);
    }

    fn complete(
        &self,
        _: &ResourceTemplate,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Vec<String> {
        match argument {
            "rev" => ["main", "maint", "v1"]
                .iter()
                .filter(|r| r.starts_with(value))
                .map(|r| r.to_string())
                .collect(),
            // Paths depend on the revision chosen before.
            _ => {
                let rev = context.iter().find(|(k, _)| k == "rev").map(|(_, v)| v);
                vec![format!("{}/{value}", rev.map_or("none", |r| r.as_str()))]
            }
        }
    }
}

impl PromptSet for Library {
    fn prompts(&self) -> Vec<Prompt> {
        vec![
            Prompt::new("summarise", "Summarise a note.")
                .title("Summarise")
                .argument(PromptArgument::required("note", "Which note."))
                .argument(PromptArgument::optional("style", "How.")),
            Prompt::new("secret_prompt", "Refused by the test policy."),
        ]
    }

    fn get(
        &self,
        _: &str,
        arguments: &[(String, String)],
        _: &CallContext<'_>,
    ) -> Result<PromptOutput, RequestError> {
        let note = &arguments.iter().find(|(k, _)| k == "note").unwrap().1;
        if note == "missing" {
            return Err(RequestError::invalid("no such note"));
        }
        Ok(PromptOutput::new(vec![
            PromptMessage::text(Role::User, &format!("Summarise note {note}.")),
            PromptMessage::resource(
                Role::User,
                &ResourceContents::text(&format!("notes://n/{note}"), "body"),
            ),
            PromptMessage::image(Role::Assistant, "iVBORw0K", "image/png"),
        ])
        .description("A summary request"))
    }

    fn complete(&self, _: &Prompt, _: &str, value: &str, _: &[(String, String)]) -> Vec<String> {
        (0..NOTES)
            .map(|i| i.to_string())
            .filter(|n| n.starts_with(value))
            .collect()
    }
}

struct Server {
    library: Library,
    with_features: bool,
}

impl ToolSet for Server {
    fn server_name(&self) -> &str {
        "library"
    }
    fn tools(&self) -> Vec<Tool> {
        vec![Tool::read_only(
            "echo",
            "Echoes.",
            json::parse(br#"{"type":"object"}"#).unwrap(),
        )]
    }
    fn call(&self, _: &str, args: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Value(Value::Object(args.clone())))
    }
    fn resource_set(&self) -> Option<&dyn ResourceSet> {
        self.with_features
            .then_some(&self.library as &dyn ResourceSet)
    }
    fn prompt_set(&self) -> Option<&dyn PromptSet> {
        self.with_features
            .then_some(&self.library as &dyn PromptSet)
    }
}

fn engine(with_features: bool) -> Engine {
    Engine::new(Arc::new(Server {
        library: Library::default(),
        with_features,
    }))
}

fn rules(deny: &[&str], allow: &[&str]) -> Policy {
    let mut policy = Policy::new();
    deny.iter().for_each(|p| policy.deny(p).unwrap());
    allow.iter().for_each(|p| policy.allow(p).unwrap());
    policy
}

/// A session of `revision`: initialized for a legacy one, fresh for the modern one.
fn session(engine: Engine, revision: Revision) -> Session {
    session_on(Arc::new(engine), revision)
}

fn session_on(engine: Arc<Engine>, revision: Revision) -> Session {
    let session = Session::new(engine);
    if revision.is_legacy() {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        );
        session.handle_message(json::parse(init.as_bytes()).unwrap());
    }
    session
}

/// Sends `method` with `params` (JSON text) in the session's era; returns the reply.
fn ask(session: &Session, method: &str, params: &str) -> Value {
    let mut params = json::parse(params.as_bytes()).unwrap();
    if session.negotiated_revision().is_none() {
        let meta = json::parse(
            br#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
        )
        .unwrap();
        params.as_object_mut().unwrap().insert("_meta", meta);
    }
    let mut m = Map::new();
    m.insert("jsonrpc", Value::from("2.0"));
    m.insert("id", Value::from(7));
    m.insert("method", Value::from(method));
    m.insert("params", params);
    session
        .handle_message(Value::Object(m))
        .expect("a request is answered")
}

fn result(reply: &Value) -> &Value {
    reply
        .get("result")
        .unwrap_or_else(|| panic!("no result: {}", json::to_string(reply)))
}

fn error(reply: &Value) -> (i64, String) {
    let e = reply
        .get("error")
        .unwrap_or_else(|| panic!("no error: {}", json::to_string(reply)));
    (
        e.get("code").and_then(Value::as_i64).unwrap(),
        e.get("message").and_then(Value::as_str).unwrap().to_owned(),
    )
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list.get(key)
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|r| r.get(field).and_then(Value::as_str).unwrap().to_owned())
        .collect()
}

fn every_revision() -> [Revision; 5] {
    Revision::ALL_NEWEST_FIRST
}

#[test]
fn capabilities_name_exactly_what_the_served_sets_have() {
    for revision in every_revision() {
        for with_features in [false, true] {
            let s = Session::new(Arc::new(engine(with_features)));
            let caps = if revision.is_legacy() {
                let init = format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}"}}}}"#
                );
                let reply = s
                    .handle_message(json::parse(init.as_bytes()).unwrap())
                    .unwrap();
                result(&reply).get("capabilities").unwrap().clone()
            } else {
                result(&ask(&s, "server/discover", "{}"))
                    .get("capabilities")
                    .unwrap()
                    .clone()
            };
            let has = |k: &str| caps.get(k).is_some();
            assert_eq!(has("resources"), with_features, "{revision}");
            assert_eq!(has("prompts"), with_features, "{revision}");
            assert_eq!(
                has("completions"),
                with_features && revision >= Revision::V2025_03_26,
                "{revision}"
            );
            if with_features {
                // Both eras subscribe: resources/subscribe, or subscriptions/listen's filter.
                let subscribe = caps.get("resources").unwrap().get("subscribe");
                assert_eq!(subscribe.and_then(Value::as_bool), Some(true), "{revision}");
            }
            if !with_features {
                for method in [
                    "resources/list",
                    "resources/read",
                    "prompts/list",
                    "prompts/get",
                    "completion/complete",
                ] {
                    assert_eq!(
                        error(&ask(&s, method, "{}")).0,
                        METHOD_NOT_FOUND,
                        "{method}"
                    );
                }
            }
        }
    }
}

#[test]
fn lists_page_by_named_constants_in_every_revision() {
    for revision in every_revision() {
        let s = session(engine(true), revision);
        let mut seen = Vec::new();
        let mut cursor = None::<String>;
        loop {
            let params = match &cursor {
                None => "{}".to_owned(),
                Some(c) => format!(r#"{{"cursor":"{c}"}}"#),
            };
            let reply = ask(&s, "resources/list", &params);
            let page = result(&reply);
            let uris = names(page, "resources", "uri");
            assert!(uris.len() <= PAGE_SIZE);
            seen.extend(uris);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen.len(), NOTES + 4, "{revision}");
        let first = ask(&s, "resources/list", "{}");
        let logo_title = result(&ask(&s, "resources/list", r#"{"cursor":"250"}"#))
            .get("resources")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .get("title")
            .is_some();
        assert_eq!(logo_title, revision >= Revision::V2025_06_18, "{revision}");
        assert_eq!(
            result(&first).get("cacheScope").is_some(),
            !revision.is_legacy()
        );
        for bad in [
            r#""999""#,
            r#""""#,
            r#""abc""#,
            "12",
            "null0",
            r#""00000000000000000000001""#,
        ] {
            let Ok(cursor) = json::parse(bad.as_bytes()) else {
                continue;
            };
            let params = format!(r#"{{"cursor":{}}}"#, json::to_string(&cursor));
            for method in ["resources/list", "resources/templates/list", "prompts/list"] {
                assert_eq!(
                    error(&ask(&s, method, &params)),
                    (INVALID_PARAMS, "invalid cursor".to_owned()),
                    "{method} {bad}"
                );
            }
        }
        let templates = ask(&s, "resources/templates/list", "{}");
        assert_eq!(
            names(result(&templates), "resourceTemplates", "uriTemplate"),
            ["files://{rev}/{+path}"]
        );
    }
}

#[test]
fn reads_text_binary_and_templates_in_every_revision() {
    for revision in every_revision() {
        let s = session(engine(true), revision);
        let text = ask(&s, "resources/read", r#"{"uri":"notes://n/7"}"#);
        assert_eq!(
            json::to_string(result(&text).get("contents").unwrap()),
            r#"[{"uri":"notes://n/7","text":"text of notes://n/7"}]"#
        );
        let binary = ask(&s, "resources/read", r#"{"uri":"notes://logo"}"#);
        assert_eq!(
            json::to_string(result(&binary).get("contents").unwrap()),
            r#"[{"uri":"notes://logo","mimeType":"image/png","blob":"iVBORw=="}]"#
        );
        let file = ask(
            &s,
            "resources/read",
            r#"{"uri":"files://main/src/a%20b.rs"}"#,
        );
        let body = result(&file).get("contents").unwrap().as_array().unwrap();
        assert_eq!(
            body.iter()
                .next()
                .unwrap()
                .get("text")
                .and_then(Value::as_str),
            Some("src/a b.rs at main")
        );
        if !revision.is_legacy() {
            assert_eq!(
                result(&file).get("resultType").and_then(Value::as_str),
                Some("complete")
            );
        }
    }
}

#[test]
fn hostile_uris_are_refused_with_the_rule_they_break() {
    let s = session(engine(true), Revision::V2025_11_25);
    let huge = format!("notes://{}", "a".repeat(1 << 20));
    let cases: Vec<(String, &str)> = vec![
        (huge.clone(), "at most 4096"),
        ("no-scheme".into(), "has no scheme"),
        ("notes://n/1#frag".into(), "a fragment"),
        ("notes://n/ 1".into(), "a space"),
        ("notes://\u{e9}".into(), "non-ASCII"),
        ("notes://a\u{7}".into(), "control character"),
        ("notes://n/9999".into(), "resource not found"),
        ("files://main/../etc/passwd".into(), ".. path segment"),
        ("files://main/src/%2e%2e/%2e%2e/x".into(), ".. path segment"),
        ("files://ma%2Fin/x".into(), "must not hold /"),
        ("files://main/a%00b".into(), "control character"),
        ("files://main/a%zz".into(), "two hex digits"),
        ("files://main/a\\..\\b".into(), "backslash"),
        ("bad://anything".into(), "resource not found"),
        ("".into(), "must not be empty"),
    ];
    for (uri, rule) in cases {
        let params = json::obj([("uri", Value::from(uri.as_str()))]);
        let reply = ask(&s, "resources/read", &json::to_string(&params));
        let (code, message) = error(&reply);
        assert_eq!(code, INVALID_PARAMS, "{message}");
        assert!(message.contains(rule), "{rule}: {message}");
        // The client's text is never echoed whole.
        assert!(json::to_string(&reply).len() < 600, "{message}");
    }
    for params in [r#"{}"#, r#"{"uri":5}"#, r#"{"uri":null}"#] {
        let (code, message) = error(&ask(&s, "resources/read", params));
        assert_eq!(
            (code, message.as_str()),
            (INVALID_PARAMS, "resource uri must be a string")
        );
    }
    // A server that panics while reading costs the client -32603, not the session.
    assert_eq!(
        error(&ask(&s, "resources/read", r#"{"uri":"notes://boom"}"#)).0,
        INTERNAL_ERROR
    );
    assert!(
        result(&ask(&s, "resources/read", r#"{"uri":"notes://n/1"}"#))
            .get("contents")
            .is_some()
    );
}

#[test]
fn subscriptions_deliver_updates_only_to_subscribers() {
    let engine = Arc::new(engine(true));
    let a = session_on(engine.clone(), Revision::V2025_06_18);
    let b = session_on(engine.clone(), Revision::V2024_11_05);
    let (rx_a, rx_b) = (
        a.take_notifications().unwrap(),
        b.take_notifications().unwrap(),
    );
    let ok = |s: &Session, m: &str, p: &str| {
        assert_eq!(json::to_string(result(&ask(s, m, p))), "{}", "{m} {p}");
    };
    ok(&a, "resources/subscribe", r#"{"uri":"notes://n/1"}"#);
    ok(&b, "resources/subscribe", r#"{"uri":"notes://n/2"}"#);
    ask(&a, "resources/read", r#"{"uri":"notes://touch"}"#);
    let got: Vec<String> = rx_a.try_iter().map(|n| json::to_string(&n)).collect();
    assert_eq!(
        got,
        [
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"notes://n/1"}}"#
        ]
    );
    assert_eq!(rx_b.try_iter().count(), 0);
    ok(&a, "resources/unsubscribe", r#"{"uri":"notes://n/1"}"#);
    ok(
        &a,
        "resources/unsubscribe",
        r#"{"uri":"notes://never-subscribed"}"#,
    );
    ask(&a, "resources/read", r#"{"uri":"notes://touch"}"#);
    assert_eq!(rx_a.try_iter().count(), 0);
    // Subscribing needs a URI the session could read.
    assert_eq!(
        error(&ask(
            &a,
            "resources/subscribe",
            r#"{"uri":"notes://n/4000"}"#
        ))
        .0,
        INVALID_PARAMS
    );
    assert_eq!(
        error(&ask(
            &a,
            "resources/subscribe",
            r#"{"uri":"files://x/../y"}"#
        ))
        .0,
        INVALID_PARAMS
    );
    // The modern era has no subscribe method.
    let modern = Session::new(engine.clone());
    let (code, _) = error(&ask(
        &modern,
        "resources/subscribe",
        r#"{"uri":"notes://n/1"}"#,
    ));
    assert_eq!(code, METHOD_NOT_FOUND);
}

#[test]
fn a_session_holds_a_bounded_number_of_subscriptions() {
    let s = session(engine(true), Revision::V2025_03_26);
    for i in 0..MAX_SUBSCRIPTIONS_PER_SESSION {
        let p = format!(r#"{{"uri":"files://main/f{i}"}}"#);
        result(&ask(&s, "resources/subscribe", &p));
    }
    let (code, message) = error(&ask(&s, "resources/subscribe", r#"{"uri":"notes://logo"}"#));
    assert_eq!(code, INVALID_PARAMS);
    assert!(message.contains("at most 256"), "{message}");
}

#[test]
fn prompts_are_listed_and_built_from_checked_arguments_in_every_revision() {
    for revision in every_revision() {
        let s = session(engine(true), revision);
        let list = ask(&s, "prompts/list", "{}");
        assert_eq!(
            names(result(&list), "prompts", "name"),
            ["summarise", "secret_prompt"]
        );
        let first = result(&list).get("prompts").unwrap().as_array().unwrap();
        let first = first.iter().next().unwrap();
        assert_eq!(
            first.get("title").is_some(),
            revision >= Revision::V2025_06_18
        );
        assert_eq!(
            json::to_string(first.get("arguments").unwrap()),
            r#"[{"name":"note","description":"Which note.","required":true},{"name":"style","description":"How.","required":false}]"#
        );
        let got = ask(
            &s,
            "prompts/get",
            r#"{"name":"summarise","arguments":{"note":"3"}}"#,
        );
        let got = result(&got);
        assert_eq!(
            got.get("description").and_then(Value::as_str),
            Some("A summary request")
        );
        let kinds: Vec<&str> = got
            .get("messages")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|m| {
                m.get("content")
                    .unwrap()
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap()
            })
            .collect();
        assert_eq!(kinds, ["text", "resource", "image"]);
    }
}

#[test]
fn bad_prompt_requests_are_invalid_params_naming_the_rule() {
    let s = session(engine(true), Revision::V2025_06_18);
    let long = format!(
        r#"{{"name":"summarise","arguments":{{"note":"{}"}}}}"#,
        "x".repeat(MAX_PROMPT_ARGUMENT_BYTES + 1)
    );
    let cases = [
        (r#"{"name":"nope"}"#, "unknown prompt 'nope'"),
        (r#"{}"#, "prompt name must be a string"),
        (
            r#"{"name":"summarise"}"#,
            "missing required argument \"note\" of prompt \"summarise\"",
        ),
        (
            r#"{"name":"summarise","arguments":{"style":"short"}}"#,
            "missing required argument \"note\"",
        ),
        (
            r#"{"name":"summarise","arguments":{"note":"1","x":"2"}}"#,
            "has no argument \"x\"",
        ),
        (
            r#"{"name":"summarise","arguments":{"note":1}}"#,
            "must be a string",
        ),
        (
            r#"{"name":"summarise","arguments":["note"]}"#,
            "must be an object of strings",
        ),
        (&long, "longer than 65536 bytes"),
        // The server's own refusal.
        (
            r#"{"name":"summarise","arguments":{"note":"missing"}}"#,
            "no such note",
        ),
    ];
    for (params, expected) in cases {
        let (code, message) = error(&ask(&s, "prompts/get", params));
        assert_eq!(code, INVALID_PARAMS, "{params}");
        assert!(message.contains(expected), "{expected}: {message}");
    }
}

#[test]
fn completion_answers_for_prompts_and_templates_with_context() {
    for revision in every_revision() {
        let s = session(engine(true), revision);
        let values = |params: &str| {
            let reply = ask(&s, "completion/complete", params);
            let c = result(&reply).get("completion").unwrap().clone();
            let v: Vec<String> = c
                .get("values")
                .and_then(Value::as_array)
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            (
                v,
                c.get("total").and_then(Value::as_u64),
                c.get("hasMore").and_then(Value::as_bool),
            )
        };
        let (v, total, more) = values(
            r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":"24"}}"#,
        );
        assert_eq!(
            (v, total, more),
            (
                vec![
                    "24".into(),
                    "240".into(),
                    "241".into(),
                    "242".into(),
                    "243".into(),
                    "244".into(),
                    "245".into(),
                    "246".into(),
                    "247".into(),
                    "248".into(),
                    "249".into()
                ],
                Some(11),
                Some(false)
            )
        );
        let (v, total, more) = values(
            r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":""}}"#,
        );
        assert_eq!(
            (v.len(), total, more),
            (MAX_COMPLETION_VALUES, Some(250), Some(true))
        );
        let (v, ..) = values(
            r#"{"ref":{"type":"ref/resource","uri":"files://{rev}/{+path}"},"argument":{"name":"rev","value":"mai"}}"#,
        );
        assert_eq!(v, ["main", "maint"]);
        let (v, ..) = values(
            r#"{"ref":{"type":"ref/resource","uri":"files://{rev}/{+path}"},"argument":{"name":"path","value":"src"},"context":{"arguments":{"rev":"v1"}}}"#,
        );
        assert_eq!(v, ["v1/src"]);
    }
    let s = session(engine(true), Revision::V2025_11_25);
    for (params, expected) in [
        (
            r#"{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}"#,
            "unknown prompt",
        ),
        (
            r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"zzz","value":""}}"#,
            "has no argument",
        ),
        (
            r#"{"ref":{"type":"ref/resource","uri":"files://x"},"argument":{"name":"rev","value":""}}"#,
            "unknown resource template",
        ),
        (
            r#"{"ref":{"type":"ref/resource","uri":"files://{rev}/{+path}"},"argument":{"name":"nope","value":""}}"#,
            "has no variable",
        ),
        (
            r#"{"ref":{"type":"ref/tool","name":"echo"},"argument":{"name":"a","value":""}}"#,
            "ref.type must be",
        ),
        (
            r#"{"argument":{"name":"a","value":""}}"#,
            "ref must be an object",
        ),
        (
            r#"{"ref":{"type":"ref/prompt","name":"summarise"}}"#,
            "argument must be an object",
        ),
        (
            r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":7}}"#,
            "argument value must be a string",
        ),
        (
            r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":""},"context":{"arguments":{"a":1}}}"#,
            "must be a string",
        ),
    ] {
        let (code, message) = error(&ask(&s, "completion/complete", params));
        assert_eq!(code, INVALID_PARAMS, "{params}");
        assert!(message.contains(expected), "{expected}: {message}");
    }
}

#[test]
fn refused_resources_and_prompts_are_hidden_and_minus_32001_on_use() {
    let policy = rules(&["secret_*", "file"], &[]);
    for revision in every_revision() {
        let s = session(engine(true).with_policy(policy.clone()), revision);
        let mut uris = Vec::new();
        for cursor in ["0", "100", "200"] {
            let reply = ask(&s, "resources/list", &format!(r#"{{"cursor":"{cursor}"}}"#));
            uris.extend(names(result(&reply), "resources", "uri"));
        }
        assert!(!uris.contains(&"secret://key".to_owned()));
        assert_eq!(uris.len(), NOTES + 3);
        let templates = ask(&s, "resources/templates/list", "{}");
        assert!(names(result(&templates), "resourceTemplates", "name").is_empty());
        let prompts = ask(&s, "prompts/list", "{}");
        assert_eq!(names(result(&prompts), "prompts", "name"), ["summarise"]);

        let (code, message) = error(&ask(&s, "resources/read", r#"{"uri":"secret://key"}"#));
        assert_eq!(code, POLICY_DENIED);
        assert_eq!(
            message,
            "resource \"secret://key\" is refused by policy: rule deny \"secret_*\" (--deny-tool)"
        );
        let (code, message) = error(&ask(&s, "resources/read", r#"{"uri":"files://a/b"}"#));
        assert_eq!(
            (code, message.contains("refused by policy")),
            (POLICY_DENIED, true)
        );
        let (code, message) = error(&ask(&s, "prompts/get", r#"{"name":"secret_prompt"}"#));
        assert_eq!(code, POLICY_DENIED);
        assert!(
            message.starts_with("prompt \"secret_prompt\" is refused"),
            "{message}"
        );
        let (code, _) = error(&ask(
            &s,
            "completion/complete",
            r#"{"ref":{"type":"ref/resource","uri":"files://{rev}/{+path}"},"argument":{"name":"rev","value":""}}"#,
        ));
        assert_eq!(code, POLICY_DENIED);
        if revision.is_legacy() {
            let (code, _) = error(&ask(&s, "resources/subscribe", r#"{"uri":"secret://key"}"#));
            assert_eq!(code, POLICY_DENIED);
        }
    }
    // An allowlist is an allowlist for every kind of item.
    let s = session(
        engine(true).with_policy(rules(&[], &["note_1*"])),
        Revision::V2025_11_25,
    );
    let mut listed = names(
        result(&ask(&s, "resources/list", "{}")),
        "resources",
        "name",
    );
    let rest = ask(&s, "resources/list", r#"{"cursor":"100"}"#);
    listed.extend(names(result(&rest), "resources", "name"));
    assert_eq!(listed.len(), 1 + 10 + 100);
    assert!(listed.iter().all(|n| n.starts_with("note_1")));
    assert_eq!(
        error(&ask(
            &s,
            "prompts/get",
            r#"{"name":"summarise","arguments":{"note":"1"}}"#
        ))
        .0,
        POLICY_DENIED
    );
}

#[test]
fn uses_are_audited_like_tool_calls() {
    let dir = TempDir::new("features");
    let path = dir.file("audit.log");
    let policy = rules(&["secret_*"], &[]);
    let log = AuditLog::open(&path, &RunInfo::default(), Mode::Full).unwrap();
    let s = session(
        engine(true).with_policy(policy).with_audit(log),
        Revision::V2025_11_25,
    );
    ask(&s, "resources/read", r#"{"uri":"notes://n/1"}"#);
    ask(&s, "resources/read", r#"{"uri":"secret://key"}"#);
    ask(&s, "resources/read", r#"{"uri":"notes://n/99999"}"#);
    ask(
        &s,
        "prompts/get",
        r#"{"name":"summarise","arguments":{"note":"1"}}"#,
    );
    ask(
        &s,
        "completion/complete",
        r#"{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":"1"}}"#,
    );
    s.engine().audit().unwrap().complete_run().unwrap();
    let report = agentteams_mcp::audit::verify_file(&path).unwrap();
    assert!(report.is_clean(), "{report}");
    let records = audit_support::records(&path);
    let events: Vec<(String, String)> = records
        .iter()
        .filter_map(|r| {
            Some((
                str_of(r, "tool")?.to_owned(),
                str_of(r, "event")?.to_owned(),
            ))
        })
        .collect();
    let expect = |tool: &str, event: &str| (tool.to_owned(), event.to_owned());
    assert_eq!(
        events,
        [
            expect("resources/read", "tool_call_requested"),
            expect("resources/read", "tool_call_started"),
            expect("resources/read", "tool_call_completed"),
            expect("resources/read", "tool_call_requested"),
            expect("resources/read", "tool_call_blocked"),
            expect("resources/read", "tool_call_requested"),
            expect("resources/read", "tool_call_failed"),
            expect("prompts/get", "tool_call_requested"),
            expect("prompts/get", "tool_call_started"),
            expect("prompts/get", "tool_call_completed"),
            expect("completion/complete", "tool_call_requested"),
            expect("completion/complete", "tool_call_started"),
            expect("completion/complete", "tool_call_completed"),
        ]
    );
}

#[test]
fn the_stdio_transport_serves_resources_and_writes_updates_between_replies() {
    let session = Session::new(Arc::new(engine(true)));
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"notes://n/1"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://touch"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"summarise","arguments":{"note":"5"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarise"},"argument":{"name":"note","value":"249"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"files://main/../../x"}}"#,
    ]
    .join("\n");
    let mut out = Vec::new();
    agentteams_mcp::stdio::serve(&session, input.as_bytes(), &mut out).unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect();
    let updates: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l.get("method").and_then(Value::as_str) == Some("notifications/resources/updated")
        })
        .collect();
    assert_eq!(updates.len(), 1);
    let replies: Vec<&Value> = lines.iter().filter(|l| l.get("id").is_some()).collect();
    assert_eq!(replies.len(), 6);
    let completion = replies[4].get("result").unwrap().get("completion").unwrap();
    assert_eq!(
        json::to_string(completion.get("values").unwrap()),
        r#"["249"]"#
    );
    assert_eq!(error(replies[5]).0, INVALID_PARAMS);
    let messages = replies[3].get("result").unwrap().get("messages").unwrap();
    assert_eq!(messages.as_array().unwrap().len(), 3);
    // initialize advertised subscribe; 2024-11-05 has no completions capability to advertise.
    let caps = replies[0]
        .get("result")
        .unwrap()
        .get("capabilities")
        .unwrap();
    assert!(caps.get("completions").is_none());
    assert_eq!(
        caps.get("resources")
            .unwrap()
            .get("subscribe")
            .and_then(Value::as_bool),
        Some(true)
    );
}

#[test]
fn responses_are_urgent_alone_or_in_a_batch() {
    let urgent = |text: &str| Session::is_urgent(&json::parse(text.as_bytes()).unwrap());
    assert!(urgent(r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#));
    assert!(urgent(
        r#"{"jsonrpc":"2.0","id":"srv-1","error":{"code":1,"message":"x"}}"#
    ));
    assert!(urgent(
        r#"[{"jsonrpc":"2.0","id":"srv-1","result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]"#
    ));
    assert!(!urgent(
        r#"[{"jsonrpc":"2.0","id":"srv-1","result":{}},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#
    ));
    assert!(!urgent("[]"));
    assert!(!urgent(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#));
    assert!(!urgent(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#));
}
