//! The network layer: the one place that builds ureq agents, for every adapter that speaks
//! HTTP (the HTTP adapter and the MCP Streamable-HTTP transport).
//!
//! What every exchange gets, without the caller asking:
//! * no redirects (a 3xx is the response), any status is a response, no gzip, user agent
//!   `agenthealth/<version>`;
//! * TLS always verified against the trust store of [`trust`] (`SSL_CERT_FILE`/`SSL_CERT_DIR`,
//!   else the system bundle, else the bundled Mozilla roots), built lazily and only for
//!   `https`;
//! * `localhost` answered without `/etc/hosts` ([`resolve`]); proxies by curl's rules
//!   ([`proxy`]), loopback never proxied;
//! * for a `/probe` module's target, its allow list ([`Client::within`]): every address a
//!   lookup answers is checked before it is used and again before each connect, and no proxy
//!   is used (a proxy would resolve the name itself, where no check can follow);
//! * every blocking step bounded by the attempt's remaining time (ureq's global timeout), and
//!   an abort hook on the [`Attempt`] that shuts the agent down, so the engine's watchdog can
//!   always cut a stuck peer off — also mid-body;
//! * stage timings (dns, tcp, tls, http) and the first response byte marked on the attempt
//!   ([`Timings`], [`Attempt::mark_response`]);
//! * one failure classification ([`failure`]): no response byte → UNREACHABLE, response
//!   started → UNKNOWN.
//!
//! # Use
//!
//! One [`Client`] per target run. [`Reuse::Fresh`] opens a new connection for every
//! exchange, so every exchange measures dns/tcp/tls (the HTTP adapter). [`Reuse::KeepAlive`]
//! keeps one idle connection per host, so the several requests of an MCP session share a
//! connection; the first exchange of the run still reports dns/tcp/tls, later ones report
//! [`Timings::new_connection`] `false` and only the http stage.
//!
//! ```no_run
//! # use agenthealth::contract::Bound;
//! # use agenthealth::runtime::{Attempt, Deadline};
//! # use agenthealth::net::{Client, Endpoint, Method, Request, Reuse};
//! # use std::time::Duration;
//! let endpoint = Endpoint::parse("https://mcp.example/mcp").expect("validated by configure()");
//! let mut client = Client::new(Reuse::KeepAlive);
//! let attempt = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
//! let req = Request::new(Method::Post, &endpoint)
//!     .header("Content-Type", "application/json")
//!     .header("Accept", "application/json, text/event-stream")
//!     .body(body);
//! match client.send(&attempt, &req) {
//!     Ok(resp) => {
//!         let _stages = resp.timings().clone(); // → Observation.steps / latency
//!         let _bytes = resp.read_body(1 << 20); // or resp.into_reader() for SSE
//!     }
//!     Err(failure) => {
//!         let _obs = failure.observation(); // status, note, steps, `failure` evidence
//!     }
//! }
//! ```
//!
//! After an attempt the engine ended at its deadline (`TargetRun::discard`), call
//! [`Client::discard`]: the watchdog has shut that agent down, and the next exchange builds a
//! new one (the client also notices by itself).

pub mod endpoint;
pub mod failure;
pub mod head;
pub mod preflight;
pub mod proxy;
pub mod resolve;
pub mod stages;
pub mod trust;

mod buffers;
mod connect;
mod tcp;
mod tls;

use std::io::Read;
use std::sync::{Arc, Mutex};

use rustls::ClientConfig;
use ureq::unversioned::transport::{ConnectProxyConnector, Connector};
use ureq::{Agent, AsSendBody};

use crate::contract::AllowList;
use crate::result::reason::NetFailure;
use crate::runtime::Attempt;
use crate::runtime::sync::lock;

use self::connect::{FirstByte, TimedTcp};
use self::proxy::ProxyEnv;
use self::resolve::StageResolver;
use self::stages::{Ending, Recorder};
use self::tls::TlsStage;

pub use self::endpoint::Endpoint;
pub use self::failure::{NetError, classify, classify_io};
pub use self::head::HeadFacts;
pub use self::preflight::preflight;
pub use self::stages::Timings;
pub use ureq::http::HeaderMap;

/// Bytes of each connection's input buffer: ureq's limit on a response head (64 KiB), which the
/// buffer must hold. ureq's default (128 KiB) is just above musl's mmap threshold, so every
/// fresh connection of the static binary mapped, faulted in and unmapped its buffers.
const INPUT_BUFFER: usize = 64 * 1024;
/// Least bytes of a connection's output buffer. The buffer must hold the request head, so a
/// request with larger headers (mirrored `Mcp-Param-*` values, a long token) gets a buffer
/// sized for them ([`output_buffer`]).
const MIN_OUTPUT_BUFFER: usize = 16 * 1024;

