//! Exchanges against scripted loopback servers: stages, TLS verification, deadlines, the
//! abort hook, keep-alive and proxies.

use std::sync::Arc;
use std::time::Duration;

use super::testkit::http_server::{Reply, Server, closed_port};
use super::testkit::tls::{TestCa, self_signed, server_wrap};
use super::testkit::{with_watchdog, with_watchdog_at, within};
use super::*;
use crate::contract::Bound;
use crate::contract::Status;
use crate::runtime::Deadline;

/// The reason of an exchange cut at its (`timeout_ms`) deadline.
fn timed_out(response_seen: bool) -> crate::result::Reason {
    crate::result::Reason::Engine(crate::result::Note::TimedOut {
        bound: Bound::TimeoutMs,
        response_seen,
    })
}

const SHORT: Duration = Duration::from_millis(400);
const LONG: Duration = Duration::from_secs(5);

fn endpoint(url: &str) -> Endpoint {
    Endpoint::parse(url).expect("test endpoint")
}

fn get(
    client: &mut Client,
    url: &str,
    timeout: Duration,
) -> (Result<Response, NetError>, Duration) {
    let e = endpoint(url);
    with_watchdog(timeout, |a| client.send(a, &Request::new(Method::Get, &e)))
}

fn status_of(t: &Timings, stage: crate::result::Stage) -> Option<Status> {
    t.stage(stage).map(|s| s.status)
}

use crate::result::Stage::{Dns, Http, Tcp, Tls};
use crate::result::reason::NetFailure;

#[test]
fn plain_http_to_an_ip_literal_has_tcp_and_http_stages_only() {
    let server = Server::start(|_| Reply::status(204));
    let mut client = Client::new(Reuse::Fresh);
    let (resp, _) = get(&mut client, &server.url("/health"), LONG);
    let resp = resp.expect("response");
    assert_eq!(resp.status(), 204);
    let t = resp.timings();
    assert_eq!(status_of(t, Dns), None, "IP literal: no dns stage");
    assert_eq!(status_of(t, Tcp), Some(Status::Healthy));
    assert_eq!(status_of(t, Tls), None, "plain http: no tls stage");
    assert_eq!(status_of(t, Http), Some(Status::Healthy));
    assert!(t.latency.is_some() && t.new_connection);
    let seen = &server.requests()[0];
    assert_eq!(seen.header("user-agent"), Some(USER_AGENT));
    assert_eq!(seen.header("accept-encoding"), None, "no gzip");
}

#[test]
fn localhost_has_a_dns_stage() {
    let server = Server::start(|_| Reply::status(200));
    let mut client = Client::new(Reuse::Fresh);
    let url = format!("http://localhost:{}/", server.port());
    let (resp, _) = get(&mut client, &url, LONG);
    let t = resp.expect("response").timings().clone();
    assert_eq!(status_of(&t, Dns), Some(Status::Healthy));
    assert_eq!(status_of(&t, Tcp), Some(Status::Healthy));
    assert_eq!(status_of(&t, Http), Some(Status::Healthy));
}

#[test]
fn redirects_are_responses_and_any_status_is_ok() {
    let server = Server::start(|r| match r.target.as_str() {
        "/" => Reply::status(302).header("Location", "/elsewhere"),
        _ => Reply::status(500),
    });
    let mut client = Client::new(Reuse::Fresh);
    let (resp, _) = get(&mut client, &server.url("/"), LONG);
    assert_eq!(resp.expect("response").status(), 302);
    assert_eq!(server.requests().len(), 1, "redirect not followed");
    let (resp, _) = get(&mut client, &server.url("/x"), LONG);
    assert_eq!(resp.expect("response").status(), 500);
}

#[test]
fn closed_port_is_unreachable_at_tcp() {
    let mut client = Client::new(Reuse::Fresh);
    let (resp, _) = get(
        &mut client,
        &format!("http://127.0.0.1:{}/", closed_port()),
        LONG,
    );
    let f = resp.expect_err("refused");
    assert_eq!(f.kind, NetFailure::ConnectRefused);
    assert_eq!(f.status(), Status::Unreachable);
    assert_eq!(status_of(&f.timings, Tcp), Some(Status::Unreachable));
    assert_eq!(status_of(&f.timings, Http), None);
}

