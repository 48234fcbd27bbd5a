//! Every hostile mode of the fake MCP server, end to end through the binary: status, code,
//! exit code, and that the run ended within its deadlines (+1 s for a loaded machine).

use std::time::Duration;

use crate::fake_mcp::{Action, FakeConfig, FakeServer, Fault, Mode};
use crate::util::run;

const TIMEOUT_MS: u64 = 400;

struct Row {
    name: &'static str,
    cfg: FakeConfig,
    exit: i32,
    /// (dimension, code) expected somewhere in the checks.
    code: Option<(&'static str, &'static str)>,
}

fn with(fault: Fault) -> FakeConfig {
    FakeConfig::default().with_fault(fault)
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            // The session already answered, so the listing's silence is a partial
            // response: UNKNOWN, as the reference classifies reused session evidence.
            name: "hang on tools/list",
            cfg: with(Fault::on("tools/list", Action::HangBeforeHeaders)),
            exit: 5,
            code: None,
        },
        Row {
            name: "hang on every POST",
            cfg: with(Fault::post(Action::HangBeforeHeaders)),
            exit: 3,
            code: None,
        },
        Row {
            name: "hang mid-body on initialize",
            cfg: with(Fault::on("initialize", Action::HangMidBody)),
            exit: 5,
            code: None,
        },
        Row {
            name: "trickle on initialize",
            cfg: with(Fault::on(
                "initialize",
                Action::Trickle(Duration::from_millis(200)),
            )),
            exit: 5,
            code: None,
        },
        Row {
            name: "10 MiB body",
            cfg: with(Fault::on("tools/list", Action::HugeBody(10 << 20))),
            exit: 5,
            code: Some(("capability", "mcp_limit")),
        },
        Row {
            name: "malformed JSON",
            cfg: with(Fault::on("initialize", Action::MalformedJson)),
            exit: 2,
            code: Some(("protocol", "mcp_protocol")),
        },
        Row {
            name: "wrong JSON-RPC id",
            cfg: with(Fault::on("initialize", Action::WrongId)),
            exit: 2,
            code: Some(("protocol", "mcp_protocol")),
        },
        Row {
            name: "SSE that never sends our response",
            cfg: FakeConfig {
                response: Mode::Sse,
                ..with(Fault::on("tools/list", Action::SseNoResponse))
            },
            exit: 5,
            code: None,
        },
        Row {
            name: "repeated cursor",
            cfg: with(Fault::on("tools/list", Action::RepeatCursor)),
            exit: 5,
            code: Some(("capability", "mcp_limit")),
        },
        Row {
            name: "duplicate tool",
            cfg: with(Fault::on("tools/list", Action::DuplicateEntry)),
            exit: 2,
            code: Some(("capability", "mcp_protocol")),
        },
        Row {
            name: "101 pages",
            cfg: with(Fault::on("tools/list", Action::Pages(101))),
            exit: 5,
            code: Some(("capability", "mcp_limit")),
        },
        Row {
            name: "10,001 entries",
            cfg: with(Fault::on("tools/list", Action::Entries(10_001))),
            exit: 5,
            code: Some(("capability", "mcp_limit")),
        },
        Row {
            name: "401",
            cfg: with(Fault::post(Action::Status(401))),
            exit: 4,
            code: Some(("authentication", "mcp_auth")),
        },
        Row {
            name: "500 on initialize",
            cfg: with(Fault::on("initialize", Action::Status(500))),
            exit: 2,
            code: Some(("protocol", "mcp_http")),
        },
        Row {
            name: "wrong Content-Type",
            cfg: with(Fault::on(
                "initialize",
                Action::ContentType(Some("text/html")),
            )),
            exit: 2,
            code: Some(("protocol", "mcp_protocol")),
        },
        Row {
            name: "reset mid-stream",
            cfg: with(Fault::on("initialize", Action::Reset)),
            exit: 5,
            code: None,
        },
    ]
}

#[test]
fn every_hostile_mode_gets_its_status_within_the_deadline() {
    let mut failures = Vec::new();
    for row in rows() {
        let server = FakeServer::start(row.cfg);
        let timeout = TIMEOUT_MS.to_string();
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
        let bound = Duration::from_millis(4 * TIMEOUT_MS + 250 + 1000);
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
        if let Some((dim, code)) = row.code {
            let v = o.json();
            if v["checks"][dim]["code"] != code {
                failures.push(format!(
                    "{}: {dim}.code = {} (want {code})",
                    row.name, v["checks"][dim]["code"]
                ));
            }
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
    let log = server.log();
    assert!(
        log.iter().any(|s| s.rpc_error_code == Some(-32601)),
        "sampling/createMessage is rejected with -32601"
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
