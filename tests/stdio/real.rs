//! The real stdio servers `.ci/interop-setup` installs: eras, fallbacks, pins and tool calls
//! against the SDKs' and the reference servers' own code.

use serde_json::Value;

use crate::interop::{LEGACY_REVISIONS, MODERN_REVISION, StdioKind, StdioServer};
use crate::util::Outcome;

use super::harness::{Case, Spec, check, evidence, ms, within};

/// Runs a real server through a config file with `transport: stdio`; asserts that every
/// passive check is HEALTHY.
fn real(kind: StdioKind) -> (Case, Value) {
    real_pinned(kind, None)
}

/// [`real`] with agenthealth pinned to `pin`.
fn real_pinned(kind: StdioKind, pin: Option<&'static str>) -> (Case, Value) {
    let (case, o) = real_run(kind, |spec| pinned(spec, pin));
    assert_eq!(o.code, 0, "{kind:?} pin {pin:?}: {}", o.stdout);
    let v = o.json();
    for dim in ["reachability", "authentication", "protocol", "capability"] {
        assert_eq!(
            check(&v, dim)["status"],
            "HEALTHY",
            "{kind:?} {dim}: {}",
            o.stdout
        );
    }
    eprintln!(
        "[stdio] {kind:?}: {:?}, latency {} ms, era {}, negotiated {}, fallback {}, tools {}",
        o.elapsed,
        v["latency_ms"],
        evidence(&v, "protocol", "era"),
        evidence(&v, "protocol", "negotiated_version"),
        evidence(&v, "protocol", "fallback"),
        evidence(&v, "capability", "tools_count"),
    );
    (case, v)
}

fn pinned(spec: Spec, pin: Option<&'static str>) -> Spec {
    match pin {
        Some(pin) => spec.pin(pin),
        None => spec,
    }
}

/// Runs a real server through a config file with `transport: stdio`, a 10 s timeout and
/// whatever `tweak` adds; asserts the time bound and that nothing is left behind.
fn real_run(kind: StdioKind, tweak: impl FnOnce(Spec) -> Spec) -> (Case, Outcome) {
    let server = StdioServer::prepare(kind);
    let case = Case::new("interop");
    let argv: Vec<String> = server
        .argv()
        .iter()
        .map(|a| a.to_str().expect("utf-8 path").to_string())
        .collect();
    let (command, args) = argv.split_first().expect("a command");
    let spec = tweak(Spec {
        command: command.clone(),
        args: args.to_vec(),
        ..Spec::fake(&[]).timeout(10_000)
    });
    let o = case.check(&spec, &[]);
    within(&format!("{kind:?}"), &o, ms(4 * 10_000));
    case.assert_nothing_left();
    drop(server);
    (case, o)
}

#[test]
fn real_dual_era_servers_stay_modern() {
    for kind in [
        StdioKind::Time,
        StdioKind::Py { pin: None },
        StdioKind::Ts2 {
            legacy_reject: false,
        },
        StdioKind::Ts2 {
            legacy_reject: true,
        },
    ] {
        let (_, v) = real(kind);
        assert_eq!(evidence(&v, "protocol", "era"), "modern", "{kind:?}");
        assert!(evidence(&v, "protocol", "fallback").is_null(), "{kind:?}");
    }
}

#[test]
fn real_handshake_only_servers_fall_back_to_legacy() {
    for kind in [
        StdioKind::Filesystem,
        StdioKind::Memory,
        StdioKind::Everything,
    ] {
        let (_, v) = real(kind);
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{kind:?}");
        assert_eq!(evidence(&v, "protocol", "fallback"), true, "{kind:?}");
        assert_eq!(evidence(&v, "protocol", "discover_rpc_code"), -32601);
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), "2025-11-25");
    }
}

/// server-everything sends notifications/tools/list_changed after `initialized`, ahead of
/// the tools/list response; it registers its 13th tool only after `initialized`.
#[test]
fn real_everything_server_interleaves_a_notification_and_lists_every_tool() {
    let (_, v) = real(StdioKind::Everything);
    assert_eq!(evidence(&v, "capability", "tools_count"), 13);
}

