//! Command-line contract: usage, version, misuse, exit codes.

use crate::util::{run, run_env};

#[test]
fn help_goes_to_stdout_with_exit_0() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["ping", "--help"],
        &["help", "check"],
    ] {
        let o = run(args);
        assert_eq!(o.code, 0, "{args:?}");
        assert!(o.stdout.contains("usage"), "{args:?}");
        assert!(o.stderr.is_empty());
    }
}

#[test]
fn version() {
    for args in [
        &["version"][..],
        &["--version"],
        &["version", "--format=json"],
    ] {
        let o = run(args);
        assert_eq!(o.code, 0);
        assert_eq!(
            o.stdout,
            format!("agenthealth {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn misuse_is_exit_6_with_one_line_and_no_stdout() {
    for args in [
        &[][..],
        &["bad"],
        &["ping"],
        &["check", "missing.yaml"],
        &["ping", "bad", "http://localhost"],
        &["version", "extra"],
        &["version", "--format=bad"],
        &["check", "--format"],
        &["--unknown"],
        &["login"],
        &["login", "missing.yaml", "t"],
        &["validate", "missing.yaml"],
        &["ping", "http", "http://x", "--timeout", "0"],
    ] {
        run(args).assert_tool_failure();
    }
}

#[test]
fn type_without_adapter_is_a_misconfigured_result() {
    let o = run(&[
        "ping",
        "database",
        "postgres://u:p@h/db",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 4);
    let v = o.json();
    assert_eq!(v["status"], "MISCONFIGURED");
    assert_eq!(v["target"]["name"], "ping");
    assert!(
        !o.stdout.contains("postgres"),
        "endpoints never appear in results"
    );
}

#[test]
fn missing_credential_is_misconfigured_and_names_the_variable() {
    let o = run_env(
        &[
            "doctor",
            "http",
            "http://127.0.0.1:9/",
            "--bearer-env",
            "AH_TOKEN",
        ],
        &[("AH_TOKEN", "")],
    );
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(
        o.stdout
            .contains("credential environment variable is missing or empty")
    );
    assert!(
        o.stdout.contains("AH_TOKEN"),
        "doctor names the variable: {}",
        o.stdout
    );
    assert!(o.stdout.contains("Doctor:"));
}

#[test]
fn yaml_is_the_same_document() {
    let o = run(&["ping", "custom", "x", "--format", "yaml"]);
    assert_eq!(o.code, 4);
    assert!(o.stdout.contains("spec_version: v1"), "{}", o.stdout);
    assert!(o.stdout.contains("latency_ms: null"), "{}", o.stdout);
    assert!(o.stdout.contains("dependencies: []"), "{}", o.stdout);
}

#[test]
fn write_failure_is_a_tool_failure() {
    let out = std::process::Command::new(crate::util::bin())
        .arg("version")
        .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(6));
}
