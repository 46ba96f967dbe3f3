//! The engine proper: [`Engine`] (one per served tool set) and [`Session`] (one per stdio process or
//! HTTP session), which turn one JSON-RPC message into its reply.
//!
//! Lifecycle, version negotiation (legacy `initialize` and the stateless 2026-07-28 era), batching,
//! cancellation, logging, pagination and tool calls all happen here, identically for every
//! transport; resources, prompts and completion in [`features`], under the same governance and
//! audit; the 2026-07-28 `subscriptions/listen` stream in [`listen`], and its `input_required`
//! rounds of `tools/call` through [`super::input`].

use super::context::{CallContext, CancelToken, DiscardNotifications, LogLevel, Notify};
use super::input::{Round, StateKey};
use super::outbound::{self, Pending};
use super::resource::{self, NotificationSink, ResourceNotifier, MAX_PENDING_NOTIFICATIONS};
use super::revision::{
    Revision, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO,
};
use super::tool::{Tool, ToolOutput, ToolSet};
use super::wire::Wire;
use crate::audit::{AuditError, AuditLog, AuditedCall};
use crate::governance::decision::{Governance, Subject, Verdict};
use crate::json::{obj, to_pretty_ascii_sorted, to_string, Map, Value};
use crate::jsonrpc::{self, classify, code, error_reply, result_reply, Message, RpcError};
use crate::policy::Policy;
use crate::schema;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

mod features;
mod limits;
mod listen;
pub use limits::{
    MAX_COMPLETION_VALUES, MAX_LISTENS_PER_SESSION, MAX_LISTEN_STREAMS, MAX_READ_BYTES, PAGE_SIZE,
};

/// A tool result's text is cut past this many bytes of UTF-8 (the reference's cap).
pub const MAX_RESULT_TEXT_BYTES: usize = 65536;

/// Appended to a text cut at [`MAX_RESULT_TEXT_BYTES`] (the reference's marker, U+2026 included).
pub const RESULT_TRUNCATION_MARKER: &str = "\n\u{2026}[truncated at 64 KiB]";

/// How long clients may cache the tool list and discovery results (2026-07-28 `ttlMs`): the lists
/// never change while a server runs.
pub const LIST_TTL_MS: u64 = 3_600_000;

/// The `logger` of the messages the engine sends about tool calls.
pub const ENGINE_LOGGER: &str = "engine";

/// Code points of a refusal or error text kept in a log message (after sanitising and removing
/// argument values); longer texts are cut and `…` appended.
pub const MAX_LOG_REASON_CHARS: usize = 200;

/// Argument strings shorter than this are not removed from logged reasons (they would mangle the
/// text and cannot carry a secret worth the name).
const MIN_SCRUBBED_ARGUMENT_CHARS: usize = 4;

/// The shared, immutable part of serving one tool set: its tools and identity, the operator's
/// governance (permission mode, tool policy, approvals) and the audit log.
pub struct Engine {
    toolset: Arc<dyn ToolSet>,
    tools: Vec<Tool>,
    version: String,
    governance: Governance,
    audit: Option<AuditLog>,
    /// Present when the server has resources: how its set reaches subscribed sessions.
    notifier: Option<ResourceNotifier>,
    /// Seals the 2026-07-28 era's `requestState` ([`super::input`]): set by the transport
    /// ([`Engine::set_request_state_key`]) or, at first use, random for this process. `None` when
    /// no random key could be made.
    state_key: OnceLock<Option<StateKey>>,
    /// `subscriptions/listen` requests holding their stream open now (at most
    /// [`MAX_LISTEN_STREAMS`]).
    open_listens: std::sync::atomic::AtomicUsize,
    wire: Wire,
}

impl Engine {
    /// An engine serving `toolset`; its tool list is read once, here, and its resource set (if
    /// any) is given its [`ResourceNotifier`].
    pub fn new(toolset: Arc<dyn ToolSet>) -> Engine {
        let tools = toolset.tools();
        let notifier = toolset.resource_set().map(|set| {
            let notifier = ResourceNotifier::default();
            set.attach(notifier.clone());
            notifier
        });
        Engine {
            toolset,
            tools,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            governance: Governance::default(),
            audit: None,
            notifier,
            state_key: OnceLock::new(),
            open_listens: Default::default(),
            wire: Wire::default(),
        }
    }

    /// Puts `wire` on the wire ([`Wire::Full`] by default).
    pub fn with_wire(mut self, wire: Wire) -> Engine {
        self.wire = wire;
        self
    }

    pub fn wire(&self) -> Wire {
        self.wire
    }

    /// Seals every 2026-07-28 `requestState` with `key` instead of a random key of this process,
    /// so that every replica given the same key opens the others' states (HTTP derives it from
    /// the session key). False when a key is already in use (set once, before serving).
    pub fn set_request_state_key(&self, key: &[u8]) -> bool {
        self.state_key.set(Some(StateKey::new(key))).is_ok()
    }

    fn state_key(&self) -> Option<&StateKey> {
        self.state_key.get_or_init(StateKey::random).as_ref()
    }

    /// The capabilities a session of `revision` is told about: what the served sets have.
    fn capabilities(&self, revision: Revision, modern: bool) -> Value {
        let mut m = Map::with_capacity(5);
        let off = || Value::from(false);
        if self.wire == Wire::Minimal {
            m.insert("tools", Value::Object(Map::new()));
        } else {
            m.insert("tools", obj([("listChanged", off())]));
            if !modern {
                m.insert("logging", Value::Object(Map::new()));
            }
        }
        let resources = self.toolset.resource_set();
        if let Some(set) = resources {
            let mut r = Map::with_capacity(2);
            // Modern sessions subscribe through subscriptions/listen's resourceSubscriptions.
            r.insert("subscribe", Value::from(set.subscribable()));
            r.insert("listChanged", Value::from(set.announces_list_changes()));
            m.insert("resources", Value::Object(r));
        }
        let prompts = self.toolset.prompt_set();
        if prompts.is_some() {
            m.insert("prompts", obj([("listChanged", off())]));
        }
        // The capability exists from 2025-03-26; 2024-11-05 clients call the method unadvertised.
        if (resources.is_some() || prompts.is_some()) && revision.has_annotations() {
            m.insert("completions", Value::Object(Map::new()));
        }
        Value::Object(m)
    }

