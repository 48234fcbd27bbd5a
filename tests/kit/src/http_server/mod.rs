//! The one hand-written HTTP/1.1 test server: 127.0.0.1, a kernel-chosen port, plain std.
//!
//! Every test that needs a socket is built on it:
//!
//! * **Scripted**, [`Server::start`]: every request is answered with the [`Reply`] its route
//!   returns — complete responses, raw bytes, and hostile replies: hang before the head or
//!   mid-body, trickle, reset (RST) before the head or mid-body, close mid-body, hold an
//!   event stream open. The unit tests of `net`, the HTTP adapter and the MCP HTTP transport,
//!   and the integration tests use it.
//! * **TLS**, [`Server::start_wrapped`]: the same over whatever a [`Wrap`] makes of each
//!   connection (see `tls.rs` beside this folder). Resets need a plain socket; over TLS they
//!   degrade to a close. [`Server::start_silent`] accepts and never reads or writes.
//! * **Custom**, [`Server::serve`]: a [`Handler`] that writes its answers itself through the
//!   [`Conn`] (the fake MCP server in `fake_mcp/`, also `examples/fake_mcp_server.rs`).
//!
//! What they all share: requests are parsed (`wire.rs`: `Content-Length` and chunked bodies,
//! `Expect: 100-continue`, malformed heads answered 400/431/505), recorded on arrival
//! ([`Server::requests`]) and numbered by connection; each connection is served by a worker
//! thread, reused from a pool, so a client that opens a connection per request pays no
//! thread spawn; at most [`MAX_CONNECTIONS`] at once (more are answered 503). Dropping the
//! [`Server`] stops it: the accept loop is woken by a self-connection, open sockets are shut
//! down (which ends every hold and hang), and waits in [`Conn::wait`] return at once.
//!
//! Std only (and `serde_json`-free): the unit tests reach it through `src/net/testkit.rs`,
//! the integration tests and examples as `agenthealth_testkit::http_server`.

mod reply;
mod wire;

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use reply::Reply;
pub use wire::{LAST_CHUNK, Request, chunk, head_bytes, reason, write_full, write_text};

use wire::{Framing, Io, ReadError};

use crate::lock;

/// Most connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 256;

/// Largest body left unread for a possible reset: an unread request must fit the socket's
/// initial receive window. A larger one is read, and a reset after it is a close.
const PEEK_BODY: usize = 64 * 1024;

/// How long a dropped server waits for its connection threads to finish.
const DRAIN: Duration = Duration::from_secs(2);

/// A bidirectional byte stream.
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// Turns an accepted socket into the stream HTTP is spoken over (e.g. a TLS server session).
pub type Wrap = Arc<dyn Fn(TcpStream) -> io::Result<Box<dyn Stream>> + Send + Sync>;

/// What the connection loop does after a request was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next request on this connection (the handler decides; a client's
    /// `Connection: close` is the handler's to honour).
    KeepAlive,
    /// Close normally (FIN).
    Close,
    /// Close with the request unread, so the kernel sends RST. Only where
    /// [`Handler::may_reset`] said so on a plain socket; otherwise a close.
    Reset,
}

/// Answers requests by writing to the connection itself.
pub trait Handler: Send + Sync + 'static {
    /// Whether the answer to `request` (its head: the body is not read yet) may be
    /// [`Flow::Reset`]. Then on a plain socket the request — head and `Content-Length` body
    /// (up to 64 KiB) — is only peeked while [`Handler::handle`] runs, and consumed after it
    /// unless it reset.
    fn may_reset(&self, request: &Request) -> bool {
        let _ = request;
        false
    }

    /// Answers `request` (body read, request recorded) on `conn`.
    fn handle(&self, request: &Request, conn: &mut Conn<'_>) -> Flow;
}

/// How a [`Server`] runs.
#[derive(Clone)]
pub struct Options {
    /// Turns each accepted socket into the stream HTTP is spoken over (TLS).
    pub wrap: Option<Wrap>,
    /// Keep every request for [`Server::requests`] (a handler with a log of its own turns
    /// this off).
    pub record: bool,
    /// Accept connections and never read or write a byte (a TLS handshake or a request
    /// against it hangs until the client's deadline).
    pub silent: bool,
    /// Leave Nagle's algorithm on (as uvicorn does): a second small write waits until the
    /// client acknowledged the first.
    pub nagle: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            wrap: None,
            record: true,
            silent: false,
            nagle: false,
        }
    }
}

