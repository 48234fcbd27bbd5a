//! `mcp.functional`: the one safe tool call, its arguments, and the expectations on its
//! result; and the rule that ties it to `functional` in the explicit `checks`.

use super::*;

/// A target listing `functional` whose `mcp.functional` is `body`.
fn functional(body: &str) -> String {
    one(
        "mcp",
        &format!("checks: [functional]\nmcp:\n  functional: {body}"),
    )
}

/// A target with a safe call of `t` whose `expect` is `body`.
fn expecting(body: &str) -> String {
    one(
        "mcp",
        &format!(
            "checks: [functional]\nmcp:\n  functional:\n    tool: t\n    safe: true\n    expect: {body}"
        ),
    )
}

/// The call of a target that loads.
fn call(body: &str) -> crate::config::McpFunctional {
    root(&functional(body)).mcp.unwrap().functional.unwrap()
}

#[test]
fn a_safe_call_keeps_its_tool_and_its_arguments_exactly() {
    let f = call("{tool: search, safe: true, arguments_json: '{\"query\":\"health\"}'}");
    assert_eq!((f.tool.as_str(), f.safe), ("search", true));
    assert_eq!(f.arguments_json, "{\"query\":\"health\"}");
    assert_eq!(call("{tool: t, safe: true}").arguments_json, "{}");
    let exact = "{ \"n\": 123456789012345678901234567890, \"s\": \"a\\u00e9\" }";
    let f = call(&format!(
        "{{tool: t, safe: true, arguments_json: '{exact}'}}"
    ));
    assert_eq!(f.arguments_json, exact);
    let max = format!("{{\"a\": \"{}\"}}", "x".repeat(65_536 - 9));
    assert_eq!(max.len(), 65_536);
    call(&format!("{{tool: t, safe: true, arguments_json: '{max}'}}"));
}

#[test]
fn the_call_and_the_functional_check_need_each_other() {
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
}

#[test]
fn the_call_names_a_tool_in_a_mapping_of_its_own_keys() {
    refuses(&[
        (
            functional("null"),
            "targets[0].mcp.functional",
            "expected a mapping with `tool` and `safe: true`, found null",
        ),
        (
            functional("{safe: true}"),
            "targets[0].mcp.functional",
            "missing required key `tool`",
        ),
        (
            functional("{tool: ' ', safe: true}"),
            "targets[0].mcp.functional.tool",
            "expected a non-blank tool name, found a blank string",
        ),
        (
            functional(&format!(
                "{{tool: t, safe: true, argument_json: '{{}}', token: {CANARY}}}"
            )),
            "targets[0].mcp.functional.argument_json",
            "unknown key; expected one of tool, safe, arguments_json, expect (did you mean \
             `arguments_json`?)",
        ),
    ]);
}

#[test]
fn a_call_runs_only_when_declared_safe_true() {
    let boolean = "expected `true` or `false`, found a string";
    refuses(&[
        (
            functional("{tool: search, safe: false}"),
            "targets[0].mcp.functional.safe",
            "expected `true`; a functional call runs only when declared safe",
        ),
        (
            functional("{tool: t}"),
            "targets[0].mcp.functional",
            "missing required key `safe`; a functional call must be declared `safe: true`",
        ),
        (
            functional("{tool: t, safe: 'true'}"),
            "targets[0].mcp.functional.safe",
            boolean,
        ),
        (
            functional("{tool: t, safe: yes}"),
            "targets[0].mcp.functional.safe",
            boolean,
        ),
        (
            functional("{tool: t, safe: 1}"),
            "targets[0].mcp.functional.safe",
            "expected `true` or `false`, found an integer",
        ),
    ]);
}

