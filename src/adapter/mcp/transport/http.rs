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
//!   empty result and every other server request is rejected with −32601, each POSTed back
//!   on the session.
//! * The session id an `initialize` response assigns (exactly one value of 1–4096 visible
//!   ASCII characters) is deleted at the end of the run, each `DELETE` within
//!   min(250 ms, what is left of the engine's cleanup budget); so is the session of an
//!   attempt that was discarded.
//!
//! One keep-alive agent serves the whole target run; an abort shuts it down and a discard
//! replaces it.

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use serde_json::value::RawValue;
use ureq::Agent;
use ureq::http::{HeaderMap, Response};

use super::{Framing, Outgoing, Probe, Reply, ResponseMode, Transport, TransportError};
use crate::adapter::mcp::era::{Channel, Version};
use crate::adapter::mcp::headers::encode_value;
use crate::adapter::mcp::jsonrpc::{self, Incoming};
use crate::adapter::mcp::sse::SseParser;
use crate::adapter::{Attempt, CredentialSource};
use crate::result::{Stage, Status, Steps};

/// Bytes one response may use (a JSON body, or an event stream with its resumptions).
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;
/// Resumption `GET`s per request at most.
pub const MAX_RESUMPTIONS: usize = 3;
/// Time each end-of-run `DELETE` may take at most (within the engine's cleanup budget).
pub const DELETE_BUDGET: Duration = Duration::from_millis(250);
/// Longest session id or event id accepted.
const MAX_ID_BYTES: usize = 4096;
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const SSE: &str = "text/event-stream";

/// A legacy session this run was assigned.
#[derive(Clone, Debug)]
struct SessionId {
    id: String,
    version: Option<Version>,
}

/// The Streamable HTTP transport of one target run.
pub struct HttpTransport {
    endpoint: String,
    credentials: Arc<dyn CredentialSource>,
    agent: Option<Agent>,
    session: Option<SessionId>,
    retired: Vec<SessionId>,
}

impl HttpTransport {
    /// A transport for `endpoint` (used exactly as configured) sending `credentials`.
    pub fn new(endpoint: String, credentials: Arc<dyn CredentialSource>) -> HttpTransport {
        HttpTransport {
            endpoint,
            credentials,
            agent: None,
            session: None,
            retired: Vec::new(),
        }
    }

    /// Sends one exchange bounded by the attempt, with the run's credentials; every other
    /// header comes from the caller. The one path every request takes.
    fn send(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &[u8],
        attempt: &Attempt,
    ) -> Result<Response<ureq::Body>, TransportError> {
        if attempt.expired() {
            return Err(network(attempt));
        }
        let agent = self.agent.get_or_insert_with(net::agent).clone();
        let hook = agent.clone();
        attempt.on_abort(move || hook.shutdown());
        let auth = self.credentials.authorization();
        let auth = auth.as_deref().map(|value| ("authorization", value));
        let headers = headers.iter().copied().chain(auth);
        let timeout = Some(attempt.remaining());
        let url = self.endpoint.as_str();
        let result = match method {
            Method::Post => net::with_headers(agent.post(url), headers)
                .config()
                .timeout_global(timeout)
                .build()
                .send(body),
            Method::Head => net::call(agent.head(url), headers, timeout),
            Method::Get => net::call(agent.get(url), headers, timeout),
            Method::Delete => net::call(agent.delete(url), headers, timeout),
        };
        match result {
            Ok(response) => {
                attempt.mark_response();
                Ok(response)
            }
            Err(_) => Err(network(attempt)),
        }
    }

    /// POSTs one message with the headers its framing calls for.
    fn post(
        &mut self,
        method: &str,
        body: &[u8],
        framing: Framing<'_>,
        attempt: &Attempt,
    ) -> Result<Response<ureq::Body>, TransportError> {
        let session = self.session.as_ref().map(|s| s.id.clone());
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(8);
        headers.push(("accept", ACCEPT_BOTH));
        headers.push(("content-type", "application/json"));
        let (name, params) = match framing {
            Framing::Modern { name, params } => {
                headers.push(("mcp-protocol-version", Version::MODERN.as_str()));
                headers.push(("mcp-method", method));
                let named: Vec<(String, &str)> = params
                    .iter()
                    .map(|(h, v)| (format!("mcp-param-{h}"), v.as_str()))
                    .collect();
                (name.map(encode_value), named)
            }
            Framing::Handshake => {
                headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
                (None, Vec::new())
            }
            Framing::Session { version } => {
                headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
                headers.push(("mcp-protocol-version", version.as_str()));
                (None, Vec::new())
            }
        };
        headers.extend(name.as_deref().map(|n| ("mcp-name", n)));
        headers.extend(params.iter().map(|(h, v)| (h.as_str(), *v)));
        self.send(Method::Post, &headers, body, attempt)
    }

