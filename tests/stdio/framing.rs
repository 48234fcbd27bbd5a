//! The line framing and its limits: what a child writes on stdout that is not one whole
//! JSON-RPC answer to the request sent, server requests inside an exchange, and what goes
//! out on one line.

use agenthealth_testkit::fixtures::fixture;

use super::harness::{Case, HEALTHY, Spec, check, evidence, expect, ms, unknown, within, wrong};

#[test]
fn a_partial_line_then_silence_is_unknown_at_the_deadline() {
    let spec = Spec::python("partial.py", &[]).timeout(500);
    let (_, v) = expect("partial", &spec, unknown(None), ms(500));
    assert_eq!(check(&v, "reachability")["message"], "incomplete response");
}

#[test]
fn an_unterminated_ten_mib_line_is_unknown_limit() {
    let spec = Spec::python("long_line.py", &[]).timeout(5_000);
    let (_, v) = expect("long-line", &spec, unknown(Some("mcp_limit")), ms(5_000));
    assert_eq!(evidence(&v, "reachability", "limit"), "line over 1 MiB");
}

/// At most 1 MiB of lines, notifications included, may arrive while waiting for one
/// response: 15 notification lines of 64 KiB before each answer pass, 16 (exactly 1 MiB,
/// and then the answer) are UNKNOWN `mcp_limit` — though no single line is too long.
#[test]
fn more_than_one_mib_of_notifications_before_a_response_is_unknown_limit() {
    let under = Spec::fake(&["--notify-kib", "960"]);
    expect(
        "notify-960k",
        &under,
        HEALTHY.on("capability"),
        ms(4 * 5_000),
    );
    let over = Spec::fake(&["--notify-kib", "1024"]);
    let (_, v) = expect("notify-1m", &over, unknown(Some("mcp_limit")), ms(5_000));
    assert_eq!(
        evidence(&v, "reachability", "limit"),
        "output over 1 MiB before the response"
    );
}

/// Answers the framing cannot take are UNHEALTHY `mcp_protocol`, the evidence saying what
/// broke: output ending part-way through a line (not an exit before answering), an answer
/// to another id, text before the JSON, a server request during a stateless exchange.
#[test]
fn broken_answers_are_unhealthy_with_what_broke() {
    let modern_request = Spec::fake(&["--era", "modern", "--server-request"]).timeout(2_000);
    for (name, spec, broke) in [
        (
            "half-answer",
            Spec::command(&fixture("half_answer.sh")),
            "output ended without a response",
        ),
        (
            "wrong-id",
            Spec::fake(&["--wrong-id"]),
            "response id does not match",
        ),
        (
            "banner-fake",
            Spec::fake(&["--banner"]),
            "non-json line on stdout",
        ),
        (
            "banner",
            Spec::python("banner.py", &[]),
            "non-json line on stdout",
        ),
        (
            "server-request-modern",
            modern_request,
            "server request on a stateless exchange",
        ),
    ] {
        let (_, v) = expect(name, &spec, wrong("mcp_protocol"), ms(spec.timeout_ms));
        assert_eq!(
            evidence(&v, "reachability", "protocol_error"),
            broke,
            "{name}"
        );
    }
}

#[test]
fn server_requests_are_answered_in_a_legacy_session() {
    let spec = Spec::fake(&["--era", "legacy", "--server-request"]);
    let (case, _) = expect("server-request", &spec, HEALTHY, ms(5_000));
    assert!(
        case.logged().contains(&"answers ok".to_string()),
        "ping answered with {{}} and sampling with -32601: {:?}",
        case.logged()
    );
}

/// `arguments_json` written over several lines (a YAML block scalar, pretty JSON) still goes
/// out as one line of the stdio framing: its line breaks become spaces, and nothing else
/// changes — integers beyond 64 bits keep their digits. Neither the tool's output nor a
/// mapped value reaches the output.
#[test]
fn multi_line_arguments_are_sent_on_one_line_byte_for_byte_otherwise() {
    let args = "{\n  \"text\": \"stdio-tool-output-4711\",\n  \"big\": 123456789012345678901234567890\n}\n";
    let expect = ["text_contains: stdio-tool-output"];
    let mut spec = Spec::fake(&["--era", "both"]).call("echo", Some(args), &expect);
    spec.env.push(("CHILD_TOKEN", "HOST_TOKEN"));
    let case = Case::new("multi-line");
    let o = case.check(&spec, &[("HOST_TOKEN", "canary-multi-line-42")]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let v = o.json();
    assert_eq!(check(&v, "functional")["status"], "HEALTHY");
    assert_eq!(evidence(&v, "functional", "expectations_met"), 1);
    let calls = case.calls();
    assert_eq!(calls.len(), 1);
    let sent = format!(r#""arguments":{}"#, args.replace('\n', " "));
    assert!(calls[0].contains(&sent), "{}\nwant {sent}", calls[0]);
    for secret in ["stdio-tool-output-4711", "canary-multi-line-42"] {
        let leaked = o.stdout.contains(secret) || o.stderr.contains(secret);
        assert!(!leaked, "{secret}");
    }
    within("multi-line", &o, ms(4 * 5_000));
    case.assert_nothing_left();
}
