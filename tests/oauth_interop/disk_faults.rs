//! Token files on a volume that fails, against a real rotating authorization server (the lab's
//! oidc-provider, which takes each refresh token once and revokes the whole grant when a
//! rotated-out one comes back): a full tmpfs in a private mount namespace, `fsync` and
//! `rename` failing or the process killed at them (strace's fault injection on the real
//! binary). Whatever happens, the server counts no replay and the grant stays alive.
//!
//! What a refresh run calls, in order (only the token store calls these): the reservation's
//! `fsync` of its temporary (1) and of the directory (2); after the refresh, the commit's
//! `fsync` (3), `rename`, and the directory's `fsync` (4).
//!
//! The mount namespace needs root and strace must be installed (`.ci/run` installs it); CI
//! runs as root, so with `CI=true` a missing capability fails the test, and elsewhere the
//! test says it was skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::interop::oauth::{AsOptions, AuthServer, NATIVE, ProtectedServer, Rs};
use crate::util::{Outcome, TempDir, bin};
use agenthealth_testkit::oauth_browser::Decision;

use super::harness::*;

/// A logged-in target whose saved access token has expired: its next check refreshes.
struct Expired {
    lab: AuthServer,
    server: ProtectedServer,
    dir: TempDir,
    token_file: PathBuf,
    config: PathBuf,
}

impl Expired {
    /// A fresh grant through `agenthealth login`, then the saved access token expired; the
    /// checks use `checked` as their token file (a copy the test makes), else that file.
    fn login(lab: AuthServer, server: ProtectedServer, checked: Option<&Path>) -> Expired {
        let dir = TempDir::new("oauth-disk");
        let login_file = dir.0.join("login.json");
        let at_login = Target::login(server.url(), lab.issuer(), NATIVE, &login_file);
        let config = write_config(&dir, &[&at_login]);
        login(&config, "lab", &[], Decision::Approve).assert_success(server.url(), "login");
        expire(&login_file);
        let token_file = checked.map_or(login_file, Path::to_path_buf);
        let checking = Target::login(server.url(), lab.issuer(), NATIVE, &token_file);
        let config = write_config(&dir, &[&checking]);
        lab.reset_log();
        Expired {
            lab,
            server,
            dir,
            token_file,
            config,
        }
    }

    fn refreshes(&self) -> usize {
        token_requests(&self.lab, "refresh_token").len()
    }

    /// No replay, no revoked grant, every refresh answered 200.
    fn assert_grant_alive(&self, what: &str) {
        let log = self.lab.log();
        assert_eq!(log.refresh_token_replays(), 0, "{what}: a replay");
        assert_eq!(log.grants_revoked(), 0, "{what}: a revoked grant");
        assert!(log.errors().is_empty(), "{what}: {:?}", log.errors());
    }

    /// The temporaries beside the token file.
    fn temporaries(&self) -> Vec<String> {
        let Some(dir) = self.token_file.parent() else {
            return Vec::new();
        };
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| n.contains(".agenthealth-"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Moves the token file's `expires_at` into the past (the rest kept as written).
fn expire(token_file: &Path) {
    let text = std::fs::read_to_string(token_file).expect("token file");
    let mut doc: Value = serde_json::from_str(&text).expect("token file JSON");
    doc["expires_at"] = Value::from("2020-01-01T00:00:00Z");
    std::fs::write(token_file, format!("{doc}\n")).expect("expire the token file");
}

/// The authentication check of a JSON result, or `Null` when the run printed none.
fn authentication(o: &Outcome) -> Value {
    serde_json::from_str::<Value>(&o.stdout)
        .map_or(Value::Null, |d| d["checks"]["authentication"].clone())
}

/// Whether a capability the test needs is there; without it the test fails under CI and is
/// skipped (saying so) elsewhere.
fn capable(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} (CI runs as root with strace installed: see .ci/run)"
    );
    eprintln!("skipped: {what}");
    false
}

fn strace() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("strace"))
        .find(|p| p.is_file())
}

