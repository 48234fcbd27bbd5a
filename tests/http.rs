//! The built binary against hostile and friendly HTTP servers on 127.0.0.1: status, exit
//! code, and that the process returned within its deadline (+1 s for a loaded machine).

use std::time::Duration;

use crate::support::http_servers::{Reply, Server, closed_port};
use crate::support::tls;
use crate::util::{Outcome, TempDir, run};

fn ping(url: &str, extra: &[&str]) -> Outcome {
    let mut args = vec!["ping", "http", url, "--format", "json"];
    args.extend_from_slice(extra);
    run(&args)
}

fn within(o: &Outcome, deadline_ms: u64) {
    assert!(
        o.elapsed < Duration::from_millis(deadline_ms + 1000),
        "took {:?}",
        o.elapsed
    );
}

#[test]
fn healthy_endpoint_sends_one_head() {
    let s = Server::start(|_| Reply::status(200));
    let o = ping(&s.url("/health"), &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["status"], "HEALTHY");
    assert!(v["latency_ms"].is_number());
    assert_eq!(v["checks"]["reachability"]["steps"]["tcp"], "HEALTHY");
    assert_eq!(s.count("HEAD"), 1);
    assert_eq!(s.count("GET"), 0);
    assert!(o.stderr.is_empty());
}

#[test]
fn statuses_map_to_results_and_exit_codes() {
    for (status, want, code) in [
        (401, "MISCONFIGURED", 4),
        (403, "MISCONFIGURED", 4),
        (404, "UNHEALTHY", 2),
        (500, "UNHEALTHY", 2),
        (302, "UNHEALTHY", 2),
    ] {
        let s =
            Server::start(move |_| Reply::status(status).header("Location", "http://127.0.0.1:1/"));
        let o = ping(&s.url("/"), &[]);
        assert_eq!(o.code, code, "{status}: {}", o.stdout);
        let v = o.json();
        assert_eq!(v["status"], want, "{status}");
        assert_eq!(v["checks"]["reachability"]["status"], "HEALTHY", "{status}");
        assert_eq!(
            s.requests().len(),
            1,
            "{status}: redirects are never followed"
        );
    }
}

#[test]
fn self_signed_tls_is_unreachable() {
    let s = Server::start_wrapped(
        tls::server_wrap(tls::self_signed(&["localhost", "127.0.0.1"])),
        |_| Reply::status(200),
    );
    let url = format!("https://127.0.0.1:{}/", s.port());
    let o = ping(&url, &["--timeout", "2000"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["checks"]["reachability"]["steps"]["tls"], "UNREACHABLE");
    within(&o, 2000);
}

#[test]
fn hang_before_headers_is_unreachable_within_the_timeout() {
    let s = Server::start(|_| Reply::HangBeforeHead);
    let o = ping(&s.url("/"), &["--timeout", "300"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(o.json()["latency_ms"].is_null());
    within(&o, 300);
}

#[test]
fn closed_port_is_unreachable() {
    let url = format!("http://127.0.0.1:{}/", closed_port());
    let o = ping(&url, &[]);
    assert_eq!(o.code, 3);
    assert_eq!(
        o.json()["checks"]["reachability"]["steps"]["tcp"],
        "UNREACHABLE"
    );
}

fn functional_config(dir: &TempDir, url: &str) -> String {
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: body\n    type: http\n    endpoint: {url}\n    timeout_ms: 300\n    retries: 3\n    checks: [functional]\n    http:\n      body_contains: ready\n"
        ),
    );
    f.to_string_lossy().into_owned()
}

#[test]
fn broken_bodies_are_unknown_and_never_retried() {
    let replies: Vec<(&str, Reply)> = vec![
        (
            "hang mid-body",
            Reply::HangMidBody {
                content_length: 100,
                sent: b"not yet".to_vec(),
            },
        ),
        (
            "trickle",
            Reply::Trickle {
                bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nready".to_vec(),
                every: Duration::from_secs(1),
            },
        ),
        (
            "reset mid-response",
            Reply::ResetMidBody {
                content_length: 100,
                sent: b"partial".to_vec(),
            },
        ),
    ];
    for (name, reply) in replies {
        let reply = std::sync::Mutex::new(Some(reply));
        let s = Server::start(move |r| {
            if r.method == "GET" {
                reply
                    .lock()
                    .ok()
                    .and_then(|mut g| g.take())
                    .unwrap_or(Reply::status(500))
            } else {
                Reply::status(200)
            }
        });
        let dir = TempDir::new("body");
        let cfg = functional_config(&dir, &s.url("/"));
        let o = run(&["check", &cfg, "--format", "json"]);
        assert_eq!(o.code, 5, "{name}: {}", o.stdout);
        assert_eq!(
            o.json()["checks"]["functional"]["status"],
            "UNKNOWN",
            "{name}"
        );
        assert_eq!(s.count("GET"), 1, "{name}: functional is never retried");
        within(&o, 300 * 3);
    }
}

#[test]
fn body_found_is_healthy() {
    let s = Server::start(|_| Reply::status(200).body("ready: yes"));
    let dir = TempDir::new("ok");
    let cfg = functional_config(&dir, &s.url("/"));
    let o = run(&["check", &cfg]);
    assert_eq!(o.code, 0, "{}", o.stdout);
}
