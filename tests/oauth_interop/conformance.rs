//! The official conformance suite's client `auth/*` scenarios, run against the binary
//! through the lab's wrapper.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use serde_json::Value;

use crate::interop::oauth::{Conformance, Suite};
use crate::util::{TempDir, bin};

/// Every client `auth/*` scenario of the current suite (0.2.0-alpha.12) that agenthealth
/// runs, through the wrapper alone: the wrapper pins the issuer the way `doctor
/// --oauth-details` shows it and uses the context's client when the scenario gives one, else
/// `login --register`. Each must pass by the suite's own verdict: no FAILURE or WARNING check,
/// and the wrapper's exit accepted. (`scope-from-www-authenticate` answers `HEAD` 404 and
/// challenges only the POST; the `2025-03-26-*` pair publishes no protected-resource
/// metadata.)
const ALPHA12: &[&str] = &[
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/client-credentials-basic",
];

/// The same for 0.1.16 (no `iss-*` scenarios; the 2025-03-26 one's issuer has a path).
const V0116: &[&str] = &[
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-basic",
];

/// What agenthealth does not implement, and so does not run (issue 19's exclusions): every
/// other `auth/*` scenario of either version is in a list above.
const EXCLUDED: &[(&str, &str)] = &[
    ("auth/basic-cimd", "client ID metadata documents"),
    ("auth/scope-step-up", "step-up authorization"),
    (
        "auth/authorization-server-migration",
        "a pinned issuer does not follow a move",
    ),
    ("auth/client-credentials-jwt", "JWT client assertions"),
    (
        "auth/wif-jwt-bearer",
        "JWT client assertions (a workload JWT as the grant)",
    ),
    (
        "auth/enterprise-managed-authorization",
        "token exchange / enterprise flows",
    ),
    (
        "auth/cross-app-access-complete-flow",
        "token exchange / enterprise flows",
    ),
    ("auth/dpop", "DPoP"),
    ("auth/dpop-nonce", "DPoP"),
];

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

/// The `auth/*` client scenarios a suite version lists.
fn listed(version: Suite) -> Vec<String> {
    let suite = Conformance::locate(version);
    let out = Command::new(&suite.node)
        .arg(&suite.cli)
        .args(["list", "--client"])
        .output()
        .expect("list the scenarios");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| s.starts_with("auth/"))
        .map(str::to_owned)
        .collect()
}

/// Nothing is skipped silently: each version's `auth/*` scenarios are exactly its run list
/// and the exclusions.
#[test]
fn every_conformance_auth_scenario_is_run_or_excluded_by_name() {
    for (version, run) in [(Suite::Alpha12, ALPHA12), (Suite::V0116, V0116)] {
        let listed = listed(version);
        for scenario in &listed {
            let known =
                run.contains(&scenario.as_str()) || EXCLUDED.iter().any(|(s, _)| s == scenario);
            assert!(known, "{version:?}: {scenario} is neither run nor excluded");
        }
        for scenario in run {
            assert!(
                listed.iter().any(|s| s == scenario),
                "{version:?} has no {scenario}"
            );
        }
    }
}

#[test]
fn conformance_alpha12_auth_scenarios_pass_through_agenthealth_alone() {
    assert_conformance(Suite::Alpha12, ALPHA12);
}

#[test]
fn conformance_0116_auth_scenarios_pass_through_agenthealth_alone() {
    assert_conformance(Suite::V0116, V0116);
}
