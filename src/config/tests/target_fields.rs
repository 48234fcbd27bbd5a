//! A target's own fields (`name`, `type`, `endpoint`, `id`, `checks`, `thresholds`, the timeouts,
//! retries and budget, `auth`), and the keys that belong elsewhere.

use super::*;

#[test]
fn name_is_required_non_blank_string() {
    rejects(
        "version: v1\ntargets:\n  - type: http\n    endpoint: x\n",
        "targets[0]",
        "missing required key `name`",
    );
    rejects_at(
        "version: v1\ntargets:\n  - name: '  '\n    type: http\n    endpoint: x\n",
        "targets[0].name",
        "expected a non-blank string, found a blank string",
        3,
    );
    rejects(
        "version: v1\ntargets:\n  - name: 123\n    type: http\n    endpoint: x\n",
        "targets[0].name",
        "expected a non-blank string, found an integer",
    );
    rejects(
        "version: v1\ntargets:\n  - name:\n    type: http\n    endpoint: x\n",
        "targets[0].name",
        "expected a non-blank string, found null",
    );
    rejects(
        "version: v1\ntargets:\n  - name: true\n    type: http\n    endpoint: x\n",
        "targets[0].name",
        "expected a non-blank string, found a boolean",
    );
    // `yes` is a string in YAML 1.2.
    assert_eq!(
        root("version: v1\ntargets:\n  - name: yes\n    type: http\n    endpoint: x\n").name,
        "yes"
    );
}

#[test]
fn missing_key_points_at_the_mapping() {
    rejects_at(
        "version: v1\ntargets:\n  - name: a\n    type: http\n",
        "targets[0]",
        "missing required key `endpoint`",
        3,
    );
}

#[test]
fn type_must_be_a_known_type() {
    rejects(
        "version: v1\ntargets:\n  - name: a\n    endpoint: x\n",
        "targets[0]",
        "missing required key `type`",
    );
    rejects_at(
        "version: v1\ntargets:\n  - name: a\n    type: htp\n    endpoint: x\n",
        "targets[0].type",
        "unknown target type; expected one of agent, multi-agent, a2a, mcp, tool, model, llm, \
         http, api, vector-store, database, runtime, gateway, router, custom (did you mean `http`?)",
        4,
    );
    rejects(
        &format!("version: v1\ntargets:\n  - name: a\n    type: {CANARY}\n    endpoint: x\n"),
        "targets[0].type",
        "unknown target type; expected one of agent, multi-agent, a2a, mcp, tool, model, llm, \
         http, api, vector-store, database, runtime, gateway, router, custom",
    );
    rejects(
        "version: v1\ntargets:\n  - name: a\n    type: HTTP\n    endpoint: x\n",
        "targets[0].type",
        "unknown target type; expected one of agent, multi-agent, a2a, mcp, tool, model, llm, \
         http, api, vector-store, database, runtime, gateway, router, custom (did you mean `http`?)",
    );
    rejects(
        "version: v1\ntargets:\n  - name: a\n    type: 7\n    endpoint: x\n",
        "targets[0].type",
        "expected a target type, found an integer",
    );
    for t in TargetType::ALL {
        let text = format!("version: v1\ntargets:\n  - name: a\n    type: {t}\n    endpoint: x\n");
        assert_eq!(root(&text).kind, t);
    }
}

#[test]
fn endpoint_is_required_non_blank() {
    rejects(
        "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: ''\n",
        "targets[0].endpoint",
        "expected a non-blank string, found a blank string",
    );
    rejects(
        "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: 8080\n",
        "targets[0].endpoint",
        "expected a non-blank string, found an integer",
    );
    // Syntax is the adapter's business (a MISCONFIGURED result), not the loader's.
    let t = root("version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: not a url\n");
    assert_eq!(t.endpoint, "not a url");
}

#[test]
fn id_must_match_the_pattern() {
    let msg = "expected an id of 1 to 64 characters from A-Z a-z 0-9 _ . - starting with a \
               letter or digit";
    for bad in ["-x", "_x", ".x", "a b", "a/b", ""] {
        rejects(&one("http", &format!("id: '{bad}'")), "targets[0].id", msg);
    }
    rejects(
        &one("http", &format!("id: {}", "a".repeat(65))),
        "targets[0].id",
        msg,
    );
    rejects(
        &one("http", &format!("id: x{CANARY}!")),
        "targets[0].id",
        msg,
    );
    rejects(
        &one("http", "id: 12"),
        "targets[0].id",
        "expected an id, found an integer",
    );
    let long = format!("A{}", "b.-_9".repeat(12)) + "xyz";
    assert_eq!(long.len(), 64);
    assert_eq!(root(&one("http", &format!("id: {long}"))).id, Some(long));
    assert_eq!(root(&one("http", "id: '0'")).id.as_deref(), Some("0"));
}

