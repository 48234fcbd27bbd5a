//! Rendering a run: its [`Document`] as terminal text, JSON, YAML or one line per target, or
//! the run as OpenMetrics text ([`metrics`]), in the [`Format`] the command line chose, after
//! the single redaction pass.
//!
//! The document is validated before anything is rendered (contract §4): a document that
//! breaks the v1 rules is a tool failure (exit 6) with nothing on stdout, never a partial or
//! invalid document.

pub mod doctor;
pub mod line;
pub mod metrics;
pub mod progress;
pub mod redact;
pub mod terminal;
pub mod wrap;
pub mod yaml;

use crate::contract::Format;
use crate::result::document::{Document, NodeResult};

pub use redact::Redactor;

/// How the terminal renderer may decorate.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    /// ANSI colours.
    pub color: bool,
    /// Box-drawing characters (else ASCII).
    pub unicode: bool,
    /// The terminal's width in columns when stdout is a terminal: long lines are filled to it
    /// at word boundaries ([`wrap`]). `None` (a pipe, a file) leaves every line whole.
    pub width: Option<usize>,
}

/// Deepest dependency nesting a document may have: the configuration's bound (a top-level
/// result is depth 0).
pub const MAX_DEPTH: usize = 64;

/// Why a document cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// No result at all.
    Empty,
    /// A target name is empty or blank.
    BlankName,
    /// `latency_ms` is negative, NaN or infinite.
    Latency,
    /// Dependencies nest deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Serialization failed.
    Encoding,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Invalid::Empty => "it has no result",
            Invalid::BlankName => "a target name is blank",
            Invalid::Latency => "a latency is negative or not a finite number",
            Invalid::TooDeep => "dependencies nest deeper than 64 levels",
            Invalid::Encoding => "it could not be serialized",
        })
    }
}

/// The contract's output rules, checked before any byte is written. Statuses, dimensions,
/// types, codes and steps are closed enums, valid by construction; what remains is checked
/// here.
pub fn validate(doc: &Document) -> Result<(), Invalid> {
    fn node(r: &NodeResult, depth: usize) -> Result<(), Invalid> {
        if depth > MAX_DEPTH {
            return Err(Invalid::TooDeep);
        }
        if r.target.name.trim().is_empty() {
            return Err(Invalid::BlankName);
        }
        if r.latency_ms.is_some_and(|ms| !ms.is_finite() || ms < 0.0) {
            return Err(Invalid::Latency);
        }
        r.dependencies.iter().try_for_each(|d| node(d, depth + 1))
    }
    if doc.results.is_empty() {
        return Err(Invalid::Empty);
    }
    doc.results.iter().try_for_each(|r| node(r, 0))
}

/// Renders the document of one run (already redacted) in `format`, after [`validate`].
/// `doctor` adds advice (terminal only); `run` is when that run finished and how long it took,
/// which the OpenMetrics text reports.
pub fn render(
    doc: &Document,
    format: Format,
    style: Style,
    doctor: bool,
    run: metrics::LastRun,
) -> Result<String, Invalid> {
    validate(doc)?;
    match format {
        Format::Json => serde_json::to_string_pretty(doc)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|_| Invalid::Encoding),
        Format::Yaml => {
            let value = serde_json::to_value(doc).map_err(|_| Invalid::Encoding)?;
            Ok(yaml::render(&value))
        }
        Format::Line => Ok(line::render(doc)),
        Format::Terminal => {
            let mut out = terminal::render(doc, style);
            if doctor {
                out.push_str(&doctor::advise(doc, style));
            }
            Ok(out)
        }
        Format::OpenMetrics => {
            let runs = metrics::Runs {
                total: None,
                last: Some(run),
            };
            Ok(metrics::render(
                Some(doc),
                &runs,
                metrics::Dialect::OpenMetrics,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Status;
    use crate::output::terminal::tests::{edge, node};

    /// A chain of `levels` results below a top-level one.
    fn chain(levels: usize) -> Document {
        let mut r = node("leaf", Status::Healthy, vec![]);
        for i in 0..levels {
            r = node(&format!("n{i}"), Status::Healthy, vec![edge(r, None, true)]);
        }
        Document::new(vec![r])
    }

    fn every_format(doc: &Document) -> Vec<Result<String, Invalid>> {
        let run = metrics::LastRun::of(doc);
        Format::ALL
            .into_iter()
            .map(|f| render(doc, f, Style::default(), true, run))
            .collect()
    }

    #[test]
    fn depth_64_is_written_and_65_is_not() {
        assert!(every_format(&chain(64)).iter().all(Result::is_ok));
        for out in every_format(&chain(65)) {
            assert_eq!(out, Err(Invalid::TooDeep));
        }
    }

    #[test]
    fn invalid_documents_are_refused_in_every_format() {
        let mut blank = chain(0);
        blank.results[0].target.name = " ".into();
        let mut nan = chain(1);
        nan.results[0].dependencies[0].latency_ms = Some(f64::NAN);
        let mut negative = chain(0);
        negative.results[0].latency_ms = Some(-1.0);
        let mut infinite = chain(0);
        infinite.results[0].latency_ms = Some(f64::INFINITY);
        for (doc, why) in [
            (blank, Invalid::BlankName),
            (nan, Invalid::Latency),
            (negative, Invalid::Latency),
            (infinite, Invalid::Latency),
            (Document::new(vec![]), Invalid::Empty),
        ] {
            for out in every_format(&doc) {
                assert_eq!(out, Err(why));
            }
        }
        let mut zero = chain(0);
        zero.results[0].latency_ms = Some(0.0);
        assert!(every_format(&zero).iter().all(Result::is_ok));
    }
}
