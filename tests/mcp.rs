//! The built binary against the bundled fake MCP server and real third-party servers.

use std::time::Duration;

use crate::interop::{HttpMode, Kind, Server};
use crate::util::{Outcome, TempDir, run};
use agenthealth_testkit::fake_mcp::{Action, Era, FakeConfig, FakeServer, Fault, Mode, preset};

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

/// A server that answers 500 and then resets the connection it kept alive: the next request
/// on that connection fails before any byte of an answer (nothing was processed), so it is
/// sent again on a new connection and the 500 decides — UNHEALTHY, never UNREACHABLE
/// `failure=reset`, every run.
#[test]
fn a_reset_after_a_500_is_a_stale_connection_and_the_500_decides() {
    for _ in 0..5 {
        let s = FakeServer::start(preset("error-500-reset").expect("preset"));
        let o = ping(&s.url(), &[]);
        assert_eq!(o.code, 2, "{}", o.stdout);
        let v = o.json();
        assert_eq!(v["checks"]["reachability"]["evidence"]["http_status"], 500);
        assert_eq!(v["checks"]["authentication"]["status"], "UNHEALTHY", "{v}");
        assert!(!o.stdout.contains("\"reset\""), "{}", o.stdout);
        // The reset one and the one on the new connection.
        assert_eq!(s.count("server/discover"), 2);
    }
}

