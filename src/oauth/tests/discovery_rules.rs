//! Discovery: the challenge, the protected resource's metadata and the pinned issuer's, each
//! rule its own failure, and the offline rules on issuers and endpoints.

use super::*;

#[test]
fn without_a_named_location_the_well_known_ones_are_tried_in_order() {
    let fake = Fake::start(|root| {
        let mut w = good(root);
        w.challenge = Some(r#"Bearer scope="read""#.into());
        let doc = w.docs.remove("/.well-known/oauth-protected-resource/mcp");
        if let Some(doc) = doc {
            w.docs
                .insert("/.well-known/oauth-protected-resource".into(), doc);
        }
        w
    });
    let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fake.requests("/.well-known/oauth-protected-resource/mcp")
            .len(),
        1,
        "path-inserted first"
    );
    assert_eq!(
        fake.requests("/.well-known/oauth-protected-resource").len(),
        1
    );
}

/// What the world of `root` becomes, for one case.
type Mutate = fn(&mut World, &str);

/// Each case, applied to a good world, fails discovery at its step: no token request is made
/// and no redirect is followed.
#[track_caller]
fn fails_at(cases: &[(Mutate, OAuthStep)]) {
    for (mutate, want) in cases {
        let mutate = *mutate;
        let fake = Fake::start(move |root| {
            let mut w = good(root);
            mutate(&mut w, root);
            w
        });
        let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
        assert_eq!(step_of(&r), Some(*want), "{r:?}");
        assert!(
            fake.requests("/token").is_empty(),
            "{want:?}: no token request"
        );
        assert!(
            fake.requests("/elsewhere").is_empty(),
            "redirects are not followed"
        );
    }
}

