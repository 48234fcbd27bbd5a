//! A run as Prometheus metrics: the text exposition format 0.0.4 (`serve`'s `/metrics`) and
//! OpenMetrics 1.0 (`check --format openmetrics`, for node_exporter's textfile collector).
//!
//! Both dialects carry the same families, in this order:
//!
//! * `agenthealth_target_status{target,status}`: per top-level target (its dependencies
//!   already aggregated into it), 1 for its current status and 0 for the five others, so an
//!   alert can select `status="UNHEALTHY"` without knowing the other values;
//! * `agenthealth_check_status{target,check,status}`: the same per check of those targets;
//! * `agenthealth_target_latency_seconds{target}`: the reachability latency (no sample while
//!   a target has none);
//! * `agenthealth_run_duration_seconds`, `agenthealth_last_run_timestamp_seconds`: the last
//!   completed run (no sample before the first);
//! * `agenthealth_runs_total`: completed runs, a counter — `serve`'s `/metrics` only. One
//!   run's output (`--format openmetrics`) has no counter: there it would always be 1, and
//!   no text holding a counter is both strict OpenMetrics and read intact by node_exporter's
//!   textfile collector (`promtool check metrics` wants HELP on the `_total` name, which
//!   OpenMetrics gives the family without `_total`; node_exporter then re-exports it
//!   untyped). A textfile's freshness is `agenthealth_last_run_timestamp_seconds`.
//!
//! Label values are target names from the configuration (after the redaction pass), check
//! names and statuses: fixed words. Never an endpoint, never server text. Two top-level
//! targets with one name are one label set: their worst status and largest latency (a
//! series must be unique within a scrape).

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::contract::{Dimension, Status};
use crate::result::document::{Document, NodeResult};

/// Which exposition format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// The Prometheus text format, version 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0 text: `# EOF` ends it.
    OpenMetrics,
}

