//! The parsers of untrusted input, reachable from the fuzz targets in `fuzz/`: the only
//! public surface besides [`crate::run`], hidden from the documentation.
//!
//! A release build aborts on a panic (`panic = "abort"`), so a panic on a server's bytes
//! would end a run with no document: every parser that reads what a server, a file or the
//! environment supplies is called from here, and each function also checks the property
//! that parser promises (a panic here is a finding). The functions take bytes and return
//! nothing a caller could depend on, so this surface cannot grow into an API.

use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::adapter::mcp::{jsonrpc, param_headers, schema, sse};
use crate::text::rfc3339;

/// Server-Sent Events: parsing `data` whole or cut at every offset in `cuts` yields the same
/// events, the same error and the same last event id (an SSE parser must not depend on how
/// the network chunks the stream).
pub fn sse(data: &[u8], cuts: &[usize]) {
    let budget = 64 * 1024;
    let whole = run_sse(&[data], budget);
    let chunked = run_sse(&pieces(data, cuts), budget);
    assert_eq!(whole, chunked, "chunking changed the events");
}

/// How the chunking targets read their input: the first byte says how many cut points follow
/// (up to eight, one byte each, at four times its value); the rest is the stream.
pub fn cuts(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let n = usize::from(data.first().copied().unwrap_or(0) % 9);
    let (head, stream) = data.split_at(data.len().min(1 + n));
    let mut cuts: Vec<usize> = head.iter().skip(1).map(|&b| usize::from(b) * 4).collect();
    cuts.sort_unstable();
    (cuts, stream)
}

/// `data` cut at each offset in `cuts` (clamped into order and into the data).
fn pieces<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut at = 0;
    for &cut in cuts {
        let cut = cut.min(data.len()).max(at);
        pieces.push(&data[at..cut]);
        at = cut;
    }
    pieces.push(&data[at..]);
    pieces
}

/// Events, the first error and the last event id of feeding `chunks` in order.
fn run_sse(chunks: &[&[u8]], budget: usize) -> (Vec<sse::Event>, Option<sse::SseError>, String) {
    let mut parser = sse::SseParser::new(budget);
    let mut events = Vec::new();
    for chunk in chunks {
        if let Err(e) = parser.feed(chunk, &mut events) {
            return (events, Some(e), parser.last_event_id().to_string());
        }
    }
    parser.finish();
    (events, None, parser.last_event_id().to_string())
}

/// `serve`'s request heads, as any client sends them: the heads one connection carries
/// (requests sent back to back: pipelined) come out complete, too large or still arriving the
/// same whether the bytes come whole or cut at every offset in `cuts` (under `serve`'s limit
/// and under one short inputs cross), and what `parse_head` accepts holds to RFC 9112/9110: a
/// token method, an origin path and query, token header names, and trimmed values with no
/// control character but HTAB (a bare CR, LF or NUL in a value is refused, not passed on).
pub fn http_head(data: &[u8], cuts: &[usize]) {
    use crate::serve::http_server::{self};
    let pieces = pieces(data, cuts);
    for limit in [http_server::LIMITS.head_bytes, 64] {
        let whole = head_arrival(&[data], limit);
        assert_eq!(
            head_arrival(&pieces, limit),
            whole,
            "chunking changed the heads"
        );
        for head in &whole.0 {
            assert!(head.len() <= limit);
            assert!(
                head.ends_with(b"\n\n") || head.ends_with(b"\n\r\n"),
                "{head:?}"
            );
            if let Ok(request) = http_server::parse_head(head) {
                parsed_holds_to_the_grammar(&request);
            }
        }
    }
}

/// What the head parser accepted is what RFC 9112/9110 allow.
fn parsed_holds_to_the_grammar(request: &crate::serve::http_server::RequestHead<'_>) {
    // RFC 9110's tchar, written out again rather than borrowed from the parser.
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let token = |s: &str| !s.is_empty() && s.bytes().all(tchar);
    assert!(token(request.method), "{:?}", request.method);
    let path = request.path;
    assert!(
        path.starts_with('/') && !path.contains(['?', '#']),
        "{path:?}"
    );
    assert!(!path.bytes().any(|b| b.is_ascii_control()), "{path:?}");
    if let Some(query) = request.query {
        assert!(!query.contains('#') && !query.bytes().any(|b| b.is_ascii_control()));
    }
    for &(name, value) in request.headers() {
        assert!(token(name), "{name:?}");
        assert_eq!(value.trim_matches([' ', '\t']), value);
        let control = |b: u8| b.is_ascii_control() && b != b'\t';
        assert!(!value.bytes().any(control), "{name}: {value:?}");
        assert!(request.header(name).is_some());
    }
}

