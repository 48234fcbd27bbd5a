//! The server loop over real sockets: persistent connections and when they close, pipelined
//! requests, the idle and request limits, eviction, and answers that come later.

use super::*;
use crate::runtime::sync::lock;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::sync::Mutex;

/// A service answering `200 <path>` at once, or later for `/later` (when the test says).
#[derive(Default)]
struct Echo {
    waiting: Mutex<Vec<RequestId>>,
    abandoned: Mutex<Vec<RequestId>>,
    done: Option<(UnixStream, UnixStream)>,
    ready: Mutex<Vec<(RequestId, Answer)>>,
}

fn ok(body: &str) -> Answer {
    Answer {
        status: 200,
        headers: vec![("Content-Type", "text/plain".into())],
        body: Arc::from(body),
    }
}

impl Service for Echo {
    fn handle(&self, request: &RequestHead, ticket: RequestId) -> Handled {
        if request.path == "/later" {
            lock(&self.waiting).push(ticket);
            return Handled::Later;
        }
        Handled::Now(ok(request.path))
    }
    fn refuse(&self, _: HeadError) -> Answer {
        Answer {
            status: 400,
            ..ok("bad")
        }
    }
    fn done(&self) -> Option<&UnixStream> {
        self.done.as_ref().map(|(ours, _)| ours)
    }
    fn take_done(&self) -> Vec<(RequestId, Answer)> {
        if let Some((ours, _)) = &self.done {
            let mut sink = [0u8; 64];
            while matches!((&*ours).read(&mut sink), Ok(n) if n > 0) {}
        }
        std::mem::take(&mut *lock(&self.ready))
    }
    fn abandoned(&self, ticket: RequestId) {
        lock(&self.abandoned).push(ticket);
    }
}

/// A running server; stopped when dropped.
struct Running {
    addr: SocketAddr,
    stop: UnixStream,
    service: Arc<Echo>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    fn start(limits: Limits, later: bool) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (wake, stop) = UnixStream::pair().expect("pair");
        let mut echo = Echo::default();
        if later {
            let (ours, theirs) = UnixStream::pair().expect("pair");
            ours.set_nonblocking(true).expect("nonblocking");
            echo.done = Some((ours, theirs));
        }
        let service = Arc::new(echo);
        let serving = service.clone();
        let thread = std::thread::spawn(move || {
            let _ = serve(&listener, &limits, &wake, &*serving);
        });
        Running {
            addr,
            stop,
            service,
            thread: Some(thread),
        }
    }

    fn connect(&self) -> BufReader<TcpStream> {
        let s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        BufReader::new(s)
    }

    /// Answers the `n`th waiting request with `body`.
    fn answer_later(&self, n: usize, body: &str) {
        let ticket = loop {
            if let Some(t) = lock(&self.service.waiting).get(n) {
                break *t;
            }
            std::thread::yield_now();
        };
        lock(&self.service.ready).push((ticket, ok(body)));
        if let Some((_, theirs)) = &self.service.done {
            (&*theirs).write_all(&[1]).expect("wake");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = (&self.stop).write_all(&[1]);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one response: (status line, headers, body) by its Content-Length.
fn response(conn: &mut BufReader<TcpStream>) -> Option<(String, Vec<String>, String)> {
    let mut status = String::new();
    if conn.read_line(&mut status).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).ok()?;
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse().ok()?;
        }
        headers.push(line);
    }
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body).ok()?;
    Some((status, headers, String::from_utf8(body).ok()?))
}

fn send(conn: &mut BufReader<TcpStream>, raw: &str) {
    conn.get_mut().write_all(raw.as_bytes()).expect("send");
}

/// Whether the server closed the connection (end of stream, nothing more).
fn closed(conn: &mut BufReader<TcpStream>) -> bool {
    let mut rest = Vec::new();
    matches!(conn.read_to_end(&mut rest), Ok(0))
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n")
}

#[test]
fn one_connection_carries_many_requests() {
    let server = Running::start(LIMITS, false);
    let mut conn = server.connect();
    for i in 0..100 {
        send(&mut conn, &get(&format!("/r{i}")));
        let (status, headers, body) = response(&mut conn).expect("a response");
        assert_eq!(status, "HTTP/1.1 200 OK\r\n");
        assert_eq!(body, format!("/r{i}"));
        assert!(
            !headers.iter().any(|h| h.starts_with("Connection")),
            "{headers:?}"
        );
    }
}

