//! Advice for the HTTP adapter's verdicts.

use super::{Audience, Setting, int, rejected_credential, word};
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::HttpFailure;

pub(super) fn advice(failure: HttpFailure, check: &Check, audience: Audience) -> String {
    match failure {
        HttpFailure::AuthRejected => rejected_credential(check, audience),
        HttpFailure::StatusMismatch => unexpected_status(check, audience),
        HttpFailure::HeaderMismatch => "a required response header is missing or differs; compare http.headers with what the service sends".into(),
        HttpFailure::BodyMissing => "the body did not contain http.body_contains; check the endpoint and the expected text".into(),
        HttpFailure::BodyLimit => "the body is larger than http.max_body_bytes; raise the limit or probe a smaller endpoint".into(),
    }
}

/// The likely fix for a status outside `http.expected_status` (default: any 2xx), by class.
fn unexpected_status(check: &Check, audience: Audience) -> String {
    let expected = audience.name(Setting::ExpectedStatus);
    let Some(c) = int(check, Key::HttpStatus) else {
        return format!("the status is not an accepted one; check the endpoint, or {expected}");
    };
    let head = word(check, Key::Method).as_deref() == Some("HEAD");
    match c {
        405 | 501 if head => format!(
            "HTTP {c}: the server does not answer HEAD; set {}: GET (probes never fall back on their own), or list {c} in {expected}",
            audience.name(Setting::HttpMethod)
        ),
        300..=399 => format!(
            "{}, or list {c} in {expected}",
            super::redirect(c, check, audience)
        ),
        400..=499 => format!(
            "HTTP {c} is not an accepted status; check the endpoint path, or list {c} in {expected}"
        ),
        500..=599 => format!(
            "HTTP {c}: the service answered with a server error; check its health and logs, or list {c} in {expected}"
        ),
        _ => format!("HTTP {c} is not in {expected}"),
    }
}
