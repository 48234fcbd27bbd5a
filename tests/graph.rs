//! Dependency graphs end to end: load-time graph errors (exit 6, the key path, one line),
//! shared nodes probed once per run and afresh on the next, edge policy, bounded parallelism
//! measured by the servers, budgets that never reach a shared dependency, a mixed HTTP + MCP
//! graph sharing one MCP session, the terminal tree and `doctor`'s root cause, and a
//! 1,000-node graph with a bounded number of threads.
//!
//! Deadline assertions allow +1 s for a loaded machine. Nothing here waits for a fixed time to
//! let something happen: servers count, and a rendezvous route proves parallelism.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use agenthealth_testkit::lock;
use serde_json::Value;

use crate::util::{Outcome, TempDir, command, run};
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer};
use agenthealth_testkit::http_server::{Reply, Server, closed_port};

const MARGIN: Duration = Duration::from_secs(1);

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// `check <file> --format json`.
fn check_json(file: &Path) -> Outcome {
    run(&["check", path_str(file), "--format", "json"])
}

/// Requests the server saw for `path`.
fn hits(s: &Server, path: &str) -> usize {
    s.requests().iter().filter(|r| r.target == path).count()
}

/// Every result in the document, depth-first, with its name.
fn all_results(doc: &Value) -> Vec<&Value> {
    fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        out.push(v);
        for d in v["dependencies"].as_array().into_iter().flatten() {
            walk(d, out);
        }
    }
    let mut out = Vec::new();
    match doc["results"].as_array() {
        Some(results) => results.iter().for_each(|r| walk(r, &mut out)),
        None => walk(doc, &mut out),
    }
    out
}

fn named<'a>(doc: &'a Value, name: &str) -> Vec<&'a Value> {
    all_results(doc)
        .into_iter()
        .filter(|r| r["target"]["name"] == name)
        .collect()
}

// ---------------------------------------------------------------------------------------
// Load-time graph errors

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

// ---------------------------------------------------------------------------------------
// Shared nodes, edge policy, fresh runs

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

// ---------------------------------------------------------------------------------------
// Parallelism and budgets

/// A route that holds each request until `want` requests are in flight together (or a
/// second passes: nothing more is coming), and records the most seen at once.
#[derive(Clone, Default)]
struct Rendezvous {
    state: Arc<(Mutex<(usize, usize)>, Condvar)>,
}

impl Rendezvous {
    fn hold(&self, want: usize) -> Reply {
        let (mutex, cv) = &*self.state;
        let mut g = lock(mutex);
        g.0 += 1;
        g.1 = g.1.max(g.0);
        cv.notify_all();
        let (mut g, _) = cv
            .wait_timeout_while(g, Duration::from_secs(1), |s| s.0 < want)
            .unwrap_or_else(|p| p.into_inner());
        g.0 -= 1;
        Reply::status(200)
    }

    fn peak(&self) -> usize {
        lock(&self.state.0).1
    }
}

#[test]
fn concurrency_bounds_requests_in_flight() {
    let meet = Rendezvous::default();
    let m = meet.clone();
    let s = Server::start(move |_| m.hold(2));
    let dir = TempDir::new("graph-concurrency");
    let mut yaml = String::from("version: v1\nconcurrency: 2\ntargets:\n");
    for i in 0..6 {
        yaml.push_str(&format!(
            "  - {{name: t{i}, type: http, endpoint: '{}'}}\n",
            s.url(&format!("/t{i}"))
        ));
    }
    let f = dir.file("c.yaml", &yaml);
    let o = check_json(&f);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(s.requests().len(), 6);
    assert_eq!(meet.peak(), 2, "two at once, never more");
}