#[test]
fn close_http_1_0_a_body_and_a_bad_head_end_the_connection() {
    let server = Running::start(LIMITS, false);
    for raw in [
        "GET /a HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /a HTTP/1.0\r\n\r\n",
        "GET /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        "BAD\r\n\r\n",
    ] {
        let mut conn = server.connect();
        send(&mut conn, raw);
        let (_, headers, _) = response(&mut conn).expect("a response");
        assert!(
            headers.contains(&"Connection: close".to_string()),
            "{raw:?}: {headers:?}"
        );
        assert!(closed(&mut conn), "{raw:?}");
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = Running::start(LIMITS, false);
    let mut conn = server.connect();
    send(
        &mut conn,
        &format!("{}{}\r\n{}", get("/1"), get("/2"), get("/3")),
    );
    for want in ["/1", "/2", "/3"] {
        assert_eq!(response(&mut conn).map(|r| r.2).as_deref(), Some(want));
    }
}

#[test]
fn the_request_limit_and_the_idle_time_close_a_connection() {
    let limits = Limits {
        requests: 3,
        idle_time: Duration::from_millis(200),
        ..LIMITS
    };
    let server = Running::start(limits, false);
    let mut conn = server.connect();
    for i in 1..=3 {
        send(&mut conn, &get("/x"));
        let (_, headers, _) = response(&mut conn).expect("a response");
        let closing = headers.contains(&"Connection: close".to_string());
        assert_eq!(closing, i == 3, "request {i}: {headers:?}");
    }
    assert!(closed(&mut conn));

    let mut idle = server.connect();
    send(&mut idle, &get("/x"));
    assert!(response(&mut idle).is_some());
    let started = Instant::now();
    assert!(closed(&mut idle), "closed once idle");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// At the connection limit, an idle kept-alive connection goes before one with a request
/// half sent, and both before one waiting for its answer.
#[test]
fn eviction_takes_the_idle_connection_first() {
    let limits = Limits {
        connections: 3,
        ..LIMITS
    };
    let server = Running::start(limits, true);
    let mut waiting = server.connect();
    send(&mut waiting, &get("/later"));
    let mut partial = server.connect();
    send(&mut partial, "GET /partial HTTP/1.1\r\n");
    let mut idle = server.connect();
    send(&mut idle, &get("/idle"));
    assert!(response(&mut idle).is_some());
    // A fourth: the idle one is closed for it.
    let mut fourth = server.connect();
    send(&mut fourth, &get("/fourth"));
    assert!(response(&mut fourth).is_some());
    assert!(closed(&mut idle), "the idle connection was evicted");
    // With no idle one left (`fourth` starts a head too), a fifth closes the connection that
    // has been sending its head the longest, not the one waiting for its answer.
    send(&mut fourth, "GET /fourth-again HTTP/1.1\r\n");
    let started = Instant::now();
    let mut fifth = server.connect();
    send(&mut fifth, &get("/fifth"));
    assert!(response(&mut fifth).is_some());
    assert!(closed(&mut partial), "then the one still sending its head");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "evicted, not timed out"
    );
    server.answer_later(0, "later");
    assert_eq!(
        response(&mut waiting).map(|r| r.2).as_deref(),
        Some("later")
    );
}

/// A later answer reaches its connection, which then carries the next request; a client
/// that hangs up while waiting is reported, and its answer dropped.
#[test]
fn later_answers_are_delivered_and_hang_ups_reported() {
    let server = Running::start(LIMITS, true);
    let mut conn = server.connect();
    send(&mut conn, &get("/later"));
    // Meanwhile other connections are served.
    let mut other = server.connect();
    send(&mut other, &get("/now"));
    assert_eq!(response(&mut other).map(|r| r.2).as_deref(), Some("/now"));
    server.answer_later(0, "done");
    assert_eq!(response(&mut conn).map(|r| r.2).as_deref(), Some("done"));
    send(&mut conn, &get("/again"));
    assert_eq!(response(&mut conn).map(|r| r.2).as_deref(), Some("/again"));

    let mut gone = server.connect();
    send(&mut gone, &get("/later"));
    let ticket = loop {
        if let Some(t) = lock(&server.service.waiting).get(1) {
            break *t;
        }
        std::thread::yield_now();
    };
    drop(gone);
    let until = Instant::now() + Duration::from_secs(5);
    while !lock(&server.service.abandoned).contains(&ticket) {
        assert!(Instant::now() < until, "the hang-up was not reported");
        std::thread::sleep(Duration::from_millis(1));
    }
    server.answer_later(1, "nobody");
    send(&mut conn, &get("/still"));
    assert_eq!(response(&mut conn).map(|r| r.2).as_deref(), Some("/still"));
}

#[test]
fn responses_carry_length_and_close_only_when_closing() {
    let r = Answer {
        status: 405,
        headers: vec![("Allow", "GET".into())],
        body: Arc::from("{}\n"),
    };
    assert_eq!(
        String::from_utf8_lossy(&r.head(true)),
        "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&r.head(false)),
        "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 3\r\n\r\n"
    );
}
