//! Requests the server sends the client in the middle of a call (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`, `ping`): ids, correlation of the client's response,
//! timeout and cancellation.
//!
//! A running call asks through its [`CallContext`](super::CallContext) (`sample`, `elicit`,
//! `list_roots`, `ping_client`, or `request_client` for any method). The request goes out through
//! the call's notification sink (stdio: a line; HTTP: the call's SSE stream) with an id of the form
//! `srv-N`, and the call waits until the transport hands the session a response with that id,
//! the timeout passes, or the call is cancelled; on timeout or cancellation the client is sent
//! `notifications/cancelled` for the request. A response nobody waits for (unknown id, a second
//! answer, one after the timeout) is dropped. Legacy eras only: in the 2026-07-28 era the same
//! context methods end the call with an `input_required` result instead ([`super::input`]).

use crate::json::{obj, Map, Value};
use crate::jsonrpc;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::signal::{CancelToken, Notify};

/// Most requests one session may have waiting for the client at once; more are refused at once
/// (a call cannot make the session hold an unbounded table).
pub const MAX_PENDING_CLIENT_REQUESTS: usize = 16;
/// How long a call waits for the client by default.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait a call may ask for (a human answering an elicitation is slow, but not forever).
pub const MAX_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// How often a waiting call looks at its cancellation flag (the flag has its own condition
/// variable, and one thread cannot wait on two; a short step keeps cancellation prompt).
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Why a request to the client brought no result.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientRequestError {
    /// The client did not declare the capability the method needs (named), or the session is in
    /// the 2026-07-28 era, or outside any session.
    Unsupported(String),
    /// [`MAX_PENDING_CLIENT_REQUESTS`] are already waiting.
    TooMany,
    /// No response within the timeout.
    Timeout(Duration),
    /// The call was cancelled while it waited.
    Cancelled,
    /// The client answered with a JSON-RPC error (`code`, `message`).
    Rejected { code: i64, message: String },
    /// 2026-07-28: the answer is asked of the client in the call's `input_required` result; the
    /// call ends and runs again when the client retries with the answer (multi round-trip
    /// requests).
    InputRequired,
    /// 2026-07-28: the call already asked the client
    /// [`MAX_INPUT_REQUESTS_PER_CALL`] times.
    TooManyInputRequests,
}

impl fmt::Display for ClientRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientRequestError::Unsupported(why) => f.write_str(why),
            ClientRequestError::TooMany => write!(
                f,
                "{MAX_PENDING_CLIENT_REQUESTS} requests to the client are already waiting"
            ),
            ClientRequestError::Timeout(after) => {
                write!(
                    f,
                    "the client did not answer within {} ms",
                    after.as_millis()
                )
            }
            ClientRequestError::Cancelled => f.write_str("the call was cancelled"),
            ClientRequestError::Rejected { code, message } => {
                write!(f, "the client refused the request ({code}): {message}")
            }
            ClientRequestError::InputRequired => f.write_str(
                "the client's answer is needed first: the call ends with input_required and runs again when retried with it",
            ),
            ClientRequestError::TooManyInputRequests => write!(
                f,
                "a call may ask the client at most {} times",
                MAX_INPUT_REQUESTS_PER_CALL
            ),
        }
    }
}

impl std::error::Error for ClientRequestError {}

/// Most requests one call may make of the client over all its rounds (answered and open).
pub const MAX_INPUT_REQUESTS_PER_CALL: usize = 8;

