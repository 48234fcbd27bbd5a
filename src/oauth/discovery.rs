//! Discovery: from the MCP endpoint to the pinned issuer's token endpoint.
//!
//! 1. **Challenge.** `HEAD` the endpoint without credentials and read the `Bearer`
//!    challenge ([`super::challenge`]). Many MCP servers route only `POST` and answer a
//!    `HEAD` with 404 or 405 and no challenge; the official clients learn the scope from the
//!    401 to their first request, so when the `HEAD` names nothing we send one
//!    unauthenticated `POST` of a JSON-RPC `ping` (valid in every era, no session, no side
//!    effect) and read its 401's challenge. No answer at all is the engine's to classify.
//! 2. **Protected-resource metadata** (RFC 9728): the challenge's `resource_metadata`, which
//!    must share the endpoint's origin, else the well-known locations in order. Its
//!    `resource` must equal the endpoint's canonical resource URI and its
//!    `authorization_servers` must list the pinned issuer, both compared exactly.
//! 3. **Authorization-server metadata** (RFC 8414, then OpenID Connect discovery) of the
//!    pinned issuer only: the first document whose `issuer` equals it exactly. Its endpoints
//!    must be secure ([`super::url::secure`]), and `https` when the issuer is.
//! 4. **Scope:** configured scopes, else the challenge's, else the metadata's
//!    `scopes_supported`, else none. A server's scopes pass the configured scopes' rule
//!    or are not sent: a challenge scope with one bad token is ignored as a whole (evidence
//!    `challenge_scope=ignored`), bad metadata entries are skipped.
//!
//! Metadata requests never carry a credential and never follow a redirect (the network
//! layer follows none); each answer must be a 200 JSON object of at most 64 KiB, else the
//! next candidate is tried. Every request is bounded by the attempt's deadline; one the
//! deadline cuts ends discovery at its step with `failure=timeout`.

use serde_json::{Map, Value};

use super::OAuthError;
use super::challenge::{self, Challenge};
use super::url;
use crate::net::{self, Client, Endpoint, Method, Request, Response};
use crate::result::reason::{NetFailure, OAuthStep};
use crate::result::{Evidence, Fact, Key};
use crate::runtime::Attempt;
use crate::text::is_scope_token;

/// Most scopes requested from a server's list.
const MAX_SCOPES: usize = 64;

/// Largest metadata document read.
pub(crate) const MAX_METADATA_BYTES: u64 = 64 * 1024;

/// The body of the unauthenticated `POST` that asks for a challenge when the `HEAD` gave
/// none: a request every MCP revision accepts and none keeps state for.
const CHALLENGE_PROBE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#;

/// What discovery established.
#[derive(Clone, Debug)]
pub(crate) struct Discovered {
    /// The canonical resource URI tokens are requested for.
    pub resource: String,
    /// The scope to request (precedence applied), space-separated.
    pub scope: Option<String>,
    /// The pinned issuer's validated metadata.
    pub server: ServerMetadata,
    /// What the authentication check reports of it (`challenge_scope`).
    pub evidence: Evidence,
}

/// The parts of an issuer's metadata OAuth uses.
#[derive(Clone, Debug)]
pub(crate) struct ServerMetadata {
    /// `token_endpoint`, secure.
    pub token_endpoint: Endpoint,
    /// `authorization_endpoint`, when present and secure (login needs it).
    pub authorization_endpoint: Option<Endpoint>,
    /// `token_endpoint_auth_methods_supported` (RFC 8414's default when absent or empty).
    pub auth_methods: Vec<String>,
    /// `code_challenge_methods_supported` lists `S256`.
    pub pkce_s256: bool,
    /// `authorization_response_iss_parameter_supported: true` (RFC 9207).
    pub iss_required: bool,
}

