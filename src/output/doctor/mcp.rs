//! Advice for the MCP adapter's verdicts: rejected requests, versions and eras, malformed
//! answers, limits, requirements and functional checks.

use super::{Audience, Setting, int, rejected_credential, word, yes};
use crate::contract::Dimension;
use crate::contract::Revision;
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{Malformed, McpFailure};

pub(super) fn advice(
    failure: McpFailure,
    dim: Dimension,
    check: &Check,
    audience: Audience,
) -> Option<String> {
    Some(match failure {
        McpFailure::AuthRejected => rejected_credential(check, audience),
        McpFailure::Required => return required(check),
        McpFailure::Unsafe => {
            let tool = word(check, Key::Tool).unwrap_or_else(|| "the functional tool".into());
            let why = word(check, Key::UnsafeAnnotation).unwrap_or_default();
            format!(
                "tool `{tool}` must declare readOnlyHint: true and destructiveHint: false ({why}); \
                 agenthealth calls no other tool"
            )
        }
        McpFailure::ToolError => {
            "the tool returned isError: true; call it by hand with the same arguments to see why"
                .into()
        }
        McpFailure::Expectation => return expectation(check),
        McpFailure::ArgumentsRejected => {
            let violation = word(check, Key::ArgumentViolation).unwrap_or_default();
            format!(
                "the tool would not accept mcp.functional.arguments_json, so it was not called: {violation}"
            )
        }
        McpFailure::Input => "the server asked for input or a client capability a health check never provides; the result is inconclusive".into(),
        McpFailure::Malformed(_) if dim == Dimension::Functional => match word(check, Key::OutputViolation) {
            Some(v) => format!("the tool's result breaks its own outputSchema: {v}"),
            None => "the tool's result breaks the MCP result rules (content blocks, isError, structuredContent)".into(),
        },
        McpFailure::Malformed(why) => malformed(why, check, audience),
        McpFailure::Version | McpFailure::VersionRefused => version(failure, check, audience),
        McpFailure::HttpStatus | McpFailure::Rpc => {
            if let Some(advice) = session_or_pin(check) {
                return Some(advice);
            }
            if failure == McpFailure::Rpc {
                return Some(rpc(check));
            }
            if let Some(status @ 300..=399) = int(check, Key::HttpStatus) {
                return Some(super::redirect(status, check, audience));
            }
            let s = int(check, Key::HttpStatus)
                .map_or("an unexpected status".to_string(), |c| format!("HTTP {c}"));
            format!(
                "the MCP endpoint answered {s}{}; check that the URL is the server's MCP endpoint (no /mcp is appended)",
                on_method(check)
            )
        }
        McpFailure::OAuth(step) => super::oauth::advice(step, check),
        McpFailure::LoginRequired => super::oauth::login_required(),
        McpFailure::LoginExpired => super::oauth::login_expired(),
        McpFailure::Limit(_) => {
            let what = word(check, Key::Limit).map_or(String::new(), |w| format!(" ({w})"));
            format!(
                "the server's answer{} exceeds a safety limit{what}: 1 MiB per response, 100 pages and 10,000 entries per inventory",
                to_method(check)
            )
        }
    })
}

/// `" on <method>"` when the evidence names the MCP method that failed.
pub(super) fn on_method(check: &Check) -> String {
    word(check, Key::FailedMethod).map_or(String::new(), |m| format!(" on {m}"))
}

/// `" to <method>"`, for "the server's answer to …".
fn to_method(check: &Check) -> String {
    word(check, Key::FailedMethod).map_or(String::new(), |m| format!(" to {m}"))
}

