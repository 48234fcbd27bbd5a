//! The engine: runs every node's checks once, in parallel up to `concurrency`, under
//! deadlines it enforces itself, then aggregates. It never speaks a protocol.
//!
//! * Nodes start in declaration pre-order (roots first, each followed by its dependencies
//!   depth-first, each node once) on a pool of `concurrency` worker threads. A node's own
//!   checks never wait for its dependencies: edges matter only when results are projected
//!   ([`aggregate`]), so a shared node runs once however many parents reference it, and a
//!   parent's `budget_ms` (which bounds only its own checks, see [`node`]) cannot touch it.
//! * Workers make the adapter calls themselves; the calling thread collects outcomes and
//!   ticks the run's [`Watchdog`], which cuts every call at its deadline and moves the node
//!   of a call that ignores the cut to a fresh worker.
//! * Results keep declaration order whatever order nodes finish in.
//! * Everything ends by the run deadline (`deadline_ms`, `--deadline`; never later than
//!   [`RUN_CAP`]): every attempt, retry delay and queue wait, and every node's cleanup,
//!   which gets what is left of it (at most [`CLOSE_BUDGET`]). A check the deadline cuts is
//!   classified like any other deadline (UNREACHABLE with nothing received, UNKNOWN after a
//!   partial response), one it leaves no time to start is UNREACHABLE, and the document is
//!   built all the same.

pub mod aggregate;
pub mod node;
pub mod watchdog;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::adapter::Adapter;
use crate::runtime::Cancel;
use crate::runtime::sync::lock;
use crate::runtime::threads;

use crate::config::{Config, NodeId};
use crate::contract::{Bound, Dimension, LocalResource, Status, TargetType};
use crate::result::document::Document;
use crate::result::{Note, Observation, Reason};
use crate::run_plan::{RunPlan, TargetPlan};
use crate::runtime::{Attempt, Deadline};

pub use aggregate::NodeOutcome;

use node::{Call, Next, NodeRun};
use watchdog::{Ended, Finished, Watchdog};

/// No run lasts longer than this, whatever the configuration says.
pub const RUN_CAP: Duration = Duration::from_secs(60);

/// Budget of a target's cleanup hook (MCP `DELETE`, process shutdown).
pub const CLOSE_BUDGET: Duration = Duration::from_millis(250);

/// The progress callback: (nodes done, nodes total).
pub type OnProgress<'a> = &'a dyn Fn(usize, usize);

/// Finds the adapter for a target type ([`crate::adapter::for_type`] in production; tests
/// substitute scripted adapters).
pub type Adapters = fn(TargetType) -> Option<&'static dyn Adapter>;

/// Runs every node once with the built-in adapters and builds the document.
pub fn run(plan: &RunPlan, cancel: &Cancel, progress: OnProgress) -> Document {
    run_with(plan, cancel, progress, crate::adapter::for_type)
}

/// Runs every node once with the given adapters and builds the document.
///
/// Threads: `concurrency` workers (fewer when there are fewer nodes) make the adapter calls
/// themselves; this thread collects outcomes and drives the run's [`Watchdog`]. A call that
/// ignores its deadline is abandoned after [`watchdog::GRACE`] and its node continues on a
/// new worker, so the count grows by one only per such call. Adapters may add short-lived
/// helpers of their own while a call is in flight (a DNS lookup, a stdio child's pipes, an
/// MCP target's lanes: `docs/deployment.md#resources` counts them).
pub fn run_with(
    plan: &RunPlan,
    cancel: &Cancel,
    progress: OnProgress,
    adapters: Adapters,
) -> Document {
    run_capped(plan, cancel, progress, adapters, RUN_CAP)
}

