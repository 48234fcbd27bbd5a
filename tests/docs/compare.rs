//! What a command printed against what its block shows: snapbox's comparison, and the
//! redactions for what differs from run to run.

use std::sync::OnceLock;

use regex::Regex;
use snapbox::Redactions;

/// Keys whose values are measured durations.
const TIMING_KEYS: &[&str] = &[
    "latency_ms",
    "duration_ms",
    "dns_ms",
    "tcp_ms",
    "tls_ms",
    "http_ms",
];

/// What differs from run to run, as snapbox redactions (see the module doc): the port after
/// `127.0.0.1:` (or `%3A`), a login URL's `state` and `code_challenge`, the value of a timing
/// key, and a duration in `ms` or `s` (one placeholder for both units). Numbers are whole: a
/// digit right after a letter, `_` or `.` starts none.
fn redactions() -> &'static Redactions {
    static REDACTIONS: OnceLock<Redactions> = OnceLock::new();
    REDACTIONS.get_or_init(|| {
        let number = r"\d+(?:\.\d+)?";
        let before = r"(?:^|[^A-Za-z0-9_.])";
        let after = r"(?:$|[^A-Za-z0-9_])";
        let patterns = [
            (
                "[PORT]",
                r"127\.0\.0\.1(?::|%3A)(?<redacted>\d+|PORT)".to_string(),
            ),
            (
                "[NONCE]",
                r"(?:^|[?&])(?:state|code_challenge)=(?<redacted>[^&\n ]*)".into(),
            ),
            (
                "[TIMING]",
                format!(
                    r#"\b(?:{})(?:": |: |=)(?<redacted>{number})"#,
                    TIMING_KEYS.join("|")
                ),
            ),
            (
                "[DURATION]",
                format!(r"{before}(?<redacted>{number} ?ms|\d+\.\d+ s){after}"),
            ),
        ];
        let mut redactions = Redactions::new();
        for (placeholder, pattern) in patterns {
            let regex = Regex::new(&pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            redactions
                .insert(placeholder, regex)
                .unwrap_or_else(|e| panic!("{placeholder}: {e}"));
        }
        redactions
    })
}

/// `text` with durations, ports and nonces redacted (see [`redactions`]). The golden outputs
/// of `tests/layout.rs` compare through it too.
pub(crate) fn mask(text: &str) -> String {
    redactions().redact(text)
}

/// Compares what a command printed with what the block shows, through snapbox: the block's
/// own values redacted like the output's, `...` on a line of its own matching any number of
/// lines, `[..]` any text within a line. The difference, when there is one, as a diff.
pub(super) fn compare(expected: &str, got: &str) -> Result<(), String> {
    // Lines compare as lines: a last line without its newline is a line.
    let mut got = got.to_string();
    if !got.is_empty() && !got.ends_with('\n') {
        got.push('\n');
    }
    snapbox::Assert::new()
        .redact_with(redactions().clone())
        .normalize_paths(false)
        .palette(snapbox::report::Palette::plain())
        .try_eq(Some(&"printed"), got.into(), mask(expected).into())
        .map_err(|e| e.to_string())
}

#[test]
fn masks_durations_ports_and_timing_keys() {
    assert_eq!(
        mask(
            "ping (http): HEALTHY  0.45 ms\n  reachability HEALTHY http_status=200 · tcp 0.09ms http 12ms"
        ),
        "ping (http): HEALTHY  [DURATION]\n  reachability HEALTHY http_status=200 · tcp [DURATION] http [DURATION]"
    );
    // Milliseconds and seconds are one mask; whole seconds are not durations of ours.
    assert_eq!(
        mask("latency 0.40 ms · run 5.01 s\n12 targets · 980.00 ms\nolder than 300 s, 1.5 steps"),
        "latency [DURATION] · run [DURATION]\n12 targets · [DURATION]\nolder than 300 s, 1.5 steps"
    );
    assert_eq!(mask("\"duration_ms\": 12.5,"), "\"duration_ms\": [TIMING],");
    assert_eq!(
        mask(
            "\"latency_ms\": 1.234,\n  tcp_ms: 0.065\nlatency_ms=3 deadline_ms=300 x_latency_ms: 4"
        ),
        "\"latency_ms\": [TIMING],\n  tcp_ms: [TIMING]\nlatency_ms=[TIMING] deadline_ms=300 x_latency_ms: 4"
    );
    assert_eq!(
        mask("at 127.0.0.1:45123/mcp, 2026-07-28, msg 5 msgs, v1.5 ms"),
        "at 127.0.0.1:[PORT]/mcp, 2026-07-28, msg 5 msgs, v1.5 ms"
    );
    assert_eq!(mask("\"latency_ms\": null"), "\"latency_ms\": null");
    // A document's `127.0.0.1:PORT` and a login URL's random values, as shown or as printed.
    assert_eq!(
        mask("http://127.0.0.1:PORT/a?state=Xy_1&code_challenge=…&x=1 127.0.0.1%3A80"),
        mask("http://127.0.0.1:4242/a?state=…&code_challenge=abc-9&x=1 127.0.0.1%3A8080")
    );
}

#[test]
fn ellipsis_lines_match_any_number_of_lines() {
    assert!(compare("a\n...\nd\n", "a\nb\nc\nd\n").is_ok());
    assert!(compare("a\n...\nd\n", "a\nd\n").is_ok());
    assert!(compare("a\n...\nd\n", "a\nb\n").is_err());
    assert!(compare("a\nb\n", "a\nb\nc\n").is_err());
    // Within a line, `[..]` is any text; durations are redacted on both sides.
    assert!(compare("took [..] in all\n", "took 3 tries in all\n").is_ok());
    assert!(compare("run 0.98 s\n", "run 1.02 s").is_ok());
    assert!(compare("run 0.98 s\n", "run 1.02 s\nmore\n").is_err());
}
