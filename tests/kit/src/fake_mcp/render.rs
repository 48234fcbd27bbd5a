//! Framing (JSON vs SSE) and writing of answers, including the transport-level
//! faults: trickle, stall mid-body, reset, wrong id, malformed JSON, headers.

use serde_json::{Value, json};
use std::io::Write;
use std::time::Duration;

use super::config::{Action, Mode};
use super::http_server::{self as http, Conn, Flow, LAST_CHUNK, Request};
use super::mcp::{Answer, comment, log_notification, sse_event, sse_headers};
use super::server::{Route, Shared};

/// One piece of an SSE body.
enum Item {
    /// A complete event or comment.
    Bytes(Vec<u8>),
    /// Wait for the client's answers to these server→client request ids.
    Wait(Vec<String>, Duration),
    /// Keep the stream open with keep-alive comments until the client leaves.
    HoldOpen,
}

enum Body {
    Fixed(Vec<u8>),
    Stream(Vec<Item>),
}

#[derive(Clone, Copy)]
enum Strategy {
    Normal,
    Trickle(Duration),
    HangMidBody,
    Reset,
}

fn done(close: bool) -> Flow {
    if close { Flow::Close } else { Flow::KeepAlive }
}

fn wants_sse(route: &Route, method: &str) -> bool {
    match &route.cfg.response {
        Mode::Json => false,
        Mode::Sse => true,
        Mode::Mixed => {
            let mut st = route.lock();
            st.mixed += 1;
            st.mixed % 2 == 0
        }
        Mode::SseFor(methods) => methods.contains(&method),
    }
}

/// Cuts the text at (about) half, on a char boundary: never valid JSON.
fn truncate(text: String) -> String {
    let mut cut = (text.len() / 2).max(1).min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text[..cut].to_string()
}

fn sse_items(shared: &Shared, route: &Route, text: &str) -> Vec<Item> {
    let o = &route.cfg.sse;
    let named = o.event_name;
    let key = (o.event_ids || o.priming).then(|| format!("e{}", shared.next_id()));
    let mut seq = 0u64;
    let mut next_id = |always: bool| -> Option<String> {
        let key = key.as_ref()?;
        if !(always || o.event_ids) {
            return None;
        }
        seq += 1;
        Some(format!("{key}-{}", seq - 1))
    };
    let mut items = Vec::new();
    if o.priming {
        let id = next_id(true);
        items.push(Item::Bytes(sse_event(false, id.as_deref(), o.retry_ms, "")));
    }
    for n in 0..u64::from(o.notifications) {
        let id = next_id(false);
        items.push(Item::Bytes(sse_event(
            named,
            id.as_deref(),
            None,
            &log_notification(n),
        )));
    }
    let mut waits = Vec::new();
    let mut server_request = |method: &str, params: Option<Value>| {
        let rid = format!("srv-{}", shared.next_id());
        let mut msg = json!({"jsonrpc": "2.0", "id": rid, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        let id = next_id(false);
        items.push(Item::Bytes(sse_event(
            named,
            id.as_deref(),
            None,
            &msg.to_string(),
        )));
        waits.push(rid);
    };
    if o.server_ping {
        server_request("ping", None);
    }
    if o.server_sampling {
        server_request(
            "sampling/createMessage",
            Some(
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 16}),
            ),
        );
    }
    if let Some(t) = o.wait_for_answers {
        if !waits.is_empty() {
            items.push(Item::Wait(waits, t));
        }
    }
    let id = next_id(false);
    items.push(Item::Bytes(sse_event(named, id.as_deref(), None, text)));
    if o.hold_open {
        items.push(Item::HoldOpen);
    }
    items
}

