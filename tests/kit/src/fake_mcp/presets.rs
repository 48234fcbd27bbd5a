//! Named configurations for the CLI wrapper, the demo and the benchmark.

use std::time::Duration;

use super::config::{Action, DiscoverReply, Era, FakeConfig, Fault, LegacyOpts, Mode, On, SseOpts};

/// Description of a named preset.
#[derive(Clone, Copy, Debug)]
pub struct PresetInfo {
    /// Name used on the command line.
    pub name: &'static str,
    /// One-line description.
    pub about: &'static str,
    /// The preset chooses its own era (`--era` does not override it).
    pub sets_era: bool,
    /// The preset chooses its own response mode (`--mode` does not override it).
    pub sets_mode: bool,
}

const fn p(name: &'static str, about: &'static str, sets_era: bool, sets_mode: bool) -> PresetInfo {
    PresetInfo {
        name,
        about,
        sets_era,
        sets_mode,
    }
}

/// Every preset, in `--help` order.
pub const PRESETS: &[PresetInfo] = &[
    p(
        "healthy",
        "legacy 2025-11-25, JSON, sessions, the default inventory",
        false,
        false,
    ),
    p(
        "missing-tool",
        "healthy, but the `echo` tool is missing",
        false,
        false,
    ),
    p(
        "hang",
        "reads every POST and never answers (HEAD still answers)",
        false,
        false,
    ),
    p("modern", "stateless 2026-07-28 only", true, false),
    p(
        "dual",
        "answers both server/discover and initialize (legacy 2025-11-25)",
        true,
        false,
    ),
    p(
        "legacy-2025-03-26",
        "legacy server whose newest revision is 2025-03-26",
        true,
        false,
    ),
    p(
        "legacy-2025-06-18",
        "legacy server whose newest revision is 2025-06-18",
        true,
        false,
    ),
    p(
        "legacy-2025-11-25",
        "legacy server whose newest revision is 2025-11-25",
        true,
        false,
    ),
    p(
        "sse",
        "healthy, SSE answers with a priming event, ids and one notification",
        false,
        true,
    ),
    p(
        "auth",
        "healthy, but requires `Authorization: Bearer demo-token`",
        false,
        false,
    ),
    p(
        "unauthorized",
        "401 with `WWW-Authenticate: Bearer` on every request",
        false,
        false,
    ),
    p("error-500", "HTTP 500 on every POST", false, false),
    p(
        "error-500-reset",
        "HTTP 500 to a connection's first request, then a reset (RST) when it is reused",
        false,
        false,
    ),
    p(
        "trickle",
        "every POST answered one byte per 50 ms",
        false,
        false,
    ),
    p(
        "stall",
        "every POST: headers and half the body, then nothing",
        false,
        false,
    ),
    p(
        "endless-sse",
        "every POST opens an event stream that never carries the answer",
        false,
        false,
    ),
    p(
        "huge",
        "every POST answered with a 10 MiB body",
        false,
        false,
    ),
    p("slow", "every POST answered after 1.5 s", false, false),
    p(
        "wrong-version",
        "initialize always answers protocolVersion 2099-01-01",
        true,
        false,
    ),
    p(
        "malformed",
        "every POST answered with truncated JSON",
        false,
        false,
    ),
    p(
        "reset",
        "every POST: partial answer, then connection reset",
        false,
        false,
    ),
    p(
        "pagination-loop",
        "tools/list repeats its cursor forever",
        false,
        false,
    ),
    p(
        "discover-404",
        "legacy server answering server/discover with a bare 404",
        false,
        false,
    ),
    p(
        "html",
        "answers carry `Content-Type: text/html`",
        false,
        false,
    ),
    p(
        "gateway",
        "a gateway before a legacy server: server/discover gets 404 with JSON-RPC -32601",
        false,
        false,
    ),
    p(
        "stateless-legacy",
        "stateless legacy server (older Python SDK): -32602 in a 200 for unknown methods",
        false,
        false,
    ),
    p(
        "discover-empty",
        "legacy server answering server/discover with the result {}",
        false,
        false,
    ),
    p(
        "legacy-2024-11-05",
        "legacy server that speaks only 2024-11-05",
        true,
        false,
    ),
    p(
        "sse-legacy-node",
        "the deprecated HTTP+SSE transport as Node's SDK serves it: HEAD unanswered, GET opens the event stream, POST 404",
        false,
        false,
    ),
    p(
        "sse-legacy-python",
        "the deprecated HTTP+SSE transport as Python's SDK serves it: HEAD 200 event-stream, GET the stream, POST 405",
        false,
        false,
    ),
    p(
        "redirect-slash",
        "every request: 307 to the same path with a trailing slash",
        false,
        false,
    ),
    p(
        "forbidden-host",
        "every request: 403 without WWW-Authenticate (a Host allow-list)",
        false,
        false,
    ),
];

