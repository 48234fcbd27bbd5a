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
//!    `authorization_servers` must list the pinned issuer exactly, and its `resource` must be
//!    this endpoint by one of three rules ([`ResourceRule`]): equal to the endpoint's
//!    canonical resource URI (any location); or, for the document at the origin's root
//!    well-known URL only, the origin itself (RFC 9728 §3.3 makes it the right value there)
//!    or a same-origin path prefix of the endpoint (as the official TypeScript client
//!    accepts). Tokens are requested for the `resource` as published.
//! 3. **Authorization-server metadata** (RFC 8414, then OpenID Connect discovery) of the
//!    pinned issuer only: the first document whose `issuer` equals it exactly. Its endpoints
//!    must be secure ([`super::url::secure`]), and `https` when the issuer is.
//! 4. **Scope:** configured scopes, else the challenge's, else the metadata's
//!    `scopes_supported`, else none.
//!
//! Metadata requests never carry a credential and never follow a redirect (the network
//! layer follows none); each answer must be a 200 JSON object of at most 64 KiB. Every
//! request is bounded by the attempt's deadline.

use serde_json::{Map, Value};

use super::OAuthError;
use super::challenge::{self, Challenge};
use super::url;
use crate::net::{Client, Endpoint, Method, Request, Response};
use crate::result::reason::OAuthStep;
use crate::runtime::Attempt;

/// Largest metadata document read.
pub(crate) const MAX_METADATA_BYTES: u64 = 64 * 1024;

/// The body of the unauthenticated `POST` that asks for a challenge when the `HEAD` gave
/// none: a request every MCP revision accepts and none keeps state for.
const CHALLENGE_PROBE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#;

/// Which rule bound the protected-resource metadata's `resource` to the endpoint (the
/// `resource_rule` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResourceRule {
    /// The endpoint's canonical resource URI, from any location.
    Exact,
    /// The endpoint's origin, from the root well-known location.
    RootOrigin,
    /// A same-origin path prefix of the endpoint, from the root well-known location.
    PathPrefix,
}

impl ResourceRule {
    /// The evidence word.
    pub(crate) fn as_word(self) -> &'static str {
        match self {
            ResourceRule::Exact => "exact",
            ResourceRule::RootOrigin => "root_origin",
            ResourceRule::PathPrefix => "path_prefix",
        }
    }
}

/// Where the protected-resource metadata came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Location {
    /// A custom URL the challenge named.
    Named,
    /// `/.well-known/oauth-protected-resource<path>`.
    PathInserted,
    /// `/.well-known/oauth-protected-resource` at the origin (named or not).
    Root,
}

/// What discovery established.
#[derive(Clone, Debug)]
pub(crate) struct Discovered {
    /// The resource tokens are requested for: the metadata's `resource` as published.
    pub resource: String,
    /// How that `resource` was bound to the endpoint.
    pub rule: ResourceRule,
    /// The scope to request (precedence applied), space-separated.
    pub scope: Option<String>,
    /// The pinned issuer's validated metadata.
    pub server: ServerMetadata,
}