/// Frames and writes `answer`, applying the transport-level part of `action`.
pub(super) fn emit(
    shared: &Shared,
    route: &Route,
    stream: &mut Conn<'_>,
    head: &Request,
    answer: Answer,
    action: Option<&Action>,
    close: bool,
) -> Flow {
    let (status, mut headers, body) = match answer {
        Answer::Rpc {
            status,
            mut msg,
            mut headers,
            method,
        } => {
            if action == Some(&Action::WrongId) {
                msg.set_wrong_id();
            }
            let mut text = msg.text();
            if action == Some(&Action::MalformedJson) {
                text = truncate(text);
            }
            if status == 200 && wants_sse(route, &method) {
                headers.extend(sse_headers());
                (
                    status,
                    headers,
                    Body::Stream(sse_items(shared, route, &text)),
                )
            } else {
                headers.push(("Content-Type".into(), "application/json".into()));
                (status, headers, Body::Fixed(text.into_bytes()))
            }
        }
        Answer::Empty { status, headers } => (status, headers, Body::Fixed(Vec::new())),
        Answer::Body {
            status,
            content_type,
            body,
            mut headers,
        } => {
            if let Some(ct) = content_type {
                headers.push(("Content-Type".into(), ct));
            }
            (status, headers, Body::Fixed(body))
        }
        Answer::Events { headers, events } => (
            200,
            headers,
            Body::Stream(events.into_iter().map(Item::Bytes).collect()),
        ),
    };
    match action {
        Some(Action::ContentType(ct)) => {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
            if let Some(ct) = ct {
                headers.push(("Content-Type".into(), (*ct).to_string()));
            }
        }
        Some(Action::ExtraHeader(n, v)) => headers.push(((*n).to_string(), (*v).to_string())),
        _ => {}
    }
    let strategy = match action {
        Some(Action::Trickle(d)) => Strategy::Trickle(*d),
        Some(Action::HangMidBody) => Strategy::HangMidBody,
        Some(Action::Reset) => Strategy::Reset,
        _ => Strategy::Normal,
    };
    let body = if head.method == "HEAD" {
        match body {
            Body::Fixed(b) => {
                // Announce the length, send nothing.
                headers.push(("Content-Length".into(), b.len().to_string()));
                return write_raw(stream, http::head_bytes(status, &headers, close), close);
            }
            Body::Stream(_) => Body::Fixed(Vec::new()),
        }
    } else {
        body
    };
    match body {
        Body::Fixed(bytes) => write_fixed(shared, stream, status, headers, &bytes, strategy, close),
        Body::Stream(items) => {
            write_stream(shared, stream, status, headers, items, strategy, close)
        }
    }
}

fn write_raw(stream: &mut Conn<'_>, bytes: Vec<u8>, close: bool) -> Flow {
    if stream.write_all(&bytes).is_err() {
        Flow::Close
    } else {
        done(close)
    }
}

fn write_fixed(
    shared: &Shared,
    stream: &mut Conn<'_>,
    status: u16,
    mut headers: Vec<(String, String)>,
    bytes: &[u8],
    strategy: Strategy,
    close: bool,
) -> Flow {
    let bodiless = status == 204 || status == 304 || (100..200).contains(&status);
    if !bodiless {
        headers.push(("Content-Length".into(), bytes.len().to_string()));
    }
    let bytes = if bodiless { &[][..] } else { bytes };
    let mut out = http::head_bytes(status, &headers, close);
    let half = bytes.len() / 2;
    match strategy {
        Strategy::Normal => {
            out.extend_from_slice(bytes);
            write_raw(stream, out, close)
        }
        Strategy::Trickle(d) => {
            if stream.write_all(&out).is_err() {
                return Flow::Close;
            }
            for b in bytes {
                if shared.wait_stop(Some(d)) || stream.write_all(std::slice::from_ref(b)).is_err() {
                    return Flow::Close;
                }
            }
            done(close)
        }
        Strategy::HangMidBody => {
            out.extend_from_slice(&bytes[..half]);
            let _ = stream.write_all(&out);
            shared.wait_stop(None);
            Flow::Close
        }
        Strategy::Reset => {
            out.extend_from_slice(&bytes[..half]);
            let _ = stream.write_all(&out);
            shared.wait_stop(Some(Duration::from_millis(20)));
            Flow::Reset
        }
    }
}

