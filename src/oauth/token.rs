//! Token requests (RFC 6749 §4, with RFC 8707's `resource`) and what a usable token is.
//!
//! The request is a form `POST` to the pinned issuer's token endpoint: the grant's fields,
//! `client_id` (always, whatever the client authentication: RFC 6749 §3.2.1 allows it, and
//! the Python SDK's authorization servers require it even with Basic), `resource` (the
//! resource the metadata names) and `scope` when there is one. The client authentication
//! method ([`choose`]) is the configured one, else `client_secret_basic` for a confidential
//! client when the server lists it (or lists nothing: RFC 8414's default), else
//! `client_secret_post`; a public client sends only `client_id` (`none`), and is never sent
//! to a server whose list lacks `none` unless `none` was configured or registered.
//!
//! The answer must be a 200 JSON object of at most 64 KiB with a b64token `access_token`,
//! `token_type` `Bearer` (any case) and an `expires_in`, if present, from 1 s to 10 years;
//! without `expires_in` the token is given five minutes. Every token in the answer is
//! recorded for redaction before anything else is done with it. An error answer is kept
//! only as its RFC 6749 code, when it is one we know; server text never is.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde_json::{Map, Value};

use super::OAuthError;
use super::discovery::{Discovered, MAX_METADATA_BYTES};
use super::registration::Registered;
use super::url::form;
use crate::contract::{AuthMethod, Secret};
use crate::net::{Client, Endpoint, Method, Request};
use crate::result::reason::{OAuthStep, TokenError};
use crate::result::{Evidence, Fact, Key};
use crate::runtime::{Attempt, SecretLog};

/// The scope that asks for a refresh token (OpenID Connect's, which others adopted).
pub(crate) const OFFLINE_ACCESS: &str = "offline_access";
/// Lifetime of a token whose answer has no `expires_in`.
pub(crate) const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// A token this close to its expiry is not used: it could expire in flight.
pub(crate) const EXPIRY_MARGIN: Duration = Duration::from_secs(5);
/// Longest `expires_in` accepted (ten years).
const MAX_EXPIRES_IN: u64 = 315_360_000;

/// A token and what it is good for.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    /// The access token.
    pub access: Secret,
    /// The refresh token, when one was issued (or kept from before).
    pub refresh: Option<Secret>,
    /// When the access token stops working.
    pub expires_at: SystemTime,
    /// The scope granted (the requested one when the answer names none).
    pub scope: String,
    /// How the client authenticated for it, when it was acquired in this run.
    pub method: Option<MethodChoice>,
    /// The client `login --register` registered for it, saved with it.
    pub registered: Option<Registered>,
    /// The resource it was issued for (RFC 8707), as the metadata named it; empty when not
    /// known (a token file that names none was issued for its binding's resource).
    pub resource: String,
}

impl Token {
    /// Whether the access token can be sent now: well-formed, and not about to expire. The
    /// granted scope is the server's decision: a token is never re-acquired because it was
    /// granted fewer scopes than were asked for.
    pub fn usable(&self, now: SystemTime) -> bool {
        is_b64token(self.access.expose())
            && self
                .expires_at
                .duration_since(now)
                .is_ok_and(|left| left > EXPIRY_MARGIN)
    }

    /// Whether the access token still works now: well-formed and not yet expired. A run that
    /// cannot refresh uses such a token, however close to its expiry.
    pub fn valid(&self, now: SystemTime) -> bool {
        is_b64token(self.access.expose()) && self.expires_at > now
    }

    /// The `Authorization` header value.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.access.expose())
    }
}

/// How the client proves who it is at the token endpoint.
pub(crate) struct ClientAuth<'a> {
    /// `client_id`.
    pub id: &'a str,
    /// The client secret, for a confidential client.
    pub secret: Option<&'a Secret>,
    /// The method configured (`token_endpoint_auth_method`) or registered, if any.
    pub method: Option<AuthMethod>,
}

/// The client authentication a request uses, and — when it was chosen automatically — the
/// other confidential method the server lists (what to try when the client is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MethodChoice {
    /// The method used (or, refused before any request, the one that would have been).
    pub used: AuthMethod,
    /// `client_secret_post` when Basic was chosen from a list holding both.
    pub alternative: Option<AuthMethod>,
}