#[test]
fn checks_are_dimensions() {
    rejects_at(
        &one("http", "checks: null"),
        "targets[0].checks",
        "expected a list of dimensions, found null",
        6,
    );
    rejects(
        &one("http", "checks: reachability"),
        "targets[0].checks",
        "expected a list of dimensions, found a string",
    );
    rejects_at(
        &one("http", &format!("checks:\n  - reachability\n  - {CANARY}")),
        "targets[0].checks[1]",
        "unknown dimension; expected one of configuration, reachability, authentication, \
         protocol, capability, functional, latency, dependency",
        8,
    );
    rejects(
        &one("http", "checks: [reachabilty]"),
        "targets[0].checks[0]",
        "unknown dimension; expected one of configuration, reachability, authentication, \
         protocol, capability, functional, latency, dependency (did you mean `reachability`?)",
    );
    rejects(
        &one("http", "checks: [1]"),
        "targets[0].checks[0]",
        "expected a dimension name, found an integer",
    );
    rejects(
        &one("http", "checks: [~]"),
        "targets[0].checks[0]",
        "expected a dimension name, found null",
    );
}

#[test]
fn checks_omitted_empty_and_duplicates() {
    assert_eq!(root(&one("http", "")).checks, None);
    assert_eq!(root(&one("http", "checks: []")).checks, Some(vec![]));
    assert_eq!(
        root(&one("http", "checks: [latency, reachability, latency]")).checks,
        Some(vec![Dimension::Latency, Dimension::Reachability])
    );
    let all = "checks: [reachability, protocol, authentication, capability, functional, \
               dependency, latency, configuration]";
    assert_eq!(root(&one("http", all)).checks.map(|c| c.len()), Some(8));
}

#[test]
fn latency_threshold_is_finite_non_negative() {
    let what = "a finite number of milliseconds ≥ 0";
    rejects(
        &one("http", "thresholds: null"),
        "targets[0].thresholds",
        "expected a mapping with `latency_ms`, found null",
    );
    rejects_at(
        &one("http", "thresholds:\n  latency_ms: null"),
        "targets[0].thresholds.latency_ms",
        &format!("expected {what}, found null"),
        7,
    );
    rejects(
        &one("http", "thresholds: {latency_ms: -1}"),
        "targets[0].thresholds.latency_ms",
        &format!("expected {what}; found a negative number"),
    );
    rejects(
        &one("http", "thresholds: {latency_ms: -0.5}"),
        "targets[0].thresholds.latency_ms",
        &format!("expected {what}; found a negative number"),
    );
    rejects(
        &one("http", "thresholds: {latency_ms: '5'}"),
        "targets[0].thresholds.latency_ms",
        &format!("expected {what}, found a string"),
    );
    for inf in [".inf", ".nan", "-.inf"] {
        rejects(
            &one("http", &format!("thresholds: {{latency_ms: {inf}}}")),
            "targets[0].thresholds.latency_ms",
            &format!("expected {what}; found a non-finite number"),
        );
    }
    rejects(
        &one("http", "thresholds: {latency: 5}"),
        "targets[0].thresholds.latency",
        "unknown key; expected one of latency_ms (did you mean `latency_ms`?)",
    );
    assert_eq!(
        root(&one("http", "thresholds: {latency_ms: 0}")).latency_threshold_ms,
        Some(0.0)
    );
    assert_eq!(
        root(&one("http", "thresholds: {latency_ms: 250}")).latency_threshold_ms,
        Some(250.0)
    );
    assert_eq!(
        root(&one("http", "thresholds: {latency_ms: 2.5}")).latency_threshold_ms,
        Some(2.5)
    );
    assert_eq!(
        root(&one("http", "thresholds: {}")).latency_threshold_ms,
        None
    );
}

#[test]
fn timeout_ms_range() {
    let range = "expected an integer from 1 to 300000";
    for bad in ["0", "300001", "-5", NUM_CANARY] {
        rejects(
            &one("http", &format!("timeout_ms: {bad}")),
            "targets[0].timeout_ms",
            &format!("{range}; out of range"),
        );
    }
    rejects(
        &one("http", "timeout_ms: '5000'"),
        "targets[0].timeout_ms",
        &format!("{range}, found a string"),
    );
    rejects(
        &one("http", &format!("timeout_ms: {CANARY}")),
        "targets[0].timeout_ms",
        &format!("{range}, found a string"),
    );
    rejects(
        &one("http", "timeout_ms: 5000.0"),
        "targets[0].timeout_ms",
        &format!("{range}, found a float"),
    );
    rejects(
        &one("http", "timeout_ms: 999999999999999999999999999999"),
        "targets[0].timeout_ms",
        &format!("{range}; out of range"),
    );
    assert_eq!(root(&one("http", "")).timeout_ms, 5000);
    assert_eq!(root(&one("http", "timeout_ms: 1")).timeout_ms, 1);
    assert_eq!(root(&one("http", "timeout_ms: 300000")).timeout_ms, 300_000);
}

