//! The HTTP adapter driven directly (`start(ctx).check(dim, &attempt)`) against scripted
//! loopback servers, each attempt under a watchdog that aborts at the deadline like the
//! engine's.

use std::sync::Arc;
use std::time::Duration;

use super::HttpAdapter;
use crate::adapter::{Adapter, TargetRun};
use crate::config::{HttpMethod, HttpOptions, Target};
use crate::contract::Bound;
use crate::contract::Secret;
use crate::contract::TargetType;
use crate::contract::{Dimension, Status};
use crate::net::testkit::http_server::{Reply, Server, closed_port};
use crate::net::testkit::tls::{self_signed, server_wrap};
use crate::net::testkit::{with_watchdog, within};
use crate::result::Key;
use crate::result::{DiagnosticCode, Fact, Note, Observation, Reason, Stage};
use crate::run_plan::{Credential, TargetPlan};

const LONG: Duration = Duration::from_secs(5);
const SHORT: Duration = Duration::from_millis(600);

fn target(endpoint: &str, kind: TargetType, http: Option<HttpOptions>) -> Target {
    Target {
        id: None,
        name: "t".into(),
        kind,
        endpoint: endpoint.into(),
        checks: None,
        latency_threshold_ms: None,
        timeout_ms: 5_000,
        check_timeouts_ms: Vec::new(),
        retries: 0,
        retry_delay_ms: 100,
        budget_ms: None,
        bearer_env: None,
        dependencies: Vec::new(),
        http,
        mcp: None,
        allow: None,
        path: "targets[0]".into(),
        origin: crate::config::Origin::File,
    }
}

fn options() -> HttpOptions {
    HttpOptions {
        max_body_bytes: crate::config::DEFAULT_MAX_BODY_BYTES,
        ..HttpOptions::default()
    }
}

fn start_with(t: Target, credential: Credential) -> Box<dyn TargetRun> {
    HttpAdapter.start(Arc::new(TargetPlan {
        target: Arc::new(t),
        credential,
        child_env: Vec::new(),
        missing_env: Vec::new(),
        secrets: crate::runtime::SecretLog::new(),
    }))
}

fn bearer(token: &str) -> Credential {
    Credential::Bearer {
        variable: "TOKEN".into(),
        token: Secret::new(token.into()),
    }
}

fn start(t: Target) -> Box<dyn TargetRun> {
    start_with(t, Credential::None)
}

fn check(run: &mut dyn TargetRun, dim: Dimension, timeout: Duration) -> (Observation, Duration) {
    with_watchdog(timeout, |a| run.check(dim, a))
}

/// What the engine does for the default check set: configuration, reachability, then the
/// passive dimensions.
fn defaults(run: &mut dyn TargetRun) -> Vec<(Dimension, Observation)> {
    let mut out = vec![(Dimension::Configuration, run.configure())];
    for dim in [
        Dimension::Reachability,
        Dimension::Authentication,
        Dimension::Protocol,
    ] {
        out.push((dim, check(run, dim, LONG).0));
    }
    out
}

fn status_of(results: &[(Dimension, Observation)], dim: Dimension) -> Status {
    results
        .iter()
        .find(|(d, _)| *d == dim)
        .map(|(_, o)| o.status)
        .unwrap_or(Status::Unknown)
}

fn step(obs: &Observation, stage: Stage) -> Option<Status> {
    obs.steps
        .0
        .iter()
        .find(|(s, _, _)| *s == stage)
        .map(|(_, st, _)| *st)
}

#[test]
fn defaults_by_status_issue_one_head_and_no_get() {
    for (code, protocol, auth) in [
        (200, Status::Healthy, Status::Healthy),
        (204, Status::Healthy, Status::Healthy),
        (302, Status::Unhealthy, Status::Healthy),
        (404, Status::Unhealthy, Status::Healthy),
        (500, Status::Unhealthy, Status::Healthy),
        (401, Status::Misconfigured, Status::Misconfigured),
        (403, Status::Misconfigured, Status::Misconfigured),
    ] {
        let server = Server::start(move |_| Reply::status(code).header("Location", "/elsewhere"));
        let mut run = start(target(&server.url("/"), TargetType::Http, None));
        let results = defaults(run.as_mut());
        assert_eq!(
            status_of(&results, Dimension::Configuration),
            Status::Healthy
        );
        assert_eq!(
            status_of(&results, Dimension::Reachability),
            Status::Healthy,
            "{code}"
        );
        assert_eq!(status_of(&results, Dimension::Protocol), protocol, "{code}");
        assert_eq!(
            status_of(&results, Dimension::Authentication),
            auth,
            "{code}"
        );
        assert_eq!(
            server.count("HEAD"),
            1,
            "{code}: one HEAD serves every passive check"
        );
        assert_eq!(server.count("GET"), 0, "{code}: defaults issue no GET");
        let reach = &results[1].1;
        assert!(reach.latency.is_some());
        assert_eq!(
            reach.evidence.get(Key::HttpStatus),
            Some(&Fact::Int(i64::from(code)))
        );
        if code == 401 || code == 403 {
            assert_eq!(results[3].1.code(), Some(DiagnosticCode::HttpAuth));
            assert_eq!(results[2].1.code(), Some(DiagnosticCode::HttpAuth));
        }
        if code == 404 {
            assert_eq!(results[3].1.code(), Some(DiagnosticCode::HttpStatus));
        }
        assert_eq!(
            results[2].1.evidence.get(Key::ResponseReused),
            Some(&Fact::Bool(true))
        );
    }
}

