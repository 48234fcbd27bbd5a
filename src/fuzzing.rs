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

use crate::adapter::mcp::{headers, jsonrpc, schema, sse};
use crate::vocab::rfc3339;

/// Server-Sent Events: parsing `data` whole or cut at every offset in `cuts` yields the same
/// events, the same error and the same last event id (an SSE parser must not depend on how
/// the network chunks the stream).
pub fn sse(data: &[u8], cuts: &[usize]) {
    let budget = 64 * 1024;
    let whole = run_sse(&[data], budget);
    let mut pieces = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        let cut = cut.min(data.len()).max(at);
        pieces.push(&data[at..cut]);
        at = cut;
    }
    pieces.push(&data[at..]);
    let chunked = run_sse(&pieces, budget);
    assert_eq!(whole, chunked, "chunking changed the events");
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
    parser.finish(&mut events);
    (events, None, parser.last_event_id().to_string())
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
    if let Ok(bindings) = headers::bindings(&schema) {
        for binding in &bindings {
            if let Ok(Some(value)) = headers::header_value(&instance, binding) {
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
    let encoded = headers::encode_value(value);
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
