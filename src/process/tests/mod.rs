//! The child API against the fixture scripts (`tests/fixtures/stdio/`), hostile children
//! included, one file per module of this layer: what starts and with what ([`spawn`](super::spawn)),
//! line framing and I/O deadlines ([`lines`](super::lines)), the end of a child and its group
//! ([`group`](super::group)), and the group's keeper ([`keeper`](super::keeper)).
//!
//! Every test bounds its own time (deadline + 1 s), and those that start a group end by
//! checking in `/proc` that no live process of it is left. Nothing here sleeps to
//! synchronise: children announce readiness on stdout, and the only waits are bounded polls
//! of an observable condition.

mod group;
mod keeper;
mod lines;
mod spawn;

use std::time::{Duration, Instant};

use super::testkit::{python, python_with};
use super::*;
use crate::contract::Bound;

/// Slack on every time bound.
const MARGIN: Duration = Duration::from_secs(1);

/// An attempt ending `ms` from now, and its length.
fn attempt(ms: u64) -> (Attempt, Duration) {
    let d = Duration::from_millis(ms);
    (
        Attempt::new(Deadline::new(Instant::now() + d, Bound::TimeoutMs)),
        d,
    )
}

/// An attempt ending `ms` from now.
fn soon(ms: u64) -> Attempt {
    attempt(ms).0
}

/// A deadline `d` from now (a send's deadline).
fn ends_in(d: Duration) -> Deadline {
    Deadline::after(d, Bound::TimeoutMs)
}

/// A shutdown's grace of `d` from now.
fn grace(d: Duration) -> Deadline {
    Deadline::after(d, Bound::Cleanup)
}

/// What to start: `program` with no arguments, in `directory`.
fn command(program: &str, directory: Option<&str>) -> ChildSpec {
    ChildSpec {
        program: program.into(),
        directory: directory.map(str::to_string),
        ..ChildSpec::default()
    }
}

fn spawn(command: &ChildSpec) -> Child {
    Child::spawn(command).unwrap_or_else(|e| panic!("spawn {}: {e}", command.program))
}

/// The next line from `child`, as text.
fn line(child: &mut Child, attempt: &Attempt) -> String {
    match child.recv_line(attempt) {
        Ok(l) => String::from_utf8_lossy(&l).into_owned(),
        Err(e) => panic!("expected a line, got {e:?}"),
    }
}

/// Reports a test's duration (visible with `--nocapture`) and checks it against a bound.
fn within(name: &str, started: Instant, bound: Duration) {
    let took = started.elapsed();
    eprintln!("[process] {name}: {took:?} (bound {bound:?})");
    assert!(took <= bound, "{name} took {took:?}, bound {bound:?}");
}

/// Processes of group `pgid` that are not zombies, from `/proc/*/stat`.
fn live_members(pgid: u32) -> Vec<(u32, char)> {
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return live;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // gone meanwhile
        };
        // "pid (comm) state ppid pgrp ..."; comm may contain anything, so cut at the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let pgrp = fields.nth(1).and_then(|s| s.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != 'Z' && state != 'X' {
            live.push((pid, state));
        }
    }
    live
}

/// Asserts that no live process of the group remains. A `SIGKILL`ed process needs a moment
/// to finish dying, so the condition is polled for up to one second. Zombies count as gone:
/// a killed grandchild is reparented and reaped by whoever is init here.
fn assert_group_dead(pgid: u32) {
    let until = Instant::now() + MARGIN;
    loop {
        let left = live_members(pgid);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "group {pgid} still has live members: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Cross-check with the kernel: either no member at all, or only zombies (checked above).
    let pg = nix::unistd::Pid::from_raw(pgid as i32);
    match nix::sys::signal::killpg(pg, None) {
        Err(nix::errno::Errno::ESRCH) | Ok(()) => {}
        Err(e) => panic!("killpg({pgid}, 0): {e}"),
    }
}
