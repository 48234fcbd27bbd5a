//! `--format line`: one line per top-level target, `name STATUS[ code][ · reason]`, for a
//! Kubernetes exec probe (the kubelet keeps 10 KiB of a probe's output as its message) and
//! for logs.
//!
//! The line names the check that decided the status: the worst one, the first in execution
//! order on a tie. Its code is the diagnostic code (`mcp_rpc`), or the network failure's word
//! (`connect_refused`) when it has none; its reason is the canonical message, or the
//! dimension when the message would only restate the status. A target failing only through a
//! dependency names that dependency. Every line is at most [`MAX_LINE`] characters and the
//! whole output at most [`MAX_OUTPUT`] bytes; what does not fit is counted in a last line.

use std::fmt::Write;

use crate::contract::{Dimension, Status};
use crate::result::document::{Document, NodeResult};
use crate::result::{Fact, Key};
use crate::text::clean;

/// Longest line, in characters (a longer one ends in `…`).
pub const MAX_LINE: usize = 200;

/// Most bytes of the whole output: within a Kubernetes probe message (10 KiB).
pub const MAX_OUTPUT: usize = 10 * 1024;

/// The lines of `doc`.
pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    for (i, r) in doc.results.iter().enumerate() {
        let line = bounded(&line(r));
        let left = doc.results.len() - i - 1;
        // Room for this line, and for the count of the rest if any are left after it.
        let reserve = if left > 0 { 32 } else { 0 };
        if out.len() + line.len() + 1 + reserve > MAX_OUTPUT {
            let _ = writeln!(out, "… {} more targets", left + 1);
            break;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `name STATUS[ code][ · reason]` of one target.
fn line(r: &NodeResult) -> String {
    let mut line = format!("{} {}", clean(&r.target.name), r.status);
    if r.status == Status::Healthy {
        return line;
    }
    let worst = r
        .checks
        .iter()
        .filter(|(d, _)| **d != Dimension::Dependency)
        .max_by(|(da, a), (db, b)| a.status.cmp(&b.status).then(db.cmp(da)));
    match worst {
        Some((dim, check)) if check.status == r.status => {
            let code = check
                .code
                .map(|c| c.as_str())
                .or(match check.evidence.get(Key::Failure) {
                    Some(Fact::Word(w)) => Some(*w),
                    _ => None,
                });
            if let Some(code) = code {
                let _ = write!(line, " {code}");
            }
            let reason = match &check.message {
                Some(m) if !check.restates_status(*dim) => clean(m),
                _ => dim.as_str().to_string(),
            };
            let _ = write!(line, " · {reason}");
        }
        _ => {
            // The status came from a dependency: name the first one that failed.
            let failing = r
                .dependencies
                .iter()
                .filter(|d| !d.status.passed())
                .max_by_key(|d| (d.critical != Some(false), d.status));
            if let Some(d) = failing {
                let _ = write!(
                    line,
                    " · dependency {} is {}",
                    clean(&d.target.name),
                    d.status
                );
            }
        }
    }
    line
}

/// `line`, cut to [`MAX_LINE`] characters with a final `…`.
fn bounded(line: &str) -> String {
    if line.chars().count() <= MAX_LINE {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(MAX_LINE - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::terminal::tests::{edge, node};
    use crate::result::DiagnosticCode;
    use crate::result::document::Check;

    fn failed(
        status: Status,
        code: Option<DiagnosticCode>,
        message: &str,
        facts: &[(Key, Fact)],
    ) -> Check {
        Check {
            code,
            reason: None,
            status,
            message: Some(message.into()),
            steps: Default::default(),
            evidence: crate::result::Evidence(facts.to_vec()),
        }
    }

    #[test]
    fn one_line_per_target_naming_what_decided() {
        let ok = node("api", Status::Healthy, vec![]);
        let mut rpc = node("notes", Status::Unhealthy, vec![]);
        rpc.checks.insert(
            Dimension::Protocol,
            failed(
                Status::Unhealthy,
                Some(DiagnosticCode::McpRpc),
                DiagnosticCode::McpRpc.message(),
                &[],
            ),
        );
        let mut down = node("down", Status::Unreachable, vec![]);
        down.checks.clear();
        down.checks.insert(
            Dimension::Reachability,
            failed(
                Status::Unreachable,
                None,
                "UNREACHABLE in reachability",
                &[(Key::Failure, Fact::Word("connect_refused"))],
            ),
        );
        let db = node("db", Status::Unreachable, vec![]);
        let mut parent = node("gw", Status::Unhealthy, vec![edge(db, None, true)]);
        parent.checks.clear();
        let doc = Document::new(vec![ok, rpc, down, parent]);
        assert_eq!(
            render(&doc),
            "api HEALTHY\n\
             notes UNHEALTHY mcp_rpc · MCP server rejected the protocol request\n\
             down UNREACHABLE connect_refused · reachability\n\
             gw UNHEALTHY · dependency db is UNREACHABLE\n"
        );
    }

    #[test]
    fn lines_and_output_are_bounded() {
        let long = node(&"n".repeat(500), Status::Healthy, vec![]);
        let text = render(&Document::new(vec![long]));
        assert_eq!(text.trim_end().chars().count(), MAX_LINE);
        assert!(text.trim_end().ends_with('…'));
        let many: Vec<NodeResult> = (0..1000)
            .map(|i| {
                node(
                    &format!("target-{i:04}-{}", "x".repeat(40)),
                    Status::Healthy,
                    vec![],
                )
            })
            .collect();
        let text = render(&Document::new(many));
        assert!(text.len() <= MAX_OUTPUT, "{}", text.len());
        let last = text.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("… ") && last.ends_with(" more targets"),
            "{last}"
        );
        let shown = text.lines().count() - 1;
        assert_eq!(last, format!("… {} more targets", 1000 - shown));
    }

    #[test]
    fn control_characters_never_reach_the_line() {
        let r = node("a\u{1b}[2Jb", Status::Healthy, vec![]);
        let text = render(&Document::new(vec![r]));
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
    }
}