#[test]
fn a_parent_budget_never_cuts_a_shared_dependency() {
    // The shared node answers after 600 ms; its parent `a` has a 200 ms budget and a hanging
    // endpoint. `a` fails on its own; the shared node stays HEALTHY under both parents.
    let s = Server::start(|r| match r.target.as_str() {
        "/hang" => Reply::HangBeforeHead,
        "/slow" => {
            // The server being slow, not the test waiting.
            std::thread::sleep(Duration::from_millis(600));
            Reply::status(200)
        }
        _ => Reply::status(200),
    });
    let dir = TempDir::new("graph-budget");
    let yaml = format!(
        "version: v1
targets:
  - name: a
    type: http
    endpoint: '{hang}'
    budget_ms: 200
    dependencies:
      - {{name: shared, id: shared, type: http, endpoint: '{slow}'}}
  - name: b
    type: http
    endpoint: '{ok}'
    dependencies:
      - ref: shared
",
        hang = s.url("/hang"),
        slow = s.url("/slow"),
        ok = s.url("/ok"),
    );
    let f = dir.file("c.yaml", &yaml);
    let o = check_json(&f);
    assert!(
        o.elapsed < Duration::from_millis(600) + MARGIN,
        "{:?}",
        o.elapsed
    );
    let v = o.json();
    let (a, b) = (&v["results"][0], &v["results"][1]);
    assert_eq!(
        a["checks"]["reachability"]["status"], "UNREACHABLE",
        "{}",
        o.stdout
    );
    assert_eq!(a["dependencies"][0]["status"], "HEALTHY");
    assert_eq!(b["status"], "HEALTHY");
    assert_eq!(b["dependencies"][0]["status"], "HEALTHY");
    assert_eq!(hits(&s, "/slow"), 1);
    assert_eq!(o.code, 3);

    // A 1 ms budget: the parent is not HEALTHY, its shared child is.
    let yaml = yaml.replace("budget_ms: 200", "budget_ms: 1");
    let f = dir.file("one.yaml", &yaml);
    let o = check_json(&f);
    let v = o.json();
    assert_ne!(v["results"][0]["status"], "HEALTHY", "{}", o.stdout);
    assert_eq!(v["results"][0]["dependencies"][0]["status"], "HEALTHY");
    assert_eq!(v["results"][1]["status"], "HEALTHY");
}

