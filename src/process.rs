//! Child processes for the MCP stdio transport: spawn, bounded line I/O, group termination.
//!
//! This is the byte-level sibling of the HTTP layer. It knows nothing about JSON-RPC: it
//! starts one configured executable, writes newline-terminated messages to its stdin, reads
//! newline-delimited lines from its stdout, discards its stderr, and guarantees that the
//! child and everything in its process group are gone when the [`Child`] is shut down,
//! dropped or aborted.
//!
//! # Guarantees
//!
//! - **No shell, ever.** The command is resolved here (see [`Child::spawn`]) and executed
//!   directly with its argument array. A file that is neither an ELF binary nor a `#!`
//!   script is rejected ([`SpawnError::NotExecutable`]), never handed to `/bin/sh` (glibc's
//!   `execvp` would do that on `ENOEXEC`).
//! - **A clean environment.** Only [`INHERITED_ENV`] (when set in this process) plus the
//!   mapped variables reach the child.
//! - **Own process group.** The child leads a new process group (`pgid == pid`). Termination
//!   signals the whole group, so descendants that stay in it die with it. Servers must not
//!   leave that group: what escapes it is beyond reach.
//! - **Bounded time.** Reading honours the [`Attempt`] deadline (a reader thread feeds a
//!   bounded channel; the caller waits with a timeout). Writing uses a non-blocking pipe and
//!   `poll`, so a child that never reads its stdin cannot hold a writer past the deadline.
//!   [`Child::shutdown`] is bounded by `grace` + [`TERM_WAIT`] + [`KILL_WAIT`].
//! - **Bounded memory.** A line is at most [`MAX_LINE_BYTES`]; a longer one is reported as
//!   soon as the limit is crossed, without buffering the rest of it. The channel holds at
//!   most [`CHANNEL_CHUNKS`] chunks of [`CHUNK_BYTES`].
//! - **Stderr never blocks the child.** A thread drains it and throws it away.
//! - **Abort is immediate.** [`Child::abort_handle`] gives the watchdog a hook that sends
//!   `SIGKILL` to the whole group without waiting for anything.
//!
//! # Process-group safety
//!
//! A process-group id is only signalled while the group leader is not yet reaped: an
//! unreaped leader (even a zombie) keeps its pid, and so the group id, from being reused.
//! Exits are observed with `waitid(WNOWAIT)`, the group is swept with `SIGKILL`, and only
//! then is the leader reaped. After reaping, the group is never signalled again.
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

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::{AccessFlags, Pid, access};

use crate::config::StdioOptions;
use crate::vocab::sync::lock;
use crate::vocab::{Attempt, Secret};

/// The longest line [`Child::recv_line`] returns, in bytes, not counting its `\n`.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The variables a child inherits from this process, each only when set here. A mapped
/// variable of the same name overrides the inherited one. `SYSTEMROOT` and `WINDIR` are the
/// Windows system-directory variables the contract names; they are normally unset on Unix.
pub const INHERITED_ENV: [&str; 8] = [
    "PATH",
    "HOME",
    "USER",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SYSTEMROOT",
    "WINDIR",
];

/// Bytes the reader thread reads from stdout at once (one channel message at most).
pub const CHUNK_BYTES: usize = 64 * 1024;

/// Chunks the stdout channel holds before the reader thread waits (back-pressure).
pub const CHANNEL_CHUNKS: usize = 4;

/// How long [`Child::shutdown`] waits after `SIGTERM` before `SIGKILL`.
pub const TERM_WAIT: Duration = Duration::from_millis(50);

/// How long [`Child::shutdown`] waits for the leader to die after `SIGKILL` before leaving
/// the reaping to a background thread.
pub const KILL_WAIT: Duration = Duration::from_millis(50);

/// How long [`Child::recv_line`] waits, after stdout closed, for the exit status.
pub const EXIT_WAIT: Duration = Duration::from_millis(100);

/// Used to look commands up when this process has no `PATH`.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Stack of the reader, drain and reaper threads: they only move bytes.
const THREAD_STACK: usize = 64 * 1024;

/// How a child ended, as far as it could be observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitInfo {
    /// It exited with this status.
    Code(i32),
    /// A signal (this number) killed it.
    Signal(i32),
    /// It had not exited within the bound this layer waits (it is still killed and reaped
    /// eventually).
    Running,
}

impl ExitInfo {
    fn from_status(status: ExitStatus) -> ExitInfo {
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitInfo::Code(code),
            (None, Some(sig)) => ExitInfo::Signal(sig),
            (None, None) => ExitInfo::Running,
        }
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitInfo::Code(code) => write!(f, "exited with status {code}"),
            ExitInfo::Signal(sig) => match Signal::try_from(*sig) {
                Ok(s) => write!(f, "killed by signal {sig} ({})", s.as_str()),
                Err(_) => write!(f, "killed by signal {sig}"),
            },
            ExitInfo::Running => f.write_str("had not exited"),
        }
    }
}

