//! `serve` end to end: the built binary serving AHP v1 and `/metrics` on 127.0.0.1, its
//! refresh loop against scripted targets, hostile clients, SIGTERM, memory over 1,000 runs,
//! and the metrics read by a real Prometheus parser.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::tools::parse_metrics;
use crate::util::{TempDir, bin, run, run_env};
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer};
use agenthealth_testkit::http_server::{Reply, Server};

pub(crate) const TOKEN: &str = "serve-test-token-0123456789";

/// A config of one HTTP target at `url`.
fn http_config(dir: &TempDir, url: &str) -> std::path::PathBuf {
    dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: web\n    type: http\n    endpoint: {url}\n    timeout_ms: 30000\n"
        ),
    )
}

/// A running `agenthealth serve`; killed when dropped.
pub(crate) struct Serving {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
    /// The reader of what serve prints on stderr after its announcement.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Serving {
    /// Starts `serve CONFIG --listen 127.0.0.1:0 --token-env AHP_TOKEN` plus `extra`, and
    /// waits for its announcement.
    pub(crate) fn start(config: &Path, extra: &[&str]) -> Serving {
        Serving::start_under(&[], config, extra)
    }

    /// The same, run by `wrapper` (a command that execs the rest, like `prlimit … --`).
    fn start_under(wrapper: &[&str], config: &Path, extra: &[&str]) -> Serving {
        Serving::spawn(wrapper, config.as_os_str(), Stdio::null(), extra)
    }

    /// `serve -`, its configuration piped to its standard input (by `printf`).
    fn start_from_stdin(config: &str) -> Serving {
        let mut printf = Command::new("printf")
            .args(["%s", config])
            .stdout(Stdio::piped())
            .spawn()
            .expect("printf");
        let pipe = printf.stdout.take().expect("printf's stdout");
        let _ = printf.wait();
        Serving::spawn(&[], "-".as_ref(), pipe.into(), &[])
    }