    /// Keeps the session id an `initialize` response assigned. Returns whether one was.
    fn adopt_session(
        &mut self,
        headers: &HeaderMap,
        version: Option<Version>,
    ) -> Result<bool, TransportError> {
        let mut values = headers.get_all("mcp-session-id").iter();
        let value = match (values.next(), values.next()) {
            (None, _) => return Ok(false),
            (Some(value), None) => value.as_bytes(),
            (Some(_), Some(_)) => return Err(TransportError::Malformed("several session ids")),
        };
        let visible = value.iter().all(|b| (0x21..=0x7E).contains(b));
        if value.is_empty() || value.len() > MAX_ID_BYTES || !visible {
            return Err(TransportError::Malformed("invalid session id"));
        }
        let id = String::from_utf8_lossy(value).into_owned();
        if let Some(old) = self.session.replace(SessionId { id, version }) {
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
        framing: Framing<'_>,
        attempt: &Attempt,
    ) -> Option<Result<Box<RawValue>, TransportError>> {
        match jsonrpc::parse(data) {
            Ok(message) => self.on_incoming(message, want, framing, attempt),
            Err(_) => Some(Err(TransportError::Malformed("invalid json-rpc message"))),
        }
    }

    fn on_incoming(
        &mut self,
        message: Incoming,
        want: u64,
        framing: Framing<'_>,
        attempt: &Attempt,
    ) -> Option<Result<Box<RawValue>, TransportError>> {
        match message {
            Incoming::Response { id, outcome } => {
                let ours = jsonrpc::id_matches(want, &id) || (id.is_null() && outcome.is_err());
                Some(if ours {
                    outcome.map_err(|e| TransportError::Rpc {
                        code: e.code,
                        status: Some(200),
                    })
                } else {
                    Err(TransportError::Malformed("response id does not match"))
                })
            }
            Incoming::Notification { .. } => None,
            Incoming::Request { .. } if framing.is_modern() => Some(Err(
                TransportError::Malformed("server request on a stateless stream"),
            )),
            Incoming::Request { id, method, .. } => {
                self.answer_server(&id, method == "ping", framing, attempt);
                None
            }
            Incoming::Batch(messages) => messages
                .into_iter()
                .find_map(|m| self.on_incoming(m, want, framing, attempt)),
        }
    }

    /// Answers a server request on the session: `ping` with an empty result, anything else
    /// with −32601. Best effort: the answer's own fate never changes the exchange.
    fn answer_server(&mut self, id: &Value, ping: bool, framing: Framing<'_>, attempt: &Attempt) {
        let body = if ping {
            match RawValue::from_string("{}".to_owned()) {
                Ok(empty) => jsonrpc::encode_result(id, &empty),
                Err(_) => return,
            }
        } else {
            jsonrpc::encode_error(id, -32601, "Method not found")
        };
        if let Ok(response) = self.post("", &body, framing, attempt) {
            drain(response);
        }
    }

    /// Reads an event stream until our response, resuming a legacy stream when it ends early.
    fn stream(
        &mut self,
        body: ureq::Body,
        want: u64,
        framing: Framing<'_>,
        attempt: &Attempt,
    ) -> Result<Box<RawValue>, TransportError> {
        let budget = usize::try_from(MAX_RESPONSE_BYTES).unwrap_or(usize::MAX);
        let mut parser = SseParser::new(budget);
        let mut events = Vec::new();
        let mut reader = body.into_reader();
        let mut resumptions = 0;
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(|_| network(attempt))?;
            if n == 0 {
                parser.finish(&mut events);
                let resumable = matches!(framing, Framing::Session { .. })
                    && !parser.last_event_id().is_empty();
                if !resumable {
                    return Err(TransportError::Malformed("stream ended without a response"));
                }
                if resumptions == MAX_RESUMPTIONS {
                    return Err(TransportError::Limit("stream resumed three times"));
                }
                resumptions += 1;
                reader = self.resume(&parser, framing, attempt)?.into_reader();
                continue;
            }
            let fed = parser.feed(buf.get(..n).unwrap_or_default(), &mut events);
            // Events without data (an MCP priming event) carry only their id and retry.
            for event in events.drain(..).filter(|e| !e.data.is_empty()) {
                if let Some(outcome) =
                    self.on_message(event.data.as_bytes(), want, framing, attempt)
                {
                    return outcome;
                }
            }
            if fed.is_err() || parser.bytes_seen() > MAX_RESPONSE_BYTES {
                return Err(TransportError::Limit("response over 1 MiB"));
            }
        }
    }

