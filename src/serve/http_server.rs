//! The small HTTP/1.1 server under `serve`: one thread, non-blocking sockets and `poll`.
//!
//! A health endpoint must answer its own liveness probe whatever other clients do, so every
//! resource a client can hold is bounded ([`Limits`]):
//!
//! * at most `connections` open connections; a new one beyond that closes the oldest (an
//!   idle or trickling client is the oldest, since a real request is answered within
//!   microseconds of arriving), so connecting is always enough to be served;
//! * a request head of at most `head_bytes` (431 beyond), which must arrive within
//!   `head_time` of connecting however slowly it trickles, and a response that must be taken
//!   within `write_time`;
//! * no body is read, no connection is kept alive: each connection carries one request, its
//!   response ends with `Connection: close`, and the socket's write side is shut down before
//!   a short drain of whatever the client still sends (closing with unread bytes would reset
//!   the connection and could destroy the response in flight).
//!
//! One thread serves everything; there is no worker pool to exhaust. Shutting down is a byte
//! on the `wake` socket (the caller's cancellation writes it), which ends [`serve`] at once.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// What one client can hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open connections at most.
    pub connections: usize,
    /// Bytes of a request head at most.
    pub head_bytes: usize,
    /// From connecting to the end of the request head.
    pub head_time: Duration,
    /// From the response to the client having taken it.
    pub write_time: Duration,
    /// After the response, how long the rest of a request is read and discarded.
    pub drain_time: Duration,
}

/// The limits `serve` runs with (the Go reference's header size and timeouts).
pub const LIMITS: Limits = Limits {
    connections: 64,
    head_bytes: 8 * 1024,
    head_time: Duration::from_secs(5),
    write_time: Duration::from_secs(5),
    drain_time: Duration::from_secs(1),
};

/// A parsed request head: the parts the handler reads.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The method, as sent (case-sensitive, as HTTP methods are).
    pub method: &'a str,
    /// The path, without query or fragment.
    pub path: &'a str,
    headers: Vec<(&'a str, &'a str)>,
}

impl<'a> RequestHead<'a> {
    /// Every header line's name and trimmed value, in the order sent.
    pub fn headers(&self) -> &[(&'a str, &'a str)] {
        &self.headers
    }

    /// The first value of the header `name` (case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// The reply to one request: status, headers, body. `Content-Length` and `Connection: close`
/// are added.
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
    fn head(&self) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.body.len()
        ));
        out.into_bytes()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Why a request head cannot be answered by the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Not an HTTP/1.x request head.
    Malformed,
    /// Longer than the limit.
    TooLarge,
}

/// Serves connections from `listener` with `handle` until a byte arrives on `wake`. Returns
/// an error only when polling itself fails; a client's misbehaviour only ever closes that
/// client's connection. `refuse` answers a head that could not be parsed.
pub fn serve(
    listener: &TcpListener,
    limits: &Limits,
    wake: &UnixStream,
    handle: &dyn Fn(&RequestHead) -> Answer,
    refuse: &dyn Fn(HeadError) -> Answer,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    wake.set_nonblocking(true)?;
    let mut conns: Vec<Conn> = Vec::new();
    // Set when accepting failed with no connection of ours left to close (no descriptor
    // left in the process): the listener is not polled until then, instead of spinning.
    let mut paused_until: Option<Instant> = None;
    loop {
        let now = Instant::now();
        conns.retain(|c| c.deadline > now);
        paused_until = paused_until.filter(|t| *t > now);
        let timeout = conns
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
        let ready: Vec<(bool, bool)> = {
            let mut fds = Vec::with_capacity(conns.len() + 2);
            fds.push(PollFd::new(wake.as_fd(), PollFlags::POLLIN));
            let listening = if paused_until.is_some() {
                PollFlags::empty()
            } else {
                PollFlags::POLLIN
            };
            fds.push(PollFd::new(listener.as_fd(), listening));
            for c in &conns {
                fds.push(PollFd::new(c.stream.as_fd(), c.interest()));
            }
            match poll(&mut fds, timeout) {
                Ok(_) => {}
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(io::Error::from(e)),
            }
            fds.iter()
                .map(|f| {
                    let r = f.revents().unwrap_or(PollFlags::empty());
                    (
                        !r.is_empty(),
                        r.intersects(PollFlags::POLLERR | PollFlags::POLLNVAL),
                    )
                })
                .collect()
        };
        if ready[0].0 {
            return Ok(());
        }
        // Connections first: the new ones below are not in `ready`.
        let mut i = conns.len();
        while i > 0 {
            i -= 1;
            let (is_ready, failed) = ready[i + 2];
            let keep = is_ready && !failed && conns[i].advance(limits, handle, refuse);
            if failed || (is_ready && !keep) {
                conns.swap_remove(i);
            }
        }
        if ready[1].0 && !accept(listener, limits, &mut conns, handle, refuse) {
            paused_until = Some(Instant::now() + ACCEPT_PAUSE);
        }
    }
}

