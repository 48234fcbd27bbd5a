//! The small HTTP/1.1 server under `serve`: one thread, non-blocking sockets and `poll`.
//!
//! A health endpoint must answer its own liveness probe whatever other clients do, so every
//! resource a client can hold is bounded ([`Limits`]):
//!
//! * at most `connections` open connections; a new one beyond that closes another: the
//!   longest idle, else the oldest still sending its head, else the oldest (one waiting for
//!   a later answer last), so connecting is always enough to be served;
//! * a request head of at most `head_bytes` (431 beyond), which must arrive within
//!   `head_time` of its first byte (of connecting, for the first request) however slowly it
//!   trickles, and a response that must be taken within `write_time`;
//! * connections persist (HTTP/1.1): after a response the connection waits up to
//!   `idle_time` for the next request, and carries at most `requests` of them. It closes
//!   after a response when the client asked (`Connection: close`, HTTP/1.0), when the request
//!   had a body (bodies are never read: where the next request would start is unknown), after
//!   a refused head, and at the request limit; that response says `Connection: close`, and
//!   the socket's write side is shut down before a short drain of whatever the client still
//!   sends (closing with unread bytes would reset the connection and could destroy the
//!   response in flight). Requests sent back to back (pipelined) are answered in order.
//!
//! A handler answers at once, or later ([`Handled::Later`]): the connection then waits for
//! its answer (at most `wait_time`), and the service wakes the loop through its `done`
//! socket when answers are ready ([`Service::take_done`]). A client that hangs up meanwhile
//! is told to the service ([`Service::abandoned`]). So long work (a `/probe` run) happens on
//! the service's threads and this thread still only moves bytes: there is no worker pool to
//! exhaust. Shutting down is a byte on the `wake` socket (the caller's cancellation writes
//! it), which ends [`serve`] at once.

mod request_head;

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

pub use request_head::{Arrival, HeadBuf, HeadError, RequestHead, parse_head};

/// What one client can hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open connections at most.
    pub connections: usize,
    /// Bytes of a request head at most.
    pub head_bytes: usize,
    /// From a head's first byte (from connecting, for the first) to its end.
    pub head_time: Duration,
    /// From a response to the next request's first byte.
    pub idle_time: Duration,
    /// Requests one connection carries at most.
    pub requests: usize,
    /// From a request to its later answer at most.
    pub wait_time: Duration,
    /// From the response to the client having taken it.
    pub write_time: Duration,
    /// After the last response, how long the rest of a request is read and discarded.
    pub drain_time: Duration,
}

/// The limits `serve` runs with: the Go reference's header size and timeouts; an idle time
/// above a 60 s scrape interval, so a scraper keeps its connection between scrapes; a wait
/// above the longest run (60 s) and its cleanup.
pub const LIMITS: Limits = Limits {
    connections: 256,
    head_bytes: 8 * 1024,
    head_time: Duration::from_secs(5),
    idle_time: Duration::from_secs(90),
    requests: 1000,
    wait_time: Duration::from_secs(65),
    write_time: Duration::from_secs(5),
    drain_time: Duration::from_secs(1),
};

/// The reply to one request: status, headers, body. `Content-Length` (and `Connection:
/// close` when the connection closes) are added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Header lines, in order.
    pub headers: Vec<(&'static str, String)>,
    /// The body (shared: a snapshot's large bodies are not copied per request).
    pub body: Arc<str>,
}

