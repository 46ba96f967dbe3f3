//! `subscriptions/listen` (2026-07-28): the change-notification stream that replaces the legacy
//! GET stream and `resources/subscribe` in the stateless era.
//!
//! The request carries a filter (`notifications`: `toolsListChanged`, `promptsListChanged`,
//! `resourcesListChanged`, `resourceSubscriptions`). The server honours what it can announce:
//! `resources/list_changed` when its resource set announces list changes, `resources/updated` for
//! the listed URIs it serves and the governance admits when the set is subscribable; the tool and
//! prompt lists never change while a server runs, so those are never honoured. The first message
//! of the stream is `notifications/subscriptions/acknowledged` with the honoured subset; every
//! message of it carries `_meta["io.modelcontextprotocol/subscriptionId"]` = the request's id.
//!
//! Two ways to hold a stream, chosen by the transport:
//! - held by the request (HTTP, embedding): the handler keeps the request open, writing each
//!   notification through the request's [`Notify`] (HTTP: the POST's SSE response), until the
//!   request is cancelled (HTTP: the client closed the stream). At most [`MAX_LISTEN_STREAMS`]
//!   such requests are open per engine (each holds a connection and a worker); notifications not
//!   yet written wait in a queue of at most [`MAX_PENDING_NOTIFICATIONS`], past which they are
//!   dropped. When the transport shuts down ([`Notify::shutting_down`]) the stream ends with the
//!   listen request's response (`resultType: complete`, the subscription id in `_meta`), the
//!   specification's graceful closure.
//! - deferred (stdio, [`Session::defer_listens`]): the request is acknowledged and returns at once
//!   without a reply; its notifications go out on the session's notification channel (the same
//!   bounded queue as resource updates) until the client sends `notifications/cancelled` naming
//!   it. At most [`MAX_LISTENS_PER_SESSION`] per session.
//!
//! Over the limit: -32600 naming it. A listen of a legacy session is -32601, as before
//! `initialize` without the era's `_meta`.

use super::limits::{MAX_LISTENS_PER_SESSION, MAX_LISTEN_STREAMS};
use super::{modern_scope, Phase, Session, META_PROTOCOL_VERSION};
use crate::json::{obj, to_string, Map, Value};
use crate::jsonrpc::{error_reply, RpcError};
use crate::server::context::{CancelToken, Notify};
use crate::server::resource::{
    channel_sink, with_subscription, MAX_PENDING_NOTIFICATIONS, MAX_SUBSCRIPTIONS_PER_SESSION,
    SUBSCRIPTION_ID,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How often a held stream looks at its cancellation while no notification comes.
const LISTEN_POLL: Duration = Duration::from_millis(100);

/// What a listen filter asks for, as far as this server can honour it.
struct Honoured {
    list_changed: bool,
    uris: Vec<String>,
}

impl Honoured {
    /// The `notifications` member of the acknowledgement: only what is honoured.
    fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(2);
        if self.list_changed {
            m.insert("resourcesListChanged", Value::from(true));
        }
        if !self.uris.is_empty() {
            let uris: Vec<Value> = self.uris.iter().map(|u| Value::from(u.as_str())).collect();
            m.insert("resourceSubscriptions", Value::from(uris));
        }
        Value::Object(m)
    }
}

/// A place among the engine's [`MAX_LISTEN_STREAMS`], given back when dropped.
struct Slot<'a>(&'a AtomicUsize);