/// The heads that `pieces` arriving in order complete, owned, and whether a head was too
/// large (which ends the connection, so nothing after it counts): each head is taken as a
/// connection takes it, and what follows it is the next one's start.
fn head_arrival(pieces: &[&[u8]], limit: usize) -> (Vec<Vec<u8>>, bool) {
    use crate::serve::http_server::{Arrival, HeadBuf};
    let mut buf = HeadBuf::default();
    let mut heads = Vec::new();
    for piece in pieces {
        let mut next: &[u8] = piece;
        loop {
            match buf.push(next, limit) {
                Arrival::More => break,
                Arrival::Complete(head) => {
                    let head = head.to_vec();
                    buf.take(head.len());
                    heads.push(head);
                    next = &[];
                }
                Arrival::TooLarge => return (heads, true),
            }
        }
    }
    (heads, false)
}

/// The stdio line framer: a child's stdout cut at every offset in `cuts` frames into the
/// lines splitting it at each `\n` gives, each over-long line refused once and never kept,
/// and the framer never holds more than one line's bound plus the piece just received — under
/// [`crate::process::MAX_LINE_BYTES`] and under a bound short inputs cross.
pub fn lines(data: &[u8], cuts: &[usize]) {
    let pieces = pieces(data, cuts);
    lines_within::<16>(data, &pieces);
    lines_within::<{ crate::process::MAX_LINE_BYTES }>(data, &pieces);
}

fn lines_within<const MAX: usize>(data: &[u8], pieces: &[&[u8]]) {
    use crate::process::lines::Framer;
    let mut framer = Framer::<MAX>::default();
    let mut got = Vec::new();
    for piece in pieces {
        framer.append(piece);
        while let Some(line) = framer.take_line() {
            got.push(line.ok());
            assert!(framer.held() <= MAX + piece.len(), "{}", framer.held());
        }
        assert!(framer.held() <= MAX + piece.len(), "{}", framer.held());
    }
    let unterminated = framer.discard_pending();
    // What the stream is: lines ended by `\n`, then what follows the last one.
    let mut want: Vec<Option<Vec<u8>>> = Vec::new();
    let mut rest = data;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        want.push((end <= MAX).then(|| rest[..end].to_vec()));
        rest = &rest[end + 1..];
    }
    let want_unterminated = if rest.len() > MAX {
        want.push(None);
        0
    } else {
        rest.len()
    };
    assert_eq!(got, want, "the lines");
    assert_eq!(unterminated, want_unterminated, "the unterminated rest");
}

/// JSON-RPC framing of one message (or batch) as a server sends it.
pub fn jsonrpc(bytes: &[u8]) {
    if let Ok(jsonrpc::Incoming::Response { id, .. }) = jsonrpc::parse(bytes) {
        let _ = jsonrpc::id_matches(1, &id);
    }
}

/// The configuration loader: any text loads or is refused with one line.
pub fn config(text: &str) {
    if let Err(e) = crate::config::load_str(text) {
        let line = e.to_string();
        assert!(!line.contains('\n'), "a refusal is one line");
    }
}

/// The JSON-Schema subset and the `x-mcp-header` bindings, on a schema and an instance
/// separated by the first NUL byte.
pub fn schema(bytes: &[u8]) {
    let (left, right) = match bytes.iter().position(|&b| b == 0) {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &b"{}"[..]),
    };
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_slice::<Value>(left),
        serde_json::from_slice::<Value>(right),
    ) else {
        return;
    };
    let _ = schema::is_object_schema(&schema);
    let _ = schema::validate(&schema, &instance);
    assert!(schema::json_equal(&instance, &instance));
    if let Ok(bindings) = param_headers::bindings(&schema) {
        for binding in &bindings {
            if let Ok(Some(value)) = param_headers::header_value(&instance, binding) {
                assert_header_value(&value);
            }
        }
    }
}

