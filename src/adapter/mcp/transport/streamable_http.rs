//! Streamable HTTP: every message is a POST to the configured endpoint, answered by one JSON
//! body or by an event stream that is read only until our response.
//!
//! * Requests send `Accept: application/json, text/event-stream` and JSON; the modern era adds
//!   `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` (and `Mcp-Name`/`Mcp-Param-*` when given)
//!   and never a session id; a legacy session adds its `Mcp-Session-Id` and negotiated
//!   `MCP-Protocol-Version`.
//! * 401/403 is an authentication failure whatever the body; any other status than 200 is a
//!   rejection, classified by its JSON-RPC error body when it has one. Redirects are never
//!   followed.
//! * Each response may use 1 MiB: a JSON body, or an event stream together with its
//!   resumptions. A legacy stream that ends without our response after events with an id is
//!   resumed with at most three `GET`s carrying `Last-Event-ID`, after the server's `retry`
//!   delay if it fits the deadline. Stateless streams are never resumed.
//! * Notifications are ignored; in a legacy session the server's `ping` is answered with an
//!   empty result and every other server request is rejected with −32601, each POSTed back on
//!   the session — at most [`MAX_ANSWERS`](crate::result::reason::MAX_ANSWERS) per response
//!   (with its resumptions): one more is a protocol violation, so a stream of server requests
//!   cannot keep us posting.
//! * The session id an `initialize` response assigns (exactly one value of 1–4096 visible
//!   ASCII characters) is deleted at the end of the run, each `DELETE` within
//!   min(250 ms, what is left of the engine's cleanup budget); so is the session of an
//!   attempt that was discarded.
//!
//! * Independent requests ([`Transport::request_all`]: the inventories) go out at once where
//!   that is faster ([`lanes_pay`], from the kernel's round trip of the run's connection): the first on the run's connection, each other on a connection of its own (a
//!   lane, kept for the next round, with the run's session id and credential); otherwise one
//!   after another.
//!
//! Bytes travel through the project's network layer ([`crate::net`]): one keep-alive client
//! per target run (verified TLS, no redirects, stage timings, the attempt's deadline and abort
//! hook, one classification of connection failures).

use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use super::{Mirror, Outgoing, Probe, Reply, ResponseMode, Transport, TransportError};
use crate::adapter::credential::Authorization;
use crate::adapter::mcp::era::Era;
use crate::adapter::mcp::jsonrpc::{self, Incoming};
use crate::adapter::mcp::param_headers::encode_value;
use crate::adapter::mcp::sse::SseParser;
use crate::config::McpTransport;
use crate::contract::Bound;
use crate::contract::Revision;
use crate::net::{
    self, Client, Endpoint, HeadFacts, HeaderMap, Method, Request, Response, Reuse, Timings,
};
use crate::oauth;
use crate::result::reason::{Limit, Malformed};
use crate::result::{Fact, Key, Observation, Steps};
use crate::run_plan::{Credential, TargetPlan};
use crate::runtime::sync::lock;
use crate::runtime::{Attempt, Deadline, threads};

/// Bytes one response may use (a JSON body, or an event stream with its resumptions).
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;
/// Resumption `GET`s per request at most.
pub const MAX_RESUMPTIONS: usize = 3;
/// Time each end-of-run `DELETE` may take at most (within the engine's cleanup budget).
pub const DELETE_BUDGET: Duration = Duration::from_millis(250);
/// What a request sent beside the run's own costs, its connection aside: a thread, a client,
/// buffers, the server's accept. On the 2-core development VM two lanes added 0.55 ms of CPU
/// (perf stat task-clock) and 0.6 ms of wall time to a passive check of the fake server when
/// the machine was quiet, 2 ms of wall time when it was busy (load average 8): the busy figure
/// is the one taken, since a round trip measured on a busy machine is long for want of a CPU,
/// which more threads do not cure.
const LANE_COST: Duration = Duration::from_millis(1);
/// Longest session id or event id accepted.
const MAX_ID_BYTES: usize = 4096;
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const SSE: &str = "text/event-stream";

/// A legacy session this run was assigned.
#[derive(Clone, Debug)]
struct SessionId {
    id: String,
    version: Option<Revision>,
}

