//! Configuration of one route of the fake server: era, response mode,
//! inventories and the hostile behaviours ("faults").

use serde_json::Value;
use std::time::Duration;

use super::tools;

/// Every legacy (handshake) revision the fake knows, oldest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision served by [`Era::Modern`] and [`Era::Dual`].
pub const MODERN_VERSION: &str = "2026-07-28";

/// Which protocol generation a route speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Era {
    /// Handshake era (`initialize` + `notifications/initialized`, sessions).
    ///
    /// The string is the server's newest revision: it is answered whenever the
    /// client offers a revision outside the supported set (see
    /// [`LegacyOpts::supported`]).
    Legacy(&'static str),
    /// Stateless 2026-07-28 era: `server/discover`, per-request `_meta`,
    /// standard headers, no sessions, GET/DELETE answered 405.
    Modern,
    /// Both at once, like SDKs that serve the two eras on one endpoint.
    ///
    /// A POST is handled by the modern leg when it is `server/discover`, or when
    /// its `params._meta` names a protocol version, or when its
    /// `MCP-Protocol-Version` header is a modern version; otherwise (and for
    /// every `initialize`, GET and DELETE) by the legacy leg, whose newest
    /// revision is the string.
    Dual(&'static str),
}

/// How a successful (HTTP 200) JSON-RPC answer is framed.
///
/// Error answers with another HTTP status are always plain JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `application/json` with `Content-Length`.
    Json,
    /// `text/event-stream`, chunked, one flushed chunk per event.
    Sse,
    /// Alternates per answered request on the route: JSON, SSE, JSON, …
    Mixed,
    /// SSE for the listed JSON-RPC methods, JSON for every other one.
    SseFor(Vec<&'static str>),
}

/// Canned answers of a legacy server to a `server/discover` probe.
///
/// These drive the client's era-fallback decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiscoverReply {
    /// HTTP 200 carrying JSON-RPC `-32601` (stateless SDK servers, or inside a session).
    MethodNotFound,
    /// HTTP 400 with JSON-RPC `-32000` "Bad Request: Mcp-Session-Id header is required".
    SessionRequired,
    /// HTTP 400 with JSON-RPC `-32602` (Python / rmcp style).
    InvalidParams,
    /// HTTP 400 with `-32000` "Unsupported protocol version …" (stateless TS v1 style).
    UnsupportedVersion,
    /// HTTP 400 with an empty body.
    BadRequestEmpty,
    /// HTTP 404 with an empty body (no JSON).
    NotFound,
    /// HTTP 405 with an empty body (no JSON).
    MethodNotAllowed,
    /// HTTP 200 `text/plain` body that is not JSON.
    NotJson,
    /// HTTP 404 carrying JSON-RPC `-32601`: a gateway in front of a handshake-only server,
    /// mapping its child's "method not found" to 404.
    GatewayNotFound,
    /// HTTP 200 carrying JSON-RPC `-32602` for any unknown method (stateless servers of older
    /// Python SDK lines).
    StatelessInvalidParams,
    /// HTTP 200 with the result `{}`: not a discover result (a server that answers any
    /// method with an empty result).
    EmptyResult,
}

/// Options of the legacy (handshake) leg.
#[derive(Clone, Debug)]
pub struct LegacyOpts {
    /// Revisions the server accepts in `initialize` and in the
    /// `MCP-Protocol-Version` header. `None` means the era's revision plus every
    /// known revision older than it.
    pub supported: Option<Vec<&'static str>>,
    /// Send `Mcp-Session-Id` on the `initialize` answer.
    pub issue_session: bool,
    /// Use this fixed session id instead of a generated one (may be invalid on
    /// purpose, e.g. contain a space).
    pub fixed_session_id: Option<&'static str>,
    /// Require a known `Mcp-Session-Id` on every request but `initialize`:
    /// missing → 400 (`-32000`), unknown or deleted → 404 (`-32001`).
    pub require_session: bool,
    /// Status answered to client notifications such as
    /// `notifications/initialized`: 202 (empty) by default; any other status is
    /// sent with a small JSON body, as some real servers do.
    pub initialized_status: u16,
    /// Status answered to a DELETE of a known session (200, 204 or 405).
    /// With 405 the session stays alive.
    pub delete_status: u16,
    /// Reject (400, `-32000`) an `MCP-Protocol-Version` header naming a
    /// revision outside the supported set.
    pub check_version_header: bool,
    /// Fixed answer to `server/discover`. `None` = natural behaviour: the session
    /// and version-header checks apply first, then `-32601` in a 200.
    pub discover: Option<DiscoverReply>,
}

