//! Saving refreshed tokens so that no grant is lost: every file system call of a save failed
//! with the errors a full, read-only or failing volume gives (through the store's [`Disk`]
//! seam), and the temporaries a killed run leaves, recovered or removed.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::errno::Errno;

use super::*;
use crate::contract::Status;
use crate::oauth::AuthFacts;
use crate::result::reason::{McpFailure, Reason};
use crate::result::{Evidence, Observation};
use store::Disk;

/// A file system call of a save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create,
    Allocate,
    Write,
    /// The `n`th `fsync` of a file (1: the reservation's, 2: the commit's).
    Sync(usize),
    Rename,
    SyncDir,
}

/// The real file system, with one call failing with `errno`.
struct Faulty {
    op: Op,
    errno: Errno,
    syncs: AtomicUsize,
}

impl Faulty {
    fn new(op: Op, errno: Errno) -> Arc<Faulty> {
        Arc::new(Faulty {
            op,
            errno,
            syncs: AtomicUsize::new(0),
        })
    }

    fn at(&self, op: Op) -> io::Result<()> {
        if op == self.op {
            Err(io::Error::from(self.errno))
        } else {
            Ok(())
        }
    }
}

impl Disk for Faulty {
    fn create(&self, path: &Path) -> io::Result<std::fs::File> {
        self.at(Op::Create)?;
        store::Os.create(path)
    }
    fn allocate(&self, file: &std::fs::File, len: u64) -> io::Result<()> {
        self.at(Op::Allocate)?;
        store::Os.allocate(file, len)
    }
    fn write(&self, file: &std::fs::File, bytes: &[u8]) -> io::Result<()> {
        self.at(Op::Write)?;
        store::Os.write(file, bytes)
    }
    fn sync(&self, file: &std::fs::File) -> io::Result<()> {
        let n = self.syncs.fetch_add(1, Ordering::SeqCst) + 1;
        self.at(Op::Sync(n))?;
        store::Os.sync(file)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.at(Op::Rename)?;
        store::Os.rename(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.at(Op::SyncDir)?;
        store::Os.sync_dir(dir)
    }
}

/// A saved token whose access token is past its use (`expires_in` seconds from now: below
/// five, a refresh is due) and its refresh token, in a fresh directory.
fn saved(fake: &Fake, name: &str, expires_in: i64) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let path = dir.join("token.json");
    store::write(
        &path,
        &token("old-access", Some("refresh-secret-value"), expires_in),
        &binding(fake),
    )
    .expect("write");
    (dir, path)
}

/// One run through `disk`: its answer and what it tells the authentication check.
fn run(fake: &Fake, path: &Path, disk: Arc<dyn Disk>) -> (Result<String, OAuthError>, AuthFacts) {
    let s = public_client(fake, path.to_path_buf());
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new()).with_disk(disk);
    let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
    (r, a.facts().clone())
}

/// The temporaries beside the token file.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(".token.json.agenthealth-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn word(evidence: &Evidence, key: Key) -> Option<&'static str> {
    match evidence.get(key) {
        Some(Fact::Word(w)) => Some(w),
        _ => None,
    }
}

fn saved_refresh(fake: &Fake, path: &Path) -> Option<String> {
    store::read(path, &binding(fake), &SecretLog::new())
        .ok()
        .flatten()
        .and_then(|t| t.refresh.map(|r| r.expose().to_string()))
}

