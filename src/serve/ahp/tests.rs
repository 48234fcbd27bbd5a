//! The protocol's rules, request by request, against published states made here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::serve::http_server::parse_head;
use crate::serve::snapshot::Snapshot;

const TOKEN: &str = "1234567890123456";
const MAX_AGE: Duration = Duration::from_secs(120);

fn token() -> Secret {
    Secret::new(TOKEN.into())
}

/// A running loop whose last run ended `age` ago with `status`.
fn published(status: Status, age: Duration, now: Instant) -> View {
    let observed_at = "2026-12-01T09:54:08.123456789Z";
    let document = r#"{"spec_version":"v1","target":{"name":"private-agent-name","type":"http"}}"#;
    View {
        running: true,
        latest: Some(Arc::new(Snapshot {
            status,
            observed_at: observed_at.into(),
            taken: now - age,
            detailed: detailed_body(status, observed_at, document).into(),
        })),
        metrics: Arc::from("agenthealth_runs_total 1\n"),
        max_age: MAX_AGE,
    }
}

fn nothing_yet() -> View {
    View {
        running: true,
        latest: None,
        metrics: Arc::from("agenthealth_runs_total 0\n"),
        max_age: MAX_AGE,
    }
}

/// Sends `head` (the request line and header lines, without the blank line).
fn send(view: &View, token: Option<&Secret>, head: &str, now: Instant) -> Answer {
    let raw = format!("{head}\r\n\r\n");
    let request = parse_head(raw.as_bytes()).expect("a valid head");
    admit(&request, token).map_or_else(|refused| refused, |()| respond(&request, view, now))
}

/// `GET path` with the right token.
fn get(view: &View, path: &str, now: Instant) -> Answer {
    let head = format!("GET {path} HTTP/1.1\r\nAuthorization: Bearer {TOKEN}");
    send(view, Some(&token()), &head, now)
}

fn body(r: &Answer) -> serde_json::Value {
    assert!(r.body.ends_with('\n'), "{}", r.body);
    serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body))
}

fn header<'a>(r: &'a Answer, name: &str) -> Option<&'a str> {
    r.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn every_response_carries_the_protocol_headers() {
    let now = Instant::now();
    let view = published(Status::Healthy, Duration::ZERO, now);
    let heads = [
        "GET /live HTTP/1.1".to_string(),
        "GET /ready HTTP/1.1".into(),
        "GET /missing HTTP/1.1".into(),
        "DELETE /health HTTP/1.1".into(),
        "GET /health/dependencies HTTP/1.1".into(),
        format!("GET /health/capabilities HTTP/1.1\r\nAuthorization: Bearer {TOKEN}"),
        "GET /health HTTP/1.1\r\nAHP-Version: v0".into(),
    ];
    for head in heads {
        let r = send(&view, Some(&token()), &head, now);
        assert_eq!(header(&r, "Cache-Control"), Some("no-store"), "{head}");
        assert_eq!(
            header(&r, "X-Content-Type-Options"),
            Some("nosniff"),
            "{head}"
        );
        assert_eq!(header(&r, "AHP-Version"), Some("v1"), "{head}");
        assert_eq!(
            header(&r, "Content-Type"),
            Some("application/json"),
            "{head}"
        );
        assert_eq!(body(&r)["ahp_version"], "v1", "{head}");
    }
}

#[test]
fn unknown_paths_then_methods_then_versions_are_refused_in_that_order() {
    let now = Instant::now();
    let view = published(Status::Healthy, Duration::ZERO, now);
    let cases = [
        ("POST /missing HTTP/1.1", 404, "not_found"),
        ("GET /health/ HTTP/1.1", 404, "not_found"),
        ("GET /Live HTTP/1.1", 404, "not_found"),
        (
            "POST /ready HTTP/1.1\r\nAHP-Version: v9",
            405,
            "method_not_allowed",
        ),
        ("HEAD /live HTTP/1.1", 405, "method_not_allowed"),
        ("get /live HTTP/1.1", 405, "method_not_allowed"),
        ("PUT /metrics HTTP/1.1", 405, "method_not_allowed"),
        (
            "GET /live HTTP/1.1\r\nAHP-Version: v2",
            400,
            "unsupported_version",
        ),
        (
            "GET /health/dependencies HTTP/1.1\r\nahp-version: V1",
            400,
            "unsupported_version",
        ),
    ];
    for (head, status, error) in cases {
        let r = send(&view, Some(&token()), head, now);
        assert_eq!(
            (r.status, body(&r)["error"].as_str()),
            (status, Some(error)),
            "{head}"
        );
        assert_eq!(header(&r, "Allow").is_some(), status == 405, "{head}");
    }
    // An empty header is no version.
    let r = send(&view, None, "GET /live HTTP/1.1\r\nAHP-Version:", now);
    assert_eq!(r.status, 200);
}

