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
pub(crate) enum Location {
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
    /// The scope to request (precedence applied), space-separated.
    pub scope: Option<String>,
    /// The pinned issuer's validated metadata.
    pub server: ServerMetadata,
    /// What the authentication check reports of it (`challenge_scope`, `discovery`,
    /// `resource_rule`).
    pub evidence: Evidence,
}

/// The parts of an issuer's metadata OAuth uses.
#[derive(Clone, Debug)]
pub(crate) struct ServerMetadata {
    /// `token_endpoint`, secure.
    pub token_endpoint: Endpoint,
    /// `authorization_endpoint`, when present and secure (login needs it).
    pub authorization_endpoint: Option<Endpoint>,
    /// `registration_endpoint` (RFC 7591), when present and secure (`login --register`).
    pub registration_endpoint: Option<Endpoint>,
    /// `pushed_authorization_request_endpoint` (RFC 9126), when present and secure.
    pub par_endpoint: Option<Endpoint>,
    /// `require_pushed_authorization_requests: true`.
    pub par_required: bool,
    /// `scopes_supported`: the entries that are scope tokens.
    pub scopes_supported: Vec<String>,
    /// An OpenID Connect provider that honours `prompt=consent` (`prompt_values_supported`
    /// lists it, or, absent, the document is an OpenID one): what a refresh token may need.
    pub consent_prompt: bool,
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
    let located = protected_resource(client, endpoint, &found, &resource, issuer, attempt)?;
    // A 2025-03-26 server publishes no protected-resource metadata: its authorization server
    // is at its own origin, so only a pinned issuer there is looked up that way, and only
    // for an endpoint that answered 401.
    let compat = located.is_none();
    if compat
        && (!found.unauthorized
            || found.resource_metadata.is_some()
            || url::origin(&issuer_url) != url::origin(endpoint))
    {
        return Err(OAuthError::step(OAuthStep::ResourceMetadata));
    }
    let (protected, published, rule) =
        located.unwrap_or_else(|| (Map::new(), resource.clone(), ResourceRule::Exact));
    let server = issuer_metadata(client, &issuer_url, issuer, compat, attempt)?;
    let mut evidence = Evidence::default();
    if compat {
        evidence.set(Key::Discovery, Fact::Word("2025-03-26"));
    }
    // Said only when the binding was not exact: the root document named the origin or a
    // path prefix.
    if rule != ResourceRule::Exact {
        evidence.set(Key::ResourceRule, Fact::Word(rule.as_word()));
    }
    let scope = scope(configured_scopes, &found, &protected, &mut evidence);
    Ok(Discovered {
        resource: published,
        scope,
        server,
        evidence,
    })
}