/// The Streamable HTTP transport of one target run.
pub struct HttpTransport {
    endpoint: Endpoint,
    credentials: Authorization,
    client: Client,
    session: Option<SessionId>,
    retired: Vec<SessionId>,
    /// The run's other connections, one per request sent beside the first at once
    /// ([`Transport::request_all`]); kept for the next round.
    lanes: Vec<HttpTransport>,
    /// What the run's connection has shown of the link.
    link: Link,
    /// Server requests answered during the exchange in flight (at most [`MAX_ANSWERS`](crate::result::reason::MAX_ANSWERS)).
    answered: usize,
}

/// What the run's connections have shown of the link: the kernel's round trip of the last
/// connection opened (`TCP_INFO` right after its handshake, [`Timings::rtt`]), the network's
/// alone. What our clock says of an exchange holds the server's work and every scheduling
/// delay of a busy machine besides, which no lane cures: a loaded loopback exchange timed at
/// milliseconds opened lanes it could not profit from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Link {
    rtt: Option<Duration>,
}

impl Link {
    fn record(&mut self, timings: &Timings) {
        if timings.new_connection {
            self.rtt = timings.rtt;
            #[cfg(test)]
            if let Some(far) = far_link::assumed() {
                self.rtt = Some(far);
            }
        }
    }
}

/// Whether `count` requests sent at once, `opening` of them on connections still to be opened,
/// take less time than one after another over a link whose round trip is `rtt`: `count − 1`
/// round trips saved, against one connection set-up (the new connections open side by side:
/// the TCP handshake, and over `https` a TLS 1.3 handshake's round trip) and [`LANE_COST`]
/// per request beside the first. No round trip known (no kernel sample, a proxy): one after
/// another.
///
/// So on loopback or a LAN, where a round trip is far below a lane's cost, the requests
/// follow each other on the run's connection however loaded the machine and however slow the
/// server; across a WAN over plain HTTP the inventories go out together (one round trip saved
/// of three); over HTTPS a new connection's TCP and TLS round trips cost what the overlap
/// saves, so only lanes already open are used.
fn lanes_pay(count: usize, opening: usize, rtt: Option<Duration>, https: bool) -> bool {
    let Some(rtt) = rtt else {
        return false;
    };
    let beside = u32::try_from(count.saturating_sub(1)).unwrap_or(u32::MAX);
    let setup = match (opening, https) {
        (0, _) => Duration::ZERO,
        (_, false) => rtt,
        (_, true) => rtt.saturating_mul(2),
    };
    rtt.saturating_mul(beside) > setup.saturating_add(LANE_COST.saturating_mul(beside))
}

/// The test seam for a far link: loopback's kernel round trip is microseconds, so tests of
/// what lanes do (not of when they pay) let this thread's connections report a WAN's.
#[cfg(test)]
pub(crate) mod far_link {
    use std::cell::Cell;
    use std::time::Duration;

    thread_local! {
        static ASSUMED: Cell<Option<Duration>> = const { Cell::new(None) };
    }

    /// Until the guard drops, new connections of this thread's transports report `rtt`.
    pub(crate) fn assume(rtt: Duration) -> Guard {
        ASSUMED.with(|a| a.set(Some(rtt)));
        Guard(())
    }

    pub(crate) fn assumed() -> Option<Duration> {
        ASSUMED.with(Cell::get)
    }

    /// Lifts the assumption when dropped.
    pub(crate) struct Guard(());

    impl Drop for Guard {
        fn drop(&mut self) {
            ASSUMED.with(|a| a.set(None));
        }
    }
}

