//! The helper threads this layer starts — the stdout reader, the stderr drain and the
//! background reaper — written once so they all get a name and the same small stack.

use std::io;
use std::thread;

/// Stack of the reader, drain and reaper threads: they only move bytes.
const THREAD_STACK: usize = 64 * 1024;

/// Starts a detached helper thread called `name`.
pub(crate) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    thread::Builder::new()
        .name(name.into())
        .stack_size(THREAD_STACK)
        .spawn(f)
        .map(drop)
}
