//! The AgentHealth Protocol v1 over HTTP, as the Go reference serves it, plus `/metrics`.
//!
//! Routing, in the reference's order: an unknown path is 404 whatever the method; a known
//! path with another method than `GET` is 405 with `Allow: GET`; an `AHP-Version` header
//! other than `v1` is 400; a detailed path without `Authorization: Bearer <token>` (the scheme in any case, then one or
//! more spaces) is 401 with
//! `WWW-Authenticate: Bearer` (always, when no token is configured). Every response is JSON
//! (`/metrics`: the Prometheus text format) with `Cache-Control: no-store`,
//! `X-Content-Type-Options: nosniff` and `AHP-Version: v1`.
//!
//! * `/live`: HEALTHY and 200 while the refresh loop runs (no `observed_at`).
//! * `/health`, `/ready`: the worst top-level status of the last run and when it finished;
//!   200 when it is HEALTHY or DEGRADED and younger than the maximum age, else 503 (UNKNOWN
//!   before the first run and once stale).
//! * `/health/dependencies`, `/health/capabilities` (token): the same plus `evidence`, the
//!   `check --format json` document; 503 `snapshot_unavailable` while there is no fresh one.
//! * `/metrics` (token): the last run's metrics, stale or not (their timestamp says so).
//!
//! Bodies are compact JSON with keys in alphabetical order and a final newline, as Go's
//! encoder writes a map.

use std::sync::Arc;
use std::time::Instant;

use ring::digest::{SHA256, digest};

use super::http_server::{Answer, HeadError, RequestHead};
use super::snapshot::View;
use crate::contract::{Secret, Status};
use crate::output::metrics::Dialect;

/// The protocol version this server speaks.
pub const VERSION: &str = "v1";

/// The paths served, in the order help and docs list them.
pub const PATHS: [&str; 8] = [
    "/live",
    "/ready",
    "/health",
    "/health/dependencies",
    "/health/capabilities",
    "/metrics",
    "/probe",
    "/targets",
];

/// Shortest accepted `--token-env` token.
pub const MIN_TOKEN_LEN: usize = 16;

/// Whether `token` may protect the detailed paths: at least [`MIN_TOKEN_LEN`] characters of
/// RFC 6750's `b64token` (`A-Z a-z 0-9 - . _ ~ + /`, then only `=` padding).
pub fn valid_token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    token.len() >= MIN_TOKEN_LEN
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// The routing every path shares, in the reference's order: 404 for an unknown path, 405
/// for another method than `GET`, 400 for another `AHP-Version`, 401 without the token on a
/// path that needs it (every one but `/live`, `/ready` and `/health`). `Ok` when the request
/// is for its path to answer.
pub fn admit(request: &RequestHead, token: Option<&Secret>) -> Result<(), Answer> {
    let path = request.path;
    if !PATHS.contains(&path) {
        return Err(error(404, "not_found"));
    }
    if request.method != "GET" {
        let mut r = error(405, "method_not_allowed");
        r.headers.push(("Allow", "GET".into()));
        return Err(r);
    }
    if request
        .header("AHP-Version")
        .is_some_and(|v| !v.is_empty() && v != VERSION)
    {
        return Err(error(400, "unsupported_version"));
    }
    if !open(path) && !token.is_some_and(|t| authorized(request.header("Authorization"), t)) {
        let mut r = error(401, "unauthorized");
        r.headers.push(("WWW-Authenticate", "Bearer".into()));
        return Err(r);
    }
    Ok(())
}

/// The paths anyone may read: liveness, readiness and the bare status; every other path is
/// under the token rule and may carry details.
fn open(path: &str) -> bool {
    matches!(path, "/live" | "/ready" | "/health")
}

