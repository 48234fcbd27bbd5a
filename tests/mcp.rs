//! The built binary against the bundled fake MCP server and real third-party servers.

use std::time::Duration;

use crate::fake_mcp::{Era, FakeConfig, FakeServer, preset};
use crate::interop::{HttpMode, Kind, Server};
use crate::util::{Outcome, run};

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

/// The headline of protocol selection: every real HTTP server is HEALTHY unpinned.
#[test]
fn real_http_servers_are_healthy_unpinned() {
    let kinds = [
        Kind::PyHttp {
            mode: HttpMode::Sse,
            pin: None,
        },
        Kind::PyHttp {
            mode: HttpMode::Json,
            pin: None,
        },
        Kind::PyHttp {
            mode: HttpMode::Stateless,
            pin: None,
        },
        Kind::Everything,
        Kind::Ts1Json,
        Kind::Ts2 {
            legacy_reject: false,
        },
        Kind::Ts2 {
            legacy_reject: true,
        },
    ];
    for kind in kinds {
        let Some(server) = Server::start(kind) else {
            continue;
        };
        let o = ping(server.url(), &["--timeout", "5000"]);
        assert_eq!(o.code, 0, "{kind:?}: {}", o.stdout);
    }
}

#[test]
fn real_python_server_pinned_to_each_legacy_revision() {
    for rev in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let Some(server) = Server::start(Kind::PyHttp {
            mode: HttpMode::Json,
            pin: Some(rev),
        }) else {
            continue;
        };
        let o = ping(server.url(), &["--timeout", "5000"]);
        assert_eq!(o.code, 0, "{rev}: {}", o.stdout);
        assert_eq!(
            o.json()["checks"]["protocol"]["evidence"]["negotiated_version"],
            rev
        );
    }
}
