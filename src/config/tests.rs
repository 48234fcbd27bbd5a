//! Tests of the strict loader: every rejection with its exact message shape (path, what was
//! expected, line where it matters) and the guarantee that no value from the file is echoed,
//! plus every valid form of the contract and of upstream-mcp.md §17 M.

use std::time::{Duration, Instant};

use super::load::{LoadError, MAX_FILE_BYTES, load_file, load_str};
use super::{Config, HttpMethod, McpTransport, OAuthGrant, Relationship, Target, TargetType};
use crate::contract::{Bound, Dimension};

/// A secret-looking value placed in offending fields; it must never appear in a message.
const CANARY: &str = "sk-CANARY-6f1d2c";
/// A numeric canary for integer fields.
const NUM_CANARY: &str = "987654321";

/// A one-target document; `extra` lines are indented under the target. The first extra line
/// is line 6.
fn one(kind: &str, extra: &str) -> String {
    let mut s = format!(
        "version: v1\ntargets:\n  - name: t\n    type: {kind}\n    endpoint: http://127.0.0.1:1/\n"
    );
    for line in extra.lines() {
        s.push_str("    ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

fn load(text: &str) -> Config {
    match load_str(text) {
        Ok(c) => c,
        Err(e) => panic!("expected to load, got `{e}` for:\n{text}"),
    }
}

fn root(text: &str) -> Target {
    let c = load(text);
    c.nodes[c.roots[0]].clone()
}

/// Asserts the rejection's path and text, and that no canary leaks into the message.
#[track_caller]
fn rejects(text: &str, path: &str, expected: &str) -> LoadError {
    let e = match load_str(text) {
        Ok(_) => panic!("expected `{path}: {expected}`, but it loaded:\n{text}"),
        Err(e) => e,
    };
    assert_eq!(
        (e.path.as_str(), e.expected.as_str()),
        (path, expected),
        "for:\n{text}"
    );
    let shown = e.to_string();
    assert!(!shown.contains(CANARY), "value echoed: {shown}");
    assert!(!shown.contains(NUM_CANARY), "value echoed: {shown}");
    assert!(!shown.contains('\n'), "not one line: {shown}");
    e
}

#[track_caller]
fn rejects_at(text: &str, path: &str, expected: &str, line: usize) {
    let e = rejects(text, path, expected);
    assert_eq!(e.line, Some(line), "line of `{e}`");
}

// ---------------------------------------------------------------------------------------
// Display shape

#[test]
fn display_is_one_line_with_path_and_line() {
    let text = "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n  - name: b\n    type: http\n    endpoint: http://y\n    timeot_ms: 5\n";
    let e = rejects(
        text,
        "targets[1].timeot_ms",
        "unknown key; expected one of name, type, endpoint, id, checks, thresholds, timeout_ms, \
         check_timeouts_ms, retries, retry_delay_ms, budget_ms, auth, dependencies, http, mcp \
         (did you mean `timeout_ms`?)",
    );
    assert_eq!(e.line, Some(9));
    assert!(
        e.to_string()
            .starts_with("targets[1].timeot_ms: unknown key; expected one of name")
    );
    assert!(
        e.to_string()
            .ends_with("(did you mean `timeout_ms`?) (line 9)")
    );
}

#[test]
fn unknown_key_far_from_any_gets_no_suggestion() {
    rejects(
        &one("http", "colour: blue"),
        "targets[0].colour",
        "unknown key; expected one of name, type, endpoint, id, checks, thresholds, timeout_ms, \
         check_timeouts_ms, retries, retry_delay_ms, budget_ms, auth, dependencies, http, mcp",
    );
}

#[test]
fn unknown_key_with_secret_value_does_not_echo_it() {
    rejects_at(
        &one("http", &format!("token: {CANARY}")),
        "targets[0].token",
        "unknown key; expected one of name, type, endpoint, id, checks, thresholds, timeout_ms, \
         check_timeouts_ms, retries, retry_delay_ms, budget_ms, auth, dependencies, http, mcp",
        6,
    );
}

// ---------------------------------------------------------------------------------------
// Document level

#[test]
fn syntax_error_names_libyaml_problem_and_line() {
    let e = load_str("version: v1\ntargets:\n  - name: [a\n    type: http\n").unwrap_err();
    assert_eq!(e.path, "");
    assert!(e.expected.starts_with("invalid YAML: "), "{e}");
    assert!(e.line.is_some());
    let e = load_str("version: v1\ntargets:\n\t- name: a\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid YAML: found character that cannot start any token (line 3)"
    );
}

#[test]
fn syntax_error_never_echoes_input() {
    let text = format!("version: v1\ntargets:\n  - name: \"{CANARY}\n");
    let e = load_str(&text).unwrap_err();
    assert!(!e.to_string().contains(CANARY), "{e}");
}

#[test]
fn second_document_is_rejected() {
    rejects(
        &format!("{}---\nversion: v1\n", one("http", "")),
        "",
        "configuration must contain exactly one YAML document",
    );
}

#[test]
fn root_must_be_a_mapping() {
    rejects(
        "- version: v1\n",
        "",
        "expected a mapping with `version` and `targets`, found a list",
    );
    rejects(
        "",
        "",
        "expected a mapping with `version` and `targets`, found null",
    );
    rejects(
        &format!("{CANARY}\n"),
        "",
        "expected a mapping with `version` and `targets`, found a string",
    );
}

#[test]
fn version_is_required_and_only_v1() {
    rejects("targets: []\n", "", "missing required key `version`");
    rejects_at(
        &format!("version: {CANARY}\ntargets: []\n"),
        "version",
        "unsupported configuration version; expected `v1`",
        1,
    );
    rejects(
        "version: 1\ntargets: []\n",
        "version",
        "expected the string `v1`, found an integer",
    );
    rejects(
        "version: null\ntargets: []\n",
        "version",
        "expected the string `v1`, found null",
    );
}

#[test]
fn targets_is_required_and_non_empty() {
    rejects("version: v1\n", "", "missing required key `targets`");
    rejects_at(
        "version: v1\ntargets: []\n",
        "targets",
        "expected at least one target",
        2,
    );
    rejects(
        "version: v1\ntargets:\n",
        "targets",
        "expected a list of targets, found null",
    );
    rejects(
        "version: v1\ntargets: {name: a}\n",
        "targets",
        "expected a list of targets, found a mapping",
    );
    rejects(
        &format!("version: v1\ntargets: [{CANARY}]\n"),
        "targets[0]",
        "expected a mapping describing a target, found a string",
    );
}

#[test]
fn unknown_root_key_suggests() {
    rejects_at(
        &format!("concurency: 4\n{}", one("http", "")),
        "concurency",
        "unknown key; expected one of version, targets, concurrency, deadline_ms (did you mean `concurrency`?)",
        1,
    );
}

#[test]
fn concurrency_range_and_type() {
    let base = one("http", "");
    for bad in ["0", "257", "-1", NUM_CANARY] {
        rejects(
            &format!("concurrency: {bad}\n{base}"),
            "concurrency",
            "expected an integer from 1 to 256; out of range",
        );
    }
    rejects(
        &format!("concurrency: '4'\n{base}"),
        "concurrency",
        "expected an integer from 1 to 256, found a string",
    );
    rejects(
        &format!("concurrency: 4.0\n{base}"),
        "concurrency",
        "expected an integer from 1 to 256, found a float",
    );
    rejects(
        &format!("concurrency: null\n{base}"),
        "concurrency",
        "expected an integer from 1 to 256, found null",
    );
    assert_eq!(load(&base).concurrency, 16);
    assert_eq!(load(&format!("concurrency: 1\n{base}")).concurrency, 1);
    assert_eq!(load(&format!("concurrency: 256\n{base}")).concurrency, 256);
}

#[test]
fn deadline_ms_bounds_the_run_and_never_exceeds_the_cap() {
    let base = one("http", "");
    for bad in ["0", "60001", "-1", NUM_CANARY] {
        rejects(
            &format!("deadline_ms: {bad}\n{base}"),
            "deadline_ms",
            "expected an integer from 1 to 60000; out of range",
        );
    }
    for (bad, kind) in [("'500'", "a string"), ("0.5", "a float"), ("null", "null")] {
        rejects(
            &format!("deadline_ms: {bad}\n{base}"),
            "deadline_ms",
            &format!("expected an integer from 1 to 60000, found {kind}"),
        );
    }
    assert_eq!(load(&base).deadline, None);
    let set = load(&format!("deadline_ms: 500\n{base}")).deadline;
    assert_eq!(
        set,
        Some(crate::config::RunDeadline {
            ms: 500,
            origin: crate::config::Origin::File,
        })
    );
    assert_eq!(
        set.map(|d| d.bound()),
        Some(crate::contract::Bound::DeadlineMs)
    );
}

#[test]
fn duplicate_keys_are_rejected_at_every_level() {
    rejects_at(
        "version: v1\nversion: v1\ntargets: []\n",
        "version",
        "duplicate key",
        2,
    );
    rejects_at(
        &one("http", &format!("name: {CANARY}")),
        "targets[0].name",
        "duplicate key",
        6,
    );
    rejects_at(
        &one("http", "http:\n  headers:\n    X-A: a\n    X-A: b"),
        "targets[0].http.headers.X-A",
        "duplicate key",
        9,
    );
    rejects_at(
        &one(
            "http",
            "check_timeouts_ms:\n  reachability: 1\n  reachability: 2",
        ),
        "targets[0].check_timeouts_ms.reachability",
        "duplicate key",
        8,
    );
    rejects(
        &one(
            "mcp",
            "mcp:\n  transport: stdio\n  stdio:\n    command: x\n    env: {A: B, A: C}",
        ),
        "targets[0].mcp.stdio.env.A",
        "duplicate key",
    );
    rejects(
        &one(
            "mcp",
            "checks: [functional]\nmcp:\n  functional:\n    tool: t\n    safe: true\n    \
             expect:\n      json: {/a: 1, /a: 2}",
        ),
        "targets[0].mcp.functional.expect.json[\"/a\"]",
        "duplicate key",
    );
}

#[test]
fn non_string_keys_are_rejected() {
    rejects(
        &format!("1: x\n{}", one("http", "")),
        "<key #1>",
        "keys must be strings, found an integer as a key",
    );
    rejects(
        &one("http", "http:\n  headers:\n    true: x"),
        "targets[0].http.headers.<key #1>",
        "keys must be strings, found a boolean as a key",
    );
    rejects(
        &one("http", "? [a]\n: b"),
        "targets[0].<key #4>",
        "keys must be strings, found a list as a key",
    );
}

#[test]
fn merge_keys_are_rejected() {
    let text = "version: v1\nbase: &b {type: http, endpoint: http://x}\ntargets:\n  - <<: *b\n    name: a\n";
    // The unknown root key is found first; without it, the merge key itself is rejected.
    rejects(
        text,
        "base",
        "unknown key; expected one of version, targets, concurrency, deadline_ms",
    );
    let text = "version: v1\ntargets:\n  - &b {name: a, type: http, endpoint: http://x}\n  - <<: *b\n    name: b\n";
    rejects_at(
        text,
        "targets[1][\"<<\"]",
        "merge keys (`<<`) are not supported",
        4,
    );
}

#[test]
fn aliases_are_accepted_as_copies() {
    let text = "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n    http: &h {method: GET, expected_status: [204]}\n  - name: b\n    type: api\n    endpoint: http://y\n    http: *h\n";
    let c = load(text);
    let b = c.nodes[c.roots[1]].http.clone().unwrap();
    assert_eq!(b.method, Some(HttpMethod::Get));
    assert_eq!(b.expected_status, Some(vec![204]));
}

#[test]
fn tagged_values_are_rejected_without_echo() {
    rejects(
        &format!(
            "version: v1\ntargets:\n  - name: !secret {CANARY}\n    type: http\n    endpoint: x\n"
        ),
        "targets[0].name",
        "expected a non-blank string, found a tagged value",
    );
}

#[test]
fn nesting_too_deep_is_rejected() {
    let deep = format!("{}{}", "[".repeat(140), "]".repeat(140));
    rejects(
        &one("http", &format!("checks: {deep}")),
        "targets[…].checks",
        "nesting too deep; at most 128 levels of lists and mappings",
    );
}

/// The forms only YAML 1.1 has are refused where they are, like every scalar JSON lacks.
#[test]
fn yaml_1_1_forms_are_rejected_with_the_key_path() {
    rejects(
        &one("http", "timeout_ms: 0b101"),
        "targets[0].timeout_ms",
        "expected an integer from 1 to 300000, found a YAML 1.1 binary integer (`0b`; write the number in decimal)",
    );
    rejects(
        &one("http", "timeout_ms: !!int 5"),
        "targets[0].timeout_ms",
        "expected an integer from 1 to 300000, found a YAML 1.1 `!!` tag (write the value without it)",
    );
    rejects(
        "version: !!str v1\ntargets:\n  - name: a\n    type: http\n    endpoint: x\n",
        "version",
        "expected the string `v1`, found a YAML 1.1 `!!` tag (write the value without it)",
    );
    rejects(
        &one("http", "http: !!map\n      method: GET"),
        "targets[0].http",
        "expected a mapping of HTTP options, found a YAML 1.1 `!!` tag (write the value without it)",
    );
    // In a string they are text.
    let c = load(&one("http", "id: '0b101'"));
    assert_eq!(c.nodes[0].id.as_deref(), Some("0b101"));
}

#[test]
fn alias_expansion_is_bounded() {
    let mut text = one("http", "");
    text.push_str("x: &a [");
    text.push_str(&"1,".repeat(1000));
    text.push_str("1]\ny: [");
    text.push_str(&"*a,".repeat(1000));
    text.push_str("*a]\n");
    let e = load_str(&text).unwrap_err();
    assert!(e.expected.starts_with("configuration too large"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Target fields

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

// ---------------------------------------------------------------------------------------
// http section

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

// ---------------------------------------------------------------------------------------
// mcp section (upstream-mcp.md §2 and §17 M)

#[test]
fn mcp_valid_forms_93_to_99() {
    // 93
    let m = root(&one("mcp", "mcp: {}")).mcp.unwrap();
    assert_eq!(m.transport, McpTransport::Http);
    assert!(m.functional.is_none() && m.stdio.is_none() && m.oauth.is_none());
    // 94
    let m = root(&one(
        "mcp",
        "mcp:\n  protocol_version: 2025-06-18\n  required_tools: [search]",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(m.required_tools, vec!["search"]);
    // 95
    let t = root(&one(
        "mcp",
        "checks: [functional]\nmcp:\n  functional: {tool: search, safe: true, arguments_json: '{\"query\":\"health\"}'}",
    ));
    let f = t.mcp.unwrap().functional.unwrap();
    assert_eq!((f.tool.as_str(), f.safe), ("search", true));
    assert_eq!(f.arguments_json, "{\"query\":\"health\"}");
    // 96
    let m = root(&one("mcp", "mcp: {protocol_version: '2026-07-28'}"))
        .mcp
        .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
    // 97
    let m = root(&one(
        "mcp",
        "mcp:\n  transport: stdio\n  stdio:\n    command: npx\n    args: [-y, server]\n    env: {API_KEY: HOST_API_KEY}",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.transport, McpTransport::Stdio);
    let s = m.stdio.unwrap();
    assert_eq!(s.command, "npx");
    assert_eq!(s.args, vec!["-y", "server"]);
    assert_eq!(
        s.env,
        vec![("API_KEY".to_string(), "HOST_API_KEY".to_string())]
    );
    assert_eq!(s.directory, None);
    // 98
    let o = root(&one(
        "mcp",
        "mcp:\n  oauth: {issuer: 'https://a', client_id: c, grant: client_credentials, client_secret_env: SECRET}",
    ))
    .mcp
    .unwrap()
    .oauth
    .unwrap();
    assert_eq!(o.grant, OAuthGrant::ClientCredentials);
    assert_eq!(o.client_secret_env.as_deref(), Some("SECRET"));
    // 99
    let o = root(&one(
        "mcp",
        "mcp:\n  oauth: {issuer: 'https://a', client_id: c, grant: authorization_code, token_file: /t.json}",
    ))
    .mcp
    .unwrap()
    .oauth
    .unwrap();
    assert_eq!(o.grant, OAuthGrant::AuthorizationCode);
    assert_eq!(o.token_file.as_deref(), Some("/t.json"));
}

#[test]
fn mcp_protocol_version_any_non_blank_string() {
    // 101 in upstream is a load failure; the spec makes an unknown revision a MISCONFIGURED
    // result at run time, so it loads here.
    let m = root(&one("mcp", "mcp: {protocol_version: '2024-11-05'}"))
        .mcp
        .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2024-11-05"));
    rejects(
        &one("mcp", "mcp: {protocol_version: ' '}"),
        "targets[0].mcp.protocol_version",
        "expected a protocol revision such as `2025-11-25`, found a blank string",
    );
    rejects(
        &one("mcp", "mcp: {protocol_version: 2025}"),
        "targets[0].mcp.protocol_version",
        "expected a protocol revision such as `2025-11-25`, found an integer",
    );
}

#[test]
fn mcp_rejections_100_to_120() {
    // 100
    rejects(
        &one("mcp", "mcp: null"),
        "targets[0].mcp",
        "expected a mapping of MCP options, found null",
    );
    // 102
    rejects(
        &one("mcp", "mcp: {required_tools: [search, search]}"),
        "targets[0].mcp.required_tools[1]",
        "duplicate tool name",
    );
    // 103
    rejects(
        &one("mcp", "mcp: {required_resources: [' ']}"),
        "targets[0].mcp.required_resources[0]",
        "expected a non-blank resource URI, found a blank string",
    );
    rejects(
        &one("mcp", "mcp: {required_prompts: [a, '']}"),
        "targets[0].mcp.required_prompts[1]",
        "expected a non-blank prompt name, found a blank string",
    );
    // 104
    rejects_at(
        &one(
            "mcp",
            "checks: [reachability]\nmcp:\n  required_tools: [search]",
        ),
        "targets[0].mcp.required_tools",
        "requires `capability` in the explicit `checks`",
        8,
    );
    // 105
    rejects_at(
        &one("mcp", "checks: [reachability, functional]\nmcp: {}"),
        "targets[0].checks[1]",
        "`functional` on an mcp target requires `mcp.functional`",
        6,
    );
    rejects(
        &one("mcp", "checks: [functional]"),
        "targets[0].checks[0]",
        "`functional` on an mcp target requires `mcp.functional`",
    );
    // 106
    rejects_at(
        &one("mcp", "mcp:\n  functional: {tool: search, safe: true}"),
        "targets[0].mcp.functional",
        "requires `functional` listed explicitly in `checks`",
        7,
    );
    rejects(
        &one(
            "mcp",
            "checks: [protocol]\nmcp:\n  functional: {tool: search, safe: true}",
        ),
        "targets[0].mcp.functional",
        "requires `functional` listed explicitly in `checks`",
    );
    // 107
    rejects(
        &one(
            "mcp",
            "checks: [functional]\nmcp:\n  functional: {tool: search, safe: false}",
        ),
        "targets[0].mcp.functional.safe",
        "expected `true`; a functional call runs only when declared safe",
    );
    // 108
    for bad in ["'null'", "'[1]'", "'5'", "'\"s\"'", "'{'", "'{} x'"] {
        rejects(
            &one(
                "mcp",
                &format!(
                    "checks: [functional]\nmcp:\n  functional: {{tool: s, safe: true, arguments_json: {bad}}}"
                ),
            ),
            "targets[0].mcp.functional.arguments_json",
            "expected a string holding a JSON object",
        );
    }
    // 109
    rejects(
        &one("mcp", "mcp: {required_tools: [123]}"),
        "targets[0].mcp.required_tools[0]",
        "expected a non-blank tool name, found an integer",
    );
    // 110
    rejects(
        &one("mcp", "mcp: {required_tool: [a]}"),
        "targets[0].mcp.required_tool",
        "unknown key; expected one of transport, protocol_version, required_tools, \
         required_resources, required_prompts, functional, stdio, oauth (did you mean \
         `required_tools`?)",
    );
    // 111
    rejects(
        &one("http", "mcp: {}"),
        "targets[0].mcp",
        "`mcp` options are only allowed on mcp targets",
    );
    // 112
    rejects_at(
        &one("mcp", "mcp:\n  transport: stdio"),
        "targets[0].mcp.transport",
        "the stdio transport requires an `mcp.stdio` block with a command",
        7,
    );
    // 113
    rejects(
        &one("mcp", "mcp:\n  stdio: {command: x}"),
        "targets[0].mcp.stdio",
        "requires `transport: stdio`",
    );
    rejects(
        &one("mcp", "mcp:\n  transport: http\n  stdio: {command: x}"),
        "targets[0].mcp.stdio",
        "requires `transport: stdio`",
    );
    // 114
    rejects(
        &one(
            "mcp",
            "mcp:\n  transport: stdio\n  stdio: {command: x, args: [1]}",
        ),
        "targets[0].mcp.stdio.args[0]",
        "expected a string, found an integer",
    );
    // 115
    rejects(
        &one(
            "mcp",
            "mcp:\n  transport: stdio\n  stdio: {command: x, env: {A: 1}}",
        ),
        "targets[0].mcp.stdio.env.A",
        "expected the name of an environment variable, found an integer",
    );
    // 116
    rejects(
        &one(
            "mcp",
            "mcp:\n  oauth: {issuer: i, client_id: c, grant: client_credentials}",
        ),
        "targets[0].mcp.oauth.grant",
        "grant `client_credentials` requires `client_secret_env`",
    );
    // 117
    rejects(
        &one(
            "mcp",
            "mcp:\n  oauth: {issuer: i, client_id: c, grant: authorization_code}",
        ),
        "targets[0].mcp.oauth.grant",
        "grant `authorization_code` requires `token_file`",
    );
    // 118
    rejects(
        &one(
            "mcp",
            "mcp:\n  oauth: {issuer: i, client_id: c, grant: client_credentials, client_secret_env: S, redirect_port: 65536}",
        ),
        "targets[0].mcp.oauth.redirect_port",
        "expected an integer from 0 to 65535; out of range",
    );
    // 119
    rejects(
        &one("mcp", "mcp:\n  oauth: null"),
        "targets[0].mcp.oauth",
        "expected a mapping of OAuth settings, found null",
    );
    // 120
    rejects_at(
        &one(
            "mcp",
            "auth: {bearer_env: T}\nmcp:\n  oauth: {issuer: i, client_id: c, grant: client_credentials, client_secret_env: S}",
        ),
        "targets[0].auth",
        "cannot be combined with `mcp.oauth`",
        6,
    );
}

#[test]
fn mcp_transport_values() {
    rejects(
        &one("mcp", &format!("mcp: {{transport: {CANARY}}}")),
        "targets[0].mcp.transport",
        "expected `http` or `stdio`",
    );
    rejects(
        &one("mcp", "mcp: {transport: null}"),
        "targets[0].mcp.transport",
        "expected `http` or `stdio`, found null",
    );
    assert_eq!(
        root(&one("mcp", "mcp: {transport: ''}"))
            .mcp
            .unwrap()
            .transport,
        McpTransport::Http
    );
}

#[test]
fn mcp_requirements_shapes() {
    rejects(
        &one("mcp", "mcp: {required_tools: search}"),
        "targets[0].mcp.required_tools",
        "expected a list of tool names, found a string",
    );
    // Empty lists are no requirement, so explicit checks need not include capability.
    root(&one(
        "mcp",
        "checks: [reachability]\nmcp: {required_tools: []}",
    ));
    let m = root(&one(
        "mcp",
        "checks: [capability]\nmcp: {required_resources: ['file:///a'], required_prompts: [p]}",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.required_resources, vec!["file:///a"]);
    assert_eq!(m.required_prompts, vec!["p"]);
}

#[test]
fn mcp_stdio_rules() {
    let pre = "mcp:\n  transport: stdio\n  stdio:";
    rejects(
        &one("mcp", &format!("{pre} {{args: [a]}}")),
        "targets[0].mcp.stdio",
        "missing required key `command`",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: '  '}}")),
        "targets[0].mcp.stdio.command",
        "expected a non-blank command, found a blank string",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: \"x\\0y\"}}")),
        "targets[0].mcp.stdio.command",
        "expected a non-blank command; NUL is not allowed",
    );
    rejects(
        &one(
            "mcp",
            &format!("{pre} {{command: x, args: [a, \"{CANARY}\\0\"]}}"),
        ),
        "targets[0].mcp.stdio.args[1]",
        "expected a string; NUL is not allowed",
    );
    rejects(
        &one(
            "mcp",
            &format!("{pre} {{command: x, directory: \"/a\\0\"}}"),
        ),
        "targets[0].mcp.stdio.directory",
        "expected a directory path; NUL is not allowed",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: x, env: {{'A=B': C}}}}")),
        "targets[0].mcp.stdio.env[\"A=B\"]",
        "expected the name of an environment variable (not blank, no `=` or NUL)",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: x, env: {{' ': C}}}}")),
        "targets[0].mcp.stdio.env.<key #1>",
        "expected the name of an environment variable (not blank, no `=` or NUL)",
    );
    rejects(
        &one(
            "mcp",
            &format!("{pre} {{command: x, env: {{A: '{CANARY}=1'}}}}"),
        ),
        "targets[0].mcp.stdio.env.A",
        "expected the name of an environment variable; `=` and NUL are not allowed",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: x, env: {{A: ''}}}}")),
        "targets[0].mcp.stdio.env.A",
        "expected the name of an environment variable, found a blank string",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: x, env: {{A: null}}}}")),
        "targets[0].mcp.stdio.env.A",
        "expected the name of an environment variable, found null",
    );
    rejects(
        &one("mcp", &format!("{pre} null")),
        "targets[0].mcp.stdio",
        "expected a mapping with `command`, found null",
    );
    rejects(
        &one("mcp", &format!("{pre} {{command: x, cwd: /}}")),
        "targets[0].mcp.stdio.cwd",
        "unknown key; expected one of command, args, directory, env",
    );
    rejects_at(
        &one(
            "mcp",
            &format!("auth: {{bearer_env: T}}\n{pre} {{command: x}}"),
        ),
        "targets[0].auth",
        "cannot be used with the stdio transport; pass credentials with `mcp.stdio.env`",
        6,
    );
    rejects(
        &one(
            "mcp",
            &format!(
                "{pre} {{command: x}}\n  oauth: {{issuer: i, client_id: c, grant: client_credentials, client_secret_env: S}}"
            ),
        ),
        "targets[0].mcp.oauth",
        "cannot be used with the stdio transport",
    );
    let s = root(&one(
        "mcp",
        &format!("{pre} {{command: x, directory: '', args: []}}"),
    ))
    .mcp
    .unwrap()
    .stdio
    .unwrap();
    assert_eq!(s.directory, None);
    assert!(s.args.is_empty());
}

