//! Functional checks end to end: the built binary calls one tool on the fake MCP server (and
//! on real servers), and the tests assert the status, the evidence, the exit code and what
//! the server received — how many `tools/call`s, the argument bytes, the mirrored headers.

use std::time::Duration;

use serde_json::{Value, json};

use crate::interop::{HttpMode, Kind, Server};
use crate::util::{Outcome, TempDir, run_env};
use agenthealth_testkit::fake_mcp::{
    Action, CONTENT_KINDS, Era, FakeConfig, FakeServer, Fault, Mode, STALE_OBSERVED_AT, Seen,
};

/// One functional target, written as a configuration file.
struct Probe {
    tool: String,
    args: Option<String>,
    expect: Vec<String>,
    target: Vec<String>,
    mcp: Vec<String>,
}

impl Probe {
    fn new(tool: &str) -> Probe {
        Probe {
            tool: tool.to_owned(),
            args: None,
            expect: Vec::new(),
            target: Vec::new(),
            mcp: Vec::new(),
        }
    }

    fn args(mut self, json: &str) -> Probe {
        self.args = Some(json.to_owned());
        self
    }

    /// An `expect` line, e.g. `fresh_within_s: {/observed_at: 300}`.
    fn expect(mut self, line: &str) -> Probe {
        self.expect.push(line.to_owned());
        self
    }

    /// A target-level line, e.g. `retries: 3`.
    fn target(mut self, line: &str) -> Probe {
        self.target.push(line.to_owned());
        self
    }

    /// An `mcp` line, e.g. `protocol_version: '2025-11-25'`.
    fn mcp(mut self, line: &str) -> Probe {
        self.mcp.push(line.to_owned());
        self
    }

    fn yaml(&self, url: &str) -> String {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let mut y = format!(
            "version: v1\ntargets:\n  - name: probe\n    type: mcp\n    endpoint: {url}\n    \
             checks: [protocol, capability, functional, latency]\n"
        );
        for line in &self.target {
            y.push_str(&format!("    {line}\n"));
        }
        y.push_str("    mcp:\n");
        for line in &self.mcp {
            y.push_str(&format!("      {line}\n"));
        }
        y.push_str(&format!(
            "      functional:\n        tool: {}\n        safe: true\n",
            quote(&self.tool)
        ));
        if let Some(args) = &self.args {
            y.push_str(&format!("        arguments_json: {}\n", quote(args)));
        }
        if !self.expect.is_empty() {
            y.push_str("        expect:\n");
            for line in &self.expect {
                y.push_str(&format!("          {line}\n"));
            }
        }
        y
    }

    fn run_with(&self, url: &str, command: &str, extra: &[&str], env: &[(&str, &str)]) -> Outcome {
        let dir = TempDir::new("functional");
        let file = dir.file("agenthealth.yaml", &self.yaml(url));
        let path = file.to_str().unwrap_or_default().to_owned();
        let mut args = vec![command, path.as_str()];
        args.extend_from_slice(extra);
        run_env(&args, env)
    }

    /// `check --format json`.
    fn check(&self, url: &str) -> Outcome {
        self.run_with(url, "check", &["--format", "json"], &[])
    }
}

fn functional(o: &Outcome) -> Value {
    o.json()["checks"]["functional"].clone()
}

