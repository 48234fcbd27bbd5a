//! The `http` section of an HTTP-family target.

use super::*;

#[test]
fn http_valid_forms() {
    let t = root(&one("http", "http:\n  method: GET"));
    assert_eq!(t.http.unwrap().method, Some(HttpMethod::Get));
    let t = root(&one("http", "http:\n  method: HEAD"));
    assert_eq!(t.http.unwrap().method, Some(HttpMethod::Head));
    let h = root(&one("http", "http: {}")).http.unwrap();
    assert_eq!(h.method, None);
    assert_eq!(h.expected_status, None);
    assert!(h.headers.is_empty());
    assert_eq!(h.body_contains, None);
    assert_eq!(h.max_body_bytes, 65_536);
    let h = root(&one(
        "api",
        "http:\n  expected_status: [200, 599]\n  headers:\n    X-Ready: 'true'\n    Cache-Control: \"no-store,\\tprivate\"",
    ))
    .http
    .unwrap();
    assert_eq!(h.expected_status, Some(vec![200, 599]));
    assert_eq!(
        h.headers,
        vec![
            ("X-Ready".to_string(), "true".to_string()),
            (
                "Cache-Control".to_string(),
                "no-store,\tprivate".to_string()
            )
        ]
    );
    let h = root(&one(
        "http",
        "checks: [functional]\nhttp:\n  body_contains: ok\n  max_body_bytes: 1048576",
    ))
    .http
    .unwrap();
    assert_eq!(h.body_contains.as_deref(), Some("ok"));
    assert_eq!(h.max_body_bytes, 1_048_576);
    // Explicit checks with protocol allow expectations.
    root(&one(
        "http",
        "checks: [protocol]\nhttp: {expected_status: [204], headers: {X-A: b}}",
    ));
    // An empty header map is no expectation.
    root(&one("http", "checks: [reachability]\nhttp: {headers: {}}"));
    // An empty body_contains is no expectation.
    assert_eq!(
        root(&one("http", "http: {body_contains: ''}"))
            .http
            .unwrap()
            .body_contains,
        None
    );
    for kind in ["gateway", "router"] {
        let t = root(&one(
            kind,
            "checks: [protocol]\nhttp: {method: GET, expected_status: [200]}",
        ));
        assert!(t.http.is_some());
    }
}

#[test]
fn http_method_is_head_or_get() {
    for bad in ["''", "POST", "get", "Head", CANARY] {
        rejects(
            &one("http", &format!("http: {{method: {bad}}}")),
            "targets[0].http.method",
            "expected `HEAD` or `GET` (upper case)",
        );
    }
    rejects(
        &one("http", "http: {method: null}"),
        "targets[0].http.method",
        "expected `HEAD` or `GET`, found null",
    );
}

#[test]
fn http_section_shape() {
    rejects(
        &one("http", "http: null"),
        "targets[0].http",
        "expected a mapping of HTTP options, found null",
    );
    rejects_at(
        &one("http", "http:\n  metod: GET"),
        "targets[0].http.metod",
        "unknown key; expected one of method, expected_status, headers, body_contains, \
         max_body_bytes (did you mean `method`?)",
        7,
    );
    rejects(
        &one("mcp", "http: {}"),
        "targets[0].http",
        "`http` options are only allowed on http, api, gateway, router targets",
    );
    rejects(
        &one("agent", "http: {method: GET}"),
        "targets[0].http",
        "`http` options are only allowed on http, api, gateway, router targets",
    );
}

#[test]
fn http_expected_status() {
    rejects(
        &one("http", "http: {expected_status: []}"),
        "targets[0].http.expected_status",
        "expected at least one status code from 200 to 599",
    );
    for bad in ["199", "600", "0"] {
        rejects(
            &one("http", &format!("http: {{expected_status: [200, {bad}]}}")),
            "targets[0].http.expected_status[1]",
            "expected an integer from 200 to 599; out of range",
        );
    }
    rejects(
        &one("http", "http: {expected_status: ['200']}"),
        "targets[0].http.expected_status[0]",
        "expected an integer from 200 to 599, found a string",
    );
    rejects(
        &one("http", "http: {expected_status: 200}"),
        "targets[0].http.expected_status",
        "expected a non-empty list of HTTP status codes, found an integer",
    );
    rejects(
        &one("http", "http: {expected_status: null}"),
        "targets[0].http.expected_status",
        "expected a non-empty list of HTTP status codes, found null",
    );
}