/// The protected resource's metadata comes from the endpoint's origin, names the endpoint as
/// its resource and lists the pinned issuer.
#[test]
fn the_protected_resource_is_found_on_its_own_origin_and_names_the_resource_and_issuer() {
    fails_at(&[
        (
            |w, _| {
                w.challenge = Some(r#"Bearer resource_metadata="http://127.0.0.2:9/prm""#.into())
            },
            OAuthStep::ResourceMetadataOrigin,
        ),
        (
            // Nothing anywhere, and the challenge's location gone too (with none named, the
            // issuer on the MCP origin would be a 2025-03-26 server's: see below).
            |w, root| {
                w.challenge = Some(format!(r#"Bearer resource_metadata="{root}/gone""#));
                w.docs.clear();
            },
            OAuthStep::ResourceMetadata,
        ),
        (
            |w, _| {
                if let Some(d) = w.docs.get_mut("/.well-known/oauth-protected-resource/mcp") {
                    d["resource"] = json!("http://127.0.0.1/other");
                }
            },
            OAuthStep::ResourceMismatch,
        ),
        (
            |w, root| {
                if let Some(d) = w.docs.get_mut("/.well-known/oauth-protected-resource/mcp") {
                    d["authorization_servers"] = json!([format!("{root}/")]);
                }
            },
            OAuthStep::IssuerNotListed,
        ),
    ]);
}

/// The issuer's metadata names that issuer, and its endpoints are secure.
#[test]
fn the_issuers_metadata_is_its_own_with_secure_endpoints() {
    fails_at(&[
        (
            |w, _| {
                if let Some(d) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
                    d["issuer"] = json!("https://untrusted.example");
                }
            },
            OAuthStep::ServerMetadata,
        ),
        (
            |w, _| {
                if let Some(d) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
                    d["token_endpoint"] = json!("http://auth.example.com/token");
                }
            },
            OAuthStep::InsecureEndpoint,
        ),
    ]);
}

/// A metadata document over 64 KiB, or one that redirects, is no metadata.
#[test]
fn oversized_or_redirected_metadata_is_never_read() {
    fails_at(&[
        (
            |w, _| {
                w.overrides.insert(
                    "/.well-known/oauth-protected-resource/mcp".into(),
                    Reply::status(200)
                        .header("Content-Type", "application/json")
                        .body(format!("{{\"pad\":\"{}\"}}", "x".repeat(70 * 1024))),
                );
            },
            OAuthStep::ResourceMetadata,
        ),
        (
            |w, root| {
                w.overrides.insert(
                    "/.well-known/oauth-protected-resource/mcp".into(),
                    Reply::status(302).header("Location", &format!("{root}/elsewhere")),
                );
            },
            OAuthStep::ResourceMetadata,
        ),
        (
            |w, root| {
                for doc in [
                    "/.well-known/oauth-authorization-server",
                    "/.well-known/openid-configuration",
                ] {
                    w.overrides.insert(
                        doc.into(),
                        Reply::status(307).header("Location", &format!("{root}/elsewhere")),
                    );
                }
            },
            OAuthStep::ServerMetadata,
        ),
        (
            |w, _| {
                // Valid metadata, but over the 64 KiB a metadata document may take.
                for doc in [
                    "/.well-known/oauth-authorization-server",
                    "/.well-known/openid-configuration",
                ] {
                    if let Some(d) = w.docs.get_mut(doc) {
                        d["pad"] = json!("x".repeat(70 * 1024));
                    }
                }
            },
            OAuthStep::ServerMetadata,
        ),
    ]);
}

/// A redirect in answer to the challenge request is not followed either: it is no challenge,
/// and discovery goes on from the well-known locations on the endpoint's own origin.
#[test]
fn a_redirected_challenge_request_is_not_followed() {
    let fake = Fake::start(|root| {
        let mut w = good(root);
        w.overrides.insert(
            "/mcp".into(),
            Reply::status(307).header("Location", &format!("{root}/elsewhere")),
        );
        w
    });
    let (r, _) = authorize(&fake, settings(&fake, OAuthGrant::ClientCredentials));
    assert!(r.is_ok(), "{r:?}");
    assert!(fake.requests("/elsewhere").is_empty(), "not followed");
    assert_eq!(
        value(&fake.form(), "scope"),
        Some("meta"),
        "no challenge read"
    );
}

#[test]
fn a_path_issuer_is_found_through_openid_discovery() {
    let fake = Fake::start(|root| {
        let mut w = good(root);
        let issuer = format!("{root}/tenant");
        if let Some(d) = w.docs.get_mut("/.well-known/oauth-protected-resource/mcp") {
            d["authorization_servers"] = json!([issuer]);
        }
        let mut doc = w
            .docs
            .remove("/.well-known/oauth-authorization-server")
            .unwrap_or_default();
        doc["issuer"] = json!(issuer);
        w.docs
            .insert("/tenant/.well-known/openid-configuration".into(), doc);
        w
    });
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    s.configured.issuer = format!("{}/tenant", fake.root);
    let (r, _) = authorize(&fake, s);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fake.requests("/.well-known/oauth-authorization-server/tenant")
            .len(),
        1,
        "RFC 8414 first"
    );
}

#[test]
fn offline_rules_refuse_insecure_issuers_and_endpoints() {
    let fake = Fake::start(good);
    let mut s = settings(&fake, OAuthGrant::ClientCredentials);
    assert!(check_offline(&s, &fake.endpoint()).is_ok());
    for issuer in [
        "http://auth.example.com",
        "https://a.example/?x=1",
        "ftp://127.0.0.1",
    ] {
        s.configured.issuer = issuer.into();
        let e = check_offline(&s, &fake.endpoint());
        assert!(
            matches!(
                e,
                Err(OAuthError::Step {
                    step: OAuthStep::Issuer,
                    ..
                })
            ),
            "{issuer}"
        );
    }
    s.configured.issuer = "https://auth.example.com".into();
    let plain = Endpoint::parse("http://mcp.example.com/mcp").expect("endpoint");
    assert!(matches!(
        check_offline(&s, &plain),
        Err(OAuthError::Step {
            step: OAuthStep::Endpoint,
            ..
        })
    ));
}

