//! The terminal tree and doctor's root cause.

use super::*;

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
