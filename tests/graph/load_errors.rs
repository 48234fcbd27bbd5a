//! Load-time graph errors: exit 6, one line naming the key path.

use super::*;

#[test]
fn graph_errors_are_one_line_naming_the_path() {
    let dir = TempDir::new("graph-errors");
    let t =
        |extra: &str| format!("{{name: x, type: http, endpoint: 'http://127.0.0.1:9/'{extra}}}");
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "dangling ref",
            format!("- {}", t(", dependencies: [{ref: nowhere}]")),
            "targets[0].dependencies[0].ref: no target declares this id",
        ),
        (
            "self reference",
            format!("- {}", t(", id: a, dependencies: [{ref: a}]")),
            "targets[0].dependencies[0].ref: a target cannot depend on itself",
        ),
        (
            "ref with an endpoint",
            format!(
                "- {}\n  - {}",
                t(", id: a"),
                t(", dependencies: [{ref: a, endpoint: 'http://127.0.0.1:9/'}]")
            ),
            "targets[1].dependencies[0].endpoint: not allowed in a `ref` entry",
        ),
        (
            "bad relationship",
            format!(
                "- {}\n  - {}",
                t(", id: a"),
                t(", dependencies: [{ref: a, relationship: s3cr3t-canary}]")
            ),
            "targets[1].dependencies[0].relationship: unknown relationship",
        ),
        (
            "cycle",
            format!(
                "- {}\n  - {}",
                t(", id: a, dependencies: [{ref: b}]"),
                t(", id: b, dependencies: [{ref: a}]")
            ),
            "targets[1].dependencies[0].ref: cycle: a → b → a",
        ),
        (
            "duplicate id",
            format!("- {}\n  - {}", t(", id: a"), t(", id: a")),
            "targets[1].id: duplicate id; already declared at targets[0].id",
        ),
        (
            "critical on a top-level target",
            format!("- {}", t(", critical: false")),
            "targets[0].critical: only allowed on dependency entries",
        ),
    ];
    for (i, (what, targets, want)) in cases.iter().enumerate() {
        let f = dir.file(
            &format!("c{i}.yaml"),
            &format!("version: v1\ntargets:\n  {targets}\n"),
        );
        let o = check_json(&f);
        o.assert_tool_failure();
        assert!(o.stderr.contains(want), "{what}: {}", o.stderr);
        assert!(!o.stderr.contains("s3cr3t-canary"), "{what}: {}", o.stderr);
    }
    // concurrency 0 is rejected too.
    let f = dir.file(
        "conc.yaml",
        &format!("version: v1\nconcurrency: 0\ntargets:\n  - {}\n", t("")),
    );
    let o = check_json(&f);
    o.assert_tool_failure();
    assert!(o.stderr.contains("concurrency"), "{}", o.stderr);
}

/// `levels` targets `l0…`, each referencing the next one twice (the last is a leaf).
fn doubling_chain(levels: usize) -> String {
    let mut s = String::from("version: v1\ntargets:\n");
    for i in 0..levels {
        s.push_str(&format!(
            "  - {{name: l{i}, id: l{i}, type: http, endpoint: 'http://127.0.0.1:9/'"
        ));
        if i + 1 < levels {
            let next = i + 1;
            s.push_str(&format!(
                ", dependencies: [{{ref: l{next}}}, {{ref: l{next}, critical: false}}]"
            ));
        }
        s.push_str("}\n");
    }
    s
}

#[test]
fn the_projection_bound_is_a_load_error_naming_the_target() {
    let dir = TempDir::new("graph-projections");
    // 14 levels with two references each: 2^14 - 1 results from the first target alone.
    let f = dir.file("big.yaml", &doubling_chain(14));
    let o = check_json(&f);
    o.assert_tool_failure();
    assert!(
        o.stderr
            .contains("targets[0]: the dependency graph expands to more than 10000 results"),
        "{}",
        o.stderr
    );
    // 13 levels are below the bound as far as the first target goes, but every level is
    // also a top-level target: 8191 + 4095 + … > 10000 once the totals add up.
    let f = dir.file("sum.yaml", &doubling_chain(13));
    let o = check_json(&f);
    o.assert_tool_failure();
    assert!(o.stderr.contains("more than 10000 results"), "{}", o.stderr);
}

#[test]
fn depth_over_64_is_a_load_error() {
    let dir = TempDir::new("graph-depth");
    let chain = |n: usize| {
        let mut s = String::from(
            "version: v1\ntargets:\n  - {name: top, type: http, endpoint: 'http://127.0.0.1:9/', dependencies: [{ref: n1}]}\n",
        );
        for i in 1..=n {
            s.push_str(&format!(
                "  - {{name: n{i}, id: n{i}, type: http, endpoint: 'http://127.0.0.1:9/'"
            ));
            if i < n {
                s.push_str(&format!(", dependencies: [{{ref: n{}}}]", i + 1));
            }
            s.push_str("}\n");
        }
        s
    };
    // top → n1 → … → n64: 64 edges, accepted.
    let ok = dir.file("ok.yaml", &chain(64));
    let o = run(&["validate", path_str(&ok)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let deep = dir.file("deep.yaml", &chain(65));
    let o = check_json(&deep);
    o.assert_tool_failure();
    assert!(
        o.stderr
            .contains("targets[0]: dependencies nest deeper than 64 levels"),
        "{}",
        o.stderr
    );
}
