//! Protocol selection across eras, through the binary against the fake server: one test per
//! branch of issue 4's selection table (and of the pins), each asserting the exact request
//! sequence the server saw, the era evidence and the classification.
//!
//! Servers that could be downgraded are `Era::Dual` (they also answer `initialize`), so a
//! sequence without `initialize` proves the client did not fall back.

use std::time::Duration;

use serde_json::Value;

use crate::util::{Outcome, TempDir, run};
use agenthealth_testkit::fake_mcp::{
    Action, DiscoverReply, Era, FakeConfig, FakeServer, Fault, Mode, Seen,
};

const DISCOVER: &str = "server/discover";

/// `HEAD`, `POST <json-rpc method>`, `DELETE`, … in arrival order.
/// The requests as they arrived, except that the inventories, listed at once on connections
/// of their own, arrive in any order: each run of consecutive `*/list` requests is put in
/// listing order (tools, resources, prompts).
fn sequence(server: &FakeServer) -> Vec<String> {
    let mut seen: Vec<String> = server
        .log()
        .iter()
        .map(|s| match &s.rpc_method {
            Some(m) => format!("{} {m}", s.method),
            None => s.method.clone(),
        })
        .collect();
    let order = |r: &String| {
        ["tools/list", "resources/list", "prompts/list"]
            .iter()
            .position(|l| r.ends_with(l))
    };
    let mut i = 0;
    while i < seen.len() {
        let run = seen[i..].iter().take_while(|r| order(r).is_some()).count();
        seen[i..i + run].sort_by_key(order);
        i += run.max(1);
    }
    seen
}

fn ping(server: &FakeServer) -> Outcome {
    run(&["ping", "mcp", &server.url(), "--format", "json"])
}

/// `check` of one MCP target pinned to `pin`.
fn pinned(server: &FakeServer, pin: &str) -> Outcome {
    let dir = TempDir::new("select");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: pinned\n    type: mcp\n    endpoint: {}\n    mcp:\n      protocol_version: '{pin}'\n",
            server.url()
        ),
    );
    run(&["check", f.to_str().unwrap_or_default(), "--format", "json"])
}

fn protocol(o: &Outcome) -> Value {
    o.json()["checks"]["protocol"].clone()
}

/// Every expected request, in order; `DISCOVER` etc. name POSTs.
fn posts(methods: &[&str]) -> Vec<String> {
    let mut out = vec!["HEAD".to_string()];
    out.extend(methods.iter().map(|m| format!("POST {m}")));
    out
}

const LISTS: [&str; 3] = ["tools/list", "resources/list", "prompts/list"];

fn modern_sequence() -> Vec<String> {
    let mut m = vec![DISCOVER];
    m.extend(LISTS);
    posts(&m)
}

fn legacy_sequence(discover: bool) -> Vec<String> {
    let mut m = Vec::new();
    if discover {
        m.push(DISCOVER);
    }
    m.extend(["initialize", "notifications/initialized"]);
    m.extend(LISTS);
    let mut s = posts(&m);
    s.push("DELETE".into());
    s
}

/// Every modern POST carries the envelope version, the matching headers and no session.
fn assert_modern_requests(log: &[Seen]) {
    for s in log.iter().filter(|s| s.method == "POST") {
        let method = s.rpc_method.as_deref().unwrap_or_default();
        assert_eq!(
            s.meta_protocol_version.as_deref(),
            Some("2026-07-28"),
            "{method}"
        );
        assert_eq!(
            s.protocol_version.as_deref(),
            Some("2026-07-28"),
            "{method}"
        );
        assert_eq!(s.mcp_method.as_deref(), Some(method), "Mcp-Method");
        assert_eq!(s.session_id, None, "{method}: no session id");
    }
}

/// The handshake offers `offer` without a session or version header; every later request
/// carries the assigned session and the negotiated revision, the DELETE included.
fn assert_legacy_requests(log: &[Seen], offer: &str, negotiated: &str) {
    let init = log
        .iter()
        .position(|s| s.rpc_method.as_deref() == Some("initialize"))
        .expect("an initialize");
    let handshake = &log[init];
    assert_eq!(handshake.offered_version.as_deref(), Some(offer));
    assert_eq!(handshake.session_id, None);
    assert_eq!(handshake.protocol_version, None);
    assert_eq!(handshake.meta_protocol_version, None);
    for s in &log[init + 1..] {
        assert!(s.session_id.is_some(), "{s:?}");
        assert_eq!(s.protocol_version.as_deref(), Some(negotiated), "{s:?}");
        assert_eq!(s.mcp_method, None, "{s:?}: Mcp-Method is modern only");
    }
}

