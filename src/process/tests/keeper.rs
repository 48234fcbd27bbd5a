//! The group's keeper: it alone ends the group once our end of its pipe closes, it is reaped
//! however a child ends, and it holds no descriptor of another child.

use super::super::testkit::fixture;
use super::*;

/// Whether `pid`, once our child, was reaped already: `waitpid` finds no such child. (A
/// keeper still unreaped, zombie or not, would be reaped by this very call and fail it.)
fn reaped(pid: nix::unistd::Pid) -> bool {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    waitpid(pid, Some(WaitPidFlag::WNOHANG)) == Err(nix::errno::Errno::ECHILD)
}

/// Our end of the keeper's pipe closing — which is what this process's death does, however
/// it dies — is enough for the keeper to kill the whole group: here a child and a grandchild
/// that both ignore SIGTERM and their stdin and hold stdout. End of file on stdout means
/// both are gone; nothing of ours sent `SIGKILL`. A `SIGTERM` to the group first (a server
/// may signal its own group) leaves the keeper standing.
#[test]
fn the_keeper_alone_ends_the_group_once_its_pipe_closes() {
    let mut child = Child::spawn(&python_with("grandchild.py", &["stay"])).expect("spawn");
    let ready = child.recv_line(&soon(5_000)).expect("ready line");
    assert!(ready.starts_with(b"ready "));
    let keeper = child.group.keeper_pid().expect("a keeper");
    let pgid = nix::unistd::Pid::from_raw(child.pgid() as i32);
    nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    child.group.close_keeper_pipe();
    match child.recv_line(&soon(5_000)) {
        Err(RecvError::Closed {
            exit: ExitInfo::Signal(9),
            ..
        }) => {}
        other => panic!("expected the group killed by its keeper, got {other:?}"),
    }
    assert!(!child.group.killed(), "no abort hook fired");
    child.shutdown(grace(Duration::ZERO));
    assert!(reaped(keeper), "the keeper was reaped");
}

/// Every way a child ends reaps its keeper, so a long `serve` leaves no zombie: a shutdown
/// of a running child, the drop of one that exited by itself, an abort and then a drop.
#[test]
fn every_end_of_a_child_reaps_its_keeper() {
    let child = Child::spawn(&python("silent.py")).expect("spawn");
    let keeper = child.group.keeper_pid().expect("a keeper");
    assert_eq!(
        child.shutdown(grace(Duration::from_secs(2))),
        ExitInfo::Code(0)
    );
    assert!(reaped(keeper), "after a shutdown");

    let mut child = Child::spawn(&ChildSpec {
        program: fixture("exit.sh"),
        ..ChildSpec::default()
    })
    .expect("spawn");
    let keeper = child.group.keeper_pid().expect("a keeper");
    assert!(matches!(
        child.recv_line(&soon(5_000)),
        Err(RecvError::Closed {
            exit: ExitInfo::Code(3),
            ..
        })
    ));
    drop(child);
    assert!(reaped(keeper), "after an exit and a drop");

    let child = Child::spawn(&python("silent.py")).expect("spawn");
    let keeper = child.group.keeper_pid().expect("a keeper");
    child.abort_handle()();
    drop(child);
    assert!(reaped(keeper), "after an abort and a drop");
}

/// A keeper starts with every descriptor of this process and keeps none but its own pipe:
/// not another server's stdin (that server would never see end of file) and not another
/// keeper's pipe (that keeper would never fire). The keeper forked last holds copies of both
/// until it closes them.
#[test]
fn a_keeper_holds_no_descriptor_of_another_child() {
    let mut kept = Child::spawn(&python_with("grandchild.py", &["stay"])).expect("spawn");
    let graceful = Child::spawn(&python("silent.py")).expect("spawn");
    let last = Child::spawn(&python("silent.py")).expect("spawn");
    assert!(
        kept.recv_line(&soon(5_000))
            .expect("ready")
            .starts_with(b"ready ")
    );
    // silent.py exits 0 on end of stdin: no keeper may hold its stdin's write end.
    let closing = Instant::now();
    assert_eq!(
        graceful.shutdown(grace(Duration::from_secs(3))),
        ExitInfo::Code(0)
    );
    assert!(closing.elapsed() < Duration::from_secs(3));
    // The first keeper fires once our end closes: no later keeper holds a copy of it.
    kept.group.close_keeper_pipe();
    assert!(matches!(
        kept.recv_line(&soon(5_000)),
        Err(RecvError::Closed {
            exit: ExitInfo::Signal(9),
            ..
        })
    ));
    drop(kept);
    drop(last);
}

/// The close loop of kernels without `close_range` keeps nothing either: a second keeper
/// that closed by loop neither holds a server's stdin (it exits 0 at end of stdin) nor its
/// own pipe's write end (it fires once ours closes).
#[test]
fn a_keeper_closing_by_loop_holds_nothing_either() {
    use crate::process::keeper::Keeper;
    let graceful = Child::spawn(&python("silent.py")).expect("spawn");
    let pgid = nix::unistd::Pid::from_raw(graceful.pgid() as i32);
    let second = Keeper::start_closing_by_loop(pgid).expect("keeper");
    assert_eq!(
        graceful.shutdown(grace(Duration::from_secs(3))),
        ExitInfo::Code(0)
    );
    second.finish(Instant::now() + Duration::from_secs(1));

    let mut kept = Child::spawn(&python_with("grandchild.py", &["stay"])).expect("spawn");
    let pgid = nix::unistd::Pid::from_raw(kept.pgid() as i32);
    let mut second = Keeper::start_closing_by_loop(pgid).expect("keeper");
    assert!(
        kept.recv_line(&soon(5_000))
            .expect("ready")
            .starts_with(b"ready ")
    );
    second.close_pipe();
    assert!(matches!(
        kept.recv_line(&soon(5_000)),
        Err(RecvError::Closed {
            exit: ExitInfo::Signal(9),
            ..
        })
    ));
    second.finish(Instant::now() + Duration::from_secs(1));
    drop(kept);
}
