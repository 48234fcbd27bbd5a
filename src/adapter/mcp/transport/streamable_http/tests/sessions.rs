//! Headers per era and legacy sessions: what a modern request carries, the session id a legacy
//! `initialize` assigns, and the session's `DELETE` at close.

use super::*;

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
fn a_legacy_session_carries_its_id_and_is_deleted_at_close() {
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