#[test]
fn reachability_alone_is_healthy_for_any_status_and_records_stages() {
    let server = Server::start(|_| Reply::status(503));
    let mut run = start(target(&server.url("/"), TargetType::Http, None));
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Healthy);
    assert!(obs.response_seen);
    assert_eq!(step(&obs, Stage::Dns), None, "IP literal");
    assert_eq!(step(&obs, Stage::Tcp), Some(Status::Healthy));
    assert_eq!(step(&obs, Stage::Tls), None, "plain http");
    assert_eq!(step(&obs, Stage::Http), Some(Status::Healthy));
}

#[test]
fn plain_http_to_localhost_has_dns_tcp_http_steps() {
    let server = Server::start(|_| Reply::status(200));
    let url = format!("http://localhost:{}/health", server.port());
    let mut run = start(target(&url, TargetType::Http, None));
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Healthy);
    for stage in [Stage::Dns, Stage::Tcp, Stage::Http] {
        assert_eq!(step(&obs, stage), Some(Status::Healthy), "{stage:?}");
    }
    assert_eq!(step(&obs, Stage::Tls), None);
}

#[test]
fn expected_status_accepts_listed_codes_except_auth_failures() {
    for code in [200, 302, 404, 500, 401, 403] {
        let server = Server::start(move |_| Reply::status(code));
        let opts = HttpOptions {
            expected_status: Some(vec![code]),
            ..options()
        };
        let mut run = start(target(&server.url("/"), TargetType::Http, Some(opts)));
        let (obs, _) = check(run.as_mut(), Dimension::Protocol, LONG);
        let want = if code == 401 || code == 403 {
            Status::Misconfigured
        } else {
            Status::Healthy
        };
        assert_eq!(obs.status, want, "{code}");
    }
}

#[test]
fn redirects_are_not_followed() {
    let destination = Server::start(|_| Reply::status(200));
    let location = destination.url("/");
    let redirect = Server::start(move |_| Reply::status(302).header("Location", &location));
    let mut run = start(target(&redirect.url("/"), TargetType::Http, None));
    let (reach, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    let (proto, _) = check(run.as_mut(), Dimension::Protocol, LONG);
    assert_eq!(reach.status, Status::Healthy);
    assert_eq!(proto.status, Status::Unhealthy);
    assert_eq!(proto.code(), Some(DiagnosticCode::HttpStatus));
    assert_eq!(
        proto.evidence.get(Key::Redirect),
        Some(&Fact::Word("elsewhere"))
    );
    assert!(destination.requests().is_empty(), "redirect followed");
}

/// A redirect to the endpoint with a trailing slash says so, from the configuration (issue
/// 12); a 403 says whether it challenged for credentials.
#[test]
fn refused_heads_say_where_a_redirect_points_and_whether_a_403_challenged() {
    let moved = Server::start(|_| Reply::status(307).header("Location", "/api/health/"));
    let mut run = start(target(&moved.url("/api/health"), TargetType::Http, None));
    let _ = check(run.as_mut(), Dimension::Reachability, LONG);
    let (proto, _) = check(run.as_mut(), Dimension::Protocol, LONG);
    assert_eq!(
        proto.evidence.get(Key::Redirect),
        Some(&Fact::Word("trailing_slash"))
    );
    for (challenge, want) in [(None, false), (Some("Bearer realm=\"x\""), true)] {
        let forbidden = Server::start(move |_| match challenge {
            Some(c) => Reply::status(403).header("WWW-Authenticate", c),
            None => Reply::status(403),
        });
        let mut run = start(target(&forbidden.url("/"), TargetType::Http, None));
        let _ = check(run.as_mut(), Dimension::Reachability, LONG);
        let (auth, _) = check(run.as_mut(), Dimension::Authentication, LONG);
        assert_eq!(auth.code(), Some(DiagnosticCode::HttpAuth));
        assert_eq!(
            auth.evidence.get(Key::AuthChallenge),
            Some(&Fact::Bool(want))
        );
    }
}

#[test]
fn bearer_is_sent_on_every_request() {
    let server = Server::start(|r| {
        if r.header("authorization") == Some("Bearer super-secret") {
            Reply::status(204)
        } else {
            Reply::status(401)
        }
    });
    let mut t = target(&server.url("/"), TargetType::Http, Some(options()));
    t.checks = Some(vec![Dimension::Functional]);
    let creds = bearer("super-secret");
    let mut run = start_with(t.clone(), creds);
    let results = defaults(run.as_mut());
    assert!(results.iter().all(|(_, o)| o.status == Status::Healthy));
    let (func, _) = check(run.as_mut(), Dimension::Functional, LONG);
    assert_eq!(func.status, Status::Healthy);
    assert_eq!((server.count("HEAD"), server.count("GET")), (1, 1));
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer super-secret"))
    );
    let text = format!("{results:?}{func:?}");
    assert!(
        !text.contains("super-secret"),
        "credential in an observation"
    );

    // Without the token: the authentication gate fails on the HEAD, and no GET is needed.
    let mut run = start(t);
    let results = defaults(run.as_mut());
    assert_eq!(
        status_of(&results, Dimension::Authentication),
        Status::Misconfigured
    );
    assert_eq!(server.count("GET"), 1, "no new GET");
}