/// Runs discovery for `endpoint` against the pinned `issuer`.
pub(crate) fn discover(
    client: &mut Client,
    endpoint: &Endpoint,
    issuer: &str,
    configured_scopes: &[String],
    attempt: &Attempt,
) -> Result<Discovered, OAuthError> {
    let issuer_url = pinned_issuer(issuer)?;
    let resource = url::resource_uri(endpoint);

    let found = challenge(client, endpoint, attempt)?;
    let protected = protected_resource(client, endpoint, &found, &resource, issuer, attempt)?;
    // The pinned issuer's metadata.
    let step = OAuthStep::ServerMetadata;
    let mut pinned = None;
    for candidate in url::server_metadata_candidates(&issuer_url) {
        let doc = fetch(client, &candidate, step, attempt)?;
        if let Some(doc) = doc.filter(|d| d.get("issuer").and_then(Value::as_str) == Some(issuer)) {
            pinned = Some(doc);
            break;
        }
    }
    let server = pinned
        .ok_or_else(|| OAuthError::step(step))
        .and_then(|doc| server_metadata(&doc, issuer_url.is_https()))?;
    let mut evidence = Evidence::default();
    let scope = scope(configured_scopes, &found, &protected, &mut evidence);
    Ok(Discovered {
        resource,
        scope,
        server,
        evidence,
    })
}

/// The scope to request: the configured one, else the challenge's, else what the resource
/// supports. A server's scopes must pass the rule configured ones do
/// ([`is_scope_token`], at most [`MAX_SCOPES`]): a challenge scope that breaks it is ignored
/// (`challenge_scope=ignored`), metadata entries that break it are skipped.
fn scope(
    configured: &[String],
    found: &Challenge,
    protected: &Map<String, Value>,
    evidence: &mut Evidence,
) -> Option<String> {
    if !configured.is_empty() {
        return Some(configured.join(" "));
    }
    if let Some(challenged) = found.scope.as_deref() {
        let tokens: Vec<&str> = challenged.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.len() <= MAX_SCOPES && tokens.iter().all(|t| is_scope_token(t)) {
            return Some(tokens.join(" "));
        }
        evidence.set(Key::ChallengeScope, Fact::Word("ignored"));
    }
    let supported: Vec<String> = strings(protected.get("scopes_supported"))?
        .into_iter()
        .filter(|s| is_scope_token(s))
        .take(MAX_SCOPES)
        .collect();
    (!supported.is_empty()).then(|| supported.join(" "))
}

/// The endpoint's challenge: the `HEAD`'s, else that of an unauthenticated `POST` answered
/// 401.
fn challenge(
    client: &mut Client,
    endpoint: &Endpoint,
    attempt: &Attempt,
) -> Result<Challenge, OAuthError> {
    let head = client
        .send(
            attempt,
            &Request::new(Method::Head, endpoint).header("accept", "application/json"),
        )
        .map_err(|f| OAuthError::Network(Box::new(f)))?;
    let found = challenge_of(&head);
    drop(head);
    if found != Challenge::default() {
        return Ok(found);
    }
    let post = client
        .send(
            attempt,
            &Request::new(Method::Post, endpoint)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(CHALLENGE_PROBE),
        )
        .map_err(|f| OAuthError::Network(Box::new(f)))?;
    Ok(if post.status() == 401 {
        challenge_of(&post)
    } else {
        found
    })
}

/// The protected-resource metadata (RFC 9728): from the challenge's same-origin
/// `resource_metadata`, else the well-known locations; it must name `resource` and list the
/// pinned `issuer`.
fn protected_resource(
    client: &mut Client,
    endpoint: &Endpoint,
    found: &Challenge,
    resource: &str,
    issuer: &str,
    attempt: &Attempt,
) -> Result<serde_json::Map<String, Value>, OAuthError> {
    let candidates = match &found.resource_metadata {
        Some(named) => {
            let same_origin =
                url::secure(named).is_some_and(|u| url::origin(&u) == url::origin(endpoint));
            if !same_origin {
                return Err(OAuthError::step(OAuthStep::ResourceMetadataOrigin));
            }
            vec![named.clone()]
        }
        None => url::resource_metadata_candidates(endpoint),
    };
    let step = OAuthStep::ResourceMetadata;
    let mut document = None;
    for candidate in &candidates {
        document = fetch(client, candidate, step, attempt)?;
        if document.is_some() {
            break;
        }
    }
    let protected = document.ok_or_else(|| OAuthError::step(step))?;
    if protected.get("resource").and_then(Value::as_str) != Some(resource) {
        return Err(OAuthError::step(OAuthStep::ResourceMismatch));
    }
    let listed = protected
        .get("authorization_servers")
        .and_then(Value::as_array)
        .is_some_and(|servers| servers.iter().any(|s| s.as_str() == Some(issuer)));
    if !listed {
        return Err(OAuthError::step(OAuthStep::IssuerNotListed));
    }
    Ok(protected)
}

