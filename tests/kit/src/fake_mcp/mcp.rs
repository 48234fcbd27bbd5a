//! MCP semantics: turns a parsed request into an abstract [`Answer`] for the
//! legacy leg, the modern leg, or both.

use serde_json::{Map, Value, json};
use std::time::Duration;

use super::config::{Action, DiscoverReply, Era, FakeConfig, MODERN_VERSION};
use super::http_server::Request;
use super::server::{Route, Shared};
use super::tools;
use super::util::{decode_header_value, token};

/// `_meta` key carrying the protocol version (2026-07-28).
pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client capabilities (2026-07-28).
pub(super) const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Which leg is answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Leg {
    Legacy,
    Modern,
}

/// A JSON-RPC error object.
#[derive(Debug)]
pub(super) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// What to send, before framing (JSON vs SSE) and fault transforms.
pub(super) enum Answer {
    /// A JSON-RPC message. Status 200 is framed per the route's mode; any
    /// other status is always JSON.
    Rpc {
        status: u16,
        msg: RpcMsg,
        headers: Vec<(String, String)>,
        method: String,
    },
    /// A status with an empty body.
    Empty {
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// A status with a body.
    Body {
        status: u16,
        content_type: Option<String>,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
    },
    /// A finite SSE stream of pre-rendered events.
    Events {
        headers: Vec<(String, String)>,
        events: Vec<Vec<u8>>,
    },
}

/// The body of a JSON-RPC answer.
pub(super) enum RpcMsg {
    /// A complete message.
    Full(Value),
    /// A success whose `result` object is already serialised (fast path for
    /// inventories, which are serialised once per route).
    Result { id: Value, text: String },
}

impl RpcMsg {
    /// The serialised message.
    pub fn text(&self) -> String {
        match self {
            RpcMsg::Full(v) => v.to_string(),
            RpcMsg::Result { id, text } => {
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{text}}}")
            }
        }
    }

    /// Replaces the id with a different one (`Action::WrongId`).
    pub fn set_wrong_id(&mut self) {
        match self {
            RpcMsg::Full(v) => {
                let new = wrong_id(v.get("id").unwrap_or(&NULL));
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("id".into(), new);
                }
            }
            RpcMsg::Result { id, .. } => *id = wrong_id(id),
        }
    }
}

/// An id that differs from `id`: numbers + 1000, strings + `-wrong`.
fn wrong_id(id: &Value) -> Value {
    match id {
        Value::Number(n) => json!(n.as_i64().map_or(999_999, |i| i.wrapping_add(1000))),
        Value::String(s) => json!(format!("{s}-wrong")),
        _ => json!(999),
    }
}

/// A successful result, as a value or already serialised.
enum Payload {
    Value(Value),
    /// A serialised JSON object.
    Text(String),
}

/// Inventory entries serialised once per route.
pub(super) struct ListCache {
    tools: Vec<String>,
    resources: Vec<String>,
    prompts: Vec<String>,
    templates: Vec<String>,
}

impl ListCache {
    /// Serialises the inventories of `cfg`.
    pub fn new(cfg: &FakeConfig) -> ListCache {
        let ser = |items: &[Value]| items.iter().map(Value::to_string).collect();
        ListCache {
            tools: ser(&cfg.tools),
            resources: ser(&cfg.resources),
            prompts: ser(&cfg.prompts),
            templates: ser(&tools::default_templates()),
        }
    }
}

/// The request as seen by the MCP layer.
pub(super) struct Req<'a> {
    pub head: &'a Request,
    /// Parsed body, if it was JSON.
    pub json: Option<&'a Value>,
    /// The body was present but not JSON.
    pub unparsable: bool,
}

/// A classified JSON-RPC message.
pub(super) enum Msg<'a> {
    Request {
        id: &'a Value,
        method: &'a str,
        params: &'a Value,
    },
    Notification {
        method: &'a str,
    },
    Response {
        id: &'a Value,
    },
    Invalid(&'static str),
}

static NULL: Value = Value::Null;

