//! What a server declares to serve resources: [`ResourceSet`], [`Resource`], [`ResourceTemplate`],
//! [`ResourceContents`], and the [`ResourceNotifier`] through which it announces changes.
//!
//! A server that has resources returns its set from
//! [`ToolSet::resource_set`](super::ToolSet::resource_set); the engine then advertises the `resources` capability, lists, pages, checks every URI (see
//! [`super::uri`]), applies the governance and the audit log, and calls [`ResourceSet::read`] only
//! for a URI that is a declared resource or matches a declared template.
//!
//! ```
//! use std::sync::Arc;
//! use agentteams_mcp::json::{self, Map};
//! use agentteams_mcp::server::*;
//!
//! struct Notes;
//! impl ResourceSet for Notes {
//!     fn resources(&self) -> Vec<Resource> {
//!         vec![Resource::new("notes://today", "today").mime_type("text/plain")]
//!     }
//!     fn templates(&self) -> Vec<ResourceTemplate> {
//!         vec![ResourceTemplate::new("notes://day/{date}", "day")]
//!     }
//!     fn read(&self, request: &ReadRequest<'_>, _: &CallContext<'_>) -> Result<Vec<ResourceContents>, RequestError> {
//!         let body = match request.variable("date") {
//!             Some(date) => format!("notes of {date}"),
//!             None => "notes of today".to_owned(),
//!         };
//!         Ok(vec![ResourceContents::text(request.uri, body).mime_type("text/plain")])
//!     }
//! }
//! struct Server(Notes);
//! impl ToolSet for Server {
//!     fn server_name(&self) -> &str { "notes" }
//!     fn tools(&self) -> Vec<Tool> { Vec::new() }
//!     fn call(&self, _: &str, _: &Map, _: &CallContext<'_>) -> Result<ToolOutput, ToolError> {
//!         Err(ToolError::new("no tools"))
//!     }
//!     fn resource_set(&self) -> Option<&dyn ResourceSet> { Some(&self.0) }
//! }
//! let session = Session::new(Arc::new(Engine::new(Arc::new(Server(Notes)))));
//! let ask = |text: &str| json::to_string(&session.handle_message(json::parse(text.as_bytes()).unwrap()).unwrap());
//! let reply = ask(r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://day/2026-12-01"}}"#);
//! assert!(reply.contains(r#""text":"notes of 2026-12-01""#), "{reply}");
//! let refused = ask(r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"notes://day/.."}}"#);
//! assert!(refused.contains("-32602"), "{refused}");
//! ```

use super::context::CallContext;
use super::error::RequestError;
use crate::declared::{Annotations, Declared};
use crate::json::{obj, Value};
use std::sync::mpsc::{SyncSender, TrySendError};

/// Where one session's notifications outside any request go: a transport's function that takes
/// one and returns false once its reader is gone for good (the session then stops sending).
pub type NotificationSink = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// A [`NotificationSink`] onto a bounded channel: a full channel misses the notification.
pub(super) fn channel_sink(sender: SyncSender<Value>) -> NotificationSink {
    Arc::new(move |message: &Value| {
        !matches!(
            sender.try_send(message.clone()),
            Err(TrySendError::Disconnected(_))
        )
    })
}
use std::sync::{Arc, Mutex, MutexGuard};

/// Notifications held for one session that its transport has not written yet; past this, new
/// ones are dropped (a client that does not read cannot make the server hold more).
pub const MAX_PENDING_NOTIFICATIONS: usize = 64;
/// Most URIs one session may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS_PER_SESSION: usize = 256;

/// One resource as a server declares it (`resources/list`).
#[derive(Clone, Debug)]
pub struct Resource {
    /// The URI a client reads (forms accepted: [`super::uri`]).
    pub uri: String,
    /// What the governance's rules match, like a tool's name.
    pub name: String,
    /// Human-readable name (advertised from revision 2025-06-18).
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// The tools whose reads this resource yields: see [`ResourceTemplate::reads_through`].
    pub reads_through: Vec<String>,
}

