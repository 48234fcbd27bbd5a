//! The reachability probe and connections: a `HEAD` of any status, one kept-alive connection
//! (over TLS too) for a target's requests, and several requests at once.

use super::*;

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
/// at once add one connection each, whose handshakes resume the run's TLS session while it
/// has tickets. The
/// lanes stay for the next round, and carry the legacy session.
#[test]
fn https_keeps_one_connection_and_resumes_tls_for_requests_at_once() {
    use crate::net::testkit::tls::{Handshakes, TestCa, counting_server_wrap};
    let ca = TestCa::new();
    let counts = Arc::new(Handshakes::default());
    let wrap = counting_server_wrap(ca.leaf(&["localhost"]), counts.clone());
    // A far link (the kernel's round trip 40 ms) and four requests at once, so that lanes
    // pay even with their TCP and TLS handshakes: three round trips saved, two spent.
    let _far = super::super::far_link::assume(Duration::from_millis(40));
    let server = Server::start_wrapped(wrap, with_session);
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

    let lists = ["tools/list", "resources/list", "prompts/list", "tools/list"];
    for round in 0..2u64 {
        let replies = send_all(&mut t, &lists, 3 + 4 * round, Era::Legacy(V), &a);
        assert!(replies.iter().all(Result::is_ok), "{replies:?}");
    }
    t.close(&attempt_for(LONG));
    assert_eq!(
        server.connections(),
        4,
        "one more per request beside the first"
    );
    // The run's handshake left the server's two TLS 1.3 tickets (rustls's default): at least
    // two lanes resume with them; the third resumes too when a lane's new tickets arrived
    // before it started, else it makes a full handshake.
    let (full, resumed) = counts.counts();
    assert!(
        full + resumed == 4 && resumed >= 2,
        "full {full}, resumed {resumed}"
    );
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