/// Classifies a JSON-RPC message.
pub(super) fn classify(v: &Value) -> Msg<'_> {
    let Some(obj) = v.as_object() else {
        return Msg::Invalid(if v.is_array() {
            "JSON-RPC batches are not supported"
        } else {
            "not a JSON-RPC object"
        });
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Msg::Invalid("jsonrpc must be \"2.0\"");
    }
    let id = obj.get("id");
    match obj.get("method") {
        Some(Value::String(method)) => match id {
            None => Msg::Notification { method },
            Some(id @ (Value::String(_) | Value::Number(_))) => Msg::Request {
                id,
                method,
                params: obj.get("params").unwrap_or(&NULL),
            },
            Some(_) => Msg::Invalid("id must be a string or a number"),
        },
        Some(_) => Msg::Invalid("method must be a string"),
        None => match id {
            Some(id) if obj.contains_key("result") || obj.contains_key("error") => {
                Msg::Response { id }
            }
            _ => Msg::Invalid("neither a request, a notification nor a response"),
        },
    }
}

fn h(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_string(), value.into())
}

/// A JSON-RPC error message.
pub(super) fn error_msg(id: &Value, e: &RpcError) -> Value {
    let mut err = json!({"code": e.code, "message": e.message});
    if let Some(d) = &e.data {
        err["data"] = d.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

fn rpc_error(status: u16, id: &Value, e: RpcError, method: &str) -> Answer {
    Answer::Rpc {
        status,
        msg: RpcMsg::Full(error_msg(id, &e)),
        headers: Vec::new(),
        method: method.to_string(),
    }
}

fn empty(status: u16) -> Answer {
    Answer::Empty {
        status,
        headers: Vec::new(),
    }
}

fn not_allowed(allow: &str) -> Answer {
    Answer::Empty {
        status: 405,
        headers: vec![h("Allow", allow)],
    }
}

fn server_info(cfg: &FakeConfig) -> Value {
    json!({"name": cfg.server_name, "title": "Fake MCP server", "version": "0.1.0"})
}

fn capabilities(cfg: &FakeConfig, leg: Leg) -> Value {
    let mut caps = Map::new();
    if cfg.advertise.tools {
        caps.insert("tools".into(), json!({"listChanged": false}));
    }
    if cfg.advertise.resources {
        let r = if leg == Leg::Legacy {
            json!({"subscribe": false, "listChanged": false})
        } else {
            json!({"listChanged": false})
        };
        caps.insert("resources".into(), r);
    }
    if cfg.advertise.prompts {
        caps.insert("prompts".into(), json!({"listChanged": false}));
    }
    if cfg.advertise.logging {
        caps.insert("logging".into(), json!({}));
    }
    Value::Object(caps)
}

/// Is this POST for the modern leg of a dual server?
fn is_modern_request(cfg: &FakeConfig, req: &Req) -> bool {
    if req.head.method != "POST" {
        return false;
    }
    let Some(v) = req.json else { return false };
    let method = v.get("method").and_then(Value::as_str).unwrap_or_default();
    if method == "initialize" {
        return false;
    }
    if method == "server/discover"
        || v.pointer("/params/_meta")
            .and_then(|m| m.get(META_VERSION))
            .is_some()
    {
        return true;
    }
    req.head
        .header("mcp-protocol-version")
        .is_some_and(|hv| hv == MODERN_VERSION || cfg.modern.supported.contains(&hv))
}

/// Entry point: the answer to `req` on `route`, ignoring transport-level faults.
pub(super) fn answer(shared: &Shared, route: &Route, req: &Req, action: Option<&Action>) -> Answer {
    let cfg = &route.cfg;
    if req.head.method == "HEAD" {
        let mut headers = Vec::new();
        if cfg.head_status == 405 {
            headers.push(h(
                "Allow",
                if cfg.era == Era::Modern {
                    "POST"
                } else {
                    "GET, POST, DELETE"
                },
            ));
        }
        return Answer::Empty {
            status: cfg.head_status,
            headers,
        };
    }
    match cfg.era {
        Era::Legacy(_) => legacy(shared, route, req, action),
        Era::Modern => modern(shared, route, req, action),
        Era::Dual(_) if is_modern_request(cfg, req) => modern(shared, route, req, action),
        Era::Dual(_) => legacy(shared, route, req, action),
    }
}

/// Content-Type / Accept / JSON checks shared by both legs.
fn preflight<'a>(cfg: &FakeConfig, req: &Req<'a>) -> Result<&'a Value, Answer> {
    if cfg.strict_headers {
        let ct = req.head.header("content-type").unwrap_or_default();
        let media = ct.split(';').next().unwrap_or_default().trim();
        if !media.eq_ignore_ascii_case("application/json") {
            let e = RpcError::new(
                -32000,
                "Unsupported Media Type: Content-Type must be application/json",
            );
            return Err(rpc_error(415, &NULL, e, ""));
        }
        let accept = req
            .head
            .header("accept")
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
            let e = RpcError::new(
                -32000,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            );
            return Err(rpc_error(406, &NULL, e, ""));
        }
    }
    match req.json {
        Some(v) if !req.unparsable => Ok(v),
        _ => Err(rpc_error(
            400,
            &NULL,
            RpcError::new(-32700, "Parse error"),
            "",
        )),
    }
}

