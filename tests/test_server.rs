//! The one HTTP test server (`tests/kit/src/http_server`) acts out what the other tests rely
//! on: a reset is an RST and a close a FIN, a request left unread for a possible reset is
//! consumed before the next one, holds end, a dropped server releases every connection. A
//! raw socket plays the client, so nothing of agenthealth is in the way.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agenthealth_testkit::http_server::{Reply, Server};

/// The bound on every wait here.
const LONG: Duration = Duration::from_secs(5);

fn connect(server: &Server) -> TcpStream {
    let s = TcpStream::connect(server.addr()).expect("connect");
    s.set_read_timeout(Some(LONG)).expect("timeout");
    s
}

/// Everything until the server closes, and how it closed.
fn read_to_close(s: &mut TcpStream) -> (Vec<u8>, Option<ErrorKind>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (got, None),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return (got, Some(e.kind())),
        }
    }
}

/// Reads one response with a `Content-Length` body.
fn read_response(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).expect("head"), 1, "closed mid-head");
        got.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&got).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().expect("length"));
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).expect("body");
    got.extend_from_slice(&body);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn a_reset_is_an_rst_before_the_head_and_mid_body() {
    let server = Server::start(|r| match r.target.as_str() {
        "/before" => Reply::ResetBeforeHead,
        _ => Reply::ResetMidBody {
            content_length: 10,
            sent: b"half".to_vec(),
        },
    });
    for (path, sent) in [("/before", ""), ("/mid", "half")] {
        let mut s = connect(&server);
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .expect("request");
        let (got, end) = read_to_close(&mut s);
        assert_eq!(end, Some(ErrorKind::ConnectionReset), "{path}");
        let got = String::from_utf8_lossy(&got);
        assert!(got.ends_with(sent), "{path}: {got:?}");
    }
    assert_eq!(server.requests().len(), 2, "resets are recorded too");
}

#[test]
fn a_close_mid_body_is_a_fin_after_what_was_sent() {
    let server = Server::start(|_| Reply::CloseMidBody {
        content_length: 10,
        sent: b"half".to_vec(),
    });
    let mut s = connect(&server);
    s.write_all(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
        .expect("request");
    let (got, end) = read_to_close(&mut s);
    assert_eq!(end, None, "a clean close");
    assert!(got.ends_with(b"Content-Length: 10\r\n\r\nhalf"), "{got:?}");
}

#[test]
fn keep_alive_requests_are_read_whole_one_after_another() {
    // A scripted server may reset any request, so each stays unread until answered.
    let server = Server::start(|r| Reply::status(200).body(r.body.clone()));
    let mut s = connect(&server);
    s.write_all(b"POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nfirst")
        .expect("1");
    assert!(read_response(&mut s).ends_with("\r\n\r\nfirst"));
    s.write_all(
        b"POST /b?q=1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
    )
    .expect("2");
    assert_eq!(read_response(&mut s), "HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"3\r\nsec\r\n3\r\nond\r\n0\r\n\r\n")
        .expect("chunks");
    assert!(read_response(&mut s).ends_with("\r\n\r\nsecond"));
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[1].path(), seen[1].query()), ("/b", Some("q=1")));
    assert_eq!(seen[1].body, b"second");
    assert!(seen.iter().all(|r| r.connection == 0));
    assert_eq!(server.connections(), 1);
}

#[test]
fn a_hold_ends_when_its_time_is_up() {
    let server = Server::start(|_| Reply::Hold(b"partial".to_vec(), Duration::from_millis(100)));
    let mut s = connect(&server);
    let started = Instant::now();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("request");
    let (got, end) = read_to_close(&mut s);
    assert_eq!((got.as_slice(), end), (&b"partial"[..], None));
    assert!(started.elapsed() < LONG, "{:?}", started.elapsed());
}

#[test]
fn what_is_not_http_gets_a_400() {
    let server = Server::start(|_| Reply::status(200));
    let mut s = connect(&server);
    // The first bytes of a TLS ClientHello.
    s.write_all(&[0x16, 0x03, 0x01, 0x00, 0x05]).expect("hello");
    let (got, _) = read_to_close(&mut s);
    assert!(got.starts_with(b"HTTP/1.1 400 "), "{got:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn dropping_the_server_releases_hung_connections() {
    let (arrived, arrival) = mpsc::channel();
    let server = Server::start(move |_| {
        let _ = arrived.send(());
        Reply::HangBeforeHead
    });
    let mut s = connect(&server);
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("request");
    arrival.recv_timeout(LONG).expect("the request arrived");
    let started = Instant::now();
    drop(server);
    let (got, _) = read_to_close(&mut s);
    assert!(got.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}
