//! Server lifecycle, request log and fault selection; the HTTP side (listener, connections,
//! request parsing) is the shared test server's (`http_server`, beside it in the kit).

use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::lock;

use super::config::{Action, FakeConfig, On};
use super::http_server::{
    self as http, Conn, Flow, Handler, Options, Request, Server, Wrap, reason,
};
use super::mcp::{self, Answer, ListCache, META_VERSION, Msg, Req, RpcMsg};
use super::oauth::{self, OAuthState};
use super::render;
use super::util::{form_decode, raw_member};

/// What kind of JSON-RPC message a request body held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpcKind {
    /// No body.
    None,
    /// A request (`method` and `id`).
    Request,
    /// A notification (`method`, no `id`).
    Notification,
    /// A response (`id` with `result` or `error`) — the client answering a
    /// server→client request.
    Response,
    /// A body that is not a single JSON-RPC message (malformed JSON, batch, …).
    Invalid,
}

/// One request as the server saw it, recorded on arrival.
#[derive(Clone, Debug)]
pub struct Seen {
    /// HTTP method (`POST`, `HEAD`, …).
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Query string, if any.
    pub query: Option<String>,
    /// `Mcp-Session-Id`.
    pub session_id: Option<String>,
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
    /// `Mcp-Method`.
    pub mcp_method: Option<String>,
    /// `Mcp-Name` (raw header value, possibly Base64-sentinel encoded).
    pub mcp_name: Option<String>,
    /// Every `Mcp-Param-*` header as (lower-cased suffix, raw value), e.g. `("region", "us-west1")`.
    pub mcp_params: Vec<(String, String)>,
    /// `Last-Event-ID`.
    pub last_event_id: Option<String>,
    /// Whether an `Authorization` header was present (the value is never stored).
    pub authorization: bool,
    /// The `Authorization` scheme (`Bearer`, `Basic`, …), without the credentials.
    pub authorization_scheme: Option<String>,
    /// `Accept`.
    pub accept: Option<String>,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// Kind of JSON-RPC message in the body.
    pub rpc: RpcKind,
    /// JSON-RPC `method` (requests and notifications).
    pub rpc_method: Option<String>,
    /// JSON-RPC `id` (requests and responses).
    pub rpc_id: Option<Value>,
    /// `error.code` when the body is a JSON-RPC error response.
    pub rpc_error_code: Option<i64>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    pub meta_protocol_version: Option<String>,
    /// For `initialize`: the `params.protocolVersion` the client offered.
    pub offered_version: Option<String>,
    /// For `tools/call`: `params.arguments` exactly as the bytes arrived.
    pub raw_arguments: Option<String>,
    /// Decoded fields of an `application/x-www-form-urlencoded` body (e.g. an
    /// OAuth token request served by an `Action::Raw` route), in order.
    pub form: Vec<(String, String)>,
    /// Body length in bytes.
    pub body_len: usize,
}