#[test]
fn credentials_with_control_bytes_are_misconfigured_without_traffic() {
    let server = Server::start(|_| Reply::status(200));
    for byte in [1u8, 7, 8, 10, 13, 31, 127] {
        let token = format!("tok{}en", char::from(byte));
        let creds = bearer(&token);
        let mut run = start_with(target(&server.url("/"), TargetType::Http, None), creds);
        let conf = run.configure();
        assert_eq!(conf.status, Status::Misconfigured, "byte {byte}");
        assert_eq!(
            conf.evidence.get(Key::Credential),
            Some(&Fact::Word("control_character"))
        );
        let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
        assert_eq!(obs.status, Status::Misconfigured, "byte {byte}");
    }
    assert_eq!(server.connections(), 0, "no request with a bad credential");

    let creds = bearer("a\tb");
    let mut run = start_with(target(&server.url("/"), TargetType::Http, None), creds);
    assert_eq!(run.configure().status, Status::Healthy, "TAB is allowed");
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Healthy);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer a\tb")
    );
}

#[test]
fn bad_endpoints_are_misconfigured_and_never_echoed() {
    for (endpoint, word) in [
        (
            "https://user:password@example.com/?token=secret",
            "userinfo",
        ),
        ("http://example.com/#fragment-secret", "fragment"),
        ("ftp://example.com/", "unsupported_scheme"),
        ("http:///nohost", "missing_host"),
        ("not a url", "unparsable"),
    ] {
        let mut run = start(target(endpoint, TargetType::Http, None));
        let conf = run.configure();
        assert_eq!(conf.status, Status::Misconfigured, "{endpoint}");
        assert_eq!(conf.evidence.get(Key::Endpoint), Some(&Fact::Word(word)));
        let (obs, took) = check(run.as_mut(), Dimension::Reachability, LONG);
        assert_eq!(obs.status, Status::Misconfigured);
        assert!(took < Duration::from_millis(100), "no network");
        let text = format!("{conf:?}{obs:?}");
        for secret in ["password", "token=secret", "fragment-secret", "example.com"] {
            assert!(!text.contains(secret), "{secret} leaked");
        }
    }
}

#[test]
fn self_signed_tls_is_unreachable_at_the_tls_stage() {
    let server = Server::start_wrapped(server_wrap(self_signed(&["127.0.0.1"])), |_| {
        Reply::status(204)
    });
    let url = format!("https://127.0.0.1:{}/", server.port());
    let mut run = start(target(&url, TargetType::Http, None));
    let conf = run.configure();
    assert_eq!(conf.status, Status::Healthy);
    assert!(
        conf.evidence.get(Key::TrustStore).is_some(),
        "doctor: which store"
    );
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Unreachable);
    assert!(!obs.response_seen);
    assert_eq!(step(&obs, Stage::Tcp), Some(Status::Healthy));
    assert_eq!(step(&obs, Stage::Tls), Some(Status::Unreachable));
    assert_eq!(
        obs.evidence.get(Key::Failure),
        Some(&Fact::Word("tls_untrusted"))
    );
    assert!(obs.latency.is_none());
    assert!(server.requests().is_empty());
}

