//! `doctor`: after the tree, the contract's line per status and type — the results that share
//! both in one line, in the order they first appear (pre-order) — then each distinct piece of
//! advice once — the likely fix for the checks that did not pass, naming the targets
//! and checks it applies to — and for graphs the root cause (the deepest failing critical
//! dependencies).
//!
//! Advice is chosen from the check's typed [`Reason`], one small module per family (the
//! engine, the configuration, the network, HTTP, MCP, the MCP process); the evidence supplies
//! the numbers and configured names the sentence quotes, and [`setting`] names what to change
//! the way the target was given (a configuration key, or for an ad-hoc target a flag). No
//! advice depends on a message string or on text from a server.

mod config;
pub mod details;
mod engine;
mod http;
mod mcp;
mod network;
mod oauth;
mod process;
mod setting;

use std::fmt::Write;

use crate::contract::{Dimension, Status, TargetType};
use crate::output::Style;
use crate::output::terminal::paint;
use crate::result::document::{Check, Document, NodeResult};
use crate::result::{Fact, Key, Reason};
use crate::text::clean;

pub(crate) use setting::{Audience, Setting};

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
    let mut lines: Vec<StatusLine> = Vec::new();
    let mut advice: Vec<Advice> = Vec::new();
    let mut nodes = 0;
    for r in &doc.results {
        status_lines(&mut lines, r, &mut advice, &mut nodes);
    }
    for line in &lines {
        let verb = if line.names.len() == 1 { "is" } else { "are" };
        let _ = writeln!(
            out,
            "Doctor: {} ({}) {verb} {}. {}",
            listed(&line.names),
            line.kind,
            paint(line.status, style),
            status_advice(line.status)
        );
    }
    // With one target, which checks; with several, which targets (and their checks).
    for a in &advice {
        let _ = writeln!(out, "  - {}: {}", a.applies_to(nodes > 1), a.text);
    }
    for r in &doc.results {
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
    match style.width {
        Some(width) => filled(&out, width),
        None => out,
    }
}

/// Doctor's lines filled to `width` at spaces; continuation lines hang four columns in, under
/// a bullet's text.
fn filled(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let (lead, rest) = match line.strip_prefix("  - ") {
            Some(rest) => ("  - ", rest),
            None => ("", line),
        };
        let lead_width = crate::output::wrap::visible_width(lead);
        let rest = [rest.to_string()];
        out.push_str(&crate::output::wrap::fill(
            lead,
            lead_width,
            &rest,
            "",
            width,
            ("    ", 4),
        ));
        out.push('\n');
    }
    out
}

/// One `Doctor:` line: the results of one type with one status, named in first-seen order.
struct StatusLine {
    status: Status,
    kind: TargetType,
    names: Vec<String>,
}

/// `a`, `a and b`, `a, b and c`, then `a, b and 5 more`: a long list does not bury the line's
/// advice (the tree above names every target).
fn listed(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [first @ .., last] if names.len() <= 3 => format!("{} and {last}", first.join(", ")),
        [a, b, rest @ ..] => format!("{a}, {b} and {} more", rest.len()),
    }
}