/// Issue 5's servers with agenthealth pinned: the dual-era ones to 2026-07-28 and to the
/// legacy offer, the handshake-only ones to the legacy offer. A pin sends no discovery and
/// never falls back.
#[test]
fn real_servers_pinned_are_healthy() {
    let legacy = "2025-11-25";
    for (kind, pin) in [
        (StdioKind::Time, MODERN_REVISION),
        (StdioKind::Time, legacy),
        (
            StdioKind::Ts2 {
                legacy_reject: true,
            },
            MODERN_REVISION,
        ),
        (StdioKind::Filesystem, legacy),
        (StdioKind::Memory, legacy),
        (StdioKind::Everything, legacy),
    ] {
        let (_, v) = real_pinned(kind, Some(pin));
        let era = if pin == MODERN_REVISION {
            "modern"
        } else {
            "legacy"
        };
        assert_eq!(evidence(&v, "protocol", "era"), era, "{kind:?} {pin}");
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
        assert!(
            evidence(&v, "protocol", "fallback").is_null(),
            "{kind:?} {pin}"
        );
    }
}

/// Issue 6's real server for stdio, in each era: `get_current_time` on `mcp-server-time`,
/// unpinned (2026-07-28) and pinned to 2025-11-25 — its `outputSchema` checked, the
/// expectations met; and, one per era, a timezone it does not know is its `isError: true`
/// (UNHEALTHY, its error text never printed), arguments its schema refuses are never sent.
#[test]
fn real_time_server_functional_in_each_era() {
    const EXPECT: &[&str] = &[
        "json: {/timezone: Europe/Berlin}",
        "fresh_within_s: {/datetime: 300}",
    ];
    let time_call = |pin, arguments: &'static str, expect: &'static [&'static str]| {
        real_run(StdioKind::Time, move |spec| {
            pinned(spec, pin).call("get_current_time", Some(arguments), expect)
        })
        .1
    };
    for (pin, era) in [(None, "modern"), (Some("2025-11-25"), "legacy")] {
        let o = time_call(pin, r#"{"timezone":"Europe/Berlin"}"#, EXPECT);
        assert_eq!(o.code, 0, "{era}: {}", o.stdout);
        let v = o.json();
        let f = check(&v, "functional");
        assert_eq!(f["status"], "HEALTHY", "{era}: {f}");
        assert_eq!(f["evidence"]["era"], era);
        assert_eq!(f["evidence"]["output_schema_checked"], true);
        assert_eq!(f["evidence"]["expectations_met"], 2);

        // One failure per era, to keep the server starts few.
        if era == "modern" {
            let o = time_call(pin, r#"{"timezone":"Mars/Olympus_Mons"}"#, &[]);
            assert_eq!(o.code, 2, "{era}: {}", o.stdout);
            let f = check(&o.json(), "functional").clone();
            assert_eq!(f["code"], "mcp_functional", "{era}: {f}");
            assert_eq!(f["evidence"]["is_error"], true);
            let printed =
                o.stdout.contains("No time zone") || o.stdout.contains("Invalid timezone");
            assert!(
                !printed,
                "the tool's error text is never printed: {}",
                o.stdout
            );
        } else {
            let o = time_call(pin, r#"{"timezone":7}"#, &[]);
            assert_eq!(o.code, 4, "{era}: {}", o.stdout);
            assert_eq!(
                evidence(&o.json(), "functional", "argument_violation"),
                "argument `timezone` has a type that the tool's inputSchema does not allow \
                 (expected string)"
            );
        }
    }
}

/// Unpinned here: the pinned server rejects discovery (-32601) and we fall back.
#[test]
fn real_python_server_pinned_to_each_revision() {
    for rev in LEGACY_REVISIONS {
        let (_, v) = real(StdioKind::Py { pin: Some(rev) });
        assert_eq!(evidence(&v, "protocol", "era"), "legacy", "{rev}");
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), rev);
    }
}

#[test]
fn real_python_server_with_agenthealth_pinned_to_each_revision() {
    for pin in LEGACY_REVISIONS.into_iter().chain([MODERN_REVISION]) {
        let (_, o) = real_run(StdioKind::Py { pin: None }, |spec| spec.pin(pin));
        assert_eq!(o.code, 0, "{pin}: {}", o.stdout);
        let v = o.json();
        assert_eq!(evidence(&v, "protocol", "negotiated_version"), pin);
    }
}
