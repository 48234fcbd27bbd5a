//! Command-line contract: usage, version, misuse, exit codes.

use std::time::{Duration, Instant};

use crate::util::{TempDir, bin, run, run_env};

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
        assert_eq!(o.stdout, agenthealth::VERSION_LINE);
        // The version is the second word, as the Go reference prints it; the commit follows.
        let words: Vec<&str> = o.stdout.split_whitespace().collect();
        assert_eq!(
            words[..3],
            ["agenthealth", env!("CARGO_PKG_VERSION"), "(commit"]
        );
        let commit = words[3].trim_end_matches(')');
        assert!(
            commit == "unknown"
                || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
            "{}",
            o.stdout
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
        &["help", "bogus"],
        &["login", "c.yaml", "t", "--format", "json"],
        &["serve"],
        &["serve", "missing.yaml", "--unknown"],
        &["serve", "missing.yaml", "--format", "json"],
        &["validate", "c.yaml", "--format", "json"],
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
    let json = run(&["ping", "custom", "x", "--format", "json"]);
    let back: serde_json::Value = yaml_serde::from_str(&o.stdout).expect("yaml parses");
    assert_eq!(crate::util::untimed(back), json.json_untimed());
}

/// `--` ends options: what follows is positional even when it looks like an option.
#[test]
fn double_dash_ends_options() {
    let o = run(&["check", "--format", "json", "--", "--help"]);
    o.assert_tool_failure();
    assert!(
        o.stderr.contains("cannot open configuration file"),
        "{}",
        o.stderr
    );
    let o = run(&["--format=json", "ping", "--", "custom", "-x"]);
    assert_eq!(o.code, 4, "{}", o.stderr);
    assert_eq!(o.json()["target"]["type"], "custom");
}

