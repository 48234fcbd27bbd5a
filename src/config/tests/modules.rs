//! `modules:`: target templates for `serve`'s `/probe`, each with an `allow` list; a file may
//! hold only modules, and a file without them reads as it always did.

use super::*;
use crate::contract::allow::AllowEntry;

/// A document with one target `t` (unless `targets` is false) and `modules` (indented as
/// the list's items).
fn with_modules(targets: bool, modules: &str) -> String {
    let mut s = String::from("version: v1\n");
    if targets {
        s.push_str("targets:\n  - name: t\n    type: http\n    endpoint: http://127.0.0.1:1/\n");
    }
    s.push_str("modules:\n");
    for line in modules.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

const MCP: &str = "- name: mcp\n  type: mcp\n  allow: ['*.agents.svc', 10.0.0.0/8]\n";

#[test]
fn a_module_is_a_target_template_with_an_allow_list() {
    let c = load(&with_modules(
        false,
        "- name: mcp\n  type: mcp\n  timeout_ms: 2000\n  checks: [reachability, protocol]\n  allow: ['*.agents.svc', 10.0.0.0/8, 'https://tools.example/mcp']\n  auth:\n    bearer_env: AGENTS_TOKEN\n- name: web.v2\n  type: http\n  allow: [web.example]\n",
    ));
    assert!(c.nodes.is_empty() && c.roots.is_empty(), "only modules");
    let names: Vec<&str> = c.modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["mcp", "web.v2"]);
    let t = &c.modules[0].template;
    assert_eq!(
        (t.name.as_str(), t.kind, t.timeout_ms),
        ("mcp", TargetType::Mcp, 2000)
    );
    assert_eq!(t.endpoint, "");
    assert_eq!(t.bearer_env.as_deref(), Some("AGENTS_TOKEN"));
    assert_eq!(t.path, "modules[0]");
    let allow = t.allow.as_deref().expect("an allow list");
    assert_eq!(allow.0.len(), 3);
    assert_eq!(allow.0[0], AllowEntry::Domain(".agents.svc".into()));
    // With targets too.
    let c = load(&with_modules(true, MCP));
    assert_eq!((c.nodes.len(), c.modules.len()), (1, 1));
    assert!(
        c.nodes[0].allow.is_none(),
        "a target reaches what it is configured to"
    );
}

#[test]
fn a_file_without_modules_means_what_it_meant() {
    let c = load(&one("http", ""));
    assert!(c.modules.is_empty());
    rejects("version: v1\n", "", "missing required key `targets`");
    rejects(
        "version: v1\ntargets: []\n",
        "targets",
        "expected at least one target",
    );
}

#[test]
fn module_refusals_name_the_key_and_never_the_value() {
    let canary = format!("'{CANARY}'");
    refuses(&[
        (
            with_modules(false, ""),
            "modules",
            "expected a list of modules, found null",
        ),
        (
            "version: v1\nmodules: []\n".into(),
            "modules",
            "expected at least one module",
        ),
        (
            with_modules(
                false,
                &format!("- name: mcp\n  type: mcp\n  endpoint: {canary}\n  allow: [a.example]\n"),
            ),
            "modules[0].endpoint",
            "not allowed in a module; the URL comes from /probe's `target`",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  allow: [a.example]\n  dependencies: []\n",
            ),
            "modules[0].dependencies",
            "a module has no dependencies; probe them as targets",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  id: x\n  allow: [a.example]\n",
            ),
            "modules[0].id",
            "not allowed in a module; a module is named by `name`",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  allow: [a.example]\n  mcp:\n    transport: stdio\n",
            ),
            "modules[0].mcp.transport",
            "a module checks a URL; stdio is not allowed",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  allow: [a.example]\n  mcp:\n    stdio:\n      command: x\n",
            ),
            "modules[0].mcp.stdio",
            "a module checks a URL; stdio is not allowed",
        ),
        (
            with_modules(false, "- name: mcp\n  type: mcp\n"),
            "modules[0]",
            "missing required key `allow`",
        ),
        (
            with_modules(false, "- name: mcp\n  type: mcp\n  allow: []\n"),
            "modules[0].allow",
            "expected at least one entry",
        ),
        (
            with_modules(
                false,
                &format!(
                    "- name: mcp\n  type: mcp\n  allow: [a.example, b.example, '{CANARY}/x']\n"
                ),
            ),
            "modules[0].allow[2]",
            "expected a host name, *.domain, an IP address or CIDR, or an http(s) URL prefix",
        ),
        (
            with_modules(
                false,
                &format!("- name: '{CANARY} x'\n  type: mcp\n  allow: [a.example]\n"),
            ),
            "modules[0].name",
            "expected a module name of 1 to 64 characters from A-Z a-z 0-9 _ . - starting with a letter or digit",
        ),
        (
            with_modules(false, &format!("{MCP}{MCP}")),
            "modules[1].name",
            "another module has this name",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  allow: [a.example]\n  timeout_ms: 0\n",
            ),
            "modules[0].timeout_ms",
            "expected an integer from 1 to 300000; out of range",
        ),
        (
            with_modules(
                false,
                "- name: mcp\n  type: mcp\n  allow: [a.example]\n  endpiont: x\n",
            ),
            "modules[0].endpiont",
            "unknown key; expected one of name, type, checks, thresholds, timeout_ms, check_timeouts_ms, retries, retry_delay_ms, budget_ms, auth, http, mcp, allow",
        ),
    ]);
}

/// One target and what it depends on, for `/probe?target=`: the nodes it reaches once
/// each (a shared one once), edges renumbered, the others left out.
#[test]
fn a_subgraph_keeps_what_its_roots_reach() {
    let c = load(
        "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://a/\n    dependencies:\n      - name: a-dep\n        type: http\n        endpoint: http://a-dep/\n      - ref: shared\n  - name: b\n    type: http\n    endpoint: http://b/\n    dependencies:\n      - id: shared\n        name: shared\n        type: http\n        endpoint: http://shared/\n      - name: b-dep\n        type: http\n        endpoint: http://b-dep/\n        dependencies:\n          - ref: shared\n",
    );
    let b = c.roots[1];
    let sub = c.subgraph(&[b]);
    let names: Vec<&str> = sub.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["b", "shared", "b-dep"]);
    assert_eq!(sub.roots, [0]);
    let deps =
        |i: usize| -> Vec<usize> { sub.nodes[i].dependencies.iter().map(|e| e.node).collect() };
    assert_eq!((deps(0), deps(1), deps(2)), (vec![1, 2], vec![], vec![1]));
    let whole = c.subgraph(&c.roots);
    assert_eq!(whole.nodes.len(), c.nodes.len());
}
