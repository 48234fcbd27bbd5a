//! Era selection over stdio: discovery first, the fallback to the legacy handshake and when
//! it is never taken, pins, and the cold start inside the first deadline.

use crate::interop::{LEGACY_REVISIONS, MODERN_REVISION};

use super::harness::{HEALTHY, SILENT, Spec, evidence, expect, ms, wrong};

#[test]
fn a_modern_answer_keeps_the_modern_era() {
    let (case, v) = expect(
        "modern",
        &Spec::fake(&["--era", "modern"]),
        HEALTHY,
        ms(4 * 5_000),
    );
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
    assert_eq!(
        evidence(&v, "protocol", "negotiated_version"),
        MODERN_REVISION
    );
    assert!(evidence(&v, "protocol", "fallback").is_null());
    let log = case.logged();
    assert!(!log.iter().any(|m| m == "initialize"), "{log:?}");
    assert_eq!(log.iter().filter(|m| *m == "server/discover").count(), 1);
}

#[test]
fn an_unrecognised_rpc_error_falls_back_to_legacy() {
    for code in ["-32601", "-32602", "-32000", "-32600"] {
        let spec = Spec::fake(&["--era", "legacy", "--discover-error", code]);
        let (case, v) = expect(&format!("fallback{code}"), &spec, HEALTHY, ms(4 * 5_000));
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{code}");
        assert_eq!(evidence(&v, "protocol", "fallback"), true);
        assert_eq!(
            evidence(&v, "protocol", "discover_rpc_code").to_string(),
            code
        );
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), "2025-11-25");
        assert_eq!(
            &case.logged()[..3],
            ["server/discover", "initialize", "notifications/initialized"],
            "one handshake for the whole run"
        );
    }
}

#[test]
fn a_modern_error_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy", "--discover-error", "-32022"]);
    let (case, v) = expect("modern-error", &spec, wrong("mcp_version"), ms(5_000));
    assert_eq!(evidence(&v, "reachability", "rpc_code"), -32022);
    assert!(!case.logged().iter().any(|m| m == "initialize"));
}

/// A server that ignores methods it does not know (older SDK releases) never answers
/// `server/discover`: no fallback (a timeout never triggers one), but the evidence says the
/// process was running and wrote nothing, and doctor says to pin a legacy revision; pinned,
/// the same server is healthy.
#[test]
fn a_server_silent_on_discover_is_named_and_the_pin_advised() {
    let spec = Spec::fake(&["--era", "legacy", "--silent-on", "server/discover"]).timeout(300);
    let (case, v) = expect("silent-discover", &spec, SILENT, ms(300));
    assert_eq!(
        evidence(&v, "reachability", "failed_method"),
        "server/discover"
    );
    assert_eq!(evidence(&v, "reachability", "process_running"), true);
    assert_eq!(evidence(&v, "reachability", "stdout_bytes"), 0);
    assert_eq!(case.logged(), ["server/discover"]);
    let o = case.doctor(&spec);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "- reachability: the server process was running and wrote nothing in answer to \
             server/discover within 300 ms; servers that ignore methods they do not know (older \
             SDK releases) never answer it: pin a legacy revision with mcp.protocol_version: \
             '2025-11-25'; if it was still starting, raise timeout_ms"
        ),
        "{}",
        o.stdout
    );
    let pinned = spec.pin("2025-11-25").timeout(5_000);
    let (_, v) = expect("silent-discover-pinned", &pinned, HEALTHY, ms(5_000));
    assert_eq!(evidence(&v, "protocol", "era"), "legacy");
}

/// Over stdio too, a discover result with no versions at all (`{}`) falls back to
/// `initialize`, saying why.
#[test]
fn a_discover_result_without_versions_falls_back() {
    let spec = Spec::fake(&["--era", "legacy", "--discover-result", "{}"]);
    let (case, v) = expect("discover-empty", &spec, HEALTHY, ms(4 * 5_000));
    assert_eq!(evidence(&v, "protocol", "era"), "legacy");
    assert_eq!(evidence(&v, "protocol", "fallback"), true);
    assert_eq!(evidence(&v, "protocol", "discover_result"), "no_versions");
    assert!(evidence(&v, "protocol", "discover_http_status").is_null());
    assert_eq!(&case.logged()[..2], ["server/discover", "initialize"]);
}

#[test]
fn a_discovery_timeout_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy", "--discover-hang"]).timeout(600);
    let (case, _) = expect("discover-timeout", &spec, SILENT, ms(600));
    assert_eq!(case.logged(), ["server/discover"]);
}

/// Discovery's deadline includes the cold start: the process starts inside the first
/// attempt, so a server that needs longer than the deadline to start is UNREACHABLE at that
/// deadline (never later, and never a downgrade); one that starts within it is HEALTHY, and
/// `latency_ms` (reachability) counts its start-up.
#[test]
fn the_deadline_includes_the_cold_start() {
    let late = Spec::fake(&["--startup-delay-ms", "3000"]).timeout(500);
    let (case, _) = expect("cold-start-late", &late, SILENT, ms(500));
    assert!(case.logged().is_empty(), "{:?}", case.logged());
    let slow = Spec::fake(&["--startup-delay-ms", "400"]).timeout(2_000);
    let (_, v) = expect(
        "cold-start",
        &slow,
        HEALTHY.on("reachability"),
        ms(4 * 2_000),
    );
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
    let latency = v["latency_ms"].as_f64().unwrap_or_default();
    assert!(
        latency >= 400.0,
        "latency_ms {latency} excludes the start-up"
    );
}

/// 700 ms before every reply, the default 5 s deadline (upstream §17 J60).
#[test]
fn a_slow_modern_server_is_not_downgraded() {
    let spec = Spec::fake(&["--era", "both", "--delay-ms", "700"]);
    let (_, v) = expect("slow-modern", &spec, HEALTHY, ms(4 * 5_000));
    assert_eq!(evidence(&v, "protocol", "era"), "modern");
}

/// A server that never answers discovery is healthy when pinned (upstream §17 J62).
#[test]
fn a_legacy_pin_skips_discovery() {
    for pin in LEGACY_REVISIONS {
        let spec = Spec::fake(&["--discover-hang"]).pin(pin);
        let (case, v) = expect(&format!("pin-{pin}"), &spec, HEALTHY, ms(4 * 5_000));
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
        assert!(evidence(&v, "protocol", "fallback").is_null());
        assert!(!case.logged().iter().any(|m| m == "server/discover"));
    }
}

#[test]
fn a_modern_pin_never_falls_back() {
    let spec = Spec::fake(&["--era", "legacy"]).pin(MODERN_REVISION);
    let (case, v) = expect("pin-modern", &spec, wrong("mcp_rpc"), ms(5_000));
    assert_eq!(evidence(&v, "reachability", "rpc_code"), -32601);
    assert!(!case.logged().iter().any(|m| m == "initialize"));
}

#[test]
fn a_legacy_pin_the_server_does_not_speak_is_a_version_mismatch() {
    let spec = Spec::fake(&["--era", "legacy", "--versions", "2025-11-25"]).pin("2025-03-26");
    expect("pin-mismatch", &spec, wrong("mcp_version"), ms(5_000));
}
