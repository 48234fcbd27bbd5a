//! JSON-RPC 2.0 message framing for MCP, without any I/O.
//!
//! Encoding builds the exact bytes of one message. Caller-supplied `params`
//! and `result` values are [`RawValue`]s and are copied onto the wire
//! byte-for-byte, so numbers that do not fit a machine type (for example an
//! operator's `12345678901234567890123`) are never rounded.
//!
//! Decoding ([`parse`]) turns the bytes of one message (an object) or one
//! batch (an array, allowed by revision 2025-03-26) into an [`Incoming`]. It
//! is strict about the envelope and tolerant of unknown extra members. Errors
//! ([`FrameError`]) describe what was wrong in our own words and never echo
//! any part of the input, and an [`RpcError`] deliberately does not keep the
//! server's message text.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

/// Builds a request: `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}`.
///
/// `params` (an object or array by JSON-RPC convention) is embedded unchanged;
/// when it is `None` the `params` member is omitted.
pub fn encode_request(id: u64, method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let mut out = start_message(
        method
            .len()
            .saturating_add(params.map_or(0, |p| p.get().len())),
    );
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    push_method_and_params(&mut out, method, params);
    out
}

/// Builds a notification (a request without an id).
///
/// `params` is embedded unchanged; when it is `None` the member is omitted.
pub fn encode_notification(method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let mut out = start_message(
        method
            .len()
            .saturating_add(params.map_or(0, |p| p.get().len())),
    );
    push_method_and_params(&mut out, method, params);
    out
}

/// Builds a success response echoing `id` and embedding `result` unchanged.
pub fn encode_result(id: &Value, result: &RawValue) -> Vec<u8> {
    let mut out = start_message(result.get().len());
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
    out
}

/// Builds an error response echoing `id` with the given `code` and `message`.
pub fn encode_error(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut out = start_message(message.len());
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(b",\"message\":");
    push_json_string(&mut out, message);
    out.extend_from_slice(b"}}");
    out
}

fn start_message(extra: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(extra.saturating_add(64));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
    out
}

fn push_method_and_params(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(b",\"method\":");
    push_json_string(out, method);
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params.get().as_bytes());
    }
    out.push(b'}');
}

/// Appends `s` as a JSON string literal (RFC 8259 escaping).
fn push_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if u32::from(c) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", u32::from(c)).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// One decoded JSON-RPC message, or a batch of them.
#[derive(Debug)]
pub enum Incoming {
    /// A response to one of our requests (it has no `method`).
    Response {
        /// The response id: a string, an integer, or `null` (error responses only).
        id: Value,
        /// The raw `result` on success, or the decoded `error` object.
        outcome: Result<Box<RawValue>, RpcError>,
    },
    /// A request from the peer (it has both `method` and `id`; `params`, if present, was an
    /// object or array — a health check answers only `ping`, and reads no params).
    Request {
        /// The request id: a string or an integer.
        id: Value,
        /// The method name (non-blank).
        method: String,
    },
    /// A notification from the peer (a valid `method` and no `id`): always ignored.
    Notification,
    /// A non-empty JSON array of messages (JSON-RPC batch; 2025-03-26 only).
    /// Every element has been validated like a single message.
    Batch(Vec<Incoming>),
}

/// The `error` member of an error response.
///
/// The server's `message` text is intentionally not kept: health output never
/// shows server text. `data` is server-controlled too and must not be printed.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The integer error code.
    pub code: i64,
    /// The optional `data` member (any JSON, including `null`, if present).
    pub data: Option<Value>,
    /// Whether the server's `message` string was non-empty.
    pub message_present: bool,
}

impl fmt::Display for RpcError {
    /// Writes only the numeric code, e.g. `rpc error -32601`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rpc error {}", self.code)
    }
}

