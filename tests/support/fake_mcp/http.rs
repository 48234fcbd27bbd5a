//! Minimal HTTP/1.1 request reading and response writing on a `TcpStream`.
//!
//! The request head is read with `peek` + exact consumption, so nothing past
//! the head is taken out of the kernel buffer. That lets a handler leave the
//! body unread and close, which makes the kernel send RST (see `Action::Reset`).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::util::reason;

/// Largest accepted request head.
pub(super) const MAX_HEAD: usize = 64 * 1024;
/// Largest accepted request body.
pub(super) const MAX_BODY: usize = 4 * 1024 * 1024;

/// A parsed request line and headers.
#[derive(Debug)]
pub(super) struct Head {
    /// Method as sent (`GET`, `POST`, …).
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Query string without `?`, if any.
    pub query: Option<String>,
    /// `true` for HTTP/1.0.
    pub http10: bool,
    /// Header (lower-cased name, trimmed value) pairs in arrival order.
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// First value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the connection may be reused after this request.
    pub fn keep_alive(&self) -> bool {
        let conn = self.header("connection").map(str::to_ascii_lowercase);
        let has = |tok: &str| {
            conn.as_deref()
                .is_some_and(|c| c.split(',').any(|t| t.trim() == tok))
        };
        if self.http10 {
            has("keep-alive")
        } else {
            !has("close")
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

/// Why a request could not be read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The peer closed before a new request started.
    Eof,
    /// Socket error or close mid-request.
    Io,
    /// Malformed or oversized request: answer this status and close.
    Status(u16, &'static str),
}

/// Reads bytes up to and including the first blank line (`\n\n` or `\n\r\n`),
/// consuming exactly those bytes. `limit` bounds the total.
fn read_until_blank_line(
    stream: &mut TcpStream,
    limit: usize,
    first: bool,
) -> Result<Vec<u8>, ReadError> {
    read_delimited(stream, limit, first, |buf, from| {
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
    })
}

/// Reads one line (through `\n`), consuming exactly it.
fn read_line(stream: &mut TcpStream, limit: usize) -> Result<Vec<u8>, ReadError> {
    read_delimited(stream, limit, false, |buf, from| {
        buf[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|p| from + p + 1)
    })
}

/// Peeks, searches with `find(buf, search_from)` for the end offset, and consumes
/// only what belongs to the item.
fn read_delimited(
    stream: &mut TcpStream,
    limit: usize,
    first: bool,
    find: impl Fn(&[u8], usize) -> Option<usize>,
) -> Result<Vec<u8>, ReadError> {
    let mut acc: Vec<u8> = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        let n = match stream.peek(&mut tmp) {
            Ok(0) if first && acc.is_empty() => return Err(ReadError::Eof),
            Ok(0) => return Err(ReadError::Io),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) if first && acc.is_empty() => return Err(ReadError::Eof),
            Err(_) => return Err(ReadError::Io),
        };
        let from = acc.len();
        acc.extend_from_slice(&tmp[..n]);
        let (take, done) = match find(&acc, from) {
            Some(end) => (end.saturating_sub(from), Some(end)),
            None => (n, None),
        };
        stream
            .read_exact(&mut tmp[..take])
            .map_err(|_| ReadError::Io)?;
        if let Some(end) = done {
            if end > limit {
                return Err(ReadError::Status(431, "request head too large"));
            }
            acc.truncate(end);
            return Ok(acc);
        }
        if acc.len() > limit {
            return Err(ReadError::Status(431, "request head too large"));
        }
    }
}

/// Reads and parses the next request head. `Eof` when the peer closed cleanly
/// between requests.
pub(super) fn read_head(stream: &mut TcpStream) -> Result<Head, ReadError> {
    let raw = loop {
        let raw = read_until_blank_line(stream, MAX_HEAD, true)?;
        // Tolerate stray blank lines between keep-alive requests.
        if raw.iter().all(|b| *b == b'\r' || *b == b'\n') {
            continue;
        }
        break raw;
    };
    let text = std::str::from_utf8(&raw)
        .map_err(|_| ReadError::Status(400, "request head is not UTF-8"))?;
    let text = text.trim_start_matches(['\r', '\n']);
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
    // Accept origin-form and absolute-form targets.
    let origin = match target.find("://") {
        Some(i) => target[i + 3..]
            .find('/')
            .map_or("/", |j| &target[i + 3 + j..]),
        None => target,
    };
    if !origin.starts_with('/') && origin != "*" {
        return Err(ReadError::Status(400, "malformed request target"));
    }
    let (path, query) = match origin.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (origin.to_string(), None),
    };
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
    Ok(Head {
        method: method.to_string(),
        path,
        query,
        http10,
        headers,
    })
}