/// How long the listener rests when no connection can be taken at all.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// Takes every pending connection, closing the oldest open ones to stay within the limit.
/// False when accepting fails for want of a resource that closing our own connections
/// cannot free (the caller then rests the listener briefly).
fn accept(
    listener: &TcpListener,
    limits: &Limits,
    conns: &mut Vec<Conn>,
    handle: &dyn Fn(&RequestHead) -> Answer,
    refuse: &dyn Fn(HeadError) -> Answer,
) -> bool {
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionAborted => continue,
            // Out of descriptors or memory: free a descriptor by closing the oldest
            // connection and try again; with none left to close, rest.
            Err(_) => match oldest(conns) {
                Some(i) => {
                    conns.swap_remove(i);
                    continue;
                }
                None => return false,
            },
        };
        if stream.set_nonblocking(true).is_err() {
            continue;
        }
        let _ = stream.set_nodelay(true);
        if conns.len() >= limits.connections.max(1) {
            if let Some(i) = oldest(conns) {
                conns.swap_remove(i);
            }
        }
        let now = Instant::now();
        let mut conn = Conn {
            stream,
            since: now,
            deadline: now + limits.head_time,
            phase: Phase::Head(HeadBuf::default()),
        };
        // The request is often there already: answer without another round of polling.
        if conn.advance(limits, handle, refuse) {
            conns.push(conn);
        }
    }
}

/// The index of the connection open the longest.
fn oldest(conns: &[Conn]) -> Option<usize> {
    (0..conns.len()).min_by_key(|&i| conns[i].since)
}

/// One client connection.
struct Conn {
    stream: TcpStream,
    since: Instant,
    deadline: Instant,
    phase: Phase,
}

enum Phase {
    /// Reading the request head.
    Head(HeadBuf),
    /// Writing the response: head bytes, body, how much of both is written.
    Write(Vec<u8>, Arc<str>, usize),
    /// Response written, write side shut: discarding what the client still sends.
    Drain,
}

impl Conn {
    fn interest(&self) -> PollFlags {
        match self.phase {
            Phase::Head(_) | Phase::Drain => PollFlags::POLLIN,
            Phase::Write(..) => PollFlags::POLLOUT,
        }
    }

