//! The authorization request `login` sends the browser to (RFC 6749 §4.1.1 with PKCE, RFC
//! 8707's `resource`): the authorization endpoint with its own query kept, then the
//! parameters. When the server's metadata says `require_pushed_authorization_requests`, the
//! parameters are pushed first (RFC 9126): a form POST to its
//! `pushed_authorization_request_endpoint`, authenticated like a token request, whose
//! 201 answer names a `request_uri` (visible ASCII, at most 2 KiB); the browser then gets only
//! `client_id` and that `request_uri`. Merely offered, PAR is not used.

use super::OAuthError;
use super::discovery::Discovered;
use super::token::{self, ClientAuth, OFFLINE_ACCESS};
use super::url::form;
use crate::net::{Client, Endpoint};
use crate::result::reason::OAuthStep;
use crate::runtime::{Attempt, SecretLog};

/// What login asks for: the scope, and whether `prompt=consent` goes with it. Configured
/// scopes are used as configured; without them, the check's scope plus `offline_access` when
/// the issuer lists it (a refresh token that outlives the access token). Where
/// `offline_access` is asked of an OpenID provider that honours `prompt=consent`, consent is
/// prompted for: OpenID Connect issues that refresh token only with consent.
pub(crate) fn login_scope(
    discovered: &Discovered,
    configured: &[String],
) -> (Option<String>, bool) {
    let mut scope: Vec<String> = discovered
        .scope
        .as_deref()
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let listed = discovered
        .server
        .scopes_supported
        .iter()
        .any(|s| s == OFFLINE_ACCESS);
    if configured.is_empty() && listed && !scope.iter().any(|s| s == OFFLINE_ACCESS) {
        scope.push(OFFLINE_ACCESS.to_string());
    }
    let offline = scope.iter().any(|s| s == OFFLINE_ACCESS);
    let scope = (!scope.is_empty()).then(|| scope.join(" "));
    (scope, offline && discovered.server.consent_prompt)
}

/// Longest `request_uri` accepted.
const MAX_REQUEST_URI: usize = 2048;

/// This login's own values for its authorization request.
pub(crate) struct Leg<'a> {
    /// The loopback callback.
    pub redirect_uri: &'a str,
    /// The PKCE S256 challenge.
    pub code_challenge: &'a str,
    /// The `state`.
    pub state: &'a str,
    /// `mcp.oauth.scopes`.
    pub configured_scopes: &'a [String],
}

/// The URL for the browser: `response_type`, `client_id`, `redirect_uri`, the PKCE
/// challenge, `state`, `resource`, the [`login_scope`] (and `prompt=consent` with it when
/// needed), pushed first when the server requires it.
pub(crate) fn browser_url(
    client: &mut Client,
    discovered: &Discovered,
    auth: &ClientAuth<'_>,
    leg: &Leg<'_>,
    secrets: &SecretLog,
    attempt: &Attempt,
) -> Result<String, OAuthError> {
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", auth.id),
        ("redirect_uri", leg.redirect_uri),
        ("code_challenge", leg.code_challenge),
        ("code_challenge_method", "S256"),
        ("state", leg.state),
        ("resource", discovered.resource.as_str()),
    ];
    let (scope, consent) = login_scope(discovered, leg.configured_scopes);
    if let Some(scope) = scope.as_deref() {
        params.push(("scope", scope));
    }
    if consent {
        params.push(("prompt", "consent"));
    }
    url(client, discovered, auth, &params, secrets, attempt)
}

/// The URL for `params` (`client_id` among them).
fn url(
    client: &mut Client,
    discovered: &Discovered,
    auth: &ClientAuth<'_>,
    params: &[(&str, &str)],
    secrets: &SecretLog,
    attempt: &Attempt,
) -> Result<String, OAuthError> {
    let endpoint = discovered
        .server
        .authorization_endpoint
        .as_ref()
        .ok_or_else(|| OAuthError::step(OAuthStep::InsecureEndpoint))?;
    if !discovered.server.par_required {
        return Ok(with_query(endpoint, params));
    }
    // The pushed form names the client as every authenticated POST does.
    let params: Vec<(&str, &str)> = params
        .iter()
        .copied()
        .filter(|(k, _)| *k != "client_id")
        .collect();
    let refused = || OAuthError::step(OAuthStep::Par(None));
    let pushed_to = discovered
        .server
        .par_endpoint
        .as_ref()
        .ok_or_else(refused)?;
    let choice = token::choose(auth, discovered.server.auth_methods.as_deref())?;
    let answer = token::client_post(
        client,
        pushed_to,
        (auth, choice),
        &params,
        OAuthStep::Par,
        secrets,
        attempt,
    )?;
    if !matches!(answer.status, 200 | 201) {
        return Err(answer.refusal(OAuthStep::Par));
    }
    let request_uri = answer
        .doc
        .as_ref()
        .and_then(|d| d.get("request_uri"))
        .and_then(serde_json::Value::as_str)
        .filter(|u| {
            !u.is_empty() && u.len() <= MAX_REQUEST_URI && u.bytes().all(|b| b.is_ascii_graphic())
        })
        .ok_or_else(refused)?;
    Ok(with_query(
        endpoint,
        &[("client_id", auth.id), ("request_uri", request_uri)],
    ))
}

/// `endpoint` with its own query kept, then `params`.
fn with_query(endpoint: &Endpoint, params: &[(&str, &str)]) -> String {
    let base = endpoint.uri().to_string();
    let joiner = if base.contains('?') { '&' } else { '?' };
    format!("{base}{joiner}{}", form(params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::discovery::server_metadata;
    use serde_json::json;

    fn discovered(scope: Option<&str>, doc: serde_json::Value) -> Discovered {
        let mut doc = doc;
        doc["token_endpoint"] = json!("https://as.example/token");
        let server = server_metadata(doc.as_object().expect("object"), true).expect("metadata");
        Discovered {
            resource: "https://mcp.example/mcp".into(),
            scope: scope.map(str::to_string),
            server,
            evidence: Default::default(),
        }
    }

    #[test]
    fn login_asks_for_offline_access_where_listed_and_consent_where_oidc_needs_it() {
        let oidc = json!({"scopes_supported": ["read", "offline_access"], "subject_types_supported": ["public"]});
        let plain = json!({"scopes_supported": ["read", "offline_access"]});
        let none = json!({"scopes_supported": ["read"]});
        let configured = ["read".to_string()];
        let with_offline = ["read".to_string(), "offline_access".to_string()];
        for (doc, scope, config, want) in [
            (
                &oidc,
                Some("read"),
                &[][..],
                (Some("read offline_access"), true),
            ),
            (
                &plain,
                Some("read"),
                &[][..],
                (Some("read offline_access"), false),
            ),
            (&none, Some("read"), &[][..], (Some("read"), false)),
            (&oidc, None, &[][..], (Some("offline_access"), true)),
            // Configured scopes are used as configured: offline_access only when named.
            (&oidc, Some("read"), &configured[..], (Some("read"), false)),
            (
                &oidc,
                Some("read offline_access"),
                &with_offline[..],
                (Some("read offline_access"), true),
            ),
            (
                &json!({"prompt_values_supported": ["login"], "subject_types_supported": ["public"]}),
                Some("read offline_access"),
                &with_offline[..],
                (Some("read offline_access"), false),
            ),
        ] {
            let (s, consent) = login_scope(&discovered(scope, doc.clone()), config);
            assert_eq!((s.as_deref(), consent), want, "{doc} {scope:?} {config:?}");
        }
    }
}
