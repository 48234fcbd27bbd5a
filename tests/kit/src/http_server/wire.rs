//! HTTP/1.1 on one connection: reading requests (head, `Content-Length` or chunked body) and
//! framing responses.
//!
//! Plain sockets are read with `peek` and exact consumption: a request head is peeked until
//! it is complete and consumed only once the handler may no longer reset, and a body that a
//! reset must leave unread is only peeked (closing a socket with unread input makes the kernel
//! send RST). A wrapped stream (TLS) cannot be peeked: it is read through a buffer, and resets
//! over it degrade to a close.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::Stream;

/// Largest accepted request head.
pub const MAX_HEAD: usize = 64 * 1024;
/// Largest accepted request body.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// How long a request may take to arrive once it started, and how long it may stall.
const PATIENCE: Duration = Duration::from_secs(10);
const STALL: Duration = Duration::from_millis(500);

/// A request as the server read it. Header names are lower-cased.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `GET`, `POST`, `CONNECT`, …
    pub method: String,
    /// The request target as sent: `/health?x=1`, `host:port` for `CONNECT`, or an
    /// absolute URL.
    pub target: String,
    /// `true` for HTTP/1.0.
    pub http10: bool,
    /// Header (lower-case name, trimmed value) pairs in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body (`Content-Length` or chunked; empty when there is none).
    pub body: Vec<u8>,
    /// Which accepted connection (0-based) carried it.
    pub connection: usize,
    /// How many requests that connection carried before this one (0: its first).
    pub on_connection: usize,
}

impl Request {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path of the target, without the query (and without scheme and authority when
    /// the target is an absolute URL).
    pub fn path(&self) -> &str {
        self.origin()
            .split_once('?')
            .map_or(self.origin(), |(path, _)| path)
    }

    /// The query string without `?`, if any.
    pub fn query(&self) -> Option<&str> {
        self.origin().split_once('?').map(|(_, query)| query)
    }

    /// Whether the client lets the connection carry another request after this one.
    pub fn keep_alive(&self) -> bool {
        let connection = self.header("connection").map(str::to_ascii_lowercase);
        let has = |token: &str| {
            connection
                .as_deref()
                .is_some_and(|c| c.split(',').any(|t| t.trim() == token))
        };
        if self.http10 {
            has("keep-alive")
        } else {
            !has("close")
        }
    }

    fn origin(&self) -> &str {
        match self.target.find("://") {
            Some(i) => self.target[i + 3..]
                .find('/')
                .map_or("/", |j| &self.target[i + 3 + j..]),
            None => &self.target,
        }
    }
}

/// How the request body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Framing {
    /// No body.
    None,
    /// `Content-Length`.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// Why no request came.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The peer closed (or the socket failed) before a new request started.
    Eof,
    /// Socket error, close or stall mid-request.
    Io,
    /// Malformed or oversized request: answer this status and close.
    Status(u16, &'static str),
    /// Not HTTP at all (a TLS ClientHello, say): answer a bare 400 and close with the
    /// bytes unread, like a plain HTTP server that gives up at once.
    NotHttp,
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> ReadError {
        ReadError::Io
    }
}

/// The connection's byte stream, with what was read from a wrapped stream but not consumed.
pub(super) enum Io {
    /// A plain socket: reads peek, consumption is exact.
    Plain {
        socket: TcpStream,
        /// Peek buffer.
        scratch: Vec<u8>,
    },
    /// A stream over the socket (TLS), read through `buffered`.
    Wrapped {
        stream: Box<dyn Stream>,
        buffered: Vec<u8>,
    },
}

impl Io {
    pub(super) fn plain(socket: TcpStream) -> Io {
        Io::Plain {
            socket,
            scratch: vec![0; MAX_HEAD + 1],
        }
    }

    pub(super) fn wrapped(stream: Box<dyn Stream>) -> Io {
        Io::Wrapped {
            stream,
            buffered: Vec::new(),
        }
    }

