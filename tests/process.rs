//! The child-process layer (`agenthealth::process`) against hostile children.
//!
//! Every test bounds its own time (deadline + 1 s) and ends by checking in `/proc` that no
//! live process of the child's group is left. The children are the scripts in
//! `tests/fixtures/stdio/`. Nothing here sleeps to synchronise: children announce
//! readiness on stdout, and the only waits are bounded polls of an observable condition.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use agenthealth::process::{
    Child, Command, ExitInfo, INHERITED_ENV, KILL_WAIT, MAX_LINE_BYTES, RecvError, SendError,
    SpawnError, TERM_WAIT,
};
use agenthealth::vocab::{Attempt, Bound, Deadline, Secret};

use agenthealth_testkit::fixtures::{fixture, fixtures, python_bin};
use agenthealth_testkit::processes::{MARGIN, assert_group_dead, live_members};

fn python(script: &str, args: &[&str]) -> Command {
    let mut all = vec![fixture(script)];
    all.extend(args.iter().map(|a| a.to_string()));
    Command {
        program: python_bin().into(),
        args: all,
        directory: None,
        env: Vec::new(),
    }
}

fn command(program: &str, directory: Option<&str>) -> Command {
    Command {
        program: program.into(),
        args: Vec::new(),
        directory: directory.map(str::to_string),
        env: Vec::new(),
    }
}

fn attempt(ms: u64) -> (Attempt, Duration) {
    let d = Duration::from_millis(ms);
    (
        Attempt::new(Deadline::new(Instant::now() + d, Bound::TimeoutMs)),
        d,
    )
}

/// A deadline `d` from now (a send's deadline or a shutdown's grace).
fn ends_in(d: Duration) -> Deadline {
    Deadline::after(d, Bound::TimeoutMs)
}

fn spawn(command: &Command) -> Child {
    Child::spawn(command).unwrap_or_else(|e| panic!("spawn {}: {e}", command.program))
}

/// Reports a test's duration (visible with `--nocapture`) and checks it against a bound.
fn within(name: &str, started: Instant, bound: Duration) {
    let took = started.elapsed();
    eprintln!("[process] {name}: {took:?} (bound {bound:?})");
    assert!(took <= bound, "{name} took {took:?}, bound {bound:?}");
}

fn line(child: &mut Child, attempt: &Attempt) -> String {
    match child.recv_line(attempt) {
        Ok(l) => String::from_utf8_lossy(&l).into_owned(),
        Err(e) => panic!("expected a line, got {e:?}"),
    }
}

#[test]
fn a_child_that_exits_at_once_reports_its_status() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let mut child = spawn(&command(&fixture("exit.sh"), None));
    let pgid = child.pgid();
    assert_eq!(child.pid(), pgid);
    match child.recv_line(&a) {
        Err(RecvError::Closed {
            exit: ExitInfo::Code(3),
            unterminated: 0,
        }) => {}
        other => panic!("expected exit status 3, got {other:?}"),
    }
    assert!(!a.response_seen());
    // Its stdin has no reader any more: EPIPE is an error, not a signal that kills us.
    assert!(matches!(
        child.send(b"{}", ends_in(d)),
        Err(SendError::Closed)
    ));
    assert_eq!(
        child.shutdown(ends_in(Duration::from_millis(200))),
        ExitInfo::Code(3)
    );
    assert_group_dead(pgid);
    within("exits at once", started, d + MARGIN);
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
    let dir = crate::util::TempDir::new("stdio-symlink");
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
fn a_child_that_never_writes_times_out_at_the_deadline() {
    let started = Instant::now();
    let (a, d) = attempt(300);
    let mut child = spawn(&python("silent.py", &[]));
    let pgid = child.pgid();
    assert!(matches!(child.recv_line(&a), Err(RecvError::Timeout)));
    assert!(started.elapsed() >= d);
    assert!(!a.response_seen());
    // Closing stdin is enough for this one: it exits by itself within the grace.
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(2))),
        ExitInfo::Code(0)
    );
    assert!(closing.elapsed() < Duration::from_secs(2));
    assert_group_dead(pgid);
    within("never writes", started, d + MARGIN);
}

