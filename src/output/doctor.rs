//! `doctor`: after the tree, advice for each result — the contract's line per status, then,
//! for every check that did not pass, the likely fix read from its evidence, and for graphs
//! the root cause (the deepest failing critical dependencies).

use std::fmt::Write;

use crate::output::Style;
use crate::output::terminal::{paint, title};
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Code, Fact, Note};
use crate::vocab::TargetType;
use crate::vocab::text::clean;
use crate::vocab::{Dimension, Status};

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
    // One line per distinct piece of advice: checks failing for the same reason (one 401
    // answers authentication and protocol) are named together.
    let mut lines: Vec<(Vec<&str>, String)> = Vec::new();
    for (dim, check) in checks {
        if check.status == Status::Healthy {
            continue;
        }
        if let Some(advice) = check_advice(*dim, check) {
            match lines.iter_mut().find(|(_, a)| *a == advice) {
                Some((dims, _)) => dims.push(dim.as_str()),
                None => lines.push((vec![dim.as_str()], advice)),
            }
        }
    }
    for (dims, advice) in lines {
        let _ = writeln!(out, "  - {}: {advice}", dims.join(", "));
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

/// The likely fix for a status outside `http.expected_status` (default: any 2xx), by class.
fn status_advice_for(check: &Check, status: Option<i64>) -> String {
    let Some(c) = status else {
        return "the status is not an accepted one; check the endpoint, or http.expected_status"
            .into();
    };
    let head = word(check, "method").as_deref() == Some("HEAD");
    match c {
        405 | 501 if head => format!(
            "HTTP {c}: the server does not answer HEAD; set http.method: GET (probes never fall back on their own), or list {c} in http.expected_status"
        ),
        300..=399 => format!(
            "HTTP {c} is a redirect, and redirects are never followed; use the final URL as the endpoint, or list {c} in http.expected_status"
        ),
        400..=499 => format!(
            "HTTP {c} is not an accepted status; check the endpoint path, or list {c} in http.expected_status"
        ),
        500..=599 => format!(
            "HTTP {c}: the service answered with a server error; check its health and logs, or list {c} in http.expected_status"
        ),
        _ => format!("HTTP {c} is not in http.expected_status"),
    }
}

/// The likely fix for an offline configuration check that failed on the endpoint, the
/// credential's value, the trust store or the proxy setting.
fn configuration_advice(check: &Check) -> Option<String> {
    if check.status != Status::Misconfigured {
        return None;
    }
    if let Some(problem) = word(check, "endpoint") {
        return Some(match problem.as_str() {
            "userinfo" => "the endpoint must not carry user:password@; give a token through auth.bearer_env (--bearer-env) instead".into(),
            "fragment" => "remove the #fragment from the endpoint".into(),
            "unsupported_scheme" => "the endpoint must start with http:// or https://".into(),
            "missing_host" => "the endpoint names no host; write it as http(s)://host[:port]/path".into(),
            "invalid_tls_name" => "an https endpoint needs a host name or IP address a certificate can be checked against".into(),
            _ => "the endpoint is not a usable URL; write it as http(s)://host[:port]/path".into(),
        });
    }
    if word(check, "credential").as_deref() == Some("control_character") {
        return Some("the credential's value contains a control character (a trailing newline?); only TAB is allowed in a header".into());
    }
    if let Some(problem) = word(check, "trust_store_error") {
        let variable = word(check, "trust_store_variable")
            .map_or_else(|| "the trust store".to_string(), |v| format!("${v}"));
        return Some(match problem.as_str() {
            "unreadable" => format!("{variable} names a file or directory that cannot be read"),
            "no_certificates" => format!("{variable} holds no PEM certificate"),
            _ => "the trust store could not be loaded".into(),
        });
    }
    if word(check, "proxy_error").is_some() {
        let variable = word(check, "proxy").unwrap_or_else(|| "the proxy variable".into());
        return Some(format!(
            "${variable} is not a usable proxy; it must be an http:// or https:// proxy URL (or unset it, or list the host in NO_PROXY)"
        ));
    }
    None
}

/// The attempt's deadline from the `deadline_ms` evidence: `300 ms`, or `the deadline`.
fn deadline(check: &Check) -> String {
    match check.evidence.get("deadline_ms") {
        Some(Fact::Ms(ms)) => format!("{ms:.0} ms"),
        _ => "the deadline".into(),
    }
}

/// Which trust store verified a certificate, from the `trust_store` evidence words.
fn trust_store(check: &Check) -> String {
    let source = word(check, "trust_store_source");
    match (word(check, "trust_store").as_deref(), source) {
        (Some("env"), Some(vars)) => {
            format!("the trust store named by {}", vars.replace('+', " and "))
        }
        (Some("system"), Some(path)) => format!("the system trust store {path}"),
        (Some("bundled"), _) => {
            "the bundled Mozilla roots (no SSL_CERT_FILE, no system bundle)".into()
        }
        _ => "the trust store".into(),
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
                        "HTTP {s}{on}: the token in ${env} was rejected; check its value and scope"
                    )
                }
                None => format!(
                    "HTTP {s}{on}: the endpoint requires credentials; set auth.bearer_env (--bearer-env for ping/doctor) to a variable holding a token"
                ),
            });
        }
        Some(Code::HttpStatus) => return Some(status_advice_for(check, status_code)),
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
            let specific = match why.as_deref() {
                Some("non-json line on stdout") => Some(
                    "the server wrote text that is not JSON-RPC (a banner or log line) to stdout; stdio servers must log to stderr",
                ),
                Some("response id does not match") => Some(
                    "the server answered with an id that does not match the request it was sent; that is a bug in the server",
                ),
                Some("server request on a stateless exchange") => Some(
                    "the server sent a request of its own during a 2026-07-28 exchange, which that revision does not allow (it asks for input with input_required results); that is a bug in the server",
                ),
                Some("output ended without a response") => Some(
                    "the server process's output ended part-way through an answer; run the configured command by hand to see why",
                ),
                _ => None,
            };
            if let Some(advice) = specific {
                return Some(advice.into());
            }
            let why = why.map_or(String::new(), |w| format!(" ({w})"));
            return Some(format!(
                "the server's answer{} is not valid MCP/JSON-RPC{why}; check that the endpoint (the URL, or the stdio command) is an MCP server",
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
    if let Some(advice) = configuration_advice(check) {
        return Some(advice);
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
            return Some(format!(
                "this target type has no adapter in this build; use one of {}",
                TargetType::names(&TargetType::CHECKED, ", ")
            ));
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
    let timed_out = [Note::CommunicationFailed, Note::IncompleteResponse]
        .iter()
        .any(|n| check.message.as_deref() == Some(n.message().as_str()));
    if dim == Dimension::Functional && timed_out && word(check, "failure").is_none() {
        return Some("the tool call did not complete before the deadline, and a functional call is never retried; check the tool by hand and timeout_ms".into());
    }
    if check.status == Status::Unreachable || check.status == Status::Unknown {
        let store = trust_store(check);
        return Some(match word(check, "failure").as_deref() {
            Some("dns") => "the host name does not resolve; check the endpoint's host and DNS".into(),
            Some("connect_refused") => "nothing is listening at the endpoint's host and port".into(),
            Some("tls_untrusted") => format!(
                "the server certificate does not chain to a CA in {store}; add the CA that signed it there, or set SSL_CERT_FILE to a bundle that holds it"
            ),
            Some("tls_name_mismatch") => format!(
                "the certificate (verified against {store}) is not valid for the endpoint's host name"
            ),
            Some("tls_expired") => format!("the server certificate (verified against {store}) has expired"),
            Some("tls_not_yet_valid") => format!(
                "the server certificate (verified against {store}) is not valid yet; check this host's clock"
            ),
            Some("reset" | "closed") if check.status == Status::Unknown => {
                "the server cut the connection in the middle of the response; check its logs".into()
            }
            Some("reset" | "closed") => {
                "the server closed the connection without answering; check that the endpoint speaks HTTP and the service is healthy".into()
            }
            _ if check.status == Status::Unknown => format!(
                "the response started but did not complete within {}; check the server's health and timeout_ms",
                deadline(check)
            ),
            _ => format!(
                "no response within {}; check that the service is up and reachable, and that timeout_ms is adequate",
                deadline(check)
            ),
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

    fn check(status: Status, code: Option<Code>, facts: &[(&'static str, Fact)]) -> Check {
        Check {
            code,
            status,
            message: code.map(|c| c.message().to_string()),
            steps: Default::default(),
            evidence: crate::result::Evidence(facts.to_vec()),
        }
    }

    #[test]
    fn a_rejected_token_is_named_by_its_variable() {
        let rejected = check(
            Status::Misconfigured,
            Some(Code::HttpAuth),
            &[
                ("http_status", Fact::Int(401)),
                ("credential_env", Fact::Config("API_TOKEN".into())),
            ],
        );
        assert_eq!(
            check_advice(Dimension::Authentication, &rejected).as_deref(),
            Some("HTTP 401: the token in $API_TOKEN was rejected; check its value and scope")
        );
        let anonymous = check(
            Status::Misconfigured,
            Some(Code::HttpAuth),
            &[("http_status", Fact::Int(403))],
        );
        let advice = check_advice(Dimension::Protocol, &anonymous).unwrap_or_default();
        assert!(
            advice.starts_with("HTTP 403: the endpoint requires credentials; set auth.bearer_env"),
            "{advice}"
        );
    }

    #[test]
    fn certificate_advice_names_the_trust_store() {
        let untrusted = |facts: &[(&'static str, Fact)]| {
            let mut all = vec![("failure", Fact::Word("tls_untrusted"))];
            all.extend_from_slice(facts);
            check_advice(
                Dimension::Reachability,
                &check(Status::Unreachable, None, &all),
            )
            .unwrap_or_default()
        };
        for (facts, names) in [
            (
                vec![
                    ("trust_store", Fact::Word("env")),
                    ("trust_store_source", Fact::Word("SSL_CERT_FILE")),
                ],
                "the trust store named by SSL_CERT_FILE",
            ),
            (
                vec![
                    ("trust_store", Fact::Word("system")),
                    (
                        "trust_store_source",
                        Fact::Word("/etc/ssl/certs/ca-certificates.crt"),
                    ),
                ],
                "the system trust store /etc/ssl/certs/ca-certificates.crt",
            ),
            (
                vec![("trust_store", Fact::Word("bundled"))],
                "the bundled Mozilla roots",
            ),
        ] {
            let advice = untrusted(&facts);
            assert!(advice.contains(names), "{advice}");
        }
    }

    #[test]
    fn status_advice_depends_on_the_status_and_method() {
        let advice = |status: i64, method: &'static str| {
            check_advice(
                Dimension::Protocol,
                &check(
                    Status::Unhealthy,
                    Some(Code::HttpStatus),
                    &[
                        ("method", Fact::Word(method)),
                        ("http_status", Fact::Int(status)),
                    ],
                ),
            )
            .unwrap_or_default()
        };
        assert!(advice(405, "HEAD").contains("set http.method: GET"));
        assert!(advice(501, "HEAD").contains("set http.method: GET"));
        assert!(advice(405, "GET").contains("check the endpoint path"));
        assert!(advice(302, "HEAD").contains("redirects are never followed"));
        assert!(advice(404, "HEAD").contains("check the endpoint path, or list 404"));
        assert!(advice(503, "HEAD").contains("server error"));
        assert!(advice(204, "GET").contains("not in http.expected_status"));
    }

    #[test]
    fn transport_advice_says_what_happened() {
        let advice = |status: Status, facts: &[(&'static str, Fact)]| {
            check_advice(Dimension::Reachability, &check(status, None, facts)).unwrap_or_default()
        };
        let silent = advice(Status::Unreachable, &[("deadline_ms", Fact::Ms(300.0))]);
        assert!(silent.starts_with("no response within 300 ms;"), "{silent}");
        let slow = advice(Status::Unknown, &[("deadline_ms", Fact::Ms(1500.0))]);
        assert!(slow.contains("did not complete within 1500 ms"), "{slow}");
        let cut = advice(Status::Unknown, &[("failure", Fact::Word("reset"))]);
        assert!(cut.contains("cut the connection in the middle"), "{cut}");
        let closed = advice(Status::Unreachable, &[("failure", Fact::Word("closed"))]);
        assert!(
            closed.contains("closed the connection without answering"),
            "{closed}"
        );
        let dns = advice(Status::Unreachable, &[("failure", Fact::Word("dns"))]);
        assert!(dns.contains("does not resolve"), "{dns}");
    }

    #[test]
    fn configuration_advice_reads_the_evidence() {
        let misconfigured = |facts: &[(&'static str, Fact)]| {
            check_advice(
                Dimension::Configuration,
                &check(Status::Misconfigured, None, facts),
            )
            .unwrap_or_default()
        };
        for (facts, want) in [
            (
                vec![("endpoint", Fact::Word("userinfo"))],
                "must not carry user:password@",
            ),
            (
                vec![("endpoint", Fact::Word("fragment"))],
                "remove the #fragment",
            ),
            (
                vec![("endpoint", Fact::Word("unsupported_scheme"))],
                "http:// or https://",
            ),
            (
                vec![("credential", Fact::Word("control_character"))],
                "control character",
            ),
            (
                vec![
                    ("trust_store_error", Fact::Word("no_certificates")),
                    ("trust_store_variable", Fact::Word("SSL_CERT_FILE")),
                ],
                "$SSL_CERT_FILE holds no PEM certificate",
            ),
            (
                vec![
                    ("proxy_error", Fact::Word("unsupported_scheme")),
                    ("proxy", Fact::Word("HTTPS_PROXY")),
                ],
                "$HTTPS_PROXY is not a usable proxy",
            ),
        ] {
            let advice = misconfigured(&facts);
            assert!(advice.contains(want), "{advice}");
        }
    }

    #[test]
    fn checks_failing_for_one_reason_share_one_advice_line() {
        let mut r = node("api", Status::Misconfigured, vec![]);
        let rejected = check(
            Status::Misconfigured,
            Some(Code::HttpAuth),
            &[("http_status", Fact::Int(401))],
        );
        r.checks.insert(Dimension::Authentication, rejected.clone());
        r.checks.insert(Dimension::Protocol, rejected);
        let text = advise(&Document { results: vec![r] }, Style::default());
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  - ")).collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(
            lines[0].starts_with("  - authentication, protocol: HTTP 401:"),
            "{text}"
        );
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
