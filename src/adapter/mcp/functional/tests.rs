//! The functional check against scripted servers: the Memory Core fault, the safety gate,
//! argument validation, header mirroring, result validation (upstream §17 B14/B15, D24, H,
//! N145/N146) and expectations.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::content_block;
use crate::adapter::TargetRun;
use crate::adapter::mcp::testing::{
    Log, Scripted, ScriptedReply, Sent, attempt, lock, methods, run,
};
use crate::adapter::mcp::transport::TransportError;
use crate::config::{McpExpect, McpFunctional, McpOptions};
use crate::contract::{Dimension, Status};
use crate::result::Key;
use crate::result::reason::Malformed;
use crate::result::{DiagnosticCode, Fact, Observation};

const DISCOVER: &str =
    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#;
const INIT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},
    "serverInfo":{"name":"fixture","version":"1.0.0"}}"#;
const SAFE: &str = r#"{"readOnlyHint":true,"destructiveHint":false}"#;
const OK: &str = r#"{"content":[{"type":"text","text":"fine"}],"isError":false}"#;

/// A tool entry with `schema` and `annotations` (JSON text).
fn tool(name: &str, schema: &str, annotations: &str) -> String {
    format!(r#"{{"name":{name:?},"inputSchema":{schema},"annotations":{annotations}}}"#)
}

/// A server of `era` (`true`: modern) listing `tools` and answering `tools/call` with `call`.
fn server(
    modern: bool,
    tools: Vec<String>,
    mut call: impl FnMut(&Sent) -> ScriptedReply + Send + 'static,
) -> impl FnMut(&Sent) -> ScriptedReply + Send + 'static {
    let page = format!(r#"{{"tools":[{}]}}"#, tools.join(","));
    move |m: &Sent| match m.method.as_str() {
        "server/discover" if modern => Ok(DISCOVER.to_owned()),
        "server/discover" => Err(TransportError::status(404)),
        "initialize" => Ok(INIT.to_owned()),
        "notifications/initialized" => Ok(String::new()),
        "tools/list" => Ok(page.clone()),
        "tools/call" => call(m),
        other => panic!("unexpected {other}"),
    }
}

fn functional(tool: &str, arguments: &str) -> McpOptions {
    McpOptions {
        functional: Some(McpFunctional {
            tool: tool.to_owned(),
            safe: true,
            arguments_json: arguments.to_owned(),
            expect: McpExpect::default(),
        }),
        ..McpOptions::default()
    }
}

fn expecting(mut options: McpOptions, expect: McpExpect) -> McpOptions {
    if let Some(f) = options.functional.as_mut() {
        f.expect = expect;
    }
    options
}

/// Runs `dims` on a fresh run; returns the last observation and the log.
fn check_dims(
    options: McpOptions,
    transport: Scripted,
    dims: &[Dimension],
) -> (Observation, Arc<Mutex<Log>>) {
    let log = transport.log();
    let mut run = run(options, transport);
    assert_eq!(run.configure(), Observation::healthy());
    let mut last = Observation::new(Status::Unknown);
    for d in dims {
        last = run.check(*d, &attempt());
    }
    (last, log)
}

fn check(options: McpOptions, transport: Scripted) -> (Observation, Arc<Mutex<Log>>) {
    check_dims(options, transport, &[Dimension::Functional])
}

/// One safe tool `t` with an empty object schema, answering `result`.
fn answering(modern: bool, result: &'static str) -> Scripted {
    Scripted::new(server(
        modern,
        vec![tool("t", r#"{"type":"object"}"#, SAFE)],
        move |_| Ok(result.to_owned()),
    ))
}

fn calls(log: &Mutex<Log>) -> Vec<Sent> {
    lock(log)
        .sent
        .iter()
        .filter(|s| s.method == "tools/call")
        .cloned()
        .collect()
}

fn assert_coded(o: &Observation, status: Status, code: DiagnosticCode) {
    assert_eq!((o.status, o.code()), (status, Some(code)), "{o:?}");
}

fn word(o: &Observation, key: Key) -> Option<&'static str> {
    match o.evidence.get(key) {
        Some(Fact::Word(w)) => Some(w),
        _ => None,
    }
}

fn phrase(o: &Observation, key: Key) -> Option<String> {
    match o.evidence.get(key) {
        Some(Fact::Phrase(p)) => Some(p.to_string()),
        _ => None,
    }
}

fn config(o: &Observation, key: Key) -> Option<String> {
    match o.evidence.get(key) {
        Some(Fact::Config(s)) => Some(s.clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------- the Memory Core fault

const FAULTY_SCHEMA: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;
const FIXED_SCHEMA: &str = r#"{"type":"object","properties":{
    "freshObservability":{"type":"boolean"},
    "chromaProbeTimeoutMs":{"type":"integer","minimum":0},
    "embeddingWriteCanaryTimeoutMs":{"type":"integer","minimum":0}},"additionalProperties":false}"#;
const DIAGNOSTIC_ARGS: &str = r#"{"freshObservability":true,"chromaProbeTimeoutMs":2500,"embeddingWriteCanaryTimeoutMs":15000}"#;

fn healthcheck_expectations() -> McpExpect {
    McpExpect {
        json: vec![("/status".into(), json!("healthy"))],
        text_contains: None,
        fresh_within_s: vec![("/observed_at".into(), 300.0)],
    }
}

fn healthcheck_result(observed_at: &str) -> String {
    format!(
        r#"{{"content":[{{"type":"text","text":"healthy"}}],
            "structuredContent":{{"status":"healthy","observed_at":"{observed_at}","memoryCount":0}},
            "isError":false}}"#
    )
}

fn now_rfc3339() -> String {
    // Seconds since the epoch, rendered by hand through the parser's inverse for the test.
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil from days (1970-01-01 = day 0), valid for the years this test runs in.
    let (mut year, mut day) = (1970u64, days);
    loop {
        let len = if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 {
            366
        } else {
            365
        };
        if day < len {
            break;
        }
        day -= len;
        year += 1;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let months = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for len in months {
        if day < len {
            break;
        }
        day -= len;
        month += 1;
    }
    format!(
        "{year:04}-{month:02}-{:02}T{:02}:{:02}:{:02}Z",
        day + 1,
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The deployed fault: an empty schema that forbids additional properties, a tool that
/// ignores its arguments and answers a cached payload.
#[test]
fn memory_core_faulty_tool_is_refused_before_any_call() {
    let faulty = || {
        Scripted::new(server(
            true,
            vec![tool("healthcheck", FAULTY_SCHEMA, SAFE)],
            |_| Ok(healthcheck_result("2020-01-01T00:00:00Z")),
        ))
    };
    let options = expecting(
        functional("healthcheck", DIAGNOSTIC_ARGS),
        healthcheck_expectations(),
    );
    let (o, log) = check(options, faulty());
    assert_eq!(o.status, Status::Misconfigured, "{o:?}");
    assert_eq!(o.code(), None);
    // Members are checked in key order, so the first undeclared option is named.
    assert_eq!(
        phrase(&o, Key::ArgumentViolation).as_deref(),
        Some(
            "argument `chromaProbeTimeoutMs` is not declared by the tool's inputSchema, \
             which forbids additional properties"
        )
    );
    assert_eq!(config(&o, Key::Tool).as_deref(), Some("healthcheck"));
    assert!(
        calls(&log).is_empty(),
        "no tools/call before the arguments fit"
    );
    let options = functional("healthcheck", r#"{"freshObservability":true}"#);
    let (o, log) = check(options, faulty());
    assert_eq!(
        phrase(&o, Key::ArgumentViolation).as_deref(),
        Some(
            "argument `freshObservability` is not declared by the tool's inputSchema, \
             which forbids additional properties"
        )
    );
    assert!(calls(&log).is_empty());

    // With `{}` the call goes out, and the stale payload fails freshness.
    let options = expecting(functional("healthcheck", "{}"), healthcheck_expectations());
    let (o, log) = check(options, faulty());
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpFunctional);
    assert_eq!(word(&o, Key::ExpectKind), Some("fresh_within_s"));
    assert_eq!(
        config(&o, Key::ExpectPointer).as_deref(),
        Some("/observed_at")
    );
    assert_eq!(config(&o, Key::Expected).as_deref(), Some("300"));
    assert_eq!(word(&o, Key::ExpectFailure), Some("stale"));
    assert_eq!(o.evidence.get(Key::ExpectationsFailed), Some(&Fact::Int(1)));
    assert!(
        !format!("{o:?}").contains("2020"),
        "never the server's value"
    );
    assert_eq!(calls(&log).len(), 1);
}

#[test]
fn memory_core_fixed_tool_is_healthy() {
    let fixed = Scripted::new(server(
        true,
        vec![tool("healthcheck", FIXED_SCHEMA, SAFE)],
        |_| Ok(healthcheck_result(&now_rfc3339())),
    ));
    let options = expecting(
        functional("healthcheck", DIAGNOSTIC_ARGS),
        healthcheck_expectations(),
    );
    let (o, log) = check(options, fixed);
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(o.evidence.get(Key::ExpectationsMet), Some(&Fact::Int(2)));
    let sent = calls(&log);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].params()["arguments"],
        serde_json::from_str::<Value>(DIAGNOSTIC_ARGS).unwrap_or_default()
    );
}

// ---------------------------------------------------------------- lookup and safety

/// Upstream §17 D24: a tool that is not in the inventory is UNHEALTHY `mcp_required`.
#[test]
fn missing_tool_is_unhealthy_without_a_call() {
    let (o, log) = check(functional("missing", "{}"), answering(false, OK));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpRequired);
    assert_eq!(
        o.evidence.get(Key::MissingTools),
        Some(&Fact::ConfigList(vec!["missing".into()]))
    );
    assert!(calls(&log).is_empty());

    // Tools not advertised at all: missing too, without a listing.
    let no_tools = Scripted::new(|m: &Sent| match m.method.as_str() {
        "server/discover" => Ok(r#"{"supportedVersions":["2026-07-28"],"capabilities":{}}"#.into()),
        other => panic!("unexpected {other}"),
    });
    let (o, log) = check(functional("t", "{}"), no_tools);
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpRequired);
    assert_eq!(methods(&log), ["server/discover"]);

    // Excluded for an invalid x-mcp-header annotation (modern HTTP): missing, and why.
    let bad = tool(
        "t",
        r#"{"type":"object","properties":{"q":{"type":"number","x-mcp-header":"Q"}}}"#,
        SAFE,
    );
    let (o, log) = check(
        functional("t", "{}"),
        Scripted::new(server(true, vec![bad], |_| Ok(OK.into()))),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpRequired);
    assert_eq!(
        o.evidence.get(Key::ExcludedTools),
        Some(&Fact::ConfigList(vec!["t".into()]))
    );
    assert!(calls(&log).is_empty());
}

/// Upstream §17 B14 and N145: anything but readOnlyHint true and an explicit destructiveHint
/// false is MISCONFIGURED `mcp_unsafe`, with no call.
#[test]
fn unsafe_annotations_are_refused_without_a_call() {
    let cases = [
        ("null", "tool declares no annotations"),
        (r#""readOnly""#, "tool declares no annotations"),
        ("{}", "readOnlyHint is not true"),
        (r#"{"destructiveHint":false}"#, "readOnlyHint is not true"),
        (
            r#"{"readOnlyHint":false,"destructiveHint":false}"#,
            "readOnlyHint is not true",
        ),
        (
            r#"{"readOnlyHint":"true","destructiveHint":false}"#,
            "readOnlyHint is not true",
        ),
        (
            r#"{"readOnlyHint":true}"#,
            "destructiveHint is not declared",
        ),
        (
            r#"{"readOnlyHint":true,"destructiveHint":true}"#,
            "destructiveHint is not false",
        ),
        (
            r#"{"readOnlyHint":true,"destructiveHint":null}"#,
            "destructiveHint is not false",
        ),
        (
            r#"{"readOnlyHint":true,"destructiveHint":"false"}"#,
            "destructiveHint is not false",
        ),
    ];
    for (annotations, why) in cases {
        for modern in [true, false] {
            let t = tool("t", r#"{"type":"object"}"#, annotations);
            let transport = Scripted::new(server(modern, vec![t], |_| Ok(OK.into())));
            let (o, log) = check(functional("t", "{}"), transport);
            assert_coded(&o, Status::Misconfigured, DiagnosticCode::McpUnsafe);
            assert_eq!(word(&o, Key::UnsafeAnnotation), Some(why), "{annotations}");
            assert!(calls(&log).is_empty(), "{annotations}");
        }
    }
    // A tool without any annotations member.
    let bare = r#"{"name":"t","inputSchema":{"type":"object"}}"#.to_owned();
    let (o, log) = check(
        functional("t", "{}"),
        Scripted::new(server(false, vec![bare], |_| Ok(OK.into()))),
    );
    assert_coded(&o, Status::Misconfigured, DiagnosticCode::McpUnsafe);
    assert!(calls(&log).is_empty());
}

#[test]
fn a_configuration_without_safe_true_never_calls() {
    let mut options = functional("t", "{}");
    if let Some(f) = options.functional.as_mut() {
        f.safe = false;
    }
    let (o, log) = check(options, answering(true, OK));
    assert_eq!((o.status, o.code()), (Status::Misconfigured, None));
    assert!(lock(&log).sent.is_empty());
    let (o, log) = check(McpOptions::default(), answering(true, OK));
    assert_eq!((o.status, o.code()), (Status::Misconfigured, None));
    assert!(lock(&log).sent.is_empty());
}

// ---------------------------------------------------------------- arguments

#[test]
fn arguments_the_schema_refuses_are_misconfigured_with_path_and_rule() {
    let schema = r#"{"type":"object","properties":{
        "query":{"type":"string","minLength":1},
        "mode":{"enum":["fast","full"]},
        "limits":{"type":"object","properties":{"items":{"type":"array","items":{"type":"integer","maximum":10}}}}},
        "required":["query","secretRequiredName"]}"#;
    let cases = [
        (
            r#"{"query":"x","mode":"fast"}"#,
            "the arguments object lacks a required property of the tool's inputSchema",
        ),
        (
            r#"{"query":5,"secretRequiredName":1}"#,
            "argument `query` has a type that the tool's inputSchema does not allow (expected string)",
        ),
        (
            r#"{"query":"","secretRequiredName":1}"#,
            "argument `query` is shorter than the tool's inputSchema allows",
        ),
        (
            r#"{"query":"x","secretRequiredName":1,"mode":"slow"}"#,
            "argument `mode` is not one of the values the tool's inputSchema allows",
        ),
        (
            r#"{"query":"x","secretRequiredName":1,"limits":{"items":[1,11]}}"#,
            "argument `limits.items[1]` is above the maximum the tool's inputSchema allows",
        ),
    ];
    for (args, sentence) in cases {
        let t = tool("t", schema, SAFE);
        let transport = Scripted::new(server(true, vec![t], |_| Ok(OK.into())));
        let (o, log) = check(functional("t", args), transport);
        assert_eq!(
            (o.status, o.code()),
            (Status::Misconfigured, None),
            "{args}"
        );
        assert_eq!(
            phrase(&o, Key::ArgumentViolation).as_deref(),
            Some(sentence)
        );
        assert!(calls(&log).is_empty(), "{args}");
    }
    // A required name the configuration holds (here in an expectation pointer) is named.
    let t = tool("t", schema, SAFE);
    let options = expecting(
        functional("t", r#"{"query":"x"}"#),
        McpExpect {
            json: vec![("/secretRequiredName".into(), json!(1))],
            ..McpExpect::default()
        },
    );
    let (o, _) = check(
        options,
        Scripted::new(server(true, vec![t], |_| Ok(OK.into()))),
    );
    assert_eq!(
        phrase(&o, Key::ArgumentViolation).as_deref(),
        Some(
            "the arguments object lacks the property `secretRequiredName`, \
             which the tool's inputSchema requires"
        )
    );
}

/// The operator's bytes travel unchanged: spacing, member order, and integers beyond 64 bits.
#[test]
fn arguments_are_sent_byte_for_byte_once() {
    let args = r#"{ "id" : 12345678901234567890123, "b":1.50, "a":"\u00e9" }"#;
    for modern in [true, false] {
        let (o, log) = check(functional("t", args), answering(modern, OK));
        assert_eq!(o.status, Status::Healthy, "{o:?}");
        let sent = calls(&log);
        assert_eq!(sent.len(), 1);
        let expected = format!(r#""name":"t","arguments":{args}"#);
        assert!(sent[0].raw.contains(&expected), "{}", sent[0].raw);
    }
}

// ---------------------------------------------------------------- header mirroring

const HEADER_SCHEMA: &str = r#"{"type":"object","properties":{
    "query":{"type":"string","x-mcp-header":"Query"},
    "nested":{"type":"object","properties":{
        "number":{"type":"integer","x-mcp-header":"Number"},
        "enabled":{"type":"boolean","x-mcp-header":"Enabled"}}},
    "absent":{"type":"string","x-mcp-header":"Absent"},
    "nil":{"type":"string","nullable":true,"x-mcp-header":"Nil"}}}"#;

/// Upstream §17 E25 and F30/F37 through the flow: `Mcp-Name` and every bound argument are
/// handed to the transport, values encoded, absent and null ones omitted.
#[test]
fn modern_calls_mirror_name_and_bound_arguments() {
    let t = tool("search 世界", HEADER_SCHEMA, SAFE);
    let args = r#"{"query":"hello\n世界","nested":{"number":42,"enabled":true},"nil":null}"#;
    let (o, log) = check(
        functional("search 世界", args),
        Scripted::new(server(true, vec![t], |_| Ok(OK.into()))),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    let sent = calls(&log);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].name.as_deref(), Some("search 世界"));
    let mut params = sent[0].params.clone();
    params.sort();
    assert_eq!(
        params,
        [
            ("Enabled".to_owned(), "true".to_owned()),
            ("Number".to_owned(), "42".to_owned()),
            ("Query".to_owned(), "=?base64?aGVsbG8K5LiW55WM?=".to_owned()),
        ]
    );
}

#[test]
fn legacy_and_stdio_calls_mirror_nothing() {
    let t = tool("t", HEADER_SCHEMA, SAFE);
    let args = r#"{"query":"q"}"#;
    let (o, log) = check(
        functional("t", args),
        Scripted::new(server(false, vec![t.clone()], |_| Ok(OK.into()))),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    let sent = calls(&log);
    assert_eq!((sent[0].name.as_deref(), sent[0].params.len()), (None, 0));
    // Stdio in the modern era: the transport ignores headers and no bindings are computed.
    let (o, log) = check(
        functional("t", args),
        Scripted::new(server(true, vec![t], |_| Ok(OK.into()))).stdio(),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert!(calls(&log)[0].params.is_empty());
}

/// Upstream §17 F36: an integer header value of 2^53 cannot be mirrored; the operator's
/// argument is refused before the call.
#[test]
fn an_unmirrorable_argument_is_refused_before_the_call() {
    let t = tool("t", HEADER_SCHEMA, SAFE);
    let (o, log) = check(
        functional("t", r#"{"nested":{"number":9007199254740992}}"#),
        Scripted::new(server(true, vec![t], |_| Ok(OK.into()))),
    );
    assert_eq!((o.status, o.code()), (Status::Misconfigured, None), "{o:?}");
    let p = phrase(&o, Key::ArgumentViolation).unwrap_or_default();
    assert!(
        p.starts_with("argument `nested.number` cannot be sent in the Mcp-Param header"),
        "{p}"
    );
    assert!(calls(&log).is_empty());
    // Legacy has no headers, so the same argument is fine there.
    let t = tool("t", HEADER_SCHEMA, SAFE);
    let (o, _) = check(
        functional("t", r#"{"nested":{"number":9007199254740992}}"#),
        Scripted::new(server(false, vec![t], |_| Ok(OK.into()))),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
}

// ---------------------------------------------------------------- results

/// Upstream §17 B15.
#[test]
fn is_error_is_unhealthy() {
    let (o, log) = check(
        functional("t", "{}"),
        answering(
            false,
            r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
        ),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpFunctional);
    assert_eq!(o.evidence.get(Key::IsError), Some(&Fact::Bool(true)));
    assert_eq!(calls(&log).len(), 1);
    assert!(!format!("{o:?}").contains("boom"));
}

/// Upstream §17 N128 and mcp-protocol.md §4.6: inconclusive, and never continued.
#[test]
fn input_required_is_unknown_with_no_further_call() {
    let result = r#"{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create",
        "params":{"mode":"form","message":"?","requestedSchema":{"type":"object"}}}},"requestState":"s"}"#;
    let (o, log) = check(functional("t", "{}"), answering(true, result));
    assert_coded(&o, Status::Unknown, DiagnosticCode::McpInput);
    assert_eq!(calls(&log).len(), 1);
    assert_eq!(word(&o, Key::FailedMethod), Some("tools/call"));

    // −32021 (a client capability we did not declare) is inconclusive too, in the modern era.
    let missing_capability = || {
        Scripted::new(server(
            true,
            vec![tool("t", r#"{"type":"object"}"#, SAFE)],
            |_| {
                Err(TransportError::Rpc {
                    code: -32021,
                    status: Some(400),
                })
            },
        ))
    };
    let (o, log) = check(functional("t", "{}"), missing_capability());
    assert_coded(&o, Status::Unknown, DiagnosticCode::McpInput);
    assert_eq!(o.evidence.get(Key::RpcCode), Some(&Fact::Int(-32021)));
    assert_eq!(calls(&log).len(), 1);

    // Anything else the server rejects is a rejection.
    let rejecting = Scripted::new(server(
        false,
        vec![tool("t", r#"{"type":"object"}"#, SAFE)],
        |_| {
            Err(TransportError::Rpc {
                code: -32602,
                status: Some(200),
            })
        },
    ));
    let (o, _) = check(functional("t", "{}"), rejecting);
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpRpc);
    assert_eq!(word(&o, Key::FailedMethod), Some("tools/call"));
}

#[test]
fn malformed_results_are_protocol_failures() {
    let cases = [
        (
            r#"{"isError":false}"#,
            "tool result content is not an array",
        ),
        (r#"{"content":null}"#, "tool result content is not an array"),
        (r#"{"content":{}}"#, "tool result content is not an array"),
        (
            r#"{"content":[],"isError":"no"}"#,
            "tool result isError is not a boolean",
        ),
        ("[]", "result is not an object"),
        (
            r#"{"resultType":"later","content":[]}"#,
            "unknown result type",
        ),
    ];
    for (result, why) in cases {
        let (o, log) = check(functional("t", "{}"), answering(true, result));
        assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
        assert_eq!(word(&o, Key::ProtocolError), Some(why), "{result}");
        assert_eq!(calls(&log).len(), 1);
    }
    // A legacy result has no resultType rule.
    let (o, _) = check(
        functional("t", "{}"),
        answering(false, r#"{"resultType":"later","content":[]}"#),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
}

/// Upstream §17 H39–H51, plus the remaining required fields of each block type.
#[test]
fn content_block_rules() {
    let rejected = [
        (json!({"type": "text"}), "text block lacks a string text"),
        (
            json!({"type": "unknown"}),
            "content block type is not recognised",
        ),
        (
            json!({"type": "text", "text": null}),
            "text block lacks a string text",
        ),
        (
            json!({"type": "image", "data": "a"}),
            "image block lacks a string mimeType",
        ),
        (
            json!({"type": "audio", "data": 3, "mimeType": "audio/wav"}),
            "audio block lacks a string data",
        ),
        (
            json!({"type": "resource_link", "uri": "x"}),
            "resource_link block lacks a string name",
        ),
        (
            json!({"type": "resource", "resource": {"uri": "x"}}),
            "embedded resource lacks a string text or blob",
        ),
        (
            json!({"type": "image", "mimeType": "image/png"}),
            "image block lacks a string data",
        ),
        (
            json!({"type": "audio", "data": ""}),
            "audio block lacks a string mimeType",
        ),
        (
            json!({"type": "resource_link", "name": "x"}),
            "resource_link block lacks a string uri",
        ),
        (
            json!({"type": "resource"}),
            "resource block lacks a resource object",
        ),
        (
            json!({"type": "resource", "resource": null}),
            "resource block lacks a resource object",
        ),
        (
            json!({"type": "resource", "resource": {"text": ""}}),
            "embedded resource lacks a string uri",
        ),
        (
            json!({"type": "resource", "resource": {"uri": "x", "text": "", "mimeType": null}}),
            "embedded resource mimeType is not a string",
        ),
        (json!({"text": "x"}), "content block type is not a string"),
        (json!({"type": 1}), "content block type is not a string"),
        (json!(null), "content block is not an object"),
        (json!("text"), "content block is not an object"),
    ];
    for (block, why) in rejected {
        assert_eq!(content_block(&block), Err(why), "{block}");
    }
    let accepted = [
        json!({"type": "text", "text": ""}),
        json!({"type": "image", "data": "", "mimeType": "image/png"}),
        json!({"type": "audio", "data": "", "mimeType": "audio/wav"}),
        json!({"type": "resource_link", "uri": "health://x", "name": "x"}),
        json!({"type": "resource", "resource": {"uri": "health://x", "text": ""}}),
        json!({"type": "resource", "resource": {"uri": "health://x", "blob": ""}}),
        json!({"type": "resource", "resource": {"uri": "x", "blob": "", "mimeType": "a/b"}}),
        json!({"type": "text", "text": "x", "annotations": {"audience": ["user"]}, "_meta": {}, "extra": 1}),
    ];
    for block in accepted {
        assert_eq!(content_block(&block), Ok(()), "{block}");
    }
}

/// Upstream §17 H52 and N146: an invalid block fails the result, before `isError` counts.
#[test]
fn invalid_blocks_fail_the_call_before_is_error() {
    let (o, _) = check(
        functional("t", "{}"),
        answering(
            false,
            r#"{"content":[{"type":"text","text":"ok"},{"type":"text"}]}"#,
        ),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(o.evidence.get(Key::ContentBlock), Some(&Fact::Int(1)));
    let (o, _) = check(
        functional("t", "{}"),
        answering(true, r#"{"content":[{"type":"unknown"}],"isError":true}"#),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(o.evidence.get(Key::IsError), None);
}

fn structured_tool(output_schema: &str) -> String {
    format!(
        r#"{{"name":"s","inputSchema":{{"type":"object"}},"annotations":{SAFE},"outputSchema":{output_schema}}}"#
    )
}

#[test]
fn structured_content_must_match_the_output_schema() {
    let schema = r#"{"type":"object","properties":{"ok":{"type":"boolean"},"count":{"type":"integer"}},"required":["ok","count"]}"#;
    let run_with = |result: &'static str, expect: McpExpect| {
        let transport = Scripted::new(server(true, vec![structured_tool(schema)], move |_| {
            Ok(result.to_owned())
        }));
        check(expecting(functional("s", "{}"), expect), transport).0
    };
    let ok = run_with(
        r#"{"content":[{"type":"text","text":"{}"}],"structuredContent":{"ok":true,"count":3}}"#,
        McpExpect::default(),
    );
    assert_eq!(ok.status, Status::Healthy, "{ok:?}");
    assert_eq!(
        ok.evidence.get(Key::OutputSchemaChecked),
        Some(&Fact::Bool(true))
    );

    let mismatch = r#"{"content":[],"structuredContent":{"ok":"yes","count":3}}"#;
    let o = run_with(mismatch, McpExpect::default());
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(
        word(&o, Key::ProtocolError),
        Some("structuredContent does not match the tool's outputSchema")
    );
    // The server's property names are not shown unless the configuration holds them.
    assert_eq!(
        phrase(&o, Key::OutputViolation).as_deref(),
        Some(
            "structuredContent at `<property>` has a type that the tool's outputSchema \
             does not allow (expected boolean)"
        )
    );
    let named = run_with(
        mismatch,
        McpExpect {
            json: vec![("/ok".into(), json!(true))],
            ..McpExpect::default()
        },
    );
    assert_eq!(
        phrase(&named, Key::OutputViolation).as_deref(),
        Some(
            "structuredContent at `ok` has a type that the tool's outputSchema \
             does not allow (expected boolean)"
        )
    );
    let o = run_with(
        r#"{"content":[],"structuredContent":{"ok":true}}"#,
        McpExpect::default(),
    );
    assert_eq!(
        phrase(&o, Key::OutputViolation).as_deref(),
        Some("structuredContent lacks a required property of the tool's outputSchema")
    );
    for absent in [
        r#"{"content":[]}"#,
        r#"{"content":[],"structuredContent":null}"#,
    ] {
        let o = run_with(absent, McpExpect::default());
        assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
        assert_eq!(
            word(&o, Key::ProtocolError),
            Some("structuredContent is missing although the tool declares an outputSchema")
        );
    }
    // An error result is judged as an error, whatever its structuredContent.
    let o = run_with(r#"{"content":[],"isError":true}"#, McpExpect::default());
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpFunctional);
}

#[test]
fn expectations_use_the_first_text_block_without_structured_content() {
    let result = r#"{"content":[{"type":"text","text":"{\"status\":\"ok\",\"n\":1}"},{"type":"text","text":"ready"}]}"#;
    let expect = McpExpect {
        json: vec![("/status".into(), json!("ok")), ("/n".into(), json!(1.0))],
        text_contains: Some("ready".into()),
        fresh_within_s: Vec::new(),
    };
    let (o, _) = check(
        expecting(functional("t", "{}"), expect),
        answering(false, result),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(o.evidence.get(Key::ExpectationsMet), Some(&Fact::Int(3)));
    let expect = McpExpect {
        json: vec![("/status".into(), json!("degraded"))],
        ..McpExpect::default()
    };
    let (o, _) = check(
        expecting(functional("t", "{}"), expect),
        answering(false, result),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpFunctional);
    assert_eq!(config(&o, Key::Expected).as_deref(), Some("\"degraded\""));
    assert_eq!(word(&o, Key::ExpectFailure), Some("differs"));
}

// ---------------------------------------------------------------- the shared session

/// Discovery and the call share one session: after `capability` the call reuses the
/// inventory; alone, `functional` establishes and lists first. Upstream §17 A2's counts.
#[test]
fn discovery_and_the_call_share_one_session() {
    let (o, log) = check_dims(
        functional("t", r#"{"query":"health"}"#),
        answering(false, OK),
        &[
            Dimension::Protocol,
            Dimension::Capability,
            Dimension::Functional,
        ],
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(
        methods(&log),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    assert_eq!(word(&o, Key::Era), Some("legacy"));
    let (o, log) = check(functional("t", "{}"), answering(true, OK));
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(
        methods(&log),
        ["server/discover", "tools/list", "tools/call"]
    );
    assert_eq!(o.evidence.get(Key::ContentBlocks), Some(&Fact::Int(1)));
}

/// A failed call is never repeated by the adapter, whatever the failure.
#[test]
fn a_failed_call_is_sent_once() {
    for answer in [
        Err(TransportError::status(500)),
        Err(TransportError::timed_out(
            crate::contract::Bound::TimeoutMs,
            false,
        )),
        Err(TransportError::timed_out(
            crate::contract::Bound::TimeoutMs,
            true,
        )),
        Err(TransportError::Malformed(Malformed::Result("x"))),
    ] {
        let transport = Scripted::new(server(
            true,
            vec![tool("t", r#"{"type":"object"}"#, SAFE)],
            move |_| answer.clone(),
        ));
        let (o, log) = check(functional("t", "{}"), transport);
        assert_ne!(o.status, Status::Healthy);
        assert_eq!(calls(&log).len(), 1, "{o:?}");
    }
}

/// No text from the server reaches the evidence: tool output, schema names, messages.
#[test]
fn evidence_holds_no_server_text() {
    let schema = r#"{"type":"object","properties":{"CANARYPROP":{"type":"string"}},"required":["CANARYREQ"],"additionalProperties":false}"#;
    let outputs = [
        r#"{"content":[{"type":"text","text":"CANARYTEXT"}],"isError":true}"#,
        r#"{"content":[{"type":"CANARYTYPE"}]}"#,
        r#"{"content":[{"type":"text","text":"CANARYTEXT"}],"structuredContent":{"CANARYKEY":"CANARYVALUE"}}"#,
    ];
    for output in outputs {
        let t = format!(
            r#"{{"name":"t","inputSchema":{{"type":"object"}},"annotations":{SAFE},"outputSchema":{schema}}}"#
        );
        let transport = Scripted::new(server(true, vec![t], move |_| Ok(output.to_owned())));
        let expect = McpExpect {
            json: vec![("/x".into(), json!(1))],
            text_contains: Some("nope".into()),
            fresh_within_s: vec![("/y".into(), 1.0)],
        };
        let (o, _) = check(expecting(functional("t", "{}"), expect), transport);
        assert!(!format!("{o:?}").contains("CANARY"), "{o:?}");
    }
    let t = tool("t", schema, SAFE);
    let (o, _) = check(
        functional("t", r#"{"CANARYPROP":"x"}"#),
        Scripted::new(server(true, vec![t], |_| Ok(OK.into()))),
    );
    let text = format!("{o:?}");
    assert!(!text.contains("CANARYREQ"), "{text}");
}