/// Why bytes could not be decoded as a JSON-RPC message.
///
/// The `Display` text is short, lowercase, and never contains input text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The bytes are not one valid JSON value.
    NotJson,
    /// The message (or a batch element) is not a JSON object.
    NotAnObject,
    /// The batch array is empty.
    EmptyBatch,
    /// `jsonrpc` is missing or is not exactly the string `"2.0"`.
    BadVersion,
    /// `method` is not a non-blank string.
    BadMethod,
    /// `params` is present but is not an object or an array.
    BadParams,
    /// A request or notification also carries `result` or `error`.
    MethodWithOutcome,
    /// A response has no `id` member.
    MissingId,
    /// `id` is not a string or integer (or is `null` where not allowed).
    BadId,
    /// A response has both `result` and `error`.
    BothResultAndError,
    /// A message has neither `method`, `result` nor `error`.
    NeitherResultNorError,
    /// `error` is not an object with an integer `code` and a string `message`.
    BadErrorObject,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameError::NotJson => "message is not valid json",
            FrameError::NotAnObject => "message is not a json object",
            FrameError::EmptyBatch => "batch is empty",
            FrameError::BadVersion => "jsonrpc version is missing or not 2.0",
            FrameError::BadMethod => "method is not a non-blank string",
            FrameError::BadParams => "params is not an object or array",
            FrameError::MethodWithOutcome => "request carries a result or error",
            FrameError::MissingId => "response has no id",
            FrameError::BadId => "id is not a string or integer",
            FrameError::BothResultAndError => "response has both result and error",
            FrameError::NeitherResultNorError => "response has neither result nor error",
            FrameError::BadErrorObject => "error member is malformed",
        })
    }
}

impl std::error::Error for FrameError {}

/// Decodes one message or batch.
///
/// Rules: the value must be an object (or a non-empty array of objects);
/// `jsonrpc` must be the string `"2.0"`; a member `method` makes it a request
/// (with `id`) or notification (without), and it must then carry neither
/// `result` nor `error`, and `params`, if present, must be an object or array;
/// otherwise it is a response with an `id` and exactly one of `result` /
/// `error`. An `id` is a string or an integer; `null` is accepted only on an
/// error response. Unknown members are ignored; for duplicate member names the
/// last one wins. One bad batch element fails the whole batch.
///
/// # Errors
///
/// A [`FrameError`] naming the first rule the bytes break.
pub fn parse(bytes: &[u8]) -> Result<Incoming, FrameError> {
    // An object or a batch is read in one pass (a response body is the largest thing we
    // parse, and every pass over it counts); anything else is read whole to tell invalid
    // JSON from a value that is not a message.
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match first {
        Some(b'{') => {
            let members = serde_json::from_slice(bytes).map_err(|_| FrameError::NotJson)?;
            from_members(&members)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_slice(bytes).map_err(|_| FrameError::NotJson)?;
            if items.is_empty() {
                return Err(FrameError::EmptyBatch);
            }
            let messages = items
                .into_iter()
                .map(parse_object)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Incoming::Batch(messages))
        }
        _ => {
            let raw: &RawValue = serde_json::from_slice(bytes).map_err(|_| FrameError::NotJson)?;
            parse_object(raw)
        }
    }
}

fn first_byte(raw: &RawValue) -> Option<u8> {
    raw.get().trim_start().as_bytes().first().copied()
}

fn parse_object(raw: &RawValue) -> Result<Incoming, FrameError> {
    if first_byte(raw) != Some(b'{') {
        return Err(FrameError::NotAnObject);
    }
    let members: HashMap<String, &RawValue> =
        serde_json::from_str(raw.get()).map_err(|_| FrameError::NotJson)?;
    from_members(&members)
}

