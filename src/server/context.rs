//! What a running tool call can see and do: cancellation, progress and log notifications, and
//! requests to the client (through [`super::outbound`] in a legacy session, as an
//! `input_required` round in the 2026-07-28 era through [`super::input`]: one API for both).
//!
//! Notifications never go straight to a transport: they pass through the [`Notify`] sink the
//! transport handed to the engine, so stdio and HTTP (SSE) deliver them the same way.
//!
//! Log messages are bounded: at most [`MAX_LOG_MESSAGES_PER_CALL`] per call (the last one kept for
//! the engine's summary of the call) and at most [`MAX_LOG_DATA_BYTES`] of data each; every string
//! in them passes through [`crate::sanitize`].

use super::input::Round;
use super::outbound::{ClientRequestError, Pending, DEFAULT_CLIENT_REQUEST_TIMEOUT};
pub use super::signal::{CancelToken, DiscardNotifications, Notify};
use crate::json::{obj, to_string, Map, Value};
use std::sync::Mutex;
use std::time::Duration;

/// Most `notifications/message` one call sends, the engine's summary of the call included (a tool
/// gets one fewer; what it logs past that is dropped and counted in the summary).
pub const MAX_LOG_MESSAGES_PER_CALL: usize = 16;

/// Most bytes of a log message's `data` (compact JSON); larger data is replaced by a note of its
/// size.
pub const MAX_LOG_DATA_BYTES: usize = 1024;

/// RFC 5424 severities, in ascending order, as MCP's logging utility names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// Everything a tool call gets besides its arguments.
pub struct CallContext<'a> {
    pub(crate) cancel: CancelToken,
    pub(crate) notify: &'a dyn Notify,
    pub(crate) progress_token: Option<Value>,
    /// Log messages at or above this level are sent; `None`: the client asked for none.
    pub(crate) log_level: Option<LogLevel>,
    /// Whether progress notifications may carry `message` (revision 2025-03-26 and later).
    pub(crate) progress_message: bool,
    pub(crate) last_progress: Mutex<Option<f64>>,
    /// Log messages sent and dropped so far (the per-call cap).
    pub(crate) logs: Mutex<LogBudget>,
    /// The session's table of requests to the client; `None` where there is none to ask (the
    /// 2026-07-28 era, a detached context).
    pub(crate) client: Option<&'a Pending>,
    /// 2026-07-28 `tools/call`: the answers of earlier rounds and what this run asks
    /// ([`super::input`]); requests go there instead of to `client`.
    pub(crate) round: Option<&'a Round<'a>>,
}

/// How much of its log budget a call has used.
#[derive(Default)]
pub(crate) struct LogBudget {
    pub(crate) sent: usize,
    pub(crate) dropped: usize,
}

