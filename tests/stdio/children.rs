//! How a child process ends or misbehaves as a process: exiting, killed, closing its output,
//! silence, a flood on stderr, ignoring SIGTERM, and grandchildren.

use agenthealth_testkit::fixtures::fixture;

use super::harness::{ENDED, HEALTHY, SILENT, Spec, check, doctor, evidence, expect, ms};

#[test]
fn a_child_that_exits_immediately_is_unreachable_with_its_status() {
    let (case, v) = expect(
        "exits",
        &Spec::command(&fixture("exit.sh")),
        ENDED,
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "exit_code"), 3);
    assert_eq!(case.pids().len(), 1, "started once");
}

/// The other ways a process can end its output before answering, killed by a signal and
/// closing stdout while it keeps running, are UNREACHABLE `mcp_process` with the evidence
/// to match, and doctor says it in words.
#[test]
fn a_child_killed_by_a_signal_or_closing_stdout_is_unreachable_with_how() {
    let (_, v) = expect(
        "killed",
        &Spec::command(&fixture("killed.sh")),
        ENDED,
        ms(5_000),
    );
    assert_eq!(evidence(&v, "reachability", "exit_signal"), 9);
    let closes = Spec::command(&fixture("closes_stdout.sh"));
    let (case, v) = expect("closes-stdout", &closes, ENDED, ms(5_000));
    assert_eq!(evidence(&v, "reachability", "process_running"), true);
    assert_eq!(case.pids().len(), 1);
    for (script, says) in [
        (
            "killed.sh",
            "the server process was killed by signal 9 before answering",
        ),
        (
            "closes_stdout.sh",
            "the server process closed its output before answering",
        ),
    ] {
        let o = doctor(&[&fixture(script)]);
        assert_eq!(o.code, 3, "{}", o.stdout);
        assert!(o.stdout.contains(says), "{}", o.stdout);
    }
}

#[test]
fn a_child_that_never_writes_is_unreachable_at_the_deadline() {
    let spec = Spec::python("silent.py", &[]).timeout(500);
    let (_, v) = expect("silent", &spec, SILENT, ms(500));
    assert_eq!(check(&v, "reachability")["message"], "communication failed");
}

#[test]
fn a_child_that_floods_stderr_is_healthy() {
    let spec = Spec::fake(&["--stderr-flood-mib", "32"]);
    expect("stderr-flood", &spec, HEALTHY, ms(5_000));
}

#[test]
fn a_child_that_ignores_sigterm_and_its_input_closing_is_killed_at_the_end() {
    let spec = Spec::fake(&["--ignore-term"]);
    let (case, _) = expect("ignore-term", &spec, HEALTHY, ms(5_000));
    assert!(
        case.logged().contains(&"eof".to_string()),
        "stdin was closed"
    );
}

#[test]
fn a_grandchild_holding_stdout_and_ignoring_sigterm_dies_with_the_group() {
    let (case, _) = expect(
        "grandchild",
        &Spec::fake(&["--grandchild"]),
        HEALTHY,
        ms(5_000),
    );
    assert_eq!(case.pids().len(), 2, "the child and its grandchild");
}

#[test]
fn a_silent_child_with_a_grandchild_is_unreachable_and_leaves_nothing() {
    let spec = Spec::fake(&["--grandchild", "--silent-on", "server/discover"]).timeout(1_000);
    let (case, _) = expect("grandchild-silent", &spec, SILENT, ms(1_000));
    assert_eq!(case.pids().len(), 2);
}

#[test]
fn a_child_that_exits_mid_run_reports_its_status_on_that_check() {
    let spec = Spec::fake(&["--exit-on", "tools/list"]);
    let (_, v) = expect("exit-mid-run", &spec, ENDED.on("capability"), ms(4 * 5_000));
    assert_eq!(check(&v, "protocol")["status"], "HEALTHY");
    assert_eq!(evidence(&v, "capability", "exit_code"), 4);
}
