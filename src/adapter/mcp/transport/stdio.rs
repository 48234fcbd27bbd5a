//! MCP over stdio: one child process per target run, newline-delimited JSON-RPC on its stdin
//! and stdout.
//!
//! The bytes and the process live in [`crate::process`] (no shell, a clean environment, its
//! own process group, bounded lines, stderr drained, group termination). This module adds the
//! JSON-RPC rules on top:
//!
//! * **Start.** The configured command starts on the first message of the run, inside that
//!   attempt, so discovery's deadline includes the cold start. The process then serves every
//!   dimension of the run. A command that cannot be started is
//!   [`TransportError::Unstartable`] (MISCONFIGURED `mcp_process`); [`prepare`] decides the
//!   offline part of that (not found, not executable, bad directory) before anything starts.
//! * **Out.** Each message is one line: its JSON plus `\n`, written within the attempt's
//!   deadline. Our own JSON is compact; the operator's `arguments_json` is embedded as
//!   written and may span lines (a YAML block scalar), so any CR or LF in a body becomes a
//!   space ([`one_line`]). In valid JSON those bytes can only be insignificant whitespace (a
//!   string must escape them), so no value, and no digit of a number, changes.
//! * **In.** Lines are read until the response to our request id:
//!   - every line must be one JSON-RPC message (or a batch). Anything else — a banner, a log
//!     line, a blank line — is UNHEALTHY `mcp_protocol` (`protocol_error`:
//!     `non-json line on stdout`): the stdio transport reserves stdout for MCP messages, and
//!     logs belong on stderr;
//!   - notifications are ignored;
//!   - in a legacy session a server `ping` is answered with an empty result and any other
//!     server request with −32601, at most [`MAX_ANSWERS`](crate::result::reason::MAX_ANSWERS)
//!     per request (one more is malformed); during a stateless (2026-07-28) exchange a server
//!     request is malformed;
//!   - a response with another id is malformed (`response id does not match`). The transport
//!     never abandons a request on a living process (a timed-out or cancelled attempt kills
//!     it), so no late answer to an earlier request can arrive: any other id is a server bug.
//!     An error response with a `null` id answers the one request in flight;
//!   - a line over 1 MiB, or more than 1 MiB of lines (notifications included) while waiting
//!     for one response, is UNKNOWN `mcp_limit`;
//!   - end of output before any byte for this request is [`TransportError::Exited`]
//!     (UNREACHABLE `mcp_process`, with the exit status or signal as evidence); an end after
//!     some bytes is malformed;
//!   - the deadline or an abort is [`TransportError::unanswered`] (UNREACHABLE when nothing
//!     arrived, UNKNOWN after a partial line).
//! * **End.** [`Transport::discard`] kills the process group at once; [`Transport::close`]
//!   closes stdin, waits a short grace ([`CLOSE_GRACE`] at most, less when the budget is
//!   short), then sends `SIGTERM` and `SIGKILL` to the group.
//!
//! Every exchange registers the process's abort handle on the attempt, so the engine's
//! watchdog can kill the group the moment the deadline passes or the run is cancelled.

use crate::contract::endpoint::is_stdio_name;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use super::{Outgoing, Probe, Received, Reply, ResponseMode, Transport, TransportError};
use crate::adapter::mcp::era::Era;
use crate::adapter::mcp::jsonrpc::{self, FrameError};
use crate::config::McpTransport;
use crate::config::{McpOptions, StdioOptions, Target};
use crate::contract::{Bound, LocalResource, Secret};
use crate::process::{
    Child, ChildSpec, KILL_WAIT, MAX_LINE_BYTES, RecvError, SendError, SpawnError, TERM_WAIT,
};
use crate::result::reason::{Limit, Malformed, StartProblem};
use crate::result::{Evidence, Fact, Key, Observation};
use crate::runtime::{Attempt, Deadline};

/// Bytes of stdout lines (each counted with its `\n`) one request may consume while waiting
/// for its response: one maximal line.
pub const MAX_RESPONSE_BYTES: usize = MAX_LINE_BYTES + 1;

/// The longest wait for the process to exit by itself after its stdin is closed at the end of
/// the run (before `SIGTERM`).
pub const CLOSE_GRACE: Duration = Duration::from_millis(200);

/// Part of the close budget kept for the `SIGTERM` and `SIGKILL` steps and scheduling.
const CLOSE_RESERVE: Duration = Duration::from_millis(20);

