//! One attempt of one check: its deadline, its abort hooks and whether a response started.
//!
//! The engine creates an [`Attempt`], runs the adapter on a worker thread and watches the
//! clock. At the deadline (or on cancellation) it calls [`Attempt::abort`], which runs every
//! hook the adapter registered — shutting down an HTTP agent, killing a process group — so a
//! stuck peer is always cut off.
//!
//! A step inside an attempt that must end earlier (one `DELETE` of several within the cleanup
//! budget) uses [`Attempt::within`]: a narrower deadline over the same hooks, so the watchdog
//! that watches the attempt still cuts it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::deadline::Deadline;
use super::sync::lock;
use crate::contract::Bound;

type Hook = Box<dyn FnOnce() + Send>;

/// A deadline plus a way for the watchdog to interrupt blocking I/O.
#[derive(Clone)]
pub struct Attempt {
    deadline: Deadline,
    shared: Arc<Shared>,
    /// Whether a response byte arrived for the request in flight: shared by the narrower
    /// attempts of [`Attempt::within`], not by a request sent beside ([`Attempt::beside`]).
    response_seen: Arc<AtomicBool>,
}

#[derive(Default)]
struct Shared {
    aborted: AtomicBool,
    hooks: Mutex<Vec<Hook>>,
}

impl Attempt {
    /// A fresh attempt ending at `deadline`.
    pub fn new(deadline: Deadline) -> Attempt {
        Attempt {
            deadline,
            shared: Arc::default(),
            response_seen: Arc::default(),
        }
    }

    /// The same attempt (hooks, abort, response) ending no later than `limit`.
    pub fn within(&self, limit: Deadline) -> Attempt {
        Attempt {
            deadline: self.deadline.min(limit),
            shared: Arc::clone(&self.shared),
            response_seen: Arc::clone(&self.response_seen),
        }
    }

    /// The same attempt (deadline, hooks, abort) for a request sent at once beside this
    /// one's, on a connection of its own: what arrives for the one is no answer to the other.
    pub fn beside(&self) -> Attempt {
        Attempt {
            deadline: self.deadline,
            shared: Arc::clone(&self.shared),
            response_seen: Arc::default(),
        }
    }

    /// When the attempt must be over.
    pub fn deadline(&self) -> Instant {
        self.deadline.at()
    }

    /// The bound that set the deadline.
    pub fn bound(&self) -> Bound {
        self.deadline.bound()
    }

    /// The deadline with its bound.
    pub fn ends(&self) -> Deadline {
        self.deadline
    }

    /// Time left until the deadline (zero when past).
    pub fn remaining(&self) -> Duration {
        self.deadline.remaining()
    }

    /// True once the deadline has passed or the attempt was aborted.
    pub fn expired(&self) -> bool {
        self.is_aborted() || self.deadline.passed()
    }

    /// Records that a response byte arrived.
    pub fn mark_response(&self) {
        self.response_seen.store(true, Ordering::SeqCst);
    }

    /// Starts a new request within the attempt: what arrived so far answered earlier
    /// requests (an established session, a listed inventory), not this one. A deadline that
    /// then passes with nothing received for it is "no response" (UNREACHABLE), not a partial
    /// one.
    pub fn next_request(&self) {
        self.response_seen.store(false, Ordering::SeqCst);
    }

    /// Whether any response byte arrived (since [`Attempt::next_request`], if it was called).
    pub fn response_seen(&self) -> bool {
        self.response_seen.load(Ordering::SeqCst)
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

    /// The call is over: drops the hooks without running them. A hook holds what the call
    /// used (an HTTP agent, a process group), which may hold this attempt in turn (the agent's
    /// stage recorder marks the response on it); dropping the hooks breaks that cycle, which
    /// would otherwise keep every attempt's connections and buffers alive for the life of
    /// the process — nothing for one `check`, a leak for `serve`'s thousands of runs.
    pub fn release(&self) {
        let hooks = std::mem::take(&mut *lock(&self.shared.hooks));
        drop(hooks);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn hooks_run_once_and_late_hooks_run_immediately() {
        let a = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
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

    #[test]
    fn release_frees_an_attempt_its_own_hook_holds() {
        let a = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
        let held = a.clone();
        a.on_abort(move || drop(held));
        let state = Arc::downgrade(&a.shared);
        a.release();
        drop(a);
        assert!(
            state.upgrade().is_none(),
            "the hook's clone kept the attempt alive"
        );
    }

    #[test]
    fn a_new_request_has_received_nothing_yet() {
        let a = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
        let step = a.within(Deadline::after(Duration::from_secs(1), Bound::Cleanup));
        step.mark_response();
        assert!(a.response_seen());
        a.next_request();
        assert!(!a.response_seen() && !step.response_seen());
    }

    #[test]
    fn a_request_beside_sees_only_its_own_response_and_shares_the_abort() {
        let a = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
        let lane = a.beside();
        a.mark_response();
        assert!(!lane.response_seen());
        lane.mark_response();
        a.next_request();
        assert!(lane.response_seen() && !a.response_seen());
        a.abort();
        assert!(lane.is_aborted() && lane.deadline() == a.deadline());
    }

    #[test]
    fn a_narrower_attempt_shares_the_hooks() {
        let outer = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::Cleanup));
        let inner = outer.within(Deadline::after(Duration::from_millis(250), Bound::Cleanup));
        assert!(inner.deadline() < outer.deadline());
        let n = Arc::new(AtomicUsize::new(0));
        let n1 = n.clone();
        inner.on_abort(move || {
            n1.fetch_add(1, Ordering::SeqCst);
        });
        outer.abort();
        assert_eq!(
            n.load(Ordering::SeqCst),
            1,
            "aborting the attempt cuts its steps"
        );
        assert!(inner.is_aborted());
    }
}
