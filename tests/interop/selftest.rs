//! Self-test of the interop fixtures, without agenthealth: every server starts,
//! and answers `initialize` (offering 2025-11-25) and `server/discover`
//! (2026-07-28) as `Kind::eras` / `StdioKind::eras` say. When one of these fails,
//! the fixture is broken, not agenthealth.

use super::{
    Eras, HttpMode, Kind, LEGACY_REVISIONS, MODERN_REVISION, Server, StdioKind, StdioServer,
};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

const IO_TIMEOUT: Duration = Duration::from_secs(20);

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "interop-selftest", "version": "0"}}})
}

fn discover() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "interop-selftest", "version": "0"}}}})
}

/// Checks one reply against what `eras` promises.
fn check(what: &str, eras: Eras, init: &Value, disc: &Value) {
    match eras.legacy {
        Some(version) => assert_eq!(
            init["result"]["protocolVersion"], version,
            "{what}: initialize → {init}"
        ),
        None => assert_eq!(init["error"]["code"], -32022, "{what}: initialize → {init}"),
    }
    if eras.modern {
        let versions = &disc["result"]["supportedVersions"];
        assert!(
            versions
                .as_array()
                .is_some_and(|v| v.contains(&json!(MODERN_REVISION))),
            "{what}: discover → {disc}"
        );
    } else {
        assert!(disc.get("error").is_some(), "{what}: discover → {disc}");
    }
}

/// One POST over a fresh connection; the JSON-RPC message from a JSON or SSE body.
fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Value {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let body = body.to_string();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        let _ = write!(request, "{name}: {value}\r\n");
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    // Read until the first complete JSON message: an SSE stream may stay open.
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(message) = first_message(&response) {
            return message;
        }
        let n = stream.read(&mut buf).unwrap_or_else(|err| {
            panic!("{url}: {err}; got {:?}", String::from_utf8_lossy(&response))
        });
        assert!(
            n > 0,
            "{url}: no JSON-RPC message in {:?}",
            String::from_utf8_lossy(&response)
        );
        response.extend_from_slice(&buf[..n]);
    }
}

fn first_message(response: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(response);
    let (_, body) = text.split_once("\r\n\r\n")?;
    // Chunked or SSE framing: any line that parses as a JSON object is the message.
    body.lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .find_map(|line| {
            serde_json::from_str::<Value>(line)
                .ok()
                .filter(Value::is_object)
        })
}

fn check_http(kind: Kind) {
    let server = Server::start(kind);
    let init = post(server.url(), &initialize(), &[]);
    let disc = post(
        server.url(),
        &discover(),
        &[
            ("MCP-Protocol-Version", MODERN_REVISION),
            ("Mcp-Method", "server/discover"),
        ],
    );
    check(&format!("{kind:?}"), kind.eras(), &init, &disc);
}

/// One request to a fresh stdio process; its reply with the same id.
fn exchange(server: &StdioServer, request: &Value) -> Value {
    let mut child = server
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let stdout = child.stdout.take().unwrap();
    let id = request["id"].clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                if message["id"] == id {
                    let _ = tx.send(message);
                    return;
                }
            }
        }
    });
    let reply = rx.recv_timeout(IO_TIMEOUT);
    let _ = child.kill();
    let _ = child.wait();
    reply.unwrap_or_else(|_| panic!("{:?}: no reply to {request}", server.kind()))
}

fn check_stdio(kind: StdioKind) {
    let server = StdioServer::prepare(kind);
    let init = exchange(&server, &initialize());
    let disc = exchange(&server, &discover());
    check(&format!("{kind:?}"), kind.eras(), &init, &disc);
}

#[test]
fn py_http_modes() {
    for mode in [
        HttpMode::Sse,
        HttpMode::Json,
        HttpMode::Stateless,
        HttpMode::StatelessSse,
    ] {
        check_http(Kind::PyHttp { mode, pin: None });
    }
}

#[test]
fn py_http_pinned() {
    for pin in LEGACY_REVISIONS {
        check_http(Kind::PyHttp {
            mode: HttpMode::Sse,
            pin: Some(pin),
        });
    }
    check_http(Kind::PyHttp {
        mode: HttpMode::Stateless,
        pin: Some("2025-06-18"),
    });
}

#[test]
fn node_http() {
    for kind in [
        Kind::Everything,
        Kind::Ts1Json,
        Kind::Ts2 {
            legacy_reject: false,
        },
        Kind::Ts2 {
            legacy_reject: true,
        },
    ] {
        check_http(kind);
    }
}

#[test]
fn stdio_servers() {
    for kind in [
        StdioKind::Py { pin: None },
        StdioKind::Py {
            pin: Some("2025-03-26"),
        },
        StdioKind::Time,
        StdioKind::Filesystem,
        StdioKind::Memory,
        StdioKind::Everything,
        StdioKind::Ts2 {
            legacy_reject: false,
        },
        StdioKind::Ts2 {
            legacy_reject: true,
        },
    ] {
        check_stdio(kind);
    }
}

/// Dropping a Server kills it: its port stops accepting connections.
#[test]
fn drop_stops_the_server() {
    let server = Server::start(Kind::Ts2 {
        legacy_reject: true,
    });
    let authority = server
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    TcpStream::connect(&authority).expect("running server accepts");
    drop(server);
    assert!(
        TcpStream::connect(&authority).is_err(),
        "{authority} still accepts after drop"
    );
}
