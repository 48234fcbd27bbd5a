//! One node's own checks: dimension order, gates, retries, deadlines, the latency threshold.
//!
//! Order (contract §3.2): configuration → reachability → authentication (as a gate) →
//! protocol → capability → functional → latency. Blocked dimensions are omitted; passing
//! implicit gates are hidden; a failed gate is shown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::adapter::credential::{BearerToken, NoCredentials};
use crate::adapter::{Adapter, CredentialSource, TargetContext, TargetRun};
use crate::config::Target;
use crate::engine::aggregate::NodeOutcome;
use crate::engine::cancel::Cancel;
use crate::engine::watchdog::{self, Ended};
use crate::engine::{CLOSE_BUDGET, ResolvedEnv};
use crate::result::document::Check;
use crate::result::{Dimension, Fact, Note, Observation, Status};

/// The run's clock.
pub struct Clock {
    /// When the run started (budgets count from here, queue waits included).
    pub start: Instant,
    /// The run cap.
    pub run_deadline: Instant,
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

/// Runs one node's own checks.
pub fn run_node(
    target: &Arc<Target>,
    adapters: crate::engine::Adapters,
    env: &ResolvedEnv,
    clock: &Clock,
    cancel: &Cancel,
) -> NodeOutcome {
    let adapter = adapters(target.kind);
    let dims = requested(target, adapter);
    let mut out = NodeOutcome {
        wants_dependency_check: dims.contains(&Dimension::Dependency),
        ..NodeOutcome::default()
    };
    let own: Vec<Dimension> = dims
        .iter()
        .copied()
        .filter(|d| *d != Dimension::Dependency)
        .collect();
    if own.is_empty() || cancel.is_cancelled() {
        return out;
    }
    let wants = |d: Dimension| own.contains(&d);
    let hard_deadline = match target.budget_ms {
        Some(ms) => (clock.start + Duration::from_millis(ms)).min(clock.run_deadline),
        None => clock.run_deadline,
    };

    // Configuration: engine pre-checks, then the adapter's offline validation.
    let (ctx, adapter) = match preflight(target, adapter, &own, env) {
        Ok(ready) => ready,
        Err(obs) => {
            out.checks.insert(
                Dimension::Configuration,
                to_check(Dimension::Configuration, obs),
            );
            return out;
        }
    };
    let mut run: Box<dyn TargetRun> = adapter.start(ctx.clone());
    let config_obs = if Instant::now() >= hard_deadline {
        Observation::noted(Status::Unknown, Note::ConfigurationIncomplete)
    } else {
        run.configure()
    };
    let config_passed = config_obs.status.passed();
    if wants(Dimension::Configuration) || !config_passed {
        out.checks.insert(
            Dimension::Configuration,
            to_check(Dimension::Configuration, config_obs),
        );
    }
    if !config_passed {
        return out;
    }
    if !own.iter().any(|d| *d != Dimension::Configuration) {
        return out;
    }

    let mut session = Session {
        worker: watchdog::Worker::new(),
        run: Some(run),
        adapter,
        ctx,
        target,
        hard_deadline,
        cancel,
    };

    // Reachability gate.
    let (reach, elapsed) = session.attempt_with_retries(Dimension::Reachability);
    let reach_passed = reach.status.passed();
    let latency = reach.latency.unwrap_or(elapsed);
    if wants(Dimension::Reachability) || !reach_passed {
        out.checks.insert(
            Dimension::Reachability,
            to_check(Dimension::Reachability, reach),
        );
    }
    if !reach_passed {
        session.close();
        return out;
    }
    let latency_ms = latency.as_secs_f64() * 1000.0;
    out.latency_ms = Some(latency_ms);

    // Authentication gate.
    let implements = |d: Dimension| adapter.dimensions().contains(&d);
    let mut auth_passed = true;
    if (wants(Dimension::Authentication)
        || wants(Dimension::Capability)
        || wants(Dimension::Functional))
        && implements(Dimension::Authentication)
    {
        let (obs, _) = session.attempt_with_retries(Dimension::Authentication);
        auth_passed = obs.status.passed();
        if wants(Dimension::Authentication) || !auth_passed {
            out.checks.insert(
                Dimension::Authentication,
                to_check(Dimension::Authentication, obs),
            );
        }
    }
    if wants(Dimension::Protocol) {
        let (obs, _) = session.attempt_with_retries(Dimension::Protocol);
        out.checks
            .insert(Dimension::Protocol, to_check(Dimension::Protocol, obs));
    }
    if auth_passed && wants(Dimension::Capability) {
        let (obs, _) = session.attempt_with_retries(Dimension::Capability);
        out.checks
            .insert(Dimension::Capability, to_check(Dimension::Capability, obs));
    }
    if auth_passed && wants(Dimension::Functional) {
        // Active: never retried.
        let (obs, _) = session.attempt(Dimension::Functional);
        out.checks
            .insert(Dimension::Functional, to_check(Dimension::Functional, obs));
    }
    session.close();
    if wants(Dimension::Latency) {
        let obs = match target.latency_threshold_ms {
            Some(t) if latency_ms > t => {
                Observation::noted(Status::Degraded, Note::LatencyExceeds(t))
                    .with("latency_ms", Fact::Ms(latency_ms))
                    .with("threshold_ms", Fact::Ms(t))
            }
            _ => Observation::healthy(),
        };
        out.checks
            .insert(Dimension::Latency, to_check(Dimension::Latency, obs));
    }
    out
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

/// The node's adapter state plus what is needed to replace it after an abandoned attempt.
struct Session<'a> {
    worker: watchdog::Worker,
    run: Option<Box<dyn TargetRun>>,
    adapter: &'static dyn Adapter,
    ctx: TargetContext,
    target: &'a Target,
    hard_deadline: Instant,
    cancel: &'a Cancel,
}

impl Session<'_> {
    fn attempt_with_retries(&mut self, dim: Dimension) -> (Observation, Duration) {
        let mut tries = 0;
        loop {
            let (obs, elapsed) = self.attempt(dim);
            let retryable = obs.status == Status::Unreachable && !obs.response_seen;
            if !retryable || tries >= self.target.retries || self.cancel.is_cancelled() {
                return (obs, elapsed);
            }
            let delay = Duration::from_millis(self.target.retry_delay_ms);
            if Instant::now() + delay >= self.hard_deadline || !self.cancel.sleep(delay) {
                return (obs, elapsed);
            }
            tries += 1;
        }
    }