impl Dialect {
    /// The `Content-Type` of a response in this dialect.
    pub fn content_type(self) -> &'static str {
        match self {
            Dialect::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Dialect::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The runs behind the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Runs {
    /// Runs completed so far, for `serve`; `None` for one run's output, which has no
    /// counter (see the module doc).
    pub total: Option<u64>,
    /// The last completed run, once there is one.
    pub last: Option<LastRun>,
}

/// When the last run finished and how long it took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LastRun {
    /// When it finished.
    pub finished_at: SystemTime,
    /// Its wall time.
    pub duration: Duration,
}

impl LastRun {
    /// The run that just produced `doc`: finished now, its wall time the document's own
    /// `duration_ms` (one clock for the document and the metrics).
    pub fn of(doc: &Document) -> LastRun {
        LastRun {
            finished_at: SystemTime::now(),
            duration: Duration::from_secs_f64(doc.duration_ms.unwrap_or(0.0).max(0.0) / 1000.0),
        }
    }
}

/// Every family name, in output order (the alert-rule examples are checked against it); the
/// last, the runs counter, only when [`Runs::total`] is known.
pub const FAMILIES: [&str; 6] = [
    "agenthealth_target_status",
    "agenthealth_check_status",
    "agenthealth_target_latency_seconds",
    "agenthealth_run_duration_seconds",
    "agenthealth_last_run_timestamp_seconds",
    "agenthealth_runs_total",
];

/// The answer to a `/probe`: `probe_success` (1 when the worst top-level status passed:
/// HEALTHY or DEGRADED, as `/ready` answers 200), `probe_duration_seconds` (the run's wall
/// time), then the families of the targets as [`render`] writes them (the run families stay on
/// `/metrics`: a counter of one probe means nothing). `doc` is already redacted. The
/// Prometheus text format.
pub fn render_probe(doc: &Document) -> String {
    let mut out = String::new();
    family(
        &mut out,
        "probe_success",
        "gauge",
        "1 when the target's status passed (HEALTHY or DEGRADED), else 0",
    );
    let passed = doc.worst().passed();
    line(
        &mut out,
        "probe_success",
        &[],
        if passed { "1" } else { "0" },
    );
    family(
        &mut out,
        "probe_duration_seconds",
        "gauge",
        "wall time of the probe's run",
    );
    let seconds = doc.duration_ms.unwrap_or(0.0) / 1000.0;
    line(&mut out, "probe_duration_seconds", &[], &number(seconds));
    targets(&mut out, &fold(doc));
    out
}

/// The metrics of `doc` (the last completed run's document, already redacted; `None`
/// before the first run) and `runs`.
pub fn render(doc: Option<&Document>, runs: &Runs, dialect: Dialect) -> String {
    let mut out = String::new();
    targets(&mut out, &doc.map(fold).unwrap_or_default());
    run(&mut out, runs);
    if dialect == Dialect::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// The families of the targets: each one's status, its checks' statuses and its latency.
fn targets(out: &mut String, targets: &[Folded]) {
    let [target_status, check_status, latency, ..] = FAMILIES;
    family(
        out,
        target_status,
        "gauge",
        "1 for the target's status in the last run, 0 for the other statuses",
    );
    for t in targets {
        for s in Status::ALL {
            sample(out, target_status, &[("target", &t.name)], s, t.status);
        }
    }
    family(
        out,
        check_status,
        "gauge",
        "1 for the check's status in the last run, 0 for the other statuses",
    );
    for t in targets {
        for (dim, status) in &t.checks {
            let labels = [("target", t.name.as_str()), ("check", dim.as_str())];
            for s in Status::ALL {
                sample(out, check_status, &labels, s, *status);
            }
        }
    }
    family(
        out,
        latency,
        "gauge",
        "reachability latency of the target in the last run",
    );
    for t in targets {
        if let Some(seconds) = t.latency {
            line(out, latency, &[("target", &t.name)], &number(seconds));
        }
    }
}

/// The families of the runs: the last one's wall time and end, and how many completed.
fn run(out: &mut String, runs: &Runs) {
    let [.., duration, timestamp, runs_total] = FAMILIES;
    family(out, duration, "gauge", "wall time of the last run");
    if let Some(last) = runs.last {
        line(out, duration, &[], &number(last.duration.as_secs_f64()));
    }
    family(
        out,
        timestamp,
        "gauge",
        "when the last run finished, seconds since the Unix epoch",
    );
    if let Some(last) = runs.last {
        let since = last
            .finished_at
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        line(out, timestamp, &[], &number(since.as_secs_f64()));
    }
    if let Some(total) = runs.total {
        family(out, runs_total, "counter", "health-check runs completed");
        line(out, runs_total, &[], &total.to_string());
    }
}

/// One label set of `agenthealth_target_status`: a top-level target name.
struct Folded {
    name: String,
    status: Status,
    checks: Vec<(Dimension, Status)>,
    latency: Option<f64>,
}

/// The top-level results by name, in declaration order; a repeated name folds into the
/// first (worst status per check and overall, largest latency).
fn fold(doc: &Document) -> Vec<Folded> {
    let mut out: Vec<Folded> = Vec::new();
    for r in &doc.results {
        let latency = r.latency_ms.map(|ms| ms / 1000.0);
        let at = match out.iter().position(|t| t.name == r.target.name) {
            Some(i) => i,
            None => {
                out.push(Folded {
                    name: r.target.name.clone(),
                    status: r.status,
                    checks: Vec::new(),
                    latency,
                });
                out.len() - 1
            }
        };
        merge(&mut out[at], r, latency);
    }
    out
}

fn merge(t: &mut Folded, r: &NodeResult, latency: Option<f64>) {
    t.status = t.status.max(r.status);
    t.latency = match (t.latency, latency) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    for (dim, check) in &r.checks {
        match t.checks.iter_mut().find(|(d, _)| d == dim) {
            Some((_, s)) => *s = (*s).max(check.status),
            None => t.checks.push((*dim, check.status)),
        }
    }
    t.checks.sort_by_key(|(d, _)| d.as_str());
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One series of a status family: `labels` plus `status`, 1 when it is `current`.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], status: Status, current: Status) {
    let mut all = labels.to_vec();
    all.push(("status", status.as_str()));
    line(out, name, &all, if status == current { "1" } else { "0" });
}

fn line(out: &mut String, name: &str, labels: &[(&str, &str)], value: &str) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape(v));
        }
        out.push('}');
    }
    out.push(' ');
    out.push_str(value);
    out.push('\n');
}

