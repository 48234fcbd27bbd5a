//! The seam between MCP protocol logic and bytes.
//!
//! Protocol logic (era selection, the legacy lifecycle, inventories) encodes JSON-RPC
//! messages and hands them to a [`Transport`] with the [`Era`] whose rules apply. The
//! transport does everything that depends on how bytes travel:
//!
//! * HTTP statuses and headers (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name`, `Mcp-Param-*`), JSON or SSE bodies, the 1 MiB response budget, SSE
//!   resumption of legacy streams, and the session's `DELETE` at the end;
//! * matching the response to the request id, ignoring notifications, answering a
//!   server's `ping` with an empty result and rejecting every other server request with
//!   −32601 (legacy only — a modern stream carrying a request is malformed);
//! * marking the attempt's first response byte and registering an abort hook that cuts off
//!   blocked I/O.
//!
//! It returns only the `result` of our request, or a [`TransportError`] the protocol logic
//! classifies. Protocol logic never sees bytes, headers or statuses except through these.
//! There are two: [`streamable_http::HttpTransport`] (Streamable HTTP) and
//! [`stdio::StdioTransport`] (a child process).
//!
//! # The stdio transport
//!
//! [`stdio::StdioTransport`] implements the trait over a child process
//! ([`crate::process::Child`]); its module documentation has the details. In short:
//!
//! * [`Transport::kind`] is [`McpTransport::Stdio`] (any unrecognised JSON-RPC error to
//!   discovery then means "legacy"), and [`Transport::probe`] is `None` (reachability times
//!   start-up plus establishment);
//! * the process starts on first use and serves the whole target run; every exchange
//!   registers an abort hook that kills the process group and marks the attempt's response
//!   on the first stdout byte;
//! * lines are read through [`super::jsonrpc::parse`] until the response to `out.id`:
//!   notifications are ignored; in a legacy framing `ping` is answered with an empty result
//!   and other server requests with −32601, in the modern framing a server request is
//!   [`TransportError::Malformed`]; a JSON-RPC error becomes [`TransportError::Rpc`] with
//!   `status: None`; a line that is not a JSON-RPC message is `Malformed`; more than 1 MiB
//!   per line or per request is [`TransportError::Limit`]; end of output before any byte
//!   for this request is [`TransportError::Exited`], a later end `Malformed`; a command that
//!   cannot be started is [`TransportError::Unstartable`]; the deadline or an abort is
//!   [`TransportError::unanswered`];
//! * every header-only part of the message ([`Outgoing::mirror`], the revision header) is
//!   ignored; [`Reply::mode`] is [`ResponseMode::Json`] and [`Reply::session_issued`] is
//!   `false`;
//! * [`Transport::discard`] kills the process group at once (the next request starts a new
//!   process); [`Transport::close`] closes stdin, allows a short grace within the budget,
//!   then terminates the group.

pub mod stdio;
pub mod streamable_http;

use std::time::Duration;

use serde_json::value::RawValue;

use super::era::{Era, METHOD_NOT_FOUND, Rejection};
use super::jsonrpc::{self, Incoming};
use crate::config::McpTransport;
use crate::contract::{Bound, Status};
use crate::net::HeadFacts;
use crate::oauth::AuthFacts;
use crate::process::ExitInfo;
use crate::result::reason::{Limit, MAX_ANSWERS, Malformed, Note, Reason, StartProblem};
use crate::result::{Evidence, Observation, Steps};
use crate::runtime::Attempt;

/// Names a modern request mirrors into headers: `Mcp-Name` (a tool or prompt name, a
/// resource URI, as the server spelled it; the transport encodes it) and `Mcp-Param-<name>`
/// pairs (values already encoded for a header). Other eras carry no such headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mirror<'a> {
    /// `Mcp-Name`.
    pub name: Option<&'a str>,
    /// `Mcp-Param-<name>: <value>` pairs.
    pub params: &'a [(String, String)],
}

