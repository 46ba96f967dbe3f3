//! A bounded pool of worker threads that serve connections: threads start on demand, are reused,
//! exit after idling, and never number more than [`MAX_WORKERS`].

use super::limits::{MAX_WORKERS, WORKER_IDLE_EXIT, WORKER_STACK_BYTES};
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex};

/// Work handed to a worker: one connection to serve until it closes.
pub type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Workers waiting for a job (each queued job is already promised to one of them).
    idle: usize,
    workers: usize,
}

/// The pool. Cloning shares it.
#[derive(Clone, Default)]
pub struct Pool {
    inner: Arc<(Mutex<Queue>, Condvar)>,
}

impl Pool {
    pub fn new() -> Pool {
        Pool::default()
    }

    /// Runs `job` on an idle worker, or a new one. Fails (dropping `job`) when [`MAX_WORKERS`]
    /// are all busy or the OS refuses a thread; callers cap connections so this stays rare.
    pub fn execute(&self, job: Job) -> io::Result<()> {
        let (lock, ready) = &*self.inner;
        let mut q = lock.lock().unwrap_or_else(|e| e.into_inner());
        if q.idle > q.jobs.len() {
            q.jobs.push_back(job);
            ready.notify_one();
            return Ok(());
        }
        if q.workers >= MAX_WORKERS {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "all worker threads are busy",
            ));
        }
        q.workers += 1;
        drop(q);
        let pool = self.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-http-worker".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || pool.work(job));
        if spawned.is_err() {
            lock.lock().unwrap_or_else(|e| e.into_inner()).workers -= 1;
        }
        spawned.map(drop)
    }

    /// Worker threads alive now (for tests and diagnostics).
    pub fn workers(&self) -> usize {
        self.inner
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .workers
    }

    fn work(&self, first: Job) {
        let mut job = first;
        loop {
            // A panicking job must not take the worker's bookkeeping down with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            match self.next_job() {
                Some(next) => job = next,
                None => return,
            }
        }
    }

    /// Waits for a job; `None` after [`WORKER_IDLE_EXIT`] without one (the worker then exits).
    fn next_job(&self) -> Option<Job> {
        let (lock, ready) = &*self.inner;
        let mut q = lock.lock().unwrap_or_else(|e| e.into_inner());
        q.idle += 1;
        loop {
            if let Some(job) = q.jobs.pop_front() {
                q.idle -= 1;
                return Some(job);
            }
            let (guard, waited) = ready
                .wait_timeout(q, WORKER_IDLE_EXIT)
                .unwrap_or_else(|e| e.into_inner());
            q = guard;
            if waited.timed_out() && q.jobs.is_empty() {
                q.idle -= 1;
                q.workers -= 1;
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn reuses_an_idle_worker_instead_of_starting_another() {
        let pool = Pool::new();
        let (tx, rx) = mpsc::channel();
        for i in 0..20 {
            let tx = tx.clone();
            pool.execute(Box::new(move || tx.send(i).unwrap())).unwrap();
            assert_eq!(rx.recv().unwrap(), i);
            // Wait until the worker is idle again so the next job can reuse it.
            while pool.inner.0.lock().unwrap().idle == 0 {
                std::thread::yield_now();
            }
        }
        assert_eq!(pool.workers(), 1);
    }

    #[test]
    fn runs_blocked_jobs_concurrently_and_survives_a_panic() {
        let pool = Pool::new();
        let (tx, rx) = mpsc::channel::<()>();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        pool.execute(Box::new(|| panic!("job panics"))).unwrap();
        for _ in 0..4 {
            let (tx, gate) = (tx.clone(), gate.clone());
            pool.execute(Box::new(move || {
                tx.send(()).unwrap();
                let (open, cv) = &*gate;
                let mut o = open.lock().unwrap();
                while !*o {
                    o = cv.wait(o).unwrap();
                }
            }))
            .unwrap();
        }
        // All four started although none has finished: each got its own worker.
        for _ in 0..4 {
            rx.recv().unwrap();
        }
        assert!(pool.workers() >= 4);
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }
}
