//! How a call is reached from outside while it runs: the [`Notify`] sink its notifications go
//! through, and the [`CancelToken`] that tells it to stop. A leaf under the call context, the
//! outbound requests and the engine, which all hand these on. Not for: what a call may send
//! (`context`) or ask (`outbound`, `input`).

use crate::json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Receives the notifications a call emits before its result (progress, log messages).
pub trait Notify: Send + Sync {
    fn notify(&self, notification: Value);

    /// Ends the call's response stream before its result, if the transport can resume it
    /// elsewhere (Streamable HTTP's SEP-1699 polling: the client comes back with `Last-Event-ID`).
    /// False where there is nothing to close or it could not be resumed.
    fn close_stream(&self) -> bool {
        false
    }

    /// True once the transport is shutting down: a long-lived request (a 2026-07-28
    /// `subscriptions/listen` stream held open by its request) then ends with its graceful
    /// response.
    fn shutting_down(&self) -> bool {
        false
    }
}

/// A [`Notify`] that drops everything (for hosts that want only replies).
pub struct DiscardNotifications;

impl Notify for DiscardNotifications {
    fn notify(&self, _notification: Value) {}
}

/// Shared cancellation flag of one call. Cloning shares the flag.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    lock: Mutex<()>,
    changed: Condvar,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Marks the call cancelled and wakes anyone waiting on it.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let _guard = self.inner.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.inner.changed.notify_all();
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Sleeps up to `timeout`, returning early (true) if the call is cancelled meanwhile.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let guard = self.inner.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_cancelled() {
            return true;
        }
        let _ = self
            .inner
            .changed
            .wait_timeout_while(guard, timeout, |_| !self.is_cancelled());
        self.is_cancelled()
    }
}
