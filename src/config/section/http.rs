//! The `http` section of an HTTP-family target: the passive probe's method, the statuses and
//! headers the protocol check accepts, and the functional check's body.

use std::collections::HashSet;

use super::Requested;
use crate::config::reader::{At, Fail, Field};
use crate::config::{DEFAULT_MAX_BODY_BYTES, HttpMethod, HttpOptions, rules};
use crate::contract::Dimension;

const HTTP_KEYS: &[&str] = &[
    "method",
    "expected_status",
    "headers",
    "body_contains",
    "max_body_bytes",
];

/// Reads `http` for a target whose `checks` request `requested`.
pub(super) fn http(f: &Field<'_>, requested: &Requested<'_>) -> Result<HttpOptions, Fail> {
    let map = f.at().section("a mapping of HTTP options", HTTP_KEYS)?;
    let mut out = HttpOptions {
        max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        ..HttpOptions::default()
    };
    if let Some(m) = map.get("method") {
        out.method = Some(method(m)?);
    }
    if let Some(s) = map.get("expected_status") {
        out.expected_status = Some(expected_status(s)?);
    }
    if let Some(h) = map.get("headers") {
        out.headers = headers(h)?;
    }
    if let Some(b) = map.get("body_contains") {
        let text = b.at().str("a string")?;
        if !text.is_empty() {
            if !requested.has(Dimension::Functional) {
                return Err(b
                    .path
                    .fail_key("requires `functional` listed explicitly in `checks`"));
            }
            out.body_contains = Some(text.to_string());
        }
    }
    if let Some(m) = map.get("max_body_bytes") {
        out.max_body_bytes = m.at().whole(rules::BODY_BYTES)?;
    }
    if requested.explicit()
        && !requested.has(Dimension::Protocol)
        && !requested.has(Dimension::Functional)
    {
        let culprit = match map.get("expected_status") {
            Some(s) => Some(s),
            None => map.get("headers").filter(|_| !out.headers.is_empty()),
        };
        if let Some(c) = culprit {
            return Err(c
                .path
                .fail_key("requires `protocol` or `functional` in the explicit `checks`"));
        }
    }
    Ok(out)
}

/// `method`: the passive probe's, `HEAD` or `GET`.
fn method(m: &Field<'_>) -> Result<HttpMethod, Fail> {
    match m.at().str("`HEAD` or `GET`")? {
        "HEAD" => Ok(HttpMethod::Head),
        "GET" => Ok(HttpMethod::Get),
        _ => Err(m.path.fail("expected `HEAD` or `GET` (upper case)")),
    }
}

/// `expected_status`: a non-empty list of status codes.
fn expected_status(s: &Field<'_>) -> Result<Vec<u16>, Fail> {
    let items = s.at().list("a non-empty list of HTTP status codes")?;
    if items.is_empty() {
        return Err(s.path.fail(format!(
            "expected at least one status code from {} to {}",
            rules::HTTP_STATUS.min,
            rules::HTTP_STATUS.max
        )));
    }
    let mut codes = Vec::with_capacity(items.len());
    for (path, node) in items {
        let code = At { node, path: &path }.whole(rules::HTTP_STATUS)?;
        codes.push(u16::try_from(code).unwrap_or(200));
    }
    Ok(codes)
}

/// `headers`: names (tokens, unique ignoring case) and the exact values expected.
fn headers(h: &Field<'_>) -> Result<Vec<(String, String)>, Fail> {
    let headers = h.at().map("a mapping of header name to expected value")?;
    let mut seen = HashSet::with_capacity(headers.fields.len());
    let mut out = Vec::with_capacity(headers.fields.len());
    for entry in &headers.fields {
        if !is_token(entry.name) {
            return Err(entry.path.fail_key("header name must be an RFC 7230 token"));
        }
        if !seen.insert(entry.name.to_ascii_lowercase()) {
            return Err(entry
                .path
                .fail_key("duplicate header name (header names are case-insensitive)"));
        }
        let value = entry.at().str("a string")?;
        if value
            .chars()
            .any(|c| (c < ' ' && c != '\t') || c == '\u{7f}')
        {
            return Err(entry
                .path
                .fail("header value must not contain control characters other than TAB"));
        }
        out.push((entry.name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// RFC 7230 `token`: one or more tchar.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_tokens() {
        assert!(is_token("X-Ready") && is_token("a!#$%&'*+-.^_`|~"));
        for bad in ["", "a b", "a:b", "é", "a\"b"] {
            assert!(!is_token(bad), "{bad:?}");
        }
    }
}