// ---------------------------------------------------------------- legacy leg

fn legacy(shared: &Shared, route: &Route, req: &Req, action: Option<&Action>) -> Answer {
    let cfg = &route.cfg;
    match req.head.method.as_str() {
        "GET" => return legacy_get(route, req),
        "DELETE" => return legacy_delete(route, req),
        "POST" => {}
        _ => return not_allowed("GET, POST, DELETE"),
    }
    let v = match preflight(cfg, req) {
        Ok(v) => v,
        Err(a) => return a,
    };
    let (id, method, params) = match classify(v) {
        Msg::Invalid(why) => return rpc_error(400, &NULL, RpcError::new(-32600, why), ""),
        Msg::Response { id } => {
            shared.record_answer(id, v);
            return empty(202);
        }
        Msg::Notification { method } => (None, method, &NULL),
        Msg::Request { id, method, params } => (Some(id), method, params),
    };
    let rid = id.unwrap_or(&NULL);
    if method == "server/discover" {
        if let Some(reply) = &cfg.legacy.discover {
            return discover_reply(cfg, reply, rid);
        }
    }
    if method != "initialize" {
        if let Some(a) = check_session(route, req, rid, method) {
            return a;
        }
        if cfg.legacy.check_version_header {
            if let Some(hv) = req.head.header("mcp-protocol-version") {
                let supported = cfg.legacy_supported();
                if !supported.contains(&hv) {
                    let e = RpcError::new(
                        -32000,
                        format!(
                            "Bad Request: Unsupported protocol version: {hv} (supported versions: {})",
                            supported.join(", ")
                        ),
                    );
                    return rpc_error(400, &NULL, e, method);
                }
            }
        }
    }
    let Some(id) = id else {
        let status = if method == "notifications/initialized" {
            cfg.legacy.initialized_status
        } else {
            202
        };
        return if status == 202 || status == 204 {
            empty(status)
        } else {
            Answer::Body {
                status,
                content_type: Some("application/json".into()),
                body: b"{\"jsonrpc\":\"2.0\",\"result\":{}}".to_vec(),
                headers: Vec::new(),
            }
        };
    };
    if method == "initialize" {
        return initialize(shared, route, id, params);
    }
    let result = dispatch(shared, route, Leg::Legacy, method, params, None, action);
    let msg = match result {
        Ok(Payload::Value(r)) => RpcMsg::Full(json!({"jsonrpc": "2.0", "id": id, "result": r})),
        Ok(Payload::Text(text)) => RpcMsg::Result {
            id: id.clone(),
            text,
        },
        Err(e) => RpcMsg::Full(error_msg(id, &e)),
    };
    Answer::Rpc {
        status: 200,
        msg,
        headers: Vec::new(),
        method: method.to_string(),
    }
}

