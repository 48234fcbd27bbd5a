//! Event streams: read until our response, server requests answered on the session (and
//! bounded), none allowed in a modern stream, and the errors a stream can end with.

use super::*;

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
fn a_stream_that_ends_without_our_response_or_with_a_broken_one_fails() {
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
