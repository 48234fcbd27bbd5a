//! Shared nodes probed once per run and afresh on the next, ids kept apart, and what an
//! edge contributes.

use super::*;

#[test]
fn a_shared_node_is_probed_once_and_shown_under_every_parent() {
    let s = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("graph-shared");
    let u = |p: &str| s.url(p);
    // `shared` is referenced by three parents; `probe` (functional, an active GET) by two.
    let yaml = format!(
        "version: v1
targets:
  - name: a
    type: http
    endpoint: {a}
    dependencies:
      - name: shared
        id: shared
        type: http
        endpoint: {shared}
        relationship: supporting
      - ref: probe
  - name: b
    type: http
    endpoint: {b}
    dependencies:
      - ref: shared
        relationship: downstream
        critical: false
      - name: probe
        id: probe
        type: api
        endpoint: {probe}
        checks: [functional]
  - name: c
    type: http
    endpoint: {c}
    dependencies:
      - ref: shared
",
        a = u("/a"),
        b = u("/b"),
        c = u("/c"),
        shared = u("/shared"),
        probe = u("/probe"),
    );
    let f = dir.file("c.yaml", &yaml);
    let o = check_json(&f);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(
        hits(&s, "/shared"),
        1,
        "one probe per run, three references"
    );
    // The functional node runs once: its reachability HEAD, then one active GET.
    assert_eq!(hits(&s, "/probe"), 2, "two references, one run");
    assert_eq!(s.count("GET"), 1, "one functional GET");
    for p in ["/a", "/b", "/c"] {
        assert_eq!(hits(&s, p), 1, "{p}");
    }
    let v = o.json();
    let shown = named(&v, "shared");
    assert_eq!(shown.len(), 3);
    // Every projection carries the same evidence, with its own edge metadata.
    for r in &shown {
        assert_eq!(r["checks"], shown[0]["checks"]);
        assert_eq!(r["latency_ms"], shown[0]["latency_ms"]);
        assert_eq!(r["target"]["id"], "shared");
    }
    let edges: Vec<(Value, Value)> = shown
        .iter()
        .map(|r| (r["relationship"].clone(), r["critical"].clone()))
        .collect();
    assert_eq!(
        edges,
        vec![
            (Value::from("supporting"), Value::from(true)),
            (Value::from("downstream"), Value::from(false)),
            (Value::Null, Value::from(true)),
        ]
    );
    // `relationship` is omitted, not null, when the edge has none.
    assert!(shown[2].get("relationship").is_none());
    // Results keep declaration order.
    let names: Vec<&Value> = v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| &r["target"]["name"])
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn every_run_evaluates_afresh() {
    let s = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("graph-fresh");
    let yaml = format!(
        "version: v1
targets:
  - {{name: a, type: http, endpoint: '{a}', dependencies: [{{name: s, id: s, type: http, endpoint: '{shared}'}}]}}
  - {{name: b, type: http, endpoint: '{a}', dependencies: [{{ref: s}}]}}
",
        a = s.url("/a"),
        shared = s.url("/shared"),
    );
    let f = dir.file("c.yaml", &yaml);
    for run_no in 1..=2 {
        let o = check_json(&f);
        assert_eq!(o.code, 0, "{}", o.stdout);
        assert_eq!(hits(&s, "/shared"), run_no, "one probe per run");
    }
}

#[test]
fn different_ids_stay_isolated_even_with_the_same_endpoint() {
    let s = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("graph-isolated");
    let yaml = format!(
        "version: v1
targets:
  - {{name: one, id: one, type: http, endpoint: '{e}'}}
  - {{name: two, id: two, type: http, endpoint: '{e}'}}
  - {{name: top, type: http, endpoint: '{e}', dependencies: [{{ref: one}}, {{ref: two}}]}}
",
        e = s.url("/same"),
    );
    let f = dir.file("c.yaml", &yaml);
    let o = check_json(&f);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(hits(&s, "/same"), 3);
}

/// The parent's status for one child status and edge policy; the child is probed once.
#[test]
fn edges_contribute_by_the_contract_table() {
    let s = Server::start(|r| {
        if r.target.starts_with("/unhealthy") {
            Reply::status(500)
        } else if r.target.starts_with("/misconfigured") {
            Reply::status(401)
        } else {
            Reply::status(200)
        }
    });
    let gone = format!("http://127.0.0.1:{}/", closed_port());
    let dir = TempDir::new("graph-edges");
    // (child path or endpoint, child's extra fields, its edge, more edges, parent status)
    let cases: Vec<(String, &str, &str, &str, &str)> = vec![
        ("/unhealthy".into(), "", "", "", "UNHEALTHY"),
        ("/unhealthy".into(), "", ", critical: false", "", "DEGRADED"),
        // The same node through an optional and a critical edge: the worse applies.
        (
            "/unhealthy".into(),
            "",
            ", critical: false",
            ", {ref: c, relationship: path}",
            "UNHEALTHY",
        ),
        (gone.clone(), "", "", "", "UNHEALTHY"),
        (gone, "", ", critical: false", "", "DEGRADED"),
        ("/misconfigured".into(), "", "", "", "UNHEALTHY"),
        // No checks: UNKNOWN, which a critical edge passes on and an optional one softens.
        ("/ok".into(), ", checks: []", "", "", "UNKNOWN"),
        (
            "/ok".into(),
            ", checks: []",
            ", critical: false",
            "",
            "DEGRADED",
        ),
        ("/ok".into(), "", "", "", "HEALTHY"),
    ];
    for (i, (child, fields, edge, more, want)) in cases.iter().enumerate() {
        let (endpoint, path) = match child.strip_prefix('/') {
            Some(_) => {
                let path = format!("{child}/{i}");
                (s.url(&path), Some(path))
            }
            None => (child.clone(), None),
        };
        let yaml = format!(
            "version: v1
targets:
  - name: parent
    type: http
    endpoint: '{p}'
    checks: [protocol, dependency]
    dependencies: [{{name: child, id: c, type: http, endpoint: '{endpoint}', timeout_ms: 2000{fields}{edge}}}{more}]
",
            p = s.url("/parent"),
        );
        let f = dir.file(&format!("c{i}.yaml"), &yaml);
        let o = check_json(&f);
        let v = o.json();
        assert_eq!(v["status"], *want, "{i}: {}", o.stdout);
        assert_eq!(v["checks"]["dependency"]["status"], *want, "{i}");
        assert_eq!(o.code, exit_for(want), "{i}");
        if let Some(path) = path {
            let expected = usize::from(!fields.contains("[]"));
            assert_eq!(hits(&s, &path), expected, "{i}: probed once");
        }
    }
}

fn exit_for(status: &str) -> i32 {
    match status {
        "HEALTHY" => 0,
        "DEGRADED" => 1,
        "UNHEALTHY" => 2,
        "UNREACHABLE" => 3,
        "MISCONFIGURED" => 4,
        _ => 5,
    }
}