impl Default for LegacyOpts {
    fn default() -> Self {
        LegacyOpts {
            supported: None,
            issue_session: true,
            fixed_session_id: None,
            require_session: true,
            initialized_status: 202,
            delete_status: 200,
            check_version_header: true,
            discover: None,
        }
    }
}

/// Options of the modern (2026-07-28) leg.
#[derive(Clone, Debug)]
pub struct ModernOpts {
    /// Versions accepted in `MCP-Protocol-Version` / `_meta`; others get `-32022`.
    pub supported: Vec<&'static str>,
    /// Overrides `supportedVersions` in the `server/discover` result (to
    /// advertise versions the server does not actually accept).
    pub advertised: Option<Vec<&'static str>>,
    /// Check `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
    /// `Mcp-Param-*` against the body (`-32020` on mismatch).
    pub validate_headers: bool,
    /// `ttlMs` put on cacheable results.
    pub ttl_ms: u64,
    /// `cacheScope` put on cacheable results.
    pub cache_scope: &'static str,
}

impl Default for ModernOpts {
    fn default() -> Self {
        ModernOpts {
            supported: vec![MODERN_VERSION],
            advertised: None,
            validate_headers: true,
            ttl_ms: 60_000,
            cache_scope: "public",
        }
    }
}

/// Framing and interleaving options for SSE answers.
#[derive(Clone, Debug)]
pub struct SseOpts {
    /// Put `id:` lines on events.
    pub event_ids: bool,
    /// Open each stream with a priming event (`id:` and empty `data:`).
    pub priming: bool,
    /// `retry:` value (ms) sent with the priming / cut events.
    pub retry_ms: Option<u64>,
    /// Write `event: message` before each message event.
    pub event_name: bool,
    /// Number of `notifications/message` events sent before the answer.
    pub notifications: u32,
    /// Send a server→client `ping` request before the answer.
    pub server_ping: bool,
    /// Send an unsupported server→client `sampling/createMessage` request
    /// before the answer.
    pub server_sampling: bool,
    /// Before writing the answer, wait (at most this long) until the client has
    /// POSTed replies to the server→client requests above.
    pub wait_for_answers: Option<Duration>,
    /// Keep the stream open after the answer (keep-alive comments every 100 ms)
    /// until the client goes away or the server is dropped.
    pub hold_open: bool,
}

impl Default for SseOpts {
    fn default() -> Self {
        SseOpts {
            event_ids: false,
            priming: false,
            retry_ms: None,
            event_name: true,
            notifications: 0,
            server_ping: false,
            server_sampling: false,
            wait_for_answers: None,
            hold_open: false,
        }
    }
}

/// Which capabilities (and so which inventories) the server advertises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advertise {
    /// `tools` capability; without it `tools/*` answers `-32601`.
    pub tools: bool,
    /// `resources` capability; without it `resources/*` answers `-32601`.
    pub resources: bool,
    /// `prompts` capability; without it `prompts/*` answers `-32601`.
    pub prompts: bool,
    /// `logging` capability (informational only).
    pub logging: bool,
}

impl Default for Advertise {
    fn default() -> Self {
        Advertise {
            tools: true,
            resources: true,
            prompts: true,
            logging: false,
        }
    }
}

