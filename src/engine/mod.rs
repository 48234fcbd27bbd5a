//! The engine: runs every node's checks once, in parallel up to `concurrency`, under
//! deadlines it enforces itself, then aggregates. It never speaks a protocol.

pub mod aggregate;
pub mod cancel;
pub mod node;
pub mod watchdog;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, Secret};
use crate::config::{Config, NodeId, Target, TargetType};
use crate::result::document::Document;

pub use aggregate::NodeOutcome;
pub use cancel::Cancel;

/// No run lasts longer than this, whatever the configuration says.
pub const RUN_CAP: Duration = Duration::from_secs(60);

/// Budget of a target's cleanup hook (MCP `DELETE`, process shutdown).
pub const CLOSE_BUDGET: Duration = Duration::from_millis(250);

/// Environment values resolved once per run, before any check.
#[derive(Clone, Debug, Default)]
pub struct ResolvedEnv {
    values: Vec<(String, Secret)>,
}

impl ResolvedEnv {
    /// Reads every variable the configuration references. Missing or empty ones are simply
    /// absent (the node's configuration check reports them).
    pub fn from_process(config: &Config) -> ResolvedEnv {
        ResolvedEnv::from_lookup(config, |name| std::env::var(name).ok())
    }

    /// Resolves with a custom lookup (tests).
    pub fn from_lookup(config: &Config, lookup: impl Fn(&str) -> Option<String>) -> ResolvedEnv {
        let mut values: Vec<(String, Secret)> = Vec::new();
        for target in &config.nodes {
            for name in target.env_refs() {
                if values.iter().any(|(n, _)| n == name) {
                    continue;
                }
                if let Some(v) = lookup(name).filter(|v| !v.is_empty()) {
                    values.push((name.to_string(), Secret::new(v)));
                }
            }
        }
        ResolvedEnv { values }
    }

    /// The value of a referenced variable, if set and non-empty.
    pub fn get(&self, name: &str) -> Option<&Secret> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// Every resolved value (for redaction).
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|(_, s)| s.expose())
    }
}

/// Progress callback: (nodes done, nodes total).
pub type Progress<'a> = &'a dyn Fn(usize, usize);

/// Finds the adapter for a target type ([`crate::adapter::for_type`] in production; tests
/// substitute scripted adapters).
pub type Adapters = fn(TargetType) -> Option<&'static dyn Adapter>;

/// Runs every node once with the built-in adapters and builds the document.
pub fn run(config: &Config, env: &ResolvedEnv, cancel: &Cancel, progress: Progress) -> Document {
    run_with(config, env, cancel, progress, crate::adapter::for_type)
}

/// Runs every node once with the given adapters and builds the document.
pub fn run_with(
    config: &Config,
    env: &ResolvedEnv,
    cancel: &Cancel,
    progress: Progress,
    adapters: Adapters,
) -> Document {
    let start = Instant::now();
    let run_deadline = start + RUN_CAP;
    let order = execution_order(config);
    let total = order.len();
    let targets: Arc<Vec<Arc<Target>>> =
        Arc::new(config.nodes.iter().cloned().map(Arc::new).collect());
    let env = Arc::new(env.clone());
    let order = Arc::new(order);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<(NodeId, NodeOutcome)>();
    let workers = config.concurrency.clamp(1, 256).min(total.max(1));
    for _ in 0..workers {
        let (targets, env, order, next, tx, cancel) = (
            targets.clone(),
            env.clone(),
            order.clone(),
            next.clone(),
            tx.clone(),
            cancel.clone(),
        );
        let spawned = thread::Builder::new()
            .name("target".into())
            .stack_size(512 * 1024)
            .spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&id) = order.get(i) else { break };
                    let clock = node::Clock {
                        start,
                        run_deadline,
                    };
                    let outcome = node::run_node(&targets[id], adapters, &env, &clock, &cancel);
                    if tx.send((id, outcome)).is_err() {
                        break;
                    }
                }
            });
        if spawned.is_err() {
            break;
        }
    }
    drop(tx);
    let mut outcomes: Vec<Option<NodeOutcome>> = vec![None; config.nodes.len()];
    let mut done = 0;
    // Workers end every attempt by its deadline (≤ the run cap) plus the watchdog grace and
    // the cleanup budget; past that, whatever has not reported is left behind.
    let give_up = run_deadline + CLOSE_BUDGET + 4 * watchdog::GRACE;
    while done < total {
        let wait = give_up
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(100));
        match rx.recv_timeout(wait) {
            Ok((id, outcome)) => {
                if let Some(slot) = outcomes.get_mut(id) {
                    *slot = Some(outcome);
                }
                done += 1;
                progress(done, total);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                progress(done, total);
                if Instant::now() >= give_up {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let outcomes: Vec<NodeOutcome> = outcomes
        .into_iter()
        .map(|o| o.unwrap_or_default())
        .collect();
    Document {
        results: aggregate::project(config, &outcomes),
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