impl<'a> Slot<'a> {
    fn take(open: &'a AtomicUsize) -> Option<Slot<'a>> {
        open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < MAX_LISTEN_STREAMS).then_some(n + 1)
        })
        .ok()
        .map(|_| Slot(open))
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Session {
    /// Makes this session's `subscriptions/listen` requests return at once (no reply) and send
    /// their notifications on the channel [`Session::take_notifications`] gives, until the client
    /// cancels them: for a transport that serves one request at a time on a shared channel
    /// (stdio).
    pub fn defer_listens(&self) {
        self.defer_listens
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Handles one `subscriptions/listen` request (see the module); `None` when it ends without a
    /// reply (deferred, or cancelled).
    pub(super) fn listen(
        &self,
        id: Value,
        params: Option<Value>,
        notify: &dyn Notify,
        cancel: CancelToken,
    ) -> Option<Value> {
        let refuse = |error: RpcError| Some(error_reply(Some(id.clone()), &error, false));
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return refuse(RpcError::invalid_params("params must be an object")),
        };
        let meta = params.get("_meta");
        let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
        let (Some(version), Phase::New) = (version, self.state().phase) else {
            return refuse(RpcError::unknown_method(&Value::from(
                "subscriptions/listen",
            )));
        };
        if let Err(e) = modern_scope(&id, version, meta, notify, cancel.clone()) {
            return refuse(e);
        }
        let honoured = match self.honoured(&params) {
            Ok(h) => h,
            Err(e) => return refuse(e),
        };
        let ack = obj([
            ("jsonrpc", Value::from("2.0")),
            (
                "method",
                Value::from("notifications/subscriptions/acknowledged"),
            ),
            ("params", obj([("notifications", honoured.to_value())])),
        ]);
        let ack = with_subscription(ack, &id);
        let notifier = self.engine.notifier.as_ref();
        if self.defer_listens.load(Ordering::SeqCst) {
            let key = to_string(&id);
            {
                let mut state = self.state();
                if state.listens.iter().any(|(k, _)| *k == key) {
                    drop(state);
                    return refuse(RpcError::invalid_request(
                        "a subscriptions/listen stream with this id is already open",
                    ));
                }
                if state.listens.len() >= MAX_LISTENS_PER_SESSION {
                    drop(state);
                    return refuse(RpcError::invalid_request(format!(
                        "at most {MAX_LISTENS_PER_SESSION} subscriptions/listen streams are open at once; cancel one first"
                    )));
                }
                state.listens.push((key.clone(), None));
            }
            // Written before the stream is registered: nothing of it can come first.
            notify.notify(ack);
            let registered = notifier.and_then(|n| {
                let sink = n.sink_of(self.hub_session)?;
                Some(n.listen(sink, &id, honoured.list_changed, honoured.uris))
            });
            let kept = {
                let mut state = self.state();
                let entry = state.listens.iter_mut().find(|(k, _)| *k == key);
                entry.map(|(_, slot)| *slot = registered).is_some()
            };
            // Cancelled meanwhile: the stream ends before it began.
            if let (false, Some(listener), Some(n)) = (kept, registered, notifier) {
                n.forget(listener);
            }
            return None;
        }
        let Some(_slot) = Slot::take(&self.engine.open_listens) else {
            return refuse(RpcError::invalid_request(format!(
                "at most {MAX_LISTEN_STREAMS} subscriptions/listen streams are open at once; close one first"
            )));
        };
        // Registered before the acknowledgement (a client may cause a change as soon as it reads
        // it); what arrives meanwhile waits in the queue, which is read only after the ack.
        let (sender, pending) = mpsc::sync_channel(MAX_PENDING_NOTIFICATIONS);
        let registered = notifier.map(|n| {
            let sink = channel_sink(sender.clone());
            (n, n.listen(sink, &id, honoured.list_changed, honoured.uris))
        });
        notify.notify(ack);
        let mut graceful = false;
        while !cancel.is_cancelled() {
            if notify.shutting_down() {
                graceful = true;
                break;
            }
            match pending.recv_timeout(LISTEN_POLL) {
                Ok(notification) => notify.notify(notification),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Some((n, listener)) = registered {
            n.forget(listener);
        }
        drop(sender);
        // The server ends the stream: its response says so (an abrupt close carries none).
        graceful.then(|| {
            let meta = obj([(SUBSCRIPTION_ID, id.clone())]);
            let result = obj([("resultType", Value::from("complete")), ("_meta", meta)]);
            crate::jsonrpc::result_reply(id, self.modern_result(result))
        })
    }

    /// Ends the deferred stream with this id key, if there is one (its cancellation).
    pub(super) fn end_listen(&self, key: &str) {
        let ended = {
            let mut state = self.state();
            let i = state.listens.iter().position(|(k, _)| k == key);
            i.map(|i| state.listens.remove(i))
        };
        if let (Some((_, Some(listener))), Some(n)) = (ended, &self.engine.notifier) {
            n.forget(listener);
        }
    }

    /// Ends every deferred stream (the transport is closing its channel).
    pub(super) fn end_listens(&self) {
        let ended = std::mem::take(&mut self.state().listens);
        if let Some(n) = &self.engine.notifier {
            for listener in ended.into_iter().filter_map(|(_, l)| l) {
                n.forget(listener);
            }
        }
    }

    /// What of the filter in `params.notifications` this server honours; -32602 naming a member
    /// of the wrong type.
    fn honoured(&self, params: &Map) -> Result<Honoured, RpcError> {
        let filter = params
            .get("notifications")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "notifications must be an object (the filter of what to listen for)",
                )
            })?;
        let flag = |name: &str| match filter.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(RpcError::invalid_params(format!(
                "notifications.{name} must be a boolean"
            ))),
        };
        // Asked or not, the tool and prompt lists never change: never honoured.
        flag("toolsListChanged")?;
        flag("promptsListChanged")?;
        let list_changed = flag("resourcesListChanged")?;
        let not_uris = || {
            RpcError::invalid_params(format!(
                "notifications.resourceSubscriptions must be a list of at most {MAX_SUBSCRIPTIONS_PER_SESSION} URI strings"
            ))
        };
        let uris: Vec<&str> = match filter.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.len() <= MAX_SUBSCRIPTIONS_PER_SESSION => items
                .iter()
                .map(|u| u.as_str().ok_or_else(not_uris))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(not_uris()),
        };
        let set = self.engine.toolset.resource_set();
        let subscribable = set.is_some_and(|s| s.subscribable());
        let mut honoured_uris: Vec<String> = Vec::new();
        for uri in uris.into_iter().filter(|_| subscribable) {
            // A URI the server does not serve, or the governance refuses, is left out.
            let admitted = self
                .find_resource(uri)
                .is_ok_and(|found| self.admit_resource(uri, found, None).verdict.allowed);
            if admitted && !honoured_uris.iter().any(|u| u == uri) {
                honoured_uris.push(uri.to_owned());
            }
        }
        Ok(Honoured {
            list_changed: list_changed && set.is_some_and(|s| s.announces_list_changes()),
            uris: honoured_uris,
        })
    }
}
