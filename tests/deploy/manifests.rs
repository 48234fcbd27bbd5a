//! deploy/: the manifests valid against the Kubernetes schemas (offline) and hardened as
//! documented, the configurations they mount, and alert rules naming what `serve` exposes.

use super::*;

#[test]
fn every_manifest_validates_against_the_kubernetes_schemas_offline() {
    let files = manifests();
    assert!(files.len() >= 7, "{files:?}");
    let kustomization = yaml("deploy/kubernetes/kustomization.yaml");
    let mut listed = strings(&kustomization["resources"]);
    listed.sort();
    assert_eq!(
        listed, files,
        "kustomization.yaml lists every manifest once"
    );
    let paths: Vec<String> = files
        .iter()
        .map(|f| format!("{ROOT}/deploy/kubernetes/{f}"))
        .collect();
    for version in ["1.30.0", "1.37.0"] {
        tools::python();
        let out = Command::new(tools::dir().join("bin/kubernetes-validate"))
            .args(["--strict", "-k", version])
            .args(&paths)
            .output()
            .expect("run kubernetes-validate");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "Kubernetes {version}:\n{text}");
        assert_eq!(
            text.matches(" passed for resource ").count(),
            files.len(),
            "{text}"
        );
    }
}

#[test]
fn pods_are_hardened_and_take_secrets_only_by_reference() {
    for file in [
        "deployment.yaml",
        "cronjob.yaml",
        "app-deployment.yaml",
        "probe-deployment.yaml",
    ] {
        let m = manifest(file);
        let spec = pod_spec(&m);
        let at = |what: &str| format!("{file}: {what}");
        assert_eq!(
            spec["automountServiceAccountToken"],
            false,
            "{}",
            at("service-account token")
        );
        let pod = &spec["securityContext"];
        assert_eq!(pod["runAsNonRoot"], true, "{}", at("runAsNonRoot"));
        assert_eq!(pod["runAsUser"], 65532, "{}", at("runAsUser"));
        assert_eq!(pod["runAsGroup"], 65532, "{}", at("runAsGroup"));
        assert_eq!(
            pod["seccompProfile"]["type"],
            "RuntimeDefault",
            "{}",
            at("seccomp")
        );
        for c in array(&spec["containers"]) {
            let sc = &c["securityContext"];
            assert_eq!(
                sc["allowPrivilegeEscalation"],
                false,
                "{}",
                at("escalation")
            );
            assert_eq!(
                sc["readOnlyRootFilesystem"],
                true,
                "{}",
                at("read-only root")
            );
            assert_eq!(
                strings(&sc["capabilities"]["drop"]),
                ["ALL"],
                "{}",
                at("capabilities")
            );
            assert!(
                c.get("envFrom").is_none(),
                "{}",
                at("no envFrom: each secret by name")
            );
            for env in array(&c["env"]) {
                let name = env["name"].as_str().unwrap_or_default();
                if name == "SSL_CERT_FILE" {
                    continue;
                }
                let secret = &env["valueFrom"]["secretKeyRef"];
                assert!(
                    env.get("value").is_none()
                        && secret["name"].is_string()
                        && secret["key"].is_string(),
                    "{}",
                    at(&format!("{name} must come from a secretKeyRef"))
                );
            }
            for mount in array(&c["volumeMounts"]) {
                let path = mount["mountPath"].as_str().unwrap_or_default();
                if path.starts_with("/etc/") {
                    assert_eq!(mount["readOnly"], true, "{}", at(path));
                }
            }
        }
    }
}

