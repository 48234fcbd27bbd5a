//! The server process over a run: one per target run, discarded after a timeout, started
//! with only the mapped environment or not at all, ended with its whole group however
//! agenthealth itself ends, and one helper thread each.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use agenthealth_testkit::fixtures::{fixture, python_bin};
use agenthealth_testkit::processes::{MARGIN, assert_group_dead, live_members, marked, until_none};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use super::harness::{
    Case, HEALTHY, SILENT, Spec, check, evidence, expect, ms, unstartable, within,
};
use crate::util::{TempDir, command};

#[test]
fn one_process_serves_every_dimension() {
    let spec = Spec::fake(&["--notify"])
        .checks("[reachability, authentication, protocol, capability, latency]");
    let (case, v) = expect(
        "one-process",
        &spec,
        HEALTHY.on("capability"),
        ms(4 * 5_000),
    );
    assert_eq!(case.pids().len(), 1, "one child per target run");
    let log = case.logged();
    assert_eq!(log.iter().filter(|m| *m == "server/discover").count(), 1);
    for list in ["tools/list", "resources/list", "prompts/list"] {
        assert_eq!(log.iter().filter(|m| *m == list).count(), 1, "{log:?}");
    }
    assert_eq!(
        log.last().map(String::as_str),
        Some("eof"),
        "stdin closed at the end"
    );
    assert_eq!(evidence(&v, "capability", "tools_count"), 1);
    let reach = check(&v, "reachability");
    assert!(reach["steps"].is_null(), "no HTTP stages: {reach}");
    assert!(v["latency_ms"].as_f64().is_some_and(|l| l > 0.0));
}

