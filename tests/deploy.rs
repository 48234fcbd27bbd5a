//! What `deploy/`, the Dockerfiles and the release files promise: manifests valid against the
//! Kubernetes schemas (offline) and hardened as documented, configurations that load and
//! run, alert rules naming metrics the binary emits, a scratch image of one static binary,
//! completions that complete, a LICENSE that matches Cargo.toml — and the static binary
//! running in an empty root directory as uid 65532 with the manifests' exact commands
//! ([`crate::empty_root`] builds that root).

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
    for file in ["deployment.yaml", "cronjob.yaml", "app-deployment.yaml"] {
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
    ];
    for (workload, configmap) in cases {
        let m = manifest(workload);
        let c = &pod_spec(&m)["containers"][0];
        let config: Value = yaml_serde::from_str(&configmap_config(configmap)).expect("config");
        let mut needed: Vec<String> = Vec::new();
        let mut token_files: Vec<String> = Vec::new();
        for t in array(&config["targets"]) {
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
    for file in ["configmap.yaml", "app-probe-configmap.yaml"] {
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
    let emitted: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(emitted.len() >= 6, "{}", o.stdout);
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

#[test]
fn the_image_is_one_static_binary_in_scratch_as_65532() {
    let dockerfile = read("Dockerfile");
    let instructions: Vec<&str> = dockerfile
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with(' '))
        .collect();
    let stages: Vec<&&str> = instructions
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert!(stages.len() >= 2, "multi-stage: {stages:?}");
    assert_eq!(**stages.last().expect("a stage"), "FROM scratch");
    let last = instructions
        .iter()
        .position(|l| *l == "FROM scratch")
        .expect("the final stage");
    let final_stage = &instructions[last..];
    assert!(final_stage.contains(&"USER 65532:65532"), "{final_stage:?}");
    assert!(
        final_stage.contains(&r#"ENTRYPOINT ["/usr/local/bin/agenthealth"]"#),
        "{final_stage:?}"
    );
    // What the build copies from its context is in the context (.dockerignore lets it in).
    let ignore = read(".dockerignore");
    let allowed: Vec<&str> = ignore
        .lines()
        .filter_map(|l| l.strip_prefix('!'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    for dockerfile in [
        "Dockerfile",
        "deploy/docker/stdio.Dockerfile",
        "deploy/docker/app.Dockerfile",
    ] {
        for line in read(dockerfile)
            .lines()
            .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
        {
            let parts: Vec<&str> = line.split_whitespace().collect();
            for source in &parts[1..parts.len() - 1] {
                assert!(
                    Path::new(ROOT).join(source).exists(),
                    "{dockerfile}: {source}"
                );
                assert!(
                    allowed.contains(source),
                    "{dockerfile}: .dockerignore keeps out {source}"
                );
            }
        }
    }
    for derived in [
        "deploy/docker/stdio.Dockerfile",
        "deploy/docker/app.Dockerfile",
    ] {
        assert!(
            read(derived).contains(
                "COPY --from=agenthealth /usr/local/bin/agenthealth /usr/local/bin/agenthealth\n"
            ),
            "{derived} copies the binary from the image"
        );
    }
}

#[test]
fn the_license_is_the_one_cargo_toml_declares() {
    let cargo = read("Cargo.toml");
    assert!(
        cargo.contains("\nlicense = \"Apache-2.0\"\n"),
        "Cargo.toml's license"
    );
    let license = read("LICENSE");
    assert!(
        license
            .trim_start()
            .starts_with("Apache License\n                           Version 2.0, January 2004")
    );
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
}

#[test]
fn bash_completes_verbs_flags_and_values() {
    let script = agenthealth::reference::completion(agenthealth::reference::Shell::Bash);
    let dir = TempDir::new("deploy-bash");
    let file = dir.file("agenthealth.bash", &script);
    let complete = |words: &[&str]| {
        let words = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _agenthealth; echo \"${{COMPREPLY[*]}}\"",
                file.display()
            ))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(complete(&["agenthealth", "se"]), "serve");
    assert_eq!(complete(&["agenthealth", "serve", "--l"]), "--listen");
    assert_eq!(
        complete(&["agenthealth", "check", "--format", "o"]),
        "openmetrics"
    );
    assert_eq!(complete(&["agenthealth", "ping", "--st"]), "--stdio");
    assert_eq!(
        complete(&["agenthealth", "check", "--st"]),
        "",
        "--stdio is ping's and doctor's"
    );
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .status()
        .expect("bash -n");
    assert!(syntax.success());
}

/// An MCP server over TLS with a certificate of a private CA for 127.0.0.1, requiring the
/// bearer `demo-token` (the fake server's toy authorization server issues it).
fn private_ca_server() -> (TestCa, FakeServer) {
    let ca = TestCa::new();
    let wrap = server_wrap(ca.leaf(&["127.0.0.1"]));
    let config: FakeConfig = preset("auth").expect("the auth preset");
    let server = FakeServer::try_start_wrapped(config, 0, Some(wrap)).expect("TLS server");
    (ca, server)
}

#[test]
fn the_app_probe_runs_in_an_empty_root_as_65532_with_a_private_ca() {
    let (ca, server) = private_ca_server();
    let app = manifest("app-deployment.yaml");
    let container = &pod_spec(&app)["containers"][0];
    let command = with_run_deadline(&strings(&container["readinessProbe"]["exec"]["command"]));
    let config = configmap_config("app-probe-configmap.yaml")
        .replace("https://127.0.0.1:8443", &server.base());
    let ca_file = array(&container["env"])
        .iter()
        .find(|e| e["name"] == "SSL_CERT_FILE")
        .and_then(|e| e["value"].as_str())
        .expect("SSL_CERT_FILE")
        .to_string();
    let (ca_dir, ca_name) = ca_file.rsplit_once('/').expect("a path");

    let mut root = EmptyRoot::new("deploy-app-root");
    root.volume(
        "/etc/agenthealth",
        &[("config.yaml", &config)],
        0o555,
        false,
    );
    root.volume(ca_dir, &[(ca_name, &ca.pem)], 0o555, false);
    let env = [
        ("NOTES_MCP_TOKEN", "demo-token"),
        ("SSL_CERT_FILE", ca_file.as_str()),
    ];
    let o = root.run(&command, &env);
    assert_eq!(o.code, 0, "stdout:\n{}\nstderr:\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.starts_with("notes-mcp (mcp): HEALTHY"),
        "{}",
        o.stdout
    );
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    assert!(!o.stdout.contains("demo-token"));

    // Without the CA there is no trust: no /etc/ssl to fall back on, only the bundled roots.
    let o = root.run(&command, &env[..1]);
    assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("UNREACHABLE"), "{}", o.stdout);
}

#[test]
fn the_cronjob_check_runs_in_an_empty_root_and_keeps_its_token_file_private() {
    let (ca, server) = private_ca_server();
    let cron = manifest("cronjob.yaml");
    let container = &pod_spec(&cron)["containers"][0];
    let mut argv = vec!["/usr/local/bin/agenthealth".to_string()];
    argv.extend(with_run_deadline(&strings(&container["args"])));
    let base = server.base();
    let config = configmap_config("configmap.yaml")
        .replace("https://notes-mcp.agents.svc.cluster.local:8443", &base)
        .replace("https://search-mcp.agents.svc.cluster.local", &base)
        .replace("https://auth.agents.svc.cluster.local", &base);
    assert!(!config.contains("cluster.local"), "{config}");

    let mut root = EmptyRoot::new("deploy-cron-root");
    root.volume(
        "/etc/agenthealth",
        &[("config.yaml", &config)],
        0o555,
        false,
    );
    root.volume("/etc/agenthealth-ca", &[("ca.crt", &ca.pem)], 0o555, false);
    // An emptyDir: world-writable, as the kubelet makes it.
    let tokens = root.volume("/var/lib/agenthealth", &[], 0o777, true);
    let env = [
        ("NOTES_MCP_TOKEN", "demo-token"),
        ("SEARCH_MCP_CLIENT_SECRET", "demo-secret"),
        ("SSL_CERT_FILE", "/etc/agenthealth-ca/ca.crt"),
    ];
    let token_requests = || server.log().iter().filter(|s| s.path == "/token").count();
    let o = root.run(&argv, &env);
    assert_eq!(o.code, 0, "stdout:\n{}\nstderr:\n{}", o.stdout, o.stderr);
    let doc = o.json();
    let statuses: Vec<&str> = array(&doc["results"])
        .iter()
        .filter_map(|r| r["status"].as_str())
        .collect();
    assert_eq!(statuses, ["HEALTHY", "HEALTHY"], "{}", o.stdout);
    for secret in ["demo-token", "demo-secret"] {
        assert!(
            !o.stdout.contains(secret) && !o.stderr.contains(secret),
            "{secret} printed"
        );
    }
    assert_eq!(token_requests(), 1, "one client-credentials grant");

    // The token file: in a directory agenthealth made private, readable by its owner only,
    // owned by the uid it ran as (65532 inside, this test's uid outside).
    let file = tokens.join("tokens/search-mcp.json");
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&tokens.join("tokens")), 0o700);
    assert_eq!(mode(&file), 0o600);
    let me = nix::unistd::getuid().as_raw();
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&file).expect("file")),
        me
    );
    let saved = std::fs::read_to_string(&file).expect("token file");
    assert!(
        saved.contains("\"access_token\"") && saved.contains(&base),
        "{saved}"
    );

    // The next run reuses it: no new grant.
    let o = root.run(&argv, &env);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(token_requests(), 1, "the saved token was reused");
}

