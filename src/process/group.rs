//! The lifetime of the child's process group: signalling it, observing the leader's exit
//! without reaping it, sweeping the group, reaping — and the rule that keeps a reused
//! group id from ever being signalled.
//!
//! The rule (see "Process-group safety" in the [module documentation](super)): a group id
//! is signalled only while its leader is unreaped, because an unreaped leader, even a
//! zombie, keeps its pid and so the group id from being reused. One lock covers both the
//! "reaped" flag and every `killpg`, so a signal can never race a reap.
//!
//! The group's [`Keeper`] is a member of it: every sweep with `SIGKILL` ends it too, and
//! [`Group::terminate`], which every [`Child`](super::Child) goes through, closes its pipe
//! and reaps it.

use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use super::error::ExitInfo;
use super::keeper::Keeper;
use crate::runtime::sync::lock;
use crate::runtime::threads;

/// How long [`Child::shutdown`](super::Child::shutdown) waits after `SIGTERM` before
/// `SIGKILL`.
pub const TERM_WAIT: Duration = Duration::from_millis(50);

/// How long [`Child::shutdown`](super::Child::shutdown) waits for the leader to die after
/// `SIGKILL` before leaving the reaping to a background thread.
pub const KILL_WAIT: Duration = Duration::from_millis(50);

/// How long [`Child::recv_line`](super::Child::recv_line) and
/// [`Child::exit_within`](super::Child::exit_within) wait, after the output or input closed,
/// for the exit status.
pub(crate) const EXIT_WAIT: Duration = Duration::from_millis(100);

/// The group id and the state that guards signalling it, shared with abort hooks and the
/// background reaper.
struct GroupId {
    pgid: Pid,
    /// True once the leader is reaped: from then on the group id may be reused and is never
    /// signalled. Held while signalling and while reaping.
    reaped: Mutex<bool>,
    /// True once an abort hook fired.
    killed: AtomicBool,
}

impl GroupId {
    /// Signals the whole group unless the leader was reaped.
    fn signal(&self, sig: Signal) {
        let reaped = lock(&self.reaped);
        if !*reaped {
            let _ = killpg(self.pgid, sig);
        }
    }
}

/// The child's process group, owned through its unreaped leader.
pub(crate) struct Group {
    /// `None` once reaped or handed to the background reaper.
    proc: Option<std::process::Child>,
    id: Arc<GroupId>,
    /// The exit, once reaped.
    exit: Option<ExitInfo>,
    /// The group's keeper until it is finished; `None` too if it could not be started.
    keeper: Option<Keeper>,
}

impl Group {
    /// The group `proc` leads (it was started with `process_group(0)`, so `pgid == pid`),
    /// with its keeper started. A keeper that cannot be started (out of processes or
    /// descriptors) leaves the group with the leader's parent-death signal alone: the
    /// server is already running, and every shutdown this process lives through still ends
    /// the whole group.
    pub(crate) fn new(proc: std::process::Child) -> Group {
        let pgid = Pid::from_raw(i32::try_from(proc.id()).unwrap_or(i32::MAX));
        Group {
            proc: Some(proc),
            id: Arc::new(GroupId {
                pgid,
                reaped: Mutex::new(false),
                killed: AtomicBool::new(false),
            }),
            exit: None,
            keeper: Keeper::start(pgid).ok(),
        }
    }

    /// The keeper's pid while it is not finished (tests).
    #[cfg(test)]
    pub(crate) fn keeper_pid(&self) -> Option<Pid> {
        self.keeper.as_ref().and_then(Keeper::pid)
    }

    /// Closes our end of the keeper's pipe and nothing else, as this process's death would
    /// (tests: the keeper alone must end the group).
    #[cfg(test)]
    pub(crate) fn close_keeper_pipe(&mut self) {
        if let Some(keeper) = self.keeper.as_mut() {
            keeper.close_pipe();
        }
    }

    /// Finishes the keeper of a swept group, reaping it by `until` or in the background.
    fn finish_keeper(&mut self, until: Instant) {
        if let Some(keeper) = self.keeper.take() {
            keeper.finish(until);
        }
    }

    /// Whether an abort hook killed the group.
    pub(crate) fn killed(&self) -> bool {
        self.id.killed.load(Ordering::SeqCst)
    }

