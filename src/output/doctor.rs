//! `doctor`: after the tree, advice for each result — the contract's line per status, then,
//! for every check that did not pass, the likely fix read from its evidence, and for graphs
//! the root cause (the deepest failing critical dependencies).

use std::fmt::Write;

use crate::output::Style;
use crate::output::terminal::{clean, paint, title};
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Code, Dimension, Fact, Note, Status};

/// The contract's advice per status.
pub fn status_advice(status: Status) -> &'static str {
    match status {
        Status::Healthy => {
            "Checks passed. Review the check list to confirm it covers your readiness requirements."
        }
        Status::Degraded => {
            "Inspect latency thresholds and optional dependencies marked as impaired."
        }
        Status::Unhealthy => {
            "Inspect failed checks and critical dependencies before using this target."
        }
        Status::Unreachable => {
            "Verify the endpoint, service availability, network access, and timeout policy."
        }
        Status::Misconfigured => {
            "Verify target configuration, adapter availability, and referenced environment credentials."
        }
        Status::Unknown => {
            "Review requested checks and adapter support; the available evidence is inconclusive."
        }
    }
}

/// All advice lines for the document.
pub fn advise(doc: &Document, style: Style) -> String {
    let mut out = String::from("\n");
    for r in &doc.results {
        node(&mut out, r, style);
        if !r.status.passed() && !r.dependencies.is_empty() {
            let mut causes = Vec::new();
            root_causes(r, &mut vec![label(r)], &mut causes);
            let arrow = if style.unicode { " → " } else { " -> " };
            for (path, status) in causes {
                let _ = writeln!(
                    out,
                    "Doctor: root cause: {} is {}",
                    path.join(arrow),
                    paint(status, style)
                );
            }
        }
    }
    out
}

fn node(out: &mut String, r: &NodeResult, style: Style) {
    let _ = writeln!(
        out,
        "Doctor: {} is {}. {}",
        title(r),
        paint(r.status, style),
        status_advice(r.status)
    );
    let mut checks: Vec<_> = r.checks.iter().collect();
    checks.sort_by_key(|(d, _)| d.as_str());
    for (dim, check) in checks {
        if check.status == Status::Healthy {
            continue;
        }
        if let Some(advice) = check_advice(*dim, check) {
            let _ = writeln!(out, "  - {dim}: {advice}");
        }
    }
    for d in &r.dependencies {
        node(out, d, style);
    }
}

/// Follows critical edges whose dependency failed down to the deepest failing nodes: each
/// is reported with the path of names from the top-level target. A dependency reached
/// only through optional edges is never a root cause (it cannot make its parent fail).
fn root_causes(r: &NodeResult, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Status)>) {
    let failing: Vec<&NodeResult> = r
        .dependencies
        .iter()
        .filter(|d| d.critical != Some(false) && !d.status.passed())
        .collect();
    if failing.is_empty() {
        if path.len() > 1 {
            out.push((path.clone(), r.status));
        }
        return;
    }
    for d in failing {
        path.push(label(d));
        root_causes(d, path, out);
        path.pop();
    }
}

/// A node in a root-cause path: its name, and its id when it has one.
fn label(r: &NodeResult) -> String {
    match &r.target.id {
        Some(id) => format!("{} [id={}]", clean(&r.target.name), clean(id)),
        None => clean(&r.target.name),
    }
}

fn int(check: &Check, key: &str) -> Option<i64> {
    match check.evidence.get(key) {
        Some(Fact::Int(i)) => Some(*i),
        _ => None,
    }
}

fn word(check: &Check, key: &str) -> Option<String> {
    match check.evidence.get(key) {
        Some(Fact::Word(w)) => Some((*w).to_string()),
        Some(Fact::Config(s)) => Some(clean(s)),
        Some(Fact::ConfigList(v)) => {
            Some(v.iter().map(|s| clean(s)).collect::<Vec<_>>().join(", "))
        }
        Some(Fact::Phrase(p)) => Some(p.render(&clean)),
        _ => None,
    }
}