/// Which requests a [`Fault`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum On {
    /// Every request on the route (HEAD, GET, DELETE and POST).
    Any,
    /// Every POST on the route.
    Post,
    /// POSTs whose JSON-RPC `method` equals the string.
    Rpc(&'static str),
    /// Requests with this HTTP method (`"HEAD"`, `"GET"`, `"DELETE"`, `"POST"`).
    Http(&'static str),
    /// Every request but the first on its connection (a kept-alive connection reused).
    Reused,
}

/// A deliberate misbehaviour. See [`Fault`] for how one is selected.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Read the request, never answer; hold the socket until the server drops.
    HangBeforeHeaders,
    /// Send the headers and half of the body, then stall until the server drops.
    HangMidBody,
    /// Send the headers at once, then the body one byte per interval.
    Trickle(Duration),
    /// Wait this long, then answer normally (interruptible by drop).
    Delay(Duration),
    /// HTTP 200 `application/json` body of exactly this many bytes (valid JSON
    /// when the size allows; 10 MiB is `10 << 20`).
    HugeBody(usize),
    /// The answer's JSON is cut short (JSON or SSE framing as configured).
    MalformedJson,
    /// A valid JSON-RPC answer carrying another id.
    WrongId,
    /// The normal answer with this `Content-Type` (`None`: no header at all).
    ContentType(Option<&'static str>),
    /// Add a header to the normal answer (e.g. a second `Mcp-Session-Id`).
    ExtraHeader(&'static str, &'static str),
    /// Bare HTTP status with a short text body; 401 carries
    /// `WWW-Authenticate: Bearer …`, 403 an `insufficient_scope` challenge.
    Status(u16),
    /// JSON-RPC error with this HTTP status (JSON body, request id echoed).
    Error {
        /// HTTP status.
        status: u16,
        /// JSON-RPC error code.
        code: i64,
        /// JSON-RPC error message.
        message: &'static str,
        /// Optional `error.data`.
        data: Option<Value>,
    },
    /// Replace the JSON-RPC `result` with this value (id echoed).
    Result(Value),
    /// A fully custom HTTP answer. `{base}` in the body and in header values
    /// is replaced by `http://127.0.0.1:PORT` and `{path}` by the route's path, so a
    /// route can serve documents that point back at the server (e.g. OAuth metadata)
    /// or redirect to its own path with a trailing slash (`{base}{path}/`).
    Raw {
        /// HTTP status.
        status: u16,
        /// Extra headers (`Content-Length` is added).
        headers: Vec<(&'static str, &'static str)>,
        /// Body bytes.
        body: String,
    },
    /// Send the headers and half of the body, then reset the connection (RST).
    Reset,
    /// Reset the connection with the request unread, writing nothing (RST): a server that
    /// closed the kept-alive connection while it sat idle.
    ResetUnanswered,
    /// SSE stream that never carries the answer: keep-alive comments and
    /// notifications every 50 ms until the client leaves or the server drops.
    SseNoResponse,
    /// The deprecated HTTP+SSE transport's stream: an `endpoint` event, then comments until
    /// the client leaves or the server drops.
    SseEndpoint,
    /// SSE stream with a notification (no event ids) that ends without the answer.
    SseEndWithoutResponse,
    /// SSE stream (priming event with id, optional `retry:`) that ends without
    /// the answer; the answer is delivered on the `resumptions`-th
    /// `GET` + `Last-Event-ID` (earlier GETs get another id-only event and end).
    /// `u32::MAX` never delivers. `padding` adds an SSE comment of that many
    /// bytes to the POST stream and to every GET stream.
    SseCutAndResume {
        /// GETs needed before the answer arrives (1 = the first GET).
        resumptions: u32,
        /// `retry:` in ms sent with the id-only events.
        retry_ms: Option<u64>,
        /// Bytes of SSE comment padding per stream.
        padding: usize,
    },
    /// List methods: first page normal, then `nextCursor: "repeat"` forever
    /// (the repeated page is empty).
    RepeatCursor,
    /// List methods: `nextCursor: ""`.
    EmptyCursor,
    /// List methods: two pages, the second repeats the first entry.
    DuplicateEntry,
    /// List methods: this many pages, one synthetic entry each, distinct cursors.
    Pages(usize),
    /// List methods: this many synthetic entries (paged by `page_size`).
    Entries(usize),
    /// List methods: an empty first page whose cursor leads to the normal list.
    EmptyFirstPage,
}

/// A hostile behaviour switched on for selected requests of a route.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// Which requests it applies to.
    pub on: On,
    /// What happens.
    pub action: Action,
    /// Apply only to the first N matching requests (`None`: always).
    pub times: Option<u32>,
}

impl Fault {
    /// Fault for POSTs of one JSON-RPC method, e.g. `Fault::on("tools/list", Action::HangBeforeHeaders)`.
    pub fn on(method: &'static str, action: Action) -> Self {
        Fault {
            on: On::Rpc(method),
            action,
            times: None,
        }
    }

