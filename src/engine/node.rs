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

use crate::adapter::credential::{BearerToken, NoCredentials};
use crate::adapter::{Adapter, CredentialSource, TargetContext, TargetRun};
use crate::config::Target;
use crate::engine::aggregate::NodeOutcome;
use crate::engine::cancel::Cancel;
use crate::engine::watchdog::Ended;
use crate::engine::{CLOSE_BUDGET, ResolvedEnv};
use crate::result::document::Check;
use crate::result::{Code, Fact, Note, Observation};
use crate::vocab::{Bound, Deadline, Dimension, Status};

/// The run's clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// When the run started (budgets count from here, queue waits included).
    pub start: Instant,
    /// The run cap.
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

/// Which adapter call a [`Step::Call`] asks for.
pub enum Call {
    /// One attempt of one dimension.
    Check(Dimension),
    /// The end-of-run cleanup, within the call's deadline. Its outcome never changes a result.
    Close,
}

/// What a node needs next from whoever drives it (see [`NodeRun`]).
pub enum Step {
    /// Make this call on `run`, under an [`crate::vocab::Attempt`] ending at `deadline`,
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
enum Stage {
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
    target: Arc<Target>,
    cancel: Cancel,
    /// The adapter and context, once the engine pre-checks passed.
    adapter: Option<(&'static dyn Adapter, TargetContext)>,
    /// The adapter state between calls. `None` after an abandoned call: the next call gets a
    /// fresh one.
    run: Option<Box<dyn TargetRun>>,
    /// Requested own dimensions (no `dependency`).
    own: Vec<Dimension>,
    /// The budget's end (or the run cap).
    hard_deadline: Deadline,
    out: NodeOutcome,
    stage: Stage,
    /// Retries already made of the current stage's dimension.
    tries: u32,
    /// The current dimension's last outcome, while a retry is pending.
    last: Option<(Observation, Duration)>,
    /// A retry delay to wait before the next attempt.
    pause: Option<Duration>,
    /// When the call in flight started.
    call_started: Option<Instant>,
    /// How long the check call in flight was given (its deadline minus its start).
    call_allowed: Duration,
    auth_passed: bool,
}

impl NodeRun {
    /// Starts a node: engine pre-checks and the adapter's offline configuration check, both
    /// immediate. The node then asks for its first call, if it needs any.
    pub fn start(
        target: &Arc<Target>,
        adapters: crate::engine::Adapters,
        env: &ResolvedEnv,
        clock: &Clock,
        cancel: &Cancel,
    ) -> NodeRun {
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
            target: target.clone(),
            cancel: cancel.clone(),
            adapter: None,
            run: None,
            own,
            hard_deadline,
            out: NodeOutcome {
                wants_dependency_check: dims.contains(&Dimension::Dependency),
                ..NodeOutcome::default()
            },
            stage: Stage::Finished,
            tries: 0,
            last: None,
            pause: None,
            call_started: None,
            call_allowed: Duration::ZERO,
            auth_passed: true,
        };
        if node.own.is_empty() || cancel.is_cancelled() {
            return node;
        }

        // Configuration: engine pre-checks, then the adapter's offline validation.
        let (ctx, adapter) = match preflight(target, adapter, &node.own, env) {
            Ok(ready) => ready,
            Err(obs) => {
                node.show(Dimension::Configuration, obs);
                return node;
            }
        };
        let mut run = adapter.start(ctx.clone());
        let config_obs = if hard_deadline.passed() {
            Observation::noted(Status::Unknown, Note::ConfigurationIncomplete)
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
        node.adapter = Some((adapter, ctx));
        node.run = Some(run);
        node.stage = Stage::Check(Dimension::Reachability);
        node
    }