/// Under an HTTPS issuer every authorization-server endpoint is HTTPS, loopback included; a
/// loopback issuer may name plain-HTTP loopback endpoints; a plain-HTTP authorization endpoint
/// elsewhere is refused like a token endpoint.
#[test]
fn an_https_issuer_needs_https_endpoints_even_on_loopback() {
    use crate::oauth::discovery::server_metadata;
    let doc = |token: &str, authorize: &str| {
        json!({"token_endpoint": token, "authorization_endpoint": authorize})
            .as_object()
            .cloned()
            .unwrap_or_default()
    };
    let step = |r: Result<_, OAuthError>| match r {
        Ok(_) => None,
        Err(OAuthError::Step { step, .. }) => Some(step),
        Err(other) => panic!("{other:?}"),
    };
    let https = doc(
        "https://auth.example/token",
        "https://auth.example/authorize",
    );
    assert_eq!(step(server_metadata(&https, true)), None);
    let loopback = doc("http://127.0.0.1:9/token", "http://127.0.0.1:9/authorize");
    assert_eq!(
        step(server_metadata(&loopback, true)),
        Some(OAuthStep::InsecureEndpoint)
    );
    assert_eq!(step(server_metadata(&loopback, false)), None);
    let plain_authorize = doc(
        "https://auth.example/token",
        "http://auth.example/authorize",
    );
    for https_issuer in [true, false] {
        assert_eq!(
            step(server_metadata(&plain_authorize, https_issuer)),
            Some(OAuthStep::InsecureEndpoint)
        );
    }
}

/// Root protected-resource metadata may name the origin, or a same-origin path prefix of
/// the endpoint (RFC 9728 §3.3); tokens are then requested for the resource as published,
/// and the evidence says which rule matched. A path-inserted or custom document stays
/// exact, and so does any other origin, path or query.
#[test]
fn root_metadata_may_name_the_origin_or_a_path_prefix_and_nothing_else_is_relaxed() {
    let at_root = |resource: &'static str| {
        move |root: &str| {
            let mut w = good(root);
            w.challenge = Some(r#"Bearer scope="read""#.into());
            w.docs.remove("/.well-known/oauth-protected-resource/mcp");
            w.docs.insert(
                "/.well-known/oauth-protected-resource".into(),
                json!({"resource": resource.replace("{root}", root), "authorization_servers": [root]}),
            );
            w
        }
    };
    for (published, rule) in [
        ("{root}", "root_origin"),
        ("{root}/", "root_origin"),
        ("{root}/mcp", ""),
    ] {
        let fake = Fake::start(at_root(published));
        let mut a = Authorizer::new(
            Arc::new(settings(&fake, OAuthGrant::ClientCredentials)),
            fake.endpoint(),
            SecretLog::new(),
        );
        let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
        assert!(r.is_ok(), "{published}: {r:?}");
        let sent = published.replace("{root}", &fake.root);
        assert_eq!(
            value(&fake.form(), "resource"),
            Some(sent.as_str()),
            "as published"
        );
        let said = a.facts().evidence.get(Key::ResourceRule);
        assert_eq!(said, Some(&Fact::Word(rule)).filter(|_| !rule.is_empty()));
    }
    // A prefix at a `/` boundary: the endpoint `/api/mcp` under `/api`.
    let prefixed = |published: &'static str| {
        move |root: &str| {
            let mut w = at_root(published)(root);
            w.challenge = Some(r#"Bearer scope="read""#.into());
            w
        }
    };
    let fake = Fake::start(prefixed("{root}/api"));
    let endpoint = Endpoint::parse(&format!("{}/api/mcp", fake.root)).expect("endpoint");
    let s = settings(&fake, OAuthGrant::ClientCredentials);
    let mut a = Authorizer::new(Arc::new(s), endpoint.clone(), SecretLog::new());
    let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        a.facts().evidence.get(Key::ResourceRule),
        Some(&Fact::Word("path_prefix"))
    );
    for refused in [
        "{root}/ap",
        "{root}/api?x=1",
        "http://127.0.0.2:9/api",
        "{root}/other",
    ] {
        let fake = Fake::start(prefixed(refused));
        let endpoint = Endpoint::parse(&format!("{}/api/mcp", fake.root)).expect("endpoint");
        let s = settings(&fake, OAuthGrant::ClientCredentials);
        let mut a = Authorizer::new(Arc::new(s), endpoint, SecretLog::new());
        let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
        assert_eq!(step_of(&r), Some(OAuthStep::ResourceMismatch), "{refused}");
        assert!(fake.requests("/token").is_empty());
    }
    // The origin from the path-inserted document is another resource.
    fails_at(&[(
        |w, root| {
            if let Some(d) = w.docs.get_mut("/.well-known/oauth-protected-resource/mcp") {
                d["resource"] = json!(root);
            }
        },
        OAuthStep::ResourceMismatch,
    )]);
}