fn initialize(shared: &Shared, route: &Route, id: &Value, params: &Value) -> Answer {
    let cfg = &route.cfg;
    let Some(offered) = params.get("protocolVersion").and_then(Value::as_str) else {
        let e = RpcError::new(
            -32602,
            "initialize requires a string params.protocolVersion",
        );
        return Answer::Rpc {
            status: 200,
            msg: RpcMsg::Full(error_msg(id, &e)),
            headers: Vec::new(),
            method: "initialize".into(),
        };
    };
    let supported = cfg.legacy_supported();
    let newest = match cfg.era {
        Era::Legacy(v) | Era::Dual(v) => v,
        Era::Modern => MODERN_VERSION,
    };
    let version = if supported.contains(&offered) {
        offered
    } else {
        newest
    };
    let result = json!({
        "protocolVersion": version,
        "capabilities": capabilities(cfg, Leg::Legacy),
        "serverInfo": server_info(cfg),
        "instructions": "A fake MCP server for tests."
    });
    let mut headers = Vec::new();
    if cfg.legacy.issue_session {
        let sid = match cfg.legacy.fixed_session_id {
            Some(s) => s.to_string(),
            None => format!("fake-{}", token(shared.next_id())),
        };
        route.lock().sessions.insert(sid.clone());
        shared.session_created();
        headers.push(h("Mcp-Session-Id", sid));
    }
    Answer::Rpc {
        status: 200,
        msg: RpcMsg::Full(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        headers,
        method: "initialize".into(),
    }
}

/// Session gate of a stateful legacy server.
fn check_session(route: &Route, req: &Req, id: &Value, method: &str) -> Option<Answer> {
    if !route.cfg.legacy.require_session {
        return None;
    }
    match req.head.header("mcp-session-id") {
        None => {
            let e = RpcError::new(-32000, "Bad Request: Mcp-Session-Id header is required");
            Some(rpc_error(400, &NULL, e, method))
        }
        Some(sid) if !route.lock().sessions.contains(sid) => Some(rpc_error(
            404,
            id,
            RpcError::new(-32001, "Session not found"),
            method,
        )),
        Some(_) => None,
    }
}

fn discover_reply(cfg: &FakeConfig, reply: &DiscoverReply, id: &Value) -> Answer {
    let m = "server/discover";
    match reply {
        DiscoverReply::MethodNotFound => Answer::Rpc {
            status: 200,
            msg: RpcMsg::Full(error_msg(id, &RpcError::new(-32601, "Method not found"))),
            headers: Vec::new(),
            method: m.into(),
        },
        DiscoverReply::SessionRequired => rpc_error(
            400,
            &NULL,
            RpcError::new(-32000, "Bad Request: Mcp-Session-Id header is required"),
            m,
        ),
        DiscoverReply::InvalidParams => rpc_error(
            400,
            id,
            RpcError::new(-32602, "Invalid request parameters"),
            m,
        ),
        DiscoverReply::UnsupportedVersion => {
            let e = RpcError::new(
                -32000,
                format!(
                    "Bad Request: Unsupported protocol version: {MODERN_VERSION} (supported versions: {})",
                    cfg.legacy_supported().join(", ")
                ),
            );
            rpc_error(400, &NULL, e, m)
        }
        DiscoverReply::BadRequestEmpty => empty(400),
        DiscoverReply::NotFound => empty(404),
        DiscoverReply::MethodNotAllowed => not_allowed("GET, POST, DELETE"),
        DiscoverReply::NotJson => Answer::Body {
            status: 200,
            content_type: Some("text/plain; charset=utf-8".into()),
            body: b"this is not JSON".to_vec(),
            headers: Vec::new(),
        },
        DiscoverReply::GatewayNotFound => {
            rpc_error(404, id, RpcError::new(-32601, "Method not found"), m)
        }
        DiscoverReply::StatelessInvalidParams => Answer::Rpc {
            status: 200,
            msg: RpcMsg::Full(error_msg(
                id,
                &RpcError::new(-32602, "Invalid request parameters"),
            )),
            headers: Vec::new(),
            method: m.into(),
        },
        DiscoverReply::EmptyResult => Answer::Rpc {
            status: 200,
            msg: RpcMsg::Full(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
            headers: Vec::new(),
            method: m.into(),
        },
    }
}

fn legacy_get(route: &Route, req: &Req) -> Answer {
    if let Some(a) = check_session(route, req, &NULL, "") {
        return a;
    }
    let Some(last) = req.head.header("last-event-id") else {
        // No standalone server→client stream is offered.
        return not_allowed("POST, DELETE");
    };
    if route.cfg.strict_headers
        && !req
            .head
            .header("accept")
            .unwrap_or_default()
            .contains("text/event-stream")
    {
        return rpc_error(
            406,
            &NULL,
            RpcError::new(-32000, "Not Acceptable: GET requires text/event-stream"),
            "",
        );
    }
    let key = last.rsplit_once('-').map_or(last, |(k, _)| k);
    let mut state = route.lock();
    let Some(pending) = state.streams.get_mut(key) else {
        drop(state);
        return rpc_error(
            400,
            &NULL,
            RpcError::new(-32000, "Bad Request: unknown Last-Event-ID"),
            "",
        );
    };
    pending.remaining = pending.remaining.saturating_sub(1);
    let seq = pending.next_seq;
    pending.next_seq += 1;
    let event_id = format!("{key}-{seq}");
    let mut events = Vec::new();
    if pending.padding > 0 {
        events.push(comment(pending.padding));
    }
    if pending.remaining == 0 {
        events.push(sse_event(
            pending.named,
            Some(&event_id),
            None,
            &pending.msg,
        ));
        state.streams.remove(key);
    } else {
        events.push(sse_event(false, Some(&event_id), pending.retry_ms, ""));
    }
    Answer::Events {
        headers: sse_headers(),
        events,
    }
}

fn legacy_delete(route: &Route, req: &Req) -> Answer {
    let cfg = &route.cfg;
    let status = cfg.legacy.delete_status;
    let answer = |status: u16| {
        if status == 405 {
            not_allowed("GET, POST")
        } else {
            empty(status)
        }
    };
    match req.head.header("mcp-session-id") {
        None if cfg.legacy.require_session => rpc_error(
            400,
            &NULL,
            RpcError::new(-32000, "Bad Request: Mcp-Session-Id header is required"),
            "",
        ),
        None => answer(status),
        Some(sid) => {
            let mut state = route.lock();
            if !state.sessions.contains(sid) {
                drop(state);
                return if cfg.legacy.require_session {
                    rpc_error(404, &NULL, RpcError::new(-32001, "Session not found"), "")
                } else {
                    answer(status)
                };
            }
            if status != 405 {
                state.sessions.remove(sid);
            }
            answer(status)
        }
    }
}

// ---------------------------------------------------------------- modern leg

fn modern(shared: &Shared, route: &Route, req: &Req, action: Option<&Action>) -> Answer {
    let cfg = &route.cfg;
    if req.head.method != "POST" {
        let e = RpcError::new(
            -32000,
            "Method not allowed: this server is stateless (2026-07-28)",
        );
        let mut a = rpc_error(405, &NULL, e, "");
        if let Answer::Rpc { headers, .. } = &mut a {
            headers.push(h("Allow", "POST"));
        }
        return a;
    }
    let v = match preflight(cfg, req) {
        Ok(v) => v,
        Err(a) => return a,
    };
    let (id, method, params) = match classify(v) {
        Msg::Invalid(why) => return rpc_error(400, &NULL, RpcError::new(-32600, why), ""),
        Msg::Response { id } => {
            shared.record_answer(id, v);
            return empty(202);
        }
        Msg::Notification { .. } => return empty(202),
        Msg::Request { id, method, params } => (id, method, params),
    };
    if method == "initialize" {
        let requested = params
            .get("protocolVersion")
            .cloned()
            .unwrap_or(Value::Null);
        let e = RpcError::new(
            -32022,
            format!("Unsupported protocol version: this server speaks {} only; the initialize handshake is not accepted", cfg.modern.supported.join(", ")),
        )
        .with_data(json!({"supported": cfg.modern.supported, "requested": requested}));
        return rpc_error(400, id, e, method);
    }
    let caps = match modern_checks(cfg, req, method, params) {
        Ok(c) => c,
        Err(e) => return rpc_error(400, id, e, method),
    };
    match dispatch(shared, route, Leg::Modern, method, params, caps, action) {
        Ok(Payload::Value(mut r)) => {
            if let Some(obj) = r.as_object_mut() {
                obj.entry("resultType").or_insert_with(|| json!("complete"));
                let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                if let Some(m) = meta.as_object_mut() {
                    m.insert(META_SERVER_INFO.into(), server_info(cfg));
                }
            }
            Answer::Rpc {
                status: 200,
                msg: RpcMsg::Full(json!({"jsonrpc": "2.0", "id": id, "result": r})),
                headers: Vec::new(),
                method: method.into(),
            }
        }
        Ok(Payload::Text(mut text)) => {
            // A list result never carries these keys itself.
            text.pop();
            let meta = json!({META_SERVER_INFO: server_info(cfg)});
            text.push_str(&format!(",\"resultType\":\"complete\",\"_meta\":{meta}}}"));
            Answer::Rpc {
                status: 200,
                msg: RpcMsg::Result {
                    id: id.clone(),
                    text,
                },
                headers: Vec::new(),
                method: method.into(),
            }
        }
        Err(e) => {
            let status = match e.code {
                -32601 => 404,
                -32603 => 500,
                _ => 400,
            };
            rpc_error(status, id, e, method)
        }
    }
}

/// Envelope and standard-header validation; returns the client capabilities.
fn modern_checks<'a>(
    cfg: &FakeConfig,
    req: &Req,
    method: &str,
    params: &'a Value,
) -> Result<Option<&'a Value>, RpcError> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let version = meta
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let caps = meta
        .and_then(|m| m.get(META_CAPS))
        .filter(|c| c.is_object());
    let mut missing = Vec::new();
    if version.is_none() {
        missing.push(META_VERSION);
    }
    if caps.is_none() {
        missing.push(META_CAPS);
    }
    let Some(version) = version.filter(|_| missing.is_empty()) else {
        return Err(RpcError::new(
            -32602,
            "params._meta must carry the required protocol version and client capabilities",
        )
        .with_data(json!({"missing": missing})));
    };
    let validate = cfg.modern.validate_headers;
    let mismatch = |what: String, header: Option<&str>, body: Value| {
        RpcError::new(-32020, what).with_data(json!({"header": header, "body": body}))
    };
    if validate {
        let hv = req.head.header("mcp-protocol-version");
        if hv != Some(version) {
            return Err(mismatch(
                "MCP-Protocol-Version header missing or not matching params._meta".into(),
                hv,
                json!(version),
            ));
        }
    }
    if !cfg.modern.supported.contains(&version) {
        return Err(
            RpcError::new(-32022, format!("Unsupported protocol version: {version}"))
                .with_data(json!({"supported": cfg.modern.supported, "requested": version})),
        );
    }
    if !validate {
        return Ok(caps);
    }
    let hm = req.head.header("mcp-method");
    if hm != Some(method) {
        return Err(mismatch(
            "Mcp-Method header missing or not matching the body".into(),
            hm,
            json!(method),
        ));
    }
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let expected = params
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default();
        let hn = req.head.header("mcp-name");
        if hn.and_then(decode_header_value).as_deref() != Some(expected) {
            return Err(mismatch(
                "Mcp-Name header missing or not matching the body".into(),
                hn,
                json!(expected),
            ));
        }
    }
    if method == "tools/call" {
        check_param_headers(cfg, req, params)?;
    }
    Ok(caps)
}

