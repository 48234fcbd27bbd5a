//! Dynamic client registration (RFC 7591), for `agenthealth login CONFIG TARGET --register`
//! only: checks never register.
//!
//! One JSON `POST` to the pinned issuer's `registration_endpoint` (secure, like every OAuth
//! URL) describing a native client of the loopback callback: `client_name`,
//! `application_type: native`, the one `redirect_uris` entry, `grant_types`
//! `authorization_code` and `refresh_token`, `response_types: [code]`, the
//! `token_endpoint_auth_method` ([`method_to_register`]: the configured one, else `none` when
//! the server lists it — a public native client — else `client_secret_basic` when it lists
//! that or nothing, else `client_secret_post`) and the `scope` login will ask for (servers
//! refuse authorization requests for scopes outside the registered ones). The answer must be
//! a 200 or 201 JSON object of at most 64 KiB whose `client_id` is visible ASCII of at most
//! 1 KiB; its `client_secret` and `registration_access_token` are recorded for redaction
//! before anything else reads them. The method in force is the one the answer names, else
//! the one asked for; a secret is kept only for a confidential method. Nothing the server
//! says beyond those fields is kept.

use serde_json::{Value, json};

use super::OAuthError;
use super::discovery::{MAX_METADATA_BYTES, ServerMetadata};
use crate::contract::{AuthMethod, Secret};
use crate::net::{Client, Method, Request};
use crate::result::reason::OAuthStep;
use crate::runtime::{Attempt, SecretLog};

/// Longest `client_id` accepted.
const MAX_CLIENT_ID: usize = 1024;

/// A client the server registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Registered {
    /// `client_id` (public: it is printed).
    pub client_id: String,
    /// `client_secret`, for a confidential method.
    pub secret: Option<Secret>,
    /// The token endpoint method in force.
    pub method: AuthMethod,
    /// `client_secret_expires_at` (seconds since the epoch; 0 = never), when given.
    pub secret_expires_at: Option<u64>,
    /// The one redirect URI it was registered for (servers match it exactly).
    pub redirect_uri: String,
}

/// The method to register with: `configured`, else what the server's list allows, a public
/// client first.
pub(crate) fn method_to_register(
    configured: Option<AuthMethod>,
    listed: Option<&[String]>,
) -> AuthMethod {
    let lists = |m: AuthMethod| listed.is_some_and(|l| l.iter().any(|x| x == m.as_str()));
    match configured {
        Some(m) => m,
        None if lists(AuthMethod::None) => AuthMethod::None,
        None if listed.is_none() || lists(AuthMethod::ClientSecretBasic) => {
            AuthMethod::ClientSecretBasic
        }
        None if lists(AuthMethod::ClientSecretPost) => AuthMethod::ClientSecretPost,
        // Nothing of ours is listed: a public client is the one that needs no secret.
        None => AuthMethod::None,
    }
}

/// Registers a client for `redirect_uri` asking for `scope`.
pub(crate) fn register(
    client: &mut Client,
    server: &ServerMetadata,
    redirect_uri: &str,
    scope: Option<&str>,
    method: AuthMethod,
    secrets: &SecretLog,
    attempt: &Attempt,
) -> Result<Registered, OAuthError> {
    let refused = || OAuthError::step(OAuthStep::Registration);
    let endpoint = server.registration_endpoint.as_ref().ok_or_else(refused)?;
    let mut body = json!({
        "client_name": "agenthealth",
        "application_type": "native",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method.as_str(),
    });
    if let Some(scope) = scope {
        body["scope"] = Value::from(scope);
    }
    let body = body.to_string();
    let request = Request::new(Method::Post, endpoint)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.as_bytes());
    let response = client.send(attempt, &request).map_err(|_| refused())?;
    let status = response.status();
    let read = response
        .read_body(MAX_METADATA_BYTES)
        .map_err(|_| refused())?;
    let doc: Option<serde_json::Map<String, Value>> = if read.over_limit {
        None
    } else {
        serde_json::from_slice(&read.bytes).ok()
    };
    let text = |key: &str| doc.as_ref()?.get(key)?.as_str();
    // Whatever comes next, these values are never shown.
    for key in ["client_secret", "registration_access_token"] {
        if let Some(value) = text(key) {
            secrets.record(&Secret::new(value.to_string()));
        }
    }
    if !matches!(status, 200 | 201) {
        return Err(refused().status(status));
    }
    let client_id = text("client_id")
        .filter(|id| {
            !id.is_empty() && id.len() <= MAX_CLIENT_ID && id.bytes().all(|b| b.is_ascii_graphic())
        })
        .ok_or_else(refused)?
        .to_string();
    let method = text("token_endpoint_auth_method")
        .and_then(AuthMethod::parse)
        .unwrap_or(method);
    let secret = text("client_secret")
        .filter(|s| !s.is_empty() && method.confidential())
        .map(|s| Secret::new(s.to_string()));
    if method.confidential() && secret.is_none() {
        // A confidential client without its secret could never authenticate.
        return Err(refused());
    }
    let secret_expires_at = doc
        .as_ref()
        .and_then(|d| d.get("client_secret_expires_at"))
        .and_then(Value::as_u64)
        .filter(|_| secret.is_some());
    Ok(Registered {
        client_id,
        secret,
        method,
        secret_expires_at,
        redirect_uri: redirect_uri.to_string(),
    })
}