impl Seen {
    fn capture(head: &Request, body: &[u8], json: Option<&Value>) -> Seen {
        let header = |n: &str| head.header(n).map(str::to_string);
        let mcp_params = head
            .headers
            .iter()
            .filter_map(|(n, v)| {
                n.strip_prefix("mcp-param-")
                    .map(|s| (s.to_string(), v.clone()))
            })
            .collect();
        let (rpc, rpc_method, rpc_id, rpc_error_code) = match json {
            None if body.is_empty() => (RpcKind::None, None, None, None),
            None => (RpcKind::Invalid, None, None, None),
            Some(v) => match mcp::classify(v) {
                Msg::Request { id, method, .. } => (
                    RpcKind::Request,
                    Some(method.to_string()),
                    Some(id.clone()),
                    None,
                ),
                Msg::Notification { method } => {
                    (RpcKind::Notification, Some(method.to_string()), None, None)
                }
                Msg::Response { id } => {
                    let code = v.pointer("/error/code").and_then(Value::as_i64);
                    (RpcKind::Response, None, Some(id.clone()), code)
                }
                Msg::Invalid(_) => (RpcKind::Invalid, None, None, None),
            },
        };
        let raw_arguments = (rpc_method.as_deref() == Some("tools/call"))
            .then(|| {
                std::str::from_utf8(body)
                    .ok()
                    .and_then(|s| raw_member(s, &["params", "arguments"]))
            })
            .flatten()
            .map(str::to_string);
        let meta_protocol_version = json
            .and_then(|v| v.pointer("/params/_meta"))
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str)
            .map(str::to_string);
        let offered_version = (rpc_method.as_deref() == Some("initialize"))
            .then(|| json.and_then(|v| v.pointer("/params/protocolVersion")))
            .flatten()
            .and_then(Value::as_str)
            .map(str::to_string);
        Seen {
            method: head.method.clone(),
            path: head.path().to_string(),
            query: head.query().map(str::to_string),
            session_id: header("mcp-session-id"),
            protocol_version: header("mcp-protocol-version"),
            mcp_method: header("mcp-method"),
            mcp_name: header("mcp-name"),
            mcp_params,
            last_event_id: header("last-event-id"),
            authorization: head.header("authorization").is_some(),
            authorization_scheme: head
                .header("authorization")
                .and_then(|a| a.split_whitespace().next())
                .map(str::to_string),
            accept: header("accept"),
            content_type: header("content-type"),
            rpc,
            rpc_method,
            rpc_id,
            rpc_error_code,
            meta_protocol_version,
            offered_version,
            raw_arguments,
            form: if head.header("content-type").is_some_and(|c| {
                c.to_ascii_lowercase()
                    .starts_with("application/x-www-form-urlencoded")
            }) {
                form_decode(&String::from_utf8_lossy(body))
            } else {
                Vec::new()
            },
            body_len: body.len(),
        }
    }

    /// First value of form field `name` (see [`Seen::form`]).
    pub fn form_field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Value of the `Mcp-Param-<name>` header (name compared case-insensitively).
    pub fn mcp_param(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.mcp_params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A stream whose answer waits for a `GET` with `Last-Event-ID`.
pub(super) struct Pending {
    /// The JSON-RPC answer, serialised.
    pub msg: String,
    /// GETs still needed before the answer is sent.
    pub remaining: u32,
    /// Next event sequence number.
    pub next_seq: u64,
    /// `retry:` for id-only events.
    pub retry_ms: Option<u64>,
    /// SSE comment padding per stream.
    pub padding: usize,
    /// Write `event: message`.
    pub named: bool,
}

/// Mutable per-route state.
#[derive(Default)]
pub(super) struct RouteState {
    /// Live legacy sessions.
    pub sessions: HashSet<String>,
    /// Uses per fault (same index as `FakeConfig::faults`).
    fault_uses: Vec<u32>,
    /// Counter for `Mode::Mixed`.
    pub mixed: u64,
    /// Streams awaiting resumption, by stream key.
    pub streams: HashMap<String, Pending>,
}

/// One served path.
pub(super) struct Route {
    /// Path, e.g. `/mcp`.
    pub path: String,
    /// Its configuration.
    pub cfg: FakeConfig,
    /// Serialised inventories.
    pub cache: ListCache,
    state: Mutex<RouteState>,
}

impl Route {
    fn new(path: String, mut cfg: FakeConfig) -> Route {
        cfg.routes.clear();
        let state = RouteState {
            fault_uses: vec![0; cfg.faults.len()],
            ..RouteState::default()
        };
        Route {
            path,
            cache: ListCache::new(&cfg),
            cfg,
            state: Mutex::new(state),
        }
    }

    /// Locks the route state.
    pub fn lock(&self) -> MutexGuard<'_, RouteState> {
        lock(&self.state)
    }

    /// Whether a `Reset` fault could apply (so the body must stay unread).
    fn may_reset(&self) -> bool {
        self.cfg
            .faults
            .iter()
            .any(|f| matches!(f.action, Action::Reset | Action::ResetUnanswered))
    }

    /// The first matching fault with uses left, counting the use.
    fn take_fault(&self, head: &Request, rpc_method: Option<&str>) -> Option<Action> {
        let http_method = head.method.as_str();
        if self.cfg.faults.is_empty() {
            return None;
        }
        let mut state = self.lock();
        for (i, f) in self.cfg.faults.iter().enumerate() {
            let hit = match &f.on {
                On::Any => true,
                On::Post => http_method == "POST",
                On::Rpc(m) => http_method == "POST" && rpc_method == Some(*m),
                On::Http(m) => http_method.eq_ignore_ascii_case(m),
                On::Reused => head.on_connection > 0,
            };
            let uses = state.fault_uses.get(i).copied().unwrap_or(0);
            if hit && f.times.is_none_or(|n| uses < n) {
                if let Some(u) = state.fault_uses.get_mut(i) {
                    *u += 1;
                }
                return Some(f.action.clone());
            }
        }
        None
    }
}

