//! The built binary against stdio MCP servers: hostile children, the fake server's eras and
//! faults (`tests/fixtures/stdio/fake_server.py`), the ad-hoc `--stdio --` form, and the real
//! servers `.ci/interop-setup` installs.
//!
//! Every run asserts its status, its exit code and its time (the deadlines it was given plus
//! [`MARGIN`]), and that nothing it started is left: the process group recorded in the
//! child's `PIDFILE` has no live member, and no live process carries the run's marker
//! argument in its command line (`/proc`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::interop::{LEGACY_REVISIONS, MODERN_REVISION, StdioKind, StdioServer};
use crate::process::{MARGIN, assert_group_dead, fixture, fixtures, live_members, python_bin};
use crate::util::{Outcome, TempDir, command, run_env};

/// What a stdio target runs, and how it is checked.
#[derive(Clone)]
struct Spec {
    command: String,
    args: Vec<String>,
    directory: Option<String>,
    timeout_ms: u64,
    pin: Option<&'static str>,
    checks: Option<&'static str>,
    /// Extra `stdio.env` entries (child name, host name).
    env: Vec<(&'static str, &'static str)>,
    /// Extra target-level lines, e.g. `retries: 3`.
    target: Vec<String>,
    /// The `mcp.functional` block: tool, `arguments_json`, `expect` lines.
    functional: Option<Functional>,
}

/// An `mcp.functional` block.
#[derive(Clone)]
struct Functional {
    tool: String,
    arguments_json: Option<String>,
    /// Lines under `expect:`, e.g. `fresh_within_s: {/observed_at: 300}`.
    expect: Vec<String>,
}

impl Spec {
    /// A python fixture script with arguments.
    fn python(script: &str, args: &[&str]) -> Spec {
        let mut all = vec![fixture(script)];
        all.extend(args.iter().map(|a| a.to_string()));
        Spec {
            command: python_bin().to_string(),
            args: all,
            directory: None,
            timeout_ms: 5_000,
            pin: None,
            checks: None,
            env: Vec::new(),
            target: Vec::new(),
            functional: None,
        }
    }

    /// The fake MCP server with options.
    fn fake(args: &[&str]) -> Spec {
        Spec::python("fake_server.py", args)
    }

    fn command(command: &str) -> Spec {
        Spec {
            command: command.to_string(),
            args: Vec::new(),
            ..Spec::fake(&[])
        }
    }

    fn timeout(mut self, ms: u64) -> Spec {
        self.timeout_ms = ms;
        self
    }

    fn pin(mut self, version: &'static str) -> Spec {
        self.pin = Some(version);
        self
    }

    fn checks(mut self, checks: &'static str) -> Spec {
        self.checks = Some(checks);
        self
    }

    /// Calls `tool` with `arguments_json` (as written, `None` for the default) and the
    /// `expect` lines, with the checks `[protocol, capability, functional, latency]`.
    fn call(mut self, tool: &str, arguments_json: Option<&str>, expect: &[&str]) -> Spec {
        self.checks = Some("[protocol, capability, functional, latency]");
        self.functional = Some(Functional {
            tool: tool.to_string(),
            arguments_json: arguments_json.map(str::to_string),
            expect: expect.iter().map(|e| e.to_string()).collect(),
        });
        self
    }

    fn target(mut self, line: &str) -> Spec {
        self.target.push(line.to_string());
        self
    }
}

/// One run's scratch space: config, `PIDFILE`, the fake server's log, and the marker.
struct Case {
    dir: TempDir,
    mark: String,
}

/// A YAML (JSON-compatible) double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

impl Case {
    fn new(tag: &str) -> Case {
        let dir = TempDir::new(&format!("stdio-{tag}"));
        // Unique to this case; it is in the children's environment (the `PIDFILE` path) and,
        // for the fixtures, in their command line.
        let mark = dir.0.display().to_string();
        Case { dir, mark }
    }

    fn pidfile(&self) -> PathBuf {
        self.dir.0.join("pids")
    }

    fn log(&self) -> PathBuf {
        self.dir.0.join("log")
    }

    /// The fake server's log lines (methods received, `eof`, `answers ok`).
    fn logged(&self) -> Vec<String> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The `tools/call` requests the fake server received, each as its raw line.
    fn calls(&self) -> Vec<String> {
        self.logged()
            .iter()
            .filter_map(|l| l.strip_prefix("raw "))
            .map(str::to_string)
            .collect()
    }

    /// The pids the child (and its grandchild) recorded.
    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.pidfile())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The configuration for `spec`, with `PIDFILE` mapped and, for our fixtures, the marker
    /// appended to the arguments (the fake server gets `--log` and `--mark`).
    fn config(&self, spec: &Spec) -> PathBuf {
        let mut args: Vec<String> = spec.args.clone();
        let fixture = args.first().is_some_and(|a| a.starts_with(&fixtures()))
            || spec.command.starts_with(&fixtures());
        if args.first().is_some_and(|a| a.ends_with("fake_server.py")) {
            args.push("--log".into());
            args.push(self.log().display().to_string());
            args.push("--mark".into());
        }
        if fixture {
            args.push(self.mark.clone());
        }
        let args = args.iter().map(|a| q(a)).collect::<Vec<_>>().join(", ");
        let mut y = String::from("version: v1\ntargets:\n  - name: server\n    type: mcp\n");
        y.push_str("    endpoint: stdio://server\n");
        y.push_str(&format!("    timeout_ms: {}\n", spec.timeout_ms));
        if let Some(checks) = spec.checks {
            y.push_str(&format!("    checks: {checks}\n"));
        }
        for line in &spec.target {
            y.push_str(&format!("    {line}\n"));
        }
        y.push_str("    mcp:\n      transport: stdio\n");
        if let Some(pin) = spec.pin {
            y.push_str(&format!("      protocol_version: {}\n", q(pin)));
        }
        y.push_str(&format!(
            "      stdio:\n        command: {}\n        args: [{args}]\n",
            q(&spec.command)
        ));
        if let Some(d) = &spec.directory {
            y.push_str(&format!("        directory: {}\n", q(d)));
        }
        y.push_str("        env:\n          PIDFILE: AH_TEST_PIDFILE\n");
        for (child, host) in &spec.env {
            y.push_str(&format!("          {child}: {host}\n"));
        }
        if let Some(f) = &spec.functional {
            y.push_str(&format!(
                "      functional:\n        tool: {}\n        safe: true\n",
                q(&f.tool)
            ));
            if let Some(args) = &f.arguments_json {
                y.push_str(&format!("        arguments_json: {}\n", q(args)));
            }
            if !f.expect.is_empty() {
                y.push_str("        expect:\n");
                for line in &f.expect {
                    y.push_str(&format!("          {line}\n"));
                }
            }
        }
        self.dir.file("agenthealth.yaml", &y)
    }

    /// `agenthealth check --format json` on `spec`, with `env` for agenthealth itself.
    fn check(&self, spec: &Spec, env: &[(&str, &str)]) -> Outcome {
        let config = self.config(spec);
        let pidfile = self.pidfile().display().to_string();
        let mut all = vec![("AH_TEST_PIDFILE", pidfile.as_str())];
        all.extend_from_slice(env);
        let config = config.display().to_string();
        run_env(&["check", &config, "--format", "json"], &all)
    }

    /// `agenthealth doctor --color never` on `spec`.
    fn doctor(&self, spec: &Spec) -> Outcome {
        let config = self.config(spec).display().to_string();
        let pidfile = self.pidfile().display().to_string();
        run_env(
            &["doctor", &config, "--color", "never"],
            &[("AH_TEST_PIDFILE", pidfile.as_str())],
        )
    }

    /// Asserts that nothing this case started is alive: the recorded group, and any process
    /// with the marker in its command line or environment.
    fn assert_nothing_left(&self) {
        if let Some(&leader) = self.pids().first() {
            assert_group_dead(leader);
        }
        assert_unmarked(&self.mark);
    }
}