/// The parts of an issuer's metadata OAuth uses.
#[derive(Clone, Debug)]
pub(crate) struct ServerMetadata {
    /// `token_endpoint`, secure.
    pub token_endpoint: Endpoint,
    /// `authorization_endpoint`, when present and secure (login needs it).
    pub authorization_endpoint: Option<Endpoint>,
    /// `token_endpoint_auth_methods_supported` as listed; `None` when absent or empty (RFC
    /// 8414's default, `client_secret_basic`, then applies).
    pub auth_methods: Option<Vec<String>>,
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
    let (protected, published, rule) =
        protected_resource(client, endpoint, &found, &resource, issuer, attempt)?;
    // The pinned issuer's metadata.
    let server = url::server_metadata_candidates(&issuer_url)
        .iter()
        .filter_map(|c| fetch(client, c, attempt))
        .find(|doc| doc.get("issuer").and_then(Value::as_str) == Some(issuer))
        .ok_or_else(|| OAuthError::step(OAuthStep::ServerMetadata))
        .and_then(|doc| server_metadata(&doc, issuer_url.is_https()))?;
    // The scope: the configured one, else the challenge's, else what the resource supports.
    let scope = if !configured_scopes.is_empty() {
        Some(configured_scopes.join(" "))
    } else if let Some(challenged) = found.scope {
        Some(challenged)
    } else {
        strings(protected.get("scopes_supported"))
            .filter(|s| !s.is_empty())
            .map(|s| s.join(" "))
    };
    Ok(Discovered {
        resource: published,
        rule,
        scope,
        server,
    })
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
/// `resource_metadata`, else the well-known locations; it must list the pinned `issuer` and
/// name this endpoint by a [`ResourceRule`]. The document, its `resource` as published, and
/// the rule that matched.
fn protected_resource(
    client: &mut Client,
    endpoint: &Endpoint,
    found: &Challenge,
    resource: &str,
    issuer: &str,
    attempt: &Attempt,
) -> Result<(Map<String, Value>, String, ResourceRule), OAuthError> {
    let wells = url::resource_metadata_candidates(endpoint);
    let root = wells.last().cloned().unwrap_or_default();
    let candidates: Vec<(String, Location)> = match &found.resource_metadata {
        Some(named) => {
            let same_origin =
                url::secure(named).is_some_and(|u| url::origin(&u) == url::origin(endpoint));
            if !same_origin {
                return Err(OAuthError::step(OAuthStep::ResourceMetadataOrigin));
            }
            let at = if *named == root {
                Location::Root
            } else {
                Location::Named
            };
            vec![(named.clone(), at)]
        }
        None => wells
            .into_iter()
            .map(|c| {
                let at = if c == root {
                    Location::Root
                } else {
                    Location::PathInserted
                };
                (c, at)
            })
            .collect(),
    };
    let (protected, at) = candidates
        .iter()
        .find_map(|(c, at)| fetch(client, c, attempt).map(|doc| (doc, *at)))
        .ok_or_else(|| OAuthError::step(OAuthStep::ResourceMetadata))?;
    let published = protected
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let rule = resource_rule(&published, endpoint, resource, at)
        .ok_or_else(|| OAuthError::step(OAuthStep::ResourceMismatch))?;
    let listed = protected
        .get("authorization_servers")
        .and_then(Value::as_array)
        .is_some_and(|servers| servers.iter().any(|s| s.as_str() == Some(issuer)));
    if !listed {
        return Err(OAuthError::step(OAuthStep::IssuerNotListed));
    }
    Ok((protected, published, rule))
}

/// The rule by which the metadata's `published` resource names `endpoint` (whose canonical
/// URI is `canonical`), given where the document was found; `None`: another resource. Only
/// the root document may name the origin or a path prefix: a path-inserted or custom one
/// describes exactly one resource.
fn resource_rule(
    published: &str,
    endpoint: &Endpoint,
    canonical: &str,
    at: Location,
) -> Option<ResourceRule> {
    let named = Endpoint::parse(published)
        .ok()
        .filter(|_| !published.contains('#'))?;
    if url::resource_uri(&named) == canonical {
        return Some(ResourceRule::Exact);
    }
    if at != Location::Root || url::origin(&named) != url::origin(endpoint) {
        return None;
    }
    let prefix = named.uri().path().trim_end_matches('/');
    if prefix.is_empty() && named.uri().query().is_none() {
        return Some(ResourceRule::RootOrigin);
    }
    let path = endpoint.uri().path();
    let bounded = path
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    (named.uri().query().is_none() && bounded).then_some(ResourceRule::PathPrefix)
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
    let auth_methods =
        strings(doc.get("token_endpoint_auth_methods_supported")).filter(|m| !m.is_empty());
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
/// `None` when this candidate failed, for any reason.
fn fetch(client: &mut Client, text: &str, attempt: &Attempt) -> Option<Map<String, Value>> {
    let target = url::secure(text)?;
    let response = client
        .send(
            attempt,
            &Request::new(Method::Get, &target).header("accept", "application/json"),
        )
        .ok()?;
    if response.status() != 200 {
        return None;
    }
    let body = response.read_body(MAX_METADATA_BYTES).ok()?;
    if body.over_limit {
        return None;
    }
    serde_json::from_slice(&body.bytes).ok()
}