#[test]
fn check_timeouts_keys_and_values() {
    rejects_at(
        &one("http", "check_timeouts_ms:\n  dependency: 5"),
        "targets[0].check_timeouts_ms.dependency",
        "`dependency` makes no request of its own and takes no timeout",
        7,
    );
    rejects(
        &one("http", "check_timeouts_ms: {reachabilty: 5}"),
        "targets[0].check_timeouts_ms.reachabilty",
        "unknown dimension; expected one of configuration, reachability, authentication, \
         protocol, capability, functional, latency (did you mean `reachability`?)",
    );
    for bad in ["0", "300001"] {
        rejects(
            &one("http", &format!("check_timeouts_ms: {{protocol: {bad}}}")),
            "targets[0].check_timeouts_ms.protocol",
            "expected an integer from 1 to 300000; out of range",
        );
    }
    rejects(
        &one("http", "check_timeouts_ms: {protocol: '5'}"),
        "targets[0].check_timeouts_ms.protocol",
        "expected an integer from 1 to 300000, found a string",
    );
    rejects(
        &one("http", "check_timeouts_ms: null"),
        "targets[0].check_timeouts_ms",
        "expected a mapping of dimension to milliseconds, found null",
    );
    let t = root(&one(
        "http",
        "timeout_ms: 100\ncheck_timeouts_ms: {protocol: 7000, latency: 1}",
    ));
    assert_eq!(
        t.check_timeouts_ms,
        vec![(Dimension::Protocol, 7000), (Dimension::Latency, 1)]
    );
    assert_eq!(
        t.timeout_for(Dimension::Protocol),
        (7000, Bound::CheckTimeoutMs)
    );
    assert_eq!(
        t.timeout_for(Dimension::Reachability),
        (100, Bound::TimeoutMs)
    );
}

#[test]
fn retries_delay_and_budget_ranges() {
    rejects(
        &one("http", "retries: 4"),
        "targets[0].retries",
        "expected an integer from 0 to 3; out of range",
    );
    rejects(
        &one("http", "retries: -1"),
        "targets[0].retries",
        "expected an integer from 0 to 3; out of range",
    );
    rejects(
        &one("http", "retries: true"),
        "targets[0].retries",
        "expected an integer from 0 to 3, found a boolean",
    );
    rejects(
        &one("http", "retry_delay_ms: 60001"),
        "targets[0].retry_delay_ms",
        "expected an integer from 0 to 60000; out of range",
    );
    rejects(
        &one("http", "budget_ms: 0"),
        "targets[0].budget_ms",
        "expected an integer from 1 to 60000; out of range",
    );
    rejects(
        &one("http", "budget_ms: 60001"),
        "targets[0].budget_ms",
        "expected an integer from 1 to 60000; out of range",
    );
    rejects(
        &one("http", "budget_ms: null"),
        "targets[0].budget_ms",
        "expected an integer from 1 to 60000, found null",
    );
    let t = root(&one("http", ""));
    assert_eq!((t.retries, t.retry_delay_ms, t.budget_ms), (0, 100, None));
    let t = root(&one("http", "retries: 3\nretry_delay_ms: 0\nbudget_ms: 1"));
    assert_eq!((t.retries, t.retry_delay_ms, t.budget_ms), (3, 0, Some(1)));
    let t = root(&one("http", "retry_delay_ms: 60000\nbudget_ms: 60000"));
    assert_eq!((t.retry_delay_ms, t.budget_ms), (60_000, Some(60_000)));
}

#[test]
fn auth_requires_a_valid_bearer_env() {
    rejects(
        &one("http", "auth: null"),
        "targets[0].auth",
        "expected a mapping with `bearer_env`, found null",
    );
    rejects(
        &one("http", &format!("auth: {CANARY}")),
        "targets[0].auth",
        "expected a mapping with `bearer_env`, found a string",
    );
    rejects_at(
        &one("http", "auth: {}"),
        "targets[0].auth",
        "missing required key `bearer_env`",
        6,
    );
    rejects(
        &one("http", "auth: {bearer_env: '  '}"),
        "targets[0].auth.bearer_env",
        "expected the name of an environment variable, found a blank string",
    );
    rejects(
        &one("http", &format!("auth: {{bearer_env: 'TOKEN={CANARY}'}}")),
        "targets[0].auth.bearer_env",
        "expected the name of an environment variable; `=` and NUL are not allowed",
    );
    rejects(
        &one("http", "auth: {bearer_env: \"A\\0B\"}"),
        "targets[0].auth.bearer_env",
        "expected the name of an environment variable; `=` and NUL are not allowed",
    );
    rejects(
        &one(
            "http",
            &format!("auth:\n  bearer_env: T\n  token: {CANARY}"),
        ),
        "targets[0].auth.token",
        "unknown key; expected one of bearer_env",
    );
    rejects(
        &one("http", &format!("auth:\n  bearer: {CANARY}")),
        "targets[0].auth.bearer",
        "unknown key; expected one of bearer_env (did you mean `bearer_env`?)",
    );
    assert_eq!(
        root(&one("http", "auth: {bearer_env: API_TOKEN}"))
            .bearer_env
            .as_deref(),
        Some("API_TOKEN")
    );
}

