//! HTTP and MCP targets in one graph, sharing one MCP session, and the graph example.

use super::*;

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
        &text.replace("http://127.0.0.1:3000", &fake.base()),
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