/// When the space for the refreshed token cannot be reserved, the refresh token is not spent
/// (no token request). A full, over-quota or failing volume is this host's fault: UNKNOWN
/// `local_resource=disk`; a read-only or forbidden one is set up wrong: MISCONFIGURED. Either
/// way the file still holds the refresh token, and nothing is left beside it.
#[test]
fn no_refresh_when_its_token_could_not_be_saved() {
    let fake = Fake::start(good);
    for (op, errno, word_, status) in [
        (Op::Allocate, Errno::ENOSPC, "enospc", Status::Unknown),
        (Op::Create, Errno::ENOSPC, "enospc", Status::Unknown),
        (Op::Create, Errno::EDQUOT, "edquot", Status::Unknown),
        (Op::Sync(1), Errno::EIO, "eio", Status::Unknown),
        (Op::SyncDir, Errno::EIO, "eio", Status::Unknown),
        (Op::Create, Errno::EROFS, "erofs", Status::Misconfigured),
        (Op::Create, Errno::EACCES, "eacces", Status::Misconfigured),
    ] {
        let what = format!("{op:?} {errno}");
        let (dir, path) = saved(&fake, "unreserved", -10);
        let before = fake.requests("/token").len();
        let (r, facts) = run(&fake, &path, Faulty::new(op, errno));
        let o: Observation = match &r {
            Err(e) => e.observation(),
            Ok(_) => panic!("{what}: a token without a refresh"),
        };
        assert_eq!(o.status, status, "{what}");
        assert_eq!(word(&o.evidence, Key::Oauth), Some("token_file"), "{what}");
        assert_eq!(
            word(&o.evidence, Key::TokenFile),
            Some("unwritable"),
            "{what}"
        );
        assert_eq!(word(&o.evidence, Key::OsError), Some(word_), "{what}");
        if status == Status::Unknown {
            assert_eq!(
                word(&o.evidence, Key::LocalResource),
                Some("disk"),
                "{what}"
            );
        }
        assert!(facts.degraded.is_none(), "{what}");
        assert_eq!(
            fake.requests("/token").len(),
            before,
            "{what}: nothing spent"
        );
        assert_eq!(
            saved_refresh(&fake, &path).as_deref(),
            Some("refresh-secret-value"),
            "{what}: the grant is intact"
        );
        assert!(
            temporaries(&dir).is_empty(),
            "{what}: {:?}",
            temporaries(&dir)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The same with an access token that still works (for less than the five seconds a refresh
/// waits for): it is used, the check DEGRADED with the reason, nothing spent.
#[test]
fn an_unexpired_token_serves_when_no_refresh_can_be_saved() {
    let fake = Fake::start(good);
    let (dir, path) = saved(&fake, "unreserved-valid", 3);
    let (r, facts) = run(&fake, &path, Faulty::new(Op::Allocate, Errno::ENOSPC));
    assert_eq!(r.as_deref().ok(), Some("Bearer old-access"));
    assert!(fake.requests("/token").is_empty(), "nothing spent");
    assert_eq!(
        facts.degraded,
        Some(Reason::Mcp(McpFailure::OAuth(OAuthStep::TokenFile(
            TokenFileProblem::Unwritable
        ))))
    );
    assert_eq!(word(&facts.evidence, Key::TokenFile), Some("unwritable"));
    assert_eq!(word(&facts.evidence, Key::OsError), Some("enospc"));
    let _ = std::fs::remove_dir_all(&dir);

    // client_credentials spends nothing: a token is fetched, and not saved.
    let dir = scratch("unreserved-cc");
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    s.configured.token_file = Some(dir.join("token.json").display().to_string());
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new())
        .with_disk(Faulty::new(Op::Create, Errno::ENOSPC));
    let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
    assert_eq!(r.as_deref().ok(), Some("Bearer acquired-sensitive-value"));
    assert!(a.facts().degraded.is_some());
    assert!(!dir.join("token.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A refresh whose token could not be put in place (its sync or rename failed) still serves
/// this run (DEGRADED `token_file=unsaved` with the reason) and is never lost: the next run
/// recovers it (`token_file=recovered`) and uses it without a refresh. Only one refresh is
/// ever made, so a rotating server sees no replay.
#[test]
fn a_refreshed_token_that_could_not_be_saved_is_recovered_by_the_next_run() {
    let fake = Fake::start(good);
    for (op, errno, word_) in [
        (Op::Rename, Errno::EIO, "eio"),
        (Op::Sync(2), Errno::ENOSPC, "enospc"),
        (Op::SyncDir, Errno::EIO, "eio"),
    ] {
        let what = format!("{op:?} {errno}");
        // The reservation's directory sync passes; the commit's fails.
        let disk: Arc<dyn Disk> = if op == Op::SyncDir {
            Arc::new(FailSecond(Faulty::new(op, errno)))
        } else {
            Faulty::new(op, errno)
        };
        let (dir, path) = saved(&fake, "unsaved", -10);
        let before = fake.requests("/token").len();
        let (r, facts) = run(&fake, &path, disk);
        assert_eq!(
            r.as_deref().ok(),
            Some("Bearer acquired-sensitive-value"),
            "{what}"
        );
        assert_eq!(
            facts.degraded,
            Some(Reason::Mcp(McpFailure::OAuth(OAuthStep::TokenFile(
                TokenFileProblem::Unsaved
            )))),
            "{what}"
        );
        assert_eq!(word(&facts.evidence, Key::TokenFile), Some("unsaved"));
        assert_eq!(word(&facts.evidence, Key::OsError), Some(word_), "{what}");

        let (r, facts) = run(&fake, &path, Arc::new(store::Os));
        assert_eq!(
            r.as_deref().ok(),
            Some("Bearer acquired-sensitive-value"),
            "{what}: the next run"
        );
        assert_eq!(
            fake.requests("/token").len(),
            before + 1,
            "{what}: one refresh"
        );
        assert_eq!(
            saved_refresh(&fake, &path).as_deref(),
            Some("rotated-sensitive-value"),
            "{what}"
        );
        if op == Op::Rename {
            assert_eq!(word(&facts.evidence, Key::TokenFile), Some("recovered"));
        }
        assert!(facts.degraded.is_none(), "{what}");
        assert!(
            temporaries(&dir).is_empty(),
            "{what}: {:?}",
            temporaries(&dir)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Fails only the second call of its op (the commit's directory sync).
struct FailSecond(Arc<Faulty>);

impl Disk for FailSecond {
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        if self.0.syncs.fetch_add(1, Ordering::SeqCst) == 1 {
            return Err(io::Error::from(self.0.errno));
        }
        store::Os.sync_dir(dir)
    }
}

/// A write that failed left nothing usable beside the file: the temporary is removed, the
/// run uses its token (DEGRADED), the next run refreshes with what the file holds.
#[test]
fn a_write_that_failed_leaves_no_temporary() {
    let fake = Fake::start(good);
    let (dir, path) = saved(&fake, "unwritten", -10);
    let (r, facts) = run(&fake, &path, Faulty::new(Op::Write, Errno::EIO));
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(word(&facts.evidence, Key::TokenFile), Some("unsaved"));
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a killed run may leave beside the token file, and what the next run does with it:
/// only a private, complete, bound and newer temporary is recovered; every other one of this
/// file is removed; another token file's are left alone.
#[test]
fn recovery_takes_only_a_private_complete_bound_newer_temporary() {
    use std::os::unix::fs::PermissionsExt;
    let fake = Fake::start(good);
    let b = binding(&fake);
    let doc = |generation: u64, b: &Binding| {
        store::document(&token("left", Some("left-refresh"), 3600), b, generation)
    };
    let other = Binding {
        client_id: Some("another-client".into()),
        ..b.clone()
    };
    let mut truncated = doc(5, &b);
    truncated.truncate(truncated.len() / 2);
    // A reservation never written (zeros), and one written but not yet truncated.
    let zeros = "\0".repeat(4096);
    let untruncated = format!("{}{zeros}", doc(5, &b));
    for (name, text, mode, recovered) in [
        ("complete", doc(5, &b), 0o600, true),
        ("untruncated", untruncated, 0o600, true),
        ("older", doc(1, &b), 0o600, false),
        ("truncated", truncated, 0o600, false),
        ("foreign", doc(5, &other), 0o600, false),
        ("exposed", doc(5, &b), 0o644, false),
        ("reserved", zeros.clone(), 0o600, false),
    ] {
        let (dir, path) = saved(&fake, "recover", 3600);
        // The file is generation 1 (written once); a temporary of generation 5 is newer.
        let temp = dir.join(".token.json.agenthealth-00112233aabbccdd");
        std::fs::write(&temp, &text).expect("temporary");
        let _ = std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode));
        let neighbour = dir.join(".other.json.agenthealth-00112233aabbccdd");
        std::fs::write(&neighbour, doc(9, &b)).expect("neighbour");
        let secrets = SecretLog::new();
        let got = store::recover(&store::Os, &path, &b, &secrets);
        assert_eq!(got, recovered, "{name}");
        let access = store::read(&path, &b, &secrets)
            .ok()
            .flatten()
            .map(|t| t.access.expose().to_string());
        let want = if recovered { "left" } else { "old-access" };
        assert_eq!(access.as_deref(), Some(want), "{name}");
        assert!(!temp.exists(), "{name}: the temporary is gone");
        assert!(neighbour.exists(), "{name}: another file's temporary stays");
        let _ = std::fs::remove_dir_all(&dir);
    }
    // A symbolic link among the temporaries is removed, never followed.
    let (dir, path) = saved(&fake, "recover-link", 3600);
    let target = dir.join("elsewhere.json");
    std::fs::write(&target, doc(5, &b)).expect("target");
    let _ = std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600));
    let link = dir.join(".token.json.agenthealth-0011223344556677");
    let _ = std::os::unix::fs::symlink(&target, &link);
    assert!(!store::recover(&store::Os, &path, &b, &SecretLog::new()));
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "the link is removed"
    );
    assert!(target.exists(), "what it pointed to is not");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Generations: each save is one more than the file it replaces; a Go reference file without
/// one counts as 0; the document keeps Go's keys.
#[test]
fn every_save_is_the_next_generation() {
    let fake = Fake::start(good);
    let (dir, path) = saved(&fake, "generations", 3600);
    let generation = |p: &Path| -> Option<u64> {
        let text = std::fs::read_to_string(p).ok()?;
        serde_json::from_str::<Value>(&text).ok()?["generation"].as_u64()
    };
    assert_eq!(generation(&path), Some(1));
    store::write(&path, &token("a2", None, 60), &binding(&fake)).expect("write");
    assert_eq!(generation(&path), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