/// `(header name, property path)` for every `x-mcp-header` reachable through
/// `properties` chains.
fn header_bindings(schema: &Value) -> Vec<(String, Vec<String>)> {
    fn walk(node: &Value, path: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
        if path.len() > 64 {
            return;
        }
        let Some(props) = node.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (key, sub) in props {
            path.push(key.clone());
            if let Some(name) = sub.get("x-mcp-header").and_then(Value::as_str) {
                out.push((name.to_string(), path.clone()));
            }
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

fn check_param_headers(cfg: &FakeConfig, req: &Req, params: &Value) -> Result<(), RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(schema) = cfg
        .tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|t| t.get("inputSchema"))
    else {
        return Ok(());
    };
    for (header, path) in header_bindings(schema) {
        let mut value = params.get("arguments");
        for key in &path {
            value = value.and_then(|v| v.get(key));
        }
        let value = value.filter(|v| !v.is_null());
        let sent = req
            .head
            .header(&format!("mcp-param-{}", header.to_ascii_lowercase()));
        let ok = match (value, sent) {
            (None, None) => true,
            (Some(v), Some(raw)) => match (v, decode_header_value(raw)) {
                (Value::String(s), Some(d)) => *s == d,
                (Value::Bool(b), Some(d)) => d == if *b { "true" } else { "false" },
                (Value::Number(n), Some(d)) => d
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .zip(n.as_f64())
                    .is_some_and(|(a, b)| a == b),
                _ => false,
            },
            _ => false,
        };
        if !ok {
            return Err(RpcError::new(
                -32020,
                format!("Mcp-Param-{header} header missing or not matching the argument"),
            )
            .with_data(json!({"header": sent, "body": value})));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- shared methods

fn dispatch(
    shared: &Shared,
    route: &Route,
    leg: Leg,
    method: &str,
    params: &Value,
    caps: Option<&Value>,
    action: Option<&Action>,
) -> Result<Payload, RpcError> {
    let cfg = &route.cfg;
    let adv = &cfg.advertise;
    let cache = &route.cache;
    let shaped = action.is_some_and(is_list_shape);
    let not_found = || RpcError::new(-32601, "Method not found").with_data(json!(method));
    let gate = |on: bool| if on { Ok(()) } else { Err(not_found()) };
    let mut result = match method {
        "ping" if leg == Leg::Legacy => json!({}),
        "logging/setLevel" if leg == Leg::Legacy => json!({}),
        "server/discover" if leg == Leg::Modern => {
            let versions = cfg
                .modern
                .advertised
                .clone()
                .unwrap_or_else(|| cfg.modern.supported.clone());
            json!({
                "supportedVersions": versions,
                "capabilities": capabilities(cfg, leg),
                "serverInfo": server_info(cfg),
                "instructions": "A fake MCP server for tests."
            })
        }
        "tools/list" => {
            gate(adv.tools)?;
            if !shaped {
                return list_text(leg, cfg, "tools", &cache.tools, params);
            }
            list("tools", &cfg.tools, params, cfg.page_size, action)?
        }
        "resources/list" => {
            gate(adv.resources)?;
            if !shaped {
                return list_text(leg, cfg, "resources", &cache.resources, params);
            }
            list("resources", &cfg.resources, params, cfg.page_size, action)?
        }
        "resources/templates/list" => {
            gate(adv.resources)?;
            if !shaped {
                return list_text(leg, cfg, "resourceTemplates", &cache.templates, params);
            }
            let templates = tools::default_templates();
            list(
                "resourceTemplates",
                &templates,
                params,
                cfg.page_size,
                action,
            )?
        }
        "prompts/list" => {
            gate(adv.prompts)?;
            if !shaped {
                return list_text(leg, cfg, "prompts", &cache.prompts, params);
            }
            list("prompts", &cfg.prompts, params, cfg.page_size, action)?
        }
        "tools/call" => {
            gate(adv.tools)?;
            let wait = |d: Duration| shared.wait_stop(Some(d));
            return tools::call_tool(&cfg.tools, params, leg, caps, &wait).map(Payload::Value);
        }
        "resources/read" => {
            gate(adv.resources)?;
            tools::read_resource(&cfg.resources, params, leg)?
        }
        "prompts/get" => {
            gate(adv.prompts)?;
            return tools::get_prompt(&cfg.prompts, params).map(Payload::Value);
        }
        _ => return Err(not_found()),
    };
    if leg == Leg::Modern {
        if let Some(obj) = result.as_object_mut() {
            obj.insert("ttlMs".into(), json!(cfg.modern.ttl_ms));
            obj.insert("cacheScope".into(), json!(cfg.modern.cache_scope));
        }
    }
    Ok(Payload::Value(result))
}

/// List faults that reshape pages (served through the `Value` path).
fn is_list_shape(a: &Action) -> bool {
    matches!(
        a,
        Action::RepeatCursor
            | Action::EmptyCursor
            | Action::DuplicateEntry
            | Action::Pages(_)
            | Action::Entries(_)
            | Action::EmptyFirstPage
    )
}

fn cursor_param(params: &Value) -> Result<Option<&str>, RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(RpcError::new(-32602, "cursor must be a string")),
    }
}

/// `(start, end, nextCursor)` of the page at `cursor`; `None` for a bad cursor.
fn page_bounds(
    len: usize,
    cursor: Option<&str>,
    page_size: Option<usize>,
) -> Option<(usize, usize, Option<String>)> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .strip_prefix('c')?
            .parse::<usize>()
            .ok()
            .filter(|s| *s <= len)?,
    };
    let size = page_size.unwrap_or(usize::MAX).max(1);
    let end = start.saturating_add(size).min(len);
    Some((start, end, (end < len).then(|| format!("c{end}"))))
}