/// One message to send.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing<'a> {
    /// The JSON-RPC method (also the `Mcp-Method` header in the modern era).
    pub method: &'a str,
    /// The request id; `None` for a notification.
    pub id: Option<u64>,
    /// The encoded JSON-RPC message.
    pub body: &'a [u8],
    /// The era's rules, from which every header follows.
    pub era: Era,
    /// What a modern request mirrors into headers.
    pub mirror: Mirror<'a>,
}

/// How the server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseMode {
    /// One `application/json` body (or a stdio line).
    Json,
    /// A `text/event-stream`.
    Sse,
}

impl ResponseMode {
    /// The evidence word.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Json => "json",
            ResponseMode::Sse => "sse",
        }
    }
}

/// The successful answer to one request.
#[derive(Debug)]
pub struct Reply {
    /// The JSON-RPC `result`, exactly as received.
    pub result: Box<RawValue>,
    /// How it arrived.
    pub mode: ResponseMode,
    /// Whether this response assigned a session id (legacy `initialize` over HTTP only).
    pub session_issued: bool,
}

/// A reachability probe's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The probe's round trip.
    pub latency: Duration,
    /// Transport stages observed.
    pub steps: Steps,
    /// The HTTP status answered (any status is connectivity evidence).
    pub status: u16,
}

/// Why an exchange failed. Carries only numbers and our own words.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportError {
    /// An HTTP status other than the expected one, without a JSON-RPC error body
    /// (401/403 always land here, whatever their body).
    Status {
        /// The HTTP status.
        status: u16,
        /// What its head said beyond the status: where a redirect points, whether a 401/403
        /// challenged for credentials.
        head: HeadFacts,
    },
    /// A JSON-RPC error answered our request.
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The HTTP status that carried it (`None` on stdio).
        status: Option<u16>,
    },
    /// The answer broke the protocol (bad framing, wrong id, wrong content type, …).
    Malformed(Malformed),
    /// The answer exceeded a safety limit (1 MiB per response, three resumptions).
    Limit(Limit),
    /// The peer process ended before writing anything for this request (stdio), and how it
    /// ended as far as could be observed.
    Exited(ExitInfo),
    /// The peer process could not be started (stdio). An operator problem.
    Unstartable(StartProblem),
    /// No complete answer: a connection failure, the deadline, an abort, or a local refusal
    /// before anything was sent. Carries the network classification as an observation:
    /// UNREACHABLE when no response byte arrived, UNKNOWN after a partial response,
    /// MISCONFIGURED for a local problem (trust store, proxy setting), with the transport's
    /// stages and its own `failure` word when it has them.
    Network(Box<Observation>),
    /// The request was not sent: its credential could not be obtained (OAuth). Carries the
    /// observation the OAuth client classified (MISCONFIGURED `mcp_oauth`, `mcp_login`).
    Refused(Box<Observation>),
}

impl TransportError {
    /// The attempt ran out (or was aborted) before a complete answer: UNREACHABLE when
    /// nothing arrived, UNKNOWN after a partial response, with the bound that set the deadline.
    pub fn unanswered(attempt: &Attempt) -> TransportError {
        TransportError::timed_out(attempt.bound(), attempt.response_seen())
    }

    /// [`TransportError::unanswered`] from its parts.
    pub fn timed_out(bound: Bound, response_seen: bool) -> TransportError {
        let status = if response_seen {
            Status::Unknown
        } else {
            Status::Unreachable
        };
        let note = Note::TimedOut {
            bound,
            response_seen,
        };
        let mut o = Observation::failed(status, Reason::Engine(note));
        o.response_seen = response_seen;
        TransportError::Network(Box::new(o))
    }

    /// A status whose head said nothing more.
    #[cfg(test)]
    pub fn status(status: u16) -> TransportError {
        TransportError::Status {
            status,
            head: HeadFacts::default(),
        }
    }