#[test]
fn http_headers() {
    rejects_at(
        &one(
            "http",
            &format!("http:\n  headers:\n    X-Ready: {CANARY}\n    x-ready: b"),
        ),
        "targets[0].http.headers.x-ready",
        "duplicate header name (header names are case-insensitive)",
        9,
    );
    rejects(
        &one("http", "http:\n  headers:\n    X-Ready: true"),
        "targets[0].http.headers.X-Ready",
        "expected a string, found a boolean",
    );
    rejects(
        &one("http", "http:\n  headers:\n    X-Ready: null"),
        "targets[0].http.headers.X-Ready",
        "expected a string, found null",
    );
    rejects(
        &one("http", "http:\n  headers:\n    'X Ready': a"),
        "targets[0].http.headers.<key #1>",
        "header name must be an RFC 7230 token",
    );
    rejects(
        &one("http", "http:\n  headers:\n    'X:Ready': a"),
        "targets[0].http.headers[\"X:Ready\"]",
        "header name must be an RFC 7230 token",
    );
    rejects(
        &one("http", "http:\n  headers:\n    '': a"),
        "targets[0].http.headers.<key #1>",
        "header name must be an RFC 7230 token",
    );
    rejects(
        &one(
            "http",
            &format!("http:\n  headers:\n    X-Ready: \"{CANARY}\\r\\nX: y\""),
        ),
        "targets[0].http.headers.X-Ready",
        "header value must not contain control characters other than TAB",
    );
    rejects(
        &one("http", "http:\n  headers:\n    X-Ready: \"a\\x7fb\""),
        "targets[0].http.headers.X-Ready",
        "header value must not contain control characters other than TAB",
    );
    rejects(
        &one("http", "http:\n  headers: [X-Ready]"),
        "targets[0].http.headers",
        "expected a mapping of header name to expected value, found a list",
    );
}

#[test]
fn http_cross_field_rules() {
    rejects_at(
        &one("http", &format!("http:\n  body_contains: {CANARY}")),
        "targets[0].http.body_contains",
        "requires `functional` listed explicitly in `checks`",
        7,
    );
    rejects(
        &one("http", "checks: [protocol]\nhttp: {body_contains: x}"),
        "targets[0].http.body_contains",
        "requires `functional` listed explicitly in `checks`",
    );
    rejects(
        &one("http", "checks: [functional]\nhttp: {body_contains: 5}"),
        "targets[0].http.body_contains",
        "expected a string, found an integer",
    );
    rejects(
        &one(
            "http",
            "checks: [functional]\nhttp: {max_body_bytes: 1048577}",
        ),
        "targets[0].http.max_body_bytes",
        "expected an integer from 1 to 1048576; out of range",
    );
    rejects(
        &one("http", "checks: [functional]\nhttp: {max_body_bytes: 0}"),
        "targets[0].http.max_body_bytes",
        "expected an integer from 1 to 1048576; out of range",
    );
    rejects_at(
        &one(
            "http",
            "checks: [reachability]\nhttp:\n  expected_status: [200]",
        ),
        "targets[0].http.expected_status",
        "requires `protocol` or `functional` in the explicit `checks`",
        8,
    );
    rejects(
        &one(
            "http",
            "checks: [reachability, latency]\nhttp: {headers: {X-A: b}}",
        ),
        "targets[0].http.headers",
        "requires `protocol` or `functional` in the explicit `checks`",
    );
    rejects(
        &one("http", "checks: []\nhttp: {expected_status: [200]}"),
        "targets[0].http.expected_status",
        "requires `protocol` or `functional` in the explicit `checks`",
    );
    // Omitted checks are the passive defaults, which include protocol.
    root(&one(
        "http",
        "http: {expected_status: [200], headers: {X-A: b}}",
    ));
    root(&one(
        "http",
        "checks: [functional]\nhttp: {expected_status: [200]}",
    ));
}
