//! The group keeper: a process inside the child's group that kills the group once this
//! process is gone, however it went.
//!
//! The kernel's parent-death signal (see `spawn.rs`) reaches only the direct child, and a
//! `SIGKILL` of this process runs none of our code, so without help a server's own children
//! would outlive such a kill. The keeper is that help. Right after the server starts, this
//! process forks it (no `exec`); it joins the server's group, keeps nothing open but the read
//! end of a pipe whose only write end this process holds, and blocks reading it. The read
//! returns end of file when that write end closes: when [`Keeper::finish`] closes it, or
//! when this process dies by any means (the kernel closes a dead process's descriptors). The
//! keeper then sends `SIGKILL` to its own group, itself included.
//!
//! Why it is built this way:
//!
//! - **A pipe, not a signal.** The write end belongs to the process, not to a thread (the
//!   parent-death signal follows the forking thread), and end of file needs no handler.
//! - **A member of the group.** It kills its own group (`kill(0, SIGKILL)`), never a group
//!   id: a group id is not reused while a member lives, so that signal cannot reach a
//!   stranger, even after this process reaped the leader or died.
//! - **Every signal blocked.** A server that signals its own group (`kill(0, SIGTERM)`), the
//!   `SIGTERM` step of a shutdown or a `SIGHUP` must not end it early; only `SIGKILL` does,
//!   which is what every sweep of the group sends.
//! - **Every other descriptor closed.** Forked from this process, it starts with all of our
//!   descriptors: holding a server's stdin would keep that server from seeing end of file,
//!   holding another keeper's write end would keep that keeper from ever firing, holding our
//!   stdout would keep its reader waiting. `close_range` (Linux 5.9) closes them in one call;
//!   older kernels get a loop up to the descriptor limit (at most [`CLOSE_LOOP_LIMIT`]).
//! - **No `exec`, no thread.** No program to exec is sure to exist (a `scratch` image holds
//!   only us, and re-executing ourselves would need an entry point in every program that
//!   uses this layer, its tests included), and a thread dies with this process. The fork
//!   shares our memory copy-on-write and never writes it: it costs its page tables and the
//!   pages this process rewrites while the server runs (one target run), not a copy of the
//!   heap.
//! - **Reaped by us.** It is our child: [`Keeper::finish`] reaps it within a bound, or
//!   leaves that to a background thread, so `serve` accumulates no zombies.
//!
//! A keeper that cannot be started (out of processes or descriptors) leaves the server
//! running with the parent-death signal alone, as [`Keeper::start`]'s caller decides.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::libc;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getpgid, pipe2, setpgid};

use crate::runtime::threads;

/// The highest descriptor count the fallback close loop walks (kernels without
/// `close_range`): a limit of millions would cost the keeper seconds of system calls, during
/// which it would hold the descriptors it has not closed yet.
const CLOSE_LOOP_LIMIT: u32 = 65_536;

/// A running keeper of one process group: our child, and the write end of its pipe.
///
/// Dropping it is [`Keeper::finish`] without a wait.
pub(crate) struct Keeper {
    /// `None` once reaped or handed to the background thread.
    pid: Option<Pid>,
    /// Closing it tells the keeper to kill the group; `None` once closed.
    wake: Option<OwnedFd>,
}

impl Keeper {
    /// Forks the keeper of group `pgid`, whose leader must be our unreaped child (so the
    /// group exists until the keeper is in it). When this returns `Ok`, the keeper is in the
    /// group: both sides move it there, so it is in before anything can signal the group.
    pub(crate) fn start(pgid: Pid) -> io::Result<Keeper> {
        Keeper::fork(pgid, Closing::Range)
    }

    /// [`Keeper::start`] with the close loop of kernels without `close_range` (tests).
    #[cfg(test)]
    pub(crate) fn start_closing_by_loop(pgid: Pid) -> io::Result<Keeper> {
        Keeper::fork(pgid, Closing::Loop)
    }

    fn fork(pgid: Pid, closing: Closing) -> io::Result<Keeper> {
        let (read, write) = pipe2(OFlag::O_CLOEXEC)?;
        // Everything the child needs is computed here: after the fork it only makes system
        // calls.
        let watch = read.as_raw_fd();
        let close_limit = close_limit(write.as_raw_fd());
        // The keeper starts with every signal blocked (a fork inherits the forking thread's
        // mask), so not even a signal that comes at once can end it early; this thread gets
        // its own mask back right after the fork.
        let mask = SigSet::all().thread_swap_mask(SigmaskHow::SIG_SETMASK)?;
        #[allow(unsafe_code)]
        // SAFETY: after a fork in a multi-threaded process the child may only make
        // async-signal-safe calls until it exits; `keep` makes nothing but system calls (see
        // there) and never returns, so no destructor, allocation or lock runs in the child.
        // The parent continues normally.
        let forked = match unsafe { fork() } {
            Ok(ForkResult::Child) => keep(watch, pgid, closing, close_limit),
            Ok(ForkResult::Parent { child }) => Ok(child),
            Err(e) => Err(e),
        };
        let _ = mask.thread_set_mask();
        let pid = forked?;
        drop(read);
        let keeper = Keeper {
            pid: Some(pid),
            wake: Some(write),
        };
        // The keeper moves itself too, but maybe only later: until one of the two did it,
        // a kill of the group would miss it.
        if setpgid(pid, pgid).is_err() && getpgid(Some(pid)) != Ok(pgid) {
            let _ = kill(pid, Signal::SIGKILL);
            keeper.finish(Instant::now() + super::KILL_WAIT);
            return Err(io::Error::other(
                "the group keeper could not join the group",
            ));
        }
        Ok(keeper)
    }