    /// Does whatever can be done without blocking; false when the connection is finished.
    fn advance(
        &mut self,
        limits: &Limits,
        handle: &dyn Fn(&RequestHead) -> Answer,
        refuse: &dyn Fn(HeadError) -> Answer,
    ) -> bool {
        loop {
            match &mut self.phase {
                Phase::Head(buf) => {
                    let mut chunk = [0u8; 2048];
                    let n = match self.stream.read(&mut chunk) {
                        Ok(0) => return false,
                        Ok(n) => n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(_) => return false,
                    };
                    let response = match buf.push(&chunk[..n], limits.head_bytes) {
                        Arrival::Complete(head) => match parse_head(head) {
                            Ok(request) => handle(&request),
                            Err(e) => refuse(e),
                        },
                        Arrival::TooLarge => refuse(HeadError::TooLarge),
                        Arrival::More => continue,
                    };
                    self.phase = Phase::Write(response.head(), response.body, 0);
                    self.deadline = Instant::now() + limits.write_time;
                }
                Phase::Write(head, body, sent) => {
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
                    if self.stream.shutdown(Shutdown::Write).is_err() {
                        return false;
                    }
                    self.phase = Phase::Drain;
                    self.deadline = self.deadline.min(Instant::now() + limits.drain_time);
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
}

/// A request head as it arrives, in whatever pieces the network cuts it into.
///
/// Kept apart from the socket so that what the pieces add up to can be fuzzed: the outcome
/// must not depend on where the cuts fall (`agenthealth::fuzzing::http_head`).
#[derive(Debug, Default)]
pub struct HeadBuf(Vec<u8>);

/// What the bytes received so far make of a head.
#[derive(Debug, PartialEq, Eq)]
pub enum Arrival<'a> {
    /// No blank line yet, and still within the limit.
    More,
    /// The head, up to and including its blank line (what follows it is not read).
    Complete(&'a [u8]),
    /// No blank line within the limit.
    TooLarge,
}

impl HeadBuf {
    /// Adds the next piece and says whether the head is complete: within `limit` bytes, a
    /// head ends at its first blank line. Empty lines before the request line are dropped
    /// (RFC 9112 §2.2) and count against nothing.
    pub fn push(&mut self, piece: &[u8], limit: usize) -> Arrival<'_> {
        let from = self.0.len().saturating_sub(3);
        let mut fresh = piece;
        if self.0.is_empty() {
            let skip = fresh.iter().take_while(|b| matches!(b, b'\r' | b'\n'));
            fresh = &fresh[skip.count()..];
        }
        self.0.extend_from_slice(fresh);
        match head_end(&self.0, from) {
            Some(end) if end <= limit => Arrival::Complete(&self.0[..end]),
            _ if self.0.len() > limit => Arrival::TooLarge,
            _ => Arrival::More,
        }
    }
}

/// Where the head ends (after its blank line), searching from `from`: `\r\n\r\n`, or bare
/// `\n` line ends as lenient clients send them. Only the new bytes are searched as a head
/// trickles in, so a slow client costs no more than a fast one.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    (from..buf.len()).find_map(|i| match &buf[i..] {
        [b'\n', b'\n', ..] => Some(i + 2),
        [b'\n', b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// Parses a request head (up to and including its blank line). Lenient where RFC 9112 lets a
/// server be (bare `\n` line ends, empty lines before the request line), strict where a
/// lenient reading would pass on what a client must not send: a control character anywhere
/// but an HTAB in a header value (a bare CR, a NUL) makes the head malformed (RFC 9112 §2.2,
/// RFC 9110 §5.5), as does a version other than `HTTP/1.<digit>`.
pub fn parse_head(head: &[u8]) -> Result<RequestHead<'_>, HeadError> {
    let text = std::str::from_utf8(head).map_err(|_| HeadError::Malformed)?;
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let request_line = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    let minor = version.strip_prefix("HTTP/1.").map(str::as_bytes);
    if method.is_empty()
        || !method.bytes().all(is_token_byte)
        || !matches!(minor, Some([d]) if d.is_ascii_digit())
        || target.bytes().any(|b| b.is_ascii_control())
    {
        return Err(HeadError::Malformed);
    }
    let path = path_of(target).ok_or(HeadError::Malformed)?;
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        // No whitespace before the colon, no obsolete line folding (RFC 9112 §5).
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(HeadError::Malformed);
        }
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(HeadError::Malformed);
        }
        headers.push((name, value.trim_matches([' ', '\t'])));
    }
    Ok(RequestHead {
        method,
        path,
        headers,
    })
}

