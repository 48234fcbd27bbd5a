//! The probe fleet's files offline: the Prometheus job of deploy/prometheus/probe.yaml through
//! Debian's promtool (whose build has no Kubernetes discovery: `kubernetes_sd_configs` is
//! swapped for `file_sd_configs`, the relabelling untouched — `tests/fleet.rs` runs that job
//! in a real Prometheus), its alerts through `promtool check rules` and `promtool test rules`,
//! and the annotations of the Service it probes.

use super::*;
use crate::tools::promtool;

/// The job with `kubernetes_sd_configs` replaced by `file_sd_configs` reading `sd_file`, and
/// its token file at `token`: what a Prometheus without Kubernetes discovery can load.
pub(crate) fn probe_job_with_file_sd(sd_file: &Path, token: &Path) -> Value {
    let mut doc = yaml("deploy/prometheus/probe.yaml");
    let job = &mut doc["scrape_configs"][0];
    let sd = job
        .as_object_mut()
        .and_then(|j| j.remove("kubernetes_sd_configs"))
        .expect("the job discovers with kubernetes_sd_configs");
    assert_eq!(sd[0]["role"], "service", "Services are what is annotated");
    job["file_sd_configs"] = serde_json::json!([{ "files": [sd_file] }]);
    job["authorization"]["credentials_file"] = Value::from(token.to_string_lossy().as_ref());
    doc
}

#[test]
fn the_probe_job_passes_promtool_with_file_sd_in_place_of_kubernetes_sd() {
    let dir = TempDir::new("deploy-probe-job");
    let token = dir.file("token", "fleet-token-0123456789");
    let sd = dir.file("services.json", "[]");
    let job = probe_job_with_file_sd(&sd, &token);
    let config = dir.file(
        "prometheus.yml",
        &yaml_serde::to_string(&job).expect("YAML"),
    );
    let path = config.to_string_lossy();
    for args in [
        &["check", "config", "--syntax-only", path.as_ref()][..],
        &["check", "config", path.as_ref()],
    ] {
        let ran = promtool(args, "");
        assert!(ran.ok, "promtool {args:?}:\n{}{}", ran.stdout, ran.stderr);
    }
    let scrape = &job["scrape_configs"][0];
    assert_eq!(scrape["metrics_path"], "/probe");
    assert_eq!(scrape["authorization"]["type"], "Bearer");
    // The job's shard rule: hashmod of the probed URL, then a keep of one shard.
    let rules = array(&scrape["relabel_configs"]);
    let hashmod = rules
        .iter()
        .position(|r| r["action"] == "hashmod")
        .expect("a hashmod rule");
    assert_eq!(
        strings(&rules[hashmod]["source_labels"]),
        ["__param_target"]
    );
    let keep = &rules[hashmod + 1];
    assert_eq!(
        (keep["action"].as_str(), keep["source_labels"][0].as_str()),
        (Some("keep"), rules[hashmod]["target_label"].as_str())
    );
}

#[test]
fn the_probe_alerts_pass_promtool_and_name_what_probe_exposes() {
    let prom = Path::new(ROOT).join("deploy/prometheus");
    let check = promtool(
        &[
            "check",
            "rules",
            &prom.join("probe-alerts.yaml").to_string_lossy(),
        ],
        "",
    );
    assert!(check.ok, "{}{}", check.stdout, check.stderr);
    let out = Command::new("promtool")
        .args(["test", "rules", "probe-alerts.test.yaml"])
        .current_dir(&prom)
        .output()
        .expect("promtool test rules");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = yaml("deploy/prometheus/probe-alerts.yaml");
    let job = yaml("deploy/prometheus/probe.yaml")["scrape_configs"][0]["job_name"].clone();
    for rule in array(&rules["groups"][0]["rules"]) {
        let expr = rule["expr"].as_str().expect("expr");
        assert!(
            expr.contains("probe_success") || expr.contains("up{"),
            "{expr}: alerts on what /probe answers"
        );
        assert!(
            expr.contains(&format!("job=\"{}\"", job.as_str().unwrap_or("?"))),
            "{expr}"
        );
    }
}

/// The annotated Service names a port `mcp` and a module the fleet's configuration has.
#[test]
fn the_annotated_service_names_a_module_of_the_fleet() {
    let svc = manifest("app-service.yaml");
    let notes = &svc["metadata"]["annotations"];
    assert_eq!(notes["agenthealth.io/probe"], "true");
    let module = notes["agenthealth.io/module"].as_str().expect("a module");
    assert!(
        array(&svc["spec"]["ports"])
            .iter()
            .any(|p| p["name"] == "mcp")
    );
    let config: Value =
        yaml_serde::from_str(&configmap_config("probe-configmap.yaml")).expect("config");
    assert!(
        array(&config["modules"])
            .iter()
            .any(|m| m["name"] == module),
        "{module} is no module of probe-configmap.yaml"
    );
    assert!(config.get("targets").is_none(), "modules only");
}