    fn spawn(wrapper: &[&str], config: &std::ffi::OsStr, stdin: Stdio, extra: &[&str]) -> Serving {
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = Command::new(program);
                cmd.args(args).arg(bin());
                cmd
            }
            None => Command::new(bin()),
        };
        let mut child = cmd
            .arg("serve")
            .arg(config)
            .args(["--listen", "127.0.0.1:0", "--token-env", "AHP_TOKEN"])
            .args(extra)
            .env_clear()
            .env("AHP_TOKEN", TOKEN)
            .stdin(stdin)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
        let mut first = String::new();
        lines.read_line(&mut first).expect("serve's first line");
        let addr = first
            .strip_prefix("agenthealth: serving AHP v1 on http://")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no announcement: {first:?}"));
        assert!(
            first.ends_with(
                " (/live /ready /health /health/dependencies /health/capabilities /metrics /probe /targets)\n"
            ),
            "{first}"
        );
        let stderr = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = lines.read_to_string(&mut rest);
            rest
        });
        Serving {
            child: Some(child),
            addr,
            stderr: Some(stderr),
        }
    }

    pub(crate) fn pid(&self) -> Pid {
        let id = self.child.as_ref().map_or(0, Child::id);
        Pid::from_raw(i32::try_from(id).expect("pid"))
    }

    /// `GET path` on a connection of its own, with the token when `authorized`.
    pub(crate) fn get(&self, path: &str, authorized: bool) -> Answer {
        request(
            self.addr,
            &get_head(path, authorized, "Connection: close\r\n"),
        )
    }

    /// The value of `agenthealth_runs_total` now.
    fn runs(&self) -> u64 {
        let metrics = self.get("/metrics", true).body;
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("agenthealth_runs_total "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no runs_total in {metrics}"))
    }

    /// Polls `/ready` until `done` holds for it (at most 20 s).
    pub(crate) fn until_ready(&self, what: &str, done: impl Fn(&Answer) -> bool) -> Answer {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let a = self.get("/ready", false);
            if done(&a) {
                return a;
            }
            assert!(Instant::now() < until, "{what}: last /ready {a:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends SIGTERM; returns the exit status and how long it took to exit. Serve prints
    /// nothing after its announcement, in particular no secret.
    pub(crate) fn terminate(mut self) -> (ExitStatus, Duration) {
        let started = Instant::now();
        kill(self.pid(), Signal::SIGTERM).expect("SIGTERM");
        let mut child = self.child.take().expect("running");
        let until = started + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                let took = started.elapsed();
                let rest = self.stderr.take().map(|t| t.join().unwrap_or_default());
                assert_eq!(rest.as_deref().unwrap_or(""), "", "serve's stderr");
                return (status, took);
            }
            if Instant::now() > until {
                let _ = child.kill();
                panic!("serve did not stop within 10 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Resident memory and threads of the process, from /proc.
    pub(crate) fn rss_kib_and_threads(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("/proc status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("Threads:"))
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A parsed response.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// The head of `GET path` (with the token when `authorized`) and `extra` header lines.
pub(crate) fn get_head(path: &str, authorized: bool, extra: &str) -> String {
    let auth = if authorized {
        format!("Authorization: Bearer {TOKEN}\r\n")
    } else {
        String::new()
    };
    format!("GET {path} HTTP/1.1\r\nHost: x\r\n{auth}{extra}\r\n")
}

/// Reads one response from a kept-alive connection, by its `Content-Length`.
pub(crate) fn read_response(conn: &mut BufReader<TcpStream>) -> Answer {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = conn.read_line(&mut line).expect("read a head line");
        assert!(n > 0, "the connection closed after {head:?}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let head = head.trim_end().to_string();
    let mut answer = Answer {
        status: head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status"),
        head,
        body: String::new(),
    };
    let length: usize = answer
        .header("Content-Length")
        .and_then(|v| v.parse().ok())
        .expect("a Content-Length");
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body).expect("the body");
    answer.body = String::from_utf8(body).expect("UTF-8 body");
    answer
}

/// Sends `raw` on a fresh connection and reads the whole response (the server closes).
pub(crate) fn request(addr: SocketAddr, raw: &str) -> Answer {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(raw.as_bytes()).expect("send");
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes).expect("read the response");
    let text = String::from_utf8(bytes).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A target whose status the test sets (200 until told otherwise).
fn switchable() -> (Server, Arc<AtomicU16>) {
    let status = Arc::new(AtomicU16::new(200));
    let answer = status.clone();
    let server = Server::start(move |_| Reply::status(answer.load(Ordering::SeqCst)));
    (server, status)
}

#[test]
fn serves_ahp_v1_from_the_refresh_loop() {
    let (target, status) = switchable();
    let dir = TempDir::new("serve-ahp");
    let config = http_config(&dir, &target.url("/health"));
    let serving = Serving::start(&config, &["--interval-ms", "20"]);

    let live = serving.get("/live", false);
    assert_eq!(live.status, 200);
    assert_eq!(live.json()["status"], "HEALTHY");
    let ready = serving.until_ready("first run", |a| a.status == 200);
    let v = ready.json();
    assert_eq!(
        (v["ahp_version"].as_str(), v["status"].as_str()),
        (Some("v1"), Some("HEALTHY"))
    );
    assert!(v["observed_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    for (name, value) in [
        ("Content-Type", "application/json"),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("AHP-Version", "v1"),
        ("Connection", "close"),
    ] {
        assert_eq!(ready.header(name), Some(value), "{}", ready.head);
    }
    assert!(!ready.body.contains("web"), "no names without the token");

    let detailed = serving.get("/health/dependencies", true);
    assert_eq!(detailed.status, 200);
    let evidence = &detailed.json()["evidence"];
    assert_eq!(evidence["spec_version"], "v1");
    assert_eq!(evidence["target"]["name"], "web");
    assert_eq!(evidence["checks"]["reachability"]["status"], "HEALTHY");
    let unauthorized = serving.get("/health/capabilities", false);
    assert_eq!(unauthorized.status, 401);
    assert_eq!(unauthorized.header("WWW-Authenticate"), Some("Bearer"));
    // RFC 7235: clients that lower-case the scheme, or put two spaces after it, get in.
    for scheme in ["bearer ", "BEARER  "] {
        let other = request(
            serving.addr,
            &format!(
                "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nauthorization: {scheme}{TOKEN}\r\n\r\n"
            ),
        );
        assert_eq!(other.status, 200, "{scheme:?}: {}", other.head);
    }

    // The target turns unhealthy: a later run says so, and readiness fails.
    status.store(500, Ordering::SeqCst);
    let unready = serving.until_ready("a run after the change", |a| a.status == 503);
    assert_eq!(unready.json()["status"], "UNHEALTHY");
    assert_eq!(
        serving.get("/live", false).status,
        200,
        "liveness is not health"
    );
    let metrics = serving.get("/metrics", true);
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .body
            .contains("agenthealth_target_status{target=\"web\",status=\"UNHEALTHY\"} 1\n"),
        "{}",
        metrics.body
    );

    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0), "a clean shutdown");
    assert!(took < Duration::from_secs(1), "stopped in {took:?}");
}

/// Every path is served on persistent connections (HTTP/1.1): one connection carries the
/// requests of a scraper and a kubelet alike, with no `Connection: close`, until the client
/// asks to close; HTTP/1.0 closes after one.
#[test]
fn every_path_keeps_its_connection_alive() {
    let target = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("serve-keep-alive");
    let config = http_config(&dir, &target.url("/"));
    let serving = Serving::start(&config, &["--interval-ms", "20"]);
    serving.until_ready("first run", |a| a.status == 200);
    let stream = TcpStream::connect(serving.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut conn = BufReader::new(stream);
    let paths = [
        "/live",
        "/ready",
        "/health",
        "/health/dependencies",
        "/health/capabilities",
        "/metrics",
        "/nowhere",
    ];
    for round in 0..3 {
        for path in paths {
            conn.get_mut()
                .write_all(get_head(path, true, "").as_bytes())
                .expect("send");
            let a = read_response(&mut conn);
            let want = if path == "/nowhere" { 404 } else { 200 };
            assert_eq!(a.status, want, "{path} (round {round}): {}", a.head);
            assert_eq!(a.header("Connection"), None, "{path}: {}", a.head);
        }
    }
    conn.get_mut()
        .write_all(get_head("/live", false, "Connection: close\r\n").as_bytes())
        .expect("send");
    let last = read_response(&mut conn);
    assert_eq!(last.header("Connection"), Some("close"));
    let mut rest = Vec::new();
    assert_eq!(conn.read_to_end(&mut rest).expect("closed"), 0);
    let old = request(serving.addr, "GET /live HTTP/1.0\r\n\r\n");
    assert_eq!((old.status, old.header("Connection")), (200, Some("close")));
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn the_token_never_appears_and_bad_tokens_are_refused() {
    let target = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("serve-token");
    // A target named after the token: the published document redacts it.
    let config = dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: '{TOKEN}'\n    type: http\n    endpoint: {}\n",
            target.url("/")
        ),
    );
    let serving = Serving::start(&config, &["--interval-ms", "50"]);
    serving.until_ready("first run", |a| a.status == 200);
    let mut seen = String::new();
    for path in [
        "/live",
        "/ready",
        "/health",
        "/health/dependencies",
        "/metrics",
    ] {
        let a = serving.get(path, true);
        assert_eq!(a.status, 200, "{path}");
        seen.push_str(&a.head);
        seen.push_str(&a.body);
    }
    assert!(seen.contains("[REDACTED]"), "{seen}");
    assert!(!seen.contains(TOKEN), "{seen}");
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));

    let config = config.to_string_lossy().into_owned();
    for (value, complaint) in [
        ("", "unset or empty"),
        ("short-token", "at least 16 characters"),
        ("sixteen chars with spaces", "at least 16 characters"),
    ] {
        let o = run_env(
            &["serve", &config, "--token-env", "AHP_TOKEN"],
            &[("AHP_TOKEN", value)],
        );
        o.assert_tool_failure();
        assert!(o.stderr.contains(complaint), "{}", o.stderr);
        assert!(
            value.is_empty() || !o.stderr.contains(value),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn serve_failures_are_tool_failures() {
    let dir = TempDir::new("serve-fail");
    let config = http_config(&dir, "http://127.0.0.1:1/");
    let config = config.to_string_lossy().into_owned();
    for args in [
        &["serve"][..],
        &["serve", "missing.yaml"],
        &["serve", "missing.yaml", "--unknown"],
        &["serve", "missing.yaml", "--format", "json"],
        &["serve", &config, "--listen", "example.com:80"],
        &["serve", &config, "extra.yaml"],
    ] {
        run(args).assert_tool_failure();
    }
    // The address is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let o = run(&["serve", &config, "--listen", &addr]);
    o.assert_tool_failure();
    assert!(
        o.stderr.contains(&format!("cannot listen on {addr}")),
        "{}",
        o.stderr
    );

    let help = run(&["serve", "--help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout
            .contains("usage: agenthealth serve <config.yaml|->"),
        "{}",
        help.stdout
    );
    assert!(help.stdout.contains("--listen") && help.stdout.contains("--token-env"));
    assert!(!help.stdout.contains("--interval-ms"), "hidden");
}

#[test]
fn sigterm_stops_serve_within_a_second_even_mid_run() {
    // Idle between runs.
    let target = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("serve-term");
    let config = http_config(&dir, &target.url("/"));
    let serving = Serving::start(&config, &[]);
    serving.until_ready("first run", |a| a.status == 200);
    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
    assert!(took < Duration::from_secs(1), "idle: stopped in {took:?}");

    // In the middle of a run whose target never answers (timeout_ms is 30 s).
    let silent = Server::start_silent();
    let config = http_config(&dir, &silent.url("/"));
    let serving = Serving::start(&config, &[]);
    let until = Instant::now() + Duration::from_secs(10);
    while silent.connections() == 0 {
        assert!(Instant::now() < until, "the run never reached the target");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(serving.get("/ready", false).status, 503, "no run completed");
    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
    assert!(
        took < Duration::from_secs(1),
        "mid-run: stopped in {took:?}"
    );
}

/// `--deadline` bounds each of serve's runs: a target that never answers (timeout_ms 30 s)
/// still gives a completed run, UNREACHABLE, by the deadline.
#[test]
fn each_run_ends_by_the_deadline() {
    let silent = Server::start_silent();
    let dir = TempDir::new("serve-deadline");
    let config = http_config(&dir, &silent.url("/"));
    let started = Instant::now();
    let serving = Serving::start(&config, &["--deadline", "300"]);
    let ready = serving.until_ready("a run cut by the deadline", |_| serving.runs() > 0);
    assert!(
        started.elapsed() < Duration::from_millis(300 + 1000),
        "the first run took {:?}",
        started.elapsed()
    );
    assert_eq!(ready.status, 503);
    let evidence = &serving.get("/health/dependencies", true).json()["evidence"];
    assert_eq!(evidence["status"], "UNREACHABLE", "{evidence}");
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn slow_idle_and_oversized_clients_cannot_starve_live() {
    let target = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("serve-slow");
    let config = http_config(&dir, &target.url("/"));
    let serving = Serving::start(&config, &[]);
    let addr = serving.addr;

    // 200 connections that never send a byte: more than the server keeps open.
    let idle: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(idle.len() >= 150, "only {} connections", idle.len());
    // 16 clients trickling an endless head, one byte per 20 ms.
    let stop = Arc::new(AtomicBool::new(false));
    let tricklers: Vec<_> = (0..16)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(addr) else {
                    return;
                };
                let head = b"GET /live HTTP/1.1\r\nX-Slow: ";
                if s.write_all(head).is_err() {
                    return;
                }
                while !stop.load(Ordering::SeqCst) && s.write_all(b"a").is_ok() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        })
        .collect();

    // Meanwhile, every probe is answered without waiting for a slot: a starved one would wait
    // until the 5 s head limit freed a trickler's (speed itself is `make bench`'s, not a test's).
    let mut slowest = Duration::ZERO;
    for _ in 0..50 {
        let started = Instant::now();
        let live = serving.get("/live", false);
        slowest = slowest.max(started.elapsed());
        assert_eq!(live.status, 200);
    }
    assert!(
        slowest < Duration::from_secs(4),
        "slowest /live took {slowest:?}"
    );

    // A head over 8 KiB is refused, not buffered.
    let huge = format!(
        "GET /live HTTP/1.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(9 * 1024)
    );
    let refused = request(addr, &huge);
    assert_eq!(refused.status, 431);
    assert_eq!(refused.json()["error"], "request_too_large");
    // Garbage is a 400.
    assert_eq!(request(addr, "HELLO\r\n\r\n").status, 400);

    // A head that never ends is dropped once its 5 s are up; so is the second head of a
    // kept-alive connection, timed from its first byte.
    let kept = std::thread::spawn(move || {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(15)))
            .expect("timeout");
        let mut conn = BufReader::new(stream);
        conn.get_mut()
            .write_all(b"GET /live HTTP/1.1\r\n\r\n")
            .expect("send");
        assert_eq!(read_response(&mut conn).status, 200);
        conn.get_mut()
            .write_all(b"GET /live HTTP/1.1\r\n")
            .expect("send");
        let started = Instant::now();
        let mut rest = Vec::new();
        let n = conn.read_to_end(&mut rest).unwrap_or(0);
        (n, started.elapsed())
    });
    let mut partial = TcpStream::connect(addr).expect("connect");
    partial.write_all(b"GET /live HTTP/1.1\r\n").expect("send");
    partial
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let n = partial.read(&mut buf).unwrap_or(0);
    let waited = started.elapsed();
    assert_eq!(n, 0, "closed without an answer");
    assert!(
        waited > Duration::from_secs(3) && waited < Duration::from_secs(7),
        "closed after {waited:?}"
    );
    let (n, waited) = kept.join().expect("the kept-alive client");
    assert_eq!(n, 0, "the second head got no answer");
    assert!(
        waited > Duration::from_secs(3) && waited < Duration::from_secs(7),
        "the second head was dropped after {waited:?}"
    );

    stop.store(true, Ordering::SeqCst);
    for t in tricklers {
        let _ = t.join();
    }
    drop(idle);
    assert_eq!(serving.get("/live", false).status, 200);
    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
    assert!(took < Duration::from_secs(1), "stopped in {took:?}");
}

/// With only a few file descriptors, a flood of connections makes accepting fail; the server
/// closes its oldest connections to take new ones and keeps answering.
#[test]
fn running_out_of_descriptors_does_not_stop_the_server() {
    let target = Server::start(|_| Reply::status(200));
    let dir = TempDir::new("serve-fds");
    let config = http_config(&dir, &target.url("/"));
    let serving = Serving::start_under(&["prlimit", "--nofile=32:32", "--"], &config, &[]);
    serving.until_ready("first run", |a| a.status == 200);
    let idle: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect(serving.addr).ok())
        .collect();
    assert!(idle.len() >= 60, "{}", idle.len());
    for _ in 0..20 {
        let started = Instant::now();
        assert_eq!(serving.get("/live", false).status, 200);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(1), "/live took {took:?}");
    }
    drop(idle);
    let (exit, took) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
    assert!(took < Duration::from_secs(1), "stopped in {took:?}");
}

#[test]
fn memory_and_threads_stay_flat_over_1000_runs() {
    // An HTTP target and an MCP one (a legacy session per run, its DELETE at cleanup).
    let target = Server::start(|_| Reply::status(200));
    let mcp = FakeServer::start(FakeConfig::default());
    let dir = TempDir::new("serve-rss");
    let config = dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: web\n    type: http\n    endpoint: {}\n  - name: mcp\n    type: mcp\n    endpoint: {}\n",
            target.url("/"),
            mcp.url()
        ),
    );
    let serving = Serving::start(&config, &["--interval-ms", "1"]);
    let wait_runs = |n: u64| {
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let runs = serving.runs();
            if runs >= n {
                return runs;
            }
            assert!(Instant::now() < until, "only {runs} runs");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_runs(100);
    let (rss_100, _) = serving.rss_kib_and_threads();
    let mut peak_threads = 0;
    let started = Instant::now();
    let end = loop {
        let runs = wait_runs(0);
        let (_, threads) = serving.rss_kib_and_threads();
        peak_threads = peak_threads.max(threads);
        if runs >= 1100 {
            break runs;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "only {runs} runs"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let (rss_end, _) = serving.rss_kib_and_threads();
    println!(
        "serve: {rss_100} KiB after 100 runs, {rss_end} KiB after {end}, at most {peak_threads} threads, {:?} for 1,000 runs",
        started.elapsed()
    );
    assert!(
        rss_end <= rss_100 + 1024,
        "RSS grew from {rss_100} KiB to {rss_end} KiB over 1,000 runs"
    );
    // main (HTTP), refresh loop, signals, a worker per target, their helpers.
    assert!(peak_threads <= 8, "{peak_threads} threads");
    assert!(
        mcp.sessions_created() >= 1100,
        "the MCP target ran every time"
    );
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
}

/// `serve -` reads its configuration from standard input, as `check -` does.
#[test]
fn serve_reads_its_configuration_from_stdin() {
    let fake = FakeServer::start(FakeConfig::default());
    let serving = Serving::start_from_stdin(&format!(
        "version: v1\ntargets:\n  - name: notes\n    type: mcp\n    endpoint: {}\n",
        fake.url()
    ));
    let ready = serving.until_ready("the first run", |a| a.status == 200);
    assert!(ready.body.contains("HEALTHY"), "{ready:?}");
    let (exit, _) = serving.terminate();
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn metrics_parse_with_prometheus_client() {
    let (target, status) = switchable();
    status.store(503, Ordering::SeqCst);
    let dir = TempDir::new("serve-metrics");
    let config = dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: 'web \"quoted\" \\ é'\n    type: http\n    endpoint: {}\n  - name: down\n    type: http\n    endpoint: http://127.0.0.1:1/\n",
            target.url("/")
        ),
    );
    let serving = Serving::start(&config, &["--interval-ms", "20"]);
    let until = Instant::now() + Duration::from_secs(20);
    while serving.runs() < 1 {
        assert!(Instant::now() < until, "no run");
        std::thread::sleep(Duration::from_millis(5));
    }
    let scraped = serving.get("/metrics", true);
    assert_eq!(
        scraped.header("Content-Type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let samples = parse_metrics(&scraped.body, "prometheus");
    let name = r#""web \"quoted\" \\ \u00e9""#;
    for expected in [
        format!("gauge agenthealth_target_status{{status=\"UNHEALTHY\",target={name}}} 1.0"),
        format!("gauge agenthealth_target_status{{status=\"HEALTHY\",target={name}}} 0.0"),
        "gauge agenthealth_target_status{status=\"UNREACHABLE\",target=\"down\"} 1.0".into(),
        format!(
            "gauge agenthealth_check_status{{check=\"protocol\",status=\"UNHEALTHY\",target={name}}} 1.0"
        ),
    ] {
        assert!(
            samples.contains(&expected),
            "{expected}\n--- in\n{}",
            samples.join("\n")
        );
    }
    let kinds = |prefix: &str| samples.iter().filter(|s| s.starts_with(prefix)).count();
    assert_eq!(kinds("gauge agenthealth_target_status{"), 12);
    assert_eq!(
        kinds("gauge agenthealth_target_latency_seconds{"),
        1,
        "down has none"
    );
    assert_eq!(kinds("gauge agenthealth_run_duration_seconds{}"), 1);
    assert_eq!(kinds("gauge agenthealth_last_run_timestamp_seconds{}"), 1);
    assert_eq!(kinds("counter agenthealth_runs_total{}"), 1);
    drop(serving);

    // `check --format openmetrics`: the same families, strict OpenMetrics.
    let o = run(&[
        "check",
        &config.to_string_lossy(),
        "--format",
        "openmetrics",
    ]);
    assert_eq!(
        o.code, 3,
        "the worst status: UNREACHABLE; stderr: {}",
        o.stderr
    );
    assert!(o.stdout.ends_with("# EOF\n"), "{}", o.stdout);
    let om = parse_metrics(&o.stdout, "openmetrics");
    let families = |lines: &[String]| {
        let mut names: Vec<String> = lines
            .iter()
            .filter_map(|l| l.split(['{', ' ']).nth(1).map(str::to_string))
            .collect();
        names.dedup();
        names
    };
    // The same families but the runs counter, which one run's output leaves out.
    let mut served = families(&samples);
    assert_eq!(served.pop().as_deref(), Some("agenthealth_runs_total"));
    assert_eq!(families(&om), served);
    // node_exporter's textfile collector reads the text format: it accepts the file too.
    parse_metrics(&o.stdout, "prometheus");
}

/// What `check --format openmetrics` writes for node_exporter's textfile collector is read
/// by the real tools intact: `promtool check metrics` finds nothing to say, and Debian's
/// `prometheus-node-exporter` re-exports every family with our type and help, with no
/// scrape error (a counter in the file would come back untyped, its help lost).
#[test]
fn one_runs_openmetrics_passes_promtool_and_node_exporter() {
    let fake = FakeServer::start(FakeConfig::default());
    let dir = TempDir::new("serve-textfile");
    let config = dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: notes\n    type: mcp\n    endpoint: {}\n  - name: down\n    type: http\n    endpoint: http://127.0.0.1:1/\n",
            fake.url()
        ),
    );
    let o = run(&[
        "check",
        &config.to_string_lossy(),
        "--format",
        "openmetrics",
    ]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian: apt-get install prometheus; .ci/run installs it)");
    promtool
        .stdin
        .take()
        .expect("stdin")
        .write_all(o.stdout.as_bytes())
        .expect("write to promtool");
    let checked = promtool.wait_with_output().expect("promtool");
    let said = String::from_utf8_lossy(&checked.stdout).to_string()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(
        checked.status.success() && said.is_empty(),
        "promtool: {said}"
    );

    let textfiles = dir.0.join("textfile");
    std::fs::create_dir_all(&textfiles).expect("textfile dir");
    std::fs::write(textfiles.join("agenthealth.prom"), &o.stdout).expect("write .prom");
    let mut exporter = Command::new("prometheus-node-exporter")
        .arg("--collector.disable-defaults")
        .arg("--collector.textfile")
        .arg(format!(
            "--collector.textfile.directory={}",
            textfiles.display()
        ))
        .arg("--web.listen-address=127.0.0.1:0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prometheus-node-exporter (Debian package; .ci/run installs it)");
    let mut log = BufReader::new(exporter.stderr.take().expect("stderr"));
    let address = std::iter::from_fn(|| {
        let mut line = String::new();
        (log.read_line(&mut line).ok()? > 0).then_some(line)
    })
    .find_map(|l| {
        l.contains("Listening on")
            .then(|| l.split("address=").nth(1).map(|a| a.trim().to_string()))
            .flatten()
    });
    let address = address.expect("node_exporter's `Listening on` line");
    let mut scrape = TcpStream::connect(&address).expect("connect to node_exporter");
    write!(scrape, "GET /metrics HTTP/1.0\r\nHost: {address}\r\n\r\n").expect("request");
    let mut scraped = String::new();
    scrape.read_to_string(&mut scraped).expect("scrape");
    let _ = exporter.kill();
    let _ = exporter.wait();
    assert!(
        scraped.contains("\nnode_textfile_scrape_error 0\n"),
        "{scraped}"
    );
    for family in [
        "agenthealth_target_status",
        "agenthealth_check_status",
        "agenthealth_target_latency_seconds",
        "agenthealth_run_duration_seconds",
        "agenthealth_last_run_timestamp_seconds",
    ] {
        for kind in ["# HELP", "# TYPE"] {
            let ours = o
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("{kind} {family} ")))
                .unwrap_or_else(|| panic!("{kind} {family} in our output"));
            assert!(
                scraped.lines().any(|l| l == ours),
                "{ours}\n--- not in\n{scraped}"
            );
        }
    }
    assert!(!scraped.contains("untyped"), "{scraped}");
}
