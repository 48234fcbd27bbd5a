//! Test support: a scripted transport (no sockets) and target builders.
//!
//! A [`Scripted`] transport hands every message to a closure playing the server and logs
//! what was sent, so tests assert both the outcome and the exact request sequence.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use serde_json::value::RawValue;

use super::McpRun;
use super::era::Era;
use super::transport::{Outgoing, Probe, Reply, ResponseMode, Transport, TransportError};
use crate::config::McpTransport;
use crate::config::{McpOptions, Target};
use crate::contract::Bound;
use crate::contract::TargetType;
use crate::result::Steps;
use crate::run_plan::{Credential, TargetPlan};
use crate::runtime::Attempt;
use crate::runtime::Deadline;

/// How a logged message was framed: its era.
pub type Frame = Era;

/// One message the adapter sent.
#[derive(Clone, Debug)]
pub struct Sent {
    pub method: String,
    pub id: Option<u64>,
    pub frame: Frame,
    pub body: Value,
    /// The exact bytes sent.
    pub raw: String,
    /// `Mcp-Name` as handed to the transport (modern framing only; not yet encoded).
    pub name: Option<String>,
    /// `Mcp-Param-*` pairs as handed to the transport (modern framing only; encoded values).
    pub params: Vec<(String, String)>,
}

impl Sent {
    /// The request's params.
    pub fn params(&self) -> &Value {
        &self.body["params"]
    }
}

/// The server's answer to one message: a result's JSON text (ignored for notifications), or
/// a transport failure.
pub type ScriptedReply = Result<String, TransportError>;

type Server = Box<dyn FnMut(&Sent) -> ScriptedReply + Send>;

/// What the scripted transport saw.
#[derive(Default)]
pub struct Log {
    pub sent: Vec<Sent>,
    pub probes: usize,
    pub discards: usize,
    pub closes: Vec<Duration>,
}

/// A transport whose server is a closure.
pub struct Scripted {
    server: Server,
    log: Arc<Mutex<Log>>,
    kind: McpTransport,
    mode: ResponseMode,
    session_issued: bool,
}

impl Scripted {
    /// An HTTP-like scripted transport answering JSON, without session ids.
    pub fn new(server: impl FnMut(&Sent) -> ScriptedReply + Send + 'static) -> Scripted {
        Scripted {
            server: Box::new(server),
            log: Arc::default(),
            kind: McpTransport::Http,
            mode: ResponseMode::Json,
            session_issued: false,
        }
    }

    /// Pretends to be a stdio transport (no probe, stdio fallback rule).
    pub fn stdio(mut self) -> Scripted {
        self.kind = McpTransport::Stdio;
        self
    }

    /// Answers as an event stream.
    pub fn sse(mut self) -> Scripted {
        self.mode = ResponseMode::Sse;
        self
    }

    /// Reports a session id on `initialize`.
    pub fn with_session_id(mut self) -> Scripted {
        self.session_issued = true;
        self
    }

    /// A handle on the log.
    pub fn log(&self) -> Arc<Mutex<Log>> {
        Arc::clone(&self.log)
    }

    fn record(&mut self, out: &Outgoing<'_>) -> Sent {
        let frame = out.era;
        let name = out.mirror.name.map(str::to_owned);
        let params = out.mirror.params.to_vec();
        let sent = Sent {
            method: out.method.to_owned(),
            id: out.id,
            frame,
            body: serde_json::from_slice(out.body).expect("we send json"),
            raw: String::from_utf8_lossy(out.body).into_owned(),
            name,
            params,
        };
        lock(&self.log).sent.push(sent.clone());
        sent
    }
}

impl Transport for Scripted {
    fn kind(&self) -> McpTransport {
        self.kind
    }

    fn probe(&mut self, attempt: &Attempt) -> Option<Result<Probe, TransportError>> {
        if self.kind == McpTransport::Stdio {
            return None;
        }
        lock(&self.log).probes += 1;
        attempt.mark_response();
        Some(Ok(Probe {
            latency: Duration::from_micros(250),
            steps: Steps::default(),
            status: 405,
        }))
    }

    fn request(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        let sent = self.record(out);
        let answer = (self.server)(&sent);
        if answer
            .as_ref()
            .err()
            .is_none_or(TransportError::response_seen)
        {
            attempt.mark_response();
        }
        let text = answer?;
        Ok(Reply {
            result: RawValue::from_string(text).expect("scripted result is json"),
            mode: self.mode,
            session_issued: self.session_issued && out.method == "initialize",
        })
    }

    fn notify(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        let sent = self.record(out);
        let answer = (self.server)(&sent);
        attempt.mark_response();
        answer.map(drop)
    }

    fn discard(&mut self) {
        lock(&self.log).discards += 1;
    }

    fn close(&mut self, attempt: &Attempt) {
        lock(&self.log).closes.push(attempt.remaining());
    }
}

/// The crate's poison-tolerant lock, for the logs (a failed test thread must not cascade).
pub use crate::runtime::sync::lock;

/// An `mcp` target at a loopback endpoint with these options.
pub fn target(options: McpOptions) -> Target {
    Target {
        id: None,
        name: "t".into(),
        kind: TargetType::Mcp,
        endpoint: "http://127.0.0.1:9/mcp".into(),
        checks: None,
        latency_threshold_ms: None,
        timeout_ms: 5_000,
        check_timeouts_ms: Vec::new(),
        retries: 0,
        retry_delay_ms: 100,
        budget_ms: None,
        bearer_env: None,
        dependencies: Vec::new(),
        http: None,
        mcp: Some(options),
        allow: None,
        path: "targets[0]".into(),
        origin: crate::config::Origin::File,
    }
}

/// A plan for `target` without credentials.
pub fn context(target: Target) -> Arc<TargetPlan> {
    Arc::new(TargetPlan {
        target: Arc::new(target),
        credential: Credential::None,
        child_env: Vec::new(),
        missing_env: Vec::new(),
        secrets: crate::runtime::SecretLog::new(),
    })
}

/// A run over a scripted transport.
pub fn run(options: McpOptions, transport: Scripted) -> McpRun {
    McpRun::new(context(target(options)), Some(Box::new(transport)))
}

/// An attempt with a generous deadline.
pub fn attempt() -> Attempt {
    Attempt::new(Deadline::new(
        Instant::now() + Duration::from_secs(5),
        Bound::TimeoutMs,
    ))
}

/// The methods sent, in order.
pub fn methods(log: &Mutex<Log>) -> Vec<String> {
    lock(log).sent.iter().map(|s| s.method.clone()).collect()
}

/// A small xorshift64 generator, so the garbage (no-panic) tests need no extra crates.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    /// The next pseudo-random number.
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