/// Asserts that no live process carries `needle` (see [`marked`]). A killed process needs a
/// moment to finish dying, so the condition is polled for up to [`MARGIN`]; our fixtures that
/// could leak never exit by themselves.
fn assert_unmarked(needle: &str) {
    crate::util::until_none(MARGIN, "processes of this run survive", || marked(needle));
}

/// Live (not zombie) processes whose command line or environment contains `needle`.
fn marked(needle: &str) -> Vec<u32> {
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return live;
    };
    let has = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle.as_bytes());
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if !(has(&cmdline) || has(&environ)) {
            continue;
        }
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| matches!(s[i + 1..].trim_start().chars().next(), Some('Z' | 'X')))
            })
            .unwrap_or(true);
        if !zombie {
            live.push(pid);
        }
    }
    live
}

/// Reports a run's time (visible with `--nocapture`) and checks it against `deadlines` plus
/// [`MARGIN`].
fn within(name: &str, o: &Outcome, deadlines: Duration) {
    let bound = deadlines + MARGIN;
    eprintln!("[stdio] {name}: {:?} (bound {bound:?})", o.elapsed);
    assert!(
        o.elapsed <= bound,
        "{name} took {:?}, bound {bound:?}",
        o.elapsed
    );
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The check `dim` of a single-target JSON document.
fn check<'a>(v: &'a Value, dim: &str) -> &'a Value {
    &v["checks"][dim]
}

fn evidence<'a>(v: &'a Value, dim: &str, key: &str) -> &'a Value {
    &v["checks"][dim]["evidence"][key]
}