#[test]
fn detailed_paths_and_metrics_need_the_exact_bearer_token() {
    let now = Instant::now();
    let view = published(Status::Healthy, Duration::ZERO, now);
    for path in ["/health/dependencies", "/health/capabilities", "/metrics"] {
        let with = |auth: &str, token: Option<&Secret>| {
            send(&view, token, &format!("GET {path} HTTP/1.1{auth}"), now)
        };
        for auth in [
            String::new(),
            "\r\nAuthorization: Bearer short".into(),
            format!("\r\nAuthorization: Bearer {TOKEN}x"),
            format!("\r\nAuthorization: Bearer {}", "x".repeat(TOKEN.len())),
            format!("\r\nAuthorization: Basic {TOKEN}"),
            format!("\r\nAuthorization: Bearer\t{TOKEN}"),
            format!("\r\nAuthorization: Bearer{TOKEN}"),
            "\r\nAuthorization: Bearer".into(),
            "\r\nAuthorization: Bearer ".into(),
            format!("\r\nAuthorization: Bearer {TOKEN} x"),
            format!("\r\nAuthorization: Bearer {TOKEN}\tx"),
            format!("\r\nAuthorization: Bearer x {TOKEN}"),
            format!("\r\nAuthorization: Bearers {TOKEN}"),
        ] {
            let r = with(&auth, Some(&token()));
            assert_eq!(r.status, 401, "{path} {auth:?}");
            assert_eq!(header(&r, "WWW-Authenticate"), Some("Bearer"));
            assert_eq!(body(&r)["error"], "unauthorized");
            assert!(!r.body.contains("private"), "{}", r.body);
        }
        // RFC 7235: the scheme in any case, then one or more spaces.
        for scheme in [
            "Bearer ",
            "bearer ",
            "BEARER ",
            "bEaReR ",
            "Bearer  ",
            "bearer   ",
        ] {
            let right = format!("\r\nAuthorization: {scheme}{TOKEN}");
            assert_eq!(with(&right, Some(&token())).status, 200, "{path} {right:?}");
        }
        let right = format!("\r\nAuthorization: Bearer {TOKEN}");
        // No token configured: never authorized.
        assert_eq!(with(&right, None).status, 401, "{path}");
    }
}

#[test]
fn ready_and_health_pass_healthy_and_degraded_only() {
    let now = Instant::now();
    for status in Status::ALL {
        let view = published(status, Duration::from_secs(1), now);
        for path in ["/ready", "/health"] {
            let r = get(&view, path, now);
            let want = if status.passed() { 200 } else { 503 };
            assert_eq!(r.status, want, "{status} {path}");
            let v = body(&r);
            assert_eq!(v["status"], status.as_str());
            assert_eq!(v["spec_version"], "v1");
            assert_eq!(v["observed_at"], "2026-12-01T09:54:08.123456789Z");
            assert!(v.get("evidence").is_none(), "{}", r.body);
            assert!(!r.body.contains("private"), "{}", r.body);
        }
        let r = get(&view, "/health/dependencies", now);
        assert_eq!(r.status, if status.passed() { 200 } else { 503 });
        let v = body(&r);
        assert_eq!(v["status"], status.as_str());
        assert_eq!(v["evidence"]["target"]["name"], "private-agent-name");
        assert_eq!(get(&view, "/health/capabilities", now).body, r.body);
        // Liveness does not depend on what the checks found.
        let live = get(&view, "/live", now);
        assert_eq!(live.status, 200);
        assert_eq!(
            &*live.body,
            "{\"ahp_version\":\"v1\",\"spec_version\":\"v1\",\"status\":\"HEALTHY\"}\n"
        );
    }
}

