//! The adapter's flow against scripted servers: era selection (issue 4's table, upstream
//! §17 E and G), the legacy lifecycle and its classifications (§17 A–B), inventories and
//! requirements, and the shared session.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::McpRun;
use super::testing::{
    self, Frame, Log, Scripted, ScriptedReply, Sent, attempt, lock, methods, run,
};
use super::transport::TransportError;
use crate::adapter::TargetRun;
use crate::config::McpOptions;
use crate::contract::Revision;
use crate::contract::{Dimension, Status};
use crate::result::Key;
use crate::result::reason::{Limit, Malformed};
use crate::result::{DiagnosticCode, Fact, Observation};

const DISCOVER_OK: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],
    "capabilities":{"tools":{"listChanged":true},"resources":{},"prompts":{}},"ttlMs":0,"cacheScope":"public"}"#;
const TOOLS: &str = r#"{"tools":[{"name":"search","inputSchema":{"type":"object"},
    "annotations":{"readOnlyHint":true,"destructiveHint":false}}]}"#;
const RESOURCES: &str = r#"{"resources":[{"name":"ready","uri":"health://ready"}]}"#;
const PROMPTS: &str = r#"{"prompts":[{"name":"summary"}]}"#;

fn ok(text: &str) -> ScriptedReply {
    Ok(text.to_owned())
}

fn http(status: u16) -> ScriptedReply {
    Err(TransportError::status(status))
}

fn rpc(code: i64, status: u16) -> ScriptedReply {
    Err(TransportError::Rpc {
        code,
        status: Some(status),
    })
}

fn init(version: &str) -> String {
    format!(
        r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}},"resources":{{}},"prompts":{{}}}},
            "serverInfo":{{"name":"fixture","version":"1.0.0"}}}}"#
    )
}

/// A legacy server (the upstream fixture): discovery rejected with `discover`, `initialize`
/// answered with `version`, one tool, resource and prompt.
fn legacy_server(
    discover: ScriptedReply,
    version: &'static str,
) -> impl FnMut(&Sent) -> ScriptedReply {
    move |m| match m.method.as_str() {
        "server/discover" => discover.clone(),
        "initialize" => Ok(init(version)),
        "notifications/initialized" => ok(""),
        "tools/list" => ok(TOOLS),
        "resources/list" => ok(RESOURCES),
        "prompts/list" => ok(PROMPTS),
        other => panic!("unexpected {other}"),
    }
}

/// A modern server answering discovery with `discover`.
fn modern_server(discover: ScriptedReply) -> impl FnMut(&Sent) -> ScriptedReply {
    move |m| match m.method.as_str() {
        "server/discover" => discover.clone(),
        "tools/list" => ok(TOOLS),
        "resources/list" => ok(RESOURCES),
        "prompts/list" => ok(PROMPTS),
        other => panic!("unexpected {other}"),
    }
}

fn options() -> McpOptions {
    McpOptions::default()
}

fn pinned(version: &str) -> McpOptions {
    McpOptions {
        protocol_version: Some(version.into()),
        ..McpOptions::default()
    }
}

fn requiring(tools: &[&str], resources: &[&str], prompts: &[&str]) -> McpOptions {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    McpOptions {
        required_tools: owned(tools),
        required_resources: owned(resources),
        required_prompts: owned(prompts),
        ..McpOptions::default()
    }
}

/// Runs `dims` in order on a fresh run and returns each observation and the log.
fn check(
    options: McpOptions,
    transport: Scripted,
    dims: &[Dimension],
) -> (Vec<Observation>, Arc<Mutex<Log>>) {
    let log = transport.log();
    let mut run = run(options, transport);
    assert_eq!(run.configure(), Observation::healthy());
    let obs = dims.iter().map(|d| run.check(*d, &attempt())).collect();
    run.close(&crate::runtime::Attempt::new(
        crate::runtime::Deadline::after(
            std::time::Duration::from_secs(1),
            crate::contract::Bound::Cleanup,
        ),
    ));
    (obs, log)
}

fn protocol(options: McpOptions, transport: Scripted) -> (Observation, Arc<Mutex<Log>>) {
    let (mut obs, log) = check(options, transport, &[Dimension::Protocol]);
    (obs.remove(0), log)
}

fn fact(o: &Observation, key: Key) -> Option<&Fact> {
    o.evidence.get(key)
}

fn word(o: &Observation, key: Key) -> Option<&'static str> {
    match fact(o, key) {
        Some(Fact::Word(w)) => Some(w),
        _ => None,
    }
}

fn revision(o: &Observation, key: Key) -> Option<String> {
    match fact(o, key) {
        Some(Fact::Revision(r)) => Some(r.to_string()),
        _ => None,
    }
}

fn int(o: &Observation, key: Key) -> Option<i64> {
    match fact(o, key) {
        Some(Fact::Int(i)) => Some(*i),
        _ => None,
    }
}

fn assert_coded(o: &Observation, status: Status, code: DiagnosticCode) {
    assert_eq!((o.status, o.code()), (status, Some(code)), "{o:?}");
}

// ---------------------------------------------------------------- selection (issue 4)