#[test]
fn hang_before_head_times_out_unreachable() {
    let server = Server::start(|_| Reply::HangBeforeHead);
    let mut client = Client::new(Reuse::Fresh);
    let (resp, took) = get(&mut client, &server.url("/"), SHORT);
    let f = resp.expect_err("timeout");
    assert!(within(SHORT, took), "took {took:?}");
    assert_eq!(f.kind, NetFailure::Timeout);
    assert_eq!(f.status(), Status::Unreachable);
    assert!(!f.response_seen);
    assert_eq!(status_of(&f.timings, Tcp), Some(Status::Healthy));
    assert_eq!(status_of(&f.timings, Http), Some(Status::Unknown));
    let obs = f.observation();
    assert_eq!(obs.reason, Some(timed_out(false)));
}

/// The watchdog's abort (not a timeout) cuts a peer that never answers.
#[test]
fn the_abort_hook_cuts_a_stuck_exchange() {
    let server = Server::start(|_| Reply::HangBeforeHead);
    let mut client = Client::new(Reuse::Fresh);
    let e = endpoint(&server.url("/"));
    let (resp, took) = with_watchdog_at(Duration::from_secs(30), SHORT, |a| {
        client.send(a, &Request::new(Method::Get, &e))
    });
    assert!(within(SHORT, took), "took {took:?}");
    let f = resp.expect_err("aborted");
    assert_eq!(f.kind, NetFailure::Timeout);
    assert_eq!(f.status(), Status::Unreachable);
    // The client recovers: the next exchange builds a new agent.
    let ok = Server::start(|_| Reply::status(200));
    let (resp, _) = get(&mut client, &ok.url("/"), LONG);
    assert_eq!(resp.expect("fresh agent").status(), 200);
}

#[test]
fn trickled_head_is_unknown_at_the_deadline() {
    let server = Server::start(|_| Reply::Trickle {
        bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
        every: Duration::from_secs(1),
    });
    let mut client = Client::new(Reuse::Fresh);
    let (resp, took) = get(&mut client, &server.url("/"), SHORT);
    let f = resp.expect_err("cut");
    assert!(within(SHORT, took), "took {took:?}");
    assert!(f.response_seen);
    assert_eq!(f.status(), Status::Unknown);
    assert_eq!(f.observation().reason, Some(timed_out(true)));
}

#[test]
fn bodies_hang_trickle_truncate_and_overflow() {
    let server = Server::start(|r| match r.target.as_str() {
        "/hang" => Reply::HangMidBody {
            content_length: 100,
            sent: b"part".to_vec(),
        },
        "/trickle" => Reply::Trickle {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nabcdefghij".to_vec(),
            every: Duration::from_millis(200),
        },
        "/short" => Reply::CloseMidBody {
            content_length: 100,
            sent: b"ready".to_vec(),
        },
        _ => Reply::status(200).body("0123456789"),
    });
    let mut client = Client::new(Reuse::Fresh);
    for path in ["/hang", "/trickle", "/short"] {
        let e = endpoint(&server.url(path));
        let (read, took) = with_watchdog(SHORT * 2, |a| {
            client
                .send(a, &Request::new(Method::Get, &e))
                .and_then(|r| r.read_body(1000))
        });
        let f = read.expect_err(path);
        assert!(within(SHORT * 2, took), "{path} took {took:?}");
        assert_eq!(f.status(), Status::Unknown, "{path}");
    }
    let e = endpoint(&server.url("/"));
    let (read, _) = with_watchdog(LONG, |a| {
        client
            .send(a, &Request::new(Method::Get, &e))
            .and_then(|r| r.read_body(4))
    });
    let body = read.expect("read");
    assert!(body.over_limit);
    assert_eq!(body.bytes.len(), 5, "reads limit + 1");
    let (read, _) = with_watchdog(LONG, |a| {
        client
            .send(a, &Request::new(Method::Get, &e))
            .and_then(|r| r.read_body(10))
    });
    assert_eq!(
        read.expect("read"),
        BodyBytes {
            bytes: b"0123456789".to_vec(),
            over_limit: false
        }
    );
}

