//! Deadlines for adapter calls that run on the engine's own worker threads.
//!
//! A worker makes each adapter call itself, after handing the run's [`Watchdog`] a ticket:
//! the call's [`Attempt`] (deadline and abort hooks) and a payload — whatever the worker
//! needs to carry on afterwards (the engine passes the node in progress). The engine's main
//! thread calls [`Watchdog::tick`] whenever it wakes; the watchdog tells it when to wake
//! next. It needs no thread of its own.
//!
//! * At the deadline, or at once when the run is cancelled, the tick aborts the attempt: the
//!   adapter's hooks cut its sockets and kill its process group, so the call returns. It
//!   records why ([`Ended`]) before it runs the hooks, so a call that answers the moment it is
//!   aborted (an adapter cannot tell a cancellation from its deadline) is still cut, by what
//!   cut it.
//! * The worker then takes the payload back with [`Ticket::finish`], learning whether the
//!   call ended in time or was cut (the call's own answer is then not used).
//! * A call still running [`GRACE`] after its abort ignored it. The tick abandons it: it
//!   hands the payload out, so the engine continues the node on a new worker thread, and
//!   the stuck thread exits whenever its call returns.
//!
//! So every call is over by deadline + [`GRACE`] whatever the peer does, and the run's
//! threads are its workers plus one per call that ignored its abort.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::runtime::sync::lock;

use crate::result::Observation;
use crate::runtime::Attempt;
use crate::runtime::Cancel;

/// How long an aborted call may take to return before it is abandoned.
pub const GRACE: Duration = Duration::from_millis(40);

/// How a watched call ended.
#[derive(Debug)]
pub enum Ended {
    /// The call returned in time with this observation.
    Returned(Observation),
    /// The deadline passed first. `response_seen` tells UNKNOWN from UNREACHABLE.
    TimedOut {
        /// Whether a response byte arrived before the deadline.
        response_seen: bool,
    },
    /// The run was cancelled while the call was in flight.
    Cancelled,
}

/// What [`Ticket::finish`] found.
pub enum Finished<P> {
    /// The call ended before anything was cut: use its answer.
    InTime(P),
    /// The call was aborted (deadline or cancellation) and returned within the grace: its
    /// answer is not used, and whatever state it used must not be reused.
    Cut(P, Ended),
    /// The call ignored its abort; its payload went on without it. The caller must leave
    /// everything alone and end.
    Abandoned,
}

/// What one [`Watchdog::tick`] produced.
pub struct Tick<P> {
    /// Payloads of abandoned calls, with how each ended, to be continued elsewhere.
    pub abandoned: Vec<(P, Ended)>,
    /// When the next tick is due (a deadline or the end of a grace), if anything is watched.
    pub next: Option<Instant>,
}

/// Watches every adapter call in flight during one run. Cloning shares it.
pub struct Watchdog<P> {
    inner: Arc<Inner<P>>,
}