/// Why a child could not be started. Every case is an operator problem (MISCONFIGURED).
/// No variant carries an environment value.
#[derive(Debug)]
pub enum SpawnError {
    /// No such file, or no executable of that name on `PATH`.
    NotFound {
        /// The command as configured.
        command: String,
    },
    /// The file exists but cannot be executed (no execute permission, not a regular file,
    /// not a recognised executable format, missing interpreter).
    NotExecutable {
        /// The file that was found.
        path: PathBuf,
        /// Why it cannot run.
        reason: String,
    },
    /// The working directory is missing, not a directory or not searchable.
    BadDirectory {
        /// The directory as configured.
        directory: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A mapped variable cannot be put in an environment (empty name, `=` or NUL in the
    /// name, NUL in the value).
    InvalidEnv {
        /// The child variable name.
        name: String,
        /// What is wrong (never the value).
        reason: &'static str,
    },
    /// Anything else: pipes, threads, resource limits.
    Other(io::Error),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::NotFound { command } => write!(f, "command not found: {command}"),
            SpawnError::NotExecutable { path, reason } => {
                write!(f, "cannot execute {}: {reason}", path.display())
            }
            SpawnError::BadDirectory { directory, reason } => {
                write!(f, "bad working directory {directory}: {reason}")
            }
            SpawnError::InvalidEnv { name, reason } => {
                write!(f, "invalid environment variable {name:?}: {reason}")
            }
            SpawnError::Other(e) => write!(f, "cannot start the process: {e}"),
        }
    }
}

impl std::error::Error for SpawnError {}

/// Why [`Child::send`] failed.
#[derive(Debug)]
pub enum SendError {
    /// The child's stdin is closed: it exited, closed it, was killed, or an earlier write
    /// timed out part-way.
    Closed,
    /// The deadline passed before the whole line was written. If part of it was written,
    /// stdin has been closed (the stream is no longer framed) and later sends are `Closed`.
    Timeout,
    /// The message contains a `\n`, which would break the framing. Nothing was written.
    EmbeddedNewline,
    /// Another write error.
    Io(io::Error),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::Closed => f.write_str("the process's input is closed"),
            SendError::Timeout => f.write_str("timed out writing to the process"),
            SendError::EmbeddedNewline => f.write_str("message contains a newline"),
            SendError::Io(e) => write!(f, "writing to the process failed: {e}"),
        }
    }
}

impl std::error::Error for SendError {}

/// Why [`Child::recv_line`] returned no line.
#[derive(Debug)]
pub enum RecvError {
    /// The attempt's deadline passed first.
    Timeout,
    /// The attempt was aborted, or the group killed through [`Child::abort_handle`], before
    /// the deadline.
    Aborted,
    /// A line exceeded [`MAX_LINE_BYTES`]. The rest of that line is skipped by later calls,
    /// which return the lines after it.
    LineTooLong,
    /// Stdout reached end of file.
    Closed {
        /// The child's exit, when it could be collected within [`EXIT_WAIT`].
        exit: ExitInfo,
        /// Bytes of an unterminated last line that were discarded (0 when the output ended
        /// on a line boundary).
        unterminated: usize,
    },
    /// Reading stdout failed (the stream is then treated as closed).
    Io(io::Error),
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvError::Timeout => f.write_str("timed out waiting for output"),
            RecvError::Aborted => f.write_str("aborted"),
            RecvError::LineTooLong => write!(f, "output line longer than {MAX_LINE_BYTES} bytes"),
            RecvError::Closed {
                exit,
                unterminated: 0,
            } => write!(f, "output closed; the process {exit}"),
            RecvError::Closed { exit, unterminated } => write!(
                f,
                "output closed after {unterminated} bytes of an unterminated line; the process {exit}"
            ),
            RecvError::Io(e) => write!(f, "reading the process's output failed: {e}"),
        }
    }
}

impl std::error::Error for RecvError {}

/// What the stdout reader thread sends.
enum Event {
    Data(Vec<u8>),
    Eof,
    Error(io::Error),
    /// Sent by an abort handle to wake a waiting reader.
    Wake,
}

/// The process group, shared with abort handles.
struct Group {
    pgid: Pid,
    /// True once the leader is reaped: from then on the group id may be reused and is never
    /// signalled. Held while signalling and while reaping.
    reaped: Mutex<bool>,
    /// True once an abort handle fired.
    killed: AtomicBool,
}