/// Every variable a configuration or `--token-env` names is set from a Secret in the
/// container that uses it, and every token file lies on a writable volume.
#[test]
fn each_container_has_what_its_configuration_names() {
    let cases = [
        ("deployment.yaml", "configmap.yaml"),
        ("cronjob.yaml", "configmap.yaml"),
        ("app-deployment.yaml", "app-probe-configmap.yaml"),
        ("probe-deployment.yaml", "probe-configmap.yaml"),
    ];
    for (workload, configmap) in cases {
        let m = manifest(workload);
        let c = &pod_spec(&m)["containers"][0];
        let config: Value = yaml_serde::from_str(&configmap_config(configmap)).expect("config");
        let mut needed: Vec<String> = Vec::new();
        let mut token_files: Vec<String> = Vec::new();
        for t in array(&config["targets"])
            .iter()
            .chain(array(&config["modules"]))
        {
            if let Some(v) = t["auth"]["bearer_env"].as_str() {
                needed.push(v.into());
            }
            let oauth = &t["mcp"]["oauth"];
            if let Some(v) = oauth["client_secret_env"].as_str() {
                needed.push(v.into());
            }
            if let Some(f) = oauth["token_file"].as_str() {
                token_files.push(f.into());
            }
        }
        let args = strings(&c["args"]);
        if let Some(i) = args.iter().position(|a| a == "--token-env") {
            needed.push(args[i + 1].clone());
        }
        let env: Vec<&str> = array(&c["env"])
            .iter()
            .filter_map(|e| e["name"].as_str())
            .collect();
        for name in &needed {
            assert!(
                env.contains(&name.as_str()),
                "{workload}: {name} is not set"
            );
        }
        let writable: Vec<&str> = array(&c["volumeMounts"])
            .iter()
            .filter(|m| m["readOnly"] != true)
            .filter_map(|m| m["mountPath"].as_str())
            .collect();
        for f in &token_files {
            assert!(
                writable.iter().any(|w| f.starts_with(&format!("{w}/"))),
                "{workload}: token file {f} is on no writable volume ({writable:?})"
            );
        }
        // The configuration's ConfigMap is what the container mounts at /etc/agenthealth.
        let mounted = array(&c["volumeMounts"])
            .iter()
            .find(|m| m["mountPath"] == "/etc/agenthealth")
            .and_then(|m| m["name"].as_str())
            .expect("a mount at /etc/agenthealth");
        let volume = array(&pod_spec(&m)["volumes"])
            .iter()
            .find(|v| v["name"] == mounted)
            .expect("the mounted volume");
        assert_eq!(
            volume["configMap"]["name"],
            manifest(configmap)["metadata"]["name"],
            "{workload}"
        );
    }
}

#[test]
fn probes_schedules_and_commands_are_as_documented() {
    let serve = manifest("deployment.yaml");
    let c = &pod_spec(&serve)["containers"][0];
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/live");
    assert_eq!(c["startupProbe"]["httpGet"]["path"], "/live");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/ready");
    let args = strings(&c["args"]);
    assert_eq!(args[..2], ["serve", "/etc/agenthealth/config.yaml"]);
    with_run_deadline(&args);

    let cron = manifest("cronjob.yaml");
    assert_eq!(cron["spec"]["concurrencyPolicy"], "Forbid");
    assert_eq!(cron["spec"]["jobTemplate"]["spec"]["backoffLimit"], 0);
    assert_eq!(pod_spec(&cron)["restartPolicy"], "Never");
    let deadline = cron["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"]
        .as_u64()
        .expect("activeDeadlineSeconds");
    let args = strings(&pod_spec(&cron)["containers"][0]["args"]);
    let ms: u64 = args[args
        .iter()
        .position(|a| a == "--deadline")
        .expect("--deadline")
        + 1]
    .parse()
    .expect("ms");
    assert!(
        ms < deadline * 1000,
        "the run deadline ends the check before the Job is cut"
    );

    // The probe fleet has no run to be ready on: the process is the service.
    let fleet = manifest("probe-deployment.yaml");
    let c = &pod_spec(&fleet)["containers"][0];
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/live");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/live");
    let args = strings(&c["args"]);
    assert_eq!(args[..2], ["serve", "/etc/agenthealth/config.yaml"]);
    assert!(
        args.contains(&"--probe-concurrency".to_string()),
        "{args:?}"
    );
    with_run_deadline(&args);

    let app = manifest("app-deployment.yaml");
    let probe = &pod_spec(&app)["containers"][0]["readinessProbe"];
    let command = strings(&probe["exec"]["command"]);
    assert_eq!(
        command[..3],
        [
            "/usr/local/bin/agenthealth",
            "check",
            "/etc/agenthealth/config.yaml"
        ]
    );
    let ms: u64 = command[command
        .iter()
        .position(|a| a == "--deadline")
        .expect("--deadline")
        + 1]
    .parse()
    .expect("ms");
    let timeout = probe["timeoutSeconds"].as_u64().expect("timeoutSeconds");
    assert!(
        ms < timeout * 1000,
        "the run deadline ends the check before the kubelet does"
    );
}

/// docs/deployment.md shows the monitor's configuration as the ConfigMap has it (and its
/// docs test validates that copy).
#[test]
fn the_guide_shows_the_configmaps_configuration() {
    let config = configmap_config("configmap.yaml");
    let guide = read("docs/deployment.md");
    assert!(
        guide.contains(&format!(
            "<!-- file: config.yaml -->\n```yaml\n{config}```\n"
        )),
        "docs/deployment.md must show deploy/kubernetes/configmap.yaml's config.yaml verbatim"
    );
}

