//! The run deadline and the hostile behaviours an exec probe meets: `--deadline` and
//! `deadline_ms` end everything (checks, retries, dependencies, cleanup) and the document is
//! still printed; doctor names the deadline setting its user can change (`--timeout` ad
//! hoc, `timeout_ms` in a file), and a check a signal cut is cancelled, not timed out; a
//! silent session costs one deadline, not one per check; a host out of descriptors or
//! address space gets a result that says so, never one that blames the target. Wall times
//! are asserted with the usual second of slack for a loaded machine; `make bench` measures
//! the tight bound.

use std::time::Duration;

use crate::util::{Outcome, TempDir, bin, command, run};
use agenthealth_testkit::fake_mcp::{FakeServer, preset};
use agenthealth_testkit::fixtures::{fixture, python_bin};
use agenthealth_testkit::http_server::{Reply, Server};

/// `o` returned within `ms` plus a second.
fn within(o: &Outcome, ms: u64) {
    assert!(
        o.elapsed < Duration::from_millis(ms + 1000),
        "took {:?} (bound {ms} ms + 1 s)",
        o.elapsed
    );
}

/// A server that answers `HEAD` and never a `POST`: with `--timeout 5000 --deadline 500` the
/// whole run ends by the deadline, the checks it cut say so, and doctor names `--deadline`.
#[test]
fn the_deadline_flag_ends_a_run_that_timeouts_would_not() {
    let Some(cfg) = preset("hang") else {
        panic!("preset hang")
    };
    let s = FakeServer::start(cfg);
    let url = s.url();
    let o = run(&[
        "ping",
        "mcp",
        &url,
        "--timeout",
        "5000",
        "--deadline",
        "500",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    within(&o, 500);
    let v = o.json();
    assert_eq!(v["checks"]["reachability"]["status"], "HEALTHY");
    let auth = &v["checks"]["authentication"];
    assert_eq!(auth["status"], "UNREACHABLE", "{auth}");
    assert_eq!(auth["message"], "communication failed");
    // The deadline left no time for protocol to start.
    assert_eq!(v["checks"]["protocol"]["status"], "UNREACHABLE");
    assert_eq!(
        v["checks"]["protocol"]["message"],
        "run deadline reached before the check could run"
    );
    let doctor = run(&[
        "doctor",
        "mcp",
        &url,
        "--timeout",
        "5000",
        "--deadline",
        "500",
        "--color",
        "never",
    ]);
    within(&doctor, 500);
    assert!(
        doctor.stdout.contains("that --deadline is adequate"),
        "{}",
        doctor.stdout
    );
}

/// A silent endpoint's advice names the setting its user can change (issue 12): an ad-hoc
/// target's deadline comes from `--timeout`, a configured one's from `timeout_ms`, and each
/// is told to check that one and never the other.
#[test]
fn doctor_names_the_timeout_its_user_can_set() {
    let silent = Server::start_silent();
    let url = silent.url("/");
    for kind in ["http", "mcp"] {
        let o = run(&["doctor", kind, &url, "--timeout", "300", "--color", "never"]);
        assert_eq!(o.code, 3, "{kind}: {}", o.stdout);
        assert!(
            o.stdout.contains(
                "  - reachability: no response within 300 ms; check that the service is up and reachable, and that --timeout is adequate\n"
            ),
            "{kind}: {}",
            o.stdout
        );
        assert!(!o.stdout.contains("timeout_ms"), "{kind}: {}", o.stdout);
    }
    let dir = TempDir::new("deadline-advice");
    let config = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: silent\n    type: http\n    endpoint: {url}\n    timeout_ms: 300\n"
        ),
    );
    let o = run(&["doctor", &config.display().to_string(), "--color", "never"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(
        o.stdout.contains("and that timeout_ms is adequate\n"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("--timeout"), "{}", o.stdout);
}

/// A check the run's cancellation cut (SIGTERM while `initialize` waits) is cancelled, not
/// timed out: UNKNOWN with the cancellation's message and no deadline in its evidence, and
/// doctor says the run was cancelled and names no timeout to raise.
#[test]
fn a_cancelled_check_is_cancelled_not_timed_out() {
    let Some(cfg) = preset("hang") else {
        panic!("preset hang")
    };
    let s = FakeServer::start(cfg);
    let url = s.url();
    // Runs `args`, and sends SIGTERM once the server holds a POST of this run.
    let cancelled = |args: &[&str]| -> Outcome {
        let before = s.count_http("POST");
        let child = command(args, &[]).spawn().expect("spawn agenthealth");
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while s.count_http("POST") == before {
            assert!(std::time::Instant::now() < until, "no POST arrived");
            std::thread::yield_now();
        }
        let started = std::time::Instant::now();
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
        let out = child.wait_with_output().expect("wait");
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            elapsed: started.elapsed(),
        }
    };
    let timeout = ["--timeout", "60000"];
    let o = cancelled(&[&["ping", "mcp", &url, "--format", "json"][..], &timeout].concat());
    assert_eq!(o.code, 5, "{}", o.stdout);
    within(&o, 0);
    let v = o.json();
    let checks = v["checks"].as_object().expect("checks");
    let cut: Vec<&serde_json::Value> = checks
        .values()
        .filter(|c| c["status"] != "HEALTHY")
        .collect();
    assert!(!cut.is_empty(), "{v}");
    for c in cut {
        assert_eq!(c["status"], "UNKNOWN", "{c}");
        assert_eq!(c["message"], "check cancelled before it completed", "{c}");
        assert!(c["evidence"]["deadline_ms"].is_null(), "{c}");
    }
    let o = cancelled(&[&["doctor", "mcp", &url, "--color", "never"][..], &timeout].concat());
    assert_eq!(o.code, 5, "{}", o.stdout);
    assert!(
        o.stdout
            .contains(": the run was cancelled (a signal) before this check completed\n"),
        "{}",
        o.stdout
    );
    assert!(
        !o.stdout.contains("timeout") && !o.stdout.contains("communication failed"),
        "{}",
        o.stdout
    );
}

/// Without a run deadline, the same server costs one attempt's deadline: the protocol check
/// reports the silence authentication met instead of waiting for it again.
#[test]
fn a_silent_session_costs_one_deadline_not_one_per_check() {
    let Some(cfg) = preset("hang") else {
        panic!("preset hang")
    };
    let s = FakeServer::start(cfg);
    let o = run(&[
        "ping",
        "mcp",
        &s.url(),
        "--timeout",
        "300",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(
        o.elapsed < Duration::from_millis(2 * 300),
        "{:?}",
        o.elapsed
    );
    let v = o.json();
    assert_eq!(
        v["checks"]["protocol"]["evidence"]["shared_timeout"],
        "authentication"
    );
    assert_eq!(v["checks"]["protocol"]["evidence"]["deadline_ms"], 300.0);
    assert_eq!(s.count_http("POST"), 1, "one request waited, once");
}

/// `deadline_ms` in the file bounds a graph of hostile targets — a silent socket retried
/// three times, a silent stdio server, a dependency behind them — and leaves no process.
#[test]
fn deadline_ms_bounds_a_graph_retries_and_stdio_servers() {
    let silent = Server::start_silent();
    let dir = TempDir::new("deadline-graph");
    let mark = format!("agenthealth-deadline-{}", std::process::id());
    let config = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ndeadline_ms: 400\ntargets:\n\
             - name: silent\n  type: http\n  endpoint: {url}\n  timeout_ms: 5000\n  retries: 3\n\
             \x20 dependencies:\n    - name: below\n      type: http\n      endpoint: {url}\n      timeout_ms: 5000\n\
             - name: stdio\n  type: mcp\n  endpoint: stdio://silent\n  timeout_ms: 5000\n  mcp:\n\
             \x20   transport: stdio\n    stdio:\n      command: {py}\n      args: [{script}, {mark}]\n",
            url = silent.url("/"),
            py = python_bin(),
            script = fixture("silent.py"),
        ),
    );
    let config = config.display().to_string();
    let o = run(&["check", &config, "--format", "json"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    within(&o, 400);
    let v = o.json();
    for r in v["results"].as_array().expect("results") {
        assert_eq!(r["status"], "UNREACHABLE", "{r}");
    }
    agenthealth_testkit::processes::until_none(
        Duration::from_secs(2),
        "stdio servers survive",
        || marked(&mark),
    );
    let doctor = run(&["doctor", &config, "--color", "never"]);
    within(&doctor, 400);
    assert!(doctor.stdout.contains("deadline_ms"), "{}", doctor.stdout);
}

/// Live processes whose command line carries `needle`.
fn marked(needle: &str) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with(['Z', 'X']));
        if !zombie
            && cmdline
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
        {
            live.push(pid);
        }
    }
    live
}

/// A `HEAD` answered with bytes that are not HTTP is a malformed answer: UNHEALTHY, for the
/// HTTP adapter and for MCP's reachability alike.
#[test]
fn a_head_answered_with_non_http_bytes_is_unhealthy() {
    let s = Server::start(|_| Reply::Close(b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()));
    for kind in ["http", "mcp"] {
        let o = run(&["ping", kind, &s.url("/mcp"), "--format", "json"]);
        assert_eq!(o.code, 2, "{kind}: {}", o.stdout);
        let reach = &o.json()["checks"]["reachability"];
        assert_eq!(reach["status"], "UNHEALTHY", "{kind}: {reach}");
        assert_eq!(reach["evidence"]["failure"], "protocol", "{kind}");
    }
}

/// Runs the binary under `ulimit` settings through a shell, as an operator would.
fn limited(ulimit: &str, args: &[&str]) -> Outcome {
    let started = std::time::Instant::now();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit {ulimit}; exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

/// Out of file descriptors: a stdio server cannot get its pipes, a second connection cannot
/// get a socket. Both are UNKNOWN naming the local resource, never UNREACHABLE and never
/// the command's or the server's fault.
#[test]
fn running_out_of_descriptors_is_unknown_and_names_the_resource() {
    // Four descriptors: stdio, and one for the loader to open libraries with.
    let script = fixture("silent.py");
    let o = limited(
        "-n 4",
        &[
            "ping",
            "mcp",
            "--format",
            "json",
            "--stdio",
            "--",
            python_bin(),
            &script,
        ],
    );
    assert_eq!(o.code, 5, "{}{}", o.stdout, o.stderr);
    let reach = &o.json()["checks"]["reachability"];
    assert_eq!(reach["status"], "UNKNOWN", "{reach}");
    assert_eq!(reach["evidence"]["local_resource"], "file_descriptors");

    // Two targets at once on a server that holds its connection: whichever connects second
    // finds no descriptor left.
    let s = Server::start(|_| Reply::HangBeforeHead);
    let dir = TempDir::new("fds");
    let config = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: {url}\n    timeout_ms: 500\n\
             \x20 - name: b\n    type: http\n    endpoint: {url}\n    timeout_ms: 500\n",
            url = s.url("/")
        ),
    );
    let o = limited(
        "-n 4",
        &["check", &config.display().to_string(), "--format", "json"],
    );
    assert_eq!(o.code, 5, "{}{}", o.stdout, o.stderr);
    let results = o.json()["results"].as_array().cloned().unwrap_or_default();
    let local: Vec<_> = results
        .iter()
        .filter(|r| r["checks"]["reachability"]["evidence"]["local_resource"] == "file_descriptors")
        .collect();
    assert_eq!(local.len(), 1, "{}", o.stdout);
    assert_eq!(local[0]["status"], "UNKNOWN");
}