/// A stdout closed at start (`>&-`) loses the document: a tool failure, not the status's
/// exit code (the runtime quietly reopens it on /dev/null before `main`).
#[test]
fn a_closed_stdout_is_a_tool_failure() {
    for args in [&["version"][..], &["ping", "custom", "x"]] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(crate::util::bin())
            .args(args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(6), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "agenthealth: cannot write health results\n"
        );
    }
    // Discarding it on purpose is not a failure, and neither is a reader that stopped
    // early (`| head`): the exit code is the status's.
    let out = std::process::Command::new(crate::util::bin())
        .args(["ping", "custom", "x"])
        .stdout(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(4));
    let mut child = std::process::Command::new(crate::util::bin())
        .args(["ping", "custom", "x"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    drop(child.stdout.take());
    assert_eq!(child.wait().expect("wait").code(), Some(4));
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

#[test]
fn every_cancelling_signal_cancels_and_still_prints_a_document() {
    use agenthealth_testkit::http_server::{Reply, Server};
    use nix::sys::signal::Signal;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        let s = Server::start(|_| Reply::HangBeforeHead);
        let url = s.url("/");
        let child = Command::new(crate::util::bin())
            .args([
                "ping",
                "http",
                &url,
                "--timeout",
                "60000",
                "--format",
                "json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // Wait until the probe is in flight (the server saw the request), bounded.
        let until = Instant::now() + Duration::from_secs(10);
        while s.requests().is_empty() && Instant::now() < until {
            std::thread::yield_now();
        }
        let start = Instant::now();
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).expect("signal");
        let out = child.wait_with_output().expect("wait");
        assert!(start.elapsed() < Duration::from_secs(2), "{signal}");
        assert_eq!(out.status.code(), Some(5), "{signal}");
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("a document is printed");
        assert_eq!(v["status"], "UNKNOWN");
    }
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let always = run(&["ping", "custom", "x", "--color", "always"]);
    assert!(always.stdout.contains("\x1b["), "{:?}", always.stdout);
    let never = run(&["ping", "custom", "x", "--color", "never"]);
    assert!(!never.stdout.contains('\x1b'));
    // Not a terminal: auto never colours.
    let auto = run_env(&["ping", "custom", "x"], &[("NO_COLOR", "")]);
    assert!(!auto.stdout.contains('\x1b'));
}

#[test]
fn errors_never_echo_secrets_or_urls() {
    let o = run(&["ping", "http", "http://u:pw@h/", "--bogus=token=s3cr3t"]);
    o.assert_tool_failure();
    assert!(
        !o.stderr.contains("s3cr3t") && !o.stderr.contains("pw@"),
        "{}",
        o.stderr
    );
    let o = run(&["check", "/nonexistent/token=s3cr3t.yaml"]);
    o.assert_tool_failure();
    assert!(!o.stderr.contains("s3cr3t"), "{}", o.stderr);
}

const COMMANDS: &str = "commands: ping, check, doctor, validate, serve, login, version, help";

#[test]
fn an_unknown_command_is_echoed_with_the_nearest_and_the_list() {
    for args in [&["chek", "c.yaml"][..], &["help", "chek"]] {
        let o = run(args);
        o.assert_tool_failure();
        assert_eq!(
            o.stderr,
            format!("agenthealth: unknown command `chek` (did you mean `check`?); {COMMANDS}\n")
        );
    }
    let o = run(&["frobnicate"]);
    assert_eq!(
        o.stderr,
        format!("agenthealth: unknown command `frobnicate`; {COMMANDS}\n")
    );
    // Something that is no word is not echoed (misplaced arguments: a URL with a password).
    let o = run(&["http://u:pw@h/", "x"]);
    o.assert_tool_failure();
    assert_eq!(
        o.stderr,
        format!("agenthealth: unknown command; {COMMANDS}\n")
    );
}

#[test]
fn an_unknown_target_type_is_echoed_with_the_nearest_and_the_list() {
    let types = "types: agent, multi-agent, a2a, mcp, tool, model, llm, http, api, \
                 vector-store, database, runtime, gateway, router, custom";
    let o = run(&["ping", "htp", "http://127.0.0.1:1/"]);
    o.assert_tool_failure();
    assert_eq!(
        o.stderr,
        format!("agenthealth: unknown target type `htp` (did you mean `http`?); {types}\n")
    );
    let o = run(&["doctor", "http://u:pw@h/", "http"]);
    o.assert_tool_failure();
    assert_eq!(
        o.stderr,
        format!("agenthealth: unknown target type; {types}\n")
    );
    // A known type with a blank endpoint keeps its own message.
    let o = run(&["ping", "http", " "]);
    assert!(o.stderr.contains("nonempty endpoint"), "{}", o.stderr);
}

#[test]
fn help_shows_every_form_and_only_the_flags_a_verb_documents() {
    let ping = run(&["help", "ping"]).stdout;
    assert!(
        ping.starts_with(
            "usage: agenthealth ping <type> <endpoint> [options]\n       \
             agenthealth ping mcp --stdio [options] -- <command> [args...]\n"
        ),
        "{ping}"
    );
    let doctor = run(&["doctor", "--help"]).stdout;
    assert!(
        doctor.contains("agenthealth doctor mcp --stdio [options] -- <command>"),
        "{doctor}"
    );
    // `version` ignores --format (and still accepts it, as the Go reference does).
    let version = run(&["help", "version"]).stdout;
    assert!(!version.contains("--format"), "{version}");
    assert_eq!(run(&["version", "--format", "json"]).code, 0);
    run(&["version", "--format", "bad"]).assert_tool_failure();
    let general = run(&["--help"]).stdout;
    assert!(
        general.contains("  agenthealth serve <config.yaml|->\n"),
        "{general}"
    );
}

/// A configuration may stream in: `check <(…)` (a pipe at /dev/fd/N), a FIFO, `login <(…)`.
#[test]
fn a_configuration_is_read_from_a_pipe_or_a_fifo() {
    let dir = TempDir::new("cli-pipe");
    let config = "version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://127.0.0.1:1/\n    checks: []\n";
    let file = dir.file("c.yaml", config);
    let bash = |line: &str| {
        let out = std::process::Command::new("bash")
            .args(["-c", line])
            .env("AH", bin())
            .env("C", &file)
            .output()
            .expect("bash");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(bash("\"$AH\" validate <(cat \"$C\")").0, Some(0));
    let (code, stdout, _) = bash("\"$AH\" check <(cat \"$C\") --format line");
    assert_eq!((code, stdout.as_str()), (Some(5), "a UNKNOWN\n"));
    // login reads it too: the target is not there, but the file was read.
    let (code, _, stderr) = bash("\"$AH\" login <(cat \"$C\") nobody");
    assert_eq!(code, Some(6));
    assert!(!stderr.contains("regular file"), "{stderr}");
    // A FIFO that nothing ever writes costs the run deadline, then exit 6.
    let fifo = dir.0.join("silent.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let started = Instant::now();
    let o = run(&["check", &fifo.to_string_lossy(), "--deadline", "300"]);
    o.assert_tool_failure();
    assert!(
        o.stderr.contains("did not arrive within 300 ms"),
        "{}",
        o.stderr
    );
    assert!(started.elapsed() < Duration::from_millis(1300));
}