#[test]
fn the_configurations_validate() {
    let dir = TempDir::new("deploy-validate");
    for file in [
        "configmap.yaml",
        "app-probe-configmap.yaml",
        "probe-configmap.yaml",
    ] {
        let path = dir.file(file, &configmap_config(file));
        let o = run(&["validate", &path.to_string_lossy()]);
        assert_eq!((o.code, o.stderr.as_str()), (0, ""), "{file}");
    }
    let o = run(&["validate", &format!("{ROOT}/deploy/docker/stdio.yaml")]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (0, ""),
        "deploy/docker/stdio.yaml"
    );
}

/// The stdio image's configuration against the real server it installs (from the interop
/// servers), with the command's path moved to where that server is installed here.
#[test]
fn the_stdio_image_configuration_checks_its_server() {
    let server = interop_dir().join("venv/bin/mcp-server-time");
    assert!(
        server.exists(),
        "interop server mcp-server-time is not installed: {} not found (run .ci/interop-setup)",
        server.display()
    );
    let text = read("deploy/docker/stdio.yaml");
    let installed = "/usr/local/bin/mcp-server-time";
    assert!(text.contains(&format!("command: {installed}\n")), "{text}");
    let dir = TempDir::new("deploy-stdio");
    let config = dir.file(
        "config.yaml",
        &text.replace(installed, &server.to_string_lossy()),
    );
    let o = run(&["check", &config.to_string_lossy(), "--format", "json"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(o.json()["checks"]["capability"]["status"], "HEALTHY");
}

#[test]
fn alert_rules_and_scrape_config_name_what_serve_exposes() {
    // The families, as the binary prints them.
    let dir = TempDir::new("deploy-rules");
    let config = dir.file(
        "c.yaml",
        "version: v1\ntargets:\n  - {name: a, type: http, endpoint: 'http://127.0.0.1:1/'}\n",
    );
    let o = run(&[
        "check",
        &config.to_string_lossy(),
        "--format",
        "openmetrics",
    ]);
    let mut emitted: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(emitted.len() >= 5, "{}", o.stdout);
    // serve's /metrics, which the rules query, also counts its runs (one run's output has no
    // counter: tests/serve.rs checks both).
    emitted.push("agenthealth_runs_total");
    let rules = yaml("deploy/prometheus/alerts.yaml");
    let mut alerts = 0;
    for group in array(&rules["groups"]) {
        for rule in array(&group["rules"]) {
            alerts += 1;
            let expr = rule["expr"].as_str().expect("expr");
            let name = rule["alert"].as_str().expect("alert");
            assert!(
                rule["for"].is_string() && rule["labels"]["severity"].is_string(),
                "{name}"
            );
            for metric in words_with_prefix(expr, "agenthealth_") {
                let family = metric.trim_end_matches("_total");
                assert!(
                    emitted.iter().any(|e| *e == metric || *e == family),
                    "{name}: {metric} is not a metric agenthealth emits ({emitted:?})"
                );
            }
            for status in quoted_after(expr, "status=~")
                .iter()
                .chain(&quoted_after(expr, "status="))
            {
                for s in status.split('|') {
                    assert!(
                        [
                            "HEALTHY",
                            "DEGRADED",
                            "UNHEALTHY",
                            "UNREACHABLE",
                            "MISCONFIGURED",
                            "UNKNOWN"
                        ]
                        .contains(&s),
                        "{name}: {s} is no status"
                    );
                }
            }
        }
    }
    assert!(alerts >= 4, "{alerts} alerts");
    let scrape = yaml("deploy/prometheus/scrape.yaml");
    let job = &scrape["scrape_configs"][0];
    assert_eq!(job["metrics_path"], "/metrics");
    assert_eq!(
        job["authorization"]["type"], "Bearer",
        "/metrics needs the --token-env token"
    );
    let up = read("deploy/prometheus/alerts.yaml");
    assert!(up.contains(&format!(
        "up{{job=\"{}\"}}",
        job["job_name"].as_str().unwrap_or("?")
    )));
}

/// The words of `text` that start with `prefix` (`[a-z0-9_]`).
fn words_with_prefix<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(prefix))
        .collect()
}

/// The `"…"` values right after `key` in `text`.
fn quoted_after<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.match_indices(key)
        .filter_map(|(i, _)| {
            let rest = text[i + key.len()..].strip_prefix('"')?;
            rest.split('"').next()
        })
        .collect()
}