impl HttpTransport {
    /// The transport for a target, after the offline checks every HTTP-speaking adapter makes
    /// ([`net::preflight()`]); a failure is MISCONFIGURED with the rule that failed as evidence.
    pub fn configure(ctx: &TargetPlan) -> Result<HttpTransport, Observation> {
        // One kept-alive connection for the whole run, plain HTTP and HTTPS alike (the
        // delayed-ACK stall that once made plain HTTP open a connection per request is
        // cured in the network layer: see `net::tcp`).
        let client = Client::within(Reuse::KeepAlive, ctx.target.allow.clone());
        let fixed = crate::adapter::credential::static_header(&ctx.credential);
        let endpoint = net::preflight(&ctx.target.endpoint, fixed.as_deref(), &client)?;
        if let Credential::OAuth(settings) = &ctx.credential {
            oauth::check_offline(settings, &endpoint).map_err(|e| e.observation())?;
        }
        let credentials = Authorization::new(&ctx.credential, &endpoint, &ctx.secrets);
        Ok(HttpTransport::new(endpoint, credentials, client))
    }

    /// A transport for a validated endpoint (used exactly as configured) over `client`.
    pub fn new(endpoint: Endpoint, credentials: Authorization, client: Client) -> HttpTransport {
        HttpTransport {
            endpoint,
            credentials,
            client,
            session: None,
            retired: Vec::new(),
            lanes: Vec::new(),
            link: Link::default(),
            answered: 0,
        }
    }

    /// A transport for one more connection of this run: the same endpoint and session, the
    /// credential this run's requests carry now.
    fn lane(&self, authorization: Option<String>) -> HttpTransport {
        HttpTransport {
            endpoint: self.endpoint.clone(),
            credentials: Authorization::Static(authorization),
            client: self.client.sibling(),
            session: self.session.clone(),
            retired: Vec::new(),
            lanes: Vec::new(),
            link: Link::default(),
            answered: 0,
        }
    }