#[test]
fn closed_port_is_unreachable() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/");
    let mut run = start(target(&url, TargetType::Http, None));
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Unreachable);
    assert_eq!(step(&obs, Stage::Tcp), Some(Status::Unreachable));
    assert_eq!(
        obs.evidence.get(Key::Failure),
        Some(&Fact::Word("connect_refused"))
    );
    // Which endpoint could not be reached: its configured host and port.
    assert_eq!(
        obs.evidence.get(Key::Address),
        Some(&Fact::Config(format!("127.0.0.1:{port}")))
    );
}

#[test]
fn hang_before_headers_is_unreachable_at_the_deadline() {
    let server = Server::start(|_| Reply::HangBeforeHead);
    let mut run = start(target(&server.url("/"), TargetType::Http, None));
    let (obs, took) = check(run.as_mut(), Dimension::Reachability, SHORT);
    assert!(within(SHORT, took), "took {took:?}");
    assert_eq!(obs.status, Status::Unreachable);
    assert_eq!(
        obs.reason,
        Some(Reason::Engine(Note::TimedOut {
            bound: Bound::TimeoutMs,
            response_seen: false
        }))
    );
    assert!(obs.latency.is_none());
    assert_eq!(obs.evidence.get(Key::Failure), Some(&Fact::Word("timeout")));
    run.discard();
}

#[test]
fn trickling_one_byte_per_second_is_unknown_at_the_deadline() {
    let server = Server::start(|r| Reply::Trickle {
        bytes: if r.method == "HEAD" {
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec()
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nready".to_vec()
        },
        every: Duration::from_secs(1),
    });
    let mut run = start(target(&server.url("/"), TargetType::Http, None));
    let (obs, took) = check(run.as_mut(), Dimension::Reachability, SHORT);
    assert!(within(SHORT, took), "took {took:?}");
    assert_eq!(obs.status, Status::Unknown);
    assert!(obs.response_seen);
}

#[test]
fn functional_body_rules() {
    let server = Server::start(|r| match r.target.as_str() {
        "/hang" => Reply::HangMidBody {
            content_length: 100,
            sent: b"rea".to_vec(),
        },
        "/truncated" => Reply::CloseMidBody {
            content_length: 100,
            sent: b"ready".to_vec(),
        },
        "/reset" => Reply::ResetMidBody {
            content_length: 100,
            sent: b"ready".to_vec(),
        },
        "/slow" => Reply::Trickle {
            bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nready".to_vec(),
            every: Duration::from_millis(100),
        },
        "/fail" => Reply::status(500).body("ready"),
        _ => Reply::status(200).body("status: ready; secret-body-text"),
    });
    let run_for = |path: &str, needle: Option<&str>, limit: u64, timeout: Duration| {
        let opts = HttpOptions {
            body_contains: needle.map(str::to_string),
            max_body_bytes: limit,
            ..options()
        };
        let mut run = start(target(&server.url(path), TargetType::Http, Some(opts)));
        check(run.as_mut(), Dimension::Functional, timeout)
    };
    let (found, _) = run_for("/", Some("ready"), 65_536, LONG);
    assert_eq!(found.status, Status::Healthy);
    let (missing, _) = run_for("/", Some("absent"), 65_536, LONG);
    assert_eq!(
        (missing.status, missing.code()),
        (Status::Unhealthy, Some(DiagnosticCode::HttpBody))
    );
    let (over, _) = run_for("/", Some("ready"), 4, LONG);
    assert_eq!(
        (over.status, over.code()),
        (Status::Unknown, Some(DiagnosticCode::HttpBodyLimit))
    );
    let (failing, _) = run_for("/fail", None, 65_536, LONG);
    assert_eq!(
        (failing.status, failing.code()),
        (Status::Unhealthy, Some(DiagnosticCode::HttpStatus))
    );
    let (plain, _) = run_for("/", None, 65_536, LONG);
    assert_eq!(plain.status, Status::Healthy);
    for path in ["/hang", "/truncated", "/reset", "/slow"] {
        let (obs, took) = run_for(path, Some("ready"), 65_536, SHORT);
        assert!(within(SHORT, took), "{path} took {took:?}");
        assert_eq!(obs.status, Status::Unknown, "{path}: {obs:?}");
        assert!(obs.response_seen, "{path}");
    }
    let text = format!("{found:?}{missing:?}{over:?}");
    assert!(!text.contains("secret-body-text") && !text.contains("absent"));
    assert!(
        server.count("HEAD") == 0,
        "functional alone issues only GETs"
    );
}