    /// A hook that marks the group killed and sends it `SIGKILL`, without waiting for
    /// anything; after the leader was reaped it only marks.
    pub(crate) fn kill_hook(&self) -> impl Fn() + Send + 'static {
        let id = Arc::clone(&self.id);
        move || {
            id.killed.store(true, Ordering::SeqCst);
            id.signal(Signal::SIGKILL);
        }
    }

    /// Ends the group (see [`Child::shutdown`](super::Child::shutdown), whose steps after
    /// closing stdin these are): up to `grace` for the leader to exit, `SIGTERM` and up to
    /// [`TERM_WAIT`], then always `SIGKILL` and up to [`KILL_WAIT`], then reap — or leave
    /// the reaping to a background thread. After a kill hook fired, straight to `SIGKILL`.
    pub(crate) fn terminate(&mut self, grace: Duration) -> ExitInfo {
        let Some(mut proc) = self.proc.take() else {
            // Swept when the leader was reaped.
            self.finish_keeper(Instant::now() + KILL_WAIT);
            return self.exit.unwrap_or(ExitInfo::Running);
        };
        let pid = self.id.pgid;
        let mut exited = false;
        if !self.killed() {
            exited = wait_exit(pid, grace);
            if !exited {
                self.id.signal(Signal::SIGTERM);
                exited = wait_exit(pid, TERM_WAIT);
            }
        }
        self.id.signal(Signal::SIGKILL);
        let killed = Instant::now();
        if !exited {
            exited = wait_exit(pid, KILL_WAIT);
        }
        // Killed by that sweep at the same time as the leader, so within the same wait.
        self.finish_keeper(killed + KILL_WAIT);
        if exited {
            if let Some(status) = reap(&self.id, &mut proc) {
                let info = ExitInfo::from_status(status);
                self.exit = Some(info);
                return info;
            }
        }
        reap_in_background(Arc::clone(&self.id), proc);
        ExitInfo::Running
    }

    /// For a child whose output or input closed: waits up to `bound` for the leader to
    /// exit; if it did, sweeps the group (descendants may still hold the pipes) and reaps it.
    pub(crate) fn collect_exit(&mut self, bound: Duration) -> ExitInfo {
        if let Some(info) = self.exit {
            return info;
        }
        let Some(proc) = self.proc.as_mut() else {
            return ExitInfo::Running;
        };
        if !wait_exit(self.id.pgid, bound) {
            return ExitInfo::Running;
        }
        self.id.signal(Signal::SIGKILL);
        match reap(&self.id, proc) {
            Some(status) => {
                let info = ExitInfo::from_status(status);
                self.exit = Some(info);
                self.proc = None;
                // The keeper died in that sweep too; it is reaped at shutdown, not here:
                // the caller's bound is for the exit.
                info
            }
            None => ExitInfo::Running,
        }
    }

    /// The exit, once reaped.
    pub(crate) fn exit(&self) -> Option<ExitInfo> {
        self.exit
    }
}

/// Whether the leader has exited (without reaping it), polling for up to `bound`.
fn wait_exit(pid: Pid, bound: Duration) -> bool {
    let until = Instant::now() + bound;
    let mut pause = Duration::from_millis(1);
    loop {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(pid), flags) {
            Ok(WaitStatus::StillAlive) => {}
            Ok(_) => return true,
            Err(Errno::EINTR) => continue,
            // ECHILD: already reaped (not by us) or not our child: nothing to wait for.
            Err(_) => return true,
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        thread::sleep(pause.min(until - now));
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Reaps an exited leader; from then on its group is never signalled.
fn reap(id: &GroupId, proc: &mut std::process::Child) -> Option<ExitStatus> {
    let mut reaped = lock(&id.reaped);
    match proc.try_wait() {
        Ok(Some(status)) => {
            *reaped = true;
            Some(status)
        }
        Ok(None) => None,
        Err(_) => {
            // Not waitable any more: treat as gone, and stop signalling its group id.
            *reaped = true;
            None
        }
    }
}

/// Waits (without a bound) for a leader that survived `SIGKILL` for [`KILL_WAIT`], e.g. in
/// uninterruptible sleep, then reaps it, so no zombie is left behind.
fn reap_in_background(id: Arc<GroupId>, mut proc: std::process::Child) {
    let spawned = threads::spawn("stdio-reap", threads::SMALL_STACK, move || {
        let exited = || {
            waitid(
                Id::Pid(id.pgid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
            )
        };
        while let Err(Errno::EINTR) = exited() {}
        id.signal(Signal::SIGKILL);
        let _ = reap(&id, &mut proc);
    });
    // Without a thread the leader stays a zombie until this process exits; nothing else
    // can be done without blocking.
    drop(spawned);
}