/// Asserts exit code, functional status and code.
fn assert_functional(o: &Outcome, exit: i32, status: &str, code: Option<&str>) -> Value {
    let f = functional(o);
    assert_eq!(o.code, exit, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(f["status"], status, "{}", o.stdout);
    assert_eq!(f["code"].as_str(), code, "{}", o.stdout);
    f
}

fn calls(s: &FakeServer) -> Vec<Seen> {
    s.log()
        .into_iter()
        .filter(|r| r.rpc_method.as_deref() == Some("tools/call"))
        .collect()
}

fn modern() -> FakeConfig {
    FakeConfig {
        era: Era::Modern,
        ..FakeConfig::default()
    }
}

const DIAGNOSTIC_ARGS: &str = r#"{"freshObservability":true,"chromaProbeTimeoutMs":2500,"embeddingWriteCanaryTimeoutMs":15000}"#;

// ---------------------------------------------------------------- the Memory Core scenario

/// The fault of ../shared/spec/memory-core-healthcheck.md, on both eras: the deployed tool
/// is refused before any call; called with `{}` it answers a stale payload that fails
/// `fresh_within_s`; the fixed tool is HEALTHY.
#[test]
fn memory_core_healthcheck_fault_is_caught() {
    for cfg in [FakeConfig::default(), modern()] {
        let era = format!("{:?}", cfg.era);
        let s = FakeServer::start(cfg);
        let faulty = Probe::new("memory_core_healthcheck_faulty")
            .args(DIAGNOSTIC_ARGS)
            .expect("json: {/status: healthy}")
            .expect("fresh_within_s: {/observed_at: 300}");
        let o = faulty.check(&s.url());
        let f = assert_functional(&o, 4, "MISCONFIGURED", None);
        let violation = f["evidence"]["argument_violation"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            violation,
            "argument `chromaProbeTimeoutMs` is not declared by the tool's inputSchema, \
             which forbids additional properties",
            "{era}"
        );
        assert_eq!(f["evidence"]["tool"], "memory_core_healthcheck_faulty");
        assert_eq!(s.count("tools/call"), 0, "{era}: refused before any call");

        let only_fresh = Probe::new("memory_core_healthcheck_faulty")
            .args(r#"{"freshObservability":true}"#)
            .check(&s.url());
        let f = assert_functional(&only_fresh, 4, "MISCONFIGURED", None);
        assert_eq!(
            f["evidence"]["argument_violation"],
            "argument `freshObservability` is not declared by the tool's inputSchema, \
             which forbids additional properties"
        );
        assert_eq!(s.count("tools/call"), 0);

        let stale = Probe::new("memory_core_healthcheck_faulty")
            .args("{}")
            .expect("json: {/status: healthy}")
            .expect("fresh_within_s: {/observed_at: 300}")
            .check(&s.url());
        let f = assert_functional(&stale, 2, "UNHEALTHY", Some("mcp_functional"));
        let ev = &f["evidence"];
        assert_eq!(ev["expect_kind"], "fresh_within_s", "{era}");
        assert_eq!(ev["expect_pointer"], "/observed_at");
        assert_eq!(ev["expected"], "300");
        assert_eq!(ev["expect_failure"], "stale");
        assert_eq!(ev["expectations_failed"], 1);
        assert!(
            !stale.stdout.contains(STALE_OBSERVED_AT),
            "never the server's value"
        );
        assert_eq!(s.count("tools/call"), 1);
        assert_eq!(s.tool_call_arguments(), ["{}"]);

        s.reset_log();
        let fixed = Probe::new("memory_core_healthcheck_fixed")
            .args(DIAGNOSTIC_ARGS)
            .expect("json: {/status: healthy, /cached: false, /options/chromaProbeTimeoutMs: 2500}")
            .expect("fresh_within_s: {/observed_at: 300}")
            .check(&s.url());
        let f = assert_functional(&fixed, 0, "HEALTHY", None);
        assert_eq!(f["evidence"]["expectations_met"], 4, "{era}");
        assert_eq!(s.tool_call_arguments(), [DIAGNOSTIC_ARGS]);
    }
}

/// Doctor explains a refused argument and a stale payload in one line each.
#[test]
fn doctor_explains_functional_failures() {
    let s = FakeServer::start(FakeConfig::default());
    let o = Probe::new("memory_core_healthcheck_faulty")
        .args(r#"{"freshObservability":true}"#)
        .run_with(&s.url(), "doctor", &["--color", "never"], &[]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "- functional: the tool would not accept mcp.functional.arguments_json, so it was \
             not called: argument `freshObservability` is not declared by the tool's \
             inputSchema, which forbids additional properties"
        ),
        "{}",
        o.stdout
    );
    let o = Probe::new("memory_core_healthcheck_faulty")
        .args("{}")
        .expect("fresh_within_s: {/observed_at: 300}")
        .run_with(&s.url(), "doctor", &["--color", "never"], &[]);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "- functional: expectation fresh_within_s `/observed_at` failed: the timestamp \
             there is older than 300 s"
        ),
        "{}",
        o.stdout
    );
    let o =
        Probe::new("delete_everything").run_with(&s.url(), "doctor", &["--color", "never"], &[]);
    assert!(
        o.stdout.contains(
            "- functional: tool `delete_everything` must declare readOnlyHint: true and \
             destructiveHint: false (readOnlyHint is not true)"
        ),
        "{}",
        o.stdout
    );
}

// ---------------------------------------------------------------- upstream §17 A, B, D

