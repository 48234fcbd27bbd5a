//! `doctor`: after the tree, advice for each result — the contract's line per status, then,
//! for every check that did not pass, the likely fix, and for graphs the root cause (the
//! deepest failing critical dependencies).
//!
//! Advice is chosen from the check's typed [`Reason`], one small module per family (the
//! engine, the configuration, the network, HTTP, MCP, the MCP process); the evidence supplies
//! the numbers and configured names the sentence quotes. No advice depends on a message
//! string or on text from a server.

mod config;
mod engine;
mod http;
mod mcp;
mod network;
mod oauth;
mod process;

use std::fmt::Write;

use crate::output::Style;
use crate::output::terminal::{paint, title};
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Fact, Key, Reason};
use crate::vocab::text::clean;
use crate::vocab::{Dimension, Status};

/// The contract's advice per status.
pub fn status_advice(status: Status) -> &'static str {
    match status {
        Status::Healthy => {
            "Checks passed. Review the check list to confirm it covers your readiness requirements."
        }
        Status::Degraded => {
            "Inspect latency thresholds and optional dependencies marked as impaired."
        }
        Status::Unhealthy => {
            "Inspect failed checks and critical dependencies before using this target."
        }
        Status::Unreachable => {
            "Verify the endpoint, service availability, network access, and timeout policy."
        }
        Status::Misconfigured => {
            "Verify target configuration, adapter availability, and referenced environment credentials."
        }
        Status::Unknown => {
            "Review requested checks and adapter support; the available evidence is inconclusive."
        }
    }
}

/// All advice lines for the document.
pub fn advise(doc: &Document, style: Style) -> String {
    let mut out = String::from("\n");
    for r in &doc.results {
        node(&mut out, r, style);
        if !r.status.passed() && !r.dependencies.is_empty() {
            let mut causes = Vec::new();
            root_causes(r, &mut vec![label(r)], &mut causes);
            let arrow = if style.unicode { " → " } else { " -> " };
            for (path, status) in causes {
                let _ = writeln!(
                    out,
                    "Doctor: root cause: {} is {}",
                    path.join(arrow),
                    paint(status, style)
                );
            }
        }
    }
    out
}

fn node(out: &mut String, r: &NodeResult, style: Style) {
    let _ = writeln!(
        out,
        "Doctor: {} is {}. {}",
        title(r),
        paint(r.status, style),
        status_advice(r.status)
    );
    let mut checks: Vec<_> = r.checks.iter().collect();
    checks.sort_by_key(|(d, _)| d.as_str());
    // One line per distinct piece of advice: checks failing for the same reason (one 401
    // answers authentication and protocol) are named together.
    let mut lines: Vec<(Vec<&str>, String)> = Vec::new();
    for (dim, check) in checks {
        if check.status == Status::Healthy {
            continue;
        }
        if let Some(advice) = check_advice(*dim, check) {
            match lines.iter_mut().find(|(_, a)| *a == advice) {
                Some((dims, _)) => dims.push(dim.as_str()),
                None => lines.push((vec![dim.as_str()], advice)),
            }
        }
    }
    for (dims, advice) in lines {
        let _ = writeln!(out, "  - {}: {advice}", dims.join(", "));
    }
    for d in &r.dependencies {
        node(out, d, style);
    }
}

/// Follows critical edges whose dependency failed down to the deepest failing nodes: each
/// is reported with the path of names from the top-level target. A dependency reached
/// only through optional edges is never a root cause (it cannot make its parent fail).
fn root_causes(r: &NodeResult, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Status)>) {
    let failing: Vec<&NodeResult> = r
        .dependencies
        .iter()
        .filter(|d| d.critical != Some(false) && !d.status.passed())
        .collect();
    if failing.is_empty() {
        if path.len() > 1 {
            out.push((path.clone(), r.status));
        }
        return;
    }
    for d in failing {
        path.push(label(d));
        root_causes(d, path, out);
        path.pop();
    }
}

/// A node in a root-cause path: its name, and its id when it has one.
fn label(r: &NodeResult) -> String {
    match &r.target.id {
        Some(id) => format!("{} [id={}]", clean(&r.target.name), clean(id)),
        None => clean(&r.target.name),
    }
}

/// The likely fix for one failed check: by the family of its reason.
pub fn check_advice(dim: Dimension, check: &Check) -> Option<String> {
    match check.reason {
        Some(Reason::Engine(note)) => engine::advice(note, dim, check),
        Some(Reason::Config(problem)) => config::advice(problem, check),
        Some(Reason::Network(failure)) => network::advice(failure, check),
        Some(Reason::Http(failure)) => Some(http::advice(failure, check)),
        Some(Reason::Mcp(failure)) => mcp::advice(failure, dim, check),
        Some(Reason::Process(failure)) => Some(process::advice(failure, check)),
        None => network::unexplained(check),
    }
}

/// An integer fact.
fn int(check: &Check, key: Key) -> Option<i64> {
    match check.evidence.get(key) {
        Some(Fact::Int(i)) => Some(*i),
        _ => None,
    }
}

/// A fact as text a person reads: our words as they are, configured names cleaned.
fn word(check: &Check, key: Key) -> Option<String> {
    match check.evidence.get(key) {
        Some(Fact::Word(w)) => Some((*w).to_string()),
        Some(Fact::Config(s)) => Some(clean(s)),
        Some(Fact::ConfigList(v)) => {
            Some(v.iter().map(|s| clean(s)).collect::<Vec<_>>().join(", "))
        }
        Some(Fact::Phrase(p)) => Some(p.render(&clean)),
        _ => None,
    }
}

/// A true boolean fact.
fn yes(check: &Check, key: Key) -> bool {
    check.evidence.get(key) == Some(&Fact::Bool(true))
}

/// The credential advice both adapters give for 401/403: the refused variable, or which
/// setting supplies one.
fn rejected_credential(check: &Check) -> String {
    let s = int(check, Key::HttpStatus).map_or("401/403".to_string(), |c| c.to_string());
    let on = mcp::on_method(check);
    match word(check, Key::CredentialEnv) {
        Some(env) => {
            format!("HTTP {s}{on}: the token in ${env} was rejected; check its value and scope")
        }
        None => format!(
            "HTTP {s}{on}: the endpoint requires credentials; set auth.bearer_env (--bearer-env for ping/doctor) to a variable holding a token"
        ),
    }
}

#[cfg(test)]
mod tests;