    /// What the node needs next.
    pub fn next_step(&mut self) -> Step {
        if let Some(delay) = self.pause.take() {
            return Step::Pause(delay);
        }
        loop {
            let dim = match self.stage {
                Stage::Finished => return Step::Done,
                Stage::Close => {
                    self.stage = Stage::Finished;
                    let Some(run) = self.run.take() else { continue };
                    self.call_started = Some(Instant::now());
                    return Step::Call {
                        run,
                        call: Call::Close,
                        deadline: Deadline::after(CLOSE_BUDGET, Bound::Cleanup),
                        cancellable: false,
                    };
                }
                Stage::Check(dim) => dim,
            };
            if self.cancel.is_cancelled() {
                // A pending retry ends with the attempt it would have repeated.
                let (obs, elapsed) = self.last.take().unwrap_or_else(|| {
                    (
                        Observation::noted(Status::Unknown, Note::Cancelled),
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
                let obs = Observation::noted(Status::Unreachable, Note::BudgetExhausted);
                self.observe(dim, obs, Duration::ZERO);
                continue;
            }
            let Some(run) = self.take_run() else {
                // Unreachable: a node only reaches a check stage with an adapter.
                self.stage = Stage::Finished;
                continue;
            };
            self.call_started = Some(started);
            self.call_allowed = deadline.at() - started;
            return Step::Call {
                run,
                call: Call::Check(dim),
                deadline,
                cancellable: true,
            };
        }
    }

    /// Takes back the adapter state (`None` if it had to be left behind) and how the call
    /// asked for by the last [`Step::Call`] ended.
    pub fn record(&mut self, run: Option<Box<dyn TargetRun>>, ended: Ended) {
        self.run = run;
        let elapsed = self
            .call_started
            .take()
            .map_or(Duration::ZERO, |s| s.elapsed());
        // After the cleanup call the stage is already `Finished`; its outcome is ignored.
        let Stage::Check(dim) = self.stage else {
            return;
        };
        let mut obs = match ended {
            Ended::Returned(obs) => obs,
            Ended::TimedOut {
                response_seen: true,
            } => Observation::noted(Status::Unknown, Note::IncompleteResponse).responded(),
            Ended::TimedOut {
                response_seen: false,
            } => Observation::noted(Status::Unreachable, Note::CommunicationFailed),
            Ended::Cancelled => Observation::noted(Status::Unknown, Note::Cancelled),
        };
        // A deadline failure (the watchdog's or the adapter's own) says what the deadline was.
        if matches!(
            obs.note,
            Some(Note::CommunicationFailed | Note::IncompleteResponse)
        ) {
            obs.evidence.set(
                "deadline_ms",
                Fact::Ms(self.call_allowed.as_secs_f64() * 1000.0),
            );
        }
        self.observe(dim, obs, elapsed);
    }

    /// The node's own outcome, with the latency threshold applied.
    pub fn finish(mut self) -> NodeOutcome {
        if let (true, Some(latency_ms)) = (self.wants(Dimension::Latency), self.out.latency_ms) {
            let obs = match self.target.latency_threshold_ms {
                Some(t) if latency_ms > t => {
                    Observation::noted(Status::Degraded, Note::LatencyExceeds(t))
                        .with("latency_ms", Fact::Ms(latency_ms))
                        .with("threshold_ms", Fact::Ms(t))
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

    /// Shows a check. A credential rejection names the variable the credential came from
    /// (`credential_env`), whatever the adapter: `doctor` says which token was refused.
    fn show(&mut self, dim: Dimension, mut obs: Observation) {
        if obs.code.is_some_and(Code::rejects_credentials)
            && let Some(name) = &self.target.bearer_env
        {
            obs.evidence
                .set("credential_env", Fact::Config(name.clone()));
        }
        self.out.checks.insert(dim, to_check(dim, obs));
    }

    /// The adapter state for the next call: the current one, or a fresh one after an
    /// abandoned call.
    fn take_run(&mut self) -> Option<Box<dyn TargetRun>> {
        if let Some(run) = self.run.take() {
            return Some(run);
        }
        let (adapter, ctx) = self.adapter.as_ref()?;
        let mut fresh = adapter.start(ctx.clone());
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
                    self.stage = Stage::Close;
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
        self.stage = self.after(dim);
    }

    /// The stage after `dim`: the next dimension that should run, or cleanup.
    fn after(&self, dim: Dimension) -> Stage {
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
                .is_some_and(|(a, _)| a.dimensions().contains(&d))
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
            .map_or(Stage::Close, Stage::Check)
    }
}

/// Engine pre-checks: requested dimensions supported, credentials present. Builds the
/// adapter context on success.
fn preflight(
    target: &Arc<Target>,
    adapter: Option<&'static dyn Adapter>,
    own: &[Dimension],
    env: &ResolvedEnv,
) -> Result<(TargetContext, &'static dyn Adapter), Observation> {
    let Some(adapter) = adapter else {
        return Err(Observation::noted(Status::Misconfigured, Note::NoAdapter));
    };
    let unsupported = own.iter().any(|d| {
        !matches!(d, Dimension::Configuration | Dimension::Latency)
            && !adapter.dimensions().contains(d)
    });
    if unsupported {
        return Err(Observation::noted(
            Status::Misconfigured,
            Note::DimensionUnsupported,
        ));
    }
    let missing: Vec<String> = target
        .env_refs()
        .into_iter()
        .filter(|name| env.get(name).is_none())
        .map(str::to_string)
        .collect();
    if !missing.is_empty() {
        return Err(
            Observation::noted(Status::Misconfigured, Note::CredentialMissing)
                .with("missing_env", Fact::ConfigList(missing)),
        );
    }
    let credentials: Arc<dyn CredentialSource> = match &target.bearer_env {
        Some(name) => match env.get(name) {
            Some(secret) => Arc::new(BearerToken(secret.clone())),
            None => Arc::new(NoCredentials),
        },
        None => Arc::new(NoCredentials),
    };
    let mut child_env = Vec::new();
    if let Some(stdio) = target.mcp.as_ref().and_then(|m| m.stdio.as_ref()) {
        for (child, host) in &stdio.env {
            if let Some(secret) = env.get(host) {
                child_env.push((child.clone(), secret.clone()));
            }
        }
    }
    let ctx = TargetContext {
        target: target.clone(),
        credentials,
        env: Arc::new(child_env),
    };
    Ok((ctx, adapter))
}

/// Turns an observation into the check entry the document shows.
pub fn to_check(dim: Dimension, obs: Observation) -> Check {
    let message = if let Some(code) = obs.code {
        Some(code.message().to_string())
    } else if let Some(note) = &obs.note {
        Some(note.message())
    } else if obs.status == Status::Healthy {
        None
    } else {
        Some(format!("{} in {}", obs.status, dim))
    };
    Check {
        code: obs.code,
        status: obs.status,
        message,
        steps: obs.steps,
        evidence: obs.evidence,
    }
}
