//! Line framing and the deadlines of I/O: silence, partial and over-long lines, a child that
//! never reads, a flood on stderr, banners, and an abort from another thread.

use super::super::lines::CHUNK_BYTES;
use super::*;
use crate::contract::Secret;

#[test]
fn an_over_long_line_is_never_buffered_whole() {
    // The child touches the marker only once all 10 MiB are written. Back-pressure
    // (pipe, bounded channel, the 1 MiB line buffer) must keep it from getting there
    // before the limit is reported.
    let marker = std::env::temp_dir().join(format!(
        "agenthealth-long-line-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_file(&marker);
    let command = ChildSpec {
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
fn a_child_that_never_writes_times_out_at_the_deadline() {
    let started = Instant::now();
    let (a, d) = attempt(300);
    let mut child = spawn(&python("silent.py"));
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
    let mut child = spawn(&python("partial.py"));
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
    let mut child = spawn(&python("long_line.py"));
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
    let mut child = spawn(&python("echo.py"));
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
    let mut child = spawn(&python("partial.py"));
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
    let mut fresh = spawn(&python("partial.py"));
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
    let mut child = spawn(&python("stderr_flood.py"));
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
fn banner_lines_are_returned_as_they_are() {
    let started = Instant::now();
    let (a, d) = attempt(5_000);
    let mut child = spawn(&python("banner.py"));
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
fn an_abort_from_another_thread_ends_a_blocked_read_at_once() {
    let started = Instant::now();
    let (a, d) = attempt(10_000);
    let mut child = spawn(&python("ignore_term.py"));
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
