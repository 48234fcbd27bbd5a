//! The stdio tests' harness: a target ([`Spec`]) written as a config, run in its own scratch
//! directory ([`Case`]), and checked ([`expect`] with a [`Want`]): its status, exit code and
//! time, and that nothing it started is left.

use std::path::PathBuf;
use std::time::Duration;

use agenthealth_testkit::fixtures::{fixture, fixtures, python_bin};
use agenthealth_testkit::processes::{MARGIN, assert_group_dead, assert_unmarked};
use serde_json::Value;

use crate::util::{Outcome, TempDir, run_env};

/// What a stdio target runs, and how it is checked.
#[derive(Clone)]
pub(super) struct Spec {
    pub(super) command: String,
    pub(super) args: Vec<String>,
    pub(super) directory: Option<String>,
    pub(super) timeout_ms: u64,
    pub(super) pin: Option<&'static str>,
    pub(super) checks: Option<&'static str>,
    /// Extra `stdio.env` entries (child name, host name).
    pub(super) env: Vec<(&'static str, &'static str)>,
    /// Extra target-level lines, e.g. `retries: 3`.
    pub(super) target: Vec<String>,
    /// The `mcp.functional` block: tool, `arguments_json`, `expect` lines.
    pub(super) functional: Option<Functional>,
}

/// An `mcp.functional` block.
#[derive(Clone)]
pub(super) struct Functional {
    tool: String,
    arguments_json: Option<String>,
    /// Lines under `expect:`, e.g. `fresh_within_s: {/observed_at: 300}`.
    expect: Vec<String>,
}

impl Spec {
    /// A python fixture script with arguments.
    pub(super) fn python(script: &str, args: &[&str]) -> Spec {
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
    pub(super) fn fake(args: &[&str]) -> Spec {
        Spec::python("fake_server.py", args)
    }

    pub(super) fn command(command: &str) -> Spec {
        Spec {
            command: command.to_string(),
            args: Vec::new(),
            ..Spec::fake(&[])
        }
    }

    pub(super) fn timeout(mut self, ms: u64) -> Spec {
        self.timeout_ms = ms;
        self
    }

    pub(super) fn pin(mut self, version: &'static str) -> Spec {
        self.pin = Some(version);
        self
    }

    pub(super) fn checks(mut self, checks: &'static str) -> Spec {
        self.checks = Some(checks);
        self
    }

    /// Calls `tool` with `arguments_json` (as written, `None` for the default) and the
    /// `expect` lines, with the checks `[protocol, capability, functional, latency]`.
    pub(super) fn call(
        mut self,
        tool: &str,
        arguments_json: Option<&str>,
        expect: &[&str],
    ) -> Spec {
        self.checks = Some("[protocol, capability, functional, latency]");
        self.functional = Some(Functional {
            tool: tool.to_string(),
            arguments_json: arguments_json.map(str::to_string),
            expect: expect.iter().map(|e| e.to_string()).collect(),
        });
        self
    }

    pub(super) fn target(mut self, line: &str) -> Spec {
        self.target.push(line.to_string());
        self
    }
}

/// One run's scratch space: config, `PIDFILE`, the fake server's log, and the marker.
pub(super) struct Case {
    pub(super) dir: TempDir,
    pub(super) mark: String,
}

/// A YAML (JSON-compatible) double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

impl Case {
    pub(super) fn new(tag: &str) -> Case {
        let dir = TempDir::new(&format!("stdio-{tag}"));
        // Unique to this case; it is in the children's environment (the `PIDFILE` path) and,
        // for the fixtures, in their command line.
        let mark = dir.0.display().to_string();
        Case { dir, mark }
    }

    pub(super) fn pidfile(&self) -> PathBuf {
        self.dir.0.join("pids")
    }

    fn log(&self) -> PathBuf {
        self.dir.0.join("log")
    }

    /// The fake server's log lines (methods received, `eof`, `answers ok`).
    pub(super) fn logged(&self) -> Vec<String> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The `tools/call` requests the fake server received, each as its raw line.
    pub(super) fn calls(&self) -> Vec<String> {
        self.logged()
            .iter()
            .filter_map(|l| l.strip_prefix("raw "))
            .map(str::to_string)
            .collect()
    }