/// The path of an origin-form (`/live?x`) or absolute-form (`http://host/live`) target.
fn path_of(target: &str) -> Option<&str> {
    let rest = match target.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => {
            rest.find('/').map_or("/", |i| &rest[i..])
        }
        Some(_) => return None,
        None if target.starts_with('/') => target,
        None => return None,
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    Some(&rest[..end])
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_with_crlf_or_lf() {
        let r = parse_head(b"GET /live?x=1 HTTP/1.1\r\nHost: a\r\nAHP-Version:  v1 \r\n\r\n");
        let r = r.expect("valid");
        assert_eq!((r.method, r.path), ("GET", "/live"));
        assert_eq!(r.header("ahp-version"), Some("v1"));
        assert_eq!(r.header("authorization"), None);
        // An HTAB inside a value is allowed; around it, trimmed.
        let r = parse_head(b"GET / HTTP/1.1\r\nX:\ta\tb \r\n\r\n").expect("htab");
        assert_eq!(r.headers(), &[("X", "a\tb")]);
        let r = parse_head(b"\r\nPOST http://h:1/ready#f HTTP/1.0\nX: 1\nX: 2\n\n").expect("lf");
        assert_eq!(
            (r.method, r.path, r.header("x")),
            ("POST", "/ready", Some("1"))
        );
        assert_eq!(
            parse_head(b"GET http://h HTTP/1.1\r\n\r\n").map(|r| r.path),
            Ok("/")
        );
    }

    #[test]
    fn malformed_heads_are_refused() {
        for bad in [
            &b"GET /live\r\n\r\n"[..],
            b"GET  /live HTTP/1.1\r\n\r\n",
            b"GET live HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/2\r\n\r\n",
            b"G(T /live HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/1.1\r\nNo colon\r\n\r\n",
            b"GET /live HTTP/1.1\r\nName : v\r\n\r\n",
            b"GET /live HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            b"GET ftp://h/live HTTP/1.1\r\n\r\n",
            b"GET /\xff HTTP/1.1\r\n\r\n",
            b"\r\n\r\n",
            // Control characters (the fuzz target's first find was a 0x06 in a value).
            b"GET /live HTTP/1.1\r\nX: a\x06b\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\rb\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\0\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\r\r\n\r\n",
            b"GET /li\tve HTTP/1.1\r\n\r\n",
            b"GET /live\x7f HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/1.1\r\r\n\r\n",
            b"GET /live HTTP/1.10\r\n\r\n",
            b"GET /live HTTP/1.x\r\n\r\n",
        ] {
            assert_eq!(
                parse_head(bad),
                Err(HeadError::Malformed),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn the_head_ends_at_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody", 0), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n", 0), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n", 0), None);
        // Searching from the last three old bytes finds an end split across reads.
        let head = b"GET / HTTP/1.1\r\n\r\n";
        assert_eq!(head_end(head, head.len() - 4), Some(18));
    }

    #[test]
    fn a_head_completes_the_same_in_any_pieces() {
        let sent = b"\r\n\nGET / HTTP/1.1\r\nA: b\r\n\r\nbody";
        let head = &b"GET / HTTP/1.1\r\nA: b\r\n\r\n"[..];
        for cut in 0..=sent.len() {
            let mut buf = HeadBuf::default();
            let first = buf.push(&sent[..cut], 64);
            if first == Arrival::More {
                assert_eq!(buf.push(&sent[cut..], 64), Arrival::Complete(head), "{cut}");
            } else {
                assert_eq!(first, Arrival::Complete(head), "{cut}");
            }
        }
        // A byte at a time, it completes with the head's last byte.
        let mut trickle = HeadBuf::default();
        let more = sent
            .iter()
            .take_while(|b| trickle.push(&[**b], 64) == Arrival::More)
            .count();
        assert_eq!(more, sent.len() - b"body".len() - 1);
        // The limit counts the head, not the empty lines before it nor what follows it.
        let mut exact = HeadBuf::default();
        assert_eq!(exact.push(sent, head.len()), Arrival::Complete(head));
        let mut over = HeadBuf::default();
        assert_eq!(over.push(sent, head.len() - 1), Arrival::TooLarge);
        let mut short = HeadBuf::default();
        assert_eq!(short.push(&head[..10], 9), Arrival::TooLarge);
        assert_eq!(HeadBuf::default().push(&head[..10], 10), Arrival::More);
    }

    #[test]
    fn responses_carry_length_and_close() {
        let r = Answer {
            status: 405,
            headers: vec![("Allow", "GET".into())],
            body: Arc::from("{}\n"),
        };
        assert_eq!(
            String::from_utf8_lossy(&r.head()),
            "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
        );
    }
}