/// An attempt that times out discards its process (upstream §17 N161). A `tools/list` that
/// got no byte is UNREACHABLE (the session answering earlier is no answer to it), and the
/// later check shares that outcome instead of starting a process to wait a second deadline.
#[test]
fn a_silent_check_discards_the_process_and_later_checks_share_its_timeout() {
    let spec = Spec::fake(&["--silent-on", "tools/list"])
        .call("echo", Some(r#"{"text":"x"}"#), &[])
        .checks("[protocol, capability, functional]")
        .timeout(500);
    let (case, v) = expect("discard", &spec, SILENT.on("capability"), ms(500));
    assert_eq!(check(&v, "protocol")["status"], "HEALTHY");
    assert_eq!(check(&v, "functional")["status"], "UNREACHABLE");
    assert_eq!(evidence(&v, "functional", "shared_timeout"), "capability");
    let pids = case.pids();
    assert_eq!(
        pids.len(),
        1,
        "no second process waits for the same silence"
    );
    assert_group_dead(pids[0]);
    let log = case.logged();
    assert_eq!(
        log.iter().filter(|m| *m == "server/discover").count(),
        1,
        "{log:?}"
    );
    assert!(
        case.calls().is_empty(),
        "the tool is never called without its listing"
    );
}

/// Upstream §17 J63/J64.
#[test]
fn only_the_mapped_environment_reaches_the_child_and_stderr_is_discarded() {
    let case = Case::new("env");
    let mut spec = Spec::fake(&[
        "--require-env",
        "CHILD_TOKEN=canary-stdio-4711",
        "--forbid-env",
        "UNRELATED_MCP_SECRET",
        "--forbid-env",
        "AH_TEST_PIDFILE",
        "--stderr-env",
        "CHILD_TOKEN",
    ]);
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN"));
    let host = [
        ("HOST_TOKEN", "canary-stdio-4711"),
        ("UNRELATED_MCP_SECRET", "must-not-leak"),
    ];
    let o = case.check(&spec, &host);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(!o.stdout.contains("canary") && !o.stderr.contains("canary"));
    within("env", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}

#[test]
fn a_missing_env_reference_is_misconfigured_before_anything_starts() {
    let case = Case::new("env-missing");
    let mut spec = Spec::fake(&[]);
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN_NOT_SET"));
    for env in [&[][..], &[("HOST_TOKEN_NOT_SET", "")][..]] {
        let o = case.check(&spec, env);
        assert_eq!(o.code, 4, "{}", o.stdout);
        let v = o.json();
        assert_eq!(check(&v, "configuration")["status"], "MISCONFIGURED");
        let missing = evidence(&v, "configuration", "missing_env");
        assert_eq!(missing, &serde_json::json!(["HOST_TOKEN_NOT_SET"]));
        within("env-missing", &o, Duration::ZERO);
    }
    assert!(case.pids().is_empty(), "nothing was started");
}

#[test]
fn commands_that_cannot_start_are_misconfigured() {
    let scratch = TempDir::new("stdio-unstartable");
    let orphan = scratch.file("orphan", "#!/nonexistent/agenthealth-interpreter\n");
    make_executable(&orphan);
    let bad_directory = Spec {
        directory: Some("/nonexistent/agenthealth-dir".into()),
        ..Spec::fake(&[])
    };
    let cases = [
        (
            "not-found",
            Spec::command("agenthealth-no-such-command-4711"),
            "configuration",
            "command_not_found",
        ),
        (
            "no-such-path",
            Spec::command(&fixture("no-such-file")),
            "configuration",
            "command_not_found",
        ),
        (
            "not-executable",
            Spec::command(&fixture("not_executable")),
            "configuration",
            "command_not_executable",
        ),
        (
            "no-shebang",
            Spec::command(&fixture("no_shebang")),
            "configuration",
            "command_not_executable",
        ),
        (
            "bad-directory",
            bad_directory,
            "configuration",
            "bad_directory",
        ),
        // Only exec can tell that the interpreter is missing: reachability says so.
        (
            "missing-interpreter",
            Spec::command(&orphan.display().to_string()),
            "reachability",
            "command_not_executable",
        ),
    ];
    for (name, spec, dim, reason) in cases {
        let (_, v) = expect(name, &spec, unstartable(dim), ms(5_000));
        assert_eq!(evidence(&v, dim, "process_error"), reason, "{name}");
    }
}

/// Upstream §17 J70.
#[test]
fn a_relative_symlink_command_resolves_in_the_directory() {
    let case = Case::new("symlink");
    let dir = &case.dir.0;
    let exec = format!(
        "#!/bin/sh\nexec {} {} \"$@\"\n",
        python_bin(),
        fixture("fake_server.py")
    );
    make_executable(&case.dir.file("real-server", &exec));
    std::os::unix::fs::symlink("real-server", dir.join("server")).expect("symlink");
    let spec = Spec {
        command: "./server".into(),
        args: Vec::new(),
        directory: Some(dir.display().to_string()),
        ..Spec::fake(&[])
    };
    let o = case.check(&spec, &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    within("symlink", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn every_cancelling_signal_to_agenthealth_cancels_and_kills_the_group() {
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        let (case, child, started) = running("cancel", &["--grandchild"]);
        let signalled = Instant::now();
        kill(Pid::from_raw(child.id() as i32), signal).expect("signal");
        let out = child.wait_with_output().expect("wait");
        let took = signalled.elapsed();
        eprintln!("[stdio] cancel: exited {took:?} after {signal}");
        assert!(
            took < MARGIN,
            "agenthealth took {took:?} to stop after {signal}"
        );
        assert_eq!(out.status.code(), Some(5), "{signal}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("a document");
        let message = &check(&v, "reachability")["message"];
        assert_eq!(message, "check cancelled before it completed");
        case.assert_nothing_left();
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// `agenthealth` running a stdio target whose server (and its grandchild, with `extra`) is
/// up and silent: the case, the running process, and when it started.
fn running(tag: &str, extra: &[&str]) -> (Case, Child, Instant) {
    let case = Case::new(tag);
    let spec = Spec::fake(&[extra, &["--silent-on", "server/discover"]].concat()).timeout(30_000);
    let config = case.config(&spec);
    let started = Instant::now();
    let child = spawn(&case, &config);
    let want = if extra.contains(&"--grandchild") {
        2
    } else {
        1
    };
    let until = Instant::now() + Duration::from_secs(10);
    while case.pids().len() < want {
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(ms(5));
    }
    (case, child, started)
}

/// `agenthealth check CONFIG --format json` in the background, for `case`.
fn spawn(case: &Case, config: &Path) -> Child {
    command(
        &["check", &config.display().to_string(), "--format", "json"],
        &[],
    )
    .env("AH_TEST_PIDFILE", case.pidfile())
    .spawn()
    .expect("agenthealth")
}

/// Threads are bounded for stdio targets too: `concurrency` workers, one helper per running
/// server (it forwards stdout and drains stderr), and the main and signal threads — sampled
/// while 16 silent servers run at once.
#[test]
fn stdio_targets_use_one_thread_per_server() {
    let case = Case::new("threads");
    let spec = Spec::fake(&["--silent-on", "server/discover"]).timeout(30_000);
    let one = std::fs::read_to_string(case.config(&spec)).expect("config");
    let (head, target) = one.split_once("targets:\n").expect("targets");
    let mut text = format!("{head}concurrency: 16\ntargets:\n");
    for n in 0..16 {
        text.push_str(&target.replacen("name: server", &format!("name: server{n}"), 1));
    }
    let child = spawn(&case, &case.dir.file("sixteen.yaml", &text));
    let status = format!("/proc/{}/status", child.id());
    let threads = || {
        let status = std::fs::read_to_string(&status).ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix("Threads:"))?;
        line.trim().parse::<usize>().ok()
    };
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(10);
    // Sample until every server is up and a little after, while they are all silent.
    while case.pids().len() < 16 && Instant::now() < until {
        peak = peak.max(threads().unwrap_or(0));
        std::thread::sleep(ms(2));
    }
    let settle = Instant::now() + ms(200);
    while Instant::now() < settle {
        peak = peak.max(threads().unwrap_or(0));
        std::thread::sleep(ms(2));
    }
    assert_eq!(case.pids().len(), 16, "all sixteen servers ran at once");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).expect("SIGTERM");
    let out = child.wait_with_output().expect("wait");
    eprintln!("[stdio] 16 silent servers at concurrency 16: peak {peak} threads");
    assert_eq!(out.status.code(), Some(5), "cancelled");
    assert!(peak <= 2 * 16 + 2, "peak {peak} threads");
    assert!(peak >= 16 + 2, "the sampling saw the run ({peak})");
    case.assert_nothing_left();
}

/// A SIGKILL of `agenthealth` runs none of its code: the kernel's parent-death signal ends
/// the stdio server it started, and the group's keeper (a process of the server's group that
/// holds the read end of a pipe only agenthealth could write to) ends the rest of the group,
/// here a grandchild that ignores SIGTERM and never reads its stdin. Nothing of the run
/// survives: not the server, not the grandchild, not the keeper.
#[test]
fn a_sigkill_of_agenthealth_still_ends_its_stdio_server_and_its_group() {
    // Both ignore the end of their stdin and SIGTERM: only SIGKILL ends them.
    let (case, mut child, _) = running("sigkill", &["--ignore-term", "--grandchild"]);
    let pids = case.pids();
    let _cleanup = KillMarked(&case.mark);
    let keeper: Vec<u32> = live_members(pids[0])
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|pid| !pids.contains(pid))
        .collect();
    assert_eq!(keeper.len(), 1, "one keeper in the group besides {pids:?}");
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", keeper[0])).expect("comm");
    assert_eq!(comm.trim_end(), "ah-group-keeper", "how ps shows it");
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    until_none(MARGIN, "processes of the run outlived agenthealth", || {
        marked(&case.mark)
    });
    assert_group_dead(pids[0]);
}

/// Kills, when dropped, whatever still carries the mark: a failed test leaves nothing
/// running.
struct KillMarked<'a>(&'a str);

impl Drop for KillMarked<'_> {
    fn drop(&mut self) {
        for pid in marked(self.0) {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}