impl MethodChoice {
    /// The `auth_method` and `auth_method_alternative` evidence.
    pub(crate) fn record(&self, evidence: &mut Evidence) {
        evidence.set(Key::AuthMethod, Fact::Word(self.used.as_str()));
        if let Some(other) = self.alternative {
            evidence.set(Key::AuthMethodAlternative, Fact::Word(other.as_str()));
        }
    }
}

/// The method for `auth` at a server listing `listed` (`None`: it lists nothing). A
/// configured confidential method must be listed; a public client needs `none` listed unless
/// it was configured or registered (the Python SDK's servers list only the confidential
/// methods yet serve public clients: saying `none` is the way there). Refusals are
/// `oauth=auth_method` with the method as evidence, before any request.
pub(crate) fn choose(
    auth: &ClientAuth<'_>,
    listed: Option<&[String]>,
) -> Result<MethodChoice, OAuthError> {
    let lists = |m: AuthMethod| listed.is_none_or(|l| l.iter().any(|x| x == m.as_str()));
    let refuse = |m: AuthMethod| {
        OAuthError::step(OAuthStep::AuthMethod).with_method(MethodChoice {
            used: m,
            alternative: None,
        })
    };
    let only = |used| MethodChoice {
        used,
        alternative: None,
    };
    match (auth.method, auth.secret.is_some()) {
        (Some(AuthMethod::None), _) => Ok(only(AuthMethod::None)),
        (Some(m), _) if lists(m) => Ok(only(m)),
        (Some(m), _) => Err(refuse(m)),
        (None, false) if lists(AuthMethod::None) => Ok(only(AuthMethod::None)),
        (None, false) => Err(refuse(AuthMethod::None)),
        (None, true) if lists(AuthMethod::ClientSecretBasic) => Ok(MethodChoice {
            used: AuthMethod::ClientSecretBasic,
            alternative: listed
                .filter(|_| lists(AuthMethod::ClientSecretPost))
                .map(|_| AuthMethod::ClientSecretPost),
        }),
        (None, true) if lists(AuthMethod::ClientSecretPost) => {
            Ok(only(AuthMethod::ClientSecretPost))
        }
        (None, true) => Err(OAuthError::step(OAuthStep::AuthMethod)),
    }
}

/// Requests a token with `grant` (the grant's own form fields, `grant_type` first).
pub(crate) fn request(
    client: &mut Client,
    discovered: &Discovered,
    auth: &ClientAuth<'_>,
    grant: &[(&str, &str)],
    secrets: &SecretLog,
    attempt: &Attempt,
) -> Result<Token, OAuthError> {
    let choice = choose(auth, discovered.server.auth_methods.as_deref())?;
    let mut fields: Vec<(&str, &str)> = grant.to_vec();
    fields.push(("resource", discovered.resource.as_str()));
    // A refresh never asks for offline_access: the grant it refreshes has it or not, and an
    // authorization server may refuse it on a refresh (`invalid_scope`).
    let refresh = grant.first() == Some(&("grant_type", "refresh_token"));
    let scope = discovered.scope.as_deref().map(|s| {
        s.split(' ')
            .filter(|w| !(refresh && *w == OFFLINE_ACCESS))
            .collect::<Vec<_>>()
            .join(" ")
    });
    if let Some(scope) = scope.as_deref().filter(|s| !s.is_empty()) {
        fields.push(("scope", scope));
    }
    let answer = client_post(
        client,
        &discovered.server.token_endpoint,
        (auth, choice),
        &fields,
        OAuthStep::TokenEndpoint,
        secrets,
        attempt,
    )?;
    if answer.status != 200 {
        return Err(answer.refusal(OAuthStep::TokenEndpoint).with_method(choice));
    }
    let doc = answer
        .doc
        .ok_or_else(|| OAuthError::step(OAuthStep::TokenResponse))?;
    let mut token = parse(&doc, discovered.scope.as_deref(), SystemTime::now())?;
    token.method = Some(choice);
    token.resource = discovered.resource.clone();
    Ok(token)
}

/// What an authorization server answered to a form POST.
pub(crate) struct FormAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The body, when it is a JSON object of at most 64 KiB.
    pub doc: Option<Map<String, Value>>,
}

