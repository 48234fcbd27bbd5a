//! The MCP adapter: is this MCP server healthy, and if not, why?
//!
//! The flow of one target run, in order:
//!
//! 1. **configuration** — the pin must name a supported revision ([`era::handshake_plan`])
//!    and the endpoint must be an `http(s)` URL, or for `transport: stdio` a `stdio://name` whose
//!    command resolves to an executable ([`transport::stdio::prepare`]); all checked before
//!    any traffic or process.
//! 2. **reachability** — the transport's probe (HTTP: `HEAD`; any status is connectivity
//!    evidence and its round trip is the latency). A transport without a probe (stdio) times
//!    session establishment instead, process start-up included.
//! 3. **authentication**, **protocol** — the session is established once per run and shared:
//!    unpinned, `server/discover` at 2026-07-28 first ([`discover`]); a legacy rejection
//!    ([`era::after_discover`]) leads to `initialize` offering 2025-11-25 ([`initialize`]);
//!    a legacy pin goes straight to `initialize`, a modern pin never falls back. A failure
//!    that received a response is remembered and repeated to later dimensions; so is a
//!    request of any dimension that timed out with nothing received (`shared_timeout`): no
//!    dimension waits a second whole deadline on a silent session or process.
//! 4. **capability** — every advertised inventory is listed once ([`inventory`]) and the
//!    configured requirements are matched against it.
//! 5. **functional** — only when listed explicitly: on the same session and the cached
//!    [`inventory::Inventory`], one safe `tools/call` with schema-checked arguments, its result
//!    checked against the protocol, the tool's `outputSchema` and the operator's expectations
//!    ([`functional`], [`expect`]). Never retried, never repeated.
//!
//! An attempt that ends at its deadline or is aborted is discarded with its session (and
//! process), whether the engine or the transport noticed first; so is a session that failed
//! to establish without receiving anything (a retry starts afresh). The end of the run closes
//! the transport (legacy HTTP: best-effort `DELETE`; stdio: stdin closed, short grace, then
//! the process group terminated).
//!
//! # Evidence
//!
//! Only numbers, our own words and names from the configuration — never server text. Every
//! key is declared once, with its meaning, in [`crate::result::Key`]; `docs/mcp.md` lists
//! when each appears (a test keeps the two in step). Failures carry a typed
//! [`crate::result::Reason`] (built in [`failure`]), which `doctor` reads.

pub mod discover;
pub mod era;
pub mod expect;
pub mod failure;
pub mod functional;
pub mod initialize;
pub mod inventory;
pub mod jsonrpc;
pub mod param_headers;
pub mod result_shape;
pub mod schema;
pub mod session;
pub mod sse;
pub mod transport;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant, SystemTime};

use crate::contract::Revision;
use era::{AfterDiscover, Era, HandshakePlan};
use failure::McpError;
use inventory::{Advertised, Inventory};
use session::Session;
use transport::Transport;
use transport::streamable_http::HttpTransport;

use crate::result::Key;
use std::sync::Arc;

use crate::adapter::{Adapter, TargetRun};
use crate::run_plan::TargetPlan;

use crate::config::{McpOptions, McpTransport};
use crate::contract::Bound;
use crate::contract::OAuthGrant;
use crate::contract::{Dimension, Status};
use crate::result::reason::{McpFailure, Misconfig, Note, Reason};
use crate::result::{Evidence, Fact, Observation};
use crate::runtime::Attempt;

/// The adapter for `mcp` targets.
pub struct McpAdapter;

impl Adapter for McpAdapter {
    fn dimensions(&self) -> &'static [Dimension] {
        &[
            Dimension::Reachability,
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Capability,
            Dimension::Functional,
        ]
    }

    fn start(&self, ctx: Arc<TargetPlan>) -> Box<dyn TargetRun> {
        Box::new(McpRun::new(ctx, None))
    }
}

/// Options of a target without an `mcp` section.
static NO_OPTIONS: McpOptions = McpOptions {
    transport: McpTransport::Http,
    protocol_version: None,
    required_tools: Vec::new(),
    required_resources: Vec::new(),
    required_prompts: Vec::new(),
    functional: None,
    stdio: None,
    oauth: None,
};

/// What the run knows about its session.
enum State {
    /// Nothing established yet (or discarded).
    Fresh,
    /// Established.
    Ready(Ready),
    /// Establishment failed after a response: later dimensions get the same observation.
    Failed(Observation),
}

/// An established session.
#[derive(Clone)]
struct Ready {
    era: Era,
    advertised: Advertised,
    evidence: Evidence,
}