/// The configuration of preset `name`, or `None` if unknown.
pub fn preset(name: &str) -> Option<FakeConfig> {
    let d = FakeConfig::default;
    Some(match name {
        "healthy" => d(),
        "missing-tool" => d().without_tool("echo"),
        "hang" => d().with_fault(Fault::post(Action::HangBeforeHeaders)),
        "modern" => FakeConfig {
            era: Era::Modern,
            ..d()
        },
        "dual" => FakeConfig {
            era: Era::Dual("2025-11-25"),
            ..d()
        },
        "legacy-2025-03-26" => FakeConfig {
            era: Era::Legacy("2025-03-26"),
            ..d()
        },
        "legacy-2025-06-18" => FakeConfig {
            era: Era::Legacy("2025-06-18"),
            ..d()
        },
        "legacy-2025-11-25" => FakeConfig {
            era: Era::Legacy("2025-11-25"),
            ..d()
        },
        "sse" => FakeConfig {
            response: Mode::Sse,
            sse: SseOpts {
                priming: true,
                event_ids: true,
                retry_ms: Some(1000),
                notifications: 1,
                ..SseOpts::default()
            },
            ..d()
        },
        "auth" => FakeConfig {
            require_bearer: Some("demo-token".into()),
            ..d()
        },
        "unauthorized" => d().with_fault(Fault::always(Action::Status(401))),
        "error-500" => d().with_fault(Fault::post(Action::Status(500))),
        "error-500-reset" => d()
            .with_fault(Fault {
                on: On::Reused,
                action: Action::ResetUnanswered,
                times: None,
            })
            .with_fault(Fault::post(Action::Error {
                status: 500,
                code: -32603,
                message: "Internal error",
                data: None,
            }))
            .with_fault(Fault::always(Action::Status(500))),
        "trickle" => d().with_fault(Fault::post(Action::Trickle(Duration::from_millis(50)))),
        "stall" => d().with_fault(Fault::post(Action::HangMidBody)),
        "endless-sse" => d().with_fault(Fault::post(Action::SseNoResponse)),
        "huge" => d().with_fault(Fault::post(Action::HugeBody(10 << 20))),
        "slow" => d().with_fault(Fault::post(Action::Delay(Duration::from_millis(1500)))),
        "wrong-version" => FakeConfig {
            era: Era::Legacy("2099-01-01"),
            legacy: LegacyOpts {
                supported: Some(vec!["2099-01-01"]),
                ..LegacyOpts::default()
            },
            ..d()
        },
        "malformed" => d().with_fault(Fault::post(Action::MalformedJson)),
        "reset" => d().with_fault(Fault::post(Action::Reset)),
        "pagination-loop" => d().with_fault(Fault::on("tools/list", Action::RepeatCursor)),
        "discover-404" => FakeConfig {
            legacy: LegacyOpts {
                discover: Some(DiscoverReply::NotFound),
                ..LegacyOpts::default()
            },
            ..d()
        },
        "html" => d().with_fault(Fault::post(Action::ContentType(Some(
            "text/html; charset=utf-8",
        )))),
        "gateway" => FakeConfig {
            legacy: LegacyOpts {
                discover: Some(DiscoverReply::GatewayNotFound),
                ..LegacyOpts::default()
            },
            ..d()
        },
        "stateless-legacy" => FakeConfig {
            legacy: LegacyOpts {
                discover: Some(DiscoverReply::StatelessInvalidParams),
                issue_session: false,
                require_session: false,
                ..LegacyOpts::default()
            },
            ..d()
        },
        "discover-empty" => FakeConfig {
            legacy: LegacyOpts {
                discover: Some(DiscoverReply::EmptyResult),
                ..LegacyOpts::default()
            },
            ..d()
        },
        "legacy-2024-11-05" => FakeConfig {
            era: Era::Legacy("2024-11-05"),
            legacy: LegacyOpts {
                supported: Some(vec!["2024-11-05"]),
                ..LegacyOpts::default()
            },
            ..d()
        },
        "sse-legacy-node" => d()
            .with_fault(Fault::http("HEAD", Action::HangBeforeHeaders))
            .with_fault(Fault::http("GET", Action::SseEndpoint))
            .with_fault(Fault::post(Action::Raw {
                status: 404,
                headers: vec![("Content-Type", "text/html; charset=utf-8")],
                body: "<!DOCTYPE html><title>Error</title><pre>Cannot POST {path}</pre>\n".into(),
            })),
        "sse-legacy-python" => d()
            .with_fault(Fault::http(
                "HEAD",
                Action::Raw {
                    status: 200,
                    headers: vec![("Content-Type", "text/event-stream")],
                    body: String::new(),
                },
            ))
            .with_fault(Fault::http("GET", Action::SseEndpoint))
            .with_fault(Fault::post(Action::Raw {
                status: 405,
                headers: vec![("Allow", "GET, HEAD"), ("Content-Type", "text/plain")],
                body: "Method Not Allowed".into(),
            })),
        "redirect-slash" => d().with_fault(Fault::always(Action::Raw {
            status: 307,
            headers: vec![("Location", "{base}{path}/")],
            body: String::new(),
        })),
        "forbidden-host" => d().with_fault(Fault::always(Action::Raw {
            status: 403,
            headers: vec![("Content-Type", "text/plain")],
            body: "Forbidden: invalid Host header\n".into(),
        })),
        _ => return None,
    })
}

/// Metadata of preset `name`.
pub fn preset_info(name: &str) -> Option<&'static PresetInfo> {
    PRESETS.iter().find(|p| p.name == name)
}