/// Which required names were not advertised or were excluded.
fn required(check: &Check) -> Option<String> {
    let mut parts = Vec::new();
    for (key, what) in [
        (Key::MissingTools, "tool"),
        (Key::MissingResources, "resource"),
        (Key::MissingPrompts, "prompt"),
    ] {
        if let Some(names) = word(check, key) {
            parts.push(format!("{what} `{names}` not advertised"));
        }
    }
    if let Some(names) = word(check, Key::ExcludedTools) {
        parts.push(format!(
            "tool `{names}` excluded for invalid x-mcp-header annotations"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The first failed expectation, as configured, and why it failed.
fn expectation(check: &Check) -> Option<String> {
    let kind = word(check, Key::ExpectKind)?;
    let at = word(check, Key::ExpectPointer).map_or(String::new(), |p| format!(" `{p}`"));
    let expected = word(check, Key::Expected).unwrap_or_default();
    let why = match word(check, Key::ExpectFailure).as_deref() {
        Some("stale") => format!("the timestamp there is older than {expected} s"),
        Some("not_a_timestamp") => "the value there is not an RFC 3339 timestamp".into(),
        Some("missing") => "the result has nothing there".into(),
        Some("no_json_document") => {
            "the result has no structuredContent and its first text block is not JSON".into()
        }
        Some("differs") => format!("the value there is not {expected}"),
        Some("not_found") => format!("no text block contains {expected:?}"),
        _ => "see the evidence".into(),
    };
    Some(format!("expectation {kind}{at} failed: {why}"))
}

/// A protocol violation, in words that say whose bug it is.
fn malformed(why: Malformed, check: &Check, audience: Audience) -> String {
    let unpinned = word(check, Key::PinnedVersion).is_none();
    let discover = word(check, Key::FailedMethod).as_deref() == Some("server/discover");
    match why {
        // A 200 that is not a discover result: a legacy server answering any method with some
        // result (an empty one, often). No error to fall back on, so only a pin helps.
        Malformed::Result(_) if discover && unpinned => format!(
            "server/discover was answered with a result that is not a discover result ({}), as some legacy servers answer any method; pin the server's legacy revision (e.g. '{}') with {}, so agenthealth skips discovery",
            why.as_word(),
            Revision::V2025_06_18.as_str(),
            audience.name(Setting::ProtocolVersion)
        ),
        Malformed::NonJsonLine => "the server wrote text that is not JSON-RPC (a banner or log line) to stdout; stdio servers must log to stderr".into(),
        Malformed::IdMismatch => "the server answered with an id that does not match the request it was sent; that is a bug in the server".into(),
        Malformed::StatelessServerRequest => format!("the server sent a request of its own during a {MODERN} exchange, which that revision does not allow (it asks for input with input_required results); that is a bug in the server"),
        Malformed::OutputEnded => "the server process's output ended part-way through an answer; run the configured command by hand to see why".into(),
        other => format!(
            "the server's answer{} is not valid MCP/JSON-RPC ({}); check that the endpoint (the URL, or the stdio command) is an MCP server",
            to_method(check),
            other.as_word()
        ),
    }
}

/// How the MCP session's era was chosen, from the establishment evidence: the pin, or what
/// discovery met and the fallback, then the revision negotiated. E.g. "discover got HTTP 400
/// -32000; fell back to initialize; negotiated 2025-11-25".
fn era_story(check: &Check) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(pin) = word(check, Key::PinnedVersion) {
        parts.push(format!(
            "mcp.protocol_version pins {pin}, so there is no fallback between eras"
        ));
    }
    if yes(check, Key::Fallback) {
        let status =
            int(check, Key::DiscoverHttpStatus).map_or(String::new(), |s| format!(" HTTP {s}"));
        let code = int(check, Key::DiscoverRpcCode).map_or(String::new(), |c| format!(" {c}"));
        parts.push(format!(
            "discover got{status}{code}; fell back to initialize"
        ));
    }
    if let Some(v) = word(check, Key::NegotiatedVersion) {
        parts.push(format!("negotiated {v}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The modern revision's spelling, as advice names it.
const MODERN: &str = Revision::MODERN.as_str();

/// `2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28`.
fn supported() -> String {
    match Revision::SPELLINGS.split_last() {
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `story; rest`, or `rest` alone.
fn after_story(check: &Check, rest: &str) -> String {
    match era_story(check) {
        Some(story) => format!("{story}; {rest}"),
        None => rest.to_string(),
    }
}

/// A version failure: which era was tried, why, what the server speaks and what to pin.
fn version(failure: McpFailure, check: &Check, audience: Audience) -> String {
    let pin_key = audience.name(Setting::ProtocolVersion);
    let pin = word(check, Key::PinnedVersion);
    // A revision by the grammar (our evidence never holds other text), supported or not.
    let answered = word(check, Key::ServerVersion);
    let supports = |v: &str| Revision::SPELLINGS.contains(&v);
    let discover = word(check, Key::FailedMethod).as_deref() == Some("server/discover");
    let refused = failure == McpFailure::VersionRefused;
    let oldest = Revision::SPELLINGS.first().copied().unwrap_or_default();
    let newest = Revision::SPELLINGS.last().copied().unwrap_or_default();
    let rest = match (pin, answered) {
        // Revisions are dates: they compare as text.
        (_, Some(v)) if !supports(&v) && v.as_str() < oldest => format!(
            "the server speaks {v}; agenthealth supports {}: the server (or its SDK) needs a newer revision",
            supported()
        ),
        (_, Some(v)) if !supports(&v) && v.as_str() > newest => format!(
            "the server speaks {v}, newer than agenthealth supports ({}); pin one of those the server also serves with {pin_key}, or upgrade agenthealth",
            supported()
        ),
        (_, Some(v)) if !supports(&v) => format!(
            "the server speaks {v}; agenthealth supports {}: pin one of those the server also serves with {pin_key}",
            supported()
        ),
        (Some(_), Some(v)) => format!("the server speaks {v}: pin {v} or remove the pin"),
        (Some(_), None) if refused => {
            "the server refused that revision (-32022 unsupported protocol version); remove the pin to let agenthealth choose".into()
        }
        (None, Some(v)) if discover => format!(
            "server/discover does not list {MODERN} in supportedVersions, the newest it lists is {v}: pin {v} with {pin_key}"
        ),
        (None, Some(v)) => {
            format!("the server speaks {v}, which initialize cannot negotiate: pin {v} with {pin_key}")
        }
        (None, None) if discover && refused => format!(
            "the server refused {MODERN} (-32022); pin a legacy revision it serves with {pin_key}"
        ),
        (None, None) if discover => format!(
            "server/discover does not list {MODERN} in supportedVersions; pin a legacy revision the server serves with {pin_key}"
        ),
        _ => format!(
            "the server answered a revision agenthealth does not support ({})",
            supported()
        ),
    };
    after_story(check, &rest)
}

/// A rejection that a pin or a missing session explains, if either does.
fn session_or_pin(check: &Check) -> Option<String> {
    let method = word(check, Key::FailedMethod)?;
    let status = int(check, Key::HttpStatus);
    if check.evidence.get(Key::SessionIdIssued) == Some(&crate::result::Fact::Bool(false))
        && method != "initialize"
        && matches!(status, Some(400 | 404))
    {
        let s = status.map_or(String::new(), |s| format!(" with HTTP {s}"));
        return Some(format!(
            "server requires a session but returned none: initialize assigned no Mcp-Session-Id, then {method} was refused{s}"
        ));
    }
    if method == "server/discover" && word(check, Key::PinnedVersion).as_deref() == Some(MODERN) {
        let s = status.map_or(String::new(), |s| format!(" HTTP {s}"));
        let code = int(check, Key::RpcCode).map_or(String::new(), |c| format!(" {c}"));
        return Some(after_story(
            check,
            &format!(
                "discover got{s}{code}, as a legacy server answers; remove the pin or pin the server's legacy revision"
            ),
        ));
    }
    None
}

/// A JSON-RPC error in our words: the method, the code and what it means.
fn rpc(check: &Check) -> String {
    let method = word(check, Key::FailedMethod).unwrap_or_else(|| "a request".into());
    let status = int(check, Key::HttpStatus).map_or(String::new(), |s| format!(", HTTP {s}"));
    match int(check, Key::RpcCode) {
        Some(-32020) => format!(
            "the server says the headers and body of {method} disagree (-32020 header mismatch{status}); a proxy may rewrite MCP headers"
        ),
        Some(-32021) => format!(
            "the server requires a client capability for {method} that a health check never declares (-32021{status})"
        ),
        Some(-32601) => {
            format!("the server does not implement {method} (-32601 method not found{status})")
        }
        Some(code) => format!(
            "the server rejected {method} with JSON-RPC error {code}{status}; its logs say why"
        ),
        None => format!("the server rejected {method}{status}"),
    }
}