/// A request of this run that timed out with nothing received: the session (or process)
/// it waited on did not answer within a whole deadline, and later dimensions report that
/// instead of waiting a deadline of their own on it.
#[derive(Clone, Copy, Debug)]
struct Silence {
    /// The dimension whose attempt timed out.
    dim: Dimension,
    /// The bound that set that attempt's deadline.
    bound: Bound,
    /// How long that attempt had.
    allowed: Duration,
}

impl Silence {
    /// The outcome a later dimension reports: the same deadline failure, naming the check
    /// that met it.
    fn observe(self) -> Observation {
        Observation::failed(
            Status::Unreachable,
            Reason::Engine(Note::TimedOut {
                bound: self.bound,
                response_seen: false,
            }),
        )
        .with(Key::SharedTimeout, Fact::Word(self.dim.as_str()))
        .with(
            Key::DeadlineMs,
            Fact::Ms(self.allowed.as_secs_f64() * 1000.0),
        )
    }
}

/// One MCP target's run: its session, shared by every dimension.
pub struct McpRun {
    ctx: Arc<TargetPlan>,
    plan: Option<HandshakePlan>,
    session: Option<Session>,
    state: State,
    inventory: Option<Inventory>,
    /// A silent timeout met by an earlier dimension (survives [`TargetRun::discard`]).
    silence: Option<Silence>,
}

impl McpRun {
    /// A run over `transport`, or over the transport the configuration names when `None`.
    fn new(ctx: Arc<TargetPlan>, transport: Option<Box<dyn Transport>>) -> McpRun {
        let mut run = McpRun {
            ctx,
            plan: None,
            session: None,
            state: State::Fresh,
            inventory: None,
            silence: None,
        };
        if let Some(transport) = transport {
            run.session = Some(Session::new(transport, run.client_credentials()));
        }
        run
    }

    fn options(&self) -> &McpOptions {
        self.ctx.target.mcp.as_ref().unwrap_or(&NO_OPTIONS)
    }

    fn client_credentials(&self) -> bool {
        self.options()
            .oauth
            .as_ref()
            .is_some_and(|o| o.grant == OAuthGrant::ClientCredentials)
    }

    /// Whether an HTTP endpoint's path ends in `/sse`, where servers put the deprecated
    /// HTTP+SSE transport (a Streamable HTTP endpoint may live there too: only a hint).
    fn sse_path(&self) -> bool {
        let endpoint = &self.ctx.target.endpoint;
        let path = endpoint.split_once("://").map_or("", |(_, rest)| {
            rest.split(['?', '#']).next().unwrap_or_default()
        });
        self.options().transport == McpTransport::Http
            && path
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .is_some_and(|last| last.eq_ignore_ascii_case("sse") && path.contains('/'))
    }

    /// Offline validation; creates the transport. Idempotent.
    fn prepare(&mut self) -> Result<(), Observation> {
        if self.plan.is_some() {
            return Ok(());
        }
        let options = self.options();
        let plan = era::handshake_plan(options.protocol_version.as_deref()).map_err(|_| {
            Observation::failed(
                Status::Misconfigured,
                Reason::Config(Misconfig::ProtocolPin),
            )
            .with(
                Key::ProtocolVersion,
                Fact::Config(options.protocol_version.clone().unwrap_or_default()),
            )
        })?;
        if self.session.is_none() {
            let transport: Box<dyn Transport> = match options.transport {
                McpTransport::Http => Box::new(HttpTransport::configure(&self.ctx)?),
                McpTransport::Stdio => Box::new(
                    transport::stdio::prepare(&self.ctx.target, options, &self.ctx.child_env)
                        .map_err(|refusal| refused(refusal, options))?,
                ),
            };
            self.session = Some(Session::new(transport, self.client_credentials()));
        }
        self.plan = Some(plan);
        Ok(())
    }

    fn reachability(&mut self, attempt: &Attempt) -> Observation {
        let start = Instant::now();
        let Some(session) = self.session.as_mut() else {
            return Observation::new(Status::Unknown);
        };
        match session.transport().probe(attempt) {
            Some(Ok(probe)) => {
                let mut o = Observation::healthy()
                    .with(Key::HttpStatus, Fact::Int(i64::from(probe.status)))
                    .responded();
                o.steps = probe.steps;
                o.latency = Some(probe.latency);
                o
            }
            Some(Err(e)) => McpError::from(e).observe(),
            None => {
                let mut o = self.establish(attempt).map_or_else(|o| o, Ready::observe);
                if o.status == Status::Healthy {
                    o.latency = Some(start.elapsed());
                }
                o
            }
        }
    }