#[test]
fn sigint_ends_a_graph_run_with_a_document() {
    let s = Server::start_silent();
    let dir = TempDir::new("graph-sigint");
    let e = s.url("/");
    let yaml = format!(
        "version: v1
concurrency: 2
targets:
  - {{name: a, type: http, endpoint: '{e}', timeout_ms: 30000, dependencies: [{{name: s, id: s, type: http, endpoint: '{e}', timeout_ms: 30000}}]}}
  - {{name: b, type: http, endpoint: '{e}', timeout_ms: 30000, dependencies: [{{ref: s}}]}}
"
    );
    let f = dir.file("c.yaml", &yaml);
    let child = command(&["check", path_str(&f), "--format", "json"], &[])
        .spawn()
        .expect("spawn agenthealth");
    // Both workers are in a call once the server holds two connections.
    let start = Instant::now();
    while s.connections() < 2 {
        assert!(start.elapsed() < Duration::from_secs(10), "no connections");
        std::thread::yield_now();
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let signalled = Instant::now();
    let out = child.wait_with_output().expect("wait");
    assert!(signalled.elapsed() < MARGIN, "{:?}", signalled.elapsed());
    assert_eq!(out.status.code(), Some(5));
    let v: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    for r in all_results(&v) {
        assert_eq!(r["status"], "UNKNOWN", "{r}");
    }
}

// ---------------------------------------------------------------------------------------
// HTTP and MCP together

#[test]
fn an_mcp_node_shared_by_three_parents_has_one_session() {
    let fake = FakeServer::start(FakeConfig::default());
    let dir = TempDir::new("graph-mcp");
    let yaml = format!(
        "version: v1
targets:
  - name: agent
    id: agent
    type: http
    endpoint: '{health}'
    dependencies:
      - name: notes
        id: notes
        type: mcp
        endpoint: '{mcp}'
        relationship: downstream
        mcp:
          required_tools: [echo]
      - name: gateway
        id: gw
        type: gateway
        endpoint: '{health}'
        relationship: gateway
        dependencies:
          - ref: notes
            relationship: supporting
  - name: billing
    type: http
    endpoint: '{health}'
    dependencies:
      - ref: notes
        critical: false
",
        health = fake.url_for("/health"),
        mcp = fake.url(),
    );
    let f = dir.file("c.yaml", &yaml);
    let o = check_json(&f);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(fake.sessions_created(), 1);
    assert_eq!(fake.count("initialize"), 1);
    assert_eq!(fake.count("tools/list"), 1);
    assert_eq!(fake.count_http("DELETE"), 1, "one cleanup");
    let v = o.json();
    let notes = named(&v, "notes");
    assert_eq!(notes.len(), 3);
    for r in &notes {
        assert_eq!(r["target"]["type"], "mcp");
        assert_eq!(r["checks"], notes[0]["checks"]);
    }
    assert_eq!(notes[0]["relationship"], "downstream");
    assert_eq!(notes[1]["relationship"], "supporting");
    assert_eq!(notes[2]["critical"], false);

    // YAML carries the same nesting.
    let y = run(&["check", path_str(&f), "--format", "yaml"]);
    assert_eq!(y.code, 0);
    for needle in [
        "relationship: supporting",
        "critical: false",
        "id: notes",
        "id: gw",
    ] {
        assert!(y.stdout.contains(needle), "{needle}: {}", y.stdout);
    }

    // Two ids on one endpoint are two sessions.
    fake.reset_log();
    let yaml = format!(
        "version: v1
targets:
  - {{name: one, id: one, type: mcp, endpoint: '{mcp}'}}
  - {{name: two, id: two, type: mcp, endpoint: '{mcp}'}}
  - {{name: top, type: http, endpoint: '{health}', dependencies: [{{ref: one}}, {{ref: two}}, {{ref: one}}]}}
",
        health = fake.url_for("/health"),
        mcp = fake.url(),
    );
    let f = dir.file("two.yaml", &yaml);
    let o = check_json(&f);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(fake.sessions_created(), 2);
    assert_eq!(fake.count("initialize"), 2);
}

#[test]
fn the_graph_example_runs_against_the_fake_server() {
    let Some(missing_tool) = agenthealth_testkit::fake_mcp::preset("missing-tool") else {
        panic!("preset missing-tool")
    };
    let fake = FakeServer::start(FakeConfig {
        routes: vec![("/broken".into(), missing_tool)],
        ..Default::default()
    });
    let text = std::fs::read_to_string("examples/graph/agenthealth.yaml").expect("example");
    let dir = TempDir::new("graph-example");
    let f = dir.file(
        "c.yaml",
        &text.replace("http://127.0.0.1:PORT", &fake.base()),
    );
    let o = check_json(&f);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["results"][0]["target"]["name"], "support-agent");
    assert_eq!(v["results"][0]["status"], "DEGRADED");
    assert_eq!(v["results"][1]["target"]["name"], "billing-api");
    assert_eq!(v["results"][1]["status"], "UNHEALTHY");
    // notes-mcp (shown three times) and search-mcp: two sessions.
    assert_eq!(named(&v, "notes-mcp").len(), 3);
    assert_eq!(fake.sessions_created(), 2);
    assert_eq!(fake.count("initialize"), 2);
}

// ---------------------------------------------------------------------------------------
// Terminal tree and doctor