struct SyncState {
    stopped: bool,
    answers: HashMap<String, Value>,
}

/// State shared by every connection thread.
pub(super) struct Shared {
    routes: Vec<Route>,
    base: String,
    log: Mutex<Vec<Seen>>,
    sync: Mutex<SyncState>,
    cv: Condvar,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    busy_ns: AtomicU64,
    sessions: AtomicUsize,
    ids: AtomicU64,
    /// The toy authorization server's codes and refresh tokens.
    oauth: Mutex<OAuthState>,
}

fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Shared {
    /// Whether the server is shutting down.
    pub fn stopped(&self) -> bool {
        lock(&self.sync).stopped
    }

    /// Sleeps up to `d` (forever with `None`), waking early on shutdown.
    /// Returns `true` if the server is stopping.
    pub fn wait_stop(&self, d: Option<Duration>) -> bool {
        let deadline = d.map(|d| Instant::now() + d);
        let mut g = lock(&self.sync);
        loop {
            if g.stopped {
                return true;
            }
            match deadline {
                None => g = self.cv.wait(g).unwrap_or_else(PoisonError::into_inner),
                Some(t) => {
                    let now = Instant::now();
                    if now >= t {
                        return false;
                    }
                    g = self
                        .cv
                        .wait_timeout(g, t - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }

    /// Records the client's answer to a server→client request.
    pub fn record_answer(&self, id: &Value, msg: &Value) {
        lock(&self.sync).answers.insert(id_key(id), msg.clone());
        self.cv.notify_all();
    }

    /// Waits until every id in `ids` was answered, the timeout passes or the
    /// server stops. Returns `true` if all were answered.
    pub fn wait_answers(&self, ids: &[String], timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut g = lock(&self.sync);
        loop {
            if ids.iter().all(|i| g.answers.contains_key(i)) {
                return true;
            }
            let now = Instant::now();
            if g.stopped || now >= deadline {
                return false;
            }
            g = self
                .cv
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// A fresh number (session ids, stream keys, server request ids).
    pub fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts an issued session.
    pub fn session_created(&self) {
        self.sessions.fetch_add(1, Ordering::Relaxed);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn route_for(&self, path: &str) -> Option<&Route> {
        self.routes.iter().find(|r| r.path == path)
    }
}

/// A running fake MCP server on `127.0.0.1`. Dropping it stops it: stalled handlers are
/// released, then the HTTP server stops accepting and shuts open connections down.
pub struct FakeServer {
    shared: Arc<Shared>,
    /// Dropped after [`FakeServer::drop`] released the handlers.
    server: Server,
}

impl FakeServer {
    /// Starts a server on `127.0.0.1` with an ephemeral port.
    ///
    /// # Panics
    /// If the loopback listener cannot be created.
    pub fn start(cfg: FakeConfig) -> FakeServer {
        match FakeServer::try_start(cfg, 0) {
            Ok(s) => s,
            Err(e) => panic!("fake MCP server: cannot listen on 127.0.0.1: {e}"),
        }
    }

    /// Starts a server on `127.0.0.1:port` (`0` = ephemeral).
    pub fn try_start(cfg: FakeConfig, port: u16) -> io::Result<FakeServer> {
        FakeServer::try_start_wrapped(cfg, port, None)
    }

    /// Starts a server on `127.0.0.1:port` speaking over what `wrap` makes of each
    /// connection (TLS: the URLs are then `https://`; a `Reset` fault degrades to a close).
    pub fn try_start_wrapped(
        cfg: FakeConfig,
        port: u16,
        wrap: Option<Wrap>,
    ) -> io::Result<FakeServer> {
        FakeServer::try_start_at(cfg, SocketAddr::from(([127, 0, 0, 1], port)), wrap)
    }

    /// Starts a server on `addr` (another address than loopback: the far side of a link in a
    /// private network namespace).
    pub fn try_start_at(
        mut cfg: FakeConfig,
        addr: SocketAddr,
        wrap: Option<Wrap>,
    ) -> io::Result<FakeServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let extra = std::mem::take(&mut cfg.routes);
        let mut routes = vec![Route::new("/mcp".into(), cfg)];
        for (path, rc) in extra {
            routes.retain(|r| r.path != path);
            routes.push(Route::new(path, rc));
        }
        let shared = Arc::new(Shared {
            routes,
            base: format!("{}://{addr}", if wrap.is_some() { "https" } else { "http" }),
            log: Mutex::new(Vec::new()),
            sync: Mutex::new(SyncState {
                stopped: false,
                answers: HashMap::new(),
            }),
            cv: Condvar::new(),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            busy_ns: AtomicU64::new(0),
            sessions: AtomicUsize::new(0),
            ids: AtomicU64::new(0),
            oauth: Mutex::new(OAuthState::default()),
        });
        // The log here is richer than the HTTP server's: it keeps none of its own.
        let options = Options {
            record: false,
            wrap,
            ..Options::default()
        };
        let server = Server::serve(listener, options, Fake(Arc::clone(&shared)))?;
        Ok(FakeServer { shared, server })
    }

    /// The bound address (`127.0.0.1` unless started elsewhere).
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `http://127.0.0.1:PORT/mcp` (`https://` over TLS).
    pub fn url(&self) -> String {
        format!("{}/mcp", self.shared.base)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        self.shared.base.clone()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url_for(&self, path: &str) -> String {
        format!("{}{path}", self.shared.base)
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<Seen> {
        lock(&self.shared.log).clone()
    }

    /// Number of requests whose JSON-RPC `method` is `jsonrpc_method`.
    pub fn count(&self, jsonrpc_method: &str) -> usize {
        lock(&self.shared.log)
            .iter()
            .filter(|s| s.rpc_method.as_deref() == Some(jsonrpc_method))
            .count()
    }

    /// Number of requests with this HTTP method (`"DELETE"`, `"GET"`, …).
    pub fn count_http(&self, http_method: &str) -> usize {
        lock(&self.shared.log)
            .iter()
            .filter(|s| s.method.eq_ignore_ascii_case(http_method))
            .count()
    }

    /// Raw `params.arguments` of every `tools/call`, in order.
    pub fn tool_call_arguments(&self) -> Vec<String> {
        lock(&self.shared.log)
            .iter()
            .filter_map(|s| s.raw_arguments.clone())
            .collect()
    }

    /// JSON-RPC responses the client POSTed (answers to server→client requests).
    pub fn client_answers(&self) -> Vec<Seen> {
        lock(&self.shared.log)
            .iter()
            .filter(|s| s.rpc == RpcKind::Response)
            .cloned()
            .collect()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.server.connections()
    }

    /// Legacy sessions issued so far (all routes).
    pub fn sessions_created(&self) -> usize {
        self.shared.sessions.load(Ordering::Relaxed)
    }

    /// Most requests handled at the same time so far.
    pub fn peak_in_flight(&self) -> usize {
        self.shared.peak.load(Ordering::Relaxed)
    }

    /// Requests being handled right now.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// Total time spent handling requests (from the request being read to the
    /// answer being written), summed over requests.
    pub fn busy(&self) -> Duration {
        Duration::from_nanos(self.shared.busy_ns.load(Ordering::Relaxed))
    }

    /// Clears the log and the counters (`sessions_created`, `peak_in_flight`,
    /// `busy`). Live sessions stay valid.
    pub fn reset_log(&self) {
        lock(&self.shared.log).clear();
        self.shared.sessions.store(0, Ordering::Relaxed);
        self.shared.peak.store(
            self.shared.in_flight.load(Ordering::Relaxed),
            Ordering::Relaxed,
        );
        self.shared.busy_ns.store(0, Ordering::Relaxed);
    }

    /// Stops the server (same as dropping it).
    pub fn stop(self) {}
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        // Hangs, delays, trickles and held-open streams wait on this; then `server` drops.
        lock(&self.shared.sync).stopped = true;
        self.shared.cv.notify_all();
    }
}

/// The fake as the HTTP server's handler.
struct Fake(Arc<Shared>);

impl Handler for Fake {
    /// A `Reset` fault must find the request body unread.
    fn may_reset(&self, request: &Request) -> bool {
        self.0
            .route_for(request.path())
            .is_some_and(Route::may_reset)
    }

    fn handle(&self, request: &Request, conn: &mut Conn<'_>) -> Flow {
        let shared = &*self.0;
        if shared.stopped() {
            return Flow::Close;
        }
        let route = shared.route_for(request.path());
        let started = Instant::now();
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.peak.fetch_max(now, Ordering::SeqCst);
        let flow = handle(shared, route, conn, request, &request.body);
        shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        let spent = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        shared.busy_ns.fetch_add(spent, Ordering::Relaxed);
        match flow {
            Flow::KeepAlive if !request.keep_alive() => Flow::Close,
            flow => flow,
        }
    }
}

/// 401/403/3xx/… answer for `Action::Status` and `require_bearer`.
fn status_answer(shared: &Shared, route: &Route, code: u16) -> Answer {
    let mut headers = Vec::new();
    match code {
        401 => headers.push((
            "WWW-Authenticate".to_string(),
            format!(
                "Bearer realm=\"fake-mcp\", resource_metadata=\"{}/.well-known/oauth-protected-resource{}\"",
                shared.base(),
                route.path
            ),
        )),
        403 => headers.push((
            "WWW-Authenticate".to_string(),
            "Bearer error=\"insufficient_scope\", scope=\"mcp:admin\"".to_string(),
        )),
        405 => headers.push(("Allow".to_string(), "POST".to_string())),
        300..=399 => headers.push(("Location".to_string(), format!("{}/redirect-target", shared.base()))),
        _ => {}
    }
    Answer::Body {
        status: code,
        content_type: Some("text/plain; charset=utf-8".into()),
        body: format!("{code} {}\n", reason(code)).into_bytes(),
        headers,
    }
}

/// Exactly `n` bytes; valid JSON-RPC when `n` is large enough.
fn huge_body(id: &Value, n: usize) -> Vec<u8> {
    let prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"pad\":\"");
    let suffix = b"\"}}";
    if n < prefix.len() + suffix.len() {
        return vec![b'x'; n];
    }
    let mut b = Vec::with_capacity(n);
    b.extend_from_slice(prefix.as_bytes());
    b.resize(n - suffix.len(), b'x');
    b.extend_from_slice(suffix);
    b
}

/// Built-in paths: `/health` (200 `{"status":"ok"}`), everything else 404.
fn builtin(stream: &mut Conn<'_>, head: &Request, close: bool) -> Flow {
    let json_ct = vec![("Content-Type".to_string(), "application/json".to_string())];
    let result = match (head.path(), head.method.as_str()) {
        ("/health", "GET") => http::write_full(stream, 200, json_ct, br#"{"status":"ok"}"#, close),
        ("/health", "HEAD") => {
            let mut hs = json_ct;
            hs.push(("Content-Length".into(), "15".into()));
            stream.write_all(&http::head_bytes(200, &hs, close))
        }
        ("/health", _) => http::write_full(
            stream,
            405,
            vec![("Allow".into(), "GET, HEAD".into())],
            b"",
            close,
        ),
        _ => http::write_text(stream, 404, "not found\n", close),
    };
    if result.is_err() || close {
        Flow::Close
    } else {
        Flow::KeepAlive
    }
}

fn handle(
    shared: &Shared,
    route: Option<&Route>,
    stream: &mut Conn<'_>,
    head: &Request,
    body: &[u8],
) -> Flow {
    let close = !head.keep_alive();
    let parsed: Option<Value> = if body.is_empty() {
        None
    } else {
        serde_json::from_slice(body).ok()
    };
    let unparsable = !body.is_empty() && parsed.is_none();
    lock(&shared.log).push(Seen::capture(head, body, parsed.as_ref()));
    if route.is_none() {
        // The toy authorization server of the protected routes (see `oauth.rs`).
        let protected: Vec<(String, String)> = shared
            .routes
            .iter()
            .filter_map(|r| r.cfg.require_bearer.clone().map(|t| (r.path.clone(), t)))
            .collect();
        if let Some(a) = oauth::answer(
            &shared.base,
            &protected,
            &shared.oauth,
            &head.method,
            &head.target,
            head.header("authorization"),
            body,
        ) {
            let mut headers = a.headers;
            headers.push(("Content-Type".into(), "application/json".into()));
            let written = http::write_full(stream, a.status, headers, &a.body, close);
            return if written.is_err() || close {
                Flow::Close
            } else {
                Flow::KeepAlive
            };
        }
    }
    let Some(route) = route else {
        return builtin(stream, head, close);
    };
    if let Some(token) = &route.cfg.require_bearer {
        let authorized = head
            .header("authorization")
            .and_then(|a| a.split_once(' '))
            .is_some_and(|(scheme, t)| scheme.eq_ignore_ascii_case("bearer") && t.trim() == token);
        if !authorized {
            return render::emit(
                shared,
                route,
                stream,
                head,
                status_answer(shared, route, 401),
                None,
                close,
            );
        }
    }
    let rpc_method = parsed
        .as_ref()
        .and_then(|v| v.get("method"))
        .and_then(Value::as_str);
    let action = route.take_fault(head, rpc_method);
    let req = Req {
        head,
        json: parsed.as_ref(),
        unparsable,
    };
    let id = parsed.as_ref().and_then(|v| v.get("id")).cloned();
    let method = rpc_method.unwrap_or_default().to_string();
    let answer = match &action {
        Some(Action::ResetUnanswered) => return Flow::Reset,
        Some(Action::HangBeforeHeaders) => {
            shared.wait_stop(None);
            return Flow::Close;
        }
        Some(Action::Delay(d)) => {
            if shared.wait_stop(Some(*d)) {
                return Flow::Close;
            }
            mcp::answer(shared, route, &req, None)
        }
        Some(Action::SseNoResponse) => return render::sse_forever(shared, route, stream, close),
        Some(Action::SseEndpoint) => return render::sse_endpoint_stream(shared, stream, close),
        Some(Action::Status(code)) => status_answer(shared, route, *code),
        Some(Action::Raw {
            status,
            headers,
            body,
        }) => {
            let fill = |t: &str| {
                t.replace("{base}", shared.base())
                    .replace("{path}", &route.path)
            };
            Answer::Body {
                status: *status,
                content_type: None,
                body: fill(body).into_bytes(),
                headers: headers
                    .iter()
                    .map(|(n, v)| (n.to_string(), fill(v)))
                    .collect(),
            }
        }
        Some(Action::HugeBody(n)) => Answer::Body {
            status: 200,
            content_type: Some("application/json".into()),
            body: huge_body(id.as_ref().unwrap_or(&Value::Null), *n),
            headers: Vec::new(),
        },
        Some(Action::Error {
            status,
            code,
            message,
            data,
        }) => {
            let mut e = mcp::RpcError::new(*code, *message);
            e.data = data.clone();
            let msg = RpcMsg::Full(mcp::error_msg(id.as_ref().unwrap_or(&Value::Null), &e));
            Answer::Rpc {
                status: *status,
                msg,
                headers: Vec::new(),
                method,
            }
        }
        Some(Action::Result(v)) if id.is_some() => Answer::Rpc {
            status: 200,
            msg: RpcMsg::Full(json!({"jsonrpc": "2.0", "id": id, "result": v})),
            headers: Vec::new(),
            method,
        },
        Some(Action::SseEndWithoutResponse) => Answer::Events {
            headers: mcp::sse_headers(),
            events: vec![mcp::sse_event(
                route.cfg.sse.event_name,
                None,
                None,
                &mcp::log_notification(0),
            )],
        },
        Some(Action::SseCutAndResume {
            resumptions,
            retry_ms,
            padding,
        }) => match mcp::answer(shared, route, &req, None) {
            Answer::Rpc {
                status: 200,
                msg,
                mut headers,
                ..
            } => {
                let key = format!("s{}", shared.next_id());
                route.lock().streams.insert(
                    key.clone(),
                    Pending {
                        msg: msg.text(),
                        remaining: (*resumptions).max(1),
                        next_seq: 1,
                        retry_ms: *retry_ms,
                        padding: *padding,
                        named: route.cfg.sse.event_name,
                    },
                );
                let mut events = vec![mcp::sse_event(
                    false,
                    Some(&format!("{key}-0")),
                    *retry_ms,
                    "",
                )];
                if *padding > 0 {
                    events.push(mcp::comment(*padding));
                }
                headers.extend(mcp::sse_headers());
                Answer::Events { headers, events }
            }
            other => other,
        },
        other => mcp::answer(shared, route, &req, other.as_ref()),
    };
    render::emit(shared, route, stream, head, answer, action.as_ref(), close)
}
