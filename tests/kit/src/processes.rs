//! What a test asks `/proc` about the processes a run started: which are still alive, by
//! process group or by a marker in their command line or environment, and waiting (bounded)
//! until none is.

use std::time::{Duration, Instant};

/// Slack on every time bound: a test that asserts a deadline allows the deadline plus this.
pub const MARGIN: Duration = Duration::from_secs(1);

/// Polls `probe` until it finds nothing, for at most `within`; panics with `what` and what
/// it still finds. The bounded wait for an observable condition, never a sleep to
/// synchronise.
pub fn until_none<T: std::fmt::Debug>(within: Duration, what: &str, probe: impl Fn() -> Vec<T>) {
    let until = Instant::now() + within;
    loop {
        let left = probe();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < until, "{what}: {left:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The numeric entries of `/proc` with their `stat` line, skipping what is gone meanwhile.
fn processes() -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            Some((
                pid,
                std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?,
            ))
        })
        .collect()
}

/// The state letter and the fields after it of a `stat` line: "pid (comm) state ppid pgrp
/// ..."; comm may contain anything, so it is cut at the last ')'.
fn state_and_rest(stat: &str) -> Option<(char, std::str::SplitWhitespace<'_>)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields))
}

/// Processes of group `pgid` that are not zombies, with their state.
pub fn live_members(pgid: u32) -> Vec<(u32, char)> {
    processes()
        .into_iter()
        .filter_map(|(pid, stat)| {
            let (state, mut fields) = state_and_rest(&stat)?;
            let pgrp = fields.nth(1)?.parse::<u32>().ok()?;
            (pgrp == pgid && state != 'Z' && state != 'X').then_some((pid, state))
        })
        .collect()
}

/// Asserts that no live process of the group remains. A `SIGKILL`ed process needs a moment
/// to finish dying, so the condition is polled for up to [`MARGIN`]. Zombies count as gone:
/// a killed grandchild is reparented and reaped by whoever is init here.
pub fn assert_group_dead(pgid: u32) {
    until_none(
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

/// Live (not zombie) processes whose command line or environment contains `needle`.
pub fn marked(needle: &str) -> Vec<u32> {
    let has = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle.as_bytes());
    processes()
        .into_iter()
        .filter(|(pid, _)| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            has(&cmdline) || has(&environ)
        })
        .filter(|(_, stat)| state_and_rest(stat).is_some_and(|(s, _)| !matches!(s, 'Z' | 'X')))
        .map(|(pid, _)| pid)
        .collect()
}

/// Asserts that no live process carries `needle` (see [`marked`]). A killed process needs a
/// moment to finish dying, so the condition is polled for up to [`MARGIN`].
pub fn assert_unmarked(needle: &str) {
    until_none(MARGIN, "processes of this run survive", || marked(needle));
}
