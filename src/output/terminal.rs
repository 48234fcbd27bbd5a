//! The terminal view: one line per target with status and latency, one line per check with
//! its status, message, the evidence that explains it and the transport stages; dependencies
//! drawn as a tree.

use std::fmt::Write;

use crate::output::Style;
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Fact, Status};

/// Renders the whole document.
pub fn render(doc: &Document, style: Style) -> String {
    let mut out = String::new();
    for (i, r) in doc.results.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        node(&mut out, r, "", "", style);
    }
    out
}

/// The ANSI colour of a status.
pub fn paint(status: Status, style: Style) -> String {
    if !style.color {
        return status.as_str().to_string();
    }
    let code = match status {
        Status::Healthy => "32",
        Status::Degraded => "33",
        Status::Unhealthy | Status::Unreachable => "31",
        Status::Misconfigured => "35",
        Status::Unknown => "36",
    };
    format!("\x1b[1;{code}m{}\x1b[0m", status.as_str())
}

/// Replaces control characters (C0, DEL, C1) with spaces.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `[rel] name [id=…] [optional] (type)`.
pub fn title(r: &NodeResult) -> String {
    let mut t = String::new();
    if let Some(rel) = r.relationship {
        let _ = write!(t, "[{}] ", rel.as_str());
    }
    t.push_str(&clean(&r.target.name));
    if let Some(id) = &r.target.id {
        let _ = write!(t, " [id={}]", clean(id));
    }
    if r.critical == Some(false) {
        t.push_str(" [optional]");
    }
    let _ = write!(t, " ({})", r.target.kind);
    t
}

fn node(out: &mut String, r: &NodeResult, line_prefix: &str, body_prefix: &str, style: Style) {
    let _ = write!(out, "{line_prefix}{}: {}", title(r), paint(r.status, style));
    if let Some(ms) = r.latency_ms {
        let _ = write!(out, "  {ms:.2} ms");
    }
    out.push('\n');
    let mut checks: Vec<_> = r.checks.iter().collect();
    // Facts shared by several checks (one MCP session serves them all) are shown once, on
    // the first check in execution order that carries them.
    checks.sort_by_key(|(d, _)| **d);
    let mut seen: Vec<(&str, &Fact)> = Vec::new();
    let mut lines: Vec<(&str, String)> = Vec::new();
    for (dim, check) in checks {
        let mut line = format!(
            "{body_prefix}  {:<15}{}",
            dim.as_str(),
            pad_status(check.status, style)
        );
        let details = details(check, &mut seen, style);
        if !details.is_empty() {
            let _ = write!(line, "  {details}");
        }
        lines.push((dim.as_str(), line.trim_end().to_string()));
    }
    lines.sort_by_key(|(name, _)| *name);
    for (_, line) in lines {
        out.push_str(&line);
        out.push('\n');
    }
    let (tee, elbow, pipe, gap) = if style.unicode {
        ("├── ", "└── ", "│   ", "    ")
    } else {
        ("|-- ", "`-- ", "|   ", "    ")
    };
    let n = r.dependencies.len();
    for (i, d) in r.dependencies.iter().enumerate() {
        let last = i + 1 == n;
        let line = format!("{body_prefix}{}", if last { elbow } else { tee });
        let body = format!("{body_prefix}{}", if last { gap } else { pipe });
        node(out, d, &line, &body, style);
    }
}

fn pad_status(status: Status, style: Style) -> String {
    let width = 13usize.saturating_sub(status.as_str().len());
    format!("{}{}", paint(status, style), " ".repeat(width))
}

/// Message, evidence (facts not already in `seen`) and stages of a check, on one line.
pub fn details<'a>(check: &'a Check, seen: &mut Vec<(&'a str, &'a Fact)>, style: Style) -> String {
    let sep = if style.unicode { " · " } else { "; " };
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = &check.message {
        parts.push(clean(m));
    }
    for (k, fact) in &check.evidence.0 {
        if seen.iter().any(|(sk, sf)| sk == k && *sf == fact) {
            continue;
        }
        seen.push((k, fact));
        parts.push(format!("{k}={}", fact_text(fact)));
    }
    let stages: Vec<String> = check
        .steps
        .0
        .iter()
        .map(|(stage, status, ms)| match (status, ms) {
            (Status::Healthy, Some(ms)) => format!("{} {ms:.2}ms", stage.as_str()),
            (Status::Healthy, None) => stage.as_str().to_string(),
            (s, _) => format!("{} {}", stage.as_str(), s.as_str()),
        })
        .collect();
    if !stages.is_empty() {
        parts.push(stages.join(" "));
    }
    parts.join(sep)
}

/// A fact as short text.
pub fn fact_text(fact: &Fact) -> String {
    match fact {
        Fact::Int(i) => i.to_string(),
        Fact::Ms(ms) => format!("{ms:.2}ms"),
        Fact::Bool(b) => b.to_string(),
        Fact::Word(w) => (*w).to_string(),
        Fact::Config(s) => clean(s),
        Fact::ConfigList(v) => v.iter().map(|s| clean(s)).collect::<Vec<_>>().join(","),
        Fact::Phrase(p) => p.render(&clean),
    }
}
