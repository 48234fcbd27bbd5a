//! Configuration files end to end: `validate`, load errors (exit 6, key path, no values
//! echoed), and MISCONFIGURED results before any traffic.

use crate::util::{TempDir, run, run_env};
use agenthealth_testkit::http_server::{Reply, Server};

#[test]
fn validate_accepts_the_every_field_fixture() {
    let o = run(&["validate", "tests/config/every-field.yaml"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
}

/// A file of `modules:` only is valid (serve's `/probe` runs them), but there is nothing for
/// `check` or `doctor` to run: a tool failure that says so.
#[test]
fn a_file_of_modules_only_validates_and_has_nothing_to_check() {
    let dir = TempDir::new("cfg-modules");
    let f = dir.file(
        "modules.yaml",
        "version: v1\nmodules:\n  - name: mcp\n    type: mcp\n    allow: ['*.agents.svc']\n",
    );
    let f = f.to_str().unwrap_or_default();
    let v = run(&["validate", f]);
    assert_eq!((v.code, v.stderr.as_str()), (0, ""));
    for verb in ["check", "doctor"] {
        let o = run(&[verb, f]);
        o.assert_tool_failure();
        assert!(
            o.stderr
                .contains("no targets: this file's modules run through serve's /probe"),
            "{verb}: {}",
            o.stderr
        );
    }
}

#[test]
fn load_errors_name_the_path_and_never_echo_values() {
    let dir = TempDir::new("cfg");
    let cases = [
        (
            "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n    timeot_ms: 5\n",
            "targets[0].timeot_ms",
        ),
        (
            "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n    timeout_ms: s3cr3t-canary\n",
            "targets[0].timeout_ms",
        ),
        (
            "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n    auth:\n      bearer_env: s3cr3t-canary=1\n",
            "targets[0].auth.bearer_env",
        ),
        ("version: v1\ntargets: []\n", "targets"),
        ("version: v1\nversion: v1\ntargets: []\n", "version"),
    ];
    for (i, (yaml, path)) in cases.iter().enumerate() {
        let f = dir.file(&format!("c{i}.yaml"), yaml);
        let o = run(&["check", f.to_str().unwrap_or_default()]);
        o.assert_tool_failure();
        assert!(o.stderr.contains(path), "{path}: {}", o.stderr);
        assert!(!o.stderr.contains("s3cr3t-canary"), "{}", o.stderr);
        let v = run(&["validate", f.to_str().unwrap_or_default()]);
        v.assert_tool_failure();
    }
}

#[test]
fn missing_env_is_misconfigured_without_traffic_and_secrets_are_redacted() {
    let dir = TempDir::new("env");
    // The target name contains the secret value: it must be redacted everywhere.
    let f = dir.file(
        "c.yaml",
        "version: v1\ntargets:\n  - name: svc-canary-tok-123\n    type: http\n    endpoint: http://127.0.0.1:9/\n    auth:\n      bearer_env: AH_T\n  - name: other\n    type: http\n    endpoint: http://127.0.0.1:9/\n    auth:\n      bearer_env: AH_MISSING\n",
    );
    for format in ["terminal", "json", "yaml"] {
        let o = run_env(
            &["doctor", f.to_str().unwrap_or_default(), "--format", format],
            &[("AH_T", "canary-tok-123")],
        );
        assert!(
            !o.stdout.contains("canary-tok-123"),
            "{format}: {}",
            o.stdout
        );
        assert!(!o.stderr.contains("canary-tok-123"));
        assert!(o.stdout.contains("[REDACTED]"), "{format}: {}", o.stdout);
        assert_eq!(o.code, 4, "{format}: {}", o.stdout);
    }
}

/// A key path that ends in a credential-looking key (`auth.token`, a header named
/// `Authorization`) is printed as a path: the redaction pass does not mistake our own
/// `path: expected` separator for a credential assignment.
#[test]
fn key_paths_named_like_credentials_are_printed_whole() {
    let dir = TempDir::new("keys");
    for (extra, want) in [
        (
            "    auth:\n      token: s3cr3t-canary\n",
            "targets[0].auth.token: unknown key; expected one of bearer_env (line 7)",
        ),
        (
            "    http:\n      headers:\n        Authorization: 7\n",
            "targets[0].http.headers.Authorization: expected a string, found an integer (line 8)",
        ),
        (
            "    password: s3cr3t-canary\n",
            "targets[0].password: unknown key",
        ),
    ] {
        let f = dir.file(
            "c.yaml",
            &format!(
                "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x/\n{extra}"
            ),
        );
        let o = run(&["validate", f.to_str().unwrap_or_default()]);
        o.assert_tool_failure();
        assert!(o.stderr.contains(want), "{}", o.stderr);
        assert!(!o.stderr.contains("s3cr3t-canary"), "{}", o.stderr);
    }
}

/// `validate` loads and checks the file only: no connection to any endpoint in it, and no
/// credential needed.
#[test]
fn validate_never_touches_the_network() {
    let s = Server::start(|_| Reply::status(200).body("ok"));
    let dir = TempDir::new("validate");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: {url}\n    auth:\n      bearer_env: AH_UNSET_TOKEN\n    dependencies:\n      - name: b\n        type: api\n        endpoint: {url}\n        checks: [functional]\n        http: {{body_contains: ok}}\n",
            url = s.url("/")
        ),
    );
    let o = run(&["validate", f.to_str().unwrap_or_default()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    assert_eq!(s.connections(), 0);
    // The same file under `check` does connect: the server is reachable.
    let o = run_env(
        &["check", f.to_str().unwrap_or_default()],
        &[("AH_UNSET_TOKEN", "t")],
    );
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(s.connections() > 0);
}

/// Canary secrets placed everywhere a secret could slip out — an env value used as a target
/// name, an id, a dependency's name and a required header's name, URL userinfo and query in
/// an endpoint, a server's headers and body — never reach stdout or stderr, in any format,
/// under `check` or `doctor`.
#[test]
fn canary_secrets_never_reach_stdout_or_stderr() {
    const TOKEN: &str = "canaryTok42";
    const SERVER: &str = "server-canary-91";
    let s = Server::start(|_| {
        Reply::status(200)
            .header("X-Ready", SERVER)
            .header("Set-Cookie", &format!("session={SERVER}"))
            .body(format!("{SERVER} token={SERVER} https://{SERVER}.example/"))
    });
    let url = s.url("/");
    let port = s.port();
    let dir = TempDir::new("canary");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1
targets:
  - name: svc {TOKEN}
    id: id-{TOKEN}
    type: http
    endpoint: {url}
    auth:
      bearer_env: AH_TOKEN
    checks: [reachability, protocol, functional]
    http:
      headers:
        X-{TOKEN}: expected
      body_contains: absent
    dependencies:
      - name: dep-{TOKEN}
        type: api
        endpoint: http://user:pa55-canary@127.0.0.1:{port}/?token=qs-canary
        relationship: downstream
  - name: {TOKEN}
    type: http
    endpoint: https://user:pa55-canary@localhost:{port}/#frag-canary
"
        ),
    );
    let f = f.to_str().unwrap_or_default();
    for verb in ["check", "doctor"] {
        for format in ["terminal", "json", "yaml"] {
            let o = run_env(&[verb, f, "--format", format], &[("AH_TOKEN", TOKEN)]);
            assert!(
                (1..=5).contains(&o.code),
                "{verb} {format}: {}\n{}",
                o.stdout,
                o.stderr
            );
            for canary in [TOKEN, SERVER, "pa55-canary", "qs-canary", "frag-canary"] {
                assert!(
                    !o.stdout.contains(canary) && !o.stderr.contains(canary),
                    "{verb} {format}: {canary} leaked:\n{}{}",
                    o.stdout,
                    o.stderr
                );
            }
            assert!(
                o.stdout.contains("[REDACTED]"),
                "{verb} {format}: {}",
                o.stdout
            );
            if verb == "doctor" && format == "terminal" {
                assert!(
                    o.stdout.contains("must not carry user:password@"),
                    "{}",
                    o.stdout
                );
            }
            if format == "json" {
                let v = o.json();
                assert_eq!(v["results"][0]["target"]["id"], "id-redacted");
                assert_eq!(
                    v["results"][1]["checks"]["configuration"]["status"],
                    "MISCONFIGURED"
                );
                assert_eq!(
                    v["results"][0]["dependencies"][0]["checks"]["configuration"]["status"],
                    "MISCONFIGURED"
                );
            }
        }
    }
    // The endpoints with userinfo were never contacted; the first target was (its GET too).
    assert!(s.requests().iter().all(|r| !r.target.contains("qs-canary")));
    assert_eq!(s.count("GET"), 6);
}