/// Upstream §17 A2/A4/A5: legacy JSON and SSE (each answer preceded by a notification),
/// retries 3, bearer auth: HEALTHY with one `initialize`, one `DELETE`, exactly one
/// `tools/call` carrying the arguments byte for byte, and neither the token nor the tool's
/// output in the result.
#[test]
fn legacy_end_to_end_calls_exactly_once() {
    for response in [Mode::Json, Mode::Sse] {
        let mut cfg = FakeConfig {
            era: Era::Legacy("2025-06-18"),
            response: response.clone(),
            require_bearer: Some("tok-SECRET-123".into()),
            page_size: Some(3),
            ..FakeConfig::default()
        };
        cfg.sse.notifications = 1;
        let s = FakeServer::start(cfg);
        let args = r#"{"text":"secret-response"}"#;
        let o = Probe::new("echo")
            .args(args)
            .target("retries: 3")
            .target("auth: {bearer_env: MCP_TOKEN}")
            .mcp("required_tools: [echo]")
            .mcp("required_resources: ['health://ready']")
            .mcp("required_prompts: [summary]")
            .run_with(
                &s.url(),
                "check",
                &["--format", "json"],
                &[("MCP_TOKEN", "tok-SECRET-123")],
            );
        assert_functional(&o, 0, "HEALTHY", None);
        assert_eq!(s.count("initialize"), 1, "{response:?}");
        assert_eq!(s.count_http("DELETE"), 1);
        assert_eq!(s.count("tools/call"), 1);
        assert_eq!(s.tool_call_arguments(), [args]);
        assert!(!o.stdout.contains("tok-SECRET-123"));
        assert!(!o.stdout.contains("secret-response"));
        // Legacy calls carry no modern headers.
        let call = &calls(&s)[0];
        assert_eq!((call.mcp_name.as_deref(), call.mcp_params.len()), (None, 0));
    }
}