/// The pinned issuer's metadata: the first document whose `issuer` is the pin, exactly.
/// For a 2025-03-26 server (`compat`) the MCP origin's own RFC 8414 document is a candidate
/// too, and when there is none and the pin is that origin, the specification's default
/// endpoints stand in (`/authorize`, `/token`, `/register`; PKCE S256, which that revision
/// required).
fn issuer_metadata(
    client: &mut Client,
    issuer_url: &Endpoint,
    issuer: &str,
    compat: bool,
    attempt: &Attempt,
) -> Result<ServerMetadata, OAuthError> {
    let origin = url::origin(issuer_url);
    let mut candidates = url::server_metadata_candidates(issuer_url);
    let at_origin = format!("{origin}/.well-known/oauth-authorization-server");
    if compat && !candidates.contains(&at_origin) {
        candidates.push(at_origin);
    }
    let step = OAuthStep::ServerMetadata;
    let mut named = Vec::new();
    let mut pinned = None;
    for candidate in &candidates {
        if let Fetched::Doc(doc) = fetch(client, candidate, step, attempt)? {
            let this = doc.get("issuer").and_then(Value::as_str);
            named.extend(this.map(str::to_string));
            if this == Some(issuer) {
                pinned = Some(doc);
                break;
            }
        }
    }
    match pinned {
        Some(doc) => server_metadata(&doc, issuer_url.is_https()),
        None if compat && url::resource_uri(issuer_url) == origin => {
            let at = |path: &str| Endpoint::parse(&format!("{origin}{path}")).ok();
            let token_endpoint =
                at("/token").ok_or_else(|| OAuthError::step(OAuthStep::ServerMetadata))?;
            Ok(ServerMetadata {
                token_endpoint,
                authorization_endpoint: at("/authorize"),
                registration_endpoint: at("/register"),
                par_endpoint: None,
                par_required: false,
                scopes_supported: Vec::new(),
                consent_prompt: false,
                auth_methods: None,
                pkce_s256: true,
                iss_required: false,
            })
        }
        None => {
            let slash = slash_apart(issuer, &named);
            Err(OAuthError::step(OAuthStep::ServerMetadata)
                .with_facts(|f| slash.into_iter().for_each(|w| f.set(Key::IssuerSlash, w))))
        }
    }
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
pub(crate) fn challenge(
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
    let mut found = challenge_of(&head);
    found.unauthorized = head.status() == 401;
    drop(head);
    if found.names_anything() {
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
        Challenge {
            unauthorized: true,
            ..challenge_of(&post)
        }
    } else {
        found
    })
}

/// A metadata document as fetched (a JSON object).
pub(crate) type MetadataDoc = Map<String, Value>;

/// The document, its `resource` as published, and the rule that bound it.
type Located = (MetadataDoc, String, ResourceRule);

/// The protected-resource metadata (RFC 9728): from the challenge's same-origin
/// `resource_metadata`, else the well-known locations; it must list the pinned `issuer` and
/// name this endpoint by a [`ResourceRule`]. `None` when every location answered without a
/// document (what a 2025-03-26 server does); no answer at all is `resource_metadata`.
fn protected_resource(
    client: &mut Client,
    endpoint: &Endpoint,
    found: &Challenge,
    resource: &str,
    issuer: &str,
    attempt: &Attempt,
) -> Result<Option<Located>, OAuthError> {
    let Some((protected, at)) = resource_document(client, endpoint, found, attempt)? else {
        return Ok(None);
    };
    let published = protected
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let rule = resource_rule(&published, endpoint, resource, at)
        .ok_or_else(|| OAuthError::step(OAuthStep::ResourceMismatch))?;
    let servers = strings(protected.get("authorization_servers")).unwrap_or_default();
    if !servers.iter().any(|s| s == issuer) {
        let slash = slash_apart(issuer, &servers);
        return Err(OAuthError::step(OAuthStep::IssuerNotListed)
            .with_facts(|f| slash.into_iter().for_each(|w| f.set(Key::IssuerSlash, w))));
    }
    Ok(Some((protected, published, rule)))
}

/// How `named` (what a server publishes) differs from the `pinned` issuer when only by a
/// trailing slash: the `issuer_slash` fact, `with` or `without` (the server's spelling).
pub(crate) fn slash_apart(pinned: &str, named: &[String]) -> Option<Fact> {
    named.iter().find_map(|n| {
        if n.strip_suffix('/') == Some(pinned) {
            Some(Fact::Word("with"))
        } else if pinned.strip_suffix('/') == Some(n.as_str()) {
            Some(Fact::Word("without"))
        } else {
            None
        }
    })
}

