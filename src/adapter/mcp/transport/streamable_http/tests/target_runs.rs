//! Whole target runs of the MCP adapter over this transport and real sockets: the legacy and
//! modern fixtures end to end, the inventories' lanes, and how failures are classified.

use super::*;

fn run_over(
    server: &Server,
    options: McpOptions,
    dims: &[Dimension],
) -> Vec<crate::result::Observation> {
    run_with(server, options, Credential::None, dims)
}

fn run_with(
    server: &Server,
    options: McpOptions,
    credential: Credential,
    dims: &[Dimension],
) -> Vec<crate::result::Observation> {
    run_for(server, options, credential, dims, LONG)
}

/// A whole run, each check an attempt of `each`.
fn run_for(
    server: &Server,
    options: McpOptions,
    credential: Credential,
    dims: &[Dimension],
    each: Duration,
) -> Vec<crate::result::Observation> {
    use crate::adapter::Adapter;
    use crate::adapter::mcp::{McpAdapter, testing};
    let mut target = testing::target(options);
    target.endpoint = server.url("/mcp");
    let mut ctx = (*testing::context(target)).clone();
    ctx.credential = credential;
    let mut run = McpAdapter.start(Arc::new(ctx));
    assert_eq!(run.configure().status, Status::Healthy);
    let obs = dims
        .iter()
        .map(|d| run.check(*d, &attempt_for(each)))
        .collect();
    run.close(&Attempt::new(Deadline::after(
        Duration::from_secs(1),
        Bound::Cleanup,
    )));
    obs
}

const PASSIVE: [Dimension; 4] = [
    Dimension::Reachability,
    Dimension::Authentication,
    Dimension::Protocol,
    Dimension::Capability,
];

