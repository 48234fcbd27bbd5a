//! The v1 result document: what `--format json|yaml` prints and what the terminal renders.
//!
//! Key order follows the contract: `relationship`, `critical`, `target`, `status`,
//! `latency_ms`, `checks`, `dependencies`; a check is `code`, `status`, `message`, `steps`,
//! then our additive `evidence`. `latency_ms` is always present (a number or `null`). Our
//! additive `duration_ms`, the run's wall time, follows `spec_version` at the top level of
//! both forms (one result, or `results`), so a hanging server is visible even when its
//! reachability latency is small.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::contract::{Dimension, Status};
use crate::contract::{Relationship, TargetType};
use crate::result::{DiagnosticCode, Evidence, Fact, Key, Reason, Steps};

/// The contract version of the document.
pub const SPEC_VERSION: &str = "v1";

/// One check's entry under `checks`.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Diagnostic code, when classified (a function of `reason`).
    pub code: Option<DiagnosticCode>,
    /// Why it did not pass: what `doctor` reads (not part of the v1 document).
    pub reason: Option<Reason>,
    /// Status.
    pub status: Status,
    /// Canonical message (absent when HEALTHY).
    pub message: Option<String>,
    /// Transport stages.
    pub steps: Steps,
    /// Observed facts.
    pub evidence: Evidence,
}

impl Check {
    /// The contract's message for a failed check without a classified reason:
    /// `<STATUS> in <dimension>` (the Go reference's wording, which scripts may match).
    pub fn generic_message(status: Status, dim: Dimension) -> String {
        format!("{status} in {dim}")
    }

    /// Whether the message only restates the check's status and dimension, which a line that
    /// already shows both need not repeat.
    pub fn restates_status(&self, dim: Dimension) -> bool {
        self.message.as_deref() == Some(Check::generic_message(self.status, dim).as_str())
    }
}

/// Identity of a target as shown in results (never its endpoint).
#[derive(Clone, Debug, PartialEq)]
pub struct TargetInfo {
    /// Graph id, when configured.
    pub id: Option<String>,
    /// Display name.
    pub name: String,
    /// Type.
    pub kind: TargetType,
    /// Given on the command line (`ping`/`doctor <type> <endpoint>`), not in a file: advice
    /// then names flags instead of configuration keys. Not part of the document.
    pub adhoc: bool,
}

/// A target's result, with its dependencies' results nested.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeResult {
    /// Edge label (dependencies only, when configured).
    pub relationship: Option<Relationship>,
    /// Edge policy (present on every dependency entry).
    pub critical: Option<bool>,
    /// Who.
    pub target: TargetInfo,
    /// Overall status: own checks and dependency contributions.
    pub status: Status,
    /// Reachability latency in ms, when reachability passed.
    pub latency_ms: Option<f64>,
    /// Checks by dimension (sorted by name on output).
    pub checks: BTreeMap<Dimension, Check>,
    /// Dependencies in declaration order.
    pub dependencies: Vec<NodeResult>,
}

/// A whole document: one result, or a batch for two or more targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Top-level results in declaration order.
    pub results: Vec<NodeResult>,
    /// The run's wall time in ms (`None`: not measured, e.g. a document built in a test).
    pub duration_ms: Option<f64>,
}

impl Document {
    /// A document of `results`, its duration not measured.
    #[cfg(test)]
    pub fn new(results: Vec<NodeResult>) -> Document {
        Document {
            results,
            duration_ms: None,
        }
    }

    /// The worst top-level status (what the exit code reports).
    pub fn worst(&self) -> Status {
        Status::worst(self.results.iter().map(|r| r.status))
    }