    fn attempt(&mut self, dim: Dimension) -> (Observation, Duration) {
        let started = Instant::now();
        let deadline =
            (started + Duration::from_millis(self.target.timeout_for(dim))).min(self.hard_deadline);
        if self.cancel.is_cancelled() {
            return (
                Observation::noted(Status::Unknown, Note::Cancelled),
                Duration::ZERO,
            );
        }
        if started >= deadline {
            return (
                Observation::noted(Status::Unreachable, Note::BudgetExhausted),
                Duration::ZERO,
            );
        }
        let run = match self.run.take() {
            Some(run) => run,
            None => {
                let mut fresh = self.adapter.start(self.ctx.clone());
                let _ = fresh.configure();
                fresh
            }
        };
        let (state, ended) = self
            .worker
            .bounded(run, deadline, self.cancel, move |r, a| r.check(dim, a));
        self.run = state;
        let elapsed = started.elapsed();
        let obs = match ended {
            Ended::Returned(obs) => obs,
            Ended::TimedOut {
                response_seen: true,
            } => Observation::noted(Status::Unknown, Note::IncompleteResponse).responded(),
            Ended::TimedOut {
                response_seen: false,
            } => Observation::noted(Status::Unreachable, Note::CommunicationFailed),
            Ended::Cancelled => Observation::noted(Status::Unknown, Note::Cancelled),
        };
        (obs, elapsed)
    }

    fn close(&mut self) {
        if let Some(run) = self.run.take() {
            let deadline = Instant::now() + CLOSE_BUDGET;
            let budget = CLOSE_BUDGET;
            let _ = self
                .worker
                .bounded(run, deadline, &Cancel::new(), move |r, _| {
                    r.close(budget);
                    Observation::healthy()
                });
        }
    }
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