impl Resource {
    pub fn new(uri: &str, name: &str) -> Resource {
        Resource {
            uri: uri.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            reads_through: Vec::new(),
        }
    }
    /// Declares that reading the resource yields what `tool` would read.
    pub fn reads_through(mut self, tool: &str) -> Resource {
        self.reads_through.push(tool.to_owned());
        self
    }
    pub fn title(mut self, title: &str) -> Resource {
        self.title = Some(title.to_owned());
        self
    }
    pub fn description(mut self, description: &str) -> Resource {
        self.description = Some(description.to_owned());
        self
    }
    pub fn mime_type(mut self, mime_type: &str) -> Resource {
        self.mime_type = Some(mime_type.to_owned());
        self
    }
}

/// Reading a resource changes nothing: the governance treats every resource as read-only, so
/// only deny rules and allowlists decide.
impl Declared for Resource {
    fn declared_name(&self) -> &str {
        &self.name
    }
    fn declared_annotations(&self) -> Annotations {
        Annotations::READ_ONLY
    }
    fn declared_reads_through(&self) -> &[String] {
        &self.reads_through
    }
}

/// A family of resources named by a URI template (`resources/templates/list`), e.g.
/// `git://{rev}/{+path}`. The template syntax served is in [`super::uri`].
#[derive(Clone, Debug)]
pub struct ResourceTemplate {
    pub uri_template: String,
    /// What the governance's rules match.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// The tools whose reads the template's resources yield (gitread's file template reads what
    /// `git_file` reads): reading, subscribing to or completing it is refused whenever a
    /// decision refuses any of them (policy, governance, OAuth scopes), so a resource is never a
    /// way around a rule on a tool. Never advertised.
    pub reads_through: Vec<String>,
}

impl ResourceTemplate {
    pub fn new(uri_template: &str, name: &str) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.to_owned(),
            name: name.to_owned(),
            title: None,
            description: None,
            mime_type: None,
            reads_through: Vec::new(),
        }
    }
    /// Declares that the template's resources yield what `tool` would read (see
    /// [`ResourceTemplate::reads_through`]).
    pub fn reads_through(mut self, tool: &str) -> ResourceTemplate {
        self.reads_through.push(tool.to_owned());
        self
    }
    pub fn title(mut self, title: &str) -> ResourceTemplate {
        self.title = Some(title.to_owned());
        self
    }
    pub fn description(mut self, description: &str) -> ResourceTemplate {
        self.description = Some(description.to_owned());
        self
    }
    pub fn mime_type(mut self, mime_type: &str) -> ResourceTemplate {
        self.mime_type = Some(mime_type.to_owned());
        self
    }
}

impl Declared for ResourceTemplate {
    fn declared_name(&self) -> &str {
        &self.name
    }
    fn declared_annotations(&self) -> Annotations {
        Annotations::READ_ONLY
    }
    fn declared_reads_through(&self) -> &[String] {
        &self.reads_through
    }
}

/// What [`ResourceSet::read`] is asked for: a URI the engine has checked, and how it matched.
#[derive(Debug)]
pub struct ReadRequest<'a> {
    pub uri: &'a str,
    /// The template it matched, or `None` for a declared resource's URI.
    pub template: Option<&'a ResourceTemplate>,
    /// The template's variables, percent-decoded and checked (no `..`, no control characters...).
    pub variables: &'a [(String, String)],
}

impl ReadRequest<'_> {
    /// The value of template variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The body of one resource's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    Text(String),
    /// Sent Base64-encoded as `blob`.
    Binary(Vec<u8>),
}

/// One item of a `resources/read` result (also what a prompt embeds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    pub uri: String,
    pub mime_type: Option<String>,
    pub body: Body,
}

