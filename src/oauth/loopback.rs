//! The loopback server behind `login`'s callback: one thread, never blocked by a connection.
//!
//! Browsers open speculative connections and leave them idle; a local process may trickle a
//! request byte by byte. None of that may delay the real callback or the user's Ctrl-C, so
//! the server is one `poll` over the nonblocking listener, a wake-up pipe that cancellation
//! writes to, and at most [`MAX_CONNECTIONS`] connections (one more is accepted and closed at
//! once):
//!
//! * each connection must send its whole request head within [`HEAD_TIME`] of being
//!   accepted — in total, however it is cut — and in at most [`MAX_HEAD`] bytes, else it is
//!   closed (an oversized head is answered 404 first);
//! * each head is judged by the caller ([`Verdict`]) the moment it is complete, and its
//!   answer (a short HTML page) is written without blocking within [`WRITE_TIME`];
//! * the first verdict that ends the wait wins once its page is written (or its time is up);
//!   every other connection is dropped;
//! * cancellation wakes the poll at once: the wait ends within milliseconds whatever the
//!   connections do.
//!
//! What a request means is not decided here (see `authorization_code`): this module only
//! moves bytes within bounds.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::runtime::Cancel;

/// Connections served at once.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// Time a connection has from its accept to the end of its request head.
pub(crate) const HEAD_TIME: Duration = Duration::from_secs(2);
/// Largest request head read.
pub(crate) const MAX_HEAD: usize = 8 * 1024;
/// Time an answer has to be written.
pub(crate) const WRITE_TIME: Duration = Duration::from_secs(1);

/// The page a request is answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Page {
    /// The status line's code and phrase (`400 Bad Request`).
    pub status: &'static str,
    /// The sentence the browser shows.
    pub text: &'static str,
}

/// What a request head means for the wait.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict<T> {
    /// Answer it and keep waiting.
    Wait(Page),
    /// Answer it, and the wait is over with `T`.
    Done(Page, T),
}

/// Why the wait ended without a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The caller cancelled (a signal).
    Cancelled,
    /// Nobody came back within the wait.
    Expired,
    /// The listener or the wake-up pipe failed.
    Failed,
}

/// Serves `listener` until `judge` ends the wait, `wait` passes or `cancel` fires. `judge`
/// gets each complete request head (`None` for one over [`MAX_HEAD`] or not UTF-8).
pub(crate) fn serve<T>(
    listener: &TcpListener,
    wait: Duration,
    cancel: &Cancel,
    judge: &dyn Fn(Option<&str>) -> Verdict<T>,
) -> Result<T, WaitEnd> {
    let deadline = Instant::now() + wait;
    listener
        .set_nonblocking(true)
        .map_err(|_| WaitEnd::Failed)?;
    let (wake, waker) =
        nix::unistd::pipe2(OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).map_err(|_| WaitEnd::Failed)?;
    let waker = Arc::new(waker);
    let _registration = cancel.register(move || {
        let _ = nix::unistd::write(&*waker, &[1]);
    });
    let mut connections: Vec<Connection<T>> = Vec::new();
    loop {
        if cancel.is_cancelled() {
            return Err(WaitEnd::Cancelled);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(WaitEnd::Expired);
        }
        let until = connections
            .iter()
            .map(|c| c.deadline)
            .fold(deadline, Instant::min);
        let mut ready = wait_ready(listener, &wake, &connections, until - now)?;
        if ready.listener {
            accept(listener, &mut connections);
        }
        ready.connections.resize(connections.len(), false);
        let mut kept = Vec::with_capacity(connections.len());
        for (mut c, ready) in connections.drain(..).zip(ready.connections) {
            let mut step = if ready { c.step(judge) } else { Step::Continue };
            if matches!(step, Step::Continue) && c.deadline <= Instant::now() {
                step = c.expire();
            }
            match step {
                Step::Continue => kept.push(c),
                Step::Close => {}
                Step::Done(outcome) => return Ok(outcome),
            }
        }
        connections = kept;
    }
}

/// Which descriptors a poll found ready.
struct Ready {
    listener: bool,
    /// One per connection polled, in order.
    connections: Vec<bool>,
}

/// Polls the listener, the wake-up pipe and every connection (for reading its head, or
/// writing its answer) for at most `bound`.
fn wait_ready<T>(
    listener: &TcpListener,
    wake: &OwnedFd,
    connections: &[Connection<T>],
    bound: Duration,
) -> Result<Ready, WaitEnd> {
    let mut fds = Vec::with_capacity(connections.len() + 2);
    fds.push(PollFd::new(wake.as_fd(), PollFlags::POLLIN));
    fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
    for c in connections {
        let wanted = match c.phase {
            Phase::Reading(_) => PollFlags::POLLIN,
            Phase::Writing { .. } => PollFlags::POLLOUT,
        };
        fds.push(PollFd::new(c.stream.as_fd(), wanted));
    }
    // Rounded up, so the loop never spins on a deadline less than a millisecond away.
    let ms = bound.as_micros().div_ceil(1000).min(60_000);
    let timeout = PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX));
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(_) => return Err(WaitEnd::Failed),
    }
    let fired = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
    if fds.first().is_some_and(fired) {
        // Only cancellation writes to the pipe; the loop sees the flag next.
        return Ok(Ready {
            listener: false,
            connections: vec![false; connections.len()],
        });
    }
    Ok(Ready {
        listener: fds.get(1).is_some_and(fired),
        connections: fds.iter().skip(2).map(fired).collect(),
    })
}