    /// The shared session: established at most once per run (again after a discard).
    fn establish(&mut self, attempt: &Attempt) -> Result<Ready, Observation> {
        // A session established earlier is no answer to whatever this attempt sends next:
        // the attempt's response flag is left as it is.
        match &self.state {
            State::Ready(ready) => return Ok(ready.clone()),
            State::Failed(o) => return Err(o.clone()),
            State::Fresh => {}
        }
        let (Some(session), Some(plan)) = (self.session.as_mut(), self.plan) else {
            return Err(Observation::new(Status::Unknown));
        };
        let mut evidence = Evidence::default();
        match handshake(session, plan, &mut evidence, attempt) {
            Ok(ready) => {
                self.state = State::Ready(ready.clone());
                Ok(ready)
            }
            Err(failure) => {
                let refused_both = evidence.get(Key::Fallback) == Some(&Fact::Bool(true))
                    && matches!(
                        failure,
                        McpError::Transport(transport::TransportError::Status {
                            status: 400 | 404 | 405,
                            ..
                        })
                    );
                let mut o = explain(&failure, evidence, session);
                // Both eras' POSTs refused by status: is this the deprecated HTTP+SSE
                // transport (which agenthealth does not speak)? One bounded GET says.
                if refused_both && session.transport().opens_deprecated_sse(attempt) {
                    o.evidence.set(Key::TransportHint, Fact::Word("http_sse"));
                }
                if !failure.is_network() && failure.response_seen() && !attempt.is_aborted() {
                    self.state = State::Failed(o.clone());
                } else if !failure.response_seen() {
                    // Never ready and nothing received (a dead or silent process, a refused
                    // connection): the next attempt starts afresh.
                    session.discard();
                }
                Err(o)
            }
        }
    }

    /// Lists the inventories once per session (capability and functional share them).
    fn list(&mut self, ready: &Ready, attempt: &Attempt) -> Result<(), Observation> {
        let Some(session) = self.session.as_mut() else {
            return Err(Observation::new(Status::Unknown));
        };
        if self.inventory.is_none() {
            attempt.next_request();
            let header_rules =
                ready.era == Era::Modern && session.transport().kind() == McpTransport::Http;
            match inventory::list(session, ready.era, ready.advertised, header_rules, attempt) {
                Ok(listed) => self.inventory = Some(listed),
                Err(failure) => return Err(explain(&failure, ready.evidence.clone(), session)),
            }
        }
        Ok(())
    }

    fn capability(&mut self, attempt: &Attempt) -> Observation {
        let ready = match self.establish(attempt) {
            Ok(ready) => ready,
            Err(o) => return o,
        };
        if let Err(o) = self.list(&ready, attempt) {
            return o;
        }
        let mut evidence = ready.evidence;
        let Some(listed) = self.inventory.as_ref() else {
            return Observation::new(Status::Unknown);
        };
        listed.record(&mut evidence);
        let missing = inventory::missing(listed, self.options());
        missing.record(&mut evidence);
        let mut o = if missing.is_empty() {
            Observation::healthy()
        } else {
            Observation::failed(Status::Unhealthy, Reason::Mcp(McpFailure::Required))
        };
        o.evidence = evidence;
        o.responded()
    }

    /// The authentication check's outcome with what OAuth established beside its token
    /// (`challenge_scope`, `token_file`): a run that had a token but could not save the
    /// refreshed one works, and its next runs are at risk, so a passing check is DEGRADED.
    fn with_auth_facts(&mut self, mut o: Observation) -> Observation {
        let facts = self
            .session
            .as_mut()
            .and_then(|s| s.transport().auth_facts());
        let Some(facts) = facts else {
            return o;
        };
        o.evidence.extend(&facts.evidence);
        if let Some(reason) = facts.degraded.filter(|_| o.status == Status::Healthy) {
            o.status = Status::Degraded;
            o.reason = Some(reason);
        }
        o
    }

    /// A refused credential says where the OAuth access token came from (`token_source`) on
    /// every check it failed, not only authentication's, so doctor advises each alike (a
    /// saved token refused: log in again).
    fn with_token_source(&mut self, mut o: Observation) -> Observation {
        if !o.reason.is_some_and(Reason::rejects_credentials) {
            return o;
        }
        let source = self
            .session
            .as_mut()
            .and_then(|s| s.transport().auth_facts())
            .and_then(|f| f.evidence.get(Key::TokenSource).cloned());
        if let Some(source) = source {
            o.evidence.set(Key::TokenSource, source);
        }
        o
    }

