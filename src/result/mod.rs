//! The health model: statuses, dimensions, diagnostic codes and what one check observed.
//!
//! Everything here is plain data. Adapters produce [`Observation`]s, the engine turns them
//! into [`Check`]s and node results, and the output layer renders them. Nothing in this module
//! ever holds text that came from a server: messages are fixed strings chosen by [`Code`] or
//! [`Note`], and [`Evidence`] only carries numbers, fixed words and names from the
//! configuration.

pub mod document;

use std::fmt;

use crate::vocab::Status;

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

/// A diagnostic code: a classified failure with a fixed, canonical message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant's meaning is its message
pub enum Code {
    HttpStatus,
    HttpHeaders,
    HttpBody,
    HttpBodyLimit,
    HttpAuth,
    McpProcess,
    McpOauth,
    McpLogin,
    McpInput,
    McpAuth,
    McpHttp,
    McpProtocol,
    McpVersion,
    McpLimit,
    McpRpc,
    McpRequired,
    McpUnsafe,
    McpFunctional,
}

impl Code {
    /// The result spelling (`http_status`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::HttpStatus => "http_status",
            Code::HttpHeaders => "http_headers",
            Code::HttpBody => "http_body",
            Code::HttpBodyLimit => "http_body_limit",
            Code::HttpAuth => "http_auth",
            Code::McpProcess => "mcp_process",
            Code::McpOauth => "mcp_oauth",
            Code::McpLogin => "mcp_login",
            Code::McpInput => "mcp_input",
            Code::McpAuth => "mcp_auth",
            Code::McpHttp => "mcp_http",
            Code::McpProtocol => "mcp_protocol",
            Code::McpVersion => "mcp_version",
            Code::McpLimit => "mcp_limit",
            Code::McpRpc => "mcp_rpc",
            Code::McpRequired => "mcp_required",
            Code::McpUnsafe => "mcp_unsafe",
            Code::McpFunctional => "mcp_functional",
        }
    }

    /// Whether the code means the target refused our credentials (or their absence).
    pub fn rejects_credentials(self) -> bool {
        matches!(self, Code::HttpAuth | Code::McpAuth)
    }

    /// The canonical message shown for this code.
    pub fn message(self) -> &'static str {
        match self {
            Code::HttpStatus => "HTTP status did not match expected status",
            Code::HttpHeaders => "required HTTP response header did not match",
            Code::HttpBody => "HTTP response body did not contain required text",
            Code::HttpBodyLimit => "HTTP response body exceeded the configured size limit",
            Code::HttpAuth => "HTTP authentication rejected (401 or 403)",
            Code::McpProcess => "MCP subprocess could not start or exited before responding",
            Code::McpOauth => "MCP OAuth configuration, discovery or token acquisition failed",
            Code::McpLogin => "MCP OAuth login is required; use agenthealth login",
            Code::McpInput => "MCP response requires unsupported input or continuation",
            Code::McpAuth => "MCP authentication rejected (401 or 403)",
            Code::McpHttp => "MCP endpoint returned an unexpected HTTP status",
            Code::McpProtocol => "invalid MCP initialization or JSON-RPC response",
            Code::McpVersion => {
                "MCP protocol version is unsupported or differs from the pinned version"
            }
            Code::McpLimit => "MCP response or discovery exceeded safety limits",
            Code::McpRpc => "MCP server rejected the protocol request",
            Code::McpRequired => "required MCP tool, resource or prompt is missing",
            Code::McpUnsafe => {
                "functional tool lacks explicit read-only and non-destructive annotations"
            }
            Code::McpFunctional => "MCP functional invocation failed",
        }
    }
}

