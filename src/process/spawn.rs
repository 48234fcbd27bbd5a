//! Starting a child: what to run (a plain [`ChildSpec`]), how it is found, where it runs and
//! what environment it sees — without a shell, ever.
//!
//! Everything that can be decided before anything starts is decided by [`prepare`], which
//! [`Child::preflight`](super::Child::preflight) also uses, so the offline configuration
//! check and the real start cannot disagree.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::errno::Errno;
use nix::sys::signal::SigSet;
use nix::unistd::{AccessFlags, access};

use super::error::SpawnError;
use crate::contract::Secret;

/// What to start: a program, its arguments, its working directory and the variables mapped
/// into its environment. Plain data, so this layer knows no configuration format; the
/// caller builds it from whatever it was configured with.
#[derive(Clone, Debug, Default)]
pub struct ChildSpec {
    /// The command as configured: a bare name looked up on `PATH`, or a path (see
    /// [`Child::spawn`](super::Child::spawn)). It is also the child's `argv[0]`.
    pub program: String,
    /// The arguments after `argv[0]`, passed as they are (no shell, no expansion).
    pub args: Vec<String>,
    /// The working directory; `None` keeps this process's.
    pub directory: Option<String>,
    /// Variables (child name, value) added to the clean environment, overriding inherited
    /// names.
    pub env: Vec<(String, Secret)>,
}

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

/// Used to look commands up when this process has no `PATH`.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Reads this process's environment: the only process-environment read of this layer.
pub(crate) fn parent_env(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Starts `command` as [`Child::spawn`](super::Child::spawn) describes, with the parent
/// environment read through `parent`; the pipes are left to the caller to wire up.
pub(crate) fn start(
    command: &ChildSpec,
    parent: &dyn Fn(&str) -> Option<OsString>,
) -> Result<std::process::Child, SpawnError> {
    let (program, directory) = prepare(command, parent)?;
    let mut cmd = std::process::Command::new(&program);
    cmd.arg0(&command.program)
        .args(&command.args)
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
    for (name, value) in &command.env {
        cmd.env(name, value.expose());
    }
    if let Some(d) = &directory {
        cmd.current_dir(d);
    }
    prepare_child(&mut cmd);
    cmd.spawn().map_err(|e| classify_spawn_error(e, &program))
}

/// The spawn checks: environment, directory, command. Returns the program and the absolute
/// working directory.
pub(crate) fn prepare(
    command: &ChildSpec,
    parent: &dyn Fn(&str) -> Option<OsString>,
) -> Result<(PathBuf, Option<PathBuf>), SpawnError> {
    for (name, value) in &command.env {
        check_env(name, value)?;
    }
    let directory = match &command.directory {
        Some(d) => Some(check_directory(d)?),
        None => None,
    };
    let path_var = parent("PATH");
    let program = resolve_command(&command.program, directory.as_deref(), path_var.as_deref())?;
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

/// The file to execute for `command` (see [`Child::spawn`](super::Child::spawn)).
fn resolve_command(
    command: &str,
    directory: Option<&Path>,
    path_var: Option<&OsStr>,
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
    let search = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
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

/// What the child does between `fork` and `exec`:
///
/// * it starts with an empty signal mask instead of the spawning thread's (which has the
///   cancelling signals blocked; see "Signal mask" in the [module documentation](super));
/// * it asks the kernel for `SIGKILL` when its parent dies (`PR_SET_PDEATHSIG`), so a
///   `SIGKILL` of this process, which no code of ours survives, still ends the server (the
///   rest of its group is the keeper's, `keeper.rs`). The parent is the spawning thread:
///   the engine closes a stdio target on the worker that started it, before that worker
///   ends. A parent that died before the request took effect is caught by comparing the
///   parent pid with ours, and the child then fails to start.
fn prepare_child(cmd: &mut std::process::Command) {
    // Built before the fork: the closure itself only makes system calls.
    let empty = SigSet::empty();
    let parent = nix::unistd::getpid();
    #[allow(unsafe_code)]
    // SAFETY: `pre_exec` runs the closure in the forked child before `exec`, where only
    // async-signal-safe operations are allowed. It calls `pthread_sigmask`, `prctl` and
    // `getppid` (through nix, which passes a pointer to the `SigSet` copied into the closure
    // and reads `errno`) and, on failure, builds an `io::Error` from a raw OS error code: no
    // allocation, no lock, no other state shared with the parent's threads.
    unsafe {
        cmd.pre_exec(move || {
            empty.thread_set_mask().map_err(io::Error::from)?;
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(io::Error::from)?;
            if nix::unistd::getppid() != parent {
                return Err(io::Error::from_raw_os_error(Errno::ESRCH as i32));
            }
            Ok(())
        });
    }
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