/// The `Bearer` challenge of an answer's `WWW-Authenticate` headers.
fn challenge_of(answer: &Response) -> Challenge {
    challenge::parse(
        answer
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.as_bytes()),
    )
}

/// The configured issuer as a URL: secure, no query.
pub(crate) fn pinned_issuer(issuer: &str) -> Result<Endpoint, OAuthError> {
    url::secure(issuer)
        .filter(|u| u.uri().query().is_none())
        .ok_or_else(|| OAuthError::step(OAuthStep::Issuer))
}

/// An issuer's metadata, validated: a secure token endpoint (https under an https issuer).
pub(crate) fn server_metadata(
    doc: &Map<String, Value>,
    https_issuer: bool,
) -> Result<ServerMetadata, OAuthError> {
    let endpoint = |key: &str| -> Option<Result<Endpoint, OAuthError>> {
        let text = doc.get(key)?.as_str()?;
        Some(
            url::secure(text)
                .filter(|u| u.is_https() || !https_issuer)
                .ok_or_else(|| OAuthError::step(OAuthStep::InsecureEndpoint)),
        )
    };
    let token_endpoint = endpoint("token_endpoint")
        .unwrap_or_else(|| Err(OAuthError::step(OAuthStep::ServerMetadata)))?;
    let authorization_endpoint = endpoint("authorization_endpoint").transpose()?;
    let mut auth_methods =
        strings(doc.get("token_endpoint_auth_methods_supported")).unwrap_or_default();
    if auth_methods.is_empty() {
        auth_methods.push("client_secret_basic".into());
    }
    let pkce_s256 = strings(doc.get("code_challenge_methods_supported"))
        .is_some_and(|m| m.iter().any(|m| m == "S256"));
    let iss_required =
        doc.get("authorization_response_iss_parameter_supported") == Some(&Value::Bool(true));
    Ok(ServerMetadata {
        token_endpoint,
        authorization_endpoint,
        auth_methods,
        pkce_s256,
        iss_required,
    })
}

/// A JSON array of strings (non-strings skipped).
fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    Some(
        value?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// One metadata document: a secure URL answered 200 with a JSON object of at most 64 KiB.
/// `Ok(None)` when this candidate failed for any other reason than time: a request the
/// deadline cut ends discovery at `step` (`failure=timeout`), for the next candidate would
/// have no time either.
fn fetch(
    client: &mut Client,
    text: &str,
    step: OAuthStep,
    attempt: &Attempt,
) -> Result<Option<Map<String, Value>>, OAuthError> {
    let Some(target) = url::secure(text) else {
        return Ok(None);
    };
    let cut = |f: net::NetError, status| {
        if f.kind == NetFailure::Timeout {
            Err(OAuthError::network(step, &f, status))
        } else {
            Ok(None)
        }
    };
    // Its own response flag: a silent server is UNREACHABLE, a trickling one UNKNOWN.
    let request = Request::new(Method::Get, &target).header("accept", "application/json");
    let response = match client.send(&attempt.beside(), &request) {
        Ok(response) => response,
        Err(f) => return cut(f, None),
    };
    let status = response.status();
    if status != 200 {
        return Ok(None);
    }
    let body = match response.read_body(MAX_METADATA_BYTES) {
        Ok(body) => body,
        Err(f) => return cut(f, Some(status)),
    };
    if body.over_limit {
        return Ok(None);
    }
    Ok(serde_json::from_slice(&body.bytes).ok())
}