/// A message from the members of its object.
fn from_members(members: &HashMap<String, &RawValue>) -> Result<Incoming, FrameError> {
    match members.get("jsonrpc").map(|v| to_value(v)).transpose()? {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(FrameError::BadVersion),
    }

    let has_result = members.contains_key("result");
    let has_error = members.contains_key("error");
    let id = members.get("id").map(|v| to_value(v)).transpose()?;

    if let Some(method) = members.get("method") {
        let method = match to_value(method)? {
            Value::String(m) if !m.trim().is_empty() => m,
            _ => return Err(FrameError::BadMethod),
        };
        if has_result || has_error {
            return Err(FrameError::MethodWithOutcome);
        }
        match members.get("params").map(|v| to_value(v)).transpose()? {
            None | Some(Value::Object(_) | Value::Array(_)) => {}
            Some(_) => return Err(FrameError::BadParams),
        }
        return match id {
            None => Ok(Incoming::Notification),
            Some(id) if is_string_or_integer(&id) => Ok(Incoming::Request { id, method }),
            Some(_) => Err(FrameError::BadId),
        };
    }

    let id = id.ok_or(FrameError::MissingId)?;
    let outcome = match (members.get("result"), members.get("error")) {
        (Some(_), Some(_)) => return Err(FrameError::BothResultAndError),
        (None, None) => return Err(FrameError::NeitherResultNorError),
        (Some(result), None) => Ok((*result).to_owned()),
        (None, Some(error)) => Err(parse_error_object(error)?),
    };
    let id_ok = is_string_or_integer(&id) || (id.is_null() && outcome.is_err());
    if !id_ok {
        return Err(FrameError::BadId);
    }
    Ok(Incoming::Response { id, outcome })
}

fn to_value(raw: &RawValue) -> Result<Value, FrameError> {
    serde_json::from_str(raw.get()).map_err(|_| FrameError::NotJson)
}

fn parse_error_object(raw: &RawValue) -> Result<RpcError, FrameError> {
    let Value::Object(mut error) = to_value(raw)? else {
        return Err(FrameError::BadErrorObject);
    };
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .ok_or(FrameError::BadErrorObject)?;
    let message_present = match error.get("message") {
        Some(Value::String(m)) => !m.is_empty(),
        _ => return Err(FrameError::BadErrorObject),
    };
    Ok(RpcError {
        code,
        data: error.remove("data"),
        message_present,
    })
}