/// A complete head decides the class whatever happens to the body: a 500 whose body is cut
/// by a reset is UNHEALTHY (the status arrived), not UNREACHABLE.
#[test]
fn a_complete_5xx_head_decides_whatever_the_body_does() {
    let s = FakeServer::start(FakeConfig {
        faults: vec![Fault::post(Action::Error {
            status: 500,
            code: -32603,
            message: "Internal error",
            data: None,
        })],
        ..Default::default()
    });
    let o = ping(&s.url(), &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let s = FakeServer::start(FakeConfig::default().with_fault(Fault::post(Action::Reset)));
    let o = ping(&s.url(), &[]);
    assert_ne!(o.code, 3, "a response had started: {}", o.stdout);
}

/// The deprecated HTTP+SSE transport is not implemented (the specification), so its server
/// gets the statuses the rules give it — never MISCONFIGURED — with evidence and advice that
/// say what it is: Python's SDK (HEAD 200, POST 405) is UNHEALTHY, and one bounded GET finds
/// its event stream announcing an `endpoint`; Node's (HEAD unanswered) is UNREACHABLE, its
/// `/sse` path the hint.
#[test]
fn the_deprecated_http_sse_transport_is_named() {
    let python = FakeServer::start(FakeConfig {
        routes: vec![("/sse".into(), preset("sse-legacy-python").expect("preset"))],
        ..Default::default()
    });
    let o = run(&["doctor", "mcp", &python.url_for("/sse")]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(o.stdout.contains("transport_hint=http_sse"), "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "this is the deprecated HTTP+SSE transport (a GET opens an event stream announcing a \
             message endpoint), which agenthealth does not speak: configure the server's \
             Streamable HTTP endpoint (often /mcp) as the endpoint argument, or upgrade the server"
        ),
        "{}",
        o.stdout
    );
    assert_eq!(python.count_http("GET"), 1, "one bounded GET");
    let node = FakeServer::start(FakeConfig {
        routes: vec![("/sse".into(), preset("sse-legacy-node").expect("preset"))],
        ..Default::default()
    });
    let o = run(&["doctor", "mcp", &node.url_for("/sse"), "--timeout", "300"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(o.stdout.contains("transport_hint=sse_path"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("if this is the deprecated HTTP+SSE transport (the path ends in /sse)"),
        "{}",
        o.stdout
    );
    // A healthy server at /sse gets no hint; a 404 elsewhere is no HTTP+SSE transport.
    let v = ping(&python.url_for("/mcp"), &[]);
    assert!(!v.stdout.contains("transport_hint"), "{}", v.stdout);
    let missing = FakeServer::start(preset("discover-404").expect("preset"));
    let o = ping(&missing.url_for("/nothing-here"), &[]);
    assert!(!o.stdout.contains("transport_hint"), "{}", o.stdout);
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
    // authentication waits its 300 ms; protocol shares that silence (tests/deadline.rs).
    assert!(
        o.elapsed < Duration::from_millis(300 + 1000),
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
        let server = Server::start(kind);
        let o = ping(server.url(), &["--timeout", "5000"]);
        assert_eq!(o.code, 0, "{kind:?}: {}", o.stdout);
        let ev = &o.json()["checks"]["protocol"]["evidence"];
        assert_eq!(ev["era"], era, "{kind:?}");
        if era == "modern" {
            assert_eq!(ev["negotiated_version"], "2026-07-28", "{kind:?}");
            assert!(ev["fallback"].is_null(), "{kind:?}");
            assert!(ev["session_id_issued"].is_null(), "{kind:?}: no handshake");
        } else {
            // The handshake-only servers reject discovery the legacy way and negotiate the
            // offered revision, with a session.
            assert_eq!(ev["fallback"], true, "{kind:?}");
            assert_eq!(ev["negotiated_version"], "2025-11-25", "{kind:?}");
            assert_eq!(ev["session_id_issued"], true, "{kind:?}");
        }
        match kind {
            // server-everything answers on event streams with event ids.
            Kind::Everything => assert_eq!(ev["response_mode"], "sse"),
            Kind::Ts1Json => assert_eq!(ev["response_mode"], "json"),
            _ => {}
        }
    }
}

/// The Python SDK server speaks every revision: a check pinned to any of them negotiates
/// exactly that one, in each HTTP mode.
#[test]
fn real_python_server_honours_every_pin() {
    for mode in [HttpMode::Sse, HttpMode::Json, HttpMode::Stateless] {
        let server = Server::start(Kind::PyHttp { mode, pin: None });
        for pin in ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
            let o = pinned(server.url(), pin);
            assert_eq!(o.code, 0, "{mode:?} {pin}: {}", o.stdout);
            let ev = &o.json()["checks"]["protocol"]["evidence"];
            assert_eq!(ev["negotiated_version"], pin, "{mode:?}");
            assert_eq!(ev["pinned_version"], pin, "{mode:?}");
            let era = if pin == "2026-07-28" {
                "modern"
            } else {
                "legacy"
            };
            assert_eq!(ev["era"], era, "{mode:?} {pin}");
        }
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
            let server = Server::start(Kind::PyHttp {
                mode,
                pin: Some(rev),
            });
            // Unpinned: the server rejects discover, so legacy negotiation finds `rev`.
            let o = ping(server.url(), &["--timeout", "5000"]);
            assert_eq!(o.code, 0, "{mode:?} {rev}: {}", o.stdout);
            let ev = &o.json()["checks"]["protocol"]["evidence"];
            assert_eq!(ev["negotiated_version"], rev, "{mode:?}");
            assert_eq!(ev["fallback"], true, "{mode:?}");
            // Pinned to the same revision: healthy too.
            let o = pinned(server.url(), rev);
            assert_eq!(o.code, 0, "{mode:?} {rev} pinned: {}", o.stdout);
        }
    }
}

#[test]
fn modern_only_server_fails_a_legacy_pin_with_version_evidence() {
    let server = Server::start(Kind::Ts2 {
        legacy_reject: true,
    });
    let o = pinned(server.url(), "2025-11-25");
    assert_eq!(o.code, 2, "{}", o.stdout);
    let p = &o.json()["checks"]["protocol"];
    assert_eq!(p["code"], "mcp_version", "{}", o.stdout);
    assert_eq!(p["evidence"]["rpc_code"], -32022);
    assert_eq!(p["evidence"]["failed_method"], "initialize");
    assert_eq!(p["evidence"]["pinned_version"], "2025-11-25");
    let o = pinned(server.url(), "2026-07-28");
    assert_eq!(o.code, 0, "{}", o.stdout);
}

#[test]
fn an_unknown_pin_is_misconfigured_before_any_traffic() {
    let s = FakeServer::start(FakeConfig::default());
    let o = pinned(&s.url(), "2024-11-05");
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(s.log().is_empty(), "no traffic");
    // Nothing was sent: no code or message reads as the server's fault.
    let c = &o.json()["checks"]["configuration"];
    assert!(c.get("code").is_none(), "{c}");
    assert_eq!(c["message"], "MISCONFIGURED in configuration");
    assert_eq!(c["evidence"]["protocol_version"], "2024-11-05");
}

/// An OAuth target whose server publishes no OAuth metadata: discovery fails as such, and no
/// MCP request but the challenge probe is ever sent without the token the operator configured.
#[test]
fn oauth_without_metadata_is_misconfigured_and_nothing_is_sent_unauthenticated() {
    let s = FakeServer::start(FakeConfig::default());
    let dir = TempDir::new("oauth");
    let issuer = s.url().trim_end_matches("/mcp").to_string();
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: o\n    type: mcp\n    endpoint: {}\n    mcp:\n      oauth:\n        issuer: {issuer}\n        client_id: c\n        grant: client_credentials\n        client_secret_env: AH_CS\n",
            s.url()
        ),
    );
    let o = crate::util::run_env(
        &["check", f.to_str().unwrap_or_default(), "--format", "json"],
        &[("AH_CS", "oauth-canary-secret")],
    );
    assert_eq!(o.code, 4, "{}", o.stdout);
    let protocol = &o.json()["checks"]["protocol"];
    assert_eq!(protocol["code"], "mcp_oauth");
    assert_eq!(protocol["evidence"]["oauth"], "resource_metadata");
    // The one unauthenticated POST is the challenge probe, a credential-free `ping` (its
    // answer names no challenge here); no protocol request goes out without a token.
    let posts: Vec<_> = s
        .log()
        .into_iter()
        .filter(|seen| seen.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "only the challenge probe");
    assert_eq!(posts[0].rpc_method.as_deref(), Some("ping"));
    assert!(!posts[0].authorization);
    assert!(!o.stdout.contains("oauth-canary-secret"));
}

