//! Configuration files end to end: `validate`, load errors (exit 6, key path, no values
//! echoed), and MISCONFIGURED results before any traffic.

use crate::util::{TempDir, run, run_env};

#[test]
fn validate_accepts_the_every_field_fixture() {
    let o = run(&["validate", "tests/config/every-field.yaml"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
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