    /// The opted-in tool call (see [`functional`]), on this run's session and inventory.
    fn functional(&mut self, attempt: &Attempt) -> Observation {
        // The loader guarantees both; a configuration built elsewhere is refused, never run.
        let Some(functional) = self.options().functional.clone() else {
            return Observation::new(Status::Misconfigured);
        };
        if !functional.safe {
            return Observation::new(Status::Misconfigured);
        }
        let ready = match self.establish(attempt) {
            Ok(ready) => ready,
            Err(o) => return o,
        };
        if let Err(o) = self.list(&ready, attempt) {
            return o;
        }
        let (Some(session), Some(inventory)) = (self.session.as_mut(), self.inventory.as_ref())
        else {
            return Observation::new(Status::Unknown);
        };
        let mut evidence = ready.evidence;
        evidence.set(Key::Tool, Fact::Config(functional.tool.clone()));
        let now = SystemTime::now();
        attempt.next_request();
        match functional::check(session, ready.era, inventory, &functional, attempt, now) {
            Ok(mut o) => {
                evidence.extend(&o.evidence);
                o.evidence = evidence;
                o.responded()
            }
            Err(failure) => explain(&failure, evidence, session),
        }
    }
}

impl TargetRun for McpRun {
    fn configure(&mut self) -> Observation {
        match self.prepare() {
            Ok(()) => Observation::healthy(),
            Err(o) => o,
        }
    }

    fn check(&mut self, dim: Dimension, attempt: &Attempt) -> Observation {
        if let Err(o) = self.prepare() {
            return o;
        }
        // Another dimension already waited a whole deadline on this run's session for
        // nothing: report that rather than wait again (a retry of that dimension itself
        // tries again).
        if let Some(silence) = self.silence.filter(|s| s.dim != dim) {
            return silence.observe();
        }
        // Deadlines are whole milliseconds; what is left at the start is a hair under.
        let micros = attempt.remaining().as_micros().div_ceil(1000);
        let allowed = Duration::from_millis(u64::try_from(micros).unwrap_or(u64::MAX));
        let o = match dim {
            Dimension::Reachability => self.reachability(attempt),
            Dimension::Authentication => {
                let o = self.establish(attempt).map_or_else(|o| o, Ready::observe);
                self.with_auth_facts(o)
            }
            Dimension::Protocol => {
                let o = self.establish(attempt).map_or_else(|o| o, Ready::observe);
                self.with_token_source(o)
            }
            Dimension::Capability => {
                let o = self.capability(attempt);
                self.with_token_source(o)
            }
            Dimension::Functional => {
                let o = self.functional(attempt);
                self.with_token_source(o)
            }
            _ => Observation::failed(Status::Unknown, Reason::Engine(Note::DimensionUnsupported)),
        };
        // A request that met its deadline with nothing received leaves the session silent for
        // the rest of the run, whether the transport or the watchdog noticed first.
        let silent = matches!(
            o.reason,
            Some(Reason::Engine(Note::TimedOut {
                response_seen: false,
                ..
            }))
        ) || (attempt.ends().passed() && !attempt.response_seen());
        if silent {
            self.silence = Some(Silence {
                dim,
                bound: attempt.bound(),
                allowed,
            });
        } else if o.response_seen {
            self.silence = None;
        }
        // What is known of the request the deadline left unanswered (the engine adds the
        // same when its watchdog cut the attempt first), and of an endpoint that looks like
        // the deprecated HTTP+SSE transport's.
        let mut o = o;
        if matches!(o.reason, Some(Reason::Engine(Note::TimedOut { .. }))) {
            o.evidence.extend(&self.unanswered());
        } else if !o.status.passed()
            && self.sse_path()
            && o.evidence.get(Key::TransportHint).is_none()
        {
            o.evidence.set(Key::TransportHint, Fact::Word("sse_path"));
        }
        // An attempt that ran out (or was aborted) may have left a request unanswered on the
        // session or process: never reuse it, whether or not the watchdog noticed first.
        if attempt.expired() {
            self.discard();
        }
        o
    }

    fn unanswered(&mut self) -> Evidence {
        let mut evidence = Evidence::default();
        if let Some(session) = self.session.as_mut() {
            let facts = session.transport().unanswered();
            if !facts.is_empty() {
                evidence.set(Key::FailedMethod, Fact::Word(session.last_method()));
                evidence.extend(&facts);
            }
        }
        if self.sse_path() {
            evidence.set(Key::TransportHint, Fact::Word("sse_path"));
        }
        evidence
    }

    fn discard(&mut self) {
        if let Some(session) = self.session.as_mut() {
            session.discard();
        }
        self.state = State::Fresh;
        self.inventory = None;
    }

