//! Child processes for the MCP stdio transport: spawn, bounded line I/O, group termination.
//!
//! This is the byte-level sibling of the HTTP layer. It knows nothing about JSON-RPC: it
//! starts one [`ChildSpec`] (a plain program, arguments, directory and environment — no
//! configuration type), writes newline-terminated messages to its stdin, reads
//! newline-delimited lines from its stdout, discards its stderr, and guarantees that the
//! child and everything in its process group are gone when the [`Child`] is shut down,
//! dropped or aborted. Every wait ends by a [`Deadline`] or an [`Attempt`]; the layer
//! imports only `std`, `nix`, the contract's words and the runtime ([`crate::runtime`]).
//!
//! # Guarantees
//!
//! - **No shell, ever.** The command is resolved here (see [`Child::spawn`]) and executed
//!   directly with its argument array. A file that is neither an ELF binary nor a `#!`
//!   script is rejected ([`SpawnError::NotExecutable`]), never handed to `/bin/sh` (glibc's
//!   `execvp` would do that on `ENOEXEC`).
//! - **A clean environment.** Only [`INHERITED_ENV`](spawn::INHERITED_ENV) (when set in this
//!   process) plus the mapped variables reach the child.
//! - **Own process group.** The child leads a new process group (`pgid == pid`). Termination
//!   signals the whole group, so descendants that stay in it die with it. Servers must not
//!   leave that group: what escapes it is beyond reach.
//! - **It dies with us.** The group ends even when this process is killed outright
//!   (`SIGKILL`, which runs none of our code), by whichever side notices first: this process
//!   on every exit it lives through; the kernel for the direct child, which asks for `SIGKILL`
//!   when its parent dies (`PR_SET_PDEATHSIG`); and, for the rest of the group, the group's
//!   keeper (`keeper.rs`): a fork of this process, without `exec`, that joins the group and
//!   blocks reading a pipe only this process can write to. The kernel closes that pipe when
//!   this process dies, however it dies; the keeper then sends `SIGKILL` to its own group.
//!   What cannot be guaranteed: a process that left the group (`setsid`, `setpgid`, a
//!   daemon's double fork) is beyond reach, like anything that escapes it; and a keeper that
//!   could not be started (out of processes or descriptors; the server still runs) leaves
//!   the descendants of a killed run to notice for themselves that their stdin or parent is
//!   gone.
//! - **Bounded time.** Reading honours the [`Attempt`] deadline (a reader thread feeds a
//!   bounded channel; the caller waits with a timeout). Writing uses a non-blocking pipe and
//!   `poll`, so a child that never reads its stdin cannot hold a writer past the deadline.
//!   [`Child::shutdown`] is bounded by its grace deadline + [`TERM_WAIT`] + [`KILL_WAIT`].
//! - **Bounded memory.** A line is at most [`MAX_LINE_BYTES`]; a longer one is reported as
//!   soon as the limit is crossed, without buffering the rest of it. The channel holds at
//!   most `CHANNEL_CHUNKS` chunks of `CHUNK_BYTES` each (both in `lines.rs`).
//! - **Stderr never blocks the child.** The child's one helper thread drains it (and throws
//!   it away) while it forwards stdout, both under one `poll`.
//! - **One thread per child.** That helper is the only thread a running child costs (plus a
//!   reaper for a leader or keeper that outlives `SIGKILL`), so a run of stdio targets uses at
//!   most `concurrency` workers, as many helpers, and the main and signal threads. The keeper
//!   is a process, not a thread, and is reaped by the shutdown that ends its group.
//! - **Abort is immediate.** [`Child::abort_handle`] gives the watchdog a hook that sends
//!   `SIGKILL` to the whole group without waiting for anything.
//!
//! # Process-group safety
//!
//! A process-group id is only signalled while the group leader is not yet reaped: an
//! unreaped leader (even a zombie) keeps its pid, and so the group id, from being reused.
//! Exits are observed with `waitid(WNOWAIT)`, the group is swept with `SIGKILL`, and only
//! then is the leader reaped. After reaping, the group is never signalled again. The keeper
//! follows the same rule from the inside: it signals only its own group (`kill(0, ..)`),
//! which cannot be reused while it is a member.
//!
//! # Platform
//!
//! Linux (glibc and musl). `waitid` is used to look at an exit without reaping it.
//!
//! `SIGPIPE` is ignored by the Rust runtime in every Rust `main`, so writing to a dead child
//! yields `EPIPE` ([`SendError::Closed`]) rather than killing this process.
//!
//! # Signal mask
//!
//! std (since Rust 1.66) gives the child the signal mask of the thread that spawns it, and
//! the engine blocks SIGINT and SIGTERM in every thread (`src/signals.rs`, a `sigwait`
//! design). Left alone, every child would start with both blocked and the `SIGTERM` step of
//! [`Child::shutdown`] would do nothing. The child therefore unblocks every signal between
//! `fork` and `exec` (one `pthread_sigmask` call, which is async-signal-safe), so it starts
//! with an empty mask like a program started from a shell. Dispositions need no reset:
//! nothing here installs a handler, and std restores `SIGPIPE`.
//!
//! # Layout
//!
//! One file per job, [`Child`] here tying them together:
//!
//! - `spawn.rs`: [`ChildSpec`], command resolution, working directory, the clean environment,
//!   the signal-mask reset and the parent-death signal (`unsafe`: code between `fork` and
//!   `exec`);
//! - `group.rs`: the process group's lifetime — signalling, exit observation, reaping, the
//!   reuse rule above;
//! - `keeper.rs`: the group's keeper (`unsafe`: the whole life of a forked process);
//! - `lines.rs`: the bounded newline framer, the helper that forwards stdout and drains
//!   stderr, stdin writes under `poll`;
//! - `error.rs`: [`SpawnError`], [`SendError`], [`RecvError`], [`ExitInfo`].
//!
//! Helper threads (one per child, plus a reaper for a leader or keeper that outlives
//! `SIGKILL`) start through [`crate::runtime::threads`] with a small stack.