#[test]
fn keys_are_in_the_reference_encoders_order() {
    let now = Instant::now();
    let view = published(Status::Degraded, Duration::ZERO, now);
    assert_eq!(
        &*get(&view, "/ready", now).body,
        "{\"ahp_version\":\"v1\",\"observed_at\":\"2026-12-01T09:54:08.123456789Z\",\"spec_version\":\"v1\",\"status\":\"DEGRADED\"}\n"
    );
    let detailed = get(&view, "/health/dependencies", now);
    let keys: Vec<String> = body(&detailed)
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "ahp_version",
            "evidence",
            "observed_at",
            "spec_version",
            "status"
        ]
    );
    assert!(
        detailed
            .body
            .starts_with("{\"ahp_version\":\"v1\",\"evidence\":{")
    );
}

#[test]
fn a_stale_run_is_unknown_and_its_evidence_unavailable() {
    let now = Instant::now();
    let view = published(Status::Healthy, MAX_AGE + Duration::from_millis(1), now);
    let r = get(&view, "/ready", now);
    assert_eq!(r.status, 503);
    assert_eq!(body(&r)["status"], "UNKNOWN");
    assert_eq!(body(&r)["observed_at"], "2026-12-01T09:54:08.123456789Z");
    for path in ["/health/dependencies", "/health/capabilities"] {
        let r = get(&view, path, now);
        assert_eq!(
            (r.status, body(&r)["error"].as_str()),
            (503, Some("snapshot_unavailable"))
        );
        assert!(!r.body.contains("private"), "{}", r.body);
    }
    assert_eq!(get(&view, "/live", now).status, 200);
    // Metrics stay available: their timestamp tells their age.
    assert_eq!(get(&view, "/metrics", now).status, 200);
    // Exactly the maximum age still counts.
    let edge = published(Status::Healthy, MAX_AGE, now);
    assert_eq!(get(&edge, "/ready", now).status, 200);
}

#[test]
fn before_the_first_run_and_after_the_loop_stopped() {
    let now = Instant::now();
    let view = nothing_yet();
    let r = get(&view, "/ready", now);
    assert_eq!(r.status, 503);
    assert_eq!(
        &*r.body,
        "{\"ahp_version\":\"v1\",\"spec_version\":\"v1\",\"status\":\"UNKNOWN\"}\n"
    );
    assert_eq!(
        body(&get(&view, "/health/dependencies", now))["error"],
        "snapshot_unavailable"
    );
    assert_eq!(get(&view, "/live", now).status, 200);
    let metrics = get(&view, "/metrics", now);
    assert_eq!(metrics.status, 200);
    assert_eq!(
        header(&metrics, "Content-Type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    assert_eq!(&*metrics.body, "agenthealth_runs_total 0\n");

    let mut stopped = published(Status::Healthy, Duration::ZERO, now);
    stopped.running = false;
    let live = get(&stopped, "/live", now);
    assert_eq!(
        (live.status, body(&live)["status"].as_str()),
        (503, Some("UNKNOWN"))
    );
    assert_eq!(get(&stopped, "/ready", now).status, 503);
    assert_eq!(get(&stopped, "/health/dependencies", now).status, 503);
}

#[test]
fn tokens_follow_rfc_6750() {
    for bad in [
        "",
        "short",
        "123456789012345",
        "1234567890123456 ",
        " 1234567890123456",
        "1234567890123456\t",
        "12345678 90123456",
        "1234567890123456\n",
        "1234567890123456é",
        "12345678=90123456",
        "================",
    ] {
        assert!(!valid_token(bad), "{bad:?}");
    }
    for good in [
        "1234567890123456",
        "aAzZ019-._~+/token==",
        "abcdefghijklmno=",
    ] {
        assert!(valid_token(good), "{good:?}");
    }
}

#[test]
fn unparsable_heads_get_json_errors() {
    assert_eq!(refuse(HeadError::Malformed).status, 400);
    let r = refuse(HeadError::TooLarge);
    assert_eq!(
        (r.status, body(&r)["error"].as_str()),
        (431, Some("request_too_large"))
    );
}
