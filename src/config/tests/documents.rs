//! The document as a whole: the error line's shape, YAML syntax and structure, the root's keys,
//! and the YAML forms the loader refuses or bounds.

use super::*;

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
        "unknown key; expected one of version, targets, modules, concurrency, deadline_ms (did you mean `concurrency`?)",
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
            bound: Bound::DeadlineMs,
        })
    );
    assert_eq!(
        set.map(|d| d.bound),
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
        "unknown key; expected one of version, targets, modules, concurrency, deadline_ms",
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