/// A fixed engine message for failures that carry no diagnostic code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {
    /// A referenced credential environment variable is unset or empty.
    CredentialMissing,
    /// The target type has no adapter.
    NoAdapter,
    /// A requested dimension is not implemented by the adapter.
    DimensionUnsupported,
    /// An active check was requested without its explicit opt-in.
    ActiveNotOptedIn,
    /// Measured latency is over the configured threshold (ms).
    LatencyExceeds(f64),
    /// The configuration check did not finish within its deadline.
    ConfigurationIncomplete,
    /// The deadline passed before any response byte.
    CommunicationFailed,
    /// The deadline passed after the response had started.
    IncompleteResponse,
    /// The run was cancelled (SIGINT/SIGTERM) while the check was in flight.
    Cancelled,
    /// The node's `budget_ms` ran out before the check could start.
    BudgetExhausted,
}

impl Note {
    /// The message text.
    pub fn message(&self) -> String {
        match self {
            Note::CredentialMissing => "credential environment variable is missing or empty".into(),
            Note::NoAdapter => "no adapter registered for target type".into(),
            Note::DimensionUnsupported => "requested dimension is not supported by adapter".into(),
            Note::ActiveNotOptedIn => "active check requires explicit opt-in".into(),
            Note::LatencyExceeds(t) => format!("latency exceeds threshold {t:.2}ms"),
            Note::ConfigurationIncomplete => "configuration check did not complete".into(),
            Note::CommunicationFailed => "communication failed".into(),
            Note::IncompleteResponse => "incomplete response".into(),
            Note::Cancelled => "check cancelled before it completed".into(),
            Note::BudgetExhausted => "node budget exhausted before the check could run".into(),
        }
    }
}

/// One observed fact. Values are numbers, fixed words chosen by our code, or names taken from
/// the configuration — never text received from a server, never a credential.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// A count or code (HTTP status, JSON-RPC error code, inventory size).
    Int(i64),
    /// A duration in milliseconds.
    Ms(f64),
    /// A yes/no observation.
    Bool(bool),
    /// A fixed word from our own vocabulary (`"sse"`, `"2025-06-18"` after validation, …).
    Word(&'static str),
    /// A name copied from the configuration (a required tool, an env var name).
    Config(String),
    /// Several names copied from the configuration.
    ConfigList(Vec<String>),
    /// A sentence of our own words around names from the configuration (a rule an argument
    /// broke, the failing path of a result). Its type admits nothing else.
    Phrase(Phrase),
}

/// One part of a [`Phrase`].
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Our own words.
    Word(&'static str),
    /// A name or value copied from the configuration (redacted like [`Fact::Config`]).
    Config(String),
    /// A number we derived ourselves (an array index, a count).
    Int(i64),
}

/// A sentence built only from our own words, our numbers and names from the configuration,
/// so evidence can explain a failure in prose without ever carrying text from a server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phrase(Vec<Piece>);

impl Phrase {
    /// An empty phrase.
    pub fn new() -> Phrase {
        Phrase::default()
    }

    /// Builder: appends our own words.
    pub fn word(mut self, word: &'static str) -> Phrase {
        self.0.push(Piece::Word(word));
        self
    }

    /// Builder: appends a name from the configuration.
    pub fn config(mut self, name: impl Into<String>) -> Phrase {
        self.0.push(Piece::Config(name.into()));
        self
    }

    /// Builder: appends a number.
    pub fn int(mut self, n: i64) -> Phrase {
        self.0.push(Piece::Int(n));
        self
    }

    /// Appends every piece of `other`.
    pub fn append(&mut self, other: Phrase) {
        self.0.extend(other.0);
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.0
    }

    /// The sentence, with each configuration name passed through `config` (cleaning,
    /// redaction) and everything else verbatim.
    pub fn render(&self, config: &dyn Fn(&str) -> String) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Word(w) => out.push_str(w),
                Piece::Config(s) => out.push_str(&config(s)),
                Piece::Int(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// Applies `f` to every configuration name (the redaction hook).
    pub fn map_config(&mut self, f: &dyn Fn(&str) -> String) {
        for piece in &mut self.0 {
            if let Piece::Config(s) = piece {
                *s = f(s);
            }
        }
    }
}

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&str::to_owned))
    }
}