#[test]
fn a_partial_line_then_silence_times_out_with_a_response_seen() {
    let started = Instant::now();
    let (a, d) = attempt(500);
    let mut child = spawn(&python("partial.py", &[]));
    let pgid = child.pgid();
    assert!(matches!(child.recv_line(&a), Err(RecvError::Timeout)));
    assert!(a.response_seen(), "the `{{` byte counts as a response");
    let grace = Duration::from_millis(100);
    let closing = Instant::now();
    // It does not read stdin, so closing it changes nothing; SIGTERM ends it.
    assert_eq!(
        child.shutdown(ends_in(grace)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGTERM as i32)
    );
    assert!(closing.elapsed() <= grace + TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    within("partial line", started, d + grace + MARGIN);
}

#[test]
fn an_unterminated_ten_mib_line_is_too_long_and_skipped() {
    let started = Instant::now();
    let (a, d) = attempt(10_000);
    let mut child = spawn(&python("long_line.py", &[]));
    let pgid = child.pgid();
    assert!(matches!(child.recv_line(&a), Err(RecvError::LineTooLong)));
    let reported = started.elapsed();
    assert!(a.response_seen());
    // The framing recovers at the next newline.
    assert_eq!(line(&mut child, &a), r#"{"after":true}"#);
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    assert_group_dead(pgid);
    eprintln!("[process] LineTooLong reported after {reported:?}");
    within("10 MiB line", started, d + MARGIN);
}

#[test]
fn lines_up_to_the_limit_pass_and_one_byte_more_does_not() {
    let started = Instant::now();
    let (a, d) = attempt(10_000);
    let deadline = a.ends();
    let mut child = spawn(&python("echo.py", &[]));
    let pgid = child.pgid();
    child.send(b"hello", deadline).expect("send");
    assert_eq!(line(&mut child, &a), "hello");
    child
        .send(format!("big {MAX_LINE_BYTES}").as_bytes(), deadline)
        .expect("send");
    assert_eq!(line(&mut child, &a).len(), MAX_LINE_BYTES);
    child
        .send(format!("big {}", MAX_LINE_BYTES + 1).as_bytes(), deadline)
        .expect("send");
    assert!(matches!(child.recv_line(&a), Err(RecvError::LineTooLong)));
    child.send(b"after", deadline).expect("send");
    assert_eq!(line(&mut child, &a), "after");
    assert!(matches!(
        child.send(b"two\nlines", deadline),
        Err(SendError::EmbeddedNewline)
    ));
    // A large message the child does read goes through whole.
    let big = vec![b'y'; 3 * MAX_LINE_BYTES / 4];
    child.send(&big, deadline).expect("send a large message");
    assert_eq!(line(&mut child, &a).len(), big.len());
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    assert_group_dead(pgid);
    within("line limit", started, d + MARGIN);
}

#[test]
fn a_write_to_a_child_that_never_reads_gives_up_at_the_deadline() {
    let started = Instant::now();
    let (a, d) = attempt(300);
    let mut child = spawn(&python("partial.py", &[]));
    let pgid = child.pgid();
    // Far more than any pipe buffer: the write must stall, and must not outlive the deadline.
    let big = vec![b'z'; 8 * MAX_LINE_BYTES];
    assert!(matches!(
        child.send(&big, a.ends()),
        Err(SendError::Timeout)
    ));
    let took = started.elapsed();
    assert!(took >= d, "returned before the deadline: {took:?}");
    // Part of the message went out, so the stream is no longer framed: input is closed.
    assert!(matches!(
        child.send(b"{}", ends_in(d)),
        Err(SendError::Closed)
    ));
    // A deadline already past gives up at once, without writing.
    let mut fresh = spawn(&python("partial.py", &[]));
    let fresh_pgid = fresh.pgid();
    assert!(matches!(
        fresh.send(&big, ends_in(Duration::ZERO)),
        Err(SendError::Timeout)
    ));
    drop(fresh);
    drop(child);
    assert_group_dead(pgid);
    assert_group_dead(fresh_pgid);
    within("send timeout", started, d + MARGIN);
}

#[test]
fn a_child_that_floods_stderr_never_blocks() {
    let started = Instant::now();
    let (a, d) = attempt(10_000);
    let mut child = spawn(&python("stderr_flood.py", &[]));
    let pgid = child.pgid();
    assert_eq!(line(&mut child, &a), r#"{"ok":true}"#);
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    assert_group_dead(pgid);
    within("stderr flood", started, d + MARGIN);
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
        give.send(spawn(&python("ready.py", &[]))).expect("send");
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

#[test]
fn a_child_that_ignores_sigterm_is_killed_within_the_grace() {
    let started = Instant::now();
    let (a, _) = attempt(5_000);
    let mut child = spawn(&python("ignore_term.py", &[]));
    let pgid = child.pgid();
    assert_eq!(line(&mut child, &a), "ready");
    let grace = Duration::from_millis(200);
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(grace)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGKILL as i32)
    );
    let took = closing.elapsed();
    eprintln!("[process] shutdown of a SIGTERM-ignoring child: {took:?}");
    assert!(took >= grace);
    assert!(took <= grace + TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    within("ignores SIGTERM", started, Duration::from_secs(5) + MARGIN);
}

#[test]
fn a_grandchild_holding_stdout_dies_with_the_group_and_the_reader_sees_eof() {
    let started = Instant::now();
    let mut child = spawn(&python("grandchild.py", &[]));
    let pgid = child.pgid();
    let (a, _) = attempt(5_000);
    let ready = line(&mut child, &a);
    let grandchild: u32 = ready
        .strip_prefix("ready ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("bad ready line {ready:?}"));
    assert!(live_members(pgid).iter().any(|(p, _)| *p == grandchild));
    // The child has exited, but the grandchild keeps stdout open: no end of file.
    let (short, d) = attempt(300);
    assert!(matches!(child.recv_line(&short), Err(RecvError::Timeout)));
    // SIGKILL to the group (what the abort hook sends, here without marking an abort):
    // the grandchild dies, and the reader thread sees end of file.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("killpg");
    let (a, _) = attempt(5_000);
    let eof = Instant::now();
    match child.recv_line(&a) {
        Err(RecvError::Closed {
            exit: ExitInfo::Code(0),
            unterminated: 0,
        }) => {}
        other => panic!("expected end of file after the child's exit 0, got {other:?}"),
    }
    assert!(eof.elapsed() < MARGIN);
    drop(child);
    assert_group_dead(pgid);
    within("grandchild holds stdout", started, d + MARGIN);
}

#[test]
fn shutdown_kills_a_child_and_grandchild_that_both_ignore_sigterm() {
    let started = Instant::now();
    let mut child = spawn(&python("grandchild.py", &["stay"]));
    let pgid = child.pgid();
    let (a, _) = attempt(5_000);
    assert!(line(&mut child, &a).starts_with("ready "));
    // The child, the grandchild and the group's keeper.
    assert_eq!(live_members(pgid).len(), 3);
    let grace = Duration::from_millis(100);
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(grace)),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGKILL as i32)
    );
    assert!(closing.elapsed() <= grace + TERM_WAIT + KILL_WAIT + MARGIN);
    assert_group_dead(pgid);
    within(
        "group ignores SIGTERM",
        started,
        Duration::from_secs(5) + MARGIN,
    );
}

#[test]
fn banner_lines_are_returned_as_they_are() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let mut child = spawn(&python("banner.py", &[]));
    let pgid = child.pgid();
    assert_eq!(line(&mut child, &a), "Starting example server v1.2.3...");
    assert_eq!(
        line(&mut child, &a),
        "\u{1b}[32mlistening on stdio\u{1b}[0m"
    );
    assert_eq!(line(&mut child, &a), "");
    assert_eq!(
        line(&mut child, &a),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(1))),
        ExitInfo::Code(0)
    );
    assert_group_dead(pgid);
    within("banner", started, d + MARGIN);
}