mod error;
mod group;
mod keeper;
pub(crate) mod lines;
mod spawn;

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

pub use self::error::{ExitInfo, RecvError, SendError, SpawnError};
pub(crate) use self::group::EXIT_WAIT;
pub use self::group::{KILL_WAIT, TERM_WAIT};
pub use self::lines::MAX_LINE_BYTES;
pub use self::spawn::ChildSpec;

use self::group::Group;
use self::lines::{Input, Lines, Stop, WriteError};
use crate::runtime::{Attempt, Deadline};

/// A running child process in its own process group, with its stdio piped.
///
/// Dropping it shuts it down with no grace (see [`Child::shutdown`]).
pub struct Child {
    pid: u32,
    group: Group,
    input: Input,
    output: Lines,
}

impl Child {
    /// Starts `command.program` with `command.args`, without a shell.
    ///
    /// - A program without `/` is looked up in the absolute entries of `PATH` (this
    ///   process's, which is also the child's; `/usr/local/bin:/usr/bin:/bin` when unset).
    ///   Empty and relative entries are skipped, so nothing is ever found through the
    ///   current directory by accident.
    /// - A program with `/` is a path; when relative and `command.directory` is set, it is
    ///   relative to that directory, otherwise to the current directory.
    /// - `argv[0]` is the program as configured.
    /// - The working directory is `command.directory` when set.
    /// - The file must be an executable regular file starting with `\x7fELF` or `#!`.
    /// - The environment is cleared; [`INHERITED_ENV`](spawn::INHERITED_ENV) is copied from
    ///   this process where set (the only process-environment read in this layer), then
    ///   `command.env` (child name, value) is added, overriding inherited names.
    /// - stdin, stdout and stderr are pipes; stderr is drained and discarded by a thread;
    ///   stdin is non-blocking on this side. The child starts with no signal blocked (see
    ///   "Signal mask" in the module documentation); std resets `SIGPIPE`.
    /// - The child leads a new process group, which a keeper process joins (see "It dies
    ///   with us" in the module documentation); `ps` shows the keeper as `ah-group-keeper`.
    /// - The child gets `SIGKILL` when the thread that spawned it ends (`PR_SET_PDEATHSIG`
    ///   follows the forking thread, not the process): spawn it on the thread that will shut
    ///   it down, as the engine's workers do. The keeper follows the process: it fires when
    ///   the [`Child`] is gone or this process dies.
    ///
    /// Every error is an operator problem, or a resource of this host that ran out
    /// ([`SpawnError::Other`]); none carries an environment value.
    pub fn spawn(command: &ChildSpec) -> Result<Child, SpawnError> {
        Child::spawn_with_parent_env(command, &spawn::parent_env)
    }