    /// The operator's tool policy. Without one, the empty policy applies: read-only tools are
    /// served and any tool that may change data is refused. A tool the policy refuses is left out
    /// of `tools/list`, and a call to it gets error -32001 naming the rule.
    pub fn with_policy(mut self, policy: Policy) -> Engine {
        self.governance.set_policy(policy);
        self
    }

    /// The operator's whole governance: permission mode, policy, approval presets and scoped
    /// approvals (replacing any policy set before). [`crate::bind::bind`] builds engines
    /// this way.
    pub fn with_governance(mut self, governance: Governance) -> Engine {
        self.governance = governance;
        self
    }

    pub fn governance(&self) -> &Governance {
        &self.governance
    }

    /// Records every tool call in `audit`. A call whose records cannot be written is refused
    /// (or its result withheld) with -32603: nothing is served unrecorded.
    pub fn with_audit(mut self, audit: AuditLog) -> Engine {
        self.audit = Some(audit);
        self
    }

    pub fn policy(&self) -> &Policy {
        self.governance.policy()
    }

    /// The audit log, to complete the run at shutdown ([`AuditLog::complete_run`]).
    pub fn audit(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    /// Whether `tools/list` shows `tool`: when the governance lets some call of it run. Only what
    /// the server declares decides; nothing from the client does.
    pub fn is_listed(&self, tool: &Tool) -> bool {
        self.governance.decide(tool, Subject::Listing).allowed
    }

    /// The version reported in `serverInfo` (the product version by default).
    pub fn with_version(mut self, version: &str) -> Engine {
        self.version = version.to_owned();
        self
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn toolset(&self) -> &Arc<dyn ToolSet> {
        &self.toolset
    }

    /// What a request for `method` with `params` reaches: the items and tools every
    /// authorization decision is about ([`super::reach`]).
    pub fn reach(&self, method: &str, params: Option<&Value>) -> super::reach::Reach {
        super::reach::reach(self.toolset.as_ref(), method, params)
    }

    fn find_tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    fn server_info(&self, revision: Revision) -> Value {
        let mut info = Map::with_capacity(3);
        info.insert("name", Value::from(self.toolset.server_name()));
        info.insert("version", Value::from(self.version.as_str()));
        if let (Some(title), true) = (
            self.toolset.server_title(),
            self.wire.shape(revision).has_structured_output(),
        ) {
            info.insert("title", Value::from(title));
        }
        Value::Object(info)
    }

    fn tool_value(&self, tool: &Tool, revision: Revision) -> Value {
        let mut m = Map::with_capacity(6);
        m.insert("name", Value::from(tool.name.as_str()));
        if let (Some(title), true) = (&tool.title, revision.has_structured_output()) {
            m.insert("title", Value::from(title.as_str()));
        }
        m.insert("description", Value::from(tool.description.as_str()));
        m.insert("inputSchema", tool.input_schema.clone());
        if let (Some(schema), true) = (&tool.output_schema, revision.has_structured_output()) {
            m.insert("outputSchema", schema.clone());
        }
        if revision.has_annotations() {
            let a = tool.annotations;
            m.insert(
                "annotations",
                obj([
                    ("readOnlyHint", Value::from(a.read_only)),
                    ("destructiveHint", Value::from(a.destructive)),
                    ("idempotentHint", Value::from(a.idempotent)),
                    ("openWorldHint", Value::from(a.open_world)),
                ]),
            );
        }
        Value::Object(m)
    }
}

/// Where a session is in the legacy lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No `initialize` yet: modern requests are served statelessly, legacy ones under 2024-11-05.
    New,
    /// `initialize` answered; waiting for `notifications/initialized` (requests are served anyway).
    Initialized,
    Ready,
}

struct State {
    phase: Phase,
    /// The revision `initialize` negotiated.
    revision: Option<Revision>,
    log_level: Option<LogLevel>,
    client_info: Option<Value>,
    /// Calls in progress, by the compact JSON text of their id, for `notifications/cancelled`.
    in_flight: Vec<(String, CancelToken)>,
    /// Deferred `subscriptions/listen` streams, by the compact JSON text of their id, with their
    /// number in the engine's notifier (none while registering, or without resources).
    listens: Vec<(String, Option<u64>)>,
}

/// One client's conversation with an engine: lifecycle state, negotiated revision, log level and
/// the calls in flight. Shared by reference between a transport's threads (all methods take
/// `&self`; the state lock is held only briefly, never while a tool runs).
///
/// ```
/// use std::sync::Arc;
/// use agentteams_mcp::json::{self, Map};
/// use agentteams_mcp::server::*;
///
/// struct Echo;
/// impl ToolSet for Echo {
///     fn server_name(&self) -> &str { "echo" }
///     fn tools(&self) -> Vec<Tool> {
///         vec![Tool::read_only("echo", "Echoes its arguments.", json::parse(br#"{"type":"object"}"#).unwrap())]
///     }
///     fn call(&self, _: &str, args: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::Value(json::Value::Object(args.clone())))
///     }
/// }
/// let session = Session::new(Arc::new(Engine::new(Arc::new(Echo))));
/// let reply = session.handle_message(json::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap());
/// assert_eq!(json::to_string(&reply.unwrap()), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
/// ```
pub struct Session {
    engine: Arc<Engine>,
    state: Mutex<State>,
    /// The transport's session id (HTTP), named in audit records.
    id: Option<String>,
    /// Whom the session's requests speak for (OAuth: a digest of the token's issuer and
    /// subject), named in audit records.
    principal: Option<String>,
    /// This session's number in the engine's [`ResourceNotifier`] (0 when there are no resources).
    hub_session: u64,
    /// Requests a running call sent the client, waiting for its responses.
    pending: Pending,
    /// `subscriptions/listen` returns at once and streams on the notification channel
    /// ([`Session::defer_listens`]).
    defer_listens: std::sync::atomic::AtomicBool,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end_listens();
        if let Some(notifier) = &self.engine.notifier {
            notifier.forget(self.hub_session);
        }
    }
}

/// A use of a declared item the governance decided about, and what running it needs.
struct Admission<T> {
    verdict: Verdict,
    /// The item's kind and name as a refusal names them.
    kind: &'static str,
    name: String,
    item: T,
}

