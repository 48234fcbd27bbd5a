//! The child API against the fixture scripts: what reaches the child's environment, what
//! is refused before anything starts, and the memory bound on an over-long line.

use std::ffi::OsString;
use std::thread;
use std::time::{Duration, Instant};

use super::lines::CHUNK_BYTES;
use super::testkit::python;
use super::*;
use crate::vocab::{Bound, Secret};

fn soon(ms: u64) -> Attempt {
    Attempt::new(Deadline::new(
        Instant::now() + Duration::from_millis(ms),
        Bound::TimeoutMs,
    ))
}

fn grace(d: Duration) -> Deadline {
    Deadline::after(d, Bound::Cleanup)
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
    let command = Command {
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
    let command = Command {
        env: vec![(
            "MARKER".to_string(),
            Secret::new(marker.to_string_lossy().into_owned()),
        )],
        ..python("long_line.py")
    };
    let mut child = Child::spawn(&command).expect("spawn");
    let attempt = soon(10_000);
    assert!(matches!(
        child.recv_line(&attempt),
        Err(RecvError::LineTooLong)
    ));
    assert!(
        !marker.exists(),
        "the whole line was consumed before the limit"
    );
    assert!(child.output.buffer_capacity() <= MAX_LINE_BYTES + CHUNK_BYTES);
    // The remaining ~9 MiB are skipped chunk by chunk, then the next line comes through.
    assert_eq!(
        child.recv_line(&attempt).expect("line after"),
        br#"{"after":true}"#
    );
    assert!(marker.exists());
    assert!(child.output.buffer_capacity() <= 2 * CHUNK_BYTES);
    assert_eq!(
        child.shutdown(grace(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    let _ = std::fs::remove_file(&marker);
}

#[test]
fn invalid_env_is_rejected_without_showing_the_value() {
    let command = |name: &str, value: &str| Command {
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
    let missing = Command {
        program: "agenthealth-no-such-command-4711".into(),
        ..Command::default()
    };
    assert!(matches!(
        Child::preflight(&missing),
        Err(SpawnError::NotFound { .. })
    ));
}