#[test]
fn resets_before_and_during_the_response() {
    let server = Server::start(|r| match r.target.as_str() {
        "/before" => Reply::ResetBeforeHead,
        _ => Reply::ResetMidBody {
            content_length: 100,
            sent: b"part".to_vec(),
        },
    });
    let mut client = Client::new(Reuse::Fresh);
    let (resp, _) = get(&mut client, &server.url("/before"), LONG);
    let f = resp.expect_err("reset");
    assert_eq!(f.kind, NetFailure::Reset);
    assert_eq!(f.status(), Status::Unreachable);
    assert_eq!(status_of(&f.timings, Http), Some(Status::Unreachable));

    let e = endpoint(&server.url("/during"));
    let (read, _) = with_watchdog(LONG, |a| {
        client
            .send(a, &Request::new(Method::Get, &e))
            .and_then(|r| r.read_body(1000))
    });
    let f = read.expect_err("reset mid-body");
    assert_eq!(f.status(), Status::Unknown);
}

#[test]
fn verified_tls_with_a_trusted_private_ca() {
    let ca = TestCa::new();
    let server = Server::start_wrapped(server_wrap(ca.leaf(&["localhost", "127.0.0.1"])), |_| {
        Reply::status(200)
    });
    let config = trust::client_config(ca.roots()).expect("config");
    for host in ["localhost", "127.0.0.1"] {
        let mut client = Client::new(Reuse::Fresh).with_tls_config(config.clone());
        let url = format!("https://{host}:{}/", server.port());
        let (resp, _) = get(&mut client, &url, LONG);
        let resp = resp.unwrap_or_else(|f| panic!("{host}: {f:?}"));
        let t = resp.timings();
        assert_eq!(status_of(t, Tls), Some(Status::Healthy), "{host}");
        assert_eq!(status_of(t, Http), Some(Status::Healthy), "{host}");
    }
}

#[test]
fn tls_failures_are_unreachable_with_a_precise_word() {
    let ca = TestCa::new();
    let config = trust::client_config(ca.roots()).expect("config");
    let cases: [(Option<Arc<rustls::ClientConfig>>, _, NetFailure); 3] = [
        // The process store (system or bundled roots) does not trust a self-signed cert.
        (None, self_signed(&["127.0.0.1"]), NetFailure::TlsUntrusted),
        (
            Some(config.clone()),
            ca.leaf(&["other.test"]),
            NetFailure::TlsNameMismatch,
        ),
        (
            Some(config.clone()),
            ca.expired_leaf(&["127.0.0.1"]),
            NetFailure::TlsExpired,
        ),
    ];
    for (config, identity, want) in cases {
        let server = Server::start_wrapped(server_wrap(identity), |_| Reply::status(200));
        let mut client = Client::new(Reuse::Fresh);
        if let Some(c) = config {
            client = client.with_tls_config(c);
        }
        let url = format!("https://127.0.0.1:{}/", server.port());
        let (resp, _) = get(&mut client, &url, LONG);
        let f = resp.expect_err("refused certificate");
        assert_eq!(f.kind, want);
        assert_eq!(f.status(), Status::Unreachable);
        assert!(!f.response_seen);
        assert_eq!(status_of(&f.timings, Tls), Some(Status::Unreachable));
        assert!(
            server.requests().is_empty(),
            "no request over a bad TLS session"
        );
    }

    // https to a plain-http port.
    let plain = Server::start(|_| Reply::status(200));
    let mut client = Client::new(Reuse::Fresh).with_tls_config(config);
    let (resp, _) = get(
        &mut client,
        &format!("https://127.0.0.1:{}/", plain.port()),
        LONG,
    );
    let f = resp.expect_err("not tls");
    assert_eq!(f.kind, NetFailure::TlsHandshake);
    assert_eq!(f.status(), Status::Unreachable);
}

#[test]
fn a_stalled_tls_handshake_ends_at_the_deadline() {
    let server = Server::start_silent();
    let mut client = Client::new(Reuse::Fresh);
    let url = format!("https://127.0.0.1:{}/", server.port());
    let (resp, took) = get(&mut client, &url, SHORT);
    assert!(within(SHORT, took), "took {took:?}");
    let f = resp.expect_err("stalled");
    assert_eq!(f.kind, NetFailure::Timeout);
    assert_eq!(f.status(), Status::Unreachable);
    assert_eq!(status_of(&f.timings, Tcp), Some(Status::Healthy));
    assert_eq!(status_of(&f.timings, Tls), Some(Status::Unreachable));
}