impl<T> Admission<T> {
    fn new(verdict: Verdict, kind: &'static str, name: &str, item: T) -> Admission<T> {
        Admission {
            verdict,
            kind,
            name: name.to_owned(),
            item,
        }
    }

    /// The -32001 error of a refused use.
    fn refusal(&self) -> RpcError {
        RpcError::new(
            code::POLICY_DENIED,
            self.verdict.refusal_message_for(self.kind, &self.name),
        )
    }
}

/// The per-request facts a method handler needs.
struct RequestScope<'a> {
    /// The client's request id (logged in the audit record, never trusted).
    id: &'a Value,
    revision: Revision,
    /// Served statelessly under 2026-07-28.
    modern: bool,
    log_level: Option<LogLevel>,
    notify: &'a dyn Notify,
    cancel: CancelToken,
}

impl Session {
    pub fn new(engine: Arc<Engine>) -> Session {
        let hub_session = engine
            .notifier
            .as_ref()
            .map_or(0, ResourceNotifier::new_session);
        Session {
            hub_session,
            pending: Pending::default(),
            defer_listens: Default::default(),
            engine,
            state: Mutex::new(State {
                phase: Phase::New,
                revision: None,
                log_level: None,
                client_info: None,
                in_flight: Vec::new(),
                listens: Vec::new(),
            }),
            id: None,
            principal: None,
        }
    }

    /// Records whom the session speaks for (OAuth mode: [`crate::auth::Grant::principal`], a
    /// digest, never the token) in the audit log's records; `None` leaves it unnamed.
    pub fn with_principal(mut self, principal: Option<&str>) -> Session {
        self.principal = principal.map(str::to_owned);
        self
    }

    /// Whom the session speaks for, when known.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// Names this session (HTTP transports: the `MCP-Session-Id`) in the audit log's records.
    pub fn with_id(mut self, id: &str) -> Session {
        self.id = Some(id.to_owned());
        self
    }