impl Group {
    /// Signals the whole group unless the leader was reaped.
    fn signal(&self, sig: Signal) {
        let reaped = lock(&self.reaped);
        if !*reaped {
            let _ = killpg(self.pgid, sig);
        }
    }

    fn killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }
}

/// A running child process in its own process group, with its stdio piped.
///
/// Dropping it shuts it down with no grace (see [`Child::shutdown`]).
pub struct Child {
    /// `None` once reaped or handed to the background reaper.
    proc: Option<std::process::Child>,
    pid: u32,
    group: Arc<Group>,
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
    wake: SyncSender<Event>,
    /// Received stdout bytes; the unconsumed part starts at `start`.
    buf: Vec<u8>,
    start: usize,
    /// Bytes after `start` known to hold no `\n`.
    scanned: usize,
    /// Skipping the remainder of an over-long line.
    skipping: bool,
    /// Stdout reached its end (or failed).
    eof: bool,
    /// The exit, once reaped.
    exit: Option<ExitInfo>,
}

impl Child {
    /// Starts `opts.command` with `opts.args`, without a shell.
    ///
    /// - A command without `/` is looked up in the absolute entries of `PATH` (this
    ///   process's, which is also the child's; `/usr/local/bin:/usr/bin:/bin` when unset).
    ///   Empty and relative entries are skipped, so nothing is ever found through the
    ///   current directory by accident.
    /// - A command with `/` is a path; when relative and `opts.directory` is set, it is
    ///   relative to that directory, otherwise to the current directory.
    /// - `argv[0]` is the command as configured.
    /// - The working directory is `opts.directory` when set.
    /// - The file must be an executable regular file starting with `\x7fELF` or `#!`.
    /// - The environment is cleared; [`INHERITED_ENV`] is copied from this process where set
    ///   (the only process-environment read in this module), then `env` (child name, value)
    ///   is added, overriding inherited names.
    /// - stdin, stdout and stderr are pipes; stderr is drained and discarded by a thread;
    ///   stdin is non-blocking on this side. The child starts with no signal blocked (see
    ///   "Signal mask" in the module documentation); std resets `SIGPIPE`.
    /// - The child leads a new process group.
    ///
    /// Every error is an operator problem; none carries an environment value.
    pub fn spawn(opts: &StdioOptions, env: &[(String, Secret)]) -> Result<Child, SpawnError> {
        Child::spawn_with_parent_env(opts, env, &|name| std::env::var_os(name))
    }

