//! Scripted HTTP/1.1 servers on 127.0.0.1 (port 0) for tests: friendly and hostile.
//!
//! Plain std, no async, no dependencies, so any test can include it with
//! `#[path = "…/tests/support/http_servers.rs"] mod http_servers;` — the unit tests of the
//! HTTP adapter do, and binary-level integration tests can.
//!
//! A [`Server`] answers every request with the [`Reply`] its route returns and records the
//! request (method, path, headers, body). Hostile replies: hang before the head, hang
//! mid-body, trickle one byte per interval, reset (RST) before the head or mid-body, close
//! mid-body. Connections that hang are held open until the server is dropped. Dropping the
//! server stops accepting and closes held connections; it never waits for a trickle.
//!
//! TLS: [`Server::start_wrapped`] takes a function that turns each accepted `TcpStream` into
//! the stream to speak HTTP over (see `tls.rs` beside this file). Resets need a plain socket;
//! over TLS they degrade to a close.

#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A request as the server saw it. Header names are lower-cased.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// `GET`, `HEAD`, …
    pub method: String,
    /// The request target (`/health?x=1`).
    pub path: String,
    /// Header (lower-case name, value) pairs in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body (by `Content-Length`).
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response; `Content-Length` is added unless a header sets it. The
    /// connection stays open for the next request (keep-alive).
    Respond {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body (not sent for `HEAD`).
        body: Vec<u8>,
    },
    /// Read the request, then never answer.
    HangBeforeHead,
    /// Send a head announcing `content_length`, then `sent`, then never send more.
    HangMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
    /// Send `bytes` (a whole response, head included) one byte per `every`.
    Trickle {
        /// The bytes.
        bytes: Vec<u8>,
        /// Delay between bytes.
        every: Duration,
    },
    /// Reset the connection (RST) without sending a byte.
    ResetBeforeHead,
    /// Send a head announcing `content_length`, then `sent`, then reset.
    ResetMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
    /// Send a head announcing `content_length`, then `sent`, then close cleanly (FIN).
    CloseMidBody {
        /// Announced length.
        content_length: usize,
        /// What is actually sent.
        sent: Vec<u8>,
    },
    /// Close without sending anything.
    CloseBeforeHead,
    /// Send these bytes verbatim, then close.
    Raw(Vec<u8>),
}