#[test]
fn header_rules() {
    let server = Server::start(|_| {
        Reply::status(200)
            .header("X-Ready", "yes")
            .header("X-Multi", "a")
            .header("X-Multi", "b")
    });
    let with_headers = |h: &[(&str, &str)]| {
        let opts = HttpOptions {
            headers: h
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..options()
        };
        let mut run = start(target(&server.url("/"), TargetType::Http, Some(opts)));
        check(run.as_mut(), Dimension::Protocol, LONG).0
    };
    assert_eq!(
        with_headers(&[("x-ready", "yes"), ("X-MULTI", "b")]).status,
        Status::Healthy
    );
    let bad = with_headers(&[("X-Ready", "no"), ("X-Missing", "1"), ("X-Multi", "a")]);
    assert_eq!(
        (bad.status, bad.code()),
        (Status::Unhealthy, Some(DiagnosticCode::HttpHeaders))
    );
    assert_eq!(
        bad.evidence.get(Key::HeaderMismatch),
        Some(&Fact::ConfigList(vec![
            "X-Ready".into(),
            "X-Missing".into()
        ]))
    );
}

#[test]
fn head_rejected_is_unhealthy_without_a_get_fallback() {
    for code in [405, 501] {
        let server = Server::start(move |r| {
            if r.method == "HEAD" {
                Reply::status(code)
            } else {
                Reply::status(204)
            }
        });
        let mut run = start(target(&server.url("/"), TargetType::Http, None));
        let (reach, _) = check(run.as_mut(), Dimension::Reachability, LONG);
        let (proto, _) = check(run.as_mut(), Dimension::Protocol, LONG);
        assert_eq!(reach.status, Status::Healthy);
        assert_eq!(proto.status, Status::Unhealthy, "{code}");
        assert_eq!(server.count("GET"), 0, "{code}: silent fallback");

        let opts = HttpOptions {
            method: Some(HttpMethod::Get),
            ..options()
        };
        let mut run = start(target(&server.url("/"), TargetType::Http, Some(opts)));
        let (reach, _) = check(run.as_mut(), Dimension::Reachability, LONG);
        let (proto, _) = check(run.as_mut(), Dimension::Protocol, LONG);
        assert_eq!(
            (reach.status, proto.status),
            (Status::Healthy, Status::Healthy)
        );
        assert_eq!(server.count("GET"), 1);

        let opts = HttpOptions {
            method: Some(HttpMethod::Head),
            ..options()
        };
        let mut run = start(target(&server.url("/"), TargetType::Http, Some(opts)));
        let (func, _) = check(run.as_mut(), Dimension::Functional, LONG);
        assert_eq!(func.status, Status::Healthy, "functional keeps GET");
        assert_eq!(server.count("GET"), 2);
    }
}

#[test]
fn gateways_and_routers_probe_with_get() {
    for kind in [TargetType::Gateway, TargetType::Router] {
        let server = Server::start(|_| Reply::status(200));
        let mut run = start(target(&server.url("/"), kind, None));
        let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
        assert_eq!(obs.status, Status::Healthy);
        assert_eq!(obs.evidence.get(Key::Method), Some(&Fact::Word("GET")));
        assert_eq!((server.count("GET"), server.count("HEAD")), (1, 0));
    }
}

#[test]
fn resets_before_the_head_are_unreachable() {
    let server = Server::start(|_| Reply::ResetBeforeHead);
    let mut run = start(target(&server.url("/"), TargetType::Http, None));
    let (obs, _) = check(run.as_mut(), Dimension::Reachability, LONG);
    assert_eq!(obs.status, Status::Unreachable);
    assert_eq!(obs.evidence.get(Key::Failure), Some(&Fact::Word("reset")));
}

#[test]
fn unsupported_dimensions_are_misconfigured() {
    let server = Server::start(|_| Reply::status(200));
    let mut run = start(target(&server.url("/"), TargetType::Http, None));
    let (obs, _) = check(run.as_mut(), Dimension::Capability, LONG);
    assert_eq!(obs.status, Status::Misconfigured);
    assert_eq!(obs.reason, Some(Reason::Engine(Note::DimensionUnsupported)));
    assert_eq!(server.connections(), 0);
}