/// RFC 3339: what parses formats back to a text that parses to the same instant.
pub fn rfc3339(text: &str) {
    if let Some(ts) = rfc3339::parse(text) {
        let again = rfc3339::format(ts);
        assert_eq!(rfc3339::parse(&again), Some(ts), "{again}");
    }
}

/// The `Mcp-Name`/`Mcp-Param-*` codec: every value encodes to a valid header value, and the
/// Base64 sentinel decodes back to the value.
pub fn header(value: &str) {
    let encoded = param_headers::encode_value(value);
    assert_header_value(&encoded);
    if let Some(inner) = encoded
        .strip_prefix("=?base64?")
        .and_then(|s| s.strip_suffix("?="))
    {
        use base64::Engine;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(inner)
            .expect("the sentinel holds Base64");
        assert_eq!(decoded, value.as_bytes());
    } else {
        assert_eq!(encoded, value);
    }
}

/// A header value we may send: printable ASCII without leading or trailing whitespace.
fn assert_header_value(value: &str) {
    assert!(
        value.bytes().all(|b| (0x20..=0x7E).contains(&b)),
        "{value:?}"
    );
    assert_eq!(value.trim(), value);
}

/// OAuth discovery input: a `WWW-Authenticate` challenge, and authorization-server metadata
/// (under an https and an http issuer).
pub fn oauth_metadata(bytes: &[u8]) {
    let _ = crate::oauth::challenge::parse([bytes]);
    if let Ok(doc) = serde_json::from_slice::<Map<String, Value>>(bytes) {
        for https in [true, false] {
            let _ = crate::oauth::discovery::server_metadata(&doc, https);
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = crate::oauth::url::secure(text);
    }
}

/// A token endpoint's answer.
pub fn oauth_token(bytes: &[u8]) {
    if let Ok(doc) = serde_json::from_slice::<Map<String, Value>>(bytes) {
        if let Ok(token) = crate::oauth::token::parse(&doc, Some("read"), SystemTime::now()) {
            assert!(crate::oauth::token::is_b64token(token.access.expose()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each entry point accepts what the tests feed the parsers (the seed corpora in
    /// `fuzz/corpus` hold the same), and its property holds on them.
    #[test]
    fn every_entry_point_runs_on_typical_input() {
        let stream = b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        sse(stream, &[0, 3, 7, 20, 1000]);
        let (at, rest) = cuts(b"\x02\x01\x03abcdefghijklmnop");
        assert_eq!((at, rest), (vec![4, 12], &b"abcdefghijklmnop"[..]));
        http_head(
            b"GET /live HTTP/1.1\r\nAHP-Version: v1\r\n\r\n",
            &[0, 5, 17, 40],
        );
        http_head(
            b"\r\nGET /ready?x HTTP/1.0\nAuthorization: Bearer a\n\n",
            &[1, 2],
        );
        http_head(
            b"GET /a HTTP/1.1\r\n\r\n\r\nGET /probe?target=x HTTP/1.1\r\n\r\nGET /c",
            &[18, 19, 21, 40],
        );
        lines(
            b"{\"jsonrpc\":\"2.0\"}\n\nthe rest of a line that is too long\nend",
            &[3, 30],
        );
        jsonrpc(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        config("version: v1\ntargets:\n  - name: a\n    type: http\n    endpoint: http://x\n");
        schema(b"{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\",\"x-mcp-header\":\"Q\"}}}\0{\"q\":\" x\"}");
        rfc3339("2026-12-01T09:54:08.5+02:00");
        for value in ["plain", " padded", "tab\t", "é", "=?base64?x?="] {
            header(value);
        }
        oauth_metadata(br#"{"issuer":"https://a","token_endpoint":"https://a/token"}"#);
        oauth_metadata(b"Bearer realm=\"x\", resource_metadata=\"https://a/.well-known/x\"");
        oauth_token(br#"{"access_token":"abc","token_type":"Bearer","expires_in":60}"#);
    }
}