    /// The session and principal audit records name.
    fn caller(&self) -> crate::audit::Caller<'_> {
        crate::audit::Caller {
            session: self.id.as_deref(),
            principal: self.principal.as_deref(),
        }
    }

    /// A session that behaves as if `initialize` had negotiated `revision` (stateless HTTP serves
    /// each request on one of these).
    pub fn initialized(engine: Arc<Engine>, revision: Revision) -> Session {
        let session = Session::new(engine);
        {
            let mut state = session.state();
            state.phase = Phase::Ready;
            state.revision = Some(revision);
        }
        if let Some(notifier) = &session.engine.notifier {
            notifier.hear_list_changes(session.hub_session);
        }
        session
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere never leaves the state half-written (every update is one assignment),
        // so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The revision negotiated by `initialize`, if any.
    pub fn negotiated_revision(&self) -> Option<Revision> {
        self.state().revision
    }

    /// The channel of the notifications that arrive outside any request
    /// (`notifications/resources/updated` and `list_changed`), for the transport to write; `None`
    /// when the server announces none. Taking it again replaces the earlier channel. At most
    /// [`MAX_PENDING_NOTIFICATIONS`] wait unread; later ones are dropped.
    pub fn take_notifications(&self) -> Option<Receiver<Value>> {
        let notifier = self.engine.notifier.as_ref()?;
        let set = self.engine.toolset.resource_set()?;
        if !set.subscribable() && !set.announces_list_changes() {
            return None;
        }
        let (sink, receiver) = mpsc::sync_channel(MAX_PENDING_NOTIFICATIONS);
        notifier.set_sink(self.hub_session, Some(resource::channel_sink(sink)));
        Some(receiver)
    }

    /// Hands the notifications that arrive outside any request to `sink` (a transport that keeps
    /// its own bounded store, such as HTTP's event store) instead of a channel; false when the
    /// server announces none. Replaces any earlier channel or sink.
    pub fn forward_notifications(&self, sink: NotificationSink) -> bool {
        let (Some(notifier), Some(set)) =
            (&self.engine.notifier, self.engine.toolset.resource_set())
        else {
            return false;
        };
        if !set.subscribable() && !set.announces_list_changes() {
            return false;
        }
        notifier.set_sink(self.hub_session, Some(sink));
        true
    }

    /// Closes the channel [`Session::take_notifications`] gave (its receiver then sees the end),
    /// ending the deferred `subscriptions/listen` streams that wrote to it.
    pub fn close_notifications(&self) {
        self.end_listens();
        if let Some(notifier) = &self.engine.notifier {
            notifier.set_sink(self.hub_session, None);
        }
    }

    /// The `clientInfo` the client sent with `initialize`.
    pub fn client_info(&self) -> Option<Value> {
        self.state().client_info.clone()
    }

    /// The embedding API: one parsed message in, its reply out (`None` for notifications and
    /// responses). Notifications a tool emits are dropped; use [`Session::handle_message_with`] to
    /// receive them.
    pub fn handle_message(&self, message: Value) -> Option<Value> {
        self.handle_message_with(message, &DiscardNotifications, CancelToken::new())
    }

    /// Handles one message (or a batch), sending notifications a call emits to `notify` before the
    /// reply is returned. `cancel` is the call's token: cancelling it (or a client's
    /// `notifications/cancelled` naming the request) stops the tool where it can, and suppresses
    /// the reply.
    pub fn handle_message_with(
        &self,
        message: Value,
        notify: &dyn Notify,
        cancel: CancelToken,
    ) -> Option<Value> {
        match message {
            Value::Array(batch) => self.handle_batch(batch.into_vec(), notify, cancel),
            single => self.handle_single(single, notify, cancel),
        }
    }

    /// The reply to a message that could not be parsed: the reference's -32700, with the parser's
    /// explanation in `data`.
    pub fn parse_error_reply(&self, detail: Option<&str>) -> Value {
        let mut error = RpcError::new(code::PARSE_ERROR, "parse error (or line over 1 MiB)");
        if let (Some(detail), Wire::Full) = (detail, self.engine.wire) {
            error = error.with_data(obj([("detail", Value::from(detail))]));
        }
        error_reply(None, &error, self.omit_unknown_id())
    }

    /// Cancels every call in flight (the transport is going away).
    pub fn cancel_all(&self) {
        for (_, token) in self.state().in_flight.iter() {
            token.cancel();
        }
    }

    /// Registers `cancel` as the token of the request with this id before it runs (so that a
    /// cancellation arriving while the request waits in a queue is not lost). Returns the token.
    pub fn track_request(&self, message: &Value) -> CancelToken {
        let token = CancelToken::new();
        if let Some(key) = request_id_key(message) {
            self.state().in_flight.push((key, token.clone()));
        }
        token
    }

    /// True for messages a transport should handle at once rather than queue behind running calls:
    /// `ping` requests, `notifications/cancelled`, and responses (a running call may be waiting
    /// for one).
    pub fn is_urgent(message: &Value) -> bool {
        match message {
            // A 2025-03-26 batch of responses.
            Value::Array(items) => !items.is_empty() && items.iter().all(outbound::is_response),
            _ => {
                matches!(
                    message.get("method").and_then(Value::as_str),
                    Some("ping" | "notifications/cancelled")
                ) || outbound::is_response(message)
            }
        }
    }

    fn omit_unknown_id(&self) -> bool {
        (self.state().revision).is_some_and(|r| self.engine.wire.shape(r).omits_unknown_id())
    }

    fn handle_batch(
        &self,
        batch: Vec<Value>,
        notify: &dyn Notify,
        cancel: CancelToken,
    ) -> Option<Value> {
        let allowed = self.state().revision.is_some_and(Revision::allows_batches);
        let refusal = if !allowed {
            Some("batching is not supported in this protocol version")
        } else if batch.is_empty() {
            Some("an empty batch is not a valid request")
        } else {
            None
        };
        if let Some(message) = refusal {
            return Some(error_reply(
                None,
                &RpcError::invalid_request(message),
                self.omit_unknown_id(),
            ));
        }
        let mut replies = Vec::new();
        for element in batch {
            let is_initialize = element.get("method").and_then(Value::as_str) == Some("initialize");
            let reply = if is_initialize {
                let id = element.get("id").cloned().filter(jsonrpc::is_valid_id);
                Some(error_reply(
                    id,
                    &RpcError::invalid_request("initialize must not be part of a batch"),
                    false,
                ))
            } else {
                self.handle_single(element, notify, cancel.clone())
            };
            replies.extend(reply);
        }
        (!replies.is_empty()).then(|| Value::from(replies))
    }

    fn handle_single(
        &self,
        message: Value,
        notify: &dyn Notify,
        cancel: CancelToken,
    ) -> Option<Value> {
        // A token registered by `track_request` is released whatever the message turns out to be.
        let key = request_id_key(&message);
        let reply = match classify(message) {
            Message::Invalid { id, error } => Some(error_reply(id, &error, self.omit_unknown_id())),
            Message::Response { id, outcome } => {
                // Unknown, late and repeated responses are dropped: nothing waits for them.
                self.pending.deliver(&id, outcome);
                None
            }
            Message::Notification { method, params } => {
                self.on_notification(&method, params);
                None
            }
            Message::Request { id, method, params }
                if method == "subscriptions/listen" && self.engine.wire == Wire::Full =>
            {
                let cancel = self.register(&to_string(&id), cancel);
                let reply = self.listen(id, params, notify, cancel.clone());
                reply.filter(|_| !cancel.is_cancelled())
            }
            Message::Request { id, method, params } => {
                let cancel = self.register(&to_string(&id), cancel);
                let reply = self.on_request(id, &method, params, notify, cancel.clone());
                // A cancelled request gets no response (the spec's SHOULD); initialize is never
                // cancelled.
                (!cancel.is_cancelled() || method == "initialize").then_some(reply)
            }
        };
        if let Some(key) = key {
            self.unregister(&key);
        }
        reply
    }

    /// Records the token of a request in flight, reusing one registered by `track_request`.
    fn register(&self, key: &str, cancel: CancelToken) -> CancelToken {
        let mut state = self.state();
        if let Some((_, existing)) = state.in_flight.iter().find(|(k, _)| k == key) {
            return existing.clone();
        }
        state.in_flight.push((key.to_owned(), cancel.clone()));
        cancel
    }

    fn unregister(&self, key: &str) {
        let mut state = self.state();
        if let Some(i) = state.in_flight.iter().position(|(k, _)| k == key) {
            state.in_flight.remove(i);
        }
    }

    fn on_notification(&self, method: &str, params: Option<Value>) {
        match method {
            "notifications/initialized" => {
                let mut state = self.state();
                if state.phase == Phase::Initialized {
                    state.phase = Phase::Ready;
                }
            }
            "notifications/cancelled" => {
                // Invalid or unknown cancellations are ignored, as the spec asks.
                let Some(id) = params.as_ref().and_then(|p| p.get("requestId")) else {
                    return;
                };
                let key = to_string(id);
                for (k, token) in self.state().in_flight.iter() {
                    if *k == key {
                        token.cancel();
                    }
                }
                self.end_listen(&key);
            }
            _ => {}
        }
    }

    fn on_request(
        &self,
        id: Value,
        method: &str,
        params: Option<Value>,
        notify: &dyn Notify,
        cancel: CancelToken,
    ) -> Value {
        let wire = self.engine.wire;
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(v) if wire.means_empty(&v) => Map::new(),
            Some(_) => {
                return error_reply(
                    Some(id),
                    &RpcError::invalid_params("params must be an object"),
                    false,
                )
            }
        };
        let (phase, negotiated, session_level) = {
            let s = self.state();
            (s.phase, s.revision, s.log_level)
        };
        let meta = params.get("_meta");
        let modern_version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
        let outcome = if method == "initialize" {
            self.initialize(&params)
        } else if let (Some(version), Phase::New, Wire::Full) = (modern_version, phase, wire) {
            match modern_scope(&id, version, meta, notify, cancel) {
                Ok(scope) => self.dispatch(method, params, &scope),
                Err(e) => Err(e),
            }
        } else {
            let scope = RequestScope {
                id: &id,
                revision: wire.shape(negotiated.unwrap_or(Revision::DEFAULT_LEGACY)),
                modern: false,
                log_level: session_level,
                notify,
                cancel,
            };
            self.dispatch(method, params, &scope)
        };
        match outcome {
            Ok(result) => result_reply(id, result),
            Err(error) => error_reply(Some(id), &error, false),
        }
    }

    fn initialize(&self, params: &Map) -> Result<Value, RpcError> {
        let revision = match params.get("protocolVersion") {
            None | Some(Value::Null) => Revision::DEFAULT_LEGACY,
            Some(Value::String(v)) => Revision::parse(v)
                .filter(|r| r.is_legacy())
                .unwrap_or(Revision::LATEST_LEGACY),
            Some(_) => return Err(RpcError::invalid_params("protocolVersion must be a string")),
        };
        let minimal = self.engine.wire == Wire::Minimal;
        {
            let mut state = self.state();
            match state.phase {
                Phase::New => state.phase = Phase::Initialized,
                // The minimal wire's hosts may say hello again: answered, and negotiated anew.
                _ if minimal => {}
                _ => return Err(RpcError::invalid_request("already initialized")),
            }
            state.revision = Some(revision);
            state.client_info = params.get("clientInfo").cloned();
        }
        self.pending
            .set_capabilities(params.get("capabilities").cloned());
        if let Some(notifier) = &self.engine.notifier {
            notifier.hear_list_changes(self.hub_session);
        }
        let mut result = Map::with_capacity(4);
        result.insert("protocolVersion", Value::from(revision.as_str()));
        result.insert("capabilities", self.engine.capabilities(revision, false));
        result.insert("serverInfo", self.engine.server_info(revision));
        if let (Some(instructions), false) = (self.engine.toolset.instructions(), minimal) {
            result.insert("instructions", Value::from(instructions));
        }
        Ok(Value::Object(result))
    }

    fn dispatch(
        &self,
        method: &str,
        params: Map,
        scope: &RequestScope<'_>,
    ) -> Result<Value, RpcError> {
        let full = self.engine.wire == Wire::Full;
        let result = match (method, scope.modern) {
            ("ping", _) => Value::Object(Map::new()),
            ("tools/list", _) => self.tools_list(&params, scope)?,
            ("tools/call", _) => self.tools_call(params, scope)?,
            ("server/discover", true) => self.discover(),
            ("server/discover", false) if full && self.state().phase == Phase::New => {
                return Err(RpcError::invalid_params(format!(
                    "server/discover needs params._meta with {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}"
                )))
            }
            ("logging/setLevel", false) if full => self.set_level(&params)?,
            (_, modern) => match self.feature(method, params, scope, modern) {
                Some(result) => result?,
                None => return Err(RpcError::unknown_method(&Value::from(method))),
            },
        };
        Ok(if scope.modern {
            self.modern_result(result)
        } else {
            result
        })
    }

    /// The resources, prompts and completion methods, when the served sets have them (`None`:
    /// a method this server does not offer, -32601 as for any unadvertised capability).
    fn feature(
        &self,
        method: &str,
        params: Map,
        scope: &RequestScope<'_>,
        modern: bool,
    ) -> Option<Result<Value, RpcError>> {
        let set = &self.engine.toolset;
        let resources = set.resource_set();
        let subscribable = !modern && resources.is_some_and(|r| r.subscribable());
        Some(match method {
            "resources/list" if resources.is_some() => self.resources_list(&params, scope),
            "resources/templates/list" if resources.is_some() => {
                self.templates_list(&params, scope)
            }
            "resources/read" if resources.is_some() => self.resources_read(params, scope),
            "resources/subscribe" if subscribable => self.resources_subscribe(&params, true),
            "resources/unsubscribe" if subscribable => self.resources_subscribe(&params, false),
            "prompts/list" if set.prompt_set().is_some() => self.prompts_list(&params, scope),
            "prompts/get" if set.prompt_set().is_some() => self.prompts_get(params, scope),
            "completion/complete" if resources.is_some() || set.prompt_set().is_some() => {
                self.complete(params, scope)
            }
            _ => return None,
        })
    }

    /// Runs one use of a declared item (a tool call, a resource read, a prompt, a completion)
    /// under the governance and the audit log: the request's record (`label`, and what `logged`
    /// takes of `params`: a tool's name and arguments, a method and its params), then `lookup` (its
    /// error recorded and returned), the decision (a refusal is -32001 naming the item, its
    /// verdict left in `refusal`), `run`, and the outcome's record. A panic in `lookup` or `run`
    /// is -32603.
    #[allow(clippy::too_many_arguments)] // each is one step of the sequence above
    fn governed<T>(
        &self,
        scope: &RequestScope<'_>,
        label: &str,
        params: Map,
        logged: fn(&Map) -> Value,
        lookup: impl FnOnce(Map) -> Result<Admission<T>, RpcError>,
        refusal: &mut Option<Verdict>,
        run: impl FnOnce(T) -> Result<Value, RpcError>,
    ) -> Result<Value, RpcError> {
        let mut audit = match &self.engine.audit {
            None => None,
            Some(log) => {
                let requested =
                    log.call_requested_by(self.caller(), Some(scope.id), label, &logged(&params));
                Some(requested.map_err(audit_failure)?)
            }
        };
        let admission = match contain(|| lookup(params)) {
            Ok(admission) => admission,
            Err(e) => return record_outcome(audit, Err(e)),
        };
        if let Some(call) = &mut audit {
            call.set_decision(admission.verdict.to_audit());
        }
        if !admission.verdict.allowed {
            if let Some(call) = audit {
                call.blocked(&admission.verdict.reason)
                    .map_err(audit_failure)?;
            }
            let error = admission.refusal();
            *refusal = Some(admission.verdict);
            return Err(error);
        }
        if let Some(call) = &mut audit {
            call.started().map_err(audit_failure)?;
        }
        let outcome = contain(|| run(admission.item));
        if let (Some(call), true) = (&mut audit, scope.cancel.is_cancelled()) {
            call.set_cancelled();
        }
        record_outcome(audit, outcome)
    }

    /// Adds what every 2026-07-28 result carries: `resultType` and the server's identity.
    fn modern_result(&self, result: Value) -> Value {
        let Value::Object(mut m) = result else {
            return result;
        };
        if !m.contains_key("resultType") {
            m.insert("resultType", Value::from("complete"));
        }
        let info = self.engine.server_info(Revision::V2026_07_28);
        match m.get_mut("_meta") {
            Some(Value::Object(meta)) => meta.insert(META_SERVER_INFO, info),
            _ => m.insert("_meta", obj([(META_SERVER_INFO, info)])),
        }
        Value::Object(m)
    }

    fn discover(&self) -> Value {
        let mut m = Map::with_capacity(6);
        m.insert("resultType", Value::from("complete"));
        m.insert("supportedVersions", Value::from(supported_versions()));
        m.insert(
            "capabilities",
            self.engine.capabilities(Revision::V2026_07_28, true),
        );
        if let Some(instructions) = self.engine.toolset.instructions() {
            m.insert("instructions", Value::from(instructions));
        }
        m.insert("ttlMs", Value::from(LIST_TTL_MS));
        m.insert("cacheScope", Value::from("public"));
        Value::Object(m)
    }

    fn tools_list(&self, params: &Map, scope: &RequestScope<'_>) -> Result<Value, RpcError> {
        match params.get("cursor") {
            None | Some(Value::Null) => {}
            // One page, always: the minimal wire's hosts may send back any cursor.
            Some(_) if self.engine.wire == Wire::Minimal => {}
            Some(_) => return Err(RpcError::invalid_params("invalid cursor")),
        }
        let tools: Vec<Value> = self
            .engine
            .tools
            .iter()
            .filter(|t| self.engine.is_listed(t))
            .map(|t| self.engine.tool_value(t, scope.revision))
            .collect();
        let mut m = Map::with_capacity(3);
        m.insert("tools", Value::from(tools));
        if scope.modern {
            m.insert("ttlMs", Value::from(LIST_TTL_MS));
            m.insert("cacheScope", Value::from("public"));
        }
        Ok(Value::Object(m))
    }

    fn set_level(&self, params: &Map) -> Result<Value, RpcError> {
        let level = params.get("level");
        match level.and_then(Value::as_str).and_then(LogLevel::parse) {
            Some(level) => {
                self.state().log_level = Some(level);
                Ok(Value::Object(Map::new()))
            }
            None => Err(RpcError::invalid_params(format!(
                "invalid log level {}; expected one of {}",
                jsonrpc::py_repr(level.unwrap_or(&Value::Null)),
                LogLevel::ALL.map(LogLevel::as_str).join(", ")
            ))),
        }
    }

    /// `tools/call`: audit record of the request, tool lookup, policy, then the call itself, and
    /// the audit record of its outcome; with a log level set, the engine's log messages about it.
    fn tools_call(&self, params: Map, scope: &RequestScope<'_>) -> Result<Value, RpcError> {
        let started = Instant::now();
        // Legacy calls pay nothing for the 2026-07-28 rounds (a hot path).
        let name = if scope.modern {
            params.get("name")
        } else {
            None
        };
        // A state or answers that fail their checks end the call in its lookup, on the record.
        let (round, refused_state) = match name {
            Some(Value::String(name)) => {
                let capabilities = (params.get("_meta"))
                    .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
                    .cloned();
                let key = self.engine.state_key();
                match Round::open(key, name, &params, capabilities) {
                    Ok(round) => (Some(round), None),
                    Err(e) => (None, Some(e)),
                }
            }
            _ => (None, None),
        };
        let mut ctx = self.call_context(scope, &params);
        ctx.round = round.as_ref();
        // Kept only when a log message may need them, to strip their values from logged reasons.
        let arguments = ctx
            .wants_log(LogLevel::Emergency)
            .then(|| params.get("arguments").cloned())
            .flatten();
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut refusal = None;
        let outcome = self.tools_call_audited(params, scope, &ctx, refused_state, &mut refusal);
        if !scope.cancel.is_cancelled() && ctx.wants_log(LogLevel::Emergency) {
            let refusal = refusal.map(|v| v.reason);
            let call = (name.as_deref(), arguments.as_ref());
            self.log_outcome(&ctx, call, refusal.as_deref(), &outcome, started);
        }
        outcome
    }

    /// The call as the audit log sees it: request, lookup (failed by `refused_state`, a 2026-07-28
    /// `requestState` or `inputResponses` that failed its checks), governance decision (its
    /// verdict left in `refusal` when it refuses), then the run and its outcome.
    fn tools_call_audited(
        &self,
        params: Map,
        scope: &RequestScope<'_>,
        ctx: &CallContext<'_>,
        refused_state: Option<RpcError>,
        refusal: &mut Option<Verdict>,
    ) -> Result<Value, RpcError> {
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => return Err(RpcError::invalid_params("tool name must be a string")),
        };
        let logged = |p: &Map| p.get("arguments").cloned().unwrap_or_default();
        let lookup = |mut params: Map| {
            if let Some(e) = refused_state {
                return Err(e);
            }
            let Some(tool) = self.engine.find_tool(&name) else {
                return Err(RpcError::invalid_params(format!(
                    "unknown tool {}",
                    jsonrpc::py_repr(&Value::from(name.as_str()))
                )));
            };
            // The arguments the tool would run with decide a scoped approval; they are checked
            // against the schema only once the call is admitted.
            let arguments = tool_arguments(tool, params.remove("arguments"), self.engine.wire);
            let verdict =
                (self.engine.governance).decide(tool, Subject::Call(arguments.as_ref().ok()));
            Ok(Admission::new(verdict, "tool", &name, (tool, arguments)))
        };
        let run = |(tool, arguments): (&Tool, Result<Map, RpcError>)| {
            arguments.and_then(|arguments| self.run_tool(tool, arguments, scope, ctx))
        };
        self.governed(scope, &name, params, logged, lookup, refusal, run)
    }

    /// The context of a request that runs a server's code: its cancellation, its notification
    /// sink and log level, the progress token it carries in `_meta` (a string or an integer), and
    /// in a legacy session the way to ask the client.
    fn call_context<'a>(&'a self, scope: &RequestScope<'a>, params: &Map) -> CallContext<'a> {
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| matches!(t, Value::String(_)) || t.as_i64().is_some())
            .cloned();
        CallContext {
            cancel: scope.cancel.clone(),
            notify: scope.notify,
            progress_token,
            log_level: scope.log_level,
            progress_message: scope.revision.has_annotations(),
            last_progress: Mutex::new(None),
            logs: Mutex::default(),
            client: (!scope.modern).then_some(&self.pending),
            round: None,
        }
    }

    /// The engine's summary of a finished call: `info` when it succeeded, `warning` when it was
    /// refused (policy, unknown tool, invalid arguments, the tool's own error), `error` when the
    /// server failed. Names only declared tools; reasons are sanitised, stripped of argument
    /// values and cut (see [`log_reason`]).
    fn log_outcome(
        &self,
        ctx: &CallContext<'_>,
        (name, arguments): (Option<&str>, Option<&Value>),
        refusal: Option<&str>,
        outcome: &Result<Value, RpcError>,
        started: Instant,
    ) {
        let tool = name.and_then(|n| self.engine.find_tool(n));
        let mut data = Map::with_capacity(6);
        data.insert("event", Value::from("call_finished"));
        match tool {
            Some(tool) => data.insert("tool", Value::from(tool.name.as_str())),
            None => data.insert("tool", Value::Null),
        }
        let mut scrub: Vec<&str> = Vec::new();
        if let Some(arguments) = arguments {
            argument_strings(arguments, &mut scrub);
        }
        let level = match outcome {
            Ok(result) if result.get("isError").and_then(Value::as_bool) == Some(true) => {
                let text = result
                    .get("content")
                    .and_then(Value::as_array)
                    .and_then(|c| c.iter().next())
                    .and_then(|b| b.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                data.insert("outcome", Value::from("error"));
                data.insert("reason", Value::from(log_reason(text, &scrub)));
                LogLevel::Warning
            }
            Ok(_) => {
                data.insert("outcome", Value::from("ok"));
                LogLevel::Info
            }
            Err(e) if e.code == code::POLICY_DENIED => {
                let rule = refusal.unwrap_or_default();
                data.insert("outcome", Value::from("refused"));
                data.insert("code", Value::from(e.code));
                data.insert("rule", Value::from(log_reason(rule, &scrub)));
                LogLevel::Warning
            }
            Err(e) => {
                // An unknown tool's name is the client's text: the reason does not repeat it.
                let reason = match (tool, name) {
                    (None, Some(_)) if e.code == code::INVALID_PARAMS => "unknown tool".to_owned(),
                    _ => log_reason(&e.message, &scrub),
                };
                data.insert("outcome", Value::from("invalid"));
                data.insert("code", Value::from(e.code));
                data.insert("reason", Value::from(reason));
                if e.code == code::INTERNAL_ERROR {
                    data.insert("outcome", Value::from("failed"));
                    LogLevel::Error
                } else {
                    LogLevel::Warning
                }
            }
        };
        data.insert("ms", Value::from(started.elapsed().as_millis() as u64));
        let dropped = ctx.logs_dropped();
        if dropped > 0 {
            data.insert("dropped_messages", Value::from(dropped));
        }
        ctx.send_log(level, Some(ENGINE_LOGGER), Value::Object(data), true);
    }

    /// Validates the arguments of an admitted call and runs the tool.
    fn run_tool(
        &self,
        tool: &Tool,
        arguments: Map,
        scope: &RequestScope<'_>,
        ctx: &CallContext<'_>,
    ) -> Result<Value, RpcError> {
        let name = &tool.name;
        let arguments = Value::Object(arguments);
        if let Err(e) = schema::validate(&tool.input_schema, &arguments) {
            return Ok(error_result(&argument_message(tool, &e)));
        }
        let Value::Object(arguments) = arguments else {
            unreachable!("built as an object above")
        };
        ctx.log(
            LogLevel::Debug,
            Some(ENGINE_LOGGER),
            obj([
                ("event", Value::from("call_started")),
                ("tool", Value::from(name.as_str())),
            ]),
        );
        let toolset = &self.engine.toolset;
        let outcome = catch_unwind(AssertUnwindSafe(|| toolset.call(name, &arguments, ctx)));
        // A 2026-07-28 call that asked the client something ends here, whatever the tool made
        // of the missing answer: the client retries with it.
        if let Some(round) = ctx.round.filter(|r| r.needs_input()) {
            return Ok(round
                .input_required()
                .unwrap_or_else(|why| error_result(&why)));
        }
        match outcome {
            Err(_) => Err(RpcError::new(code::INTERNAL_ERROR, "internal error")),
            Ok(Err(e)) => Ok(error_result(e.message())),
            Ok(Ok(output)) => Ok(success_result(output, scope.revision)),
        }
    }
}