impl FormAnswer {
    /// The refusal at `step`: the RFC 6749 error code when it is one we know, and the status.
    pub(crate) fn refusal(&self, step: fn(Option<TokenError>) -> OAuthStep) -> OAuthError {
        let error = self
            .doc
            .as_ref()
            .and_then(|d| d.get("error"))
            .and_then(Value::as_str)
            .and_then(TokenError::parse);
        OAuthError::step(step(error)).status(self.status)
    }
}

/// A form POST of `fields` to `endpoint`, authenticated as the client (the token endpoint's
/// and the pushed-authorization endpoint's way): `client_id` in the body always, the secret
/// in a Basic header or in the body as `choice` says. Every token-like value of the answer
/// is recorded for redaction before anything else reads it. No answer is `step(None)` with
/// the failure word and the method.
pub(crate) fn client_post(
    client: &mut Client,
    endpoint: &Endpoint,
    (auth, choice): (&ClientAuth<'_>, MethodChoice),
    fields: &[(&str, &str)],
    step: fn(Option<TokenError>) -> OAuthStep,
    secrets: &SecretLog,
    attempt: &Attempt,
) -> Result<FormAnswer, OAuthError> {
    let mut fields: Vec<(&str, &str)> = fields.to_vec();
    fields.push(("client_id", auth.id));
    let basic = match (choice.used, auth.secret) {
        (AuthMethod::ClientSecretBasic, Some(secret)) => Some(basic(auth.id, secret)),
        (AuthMethod::ClientSecretPost, Some(secret)) => {
            fields.push(("client_secret", secret.expose()));
            None
        }
        _ => None,
    };
    let body = form(&fields);
    let mut req = Request::new(Method::Post, endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body.as_bytes());
    if let Some(header) = basic.as_deref() {
        req = req.header("authorization", header);
    }
    // Its own response flag: whether the endpoint answered part of this request decides
    // UNREACHABLE or UNKNOWN when the deadline cuts it.
    let failed = |f: &crate::net::NetError, status| {
        OAuthError::network(step(None), f, status).with_method(choice)
    };
    let response = client
        .send(&attempt.beside(), &req)
        .map_err(|f| failed(&f, None))?;
    let status = response.status();
    let body = response
        .read_body(MAX_METADATA_BYTES)
        .map_err(|f| failed(&f, Some(status)))?;
    let doc: Option<Map<String, Value>> = if body.over_limit {
        None
    } else {
        serde_json::from_slice(&body.bytes).ok()
    };
    if let Some(doc) = &doc {
        // Whatever comes next, these values are never shown.
        for key in ["access_token", "refresh_token", "id_token"] {
            if let Some(value) = doc.get(key).and_then(Value::as_str) {
                secrets.record(&Secret::new(value.to_string()));
            }
        }
    }
    Ok(FormAnswer { status, doc })
}

/// A token answer, validated.
pub(crate) fn parse(
    doc: &Map<String, Value>,
    requested_scope: Option<&str>,
    now: SystemTime,
) -> Result<Token, OAuthError> {
    let bad = || OAuthError::step(OAuthStep::TokenResponse);
    let access = doc
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| is_b64token(t))
        .ok_or_else(bad)?;
    let bearer = doc
        .get("token_type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("bearer"));
    if !bearer {
        return Err(bad());
    }
    let lifetime = match doc.get("expires_in") {
        None | Some(Value::Null) => DEFAULT_LIFETIME,
        Some(v) => match v.as_u64() {
            Some(s) if (1..=MAX_EXPIRES_IN).contains(&s) => Duration::from_secs(s),
            _ => return Err(bad()),
        },
    };
    let refresh = doc
        .get("refresh_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(|t| Secret::new(t.to_string()));
    let scope = doc
        .get("scope")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .or(requested_scope)
        .unwrap_or_default()
        .to_string();
    Ok(Token {
        access: Secret::new(access.to_string()),
        refresh,
        expires_at: now + lifetime,
        scope,
        method: None,
        registered: None,
        resource: String::new(),
    })
}

/// RFC 6750 §2.1 `b64token`: `[A-Za-z0-9-._~+/]+` then `=` padding only.
pub(crate) fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// `Basic base64(form(id) ":" form(secret))` (RFC 6749 §2.3.1).
fn basic(id: &str, secret: &Secret) -> String {
    let pair = format!(
        "{}:{}",
        super::url::form_encode(id),
        super::url::form_encode(secret.expose())
    );
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_bearer_answer_is_a_token() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let t = parse(
            &doc(json!({"access_token":"a.b-c_d~e+f/g==","token_type":"bearer","expires_in":60,"refresh_token":"r","scope":"read"})),
            Some("read write"),
            now,
        )
        .expect("token");
        assert_eq!(t.expires_at, now + Duration::from_secs(60));
        assert_eq!(t.scope, "read", "the granted scope wins");
        assert_eq!(t.refresh.as_ref().map(Secret::expose), Some("r"));
        assert!(t.usable(now) && !t.usable(now + Duration::from_secs(56)));
        let t = parse(
            &doc(json!({"access_token":"x","token_type":"Bearer"})),
            Some("read"),
            now,
        )
        .expect("token");
        assert_eq!(
            t.expires_at,
            now + DEFAULT_LIFETIME,
            "no expires_in: five minutes"
        );
        assert_eq!(t.scope, "read");
        assert!(t.refresh.is_none());
    }

    #[test]
    fn anything_else_is_not_a_token() {
        let now = SystemTime::now();
        for bad in [
            json!({"token_type":"Bearer"}),
            json!({"access_token":"","token_type":"Bearer"}),
            json!({"access_token":"a b","token_type":"Bearer"}),
            json!({"access_token":"=","token_type":"Bearer"}),
            json!({"access_token":"x","token_type":"DPoP"}),
            json!({"access_token":"x"}),
            json!({"access_token":"x","token_type":"Bearer","expires_in":0}),
            json!({"access_token":"x","token_type":"Bearer","expires_in":"60"}),
            json!({"access_token":"x","token_type":"Bearer","expires_in":315_360_001u64}),
            json!({"access_token":"x","token_type":"Bearer","expires_in":1.5}),
        ] {
            assert!(parse(&doc(bad.clone()), None, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        let header = basic("agent health", &Secret::new("p%+:ss word".into()));
        let encoded = header.strip_prefix("Basic ").unwrap_or_default();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&decoded),
            "agent+health:p%25%2B%3Ass+word"
        );
    }

    #[test]
    fn the_method_is_configured_or_chosen_from_the_metadata() {
        use AuthMethod::{ClientSecretBasic as Basic, ClientSecretPost as Post, None as Public};
        let value = Secret::new("s".into());
        let pick = |method, secret: bool, listed: Option<&[&str]>| {
            let listed: Option<Vec<String>> =
                listed.map(|l| l.iter().map(|s| s.to_string()).collect());
            let auth = ClientAuth {
                id: "c",
                secret: secret.then_some(&value),
                method,
            };
            choose(&auth, listed.as_deref()).map_err(|e| match e {
                OAuthError::Step { step, facts, .. } => (step, facts.get(Key::AuthMethod).cloned()),
                _ => (OAuthStep::Callback, None),
            })
        };
        let ok = |used, alternative| Ok(MethodChoice { used, alternative });
        let both: &[&str] = &["client_secret_post", "client_secret_basic"];
        // Automatic: Basic when listed (or nothing is listed), post as the alternative.
        assert_eq!(pick(None, true, Some(both)), ok(Basic, Some(Post)));
        assert_eq!(pick(None, true, None), ok(Basic, None));
        assert_eq!(
            pick(None, true, Some(&["none", "client_secret_post"])),
            ok(Post, None)
        );
        assert_eq!(
            pick(None, true, Some(&["private_key_jwt"])),
            Err((OAuthStep::AuthMethod, None))
        );
        // Configured: used as it is, when listed.
        assert_eq!(pick(Some(Post), true, Some(both)), ok(Post, None));
        assert_eq!(
            pick(Some(Post), true, Some(&["client_secret_basic"])),
            Err((
                OAuthStep::AuthMethod,
                Some(Fact::Word("client_secret_post"))
            ))
        );
        // A public client: only where `none` is listed, nothing is, or it was said.
        assert_eq!(pick(None, false, Some(&["none"])), ok(Public, None));
        assert_eq!(pick(None, false, None), ok(Public, None));
        assert_eq!(
            pick(None, false, Some(both)),
            Err((OAuthStep::AuthMethod, Some(Fact::Word("none"))))
        );
        assert_eq!(pick(Some(Public), false, Some(both)), ok(Public, None));
    }
}