fn dual() -> FakeConfig {
    FakeConfig {
        era: Era::Dual("2025-11-25"),
        ..Default::default()
    }
}

#[test]
fn discovery_success_is_modern_without_a_handshake_session_or_delete() {
    for mode in [Mode::Json, Mode::Sse] {
        let s = FakeServer::start(FakeConfig {
            response: mode.clone(),
            ..dual()
        });
        let o = ping(&s);
        assert_eq!(o.code, 0, "{mode:?}: {}", o.stdout);
        assert_eq!(sequence(&s), modern_sequence(), "{mode:?}");
        assert_modern_requests(&s.log());
        let p = protocol(&o);
        assert_eq!(p["evidence"]["era"], "modern");
        assert_eq!(p["evidence"]["negotiated_version"], "2026-07-28");
        let sse = if mode == Mode::Sse { "sse" } else { "json" };
        assert_eq!(
            p["evidence"]["response_mode"], sse,
            "parsed to our response"
        );
        assert!(p["evidence"]["fallback"].is_null());
    }
}

/// A stateless legacy server (no session id): negotiated, listed, and nothing to delete.
#[test]
fn a_stateless_legacy_server_needs_no_session() {
    for mode in [Mode::Json, Mode::Sse] {
        let mut cfg = FakeConfig {
            response: mode.clone(),
            ..Default::default()
        };
        cfg.legacy.issue_session = false;
        cfg.legacy.require_session = false;
        cfg.legacy.discover = Some(DiscoverReply::MethodNotFound);
        let s = FakeServer::start(cfg);
        let o = ping(&s);
        assert_eq!(o.code, 0, "{mode:?}: {}", o.stdout);
        let mut want = legacy_sequence(true);
        want.pop();
        assert_eq!(sequence(&s), want, "no DELETE without a session");
        let ev = &protocol(&o)["evidence"];
        assert_eq!(ev["session_id_issued"], false);
        assert_eq!(ev["negotiated_version"], "2025-11-25");
        assert!(s.log().iter().all(|r| r.session_id.is_none()));
    }
}

/// −32022, −32020, −32021: a modern server said no. Classified, never downgraded, and
/// remembered: one discovery per run.
#[test]
fn recognised_modern_errors_stay_modern() {
    for (status, code, want) in [
        (400, -32022, "mcp_version"),
        (400, -32020, "mcp_rpc"),
        (400, -32021, "mcp_rpc"),
        (200, -32022, "mcp_version"),
        (404, -32020, "mcp_rpc"),
    ] {
        let s = FakeServer::start(dual().with_fault(Fault::on(
            DISCOVER,
            Action::Error {
                status,
                code,
                message: "no",
                data: None,
            },
        )));
        let o = ping(&s);
        assert_eq!(o.code, 2, "{code}: {}", o.stdout);
        assert_eq!(sequence(&s), posts(&[DISCOVER]), "{code}");
        let p = protocol(&o);
        assert_eq!(p["code"], want, "{code}");
        assert_eq!(p["evidence"]["era"], "modern", "{code}");
        assert_eq!(p["evidence"]["rpc_code"], code);
        assert_eq!(p["evidence"]["http_status"], status);
        assert!(p["evidence"]["fallback"].is_null());
    }
}

