//! The terminal view: one line per target with its status, its reachability latency and (for
//! a single target) the run's wall time, each labelled; one line per check with its status,
//! message, the evidence that explains it and the transport stages; dependencies drawn as a
//! tree; for more than one target, a last summary line counting them by status.

use std::fmt::Write;

use crate::contract::{Dimension, Status};
use crate::output::{Style, wrap};
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Fact, Key};
use crate::text::clean;

/// Renders the whole document.
pub fn render(doc: &Document, style: Style) -> String {
    let mut out = String::new();
    // One target: its header carries the run's wall time; several: the summary line does.
    let run = match doc.results.len() {
        1 => doc.duration_ms,
        _ => None,
    };
    for (i, r) in doc.results.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        node(&mut out, r, "", "", style, run);
    }
    if doc.results.len() > 1 {
        out.push('\n');
        out.push_str(&summary(doc, style));
        out.push('\n');
    }
    out
}

/// `12 targets: 10 HEALTHY, 1 DEGRADED, 1 UNREACHABLE · 1.24 s`: the top-level results by
/// status, worst last, and the run's wall time.
pub fn summary(doc: &Document, style: Style) -> String {
    let counts: Vec<String> = Status::ALL
        .into_iter()
        .filter_map(|s| {
            let n = doc.results.iter().filter(|r| r.status == s).count();
            (n > 0).then(|| format!("{n} {}", paint(s, style)))
        })
        .collect();
    let mut line = format!("{} targets: {}", doc.results.len(), counts.join(", "));
    if let Some(ms) = doc.duration_ms {
        let _ = write!(line, "{}{}", separator(style), duration(ms));
    }
    line
}

/// A duration for a person: `0.42 ms`, `12.30 ms`, `1.24 s`.
pub fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// Between the items of a line: ` · `, or `; ` without UTF-8.
fn separator(style: Style) -> &'static str {
    if style.unicode { " · " } else { "; " }
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

fn node(
    out: &mut String,
    r: &NodeResult,
    line_prefix: &str,
    body_prefix: &str,
    style: Style,
    run_ms: Option<f64>,
) {
    let _ = write!(out, "{line_prefix}{}: {}", title(r), paint(r.status, style));
    let mut timings = Vec::new();
    if let Some(ms) = r.latency_ms {
        timings.push(format!("latency {}", duration(ms)));
    }
    if let Some(ms) = run_ms {
        timings.push(format!("run {}", duration(ms)));
    }
    if !timings.is_empty() {
        let _ = write!(out, "  {}", timings.join(separator(style)));
    }
    out.push('\n');
    let mut checks: Vec<_> = r.checks.iter().collect();
    // Facts shared by several checks (one MCP session serves them all) are shown once, on
    // the first check in execution order that carries them.
    checks.sort_by_key(|(d, _)| **d);
    let (tee, elbow, pipe, gap) = if style.unicode {
        ("├── ", "└── ", "│   ", "    ")
    } else {
        ("|-- ", "`-- ", "|   ", "    ")
    };
    // A node's check lines sit two columns in; when it has dependencies, its own rule runs
    // down beside them to its first child.
    let rule = match (r.dependencies.is_empty(), style.unicode) {
        (true, _) => "  ",
        (false, true) => "│ ",
        (false, false) => "| ",
    };
    let mut seen: Vec<(Key, &Fact)> = Vec::new();
    let mut lines: Vec<(&str, String)> = Vec::new();
    for (dim, check) in checks {
        let head = format!(
            "{body_prefix}{rule}{:<15}{}",
            dim.as_str(),
            pad_status(check.status, style)
        );
        let items = detail_items(*dim, check, &mut seen);
        let tree = format!("{body_prefix}{rule}");
        let line = check_line(&head, &items, &tree, style);
        lines.push((dim.as_str(), line));
    }
    lines.sort_by_key(|(name, _)| *name);
    for (_, line) in lines {
        out.push_str(&line);
        out.push('\n');
    }
    let n = r.dependencies.len();
    for (i, d) in r.dependencies.iter().enumerate() {
        let last = i + 1 == n;
        let line = format!("{body_prefix}{}", if last { elbow } else { tee });
        let body = format!("{body_prefix}{}", if last { gap } else { pipe });
        node(out, d, &line, &body, style, None);
    }
}

/// A check's line: `head` (the tree, the dimension and the status), then its detail items.
/// On a terminal of known width the items are filled to it; continuation lines hang under
/// the details, or a little past the tree's rule when the details start right of the middle.
fn check_line(head: &str, items: &[String], tree: &str, style: Style) -> String {
    match style.width {
        Some(width) if !items.is_empty() => {
            let lead = format!("{head}  ");
            let column = wrap::visible_width(&lead);
            let indent = if column <= width / 2 {
                column - wrap::visible_width(tree)
            } else {
                4
            };
            let hang = format!("{tree}{}", " ".repeat(indent));
            let hang_width = wrap::visible_width(&hang);
            wrap::fill(
                &lead,
                column,
                items,
                separator(style),
                width,
                (&hang, hang_width),
            )
        }
        _ if items.is_empty() => head.trim_end().to_string(),
        _ => format!("{head}  {}", items.join(separator(style))),
    }
}

fn pad_status(status: Status, style: Style) -> String {
    let width = 13usize.saturating_sub(status.as_str().len());
    format!("{}{}", paint(status, style), " ".repeat(width))
}

