//! The `agenthealth` binary: runs [`agenthealth::run_with`] and exits with its code.

fn main() {
    let code = agenthealth::run_with(std::env::args_os().skip(1), startup::stdout());
    std::process::exit(code);
}

/// What the process was started with, seen before the Rust runtime changes it.
///
/// The runtime reopens a closed stdin, stdout or stderr on `/dev/null` before `main`, so a
/// document written to a closed stdout (`>&-`) would vanish without an error. A function in
/// `.init_array` runs before that (the C library calls it before `main`), and records
/// whether file descriptor 1 was open.
mod startup {
    use std::sync::atomic::{AtomicBool, Ordering};

    static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

    extern "C" fn record() {
        #[allow(unsafe_code)]
        // SAFETY: `fcntl(1, F_GETFD)` only queries the descriptor table; it touches no memory
        // of ours and is safe to call before the runtime is set up.
        let flags = unsafe { nix::libc::fcntl(1, nix::libc::F_GETFD) };
        STDOUT_CLOSED.store(flags == -1, Ordering::SeqCst);
    }

    #[used]
    #[unsafe(link_section = ".init_array")]
    static RECORD: extern "C" fn() = record;

    /// How stdout was at the start.
    pub fn stdout() -> agenthealth::Stdout {
        if STDOUT_CLOSED.load(Ordering::SeqCst) {
            agenthealth::Stdout::ClosedAtStart
        } else {
            agenthealth::Stdout::Open
        }
    }
}