/// Any other HTTP rejection is a legacy server: `initialize` offering 2025-11-25, and the
/// evidence says what discovery met. Among them the two classes of issue 12, healthy for the
/// official clients: a gateway that maps its handshake-only child's −32601 to a 404, and a
/// stateless server of an older Python SDK line answering any unknown method with −32602 in
/// a 200.
#[test]
fn legacy_rejections_fall_back_to_initialize() {
    let raw = |status, ct: &'static str, body: &str| Action::Raw {
        status,
        headers: vec![("Content-Type", ct)],
        body: body.to_string(),
    };
    let error = |status, code| Action::Error {
        status,
        code,
        message: "legacy",
        data: None,
    };
    let rows: Vec<(&str, Action, u16, Option<i64>)> = vec![
        ("400, no body", raw(400, "text/plain", ""), 400, None),
        ("404, no body", raw(404, "text/plain", ""), 404, None),
        ("405", raw(405, "text/plain", ""), 405, None),
        (
            "400 text (rmcp)",
            raw(400, "text/plain", "Bad Request: Session ID is required"),
            400,
            None,
        ),
        (
            "400 html",
            raw(400, "text/html", "<html>bad</html>"),
            400,
            None,
        ),
        (
            "session required −32000",
            error(400, -32000),
            400,
            Some(-32000),
        ),
        (
            "session not found −32001",
            error(404, -32001),
            404,
            Some(-32001),
        ),
        (
            "invalid params −32602",
            error(400, -32602),
            400,
            Some(-32602),
        ),
        ("−32601 inside a 200", error(200, -32601), 200, Some(-32601)),
        ("−32601 inside a 400", error(400, -32601), 400, Some(-32601)),
        (
            "gateway: −32601 inside a 404",
            error(404, -32601),
            404,
            Some(-32601),
        ),
        (
            "stateless: −32602 inside a 200",
            error(200, -32602),
            200,
            Some(-32602),
        ),
        ("−32600 inside a 200", error(200, -32600), 200, Some(-32600)),
        (
            "pre-release −32000 inside a 200",
            error(200, -32000),
            200,
            Some(-32000),
        ),
        ("pre-release −32019", error(400, -32019), 400, Some(-32019)),
    ];
    for (name, action, status, code) in rows {
        let s = FakeServer::start(dual().with_fault(Fault::on(DISCOVER, action)));
        let o = ping(&s);
        assert_eq!(o.code, 0, "{name}: {}", o.stdout);
        assert_eq!(sequence(&s), legacy_sequence(true), "{name}");
        assert_legacy_requests(&s.log()[1..], "2025-11-25", "2025-11-25");
        let p = protocol(&o);
        let ev = &p["evidence"];
        assert_eq!(ev["era"], "legacy", "{name}");
        assert_eq!(ev["fallback"], true, "{name}");
        assert_eq!(ev["discover_http_status"], status, "{name}");
        match code {
            Some(code) => assert_eq!(ev["discover_rpc_code"], code, "{name}"),
            None => assert!(ev["discover_rpc_code"].is_null(), "{name}"),
        }
        assert_eq!(ev["negotiated_version"], "2025-11-25", "{name}");
        assert_eq!(ev["session_id_issued"], true, "{name}");
    }
}

/// The fake's canned legacy answers (the shapes real SDKs give) fall back too, and legacy
/// negotiation accepts whichever supported revision the server answers.
#[test]
fn legacy_servers_of_every_revision_negotiate_theirs() {
    let replies = [
        DiscoverReply::SessionRequired,
        DiscoverReply::MethodNotFound,
        DiscoverReply::InvalidParams,
        DiscoverReply::UnsupportedVersion,
        DiscoverReply::BadRequestEmpty,
        DiscoverReply::NotFound,
        DiscoverReply::MethodNotAllowed,
        DiscoverReply::GatewayNotFound,
        DiscoverReply::StatelessInvalidParams,
    ];
    for (i, reply) in replies.into_iter().enumerate() {
        let version = ["2025-03-26", "2025-06-18", "2025-11-25"][i % 3];
        let mut cfg = FakeConfig {
            era: Era::Legacy(version),
            response: if i % 2 == 0 { Mode::Json } else { Mode::Sse },
            ..Default::default()
        };
        cfg.legacy.discover = Some(reply.clone());
        let s = FakeServer::start(cfg);
        let o = ping(&s);
        assert_eq!(o.code, 0, "{reply:?}: {}", o.stdout);
        assert_eq!(sequence(&s), legacy_sequence(true), "{reply:?}");
        assert_legacy_requests(&s.log()[1..], "2025-11-25", version);
        assert_eq!(protocol(&o)["evidence"]["negotiated_version"], version);
    }
}