/// Accepts every pending connection: up to [`MAX_CONNECTIONS`] are served, the others
/// closed at once.
fn accept<T>(listener: &TcpListener, connections: &mut Vec<Connection<T>>) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if connections.len() >= MAX_CONNECTIONS || stream.set_nonblocking(true).is_err() {
                    drop(stream);
                    continue;
                }
                connections.push(Connection {
                    stream,
                    phase: Phase::Reading(Vec::with_capacity(1024)),
                    deadline: Instant::now() + HEAD_TIME,
                });
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // WouldBlock: none left; anything else (a connection reset before its accept,
            // descriptors out): try again at the next poll.
            Err(_) => return,
        }
    }
}

/// One connection: reading its head, then writing its answer.
struct Connection<T> {
    stream: TcpStream,
    phase: Phase<T>,
    /// When this phase must be over.
    deadline: Instant,
}

enum Phase<T> {
    /// The head so far.
    Reading(Vec<u8>),
    /// The answer, how much of it went, and the verdict's outcome if it ends the wait.
    Writing {
        bytes: Vec<u8>,
        sent: usize,
        outcome: Option<T>,
    },
}

/// What to do with a connection after it was served.
enum Step<T> {
    Continue,
    Close,
    Done(T),
}

impl<T> Connection<T> {
    /// Reads or writes what is ready without blocking.
    fn step(&mut self, judge: &dyn Fn(Option<&str>) -> Verdict<T>) -> Step<T> {
        match &mut self.phase {
            Phase::Reading(head) => {
                let mut buf = [0u8; 1024];
                match self.stream.read(&mut buf) {
                    Ok(0) => Step::Close,
                    Ok(n) => {
                        head.extend_from_slice(buf.get(..n).unwrap_or_default());
                        let complete = head.windows(4).any(|w| w == b"\r\n\r\n");
                        if complete || head.len() > MAX_HEAD {
                            let text = std::str::from_utf8(head)
                                .ok()
                                .filter(|_| head.len() <= MAX_HEAD);
                            let verdict = judge(text);
                            self.answer(verdict)
                        } else {
                            Step::Continue
                        }
                    }
                    Err(e)
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) =>
                    {
                        Step::Continue
                    }
                    Err(_) => Step::Close,
                }
            }
            Phase::Writing { .. } => self.write(),
        }
    }

    /// Starts writing the answer `verdict` calls for.
    fn answer(&mut self, verdict: Verdict<T>) -> Step<T> {
        let (page, outcome) = match verdict {
            Verdict::Wait(page) => (page, None),
            Verdict::Done(page, outcome) => (page, Some(outcome)),
        };
        self.phase = Phase::Writing {
            bytes: response(page).into_bytes(),
            sent: 0,
            outcome,
        };
        self.deadline = Instant::now() + WRITE_TIME;
        self.write()
    }

    /// Writes what the socket takes of the answer; once it is all out, closes.
    fn write(&mut self) -> Step<T> {
        let Phase::Writing { bytes, sent, .. } = &mut self.phase else {
            return Step::Continue;
        };
        loop {
            match self.stream.write(bytes.get(*sent..).unwrap_or_default()) {
                Ok(0) => return self.finish(),
                Ok(n) => {
                    *sent += n;
                    if *sent >= bytes.len() {
                        let _ = self.stream.shutdown(Shutdown::Both);
                        return self.finish();
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Continue,
                Err(_) => return self.finish(),
            }
        }
    }

    /// The phase's time is up: a head never completed is closed; an answer not written in
    /// time is abandoned (its verdict still counts).
    fn expire(&mut self) -> Step<T> {
        match self.phase {
            Phase::Reading(_) => Step::Close,
            Phase::Writing { .. } => self.finish(),
        }
    }

    /// The connection is done: its verdict's outcome, if it ends the wait.
    fn finish(&mut self) -> Step<T> {
        match std::mem::replace(&mut self.phase, Phase::Reading(Vec::new())) {
            Phase::Writing {
                outcome: Some(outcome),
                ..
            } => Step::Done(outcome),
            _ => Step::Close,
        }
    }
}

/// The HTTP response carrying `page`: under 512 bytes, so a fresh socket always takes it.
fn response(page: Page) -> String {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>agenthealth</title><p>{}</p>\n",
        page.text
    );
    format!(
        "HTTP/1.1 {}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        page.status,
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(10);

    /// `GET /done` ends the wait with its path; anything else is answered 404.
    fn judge(head: Option<&str>) -> Verdict<String> {
        let not_found = Page {
            status: "404 Not Found",
            text: "Not found.",
        };
        match head {
            Some(h) if h.starts_with("GET /done ") => Verdict::Done(
                Page {
                    status: "200 OK",
                    text: "Done.",
                },
                "done".into(),
            ),
            _ => Verdict::Wait(not_found),
        }
    }

    /// A server on an ephemeral port in a thread, with its cancellation.
    fn start(
        wait: Duration,
    ) -> (
        u16,
        Cancel,
        std::thread::JoinHandle<Result<String, WaitEnd>>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let cancel = Cancel::new();
        let serving = cancel.clone();
        let handle = std::thread::spawn(move || serve(&listener, wait, &serving, &judge));
        (port, cancel, handle)
    }

    fn connect(port: u16) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let _ = s.set_read_timeout(Some(LONG));
        s
    }

    /// Sends `GET path` and reads the whole answer.
    fn get(port: u16, path: &str) -> String {
        let mut s = connect(port);
        let _ = write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text
    }

    /// Eight idle connections and one trickling its head do not delay the callback: it is
    /// answered, with its whole page, at once; the trickle is closed within its 2 s.
    #[test]
    fn idle_and_trickling_connections_never_delay_the_callback() {
        let (port, _cancel, server) = start(LONG);
        let idle: Vec<TcpStream> = (0..8).map(|_| connect(port)).collect();
        let mut trickle = connect(port);
        let _ = trickle.write_all(b"GET /x HTTP/1.1\r\n");
        // An oversized head is answered 404.
        let big = get(port, &format!("/{}", "x".repeat(MAX_HEAD)));
        assert!(big.starts_with("HTTP/1.1 404 "), "{big}");
        assert!(get(port, "/other").starts_with("HTTP/1.1 404 "));
        let started = Instant::now();
        let answer = get(port, "/done");
        let took = started.elapsed();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("<p>Done.</p>\n"), "{answer}");
        assert!(
            took < Duration::from_secs(1) + Duration::from_secs(1),
            "{took:?}"
        );
        assert_eq!(server.join().ok(), Some(Ok("done".into())));
        drop(idle);
        // The server is gone: the trickle's connection was closed.
        let mut rest = Vec::new();
        let _ = trickle.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{rest:?}");
    }

    /// A head that does not complete within 2 s of its accept is cut, however it trickles.
    #[test]
    fn a_trickling_head_is_cut_two_seconds_after_its_accept() {
        let (port, cancel, server) = start(LONG);
        let mut trickle = connect(port);
        let started = Instant::now();
        let _ = trickle.write_all(b"GET /done HTTP/1.1\r\n");
        let mut rest = Vec::new();
        // Every byte it may still send changes nothing: the read ends when it is closed.
        let _ = trickle.write_all(b"Host: x\r\n");
        let _ = trickle.read_to_end(&mut rest);
        let took = started.elapsed();
        assert!(rest.is_empty(), "never answered: {rest:?}");
        assert!(
            took >= HEAD_TIME.saturating_sub(Duration::from_millis(50)),
            "{took:?}"
        );
        assert!(took < HEAD_TIME + Duration::from_secs(1), "{took:?}");
        cancel.cancel();
        assert_eq!(server.join().ok(), Some(Err(WaitEnd::Cancelled)));
    }

    /// Beyond 16 connections, the next one is closed at once — while the 16 are still held.
    #[test]
    fn a_seventeenth_connection_is_closed_at_once() {
        let (port, cancel, server) = start(LONG);
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| connect(port)).collect();
        let mut extra = connect(port);
        let mut buf = [0u8; 16];
        assert_eq!(
            extra.read(&mut buf).ok(),
            Some(0),
            "closed without an answer"
        );
        // The first of the sixteen is still open (its read would block).
        let first = held.first().expect("held");
        let _ = first.set_nonblocking(true);
        let peeked = first.peek(&mut buf);
        assert!(
            peeked.is_err_and(|e| e.kind() == ErrorKind::WouldBlock),
            "the held connections are served"
        );
        cancel.cancel();
        assert_eq!(server.join().ok(), Some(Err(WaitEnd::Cancelled)));
    }

    /// Cancellation ends the wait at once, whatever the connections do; the wait's end
    /// ends it too.
    #[test]
    fn cancellation_ends_the_wait_at_once() {
        let (port, cancel, server) = start(LONG);
        let _idle: Vec<TcpStream> = (0..4).map(|_| connect(port)).collect();
        let mut trickle = connect(port);
        let _ = trickle.write_all(b"GET");
        // The server has accepted them all once it answers a request after them.
        assert!(get(port, "/other").starts_with("HTTP/1.1 404 "));
        let started = Instant::now();
        cancel.cancel();
        assert_eq!(server.join().ok(), Some(Err(WaitEnd::Cancelled)));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        let (_, _, server) = start(Duration::from_millis(200));
        assert_eq!(server.join().ok(), Some(Err(WaitEnd::Expired)));
    }
}