impl ResourceContents {
    pub fn text(uri: &str, text: impl Into<String>) -> ResourceContents {
        ResourceContents {
            uri: uri.to_owned(),
            mime_type: None,
            body: Body::Text(text.into()),
        }
    }
    pub fn binary(uri: &str, bytes: Vec<u8>) -> ResourceContents {
        ResourceContents {
            uri: uri.to_owned(),
            mime_type: None,
            body: Body::Binary(bytes),
        }
    }
    pub fn mime_type(mut self, mime_type: &str) -> ResourceContents {
        self.mime_type = Some(mime_type.to_owned());
        self
    }

    /// Bytes this item takes on the wire, roughly (Base64 grows binary by a third).
    pub fn wire_bytes(&self) -> usize {
        match &self.body {
            Body::Text(t) => t.len(),
            Body::Binary(b) => b.len().div_ceil(3) * 4,
        }
    }

    /// As the protocol carries it: `{uri, mimeType?, text | blob}`.
    pub fn to_value(&self) -> Value {
        let mut m = crate::json::Map::with_capacity(3);
        m.insert("uri", Value::from(self.uri.as_str()));
        if let Some(mime) = &self.mime_type {
            m.insert("mimeType", Value::from(mime.as_str()));
        }
        match &self.body {
            Body::Text(t) => m.insert("text", Value::from(t.as_str())),
            Body::Binary(b) => m.insert("blob", Value::from(crate::base64::encode(b))),
        }
        Value::Object(m)
    }
}

/// The resources a server offers. Called by the engine from any thread.
pub trait ResourceSet: Send + Sync {
    /// The fixed resources, in the order `resources/list` pages them. Called on every listing and
    /// lookup, so keep it cheap (or cache).
    fn resources(&self) -> Vec<Resource>;

    /// The templates, in the order `resources/templates/list` pages them.
    fn templates(&self) -> Vec<ResourceTemplate> {
        Vec::new()
    }

    /// Reads a resource the engine has looked up and the governance allowed. Long reads should
    /// check `ctx.is_cancelled()`. [`RequestError::not_found`] when it does not exist after all.
    fn read(
        &self,
        request: &ReadRequest<'_>,
        ctx: &CallContext<'_>,
    ) -> Result<Vec<ResourceContents>, RequestError>;

    /// Whether clients may subscribe to updates (`resources/subscribe`); the set then calls
    /// [`ResourceNotifier::updated`] when a resource changes.
    fn subscribable(&self) -> bool {
        false
    }

    /// Whether the set announces changes of its list ([`ResourceNotifier::list_changed`]).
    fn announces_list_changes(&self) -> bool {
        false
    }

    /// Called once when the engine is built, with the handle through which the set announces
    /// changes. Keep it if [`ResourceSet::subscribable`] or [`ResourceSet::announces_list_changes`].
    fn attach(&self, notifier: ResourceNotifier) {
        let _ = notifier;
    }

    /// Values for template variable `argument` of `template` starting from `value`, best first
    /// (`completion/complete`); `context` holds the values of the template's other variables the
    /// client already chose. The engine keeps the first 100.
    fn complete(
        &self,
        template: &ResourceTemplate,
        argument: &str,
        value: &str,
        context: &[(String, String)],
    ) -> Vec<String> {
        let _ = (template, argument, value, context);
        Vec::new()
    }
}

/// One session's (or one `subscriptions/listen` stream's) end of the notifier: where its
/// notifications go and what it subscribed to.
struct Listener {
    session: u64,
    sink: Option<NotificationSink>,
    uris: Vec<String>,
    /// Whether it gets `notifications/resources/list_changed`: a session once `initialize` made
    /// it legacy (the 2026-07-28 era hears of changes only on listen streams), a listen stream
    /// when its filter asked.
    list_changed: bool,
    /// A listen stream's id, put in every notification's `_meta` as
    /// `io.modelcontextprotocol/subscriptionId`.
    subscription: Option<Value>,
}

#[derive(Default)]
struct Hub {
    listeners: Mutex<Vec<Listener>>,
    next_session: Mutex<u64>,
}

