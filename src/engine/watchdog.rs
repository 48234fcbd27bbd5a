//! Runs one adapter call under a deadline it cannot overstay.
//!
//! The call runs on a worker thread that owns the target's [`TargetRun`] for the duration of
//! the call; the calling thread is the watchdog. At the deadline, or when the run is cancelled, it aborts the [`Attempt`] (the
//! adapter's hooks cut sockets and kill process groups), waits a short grace for the worker to
//! hand the state back, and otherwise abandons it. Either way the caller gets an answer by
//! `deadline + GRACE`, whatever the peer does.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::adapter::{Attempt, TargetRun};
use crate::engine::cancel::Cancel;
use crate::result::Observation;

/// How long an aborted call may take to hand its state back.
pub const GRACE: Duration = Duration::from_millis(40);

/// Stack size of attempt workers: adapters are shallow; keep many of them cheap.
const WORKER_STACK: usize = 512 * 1024;

/// How a bounded call ended.
pub enum Ended {
    /// The call returned in time.
    Returned(Observation),
    /// The deadline passed first. `response_seen` tells UNKNOWN from UNREACHABLE.
    TimedOut {
        /// Whether a response byte arrived before the deadline.
        response_seen: bool,
    },
    /// The run was cancelled while the call was in flight.
    Cancelled,
}

enum Msg {
    Done(Box<dyn TargetRun>, Observation),
    Cancelled,
}

type Job = Box<dyn FnOnce() + Send>;

/// One target's attempt worker: a thread reused for every call of the target run, replaced
/// only when a call overstays its deadline and has to be abandoned. Reusing it keeps a
/// passive check to one thread spawn instead of one per dimension.
pub struct Worker {
    lane: Option<Lane>,
}

struct Lane {
    jobs: mpsc::Sender<Job>,
    results: mpsc::Receiver<Msg>,
    results_tx: mpsc::Sender<Msg>,
}

impl Lane {
    fn spawn() -> Option<Lane> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (results_tx, results) = mpsc::channel::<Msg>();
        thread::Builder::new()
            .name("attempt".into())
            .stack_size(WORKER_STACK)
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    job();
                }
            })
            .ok()?;
        Some(Lane {
            jobs,
            results,
            results_tx,
        })
    }
}

impl Default for Worker {
    fn default() -> Self {
        Worker::new()
    }
}

impl Worker {
    /// A worker whose thread starts with the first call.
    pub fn new() -> Worker {
        Worker { lane: None }
    }

    /// Runs `call` against `run` until `deadline`. Returns the state (unless the call had to
    /// be abandoned; then the caller must start a fresh one) and how the call ended. A state
    /// whose call did not return in time has been `discard`ed already.
    pub fn bounded<F>(
        &mut self,
        run: Box<dyn TargetRun>,
        deadline: Instant,
        cancel: &Cancel,
        call: F,
    ) -> (Option<Box<dyn TargetRun>>, Ended)
    where
        F: FnOnce(&mut dyn TargetRun, &Attempt) -> Observation + Send + 'static,
    {
        if cancel.is_cancelled() {
            return (Some(run), Ended::Cancelled);
        }
        if self.lane.is_none() {
            self.lane = Lane::spawn();
        }
        let Some(lane) = self.lane.as_ref() else {
            return (
                Some(run),
                Ended::TimedOut {
                    response_seen: false,
                },
            );
        };
        let attempt = Attempt::new(deadline);
        let wake = lane.results_tx.clone();
        let _registration = cancel.register(move || {
            let _ = wake.send(Msg::Cancelled);
        });
        let worker_attempt = attempt.clone();
        let tx = lane.results_tx.clone();
        let job: Job = Box::new(move || {
            let mut run = run;
            let obs = call(run.as_mut(), &worker_attempt);
            let _ = tx.send(Msg::Done(run, obs));
        });
        if lane.jobs.send(job).is_err() {
            // The worker thread is gone (it never is unless a call panicked); the state went
            // with the job.
            self.lane = None;
            return (
                None,
                Ended::TimedOut {
                    response_seen: false,
                },
            );
        }
        let first = lane
            .results
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let cancelled = match first {
            Ok(Msg::Done(run, obs)) => return (Some(run), Ended::Returned(obs)),
            Ok(Msg::Cancelled) => true,
            Err(_) => false,
        };
        let response_seen = attempt.response_seen();
        attempt.abort();
        let returned = wait_for_done(&lane.results, Instant::now() + GRACE);
        if returned.is_none() {
            // Stuck past its grace: abandon the thread with the call; a new one serves the
            // next call.
            self.lane = None;
        }
        let state = returned.map(|mut run| {
            run.discard();
            run
        });
        let ended = if cancelled {
            Ended::Cancelled
        } else {
            Ended::TimedOut { response_seen }
        };
        (state, ended)
    }
}

