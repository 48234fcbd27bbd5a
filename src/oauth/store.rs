//! The token file: where `login` and refreshes keep credentials between runs.
//!
//! One JSON object and a newline: `access_token`, `refresh_token` (when there is one),
//! `expires_at` (RFC 3339, UTC), and the binding — `issuer`, `resource`, `client_id` — plus
//! the granted `scope`: the Go reference's format, so its files keep working. We add
//! `generation` (one more at every write; a file without one is generation 0), which orders
//! a recovered temporary file against the file, and for a client `login --register`
//! registered, `registered: true` with its `token_endpoint_auth_method`, `redirect_uri`,
//! `client_secret` (a confidential one's: this file is the only place it is kept) and
//! `client_secret_expires_at`; keys we do not know are ignored on reading, so later additions
//! keep files readable both ways.
//!
//! * **Reading** refuses a symbolic link, anything but a regular file, a file group or
//!   others may access or another user owns (checked on the opened file), more than 64 KiB,
//!   and a file bound to another issuer, resource or client. A missing file is no token.
//! * **Writing** ([`save`]) never loses a grant: the space for the new file is reserved and
//!   synced before a refresh spends the refresh token, and a replacement that could not be
//!   renamed into place is recovered by the next run. It creates missing parent directories
//!   `0700`, refuses a parent group or others may write and a symbolic link in the file's
//!   place, and never leaves a half-written file.
//! * **Locking**: runs sharing a token file take an exclusive `flock` on a sidecar
//!   `.<name>.lock` across recover → read → refresh → write, so two runs never refresh with
//!   the same refresh token (a rotating server would revoke the grant). Waiting for the lock
//!   is bounded by the attempt's deadline.
//!
//! POSIX only: Windows DACLs are out of scope on the Linux target.

pub(crate) mod save;

pub(crate) use save::{Disk, Os, recover, reserve};

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::fcntl::{Flock, FlockArg, OFlag};
use serde_json::{Map, Value};

use super::OAuthError;
use super::registration::Registered;
use super::token::Token;
use crate::contract::{AuthMethod, Secret};
use crate::result::reason::TokenFileProblem;
use crate::runtime::SecretLog;
use crate::text::rfc3339::{self, Timestamp};

/// Largest token file read, and the space reserved for the next one.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// How often a busy lock is tried again.
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// What a token file is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The configured issuer, exactly.
    pub issuer: String,
    /// The canonical resource URI.
    pub resource: String,
    /// The configured client id; `None`: none is configured, and the file must hold the
    /// client `login --register` registered (its id is then the file's).
    pub client_id: Option<String>,
}

/// Reads the token file at `path`: `Ok(None)` when there is none. Both tokens are recorded in
/// `secrets` as soon as they are read.
pub(crate) fn read(
    path: &Path,
    binding: &Binding,
    secrets: &SecretLog,
) -> Result<Option<Token>, OAuthError> {
    let Some(bytes) = private_bytes(path).map_err(OAuthError::file)? else {
        return Ok(None);
    };
    let (token, _) = parse(&bytes, binding, secrets).map_err(OAuthError::file)?;
    Ok(Some(token))
}

/// Saves `token` to `path`, bound to `binding`: the space reserved, then committed.
#[cfg(test)]
pub(crate) fn write(path: &Path, token: &Token, binding: &Binding) -> Result<(), OAuthError> {
    reserve(&Os, path)?.commit(token, binding)
}