fn is_string_or_integer(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// Whether a response id `theirs` is exactly our numeric request id `ours`.
///
/// Only a JSON integer with the same value matches: `"7"` and `7.0` do not
/// match `7`.
pub fn id_matches(ours: u64, theirs: &Value) -> bool {
    theirs.as_u64() == Some(ours)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("test json")
    }

    fn err(s: &str) -> FrameError {
        match parse(s.as_bytes()) {
            Err(e) => e,
            Ok(m) => panic!("accepted {s}: {m:?}"),
        }
    }

    fn ok(s: &str) -> Incoming {
        match parse(s.as_bytes()) {
            Ok(m) => m,
            Err(e) => panic!("rejected {s}: {e}"),
        }
    }

    #[test]
    fn request_params_embedded_byte_for_byte() {
        let params = raw(r#"{"n": 12345678901234567890123}"#);
        let bytes = encode_request(3, "tools/call", Some(&params));
        assert_eq!(
            String::from_utf8(bytes.clone()).expect("utf8"),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"n": 12345678901234567890123}}"#
        );
        match ok(std::str::from_utf8(&bytes).expect("utf8")) {
            Incoming::Request { id, method } => {
                assert!(id_matches(3, &id));
                assert_eq!(method, "tools/call");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn request_without_params_and_escaped_method() {
        let bytes = encode_request(u64::MAX, "a\"b\\c\n\u{1}é", None);
        let text = String::from_utf8(bytes).expect("utf8");
        assert_eq!(
            text,
            "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"a\\\"b\\\\c\\n\\u0001é\"}"
        );
        match ok(&text) {
            Incoming::Request { id, method } => {
                assert!(id_matches(u64::MAX, &id));
                assert_eq!(method, "a\"b\\c\n\u{1}é");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn notification_encoding() {
        let bytes = encode_notification("notifications/initialized", None);
        assert_eq!(
            bytes,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        let params = raw(r#"[1, 2.50]"#);
        let bytes = encode_notification("x", Some(&params));
        assert_eq!(
            bytes,
            br#"{"jsonrpc":"2.0","method":"x","params":[1, 2.50]}"#
        );
        assert!(matches!(parse(&bytes), Ok(Incoming::Notification)));
    }

    #[test]
    fn result_and_error_encoding_round_trip() {
        let result = raw(r#"{"big": 100000000000000000000000000}"#);
        let bytes = encode_result(&json!("abc"), &result);
        assert_eq!(
            bytes,
            br#"{"jsonrpc":"2.0","id":"abc","result":{"big": 100000000000000000000000000}}"#
        );
        match parse(&bytes) {
            Ok(Incoming::Response { id, outcome: Ok(r) }) => {
                assert_eq!(id, json!("abc"));
                assert_eq!(r.get(), r#"{"big": 100000000000000000000000000}"#);
            }
            other => panic!("{other:?}"),
        }

        let bytes = encode_error(&json!(9), -32601, "method \"x\" not found");
        match parse(&bytes) {
            Ok(Incoming::Response {
                id,
                outcome: Err(e),
            }) => {
                assert!(id_matches(9, &id));
                assert_eq!(e.code, -32601);
                assert!(e.message_present);
                assert_eq!(e.data, None);
                assert_eq!(e.to_string(), "rpc error -32601");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn result_kept_raw() {
        match ok(r#"{"jsonrpc":"2.0","id":1,"result":{"x": 1.000, "y":[ ]}}"#) {
            Incoming::Response { outcome: Ok(r), .. } => {
                assert_eq!(r.get(), r#"{"x": 1.000, "y":[ ]}"#)
            }
            other => panic!("{other:?}"),
        }
        // `null` is a present result at the framing level.
        assert!(matches!(
            ok(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Incoming::Response { outcome: Ok(_), .. }
        ));
    }

    #[test]
    fn error_response_fields() {
        match ok(
            r#"{"jsonrpc":"2.0","id":"r1","error":{"code":-32022,"message":"","data":{"supported":["a"]}}}"#,
        ) {
            Incoming::Response {
                outcome: Err(e), ..
            } => {
                assert_eq!(e.code, -32022);
                assert!(!e.message_present);
                assert_eq!(e.data, Some(json!({"supported":["a"]})));
            }
            other => panic!("{other:?}"),
        }
        match ok(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}"#) {
            Incoming::Response {
                outcome: Err(e), ..
            } => assert_eq!(e.data, Some(Value::Null)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_error_objects() {
        for e in [
            r#""oops""#,
            "null",
            "[]",
            r#"{"message":"m"}"#,
            r#"{"code":1.5,"message":"m"}"#,
            r#"{"code":-32601.0,"message":"m"}"#,
            r#"{"code":"1","message":"m"}"#,
            r#"{"code":1e3,"message":"m"}"#,
            r#"{"code":99999999999999999999,"message":"m"}"#,
            r#"{"code":1}"#,
            r#"{"code":1,"message":null}"#,
            r#"{"code":1,"message":5}"#,
        ] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{e}}}"#);
            assert_eq!(err(&msg), FrameError::BadErrorObject, "{msg}");
        }
    }

    #[test]
    fn version_must_be_exactly_2_0() {
        for v in [
            r#""1.0""#,
            "2.0",
            r#""2.0 ""#,
            r#""2""#,
            "null",
            r#"["2.0"]"#,
        ] {
            let msg = format!(r#"{{"jsonrpc":{v},"id":1,"result":{{}}}}"#);
            assert_eq!(err(&msg), FrameError::BadVersion, "{msg}");
        }
        assert_eq!(err(r#"{"id":1,"result":{}}"#), FrameError::BadVersion);
    }

    #[test]
    fn not_json_and_not_object() {
        for s in ["", " ", "{", r#"{"a":1} x"#, "nul", "\u{feff}{}", "{'a':1}"] {
            assert_eq!(err(s), FrameError::NotJson, "{s:?}");
        }
        assert_eq!(parse(b"\xff\xfe").err(), Some(FrameError::NotJson));
        for s in [
            "1",
            r#""s""#,
            "null",
            "true",
            "[1]",
            "[[]]",
            r#"[{"jsonrpc":"2.0","id":1,"result":1}, 2]"#,
        ] {
            assert_eq!(err(s), FrameError::NotAnObject, "{s:?}");
        }
    }

    #[test]
    fn batches() {
        assert_eq!(err("[]"), FrameError::EmptyBatch);
        assert_eq!(err(" [ ] "), FrameError::EmptyBatch);
        match ok(r#" [{"jsonrpc":"2.0","id":1,"result":{}},
                {"jsonrpc":"2.0","method":"notifications/progress","params":{}},
                {"jsonrpc":"2.0","id":"s","method":"ping"}] "#)
        {
            Incoming::Batch(items) => {
                assert_eq!(items.len(), 3);
                assert!(matches!(items.first(), Some(Incoming::Response { .. })));
                assert!(matches!(items.get(1), Some(Incoming::Notification)));
                assert!(matches!(items.get(2), Some(Incoming::Request { .. })));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err(r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"1.0","id":2,"result":{}}]"#),
            FrameError::BadVersion
        );
    }

    #[test]
    fn exactly_one_of_result_and_error() {
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#),
            FrameError::BothResultAndError
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":null}"#),
            FrameError::BothResultAndError
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1}"#),
            FrameError::NeitherResultNorError
        );
    }

    #[test]
    fn response_ids() {
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","result":{}}"#),
            FrameError::MissingId
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#),
            FrameError::MissingId
        );
        for id in ["1.5", "7.0", "true", "{}", "[]", "1e2"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
            assert_eq!(err(&msg), FrameError::BadId, "{msg}");
        }
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            FrameError::BadId
        );
        assert!(matches!(
            ok(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#),
            Incoming::Response {
                id: Value::Null,
                outcome: Err(_)
            }
        ));
        assert!(matches!(
            ok(r#"{"jsonrpc":"2.0","id":-4,"result":{}}"#),
            Incoming::Response { .. }
        ));
        assert!(matches!(
            ok(r#"{"jsonrpc":"2.0","id":"","result":{}}"#),
            Incoming::Response { .. }
        ));
    }

    #[test]
    fn requests_and_notifications() {
        match ok(r#"{"jsonrpc":"2.0","id":"a","method":"sampling/createMessage","params":{"k":1}}"#)
        {
            Incoming::Request { id, method } => {
                assert_eq!(id, json!("a"));
                assert_eq!(method, "sampling/createMessage");
            }
            other => panic!("{other:?}"),
        }
        match ok(r#"{"jsonrpc":"2.0","method":"notifications/message"}"#) {
            Incoming::Notification => {}
            other => panic!("{other:?}"),
        }
        for id in ["null", "1.5", "false"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(err(&msg), FrameError::BadId, "{msg}");
        }
        for m in ["1", "null", r#""""#, r#""  ""#, "{}"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"method":{m}}}"#);
            assert_eq!(err(&msg), FrameError::BadMethod, "{msg}");
        }
        for p in ["null", "1", r#""s""#, "true"] {
            let msg = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{p}}}"#);
            assert_eq!(err(&msg), FrameError::BadParams, "{msg}");
        }
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#),
            FrameError::MethodWithOutcome
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":"m"}}"#),
            FrameError::MethodWithOutcome
        );
    }

    #[test]
    fn extra_members_tolerated_and_duplicates_last_wins() {
        assert!(matches!(
            ok(r#"{"extra":[1,{"x":null}],"jsonrpc":"2.0","id":1,"result":{},"_meta":{}}"#),
            Incoming::Response { outcome: Ok(_), .. }
        ));
        assert!(matches!(
            ok(r#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Response { .. }
        ));
        // Escaped member names are decoded before matching.
        assert!(matches!(
            ok(r#"{"json\u0072pc":"2.0","id":1,"result":{}}"#),
            Incoming::Response { .. }
        ));
    }

    #[test]
    fn id_matching_is_exact() {
        assert!(id_matches(7, &json!(7)));
        assert!(!id_matches(7, &json!("7")));
        assert!(!id_matches(7, &json!(7.0)));
        assert!(!id_matches(7, &json!(8)));
        assert!(!id_matches(7, &Value::Null));
        assert!(!id_matches(7, &json!(-7)));
        assert!(id_matches(u64::MAX, &json!(u64::MAX)));
        let float_seven: Value = serde_json::from_str("7.0").expect("json");
        assert!(!id_matches(7, &float_seven));
        let exp_seven: Value = serde_json::from_str("7e0").expect("json");
        assert!(!id_matches(7, &exp_seven));
    }

    #[test]
    fn display_never_echoes_input() {
        let secret = "SECRET-TEXT";
        let inputs = [
            format!(r#"{{"jsonrpc":"{secret}","id":1,"result":{{}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"{secret}","method":1}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":"{secret}"}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":1,"message":"{secret}"}}}}"#),
            secret.to_owned(),
        ];
        for input in inputs {
            let shown = match parse(input.as_bytes()) {
                Err(e) => e.to_string(),
                Ok(m) => format!("{m:?}"),
            };
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    use crate::adapter::mcp::testing::XorShift;

    #[test]
    fn garbage_never_panics() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let tokens: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"jsonrpc\"",
            "\"2.0\"",
            "\"id\"",
            "\"result\"",
            "\"error\"",
            "\"method\"",
            "\"params\"",
            "\"code\"",
            "\"message\"",
            "\"data\"",
            "null",
            "true",
            "1",
            "-1",
            "1.5",
            "1e999",
            "18446744073709551616",
            "\"x\"",
            " ",
            "\"\\u0000\"",
            "\"\\ud800\"",
        ];
        let seeds: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":[]}}"#,
            br#"[{"jsonrpc":"2.0","method":"m","params":{}},{"jsonrpc":"2.0","id":"s","method":"p"}]"#,
        ];
        for round in 0..20_000 {
            let input: Vec<u8> = match round % 3 {
                0 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
                1 => {
                    let mut s = String::new();
                    for _ in 0..rng.below(40) {
                        s.push_str(tokens.get(rng.below(tokens.len())).copied().unwrap_or(""));
                    }
                    s.into_bytes()
                }
                _ => {
                    let mut m = seeds
                        .get(rng.below(seeds.len()))
                        .copied()
                        .unwrap_or(b"")
                        .to_vec();
                    for _ in 0..=rng.below(4) {
                        let len = m.len();
                        if let Some(b) = m.get_mut(rng.below(len)) {
                            *b = rng.next() as u8;
                        }
                    }
                    m
                }
            };
            let _ = parse(&input);
        }
        // Deep nesting is refused by serde_json's recursion limit, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert_eq!(parse(deep.as_bytes()).err(), Some(FrameError::NotJson));
        // A deeply nested `result` is skipped without recursion and kept raw;
        // a deeply nested `error` or `params` is refused when decoded.
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let deep = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, nest(1_000_000));
        assert!(matches!(
            parse(deep.as_bytes()),
            Ok(Incoming::Response { outcome: Ok(_), .. })
        ));
        let deep = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{}}}"#, nest(1_000_000));
        assert!(parse(deep.as_bytes()).is_err());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}}}"#,
            nest(1_000_000)
        );
        assert!(parse(deep.as_bytes()).is_err());
    }
}