/// The likely fix for a stdio server that could not start or ended early (`mcp_process`).
fn process_advice(check: &Check) -> String {
    let command =
        word(check, "command").map_or_else(|| "the command".to_string(), |c| format!("`{c}`"));
    let by_hand = "run the configured command by hand (agenthealth starts it without a shell, \
                   with only PATH, HOME, USER, the temporary-directory variables and mcp.stdio.env)";
    match word(check, "process_error").as_deref() {
        Some("command_not_found") if command.contains('/') => format!(
            "{command} does not exist; a relative path is resolved against mcp.stdio.directory (or the current directory)"
        ),
        Some("command_not_found") => {
            format!("{command} was not found on PATH; check mcp.stdio.command or give a path")
        }
        Some("command_not_executable") => format!(
            "{command} cannot be executed: it needs execute permission and must be a binary or a #! script whose interpreter exists"
        ),
        Some("bad_directory") => {
            "mcp.stdio.directory is missing, not a directory, or not searchable".into()
        }
        Some("invalid_env") => {
            "an mcp.stdio.env name or value cannot be placed in an environment (`=` or NUL)".into()
        }
        Some(_) => format!("the server process could not be started; {by_hand}"),
        None => match (int(check, "exit_code"), int(check, "exit_signal")) {
            (Some(code), _) => {
                format!("the server process exited with status {code} before answering; {by_hand}")
            }
            (None, Some(signal)) => format!(
                "the server process was killed by signal {signal} before answering; {by_hand}"
            ),
            (None, None) => {
                format!("the server process closed its output before answering; {by_hand}")
            }
        },
    }
}

/// `" on <method>"` when the evidence names the MCP method that failed.
fn on_method(check: &Check) -> String {
    word(check, "failed_method").map_or(String::new(), |m| format!(" on {m}"))
}