/// A 2025-03-26 server publishes no protected-resource metadata. With the pinned issuer on
/// the MCP origin, its RFC 8414 metadata is used (also from the origin's root for an issuer
/// with a path), else the default endpoints; the resource is the endpoint and the evidence
/// says so. A pin of another origin, or a challenge naming metadata that is not there,
/// stays `resource_metadata`.
#[test]
fn a_2025_03_26_server_without_resource_metadata_uses_the_issuer_at_its_origin() {
    fn without_prm(root: &str) -> World {
        let mut w = good(root);
        w.challenge = Some(r#"Bearer scope="read""#.into());
        w.docs.remove("/.well-known/oauth-protected-resource/mcp");
        w
    }
    let run = |fake: &Fake, issuer: String| {
        let mut s = settings(fake, OAuthGrant::ClientCredentials);
        s.configured.issuer = issuer;
        let mut a = Authorizer::new(Arc::new(s), fake.endpoint(), SecretLog::new());
        let r = a.authorization(&mut Client::new(Reuse::Fresh), &attempt());
        (r, a.facts().evidence.get(Key::Discovery).cloned())
    };
    let fake = Fake::start(without_prm);
    let (r, said) = run(&fake, fake.root.clone());
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(said, Some(Fact::Word("2025-03-26")));
    let resource = format!("{}/mcp", fake.root);
    assert_eq!(value(&fake.form(), "resource"), Some(resource.as_str()));

    // An issuer with a path, whose document is at the origin's root.
    let fake = Fake::start(|root| {
        let mut w = without_prm(root);
        if let Some(doc) = w.docs.get_mut("/.well-known/oauth-authorization-server") {
            doc["issuer"] = json!(format!("{root}/oauth"));
        }
        w
    });
    let (r, _) = run(&fake, format!("{}/oauth", fake.root));
    assert!(r.is_ok(), "{r:?}");

    // No metadata at all: the default token endpoint.
    let fake = Fake::start(|root| {
        let mut w = without_prm(root);
        w.docs.clear();
        w
    });
    let (r, _) = run(&fake, fake.root.clone());
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fake.requests("/token").len(), 1);

    // Not on the MCP origin, or named metadata missing: no guessing.
    let fake = Fake::start(without_prm);
    let (r, _) = run(&fake, "http://127.0.0.2:9".into());
    assert_eq!(step_of(&r), Some(OAuthStep::ResourceMetadata));
    fails_at(&[(
        |w, root| {
            w.challenge = Some(format!(r#"Bearer resource_metadata="{root}/missing""#));
            w.docs.remove("/.well-known/oauth-protected-resource/mcp");
        },
        OAuthStep::ResourceMetadata,
    )]);
}