    /// Requests at once: the first on this connection, each other one on a lane of its own,
    /// in a thread of its own. The lanes keep their connections for the next round.
    fn overlap(
        &mut self,
        outs: &[Outgoing<'_>],
        attempt: &Attempt,
    ) -> Vec<Result<Reply, TransportError>> {
        let Some((first, rest)) = outs.split_first() else {
            return Vec::new();
        };
        // What this run's requests carry (an OAuth token is obtained here, once).
        let authorization = match self.authorization(Method::Post, attempt) {
            Ok(a) => a,
            Err(e) => return outs.iter().map(|_| Err(e.clone())).collect(),
        };
        let mut lanes = std::mem::take(&mut self.lanes);
        while lanes.len() < rest.len() {
            lanes.push(self.lane(authorization.clone()));
        }
        for lane in &mut lanes {
            lane.credentials = Authorization::Static(authorization.clone());
            lane.session.clone_from(&self.session);
        }
        let cells: Vec<Mutex<&mut HttpTransport>> = lanes.iter_mut().map(Mutex::new).collect();
        // Each lane's request has its own response flag: bytes answering one are no
        // response to another that then times out.
        let besides: Vec<Attempt> = rest.iter().map(|_| attempt.beside()).collect();
        let mut replies = Vec::with_capacity(outs.len());
        std::thread::scope(|scope| {
            let running: Vec<_> = cells
                .iter()
                .zip(rest)
                .zip(&besides)
                .map(|((cell, out), beside)| {
                    let job = move || lock(cell).request(out, beside);
                    threads::spawn_scoped(scope, "mcp-lane", threads::WORKER_STACK, job).ok()
                })
                .collect();
            replies.push(self.request(first, attempt));
            let lanes = running.into_iter().zip(&cells).zip(rest).zip(&besides);
            for (((handle, cell), out), beside) in lanes {
                // No thread to be had: the same request, here and now.
                let reply = match handle.map(|h| h.join()) {
                    Some(Ok(reply)) => reply,
                    Some(Err(_)) => Err(TransportError::unanswered(beside)),
                    None => lock(cell).request(out, beside),
                };
                replies.push(reply);
            }
        });
        drop(cells);
        self.lanes = lanes;
        replies
    }

    /// The `Authorization` value of a request with `method`: a static credential, or for
    /// OAuth a token (obtained or refreshed through this run's client); the reachability
    /// `HEAD` never carries an OAuth token.
    fn authorization(
        &mut self,
        method: Method,
        attempt: &Attempt,
    ) -> Result<Option<String>, TransportError> {
        match method {
            Method::Head => Ok(self.credentials.fixed().map(str::to_string)),
            _ => self
                .credentials
                .header(&mut self.client, attempt)
                .map_err(|e| match e {
                    oauth::OAuthError::Network(f) => {
                        TransportError::Network(Box::new(f.observation()))
                    }
                    other => TransportError::Refused(Box::new(other.observation())),
                }),
        }
    }

    /// Sends one exchange within the attempt, with the run's credentials; every other header
    /// comes from the caller. The one path every request takes. The reachability `HEAD`
    /// carries a static credential but never an OAuth token: a reachability-only check never
    /// contacts the authorization server.
    fn send(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        attempt: &Attempt,
        once: bool,
    ) -> Result<Response, TransportError> {
        let auth = self.authorization(method, attempt)?;
        let mut req = Request::new(method, &self.endpoint);
        if once {
            req = req.once();
        }
        for (name, value) in headers {
            req = req.header(name, value);
        }
        if let Some(auth) = auth.as_deref() {
            req = req.header("authorization", auth);
        }
        if let Some(body) = body {
            req = req.body(body);
        }
        let response = self.client.send(attempt, &req).map_err(|f| {
            let mut o = f.observation();
            // The configured host and port: which endpoint could not be reached.
            o.evidence
                .set(Key::Address, Fact::Config(self.endpoint.address()));
            TransportError::Network(Box::new(o))
        })?;
        self.link.record(response.timings());
        Ok(response)
    }

    /// POSTs one message with the headers its era calls for: the era's revision as
    /// `MCP-Protocol-Version` (none for the handshake); modern requests add `Mcp-Method` and
    /// the mirrored names and never a session id; legacy ones carry the session id, and the
    /// session remembers the revision it was used with (its `DELETE` carries it).
    fn post(
        &mut self,
        method: &str,
        body: &[u8],
        era: Era,
        mirror: Mirror<'_>,
        attempt: &Attempt,
    ) -> Result<Response, TransportError> {
        let revision = era.revision();
        let session = match (era, self.session.as_mut()) {
            (Era::Modern, _) | (_, None) => None,
            (_, Some(session)) => {
                if revision.is_some() {
                    session.version = revision;
                }
                Some(session.id.clone())
            }
        };
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(8);
        headers.push(("accept", ACCEPT_BOTH));
        headers.push(("content-type", "application/json"));
        headers.extend(revision.map(|r| ("mcp-protocol-version", r.as_str())));
        headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
        let (name, params) = if era.is_modern() {
            headers.push(("mcp-method", method));
            let named: Vec<(String, &str)> = mirror
                .params
                .iter()
                .map(|(h, v)| (format!("mcp-param-{h}"), v.as_str()))
                .collect();
            (mirror.name.map(encode_value), named)
        } else {
            (None, Vec::new())
        };
        headers.extend(name.as_deref().map(|n| ("mcp-name", n)));
        headers.extend(params.iter().map(|(h, v)| (h.as_str(), *v)));
        // A functional call is never sent twice (the specification), not even after a stale
        // kept-alive connection; any other message may be, when nothing can have arrived.
        let once = method == "tools/call";
        self.send(Method::Post, &headers, Some(body), attempt, once)
    }

    /// Keeps the session id an `initialize` response assigned. Returns whether one was.
    fn adopt_session(&mut self, headers: &HeaderMap) -> Result<bool, TransportError> {
        let mut values = headers.get_all("mcp-session-id").iter();
        let value = match (values.next(), values.next()) {
            (None, _) => return Ok(false),
            (Some(value), None) => value.as_bytes(),
            (Some(_), Some(_)) => {
                return Err(TransportError::Malformed(Malformed::SeveralSessionIds));
            }
        };
        let visible = value.iter().all(|b| (0x21..=0x7E).contains(b));
        if value.is_empty() || value.len() > MAX_ID_BYTES || !visible {
            return Err(TransportError::Malformed(Malformed::InvalidSessionId));
        }
        let id = String::from_utf8_lossy(value).into_owned();
        let session = SessionId { id, version: None };
        if let Some(old) = self.session.replace(session) {
            self.retired.push(old);
        }
        Ok(true)
    }

    /// Handles one message received while waiting for the response to `want`; returns the
    /// outcome once it is our response.
    fn on_message(
        &mut self,
        data: &[u8],
        want: u64,
        era: Era,
        attempt: &Attempt,
    ) -> Option<Result<Box<RawValue>, TransportError>> {
        match jsonrpc::parse(data) {
            Ok(message) => self.on_incoming(message, want, era, attempt),
            Err(_) => Some(Err(TransportError::Malformed(Malformed::NotJsonRpc))),
        }
    }

    /// [`super::until_ours`] over HTTP: a server request is answered with a `POST` of its own
    /// on the session.
    fn on_incoming(
        &mut self,
        message: Incoming,
        want: u64,
        era: Era,
        attempt: &Attempt,
    ) -> Option<Result<Box<RawValue>, TransportError>> {
        let mut answered = self.answered;
        let outcome =
            super::until_ours(message, want, era, Some(200), &mut answered, &mut |body| {
                if let Ok(response) = self.post("", body, era, Mirror::default(), attempt) {
                    drain(response);
                }
            });
        self.answered = answered;
        outcome
    }

    /// Reads an event stream until our response, resuming a legacy stream when it ends early.
    fn stream(
        &mut self,
        response: Response,
        want: u64,
        era: Era,
        attempt: &Attempt,
    ) -> Result<Box<RawValue>, TransportError> {
        let budget = usize::try_from(MAX_RESPONSE_BYTES).unwrap_or(usize::MAX);
        let mut parser = SseParser::new(budget);
        let mut events = Vec::new();
        let mut timings = response.timings().clone();
        let mut reader = response.into_reader();
        let mut resumptions = 0;
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(|e| {
                let f = Response::read_failure(&e, attempt, timings.clone());
                TransportError::Network(Box::new(f.observation()))
            })?;
            if n == 0 {
                parser.finish();
                let resumable = matches!(era, Era::Legacy(_)) && !parser.last_event_id().is_empty();
                if !resumable {
                    return Err(TransportError::Malformed(Malformed::StreamEnded));
                }
                if resumptions == MAX_RESUMPTIONS {
                    return Err(TransportError::Limit(Limit::Resumptions));
                }
                resumptions += 1;
                let resumed = self.resume(&parser, era, attempt)?;
                timings = resumed.timings().clone();
                reader = resumed.into_reader();
                continue;
            }
            let fed = parser.feed(buf.get(..n).unwrap_or_default(), &mut events);
            // Events without data (an MCP priming event) carry only their id and retry.
            for event in events.drain(..).filter(|e| !e.data.is_empty()) {
                if let Some(outcome) = self.on_message(event.data.as_bytes(), want, era, attempt) {
                    return outcome;
                }
            }
            if fed.is_err() || parser.bytes_seen() > MAX_RESPONSE_BYTES {
                return Err(TransportError::Limit(Limit::Response));
            }
        }
    }