/// A 24 MB address space (`ulimit -v`) is enough for sixteen stdio targets at once: thread
/// stacks are sized for what they do, and the run prints its document instead of aborting.
#[test]
fn a_small_address_space_still_runs() {
    let dir = TempDir::new("small-as");
    let mut text = String::from("version: v1\nconcurrency: 16\ntargets:\n");
    for n in 0..16 {
        text.push_str(&format!(
            "  - name: s{n}\n    type: mcp\n    endpoint: stdio://s{n}\n    timeout_ms: 300\n    mcp:\n\
             \x20     transport: stdio\n      stdio:\n        command: {py}\n        args: [{script}]\n",
            py = python_bin(),
            script = fixture("silent.py"),
        ));
    }
    let config = dir.file("c.yaml", &text).display().to_string();
    let o = limited("-v 24576", &["check", &config, "--format", "json"]);
    assert!(matches!(o.code, 3 | 5), "exit {}: {}", o.code, o.stderr);
    assert_eq!(o.json()["results"].as_array().map(Vec::len), Some(16));
}

/// A configuration nested 40,000 levels deep in flow style is refused at once, with a line
/// that says where, and no parse that grows with the square of the depth.
#[test]
fn deeply_nested_configuration_is_refused_in_milliseconds() {
    let dir = TempDir::new("deep");
    let deep = format!(
        "version: v1\ntargets: {}{}\n",
        "[".repeat(40_000),
        "]".repeat(40_000)
    );
    let path = dir.file("deep.yaml", &deep).display().to_string();
    let o = run(&["validate", &path]);
    o.assert_tool_failure();
    assert_eq!(
        o.stderr,
        "agenthealth: invalid configuration: targets: nesting too deep; at most 128 levels of \
         lists and mappings (line 2)\n"
    );
    assert!(o.elapsed < Duration::from_millis(500), "{:?}", o.elapsed);
}
