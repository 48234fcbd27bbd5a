//! Bounded parallelism measured by the servers, budgets that never reach a shared
//! dependency, and a cancelled graph run.

use super::*;

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