#[test]
fn unpinned_discovery_success_is_modern_and_sends_no_handshake() {
    let (obs, log) = check(
        requiring(&["search"], &["health://ready"], &["summary"]),
        Scripted::new(modern_server(ok(DISCOVER_OK))),
        &[
            Dimension::Reachability,
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Capability,
        ],
    );
    for o in &obs {
        assert_eq!(o.status, Status::Healthy, "{o:?}");
        assert!(o.response_seen);
    }
    assert_eq!(word(&obs[2], Key::Era), Some("modern"));
    assert_eq!(word(&obs[2], Key::NegotiatedVersion), Some("2026-07-28"));
    assert_eq!(word(&obs[2], Key::ResponseMode), Some("json"));
    assert_eq!(fact(&obs[2], Key::Fallback), None);
    assert_eq!(int(&obs[3], Key::ToolsCount), Some(1));
    assert_eq!(
        methods(&log),
        [
            "server/discover",
            "tools/list",
            "resources/list",
            "prompts/list"
        ]
    );
    let log = lock(&log);
    for sent in &log.sent {
        assert_eq!(sent.frame, Frame::Modern, "{}", sent.method);
        let meta = &sent.params()["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "agenthealth"
        );
    }
    assert_eq!(log.probes, 1);
    assert_eq!(log.closes.len(), 1);
}

/// Upstream §17 E27–E29, and −32021: recognised modern errors stay modern.
#[test]
fn recognised_modern_errors_never_downgrade() {
    let cases = [
        (rpc(-32022, 400), DiagnosticCode::McpVersion),
        (rpc(-32020, 400), DiagnosticCode::McpRpc),
        (rpc(-32021, 400), DiagnosticCode::McpRpc),
        (rpc(-32022, 200), DiagnosticCode::McpVersion),
    ];
    for (answer, code) in cases {
        let (o, log) = protocol(options(), Scripted::new(modern_server(answer.clone())));
        assert_coded(&o, Status::Unhealthy, code);
        assert_eq!(methods(&log), ["server/discover"], "{answer:?}");
        assert_eq!(word(&o, Key::Era), Some("modern"));
        assert_eq!(word(&o, Key::FailedMethod), Some("server/discover"));
        assert!(int(&o, Key::RpcCode).is_some());
    }
}

/// Other HTTP rejections fall back to `initialize` offering 2025-11-25 (upstream §17 N121–122,
/// peers.md §3.1's server-everything and TS v1 answers, −32601 inside a 200, and issue 12's
/// gateway −32601 inside a 404 and stateless −32602 inside a 200).
#[test]
fn legacy_rejections_fall_back_to_initialize() {
    let rejections = [
        (http(400), 400, None),
        (http(404), 404, None),
        (http(405), 405, None),
        (http(406), 406, None),
        (rpc(-32000, 400), 400, Some(-32000)),
        (rpc(-32600, 400), 400, Some(-32600)),
        (rpc(-32001, 404), 404, Some(-32001)),
        (rpc(-32602, 400), 400, Some(-32602)),
        (rpc(-32601, 200), 200, Some(-32601)),
        (rpc(-32601, 404), 404, Some(-32601)),
        (rpc(-32602, 200), 200, Some(-32602)),
    ];
    for (answer, status, code) in rejections {
        let (obs, log) = check(
            requiring(&["search"], &[], &[]),
            Scripted::new(legacy_server(answer.clone(), "2025-11-25")),
            &[Dimension::Protocol, Dimension::Capability],
        );
        assert_eq!(obs[0].status, Status::Healthy, "{answer:?}: {:?}", obs[0]);
        assert_eq!(obs[1].status, Status::Healthy, "{answer:?}: {:?}", obs[1]);
        let o = &obs[0];
        assert_eq!(word(o, Key::Era), Some("legacy"));
        assert_eq!(fact(o, Key::Fallback), Some(&Fact::Bool(true)));
        assert_eq!(int(o, Key::DiscoverHttpStatus), Some(status));
        assert_eq!(int(o, Key::DiscoverRpcCode), code);
        assert_eq!(word(o, Key::NegotiatedVersion), Some("2025-11-25"));
        assert_eq!(
            methods(&log),
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list",
                "resources/list",
                "prompts/list"
            ]
        );
        let log = lock(&log);
        let frames: Vec<Frame> = log.sent.iter().map(|s| s.frame).collect();
        let v = Frame::Legacy(Revision::V2025_11_25);
        assert_eq!(frames, [Frame::Modern, Frame::Handshake, v, v, v, v]);
        let ids: Vec<Option<u64>> = log.sent.iter().map(|s| s.id).collect();
        assert_eq!(ids, [Some(1), Some(2), None, Some(4), Some(5), Some(6)]);
        let initialize = &log.sent[1];
        assert_eq!(initialize.params()["protocolVersion"], "2025-11-25");
        assert_eq!(initialize.params().get("_meta"), None);
        assert_eq!(log.sent[2].body.get("params"), None);
        assert_eq!(log.sent[3].params(), &json!({}));
    }
}

/// Pre-release numbering (−32000..−32019) is never a modern error.
#[test]
fn pre_release_codes_fall_back() {
    for code in [-32001, -32003, -32004, -32019] {
        let (o, log) = protocol(
            options(),
            Scripted::new(legacy_server(rpc(code, 400), "2025-06-18")),
        );
        assert_eq!(o.status, Status::Healthy, "{code}");
        assert_eq!(methods(&log)[1], "initialize");
    }
}

