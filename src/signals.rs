//! SIGINT, SIGTERM, SIGHUP and SIGQUIT cancel the run instead of killing the process, so a
//! document is still printed and every socket and child process is closed before exit: a
//! terminal that closes (SIGHUP), a supervisor's stop (SIGTERM), Ctrl-C (SIGINT) and Ctrl-\
//! (SIGQUIT, which would otherwise dump core) all end a run the same way.
//!
//! The signals are blocked in every thread and collected by one `sigwait` thread. Child
//! processes would inherit that mask; [`crate::process`] clears it in each child before
//! `exec`, so a stdio server still receives the `SIGTERM` of a graceful shutdown. SIGKILL
//! cannot be caught: for it, each stdio server gets a parent-death signal when it starts,
//! and its process group a keeper that kills the group once this process is gone (see
//! [`crate::process`]).

use nix::sys::signal::{SigSet, Signal};

use crate::runtime::Cancel;
use crate::runtime::threads;

/// The signals that cancel a run.
pub const CANCELLING: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// Blocks [`CANCELLING`] in this thread (inherited by every thread spawned afterwards) and
/// starts a thread that turns them into `cancel`. Call before spawning any other thread.
///
/// Without that thread (no thread could be started) nothing is blocked: the signals keep
/// their default action and end the process, rather than being ignored.
pub fn install(cancel: &Cancel) {
    let mut set = SigSet::empty();
    for signal in CANCELLING {
        set.add(signal);
    }
    if set.thread_block().is_err() {
        return;
    }
    let cancel = cancel.clone();
    let waiting = set;
    let started = threads::spawn("signals", threads::SMALL_STACK, move || {
        if waiting.wait().is_ok() {
            cancel.cancel();
        }
    });
    if started.is_err() {
        let _ = set.thread_unblock();
    }
}
