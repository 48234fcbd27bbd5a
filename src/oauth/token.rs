//! Token requests (RFC 6749 §4, with RFC 8707's `resource`) and what a usable token is.
//!
//! The request is a form `POST` to the pinned issuer's token endpoint: the grant's fields,
//! `client_id`, `resource` (the canonical MCP resource URI) and `scope` when there is one.
//! A confidential client authenticates with `client_secret_basic` (id and secret
//! form-encoded first, RFC 6749 §2.3.1) when the server lists it, else `client_secret_post`;
//! a public client sends only `client_id`.
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
use super::url::form;
use crate::contract::Secret;
use crate::net::{Client, Method, Request};
use crate::result::reason::{OAuthStep, TokenError};
use crate::runtime::{Attempt, SecretLog};

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
    let mut fields: Vec<(&str, &str)> = grant.to_vec();
    let basic = match auth.secret {
        None => {
            fields.push(("client_id", auth.id));
            None
        }
        Some(secret) => match method(&discovered.server.auth_methods)? {
            Method_::Basic => Some(basic(auth.id, secret)),
            Method_::Post => {
                fields.push(("client_id", auth.id));
                fields.push(("client_secret", secret.expose()));
                None
            }
        },
    };
    fields.push(("resource", discovered.resource.as_str()));
    if let Some(scope) = discovered.scope.as_deref() {
        fields.push(("scope", scope));
    }
    let body = form(&fields);
    let mut req = Request::new(Method::Post, &discovered.server.token_endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body.as_bytes());
    if let Some(header) = basic.as_deref() {
        req = req.header("authorization", header);
    }
    // Its own response flag: whether the token endpoint answered part of this request
    // decides UNREACHABLE or UNKNOWN when the deadline cuts it.
    let step = OAuthStep::TokenEndpoint(None);
    let response = client
        .send(&attempt.beside(), &req)
        .map_err(|f| OAuthError::network(step, &f, None))?;
    let status = response.status();
    let body = response
        .read_body(MAX_METADATA_BYTES)
        .map_err(|f| OAuthError::network(step, &f, Some(status)))?;
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
    if status != 200 {
        let error = doc
            .as_ref()
            .and_then(|d| d.get("error"))
            .and_then(Value::as_str)
            .and_then(TokenError::parse);
        return Err(OAuthError::step(OAuthStep::TokenEndpoint(error)).status(status));
    }
    let doc = doc.ok_or_else(|| OAuthError::step(OAuthStep::TokenResponse))?;
    parse(&doc, discovered.scope.as_deref(), SystemTime::now())
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

enum Method_ {
    Basic,
    Post,
}

/// The client authentication method for a confidential client: `client_secret_basic` when
/// listed, else `client_secret_post`.
fn method(supported: &[String]) -> Result<Method_, OAuthError> {
    if supported.iter().any(|m| m == "client_secret_basic") {
        Ok(Method_::Basic)
    } else if supported.iter().any(|m| m == "client_secret_post") {
        Ok(Method_::Post)
    } else {
        Err(OAuthError::step(OAuthStep::AuthMethod))
    }
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
    fn the_method_comes_from_the_metadata() {
        let m = |list: &[&str]| method(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(matches!(
            m(&["client_secret_post", "client_secret_basic"]),
            Ok(Method_::Basic)
        ));
        assert!(matches!(
            m(&["none", "client_secret_post"]),
            Ok(Method_::Post)
        ));
        assert!(m(&["private_key_jwt"]).is_err());
    }
}