/// The output buffer a request needs: its head (request line, our headers and ureq's own
/// `host`, `user-agent`, `content-length`…) with room to spare, at least [`MIN_OUTPUT_BUFFER`].
fn output_buffer(req: &Request<'_>) -> usize {
    let headers: usize = req
        .headers
        .iter()
        .map(|(n, v)| n.len().saturating_add(v.len()).saturating_add(4))
        .fold(0, usize::saturating_add);
    headers
        .saturating_add(req.endpoint.uri().to_string().len().saturating_mul(2))
        .saturating_add(1024)
        .max(MIN_OUTPUT_BUFFER)
}

/// What a request needs of its connection: the output buffer its head needs, and the length
/// of its body (the connection writes head and body in one piece when they fit).
#[derive(Clone, Copy)]
struct Size {
    output: usize,
    body: usize,
}

/// The `User-Agent` of every request.
pub const USER_AGENT: &str = concat!("agenthealth/", env!("CARGO_PKG_VERSION"));

/// Connection reuse policy of a [`Client`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reuse {
    /// A new connection for every exchange: every exchange measures dns/tcp/tls.
    Fresh,
    /// Keep one idle connection per host for the next exchange (an MCP session).
    KeepAlive,
}

/// Request methods we send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `HEAD`
    Head,
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `DELETE`
    Delete,
}

impl Method {
    /// The method token, which is also the `method` evidence word.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Head => "HEAD",
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }

    fn to_http(self) -> ureq::http::Method {
        match self {
            Method::Head => ureq::http::Method::HEAD,
            Method::Get => ureq::http::Method::GET,
            Method::Post => ureq::http::Method::POST,
            Method::Delete => ureq::http::Method::DELETE,
        }
    }
}

/// One request: method, endpoint, extra headers and an optional body.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    method: Method,
    endpoint: &'a Endpoint,
    headers: Vec<(&'a str, &'a str)>,
    body: Option<&'a [u8]>,
    once: bool,
}

impl<'a> Request<'a> {
    /// A request without extra headers or body.
    pub fn new(method: Method, endpoint: &'a Endpoint) -> Request<'a> {
        Request {
            method,
            endpoint,
            headers: Vec::new(),
            body: None,
            once: false,
        }
    }

    /// Never sends this request a second time, not even after a stale kept-alive connection
    /// ([`Client::send`]): an MCP functional `tools/call` is sent once, whatever happens.
    pub fn once(mut self) -> Request<'a> {
        self.once = true;
        self
    }

    /// Adds a header. A name or value HTTP does not allow fails the exchange with
    /// [`NetFailure::InvalidRequest`] (MISCONFIGURED) before anything is sent.
    pub fn header(mut self, name: &'a str, value: &'a str) -> Request<'a> {
        self.headers.push((name, value));
        self
    }

    /// Sets the body (sent with `Content-Length`).
    pub fn body(mut self, body: &'a [u8]) -> Request<'a> {
        self.body = Some(body);
        self
    }
}

/// Makes exchanges for one target run. Not shared between threads; cheap to create (no
/// network, no certificate parsing until the first `https` exchange).
pub struct Client {
    reuse: Reuse,
    allow: Option<Arc<AllowList>>,
    proxies: ProxyEnv,
    tls: Option<Arc<ClientConfig>>,
    live: Option<Live>,
    guard: Arc<Mutex<Guard>>,
}

struct Live {
    agent: Agent,
    rec: Recorder,
}

/// Which exchange the abort hooks may cut, and whether one did.
#[derive(Default)]
struct Guard {
    generation: u64,
    dead: bool,
}

impl Client {
    /// A client using the process trust store and the proxy environment.
    pub fn new(reuse: Reuse) -> Client {
        Client::within(reuse, None)
    }

    /// A client that reaches only what `allow` admits (a `/probe` module's target), and then
    /// through no proxy; without one, [`Client::new`].
    pub fn within(reuse: Reuse, allow: Option<Arc<AllowList>>) -> Client {
        let proxies = match allow {
            Some(_) => ProxyEnv::default(),
            None => ProxyEnv::from_env(),
        };
        Client {
            reuse,
            allow,
            proxies,
            tls: None,
            live: None,
            guard: Arc::default(),
        }
    }

    /// Another client for the same run, for exchanges that overlap this client's: the same
    /// policy, trust and proxies, its own connection. (TLS configurations are shared per
    /// process, and with them rustls's session cache: its handshake resumes this client's
    /// session.)
    pub fn sibling(&self) -> Client {
        Client {
            reuse: self.reuse,
            allow: self.allow.clone(),
            proxies: self.proxies.clone(),
            tls: self.tls.clone(),
            live: None,
            guard: Arc::default(),
        }
    }

