//! One node's own checks: dimension order, gates, retries, deadlines, the latency threshold.
//!
//! Order (contract §3.2): configuration → reachability → authentication (as a gate) →
//! protocol → capability → functional → latency. Blocked dimensions are omitted; passing
//! implicit gates are hidden; a failed gate is shown.
//!
//! `budget_ms` bounds the node's own checks, retries and queue wait: it counts from the start
//! of the run and caps every attempt's deadline. It never reaches the node's dependencies,
//! which are nodes of their own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, TargetRun};
use crate::config::Target;
use crate::contract::{Bound, Dimension, LocalResource, Status};
use crate::engine::CLOSE_BUDGET;
use crate::engine::aggregate::NodeOutcome;
use crate::engine::watchdog::Ended;
use crate::result::document::Check;
use crate::result::{Fact, Key, Note, Observation, Reason};
use crate::run_plan::{Credential, TargetPlan};
use crate::runtime::Cancel;
use crate::runtime::Deadline;

/// The run's clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// When the run started (budgets count from here, queue waits included).
    pub start: Instant,
    /// The run deadline (`deadline_ms`, `--deadline`), or the run cap when it is earlier or
    /// there is none: nothing of the run, cleanup included, lasts past it.
    pub run_deadline: Deadline,
}

/// The dimensions requested for `target`: its explicit list, or the passive defaults.
pub fn requested(target: &Target, adapter: Option<&dyn Adapter>) -> Vec<Dimension> {
    if let Some(explicit) = &target.checks {
        let mut dims: Vec<Dimension> = Vec::new();
        for d in explicit {
            if !dims.contains(d) {
                dims.push(*d);
            }
        }
        return dims;
    }
    let Some(adapter) = adapter else {
        return vec![Dimension::Configuration];
    };
    let mut dims = vec![Dimension::Configuration, Dimension::Reachability];
    for d in [
        Dimension::Protocol,
        Dimension::Authentication,
        Dimension::Capability,
    ] {
        if adapter.dimensions().contains(&d) {
            dims.push(d);
        }
    }
    dims.push(Dimension::Latency);
    dims
}

/// Which adapter call a [`Next::Call`] asks for.
pub enum Call {
    /// One attempt of one dimension.
    Check(Dimension),
    /// The end-of-run cleanup, within the call's deadline. Its outcome never changes a result.
    Close,
}

/// What a node needs next from whoever drives it (see [`NodeRun`]).
pub enum Next {
    /// Make this call on `run`, under an [`crate::runtime::Attempt`] ending at `deadline`,
    /// then hand the state and the outcome back with [`NodeRun::record`].
    Call {
        /// The target's adapter state for this run (fresh if the last one was abandoned).
        run: Box<dyn TargetRun>,
        /// Which call.
        call: Call,
        /// When the call must be over, and which bound says so.
        deadline: Deadline,
        /// Whether cancelling the run cuts the call (cleanup is not cut).
        cancellable: bool,
    },
    /// Wait this long before the next attempt (a retry delay); cancellation may end it early.
    Pause(Duration),
    /// The node's own checks are complete: take them with [`NodeRun::finish`].
    Done,
}

/// Where a node is in its sequence of checks.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Phase {
    /// Attempting this dimension (reachability, authentication, protocol, capability or
    /// functional, in that order).
    Check(Dimension),
    /// Own checks over; the cleanup call is next.
    Close,
    /// Nothing left to do.
    Finished,
}

/// One node's own checks as a sequence of steps (contract §3.2): configuration (offline, at
/// [`NodeRun::start`]), then reachability, authentication as a gate, protocol, capability,
/// functional, cleanup, and the latency threshold at [`NodeRun::finish`].
///
/// Apart from the offline configuration check, the node makes no adapter call itself:
/// [`NodeRun::next_step`] says which call to make, [`NodeRun::record`] takes its outcome. So
/// the node can be carried by any thread between two steps — the engine moves it to a fresh
/// worker when a call ignores its deadline — and retries, gates and budgets live in one place.
pub struct NodeRun {
    plan: Arc<TargetPlan>,
    target: Arc<Target>,
    cancel: Cancel,
    /// The adapter, once the engine pre-checks passed.
    adapter: Option<&'static dyn Adapter>,
    /// The adapter state between calls. `None` after an abandoned call: the next call gets a
    /// fresh one.
    run: Option<Box<dyn TargetRun>>,
    /// Requested own dimensions (no `dependency`).
    own: Vec<Dimension>,
    /// The budget's end (or the run deadline).
    hard_deadline: Deadline,
    /// The run deadline, which also ends the cleanup.
    run_deadline: Deadline,
    out: NodeOutcome,
    phase: Phase,
    /// Retries already made of the current phase's dimension.
    tries: u32,
    /// The current dimension's last outcome, while a retry is pending.
    last: Option<(Observation, Duration)>,
    /// A retry delay to wait before the next attempt.
    pause: Option<Duration>,
    /// When the call in flight started.
    call_started: Option<Instant>,
    /// How long the check call in flight was given (its deadline minus its start), and the
    /// bound that set its deadline.
    call_allowed: Duration,
    call_bound: Bound,
    auth_passed: bool,
}

