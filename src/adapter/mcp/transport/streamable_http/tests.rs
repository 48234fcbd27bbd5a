//! The Streamable HTTP transport against loopback servers: headers per era, sessions and
//! their `DELETE`, JSON and SSE bodies, server requests, resumption (upstream §17 I), limits
//! and deadlines (§17 C–D), and whole target runs over real sockets.

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

const LONG: Duration = Duration::from_secs(5);
const V: Revision = Revision::V2025_11_25;

// ---------------------------------------------------------------- scripting the server

/// What a scripted route reads from an MCP request.
trait Rpc {
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
fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
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
fn json(status: u16, body: &str) -> Vec<u8> {
    response(
        status,
        &[("content-type", "application/json")],
        body.as_bytes(),
    )
}

/// A JSON-RPC result for request `id`.
fn result(id: &Value, result: &str) -> Vec<u8> {
    json(
        200,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
    )
}

/// The head of an event stream without a length: its body ends when the connection closes.
fn sse_head(extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
    for (name, value) in extra {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// One event carrying `data`.
fn event(data: &str) -> String {
    format!("event: message\ndata: {data}\n\n")
}

// ---------------------------------------------------------------- transports

fn attempt_for(d: Duration) -> Attempt {
    Attempt::new(Deadline::new(Instant::now() + d, Bound::TimeoutMs))
}

fn http(url: &str, credentials: Authorization) -> HttpTransport {
    let endpoint = Endpoint::parse(url).expect("loopback url");
    HttpTransport::new(endpoint, credentials, Client::new(Reuse::KeepAlive))
}

/// A 401/403 and whether it carried `WWW-Authenticate`.
fn refused(status: u16, challenged: bool) -> TransportError {
    TransportError::Status {
        status,
        head: HeadFacts {
            redirect: None,
            challenged: Some(challenged),
        },
    }
}

fn transport(server: &Server) -> HttpTransport {
    http(&server.url("/mcp"), Authorization::Static(None))
}

/// `Some(response_seen)` for a failure without an answer.
fn unanswered(e: Option<&TransportError>) -> Option<bool> {
    match e {
        Some(TransportError::Network(o)) => Some(o.response_seen),
        _ => None,
    }
}

fn send(
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

fn notify(t: &mut HttpTransport, era: Era) -> Result<(), TransportError> {
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

fn ok_result(r: &Request) -> Reply {
    Reply::Send(result(&r.id(), "{}"))
}

/// A legacy server issuing session `s-1` on `initialize`.
fn with_session(r: &Request) -> Reply {
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

// ---------------------------------------------------------------- headers and sessions

#[test]
fn modern_requests_carry_version_and_method_and_never_a_session() {
    let server = Server::start(with_session);
    let mut t = http(
        &server.url("/mcp"),
        Authorization::Static(Some("Bearer tok".into())),
    );
    let params = [("Region".to_owned(), "us-west1".to_owned())];
    let mirror = Mirror {
        name: Some("search 世界"),
        params: &params,
    };
    let body = jsonrpc::encode_request(1, "tools/call", None);
    let out = Outgoing {
        method: "tools/call",
        id: Some(1),
        body: &body,
        era: Era::Modern,
        mirror,
    };
    let reply = t.request(&out, &attempt_for(LONG)).expect("reply");
    assert_eq!(reply.mode, ResponseMode::Json);
    assert!(!reply.session_issued);
    t.close(&Attempt::new(Deadline::after(LONG, Bound::Cleanup)));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "no DELETE for a modern session");
    let r = &reqs[0];
    assert_eq!(
        r.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(r.header("mcp-method"), Some("tools/call"));
    assert_eq!(
        r.header("mcp-name"),
        Some("=?base64?c2VhcmNoIOS4lueVjA==?=")
    );
    assert_eq!(r.header("mcp-param-region"), Some("us-west1"));
    assert_eq!(r.header("authorization"), Some("Bearer tok"));
    assert_eq!(r.header("mcp-session-id"), None);
}

/// Upstream §5–6: the handshake carries no version or session; afterwards both travel with
/// every message; the session is deleted once at the end (upstream §17 N160).
#[test]
fn legacy_session_headers_and_delete() {
    let server = Server::start(with_session);
    let mut t = transport(&server);
    let init = send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    assert!(init.session_issued);
    notify(&mut t, Era::Legacy(V)).expect("accepted");
    send(&mut t, "tools/list", 3, Era::Legacy(V), &attempt_for(LONG)).expect("list");
    let started = Instant::now();
    t.close(&Attempt::new(Deadline::after(LONG, Bound::Cleanup)));
    assert!(started.elapsed() < Duration::from_millis(250));
    t.close(&Attempt::new(Deadline::after(LONG, Bound::Cleanup)));
    let reqs = server.requests();
    let methods: Vec<&str> = reqs.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["POST", "POST", "POST", "DELETE"]);
    assert_eq!(reqs[0].header("mcp-session-id"), None);
    assert_eq!(reqs[0].header("mcp-protocol-version"), None);
    assert_eq!(reqs[0].header("mcp-method"), None);
    for r in &reqs[1..] {
        assert_eq!(r.header("mcp-session-id"), Some("s-1"), "{}", r.method);
        assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"));
        assert_eq!(r.header("mcp-method"), None);
    }
}

/// Upstream §17 N129: the session id header must be one visible-ASCII value.
#[test]
fn invalid_session_ids_are_malformed() {
    for headers in [
        vec![("mcp-session-id", "a"), ("mcp-session-id", "b")],
        vec![("mcp-session-id", "has space")],
    ] {
        let headers = Arc::new(headers);
        let server = Server::start(move |r| {
            let mut h = vec![("content-type", "application/json")];
            h.extend(headers.iter().copied());
            let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, r.id());
            Reply::Send(response(200, &h, body.as_bytes()))
        });
        let mut t = transport(&server);
        let e = send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG));
        assert!(matches!(e, Err(TransportError::Malformed(_))), "{e:?}");
    }
}

/// A discarded session is still deleted at the end of the run, with a fresh agent.
#[test]
fn discarded_sessions_are_deleted_at_close() {
    let server = Server::start(with_session);
    let mut t = transport(&server);
    let a = attempt_for(LONG);
    send(&mut t, "initialize", 1, Era::Handshake, &a).expect("init");
    a.abort();
    t.discard();
    t.close(&Attempt::new(Deadline::after(LONG, Bound::Cleanup)));
    let deletes = server.with_method("DELETE");
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].header("mcp-session-id"), Some("s-1"));
}