/// The protected-resource metadata document and where it was: the challenge's same-origin
/// `resource_metadata`, else the well-known locations in order. `None` when every location
/// answered without a document; no answer at all is `resource_metadata`.
pub(crate) fn resource_document(
    client: &mut Client,
    endpoint: &Endpoint,
    found: &Challenge,
    attempt: &Attempt,
) -> Result<Option<(MetadataDoc, Location)>, OAuthError> {
    let wells = url::resource_metadata_candidates(endpoint);
    let root = wells.last().cloned().unwrap_or_default();
    let at = |c: &str, otherwise| {
        if c == root { Location::Root } else { otherwise }
    };
    let candidates: Vec<(String, Location)> = match &found.resource_metadata {
        Some(named) => {
            let same_origin =
                url::secure(named).is_some_and(|u| url::origin(&u) == url::origin(endpoint));
            if !same_origin {
                return Err(OAuthError::step(OAuthStep::ResourceMetadataOrigin));
            }
            vec![(named.clone(), at(named, Location::Named))]
        }
        None => wells
            .iter()
            .map(|c| (c.clone(), at(c, Location::PathInserted)))
            .collect(),
    };
    let step = OAuthStep::ResourceMetadata;
    let mut unanswered = false;
    for (c, at) in &candidates {
        match fetch(client, c, step, attempt)? {
            Fetched::Doc(doc) => return Ok(Some((doc, *at))),
            Fetched::Answered => {}
            Fetched::Unanswered => unanswered = true,
        }
    }
    if unanswered {
        Err(OAuthError::step(OAuthStep::ResourceMetadata))
    } else {
        Ok(None)
    }
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
    let registration_endpoint = endpoint("registration_endpoint").transpose()?;
    let par_endpoint = endpoint("pushed_authorization_request_endpoint").transpose()?;
    let par_required = doc.get("require_pushed_authorization_requests") == Some(&Value::Bool(true));
    let scopes_supported = strings(doc.get("scopes_supported"))
        .unwrap_or_default()
        .into_iter()
        .filter(|s| is_scope_token(s))
        .collect();
    let consent_prompt = match strings(doc.get("prompt_values_supported")) {
        Some(prompts) => prompts.iter().any(|p| p == "consent"),
        None => {
            doc.contains_key("subject_types_supported")
                || doc.contains_key("id_token_signing_alg_values_supported")
        }
    };
    let auth_methods =
        strings(doc.get("token_endpoint_auth_methods_supported")).filter(|m| !m.is_empty());
    let pkce_s256 = strings(doc.get("code_challenge_methods_supported"))
        .is_some_and(|m| m.iter().any(|m| m == "S256"));
    let iss_required =
        doc.get("authorization_response_iss_parameter_supported") == Some(&Value::Bool(true));
    Ok(ServerMetadata {
        token_endpoint,
        authorization_endpoint,
        registration_endpoint,
        par_endpoint,
        par_required,
        scopes_supported,
        consent_prompt,
        auth_methods,
        pkce_s256,
        iss_required,
    })
}

/// A JSON array of strings (non-strings skipped).
pub(crate) fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    Some(
        value?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// What one metadata location gave.
pub(crate) enum Fetched {
    /// A 200 JSON object of at most 64 KiB.
    Doc(MetadataDoc),
    /// Something else: another status, too large, not a JSON object.
    Answered,
    /// No answer (or no URL to ask).
    Unanswered,
}

/// One metadata document: a secure URL answered 200 with a JSON object of at most 64 KiB.
/// `Unanswered` when it got no answer for any other reason than time: a request the
/// deadline cut ends discovery at `step` (`failure=timeout`), for the next candidate would
/// have no time either.
pub(crate) fn fetch(
    client: &mut Client,
    text: &str,
    step: OAuthStep,
    attempt: &Attempt,
) -> Result<Fetched, OAuthError> {
    let Some(target) = url::secure(text) else {
        return Ok(Fetched::Unanswered);
    };
    let cut = |f: net::NetError, status| {
        if f.kind == NetFailure::Timeout {
            Err(OAuthError::network(step, &f, status))
        } else {
            Ok(Fetched::Unanswered)
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
        return Ok(Fetched::Answered);
    }
    let body = match response.read_body(MAX_METADATA_BYTES) {
        Ok(body) => body,
        Err(f) => return cut(f, Some(status)),
    };
    if body.over_limit {
        return Ok(Fetched::Answered);
    }
    Ok(serde_json::from_slice(&body.bytes).map_or(Fetched::Answered, Fetched::Doc))
}