/// Not rejections: authentication, server errors, malformed or unexpected answers and
/// redirects are classified where they happen; nothing is sent after discovery.
#[test]
fn other_discovery_failures_never_downgrade() {
    let rows: Vec<(&str, Action, i32, &str)> = vec![
        ("401", Action::Status(401), 4, "mcp_auth"),
        ("403", Action::Status(403), 4, "mcp_auth"),
        ("500", Action::Status(500), 2, "mcp_http"),
        ("503", Action::Status(503), 2, "mcp_http"),
        ("307", Action::Status(307), 2, "mcp_http"),
        (
            "500 with a JSON-RPC error",
            Action::Error {
                status: 500,
                code: -32603,
                message: "boom",
                data: None,
            },
            2,
            "mcp_rpc",
        ),
        (
            "200, versions but none usable: a malformed discover result",
            Action::Result(serde_json::json!({"supportedVersions": [], "capabilities": {}})),
            2,
            "mcp_protocol",
        ),
        ("malformed JSON", Action::MalformedJson, 2, "mcp_protocol"),
        ("wrong id", Action::WrongId, 2, "mcp_protocol"),
        (
            "200 text/plain",
            Action::ContentType(Some("text/plain")),
            2,
            "mcp_protocol",
        ),
        ("1 MiB + 1", Action::HugeBody((1 << 20) + 1), 5, "mcp_limit"),
    ];
    for (name, action, exit, code) in rows {
        let s = FakeServer::start(dual().with_fault(Fault::on(DISCOVER, action)));
        let o = ping(&s);
        assert_eq!(o.code, exit, "{name}: {}", o.stdout);
        assert_eq!(sequence(&s), posts(&[DISCOVER]), "{name}");
        let p = protocol(&o);
        assert_eq!(p["code"], code, "{name}");
        assert_eq!(p["evidence"]["era"], "modern", "{name}");
        assert_eq!(p["evidence"]["failed_method"], DISCOVER, "{name}");
    }
    // The fake's legacy server answering any method with `{}`: no versions at all is no
    // modern answer, so it falls back, as both official clients do (the Go reference stays
    // UNHEALTHY); with a 2026-07-28 pin it stays a malformed discover result.
    let mut cfg = dual();
    cfg.legacy.discover = Some(DiscoverReply::EmptyResult);
    cfg.era = Era::Legacy("2025-11-25");
    let s = FakeServer::start(cfg.clone());
    let o = ping(&s);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(&sequence(&s)[..3], posts(&[DISCOVER, "initialize"]));
    let evidence = &protocol(&o)["evidence"];
    assert_eq!(evidence["era"], "legacy");
    assert_eq!(evidence["fallback"], true);
    assert_eq!(evidence["discover_http_status"], 200);
    assert_eq!(evidence["discover_result"], "no_versions");
    let s = FakeServer::start(cfg);
    let o = pinned(&s, "2026-07-28");
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(sequence(&s), posts(&[DISCOVER]));
    assert_eq!(protocol(&o)["code"], "mcp_protocol");
    // A discovery answer that does not list 2026-07-28 is a version mismatch, not a legacy
    // server.
    let mut cfg = dual();
    cfg.modern.advertised = Some(vec!["2099-01-01"]);
    let s = FakeServer::start(cfg);
    let o = ping(&s);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(sequence(&s), posts(&[DISCOVER]));
    assert_eq!(protocol(&o)["code"], "mcp_version");
}