#[test]
fn mcp_oauth_rules() {
    let o = |body: &str| one("mcp", &format!("mcp:\n  oauth: {{{body}}}"));
    rejects(
        &o("client_id: c, grant: client_credentials, client_secret_env: S"),
        "targets[0].mcp.oauth",
        "missing required key `issuer`",
    );
    rejects(
        &o("issuer: ' ', client_id: c, grant: client_credentials, client_secret_env: S"),
        "targets[0].mcp.oauth.issuer",
        "expected a non-blank issuer URL, found a blank string",
    );
    rejects(
        &o("issuer: i, grant: client_credentials, client_secret_env: S"),
        "targets[0].mcp.oauth",
        "missing required key `client_id`",
    );
    rejects(
        &o("issuer: i, client_id: '', grant: client_credentials, client_secret_env: S"),
        "targets[0].mcp.oauth.client_id",
        "expected a non-blank client id, found a blank string",
    );
    rejects(
        &o("issuer: i, client_id: c"),
        "targets[0].mcp.oauth",
        "missing required key `grant`",
    );
    rejects(
        &o(&format!("issuer: i, client_id: c, grant: {CANARY}")),
        "targets[0].mcp.oauth.grant",
        "unknown grant; expected one of client_credentials, refresh_token, authorization_code",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: refresh_tokn"),
        "targets[0].mcp.oauth.grant",
        "unknown grant; expected one of client_credentials, refresh_token, authorization_code \
         (did you mean `refresh_token`?)",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: refresh_token"),
        "targets[0].mcp.oauth.grant",
        "grant `refresh_token` requires `refresh_token_env` or `token_file`",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: client_credentials, client_secret_env: 'A=B'"),
        "targets[0].mcp.oauth.client_secret_env",
        "expected the name of an environment variable; `=` and NUL are not allowed",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: client_credentials, client_secret_env: ''"),
        "targets[0].mcp.oauth.client_secret_env",
        "expected the name of an environment variable, found a blank string",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: refresh_token, refresh_token_env: ' '"),
        "targets[0].mcp.oauth.refresh_token_env",
        "expected the name of an environment variable, found a blank string",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: authorization_code, token_file: ' '"),
        "targets[0].mcp.oauth.token_file",
        "expected a non-blank file path, found a blank string",
    );
    rejects(
        &o("issuer: i, client_id: c, grant: authorization_code, token_file: \"/a\\0\""),
        "targets[0].mcp.oauth.token_file",
        "expected a non-blank file path; NUL is not allowed",
    );
    let cc = "issuer: i, client_id: c, grant: client_credentials, client_secret_env: S";
    let ac = "issuer: i, client_id: c, grant: authorization_code, token_file: /t";
    for bad in ["-1", "65536"] {
        rejects(
            &o(&format!("{ac}, redirect_port: {bad}")),
            "targets[0].mcp.oauth.redirect_port",
            "expected an integer from 0 to 65535; out of range",
        );
    }
    rejects(
        &o(&format!("{ac}, redirect_port: '8080'")),
        "targets[0].mcp.oauth.redirect_port",
        "expected an integer from 0 to 65535, found a string",
    );
    let scope_msg = "expected a scope of printable ASCII without spaces, `\"` or `\\`";
    for bad in ["'a b'", "''", "'a\"b'", "'a\\b'", "'é'"] {
        rejects(
            &o(&format!("{cc}, scopes: [ok, {bad}]")),
            "targets[0].mcp.oauth.scopes[1]",
            scope_msg,
        );
    }
    rejects(
        &o(&format!("{cc}, scopes: [a, a]")),
        "targets[0].mcp.oauth.scopes[1]",
        "duplicate scope",
    );
    rejects(
        &o(&format!("{cc}, scopes: [1]")),
        "targets[0].mcp.oauth.scopes[0]",
        "expected a scope, found an integer",
    );
    rejects(
        &o(&format!("{cc}, client_secret: {CANARY}")),
        "targets[0].mcp.oauth.client_secret",
        "unknown key; expected one of issuer, client_id, grant, client_secret_env, \
         refresh_token_env, token_file, scopes, redirect_port (did you mean `client_secret_env`?)",
    );
    let r = root(&o(
        "issuer: i, client_id: c, grant: refresh_token, token_file: /t",
    ))
    .mcp
    .unwrap()
    .oauth
    .unwrap();
    assert_eq!(
        (r.grant, r.token_file.as_deref()),
        (OAuthGrant::RefreshToken, Some("/t"))
    );
    let r = root(&o(&format!("{ac}, scopes: ['a:b', c], redirect_port: 0")))
        .mcp
        .unwrap()
        .oauth
        .unwrap();
    assert_eq!(r.scopes, vec!["a:b", "c"]);
    assert_eq!(r.redirect_port, Some(0));
    // A refresh token for a grant that never refreshes is refused by name.
    let e = load_str(&o(&format!("{cc}, refresh_token_env: R"))).err();
    let e = e.unwrap_or_else(|| panic!("refused"));
    assert_eq!(e.path, "targets[0].mcp.oauth.refresh_token_env");
    assert!(
        e.expected
            .starts_with("not used by grant `client_credentials`")
    );
    // Accepted as the Go reference accepts them.
    assert!(load_str(&o(&format!("{cc}, redirect_port: 8765"))).is_ok());
    assert!(load_str(&o(&format!("{ac}, refresh_token_env: R"))).is_ok());
}