    /// Reconnects to a legacy stream with `GET` and `Last-Event-ID`, after the server's
    /// `retry` delay. A delay that does not fit the deadline ends the attempt without a GET.
    fn resume(
        &mut self,
        parser: &SseParser,
        era: Era,
        attempt: &Attempt,
    ) -> Result<Response, TransportError> {
        let last = parser.last_event_id();
        if last.len() > MAX_ID_BYTES || last.bytes().any(|b| b < 0x20 || b == 0x7F) {
            return Err(TransportError::Malformed(Malformed::InvalidEventId));
        }
        let wait = Duration::from_millis(parser.retry_ms().unwrap_or(0));
        if wait >= attempt.remaining() {
            return Err(TransportError::timed_out(attempt.bound(), true));
        }
        pause(wait, attempt)?;
        let session = self.session.as_ref().map(|s| s.id.clone());
        let mut headers = vec![("accept", SSE), ("last-event-id", last)];
        headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
        if let Era::Legacy(revision) = era {
            headers.push(("mcp-protocol-version", revision.as_str()));
        }
        let response = self.send(Method::Get, &headers, None, attempt, false)?;
        let status = response.status();
        if matches!(status, 401 | 403) {
            return Err(self.refused(status, response));
        }
        if status != 200 {
            return Err(TransportError::Malformed(Malformed::ResumptionStatus));
        }
        if media_type(response.headers()) != Some(ResponseMode::Sse) {
            return Err(TransportError::Malformed(Malformed::ResumptionContentType));
        }
        Ok(response)
    }

