//! A toy OAuth authorization server built into the fake MCP server, for demos, the docs and
//! quick tests (the real one, oidc-provider, is in the interop tests).
//!
//! Every route that requires a bearer token (`require_bearer`) is a protected resource: its
//! 401 names `resource_metadata`, served at `/.well-known/oauth-protected-resource<path>`
//! with the server itself as the authorization server. The server's own metadata is at
//! `/.well-known/oauth-authorization-server` (issuer = `http://127.0.0.1:PORT`).
//!
//! * `POST /token`: `client_credentials` for the confidential client
//!   `agenthealth-service` / `demo-secret` (`client_secret_basic` or `_post`);
//!   `authorization_code` with PKCE S256 for any client whose code came from `/authorize`;
//!   `refresh_token` with a refresh token this server issued, or [`HANDED_OVER_REFRESH`]
//!   (each rotated on use). Every
//!   token request must name one of the protected resources. The access token is the
//!   route's `require_bearer` value, for an hour.
//! * `GET /authorize`: approves at once (no login page) with a 302 to the `redirect_uri`
//!   carrying `code`, `state` and `iss`, like the conformance suite's authorization servers.
//!   Only `http://127.0.0.1:<port>/callback` redirects are accepted.
//! * `POST /register` (RFC 7591): registers any client whose `redirect_uris` are such
//!   callbacks, as `demo-client-N`, with the `token_endpoint_auth_method` asked for (`none`
//!   by default) and, for a confidential one, a secret.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::lock;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::util::{b64_decode, form_decode};

/// The confidential client of the toy server.
pub const CLIENT_ID: &str = "agenthealth-service";
/// Its secret.
pub const CLIENT_SECRET: &str = "demo-secret";

/// A refresh token the server accepts without having issued it in this run: one handed over
/// from elsewhere (docs/oauth.md's `grant: refresh_token` example). Rotated like any other.
pub const HANDED_OVER_REFRESH: &str = "demo-refresh";

/// Codes issued by `/authorize` (code → challenge, redirect), live refresh tokens, and how
/// many clients `/register` registered (their ids count on their own, so a document's first
/// registration is `demo-client-1` whatever it logged in before).
pub(super) struct OAuthState {
    codes: HashMap<String, (String, String)>,
    refresh: Vec<String>,
    issued: u64,
    registered: u64,
}

impl Default for OAuthState {
    fn default() -> OAuthState {
        OAuthState {
            codes: HashMap::new(),
            refresh: vec![HANDED_OVER_REFRESH.to_string()],
            issued: 0,
            registered: 0,
        }
    }
}

/// An answer: status, extra headers, JSON body.
pub(super) struct Answered {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Answers the toy server's paths; `None` for every other request.
pub(super) fn answer(
    base: &str,
    protected: &[(String, String)],
    state: &Mutex<OAuthState>,
    method: &str,
    target: &str,
    authorization: Option<&str>,
    body: &[u8],
) -> Option<Answered> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if protected.is_empty() {
        return None;
    }
    let json_ok = |v: Value| Answered {
        status: 200,
        headers: Vec::new(),
        body: v.to_string().into_bytes(),
    };
    if let Some(resource_path) = path.strip_prefix("/.well-known/oauth-protected-resource") {
        let known = protected.iter().any(|(p, _)| p == resource_path);
        return Some(if method == "GET" && known {
            json_ok(json!({
                "resource": format!("{base}{resource_path}"),
                "authorization_servers": [base],
                "scopes_supported": ["mcp:read"],
                "bearer_methods_supported": ["header"]
            }))
        } else {
            error(404, "not_found")
        });
    }
    match (method, path) {
        ("GET", "/.well-known/oauth-authorization-server") => Some(json_ok(json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["mcp:read"],
            "registration_endpoint": format!("{base}/register"),
            "authorization_response_iss_parameter_supported": true
        }))),
        ("GET", "/authorize") => Some(authorize(base, state, query)),
        ("POST", "/register") => Some(register(state, body)),
        ("POST", "/token") => Some(token(base, protected, state, authorization, body)),
        _ => None,
    }
}

fn authorize(base: &str, state: &Mutex<OAuthState>, query: &str) -> Answered {
    let q = form_decode(query);
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let redirect = get("redirect_uri").unwrap_or_default();
    let loopback = redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback");
    let (Some(challenge), Some(st), true) = (get("code_challenge"), get("state"), loopback) else {
        return error(400, "invalid_request");
    };
    if get("code_challenge_method").as_deref() != Some("S256")
        || get("response_type").as_deref() != Some("code")
    {
        return error(400, "invalid_request");
    }
    let code = {
        let mut s = lock(state);
        s.issued += 1;
        let code = format!("demo-code-{}", s.issued);
        s.codes.insert(code.clone(), (challenge, redirect.clone()));
        code
    };
    let location = format!(
        "{redirect}?code={code}&state={}&iss={}",
        encode(&st),
        encode(base)
    );
    Answered {
        status: 302,
        headers: vec![("Location".into(), location)],
        body: Vec::new(),
    }
}