/// The answer to `request` (admitted by [`admit`]) from what the refresh loop published
/// (`view`) at `now`.
pub fn respond(request: &RequestHead, view: &View, now: Instant) -> Answer {
    let path = request.path;
    let detailed = !open(path);
    match path {
        "/live" => {
            let status = if view.running {
                Status::Healthy
            } else {
                Status::Unknown
            };
            json(code(status), &envelope(status, None))
        }
        "/metrics" => Answer {
            status: 200,
            headers: common(Dialect::Prometheus.content_type()),
            body: view.metrics.clone(),
        },
        _ => {
            let fresh = view.fresh(now);
            match (detailed, fresh) {
                (true, Some(s)) => Answer {
                    status: code(s.status),
                    headers: common(JSON),
                    body: s.detailed.clone(),
                },
                (true, None) => error(503, "snapshot_unavailable"),
                (false, Some(s)) => json(code(s.status), &envelope(s.status, Some(&s.observed_at))),
                (false, None) => {
                    let observed = view.latest.as_ref().map(|s| s.observed_at.as_str());
                    json(503, &envelope(Status::Unknown, observed))
                }
            }
        }
    }
}

/// The answer to a head the server could not parse.
pub fn refuse(e: HeadError) -> Answer {
    match e {
        HeadError::Malformed => error(400, "bad_request"),
        HeadError::TooLarge => error(431, "request_too_large"),
    }
}

/// 200 for HEALTHY and DEGRADED, 503 for the rest.
fn code(status: Status) -> u16 {
    if status.passed() { 200 } else { 503 }
}

/// `{"ahp_version":"v1","observed_at":…,"spec_version":"v1","status":…}` and a newline.
fn envelope(status: Status, observed_at: Option<&str>) -> String {
    let observed = observed_at
        .map(|t| format!(",\"observed_at\":{}", quote(t)))
        .unwrap_or_default();
    format!(
        "{{\"ahp_version\":\"{VERSION}\"{observed},\"spec_version\":\"v1\",\"status\":\"{}\"}}\n",
        status.as_str()
    )
}

/// The body of the detailed paths for a run: the envelope with the document as `evidence`.
pub fn detailed_body(status: Status, observed_at: &str, document: &str) -> String {
    format!(
        "{{\"ahp_version\":\"{VERSION}\",\"evidence\":{document},\"observed_at\":{},\"spec_version\":\"v1\",\"status\":\"{}\"}}\n",
        quote(observed_at),
        status.as_str()
    )
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

const JSON: &str = "application/json";

/// The headers of every answer: its type, `Cache-Control: no-store`,
/// `X-Content-Type-Options: nosniff`, `AHP-Version: v1`.
pub fn common(content_type: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", content_type.into()),
        ("Cache-Control", "no-store".into()),
        ("X-Content-Type-Options", "nosniff".into()),
        ("AHP-Version", VERSION.into()),
    ]
}

/// A JSON answer with the protocol's headers.
pub fn json(status: u16, body: &str) -> Answer {
    Answer {
        status,
        headers: common(JSON),
        body: Arc::from(body),
    }
}

/// `{"ahp_version":"v1","error":NAME}` with `status`.
pub fn error(status: u16, name: &str) -> Answer {
    json(
        status,
        &format!("{{\"ahp_version\":\"{VERSION}\",\"error\":\"{name}\"}}\n"),
    )
}

/// Whether the `Authorization` header is exactly `Bearer <token>`. Both sides are hashed
/// first and the digests compared in constant time, so the comparison's duration says
/// nothing about the token, not even its length.
/// Whether `header` is `Bearer <token>`. The scheme is compared case-insensitively and may be
/// followed by one or more spaces (RFC 7235 §2.1: `1*SP`, no tab); the credential is the rest,
/// with no whitespace in it. The scheme is no secret; the credential is compared in constant
/// time, as digests of equal length.
fn authorized(header: Option<&str>, token: &Secret) -> bool {
    let Some(credential) = header.and_then(bearer_credential) else {
        return false;
    };
    let submitted = digest(&SHA256, credential.as_bytes());
    let expected = digest(&SHA256, token.expose().as_bytes());
    submitted
        .as_ref()
        .iter()
        .zip(expected.as_ref())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// The credential of an `Authorization: Bearer 1*SP credential` value.
fn bearer_credential(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    let credential = rest.trim_start_matches(' ');
    let well_formed = scheme.eq_ignore_ascii_case("bearer")
        && !credential.is_empty()
        && !credential.contains(|c: char| c.is_ascii_whitespace());
    well_formed.then_some(credential)
}

#[cfg(test)]
mod tests;