/// The bytes of the private regular file at `path` (`None`: there is none): not a symbolic
/// link, owned by us, no access for group or others, at most 64 KiB — checked on the opened
/// file, so nothing can swap it between the check and the read.
fn private_bytes(path: &Path) -> Result<Option<Vec<u8>>, TokenFileProblem> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(TokenFileProblem::Unreadable),
    };
    if meta.file_type().is_symlink() {
        return Err(TokenFileProblem::Symlink);
    }
    if !meta.is_file() {
        return Err(TokenFileProblem::NotAFile);
    }
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
        .map_err(|_| TokenFileProblem::Unreadable)?;
    let opened = file.metadata().map_err(|_| TokenFileProblem::Unreadable)?;
    if !opened.is_file() {
        return Err(TokenFileProblem::NotAFile);
    }
    if opened.mode() & 0o077 != 0 || opened.uid() != nix::unistd::getuid().as_raw() {
        return Err(TokenFileProblem::Permissions);
    }
    if opened.len() > MAX_FILE_BYTES {
        return Err(TokenFileProblem::Unreadable);
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| TokenFileProblem::Unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(TokenFileProblem::Unreadable);
    }
    Ok(Some(bytes))
}

/// A token file's document: its token and generation, when it has the fields and is bound
/// to `binding`. Its tokens are recorded in `secrets` before anything else is checked.
fn parse(
    bytes: &[u8],
    binding: &Binding,
    secrets: &SecretLog,
) -> Result<(Token, u64), TokenFileProblem> {
    let doc: Map<String, Value> =
        serde_json::from_slice(bytes).map_err(|_| TokenFileProblem::Malformed)?;
    let text = |key: &str| doc.get(key).and_then(Value::as_str);
    for key in ["access_token", "refresh_token"] {
        if let Some(value) = text(key) {
            secrets.record(&Secret::new(value.to_string()));
        }
    }
    if let Some(secret) = text("client_secret") {
        secrets.record(&Secret::new(secret.to_string()));
    }
    let (Some(access), Some(expires_at)) = (
        text("access_token"),
        text("expires_at").and_then(rfc3339::parse),
    ) else {
        return Err(TokenFileProblem::Malformed);
    };
    let registered = registered(&doc)?;
    let client = text("client_id").unwrap_or_default();
    let bound = text("issuer") == Some(binding.issuer.as_str())
        && text("resource") == Some(binding.resource.as_str())
        && match &binding.client_id {
            Some(id) => client == id,
            None => registered.is_some(),
        };
    if !bound {
        return Err(TokenFileProblem::Binding);
    }
    let token = Token {
        access: Secret::new(access.to_string()),
        refresh: text("refresh_token")
            .filter(|t| !t.is_empty())
            .map(|t| Secret::new(t.to_string())),
        expires_at: system_time(expires_at),
        scope: text("scope").unwrap_or_default().to_string(),
        method: None,
        registered,
        // A file without one was issued for its binding's resource (the endpoint's).
        resource: text("token_resource")
            .unwrap_or(&binding.resource)
            .to_string(),
    };
    Ok((token, generation(&doc)))
}

/// The registered client a document holds, when it says `registered: true`: its id, method
/// and redirect URI are required then, and a confidential method's secret.
fn registered(doc: &Map<String, Value>) -> Result<Option<Registered>, TokenFileProblem> {
    if doc.get("registered") != Some(&Value::Bool(true)) {
        return Ok(None);
    }
    let text = |key: &str| doc.get(key).and_then(Value::as_str);
    let malformed = TokenFileProblem::Malformed;
    let method = text("token_endpoint_auth_method")
        .and_then(AuthMethod::parse)
        .ok_or(malformed)?;
    let secret = text("client_secret").map(|s| Secret::new(s.to_string()));
    if method.confidential() && secret.is_none() {
        return Err(malformed);
    }
    Ok(Some(Registered {
        client_id: text("client_id")
            .filter(|c| !c.is_empty())
            .ok_or(malformed)?
            .to_string(),
        secret,
        method,
        secret_expires_at: doc.get("client_secret_expires_at").and_then(Value::as_u64),
        redirect_uri: text("redirect_uri").ok_or(malformed)?.to_string(),
    }))
}

