//! The authorization request `login` sends the browser to (RFC 6749 §4.1.1 with PKCE, RFC
//! 8707's `resource`): the authorization endpoint with its own query kept, then the
//! parameters. When the server's metadata says `require_pushed_authorization_requests`, the
//! parameters are pushed first (RFC 9126): a form POST to its
//! `pushed_authorization_request_endpoint`, authenticated like a token request, whose
//! 201 answer names a `request_uri` (visible ASCII, at most 2 KiB); the browser then gets only
//! `client_id` and that `request_uri`. Merely offered, PAR is not used.

use super::OAuthError;
use super::discovery::Discovered;
use super::token::{self, ClientAuth};
use super::url::form;
use crate::net::{Client, Endpoint};
use crate::result::reason::OAuthStep;
use crate::runtime::{Attempt, SecretLog};

/// Longest `request_uri` accepted.
const MAX_REQUEST_URI: usize = 2048;

/// The URL for the browser; `params` are the request's parameters, `client_id` among them.
pub(crate) fn url(
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
