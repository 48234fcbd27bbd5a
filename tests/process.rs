//! What the stdio tests (`tests/stdio.rs`, `tests/deadline.rs`) share about processes: the
//! fixture paths, the live members of a process group, and the check that none is left.
//!
//! The child-process layer's own tests moved to its unit tests (`src/process/tests/`); this
//! file goes once the test kit (`tests/kit`) carries these helpers.

use std::time::Duration;

/// Slack on every time bound.
pub(crate) const MARGIN: Duration = Duration::from_secs(1);

pub(crate) use crate::support::fixtures::{fixture, fixtures, python_bin};

/// Processes of group `pgid` that are not zombies, from `/proc/*/stat`.
pub(crate) fn live_members(pgid: u32) -> Vec<(u32, char)> {
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
pub(crate) fn assert_group_dead(pgid: u32) {
    crate::util::until_none(
        MARGIN,
        &format!("group {pgid} still has live members"),
        || live_members(pgid),
    );
    // Cross-check with the kernel: either no member at all, or only zombies (checked above).
    let pg = nix::unistd::Pid::from_raw(pgid as i32);
    match nix::sys::signal::killpg(pg, None) {
        Err(nix::errno::Errno::ESRCH) | Ok(()) => {}
        Err(e) => panic!("killpg({pgid}, 0): {e}"),
    }
}