impl Answer {
    /// The status line, headers and blank line.
    fn head(&self, closing: bool) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        if closing {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Names a request whose answer comes later.
pub type RequestId = u64;

/// What a handler makes of a request.
#[derive(Debug)]
pub enum Handled {
    /// The answer, now.
    Now(Answer),
    /// The answer comes through [`Service::take_done`] under this request's ticket.
    Later,
}

/// What the server serves.
pub trait Service {
    /// Answers `request`, now or later under `ticket`.
    fn handle(&self, request: &RequestHead, ticket: RequestId) -> Handled;
    /// The answer to a head that could not be parsed.
    fn refuse(&self, e: HeadError) -> Answer;
    /// Readable when later answers are ready (`None`: there are none).
    fn done(&self) -> Option<&UnixStream> {
        None
    }
    /// The later answers ready now; clears the `done` socket's readiness.
    fn take_done(&self) -> Vec<(RequestId, Answer)> {
        Vec::new()
    }
    /// The client of `ticket` hung up before its answer.
    fn abandoned(&self, ticket: RequestId) {
        let _ = ticket;
    }
}

/// Serves connections from `listener` with `service` until a byte arrives on `wake`. Returns
/// an error only when polling itself fails; a client's misbehaviour only ever closes that
/// client's connection.
pub fn serve(
    listener: &TcpListener,
    limits: &Limits,
    wake: &UnixStream,
    service: &dyn Service,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    wake.set_nonblocking(true)?;
    let mut server = Server {
        limits,
        service,
        conns: Vec::new(),
        tickets: 0,
    };
    // Set when accepting failed with no connection of ours left to close (no descriptor
    // left in the process): the listener is not polled until then, instead of spinning.
    let mut paused_until: Option<Instant> = None;
    loop {
        let now = Instant::now();
        server.expire(now);
        paused_until = paused_until.filter(|t| *t > now);
        let timeout = server
            .conns
            .iter()
            .map(|c| c.deadline)
            .chain(paused_until)
            .map(|t| t.saturating_duration_since(now))
            .min()
            .map(|d| {
                // Round up: waking a millisecond early would only spin.
                let ms = d.as_millis().saturating_add(1);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            })
            .unwrap_or(PollTimeout::NONE);
        let ready = match server.poll(wake, listener, paused_until.is_some(), timeout) {
            Ok(ready) => ready,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(io::Error::from(e)),
        };
        if ready.wake {
            return Ok(());
        }
        // Connections first: the new ones below are not in `ready`.
        server.advance_ready(&ready.conns);
        if ready.done {
            server.deliver();
        }
        if ready.listener && !server.accept(listener) {
            paused_until = Some(Instant::now() + ACCEPT_PAUSE);
        }
    }
}

/// How long the listener rests when no connection can be taken at all.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// What one round of polling found.
struct Ready {
    wake: bool,
    listener: bool,
    done: bool,
    /// Per connection: readiness, and whether it failed (error, invalid).
    conns: Vec<(bool, bool)>,
}

struct Server<'a> {
    limits: &'a Limits,
    service: &'a dyn Service,
    conns: Vec<Conn>,
    tickets: RequestId,
}

impl Server<'_> {
    fn poll(
        &self,
        wake: &UnixStream,
        listener: &TcpListener,
        paused: bool,
        timeout: PollTimeout,
    ) -> Result<Ready, Errno> {
        let done = self.service.done();
        let mut fds = Vec::with_capacity(self.conns.len() + 3);
        fds.push(PollFd::new(wake.as_fd(), PollFlags::POLLIN));
        let listening = if paused {
            PollFlags::empty()
        } else {
            PollFlags::POLLIN
        };
        fds.push(PollFd::new(listener.as_fd(), listening));
        if let Some(done) = done {
            fds.push(PollFd::new(done.as_fd(), PollFlags::POLLIN));
        }
        for c in &self.conns {
            fds.push(PollFd::new(c.stream.as_fd(), c.interest()));
        }
        poll(&mut fds, timeout)?;
        // Readiness and failure (error, invalid) per descriptor. nix reports flags it has no
        // name for (POLLRDHUP) as no flags at all: readiness, then.
        let flags: Vec<(bool, bool)> = fds
            .iter()
            .map(|f| match f.revents() {
                Some(r) => (
                    !r.is_empty(),
                    r.intersects(PollFlags::POLLERR | PollFlags::POLLNVAL),
                ),
                None => (true, false),
            })
            .collect();
        let first = if done.is_some() { 3 } else { 2 };
        Ok(Ready {
            wake: flags[0].0,
            listener: flags[1].0,
            done: done.is_some() && flags[2].0,
            conns: flags[first..].to_vec(),
        })
    }

    /// Closes the connections whose time is up.
    fn expire(&mut self, now: Instant) {
        let service = self.service;
        self.conns.retain(|c| {
            let alive = c.deadline > now;
            if !alive {
                c.abandon(service);
            }
            alive
        });
    }