    /// One request and its response (see [`Transport::request`]).
    fn exchange(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        let want = out.id.unwrap_or(0);
        self.answered = 0;
        let response = self.post(out.method, out.body, out.era, out.mirror, attempt)?;
        let status = response.status();
        if matches!(status, 401 | 403) {
            return Err(self.refused(status, response));
        }
        if status != 200 {
            return Err(rejection(status, response, &self.endpoint));
        }
        let session_issued = match out.era {
            Era::Handshake => self.adopt_session(response.headers())?,
            _ => false,
        };
        let mode = media_type(response.headers())
            .ok_or(TransportError::Malformed(Malformed::ContentType))?;
        let result = match mode {
            ResponseMode::Json => {
                let bytes = read_limited(response)?;
                self.on_message(&bytes, want, out.era, attempt)
                    .unwrap_or(Err(TransportError::Malformed(
                        Malformed::BodyWithoutResponse,
                    )))
            }
            ResponseMode::Sse => self.stream(response, want, out.era, attempt),
        }?;
        Ok(Reply {
            result,
            mode,
            session_issued,
        })
    }

    /// One notification; any 2xx accepts it (see [`Transport::notify`]).
    fn deliver(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        let response = self.post(out.method, out.body, out.era, out.mirror, attempt)?;
        let status = response.status();
        if (200..300).contains(&status) {
            drain(response);
            Ok(())
        } else {
            Err(self.refused(status, response))
        }
    }