    /// Replaces the process trust store with `config` (tests with a private CA; a future
    /// `--ca-file`). Verification stays on.
    #[cfg(test)]
    pub fn with_tls_config(mut self, config: Arc<ClientConfig>) -> Client {
        self.tls = Some(config);
        self.live = None;
        self
    }

    /// Replaces the proxy environment (tests).
    #[cfg(test)]
    pub fn with_proxies(mut self, proxies: ProxyEnv) -> Client {
        self.proxies = proxies;
        self
    }

    /// The proxy variable an exchange with `endpoint` would use (`None`: direct), or why
    /// that variable is unusable. No network.
    pub fn proxy_variable(
        &self,
        endpoint: &Endpoint,
    ) -> Result<Option<&'static str>, proxy::ProxyError> {
        match self.proxies.select(endpoint.is_https(), endpoint.host()) {
            None => Ok(None),
            Some(setting) => setting.to_proxy().map(|_| Some(setting.variable)),
        }
    }

    /// Forgets the current agent and its connections (after an attempt was cut off).
    pub fn discard(&mut self) {
        let mut g = lock(&self.guard);
        g.generation += 1;
        if let Some(live) = self.live.take() {
            live.agent.shutdown();
        }
    }

    /// Sends one request within `attempt`: returns once the response head arrived (the body
    /// is read from the [`Response`]), or with the classified [`NetError`].
    ///
    /// Everything that can be refused without the network (an unusable proxy variable or
    /// trust store, an invalid header) fails before any byte is sent.
    ///
    /// A kept-alive connection the server reset while it sat idle (a server that resets the
    /// connection after answering an error, say) fails the next request with a reset before
    /// any byte of an answer — a connection that no longer existed, not a server that cannot
    /// be reached, and nothing it acted on. Such a request goes once more, on a new
    /// connection, within the same attempt; never one marked [`Request::once`]. A request the
    /// server read and then closed the connection on (an orderly close) is never sent again.
    pub fn send(&mut self, attempt: &Attempt, req: &Request<'_>) -> Result<Response, NetError> {
        match self.exchange(attempt, req) {
            Err(e) if !req.once && e.stale_connection() => {
                self.discard();
                self.exchange(attempt, req)
            }
            done => done,
        }
    }

    fn exchange(&mut self, attempt: &Attempt, req: &Request<'_>) -> Result<Response, NetError> {
        let local = |kind| NetError {
            kind,
            response_seen: attempt.response_seen(),
            timings: Box::default(),
            trust: None,
            bound: attempt.bound(),
        };
        let proxy = self
            .proxies
            .proxy_for(req.endpoint)
            .map_err(|_| local(NetFailure::ProxyConfig))?;
        if req.endpoint.is_https() && self.tls.is_none() && trust::process_store().is_err() {
            return Err(local(NetFailure::TrustStore));
        }
        let mut builder = ureq::http::Request::builder()
            .method(req.method.to_http())
            .uri(req.endpoint.uri().clone());
        for (name, value) in &req.headers {
            builder = builder.header(*name, *value);
        }
        let output = output_buffer(req);
        let size = Size {
            output,
            body: req.body.map_or(0, <[u8]>::len),
        };
        match req.body {
            Some(body) => builder
                .body(body)
                .map_err(|_| local(NetFailure::InvalidRequest))
                .and_then(|r| self.run(attempt, r, proxy, size)),
            None => builder
                .body(())
                .map_err(|_| local(NetFailure::InvalidRequest))
                .and_then(|r| self.run(attempt, r, proxy, size)),
        }
    }

    fn run<B: AsSendBody>(
        &mut self,
        attempt: &Attempt,
        request: ureq::http::Request<B>,
        proxy: Option<ureq::Proxy>,
        size: Size,
    ) -> Result<Response, NetError> {
        if attempt.expired() {
            return Err(NetError {
                kind: NetFailure::Timeout,
                response_seen: attempt.response_seen(),
                timings: Box::default(),
                trust: None,
                bound: attempt.bound(),
            });
        }
        let (agent, rec) = self.arm(attempt);
        rec.begin(attempt, proxy.is_some(), size.body);
        let request = agent
            .configure_request(request)
            .timeout_global(Some(attempt.remaining()))
            .proxy(proxy)
            .output_buffer_size(size.output)
            .build();
        match agent.run(request) {
            Ok(resp) => {
                let timings = rec.finish(Ending::Head);
                attempt.mark_response();
                let (parts, body) = resp.into_parts();
                Ok(Response {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    timings,
                    body,
                    attempt: attempt.clone(),
                })
            }
            Err(err) => {
                let expired = attempt.expired();
                let cut = expired || matches!(err, ureq::Error::Timeout(_));
                let kind = classify(&err, expired);
                let timings = Box::new(rec.finish(Ending::Failed { cut }));
                let trust = match &self.tls {
                    None if kind.is_certificate() => trust::process_store().ok().map(|s| s.source),
                    _ => None,
                };
                Err(NetError {
                    kind,
                    response_seen: attempt.response_seen() || rec.saw_first_byte(),
                    timings,
                    trust,
                    bound: attempt.bound(),
                })
            }
        }
    }

    /// The agent for the next exchange, with an abort hook on `attempt` that shuts it down.
    ///
    /// Hooks outlive their exchange (they stay registered on their attempt), so each carries
    /// the generation it was armed for: a late abort of an earlier attempt never cuts a later
    /// exchange. If a hook did fire, the agent is dead and a new one is built here.
    fn arm(&mut self, attempt: &Attempt) -> (Agent, Recorder) {
        let generation = {
            let mut g = lock(&self.guard);
            if g.dead {
                self.live = None;
                g.dead = false;
            }
            g.generation += 1;
            g.generation
        };
        let live = match self.live.take() {
            Some(live) => live,
            None => self.build(),
        };
        let agent = live.agent.clone();
        let rec = live.rec.clone();
        self.live = Some(live);

        let guard = self.guard.clone();
        let doomed = agent.clone();
        attempt.on_abort(move || {
            let mut g = lock(&guard);
            if g.generation == generation && !g.dead {
                g.dead = true;
                doomed.shutdown();
            }
        });
        (agent, rec)
    }

    fn build(&self) -> Live {
        let rec = Recorder::new();
        let (idle, per_host) = match self.reuse {
            Reuse::Fresh => (0, 0),
            Reuse::KeepAlive => (4, 1),
        };
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .user_agent(USER_AGENT)
            .max_idle_connections(idle)
            .max_idle_connections_per_host(per_host)
            .input_buffer_size(INPUT_BUFFER)
            .output_buffer_size(MIN_OUTPUT_BUFFER)
            .build();
        let connector =
            ().chain(ConnectProxyConnector::default())
                .chain(TimedTcp::new(rec.clone(), self.allow.clone()))
                .chain(TlsStage::new(rec.clone(), self.tls.clone()))
                .chain(FirstByte::new(rec.clone()));
        let keep = self.reuse == Reuse::KeepAlive;
        let resolver = StageResolver::new(rec.clone(), keep, self.allow.clone());
        let agent = Agent::with_parts(config, connector, resolver);
        Live { agent, rec }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("reuse", &self.reuse)
            .finish_non_exhaustive()
    }
}