/// A timeout never downgrades, and discovery waits the whole attempt deadline (no short
/// speculative probe): each dimension probes again, and none sends `initialize`.
#[test]
fn a_discovery_timeout_never_downgrades() {
    let s = FakeServer::start(dual().with_fault(Fault::on(DISCOVER, Action::HangBeforeHeaders)));
    let timeout = 300;
    let o = run(&[
        "ping",
        "mcp",
        &s.url(),
        "--format",
        "json",
        "--timeout",
        &timeout.to_string(),
    ]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    // authentication waits its full attempt; protocol shares that silence instead of
    // waiting again; capability is skipped. Nothing falls back to initialize.
    assert_eq!(sequence(&s), posts(&[DISCOVER]));
    let t = Duration::from_millis(timeout);
    assert!(
        o.elapsed >= t,
        "waited the attempt deadline: {:?}",
        o.elapsed
    );
    assert!(o.elapsed < t + Duration::from_secs(1), "{:?}", o.elapsed);
    let p = protocol(&o);
    assert_eq!(p["status"], "UNREACHABLE");
    assert!(p["code"].is_null());
    assert_eq!(p["evidence"]["shared_timeout"], "authentication");
}

/// A modern pin disables fallback: a modern server is checked without a handshake, session or
/// DELETE; a legacy server's rejection is final.
#[test]
fn a_modern_pin_never_initializes() {
    let s = FakeServer::start(dual());
    let o = pinned(&s, "2026-07-28");
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(sequence(&s), modern_sequence());
    assert_modern_requests(&s.log());
    assert_eq!(s.count_http("DELETE") + s.count_http("GET"), 0);

    let mut legacy = FakeConfig::default();
    legacy.legacy.discover = Some(DiscoverReply::BadRequestEmpty);
    let s = FakeServer::start(legacy);
    let o = pinned(&s, "2026-07-28");
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(sequence(&s), posts(&[DISCOVER]));
    let p = protocol(&o);
    assert_eq!(p["code"], "mcp_http");
    assert_eq!(p["evidence"]["http_status"], 400);
    assert!(p["evidence"]["fallback"].is_null());
}

/// A legacy pin skips discovery, offers exactly the pin and accepts only it.
#[test]
fn a_legacy_pin_offers_exactly_the_pin() {
    for pin in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let s = FakeServer::start(dual());
        let o = pinned(&s, pin);
        assert_eq!(o.code, 0, "{pin}: {}", o.stdout);
        assert_eq!(sequence(&s), legacy_sequence(false), "{pin}");
        assert_legacy_requests(&s.log()[1..], pin, pin);
        let ev = &protocol(&o)["evidence"];
        assert_eq!(ev["era"], "legacy");
        assert_eq!(ev["negotiated_version"], pin);
        assert!(ev["fallback"].is_null());
    }
    // The server answers another (supported) revision: a mismatch, with both in evidence.
    // The session it assigned is still deleted.
    let mut cfg = FakeConfig {
        era: Era::Legacy("2025-06-18"),
        ..Default::default()
    };
    cfg.legacy.supported = Some(vec!["2025-06-18"]);
    let s = FakeServer::start(cfg);
    let o = pinned(&s, "2025-11-25");
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(
        sequence(&s),
        vec!["HEAD", "POST initialize", "DELETE"],
        "no initialized notification after a mismatch"
    );
    let p = protocol(&o);
    assert_eq!(p["code"], "mcp_version");
    assert_eq!(p["evidence"]["server_version"], "2025-06-18");
    assert_eq!(p["evidence"]["pinned_version"], "2025-11-25");
    // A modern-only server refuses the handshake with −32022: a version failure, and the
    // pin forbids trying discovery instead.
    let s = FakeServer::start(FakeConfig {
        era: Era::Modern,
        ..Default::default()
    });
    let o = pinned(&s, "2025-06-18");
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(sequence(&s), posts(&["initialize"]));
    let p = protocol(&o);
    assert_eq!(p["code"], "mcp_version");
    assert_eq!(p["evidence"]["rpc_code"], -32022);
    assert_eq!(p["evidence"]["pinned_version"], "2025-06-18");
}

/// A legacy pin whose `initialize` is rejected without naming a revision keeps the code of
/// the rejection (docs/mcp.md's pin table): another JSON-RPC error, at 200 or at a 4xx or
/// 5xx, is `mcp_rpc` (its code in `rpc_code`); a bare HTTP status, with a text body and no
/// JSON-RPC error, is `mcp_http`. The pin forbids trying discovery instead.
#[test]
fn a_legacy_pin_rejected_without_a_revision_keeps_the_rejection_code() {
    let rejected = |action| {
        let s =
            FakeServer::start(FakeConfig::default().with_fault(Fault::on("initialize", action)));
        let o = pinned(&s, "2025-06-18");
        assert_eq!(o.code, 2, "{}", o.stdout);
        assert_eq!(
            sequence(&s),
            posts(&["initialize"]),
            "no discovery, no retry"
        );
        protocol(&o)
    };
    for (status, code) in [(200, -32603), (400, -32600), (500, -32603)] {
        let p = rejected(Action::Error {
            status,
            code,
            message: "rejected",
            data: None,
        });
        assert_eq!(p["code"], "mcp_rpc", "{status} {code}: {p}");
        assert_eq!(p["evidence"]["rpc_code"], code, "{p}");
        assert_eq!(p["evidence"]["pinned_version"], "2025-06-18", "{p}");
        assert!(p["evidence"]["server_version"].is_null(), "{p}");
    }
    for status in [400, 404, 500] {
        let p = rejected(Action::Status(status));
        assert_eq!(p["code"], "mcp_http", "{status}: {p}");
        assert_eq!(p["evidence"]["http_status"], status, "{p}");
        assert!(p["evidence"]["rpc_code"].is_null(), "{p}");
    }
}

