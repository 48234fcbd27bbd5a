//! The built binary against hostile and friendly HTTP servers on 127.0.0.1: status, exit
//! code, and that the process returned within its deadline (+1 s for a loaded machine).

use std::time::Duration;

use agenthealth_testkit::lock;

use crate::util::{Outcome, TempDir, run, run_env};
use agenthealth_testkit::http_server::{Reply, Server, closed_port};
use agenthealth_testkit::tls;

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
    for (format, spec, status) in [
        ("yaml", "spec_version: v1", "status: HEALTHY"),
        ("terminal", "ping (http): HEALTHY", "reachability   HEALTHY"),
    ] {
        let o = run(&["ping", "http", &s.url("/health"), "--format", format]);
        assert_eq!(o.code, 0, "{format}: {}", o.stdout);
        assert!(
            o.stdout.contains(spec) && o.stdout.contains(status),
            "{}",
            o.stdout
        );
        assert!(o.stderr.is_empty(), "{format}: {}", o.stderr);
    }
    assert_eq!((s.count("HEAD"), s.count("GET")), (3, 0), "HEAD only");
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
    let o = ping(&s.url("/"), &["--timeout", "400"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(o.json()["latency_ms"].is_null());
    within(&o, 400);
    // The run outlasted the progress delay, but stderr is not a terminal: no progress line.
    assert!(o.stderr.is_empty(), "{:?}", o.stderr);
}

/// `check_timeouts_ms.reachability: 7000` against a server that answers after 5.2 s: the
/// configured deadline holds (no hidden 5 s cap anywhere below the engine).
#[test]
fn a_check_timeout_longer_than_the_default_is_honoured() {
    let s = Server::start(|_| {
        std::thread::sleep(Duration::from_millis(5_200));
        Reply::status(200)
    });
    let dir = TempDir::new("slow");
    let cfg = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: slow\n    type: http\n    endpoint: {}\n    checks: [reachability]\n    check_timeouts_ms:\n      reachability: 7000\n",
            s.url("/")
        ),
    );
    let o = run(&[
        "check",
        cfg.to_str().unwrap_or_default(),
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(o.json()["checks"]["reachability"]["status"], "HEALTHY");
    assert!(o.elapsed >= Duration::from_millis(5_200));
    within(&o, 7_000);
}

/// Every request carries the bearer token; a 401 names the variable in `doctor`, and the
/// token itself is printed nowhere.
#[test]
fn a_rejected_token_is_named_by_its_variable_and_never_printed() {
    let s = Server::start(|_| Reply::status(401));
    let token = "tok-canary-7c1e";
    for format in ["terminal", "json", "yaml"] {
        let o = run_env(
            &[
                "doctor",
                "http",
                &s.url("/"),
                "--bearer-env",
                "AH_API_TOKEN",
                "--format",
                format,
            ],
            &[("AH_API_TOKEN", token)],
        );
        assert_eq!(o.code, 4, "{format}: {}", o.stdout);
        assert!(
            !o.stdout.contains(token) && !o.stderr.contains(token),
            "{format}"
        );
        if format == "terminal" {
            assert!(
                o.stdout.contains(
                    "authentication, protocol: HTTP 401: the token in $AH_API_TOKEN was rejected"
                ),
                "{}",
                o.stdout
            );
        } else {
            assert!(o.stdout.contains("AH_API_TOKEN"), "{format}: {}", o.stdout);
        }
    }
    let requests = s.requests();
    assert_eq!(requests.len(), 3, "one HEAD per run");
    for r in requests {
        assert_eq!(r.header("authorization"), Some("Bearer tok-canary-7c1e"));
    }
}

/// A credential with a control byte (other than TAB) cannot travel in a header: the target
/// is MISCONFIGURED and nothing is sent. TAB is allowed.
#[test]
fn a_credential_with_control_bytes_is_misconfigured_without_traffic() {
    let s = Server::start(|_| Reply::status(200));
    for byte in [1u8, 7, 8, 10, 13, 31, 127] {
        let value = format!("ab{}cd", char::from(byte));
        let o = run_env(
            &[
                "ping",
                "http",
                &s.url("/"),
                "--bearer-env",
                "AH_T",
                "--format",
                "json",
            ],
            &[("AH_T", &value)],
        );
        assert_eq!(o.code, 4, "byte {byte}: {}", o.stdout);
        assert_eq!(
            o.json()["checks"]["configuration"]["status"],
            "MISCONFIGURED"
        );
    }
    assert_eq!(s.connections(), 0, "no traffic for a bad credential");
    let o = run_env(
        &["ping", "http", &s.url("/"), "--bearer-env", "AH_T"],
        &[("AH_T", "ab\tcd")],
    );
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(s.count("HEAD"), 1);
}

/// A missing or empty credential variable: MISCONFIGURED, naming the variable, no traffic.
#[test]
fn a_missing_credential_is_misconfigured_without_traffic() {
    let s = Server::start(|_| Reply::status(200));
    for env in [&[][..], &[("AH_T", "")]] {
        let o = run_env(
            &["doctor", "http", &s.url("/"), "--bearer-env", "AH_T"],
            env,
        );
        assert_eq!(o.code, 4, "{}", o.stdout);
        assert!(
            o.stdout.contains("set the environment variable(s) AH_T"),
            "{}",
            o.stdout
        );
    }
    assert_eq!(s.connections(), 0);
}

/// PEM text of a DER certificate.
fn pem(der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// `SSL_CERT_FILE` names the trust store: a server whose CA is in it is trusted (a private CA
/// on an air-gapped host), a self-signed one is not, and `doctor` says which store refused it.
#[test]
fn ssl_cert_file_is_the_trust_store_and_doctor_names_it() {
    let ca = tls::TestCa::new();
    let dir = TempDir::new("ca");
    let bundle = dir.file("ca.pem", &pem(&ca.cert));
    let bundle = bundle.to_str().unwrap_or_default();
    let env = [("SSL_CERT_FILE", bundle)];

    let trusted = Server::start_wrapped(tls::server_wrap(ca.leaf(&["localhost"])), |_| {
        Reply::status(200)
    });
    let url = format!("https://localhost:{}/", trusted.port());
    let o = run_env(&["ping", "http", &url, "--format", "json"], &env);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let v = o.json();
    assert_eq!(
        v["checks"]["configuration"]["evidence"]["trust_store"],
        "env"
    );
    assert_eq!(v["checks"]["reachability"]["steps"]["tls"], "HEALTHY");

    let untrusted =
        Server::start_wrapped(tls::server_wrap(tls::self_signed(&["localhost"])), |_| {
            Reply::status(200)
        });
    let url = format!("https://localhost:{}/", untrusted.port());
    let o = run_env(&["doctor", "http", &url], &env);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "reachability: the server certificate does not chain to a CA in the trust store named by SSL_CERT_FILE"
        ),
        "{}",
        o.stdout
    );
    let o = run_env(&["ping", "http", &url, "--format", "json"], &env);
    let evidence = &o.json()["checks"]["reachability"]["evidence"];
    assert_eq!(evidence["failure"], "tls_untrusted");
    assert_eq!(evidence["trust_store"], "env");
    assert_eq!(evidence["trust_store_source"], "SSL_CERT_FILE");
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
                lock(&reply).take().unwrap_or(Reply::status(500))
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