/// A config with one or more MCP targets at `url`, each with `mcp` lines (indented 6).
fn config(dir: &TempDir, targets: &[(&str, &str, &str)]) -> std::path::PathBuf {
    let mut yaml = String::from("version: v1\ntargets:\n");
    for (name, url, extra) in targets {
        yaml.push_str(&format!(
            "  - name: {name}\n    type: mcp\n    endpoint: {url}\n{extra}"
        ));
    }
    dir.file("c.yaml", &yaml)
}

/// Upstream §17 A1, A3 and A5 through the binary: bearer auth, a 2025-06-18 server with a
/// paginated tools list, every requirement met, JSON and SSE answers (each preceded by a log
/// notification): HEALTHY with one initialize, one DELETE, no call, no read; neither the
/// token nor any server text in the output.
#[test]
fn upstream_a_legacy_end_to_end() {
    for mode in [Mode::Json, Mode::Sse] {
        let mut cfg = FakeConfig {
            era: Era::Legacy("2025-06-18"),
            response: mode.clone(),
            head_status: 405,
            page_size: Some(4),
            require_bearer: Some("canary-bearer-token".into()),
            server_name: "canary-server-name",
            ..Default::default()
        };
        cfg.sse.notifications = 1;
        let s = FakeServer::start(cfg);
        let dir = TempDir::new("a1");
        let f = config(
            &dir,
            &[(
                "notes",
                &s.url(),
                "    auth:\n      bearer_env: MCP_TOKEN\n    mcp:\n      required_tools: [echo]\n      required_resources: ['health://ready']\n      required_prompts: [summary]\n",
            )],
        );
        let o = crate::util::run_env(
            &["check", f.to_str().unwrap_or_default(), "--format", "json"],
            &[("MCP_TOKEN", "canary-bearer-token")],
        );
        assert_eq!(o.code, 0, "{mode:?}: {}", o.stdout);
        let v = o.json();
        assert!(v["latency_ms"].is_number());
        let cap = &v["checks"]["capability"]["evidence"];
        assert_eq!(cap["negotiated_version"], "2025-06-18");
        assert_eq!(
            cap["response_mode"],
            if mode == Mode::Json { "json" } else { "sse" }
        );
        assert!(
            cap["tools_count"].as_i64().unwrap_or(0) > 4,
            "paginated: {cap}"
        );
        assert_eq!(s.count("initialize"), 1, "{mode:?}");
        assert_eq!(s.count_http("DELETE"), 1, "{mode:?}");
        for passive_never in ["tools/call", "resources/read", "prompts/get"] {
            assert_eq!(s.count(passive_never), 0, "{passive_never}");
        }
        assert!(
            s.log()
                .iter()
                .all(|r| r.authorization_scheme.as_deref() == Some("Bearer"))
        );
        assert!(!o.stdout.contains("canary"), "{}", o.stdout);
    }
}