#[test]
fn mcp_functional_rules() {
    let f = |body: &str| {
        one(
            "mcp",
            &format!("checks: [functional]\nmcp:\n  functional: {body}"),
        )
    };
    rejects(
        &f("null"),
        "targets[0].mcp.functional",
        "expected a mapping with `tool` and `safe: true`, found null",
    );
    rejects(
        &f("{safe: true}"),
        "targets[0].mcp.functional",
        "missing required key `tool`",
    );
    rejects(
        &f("{tool: ' ', safe: true}"),
        "targets[0].mcp.functional.tool",
        "expected a non-blank tool name, found a blank string",
    );
    rejects(
        &f("{tool: t}"),
        "targets[0].mcp.functional",
        "missing required key `safe`; a functional call must be declared `safe: true`",
    );
    rejects(
        &f("{tool: t, safe: 'true'}"),
        "targets[0].mcp.functional.safe",
        "expected `true` or `false`, found a string",
    );
    rejects(
        &f("{tool: t, safe: yes}"),
        "targets[0].mcp.functional.safe",
        "expected `true` or `false`, found a string",
    );
    rejects(
        &f("{tool: t, safe: 1}"),
        "targets[0].mcp.functional.safe",
        "expected `true` or `false`, found an integer",
    );
    rejects(
        &f("{tool: t, safe: true, arguments_json: {a: 1}}"),
        "targets[0].mcp.functional.arguments_json",
        "expected a string holding a JSON object, found a mapping",
    );
    rejects(
        &f(&format!(
            "{{tool: t, safe: true, arguments_json: '{{\"k\": {CANARY}}}'}}"
        )),
        "targets[0].mcp.functional.arguments_json",
        "expected a string holding a JSON object",
    );
    let big = format!("{{\"a\": \"{}\"}}", "x".repeat(65_536));
    rejects(
        &f(&format!("{{tool: t, safe: true, arguments_json: '{big}'}}")),
        "targets[0].mcp.functional.arguments_json",
        "expected a JSON object of at most 65536 bytes",
    );
    rejects(
        &f(&format!(
            "{{tool: t, safe: true, argument_json: '{{}}', token: {CANARY}}}"
        )),
        "targets[0].mcp.functional.argument_json",
        "unknown key; expected one of tool, safe, arguments_json, expect (did you mean \
         `arguments_json`?)",
    );
    // Defaults and exactness.
    let func = root(&f("{tool: t, safe: true}"))
        .mcp
        .unwrap()
        .functional
        .unwrap();
    assert_eq!(func.arguments_json, "{}");
    let exact = "{ \"n\": 123456789012345678901234567890, \"s\": \"a\\u00e9\" }";
    let func = root(&f(&format!(
        "{{tool: t, safe: true, arguments_json: '{exact}'}}"
    )))
    .mcp
    .unwrap()
    .functional
    .unwrap();
    assert_eq!(func.arguments_json, exact);
    let max = format!("{{\"a\": \"{}\"}}", "x".repeat(65_536 - 9));
    assert_eq!(max.len(), 65_536);
    root(&f(&format!(
        "{{tool: t, safe: true, arguments_json: '{max}'}}"
    )));
}