#[test]
fn keep_alive_reuses_one_connection_and_reports_it() {
    let server = Server::start(|_| Reply::status(200).body("{}"));
    let mut client = Client::new(Reuse::KeepAlive);
    let e = endpoint(&format!("http://localhost:{}/mcp", server.port()));
    let mut timings = Vec::new();
    for _ in 0..3 {
        let (read, _) = with_watchdog(LONG, |a| {
            let resp = client.send(a, &Request::new(Method::Post, &e).body(b"{}"))?;
            let t = resp.timings().clone();
            resp.read_body(1024).map(|_| t)
        });
        timings.push(read.expect("exchange"));
    }
    assert_eq!(server.connections(), 1);
    assert!(timings[0].new_connection);
    // The kernel's round trip of the new connection: loopback's, microseconds.
    let rtt = timings[0].rtt.unwrap_or_default();
    assert!(rtt < std::time::Duration::from_millis(5), "{rtt:?}");
    assert_eq!(status_of(&timings[0], Tcp), Some(Status::Healthy));
    assert_eq!(status_of(&timings[0], Dns), Some(Status::Healthy));
    for t in &timings[1..] {
        assert!(!t.new_connection);
        assert_eq!(t.rtt, None, "a reused connection has no handshake");
        assert_eq!(status_of(t, Dns), None, "one lookup per session");
        assert_eq!(status_of(t, Tcp), None);
        assert_eq!(status_of(t, Http), Some(Status::Healthy));
    }

    // A fresh client opens a connection per exchange.
    let mut fresh = Client::new(Reuse::Fresh);
    for _ in 0..2 {
        let (r, _) = get(&mut fresh, &server.url("/"), LONG);
        r.expect("ok").read_body(10).expect("body");
    }
    assert_eq!(server.connections(), 3);
}

/// A server with Nagle's algorithm on that writes its head and then its body (uvicorn) holds
/// the body until the head is acknowledged. Without `TCP_QUICKACK` re-armed after each read,
/// every kept-alive exchange after the kernel's quick-ACK start-up waits for our delayed-ACK
/// timer (≈ 40 ms): 12 exchanges would take ≥ 300 ms. The bound is 8 times what they take.
#[test]
fn keep_alive_never_waits_for_a_delayed_ack() {
    let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let mut bytes = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n".to_vec();
    bytes.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    let head = bytes.len();
    bytes.extend_from_slice(body);
    let server = Server::start_nagle(move |_| Reply::Split(bytes.clone(), head));
    let mut client = Client::new(Reuse::KeepAlive);
    let e = endpoint(&server.url("/mcp"));
    let started = std::time::Instant::now();
    for _ in 0..12 {
        let (read, _) = with_watchdog(LONG, |a| {
            let resp = client.send(a, &Request::new(Method::Post, &e).body(b"{}"))?;
            resp.read_body(1024)
        });
        assert_eq!(read.expect("exchange").bytes, body);
    }
    let took = started.elapsed();
    assert_eq!(server.connections(), 1);
    assert!(
        took < Duration::from_millis(150),
        "12 exchanges took {took:?}"
    );
}

/// An idle connection the server closed is found closed before the next request is written,
/// and that request goes out once, on a new connection. A request the server read and then
/// left unanswered is never sent again.
#[test]
fn a_closed_idle_connection_is_replaced_and_a_sent_request_never_repeated() {
    let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}".to_vec();
    let server = Server::start(move |r| match r.path() {
        // A complete response, no `Connection: close`, then the server closes.
        "/then-close" => Reply::Close(ok.clone()),
        "/unanswered" => Reply::Close(Vec::new()),
        _ => Reply::Send(ok.clone()),
    });
    let mut client = Client::new(Reuse::KeepAlive);
    let exchange = |client: &mut Client, path: &str| {
        let e = endpoint(&server.url(path));
        with_watchdog(LONG, |a| {
            let resp = client.send(a, &Request::new(Method::Post, &e).body(b"{}"))?;
            resp.read_body(1024)
        })
        .0
    };
    exchange(&mut client, "/then-close").expect("first");
    assert!(server.wait_closed(LONG), "the server closed its side");
    exchange(&mut client, "/again").expect("second, on a new connection");
    assert_eq!(server.connections(), 2);
    assert_eq!(server.requests().len(), 2, "each request sent once");

    let failed = exchange(&mut client, "/unanswered").expect_err("closed unanswered");
    assert_eq!(failed.status(), Status::Unreachable);
    let sent = server.requests();
    assert_eq!(sent.iter().filter(|r| r.path() == "/unanswered").count(), 1);
    assert_eq!(server.connections(), 2, "no second try");
}

