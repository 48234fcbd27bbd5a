//! SIGINT/SIGTERM cancel the run instead of killing the process, so a document is still
//! printed and every socket and child process is closed before exit.
//!
//! The signals are blocked in every thread and collected by one `sigwait` thread. Child
//! processes would inherit that mask; [`crate::process`] clears it in each child before
//! `exec`, so a stdio server still receives the `SIGTERM` of a graceful shutdown.

use nix::sys::signal::{SigSet, Signal};

use crate::engine::Cancel;

/// Blocks SIGINT and SIGTERM in this thread (inherited by every thread spawned afterwards)
/// and starts a thread that turns them into `cancel`. Call before spawning any other thread.
pub fn install(cancel: &Cancel) {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    if set.thread_block().is_err() {
        return;
    }
    let cancel = cancel.clone();
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            if set.wait().is_ok() {
                cancel.cancel();
            }
        });
}