/// A normal list page assembled from pre-serialised entries.
fn list_text(
    leg: Leg,
    cfg: &FakeConfig,
    kind: &str,
    items: &[String],
    params: &Value,
) -> Result<Payload, RpcError> {
    let cursor = cursor_param(params)?;
    let (start, end, next) = page_bounds(items.len(), cursor, cfg.page_size)
        .ok_or_else(|| RpcError::new(-32602, "Invalid cursor"))?;
    let page = &items[start..end];
    let mut s = String::with_capacity(page.iter().map(|i| i.len() + 1).sum::<usize>() + 96);
    s.push_str("{\"");
    s.push_str(kind);
    s.push_str("\":[");
    for (i, item) in page.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(item);
    }
    s.push(']');
    if let Some(n) = next {
        s.push_str(&format!(",\"nextCursor\":\"{n}\""));
    }
    if leg == Leg::Modern {
        s.push_str(&format!(
            ",\"ttlMs\":{},\"cacheScope\":{}",
            cfg.modern.ttl_ms,
            json!(cfg.modern.cache_scope)
        ));
    }
    s.push('}');
    Ok(Payload::Text(s))
}

/// One page of a list method, shaped by a list fault if any.
fn list(
    kind: &str,
    items: &[Value],
    params: &Value,
    page_size: Option<usize>,
    action: Option<&Action>,
) -> Result<Value, RpcError> {
    let cursor = cursor_param(params)?;
    let bad_cursor = || RpcError::new(-32602, "Invalid cursor");
    let (page, next): (Vec<Value>, Option<String>) = match action {
        Some(Action::RepeatCursor) => match cursor {
            None => (items.to_vec(), Some("repeat".into())),
            Some(_) => (Vec::new(), Some("repeat".into())),
        },
        Some(Action::EmptyCursor) => (items.to_vec(), Some(String::new())),
        Some(Action::DuplicateEntry) => {
            let first = items
                .first()
                .cloned()
                .unwrap_or_else(|| tools::synthetic(kind, 0));
            match cursor {
                None if items.is_empty() => (vec![first], Some("dup".into())),
                None => (items.to_vec(), Some("dup".into())),
                Some("dup") => (vec![first], None),
                Some(_) => return Err(bad_cursor()),
            }
        }
        Some(Action::Pages(n)) => {
            let k = match cursor {
                None => 1,
                Some(c) => c
                    .strip_prefix('p')
                    .and_then(|k| k.parse::<usize>().ok())
                    .filter(|k| *k >= 1 && *k <= *n)
                    .ok_or_else(bad_cursor)?,
            };
            if *n == 0 {
                (Vec::new(), None)
            } else {
                (
                    vec![tools::synthetic(kind, k)],
                    (k < *n).then(|| format!("p{}", k + 1)),
                )
            }
        }
        Some(Action::Entries(n)) => {
            let all: Vec<Value> = (0..*n).map(|i| tools::synthetic(kind, i)).collect();
            paginate(&all, cursor, page_size).ok_or_else(bad_cursor)?
        }
        Some(Action::EmptyFirstPage) => match cursor {
            None => (Vec::new(), Some("c0".into())),
            Some(_) => paginate(items, cursor, page_size).ok_or_else(bad_cursor)?,
        },
        _ => paginate(items, cursor, page_size).ok_or_else(bad_cursor)?,
    };
    let mut result = Map::new();
    result.insert(kind.into(), Value::Array(page));
    if let Some(n) = next {
        result.insert("nextCursor".into(), Value::String(n));
    }
    Ok(Value::Object(result))
}

