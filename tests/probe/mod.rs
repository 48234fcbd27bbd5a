//! `serve`'s `/probe` end to end: one configured target or a module at a URL, checked on
//! demand and answered in the Prometheus text format (read by `promtool check metrics`);
//! the status codes of a bad request; the run ended by the scraper's timeout; one run shared
//! by concurrent requests; the bounded queue; `/targets`; and stopping with probes in flight.
//! The SSRF refusals of modules run in a private network namespace (`ssrf`).

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::serve::{Answer, Serving, TOKEN, get_head, read_response, request};
use crate::tools::check_metrics;
use crate::util::TempDir;
use agenthealth_testkit::fake_mcp::{Action, FakeConfig, FakeServer, Fault};
use agenthealth_testkit::http_server::{Reply, Server};

mod ssrf;

/// `GET path` with the token and `extra` header lines, on a connection of its own.
fn probe(serving: &Serving, path: &str, extra: &str) -> Answer {
    request(
        serving.addr,
        &get_head(path, true, &format!("{extra}Connection: close\r\n")),
    )
}

/// The value of the sample `name` (with its labels exactly) in `body`.
fn sample(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// A configuration file of `yaml` (a `version: v1` document without its first line).
fn config(dir: &TempDir, yaml: &str) -> PathBuf {
    dir.file("agenthealth.yaml", &format!("version: v1\n{yaml}"))
}

/// docs/deployment.md, "Fleets on Prometheus": a configured target probed by name answers
/// 200 whatever its status, with probe_success and the target's families, which promtool
/// accepts; a dependency is part of the run.
#[test]
fn a_target_probed_by_name_answers_in_the_prometheus_format() {
    let mcp = FakeServer::start(FakeConfig::default());
    let down = Server::start(|_| Reply::status(500));
    let dir = TempDir::new("probe-target");
    let file = config(
        &dir,
        &format!(
            "targets:\n  - name: notes\n    type: mcp\n    endpoint: {}\n    dependencies:\n      - name: db\n        type: http\n        endpoint: {}\n        critical: false\n  - name: broken\n    type: http\n    endpoint: {}\n",
            mcp.url(),
            down.url("/db"),
            down.url("/"),
        ),
    );
    let serving = Serving::start(&file, &[]);
    let notes = probe(&serving, "/probe?target=notes", "");
    assert_eq!(notes.status, 200, "{}", notes.body);
    assert_eq!(
        notes.header("Content-Type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    assert_eq!(
        sample(&notes.body, "probe_success"),
        Some(1.0),
        "{}",
        notes.body
    );
    assert!(sample(&notes.body, "probe_duration_seconds").is_some_and(|s| s > 0.0));
    let degraded = "agenthealth_target_status{target=\"notes\",status=\"DEGRADED\"}";
    assert_eq!(
        sample(&notes.body, degraded),
        Some(1.0),
        "an optional dependency failed"
    );
    assert!(
        !notes.body.contains("agenthealth_runs_total"),
        "run families stay on /metrics"
    );
    assert!(!notes.body.contains("broken"), "only the probed target");
    check_metrics(&notes.body);

    let broken = probe(&serving, "/probe?target=broken", "");
    assert_eq!(
        broken.status, 200,
        "the exporter convention: 200 whatever the status"
    );
    assert_eq!(sample(&broken.body, "probe_success"), Some(0.0));
    let unhealthy = "agenthealth_target_status{target=\"broken\",status=\"UNHEALTHY\"}";
    assert_eq!(
        sample(&broken.body, unhealthy),
        Some(1.0),
        "{}",
        broken.body
    );
    check_metrics(&broken.body);
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
}

/// docs/deployment.md, "The probe": 400 for an unknown target or module, a target that is no
/// URL and a bad query or timeout header; 403 for a URL outside the module's list; 401 and
/// 405 as on every path.
#[test]
fn bad_probe_requests_are_refused_by_status() {
    let dir = TempDir::new("probe-bad");
    let file = config(
        &dir,
        "targets:\n  - name: web\n    type: http\n    endpoint: http://127.0.0.1:1/\nmodules:\n  - name: mcp\n    type: mcp\n    allow: ['*.agents.svc']\n",
    );
    let serving = Serving::start(&file, &[]);
    for (path, extra, status, error) in [
        ("/probe?target=nobody", "", 400, "unknown_target"),
        ("/probe", "", 400, "bad_request"),
        ("/probe?target=web&target=web", "", 400, "bad_request"),
        ("/probe?target=web&color=red", "", 400, "bad_request"),
        ("/probe?target=%ff", "", 400, "bad_request"),
        (
            "/probe?target=web",
            "X-Prometheus-Scrape-Timeout-Seconds: -1\r\n",
            400,
            "bad_request",
        ),
        (
            "/probe?module=nope&target=http://a.agents.svc/",
            "",
            400,
            "unknown_module",
        ),
        (
            "/probe?module=mcp&target=ftp://a.agents.svc/",
            "",
            400,
            "bad_target",
        ),
        (
            "/probe?module=mcp&target=a.agents.svc",
            "",
            400,
            "bad_target",
        ),
        // What the endpoint grammar refuses is no target either (it would be MISCONFIGURED).
        (
            "/probe?module=mcp&target=http%3A%2F%2Fa.agents.svc%2Fmcp%23top",
            "",
            400,
            "bad_target",
        ),
        (
            "/probe?module=mcp&target=http://a.agents.svc:1:2/mcp",
            "",
            400,
            "bad_target",
        ),
        (
            "/probe?module=mcp&target=http://elsewhere.example/mcp",
            "",
            403,
            "target_refused",
        ),
    ] {
        let a = probe(&serving, path, extra);
        assert_eq!(
            (a.status, a.json()["error"].as_str()),
            (status, Some(error)),
            "{path}"
        );
    }
    // The token rule of /metrics.
    let a = request(
        serving.addr,
        &get_head("/probe?target=web", false, "Connection: close\r\n"),
    );
    assert_eq!(
        (a.status, a.header("WWW-Authenticate")),
        (401, Some("Bearer"))
    );
    let a = request(
        serving.addr,
        &format!(
            "POST /probe?target=web HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(a.status, 405);
}

/// docs/deployment.md, "The probe": the run ends by the scraper's timeout less a margin — a
/// target that never answers (its timeout_ms is 30 s) gives probe_success 0 before a 2 s
/// scrape timeout.
#[test]
fn a_probe_ends_before_the_scrape_timeout() {
    let silent = Server::start_silent();
    let dir = TempDir::new("probe-deadline");
    let file = config(
        &dir,
        &format!(
            "targets:\n  - name: hang\n    type: mcp\n    endpoint: {}\n    timeout_ms: 30000\n",
            silent.url("/mcp")
        ),
    );
    let serving = Serving::start(&file, &[]);
    let started = Instant::now();
    let a = probe(
        &serving,
        "/probe?target=hang",
        "X-Prometheus-Scrape-Timeout-Seconds: 2\r\n",
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2 + 1), "answered after {took:?}");
    assert_eq!(a.status, 200);
    assert_eq!(sample(&a.body, "probe_success"), Some(0.0), "{}", a.body);
    let unreachable = "agenthealth_target_status{target=\"hang\",status=\"UNREACHABLE\"}";
    assert_eq!(sample(&a.body, unreachable), Some(1.0), "{}", a.body);
}

/// docs/deployment.md, "The probe" (single flight): concurrent requests for one target share
/// one run (the fake server sees one reachability HEAD); a later one runs again.
#[test]
fn concurrent_probes_of_one_target_share_one_run() {
    let slow = FakeServer::start(
        FakeConfig::default().with_fault(Fault::post(Action::Delay(Duration::from_millis(150)))),
    );
    let dir = TempDir::new("probe-flight");
    let file = config(
        &dir,
        &format!(
            "targets:\n  - name: slow\n    type: mcp\n    endpoint: {}\n",
            slow.url()
        ),
    );
    let serving = Serving::start(&file, &[]);
    // The refresh loop's own first run, apart.
    serving.until_ready("the first run", |a| a.status == 200);
    slow.reset_log();
    let addr = serving.addr;
    let clients: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(move || {
                request(
                    addr,
                    &get_head("/probe?target=slow", true, "Connection: close\r\n"),
                )
            })
        })
        .collect();
    for c in clients {
        let a = c.join().expect("a client");
        assert_eq!(a.status, 200);
        assert_eq!(sample(&a.body, "probe_success"), Some(1.0), "{}", a.body);
    }
    assert_eq!(slow.count_http("HEAD"), 1, "one run for twenty requests");
    // Finished results are not reused: the next request runs again.
    assert_eq!(probe(&serving, "/probe?target=slow", "").status, 200);
    assert_eq!(slow.count_http("HEAD"), 2);
}

/// docs/deployment.md, "The probe" (bounded): with one run at a time and one queued, a third
/// request is answered 503 at once.
#[test]
fn beyond_the_queue_a_probe_is_refused_at_once() {
    let silent = Server::start_silent();
    let dir = TempDir::new("probe-queue");
    let file = config(
        &dir,
        "modules:\n  - name: local\n    type: mcp\n    timeout_ms: 30000\n    allow: [127.0.0.1/32]\n",
    );
    let serving = Serving::start(&file, &["--probe-concurrency", "1"]);
    let header = "X-Prometheus-Scrape-Timeout-Seconds: 3\r\n";
    let mut held: Vec<BufReader<TcpStream>> = Vec::new();
    for path in ["/a", "/b"] {
        let mut conn = BufReader::new(TcpStream::connect(serving.addr).expect("connect"));
        let url = silent.url(path);
        let head = get_head(&format!("/probe?module=local&target={url}"), true, header);
        conn.get_mut().write_all(head.as_bytes()).expect("send");
        held.push(conn);
    }
    // The first has reached the silent server (running), the second waits in the queue.
    let until = Instant::now() + Duration::from_secs(5);
    while silent.connections() == 0 {
        assert!(Instant::now() < until, "the first probe never ran");
        std::thread::sleep(Duration::from_millis(2));
    }
    let started = Instant::now();
    let third = probe(
        &serving,
        &format!("/probe?module=local&target={}", silent.url("/c")),
        header,
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        (third.status, third.json()["error"].as_str()),
        (503, Some("probe_overloaded"))
    );
    assert_eq!(third.header("Retry-After"), Some("1"));
    // The two others are answered, by their own deadlines, on their kept-alive connections.
    for conn in &mut held {
        let a = read_response(conn);
        assert!(a.status == 200 || a.status == 503, "{}", a.head);
        assert_eq!(a.header("Connection"), None, "{}", a.head);
    }
}

/// A probe-only `serve` (a file of modules): `/live` answers, `/targets` lists nothing,
/// SIGTERM with probes in flight stops it within a second.
#[test]
fn a_probe_only_serve_stops_with_probes_in_flight() {
    let silent = Server::start_silent();
    let dir = TempDir::new("probe-only");
    let file = config(
        &dir,
        "modules:\n  - name: local\n    type: mcp\n    timeout_ms: 30000\n    allow: [127.0.0.1/32]\n",
    );
    let serving = Serving::start(&file, &[]);
    assert_eq!(serving.get("/live", false).status, 200);
    let targets = serving.get("/targets", true);
    assert_eq!((targets.status, targets.body.as_str()), (200, "[]\n"));
    let addr = serving.addr;
    let url = silent.url("/mcp");
    let _in_flight: Vec<_> = (0..3)
        .map(|i| {
            let path = format!("/probe?module=local&target={url}?n={i}");
            std::thread::spawn(move || request(addr, &get_head(&path, true, "")))
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(5);
    while silent.connections() < 3 {
        assert!(Instant::now() < until, "the probes never ran");
        std::thread::sleep(Duration::from_millis(2));
    }
    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
    assert!(took < Duration::from_secs(1), "stopped in {took:?}");
}

/// docs/deployment.md, "The probe": `/targets` (its `curl` and its JSON) lists the configured
/// top-level targets in http_sd format, one group per name; Prometheus reads it in
/// `tests/fleet.rs`.
#[test]
fn targets_lists_the_configured_targets_for_http_sd() {
    let dir = TempDir::new("probe-targets");
    let file = config(
        &dir,
        "targets:\n  - name: notes mcp\n    id: notes\n    type: mcp\n    endpoint: http://127.0.0.1:1/mcp\n  - name: web\n    type: http\n    endpoint: http://127.0.0.1:1/\n",
    );
    let serving = Serving::start(&file, &[]);
    let a = serving.get("/targets", true);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("Content-Type"), Some("application/json"));
    assert_eq!(
        a.body,
        "[{\"labels\":{\"__meta_agenthealth_target_id\":\"notes\",\"__meta_agenthealth_target_type\":\"mcp\"},\"targets\":[\"notes mcp\"]},{\"labels\":{\"__meta_agenthealth_target_type\":\"http\"},\"targets\":[\"web\"]}]\n"
    );
    assert_eq!(serving.get("/targets", false).status, 401);
}
