//! `floor_client`: the floor of `make bench` — the requests of a passive `ping mcp`, sent by
//! the least client we can write: one connection, each request in one write, responses read
//! by their framing only (`Content-Length`, chunked, or the end of a HEAD), nothing parsed.
//!
//! ```text
//! floor_client modern|legacy URL
//! ```
//!
//! `modern`: HEAD, `server/discover`, `tools/list`, `resources/list`, `prompts/list`.
//! `legacy`: HEAD, `server/discover` (rejected), `initialize` (its `Mcp-Session-Id` kept),
//! `notifications/initialized`, the three lists, and the session's `DELETE`. The bodies and
//! headers are those agenthealth sends. Exits 1 on any failure, silently.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use nix::libc;
use nix::sys::socket::setsockopt;
use nix::{setsockopt_impl, sockopt_impl};

sockopt_impl!(
    QuickAck,
    SetOnly,
    libc::IPPROTO_TCP,
    libc::TCP_QUICKACK,
    bool
);

/// The socket, acknowledging at once after every read (as agenthealth does): without it a
/// server that writes head and body apart with Nagle on (uvicorn) waits 40 ms per response.
struct Quick(TcpStream);

impl Read for Quick {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        let _ = setsockopt(&self.0, QuickAck, &true);
        Ok(n)
    }
}

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"agenthealth","version":"0.1.0"}}"#;

struct Conn {
    host: String,
    path: String,
    reader: BufReader<Quick>,
    writer: TcpStream,
}

impl Conn {
    /// Sends one request in one write and reads its response; returns the session id header.
    fn exchange(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> io::Result<Option<String>> {
        let mut req = format!("{method} {} HTTP/1.1\r\nhost: {}\r\n", self.path, self.host);
        for (name, value) in headers {
            req.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() {
            req.push_str(&format!(
                "content-type: application/json\r\ncontent-length: {}\r\n",
                body.len()
            ));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.writer.write_all(req.as_bytes())?;
        let mut length = 0usize;
        let mut chunked = false;
        let mut session = None;
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                let value = value.trim();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.parse().unwrap_or(0),
                    "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                    "mcp-session-id" => session = Some(value.to_string()),
                    _ => {}
                }
            }
        }
        if method == "HEAD" {
            return Ok(session);
        }
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim(), 16)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
                let mut skip = vec![0u8; size + 2];
                self.reader.read_exact(&mut skip)?;
                if size == 0 {
                    break;
                }
            }
        } else {
            let mut skip = vec![0u8; length];
            self.reader.read_exact(&mut skip)?;
        }
        Ok(session)
    }
}

fn post(id: u32, method: &str, members: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{members}}}}}"#)
}

fn run(script: &str, url: &str) -> io::Result<()> {
    let rest = url
        .strip_prefix("http://")
        .ok_or(io::ErrorKind::InvalidInput)?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let stream = TcpStream::connect(host)?;
    stream.set_nodelay(true)?;
    let mut c = Conn {
        host: host.to_string(),
        path: format!("/{path}"),
        reader: BufReader::new(Quick(stream.try_clone()?)),
        writer: stream,
    };
    let accept = ("accept", "application/json, text/event-stream");
    c.exchange("HEAD", &[accept], "")?;
    let modern = [accept, ("mcp-protocol-version", MODERN)];
    let lists = ["tools/list", "resources/list", "prompts/list"];
    if script == "modern" {
        c.exchange("POST", &modern, &post(1, "server/discover", META))?;
        for (id, list) in (2..).zip(lists) {
            let mut h = modern.to_vec();
            h.push(("mcp-method", list));
            c.exchange("POST", &h, &post(id, list, META))?;
        }
        return Ok(());
    }
    c.exchange("POST", &modern, &post(1, "server/discover", META))?;
    let init = format!(
        r#""protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"agenthealth","version":"0.1.0"}}"#
    );
    let session = c
        .exchange("POST", &[accept], &post(2, "initialize", &init))?
        .unwrap_or_default();
    let legacy = [
        accept,
        ("mcp-protocol-version", LEGACY),
        ("mcp-session-id", session.as_str()),
    ];
    c.exchange(
        "POST",
        &legacy,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )?;
    for (id, list) in (4..).zip(lists) {
        c.exchange("POST", &legacy, &post(id, list, ""))?;
    }
    if !session.is_empty() {
        c.exchange("DELETE", &legacy, "")?;
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.as_slice() {
        [script, url] if script == "modern" || script == "legacy" => run(script, url).is_ok(),
        _ => {
            eprintln!("usage: floor_client modern|legacy URL");
            false
        }
    };
    std::process::exit(if ok { 0 } else { 1 });
}