    /// Closes the keeper's pipe, so it kills the group (whatever is left of it) and exits,
    /// then reaps it, waiting until `until` at most; past that a background thread waits.
    /// Call it once the group was swept, or is to be.
    pub(crate) fn finish(mut self, until: Instant) {
        self.end(until);
    }

    /// The keeper's pid until it is reaped or handed off (tests).
    #[cfg(test)]
    pub(crate) fn pid(&self) -> Option<Pid> {
        self.pid
    }

    /// Closes our end of the pipe, and nothing else (tests).
    #[cfg(test)]
    pub(crate) fn close_pipe(&mut self) {
        self.wake = None;
    }

    fn end(&mut self, until: Instant) {
        self.wake = None;
        if let Some(pid) = self.pid.take() {
            if !reaped_by(pid, until) {
                reap_in_background(pid);
            }
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.end(Instant::now());
    }
}

/// Whether keeper `pid` was reaped, polling until `until`.
fn reaped_by(pid: Pid, until: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {}
            Err(Errno::EINTR) => continue,
            // Reaped now; or ECHILD: not ours to wait for any more.
            Ok(_) | Err(_) => return true,
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        thread::sleep(pause.min(until - now));
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Waits for keeper `pid` without a bound, on a thread of its own. Without a thread it
/// stays a zombie until this process exits; nothing else can be done without blocking.
fn reap_in_background(pid: Pid) {
    let spawned = threads::spawn("stdio-keeper", threads::SMALL_STACK, move || {
        while let Err(Errno::EINTR) = waitpid(pid, None) {}
    });
    drop(spawned);
}

/// How the keeper closes the descriptors it inherited.
#[derive(Clone, Copy, PartialEq)]
enum Closing {
    /// `close_range`, and the loop if that fails (before Linux 5.9).
    Range,
    /// The loop alone (tests).
    #[cfg(test)]
    Loop,
}

/// How many descriptors the fallback close loop walks: this process's limit, capped at
/// [`CLOSE_LOOP_LIMIT`], and never below `highest + 1`.
fn close_limit(highest: RawFd) -> u32 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    #[allow(unsafe_code)]
    // SAFETY: `getrlimit` only writes the `rlimit` it is given a pointer to.
    let found = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } == 0;
    let soft = if found {
        u32::try_from(limit.rlim_cur).unwrap_or(u32::MAX)
    } else {
        CLOSE_LOOP_LIMIT
    };
    let floor = u32::try_from(highest).unwrap_or(0).saturating_add(1);
    soft.min(CLOSE_LOOP_LIMIT).max(floor)
}

/// The keeper's name in `ps` and `top` (`/proc/<pid>/comm`; its command line stays ours).
const NAME: &std::ffi::CStr = c"ah-group-keeper";

/// The keeper's whole life, in the forked child (every signal blocked already): join group
/// `pgid`, close every descriptor but `watch`, read `watch` until end of file or an error,
/// then kill its own group if it is `pgid`, and exit. It never returns.
#[allow(unsafe_code)]
fn keep(watch: RawFd, pgid: Pid, closing: Closing, close_limit: u32) -> ! {
    let pgid = pgid.as_raw();
    // SAFETY: only system calls, each async-signal-safe (`prctl`, `setpgid`, `getpgrp`,
    // `close_range` through `syscall`, `close`, `read`, `kill`, `_exit`), on plain integers,
    // a static string and a one-byte buffer on this stack; errno is read from this thread's
    // own slot. No allocation, no lock, no Rust destructor, nothing shared with the parent's
    // threads.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, NAME.as_ptr());
        if libc::setpgid(0, pgid) != 0 && libc::getpgrp() != pgid {
            // Not in the group: killing our own group would hit the wrong one.
            libc::_exit(1);
        }
        let watch_u = u32::try_from(watch).unwrap_or(0);
        let closed = closing == Closing::Range
            && (watch_u == 0 || libc::syscall(libc::SYS_close_range, 0u32, watch_u - 1, 0u32) == 0)
            && libc::syscall(libc::SYS_close_range, watch_u + 1, u32::MAX, 0u32) == 0;
        if !closed {
            for fd in 0..close_limit {
                if fd != watch_u {
                    libc::close(fd as libc::c_int);
                }
            }
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(watch, (&raw mut byte).cast(), 1);
            if n > 0 || (n < 0 && Errno::last_raw() == libc::EINTR) {
                continue;
            }
            break;
        }
        if libc::getpgrp() == pgid {
            libc::kill(0, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}
