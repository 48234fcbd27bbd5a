//! `doctor --oauth-details`: what an OAuth-protected MCP server publishes about its
//! authorization, read the way a check's discovery reads it (the challenge, the
//! protected-resource metadata, each listed issuer's own metadata; for a 2025-03-26 server
//! the origin's) — but never trusting it: nothing here leads to a token. Every value kept is
//! validated word by word ([`shown_url`], scope tokens, fixed words) before it reaches
//! [`OAuthDetails`], and only that command prints it.

use serde_json::Value;

use super::discovery::{self, strings};
use super::url;
use crate::contract::AuthMethod;
use crate::net::{Client, Endpoint};
use crate::result::oauth_details::{OAuthDetails, ServerDetails};
use crate::result::reason::OAuthStep;
use crate::runtime::Attempt;

/// Longest URL shown.
const MAX_URL: usize = 2048;
/// At most this many listed issuers are looked up, and this many scopes kept.
const MAX_ISSUERS: usize = 4;
const MAX_SCOPES: usize = 64;
/// The grants `mcp.oauth.grant` can name, as the metadata spells them.
const GRANTS: [&str; 3] = ["authorization_code", "client_credentials", "refresh_token"];

/// What the server of `endpoint` publishes; `pinned` is the configured issuer, if any.
/// Whatever cannot be fetched or validated is left out.
pub(crate) fn probe(
    client: &mut Client,
    target: &str,
    endpoint: &Endpoint,
    pinned: Option<&str>,
    attempt: &Attempt,
) -> OAuthDetails {
    let mut details = OAuthDetails {
        target: target.to_string(),
        pinned: pinned.map(str::to_string),
        endpoint_origin: url::origin(endpoint),
        ..OAuthDetails::default()
    };
    let Ok(found) = discovery::challenge(client, endpoint, attempt) else {
        return details;
    };
    if let Some(named) = found.resource_metadata.as_deref().and_then(url::secure) {
        if url::origin(&named) != details.endpoint_origin {
            details.named_origin = shown_url(&url::origin(&named));
            return details;
        }
    }
    match discovery::resource_document(client, endpoint, &found, attempt) {
        Ok(Some((doc, _))) => {
            let listed = strings(doc.get("authorization_servers")).unwrap_or_default();
            details.issuers = listed.iter().filter_map(|i| shown_url(i)).collect();
            details.resource_scopes = scopes(doc.get("scopes_supported"));
        }
        Ok(None) if found.unauthorized => {
            details.compat = true;
            details.issuers = shown_url(&details.endpoint_origin).into_iter().collect();
        }
        Ok(None) | Err(_) => return details,
    }
    for issuer in details.issuers.clone().iter().take(MAX_ISSUERS) {
        match issuer_document(client, issuer, details.compat, attempt) {
            Some((named, doc)) if named == *issuer => {
                details.server = Some(server(issuer, &doc));
                break;
            }
            Some((named, _)) if details.misnamed.is_none() => {
                details.misnamed = Some((issuer.clone(), named));
            }
            _ => {}
        }
    }
    if details.compat && details.server.is_none() {
        // No metadata and no authorization server at the origin: nothing says OAuth.
        details.issuers.clear();
    }
    details
}

/// The first metadata document at `issuer`'s locations (and, for a 2025-03-26 server, the
/// origin's root), with the issuer it names when that is one to show.
fn issuer_document(
    client: &mut Client,
    issuer: &str,
    compat: bool,
    attempt: &Attempt,
) -> Option<(String, serde_json::Map<String, Value>)> {
    let at = url::secure(issuer)?;
    let mut candidates = url::server_metadata_candidates(&at);
    if compat {
        candidates.push(format!(
            "{}/.well-known/oauth-authorization-server",
            url::origin(&at)
        ));
    }
    candidates.iter().find_map(|c| {
        let discovery::Fetched::Doc(doc) =
            discovery::fetch(client, c, OAuthStep::ServerMetadata, attempt).ok()?
        else {
            return None;
        };
        let named = doc
            .get("issuer")
            .and_then(Value::as_str)
            .and_then(shown_url)?;
        Some((named, doc))
    })
}

/// What an issuer's metadata says, in fixed words and validated values.
fn server(issuer: &str, doc: &serde_json::Map<String, Value>) -> ServerDetails {
    // RFC 8414: without `grant_types_supported`, authorization_code (and implicit).
    let grants = strings(doc.get("grant_types_supported"))
        .unwrap_or_else(|| vec!["authorization_code".into()]);
    let methods = strings(doc.get("token_endpoint_auth_methods_supported")).unwrap_or_default();
    ServerDetails {
        issuer: issuer.to_string(),
        scopes: scopes(doc.get("scopes_supported")),
        grants: GRANTS
            .into_iter()
            .filter(|g| grants.iter().any(|x| x == g))
            .collect(),
        registration: doc
            .get("registration_endpoint")
            .and_then(Value::as_str)
            .and_then(url::secure)
            .is_some(),
        methods: AuthMethod::ALL
            .into_iter()
            .filter(|m| methods.iter().any(|x| x == m.as_str()))
            .map(AuthMethod::as_str)
            .collect(),
    }
}

/// The scope tokens of a `scopes_supported`, in order, without repeats.
fn scopes(value: Option<&Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in strings(value).unwrap_or_default() {
        if crate::text::is_scope_token(&s) && !out.contains(&s) && out.len() < MAX_SCOPES {
            out.push(s);
        }
    }
    out
}

/// `text` when it may be shown: a URL credentials may travel to (https, or http on a
/// loopback host), without userinfo, query or fragment, at most 2 KiB of visible ASCII
/// without quotes or backslashes.
pub(crate) fn shown_url(text: &str) -> Option<String> {
    let clean = text.len() <= MAX_URL
        && text
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'\'' | b'"' | b'\\'));
    url::secure(text)
        .filter(|u| clean && u.uri().query().is_none())
        .map(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_secure_urls_are_shown() {
        for ok in [
            "https://auth.example.com",
            "https://auth.example.com/tenant/",
            "http://127.0.0.1:9/",
        ] {
            assert_eq!(shown_url(ok).as_deref(), Some(ok));
        }
        let long = format!("https://a.example/{}", "x".repeat(MAX_URL));
        for bad in [
            "http://auth.example.com",
            "https://u:p@auth.example.com",
            "https://auth.example.com/?q=1",
            "https://auth.example.com/#f",
            "https://auth.example.com/a b",
            "https://auth.example.com/'x'",
            "https://auth.example.com/\"",
            "https://auth.example.com/\\",
            "https://auth.example.com/\u{1b}[31m",
            long.as_str(),
        ] {
            assert_eq!(shown_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn grants_methods_and_scopes_are_fixed_words_or_scope_tokens() {
        let doc = serde_json::json!({
            "grant_types_supported": ["refresh_token", "authorization_code", "urn:evil", "implicit"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt", "none", "client_secret_post"],
            "scopes_supported": ["read", "read", "bad scope", "a\"b", "write"],
            "registration_endpoint": "http://evil.example/register"
        });
        let s = server("https://a", doc.as_object().expect("object"));
        assert_eq!(s.grants, ["authorization_code", "refresh_token"]);
        assert_eq!(s.methods, ["client_secret_post", "none"]);
        assert_eq!(s.scopes, ["read", "write"]);
        assert!(!s.registration, "an insecure registration endpoint is none");
        let bare = server("https://a", &serde_json::Map::new());
        assert_eq!(bare.grants, ["authorization_code"]);
        assert!(bare.methods.is_empty());
    }
}