/// YAML is the JSON document re-encoded: same content, keys alphabetical, sequences
/// indented under their key, `latency_ms: null`, `checks: {}`, `dependencies: []`.
#[test]
fn yaml_is_the_json_document_with_sorted_keys() {
    let dir = TempDir::new("yaml");
    let f = dir.file(
        "c.yaml",
        "version: v1\ntargets:\n  - name: a\n    type: custom\n    endpoint: x\n  - name: b\n    type: http\n    endpoint: http://127.0.0.1:9/\n    checks: []\n",
    );
    let f = f.to_str().unwrap_or_default();
    let json = run(&["check", f, "--format", "json"]);
    let yaml = run(&["check", f, "--format", "yaml"]);
    assert_eq!((json.code, yaml.code), (5, 5));
    let back: serde_json::Value = yaml_serde::from_str(&yaml.stdout).expect("yaml parses");
    assert_eq!(crate::util::untimed(back), json.json_untimed());
    // doctor: the same document in JSON, advice in the terminal format.
    let doctor = run(&["doctor", f, "--format=json"]);
    assert_eq!(
        (doctor.code, doctor.json_untimed()),
        (5, json.json_untimed())
    );
    let doctor = run(&["doctor", f]);
    assert_eq!(doctor.code, 5);
    assert!(doctor.stdout.contains("\nDoctor: "), "{}", doctor.stdout);
    // The run's duration comes first (alphabetically) and differs from run to run.
    let (duration, rest) = yaml.stdout.split_once('\n').unwrap_or_default();
    assert!(duration.starts_with("duration_ms: "), "{}", yaml.stdout);
    assert_eq!(
        rest,
        "\
results:
  - checks:
      configuration:
        message: no adapter registered for target type
        status: MISCONFIGURED
    dependencies: []
    latency_ms: null
    status: MISCONFIGURED
    target:
      name: a
      type: custom
  - checks: {}
    dependencies: []
    latency_ms: null
    status: UNKNOWN
    target:
      name: b
      type: http
spec_version: v1
"
    );
}