/// Not rejections: classified without a downgrade (upstream §17 C22, N123, N124).
#[test]
fn other_discovery_failures_are_final() {
    let cases = [
        (http(500), Status::Unhealthy, DiagnosticCode::McpHttp),
        (http(503), Status::Unhealthy, DiagnosticCode::McpHttp),
        (http(307), Status::Unhealthy, DiagnosticCode::McpHttp),
        (http(401), Status::Misconfigured, DiagnosticCode::McpAuth),
        (http(403), Status::Misconfigured, DiagnosticCode::McpAuth),
        (rpc(-32603, 500), Status::Unhealthy, DiagnosticCode::McpRpc),
        (rpc(-32601, 302), Status::Unhealthy, DiagnosticCode::McpRpc),
        // A 200 whose result names versions but none usable (issue 12).
        (
            ok(r#"{"supportedVersions":[],"capabilities":{}}"#),
            Status::Unhealthy,
            DiagnosticCode::McpProtocol,
        ),
        (
            Err(TransportError::Malformed(Malformed::Result("x"))),
            Status::Unhealthy,
            DiagnosticCode::McpProtocol,
        ),
        (
            Err(TransportError::Limit(Limit::Pages)),
            Status::Unknown,
            DiagnosticCode::McpLimit,
        ),
    ];
    for (answer, status, code) in cases {
        let (o, log) = protocol(options(), Scripted::new(modern_server(answer.clone())));
        assert_coded(&o, status, code);
        assert_eq!(methods(&log), ["server/discover"], "{answer:?}");
    }
}

/// A discover result with no `supportedVersions` at all (`{}`: a legacy server that answers
/// any method) is no modern answer: unpinned, it falls back to `initialize`, saying why, as
/// both official clients do; with a 2026-07-28 pin there is no fallback and it is malformed.
#[test]
fn a_discover_result_without_versions_falls_back_unless_pinned() {
    let (o, log) = protocol(
        options(),
        Scripted::new(legacy_server(ok("{}"), "2025-11-25")),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(fact(&o, Key::Era), Some(&Fact::Word("legacy")));
    assert_eq!(fact(&o, Key::Fallback), Some(&Fact::Bool(true)));
    assert_eq!(
        fact(&o, Key::DiscoverResult),
        Some(&Fact::Word("no_versions"))
    );
    assert_eq!(&methods(&log)[..2], ["server/discover", "initialize"]);
    let (o, log) = protocol(
        pinned("2026-07-28"),
        Scripted::new(legacy_server(ok("{}"), "2025-11-25")),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(methods(&log), ["server/discover"]);
}

/// A timeout never downgrades. One after a partial response is not remembered (the next
/// dimension probes again); one with nothing received is shared: the next dimension reports
/// it (`shared_timeout`) without waiting a second deadline on the silent server.
#[test]
fn timeouts_never_downgrade() {
    for seen in [false, true] {
        let (obs, log) = check(
            options(),
            Scripted::new(modern_server(Err(TransportError::timed_out(
                crate::contract::Bound::TimeoutMs,
                seen,
            )))),
            &[Dimension::Authentication, Dimension::Protocol],
        );
        let expected = if seen {
            Status::Unknown
        } else {
            Status::Unreachable
        };
        assert_eq!(obs[0].status, expected);
        assert_eq!(obs[0].code(), None);
        assert_eq!(obs[0].response_seen, seen);
        assert_eq!(obs[1].status, expected);
        if seen {
            assert_eq!(methods(&log), ["server/discover", "server/discover"]);
        } else {
            assert_eq!(methods(&log), ["server/discover"]);
            assert_eq!(
                obs[1].evidence.get(Key::SharedTimeout),
                Some(&Fact::Word("authentication"))
            );
            assert!(obs[1].evidence.get(Key::DeadlineMs).is_some());
        }
    }
}

#[test]
fn discovery_results_are_validated() {
    let no_modern = r#"{"supportedVersions":["2025-11-25"],"capabilities":{}}"#;
    let (o, _) = protocol(options(), Scripted::new(modern_server(ok(no_modern))));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpVersion);
    let input =
        r#"{"resultType":"input_required","supportedVersions":["2026-07-28"],"capabilities":{}}"#;
    let (o, _) = protocol(options(), Scripted::new(modern_server(ok(input))));
    assert_coded(&o, Status::Unknown, DiagnosticCode::McpInput);
    let (o, log) = protocol(options(), Scripted::new(modern_server(ok("[]"))));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(methods(&log), ["server/discover"]);
}

/// A modern pin never falls back (upstream §17 N125).
#[test]
fn modern_pin_disables_fallback() {
    let (o, log) = protocol(
        pinned("2026-07-28"),
        Scripted::new(legacy_server(http(400), "2025-11-25")),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpHttp);
    assert_eq!(methods(&log), ["server/discover"]);
    assert_eq!(int(&o, Key::HttpStatus), Some(400));
    // The evidence says why there was no fallback: the pin.
    assert_eq!(word(&o, Key::PinnedVersion), Some("2026-07-28"));
    assert_eq!(fact(&o, Key::Fallback), None);
    let (o, _) = protocol(
        pinned("2026-07-28"),
        Scripted::new(modern_server(ok(DISCOVER_OK))),
    );
    assert_eq!(o.status, Status::Healthy);
    assert_eq!(word(&o, Key::PinnedVersion), Some("2026-07-28"));
    // Unpinned, nothing claims a pin.
    let (o, _) = protocol(options(), Scripted::new(modern_server(ok(DISCOVER_OK))));
    assert_eq!(fact(&o, Key::PinnedVersion), None);
}

/// A legacy pin skips discovery, offers exactly the pin and accepts only it (upstream §17
/// B10, J62); a modern-only server's −32022 is a version failure, never a fallback.
#[test]
fn legacy_pin_disables_discovery() {
    let (o, log) = protocol(
        pinned("2025-06-18"),
        Scripted::new(legacy_server(http(400), "2025-06-18")),
    );
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(methods(&log), ["initialize", "notifications/initialized"]);
    assert_eq!(lock(&log).sent[0].params()["protocolVersion"], "2025-06-18");
    assert_eq!(word(&o, Key::Era), Some("legacy"));
    assert_eq!(word(&o, Key::PinnedVersion), Some("2025-06-18"));
    assert_eq!(fact(&o, Key::Fallback), None);

    let (o, _) = protocol(
        pinned("2025-11-25"),
        Scripted::new(legacy_server(http(400), "2025-06-18")),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpVersion);
    assert_eq!(word(&o, Key::PinnedVersion), Some("2025-11-25"));
    assert_eq!(
        revision(&o, Key::ServerVersion).as_deref(),
        Some("2025-06-18")
    );

    let reject_legacy = |m: &Sent| match m.method.as_str() {
        "initialize" => rpc(-32022, 400),
        other => panic!("unexpected {other}"),
    };
    let (o, log) = protocol(pinned("2025-11-25"), Scripted::new(reject_legacy));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpVersion);
    assert_eq!(int(&o, Key::RpcCode), Some(-32022));
    assert_eq!(word(&o, Key::FailedMethod), Some("initialize"));
    assert_eq!(methods(&log), ["initialize"]);
}

#[test]
fn invalid_pin_is_misconfigured_before_any_traffic() {
    let transport = Scripted::new(|_: &Sent| panic!("no traffic"));
    let log = transport.log();
    let mut run = run(pinned("2024-11-05"), transport);
    let o = run.configure();
    // No code: `mcp_version` would read as the server's answer, and nothing was sent.
    assert_eq!((o.status, o.code()), (Status::Misconfigured, None), "{o:?}");
    assert_eq!(
        fact(&o, Key::ProtocolVersion),
        Some(&Fact::Config("2024-11-05".into()))
    );
    let again = run.check(Dimension::Protocol, &attempt());
    assert_eq!(again, o);
    assert!(lock(&log).sent.is_empty() && lock(&log).probes == 0);
}

/// Stdio: any unrecognised RPC error means legacy (upstream §17 G38, J61); a silent process
/// never does.
#[test]
fn stdio_rule() {
    let legacy_error = Err(TransportError::Rpc {
        code: -32602,
        status: None,
    });
    let (o, log) = protocol(
        options(),
        Scripted::new(legacy_server(legacy_error, "2025-11-25")).stdio(),
    );
    assert_eq!(o.status, Status::Healthy);
    assert_eq!(methods(&log)[1], "initialize");
    assert_eq!(int(&o, Key::DiscoverRpcCode), Some(-32602));
    assert_eq!(int(&o, Key::DiscoverHttpStatus), None);

    let silent = Err(TransportError::timed_out(
        crate::contract::Bound::TimeoutMs,
        false,
    ));
    let (o, log) = protocol(
        options(),
        Scripted::new(legacy_server(silent, "2025-11-25")).stdio(),
    );
    assert_eq!(o.status, Status::Unreachable);
    assert_eq!(methods(&log), ["server/discover"]);
}

// ---------------------------------------------------------------- legacy lifecycle (§17 A–B)

/// Upstream §17 A1/A3: one session for every dimension, paginated tools, requirements met.
#[test]
fn legacy_end_to_end_shares_one_session() {
    for sse in [false, true] {
        let server = |m: &Sent| match m.method.as_str() {
            "server/discover" => http(400),
            "initialize" => Ok(init("2025-06-18")),
            "notifications/initialized" => ok(""),
            "tools/list" if m.params().get("cursor").is_none() => {
                ok(r#"{"tools":[],"nextCursor":"page-2"}"#)
            }
            "tools/list" => {
                assert_eq!(m.params()["cursor"], "page-2");
                ok(TOOLS)
            }
            "resources/list" => ok(RESOURCES),
            "prompts/list" => ok(PROMPTS),
            other => panic!("unexpected {other}"),
        };
        let mut transport = Scripted::new(server).with_session_id();
        if sse {
            transport = transport.sse();
        }
        let (obs, log) = check(
            requiring(&["search"], &["health://ready"], &["summary"]),
            transport,
            &[
                Dimension::Reachability,
                Dimension::Authentication,
                Dimension::Protocol,
                Dimension::Capability,
            ],
        );
        for o in &obs {
            assert_eq!(o.status, Status::Healthy, "{o:?}");
        }
        assert!(obs[0].latency.is_some());
        let cap = &obs[3];
        assert_eq!(word(cap, Key::NegotiatedVersion), Some("2025-06-18"));
        assert_eq!(fact(cap, Key::SessionIdIssued), Some(&Fact::Bool(true)));
        assert_eq!(
            word(cap, Key::ResponseMode),
            Some(if sse { "sse" } else { "json" })
        );
        assert_eq!(int(cap, Key::ToolsCount), Some(1));
        assert_eq!(int(cap, Key::ResourcesCount), Some(1));
        assert_eq!(int(cap, Key::PromptsCount), Some(1));
        assert_eq!(fact(cap, Key::FailedMethod), None);
        // The inventories are listed in rounds: the first page of each, then tools' second.
        assert_eq!(
            methods(&log),
            [
                "server/discover",
                "initialize",
                "notifications/initialized",
                "tools/list",
                "resources/list",
                "prompts/list",
                "tools/list"
            ]
        );
        assert_eq!(lock(&log).closes.len(), 1);
    }
}

/// Upstream §17 B6–B8 and N144: missing requirements name exactly the configured names.
#[test]
fn missing_requirements() {
    let cases = [
        (
            requiring(&["missing", "search"], &[], &[]),
            Key::MissingTools,
        ),
        (requiring(&[], &["missing://x"], &[]), Key::MissingResources),
        (requiring(&[], &[], &["missing"]), Key::MissingPrompts),
    ];
    for (options, key) in cases {
        let (obs, _) = check(
            options,
            Scripted::new(legacy_server(http(400), "2025-11-25")),
            &[Dimension::Protocol, Dimension::Capability],
        );
        assert_eq!(obs[0].status, Status::Healthy);
        assert_coded(&obs[1], Status::Unhealthy, DiagnosticCode::McpRequired);
        let missing = fact(&obs[1], key).expect("named");
        assert!(
            matches!(missing, Fact::ConfigList(v) if v.len() == 1 && v[0].starts_with("missing"))
        );
    }

    // An unadvertised inventory is skipped, and a requirement on it is missing.
    let tools_only = |m: &Sent| match m.method.as_str() {
        "server/discover" => {
            ok(r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#)
        }
        "tools/list" => ok(TOOLS),
        other => panic!("unexpected {other}"),
    };
    let (obs, log) = check(
        requiring(&["search"], &[], &["summary"]),
        Scripted::new(tools_only),
        &[Dimension::Capability],
    );
    assert_coded(&obs[0], Status::Unhealthy, DiagnosticCode::McpRequired);
    assert_eq!(
        fact(&obs[0], Key::MissingPrompts),
        Some(&Fact::ConfigList(vec!["summary".into()]))
    );
    assert_eq!(fact(&obs[0], Key::MissingTools), None);
    assert_eq!(fact(&obs[0], Key::PromptsCount), None);
    assert_eq!(methods(&log), ["server/discover", "tools/list"]);
}

/// Upstream §17 B9–B11, B16 through the whole flow.
#[test]
fn legacy_classification() {
    let (o, _) = protocol(
        options(),
        Scripted::new(legacy_server(http(400), "2099-01-01")),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpVersion);
    assert_eq!(word(&o, Key::FailedMethod), Some("initialize"));
    assert_eq!(fact(&o, Key::Fallback), Some(&Fact::Bool(true)));

    let empty_init = |m: &Sent| match m.method.as_str() {
        "server/discover" => http(405),
        "initialize" => ok("{}"),
        other => panic!("unexpected {other}"),
    };
    let (o, _) = protocol(options(), Scripted::new(empty_init));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);

    let unauthorized = |m: &Sent| match m.method.as_str() {
        "server/discover" => http(401),
        other => panic!("unexpected {other}"),
    };
    let (o, _) = protocol(options(), Scripted::new(unauthorized));
    assert_coded(&o, Status::Misconfigured, DiagnosticCode::McpAuth);
    assert_eq!(int(&o, Key::HttpStatus), Some(401));

    let pinned_unauthorized = |m: &Sent| match m.method.as_str() {
        "initialize" => http(401),
        other => panic!("unexpected {other}"),
    };
    let (o, _) = protocol(pinned("2025-11-25"), Scripted::new(pinned_unauthorized));
    assert_coded(&o, Status::Misconfigured, DiagnosticCode::McpAuth);
    assert_eq!(word(&o, Key::FailedMethod), Some("initialize"));

    let notification_rejected = |m: &Sent| match m.method.as_str() {
        "initialize" => Ok(init("2025-11-25")),
        "notifications/initialized" => http(500),
        other => panic!("unexpected {other}"),
    };
    let (o, _) = protocol(pinned("2025-11-25"), Scripted::new(notification_rejected));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpHttp);
    assert_eq!(
        word(&o, Key::FailedMethod),
        Some("notifications/initialized")
    );
    assert_eq!(word(&o, Key::NegotiatedVersion), Some("2025-11-25"));
}

// ---------------------------------------------------------------- inventories

fn listing(
    era_discover: bool,
    tools: impl FnMut(&Sent) -> ScriptedReply + Send + 'static,
    options: McpOptions,
) -> Observation {
    let mut tools = tools;
    let server = move |m: &Sent| {
        match m.method.as_str() {
        "server/discover" if era_discover => ok(
            r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#,
        ),
        "server/discover" => http(400),
        "initialize" => Ok(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#
                .to_owned(),
        ),
        "notifications/initialized" => ok(""),
        "tools/list" => tools(m),
        other => panic!("unexpected {other}"),
    }
    };
    let (mut obs, _) = check(options, Scripted::new(server), &[Dimension::Capability]);
    obs.remove(0)
}

/// Upstream §17 B12, B13, N137–N142 and the page and entry limits.
#[test]
fn inventory_classification() {
    let fixed = |text: &'static str| move |_: &Sent| ok(text);
    let unhealthy = [
        r#"{"tools":null}"#,
        r#"{}"#,
        r#"{"tools":[null]}"#,
        r#"{"tools":[{"inputSchema":{"type":"object"}}]}"#,
        r#"{"tools":[{"name":"  ","inputSchema":{"type":"object"}}]}"#,
        r#"{"tools":[{"name":"a"}]}"#,
        r#"{"tools":[{"name":"a","inputSchema":{"type":"array"}}]}"#,
        r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"object"}}]}"#,
        r#"{"tools":[],"nextCursor":7}"#,
    ];
    for page in unhealthy {
        for modern in [true, false] {
            let o = listing(modern, fixed(page), options());
            assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
            assert_eq!(word(&o, Key::FailedMethod), Some("tools/list"), "{page}");
        }
    }

    // B13: a cursor that repeats is a loop.
    let o = listing(
        false,
        fixed(r#"{"tools":[],"nextCursor":"repeat"}"#),
        options(),
    );
    assert_coded(&o, Status::Unknown, DiagnosticCode::McpLimit);
    assert_eq!(word(&o, Key::Limit), Some("repeated cursor"));

    // N139: a duplicate across pages.
    let across = |m: &Sent| {
        let page = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#;
        if m.params().get("cursor").is_none() {
            ok(page)
        } else {
            ok(r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#)
        }
    };
    assert_coded(
        &listing(false, across, options()),
        Status::Unhealthy,
        DiagnosticCode::McpProtocol,
    );

    // N141: 100 pages are fine, a 101st is over the limit.
    for (pages, limited) in [(100usize, false), (101, true)] {
        let served = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&served);
        let paged = move |_: &Sent| {
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            if n < pages {
                Ok(format!(r#"{{"tools":[],"nextCursor":"c{n}"}}"#))
            } else {
                ok(r#"{"tools":[]}"#)
            }
        };
        let o = listing(true, paged, options());
        if limited {
            assert_coded(&o, Status::Unknown, DiagnosticCode::McpLimit);
            assert_eq!(served.load(Ordering::SeqCst), 100);
        } else {
            assert_eq!(o.status, Status::Healthy, "{o:?}");
        }
    }

    // N140: 10 000 entries are fine, 10 001 are over the limit.
    for (n, limited) in [(10_000usize, false), (10_001, true)] {
        let tools: Vec<Value> = (0..n)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let page = json!({ "tools": tools }).to_string();
        let o = listing(false, move |_: &Sent| Ok(page.clone()), options());
        if limited {
            assert_coded(&o, Status::Unknown, DiagnosticCode::McpLimit);
        } else {
            assert_eq!(int(&o, Key::ToolsCount), Some(10_000));
        }
    }

    // An end of listing: nextCursor absent or null.
    let o = listing(false, fixed(r#"{"tools":[],"nextCursor":null}"#), options());
    assert_eq!(o.status, Status::Healthy);
}

/// Modern pages carry the envelope and the cursor, and obey the `resultType` rule (N128).
#[test]
fn modern_pages() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let paged = move |m: &Sent| {
        crate::runtime::sync::lock(&record).push(m.params().clone());
        if m.params().get("cursor").is_none() {
            ok(r#"{"resultType":"complete","tools":[],"nextCursor":"a \"b\""}"#)
        } else {
            ok(TOOLS)
        }
    };
    let o = listing(true, paged, options());
    assert_eq!(o.status, Status::Healthy);
    let params = crate::runtime::sync::lock(&seen);
    assert_eq!(params[1]["cursor"], "a \"b\"");
    assert!(params.iter().all(|p| p.get("_meta").is_some()));

    let input = |_: &Sent| ok(r#"{"resultType":"input_required","tools":[]}"#);
    assert_coded(
        &listing(true, input, options()),
        Status::Unknown,
        DiagnosticCode::McpInput,
    );
    let unknown = |_: &Sent| ok(r#"{"resultType":"partial","tools":[]}"#);
    assert_coded(
        &listing(true, unknown, options()),
        Status::Unhealthy,
        DiagnosticCode::McpProtocol,
    );
    // Legacy results have no resultType rule.
    let legacy = |_: &Sent| ok(r#"{"resultType":"partial","tools":[]}"#);
    assert_eq!(listing(false, legacy, options()).status, Status::Healthy);
}

/// Upstream §17 N143: over modern HTTP a tool with an invalid header annotation is excluded,
/// so a requirement on it is missing and the evidence says why; over stdio, and in the
/// legacy era, it stays.
#[test]
fn invalid_header_annotations_exclude_tools_on_modern_http() {
    let page = r#"{"tools":[
        {"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"number","x-mcp-header":"Q"}}}},
        {"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"bad name"}}}},
        {"name":"other","inputSchema":{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q"}}}}]}"#;
    let o = listing(
        true,
        move |_: &Sent| ok(page),
        requiring(&["search", "other"], &[], &[]),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpRequired);
    assert_eq!(
        fact(&o, Key::MissingTools),
        Some(&Fact::ConfigList(vec!["search".into()]))
    );
    assert_eq!(
        fact(&o, Key::ExcludedTools),
        Some(&Fact::ConfigList(vec!["search".into()]))
    );
    assert_eq!(
        word(&o, Key::ExclusionReason),
        Some("x-mcp-header property is not a string, integer or boolean")
    );
    assert_eq!(int(&o, Key::ToolsCount), Some(1));
    assert_eq!(int(&o, Key::ToolsExcluded), Some(2));

    // Legacy era: the annotations mean nothing, so the duplicate name is a duplicate.
    let o = listing(
        false,
        move |_: &Sent| ok(page),
        requiring(&["search"], &[], &[]),
    );
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);

    // Stdio: the same modern server keeps its tools.
    let single = r#"{"tools":[{"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"number","x-mcp-header":"Q"}}}}]}"#;
    let server = move |m: &Sent| match m.method.as_str() {
        "server/discover" => {
            ok(r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#)
        }
        "tools/list" => ok(single),
        other => panic!("unexpected {other}"),
    };
    let (obs, _) = check(
        requiring(&["search"], &[], &[]),
        Scripted::new(server).stdio(),
        &[Dimension::Capability],
    );
    assert_eq!(obs[0].status, Status::Healthy, "{:?}", obs[0]);
}

// ---------------------------------------------------------------- the shared session

/// A failure that received a response is remembered; later dimensions repeat it without
/// traffic and count as having a response.
#[test]
fn failures_with_a_response_are_shared() {
    let (obs, log) = check(
        options(),
        Scripted::new(modern_server(rpc(-32022, 400))),
        &[
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Capability,
        ],
    );
    assert_eq!(obs[0], obs[1]);
    assert_eq!(obs[1], obs[2]);
    assert!(obs[2].response_seen);
    assert_eq!(methods(&log), ["server/discover"]);
}

/// An aborted attempt is discarded with its session: the next dimension starts afresh
/// (upstream §17 N161).
#[test]
fn discard_starts_a_new_session() {
    let transport = Scripted::new(legacy_server(http(400), "2025-11-25"));
    let log = transport.log();
    let mut run = run(requiring(&["search"], &[], &[]), transport);
    run.configure();
    assert_eq!(
        run.check(Dimension::Protocol, &attempt()).status,
        Status::Healthy
    );
    run.discard();
    assert_eq!(
        run.check(Dimension::Capability, &attempt()).status,
        Status::Healthy
    );
    let sent = methods(&log);
    assert_eq!(sent.iter().filter(|m| *m == "initialize").count(), 2);
    assert_eq!(lock(&log).discards, 1);
    // Ids restart with the new session.
    assert_eq!(
        lock(&log).sent.iter().filter(|s| s.id == Some(1)).count(),
        2
    );
}

/// Reachability over a transport without a probe times establishment instead.
#[test]
fn reachability_without_a_probe_establishes() {
    let (obs, log) = check(
        options(),
        Scripted::new(modern_server(ok(DISCOVER_OK))).stdio(),
        &[Dimension::Reachability, Dimension::Protocol],
    );
    assert_eq!(obs[0].status, Status::Healthy);
    assert!(obs[0].latency.is_some());
    assert_eq!(word(&obs[0], Key::Era), Some("modern"));
    assert_eq!(methods(&log), ["server/discover"]);
}

#[test]
fn client_credentials_extension_is_declared() {
    let with: serde_json::Value =
        serde_json::from_str(&format!("{{{}}}", crate::adapter::mcp::session::meta(true)))
            .unwrap_or_default();
    let caps = &with["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(
        caps["extensions"]
            .get("io.modelcontextprotocol/oauth-client-credentials")
            .is_some()
    );
    let without: serde_json::Value = serde_json::from_str(&format!(
        "{{{}}}",
        crate::adapter::mcp::session::meta(false)
    ))
    .unwrap_or_default();
    assert_eq!(
        without["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        serde_json::json!({})
    );
}

/// OAuth's offline rules run at the configuration check, before any traffic: a token is
/// never sent to a plain-http endpoint off this machine, nor obtained from an insecure issuer.
#[test]
fn oauth_targets_with_insecure_urls_are_misconfigured_offline() {
    use super::McpRun;
    use super::testing::target;
    use crate::config::{Config, OAuthOptions};
    use crate::contract::OAuthGrant;
    use crate::result::Key;
    use crate::run_plan::RunPlan;
    let oauth = |issuer: &str| McpOptions {
        oauth: Some(OAuthOptions {
            issuer: issuer.into(),
            client_id: Some("c".into()),
            grant: OAuthGrant::ClientCredentials,
            client_secret_env: Some("S".into()),
            refresh_token_env: None,
            token_file: None,
            scopes: Vec::new(),
            redirect_port: None,
            token_endpoint_auth_method: None,
        }),
        ..McpOptions::default()
    };
    for (endpoint, issuer, step) in [
        (
            "http://mcp.example.com/mcp",
            "https://auth.example.com",
            "endpoint",
        ),
        (
            "http://127.0.0.1:9/mcp",
            "http://auth.example.com",
            "issuer",
        ),
    ] {
        let mut t = target(oauth(issuer));
        t.endpoint = endpoint.into();
        let config = Config {
            concurrency: 1,
            nodes: vec![t],
            roots: vec![0],
            deadline: None,
            modules: Vec::new(),
            unusable_endpoint: None,
        };
        let plan = RunPlan::resolve(config, |_| Some("secret".into()));
        let mut run = McpRun::new(Arc::clone(&plan.targets[0]), None);
        let o = run.configure();
        assert_eq!(o.status, Status::Misconfigured, "{endpoint}");
        assert_eq!(o.code(), Some(DiagnosticCode::McpOauth));
        assert_eq!(o.evidence.get(Key::Oauth), Some(&Fact::Word(step)));
    }
}

#[test]
fn endpoints_are_validated_offline() {
    use super::McpRun;
    use super::testing::{context, target};
    for (endpoint, ok) in [
        ("http://localhost:3000/mcp", true),
        ("https://example.com/mcp?x=1", true),
        ("HTTP://EXAMPLE.COM", true),
        ("ftp://example.com/mcp", false),
        ("http://user:pw@example.com/mcp", false),
        ("http://example.com/mcp#frag", false),
        ("/mcp", false),
        ("example.com/mcp", false),
        ("", false),
    ] {
        let mut t = target(McpOptions::default());
        t.endpoint = endpoint.into();
        let mut run = McpRun::new(context(t), None);
        let o = run.configure();
        assert_eq!(o.status == Status::Healthy, ok, "{endpoint}: {o:?}");
    }
}

/// A refused credential is a typed rejection; naming its variable is the engine's job, in
/// one place for every adapter (`engine::tests::a_credential_rejection_names_the_variable`).
#[test]
fn refused_credentials_are_typed_rejections() {
    let refuse = |_: &Sent| http(401);
    let mut target = testing::target(options());
    target.bearer_env = Some("MCP_TOKEN".into());
    let mut run = McpRun::new(
        testing::context(target),
        Some(Box::new(Scripted::new(refuse))),
    );
    let o = run.check(Dimension::Authentication, &attempt());
    assert_coded(&o, Status::Misconfigured, DiagnosticCode::McpAuth);
    assert!(
        o.reason
            .is_some_and(crate::result::Reason::rejects_credentials)
    );
    assert_eq!(fact(&o, Key::CredentialEnv), None);
    assert_eq!(word(&o, Key::FailedMethod), Some("server/discover"));
}

/// The inventories are listed in rounds, yet the outcome is that of a listing in order: the
/// first inventory that fails decides; those after it are listed no further, those before it
/// to their end.
#[test]
fn the_first_inventory_in_order_that_fails_decides() {
    const PAGED: &str = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],
        "nextCursor":"c2"}"#;
    const BAD_TOOL: &str = r#"{"tools":[{"name":" ","inputSchema":{"type":"object"}}]}"#;
    const PAGED_PROMPTS: &str = r#"{"prompts":[{"name":"p"}],"nextCursor":"p2"}"#;
    let capability = |tools_p2: &'static str, resources: ScriptedReply| {
        let server = move |m: &Sent| match (m.method.as_str(), m.params().get("cursor")) {
            ("server/discover", _) => ok(DISCOVER_OK),
            ("tools/list", None) => ok(PAGED),
            ("tools/list", Some(_)) => ok(tools_p2),
            ("resources/list", _) => resources.clone(),
            ("prompts/list", None) => ok(PAGED_PROMPTS),
            ("prompts/list", Some(_)) => ok(PROMPTS),
            other => panic!("unexpected {other:?}"),
        };
        let (mut obs, log) = check(options(), Scripted::new(server), &[Dimension::Capability]);
        (obs.remove(0), methods(&log))
    };
    // Resources fail in the first round, tools' second page after them: tools decide.
    let (o, sent) = capability(BAD_TOOL, http(500));
    assert_coded(&o, Status::Unhealthy, DiagnosticCode::McpProtocol);
    assert_eq!(word(&o, Key::FailedMethod), Some("tools/list"));
    assert_eq!(
        sent,
        [
            "server/discover",
            "tools/list",
            "resources/list",
            "prompts/list",
            "tools/list"
        ],
        "prompts, after the failed resources, get no second page"
    );
    // Tools complete: the resources' failure decides.
    let (o, _) = capability(TOOLS, http(500));
    assert_eq!(word(&o, Key::FailedMethod), Some("resources/list"));
    assert_ne!(o.status, Status::Healthy);
    // Nothing fails: every page of every inventory.
    let (o, sent) = capability(TOOLS, ok(RESOURCES));
    assert_eq!(o.status, Status::Healthy, "{o:?}");
    assert_eq!(int(&o, Key::ToolsCount), Some(2));
    assert_eq!(int(&o, Key::PromptsCount), Some(2));
    assert_eq!(sent.len(), 6);
}