/// A route of a scripted server.
type Route = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// A scripted server's handler: the route's reply, acted out. Any reply may be a reset.
struct Script(Route);

impl Handler for Script {
    fn may_reset(&self, _: &Request) -> bool {
        true
    }

    fn handle(&self, request: &Request, conn: &mut Conn<'_>) -> Flow {
        (self.0)(request).act(request, conn)
    }
}

/// One connection as a handler sees it: write the answer to it, wait on it.
pub struct Conn<'a> {
    io: &'a mut Io,
    socket: &'a TcpStream,
    stop: &'a Stop,
    /// Bytes of the request still unread (peeked for a possible reset).
    unread: usize,
}

impl Conn<'_> {
    /// Whether the server is stopping.
    pub fn stopping(&self) -> bool {
        self.stop.stopped()
    }

    /// Waits `d` (with `None` until the server stops); `true` when the server is stopping.
    /// Scripted delays, trickles and keep-alive ticks wait here, so a dropped server never
    /// waits for them.
    pub fn wait(&self, d: Option<Duration>) -> bool {
        self.stop.wait(d)
    }

    /// Holds the connection open without answering, reading and discarding whatever the
    /// client sends, until it closes the connection, `limit` passes (`None`: no limit) or
    /// the server stops (its drop shuts the socket down).
    pub fn hold(&mut self, limit: Option<Duration>) {
        let until = limit.map(|d| Instant::now() + d);
        if self.settle().is_err() {
            return;
        }
        let mut sink = [0u8; 4096];
        loop {
            let left = match until {
                None => None,
                Some(t) => match t.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return,
                },
            };
            if self.socket.set_read_timeout(left).is_err() || self.stop.stopped() {
                return;
            }
            match self.io.read(&mut sink) {
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The client closed, the server shut the socket down, or the time is up.
                _ => return,
            }
        }
    }

    /// Consumes what is left of the request, so that a close is a FIN, not an RST.
    fn settle(&mut self) -> io::Result<()> {
        let unread = std::mem::take(&mut self.unread);
        self.io.skip(unread)
    }
}

impl Write for Conn<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.io.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.io.flush()
    }
}