    /// A status refused whatever its body (401/403, a notification's non-2xx), with what its
    /// head said.
    fn refused(&self, status: u16, response: Response) -> TransportError {
        let head = HeadFacts::of(&self.endpoint, status, response.headers());
        drain(response);
        TransportError::Status { status, head }
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> McpTransport {
        McpTransport::Http
    }

    fn opens_deprecated_sse(&mut self, attempt: &Attempt) -> bool {
        /// Enough for the `endpoint` event (its data is a path), never the stream.
        const FIRST_EVENT: usize = 4096;
        let Ok(response) = self.send(Method::Get, &[("accept", SSE)], None, attempt, false) else {
            return false;
        };
        if response.status() != 200 || media_type(response.headers()) != Some(ResponseMode::Sse) {
            return false;
        }
        let mut reader = response.into_reader();
        let mut parser = SseParser::new(FIRST_EVENT);
        let (mut events, mut chunk, mut read) = (Vec::new(), [0u8; 1024], 0);
        while events.is_empty() && read < FIRST_EVENT {
            match reader.read(&mut chunk) {
                Ok(n @ 1..) if parser.feed(&chunk[..n], &mut events).is_ok() => read += n,
                _ => break,
            }
        }
        // The stream never ends: this connection is not reused.
        self.client.discard();
        events.first().is_some_and(|e| e.event_type == "endpoint")
    }

    fn probe(&mut self, attempt: &Attempt) -> Option<Result<Probe, TransportError>> {
        let started = Instant::now();
        let result = self.send(
            Method::Head,
            &[("accept", ACCEPT_BOTH)],
            None,
            attempt,
            false,
        );
        Some(result.map(|response| {
            let mut steps = Steps::default();
            response.timings().write_steps(&mut steps);
            let latency = response
                .timings()
                .latency
                .unwrap_or_else(|| started.elapsed());
            let status = response.status();
            drain(response);
            Probe {
                latency,
                steps,
                status,
            }
        }))
    }

    fn request(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        self.exchange(out, attempt).map_err(|e| cut_off(e, attempt))
    }

    fn request_all(
        &mut self,
        outs: &[Outgoing<'_>],
        attempt: &Attempt,
    ) -> Vec<Result<Reply, TransportError>> {
        let opening = outs
            .len()
            .saturating_sub(1)
            .saturating_sub(self.lanes.len());
        let https = self.endpoint.is_https();
        if outs.len() < 2 || !lanes_pay(outs.len(), opening, self.link.rtt, https) {
            return outs.iter().map(|out| self.request(out, attempt)).collect();
        }
        self.overlap(outs, attempt)
    }

    fn notify(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        self.deliver(out, attempt).map_err(|e| cut_off(e, attempt))
    }

    fn discard(&mut self) {
        for lane in &mut self.lanes {
            lane.client.discard();
        }
        self.lanes.clear();
        self.client.discard();
        if let Some(session) = self.session.take() {
            self.retired.push(session);
        }
    }

    fn auth_facts(&self) -> Option<oauth::AuthFacts> {
        self.credentials.facts().cloned()
    }

    fn close(&mut self, attempt: &Attempt) {
        let sessions: Vec<SessionId> = self.retired.drain(..).chain(self.session.take()).collect();
        for session in sessions {
            if attempt.expired() {
                break;
            }
            let mut headers = vec![
                ("accept", ACCEPT_BOTH),
                ("mcp-session-id", session.id.as_str()),
            ];
            headers.extend(
                session
                    .version
                    .map(|v| ("mcp-protocol-version", v.as_str())),
            );
            // Best effort, each within its own share of the cleanup attempt (which the watchdog
            // can cut): the outcome never changes an observation.
            let cleanup = attempt.within(Deadline::after(DELETE_BUDGET, Bound::Cleanup));
            if let Ok(response) = self.send(Method::Delete, &headers, None, &cleanup, false) {
                drain(response);
            }
        }
        for lane in &mut self.lanes {
            lane.client.discard();
        }
        self.lanes.clear();
        self.client.discard();
    }
}

/// Whatever an aborted exchange met last (an EOF from the shutdown, a half-read event) is not
/// an answer: it is the deadline.
fn cut_off(e: TransportError, attempt: &Attempt) -> TransportError {
    if attempt.is_aborted() && !matches!(e, TransportError::Network(_)) {
        TransportError::unanswered(attempt)
    } else {
        e
    }
}

/// The outcome of a response whose status is not 200 (nor 401/403): its JSON-RPC error when
/// the body holds one, else the status and what its head said (where a redirect points).
fn rejection(status: u16, response: Response, endpoint: &Endpoint) -> TransportError {
    let head = HeadFacts::of(endpoint, status, response.headers());
    let status_only = TransportError::Status { status, head };
    match read_limited(response) {
        Ok(bytes) => match jsonrpc::parse(&bytes) {
            Ok(Incoming::Response {
                outcome: Err(error),
                ..
            }) => TransportError::Rpc {
                code: error.code,
                status: Some(status),
            },
            _ => status_only,
        },
        Err(limit @ TransportError::Limit(_)) => limit,
        Err(_) => status_only,
    }
}

/// The response mode a `Content-Type` names (parameters ignored).
fn media_type(headers: &HeaderMap) -> Option<ResponseMode> {
    let value = headers.get("content-type")?.to_str().ok()?;
    let media = value.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/json") {
        Some(ResponseMode::Json)
    } else if media.eq_ignore_ascii_case(SSE) {
        Some(ResponseMode::Sse)
    } else {
        None
    }
}

/// Reads a whole body of at most [`MAX_RESPONSE_BYTES`].
fn read_limited(response: Response) -> Result<Vec<u8>, TransportError> {
    match response.read_body(MAX_RESPONSE_BYTES) {
        Ok(body) if body.over_limit => Err(TransportError::Limit(Limit::Response)),
        Ok(body) => Ok(body.bytes),
        Err(f) => Err(TransportError::Network(Box::new(f.observation()))),
    }
}

/// Reads and drops a body that is not an event stream, so the connection can be reused.
fn drain(response: Response) {
    if media_type(response.headers()) != Some(ResponseMode::Sse) {
        let _ = read_limited(response);
    }
}

/// Waits `wait` (a server's `retry`), returning early on abort.
fn pause(wait: Duration, attempt: &Attempt) -> Result<(), TransportError> {
    const SLICE: Duration = Duration::from_millis(5);
    let until = Instant::now() + wait;
    loop {
        if attempt.is_aborted() {
            return Err(TransportError::timed_out(attempt.bound(), true));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(SLICE));
    }
}

#[cfg(test)]
mod tests;