impl<'a> CallContext<'a> {
    /// A context for calling a tool outside any session (tests, embedding): no notifications.
    pub fn detached(cancel: CancelToken) -> CallContext<'static> {
        CallContext {
            cancel,
            notify: &DiscardNotifications,
            progress_token: None,
            log_level: None,
            progress_message: true,
            last_progress: Mutex::new(None),
            logs: Mutex::default(),
            client: None,
            round: None,
        }
    }

    /// True once the client cancelled this call (or the transport went away).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The call's cancellation token, to hand to helper threads or wait on.
    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }

    /// Sends `notifications/progress` if the request asked for progress. `progress` must increase
    /// from one notification to the next; a value that does not is dropped.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|l| progress <= l) {
            return;
        }
        *last = Some(progress);
        let mut params = Map::new();
        params.insert("progressToken", token.clone());
        params.insert("progress", Value::from(progress));
        if let Some(total) = total {
            params.insert("total", Value::from(total));
        }
        if let (Some(message), true) = (message, self.progress_message) {
            params.insert("message", Value::from(message));
        }
        self.notify.notify(obj([
            ("jsonrpc", Value::from("2.0")),
            ("method", Value::from("notifications/progress")),
            ("params", Value::Object(params)),
        ]));
    }

    /// Sends request `method` to the client and waits up to `timeout` (at most
    /// [`MAX_CLIENT_REQUEST_TIMEOUT`](super::MAX_CLIENT_REQUEST_TIMEOUT)) for its result. Fails at
    /// once when the client did not declare the capability the method needs, or when too many
    /// requests already wait; on timeout or cancellation the client is sent
    /// `notifications/cancelled`.
    ///
    /// In a 2026-07-28 `tools/call` the same call returns the answer the client's retry brought,
    /// or fails with [`ClientRequestError::InputRequired`]: the tool should then return (any
    /// error will do, `?` is enough), and the engine answers `input_required` asking for it; the
    /// tool runs again with the answer when the client retries (the multi round-trip requests of `server::input`). So one tool
    /// serves both eras unchanged.
    pub fn request_client(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, ClientRequestError> {
        if let Some(round) = self.round {
            return round.request(method, params);
        }
        let Some(pending) = self.client else {
            return Err(ClientRequestError::Unsupported(format!(
                "{method} cannot be sent: this request has no session to ask, and only a 2026-07-28 tools/call can ask for input"
            )));
        };
        pending.request((method, params), timeout, self.notify, &self.cancel)
    }

    /// `sampling/createMessage` with `params` (`messages`, `maxTokens`...): the client's model
    /// answers. Waits [`DEFAULT_CLIENT_REQUEST_TIMEOUT`].
    pub fn sample(&self, params: Value) -> Result<Value, ClientRequestError> {
        let timeout = DEFAULT_CLIENT_REQUEST_TIMEOUT;
        self.request_client("sampling/createMessage", Some(params), timeout)
    }

    /// `elicitation/create` with `params` (`message` and `requestedSchema`, or URL mode): the
    /// client's user answers (`action`, `content`).
    pub fn elicit(&self, params: Value) -> Result<Value, ClientRequestError> {
        let timeout = DEFAULT_CLIENT_REQUEST_TIMEOUT;
        self.request_client("elicitation/create", Some(params), timeout)
    }

    /// `roots/list`: the client's roots (`{"roots": [...]}`).
    pub fn list_roots(&self) -> Result<Value, ClientRequestError> {
        let timeout = DEFAULT_CLIENT_REQUEST_TIMEOUT;
        self.request_client("roots/list", None, timeout)
    }

    /// `ping` to the client: `Ok` when it answers within `timeout`.
    pub fn ping_client(&self, timeout: Duration) -> Result<(), ClientRequestError> {
        self.request_client("ping", None, timeout).map(drop)
    }

    /// Closes this call's response stream now when the transport can resume it (Streamable HTTP
    /// with resumable streams: the client polls, reconnecting with `Last-Event-ID`, and receives
    /// what the call sends after this on its new connection). False where nothing was closed (stdio,
    /// JSON replies that cannot be resumed, revisions before 2025-11-25).
    pub fn close_stream(&self) -> bool {
        self.notify.close_stream()
    }

    /// Whether a log message at `level` would be sent.
    pub fn wants_log(&self, level: LogLevel) -> bool {
        self.log_level.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` when the client's log level admits `level`. Strings in `data`
    /// are sanitised; data over [`MAX_LOG_DATA_BYTES`] is replaced by a note of its size; past
    /// [`MAX_LOG_MESSAGES_PER_CALL`]` - 1` messages in this call, the message is dropped.
    ///
    /// What a server logs reaches the client (and whatever the host forwards logs to): never put
    /// argument values, file contents, results or secrets in `data`.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        self.send_log(level, logger, data, false);
    }

    /// Messages dropped by the per-call cap so far.
    pub(crate) fn logs_dropped(&self) -> usize {
        self.budget().dropped
    }

    fn budget(&self) -> std::sync::MutexGuard<'_, LogBudget> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one log message; `last` uses the slot kept for the engine's summary of the call.
    pub(crate) fn send_log(&self, level: LogLevel, logger: Option<&str>, data: Value, last: bool) {
        if !self.wants_log(level) {
            return;
        }
        {
            let mut budget = self.budget();
            let limit = if last {
                MAX_LOG_MESSAGES_PER_CALL
            } else {
                MAX_LOG_MESSAGES_PER_CALL - 1
            };
            if budget.sent >= limit {
                budget.dropped += 1;
                return;
            }
            budget.sent += 1;
        }
        let mut data = data;
        crate::sanitize::sanitize_value(&mut data);
        let bytes = to_string(&data).len();
        if bytes > MAX_LOG_DATA_BYTES {
            data = obj([
                ("omitted", Value::from("log data over the size limit")),
                ("bytes", Value::from(bytes)),
            ]);
        }
        let mut params = Map::new();
        params.insert("level", Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert(
                "logger",
                Value::from(crate::sanitize::sanitize(logger).as_ref()),
            );
        }
        params.insert("data", data);
        self.notify.notify(obj([
            ("jsonrpc", Value::from("2.0")),
            ("method", Value::from("notifications/message")),
            ("params", Value::Object(params)),
        ]));
    }
}