    /// Applies `f` to every string that came from the configuration (names, evidence names
    /// and values) and `id` to every id — the hook for the single redaction pass. Messages
    /// are our own words and are left alone. Ids get their own function so that a redacted
    /// id still matches the id pattern.
    pub fn map_strings(&mut self, f: &dyn Fn(&str) -> String, id: &dyn Fn(&str) -> String) {
        fn walk(r: &mut NodeResult, f: &dyn Fn(&str) -> String, id_fn: &dyn Fn(&str) -> String) {
            r.target.name = f(&r.target.name);
            if let Some(id) = &mut r.target.id {
                *id = id_fn(id);
            }
            for check in r.checks.values_mut() {
                for (_, fact) in check.evidence.0.iter_mut() {
                    match fact {
                        Fact::Config(s) => *s = f(s),
                        Fact::ConfigList(v) => v.iter_mut().for_each(|s| *s = f(s)),
                        Fact::Phrase(p) => p.map_config(f),
                        _ => {}
                    }
                }
            }
            for d in &mut r.dependencies {
                walk(d, f, id_fn);
            }
        }
        for r in &mut self.results {
            walk(r, f, id);
        }
    }
}

impl Serialize for Document {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.results.as_slice() {
            [single] => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("spec_version", SPEC_VERSION)?;
                if let Some(ms) = self.duration_ms {
                    m.serialize_entry("duration_ms", &round_ms(ms))?;
                }
                single.serialize_fields(&mut m)?;
                m.end()
            }
            many => {
                let mut st = s.serialize_struct("Batch", 3)?;
                st.serialize_field("spec_version", SPEC_VERSION)?;
                if let Some(ms) = self.duration_ms {
                    st.serialize_field("duration_ms", &round_ms(ms))?;
                }
                st.serialize_field("results", many)?;
                st.end()
            }
        }
    }
}

impl NodeResult {
    fn serialize_fields<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
        if let Some(r) = self.relationship {
            m.serialize_entry("relationship", r.as_str())?;
        }
        if let Some(c) = self.critical {
            m.serialize_entry("critical", &c)?;
        }
        m.serialize_entry("target", &self.target)?;
        m.serialize_entry("status", self.status.as_str())?;
        m.serialize_entry("latency_ms", &self.latency_ms.map(round_ms))?;
        m.serialize_entry("checks", &ChecksMap(&self.checks))?;
        m.serialize_entry("dependencies", &self.dependencies)?;
        Ok(())
    }
}

impl Serialize for NodeResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        self.serialize_fields(&mut m)?;
        m.end()
    }
}

impl Serialize for TargetInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(id) = &self.id {
            m.serialize_entry("id", id)?;
        }
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("type", self.kind.as_str())?;
        m.end()
    }
}

struct ChecksMap<'a>(&'a BTreeMap<Dimension, Check>);

impl Serialize for ChecksMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut sorted: Vec<_> = self.0.iter().collect();
        sorted.sort_by_key(|(d, _)| d.as_str());
        let mut m = s.serialize_map(Some(sorted.len()))?;
        for (d, c) in sorted {
            m.serialize_entry(d.as_str(), c)?;
        }
        m.end()
    }
}

impl Serialize for Check {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(c) = self.code {
            m.serialize_entry("code", c.as_str())?;
        }
        m.serialize_entry("status", self.status.as_str())?;
        if let Some(msg) = &self.message {
            m.serialize_entry("message", msg)?;
        }
        if !self.steps.is_empty() {
            let steps: BTreeMap<&str, &str> = self
                .steps
                .0
                .iter()
                .map(|(st, status, _)| (st.as_str(), status.as_str()))
                .collect();
            m.serialize_entry("steps", &steps)?;
        }
        let evidence = evidence_with_stage_timings(self);
        if !evidence.is_empty() {
            m.serialize_entry("evidence", &EvidenceMap(&evidence))?;
        }
        m.end()
    }
}

/// The check's evidence plus `<stage>_ms` facts for every timed stage.
pub fn evidence_with_stage_timings(check: &Check) -> Evidence {
    let mut ev = check.evidence.clone();
    for (stage, _, ms) in &check.steps.0 {
        if let Some(ms) = ms {
            let key = match stage {
                crate::result::Stage::Dns => Key::DnsMs,
                crate::result::Stage::Tcp => Key::TcpMs,
                crate::result::Stage::Tls => Key::TlsMs,
                crate::result::Stage::Http => Key::HttpMs,
            };
            ev.set(key, Fact::Ms(*ms));
        }
    }
    ev
}