#[test]
fn the_terminal_draws_the_tree_and_doctor_names_the_root_cause() {
    let s = Server::start(|r| match r.target.as_str() {
        "/db" => Reply::status(503),
        _ => Reply::status(200),
    });
    let dir = TempDir::new("graph-terminal");
    let yaml = format!(
        "version: v1
targets:
  - name: api
    type: http
    endpoint: '{ok}'
    dependencies:
      - {{name: search, type: http, endpoint: '{ok}', critical: false, relationship: downstream}}
      - name: gateway
        id: gw
        type: gateway
        endpoint: '{ok}'
        relationship: gateway
        dependencies:
          - {{name: db, id: db, type: http, endpoint: '{db}', relationship: supporting}}
",
        ok = s.url("/ok"),
        db = s.url("/db"),
    );
    let f = dir.file("c.yaml", &yaml);
    // No UTF-8 locale in the test environment: ASCII branches.
    let o = run(&["doctor", path_str(&f)]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let lines: Vec<&str> = o.stdout.lines().collect();
    let titles: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("(http)") || l.contains("(gateway)"))
        .filter(|l| !l.starts_with("Doctor:"))
        .collect();
    let strip = |l: &str| l.split(':').next().unwrap_or_default().to_string();
    assert_eq!(
        titles.iter().map(|l| strip(l)).collect::<Vec<_>>(),
        vec![
            "api (http)",
            "|-- [downstream] search [optional] (http)",
            "`-- [gateway] gateway [id=gw] (gateway)",
            "    `-- [supporting] db [id=db] (http)",
        ],
        "{}",
        o.stdout
    );
    assert!(lines.contains(&"| protocol       HEALTHY"), "{}", o.stdout);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("          protocol       UNHEALTHY")),
        "{}",
        o.stdout
    );
    assert!(
        lines.contains(&"Doctor: root cause: api -> gateway [id=gw] -> db [id=db] is UNHEALTHY"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.is_ascii());

    // With a UTF-8 locale: box-drawing characters.
    let o = crate::util::run_env(&["check", path_str(&f)], &[("LANG", "C.UTF-8")]);
    assert!(
        o.stdout
            .contains("└── [gateway] gateway [id=gw] (gateway): UNHEALTHY"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("├── [downstream] search [optional] (http): HEALTHY")
    );
}

// ---------------------------------------------------------------------------------------
// Scale and threads

/// Runs the binary with stdout to a file, sampling its thread count until it exits.
fn run_counting_threads(args: &[&str], out: &Path) -> (Outcome, usize) {
    let file = File::create(out).expect("stdout file");
    let start = Instant::now();
    let mut child = command(args, &[])
        .stdout(file)
        .spawn()
        .expect("spawn agenthealth");
    let status_file = PathBuf::from(format!("/proc/{}/status", child.id()));
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        // Sampling can only miss a peak, never invent one.
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(n) = text
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<usize>().ok())
            {
                peak = peak.max(n);
            }
        }
        std::thread::yield_now();
    };
    let elapsed = start.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    let outcome = Outcome {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr,
        elapsed,
    };
    (outcome, peak)
}

/// The graph `examples/graph/generate.sh` prints (the one `make bench` measures).
fn generated_graph(roots: usize, kids: usize, grand: usize, urls: &[String]) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg("examples/graph/generate.sh");
    cmd.args([roots, kids, grand].map(|n| n.to_string()));
    cmd.args(urls);
    let out = cmd.output().expect("run examples/graph/generate.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 YAML")
}

#[test]
fn a_thousand_nodes_finish_within_budgets_on_bounded_threads() {
    let servers: Vec<Server> = (0..2)
        .map(|_| Server::start(|_| Reply::status(200)))
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url("/health")).collect();
    let dir = TempDir::new("graph-scale");
    // 10 × (1 + 9 × (1 + 10)) = 1,000 nodes.
    let f = dir.file("big.yaml", &generated_graph(10, 9, 10, &urls));
    let (o, threads) = run_counting_threads(
        &["check", path_str(&f), "--format", "json"],
        &dir.0.join("out"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let probes: usize = servers.iter().map(|s| s.requests().len()).sum();
    assert_eq!(probes, 1000, "every node once, shared ones included");
    let v = o.json();
    let results = all_results(&v);
    assert_eq!(results.len(), 10 * (1 + 9 * 11 + 9 * 11));
    assert!(results.iter().all(|r| r["status"] == "HEALTHY"));
    assert!(
        o.elapsed < Duration::from_secs(20) + MARGIN,
        "{:?}",
        o.elapsed
    );
    // main + signal thread + 16 workers.
    assert!(threads <= 16 + 2, "{threads} threads");

    // Fewer workers, fewer threads.
    let small = dir.file(
        "small.yaml",
        &generated_graph(10, 9, 10, &urls).replacen("targets:", "concurrency: 3\ntargets:", 1),
    );
    let (o, threads) = run_counting_threads(
        &["check", path_str(&small), "--format", "json"],
        &dir.0.join("out-small"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(threads <= 3 + 2, "{threads} threads");
}