/// The server's stop flag, with a condition variable its waits sleep on.
#[derive(Default)]
struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    fn stopped(&self) -> bool {
        *lock(&self.stopped)
    }

    fn stop(&self) {
        *lock(&self.stopped) = true;
        self.cv.notify_all();
    }

    fn wait(&self, d: Option<Duration>) -> bool {
        let deadline = d.map(|d| Instant::now() + d);
        let mut stopped = lock(&self.stopped);
        loop {
            if *stopped {
                return true;
            }
            match deadline {
                None => {
                    stopped = self
                        .cv
                        .wait(stopped)
                        .unwrap_or_else(PoisonError::into_inner)
                }
                Some(t) => {
                    let Some(left) = t.checked_duration_since(Instant::now()) else {
                        return false;
                    };
                    if left.is_zero() {
                        return false;
                    }
                    stopped = self
                        .cv
                        .wait_timeout(stopped, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }
}

/// Connections waiting for a worker, and how many workers are idle.
#[derive(Default)]
struct Jobs {
    queue: VecDeque<(usize, TcpStream)>,
    idle: usize,
}

/// State shared by the accept loop, the workers and the [`Server`] handle.
struct Shared {
    handler: Box<dyn Handler>,
    options: Options,
    stop: Stop,
    requests: Mutex<Vec<Request>>,
    accepted: AtomicUsize,
    /// Clones of the open sockets, to shut them down on drop.
    open: Mutex<HashMap<usize, TcpStream>>,
    open_cv: Condvar,
    /// Sockets of a silent server: accepted, never served.
    held: Mutex<Vec<TcpStream>>,
    jobs: Mutex<Jobs>,
    jobs_cv: Condvar,
}

/// A running server. Dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// A scripted plain-HTTP server answering every request with `route`'s reply.
    pub fn start(route: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        Server::scripted(Options::default(), Arc::new(route))
    }

    /// A scripted plain-HTTP server on `addr` (another address than loopback: one added in a
    /// private network namespace).
    pub fn start_at(
        addr: SocketAddr,
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        Server::serve(listener, Options::default(), Script(Arc::new(route)))
    }

    /// A scripted server speaking over whatever `wrap` makes of each connection.
    pub fn start_wrapped(
        wrap: Wrap,
        route: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let options = Options {
            wrap: Some(wrap),
            ..Options::default()
        };
        Server::scripted(options, Arc::new(route))
    }

    /// A server that accepts connections and never reads or writes a byte.
    pub fn start_silent() -> Server {
        let options = Options {
            silent: true,
            ..Options::default()
        };
        Server::scripted(options, Arc::new(|_| Reply::HangBeforeHead))
    }

    /// A scripted server whose sockets keep Nagle's algorithm on ([`Options::nagle`]).
    pub fn start_nagle(route: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        let options = Options {
            nagle: true,
            ..Options::default()
        };
        Server::scripted(options, Arc::new(route))
    }

    fn scripted(options: Options, route: Route) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        Server::serve(listener, options, Script(route)).expect("start the test server")
    }

    /// Serves `listener` with `handler` until dropped.
    pub fn serve(
        listener: TcpListener,
        options: Options,
        handler: impl Handler,
    ) -> io::Result<Server> {
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            options,
            stop: Stop::default(),
            requests: Mutex::new(Vec::new()),
            accepted: AtomicUsize::new(0),
            open: Mutex::new(HashMap::new()),
            open_cv: Condvar::new(),
            held: Mutex::new(Vec::new()),
            jobs: Mutex::new(Jobs::default()),
            jobs_cv: Condvar::new(),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("test-http-accept".into())
            .spawn(move || accept_loop(&accept_shared, &listener))?;
        Ok(Server {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The listening address (on 127.0.0.1 unless started elsewhere).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://<address>:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Waits until no connection is open any more (each was closed by the server or the
    /// client), at most `limit`; whether none is.
    pub fn wait_closed(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut open = lock(&self.shared.open);
        while !open.is_empty() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            open = self
                .shared
                .open_cv
                .wait_timeout(open, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Every request received so far, in arrival order (when recording).
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.requests).clone()
    }

    /// The requests with this HTTP method.
    pub fn with_method(&self, method: &str) -> Vec<Request> {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.method == method)
            .cloned()
            .collect()
    }

    /// How many requests used `method`.
    pub fn count(&self, method: &str) -> usize {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.method == method)
            .count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.stop.stop();
        {
            // Idle workers wake, see the stop and exit.
            let _jobs = lock(&shared.jobs);
            shared.jobs_cv.notify_all();
        }
        // Wake the blocking accept() with a self-connection.
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(handle) = self.accept.take() {
            if woke {
                let _ = handle.join();
            }
        }
        lock(&shared.held).clear();
        for socket in lock(&shared.open).values() {
            let _ = socket.shutdown(Shutdown::Both);
        }
        let deadline = Instant::now() + DRAIN;
        let mut open = lock(&shared.open);
        while !open.is_empty() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            open = shared
                .open_cv
                .wait_timeout(open, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A port on 127.0.0.1 with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener) {
    for conn in listener.incoming() {
        if shared.stop.stopped() {
            break;
        }
        let Ok(mut stream) = conn else {
            // e.g. EMFILE: back off briefly instead of spinning.
            thread::sleep(Duration::from_millis(5));
            continue;
        };
        let index = shared.accepted.fetch_add(1, Ordering::SeqCst);
        // Small writes (TLS flights, head then body) must not wait for delayed ACKs.
        let _ = stream.set_nodelay(!shared.options.nagle);
        if shared.options.silent {
            lock(&shared.held).push(stream);
            continue;
        }
        {
            let mut open = lock(&shared.open);
            if open.len() >= MAX_CONNECTIONS {
                drop(open);
                let _ = write_text(&mut stream, 503, "too many connections\n", true);
                continue;
            }
            if let Ok(clone) = stream.try_clone() {
                open.insert(index, clone);
            }
        }
        let mut jobs = lock(&shared.jobs);
        jobs.queue.push_back((index, stream));
        if jobs.idle >= jobs.queue.len() {
            shared.jobs_cv.notify_one();
            continue;
        }
        drop(jobs);
        let worker_shared = Arc::clone(shared);
        let spawned = thread::Builder::new()
            .name("test-http-conn".into())
            .spawn(move || worker(&worker_shared));
        if spawned.is_err() {
            let mut jobs = lock(&shared.jobs);
            if let Some(pos) = jobs.queue.iter().position(|(j, _)| *j == index) {
                jobs.queue.remove(pos);
            }
            lock(&shared.open).remove(&index);
        }
    }
}

/// Serves queued connections one after another until the server stops.
fn worker(shared: &Shared) {
    loop {
        let (index, stream) = {
            let mut jobs = lock(&shared.jobs);
            loop {
                if shared.stop.stopped() {
                    // Connections nobody will serve: forget them, so the drop stops waiting.
                    let unserved: Vec<usize> = jobs.queue.drain(..).map(|(i, _)| i).collect();
                    drop(jobs);
                    let mut open = lock(&shared.open);
                    for index in unserved {
                        open.remove(&index);
                    }
                    shared.open_cv.notify_all();
                    return;
                }
                if let Some(job) = jobs.queue.pop_front() {
                    break job;
                }
                jobs.idle += 1;
                jobs = shared
                    .jobs_cv
                    .wait(jobs)
                    .unwrap_or_else(PoisonError::into_inner);
                jobs.idle -= 1;
            }
        };
        let _registered = Registered { shared, index };
        serve_connection(shared, stream, index);
    }
}

/// Deregisters a connection when its thread is done with it, even by panic.
struct Registered<'a> {
    shared: &'a Shared,
    index: usize,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(&self.shared.open).remove(&self.index);
        self.shared.open_cv.notify_all();
    }
}

fn serve_connection(shared: &Shared, stream: TcpStream, index: usize) {
    let Ok(socket) = stream.try_clone() else {
        return;
    };
    let mut io = match &shared.options.wrap {
        None => Io::plain(stream),
        Some(wrap) => match wrap(stream) {
            Ok(wrapped) => Io::wrapped(wrapped),
            Err(_) => return,
        },
    };
    let stopped = || shared.stop.stopped();
    let handler = &*shared.handler;
    for on_connection in 0.. {
        if stopped() {
            return;
        }
        // On a plain socket the head is peeked until complete, so that it is still unread
        // if the handler (which can only tell from the head) may reset.
        let keep = io.is_plain();
        let (mut request, head_len) = match wire::read_head(&mut io, keep, &stopped) {
            Ok(read) => read,
            Err(ReadError::NotHttp) => {
                let _ = io.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                return;
            }
            Err(ReadError::Status(code, why)) => {
                let _ = write_text(&mut io, code, &format!("{why}\n"), true);
                return;
            }
            Err(_) => return,
        };
        request.connection = index;
        request.on_connection = on_connection;
        let framing = match wire::framing(&request) {
            Ok(f) => f,
            Err((code, why)) => {
                let _ = io.skip(head_len);
                let _ = write_text(&mut io, code, &format!("{why}\n"), true);
                return;
            }
        };
        let unread = match framing {
            Framing::None if handler.may_reset(&request) => Some(0),
            Framing::Length(n) if n <= PEEK_BODY && handler.may_reset(&request) => Some(n),
            _ => None,
        }
        .filter(|_| io.is_plain());
        if unread.is_none() && io.skip(head_len).is_err() {
            return;
        }
        if framing != Framing::None
            && request
                .header("expect")
                .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
            && io.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").is_err()
        {
            return;
        }
        let body = match unread {
            Some(0) => Ok(Vec::new()),
            Some(n) => wire::peek_body(&mut io, head_len, n, &stopped),
            None => wire::read_body(&mut io, framing),
        };
        request.body = match body {
            Ok(body) => body,
            Err(ReadError::Status(code, why)) => {
                let _ = write_text(&mut io, code, &format!("{why}\n"), true);
                return;
            }
            Err(_) => return,
        };
        if shared.options.record {
            lock(&shared.requests).push(request.clone());
        }
        let mut conn = Conn {
            io: &mut io,
            socket: &socket,
            stop: &shared.stop,
            unread: unread.map_or(0, |n| head_len + n),
        };
        let flow = handler.handle(&request, &mut conn);
        if flow == Flow::Reset {
            // Dropped with the request unread: the kernel sends RST.
            return;
        }
        if conn.settle().is_err() || flow == Flow::Close {
            return;
        }
    }
}