impl NodeRun {
    /// Starts a node: engine pre-checks and the adapter's offline configuration check, both
    /// immediate. The node then asks for its first call, if it needs any.
    pub fn start(
        plan: &Arc<TargetPlan>,
        adapters: crate::engine::Adapters,
        clock: &Clock,
        cancel: &Cancel,
    ) -> NodeRun {
        let target = &plan.target;
        let adapter = adapters(target.kind);
        let dims = requested(target, adapter);
        let own: Vec<Dimension> = dims
            .iter()
            .copied()
            .filter(|d| *d != Dimension::Dependency)
            .collect();
        let hard_deadline = match target.budget_ms {
            Some(ms) => Deadline::new(clock.start + Duration::from_millis(ms), Bound::BudgetMs)
                .min(clock.run_deadline),
            None => clock.run_deadline,
        };
        let mut node = NodeRun {
            plan: plan.clone(),
            target: target.clone(),
            cancel: cancel.clone(),
            adapter: None,
            run: None,
            own,
            hard_deadline,
            run_deadline: clock.run_deadline,
            out: NodeOutcome {
                wants_dependency_check: dims.contains(&Dimension::Dependency),
                ..NodeOutcome::default()
            },
            phase: Phase::Finished,
            tries: 0,
            last: None,
            pause: None,
            call_started: None,
            call_allowed: Duration::ZERO,
            call_bound: Bound::TimeoutMs,
            auth_passed: true,
        };
        if node.own.is_empty() || cancel.is_cancelled() {
            return node;
        }

        // Configuration: engine pre-checks, then the adapter's offline validation.
        let adapter = match preflight(plan, adapter, &node.own) {
            Ok(adapter) => adapter,
            Err(obs) => {
                node.show(Dimension::Configuration, obs);
                return node;
            }
        };
        let mut run = adapter.start(plan.clone());
        let config_obs = if hard_deadline.passed() {
            Observation::failed(
                Status::Unknown,
                Reason::Engine(Note::ConfigurationIncomplete(hard_deadline.bound())),
            )
        } else {
            run.configure()
        };
        let config_passed = config_obs.status.passed();
        if node.wants(Dimension::Configuration) || !config_passed {
            node.show(Dimension::Configuration, config_obs);
        }
        if !config_passed || !node.own.iter().any(|d| *d != Dimension::Configuration) {
            return node;
        }
        node.adapter = Some(adapter);
        node.run = Some(run);
        node.phase = Phase::Check(Dimension::Reachability);
        node
    }

    /// What the node needs next.
    pub fn next_step(&mut self) -> Next {
        if let Some(delay) = self.pause.take() {
            return Next::Pause(delay);
        }
        loop {
            let dim = match self.phase {
                Phase::Finished => return Next::Done,
                Phase::Close => {
                    self.phase = Phase::Finished;
                    let Some(run) = self.run.take() else { continue };
                    self.call_started = Some(Instant::now());
                    return Next::Call {
                        run,
                        call: Call::Close,
                        deadline: Deadline::after(CLOSE_BUDGET, Bound::Cleanup)
                            .min(self.run_deadline),
                        cancellable: false,
                    };
                }
                Phase::Check(dim) => dim,
            };
            if self.cancel.is_cancelled() {
                // A pending retry ends with the attempt it would have repeated.
                let (obs, elapsed) = self.last.take().unwrap_or_else(|| {
                    (
                        Observation::failed(Status::Unknown, Reason::Engine(Note::Cancelled)),
                        Duration::ZERO,
                    )
                });
                self.complete(dim, obs, elapsed);
                continue;
            }
            let started = Instant::now();
            let (timeout_ms, bound) = self.target.timeout_for(dim);
            let deadline = Deadline::new(started + Duration::from_millis(timeout_ms), bound)
                .min(self.hard_deadline);
            if started >= deadline.at() {
                let obs = Observation::failed(
                    Status::Unreachable,
                    Reason::Engine(Note::BudgetExhausted(deadline.bound())),
                );
                self.observe(dim, obs, Duration::ZERO);
                continue;
            }
            let Some(run) = self.take_run() else {
                // Unreachable: a node only reaches a check phase with an adapter.
                self.phase = Phase::Finished;
                continue;
            };
            self.call_started = Some(started);
            self.call_allowed = deadline.at() - started;
            self.call_bound = deadline.bound();
            return Next::Call {
                run,
                call: Call::Check(dim),
                deadline,
                cancellable: true,
            };
        }
    }