/// Where one response is delivered.
#[derive(Default)]
struct Slot {
    outcome: Mutex<Option<Result<Value, Value>>>,
    ready: Condvar,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Option<Result<Value, Value>>> {
        // Written once, by one assignment: a poisoned lock still holds a whole value.
        self.outcome.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One session's table of requests waiting for the client, and what the client said it can answer.
#[derive(Default)]
pub(crate) struct Pending {
    waiting: Mutex<Vec<(String, Arc<Slot>)>>,
    next: AtomicU64,
    /// The `capabilities` of the client's `initialize`.
    capabilities: Mutex<Option<Value>>,
}

impl Pending {
    /// Records the client's declared capabilities (from `initialize`).
    pub(crate) fn set_capabilities(&self, capabilities: Option<Value>) {
        *self.capabilities.lock().unwrap_or_else(|e| e.into_inner()) = capabilities;
    }

    fn waiting(&self) -> MutexGuard<'_, Vec<(String, Arc<Slot>)>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands a client's response to the request waiting for it; false when none is (then the
    /// response is dropped).
    pub(crate) fn deliver(&self, id: &Value, outcome: Result<Value, Value>) -> bool {
        let Value::String(key) = id else {
            return false;
        };
        let slot = {
            let mut waiting = self.waiting();
            match waiting.iter().position(|(k, _)| k == key.as_str()) {
                Some(i) => waiting.swap_remove(i).1,
                None => return false,
            }
        };
        *slot.lock() = Some(outcome);
        slot.ready.notify_all();
        true
    }

    fn forget(&self, key: &str) {
        self.waiting().retain(|(k, _)| k != key);
    }

    /// Sends `method` with `params` to the client through `notify` and waits for its response.
    pub(crate) fn request(
        &self,
        (method, params): (&str, Option<Value>),
        timeout: Duration,
        notify: &dyn Notify,
        cancel: &CancelToken,
    ) -> Result<Value, ClientRequestError> {
        {
            let declared = self.capabilities.lock().unwrap_or_else(|e| e.into_inner());
            check_capability(declared.as_ref(), method, params.as_ref())?;
        }
        let timeout = timeout.min(MAX_CLIENT_REQUEST_TIMEOUT);
        let key = format!("srv-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let slot = Arc::new(Slot::default());
        {
            let mut waiting = self.waiting();
            if waiting.len() >= MAX_PENDING_CLIENT_REQUESTS {
                return Err(ClientRequestError::TooMany);
            }
            waiting.push((key.clone(), slot.clone()));
        }
        let mut message = Map::with_capacity(4);
        message.insert("jsonrpc", Value::from("2.0"));
        message.insert("id", Value::from(key.as_str()));
        message.insert("method", Value::from(method));
        if let Some(params) = params {
            message.insert("params", params);
        }
        notify.notify(Value::Object(message));
        let deadline = Instant::now() + timeout;
        let mut outcome = slot.lock();
        let failure = loop {
            if let Some(outcome) = outcome.take() {
                return outcome.map_err(|error| ClientRequestError::Rejected {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                });
            }
            if cancel.is_cancelled() {
                break ClientRequestError::Cancelled;
            }
            let now = Instant::now();
            if now >= deadline {
                break ClientRequestError::Timeout(timeout);
            }
            let step = CANCEL_POLL.min(deadline - now);
            outcome = (slot.ready.wait_timeout(outcome, step))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(outcome);
        self.forget(&key);
        // The spec's SHOULD: a request given up on is cancelled, so the client stops asking its
        // user.
        let reason = failure.to_string();
        notify.notify(obj([
            ("jsonrpc", Value::from("2.0")),
            ("method", Value::from("notifications/cancelled")),
            (
                "params",
                obj([
                    ("requestId", Value::from(key.as_str())),
                    ("reason", Value::from(reason)),
                ]),
            ),
        ]));
        Err(failure)
    }
}

/// Refuses `method` when it needs a capability the client did not declare in `declared` (the
/// `capabilities` of `initialize`, or a 2026-07-28 request's
/// `io.modelcontextprotocol/clientCapabilities`). URL-mode elicitation (2025-11-25) needs
/// `elicitation.url`; form mode is what a bare `elicitation: {}` declares.
pub(crate) fn check_capability(
    declared: Option<&Value>,
    method: &str,
    params: Option<&Value>,
) -> Result<(), ClientRequestError> {
    let Some(needed) = needed_capability(method) else {
        return Ok(());
    };
    let capability = declared.and_then(|c| c.get(needed));
    let url_mode = method == "elicitation/create"
        && params.and_then(|p| p.get("mode")).and_then(Value::as_str) == Some("url");
    let (ok, what) = if url_mode {
        let url = capability.and_then(|c| c.get("url"));
        (matches!(url, Some(Value::Object(_))), "elicitation.url")
    } else {
        (matches!(capability, Some(Value::Object(_))), needed)
    };
    if ok {
        return Ok(());
    }
    Err(ClientRequestError::Unsupported(format!(
        "the client did not declare the {what} capability, so {method} cannot be sent"
    )))
}

/// The capability `method` needs the client to have declared (`None`: none, e.g. `ping`).
pub(crate) fn needed_capability(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Whether `message` is a response (no `method`, a `result` or `error`), which a transport must
/// hand the session at once: a call may be waiting for it.
pub(crate) fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
        && message.get("id").is_some_and(jsonrpc::is_valid_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    /// Records what is sent, and answers requests by calling `answer` with their id.
    struct Client<'a> {
        sent: StdMutex<Vec<Value>>,
        answer: Box<dyn Fn(&Value) + Send + Sync + 'a>,
    }

    impl Notify for Client<'_> {
        fn notify(&self, message: Value) {
            if let Some(id) = message.get("id") {
                (self.answer)(id);
            }
            self.sent.lock().unwrap().push(message);
        }
    }

    fn client<'a>(answer: impl Fn(&Value) + Send + Sync + 'a) -> Client<'a> {
        Client {
            sent: StdMutex::new(Vec::new()),
            answer: Box::new(answer),
        }
    }

    #[test]
    fn a_response_reaches_the_request_with_its_id_once() {
        let pending = Pending::default();
        let c = client(|id| {
            assert!(pending.deliver(id, Ok(obj([("x", Value::from(1))]))));
            // A second answer finds nobody waiting.
            assert!(!pending.deliver(id, Ok(Value::Null)));
        });
        let cancel = CancelToken::new();
        let got = pending.request(("ping", None), Duration::from_secs(5), &c, &cancel);
        assert_eq!(crate::json::to_string(&got.unwrap()), r#"{"x":1}"#);
        let sent = c.sent.lock().unwrap();
        assert_eq!(
            crate::json::to_string(&sent[0]),
            r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#
        );
        assert!(!pending.deliver(&Value::from(1), Ok(Value::Null)));
    }

    #[test]
    fn errors_timeouts_and_cancellation_end_the_wait() {
        let pending = Pending::default();
        let rejecting = client(|id| {
            let error = obj([("code", Value::from(-1)), ("message", Value::from("no"))]);
            pending.deliver(id, Err(error));
        });
        let cancel = CancelToken::new();
        let got = pending.request(("ping", None), Duration::from_secs(5), &rejecting, &cancel);
        assert_eq!(
            got.unwrap_err(),
            ClientRequestError::Rejected {
                code: -1,
                message: "no".into()
            }
        );
        let silent = client(|_| {});
        let started = Instant::now();
        let got = pending.request(("ping", None), Duration::from_millis(50), &silent, &cancel);
        assert_eq!(
            got.unwrap_err(),
            ClientRequestError::Timeout(Duration::from_millis(50))
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        let sent = silent.sent.lock().unwrap();
        assert_eq!(
            sent[1].get("method").and_then(Value::as_str),
            Some("notifications/cancelled")
        );
        drop(sent);
        let cancelled = CancelToken::new();
        cancelled.cancel();
        let got = pending.request(("ping", None), Duration::from_secs(60), &silent, &cancelled);
        assert_eq!(got.unwrap_err(), ClientRequestError::Cancelled);
        assert!(pending.waiting().is_empty());
    }

    impl Pending {
        fn check_capability(
            &self,
            method: &str,
            params: Option<&Value>,
        ) -> Result<(), ClientRequestError> {
            let declared = self.capabilities.lock().unwrap();
            check_capability(declared.as_ref(), method, params)
        }
    }

    #[test]
    fn undeclared_capabilities_are_refused_before_anything_is_sent() {
        let pending = Pending::default();
        let caps = |text: &str| Some(crate::json::parse(text.as_bytes()).unwrap());
        let url = Some(obj([("mode", Value::from("url"))]));
        let form = Some(obj([("message", Value::from("m"))]));
        pending.set_capabilities(caps(r#"{"elicitation":{}}"#));
        assert!(pending
            .check_capability("elicitation/create", form.as_ref())
            .is_ok());
        let e = pending
            .check_capability("elicitation/create", url.as_ref())
            .unwrap_err();
        assert!(e.to_string().contains("elicitation.url"), "{e}");
        assert!(pending
            .check_capability("sampling/createMessage", None)
            .is_err());
        assert!(pending.check_capability("ping", None).is_ok());
        pending.set_capabilities(caps(
            r#"{"elicitation":{"url":{}},"roots":{},"sampling":true}"#,
        ));
        assert!(pending
            .check_capability("elicitation/create", url.as_ref())
            .is_ok());
        assert!(pending.check_capability("roots/list", None).is_ok());
        // A capability is an object; anything else declares nothing.
        assert!(pending
            .check_capability("sampling/createMessage", None)
            .is_err());
        pending.set_capabilities(None);
        assert!(pending.check_capability("roots/list", None).is_err());
    }

    #[test]
    fn the_table_is_bounded() {
        let pending = Pending::default();
        for i in 0..MAX_PENDING_CLIENT_REQUESTS {
            pending
                .waiting()
                .push((format!("x{i}"), Arc::new(Slot::default())));
        }
        let got = pending.request(
            ("ping", None),
            Duration::from_secs(1),
            &client(|_| {}),
            &CancelToken::new(),
        );
        assert_eq!(got.unwrap_err(), ClientRequestError::TooMany);
    }
}