/// A check's details: the message (left out when it only restates the line's status and
/// dimension, `UNREACHABLE in reachability`), each fact not already in `seen`, the stages.
fn detail_items<'a>(
    dim: Dimension,
    check: &'a Check,
    seen: &mut Vec<(Key, &'a Fact)>,
) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = check
        .message
        .as_ref()
        .filter(|_| !check.restates_status(dim))
    {
        parts.push(clean(m));
    }
    for (k, fact) in &check.evidence.0 {
        if seen.iter().any(|(sk, sf)| sk == k && *sf == fact) {
            continue;
        }
        seen.push((*k, fact));
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
    parts
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
        Fact::Revision(r) => r.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::contract::Dimension;
    use crate::contract::{Relationship, TargetType};
    use crate::result::document::TargetInfo;
    use std::collections::BTreeMap;

    /// `name` with one check of `status`, and `deps`.
    pub(crate) fn node(name: &str, status: Status, deps: Vec<NodeResult>) -> NodeResult {
        let mut checks = BTreeMap::new();
        checks.insert(
            Dimension::Protocol,
            Check {
                code: None,
                reason: None,
                status,
                message: None,
                steps: Default::default(),
                evidence: Default::default(),
            },
        );
        NodeResult {
            relationship: None,
            critical: None,
            target: TargetInfo {
                id: None,
                name: name.into(),
                kind: TargetType::Http,
                adhoc: false,
            },
            status,
            latency_ms: None,
            checks,
            dependencies: deps,
        }
    }

    /// As a dependency: edge metadata and an id.
    pub(crate) fn edge(mut r: NodeResult, id: Option<&str>, critical: bool) -> NodeResult {
        r.critical = Some(critical);
        r.relationship = Some(Relationship::Downstream);
        r.target.id = id.map(str::to_string);
        r
    }

    fn sample() -> Document {
        let leaf = node("db", Status::Unreachable, vec![]);
        let mid = node(
            "gateway",
            Status::Unhealthy,
            vec![edge(leaf, Some("db"), true)],
        );
        let opt = node("search", Status::Healthy, vec![]);
        let root = node(
            "api",
            Status::Unhealthy,
            vec![edge(opt, None, false), edge(mid, Some("gw"), true)],
        );
        Document::new(vec![root])
    }

    #[test]
    fn a_tree_with_box_drawing_characters() {
        let style = Style {
            color: false,
            unicode: true,
            width: None,
        };
        let want = "\
api (http): UNHEALTHY
│ protocol       UNHEALTHY
├── [downstream] search [optional] (http): HEALTHY
│     protocol       HEALTHY
└── [downstream] gateway [id=gw] (http): UNHEALTHY
    │ protocol       UNHEALTHY
    └── [downstream] db [id=db] (http): UNREACHABLE
          protocol       UNREACHABLE
";
        assert_eq!(render(&sample(), style), want);
    }

    #[test]
    fn the_same_tree_in_ascii() {
        let style = Style {
            color: false,
            unicode: false,
            width: None,
        };
        let want = "\
api (http): UNHEALTHY
| protocol       UNHEALTHY
|-- [downstream] search [optional] (http): HEALTHY
|     protocol       HEALTHY
`-- [downstream] gateway [id=gw] (http): UNHEALTHY
    | protocol       UNHEALTHY
    `-- [downstream] db [id=db] (http): UNREACHABLE
          protocol       UNREACHABLE
";
        let text = render(&sample(), style);
        assert_eq!(text, want);
        assert!(text.is_ascii());
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let mut r = node("a\u{1b}[2Jb\u{9b}c\u{7f}", Status::Unhealthy, vec![]);
        r.target.id = Some("i\u{1b}d".into());
        if let Some(check) = r.checks.get_mut(&crate::contract::Dimension::Protocol) {
            check.message = Some("m\u{1b}]0;title\u{7}".into());
        }
        let text = render(
            &Document::new(vec![r]),
            Style {
                color: false,
                unicode: true,
                width: None,
            },
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.starts_with("a [2Jb c  [id=i d] (http)"), "{text:?}");
    }

    #[test]
    fn headers_label_latency_and_run_and_several_targets_end_with_a_summary() {
        let utf8 = Style {
            color: false,
            unicode: true,
            width: None,
        };
        let mut hang = node("hang", Status::Unreachable, vec![]);
        hang.latency_ms = Some(0.4);
        if let Some(c) = hang.checks.get_mut(&Dimension::Protocol) {
            c.message = Some(Check::generic_message(
                Status::Unreachable,
                Dimension::Protocol,
            ));
        }
        let mut one = Document::new(vec![hang.clone()]);
        one.duration_ms = Some(5012.0);
        assert_eq!(
            render(&one, utf8),
            "hang (http): UNREACHABLE  latency 0.40 ms · run 5.01 s\n  protocol       UNREACHABLE\n",
            "the message that restates the line is left out"
        );
        let mut many = Document::new(vec![
            node("a", Status::Healthy, vec![]),
            hang,
            node("b", Status::Healthy, vec![]),
        ]);
        many.duration_ms = Some(980.0);
        let text = render(&many, utf8);
        assert!(text.starts_with("a (http): HEALTHY\n"), "{text}");
        assert!(
            text.contains("hang (http): UNREACHABLE  latency 0.40 ms\n"),
            "{text}"
        );
        assert!(
            text.ends_with("\n\n3 targets: 2 HEALTHY, 1 UNREACHABLE · 980.00 ms\n"),
            "{text}"
        );
        let ascii = render(&many, Style::default());
        assert!(
            ascii.ends_with("3 targets: 2 HEALTHY, 1 UNREACHABLE; 980.00 ms\n"),
            "{ascii}"
        );
    }

    #[test]
    fn a_target_without_dependencies_has_no_rule() {
        let doc = Document::new(vec![node("ping", Status::Healthy, vec![])]);
        let text = render(&doc, Style::default());
        assert_eq!(text, "ping (http): HEALTHY\n  protocol       HEALTHY\n");
    }
}