/// Upstream §17 B14 and N145: destructive or unannotated tools are never called.
#[test]
fn unsafe_tools_are_misconfigured_and_never_called() {
    let s = FakeServer::start(FakeConfig::default());
    for (tool, why) in [
        ("delete_everything", "readOnlyHint is not true"),
        ("unannotated", "tool declares no annotations"),
    ] {
        let o = Probe::new(tool).check(&s.url());
        let f = assert_functional(&o, 4, "MISCONFIGURED", Some("mcp_unsafe"));
        assert_eq!(f["evidence"]["unsafe_annotation"], why);
    }
    let mut cfg = modern();
    cfg.tools.push(
        json!({"name": "no_destructive_hint", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": true}}),
    );
    let m = FakeServer::start(cfg);
    let o = Probe::new("no_destructive_hint").check(&m.url());
    let f = assert_functional(&o, 4, "MISCONFIGURED", Some("mcp_unsafe"));
    assert_eq!(
        f["evidence"]["unsafe_annotation"],
        "destructiveHint is not declared"
    );
    assert_eq!(s.count("tools/call") + m.count("tools/call"), 0);
}

/// Upstream §17 B15.
#[test]
fn is_error_is_unhealthy() {
    let s = FakeServer::start(modern());
    let o = Probe::new("fails").check(&s.url());
    let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_functional"));
    assert_eq!(f["evidence"]["is_error"], true);
    assert!(!o.stdout.contains("failed on purpose"));
    assert_eq!(s.count("tools/call"), 1);
}

/// Upstream §17 D24, and a tool excluded for invalid header annotations.
#[test]
fn missing_tools_are_unhealthy_and_never_called() {
    let s = FakeServer::start(FakeConfig::default());
    let o = Probe::new("missing").check(&s.url());
    assert_eq!(o.json()["status"], "UNHEALTHY");
    let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_required"));
    assert_eq!(f["evidence"]["missing_tools"], json!(["missing"]));
    assert_eq!(s.count("tools/call"), 0);

    let m = FakeServer::start(modern());
    for bad in [
        "header_bad_number",
        "header_bad_name",
        "header_bad_duplicate",
        "header_bad_unreachable",
        "header_bad_root",
    ] {
        let o = Probe::new(bad).check(&m.url());
        let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_required"));
        assert_eq!(f["evidence"]["excluded_tools"], json!([bad]));
        assert!(f["evidence"]["exclusion_reason"].is_string());
    }
    assert_eq!(m.count("tools/call"), 0);
}

// ---------------------------------------------------------------- results (upstream §17 H)

/// Every content type is accepted, every missing or mistyped field is UNHEALTHY
/// `mcp_protocol` (upstream §17 H52 end to end), on both eras.
#[test]
fn content_blocks_of_every_type() {
    for cfg in [FakeConfig::default(), modern()] {
        let s = FakeServer::start(cfg);
        let o = Probe::new("content_all").check(&s.url());
        let f = assert_functional(&o, 0, "HEALTHY", None);
        assert_eq!(f["evidence"]["content_blocks"], 5);
        for kind in CONTENT_KINDS {
            let o = Probe::new("content")
                .args(&format!(r#"{{"kind":"{kind}"}}"#))
                .check(&s.url());
            if kind.starts_with("bad_") {
                let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_protocol"));
                assert_eq!(f["evidence"]["content_block"], 0, "{kind}");
                assert!(f["evidence"]["protocol_error"].is_string(), "{kind}");
            } else {
                assert_functional(&o, 0, "HEALTHY", None);
            }
        }
        assert_eq!(s.count("tools/call"), 1 + CONTENT_KINDS.len());
    }
}

#[test]
fn output_schema_mismatch_is_unhealthy_with_the_failing_path() {
    let s = FakeServer::start(modern());
    let o = Probe::new("structured").check(&s.url());
    let f = assert_functional(&o, 0, "HEALTHY", None);
    assert_eq!(f["evidence"]["output_schema_checked"], true);
    let o = Probe::new("structured")
        .args(r#"{"mismatch":true}"#)
        .expect("json: {/ok: true}")
        .check(&s.url());
    let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_protocol"));
    // {"ok":"yes"} lacks `count` — not a name the configuration holds, so it is not shown.
    assert_eq!(
        f["evidence"]["output_violation"],
        "structuredContent lacks a required property of the tool's outputSchema"
    );
    let mut cfg = modern();
    cfg.tools
        .push(json!({"name": "typed", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": true, "destructiveHint": false},
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}));
    cfg = cfg.with_fault(Fault::on(
        "tools/call",
        Action::Result(json!({"content": [], "structuredContent": {"ok": "yes"}})),
    ));
    let t = FakeServer::start(cfg);
    let o = Probe::new("typed")
        .expect("json: {/ok: true}")
        .check(&t.url());
    let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_protocol"));
    assert_eq!(
        f["evidence"]["output_violation"],
        "structuredContent at `ok` has a type that the tool's outputSchema does not allow \
         (expected boolean)"
    );
}

/// mcp-protocol.md §4.6: `input_required` (and −32021) are inconclusive, and never continued.
#[test]
fn input_required_is_unknown_with_no_further_call() {
    let s = FakeServer::start(modern());
    let o = Probe::new("needs_input")
        .target("retries: 3")
        .check(&s.url());
    assert_functional(&o, 5, "UNKNOWN", Some("mcp_input"));
    assert_eq!(s.count("tools/call"), 1);
    let o = Probe::new("needs_sampling").check(&s.url());
    let f = assert_functional(&o, 5, "UNKNOWN", Some("mcp_input"));
    assert_eq!(f["evidence"]["rpc_code"], -32021);
    assert_eq!(s.count("tools/call"), 2);
}

#[test]
fn expectations_on_text_results() {
    let s = FakeServer::start(FakeConfig::default());
    let o = Probe::new("echo")
        .args(r#"{"text":"{\"status\":\"ok\",\"n\":2}"}"#)
        .expect("json: {/status: ok, /n: 2.0}")
        .expect("text_contains: '\"ok\"'")
        .check(&s.url());
    let f = assert_functional(&o, 0, "HEALTHY", None);
    assert_eq!(f["evidence"]["expectations_met"], 3);
    let o = Probe::new("echo")
        .args(r#"{"text":"warming up"}"#)
        .expect("text_contains: ready")
        .check(&s.url());
    let f = assert_functional(&o, 2, "UNHEALTHY", Some("mcp_functional"));
    assert_eq!(f["evidence"]["expect_kind"], "text_contains");
    assert_eq!(f["evidence"]["expected"], "ready");
    assert_eq!(f["evidence"]["expect_failure"], "not_found");
    assert!(!o.stdout.contains("warming"));
}

// ---------------------------------------------------------------- arguments on the wire

/// The loader's 64 KiB limit: exactly 65 536 bytes are sent as written; one more is a load
/// failure naming the key.
#[test]
fn arguments_up_to_64_kib_are_sent_exactly() {
    let s = FakeServer::start(modern());
    let max = format!(r#"{{"text":"{}"}}"#, "x".repeat(65_536 - 11));
    assert_eq!(max.len(), 65_536);
    let o = Probe::new("echo").args(&max).check(&s.url());
    assert_functional(&o, 0, "HEALTHY", None);
    assert_eq!(s.tool_call_arguments(), [max.as_str()]);
    let over = format!(r#"{{"text":"{}"}}"#, "x".repeat(65_536 - 10));
    let o = Probe::new("echo").args(&over).check(&s.url());
    o.assert_tool_failure();
    assert!(
        o.stderr
            .contains("targets[0].mcp.functional.arguments_json"),
        "{}",
        o.stderr
    );
    assert_eq!(s.count("tools/call"), 1);
}

/// Integers beyond 64 bits and the operator's spacing reach the server unchanged.
#[test]
fn large_integer_arguments_are_sent_byte_exact() {
    for cfg in [FakeConfig::default(), modern()] {
        let s = FakeServer::start(cfg);
        let args = r#"{ "text": "n", "big": 123456789012345678901234567890, "f": 1.10 }"#;
        let o = Probe::new("echo").args(args).check(&s.url());
        assert_functional(&o, 0, "HEALTHY", None);
        assert_eq!(s.tool_call_arguments(), [args]);
    }
}

// ---------------------------------------------------------------- modern headers

/// Upstream §17 E25/E26: `Mcp-Name` and `Mcp-Param-Query` carry the Base64 sentinel for a
/// name and a value that need it; JSON and SSE answers; exactly one call with retries 3. The
/// fake validates the headers against the body (−32020 on a mismatch), so HEALTHY proves it
/// accepted them.
#[test]
fn modern_calls_mirror_name_and_params_with_the_sentinel() {
    for response in [Mode::Json, Mode::Sse] {
        let mut cfg = FakeConfig {
            era: Era::Modern,
            response: response.clone(),
            ..FakeConfig::default()
        };
        cfg.tools.push(
            json!({"name": "search 世界", "inputSchema": {"type": "object",
            "properties": {"query": {"type": "string", "x-mcp-header": "Query"}}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false}}),
        );
        let s = FakeServer::start(cfg);
        let o = Probe::new("search 世界")
            .args(r#"{"query":"hello\n世界"}"#)
            .target("retries: 3")
            .check(&s.url());
        assert_functional(&o, 0, "HEALTHY", None);
        let sent = calls(&s);
        assert_eq!(sent.len(), 1, "{response:?}");
        assert_eq!(
            sent[0].mcp_name.as_deref(),
            Some("=?base64?c2VhcmNoIOS4lueVjA==?=")
        );
        assert_eq!(
            sent[0].mcp_param("Query"),
            Some("=?base64?aGVsbG8K5LiW55WM?=")
        );
        assert_eq!(sent[0].mcp_method.as_deref(), Some("tools/call"));
        assert_eq!(sent[0].session_id, None);
    }
}

/// mcp-protocol.md §4.5's table, value by value, plus nested integer and boolean bindings
/// and an omitted absent argument.
#[test]
fn every_sentinel_case_reaches_the_server_as_the_table_says() {
    let s = FakeServer::start(modern());
    let table = [
        ("us-west1", "us-west1"),
        ("ticket #42", "ticket #42"),
        ("café", "=?base64?Y2Fmw6k=?="),
        ("  eu-west-1", "=?base64?ICBldS13ZXN0LTE=?="),
        ("a\tb", "=?base64?YQli?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="),
        ("", ""),
    ];
    for (plain, header) in table {
        let args = json!({"query": plain, "options": {"limit": 42, "verbose": false}}).to_string();
        let o = Probe::new("header_search").args(&args).check(&s.url());
        assert_functional(&o, 0, "HEALTHY", None);
        let last = calls(&s).pop().expect("one call");
        assert_eq!(last.mcp_name.as_deref(), Some("header_search"));
        assert_eq!(last.mcp_param("Query"), Some(header), "{plain:?}");
        assert_eq!(last.mcp_param("Limit"), Some("42"));
        assert_eq!(last.mcp_param("Verbose"), Some("false"));
        assert_eq!(
            last.mcp_param("Region"),
            None,
            "absent arguments send no header"
        );
    }
    // 2^53 cannot travel in an integer header: refused before the call.
    let o = Probe::new("header_search")
        .args(r#"{"options":{"limit":9007199254740992}}"#)
        .check(&s.url());
    let f = assert_functional(&o, 4, "MISCONFIGURED", None);
    assert!(
        f["evidence"]["argument_violation"]
            .as_str()
            .is_some_and(|v| v.starts_with("argument `options.limit` cannot be sent")),
        "{}",
        o.stdout
    );
    assert_eq!(s.count("tools/call"), table.len());
}

// ---------------------------------------------------------------- never repeated

/// Whatever goes wrong, the call is sent once: the engine never retries functional checks
/// and the transport never re-POSTs.
#[test]
fn a_failed_call_is_never_repeated() {
    let faults = [
        (Action::Status(500), 2),
        // No byte answered the call, whatever the session answered before: UNREACHABLE.
        (Action::HangBeforeHeaders, 3),
        (Action::HangMidBody, 5),
        (Action::Reset, 5),
        // The kept-alive connection reset before any byte, as a stale one would be: any other
        // request goes again on a new connection, the call never.
        (Action::ResetUnanswered, 3),
        (Action::MalformedJson, 2),
    ];
    for (action, exit) in faults {
        let cfg = modern().with_fault(Fault::on("tools/call", action.clone()));
        let s = FakeServer::start(cfg);
        let o = Probe::new("echo")
            .target("retries: 3")
            .target("timeout_ms: 400")
            .check(&s.url());
        assert_eq!(o.code, exit, "{action:?}: {}", o.stdout);
        assert_eq!(s.count("tools/call"), 1, "{action:?}");
        assert!(o.elapsed < Duration::from_secs(5), "{action:?}");
    }
}

// ---------------------------------------------------------------- real servers

/// One real server per era: the Python SDK's `echo` unpinned (modern, `server/discover`)
/// and pinned to a legacy revision (`initialize`).
#[test]
fn real_python_server_echo_in_each_era() {
    for (pin, era) in [
        (None, "modern"),
        (Some("2025-11-25"), "legacy"),
        (Some("2025-03-26"), "legacy"),
    ] {
        let server = Server::start(Kind::PyHttp {
            mode: HttpMode::Json,
            pin,
        });
        let o = Probe::new("echo")
            .args(r#"{"text":"agenthealth functional probe"}"#)
            .expect("text_contains: functional probe")
            .target("timeout_ms: 5000")
            .check(server.url());
        let f = assert_functional(&o, 0, "HEALTHY", None);
        assert_eq!(f["evidence"]["era"], era, "{pin:?}");
        assert_eq!(f["evidence"]["expectations_met"], 1);
        // The SDK's schema requires `text`: arguments without it are refused before a call.
        let o = Probe::new("echo")
            .args("{}")
            .target("timeout_ms: 5000")
            .check(server.url());
        let f = assert_functional(&o, 4, "MISCONFIGURED", None);
        assert_eq!(
            f["evidence"]["argument_violation"],
            "the arguments object lacks a required property of the tool's inputSchema"
        );
    }
}

/// The checks output renders the phrase evidence in the terminal view too.
#[test]
fn terminal_view_shows_the_violation() {
    let s = FakeServer::start(FakeConfig::default());
    let o = Probe::new("memory_core_healthcheck_faulty")
        .args(r#"{"freshObservability":true}"#)
        .run_with(&s.url(), "check", &["--color", "never"], &[]);
    assert_eq!(o.code, 4);
    assert!(
        o.stdout
            .contains("argument_violation=argument `freshObservability` is not declared"),
        "{}",
        o.stdout
    );
}

/// The TypeScript SDKs' `echo` too: v2 stateless (modern only) and v1 with sessions (legacy).
#[test]
fn real_typescript_servers_echo() {
    for (kind, era) in [
        (
            Kind::Ts2 {
                legacy_reject: true,
            },
            "modern",
        ),
        (Kind::Ts1Json, "legacy"),
    ] {
        let server = Server::start(kind);
        let o = Probe::new("echo")
            .args(r#"{"text":"agenthealth functional probe"}"#)
            .expect("text_contains: functional probe")
            .target("timeout_ms: 5000")
            .check(server.url());
        let f = assert_functional(&o, 0, "HEALTHY", None);
        assert_eq!(f["evidence"]["era"], era, "{kind:?}");
        let o = Probe::new("echo")
            .args(r#"{"text":7}"#)
            .target("timeout_ms: 5000")
            .check(server.url());
        let f = assert_functional(&o, 4, "MISCONFIGURED", None);
        assert_eq!(
            f["evidence"]["argument_violation"],
            "argument `text` has a type that the tool's inputSchema does not allow (expected string)"
        );
    }
}