fn wait_for_done(rx: &mpsc::Receiver<Msg>, until: Instant) -> Option<Box<dyn TargetRun>> {
    loop {
        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(Msg::Done(run, _)) => return Some(run),
            Ok(Msg::Cancelled) => continue,
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Dimension, Status};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar, Mutex};

    struct Stuck {
        released: Arc<(Mutex<bool>, Condvar)>,
        discarded: Arc<AtomicBool>,
    }

    impl TargetRun for Stuck {
        fn configure(&mut self) -> Observation {
            Observation::healthy()
        }
        fn check(&mut self, _dim: Dimension, attempt: &Attempt) -> Observation {
            let rel = self.released.clone();
            let rel2 = rel.clone();
            attempt.on_abort(move || {
                *rel2.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
                rel2.1.notify_all();
            });
            let g = rel.0.lock().unwrap_or_else(|p| p.into_inner());
            let _g = rel.1.wait_while(g, |r| !*r);
            Observation::new(Status::Unknown)
        }
        fn discard(&mut self) {
            self.discarded.store(true, Ordering::SeqCst);
        }
    }

    fn stuck() -> (Box<dyn TargetRun>, Arc<AtomicBool>) {
        let discarded = Arc::new(AtomicBool::new(false));
        (
            Box::new(Stuck {
                released: Arc::new((Mutex::new(false), Condvar::new())),
                discarded: discarded.clone(),
            }),
            discarded,
        )
    }

    #[test]
    fn deadline_aborts_and_discards() {
        let (run, discarded) = stuck();
        let start = Instant::now();
        let (state, ended) = Worker::new().bounded(
            run,
            start + Duration::from_millis(30),
            &Cancel::new(),
            |r, a| r.check(Dimension::Reachability, a),
        );
        assert!(start.elapsed() < Duration::from_secs(1));
        assert!(state.is_some());
        assert!(discarded.load(Ordering::SeqCst));
        assert!(matches!(
            ended,
            Ended::TimedOut {
                response_seen: false
            }
        ));
    }

    #[test]
    fn cancellation_ends_the_call() {
        let (run, _) = stuck();
        let cancel = Cancel::new();
        let c2 = cancel.clone();
        let start = Instant::now();
        let (_, ended) = Worker::new().bounded(
            run,
            start + Duration::from_secs(30),
            &cancel,
            move |r, a| {
                c2.cancel();
                r.check(Dimension::Reachability, a)
            },
        );
        assert!(matches!(ended, Ended::Cancelled));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_call_that_ignores_abort_is_abandoned_in_time() {
        struct Deaf;
        impl TargetRun for Deaf {
            fn configure(&mut self) -> Observation {
                Observation::healthy()
            }
            fn check(&mut self, _: Dimension, _: &Attempt) -> Observation {
                std::thread::sleep(Duration::from_secs(3));
                Observation::healthy()
            }
        }
        let start = Instant::now();
        let (state, ended) = Worker::new().bounded(
            Box::new(Deaf),
            start + Duration::from_millis(20),
            &Cancel::new(),
            |r, a| r.check(Dimension::Protocol, a),
        );
        assert!(start.elapsed() < Duration::from_secs(1));
        assert!(state.is_none());
        assert!(matches!(ended, Ended::TimedOut { .. }));
    }

    #[test]
    fn one_thread_serves_every_call_until_one_is_abandoned() {
        struct Where(Arc<Mutex<Vec<std::thread::ThreadId>>>, bool);
        impl TargetRun for Where {
            fn configure(&mut self) -> Observation {
                Observation::healthy()
            }
            fn check(&mut self, _: Dimension, _: &Attempt) -> Observation {
                if let Ok(mut v) = self.0.lock() {
                    v.push(std::thread::current().id());
                }
                if self.1 {
                    std::thread::sleep(Duration::from_millis(500));
                }
                Observation::healthy()
            }
        }
        let ids = Arc::new(Mutex::new(Vec::new()));
        let mut worker = Worker::new();
        let far = || Instant::now() + Duration::from_secs(5);
        let mut run: Box<dyn TargetRun> = Box::new(Where(ids.clone(), false));
        for _ in 0..3 {
            let (state, ended) = worker.bounded(run, far(), &Cancel::new(), |r, a| {
                r.check(Dimension::Protocol, a)
            });
            assert!(matches!(ended, Ended::Returned(_)));
            run = state.unwrap_or_else(|| Box::new(Where(ids.clone(), false)));
        }
        let (state, _) = worker.bounded(
            Box::new(Where(ids.clone(), true)),
            Instant::now() + Duration::from_millis(10),
            &Cancel::new(),
            |r, a| r.check(Dimension::Protocol, a),
        );
        assert!(state.is_none(), "a deaf call is abandoned");
        let _ = worker.bounded(run, far(), &Cancel::new(), |r, a| {
            r.check(Dimension::Protocol, a)
        });
        let ids = ids.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(ids.len(), 5);
        assert!(ids[..4].iter().all(|id| *id == ids[0]), "one thread reused");
        assert_ne!(ids[4], ids[0], "a fresh thread after abandonment");
    }
}
