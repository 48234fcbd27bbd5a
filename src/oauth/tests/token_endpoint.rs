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

/// A silent or trickling server at any OAuth step ends the run's OAuth within the attempt,
/// as its own typed outcome whether or not the watchdog got there first: the step, and
/// `failure=timeout` — UNREACHABLE when nothing of the answer came, UNKNOWN after part of
/// it. Every later request of the run gets the same outcome without traffic.
#[test]
fn a_silent_or_trickling_server_ends_oauth_at_its_step_once_per_run() {
    use crate::contract::Status;
    use crate::result::{Fact, Key};
    let partial = || Reply::HangMidBody {
        content_length: 100,
        sent: b"{".to_vec(),
    };
    let cases = [
        (
            "/.well-known/oauth-protected-resource/mcp",
            Reply::HangBeforeHead,
            OAuthStep::ResourceMetadata,
            Status::Unreachable,
        ),
        (
            "/.well-known/oauth-authorization-server",
            Reply::HangBeforeHead,
            OAuthStep::ServerMetadata,
            Status::Unreachable,
        ),
        (
            "/.well-known/oauth-authorization-server",
            partial(),
            OAuthStep::ServerMetadata,
            Status::Unknown,
        ),
        (
            "/token",
            Reply::HangBeforeHead,
            OAuthStep::TokenEndpoint(None),
            Status::Unreachable,
        ),
        (
            "/token",
            partial(),
            OAuthStep::TokenEndpoint(None),
            Status::Unknown,
        ),
    ];
    for (path, reply, step, status) in cases {
        let fake = Fake::start(move |root| {
            let mut w = good(root);
            w.overrides.insert(path.into(), reply.clone());
            w
        });
        let s = settings(&fake, OAuthGrant::ClientCredentials);
        let timeout = Duration::from_millis(600);
        let ((first, again), took) = with_watchdog(timeout, |attempt| {
            let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
            let mut client = Client::new(Reuse::Fresh);
            let first = a.authorization(&mut client, attempt);
            (first, a.authorization(&mut client, attempt))
        });
        assert!(within(timeout, took), "{path}: took {took:?}");
        let what = format!("{path} {status:?}");
        assert_eq!(step_of(&first), Some(step), "{what}: {first:?}");
        let o = first.as_ref().err().map(OAuthError::observation);
        let o = o.expect("a failure");
        assert_eq!(o.status, status, "{what}");
        assert_eq!(
            o.evidence.get(Key::Oauth),
            Some(&Fact::Word(step.as_word()))
        );
        assert_eq!(o.evidence.get(Key::Failure), Some(&Fact::Word("timeout")));
        assert_eq!(step_of(&again), Some(step), "{what}: the same outcome");
        let asked = fake.requests(path).len();
        assert_eq!(asked, 1, "{what}: asked once per run");
    }
}

/// The requests of OAuth end a margin before the attempt's deadline — 10 %, at most 50 ms —
/// so the adapter reports its own outcome before the watchdog cuts.
#[test]
fn oauth_keeps_a_margin_before_the_attempts_deadline() {
    use super::super::acquire::margin;
    assert_eq!(
        margin(Duration::from_millis(1000)),
        Duration::from_millis(50)
    );
    assert_eq!(
        margin(Duration::from_millis(200)),
        Duration::from_millis(20)
    );
    assert_eq!(margin(Duration::ZERO), Duration::ZERO);
}