    /// Reconnects to a legacy stream with `GET` and `Last-Event-ID`, after the server's
    /// `retry` delay. A delay that does not fit the deadline ends the attempt without a GET.
    fn resume(
        &mut self,
        parser: &SseParser,
        framing: Framing<'_>,
        attempt: &Attempt,
    ) -> Result<ureq::Body, TransportError> {
        let last = parser.last_event_id();
        if last.len() > MAX_ID_BYTES || last.bytes().any(|b| b < 0x20 || b == 0x7F) {
            return Err(TransportError::Malformed("invalid event id"));
        }
        let wait = Duration::from_millis(parser.retry_ms().unwrap_or(0));
        if wait >= attempt.remaining() {
            return Err(network(attempt));
        }
        pause(wait, attempt)?;
        let session = self.session.as_ref().map(|s| s.id.clone());
        let mut headers = vec![("accept", SSE), ("last-event-id", last)];
        headers.extend(session.as_deref().map(|id| ("mcp-session-id", id)));
        if let Framing::Session { version } = framing {
            headers.push(("mcp-protocol-version", version.as_str()));
        }
        let response = self.send(Method::Get, &headers, &[], attempt)?;
        let status = response.status().as_u16();
        if matches!(status, 401 | 403) {
            return Err(TransportError::Status { status });
        }
        if status != 200 {
            return Err(TransportError::Malformed("resumption status"));
        }
        if media_type(response.headers()) != Some(ResponseMode::Sse) {
            return Err(TransportError::Malformed("resumption content type"));
        }
        Ok(response.into_body())
    }

    /// One request and its response (see [`Transport::request`]).
    fn exchange(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        let want = out.id.unwrap_or(0);
        let response = self.post(out.method, out.body, out.framing, attempt)?;
        let status = response.status().as_u16();
        if matches!(status, 401 | 403) {
            return Err(TransportError::Status { status });
        }
        if status != 200 {
            return Err(Self::rejection(status, response.into_body()));
        }
        let session_issued = match out.framing {
            Framing::Handshake => self.adopt_session(response.headers(), None)?,
            _ => false,
        };
        let mode = media_type(response.headers()).ok_or(TransportError::Malformed(
            "response content type is neither json nor an event stream",
        ))?;
        let result = match mode {
            ResponseMode::Json => {
                let bytes = read_limited(response.into_body())?;
                self.on_message(&bytes, want, out.framing, attempt)
                    .unwrap_or(Err(TransportError::Malformed("body holds no response")))
            }
            ResponseMode::Sse => self.stream(response.into_body(), want, out.framing, attempt),
        }?;
        Ok(Reply {
            result,
            mode,
            session_issued,
        })
    }

    /// One notification; any 2xx accepts it (see [`Transport::notify`]).
    fn deliver(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<(), TransportError> {
        if let Framing::Session { version } = out.framing {
            if let Some(session) = &mut self.session {
                session.version = Some(version);
            }
        }
        let response = self.post(out.method, out.body, out.framing, attempt)?;
        let status = response.status().as_u16();
        drain(response);
        if (200..300).contains(&status) {
            Ok(())
        } else {
            Err(TransportError::Status { status })
        }
    }

    /// The outcome of a response whose status is not 200 (nor 401/403).
    fn rejection(status: u16, body: ureq::Body) -> TransportError {
        match read_limited(body) {
            Ok(bytes) => match jsonrpc::parse(&bytes) {
                Ok(Incoming::Response {
                    outcome: Err(error),
                    ..
                }) => TransportError::Rpc {
                    code: error.code,
                    status: Some(status),
                },
                _ => TransportError::Status { status },
            },
            Err(limit @ TransportError::Limit(_)) => limit,
            Err(_) => TransportError::Status { status },
        }
    }
}

impl Transport for HttpTransport {
    fn channel(&self) -> Channel {
        Channel::Http
    }