/// A response whose head has arrived. The body is still on the wire.
pub struct Response {
    status: u16,
    headers: HeaderMap,
    timings: Timings,
    body: ureq::Body,
    attempt: Attempt,
}

/// A body read up to a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyBytes {
    /// The bytes read: at most `limit + 1`.
    pub bytes: Vec<u8>,
    /// Whether the body is longer than the limit.
    pub over_limit: bool,
}

impl Response {
    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The stages of the exchange.
    pub fn timings(&self) -> &Timings {
        &self.timings
    }

    /// Reads at most `limit + 1` bytes of the body within the attempt. A body cut by the
    /// peer or the deadline is a [`NetError`] with `response_seen` (UNKNOWN).
    pub fn read_body(self, limit: u64) -> Result<BodyBytes, NetError> {
        let Response {
            body,
            attempt,
            timings,
            ..
        } = self;
        let mut bytes = Vec::new();
        let read = body
            .into_reader()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes);
        let failure = |kind| NetError {
            kind,
            response_seen: true,
            timings: Box::new(timings.clone()),
            trust: None,
            bound: attempt.bound(),
        };
        match read {
            Err(e) => Err(failure(classify_io(&e, attempt.expired()))),
            // A shut-down socket can read as a clean end of a close-delimited body.
            Ok(_) if attempt.is_aborted() => Err(failure(NetFailure::Timeout)),
            Ok(_) => {
                let over_limit = u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit;
                Ok(BodyBytes { bytes, over_limit })
            }
        }
    }

    /// The body as a stream (SSE). Classify a read error with [`Response::read_failure`]
    /// semantics: [`classify_io`] plus `response_seen = true`.
    pub fn into_reader(self) -> ureq::BodyReader<'static> {
        self.body.into_reader()
    }

    /// The failure a body read error stands for (for callers of [`Response::into_reader`]).
    pub fn read_failure(err: &std::io::Error, attempt: &Attempt, timings: Timings) -> NetError {
        NetError {
            kind: classify_io(err, attempt.expired()),
            response_seen: true,
            timings: Box::new(timings),
            trust: None,
            bound: attempt.bound(),
        }
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod tests;
