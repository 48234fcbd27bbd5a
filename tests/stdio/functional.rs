//! Tool calls over stdio: the Memory Core fault caught in both eras, and a call that is sent
//! once whatever happens to it.

use serde_json::Value;

use super::harness::{Case, Spec, Want, check, evidence, expect, ms, within};

const DIAGNOSTIC_ARGS: &str = r#"{"freshObservability":true,"chromaProbeTimeoutMs":2500,"embeddingWriteCanaryTimeoutMs":15000}"#;

/// The fake server's stale `observed_at` (tests/fixtures/stdio/fake_server.py).
const STALE_OBSERVED_AT: &str = "2020-01-01T00:00:00Z";

/// Runs `spec` and asserts the exit code and the functional check's status and code (none
/// when `code` is `None`).
fn expect_functional(
    spec: &Spec,
    exit: i32,
    status: &'static str,
    code: Option<&'static str>,
) -> (Case, Value) {
    let want = Want {
        exit,
        dim: "functional",
        status,
        code,
    };
    let (case, v) = expect("functional", spec, want, ms(4 * 5_000));
    let got = check(&v, "functional");
    assert_eq!(got["code"].as_str(), code, "{got}");
    (case, v)
}

/// The methods of the fake server's log that tell which exchanges one process served.
fn exchanges(case: &Case) -> Vec<String> {
    let wanted = [
        "server/discover",
        "initialize",
        "tools/list",
        "tools/call",
        "eof",
    ];
    case.logged()
        .into_iter()
        .filter(|m| wanted.contains(&m.as_str()))
        .collect()
}

/// The Memory Core fault (../shared/spec/memory-core-healthcheck.md) over stdio, in both
/// eras: the deployed tool is refused before any call; called with `{}` its cached payload
/// fails `fresh_within_s`; the fixed tool is HEALTHY. Discovery, listing and the call share
/// one process, and the call carries the operator's bytes.
#[test]
fn memory_core_healthcheck_fault_is_caught_over_stdio() {
    let expect = [
        "json: {/status: healthy}",
        "fresh_within_s: {/observed_at: 300}",
    ];
    for era in ["both", "legacy"] {
        let fake = || Spec::fake(&["--era", era, "--memory-core"]);
        let faulty = fake().call(
            "memory_core_healthcheck_faulty",
            Some(DIAGNOSTIC_ARGS),
            &expect,
        );
        let (case, v) = expect_functional(&faulty, 4, "MISCONFIGURED", None);
        assert_eq!(
            evidence(&v, "functional", "argument_violation"),
            "argument `chromaProbeTimeoutMs` is not declared by the tool's inputSchema, \
             which forbids additional properties",
            "{era}"
        );
        assert!(case.calls().is_empty(), "{era}: refused before any call");

        let stale = fake().call("memory_core_healthcheck_faulty", Some("{}"), &expect);
        let (case, v) = expect_functional(&stale, 2, "UNHEALTHY", Some("mcp_functional"));
        assert_eq!(evidence(&v, "functional", "expect_kind"), "fresh_within_s");
        assert_eq!(evidence(&v, "functional", "expect_pointer"), "/observed_at");
        assert_eq!(evidence(&v, "functional", "expected"), "300");
        assert_eq!(evidence(&v, "functional", "expect_failure"), "stale");
        assert!(
            !v.to_string().contains(STALE_OBSERVED_AT),
            "never the server's value"
        );
        let calls = case.calls();
        assert_eq!(calls.len(), 1, "{era}");
        assert!(calls[0].contains(r#""arguments":{}"#), "{}", calls[0]);

        let fixed_expect = [
            "json: {/status: healthy, /cached: false, /options/chromaProbeTimeoutMs: 2500}",
            "fresh_within_s: {/observed_at: 300}",
        ];
        let fixed = fake().call(
            "memory_core_healthcheck_fixed",
            Some(DIAGNOSTIC_ARGS),
            &fixed_expect,
        );
        let (case, v) = expect_functional(&fixed, 0, "HEALTHY", None);
        assert_eq!(evidence(&v, "functional", "expectations_met"), 4, "{era}");
        let calls = case.calls();
        assert_eq!(calls.len(), 1);
        let sent = format!(r#""arguments":{DIAGNOSTIC_ARGS}"#);
        assert!(calls[0].contains(&sent), "{}", calls[0]);
        // One process served discovery, the listings and the call, then saw its input end.
        assert_eq!(case.pids().len(), 1, "{era}");
        let expected: &[&str] = if era == "legacy" {
            &[
                "server/discover",
                "initialize",
                "tools/list",
                "tools/call",
                "eof",
            ]
        } else {
            &["server/discover", "tools/list", "tools/call", "eof"]
        };
        assert_eq!(exchanges(&case), expected, "{era}");
    }
}

/// The call is sent once, whatever happens to it: the process dies on it (UNREACHABLE with
/// its exit status) or never answers (UNREACHABLE at the deadline: no byte answered the
/// call, whatever the session answered before), even with `retries: 3`. The process group is
/// gone afterwards, and doctor says what happened to the call, not to a response stream.
#[test]
fn a_functional_call_over_stdio_is_never_repeated() {
    for (fault, says) in [
        (
            "--exit-on",
            "the server process exited with status 4 before answering",
        ),
        (
            "--silent-on",
            "the tool call did not complete before the deadline, and a functional call is never retried",
        ),
    ] {
        let spec = Spec::fake(&[fault, "tools/call"])
            .call("echo", Some(r#"{"text":"x"}"#), &[])
            .target("retries: 3")
            .timeout(800);
        let case = Case::new("call-once");
        let o = case.check(&spec, &[]);
        assert_eq!(o.code, 3, "{fault}: {}", o.stdout);
        let v = o.json();
        assert_eq!(
            check(&v, "functional")["status"],
            "UNREACHABLE",
            "{fault}: {}",
            o.stdout
        );
        if fault == "--exit-on" {
            assert_eq!(check(&v, "functional")["code"], "mcp_process");
            assert_eq!(evidence(&v, "functional", "exit_code"), 4);
        }
        assert_eq!(case.calls().len(), 1, "{fault}: {:?}", case.logged());
        assert_eq!(
            case.pids().len(),
            1,
            "{fault}: one process, no restart for the call"
        );
        within(fault, &o, ms(4 * 800));
        case.assert_nothing_left();
        let o = case.doctor(&spec);
        assert!(
            o.stdout.contains(&format!("  - functional: {says}")),
            "{}",
            o.stdout
        );
        case.assert_nothing_left();
    }
}