    fn probe(&mut self, attempt: &Attempt) -> Option<Result<Probe, TransportError>> {
        let start = Instant::now();
        let result = self.send(Method::Head, &[("accept", ACCEPT_BOTH)], &[], attempt);
        let latency = start.elapsed();
        Some(result.map(|response| {
            let mut steps = Steps::default();
            steps.set(Stage::Http, Status::Healthy, Some(ms(latency)));
            let status = response.status().as_u16();
            drain(response);
            Probe {
                latency,
                steps,
                status,
            }
        }))
    }

    fn request(&mut self, out: &Outgoing<'_>, attempt: &Attempt) -> Result<Reply, TransportError> {
        // Whatever an aborted exchange met last (an EOF from the shutdown) is not an answer.
        self.exchange(out, attempt).map_err(|e| {
            if attempt.is_aborted() {
                network(attempt)
            } else {
                e
            }
        })
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

    fn discard(&mut self) {
        self.agent = None;
        if let Some(session) = self.session.take() {
            self.retired.push(session);
        }
    }

    fn close(&mut self, budget: Duration) {
        let deadline = Instant::now() + budget;
        let sessions: Vec<SessionId> = self.retired.drain(..).chain(self.session.take()).collect();
        for session in sessions {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .min(DELETE_BUDGET);
            if left.is_zero() {
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
            // Best effort, bounded like an attempt: the outcome never changes an observation.
            let cleanup = Attempt::new(Instant::now() + left);
            if let Ok(response) = self.send(Method::Delete, &headers, &[], &cleanup) {
                drain(response);
            }
        }
        self.agent = None;
    }
}

/// The engine's classification input for a failed or interrupted exchange.
fn network(attempt: &Attempt) -> TransportError {
    TransportError::Network {
        response_seen: attempt.response_seen(),
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
fn read_limited(body: ureq::Body) -> Result<Vec<u8>, TransportError> {
    match body
        .into_with_config()
        .limit(MAX_RESPONSE_BYTES)
        .read_to_vec()
    {
        Ok(bytes) => Ok(bytes),
        Err(ureq::Error::BodyExceedsLimit(_)) => Err(TransportError::Limit("response over 1 MiB")),
        Err(_) => Err(TransportError::Network {
            response_seen: true,
        }),
    }
}

/// Reads and drops a body that is not an event stream, so the connection can be reused.
fn drain(response: Response<ureq::Body>) {
    if media_type(response.headers()) == Some(ResponseMode::Sse) {
        return;
    }
    let _ = read_limited(response.into_body());
}

/// Waits `wait` (a server's `retry`), returning early with a network failure on abort.
fn pause(wait: Duration, attempt: &Attempt) -> Result<(), TransportError> {
    const SLICE: Duration = Duration::from_millis(5);
    let until = Instant::now() + wait;
    loop {
        if attempt.is_aborted() {
            return Err(network(attempt));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(SLICE));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The HTTP methods this transport sends.
#[derive(Clone, Copy, Debug)]
enum Method {
    Head,
    Get,
    Post,
    Delete,
}

/// The HTTP client settings. With [`HttpTransport::send`], the one place to switch to the
/// project's network layer.
mod net {
    use std::time::Duration;

    use ureq::http::Response;
    use ureq::{Agent, Body, RequestBuilder};

    /// Adds `headers` to a request.
    pub fn with_headers<'a, B>(
        mut req: RequestBuilder<B>,
        headers: impl Iterator<Item = (&'a str, &'a str)>,
    ) -> RequestBuilder<B> {
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req
    }

    /// Sends a request without a body.
    pub fn call<'a>(
        req: RequestBuilder<ureq::typestate::WithoutBody>,
        headers: impl Iterator<Item = (&'a str, &'a str)>,
        timeout: Option<Duration>,
    ) -> Result<Response<Body>, ureq::Error> {
        with_headers(req, headers)
            .config()
            .timeout_global(timeout)
            .build()
            .call()
    }

    /// A keep-alive agent: any status is a response, redirects are never followed, no
    /// proxies from the environment.
    pub fn agent() -> Agent {
        Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .user_agent(concat!("agenthealth/", env!("CARGO_PKG_VERSION")))
            .build()
            .into()
    }
}