    /// Takes back the adapter state (`None` if it had to be left behind) and how the call
    /// asked for by the last [`Next::Call`] ended.
    pub fn record(&mut self, run: Option<Box<dyn TargetRun>>, ended: Ended) {
        self.run = run;
        let elapsed = self
            .call_started
            .take()
            .map_or(Duration::ZERO, |s| s.elapsed());
        // After the cleanup call the phase is already `Finished`; its outcome is ignored.
        let Phase::Check(dim) = self.phase else {
            return;
        };
        let mut obs = match ended {
            Ended::Returned(obs) => obs,
            Ended::TimedOut { response_seen } => {
                let status = if response_seen {
                    Status::Unknown
                } else {
                    Status::Unreachable
                };
                let note = Note::TimedOut {
                    bound: self.call_bound,
                    response_seen,
                };
                let mut o = Observation::failed(status, Reason::Engine(note));
                o.response_seen = response_seen;
                if let Some(run) = self.run.as_mut() {
                    o.evidence.extend(&run.unanswered());
                }
                o
            }
            Ended::Cancelled => {
                Observation::failed(Status::Unknown, Reason::Engine(Note::Cancelled))
            }
        };
        // A deadline failure (the watchdog's or the adapter's own) says what the deadline was,
        // unless the adapter knows better (an outcome shared from an earlier attempt).
        if matches!(obs.reason, Some(Reason::Engine(Note::TimedOut { .. })))
            && obs.evidence.get(Key::DeadlineMs).is_none()
        {
            obs.evidence.set(
                Key::DeadlineMs,
                Fact::Ms(self.call_allowed.as_secs_f64() * 1000.0),
            );
        }
        self.observe(dim, obs, elapsed);
    }

    /// The node's own outcome when no thread could be had to go on with it: the check it
    /// would have made next is UNKNOWN for want of threads, the rest is not run.
    pub fn starved(mut self) -> NodeOutcome {
        if let Phase::Check(dim) = self.phase {
            self.show(dim, Observation::local_resource(LocalResource::Threads));
            self.phase = Phase::Finished;
        }
        self.finish()
    }

    /// The node's own outcome, with the latency threshold applied.
    pub fn finish(mut self) -> NodeOutcome {
        if let (true, Some(latency_ms)) = (self.wants(Dimension::Latency), self.out.latency_ms) {
            let obs = match self.target.latency_threshold_ms {
                Some(t) if latency_ms > t => {
                    Observation::failed(Status::Degraded, Reason::Engine(Note::LatencyExceeds(t)))
                        .with(Key::LatencyMs, Fact::Ms(latency_ms))
                        .with(Key::ThresholdMs, Fact::Ms(t))
                }
                _ => Observation::healthy(),
            };
            self.show(Dimension::Latency, obs);
        }
        self.out
    }

    fn wants(&self, dim: Dimension) -> bool {
        self.own.contains(&dim)
    }

    /// Shows a check. A credential rejection names the credential sent, whatever the
    /// adapter: the variable a bearer token came from (`credential_env`), or that it was an
    /// OAuth access token (`credential_kind`), so `doctor` says which token was refused.
    fn show(&mut self, dim: Dimension, mut obs: Observation) {
        if obs.reason.is_some_and(Reason::rejects_credentials) {
            match &self.plan.credential {
                Credential::Bearer { variable, .. } => obs
                    .evidence
                    .set(Key::CredentialEnv, Fact::Config(variable.clone())),
                Credential::OAuth(_) => obs.evidence.set(Key::CredentialKind, Fact::Word("oauth")),
                Credential::None => {}
            }
        }
        self.out.checks.insert(dim, to_check(dim, obs));
    }