/// Runs `spec` and asserts the exit code and the status of `dim` (and its code, if any).
fn expect(
    name: &str,
    spec: &Spec,
    exit: i32,
    dim: &str,
    status: &str,
    code: Option<&str>,
    deadlines: Duration,
) -> (Case, Value) {
    let case = Case::new(name);
    let o = case.check(spec, &[]);
    assert_eq!(o.code, exit, "{name}: {}\n{}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(check(&v, dim)["status"], status, "{name}: {}", o.stdout);
    if let Some(code) = code {
        assert_eq!(check(&v, dim)["code"], code, "{name}: {}", o.stdout);
    }
    within(name, &o, deadlines);
    case.assert_nothing_left();
    (case, v)
}

// ------------------------------------------------------------------ hostile children

#[test]
fn a_child_that_exits_immediately_is_unreachable_with_its_status() {
    let spec = Spec::command(&fixture("exit.sh"));
    let (case, v) = expect(
        "exits",
        &spec,
        3,
        "reachability",
        "UNREACHABLE",
        Some("mcp_process"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "exit_code"), 3);
    assert_eq!(case.pids().len(), 1, "started once");
}

/// The other ways a process can end its output before answering: killed by a signal, and
/// closing stdout while it keeps running, are UNREACHABLE `mcp_process` with the evidence
/// to match, and doctor says it in words; ending part-way through a line is a broken answer.
#[test]
fn a_child_killed_by_a_signal_or_closing_stdout_is_unreachable_with_how() {
    let (_, v) = expect(
        "killed",
        &Spec::command(&fixture("killed.sh")),
        3,
        "reachability",
        "UNREACHABLE",
        Some("mcp_process"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "exit_signal"), 9);
    let (case, v) = expect(
        "closes-stdout",
        &Spec::command(&fixture("closes_stdout.sh")),
        3,
        "reachability",
        "UNREACHABLE",
        Some("mcp_process"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "process_running"), true);
    assert_eq!(case.pids().len(), 1);
    // Part of a line, then the end: not an exit before answering but a broken answer.
    let (_, v) = expect(
        "half-answer",
        &Spec::command(&fixture("half_answer.sh")),
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_protocol"),
        ms(5_000),
    );
    assert_eq!(
        evidence(&v, "reachability", "protocol_error"),
        "output ended without a response"
    );
    for (script, says) in [
        (
            "killed.sh",
            "the server process was killed by signal 9 before answering",
        ),
        (
            "closes_stdout.sh",
            "the server process closed its output before answering",
        ),
    ] {
        let o = run_env(
            &[
                "doctor",
                "mcp",
                "--stdio",
                "--color",
                "never",
                "--",
                &fixture(script),
            ],
            &[],
        );
        assert_eq!(o.code, 3, "{}", o.stdout);
        assert!(o.stdout.contains(says), "{}", o.stdout);
    }
}

#[test]
fn a_child_that_never_writes_is_unreachable_at_the_deadline() {
    let spec = Spec::python("silent.py", &[]).timeout(500);
    let (_, v) = expect(
        "silent",
        &spec,
        3,
        "reachability",
        "UNREACHABLE",
        None,
        ms(500),
    );
    assert_eq!(check(&v, "reachability")["message"], "communication failed");
}

#[test]
fn a_partial_line_then_silence_is_unknown_at_the_deadline() {
    let spec = Spec::python("partial.py", &[]).timeout(500);
    let (_, v) = expect(
        "partial",
        &spec,
        5,
        "reachability",
        "UNKNOWN",
        None,
        ms(500),
    );
    assert_eq!(check(&v, "reachability")["message"], "incomplete response");
}

#[test]
fn an_unterminated_ten_mib_line_is_unknown_limit() {
    let spec = Spec::python("long_line.py", &[]).timeout(5_000);
    let (_, v) = expect(
        "long-line",
        &spec,
        5,
        "reachability",
        "UNKNOWN",
        Some("mcp_limit"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "limit"), "line over 1 MiB");
}

/// At most 1 MiB of lines, notifications included, may arrive while waiting for one
/// response: 15 notification lines of 64 KiB before each answer pass, 16 (exactly 1 MiB,
/// and then the answer) are UNKNOWN `mcp_limit` — though no single line is too long.
#[test]
fn more_than_one_mib_of_notifications_before_a_response_is_unknown_limit() {
    expect(
        "notify-960k",
        &Spec::fake(&["--notify-kib", "960"]),
        0,
        "capability",
        "HEALTHY",
        None,
        ms(4 * 5_000),
    );
    let (_, v) = expect(
        "notify-1m",
        &Spec::fake(&["--notify-kib", "1024"]),
        5,
        "reachability",
        "UNKNOWN",
        Some("mcp_limit"),
        ms(5_000),
    );
    assert_eq!(
        evidence(&v, "reachability", "limit"),
        "output over 1 MiB before the response"
    );
}

#[test]
fn a_child_that_floods_stderr_is_healthy() {
    let spec = Spec::fake(&["--stderr-flood-mib", "32"]);
    expect(
        "stderr-flood",
        &spec,
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(5_000),
    );
}

#[test]
fn a_child_that_ignores_sigterm_and_its_input_closing_is_killed_at_the_end() {
    let spec = Spec::fake(&["--ignore-term"]);
    let (case, _) = expect(
        "ignore-term",
        &spec,
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(5_000),
    );
    assert!(
        case.logged().contains(&"eof".to_string()),
        "stdin was closed"
    );
}

#[test]
fn a_grandchild_holding_stdout_and_ignoring_sigterm_dies_with_the_group() {
    let spec = Spec::fake(&["--grandchild"]);
    let (case, _) = expect(
        "grandchild",
        &spec,
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(5_000),
    );
    assert_eq!(case.pids().len(), 2, "the child and its grandchild");
}

#[test]
fn a_silent_child_with_a_grandchild_is_unreachable_and_leaves_nothing() {
    let spec = Spec::fake(&["--grandchild", "--silent-on", "server/discover"]).timeout(1_000);
    let (case, _) = expect(
        "grandchild-silent",
        &spec,
        3,
        "reachability",
        "UNREACHABLE",
        None,
        ms(1_000),
    );
    assert_eq!(case.pids().len(), 2);
}

#[test]
fn server_requests_are_answered_in_a_legacy_session() {
    let spec = Spec::fake(&["--era", "legacy", "--server-request"]);
    let (case, _) = expect(
        "server-request",
        &spec,
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(5_000),
    );
    assert!(
        case.logged().contains(&"answers ok".to_string()),
        "ping answered with {{}} and sampling with -32601: {:?}",
        case.logged()
    );
}

#[test]
fn a_server_request_during_a_stateless_exchange_is_malformed() {
    let spec = Spec::fake(&["--era", "modern", "--server-request"]).timeout(2_000);
    let (_, v) = expect(
        "server-request-modern",
        &spec,
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_protocol"),
        ms(2_000),
    );
    assert_eq!(
        evidence(&v, "reachability", "protocol_error"),
        "server request on a stateless exchange"
    );
}

#[test]
fn an_answer_with_the_wrong_id_is_unhealthy() {
    let spec = Spec::fake(&["--wrong-id"]);
    let (_, v) = expect(
        "wrong-id",
        &spec,
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_protocol"),
        ms(5_000),
    );
    assert_eq!(
        evidence(&v, "reachability", "protocol_error"),
        "response id does not match"
    );
}

#[test]
fn banner_text_before_json_is_unhealthy() {
    for (name, spec) in [
        ("banner-fake", Spec::fake(&["--banner"])),
        ("banner", Spec::python("banner.py", &[])),
    ] {
        let (_, v) = expect(
            name,
            &spec,
            2,
            "reachability",
            "UNHEALTHY",
            Some("mcp_protocol"),
            ms(5_000),
        );
        assert_eq!(
            evidence(&v, "reachability", "protocol_error"),
            "non-json line on stdout"
        );
    }
}

#[test]
fn a_child_that_exits_mid_run_reports_its_status_on_that_check() {
    let spec = Spec::fake(&["--exit-on", "tools/list"]);
    let (_, v) = expect(
        "exit-mid-run",
        &spec,
        3,
        "capability",
        "UNREACHABLE",
        Some("mcp_process"),
        ms(4 * 5_000),
    );
    assert_eq!(check(&v, "protocol")["status"], "HEALTHY");
    assert_eq!(evidence(&v, "capability", "exit_code"), 4);
}

// ------------------------------------------------------------------ protocol selection

#[test]
fn a_modern_answer_keeps_the_modern_era() {
    let (case, v) = expect(
        "modern",
        &Spec::fake(&["--era", "modern"]),
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(4 * 5_000),
    );
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
    assert_eq!(
        evidence(&v, "protocol", "negotiated_version"),
        MODERN_REVISION
    );
    assert!(evidence(&v, "protocol", "fallback").is_null());
    let log = case.logged();
    assert!(!log.iter().any(|m| m == "initialize"), "{log:?}");
    assert_eq!(log.iter().filter(|m| *m == "server/discover").count(), 1);
}

#[test]
fn an_unrecognised_rpc_error_falls_back_to_legacy() {
    for code in ["-32601", "-32602", "-32000", "-32600"] {
        let spec = Spec::fake(&["--era", "legacy", "--discover-error", code]);
        let (case, v) = expect(
            &format!("fallback{code}"),
            &spec,
            0,
            "protocol",
            "HEALTHY",
            None,
            ms(4 * 5_000),
        );
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{code}");
        assert_eq!(evidence(&v, "protocol", "fallback"), true);
        assert_eq!(
            evidence(&v, "protocol", "discover_rpc_code").to_string(),
            code
        );
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), "2025-11-25");
        let log = case.logged();
        assert_eq!(
            &log[..3],
            ["server/discover", "initialize", "notifications/initialized"],
            "one handshake for the whole run"
        );
    }
}

#[test]
fn a_modern_error_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy", "--discover-error", "-32022"]);
    let (case, v) = expect(
        "modern-error",
        &spec,
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_version"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "rpc_code"), -32022);
    assert!(!case.logged().iter().any(|m| m == "initialize"));
}

#[test]
fn a_discovery_timeout_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy", "--discover-hang"]).timeout(600);
    let (case, _) = expect(
        "discover-timeout",
        &spec,
        3,
        "reachability",
        "UNREACHABLE",
        None,
        ms(600),
    );
    assert_eq!(case.logged(), ["server/discover"]);
}