#[test]
fn mcp_functional_expect() {
    let e = |body: &str| {
        one(
            "mcp",
            &format!(
                "checks: [functional]\nmcp:\n  functional:\n    tool: t\n    safe: true\n    expect: {body}"
            ),
        )
    };
    let expect = |body: &str| root(&e(body)).mcp.unwrap().functional.unwrap().expect;
    let x = expect(
        "{json: {/a: 1, /b: [x, 2.5, true], '': {k: ~}, /c~1d~0: null, /big: 18446744073709551615}, \
         text_contains: ok, fresh_within_s: {/t: 60, /u: 0.5}}",
    );
    assert_eq!(
        x.json,
        vec![
            ("/a".to_string(), serde_json::json!(1)),
            ("/b".to_string(), serde_json::json!(["x", 2.5, true])),
            (String::new(), serde_json::json!({"k": null})),
            ("/c~1d~0".to_string(), serde_json::Value::Null),
            (
                "/big".to_string(),
                serde_json::json!(18_446_744_073_709_551_615u64)
            ),
        ]
    );
    assert_eq!(x.text_contains.as_deref(), Some("ok"));
    assert_eq!(
        x.fresh_within_s,
        vec![("/t".to_string(), 60.0), ("/u".to_string(), 0.5)]
    );
    assert_eq!(expect("{}").json, vec![]);

    let ptr = "expected a JSON Pointer: empty or starting with `/`, `~` only as `~0` or `~1`";
    rejects(
        &e("{json: {a/b: 1}}"),
        "targets[0].mcp.functional.expect.json[\"a/b\"]",
        ptr,
    );
    rejects(
        &e("{json: {/a~2: 1}}"),
        "targets[0].mcp.functional.expect.json[\"/a~2\"]",
        ptr,
    );
    rejects(
        &e("{fresh_within_s: {/a~: 1}}"),
        "targets[0].mcp.functional.expect.fresh_within_s[\"/a~\"]",
        ptr,
    );
    rejects(
        &e("{json: {/a: !tag x}}"),
        "targets[0].mcp.functional.expect.json[\"/a\"]",
        "expected a JSON value, found a tagged value",
    );
    rejects(
        &e("{json: {/a: .inf}}"),
        "targets[0].mcp.functional.expect.json[\"/a\"]",
        "expected a finite number",
    );
    rejects(
        &e("{json: {/a: 99999999999999999999999}}"),
        "targets[0].mcp.functional.expect.json[\"/a\"]",
        "expected an integer within the 64-bit range",
    );
    rejects(
        &e("{json: {/a: {1: x}}}"),
        "targets[0].mcp.functional.expect.json[\"/a\"].<key #1>",
        "keys must be strings, found an integer as a key",
    );
    rejects(
        &e("{json: {/a: {k: 1, k: 2}}}"),
        "targets[0].mcp.functional.expect.json[\"/a\"].k",
        "duplicate key",
    );
    rejects(
        &e("{json: null}"),
        "targets[0].mcp.functional.expect.json",
        "expected a mapping of JSON Pointer to expected value, found null",
    );
    rejects(
        &e("{text_contains: ''}"),
        "targets[0].mcp.functional.expect.text_contains",
        "expected a non-empty string",
    );
    rejects(
        &e("{text_contains: 5}"),
        "targets[0].mcp.functional.expect.text_contains",
        "expected a non-empty string, found an integer",
    );
    for bad in ["0", "-1", "0.0"] {
        rejects(
            &e(&format!("{{fresh_within_s: {{/t: {bad}}}}}")),
            "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
            "expected a number of seconds greater than 0",
        );
    }
    rejects(
        &e("{fresh_within_s: {/t: '60'}}"),
        "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
        "expected a number of seconds greater than 0, found a string",
    );
    rejects(
        &e("{fresh_within_s: {/t: .nan}}"),
        "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
        "expected a number of seconds greater than 0; found a non-finite number",
    );
    rejects(
        &e(&format!("{{json_equals: {CANARY}}}")),
        "targets[0].mcp.functional.expect.json_equals",
        "unknown key; expected one of json, text_contains, fresh_within_s",
    );
    rejects(
        &e("null"),
        "targets[0].mcp.functional.expect",
        "expected a mapping of expectations, found null",
    );
}