fn paginate(
    items: &[Value],
    cursor: Option<&str>,
    page_size: Option<usize>,
) -> Option<(Vec<Value>, Option<String>)> {
    let (start, end, next) = page_bounds(items.len(), cursor, page_size)?;
    Some((items[start..end].to_vec(), next))
}

// ---------------------------------------------------------------- SSE helpers

/// Headers of an SSE answer.
pub(super) fn sse_headers() -> Vec<(String, String)> {
    vec![
        h("Content-Type", "text/event-stream"),
        h("Cache-Control", "no-cache"),
        h("X-Accel-Buffering", "no"),
    ]
}

/// One SSE event.
pub(super) fn sse_event(named: bool, id: Option<&str>, retry: Option<u64>, data: &str) -> Vec<u8> {
    let mut s = String::with_capacity(data.len() + 48);
    if named {
        s.push_str("event: message\n");
    }
    if let Some(id) = id {
        s.push_str("id: ");
        s.push_str(id);
        s.push('\n');
    }
    if let Some(r) = retry {
        s.push_str(&format!("retry: {r}\n"));
    }
    if data.is_empty() {
        s.push_str("data:\n");
    }
    for line in data.split('\n').filter(|l| !l.is_empty()) {
        s.push_str("data: ");
        s.push_str(line);
        s.push('\n');
    }
    s.push('\n');
    s.into_bytes()
}

/// An SSE comment of `size` bytes (at least 4).
pub(super) fn comment(size: usize) -> Vec<u8> {
    let mut c = Vec::with_capacity(size.max(4));
    c.extend_from_slice(b": ");
    c.resize(size.max(4) - 2, b'p');
    c.extend_from_slice(b"\n\n");
    c
}

/// A `notifications/message` notification.
pub(super) fn log_notification(n: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": "fake-mcp", "data": format!("working ({n})")}}).to_string()
}
