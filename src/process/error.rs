//! What the child-process layer reports: why a child could not start, why a write or a read
//! gave up, and how a child ended.
//!
//! Every type here is plain data the MCP stdio transport classifies; none carries an
//! environment value, so an error can be shown without redaction.

use std::fmt;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;

use nix::sys::signal::Signal;

use super::lines::MAX_LINE_BYTES;

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
    /// The exit of a reaped child.
    pub(crate) fn from_status(status: ExitStatus) -> ExitInfo {
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

/// Why [`Child::send`](super::Child::send) failed.
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

/// Why [`Child::recv_line`](super::Child::recv_line) returned no line.
#[derive(Debug)]
pub enum RecvError {
    /// The attempt's deadline passed first.
    Timeout,
    /// The attempt was aborted, or the group killed through
    /// [`Child::abort_handle`](super::Child::abort_handle), before the deadline.
    Aborted,
    /// A line exceeded [`MAX_LINE_BYTES`]. The rest of that line is skipped by later calls,
    /// which return the lines after it.
    LineTooLong,
    /// Stdout reached end of file.
    Closed {
        /// The child's exit, when it could be collected within `EXIT_WAIT` (a short bound
        /// of this layer, cut by the attempt's deadline).
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