/// Unadvertised inventories are skipped, never listed as empty, and a requirement on one is
/// missing.
#[test]
fn unadvertised_inventories_are_skipped_and_missing() {
    let mut cfg = FakeConfig::default();
    cfg.advertise.prompts = false;
    let s = FakeServer::start(cfg);
    let dir = TempDir::new("unadv");
    let f = config(
        &dir,
        &[(
            "notes",
            &s.url(),
            "    mcp:\n      required_prompts: [summary]\n",
        )],
    );
    let o = run(&["check", f.to_str().unwrap_or_default(), "--format", "json"]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let cap = &o.json()["checks"]["capability"];
    assert_eq!(cap["code"], "mcp_required");
    assert_eq!(
        cap["evidence"]["missing_prompts"],
        serde_json::json!(["summary"])
    );
    assert!(cap["evidence"]["prompts_count"].is_null());
    assert_eq!(s.count("prompts/list"), 0);
    assert_eq!(s.count("tools/list"), 1);
}

/// Targets never share a session: two targets at one endpoint each initialize and delete
/// their own.
#[test]
fn targets_never_share_a_session() {
    let s = FakeServer::start(FakeConfig::default());
    let dir = TempDir::new("share");
    let url = s.url();
    let f = config(&dir, &[("a", &url, ""), ("b", &url, "")]);
    let o = run(&["check", f.to_str().unwrap_or_default(), "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert_eq!(s.count("initialize"), 2);
    assert_eq!(s.sessions_created(), 2);
    assert_eq!(s.count_http("DELETE"), 2);
    let deleted: std::collections::HashSet<_> = s
        .log()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .filter_map(|r| r.session_id)
        .collect();
    assert_eq!(deleted.len(), 2, "each target deletes its own session");
}

/// Reachability is one HEAD whose any status is connectivity evidence; latency is that HEAD,
/// not the (slow) protocol exchanges.
#[test]
fn latency_is_the_head_round_trip() {
    let s = FakeServer::start(FakeConfig {
        head_status: 405,
        faults: vec![Fault::post(Action::Delay(Duration::from_millis(300)))],
        ..Default::default()
    });
    let o = ping(&s.url(), &[]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["checks"]["reachability"]["evidence"]["http_status"], 405);
    let latency = v["latency_ms"].as_f64().unwrap_or(f64::MAX);
    assert!(
        latency < 300.0,
        "latency {latency} ms excludes the protocol"
    );
    assert_eq!(s.count_http("HEAD"), 1);
}

/// Upstream §17 C17: an untrusted certificate is UNREACHABLE at the tls stage, before any
/// MCP traffic.
#[test]
fn untrusted_tls_is_unreachable() {
    use agenthealth_testkit::http_server::{Reply, Server as Plain};
    use agenthealth_testkit::tls;
    let s = Plain::start_wrapped(
        tls::server_wrap(tls::self_signed(&["localhost", "127.0.0.1"])),
        |_| Reply::status(200),
    );
    let url = format!("https://127.0.0.1:{}/mcp", s.port());
    let o = ping(&url, &["--timeout", "2000"]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    let v = o.json();
    assert_eq!(v["checks"]["reachability"]["steps"]["tls"], "UNREACHABLE");
    assert_eq!(
        v["checks"]["reachability"]["evidence"]["failure"],
        "tls_untrusted"
    );
    assert!(o.elapsed < Duration::from_millis(2 * 2000 + 1000));
}

/// Upstream §17 C18: a redirect is an unexpected status, never followed.
#[test]
fn redirects_are_never_followed() {
    let s = FakeServer::start(dual_with(Fault::post(Action::Status(307))));
    let o = ping(&s.url(), &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    let p = &o.json()["checks"]["protocol"];
    assert_eq!(p["code"], "mcp_http");
    assert_eq!(p["evidence"]["http_status"], 307);
    assert!(
        s.log().iter().all(|r| r.path == "/mcp"),
        "the Location was never followed"
    );
}

fn dual_with(fault: Fault) -> FakeConfig {
    FakeConfig {
        era: Era::Dual("2025-11-25"),
        ..Default::default()
    }
    .with_fault(fault)
}

/// Nothing the server says reaches the output: names, error messages and data, in JSON and
/// in doctor's terminal view.
#[test]
fn server_text_never_reaches_the_output() {
    let mut tools = agenthealth_testkit::fake_mcp::default_tools();
    tools.push(serde_json::json!({
        "name": "canary-tool", "description": "canary-description",
        "inputSchema": {"type": "object"}
    }));
    let s = FakeServer::start(FakeConfig {
        tools,
        server_name: "canary-server",
        faults: vec![Fault::on(
            "prompts/list",
            Action::Error {
                status: 200,
                code: -32603,
                message: "canary-message",
                data: Some(serde_json::json!({"detail": "canary-data"})),
            },
        )],
        ..Default::default()
    });
    for format in ["json", "terminal"] {
        let o = run(&[
            "doctor",
            "mcp",
            &s.url(),
            "--format",
            format,
            "--color",
            "never",
        ]);
        assert_eq!(o.code, 2, "{}", o.stdout);
        assert!(!o.stdout.contains("canary"), "{}", o.stdout);
        assert!(!o.stderr.contains("canary"), "{}", o.stderr);
    }
}
