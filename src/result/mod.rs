//! The health model: what one check observed, why it failed, and the v1 document.
//!
//! Everything here is plain data. Adapters produce [`Observation`]s, the engine turns them
//! into [`Check`](document::Check)s and node results, and the output layer renders them.
//! Nothing in this module ever holds text that came from a server: messages are fixed
//! strings chosen by the [`Reason`], and [`Evidence`] only carries numbers, fixed words and
//! names from the configuration.
//!
//! * [`reason`]: why a check did not pass, one typed family per layer that can tell;
//! * [`diagnostic`]: the contract's diagnostic codes and their canonical messages;
//! * [`evidence`]: the registry of evidence keys ([`Key`]) and the facts they hold;
//! * [`document`]: the v1 result document;
//! * [`oauth_details`]: the one exception, server content `doctor --oauth-details` prints
//!   (never part of a document).

pub mod diagnostic;
pub mod document;
pub mod evidence;
pub mod oauth_details;
pub mod reason;

pub use diagnostic::DiagnosticCode;
pub use evidence::{Evidence, Fact, Key, Phrase, RevisionDate};
pub use reason::{Note, Reason};

use crate::contract::Status;

/// A transport stage of a network exchange, reported as a check's `steps`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Name resolution.
    Dns,
    /// TCP connect.
    Tcp,
    /// TLS handshake.
    Tls,
    /// HTTP request and response head.
    Http,
}

impl Stage {
    /// The result spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Dns => "dns",
            Stage::Tcp => "tcp",
            Stage::Tls => "tls",
            Stage::Http => "http",
        }
    }
}

/// The stages an exchange went through, each with its status and (when it completed) its
/// duration in milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps(pub Vec<(Stage, Status, Option<f64>)>);

impl Steps {
    /// Records (or replaces) a stage.
    pub fn set(&mut self, stage: Stage, status: Status, ms: Option<f64>) {
        match self.0.iter_mut().find(|(s, _, _)| *s == stage) {
            Some(entry) => *entry = (stage, status, ms),
            None => {
                self.0.push((stage, status, ms));
                self.0.sort_by_key(|(s, _, _)| *s);
            }
        }
    }

    /// True when no stage was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What one attempt of one dimension observed. Produced by adapters; classified, never printed
/// by them.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The classification.
    pub status: Status,
    /// Why it did not pass (absent when HEALTHY, and for the few failures nothing more
    /// specific is known about).
    pub reason: Option<Reason>,
    /// Transport stages.
    pub steps: Steps,
    /// Facts that explain the status.
    pub evidence: Evidence,
    /// Whether any response byte arrived during the attempt (decides UNREACHABLE vs UNKNOWN
    /// on a deadline, and whether a retry is allowed).
    pub response_seen: bool,
    /// For reachability: the latency to report, when the adapter measures it more precisely
    /// than the engine's wall clock around the attempt.
    pub latency: Option<std::time::Duration>,
}

impl Observation {
    /// An observation with a status and nothing else.
    pub fn new(status: Status) -> Observation {
        Observation {
            status,
            reason: None,
            steps: Steps::default(),
            evidence: Evidence::default(),
            response_seen: false,
            latency: None,
        }
    }

    /// HEALTHY.
    pub fn healthy() -> Observation {
        Observation::new(Status::Healthy)
    }

    /// A failure and why.
    pub fn failed(status: Status, reason: Reason) -> Observation {
        Observation {
            reason: Some(reason),
            ..Observation::new(status)
        }
    }

    /// UNKNOWN because this host ran out of `resource`: never the target's fault.
    pub fn local_resource(resource: crate::contract::LocalResource) -> Observation {
        Observation::failed(
            Status::Unknown,
            Reason::Engine(Note::LocalResource(resource)),
        )
        .with(Key::LocalResource, Fact::Word(resource.as_word()))
    }

    /// The diagnostic code the reason carries.
    pub fn code(&self) -> Option<DiagnosticCode> {
        self.reason.and_then(Reason::code)
    }

    /// Builder: adds a fact.
    pub fn with(mut self, key: Key, fact: Fact) -> Observation {
        self.evidence.set(key, fact);
        self
    }

    /// Builder: marks that a response was seen.
    pub fn responded(mut self) -> Observation {
        self.response_seen = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_keep_stage_order() {
        let mut steps = Steps::default();
        steps.set(Stage::Http, Status::Healthy, Some(1.0));
        steps.set(Stage::Dns, Status::Healthy, None);
        steps.set(Stage::Http, Status::Unknown, None);
        assert_eq!(
            steps.0,
            vec![
                (Stage::Dns, Status::Healthy, None),
                (Stage::Http, Status::Unknown, None)
            ]
        );
    }
}
