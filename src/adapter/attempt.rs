//! One attempt of one check: its deadline, its abort hooks and whether a response started.
//!
//! The engine creates an [`Attempt`], runs the adapter on a worker thread and watches the
//! clock. At the deadline (or on cancellation) it calls [`Attempt::abort`], which runs every
//! hook the adapter registered — shutting down an HTTP agent, killing a process group — so a
//! stuck peer is always cut off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Hook = Box<dyn FnOnce() + Send>;

/// A deadline plus a way for the watchdog to interrupt blocking I/O.
#[derive(Clone)]
pub struct Attempt {
    deadline: Instant,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    response_seen: AtomicBool,
    aborted: AtomicBool,
    hooks: Mutex<Vec<Hook>>,
}

impl Attempt {
    /// A fresh attempt ending at `deadline`.
    pub fn new(deadline: Instant) -> Attempt {
        Attempt {
            deadline,
            shared: Arc::default(),
        }
    }

    /// When the attempt must be over.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Time left until the deadline (zero when past).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// True once the deadline has passed or the attempt was aborted.
    pub fn expired(&self) -> bool {
        self.is_aborted() || Instant::now() >= self.deadline
    }

    /// Records that a response byte arrived.
    pub fn mark_response(&self) {
        self.shared.response_seen.store(true, Ordering::SeqCst);
    }

    /// Whether any response byte arrived.
    pub fn response_seen(&self) -> bool {
        self.shared.response_seen.load(Ordering::SeqCst)
    }

    /// Registers a hook run when the attempt is aborted; runs it at once if it already was.
    pub fn on_abort(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = lock(&self.shared.hooks);
        if self.is_aborted() {
            drop(hooks);
            hook();
        } else {
            hooks.push(Box::new(hook));
        }
    }

    /// Whether the watchdog aborted the attempt.
    pub fn is_aborted(&self) -> bool {
        self.shared.aborted.load(Ordering::SeqCst)
    }

    /// Aborts: runs every registered hook once.
    pub fn abort(&self) {
        let hooks = {
            let mut hooks = lock(&self.shared.hooks);
            self.shared.aborted.store(true, Ordering::SeqCst);
            std::mem::take(&mut *hooks)
        };
        for hook in hooks {
            hook();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poison| poison.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn hooks_run_once_and_late_hooks_run_immediately() {
        let a = Attempt::new(Instant::now() + Duration::from_secs(5));
        let n = Arc::new(AtomicUsize::new(0));
        let n1 = n.clone();
        a.on_abort(move || {
            n1.fetch_add(1, Ordering::SeqCst);
        });
        a.abort();
        a.abort();
        assert_eq!(n.load(Ordering::SeqCst), 1);
        let n2 = n.clone();
        a.on_abort(move || {
            n2.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(n.load(Ordering::SeqCst), 11);
        assert!(a.expired());
    }
}
