//! What a response's status and body mean: refusals, rejections and malformed answers, JSON
//! batches, redirects, the 1 MiB budget, stalls, silence and aborts; and what a notification
//! accepts.

use super::*;

/// Each response of `cases`, answered to a modern `server/discover`, fails the request as
/// its case says.
#[track_caller]
fn answered(cases: Vec<(Vec<u8>, TransportError)>) {
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
fn a_401_or_403_is_a_refusal_whatever_its_body_and_says_whether_it_challenged() {
    answered(vec![
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
    ]);
}

#[test]
fn a_rejection_is_its_json_rpc_error_when_it_carries_one_else_its_status() {
    answered(vec![
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
    ]);
}

#[test]
fn a_200_must_carry_our_response_as_json() {
    answered(vec![
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
    ]);
}

#[test]
fn a_json_batch_and_a_media_type_with_parameters_are_read() {
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
        oauth: false,
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
                challenged: None,
                oauth: false,
            }
        })
    );
}

/// Upstream §17 C19: a body over 1 MiB is over the limit; exactly 1 MiB is not.
#[test]
fn a_response_may_use_one_mebibyte() {
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
