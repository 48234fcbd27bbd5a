//! The grants a check runs by itself: client credentials (client authentication, the scope's
//! precedence, reuse within the run), refresh of a saved token, and the refresh-token grant.

use super::*;

#[test]
fn client_credentials_with_basic_for_the_resource_and_reused_within_the_run() {
    let fake = Fake::start(good);
    let s = settings(&fake, OAuthGrant::ClientCredentials);
    let secrets = SecretLog::new();
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), secrets.clone());
    let mut client = Client::new(Reuse::Fresh);
    let first = a.authorization(&mut client, &attempt());
    assert_eq!(
        first.as_deref().ok(),
        Some("Bearer acquired-sensitive-value")
    );
    let again = a.authorization(&mut client, &attempt());
    assert_eq!(
        again.as_deref().ok(),
        Some("Bearer acquired-sensitive-value")
    );
    let token = fake.requests("/token");
    assert_eq!(token.len(), 1, "one token request for the whole run");
    let basic = token[0].header("authorization").unwrap_or_default();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.strip_prefix("Basic ").unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&decoded),
        "registered-client:client-secret-value"
    );
    let form = fake.form();
    assert_eq!(value(&form, "grant_type"), Some("client_credentials"));
    assert_eq!(
        value(&form, "resource"),
        Some(format!("{}/mcp", fake.root).as_str())
    );
    assert_eq!(value(&form, "scope"), Some("read"), "the challenge's scope");
    assert_eq!(value(&form, "client_secret"), None);
    // RFC 6749 §3.2.1: the body names the client too (the Python SDK's servers need it).
    assert_eq!(value(&form, "client_id"), Some("registered-client"));
    // No metadata request carries a credential.
    for r in fake.server.requests() {
        if r.target != "/token" {
            assert!(r.header("authorization").is_none(), "{}", r.target);
        }
    }
    let learned: Vec<String> = secrets
        .values()
        .iter()
        .map(|s| s.expose().to_string())
        .collect();
    assert!(learned.contains(&"acquired-sensitive-value".to_string()));
    assert!(learned.contains(&"rotated-sensitive-value".to_string()));
}

#[test]
fn client_secret_post_when_basic_is_not_listed() {
    let fake = Fake::start(|root| {
        let mut w = good(root);
        if let Some(doc) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
            doc["token_endpoint_auth_methods_supported"] = json!(["client_secret_post"]);
        }
        w
    });
    let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert!(r.is_ok(), "{r:?}");
    let form = fake.form();
    assert_eq!(value(&form, "client_id"), Some("registered-client"));
    assert_eq!(value(&form, "client_secret"), Some("client-secret-value"));
    assert!(fake.requests("/token")[0].header("authorization").is_none());
    // Neither method: the secret cannot be presented.
    let fake = Fake::start(|root| {
        let mut w = good(root);
        if let Some(doc) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
            doc["token_endpoint_auth_methods_supported"] = json!(["private_key_jwt"]);
        }
        w
    });
    let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert_eq!(step_of(&r), Some(OAuthStep::AuthMethod));
    assert!(fake.requests("/token").is_empty());
}

#[test]
fn a_public_client_is_not_sent_where_only_confidential_methods_are_listed() {
    let confidential_only = |root: &str| {
        let mut w = good(root);
        if let Some(doc) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
            doc["token_endpoint_auth_methods_supported"] =
                json!(["client_secret_post", "client_secret_basic"]);
        }
        w
    };
    let public = |fake: &Fake, method| {
        let mut s = settings(fake, OAuthGrant::ClientCredentials);
        s.client_secret = None;
        s.configured.grant = OAuthGrant::RefreshToken;
        s.configured.token_endpoint_auth_method = method;
        s.refresh_token = Some(Secret::new("configured-refresh".into()));
        s
    };
    let fake = Fake::start(confidential_only);
    let (r, _) = authorize(&fake, public(&fake, None));
    let Err(e) = r else { panic!("refused") };
    let o = e.observation();
    assert_eq!(o.evidence.get(Key::Oauth), Some(&Fact::Word("auth_method")));
    assert_eq!(o.evidence.get(Key::AuthMethod), Some(&Fact::Word("none")));
    assert!(fake.requests("/token").is_empty(), "zero token requests");
    // Said explicitly, `none` is used.
    let fake = Fake::start(confidential_only);
    let (r, _) = authorize(&fake, public(&fake, Some(AuthMethod::None)));
    assert!(r.is_ok(), "{r:?}");
    let form = fake.form();
    assert_eq!(value(&form, "client_id"), Some("registered-client"));
    assert!(fake.requests("/token")[0].header("authorization").is_none());
}

