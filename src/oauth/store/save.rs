//! Saving a token file so that no grant is ever lost, whatever the disk does.
//!
//! A rotating authorization server takes each refresh token once: the refresh that spends it
//! returns the only refresh token that still works, and a file that keeps the spent one makes
//! the next run replay it, which revokes the whole grant. So, under the token file's lock:
//!
//! 1. **[`recover`]** what a run killed after its refresh left: a temporary file beside the
//!    token file (`.<name>.agenthealth-<16 hex>`) that is private (ours, no access for group
//!    or others, no symbolic link), complete (the whole document and its newline), bound to
//!    the same issuer, resource and client, and of a newer generation than the file is
//!    renamed over it; every other temporary of that file is removed. Only lock holders
//!    create these files, and a holder that died released its lock, so none is in use.
//! 2. **[`reserve`]**, before a refresh spends the refresh token: create the temporary
//!    (exclusively, `0600`), allocate the largest file a reader accepts (64 KiB), `fsync` it
//!    and the directory. If the volume is full, read-only or failing, this fails and nothing
//!    is spent.
//! 3. **[`Reservation::commit`]** the new token into the reserved space: one write of the
//!    whole document at offset 0, truncate, `fsync`, rename over the file, `fsync` the
//!    directory. Once the document is written the temporary is never removed: if the sync or
//!    the rename fails, it waits for the next run's recovery. A reservation dropped without a
//!    commit removes its temporary, which holds nothing.
//!
//! The file system calls go through [`Disk`], so tests can fail any of them with any errno.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;

use super::{
    Binding, MAX_FILE_BYTES, OAuthError, SecretLog, Token, TokenFileProblem, document,
    generation_of, parent_of, parse, private_bytes, private_directory,
};

/// The file system calls of a save, each replaceable in tests; the defaults are the real ones.
pub(crate) trait Disk: Send + Sync {
    /// Creates `path` exclusively, `0600`, never through a symbolic link.
    fn create(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(OFlag::O_NOFOLLOW.bits())
            .open(path)
    }

    /// Allocates `len` bytes of `file`, so that writing them later cannot find the volume
    /// full; where the file system cannot allocate, writes them.
    fn allocate(&self, file: &File, len: u64) -> io::Result<()> {
        let size = i64::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        match nix::fcntl::posix_fallocate(file.as_fd(), 0, size) {
            Ok(()) => Ok(()),
            Err(Errno::EOPNOTSUPP | Errno::EINVAL) => {
                let zeros = vec![0u8; usize::try_from(len).unwrap_or(0)];
                file.write_all_at(&zeros, 0)
            }
            Err(errno) => Err(io::Error::from(errno)),
        }
    }

    /// Writes `bytes` as the whole content of `file`: at offset 0, then truncated to them.
    fn write(&self, file: &File, bytes: &[u8]) -> io::Result<()> {
        file.write_all_at(bytes, 0)?;
        file.set_len(bytes.len() as u64)
    }

    /// `fsync`s `file`.
    fn sync(&self, file: &File) -> io::Result<()> {
        file.sync_all()
    }

    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    /// `fsync`s the directory `dir`, which makes a rename in it durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

/// The real file system.
pub(crate) struct Os;

impl Disk for Os {}

/// A temporary file beside the token file, its space allocated and synced: the proof that
/// the refreshed token can be saved, made before the refresh.
pub(crate) struct Reservation<'d> {
    disk: &'d dyn Disk,
    target: PathBuf,
    dir: PathBuf,
    temp: PathBuf,
    file: File,
    /// The temporary holds a token: it is kept, for the next run to recover (or it became
    /// the token file).
    holds_token: bool,
}

/// Reserves the space to save a token to `path` (see the module documentation). Errors
/// from the operating system carry its reason (`os_error`).
pub(crate) fn reserve<'d>(disk: &'d dyn Disk, path: &Path) -> Result<Reservation<'d>, OAuthError> {
    let dir = parent_of(path);
    private_directory(&dir)?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(OAuthError::file(TokenFileProblem::Symlink));
        }
        Ok(meta) if !meta.is_file() => return Err(OAuthError::file(TokenFileProblem::NotAFile)),
        _ => {}
    }
    let (temp, file) = temporary(disk, &dir, path)?;
    let reservation = Reservation {
        disk,
        target: path.to_path_buf(),
        dir,
        temp,
        file,
        holds_token: false,
    };
    let unwritable = |e: io::Error| OAuthError::file_os(TokenFileProblem::Unwritable, &e);
    disk.allocate(&reservation.file, MAX_FILE_BYTES)
        .and_then(|()| disk.sync(&reservation.file))
        .and_then(|()| disk.sync_dir(&reservation.dir))
        .map_err(unwritable)?;
    Ok(reservation)
}

