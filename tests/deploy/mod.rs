//! What `deploy/`, the Dockerfiles and the release files promise: manifests valid against the
//! Kubernetes schemas (offline) and hardened as documented, configurations that load and
//! run, alert rules naming metrics the binary emits, a scratch image of one static binary,
//! install lines that work on a bare system, a LICENSE that matches Cargo.toml — and the static binary
//! running in an empty root directory as uid 65532 with the manifests' exact commands
//! ([`crate::empty_root`] builds that root).
//!
//! `manifests`: deploy/ and its configurations; `probe_fleet`: the probe fleet's Prometheus
//! job, alerts and Service annotations, through promtool; `release_files`: the image, the
//! LICENSE and the install lines; `images`: the archive-only image is the Dockerfile's, and
//! hadolint on every Dockerfile; `empty_root_runs`: the manifests' commands run as they would
//! in the image. The helpers they share are here.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::empty_root::EmptyRoot;
use crate::interop::interop_dir;
use crate::tools;
use crate::util::{TempDir, run};
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer, preset};
use agenthealth_testkit::tls::{TestCa, server_wrap};

mod empty_root_runs;
mod images;
mod manifests;
mod probe_fleet;
mod release_files;

pub(crate) use probe_fleet::probe_job_with_file_sd;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn yaml(path: &str) -> Value {
    yaml_serde::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Kubernetes manifests of `deploy/kubernetes/` (every `.yaml` but the kustomization).
fn manifests() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("deploy/kubernetes"))
        .expect("deploy/kubernetes")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    out.sort();
    out
}

fn manifest(name: &str) -> Value {
    yaml(&format!("deploy/kubernetes/{name}"))
}

/// `config.yaml` of the ConfigMap in `file`.
fn configmap_config(file: &str) -> String {
    let m = manifest(file);
    assert_eq!(m["kind"], "ConfigMap", "{file}");
    m["data"]["config.yaml"]
        .as_str()
        .unwrap_or_else(|| panic!("{file}: no data.config.yaml"))
        .to_string()
}

/// The pod template's spec of a Deployment or CronJob.
fn pod_spec(m: &Value) -> &Value {
    match m["kind"].as_str() {
        Some("Deployment") => &m["spec"]["template"]["spec"],
        Some("CronJob") => &m["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        other => panic!("no pod template in a {other:?}"),
    }
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn strings(v: &Value) -> Vec<String> {
    array(v)
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// The manifests' commands pass `--deadline`, the run deadline of issue 13.
///
/// Checks that a manifest's command sets a run deadline (`--deadline`, 1–60000 ms), and
/// returns the command unchanged: the tests run it exactly as the manifest does.
fn with_run_deadline(argv: &[String]) -> Vec<String> {
    let at = argv
        .iter()
        .position(|a| a == "--deadline")
        .unwrap_or_else(|| panic!("the command has no --deadline: {argv:?}"));
    let ms: u64 = argv[at + 1].parse().expect("--deadline takes milliseconds");
    assert!((1..=60_000).contains(&ms), "{argv:?}");
    argv.to_vec()
}