    /// [`Child::spawn`] with the parent environment read through `parent` (tests).
    fn spawn_with_parent_env(
        opts: &StdioOptions,
        env: &[(String, Secret)],
        parent: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<Child, SpawnError> {
        let (program, directory) = prepare(opts, env, parent)?;
        let mut cmd = Command::new(&program);
        cmd.arg0(&opts.command)
            .args(&opts.args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for name in INHERITED_ENV {
            if let Some(value) = parent(name) {
                cmd.env(name, value);
            }
        }
        for (name, value) in env {
            cmd.env(name, value.expose());
        }
        if let Some(d) = &directory {
            cmd.current_dir(d);
        }
        unblock_signals_in_child(&mut cmd);
        let proc = cmd.spawn().map_err(|e| classify_spawn_error(e, &program))?;
        Child::start(proc)
    }

    /// The checks [`Child::spawn`] makes before starting anything, without starting anything:
    /// the mapped variables can be put in an environment, the working directory is usable,
    /// and the command resolves to an executable of a known format. Returns the file that
    /// would be executed.
    ///
    /// A command that passes can still fail to start (a `#!` interpreter that does not
    /// exist, resource limits, a file changed in between); [`Child::spawn`] reports those.
    pub fn preflight(opts: &StdioOptions, env: &[(String, Secret)]) -> Result<PathBuf, SpawnError> {
        prepare(opts, env, &|name| std::env::var_os(name)).map(|(program, _)| program)
    }

    /// How the child ended, waiting up to `bound` for it to exit (for a child whose input
    /// was found closed). If it exited, the group is swept and the child reaped; otherwise
    /// [`ExitInfo::Running`].
    pub fn exit_within(&mut self, bound: Duration) -> ExitInfo {
        self.collect_exit(bound)
    }

    /// Wires up the threads of a freshly spawned process; kills it if that fails.
    fn start(mut proc: std::process::Child) -> Result<Child, SpawnError> {
        let pid = proc.id();
        let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
        let group = Arc::new(Group {
            pgid,
            reaped: Mutex::new(false),
            killed: AtomicBool::new(false),
        });
        let (tx, events) = sync_channel(CHANNEL_CHUNKS);
        let mut child = Child {
            proc: None,
            pid,
            group,
            stdin: proc.stdin.take(),
            events,
            wake: tx.clone(),
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            skipping: false,
            eof: false,
            exit: None,
        };
        let stdout = proc.stdout.take();
        let stderr = proc.stderr.take();
        child.proc = Some(proc);
        // From here on, dropping `child` kills and reaps the process.
        let (Some(stdin), Some(stdout), Some(stderr)) = (&child.stdin, stdout, stderr) else {
            return Err(SpawnError::Other(io::Error::other("missing pipe")));
        };
        set_nonblocking(stdin).map_err(SpawnError::Other)?;
        spawn_thread("stdio-out", move || read_stdout(stdout, tx)).map_err(SpawnError::Other)?;
        spawn_thread("stdio-err", move || drain(stderr)).map_err(SpawnError::Other)?;
        Ok(child)
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The child's process-group id (equal to its pid).
    pub fn pgid(&self) -> u32 {
        self.pid
    }

    /// Writes `line` followed by `\n` to the child's stdin, giving up at `deadline`.
    ///
    /// Never blocks past `deadline`, whatever the child does. `line` must not contain `\n`.
    /// A child that exited or closed its input gives [`SendError::Closed`].
    pub fn send(&mut self, line: &[u8], deadline: Instant) -> Result<(), SendError> {
        if line.contains(&b'\n') {
            return Err(SendError::EmbeddedNewline);
        }
        if self.group.killed() {
            self.stdin = None;
            return Err(SendError::Closed);
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(SendError::Closed);
        };
        if Instant::now() >= deadline {
            return Err(SendError::Timeout);
        }
        let mut message = Vec::with_capacity(line.len() + 1);
        message.extend_from_slice(line);
        message.push(b'\n');
        let mut written = 0;
        let result = loop {
            if written == message.len() {
                break Ok(());
            }
            match stdin.write(&message[written..]) {
                Ok(0) => break Err(SendError::Closed),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Err(SendError::Closed),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break Err(SendError::Timeout);
                    }
                    if let Err(e) = wait_writable(stdin, left) {
                        break Err(SendError::Io(e));
                    }
                }
                Err(e) => break Err(SendError::Io(e)),
            }
        };
        match &result {
            Ok(()) => {}
            // Nothing written: the stream is still framed.
            Err(SendError::Timeout) if written == 0 => {}
            Err(_) => self.stdin = None,
        }
        result
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
        loop {
            if self.group.killed() || attempt.is_aborted() {
                return Err(if Instant::now() >= attempt.deadline() {
                    RecvError::Timeout
                } else {
                    RecvError::Aborted
                });
            }
            if self.buf.len() > self.start {
                attempt.mark_response();
            }
            if let Some(result) = self.take_line() {
                return result;
            }
            if self.eof {
                let unterminated = self.buf.len() - self.start;
                self.buf = Vec::new();
                self.start = 0;
                self.scanned = 0;
                let exit = self.collect_exit(attempt.remaining().min(EXIT_WAIT));
                return Err(RecvError::Closed { exit, unterminated });
            }
            let left = attempt.remaining();
            if left.is_zero() {
                return Err(RecvError::Timeout);
            }
            match self.events.recv_timeout(left) {
                Ok(Event::Data(bytes)) => {
                    attempt.mark_response();
                    self.append(&bytes);
                }
                Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => self.eof = true,
                Ok(Event::Error(e)) => {
                    self.eof = true;
                    return Err(RecvError::Io(e));
                }
                Ok(Event::Wake) => {}
                Err(RecvTimeoutError::Timeout) => return Err(RecvError::Timeout),
            }
        }
    }

    /// Adds received bytes to the buffer, compacting it first.
    fn append(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// A complete line, an over-long line, or `None` when more bytes are needed.
    fn take_line(&mut self) -> Option<Result<Vec<u8>, RecvError>> {
        loop {
            let pending = &self.buf[self.start..];
            let newline = pending[self.scanned..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| self.scanned + i);
            match newline {
                Some(end) if self.skipping => {
                    self.skipping = false;
                    self.start += end + 1;
                    self.scanned = 0;
                }
                Some(end) => {
                    let line = (end <= MAX_LINE_BYTES).then(|| pending[..end].to_vec());
                    self.start += end + 1;
                    self.scanned = 0;
                    if self.start == self.buf.len() {
                        self.buf.clear();
                        self.start = 0;
                    }
                    return Some(line.ok_or(RecvError::LineTooLong));
                }
                None if self.skipping => {
                    self.buf = Vec::new();
                    self.start = 0;
                    self.scanned = 0;
                    return None;
                }
                None if pending.len() > MAX_LINE_BYTES => {
                    self.skipping = true;
                    self.buf = Vec::new();
                    self.start = 0;
                    self.scanned = 0;
                    return Some(Err(RecvError::LineTooLong));
                }
                None => {
                    self.scanned = pending.len();
                    return None;
                }
            }
        }
    }

    /// A hook that kills the whole process group with `SIGKILL` at once, for
    /// [`Attempt::on_abort`]. It never waits; the next [`Child::recv_line`] returns
    /// [`RecvError::Aborted`] (or `Timeout` past the deadline) and [`Child::send`] returns
    /// [`SendError::Closed`]. Calling it after the child was reaped does nothing.
    pub fn abort_handle(&self) -> impl Fn() + Send + 'static {
        let group = Arc::clone(&self.group);
        let wake = self.wake.clone();
        move || {
            group.killed.store(true, Ordering::SeqCst);
            group.signal(Signal::SIGKILL);
            match wake.try_send(Event::Wake) {
                Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }

    /// Ends the child and its group and returns how the child ended.
    ///
    /// Closes stdin, waits up to `grace` for the child to exit, then sends `SIGTERM` to the
    /// group and waits up to [`TERM_WAIT`], then always sends `SIGKILL` to the group (which
    /// also ends descendants that outlived the leader) and reaps the child, waiting up to
    /// [`KILL_WAIT`]. Total time is at most `grace + TERM_WAIT + KILL_WAIT` plus scheduling.
    /// If the leader is still not reaped then, a background thread reaps it. After an
    /// abort the grace and `SIGTERM` steps are skipped.
    pub fn shutdown(mut self, grace: Duration) -> ExitInfo {
        self.terminate(grace)
    }

    fn terminate(&mut self, grace: Duration) -> ExitInfo {
        self.stdin = None;
        let Some(mut proc) = self.proc.take() else {
            return self.exit.unwrap_or(ExitInfo::Running);
        };
        let pid = self.group.pgid;
        let mut exited = false;
        if !self.group.killed() {
            exited = wait_exit(pid, grace);
            if !exited {
                self.group.signal(Signal::SIGTERM);
                exited = wait_exit(pid, TERM_WAIT);
            }
        }
        self.group.signal(Signal::SIGKILL);
        if !exited {
            exited = wait_exit(pid, KILL_WAIT);
        }
        if exited {
            if let Some(status) = reap(&self.group, &mut proc) {
                let info = ExitInfo::from_status(status);
                self.exit = Some(info);
                return info;
            }
        }
        reap_in_background(Arc::clone(&self.group), proc);
        ExitInfo::Running
    }

    /// After stdout closed: waits up to `bound` for the leader to exit; if it did, sweeps
    /// the group and reaps it.
    fn collect_exit(&mut self, bound: Duration) -> ExitInfo {
        if let Some(info) = self.exit {
            return info;
        }
        let Some(proc) = self.proc.as_mut() else {
            return ExitInfo::Running;
        };
        if !wait_exit(self.group.pgid, bound) {
            return ExitInfo::Running;
        }
        self.group.signal(Signal::SIGKILL);
        match reap(&self.group, proc) {
            Some(status) => {
                let info = ExitInfo::from_status(status);
                self.exit = Some(info);
                self.proc = None;
                info
            }
            None => ExitInfo::Running,
        }
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
            .field("exit", &self.exit)
            .finish_non_exhaustive()
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
fn reap(group: &Group, proc: &mut std::process::Child) -> Option<ExitStatus> {
    let mut reaped = lock(&group.reaped);
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

/// Makes the child start with an empty signal mask instead of the spawning thread's (which
/// has SIGINT and SIGTERM blocked; see "Signal mask" in the module documentation).
fn unblock_signals_in_child(cmd: &mut Command) {
    // Built before the fork: the closure itself only makes the one system call.
    let empty = SigSet::empty();
    #[allow(unsafe_code)]
    // SAFETY: `pre_exec` runs the closure in the forked child before `exec`, where only
    // async-signal-safe operations are allowed. It calls `pthread_sigmask` (through nix, which
    // passes a pointer to the `SigSet` copied into the closure and reads `errno`) and, on
    // failure, builds an `io::Error` from a raw OS error code: no allocation, no lock, no
    // other state shared with the parent's threads.
    unsafe {
        cmd.pre_exec(move || empty.thread_set_mask().map_err(io::Error::from));
    }
}

/// Waits (without a bound) for a leader that survived `SIGKILL` for [`KILL_WAIT`], e.g. in
/// uninterruptible sleep, then reaps it, so no zombie is left behind.
fn reap_in_background(group: Arc<Group>, mut proc: std::process::Child) {
    let spawned = spawn_thread("stdio-reap", move || {
        let exited = || {
            waitid(
                Id::Pid(group.pgid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
            )
        };
        while let Err(Errno::EINTR) = exited() {}
        group.signal(Signal::SIGKILL);
        let _ = reap(&group, &mut proc);
    });
    // Without a thread the leader stays a zombie until this process exits; nothing else
    // can be done without blocking.
    drop(spawned);
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    thread::Builder::new()
        .name(name.into())
        .stack_size(THREAD_STACK)
        .spawn(f)
        .map(drop)
}

/// The stdout reader: forwards chunks until end of file, an error, or the receiver is gone.
fn read_stdout(mut stdout: std::process::ChildStdout, tx: SyncSender<Event>) {
    let mut chunk = vec![0u8; CHUNK_BYTES];
    loop {
        let event = match stdout.read(&mut chunk) {
            Ok(0) => Event::Eof,
            Ok(n) => Event::Data(chunk[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Event::Error(e),
        };
        let last = !matches!(event, Event::Data(_));
        if tx.send(event).is_err() || last {
            return;
        }
    }
}

/// The stderr drain: reads until end of file and discards everything.
fn drain(mut stderr: std::process::ChildStderr) {
    let _ = io::copy(&mut stderr, &mut io::sink());
}

fn set_nonblocking(stdin: &ChildStdin) -> io::Result<()> {
    let flags = fcntl(stdin, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(stdin, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

/// Waits until stdin can take more bytes (or is broken), for at most `left`.
fn wait_writable(stdin: &ChildStdin, left: Duration) -> io::Result<()> {
    use std::os::fd::AsFd;
    // Round up so a sub-millisecond remainder does not spin.
    let ms = left.as_millis().saturating_add(1);
    let timeout = PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX));
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, timeout) {
        Ok(_) | Err(Errno::EINTR) => Ok(()),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// The spawn checks: environment, directory, command. Returns the program and the absolute
/// working directory.
fn prepare(
    opts: &StdioOptions,
    env: &[(String, Secret)],
    parent: &dyn Fn(&str) -> Option<OsString>,
) -> Result<(PathBuf, Option<PathBuf>), SpawnError> {
    for (name, value) in env {
        check_env(name, value)?;
    }
    let directory = match &opts.directory {
        Some(d) => Some(check_directory(d)?),
        None => None,
    };
    let path_var = parent("PATH");
    let program = resolve_command(&opts.command, directory.as_deref(), path_var.as_deref())?;
    Ok((program, directory))
}

fn check_env(name: &str, value: &Secret) -> Result<(), SpawnError> {
    let reason = if name.is_empty() {
        Some("empty name")
    } else if name.contains('=') {
        Some("name contains '='")
    } else if name.contains('\0') {
        Some("name contains a NUL byte")
    } else if value.expose().contains('\0') {
        Some("value contains a NUL byte")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(SpawnError::InvalidEnv {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// The working directory, made absolute, if it is an existing searchable directory.
fn check_directory(directory: &str) -> Result<PathBuf, SpawnError> {
    let bad = |reason: String| SpawnError::BadDirectory {
        directory: directory.to_string(),
        reason,
    };
    if directory.is_empty() {
        return Err(bad("empty path".into()));
    }
    let path = std::path::absolute(directory).map_err(|e| bad(e.to_string()))?;
    let meta = std::fs::metadata(&path).map_err(|e| bad(io_reason(&e)))?;
    if !meta.is_dir() {
        return Err(bad("not a directory".into()));
    }
    access(&path, AccessFlags::X_OK).map_err(|e| bad(format!("not searchable ({})", e.desc())))?;
    Ok(path)
}

/// The file to execute for `command` (see [`Child::spawn`]).
fn resolve_command(
    command: &str,
    directory: Option<&Path>,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, SpawnError> {
    let not_found = || SpawnError::NotFound {
        command: command.to_string(),
    };
    if command.is_empty() {
        return Err(not_found());
    }
    if command.contains('/') {
        let given = Path::new(command);
        let path = match directory {
            Some(d) if given.is_relative() => d.join(given),
            _ => std::path::absolute(given).map_err(|_| not_found())?,
        };
        return match executable(&path) {
            Ok(()) => Ok(path),
            Err(None) => Err(not_found()),
            Err(Some(reason)) => Err(SpawnError::NotExecutable { path, reason }),
        };
    }
    let search = path_var.unwrap_or(std::ffi::OsStr::new(DEFAULT_PATH));
    let mut unusable: Option<(PathBuf, String)> = None;
    for dir in std::env::split_paths(search) {
        if !dir.is_absolute() {
            continue;
        }
        let candidate = dir.join(command);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(None) => {}
            Err(Some(reason)) => {
                if unusable.is_none() {
                    unusable = Some((candidate, reason));
                }
            }
        }
    }
    match unusable {
        Some((path, reason)) => Err(SpawnError::NotExecutable { path, reason }),
        None => Err(not_found()),
    }
}

/// `Ok` for an executable regular file; `Err(None)` when nothing is there; `Err(Some(why))`
/// when something is there that cannot be executed.
fn executable(path: &Path) -> Result<(), Option<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(None),
        Err(e) if e.raw_os_error() == Some(Errno::ENOTDIR as i32) => return Err(None),
        Err(e) => return Err(Some(io_reason(&e))),
    };
    if meta.is_dir() {
        return Err(Some("is a directory".into()));
    }
    if !meta.is_file() {
        return Err(Some("not a regular file".into()));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(Some("no execute permission".into()));
    }
    access(path, AccessFlags::X_OK).map_err(|e| Some(format!("not executable ({})", e.desc())))?;
    if !known_format(path) {
        return Err(Some(NOT_A_FORMAT.into()));
    }
    Ok(())
}

const NOT_A_FORMAT: &str = "not a recognised executable format (neither ELF nor #!)";

/// Whether the file starts like something the kernel executes by itself: an ELF binary or a
/// `#!` script. Anything else would make glibc's `execvp` fall back to `/bin/sh` on
/// `ENOEXEC`, which this layer never allows. A file that cannot be read (execute-only) is
/// left to the kernel to judge.
fn known_format(path: &Path) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return true;
    };
    let mut head = [0u8; 4];
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
    head[..len].starts_with(b"#!") || head[..len] == *b"\x7fELF"
}

fn classify_spawn_error(e: io::Error, program: &Path) -> SpawnError {
    let not_executable = |reason: String| SpawnError::NotExecutable {
        path: program.to_path_buf(),
        reason,
    };
    match e.raw_os_error().map(Errno::from_raw) {
        Some(Errno::ENOEXEC) => not_executable(NOT_A_FORMAT.into()),
        // The file was there a moment ago: its interpreter or loader is missing.
        Some(Errno::ENOENT) => not_executable("its interpreter or loader was not found".into()),
        Some(
            errno @ (Errno::EACCES
            | Errno::EPERM
            | Errno::EISDIR
            | Errno::ETXTBSY
            | Errno::ELOOP
            | Errno::ENOTDIR
            | Errno::ENAMETOOLONG),
        ) => not_executable(errno.desc().to_string()),
        _ => SpawnError::Other(e),
    }
}

/// An I/O error as a short reason, without the "(os error N)" suffix.
fn io_reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => Errno::from_raw(code).desc().to_string(),
        None => e.to_string(),
    }
}

/// Test fixtures shared by this module's tests and the stdio transport's.
#[cfg(test)]
pub(crate) mod fixtures {
    /// A script under `tests/fixtures/stdio/`.
    pub(crate) fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/stdio/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// The real interpreter: `python3` on `PATH` may be a wrapper script (pyenv) that adds
    /// variables of its own to the environment.
    pub(crate) fn python_bin() -> &'static str {
        static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        BIN.get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3");
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{fixture, python_bin};
    use super::*;
    use crate::vocab::{Bound, Deadline};

    fn python(script: &str) -> StdioOptions {
        StdioOptions {
            command: python_bin().into(),
            args: vec![fixture(script)],
            directory: None,
            env: Vec::new(),
        }
    }

    fn soon(ms: u64) -> Attempt {
        Attempt::new(Deadline::new(
            Instant::now() + Duration::from_millis(ms),
            Bound::TimeoutMs,
        ))
    }

    #[test]
    fn only_allowed_and_mapped_variables_reach_the_child() {
        let parent = |name: &str| -> Option<OsString> {
            match name {
                "PATH" => std::env::var_os("PATH"),
                "HOME" => Some("/home/parent".into()),
                "TMPDIR" => Some("/tmp/parent".into()),
                "UNRELATED_MCP_SECRET" | "LANG" | "LOGNAME" => Some("leaked".into()),
                _ => None,
            }
        };
        let env = vec![
            ("CHILD_TOKEN".to_string(), Secret::new("canary-42".into())),
            ("HOME".to_string(), Secret::new("/home/mapped".into())),
        ];
        let mut child =
            Child::spawn_with_parent_env(&python("env.py"), &env, &parent).expect("spawn");
        let line = child.recv_line(&soon(5_000)).expect("environment line");
        let seen: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(&line).expect("json");
        let keys: Vec<&str> = seen.keys().map(String::as_str).collect();
        assert_eq!(keys, ["CHILD_TOKEN", "HOME", "PATH", "TMPDIR"]);
        assert_eq!(seen["CHILD_TOKEN"], "canary-42");
        assert_eq!(seen["HOME"], "/home/mapped");
        assert_eq!(seen["TMPDIR"], "/tmp/parent");
        child.shutdown(Duration::from_millis(500));
    }

    #[test]
    fn an_over_long_line_is_never_buffered_whole() {
        // The child touches the marker only once all 10 MiB are written. Back-pressure
        // (pipe, bounded channel, the 1 MiB line buffer) must keep it from getting there
        // before the limit is reported.
        let marker = std::env::temp_dir().join(format!(
            "agenthealth-long-line-{}-{:?}",
            std::process::id(),
            thread::current().id()
        ));
        let _ = std::fs::remove_file(&marker);
        let env = vec![(
            "MARKER".to_string(),
            Secret::new(marker.to_string_lossy().into_owned()),
        )];
        let mut child = Child::spawn(&python("long_line.py"), &env).expect("spawn");
        let attempt = soon(10_000);
        assert!(matches!(
            child.recv_line(&attempt),
            Err(RecvError::LineTooLong)
        ));
        assert!(
            !marker.exists(),
            "the whole line was consumed before the limit"
        );
        assert!(child.buf.capacity() <= MAX_LINE_BYTES + CHUNK_BYTES);
        // The remaining ~9 MiB are skipped chunk by chunk, then the next line comes through.
        assert_eq!(
            child.recv_line(&attempt).expect("line after"),
            br#"{"after":true}"#
        );
        assert!(marker.exists());
        assert!(child.buf.capacity() <= 2 * CHUNK_BYTES);
        assert_eq!(child.shutdown(Duration::from_secs(1)), ExitInfo::Code(0));
        let _ = std::fs::remove_file(&marker);
    }

    #[test]
    fn framing_splits_joins_and_bounds_lines() {
        let mut child = Child::spawn(&python("silent.py"), &[]).expect("spawn");
        child.append(b"a\nb");
        assert_eq!(child.take_line().and_then(Result::ok), Some(b"a".to_vec()));
        assert!(child.take_line().is_none());
        child.append(b"c\r\n\n");
        assert_eq!(
            child.take_line().and_then(Result::ok),
            Some(b"bc\r".to_vec())
        );
        assert_eq!(child.take_line().and_then(Result::ok), Some(Vec::new()));
        assert!(child.take_line().is_none());
        let mut exact = vec![b'x'; MAX_LINE_BYTES];
        exact.push(b'\n');
        child.append(&exact);
        assert_eq!(
            child.take_line().and_then(Result::ok).map(|l| l.len()),
            Some(MAX_LINE_BYTES)
        );
        let mut over = vec![b'y'; MAX_LINE_BYTES + 1];
        over.extend_from_slice(b"\nnext\n");
        child.append(&over);
        assert!(matches!(
            child.take_line(),
            Some(Err(RecvError::LineTooLong))
        ));
        assert_eq!(
            child.take_line().and_then(Result::ok),
            Some(b"next".to_vec())
        );
        child.append(&vec![b'z'; MAX_LINE_BYTES + 1]);
        assert!(matches!(
            child.take_line(),
            Some(Err(RecvError::LineTooLong))
        ));
        child.append(b"zz");
        assert!(child.take_line().is_none());
        child.append(b"z\nafter\n");
        assert_eq!(
            child.take_line().and_then(Result::ok),
            Some(b"after".to_vec())
        );
    }

    #[test]
    fn exit_info_reads_well() {
        assert_eq!(ExitInfo::Code(2).to_string(), "exited with status 2");
        assert_eq!(
            ExitInfo::Signal(9).to_string(),
            "killed by signal 9 (SIGKILL)"
        );
        let e = SpawnError::InvalidEnv {
            name: "A=B".into(),
            reason: "name contains '='",
        };
        assert!(e.to_string().contains("A=B"));
    }

    #[test]
    fn invalid_env_is_rejected_without_showing_the_value() {
        let env = vec![("BAD".to_string(), Secret::new("canary\0value".into()))];
        let err = Child::spawn(&python("silent.py"), &env).expect_err("must fail");
        assert!(matches!(err, SpawnError::InvalidEnv { .. }));
        assert!(!format!("{err} {err:?}").contains("canary"));
        let env = vec![("A=B".to_string(), Secret::new("x".into()))];
        assert!(matches!(
            Child::spawn(&python("silent.py"), &env),
            Err(SpawnError::InvalidEnv { .. })
        ));
    }
}