#[test]
fn arguments_are_a_json_object_of_at_most_64_kib() {
    let object = "expected a string holding a JSON object";
    for bad in ["'null'", "'[1]'", "'5'", "'\"s\"'", "'{'", "'{} x'"] {
        rejects(
            &functional(&format!("{{tool: s, safe: true, arguments_json: {bad}}}")),
            "targets[0].mcp.functional.arguments_json",
            object,
        );
    }
    let big = format!("{{\"a\": \"{}\"}}", "x".repeat(65_536));
    refuses(&[
        (
            functional("{tool: t, safe: true, arguments_json: {a: 1}}"),
            "targets[0].mcp.functional.arguments_json",
            "expected a string holding a JSON object, found a mapping",
        ),
        (
            functional(&format!(
                "{{tool: t, safe: true, arguments_json: '{{\"k\": {CANARY}}}'}}"
            )),
            "targets[0].mcp.functional.arguments_json",
            object,
        ),
        (
            functional(&format!("{{tool: t, safe: true, arguments_json: '{big}'}}")),
            "targets[0].mcp.functional.arguments_json",
            "expected a JSON object of at most 65536 bytes",
        ),
    ]);
}

#[test]
fn expectations_keep_their_pointers_values_and_seconds() {
    let expect = |body: &str| {
        root(&expecting(body))
            .mcp
            .unwrap()
            .functional
            .unwrap()
            .expect
    };
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
}

#[test]
fn expectations_point_with_json_pointers() {
    let ptr = "expected a JSON Pointer: empty or starting with `/`, `~` only as `~0` or `~1`";
    refuses(&[
        (
            expecting("{json: {a/b: 1}}"),
            "targets[0].mcp.functional.expect.json[\"a/b\"]",
            ptr,
        ),
        (
            expecting("{json: {/a~2: 1}}"),
            "targets[0].mcp.functional.expect.json[\"/a~2\"]",
            ptr,
        ),
        (
            expecting("{fresh_within_s: {/a~: 1}}"),
            "targets[0].mcp.functional.expect.fresh_within_s[\"/a~\"]",
            ptr,
        ),
    ]);
}

#[test]
fn expected_values_are_plain_json() {
    refuses(&[
        (
            expecting("{json: {/a: !tag x}}"),
            "targets[0].mcp.functional.expect.json[\"/a\"]",
            "expected a JSON value, found a tagged value",
        ),
        (
            expecting("{json: {/a: .inf}}"),
            "targets[0].mcp.functional.expect.json[\"/a\"]",
            "expected a finite number",
        ),
        (
            expecting("{json: {/a: 99999999999999999999999}}"),
            "targets[0].mcp.functional.expect.json[\"/a\"]",
            "expected an integer within the 64-bit range",
        ),
        (
            expecting("{json: {/a: {1: x}}}"),
            "targets[0].mcp.functional.expect.json[\"/a\"].<key #1>",
            "keys must be strings, found an integer as a key",
        ),
        (
            expecting("{json: {/a: {k: 1, k: 2}}}"),
            "targets[0].mcp.functional.expect.json[\"/a\"].k",
            "duplicate key",
        ),
        (
            expecting("{json: null}"),
            "targets[0].mcp.functional.expect.json",
            "expected a mapping of JSON Pointer to expected value, found null",
        ),
    ]);
}

#[test]
fn text_and_freshness_expectations_are_bounded() {
    let seconds = "expected a number of seconds greater than 0";
    for bad in ["0", "-1", "0.0"] {
        rejects(
            &expecting(&format!("{{fresh_within_s: {{/t: {bad}}}}}")),
            "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
            seconds,
        );
    }
    refuses(&[
        (
            expecting("{text_contains: ''}"),
            "targets[0].mcp.functional.expect.text_contains",
            "expected a non-empty string",
        ),
        (
            expecting("{text_contains: 5}"),
            "targets[0].mcp.functional.expect.text_contains",
            "expected a non-empty string, found an integer",
        ),
        (
            expecting("{fresh_within_s: {/t: '60'}}"),
            "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
            "expected a number of seconds greater than 0, found a string",
        ),
        (
            expecting("{fresh_within_s: {/t: .nan}}"),
            "targets[0].mcp.functional.expect.fresh_within_s[\"/t\"]",
            "expected a number of seconds greater than 0; found a non-finite number",
        ),
    ]);
}

#[test]
fn the_expect_block_is_a_mapping_of_its_own_keys() {
    refuses(&[
        (
            expecting(&format!("{{json_equals: {CANARY}}}")),
            "targets[0].mcp.functional.expect.json_equals",
            "unknown key; expected one of json, text_contains, fresh_within_s",
        ),
        (
            expecting("null"),
            "targets[0].mcp.functional.expect",
            "expected a mapping of expectations, found null",
        ),
    ]);
}