    /// Moves every connection polling found ready.
    fn advance_ready(&mut self, ready: &[(bool, bool)]) {
        let mut i = self.conns.len().min(ready.len());
        while i > 0 {
            i -= 1;
            let (is_ready, failed) = ready[i];
            if !is_ready {
                continue;
            }
            // Waiting connections are polled only for a hang-up.
            let keep = !failed
                && !matches!(self.conns[i].phase, Phase::Waiting(_))
                && self.conns[i].advance(self.limits, self.service, &mut self.tickets);
            if !keep {
                self.conns.swap_remove(i).abandon(self.service);
            }
        }
    }

    /// Hands the later answers to their connections (an answer whose client left is dropped).
    fn deliver(&mut self) {
        for (ticket, answer) in self.service.take_done() {
            let Some(i) = self
                .conns
                .iter()
                .position(|c| matches!(c.phase, Phase::Waiting(t) if t.ticket == ticket))
            else {
                continue;
            };
            let Phase::Waiting(waiting) = self.conns[i].phase else {
                continue;
            };
            self.conns[i].respond(&answer, waiting.closing, self.limits);
            if !self.conns[i].advance(self.limits, self.service, &mut self.tickets) {
                self.conns.swap_remove(i);
            }
        }
    }

    /// Takes every pending connection, closing others to stay within the limit. False when
    /// accepting fails for want of a resource that closing our own connections cannot free
    /// (the caller then rests the listener briefly).
    fn accept(&mut self, listener: &TcpListener) -> bool {
        loop {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::ConnectionAborted => continue,
                // Out of descriptors or memory: free a descriptor by closing a connection and
                // try again; with none left to close, rest.
                Err(_) => match self.evictable() {
                    Some(i) => {
                        self.conns.swap_remove(i).abandon(self.service);
                        continue;
                    }
                    None => return false,
                },
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let _ = stream.set_nodelay(true);
            if self.conns.len() >= self.limits.connections.max(1) {
                if let Some(i) = self.evictable() {
                    self.conns.swap_remove(i).abandon(self.service);
                }
            }
            let now = Instant::now();
            let mut conn = Conn {
                stream,
                last: now,
                deadline: now + self.limits.head_time,
                served: 0,
                buf: HeadBuf::default(),
                phase: Phase::Head,
            };
            // The request is often there already: answer without another round of polling.
            if conn.advance(self.limits, self.service, &mut self.tickets) {
                self.conns.push(conn);
            }
        }
    }

    /// The connection to close for a new one: the longest idle, else the oldest still
    /// sending its head, else the oldest writing or draining, else the oldest waiting.
    fn evictable(&self) -> Option<usize> {
        (0..self.conns.len()).min_by_key(|&i| {
            let c = &self.conns[i];
            let rank = match c.phase {
                Phase::Head if c.buf.is_empty() => 0,
                Phase::Head => 1,
                Phase::Write(..) | Phase::Drain => 2,
                Phase::Waiting(_) => 3,
            };
            (rank, c.last)
        })
    }
}

/// One client connection.
struct Conn {
    stream: TcpStream,
    /// When the connection last moved to its present phase (the idle order).
    last: Instant,
    deadline: Instant,
    /// Requests answered or being answered.
    served: usize,
    /// What the client sent and is not answered yet.
    buf: HeadBuf,
    phase: Phase,
}

/// A request whose answer comes later.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    ticket: RequestId,
    closing: bool,
}

enum Phase {
    /// Reading a request head into `buf`.
    Head,
    /// Waiting for a later answer.
    Waiting(Waiting),
    /// Writing a response: head bytes, body, how much of both is written, and whether the
    /// connection closes after it.
    Write(Vec<u8>, Arc<str>, usize, bool),
    /// Last response written, write side shut: discarding what the client still sends.
    Drain,
}

impl Conn {
    fn interest(&self) -> PollFlags {
        match self.phase {
            Phase::Head | Phase::Drain => PollFlags::POLLIN,
            // A hang-up only (nix 0.32 names no POLLRDHUP: Linux's bit).
            Phase::Waiting(_) => PollFlags::from_bits_retain(nix::libc::POLLRDHUP),
            Phase::Write(..) => PollFlags::POLLOUT,
        }
    }