/// The stdio transport of one target run.
pub struct StdioTransport {
    options: StdioOptions,
    env: Arc<Vec<(String, Secret)>>,
    child: Option<Child>,
    /// Server requests answered while waiting for the response in flight (at most
    /// [`MAX_ANSWERS`](crate::result::reason::MAX_ANSWERS)).
    answered: usize,
    /// The bytes of output charged to the last request when its wait for a line ended at the
    /// deadline or an abort, with the process's output still open; `None` after any other
    /// ending.
    unanswered: Option<usize>,
}

impl StdioTransport {
    /// A transport that starts `options.command` with the mapped `env` (child name, value)
    /// on first use.
    pub fn new(options: StdioOptions, env: Arc<Vec<(String, Secret)>>) -> StdioTransport {
        StdioTransport {
            options,
            env,
            child: None,
            answered: 0,
            unanswered: None,
        }
    }

    /// The running process, started if there is none yet; its abort handle is registered on
    /// the attempt.
    fn child(&mut self, attempt: &Attempt) -> Result<&mut Child, TransportError> {
        let child = match self.child.take() {
            Some(child) => child,
            None => Child::spawn(&command(&self.options, &self.env)).map_err(|e| {
                // Out of descriptors, processes or threads here: not the command's fault.
                match e {
                    SpawnError::Other(ref io) => LocalResource::of_start_error(io),
                    _ => None,
                }
                .map_or_else(
                    || TransportError::Unstartable(spawn_reason(&e)),
                    |r| TransportError::Network(Box::new(Observation::local_resource(r))),
                )
            })?,
        };
        let child = self.child.insert(child);
        attempt.on_abort(child.abort_handle());
        Ok(child)
    }

    /// One request and its response (see [`Transport::request`]).
    fn exchange(
        &mut self,
        out: &Outgoing<'_>,
        attempt: &Attempt,
    ) -> Result<Box<RawValue>, TransportError> {
        let want = out.id.unwrap_or(0);
        self.answered = 0;
        self.unanswered = None;
        self.send_all(std::slice::from_ref(out), attempt)?;
        let mut used = 0usize;
        loop {
            // Still the process `send_all` started (and registered) above.
            let Some(child) = self.child.as_mut() else {
                return Err(network(attempt));
            };
            let line = match child.recv_line(attempt) {
                Ok(line) => line,
                Err(e) => {
                    if matches!(e, RecvError::Timeout | RecvError::Aborted) {
                        self.unanswered = Some(used);
                    }
                    return Err(stopped(&e, used, attempt));
                }
            };
            used = used.saturating_add(line.len().saturating_add(1));
            if used > MAX_RESPONSE_BYTES {
                return Err(TransportError::Limit(Limit::OutputBeforeResponse));
            }
            let message =
                jsonrpc::parse(&line).map_err(|e| TransportError::Malformed(not_a_message(&e)))?;
            let child = &mut self.child;
            let mut send = |body: &[u8]| write_answer(child, body, attempt);
            if let Some(outcome) =
                super::until_ours(message, want, out.era, None, &mut self.answered, &mut send)
            {
                return outcome;
            }
        }
    }

