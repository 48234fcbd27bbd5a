//! The token endpoint's answers: errors, redirects, malformed documents and silence.

use super::*;

#[test]
fn token_endpoint_errors_keep_only_a_known_code_and_the_status() {
    for (reply, want, status) in [
        (
            Reply::status(401)
                .header("Content-Type", "application/json")
                .body(r#"{"error":"invalid_client","error_description":"secret <script>"}"#),
            Some(TokenError::InvalidClient),
            401,
        ),
        (
            Reply::status(400).body(r#"{"error":"made_up_code"}"#),
            None,
            400,
        ),
        (Reply::status(500).body("oops"), None, 500),
    ] {
        let fake = Fake::start(move |root| World {
            token: reply.clone(),
            ..good(root)
        });
        let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
        match r {
            Err(OAuthError::Step {
                step: OAuthStep::TokenEndpoint(error),
                http_status,
                ..
            }) => {
                assert_eq!(error, want);
                assert_eq!(http_status, Some(status));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_redirect_from_the_token_endpoint_is_not_followed() {
    let fake = Fake::start(|root| World {
        token: Reply::status(307).header("Location", &format!("{root}/steal")),
        ..good(root)
    });
    let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert!(matches!(
        r,
        Err(OAuthError::Step {
            step: OAuthStep::TokenEndpoint(None),
            http_status: Some(307),
            ..
        })
    ));
    assert!(fake.requests("/steal").is_empty());
}

#[test]
fn malformed_token_answers_are_token_response_failures_and_still_redacted() {
    let fake = Fake::start(|root| World {
        token: token_reply(json!({"access_token":"leaked value","token_type":"Bearer"})),
        ..good(root)
    });
    let (r, secrets) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert_eq!(step_of(&r), Some(OAuthStep::TokenResponse));
    assert!(
        secrets
            .values()
            .iter()
            .any(|s| s.expose() == "leaked value"),
        "recorded before validation"
    );
}

#[test]
fn a_silent_authorization_server_is_cut_at_the_deadline() {
    // Silent at its metadata, then at its token endpoint.
    for path in ["/.well-known/oauth-authorization-server", "/token"] {
        let fake = Fake::start(move |root| {
            let mut w = good(root);
            w.overrides.insert(path.into(), Reply::HangBeforeHead);
            w
        });
        let s = settings(&fake, OAuthGrant::ClientCredentials);
        let timeout = Duration::from_millis(400);
        let (r, took) = with_watchdog(timeout, |attempt| {
            let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
            a.authorization(&mut Client::new(Reuse::Fresh), attempt)
        });
        assert!(within(timeout, took), "{path}: took {took:?}");
        assert!(r.is_err(), "{path}");
    }
}