impl Reply {
    /// A bodiless response with this status.
    pub fn status(status: u16) -> Reply {
        Reply::Respond {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header to a `Respond`.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Respond { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    /// Sets the body of a `Respond`.
    pub fn body(mut self, bytes: impl Into<Vec<u8>>) -> Reply {
        if let Reply::Respond { body, .. } = &mut self {
            *body = bytes.into();
        }
        self
    }
}

/// Turns an accepted socket into the stream HTTP is spoken over (e.g. a TLS server session).
pub type Wrap = Arc<dyn Fn(TcpStream) -> io::Result<Box<dyn Stream>> + Send + Sync>;

/// A bidirectional byte stream.
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

type Route = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

/// A running server. Dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    held: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a plain-HTTP server answering with `route`.
    pub fn start(route: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Server {
        Server::spawn(None, Arc::new(route))
    }

    /// Starts a server speaking over whatever `wrap` makes of each connection.
    pub fn start_wrapped(
        wrap: Wrap,
        route: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::spawn(Some(wrap), Arc::new(route))
    }

    /// Starts a server that accepts connections and never reads or writes a byte (a TLS
    /// handshake or a request against it hangs until the deadline).
    pub fn start_silent() -> Server {
        Server::spawn_with(None, Arc::new(|_| Reply::HangBeforeHead), true)
    }

    fn spawn(wrap: Option<Wrap>, route: Route) -> Server {
        Server::spawn_with(wrap, route, false)
    }

    fn spawn_with(wrap: Option<Wrap>, route: Route, silent: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let held = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = connections.clone();
        let shared = Shared {
            requests: requests.clone(),
            stop: stop.clone(),
            held: held.clone(),
            route,
        };
        let accept = thread::spawn(move || {
            for conn in listener.incoming() {
                if shared.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                // Small writes (TLS flights, head then body) must not wait for delayed ACKs.
                let _ = conn.set_nodelay(true);
                if silent {
                    lock(&shared.held).push(conn);
                    continue;
                }
                let shared = shared.clone();
                let wrap = wrap.clone();
                thread::spawn(move || {
                    let _ = match wrap {
                        None => serve_plain(conn, &shared),
                        Some(wrap) => serve_wrapped(conn, &wrap, &shared),
                    };
                });
            }
        });
        Server {
            addr,
            connections,
            requests,
            stop,
            held,
            accept: Some(accept),
        }
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.requests).clone()
    }

    /// How many requests used `method`.
    pub fn count(&self, method: &str) -> usize {
        lock(&self.requests)
            .iter()
            .filter(|r| r.method == method)
            .count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Unblock accept().
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        lock(&self.held).clear();
    }
}

/// A port on 127.0.0.1 with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Clone)]
struct Shared {
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    held: Arc<Mutex<Vec<TcpStream>>>,
    route: Route,
}

/// Plain sockets: the head is parsed with `peek` so a reset reply can leave the request
/// unread (closing a socket with unread input sends RST).
fn serve_plain(mut conn: TcpStream, shared: &Shared) -> io::Result<()> {
    loop {
        let Some((head_len, mut req)) = peek_head(&conn)? else {
            return Ok(());
        };
        // A request with a body is read whole before routing, so the route can answer by
        // it; a reset needs unread input, which a bodiless request keeps.
        let mut consumed = false;
        if content_length(&req) > 0 {
            let mut head = vec![0; head_len];
            conn.read_exact(&mut head)?;
            req.body = read_body(&mut conn, &req)?;
            consumed = true;
        }
        let reply = (shared.route)(&req);
        if let Reply::ResetBeforeHead = reply {
            record(shared, req);
            return Ok(()); // dropped with the request unread: RST
        }
        if let Reply::ResetMidBody {
            content_length,
            sent,
        } = &reply
        {
            record(shared, req);
            conn.write_all(&partial_head(*content_length))?;
            conn.write_all(sent)?;
            conn.flush()?;
            return Ok(()); // RST, as above
        }
        if !consumed {
            let mut head = vec![0; head_len];
            conn.read_exact(&mut head)?;
            req.body = read_body(&mut conn, &req)?;
        }
        // Recorded before answering: once a client has the response, the request is visible.
        record(shared, req.clone());
        let keep = respond(&mut conn, &req, &reply, shared, |c| c.try_clone().ok())?;
        if !keep {
            return Ok(());
        }
    }
}

fn serve_wrapped(conn: TcpStream, wrap: &Wrap, shared: &Shared) -> io::Result<()> {
    let raw = conn.try_clone()?;
    let mut stream = wrap(conn)?;
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_head(&mut stream, &mut buf)? else {
            return Ok(());
        };
        let mut req = req;
        req.body = read_buffered_body(&mut stream, &mut buf, &req)?;
        let reply = (shared.route)(&req);
        record(shared, req.clone());
        let keep = respond(&mut stream, &req, &reply, shared, |_| raw.try_clone().ok())?;
        if !keep {
            return Ok(());
        }
    }
}

fn record(shared: &Shared, req: Recorded) {
    lock(&shared.requests).push(req);
}

/// Acts out `reply`; returns whether the connection can take another request.
fn respond<S: Write + ?Sized>(
    conn: &mut S,
    req: &Recorded,
    reply: &Reply,
    shared: &Shared,
    hold: impl Fn(&S) -> Option<TcpStream>,
) -> io::Result<bool> {
    match reply {
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(*status));
            let has_length = headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
            for (n, v) in headers {
                out.push_str(&format!("{n}: {v}\r\n"));
            }
            if !has_length {
                out.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            out.push_str("\r\n");
            conn.write_all(out.as_bytes())?;
            if req.method != "HEAD" {
                conn.write_all(body)?;
            }
            conn.flush()?;
            let close = req
                .header("connection")
                .is_some_and(|v| v.eq_ignore_ascii_case("close"));
            Ok(!close)
        }
        Reply::HangBeforeHead => {
            if let Some(s) = hold(conn) {
                lock(&shared.held).push(s);
            }
            Ok(false)
        }
        Reply::HangMidBody {
            content_length,
            sent,
        } => {
            conn.write_all(&partial_head(*content_length))?;
            conn.write_all(sent)?;
            conn.flush()?;
            if let Some(s) = hold(conn) {
                lock(&shared.held).push(s);
            }
            Ok(false)
        }
        Reply::Trickle { bytes, every } => {
            for b in bytes {
                if shared.stop.load(Ordering::SeqCst) {
                    break;
                }
                conn.write_all(&[*b])?;
                conn.flush()?;
                thread::sleep(*every);
            }
            Ok(false)
        }
        Reply::CloseMidBody {
            content_length,
            sent,
        } => {
            conn.write_all(&partial_head(*content_length))?;
            conn.write_all(sent)?;
            conn.flush()?;
            Ok(false)
        }
        Reply::Raw(bytes) => {
            conn.write_all(bytes)?;
            conn.flush()?;
            Ok(false)
        }
        // Reached only over a wrapped stream: the best we can do is close.
        Reply::ResetBeforeHead | Reply::ResetMidBody { .. } | Reply::CloseBeforeHead => Ok(false),
    }
}

