//! Aggregation: a node's own status, each dependency edge's contribution, and the tree of
//! projections the document shows (a shared node appears under every parent that references
//! it, each time with its own edge metadata and the same evidence).

use std::collections::BTreeMap;

use crate::config::{Config, Edge, NodeId};
use crate::contract::{Dimension, Status};
use crate::result::document::{Check, NodeResult, TargetInfo};

/// What one node's own checks produced (independent of its dependencies).
#[derive(Clone, Debug, Default)]
pub struct NodeOutcome {
    /// Shown checks, without `dependency`.
    pub checks: BTreeMap<Dimension, Check>,
    /// Reachability latency.
    pub latency_ms: Option<f64>,
    /// Whether `dependency` was requested (its entry is computed here).
    pub wants_dependency_check: bool,
}

impl NodeOutcome {
    /// The outcome of a node whose checks never ran to the end (no thread, or a call that
    /// outlived the run): its configuration check says why.
    pub fn unfinished(why: Check) -> NodeOutcome {
        let mut out = NodeOutcome::default();
        out.checks.insert(Dimension::Configuration, why);
        out
    }

    /// Worst over the node's own checks; no checks ⇒ UNKNOWN.
    pub fn own_status(&self) -> Status {
        Status::worst(self.checks.values().map(|c| c.status))
    }
}

/// The contract's contribution table: what a dependency's status adds to its parent.
pub fn contribution(dep: Status, critical: bool) -> Status {
    match (dep, critical) {
        (Status::Healthy, _) => Status::Healthy,
        (Status::Degraded, _) => Status::Degraded,
        (_, false) => Status::Degraded,
        (Status::Unknown, true) => Status::Unknown,
        (_, true) => Status::Unhealthy,
    }
}

/// Builds the top-level results from every node's outcome.
pub fn project(config: &Config, outcomes: &[NodeOutcome]) -> Vec<NodeResult> {
    config
        .roots
        .iter()
        .map(|&root| project_node(config, outcomes, root, None))
        .collect()
}

fn project_node(
    config: &Config,
    outcomes: &[NodeOutcome],
    id: NodeId,
    edge: Option<&Edge>,
) -> NodeResult {
    let target = &config.nodes[id];
    let empty = NodeOutcome::default();
    let outcome = outcomes.get(id).unwrap_or(&empty);
    let dependencies: Vec<NodeResult> = target
        .dependencies
        .iter()
        .map(|e| project_node(config, outcomes, e.node, Some(e)))
        .collect();
    let contributions: Vec<Status> = dependencies
        .iter()
        .zip(&target.dependencies)
        .map(|(d, e)| contribution(d.status, e.critical))
        .collect();
    let own = outcome.own_status();
    let status = Status::worst(std::iter::once(own).chain(contributions.iter().copied()));
    let mut checks = outcome.checks.clone();
    if outcome.wants_dependency_check {
        let dep_status = contributions
            .iter()
            .copied()
            .max()
            .unwrap_or(Status::Healthy);
        checks.insert(
            Dimension::Dependency,
            Check {
                code: None,
                reason: None,
                status: dep_status,
                message: None,
                steps: Default::default(),
                evidence: Default::default(),
            },
        );
    }
    NodeResult {
        relationship: edge.and_then(|e| e.relationship),
        critical: edge.map(|e| e.critical),
        target: TargetInfo {
            id: target.id.clone(),
            name: target.name.clone(),
            kind: target.kind,
            adhoc: target.origin == crate::config::Origin::CommandLine,
        },
        status,
        latency_ms: outcome.latency_ms,
        checks,
        dependencies,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contribution_table() {
        use Status::*;
        let rows = [
            (Healthy, Healthy, Healthy),
            (Degraded, Degraded, Degraded),
            (Unhealthy, Unhealthy, Degraded),
            (Unreachable, Unhealthy, Degraded),
            (Misconfigured, Unhealthy, Degraded),
            (Unknown, Unknown, Degraded),
        ];
        for (dep, crit, opt) in rows {
            assert_eq!(contribution(dep, true), crit, "{dep} critical");
            assert_eq!(contribution(dep, false), opt, "{dep} optional");
        }
    }
}