    /// The pids the child (and its grandchild) recorded.
    pub(super) fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.pidfile())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The configuration for `spec`, with `PIDFILE` mapped and, for our fixtures, the marker
    /// appended to the arguments (the fake server gets `--log` and `--mark`).
    pub(super) fn config(&self, spec: &Spec) -> PathBuf {
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
    pub(super) fn check(&self, spec: &Spec, env: &[(&str, &str)]) -> Outcome {
        let config = self.config(spec);
        let pidfile = self.pidfile().display().to_string();
        let mut all = vec![("AH_TEST_PIDFILE", pidfile.as_str())];
        all.extend_from_slice(env);
        let config = config.display().to_string();
        run_env(&["check", &config, "--format", "json"], &all)
    }

    /// `agenthealth doctor --color never` on `spec`.
    pub(super) fn doctor(&self, spec: &Spec) -> Outcome {
        let config = self.config(spec).display().to_string();
        let pidfile = self.pidfile().display().to_string();
        run_env(
            &["doctor", &config, "--color", "never"],
            &[("AH_TEST_PIDFILE", pidfile.as_str())],
        )
    }

    /// Asserts that nothing this case started is alive: the recorded group, and any process
    /// with the marker in its command line or environment.
    pub(super) fn assert_nothing_left(&self) {
        if let Some(&leader) = self.pids().first() {
            assert_group_dead(leader);
        }
        assert_unmarked(&self.mark);
    }
}

/// `doctor mcp --stdio --color never -- ARGV…`: the ad-hoc form, as a person reads it.
pub(super) fn doctor(argv: &[&str]) -> Outcome {
    run_env(
        &[
            &["doctor", "mcp", "--stdio", "--color", "never", "--"],
            argv,
        ]
        .concat(),
        &[],
    )
}

/// Reports a run's time (visible with `--nocapture`) and checks it against `deadlines` plus
/// [`MARGIN`].
pub(super) fn within(name: &str, o: &Outcome, deadlines: Duration) {
    let bound = deadlines + MARGIN;
    eprintln!("[stdio] {name}: {:?} (bound {bound:?})", o.elapsed);
    assert!(
        o.elapsed <= bound,
        "{name} took {:?}, bound {bound:?}",
        o.elapsed
    );
}

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The check `dim` of a single-target JSON document.
pub(super) fn check<'a>(v: &'a Value, dim: &str) -> &'a Value {
    &v["checks"][dim]
}

pub(super) fn evidence<'a>(v: &'a Value, dim: &str, key: &str) -> &'a Value {
    &v["checks"][dim]["evidence"][key]
}

/// What a run must give: its exit code, and the status (and code, when there is one) of one
/// check.
#[derive(Clone, Copy, Debug)]
pub(super) struct Want {
    pub(super) exit: i32,
    pub(super) dim: &'static str,
    pub(super) status: &'static str,
    pub(super) code: Option<&'static str>,
}

impl Want {
    /// The same outcome, asserted on the check `dim`.
    pub(super) const fn on(self, dim: &'static str) -> Want {
        Want { dim, ..self }
    }
}

/// Exit 0, `protocol` HEALTHY.
pub(super) const HEALTHY: Want = Want {
    exit: 0,
    dim: "protocol",
    status: "HEALTHY",
    code: None,
};
/// Exit 3, `reachability` UNREACHABLE `mcp_process`: the process ended its output before
/// answering.
pub(super) const ENDED: Want = Want {
    exit: 3,
    dim: "reachability",
    status: "UNREACHABLE",
    code: Some("mcp_process"),
};
/// Exit 3, `reachability` UNREACHABLE, no code: nothing answered before the deadline.
pub(super) const SILENT: Want = Want {
    exit: 3,
    dim: "reachability",
    status: "UNREACHABLE",
    code: None,
};
/// Exit 2, `reachability` UNHEALTHY with `code`: an answer, but a wrong one.
pub(super) const fn wrong(code: &'static str) -> Want {
    Want {
        exit: 2,
        dim: "reachability",
        status: "UNHEALTHY",
        code: Some(code),
    }
}
/// Exit 5, `reachability` UNKNOWN with `code` (or none): the answer could not be read.
pub(super) const fn unknown(code: Option<&'static str>) -> Want {
    Want {
        exit: 5,
        dim: "reachability",
        status: "UNKNOWN",
        code,
    }
}
/// Exit 4, `dim` MISCONFIGURED `mcp_process`: the command cannot start.
pub(super) const fn unstartable(dim: &'static str) -> Want {
    Want {
        exit: 4,
        dim,
        status: "MISCONFIGURED",
        code: Some("mcp_process"),
    }
}

/// Runs `spec` in a case of its own named `name` and asserts `want`, the time bound
/// (`deadlines` plus [`MARGIN`]) and that nothing it started is left; returns the case and
/// the JSON document.
pub(super) fn expect(name: &str, spec: &Spec, want: Want, deadlines: Duration) -> (Case, Value) {
    let case = Case::new(name);
    let o = case.check(spec, &[]);
    assert_eq!(o.code, want.exit, "{name}: {}\n{}", o.stdout, o.stderr);
    let v = o.json();
    let got = check(&v, want.dim);
    assert_eq!(got["status"], want.status, "{name}: {}", o.stdout);
    if let Some(code) = want.code {
        assert_eq!(got["code"], code, "{name}: {}", o.stdout);
    }
    within(name, &o, deadlines);
    case.assert_nothing_left();
    (case, v)
}

#[test]
fn the_fixture_directory_is_where_the_tests_expect_it() {
    assert!(
        std::path::Path::new(&fixtures())
            .join("fake_server.py")
            .is_file()
    );
}