/// An abort arriving late for an attempt that already finished must not cut the next one.
#[test]
fn a_late_abort_does_not_cut_a_later_exchange() {
    let server = Server::start(|_| Reply::status(200));
    let mut client = Client::new(Reuse::KeepAlive);
    let e = endpoint(&server.url("/"));
    let first = Attempt::new(Deadline::new(
        std::time::Instant::now() + LONG,
        Bound::TimeoutMs,
    ));
    let r = client.send(&first, &Request::new(Method::Get, &e));
    r.expect("first").read_body(10).expect("body");
    let second = Attempt::new(Deadline::new(
        std::time::Instant::now() + LONG,
        Bound::TimeoutMs,
    ));
    let resp = client
        .send(&second, &Request::new(Method::Get, &e))
        .expect("second");
    first.abort(); // stale: armed for an earlier exchange
    resp.read_body(10).expect("second body unaffected");
    assert_eq!(server.connections(), 1);
}

/// Buffers are small for ordinary requests, yet a request head far above them (mirrored
/// `Mcp-Param-*` values of a large argument; 60 KiB here, the test server's limit) goes out
/// whole, on a fresh and on a kept-alive connection, and a response head near ureq's 64 KiB
/// limit is read.
#[test]
fn large_request_and_response_heads_fit_their_buffers() {
    let big_value = "v".repeat(60 * 1024);
    let big_reply = "r".repeat(60 * 1024);
    let reply = big_reply.clone();
    let server = Server::start(move |_| Reply::status(200).header("x-large", &reply));
    for reuse in [Reuse::Fresh, Reuse::KeepAlive] {
        let mut client = Client::new(reuse);
        let e = endpoint(&server.url("/mcp"));
        for _ in 0..2 {
            let (resp, _) = with_watchdog(LONG, |a| {
                let req = Request::new(Method::Post, &e)
                    .header("mcp-param-query", &big_value)
                    .body(b"{}");
                client.send(a, &req)
            });
            let resp = resp.expect("a large head is sent whole");
            assert_eq!(resp.status(), 200);
            assert_eq!(
                resp.headers().get("x-large").map(|v| v.len()),
                Some(big_reply.len())
            );
        }
    }
    let seen = server.requests();
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter()
            .all(|r| r.header("mcp-param-query").map(str::len) == Some(big_value.len()))
    );
    assert!(
        output_buffer(&Request::new(Method::Head, &endpoint("http://h/"))) == MIN_OUTPUT_BUFFER
    );
}

#[test]
fn invalid_headers_fail_before_any_traffic() {
    let server = Server::start(|_| Reply::status(200));
    let mut client = Client::new(Reuse::Fresh);
    let e = endpoint(&server.url("/"));
    let (resp, _) = with_watchdog(LONG, |a| {
        client.send(
            a,
            &Request::new(Method::Get, &e).header("Authorization", "Bearer a\u{1}b"),
        )
    });
    let f = resp.expect_err("invalid");
    assert_eq!(f.kind, NetFailure::InvalidRequest);
    assert_eq!(f.status(), Status::Misconfigured);
    assert_eq!(server.connections(), 0);
}

