//! What starts and with what: how a command is found, the clean environment, the signal
//! mask, and the commands refused before anything runs.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::super::spawn::INHERITED_ENV;
use super::super::testkit::{fixture, fixtures};
use super::*;
use crate::contract::Secret;

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "agenthealth-process-{}-{tag}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// Writes a file and returns its path.
    fn file(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_mapped_variable_overrides_and_nothing_outside_the_list_is_inherited() {
    let parent = |name: &str| -> Option<OsString> {
        match name {
            "PATH" => std::env::var_os("PATH"),
            "HOME" => Some("/home/parent".into()),
            "TMPDIR" => Some("/tmp/parent".into()),
            "UNRELATED_MCP_SECRET" | "LANG" | "LOGNAME" => Some("leaked".into()),
            _ => None,
        }
    };
    let command = ChildSpec {
        env: vec![
            ("CHILD_TOKEN".to_string(), Secret::new("canary-42".into())),
            ("HOME".to_string(), Secret::new("/home/mapped".into())),
        ],
        ..python("env.py")
    };
    let mut child = Child::spawn_with_parent_env(&command, &parent).expect("spawn");
    let line = child.recv_line(&soon(5_000)).expect("environment line");
    let seen: std::collections::BTreeMap<String, String> =
        serde_json::from_slice(&line).expect("json");
    let keys: Vec<&str> = seen.keys().map(String::as_str).collect();
    assert_eq!(keys, ["CHILD_TOKEN", "HOME", "PATH", "TMPDIR"]);
    assert_eq!(seen["CHILD_TOKEN"], "canary-42");
    assert_eq!(seen["HOME"], "/home/mapped");
    assert_eq!(seen["TMPDIR"], "/tmp/parent");
    child.shutdown(grace(Duration::from_millis(500)));
}

#[test]
fn invalid_env_is_rejected_without_showing_the_value() {
    let command = |name: &str, value: &str| ChildSpec {
        env: vec![(name.to_string(), Secret::new(value.into()))],
        ..python("silent.py")
    };
    let err = Child::spawn(&command("BAD", "canary\0value")).expect_err("must fail");
    assert!(matches!(err, SpawnError::InvalidEnv { .. }));
    assert!(!format!("{err} {err:?}").contains("canary"));
    assert!(matches!(
        Child::spawn(&command("A=B", "x")),
        Err(SpawnError::InvalidEnv { .. })
    ));
}

#[test]
fn preflight_resolves_without_starting_anything() {
    let command = python("silent.py");
    let program = Child::preflight(&command).expect("resolves");
    assert!(program.is_absolute(), "{}", program.display());
    let missing = ChildSpec {
        program: "agenthealth-no-such-command-4711".into(),
        ..ChildSpec::default()
    };
    assert!(matches!(
        Child::preflight(&missing),
        Err(SpawnError::NotFound { .. })
    ));
}

#[test]
fn a_relative_command_with_a_slash_is_resolved_in_the_directory() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let dir = fixtures();
    let mut child = spawn(&command("./exit.sh", Some(&dir)));
    let pgid = child.pgid();
    assert!(matches!(
        child.recv_line(&a),
        Err(RecvError::Closed {
            exit: ExitInfo::Code(3),
            ..
        })
    ));
    drop(child);
    assert_group_dead(pgid);
    within("relative command", started, d + MARGIN);
}

#[test]
fn a_relative_symlink_command_is_resolved_in_the_directory() {
    use std::os::unix::fs::PermissionsExt;
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let dir = TempDir::new("stdio-symlink");
    let real = dir.file("real-server", "#!/bin/sh\nexit 5\n");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::os::unix::fs::symlink("real-server", dir.0.join("server")).expect("symlink");
    let opts = command("./server", dir.0.to_str());
    let mut child = spawn(&opts);
    let pgid = child.pgid();
    assert!(matches!(
        child.recv_line(&a),
        Err(RecvError::Closed {
            exit: ExitInfo::Code(5),
            ..
        })
    ));
    drop(child);
    assert_group_dead(pgid);
    within("symlink command", started, d + MARGIN);
}

#[test]
fn a_bare_name_is_looked_up_on_path() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let mut child = spawn(&command("true", None));
    let pgid = child.pgid();
    assert!(matches!(
        child.recv_line(&a),
        Err(RecvError::Closed {
            exit: ExitInfo::Code(0),
            ..
        })
    ));
    drop(child);
    assert_group_dead(pgid);
    within("PATH lookup", started, d + MARGIN);
}