/// Unpinned, a legacy server answering an unsupported revision is a version failure after the
/// fallback, and the evidence names the revision when it is one by the grammar (issue 12).
#[test]
fn an_unsupported_answered_revision_is_a_version_failure() {
    let s = FakeServer::start(FakeConfig::default().with_fault(Fault::on(
        "initialize",
        Action::Result(serde_json::json!({
            "protocolVersion": "2099-01-01",
            "capabilities": {},
            "serverInfo": {"name": "x", "version": "1"}
        })),
    )));
    let o = ping(&s);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(sequence(&s), posts(&[DISCOVER, "initialize"]));
    let p = protocol(&o);
    assert_eq!(p["code"], "mcp_version");
    assert_eq!(p["evidence"]["fallback"], true);
    assert_eq!(
        p["evidence"]["server_version"], "2099-01-01",
        "a revision by the grammar is named"
    );
    // Anything else the server calls its revision is never shown.
    let s = FakeServer::start(FakeConfig::default().with_fault(Fault::on(
        "initialize",
        Action::Result(serde_json::json!({
            "protocolVersion": "latest \u{1b}[31m",
            "capabilities": {},
            "serverInfo": {"name": "x", "version": "1"}
        })),
    )));
    let o = ping(&s);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let p = protocol(&o);
    assert_eq!(p["code"], "mcp_version");
    assert!(
        p["evidence"]["server_version"].is_null(),
        "never server text"
    );
    assert!(!o.stdout.contains("latest"), "{}", o.stdout);
}

/// Stateless streams are parsed to the response and never resumed with GET.
#[test]
fn stateless_streams_are_never_resumed() {
    let s = FakeServer::start(
        FakeConfig {
            era: Era::Modern,
            response: Mode::Sse,
            ..Default::default()
        }
        .with_fault(Fault::on(
            "tools/list",
            Action::SseCutAndResume {
                resumptions: 1,
                retry_ms: Some(1),
                padding: 0,
            },
        )),
    );
    let o = ping(&s);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(s.count_http("GET"), 0);
    let c = &o.json()["checks"]["capability"];
    assert_eq!(c["code"], "mcp_protocol");
    assert_eq!(c["evidence"]["failed_method"], "tools/list");
}

/// Over modern HTTP a tool with invalid `x-mcp-header` annotations is excluded from the
/// inventory, so requiring it reports it missing, with why (our words, the configured name);
/// the same server reached in the legacy era keeps it.
#[test]
fn invalid_header_annotations_exclude_a_required_tool_in_the_modern_era() {
    let s = FakeServer::start(dual());
    let dir = TempDir::new("xmcp");
    let yaml = |pin: &str| {
        format!(
            "version: v1\ntargets:\n  - name: t\n    type: mcp\n    endpoint: {}\n    mcp:\n{pin}      required_tools: [header_bad_number, echo]\n",
            s.url()
        )
    };
    let f = dir.file("modern.yaml", &yaml(""));
    let o = run(&["check", f.to_str().unwrap_or_default(), "--format", "json"]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let cap = &o.json()["checks"]["capability"];
    assert_eq!(cap["code"], "mcp_required");
    let ev = &cap["evidence"];
    assert_eq!(ev["era"], "modern");
    assert_eq!(
        ev["missing_tools"],
        serde_json::json!(["header_bad_number"])
    );
    assert_eq!(
        ev["excluded_tools"],
        serde_json::json!(["header_bad_number"])
    );
    assert_eq!(
        ev["exclusion_reason"],
        "x-mcp-header property is not a string, integer or boolean"
    );
    assert!(ev["tools_excluded"].as_i64().unwrap_or(0) >= 1);
    let f = dir.file(
        "legacy.yaml",
        &yaml("      protocol_version: '2025-11-25'\n"),
    );
    let o = run(&["check", f.to_str().unwrap_or_default(), "--format", "json"]);
    assert_eq!(o.code, 0, "legacy keeps the tool: {}", o.stdout);
}