/// Discovery's deadline includes the cold start: the process starts inside the first
/// attempt, so a server that needs longer than the deadline to start is UNREACHABLE at that
/// deadline (never later, and never a downgrade); one that starts within it is HEALTHY, and
/// `latency_ms` (reachability) counts its start-up.
#[test]
fn the_deadline_includes_the_cold_start() {
    let spec = Spec::fake(&["--startup-delay-ms", "3000"]).timeout(500);
    let (case, _) = expect(
        "cold-start-late",
        &spec,
        3,
        "reachability",
        "UNREACHABLE",
        None,
        ms(500),
    );
    assert!(case.logged().is_empty(), "{:?}", case.logged());
    let spec = Spec::fake(&["--startup-delay-ms", "400"]).timeout(2_000);
    let (_, v) = expect(
        "cold-start",
        &spec,
        0,
        "reachability",
        "HEALTHY",
        None,
        ms(4 * 2_000),
    );
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
    let latency = v["latency_ms"].as_f64().unwrap_or_default();
    assert!(
        latency >= 400.0,
        "latency_ms {latency} excludes the start-up"
    );
}

#[test]
fn a_slow_modern_server_is_not_downgraded() {
    // Upstream §17 J60: 700 ms before every reply, the default 5 s deadline.
    let spec = Spec::fake(&["--era", "both", "--delay-ms", "700"]);
    let (_, v) = expect(
        "slow-modern",
        &spec,
        0,
        "protocol",
        "HEALTHY",
        None,
        ms(4 * 5_000),
    );
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
}

#[test]
fn a_legacy_pin_skips_discovery() {
    // Upstream §17 J62: a server that never answers discovery is healthy when pinned.
    for pin in LEGACY_REVISIONS {
        let spec = Spec::fake(&["--discover-hang"]).pin(pin);
        let (case, v) = expect(
            &format!("pin-{pin}"),
            &spec,
            0,
            "protocol",
            "HEALTHY",
            None,
            ms(4 * 5_000),
        );
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
        assert!(evidence(&v, "protocol", "fallback").is_null());
        assert!(!case.logged().iter().any(|m| m == "server/discover"));
    }
}

#[test]
fn a_modern_pin_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy"]).pin(MODERN_REVISION);
    let (case, v) = expect(
        "pin-modern",
        &spec,
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_rpc"),
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "rpc_code"), -32601);
    assert!(!case.logged().iter().any(|m| m == "initialize"));
}

#[test]
fn a_legacy_pin_the_server_does_not_speak_is_a_version_mismatch() {
    let spec = Spec::fake(&["--era", "legacy", "--versions", "2025-11-25"]).pin("2025-03-26");
    expect(
        "pin-mismatch",
        &spec,
        2,
        "reachability",
        "UNHEALTHY",
        Some("mcp_version"),
        ms(5_000),
    );
}

// ------------------------------------------------------------------ process and environment

#[test]
fn one_process_serves_every_dimension() {
    let spec = Spec::fake(&["--notify"])
        .checks("[reachability, authentication, protocol, capability, latency]");
    let (case, v) = expect(
        "one-process",
        &spec,
        0,
        "capability",
        "HEALTHY",
        None,
        ms(4 * 5_000),
    );
    assert_eq!(case.pids().len(), 1, "one child per target run");
    let log = case.logged();
    assert_eq!(log.iter().filter(|m| *m == "server/discover").count(), 1);
    for list in ["tools/list", "resources/list", "prompts/list"] {
        assert_eq!(log.iter().filter(|m| *m == list).count(), 1, "{log:?}");
    }
    assert_eq!(
        log.last().map(String::as_str),
        Some("eof"),
        "stdin closed at the end"
    );
    assert_eq!(evidence(&v, "capability", "tools_count"), 1);
    let reach = check(&v, "reachability");
    assert!(reach["steps"].is_null(), "no HTTP stages: {reach}");
    assert!(v["latency_ms"].as_f64().is_some_and(|l| l > 0.0));
}