    /// What arrived and is not consumed yet; waits for at least one byte when there is
    /// none. Empty at end of stream.
    fn available(&mut self) -> io::Result<&[u8]> {
        match self {
            Io::Plain { socket, scratch } => {
                let n = socket.peek(scratch)?;
                Ok(&scratch[..n])
            }
            Io::Wrapped { stream, buffered } => {
                if buffered.is_empty() {
                    let mut chunk = [0u8; 8192];
                    let n = stream.read(&mut chunk)?;
                    buffered.extend_from_slice(&chunk[..n]);
                }
                Ok(buffered)
            }
        }
    }

    /// Takes `n` bytes that [`Io::available`] showed.
    fn consume(&mut self, n: usize) -> io::Result<()> {
        match self {
            Io::Plain { socket, .. } => {
                let mut sink = [0u8; 8192];
                let mut left = n;
                while left > 0 {
                    let k = left.min(sink.len());
                    socket.read_exact(&mut sink[..k])?;
                    left -= k;
                }
                Ok(())
            }
            Io::Wrapped { buffered, .. } => {
                buffered.drain(..n.min(buffered.len()));
                Ok(())
            }
        }
    }

    /// Waits until `want(bytes)` says the unconsumed input is complete, consuming nothing;
    /// `Ok(None)` when the peer closed before anything arrived. Plain sockets only.
    ///
    /// The one poll in the server: while part of what is awaited sits in the kernel buffer,
    /// `peek` returns at once, and the bytes must stay unread for a reset to be an RST.
    /// Clients write a head in one segment, so this waits only for slow or split requests;
    /// it gives up after [`PATIENCE`], or when nothing arrived for [`STALL`].
    fn peek_until(
        &mut self,
        limit: usize,
        want: impl Fn(&[u8]) -> Option<usize>,
        stopped: &dyn Fn() -> bool,
    ) -> Result<Option<Vec<u8>>, ReadError> {
        let Io::Plain { socket, scratch } = self else {
            return Err(ReadError::Io);
        };
        if scratch.len() < limit + 1 {
            scratch.resize(limit + 1, 0);
        }
        let start = Instant::now();
        let (mut seen, mut progress_at) = (0, start);
        loop {
            let n = match socket.peek(&mut scratch[..=limit]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) if seen == 0 => return Ok(None),
                Err(_) => return Err(ReadError::Io),
            };
            if n == 0 {
                return if seen == 0 {
                    Ok(None)
                } else {
                    Err(ReadError::Io)
                };
            }
            if let Some(end) = want(&scratch[..n]) {
                return Ok(Some(scratch[..end].to_vec()));
            }
            if n > limit {
                return Err(ReadError::Status(431, "request head too large"));
            }
            let now = Instant::now();
            if n > seen {
                (seen, progress_at) = (n, now);
            }
            if now - start >= PATIENCE || now - progress_at >= STALL || stopped() {
                return Err(ReadError::Io);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Reads through the end `find(bytes, searched_up_to)` reports, consuming exactly that.
    fn read_delimited(
        &mut self,
        limit: usize,
        find: impl Fn(&[u8], usize) -> Option<usize>,
    ) -> Result<Vec<u8>, ReadError> {
        let mut acc: Vec<u8> = Vec::new();
        loop {
            let available = self.available()?;
            if available.is_empty() {
                return Err(ReadError::Io);
            }
            let from = acc.len();
            acc.extend_from_slice(available);
            let n = available.len();
            let end = find(&acc, from);
            let take = end.map_or(n, |end| end - from);
            self.consume(take)?;
            if let Some(end) = end {
                acc.truncate(end);
                return Ok(acc);
            }
            if acc.len() > limit {
                return Err(ReadError::Status(431, "request head too large"));
            }
        }
    }

    /// Reads exactly `n` bytes.
    fn read_exact(&mut self, n: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let available = self.available()?;
            if available.is_empty() {
                return Err(ReadError::Io);
            }
            let take = available.len().min(n - out.len());
            out.extend_from_slice(&available[..take]);
            self.consume(take)?;
        }
        Ok(out)
    }

    /// Discards `n` bytes that were only peeked.
    pub(super) fn skip(&mut self, n: usize) -> io::Result<()> {
        self.consume(n)
    }

    /// Whether this is a plain socket (whose input can stay unread).
    pub(super) fn is_plain(&self) -> bool {
        matches!(self, Io::Plain { .. })
    }
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Io::Plain { socket, .. } => socket.read(buf),
            Io::Wrapped { stream, buffered } => {
                if buffered.is_empty() {
                    return stream.read(buf);
                }
                let n = buf.len().min(buffered.len());
                buf[..n].copy_from_slice(&buffered[..n]);
                buffered.drain(..n);
                Ok(n)
            }
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Io::Plain { socket, .. } => socket.write(buf),
            Io::Wrapped { stream, .. } => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Io::Plain { socket, .. } => socket.flush(),
            Io::Wrapped { stream, .. } => stream.flush(),
        }
    }
}

