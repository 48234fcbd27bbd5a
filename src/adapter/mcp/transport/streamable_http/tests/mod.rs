//! The Streamable HTTP transport against loopback servers: headers per era, sessions and
//! their `DELETE` ([`sessions`]), statuses and bodies, limits and deadlines, §17 C–D
//! ([`statuses`]), the probe and kept-alive connections ([`connections`]), event streams and
//! server requests ([`streams`]), resumption, §17 I ([`resumption`]), and whole target runs
//! over real sockets ([`target_runs`]). The helpers here script the server and drive the
//! transport.

mod connections;
mod resumption;
mod sessions;
mod statuses;
mod streams;
mod target_runs;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::HttpTransport;
use crate::adapter::credential::Authorization;
use crate::adapter::mcp::era::Era;
use crate::adapter::mcp::jsonrpc;
use crate::adapter::mcp::transport::{
    self, Mirror, Outgoing, ResponseMode, Transport, TransportError,
};
use crate::config::McpOptions;
use crate::contract::Bound;
use crate::contract::Revision;
use crate::contract::Secret;
use crate::contract::{Dimension, Status};
use crate::net::testkit::http_server::{Reply, Request, Server};
use crate::net::{Client, Endpoint, HeadFacts, Reuse};
use crate::result::Key;
use crate::result::reason::{Limit, Malformed, Redirect};
use crate::result::{DiagnosticCode, Fact};
use crate::run_plan::Credential;
use crate::runtime::Attempt;
use crate::runtime::Deadline;

pub(super) const LONG: Duration = Duration::from_secs(5);
pub(super) const V: Revision = Revision::V2025_11_25;

// ---------------------------------------------------------------- scripting the server

/// What a scripted route reads from an MCP request.
pub(super) trait Rpc {
    /// The JSON body (`Null` when there is none).
    fn json(&self) -> Value;
    /// The JSON-RPC method of a POST, or `""`.
    fn rpc(&self) -> String;
    /// The JSON-RPC id of a POST.
    fn id(&self) -> Value;
}

impl Rpc for Request {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn rpc(&self) -> String {
        self.json()["method"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    fn id(&self) -> Value {
        self.json()["id"].clone()
    }
}

/// A complete response with a body of known length, bytes as written (header names as
/// given, reason phrase `X`).
pub(super) fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A JSON response.
pub(super) fn json(status: u16, body: &str) -> Vec<u8> {
    response(
        status,
        &[("content-type", "application/json")],
        body.as_bytes(),
    )
}

/// A JSON-RPC result for request `id`.
pub(super) fn result(id: &Value, result: &str) -> Vec<u8> {
    json(
        200,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
    )
}

/// The head of an event stream without a length: its body ends when the connection closes.
pub(super) fn sse_head(extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
    for (name, value) in extra {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// One event carrying `data`.
pub(super) fn event(data: &str) -> String {
    format!("event: message\ndata: {data}\n\n")
}

// ---------------------------------------------------------------- transports

pub(super) fn attempt_for(d: Duration) -> Attempt {
    Attempt::new(Deadline::new(Instant::now() + d, Bound::TimeoutMs))
}

pub(super) fn http(url: &str, credentials: Authorization) -> HttpTransport {
    let endpoint = Endpoint::parse(url).expect("loopback url");
    HttpTransport::new(endpoint, credentials, Client::new(Reuse::KeepAlive))
}

/// A 401/403 and whether it carried `WWW-Authenticate`.
pub(super) fn refused(status: u16, challenged: bool) -> TransportError {
    TransportError::Status {
        status,
        head: HeadFacts {
            redirect: None,
            challenged: Some(challenged),
            oauth: false,
        },
    }
}

pub(super) fn transport(server: &Server) -> HttpTransport {
    http(&server.url("/mcp"), Authorization::Static(None))
}

/// `Some(response_seen)` for a failure without an answer.
pub(super) fn unanswered(e: Option<&TransportError>) -> Option<bool> {
    match e {
        Some(TransportError::Network(o)) => Some(o.response_seen),
        _ => None,
    }
}

pub(super) fn send(
    t: &mut HttpTransport,
    method: &str,
    id: u64,
    era: Era,
    attempt: &Attempt,
) -> Result<transport::Reply, TransportError> {
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

pub(super) fn notify(t: &mut HttpTransport, era: Era) -> Result<(), TransportError> {
    let body = jsonrpc::encode_notification("notifications/initialized", None);
    t.notify(
        &Outgoing {
            method: "notifications/initialized",
            id: None,
            body: &body,
            era,
            mirror: Mirror::default(),
        },
        &attempt_for(LONG),
    )
}

pub(super) fn ok_result(r: &Request) -> Reply {
    Reply::Send(result(&r.id(), "{}"))
}

/// A legacy server issuing session `s-1` on `initialize`.
pub(super) fn with_session(r: &Request) -> Reply {
    match (r.method.as_str(), r.rpc().as_str()) {
        ("POST", "initialize") => Reply::Send(response(
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s-1"),
            ],
            format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, r.id()).as_bytes(),
        )),
        ("POST", "") => Reply::Send(response(202, &[], b"")),
        ("POST", _) => ok_result(r),
        _ => Reply::Send(response(200, &[], b"")),
    }
}
