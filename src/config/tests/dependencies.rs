//! Dependencies and the graph: inline targets and references, ids, edges' fields, cycles, and
//! the bounds on depth and projections.

use super::*;

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