/// What would make a check MISCONFIGURED on any host is a load error for `validate` — one
/// line with the key path and the line, exit 6, never the value — while `check` of the same
/// file keeps reporting it as a MISCONFIGURED result, exit 4 (as the Go reference does).
#[test]
fn validate_refuses_an_endpoint_that_cannot_work_and_check_reports_it() {
    let dir = TempDir::new("cfg-endpoint");
    for (endpoint, extra, expected) in [
        (
            "ftp://x/",
            "",
            "expected an http(s) URL; its scheme is not http or https",
        ),
        (
            "http://u:s3cr3t@x/",
            "",
            "expected an http(s) URL; it carries user:password@ (a token goes in auth.bearer_env)",
        ),
        (
            "http://x:99999/",
            "",
            "expected an http(s) URL; it does not parse",
        ),
        (
            "example.com/health",
            "",
            "expected an http(s) URL; it does not parse",
        ),
        (
            "stdio://x",
            "",
            "expected an http(s) URL; a stdio endpoint needs mcp.transport: stdio",
        ),
    ] {
        let kind = if endpoint.starts_with("stdio") {
            "mcp"
        } else {
            "http"
        };
        let file = dir.file(
            "c.yaml",
            &format!("version: v1\ntargets:\n  - name: a\n    type: {kind}\n    endpoint: {endpoint}\n{extra}"),
        );
        let o = run(&["validate", &file.to_string_lossy()]);
        o.assert_tool_failure();
        assert_eq!(
            o.stderr,
            format!(
                "agenthealth: invalid configuration: targets[0].endpoint: {expected} (line 5)\n"
            )
        );
        assert!(!o.stderr.contains("s3cr3t"));
        let o = run(&["check", &file.to_string_lossy(), "--format", "line"]);
        assert_eq!(o.code, 4, "{endpoint}: {}", o.stdout);
        assert!(o.stdout.starts_with("a MISCONFIGURED"), "{}", o.stdout);
    }
}