#[test]
fn critical_relationship_and_ref_only_on_dependencies() {
    rejects_at(
        &one("http", "critical: true"),
        "targets[0].critical",
        "only allowed on dependency entries; a top-level target has no edge",
        6,
    );
    rejects(
        &one("http", "relationship: path"),
        "targets[0].relationship",
        "only allowed on dependency entries; a top-level target has no edge",
    );
    rejects(
        "version: v1\ntargets:\n  - ref: a\n",
        "targets[0].ref",
        "only allowed on dependency entries; a top-level entry must be a target",
    );
}

#[test]
fn agent_and_a2a_sections_are_named() {
    rejects(
        &one("agent", "agent: {required_capabilities: [x]}"),
        "targets[0].agent",
        "the `agent` section is not supported by this version of agenthealth",
    );
    rejects(
        &one("a2a", "a2a: {}"),
        "targets[0].a2a",
        "the `a2a` section is not supported by this version of agenthealth",
    );
}

/// An endpoint that cannot work on any host loads (a check reports it as MISCONFIGURED), and
/// is recorded with its key path and line for `validate`; the value is never repeated.
#[test]
fn an_unusable_endpoint_is_recorded_with_its_path_and_line() {
    let doc = |kind: &str, endpoint: &str, extra: &str| {
        format!(
            "version: v1\ntargets:\n  - name: t\n    type: {kind}\n    endpoint: '{endpoint}'\n{extra}"
        )
    };
    let stdio = "    mcp:\n      transport: stdio\n      stdio:\n        command: x\n";
    for (kind, endpoint, extra, expected) in [
        (
            "http",
            "ftp://x/",
            "",
            "expected an http(s) URL; its scheme is not http or https",
        ),
        (
            "api",
            "example.com/health",
            "",
            "expected an http(s) URL; it does not parse",
        ),
        (
            "gateway",
            "http://x:99999/",
            "",
            "expected an http(s) URL; it does not parse",
        ),
        (
            "router",
            "http:///p",
            "",
            "expected an http(s) URL; it names no host",
        ),
        (
            "http",
            "http://x/#top",
            "",
            "expected an http(s) URL; it has a #fragment",
        ),
        (
            "http",
            "http://u:sk-CANARY@x/",
            "",
            "expected an http(s) URL; it carries user:password@ (a token goes in auth.bearer_env)",
        ),
        (
            "mcp",
            "stdio://x",
            "",
            "expected an http(s) URL; a stdio endpoint needs mcp.transport: stdio",
        ),
        (
            "mcp",
            "http://x/mcp",
            stdio,
            "expected a stdio endpoint (the scheme stdio, `://` and a name) for mcp.transport: stdio",
        ),
    ] {
        let config = load(&doc(kind, endpoint, extra));
        let e = config
            .unusable_endpoint
            .unwrap_or_else(|| panic!("{kind} {endpoint}: recorded"));
        assert_eq!(
            e.to_string(),
            format!("targets[0].endpoint: {expected} (line 5)")
        );
        assert!(!e.to_string().contains("CANARY"));
    }
    for (kind, endpoint, extra) in [
        ("http", "http://x/#", ""),
        ("mcp", "https://x/mcp?q=1", ""),
        ("mcp", "stdio://local", stdio),
        ("vector-store", "not a url", ""),
    ] {
        let config = load(&doc(kind, endpoint, extra));
        assert!(config.unusable_endpoint.is_none(), "{kind} {endpoint}");
    }
}

#[test]
fn the_first_unusable_endpoint_in_declaration_order_is_recorded() {
    let text = "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x/\n    dependencies:\n      - name: b\n        type: http\n        endpoint: nope\n  - name: c\n    type: http\n    endpoint: nope\n";
    let e = load(text).unusable_endpoint.expect("recorded");
    assert_eq!(e.path, "targets[0].dependencies[0].endpoint");
    assert_eq!(e.line, Some(9));
}
