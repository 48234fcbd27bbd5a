//! The official conformance suite's client `auth/*` scenarios, run against the binary
//! through the lab's wrapper.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use serde_json::Value;

use crate::interop::oauth::{Conformance, Suite};
use crate::util::{TempDir, bin};

/// The official conformance suite's client `auth/*` scenarios that fit a pre-registered
/// client (tests/interop/README.md says which do not, and why), per suite version. Each must
/// pass by the suite's own verdict: no FAILURE or WARNING check, and the wrapper's exit
/// accepted.
const CONFORMANCE_SCENARIOS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/pre-registration",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/resource-mismatch",
    "auth/offline-access-not-supported",
];
/// The same for 0.1.16, which has no `iss-*` scenarios.
const CONFORMANCE_0116_SCENARIOS: &[&str] = &[
    "auth/client-credentials-basic",
    "auth/pre-registration",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-from-www-authenticate",
    "auth/resource-mismatch",
    "auth/offline-access-not-supported",
];

/// A scenario whose protected server answers `HEAD /mcp` with 404: the `WWW-Authenticate`
/// challenge naming the scope to request comes only with the 401 to a POST, so a client
/// that reads the challenge from `HEAD` alone requests no scope (a WARNING, which fails).
const CONFORMANCE_POST_CHALLENGE_SCENARIOS: &[&str] = &["auth/scope-from-www-authenticate"];

/// Runs one scenario; `Err` with the suite's report when it does not pass.
fn run_conformance(suite: &Conformance, scenario: &str) -> Result<(), String> {
    let dir = TempDir::new("conformance");
    let results = dir.0.join("results");
    let command = format!(
        "{} {}",
        suite.wrapper_node.display(),
        suite.wrapper.display()
    );
    assert_eq!(
        command.split(' ').count(),
        2,
        "the suite splits --command on spaces: {command}"
    );
    let out = Command::new(&suite.node)
        .arg(&suite.cli)
        .args([
            "client",
            "--command",
            &command,
            "--scenario",
            scenario,
            "-o",
        ])
        .arg(&results)
        .env("AGENTHEALTH_BIN", bin())
        .env("AGENTHEALTH_CONFORMANCE_DIR", dir.0.join("work"))
        .stdin(Stdio::null())
        .output()
        .expect("run the conformance suite");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let checks = find_checks(&results).map(|p| std::fs::read_to_string(p).unwrap_or_default());
    let failing: Vec<String> = checks
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .map(|c| format!("{} {}: {}", c["status"], c["id"], c["description"]))
        .collect();
    if out.status.success() && failing.is_empty() && checks.is_some() {
        Ok(())
    } else {
        Err(format!(
            "{scenario}: suite exit {:?}; failing checks: {failing:#?}\n{report}",
            out.status.code()
        ))
    }
}

/// The `checks.json` the suite wrote under `dir` (one scenario per run).
fn find_checks(dir: &Path) -> Option<PathBuf> {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                return Some(path);
            }
        }
    }
    None
}

/// Runs `scenarios`, [`CONFORMANCE_PARALLEL`] at a time (each spends most of its time
/// starting Node), and fails with every report that did not pass.
fn assert_conformance(version: Suite, scenarios: &[&'static str]) {
    let suite = Conformance::locate(version);
    let suite = std::sync::Arc::new(suite);
    let mut failures = Vec::new();
    for chunk in scenarios.chunks(CONFORMANCE_PARALLEL) {
        let runs: Vec<_> = chunk
            .iter()
            .map(|&scenario| {
                let suite = std::sync::Arc::clone(&suite);
                thread::spawn(move || run_conformance(&suite, scenario))
            })
            .collect();
        failures.extend(runs.into_iter().filter_map(|r| r.join().unwrap().err()));
    }
    assert!(
        failures.is_empty(),
        "{version:?}: {} of {} conformance scenarios failed:\n\n{}",
        failures.len(),
        scenarios.len(),
        failures.join("\n\n")
    );
}

/// Scenarios run at once (each starts its own servers on ephemeral ports).
const CONFORMANCE_PARALLEL: usize = 3;

#[test]
fn conformance_auth_scenarios_for_a_pre_registered_client_pass() {
    assert_conformance(Suite::Alpha12, CONFORMANCE_SCENARIOS);
}

#[test]
fn conformance_0116_auth_scenarios_for_a_pre_registered_client_pass() {
    assert_conformance(Suite::V0116, CONFORMANCE_0116_SCENARIOS);
}

#[test]
fn conformance_scope_from_a_challenge_sent_only_on_post_passes() {
    assert_conformance(Suite::Alpha12, CONFORMANCE_POST_CHALLENGE_SCENARIOS);
}