    /// Several requests in flight at once (see [`Transport::request_all`]): every line is
    /// written, then output is read until each has its response, matched by id. The rules of
    /// [`StdioTransport::exchange`] apply to each request: a response counts toward its own
    /// request's 1 MiB, any other line toward the first request still waiting; what ends the
    /// output, the deadline or a broken message ends every request still waiting.
    fn exchange_all(
        &mut self,
        outs: &[Outgoing<'_>],
        attempt: &Attempt,
    ) -> Vec<Result<Box<RawValue>, TransportError>> {
        let era = outs.first().map_or(Era::Modern, |o| o.era);
        self.unanswered = None;
        if let Err(e) = self.send_all(outs, attempt) {
            return outs.iter().map(|_| Err(e.clone())).collect();
        }
        let mut flight = InFlight::new(outs);
        while let Some(pending) = flight.pending() {
            // Still the process `send_all` started (and registered) above.
            let Some(child) = self.child.as_mut() else {
                flight.end(&pending, |_| network(attempt));
                break;
            };
            let line = match child.recv_line(attempt) {
                Ok(line) => line,
                Err(e) => {
                    flight.end(&pending, |used| stopped(&e, used, attempt));
                    break;
                }
            };
            let size = line.len().saturating_add(1);
            let message = match jsonrpc::parse(&line) {
                Ok(message) => message,
                Err(e) => {
                    flight.charge(&pending[..1], size);
                    flight.end(&pending, |used| {
                        if used > MAX_RESPONSE_BYTES {
                            TransportError::Limit(Limit::OutputBeforeResponse)
                        } else {
                            TransportError::Malformed(not_a_message(&e))
                        }
                    });
                    break;
                }
            };
            let received = super::receive_among(message, &flight.ids(&pending), era, None);
            if flight.charge_line(&pending, &received, size) {
                continue;
            }
            let child = &mut self.child;
            flight.take(&pending, received, attempt, &mut |body| {
                write_answer(child, body, attempt);
            });
        }
        flight.outcomes(attempt)
    }

    /// Writes every request of an exchange, one line each, starting the process if needed.
    fn send_all(&mut self, outs: &[Outgoing<'_>], attempt: &Attempt) -> Result<(), TransportError> {
        if attempt.expired() {
            return Err(network(attempt));
        }
        let child = self.child(attempt)?;
        for out in outs {
            match child.send(&one_line(out.body), attempt.ends()) {
                // A closed input: the process died or closed it. What it wrote, and how it
                // ended, is on stdout; read on.
                Ok(()) | Err(SendError::Closed) => {}
                Err(SendError::Timeout | SendError::Io(_)) => return Err(network(attempt)),
                Err(SendError::EmbeddedNewline) => {
                    return Err(TransportError::Malformed(Malformed::Request(
                        "request contains a newline",
                    )));
                }
            }
        }
        Ok(())
    }

    /// One notification (see [`Transport::notify`]).
    fn deliver(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        if attempt.expired() {
            return Err(network(attempt));
        }
        let child = self.child(attempt)?;
        match child.send(&one_line(out.body), attempt.ends()) {
            Ok(()) => Ok(()),
            Err(SendError::Closed) => {
                Err(TransportError::Exited(child.exit_within(attempt.ends())))
            }
            Err(SendError::Timeout | SendError::Io(_)) => Err(network(attempt)),
            Err(SendError::EmbeddedNewline) => Err(TransportError::Malformed(Malformed::Request(
                "request contains a newline",
            ))),
        }
    }
}

impl Transport for StdioTransport {
    fn kind(&self) -> McpTransport {
        McpTransport::Stdio
    }

    fn probe(&mut self, _attempt: &Attempt) -> Option<Result<Probe, TransportError>> {
        None
    }

    fn request(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        reply(self.exchange(out, attempt), attempt)
    }

    fn request_all(
        &mut self,
        outs: &[Outgoing<'_>],
        attempt: &Attempt,
    ) -> Vec<Result<Reply, TransportError>> {
        if outs.len() < 2 {
            return outs.iter().map(|out| self.request(out, attempt)).collect();
        }
        self.exchange_all(outs, attempt)
            .into_iter()
            .map(|outcome| reply(outcome, attempt))
            .collect()
    }

    fn notify(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        self.deliver(out, attempt).map_err(|e| {
            if attempt.is_aborted() {
                network(attempt)
            } else {
                e
            }
        })
    }

    fn unanswered(&self) -> Evidence {
        let mut facts = Evidence::default();
        if let Some(bytes) = self.unanswered {
            // Its output was still open when the wait ended: it had not exited.
            facts.set(Key::ProcessRunning, Fact::Bool(true));
            facts.set(
                Key::StdoutBytes,
                Fact::Int(i64::try_from(bytes).unwrap_or(i64::MAX)),
            );
        }
        facts
    }

    fn discard(&mut self) {
        if let Some(child) = self.child.take() {
            // No grace for an abandoned process: SIGKILL to the group now.
            (child.abort_handle())();
            child.shutdown(Deadline::after(Duration::ZERO, Bound::Cleanup));
        }
    }

    fn close(&mut self, attempt: &Attempt) {
        if let Some(child) = self.child.take() {
            // The watchdog may cut the shutdown at the cleanup budget: the group dies at once.
            attempt.on_abort(child.abort_handle());
            let grace = attempt
                .remaining()
                .saturating_sub(TERM_WAIT + KILL_WAIT + CLOSE_RESERVE)
                .min(CLOSE_GRACE);
            child.shutdown(Deadline::after(grace, attempt.bound()));
        }
    }
}

/// A JSON message as one line of the newline-delimited framing: every CR and LF becomes a
/// space. The bodies the session builds are valid JSON (their params pass
/// [`RawValue::from_string`]), where a raw CR or LF can only be whitespace between tokens, so
/// the message means exactly what it meant; nothing is copied when there is none.
fn one_line(body: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let breaks = |b: &u8| matches!(b, b'\n' | b'\r');
    if body.iter().any(breaks) {
        std::borrow::Cow::Owned(
            body.iter()
                .map(|b| if breaks(b) { b' ' } else { *b })
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(body)
    }
}

/// The reply of an exchange's `outcome`. Whatever an aborted exchange met last (the end of
/// output after the kill) is not an answer.
fn reply(
    outcome: Result<Box<RawValue>, TransportError>,
    attempt: &Attempt,
) -> Result<Reply, TransportError> {
    match outcome {
        Ok(result) => Ok(Reply {
            result,
            mode: ResponseMode::Json,
            session_issued: false,
        }),
        Err(_) if attempt.is_aborted() => Err(network(attempt)),
        Err(e) => Err(e),
    }
}

/// Writes the answer to a server request as a line of its own, best effort (see
/// [`super::answer`]).
fn write_answer(child: &mut Option<Child>, body: &[u8], attempt: &Attempt) {
    if let Some(child) = child.as_mut() {
        let _ = child.send(body, attempt.ends());
    }
}

/// An interrupted exchange: UNREACHABLE when nothing arrived, UNKNOWN after a partial line.
fn network(attempt: &Attempt) -> TransportError {
    TransportError::unanswered(attempt)
}

/// What ends a request whose wait for a line ended with `e`, after `used` bytes of output
/// were charged to it: the deadline or an abort is no answer; the end of the output is the
/// process's exit when nothing at all arrived for the request, else an answer cut short.
fn stopped(e: &RecvError, used: usize, attempt: &Attempt) -> TransportError {
    match e {
        RecvError::Timeout | RecvError::Aborted => network(attempt),
        RecvError::LineTooLong => TransportError::Limit(Limit::Line),
        RecvError::Closed { exit, unterminated } if used == 0 && *unterminated == 0 => {
            TransportError::Exited(*exit)
        }
        RecvError::Closed { .. } | RecvError::Io(_) => {
            TransportError::Malformed(Malformed::OutputEnded)
        }
    }
}

/// Why a line is not a message: not JSON at all (a banner or a log line), or JSON that is not
/// JSON-RPC.
fn not_a_message(e: &FrameError) -> Malformed {
    match e {
        FrameError::NotJson => Malformed::NonJsonLine,
        _ => Malformed::NotJsonRpc,
    }
}

/// The requests of one [`StdioTransport::exchange_all`]: each one's outcome once it has one,
/// the output charged to it and the server requests answered on its behalf.
struct InFlight {
    ids: Vec<u64>,
    outcomes: Vec<Option<Result<Box<RawValue>, TransportError>>>,
    used: Vec<usize>,
    answered: Vec<usize>,
}

impl InFlight {
    fn new(outs: &[Outgoing<'_>]) -> InFlight {
        InFlight {
            ids: outs.iter().map(|o| o.id.unwrap_or(0)).collect(),
            outcomes: outs.iter().map(|_| None).collect(),
            used: vec![0; outs.len()],
            answered: vec![0; outs.len()],
        }
    }

    /// The requests still waiting, in order; `None` when every one has its outcome.
    fn pending(&self) -> Option<Vec<usize>> {
        let pending: Vec<usize> = (0..self.ids.len())
            .filter(|&i| self.outcomes[i].is_none())
            .collect();
        (!pending.is_empty()).then_some(pending)
    }

    /// The ids of `pending`, in the same order.
    fn ids(&self, pending: &[usize]) -> Vec<u64> {
        pending.iter().map(|&i| self.ids[i]).collect()
    }

    /// Ends every request of `pending` with what `why` makes of the output charged to it.
    fn end(&mut self, pending: &[usize], why: impl Fn(usize) -> TransportError) {
        for &i in pending {
            self.outcomes[i] = Some(Err(why(self.used[i])));
        }
    }

    /// Charges a line of `size` bytes to each request of `to`.
    fn charge(&mut self, to: &[usize], size: usize) {
        for &i in to {
            self.used[i] = self.used[i].saturating_add(size);
        }
    }

    /// Charges a parsed line: to the requests it answers, or else to the first one still
    /// waiting (the one a server answering in order is working on), so each line is charged
    /// once and all of them together stay within 1 MiB per request. Ends every request over
    /// that limit; whether one was.
    fn charge_line(
        &mut self,
        pending: &[usize],
        received: &[(Option<usize>, Received)],
        size: usize,
    ) -> bool {
        let answers: Vec<usize> = received
            .iter()
            .filter_map(|(index, r)| match (index, r) {
                (Some(k), Received::Ours(_)) => pending.get(*k).copied(),
                _ => None,
            })
            .collect();
        let first = pending.get(..1).unwrap_or_default();
        self.charge(if answers.is_empty() { first } else { &answers }, size);
        let mut over = false;
        for &i in pending {
            if self.used[i] > MAX_RESPONSE_BYTES {
                self.outcomes[i] = Some(Err(TransportError::Limit(Limit::OutputBeforeResponse)));
                over = true;
            }
        }
        over
    }

    /// Takes what one line carried: a response ends its request (one with no request of its
    /// own ends every request still waiting); a server request is answered through `send` on
    /// behalf of the first request still waiting ([`super::answer`]).
    fn take(
        &mut self,
        pending: &[usize],
        received: Vec<(Option<usize>, Received)>,
        attempt: &Attempt,
        send: &mut dyn FnMut(&[u8]),
    ) {
        for (index, r) in received {
            match (index, r) {
                (Some(k), Received::Ours(outcome)) => {
                    if let Some(&i) = pending.get(k) {
                        self.outcomes[i] = Some(outcome);
                        // What arrived so far answered this request: a deadline that passes
                        // now with nothing more is no response to the others.
                        attempt.next_request();
                    }
                }
                (None, Received::Ours(outcome)) => {
                    for &i in pending {
                        if self.outcomes[i].is_none() {
                            self.outcomes[i] = Some(outcome.clone());
                        }
                    }
                }
                (_, Received::Answer(body)) => {
                    if let Some(&i) = pending.first()
                        && let Err(e) = super::answer(&mut self.answered[i], || send(&body))
                    {
                        self.outcomes[i] = Some(Err(e));
                    }
                }
            }
        }
    }

    /// Every request's outcome; one still without (never expected) is no answer.
    fn outcomes(self, attempt: &Attempt) -> Vec<Result<Box<RawValue>, TransportError>> {
        self.outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Err(network(attempt))))
            .collect()
    }
}

/// What the child-process layer starts for `options`, with the mapped `env` (child name,
/// value).
fn command(options: &StdioOptions, env: &[(String, Secret)]) -> ChildSpec {
    ChildSpec {
        program: options.command.clone(),
        args: options.args.clone(),
        directory: options.directory.clone(),
        env: env.to_vec(),
    }
}

/// Why a command cannot be started, as the reason says it.
pub fn spawn_reason(e: &SpawnError) -> StartProblem {
    match e {
        SpawnError::NotFound { .. } => StartProblem::CommandNotFound,
        SpawnError::NotExecutable { .. } => StartProblem::CommandNotExecutable,
        SpawnError::BadDirectory { .. } => StartProblem::BadDirectory,
        SpawnError::InvalidEnv { .. } => StartProblem::InvalidEnv,
        SpawnError::Other(_) => StartProblem::StartFailed,
    }
}

/// Why a stdio target cannot run, found offline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The endpoint is not `stdio://name`, or there is no `mcp.stdio` command.
    Target,
    /// The command cannot be started.
    Unstartable(StartProblem),
}

/// The offline part of the configuration check of a stdio target, and its transport: the
/// endpoint names a stdio target, and the command can be started. Starts nothing.
pub fn prepare(
    target: &Target,
    options: &McpOptions,
    env: &[(String, Secret)],
) -> Result<StdioTransport, Refusal> {
    let Some(stdio) = options.stdio.as_ref() else {
        return Err(Refusal::Target);
    };
    if !is_stdio_name(&target.endpoint) {
        return Err(Refusal::Target);
    }
    if let Err(e) = Child::preflight(&command(stdio, env)) {
        return Err(Refusal::Unstartable(spawn_reason(&e)));
    }
    Ok(StdioTransport::new(stdio.clone(), Arc::new(env.to_vec())))
}

/// The running process, for tests.
#[cfg(test)]
impl StdioTransport {
    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::mcp::era::Era;
    use crate::adapter::mcp::transport::Mirror;
    use crate::contract::Bound;
    use crate::contract::Status;
    use crate::process::ExitInfo;
    use crate::result::reason::MAX_ANSWERS;
    use crate::result::{Fact, Key};
    use crate::runtime::Deadline;
    use std::time::Instant;

    use crate::process::testkit::{fixture, python_bin};

    fn fake(args: &[&str]) -> StdioTransport {
        let mut all = vec![fixture("fake_server.py")];
        all.extend(args.iter().map(|a| a.to_string()));
        StdioTransport::new(
            StdioOptions {
                command: python_bin().into(),
                args: all,
                directory: None,
                env: Vec::new(),
            },
            Arc::new(Vec::new()),
        )
    }

    fn soon(ms: u64) -> Attempt {
        Attempt::new(Deadline::new(
            Instant::now() + Duration::from_millis(ms),
            Bound::TimeoutMs,
        ))
    }

    fn request(
        t: &mut StdioTransport,
        id: u64,
        method: &str,
        era: Era,
        attempt: &Attempt,
    ) -> Result<Reply, TransportError> {
        let body = jsonrpc::encode_request(id, method, None);
        t.request(
            &Outgoing {
                method,
                id: Some(id),
                body: &body,
                era,
                mirror: Mirror::default(),
            },
            attempt,
        )
    }

    /// A server that sends request after request before its answer gets at most
    /// [`MAX_ANSWERS`] answers per request; one more is a protocol violation.
    #[test]
    fn server_requests_are_answered_a_bounded_number_of_times() {
        for (pings, ok) in [(MAX_ANSWERS, true), (MAX_ANSWERS + 1, false)] {
            let mut t = fake(&["--era", "legacy", "--pings", &pings.to_string()]);
            let got = request(&mut t, 1, "initialize", Era::Handshake, &soon(10_000));
            if ok {
                assert!(got.is_ok(), "{pings}: {got:?}");
            } else {
                assert_eq!(
                    got.err(),
                    Some(TransportError::Malformed(Malformed::TooManyServerRequests))
                );
            }
            t.discard();
        }
    }

    #[test]
    fn endpoints() {
        for ok in [
            "stdio://local-server",
            "STDIO://x",
            "stdio://files/sub",
            "stdio://a.b_c-1",
        ] {
            assert!(is_stdio_name(ok), "{ok}");
        }
        for bad in [
            "stdio://",
            "stdio:///x",
            "stdio://u@h",
            "stdio://x?q",
            "stdio://x#f",
            "stdio://a b",
            "http://x",
            "stdio:x",
            "std",
            "stdio://\u{7}",
        ] {
            assert!(!is_stdio_name(bad), "{bad}");
        }
    }

    #[test]
    fn one_process_answers_several_requests_and_skips_notifications() {
        let mut t = fake(&["--era", "legacy", "--notify"]);
        let a = soon(10_000);
        let init = request(&mut t, 1, "initialize", Era::Handshake, &a).expect("initialize");
        assert!(init.result.get().contains("protocolVersion"));
        assert_eq!(init.mode, ResponseMode::Json);
        assert!(!init.session_issued);
        let pid = t.pid();
        let note = jsonrpc::encode_notification("notifications/initialized", None);
        let session = Era::Legacy(crate::contract::Revision::V2025_11_25);
        t.notify(
            &Outgoing {
                method: "notifications/initialized",
                id: None,
                body: &note,
                era: session,
                mirror: Mirror::default(),
            },
            &a,
        )
        .expect("notify");
        let listed = request(&mut t, 2, "tools/list", session, &a).expect("tools/list");
        assert!(listed.result.get().contains("tools"));
        assert_eq!(t.pid(), pid, "the same process serves every request");
        t.close(&Attempt::new(Deadline::after(
            Duration::from_millis(250),
            Bound::Cleanup,
        )));
        assert!(t.pid().is_none());
    }

    const LISTS: [&str; 3] = ["tools/list", "resources/list", "prompts/list"];

    /// The three list requests, ids 2, 3 and 4.
    fn list_bodies(params: Option<&RawValue>) -> Vec<Vec<u8>> {
        LISTS
            .iter()
            .zip(2u64..)
            .map(|(m, id)| jsonrpc::encode_request(id, m, params))
            .collect()
    }

    /// The list requests of [`list_bodies`] to send at once.
    fn lists(bodies: &[Vec<u8>], era: Era) -> Vec<Outgoing<'_>> {
        LISTS
            .iter()
            .zip(bodies)
            .zip(2u64..)
            .map(|((m, body), id)| Outgoing {
                method: m,
                id: Some(id),
                body,
                era,
                mirror: Mirror::default(),
            })
            .collect()
    }

    /// Lists in flight together: server requests are charged, like lines, to the first list
    /// still waiting, so one list's pings count against it alone, at most [`MAX_ANSWERS`].
    #[test]
    fn server_requests_beside_lists_in_flight_are_bounded_per_list() {
        for (pings, ok) in [(MAX_ANSWERS, true), (MAX_ANSWERS + 1, false)] {
            let mut t = fake(&[
                "--era",
                "legacy",
                "--pings",
                &pings.to_string(),
                "--pings-on",
                "resources/list",
            ]);
            let a = soon(10_000);
            request(&mut t, 1, "initialize", Era::Handshake, &a).expect("initialize");
            let era = Era::Legacy(crate::contract::Revision::V2025_06_18);
            let initialized = jsonrpc::encode_notification("notifications/initialized", None);
            let note = Outgoing {
                method: "notifications/initialized",
                id: None,
                body: &initialized,
                era,
                mirror: Mirror::default(),
            };
            t.notify(&note, &a).expect("initialized");
            let bodies = list_bodies(None);
            let replies = t.request_all(&lists(&bodies, era), &a);
            assert!(replies[0].is_ok(), "{pings}: {:?}", replies[0]);
            if ok {
                assert!(replies.iter().all(Result::is_ok), "{pings}: {replies:?}");
            } else {
                assert_eq!(
                    replies[1].as_ref().err(),
                    Some(&TransportError::Malformed(Malformed::TooManyServerRequests))
                );
            }
            t.discard();
        }
    }

    /// The server answers no list until all three were asked for, then in reverse order:
    /// one request at a time would wait forever; several in flight get each its own answer.
    #[test]
    fn several_requests_in_flight_are_matched_by_id() {
        let mut t = fake(&["--era", "modern", "--reverse-lists", "--notify"]);
        let a = soon(10_000);
        let meta = crate::adapter::mcp::session::meta(false);
        let params = format!("{{{meta}}}");
        let params = RawValue::from_string(params).expect("params");
        let bodies = list_bodies(Some(&params));
        let replies = t.request_all(&lists(&bodies, Era::Modern), &a);
        assert_eq!(replies.len(), 3);
        for (reply, key) in replies.iter().zip(["tools", "resources", "prompts"]) {
            let reply = reply.as_ref().expect("answered");
            assert!(reply.result.get().contains(&format!("\"{key}\"")), "{key}");
        }
        t.discard();
    }

    #[test]
    fn line_breaks_in_a_body_become_spaces_and_nothing_else_changes() {
        // A raw LF or CR in JSON is whitespace; an escaped `\n` inside a string is not a
        // line break and stays as it is.
        let pretty = b"{\"a\":\n  \"x\\ny\",\r\n  \"n\": 123456789012345678901234567890\n}";
        let flat = one_line(pretty);
        assert_eq!(
            &*flat,
            &b"{\"a\":   \"x\\ny\",    \"n\": 123456789012345678901234567890 }"[..]
        );
        let (before, after): (serde_json::Value, serde_json::Value) = (
            serde_json::from_slice(pretty).expect("json"),
            serde_json::from_slice(&flat).expect("json"),
        );
        assert_eq!(before, after);
        assert!(matches!(one_line(b"{}"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_request_whose_params_span_lines_is_sent_as_one_line() {
        let mut t = fake(&["--era", "legacy"]);
        let a = soon(10_000);
        let params = RawValue::from_string("{\n  \"probe\": true\n}".to_owned()).expect("json");
        let body = jsonrpc::encode_request(1, "ping", Some(&params));
        let reply = t
            .request(
                &Outgoing {
                    method: "ping",
                    id: Some(1),
                    body: &body,
                    era: Era::Handshake,
                    mirror: Mirror::default(),
                },
                &a,
            )
            .expect("answered");
        assert_eq!(reply.result.get(), "{}");
        t.close(&Attempt::new(Deadline::after(
            Duration::from_millis(250),
            Bound::Cleanup,
        )));
    }

    #[test]
    fn rpc_errors_carry_no_status() {
        let mut t = fake(&["--era", "legacy"]);
        let a = soon(10_000);
        assert_eq!(
            request(&mut t, 1, "server/discover", Era::Modern, &a).map(|_| ()),
            Err(TransportError::Rpc {
                code: -32601,
                status: None
            })
        );
        t.discard();
    }

    #[test]
    fn an_early_exit_is_exited_with_its_status() {
        let mut t = StdioTransport::new(
            StdioOptions {
                command: fixture("exit.sh"),
                args: Vec::new(),
                directory: None,
                env: Vec::new(),
            },
            Arc::new(Vec::new()),
        );
        let a = soon(5_000);
        assert_eq!(
            request(&mut t, 1, "server/discover", Era::Modern, &a).map(|_| ()),
            Err(TransportError::Exited(ExitInfo::Code(3)))
        );
        assert!(!a.response_seen());
    }

    #[test]
    fn a_command_that_cannot_start_is_unstartable() {
        let mut t = StdioTransport::new(
            StdioOptions {
                command: "agenthealth-no-such-command-4711".into(),
                ..StdioOptions::default()
            },
            Arc::new(Vec::new()),
        );
        let a = soon(1_000);
        assert_eq!(
            request(&mut t, 1, "server/discover", Era::Modern, &a).map(|_| ()),
            Err(TransportError::Unstartable(StartProblem::CommandNotFound))
        );
    }

    #[test]
    fn an_expired_attempt_starts_nothing() {
        let mut t = fake(&["--era", "legacy"]);
        let a = Attempt::new(Deadline::new(Instant::now(), Bound::TimeoutMs));
        assert_eq!(
            request(&mut t, 1, "server/discover", Era::Modern, &a).map(|_| ()),
            Err(TransportError::timed_out(
                crate::contract::Bound::TimeoutMs,
                false
            ))
        );
        assert!(t.pid().is_none());
    }

    #[test]
    fn close_fits_the_engine_budget() {
        let mut t = fake(&["--era", "legacy", "--ignore-term"]);
        let a = soon(10_000);
        request(&mut t, 1, "initialize", Era::Handshake, &a).expect("initialize");
        let started = Instant::now();
        t.close(&Attempt::new(Deadline::after(
            Duration::from_millis(250),
            Bound::Cleanup,
        )));
        assert!(
            started.elapsed() < Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
    }

    /// Upstream §3: a session that was never ready and received nothing is discarded, so a
    /// retry starts a new process instead of asking a dead one again.
    #[test]
    fn a_session_that_received_nothing_is_discarded() {
        use crate::adapter::TargetRun;
        use crate::adapter::mcp::testing::{Scripted, attempt, lock, methods, run};
        use crate::contract::Dimension;
        use crate::result::DiagnosticCode;
        let scripted = Scripted::new(|_| Err(TransportError::Exited(ExitInfo::Code(1)))).stdio();
        let log = scripted.log();
        let mut r = run(McpOptions::default(), scripted);
        let o = r.check(Dimension::Reachability, &attempt());
        assert_eq!(
            (o.status, o.code()),
            (Status::Unreachable, Some(DiagnosticCode::McpProcess))
        );
        assert_eq!(o.evidence.get(Key::ExitCode), Some(&Fact::Int(1)));
        assert!(!o.response_seen, "retryable");
        assert_eq!(lock(&log).discards, 1);
        r.check(Dimension::Reachability, &attempt());
        assert_eq!(methods(&log), ["server/discover", "server/discover"]);
    }

    /// An attempt that ran out is discarded even when the transport answered first.
    #[test]
    fn an_expired_attempt_discards_the_session() {
        use crate::adapter::TargetRun;
        use crate::adapter::mcp::testing::{Scripted, attempt, lock, methods, run};
        use crate::contract::Dimension;
        const DISCOVER: &str = r#"{"supportedVersions":["2026-07-28"],"capabilities":{}}"#;
        let scripted = Scripted::new(|_| Ok(DISCOVER.to_owned())).stdio();
        let log = scripted.log();
        let mut r = run(McpOptions::default(), scripted);
        let late = Attempt::new(Deadline::new(Instant::now(), Bound::TimeoutMs));
        r.check(Dimension::Protocol, &late);
        assert_eq!(lock(&log).discards, 1);
        let o = r.check(Dimension::Protocol, &attempt());
        assert_eq!(o.status, Status::Healthy);
        assert_eq!(lock(&log).discards, 1);
        assert_eq!(methods(&log), ["server/discover", "server/discover"]);
    }
}