/// One distinct piece of advice and where it applies: each target (its label) with the
/// checks, in first-seen order.
struct Advice {
    text: String,
    on: Vec<(String, Vec<&'static str>)>,
}

impl Advice {
    /// `authentication, protocol` for the only target; `api, search (reachability)` or
    /// `api (reachability); db (protocol)` when there are several.
    fn applies_to(&self, several: bool) -> String {
        if !several {
            let dims: Vec<&str> = self
                .on
                .iter()
                .flat_map(|(_, d)| d.iter().copied())
                .collect();
            return dims.join(", ");
        }
        let mut groups: Vec<(Vec<&str>, &[&str])> = Vec::new();
        for (target, dims) in &self.on {
            match groups.iter_mut().find(|(_, d)| *d == dims.as_slice()) {
                Some((targets, _)) => targets.push(target),
                None => groups.push((vec![target], dims)),
            }
        }
        groups
            .iter()
            .map(|(targets, dims)| format!("{} ({})", targets.join(", "), dims.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The contract's line for `r` and its dependencies (pre-order), joined to the line of
/// their status and type, collecting their advice: checks failing for the same reason (one
/// 401 answers authentication and protocol), or targets failing the same way, share one
/// piece. A node shown twice (a shared dependency) is named and advised once.
fn status_lines(
    lines: &mut Vec<StatusLine>,
    r: &NodeResult,
    advice: &mut Vec<Advice>,
    nodes: &mut usize,
) {
    *nodes += 1;
    // By name and id: a shared dependency shown under two edges is one target.
    let name = label(r);
    match lines
        .iter_mut()
        .find(|l| l.status == r.status && l.kind == r.target.kind)
    {
        Some(line) if line.names.contains(&name) => {}
        Some(line) => line.names.push(name),
        None => lines.push(StatusLine {
            status: r.status,
            kind: r.target.kind,
            names: vec![name],
        }),
    }
    let audience = Audience {
        adhoc: r.target.adhoc,
    };
    let target = label(r);
    let mut checks: Vec<_> = r.checks.iter().collect();
    checks.sort_by_key(|(d, _)| d.as_str());
    for (dim, check) in checks {
        if check.status == Status::Healthy {
            continue;
        }
        let Some(text) = check_advice(*dim, check, audience) else {
            continue;
        };
        let entry = match advice.iter_mut().find(|a| a.text == text) {
            Some(entry) => entry,
            None => {
                advice.push(Advice {
                    text,
                    on: Vec::new(),
                });
                let last = advice.len() - 1;
                &mut advice[last]
            }
        };
        match entry.on.iter_mut().find(|(t, _)| *t == target) {
            Some((_, dims)) if dims.contains(&dim.as_str()) => {}
            Some((_, dims)) => dims.push(dim.as_str()),
            None => entry.on.push((target.clone(), vec![dim.as_str()])),
        }
    }
    for d in &r.dependencies {
        status_lines(lines, d, advice, nodes);
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

/// The likely fix for one failed check: by the family of its reason, naming settings the
/// way `audience` changes them.
pub fn check_advice(dim: Dimension, check: &Check, audience: Audience) -> Option<String> {
    let advice = by_reason(dim, check, audience);
    // The deprecated HTTP+SSE transport, found (a GET opened its stream) or suspected (the
    // path ends in /sse, where a Streamable HTTP endpoint may live too).
    let instead = "which agenthealth does not speak";
    let configure = "configure the server's Streamable HTTP endpoint (often /mcp) as";
    let endpoint = audience.name(Setting::Endpoint);
    match word(check, Key::TransportHint).as_deref() {
        Some("http_sse") => Some(format!(
            "this is the deprecated HTTP+SSE transport (a GET opens an event stream announcing \
             a message endpoint), {instead}: {configure} {endpoint}, or upgrade the server"
        )),
        Some("sse_path") => Some(format!(
            "if this is the deprecated HTTP+SSE transport (the path ends in /sse), {instead}, \
             {configure} {endpoint}, or upgrade the server{}",
            advice.map_or_else(String::new, |a| format!("; otherwise: {a}"))
        )),
        _ => advice,
    }
}

/// The likely fix by the family of the check's reason.
fn by_reason(dim: Dimension, check: &Check, audience: Audience) -> Option<String> {
    match check.reason {
        Some(Reason::Engine(note)) => engine::advice(note, dim, check, audience),
        Some(Reason::Config(problem)) => config::advice(problem, check, audience),
        Some(Reason::Network(failure)) => network::advice(failure, check),
        Some(Reason::Http(failure)) => Some(http::advice(failure, check, audience)),
        Some(Reason::Mcp(failure)) => mcp::advice(failure, dim, check, audience),
        Some(Reason::Process(failure)) => Some(process::advice(failure, check, audience)),
        None => network::unexplained(check),
    }
}

/// An integer fact.
fn int(check: &Check, key: Key) -> Option<i64> {
    match check.evidence.get(key) {
        Some(Fact::Int(i)) => Some(*i),
        _ => None,
    }
}

/// A fact as text a person reads: our words as they are, configured names cleaned.
fn word(check: &Check, key: Key) -> Option<String> {
    match check.evidence.get(key) {
        Some(Fact::Word(w)) => Some((*w).to_string()),
        Some(Fact::Config(s)) => Some(clean(s)),
        Some(Fact::ConfigList(v)) => {
            Some(v.iter().map(|s| clean(s)).collect::<Vec<_>>().join(", "))
        }
        Some(Fact::Phrase(p)) => Some(p.render(&clean)),
        Some(Fact::Revision(r)) => Some(r.to_string()),
        _ => None,
    }
}

/// A true boolean fact.
fn yes(check: &Check, key: Key) -> bool {
    check.evidence.get(key) == Some(&Fact::Bool(true))
}

/// The credential advice both adapters give for 401/403: the refused variable, or which
/// setting supplies one. A 403 without a credential and without a `WWW-Authenticate`
/// challenge is no credential problem: servers that check `Host` or `Origin` against an
/// allow-list answer so (many accept `localhost` and refuse `127.0.0.1`).
fn rejected_credential(check: &Check, audience: Audience) -> String {
    let status = int(check, Key::HttpStatus);
    let s = status.map_or("401/403".to_string(), |c| c.to_string());
    let on = mcp::on_method(check);
    let challenged = check.evidence.get(Key::AuthChallenge);
    match word(check, Key::CredentialEnv) {
        Some(env) => {
            format!("HTTP {s}{on}: the token in ${env} was rejected; check its value and scope")
        }
        None if word(check, Key::CredentialKind).as_deref() == Some("oauth")
            && word(check, Key::TokenSource).as_deref() == Some("file") =>
        {
            format!(
                "HTTP {s}{on}: the MCP server refused the saved access token (revoked, or the grant ended): log in again (`agenthealth login CONFIG TARGET`)"
            )
        }
        None if word(check, Key::CredentialKind).as_deref() == Some("oauth") => format!(
            "HTTP {s}{on}: the MCP server refused the OAuth access token its authorization server issued; check that the server accepts tokens for this endpoint as the resource (audience) and the scopes granted (mcp.oauth.scopes)"
        ),
        None if status == Some(401) && yes(check, Key::OauthChallenge) => {
            let command = if audience.adhoc {
                "agenthealth doctor mcp URL --oauth-details"
            } else {
                "agenthealth doctor CONFIG --oauth-details"
            };
            format!(
                "HTTP 401{on}: the server uses OAuth (its challenge names protected-resource metadata): run `{command}` to print the mcp.oauth block to paste under the target, or set {} to a variable holding a token you already have",
                audience.name(Setting::BearerEnv)
            )
        }
        None if status == Some(403) && challenged == Some(&Fact::Bool(false)) => format!(
            "HTTP 403{on} without a WWW-Authenticate challenge and with no credential sent: the server refuses this client, not a token; check its Host and Origin allow-lists (many accept `localhost` but refuse `127.0.0.1`, or the reverse) and any IP allow-list, then use {} with a host it accepts",
            audience.name(Setting::Endpoint)
        ),
        None => format!(
            "HTTP {s}{on}: the endpoint requires credentials; set {} to a variable holding a token",
            audience.name(Setting::BearerEnv)
        ),
    }
}

/// A redirect, in words: it is one, it was not followed, and when it points at the configured
/// endpoint with or without its trailing slash (or over https), which endpoint to configure
/// — derived from our configuration, never from the server's `Location`.
fn redirect(status: i64, check: &Check, audience: Audience) -> String {
    let endpoint = audience.name(Setting::Endpoint);
    let on = mcp::on_method(check);
    let base = format!("HTTP {status}{on} is a redirect, and agenthealth never follows redirects");
    match check.evidence.get(Key::Redirect) {
        Some(Fact::Word("trailing_slash")) => format!(
            "{base}: the server redirects to the same URL with a trailing slash; add the trailing slash to {endpoint}"
        ),
        Some(Fact::Word("no_trailing_slash")) => format!(
            "{base}: the server redirects to the same URL without its trailing slash; remove the trailing slash from {endpoint}"
        ),
        Some(Fact::Word("https")) => format!(
            "{base}: the server redirects to the same URL over https; use https:// in {endpoint}"
        ),
        _ => format!(
            "{base}; use the URL it redirects to as {endpoint} (check it by hand: agenthealth never shows it)"
        ),
    }
}

#[cfg(test)]
mod tests;
