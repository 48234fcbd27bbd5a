//! Advice for the HTTP adapter's verdicts.

use super::{int, rejected_credential, word};
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::HttpFailure;

pub(super) fn advice(failure: HttpFailure, check: &Check) -> String {
    match failure {
        HttpFailure::AuthRejected => rejected_credential(check),
        HttpFailure::StatusMismatch => unexpected_status(check),
        HttpFailure::HeaderMismatch => "a required response header is missing or differs; compare http.headers with what the service sends".into(),
        HttpFailure::BodyMissing => "the body did not contain http.body_contains; check the endpoint and the expected text".into(),
        HttpFailure::BodyLimit => "the body is larger than http.max_body_bytes; raise the limit or probe a smaller endpoint".into(),
    }
}

/// The likely fix for a status outside `http.expected_status` (default: any 2xx), by class.
fn unexpected_status(check: &Check) -> String {
    let Some(c) = int(check, Key::HttpStatus) else {
        return "the status is not an accepted one; check the endpoint, or http.expected_status"
            .into();
    };
    let head = word(check, Key::Method).as_deref() == Some("HEAD");
    match c {
        405 | 501 if head => format!(
            "HTTP {c}: the server does not answer HEAD; set http.method: GET (probes never fall back on their own), or list {c} in http.expected_status"
        ),
        300..=399 => format!(
            "HTTP {c} is a redirect, and redirects are never followed; use the final URL as the endpoint, or list {c} in http.expected_status"
        ),
        400..=499 => format!(
            "HTTP {c} is not an accepted status; check the endpoint path, or list {c} in http.expected_status"
        ),
        500..=599 => format!(
            "HTTP {c}: the service answered with a server error; check its health and logs, or list {c} in http.expected_status"
        ),
        _ => format!("HTTP {c} is not in http.expected_status"),
    }
}