/// The offset just past the blank line ending a head (`\n\n` or `\n\r\n`), searching from
/// about `from`.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let start = from.saturating_sub(2);
    (start..buf.len()).find_map(|i| {
        if buf[i] != b'\n' {
            return None;
        }
        match (buf.get(i + 1), buf.get(i + 2)) {
            (Some(b'\n'), _) => Some(i + 2),
            (Some(b'\r'), Some(b'\n')) => Some(i + 3),
            _ => None,
        }
    })
}

/// The head of the next request, and how many bytes of input it spans. With `keep` on a
/// plain socket the head stays unread (see [`Io::skip`]); otherwise it is consumed.
/// `Eof` when the peer closed between requests.
pub(super) fn read_head(
    io: &mut Io,
    keep: bool,
    stopped: &dyn Fn() -> bool,
) -> Result<(Request, usize), ReadError> {
    loop {
        // Stray line ends between keep-alive requests are skipped.
        let first = match io.available() {
            Ok([]) | Err(_) => return Err(ReadError::Eof),
            Ok(bytes) => bytes[0],
        };
        if first == b'\r' || first == b'\n' {
            io.consume(1)?;
            continue;
        }
        if !first.is_ascii_uppercase() {
            return Err(ReadError::NotHttp);
        }
        break;
    }
    let raw = if keep && io.is_plain() {
        match io.peek_until(MAX_HEAD, |b| head_end(b, 0), stopped)? {
            Some(raw) => raw,
            None => return Err(ReadError::Eof),
        }
    } else {
        io.read_delimited(MAX_HEAD, head_end)?
    };
    if raw.len() > MAX_HEAD {
        return Err(ReadError::Status(431, "request head too large"));
    }
    let spans = if keep && io.is_plain() { raw.len() } else { 0 };
    match parse_head(&raw) {
        Ok(request) => Ok((request, spans)),
        Err(e) => {
            // Consumed before the error answer, so the close is a FIN, not an RST.
            io.skip(spans)?;
            Err(e)
        }
    }
}

fn parse_head(raw: &[u8]) -> Result<Request, ReadError> {
    let text = std::str::from_utf8(raw)
        .map_err(|_| ReadError::Status(400, "request head is not UTF-8"))?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Status(400, "malformed request line"));
    };
    if method.is_empty()
        || !method
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_')
    {
        return Err(ReadError::Status(400, "malformed method"));
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(ReadError::Status(505, "unsupported HTTP version")),
    };
    // Origin form, `*`, absolute form, and authority form for CONNECT.
    let target_ok = target.starts_with('/')
        || target == "*"
        || target.contains("://")
        || (method == "CONNECT" && !target.is_empty());
    if !target_ok {
        return Err(ReadError::Status(400, "malformed request target"));
    }
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Status(400, "malformed header line"));
        };
        if name.is_empty()
            || name
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(ReadError::Status(400, "malformed header name"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        http10,
        headers,
        body: Vec::new(),
        connection: 0,
        on_connection: 0,
    })
}

