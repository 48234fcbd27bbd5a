//! The built binary against the bundled fake MCP server and real third-party servers.

use std::time::Duration;

use crate::fake_mcp::{Era, FakeConfig, FakeServer, preset};
use crate::interop::{HttpMode, Kind, Server};
use crate::util::{Outcome, TempDir, run};

fn ping(url: &str, extra: &[&str]) -> Outcome {
    let mut args = vec!["ping", "mcp", url, "--format", "json"];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn legacy_fake_is_healthy_with_one_session_and_a_delete() {
    let s = FakeServer::start(FakeConfig::default());
    let o = ping(&s.url(), &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["checks"]["protocol"]["evidence"]["era"], "legacy");
    assert_eq!(s.count("initialize"), 1, "one session per target run");
    assert_eq!(s.sessions_created(), 1);
    assert_eq!(s.count_http("DELETE"), 1);
}

#[test]
fn modern_fake_never_initializes() {
    let s = FakeServer::start(FakeConfig {
        era: Era::Modern,
        ..Default::default()
    });
    let o = ping(&s.url(), &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(o.json()["checks"]["protocol"]["evidence"]["era"], "modern");
    assert_eq!(s.count("initialize"), 0);
    assert_eq!(s.count_http("DELETE"), 0);
}

#[test]
fn presets_classify() {
    for (name, code) in [
        ("unauthorized", 4),
        ("error-500", 2),
        ("malformed", 2),
        ("html", 2),
        ("pagination-loop", 5),
        ("wrong-version", 2),
    ] {
        let Some(cfg) = preset(name) else {
            panic!("preset {name}")
        };
        let s = FakeServer::start(cfg);
        let o = ping(&s.url(), &["--timeout", "2000"]);
        assert_eq!(o.code, code, "{name}: {}", o.stdout);
        assert!(o.elapsed < Duration::from_secs(8), "{name}");
    }
}

#[test]
fn hanging_server_ends_within_the_deadlines() {
    let Some(cfg) = preset("hang") else {
        panic!("preset hang")
    };
    let s = FakeServer::start(cfg);
    let o = ping(&s.url(), &["--timeout", "300"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    // authentication and protocol each get their own 300 ms attempt.
    assert!(
        o.elapsed < Duration::from_millis(2 * 300 + 1000),
        "{:?}",
        o.elapsed
    );
}

/// The headline of protocol selection: every real HTTP server is HEALTHY unpinned, and the
/// era chosen is the one it speaks best.
#[test]
fn real_http_servers_are_healthy_unpinned() {
    let kinds = [
        (
            Kind::PyHttp {
                mode: HttpMode::Sse,
                pin: None,
            },
            "modern",
        ),
        (
            Kind::PyHttp {
                mode: HttpMode::Json,
                pin: None,
            },
            "modern",
        ),
        (
            Kind::PyHttp {
                mode: HttpMode::Stateless,
                pin: None,
            },
            "modern",
        ),
        (Kind::Everything, "legacy"),
        (Kind::Ts1Json, "legacy"),
        (
            Kind::Ts2 {
                legacy_reject: false,
            },
            "modern",
        ),
        (
            Kind::Ts2 {
                legacy_reject: true,
            },
            "modern",
        ),
    ];
    for (kind, era) in kinds {
        let Some(server) = Server::start(kind) else {
            continue;
        };
        let o = ping(server.url(), &["--timeout", "5000"]);
        assert_eq!(o.code, 0, "{kind:?}: {}", o.stdout);
        assert_eq!(
            o.json()["checks"]["protocol"]["evidence"]["era"],
            era,
            "{kind:?}"
        );
    }
}

fn pinned(url: &str, pin: &str) -> Outcome {
    let dir = TempDir::new("pin");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: pinned\n    type: mcp\n    endpoint: {url}\n    mcp:\n      protocol_version: '{pin}'\n"
        ),
    );
    run(&["check", f.to_str().unwrap_or_default(), "--format", "json"])
}

#[test]
fn real_python_server_pinned_to_each_legacy_revision_in_every_mode() {
    for mode in [HttpMode::Sse, HttpMode::Json, HttpMode::Stateless] {
        for rev in ["2025-03-26", "2025-06-18", "2025-11-25"] {
            let Some(server) = Server::start(Kind::PyHttp {
                mode,
                pin: Some(rev),
            }) else {
                continue;
            };
            // Unpinned: the server rejects discover, so legacy negotiation finds `rev`.
            let o = ping(server.url(), &["--timeout", "5000"]);
            assert_eq!(o.code, 0, "{mode:?} {rev}: {}", o.stdout);
            let ev = &o.json()["checks"]["protocol"]["evidence"];
            assert_eq!(ev["negotiated_version"], rev, "{mode:?}");
            // Pinned to the same revision: healthy too.
            let o = pinned(server.url(), rev);
            assert_eq!(o.code, 0, "{mode:?} {rev} pinned: {}", o.stdout);
        }
    }
}

#[test]
fn modern_only_server_fails_a_legacy_pin_with_version_evidence() {
    let Some(server) = Server::start(Kind::Ts2 {
        legacy_reject: true,
    }) else {
        return;
    };
    let o = pinned(server.url(), "2025-11-25");
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert_eq!(
        o.json()["checks"]["protocol"]["code"],
        "mcp_version",
        "{}",
        o.stdout
    );
    let o = pinned(server.url(), "2026-07-28");
    assert_eq!(o.code, 0, "{}", o.stdout);
}

#[test]
fn an_unknown_pin_is_misconfigured_before_any_traffic() {
    let s = FakeServer::start(FakeConfig::default());
    let o = pinned(&s.url(), "2024-11-05");
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(s.log().is_empty(), "no traffic");
}