// ---------------------------------------------------------------------------------------
// Dependencies and the graph

/// A document with the given targets, each written as a flow mapping on its own line.
fn graph(targets: &[&str]) -> String {
    let mut s = String::from("version: v1\ntargets:\n");
    for t in targets {
        s.push_str("  - ");
        s.push_str(t);
        s.push('\n');
    }
    s
}

#[test]
fn inline_and_ref_dependencies_build_the_arena() {
    let text = "version: v1\ntargets:\n  - name: api\n    id: api\n    type: http\n    endpoint: http://a\n    dependencies:\n      - ref: db\n        critical: false\n        relationship: supporting\n      - name: cache\n        type: database\n        endpoint: redis://c\n        relationship: downstream\n        dependencies:\n          - ref: db\n  - name: db\n    id: db\n    type: database\n    endpoint: postgres://d\n";
    let c = load(text);
    assert_eq!(c.nodes.len(), 3);
    assert_eq!(c.roots.len(), 2);
    let api = &c.nodes[c.roots[0]];
    let db_id = c.roots[1];
    assert_eq!(api.path, "targets[0]");
    assert_eq!(c.nodes[db_id].path, "targets[1]");
    assert_eq!(api.dependencies.len(), 2);
    let e0 = &api.dependencies[0];
    assert_eq!(
        (e0.node, e0.critical, e0.relationship),
        (db_id, false, Some(Relationship::Supporting))
    );
    let e1 = &api.dependencies[1];
    assert!(e1.critical, "critical defaults to true");
    assert_eq!(e1.relationship, Some(Relationship::Downstream));
    let cache = &c.nodes[e1.node];
    assert_eq!(cache.name, "cache");
    assert_eq!(cache.path, "targets[0].dependencies[1]");
    assert_eq!(cache.dependencies[0].node, db_id);
    assert_eq!(cache.dependencies[0].relationship, None);
    assert!(cache.dependencies[0].critical);
}