    /// [`Child::spawn`] with the parent environment read through `parent` (tests).
    fn spawn_with_parent_env(
        command: &ChildSpec,
        parent: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Child, SpawnError> {
        Child::start(spawn::start(command, parent)?)
    }

    /// The checks [`Child::spawn`] makes before starting anything, without starting anything:
    /// the mapped variables can be put in an environment, the working directory is usable,
    /// and the program resolves to an executable of a known format. Returns the file that
    /// would be executed.
    ///
    /// A command that passes can still fail to start (a `#!` interpreter that does not
    /// exist, resource limits, a file changed in between); [`Child::spawn`] reports those.
    pub(crate) fn preflight(command: &ChildSpec) -> Result<PathBuf, SpawnError> {
        spawn::prepare(command, &spawn::parent_env).map(|(program, _)| program)
    }

    /// How the child ended, for a child whose input was found closed: waits for it to exit
    /// until `deadline`, and never longer than [`EXIT_WAIT`] (as [`Child::recv_line`] does
    /// at the end of output). If it exited, the group is swept and the child reaped;
    /// otherwise [`ExitInfo::Running`].
    pub(crate) fn exit_within(&mut self, deadline: Deadline) -> ExitInfo {
        self.group.collect_exit(deadline.remaining().min(EXIT_WAIT))
    }

    /// Wires up the threads of a freshly spawned process; kills it if that fails.
    fn start(mut proc: std::process::Child) -> Result<Child, SpawnError> {
        let pid = proc.id();
        let stdin = proc.stdin.take();
        let stdout = proc.stdout.take();
        let stderr = proc.stderr.take();
        let (output, feed) = lines::channel();
        let child = Child {
            pid,
            group: Group::new(proc),
            input: Input::new(stdin),
            output,
        };
        // From here on, dropping `child` kills and reaps the process.
        let (Some(stdout), Some(stderr)) = (stdout, stderr) else {
            return Err(SpawnError::Other(io::Error::other("missing pipe")));
        };
        child.input.set_nonblocking().map_err(SpawnError::Other)?;
        feed.start(stdout, stderr).map_err(SpawnError::Other)?;
        Ok(child)
    }

    /// The child's process id (tests look it up in `/proc`).
    #[cfg(test)]
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The child's process-group id (equal to its pid).
    #[cfg(test)]
    pub fn pgid(&self) -> u32 {
        self.pid
    }

    /// Writes `line` followed by `\n` to the child's stdin, giving up at `deadline`.
    ///
    /// Never blocks past `deadline`, whatever the child does. `line` must not contain `\n`.
    /// A child that exited or closed its input gives [`SendError::Closed`].
    pub fn send(&mut self, line: &[u8], deadline: Deadline) -> Result<(), SendError> {
        if line.contains(&b'\n') {
            return Err(SendError::EmbeddedNewline);
        }
        if self.group.killed() {
            self.input.close();
            return Err(SendError::Closed);
        }
        self.input.write_line(line, deadline).map_err(|e| match e {
            WriteError::Closed => SendError::Closed,
            WriteError::Timeout => SendError::Timeout,
            WriteError::Io(e) => SendError::Io(e),
        })
    }

    /// Returns the next line of stdout, without its `\n` (a `\r` before it is kept).
    ///
    /// Waits until `attempt`'s deadline at most and calls `attempt.mark_response()` as soon
    /// as any stdout byte is (or was already) there. Lines are returned as they are: blank
    /// lines and non-JSON banners included. Once the attempt is aborted (whether or not the
    /// abort handle is registered on it) or the abort handle fired, it returns
    /// [`RecvError::Aborted`] — [`RecvError::Timeout`] if the deadline has passed too —
    /// without waiting. Lines already received stay buffered across calls and attempts.
    pub fn recv_line(&mut self, attempt: &Attempt) -> Result<Vec<u8>, RecvError> {
        let group = &self.group;
        let received = self.output.recv(attempt, &|| group.killed());
        received.map_err(|stop| match stop {
            Stop::Timeout => RecvError::Timeout,
            Stop::Aborted => RecvError::Aborted,
            Stop::TooLong => RecvError::LineTooLong,
            Stop::Io(e) => RecvError::Io(e),
            Stop::Closed { unterminated } => {
                let exit = self.group.collect_exit(attempt.remaining().min(EXIT_WAIT));
                RecvError::Closed { exit, unterminated }
            }
        })
    }

    /// A hook that kills the whole process group with `SIGKILL` at once, for
    /// [`Attempt::on_abort`]. It never waits; the next [`Child::recv_line`] returns
    /// [`RecvError::Aborted`] (or `Timeout` past the deadline) and [`Child::send`] returns
    /// [`SendError::Closed`]. Calling it after the child was reaped does nothing.
    pub fn abort_handle(&self) -> impl Fn() + Send + 'static {
        let kill = self.group.kill_hook();
        let waker = self.output.waker();
        move || {
            kill();
            waker.wake();
        }
    }

    /// Ends the child and its group and returns how the child ended.
    ///
    /// Closes stdin, waits until `grace` for the child to exit, then sends `SIGTERM` to the
    /// group and waits up to [`TERM_WAIT`], then always sends `SIGKILL` to the group (which
    /// also ends descendants that outlived the leader) and reaps the child, waiting up to
    /// [`KILL_WAIT`]. Total time is at most the time left to `grace` + `TERM_WAIT` +
    /// `KILL_WAIT` plus scheduling. If the leader is still not reaped then, a background
    /// thread reaps it. After an abort the grace and `SIGTERM` steps are skipped.
    pub fn shutdown(mut self, grace: Deadline) -> ExitInfo {
        self.terminate(grace.remaining())
    }

    fn terminate(&mut self, grace: Duration) -> ExitInfo {
        self.input.close();
        self.group.terminate(grace)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.terminate(Duration::ZERO);
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Child")
            .field("pid", &self.pid)
            .field("exit", &self.group.exit())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
