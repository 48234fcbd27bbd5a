//! The end of a child and of its process group: an exit status, SIGTERM and its grace,
//! SIGKILL for what ignores it, and grandchildren. (A SIGKILL of agenthealth itself, which runs
//! none of this code, is tested through the binary: `tests/stdio/lifecycle.rs`,
//! `a_sigkill_of_agenthealth_still_ends_its_stdio_server_and_its_group`.)

use super::super::testkit::fixture;
use super::*;

#[test]
fn a_child_that_exits_at_once_reports_its_status() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let mut child = spawn(&command(&fixture("exit.sh"), None));
    let pgid = child.pgid();
    assert_eq!(child.pid(), pgid);
    match child.recv_line(&a) {
        Err(RecvError::Closed {
            exit: ExitInfo::Code(3),
            unterminated: 0,
        }) => {}
        other => panic!("expected exit status 3, got {other:?}"),
    }
    assert!(!a.response_seen());
    // Its stdin has no reader any more: EPIPE is an error, not a signal that kills us.
    assert!(matches!(
        child.send(b"{}", ends_in(d)),
        Err(SendError::Closed)
    ));
    assert_eq!(
        child.shutdown(ends_in(Duration::from_millis(200))),
        ExitInfo::Code(3)
    );
    assert_group_dead(pgid);
    within("exits at once", started, d + MARGIN);
}

#[test]
fn a_child_that_ignores_sigterm_is_killed_within_the_grace() {
    let started = Instant::now();
    let (a, _) = attempt(5_000);
    let mut child = spawn(&python("ignore_term.py"));
    let pgid = child.pgid();
    assert_eq!(line(&mut child, &a), "ready");
    let grace = Duration::from_millis(200);
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(grace)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGKILL as i32)
    );
    let took = closing.elapsed();
    eprintln!("[process] shutdown of a SIGTERM-ignoring child: {took:?}");
    assert!(took >= grace);
    assert!(took <= grace + TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    within("ignores SIGTERM", started, Duration::from_secs(5) + MARGIN);
}

#[test]
fn a_grandchild_holding_stdout_dies_with_the_group_and_the_reader_sees_eof() {
    let started = Instant::now();
    let mut child = spawn(&python("grandchild.py"));
    let pgid = child.pgid();
    let (a, _) = attempt(5_000);
    let ready = line(&mut child, &a);
    let grandchild: u32 = ready
        .strip_prefix("ready ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("bad ready line {ready:?}"));
    assert!(live_members(pgid).iter().any(|(p, _)| *p == grandchild));
    // The child has exited, but the grandchild keeps stdout open: no end of file.
    let (short, d) = attempt(300);
    assert!(matches!(child.recv_line(&short), Err(RecvError::Timeout)));
    // SIGKILL to the group (what the abort hook sends, here without marking an abort):
    // the grandchild dies, and the reader thread sees end of file.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("killpg");
    let (a, _) = attempt(5_000);
    let eof = Instant::now();
    match child.recv_line(&a) {
        Err(RecvError::Closed {
            exit: ExitInfo::Code(0),
            unterminated: 0,
        }) => {}
        other => panic!("expected end of file after the child's exit 0, got {other:?}"),
    }
    assert!(eof.elapsed() < MARGIN);
    drop(child);
    assert_group_dead(pgid);
    within("grandchild holds stdout", started, d + MARGIN);
}

#[test]
fn shutdown_kills_a_child_and_grandchild_that_both_ignore_sigterm() {
    let started = Instant::now();
    let mut child = spawn(&python_with("grandchild.py", &["stay"]));
    let pgid = child.pgid();
    let (a, _) = attempt(5_000);
    assert!(line(&mut child, &a).starts_with("ready "));
    // The child, the grandchild and the group's keeper.
    assert_eq!(live_members(pgid).len(), 3);
    let grace = Duration::from_millis(100);
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(grace)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGKILL as i32)
    );
    assert!(closing.elapsed() <= grace + TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    within(
        "group ignores SIGTERM",
        started,
        Duration::from_secs(5) + MARGIN,
    );
}