#[test]
fn serve_runs_in_an_empty_root_with_the_deployments_arguments() {
    let (ca, server) = private_ca_server();
    let deployment = manifest("deployment.yaml");
    let container = &pod_spec(&deployment)["containers"][0];
    let mut argv = vec!["/usr/local/bin/agenthealth".to_string()];
    argv.extend(with_run_deadline(&strings(&container["args"])));
    // The one change: an ephemeral port on loopback for the pod's 0.0.0.0:8080.
    let listen = argv
        .iter()
        .position(|a| a == "0.0.0.0:8080")
        .expect("--listen 0.0.0.0:8080");
    argv[listen] = "127.0.0.1:0".into();
    let base = server.base();
    let config = configmap_config("configmap.yaml")
        .replace("https://notes-mcp.agents.svc.cluster.local:8443", &base)
        .replace("https://search-mcp.agents.svc.cluster.local", &base)
        .replace("https://auth.agents.svc.cluster.local", &base);

    let mut root = EmptyRoot::new("deploy-serve-root");
    root.volume(
        "/etc/agenthealth",
        &[("config.yaml", &config)],
        0o555,
        false,
    );
    root.volume("/etc/agenthealth-ca", &[("ca.crt", &ca.pem)], 0o555, false);
    // A PersistentVolumeClaim with fsGroup: group-writable.
    root.volume("/var/lib/agenthealth", &[], 0o2770, true);
    let token = "ahp-token-for-the-empty-root";
    let env = [
        ("AGENTHEALTH_AHP_TOKEN", token),
        ("NOTES_MCP_TOKEN", "demo-token"),
        ("SEARCH_MCP_CLIENT_SECRET", "demo-secret"),
        ("SSL_CERT_FILE", "/etc/agenthealth-ca/ca.crt"),
    ];
    let mut child = root.command(&argv, &env).spawn().expect("start serve");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    stderr.read_line(&mut first).expect("announcement");
    let addr: std::net::SocketAddr = first
        .strip_prefix("agenthealth: serving AHP v1 on http://")
        .and_then(|r| r.split(' ').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no announcement: {first:?}"));
    let get = |path: &str| {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nAuthorization: Bearer {token}\r\n\r\n"
        )
        .expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("answer");
        text
    };
    assert!(get("/live").starts_with("HTTP/1.1 200 "));
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = get("/ready");
        if ready.starts_with("HTTP/1.1 200 ") {
            assert!(ready.contains("\"status\":\"HEALTHY\""), "{ready}");
            break;
        }
        assert!(Instant::now() < until, "never ready: {ready}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let metrics = get("/metrics");
    assert!(
        metrics.contains("agenthealth_target_status{target=\"search-mcp\",status=\"HEALTHY\"} 1\n"),
        "{metrics}"
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert!(rest.is_empty(), "{rest}");
}