#[test]
fn delete_is_bounded_by_250_ms() {
    let server = Server::start(|r| match r.method.as_str() {
        "DELETE" => Reply::Hold(Vec::new(), LONG),
        _ => with_session(r),
    });
    let mut t = transport(&server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    let started = Instant::now();
    t.close(&Attempt::new(Deadline::after(LONG, Bound::Cleanup)));
    let took = started.elapsed();
    assert!(took < Duration::from_millis(400), "{took:?}");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    let started = Instant::now();
    let mut t = transport(&server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    t.close(&Attempt::new(Deadline::after(
        Duration::from_millis(40),
        Bound::Cleanup,
    )));
    assert!(started.elapsed() < Duration::from_millis(200));
}

// ---------------------------------------------------------------- statuses and bodies

#[test]
fn statuses_and_rejection_bodies() {
    let cases: Vec<(Vec<u8>, TransportError)> = vec![
        (
            json(
                401,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#,
            ),
            refused(401, false),
        ),
        (response(403, &[], b""), refused(403, false)),
        (
            response(403, &[("www-authenticate", "Bearer")], b""),
            refused(403, true),
        ),
        (
            json(
                400,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"x","data":{"supported":["2099-01-01"]}}}"#,
            ),
            TransportError::Rpc {
                code: -32022,
                status: Some(400),
            },
        ),
        (
            json(
                404,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
            ),
            TransportError::Rpc {
                code: -32601,
                status: Some(404),
            },
        ),
        (
            response(400, &[], b"Bad Request: Session ID is required"),
            TransportError::status(400),
        ),
        (
            json(400, r#"{"jsonrpc":"2.0","error":{"message":"no code"}}"#),
            TransportError::status(400),
        ),
        (
            response(405, &[("allow", "POST")], b""),
            TransportError::status(405),
        ),
        (response(500, &[], b"oops"), TransportError::status(500)),
        (response(202, &[], b""), TransportError::status(202)),
        (
            json(
                200,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","data":"foo/bar"}}"#,
            ),
            TransportError::Rpc {
                code: -32601,
                status: Some(200),
            },
        ),
        // Upstream §17 C21: a response to another request.
        (
            json(200, r#"{"jsonrpc":"2.0","id":999,"result":{}}"#),
            TransportError::Malformed(Malformed::IdMismatch),
        ),
        (
            json(200, "{not json"),
            TransportError::Malformed(Malformed::NotJsonRpc),
        ),
        (
            json(200, r#"{"jsonrpc":"2.0","method":"notifications/message"}"#),
            TransportError::Malformed(Malformed::BodyWithoutResponse),
        ),
        // Upstream §17 N131.
        (
            response(200, &[("content-type", "text/plain")], b"{}"),
            TransportError::Malformed(Malformed::ContentType),
        ),
        (
            response(200, &[], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            TransportError::Malformed(Malformed::ContentType),
        ),
    ];
    for (bytes, expected) in cases {
        let bytes = Arc::new(bytes);
        let server = Server::start(move |_| Reply::Send(bytes.to_vec()));
        let mut t = transport(&server);
        let got = send(
            &mut t,
            "server/discover",
            1,
            Era::Modern,
            &attempt_for(LONG),
        );
        assert_eq!(got.err(), Some(expected));
    }
}

#[test]
fn json_batches_and_media_type_parameters() {
    let server = Server::start(|r| {
        let body = format!(
            r#"[{{"jsonrpc":"2.0","method":"notifications/message","params":{{}}}},{{"jsonrpc":"2.0","id":{},"result":{{"ok":true}}}}]"#,
            r.id()
        );
        Reply::Send(response(
            200,
            &[("content-type", "Application/JSON; charset=utf-8")],
            body.as_bytes(),
        ))
    });
    let mut t = transport(&server);
    let reply = send(&mut t, "tools/list", 4, Era::Legacy(V), &attempt_for(LONG)).expect("reply");
    assert_eq!(reply.result.get(), r#"{"ok":true}"#);
}

/// Upstream §17 C18: a redirect is a status, never followed.
#[test]
fn redirects_are_never_followed() {
    let elsewhere = Server::start(ok_result);
    let location = elsewhere.url("/mcp");
    let server =
        Server::start(move |_| Reply::Send(response(307, &[("location", location.as_str())], b"")));
    let mut t = transport(&server);
    let got = send(
        &mut t,
        "server/discover",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    let elsewhere_facts = HeadFacts {
        redirect: Some(Redirect::Elsewhere),
        challenged: None,
    };
    assert_eq!(
        got.err(),
        Some(TransportError::Status {
            status: 307,
            head: elsewhere_facts
        })
    );
    assert!(elsewhere.requests().is_empty());
}

/// A network failure of an exchange with the endpoint names its configured host and port.
#[test]
fn a_refused_connection_names_the_configured_address() {
    let port = crate::net::testkit::http_server::closed_port();
    let mut t = http(
        &format!("http://127.0.0.1:{port}/mcp"),
        Authorization::Static(None),
    );
    let got = send(
        &mut t,
        "server/discover",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    let Err(TransportError::Network(o)) = got else {
        panic!("a network failure: {got:?}")
    };
    assert_eq!(o.status, Status::Unreachable);
    assert_eq!(
        o.evidence.get(Key::Address),
        Some(&Fact::Config(format!("127.0.0.1:{port}")))
    );
    assert_eq!(
        o.evidence.get(Key::Failure),
        Some(&Fact::Word("connect_refused"))
    );
}

/// A same-origin redirect to the endpoint with a trailing slash says so (issue 12), from the
/// configured endpoint: the `Location` is compared, never kept.
#[test]
fn a_redirect_to_the_endpoint_with_a_slash_says_so() {
    let server = Server::start(|_| Reply::Send(response(307, &[("location", "/mcp/")], b"")));
    let mut t = transport(&server);
    let got = send(
        &mut t,
        "server/discover",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    assert_eq!(
        got.err(),
        Some(TransportError::Status {
            status: 307,
            head: HeadFacts {
                redirect: Some(Redirect::TrailingSlash),
                challenged: None
            }
        })
    );
}

/// Upstream §17 C19: a body over 1 MiB is over the limit; exactly 1 MiB is not.
#[test]
fn one_mebibyte_per_response() {
    for (extra, over) in [(0usize, false), (1, true)] {
        let server = Server::start(move |r| {
            let head = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"pad":""#, r.id());
            let tail = r#""}}"#;
            let pad = (1 << 20) + extra - head.len() - tail.len();
            let body = format!("{head}{}{tail}", "x".repeat(pad));
            Reply::Send(json(200, &body))
        });
        let mut t = transport(&server);
        let got = send(&mut t, "tools/list", 1, Era::Modern, &attempt_for(LONG));
        if over {
            assert_eq!(got.err(), Some(TransportError::Limit(Limit::Response)));
        } else {
            assert!(got.is_ok(), "{got:?}");
        }
    }
    // The same over a rejection's body.
    let server = Server::start(|_| Reply::Send(json(400, &"x".repeat((1 << 20) + 1))));
    let got = send(
        &mut transport(&server),
        "x",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    assert_eq!(got.err(), Some(TransportError::Limit(Limit::Response)));
}

/// Upstream §17 C20: headers, then a stalled body: a partial response at the deadline.
#[test]
fn stalled_body_is_a_partial_response_within_the_deadline() {
    let server = Server::start(|_| {
        let mut head =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"
                .to_vec();
        head.extend_from_slice(b"\"jsonrpc\"");
        Reply::Hold(head, LONG)
    });
    let mut t = transport(&server);
    let a = attempt_for(Duration::from_millis(80));
    let started = Instant::now();
    let got = send(&mut t, "server/discover", 1, Era::Modern, &a);
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(unanswered(got.as_ref().err()), Some(true));
    assert!(a.response_seen());
}

#[test]
fn silence_and_refusal_are_unreachable() {
    let server = Server::start(|_| Reply::Hold(Vec::new(), LONG));
    let mut t = transport(&server);
    let a = attempt_for(Duration::from_millis(80));
    let got = send(&mut t, "server/discover", 1, Era::Modern, &a);
    assert_eq!(unanswered(got.as_ref().err()), Some(false));
    // Nothing listens on the discard port of a fresh loopback listener we closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", closed.local_addr().expect("addr"));
    drop(closed);
    let mut t = http(&url, Authorization::Static(None));
    let probe = t.probe(&attempt_for(LONG)).expect("http probes");
    assert_eq!(unanswered(probe.as_ref().err()), Some(false));
}

/// The watchdog's abort cuts a blocked exchange off at once.
#[test]
fn abort_interrupts_a_blocked_exchange() {
    let server = Server::start(|_| Reply::Hold(sse_head(&[]), LONG));
    let mut t = transport(&server);
    let a = attempt_for(LONG);
    let watchdog = a.clone();
    let started = Instant::now();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        watchdog.abort();
    });
    let got = send(&mut t, "tools/list", 1, Era::Legacy(V), &a);
    assert!(started.elapsed() < Duration::from_millis(1000));
    assert!(matches!(got, Err(TransportError::Network(_))), "{got:?}");
    t.discard();
    // A discarded transport works again with a fresh agent.
    let a = attempt_for(LONG);
    assert!(t.probe(&a).expect("probe").is_ok());
}

// ---------------------------------------------------------------- probe and keep-alive

#[test]
fn head_probe_accepts_any_status_and_reuses_the_connection() {
    let server = Server::start(|r| match r.method.as_str() {
        "HEAD" => Reply::Send(
            b"HTTP/1.1 405 Method Not Allowed\r\nallow: POST\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ),
        _ => ok_result(r),
    });
    let mut t = http(
        &server.url("/mcp"),
        Authorization::Static(Some("Bearer tok".into())),
    );
    let a = attempt_for(LONG);
    let probe = t.probe(&a).expect("http probes").expect("connected");
    assert_eq!(probe.status, 405);
    assert!(a.response_seen());
    assert!(!probe.steps.is_empty());
    for id in 1..=4 {
        send(&mut t, "tools/list", id, Era::Modern, &a).expect("reply");
    }
    assert_eq!(server.connections(), 1, "one keep-alive connection");
    assert!(server.requests().iter().all(|r| r.connection == 0));
    let head = &server.with_method("HEAD")[0];
    assert_eq!(head.header("authorization"), Some("Bearer tok"));
}

/// Requests sent at once, ids from `first`.
fn send_all(
    t: &mut HttpTransport,
    methods: &[&str],
    first: u64,
    era: Era,
    attempt: &Attempt,
) -> Vec<Result<transport::Reply, TransportError>> {
    let bodies: Vec<Vec<u8>> = methods
        .iter()
        .zip(first..)
        .map(|(m, id)| jsonrpc::encode_request(id, m, None))
        .collect();
    let outs: Vec<Outgoing<'_>> = methods
        .iter()
        .zip(&bodies)
        .zip(first..)
        .map(|((method, body), id)| Outgoing {
            method,
            id: Some(id),
            body,
            era,
            mirror: Mirror::default(),
        })
        .collect();
    t.request_all(&outs, attempt)
}

/// Over HTTPS, sequential work shares one connection and its one handshake; requests sent
/// at once add one connection each, whose handshakes resume the run's TLS session. The
/// lanes stay for the next round, and carry the legacy session.
#[test]
fn https_keeps_one_connection_and_resumes_tls_for_requests_at_once() {
    use crate::net::testkit::tls::{Handshakes, TestCa, counting_server_wrap};
    let ca = TestCa::new();
    let counts = Arc::new(Handshakes::default());
    let wrap = counting_server_wrap(ca.leaf(&["localhost"]), counts.clone());
    // A server slow to answer (25 ms), so that lanes pay even over TLS on loopback.
    let server = Server::start_wrapped(wrap, |r| {
        Reply::After(Duration::from_millis(25), Box::new(with_session(r)))
    });
    let config = crate::net::trust::client_config(ca.roots()).expect("config");
    let endpoint =
        Endpoint::parse(&format!("https://localhost:{}/mcp", server.port())).expect("endpoint");
    let client = Client::new(Reuse::KeepAlive).with_tls_config(config);
    let mut t = HttpTransport::new(endpoint, Authorization::Static(None), client);
    let a = attempt_for(LONG);
    t.probe(&a).expect("probe").expect("reachable");
    send(&mut t, "initialize", 1, Era::Handshake, &a).expect("initialize");
    send(&mut t, "tools/list", 2, Era::Legacy(V), &a).expect("tools/list");
    assert_eq!(server.connections(), 1);
    assert_eq!(counts.counts(), (1, 0), "full, resumed");

    let lists = ["tools/list", "resources/list", "prompts/list"];
    for round in 0..2u64 {
        let replies = send_all(&mut t, &lists, 3 + 3 * round, Era::Legacy(V), &a);
        assert!(replies.iter().all(Result::is_ok), "{replies:?}");
    }
    t.close(&attempt_for(LONG));
    assert_eq!(
        server.connections(),
        3,
        "one more per request beside the first"
    );
    assert_eq!(counts.counts(), (1, 2), "full, resumed");
    for r in server.with_method("POST").iter().skip(1) {
        assert_eq!(r.header("mcp-session-id"), Some("s-1"), "{}", r.rpc());
    }
    let delete = server.with_method("DELETE");
    assert_eq!(delete.len(), 1);
    assert_eq!(
        delete[0].connection, 0,
        "the DELETE on the run's connection"
    );
}

// ---------------------------------------------------------------- notifications

#[test]
fn notifications_accept_any_2xx() {
    for (reply, ok) in [
        (response(202, &[], b""), true),
        (json(200, r#"{"jsonrpc":"2.0","result":{}}"#), true),
        (response(204, &[], b""), true),
        (response(400, &[], b""), false),
        (response(500, &[], b""), false),
        (response(401, &[], b""), false),
    ] {
        let reply = Arc::new(reply);
        let server = Server::start(move |_| Reply::Send(reply.to_vec()));
        let got = notify(&mut transport(&server), Era::Legacy(V));
        assert_eq!(got.is_ok(), ok, "{got:?}");
    }
}

// ---------------------------------------------------------------- event streams

/// Upstream §17 D23: notifications are skipped and parsing stops at our response while the
/// stream stays open.
#[test]
fn sse_stops_at_the_response() {
    let server = Server::start(|r| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(b": keep-alive\n\nid: prime\ndata:\n\n");
        body.extend_from_slice(event(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"secret-response"}}"#).as_bytes());
        body.extend_from_slice(
            format!(
                "data: {{\"jsonrpc\":\"2.0\",\"id\":{},\r\ndata: \"result\":{{\"n\":1}}}}\r\n\r\n",
                r.id()
            )
            .as_bytes(),
        );
        Reply::Hold(body, LONG)
    });
    let mut t = transport(&server);
    let started = Instant::now();
    let reply = send(
        &mut t,
        "tools/list",
        7,
        Era::Legacy(V),
        &attempt_for(Duration::from_millis(500)),
    )
    .expect("reply");
    assert!(started.elapsed() < Duration::from_millis(400));
    assert_eq!(reply.mode, ResponseMode::Sse);
    let v: Value = serde_json::from_str(reply.result.get()).expect("json");
    assert_eq!(v["n"], 1);
}

/// Server requests on a legacy stream: `ping` gets an empty result, anything else −32601,
/// each POSTed on the session; then we keep waiting for our response.
#[test]
fn legacy_server_requests_are_answered_on_the_session() {
    let server = Server::start(|r| match (r.method.as_str(), r.rpc().as_str()) {
        ("POST", "initialize") => with_session(r),
        ("POST", "tools/list") => {
            let mut body = sse_head(&[]);
            body.extend_from_slice(
                event(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#).as_bytes(),
            );
            body.extend_from_slice(
                event(r#"{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}"#)
                    .as_bytes(),
            );
            body.extend_from_slice(
                event(&format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
                    r.id()
                ))
                .as_bytes(),
            );
            Reply::Hold(body, LONG)
        }
        _ => Reply::Send(response(202, &[], b"")),
    });
    let mut t = transport(&server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    send(&mut t, "tools/list", 3, Era::Legacy(V), &attempt_for(LONG)).expect("reply");
    let answers: Vec<Request> = server
        .with_method("POST")
        .into_iter()
        .filter(|r| r.json().get("method").is_none())
        .collect();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0].json()["id"], "p1");
    assert_eq!(answers[0].json()["result"], serde_json::json!({}));
    assert_eq!(answers[1].json()["id"], 9);
    assert_eq!(answers[1].json()["error"]["code"], -32601);
    for a in &answers {
        assert_eq!(a.header("mcp-session-id"), Some("s-1"));
        assert_eq!(a.header("mcp-protocol-version"), Some("2025-11-25"));
    }
}

/// A stream of server requests gets at most 100 answers, then the exchange fails as a
/// protocol violation (it would otherwise keep us posting until the deadline).
#[test]
fn a_flood_of_server_requests_gets_a_bounded_number_of_answers() {
    let server = Server::start(|r| match (r.method.as_str(), r.rpc().as_str()) {
        ("POST", "initialize") => with_session(r),
        ("POST", "tools/list") => {
            let mut body = sse_head(&[]);
            for n in 0..150 {
                body.extend_from_slice(
                    event(&format!(
                        r#"{{"jsonrpc":"2.0","id":"p{n}","method":"ping"}}"#
                    ))
                    .as_bytes(),
                );
            }
            body.extend_from_slice(
                event(&format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
                    r.id()
                ))
                .as_bytes(),
            );
            Reply::Hold(body, LONG)
        }
        _ => Reply::Send(response(202, &[], b"")),
    });
    let mut t = transport(&server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    let got = send(&mut t, "tools/list", 3, Era::Legacy(V), &attempt_for(LONG));
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::TooManyServerRequests))
    );
    let answers = server
        .with_method("POST")
        .into_iter()
        .filter(|r| r.json().get("method").is_none())
        .count();
    assert_eq!(answers, crate::result::reason::MAX_ANSWERS);
    // The count is per response: the next exchange answers again.
    send(&mut t, "tools/list", 4, Era::Legacy(V), &attempt_for(LONG)).expect_err("the same flood");
}

/// A stateless stream may not carry server requests; nothing is sent back.
#[test]
fn modern_streams_reject_server_requests() {
    let server = Server::start(|_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(event(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#).as_bytes());
        Reply::Hold(body, LONG)
    });
    let got = send(
        &mut transport(&server),
        "tools/list",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::StatelessServerRequest))
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn stream_errors() {
    let cases: Vec<(&'static str, TransportError)> = vec![
        // Upstream §17 N132: ends without our response and without an event id.
        (
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n",
            TransportError::Malformed(Malformed::StreamEnded),
        ),
        (
            "data: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\n\n",
            TransportError::Malformed(Malformed::IdMismatch),
        ),
        (
            "data: not json\n\n",
            TransportError::Malformed(Malformed::NotJsonRpc),
        ),
    ];
    for (stream, expected) in cases {
        let server = Server::start(move |_| {
            let mut body = sse_head(&[]);
            body.extend_from_slice(stream.as_bytes());
            Reply::Close(body)
        });
        let got = send(
            &mut transport(&server),
            "tools/list",
            1,
            Era::Legacy(V),
            &attempt_for(LONG),
        );
        assert_eq!(got.err(), Some(expected));
    }
    // One event over 1 MiB.
    let server = Server::start(|_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(format!("data: {}\n\n", "x".repeat((1 << 20) + 1)).as_bytes());
        Reply::Close(body)
    });
    let got = send(
        &mut transport(&server),
        "tools/list",
        1,
        Era::Modern,
        &attempt_for(LONG),
    );
    assert!(matches!(got, Err(TransportError::Limit(_))), "{got:?}");
}

// ---------------------------------------------------------------- resumption (§17 I)

/// The fixture of upstream §17 I: the POST stream primes `id: cursor` with `retry`, then
/// closes; every GET answers with `get`.
fn resumable(
    post_prefix: &'static str,
    get: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> Server {
    Server::start(move |r| match (r.method.as_str(), r.rpc().as_str()) {
        ("POST", "initialize") => with_session(r),
        ("POST", _) => {
            let mut body = sse_head(&[]);
            body.extend_from_slice(post_prefix.as_bytes());
            Reply::Close(body)
        }
        ("GET", _) => get(r),
        _ => Reply::Send(response(202, &[], b"")),
    })
}

fn legacy_session(server: &Server) -> HttpTransport {
    let mut t = transport(server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    t
}

fn call(
    t: &mut HttpTransport,
    era: Era,
    within: Duration,
) -> Result<transport::Reply, TransportError> {
    send(t, "tools/call", 3, era, &attempt_for(within))
}

/// I53: one GET, after the retry delay, carrying the last event id and the session.
#[test]
fn resumption_after_retry() {
    let server = resumable("id: cursor\nretry: 20\ndata:\n\n", |_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(
            event(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#).as_bytes(),
        );
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let started = Instant::now();
    let reply = call(&mut t, Era::Legacy(V), Duration::from_millis(150)).expect("resumed");
    assert!(started.elapsed() >= Duration::from_millis(20));
    assert_eq!(reply.mode, ResponseMode::Sse);
    let gets = server.with_method("GET");
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("last-event-id"), Some("cursor"));
    assert_eq!(gets[0].header("mcp-session-id"), Some("s-1"));
    assert_eq!(gets[0].header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    assert_eq!(
        server.with_method("POST").len(),
        2,
        "the POST is never repeated"
    );
}

/// I54 (modern) and I55 (no event id): no GET.
#[test]
fn stateless_and_id_less_streams_do_not_resume() {
    let server = resumable("id: cursor\nretry: 20\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Modern, Duration::from_millis(150));
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::StreamEnded))
    );
    let server = resumable("retry: 20\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(150));
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::StreamEnded))
    );
    assert!(server.with_method("GET").is_empty());
}

/// I56: three resumptions at most.
#[test]
fn three_resumptions_at_most() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let server = resumable("id: cursor\ndata:\n\n", move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        let mut body = sse_head(&[]);
        body.extend_from_slice(b"id: cursor\ndata:\n\n");
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(500));
    assert!(matches!(got, Err(TransportError::Limit(_))), "{got:?}");
    assert_eq!(gets.load(Ordering::SeqCst), 3);
}

/// I57: a retry delay beyond the deadline ends the attempt without a GET.
#[test]
fn retry_beyond_the_deadline_sends_no_get() {
    let server = resumable("id: cursor\nretry: 999999\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let started = Instant::now();
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(150));
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(unanswered(got.as_ref().err()), Some(true));
}

/// I58: the POST stream and its resumptions share one 1 MiB budget.
#[test]
fn resumptions_share_the_budget() {
    const COMMENT_KIB: usize = 600;
    let comment = || format!(":{}\n", "c".repeat(COMMENT_KIB * 1024));
    let prefix: &'static str =
        Box::leak(format!("{}id: cursor\ndata:\n\n", comment()).into_boxed_str());
    let server = resumable(prefix, move |_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(comment().as_bytes());
        body.extend_from_slice(event(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).as_bytes());
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), LONG);
    assert_eq!(got.err(), Some(TransportError::Limit(Limit::Response)));
    assert_eq!(server.with_method("POST").len(), 2);
}

/// Upstream §17 N135–N136: the resumption GET's own status and media type.
#[test]
fn resumption_answers_are_checked() {
    for (get, expected) in [
        (response(401, &[], b""), refused(401, false)),
        (
            response(404, &[], b""),
            TransportError::Malformed(Malformed::ResumptionStatus),
        ),
        (
            json(200, "{}"),
            TransportError::Malformed(Malformed::ResumptionContentType),
        ),
    ] {
        let get = Arc::new(get);
        let server = resumable("id: cursor\ndata:\n\n", move |_| Reply::Send(get.to_vec()));
        let mut t = legacy_session(&server);
        let got = call(&mut t, Era::Legacy(V), LONG);
        assert_eq!(got.err(), Some(expected));
    }
}

// ---------------------------------------------------------------- whole runs over sockets

fn run_over(
    server: &Server,
    options: McpOptions,
    dims: &[Dimension],
) -> Vec<crate::result::Observation> {
    run_with(server, options, Credential::None, dims)
}

fn run_with(
    server: &Server,
    options: McpOptions,
    credential: Credential,
    dims: &[Dimension],
) -> Vec<crate::result::Observation> {
    run_for(server, options, credential, dims, LONG)
}

/// A whole run, each check an attempt of `each`.
fn run_for(
    server: &Server,
    options: McpOptions,
    credential: Credential,
    dims: &[Dimension],
    each: Duration,
) -> Vec<crate::result::Observation> {
    use crate::adapter::Adapter;
    use crate::adapter::mcp::{McpAdapter, testkit};
    let mut target = testkit::target(options);
    target.endpoint = server.url("/mcp");
    let mut ctx = (*testkit::context(target)).clone();
    ctx.credential = credential;
    let mut run = McpAdapter.start(Arc::new(ctx));
    assert_eq!(run.configure().status, Status::Healthy);
    let obs = dims
        .iter()
        .map(|d| run.check(*d, &attempt_for(each)))
        .collect();
    run.close(&Attempt::new(Deadline::after(
        Duration::from_secs(1),
        Bound::Cleanup,
    )));
    obs
}

const PASSIVE: [Dimension; 4] = [
    Dimension::Reachability,
    Dimension::Authentication,
    Dimension::Protocol,
    Dimension::Capability,
];

/// The upstream legacy fixture (server-everything-like): discovery rejected with 400, a
/// session, SSE answers preceded by a log notification, a paginated tools list.
fn legacy_fixture(r: &Request) -> Reply {
    let sse = |payload: String| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(b"id: prime\ndata:\n\n");
        body.extend_from_slice(
            event(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#).as_bytes(),
        );
        body.extend_from_slice(event(&payload).as_bytes());
        Reply::Hold(body, Duration::from_millis(300))
    };
    let ok = |result: &str| format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id());
    match (r.method.as_str(), r.rpc().as_str()) {
        ("HEAD", _) => Reply::Send(response(405, &[("allow", "GET, POST, DELETE")], b"")),
        ("DELETE", _) => Reply::Send(response(200, &[], b"")),
        ("POST", "server/discover") => Reply::Send(json(
            400,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
        )),
        ("POST", "initialize") => {
            let body = format!(
                "{}{}",
                String::from_utf8_lossy(&sse_head(&[("mcp-session-id", "test-session")])),
                event(&ok(
                    r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"fixture","version":"1"}}"#
                ))
            );
            Reply::Hold(body.into_bytes(), Duration::from_millis(300))
        }
        ("POST", "notifications/initialized") => Reply::Send(response(202, &[], b"")),
        ("POST", "tools/list") if r.json()["params"].get("cursor").is_none() => {
            sse(ok(r#"{"tools":[],"nextCursor":"page-2"}"#))
        }
        ("POST", "tools/list") => sse(ok(
            r#"{"tools":[{"name":"search","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}]}"#,
        )),
        ("POST", "resources/list") => sse(ok(
            r#"{"resources":[{"name":"ready","uri":"health://ready"}]}"#,
        )),
        ("POST", "prompts/list") => sse(ok(r#"{"prompts":[{"name":"summary"}]}"#)),
        other => panic!("unexpected {other:?}"),
    }
}

fn requiring() -> McpOptions {
    McpOptions {
        required_tools: vec!["search".into()],
        required_resources: vec!["health://ready".into()],
        required_prompts: vec!["summary".into()],
        ..McpOptions::default()
    }
}

/// Upstream §17 A1/A3 over sockets: HEALTHY, one initialize, one DELETE, every non-initialize
/// POST carrying the session and version.
#[test]
fn legacy_fixture_end_to_end() {
    let server = Server::start(legacy_fixture);
    let obs = run_with(
        &server,
        requiring(),
        Credential::Bearer {
            variable: "TOKEN".into(),
            token: Secret::new("canary-token".into()),
        },
        &PASSIVE,
    );
    for o in &obs {
        assert_eq!(o.status, Status::Healthy, "{o:?}");
    }
    assert_eq!(obs[0].evidence.get(Key::HttpStatus), Some(&Fact::Int(405)));
    assert_eq!(
        obs[3].evidence.get(Key::ResponseMode),
        Some(&Fact::Word("sse"))
    );
    assert_eq!(obs[3].evidence.get(Key::Fallback), Some(&Fact::Bool(true)));
    assert_eq!(
        obs[3].evidence.get(Key::DiscoverRpcCode),
        Some(&Fact::Int(-32000))
    );
    let mut rpcs: Vec<String> = server
        .with_method("POST")
        .iter()
        .map(Request::rpc)
        .collect();
    // The inventories are listed at once, each on its own connection: they arrive in any
    // order, tools' second page after its first.
    rpcs[3..].sort();
    assert_eq!(
        rpcs,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "prompts/list",
            "resources/list",
            "tools/list",
            "tools/list",
        ]
    );
    assert_eq!(server.with_method("DELETE").len(), 1);
    for r in server.requests() {
        assert_eq!(r.header("authorization"), Some("Bearer canary-token"));
        let after_init =
            !matches!(r.rpc().as_str(), "server/discover" | "initialize") && r.method != "HEAD";
        if after_init {
            assert_eq!(
                r.header("mcp-session-id"),
                Some("test-session"),
                "{}",
                r.rpc()
            );
            assert_eq!(r.header("mcp-protocol-version"), Some("2025-06-18"));
        }
    }
    let rendered = format!("{obs:?}");
    assert!(!rendered.contains("canary") && !rendered.contains("fixture"));
}

/// A modern server over sockets (upstream §17 E25's server, passive): no initialize, no
/// session, no GET or DELETE; every POST carries the modern headers.
#[test]
fn modern_server_end_to_end() {
    // A fast server (loopback): one connection. A slow one (each POST answered after 25 ms):
    // a round trip costs more than a lane, so the inventories go out at once, resources and
    // prompts on a connection each.
    for (delay, connections) in [(None, 1), (Some(Duration::from_millis(25)), 3)] {
        let server = Server::start(move |r| {
            let ok = |result: &str| {
                let reply = Reply::Send(json(
                    200,
                    &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id()),
                ));
                match delay {
                    Some(d) => Reply::After(d, Box::new(reply)),
                    None => reply,
                }
            };
            match (r.method.as_str(), r.rpc().as_str()) {
                ("HEAD", _) => Reply::Send(response(405, &[("allow", "POST")], b"")),
                ("POST", "server/discover") => ok(
                    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{},"prompts":{}}}"#,
                ),
                ("POST", "tools/list") => ok(
                    r#"{"resultType":"complete","tools":[{"name":"search 世界","inputSchema":{"type":"object","properties":{"query":{"type":"string","x-mcp-header":"Query"}}}}]}"#,
                ),
                ("POST", "resources/list") => ok(r#"{"resultType":"complete","resources":[]}"#),
                ("POST", "prompts/list") => ok(r#"{"resultType":"complete","prompts":[]}"#),
                other => panic!("unexpected {other:?}"),
            }
        });
        let options = McpOptions {
            required_tools: vec!["search 世界".into()],
            ..McpOptions::default()
        };
        let obs = run_over(&server, options, &PASSIVE);
        for o in &obs {
            assert_eq!(o.status, Status::Healthy, "{o:?}");
        }
        for r in server.with_method("POST") {
            assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
            assert_eq!(r.header("mcp-method").map(str::to_owned), Some(r.rpc()));
            assert_eq!(r.header("mcp-session-id"), None);
            assert_eq!(
                r.json()["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
        }
        let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
        assert_eq!(methods, ["HEAD", "POST", "POST", "POST", "POST"]);
        assert_eq!(server.connections(), connections, "{delay:?}");
        let on_first: Vec<String> = server
            .requests()
            .iter()
            .filter(|r| r.connection == 0)
            .map(|r| format!("{} {}", r.method, r.rpc()))
            .collect();
        let sequential = [
            "HEAD ",
            "POST server/discover",
            "POST tools/list",
            "POST resources/list",
            "POST prompts/list",
        ];
        // At once: HEAD, discover and tools on the run's connection.
        assert_eq!(on_first, sequential[..6 - connections], "{delay:?}");
    }
}

/// The inventories go out at once only where that is faster than one after another.
#[test]
fn requests_go_out_at_once_where_a_round_trip_costs_more_than_a_lane() {
    use super::{Link, lanes_pay};
    let ms = Duration::from_millis;
    let link = |connect: u64, round_trip: u64| Link {
        connect: Some(ms(connect)),
        round_trip: Some(ms(round_trip)),
    };
    // Nothing measured yet: one after another.
    assert!(!lanes_pay(3, 2, Link::default()));
    // Loopback: a round trip of 0.1 ms is cheaper than a lane.
    let loopback = Link {
        connect: Some(Duration::from_micros(50)),
        round_trip: Some(Duration::from_micros(100)),
    };
    assert!(!lanes_pay(3, 2, loopback));
    // A busy machine's loopback (a round trip of 0.8 ms, long for want of a CPU): still one
    // after another, even over lanes already open, since a lane costs a millisecond there.
    let busy = Link {
        connect: Some(Duration::from_micros(100)),
        round_trip: Some(Duration::from_micros(800)),
    };
    assert!(!lanes_pay(3, 0, busy));
    // Across a WAN over plain HTTP (40 ms round trips, a 40 ms connect): three at once save
    // one round trip; two at once save nothing.
    assert!(lanes_pay(3, 2, link(40, 40)));
    assert!(!lanes_pay(2, 1, link(40, 40)));
    // Over HTTPS the new connections' TCP and TLS round trips eat the saving...
    assert!(!lanes_pay(3, 2, link(80, 40)));
    // ...unless they are open already (a later page), or the server is slow to answer.
    assert!(lanes_pay(3, 0, link(80, 40)));
    assert!(lanes_pay(3, 2, link(2, 25)));
    assert!(!lanes_pay(1, 0, link(0, 1000)));
}

/// Inventories listed at once on connections of their own (a slow server): the answers to
/// two are no response to the third, which the server never answers, so it is UNREACHABLE,
/// not a partial answer (UNKNOWN).
#[test]
fn a_silent_inventory_beside_answered_ones_is_unreachable() {
    let server = Server::start(|r| {
        let ok = |result: &str| {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id());
            Reply::After(
                Duration::from_millis(25),
                Box::new(Reply::Send(json(200, &body))),
            )
        };
        match (r.method.as_str(), r.rpc().as_str()) {
            ("HEAD", _) => Reply::Send(response(405, &[("allow", "POST")], b"")),
            ("POST", "server/discover") => ok(
                r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{},"prompts":{}}}"#,
            ),
            ("POST", "tools/list") => ok(r#"{"resultType":"complete","tools":[]}"#),
            ("POST", "resources/list") => ok(r#"{"resultType":"complete","resources":[]}"#),
            _ => Reply::HangBeforeHead,
        }
    });
    let dims = [Dimension::Protocol, Dimension::Capability];
    let obs = run_for(
        &server,
        McpOptions::default(),
        Credential::None,
        &dims,
        Duration::from_millis(600),
    );
    assert_eq!(obs[0].status, Status::Healthy, "{:?}", obs[0]);
    assert_eq!(obs[1].status, Status::Unreachable, "{:?}", obs[1]);
    assert_eq!(
        server.with_method("POST").len(),
        4,
        "the lists went out at once"
    );
}

/// Upstream §17 B16, C18, C19, C22 through whole runs.
#[test]
fn classifications_over_sockets() {
    let unauthorized = Server::start(|r| match r.method.as_str() {
        "HEAD" => Reply::Send(response(401, &[("www-authenticate", "Bearer")], b"")),
        _ => Reply::Send(response(401, &[], b"")),
    });
    let obs = run_over(
        &unauthorized,
        McpOptions::default(),
        &[Dimension::Reachability, Dimension::Protocol],
    );
    assert_eq!(
        obs[0].status,
        Status::Healthy,
        "a 401 HEAD is connectivity evidence"
    );
    assert_eq!(
        (obs[1].status, obs[1].code()),
        (Status::Misconfigured, Some(DiagnosticCode::McpAuth))
    );

    // A JSON-RPC error in a 200 is a legacy server's rejection of discovery (issue 12): the
    // handshake follows, and its own rejection is the verdict.
    let rpc_in_200 = Server::start(|_| {
        Reply::Send(json(
            200,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"leak-me"}}"#,
        ))
    });
    let obs = run_over(&rpc_in_200, McpOptions::default(), &[Dimension::Protocol]);
    assert_eq!(
        (obs[0].status, obs[0].code()),
        (Status::Unhealthy, Some(DiagnosticCode::McpRpc))
    );
    assert!(!format!("{obs:?}").contains("leak-me"));
    assert_eq!(rpc_in_200.requests().len(), 2, "discover, then initialize");
    assert_eq!(obs[0].evidence.get(Key::Fallback), Some(&Fact::Bool(true)));

    let huge = Server::start(|_| Reply::Send(json(200, &"x".repeat((1 << 20) + 1))));
    let obs = run_over(&huge, McpOptions::default(), &[Dimension::Protocol]);
    assert_eq!(
        (obs[0].status, obs[0].code()),
        (Status::Unknown, Some(DiagnosticCode::McpLimit))
    );
}