#[test]
fn proxied_exchanges_tunnel_through_connect() {
    // One server plays both the proxy (answers CONNECT) and, inside the tunnel, the target.
    let server = Server::start(|r| match r.method.as_str() {
        "CONNECT" if r.target.starts_with("refused.test") => Reply::status(403),
        "CONNECT" => Reply::status(200),
        _ => Reply::status(204),
    });
    let proxy = format!("127.0.0.1:{}", server.port());
    let env = proxy::ProxyEnv::from_lookup(|k| (k == "http_proxy").then(|| proxy.clone()));
    let mut client = Client::new(Reuse::Fresh).with_proxies(env);

    let (resp, _) = get(&mut client, "http://target.test:8080/health", LONG);
    let resp = resp.expect("through the tunnel");
    assert_eq!(resp.status(), 204);
    assert!(resp.timings().proxied);
    assert_eq!(
        resp.timings().rtt,
        None,
        "the proxy's round trip is not the target's"
    );
    let seen = server.requests();
    assert_eq!(seen[0].method, "CONNECT");
    assert_eq!(seen[0].target, "target.test:8080");
    assert_eq!(seen[1].target, "/health");

    // A proxy's refusal is not the target's response.
    let (resp, _) = get(&mut client, "http://refused.test/", LONG);
    let f = resp.expect_err("proxy refused");
    assert_eq!(f.kind, NetFailure::Proxy);
    assert!(!f.response_seen);
    assert_eq!(f.status(), Status::Unreachable);

    // Loopback bypasses the proxy.
    let before = server.requests().len();
    let (resp, _) = get(&mut client, &server.url("/direct"), LONG);
    assert_eq!(resp.expect("direct").status(), 204);
    assert_eq!(server.requests()[before].method, "GET");

    // An unsupported proxy scheme is a local misconfiguration.
    let env = proxy::ProxyEnv::from_lookup(|k| (k == "http_proxy").then(|| "socks5://p:1".into()));
    let mut client = Client::new(Reuse::Fresh).with_proxies(env);
    let (resp, _) = get(&mut client, "http://target.test/", LONG);
    let f = resp.expect_err("unsupported");
    assert_eq!(f.kind, NetFailure::ProxyConfig);
    assert_eq!(f.status(), Status::Misconfigured);
}

/// A client within a module's allow list reaches what it admits and nothing else: a refused
/// address fails before any connection (the server accepts none), MISCONFIGURED with the
/// refusal as evidence; a name entry never unlocks loopback (`localhost`, `*.localhost`);
/// one address outside refuses the name (`localhost` is 127.0.0.1 and ::1).
#[test]
fn a_client_within_an_allow_list_reaches_only_what_it_admits() {
    use crate::contract::Forbidden;
    use crate::contract::allow::{AllowEntry, AllowList};
    let server = Server::start(|_| Reply::status(204));
    let port = server.port();
    let within_list = |entries: &[&str]| {
        let list = entries
            .iter()
            .filter_map(|e| AllowEntry::parse(e))
            .collect();
        Client::within(Reuse::KeepAlive, Some(Arc::new(AllowList(list))))
    };
    for (entries, host, refusal) in [
        (&["*.example"][..], "127.0.0.1", Forbidden::Loopback),
        (&["localhost"], "localhost", Forbidden::Loopback),
        (&["*.localhost"], "evil.localhost", Forbidden::Loopback),
        (&["127.0.0.1/32"], "localhost", Forbidden::Loopback),
        (&["10.0.0.0/8"], "127.0.0.1", Forbidden::Loopback),
        (&["a.example"], "b.example", Forbidden::NotAllowed),
        (
            &["*.example", "0.0.0.0/0"],
            "2130706433",
            Forbidden::AmbiguousAddress,
        ),
    ] {
        let mut client = within_list(entries);
        let (resp, _) = get(&mut client, &format!("http://{host}:{port}/"), LONG);
        let f = resp.expect_err("refused");
        assert_eq!(
            f.kind,
            NetFailure::AddressRefused(refusal),
            "{entries:?} {host}"
        );
        assert_eq!(f.status(), Status::Misconfigured);
        let obs = f.observation();
        assert_eq!(
            obs.evidence.get(crate::result::Key::AddressRefused),
            Some(&crate::result::Fact::Word(refusal.as_str()))
        );
        assert_eq!(
            server.connections(),
            0,
            "{entries:?} {host}: nothing was contacted"
        );
    }
    // Listed by address: reached, also by a lane's sibling client.
    let mut client = within_list(&["127.0.0.1/32"]);
    let (resp, _) = get(&mut client, &server.url("/"), LONG);
    assert_eq!(resp.expect("admitted").status(), 204);
    let (resp, _) = get(&mut client.sibling(), &server.url("/"), LONG);
    assert_eq!(resp.expect("the sibling admits it too").status(), 204);
    let (resp, _) = get(&mut client.sibling(), "http://127.0.0.2:9/", LONG);
    assert_eq!(
        resp.expect_err("and refuses the rest").kind,
        NetFailure::AddressRefused(Forbidden::Loopback)
    );
    // No proxy for a module's target, whatever the environment says.
    assert!(client.proxies.select(false, "mcp.example").is_none());
    assert!(
        client
            .sibling()
            .proxies
            .select(true, "mcp.example")
            .is_none()
    );
}