    /// The adapter state for the next call: the current one, or a fresh one after an
    /// abandoned call.
    fn take_run(&mut self) -> Option<Box<dyn TargetRun>> {
        if let Some(run) = self.run.take() {
            return Some(run);
        }
        let adapter = self.adapter?;
        let mut fresh = adapter.start(self.plan.clone());
        let _ = fresh.configure();
        Some(fresh)
    }

    /// One attempt's outcome: retry it (passive checks that got no response, while retries,
    /// budget and the run allow), or complete the dimension.
    fn observe(&mut self, dim: Dimension, obs: Observation, elapsed: Duration) {
        let retryable =
            dim != Dimension::Functional && obs.status == Status::Unreachable && !obs.response_seen;
        if retryable && self.tries < self.target.retries && !self.cancel.is_cancelled() {
            let delay = Duration::from_millis(self.target.retry_delay_ms);
            if Instant::now() + delay < self.hard_deadline.at() {
                self.tries += 1;
                self.pause = Some(delay);
                self.last = Some((obs, elapsed));
                return;
            }
        }
        self.complete(dim, obs, elapsed);
    }

    /// A dimension's final outcome: show it as the gates require and move on.
    fn complete(&mut self, dim: Dimension, obs: Observation, elapsed: Duration) {
        self.tries = 0;
        self.last = None;
        let passed = obs.status.passed();
        match dim {
            Dimension::Reachability => {
                let latency = obs.latency.unwrap_or(elapsed);
                if self.wants(dim) || !passed {
                    self.show(dim, obs);
                }
                if !passed {
                    self.phase = Phase::Close;
                    return;
                }
                self.out.latency_ms = Some(latency.as_secs_f64() * 1000.0);
            }
            Dimension::Authentication => {
                self.auth_passed = passed;
                if self.wants(dim) || !passed {
                    self.show(dim, obs);
                }
            }
            _ => self.show(dim, obs),
        }
        self.phase = self.after(dim);
    }

    /// The phase after `dim`: the next dimension that should run, or cleanup.
    fn after(&self, dim: Dimension) -> Phase {
        const ORDER: [Dimension; 5] = [
            Dimension::Reachability,
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Capability,
            Dimension::Functional,
        ];
        let implements = |d: Dimension| {
            self.adapter
                .as_ref()
                .is_some_and(|a| a.dimensions().contains(&d))
        };
        ORDER
            .iter()
            .skip_while(|d| **d != dim)
            .skip(1)
            .copied()
            .find(|d| match d {
                // A gate for everything that needs credentials.
                Dimension::Authentication => {
                    (self.wants(Dimension::Authentication)
                        || self.wants(Dimension::Capability)
                        || self.wants(Dimension::Functional))
                        && implements(Dimension::Authentication)
                }
                Dimension::Capability | Dimension::Functional => self.auth_passed && self.wants(*d),
                _ => self.wants(*d),
            })
            .map_or(Phase::Close, Phase::Check)
    }
}

/// Engine pre-checks: an adapter exists, the requested dimensions are supported, every
/// referenced variable is set.
fn preflight(
    plan: &TargetPlan,
    adapter: Option<&'static dyn Adapter>,
    own: &[Dimension],
) -> Result<&'static dyn Adapter, Observation> {
    let misconfigured = |note| Observation::failed(Status::Misconfigured, Reason::Engine(note));
    let Some(adapter) = adapter else {
        return Err(misconfigured(Note::NoAdapter));
    };
    let unsupported = own.iter().any(|d| {
        !matches!(d, Dimension::Configuration | Dimension::Latency)
            && !adapter.dimensions().contains(d)
    });
    if unsupported {
        return Err(misconfigured(Note::DimensionUnsupported));
    }
    if !plan.missing_env.is_empty() {
        return Err(misconfigured(Note::CredentialMissing)
            .with(Key::MissingEnv, Fact::ConfigList(plan.missing_env.clone())));
    }
    Ok(adapter)
}

/// Turns an observation into the check entry the document shows.
pub fn to_check(dim: Dimension, obs: Observation) -> Check {
    let message = match obs.reason.and_then(Reason::message) {
        Some(message) => Some(message),
        None if obs.status == Status::Healthy => None,
        None => Some(Check::generic_message(obs.status, dim)),
    };
    Check {
        code: obs.code(),
        reason: obs.reason,
        status: obs.status,
        message,
        steps: obs.steps,
        evidence: obs.evidence,
    }
}
