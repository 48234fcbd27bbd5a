//! The child API against the fixture scripts: what reaches the child's environment, what
//! is refused before anything starts, and the memory bound on an over-long line.

use std::ffi::OsString;
use std::thread;
use std::time::{Duration, Instant};

use super::lines::CHUNK_BYTES;
use super::testkit::{python, python_with};
use super::*;
use crate::contract::{Bound, Secret};

fn soon(ms: u64) -> Attempt {
    Attempt::new(Deadline::new(
        Instant::now() + Duration::from_millis(ms),
        Bound::TimeoutMs,
    ))
}

fn grace(d: Duration) -> Deadline {
    Deadline::after(d, Bound::Cleanup)
}

#[test]
fn only_allowed_and_mapped_variables_reach_the_child() {
    let parent = |name: &str| -> Option<OsString> {
        match name {
            "PATH" => std::env::var_os("PATH"),
            "HOME" => Some("/home/parent".into()),
            "TMPDIR" => Some("/tmp/parent".into()),
            "UNRELATED_MCP_SECRET" | "LANG" | "LOGNAME" => Some("leaked".into()),
            _ => None,
        }
    };
    let command = ChildSpec {
        env: vec![
            ("CHILD_TOKEN".to_string(), Secret::new("canary-42".into())),
            ("HOME".to_string(), Secret::new("/home/mapped".into())),
        ],
        ..python("env.py")
    };
    let mut child = Child::spawn_with_parent_env(&command, &parent).expect("spawn");
    let line = child.recv_line(&soon(5_000)).expect("environment line");
    let seen: std::collections::BTreeMap<String, String> =
        serde_json::from_slice(&line).expect("json");
    let keys: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(keys, ["CHILD_TOKEN", "HOME", "PATH", "TMPDIR"]);
    assert_eq!(seen["CHILD_TOKEN"], "canary-42");
    assert_eq!(seen["HOME"], "/home/mapped");
    assert_eq!(seen["TMPDIR"], "/tmp/parent");
    child.shutdown(grace(Duration::from_millis(500)));
}

#[test]
fn an_over_long_line_is_never_buffered_whole() {
    // The child touches the marker only once all 10 MiB are written. Back-pressure
    // (pipe, bounded channel, the 1 MiB line buffer) must keep it from getting there
    // before the limit is reported.
    let marker = std::env::temp_dir().join(format!(
        "agenthealth-long-line-{}-{:?}",
        std::process::id(),
        thread::current().id()
    ));
    let _ = std::fs::remove_file(&marker);
    let command = ChildSpec {
        env: vec![(
            "MARKER".to_string(),
            Secret::new(marker.to_string_lossy().into_owned()),
        )],
        ..python("long_line.py")
    };
    let mut child = Child::spawn(&command).expect("spawn");
    let attempt = soon(10_000);
    assert!(matches!(
        child.recv_line(&attempt),
        Err(RecvError::LineTooLong)
    ));
    assert!(
        !marker.exists(),
        "the whole line was consumed before the limit"
    );
    assert!(child.output.buffer_capacity() <= MAX_LINE_BYTES + CHUNK_BYTES);
    // The remaining ~9 MiB are skipped chunk by chunk, then the next line comes through.
    assert_eq!(
        child.recv_line(&attempt).expect("line after"),
        br#"{"after":true}"#
    );
    assert!(marker.exists());
    assert!(child.output.buffer_capacity() <= 2 * CHUNK_BYTES);
    assert_eq!(
        child.shutdown(grace(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    let _ = std::fs::remove_file(&marker);
}

#[test]
fn invalid_env_is_rejected_without_showing_the_value() {
    let command = |name: &str, value: &str| ChildSpec {
        env: vec![(name.to_string(), Secret::new(value.into()))],
        ..python("silent.py")
    };
    let err = Child::spawn(&command("BAD", "canary\0value")).expect_err("must fail");
    assert!(matches!(err, SpawnError::InvalidEnv { .. }));
    assert!(!format!("{err} {err:?}").contains("canary"));
    assert!(matches!(
        Child::spawn(&command("A=B", "x")),
        Err(SpawnError::InvalidEnv { .. })
    ));
}

#[test]
fn preflight_resolves_without_starting_anything() {
    let command = python("silent.py");
    let program = Child::preflight(&command).expect("resolves");
    assert!(program.is_absolute(), "{}", program.display());
    let missing = ChildSpec {
        program: "agenthealth-no-such-command-4711".into(),
        ..ChildSpec::default()
    };
    assert!(matches!(
        Child::preflight(&missing),
        Err(SpawnError::NotFound { .. })
    ));
}

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
        program: super::testkit::fixture("exit.sh"),
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
    use super::keeper::Keeper;
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