/// Determines the body framing from the head.
pub(super) fn framing(head: &Head) -> Result<Framing, (u16, &'static str)> {
    let te: Vec<&str> = head
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
        if head.header("content-length").is_some() {
            return Err((400, "both content-length and transfer-encoding"));
        }
        return Ok(Framing::Chunked);
    }
    let mut len: Option<usize> = None;
    for (_, v) in head.headers.iter().filter(|(n, _)| n == "content-length") {
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

/// Reads the body per `framing` (consuming it).
pub(super) fn read_body(stream: &mut TcpStream, framing: Framing) -> Result<Vec<u8>, ReadError> {
    match framing {
        Framing::None => Ok(Vec::new()),
        Framing::Length(n) => {
            let mut body = vec![0u8; n];
            stream.read_exact(&mut body).map_err(|_| ReadError::Io)?;
            Ok(body)
        }
        Framing::Chunked => read_chunked(stream),
    }
}

fn read_chunked(stream: &mut TcpStream) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let line = read_line(stream, 1024).map_err(|e| match e {
            ReadError::Status(..) => ReadError::Status(400, "malformed chunk size"),
            other => other,
        })?;
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
                let t = read_line(stream, MAX_HEAD)?;
                if t == b"\r\n" || t == b"\n" {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        stream
            .read_exact(&mut body[start..])
            .map_err(|_| ReadError::Io)?;
        let crlf = read_line(stream, 2)?;
        if crlf != b"\r\n" && crlf != b"\n" {
            return Err(ReadError::Status(400, "malformed chunk terminator"));
        }
    }
}

/// Waits until `n` body bytes are available and returns a copy without
/// consuming them. Gives up after `patience`, after 500 ms without progress
/// (a peer that half-closed mid-body looks like that), or when `stopped()`.
pub(super) fn peek_body(
    stream: &mut TcpStream,
    n: usize,
    patience: Duration,
    stopped: impl Fn() -> bool,
) -> Result<Vec<u8>, ReadError> {
    let mut buf = vec![0u8; n];
    let start = Instant::now();
    let (mut seen, mut progress_at) = (0usize, start);
    loop {
        match stream.peek(&mut buf) {
            Ok(got) if got >= n => return Ok(buf),
            Ok(0) => return Err(ReadError::Io),
            Ok(got) if got > seen => (seen, progress_at) = (got, Instant::now()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(ReadError::Io),
        }
        let now = Instant::now();
        if now - start >= patience || now - progress_at >= Duration::from_millis(500) || stopped() {
            return Err(ReadError::Io);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Discards exactly `n` bytes (a body that was only peeked).
pub(super) fn consume(stream: &mut TcpStream, n: usize) -> io::Result<()> {
    let mut tmp = [0u8; 8192];
    let mut left = n;
    while left > 0 {
        let k = left.min(tmp.len());
        stream.read_exact(&mut tmp[..k])?;
        left -= k;
    }
    Ok(())
}

/// Serialises a status line and headers (with the final blank line).
pub(super) fn head_bytes(status: u16, headers: &[(String, String)], close: bool) -> Vec<u8> {
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
pub(super) fn write_full(
    stream: &mut TcpStream,
    status: u16,
    mut headers: Vec<(String, String)>,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    headers.push(("Content-Length".into(), body.len().to_string()));
    let mut out = head_bytes(status, &headers, close);
    out.extend_from_slice(body);
    stream.write_all(&out)
}

/// Writes a short `text/plain` response.
pub(super) fn write_text(
    stream: &mut TcpStream,
    status: u16,
    text: &str,
    close: bool,
) -> io::Result<()> {
    let headers = vec![(
        "Content-Type".to_string(),
        "text/plain; charset=utf-8".to_string(),
    )];
    write_full(stream, status, headers, text.as_bytes(), close)
}

/// Frames `data` as one chunk of a chunked body.
pub(super) fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// The last chunk of a chunked body.
pub(super) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";