fn register(state: &Mutex<OAuthState>, body: &[u8]) -> Answered {
    let Ok(asked) = serde_json::from_slice::<Value>(body) else {
        return error(400, "invalid_client_metadata");
    };
    let redirects = asked["redirect_uris"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let loopback = !redirects.is_empty()
        && redirects.iter().all(|r| {
            r.as_str()
                .is_some_and(|r| r.starts_with("http://127.0.0.1:") && r.ends_with("/callback"))
        });
    if !loopback {
        return error(400, "invalid_redirect_uri");
    }
    let method = asked["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    let n = {
        let mut s = lock(state);
        s.registered += 1;
        s.registered
    };
    let mut doc = json!({
        "client_id": format!("demo-client-{n}"),
        "client_id_issued_at": 0,
        "token_endpoint_auth_method": method,
        "redirect_uris": redirects,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    if method != "none" {
        doc["client_secret"] = json!(format!("demo-client-secret-{n}"));
        doc["client_secret_expires_at"] = json!(0);
    }
    Answered {
        status: 201,
        headers: vec![("Cache-Control".into(), "no-store".into())],
        body: doc.to_string().into_bytes(),
    }
}

fn token(
    base: &str,
    protected: &[(String, String)],
    state: &Mutex<OAuthState>,
    authorization: Option<&str>,
    body: &[u8],
) -> Answered {
    let form = form_decode(&String::from_utf8_lossy(body));
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let resource = get("resource").unwrap_or_default();
    let Some((_, access)) = protected
        .iter()
        .find(|(p, _)| format!("{base}{p}") == resource)
    else {
        return error(400, "invalid_target");
    };
    let mut s = lock(state);
    match get("grant_type").as_deref() {
        Some("client_credentials") => {
            let (id, secret) = client(authorization, &form);
            if id.as_deref() != Some(CLIENT_ID) || secret.as_deref() != Some(CLIENT_SECRET) {
                return error(401, "invalid_client");
            }
            issued(access, None, get("scope"))
        }
        Some("authorization_code") => {
            let code = get("code").unwrap_or_default();
            let Some((challenge, redirect)) = s.codes.remove(&code) else {
                return error(400, "invalid_grant");
            };
            let verifier = get("code_verifier").unwrap_or_default();
            let computed = b64url(&Sha256::digest(verifier.as_bytes()));
            if computed != challenge || get("redirect_uri").as_deref() != Some(&redirect) {
                return error(400, "invalid_grant");
            }
            s.issued += 1;
            let refresh = format!("demo-refresh-{}", s.issued);
            s.refresh.push(refresh.clone());
            issued(access, Some(&refresh), get("scope"))
        }
        Some("refresh_token") => {
            let old = get("refresh_token").unwrap_or_default();
            let Some(at) = s.refresh.iter().position(|r| *r == old) else {
                return error(400, "invalid_grant");
            };
            s.refresh.remove(at);
            s.issued += 1;
            let refresh = format!("demo-refresh-{}", s.issued);
            s.refresh.push(refresh.clone());
            issued(access, Some(&refresh), get("scope"))
        }
        _ => error(400, "unsupported_grant_type"),
    }
}

/// The client's id and secret: HTTP Basic (form-encoded parts) or the form's.
fn client(
    authorization: Option<&str>,
    form: &[(String, String)],
) -> (Option<String>, Option<String>) {
    if let Some(encoded) = authorization.and_then(|a| a.strip_prefix("Basic ")) {
        let decoded = b64_decode(encoded.trim()).unwrap_or_default();
        let text = String::from_utf8_lossy(&decoded).into_owned();
        if let Some((id, secret)) = text.split_once(':') {
            let un = |s: &str| {
                form_decode(&format!("x={s}"))
                    .pop()
                    .map(|(_, v)| v)
                    .unwrap_or_default()
            };
            return (Some(un(id)), Some(un(secret)));
        }
    }
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    (get("client_id"), get("client_secret"))
}

fn issued(access: &str, refresh: Option<&str>, scope: Option<String>) -> Answered {
    let mut doc = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": scope.unwrap_or_else(|| "mcp:read".into()),
    });
    if let Some(r) = refresh {
        doc["refresh_token"] = json!(r);
    }
    Answered {
        status: 200,
        headers: vec![("Cache-Control".into(), "no-store".into())],
        body: doc.to_string().into_bytes(),
    }
}

fn error(status: u16, code: &str) -> Answered {
    Answered {
        status,
        headers: Vec::new(),
        body: json!({"error": code}).to_string().into_bytes(),
    }
}

fn b64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