/// The document for `token`, bound to `binding`, as generation `generation`: one JSON object
/// and a newline.
pub(super) fn document(token: &Token, binding: &Binding, generation: u64) -> String {
    let mut doc = Map::new();
    doc.insert("access_token".into(), token.access.expose().into());
    if let Some(refresh) = &token.refresh {
        doc.insert("refresh_token".into(), refresh.expose().into());
    }
    let expires = rfc3339::format(Timestamp::from_system(token.expires_at));
    doc.insert("expires_at".into(), expires.into());
    doc.insert("issuer".into(), binding.issuer.clone().into());
    doc.insert("resource".into(), binding.resource.clone().into());
    let client = match (&binding.client_id, &token.registered) {
        (Some(id), _) => id.clone(),
        (None, Some(r)) => r.client_id.clone(),
        (None, None) => String::new(),
    };
    doc.insert("client_id".into(), client.into());
    doc.insert("scope".into(), token.scope.clone().into());
    doc.insert("generation".into(), generation.into());
    // The resource a refresh must ask for again, when the metadata named another than the
    // endpoint (RFC 9728 root metadata).
    if !token.resource.is_empty() && token.resource != binding.resource {
        doc.insert("token_resource".into(), token.resource.clone().into());
    }
    if let Some(r) = &token.registered {
        doc.insert("registered".into(), true.into());
        doc.insert(
            "token_endpoint_auth_method".into(),
            r.method.as_str().into(),
        );
        doc.insert("redirect_uri".into(), r.redirect_uri.clone().into());
        if let Some(secret) = &r.secret {
            doc.insert("client_secret".into(), secret.expose().into());
        }
        if let Some(at) = r.secret_expires_at {
            doc.insert("client_secret_expires_at".into(), at.into());
        }
    }
    let mut text = Value::Object(doc).to_string();
    text.push('\n');
    text
}

/// A document's `generation` (0 when it has none: the Go reference's files, and ours before).
fn generation(doc: &Map<String, Value>) -> u64 {
    doc.get("generation").and_then(Value::as_u64).unwrap_or(0)
}

/// The generation of the token file at `path`, whatever it is bound to; 0 when it is
/// missing or not ours.
fn generation_of(path: &Path) -> u64 {
    private_bytes(path)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok())
        .map_or(0, |doc| generation(&doc))
}

/// An exclusive lock on the token file at `path`, held until dropped.
pub(crate) struct Lock {
    _held: Flock<File>,
}

/// Takes the token file's lock, waiting at most until `deadline`.
pub(crate) fn lock(path: &Path, deadline: Instant) -> Result<Lock, OAuthError> {
    let bad = OAuthError::file;
    let parent = parent_of(path);
    private_directory(&parent)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "token".into());
    let lock_path = parent.join(format!(".{name}.lock"));
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(&lock_path)
        .map_err(|e| OAuthError::file_os(TokenFileProblem::Unwritable, &e))?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(held) => return Ok(Lock { _held: held }),
            Err((back, nix::errno::Errno::EWOULDBLOCK)) => {
                if Instant::now() + LOCK_RETRY >= deadline {
                    return Err(bad(TokenFileProblem::Locked));
                }
                std::thread::sleep(LOCK_RETRY);
                file = back;
            }
            Err(_) => return Err(bad(TokenFileProblem::Unwritable)),
        }
    }
}

/// The directory holding `path` (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates `dir` (and its parents) `0700` when missing; refuses one group or others may
/// write.
fn private_directory(dir: &Path) -> Result<(), OAuthError> {
    let bad = OAuthError::file;
    if std::fs::symlink_metadata(dir).is_err() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| OAuthError::file_os(TokenFileProblem::Unwritable, &e))?;
    }
    let meta = std::fs::metadata(dir).map_err(|_| bad(TokenFileProblem::Unwritable))?;
    if !meta.is_dir() {
        return Err(bad(TokenFileProblem::Unwritable));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(bad(TokenFileProblem::ParentWritable));
    }
    Ok(())
}

fn system_time(ts: Timestamp) -> SystemTime {
    let base = SystemTime::UNIX_EPOCH;
    let nanos = Duration::from_nanos(u64::from(ts.nanos));
    match u64::try_from(ts.secs) {
        Ok(secs) => base + Duration::from_secs(secs) + nanos,
        Err(_) => base,
    }
}