/// The upstream legacy fixture (server-everything-like): discovery rejected with 400, a
/// session, SSE answers preceded by a log notification, a paginated tools list.
fn legacy_fixture(r: &Request) -> Reply {
    let sse = |payload: String| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(b"id: prime\ndata:\n\n");
        body.extend_from_slice(
            event(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#).as_bytes(),
        );
        body.extend_from_slice(event(&payload).as_bytes());
        Reply::Hold(body, Duration::from_millis(300))
    };
    let ok = |result: &str| format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id());
    match (r.method.as_str(), r.rpc().as_str()) {
        ("HEAD", _) => Reply::Send(response(405, &[("allow", "GET, POST, DELETE")], b"")),
        ("DELETE", _) => Reply::Send(response(200, &[], b"")),
        ("POST", "server/discover") => Reply::Send(json(
            400,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#,
        )),
        ("POST", "initialize") => {
            let body = format!(
                "{}{}",
                String::from_utf8_lossy(&sse_head(&[("mcp-session-id", "test-session")])),
                event(&ok(
                    r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"fixture","version":"1"}}"#
                ))
            );
            Reply::Hold(body.into_bytes(), Duration::from_millis(300))
        }
        ("POST", "notifications/initialized") => Reply::Send(response(202, &[], b"")),
        ("POST", "tools/list") if r.json()["params"].get("cursor").is_none() => {
            sse(ok(r#"{"tools":[],"nextCursor":"page-2"}"#))
        }
        ("POST", "tools/list") => sse(ok(
            r#"{"tools":[{"name":"search","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"destructiveHint":false}}]}"#,
        )),
        ("POST", "resources/list") => sse(ok(
            r#"{"resources":[{"name":"ready","uri":"health://ready"}]}"#,
        )),
        ("POST", "prompts/list") => sse(ok(r#"{"prompts":[{"name":"summary"}]}"#)),
        other => panic!("unexpected {other:?}"),
    }
}

fn requiring() -> McpOptions {
    McpOptions {
        required_tools: vec!["search".into()],
        required_resources: vec!["health://ready".into()],
        required_prompts: vec!["summary".into()],
        ..McpOptions::default()
    }
}

/// Upstream §17 A1/A3 over sockets: HEALTHY, one initialize, one DELETE, every non-initialize
/// POST carrying the session and version.
#[test]
fn a_legacy_server_is_checked_end_to_end() {
    let server = Server::start(legacy_fixture);
    let obs = run_with(
        &server,
        requiring(),
        Credential::Bearer {
            variable: "TOKEN".into(),
            token: Secret::new("canary-token".into()),
        },
        &PASSIVE,
    );
    for o in &obs {
        assert_eq!(o.status, Status::Healthy, "{o:?}");
    }
    assert_eq!(obs[0].evidence.get(Key::HttpStatus), Some(&Fact::Int(405)));
    assert_eq!(
        obs[3].evidence.get(Key::ResponseMode),
        Some(&Fact::Word("sse"))
    );
    assert_eq!(obs[3].evidence.get(Key::Fallback), Some(&Fact::Bool(true)));
    assert_eq!(
        obs[3].evidence.get(Key::DiscoverRpcCode),
        Some(&Fact::Int(-32000))
    );
    let mut rpcs: Vec<String> = server
        .with_method("POST")
        .iter()
        .map(Request::rpc)
        .collect();
    // The inventories are listed at once, each on its own connection: they arrive in any
    // order, tools' second page after its first.
    rpcs[3..].sort();
    assert_eq!(
        rpcs,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "prompts/list",
            "resources/list",
            "tools/list",
            "tools/list",
        ]
    );
    assert_eq!(server.with_method("DELETE").len(), 1);
    for r in server.requests() {
        assert_eq!(r.header("authorization"), Some("Bearer canary-token"));
        let after_init =
            !matches!(r.rpc().as_str(), "server/discover" | "initialize") && r.method != "HEAD";
        if after_init {
            assert_eq!(
                r.header("mcp-session-id"),
                Some("test-session"),
                "{}",
                r.rpc()
            );
            assert_eq!(r.header("mcp-protocol-version"), Some("2025-06-18"));
        }
    }
    let rendered = format!("{obs:?}");
    assert!(!rendered.contains("canary") && !rendered.contains("fixture"));
}

/// A modern server over sockets (upstream §17 E25's server, passive): no initialize, no
/// session, no GET or DELETE; every POST carries the modern headers.
#[test]
fn a_modern_server_is_checked_end_to_end() {
    // A fast server on loopback: one connection. A slow one (each POST answered after 25 ms)
    // on loopback: still one, since the network's round trip is loopback's and only that
    // pays for a lane. Across a far link (the kernel's round trip 40 ms) the inventories go
    // out at once, resources and prompts on a connection each.
    let ms = Duration::from_millis;
    for (delay, far, connections) in [
        (None, None, 1),
        (Some(ms(25)), None, 1),
        (None, Some(ms(40)), 3),
    ] {
        let _far = far.map(super::super::far_link::assume);
        let server = Server::start(move |r| {
            let ok = |result: &str| {
                let reply = Reply::Send(json(
                    200,
                    &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id()),
                ));
                match delay {
                    Some(d) => Reply::After(d, Box::new(reply)),
                    None => reply,
                }
            };
            match (r.method.as_str(), r.rpc().as_str()) {
                ("HEAD", _) => Reply::Send(response(405, &[("allow", "POST")], b"")),
                ("POST", "server/discover") => ok(
                    r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{},"prompts":{}}}"#,
                ),
                ("POST", "tools/list") => ok(
                    r#"{"resultType":"complete","tools":[{"name":"search 世界","inputSchema":{"type":"object","properties":{"query":{"type":"string","x-mcp-header":"Query"}}}}]}"#,
                ),
                ("POST", "resources/list") => ok(r#"{"resultType":"complete","resources":[]}"#),
                ("POST", "prompts/list") => ok(r#"{"resultType":"complete","prompts":[]}"#),
                other => panic!("unexpected {other:?}"),
            }
        });
        let options = McpOptions {
            required_tools: vec!["search 世界".into()],
            ..McpOptions::default()
        };
        let obs = run_over(&server, options, &PASSIVE);
        for o in &obs {
            assert_eq!(o.status, Status::Healthy, "{o:?}");
        }
        for r in server.with_method("POST") {
            assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
            assert_eq!(r.header("mcp-method").map(str::to_owned), Some(r.rpc()));
            assert_eq!(r.header("mcp-session-id"), None);
            assert_eq!(
                r.json()["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
        }
        let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
        assert_eq!(methods, ["HEAD", "POST", "POST", "POST", "POST"]);
        assert_eq!(server.connections(), connections, "{delay:?} {far:?}");
        let on_first: Vec<String> = server
            .requests()
            .iter()
            .filter(|r| r.connection == 0)
            .map(|r| format!("{} {}", r.method, r.rpc()))
            .collect();
        let sequential = [
            "HEAD ",
            "POST server/discover",
            "POST tools/list",
            "POST resources/list",
            "POST prompts/list",
        ];
        // At once: HEAD, discover and tools on the run's connection.
        assert_eq!(on_first, sequential[..6 - connections], "{delay:?} {far:?}");
    }
}

/// The inventories go out at once only where that is faster than one after another, by the
/// kernel's round trip of the link.
#[test]
fn requests_go_out_at_once_where_a_round_trip_costs_more_than_a_lane() {
    use super::super::lanes_pay;
    let ms = |n: u64| Some(Duration::from_millis(n));
    let (http, https) = (false, true);
    // No round trip known (no kernel sample, a proxy): one after another.
    assert!(!lanes_pay(3, 2, None, http));
    // Loopback, idle or under load alike: the kernel saw 2 to 30 µs (however late our own
    // clock says an answer came), cheaper than a lane. So is a slow server on a near link:
    // its 30 ms of work are no round trip a lane saves.
    for rtt in [2, 30] {
        let rtt = Some(Duration::from_micros(rtt));
        assert!(!lanes_pay(3, 2, rtt, http) && !lanes_pay(3, 0, rtt, https));
    }
    // Across a WAN over plain HTTP (40 ms round trips): three at once save one round trip
    // beyond the new connections' handshake; two at once save nothing. So does 5 ms.
    assert!(lanes_pay(3, 2, ms(40), http));
    assert!(!lanes_pay(2, 1, ms(40), http));
    assert!(lanes_pay(3, 2, ms(5), http));
    // Over HTTPS the new connections' TCP and TLS round trips eat the saving, unless they
    // are open already (a later page).
    assert!(!lanes_pay(3, 2, ms(40), https));
    assert!(lanes_pay(3, 0, ms(40), https));
    assert!(!lanes_pay(1, 0, ms(1000), http));
}

/// Inventories listed at once on connections of their own (a far link): the answers to two
/// are no response to the third, which the server never answers, so it is UNREACHABLE, not a
/// partial answer (UNKNOWN).
#[test]
fn a_silent_inventory_beside_answered_ones_is_unreachable() {
    let _far = super::super::far_link::assume(Duration::from_millis(40));
    let server = Server::start(|r| {
        let ok = |result: &str| {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, r.id());
            Reply::After(
                Duration::from_millis(25),
                Box::new(Reply::Send(json(200, &body))),
            )
        };
        match (r.method.as_str(), r.rpc().as_str()) {
            ("HEAD", _) => Reply::Send(response(405, &[("allow", "POST")], b"")),
            ("POST", "server/discover") => ok(
                r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{},"prompts":{}}}"#,
            ),
            ("POST", "tools/list") => ok(r#"{"resultType":"complete","tools":[]}"#),
            ("POST", "resources/list") => ok(r#"{"resultType":"complete","resources":[]}"#),
            _ => Reply::HangBeforeHead,
        }
    });
    let dims = [Dimension::Protocol, Dimension::Capability];
    let obs = run_for(
        &server,
        McpOptions::default(),
        Credential::None,
        &dims,
        Duration::from_millis(600),
    );
    assert_eq!(obs[0].status, Status::Healthy, "{:?}", obs[0]);
    assert_eq!(obs[1].status, Status::Unreachable, "{:?}", obs[1]);
    assert_eq!(
        server.with_method("POST").len(),
        4,
        "the lists went out at once"
    );
}

/// Upstream §17 B16, C18, C19, C22 through whole runs.
#[test]
fn a_refusal_a_rejection_in_a_200_and_an_oversized_body_are_classified() {
    let unauthorized = Server::start(|r| match r.method.as_str() {
        "HEAD" => Reply::Send(response(401, &[("www-authenticate", "Bearer")], b"")),
        _ => Reply::Send(response(401, &[], b"")),
    });
    let obs = run_over(
        &unauthorized,
        McpOptions::default(),
        &[Dimension::Reachability, Dimension::Protocol],
    );
    assert_eq!(
        obs[0].status,
        Status::Healthy,
        "a 401 HEAD is connectivity evidence"
    );
    assert_eq!(
        (obs[1].status, obs[1].code()),
        (Status::Misconfigured, Some(DiagnosticCode::McpAuth))
    );

    // A JSON-RPC error in a 200 is a legacy server's rejection of discovery (issue 12): the
    // handshake follows, and its own rejection is the verdict.
    let rpc_in_200 = Server::start(|_| {
        Reply::Send(json(
            200,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"leak-me"}}"#,
        ))
    });
    let obs = run_over(&rpc_in_200, McpOptions::default(), &[Dimension::Protocol]);
    assert_eq!(
        (obs[0].status, obs[0].code()),
        (Status::Unhealthy, Some(DiagnosticCode::McpRpc))
    );
    assert!(!format!("{obs:?}").contains("leak-me"));
    assert_eq!(rpc_in_200.requests().len(), 2, "discover, then initialize");
    assert_eq!(obs[0].evidence.get(Key::Fallback), Some(&Fact::Bool(true)));

    let huge = Server::start(|_| Reply::Send(json(200, &"x".repeat((1 << 20) + 1))));
    let obs = run_over(&huge, McpOptions::default(), &[Dimension::Protocol]);
    assert_eq!(
        (obs[0].status, obs[0].code()),
        (Status::Unknown, Some(DiagnosticCode::McpLimit))
    );
}