/// The handle a [`ResourceSet`] announces changes through; the engine gives it one in
/// [`ResourceSet::attach`]. Cloning shares it.
///
/// Each session reached gets its notification on the channel its transport took with
/// [`Session::take_notifications`](super::Session::take_notifications), and each 2026-07-28
/// `subscriptions/listen` stream on its own, tagged with its subscription id; a session or stream
/// whose queue is full (more than [`MAX_PENDING_NOTIFICATIONS`] unwritten) misses it.
#[derive(Clone, Default)]
pub struct ResourceNotifier {
    hub: Arc<Hub>,
}

impl ResourceNotifier {
    fn listeners(&self) -> MutexGuard<'_, Vec<Listener>> {
        // Every update is one push, retain or field assignment: never half-written.
        self.hub.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `notifications/resources/updated` for `uri` to every session subscribed to it.
    pub fn updated(&self, uri: &str) {
        let message = notification(
            "notifications/resources/updated",
            Some(obj([("uri", Value::from(uri))])),
        );
        self.send(|l| l.uris.iter().any(|u| u == uri), &message);
    }

    /// Sends `notifications/resources/list_changed` to every session with a channel and every
    /// listen stream that asked for it.
    pub fn list_changed(&self) {
        let message = notification("notifications/resources/list_changed", None);
        self.send(|l| l.list_changed, &message);
    }

    fn send(&self, wanted: impl Fn(&Listener) -> bool, message: &Value) {
        let mut listeners = self.listeners();
        // A receiver that hung up will never read again: forget its sink.
        for listener in listeners.iter_mut().filter(|l| wanted(l)) {
            let Some(sink) = &listener.sink else {
                continue;
            };
            let delivered = match &listener.subscription {
                None => sink(message),
                Some(id) => sink(&with_subscription(message.clone(), id)),
            };
            if !delivered {
                listener.sink = None;
            }
        }
    }

    /// Registers a `subscriptions/listen` stream: `sink` gets `list_changed` (when asked) and
    /// `updated` for `uris`, each tagged with `subscription`. Returns its number, to
    /// [`forget`](Self::forget) it by.
    pub(super) fn listen(
        &self,
        sink: NotificationSink,
        subscription: &Value,
        list_changed: bool,
        uris: Vec<String>,
    ) -> u64 {
        let id = self.new_session();
        self.listeners().push(Listener {
            session: id,
            sink: Some(sink),
            uris,
            list_changed,
            subscription: Some(subscription.clone()),
        });
        id
    }

    /// The sink a session's transport gave, to share with its listen streams.
    pub(super) fn sink_of(&self, session: u64) -> Option<NotificationSink> {
        (self.listeners().iter())
            .find(|l| l.session == session)
            .and_then(|l| l.sink.clone())
    }

    /// A new session number (sessions are told apart by it in the hub).
    pub(super) fn new_session(&self) -> u64 {
        let mut next = self
            .hub
            .next_session
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *next += 1;
        *next
    }

    fn with_listener<T>(&self, session: u64, f: impl FnOnce(&mut Listener) -> T) -> T {
        let mut listeners = self.listeners();
        let i = match listeners.iter().position(|l| l.session == session) {
            Some(i) => i,
            None => {
                listeners.push(Listener {
                    session,
                    sink: None,
                    uris: Vec::new(),
                    list_changed: false,
                    subscription: None,
                });
                listeners.len() - 1
            }
        };
        f(&mut listeners[i])
    }

    /// Makes `session` hear of list changes (its `initialize` chose the legacy era).
    pub(super) fn hear_list_changes(&self, session: u64) {
        self.with_listener(session, |l| l.list_changed = true);
    }

    pub(super) fn set_sink(&self, session: u64, sink: Option<NotificationSink>) {
        self.with_listener(session, |l| l.sink = sink);
    }