#[test]
fn refs_resolve_to_inline_declarations_anywhere() {
    let c = load(&graph(&[
        "{name: a, type: http, endpoint: x, dependencies: [{name: s, id: shared, type: http, endpoint: y}]}",
        "{name: b, type: http, endpoint: x, dependencies: [{ref: shared, relationship: path}]}",
    ]));
    let a = &c.nodes[c.roots[0]];
    let b = &c.nodes[c.roots[1]];
    assert_eq!(a.dependencies[0].node, b.dependencies[0].node);
    assert_eq!(
        c.nodes[b.dependencies[0].node].path,
        "targets[0].dependencies[0]"
    );
    for r in Relationship::ALL {
        load(&graph(&[
            &format!(
                "{{name: a, type: http, endpoint: x, dependencies: [{{ref: b, relationship: {}}}]}}",
                r.as_str()
            ),
            "{name: b, id: b, type: http, endpoint: x}",
        ]));
    }
}

#[test]
fn duplicate_id_is_rejected() {
    rejects_at(
        &graph(&[
            "{name: a, id: x, type: http, endpoint: e}",
            "{name: b, id: x, type: http, endpoint: e}",
        ]),
        "targets[1].id",
        "duplicate id; already declared at targets[0].id",
        4,
    );
    rejects(
        &graph(&[
            "{name: a, id: x, type: http, endpoint: e, dependencies: [{name: c, id: x, type: http, endpoint: e}]}",
        ]),
        "targets[0].dependencies[0].id",
        "duplicate id; already declared at targets[0].id",
    );
}