fn write_stream(
    shared: &Shared,
    stream: &mut Conn<'_>,
    status: u16,
    mut headers: Vec<(String, String)>,
    items: Vec<Item>,
    strategy: Strategy,
    close: bool,
) -> Flow {
    headers.push(("Transfer-Encoding".into(), "chunked".into()));
    let mut pending = http::head_bytes(status, &headers, close);
    let flat = || -> Vec<u8> {
        items
            .iter()
            .filter_map(|i| {
                if let Item::Bytes(b) = i {
                    Some(b.as_slice())
                } else {
                    None
                }
            })
            .flatten()
            .copied()
            .collect()
    };
    match strategy {
        Strategy::Normal => {}
        Strategy::Trickle(d) => {
            if stream.write_all(&pending).is_err() {
                return Flow::Close;
            }
            for b in flat() {
                if shared.wait_stop(Some(d)) || stream.write_all(&http::chunk(&[b])).is_err() {
                    return Flow::Close;
                }
            }
            return write_raw(stream, LAST_CHUNK.to_vec(), close);
        }
        Strategy::HangMidBody | Strategy::Reset => {
            let all = flat();
            pending.extend_from_slice(&http::chunk(&all[..all.len() / 2]));
            let _ = stream.write_all(&pending);
            if matches!(strategy, Strategy::Reset) {
                shared.wait_stop(Some(Duration::from_millis(20)));
                return Flow::Reset;
            }
            shared.wait_stop(None);
            return Flow::Close;
        }
    }
    // Normal: the head goes out with the first event, the last chunk with the
    // last event; every event is its own write (flushed as written).
    let count = items.len();
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Item::Bytes(b) => {
                pending.extend_from_slice(&http::chunk(&b));
                if i + 1 < count {
                    if stream.write_all(&pending).is_err() {
                        return Flow::Close;
                    }
                    pending.clear();
                }
            }
            Item::Wait(ids, t) => {
                shared.wait_answers(&ids, t);
            }
            Item::HoldOpen => {
                if !pending.is_empty() && stream.write_all(&pending).is_err() {
                    return Flow::Close;
                }
                loop {
                    if shared.wait_stop(Some(Duration::from_millis(100)))
                        || stream.write_all(&http::chunk(b": keep-alive\n\n")).is_err()
                    {
                        return Flow::Close;
                    }
                }
            }
        }
    }
    pending.extend_from_slice(LAST_CHUNK);
    write_raw(stream, pending, close)
}

/// An SSE stream that never carries the answer: comments and notifications
/// every 50 ms until the client leaves or the server stops.
pub(super) fn sse_forever(
    shared: &Shared,
    route: &Route,
    stream: &mut Conn<'_>,
    close: bool,
) -> Flow {
    let mut headers = sse_headers();
    headers.push(("Transfer-Encoding".into(), "chunked".into()));
    if stream
        .write_all(&http::head_bytes(200, &headers, close))
        .is_err()
    {
        return Flow::Close;
    }
    let mut n = 0u64;
    loop {
        if shared.wait_stop(Some(Duration::from_millis(50))) {
            return Flow::Close;
        }
        let data = if n % 4 == 3 {
            sse_event(route.cfg.sse.event_name, None, None, &log_notification(n))
        } else {
            comment(14)
        };
        if stream.write_all(&http::chunk(&data)).is_err() {
            return Flow::Close;
        }
        n += 1;
    }
}

/// The deprecated HTTP+SSE transport's stream (what a `GET` of its `/sse` opens): an
/// `endpoint` event naming where to POST messages, then comments until the client leaves or
/// the server drops.
pub(super) fn sse_endpoint_stream(shared: &Shared, stream: &mut Conn<'_>, close: bool) -> Flow {
    let mut headers = sse_headers();
    headers.push(("Transfer-Encoding".into(), "chunked".into()));
    let event = b"event: endpoint\ndata: /messages?sessionId=fake-sse-session\n\n";
    if stream
        .write_all(&http::head_bytes(200, &headers, close))
        .and_then(|()| stream.write_all(&http::chunk(event)))
        .is_err()
    {
        return Flow::Close;
    }
    loop {
        if shared.wait_stop(Some(Duration::from_millis(50)))
            || stream.write_all(&http::chunk(&comment(8))).is_err()
        {
            return Flow::Close;
        }
    }
}