/// [`run_with`] under a run cap of `cap` instead of [`RUN_CAP`] (tests of the cap).
fn run_capped(
    plan: &RunPlan,
    cancel: &Cancel,
    progress: OnProgress,
    adapters: Adapters,
    cap: Duration,
) -> Document {
    let config = &plan.config;
    let clock = run_clock(config, cap);
    let order = execution_order(config);
    let total = order.len();
    let (tx, rx) = mpsc::channel::<Msg>();
    let wake = tx.clone();
    let watchdog = Watchdog::new(cancel, move || {
        let _ = wake.send(Msg::Wake);
    });
    let cancel_wake = tx.clone();
    let _cancel_registration = cancel.register(move || {
        let _ = cancel_wake.send(Msg::Wake);
    });
    let shared = Arc::new(Shared {
        targets: plan.targets.clone(),
        order,
        next: AtomicUsize::new(0),
        tx,
        cancel: cancel.clone(),
        watchdog,
        adapters,
        clock,
    });
    let workers = config.concurrency.clamp(1, 256).min(total);
    let spawned = (0..workers)
        .take_while(|_| spawn_worker(&shared, None).is_ok())
        .count();
    let mut outcomes: Vec<Option<NodeOutcome>> = vec![None; config.nodes.len()];
    if spawned > 0 {
        collect(&shared, &rx, &mut outcomes, total, progress);
    }
    // A node that never reported: no thread could be started at all, or its call outlived
    // the run deadline by more than the grace.
    let unfinished = if spawned == 0 {
        Observation::local_resource(LocalResource::Threads)
    } else {
        Observation::failed(
            Status::Unknown,
            Reason::Engine(Note::ConfigurationIncomplete(clock.run_deadline.bound())),
        )
    };
    let outcomes: Vec<NodeOutcome> = outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or_else(|| {
                let why = node::to_check(Dimension::Configuration, unfinished.clone());
                NodeOutcome::unfinished(why)
            })
        })
        .collect();
    Document {
        results: aggregate::project(config, &outcomes),
        duration_ms: Some(clock.start.elapsed().as_secs_f64() * 1000.0),
    }
}

/// The run's clock, started now: the run deadline (`deadline_ms`, `--deadline`), or the cap
/// when it is earlier or there is none.
fn run_clock(config: &Config, cap: Duration) -> node::Clock {
    let start = Instant::now();
    let capped = Deadline::new(start + cap, Bound::RunCap);
    node::Clock {
        start,
        // The run deadline keeps its own bound when it equals the cap: it is what the
        // operator set.
        run_deadline: config.deadline.map_or(capped, |d| {
            Deadline::new(start + Duration::from_millis(d.ms), d.bound).min(capped)
        }),
    }
}

