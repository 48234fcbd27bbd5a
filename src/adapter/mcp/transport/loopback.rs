//! Test support: a tiny HTTP/1.1 server on 127.0.0.1 whose every answer is scripted as raw
//! bytes, so tests can send exactly what a hostile or quirky MCP server would — trickles,
//! streams held open, duplicate headers — and inspect every request it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Which accepted connection (0-based) carried it.
    pub connection: usize,
}

impl Request {
    /// The first value of a header (names compared ignoring case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON body (`Null` when there is none).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of a POST, or `""`.
    pub fn rpc(&self) -> String {
        self.json()["method"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The JSON-RPC id of a POST.
    pub fn id(&self) -> Value {
        self.json()["id"].clone()
    }
}

/// What the server does with one request.
pub enum Reply {
    /// Writes the bytes and keeps the connection for the next request.
    Send(Vec<u8>),
    /// Writes the bytes, then holds the connection open (without answering anything else)
    /// until the client closes it or the time is up.
    Hold(Vec<u8>, Duration),
    /// Writes the bytes and closes the connection.
    Close(Vec<u8>),
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// A running server.
pub struct Server {
    pub url: String,
    log: Arc<Mutex<Vec<Request>>>,
    connections: Arc<AtomicUsize>,
}

impl Server {
    /// Starts a server answering with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let (log2, conns) = (Arc::clone(&log), Arc::clone(&connections));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let n = conns.fetch_add(1, Ordering::SeqCst);
                let (handler, log) = (Arc::clone(&handler), Arc::clone(&log2));
                thread::spawn(move || serve(stream, n, &*handler, &log));
            }
        });
        Server {
            url,
            log,
            connections,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The requests with this HTTP method.
    pub fn with_method(&self, method: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == method)
            .collect()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn serve(stream: TcpStream, connection: usize, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader, connection) {
        log.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request.clone());
        match handler(&request) {
            Reply::Send(bytes) => {
                if writer.write_all(&bytes).is_err() {
                    return;
                }
            }
            Reply::Hold(bytes, time) => {
                let _ = writer.write_all(&bytes);
                let _ = reader.get_ref().set_read_timeout(Some(time));
                let mut sink = [0u8; 1024];
                while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
            Reply::Close(bytes) => {
                let _ = writer.write_all(&bytes);
                return;
            }
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>, connection: usize) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        headers,
        body,
        connection,
    })
}

/// A complete response with a body of known length.
pub fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} X\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A JSON response.
pub fn json(status: u16, body: &str) -> Vec<u8> {
    response(
        status,
        &[("content-type", "application/json")],
        body.as_bytes(),
    )
}

/// A JSON-RPC result for request `id`.
pub fn result(id: &Value, result: &str) -> Vec<u8> {
    json(
        200,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
    )
}

/// The head of an event stream without a length: its body ends when the connection closes.
pub fn sse_head(extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
    for (name, value) in extra {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// One event carrying `data`.
pub fn event(data: &str) -> String {
    format!("event: message\ndata: {data}\n\n")
}
