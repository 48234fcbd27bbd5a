//! Every thread the binary starts, started one way: named, with a stack sized for its job,
//! and fallibly.
//!
//! * **Stacks are explicit.** A thread's stack is reserved address space; std's default
//!   (2 MiB, or `RUST_MIN_STACK`) times a few dozen threads would not fit a small
//!   `ulimit -v`. Each kind of thread gets what its job needs: [`SMALL_STACK`] for threads
//!   that only move bytes or wait (stdio readers, reapers, the signal thread),
//!   [`LOOKUP_STACK`] for a name lookup (the C library's resolver keeps its buffers on the
//!   stack), [`WORKER_STACK`] for the engine's workers, which run the adapters.
//! * **Failure is an answer.** [`spawn`] returns the error instead of panicking (std's
//!   `thread::spawn` panics, and a release build aborts on a panic), so a host out of threads
//!   or memory gives a result that says so ([`crate::contract::LocalResource::Threads`]) rather
//!   than no document at all.

use std::io;
use std::thread;

/// Stack of threads that only move bytes or wait: 64 KiB.
pub const SMALL_STACK: usize = 64 * 1024;

/// Stack of a name-lookup thread (`getaddrinfo` and the resolver's buffers): 256 KiB.
pub const LOOKUP_STACK: usize = 256 * 1024;

/// Stack of an engine worker, which runs adapters (TLS handshakes, JSON up to serde_json's
/// recursion limit, the JSON-Schema subset up to its depth bound): 256 KiB, which the whole
/// test suite passes with in a debug build (whose frames are the larger), so 16 workers fit
/// a 24 MB `ulimit -v` with room to spare.
pub const WORKER_STACK: usize = 256 * 1024;

/// Starts a detached thread called `name` with a stack of `stack` bytes.
pub fn spawn(name: &str, stack: usize, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    #[cfg(test)]
    refusal::check()?;
    thread::Builder::new()
        .name(name.into())
        .stack_size(stack)
        .spawn(f)
        .map(drop)
}

/// Starts a thread called `name` with a stack of `stack` bytes within `scope`, which joins it
/// before the borrows it holds end.
pub fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope thread::Scope<'scope, '_>,
    name: &str,
    stack: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> io::Result<thread::ScopedJoinHandle<'scope, T>> {
    #[cfg(test)]
    refusal::check()?;
    thread::Builder::new()
        .name(name.into())
        .stack_size(stack)
        .spawn_scoped(scope, f)
}

/// The test seam for a host out of threads: no test can make the kernel refuse a thread to
/// one test and not to the tests running beside it (root ignores `RLIMIT_NPROC`, and an
/// address-space limit starves every allocation), so tests make [`spawn`] refuse instead.
#[cfg(test)]
pub mod refusal {
    use std::cell::Cell;
    use std::io;

    thread_local! {
        /// Spawns this thread may still make; `None`: no limit.
        static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// Until the guard drops, this thread's spawns after the next `allowed` fail with
    /// `EAGAIN`, as `pthread_create` does on a host out of threads. Only this thread's:
    /// threads it starts, and other tests, spawn as usual.
    pub fn after(allowed: usize) -> RefusalGuard {
        LEFT.with(|left| left.set(Some(allowed)));
        RefusalGuard(())
    }

    /// Lifts the refusal when dropped.
    pub struct RefusalGuard(());

    impl Drop for RefusalGuard {
        fn drop(&mut self) {
            LEFT.with(|left| left.set(None));
        }
    }

    /// Counts a spawn against the allowance; the error when none is left.
    pub(super) fn check() -> io::Result<()> {
        LEFT.with(|left| match left.get() {
            None => Ok(()),
            Some(0) => Err(io::Error::from_raw_os_error(
                nix::errno::Errno::EAGAIN as i32,
            )),
            Some(n) => {
                left.set(Some(n - 1));
                Ok(())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_thread_runs_with_its_name() {
        let (tx, rx) = mpsc::channel();
        spawn("named", SMALL_STACK, move || {
            let _ = tx.send(thread::current().name().map(str::to_string));
        })
        .expect("a thread");
        assert_eq!(rx.recv().ok().flatten().as_deref(), Some("named"));
    }

    #[test]
    fn a_refusal_fails_this_threads_spawns_after_the_allowance() {
        let guard = refusal::after(1);
        assert!(spawn("allowed", SMALL_STACK, || {}).is_ok());
        let refused = spawn("refused", SMALL_STACK, || {}).map_err(|e| e.raw_os_error());
        assert_eq!(refused, Err(Some(nix::errno::Errno::EAGAIN as i32)));
        let scoped = thread::scope(|s| spawn_scoped(s, "refused", SMALL_STACK, || {}).is_err());
        assert!(scoped);
        // Another thread spawns as usual.
        let elsewhere = thread::spawn(|| spawn("other", SMALL_STACK, || {}).is_ok()).join();
        assert!(matches!(elsewhere, Ok(true)));
        drop(guard);
        assert!(spawn("lifted", SMALL_STACK, || {}).is_ok());
    }

    #[test]
    fn a_scoped_thread_borrows_and_answers() {
        let borrowed = String::from("scoped");
        let name = thread::scope(|scope| {
            let handle = spawn_scoped(scope, "lane", SMALL_STACK, || {
                (thread::current().name().map(str::to_string), borrowed.len())
            })
            .expect("a thread");
            handle.join().ok()
        });
        assert_eq!(name, Some((Some("lane".to_string()), 6)));
    }
}