/// `check CONFIG --format json` under strace injecting `inject` into the token store's
/// `fsync`s and renames.
fn traced(strace: &Path, config: &Path, inject: &str) -> Outcome {
    let started = std::time::Instant::now();
    let mut cmd = Command::new(strace);
    cmd.args(["-f", "-qq", "-o", "/dev/null"])
        .args(["-e", "trace=fsync,rename,renameat,renameat2"])
        .args(["-e", &format!("inject={inject}")])
        .arg(bin())
        .args(["check", &config.to_string_lossy(), "--format", "json"]);
    let out = run_clean(&mut cmd);
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

/// Runs `cmd` with only PATH and HOME from this environment.
fn run_clean(cmd: &mut Command) -> std::process::Output {
    cmd.env_clear().stdin(Stdio::null());
    for key in ["PATH", "HOME"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.output().expect("run")
}

/// One injection and what it must do.
struct Case {
    inject: &'static str,
    /// The first run's authentication status and `token_file` word; `None`: it is killed.
    first: Option<(&'static str, &'static str)>,
    /// Refreshes by the end of the first run.
    refreshed: usize,
    /// Whether the next run recovers a temporary.
    recovers: bool,
}

fn case(
    inject: &'static str,
    first: Option<(&'static str, &'static str)>,
    refreshed: usize,
    recovers: bool,
) -> Case {
    Case {
        inject,
        first,
        refreshed,
        recovers,
    }
}

/// Every rename call (the C library may use any of them).
const RENAME_EIO: &str = "rename,renameat,renameat2:error=EIO:when=1";
const RENAME_KILL: &str = "rename,renameat,renameat2:signal=KILL:when=1";

/// `fsync` or `rename` failing, or the process killed there, during a refresh: the run that
/// cannot prepare the save refreshes nothing; one that refreshed keeps its token (DEGRADED
/// `unsaved`) or is killed; the next run recovers or cleanly reuses what is on disk; the
/// rotating server never sees a replay, and a later refresh works.
#[test]
fn failing_syncs_renames_and_kills_never_lose_the_grant() {
    let Some(strace) = strace() else {
        capable("strace is not installed", false);
        return;
    };
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let mut lab = Some((lab, server));
    let cases = [
        case(
            "fsync:error=ENOSPC:when=1",
            Some(("UNKNOWN", "unwritable")),
            0,
            false,
        ),
        case(
            "fsync:error=ENOSPC:when=3",
            Some(("DEGRADED", "unsaved")),
            1,
            false,
        ),
        case(RENAME_EIO, Some(("DEGRADED", "unsaved")), 1, true),
        case(RENAME_KILL, None, 1, true),
        case("fsync:signal=KILL:when=3", None, 1, true),
        case("fsync:signal=KILL:when=1", None, 0, false),
    ];
    for Case {
        inject,
        first: expected,
        refreshed,
        recovers,
    } in cases
    {
        let (status, word) = expected.unzip();
        let (lab_, server) = lab.take().expect("lab");
        let t = Expired::login(lab_, server, None);
        let what = inject;
        let first = traced(&strace, &t.config, inject);
        let auth = authentication(&first);
        match status {
            Some(status) => {
                assert_eq!(auth["status"], status, "{what}: {}", first.stdout);
                assert_eq!(
                    auth["evidence"]["token_file"],
                    word.unwrap_or_default(),
                    "{what}"
                );
                assert!(auth["evidence"]["os_error"].is_string(), "{what}: {auth}");
            }
            None => assert!(auth.is_null(), "{what}: killed, yet {}", first.stdout),
        }
        if status == Some("UNKNOWN") {
            assert_eq!(auth["evidence"]["local_resource"], "disk", "{what}");
        }
        assert_eq!(
            t.refreshes(),
            refreshed,
            "{what}: refreshes in the first run"
        );
        assert_no_secrets(&first, &t.lab, &[], what);

        let second = check(&t.config, &[]);
        assert_healthy(&second, None, &format!("{what}: the next run"));
        let auth = authentication(&second);
        if recovers {
            assert_eq!(
                auth["evidence"]["token_file"], "recovered",
                "{what}: {auth}"
            );
        }
        assert_eq!(t.refreshes(), 1, "{what}: one refresh in all");
        assert!(t.temporaries().is_empty(), "{what}: {:?}", t.temporaries());
        assert_no_secrets(&second, &t.lab, &[], what);

        // The grant is alive: the token the runs kept refreshes.
        expire(&t.token_file);
        assert_healthy(
            &check(&t.config, &[]),
            None,
            &format!("{what}: a later refresh"),
        );
        assert_eq!(t.refreshes(), 2, "{what}");
        t.assert_grant_alive(what);
        lab = Some((t.lab, t.server));
        drop(t.dir);
    }
}

/// A token file on a full 64 KiB-scale tmpfs (a private mount namespace: invisible outside,
/// gone with it): the run refreshes nothing and says why — UNKNOWN `local_resource=disk`,
/// `token_file=unwritable`, `os_error=enospc` — and once space is freed the next run refreshes
/// with the intact grant; the server sees no replay.
#[test]
fn a_full_token_volume_refreshes_nothing_until_space_is_freed() {
    let root = nix::unistd::geteuid().is_root();
    let unshare = Path::new("/usr/bin/unshare").exists() || Path::new("/bin/unshare").exists();
    if !capable(
        "a private mount namespace needs root and unshare(1)",
        root && unshare,
    ) {
        return;
    }
    let lab = AuthServer::start(AsOptions::default());
    let server = ProtectedServer::start(Rs::Py, lab.issuer());
    let scratch = TempDir::new("oauth-full");
    let volume = scratch.0.join("volume");
    std::fs::create_dir_all(&volume).expect("mount point");
    let t = Expired::login(lab, server, Some(&volume.join("token.json")));
    let source = t.dir.0.join("login.json");
    let full = scratch.0.join("full.json");
    let freed = scratch.0.join("freed.json");
    // 256 KiB: room for the file and a 64 KiB reservation once the filler is gone.
    let script = format!(
        "mount -t tmpfs -o size=256k,mode=0700 tmpfs '{v}' && cp -p '{src}' '{v}/token.json' \
         && {{ dd if=/dev/zero of='{v}/fill' bs=4k 2>/dev/null; true; }} \
         && '{bin}' check '{cfg}' --format json > '{full}'; \
         rm -f '{v}/fill'; '{bin}' check '{cfg}' --format json > '{freed}'",
        v = volume.display(),
        src = source.display(),
        bin = bin().display(),
        cfg = t.config.display(),
        full = full.display(),
        freed = freed.display(),
    );
    let out = run_clean(
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(&script),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let read = |p: &Path| Outcome {
        code: 0,
        stdout: std::fs::read_to_string(p).unwrap_or_default(),
        stderr: stderr.to_string(),
        elapsed: std::time::Duration::ZERO,
    };
    let (full, freed) = (read(&full), read(&freed));
    let auth = authentication(&full);
    assert_eq!(auth["status"], "UNKNOWN", "full: {}\n{stderr}", full.stdout);
    assert_eq!(auth["evidence"]["local_resource"], "disk", "{auth}");
    assert_eq!(auth["evidence"]["oauth"], "token_file", "{auth}");
    assert_eq!(auth["evidence"]["token_file"], "unwritable", "{auth}");
    assert_eq!(auth["evidence"]["os_error"], "enospc", "{auth}");
    let doc: Value = serde_json::from_str(&freed.stdout).unwrap_or_default();
    assert_eq!(
        doc["status"], "HEALTHY",
        "space freed: {}\n{stderr}",
        freed.stdout
    );
    assert_eq!(
        t.refreshes(),
        1,
        "nothing spent on the full volume, one refresh after"
    );
    assert_no_secrets(&full, &t.lab, &[], "full");
    assert_no_secrets(&freed, &t.lab, &[], "freed");
    t.assert_grant_alive("full volume");
}