impl Reservation<'_> {
    /// Saves `token`, bound to `binding`, as the token file's next generation.
    ///
    /// An error means the file still holds what it held; the temporary then holds the new
    /// token (unless even writing it failed) and the next run recovers it.
    pub(crate) fn commit(mut self, token: &Token, binding: &Binding) -> Result<(), OAuthError> {
        let unsaved = |e: io::Error| OAuthError::file_os(TokenFileProblem::Unsaved, &e);
        let next = generation_of(&self.target).saturating_add(1);
        let text = document(token, binding, next);
        if text.len() as u64 > MAX_FILE_BYTES {
            // No reader would accept it.
            return Err(OAuthError::file(TokenFileProblem::Unsaved));
        }
        self.disk
            .write(&self.file, text.as_bytes())
            .map_err(unsaved)?;
        self.holds_token = true;
        let synced = self.disk.sync(&self.file);
        // Renamed even when the sync failed: the file holds a spent refresh token, which is
        // worth nothing, and a replayed one revokes the grant.
        let durable = match self.disk.rename(&self.temp, &self.target) {
            Ok(()) => self.disk.sync_dir(&self.dir),
            Err(e) => Err(e),
        };
        synced.and(durable).map_err(unsaved)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.holds_token {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Recovers a newer token a killed run left beside the token file at `path` (see the module
/// documentation) and removes that file's other temporaries; `true` when one was renamed
/// into place. Never touches a token file that is a symbolic link or not a regular file.
pub(crate) fn recover(
    disk: &dyn Disk,
    path: &Path,
    binding: &Binding,
    secrets: &SecretLog,
) -> bool {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return false;
    }
    let dir = parent_of(path);
    let prefix = temporary_prefix(path);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return false;
    };
    let mut best: Option<(u64, usize, PathBuf)> = None;
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .is_some_and(|suffix| {
                suffix.len() == 16 && suffix.bytes().all(|b| b.is_ascii_hexdigit())
            });
        if !ours {
            continue;
        }
        let temp = dir.join(&name);
        match complete(&temp, binding, secrets) {
            Some((generation, len)) if best.as_ref().is_none_or(|(g, ..)| generation > *g) => {
                stale.extend(best.replace((generation, len, temp)).map(|(.., p)| p));
            }
            _ => stale.push(temp),
        }
    }
    let mut recovered = false;
    if let Some((generation, len, temp)) = best {
        if generation <= generation_of(path) {
            stale.push(temp);
        } else if finish(disk, &temp, len)
            .and_then(|()| disk.rename(&temp, path))
            .is_ok()
        {
            let _ = disk.sync_dir(&dir);
            recovered = true;
        }
        // A temporary that could not be put in place is left for a later run.
    }
    for temp in stale {
        let _ = std::fs::remove_file(temp);
    }
    recovered
}

/// The generation and length of the document in the temporary at `temp` when it is
/// private, complete and bound to `binding`. Bytes after the document's final newline may
/// only be the zeros of the reservation (a run killed between writing and truncating).
fn complete(temp: &Path, binding: &Binding, secrets: &SecretLog) -> Option<(u64, usize)> {
    let bytes = private_bytes(temp).ok().flatten()?;
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let whole = bytes.get(..end)?;
    if whole.last() != Some(&b'\n') {
        return None;
    }
    let (_, generation) = parse(whole, binding, secrets).ok()?;
    Some((generation, end))
}

/// Cuts the temporary at `temp` to its document's `len` bytes (the zeros a killed run left
/// after it) and syncs it.
fn finish(disk: &dyn Disk, temp: &Path, len: usize) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(temp)?;
    if file.metadata()?.len() != len as u64 {
        file.set_len(len as u64)?;
        disk.sync(&file)?;
    }
    Ok(())
}

/// `.<name>.agenthealth-`: what the temporaries of the token file at `path` are called before
/// their random part, so that token files sharing a directory never touch each other's.
fn temporary_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "token".into());
    format!(".{name}.agenthealth-")
}

/// A new temporary for the token file at `path`, with an unpredictable name in `dir`.
fn temporary(disk: &dyn Disk, dir: &Path, path: &Path) -> Result<(PathBuf, File), OAuthError> {
    let prefix = temporary_prefix(path);
    for _ in 0..8 {
        let mut name = [0u8; 8];
        super::super::random::random(&mut name)
            .map_err(|_| OAuthError::file(TokenFileProblem::Unwritable))?;
        let suffix: String = name.iter().map(|b| format!("{b:02x}")).collect();
        let temp = dir.join(format!("{prefix}{suffix}"));
        match disk.create(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(OAuthError::file_os(TokenFileProblem::Unwritable, &e)),
        }
    }
    Err(OAuthError::file(TokenFileProblem::Unwritable))
}