#[test]
fn dangling_ref_is_rejected() {
    rejects_at(
        &graph(&[
            "{name: a, id: search, type: http, endpoint: e}",
            "{name: b, type: http, endpoint: e, dependencies: [{ref: serch}]}",
        ]),
        "targets[1].dependencies[0].ref",
        "no target declares this id (did you mean `search`?)",
        4,
    );
    rejects(
        &graph(&[&format!(
            "{{name: b, type: http, endpoint: e, dependencies: [{{ref: {CANARY}}}]}}"
        )]),
        "targets[0].dependencies[0].ref",
        "no target declares this id",
    );
    rejects(
        &graph(&["{name: b, type: http, endpoint: e, dependencies: [{ref: 5}]}"]),
        "targets[0].dependencies[0].ref",
        "expected the id of a target, found an integer",
    );
}

#[test]
fn self_reference_is_rejected() {
    rejects(
        &graph(&["{name: a, id: a, type: http, endpoint: e, dependencies: [{ref: a}]}"]),
        "targets[0].dependencies[0].ref",
        "a target cannot depend on itself",
    );
}

#[test]
fn ref_entry_with_other_keys_is_rejected() {
    rejects_at(
        &graph(&[
            "{name: a, id: a, type: http, endpoint: e}",
            &format!(
                "{{name: b, type: http, endpoint: e, dependencies: [{{ref: a, endpoint: {CANARY}}}]}}"
            ),
        ]),
        "targets[1].dependencies[0].endpoint",
        "not allowed in a `ref` entry; expected only ref, critical, relationship",
        4,
    );
}

#[test]
fn relationship_and_critical_are_checked() {
    let two = |dep: &str| {
        graph(&[
            "{name: a, id: a, type: http, endpoint: e}",
            &format!("{{name: b, type: http, endpoint: e, dependencies: [{dep}]}}"),
        ])
    };
    rejects(
        &two(&format!("{{ref: a, relationship: {CANARY}}}")),
        "targets[1].dependencies[0].relationship",
        "unknown relationship; expected one of supporting, downstream, path, gateway, router",
    );
    rejects(
        &two("{ref: a, relationship: secret}"),
        "targets[1].dependencies[0].relationship",
        "unknown relationship; expected one of supporting, downstream, path, gateway, router",
    );
    rejects(
        &two("{ref: a, relationship: downsteam}"),
        "targets[1].dependencies[0].relationship",
        "unknown relationship; expected one of supporting, downstream, path, gateway, router \
         (did you mean `downstream`?)",
    );
    rejects(
        &two("{ref: a, critical: yes}"),
        "targets[1].dependencies[0].critical",
        "expected `true` or `false`, found a string",
    );
    rejects(
        &two("{name: c, type: http, endpoint: e, critical: null}"),
        "targets[1].dependencies[0].critical",
        "expected `true` or `false`, found null",
    );
    rejects(
        &two("{name: c, type: http, endpoint: e, criticl: false}"),
        "targets[1].dependencies[0].criticl",
        "unknown key; expected one of name, type, endpoint, id, checks, thresholds, timeout_ms, \
         check_timeouts_ms, retries, retry_delay_ms, budget_ms, auth, dependencies, http, mcp, \
         critical, relationship (did you mean `critical`?)",
    );
    rejects(
        &two("a"),
        "targets[1].dependencies[0]",
        "expected a mapping describing a dependency (a target or a `ref`), found a string",
    );
    rejects(
        &graph(&["{name: b, type: http, endpoint: e, dependencies: null}"]),
        "targets[0].dependencies",
        "expected a list of dependency entries, found null",
    );
    let c = load(&two("{name: c, type: http, endpoint: e, critical: false}"));
    assert!(!c.nodes[c.roots[1]].dependencies[0].critical);
}

#[test]
fn inline_dependency_fields_are_strict_too() {
    rejects(
        &graph(&[
            "{name: b, type: http, endpoint: e, dependencies: [{name: c, type: http, endpoint: e, timeout_ms: 0}]}",
        ]),
        "targets[0].dependencies[0].timeout_ms",
        "expected an integer from 1 to 300000; out of range",
    );
    rejects(
        &graph(&["{name: b, type: http, endpoint: e, dependencies: [{type: http, endpoint: e}]}"]),
        "targets[0].dependencies[0]",
        "missing required key `name`",
    );
    // Nothing is inherited.
    let c = load(&graph(&[
        "{name: b, type: http, endpoint: e, timeout_ms: 9, checks: [], auth: {bearer_env: T}, dependencies: [{name: c, type: http, endpoint: e}]}",
    ]));
    let child = &c.nodes[c.nodes[c.roots[0]].dependencies[0].node];
    assert_eq!(
        (child.timeout_ms, &child.checks, &child.bearer_env),
        (5000, &None, &None)
    );
}

#[test]
fn cycles_are_named() {
    rejects_at(
        &graph(&[
            "{name: A, id: a, type: http, endpoint: e, dependencies: [{ref: b}]}",
            "{name: B, id: b, type: http, endpoint: e, dependencies: [{ref: a}]}",
        ]),
        "targets[1].dependencies[0].ref",
        "cycle: a → b → a",
        4,
    );
    rejects(
        &graph(&[
            "{name: A, id: a, type: http, endpoint: e, dependencies: [{name: anon, type: http, endpoint: e, dependencies: [{ref: c}]}]}",
            "{name: C, id: c, type: http, endpoint: e, dependencies: [{ref: a}]}",
        ]),
        "targets[1].dependencies[0].ref",
        "cycle: a → targets[0].dependencies[0] → c → a",
    );
    // A cycle closed by an inline edge (the inline child was reached through a reference).
    rejects(
        &graph(&[
            "{name: R, type: http, endpoint: e, dependencies: [{ref: b}]}",
            "{name: A, id: a, type: http, endpoint: e, dependencies: [{name: B, id: b, type: http, endpoint: e, dependencies: [{ref: a}]}]}",
        ]),
        "targets[1].dependencies[0]",
        "cycle: b → a → b",
    );
}

