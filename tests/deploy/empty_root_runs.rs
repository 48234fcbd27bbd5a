//! The static binary in an empty root directory as uid 65532, running the manifests' exact
//! commands.

use super::*;

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
            "GET {path} HTTP/1.1\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
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