    /// Fault for every request of the route.
    pub fn always(action: Action) -> Self {
        Fault {
            on: On::Any,
            action,
            times: None,
        }
    }

    /// Fault for every POST of the route.
    pub fn post(action: Action) -> Self {
        Fault {
            on: On::Post,
            action,
            times: None,
        }
    }

    /// Fault for one HTTP method (`"HEAD"`, `"GET"`, `"DELETE"`, `"POST"`).
    pub fn http(method: &'static str, action: Action) -> Self {
        Fault {
            on: On::Http(method),
            action,
            times: None,
        }
    }

    /// Limit the fault to the first `n` matching requests.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }
}

/// Everything that describes one route of the fake server.
///
/// Plain public fields with a healthy [`Default`], so a test reads like a spec
/// row: `FakeConfig { era: Era::Legacy("2025-06-18"), response: Mode::Sse, ..Default::default() }`.
#[derive(Clone, Debug)]
pub struct FakeConfig {
    /// Protocol era (default: legacy 2025-11-25).
    pub era: Era,
    /// Framing of successful answers (default: JSON).
    pub response: Mode,
    /// SSE framing / interleaving options.
    pub sse: SseOpts,
    /// Legacy-leg options.
    pub legacy: LegacyOpts,
    /// Modern-leg options.
    pub modern: ModernOpts,
    /// Status answered to `HEAD` (default 200; 405 adds `Allow`).
    pub head_status: u16,
    /// Answer 415 to a POST whose `Content-Type` is not JSON and 406 when
    /// `Accept` does not list both `application/json` and `text/event-stream`.
    pub strict_headers: bool,
    /// Advertised capabilities.
    pub advertise: Advertise,
    /// Tool inventory (default: [`tools::default_tools`]).
    pub tools: Vec<Value>,
    /// Resource inventory (default: [`tools::default_resources`]).
    pub resources: Vec<Value>,
    /// Prompt inventory (default: [`tools::default_prompts`]).
    pub prompts: Vec<Value>,
    /// Entries per list page (`None`: everything on one page).
    pub page_size: Option<usize>,
    /// Hostile behaviours; the first matching one (with uses left) applies.
    pub faults: Vec<Fault>,
    /// Answer 401 unless the request carries `Authorization: Bearer <token>`.
    pub require_bearer: Option<String>,
    /// `serverInfo.name`.
    pub server_name: &'static str,
    /// Extra routes (path → config), honoured on the config given to
    /// [`super::FakeServer::start`] only. The config itself serves `/mcp`.
    pub routes: Vec<(String, FakeConfig)>,
}

impl Default for FakeConfig {
    fn default() -> Self {
        FakeConfig {
            era: Era::Legacy("2025-11-25"),
            response: Mode::Json,
            sse: SseOpts::default(),
            legacy: LegacyOpts::default(),
            modern: ModernOpts::default(),
            head_status: 200,
            strict_headers: true,
            advertise: Advertise::default(),
            tools: tools::default_tools(),
            resources: tools::default_resources(),
            prompts: tools::default_prompts(),
            page_size: None,
            faults: Vec::new(),
            require_bearer: None,
            server_name: "fake-mcp",
            routes: Vec::new(),
        }
    }
}

impl FakeConfig {
    /// The legacy revisions this config accepts (see [`LegacyOpts::supported`]).
    pub fn legacy_supported(&self) -> Vec<&'static str> {
        let newest = match self.era {
            Era::Legacy(v) | Era::Dual(v) => v,
            Era::Modern => return Vec::new(),
        };
        if let Some(list) = &self.legacy.supported {
            return list.clone();
        }
        let mut out: Vec<&'static str> = LEGACY_VERSIONS
            .iter()
            .copied()
            .filter(|v| *v < newest)
            .collect();
        out.push(newest);
        out
    }

    /// The config with the tool named `name` removed from the inventory.
    pub fn without_tool(mut self, name: &str) -> Self {
        self.tools
            .retain(|t| t.get("name").and_then(Value::as_str) != Some(name));
        self
    }

    /// The config with `fault` appended.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }
}
