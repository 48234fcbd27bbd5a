//! Every hostile mode of the fake MCP server, end to end through the binary: status, code,
//! exit code, and that the run ended within its deadlines (+1 s for a loaded machine).

use std::time::Duration;

use crate::util::{Outcome, TempDir, run, run_env};
use agenthealth_testkit::fake_mcp::{
    Action, DiscoverReply, Era, FakeConfig, FakeServer, Fault, Mode,
};

const TIMEOUT_MS: u64 = 400;
/// For rows about volume limits (10 MiB, 101 pages, 10,001 entries): the limit, not the
/// deadline, must end them, and on a loaded machine a debug build needs seconds to get there.
const VOLUME_TIMEOUT_MS: u64 = 15_000;

struct Row {
    name: &'static str,
    cfg: FakeConfig,
    exit: i32,
    /// The dimension that decides, its status and its code (`None`: the engine classified a
    /// network outcome, which carries no code).
    check: (&'static str, &'static str, Option<&'static str>),
    /// The attempt deadline: [`TIMEOUT_MS`], or more for rows that move a lot of bytes and
    /// must not reach their deadline on a loaded machine (their verdict is not a timeout).
    timeout_ms: u64,
}

fn with(fault: Fault) -> FakeConfig {
    FakeConfig::default().with_fault(fault)
}

fn sse(cfg: FakeConfig) -> FakeConfig {
    FakeConfig {
        response: Mode::Sse,
        ..cfg
    }
}

fn rows() -> Vec<Row> {
    let mut server_requests = sse(FakeConfig::default());
    server_requests.sse.server_ping = true;
    server_requests.sse.server_sampling = true;
    server_requests.sse.wait_for_answers = Some(Duration::from_secs(2));
    let mut no_session = FakeConfig::default();
    no_session.legacy.issue_session = false;
    no_session.legacy.require_session = true;
    let mut held_open = sse(FakeConfig::default());
    held_open.sse.hold_open = true;
    held_open.sse.notifications = 2;
    vec![
        Row {
            // No byte answered the listing: the session answering earlier is no answer to
            // it, so its silence is UNREACHABLE.
            name: "hang on tools/list",
            cfg: with(Fault::on("tools/list", Action::HangBeforeHeaders)),
            exit: 3,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNREACHABLE", None),
        },
        Row {
            name: "hang on every POST",
            cfg: with(Fault::post(Action::HangBeforeHeaders)),
            exit: 3,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "UNREACHABLE", None),
        },
        Row {
            name: "hang mid-body on initialize",
            cfg: with(Fault::on("initialize", Action::HangMidBody)),
            exit: 5,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "UNKNOWN", None),
        },
        Row {
            name: "trickle on initialize",
            cfg: with(Fault::on(
                "initialize",
                Action::Trickle(Duration::from_millis(200)),
            )),
            exit: 5,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "UNKNOWN", None),
        },
        Row {
            name: "10 MiB body",
            cfg: with(Fault::on("tools/list", Action::HugeBody(10 << 20))),
            exit: 5,
            timeout_ms: VOLUME_TIMEOUT_MS,
            check: ("capability", "UNKNOWN", Some("mcp_limit")),
        },
        Row {
            name: "malformed JSON",
            cfg: with(Fault::on("initialize", Action::MalformedJson)),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("protocol", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            name: "wrong JSON-RPC id",
            cfg: with(Fault::on("initialize", Action::WrongId)),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("protocol", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            name: "SSE that never sends our response",
            cfg: sse(with(Fault::on("tools/list", Action::SseNoResponse))),
            exit: 5,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNKNOWN", None),
        },
        Row {
            name: "SSE that ends without our response or an event id",
            cfg: sse(with(Fault::on("tools/list", Action::SseEndWithoutResponse))),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            // ping answered, sampling/createMessage rejected with -32601 (asserted in
            // server_requests_on_sse_are_answered_or_rejected), then our response arrives.
            name: "SSE with server requests",
            cfg: server_requests,
            exit: 0,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "HEALTHY", None),
        },
        Row {
            // Parsing stops at our response: a stream held open is not waited for.
            name: "SSE held open after the response",
            cfg: held_open,
            exit: 0,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "HEALTHY", None),
        },
        Row {
            name: "repeated cursor",
            cfg: with(Fault::on("tools/list", Action::RepeatCursor)),
            exit: 5,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNKNOWN", Some("mcp_limit")),
        },
        Row {
            name: "duplicate tool",
            cfg: with(Fault::on("tools/list", Action::DuplicateEntry)),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            name: "101 pages",
            cfg: with(Fault::on("tools/list", Action::Pages(101))),
            exit: 5,
            timeout_ms: VOLUME_TIMEOUT_MS,
            check: ("capability", "UNKNOWN", Some("mcp_limit")),
        },
        Row {
            name: "10,001 entries",
            cfg: with(Fault::on("tools/list", Action::Entries(10_001))),
            exit: 5,
            timeout_ms: VOLUME_TIMEOUT_MS,
            check: ("capability", "UNKNOWN", Some("mcp_limit")),
        },
        Row {
            name: "401",
            cfg: with(Fault::post(Action::Status(401))),
            exit: 4,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "MISCONFIGURED", Some("mcp_auth")),
        },
        Row {
            name: "403 on tools/list",
            cfg: with(Fault::on("tools/list", Action::Status(403))),
            exit: 4,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "MISCONFIGURED", Some("mcp_auth")),
        },
        Row {
            name: "500 on initialize",
            cfg: with(Fault::on("initialize", Action::Status(500))),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("protocol", "UNHEALTHY", Some("mcp_http")),
        },
        Row {
            name: "JSON-RPC error on resources/list",
            cfg: with(Fault::on(
                "resources/list",
                Action::Error {
                    status: 200,
                    code: -32603,
                    message: "internal",
                    data: None,
                },
            )),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNHEALTHY", Some("mcp_rpc")),
        },
        Row {
            name: "wrong Content-Type",
            cfg: with(Fault::on(
                "initialize",
                Action::ContentType(Some("text/html")),
            )),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("protocol", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            name: "no Content-Type",
            cfg: with(Fault::on("tools/list", Action::ContentType(None))),
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "UNHEALTHY", Some("mcp_protocol")),
        },
        Row {
            // The notification without the session the server requires is refused.
            name: "session required but none issued",
            cfg: no_session,
            exit: 2,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "UNHEALTHY", Some("mcp_http")),
        },
        Row {
            name: "reset mid-stream",
            cfg: with(Fault::on("initialize", Action::Reset)),
            exit: 5,
            timeout_ms: TIMEOUT_MS,
            check: ("authentication", "UNKNOWN", None),
        },
        Row {
            // Cleanup never changes the result, and is bounded by its 250 ms budget.
            name: "hang on DELETE",
            cfg: with(Fault::http("DELETE", Action::HangBeforeHeaders)),
            exit: 0,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "HEALTHY", None),
        },
        Row {
            name: "500 on DELETE",
            cfg: with(Fault::http("DELETE", Action::Status(500))),
            exit: 0,
            timeout_ms: TIMEOUT_MS,
            check: ("capability", "HEALTHY", None),
        },
    ]
}