#[test]
fn the_real_environment_reaches_the_child_only_through_the_list() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let env = vec![
        ("CHILD_TOKEN".to_string(), Secret::new("canary-7".into())),
        ("USER".to_string(), Secret::new("mapped-user".into())),
    ];
    let mut child = Child::spawn(&ChildSpec {
        env,
        ..python("env.py")
    })
    .expect("spawn");
    let pgid = child.pgid();
    let seen: BTreeMap<String, String> =
        serde_json::from_str(&line(&mut child, &a)).expect("a JSON object");
    for key in seen.keys() {
        assert!(
            INHERITED_ENV.contains(&key.as_str()) || key == "CHILD_TOKEN",
            "{key} leaked into the child"
        );
    }
    assert_eq!(seen["CHILD_TOKEN"], "canary-7");
    assert_eq!(seen["USER"], "mapped-user", "a mapped name overrides");
    for name in ["PATH", "HOME", "TMPDIR"] {
        assert_eq!(
            seen.get(name).map(String::as_str),
            std::env::var(name).ok().as_deref(),
            "{name} is inherited as is"
        );
    }
    // Something in this test process's environment is always outside the list (cargo sets
    // CARGO_* for test runs); none of it may appear.
    let outside: Vec<String> = std::env::vars()
        .map(|(k, _)| k)
        .filter(|k| !INHERITED_ENV.contains(&k.as_str()))
        .collect();
    assert!(!outside.is_empty());
    assert!(outside.iter().all(|k| !seen.contains_key(k)));
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    assert_group_dead(pgid);
    within("environment", started, d + MARGIN);
}

#[test]
fn commands_that_cannot_start_are_classified() {
    let started = Instant::now();
    let env = vec![("CHILD_TOKEN".to_string(), Secret::new("canary-9".into()))];
    let fail = |command: ChildSpec| -> SpawnError {
        let command = ChildSpec {
            env: env.clone(),
            ..command
        };
        match Child::spawn(&command) {
            Ok(child) => panic!("{} started (pid {})", command.program, child.pid()),
            Err(e) => {
                let text = format!("{e} {e:?}");
                assert!(!text.contains("canary"), "{text}");
                e
            }
        }
    };
    assert!(matches!(
        fail(command("agenthealth-no-such-command-4711", None)),
        SpawnError::NotFound { .. }
    ));
    assert!(matches!(
        fail(command(&fixture("no-such-file"), None)),
        SpawnError::NotFound { .. }
    ));
    assert!(matches!(
        fail(command(&fixture("not_executable"), None)),
        SpawnError::NotExecutable { .. }
    ));
    assert!(matches!(
        fail(command(&fixtures(), None)),
        SpawnError::NotExecutable { .. }
    ));
    // An executable text file without `#!`: execve says ENOEXEC, and it must not be run
    // through /bin/sh as execvp would.
    match fail(command(&fixture("no_shebang"), None)) {
        SpawnError::NotExecutable { reason, .. } => assert!(reason.contains("format"), "{reason}"),
        other => panic!("expected NotExecutable, got {other:?}"),
    }
    assert!(matches!(
        fail(command("python3", Some("/nonexistent/agenthealth-dir"))),
        SpawnError::BadDirectory { .. }
    ));
    assert!(matches!(
        fail(command("python3", Some(&fixture("exit.sh")))),
        SpawnError::BadDirectory { .. }
    ));
    within("spawn errors", started, MARGIN);
}

#[test]
fn a_child_spawned_with_sigterm_blocked_starts_with_an_empty_mask_and_dies_of_sigterm() {
    // The engine blocks SIGINT/SIGTERM in every thread (src/signals.rs), and std passes the
    // spawning thread's signal mask on to the child. The process layer clears it in the
    // child, so the graceful SIGTERM step of shutdown works.
    let started = Instant::now();
    // The spawning thread lives as long as the child: its end would be the child's parent
    // death (PR_SET_PDEATHSIG follows the thread that forked).
    let (give, take) = std::sync::mpsc::channel();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let spawner = std::thread::spawn(move || {
        let mut set = nix::sys::signal::SigSet::empty();
        set.add(nix::sys::signal::Signal::SIGTERM);
        set.add(nix::sys::signal::Signal::SIGINT);
        set.thread_block().expect("block");
        give.send(spawn(&python("ready.py"))).expect("send");
        let _ = finished.recv();
    });
    let mut child = take.recv().expect("spawning thread");
    let pgid = child.pgid();
    let (a, _) = attempt(5_000);
    assert_eq!(line(&mut child, &a), "ready");
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.pid())).expect("status");
    let mask = |field: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or_else(|| panic!("{field} in /proc/PID/status"))
    };
    let blocked = mask("SigBlk:");
    eprintln!("[process] child SigBlk {blocked:#x}");
    assert_eq!(blocked, 0, "the child must start with no signal blocked");
    let term_bit = 1u64 << (nix::sys::signal::Signal::SIGTERM as u32 - 1);
    assert_eq!(mask("SigIgn:") & term_bit, 0, "SIGTERM is not ignored");
    let closing = Instant::now();
    // ready.py ignores its stdin's end: SIGTERM (not SIGKILL) must be what ends it.
    assert_eq!(
        child.shutdown(ends_in(Duration::ZERO)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGTERM as i32)
    );
    assert!(closing.elapsed() <= TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    let _ = done.send(());
    spawner.join().expect("spawning thread");
    within(
        "signal mask cleared",
        started,
        Duration::from_secs(5) + MARGIN,
    );
}