    /// What this failure carried, for the era decision ([`super::era::after_discover`]).
    pub fn rejection(&self) -> Rejection {
        match self {
            TransportError::Rpc { code, status } => Rejection::Rpc {
                code: *code,
                status: *status,
            },
            TransportError::Status { status, .. } => Rejection::Status(*status),
            _ => Rejection::Other,
        }
    }

    /// Whether any response arrived: always, except for a network failure that saw nothing, a
    /// process that exited in silence, and one that could not be started.
    pub fn response_seen(&self) -> bool {
        match self {
            TransportError::Network(o) => o.response_seen,
            TransportError::Exited(_) | TransportError::Unstartable(_) => false,
            _ => true,
        }
    }
}

/// Moves JSON-RPC messages of one target run to and from the server.
///
/// One transport serves one target run: all dimensions share its connection, session or
/// process. Every method is bounded by the attempt's deadline and must register an abort hook
/// (`attempt.on_abort`) that interrupts any blocking I/O it starts, and must call
/// `attempt.mark_response()` on the first response byte.
pub trait Transport: Send {
    /// Which transport this is, and so which fallback rule applies to its rejections
    /// ([`super::era::after_discover`]).
    fn kind(&self) -> McpTransport;

    /// A reachability probe without protocol traffic (HTTP: `HEAD`). `None` when the
    /// transport has no such probe; reachability then times session establishment.
    fn probe(&mut self, attempt: &Attempt) -> Option<Result<Probe, TransportError>>;