/// A label value as both formats quote it: backslash, double quote and line feed escaped.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A finite, non-negative number, shortest form (`0.0125`, `1e-7`: both formats read
/// exponents); never NaN, infinity or a negative. Written as JSON writes numbers, so the
/// binary carries one float formatter.
fn number(x: f64) -> String {
    serde_json::Number::from_f64(x)
        .filter(|_| x >= 0.0)
        .map_or_else(|| "0".into(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::terminal::tests::node;
    use crate::result::document::Check;
    use crate::result::{Evidence, Steps};

    fn check(status: Status) -> Check {
        Check {
            code: None,
            reason: None,
            status,
            message: None,
            steps: Steps::default(),
            evidence: Evidence::default(),
        }
    }

    fn target(name: &str, status: Status, latency_ms: Option<f64>) -> NodeResult {
        let mut r = node(name, status, vec![]);
        r.latency_ms = latency_ms;
        r.checks
            .insert(Dimension::Reachability, check(Status::Healthy));
        r.checks.insert(Dimension::Protocol, check(status));
        r
    }

    fn last() -> Runs {
        Runs {
            total: Some(3),
            last: Some(LastRun {
                finished_at: UNIX_EPOCH + Duration::from_millis(1_764_582_848_250),
                duration: Duration::from_micros(12_500),
            }),
        }
    }

    #[test]
    fn families_in_both_dialects() {
        let doc = Document::new(vec![target("search", Status::Unhealthy, Some(1.5))]);
        let text = render(Some(&doc), &last(), Dialect::Prometheus);
        for expected in [
            "# TYPE agenthealth_target_status gauge\n",
            "agenthealth_target_status{target=\"search\",status=\"HEALTHY\"} 0\n",
            "agenthealth_target_status{target=\"search\",status=\"UNHEALTHY\"} 1\n",
            "agenthealth_check_status{target=\"search\",check=\"protocol\",status=\"UNHEALTHY\"} 1\n",
            "agenthealth_check_status{target=\"search\",check=\"reachability\",status=\"HEALTHY\"} 1\n",
            "agenthealth_target_latency_seconds{target=\"search\"} 0.0015\n",
            "agenthealth_run_duration_seconds 0.0125\n",
            "agenthealth_last_run_timestamp_seconds 1764582848.25\n",
            "# TYPE agenthealth_runs_total counter\nagenthealth_runs_total 3\n",
        ] {
            assert!(text.contains(expected), "{expected}\n--- in\n{text}");
        }
        assert_eq!(text.matches("agenthealth_target_status{").count(), 6);
        assert_eq!(text.matches("agenthealth_check_status{").count(), 12);
        assert!(!text.contains("# EOF"));

        // One run's output: the same families without the counter, and `# EOF`.
        let one_run = Runs {
            total: None,
            ..last()
        };
        let om = render(Some(&doc), &one_run, Dialect::OpenMetrics);
        let cut = |t: &str| t[..t.find("# HELP agenthealth_runs").unwrap_or(0)].to_string();
        assert_eq!(format!("{}# EOF\n", cut(&text)), om);
        let families: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split(' ').next())
            .collect();
        assert_eq!(families, FAMILIES);
    }

    #[test]
    fn before_the_first_run_only_the_counter_has_a_sample() {
        let runs = Runs {
            total: Some(0),
            last: None,
        };
        let text = render(None, &runs, Dialect::Prometheus);
        let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(samples, ["agenthealth_runs_total 0"]);
    }

    #[test]
    fn label_values_are_escaped() {
        let doc = Document::new(vec![target("a\"b\\c\nd é", Status::Healthy, None)]);
        let text = render(Some(&doc), &last(), Dialect::Prometheus);
        assert!(
            text.contains("{target=\"a\\\"b\\\\c\\nd é\",status=\"HEALTHY\"} 1\n"),
            "{text}"
        );
        assert!(
            !text.contains("agenthealth_target_latency_seconds{"),
            "no latency"
        );
        assert!(text.lines().all(|l| !l.is_empty()));
    }

    #[test]
    fn a_repeated_name_is_one_label_set_with_the_worst_status() {
        let doc = Document::new(vec![
            target("x", Status::Healthy, Some(1.0)),
            target("y", Status::Healthy, None),
            target("x", Status::Unreachable, Some(4.0)),
        ]);
        let text = render(Some(&doc), &last(), Dialect::Prometheus);
        assert_eq!(
            text.matches("agenthealth_target_status{target=\"x\"")
                .count(),
            6
        );
        assert!(text.contains("{target=\"x\",status=\"UNREACHABLE\"} 1\n"));
        assert!(text.contains("{target=\"x\",check=\"protocol\",status=\"UNREACHABLE\"} 1\n"));
        assert!(text.contains("agenthealth_target_latency_seconds{target=\"x\"} 0.004\n"));
        let x = text.find("target=\"x\"").unwrap_or(usize::MAX);
        let y = text.find("target=\"y\"").unwrap_or(0);
        assert!(x < y, "declaration order");
    }

    #[test]
    fn numbers_are_finite_and_shortest() {
        assert_eq!(number(0.0125), "0.0125");
        assert_eq!(number(1_764_582_848.25), "1764582848.25");
        assert_eq!(number(1e-7), "1e-7");
        assert_eq!(number(0.0), "0.0");
        assert_eq!(number(f64::NAN), "0");
        assert_eq!(number(f64::INFINITY), "0");
        assert_eq!(number(-1.0), "0");
    }
}