impl<P> Clone for Watchdog<P> {
    fn clone(&self) -> Self {
        Watchdog {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<P> {
    cancel: Cancel,
    wake: Box<dyn Fn() + Send + Sync>,
    table: Mutex<Table<P>>,
}

struct Table<P> {
    next_id: u64,
    entries: Vec<Entry<P>>,
    /// When the ticking thread will tick next by itself ([`Watchdog::sleep_until`]); `None`
    /// while it is awake or has not said.
    sleeping_until: Option<Instant>,
}

struct Entry<P> {
    id: u64,
    attempt: Attempt,
    /// When the attempt must be over.
    deadline: Instant,
    /// Whether run cancellation cuts this call (cleanup is not cut).
    cancellable: bool,
    /// Set once aborted: why, and when the grace ends.
    cut: Option<(Cut, Instant)>,
    payload: P,
}

#[derive(Clone, Copy)]
enum Cut {
    Deadline { response_seen: bool },
    Cancelled,
}

impl Cut {
    fn ended(self) -> Ended {
        match self {
            Cut::Deadline { response_seen } => Ended::TimedOut { response_seen },
            Cut::Cancelled => Ended::Cancelled,
        }
    }
}

/// A watched call. Hand it back with [`Ticket::finish`] as soon as the call returns.
#[must_use = "finish the ticket when the call returns"]
pub struct Ticket<P> {
    inner: Arc<Inner<P>>,
    id: u64,
}

impl<P> Watchdog<P> {
    /// A watchdog for a run cancelled by `cancel`. `wake` must make the thread that calls
    /// [`Watchdog::tick`] tick soon (it is called when a new call has the earliest deadline,
    /// or arrives after cancellation).
    /// Cancellation must wake it too; the engine registers that with `cancel` itself.
    pub fn new(cancel: &Cancel, wake: impl Fn() + Send + Sync + 'static) -> Watchdog<P> {
        Watchdog {
            inner: Arc::new(Inner {
                cancel: cancel.clone(),
                wake: Box::new(wake),
                table: Mutex::new(Table {
                    next_id: 0,
                    entries: Vec::new(),
                    sleeping_until: None,
                }),
            }),
        }
    }

    /// Starts watching a call made under `attempt`; `payload` waits here until the call is
    /// over. Make the call right after, then [`Ticket::finish`].
    pub fn watch(&self, attempt: &Attempt, cancellable: bool, payload: P) -> Ticket<P> {
        let deadline = attempt.deadline();
        let (id, earliest) = {
            let mut table = lock(&self.inner.table);
            let id = table.next_id;
            table.next_id += 1;
            // Woken only if it would otherwise tick too late for this call: a check of one
            // target no longer wakes the collecting thread for every call it makes.
            let earliest = table.entries.iter().all(|e| deadline < due(e))
                && table.sleeping_until.is_none_or(|at| deadline < at);
            table.entries.push(Entry {
                id,
                attempt: attempt.clone(),
                deadline,
                cancellable,
                cut: None,
                payload,
            });
            (id, earliest)
        };
        // A call watched just after cancellation must be cut now, not at its deadline.
        if earliest || self.inner.cancel.is_cancelled() {
            (self.inner.wake)();
        }
        Ticket {
            inner: self.inner.clone(),
            id,
        }
    }

    /// Aborts what is due at `now`, abandons what outlived its grace, and says when to tick
    /// next.
    pub fn tick(&self, now: Instant) -> Tick<P> {
        let cancelled = self.inner.cancel.is_cancelled();
        let mut to_abort: Vec<Attempt> = Vec::new();
        let mut abandoned = Vec::new();
        let next = {
            let mut table = lock(&self.inner.table);
            // Awake: a call watched from now until `sleep_until` wakes it again.
            table.sleeping_until = None;
            let mut i = 0;
            while i < table.entries.len() {
                let e = &mut table.entries[i];
                if e.cut.is_none() {
                    let cut = if cancelled && e.cancellable {
                        Some(Cut::Cancelled)
                    } else if now >= e.deadline {
                        Some(Cut::Deadline {
                            response_seen: e.attempt.response_seen(),
                        })
                    } else {
                        None
                    };
                    if let Some(cut) = cut {
                        e.cut = Some((cut, now + GRACE));
                        to_abort.push(e.attempt.clone());
                    }
                }
                match table.entries[i].cut {
                    Some((cut, grace_end)) if now >= grace_end => {
                        let e = table.entries.swap_remove(i);
                        abandoned.push((e.payload, cut.ended()));
                    }
                    _ => i += 1,
                }
            }
            table.entries.iter().map(due).min()
        };
        // Hooks never block (they shut sockets down and signal process groups), but they run
        // outside the lock all the same.
        for attempt in to_abort {
            attempt.abort();
        }
        Tick { abandoned, next }
    }

    /// The ticking thread will tick next at `at` unless woken: a call whose deadline is not
    /// earlier needs no wake.
    pub fn sleep_until(&self, at: Instant) {
        lock(&self.inner.table).sleeping_until = Some(at);
    }

    /// Calls in flight.
    #[cfg(test)]
    pub fn watched(&self) -> usize {
        lock(&self.inner.table).entries.len()
    }
}

impl<P> Ticket<P> {
    /// The call returned: takes the payload back, unless it was abandoned meanwhile.
    pub fn finish(self) -> Finished<P> {
        let mut table = lock(&self.inner.table);
        let Some(i) = table.entries.iter().position(|e| e.id == self.id) else {
            return Finished::Abandoned;
        };
        let e = table.entries.swap_remove(i);
        match e.cut {
            None => Finished::InTime(e.payload),
            Some((cut, _)) => Finished::Cut(e.payload, cut.ended()),
        }
    }
}

/// When an entry next needs the watchdog: its deadline, or the end of its grace.
fn due<P>(e: &Entry<P>) -> Instant {
    match e.cut {
        Some((_, grace_end)) => grace_end,
        None => e.deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::TargetRun;
    use crate::runtime::Deadline;
    use std::sync::mpsc;

    /// Runs one call against `run` under a watchdog of its own, outside a run (tests, one-off
    /// tools; the engine ticks its run's watchdog from its collecting thread instead). The call
    /// runs on a helper thread while this one ticks, so the answer comes by `deadline` +
    /// [`GRACE`] whatever the call does. Returns the state — `None` when the call had to be
    /// abandoned; a state whose call was cut has been `discard`ed — and how the call ended.
    fn bounded<F>(
        run: Box<dyn TargetRun>,
        deadline: Deadline,
        cancel: &Cancel,
        call: F,
    ) -> (Option<Box<dyn TargetRun>>, Ended)
    where
        F: FnOnce(&mut dyn TargetRun, &Attempt) -> Observation + Send + 'static,
    {
        type Back = (Box<dyn TargetRun>, Finished<()>, Observation);
        let (tx, rx) = mpsc::channel::<Option<Back>>();
        let wake = tx.clone();
        let dog: Watchdog<()> = Watchdog::new(cancel, move || {
            let _ = wake.send(None);
        });
        let cancel_wake = tx.clone();
        let _registration = cancel.register(move || {
            let _ = cancel_wake.send(None);
        });
        let attempt = Attempt::new(deadline);
        let ticket = dog.watch(&attempt, true, ());
        let spawned = crate::runtime::threads::spawn(
            "bounded-call",
            crate::runtime::threads::WORKER_STACK,
            move || {
                let mut run = run;
                let obs = call(run.as_mut(), &attempt);
                let finished = ticket.finish();
                let _ = tx.send(Some((run, finished, obs)));
            },
        );
        if spawned.is_err() {
            return (
                None,
                Ended::TimedOut {
                    response_seen: false,
                },
            );
        }
        loop {
            let now = Instant::now();
            let tick = dog.tick(now);
            if let Some((_, ended)) = tick.abandoned.into_iter().next() {
                return (None, ended);
            }
            let wait = tick.next.map_or(Duration::from_millis(100), |t| {
                t.saturating_duration_since(now)
            });
            match rx.recv_timeout(wait) {
                Ok(Some((run, Finished::InTime(()), obs))) => {
                    return (Some(run), Ended::Returned(obs));
                }
                Ok(Some((mut run, Finished::Cut((), ended), _))) => {
                    run.discard();
                    return (Some(run), ended);
                }
                Ok(Some((_, Finished::Abandoned, _))) => {
                    return (
                        None,
                        Ended::TimedOut {
                            response_seen: false,
                        },
                    );
                }
                Ok(None) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return (
                        None,
                        Ended::TimedOut {
                            response_seen: false,
                        },
                    );
                }
            }
        }
    }
    use crate::contract::Bound;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting_watchdog(cancel: &Cancel) -> (Watchdog<&'static str>, Arc<AtomicUsize>) {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let dog = Watchdog::new(cancel, move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        (dog, wakes)
    }

    fn aborts(attempt: &Attempt) -> Arc<AtomicUsize> {
        let n = Arc::new(AtomicUsize::new(0));
        let n1 = n.clone();
        attempt.on_abort(move || {
            n1.fetch_add(1, Ordering::SeqCst);
        });
        n
    }

    #[test]
    fn a_call_that_returns_in_time_is_left_alone() {
        let (dog, wakes) = counting_watchdog(&Cancel::new());
        let t0 = Instant::now();
        let attempt = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(100),
            Bound::TimeoutMs,
        ));
        let fired = aborts(&attempt);
        let ticket = dog.watch(&attempt, true, "node");
        assert_eq!(
            wakes.load(Ordering::SeqCst),
            1,
            "the earliest deadline wakes the ticker"
        );
        let tick = dog.tick(t0 + Duration::from_millis(50));
        assert!(tick.abandoned.is_empty());
        assert_eq!(tick.next, Some(t0 + Duration::from_millis(100)));
        assert!(matches!(ticket.finish(), Finished::InTime("node")));
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        assert_eq!(dog.watched(), 0);
        assert_eq!(dog.tick(t0).next, None);
    }

    #[test]
    fn the_deadline_aborts_and_the_call_is_cut() {
        let (dog, _) = counting_watchdog(&Cancel::new());
        let t0 = Instant::now();
        let attempt = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(10),
            Bound::TimeoutMs,
        ));
        let fired = aborts(&attempt);
        let ticket = dog.watch(&attempt, true, "node");
        attempt.mark_response();
        let tick = dog.tick(t0 + Duration::from_millis(10));
        assert!(tick.abandoned.is_empty());
        assert_eq!(tick.next, Some(t0 + Duration::from_millis(10) + GRACE));
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        assert!(matches!(
            ticket.finish(),
            Finished::Cut(
                "node",
                Ended::TimedOut {
                    response_seen: true
                }
            )
        ));
    }

    #[test]
    fn a_call_that_ignores_its_abort_is_abandoned_after_the_grace() {
        let (dog, _) = counting_watchdog(&Cancel::new());
        let t0 = Instant::now();
        let attempt = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(10),
            Bound::TimeoutMs,
        ));
        let ticket = dog.watch(&attempt, true, "node");
        let at_deadline = t0 + Duration::from_millis(10);
        assert!(dog.tick(at_deadline).abandoned.is_empty());
        let tick = dog.tick(at_deadline + GRACE);
        assert_eq!(tick.abandoned.len(), 1);
        assert!(matches!(
            tick.abandoned[0],
            (
                "node",
                Ended::TimedOut {
                    response_seen: false
                }
            )
        ));
        assert_eq!(tick.next, None);
        assert!(matches!(ticket.finish(), Finished::Abandoned));
    }

    #[test]
    fn cancellation_cuts_calls_but_not_cleanup() {
        let cancel = Cancel::new();
        let (dog, _) = counting_watchdog(&cancel);
        let t0 = Instant::now();
        let far = t0 + Duration::from_secs(30);
        let check = Attempt::new(Deadline::new(far, Bound::TimeoutMs));
        let cleanup = Attempt::new(Deadline::new(far, Bound::TimeoutMs));
        let check_ticket = dog.watch(&check, true, "check");
        let cleanup_ticket = dog.watch(&cleanup, false, "cleanup");
        cancel.cancel();
        let tick = dog.tick(t0);
        assert!(tick.abandoned.is_empty());
        assert!(check.is_aborted());
        assert!(!cleanup.is_aborted());
        assert!(matches!(
            check_ticket.finish(),
            Finished::Cut("check", Ended::Cancelled)
        ));
        assert!(matches!(
            cleanup_ticket.finish(),
            Finished::InTime("cleanup")
        ));
    }

    /// The cut is recorded before the hooks run: a call that returns the moment it is aborted
    /// (its answer then a timeout of its deadline's bound) is still cut by cancellation.
    #[test]
    fn a_call_returning_at_its_abort_is_cut_by_what_aborted_it() {
        let cancel = Cancel::new();
        let (dog, _) = counting_watchdog(&cancel);
        let t0 = Instant::now();
        let attempt = Attempt::new(Deadline::new(
            t0 + Duration::from_secs(30),
            Bound::TimeoutMs,
        ));
        let ticket = dog.watch(&attempt, true, "check");
        let (tx, rx) = mpsc::channel();
        attempt.on_abort(move || {
            let _ = tx.send(ticket.finish());
        });
        cancel.cancel();
        let _ = dog.tick(t0);
        assert!(matches!(
            rx.try_recv(),
            Ok(Finished::Cut("check", Ended::Cancelled))
        ));
    }

    #[test]
    fn bounded_gives_an_answer_by_the_deadline_plus_the_grace() {
        struct Deaf;
        impl TargetRun for Deaf {
            fn configure(&mut self) -> Observation {
                Observation::healthy()
            }
            fn check(&mut self, _: crate::contract::Dimension, _: &Attempt) -> Observation {
                std::thread::sleep(Duration::from_secs(3));
                Observation::healthy()
            }
        }
        let start = Instant::now();
        let (state, ended) = bounded(
            Box::new(Deaf),
            Deadline::new(start + Duration::from_millis(20), Bound::TimeoutMs),
            &Cancel::new(),
            |r, a| r.check(crate::contract::Dimension::Protocol, a),
        );
        assert!(start.elapsed() < Duration::from_secs(1));
        assert!(state.is_none());
        assert!(matches!(ended, Ended::TimedOut { .. }));
    }

    #[test]
    fn only_a_new_earliest_deadline_wakes_the_ticker() {
        let (dog, wakes) = counting_watchdog(&Cancel::new());
        let t0 = Instant::now();
        let a = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(100),
            Bound::TimeoutMs,
        ));
        let b = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(200),
            Bound::TimeoutMs,
        ));
        let c = Attempt::new(Deadline::new(
            t0 + Duration::from_millis(50),
            Bound::TimeoutMs,
        ));
        let ta = dog.watch(&a, true, "a");
        let tb = dog.watch(&b, true, "b");
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let tc = dog.watch(&c, true, "c");
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
        assert_eq!(dog.tick(t0).next, Some(t0 + Duration::from_millis(50)));
        for t in [ta, tb, tc] {
            assert!(matches!(t.finish(), Finished::InTime(_)));
        }
    }

    /// A ticker asleep until some instant is woken only for a call due before it; once it
    /// ticks (awake), any new earliest call wakes it again.
    #[test]
    fn a_call_due_after_the_next_tick_wakes_nobody() {
        let (dog, wakes) = counting_watchdog(&Cancel::new());
        let t0 = Instant::now();
        let after = |ms| {
            Attempt::new(Deadline::new(
                t0 + Duration::from_millis(ms),
                Bound::TimeoutMs,
            ))
        };
        dog.sleep_until(t0 + Duration::from_millis(100));
        let late = dog.watch(&after(500), true, "late");
        assert_eq!(wakes.load(Ordering::SeqCst), 0, "ticks at 100 ms anyway");
        assert!(matches!(late.finish(), Finished::InTime(_)));
        let soon = dog.watch(&after(50), true, "soon");
        assert_eq!(wakes.load(Ordering::SeqCst), 1, "due before the next tick");
        assert!(matches!(soon.finish(), Finished::InTime(_)));
        let _ = dog.tick(t0);
        let late = dog.watch(&after(500), true, "late");
        assert_eq!(
            wakes.load(Ordering::SeqCst),
            2,
            "awake: it has not said when it sleeps"
        );
        assert!(matches!(late.finish(), Finished::InTime(_)));
    }
}