/// The body framing the head announces.
pub(super) fn framing(request: &Request) -> Result<Framing, (u16, &'static str)> {
    let te: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "transfer-encoding")
        .map(|(_, v)| v.as_str())
        .collect();
    if !te.is_empty() {
        let last = te
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .next_back()
            .unwrap_or_default();
        if !last.eq_ignore_ascii_case("chunked") {
            return Err((501, "unsupported transfer-encoding"));
        }
        if request.header("content-length").is_some() {
            return Err((400, "both content-length and transfer-encoding"));
        }
        return Ok(Framing::Chunked);
    }
    let mut len: Option<usize> = None;
    for (_, v) in request
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
    {
        for part in v.split(',') {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err((400, "malformed content-length"));
            }
            let n: usize = part.parse().map_err(|_| (413, "request body too large"))?;
            if len.is_some_and(|l| l != n) {
                return Err((400, "conflicting content-length"));
            }
            len = Some(n);
        }
    }
    match len {
        Some(n) if n > MAX_BODY => Err((413, "request body too large")),
        Some(0) | None => Ok(Framing::None),
        Some(n) => Ok(Framing::Length(n)),
    }
}

/// Reads (consuming) the body `framing` announces.
pub(super) fn read_body(io: &mut Io, framing: Framing) -> Result<Vec<u8>, ReadError> {
    match framing {
        Framing::None => Ok(Vec::new()),
        Framing::Length(n) => io.read_exact(n),
        Framing::Chunked => read_chunked(io),
    }
}

/// Peeks a `Content-Length` body of `n` bytes after a head spanning `head` bytes, both left
/// unread. Plain sockets only.
pub(super) fn peek_body(
    io: &mut Io,
    head: usize,
    n: usize,
    stopped: &dyn Fn() -> bool,
) -> Result<Vec<u8>, ReadError> {
    let total = head + n;
    let peeked = io.peek_until(total, |b| (b.len() >= total).then_some(total), stopped)?;
    let mut all = peeked.ok_or(ReadError::Io)?;
    Ok(all.split_off(head))
}

fn read_line(io: &mut Io, limit: usize) -> Result<Vec<u8>, ReadError> {
    io.read_delimited(limit, |buf, from| {
        buf[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|p| from + p + 1)
    })
}

fn read_chunked(io: &mut Io) -> Result<Vec<u8>, ReadError> {
    let malformed = |e| match e {
        ReadError::Status(..) => ReadError::Status(400, "malformed chunk size"),
        other => other,
    };
    let mut body = Vec::new();
    loop {
        let line = read_line(io, 1024).map_err(malformed)?;
        let text = std::str::from_utf8(&line)
            .map_err(|_| ReadError::Status(400, "malformed chunk size"))?;
        let size_text = text.trim_end().split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadError::Status(400, "malformed chunk size"))?;
        if body.len().saturating_add(size) > MAX_BODY {
            return Err(ReadError::Status(413, "request body too large"));
        }
        if size == 0 {
            // Trailers until the blank line.
            loop {
                let t = read_line(io, MAX_HEAD)?;
                if t == b"\r\n" || t == b"\n" {
                    return Ok(body);
                }
            }
        }
        body.extend_from_slice(&io.read_exact(size)?);
        let crlf = read_line(io, 2)?;
        if crlf != b"\r\n" && crlf != b"\n" {
            return Err(ReadError::Status(400, "malformed chunk terminator"));
        }
    }
}

/// A status line and headers, with the final blank line (and `Connection: close` when
/// `close`).
pub fn head_bytes(status: u16, headers: &[(String, String)], close: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(format!("HTTP/1.1 {status} {}\r\n", reason(status)).as_bytes());
    for (n, v) in headers {
        out.extend_from_slice(n.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Writes a complete response with `Content-Length` in one `write`.
pub fn write_full(
    out: &mut dyn Write,
    status: u16,
    mut headers: Vec<(String, String)>,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    headers.push(("Content-Length".into(), body.len().to_string()));
    let mut bytes = head_bytes(status, &headers, close);
    bytes.extend_from_slice(body);
    out.write_all(&bytes)
}

/// Writes a short `text/plain` response.
pub fn write_text(out: &mut dyn Write, status: u16, text: &str, close: bool) -> io::Result<()> {
    let headers = vec![(
        "Content-Type".to_string(),
        "text/plain; charset=utf-8".to_string(),
    )];
    write_full(out, status, headers, text.as_bytes(), close)
}

/// `data` as one chunk of a chunked body.
pub fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// The last chunk of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// The reason phrase sent with `status`.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