/// Facts a check observed, in insertion order, keyed by fixed names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence(pub Vec<(&'static str, Fact)>);

impl Evidence {
    /// Records (or replaces) a fact.
    pub fn set(&mut self, key: &'static str, fact: Fact) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = fact,
            None => self.0.push((key, fact)),
        }
    }

    /// Looks a fact up.
    pub fn get(&self, key: &str) -> Option<&Fact> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, f)| f)
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every fact of `other`, replacing equal keys.
    pub fn extend(&mut self, other: &Evidence) {
        for (k, f) in &other.0 {
            self.set(k, f.clone());
        }
    }
}

/// What one attempt of one dimension observed. Produced by adapters; classified, never printed
/// by them.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The classification.
    pub status: Status,
    /// A diagnostic code with a canonical message, when the failure is classified.
    pub code: Option<Code>,
    /// An engine message, when the failure has no code.
    pub note: Option<Note>,
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
            code: None,
            note: None,
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

    /// A classified failure.
    pub fn coded(status: Status, code: Code) -> Observation {
        Observation {
            code: Some(code),
            ..Observation::new(status)
        }
    }

    /// A failure with an engine note.
    pub fn noted(status: Status, note: Note) -> Observation {
        Observation {
            note: Some(note),
            ..Observation::new(status)
        }
    }

    /// Builder: adds a fact.
    pub fn with(mut self, key: &'static str, fact: Fact) -> Observation {
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
    use crate::vocab::Dimension;

    #[test]
    fn status_order_follows_the_contract() {
        let mut v = Status::ALL.to_vec();
        v.reverse();
        v.sort();
        assert_eq!(v, Status::ALL.to_vec());
        assert_eq!(Status::worst([]), Status::Unknown);
        assert_eq!(
            Status::worst([Status::Healthy, Status::Unreachable, Status::Degraded]),
            Status::Unreachable
        );
        assert!(Status::Degraded.passed() && !Status::Unhealthy.passed());
    }

    #[test]
    fn dimensions_round_trip() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::parse(d.as_str()), Some(d));
        }
        assert_eq!(Dimension::parse("Latency"), None);
    }

    #[test]
    fn codes_are_valid_identifiers() {
        let all = [
            Code::HttpStatus,
            Code::HttpHeaders,
            Code::HttpBody,
            Code::HttpBodyLimit,
            Code::HttpAuth,
            Code::McpProcess,
            Code::McpOauth,
            Code::McpLogin,
            Code::McpInput,
            Code::McpAuth,
            Code::McpHttp,
            Code::McpProtocol,
            Code::McpVersion,
            Code::McpLimit,
            Code::McpRpc,
            Code::McpRequired,
            Code::McpUnsafe,
            Code::McpFunctional,
        ];
        for c in all {
            let s = c.as_str();
            assert!(s.len() <= 64 && s.starts_with(|ch: char| ch.is_ascii_lowercase()));
            assert!(
                s.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            );
            assert!(!c.message().is_empty());
        }
    }

    #[test]
    fn phrases_render_words_numbers_and_config_names() {
        let mut p = Phrase::new()
            .word("argument `")
            .config("a\u{1b}b")
            .word("[");
        p.append(Phrase::new().int(2).word("]`"));
        assert_eq!(p.to_string(), "argument `a\u{1b}b[2]`");
        assert_eq!(
            p.render(&|s: &str| s.replace('\u{1b}', " ")),
            "argument `a b[2]`"
        );
        p.map_config(&|_: &str| "[REDACTED]".to_owned());
        assert_eq!(p.to_string(), "argument `[REDACTED][2]`");
        assert_eq!(p.pieces().len(), 5);
    }

    #[test]
    fn latency_note_has_two_decimals() {
        assert_eq!(
            Note::LatencyExceeds(1000.0).message(),
            "latency exceeds threshold 1000.00ms"
        );
    }
}