fn partial_head(content_length: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {content_length}\r\n\r\n"
    )
    .into_bytes()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

const MAX_HEAD: usize = 64 * 1024;

/// Waits for a complete request head without consuming it. `None` when the peer closed.
fn peek_head(conn: &TcpStream) -> io::Result<Option<(usize, Recorded)>> {
    let mut buf = vec![0; MAX_HEAD];
    let mut waits = 0u32;
    loop {
        let n = conn.peek(&mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if !buf[0].is_ascii_uppercase() {
            // Not HTTP (e.g. a TLS ClientHello): answer like a real server would, then close.
            let mut conn = conn;
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            return Ok(None);
        }
        if let Some(end) = find_head_end(&buf[..n]) {
            return Ok(parse_head(&buf[..end]).map(|r| (end, r)));
        }
        if n == buf.len() || waits > 5_000 {
            return Ok(None);
        }
        // peek returns at once while a partial head sits in the buffer: poll gently.
        waits += 1;
        thread::sleep(Duration::from_millis(1));
    }
}

/// Reads (consuming) a complete request head. `None` when the peer closed.
fn read_head<S: Read + ?Sized>(s: &mut S, buf: &mut Vec<u8>) -> io::Result<Option<Recorded>> {
    loop {
        if let Some(end) = find_head_end(buf) {
            let head: Vec<u8> = buf.drain(..end).collect();
            return Ok(parse_head(&head));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let mut chunk = [0; 4096];
        let n = match s.read(&mut chunk) {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

fn parse_head(head: &[u8]) -> Option<Recorded> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Recorded {
        method,
        path,
        headers,
        body: Vec::new(),
    })
}

fn content_length(req: &Recorded) -> usize {
    req.header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(16 << 20)
}

fn read_body<S: Read + ?Sized>(s: &mut S, req: &Recorded) -> io::Result<Vec<u8>> {
    let mut body = vec![0; content_length(req)];
    s.read_exact(&mut body)?;
    Ok(body)
}

/// Like [`read_body`], taking what `read_head` already buffered first.
fn read_buffered_body<S: Read + ?Sized>(
    s: &mut S,
    buf: &mut Vec<u8>,
    req: &Recorded,
) -> io::Result<Vec<u8>> {
    let len = content_length(req);
    let take = len.min(buf.len());
    let mut body: Vec<u8> = buf.drain(..take).collect();
    let mut rest = vec![0; len - take];
    s.read_exact(&mut rest)?;
    body.extend_from_slice(&rest);
    Ok(body)
}