struct EvidenceMap<'a>(&'a Evidence);

impl Serialize for EvidenceMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.0.len()))?;
        for (k, fact) in &self.0.0 {
            let k = k.as_str();
            match fact {
                Fact::Int(i) => m.serialize_entry(k, i)?,
                Fact::Ms(ms) => m.serialize_entry(k, &round_ms(*ms))?,
                Fact::Bool(b) => m.serialize_entry(k, b)?,
                Fact::Word(w) => m.serialize_entry(k, w)?,
                Fact::Config(c) => m.serialize_entry(k, c)?,
                Fact::ConfigList(v) => m.serialize_entry(k, v)?,
                Fact::Phrase(p) => m.serialize_entry(k, &p.to_string())?,
                Fact::Revision(r) => m.serialize_entry(k, r.as_str())?,
            }
        }
        m.end()
    }
}

/// Milliseconds rounded to microsecond precision; non-finite values become 0.
pub fn round_ms(ms: f64) -> f64 {
    if ms.is_finite() && ms >= 0.0 {
        (ms * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, status: Status) -> NodeResult {
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
            checks: BTreeMap::new(),
            dependencies: vec![],
        }
    }

    #[test]
    fn single_document_shape_and_key_order() {
        let mut n = node("ping", Status::Unhealthy);
        n.latency_ms = Some(1.23456);
        n.checks.insert(
            Dimension::Protocol,
            Check {
                code: Some(DiagnosticCode::HttpStatus),
                reason: None,
                status: Status::Unhealthy,
                message: Some(DiagnosticCode::HttpStatus.message().into()),
                steps: Steps::default(),
                evidence: Evidence(vec![(Key::HttpStatus, Fact::Int(404))]),
            },
        );
        n.checks.insert(
            Dimension::Configuration,
            Check {
                code: None,
                reason: None,
                status: Status::Healthy,
                message: None,
                steps: Steps::default(),
                evidence: Evidence::default(),
            },
        );
        let doc = Document::new(vec![n]);
        let json = serde_json::to_string(&doc).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"spec_version":"v1","target":{"name":"ping","type":"http"},"status":"UNHEALTHY","latency_ms":1.235,"checks":{"configuration":{"status":"HEALTHY"},"protocol":{"code":"http_status","status":"UNHEALTHY","message":"HTTP status did not match expected status","evidence":{"http_status":404}}},"dependencies":[]}"#
        );
    }

    #[test]
    fn the_run_duration_is_top_level_in_both_forms() {
        let mut one = Document::new(vec![node("a", Status::Healthy)]);
        one.duration_ms = Some(12.34567);
        let v: serde_json::Value = serde_json::to_value(&one).unwrap_or_default();
        assert_eq!(v["duration_ms"], 12.346);
        let json = serde_json::to_string(&one).unwrap_or_default();
        assert!(
            json.starts_with(r#"{"spec_version":"v1","duration_ms":12.346,"target""#),
            "{json}"
        );
        let mut many = Document::new(vec![node("a", Status::Healthy), node("b", Status::Healthy)]);
        many.duration_ms = Some(1240.0);
        let json = serde_json::to_string(&many).unwrap_or_default();
        assert!(
            json.starts_with(r#"{"spec_version":"v1","duration_ms":1240.0,"results":["#),
            "{json}"
        );
    }

    #[test]
    fn batch_and_null_latency() {
        let doc = Document::new(vec![node("a", Status::Healthy), node("b", Status::Unknown)]);
        let v: serde_json::Value = serde_json::to_value(&doc).unwrap_or_default();
        assert_eq!(v["spec_version"], "v1");
        assert_eq!(v["results"][1]["status"], "UNKNOWN");
        assert!(v["results"][0]["latency_ms"].is_null());
        assert!(v["results"][0].get("latency_ms").is_some());
        assert_eq!(doc.worst(), Status::Unknown);
    }
}