    /// Tells the service that a later answer will not be taken (the connection closes).
    fn abandon(&self, service: &dyn Service) {
        if let Phase::Waiting(w) = self.phase {
            service.abandoned(w.ticket);
        }
    }

    /// Starts writing `answer`.
    fn respond(&mut self, answer: &Answer, closing: bool, limits: &Limits) {
        let now = Instant::now();
        self.phase = Phase::Write(answer.head(closing), answer.body.clone(), 0, closing);
        self.last = now;
        self.deadline = now + limits.write_time;
    }

    /// Does whatever can be done without blocking; false when the connection is finished.
    fn advance(&mut self, limits: &Limits, service: &dyn Service, tickets: &mut RequestId) -> bool {
        loop {
            match &mut self.phase {
                Phase::Head => match self.read_head(limits, service, tickets) {
                    Some(true) => {}
                    Some(false) => return false,
                    None => return true,
                },
                Phase::Waiting(_) => return true,
                Phase::Write(head, body, sent, closing) => {
                    let total = head.len() + body.len();
                    while *sent < total {
                        let rest = if *sent < head.len() {
                            &head[*sent..]
                        } else {
                            &body.as_bytes()[*sent - head.len()..]
                        };
                        match self.stream.write(rest) {
                            Ok(0) => return false,
                            Ok(n) => *sent += n,
                            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                            Err(e) if e.kind() == ErrorKind::Interrupted => {}
                            Err(_) => return false,
                        }
                    }
                    if *closing {
                        if self.stream.shutdown(Shutdown::Write).is_err() {
                            return false;
                        }
                        self.phase = Phase::Drain;
                        self.deadline = self.deadline.min(Instant::now() + limits.drain_time);
                    } else {
                        let now = Instant::now();
                        self.phase = Phase::Head;
                        self.last = now;
                        let wait = match self.buf.is_empty() {
                            true => limits.idle_time,
                            false => limits.head_time,
                        };
                        self.deadline = now + wait;
                    }
                }
                Phase::Drain => {
                    let mut sink = [0u8; 2048];
                    match self.stream.read(&mut sink) {
                        Ok(0) => return false,
                        Ok(_) => {}
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(_) => return false,
                    }
                }
            }
        }
    }

    /// Finds the next head in what arrived (reading more when it is not there yet) and
    /// answers it or waits for its answer. `Some(true)`: the phase moved on; `Some(false)`:
    /// the connection is finished; `None`: nothing more to read now.
    fn read_head(
        &mut self,
        limits: &Limits,
        service: &dyn Service,
        tickets: &mut RequestId,
    ) -> Option<bool> {
        let mut chunk = [0u8; 2048];
        let mut n = 0;
        loop {
            let started = self.buf.is_empty();
            let (answer, closing, len) = match self.buf.push(&chunk[..n], limits.head_bytes) {
                Arrival::Complete(head) => {
                    let len = head.len();
                    self.served += 1;
                    match parse_head(head) {
                        Ok(request) => {
                            let closing =
                                !request.keeps_alive() || self.served >= limits.requests.max(1);
                            *tickets += 1;
                            match service.handle(&request, *tickets) {
                                Handled::Now(answer) => (answer, closing, len),
                                Handled::Later => {
                                    let ticket = *tickets;
                                    self.phase = Phase::Waiting(Waiting { ticket, closing });
                                    self.last = Instant::now();
                                    self.deadline = self.last + limits.wait_time;
                                    self.buf.take(len);
                                    return Some(true);
                                }
                            }
                        }
                        Err(e) => (service.refuse(e), true, len),
                    }
                }
                Arrival::TooLarge => (service.refuse(HeadError::TooLarge), true, 0),
                Arrival::More => {
                    if started && !self.buf.is_empty() && self.served > 0 {
                        // The first byte of a next request: its head has head_time.
                        self.deadline = Instant::now() + limits.head_time;
                    }
                    n = match self.stream.read(&mut chunk) {
                        Ok(0) => return Some(false),
                        Ok(n) => n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
                        Err(e) if e.kind() == ErrorKind::Interrupted => 0,
                        Err(_) => return Some(false),
                    };
                    continue;
                }
            };
            self.buf.take(len);
            self.respond(&answer, closing, limits);
            return Some(true);
        }
    }
}

#[cfg(test)]
mod tests;