    /// Sends one request (`out.id` is `Some`) and returns its result.
    fn request(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError>;

    /// Sends independent requests at once and returns what [`Transport::request`] would have
    /// returned for each, in the same order. HTTP gives each its own connection of the run
    /// beside the first where that is faster than one after another (a round trip costs more
    /// than a lane: see `streamable_http::lanes_pay`); stdio writes them all and matches the responses by
    /// id. This default sends them one after another.
    fn request_all(
        &mut self,
        outs: &[Outgoing<'_>],
        attempt: &Attempt,
    ) -> Vec<Result<Reply, TransportError>> {
        outs.iter().map(|out| self.request(out, attempt)).collect()
    }

    /// Sends one notification (`out.id` is `None`); nothing is awaited but its acceptance.
    fn notify(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError>;

    /// Forgets the connection, session or process an aborted attempt used: the next request
    /// starts afresh. Cleanup that needs the network is deferred to [`Transport::close`].
    fn discard(&mut self);

    /// What is known of the last request a deadline or an abort left unanswered, beyond the
    /// deadline itself (stdio: that the process was still running, and what it had written
    /// in answer). Empty when nothing was left unanswered or nothing more is known.
    fn unanswered(&self) -> Evidence {
        Evidence::default()
    }

    /// Whether the endpoint speaks the deprecated HTTP+SSE transport: a `GET` opens an event
    /// stream whose first event announces a message endpoint (`event: endpoint`). Asked only
    /// once both eras' POSTs were refused by status; bounded by the attempt, the first event
    /// only, its data never kept. Only HTTP has such a thing.
    fn opens_deprecated_sse(&mut self, _attempt: &Attempt) -> bool {
        false
    }

    /// What the run's OAuth established beside its token, for the authentication check
    /// (`None`: no OAuth, as on stdio).
    fn auth_facts(&self) -> Option<AuthFacts> {
        None
    }

    /// Best-effort end-of-run cleanup within `attempt` (legacy HTTP: `DELETE` of every session
    /// this run was assigned; stdio: stdin closed, a short grace, the group terminated). The
    /// engine's watchdog cuts it at the cleanup budget like any call. Never reports anything.
    fn close(&mut self, attempt: &Attempt);
}

/// What one received message means while a transport waits for the response to its request.
pub(crate) enum Received {
    /// Our response, or the failure it stands for: stop waiting.
    Ours(Result<Box<RawValue>, TransportError>),
    /// A server request: send these bytes back on the session, then keep waiting.
    Answer(Vec<u8>),
}

/// The one rule every transport applies to what the server sends while we wait for request
/// `want`: our response ends the wait (an RPC error carried with `status`, the HTTP status or
/// `None` on stdio); another id is malformed; notifications are ignored; in a legacy session a
/// server `ping` is answered with an empty result and any other request rejected with −32601;
/// a 2026-07-28 exchange allows no server requests. A batch is taken in order up to our
/// response.
pub(crate) fn receive(
    message: Incoming,
    want: u64,
    era: Era,
    status: Option<u16>,
) -> Vec<Received> {
    receive_among(message, &[want], era, status)
        .into_iter()
        .map(|(_, received)| received)
        .collect()
}

/// Takes one message received while the transport waits for the response to `want`, by the
/// rule of [`receive`]: our response (or the failure it stands for) ends the wait; each server
/// request is answered through `send`, counted in `answered` ([`answer`]). `None`: keep
/// waiting.
pub(crate) fn until_ours(
    message: Incoming,
    want: u64,
    era: Era,
    status: Option<u16>,
    answered: &mut usize,
    send: &mut dyn FnMut(&[u8]),
) -> Option<Result<Box<RawValue>, TransportError>> {
    for received in receive(message, want, era, status) {
        match received {
            Received::Ours(result) => return Some(result),
            Received::Answer(body) => {
                if let Err(e) = answer(answered, || send(&body)) {
                    return Some(Err(e));
                }
            }
        }
    }
    None
}

/// Answers one server request received while a request of ours waits: at most
/// [`MAX_ANSWERS`] per request (`answered` counts them), one more is malformed. `send` writes
/// the answer, best effort: its own fate never changes the exchange (a failed write shows up
/// as whatever the server does next).
pub(crate) fn answer(answered: &mut usize, send: impl FnOnce()) -> Result<(), TransportError> {
    if *answered == MAX_ANSWERS {
        return Err(TransportError::Malformed(Malformed::TooManyServerRequests));
    }
    *answered += 1;
    send();
    Ok(())
}

/// [`receive`] while the requests `wanted` are all in flight: each of our responses comes with
/// the index in `wanted` of the request it answers, or `None` when it concerns every request
/// still waiting (another id is malformed; an error with a `null` id answers whatever is in
/// flight). A batch is taken in order until every request in it was answered.
pub(crate) fn receive_among(
    message: Incoming,
    wanted: &[u64],
    era: Era,
    status: Option<u16>,
) -> Vec<(Option<usize>, Received)> {
    let mut out = Vec::new();
    let mut answered = 0;
    classify(message, wanted, era, status, &mut answered, &mut out);
    out
}

fn classify(
    message: Incoming,
    wanted: &[u64],
    era: Era,
    status: Option<u16>,
    answered: &mut usize,
    out: &mut Vec<(Option<usize>, Received)>,
) {
    match message {
        Incoming::Response { id, outcome } => {
            let index = wanted.iter().position(|w| jsonrpc::id_matches(*w, &id));
            let rpc = |e: jsonrpc::RpcError| TransportError::Rpc {
                code: e.code,
                status,
            };
            let (index, outcome) = match index {
                Some(i) => (Some(i), outcome.map_err(rpc)),
                None if id.is_null() && outcome.is_err() => (None, outcome.map_err(rpc)),
                None => (None, Err(TransportError::Malformed(Malformed::IdMismatch))),
            };
            // A response for every request still waiting ends the wait for all of them.
            *answered = match index {
                Some(_) => answered.saturating_add(1),
                None => wanted.len(),
            };
            out.push((index, Received::Ours(outcome)));
        }
        Incoming::Notification => {}
        Incoming::Request { .. } if era.is_modern() => {
            *answered = wanted.len();
            out.push((
                None,
                Received::Ours(Err(TransportError::Malformed(
                    Malformed::StatelessServerRequest,
                ))),
            ));
        }
        Incoming::Request { id, method, .. } => {
            let answer = if method == "ping" {
                jsonrpc::encode_result(&id, &empty_result())
            } else {
                jsonrpc::encode_error(&id, METHOD_NOT_FOUND, "Method not found")
            };
            out.push((None, Received::Answer(answer)));
        }
        Incoming::Batch(messages) => {
            for m in messages {
                classify(m, wanted, era, status, answered, out);
                if *answered >= wanted.len() {
                    return;
                }
            }
        }
    }
}

/// `{}` as a raw JSON-RPC result.
fn empty_result() -> Box<RawValue> {
    // A constant that is valid JSON: the fallback is never taken.
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Revision;

    fn parse(s: &str) -> Incoming {
        jsonrpc::parse(s.as_bytes()).unwrap_or(Incoming::Batch(Vec::new()))
    }

    const LEGACY: Era = Era::Legacy(Revision::V2025_11_25);

    #[test]
    fn only_rpc_errors_and_statuses_are_rejections_the_era_decision_reads() {
        use crate::contract::Bound;
        use crate::process::ExitInfo;
        use crate::result::reason::{Limit, StartProblem};
        let rpc = TransportError::Rpc {
            code: -32601,
            status: Some(404),
        };
        assert_eq!(
            rpc.rejection(),
            Rejection::Rpc {
                code: -32601,
                status: Some(404)
            }
        );
        assert_eq!(
            TransportError::status(400).rejection(),
            Rejection::Status(400)
        );
        for other in [
            TransportError::Malformed(Malformed::NotJsonRpc),
            TransportError::Limit(Limit::Response),
            TransportError::timed_out(Bound::TimeoutMs, false),
            TransportError::timed_out(Bound::TimeoutMs, true),
            TransportError::Exited(ExitInfo::Code(1)),
            TransportError::Unstartable(StartProblem::StartFailed),
        ] {
            assert_eq!(other.rejection(), Rejection::Other, "{other:?}");
        }
    }

    #[test]
    fn a_batch_is_answered_in_order_up_to_our_response() {
        let got = receive(
            parse(
                r#"[{"jsonrpc":"2.0","method":"notifications/progress"},
                    {"jsonrpc":"2.0","id":"p","method":"ping"},
                    {"jsonrpc":"2.0","id":9,"method":"sampling/createMessage"},
                    {"jsonrpc":"2.0","id":7,"result":{}},
                    {"jsonrpc":"2.0","id":"late","method":"ping"}]"#,
            ),
            7,
            LEGACY,
            Some(200),
        );
        assert_eq!(got.len(), 3);
        assert!(
            matches!(&got[0], Received::Answer(b) if String::from_utf8_lossy(b).contains(r#""result":{}"#))
        );
        assert!(
            matches!(&got[1], Received::Answer(b) if String::from_utf8_lossy(b).contains("-32601"))
        );
        assert!(matches!(&got[2], Received::Ours(Ok(_))));
    }

    #[test]
    fn wrong_ids_rpc_errors_and_modern_server_requests() {
        let wrong = receive(
            parse(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#),
            7,
            LEGACY,
            None,
        );
        assert!(matches!(
            &wrong[..],
            [Received::Ours(Err(TransportError::Malformed(_)))]
        ));
        let rpc = receive(
            parse(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}"#),
            7,
            LEGACY,
            Some(200),
        );
        assert!(matches!(
            &rpc[..],
            [Received::Ours(Err(TransportError::Rpc {
                code: -32602,
                status: Some(200)
            }))]
        ));
        let modern = Era::Modern;
        let request = receive(
            parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            7,
            modern,
            None,
        );
        assert!(matches!(
            &request[..],
            [Received::Ours(Err(TransportError::Malformed(_)))]
        ));
    }
}
