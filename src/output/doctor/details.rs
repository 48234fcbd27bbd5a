//! `doctor --oauth-details`: what each OAuth-protected MCP server publishes, and the
//! `mcp.oauth` block to paste. The only doctor output that shows server content — validated
//! by the OAuth client before it got here ([`OAuthDetails`]), and opt-in because the result
//! documents and plain doctor never carry any.

use std::fmt::Write;

use crate::result::oauth_details::{OAuthDetails, ServerDetails};
use crate::text::clean;

/// The section for `details`, one paragraph per target; empty when there is none.
pub fn render(details: &[OAuthDetails]) -> String {
    if details.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nOAuth details, as the servers publish them:\n");
    for d in details {
        let _ = write!(out, "  {}: ", clean(&d.target));
        out.push_str(&paragraph(d));
    }
    out
}

/// One target's paragraph (its first line continues the target's name).
fn paragraph(d: &OAuthDetails) -> String {
    if let Some(named) = &d.named_origin {
        return format!(
            "its 401 challenge names protected-resource metadata on {named}, another origin than the endpoint's {}; agenthealth trusts only metadata from the endpoint's own origin\n",
            d.endpoint_origin
        );
    }
    if d.issuers.is_empty() {
        return "no protected-resource metadata listing an authorization server was found\n".into();
    }
    let mut out = String::new();
    let listed = quoted(&d.issuers);
    match &d.pinned {
        Some(pin) if !d.issuers.contains(pin) => {
            let _ = writeln!(
                out,
                "mcp.oauth.issuer is not listed; the server lists {listed}"
            );
            if let Some(near) = d.issuers.iter().find(|i| slash_apart(pin, i)) {
                let _ = writeln!(
                    out,
                    "    mcp.oauth.issuer differs from '{near}' only by the trailing slash: issuers are compared exactly"
                );
            }
        }
        _ if d.compat => {
            let _ = writeln!(
                out,
                "publishes no protected-resource metadata; as a 2025-03-26 server, its origin {listed} is its issuer"
            );
        }
        _ => {
            let _ = writeln!(out, "the server uses OAuth; it lists the issuer {listed}");
        }
    }
    if let Some((listed, named)) = &d.misnamed {
        let _ = writeln!(
            out,
            "    the resource lists '{listed}' but that issuer's metadata names '{named}': issuers are compared exactly, so no mcp.oauth.issuer satisfies both; ask the server's operator to make them agree"
        );
    }
    if let Some(server) = &d.server {
        block(&mut out, d, server);
    }
    out
}

/// The `mcp.oauth` block to paste, and what registration takes.
fn block(out: &mut String, d: &OAuthDetails, server: &ServerDetails) {
    // Authorization code unless the server offers only client credentials.
    let has = |grant| server.grants.contains(&grant);
    let grant = if has("client_credentials") && !has("authorization_code") {
        "client_credentials"
    } else {
        "authorization_code"
    };
    let scopes = if d.resource_scopes.is_empty() {
        &server.scopes
    } else {
        &d.resource_scopes
    };
    let _ = writeln!(out, "    paste under the target:");
    let _ = writeln!(out, "      mcp:\n        oauth:");
    let _ = writeln!(out, "          issuer: '{}'", server.issuer);
    let _ = writeln!(out, "          grant: {grant}");
    if grant == "client_credentials" {
        let _ = writeln!(out, "          client_id: YOUR-CLIENT-ID");
        let _ = writeln!(out, "          client_secret_env: MCP_CLIENT_SECRET");
    } else if !server.registration {
        let _ = writeln!(out, "          client_id: YOUR-CLIENT-ID");
    }
    if grant == "authorization_code" {
        let file = token_file_name(&d.target);
        let _ = writeln!(out, "          token_file: .credentials/{file}.json");
    }
    if !scopes.is_empty() {
        let _ = writeln!(out, "          scopes: [{}]", quoted(scopes));
    }
    if !server.methods.is_empty() {
        let _ = writeln!(
            out,
            "    token endpoint methods it lists: {}",
            server.methods.join(", ")
        );
    }
    if grant == "authorization_code" && server.registration {
        let _ = writeln!(
            out,
            "    it registers clients dynamically: run `agenthealth login CONFIG TARGET --register`"
        );
    } else if grant == "authorization_code" {
        let _ = writeln!(
            out,
            "    it offers no dynamic registration: register a client for the callback http://127.0.0.1:<redirect_port>/callback, set client_id, then run `agenthealth login CONFIG TARGET`"
        );
    }
}

/// `'a', 'b'`: values as YAML single-quoted scalars.
fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("'{}'", v.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `a` and `b` differ only by a trailing slash.
fn slash_apart(a: &str, b: &str) -> bool {
    a.strip_suffix('/') == Some(b) || b.strip_suffix('/') == Some(a)
}

/// A file name for the target's tokens: its name's letters, digits, `-`, `_` and `.`.
fn token_file_name(target: &str) -> String {
    let name: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.trim_matches('.').is_empty() {
        "target".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sdk(registration: bool) -> OAuthDetails {
        OAuthDetails {
            target: "py mcp".into(),
            endpoint_origin: "http://127.0.0.1:9".into(),
            issuers: vec!["http://127.0.0.1:8/".into()],
            resource_scopes: vec!["read".into(), "it's".into()],
            server: Some(ServerDetails {
                issuer: "http://127.0.0.1:8/".into(),
                scopes: vec!["read".into(), "write".into()],
                grants: vec!["authorization_code", "refresh_token"],
                registration,
                methods: vec!["client_secret_post", "client_secret_basic"],
            }),
            ..OAuthDetails::default()
        }
    }

    #[test]
    fn the_block_holds_the_issuer_exactly_and_what_registration_takes() {
        let text = render(&[sdk(true)]);
        assert!(
            text.contains("          issuer: 'http://127.0.0.1:8/'\n"),
            "{text}"
        );
        assert!(
            text.contains("          grant: authorization_code\n"),
            "{text}"
        );
        assert!(
            text.contains("          token_file: .credentials/py-mcp.json\n"),
            "{text}"
        );
        assert!(
            text.contains("          scopes: ['read', 'it''s']\n"),
            "{text}"
        );
        assert!(!text.contains("client_id"), "{text}");
        assert!(text.contains("login CONFIG TARGET --register"), "{text}");
        let text = render(&[sdk(false)]);
        assert!(
            text.contains("          client_id: YOUR-CLIENT-ID\n"),
            "{text}"
        );
        assert!(text.contains("offers no dynamic registration"), "{text}");
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn a_pin_a_slash_apart_and_a_disagreeing_server_are_said_so() {
        let mut d = sdk(true);
        d.pinned = Some("http://127.0.0.1:8".into());
        let text = render(&[d]);
        assert!(
            text.contains("mcp.oauth.issuer is not listed; the server lists 'http://127.0.0.1:8/'"),
            "{text}"
        );
        assert!(text.contains("only by the trailing slash"), "{text}");
        let mut d = sdk(true);
        d.server = None;
        d.misnamed = Some(("http://127.0.0.1:8".into(), "http://127.0.0.1:8/".into()));
        let text = render(&[d]);
        assert!(
            text.contains("no mcp.oauth.issuer satisfies both"),
            "{text}"
        );
        let other = OAuthDetails {
            target: "t".into(),
            endpoint_origin: "https://mcp.example".into(),
            named_origin: Some("https://evil.example".into()),
            ..OAuthDetails::default()
        };
        let text = render(&[other]);
        assert!(
            text.contains(
                "on https://evil.example, another origin than the endpoint's https://mcp.example"
            ),
            "{text}"
        );
    }
}