/// An attempt that times out discards its process (upstream §17 N161). A `tools/list` that
/// got no byte is UNREACHABLE (the session answering earlier is no answer to it), and the
/// later check shares that outcome instead of starting a process to wait a second deadline.
#[test]
fn a_silent_check_discards_the_process_and_later_checks_share_its_timeout() {
    let spec = Spec::fake(&["--silent-on", "tools/list"])
        .call("echo", Some(r#"{"text":"x"}"#), &[])
        .checks("[protocol, capability, functional]")
        .timeout(500);
    let (case, v) = expect(
        "discard",
        &spec,
        3,
        "capability",
        "UNREACHABLE",
        None,
        ms(500),
    );
    assert_eq!(check(&v, "protocol")["status"], "HEALTHY");
    assert_eq!(check(&v, "functional")["status"], "UNREACHABLE");
    assert_eq!(evidence(&v, "functional", "shared_timeout"), "capability");
    let pids = case.pids();
    assert_eq!(
        pids.len(),
        1,
        "no second process waits for the same silence"
    );
    assert_group_dead(pids[0]);
    let log = case.logged();
    assert_eq!(
        log.iter().filter(|m| *m == "server/discover").count(),
        1,
        "{log:?}"
    );
    assert!(
        case.calls().is_empty(),
        "the tool is never called without its listing"
    );
}

#[test]
fn only_the_mapped_environment_reaches_the_child_and_stderr_is_discarded() {
    // Upstream §17 J63/J64.
    let case = Case::new("env");
    let mut spec = Spec::fake(&[
        "--require-env",
        "CHILD_TOKEN=canary-stdio-4711",
        "--forbid-env",
        "UNRELATED_MCP_SECRET",
        "--forbid-env",
        "AH_TEST_PIDFILE",
        "--stderr-env",
        "CHILD_TOKEN",
    ]);
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN"));
    let o = case.check(
        &spec,
        &[
            ("HOST_TOKEN", "canary-stdio-4711"),
            ("UNRELATED_MCP_SECRET", "must-not-leak"),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(!o.stdout.contains("canary") && !o.stderr.contains("canary"));
    within("env", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}

#[test]
fn a_missing_env_reference_is_misconfigured_before_anything_starts() {
    let case = Case::new("env-missing");
    let mut spec = Spec::fake(&[]);
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN_NOT_SET"));
    for env in [&[][..], &[("HOST_TOKEN_NOT_SET", "")][..]] {
        let o = case.check(&spec, env);
        assert_eq!(o.code, 4, "{}", o.stdout);
        let v = o.json();
        assert_eq!(check(&v, "configuration")["status"], "MISCONFIGURED");
        assert_eq!(
            evidence(&v, "configuration", "missing_env"),
            &serde_json::json!(["HOST_TOKEN_NOT_SET"])
        );
        within("env-missing", &o, Duration::ZERO);
    }
    assert!(case.pids().is_empty(), "nothing was started");
}

#[test]
fn commands_that_cannot_start_are_misconfigured() {
    let scratch = TempDir::new("stdio-unstartable");
    let orphan = scratch.file("orphan", "#!/nonexistent/agenthealth-interpreter\n");
    make_executable(&orphan);
    let cases: [(&str, Spec, &str, &str); 6] = [
        (
            "not-found",
            Spec::command("agenthealth-no-such-command-4711"),
            "configuration",
            "command_not_found",
        ),
        (
            "no-such-path",
            Spec::command(&fixture("no-such-file")),
            "configuration",
            "command_not_found",
        ),
        (
            "not-executable",
            Spec::command(&fixture("not_executable")),
            "configuration",
            "command_not_executable",
        ),
        (
            "no-shebang",
            Spec::command(&fixture("no_shebang")),
            "configuration",
            "command_not_executable",
        ),
        (
            "bad-directory",
            Spec {
                directory: Some("/nonexistent/agenthealth-dir".into()),
                ..Spec::fake(&[])
            },
            "configuration",
            "bad_directory",
        ),
        // Only exec can tell that the interpreter is missing: reachability says so.
        (
            "missing-interpreter",
            Spec::command(&orphan.display().to_string()),
            "reachability",
            "command_not_executable",
        ),
    ];
    for (name, spec, dim, reason) in cases {
        let (_, v) = expect(
            name,
            &spec,
            4,
            dim,
            "MISCONFIGURED",
            Some("mcp_process"),
            ms(5_000),
        );
        assert_eq!(evidence(&v, dim, "process_error"), reason, "{name}");
    }
}

#[test]
fn a_relative_symlink_command_resolves_in_the_directory() {
    // Upstream §17 J70.
    let case = Case::new("symlink");
    let dir = &case.dir.0;
    let wrapper = case.dir.file(
        "real-server",
        &format!(
            "#!/bin/sh\nexec {} {} \"$@\"\n",
            python_bin(),
            fixture("fake_server.py")
        ),
    );
    make_executable(&wrapper);
    std::os::unix::fs::symlink("real-server", dir.join("server")).expect("symlink");
    let spec = Spec {
        command: "./server".into(),
        args: Vec::new(),
        directory: Some(dir.display().to_string()),
        ..Spec::fake(&[])
    };
    let o = case.check(&spec, &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    within("symlink", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn every_cancelling_signal_to_agenthealth_cancels_and_kills_the_group() {
    use nix::sys::signal::Signal;
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        cancel_with(signal);
    }
}

/// `agenthealth` running a stdio target whose server (and its grandchild, with `extra`) is
/// up and silent: the case, the running process, and when it started.
fn running(tag: &str, extra: &[&str]) -> (Case, std::process::Child, Instant) {
    let case = Case::new(tag);
    let mut args = extra.to_vec();
    args.extend(["--silent-on", "server/discover"]);
    let spec = Spec::fake(&args).timeout(30_000);
    let config = case.config(&spec);
    let started = Instant::now();
    let child = command(
        &["check", &config.display().to_string(), "--format", "json"],
        &[],
    )
    .env("AH_TEST_PIDFILE", case.pidfile())
    .spawn()
    .expect("agenthealth");
    let want = if extra.contains(&"--grandchild") {
        2
    } else {
        1
    };
    let until = Instant::now() + Duration::from_secs(10);
    while case.pids().len() < want {
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(ms(5));
    }
    (case, child, started)
}

/// Threads are bounded for stdio targets too: `concurrency` workers, one helper per running
/// server (it forwards stdout and drains stderr), and the main and signal threads — sampled
/// while 16 silent servers run at once.
#[test]
fn stdio_targets_use_one_thread_per_server() {
    let case = Case::new("threads");
    let spec = Spec::fake(&["--silent-on", "server/discover"]).timeout(30_000);
    let one = std::fs::read_to_string(case.config(&spec)).expect("config");
    let (head, target) = one.split_once("targets:\n").expect("targets");
    let mut text = format!("{head}concurrency: 16\ntargets:\n");
    for n in 0..16 {
        text.push_str(&target.replacen("name: server", &format!("name: server{n}"), 1));
    }
    let config = case.dir.file("sixteen.yaml", &text);
    let child = command(
        &["check", &config.display().to_string(), "--format", "json"],
        &[],
    )
    .env("AH_TEST_PIDFILE", case.pidfile())
    .spawn()
    .expect("agenthealth");
    let status = format!("/proc/{}/status", child.id());
    let threads = || {
        std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<usize>().ok())
        })
    };
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(10);
    // Sample until every server is up and a little after, while they are all silent.
    while case.pids().len() < 16 && Instant::now() < until {
        peak = peak.max(threads().unwrap_or(0));
        std::thread::sleep(ms(2));
    }
    let settle = Instant::now() + ms(200);
    while Instant::now() < settle {
        peak = peak.max(threads().unwrap_or(0));
        std::thread::sleep(ms(2));
    }
    assert_eq!(case.pids().len(), 16, "all sixteen servers ran at once");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let out = child.wait_with_output().expect("wait");
    eprintln!("[stdio] 16 silent servers at concurrency 16: peak {peak} threads");
    assert_eq!(out.status.code(), Some(5), "cancelled");
    assert!(peak <= 2 * 16 + 2, "peak {peak} threads");
    assert!(peak >= 16 + 2, "the sampling saw the run ({peak})");
    case.assert_nothing_left();
}

/// A SIGKILL of `agenthealth` runs none of its code: the kernel's parent-death signal ends
/// the stdio server it started, and the group's keeper (a process of the server's group that
/// holds the read end of a pipe only agenthealth could write to) ends the rest of the group,
/// here a grandchild that ignores SIGTERM and never reads its stdin. Nothing of the run
/// survives: not the server, not the grandchild, not the keeper.
#[test]
fn a_sigkill_of_agenthealth_still_ends_its_stdio_server_and_its_group() {
    // Both ignore the end of their stdin and SIGTERM: only SIGKILL ends them.
    let (case, mut child, _) = running("sigkill", &["--ignore-term", "--grandchild"]);
    let pids = case.pids();
    let _cleanup = KillMarked(&case.mark);
    let keeper = live_members(pids[0])
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|pid| !pids.contains(pid))
        .collect::<Vec<_>>();
    assert_eq!(keeper.len(), 1, "one keeper in the group besides {pids:?}");
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", keeper[0])).expect("comm");
    assert_eq!(comm.trim_end(), "ah-group-keeper", "how ps shows it");
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    crate::util::until_none(MARGIN, "processes of the run outlived agenthealth", || {
        marked(&case.mark)
    });
    assert_group_dead(pids[0]);
}

/// Kills, when dropped, whatever still carries the mark: a failed test leaves nothing
/// running.
struct KillMarked<'a>(&'a str);

impl Drop for KillMarked<'_> {
    fn drop(&mut self) {
        for pid in marked(self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn cancel_with(signal: nix::sys::signal::Signal) {
    let (case, child, started) = running("cancel", &["--grandchild"]);
    let signalled = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).expect("signal");
    let out = child.wait_with_output().expect("wait");
    let took = signalled.elapsed();
    eprintln!("[stdio] cancel: exited {took:?} after {signal}");
    assert!(
        took < MARGIN,
        "agenthealth took {took:?} to stop after {signal}"
    );
    assert_eq!(out.status.code(), Some(5), "{signal}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("a document");
    assert_eq!(
        check(&v, "reachability")["message"],
        "check cancelled before it completed"
    );
    case.assert_nothing_left();
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ------------------------------------------------------------------ ad-hoc form

fn adhoc(verb: &str, extra: &[&str], argv: &[&str]) -> Outcome {
    let mut args = vec![verb, "mcp", "--stdio", "--format", "json"];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(argv);
    run_env(&args, &[])
}

#[test]
fn the_adhoc_form_is_a_one_target_config() {
    let mark = format!("agenthealth-mark-adhoc-{}", std::process::id());
    let fake = fixture("fake_server.py");
    for verb in ["ping", "doctor"] {
        let o = adhoc(
            verb,
            &[],
            &[python_bin(), &fake, "--era", "legacy", "--mark", &mark],
        );
        assert_eq!(o.code, 0, "{verb}: {}", o.stdout);
        let v = o.json();
        assert_eq!(v["target"]["name"], verb);
        assert_eq!(v["target"]["type"], "mcp");
        assert_eq!(evidence(&v, "protocol", "era"), "legacy");
        within(verb, &o, ms(4 * 5_000));
        assert_unmarked(&mark);
    }
    // Hostile children through the ad-hoc form, with its --timeout.
    let silent = fixture("silent.py");
    let o = adhoc(
        "ping",
        &["--timeout", "400"],
        &[python_bin(), &silent, &mark],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    within("adhoc silent", &o, ms(400));
    let o = adhoc("ping", &[], &[&fixture("exit.sh"), &mark]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert_eq!(evidence(&o.json(), "reachability", "exit_code"), 3);
    assert_unmarked(&mark);
}

#[test]
fn the_adhoc_form_runs_no_shell() {
    // Shell syntax is passed through as plain arguments: `;` and `$(...)` mean nothing.
    let scratch = TempDir::new("stdio-noshell");
    let canary = scratch.0.join("canary");
    let injected = format!("$(touch {})", canary.display());
    let o = adhoc(
        "ping",
        &["--timeout", "2000"],
        &[
            &fixture("exit.sh"),
            ";",
            &injected,
            "&&",
            "touch",
            &canary.display().to_string(),
        ],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(!canary.exists(), "a shell ran");
    // A command with shell syntax in its name is looked up as a file, and not found.
    let o = adhoc("doctor", &["--format", "terminal"], &["true;touch x"]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(o.stdout.contains("not found on PATH"), "{}", o.stdout);
}

/// Doctor names each stdio protocol fault in words that fit a process, not a URL.
#[test]
fn doctor_explains_protocol_faults_of_a_stdio_server() {
    let fake = fixture("fake_server.py");
    let half = fixture("half_answer.sh");
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec![python_bin(), &fake, "--wrong-id"],
            "the server answered with an id that does not match the request it was sent",
        ),
        (
            vec![python_bin(), &fake, "--era", "modern", "--server-request"],
            "the server sent a request of its own during a 2026-07-28 exchange",
        ),
        (
            vec![python_bin(), &fake, "--banner"],
            "to stdout; stdio servers must log to stderr",
        ),
        (
            vec![&half],
            "the server process's output ended part-way through an answer",
        ),
    ];
    for (argv, says) in cases {
        let mut args = vec!["doctor", "mcp", "--stdio", "--color", "never", "--"];
        args.extend(argv);
        let o = run_env(&args, &[]);
        assert_eq!(o.code, 2, "{}", o.stdout);
        assert!(o.stdout.contains(says), "{}", o.stdout);
        assert!(!o.stdout.contains("URL"), "{}", o.stdout);
    }
}

#[test]
fn doctor_explains_a_process_that_exited() {
    let o = run_env(
        &["doctor", "mcp", "--stdio", "--", &fixture("exit.sh")],
        &[],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(
        o.stdout.contains("exited with status 3 before answering"),
        "{}",
        o.stdout
    );
}

// ------------------------------------------------------------------ functional over stdio

const DIAGNOSTIC_ARGS: &str = r#"{"freshObservability":true,"chromaProbeTimeoutMs":2500,"embeddingWriteCanaryTimeoutMs":15000}"#;

/// The fake server's stale `observed_at` (tests/fixtures/stdio/fake_server.py).
const STALE_OBSERVED_AT: &str = "2020-01-01T00:00:00Z";

/// The Memory Core fault (../shared/spec/memory-core-healthcheck.md) over stdio, in both
/// eras: the deployed tool is refused before any call; called with `{}` its cached payload
/// fails `fresh_within_s`; the fixed tool is HEALTHY. Discovery, listing and the call share
/// one process, and the call carries the operator's bytes.
#[test]
fn memory_core_healthcheck_fault_is_caught_over_stdio() {
    let expect = [
        "json: {/status: healthy}",
        "fresh_within_s: {/observed_at: 300}",
    ];
    for era in ["both", "legacy"] {
        let fake = || Spec::fake(&["--era", era, "--memory-core"]);
        let faulty = fake().call(
            "memory_core_healthcheck_faulty",
            Some(DIAGNOSTIC_ARGS),
            &expect,
        );
        let (case, v) = expect_functional(&faulty, 4, "MISCONFIGURED", None);
        assert_eq!(
            evidence(&v, "functional", "argument_violation"),
            "argument `chromaProbeTimeoutMs` is not declared by the tool's inputSchema, \
             which forbids additional properties",
            "{era}"
        );
        assert!(case.calls().is_empty(), "{era}: refused before any call");

        let stale = fake().call("memory_core_healthcheck_faulty", Some("{}"), &expect);
        let (case, v) = expect_functional(&stale, 2, "UNHEALTHY", Some("mcp_functional"));
        assert_eq!(evidence(&v, "functional", "expect_kind"), "fresh_within_s");
        assert_eq!(evidence(&v, "functional", "expect_pointer"), "/observed_at");
        assert_eq!(evidence(&v, "functional", "expected"), "300");
        assert_eq!(evidence(&v, "functional", "expect_failure"), "stale");
        assert!(
            !v.to_string().contains(STALE_OBSERVED_AT),
            "never the server's value"
        );
        let calls = case.calls();
        assert_eq!(calls.len(), 1, "{era}");
        assert!(calls[0].contains(r#""arguments":{}"#), "{}", calls[0]);

        let fixed = fake().call(
            "memory_core_healthcheck_fixed",
            Some(DIAGNOSTIC_ARGS),
            &[
                "json: {/status: healthy, /cached: false, /options/chromaProbeTimeoutMs: 2500}",
                "fresh_within_s: {/observed_at: 300}",
            ],
        );
        let (case, v) = expect_functional(&fixed, 0, "HEALTHY", None);
        assert_eq!(evidence(&v, "functional", "expectations_met"), 4, "{era}");
        let calls = case.calls();
        assert_eq!(calls.len(), 1);
        assert!(
            calls[0].contains(&format!(r#""arguments":{DIAGNOSTIC_ARGS}"#)),
            "{}",
            calls[0]
        );
        // One process served discovery, the listings and the call, then saw its input end.
        assert_eq!(case.pids().len(), 1, "{era}");
        let log = case.logged();
        let methods: Vec<&str> = log
            .iter()
            .map(String::as_str)
            .filter(|m| {
                matches!(
                    *m,
                    "server/discover" | "initialize" | "tools/list" | "tools/call" | "eof"
                )
            })
            .collect();
        let expected: &[&str] = if era == "legacy" {
            &[
                "server/discover",
                "initialize",
                "tools/list",
                "tools/call",
                "eof",
            ]
        } else {
            &["server/discover", "tools/list", "tools/call", "eof"]
        };
        assert_eq!(methods, expected, "{era}");
    }
}

/// Runs `spec` and asserts the exit code and the functional check's status and code.
fn expect_functional(spec: &Spec, exit: i32, status: &str, code: Option<&str>) -> (Case, Value) {
    let (case, v) = expect(
        "functional",
        spec,
        exit,
        "functional",
        status,
        code,
        ms(4 * 5_000),
    );
    assert_eq!(
        check(&v, "functional")["code"].as_str(),
        code,
        "{}",
        check(&v, "functional")
    );
    (case, v)
}

/// `arguments_json` written over several lines (a YAML block scalar, pretty JSON) still goes
/// out as one line of the stdio framing: its line breaks become spaces, and nothing else
/// changes — integers beyond 64 bits keep their digits. Neither the tool's output nor a
/// mapped value reaches the output.
#[test]
fn multi_line_arguments_are_sent_on_one_line_byte_for_byte_otherwise() {
    let args = "{\n  \"text\": \"stdio-tool-output-4711\",\n  \"big\": 123456789012345678901234567890\n}\n";
    let mut spec = Spec::fake(&["--era", "both"]).call(
        "echo",
        Some(args),
        &["text_contains: stdio-tool-output"],
    );
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN"));
    let case = Case::new("multi-line");
    let o = case.check(&spec, &[("HOST_TOKEN", "canary-multi-line-42")]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(check(&v, "functional")["status"], "HEALTHY");
    assert_eq!(evidence(&v, "functional", "expectations_met"), 1);
    let calls = case.calls();
    assert_eq!(calls.len(), 1);
    let sent = format!(r#""arguments":{}"#, args.replace('\n', " "));
    assert!(calls[0].contains(&sent), "{}\nwant {sent}", calls[0]);
    for secret in ["stdio-tool-output-4711", "canary-multi-line-42"] {
        assert!(
            !o.stdout.contains(secret) && !o.stderr.contains(secret),
            "{secret}"
        );
    }
    within("multi-line", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}

/// The call is sent once, whatever happens to it: the process dies on it (UNREACHABLE with
/// its exit status) or never answers (UNREACHABLE at the deadline: no byte answered the
/// call, whatever the session answered before), even with `retries: 3`. The process group is
/// gone afterwards.
#[test]
fn a_functional_call_over_stdio_is_never_repeated() {
    for (fault, exit, status) in [
        ("--exit-on", 3, "UNREACHABLE"),
        ("--silent-on", 3, "UNREACHABLE"),
    ] {
        let spec = Spec::fake(&[fault, "tools/call"])
            .call("echo", Some(r#"{"text":"x"}"#), &[])
            .target("retries: 3")
            .timeout(800);
        let case = Case::new("call-once");
        let o = case.check(&spec, &[]);
        assert_eq!(o.code, exit, "{fault}: {}", o.stdout);
        let v = o.json();
        assert_eq!(
            check(&v, "functional")["status"],
            status,
            "{fault}: {}",
            o.stdout
        );
        if fault == "--exit-on" {
            assert_eq!(check(&v, "functional")["code"], "mcp_process");
            assert_eq!(evidence(&v, "functional", "exit_code"), 4);
        }
        assert_eq!(case.calls().len(), 1, "{fault}: {:?}", case.logged());
        assert_eq!(
            case.pids().len(),
            1,
            "{fault}: one process, no restart for the call"
        );
        within(fault, &o, ms(4 * 800));
        case.assert_nothing_left();
        // Doctor says what happened to the call, not to a response stream.
        let says = if fault == "--exit-on" {
            "the server process exited with status 4 before answering"
        } else {
            "the tool call did not complete before the deadline, and a functional call is never retried"
        };
        let o = case.doctor(&spec);
        assert!(
            o.stdout.contains(&format!("  - functional: {says}")),
            "{}",
            o.stdout
        );
        case.assert_nothing_left();
    }
}

// ------------------------------------------------------------------ real servers

/// Runs a real server through a config file with `transport: stdio`.
fn real(kind: StdioKind) -> (Case, Value) {
    real_pinned(kind, None)
}

/// [`real`] with agenthealth pinned to `pin`.
fn real_pinned(kind: StdioKind, pin: Option<&'static str>) -> (Case, Value) {
    let (case, o) = real_run(kind, |spec| match pin {
        Some(pin) => spec.pin(pin),
        None => spec,
    });
    assert_eq!(o.code, 0, "{kind:?} pin {pin:?}: {}", o.stdout);
    let v = o.json();
    for dim in ["reachability", "authentication", "protocol", "capability"] {
        assert_eq!(
            check(&v, dim)["status"],
            "HEALTHY",
            "{kind:?} {dim}: {}",
            o.stdout
        );
    }
    eprintln!(
        "[stdio] {kind:?}: {:?}, latency {} ms, era {}, negotiated {}, fallback {}, tools {}",
        o.elapsed,
        v["latency_ms"],
        evidence(&v, "protocol", "era"),
        evidence(&v, "protocol", "negotiated_version"),
        evidence(&v, "protocol", "fallback"),
        evidence(&v, "capability", "tools_count"),
    );
    (case, v)
}

/// Runs a real server through a config file with `transport: stdio`, a 10 s timeout and
/// whatever `tweak` adds; asserts the time bound and that nothing is left behind.
fn real_run(kind: StdioKind, tweak: impl FnOnce(Spec) -> Spec) -> (Case, Outcome) {
    let server = StdioServer::prepare(kind);
    let case = Case::new("interop");
    let argv: Vec<String> = server
        .argv()
        .iter()
        .map(|a| a.to_str().expect("utf-8 path").to_string())
        .collect();
    let (command, args) = argv.split_first().expect("a command");
    let spec = tweak(Spec {
        command: command.clone(),
        args: args.to_vec(),
        ..Spec::fake(&[]).timeout(10_000)
    });
    let o = case.check(&spec, &[]);
    within(&format!("{kind:?}"), &o, ms(4 * 10_000));
    case.assert_nothing_left();
    drop(server);
    (case, o)
}

#[test]
fn real_dual_era_servers_stay_modern() {
    for kind in [
        StdioKind::Time,
        StdioKind::Py { pin: None },
        StdioKind::Ts2 {
            legacy_reject: false,
        },
        StdioKind::Ts2 {
            legacy_reject: true,
        },
    ] {
        let (_, v) = real(kind);
        assert_eq!(evidence(&v, "protocol", "era"), "modern", "{kind:?}");
        assert!(evidence(&v, "protocol", "fallback").is_null(), "{kind:?}");
    }
}

#[test]
fn real_handshake_only_servers_fall_back_to_legacy() {
    for kind in [
        StdioKind::Filesystem,
        StdioKind::Memory,
        StdioKind::Everything,
    ] {
        let (_, v) = real(kind);
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{kind:?}");
        assert_eq!(evidence(&v, "protocol", "fallback"), true, "{kind:?}");
        assert_eq!(evidence(&v, "protocol", "discover_rpc_code"), -32601);
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), "2025-11-25");
    }
}

#[test]
fn real_everything_server_interleaves_a_notification_and_lists_every_tool() {
    // server-everything sends notifications/tools/list_changed after `initialized`, ahead of
    // the tools/list response; it registers its 13th tool only after `initialized`.
    let (_, v) = real(StdioKind::Everything);
    assert_eq!(evidence(&v, "capability", "tools_count"), 13);
}

/// Issue 5's servers with agenthealth pinned: the dual-era ones to 2026-07-28 and to the
/// legacy offer, the handshake-only ones to the legacy offer. A pin sends no discovery and
/// never falls back.
#[test]
fn real_servers_pinned_are_healthy() {
    let legacy = "2025-11-25";
    for (kind, pin) in [
        (StdioKind::Time, MODERN_REVISION),
        (StdioKind::Time, legacy),
        (
            StdioKind::Ts2 {
                legacy_reject: true,
            },
            MODERN_REVISION,
        ),
        (StdioKind::Filesystem, legacy),
        (StdioKind::Memory, legacy),
        (StdioKind::Everything, legacy),
    ] {
        let (_, v) = real_pinned(kind, Some(pin));
        let era = if pin == MODERN_REVISION {
            "modern"
        } else {
            "legacy"
        };
        assert_eq!(evidence(&v, "protocol", "era"), era, "{kind:?} {pin}");
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
        assert!(
            evidence(&v, "protocol", "fallback").is_null(),
            "{kind:?} {pin}"
        );
    }
}

/// Issue 6's real server for stdio, in each era: `get_current_time` on `mcp-server-time`,
/// unpinned (2026-07-28) and pinned to 2025-11-25 — its `outputSchema` checked, the
/// expectations met; and, one per era, a timezone it does not know is its `isError: true`
/// (UNHEALTHY, its error text never printed), arguments its schema refuses are never sent.
#[test]
fn real_time_server_functional_in_each_era() {
    let expect = [
        "json: {/timezone: Europe/Berlin}",
        "fresh_within_s: {/datetime: 300}",
    ];
    for (pin, era) in [(None, "modern"), (Some("2025-11-25"), "legacy")] {
        let pinned = move |spec: Spec| match pin {
            Some(pin) => spec.pin(pin),
            None => spec,
        };
        let (_, o) = real_run(StdioKind::Time, |spec| {
            pinned(spec).call(
                "get_current_time",
                Some(r#"{"timezone":"Europe/Berlin"}"#),
                &expect,
            )
        });
        assert_eq!(o.code, 0, "{era}: {}", o.stdout);
        let v = o.json();
        let f = check(&v, "functional");
        assert_eq!(f["status"], "HEALTHY", "{era}: {f}");
        assert_eq!(f["evidence"]["era"], era);
        assert_eq!(f["evidence"]["output_schema_checked"], true);
        assert_eq!(f["evidence"]["expectations_met"], 2);

        // One failure per era, to keep the server starts few.
        if era == "modern" {
            let (_, o) = real_run(StdioKind::Time, |spec| {
                pinned(spec).call(
                    "get_current_time",
                    Some(r#"{"timezone":"Mars/Olympus_Mons"}"#),
                    &[],
                )
            });
            assert_eq!(o.code, 2, "{era}: {}", o.stdout);
            let f = check(&o.json(), "functional").clone();
            assert_eq!(f["code"], "mcp_functional", "{era}: {f}");
            assert_eq!(f["evidence"]["is_error"], true);
            assert!(
                !o.stdout.contains("No time zone") && !o.stdout.contains("Invalid timezone"),
                "the tool's error text is never printed: {}",
                o.stdout
            );
        } else {
            let (_, o) = real_run(StdioKind::Time, |spec| {
                pinned(spec).call("get_current_time", Some(r#"{"timezone":7}"#), &[])
            });
            assert_eq!(o.code, 4, "{era}: {}", o.stdout);
            assert_eq!(
                evidence(&o.json(), "functional", "argument_violation"),
                "argument `timezone` has a type that the tool's inputSchema does not allow \
                 (expected string)"
            );
        }
    }
}

#[test]
fn real_python_server_pinned_to_each_revision() {
    for rev in LEGACY_REVISIONS {
        let (_, v) = real(StdioKind::Py { pin: Some(rev) });
        // Unpinned here: the pinned server rejects discovery (-32601) and we fall back.
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{rev}");
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), rev);
    }
}

#[test]
fn real_python_server_with_agenthealth_pinned_to_each_revision() {
    for pin in LEGACY_REVISIONS.into_iter().chain([MODERN_REVISION]) {
        let server = StdioServer::prepare(StdioKind::Py { pin: None });
        let case = Case::new("interop-pin");
        let argv: Vec<String> = server
            .argv()
            .iter()
            .map(|a| a.to_str().expect("utf-8 path").to_string())
            .collect();
        let (command, args) = argv.split_first().expect("a command");
        let spec = Spec {
            command: command.clone(),
            args: args.to_vec(),
            ..Spec::fake(&[]).timeout(10_000).pin(pin)
        };
        let o = case.check(&spec, &[]);
        assert_eq!(o.code, 0, "{pin}: {}", o.stdout);
        let v = o.json();
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
        within(&format!("py pinned {pin}"), &o, ms(4 * 10_000));
        case.assert_nothing_left();
    }
}

#[test]
fn the_fixture_directory_is_where_the_tests_expect_it() {
    assert!(Path::new(&fixtures()).join("fake_server.py").is_file());
}