#[test]
fn every_hostile_mode_gets_its_status_within_the_deadline() {
    let mut failures = Vec::new();
    for row in rows() {
        let server = FakeServer::start(row.cfg);
        let timeout = row.timeout_ms.to_string();
        let o = run(&[
            "ping",
            "mcp",
            &server.url(),
            "--timeout",
            &timeout,
            "--format",
            "json",
        ]);
        // Each dimension has its own attempt deadline (four at most run), then the 250 ms
        // cleanup budget; plus the margin for a loaded machine.
        let bound = Duration::from_millis(4 * row.timeout_ms + 250 + 1000);
        if o.elapsed > bound {
            failures.push(format!("{}: took {:?}", row.name, o.elapsed));
        }
        if o.code != row.exit {
            failures.push(format!(
                "{}: exit {} (want {})\n{}",
                row.name, o.code, row.exit, o.stdout
            ));
            continue;
        }
        let (dim, status, code) = row.check;
        let check = &o.json()["checks"][dim];
        if check["status"] != status {
            failures.push(format!(
                "{}: {dim}.status = {} (want {status})",
                row.name, check["status"]
            ));
        }
        let got = check["code"].as_str();
        if got != code {
            failures.push(format!(
                "{}: {dim}.code = {got:?} (want {code:?})",
                row.name
            ));
        }
        if code.is_some() && check["evidence"]["failed_method"].is_null() {
            failures.push(format!("{}: no failed_method evidence", row.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn server_requests_on_sse_are_answered_or_rejected() {
    let mut cfg = FakeConfig {
        response: Mode::Sse,
        ..Default::default()
    };
    cfg.sse.server_ping = true;
    cfg.sse.server_sampling = true;
    cfg.sse.wait_for_answers = Some(Duration::from_secs(2));
    let server = FakeServer::start(cfg);
    let o = run(&["ping", "mcp", &server.url(), "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let answers = server.client_answers();
    assert!(
        !answers.is_empty(),
        "the client answered the server's requests"
    );
    assert!(
        answers.iter().any(|a| a.rpc_error_code == Some(-32601)),
        "sampling/createMessage is rejected with -32601"
    );
    assert!(
        answers.iter().any(|a| a.rpc_error_code.is_none()),
        "ping is answered with a result"
    );
    assert!(
        answers.iter().all(|a| a.session_id.is_some()),
        "answers travel on the session"
    );
    // Answers on the handshake's own stream precede the negotiated revision; later ones
    // carry it.
    assert!(
        answers
            .iter()
            .any(|a| a.protocol_version.as_deref() == Some("2025-11-25"))
    );
}

#[test]
fn session_required_but_none_issued_is_unhealthy() {
    let mut cfg = FakeConfig::default();
    cfg.legacy.issue_session = false;
    cfg.legacy.require_session = true;
    let server = FakeServer::start(cfg);
    let o = run(&["ping", "mcp", &server.url(), "--format", "json"]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let ev = &o.json()["checks"]["protocol"]["evidence"];
    assert_eq!(ev["session_id_issued"], false);
    assert_eq!(ev["failed_method"], "notifications/initialized");
    assert_eq!(ev["http_status"], 400);
    assert_eq!(
        server.count("tools/list"),
        0,
        "nothing listed without a session"
    );
}

#[test]
fn sse_streams_resume_with_last_event_id() {
    let cfg = FakeConfig {
        response: Mode::Sse,
        ..with(Fault::on(
            "tools/list",
            Action::SseCutAndResume {
                resumptions: 2,
                retry_ms: Some(10),
                padding: 0,
            },
        ))
    };
    let server = FakeServer::start(cfg);
    let o = run(&["ping", "mcp", &server.url(), "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let gets: Vec<_> = server
        .log()
        .into_iter()
        .filter(|s| s.method == "GET")
        .collect();
    assert_eq!(gets.len(), 2);
    assert!(gets.iter().all(|g| g.last_event_id.is_some()));

    let never = FakeConfig {
        response: Mode::Sse,
        ..with(Fault::on(
            "tools/list",
            Action::SseCutAndResume {
                resumptions: u32::MAX,
                retry_ms: Some(1),
                padding: 0,
            },
        ))
    };
    let server = FakeServer::start(never);
    let o = run(&[
        "ping",
        "mcp",
        &server.url(),
        "--format",
        "json",
        "--timeout",
        "2000",
    ]);
    assert_ne!(o.code, 0, "{}", o.stdout);
    let gets = server
        .log()
        .into_iter()
        .filter(|s| s.method == "GET")
        .count();
    assert!(gets <= 3, "at most three resumptions, saw {gets}");
}

/// `doctor` turns MCP evidence into specific advice: one line per failed check, in our words.
#[test]
fn doctor_explains_mcp_failures() {
    let doctor = |server: &FakeServer, mcp: &str, auth: bool, env: &[(&str, &str)]| {
        let dir = TempDir::new("doctor");
        let auth = if auth {
            "    auth:\n      bearer_env: MCP_TOKEN\n"
        } else {
            ""
        };
        let f = dir.file(
            "c.yaml",
            &format!(
                "version: v1\ntargets:\n  - name: notes\n    type: mcp\n    endpoint: {}\n{auth}    mcp:\n{mcp}",
                server.url()
            ),
        );
        run_env(
            &["doctor", f.to_str().unwrap_or_default(), "--color", "never"],
            env,
        )
    };
    let has = |o: &Outcome, line: &str| {
        assert!(o.stdout.contains(line), "want {line:?} in:\n{}", o.stdout);
    };

    let mut no_session = FakeConfig::default();
    no_session.legacy.issue_session = false;
    let s = FakeServer::start(no_session);
    let o = doctor(&s, "      required_tools: []\n", false, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    has(
        &o,
        "  - authentication, protocol: server requires a session but returned none: initialize assigned no \
         Mcp-Session-Id, then notifications/initialized was refused with HTTP 400",
    );

    let s = FakeServer::start(FakeConfig {
        require_bearer: Some("the-right-token".into()),
        ..Default::default()
    });
    let o = doctor(
        &s,
        "      protocol_version: '2025-11-25'\n",
        true,
        &[("MCP_TOKEN", "canary-wrong-token")],
    );
    assert_eq!(o.code, 4, "{}", o.stdout);
    has(
        &o,
        "  - authentication, protocol: HTTP 401 on initialize: the token in $MCP_TOKEN was rejected",
    );
    assert!(!o.stdout.contains("canary-wrong-token"));

    let s = FakeServer::start(FakeConfig::default());
    let o = doctor(&s, "      required_tools: [search, echo]\n", false, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    has(&o, "  - capability: tool `search` not advertised");

    // A pin mismatch says which era was tried and why, and what to pin.
    let mut old = FakeConfig {
        era: Era::Legacy("2025-06-18"),
        ..Default::default()
    };
    old.legacy.supported = Some(vec!["2025-06-18"]);
    let s = FakeServer::start(old);
    let o = doctor(&s, "      protocol_version: '2025-11-25'\n", false, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    has(
        &o,
        "  - authentication, protocol: mcp.protocol_version pins 2025-11-25, so there is no fallback between \
         eras; the server speaks 2025-06-18: pin 2025-06-18 or remove the pin",
    );
    let mut legacy = FakeConfig::default();
    legacy.legacy.discover = Some(DiscoverReply::BadRequestEmpty);
    let s = FakeServer::start(legacy);
    let o = doctor(&s, "      protocol_version: '2026-07-28'\n", false, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    has(
        &o,
        "  - authentication, protocol: mcp.protocol_version pins 2026-07-28, so there is no fallback between \
         eras; discover got HTTP 400, as a legacy server answers; remove the pin or pin the \
         server's legacy revision",
    );
    // Unpinned: the fallback and what the legacy server answered.
    let s = FakeServer::start(with(Fault::on(
        "initialize",
        Action::Result(serde_json::json!({
            "protocolVersion": "2099-01-01",
            "capabilities": {},
            "serverInfo": {"name": "x", "version": "1"}
        })),
    )));
    let o = doctor(&s, "      required_tools: []\n", false, &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    has(
        &o,
        "  - authentication, protocol: discover got HTTP 400 -32000; fell back to initialize; the server \
         speaks 2099-01-01, newer than agenthealth supports (2025-03-26, 2025-06-18, 2025-11-25 and \
         2026-07-28)",
    );
    // Limits and malformed answers name the method and what broke.
    let s = FakeServer::start(with(Fault::on("tools/list", Action::RepeatCursor)));
    let o = doctor(&s, "      required_tools: []\n", false, &[]);
    has(
        &o,
        "  - capability: the server's answer to tools/list exceeds a safety limit (repeated cursor)",
    );
    let s = FakeServer::start(with(Fault::on(
        "prompts/list",
        Action::Error {
            status: 200,
            code: -32603,
            message: "server text never shown",
            data: None,
        },
    )));
    let o = doctor(&s, "      required_tools: []\n", false, &[]);
    has(
        &o,
        "  - capability: the server rejected prompts/list with JSON-RPC error -32603, HTTP 200",
    );
    assert!(!o.stdout.contains("server text never shown"));
}