#[test]
fn only_the_allowed_and_mapped_variables_reach_the_child() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let env = vec![
        ("CHILD_TOKEN".to_string(), Secret::new("canary-7".into())),
        ("USER".to_string(), Secret::new("mapped-user".into())),
    ];
    let mut child = Child::spawn(&Command {
        env,
        ..python("env.py", &[])
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
    let fail = |command: Command| -> SpawnError {
        let command = Command {
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
fn an_abort_from_another_thread_ends_a_blocked_read_at_once() {
    let started = Instant::now();
    let (a, d) = attempt(10_000);
    let mut child = spawn(&python("ignore_term.py", &[]));
    let pgid = child.pgid();
    a.on_abort(child.abort_handle());
    assert_eq!(line(&mut child, &a), "ready");
    let watchdog = a.clone();
    let aborter = std::thread::spawn(move || {
        // Not synchronisation: the assertions below hold whether the abort lands before or
        // while recv_line blocks; the pause only makes the blocked case the likely one.
        std::thread::sleep(Duration::from_millis(200));
        let at = Instant::now();
        watchdog.abort();
        at
    });
    let result = child.recv_line(&a);
    let returned = Instant::now();
    let aborted_at = aborter.join().expect("aborter");
    assert!(matches!(result, Err(RecvError::Aborted)), "{result:?}");
    assert!(returned.saturating_duration_since(aborted_at) < MARGIN);
    assert!(returned < a.deadline());
    assert_group_dead(pgid);
    assert!(matches!(
        child.send(b"{}", ends_in(d)),
        Err(SendError::Closed)
    ));
    // After an abort there is no grace to wait for.
    let closing = Instant::now();
    assert_eq!(
        child.shutdown(ends_in(Duration::from_secs(5))),
        ExitInfo::Signal(nix::sys::signal::Signal::SIGKILL as i32)
    );
    assert!(closing.elapsed() <= KILL_WAIT + MARGIN);
    within("abort", started, Duration::from_millis(200) + MARGIN);
}

// The engine's watchdog cutting a child's group (on cancellation and at the deadline) is
// tested through the binary: tests/stdio.rs `sigint_and_sigterm_to_agenthealth_cancel_and_kill_the_group`
// and `a_silent_child_with_a_grandchild_is_unreachable_and_leaves_nothing`.

/// The environment variable that turns [`sigkill_owner`] into the owner process of
/// [`a_sigkilled_owner_leaves_no_process_of_its_childs_group`].
const OWNER: &str = "AH_TEST_SIGKILL_OWNER";

/// Starts a child that, with its grandchild, ignores SIGTERM and its stdin, prints
/// `<pgid> <grandchild>`, and blocks until it is killed. Not a test of its own: run by
/// the test below, in a process of its own (the test binary, filtered to this function).
#[test]
#[ignore = "the owner process of a_sigkilled_owner_leaves_no_process_of_its_childs_group"]
fn sigkill_owner() {
    if std::env::var_os(OWNER).is_none() {
        return;
    }
    let mut child = spawn(&python("grandchild.py", &["stay"]));
    let (a, _) = attempt(5_000);
    let ready = line(&mut child, &a);
    let grandchild = ready.strip_prefix("ready ").unwrap_or("?");
    println!("owner: {} {grandchild}", child.pgid());
    let mut byte = [0u8; 1];
    // Blocks until the test kills this process (or closes our stdin).
    let _ = std::io::Read::read(&mut std::io::stdin(), &mut byte);
}

/// A SIGKILL of the process that owns a [`Child`] runs none of its code: the kernel's
/// parent-death signal ends the child, and the group's keeper ends the rest of the group
/// (here a grandchild that ignores SIGTERM and its stdin), then itself.
#[test]
fn a_sigkilled_owner_leaves_no_process_of_its_childs_group() {
    use std::io::BufRead;
    let started = Instant::now();
    let mut owner = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "process::sigkill_owner",
            "--ignored",
            "--nocapture",
        ])
        .env(OWNER, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("owner");
    // Ends at the owner's line, or at end of file if the owner failed.
    let stdout = owner.stdout.take().expect("stdout");
    let announced = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            let (pgid, grandchild) = l.strip_prefix("owner: ")?.split_once(' ')?;
            Some((pgid.parse::<u32>().ok()?, grandchild.parse::<u32>().ok()?))
        });
    let Some((pgid, grandchild)) = announced else {
        let _ = owner.kill();
        panic!("the owner did not start its child: {:?}", owner.wait());
    };
    let _cleanup = KillGroup(pgid);
    assert!(live_members(pgid).iter().any(|(p, _)| *p == grandchild));
    owner.kill().expect("SIGKILL");
    let _ = owner.wait();
    assert_group_dead(pgid);
    within("sigkilled owner", started, Duration::from_secs(5) + MARGIN);
}

/// Kills, when dropped, every live member of a group this test started, one by one: a
/// failed test leaves nothing running.
struct KillGroup(u32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        for (pid, _) in live_members(self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