/// How the MCP session's era was chosen, from the establishment evidence: the pin, or what
/// discovery met and the fallback, then the revision negotiated or answered. E.g.
/// "discover got HTTP 400 -32000; fell back to initialize; negotiated 2025-11-25".
fn era_story(check: &Check) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(pin) = word(check, "pinned_version") {
        parts.push(format!(
            "mcp.protocol_version pins {pin}, so there is no fallback between eras"
        ));
    }
    if check.evidence.get("fallback") == Some(&Fact::Bool(true)) {
        let status =
            int(check, "discover_http_status").map_or(String::new(), |s| format!(" HTTP {s}"));
        let code = int(check, "discover_rpc_code").map_or(String::new(), |c| format!(" {c}"));
        parts.push(format!(
            "discover got{status}{code}; fell back to initialize"
        ));
    }
    if let Some(v) = word(check, "negotiated_version") {
        parts.push(format!("negotiated {v}"));
    } else if let Some(v) = word(check, "server_version") {
        parts.push(format!("the server answered {v}"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `story; rest`, or `rest` alone.
fn after_story(check: &Check, rest: &str) -> String {
    match era_story(check) {
        Some(story) => format!("{story}; {rest}"),
        None => rest.to_string(),
    }
}

/// A version failure (`mcp_version`): which era was tried, why, and what to pin.
fn version_advice(check: &Check) -> String {
    let pin = word(check, "pinned_version");
    let answered = word(check, "server_version");
    let method = word(check, "failed_method");
    let refused = int(check, "rpc_code") == Some(-32022);
    let rest = match (pin, answered) {
        (Some(_), Some(v)) => format!("pin {v} or remove the pin"),
        (Some(_), None) if refused => {
            "the server refused that revision (-32022 unsupported protocol version); remove the pin to let agenthealth choose".into()
        }
        (None, Some(v)) => format!("{v} is not a revision agenthealth accepts here"),
        (None, None) if method.as_deref() == Some("server/discover") && refused => {
            "the server refused 2026-07-28 (-32022); pin a legacy revision it serves with mcp.protocol_version".into()
        }
        (None, None) if method.as_deref() == Some("server/discover") => {
            "server/discover does not list 2026-07-28 in supportedVersions; pin a legacy revision the server serves with mcp.protocol_version".into()
        }
        _ => "the server answered a revision agenthealth does not support (2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)".into(),
    };
    after_story(check, &rest)
}

/// A rejection that a pin or a missing session explains, if either does.
fn session_or_pin_advice(check: &Check) -> Option<String> {
    let method = word(check, "failed_method")?;
    let status = int(check, "http_status");
    if check.evidence.get("session_id_issued") == Some(&Fact::Bool(false))
        && method != "initialize"
        && matches!(status, Some(400 | 404))
    {
        let s = status.map_or(String::new(), |s| format!(" with HTTP {s}"));
        return Some(format!(
            "server requires a session but returned none: initialize assigned no Mcp-Session-Id, then {method} was refused{s}"
        ));
    }
    if method == "server/discover" && word(check, "pinned_version").as_deref() == Some("2026-07-28")
    {
        let s = status.map_or(String::new(), |s| format!(" HTTP {s}"));
        let code = int(check, "rpc_code").map_or(String::new(), |c| format!(" {c}"));
        return Some(after_story(
            check,
            &format!(
                "discover got{s}{code}, as a legacy server answers; remove the pin or pin the server's legacy revision"
            ),
        ));
    }
    None
}

/// A JSON-RPC error (`mcp_rpc`) in our words: the method, the code and what it means.
fn rpc_advice(check: &Check) -> String {
    let method = word(check, "failed_method").unwrap_or_else(|| "a request".into());
    let status = int(check, "http_status").map_or(String::new(), |s| format!(", HTTP {s}"));
    match int(check, "rpc_code") {
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

/// The likely fix for one failed check, from its code, message and evidence.
pub fn check_advice(dim: Dimension, check: &Check) -> Option<String> {
    let status_code = int(check, "http_status");
    let env = word(check, "credential_env");
    match check.code {
        Some(Code::HttpAuth | Code::McpAuth) => {
            let s = status_code.map_or("401/403".to_string(), |c| c.to_string());
            let on = on_method(check);
            return Some(match env {
                Some(env) => {
                    format!(
                        "HTTP {s}{on}: check ${env}: the token it holds was rejected (value or scope)"
                    )
                }
                None => format!(
                    "HTTP {s}{on}: the endpoint requires credentials; set auth.bearer_env to a variable holding a token"
                ),
            });
        }
        Some(Code::HttpStatus) => {
            let s = status_code.map_or("status".to_string(), |c| format!("HTTP {c}"));
            return Some(format!(
                "{s} is not an accepted status; check the endpoint path, or list the status in http.expected_status"
            ));
        }
        Some(Code::HttpHeaders) => {
            return Some("a required response header is missing or differs; compare http.headers with what the service sends".into());
        }
        Some(Code::HttpBody) => {
            return Some("the body did not contain http.body_contains; check the endpoint and the expected text".into());
        }
        Some(Code::HttpBodyLimit) => {
            return Some("the body is larger than http.max_body_bytes; raise the limit or probe a smaller endpoint".into());
        }
        Some(Code::McpRequired) => {
            let mut parts = Vec::new();
            for (key, what) in [
                ("missing_tools", "tool"),
                ("missing_resources", "resource"),
                ("missing_prompts", "prompt"),
            ] {
                if let Some(names) = word(check, key) {
                    parts.push(format!("{what} `{names}` not advertised"));
                }
            }
            if let Some(names) = word(check, "excluded_tools") {
                parts.push(format!(
                    "tool `{names}` excluded for invalid x-mcp-header annotations"
                ));
            }
            if !parts.is_empty() {
                return Some(parts.join("; "));
            }
        }
        Some(Code::McpUnsafe) => {
            let tool = word(check, "tool").unwrap_or_else(|| "the functional tool".into());
            let why = word(check, "unsafe_annotation").unwrap_or_default();
            return Some(format!(
                "tool `{tool}` must declare readOnlyHint: true and destructiveHint: false ({why}); \
                 agenthealth calls no other tool"
            ));
        }
        Some(Code::McpFunctional) => {
            if check.evidence.get("is_error") == Some(&Fact::Bool(true)) {
                return Some(
                    "the tool returned isError: true; call it by hand with the same arguments to see why"
                        .into(),
                );
            }
            if let Some(kind) = word(check, "expect_kind") {
                let at = word(check, "expect_pointer").map_or(String::new(), |p| format!(" `{p}`"));
                let expected = word(check, "expected").unwrap_or_default();
                let why = match word(check, "expect_failure").as_deref() {
                    Some("stale") => format!("the timestamp there is older than {expected} s"),
                    Some("not_a_timestamp") => {
                        "the value there is not an RFC 3339 timestamp".into()
                    }
                    Some("missing") => "the result has nothing there".into(),
                    Some("no_json_document") => {
                        "the result has no structuredContent and its first text block is not JSON"
                            .into()
                    }
                    Some("differs") => format!("the value there is not {expected}"),
                    Some("not_found") => format!("no text block contains {expected:?}"),
                    _ => "see the evidence".into(),
                };
                return Some(format!("expectation {kind}{at} failed: {why}"));
            }
        }
        Some(Code::McpInput) => {
            return Some("the server asked for input or a client capability a health check never provides; the result is inconclusive".into());
        }
        Some(Code::McpProtocol) if dim == Dimension::Functional => {
            return Some(match word(check, "output_violation") {
                Some(v) => format!("the tool's result breaks its own outputSchema: {v}"),
                None => "the tool's result breaks the MCP result rules (content blocks, isError, structuredContent)".into(),
            });
        }
        Some(Code::McpVersion) => return Some(version_advice(check)),
        Some(Code::McpHttp | Code::McpRpc) => {
            if let Some(advice) = session_or_pin_advice(check) {
                return Some(advice);
            }
            if check.code == Some(Code::McpRpc) {
                return Some(rpc_advice(check));
            }
            let s = status_code.map_or("an unexpected status".to_string(), |c| format!("HTTP {c}"));
            return Some(format!(
                "the MCP endpoint answered {s}{}; check that the URL is the server's MCP endpoint (no /mcp is appended)",
                on_method(check)
            ));
        }
        Some(Code::McpProtocol) => {
            let why = word(check, "protocol_error");
            if why.as_deref() == Some("non-json line on stdout") {
                return Some("the server wrote text that is not JSON-RPC (a banner or log line) to stdout; stdio servers must log to stderr".into());
            }
            let why = why.map_or(String::new(), |w| format!(" ({w})"));
            return Some(format!(
                "the server's answer{} is not valid MCP/JSON-RPC{why}; check that the URL is an MCP endpoint",
                on_method(check).replacen(" on ", " to ", 1)
            ));
        }
        Some(Code::McpLimit) => {
            let what = word(check, "limit").map_or(String::new(), |w| format!(" ({w})"));
            return Some(format!(
                "the server's answer{} exceeds a safety limit{what}: 1 MiB per response, 100 pages and 10,000 entries per inventory",
                on_method(check).replacen(" on ", " to ", 1)
            ));
        }
        Some(Code::McpProcess) => return Some(process_advice(check)),
        _ => {}
    }
    if let Some(violation) = word(check, "argument_violation") {
        return Some(format!(
            "the tool would not accept mcp.functional.arguments_json, so it was not called: {violation}"
        ));
    }
    match check.message.as_deref() {
        Some(m) if m == Note::CredentialMissing.message() => {
            return Some(match word(check, "missing_env") {
                Some(names) => format!("set the environment variable(s) {names}"),
                None => "set the referenced environment variables".into(),
            });
        }
        Some(m) if m == Note::NoAdapter.message() => {
            return Some("this target type has no adapter in this build; use http, api, gateway, router or mcp".into());
        }
        Some(m) if m == Note::DimensionUnsupported.message() => {
            return Some(
                "remove the dimensions this target type does not implement from `checks`".into(),
            );
        }
        _ => {}
    }
    if dim == Dimension::Latency {
        return Some("raise thresholds.latency_ms or investigate the slow response".into());
    }
    if check.status == Status::Unreachable || check.status == Status::Unknown {
        let store = word(check, "trust_store");
        return Some(match word(check, "failure").as_deref() {
            Some("dns") => "the host name does not resolve; check the endpoint's host and DNS".into(),
            Some("connect_refused") => "nothing is listening at the endpoint's host and port".into(),
            Some("tls_untrusted") => format!(
                "the server certificate is not trusted (trust store: {}); set SSL_CERT_FILE to the CA bundle that signed it",
                store.unwrap_or_else(|| "unknown".into())
            ),
            Some("tls_name_mismatch") => "the certificate does not match the endpoint's host name".into(),
            Some("tls_expired") => "the server certificate has expired".into(),
            _ if check.status == Status::Unknown => {
                "the response started but did not complete in time; check the server's health and timeout_ms".into()
            }
            _ => "no response before the deadline; check that the service is up, reachable, and timeout_ms is adequate".into(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::terminal::tests::{edge, node};

    fn causes(doc: &Document, unicode: bool) -> Vec<String> {
        let style = Style {
            color: false,
            unicode,
        };
        advise(doc, style)
            .lines()
            .filter(|l| l.starts_with("Doctor: root cause: "))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_root_cause_is_the_deepest_failing_critical_dependency() {
        // api → gw (critical, failing) → db (critical, failing); api → search (optional,
        // failing): only db is a root cause.
        let db = node("db", Status::Unreachable, vec![]);
        let gw = node(
            "gateway",
            Status::Unhealthy,
            vec![edge(db, Some("db"), true)],
        );
        let search = node("search", Status::Unreachable, vec![]);
        let api = node(
            "api",
            Status::Unhealthy,
            vec![edge(search, None, false), edge(gw, Some("gw"), true)],
        );
        let doc = Document { results: vec![api] };
        assert_eq!(
            causes(&doc, true),
            vec!["Doctor: root cause: api → gateway [id=gw] → db [id=db] is UNREACHABLE"]
        );
        assert_eq!(
            causes(&doc, false),
            vec!["Doctor: root cause: api -> gateway [id=gw] -> db [id=db] is UNREACHABLE"]
        );
    }

    #[test]
    fn a_failing_parent_over_a_healthy_child_is_its_own_root_cause() {
        let db = node("db", Status::Healthy, vec![]);
        let gw = node("gateway", Status::Unhealthy, vec![edge(db, None, true)]);
        let api = node("api", Status::Unhealthy, vec![edge(gw, None, true)]);
        let doc = Document { results: vec![api] };
        assert_eq!(
            causes(&doc, true),
            vec!["Doctor: root cause: api → gateway is UNHEALTHY"]
        );
    }

    #[test]
    fn no_root_cause_without_a_failing_critical_path() {
        // Only an optional dependency fails: the parent is DEGRADED, nothing to blame.
        let search = node("search", Status::Unreachable, vec![]);
        let api = node("api", Status::Degraded, vec![edge(search, None, false)]);
        assert!(causes(&Document { results: vec![api] }, true).is_empty());
        // The parent fails on its own checks; its critical dependency is fine.
        let db = node("db", Status::Healthy, vec![]);
        let api = node("api", Status::Unhealthy, vec![edge(db, None, true)]);
        assert!(causes(&Document { results: vec![api] }, true).is_empty());
    }

    #[test]
    fn every_failing_branch_is_named() {
        let a = node("a", Status::Unknown, vec![]);
        let b = node("b", Status::Misconfigured, vec![]);
        let api = node(
            "api",
            Status::Unknown,
            vec![edge(a, None, true), edge(b, None, true)],
        );
        assert_eq!(
            causes(&Document { results: vec![api] }, true),
            vec![
                "Doctor: root cause: api → a is UNKNOWN",
                "Doctor: root cause: api → b is MISCONFIGURED"
            ]
        );
    }
}