/// The arguments `tool` runs with: absent or `null` is `{}` (and, on the minimal wire, any falsy
/// value), and the optional arguments the tool declares null-means-absent are dropped when `null`.
/// Not an object: -32602.
fn tool_arguments(tool: &Tool, arguments: Option<Value>, wire: Wire) -> Result<Map, RpcError> {
    let mut arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(v) if wire.means_empty(&v) => Map::new(),
        Some(_) => return Err(RpcError::invalid_params("arguments must be an object")),
    };
    for field in &tool.null_means_absent {
        if arguments.get(field).is_some_and(Value::is_null) {
            arguments.remove(field);
        }
    }
    Ok(arguments)
}

/// Every string of at least [`MIN_SCRUBBED_ARGUMENT_CHARS`] in `value` (keys too), longest first.
fn argument_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    fn walk<'v>(value: &'v Value, out: &mut Vec<&'v str>, depth: usize) {
        match value {
            Value::String(s) => out.push(s),
            Value::Array(items) if depth < 32 => {
                items.iter().for_each(|v| walk(v, out, depth + 1));
            }
            Value::Object(map) if depth < 32 => {
                for (k, v) in map.iter() {
                    out.push(k);
                    walk(v, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    walk(value, out, 0);
    out.retain(|s| s.chars().count() >= MIN_SCRUBBED_ARGUMENT_CHARS);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// A refusal or error text as a log message may carry it: every argument string in `scrub`
/// replaced by `<argument>`, a text that looks like it holds a credential replaced whole, then
/// sanitised and cut to [`MAX_LOG_REASON_CHARS`].
fn log_reason(text: &str, scrub: &[&str]) -> String {
    let mut text = text.to_owned();
    for s in scrub {
        if text.contains(s) {
            text = text.replace(s, "<argument>");
        }
    }
    if crate::audit::looks_like_credential(&text) {
        return crate::audit::REDACTED.to_owned();
    }
    let clean = crate::sanitize::sanitize(&text);
    match clean.char_indices().nth(MAX_LOG_REASON_CHARS) {
        None => clean.into_owned(),
        Some((cut, _)) => format!("{}\u{2026}", &clean[..cut]),
    }
}

/// Writes the audit record of a call's outcome (when audited) and passes the outcome on. An
/// outcome that cannot be recorded is withheld: the client gets -32603 instead.
fn record_outcome(
    audit: Option<AuditedCall<'_>>,
    outcome: Result<Value, RpcError>,
) -> Result<Value, RpcError> {
    let Some(call) = audit else {
        return outcome;
    };
    let recorded = match &outcome {
        Ok(result) => call.finished(result),
        Err(error) => call.rejected(error.code, &error.message),
    };
    recorded.map_err(audit_failure)?;
    outcome
}

/// What the client hears when the audit log cannot be written. The details (path, OS error) are
/// the operator's: [`AuditLog::complete_run`] reports them at shutdown.
fn audit_failure(_: AuditError) -> RpcError {
    RpcError::new(
        code::INTERNAL_ERROR,
        "the audit log cannot be written, so the call is refused",
    )
}

/// The validator's failure, in the tool's own words when it declared them.
fn argument_message(tool: &Tool, e: &schema::SchemaError) -> String {
    let lookup = |list: &[(String, String)]| {
        list.iter()
            .find(|(field, _)| *field == e.field)
            .map(|(_, m)| m.clone())
    };
    e.missing
        .then(|| lookup(&tool.missing_argument_messages))
        .flatten()
        .or_else(|| lookup(&tool.argument_messages))
        .unwrap_or_else(|| e.to_string())
}

/// The request is modern: check its `_meta` and build its scope.
fn modern_scope<'a>(
    id: &'a Value,
    version: &Value,
    meta: Option<&Value>,
    notify: &'a dyn Notify,
    cancel: CancelToken,
) -> Result<RequestScope<'a>, RpcError> {
    match version {
        Value::String(v) if v == Revision::V2026_07_28.as_str() => {}
        Value::String(_) => {
            return Err(RpcError::new(
                code::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
            )
            .with_data(obj([
                ("supported", Value::from(supported_versions())),
                ("requested", version.clone()),
            ])))
        }
        _ => {
            return Err(RpcError::invalid_params(format!(
                "{META_PROTOCOL_VERSION} must be a string"
            )))
        }
    }
    let meta = meta.and_then(Value::as_object);
    if !meta.is_some_and(|m| {
        m.get(META_CLIENT_CAPABILITIES)
            .is_some_and(|c| c.as_object().is_some())
    }) {
        return Err(RpcError::invalid_params(format!(
            "missing required _meta field {META_CLIENT_CAPABILITIES} (an object)"
        )));
    }
    let log_level = meta
        .and_then(|m| m.get(META_LOG_LEVEL))
        .and_then(Value::as_str)
        .and_then(LogLevel::parse);
    Ok(RequestScope {
        id,
        revision: Revision::V2026_07_28,
        modern: true,
        log_level,
        notify,
        cancel,
    })
}

/// The modern protocol version a message names in `params._meta`, if any: such a request is served
/// statelessly under 2026-07-28 (transports route on it, e.g. HTTP's dual-era endpoint).
pub fn modern_protocol_version(message: &Value) -> Option<&Value> {
    message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
}

/// The error a modern request's `_meta` earns before dispatch (unsupported version -32022, missing
/// client capabilities -32602), for transports that answer those with their own status (HTTP 400).
pub fn check_modern_meta(message: &Value) -> Result<(), RpcError> {
    let meta = message.get("params").and_then(|p| p.get("_meta"));
    let version = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .unwrap_or(&Value::Null);
    modern_scope(
        &Value::Null,
        version,
        meta,
        &DiscardNotifications,
        CancelToken::new(),
    )
    .map(drop)
}

fn supported_versions() -> Vec<Value> {
    Revision::ALL_NEWEST_FIRST
        .iter()
        .map(|r| Value::from(r.as_str()))
        .collect()
}

fn request_id_key(message: &Value) -> Option<String> {
    message
        .get("id")
        .filter(|id| jsonrpc::is_valid_id(id))
        .map(to_string)
}

/// Cuts `text` to the result cap on a UTF-8 boundary and appends the marker; reports whether it cut.
fn cap_text(mut text: String) -> (String, bool) {
    if text.len() <= MAX_RESULT_TEXT_BYTES {
        return (text, false);
    }
    let mut cut = MAX_RESULT_TEXT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(RESULT_TRUNCATION_MARKER);
    (text, true)
}

fn text_block(text: String) -> Value {
    obj([("type", Value::from("text")), ("text", Value::from(text))])
}

/// An `isError` result carrying `message` (capped like any result text).
fn error_result(message: &str) -> Value {
    let (text, _) = cap_text(message.to_owned());
    obj([
        ("content", Value::from(vec![text_block(text)])),
        ("isError", Value::from(true)),
    ])
}

fn success_result(output: ToolOutput, revision: Revision) -> Value {
    let mut m = Map::with_capacity(2);
    match output {
        ToolOutput::Value(value) => {
            let (text, truncated) = cap_text(to_pretty_ascii_sorted(&value));
            m.insert("content", Value::from(vec![text_block(text)]));
            // A cut text must not be undone by an uncut copy of the same value beside it.
            if revision.has_structured_output() && !truncated && value.as_object().is_some() {
                m.insert("structuredContent", value);
            }
        }
        ToolOutput::Content {
            mut content,
            structured,
        } => {
            for block in content.iter_mut() {
                if let Some(Value::String(text)) =
                    block.as_object_mut().and_then(|b| b.get_mut("text"))
                {
                    let (capped, _) = cap_text(std::mem::take(text).into_string());
                    *text = capped.into();
                }
            }
            m.insert("content", Value::from(content));
            if let (Some(structured), true) = (structured, revision.has_structured_output()) {
                m.insert("structuredContent", structured);
            }
        }
    }
    Value::Object(m)
}

/// Runs `f`, turning a panic in a server's code into -32603 (the session keeps serving).
fn contain<T>(f: impl FnOnce() -> Result<T, RpcError>) -> Result<T, RpcError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(RpcError::new(
            jsonrpc::code::INTERNAL_ERROR,
            "internal error",
        ))
    })
}