/// Collects the `total` nodes' outcomes into `outcomes` as the workers report them, ticking
/// the watchdog (a node whose call ignored its cut goes on on a fresh worker) and reporting
/// progress, until every node has reported or the run deadline is past by twice the grace.
fn collect(
    shared: &Arc<Shared>,
    rx: &mpsc::Receiver<Msg>,
    outcomes: &mut [Option<NodeOutcome>],
    total: usize,
    progress: OnProgress,
) {
    let mut done = 0;
    // Every call, cleanup included, ends by its deadline (≤ the run deadline) plus the
    // grace; past that, whatever has not reported is left behind.
    let give_up = shared.clock.run_deadline.at() + 2 * watchdog::GRACE;
    while done < total {
        let now = Instant::now();
        let tick = shared.watchdog.tick(now);
        for (mut node, ended) in tick.abandoned {
            // The stuck thread keeps the adapter state; the node goes on with a fresh one.
            node.pending.record(None, ended);
            if let Err(Some(node)) = spawn_worker(shared, Some(node)) {
                // No thread for it: the node ends with what it has, and says why.
                let _ = shared.tx.send(Msg::Done(node.id, node.pending.starved()));
            }
        }
        if now >= give_up {
            break;
        }
        let wait = tick
            .next
            .unwrap_or(give_up)
            .min(give_up)
            .min(now + PROGRESS_EVERY)
            .saturating_duration_since(now);
        shared.watchdog.sleep_until(now + wait);
        match rx.recv_timeout(wait) {
            Ok(Msg::Done(id, outcome)) => {
                if let Some(slot) = outcomes.get_mut(id) {
                    *slot = Some(outcome);
                }
                done += 1;
                progress(done, total);
            }
            Ok(Msg::Wake) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => progress(done, total),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// How often the collecting thread reports progress when nothing else happens.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Messages to the collecting thread.
enum Msg {
    /// A node's own checks are complete.
    Done(NodeId, NodeOutcome),
    /// Tick the watchdog (a new earliest deadline, or cancellation).
    Wake,
}

/// What every worker of one run shares.
struct Shared {
    targets: Vec<Arc<TargetPlan>>,
    /// Nodes in the order they are started.
    order: Vec<NodeId>,
    /// Index into `order` of the next node to start.
    next: AtomicUsize,
    tx: mpsc::Sender<Msg>,
    cancel: Cancel,
    watchdog: Watchdog<Carried>,
    adapters: Adapters,
    clock: node::Clock,
}

/// A node in progress, as a worker carries it (and the watchdog holds it during a call).
struct Carried {
    id: NodeId,
    pending: Box<NodeRun>,
}

/// Starts a worker thread, optionally continuing a node first. Fails when no thread could be
/// started, giving the node back (a failure must not pass for a worker: a run that counted
/// workers it never had would wait for them until its deadline).
fn spawn_worker(shared: &Arc<Shared>, first: Option<Carried>) -> Result<(), Option<Carried>> {
    let slot = Arc::new(Mutex::new(first));
    let (for_thread, for_error) = (slot.clone(), slot);
    let shared = shared.clone();
    let spawned = threads::spawn("worker", threads::WORKER_STACK, move || {
        let first = lock(&for_thread).take();
        work(&shared, first);
    });
    spawned.map_err(|_| lock(&for_error).take())
}

/// A worker: continues `first` if given, then starts nodes from the shared order until none
/// is left. Ends early when one of its calls is abandoned (the node went on elsewhere).
fn work(shared: &Shared, first: Option<Carried>) {
    let mut carried = first;
    loop {
        let node = match carried.take() {
            Some(node) => node,
            None => {
                let i = shared.next.fetch_add(1, Ordering::SeqCst);
                let Some(&id) = shared.order.get(i) else {
                    return;
                };
                let Some(target) = shared.targets.get(id) else {
                    continue;
                };
                Carried {
                    id,
                    pending: Box::new(NodeRun::start(
                        target,
                        shared.adapters,
                        &shared.clock,
                        &shared.cancel,
                    )),
                }
            }
        };
        let Some(Carried { id, pending }) = drive(shared, node) else {
            return;
        };
        if shared.tx.send(Msg::Done(id, pending.finish())).is_err() {
            return;
        }
    }
}

/// Makes the node's calls until it is done. `None` when a call was abandoned: the node is
/// no longer this thread's.
fn drive(shared: &Shared, mut node: Carried) -> Option<Carried> {
    loop {
        match node.pending.next_step() {
            Next::Done => return Some(node),
            Next::Pause(delay) => {
                shared.cancel.sleep(delay);
            }
            Next::Call {
                mut run,
                call,
                deadline,
                cancellable,
            } => {
                let attempt = Attempt::new(deadline);
                let ticket = shared.watchdog.watch(&attempt, cancellable, node);
                let obs = match call {
                    Call::Check(dim) => run.check(dim, &attempt),
                    Call::Close => {
                        run.close(&attempt);
                        Observation::healthy()
                    }
                };
                let finished = ticket.finish();
                attempt.release();
                match finished {
                    Finished::InTime(back) => {
                        node = back;
                        node.pending.record(Some(run), Ended::Returned(obs));
                    }
                    Finished::Cut(back, ended) => {
                        node = back;
                        run.discard();
                        node.pending.record(Some(run), ended);
                    }
                    Finished::Abandoned => return None,
                }
            }
        }
    }
}

/// Nodes in declaration pre-order (roots first, then their dependencies depth-first), each
/// once.
fn execution_order(config: &Config) -> Vec<NodeId> {
    let mut seen = vec![false; config.nodes.len()];
    let mut order = Vec::with_capacity(config.nodes.len());
    let mut stack: Vec<NodeId> = config.roots.iter().rev().copied().collect();
    while let Some(id) = stack.pop() {
        if id >= seen.len() || seen[id] {
            continue;
        }
        seen[id] = true;
        order.push(id);
        if let Some(t) = config.nodes.get(id) {
            stack.extend(t.dependencies.iter().rev().map(|e| e.node));
        }
    }
    order
}

#[cfg(test)]
mod tests;
