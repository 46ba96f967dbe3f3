//! The bound on how many git processes one server runs at once. Over HTTP, calls run concurrently
//! and each git may use the whole memory limit, so the limit multiplies by the number running:
//! at most [`MAX_CONCURRENT_GIT`] run, at most [`MAX_QUEUED_GIT`] more wait (in no fixed order),
//! and a call past both gets [`busy_message`] at once. A waiting call gives up when its client
//! cancels or after [`QUEUE_WAIT`].

use agentteams_mcp::server::CancelToken;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// git processes one server runs at once.
pub const MAX_CONCURRENT_GIT: usize = 4;

/// Calls that may wait for a running git to finish; more are refused as busy.
pub const MAX_QUEUED_GIT: usize = 16;

/// Longest wait for a turn (then the call fails as busy).
pub const QUEUE_WAIT: Duration = Duration::from_secs(15);

/// Longest sleep between two cancellation checks while waiting.
const CANCEL_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
struct Counts {
    running: usize,
    waiting: usize,
}

/// A counting gate with a bounded queue.
#[derive(Debug)]
pub struct Gate {
    counts: Mutex<Counts>,
    turn: Condvar,
    max_running: usize,
    max_waiting: usize,
    wait: Duration,
}

/// One admitted git process; dropping it lets the next waiting call run.
#[derive(Debug)]
pub struct Permit<'a> {
    gate: &'a Gate,
}

/// Why a call got no permit.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Busy(String),
    Cancelled,
}

/// The error of a call refused because the server is busy; `waited` says whether it queued.
pub fn busy_message(waited: Option<Duration>) -> String {
    let reason = match waited {
        None => format!("{MAX_QUEUED_GIT} more calls are already waiting"),
        Some(wait) => format!("no turn came within {}s", wait.as_secs()),
    };
    format!(
        "gitread is busy: {MAX_CONCURRENT_GIT} git processes are running and {reason}; \
         try again shortly"
    )
}

impl Default for Gate {
    fn default() -> Gate {
        Gate::new(MAX_CONCURRENT_GIT, MAX_QUEUED_GIT, QUEUE_WAIT)
    }
}

impl Gate {
    pub fn new(max_running: usize, max_waiting: usize, wait: Duration) -> Gate {
        Gate {
            counts: Mutex::new(Counts::default()),
            turn: Condvar::new(),
            max_running,
            max_waiting,
            wait,
        }
    }

    /// A permit to run one git process: at once if fewer than the maximum run, else after a wait
    /// in the queue (if it has room) until one finishes, the client cancels, or the wait ends.
    pub fn enter(&self, cancel: &CancelToken) -> Result<Permit<'_>, Refusal> {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.running < self.max_running {
            counts.running += 1;
            return Ok(Permit { gate: self });
        }
        if counts.waiting >= self.max_waiting {
            return Err(Refusal::Busy(busy_message(None)));
        }
        counts.waiting += 1;
        let deadline = Instant::now() + self.wait;
        let outcome = loop {
            if cancel.is_cancelled() {
                break Err(Refusal::Cancelled);
            }
            if counts.running < self.max_running {
                counts.running += 1;
                break Ok(Permit { gate: self });
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(Refusal::Busy(busy_message(Some(self.wait))));
            }
            counts = self
                .turn
                .wait_timeout(counts, CANCEL_POLL.min(deadline - now))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        counts.waiting -= 1;
        outcome
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut counts = self
            .gate
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.running -= 1;
        self.gate.turn.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_admits_queues_then_refuses_at_its_edges() {
        let gate = Gate::new(2, 1, Duration::from_millis(50));
        let never = CancelToken::new();
        let first = gate.enter(&never);
        let second = gate.enter(&never);
        assert!(first.is_ok() && second.is_ok());
        // The third waits its 50 ms and gives up; meanwhile the queue is full.
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.enter(&never).map(drop));
            while gate.counts.lock().map(|c| c.waiting).unwrap_or(1) == 0 {
                std::thread::yield_now();
            }
            assert_eq!(
                gate.enter(&never).map(drop),
                Err(Refusal::Busy(busy_message(None)))
            );
            assert_eq!(
                waiter.join().ok(),
                Some(Err(Refusal::Busy(busy_message(Some(
                    Duration::from_millis(50)
                )))))
            );
        });
        // A waiting call that is cancelled stops waiting.
        let cancelled = CancelToken::new();
        cancelled.cancel();
        assert_eq!(gate.enter(&cancelled).map(drop), Err(Refusal::Cancelled));
        // A finished git lets the next call in.
        drop(first);
        let third = gate.enter(&never);
        assert!(third.is_ok());
        drop((second, third));
        let counts = gate.counts.lock().map(|c| (c.running, c.waiting));
        assert_eq!(counts.ok(), Some((0, 0)));
    }

    #[test]
    fn a_waiting_call_runs_when_a_permit_is_dropped() {
        let gate = Gate::new(1, 1, Duration::from_secs(60));
        let never = CancelToken::new();
        let held = gate.enter(&never);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.enter(&never).is_ok());
            while gate.counts.lock().map(|c| c.waiting).unwrap_or(1) == 0 {
                std::thread::yield_now();
            }
            drop(held);
            assert_eq!(waiter.join().ok(), Some(true));
        });
    }
}
