//! Dynamic client registration (RFC 7591): what is asked for, what is kept of the answer,
//! and what is refused.

use super::*;
use crate::contract::AuthMethod;
use crate::oauth::discovery;
use crate::oauth::registration::{Registered, method_to_register, register};

/// Registers at a fake whose `/register` answers `reply`, as login would for a public
/// client asking `read`.
fn registered(
    reply: Reply,
    method: AuthMethod,
) -> (Fake, Result<Registered, OAuthError>, SecretLog) {
    let fake = Fake::start(move |root| {
        let mut w = good(root);
        if let Some(doc) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
            doc["registration_endpoint"] = json!(format!("{root}/register"));
        }
        w.overrides.insert("/register".into(), reply.clone());
        w
    });
    let secrets = SecretLog::new();
    let mut client = Client::new(Reuse::Fresh);
    let found = discovery::discover(&mut client, &fake.endpoint(), &fake.root, &[], &attempt());
    let server = found.expect("discovered").server;
    let r = register(
        &mut client,
        &server,
        "http://127.0.0.1:5555/callback",
        Some("read offline_access"),
        method,
        &secrets,
        &attempt(),
    );
    (fake, r, secrets)
}

fn answer(doc: Value, status: u16) -> Reply {
    Reply::status(status)
        .header("Content-Type", "application/json")
        .body(doc.to_string())
}

#[test]
fn a_native_client_of_the_loopback_callback_is_registered() {
    let (fake, r, _) = registered(
        answer(
            json!({"client_id": "dyn-1", "token_endpoint_auth_method": "none"}),
            201,
        ),
        AuthMethod::None,
    );
    let r = r.expect("registered");
    assert_eq!(r.client_id, "dyn-1");
    assert_eq!((r.method, r.secret), (AuthMethod::None, None));
    let sent = fake.requests("/register");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method, "POST");
    let body: Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    assert_eq!(body["application_type"], "native");
    assert_eq!(
        body["redirect_uris"],
        json!(["http://127.0.0.1:5555/callback"])
    );
    assert_eq!(
        body["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(body["response_types"], json!(["code"]));
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert_eq!(body["scope"], "read offline_access");
    assert!(sent[0].header("authorization").is_none());
}

#[test]
fn the_answered_method_rules_and_its_secret_is_kept_only_when_confidential() {
    // Asked for none, answered a secret and no method (the conformance suite does): a
    // public client, the secret dropped but still never shown.
    let (_, r, secrets) = registered(
        answer(
            json!({"client_id": "c", "client_secret": "issued-secret-1"}),
            201,
        ),
        AuthMethod::None,
    );
    let r = r.expect("registered");
    assert_eq!((r.method, r.secret.is_none()), (AuthMethod::None, true));
    assert!(
        secrets
            .values()
            .iter()
            .any(|s| s.expose() == "issued-secret-1")
    );
    // Answered basic with a secret: kept.
    let (_, r, _) = registered(
        answer(
            json!({"client_id": "c", "client_secret": "issued-secret-2",
                   "token_endpoint_auth_method": "client_secret_basic",
                   "client_secret_expires_at": 0, "registration_access_token": "rat-1"}),
            200,
        ),
        AuthMethod::None,
    );
    let r = r.expect("registered");
    assert_eq!(r.method, AuthMethod::ClientSecretBasic);
    assert_eq!(
        r.secret.as_ref().map(Secret::expose),
        Some("issued-secret-2")
    );
    assert_eq!(r.secret_expires_at, Some(0));
}

#[test]
fn a_refusal_or_an_unusable_answer_is_a_registration_failure() {
    for (reply, status) in [
        (
            answer(json!({"error": "invalid_client_metadata"}), 400),
            Some(400),
        ),
        (answer(json!({"client_id": ""}), 201), None),
        (answer(json!({"client_id": "a b"}), 201), None),
        (answer(json!({"client_id": "x".repeat(1025)}), 201), None),
        (
            answer(
                json!({"client_id": "c", "token_endpoint_auth_method": "client_secret_post"}),
                201,
            ),
            None,
        ),
        (Reply::status(201).body("not json"), None),
    ] {
        let (_, r, _) = registered(reply, AuthMethod::None);
        match r {
            Err(OAuthError::Step {
                step: OAuthStep::Registration,
                http_status,
                ..
            }) => assert_eq!(http_status, status),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_method_asked_for_is_configured_else_public_where_listed() {
    let l = |m: &[&str]| Some(m.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    use AuthMethod::{ClientSecretBasic as Basic, ClientSecretPost as Post, None as Public};
    assert_eq!(
        method_to_register(Some(Post), l(&["none"]).as_deref()),
        Post
    );
    assert_eq!(
        method_to_register(None, l(&["client_secret_basic", "none"]).as_deref()),
        Public
    );
    assert_eq!(method_to_register(None, None), Basic);
    assert_eq!(
        method_to_register(
            None,
            l(&["client_secret_post", "client_secret_basic"]).as_deref()
        ),
        Basic
    );
    assert_eq!(
        method_to_register(None, l(&["client_secret_post"]).as_deref()),
        Post
    );
}