    /// Records a subscription; false when the session already holds the most it may.
    pub(super) fn subscribe(&self, session: u64, uri: &str) -> bool {
        self.with_listener(session, |l| {
            if l.uris.iter().any(|u| u == uri) {
                return true;
            }
            if l.uris.len() >= MAX_SUBSCRIPTIONS_PER_SESSION {
                return false;
            }
            l.uris.push(uri.to_owned());
            true
        })
    }

    pub(super) fn unsubscribe(&self, session: u64, uri: &str) {
        self.with_listener(session, |l| l.uris.retain(|u| u != uri));
    }

    /// Forgets a session (it is going away).
    pub(super) fn forget(&self, session: u64) {
        self.listeners().retain(|l| l.session != session);
    }

    #[cfg(test)]
    fn sessions(&self) -> usize {
        self.listeners().len()
    }
}

/// `message` with `io.modelcontextprotocol/subscriptionId` = `id` in its `params._meta`.
pub(super) fn with_subscription(mut message: Value, id: &Value) -> Value {
    if let Some(m) = message.as_object_mut() {
        if !matches!(m.get("params"), Some(Value::Object(_))) {
            m.insert("params", Value::Object(crate::json::Map::new()));
        }
        if let Some(Value::Object(params)) = m.get_mut("params") {
            if !matches!(params.get("_meta"), Some(Value::Object(_))) {
                params.insert("_meta", Value::Object(crate::json::Map::new()));
            }
            if let Some(Value::Object(meta)) = params.get_mut("_meta") {
                meta.insert(SUBSCRIPTION_ID, id.clone());
            }
        }
    }
    message
}

/// The `_meta` key naming the listen stream a notification belongs to (2026-07-28).
pub(super) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

pub(super) fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = crate::json::Map::with_capacity(3);
    m.insert("jsonrpc", Value::from("2.0"));
    m.insert("method", Value::from(method));
    if let Some(params) = params {
        m.insert("params", params);
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn contents_on_the_wire() {
        let t = ResourceContents::text("a:b", "hi").mime_type("text/plain");
        assert_eq!(
            crate::json::to_string(&t.to_value()),
            r#"{"uri":"a:b","mimeType":"text/plain","text":"hi"}"#
        );
        let b = ResourceContents::binary("a:c", vec![0, 1, 2, 3]);
        assert_eq!(
            crate::json::to_string(&b.to_value()),
            r#"{"uri":"a:c","blob":"AAECAw=="}"#
        );
        assert_eq!(b.wire_bytes(), 8);
    }

    #[test]
    fn notifier_reaches_subscribers_only_and_bounds_what_it_holds() {
        let n = ResourceNotifier::default();
        let (a, b) = (n.new_session(), n.new_session());
        let (tx_a, rx_a) = mpsc::sync_channel(MAX_PENDING_NOTIFICATIONS);
        let (tx_b, rx_b) = mpsc::sync_channel(MAX_PENDING_NOTIFICATIONS);
        n.set_sink(a, Some(channel_sink(tx_a)));
        n.set_sink(b, Some(channel_sink(tx_b)));
        n.hear_list_changes(b);
        assert!(n.subscribe(a, "x:1"));
        n.updated("x:1");
        n.updated("x:2");
        assert_eq!(rx_a.try_iter().count(), 1);
        assert_eq!(rx_b.try_iter().count(), 0);
        n.unsubscribe(a, "x:1");
        n.updated("x:1");
        assert_eq!(rx_a.try_iter().count(), 0);
        for _ in 0..MAX_PENDING_NOTIFICATIONS + 10 {
            n.list_changed();
        }
        assert_eq!(rx_b.try_iter().count(), MAX_PENDING_NOTIFICATIONS);
        for i in 0..MAX_SUBSCRIPTIONS_PER_SESSION {
            assert!(n.subscribe(b, &format!("x:{i}")));
        }
        assert!(!n.subscribe(b, "x:one-more"));
        drop(rx_a);
        n.list_changed();
        n.forget(a);
        n.forget(b);
        assert_eq!(n.sessions(), 0);
    }
}