    fn close(&mut self, attempt: &Attempt) {
        if let Some(session) = self.session.as_mut() {
            session.transport().close(attempt);
        }
    }
}

impl Ready {
    fn observe(self) -> Observation {
        let mut o = Observation::healthy().responded();
        o.evidence = self.evidence;
        o
    }
}

/// Establishes the session as `plan` says, recording the era and why in `evidence`.
fn handshake(
    session: &mut Session,
    plan: HandshakePlan,
    evidence: &mut Evidence,
    attempt: &Attempt,
) -> Result<Ready, McpError> {
    let fallback = match plan {
        HandshakePlan::Initialize { pin } => {
            evidence.set(Key::Era, Fact::Word("legacy"));
            evidence.set(Key::PinnedVersion, Fact::Word(pin.as_str()));
            return legacy(session, pin, Some(pin), evidence, attempt);
        }
        HandshakePlan::Discover { fallback } => fallback,
    };
    evidence.set(Key::Era, Fact::Word("modern"));
    if !fallback {
        evidence.set(Key::PinnedVersion, Fact::Word(Revision::MODERN.as_str()));
    }
    match discover::discover(session, evidence, attempt) {
        Ok(found) => {
            evidence.set(
                Key::NegotiatedVersion,
                Fact::Word(Revision::MODERN.as_str()),
            );
            evidence.set(Key::ResponseMode, Fact::Word(found.mode.as_str()));
            Ok(Ready {
                era: Era::Modern,
                advertised: found.advertised,
                evidence: std::mem::take(evidence),
            })
        }
        Err(McpError::Transport(rejection))
            if fallback
                && era::after_discover(rejection.rejection(), session.transport().kind())
                    == AfterDiscover::FallBack =>
        {
            evidence.set(Key::Era, Fact::Word("legacy"));
            evidence.set(Key::Fallback, Fact::Bool(true));
            if let transport::TransportError::Rpc { code, status } = rejection {
                if let Some(status) = status {
                    evidence.set(Key::DiscoverHttpStatus, Fact::Int(i64::from(status)));
                }
                evidence.set(Key::DiscoverRpcCode, Fact::Int(code));
            } else if let transport::TransportError::Status { status, .. } = rejection {
                evidence.set(Key::DiscoverHttpStatus, Fact::Int(i64::from(status)));
            }
            legacy(session, Revision::LEGACY_OFFER, None, evidence, attempt)
        }
        // A result that names no versions at all is no modern answer: a legacy server that
        // answers any method (both official clients fall back on it too).
        Err(McpError::NoVersions) if fallback => {
            evidence.set(Key::Era, Fact::Word("legacy"));
            evidence.set(Key::Fallback, Fact::Bool(true));
            if session.transport().kind() == McpTransport::Http {
                evidence.set(Key::DiscoverHttpStatus, Fact::Int(200));
            }
            evidence.set(Key::DiscoverResult, Fact::Word("no_versions"));
            legacy(session, Revision::LEGACY_OFFER, None, evidence, attempt)
        }
        Err(failure) => Err(failure),
    }
}

fn legacy(
    session: &mut Session,
    offer: Revision,
    pin: Option<Revision>,
    evidence: &mut Evidence,
    attempt: &Attempt,
) -> Result<Ready, McpError> {
    let done = initialize::initialize(session, offer, pin, evidence, attempt)?;
    Ok(Ready {
        era: Era::Legacy(done.version),
        advertised: done.advertised,
        evidence: std::mem::take(evidence),
    })
}

/// The configuration check's observation of a stdio target that cannot run.
fn refused(refusal: transport::stdio::Refusal, options: &McpOptions) -> Observation {
    match refusal {
        transport::stdio::Refusal::Target => Observation::failed(
            Status::Misconfigured,
            Reason::Config(Misconfig::StdioTarget),
        ),
        transport::stdio::Refusal::Unstartable(problem) => {
            let command = options.stdio.as_ref().map(|s| s.command.clone());
            let o = McpError::from(transport::TransportError::Unstartable(problem)).observe();
            match command {
                Some(command) => o.with(Key::Command, Fact::Config(command)),
                None => o,
            }
        }
    }
}

/// A failure's observation, after the evidence gathered before it and the method that failed.
fn explain(failure: &McpError, mut evidence: Evidence, session: &Session) -> Observation {
    let mut o = failure.observe();
    if !failure.is_network() {
        evidence.set(Key::FailedMethod, Fact::Word(session.last_method()));
    }
    evidence.extend(&o.evidence);
    o.evidence = evidence;
    o
}