#[test]
fn scope_precedence_configured_then_challenge_then_metadata() {
    let fake = Fake::start(good);
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    s.configured.scopes = vec!["a".into(), "b".into()];
    let _ = authorize(&fake, s);
    assert_eq!(value(&fake.form(), "scope"), Some("a b"));
    let fake = Fake::start(|root| World {
        challenge: Some(
            r#"Bearer resource_metadata="{root}/.well-known/oauth-protected-resource/mcp""#.into(),
        ),
        ..good(root)
    });
    let _ = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert_eq!(value(&fake.form(), "scope"), Some("meta"));
}

/// A server's scopes follow the configured scopes' rule: a challenge scope with one token
/// that breaks it (`mcp:read" evil="1`, once unquoted) is ignored as a whole, with
/// `challenge_scope=ignored`, and the metadata's valid entries are requested instead.
#[test]
fn a_challenge_scope_that_breaks_the_scope_rule_is_ignored_for_the_metadatas() {
    let fake = Fake::start(|root| {
        let mut w = good(root);
        w.challenge = Some(
            r#"Bearer resource_metadata="{root}/.well-known/oauth-protected-resource/mcp", scope="mcp:read\" evil=\"1""#
                .into(),
        );
        if let Some(d) = w.docs.get_mut("/.well-known/oauth-protected-resource/mcp") {
            d["scopes_supported"] = json!(["meta", "bad\"one", "also bad", "meta2"]);
        }
        w
    });
    let s = Arc::new(settings(&fake, OAuthGrant::ClientCredentials));
    let mut a = Authorizer::new(s, fake.endpoint(), SecretLog::new());
    let got = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
    assert!(got.is_ok(), "{got:?}");
    assert_eq!(value(&fake.form(), "scope"), Some("meta meta2"));
    assert_eq!(
        a.facts().evidence.get(Key::ChallengeScope),
        Some(&Fact::Word("ignored"))
    );
    // A valid challenge scope is used as it is, and nothing is said about it.
    let fake = Fake::start(|root| World {
        challenge: Some(r#"Bearer scope="mcp:read  mcp:write""#.into()),
        ..good(root)
    });
    let s = Arc::new(settings(&fake, OAuthGrant::ClientCredentials));
    let mut a = Authorizer::new(s, fake.endpoint(), SecretLog::new());
    assert!(
        a.authorization(&mut Client::new(Reuse::Fresh), &attempt())
            .is_ok()
    );
    assert_eq!(value(&fake.form(), "scope"), Some("mcp:read mcp:write"));
    assert_eq!(a.facts().evidence.get(Key::ChallengeScope), None);
}

#[test]
fn a_challenge_sent_only_to_post_is_read_from_one_unauthenticated_ping() {
    let fake = Fake::start(|root| World {
        challenge_on_head: false,
        challenge: Some(r#"Bearer scope="from-post""#.into()),
        ..good(root)
    });
    let (got, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert!(got.is_ok(), "{got:?}");
    assert_eq!(value(&fake.form(), "scope"), Some("from-post"));
    let mcp = fake.requests("/mcp");
    let methods: Vec<&str> = mcp.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["HEAD", "POST"]);
    assert!(
        mcp[1].header("authorization").is_none(),
        "the probe carries no credential"
    );
    assert_eq!(mcp[1].body, br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);

    // A challenge on HEAD is enough: no POST is sent.
    let fake = Fake::start(good);
    let _ = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    let methods: Vec<String> = fake
        .requests("/mcp")
        .into_iter()
        .map(|r| r.method)
        .collect();
    assert_eq!(methods, ["HEAD"]);
}

#[test]
fn a_token_without_expires_in_lives_five_minutes_and_the_granted_scope_rules_reuse() {
    let fake = Fake::start(|root| World {
        token: token_reply(json!({"access_token":"t","token_type":"bearer"})),
        ..good(root)
    });
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    // More scopes asked than granted: the token is still reused.
    s.configured.scopes = vec!["read".into(), "admin".into()];
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
    let mut client = Client::new(Reuse::Fresh);
    for _ in 0..3 {
        assert!(a.authorization(&mut client, &attempt()).is_ok());
    }
    assert_eq!(fake.requests("/token").len(), 1);
    let t = crate::oauth::token::parse(
        &serde_json::from_value(json!({"access_token":"t","token_type":"bearer"}))
            .unwrap_or_default(),
        None,
        SystemTime::UNIX_EPOCH,
    )
    .map_err(|_| ())
    .map(|t| t.expires_at);
    assert_eq!(t, Ok(SystemTime::UNIX_EPOCH + Duration::from_secs(300)));
}

#[test]
fn an_expired_saved_token_is_refreshed_and_the_rotation_persisted() {
    let fake = Fake::start(good);
    let dir = scratch("refresh");
    let path = dir.join("token.json");
    store::write(
        &path,
        &token("old-access", Some("refresh-secret-value"), -10),
        &binding(&fake),
    )
    .expect("write");
    let s = public_client(&fake, path.clone());
    let (r, _) = authorize(&fake, s.clone());
    assert_eq!(r.as_deref().ok(), Some("Bearer acquired-sensitive-value"));
    let form = fake.form();
    assert_eq!(value(&form, "grant_type"), Some("refresh_token"));
    assert_eq!(value(&form, "refresh_token"), Some("refresh-secret-value"));
    assert_eq!(
        value(&form, "client_id"),
        Some("registered-client"),
        "a public client"
    );
    let saved = store::read(&path, &binding(&fake), &SecretLog::new())
        .expect("read")
        .expect("present");
    assert_eq!(saved.access.expose(), "acquired-sensitive-value");
    assert_eq!(
        saved.refresh.as_ref().map(Secret::expose),
        Some("rotated-sensitive-value")
    );
    // The next run reuses the saved token.
    let (r, _) = authorize(&fake, s);
    assert!(r.is_ok());
    assert_eq!(fake.requests("/token").len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn login_credentials_missing_is_login_required_without_traffic() {
    let fake = Fake::start(good);
    let dir = scratch("login-required");
    let mut s = settings(&fake, OAuthGrant::AuthorizationCode);
    s.configured.token_file = Some(dir.join("absent.json").display().to_string());
    let (r, _) = authorize(&fake, s);
    assert!(matches!(r, Err(OAuthError::LoginRequired)), "{r:?}");
    assert!(fake.server.requests().is_empty());
    let mut s = settings(&fake, OAuthGrant::RefreshToken);
    s.refresh_token = None;
    let (r, _) = authorize(&fake, s);
    assert_eq!(step_of(&r), Some(OAuthStep::NoRefreshToken));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A saved access token that expired with no refresh token is its own reason (`login=expired`),
/// not "no saved credentials"; a usable saved token says it came from the file.
#[test]
fn an_expired_saved_token_without_a_refresh_token_is_login_expired() {
    let fake = Fake::start(good);
    let dir = scratch("login-expired");
    let path = dir.join("user.json");
    let mut s = settings(&fake, OAuthGrant::AuthorizationCode);
    s.configured.token_file = Some(path.display().to_string());
    store::write(&path, &token("old", None, -60), &binding(&fake)).expect("write");
    let (r, _) = authorize(&fake, s.clone());
    let Err(e) = r else { panic!("refused") };
    assert!(matches!(e, OAuthError::LoginExpired), "{e:?}");
    let o = e.observation();
    assert_eq!(o.evidence.get(Key::Login), Some(&Fact::Word("expired")));
    assert!(fake.server.requests().is_empty(), "no traffic");
    store::write(&path, &token("fresh", None, 3600), &binding(&fake)).expect("write");
    let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
    assert!(
        a.authorization(&mut Client::new(Reuse::Fresh), &attempt())
            .is_ok()
    );
    assert_eq!(
        a.facts().evidence.get(Key::TokenSource),
        Some(&Fact::Word("file"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refresh_token_grant_uses_the_configured_refresh_token() {
    let fake = Fake::start(good);
    let mut s = settings(&fake, OAuthGrant::RefreshToken);
    s.client_secret = None;
    s.refresh_token = Some(Secret::new("env-refresh".into()));
    let (r, _) = authorize(&fake, s);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(value(&fake.form(), "refresh_token"), Some("env-refresh"));
}

/// A saved grant issued for another resource than discovery now names is not refreshed
/// (`resource_changed`, no token request: a refresh for another resource can end the
/// grant); the resource a token was issued for is kept in the file as `token_resource` only
/// when it is not the endpoint's, and a file without one was issued for the endpoint.
#[test]
fn a_grant_issued_for_another_resource_is_not_refreshed() {
    let fake = Fake::start(good);
    let dir = scratch("resource-changed");
    let path = dir.join("user.json");
    let mut s = settings(&fake, OAuthGrant::AuthorizationCode);
    s.configured.token_file = Some(path.display().to_string());
    let mut moved = token("old", Some("r-old"), -60);
    moved.resource = format!("{}/elsewhere", fake.root);
    store::write(&path, &moved, &binding(&fake)).expect("write");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(doc["token_resource"], moved.resource.as_str());
    let (r, _) = authorize(&fake, s.clone());
    assert_eq!(step_of(&r), Some(OAuthStep::ResourceChanged), "{r:?}");
    assert!(fake.requests("/token").is_empty(), "no refresh sent");

    let mut same = token("old", Some("r-old"), -60);
    same.resource = binding(&fake).resource;
    store::write(&path, &same, &binding(&fake)).expect("write");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_default();
    assert!(doc.get("token_resource").is_none(), "{doc}");
    let (r, _) = authorize(&fake, s);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fake.requests("/token").len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