/// `n` nodes `n0 … n{n-1}`, each depending on the next through a reference.
fn chain(n: usize) -> String {
    let mut targets = Vec::new();
    for i in 0..n {
        let deps = if i + 1 < n {
            format!(", dependencies: [{{ref: n{}}}]", i + 1)
        } else {
            String::new()
        };
        targets.push(format!(
            "{{name: n{i}, id: n{i}, type: http, endpoint: e{deps}}}"
        ));
    }
    graph(&targets.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn depth_is_bounded_at_64() {
    // 65 nodes: 64 edges from n0 to n64.
    load(&chain(65));
    rejects_at(
        &chain(66),
        "targets[0]",
        "dependencies nest deeper than 64 levels (counting shared nodes once per reference)",
        3,
    );
}

#[test]
fn projections_are_bounded() {
    // 14 levels, two refs per level: 2^15 - 1 projections from the top.
    let mut targets = Vec::new();
    for i in 0..14 {
        targets.push(format!(
            "{{name: l{i}, id: l{i}, type: http, endpoint: e, dependencies: [{{ref: l{j}}}, {{ref: l{j}, critical: false}}]}}",
            j = i + 1
        ));
    }
    targets.push("{name: l14, id: l14, type: http, endpoint: e}".to_string());
    let text = graph(&targets.iter().map(String::as_str).collect::<Vec<_>>());
    rejects(
        &text,
        "targets[0]",
        "the dependency graph expands to more than 10000 results (each reference to a shared \
         node counts)",
    );
    // 12 levels: 2^13 - 1 = 8191 from the top, but every level is also a root: the sum
    // 2^14 - 14 exceeds the bound at a later root.
    let mut targets = Vec::new();
    for i in 0..12 {
        targets.push(format!(
            "{{name: l{i}, id: l{i}, type: http, endpoint: e, dependencies: [{{ref: l{j}}}, {{ref: l{j}}}]}}",
            j = i + 1
        ));
    }
    targets.push("{name: l12, id: l12, type: http, endpoint: e}".to_string());
    let text = graph(&targets.iter().map(String::as_str).collect::<Vec<_>>());
    rejects(
        &text,
        "targets[1]",
        "the dependency graph expands to more than 10000 results (each reference to a shared \
         node counts)",
    );
    // 10,000 exactly is fine: one root with 9,999 references to one leaf.
    let deps = vec!["{ref: leaf}"; 9_998].join(", ");
    let text = format!(
        "version: v1\ntargets:\n  - {{name: r, type: http, endpoint: e, dependencies: [{deps}]}}\n  - {{name: leaf, id: leaf, type: http, endpoint: e}}\n"
    );
    load(&text);
}

#[test]
fn long_reference_chains_do_not_overflow() {
    // Deeper than the bound, but the walk must finish and report it rather than crash.
    let text = chain(5_000);
    rejects(
        &text,
        "targets[0]",
        "dependencies nest deeper than 64 levels (counting shared nodes once per reference)",
    );
}

// ---------------------------------------------------------------------------------------
// Whole files

#[test]
fn every_field_fixture_loads() {
    let c = load(include_str!("../../tests/config/every-field.yaml"));
    assert_eq!(c.concurrency, 256);
    assert_eq!(c.roots.len(), 5);
    assert_eq!(c.nodes.len(), 7);
    let service = &c.nodes[c.roots[0]];
    assert_eq!(service.id.as_deref(), Some("service"));
    assert_eq!(service.latency_threshold_ms, Some(250.5));
    assert_eq!(service.bearer_env.as_deref(), Some("SERVICE_TOKEN"));
    assert_eq!(service.dependencies.len(), 3);
    let search = &c.nodes[service.dependencies[0].node];
    assert_eq!(search.name, "Search MCP");
    let m = search.mcp.as_ref().unwrap();
    let f = m.functional.as_ref().unwrap();
    assert!(f.arguments_json.contains("12345678901234567890"));
    assert_eq!(f.expect.json.len(), 7);
    assert_eq!(
        search.env_refs(),
        vec!["MCP_CLIENT_SECRET"],
        "env refs come from the oauth section"
    );
    let files = &c.nodes[c.roots[2]];
    assert_eq!(files.env_refs(), vec!["HOST_FILES_TOKEN", "HOST_LOG_LEVEL"]);
    let gw = &c.nodes[service.dependencies[2].node];
    assert_eq!(gw.path, "targets[0].dependencies[2]");
    assert_eq!(gw.kind, TargetType::Gateway);
    assert_eq!(
        c.nodes[gw.dependencies[1].node].id.as_deref(),
        Some("files")
    );
}

#[test]
fn thousand_targets_load_and_the_last_error_is_located() {
    // Load time is measured by `make bench`, not asserted here.
    let mut text = String::from("version: v1\nconcurrency: 64\ntargets:\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "  - name: target {i}\n    id: t{i}\n    type: http\n    endpoint: http://127.0.0.1:{}/health\n    checks: [reachability, protocol, latency]\n    thresholds: {{latency_ms: 250}}\n    timeout_ms: 2000\n    auth: {{bearer_env: TOKEN_{i}}}\n    http:\n      expected_status: [200, 204]\n      headers: {{X-Ready: 'true'}}\n",
            8000 + i
        ));
        if i > 0 {
            text.push_str("    dependencies:\n      - ref: t0\n        critical: false\n");
        }
    }
    let c = load(&text);
    assert_eq!(c.nodes.len(), 1000);
    // The error path re-parses once for the line.
    let bad = text.replace(
        "timeout_ms: 2000\n    auth: {bearer_env: TOKEN_999}",
        "timeout_ms: 0\n    auth: {bearer_env: TOKEN_999}",
    );
    let e = load_str(&bad).unwrap_err();
    assert_eq!(e.path, "targets[999].timeout_ms");
    assert!(e.line.is_some_and(|l| l > 13_000), "{e}");
}

// ---------------------------------------------------------------------------------------
// Files

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agenthealth-load-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn load_file_reads_regular_files() {
    let dir = scratch("regular");
    let p = dir.join("c.yaml");
    std::fs::write(&p, one("http", "")).unwrap();
    assert_eq!(load_file(&p).unwrap().nodes.len(), 1);
    // A file that cannot be opened is named, with the operating system's reason.
    let missing = dir.join("missing.yaml");
    let e = load_file(&missing).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot open configuration file `{}`: No such file or directory",
            missing.display()
        )
    );
    let e = load_file(&dir).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "configuration path `{}` is not a regular file",
            dir.display()
        )
    );
    // A UTF-8 byte-order mark is not part of the document.
    std::fs::write(&p, format!("\u{feff}{}", one("http", ""))).unwrap();
    assert_eq!(load_file(&p).unwrap().nodes.len(), 1);
    std::fs::write(&p, [b'a', b':', b' ', 0xff, b'\n']).unwrap();
    assert_eq!(
        load_file(&p).unwrap_err().to_string(),
        "configuration file is not valid UTF-8"
    );
    let big = vec![b'#'; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
    std::fs::write(&p, big).unwrap();
    assert_eq!(
        load_file(&p).unwrap_err().to_string(),
        "configuration file is larger than 4 MiB"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_file_refuses_a_fifo_without_blocking() {
    let dir = scratch("fifo");
    let p = dir.join("fifo.yaml");
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let started = Instant::now();
    let e = load_file(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("configuration path `{}` is not a regular file", p.display())
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicates_are_found_in_large_mappings_and_lists() {
    // The checks use hash sets; a quadratic scan would make 20,000 entries noticeably slow.
    let n = 20_000;
    let mut text = one("http", "checks: [protocol]\nhttp:\n  headers:");
    for i in 0..n {
        text.push_str(&format!("        X-H{i}: v\n"));
    }
    text.push_str("        x-h7: v\n");
    rejects(
        &text,
        "targets[0].http.headers.x-h7",
        "duplicate header name (header names are case-insensitive)",
    );
    let mut text = one("mcp", "mcp:\n  required_tools:");
    for i in 0..n {
        text.push_str(&format!("        - t{i}\n"));
    }
    text.push_str("        - t7\n");
    rejects(
        &text,
        &format!("targets[0].mcp.required_tools[{n}]"),
        "duplicate tool name",
    );
}
