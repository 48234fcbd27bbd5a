//! Adapters speak one protocol each and classify what they see into [`Observation`]s.
//!
//! An adapter never prints and never decides an exit code. The engine asks it for one
//! [`TargetRun`] per target per run (from the target's [`TargetPlan`]), then for one attempt
//! at a time of each dimension, each under an [`Attempt`] that carries the deadline and the
//! watchdog's abort hooks.

pub mod credential;
pub mod http_probe;
pub mod mcp;

use std::sync::Arc;

use crate::contract::{Dimension, TargetType};
use crate::result::{Evidence, Observation};
use crate::run_plan::TargetPlan;
use crate::runtime::Attempt;

/// One protocol family.
pub trait Adapter: Sync {
    /// The dimensions this adapter implements besides `configuration` (which every adapter
    /// has). `latency` and `dependency` belong to the engine.
    fn dimensions(&self) -> &'static [Dimension];

    /// Starts the per-target-run state from the target's plan (its configuration, credential
    /// and resolved environment). Nothing may touch the network here.
    fn start(&self, plan: Arc<TargetPlan>) -> Box<dyn TargetRun>;
}

/// Per-target-run state, shared by all dimensions of one target in one run.
pub trait TargetRun: Send {
    /// Offline validation of the target: no network, no process.
    fn configure(&mut self) -> Observation;

    /// One attempt of one dimension. Must return by `attempt.deadline()`; the engine's
    /// watchdog fires the attempt's abort hooks at the deadline regardless.
    fn check(&mut self, dim: Dimension, attempt: &Attempt) -> Observation;

    /// Called when an attempt ended at its deadline or was cancelled: the session or process
    /// that attempt used must not be reused.
    fn discard(&mut self) {}

    /// What the adapter knows of the request an attempt cut at its deadline left unanswered
    /// (an MCP stdio server: the method, that the process was running, what it wrote), for
    /// the evidence of the timed-out check — the watchdog's cut keeps it too.
    fn unanswered(&mut self) -> Evidence {
        Evidence::default()
    }

    /// End of the target run: best-effort cleanup (e.g. MCP `DELETE`, process shutdown)
    /// within `attempt` (the engine's cleanup budget, cut by its watchdog like any call).
    /// Never changes any result.
    fn close(&mut self, _attempt: &Attempt) {}
}

/// The adapter for a target type, if there is one.
pub fn for_type(kind: TargetType) -> Option<&'static dyn Adapter> {
    if kind.is_http_family() {
        Some(&http_probe::HttpAdapter)
    } else if kind == TargetType::Mcp {
        Some(&mcp::McpAdapter)
    } else {
        None
    }
}
